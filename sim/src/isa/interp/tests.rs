//! Lane loops against per-lane reference formulas: carries and borrows with a carry-in from
//! VCC, IEEE compares with NaN, signed compares and 64-bit shifts, over edge values in every
//! lane of a wave32 (the vectorised paths in `operands.rs` and `mask.rs`).

use crate::isa::{FlatMemory, FloatMode, Isa, Launch, ScratchSetup, run};

const BASE: u64 = 0x1_0000;
const CODE: u64 = 0x1_0000;
const OUT: u64 = 0x2_0000;

/// Assembled with `llvm-mc-19 -arch=amdgcn -mcpu=gfx1100 -show-encoding`:
///   v_lshlrev_b32 v0, 2, v0
///   global_load_b32 v1, v0, s[0:1] offset:256      ; a
///   global_load_b32 v2, v0, s[0:1] offset:512      ; b
///   global_load_b32 v3, v0, s[0:1] offset:768      ; carry-in (!= 0), shift amount
///   s_waitcnt vmcnt(0)
///   v_cmp_ne_u32 vcc_lo, 0, v3
///   v_add_co_ci_u32 v4, vcc_lo, v1, v2, vcc_lo     ; -> 1024, carry -> 1152
///   v_cndmask_b32 v5, 0, 1, vcc_lo  (and the stores, after each step)
///   v_cmp_ne_u32 vcc_lo, 0, v3
///   v_sub_co_ci_u32 v4, vcc_lo, v1, v2, vcc_lo     ; -> 1280, borrow -> 1408
///   v_cmp_ne_u32 vcc_lo, 0, v3
///   v_subrev_co_ci_u32 v4, vcc_lo, v1, v2, vcc_lo  ; -> 1536, borrow -> 1664
///   v_sub_co_u32 v4, s2, v1, v2                    ; -> 1792, borrow -> 1920
///   v_cmp_lg_f32 vcc_lo, v1, v2                    ; -> 2048
///   v_cmp_nge_f32 vcc_lo, v1, v2                   ; -> 2176
///   v_cmp_u_f32 vcc_lo, v1, v2                     ; -> 2304
///   v_cmp_lt_i32 vcc_lo, v1, v2                    ; -> 2432
///   v_lshrrev_b64 v[6:7], v3, v[1:2]               ; -> 2560, 2688
///   s_endpgm
const LANES: &[u32] = &[
    0x30000082, 0xdc520100, 0x01000000, 0xdc520200, 0x02000000, 0xdc520300, 0x03000000, 0xbf8903f7,
    0x7c9a0680, 0x40080501, 0xd5010005, 0x01a90280, 0xdc6a0400, 0x00000400, 0xdc6a0480, 0x00000500,
    0x7c9a0680, 0x42080501, 0xd5010005, 0x01a90280, 0xdc6a0500, 0x00000400, 0xdc6a0580, 0x00000500,
    0x7c9a0680, 0x44080501, 0xd5010005, 0x01a90280, 0xdc6a0600, 0x00000400, 0xdc6a0680, 0x00000500,
    0xd7010204, 0x00020501, 0xd5010005, 0x00090280, 0xdc6a0700, 0x00000400, 0xdc6a0780, 0x00000500,
    0x7c2a0501, 0xd5010005, 0x01a90280, 0xdc6a0800, 0x00000500, 0x7c320501, 0xd5010005, 0x01a90280,
    0xdc6a0880, 0x00000500, 0x7c300501, 0xd5010005, 0x01a90280, 0xdc6a0900, 0x00000500, 0x7c820501,
    0xd5010005, 0x01a90280, 0xdc6a0980, 0x00000500, 0xd73d0006, 0x00020303, 0xdc6a0a00, 0x00000600,
    0xdc6a0a80, 0x00000700, 0xbfb00000,
];

const EDGES: [u32; 8] = [
    0,
    1,
    0xffff_ffff,
    0x8000_0000,
    0x7fff_ffff,
    0xffff_fffe,
    0x7fc0_0000, // quiet NaN
    0x3f80_0000, // 1.0
];

fn words(mem: &FlatMemory, at: u64) -> Vec<u32> {
    let mut b = vec![0u8; 32 * 4];
    mem.peek(OUT + at, &mut b).unwrap();
    b.chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

#[test]
fn carries_compares_and_shifts_match_per_lane_formulas() {
    let mem = FlatMemory::new(BASE, 0x2_0000);
    let code: Vec<u8> = LANES.iter().flat_map(|w| w.to_le_bytes()).collect();
    mem.poke(CODE, &code).unwrap();
    let a: Vec<u32> = (0..32).map(|l| EDGES[l % 8]).collect();
    let b: Vec<u32> = (0..32).map(|l| EDGES[(l / 8 + l) % 8]).collect();
    // CAST: l < 32.
    let c: Vec<u32> = (0..32u32)
        .map(|l| if l % 2 == 1 { ((l * 5) % 64) | 1 } else { 0 })
        .collect();
    for (at, v) in [(256u64, &a), (512, &b), (768, &c)] {
        let bytes: Vec<u8> = v.iter().flat_map(|w| w.to_le_bytes()).collect();
        mem.poke(OUT + at, &bytes).unwrap();
    }
    let l = Launch {
        isa: Isa::Gfx11,
        gfx940: true,
        pgm: CODE,
        wave64: false,
        user_sgprs: vec![OUT as u32, (OUT >> 32) as u32],
        rsrc2: 2 << 1,
        local: [32, 1, 1],
        groups: [1, 1, 1],
        lds_bytes: 0,
        vgprs: 16,
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
    };
    run(&l, &mem).unwrap();
    let (add, add_c) = (words(&mem, 1024), words(&mem, 1152));
    let (sub, sub_b) = (words(&mem, 1280), words(&mem, 1408));
    let (rev, rev_b) = (words(&mem, 1536), words(&mem, 1664));
    let (sub0, sub0_b) = (words(&mem, 1792), words(&mem, 1920));
    let (lg, nge, u, lt) = (
        words(&mem, 2048),
        words(&mem, 2176),
        words(&mem, 2304),
        words(&mem, 2432),
    );
    let (lo, hi) = (words(&mem, 2560), words(&mem, 2688));
    for k in 0..32 {
        let (x, y, ci) = (u64::from(a[k]), u64::from(b[k]), u64::from(c[k] != 0));
        let s = x + y + ci;
        assert_eq!(
            (add[k], add_c[k]),
            (s as u32, (s >> 32) as u32),
            "add lane {k}"
        );
        let d = x.wrapping_sub(y + ci);
        assert_eq!(
            (sub[k], sub_b[k]),
            (d as u32, u32::from(y + ci > x)),
            "sub lane {k}"
        );
        let r = y.wrapping_sub(x + ci);
        assert_eq!(
            (rev[k], rev_b[k]),
            (r as u32, u32::from(x + ci > y)),
            "subrev lane {k}"
        );
        let d0 = x.wrapping_sub(y);
        assert_eq!(
            (sub0[k], sub0_b[k]),
            (d0 as u32, u32::from(y > x)),
            "sub_co lane {k}"
        );
        let (fx, fy) = (f32::from_bits(a[k]), f32::from_bits(b[k]));
        let o = fx.partial_cmp(&fy);
        use core::cmp::Ordering::{Equal, Greater, Less};
        assert_eq!(
            lg[k],
            u32::from(matches!(o, Some(Less | Greater))),
            "lg lane {k}"
        );
        assert_eq!(
            nge[k],
            u32::from(!matches!(o, Some(Greater | Equal))),
            "nge lane {k}"
        );
        assert_eq!(u[k], u32::from(o.is_none()), "u lane {k}");
        assert_eq!(
            lt[k],
            u32::from((a[k] as i32) < (b[k] as i32)),
            "lt_i32 lane {k}"
        );
        let v = (x | (y << 32)) >> (c[k] & 63);
        assert_eq!(
            (lo[k], hi[k]),
            (v as u32, (v >> 32) as u32),
            "lshrrev_b64 lane {k}"
        );
    }
}

/// Assembled with `llvm-mc-19 -arch=amdgcn -mcpu=gfx90a -show-encoding`:
///   v_accvgpr_write_b32 a1, v0
///   v_mov_b32 v3, v5                ; a1 is v5 with ACCUM_OFFSET 4
///   v_accvgpr_read_b32 v6, a1
///   v_add_u32 v3, v3, v6
///   v_lshlrev_b32 v4, 2, v0
///   global_store_dword v4, v3, s[0:1]
///   s_endpgm
const AGPRS: &[u32] = &[
    0xd3d94001, 0x18000100, 0x7e060305, 0xd3d84006, 0x18000101, 0x68060d03, 0x24080082, 0xdc708000,
    0x00000304, 0xbf810000,
];

#[test]
fn agprs_live_at_the_accum_offset_even_in_a_large_vgpr_file() {
    // 512 VGPRs: an AGPR's code (512 + n) minus the VGPR base (256) is below the file size,
    // so a fast path that takes any code from 256 up as a VGPR would hit v(256 + n).
    let mem = FlatMemory::new(BASE, 0x2_0000);
    let code: Vec<u8> = AGPRS.iter().flat_map(|w| w.to_le_bytes()).collect();
    mem.poke(CODE, &code).unwrap();
    let l = Launch {
        isa: Isa::Gfx9,
        gfx940: true,
        pgm: CODE,
        wave64: true,
        user_sgprs: vec![OUT as u32, (OUT >> 32) as u32],
        rsrc2: 2 << 1,
        local: [64, 1, 1],
        groups: [1, 1, 1],
        lds_bytes: 0,
        vgprs: 512,
        accum_offset: 4,
        scratch: ScratchSetup::default(),
        scratch_waves: 0,
        float: FloatMode {
            denorm32: true,
            denorm16_64: true,
        },
        budget: 1 << 20,
        clock: 0,
        xcc: Default::default(),
    };
    run(&l, &mem).unwrap();
    let mut b = vec![0u8; 64 * 4];
    mem.peek(OUT, &mut b).unwrap();
    for (lane, c) in b.chunks_exact(4).enumerate() {
        // CAST: lane < 64.
        let want = 2 * lane as u32;
        assert_eq!(
            u32::from_le_bytes([c[0], c[1], c[2], c[3]]),
            want,
            "lane {lane}"
        );
    }
}

/// A jump to an unaligned address faults as an unaligned fetch (the decode cache's slot
/// index must not alias it with an aligned word), and a jump back to the start is a cached
/// instruction again (the budget still counts it).
#[test]
fn an_unaligned_jump_faults_and_cached_jumps_count() {
    let mem = FlatMemory::new(BASE, 0x2_0000);
    // s_setpc_b64 s[0:1]
    mem.poke(CODE, &0xbe80_4800u32.to_le_bytes()).unwrap();
    let mut l = Launch {
        isa: Isa::Gfx11,
        gfx940: true,
        pgm: CODE,
        wave64: false,
        // CAST: the code address's halves.
        user_sgprs: vec![CODE as u32 + 2, (CODE >> 32) as u32],
        rsrc2: 2 << 1,
        local: [32, 1, 1],
        groups: [1, 1, 1],
        lds_bytes: 0,
        vgprs: 16,
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
    };
    let e = run(&l, &mem).unwrap_err().to_string();
    assert!(e.contains("unaligned address"), "{e}");
    // To itself: an endless loop of one cached instruction, stopped by the budget.
    l.user_sgprs[0] = CODE as u32;
    l.budget = 1000;
    let e = run(&l, &mem).unwrap_err().to_string();
    assert!(e.contains("instruction budget of 1000"), "{e}");
}

/// The f32 FMA in f64 (`num::fma32`) against the host's fused multiply-add, bit for bit: the
/// sums whose f64 rounding makes an f32 tie (where rounding `s` again would be wrong and the
/// helper must not trust it), the f32 range's edges (denormal, overflowing and zero results,
/// infinities, NaNs), and a few hundred thousand pseudo-random operands of every magnitude
/// and of nearby ones (where cancellation happens).
#[test]
fn fma32_matches_the_host_fma() {
    use super::num::{fma32, fma32_lanes, fma32_quick};
    let f = f32::from_bits;
    // x * y = 2^-24 (1 - 2^-46): 1 + 2^-23 + x * y rounds in f64 to the midpoint
    // 1 + 2^-23 + 2^-24, which rounds to even (1 + 2^-22); the exact sum is below it (1 + 2^-23).
    let (x, y, z) = (f(0x3f80_0001), f(0x337f_fffe), f(0x3f80_0001));
    assert!(!fma32_quick(x, y, z).1, "a tie in f64 is not trusted");
    assert_eq!(fma32(x, y, z).to_bits(), 0x3f80_0001);
    assert_eq!(fma32(x, y, z).to_bits(), x.mul_add(y, z).to_bits());
    // CAST: f32 bit patterns from a 64-bit state.
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let edges = [
        0u32,
        0x8000_0000,
        1,
        0x007f_ffff,
        0x0080_0000,
        0x3f80_0000,
        0xbf80_0000,
        0x7f7f_ffff,
        0xff7f_ffff,
        0x7f80_0000,
        0xff80_0000,
        0x7fc0_0001,
        0x7f80_0001,
        0x3380_0000,
        0x1f80_0000,
    ];
    let mut checked = 0u32;
    let mut quick = 0u32;
    for k in 0..400_000u32 {
        let r = next();
        // CAST: bit fields of the state.
        let (mut a, mut b, mut c) = (r as u32, (r >> 32) as u32, next() as u32);
        match k % 4 {
            // Moderate magnitudes, c near x * y (cancellation) or far from it.
            0 | 1 => {
                a = (a & 0x807f_ffff) | ((120 + (a >> 23) % 16) << 23);
                b = (b & 0x807f_ffff) | ((120 + (b >> 23) % 16) << 23);
                let p = f(a) * f(b);
                c = if k % 4 == 0 {
                    (p.to_bits() ^ 0x8000_0000) ^ (c & 0xff)
                } else {
                    (c & 0x807f_ffff) | ((100 + (c >> 23) % 56) << 23)
                };
            }
            2 => {
                a = edges[(a % 15) as usize] ^ (a & 0xf0 & b);
                c = edges[(c % 15) as usize];
            }
            _ => {}
        }
        let (x, y, z) = (f(a), f(b), f(c));
        let want = x.mul_add(y, z);
        let got = fma32(x, y, z);
        let (q, ok) = fma32_quick(x, y, z);
        assert_eq!(got.to_bits(), want.to_bits(), "{a:#x} {b:#x} {c:#x}");
        if ok {
            assert_eq!(q.to_bits(), want.to_bits(), "{a:#x} {b:#x} {c:#x}");
            quick += 1;
        }
        checked += 1;
    }
    assert_eq!(checked, 400_000);
    // The quick form answers most operands (else it saves nothing).
    assert!(quick > 300_000, "{quick}");
    // The lane form, with one tie among ordinary lanes.
    let mut a = [0x4040_0000u32; 32];
    let mut b = [0x3f00_0000u32; 32];
    let mut c = [0x3f80_0000u32; 32];
    (a[7], b[7], c[7]) = (x.to_bits(), y.to_bits(), z.to_bits());
    let mut r = [0u32; 32];
    fma32_lanes(&mut r, &a, &b, &c);
    for l in 0..32 {
        assert_eq!(
            r[l],
            f(a[l]).mul_add(f(b[l]), f(c[l])).to_bits(),
            "lane {l}"
        );
    }
}
