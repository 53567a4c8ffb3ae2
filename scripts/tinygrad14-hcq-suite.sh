#!/usr/bin/env bash
# tinygrad 0.14's own tests on hcq's tinygrad device: `DEV=HCQ` (python/python/hcq/tinygrad/
# ops_hcq14.py), on the simulated GPU when there is no /dev/kfd. Run through
#
#   scripts/tinygrad-suite.sh --tinygrad 0.14 [--target gfx1100|gfx1201|gfx942|gfx90a] [--xcc N] [--venv DIR] [PYTEST ARGS...]
#
# Sets up a venv (default .venv-tinygrad14: pip install ./python, tinygrad==0.14.0, pytest, numpy,
# hypothesis; torch when TG_TORCH=1, for the files that import it), takes the test files from
# tinygrad's git repository at the commit whose runtime is the 0.14.0 wheel's (TG_SRC: a checkout
# of it; else TG_GIT: a clone or mirror; else cloned from GitHub), runs them from a copy without
# the repository's tinygrad/ (so the installed wheel is what runs). Each file runs through
# scripts/tinygrad14_isolate.py: its tests in one process until one leaves a fault behind (a
# failure naming a GPU fault or hang), the rest in a new process, so that one fault does not fail
# the tests after it; one line per file, `<target> <file> passed P failed F skipped S processes N
# wall Ws`, then `  FAILED <test id>: <reason>` per failure (logs /tmp/tg14-hcq-<target>-<file>.log;
# TG_TIMEOUT bounds one process, default 7200 s). Extra arguments go to pytest's collection
# (e.g. -k; a file subset with TG_FILES="test/test_tiny.py"). TG_ONE_PROCESS=1: the former
# behaviour, every file in one pytest run ending with pytest's summary line. --xcc N (or
# HCQ_SIM_XCC; gfx942: 1, 2, 4 or 8) partitions each simulated GPU into N XCCs, on which hcq's
# driver uses AQL compute queues; the label and log name then say `<target>-xcc<N>`.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TARGET="${HCQ_SIM_TARGET:-gfx1100}"
XCC="${HCQ_SIM_XCC:-1}"
VENV="${TG_VENV:-$ROOT/.venv-tinygrad14}"
COMMIT=a9069c177a9da9cca18593edf55acd2e6073cca6
ARGS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --target) TARGET="$2"; shift 2 ;;
    --xcc) XCC="$2"; shift 2 ;;
    --venv) VENV="$2"; shift 2 ;;
    *) ARGS+=("$1"); shift ;;
  esac
done
# Files that import torch at the top (test_ops, test_dtype, test_dtype_alu, test_tensor,
# test_nn, test_optim, backend/test_randomness) run only with TG_TORCH=1.
NOTORCH="test/test_tiny.py test/backend/test_jit.py test/unit/test_jit.py test/backend/test_graph.py test/backend/test_uops.py test/backend/test_setitem.py test/unit/test_assign.py test/backend/test_multitensor.py test/unit/test_randomness.py test/backend/test_symbolic_jit.py test/backend/test_symbolic_ops.py"
TORCH="test/backend/test_ops.py test/backend/test_dtype.py test/backend/test_dtype_alu.py test/backend/test_tensor.py test/backend/test_nn.py test/backend/test_optim.py test/backend/test_randomness.py"
if [ "${TG_TORCH:-0}" = 1 ]; then DEFAULT_FILES="$NOTORCH $TORCH"; else DEFAULT_FILES="$NOTORCH"; fi
FILES="${TG_FILES:-$DEFAULT_FILES}"

if [ ! -x "$VENV/bin/python" ]; then python3 -m venv "$VENV"; fi
PY="$VENV/bin/python"
if [ "${TG_NO_INSTALL:-0}" != 1 ]; then  # TG_NO_INSTALL=1: the venv has them (e.g. hcq from maturin develop)
  "$PY" -m pip install -q --upgrade pip >/dev/null
  "$PY" -m pip install -q "tinygrad==0.14.0" pytest numpy hypothesis
  if [ "${TG_TORCH:-0}" = 1 ]; then "$PY" -c "import torch" 2>/dev/null || "$PY" -m pip install -q torch; fi
  "$PY" -m pip install -q "$ROOT/python"
fi
# tinygrad's CPU device (tinygrad reads multi-device tensors through it; some tests use it as a
# reference) runs `$CC` (default clang); Debian's clang-19 package installs only clang-19.
if ! command -v clang >/dev/null && command -v clang-19 >/dev/null; then export CC=clang-19; fi

SRC="$VENV/tinygrad-$COMMIT"
if [ ! -f "$SRC/test/test_tiny.py" ]; then
  mkdir -p "$SRC"
  if [ -n "${TG_SRC:-}" ]; then
    git -C "$TG_SRC" archive "$COMMIT" test extra examples conftest.py | tar x -C "$SRC"
  else
    GIT="${TG_GIT:-$VENV/tinygrad-git}"
    [ -d "$GIT" ] || git clone -q --bare --filter=blob:none https://github.com/tinygrad/tinygrad "$GIT"
    git --git-dir="$(git -C "$GIT" rev-parse --absolute-git-dir 2>/dev/null || echo "$GIT")" archive "$COMMIT" \
      test extra examples conftest.py | tar x -C "$SRC"
  fi
fi

cd "$SRC"
# test_multitensor opens HCQ:0..HCQ:5 (tinygrad's file names six devices), so the simulator
# plays TG_SIM_GPUS (default 6) GPUs; the other files use HCQ (GPU 0) and HCQ:1.
LABEL="$TARGET"; [ "$XCC" = 1 ] || LABEL="$TARGET-xcc$XCC"
export DEV=HCQ HCQ_SIM_TARGET="$TARGET" HCQ_SIM_XCC="$XCC" HCQ_SIM_GPUS="${TG_SIM_GPUS:-6}" PYTHONPATH="$SRC${PYTHONPATH:+:$PYTHONPATH}"
if [ "${TG_ONE_PROCESS:-0}" = 1 ]; then exec "$PY" -m pytest -q -p no:cacheprovider $FILES ${ARGS[@]+"${ARGS[@]}"}; fi
for f in $FILES; do
  mapfile -t ids < <("$PY" -m pytest -q --collect-only -p no:cacheprovider -o addopts="" "$f" ${ARGS[@]+"${ARGS[@]}"} 2>/dev/null | grep '::' || true)
  log="/tmp/tg14-hcq-$LABEL-$(basename "$(dirname "$f")")_$(basename "$f").log"
  if [ "${#ids[@]}" = 0 ]; then  # nothing collected (module-level skip, import error): pytest says why
    echo "$LABEL $f: nothing collected: $("$PY" -m pytest -q -p no:cacheprovider -o addopts="" "$f" ${ARGS[@]+"${ARGS[@]}"} 2>&1 | tail -n1)"
    continue
  fi
  "$PY" "$ROOT/scripts/tinygrad14_isolate.py" --log "$log" --timeout "${TG_TIMEOUT:-7200}" --label "$LABEL $f" -- "$PY" --tests "${ids[@]}"
done
