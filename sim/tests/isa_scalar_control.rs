//! Semantics of the scalar control instructions (hardware registers, M0-relative moves, calls,
//! 64-bit bit compares, messages, debugger branches and hints, gfx12's barrier counts, gfx9's
//! VGPR index mode, VSKIP and fork/join), with the values the ISA guides' pseudo-code gives.
//! The programs are assembled with `llvm-mc-19 -arch=amdgcn -mcpu=<target>` (the source is
//! beside each), so the test needs no LLVM.

use hcq_sim::isa::{FlatMemory, FloatMode, Isa, IsaError, Launch, ScratchSetup, run};

const MEM: usize = 0x10_0000;
const CODE: u64 = 0x8_0000;
/// Where the programs store their results (s[0:1] holds it).
const OUT: u64 = 0x1000;
/// Wave slot 0 of the scratch ring.
const SCRATCH: u64 = 0x4_0000;
/// What s_memrealtime and MSG_RTN_GET_REALTIME read.
const CLOCK: u64 = 0x0123_4567_89AB_CDEF;

/// Runs `code` as one workgroup of `items` work-items of `isa` (wave64 on gfx9, wave32 else)
/// with s[0:1] = OUT, 64 VGPRs, 4 KiB of LDS and one scratch slot of 4 KiB per wave.
fn exec(isa: Isa, code: &[u32], items: u32) -> (Result<(), IsaError>, FlatMemory) {
    let gfx9 = isa == Isa::Gfx9;
    let mem = FlatMemory::new(0, MEM);
    let bytes: Vec<u8> = code.iter().flat_map(|w| w.to_le_bytes()).collect();
    mem.poke(CODE, &bytes).unwrap();
    let l = Launch {
        isa,
        gfx940: true,
        pgm: CODE,
        wave64: gfx9,
        user_sgprs: vec![OUT as u32, 0],
        // USER_SGPR_COUNT 2, SCRATCH_EN.
        rsrc2: (2 << 1) | 1,
        local: [items, 1, 1],
        groups: [1, 1, 1],
        lds_bytes: 0x1000,
        vgprs: 64,
        accum_offset: 32,
        scratch: ScratchSetup {
            base: SCRATCH,
            wave_bytes: 0x1000,
        },
        scratch_waves: 1,
        float: FloatMode {
            denorm32: true,
            denorm16_64: true,
        },
        budget: 1 << 16,
        clock: CLOCK,
        xcc: Default::default(),
    };
    let r = run(&l, &mem).map(|_| ());
    (r, mem)
}

fn words(mem: &FlatMemory, at: u64, n: usize) -> Vec<u32> {
    let mut b = vec![0u8; n * 4];
    mem.peek(at, &mut b).unwrap();
    b.chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn ok(isa: Isa, code: &[u32], items: u32, n: usize) -> Vec<u32> {
    let (r, mem) = exec(isa, code, items);
    r.unwrap();
    words(&mem, OUT, n)
}

fn fault(isa: Isa, code: &[u32]) -> String {
    let items = if isa == Isa::Gfx9 { 64 } else { 32 };
    exec(isa, code, items).0.unwrap_err().to_string()
}

#[test]
fn gfx11_mode_register_is_what_setreg_round_and_denorm_mode_write_and_the_valu_flushes_by_it() {
    // RDNA3 ISA: S_GETREG_B32 reads hwreg(id, offset, size) into the destination's low bits;
    // S_SETREG writes the source's low bits there; S_ROUND_MODE/S_DENORM_MODE write
    // MODE[3:0]/MODE[7:4]. MODE starts from RSRC1 (denormals kept: FP_DENORM 0xf) with
    // DX10_CLAMP and IEEE set: 0x3f0. FP_DENORM 0 flushes f32 denormals in the VALU; the
    // read-only HW_ID1 ignores a write. STATUS: SCC (bit 0), VALID (16). GPR_ALLOC.VGPR_SIZE
    // (15:8): 64 VGPRs in wave32 granules of 8 -> 7; LDS_ALLOC.LDS_SIZE (20:12): 4 KiB in
    // 512-byte granules -> 8; FLAT_SCR_LO: the wave's scratch slot.
    //
    //   s_getreg_b32 s10, hwreg(HW_REG_MODE)
    //   s_setreg_imm32_b32 hwreg(HW_REG_MODE, 0, 4), 0x5 / s_getreg_b32 s11, hwreg(HW_REG_MODE)
    //   s_round_mode 0x3 / s_denorm_mode 0x0 / s_getreg_b32 s12, hwreg(HW_REG_MODE, 0, 8)
    //   v_mov_b32 v1, 1 / v_mul_f32 v2, 1.0, v1          (the smallest denormal: flushed)
    //   s_mov_b32 s13, 0xf / s_setreg_b32 hwreg(HW_REG_MODE, 4, 4), s13
    //   v_mul_f32 v3, 1.0, v1                            (kept)
    //   s_getreg_b32 s14, hwreg(HW_REG_MODE, 4, 4)
    //   s_setreg_imm32_b32 hwreg(HW_REG_TRAPSTS), 0x12 / s_getreg_b32 s15, hwreg(HW_REG_TRAPSTS, 0, 8)
    //   s_setreg_imm32_b32 hwreg(HW_REG_HW_ID1), 0xffff / s_getreg_b32 s16, hwreg(HW_REG_HW_ID1)
    //   s_cmp_eq_u32 0, 0 / s_getreg_b32 s17, hwreg(HW_REG_STATUS)
    //   s_getreg_b32 s18..s22: IB_STS, GPR_ALLOC, LDS_ALLOC, FLAT_SCR_LO, hwreg(0, 0, 32)
    //   stores v2 v3 s10 s11 s12 s14 s15 s16 s17 s18 s19 s20 s21 s22
    let code = [
        0xB88AF801, 0xB9801801, 0x00000005, 0xB88BF801, 0xBF910003, 0xBF920000, 0xB88C3801,
        0x7E020281, 0x100402F2, 0xBE8D008F, 0xB90D1901, 0x100602F2, 0xB88E1901, 0xB980F803,
        0x00000012, 0xB88F3803, 0xB980F817, 0x0000FFFF, 0xB890F817, 0xBF068080, 0xB891F802,
        0xB892F807, 0xB893F805, 0xB894F806, 0xB895F814, 0xB896F800, 0xBEFE0081, 0x7E280280,
        0x7E08020A, 0x7E0A020B, 0x7E0C020C, 0x7E0E020E, 0x7E10020F, 0x7E120210, 0x7E140211,
        0x7E160212, 0x7E180213, 0x7E1A0214, 0x7E1C0215, 0x7E1E0216, 0xDC760000, 0x00000214,
        0xDC760010, 0x00000614, 0xDC760020, 0x00000A14, 0xDC6E0030, 0x00000E14, 0xBFB00000,
    ];
    let got = ok(Isa::Gfx11, &code, 32, 14);
    assert_eq!(
        got,
        [
            0,
            1,
            0x3f0,
            0x3f5,
            0x03,
            0xf,
            0x12,
            0,
            0x1_0001,
            0,
            0x700,
            0x8000,
            SCRATCH as u32,
            0
        ],
        "flushed, kept, MODE, MODE after setreg, MODE[7:0] after round/denorm_mode, \
         FP_DENORM, TRAPSTS, HW_ID1, STATUS, IB_STS, GPR_ALLOC, LDS_ALLOC, FLAT_SCR_LO, hwreg 0"
    );
}

#[test]
fn gfx9_movrels_movreld_index_sgprs_by_m0_and_hwregs_read_the_dispatch() {
    // CDNA3 ISA: S_MOVRELS_B32 D = SGPR[S0.addr + M0]; S_MOVRELD_B32 SGPR[D.addr + M0] = S0;
    // the 64-bit forms move pairs. With M0 = 2: s_movrels_b32 s20, s10 reads s12;
    // s_movrels_b64 s[22:23], s[10:11] reads s[12:13]; s_movreld_b32 s12, s24 writes s14;
    // s_movreld_b64 s[14:15], s[26:27] writes s[16:17]. HW_ID's WAVE_ID is 0; GPR_ALLOC:
    // VGPR_SIZE (13:8) 64/8 - 1 = 7, SGPR_SIZE (27:24) 6; TBA_LO 0 (no trap handler); MODE
    // starts at 0x3f0.
    //
    //   s_getreg_b32 s10, hwreg(HW_REG_MODE) / s_mov_b32 m0, 2
    //   s_mov_b32 s12, 0x1111 / s_mov_b32 s13, 0x2222 / s_mov_b32 s14, 0x3333
    //   s_movrels_b32 s20, s10 / s_movrels_b64 s[22:23], s[10:11]
    //   s_mov_b32 s24, 0x4444 / s_movreld_b32 s12, s24
    //   s_mov_b64 s[26:27], 0x55556666 / s_movreld_b64 s[14:15], s[26:27]
    //   s_getreg_b32 s28, hwreg(HW_REG_HW_ID) / s29 GPR_ALLOC / s30 TBA_LO
    //   stores s20 s22 s23 s14 s16 s17 s28 s29 s30 s10
    let code = [
        0xB88AF801, 0xBEFC0082, 0xBE8C00FF, 0x00001111, 0xBE8D00FF, 0x00002222, 0xBE8E00FF,
        0x00003333, 0xBE942A0A, 0xBE962B0A, 0xBE9800FF, 0x00004444, 0xBE8C2C18, 0xBE9A01FF,
        0x55556666, 0xBE8E2D1A, 0xB89CF804, 0xB89DF805, 0xB89EF810, 0xBEFE0181, 0x7E280280,
        0x7E16020A, 0x7E040214, 0x7E060216, 0x7E080217, 0x7E0A020E, 0x7E0C0210, 0x7E0E0211,
        0x7E10021C, 0x7E12021D, 0x7E14021E, 0xDC7C8000, 0x00000214, 0xDC7C8010, 0x00000614,
        0xDC748020, 0x00000A14, 0xBF810000,
    ];
    let got = ok(Isa::Gfx9, &code, 64, 10);
    assert_eq!(
        got,
        [
            0x1111,
            0x1111,
            0x2222,
            0x4444,
            0x5555_6666,
            0,
            0,
            0x0600_0700,
            0,
            0x3f0
        ]
    );
}

#[test]
fn gfx9_movrels_beyond_the_sgprs_faults() {
    //   s_mov_b32 m0, 0x60 / s_movrels_b32 s0, s10 (SGPR 106: beyond s101) / s_endpgm
    let e = fault(Isa::Gfx9, &[0xBEFC00FF, 0x60, 0xBE802A0A, 0xBF810000]);
    assert!(
        e.contains("s_movrels_b32 addresses SGPR 10 + M0 96 = 106"),
        "{e}"
    );
}

#[test]
fn gfx11_call_movrelsd_bitcmp64_sendmsg_rtn_and_debugger_branches() {
    // RDNA3 ISA: S_MOVRELSD_2_B32 SGPR[D.addr + M0[25:16]] = SGPR[S0.addr + M0[9:0]]
    // (M0 = 3 << 16 | 1: s_movrelsd_2_b32 s5, s10 moves s11 to s8). S_CALL_B64: D = PC + 4,
    // PC += 4 + SIMM16 * 4 (the return address is `after`, offset 0x18). S_BITCMP1_B64:
    // SCC = S0.u64[S1[5:0]] == 1 (bit 63 of 0x80000000_00000002: 1; bit 0: 0),
    // S_BITCMP0_B64: == 0 (bit 64 & 63 = 0: 1; bit 1: 0). MSG_RTN_GET_REALTIME returns the
    // clock s_memrealtime reads (64 bits), MSG_RTN_GET_TBA 0 (no trap handler). The four
    // debugger branches are not taken (STATUS.COND_DBG_* are 0 without a debugger): each
    // add after them runs. Perf levels, trace data, waits, wakeup, sethalt 0, setkill 0,
    // s_version and s_waitcnt_depctr have no effect.
    //
    //   s_mov_b32 m0, 0x30001 / s_mov_b32 s11, 0x7777 / s_movrelsd_2_b32 s5, s10
    //   s_call_b64 s[20:21], target
    // after: s_branch done
    // target: s_mov_b32 s22, 0xabc / s_setpc_b64 s[20:21]
    // done: s_mov_b32 s26, 2 / s_mov_b32 s27, 0x80000000
    //   s_bitcmp1_b64 s[26:27], 63 / s_cselect_b32 s30, 1, 0 (and bit 0 -> s31)
    //   s_bitcmp0_b64 s[26:27], 64 / s_cselect_b32 s32, 1, 0 (and bit 1 -> s33)
    //   s_sendmsg_rtn_b64 s[34:35], sendmsg(MSG_RTN_GET_REALTIME)
    //   s_sendmsg_rtn_b32 s36, sendmsg(MSG_RTN_GET_TBA)
    //   s_mov_b32 s37, 0 / s_cbranch_cdbgsys l1 / s_add_u32 s37, s37, 1 / l1: ... (x4)
    //   s_incperflevel 1 / s_decperflevel 1 / s_ttracedata_imm 0x5 / s_ttracedata
    //   s_wait_idle / s_wait_event 0x0 / s_wakeup / s_sethalt 0 / s_setkill 0
    //   s_version UC_VERSION_GFX11 / s_waitcnt_depctr depctr_va_vdst(0)
    //   stores s8 s22 s20 s21 s30 s31 s32 s33 s34 s35 s36 s37
    let code = [
        0xBEFD00FF, 0x00030001, 0xBE8B00FF, 0x00007777, 0xBE85440A, 0xBA140001, 0xBFA00003,
        0xBE9600FF, 0x00000ABC, 0xBE804814, 0xBE9A0082, 0xBE9B00FF, 0x80000000, 0xBF0FBF1A,
        0x981E8081, 0xBF0F801A, 0x981F8081, 0xBF0EC01A, 0x98208081, 0xBF0E811A, 0x98218081,
        0xBEA24D83, 0xBEA44C85, 0xBEA50080, 0xBFA70001, 0x80258125, 0xBFA80001, 0x80258125,
        0xBFA90001, 0x80258125, 0xBFAA0001, 0x80258125, 0xBFB80001, 0xBFB90001, 0xBFBB0005,
        0xBFBA0000, 0xBF8A0000, 0xBF8B0000, 0xBFB40000, 0xBF820000, 0xBF810000, 0xB0800006,
        0xBF880F9F, 0xBEFE0081, 0x7E280280, 0x7E000208, 0x7E020216, 0x7E040214, 0x7E060215,
        0x7E08021E, 0x7E0A021F, 0x7E0C0220, 0x7E0E0221, 0x7E100222, 0x7E120223, 0x7E140224,
        0x7E160225, 0xDC760000, 0x00000014, 0xDC760010, 0x00000414, 0xDC760020, 0x00000814,
        0xBFB00000,
    ];
    let got = ok(Isa::Gfx11, &code, 32, 12);
    let ret = CODE + 0x18;
    assert_eq!(
        got,
        [
            0x7777,
            0xabc,
            ret as u32,
            (ret >> 32) as u32,
            1,
            0,
            1,
            0,
            CLOCK as u32,
            (CLOCK >> 32) as u32,
            0,
            4
        ]
    );
}

#[test]
fn gfx12_barrier_signal_isfirst_and_state_count_the_waves_of_a_workgroup() {
    // RDNA4 ISA 5.6 and S_BARRIER_SIGNAL_ISFIRST / S_GET_BARRIER_STATE: SCC = the barrier's
    // signal count was 0 (the first wave to signal); the state is {signalCnt[22:16],
    // memberCnt[10:4], valid[0]}; the count resets when the barrier completes. Three waves
    // (96 work-items): in each round wave 0 signals first; after its signal wave k reads a
    // count of k + 1 and 3 members; after the barrier completes the count is 0 again.
    // Barrier 0 is a NOP (SCC = 0).
    //
    //   s_getreg_b32 s10, hwreg(HW_REG_HW_ID1)           (WAVE_ID)
    //   s_barrier_signal_isfirst -1 / s_cselect_b32 s11, 1, 0 / s_get_barrier_state s12, -1
    //   s_barrier_wait -1
    //   s_barrier_signal_isfirst -1 / s_cselect_b32 s13, 1, 0 / s_barrier_wait -1
    //   s_get_barrier_state s14, -1
    //   s_cmp_eq_u32 0, 0 / s_barrier_signal_isfirst 0 / s_cselect_b32 s15, 1, 0
    //   stores s10..s15 at OUT + 32 * wave
    let code = [
        0xB88AF817, 0xBE804FC1, 0x980B8081, 0xBE8C50C1, 0xBF94FFFF, 0xBE804FC1, 0x980D8081,
        0xBF94FFFF, 0xBE8E50C1, 0xBF068080, 0xBE804F80, 0x980F8081, 0x8410850A, 0x80101000,
        0xBE910001, 0xBEFE0081, 0x7E280280, 0x7E00020A, 0x7E02020B, 0x7E04020C, 0x7E06020D,
        0x7E08020E, 0x7E0A020F, 0xEE074010, 0x00000000, 0x00000014, 0xEE06C010, 0x02000000,
        0x00001014, 0xBFB00000,
    ];
    let got = ok(Isa::Gfx12, &code, 96, 24);
    for k in 0..3u32 {
        let w = &got[8 * k as usize..8 * k as usize + 6];
        let first = u32::from(k == 0);
        assert_eq!(
            w,
            [
                k,
                first,
                ((k + 1) << 16) | (3 << 4) | 1,
                first,
                (3 << 4) | 1,
                0
            ],
            "wave {k}: id, isfirst, state after signal, isfirst again, state after, barrier 0"
        );
    }
}

#[test]
fn gfx9_vgpr_index_mode_vskip_and_fork_join() {
    // Vega/CDNA3 ISA: S_SET_GPR_IDX_ON sets MODE.GPR_IDX_EN, M0[7:0] = S0[7:0] and
    // M0[15:12] = the operands indexed; VALU VGPR operands so enabled are offset by M0[7:0]
    // (v_mov_b32 v1, v10 with index 3 on SRC0 and DST: v4 = v13); S_SET_GPR_IDX_IDX and
    // _MODE change the index and the operands; _OFF ends it. S_SETVSKIP: MODE.VSKIP =
    // S0[S1[4:0]] skips vector instructions (v8 keeps 5). S_CBRANCH_I_FORK (GCN3 ISA): with
    // mask 0xf the 4 passing lanes run first at the target (fewer than the 60 failing ones),
    // the failing side's {PC, mask} pushed at SGPR[CSP * 4]; S_CBRANCH_JOIN pops it when CSP
    // is not the saved one and falls through once it is, leaving EXEC the popped mask. The
    // stack overwrites s[0:3], so the output address is kept in s[40:41].
    //
    //   s_mov_b64 s[40:41], s[0:1]
    //   v_mov_b32 v10, 10 / v_mov_b32 v13, 13 / v_mov_b32 v4, 0 / v_mov_b32 v8, 5
    //   s_mov_b32 s2, 3 / s_mov_b32 s3, 1
    //   s_set_gpr_idx_on s2, gpr_idx(SRC0,DST) / v_mov_b32 v1, v10 / s_set_gpr_idx_off
    //   v_mov_b32 v5, v10
    //   s_set_gpr_idx_on s2, gpr_idx(SRC0) / s_set_gpr_idx_idx s3 / v_mov_b32 v6, v12
    //   s_set_gpr_idx_mode gpr_idx(DST) / v_mov_b32 v6, v10 / s_set_gpr_idx_off
    //   s_mov_b32 s4, 2 / s_setvskip s4, 1 / v_mov_b32 v8, 99 / s_setvskip 0, 0
    //   v_mov_b32 v9, 7
    //   s_getreg_b32 s20, hwreg(HW_REG_MODE, 29, 3) / s_mov_b64 s[22:23], 0xf
    //   v_mov_b32 v2, 0 / s_cbranch_i_fork s[22:23], target
    //   v_mov_b32 v2, 2 / s_branch join
    // target: v_mov_b32 v2, 1
    // join: s_cbranch_join s20 / s_mov_b64 s[24:25], exec
    //   stores v2 of every lane at OUT + 64, then v4..v9, s24, s25
    let code = [
        0xBEA80100, 0x7E14028A, 0x7E1A028D, 0x7E080280, 0x7E100285, 0xBE820083, 0xBE830081,
        0xBF110902, 0x7E02030A, 0xBF9C0000, 0x7E0A030A, 0xBF110102, 0xBE803203, 0x7E0C030C,
        0xBF9D0008, 0x7E0C030A, 0xBF9C0000, 0xBE840082, 0xBF108104, 0x7E1002FF, 0x00000063,
        0xBF108080, 0x7E120287, 0xB8941741, 0xBE96018F, 0x7E040280, 0xB8160002, 0x7E040282,
        0xBF820001, 0x7E040281, 0xBE802E14, 0xBE98017E, 0xBEFE01C1, 0x243C0082, 0xDC708040,
        0x0028021E, 0xBEFE0181, 0x7E280280, 0x7E140218, 0x7E160219, 0xDC7C8000, 0x00280414,
        0xDC7C8010, 0x00280814, 0xBF810000,
    ];
    let (r, mem) = exec(Isa::Gfx9, &code, 64);
    r.unwrap();
    assert_eq!(
        words(&mem, OUT, 8),
        [13, 10, 13, 10, 5, 7, 0xffff_fff0, 0xffff_ffff],
        "v4 (indexed dst and src), v5 (not indexed), v6 (src index 1), v7 (dst index 1), \
         v8 (skipped), v9, EXEC after the join"
    );
    let lanes = words(&mem, OUT + 64, 64);
    let want: Vec<u32> = (0..64).map(|l| if l < 4 { 1 } else { 2 }).collect();
    assert_eq!(lanes, want);
}

#[test]
fn messages_halts_and_named_barriers_fault_naming_why() {
    // gfx11 s_sendmsg sendmsg(MSG_INTERRUPT): the driver's interrupt handler.
    let e = fault(Isa::Gfx11, &[0xBFB60001, 0xBFB00000]);
    assert!(e.contains("s_sendmsg MSG_INTERRUPT"), "{e}");
    // gfx11 s_sendmsg_rtn_b32 s0, sendmsg(0, 0, 0): message 0 is reserved.
    let e = fault(Isa::Gfx11, &[0xBE804C00, 0xBFB00000]);
    assert!(e.contains("message 0 (word 0x0) is reserved"), "{e}");
    // gfx11 s_sendmsg sendmsg(MSG_DEALLOC_VGPRS) / s_endpgm: delivered (nothing to model).
    exec(Isa::Gfx11, &[0xBFB60003, 0xBFB00000], 32).0.unwrap();
    // gfx9 s_sethalt 1.
    let e = fault(Isa::Gfx9, &[0xBF8D0001, 0xBF810000]);
    assert!(e.contains("s_sethalt 1"), "{e}");
    // gfx12 s_barrier_signal 1: no named barrier on RDNA4.
    let e = fault(Isa::Gfx12, &[0xBE804E81, 0xBFB00000]);
    assert!(e.contains("s_barrier_signal of barrier 1"), "{e}");
}
