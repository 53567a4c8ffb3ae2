//! The matrix cores from compiled kernels (kernels/matrix.cl, clang-19 builtins): MFMA on
//! gfx90a/gfx942 (16x16x16 f16, 32x32x8 f16, 16x16x4 f32, accumulators in AGPRs) and WMMA on
//! gfx1100/gfx1201 (16x16x16 f16 and bf16, wave32). Each lane loads its part of the operands
//! in the ISA's register layout; the result must be D = A x B + C over the row-major
//! matrices (exact: small integers and halves).

const FIXTURE_DIR: &str = "../core/tests/fixtures/kernels";
include!("isa_common/fixture_runner.rs");

fn buf(k: u64) -> u64 {
    BUF + k * 0x4000
}

/// f16 bits of a small integer or half (exact).
fn f16(v: f32) -> u16 {
    if v == 0.0 {
        return 0;
    }
    let s = if v < 0.0 { 0x8000 } else { 0 };
    let a = v.abs();
    let e = a.log2().floor() as i32;
    let m = ((a / 2f32.powi(e) - 1.0) * 1024.0).round() as u16;
    s | (((e + 15) as u16) << 10) | m
}

fn bf16(v: f32) -> u16 {
    (v.to_bits() >> 16) as u16
}

fn val(i: usize, salt: usize) -> f32 {
    ((i * 7 + salt * 3) % 9) as f32 * 0.5 - 2.0
}

/// D = A (m x k) x B (k x n) + C (m x n), row-major.
fn mma(m: usize, n: usize, k: usize, a: &[f32], b: &[f32], c: &[f32]) -> Vec<f32> {
    let mut d = c.to_vec();
    for r in 0..m {
        for col in 0..n {
            for x in 0..k {
                d[r * n + col] += a[r * k + x] * b[x * n + col];
            }
        }
    }
    d
}

fn halves(v: &[u16]) -> Vec<u32> {
    v.chunks(2)
        .map(|p| u32::from(p[0]) | u32::from(*p.get(1).unwrap_or(&0)) << 16)
        .collect()
}

#[test]
fn mfma_on_gfx90a_and_gfx942_computes_d_equals_a_b_plus_c() {
    for target in ["gfx90a", "gfx942"] {
        let mem = FlatMemory::new(BASE, LEN);
        let k = K {
            mem: &mem,
            target,
            wave64: true,
        };
        // Tile 0: 16x16x16 (a, b at 0; c at 0); tile 1: 32x32x8 (a, b at 256; c at 256);
        // tile 2: 16x16x4 f32 (a, b in `af`; c at 1280).
        let a0: Vec<f32> = (0..256).map(|i| val(i, 1)).collect();
        let b0: Vec<f32> = (0..256).map(|i| val(i, 2)).collect();
        let a1: Vec<f32> = (0..256).map(|i| val(i, 3)).collect();
        let b1: Vec<f32> = (0..256).map(|i| val(i, 4)).collect();
        let a2: Vec<f32> = (0..64).map(|i| val(i, 5)).collect();
        let b2: Vec<f32> = (0..64).map(|i| val(i, 6)).collect();
        let c: Vec<f32> = (0..256 + 1024 + 256).map(|i| val(i, 7)).collect();
        let a16: Vec<u16> = a0.iter().chain(&a1).map(|&v| f16(v)).collect();
        let b16: Vec<u16> = b0.iter().chain(&b1).map(|&v| f16(v)).collect();
        k.words(buf(0), &halves(&a16));
        k.words(buf(1), &halves(&b16));
        k.words(buf(2), &c.iter().map(|v| v.to_bits()).collect::<Vec<_>>());
        let af: Vec<u32> = a2.iter().chain(&b2).map(|v| v.to_bits()).collect();
        k.words(buf(3), &af);
        let args = [lo(buf(0)), 0, lo(buf(1)), 0, lo(buf(2)), 0, lo(buf(3)), 0];
        k.run("matrix", "mma", &args, 1);
        let got: Vec<f32> = k
            .read(buf(2), c.len())
            .into_iter()
            .map(f32::from_bits)
            .collect();
        assert_eq!(
            got[..256],
            mma(16, 16, 16, &a0, &b0, &c[..256])[..],
            "{target}: 16x16x16"
        );
        assert_eq!(
            got[256..1280],
            mma(32, 32, 8, &a1, &b1, &c[256..1280])[..],
            "{target}: 32x32x8"
        );
        assert_eq!(
            got[1280..],
            mma(16, 16, 4, &a2, &b2, &c[1280..])[..],
            "{target}: 16x16x4 f32"
        );
    }
}

#[test]
fn wmma_on_gfx1100_and_gfx1201_computes_d_equals_a_b_plus_c() {
    for target in ["gfx1100", "gfx1201"] {
        let mem = FlatMemory::new(BASE, LEN);
        let k = K {
            mem: &mem,
            target,
            wave64: false,
        };
        // Wave 0: f16 tile; wave 1: bf16 tile.
        let a: Vec<f32> = (0..512).map(|i| val(i, 1)).collect();
        let b: Vec<f32> = (0..512).map(|i| val(i, 2)).collect();
        let c: Vec<f32> = (0..512).map(|i| val(i, 3)).collect();
        let enc = |v: &[f32]| -> Vec<u16> {
            v[..256]
                .iter()
                .map(|&x| f16(x))
                .chain(v[256..].iter().map(|&x| bf16(x)))
                .collect()
        };
        k.words(buf(0), &halves(&enc(&a)));
        k.words(buf(1), &halves(&enc(&b)));
        k.words(buf(2), &c.iter().map(|v| v.to_bits()).collect::<Vec<_>>());
        let args = [lo(buf(0)), 0, lo(buf(1)), 0, lo(buf(2)), 0, lo(buf(3)), 0];
        k.run("matrix", "mma", &args, 1);
        let got: Vec<f32> = k
            .read(buf(2), 512)
            .into_iter()
            .map(f32::from_bits)
            .collect();
        for (t, kind) in ["f16", "bf16"].iter().enumerate() {
            let r = t * 256..(t + 1) * 256;
            let want = mma(16, 16, 16, &a[r.clone()], &b[r.clone()], &c[r.clone()]);
            assert_eq!(got[r], want[..], "{target}: {kind}");
        }
    }
}
