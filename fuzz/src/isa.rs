//! `isa` target: arbitrary instruction words through the decoders and disassemblers of every
//! chip (gfx90a, gfx940, gfx11, gfx12) and the interpreter. The
//! first 4 bytes choose the launch (wave size, work-items, LDS, scratch, float mode, user
//! SGPRs, the gfx9 chip); the rest is machine code at the program address, followed by zeros.
//! Every input either runs to `s_endpgm` or stops with an [`IsaError`]; nothing may panic.
//! The seeds `corpus/isa/list-<target>-<family>` hold every encoding of the instruction list
//! (`scripts/isa-fuzz-seeds.py`), so each decode path LLVM knows is a starting point.

use hcq_sim::isa::{FlatMemory, FloatMode, Isa, Launch, ScratchSetup, decode, disasm, run};

const BASE: u64 = 0x1_0000;
const LEN: usize = 0x2_0000;
const CODE: u64 = BASE;
const SCRATCH: u64 = BASE + 0x1_0000;

/// Runs one input.
pub fn run_input(data: &[u8]) {
    let (head, code) = data.split_at(data.len().min(4));
    let h = |i: usize| head.get(i).copied().unwrap_or(0);
    // Every word through the decoder on its own (with the next words as literal/second word).
    let words: Vec<u32> = code
        .chunks(4)
        .map(|c| {
            let mut b = [0u8; 4];
            b[..c.len()].copy_from_slice(c);
            u32::from_le_bytes(b)
        })
        .collect();
    for k in 0..words.len() {
        let w = |j: usize| words.get(k + j).copied().unwrap_or(0);
        for (isa, gfx940) in [
            (Isa::Gfx9, false),
            (Isa::Gfx9, true),
            (Isa::Gfx11, true),
            (Isa::Gfx12, true),
        ] {
            if let Ok(i) = decode::decode_for(isa, gfx940, &[w(0), w(1), w(2)]) {
                let _ = disasm::disasm_target(isa, gfx940, &i, h(0) & 1 == 1);
            }
        }
    }
    let mem = FlatMemory::new(BASE, LEN);
    let code = code.get(..code.len().min(0x8000)).unwrap_or_default();
    if mem.poke(CODE, code).is_err() {
        return;
    }
    let wave64 = h(0) & 1 == 1;
    let lanes = u32::from(h(0) >> 1).max(1);
    // The ISA from the code's length (seeds are gfx11 code; mutations reach the others).
    let isa = match code.len() / 4 % 3 {
        0 => Isa::Gfx9,
        1 => Isa::Gfx11,
        _ => Isa::Gfx12,
    };
    let l = Launch {
        isa,
        // Header bit 0x20 of byte 1: gfx90a's decoding of the gfx9 words that differ.
        gfx940: h(1) & 0x20 == 0,
        pgm: CODE,
        wave64: wave64 || isa == Isa::Gfx9,
        // s[0:1] point into the block (so loads and stores can hit memory), s2.. = h.
        user_sgprs: vec![(BASE + 0x8000) as u32, 0, u32::from(h(1)), u32::from(h(2))],
        rsrc2: (4 << 1) | (1 << 7) | (u32::from(h(1) & 3) << 11) | u32::from(h(1) >> 7),
        local: [lanes, 1 + u32::from(h(2) & 1), 1],
        groups: [1 + u32::from(h(2) >> 6), 1, 1],
        lds_bytes: u32::from(h(3) & 0xf) * 512,
        vgprs: 8 * (1 + u32::from(h(3) >> 5)),
        scratch: ScratchSetup {
            base: SCRATCH,
            wave_bytes: if h(3) & 0x10 != 0 { 0x1000 } else { 0 },
        },
        scratch_waves: 2,
        accum_offset: 4 * (1 + u32::from(h(3) & 7)),
        float: FloatMode::from_rsrc1(u32::from(h(2) & 0x3c) << 14),
        budget: 4000,
        clock: 1,
        xcc: Default::default(),
    };
    let _ = run(&l, &mem);
}
