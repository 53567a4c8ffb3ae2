#!/usr/bin/env bash
# tinygrad 0.9.1's own tests on hcq: `HCQ=1` runs them on hcq's tinygrad device (python/), on the
# simulated GPU when there is no /dev/kfd.
#
#   scripts/tinygrad-suite.sh [--target gfx1100|gfx90a|gfx942|gfx1201] [--venv DIR] [--seed] [PYTEST ARGS...]
#   scripts/tinygrad-suite.sh --tinygrad 0.14 [--target T] [--xcc N] [--venv DIR] [PYTEST ARGS...]
#
# --tinygrad 0.14 (without --seed) runs tinygrad 0.14's own tests on hcq's device with DEV=HCQ:
# scripts/tinygrad14-hcq-suite.sh does it (its own venv, test files and file list).
#
# --seed runs them on tinygrad's own AMD runtime instead (its unmodified ops_amd.py, AMD=1
# MOCKGPU=1) through hcq's mock-GPU hook on hcq-sim (python -m hcq.mockgpu).
#
# Sets up a venv (default .venv-tinygrad: pip install ./python, tinygrad==0.9.1, pytest, numpy, hypothesis,
# torch), takes the test files from tinygrad 0.9.1's sdist, runs the files below with HCQ=1
# (test_multitensor on several simulated GPUs) and ends with pytest's summary line. Extra
# arguments go to pytest (e.g. -k, -x, a file subset with TG_FILES="test_jit.py test_nn.py").
#
#   scripts/tinygrad-suite.sh --seed --tinygrad 0.14 [--target T] [--xcc N] [--venv DIR] [PYTEST ARGS...]
#
# runs tinygrad 0.14's own tests on its own AMD backend (unmodified, DEV=AMD) on hcq-sim through
# `python -m hcq.mockgpu`: a venv (default .venv-tinygrad14: tinygrad==0.14.0, pytest, numpy,
# hypothesis, ./python), the test files from TG_GIT (a checkout of tinygrad's repository at the
# commit whose runtime equals the 0.14.0 wheel; required). Each file runs in its own processes
# (test_multitensor on 6 GPUs: TG_SIM_GPUS): scripts/tinygrad14_isolate.py starts a new process
# after a test that leaves the GPU faulted (KFD does not recover a faulted process), so one fault
# does not fail the tests after it; the files whose tests expect the device to recover run one
# process per test. Prints one line of counts per file and each failure's test id and reason.
# TG_FILES overrides the file list (paths under test/). Without --seed, 0.14's files run the
# same way on DEV=HCQ. --xcc N (0.14 only; gfx942: 1, 2, 4 or 8 XCCs, as HCQ_SIM_XCC) is passed on.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TARGET="${HCQ_SIM_TARGET:-gfx1100}"
VENV="${TG_VENV:-}"
ARGS=()
SEED=0
TGVER=0.9.1
while [ $# -gt 0 ]; do
  case "$1" in
    --seed) SEED=1; shift ;;
    --target) TARGET="$2"; shift 2 ;;
    --venv) VENV="$2"; shift 2 ;;
    --tinygrad) TGVER="$2"; shift 2 ;;
    *) ARGS+=("$1"); shift ;;
  esac
done
case "$TGVER" in
  0.9.1) VENV="${VENV:-$ROOT/.venv-tinygrad}" ;;
  0.14|0.14.0)
    # --seed: tinygrad 0.14's own AMD backend on hcq-sim; without: tinygrad 0.14 on DEV=HCQ.
    if [ "$SEED" = 1 ]; then
      exec "$ROOT/scripts/tinygrad14-suite.sh" --target "$TARGET" ${VENV:+--venv "$VENV"} ${ARGS[@]+"${ARGS[@]}"}
    fi
    exec "$ROOT/scripts/tinygrad14-hcq-suite.sh" --target "$TARGET" ${VENV:+--venv "$VENV"} ${ARGS[@]+"${ARGS[@]}"} ;;
  *) echo "tinygrad-suite: --tinygrad $TGVER: supported are 0.9.1 and 0.14" >&2; exit 2 ;;
esac
FILES="${TG_FILES:-test_ops.py test_dtype.py test_dtype_alu.py test_jit.py test_tensor.py test_assign.py test_setitem.py test_randomness.py test_uops.py test_linearizer.py test_nn.py test_multitensor.py}"

if [ ! -x "$VENV/bin/python" ]; then python3 -m venv "$VENV"; fi
PY="$VENV/bin/python"
"$PY" -m pip install -q --upgrade pip >/dev/null
"$PY" -m pip install -q "tinygrad==0.9.1" pytest numpy hypothesis
"$PY" -c "import torch" 2>/dev/null || "$PY" -m pip install -q torch
"$PY" -m pip install -q "$ROOT/python"
# tinygrad's CLANG device (which some tests use as the CPU reference, test_multitensor's uneven
# shards among them) runs `clang -march=native -Wall -Werror`; Debian's clang-19 package installs
# only clang-19. On CPUs with AVX10.1, clang 19's -march=native warns "invalid feature
# combination: +avx10.1-256; will be promoted to avx10.1-512", which -Werror makes fatal: the
# wrapper turns that one warning off.
if command -v clang-19 >/dev/null && { ! command -v clang >/dev/null || [ -f "$VENV/bin/clang" ]; }; then
  rm -f "$VENV/bin/clang"
  printf '#!/bin/sh\nexec %s "$@" -Wno-invalid-feature-combination\n' "$(command -v clang-19)" > "$VENV/bin/clang"
  chmod +x "$VENV/bin/clang"
fi
export PATH="$VENV/bin:$PATH"

SRC="$VENV/tinygrad-0.9.1-src"
if [ ! -d "$SRC/test" ]; then
  TMP="$(mktemp -d)"
  "$PY" -m pip download -q --no-binary :all: --no-deps "tinygrad==0.9.1" -d "$TMP"
  mkdir -p "$SRC" && tar xzf "$TMP"/tinygrad-0.9.1.tar.gz -C "$SRC" --strip-components=1
  rm -rf "$TMP"
fi

# The sdist ships the test files but not what they import from the repository: test/__init__.py,
# test/helpers.py, test/external/, extra/ and examples/. They come from the v0.9.1 tag of tinygrad's git
# repository (TG_GIT: a local clone or mirror; default: cloned from GitHub).
if [ ! -f "$SRC/test/helpers.py" ]; then
  GIT="${TG_GIT:-}"
  if [ -z "$GIT" ]; then
    GIT="$VENV/tinygrad-git"
    [ -d "$GIT" ] || git clone -q --bare --filter=blob:none https://github.com/tinygrad/tinygrad "$GIT"
  fi
  git --git-dir="$(git -C "$GIT" rev-parse --absolute-git-dir 2>/dev/null || echo "$GIT")" archive v0.9.1 \
    test/__init__.py test/helpers.py test/external extra examples | tar x -C "$SRC"
fi

cd "$SRC"
export HCQ=1 HCQ_SIM_TARGET="$TARGET" PYTHONPATH="$SRC${PYTHONPATH:+:$PYTHONPATH}"
# Run from the sdist with the installed tinygrad (the tests import `test.helpers`): move the
# sdist's own tinygrad/ package out of the way of the installed one.
[ -d tinygrad ] && mv tinygrad _tinygrad_sdist
files=()
for f in $FILES; do files+=("test/$f"); done
# One pytest run, one summary line. test_multitensor opens HCQ:0..HCQ:5 (tinygrad's file names
# six devices), so the simulator plays TG_SIM_GPUS (default 6) GPUs; the other files use HCQ:0.
export HCQ_SIM_GPUS="${TG_SIM_GPUS:-6}"
if [ "$SEED" = 1 ]; then
  unset HCQ
  exec "$PY" -m hcq.mockgpu --target "$TARGET" --gpus "$HCQ_SIM_GPUS" -- "$PY" -m pytest -q -p no:cacheprovider "${files[@]}" "${ARGS[@]}"
fi
exec "$PY" -m pytest -q -p no:cacheprovider "${files[@]}" "${ARGS[@]}"
