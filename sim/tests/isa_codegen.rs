//! The `codegen` fixture (kernels/codegen.cl, clang-19 for every target): code LLVM emits for
//! ordinary kernels that the hand-written fixtures never reached. Packed f32 math on
//! gfx90a/gfx942 (v_pk_fma_f32, v_pk_add_f32 on register and SGPR pairs), gfx12's
//! minimumNumber/maximumNumber three-operand forms (v_min3/max3_num_f32, v_maxmin/minmax_num_f32)
//! with NaN operands, gfx12's scalar float compares (s_cmp_lt_f32, s_cmp_nle_f32) including an
//! unordered one, and gfx11's loop prefetch hint (s_set_inst_prefetch_distance). Results are
//! checked against Rust references here.

const FIXTURE_DIR: &str = "../core/tests/fixtures/kernels";
include!("isa_common/fixture_runner.rs");

const TARGETS: [&str; 4] = ["gfx90a", "gfx942", "gfx1100", "gfx1201"];

fn buf(k: u64) -> u64 {
    BUF + k * 0x4000
}

fn k<'a>(mem: &'a FlatMemory, target: &'a str) -> K<'a> {
    K {
        mem,
        target,
        wave64: target.starts_with("gfx9"),
    }
}

fn f32s(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

fn the_code_has(target: &str, mnemonic: &str) -> bool {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(format!("tests/isa_golden/codegen-{target}.txt"));
    std::fs::read_to_string(p).unwrap().contains(mnemonic)
}

#[test]
fn packed_f32_math_matches_two_scalar_lanes() {
    assert!(the_code_has("gfx90a", "v_pk_fma_f32") && the_code_has("gfx942", "v_pk_add_f32"));
    for target in TARGETS {
        let mem = FlatMemory::new(BASE, LEN);
        let k = k(&mem, target);
        // Halves and small integers: products and sums are exact, fused or not.
        let a: Vec<f32> = (0..128)
            .map(|i| ((i * 7) % 13) as f32 * 0.5 - 3.0)
            .collect();
        let b: Vec<f32> = (0..128)
            .map(|i| ((i * 5) % 11) as f32 * 0.25 - 1.0)
            .collect();
        k.words(buf(0), &f32s(&a));
        k.words(buf(1), &f32s(&b));
        k.words(buf(2), &vec![0; 256]);
        k.run(
            "codegen",
            "pk_f32",
            &[lo(buf(0)), 0, lo(buf(1)), 0, lo(buf(2)), 0],
            1,
        );
        let got = k.read(buf(2), 256);
        for i in 0..128 {
            let c = if i % 2 == 0 { 1.5 } else { 2.5 };
            assert_eq!(f32::from_bits(got[i]), a[i] * b[i] + c, "{target}: o[{i}]");
            let f = a[i].mul_add(b[i], a[i]) + b[i];
            assert_eq!(f32::from_bits(got[128 + i]), f, "{target}: o[{}]", 128 + i);
        }
    }
}

fn minmax3(target: &str, s: f32, t: f32) {
    let mem = FlatMemory::new(BASE, LEN);
    let k = k(&mem, target);
    let n = 64;
    // Some operands NaN: minimumNumber/maximumNumber return the other one.
    let a: Vec<f32> = (0..4 * n)
        .map(|i| {
            if i % 11 == 3 {
                f32::NAN
            } else {
                ((i * 13) % 17) as f32 - 8.5
            }
        })
        .collect();
    k.words(buf(0), &f32s(&a));
    k.words(buf(1), &vec![0; 3 * n]);
    k.run(
        "codegen",
        "minmax3",
        &[lo(buf(0)), 0, lo(buf(1)), 0, s.to_bits(), t.to_bits()],
        1,
    );
    let got = k.read(buf(1), 3 * n);
    let c = if s < t { 3.0 } else { 0.0 } + if s >= t * 2.0 { 0.0 } else { 0.5 };
    for i in 0..n {
        let (a0, a1, a2, a3) = (a[4 * i], a[4 * i + 1], a[4 * i + 2], a[4 * i + 3]);
        let want = [
            a0.min(a1).min(a2) + a0.max(s).max(a3),
            a0.min(a1).max(a0.max(a1).min(s)),
            c,
        ];
        for (j, w) in want.iter().enumerate() {
            let g = f32::from_bits(got[3 * i + j]);
            assert!(
                g == *w || (g.is_nan() && w.is_nan()),
                "{target} s={s} t={t}: o[{}] = {g}, want {w}",
                3 * i + j
            );
        }
    }
}

#[test]
fn three_operand_min_max_and_scalar_float_compares() {
    assert!(the_code_has("gfx1201", "v_max3_num_f32") && the_code_has("gfx1201", "s_cmp_nle_f32"));
    for target in TARGETS {
        minmax3(target, 1.25, 4.0);
        minmax3(target, 5.0, 2.0);
        // An unordered compare: s < NaN is false, !(s >= NaN) is true.
        minmax3(target, 0.75, f32::NAN);
    }
}

#[test]
fn a_loop_with_the_prefetch_hint_runs_to_its_result() {
    assert!(the_code_has("gfx1100", "s_set_inst_prefetch_distance"));
    for target in TARGETS {
        let mem = FlatMemory::new(BASE, LEN);
        let k = k(&mem, target);
        let rounds = 5u32;
        let a: Vec<f32> = (0..64 * (rounds as usize + 1))
            .map(|i| ((i * 3) % 7) as f32 * 0.125 + 0.25)
            .collect();
        k.words(buf(0), &f32s(&a));
        k.words(buf(1), &vec![0; 64]);
        k.run(
            "codegen",
            "prefetch_loop",
            &[lo(buf(0)), 0, lo(buf(1)), 0, rounds],
            1,
        );
        let got = k.read(buf(1), 64);
        for (i, g) in got.iter().enumerate() {
            let (mut acc, mut b2) = (0f64, 1f64);
            for r in 0..rounds as usize {
                let x = f64::from(a[i + r * 64]);
                acc += x * f64::from(a[r]);
                b2 = b2 * x + acc;
                acc = (acc * b2).abs().sqrt() + x * 0.5;
            }
            let want = acc + b2;
            let g = f64::from(f32::from_bits(*g));
            assert!(
                (g - want).abs() <= want.abs() * 1e-5,
                "{target}: o[{i}] = {g}, want {want}"
            );
        }
    }
}
