#!/usr/bin/env bash
# tinygrad 0.14's own tests on its own AMD backend (unmodified ops_amd.py, DEV=AMD) on hcq-sim,
# through `python -m hcq.mockgpu`. Called by `scripts/tinygrad-suite.sh --seed --tinygrad 0.14`.
#
#   TG_GIT=/path/to/tinygrad scripts/tinygrad14-suite.sh [--target T] [--xcc N] [--venv DIR] [PYTEST ARGS...]
#
# TG_GIT: a checkout of tinygrad's repository at the commit whose runtime equals the 0.14.0
# wheel (the tests import test.helpers and the checkout's tinygrad/, which is the wheel's). Each
# file runs in its own processes and prints one line: `<target> <file> passed P failed F skipped S
# processes N wall Ws`, then `  FAILED <test id>: <reason>` per failure. KFD does not recover a
# process after a GPU fault, so one faulting test would fail every test after it in the same
# process: scripts/tinygrad14_isolate.py runs a file's tests in one process until a test leaves
# the GPU faulted, then the rest in a new process (each test runs once; the faulting test is
# named, a test that kills or hangs its process counts as failed). Files in TG_ISOLATE (default
# amd/test_asm_kernel.py) run one process per test. TG_FILES overrides the files (paths under
# test/); TG_SIM_GPUS the GPUs of test_multitensor (default 6); TG_TIMEOUT bounds one process
# (default 7200 s). --xcc N (or HCQ_SIM_XCC) partitions a gfx942 into N XCCs (`python -m hcq.mockgpu
# --xcc`; 0.14 then uses AQL queues); the label and log name say `<target>-xcc<N>`. Logs:
# /tmp/tg14-suite-<target>-<file>.log. Extra arguments go to pytest's collection (e.g. -k).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TARGET="${HCQ_SIM_TARGET:-gfx1100}"
XCC="${HCQ_SIM_XCC:-1}"
VENV="${TG_VENV:-$ROOT/.venv-tinygrad14}"
ARGS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --target) TARGET="$2"; shift 2 ;;
    --xcc) XCC="$2"; shift 2 ;;
    --venv) VENV="$2"; shift 2 ;;
    --seed) shift ;;
    *) ARGS+=("$1"); shift ;;
  esac
done
GIT="${TG_GIT:-}"
if [ -z "$GIT" ] || [ ! -f "$GIT/test/helpers.py" ]; then
  echo "tinygrad14-suite: set TG_GIT to a checkout of tinygrad at the 0.14.0 wheel's commit (it has test/helpers.py)" >&2
  exit 2
fi
FILES="${TG_FILES:-test_tiny.py device/test_hcq.py amd/test_asm_kernel.py amd/test_mockgpu_invalid.py backend/test_jit.py unit/test_jit.py backend/test_graph.py backend/test_uops.py backend/test_dtype.py backend/test_setitem.py unit/test_assign.py backend/test_randomness.py backend/test_multitensor.py}"
ISOLATE=" ${TG_ISOLATE-amd/test_asm_kernel.py} "

if [ ! -x "$VENV/bin/python" ]; then python3 -m venv "$VENV"; fi
PY="$VENV/bin/python"
if ! "$PY" -c "import tinygrad, pytest, numpy, hypothesis, hcq" 2>/dev/null; then
  "$PY" -m pip install -q "tinygrad==0.14.0" pytest numpy hypothesis
  "$PY" -m pip install -q "$ROOT/python"
fi
# test_dtype, test_randomness, test_ops and test_dtype_alu import torch (a large download: install
# it into the venv to run them; TG_FILES chooses files explicitly).
if [ -z "${TG_FILES:-}" ] && "$PY" -c "import torch" 2>/dev/null; then FILES="$FILES backend/test_ops.py backend/test_dtype_alu.py"; fi
# tinygrad's CPU device (BEAM search, test_multitensor's test_shard_beam) runs `clang`; Debian's
# clang-19 package installs only clang-19 (see tinygrad-suite.sh for the warning turned off).
if command -v clang-19 >/dev/null && { ! command -v clang >/dev/null || [ -f "$VENV/bin/clang" ]; }; then
  rm -f "$VENV/bin/clang"
  printf '#!/bin/sh\nexec %s "$@" -Wno-invalid-feature-combination\n' "$(command -v clang-19)" > "$VENV/bin/clang"
  chmod +x "$VENV/bin/clang"
fi
export PATH="$VENV/bin:$PATH" PYTHONPATH="$GIT${PYTHONPATH:+:$PYTHONPATH}" PYTHONDONTWRITEBYTECODE=1
cd "$GIT"
LABEL="$TARGET"; [ "$XCC" = 1 ] || LABEL="$TARGET-xcc$XCC"

counts() {  # pytest's summary line -> "passed P failed F skipped S"
  local line="$1" p f s e
  p=$(grep -o '[0-9]* passed' <<<"$line" | grep -o '[0-9]*' || true)
  f=$(grep -o '[0-9]* failed' <<<"$line" | grep -o '[0-9]*' || true)
  e=$(grep -o '[0-9]* error' <<<"$line" | grep -o '[0-9]*' || true)
  s=$(grep -o '[0-9]* \(skipped\|xfailed\|deselected\)' <<<"$line" | grep -o '[0-9]*' | paste -sd+ | bc 2>/dev/null || true)
  echo "passed ${p:-0} failed $(( ${f:-0} + ${e:-0} )) skipped ${s:-0}"
}
summary() {  # pytest's last summary line ("1 failed, 2 passed in 3.4s", "no tests ran")
  grep -E '^(=+ )?([0-9]+ (passed|failed|errors?|skipped|xfailed|xpassed|deselected)|no tests ran)' | tail -n1
}
run() {  # run FILE-or-nodeid GPUS -> pytest output
  timeout "${TG_TIMEOUT:-1800}" "$PY" -m hcq.mockgpu --target "$TARGET" --xcc "$XCC" --gpus "$2" -- \
    "$PY" -m pytest -q -p no:cacheprovider -o addopts="" "$1" ${ARGS[@]+"${ARGS[@]}"} 2>&1 || true
}
for f in $FILES; do
  gpus=1
  case "$f" in
    *multitensor*) gpus="${TG_SIM_GPUS:-6}" ;;  # tinygrad's file names AMD:0..AMD:5
    # test_randomness's two threefry tests on a second GPU are skipped on one (needs_second_gpu).
    *test_hcq*|*test_jit*|*test_graph*|*test_randomness*) gpus=2 ;;
  esac
  out="/tmp/tg14-suite-$LABEL-${f//\//_}.log"
  if [[ "$ISOLATE" == *" $f "* ]]; then
    : > "$out"
    P=0; F=0; S=0
    for id in $("$PY" -m hcq.mockgpu --target "$TARGET" --xcc "$XCC" -- "$PY" -m pytest -q --collect-only -p no:cacheprovider "test/$f" 2>/dev/null | grep '::'); do
      r=$(run "$id" "$gpus"); echo "$r" >> "$out"
      read -r _ p _ fl _ s <<<"$(counts "$(summary <<<"$r")")"
      P=$((P + p)); F=$((F + fl)); S=$((S + s))
    done
    echo "$LABEL $f passed $P failed $F skipped $S (one process per test)"
  else
    # Node ids of the file (with the extra arguments, e.g. -k, applied), then the runner.
    mapfile -t ids < <("$PY" -m hcq.mockgpu --target "$TARGET" --xcc "$XCC" --gpus "$gpus" -- "$PY" -m pytest -q --collect-only \
      -p no:cacheprovider -o addopts="" "test/$f" ${ARGS[@]+"${ARGS[@]}"} 2>/dev/null | grep '::' || true)
    if [ "${#ids[@]}" = 0 ]; then  # nothing collected (module-level skip, import error): pytest says which
      run "test/$f" "$gpus" > "$out"
      echo "$LABEL $f $(counts "$(summary < "$out")") (nothing collected: see $out)"
      continue
    fi
    "$PY" "$ROOT/scripts/tinygrad14_isolate.py" --log "$out" --timeout "${TG_TIMEOUT:-7200}" --label "$LABEL $f" -- \
      "$PY" -m hcq.mockgpu --target "$TARGET" --xcc "$XCC" --gpus "$gpus" -- "$PY" --tests "${ids[@]}"
  fi
done
