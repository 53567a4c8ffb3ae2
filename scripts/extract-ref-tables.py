#!/usr/bin/env python3
"""Extract the hardware facts hcq-core uses from independent references into small TSV files.

The output files (core/tests/reference/*.tsv) are read by core/tests/reference_tables.rs, which
compares every register offset, field position and width, PM4 opcode and SDMA opcode that core
defines with them. The test shares no code with the encoders: it parses these files itself.

Sources (nothing here is copied from hcq or from tinygrad):
  * Mesa's register database, src/amd/registers/{gfx9,gfx940,gfx10,gfx103,gfx11,pkt3,
    gfx10-rsrc}.json, and src/amd/common/sid.h, read with `git show COMMIT:PATH` from a Mesa
    git directory (--mesa-git DIR --mesa-commit SHA; --mesa-repo names the repository).
  * The Linux kernel's amdgpu PM4 headers drivers/gpu/drm/amd/amdgpu/soc15d.h (gfx9) and nvd.h
    (gfx10+): --linux-header NAME=FILE (a copy of the file, or of its #define lines) with
    --linux-commit NAME=SHA for each.

  * The Linux kernel's SDMA packet headers drivers/gpu/drm/amd/amdgpu/navi10_sdma_pkt_open.h
    (SDMA 5, gfx10+), vega10_sdma_pkt_open.h (SDMA 4, gfx9) and sdma_v6_0_0_pkt_open.h (SDMA 6,
    gfx11, which sdma_v7_0.c also includes for gfx12): --sdma-header NAME=FILE with
    --sdma-source NAME=REPO@SHA (the repository the copy was read from: torvalds/linux, or a
    tree that carries the file unchanged, such as FreeBSD's drm-kmod).

  * The Linux kernel's GC register headers, for families Mesa's snapshot lacks (gfx12) and to
    cross-check the convention on one it has (gfx11):
    drivers/gpu/drm/amd/include/asic_reg/gc/gc_<ver>_offset.h (--gc-offset CHIP=FILE),
    gc_<ver>_sh_mask.h (--gc-mask CHIP=FILE; a copy of the file or of its COMPUTE_* #define
    lines), and drivers/gpu/drm/amd/include/soc<N>_enum.h (--soc-enum CHIP=FILE). Each input
    names where it was read with --origin FILE=REPO@SHA:PATH. Offsets in these headers are
    dwords relative to a GC base segment (`regX_BASE_IDX`); the absolute dword is offset +
    GC_BASE[BASE_IDX] (GC_BASE below, the values of every gfx10/gfx11 *_ip_offset.h; gfx11 and
    gfx12 read them from IP discovery). Checked per header: every register written lies inside
    the address block whose `base address` comment is the SH space (0xb000 bytes = dword
    0x2C00).

Only names in the lists below are written, so the files stay small and every row is a fact core
relies on. Usage:

  scripts/extract-ref-tables.py --mesa-git /path/to/mesa/.git --mesa-commit SHA \
      --mesa-repo mesa3d/mesa --linux-header soc15d.h=/tmp/soc15d.h \
      --linux-commit soc15d.h=SHA --linux-header nvd.h=/tmp/nvd.h --linux-commit nvd.h=SHA \
      --out core/tests/reference

  scripts/extract-ref-tables.py --gc-offset gfx12=/tmp/gc_12_0_0_offset.h \
      --gc-mask gfx12=/tmp/gc_12_0_0_sh_mask.h --soc-enum gfx12=/tmp/soc24_enum.h \
      --origin /tmp/gc_12_0_0_offset.h=REPO@SHA:PATH ... --out core/tests/reference

Every group of inputs is optional; only the files whose inputs are given are written.

Standard library only.
"""

import argparse
import json
import os
import re
import subprocess
import sys

MESA_CHIPS = ["gfx9", "gfx940", "gfx10", "gfx103", "gfx11"]

# Registers whose dword address core uses (SET_SH_REG offsets are address - 0x2C00).
REGISTERS = [
    "COMPUTE_DISPATCH_INITIATOR",
    "COMPUTE_START_X", "COMPUTE_START_Y", "COMPUTE_START_Z",
    "COMPUTE_NUM_THREAD_X", "COMPUTE_NUM_THREAD_Y", "COMPUTE_NUM_THREAD_Z",
    "COMPUTE_PGM_LO", "COMPUTE_PGM_HI",
    "COMPUTE_DISPATCH_SCRATCH_BASE_LO", "COMPUTE_DISPATCH_SCRATCH_BASE_HI",
    "COMPUTE_PGM_RSRC1", "COMPUTE_PGM_RSRC2", "COMPUTE_PGM_RSRC3",
    "COMPUTE_RESOURCE_LIMITS",
    "COMPUTE_STATIC_THREAD_MGMT_SE0", "COMPUTE_STATIC_THREAD_MGMT_SE1",
    "COMPUTE_STATIC_THREAD_MGMT_SE2", "COMPUTE_STATIC_THREAD_MGMT_SE3",
    "COMPUTE_STATIC_THREAD_MGMT_SE4", "COMPUTE_STATIC_THREAD_MGMT_SE5",
    "COMPUTE_STATIC_THREAD_MGMT_SE6", "COMPUTE_STATIC_THREAD_MGMT_SE7",
    # gfx10+ names of STATIC_THREAD_MGMT_SE0..3 in Mesa.
    "COMPUTE_DESTINATION_EN_SE0", "COMPUTE_DESTINATION_EN_SE1",
    "COMPUTE_DESTINATION_EN_SE2", "COMPUTE_DESTINATION_EN_SE3",
    "COMPUTE_TMPRING_SIZE",
    "COMPUTE_RESTART_X", "COMPUTE_RESTART_Y", "COMPUTE_RESTART_Z",
] + ["COMPUTE_USER_DATA_%d" % i for i in range(16)]

# Registers (or descriptor words) whose fields core defines as bitfields.
FIELD_REGISTERS = [
    "COMPUTE_PGM_RSRC1", "COMPUTE_PGM_RSRC2", "COMPUTE_PGM_RSRC3",
    "COMPUTE_TMPRING_SIZE", "COMPUTE_DISPATCH_INITIATOR", "CP_COHER_CNTL",
    "SQ_BUF_RSRC_WORD1", "SQ_BUF_RSRC_WORD3",
]

# Enumerations core uses values of: (enum, entry).
ENUM_ENTRIES = [
    ("VGT_EVENT_TYPE", "CS_PARTIAL_FLUSH"),
    ("VGT_EVENT_TYPE", "CACHE_FLUSH_AND_INV_TS_EVENT"),
    ("VGT_EVENT_TYPE", "BOTTOM_OF_PIPE_TS"),
    ("BUF_NUM_FORMAT", "BUF_NUM_FORMAT_UINT"),
    ("BUF_DATA_FORMAT", "BUF_DATA_FORMAT_32"),
    ("SQ_SEL_XYZW01", "SQ_SEL_X"),
    ("SQ_SEL_XYZW01", "SQ_SEL_Y"),
    ("SQ_SEL_XYZW01", "SQ_SEL_Z"),
    ("SQ_SEL_XYZW01", "SQ_SEL_W"),
]

# PM4 packet-field words in Mesa's pkt3.json.
PKT3_TYPES = ["GCR_CNTL", "IB_CONTROL", "RELEASE_MEM_OP", "CONTROL"]

# sid.h / soc15d.h / nvd.h macro names (opcodes, shifts, masks) core relies on.
SID_NAMES = re.compile(
    r"^(PKT3_(NOP|DISPATCH_DIRECT|WRITE_DATA|WAIT_REG_MEM|INDIRECT_BUFFER|EVENT_WRITE|"
    r"RELEASE_MEM|ACQUIRE_MEM|SET_SH_REG|SET_UCONFIG_REG|SHADER_TYPE_S|RESET_FILTER_CAM_S|"
    r"IT_OPCODE_S)|PKT_TYPE_S|PKT_COUNT_S|PKT3_NOP_PAD|"
    r"WAIT_REG_MEM_(EQUAL|NOT_EQUAL|GREATER_OR_EQUAL|MEM_SPACE|PFP)|"
    r"EVENT_(TYPE|INDEX|TC_WB_ACTION_ENA|TCL1_ACTION_ENA|TC_ACTION_ENA)|"
    r"EOP_(INT_SEL|DATA_SEL|DST_SEL)|"
    r"SDMA_(OPCODE_\w+|COPY_SUB_OPCODE_LINEAR|WRITE_SUB_OPCODE_LINEAR|"
    r"TS_SUB_OPCODE_GET_GLOBAL_TIMESTAMP|FENCE_MTYPE_UC|POLL_MEM|POLL_RETRY_INDEFINITELY))$"
)
LINUX_NAMES = re.compile(
    r"^(PACKET3_(NOP|DISPATCH_DIRECT|WRITE_DATA|WAIT_REG_MEM|INDIRECT_BUFFER|EVENT_WRITE|"
    r"RELEASE_MEM|ACQUIRE_MEM|SET_SH_REG|SET_UCONFIG_REG|SET_SH_REG_START|"
    r"SET_UCONFIG_REG_START)|"
    r"PACKET3_WAIT_REG_MEM__(FUNCTION|MEM_SPACE|OPERATION)|"
    r"PACKET3_WRITE_DATA__(DST_SEL|ADDR_INCR|WR_CONFIRM|CACHE_POLICY)|"
    r"PACKET3_INDIRECT_BUFFER__(IB_SIZE|CHAIN|VALID|VMID|CACHE_POLICY)|"
    r"PACKET3_EVENT_WRITE__(EVENT_TYPE|EVENT_INDEX)|"
    r"PACKET3_ACQUIRE_MEM_CP_COHER_CNTL_\w+|PACKET3_ACQUIRE_MEM__POLL_INTERVAL|"
    r"PACKET3_ACQUIRE_MEM_GCR_CNTL_\w+|PACKET3_ACQUIRE_MEM_GCR_RANGE_IS_PA|"
    r"PACKET3_RELEASE_MEM_\w+|"
    r"WAIT_REG_MEM_(FUNCTION|MEM_SPACE|OPERATION|ENGINE)|WRITE_DATA_(DST_SEL|ENGINE_SEL|"
    r"CACHE_POLICY)|WR_ONE_ADDR|WR_CONFIRM|INDIRECT_BUFFER_(VALID|CACHE_POLICY|PRE_ENB|"
    r"PRE_RESUME)|EVENT_TYPE|EVENT_INDEX|EOP_TC_WB_ACTION_EN|EOP_TCL1_ACTION_EN|"
    r"EOP_TC_ACTION_EN|EOP_EXEC|DATA_SEL|INT_SEL|DST_SEL)$"
)


# SDMA packets whose field layouts core encodes (SDMA_PKT_<packet>_<word>_<field>_offset/mask/
# shift in the *_sdma_pkt_open.h headers), and the opcode/sub-opcode values.
SDMA_PACKETS = ["HEADER", "NOP", "COPY_LINEAR", "WRITE_UNTILED", "INDIRECT", "FENCE", "TRAP",
                "POLL_REGMEM", "CONSTANT_FILL", "TIMESTAMP_GET_GLOBAL", "GCR_REQ"]
SDMA_FIELD = re.compile(r"^\s*#\s*define\s+(SDMA_PKT_(%s)_\w+?)_(offset|mask|shift)\s+(\w+)"
                        % "|".join(SDMA_PACKETS))
SDMA_VALUE = re.compile(r"^\s*#\s*define\s+(SDMA_(?:OP|SUBOP)_\w+)\s+(\d+)\s*$")


# The GCR_CNTL bits an SDMA GCR_REQ carries (`SDMA_GCR_GL2_WB (1 << 15)`,
# `SDMA_GCR_SEQ(x) (((x) & 0x3) << 16)`): the same word as PM4 ACQUIRE_MEM's GCR_CNTL.
SDMA_GCR = re.compile(r"^SDMA_GCR_\w+$")


def sdma_rows(text):
    """Rows (name, dword, shift, width) for every field of SDMA_PACKETS, then (name, value, -,
    -) for the SDMA_OP_*/SDMA_SUBOP_* constants, then (name, -, lo, width) for the SDMA_GCR_*
    GCR_CNTL bits."""
    parts = {}
    order = []
    values = []
    gcr = []
    for kind_row in parse_defines(text, SDMA_GCR):
        name, kind, a, b = kind_row
        if kind == "shifted" and b == 1:
            gcr.append((name, "-", a, 1))
        elif kind == "field" and b != "-":
            gcr.append((name, "-", a, b))
    for line in text.splitlines():
        m = SDMA_FIELD.match(line)
        if m:
            name, _, kind, v = m.groups()
            if name not in parts:
                parts[name] = {}
                order.append(name)
            parts[name][kind] = parse_int(v)
            continue
        m = SDMA_VALUE.match(line)
        if m:
            values.append((m.group(1), int(m.group(2)), "-", "-"))
    rows = []
    for name in order:
        f = parts[name]
        if {"offset", "mask", "shift"} <= set(f):
            rows.append((name, f["offset"], f["shift"], f["mask"].bit_length()))
    return rows + values + gcr


# GC_BASE segments of every gfx10/gfx11 *_ip_offset.h (navi10, sienna_cichlid, ...):
# absolute dword = header offset + GC_BASE[regX_BASE_IDX].
GC_BASE = {0: 0x1260, 1: 0xA000}
# The SH register space SET_SH_REG addresses: dwords 0x2C00..0x2FFF (byte 0xb000).
SH_BLOCK_BASE = 0xb000
GC_REG = re.compile(r"^\s*#\s*define\s+reg(\w+?)(_BASE_IDX)?\s+(0x[0-9a-fA-F]+|\d+)\s*$")
GC_BLOCK = re.compile(r"^//\s*addressBlock:\s*(\S+)")
GC_BLOCK_BASE = re.compile(r"^//\s*base address:\s*(0x[0-9a-fA-F]+)")
GC_MASK = re.compile(r"^\s*#\s*define\s+(\w+?)__(\w+?)(__SHIFT|_MASK)\s+(0x[0-9a-fA-F]+|\d+)[uUlL]*\s*$")


def gc_register_rows(text, chip):
    """(chip, register, dword) for REGISTERS in a gc_*_offset.h, absolute dword addresses."""
    offsets, base_idx, block_of = {}, {}, {}
    block, block_base = None, {}
    for line in text.splitlines():
        m = GC_BLOCK.match(line)
        if m:
            block = m.group(1)
            continue
        m = GC_BLOCK_BASE.match(line)
        if m and block:
            block_base[block] = parse_int(m.group(1))
            continue
        m = GC_REG.match(line)
        if not m:
            continue
        name, is_idx, value = m.groups()
        if is_idx:
            base_idx[name] = parse_int(value)
        else:
            offsets[name] = parse_int(value)
            block_of[name] = block
    rows = []
    for name in REGISTERS:
        if name not in offsets:
            continue
        dword = offsets[name] + GC_BASE[base_idx[name]]
        # Every register core writes with SET_SH_REG sits in the block whose base is the SH
        # space: a wrong GC_BASE would move it out.
        lo = block_base.get(block_of[name], -1) // 4
        if lo != SH_BLOCK_BASE // 4 or not lo <= dword < lo + 0x400:
            sys.exit("%s %s: dword %#x is not in the SH block (%s at %#x)"
                     % (chip, name, dword, block_of[name], lo))
        rows.append((chip, name, "0x%04x" % dword))
    return rows


def gc_field_rows(text, chip):
    """(chip, register, field, lo, hi) for FIELD_REGISTERS in a gc_*_sh_mask.h."""
    shift, mask = {}, {}
    for line in text.splitlines():
        m = GC_MASK.match(line)
        if not m or m.group(1) not in FIELD_REGISTERS:
            continue
        key = (m.group(1), m.group(2))
        (shift if m.group(3) == "__SHIFT" else mask)[key] = parse_int(m.group(4))
    rows = []
    for key in sorted(shift):
        if key not in mask:
            sys.exit("%s %s.%s: a shift without a mask" % ((chip,) + key))
        lo, m = shift[key], mask[key]
        hi = m.bit_length() - 1
        # The mask must be the contiguous run that starts at the shift.
        if m != ((1 << (hi + 1)) - (1 << lo)):
            sys.exit("%s %s.%s: mask %#x does not start at shift %d" % ((chip,) + key + (m, lo)))
        rows.append((chip, key[0], key[1], lo, hi))
    return rows


def soc_enum_rows(text, chip):
    """(chip, enum, entry, value) for ENUM_ENTRIES in a soc*_enum.h (`typedef enum E { ... } E;`)."""
    rows = []
    for enum in sorted({e for e, _ in ENUM_ENTRIES}):
        m = re.search(r"typedef enum %s \{(.*?)\}" % enum, text, re.S)
        if not m:
            continue
        for entry in [n for e, n in ENUM_ENTRIES if e == enum]:
            v = re.search(r"^\s*%s\s*=\s*(0x[0-9a-fA-F]+|\d+)" % entry, m.group(1), re.M)
            if v:
                rows.append((chip, enum, entry, parse_int(v.group(1))))
    return rows


def git_show(git_dir, commit, path):
    return subprocess.run(
        ["git", "--git-dir", git_dir, "show", "%s:%s" % (commit, path)],
        check=True, capture_output=True, text=True,
    ).stdout


def parse_int(text):
    text = text.strip().rstrip("uUlL")
    return int(text, 0)


# `#define NAME value` forms that give one fact each:
#   NAME 0x3C                                    -> value 60
#   NAME (1 << 23)                               -> bits 23..23
#   NAME(x) ((x) << 8)                           -> lo 8, width unknown
#   NAME(x) ((((unsigned)(x)) & 0x7) << 0)       -> lo 0, width 3
#   NAME(x) (((unsigned)(x)&0x3) << 4)           -> lo 4, width 2
#   NAME(x) ((unsigned)(x))                      -> lo 0, width 32
DEFINE = re.compile(r"^\s*#\s*define\s+(\w+)(\(x\))?\s+(.*?)\s*(/\*.*)?$")
SHIFT_MASK = re.compile(r"\(+(?:\(unsigned\))?\(x\)\)*\s*&\s*(0x[0-9a-fA-F]+|\d+)\)*\s*<<\s*(\d+)\)*$")
SHIFT_ONLY = re.compile(r"^\(\(x\)\s*<<\s*(\d+)\)$")
BIT = re.compile(r"^\((0x[0-9a-fA-F]+|\d+)\s*<<\s*(\d+)\)$")
WHOLE = re.compile(r"^\(\(unsigned\)\(x\)\)$")
NUMBER = re.compile(r"^\(?\s*(0x[0-9a-fA-F]+|\d+)[uUlL]*\s*\)?$")


def parse_defines(text, wanted):
    """Rows (name, kind, a, b): kind value (a=value), field (a=lo, b=width or '-'), bits (a=lo,
    b=value at lo, for `(v << n)` constants)."""
    rows = []
    seen = set()
    for line in text.splitlines():
        m = DEFINE.match(line)
        if not m:
            continue
        name, arg, body, _ = m.groups()
        if not wanted.match(name) or name in seen:
            continue
        body = body.strip()
        row = None
        if arg:
            mm = SHIFT_MASK.search(body)
            if mm:
                mask = parse_int(mm.group(1))
                row = (name, "field", int(mm.group(2)), mask.bit_length())
            elif SHIFT_ONLY.match(body):
                row = (name, "field", int(SHIFT_ONLY.match(body).group(1)), "-")
            elif WHOLE.match(body):
                row = (name, "field", 0, 32)
        else:
            mb = BIT.match(body)
            mn = NUMBER.match(body)
            if mb:
                row = (name, "shifted", int(mb.group(2)), parse_int(mb.group(1)))
            elif mn:
                row = (name, "value", parse_int(mn.group(1)), "-")
        if row:
            seen.add(name)
            rows.append(row)
    return rows


def mesa_tables(git_dir, commit):
    regs, fields, enums = [], [], []
    for chip in MESA_CHIPS:
        db = json.loads(git_show(git_dir, commit, "src/amd/registers/%s.json" % chip))
        dbs = [db]
        if chip in ("gfx10", "gfx103"):
            dbs.append(json.loads(git_show(git_dir, commit, "src/amd/registers/gfx10-rsrc.json")))
        if chip == "gfx11":
            dbs.append(json.loads(git_show(git_dir, commit, "src/amd/registers/gfx11-rsrc.json")))
        for d in dbs:
            for m in d["register_mappings"]:
                if "chips" in m and chip not in m["chips"]:
                    continue
                name = m["name"]
                if name in REGISTERS and m["map"]["to"] == "mm":
                    regs.append((chip, name, "0x%04x" % (m["map"]["at"] // 4)))
                if name in FIELD_REGISTERS and "type_ref" in m:
                    for f in d["register_types"][m["type_ref"]]["fields"]:
                        fields.append((chip, name, f["name"], f["bits"][0], f["bits"][1]))
            for enum, entry in ENUM_ENTRIES:
                for e in d["enums"].get(enum, {}).get("entries", []):
                    if e["name"] == entry:
                        enums.append((chip, enum, entry, e["value"]))
    pkt3 = json.loads(git_show(git_dir, commit, "src/amd/registers/pkt3.json"))
    for m in pkt3["register_mappings"]:
        if m["name"] in PKT3_TYPES and "type_ref" in m:
            for chip in m["chips"]:
                if chip not in MESA_CHIPS:
                    continue
                for f in pkt3["register_types"][m["type_ref"]]["fields"]:
                    fields.append((chip, "PKT3_" + m["name"], f["name"], f["bits"][0], f["bits"][1]))
    sid = parse_defines(git_show(git_dir, commit, "src/amd/common/sid.h"), SID_NAMES)
    return sorted(set(regs)), sorted(set(fields)), sorted(set(enums)), sid


def write_tsv(path, header_lines, columns, rows):
    with open(path, "w") as f:
        for h in header_lines:
            f.write("# %s\n" % h)
        f.write("# columns: %s\n" % "\t".join(columns))
        for r in rows:
            f.write("\t".join(str(c) for c in r) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mesa-git")
    ap.add_argument("--mesa-commit")
    ap.add_argument("--mesa-repo", default="mesa3d/mesa")
    ap.add_argument("--linux-header", action="append", default=[])
    ap.add_argument("--linux-commit", action="append", default=[])
    ap.add_argument("--linux-repo", default="torvalds/linux")
    ap.add_argument("--sdma-header", action="append", default=[])
    ap.add_argument("--sdma-source", action="append", default=[])
    ap.add_argument("--sdma-only", action="store_true",
                    help="write only the SDMA tables (no Mesa git directory needed)")
    ap.add_argument("--gc-offset", action="append", default=[], metavar="CHIP=FILE")
    ap.add_argument("--gc-mask", action="append", default=[], metavar="CHIP=FILE")
    ap.add_argument("--soc-enum", action="append", default=[], metavar="CHIP=FILE")
    ap.add_argument("--origin", action="append", default=[], metavar="FILE=REPO@SHA:PATH",
                    help="where a --gc-offset/--gc-mask/--soc-enum file was read")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    gen = "generated by scripts/extract-ref-tables.py; do not edit"

    origins = dict(kv.split("=", 1) for kv in a.origin)

    def linux_gc(opts, parse, name, notes, columns):
        rows, heads = [], [gen]
        for kv in opts:
            chip, path = kv.split("=", 1)
            if path not in origins:
                ap.error("%s has no --origin" % path)
            heads.append("source: %s: %s" % (chip, origins[path].replace(":", " ", 1)))
            rows += parse(open(path).read(), chip)
        if opts:
            write_tsv(os.path.join(a.out, name), heads + notes, columns, sorted(set(rows)))

    linux_gc(a.gc_offset, gc_register_rows, "linux_gc_registers.tsv",
             ["dword: header offset + GC_BASE[BASE_IDX] (0x1260 for BASE_IDX 0, the GC segment 0 "
              "base of every gfx10/gfx11 *_ip_offset.h); SET_SH_REG offset = dword - 0x2C00"],
             ["chip", "register", "dword"])
    linux_gc(a.gc_mask, gc_field_rows, "linux_gc_fields.tsv",
             ["lo/hi: inclusive bit positions (REG__FIELD__SHIFT, REG__FIELD_MASK)"],
             ["chip", "register", "field", "lo", "hi"])
    linux_gc(a.soc_enum, soc_enum_rows, "linux_soc_enums.tsv", [],
             ["chip", "enum", "entry", "value"])

    sources = dict(kv.split("=", 1) for kv in a.sdma_source)
    for kv in a.sdma_header:
        name, path = kv.split("=", 1)
        stem = os.path.splitext(name)[0]
        write_tsv(os.path.join(a.out, "linux_%s.tsv" % stem),
                  [gen, "source: %s drivers/gpu/drm/amd/amdgpu/%s" % (sources.get(name, "?"), name),
                   "field rows: dword = packet dword, shift = low bit, width = mask bits; "
                   "SDMA_OP_/SDMA_SUBOP_ rows: dword = the value; "
                   "SDMA_GCR_ rows: GCR_CNTL bits (dword -)"],
                  ["name", "dword", "shift", "width"], sdma_rows(open(path).read()))
    if a.sdma_only:
        return 0
    if a.mesa_git or a.mesa_commit:
        if not (a.mesa_git and a.mesa_commit):
            ap.error("--mesa-git and --mesa-commit go together")
        write_mesa(a, gen)
    write_linux_headers(a, gen)
    return 0


def write_mesa(a, gen):
    src = "%s@%s" % (a.mesa_repo, a.mesa_commit)
    regs, fields, enums, sid = mesa_tables(a.mesa_git, a.mesa_commit)
    write_tsv(os.path.join(a.out, "mesa_registers.tsv"),
              [gen, "source: %s src/amd/registers/<chip>.json (register_mappings, mm space)" % src,
               "dword: register dword address (SET_SH_REG offset = dword - 0x2C00)"],
              ["chip", "register", "dword"], regs)
    write_tsv(os.path.join(a.out, "mesa_fields.tsv"),
              [gen, "source: %s src/amd/registers/<chip>.json, <chip>-rsrc.json, pkt3.json "
               "(PKT3_* rows are packet words)" % src, "lo/hi: inclusive bit positions"],
              ["chip", "register", "field", "lo", "hi"], fields)
    write_tsv(os.path.join(a.out, "mesa_enums.tsv"),
              [gen, "source: %s src/amd/registers/<chip>.json enums" % src],
              ["chip", "enum", "entry", "value"], enums)
    write_tsv(os.path.join(a.out, "mesa_sid.tsv"),
              [gen, "source: %s src/amd/common/sid.h" % src,
               "kind value: a = the constant; field: a = shift, b = width ('-' unknown); "
               "shifted: (b << a)"],
              ["name", "kind", "a", "b"], sid)


def write_linux_headers(a, gen):
    commits = dict(kv.split("=", 1) for kv in a.linux_commit)
    for kv in a.linux_header:
        name, path = kv.split("=", 1)
        rows = parse_defines(open(path).read(), LINUX_NAMES)
        stem = os.path.splitext(name)[0]
        write_tsv(os.path.join(a.out, "linux_%s.tsv" % stem),
                  [gen, "source: %s@%s drivers/gpu/drm/amd/amdgpu/%s" % (a.linux_repo, commits.get(name, "?"), name),
                   "kind value: a = the constant; field: a = shift, b = width ('-' unknown); "
                   "shifted: (b << a)"],
                  ["name", "kind", "a", "b"], rows)


if __name__ == "__main__":
    sys.exit(main())
