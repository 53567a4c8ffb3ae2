//! The 16-bit, mixed-precision and gfx9 SDWA operations against per-lane reference formulas,
//! each with an op_sel, modifier, clamp or edge case: f16 halves with signed zeros, infinities,
//! NaN and the largest f16 in every lane, integer halves of both signs.

// Lane indices name rows of several outputs at once.
#![allow(clippy::needless_range_loop)]

use super::num::{f16_to_f32, f32_to_f16};
use crate::isa::{FlatMemory, FloatMode, Isa, Launch, ScratchSetup, run};

const BASE: u64 = 0x1_0000;
const CODE: u64 = 0x1_0000;
const OUT: u64 = 0x2_0000;

/// f16 edge values: 1, -2, 0.5, inf, NaN, +0, -0, 5, 1/3, 65504.
const H: [u32; 10] = [
    0x3c00, 0xc000, 0x3800, 0x7c00, 0x7e00, 0x0000, 0x8000, 0x4500, 0x3555, 0x7bff,
];

/// The three input words of lane `l`: f16 halves (one f32 NaN lane in eight for `a`), and an
/// f32 `c` that is also the old destination value.
fn inputs(l: usize) -> (u32, u32, u32) {
    let a = if l % 8 == 5 {
        0x7fc0_0000
    } else {
        H[l % 10] | H[(l * 3 + 1) % 10] << 16
    };
    let b = H[(l + 3) % 10] | H[(l * 7 + 2) % 10] << 16;
    // CAST: l < 64.
    let c = ((l as f32 - 7.5) * 0.75).to_bits();
    (a, b, c)
}

/// Runs `prog` over one wave (64 lanes on gfx9, else 32) with the inputs at OUT + 256/512/768
/// (wave32: 128-byte rows, the program's offsets) and returns the words from OUT + 1024 on,
/// `rows` rows of one word per lane; a fault or a memory error is the test's error.
fn run_prog(isa: Isa, prog: &[u32], rows: usize) -> Result<Vec<Vec<u32>>, String> {
    let lanes = if isa == Isa::Gfx9 { 64 } else { 32 };
    let mem = FlatMemory::new(BASE, 0x2_0000);
    let code: Vec<u8> = prog.iter().flat_map(|w| w.to_le_bytes()).collect();
    mem.poke(CODE, &code).map_err(|e| format!("code: {e:?}"))?;
    for l in 0..lanes {
        let (a, b, c) = inputs(l);
        for (k, v) in [a, b, c].into_iter().enumerate() {
            // CAST: small offsets.
            let at = OUT + 256 * (k as u64 + 1) + 4 * l as u64;
            mem.poke(at, &v.to_le_bytes())
                .map_err(|e| format!("input: {e:?}"))?;
        }
    }
    let l = Launch {
        isa,
        gfx940: true,
        pgm: CODE,
        wave64: lanes == 64,
        user_sgprs: vec![OUT as u32, (OUT >> 32) as u32],
        rsrc2: 2 << 1,
        local: [lanes as u32, 1, 1],
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
    run(&l, &mem).map_err(|e| format!("run: {e:?}"))?;
    (0..rows)
        .map(|r| {
            let mut b = vec![0u8; 4 * lanes];
            // CAST: small offsets.
            mem.peek(OUT + 1024 + (4 * lanes * r) as u64, &mut b)
                .map_err(|e| format!("output row {r}: {e:?}"))?;
            Ok(b.chunks_exact(4)
                .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect())
        })
        .collect()
}

fn h(x: u32) -> f32 {
    f16_to_f32(x & 0xffff)
}

/// IEEE-754-2019 minimumNumber/maximumNumber on f16 halves (-0 below +0): one of the inputs.
fn num16(x: u32, y: u32, max: bool) -> u32 {
    let (fx, fy) = (h(x), h(y));
    if fx.is_nan() {
        return y;
    }
    if fy.is_nan() || fx == fy && ((x & 0x8000 == 0) == max) {
        return x;
    }
    if fx == fy || (fx < fy) == max { y } else { x }
}

/// Assembled with `llvm-mc-19 -arch=amdgcn -mcpu=gfx1100` (loads of a, b, c into v1..v3):
///   v_mov_b32 v4, v3 ; v_pack_b32_f16 v4, -v1, v2 op_sel:[1,0,0]          -> row 0
///   v_mov_b32 v5, v3 ; v_add_nc_u16 v5, v1, v2 op_sel:[0,1,1]             -> row 1
///   v_mov_b32 v6, v3 ; v_ashrrev_i16 v6, v1, v2                           -> row 2
///   v_mov_b32 v7, v3 ; v_fma_mixlo_f16 v7, v1, v2, v3 op_sel_hi:[1,1,0]   -> row 3
///   v_mov_b32 v8, v3 ; v_fma_mix_f32 v8, -v1, |v2|, v3 op_sel:[1,0,0] op_sel_hi:[1,1,0]
///   v_sub_nc_u16 v9, v1, v2 clamp                                         -> row 5
const GFX11: &[u32] = &[
    0x30000082, 0xdc520100, 0x01000000, 0xdc520200, 0x02000000, 0xdc520300, 0x03000000, 0xbf8903f7,
    0x7e080303, 0xd7110804, 0x20020501, 0x7e0a0303, 0xd7035005, 0x00020501, 0x7e0c0303, 0xd73a0006,
    0x00020501, 0x7e0e0303, 0xcc210007, 0x1c0e0501, 0x7e100303, 0xcc200a08, 0x3c0e0501, 0xd7048009,
    0x00020501, 0xdc6a0400, 0x00000400, 0xdc6a0480, 0x00000500, 0xdc6a0500, 0x00000600, 0xdc6a0580,
    0x00000700, 0xdc6a0600, 0x00000800, 0xdc6a0680, 0x00000900, 0xbfb00000,
];

#[test]
fn gfx11_16_bit_ops_take_op_sel_modifiers_and_keep_the_other_half() -> Result<(), String> {
    let r = run_prog(Isa::Gfx11, GFX11, 6)?;
    for l in 0..32 {
        let (a, b, c) = inputs(l);
        let pack = ((a >> 16) ^ 0x8000) | (b & 0xffff) << 16;
        assert_eq!(r[0][l], pack, "pack lane {l}");
        let add = ((a & 0xffff) + (b >> 16)) & 0xffff;
        assert_eq!(r[1][l], (c & 0xffff) | add << 16, "add_nc_u16 lane {l}");
        // CAST: the low half, signed.
        let sh = ((b as u16 as i16) >> (a & 15)) as u16;
        assert_eq!(
            r[2][l],
            (c & 0xffff_0000) | u32::from(sh),
            "ashrrev_i16 lane {l}"
        );
        // CAST: the f64 fma rounds to f32, then to f16.
        let lo = f64::from(h(a)).mul_add(f64::from(h(b)), f64::from(f32::from_bits(c))) as f32;
        let lo = f32_to_f16(lo, false);
        assert_eq!(r[3][l], (c & 0xffff_0000) | lo, "fma_mixlo lane {l}");
        let mix = (-h(a >> 16)).mul_add(h(b).abs(), f32::from_bits(c));
        let got = f32::from_bits(r[4][l]);
        assert!(
            got.to_bits() == mix.to_bits() || (got.is_nan() && mix.is_nan()),
            "fma_mix_f32 lane {l}: {got} vs {mix}"
        );
        let sat = (a & 0xffff).saturating_sub(b & 0xffff);
        assert_eq!(r[5][l] & 0xffff, sat, "sub_nc_u16 clamp lane {l}");
    }
    Ok(())
}

/// Assembled with `llvm-mc-19 -arch=amdgcn -mcpu=gfx1201`:
///   v_max_num_f32 v4, v1, v2                                -> row 0
///   v_mov_b32 v5, v3 ; v_min_num_f16_e64 v5, -v1, v2        -> row 1
///   v_max_num_f64 v[6:7], v[1:2], v[2:3]                    -> rows 2, 3
///   s_add_nc_u64 s[2:3], s[0:1], 64 ; s_mul_u64 s[4:5], s[2:3], 3 -> rows 4, 5 (via v8, v9)
const GFX12: &[u32] = &[
    0x30000082, 0xee050000, 0x00000001, 0x00010000, 0xee050000, 0x00000002, 0x00020000, 0xee050000,
    0x00000003, 0x00030000, 0xbfc00000, 0x2c080501, 0x7e0a0303, 0xd5300005, 0x20020501, 0x1c0c0501,
    0xa982c000, 0xaa848302, 0x7e100204, 0x7e120205, 0xee068000, 0x02000000, 0x00040000, 0xee068000,
    0x02800000, 0x00048000, 0xee068000, 0x03000000, 0x00050000, 0xee068000, 0x03800000, 0x00058000,
    0xee068000, 0x04000000, 0x00060000, 0xee068000, 0x04800000, 0x00068000, 0xbfb00000,
];

#[test]
fn gfx12_min_max_num_take_the_number_over_nan_and_order_signed_zeros() -> Result<(), String> {
    let r = run_prog(Isa::Gfx12, GFX12, 6)?;
    let num32 = |x: f32, y: f32| -> f32 {
        if x.is_nan() {
            y
        } else if y.is_nan() || x > y || (x == y && x.is_sign_positive()) {
            x
        } else {
            y
        }
    };
    let num64 = |x: f64, y: f64| -> f64 {
        if x.is_nan() {
            y
        } else if y.is_nan() || x > y || (x == y && x.is_sign_positive()) {
            x
        } else {
            y
        }
    };
    for l in 0..32 {
        let (a, b, c) = inputs(l);
        let want = num32(f32::from_bits(a), f32::from_bits(b));
        assert_eq!(r[0][l], want.to_bits(), "max_num_f32 lane {l}");
        let min = num16((a & 0xffff) ^ 0x8000, b & 0xffff, false);
        assert_eq!(r[1][l], (c & 0xffff_0000) | min, "min_num_f16 lane {l}");
        let (x, y) = (
            f64::from_bits(u64::from(a) | u64::from(b) << 32),
            f64::from_bits(u64::from(b) | u64::from(c) << 32),
        );
        let m = num64(x, y).to_bits();
        // CAST: halves of a u64.
        assert_eq!(
            (r[2][l], r[3][l]),
            (m as u32, (m >> 32) as u32),
            "max_num_f64 lane {l}"
        );
        let s = (OUT + 64) * 3;
        assert_eq!(
            (r[4][l], r[5][l]),
            (s as u32, (s >> 32) as u32),
            "s_*_u64 lane {l}"
        );
    }
    Ok(())
}

/// Assembled with `llvm-mc-19 -arch=amdgcn -mcpu=gfx90a`:
///   v_mov_b32 v4, v3 ; v_mac_f16 v4, v1, v2                                    -> row 0
///   v_madmk_f32 v5, v1, 0x40400000, v2                                         -> row 1
///   v_madak_f32 v6, v1, v2, 0x3f800000                                         -> row 2
///   v_sub_u16_e64 v7, v1, v2 clamp                                             -> row 3
///   v_mov_b32 v8, v3 ; v_max_i32_sdwa v8, v1, sext(v2) dst_sel:WORD_1
///     dst_unused:UNUSED_PRESERVE src0_sel:BYTE_1 src1_sel:WORD_0               -> row 4
///   v_cmp_lt_i16 vcc, v1, v2 ; v_cndmask_b32_e64 v9, 0, 1, vcc                 -> row 5
///   v_pk_mov_b32 v[10:11], v[2:3], v[2:3] op_sel:[1,0]                         -> rows 6, 7
///   v_pack_b32_f16 v12, v1, |v2| op_sel:[0,1,0]                                -> row 8
///   v_ashrrev_i16 v13, v1, v2                                                  -> row 9
const GFX9: &[u32] = &[
    0x24000082, 0xdc508100, 0x01000000, 0xdc508200, 0x02000000, 0xdc508300, 0x03000000, 0xbf8c0f70,
    0x7e080303, 0x46080501, 0x2e0a0501, 0x40400000, 0x300c0501, 0x3f800000, 0xd1278007, 0x00020501,
    0x7e100303, 0x1a1004f9, 0x0c011501, 0x7d420501, 0xd1000009, 0x01a90280, 0xd3b3480a, 0x18020502,
    0xd2a0120c, 0x00020501, 0x581a0501, 0xdc708400, 0x00000400, 0xdc708500, 0x00000500, 0xdc708600,
    0x00000600, 0xdc708700, 0x00000700, 0xdc708800, 0x00000800, 0xdc708900, 0x00000900, 0xdc708a00,
    0x00000a00, 0xdc708b00, 0x00000b00, 0xdc708c00, 0x00000c00, 0xdc708d00, 0x00000d00, 0xbf810000,
];

#[test]
fn gfx9_f16_u16_madk_sdwa_and_pk_mov_match_per_lane_formulas() -> Result<(), String> {
    let r = run_prog(Isa::Gfx9, GFX9, 10)?;
    let same = |got: u32, want: f32| {
        got == want.to_bits() || (f32::from_bits(got).is_nan() && want.is_nan())
    };
    for l in 0..64 {
        let (a, b, c) = inputs(l);
        // Unfused: the product rounds to f16 first; gfx9 clears the high half.
        let p = f32_to_f16(h(a) * h(b), false);
        let mac = f32_to_f16(h(p) + h(c), false);
        let g = r[0][l];
        assert!(
            g == mac || (h(g).is_nan() && h(mac).is_nan() && g >> 16 == 0),
            "mac_f16 lane {l}: {g:#x} vs {mac:#x}"
        );
        let (fa, fb) = (f32::from_bits(a), f32::from_bits(b));
        assert!(same(r[1][l], fa * 3.0 + fb), "madmk lane {l}");
        assert!(same(r[2][l], fa * fb + 1.0), "madak lane {l}");
        let sat = (a & 0xffff).saturating_sub(b & 0xffff);
        assert_eq!(r[3][l], sat, "sub_u16 clamp lane {l}");
        // CAST: byte 1 zero-extended, word 0 sign-extended.
        let m = ((a >> 8) & 0xff)
            .cast_signed()
            .max(i32::from(b as u16 as i16));
        assert_eq!(
            r[4][l],
            (c & 0xffff) | (m.cast_unsigned() << 16),
            "sdwa max lane {l}"
        );
        // CAST: the low halves, signed.
        let lt = (a as u16 as i16) < (b as u16 as i16);
        assert_eq!(r[5][l], u32::from(lt), "cmp_lt_i16 lane {l}");
        assert_eq!((r[6][l], r[7][l]), (c, b), "pk_mov lane {l}");
        let pack = (a & 0xffff) | ((b >> 16) & 0x7fff) << 16;
        assert_eq!(r[8][l], pack, "pack |hi| lane {l}");
        // CAST: the low half, signed.
        let sh = ((b as u16 as i16) >> (a & 15)) as u16;
        assert_eq!(r[9][l], u32::from(sh), "ashrrev_i16 lane {l}");
    }
    Ok(())
}

#[test]
fn sdwa_selects_and_places_bytes_and_words() {
    use super::valu16::{sdwa_place, sdwa_select};
    assert_eq!(sdwa_select(0x8180_7f01, 1, true), 0x7f);
    assert_eq!(sdwa_select(0x8180_7f01, 2, true), 0xffff_ff80);
    assert_eq!(sdwa_select(0x8180_7f01, 5, false), 0x8180);
    assert_eq!(sdwa_select(0x8180_7f01, 6, true), 0x8180_7f01);
    assert_eq!(sdwa_place(0xaabb_ccdd, 0x1234_5680, 1, 0), 0x0000_8000);
    assert_eq!(sdwa_place(0xaabb_ccdd, 0x1234_5680, 1, 1), 0xffff_8000);
    assert_eq!(sdwa_place(0xaabb_ccdd, 0x1234_5680, 1, 2), 0xaabb_80dd);
    assert_eq!(sdwa_place(0xaabb_ccdd, 0x1234_8680, 5, 1), 0x8680_0000);
}

/// Assembled with `llvm-mc-19 -arch=amdgcn -mcpu=gfx1100` (a in v1, v0 = 4 * lane):
///   v_xor_b32 v2, 4, v0 ; ds_bpermute_b32 v3, v2, v1                        -> row 0
///   v_add_nc_u32 v4, 12, v0 ; ds_permute_b32 v5, v4, v1                     -> row 1
///   ds_swizzle_b32 v6, v1 offset:swizzle(SWAP,1)                            -> row 2
///   ds_swizzle_b32 v7, v1 offset:swizzle(QUAD_PERM,3,2,1,0)                 -> row 3
///   ds_swizzle_b32 v8, v1 offset:swizzle(BITMASK_PERM,"01pip")              -> row 4
const CROSS: &[u32] = &[
    0x30000082, 0xdc520100, 0x01000000, 0xbf8903f7, 0x3a040084, 0xdacc0000, 0x03000102, 0x4a08008c,
    0xdac80000, 0x05000104, 0xd8d4041f, 0x06000001, 0xd8d4801b, 0x07000001, 0xd8d40907, 0x08000001,
    0xbf89fc07, 0xdc6a0400, 0x00000300, 0xdc6a0480, 0x00000500, 0xdc6a0500, 0x00000600, 0xdc6a0580,
    0x00000700, 0xdc6a0600, 0x00000800, 0xbfb00000,
];

#[test]
fn cross_lane_ds_ops_move_values_between_lanes() -> Result<(), String> {
    let r = run_prog(Isa::Gfx11, CROSS, 5)?;
    let a = |l: usize| inputs(l).0;
    for l in 0..32 {
        assert_eq!(r[0][l], a(l ^ 1), "bpermute lane {l}");
        assert_eq!(r[1][l], a((l + 29) & 31), "permute lane {l}");
        assert_eq!(r[2][l], a(l ^ 1), "swizzle swap lane {l}");
        assert_eq!(r[3][l], a((l & !3) | (3 - l % 4)), "swizzle quad lane {l}");
        assert_eq!(r[4][l], a(((l & 7) | 8) ^ 2), "swizzle bitmask lane {l}");
    }
    Ok(())
}

/// Assembled with `llvm-mc-19 -arch=amdgcn -mcpu=gfx90a`:
///   v_mad_f32 v4, -v1, v2, |v3|                                  -> row 0
///   v_cvt_f64_f32 v[6:7], v2 ; v_mov_b32 v8, s0 ; v_mov_b32 v9, s1
///   global_atomic_add_f64 v[8:9], v[6:7], off offset:1536        -> row 2, words 0..1
const GFX9_MAD: &[u32] = &[
    0x24000082, 0xdc508100, 0x01000000, 0xdc508200, 0x02000000, 0xdc508300, 0x03000000, 0xbf8c0f70,
    0xd1c10404, 0x240e0501, 0x7e0a0280, 0x7e0c0280, 0x7e0c2102, 0x7e100200, 0x7e120201, 0xdd3c8600,
    0x007f0608, 0xdc708400, 0x00000400, 0xbf8c0f70, 0xbf810000,
];

#[test]
fn gfx9_mad_f32_rounds_the_product_and_f64_atomic_add_sums_every_lane() -> Result<(), String> {
    let r = run_prog(Isa::Gfx9, GFX9_MAD, 3)?;
    let mut sum = 0f64;
    for l in 0..64 {
        let (a, b, c) = inputs(l);
        let (fa, fb, fc) = (f32::from_bits(a), f32::from_bits(b), f32::from_bits(c));
        // Unfused: -a * b rounds to f32 before |c| is added.
        let want = (-fa) * fb + fc.abs();
        let g = f32::from_bits(r[0][l]);
        assert!(
            g.to_bits() == want.to_bits() || (g.is_nan() && want.is_nan()),
            "mad_f32 lane {l}: {g} vs {want}"
        );
        sum += f64::from(fb);
    }
    let got = u64::from(r[2][0]) | u64::from(r[2][1]) << 32;
    assert_eq!(
        got,
        sum.to_bits(),
        "atomic_add_f64 over 64 lanes in lane order"
    );
    Ok(())
}
