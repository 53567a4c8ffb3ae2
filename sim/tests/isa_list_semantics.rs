//! Semantics of the instructions added to close the gaps of LLVM's instruction list
//! (`isa-list/`): each program runs one wave and stores what it computed; the expected values
//! come from AMD's ISA documents (the "MI200"/"MI300" CDNA2/CDNA3 ISA guides for gfx90a and
//! gfx942, the RDNA3/RDNA4 guides for gfx1100/gfx1201), quoted beside each test. The programs
//! are assembled with `llvm-mc-19 -arch=amdgcn -mcpu=<target> -show-encoding` (the source is
//! beside each), so the test needs no LLVM.

use hcq_sim::isa::{FlatMemory, FloatMode, Isa, Launch, ScratchSetup, run};

const MEM: usize = 0x10_0000;
const CODE: u64 = 0x8_0000;
/// Where the programs store their results (s[0:1] holds it).
const OUT: u64 = 0x1000;
/// Memory the programs read and write (s[2:3] holds it; buffer descriptors point at it).
const DATA: u64 = 0x2000;

/// Runs `code` in one wave of `isa` (wave64 on gfx9, wave32 else) with s[0:1] = OUT,
/// s[2:3] = DATA, s[4:7] = a raw buffer descriptor over DATA (NUM_RECORDS 0x1000) and then
/// `user`; `data` is written at DATA first. Returns `n` dwords from OUT and the memory.
fn run_wave(
    isa: Isa,
    code: &[u32],
    data: &[u32],
    user: &[u32],
    n: usize,
) -> (Vec<u32>, FlatMemory) {
    let gfx9 = isa == Isa::Gfx9;
    let mem = FlatMemory::new(0, MEM);
    let bytes: Vec<u8> = code.iter().flat_map(|w| w.to_le_bytes()).collect();
    mem.poke(CODE, &bytes).unwrap();
    let d: Vec<u8> = data.iter().flat_map(|w| w.to_le_bytes()).collect();
    mem.poke(DATA, &d).unwrap();
    // Word 3: the drivers' raw-buffer formats (32-bit data, 32-bit numeric format).
    let word3 = if gfx9 { 0x0002_7FAC } else { 0x3101_6FAC };
    let mut sgprs = vec![OUT as u32, 0, DATA as u32, 0, DATA as u32, 0, 0x1000, word3];
    sgprs.extend_from_slice(user);
    let lanes = if gfx9 { 64 } else { 32 };
    let l = Launch {
        isa,
        pgm: CODE,
        wave64: gfx9,
        // CAST: at most 16 user SGPRs here.
        rsrc2: (sgprs.len() as u32) << 1,
        user_sgprs: sgprs,
        local: [lanes, 1, 1],
        groups: [1, 1, 1],
        lds_bytes: 0x1000,
        vgprs: 64,
        accum_offset: 32,
        scratch: ScratchSetup::default(),
        scratch_waves: 0,
        float: FloatMode {
            denorm32: true,
            denorm16_64: true,
        },
        budget: 1 << 16,
        clock: 0,
    };
    run(&l, &mem).unwrap();
    (words(&mem, OUT, n), mem)
}

fn words(mem: &FlatMemory, at: u64, n: usize) -> Vec<u32> {
    let mut b = vec![0u8; n * 4];
    mem.peek(at, &mut b).unwrap();
    b.chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

#[test]
fn gfx9_cmp_class_f16_and_cmpx_writing_its_sgpr_pair() {
    // CDNA3 ISA 12.8 (VOPC): V_CMP_CLASS_F16 tests the class of S0.f16 against the mask in
    // S1 (bit 0 signaling NaN, 1 quiet NaN, 2 -inf, 3 -normal, 4 -denormal, 5 -0, 6 +0,
    // 7 +denormal, 8 +normal, 9 +inf); only the low 16 bits of S0 are the half. On gfx9
    // V_CMPX_* writes EXEC and its destination (VCC or, in VOP3, the SGPR pair).
    //
    //   v_mov_b32 v1, 1 / v_mov_b32 v2, 0x80 / v_cmp_class_f16_e32 vcc, v1, v2 / s_mov_b32 s6, vcc_lo
    //   (0x7e00 mask 2 -> s7; 0x7e00 mask 1 -> s8; 0x7c01 mask 1 -> s9; 0xfc00 mask 4 -> s10;
    //    0x8000 mask 0x20 -> s11; 0x12343c00 mask 0x100 -> s12)
    //   s_movk_i32 s13, 0x80 / v_cmp_class_f16_e64 s[14:15], v1, s13
    //   v_cmpx_gt_u32_e64 s[4:5], 4, v0 / s_mov_b64 s[16:17], exec / s_mov_b64 exec, 1
    //   v_mov_b32 v4..v15, s4 s5 s6 .. s12 s14 s16 s17 / global_store_dwordx4 (OUT)
    let code = [
        0x7E020281, 0x7E0402FF, 0x00000080, 0x7C280501, 0xBE86006A, 0x7E0202FF, 0x00007E00,
        0x7E040282, 0x7C280501, 0xBE87006A, 0x7E040281, 0x7C280501, 0xBE88006A, 0x7E0202FF,
        0x00007C01, 0x7C280501, 0xBE89006A, 0x7E0202FF, 0x0000FC00, 0x7E040284, 0x7C280501,
        0xBE8A006A, 0x7E0202FF, 0x00008000, 0x7E0402A0, 0x7C280501, 0xBE8B006A, 0x7E0202FF,
        0x12343C00, 0x7E0402FF, 0x00000100, 0x7C280501, 0xBE8C006A, 0xB00D0080, 0xD014000E,
        0x00001B01, 0xD0DC0004, 0x00020084, 0xBE90017E, 0xBEFE0181, 0x7E080204, 0x7E0A0205,
        0x7E0C0206, 0x7E0E0207, 0x7E100208, 0x7E120209, 0x7E14020A, 0x7E16020B, 0x7E18020C,
        0x7E1A020E, 0x7E1C0210, 0x7E1E0211, 0x7E060280, 0xDC7C8000, 0x00000403, 0xDC7C8010,
        0x00000803, 0xDC7C8020, 0x00000C03, 0xBF810000,
    ];
    let (got, _) = run_wave(Isa::Gfx9, &code, &[], &[], 12);
    let all = u32::MAX;
    assert_eq!(
        got,
        [0xf, 0, all, all, 0, all, all, all, all, 0, 0xf, 0],
        "s4 s5 (cmpx's pair), +denorm, qnan, qnan-as-snan, snan, -inf, -0, +normal, \
         +normal-as-denorm, exec"
    );
}
