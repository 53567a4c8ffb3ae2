//! Cases from tinygrad's hardware-validated ISA suite (test/amd/hw at the commit of the 0.14.0
//! wheel: each test's instruction sequence runs on a gfx1100 and its registers are compared
//! with the emulator's; the suite's header says they pass on real hardware), ported so that
//! CI checks hcq-sim against what the GPU computed without a tinygrad checkout. The harness
//! is written after the suite's own (helpers.py): a prologue that keeps s[0:1] in s[80:81],
//! the work-item id in v255 and zeroes v0-v15, s0-s15 and VCC_LO (never SCC), the test's body,
//! then an epilogue that records VCC_LO and SCC (`s_cselect_b32 s91, 1, 0`), EXEC, v0-v15 of
//! every lane and s0-s15. Programs are assembled with `llvm-mc-19 -arch=amdgcn -mcpu=gfx1100`
//! (the body's source beside each); the e32 forms with 16-bit high-half operands, which LLVM 19
//! cannot write, are encoded by hand from the VOP1/VOP2/VOPC layouts (the source says which).
//! Each test names the tinygrad tests it carries over.

use hcq_sim::isa::{FlatMemory, FloatMode, Isa, Launch, ScratchSetup, run};

const MEM: usize = 0x10_0000;
const CODE: u64 = 0x8_0000;
/// Where the epilogue stores the state: v{r} of lane l at OUT + (32 r + l) * 4, s0-s15 at
/// OUT + 2048, then VCC_LO, SCC, EXEC_LO.
const OUT: u64 = 0x1000;

/// The prologue: s_mov_b32 s80, s0 / s_mov_b32 s81, s1 / v_mov_b32 v255, v0 /
/// v_mov_b32 v0..v15, 0 / s_mov_b32 s0..s15, 0 / s_mov_b32 vcc_lo, 0.
const PROLOGUE: &[u32] = &[
    0xBED00000, 0xBED10001, 0x7FFE0300, 0x7E000280, 0x7E020280, 0x7E040280, 0x7E060280, 0x7E080280,
    0x7E0A0280, 0x7E0C0280, 0x7E0E0280, 0x7E100280, 0x7E120280, 0x7E140280, 0x7E160280, 0x7E180280,
    0x7E1A0280, 0x7E1C0280, 0x7E1E0280, 0xBE800080, 0xBE810080, 0xBE820080, 0xBE830080, 0xBE840080,
    0xBE850080, 0xBE860080, 0xBE870080, 0xBE880080, 0xBE890080, 0xBE8A0080, 0xBE8B0080, 0xBE8C0080,
    0xBE8D0080, 0xBE8E0080, 0xBE8F0080, 0xBEEA0080,
];

/// The epilogue: s_mov_b32 s90, vcc_lo / s_cselect_b32 s91, 1, 0 / s_mov_b32 s95, exec_lo /
/// s_mov_b32 exec_lo, -1 / v_mbcnt_lo_u32_b32 v240, -1, 0 / v_lshlrev_b32 v240, 2, v240 /
/// global_store_b32 v240, v{r}, s[80:81] offset:128*r (r = 0..15) / s_mov_b32 exec_lo, 1 /
/// v_mov_b32 v241, 0 / (v_mov_b32 v243, s{k} / global_store_b32 v241, v243, s[80:81]
/// offset:2048+4*k) for s0..s15, s90, s91, s95 / s_waitcnt_vscnt null, 0 / s_endpgm.
const EPILOGUE: &[u32] = &[
    0xBEDA006A, 0x985B8081, 0xBEDF007E, 0xBEFE00C1, 0xD71F00F0, 0x000100C1, 0x31E1E082, 0xDC6A0000,
    0x005000F0, 0xDC6A0080, 0x005001F0, 0xDC6A0100, 0x005002F0, 0xDC6A0180, 0x005003F0, 0xDC6A0200,
    0x005004F0, 0xDC6A0280, 0x005005F0, 0xDC6A0300, 0x005006F0, 0xDC6A0380, 0x005007F0, 0xDC6A0400,
    0x005008F0, 0xDC6A0480, 0x005009F0, 0xDC6A0500, 0x00500AF0, 0xDC6A0580, 0x00500BF0, 0xDC6A0600,
    0x00500CF0, 0xDC6A0680, 0x00500DF0, 0xDC6A0700, 0x00500EF0, 0xDC6A0780, 0x00500FF0, 0xBEFE0081,
    0x7FE20280, 0x7FE60200, 0xDC6A0800, 0x0050F3F1, 0x7FE60201, 0xDC6A0804, 0x0050F3F1, 0x7FE60202,
    0xDC6A0808, 0x0050F3F1, 0x7FE60203, 0xDC6A080C, 0x0050F3F1, 0x7FE60204, 0xDC6A0810, 0x0050F3F1,
    0x7FE60205, 0xDC6A0814, 0x0050F3F1, 0x7FE60206, 0xDC6A0818, 0x0050F3F1, 0x7FE60207, 0xDC6A081C,
    0x0050F3F1, 0x7FE60208, 0xDC6A0820, 0x0050F3F1, 0x7FE60209, 0xDC6A0824, 0x0050F3F1, 0x7FE6020A,
    0xDC6A0828, 0x0050F3F1, 0x7FE6020B, 0xDC6A082C, 0x0050F3F1, 0x7FE6020C, 0xDC6A0830, 0x0050F3F1,
    0x7FE6020D, 0xDC6A0834, 0x0050F3F1, 0x7FE6020E, 0xDC6A0838, 0x0050F3F1, 0x7FE6020F, 0xDC6A083C,
    0x0050F3F1, 0x7FE6025A, 0xDC6A0840, 0x0050F3F1, 0x7FE6025B, 0xDC6A0844, 0x0050F3F1, 0x7FE6025F,
    0xDC6A0848, 0x0050F3F1, 0xBC7C0000, 0xBFB00000,
];

/// The recorded state.
struct St {
    vgpr: Vec<u32>,
    s: [u32; 16],
    vcc: u32,
    scc: u32,
    exec: u32,
}

impl St {
    /// v{r} of lane `lane`.
    fn v(&self, r: usize, lane: usize) -> u32 {
        self.vgpr[r * 32 + lane]
    }
}

fn f(x: u32) -> f32 {
    f32::from_bits(x)
}

/// Runs `body` between the prologue and the epilogue as one wave32 of `lanes` work-items on
/// gfx11 (256 VGPRs, 64 KiB of LDS, denormals kept: the suite's kernel descriptor).
fn exec(body: &[u32], lanes: u32) -> St {
    let mem = FlatMemory::new(0, MEM);
    let code: Vec<u8> = PROLOGUE
        .iter()
        .chain(body)
        .chain(EPILOGUE)
        .flat_map(|w| w.to_le_bytes())
        .collect();
    mem.poke(CODE, &code).unwrap();
    let l = Launch {
        isa: Isa::Gfx11,
        gfx940: false,
        pgm: CODE,
        wave64: false,
        user_sgprs: vec![OUT as u32, 0],
        // USER_SGPR_COUNT 2.
        rsrc2: 2 << 1,
        local: [lanes, 1, 1],
        groups: [1, 1, 1],
        lds_bytes: 0x1_0000,
        vgprs: 256,
        accum_offset: 0,
        scratch: ScratchSetup::default(),
        scratch_waves: 0,
        float: FloatMode {
            denorm32: true,
            denorm16_64: true,
        },
        budget: 1 << 16,
        clock: 0,
        xcc: Default::default(),
    };
    run(&l, &mem).unwrap();
    let mut b = vec![0u8; 2048 + 76];
    mem.peek(OUT, &mut b).unwrap();
    let w: Vec<u32> = b
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    let mut s = [0u32; 16];
    s.copy_from_slice(&w[512..528]);
    St {
        vgpr: w[..512].to_vec(),
        s,
        vcc: w[528],
        scc: w[529],
        exec: w[530],
    }
}

#[test]
fn a_wave_starts_with_scc_clear_and_exec_its_live_lanes() {
    // helpers.py: every test's prologue leaves SCC alone and its epilogue records it with s_cselect_b32;
    // the suite passes on gfx1100 with SCC 0 after an SCC-neutral body (test_vop1.py test_v_mov_b32 and the rest).
    //
    //   v_mov_b32 v1, 5
    let body = [0x7E020285];
    let st = exec(&body, 1);
    assert_eq!(st.scc, 0, "SCC at the body");
    assert_eq!(st.exec, 1);
    assert_eq!(st.v(1, 0), 5);
}

#[test]
fn a_full_wave32_starts_with_scc_clear() {
    // helpers.py (n_lanes=32): SCC 0, EXEC all 32 lanes.
    //
    let st = exec(&[], 32);
    assert_eq!(st.scc, 0);
    assert_eq!(st.exec, 0xffff_ffff);
    assert_eq!(st.vcc, 0);
}

#[test]
fn scc_reads_what_a_compare_wrote() {
    // test_sop.py test_scc_from_s_cmp: s_cmp_eq_u32 equal sets SCC (the harness reads SCC back).
    //
    //   s_mov_b32 s0, 42
    //   s_cmp_eq_u32 s0, 42
    let body = [0xBE8000AA, 0xBF06AA00];
    let st = exec(&body, 1);
    assert_eq!(st.scc, 1);
}

#[test]
fn v_sin_and_cos_of_a_large_whole_number_of_turns_are_sin_and_cos_of_zero() {
    // test_vop1.py test_v_sin_f32_large, test_v_cos_f32_large: 132000.0 turns.
    //
    //   s_mov_b32 s0, 0x4800e800
    //   v_mov_b32 v0, s0
    //   v_sin_f32 v1, v0
    //   v_cos_f32 v2, v0
    let body = [0xBE8000FF, 0x4800E800, 0x7E000200, 0x7E026B00, 0x7E046D00];
    let st = exec(&body, 1);
    assert!(f(st.v(1, 0)).abs() < 0.005, "sin {}", f(st.v(1, 0)));
    assert!((f(st.v(2, 0)) - 1.0).abs() < 0.005, "cos {}", f(st.v(2, 0)));
}

#[test]
fn v_sin_of_a_quarter_turn_is_one() {
    // test_vop1.py test_v_sin_f32_quarter.
    //
    //   s_mov_b32 s0, 0x3e800000
    //   v_mov_b32 v0, s0
    //   v_sin_f32 v1, v0
    let body = [0xBE8000FF, 0x3E800000, 0x7E000200, 0x7E026B00];
    let st = exec(&body, 1);
    assert!((f(st.v(1, 0)) - 1.0).abs() < 1e-4);
}

#[test]
fn e32_v_cvt_f32_f16_reads_the_high_half_of_v128_minus_128() {
    // test_vop1.py test_v_cvt_f32_f16_src_lo_vs_hi: v_cvt_f32_f16_e32 v2, v128 reads v0.h.
    //
    //   s_mov_b32 s0, 0x40003c00
    //   v_mov_b32 v0, s0
    //   v_cvt_f32_f16 v1, v0
    //   v_cvt_f32_f16_e32 v2, v0.h  (by hand)
    let body = [0xBE8000FF, 0x40003C00, 0x7E000200, 0x7E021700, 0x7E041780];
    let st = exec(&body, 1);
    assert_eq!(f(st.v(1, 0)), 1.0);
    assert_eq!(f(st.v(2, 0)), 2.0);
}

#[test]
fn e32_v_add_f16_reads_and_writes_high_halves() {
    // test_vop2.py test_v_add_f16_e32_vsrc1_hi_half, _vdst_hi_half, _both_hi_half.
    //
    //   s_mov_b32 s0, 0x40003c00
    //   v_mov_b32 v0, s0
    //   v_add_f16_e32 v1, v0.l, v0.h  (by hand)
    //   s_mov_b32 s2, 0xbeef
    //   v_mov_b32 v2, s2
    //   s_mov_b32 s3, 0x3c00
    //   v_mov_b32 v3, s3
    //   s_mov_b32 s4, 0x4000
    //   v_mov_b32 v4, s4
    //   v_add_f16_e32 v2.h, v3.l, v4.l  (by hand)
    //   s_mov_b32 s5, 0xcafe
    //   v_mov_b32 v5, s5
    //   v_add_f16_e32 v5.h, v3.l, v0.h  (by hand)
    let body = [
        0xBE8000FF, 0x40003C00, 0x7E000200, 0x64030100, 0xBE8200FF, 0x0000BEEF, 0x7E040202,
        0xBE8300FF, 0x00003C00, 0x7E060203, 0xBE8400FF, 0x00004000, 0x7E080204, 0x65040903,
        0xBE8500FF, 0x0000CAFE, 0x7E0A0205, 0x650B0103,
    ];
    let st = exec(&body, 1);
    assert_eq!(st.v(1, 0) & 0xffff, 0x4200);
    assert_eq!(st.v(2, 0), 0x4200_beef);
    assert_eq!(st.v(5, 0), 0x4200_cafe);
}

#[test]
fn e32_v_mul_f16_reads_a_high_half_src0() {
    // test_vop2.py test_v_mul_f16_e32_src0_hi_half, test_v_mul_f16_e32_vsrc1_hi_half.
    //
    //   s_mov_b32 s0, 0x40003c00
    //   v_mov_b32 v0, s0
    //   s_mov_b32 s1, 0x4200
    //   v_mov_b32 v1, s1
    //   v_mul_f16_e32 v2.l, v0.h, v1.l  (by hand)
    //   s_mov_b32 s3, 0x42004000
    //   v_mov_b32 v3, s3
    //   v_mul_f16_e32 v4.l, v3.l, v3.h  (by hand)
    let body = [
        0xBE8000FF, 0x40003C00, 0x7E000200, 0xBE8100FF, 0x00004200, 0x7E020201, 0x6A040380,
        0xBE8300FF, 0x42004000, 0x7E060203, 0x6A090703,
    ];
    let st = exec(&body, 1);
    assert_eq!(st.v(2, 0) & 0xffff, 0x4600);
    assert_eq!(st.v(4, 0) & 0xffff, 0x4600);
}

#[test]
fn e32_v_fmac_f16_accumulates_into_the_half_it_writes() {
    // test_vop2.py test_v_fmac_f16_e32_vsrc1_hi_half, test_v_fmac_f16_e32_vdst_hi_half.
    //
    //   s_mov_b32 s0, 0x40003c00
    //   v_mov_b32 v0, s0
    //   s_mov_b32 s1, 0x4200
    //   v_mov_b32 v1, s1
    //   v_fmac_f16_e32 v1.l, v0.l, v0.h  (by hand)
    //   s_mov_b32 s2, 0x3800dead
    //   v_mov_b32 v2, s2
    //   s_mov_b32 s3, 0x4000
    //   v_mov_b32 v3, s3
    //   s_mov_b32 s4, 0x4200
    //   v_mov_b32 v4, s4
    //   v_fmac_f16_e32 v2.h, v3.l, v4.l  (by hand)
    let body = [
        0xBE8000FF, 0x40003C00, 0x7E000200, 0xBE8100FF, 0x00004200, 0x7E020201, 0x6C030100,
        0xBE8200FF, 0x3800DEAD, 0x7E040202, 0xBE8300FF, 0x00004000, 0x7E060203, 0xBE8400FF,
        0x00004200, 0x7E080204, 0x6D040903,
    ];
    let st = exec(&body, 1);
    assert_eq!(st.v(1, 0) & 0xffff, 0x4500);
    assert_eq!(st.v(2, 0), 0x4680_dead);
}

#[test]
fn e32_v_cmp_f16_compares_high_halves() {
    // test_vopc.py test_v_cmp_eq_f16_vsrc1_hi_equal, test_v_cmp_neq_f16_vsrc1_hi, test_v_cmp_eq_f16_src0_hi,
    // test_v_cmp_f16_multilane (lane 1 false).
    //
    //   s_mov_b32 s0, 0x42004200
    //   v_mov_b32 v0, s0
    //   v_cmp_eq_f16_e32 vcc_lo, v0.l, v0.h  (by hand)
    //   s_mov_b32 s6, vcc_lo
    //   s_mov_b32 s0, 0x40003c00
    //   v_mov_b32 v0, s0
    //   v_cmp_lg_f16_e32 vcc_lo, v0.l, v0.h  (by hand)
    //   s_mov_b32 s7, vcc_lo
    //   s_mov_b32 s0, 0x42003c00
    //   v_mov_b32 v0, s0
    //   s_mov_b32 s1, 0x47004200
    //   v_mov_b32 v1, s1
    //   v_cmp_eq_f16_e32 vcc_lo, v0.h, v1.l  (by hand)
    //   s_mov_b32 s8, vcc_lo
    //   v_mov_b32 v0, 0x40003c00
    //   v_cmp_eq_u32 vcc_lo, 1, v255
    //   v_cndmask_b32_e64 v0, v0, 0x3c004000, vcc_lo
    //   v_cmp_lt_f16_e32 vcc_lo, v0.l, v0.h  (by hand)
    let body = [
        0xBE8000FF, 0x42004200, 0x7E000200, 0x7C050100, 0xBE86006A, 0xBE8000FF, 0x40003C00,
        0x7E000200, 0x7C0B0100, 0xBE87006A, 0xBE8000FF, 0x42003C00, 0x7E000200, 0xBE8100FF,
        0x47004200, 0x7E020201, 0x7C040380, 0xBE88006A, 0x7E0002FF, 0x40003C00, 0x7C95FE81,
        0xD5010000, 0x01A9FF00, 0x3C004000, 0x7C030100,
    ];
    let st = exec(&body, 2);
    assert_eq!(st.s[6] & 1, 1, "3.0 == 3.0");
    assert_eq!(st.s[7] & 1, 1, "1.0 != 2.0");
    assert_eq!(st.s[8] & 1, 1, "v0.h 3.0 == v1.l 3.0");
    assert_eq!(st.vcc & 3, 1, "lane 0 1.0 < 2.0, lane 1 2.0 < 1.0");
}

#[test]
fn vop3_v_cmp_u16_op_sel_compares_high_halves() {
    // test_vopc.py test_cmp_eq_u16_opsel_hi_hi, test_cmp_gt_u16_opsel_hi.
    //
    //   s_mov_b32 s2, 0x00051234
    //   v_mov_b32 v0, s2
    //   s_mov_b32 s2, 0x0005abcd
    //   v_mov_b32 v1, s2
    //   v_cmp_eq_u16_e64 s0, v0, v1 op_sel:[1,1]  (op_sel set by hand)
    //   s_mov_b32 s2, 0x99990005
    //   v_mov_b32 v2, s2
    //   s_mov_b32 s2, 0x12340005
    //   v_mov_b32 v3, s2
    //   v_cmp_gt_u16_e64 s1, v2, v3 op_sel:[1,1]  (op_sel set by hand)
    let body = [
        0xBE8200FF, 0x00051234, 0x7E000202, 0xBE8200FF, 0x0005ABCD, 0x7E020202, 0xD43A1800,
        0x00020300, 0xBE8200FF, 0x99990005, 0x7E040202, 0xBE8200FF, 0x12340005, 0x7E060202,
        0xD43C1801, 0x00020702,
    ];
    let st = exec(&body, 1);
    assert_eq!(st.s[0] & 1, 1, "5 == 5");
    assert_eq!(st.s[1] & 1, 1, "0x9999 > 0x1234");
}

#[test]
fn omod_is_ignored_in_ieee_mode() {
    // test_vop3.py test_omod_ignored: v_add_f32_e64 3.0 + 1.0 mul:2 gives 4.0.
    //
    //   v_mov_b32 v0, 0x40400000
    //   v_add_f32_e64 v1, v0, 1.0 mul:2
    let body = [0x7E0002FF, 0x40400000, 0xD5030001, 0x0801E500];
    let st = exec(&body, 1);
    assert_eq!(f(st.v(1, 0)), 4.0);
}

#[test]
fn packed_f16_inline_constants_have_a_zero_high_half() {
    // test_vop3p.py test_v_pk_add_f16_with_inline_constant, test_v_pk_mul_f16_with_inline_constant.
    //
    //   s_mov_b32 s0, 0x3c003c00
    //   v_mov_b32 v0, s0
    //   v_pk_add_f16 v1, v0, 1.0
    //   s_mov_b32 s0, 0x44004200
    //   v_mov_b32 v2, s0
    //   v_pk_mul_f16 v3, v2, 2.0
    let body = [
        0xBE8000FF, 0x3C003C00, 0x7E000200, 0xCC0F4001, 0x1801E500, 0xBE8000FF, 0x44004200,
        0x7E040200, 0xCC104003, 0x1801E902,
    ];
    let st = exec(&body, 1);
    assert_eq!(st.v(1, 0), 0x3c00_4000, "lo 1+1, hi 1+0");
    assert_eq!(st.v(3, 0), 0x0000_4600, "lo 3*2, hi 4*0");
}

#[test]
fn packed_integer_ops_read_a_float_inline_constant_as_its_f32() {
    // test_vop3p.py test_v_pk_add_u16_float_inline_const_opsel: 2.0 is 0x40000000.
    //
    //   s_mov_b32 s0, 0x00030005
    //   v_mov_b32 v0, s0
    //   v_pk_add_u16 v1, v0, 2.0
    let body = [0xBE8000FF, 0x00030005, 0x7E000200, 0xCC0A4001, 0x1801E900];
    let st = exec(&body, 1);
    assert_eq!(st.v(1, 0), 0x4003_0005);
}

#[test]
fn s_mov_b64_of_inline_1_0_is_the_f64() {
    // test_sop.py test_s_mov_b64_float_const_1_0.
    //
    //   s_mov_b64 s[0:1], 1.0
    //   v_mov_b32 v0, s0
    //   v_mov_b32 v1, s1
    let body = [0xBE8001F2, 0x7E000200, 0x7E020201];
    let st = exec(&body, 1);
    assert_eq!((st.v(0, 0), st.v(1, 0)), (0, 0x3ff0_0000));
}

#[test]
fn v_div_scale_f32_edge_cases() {
    // test_vop3.py TestDivScale: no scaling (VCC 0, S0 back); zero denominator and zero numerator
    // (NaN, VCC 1); exponent difference >= 96 (denominator * 2^64, VCC 1); denormal denominator
    // (NaN, VCC 1); tiny numerator (* 2^64, VCC 1); a quotient that would be denormal (S0, VCC 1).
    //
    //   v_mov_b32 v0, 2.0
    //   v_mov_b32 v1, 4.0
    //   v_div_scale_f32 v2, vcc_lo, v0, v1, v0
    //   s_mov_b32 s2, vcc_lo
    //   v_mov_b32 v0, 1.0
    //   v_mov_b32 v1, 0
    //   v_div_scale_f32 v3, vcc_lo, v0, v1, v0
    //   s_mov_b32 s3, vcc_lo
    //   v_mov_b32 v0, 0
    //   v_mov_b32 v1, 1.0
    //   v_div_scale_f32 v4, vcc_lo, v0, v1, v0
    //   s_mov_b32 s4, vcc_lo
    //   v_mov_b32 v0, 0x7f7fffff
    //   v_mov_b32 v1, 1.0
    //   v_div_scale_f32 v5, vcc_lo, v1, v1, v0
    //   s_mov_b32 s5, vcc_lo
    //   v_mov_b32 v0, 1.0
    //   v_mov_b32 v1, 1
    //   v_div_scale_f32 v6, vcc_lo, v1, v1, v0
    //   s_mov_b32 s6, vcc_lo
    //   v_mov_b32 v0, 0x00800000
    //   v_mov_b32 v1, 1.0
    //   v_div_scale_f32 v7, vcc_lo, v0, v1, v0
    //   s_mov_b32 s7, vcc_lo
    //   v_mov_b32 v0, 1.0
    //   v_mov_b32 v1, 0x7f000000
    //   v_div_scale_f32 v8, vcc_lo, v0, v1, v0
    //   s_mov_b32 s8, vcc_lo
    let body = [
        0x7E0002F4, 0x7E0202F6, 0xD6FC6A02, 0x04020300, 0xBE82006A, 0x7E0002F2, 0x7E020280,
        0xD6FC6A03, 0x04020300, 0xBE83006A, 0x7E000280, 0x7E0202F2, 0xD6FC6A04, 0x04020300,
        0xBE84006A, 0x7E0002FF, 0x7F7FFFFF, 0x7E0202F2, 0xD6FC6A05, 0x04020301, 0xBE85006A,
        0x7E0002F2, 0x7E020281, 0xD6FC6A06, 0x04020301, 0xBE86006A, 0x7E0002FF, 0x00800000,
        0x7E0202F2, 0xD6FC6A07, 0x04020300, 0xBE87006A, 0x7E0002F2, 0x7E0202FF, 0x7F000000,
        0xD6FC6A08, 0x04020300, 0xBE88006A,
    ];
    let st = exec(&body, 1);
    assert_eq!((f(st.v(2, 0)), st.s[2] & 1), (2.0, 0), "no scaling");
    assert!(
        f(st.v(3, 0)).is_nan() && st.s[3] & 1 == 1,
        "zero denominator"
    );
    assert!(f(st.v(4, 0)).is_nan() && st.s[4] & 1 == 1, "zero numerator");
    assert_eq!(
        (f(st.v(5, 0)), st.s[5] & 1),
        (2f32.powi(64), 1),
        "exponent difference"
    );
    assert!(
        f(st.v(6, 0)).is_nan() && st.s[6] & 1 == 1,
        "denormal denominator"
    );
    assert_eq!(
        (st.v(7, 0), st.s[7] & 1),
        ((f32::MIN_POSITIVE * 2f32.powi(64)).to_bits(), 1),
        "tiny numerator"
    );
    assert_eq!((f(st.v(8, 0)), st.s[8] & 1), (1.0, 1), "denormal quotient");
}

#[test]
fn v_div_fixup_f32_edge_cases() {
    // test_vop3.py TestDivFixup: a NaN estimate gives the signed infinity; 1/-inf is -0; 0/0 NaN;
    // x/0 inf; the quotient's sign.
    //
    //   v_mov_b32 v0, 0x7fc00000
    //   v_mov_b32 v1, 1.0
    //   v_mov_b32 v2, 1.0
    //   v_div_fixup_f32 v3, v0, v1, v2
    //   v_mov_b32 v1, -1.0
    //   v_div_fixup_f32 v4, v0, v1, v2
    //   v_mov_b32 v0, 0
    //   v_mov_b32 v1, 0xff800000
    //   v_div_fixup_f32 v5, v0, v1, v2
    //   v_mov_b32 v0, 1.0
    //   v_mov_b32 v1, 0
    //   v_mov_b32 v2, 0
    //   v_div_fixup_f32 v6, v0, v1, v2
    //   v_mov_b32 v2, -1.0
    //   v_div_fixup_f32 v7, v0, v1, v2
    //   v_mov_b32 v0, 0x40400000
    //   v_mov_b32 v1, -2.0
    //   v_mov_b32 v2, 0x40c00000
    //   v_div_fixup_f32 v8, v0, v1, v2
    let body = [
        0x7E0002FF, 0x7FC00000, 0x7E0202F2, 0x7E0402F2, 0xD6270003, 0x040A0300, 0x7E0202F3,
        0xD6270004, 0x040A0300, 0x7E000280, 0x7E0202FF, 0xFF800000, 0xD6270005, 0x040A0300,
        0x7E0002F2, 0x7E020280, 0x7E040280, 0xD6270006, 0x040A0300, 0x7E0402F3, 0xD6270007,
        0x040A0300, 0x7E0002FF, 0x40400000, 0x7E0202F5, 0x7E0402FF, 0x40C00000, 0xD6270008,
        0x040A0300,
    ];
    let st = exec(&body, 1);
    assert_eq!(st.v(3, 0), 0x7f80_0000);
    assert_eq!(st.v(4, 0), 0xff80_0000);
    assert_eq!(st.v(5, 0), 0x8000_0000);
    assert!(f(st.v(6, 0)).is_nan());
    assert_eq!(st.v(7, 0), 0xff80_0000);
    assert_eq!(f(st.v(8, 0)), -3.0);
}

/// Runs `body` as one wave64 of 64 work-items on gfx11 (test_dpp.py's harness: v255 keeps the
/// work-item id, the epilogue stores v1 of every lane at OUT + 4 * lane) and returns v1.
///
///   prologue: v_mov_b32 v255, v0
///   epilogue: v_lshlrev_b32 v240, 2, v255 / global_store_b32 v240, v1, s[0:1] /
///             s_waitcnt_vscnt null, 0 / s_endpgm
fn exec64(body: &[u32]) -> Vec<u32> {
    let mem = FlatMemory::new(0, MEM);
    let code: Vec<u8> = [0x7FFE0300]
        .iter()
        .chain(body)
        .chain(&[0x31E1FE82, 0xDC6A0000, 0x000001F0, 0xBC7C0000, 0xBFB00000])
        .flat_map(|w| w.to_le_bytes())
        .collect();
    mem.poke(CODE, &code).unwrap();
    let l = Launch {
        isa: Isa::Gfx11,
        gfx940: false,
        pgm: CODE,
        wave64: true,
        user_sgprs: vec![OUT as u32, 0],
        rsrc2: 2 << 1,
        local: [64, 1, 1],
        groups: [1, 1, 1],
        lds_bytes: 0x1_0000,
        vgprs: 256,
        accum_offset: 0,
        scratch: ScratchSetup::default(),
        scratch_waves: 0,
        float: FloatMode {
            denorm32: true,
            denorm16_64: true,
        },
        budget: 1 << 16,
        clock: 0,
        xcc: Default::default(),
    };
    run(&l, &mem).unwrap();
    let mut b = vec![0u8; 256];
    mem.peek(OUT, &mut b).unwrap();
    b.chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// `v_or_b32_dpp v1, v0, v2 <ctrl> row_mask bank_mask bound_ctrl:1` (VOP2 v_or_b32 with src0
/// 0xfa; the DPP word: src0 v0, DPP_CTRL [16:8], BOUND_CTRL [19], BANK_MASK [27:24],
/// ROW_MASK [31:28]), as llvm-mc-19 encodes `v_or_b32_dpp v1, v0, v2 row_shl:1 row_mask:0x5
/// bank_mask:0xf bound_ctrl:1` = [0x380204fa, 0x5f090100].
fn or_dpp(ctrl: u32, row_mask: u32, bank_mask: u32) -> [u32; 2] {
    [
        0x3802_04FA,
        (row_mask << 28) | (bank_mask << 24) | (1 << 19) | (ctrl << 8),
    ]
}

/// test_dpp.py's TestDPP16._run_copy: v0 = 10 * lane + 3, optionally v1 = seed, v2 = 0, then
/// v1 = dpp(v0) | v2 under the control.
///
///   v_mul_u32_u24_e32 v0, 10, v255 / v_add_nc_u32_e32 v0, 3, v0 /
///   [v_mov_b32 v1, 0xdeadbeef] / v_mov_b32 v2, 0 / v_or_b32_dpp ...
fn dpp_copy(ctrl: u32, row_mask: u32, bank_mask: u32, seed: bool) -> Vec<u32> {
    let mut body = vec![0x1601FE8A, 0x4A000083];
    if seed {
        body.extend([0x7E0202FF, 0xDEADBEEF]);
    }
    body.push(0x7E040280);
    body.extend(or_dpp(ctrl, row_mask, bank_mask));
    exec64(&body)
}

/// The RDNA3 ISA guide's DPP16 source lane (7.8 "DPP"; LLVM's DppCtrl): `None` where a shift
/// leaves the row (BOUND_CTRL then reads 0).
fn dpp16_source(ctrl: u32, lane: usize) -> Option<usize> {
    let (row, k, n) = (lane & !15, lane & 15, (ctrl & 15) as usize);
    match ctrl {
        0..=0xff => Some((lane & !3) + ((ctrl >> (2 * (lane & 3))) & 3) as usize),
        0x101..=0x10f => (k + n < 16).then_some(lane + n),
        0x111..=0x11f => (k >= n).then(|| lane - n),
        0x121..=0x12f => Some(row + (k + 16 - n) % 16),
        0x140 => Some(row + 15 - k),
        0x141 => Some(row + (k & 8) + 7 - (k & 7)),
        0x150..=0x15f => Some(row + n),
        0x160..=0x16f => Some(row + (k ^ n)),
        _ => None,
    }
}

#[test]
fn wave64_dpp16_row_controls_act_on_every_row() {
    // test_dpp.py TestDPP16 test_quad_perm_reverse, test_row_shl, test_row_shr, test_row_ror,
    // test_row_mirror, test_row_half_mirror: the suite compares all 64 lanes with the
    // emulator's; the values it asserts are checked here beside the definition for every lane.
    let spots: [(u32, &[(usize, u32)]); 6] = [
        (0x1b, &[(0, 33), (1, 23), (2, 13), (3, 3), (4, 73)]),
        (0x101, &[(0, 13), (7, 83), (14, 153), (15, 0), (16, 173)]),
        (
            0x111,
            &[(0, 0), (1, 3), (8, 73), (15, 143), (16, 0), (17, 163)],
        ),
        (0x121, &[(0, 153), (1, 3), (15, 143), (16, 313)]),
        (0x140, &[(0, 153), (5, 103), (8, 73), (16, 313)]),
        (0x141, &[(0, 73), (7, 3), (8, 153), (15, 83), (16, 233)]),
    ];
    for (ctrl, spot) in spots {
        let out = dpp_copy(ctrl, 0xf, 0xf, false);
        for &(lane, want) in spot {
            assert_eq!(out[lane], want, "ctrl {ctrl:#x} lane {lane}");
        }
        for (lane, &got) in out.iter().enumerate() {
            let want = dpp16_source(ctrl, lane).map_or(0, |s| 10 * s as u32 + 3);
            assert_eq!(got, want, "ctrl {ctrl:#x} lane {lane}");
        }
    }
    // gfx10+'s row_share and row_xmask (LLVM test/MC/AMDGPU/gfx11_asm_vop2_dpp16.s encodes them
    // for gfx11), over the four rows of a wave64.
    for ctrl in [0x150, 0x153, 0x15f, 0x161, 0x16f] {
        let out = dpp_copy(ctrl, 0xf, 0xf, false);
        for (lane, &got) in out.iter().enumerate() {
            let want = dpp16_source(ctrl, lane).map_or(0, |s| 10 * s as u32 + 3);
            assert_eq!(got, want, "ctrl {ctrl:#x} lane {lane}");
        }
    }
}

#[test]
fn wave64_dpp16_row_and_bank_masks_keep_the_destination() {
    // test_dpp.py test_row_mask, test_bank_mask: row_shl:1 with row_mask 0x5 / bank_mask 0x5
    // over v1 = 0xdeadbeef.
    let out = dpp_copy(0x101, 0x5, 0xf, true);
    for (lane, want) in [
        (0, 13),
        (15, 0),
        (16, 0xDEADBEEF),
        (32, 333),
        (47, 0),
        (48, 0xDEADBEEF),
    ] {
        assert_eq!(out[lane], want, "row_mask lane {lane}");
    }
    let out = dpp_copy(0x101, 0xf, 0x5, true);
    for (lane, want) in [(0, 13), (3, 43), (4, 0xDEADBEEF), (8, 93), (12, 0xDEADBEEF)] {
        assert_eq!(out[lane], want, "bank_mask lane {lane}");
    }
    for (lane, &got) in out.iter().enumerate() {
        let written = (0x5 >> ((lane & 15) / 4)) & 1 == 1;
        let want = if written {
            dpp16_source(0x101, lane).map_or(0, |s| 10 * s as u32 + 3)
        } else {
            0xDEADBEEF
        };
        assert_eq!(got, want, "bank_mask lane {lane}");
    }
}

#[test]
fn wave64_vopc_dpp_ctrl_0x142_reads_lane_0_of_each_row_on_gfx1100() {
    // test_dpp.py TestVOPCDPP16 test_row_bcast15_materializes_vcc: gfx9's row_bcast:15 code,
    // which the RDNA3 guide lists as unused, on gfx1100: only lanes 0, 16, 32, 48 compare
    // equal (the suite checks all 64 lanes against an emulator reading each row's lane 0).
    //
    //   v_mov_b32 v0, v255
    //   v_cmp_eq_u32_dpp vcc, v0, v0 dpp_ctrl:0x142 row_mask:0xf bank_mask:0xf bound_ctrl:1
    //     (by hand: llvm-mc-19's row_share:0 encoding [0x7c9400fa, 0xff095000] with 0x142)
    //   v_mov_b32 v2, 0 / v_mov_b32 v3, 1 / v_cndmask_b32_e32 v1, v2, v3, vcc
    let body = [
        0x7E0003FF, 0x7C9400FA, 0xFF094200, 0x7E040280, 0x7E060281, 0x02020702,
    ];
    let out = exec64(&body);
    for (lane, &got) in out.iter().enumerate() {
        assert_eq!(got, u32::from(lane % 16 == 0), "lane {lane}");
    }
}

#[test]
fn wave32_v_add_f32_dpp_row_shl_with_all_256_vgprs() {
    // test_vop2.py test_v_add_f32_dpp_row_shl: the suite's kernels allocate 256 VGPRs, so a
    // DPP source staged past them named an AGPR code and read v0 unpermuted.
    //
    //   v_cvt_f32_u32_e32 v0, v255
    //   v_add_f32_dpp v1, v0, v0 row_shl:1 row_mask:0xf bank_mask:0xf bound_ctrl:1
    let body = [0x7E000DFF, 0x060200FA, 0xFF090100];
    let st = exec(&body, 16);
    assert_eq!(f(st.v(1, 0)), 1.0);
    assert_eq!(f(st.v(1, 1)), 3.0);
    assert_eq!(f(st.v(1, 14)), 29.0);
    for l in 0..15 {
        assert_eq!(f(st.v(1, l)), (2 * l + 1) as f32, "lane {l}");
    }
    // Lane 15's source leaves the row: BOUND_CTRL reads 0.
    assert_eq!(f(st.v(1, 15)), 15.0);
}

#[test]
fn v_cos_of_a_quarter_turn_is_plus_zero() {
    // test_vop1.py test_v_cos_f32_quarter, test_v_cos_f32_half: the suite compares the bits
    // with the emulator's (+0.0 and -1.0), and the GPU agrees.
    //
    //   s_mov_b32 s0, 0x3e800000 / v_mov_b32 v0, s0 / v_cos_f32 v1, v0
    //   s_mov_b32 s0, 0x3f000000 / v_mov_b32 v0, s0 / v_cos_f32 v2, v0
    let body = [
        0xBE8000FF, 0x3E800000, 0x7E000200, 0x7E026D00, 0xBE8000FF, 0x3F000000, 0x7E000200,
        0x7E046D00,
    ];
    let st = exec(&body, 1);
    assert_eq!(st.v(1, 0), 0, "cos(0.25 turn) is +0.0");
    assert_eq!(st.v(2, 0), 0xBF80_0000, "cos(0.5 turn) is -1.0");
}

/// test_vinterp.py's set-up: v10 = lane, v1 = lane + 100.0, v3 = lane + 10.0, s2 = 2.0.
///
///   v_mov_b32 v10, v255 / v_cvt_f32_u32 v1, v10 / s_mov_b32 s0, 100.0 / v_add_f32 v1, s0, v1 /
///   v_cvt_f32_u32 v3, v10 / s_mov_b32 s1, 10.0 / v_add_f32 v3, s1, v3 / s_mov_b32 s2, 2.0
const INTERP_F32_SETUP: [u32; 10] = [
    0x7E1403FF, 0x7E020D0A, 0xBE8000FF, 0x42C80000, 0x06020200, 0x7E060D0A, 0xBE8100FF, 0x41200000,
    0x06060601, 0xBE8200F4,
];

#[test]
fn v_interp_p10_and_p2_f32_read_the_quads_lanes() {
    // test_vinterp.py test_v_interp_p10_f32: fma(v1[quad + 1], s2, v3[quad]) is 212.0 in the
    // first quad and 224.0 in the second (an SGPR src1, which LLVM's assembler refuses, reads
    // the SGPR on the GPU). p2 (the RDNA3 guide's pseudo-code): fma(v1[quad + 2], s2, v3[lane]).
    //
    //   <INTERP_F32_SETUP>
    //   v_interp_p10_f32 v4, v1, s2, v3   (by hand: SRC1 = s2)
    //   v_interp_p2_f32 v5, v1, s2, v3    (by hand)
    let mut body = INTERP_F32_SETUP.to_vec();
    body.extend([0xCD000004, 0x040C0501, 0xCD010005, 0x040C0501]);
    let st = exec(&body, 8);
    for l in 0..8 {
        let q = l & !3;
        assert_eq!(
            f(st.v(4, l)),
            if l < 4 { 212.0 } else { 224.0 },
            "p10 lane {l}"
        );
        let want = (q + 2 + 100) as f32 * 2.0 + (l + 10) as f32;
        assert_eq!(f(st.v(5, l)), want, "p2 lane {l}");
    }
}

#[test]
fn v_interp_f16_forms_read_halves_and_round_their_f16_result() {
    // test_vinterp.py test_v_interp_p10_f16_f32: f16 attributes v1 = f16(lane),
    // v3 = f16(lane + 10), s1 = 2.0: 12.0 in the first quad, 24.0 in the second. Then the p2
    // f16 forms (RDNA3 guide pseudo-code): OPSEL[3] writes the high half, and with
    // s3 = 0.99999994 the f16 of 2 * s3 is 2.0 rounded to nearest, 0x3fff toward zero.
    //
    //   v_mov_b32 v10, v255 / v_cvt_f32_u32 v11, v10 / v_cvt_f16_f32 v1, v11 /
    //   s_mov_b32 s0, 10.0 / v_add_f32 v12, s0, v11 / v_cvt_f16_f32 v3, v12 / s_mov_b32 s1, 2.0 /
    //   v_interp_p10_f16_f32 v4, v1, s1, v3                    (by hand: SRC1 = s1)
    //   v_interp_p2_f16_f32 v5, v1, s1, v11 op_sel:[0,0,0,1]   (by hand)
    //   s_mov_b32 s3, 0x3f7fffff
    //   v_interp_p2_f16_f32 v8, v1, s3, v13                    (by hand)
    //   v_interp_p2_rtz_f16_f32 v9, v1, s3, v13                (by hand)
    let body = [
        0x7E1403FF, 0x7E160D0A, 0x7E02150B, 0xBE8000FF, 0x41200000, 0x06181600, 0x7E06150C,
        0xBE8100F4, 0xCD020004, 0x040C0301, 0xCD034005, 0x042C0301, 0xBE8300FF, 0x3F7FFFFF,
        0xCD030008, 0x04340701, 0xCD050009, 0x04340701,
    ];
    let st = exec(&body, 8);
    for l in 0..8 {
        assert_eq!(
            f(st.v(4, l)),
            if l < 4 { 12.0 } else { 24.0 },
            "p10 lane {l}"
        );
    }
    // fma(f16(lane of quad + 2), 2.0, v11 = lane) in the high half; the low half kept (0).
    assert_eq!(st.v(5, 0), 0x4400_0000, "2 * 2 + 0 = 4.0");
    assert_eq!(st.v(5, 5), 0x4C40_0000, "2 * 6 + 5 = 17.0");
    assert_eq!(st.v(8, 0) & 0xffff, 0x4000, "1.99999988 to nearest");
    assert_eq!(st.v(9, 0) & 0xffff, 0x3FFF, "1.99999988 toward zero");
    assert_eq!(st.v(8, 4) & 0xffff, 0x4600, "5.9999996 to nearest");
    assert_eq!(st.v(9, 4) & 0xffff, 0x45FF, "5.9999996 toward zero");
}
