#!/usr/bin/env bash
# Regenerates the decoder's golden disassembly: llvm-objdump-19 of every fixture code object
# (core/tests/fixtures/kernels/*.co) into sim/tests/isa_golden/<fixture>.txt, so the decoder
# test (sim/tests/isa_decode.rs) compares against LLVM without needing LLVM installed.
# CI (.ci/run) installs llvm-19, reruns it and fails on any difference (`git diff --exit-code`).
set -euo pipefail
cd "$(dirname "$0")/.."
objdump="${LLVM_OBJDUMP:-llvm-objdump-19}"
out=sim/tests/isa_golden
mkdir -p "$out"
for co in core/tests/fixtures/kernels/*.co; do
  name="$(basename "$co" .co)"
  target="${name##*-}"
  # Keep only instruction lines (tab, text, // address: words); drop s_code_end padding.
  "$objdump" -d --mcpu="$target" "$co" \
    | grep -E '^\s+[a-z_].*// [0-9A-F]+:' \
    | grep -v 's_code_end' \
    | sed -E 's/^\s+//; s/ <[^>]*>$//' > "$out/$name.txt"
done
# Instructions beyond the fixtures: assembled, then disassembled the same way.
mc="${LLVM_MC:-llvm-mc-19}"
tmp="$(mktemp)"
trap 'rm -f "$tmp"' EXIT
"$mc" -arch=amdgcn -mcpu=gfx1100 -filetype=obj "$out/extra-gfx1100.s" -o "$tmp"
"$objdump" -d --mcpu=gfx1100 "$tmp" \
  | grep -E '^\s+[a-z_].*// [0-9A-F]+:' \
  | sed -E 's/^\s+//; s/ <[^>]*>$//' > "$out/extra-gfx1100.txt"
"$mc" -arch=amdgcn -mcpu=gfx1201 -filetype=obj "$out/extra-gfx1201.s" -o "$tmp"
"$objdump" -d --mcpu=gfx1201 "$tmp" \
  | grep -E '^\s+[a-z_].*// [0-9A-F]+:' \
  | sed -E 's/^\s+//; s/ <[^>]*>$//' > "$out/extra-gfx1201.txt"
# AGPR forms (v_accvgpr_*, ACC bits of FLAT/GLOBAL/SCRATCH/MUBUF/DS) for gfx90a and gfx942.
for target in gfx90a gfx942; do
  "$mc" -arch=amdgcn -mcpu="$target" -filetype=obj "$out/extra-gfx9.s" -o "$tmp"
  "$objdump" -d --mcpu="$target" "$tmp" \
    | grep -E '^\s+[a-z_].*// [0-9A-F]+:' \
    | sed -E 's/^\s+//; s/ <[^>]*>$//' > "$out/extra-$target.txt"
done
# Ordinary compute kernels (compute.cl) and packed f16 math + LDS atomics (packed.cl) compiled
# for every target (clang-19, no device library); the code objects are kept too:
# sim/tests/isa_compute.rs runs them.
clang="${CLANG:-clang-19}"
lld="${LLD:-ld.lld-19}"
for stem in compute packed; do
  for target in gfx1100 gfx1201 gfx90a gfx942; do
    "$clang" -x cl -cl-std=CL2.0 -target amdgcn-amd-amdhsa -mcpu="$target" -O2 -nogpulib \
      -c "$out/$stem.cl" -o "$tmp"
    "$lld" -shared "$tmp" -o "$out/$stem-$target.co"
    "$objdump" -d --mcpu="$target" "$out/$stem-$target.co" \
      | grep -E '^\s+[a-z_].*// [0-9A-F]+:' \
      | grep -v 's_code_end' \
      | sed -E 's/^\s+//; s/ <[^>]*>$//' > "$out/$stem-$target.txt"
  done
done
echo "wrote $(ls "$out" | wc -l) golden files to $out"
