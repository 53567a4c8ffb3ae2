#!/usr/bin/env python3
"""Extract the HDP-flush registers and masks of every hcq target from the Linux amdgpu sources.

Writes core/tests/reference/linux_nbio_hdp.tsv, read by core/tests/reference_nbio.rs, which compares
core's per-family `ArchInfo::hdp_flush_req`, `hdp_flush_done` and `sdma0_hdp_flush_mask` with it.
The test shares no code with core: it parses this file itself.

What the kernel does (drivers/gpu/drm/amd/amdgpu): a PM4 ring's `emit_hdp_flush` is a WAIT_REG_MEM
(write REQ, wait on DONE) and an SDMA ring's is a POLL_REGMEM with HDP_FLUSH=1; both take the two
registers from `adev->nbio.funcs->get_hdp_flush_{req,done}_offset()` and the bit from
`adev->nbio.hdp_flush_reg->ref_and_mask_{cp0..cp9,sdma0,sdma1}`. Which `nbio_v*.c` / `nbif_v*.c`
provides them depends on the NBIO IP version (`amdgpu_discovery.c`, "set NBIO version"). Each
function returns `SOC15_REG_OFFSET(NBIO, 0, reg)` = NBIO segment base[`reg_BASE_IDX`] + `reg`.

Per target this script reads, from one Linux tree:
  * amdgpu_discovery.c: which nbio funcs the target's NBIO version selects (and, for gfx90a, the
    hard-coded CHIP_ALDEBARAN versions: GC 9.4.2, NBIO 7.4.4);
  * that nbio_v*.c: the REQ/DONE register names and the ref_and_mask macro names;
  * its include/asic_reg/{nbio,nbif}/*_offset.h: the register offsets and BASE_IDX;
  * its *_sh_mask.h: the mask values. Several of these headers are over 4 MB, beyond a fetched
    snapshot; then --mask-lines NAME=FILE gives a copy of the file (or of its #define lines) and
    --origin FILE=REPO@SHA:PATH says where it was read. A header neither in the tree nor given
    leaves that target without mask rows (reported on stderr), never with guessed values;
  * the NBIO segment base: NBIO_BASE__INST0_SEG<BASE_IDX> of the ASIC's *_ip_offset.h where the
    kernel has one (Aldebaran, Sienna Cichlid). gfx942, gfx1100 and gfx1201 take their bases from
    the IP-discovery table in the VBIOS at run time; no source file states them. For those the
    script writes the segment 2 base every NBIO header-era ASIC shares (0xD20, e.g.
    vega20_ip_offset.h / sienna_cichlid_ip_offset.h, which is what tinygrad's KFD path adds for
    every target) and marks the row `discovery`; where the NBIO header carries the register's
    config-space alias (nbio_4_3_0_offset.h: cfgBIF_BX_PF_GPU_HDP_FLUSH_REQ = 0x30203898, byte
    0x3898 = dword 0xE26 of the BIF block) the script checks the sum against it.

Usage (lutzbichler/drm-kmod carries drivers/gpu/drm/amd unchanged; fetch it, or use a kernel
checkout; nv.c still chose nbio_v2_3 by chip before commit cdf4316f99 "drop nv_set_ip_blocks()"):

  scripts/extract-nbio-hdp.py --git /path/to/drm-kmod/.git --commit b6f7264f... \
      --repo lutzbichler/drm-kmod \
      --mask-lines nbio_2_3_sh_mask.h=/tmp/nbio_2_3_sh_mask.lines \
      --origin /tmp/nbio_2_3_sh_mask.lines=raspberrypi/linux@656a52a8...:drivers/gpu/drm/amd/include/asic_reg/nbio/nbio_2_3_sh_mask.h \
      --mask-lines nbio_4_3_0_sh_mask.h=/tmp/nbio_4_3_0_sh_mask.lines --origin ... \
      --out core/tests/reference

Standard library only.
"""

import argparse
import os
import re
import subprocess
import sys

AMDGPU = "drivers/gpu/drm/amd/amdgpu/"
INCLUDE = "drivers/gpu/drm/amd/include/"

# (target, GC IP version, NBIO IP version, nbio source file, segment-base source, evidence).
# The NBIO version is the one fact not derivable from the kernel tree for IP-discovery ASICs;
# the evidence column says where it comes from. seg: an *_ip_offset.h, or "discovery".
TARGETS = [
    ("gfx90a", "9.4.2", "7.4.4", "nbio_v7_4", "aldebaran_ip_offset.h",
     "amdgpu_discovery.c CHIP_ALDEBARAN: GC 9.4.2, NBIO 7.4.4 (hard-coded, no discovery table)"),
    ("gfx942", "9.4.3", "7.9.0", "nbio_v7_9", "discovery",
     "nbio_v7_9 is the only NBIO with MI300 compute/memory partition callbacks; "
     "tinygrad KFD path (nbio 7.9 regBIF_BX_PF0_GPU_HDP_FLUSH_REQ + vega20 seg2 0xd20)"),
    ("gfx1030", "10.3.0", "2.3", "nbio_v2_3", "sienna_cichlid_ip_offset.h",
     "nv.c nv_set_ip_blocks() before cdf4316f99: dGPU navi2x -> nbio_v2_3_funcs; "
     "sienna_cichlid_reg_base_init"),
    ("gfx1100", "11.0.0", "4.3.0", "nbio_v4_3", "discovery",
     "umr -lb on an RX 7900 XTX: amd744c.nbio430 (4.3.0) (tinygrad/7900xtx README.md)"),
    ("gfx1201", "12.0.1", "6.3.1", "nbif_v6_3_1", "discovery",
     "soc24.c (gfx12) handles NBIO 6.3.1 only; amdgpu_discovery.c 6.3.1 -> nbif_v6_3_1_funcs"),
]

# The segment-2 base the discovery targets use (see the module doc).
DISCOVERY_SEG = {2: 0xD20}

MASK_ROLES = ["ref_and_mask_cp%d" % i for i in range(10)] + ["ref_and_mask_sdma0",
                                                             "ref_and_mask_sdma1"]


def git_show(git_dir, commit, path):
    r = subprocess.run(["git", "--git-dir", git_dir, "show", "%s:%s" % (commit, path)],
                       capture_output=True, text=True)
    return r.stdout if r.returncode == 0 else None


def defines(text):
    """name -> int for every `#define NAME <int>` line."""
    out = {}
    for m in re.finditer(r"^\s*#\s*define\s+(\w+)\s+(0x[0-9a-fA-F]+|\d+)[uUlL]*\s*(?://.*)?$",
                         text, re.M):
        out[m.group(1)] = int(m.group(2), 0)
    return out


def discovery_funcs(text, version):
    """The nbio funcs symbol amdgpu_discovery.c's "set NBIO version" switch picks for version."""
    block = re.search(r"/\* set NBIO version \*/(.*?)\n\t\}\n", text, re.S)
    if not block:
        sys.exit("amdgpu_discovery.c: no 'set NBIO version' switch")
    major, minor, *rest = (int(x) for x in version.split("."))
    pending = []
    for line in block.group(1).splitlines():
        m = re.search(r"case IP_VERSION\((\d+), (\d+), (\d+)\)", line)
        if m:
            pending.append(tuple(int(x) for x in m.groups()))
            continue
        m = re.search(r"adev->nbio\.hdp_flush_reg = &(\w+)_hdp_flush_reg;", line)
        if m:
            for v in pending:
                if v[:2] == (major, minor) and (not rest or v[2] == rest[0]):
                    return m.group(1)
        if "break;" in line:
            pending = []
    return None


def aldebaran_versions(text):
    m = re.search(r"case CHIP_ALDEBARAN:(.*?)break;", text, re.S)
    if not m:
        return {}
    return {ip: "%s.%s.%s" % (x, y, z) for ip, x, y, z in
            re.findall(r"ip_versions\[(\w+)_HWIP\]\[0\] = IP_VERSION\((\d+), (\d+), (\d+)\)",
                       m.group(1))}


def nbio_source(text, stem):
    """(req reg, done reg, {role: mask macro}, offset header, sh_mask header) of a nbio_v*.c."""
    regs = {}
    for which in ("req", "done"):
        m = re.search(r"%s_get_hdp_flush_%s_offset\(.*?\{\s*return SOC15_REG_OFFSET\(NBIO, 0, "
                      r"(\w+)\);" % (stem, which), text, re.S)
        if not m:
            sys.exit("%s.c: no get_hdp_flush_%s_offset" % (stem, which))
        regs[which] = m.group(1)
    m = re.search(r"const struct nbio_hdp_flush_reg %s_hdp_flush_reg = \{(.*?)\};" % stem,
                  text, re.S)
    if not m:
        sys.exit("%s.c: no %s_hdp_flush_reg" % (stem, stem))
    masks = dict(re.findall(r"\.(ref_and_mask_\w+) = (\w+)", m.group(1)))
    incs = re.findall(r'#include "(nb(?:io|if)/\w+_(?:offset|sh_mask)\.h)"', text)
    off = [i for i in incs if i.endswith("_offset.h")]
    msk = [i for i in incs if i.endswith("_sh_mask.h")]
    if len(off) != 1 or len(msk) != 1:
        sys.exit("%s.c: expected one offset and one sh_mask include, got %s" % (stem, incs))
    return regs["req"], regs["done"], masks, off[0], msk[0]


def ip_offset_seg(text, idx):
    m = re.search(r"^#define NBIO_BASE__INST0_SEG%d\s+(0x[0-9a-fA-F]+|\d+)" % idx, text, re.M)
    return int(m.group(1), 0) if m else None


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--git", required=True, help="git directory of a Linux (or drm-kmod) tree")
    ap.add_argument("--commit", required=True)
    ap.add_argument("--repo", required=True, help="owner/name the git directory is a copy of")
    ap.add_argument("--mask-lines", action="append", default=[], metavar="HEADER=FILE",
                    help="copy of a *_sh_mask.h (or of its #define lines) missing from the tree")
    ap.add_argument("--origin", action="append", default=[], metavar="FILE=REPO@SHA:PATH")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()

    origin = dict(o.split("=", 1) for o in a.origin)
    mask_files = {}
    for ml in a.mask_lines:
        name, path = ml.split("=", 1)
        if path not in origin:
            sys.exit("--mask-lines %s needs --origin %s=REPO@SHA:PATH" % (name, path))
        with open(path) as f:
            mask_files[name] = (f.read(), origin[path])

    def show(path):
        return git_show(a.git, a.commit, path)

    here = "%s@%s" % (a.repo, a.commit)
    disc = show(AMDGPU + "amdgpu_discovery.c")
    if disc is None:
        sys.exit("no amdgpu_discovery.c at %s" % here)
    alde = aldebaran_versions(disc)

    rows, sources = [], []
    for target, gc, nbio, stem, seg_src, evidence in TARGETS:
        if target == "gfx90a" and (alde.get("GC") != gc or alde.get("NBIO") != nbio):
            sys.exit("amdgpu_discovery.c CHIP_ALDEBARAN: %s, expected GC %s NBIO %s"
                     % (alde, gc, nbio))
        picked = discovery_funcs(disc, nbio)
        if picked != stem:
            sys.exit("%s: NBIO %s selects %s, expected %s" % (target, nbio, picked, stem))
        src = show(AMDGPU + stem + ".c")
        req, done, masks, off_h, msk_h = nbio_source(src, stem)
        offs = defines(show("drivers/gpu/drm/amd/include/asic_reg/" + off_h))

        aliased = []
        for role, reg in (("hdp_flush_req", req), ("hdp_flush_done", done)):
            off, idx = offs[reg], offs[reg + "_BASE_IDX"]
            if seg_src == "discovery":
                seg = DISCOVERY_SEG.get(idx)
                if seg is None:
                    sys.exit("%s: %s has BASE_IDX %d, no known discovery base" % (target, reg, idx))
            else:
                seg = ip_offset_seg(show(INCLUDE + seg_src), idx)
                if seg is None:
                    sys.exit("%s: no NBIO_BASE__INST0_SEG%d in %s" % (target, idx, seg_src))
            dword = seg + off
            # Where the header has the config-space alias of the register, it must agree.
            alias = "cfgBIF_BX_PF_GPU_HDP_FLUSH_" + role.split("_")[-1].upper()
            if alias in offs:
                if (offs[alias] & 0xFFFFF) != dword * 4:
                    sys.exit("%s: %s = %#x disagrees with %#x" % (target, alias, offs[alias],
                                                                  dword))
                aliased.append("%s = %#x" % (alias, offs[alias]))
            rows.append((target, nbio, role, reg, "%#x" % off, str(idx), "%#x" % seg, seg_src,
                         "%#x" % dword))

        mtext = show("drivers/gpu/drm/amd/include/asic_reg/" + msk_h)
        mname = os.path.basename(msk_h)
        morigin = "%s:%s" % (here, INCLUDE + "asic_reg/" + msk_h)
        if mtext is None and mname in mask_files:
            mtext, morigin = mask_files[mname]
        if mtext is None:
            print("%s: %s not in the tree and not given: no mask rows" % (target, mname),
                  file=sys.stderr)
            mvals = {}
        else:
            mvals = defines(mtext)
        for role in MASK_ROLES:
            macro = masks.get(role)
            if macro is None:
                sys.exit("%s.c sets no %s" % (stem, role))
            if macro in mvals:
                rows.append((target, nbio, role, macro, "-", "-", "-", "-",
                             "%#x" % mvals[macro]))
            elif mvals:
                sys.exit("%s: %s not defined in %s" % (target, macro, mname))
        sources.append("# %s: GC %s, NBIO %s (%s); %s.c + %s + %s (%s); segment base: %s%s"
                       % (target, gc, nbio, evidence, stem, os.path.basename(off_h), mname,
                          morigin if mtext is not None else "not read: no mask rows", seg_src,
                          "; agrees with " + ", ".join(aliased) if aliased else ""))

    path = os.path.join(a.out, "linux_nbio_hdp.tsv")
    with open(path, "w") as f:
        f.write("# generated by scripts/extract-nbio-hdp.py; do not edit\n")
        f.write("# source: %s drivers/gpu/drm/amd/amdgpu/{amdgpu_discovery.c,nbio_v*.c,"
                "nbif_v*.c}, drivers/gpu/drm/amd/include/{asic_reg/nbio,asic_reg/nbif,"
                "*_ip_offset.h}\n" % here)
        for s in sources:
            f.write(s + "\n")
        f.write("# hdp_flush_req/done rows: offset + segment base [BASE_IDX] = dword (the "
                "register's dword address, what SOC15_REG_OFFSET returns); segment source "
                "'discovery': the ASIC's bases come from the VBIOS IP-discovery table at run "
                "time, 0xd20 is segment 2 of every *_ip_offset.h NBIO_BASE (see the script)\n")
        f.write("# ref_and_mask rows: the nbio_hdp_flush_reg field, its macro and value "
                "(SDMA ring me N uses sdma0 << N; compute MEC1 pipe P cp2 << P, MEC2 cp6 << P)\n")
        f.write("# columns: target\tnbio\trole\tsymbol\toffset\tbase_idx\tsegment_base\t"
                "segment_source\tvalue\n")
        for r in rows:
            f.write("\t".join(r) + "\n")
    print("wrote %s (%d rows)" % (path, len(rows)))


if __name__ == "__main__":
    main()
