#!/usr/bin/env bash
# cargo mutants over one area of hcq-core, building and running only the tests that speak for
# it (the lib's unit tests plus the integration suites named here), with the quick `mutants`
# profile of the workspace Cargo.toml. Not part of CI: ~5-10 s a mutant on 2 cores.
#
#   scripts/mutants.sh kfd|codeobj|metadata|top|ring|patch|cmd|sdma|pm4 [OUT_DIR]
#
# Results land in OUT_DIR/mutants.out (missed.txt lists the survivors); rerunning with the same
# OUT_DIR tests only what was not caught before (--iterate).
set -euo pipefail
cd "$(dirname "$0")/.."
area="${1:?usage: scripts/mutants.sh AREA [OUT_DIR]}"
out="${2:-target/mutants-$area}"
case "$area" in
  kfd) files=('core/src/kfd/**'); tests=(kfd_abi) ;;
  codeobj) files=('core/src/codeobj/**'); tests=(codeobj_corrupt codeobj_fixtures) ;;
  metadata) files=('core/src/metadata/**'); tests=(metadata_fixtures) ;;
  top) files=('core/src/*.rs'); tests=(golden_seed prop_packets mutants_pm4 mutants_sdma reference_tables reference_nbio) ;;
  ring) files=('core/src/ring/**' 'core/src/timeline/**'); tests=(prop_ring prop_timeline prop_pool) ;;
  patch) files=('core/src/patch/**'); tests=(prop_patch mutants_patch) ;;
  cmd) files=('core/src/cmd/**'); tests=(prop_cmd mutants_cmd golden_seed) ;;
  sdma) files=('core/src/sdma/**'); tests=(mutants_sdma reference_sdma golden_seed) ;;
  pm4) files=('core/src/pm4/**'); tests=(mutants_pm4 reference_tables golden_seed) ;;
  *) echo "unknown area $area" >&2; exit 2 ;;
esac
args=(--profile mutants -o "$out" -C --lib)
for f in "${files[@]}"; do args+=(-f "$f"); done
for t in "${tests[@]}"; do args+=(-C "--test=$t"); done
[ -d "$out/mutants.out" ] && args+=(--iterate)
cargo mutants "${args[@]}"
