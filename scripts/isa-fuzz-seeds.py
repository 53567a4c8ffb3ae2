#!/usr/bin/env python3
"""Writes the `isa` fuzz target's seeds from the instruction list: one seed per target and
family (fuzz/corpus/isa/list-<target>-<family>) holding every listed encoding of that family,
so the fuzzer starts from each decode path LLVM knows (DPP, SDWA, VOPD, MFMA, WMMA, ...)
instead of having to find them. The fuzz target picks the ISA from the code's length in words
(mod 3: gfx9, gfx11, gfx12) and the chip from header bit 0x20 of byte 1 (set: gfx90a), so
each seed is padded with s_nop to the right length. Rerun after sim/isa-list/*.tsv changes:

    python3 scripts/isa-fuzz-seeds.py
"""
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parent.parent
LIST = ROOT / "sim" / "isa-list"
OUT = ROOT / "fuzz" / "corpus" / "isa"
# target -> (length mod 3, header byte 1)
TARGETS = {"gfx90a": (0, 0x20), "gfx942": (0, 0x00), "gfx1100": (1, 0x00), "gfx1201": (2, 0x00)}
S_NOP = 0xBF800000  # s_nop 0 on every family
S_ENDPGM = {"gfx90a": 0xBF810000, "gfx942": 0xBF810000, "gfx1100": 0xBFB00000, "gfx1201": 0xBFB00000}


def main() -> None:
    for old in OUT.glob("list-*"):
        old.unlink()
    for target, (mod, h1) in TARGETS.items():
        fams: dict[str, list[int]] = {}
        for line in (LIST / f"{target}.tsv").read_text().splitlines():
            if line.startswith("#") or not line.strip():
                continue
            fam, _mn, words, _text = line.split("\t", 3)
            fams.setdefault(fam, []).extend(int(w, 16) for w in words.split())
        for fam, words in sorted(fams.items()):
            words = words + [S_ENDPGM[target]]
            while len(words) % 3 != mod:
                words.insert(0, S_NOP)
            # Header: wave64 (bit 0) with 63 lanes, chip byte, one workgroup, 1 KiB LDS and 16 VGPRs.
            head = bytes([0x7F, h1, 0x00, 0x22])
            body = b"".join(w.to_bytes(4, "little") for w in words)
            name = re.sub(r"[^A-Za-z0-9_]", "_", fam)
            (OUT / f"list-{target}-{name}").write_bytes(head + body)


if __name__ == "__main__":
    main()
