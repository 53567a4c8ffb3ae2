//! Semantics of the instructions that closed the instruction list's last gaps (gfx1201's block
//! loads/stores, ordered add and transposing loads; gfx1100's subvector loop and BVH stack):
//! expected values follow the ISA guides' text and pseudo-code, quoted beside each test.
//! Programs assembled with `llvm-mc-19 -show-encoding` (the source is beside each program).

use hcq_sim::isa::{FlatMemory, FloatMode, Isa, IsaError, Launch, ScratchSetup, run};

const MEM: usize = 0x10_0000;
const CODE: u64 = 0x8_0000;
const OUT: u64 = 0x1000;
const DATA: u64 = 0x1_0000;
const DATA2: u64 = 0x2_0000;
const SCRATCH: u64 = 0x4_0000;

/// Memory with `code` at CODE, `fill` at OUT..OUT+0x8000 and `data`/`data2` at DATA/DATA2.
fn memory(code: &[u32], fill: u32, data: &[u32], data2: &[u32]) -> FlatMemory {
    let mem = FlatMemory::new(0, MEM);
    let b = |w: &[u32]| -> Vec<u8> { w.iter().flat_map(|x| x.to_le_bytes()).collect() };
    mem.poke(CODE, &b(code)).unwrap();
    mem.poke(OUT, &b(&vec![fill; 0x2000])).unwrap();
    mem.poke(DATA, &b(data)).unwrap();
    mem.poke(DATA2, &b(data2)).unwrap();
    mem
}

/// Runs `code` in one wave of `isa` (wave64 when `wave64`) with s[0:1] = OUT, s[2:3] = DATA,
/// s[4:5] = DATA2, 128 VGPRs, 4 KiB of LDS and 1 KiB of scratch per lane.
fn launch(isa: Isa, wave64: bool, mem: &FlatMemory) -> Result<(), IsaError> {
    let lanes = if wave64 { 64 } else { 32 };
    let l = Launch {
        isa,
        gfx940: true,
        pgm: CODE,
        wave64,
        // USER_SGPR_COUNT 6, SCRATCH_EN.
        rsrc2: (6 << 1) | 1,
        user_sgprs: vec![OUT as u32, 0, DATA as u32, 0, DATA2 as u32, 0],
        local: [lanes, 1, 1],
        groups: [1, 1, 1],
        lds_bytes: 0x1000,
        vgprs: 128,
        accum_offset: 128,
        scratch: ScratchSetup {
            base: SCRATCH,
            wave_bytes: 0x400 * u64::from(lanes),
        },
        scratch_waves: 1,
        float: FloatMode {
            denorm32: true,
            denorm16_64: true,
        },
        budget: 1 << 16,
        clock: 0,
        xcc: Default::default(),
    };
    run(&l, mem).map(|_| ())
}

fn peek(mem: &FlatMemory, at: u64, n: usize) -> Vec<u32> {
    let mut out = vec![0u8; 4 * n];
    mem.peek(at, &mut out).unwrap();
    out.chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

// gfx1201 (v8..v39 first hold 0xdead0000 + n, v42 0x42424242, v100 0x100100):
//   v_mov_b32 v8, 0xdead0000
//   v_mov_b32 v9, 0xdead0001
//   v_mov_b32 v10, 0xdead0002
//   v_mov_b32 v11, 0xdead0003
//   v_mov_b32 v12, 0xdead0004
//   v_mov_b32 v13, 0xdead0005
//   v_mov_b32 v14, 0xdead0006
//   v_mov_b32 v15, 0xdead0007
//   v_mov_b32 v16, 0xdead0008
//   v_mov_b32 v17, 0xdead0009
//   v_mov_b32 v18, 0xdead000a
//   v_mov_b32 v19, 0xdead000b
//   v_mov_b32 v20, 0xdead000c
//   v_mov_b32 v21, 0xdead000d
//   v_mov_b32 v22, 0xdead000e
//   v_mov_b32 v23, 0xdead000f
//   v_mov_b32 v24, 0xdead0010
//   v_mov_b32 v25, 0xdead0011
//   v_mov_b32 v26, 0xdead0012
//   v_mov_b32 v27, 0xdead0013
//   v_mov_b32 v28, 0xdead0014
//   v_mov_b32 v29, 0xdead0015
//   v_mov_b32 v30, 0xdead0016
//   v_mov_b32 v31, 0xdead0017
//   v_mov_b32 v32, 0xdead0018
//   v_mov_b32 v33, 0xdead0019
//   v_mov_b32 v34, 0xdead001a
//   v_mov_b32 v35, 0xdead001b
//   v_mov_b32 v36, 0xdead001c
//   v_mov_b32 v37, 0xdead001d
//   v_mov_b32 v38, 0xdead001e
//   v_mov_b32 v39, 0xdead001f
//   v_mov_b32 v42, 0x42424242
//   v_mov_b32 v100, 0x100100
//   v_lshlrev_b32 v1, 8, v0
//   v_add_co_u32 v2, vcc_lo, s2, v1
//   v_add_co_ci_u32_e64 v3, null, s3, 0, vcc_lo
//   s_mov_b32 exec_lo, 0xfffffff5
//   s_mov_b32 m0, 0x80000005
//   global_load_block v[8:39], v[2:3], off offset:8
//   s_mov_b32 m0, 0xf0000002
//   global_load_block v[100:131], v[2:3], off
//   s_wait_loadcnt 0
//   v_lshlrev_b32 v4, 7, v0
//   s_mov_b32 m0, 6
//   global_store_block v4, v[8:39], s[0:1]
//   s_mov_b32 m0, -1
//   global_store_block v4, v[8:39], s[0:1] offset:4096
//   v_mov_b32 v5, 16
//   scratch_store_block v5, v[8:39], off
//   s_mov_b32 m0, 0xb
//   scratch_load_block v[40:71], v5, off offset:4
//   s_wait_loadcnt 0
//   s_mov_b32 m0, 0xf
//   global_store_block v4, v[40:71], s[0:1] offset:8192
//   s_mov_b32 m0, 0xf0000003
//   global_store_block v4, v[100:131], s[0:1] offset:12288
//   s_mov_b32 m0, 0
//   global_store_block v4, v[8:39], s[0:1] offset:16384
//   s_endpgm
const BLOCK_GFX1201: &[u32] = &[
    0x7E1002FF, 0xDEAD0000, 0x7E1202FF, 0xDEAD0001, 0x7E1402FF, 0xDEAD0002, 0x7E1602FF, 0xDEAD0003,
    0x7E1802FF, 0xDEAD0004, 0x7E1A02FF, 0xDEAD0005, 0x7E1C02FF, 0xDEAD0006, 0x7E1E02FF, 0xDEAD0007,
    0x7E2002FF, 0xDEAD0008, 0x7E2202FF, 0xDEAD0009, 0x7E2402FF, 0xDEAD000A, 0x7E2602FF, 0xDEAD000B,
    0x7E2802FF, 0xDEAD000C, 0x7E2A02FF, 0xDEAD000D, 0x7E2C02FF, 0xDEAD000E, 0x7E2E02FF, 0xDEAD000F,
    0x7E3002FF, 0xDEAD0010, 0x7E3202FF, 0xDEAD0011, 0x7E3402FF, 0xDEAD0012, 0x7E3602FF, 0xDEAD0013,
    0x7E3802FF, 0xDEAD0014, 0x7E3A02FF, 0xDEAD0015, 0x7E3C02FF, 0xDEAD0016, 0x7E3E02FF, 0xDEAD0017,
    0x7E4002FF, 0xDEAD0018, 0x7E4202FF, 0xDEAD0019, 0x7E4402FF, 0xDEAD001A, 0x7E4602FF, 0xDEAD001B,
    0x7E4802FF, 0xDEAD001C, 0x7E4A02FF, 0xDEAD001D, 0x7E4C02FF, 0xDEAD001E, 0x7E4E02FF, 0xDEAD001F,
    0x7E5402FF, 0x42424242, 0x7EC802FF, 0x00100100, 0x30020088, 0xD7006A02, 0x00020202, 0xD5207C03,
    0x01A90003, 0xBEFE00CB, 0xBEFD00FF, 0x80000005, 0xEE14C07C, 0x00000008, 0x00000802, 0xBEFD00FF,
    0xF0000002, 0xEE14C07C, 0x00000064, 0x00000002, 0xBFC00000, 0x30080087, 0xBEFD0086, 0xEE150000,
    0x04000000, 0x00000004, 0xBEFD00C1, 0xEE150000, 0x04000000, 0x00100004, 0x7E0A0290, 0xED15007C,
    0x04020000, 0x00000005, 0xBEFD008B, 0xED14C07C, 0x00020028, 0x00000405, 0xBFC00000, 0xBEFD008F,
    0xEE150000, 0x14000000, 0x00200004, 0xBEFD00FF, 0xF0000003, 0xEE150000, 0x32000000, 0x00300004,
    0xBEFD0080, 0xEE150000, 0x04000000, 0x00400004, 0xBFB00000,
];

/// RDNA4 ISA 11.5 "Block VGPR Load & Store": `for n in 0..31: if M0[n]: load/store VGPR[vdst +
/// n] at IOFFSET; IOFFSET += 4` (memory holes stay holes, M0 == 0 moves nothing); 11.5.1: a
/// load's out-of-range VGPR is ignored, a store's reads VGPR0. Lanes 1 and 3 are inactive.
#[test]
fn block_loads_and_stores_move_the_m0_selected_vgprs_to_dwords_at_4_n() {
    let data: Vec<u32> = (0..64 * 32).map(|k| 0x1000_0000 + k).collect();
    let mem = memory(BLOCK_GFX1201, 0xAAAA_AAAA, &data, &[]);
    launch(Isa::Gfx12, false, &mem).unwrap();
    let sentinel = |n: u32| 0xdead_0000 + n;
    for l in 0..32u32 {
        let at = |off: u64| OUT + off + 128 * u64::from(l);
        let (s1, s2, s3, s4, s5) = (
            peek(&mem, at(0), 32),
            peek(&mem, at(4096), 32),
            peek(&mem, at(8192), 4),
            peek(&mem, at(12288), 32),
            peek(&mem, at(16384), 32),
        );
        if l == 1 || l == 3 {
            for s in [&s1, &s2, &s4, &s5] {
                assert!(s.iter().all(|&x| x == 0xAAAA_AAAA), "inactive lane {l}");
            }
            assert!(s3.iter().all(|&x| x == 0xAAAA_AAAA), "inactive lane {l}");
            continue;
        }
        // The load: M0 = 0x80000005 with offset:8: v8, v10, v39 from dwords 2, 4, 33 of the
        // lane's 256-byte row.
        let mem_at = |k: u32| 0x1000_0000 + 64 * l + k;
        let v = |n: u32| match n {
            0 => mem_at(2),
            2 => mem_at(4),
            31 => mem_at(33),
            _ => sentinel(n),
        };
        // M0 = 6: only dwords 1 and 2 are written; dword 0 and 3.. keep the fill.
        let mut want = vec![0xAAAA_AAAA; 32];
        want[1] = v(1);
        want[2] = v(2);
        assert_eq!(s1, want, "lane {l}: m0 = 6");
        assert_eq!(s2, (0..32).map(v).collect::<Vec<_>>(), "lane {l}: m0 = -1");
        // Scratch: all 32 stored at private offset 16, M0 = 0xb reloads from 20: v40 = v9,
        // v41 = v10, v42 skipped (its own value), v43 = private dword 32 = v12.
        assert_eq!(s3, [v(1), v(2), 0x4242_4242, v(4)], "lane {l}: scratch");
        // v101 was loaded (M0 bit 1: dword 1 of the row, no offset); v128..v131 are beyond
        // the 128 VGPRs: the load ignored them, the store wrote VGPR0 (the lane id).
        let mut want = vec![0xAAAA_AAAA; 32];
        want[0] = 0x10_0100;
        want[1] = mem_at(1);
        for w in &mut want[28..] {
            *w = l;
        }
        assert_eq!(s4, want, "lane {l}: out-of-range VGPRs");
        assert!(
            s5.iter().all(|&x| x == 0xAAAA_AAAA),
            "lane {l}: m0 = 0 moves nothing"
        );
    }
    // The scratch layout is the swizzled one (dword-interleaved lanes): private dword 4 + n of
    // lane l at slot + (4 + n) * 4 * 32 + 4 * l.
    let s = peek(&mem, SCRATCH + 4 * 4 * 32, 32 * 32);
    for l in [0usize, 2, 31] {
        for n in 0..32usize {
            let got = s[n * 32 + l];
            let row = 0x1000_0000 + 64 * l as u32;
            let want = match n {
                0 => row + 2,
                2 => row + 4,
                31 => row + 33,
                _ => sentinel(n as u32),
            };
            assert_eq!(got, want, "scratch lane {l} dword {n}");
        }
    }
}

// gfx1201 (DATA2 holds each lane's address, ID and amount):
//   s_mov_b32 exec_lo, 15
//   v_lshlrev_b32 v1, 4, v0
//   global_load_b128 v[10:13], v1, s[4:5]
//   s_wait_loadcnt 0
//   global_atomic_ordered_add_b64 v[8:9], v[10:11], v[12:13], off th:TH_ATOMIC_RETURN
//   s_wait_loadcnt 0
//   v_lshlrev_b32 v2, 3, v0
//   global_store_b64 v2, v[8:9], s[0:1]
//   s_mov_b32 exec_lo, 1
//   global_atomic_ordered_add_b64 v[10:11], v[12:13], off offset:24
//   s_endpgm
const ORDERED_ADD_GFX1201: &[u32] = &[
    0xBEFE008F, 0x30020084, 0xEE05C004, 0x0000000A, 0x00000001, 0xBFC00000, 0xEE1CC07C, 0x06100008,
    0x0000000A, 0xBFC00000, 0x30040083, 0xEE06C000, 0x04000000, 0x00000002, 0xBEFE0081, 0xEE1CC07C,
    0x06000000, 0x0000180A, 0xBFB00000,
];

/// GLOBAL_ATOMIC_ORDERED_ADD_B64 (RDNA4 ISA): `shader_id = DATA[31:0]; shader_offset =
/// DATA[63:32]; if MEM[ADDR].b32 == shader_id: MEM[ADDR] = (id + 1) & VGT_GS_MAX_WAVE_ID;
/// MEM[ADDR + 4] += shader_offset; RETURN_DATA = the old pair`.
#[test]
fn ordered_add_increments_the_id_and_adds_the_value_only_when_the_id_matches() {
    let pair = |k: u64| DATA + 8 * k;
    // Memory pairs: (5, 100), (9, 200), (0xfe, 0xffffffff), (5, 1000).
    let data = [5, 100, 9, 200, 0xfe, 0xffff_ffff, 5, 1000];
    let lo = |a: u64| a as u32;
    // Lane 0: pair 0 with ID 5 (matches), lane 1: pair 1 with ID 8 (does not), lane 2: pair 0
    // again with ID 6 (matches after lane 0's increment: lanes go in order), lane 3: pair 2.
    let data2 = [
        lo(pair(0)),
        0,
        5,
        7,
        lo(pair(1)),
        0,
        8,
        7,
        lo(pair(0)),
        0,
        6,
        3,
        lo(pair(2)),
        0,
        0xfe,
        2,
    ];
    let mem = memory(ORDERED_ADD_GFX1201, 0, &data, &data2);
    launch(Isa::Gfx12, false, &mem).unwrap();
    assert_eq!(
        peek(&mem, OUT, 8),
        [5, 100, 9, 200, 6, 107, 0xfe, 0xffff_ffff],
        "the pairs before each lane's add"
    );
    // Pair 3 by lane 0's no-return form (offset 24, ID 5, amount 7).
    assert_eq!(
        peek(&mem, DATA, 8),
        [7, 110, 9, 200, 0xff, 1, 6, 1007],
        "the pairs after"
    );
}

// gfx1201 (DATA holds the pair (0xff, 0)):
//   s_mov_b32 exec_lo, 1
//   v_mov_b32 v10, s2
//   v_mov_b32 v11, s3
//   v_mov_b32 v12, 0xff
//   v_mov_b32 v13, 1
//   global_atomic_ordered_add_b64 v[8:9], v[10:11], v[12:13], off th:TH_ATOMIC_RETURN
//   s_endpgm
const ORDERED_ADD_WRAP_GFX1201: &[u32] = &[
    0xBEFE0081, 0x7E140202, 0x7E160203, 0x7E1802FF, 0x000000FF, 0x7E1A0281, 0xEE1CC07C, 0x06100008,
    0x0000000A, 0xBFB00000,
];

/// An ID of 0xff matching: the new ID depends on VGT_GS_MAX_WAVE_ID (0xff or 0x3ff as the
/// drivers program it), which a compute queue does not have: a named fault, memory untouched.
#[test]
fn ordered_add_past_id_0xff_is_a_named_fault() {
    let mem = memory(ORDERED_ADD_WRAP_GFX1201, 0, &[0xff, 0], &[]);
    let e = launch(Isa::Gfx12, false, &mem).unwrap_err().to_string();
    assert!(e.contains("VGT_GS_MAX_WAVE_ID"), "{e}");
    assert_eq!(peek(&mem, DATA, 2), [0xff, 0]);
}

// gfx1100, wave64 and wave32 alike (EXEC from DATA; s_subvector_loop_begin's 12 is the
// s_mov_b64 after the loop end, the end's 0xfff4 the s_add_u32 after the begin, as
// llvm-objdump-19 resolves them); each pass stores its number at OUT + 4 * lane and
// (EXEC_LO, EXEC_HI, s10) at OUT + 1024 + 16 * pass; after the loop (EXEC, s10, s11) at
// OUT + 2048:
//   s_load_b64 s[20:21], s[2:3], 0x0
//   s_waitcnt lgkmcnt(0)
//   s_mov_b64 exec, s[20:21]
//   s_mov_b32 s10, 0x55
//   s_mov_b32 s11, 0
//   v_lshlrev_b32 v1, 2, v0
//   s_subvector_loop_begin s10, 12
//   s_add_u32 s11, s11, 1
//   v_mov_b32 v2, s11
//   global_store_b32 v1, v2, s[0:1]
//   v_mov_b32 v3, exec_lo
//   v_mov_b32 v4, exec_hi
//   v_mov_b32 v5, s10
//   s_lshl_b32 s12, s11, 4
//   v_mov_b32 v7, s12
//   global_store_b96 v7, v[3:5], s[0:1] offset:1024
//   s_subvector_loop_end s10, 0xfff4
//   s_mov_b64 s[22:23], exec
//   s_mov_b64 exec, 1
//   v_mov_b32 v3, s22
//   v_mov_b32 v4, s23
//   v_mov_b32 v5, s10
//   v_mov_b32 v6, s11
//   v_mov_b32 v7, 0
//   global_store_b128 v7, v[3:6], s[0:1] offset:2048
//   s_endpgm
const SUBVECTOR_GFX1100: &[u32] = &[
    0xF4040501, 0xF8000000, 0xBF89FC07, 0xBEFE0114, 0xBE8A00FF, 0x00000055, 0xBE8B0080, 0x30020082,
    0xBB0A000C, 0x800B810B, 0x7E04020B, 0xDC6A0000, 0x00000201, 0x7E06027E, 0x7E08027F, 0x7E0A020A,
    0x840C840B, 0x7E0E020C, 0xDC720400, 0x00000307, 0xBB8AFFF4, 0xBE96017E, 0xBEFE0181, 0x7E060216,
    0x7E080217, 0x7E0A020A, 0x7E0C020B, 0x7E0E0280, 0xDC760800, 0x00000307, 0xBFB00000,
];

/// Runs SUBVECTOR_GFX1100 with EXEC = `exec`; returns the pass each lane ran in (0: none), the
/// per-pass records and (EXEC, s10, pass count) after the loop.
fn subvector(wave64: bool, exec: u64) -> (Vec<u32>, Vec<u32>, (u64, u32, u32)) {
    // CAST: halves of a u64.
    let mem = memory(
        SUBVECTOR_GFX1100,
        0,
        &[exec as u32, (exec >> 32) as u32],
        &[],
    );
    launch(Isa::Gfx11, wave64, &mem).unwrap();
    let end = peek(&mem, OUT + 2048, 4);
    (
        peek(&mem, OUT, if wave64 { 64 } else { 32 }),
        peek(&mem, OUT + 1024 + 16, 20),
        (
            u64::from(end[0]) | (u64::from(end[1]) << 32),
            end[2],
            end[3],
        ),
    )
}

/// The pass (1 or 2) each lane of `lo`/`hi` runs in, as the loop's passes give them.
fn passes(lanes: usize, first: u64, second: u64) -> Vec<u32> {
    (0..lanes)
        .map(|l| {
            if first >> l & 1 == 1 {
                1
            } else if second >> l & 1 == 1 {
                2
            } else {
                0
            }
        })
        .collect()
}

/// RDNA2 ISA 4.2.1 "Subvector Execution" and the SOPK pseudo-code (see `control.rs`): the
/// body runs for EXEC's low half with EXEC_HI saved in the SGPR, then for the high half with
/// EXEC_LO saved; zero, one or two passes by EXEC; EXEC restored at the end.
#[test]
fn subvector_loop_runs_the_low_half_then_the_high_half_of_exec() {
    let rec = |r: &[u32], pass: usize| r[(pass - 1) * 4..(pass - 1) * 4 + 3].to_vec();
    // All ones: two passes; D0 = EXEC_HI during the first, EXEC_LO during the second.
    let (lanes, r, end) = subvector(true, !0);
    assert_eq!(lanes, passes(64, 0xffff_ffff, !0 << 32));
    assert_eq!(rec(&r, 1), [0xffff_ffff, 0, 0xffff_ffff]);
    assert_eq!(rec(&r, 2), [0, 0xffff_ffff, 0xffff_ffff]);
    assert_eq!(end, (!0, 0xffff_ffff, 2));
    // Both halves partly: lanes 0 and 2, then lane 63; s10 ends as the saved EXEC_LO.
    let e = 0x8000_0000_0000_0005;
    let (lanes, r, end) = subvector(true, e);
    assert_eq!(lanes, passes(64, 5, 1 << 63));
    assert_eq!(rec(&r, 1), [5, 0, 0x8000_0000]);
    assert_eq!(rec(&r, 2), [0, 0x8000_0000, 5]);
    assert_eq!(end, (e, 5, 2));
    // Only the low half: one pass, D0 = EXEC_HI = 0, the end falls through.
    let (lanes, r, end) = subvector(true, 0x8000_0f0f);
    assert_eq!(lanes, passes(64, 0x8000_0f0f, 0));
    assert_eq!(rec(&r, 1), [0x8000_0f0f, 0, 0]);
    assert_eq!(rec(&r, 2), [0; 3], "no second pass");
    assert_eq!(end, (0x8000_0f0f, 0, 1));
    // Only the high half: one pass, D0 = EXEC_LO = 0, restored (to 0) at the end.
    let e = 0x0001_00f0_0000_0000;
    let (lanes, r, end) = subvector(true, e);
    assert_eq!(lanes, passes(64, e, 0));
    assert_eq!(rec(&r, 1), [0, 0x0001_00f0, 0]);
    assert_eq!(rec(&r, 2), [0; 3], "no second pass");
    assert_eq!(end, (e, 0, 1));
    // Zero: the begin jumps past the end; the SGPR keeps its value.
    let (lanes, r, end) = subvector(true, 0);
    assert_eq!(lanes, vec![0; 64]);
    assert_eq!(r, vec![0; 20]);
    assert_eq!(end, (0, 0x55, 0));
    // Wave32: EXEC_HI holds no lanes (reads 0): one pass with EXEC unchanged and D0 = 0, or
    // none when EXEC_LO is 0.
    let (lanes, r, end) = subvector(false, 0x00ff_0001);
    assert_eq!(lanes, passes(32, 0x00ff_0001, 0));
    assert_eq!(rec(&r, 1), [0x00ff_0001, 0, 0]);
    assert_eq!(end, (0x00ff_0001, 0, 1));
    let (lanes, _, end) = subvector(false, 0);
    assert_eq!(lanes, vec![0; 32]);
    assert_eq!(end, (0, 0x55, 0));
}

// gfx1100 wave32 (each line marked "k" repeated for k = 0..15, "s" for the 7 steps s = 0..6;
// step s's operands at DATA2 + 1024 * s + 32 * lane: DATA0 at +0, DATA1 at +16):
//   v_lshlrev_b32 v22, 2, v0
//   v_lshlrev_b32 v20, 5, v0
//   v_lshlrev_b32 v21, 3, v0
//   v_lshlrev_b32 v1, 18, v0                      ; ADDR: stack base dword = lane, index 0
//   v_mov_b32 v10, 0x77
//   k: v_add_nc_u32 v23, 0x11110000 + 32 * k, v0 ; LDS dword d starts as 0x11110000 + d
//   k: ds_store_b32 v22, v23 offset:128 * k
//   s_mov_b32 exec_lo, 7                          ; lanes 0..2
//   s: global_load_b32 v2, v20, s[4:5]
//   s: global_load_b128 v[3:6], v20, s[4:5] offset:16
//   s: s_waitcnt vmcnt(0)
//   s: ds_bvh_stack_rtn_b32 v10, v1, v2, v[3:6]   ; step 6: offset:4096 (OFFSET1[5:4] = 1)
//   s: s_waitcnt lgkmcnt(0)
//   s: v_mov_b32 v11, v1
//   s: global_store_b64 v21, v[10:11], s[0:1] offset:256 * s
//   s: v_add_nc_u32 v20, 0x400, v20
//   s_mov_b32 exec_lo, -1
//   k: ds_load_b32 v25, v22 offset:128 * k
//   k: s_waitcnt lgkmcnt(0)
//   k: global_store_b32 v22, v25, s[0:1] offset:2048 + 128 * k
//   s_endpgm
const BVH_STACK_GFX1100: &[u32] = &[
    0x302C0082, 0x30280085, 0x302A0083, 0x30020092, 0x7E1402FF, 0x00000077, 0x4A2E00FF, 0x11110000,
    0xD8340000, 0x00001716, 0x4A2E00FF, 0x11110020, 0xD8340080, 0x00001716, 0x4A2E00FF, 0x11110040,
    0xD8340100, 0x00001716, 0x4A2E00FF, 0x11110060, 0xD8340180, 0x00001716, 0x4A2E00FF, 0x11110080,
    0xD8340200, 0x00001716, 0x4A2E00FF, 0x111100A0, 0xD8340280, 0x00001716, 0x4A2E00FF, 0x111100C0,
    0xD8340300, 0x00001716, 0x4A2E00FF, 0x111100E0, 0xD8340380, 0x00001716, 0x4A2E00FF, 0x11110100,
    0xD8340400, 0x00001716, 0x4A2E00FF, 0x11110120, 0xD8340480, 0x00001716, 0x4A2E00FF, 0x11110140,
    0xD8340500, 0x00001716, 0x4A2E00FF, 0x11110160, 0xD8340580, 0x00001716, 0x4A2E00FF, 0x11110180,
    0xD8340600, 0x00001716, 0x4A2E00FF, 0x111101A0, 0xD8340680, 0x00001716, 0x4A2E00FF, 0x111101C0,
    0xD8340700, 0x00001716, 0x4A2E00FF, 0x111101E0, 0xD8340780, 0x00001716, 0xBEFE0087, 0xDC520000,
    0x02040014, 0xDC5E0010, 0x03040014, 0xBF8903F7, 0xDAB40000, 0x0A030201, 0xBF89FC07, 0x7E160301,
    0xDC6E0000, 0x00000A15, 0x4A2828FF, 0x00000400, 0xDC520000, 0x02040014, 0xDC5E0010, 0x03040014,
    0xBF8903F7, 0xDAB40000, 0x0A030201, 0xBF89FC07, 0x7E160301, 0xDC6E0100, 0x00000A15, 0x4A2828FF,
    0x00000400, 0xDC520000, 0x02040014, 0xDC5E0010, 0x03040014, 0xBF8903F7, 0xDAB40000, 0x0A030201,
    0xBF89FC07, 0x7E160301, 0xDC6E0200, 0x00000A15, 0x4A2828FF, 0x00000400, 0xDC520000, 0x02040014,
    0xDC5E0010, 0x03040014, 0xBF8903F7, 0xDAB40000, 0x0A030201, 0xBF89FC07, 0x7E160301, 0xDC6E0300,
    0x00000A15, 0x4A2828FF, 0x00000400, 0xDC520000, 0x02040014, 0xDC5E0010, 0x03040014, 0xBF8903F7,
    0xDAB40000, 0x0A030201, 0xBF89FC07, 0x7E160301, 0xDC6E0400, 0x00000A15, 0x4A2828FF, 0x00000400,
    0xDC520000, 0x02040014, 0xDC5E0010, 0x03040014, 0xBF8903F7, 0xDAB40000, 0x0A030201, 0xBF89FC07,
    0x7E160301, 0xDC6E0500, 0x00000A15, 0x4A2828FF, 0x00000400, 0xDC520000, 0x02040014, 0xDC5E0010,
    0x03040014, 0xBF8903F7, 0xDAB41000, 0x0A030201, 0xBF89FC07, 0x7E160301, 0xDC6E0600, 0x00000A15,
    0x4A2828FF, 0x00000400, 0xBEFE00C1, 0xD8D80000, 0x19000016, 0xBF89FC07, 0xDC6A0800, 0x00001916,
    0xD8D80080, 0x19000016, 0xBF89FC07, 0xDC6A0880, 0x00001916, 0xD8D80100, 0x19000016, 0xBF89FC07,
    0xDC6A0900, 0x00001916, 0xD8D80180, 0x19000016, 0xBF89FC07, 0xDC6A0980, 0x00001916, 0xD8D80200,
    0x19000016, 0xBF89FC07, 0xDC6A0A00, 0x00001916, 0xD8D80280, 0x19000016, 0xBF89FC07, 0xDC6A0A80,
    0x00001916, 0xD8D80300, 0x19000016, 0xBF89FC07, 0xDC6A0B00, 0x00001916, 0xD8D80380, 0x19000016,
    0xBF89FC07, 0xDC6A0B80, 0x00001916, 0xD8D80400, 0x19000016, 0xBF89FC07, 0xDC6A0C00, 0x00001916,
    0xD8D80480, 0x19000016, 0xBF89FC07, 0xDC6A0C80, 0x00001916, 0xD8D80500, 0x19000016, 0xBF89FC07,
    0xDC6A0D00, 0x00001916, 0xD8D80580, 0x19000016, 0xBF89FC07, 0xDC6A0D80, 0x00001916, 0xD8D80600,
    0x19000016, 0xBF89FC07, 0xDC6A0E00, 0x00001916, 0xD8D80680, 0x19000016, 0xBF89FC07, 0xDC6A0E80,
    0x00001916, 0xD8D80700, 0x19000016, 0xBF89FC07, 0xDC6A0F00, 0x00001916, 0xD8D80780, 0x19000016,
    0xBF89FC07, 0xDC6A0F80, 0x00001916, 0xBFB00000,
];

/// DS_BVH_STACK_RTN_B32 (RDNA3 ISA 12.5.3 and its pseudo-code; the reading of the guide is
/// in `ds_bvh_stack`, `exec/lds.rs`): lane l's stack entry k is LDS dword l + 32 * (k mod
/// size); valid DATA1[0..2] are pushed, a node equal to the last-visited pointer stops the
/// pushes, a valid DATA1[3] is returned, else the top is popped and becomes INVALID_NODE;
/// ADDR comes back with the new index. Lane 0 pushes and pops to below empty, lane 1 wraps
/// its 8-entry stack, lane 2 exercises the last-visited rules, lane 3 is inactive; step 6
/// runs with a 16-entry stack.
#[test]
fn bvh_stack_pushes_valid_nodes_returns_or_pops_and_wraps_at_its_size() {
    const I: u32 = 0xffff_ffff;
    // (DATA0, DATA1) per step (rows) and lane (columns).
    let steps: [[(u32, [u32; 4]); 4]; 7] = [
        [
            (I, [0xa1, 0xa2, 0xa3, 0xa4]),
            (I, [0xb1, 0xb2, 0xb3, 0xc0]),
            (0x99, [0xd1, I, 0xd2, 0x99]),
            (I, [5, 6, 7, 8]),
        ],
        [
            (I, [I, I, I, I]),
            (I, [0xb4, 0xb5, 0xb6, 0xc1]),
            (I, [0xe1, 0xe2, I, 0xe3]),
            (I, [5, 6, 7, 8]),
        ],
        [
            (0x55, [0xf1, 0x55, 0xf2, I]),
            (I, [0xb7, 0xb8, 0xb9, 0xc2]),
            (I, [I, I, I, I]),
            (I, [5, 6, 7, 8]),
        ],
        [
            (I, [I, I, I, I]),
            (I, [I, I, I, I]),
            (0xe1, [0xe1, 0x71, 0x72, I]),
            (I, [5, 6, 7, 8]),
        ],
        [
            (I, [I, I, I, I]),
            (I, [I, I, I, I]),
            (I, [0x73, I, 0x74, I]),
            (I, [5, 6, 7, 8]),
        ],
        [
            (I, [I, I, I, I]),
            (I, [I, I, I, I]),
            (I, [I, I, I, I]),
            (I, [5, 6, 7, 8]),
        ],
        [
            (I, [I, I, I, I]),
            (I, [0x91, 0x92, 0x93, I]),
            (I, [I, I, I, I]),
            (I, [5, 6, 7, 8]),
        ],
    ];
    let mut data2 = vec![0u32; 256 * 7];
    for (s, lanes) in steps.iter().enumerate() {
        for (l, (lvp, d)) in lanes.iter().enumerate() {
            let at = 256 * s + 8 * l;
            data2[at] = *lvp;
            data2[at + 4..at + 8].copy_from_slice(d);
        }
    }
    let mem = memory(BVH_STACK_GFX1100, 0, &[], &data2);
    launch(Isa::Gfx11, false, &mem).unwrap();
    let init = |d: u32| 0x1111_0000 + d;
    let addr = |l: u32, index: u32| (l << 18) | index;
    // (returned node, ADDR) per step and lane (lane 3, inactive, stores nothing).
    let want: [[(u32, u32); 4]; 7] = [
        // Lane 0 pushes three and returns W; lane 1 the same; lane 2 pushes D1, skips the
        // invalid Y, pushes D2 and pops it (W is the last-visited node: not valid).
        [
            (0xa4, addr(0, 3)),
            (0xc0, addr(1, 3)),
            (0xd2, addr(2, 1)),
            (0, 0),
        ],
        // Lane 0: an invalid X equal to the (invalid) last-visited pointer stops the pushes;
        // the pop returns A3. Lane 2: E1 and E2 pushed, the invalid Z stops, W returned.
        [
            (0xa3, addr(0, 2)),
            (0xc1, addr(1, 6)),
            (0xe3, addr(2, 3)),
            (0, 0),
        ],
        // Lane 0: F1 pushed, Y equal to the last-visited node stops (F2 not pushed), the
        // pop returns F1. Lane 1's ninth push wraps onto entry 0 (B1 overwritten).
        [
            (0xf1, addr(0, 2)),
            (0xc2, addr(1, 9)),
            (0xe2, addr(2, 2)),
            (0, 0),
        ],
        // Lane 1 pops B9 from the wrapped slot; lane 2's X equals the valid last-visited
        // node: no push, the pop returns E1.
        [
            (0xa2, addr(0, 1)),
            (0xb9, addr(1, 8)),
            (0xe1, addr(2, 1)),
            (0, 0),
        ],
        [
            (0xa1, addr(0, 0)),
            (0xb8, addr(1, 7)),
            (0x73, addr(2, 1)),
            (0, 0),
        ],
        // Lane 0 pops below empty: index 0xffff, slot 7 (never written: its first value).
        [
            (init(32 * 7), addr(0, 0xffff)),
            (0xb7, addr(1, 6)),
            (0xd1, addr(2, 0)),
            (0, 0),
        ],
        // A 16-entry stack: lane 1's G3 goes to entry 8 (dword 1 + 256, not the size-8 wrap
        // onto entry 0) and is popped back; lane 0 pops slot 0xfffe mod 16 = 14, lane 2 slot
        // 15.
        [
            (init(32 * 14), addr(0, 0xfffe)),
            (0x93, addr(1, 8)),
            (init(2 + 32 * 15), addr(2, 0xffff)),
            (0, 0),
        ],
    ];
    for (s, lanes) in want.iter().enumerate() {
        let got = peek(&mem, OUT + 256 * s as u64, 8);
        for (l, w) in lanes.iter().enumerate() {
            assert_eq!((got[2 * l], got[2 * l + 1]), *w, "step {s} lane {l}");
        }
    }
    // The LDS afterwards (dword l + 32 * k is lane l's entry k).
    let lds = peek(&mem, OUT + 2048, 512);
    let mut expect: Vec<u32> = (0..512).map(init).collect();
    let e = |l: usize, k: usize| l + 32 * k;
    // Lane 0: A1, A2 and F1's slot (entry 2, where A3 was) popped; entry 7 and 14 popped
    // below empty.
    for k in [0, 1, 2, 7, 14] {
        expect[e(0, k)] = I;
    }
    // Lane 1: B9 (entry 0), B2..B6 (1..5), B7, B8 popped (6, 7); G1 and G2 pushed at 6 and 7
    // in step 6, G3 at 8 popped.
    expect[e(1, 0)] = I;
    for (k, v) in [0xb2, 0xb3, 0xb4, 0xb5, 0xb6, 0x91, 0x92]
        .into_iter()
        .enumerate()
    {
        expect[e(1, k + 1)] = v;
    }
    expect[e(1, 8)] = I;
    // Lane 2: D1 (0) popped, D2 popped from 1, then E1 (1), E2 (2), the 0x73 push (1)
    // popped; entry 15 popped below empty.
    for k in [0, 1, 2, 15] {
        expect[e(2, k)] = I;
    }
    // Lane 3 was inactive: its entries keep their first values.
    for (d, (g, w)) in lds.iter().zip(&expect).enumerate() {
        assert_eq!(g, w, "LDS dword {d} (lane {}, entry {})", d % 32, d / 32);
    }
}

// gfx1201 wave32 (DATA: a 16-bit matrix, DATA2 a byte matrix; lane l's address is its
// column K = l):
//   v_lshlrev_b32 v1, 4, v0
//   v_lshlrev_b32 v2, 3, v0
//   v_lshlrev_b32 v3, 5, v0
//   v_mov_b32 v20, 0x5a5a5a5a
//   global_load_tr_b128 v[10:13], v1, s[2:3]
//   global_load_tr_b64 v[14:15], v2, s[4:5]
//   s_mov_b32 exec_lo, 0
//   global_load_tr_b64 v[20:21], v2, s[4:5]
//   s_mov_b32 exec_lo, -1
//   s_wait_loadcnt 0
//   global_store_b128 v3, v[10:13], s[0:1]
//   global_store_b64 v3, v[14:15], s[0:1] offset:16
//   global_store_b32 v3, v20, s[0:1] offset:24
//   s_endpgm
const LOAD_TR_GFX1201: &[u32] = &[
    0x30020084, 0x30040083, 0x30060085, 0x7E2802FF, 0x5A5A5A5A, 0xEE15C002, 0x0000000A, 0x00000001,
    0xEE160004, 0x0000000E, 0x00000002, 0xBEFE0080, 0xEE160004, 0x00000014, 0x00000002, 0xBEFE00C1,
    0xBFC00000, 0xEE074000, 0x05000000, 0x00000003, 0xEE06C000, 0x07000000, 0x00001003, 0xEE068000,
    0x0A000000, 0x00001803, 0xBFB00000,
];

// gfx1201 wave64 (lanes 32..63's addresses are ignored):
//   v_lshlrev_b32 v1, 4, v0
//   v_lshlrev_b32 v2, 3, v0
//   v_lshlrev_b32 v3, 5, v0
//   v_mov_b32 v20, 0x5a5a5a5a
//   global_load_tr_b128 v[10:11], v1, s[2:3]
//   global_load_tr_b64 v14, v2, s[4:5]
//   s_mov_b64 exec, 0
//   global_load_tr_b64 v20, v2, s[4:5]
//   s_mov_b64 exec, -1
//   s_wait_loadcnt 0
//   global_store_b64 v3, v[10:11], s[0:1]
//   global_store_b32 v3, v14, s[0:1] offset:16
//   global_store_b32 v3, v20, s[0:1] offset:24
//   s_endpgm
const LOAD_TR_W64_GFX1201: &[u32] = &[
    0x30020084, 0x30040083, 0x30060085, 0x7E2802FF, 0x5A5A5A5A, 0xEE15C002, 0x0000000A, 0x00000001,
    0xEE160004, 0x0000000E, 0x00000002, 0xBEFE0180, 0xEE160004, 0x00000014, 0x00000002, 0xBEFE01C1,
    0xBFC00000, 0xEE06C000, 0x05000000, 0x00000003, 0xEE068000, 0x07000000, 0x00001003, 0xEE068000,
    0x0A000000, 0x00001803, 0xBFB00000,
];

// gfx1201 wave32, EXEC neither zero nor all ones:
//   s_mov_b32 exec_lo, 0xffff
//   global_load_tr_b64 v[14:15], v2, s[4:5]
//   s_endpgm
const LOAD_TR_PARTIAL_GFX1201: &[u32] = &[
    0xBEFE00FF, 0x0000FFFF, 0xEE160004, 0x0000000E, 0x00000002, 0xBFB00000,
];

/// GLOBAL_LOAD_TR_B128 / _B64 (RDNA4 ISA 11.6.2, the mapping in `load_tr`, `exec/memory.rs`):
/// an 8-row column-major matrix A[M][K] (M = 0..7, K = 0..31), lane l reading column K = l
/// ("lane 0 loads 64 bits of contiguous memory and stores it in the matrix: K=0, M=0..7"),
/// comes back row-major: lane L holds row M = L mod 8, K = 8 * (L / 8) + 0..7 in order (two
/// 16-bit or four 8-bit elements a VGPR). wave64 holds the same data in half the VGPRs, lane
/// L + 32 the second half of lane L's row piece. EXEC == 0 writes nothing.
#[test]
fn load_tr_transposes_column_major_tiles_into_row_major_vgprs() {
    // A16[M][K] = 0x100 * K + M at DATA + 2 * (8 * K + M); A8[M][K] = 8 * K + M at DATA2 +
    // 8 * K + M.
    let a16 = |m: u32, k: u32| 0x100 * k + m;
    let a8 = |m: u32, k: u32| 8 * k + m;
    let mut data = vec![0u32; 128];
    for k in 0..32 {
        for m in (0..8).step_by(2) {
            data[(8 * k + m) as usize / 2] = a16(m, k) | (a16(m + 1, k) << 16);
        }
    }
    let data2: Vec<u32> = (0..64)
        .map(|w| u32::from_le_bytes(core::array::from_fn(|b| (4 * w + b) as u8)))
        .collect();
    // Lane L's row piece: row M = L mod 8 and K = 8 * (L / 8) + e for element e = 0..7.
    let row16 = |l: u32, e: u32| a16(l % 8, 8 * (l / 8) + e);
    let row8 = |l: u32, e: u32| a8(l % 8, 8 * (l / 8) + e);
    let pair16 = |l: u32, e: u32| row16(l, e) | (row16(l, e + 1) << 16);
    let quad8 = |l: u32, e: u32| (0..4).fold(0, |x, b| x | (row8(l, e + b) << (8 * b)));
    // wave32
    let mem = memory(LOAD_TR_GFX1201, 0, &data, &data2);
    launch(Isa::Gfx12, false, &mem).unwrap();
    for l in 0..32u32 {
        let got = peek(&mem, OUT + 32 * u64::from(l), 7);
        let want = [
            pair16(l, 0),
            pair16(l, 2),
            pair16(l, 4),
            pair16(l, 6),
            quad8(l, 0),
            quad8(l, 4),
            0x5a5a_5a5a,
        ];
        assert_eq!(got, want, "wave32 lane {l}");
    }
    // Lane 9 by hand: row M = 1, K = 8..15.
    assert_eq!(peek(&mem, OUT + 32 * 9, 1), [0x0801 | (0x0901 << 16)]);
    // wave64
    let mem = memory(LOAD_TR_W64_GFX1201, 0, &data, &data2);
    launch(Isa::Gfx12, true, &mem).unwrap();
    for l in 0..64u32 {
        let got = peek(&mem, OUT + 32 * u64::from(l), 7);
        let (src, e) = (l % 32, 4 * (l / 32));
        let want = [
            pair16(src, e),
            pair16(src, e + 2),
            0,
            0,
            quad8(src, e),
            0,
            0x5a5a_5a5a,
        ];
        assert_eq!(got, want, "wave64 lane {l}");
    }
    let mem = memory(LOAD_TR_PARTIAL_GFX1201, 0, &data, &data2);
    let e = launch(Isa::Gfx12, false, &mem).unwrap_err().to_string();
    assert!(e.contains("EXEC"), "{e}");
}
