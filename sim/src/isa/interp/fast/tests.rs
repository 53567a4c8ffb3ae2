//! The fast path against the general path (`Exec::step`) on the same wave state, over
//! edge values (±0, ±inf, quiet and signaling NaNs, denormals, shift counts of 32 and
//! more, carries), both f32 denormal modes, wave32 and wave64; and hand-computed values.

use super::*;
use crate::isa::{FlatMemory, FloatMode, ScratchSetup};

pub(super) const EDGES: [u32; 16] = [
    0,
    0x8000_0000, // -0.0
    1,           // the smallest denormal
    0x807f_ffff, // the largest negative denormal
    0x7f80_0000, // +inf
    0xff80_0000, // -inf
    0x7fc0_0000, // quiet NaN
    0x7f80_0001, // signaling NaN
    0x3f80_0000, // 1.0
    0xbf80_0000, // -1.0
    0xffff_ffff,
    0x7fff_ffff,
    31,
    32,
    33,
    0x0080_0000, // the smallest normal
];

/// Register files equal, where a NaN matches any NaN of the same quietness: an f32
/// operation on two NaNs returns one of them (quieted), and which one the host's float
/// unit returns depends on how the compiler ordered the operands (Rust leaves it open),
/// in the general path as in the fast one.
pub(super) fn same(a: &[u32], b: &[u32]) -> bool {
    let nan = |x: u32| x & 0x7fff_ffff > 0x7f80_0000;
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| x == y || (nan(*x) && nan(*y) && (x & 0x0040_0000) == (y & 0x0040_0000)))
}

pub(super) fn launch(wave64: bool) -> Launch {
    Launch {
        isa: Isa::Gfx11,
        gfx940: true,
        pgm: 0x1000,
        wave64,
        user_sgprs: vec![],
        rsrc2: 0,
        local: [64, 1, 1],
        groups: [1, 1, 1],
        lds_bytes: 0,
        vgprs: 8,
        accum_offset: 0,
        scratch: ScratchSetup::default(),
        scratch_waves: 0,
        float: FloatMode {
            denorm32: true,
            denorm16_64: true,
        },
        budget: 1 << 20,
        clock: 0,
        xcc: Default::default(),
    }
}

pub(super) fn wave(lanes: usize, mode: u32, salt: usize) -> Wave {
    let mut w = Wave {
        s: [UNDEFINED; 128],
        scc: false,
        pc: 0x1000,
        v: vec![UNDEFINED; 9 * lanes],
        nvgpr: 8,
        lanes,
        full: lane_bits(lanes),
        id: 0,
        state: WaveState::Running,
        scratch_slot: 0,
        clock: model::WaveClock::default(),
        mode,
        trapsts: 0,
        executed: 0,
        hang: crate::isa::interp::hang::Watch::default(),
        strict: true,
        oob: (0, None),
    };
    for (k, x) in w.v.iter_mut().enumerate() {
        *x = EDGES[(k * 7 + k / lanes + salt) % EDGES.len()];
    }
    for (k, x) in w.s.iter_mut().enumerate() {
        *x = EDGES[(k + salt) % EDGES.len()];
    }
    // VCC: a carry-in pattern; EXEC: every lane.
    w.s[106] = 0x5a5a_a5a5;
    w.s[107] = 0x0ff0_f00f;
    w.set_exec(!0);
    w
}

/// Runs `i` on `w`: the fast path when `fast`, else the general one.
pub(super) fn exec(l: &Launch, w: &mut Wave, i: &Inst, fast: bool) -> Option<Result<(), IsaError>> {
    exec_on(&FlatMemory::new(0x1000, 64), l, w, i, fast)
}

/// [`exec`] on memory `mem`.
pub(super) fn exec_on(
    mem: &FlatMemory,
    l: &Launch,
    w: &mut Wave,
    i: &Inst,
    fast: bool,
) -> Option<Result<(), IsaError>> {
    exec_lds(mem, &mut [], l, w, i, fast)
}

/// [`exec_on`] with the workgroup's LDS `lds`.
pub(super) fn exec_lds(
    mem: &FlatMemory,
    lds: &mut [u8],
    l: &Launch,
    w: &mut Wave,
    i: &Inst,
    fast: bool,
) -> Option<Result<(), IsaError>> {
    // The grant is the slice (strict waves fault before the sink past it).
    let mut granted = l.clone();
    granted.lds_bytes = u32::try_from(lds.len()).ok()?;
    let l = &granted;
    let mut kcache = KCache::new();
    let mut bar = WgBarrier {
        signals: 0,
        members: 1,
    };
    let mut x = Exec {
        l,
        w,
        at: At {
            l,
            wg: [0; 3],
            wave: 0,
            pc: 0x1000,
        },
        cd: codes(l.isa),
        mem,
        lds,
        kcache: &mut kcache,
        bar: &mut bar,
    };
    if fast {
        let f = classify(l, i)?;
        x.fast(&f, 0x1004)
    } else {
        Some(x.step(i, 0x1004))
    }
}

pub(super) fn inst(op: Op, enc: Enc, dst: u16, src: [u16; 3]) -> Inst {
    let mut i = Inst::new(op, enc);
    i.dst = dst;
    i.src = src;
    if matches!(op, Op::VAddCoU32 | Op::VAddCoCiU32) {
        i.sdst = 106;
    }
    i
}

#[test]
pub(super) fn fast_path_matches_the_general_path() {
    use Op::*;
    let v = |r: u16| VGPR + r;
    let ops: [(Op, Enc); 25] = [
        (VMovB32, Enc::Vop1),
        (VAddNcU32, Enc::Vop2),
        (VSubNcU32, Enc::Vop2),
        (VSubrevNcU32, Enc::Vop2),
        (VLshlrevB32, Enc::Vop2),
        (VLshrrevB32, Enc::Vop2),
        (VAshrrevI32, Enc::Vop2),
        (VAndB32, Enc::Vop2),
        (VOrB32, Enc::Vop2),
        (VXorB32, Enc::Vop2),
        (VMulLoU32, Enc::Vop3),
        (VAdd3U32, Enc::Vop3),
        (VLshlOrB32, Enc::Vop3),
        (VLshlAddU32, Enc::Vop3),
        (VAddLshlU32, Enc::Vop3),
        (VAndOrB32, Enc::Vop3),
        (VOr3B32, Enc::Vop3),
        (VXor3B32, Enc::Vop3),
        (VAddCoU32, Enc::Vop3sd),
        (VAddCoCiU32, Enc::Vop2),
        (VAddF32, Enc::Vop2),
        (VSubF32, Enc::Vop2),
        (VSubrevF32, Enc::Vop2),
        (VMulF32, Enc::Vop2),
        (VFmacF32, Enc::Vop2),
    ];
    // Source forms: VGPRs, an SGPR, integer and float inline constants, a literal.
    let forms: [[u16; 3]; 6] = [
        [v(1), v(2), v(3)],
        [v(4), v(5), v(6)],
        [3, v(2), v(7)],
        [v(1), 130, 200],
        [242, v(3), 5],
        [LIT, v(6), v(0)],
    ];
    let mut compared = 0;
    for (op, enc) in ops {
        for wave64 in [false, true] {
            let l = launch(wave64);
            let lanes = if wave64 { 64 } else { 32 };
            for mode in [0u32, 0xf0] {
                for (k, src) in forms.iter().enumerate() {
                    let mut i = inst(op, enc, v(1 + (k % 3) as u16), *src);
                    i.lit = 0x4049_0fdb;
                    if op == VAddCoCiU32 {
                        i.src[2] = if k % 2 == 0 { 106 } else { 10 };
                    }
                    if op == VFmacF32 {
                        // As decoded: the VOP2 encoding has no third source (src2 is D).
                        i.src[2] = NONE;
                    }
                    let mut a = wave(lanes, mode, k);
                    let mut b = wave(lanes, mode, k);
                    let fast = exec(&l, &mut a, &i, true);
                    let slow = exec(&l, &mut b, &i, false);
                    assert!(
                        matches!(fast, Some(Ok(()))),
                        "{op:?} {src:?}: the fast path declined"
                    );
                    assert!(matches!(slow, Some(Ok(()))), "{op:?} {src:?}");
                    assert!(
                        same(&a.v, &b.v),
                        "{op:?} {src:?} wave64 {wave64} mode {mode:#x}"
                    );
                    assert_eq!(a.s, b.s, "{op:?} {src:?} wave64 {wave64} mode {mode:#x}");
                    compared += 1;
                }
            }
        }
    }
    assert_eq!(compared, 25 * 2 * 2 * 6);
}

#[test]
pub(super) fn fast_path_values_by_hand() {
    let l = launch(false);
    let v = |r: u16| VGPR + r;
    let mut w = wave(32, 0, 0);
    let set = |w: &mut Wave, r: usize, x: [u32; 4]| {
        for lane in 0..32 {
            w.set_v(r, lane, x[lane % 4]);
        }
    };
    let lanes = |w: &Wave, r: usize| {
        [
            w.v[r * 32],
            w.v[r * 32 + 1],
            w.v[r * 32 + 2],
            w.v[r * 32 + 3],
        ]
    };
    // Shift counts use the low 5 bits: 33 shifts by 1, 32 by 0.
    set(&mut w, 1, [33, 32, 31, 0]);
    set(&mut w, 2, [0x8000_0001, 5, 3, 7]);
    let i = inst(Op::VLshlrevB32, Enc::Vop2, v(3), [v(1), v(2), NONE]);
    assert!(matches!(exec(&l, &mut w, &i, true), Some(Ok(()))));
    assert_eq!(lanes(&w, 3), [2, 5, 0x8000_0000, 7]);
    let i = inst(Op::VAshrrevI32, Enc::Vop2, v(3), [v(1), v(2), NONE]);
    assert!(matches!(exec(&l, &mut w, &i, true), Some(Ok(()))));
    assert_eq!(lanes(&w, 3), [0xc000_0000, 5, 0, 7]);
    // Carry out per lane into VCC: 0xffffffff + 1 carries, 1 + 1 does not.
    set(&mut w, 1, [0xffff_ffff, 1, 0x8000_0000, 0]);
    set(&mut w, 2, [1, 1, 0x8000_0000, 0]);
    let i = inst(Op::VAddCoU32, Enc::Vop3sd, v(3), [v(1), v(2), NONE]);
    assert!(matches!(exec(&l, &mut w, &i, true), Some(Ok(()))));
    assert_eq!(lanes(&w, 3), [0, 2, 0, 0]);
    assert_eq!(w.s[106], 0x5555_5555);
    // Carry in from that VCC: lanes 0 and 2 add one more (and carry again).
    let i = inst(Op::VAddCoCiU32, Enc::Vop2, v(3), [v(1), v(2), 106]);
    assert!(matches!(exec(&l, &mut w, &i, true), Some(Ok(()))));
    assert_eq!(lanes(&w, 3), [1, 2, 1, 0]);
    assert_eq!(w.s[106], 0x5555_5555);
    // f32 with denormals flushed (MODE.FP_DENORM 0): a denormal input is +-0, a
    // signaling NaN comes out quiet, -0 + -0 stays -0, inf - inf is the default NaN.
    set(&mut w, 1, [1, 0x7f80_0001, 0x8000_0000, 0x7f80_0000]);
    set(
        &mut w,
        2,
        [0x3f80_0000, 0x3f80_0000, 0x8000_0000, 0xff80_0000],
    );
    let i = inst(Op::VMulF32, Enc::Vop2, v(3), [v(1), v(2), NONE]);
    assert!(matches!(exec(&l, &mut w, &i, true), Some(Ok(()))));
    assert_eq!(lanes(&w, 3)[..3], [0, 0x7fc0_0001, 0]);
    let i = inst(Op::VAddF32, Enc::Vop2, v(3), [v(1), v(2), NONE]);
    assert!(matches!(exec(&l, &mut w, &i, true), Some(Ok(()))));
    assert_eq!(lanes(&w, 3)[2], 0x8000_0000);
    assert_eq!(lanes(&w, 3)[3] & 0x7fc0_0000, 0x7fc0_0000);
    // Denormals kept (FP_DENORM 3): the denormal times 1.0 is itself; fma of
    // 2^-126 * 0.5 + 0 is the denormal 2^-127.
    w.mode = 0xf0;
    let i = inst(Op::VMulF32, Enc::Vop2, v(3), [v(1), v(2), NONE]);
    assert!(matches!(exec(&l, &mut w, &i, true), Some(Ok(()))));
    assert_eq!(lanes(&w, 3)[0], 1);
    set(&mut w, 1, [0x0080_0000; 4]);
    let i = inst(Op::VFmaF32, Enc::Vop3, v(3), [v(1), 240, 128]);
    assert!(matches!(exec(&l, &mut w, &i, true), Some(Ok(()))));
    assert_eq!(lanes(&w, 3), [0x0040_0000; 4]);
    w.mode = 0;
    assert!(matches!(exec(&l, &mut w, &i, true), Some(Ok(()))));
    assert_eq!(lanes(&w, 3), [0; 4]);
}

#[test]
pub(super) fn fast_path_declines_what_it_does_not_model() {
    let l = launch(false);
    let v = |r: u16| VGPR + r;
    let plain = inst(Op::VAddNcU32, Enc::Vop2, v(1), [v(2), v(3), NONE]);
    assert!(classify(&l, &plain).is_some());
    // Modifiers, clamp, omod, DPP/SDWA and registers beyond RSRC1's budget.
    let mut i = plain;
    i.clamp = true;
    assert!(classify(&l, &i).is_none());
    let mut i = plain;
    i.mods = 1;
    assert!(classify(&l, &i).is_none());
    let mut i = plain;
    i.omod = 1;
    assert!(classify(&l, &i).is_none());
    let mut i = plain;
    i.sdwa = Some(0);
    assert!(classify(&l, &i).is_none());
    let mut i = plain;
    i.dst = v(8);
    assert!(classify(&l, &i).is_none());
    let mut i = plain;
    i.src[1] = v(8);
    assert!(classify(&l, &i).is_none());
    // SCC/VCCZ/EXECZ sources are left to the general path.
    let mut i = plain;
    i.src[0] = 253;
    assert!(classify(&l, &i).is_none());
    // A partial EXEC takes the general path (which keeps inactive lanes).
    let mut w = wave(32, 0, 0);
    w.set_exec(0xffff_fffe);
    assert!(exec(&l, &mut w, &plain, true).is_none());
    let before = w.v[32];
    assert!(matches!(exec(&l, &mut w, &plain, false), Some(Ok(()))));
    assert_eq!(w.v[32], before);
}

pub(super) fn copy(w: &Wave) -> Wave {
    Wave {
        s: w.s,
        scc: w.scc,
        pc: w.pc,
        v: w.v.clone(),
        nvgpr: w.nvgpr,
        lanes: w.lanes,
        full: w.full,
        id: w.id,
        state: w.state,
        scratch_slot: w.scratch_slot,
        clock: w.clock.clone(),
        mode: w.mode,
        trapsts: w.trapsts,
        executed: w.executed,
        hang: crate::isa::interp::hang::Watch::default(),
        strict: w.strict,
        oob: w.oob,
    }
}

/// Memory of the memory tests: 64 KiB at 0x10000, scratch at 0x18000.
pub(super) const MBASE: u64 = 0x1_0000;

pub(super) fn mem_with_pattern() -> FlatMemory {
    let m = FlatMemory::new(MBASE, 0x1_0000);
    let bytes: Vec<u8> = (0..0x1_0000u32).map(|k| (k * 7 + k / 251) as u8).collect();
    m.poke(MBASE, &bytes).unwrap();
    m
}

pub(super) fn mem_bytes(m: &FlatMemory) -> Vec<u8> {
    let mut b = vec![0u8; 0x1_0000];
    m.peek(MBASE, &mut b).unwrap();
    b
}

#[test]
pub(super) fn fast_dual_matches_the_general_path() {
    use Op::*;
    let v = |r: u16| VGPR + r;
    let ops = [
        VMovB32,
        VAddNcU32,
        VLshlrevB32,
        VAndB32,
        VCndmaskB32,
        VAddF32,
        VSubF32,
        VSubrevF32,
        VMulF32,
        VFmacF32,
    ];
    // Y reads X's destination (v1): both read before either writes.
    let srcs: [([u16; 2], [u16; 2]); 3] = [
        ([v(2), v(3)], [v(1), v(4)]),
        ([5, v(3)], [242, v(1)]),
        ([LIT, v(6)], [130, v(7)]),
    ];
    let mut runs = 0;
    for wave64 in [false, true] {
        let l = launch(wave64);
        let lanes = if wave64 { 64 } else { 32 };
        for mode in [0u32, 0xf0] {
            for (k, (sx, sy)) in srcs.iter().enumerate() {
                for (j, opx) in ops.iter().enumerate() {
                    let opy = ops[(j * 3 + k) % ops.len()];
                    let mut i = Inst::new(VDual, Enc::Vopd);
                    i.lit = 0x0000_0003;
                    i.dual = Some([
                        DualHalf {
                            op: *opx,
                            dst: v(1),
                            src: *sx,
                        },
                        DualHalf {
                            op: opy,
                            dst: v(6),
                            src: *sy,
                        },
                    ]);
                    let mut a = wave(lanes, mode, k + j);
                    let mut b = wave(lanes, mode, k + j);
                    assert!(
                        matches!(exec(&l, &mut a, &i, true), Some(Ok(()))),
                        "{opx:?} {opy:?} declined"
                    );
                    assert!(matches!(exec(&l, &mut b, &i, false), Some(Ok(()))));
                    assert!(same(&a.v, &b.v), "{opx:?} {opy:?} {k} mode {mode:#x}");
                    runs += 1;
                }
            }
        }
    }
    assert_eq!(runs, 2 * 2 * 3 * 10);
}

#[test]
pub(super) fn fast_dual_values_by_hand() {
    use Op::*;
    let l = launch(false);
    let mut w = wave(32, 0, 0);
    for lane in 0..32 {
        w.set_v(1, lane, 5);
        // The smallest denormal times 1.0 flushes to 0 without FP_DENORM.
        w.set_v(2, lane, 1);
    }
    // v_dual_mov_b32 v1, 7 :: v_dual_add_nc_u32 v3, 2, v1: Y reads the old v1 (5).
    let mut i = Inst::new(VDual, Enc::Vopd);
    i.dual = Some([
        DualHalf {
            op: VMovB32,
            dst: VGPR + 1,
            src: [135, NONE],
        },
        DualHalf {
            op: VAddNcU32,
            dst: VGPR + 3,
            src: [130, VGPR + 1],
        },
    ]);
    assert!(matches!(exec(&l, &mut w, &i, true), Some(Ok(()))));
    assert_eq!((w.v[32], w.v[3 * 32]), (7, 7));
    i.dual = Some([
        DualHalf {
            op: VMulF32,
            dst: VGPR + 4,
            src: [242, VGPR + 2],
        },
        DualHalf {
            op: VMovB32,
            dst: VGPR + 5,
            src: [VGPR + 2, NONE],
        },
    ]);
    assert!(matches!(exec(&l, &mut w, &i, true), Some(Ok(()))));
    assert_eq!((w.v[4 * 32], w.v[5 * 32]), (0, 1));
    w.mode = 0xf0;
    assert!(matches!(exec(&l, &mut w, &i, true), Some(Ok(()))));
    assert_eq!(w.v[4 * 32], 1);
}

/// The whole observable state of a wave: registers, SCC, PC and run state.
pub(super) fn state(w: &Wave) -> (Vec<u32>, [u32; 128], bool, u64, WaveState) {
    (w.v.clone(), w.s, w.scc, w.pc, w.state)
}

#[test]
pub(super) fn fast_scalar_ops_match_the_general_path() {
    use Op::*;
    let ops: [(Op, Enc); 35] = [
        (SMovB32, Enc::Sop1),
        (SAddU32, Enc::Sop2),
        (SSubU32, Enc::Sop2),
        (SMulI32, Enc::Sop2),
        (SLshlB32, Enc::Sop2),
        (SLshrB32, Enc::Sop2),
        (SAshrI32, Enc::Sop2),
        (SAndB32, Enc::Sop2),
        (SOrB32, Enc::Sop2),
        (SXorB32, Enc::Sop2),
        (SCmpEqU32, Enc::Sopc),
        (SCmpLgU32, Enc::Sopc),
        (SCmpGtU32, Enc::Sopc),
        (SCmpGeU32, Enc::Sopc),
        (SCmpLtU32, Enc::Sopc),
        (SCmpLeU32, Enc::Sopc),
        (SCmpEqI32, Enc::Sopc),
        (SCmpLgI32, Enc::Sopc),
        (SCmpGtI32, Enc::Sopc),
        (SCmpGeI32, Enc::Sopc),
        (SCmpLtI32, Enc::Sopc),
        (SCmpLeI32, Enc::Sopc),
        (SAndSaveexecB32, Enc::Sop1),
        (SBranch, Enc::Sopp),
        (SCbranchScc0, Enc::Sopp),
        (SCbranchScc1, Enc::Sopp),
        (SCbranchVccz, Enc::Sopp),
        (SCbranchVccnz, Enc::Sopp),
        (SCbranchExecz, Enc::Sopp),
        (SCbranchExecnz, Enc::Sopp),
        (SEndpgm, Enc::Sopp),
        (SBarrier, Enc::Sopp),
        (SSendmsg, Enc::Sopp),
        // Destinations that are VCC and EXEC halves.
        (SMovB32, Enc::Sop1),
        (SAndSaveexecB32, Enc::Sop1),
    ];
    // Sources: SGPRs (one of them EXEC's low half), integer and float inline constants,
    // a literal, the null register.
    let forms: [[u16; 2]; 7] = [
        [3, 4],
        [5, 13],
        [126, 2],
        [130, 7],
        [9, 200],
        [242, LIT],
        [124, 6],
    ];
    let mut compared = 0;
    for (n, (op, enc)) in ops.into_iter().enumerate() {
        for wave64 in [false, true] {
            let l = launch(wave64);
            let lanes = if wave64 { 64 } else { 32 };
            for (k, src) in forms.iter().enumerate() {
                for (scc, em, vcc) in [
                    (false, !0u64, 0u64),
                    (true, 0, 0x1_0000_0000),
                    (true, 0x8000_0000_0000_0001, 0x5a),
                ] {
                    let dst = match n {
                        33 => 106,
                        34 => 126,
                        _ => 10 + k as u16,
                    };
                    let mut i = inst(op, enc, dst, [src[0], src[1], NONE]);
                    i.lit = 0x8000_0003;
                    i.imm = if op == SSendmsg { 3 } else { -7 + k as i32 };
                    let prep = |w: &mut Wave| {
                        w.scc = scc;
                        w.set_exec(em);
                        w.s[106] = vcc as u32;
                        w.s[107] = (vcc >> 32) as u32;
                    };
                    let mut a = wave(lanes, 0, k);
                    let mut b = wave(lanes, 0, k);
                    prep(&mut a);
                    prep(&mut b);
                    let fast = exec(&l, &mut a, &i, true);
                    let slow = exec(&l, &mut b, &i, false);
                    if op == SAndSaveexecB32 && wave64 {
                        // Wave64's EXEC has the B64 form: no fast one for B32.
                        assert!(fast.is_none());
                        continue;
                    }
                    assert!(
                        matches!(fast, Some(Ok(()))),
                        "{op:?} {src:?}: the fast path declined"
                    );
                    assert!(matches!(slow, Some(Ok(()))), "{op:?} {src:?}");
                    assert_eq!(state(&a), state(&b), "{op:?} {src:?} wave64 {wave64}");
                    compared += 1;
                }
            }
        }
    }
    assert_eq!(compared, (35 * 2 - 2) * 7 * 3);
    // What the fast path leaves to the general one: unwritable or null destinations,
    // VCCZ/EXECZ/SCC as sources, VGPRs, other messages.
    let l = launch(false);
    for (op, dst, src) in [
        (SMovB32, 124, [3, NONE]),
        (SMovB32, 110, [3, NONE]),
        (SMovB32, 251, [3, NONE]),
        (SAddU32, 3, [251, 4]),
        (SAddU32, 3, [253, 4]),
        (SAddU32, 3, [4, VGPR]),
    ] {
        assert!(classify(&l, &inst(op, Enc::Sop2, dst, [src[0], src[1], NONE])).is_none());
    }
    let mut i = inst(SSendmsg, Enc::Sopp, NONE, [NONE; 3]);
    i.imm = 1;
    assert!(classify(&l, &i).is_none());
}

#[test]
pub(super) fn fast_scalar_values_by_hand() {
    let l = launch(false);
    let mut w = wave(32, 0, 0);
    w.s[3] = 0xffff_fff0;
    w.s[4] = 0x20;
    let i = inst(Op::SAddU32, Enc::Sop2, 5, [3, 4, NONE]);
    assert!(matches!(exec(&l, &mut w, &i, true), Some(Ok(()))));
    assert_eq!((w.s[5], w.scc), (0x10, true));
    let i = inst(Op::SLshlB32, Enc::Sop2, 5, [4, 4, NONE]);
    assert!(matches!(exec(&l, &mut w, &i, true), Some(Ok(()))));
    // A count of 32 shifts by 0.
    assert_eq!((w.s[5], w.scc), (0x20, true));
    let i = inst(Op::SCmpLtI32, Enc::Sopc, NONE, [3, 4, NONE]);
    assert!(matches!(exec(&l, &mut w, &i, true), Some(Ok(()))));
    assert!(w.scc);
    // EXEC 0b1100 & 0b1010: EXEC 0b1000, the old one saved.
    w.set_exec(0b1100);
    w.s[6] = 0b1010;
    let i = inst(Op::SAndSaveexecB32, Enc::Sop1, 7, [6, NONE, NONE]);
    assert!(matches!(exec(&l, &mut w, &i, true), Some(Ok(()))));
    assert_eq!((w.s[7], w.s[126], w.scc), (0b1100, 0b1000, true));
    // A taken branch: next (0x1004) + 4 * imm.
    let mut i = inst(Op::SCbranchExecnz, Enc::Sopp, NONE, [NONE; 3]);
    i.imm = -1;
    assert!(matches!(exec(&l, &mut w, &i, true), Some(Ok(()))));
    assert_eq!(w.pc, 0x1000);
}

#[test]
pub(super) fn fast_shift64_and_compare_match_the_general_path() {
    use Op::*;
    let v = |r: u16| VGPR + r;
    let ops: [(Op, Enc); 5] = [
        (VLshlrevB64, Enc::Vop3),
        (VLshrrevB64, Enc::Vop3),
        (VAshrrevI64, Enc::Vop3),
        (VCmpU32, Enc::Vopc),
        (VCmpI32, Enc::Vop3),
    ];
    // Shift counts and compare sources: VGPRs (overlapping the destination too), an
    // SGPR, constants, a literal.
    let forms: [[u16; 2]; 6] = [
        [v(1), v(2)],
        [v(3), v(2)],
        [3, v(4)],
        [130, v(6)],
        [LIT, v(0)],
        [242, v(1)],
    ];
    let mut compared = 0;
    for (op, enc) in ops {
        let cmp = matches!(op, VCmpU32 | VCmpI32);
        for wave64 in [false, true] {
            let l = launch(wave64);
            let lanes = if wave64 { 64 } else { 32 };
            for (k, src) in forms.iter().enumerate() {
                for cond in 0..8u8 {
                    if !cmp && cond > 0 {
                        continue;
                    }
                    let mut i = inst(op, enc, v(2 + (k % 3) as u16), [src[0], src[1], NONE]);
                    i.lit = if k % 2 == 0 { 0xffff_fffe } else { 63 };
                    i.sub = cond;
                    if cmp {
                        i.dst = NONE;
                        i.sdst = if k % 2 == 0 { 106 } else { 10 };
                    }
                    for em in [!0u64, 0x0000_0001_8000_0001] {
                        let mut a = wave(lanes, 0, k + usize::from(cond));
                        let mut b = wave(lanes, 0, k + usize::from(cond));
                        a.set_exec(em);
                        b.set_exec(em);
                        let fast = exec(&l, &mut a, &i, true);
                        let slow = exec(&l, &mut b, &i, false);
                        assert!(matches!(slow, Some(Ok(()))), "{op:?} {src:?}");
                        if em != !0 {
                            // A lane inactive: the general path's.
                            assert!(fast.is_none(), "{op:?} {src:?}");
                            continue;
                        }
                        assert!(
                            matches!(fast, Some(Ok(()))),
                            "{op:?} {src:?}: the fast path declined"
                        );
                        assert_eq!(state(&a), state(&b), "{op:?} {src:?} wave64 {wave64}");
                        compared += 1;
                    }
                }
            }
        }
    }
    assert_eq!(compared, (3 + 2 * 8) * 2 * 6);
    // Left to the general path: a pair past the VGPR budget (8), CMPX, a null mask, and
    // a wave64 mask into VCC_HI..(the pair's high half not a plain SGPR).
    let l = launch(false);
    let i = inst(VLshlrevB64, Enc::Vop3, v(7), [v(1), v(2), NONE]);
    assert!(classify(&l, &i).is_none());
    let i = inst(VLshlrevB64, Enc::Vop3, v(2), [v(1), v(7), NONE]);
    assert!(classify(&l, &i).is_none());
    let mut i = inst(VCmpU32, Enc::Vopc, NONE, [v(1), v(2), NONE]);
    i.sdst = 106;
    i.cmpx = true;
    assert!(classify(&l, &i).is_none());
    i.cmpx = false;
    i.sdst = 124;
    assert!(classify(&l, &i).is_none());
    i.sdst = 107;
    assert!(classify(&launch(true), &i).is_none());
    assert!(classify(&l, &i).is_some());
}

#[test]
pub(super) fn fast_scalar_loads_match_the_general_path() {
    use Op::*;
    let mem = FlatMemory::new(0x1000, 256);
    let bytes: Vec<u8> = (0..256u32).map(|k| (k * 29 + 3) as u8).collect();
    assert!(mem.poke(0x1000, &bytes).is_ok());
    let ops = [
        SLoadB32, SLoadB64, SLoadB96, SLoadB128, SLoadB256, SLoadB512,
    ];
    let mut compared = 0;
    for op in ops {
        for wave64 in [false, true] {
            let l = launch(wave64);
            let lanes = if wave64 { 64 } else { 32 };
            // Offsets: aligned, unaligned (the low bits ignored), negative, and past the
            // end of memory (a fault, the same one each way).
            for (k, off) in [0i32, 0x44, 0x13, -8, 0xfc, 0x400].into_iter().enumerate() {
                // SOFFSET off, or the null register (gfx11's encoding of off).
                let soff = if k % 2 == 0 { NONE } else { 124 };
                let mut i = inst(op, Enc::Smem, 20, [4, soff, NONE]);
                i.imm = off;
                let prep = |w: &mut Wave| {
                    w.s[4] = 0x1010;
                    w.s[5] = 0;
                    // A partial EXEC does not matter to a scalar load.
                    w.set_exec(0x5);
                };
                let mut a = wave(lanes, 0, k);
                let mut b = wave(lanes, 0, k);
                prep(&mut a);
                prep(&mut b);
                let fast = exec_on(&mem, &l, &mut a, &i, true);
                let slow = exec_on(&mem, &l, &mut b, &i, false);
                match (fast, slow) {
                    (Some(Ok(())), Some(Ok(()))) => {}
                    (Some(Err(x)), Some(Err(y))) => {
                        assert_eq!(x.to_string(), y.to_string(), "{op:?} {off}");
                    }
                    (x, y) => panic!("{op:?} {off}: fast {x:?}, general {y:?}"),
                }
                assert_eq!(state(&a), state(&b), "{op:?} {off} wave64 {wave64}");
                compared += 1;
            }
        }
    }
    assert_eq!(compared, 6 * 2 * 6);
    // Left to the general path: SOFFSET, a destination past the plain SGPRs (VCC), a
    // base that is not an SGPR pair, other loads.
    let l = launch(false);
    for (op, dst, src) in [
        (SLoadB32, 20, [4, 5]),
        (SLoadB64, 106, [4, NONE]),
        (SLoadB32, 20, [124, NONE]),
        (SLoadB32, 20, [127, NONE]),
        (SLoadU8, 20, [4, NONE]),
        (SBufferLoadB32, 20, [4, NONE]),
    ] {
        let i = inst(op, Enc::Smem, dst, [src[0], src[1], NONE]);
        assert!(classify(&l, &i).is_none(), "{op:?} {dst} {src:?}");
    }
}
