//! DPP from compiled kernels (kernels/dpp.cl, clang-19 for every target): LLVM's DPP atomic
//! optimizer (a wave-wide scan and reduction in front of one atomic per wave), a subgroup
//! reduction written with the DPP builtins, and every DPP control of each family with row and
//! bank masks, bound_ctrl and inactive lanes, plus DPP8 and v_permlane16/x16 on gfx11/gfx12.
//! The references below follow the ISA documents' definitions (Vega ISA 6.8 "DPP", RDNA3 ISA
//! 7.8 and the v_permlane16_b32 / v_permlanex16_b32 pseudo-code), written apart from the
//! interpreter.

const FIXTURE_DIR: &str = "../core/tests/fixtures/kernels";
include!("isa_common/fixture_runner.rs");

const TARGETS: [&str; 4] = ["gfx90a", "gfx942", "gfx1100", "gfx1201"];

fn buf(k: u64) -> u64 {
    BUF + k * 0x4000
}

fn input(n: usize) -> Vec<u32> {
    (0..n as u32)
        .map(|i| (i.wrapping_mul(37) % 101) as i32 - 50)
        .map(|v| v as u32)
        .collect()
}

fn k<'a>(mem: &'a FlatMemory, target: &'a str) -> K<'a> {
    K {
        mem,
        target,
        wave64: target.starts_with("gfx9"),
    }
}

#[test]
fn the_atomic_optimizers_scan_returns_each_lane_its_prefix() {
    for target in TARGETS {
        let mem = FlatMemory::new(BASE, LEN);
        let k = k(&mem, target);
        let n = 128;
        let x = input(n);
        k.words(buf(0), &x);
        k.words(buf(1), &[100]);
        k.words(buf(2), &vec![0; n]);
        k.run(
            "dpp",
            "atomic_scan",
            &[lo(buf(0)), 0, lo(buf(1)), 0, lo(buf(2)), 0],
            2,
        );
        let old = k.read(buf(2), n);
        let total: i32 = x.iter().map(|&v| v as i32).sum();
        assert_eq!(k.read(buf(1), 1)[0] as i32, 100 + total, "{target}");
        // Per wave: a base plus the exclusive prefix sum in lane order; the bases are the
        // counter's values between the waves' atomics, in some order.
        let w = if k.wave64 { 64 } else { 32 };
        let mut bases = Vec::new();
        for (wave, (o, v)) in old.chunks(w).zip(x.chunks(w)).enumerate() {
            let base = o[0] as i32;
            let mut pre = 0i32;
            for (l, (&o, &v)) in o.iter().zip(v).enumerate() {
                assert_eq!(o as i32, base + pre, "{target}: wave {wave} lane {l}");
                pre += v as i32;
            }
            bases.push((base, pre));
        }
        let mut at = 100;
        while !bases.is_empty() {
            let next = bases.iter().position(|&(b, _)| b == at);
            let next = next.unwrap_or_else(|| panic!("{target}: no wave at {at}: {bases:?}"));
            at += bases.swap_remove(next).1;
        }
    }
}

#[test]
fn the_atomic_optimizers_reduction_adds_every_lane_once() {
    for target in TARGETS {
        let mem = FlatMemory::new(BASE, LEN);
        let k = k(&mem, target);
        let n = 192;
        let x = input(n);
        k.words(buf(0), &x);
        k.words(buf(1), &[7]);
        k.run("dpp", "atomic_sum", &[lo(buf(0)), 0, lo(buf(1)), 0], 3);
        let total: i32 = x.iter().map(|&v| v as i32).sum();
        assert_eq!(k.read(buf(1), 1)[0] as i32, 7 + total, "{target}");
    }
}

#[test]
fn a_subgroup_reduction_gives_every_lane_its_waves_sum() {
    for target in TARGETS {
        let mem = FlatMemory::new(BASE, LEN);
        let k = k(&mem, target);
        let n = 128;
        let x = input(n);
        k.words(buf(0), &x);
        k.words(buf(1), &vec![0; n]);
        k.run("dpp", "wave_sum", &[lo(buf(0)), 0, lo(buf(1)), 0], 2);
        let w = if k.wave64 { 64 } else { 32 };
        let got = k.read(buf(1), n);
        for (wave, (g, v)) in got.chunks(w).zip(x.chunks(w)).enumerate() {
            let s: i32 = v.iter().map(|&v| v as i32).sum();
            assert!(
                g.iter().all(|&g| g as i32 == s),
                "{target}: wave {wave}: {g:?}, want {s}"
            );
        }
    }
}

/// The lane a DPP16 control reads for `lane` of a wave of `w`, as the ISA documents define it.
fn dpp_source(ctrl: u32, lane: usize, w: usize) -> Option<usize> {
    let row = lane / 16 * 16;
    let k = lane % 16;
    let n = (ctrl & 15) as usize;
    let s = match ctrl {
        0..=0xff => lane / 4 * 4 + ((ctrl >> (2 * (lane % 4))) & 3) as usize,
        0x101..=0x10f if k + n < 16 => lane + n,
        0x111..=0x11f if k >= n => lane - n,
        0x121..=0x12f => row + (k + 16 - n) % 16,
        0x130 if lane + 1 < w => lane + 1,
        0x134 => (lane + 1) % w,
        0x138 if lane > 0 => lane - 1,
        0x13c => (lane + w - 1) % w,
        0x140 => row + 15 - k,
        0x141 => lane / 8 * 8 + 7 - lane % 8,
        0x142 if lane >= 16 => row - 1,
        0x143 if lane >= 32 => 31,
        0x150..=0x15f => row + n,
        0x160..=0x16f => row + (k ^ n),
        _ => return None,
    };
    Some(s)
}

/// `update_dpp(old, x, ctrl, row_mask, bank_mask, bound_ctrl)` for every lane of one wave.
fn update_dpp(
    old: &[u32],
    x: &[u32],
    active: &[bool],
    (ctrl, rm, bm, bc): (u32, u32, u32, bool),
) -> Vec<u32> {
    let w = x.len();
    (0..w)
        .map(|l| {
            let written = (rm >> (l / 16)) & 1 == 1 && (bm >> (l % 16 / 4)) & 1 == 1;
            if !written {
                return old[l];
            }
            match dpp_source(ctrl, l, w).filter(|&s| active[s]) {
                Some(s) => x[s],
                None if bc => 0,
                None => old[l],
            }
        })
        .collect()
}

#[test]
fn every_dpp_control_moves_lanes_as_the_isa_defines() {
    for target in TARGETS {
        let mem = FlatMemory::new(BASE, LEN);
        let k = k(&mem, target);
        let n = 128;
        let x: Vec<u32> = (0..n as u32).map(|i| i * 3 + 1).collect();
        k.words(buf(0), &x);
        k.words(buf(1), &vec![0; n * 16]);
        k.run("dpp", "dpp_ctrls", &[lo(buf(0)), 0, lo(buf(1)), 0], 2);
        let got = k.read(buf(1), n * 16);
        let gfx9 = k.wave64;
        let w = if gfx9 { 64 } else { 32 };
        let mut slots: Vec<(usize, (u32, u32, u32, bool))> = vec![
            (0, (0xb1, 0xf, 0xf, false)),
            (1, (0x1b, 0xf, 0xf, false)),
            (2, (0x101, 0xf, 0xf, false)),
            (3, (0x113, 0xf, 0xf, false)),
            (4, (0x113, 0xf, 0xf, true)),
            (5, (0x125, 0xf, 0xf, false)),
            (6, (0x140, 0xa, 0x5, false)),
            (7, (0x141, 0x5, 0xf, false)),
        ];
        if gfx9 {
            slots.extend([
                (8, (0x130, 0xf, 0xf, false)),
                (9, (0x134, 0xf, 0xf, false)),
                (10, (0x138, 0xf, 0xf, true)),
                (11, (0x13c, 0xf, 0xf, false)),
                (12, (0x142, 0xa, 0xf, false)),
                (15, (0x143, 0xc, 0xf, false)),
            ]);
        } else {
            slots.extend([(8, (0x155, 0xf, 0xf, false)), (9, (0x163, 0xf, 0xf, false))]);
        }
        for wave in 0..n / w {
            let lanes = wave * w..(wave + 1) * w;
            let xs = &x[lanes.clone()];
            let old: Vec<u32> = lanes.clone().map(|i| 1000 + i as u32).collect();
            let all = vec![true; w];
            let slot = |s: usize| -> Vec<u32> { lanes.clone().map(|i| got[i * 16 + s]).collect() };
            for &(s, c) in &slots {
                assert_eq!(
                    slot(s),
                    update_dpp(&old, xs, &all, c),
                    "{target}: wave {wave} slot {s} {c:x?}"
                );
            }
            // Every third work-item inactive: not written, not a valid source.
            let active: Vec<bool> = lanes.clone().map(|i| (i % 64) % 3 != 0).collect();
            for (s, bc) in [(13, false), (14, true)] {
                let want: Vec<u32> = update_dpp(&old, xs, &active, (0x111, 0xf, 0xf, bc))
                    .into_iter()
                    .zip(&active)
                    .map(|(v, &a)| if a { v } else { 0 })
                    .collect();
                assert_eq!(
                    slot(s),
                    want,
                    "{target}: wave {wave} slot {s} (inactive lanes)"
                );
            }
            if gfx9 {
                continue;
            }
            // DPP8 within groups of 8, and the permutes (nibble k of {src2, src1} per lane).
            for (s, sel) in [
                (10, [1, 0, 3, 2, 5, 4, 7, 6]),
                (11, [7, 6, 5, 4, 3, 2, 1, 0]),
            ] {
                let want: Vec<u32> = (0..w).map(|l| xs[l / 8 * 8 + sel[l % 8]]).collect();
                assert_eq!(slot(s), want, "{target}: wave {wave} dpp8 slot {s}");
            }
            let nib = |sel: u64, l: usize| ((sel >> (4 * (l % 16))) & 15) as usize;
            let p16: Vec<u32> = (0..w)
                .map(|l| xs[l / 16 * 16 + nib(0x89ab_cdef_0123_4567, l)])
                .collect();
            assert_eq!(slot(12), p16, "{target}: wave {wave} v_permlane16_b32");
            let px: Vec<u32> = (0..w)
                .map(|l| xs[((l / 16 * 16) ^ 16) + nib(0xfedc_ba98_7654_3210, l)])
                .collect();
            assert_eq!(slot(15), px, "{target}: wave {wave} v_permlanex16_b32");
        }
    }
}

/// A VOP3 operation under DPP (gfx11's `_e64_dpp`, 12 bytes): src0 moves across lanes, the
/// other sources do not.
#[test]
fn a_vop3_operation_reads_its_first_source_through_dpp() {
    use hcq_sim::isa::{Isa as I, Launch as L};
    // v_add3_u32_e64_dpp v2, v0, v0, v0 row_shr:1 row_mask:0xf bank_mask:0xf bound_ctrl:1
    // v_lshlrev_b32_e32 v3, 2, v0 / global_store_b32 v3, v2, s[0:1] / s_endpgm
    let code = [
        0xD655_0002u32,
        0x0402_00FA,
        0xFF09_1100,
        0x3006_0082,
        0xDC6A_0000,
        0x0000_0203,
        0xBFB0_0000,
    ];
    let mem = FlatMemory::new(BASE, LEN);
    let b: Vec<u8> = code.iter().flat_map(|w| w.to_le_bytes()).collect();
    mem.poke(CODE, &b).unwrap();
    let l = L {
        isa: I::Gfx11,
        gfx940: true,
        pgm: CODE,
        wave64: false,
        user_sgprs: vec![lo(BUF), 0],
        rsrc2: 2 << 1,
        local: [32, 1, 1],
        groups: [1, 1, 1],
        lds_bytes: 0,
        vgprs: 8,
        scratch: ScratchSetup::default(),
        scratch_waves: 0,
        accum_offset: 0,
        float: FloatMode::from_rsrc1(0),
        budget: 1000,
        clock: 0,
        xcc: Default::default(),
    };
    run(&l, &mem).unwrap();
    let k = K {
        mem: &mem,
        target: "gfx1100",
        wave64: false,
    };
    let want: Vec<u32> = (0..32u32)
        .map(|l| if l % 16 == 0 { 0 } else { l - 1 } + 2 * l)
        .collect();
    assert_eq!(k.read(BUF, 32), want);
}
