#!/usr/bin/env bash
# Rebuilds the test kernels in kernels/*.cl into core/tests/fixtures/kernels/<stem>-<gfx>.co and
# writes core/tests/fixtures/kernels/manifest.json: what the compiler says about each object
# (e_flags, ABI version, and per kernel the fields of its NT_AMDGPU_METADATA note and of its
# `.amdhsa_kernel` assembler directives). Tests read the committed files; CI rebuilds them and
# fails if a byte differs (the build is deterministic).
#
# kernels/*.hip become clang offload bundles core/tests/fixtures/kernels/<stem>-hip.bundle.
# The manifest also keeps, per object, every kernel's metadata exactly as `llvm-readelf --notes`
# prints it (parsed from its YAML), which core's metadata reader is tested against.
#
# Needs clang-19, ld.lld-19, llvm-readelf-19, llvm-readobj-19, clang-offload-bundler-19
# (apt-get install clang-19 lld-19 llvm-19) and python3 with PyYAML.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SRC="$ROOT/kernels"
OUT="$ROOT/core/tests/fixtures/kernels"
LLVM_VER="${LLVM_VER:-19}"
CLANG="clang-$LLVM_VER"
READELF="llvm-readelf-$LLVM_VER"
READOBJ="llvm-readobj-$LLVM_VER"
CLANG_BUNDLER="clang-offload-bundler-$LLVM_VER"
TARGETS="${TARGETS:-gfx1100 gfx90a gfx942 gfx1201}"

for tool in "$CLANG" "ld.lld-$LLVM_VER" "$READELF" "$READOBJ" "$CLANG_BUNDLER" python3; do
  command -v "$tool" >/dev/null || { echo "build-kernels: $tool not found" >&2; exit 1; }
done

TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
mkdir -p "$OUT"
rm -f "$OUT"/*.co "$OUT"/*.bundle "$OUT"/manifest.json

# -mcode-object-version=5 is clang 19's default; spelled out so the ABI is pinned.
# The linker is ld.lld from the same LLVM (clang finds it via -fuse-ld=lld).
FLAGS=(-x cl -Xclang -finclude-default-header -target amdgcn-amd-amdhsa -nogpulib -O2
       -mcode-object-version=5)
LINK=(-fuse-ld=lld "--ld-path=$(command -v "ld.lld-$LLVM_VER")")

for src in "$SRC"/*.cl; do
  stem="$(basename "$src" .cl)"
  # A source may ask for more compiler flags on a line `// clang-flags: ...` (kernels/dpp.cl:
  # the DPP atomic optimizer).
  read -r -a EXTRA <<< "$(sed -n 's|^// clang-flags: ||p' "$src")"
  for gfx in $TARGETS; do
    co="$OUT/$stem-$gfx.co"
    "$CLANG" "${FLAGS[@]}" ${EXTRA[@]+"${EXTRA[@]}"} "${LINK[@]}" -mcpu="$gfx" -o "$co" "$src"
    "$CLANG" "${FLAGS[@]}" ${EXTRA[@]+"${EXTRA[@]}"} -mcpu="$gfx" -S -o "$TMP/$stem-$gfx.s" "$src"
    "$READOBJ" --elf-output-style=JSON --file-headers --notes --symbols "$co" > "$TMP/$stem-$gfx.json"
    "$READELF" --notes "$co" > "$TMP/$stem-$gfx.notes"
    echo "built $(basename "$co") ($(stat -c %s "$co") bytes)"
  done
done

# HIP: a clang offload bundle (what `hipcc --genco` and `clang -x hip --offload-device-only`
# write) holding one code object per target, built without HIP headers or device libraries.
BUNDLE_ARCHS=()
for gfx in $TARGETS; do BUNDLE_ARCHS+=("--offload-arch=$gfx"); done
for src in "$SRC"/*.hip; do
  stem="$(basename "$src" .hip)"
  out="$OUT/$stem-hip.bundle"
  # -cuid: the compilation unit id HIP mixes into its symbol names is random without it, and
  # the bundle would differ on every rebuild.
  "$CLANG" -x hip --offload-device-only -nogpulib -nogpuinc -O2 "${BUNDLE_ARCHS[@]}" \
    -cuid="$stem" "${LINK[@]}" -o "$out" "$src"
  "$CLANG_BUNDLER" --list --type=o --input="$out" | sort > "$TMP/$stem-hip.targets"
  echo "built $(basename "$out") ($(stat -c %s "$out") bytes)"
done

# e_flags for every processor LLVM knows (pins core::codeobj's EF_AMDGPU_MACH table):
# a trivial kernel per processor, code object v5 (v6 for the generic targets).
echo '__kernel void k(__global uint *p) { p[0] = 1; }' > "$TMP/mach.cl"
: > "$TMP/machs.txt"
for gfx in gfx600 gfx601 gfx602 gfx700 gfx701 gfx702 gfx703 gfx704 gfx705 gfx801 gfx802 gfx803 \
           gfx805 gfx810 gfx900 gfx902 gfx904 gfx906 gfx908 gfx909 gfx90a gfx90c gfx940 gfx941 \
           gfx942 gfx950 gfx1010 gfx1011 gfx1012 gfx1013 gfx1030 gfx1031 gfx1032 gfx1033 gfx1034 \
           gfx1035 gfx1036 gfx1100 gfx1101 gfx1102 gfx1103 gfx1150 gfx1151 gfx1152 gfx1153 \
           gfx1200 gfx1201 gfx9-generic gfx9-4-generic gfx10-1-generic gfx10-3-generic \
           gfx11-generic gfx12-generic; do
  cov=5; case "$gfx" in *-generic) cov=6;; esac
  if "$CLANG" -x cl -target amdgcn-amd-amdhsa -mcpu="$gfx" -nogpulib -O2 \
       -mcode-object-version=$cov "${LINK[@]}" -o "$TMP/mach.co" "$TMP/mach.cl" 2>/dev/null; then
    echo "$gfx $("$READOBJ" --elf-output-style=JSON --file-headers "$TMP/mach.co" |
      python3 -c 'import json,sys; h=json.load(sys.stdin)[0]["ElfHeader"]; print(h["Flags"]["Value"], h["Ident"]["ABIVersion"])')" >> "$TMP/machs.txt"
  fi
done

python3 - "$OUT" "$TMP" <<'PY'
import json, os, re, sys, yaml

out, tmp = sys.argv[1], sys.argv[2]

def directives(asm):
    """`.amdhsa_kernel NAME` ... `.end_amdhsa_kernel` blocks -> {name: {directive: int}}."""
    kernels, cur = {}, None
    for line in asm.splitlines():
        line = line.strip()
        m = re.match(r"\.amdhsa_kernel\s+(\S+)", line)
        if m:
            cur = kernels.setdefault(m.group(1), {})
        elif line.startswith(".end_amdhsa_kernel"):
            cur = None
        elif cur is not None and line.startswith(".amdhsa_"):
            key, val = line.split(None, 1)
            cur[key[len(".amdhsa_"):]] = int(val, 0)
    return kernels

def readelf_metadata(path):
    """The YAML document `llvm-readelf --notes` prints for NT_AMDGPU_METADATA."""
    lines, on = [], False
    for line in open(path).read().splitlines():
        if line.strip() == "---":
            on = True
        elif on and line.strip() == "...":
            break
        elif on:
            lines.append(line)
    return yaml.safe_load("\n".join(lines))

objects = []
for co in sorted(f for f in os.listdir(out) if f.endswith(".co")):
    stem = co[:-3]
    ro = json.load(open(os.path.join(tmp, stem + ".json")))[0]
    hdr = ro["ElfHeader"]
    notes = [n for sec in ro["NoteSections"] for n in sec["NoteSection"]["Notes"]]
    meta = yaml.safe_load(next(n["AMDGPU Metadata"] for n in notes if "AMDGPU Metadata" in n))
    syms = {s["Symbol"]["Name"]["Name"]: s["Symbol"]["Value"] for s in ro["Symbols"]}
    dirs = directives(open(os.path.join(tmp, stem + ".s")).read())
    kernels = []
    for k in meta["amdhsa.kernels"]:
        d = dirs[k[".name"]]
        kernels.append({
            "name": k[".name"],
            "symbol": k[".symbol"],
            "kd_address": syms[k[".symbol"]],
            "code_address": syms[k[".name"]],
            "kernarg_size": k[".kernarg_segment_size"],
            "kernarg_align": k[".kernarg_segment_align"],
            "group_segment_size": k[".group_segment_fixed_size"],
            "private_segment_size": k[".private_segment_fixed_size"],
            "wavefront_size": k[".wavefront_size"],
            "sgpr_count": k[".sgpr_count"],
            "vgpr_count": k[".vgpr_count"],
            "max_flat_workgroup_size": k[".max_flat_workgroup_size"],
            "hidden_args": [a[".value_kind"] for a in k.get(".args", []) if a[".value_kind"].startswith("hidden_")],
            "args": [{"offset": a[".offset"], "size": a[".size"], "type": a.get(".type_name", a[".value_kind"])}
                     for a in k.get(".args", [])],
            "uses_dispatch_ptr": bool(d.get("user_sgpr_dispatch_ptr", 0)),
            "uses_kernarg_ptr": bool(d.get("user_sgpr_kernarg_segment_ptr", 0)),
            "user_sgpr_count": d["user_sgpr_count"],
            "wave32": bool(d.get("wavefront_size32", 0)),
            "enable_private_segment": bool(d.get("enable_private_segment", 0)),
        })
    target = meta["amdhsa.target"].split("--", 1)[1]
    objects.append({
        "file": co,
        "target": target,
        "e_flags": hdr["Flags"]["Value"],
        "abi_version": hdr["Ident"]["ABIVersion"],
        "size": os.path.getsize(os.path.join(out, co)),
        "kernels": kernels,
        "readelf_metadata": readelf_metadata(os.path.join(tmp, stem + ".notes")),
    })

bundles = []
for b in sorted(f for f in os.listdir(out) if f.endswith(".bundle")):
    stem = b[:-len(".bundle")]
    targets = [t for t in open(os.path.join(tmp, stem + ".targets")).read().split() if t]
    bundles.append({"file": b, "entries": targets})

machs = []
for line in open(os.path.join(tmp, "machs.txt")):
    name, flags, abi = line.split()
    machs.append({"name": name, "e_flags": int(flags), "abi_version": int(abi)})

with open(os.path.join(out, "manifest.json"), "w") as f:
    json.dump({"generated_by": "scripts/build-kernels.sh", "llvm_machs": machs, "objects": objects,
               "bundles": bundles}, f, indent=1)
    f.write("\n")
print(f"wrote manifest.json ({len(objects)} objects)")
PY
