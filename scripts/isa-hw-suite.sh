#!/usr/bin/env bash
# tinygrad's hardware-validated ISA tests (test/amd/hw/*.py: each runs a short instruction
# sequence on the GPU through tinygrad 0.14's own AMD backend and compares registers and memory)
# with hcq-sim standing in for the GPU: `python -m hcq.mockgpu --target T -- env DEV=AMD USE_HW=1
# python -m pytest test/amd/hw/FILE.py`, run from a checkout of tinygrad's repository at the
# commit whose runtime equals the 0.14.0 wheel (TG_GIT, required). comgr's HIP and assembly
# compiles are served by clang-19 and ld.lld-19 under the hook.
#
#   TG_GIT=/path/to/tinygrad scripts/isa-hw-suite.sh [--target gfx1100|gfx942|gfx1201] [--venv DIR]
#
# Without --target: the RDNA3 files on gfx1100, the CDNA files on gfx942, the RDNA4 file on
# gfx1201. Prints one line of pytest counts per file. The venv (default .venv-tinygrad14) gets
# tinygrad==0.14.0, numpy, pytest and ./python.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${TG_VENV:-$ROOT/.venv-tinygrad14}"
ONLY=""
while [ $# -gt 0 ]; do
  case "$1" in
    --target) ONLY="$2"; shift 2 ;;
    --venv) VENV="$2"; shift 2 ;;
    *) echo "isa-hw-suite: unknown argument $1" >&2; exit 2 ;;
  esac
done
: "${TG_GIT:?set TG_GIT to a checkout of tinygrad at the commit whose runtime equals the 0.14.0 wheel}"
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q --upgrade pip
  "$VENV/bin/pip" install -q "tinygrad==0.14.0" numpy pytest maturin
  "$VENV/bin/pip" install -q "$ROOT/python"
fi
# tinygrad's CPU device (which some helpers touch) runs plain `clang`; Debian installs clang-19.
bin="$(mktemp -d)"; trap 'rm -rf "$bin"' EXIT
ln -s "$(command -v clang-19)" "$bin/clang"
declare -A FILES=(
  [gfx1100]="test_ds test_flat test_global test_scratch test_smem test_sop test_vop1 test_vop2 test_vop3 test_vop3p test_vopc test_vopd test_dpp test_vinterp"
  [gfx942]="test_cdna_sdwa test_cdna_vop3"
  [gfx1201]="test_rdna4_permlane_var"
)
for target in gfx1100 gfx942 gfx1201; do
  [ -n "$ONLY" ] && [ "$ONLY" != "$target" ] && continue
  for f in ${FILES[$target]}; do
    line="$(cd "$TG_GIT" && PATH="$bin:$PATH" timeout 900 "$VENV/bin/python" -m hcq.mockgpu --target "$target" -- \
      env DEV=AMD USE_HW=1 "$VENV/bin/python" -m pytest -q -p no:cacheprovider "test/amd/hw/$f.py" 2>&1 | tail -1 || true)"
    echo "$target $f: $line"
  done
done
