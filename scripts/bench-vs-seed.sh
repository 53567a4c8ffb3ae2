#!/usr/bin/env bash
# Side by side, in one run: the seed's Python HWPM4Queue/HWCopyQueue (tinygrad's ops_amd.py of the
# 0.9.1 era, over tinygrad 0.9.1's autogen tables) and `hcq bench --json`, for the same work:
# build one launch, submit it to a 1 MiB PM4 ring, patch it, build a 64 MiB SDMA copy.
#
#   scripts/bench-vs-seed.sh [--venv DIR] [--quick] [--json OUT.json]
#
# --venv DIR   a Python venv with tinygrad==0.9.1 (or set HCQ_TG_VENV). Without one, a
#              throwaway venv is created in a temporary directory (pip install tinygrad==0.9.1)
#              and removed at exit.
# --quick      CI-sized runs on both sides (rough numbers).
# --json OUT   also write {"seed": {...}, "hcq": {...}} to OUT (then
#              `python3 scripts/bench_seed.py markdown OUT` prints the README table).
set -euo pipefail
cd "$(dirname "$0")/.."

venv="${HCQ_TG_VENV:-}"
quick=()
json_out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --venv) venv="${2:?--venv needs a directory}"; shift 2 ;;
    --quick) quick=(--quick); shift ;;
    --json) json_out="${2:?--json needs a file}"; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "bench-vs-seed.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
done

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

if [ -z "$venv" ]; then
  venv="$tmp/venv"
  echo "creating a throwaway venv with tinygrad==0.9.1 in $venv" >&2
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "tinygrad==0.9.1"
fi
py="$venv/bin/python"
if [ ! -x "$py" ]; then
  echo "bench-vs-seed.sh: no python at $py (is --venv a venv?)" >&2
  exit 1
fi
if ! "$py" -c 'import tinygrad.runtime.autogen.amd_gpu' 2>/dev/null; then
  echo "bench-vs-seed.sh: $py cannot import tinygrad.runtime.autogen.amd_gpu (pip install tinygrad==0.9.1)" >&2
  exit 1
fi

echo "building hcq (release)" >&2
cargo build --quiet --release -p hcq-driver --bin hcq

echo "timing the seed's Python" >&2
"$py" scripts/bench_seed.py seed "${quick[@]}" > "$tmp/seed.json"
echo "timing hcq" >&2
target/release/hcq bench --json "${quick[@]}" > "$tmp/hcq-driver.json"
echo "timing the simulator's internals (cargo bench -p hcq-sim --bench internals)" >&2
cargo bench --quiet -p hcq-sim --bench internals -- --json "${quick[@]}" > "$tmp/hcq-sim.json"
# One object for the table: hcq bench's keys and the simulator's (their key sets are disjoint).
"$py" -c 'import json,sys; d=json.load(open(sys.argv[1])); d.update({k: v for k, v in json.load(open(sys.argv[2])).items() if k != "quick"}); print(json.dumps(d))' \
  "$tmp/hcq-driver.json" "$tmp/hcq-sim.json" > "$tmp/hcq.json"

"$py" scripts/bench_seed.py compare "$tmp/seed.json" "$tmp/hcq.json"
if [ -n "$json_out" ]; then
  "$py" -c 'import json,sys; print(json.dumps({"seed": json.load(open(sys.argv[1])), "hcq": json.load(open(sys.argv[2]))}))' \
    "$tmp/seed.json" "$tmp/hcq.json" > "$json_out"
fi
