//! Instruction semantics of the gfx11 interpreter against the RDNA3 ISA guide: carries,
//! shifts by >= 32, signed vs unsigned compares, EXEC masking, denormals per the RSRC1 float
//! mode, NaN in max, f64, loops, LDS across waves with a barrier, atomics, wave64, and the
//! faults (budget, unsupported instruction, scratch bounds). The programs are assembled with
//! `llvm-mc-19 -arch=amdgcn -mcpu=gfx1100 -show-encoding` (source beside each), so the test
//! needs no LLVM.

use hcq_sim::isa::{FlatMemory, FloatMode, Isa, IsaError, Launch, ScratchSetup, run};

const BASE: u64 = 0x1_0000;
const CODE: u64 = 0x1_0000;
const OUT: u64 = 0x2_0000;
const SCRATCH: u64 = 0x3_0000;

include!("isa_common/programs.rs");

fn launch(lanes: u32, wave64: bool) -> Launch {
    Launch {
        isa: Isa::Gfx11,
        gfx940: true,
        pgm: CODE,
        wave64,
        user_sgprs: vec![OUT as u32, (OUT >> 32) as u32],
        // USER_SGPR_COUNT 2, TGID_X_EN.
        rsrc2: 2 << 1 | 1 << 7,
        local: [lanes, 1, 1],
        groups: [1, 1, 1],
        lds_bytes: 256,
        vgprs: 16,
        scratch: ScratchSetup::default(),
        scratch_waves: 0,
        accum_offset: 0,
        float: FloatMode {
            denorm32: true,
            denorm16_64: true,
        },
        budget: 1 << 20,
        clock: 0,
        xcc: Default::default(),
    }
}

fn exec(code: &[u32], l: &Launch) -> (Result<hcq_sim::isa::Stats, IsaError>, FlatMemory) {
    let mem = FlatMemory::new(BASE, 0x4_0000);
    let bytes: Vec<u8> = code.iter().flat_map(|w| w.to_le_bytes()).collect();
    mem.poke(CODE, &bytes).unwrap();
    (run(l, &mem), mem)
}

fn out(mem: &FlatMemory, n: usize) -> Vec<u32> {
    let mut b = vec![0u8; n * 4];
    mem.peek(OUT, &mut b).unwrap();
    b.chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn ok(code: &[u32], l: &Launch, n: usize) -> Vec<u32> {
    let (r, mem) = exec(code, l);
    r.unwrap();
    out(&mem, n)
}

#[test]
fn scalar_carries_and_scc() {
    // s_add_u32 -1 + 2 = 1 with carry; s_addc_u32 0 + 0 + carry = 1, no carry; s_cselect
    // then picks its second operand: (1 + 1) * 100 + 9.
    assert_eq!(ok(CARRY, &launch(32, false), 32), vec![209; 32]);
}

#[test]
fn shifts_take_the_low_bits_of_the_amount() {
    // v_lshlrev_b32 by 33 shifts by 1; s_lshl_b64 by 40 moves bit 0 to bit 8 of the high
    // word; v_ashrrev_i32 keeps the sign: 6 + 256 - 4.
    assert_eq!(ok(SHIFTS, &launch(32, false), 32), vec![258; 32]);
}

#[test]
fn signed_and_unsigned_compares_differ() {
    // -1 < 1 signed (cndmask picks 20), not unsigned (picks 1).
    assert_eq!(ok(SIGNED_CMP, &launch(32, false), 32), vec![21; 32]);
}

#[test]
fn exec_masks_lanes() {
    let got = ok(LANE_CMP, &launch(32, false), 32);
    let want: Vec<u32> = (0..32).map(|l| if l < 5 { 101 } else { 0 }).collect();
    assert_eq!(got, want);
}

#[test]
fn partial_waves_leave_the_rest_untouched() {
    // 40 work-items in wave32: the second wave has 8 live lanes.
    let got = ok(LANE_CMP, &launch(40, false), 41);
    assert_eq!(got[39], 0);
    assert_eq!(got[40], 0, "lane 8 of the second wave is not live");
    let (r, mem) = exec(LANE_CMP, &launch(40, false));
    r.unwrap();
    let mut b = [0u8; 4];
    mem.peek(OUT + 4 * 4, &mut b).unwrap();
    assert_eq!(u32::from_le_bytes(b), 101);
}

#[test]
fn f32_denormals_follow_the_rsrc1_float_mode() {
    let mut l = launch(32, false);
    assert_eq!(ok(DENORM, &l, 1), vec![1], "mode 3 keeps denormals");
    l.float = FloatMode::from_rsrc1(0);
    assert_eq!(ok(DENORM, &l, 1), vec![0], "mode 0 flushes them");
    assert_eq!(
        FloatMode::from_rsrc1(0x60af_0080),
        FloatMode {
            denorm32: true,
            denorm16_64: true
        }
    );
}

#[test]
fn max_with_a_quiet_nan_returns_the_number() {
    assert_eq!(ok(NAN_MAX, &launch(32, false), 1), vec![1.0f32.to_bits()]);
}

#[test]
fn f64_arithmetic_and_conversions() {
    let got = ok(F64, &launch(32, false), 32);
    let want: Vec<u32> = (0..32).map(|l| 2 * l + 1).collect();
    assert_eq!(got, want);
}

#[test]
fn loops_branch_on_scc() {
    assert_eq!(ok(LOOP, &launch(32, false), 32), vec![30; 32]);
}

#[test]
fn lds_and_barrier_across_waves() {
    // 64 work-items = 2 waves of 32: wave 0 reads what wave 1 wrote before the barrier.
    let got = ok(BARRIER_LDS, &launch(64, false), 64);
    let want: Vec<u32> = (0..64).map(|l| 1000 + (63 - l) * 4).collect();
    assert_eq!(got, want);
    // The same in one wave64.
    assert_eq!(ok(BARRIER_LDS, &launch(64, true), 64), want);
    // Without the LDS grant: a fault naming the access.
    let mut l = launch(64, false);
    l.lds_bytes = 128;
    let (r, _) = exec(BARRIER_LDS, &l);
    let e = r.unwrap_err().to_string();
    assert!(
        e.contains("LDS access of 4 bytes at 0x80 beyond the 128 bytes"),
        "{e}"
    );
}

#[test]
fn wave64_compares_write_the_vcc_pair() {
    let got = ok(WAVE64, &launch(64, true), 64);
    let want: Vec<u32> = (0..64).map(|l| if l < 10 { 11 } else { 10 }).collect();
    assert_eq!(got, want);
}

#[test]
fn global_atomics_count_every_lane() {
    let (r, mem) = exec(ATOMIC, &launch(64, false));
    let st = r.unwrap();
    assert_eq!(out(&mem, 1), vec![64]);
    // 4 instructions per wave, 2 waves; v_mov/atomic count 32 lanes, s_endpgm 1.
    assert_eq!(st.wave_instructions, 8);
    assert_eq!(st.lane_instructions, 2 * (3 * 32 + 1));
}

#[test]
fn an_endless_loop_exhausts_the_budget() {
    let mut l = launch(32, false);
    l.budget = 1000;
    let (r, _) = exec(ENDLESS, &l);
    let e = r.unwrap_err().to_string();
    assert!(e.contains("instruction budget of 1000"), "{e}");
}

#[test]
fn the_budget_counts_per_wave_not_per_dispatch() {
    // 64 workgroups of 2 waves, 4 instructions each: 512 in the dispatch, 4 per wave. A budget
    // of 4 holds (a large grid of short waves is no hang); 3 stops the first wave.
    let mut l = launch(64, false);
    l.groups = [64, 1, 1];
    l.budget = 4;
    let (r, mem) = exec(ATOMIC, &l);
    assert_eq!(r.unwrap().wave_instructions, 512);
    assert_eq!(out(&mem, 1), vec![64 * 64]);
    l.budget = 3;
    let e = exec(ATOMIC, &l).0.unwrap_err().to_string();
    assert!(
        e.contains("the wave exceeded its instruction budget of 3"),
        "{e}"
    );
}

#[test]
fn unsupported_instructions_name_where_they_are() {
    let mut l = launch(32, false);
    l.groups = [2, 1, 1];
    let (r, _) = exec(UNSUPPORTED, &l);
    let e = r.unwrap_err().to_string();
    assert!(
        e.starts_with(
            "gfx11: unsupported instruction word 0xbf860000 (SOPP 6) at kernel offset 0x8"
        ),
        "{e}"
    );
    assert!(e.contains("wave 0 of workgroup [0, 0, 0]"), "{e}");
}

#[test]
fn scratch_beyond_the_slot_faults_and_within_it_is_private() {
    let mut l = launch(32, false);
    // 64 bytes per lane: offset 64 is out.
    l.scratch = ScratchSetup {
        base: SCRATCH,
        wave_bytes: 64 * 32,
    };
    l.scratch_waves = 1;
    let (r, _) = exec(SCRATCH_OOB, &l);
    let e = r.unwrap_err().to_string();
    assert!(
        e.contains("scratch access of 4 bytes at private offset 0x40"),
        "{e}"
    );
    l.scratch.wave_bytes = 128 * 32;
    let (r, mem) = exec(SCRATCH_OOB, &l);
    r.unwrap();
    // Swizzled: dword 16 of lane 3 at base + 16 * 4 * 32 + 3 * 4.
    let mut b = [0u8; 4];
    mem.peek(SCRATCH + 16 * 128 + 12, &mut b).unwrap();
    assert_eq!(u32::from_le_bytes(b), 5);
}

#[test]
fn fetch_outside_memory_is_a_vm_fault() {
    let mut l = launch(32, false);
    l.pgm = 0x9000_0000;
    let (r, _) = exec(CARRY, &l);
    match r {
        Err(IsaError::VmAt(v, at)) => {
            assert_eq!(v.va, 0x9000_0000);
            assert!(
                at.starts_with("at kernel offset 0x0 (program address 0x90000000), wave 0 of"),
                "{at}"
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn workitem_ids_are_packed_per_tidig_comp_cnt() {
    // A 4 x 2 x 3 workgroup in one wave32: v0 = x | y << 10 | z << 20 with TIDIG_COMP_CNT 2.
    let mut l = launch(1, false);
    l.local = [4, 2, 3];
    l.rsrc2 |= 2 << 11;
    let got = ok(WORKITEM_IDS, &l, 25);
    for t in 0..24u32 {
        let (x, y, z) = (t % 4, (t / 4) % 2, t / 8);
        assert_eq!(got[t as usize], x | y << 10 | z << 20, "work-item {t}");
    }
    assert_eq!(got[24], 0, "lane 24 is not live");
    // TIDIG_COMP_CNT 0: only X is provided.
    l.rsrc2 &= !(3 << 11);
    let got = ok(WORKITEM_IDS, &l, 24);
    assert_eq!(got[13], 1, "work-item 13 is x = 1 (y and z not provided)");
}

#[test]
fn lds_atomics_return_the_old_value_and_store_per_the_isa_guides() {
    // Each lane works on its own LDS dword: 10, inc (limit 10) wraps to 0, dec (limit 10)
    // from 0 wraps to 10, rsub 25 - 10 = 15, signed min with -3, signed max with 7, xor 0xff,
    // compare-and-store (gfx11: data0 new 0x1234, data1 compare 0xf8); f32 1.5 + 2.25.
    let mut l = launch(32, false);
    l.vgprs = 32;
    let got = ok(LDS_ATOMICS, &l, 32 * 16);
    let want = [
        10,
        0,
        10,
        15,
        (-3i32) as u32,
        7,
        0xf8,
        0x1234,
        1.5f32.to_bits(),
        3.75f32.to_bits(),
    ];
    for lane in 0..32 {
        assert_eq!(got[lane * 16..lane * 16 + 10], want, "lane {lane}");
    }
}

#[test]
fn gfx9_compare_and_store_takes_the_compare_value_first() {
    // CDNA3 ISA, DS_CMPST_B32: cmp = DATA, src = DATA2 (the reverse of gfx11). 5 == 5 stores
    // 9 and returns 5; ds_add_rtn_f32 is opcode 53 on gfx9 (121 on gfx11).
    let mut l = launch(64, true);
    l.isa = Isa::Gfx9;
    l.lds_bytes = 512;
    let got = ok(LDS_CMPST_GFX9, &l, 64 * 4);
    for lane in 0..64 {
        assert_eq!(
            got[lane * 4..lane * 4 + 4],
            [5, 9, 1.5f32.to_bits(), 3.75f32.to_bits()],
            "lane {lane}"
        );
    }
}

#[test]
fn packed_halves_follow_op_sel_and_clamp() {
    // RDNA3 ISA, VOP3P: f16 clamp to [0, 1]; integer clamp saturates; op_sel/op_sel_hi pick
    // each source's half. An integer inline constant is its 32-bit sign extension (LLVM
    // AMDGPUBaseInfo getInlineEncodingV216, "the actual HW behavior"; tinygrad's
    // hardware-validated test_vop3p.py likewise), so op_sel_hi reads 0 from the constant 4.
    let got = ok(PACKED_CLAMP, &launch(32, false), 32 * 5);
    for lane in 0..32 {
        let at = |k: usize| got[k * 32 + lane];
        assert_eq!(
            at(0),
            0x3c00_3c00,
            "f16 add clamped (3.0, 1.5), lane {lane}"
        );
        assert_eq!(at(1), 0xffff_0008, "u16 add saturated, lane {lane}");
        assert_eq!(at(2), 0x0030_fffe, "i16 sub, lane {lane}");
        assert_eq!(
            at(3),
            0x0020_0030,
            "shift by the constant 4 (low half) and by 0 (its high half)"
        );
        assert_eq!(
            at(4),
            0x00a0_ffd0,
            "mul_lo with op_sel [1,0], op_sel_hi [0,1]"
        );
    }
}

#[test]
fn gfx9_buffer_addressing_with_idxen_and_offen() {
    // A structured V# (STRIDE 8, NUM_RECORDS 64 records): idxen takes the index from vaddr,
    // idxen + offen the index and then the offset from a VGPR pair; index 64 is out of range
    // and faults naming it (the simulator faults where hardware would drop the access).
    let mut l = launch(64, true);
    l.isa = Isa::Gfx9;
    let (r, mem) = exec(MUBUF_INDEXED, &l);
    let e = r.unwrap_err().to_string();
    assert!(
        e.contains("lane 63 at index 64 beyond the V#'s NUM_RECORDS 64 (records of 8 bytes)"),
        "{e}"
    );
    let mut b = vec![0u8; 64 * 8];
    mem.peek(OUT + 0x100, &mut b).unwrap();
    let words: Vec<u32> = b
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    let want: Vec<u32> = (0..64).flat_map(|l| [100 + l, 200 + l]).collect();
    assert_eq!(words, want);
    assert_eq!(out(&mem, 64), (200..264).collect::<Vec<u32>>());
}

#[test]
fn gfx90a_agprs_live_in_the_unified_vgpr_file_from_accum_offset() {
    // CDNA2/CDNA3 ISA: AGPRs share the VGPR file, from ACCUM_OFFSET on; the ACC bit of GLOBAL
    // and DS makes vdata/vdst AGPRs. Lane l stores l, 40, and 40 + l + 7 (through an AGPR
    // load and an LDS round trip of an AGPR).
    let mut l = launch(64, true);
    l.isa = Isa::Gfx9;
    l.accum_offset = 8;
    let got = ok(AGPRS, &l, 192);
    let want: Vec<u32> = (0..64)
        .chain([40; 64])
        .chain((0..64).map(|x| 47 + x))
        .collect();
    assert_eq!(got, want);
    // a4 is v12 of 16; with the AGPRs from v12 it is v16, beyond the budget: a fault naming it.
    l.accum_offset = 12;
    let e = exec(AGPRS, &l).0.unwrap_err().to_string();
    assert!(
        e.contains("AGPR a4 is VGPR v16 of the unified file") && e.contains("a0 at v12"),
        "{e}"
    );
}

/// CLS_PREFETCH (what clang -O3 emits in tinygrad's kernels):
///   s_set_inst_prefetch_distance 0x1
///   v_lshlrev_b32 v0, 4, v0
///   v_mov_b32 v2, 1 ; v_cls_i32 v1, v2 ; global_store_b32 v0, v1, s[0:1]
///   v_mov_b32 v2, -2 ; v_cls_i32 v1, v2 ; global_store_b32 v0, v1, s[0:1] offset:4
///   v_mov_b32 v2, 0x40000000 ; v_cls_i32 v1, v2 ; global_store_b32 v0, v1, s[0:1] offset:8
///   v_mov_b32 v2, 0 ; v_cls_i32 v1, v2 ; global_store_b32 v0, v1, s[0:1] offset:12
///   s_endpgm
const CLS_PREFETCH: &[u32] = &[
    0xbf840001, 0x30000084, 0x7e040281, 0x7e027702, 0xdc6a0000, 0x00000100, 0x7e0402c2, 0x7e027702,
    0xdc6a0004, 0x00000100, 0x7e0402f4, 0x7e027702, 0xdc6a0008, 0x00000100, 0x7e040280, 0x7e027702,
    0xdc6a000c, 0x00000100, 0xbfb00000,
];

#[test]
fn cls_counts_leading_sign_bits_and_prefetch_is_a_hint() {
    // V_CLS_I32 (RDNA3 ISA): the first bit from bit 30 down that differs from the sign bit,
    // counted from bit 31; -1 when none does. 1 -> 31, -2 -> 31, 0x40000000 -> 1, 0 -> -1.
    let got = ok(CLS_PREFETCH, &launch(2, false), 8);
    assert_eq!(got, [31, 31, 1, u32::MAX].repeat(2));
}

/// F16_MATH (tinygrad's half kernels):
///   v_lshlrev_b32 v0, 3, v0
///   v_mov_b32 v1, 0x4000                      ; 2.0 (f16)
///   v_exp_f16 v2, v1                          ; 4.0
///   v_max3_f16 v3, v2, 1.0, -2.0              ; 4.0
///   global_store_b32 v0, v3, s[0:1]
///   v_log_f16 v4, v3                          ; 2.0
///   v_med3_f16 v4, v4, 1.0, 0.5               ; 1.0
///   global_store_b32 v0, v4, s[0:1] offset:4
///   s_endpgm
const F16_MATH: &[u32] = &[
    0x30000083, 0x7e0202ff, 0x00004000, 0x7e04b101, 0xd64c0003, 0x03d5e502, 0xdc6a0000, 0x00000300,
    0x7e08af03, 0xd64f0004, 0x03c1e504, 0xdc6a0004, 0x00000400, 0xbfb00000,
];

#[test]
fn f16_transcendentals_and_three_operand_min_max() {
    let got: Vec<u32> = ok(F16_MATH, &launch(2, false), 4)
        .iter()
        .map(|x| x & 0xffff)
        .collect();
    assert_eq!(got, [0x4400, 0x3c00].repeat(2));
}

/// S_CLS:
///   s_mov_b32 s2, -2
///   s_cls_i32 s3, s2
///   v_lshlrev_b32 v0, 2, v0
///   v_mov_b32 v1, s3
///   global_store_b32 v0, v1, s[0:1]
///   s_endpgm
const S_CLS: &[u32] = &[
    0xbe8200c2, 0xbe830c02, 0x30000082, 0x7e020203, 0xdc6a0000, 0x00000100, 0xbfb00000,
];

#[test]
fn scalar_cls_counts_leading_sign_bits() {
    // -2 = 0xfffffffe: bits 30..1 equal the sign, bit 0 differs: 31.
    assert_eq!(ok(S_CLS, &launch(2, false), 2), vec![31; 2]);
}

/// DIV_FMAS (VCC set in every lane):
///   v_lshlrev_b32 v0, 4, v0
///   s_mov_b32 vcc_lo, -1
///   v_mov_b32 v1, 1.0
///   v_mov_b32 v2, 4.0                         ; exponent 129 > 127: scale up
///   v_div_fmas_f32 v3, v1, v1, v2             ; 5 * 2^64
///   global_store_b32 v0, v3, s[0:1]
///   v_mov_b32 v2, 0.5                         ; exponent 126: scale down
///   v_div_fmas_f32 v3, v1, v1, v2             ; 1.5 * 2^-64
///   global_store_b32 v0, v3, s[0:1] offset:4
///   v_mov_b32 v4, 0
///   v_mov_b32 v5, 0x3ff00000                  ; 1.0 (f64)
///   v_mov_b32 v6, 0
///   v_mov_b32 v7, 0x40100000                  ; 4.0 (f64)
///   v_div_fmas_f64 v[8:9], v[4:5], v[4:5], v[6:7] ; 5 * 2^128
///   global_store_b64 v0, v[8:9], s[0:1] offset:8
///   s_endpgm
const DIV_FMAS: &[u32] = &[
    0x30000084, 0xbeea00c1, 0x7e0202f2, 0x7e0402f6, 0xd6370003, 0x040a0301, 0xdc6a0000, 0x00000300,
    0x7e0402f0, 0xd6370003, 0x040a0301, 0xdc6a0004, 0x00000300, 0x7e080280, 0x7e0a02ff, 0x3ff00000,
    0x7e0c0280, 0x7e0e02ff, 0x40100000, 0xd6380008, 0x041a0904, 0xdc6e0008, 0x00000800, 0xbfb00000,
];

#[test]
fn div_fmas_undoes_the_div_scale_factor() {
    // V_DIV_SCALE scales by 2^64 (f32) / 2^128 (f64), so V_DIV_FMAS scales back by the same
    // power, up when exponent(S2) exceeds the bias, else down (as on hardware and in LLVM's
    // fdiv expansion). A 2^32 here made tinygrad's 1/1.18e-38 come out 2^32 too small.
    let got = ok(DIV_FMAS, &launch(1, false), 4);
    let f64_bits = (5.0f64 * 2f64.powi(128)).to_bits();
    assert_eq!(
        got,
        vec![
            (5.0f32 * 2f32.powi(64)).to_bits(),
            (1.5f32 * 2f32.powi(-64)).to_bits(),
            f64_bits as u32,
            (f64_bits >> 32) as u32,
        ]
    );
}

/// FREXP_F64 (one lane; each case stores mantissa (2 dwords) then exponent):
///   v_mov_b32 v0, 0
///   v_mov_b32 v2, 0
///   v_mov_b32 v3, 0x40180000                  ; 6.0
///   v_frexp_mant_f64 v[4:5], v[2:3]
///   v_frexp_exp_i32_f64 v6, v[2:3]
///   global_store_b64 v0, v[4:5], s[0:1]
///   global_store_b32 v0, v6, s[0:1] offset:8
///   v_mov_b32 v2, 1
///   v_mov_b32 v3, 0                           ; 2^-1074, the smallest denormal
///   v_frexp_mant_f64_e64 v[4:5], -v[2:3]
///   v_frexp_exp_i32_f64_e64 v6, v[2:3]
///   (stores at 12, 20)
///   v_mov_b32 v2, 0
///   v_mov_b32 v3, 0x7ff00000                  ; +inf
///   (frexp_mant, frexp_exp; stores at 24, 32)
///   v_mov_b32 v3, 0x80000000                  ; -0.0
///   (frexp_mant, frexp_exp; stores at 36, 44)
///   v_mov_b32 v2, -1
///   v_mov_b32 v3, 0x7fefffff                  ; f64::MAX
///   (frexp_mant, frexp_exp; stores at 48, 56)
///   s_endpgm
const FREXP_F64: &[u32] = &[
    0x7e000280, 0x7e040280, 0x7e0602ff, 0x40180000, 0x7e087b02, 0x7e0c7902, 0xdc6e0000, 0x00000400,
    0xdc6a0008, 0x00000600, 0x7e040281, 0x7e060280, 0xd5bd0004, 0x20000102, 0xd5bc0006, 0x00000102,
    0xdc6e000c, 0x00000400, 0xdc6a0014, 0x00000600, 0x7e040280, 0x7e0602ff, 0x7ff00000, 0x7e087b02,
    0x7e0c7902, 0xdc6e0018, 0x00000400, 0xdc6a0020, 0x00000600, 0x7e0602ff, 0x80000000, 0x7e087b02,
    0x7e0c7902, 0xdc6e0024, 0x00000400, 0xdc6a002c, 0x00000600, 0x7e0402c1, 0x7e0602ff, 0x7fefffff,
    0x7e087b02, 0x7e0c7902, 0xdc6e0030, 0x00000400, 0xdc6a0038, 0x00000600, 0xbfb00000,
];

#[test]
fn frexp_f64_splits_mantissa_and_exponent() {
    // RDNA3 ISA V_FREXP_MANT_F64 / V_FREXP_EXP_I32_F64: mantissa in [0.5, 1) with the sign,
    // exponent - 1022; +-inf and NaN keep S0 with exponent 0; zero stays zero (exponent 0);
    // denormals (enabled here) normalise.
    let got = ok(FREXP_F64, &launch(1, false), 15);
    let case = |m: f64, e: i32| {
        let b = m.to_bits();
        [b as u32, (b >> 32) as u32, e as u32]
    };
    let want: Vec<u32> = [
        case(0.75, 3),
        case(-0.5, -1073),
        case(f64::INFINITY, 0),
        case(-0.0, 0),
        case(f64::from_bits(0x3fef_ffff_ffff_ffff), 1024),
    ]
    .concat();
    assert_eq!(got, want);
}

/// WMMA_F16 (wave32): A = 1.0 and B = 2.0 everywhere (v[0:7], v[8:15]); C = 0.5 in the low
/// halves with 0xabcd above (v[16:23]), then 0.5 in the high halves with 0xabcd below
/// (v[24:31], op_sel:[0,0,1]):
///   v_wmma_f16_16x16x16_f16 v[16:23], v[0:7], v[8:15], v[16:23]
///   v_wmma_f16_16x16x16_f16 v[24:31], v[0:7], v[8:15], v[24:31] op_sel:[0,0,1]
///   global_store_b32 of v16, v23, v24, v31 (lane 0 first, at 0, 4, 8, 12)
/// tinygrad's half-accumulating tensor cores compile to it (test_linearizer test_tensor_cores).
const WMMA_F16: &[u32] = &[
    0x7e0002ff, 0x3c003c00, 0x7e0202ff, 0x3c003c00, 0x7e0402ff, 0x3c003c00, 0x7e0602ff, 0x3c003c00,
    0x7e0802ff, 0x3c003c00, 0x7e0a02ff, 0x3c003c00, 0x7e0c02ff, 0x3c003c00, 0x7e0e02ff, 0x3c003c00,
    0x7e1002ff, 0x40004000, 0x7e1202ff, 0x40004000, 0x7e1402ff, 0x40004000, 0x7e1602ff, 0x40004000,
    0x7e1802ff, 0x40004000, 0x7e1a02ff, 0x40004000, 0x7e1c02ff, 0x40004000, 0x7e1e02ff, 0x40004000,
    0x7e2002ff, 0xabcd3800, 0x7e2202ff, 0xabcd3800, 0x7e2402ff, 0xabcd3800, 0x7e2602ff, 0xabcd3800,
    0x7e2802ff, 0xabcd3800, 0x7e2a02ff, 0xabcd3800, 0x7e2c02ff, 0xabcd3800, 0x7e2e02ff, 0xabcd3800,
    0xcc424010, 0x1c421100, 0x7e3002ff, 0x3800abcd, 0x7e3202ff, 0x3800abcd, 0x7e3402ff, 0x3800abcd,
    0x7e3602ff, 0x3800abcd, 0x7e3802ff, 0x3800abcd, 0x7e3a02ff, 0x3800abcd, 0x7e3c02ff, 0x3800abcd,
    0x7e3e02ff, 0x3800abcd, 0xcc426018, 0x1c621100, 0x7e500280, 0xdc6a0000, 0x00001028, 0xdc6a0004,
    0x00001728, 0xdc6a0008, 0x00001828, 0xdc6a000c, 0x00001f28, 0xbfb00000,
];

#[test]
fn wmma_f16_writes_the_opsel_half_and_keeps_the_other() {
    let l = Launch {
        vgprs: 48,
        ..launch(32, false)
    };
    // 16 products of 1 x 2, plus 0.5: 32.5 (f16 0x5010).
    assert_eq!(
        ok(WMMA_F16, &l, 4),
        vec![0xabcd_5010, 0xabcd_5010, 0x5010_abcd, 0x5010_abcd]
    );
}

/// STORE_D16_HI (one lane): the high half of v1 = 0xbeef1234 as 16 and 8 bits:
///   v_mov_b32 v0, 0
///   v_mov_b32 v1, 0xbeef1234
///   global_store_d16_hi_b16 v0, v1, s[0:1]
///   global_store_d16_hi_b8 v0, v1, s[0:1] offset:2
///   s_endpgm
/// tinygrad's bf16 kernels store through it (test_dtype test_bf16).
const STORE_D16_HI: &[u32] = &[
    0x7e000280, 0x7e0202ff, 0xbeef1234, 0xdc960000, 0x00000100, 0xdc920002, 0x00000100, 0xbfb00000,
];

#[test]
fn store_d16_hi_writes_the_high_half() {
    assert_eq!(ok(STORE_D16_HI, &launch(1, false), 1), vec![0x00ef_beef]);
}
