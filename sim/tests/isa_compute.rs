//! The ordinary compute kernels of `isa_golden/compute.cl` (clang-19 for every target, built
//! by scripts/isa-golden.sh) run from their machine code with exact results: f64 arithmetic
//! and correctly rounded division (v_div_scale/fmas/fixup), integer division sequences, f32
//! reciprocal/sqrt/fma (OpenCL's 2.5 ulp division), f16 fma, global atomics across workgroups,
//! an LDS reduction of 256 work-items with barriers in a loop, and a 2-D grid (TGID_Y, packed
//! workitem ids). `isa_golden/packed.cl` adds packed f16 math (VOP3P v_pk_*) and LDS atomics
//! returning the old value (inc/dec wrapping, min/max signed and unsigned, and/xor,
//! compare-exchange, f32 add).

const FIXTURE_DIR: &str = "tests/isa_golden";
include!("isa_common/fixture_runner.rs");

fn compute(target: &str) {
    let mem = FlatMemory::new(BASE, LEN);
    let k = K {
        mem: &mem,
        target,
        wave64: target.starts_with("gfx9"),
    };
    let (a, b, c) = (BUF, BUF + 0x1000, BUF + 0x2000);
    // dbl: a[i] = a[i] * b[i] + a[i] / b[i], contracted to an fma.
    let da: Vec<f64> = (0..64).map(|i| 1.0 + f64::from(i) * 0.37).collect();
    let db: Vec<f64> = (0..64).map(|i| 3.0 - f64::from(i) * 0.11).collect();
    let w = |v: &[f64]| -> Vec<u32> {
        v.iter()
            .flat_map(|x| {
                let b = x.to_bits();
                [b as u32, (b >> 32) as u32]
            })
            .collect()
    };
    k.words(a, &w(&da));
    k.words(b, &w(&db));
    k.run("compute", "dbl", &[lo(a), 0, lo(b), 0, 64], 1);
    let got = k.read(a, 128);
    for i in 0..64 {
        let g = f64::from_bits(u64::from(got[2 * i]) | u64::from(got[2 * i + 1]) << 32);
        let want = da[i].mul_add(db[i], da[i] / db[i]);
        assert_eq!(
            g.to_bits(),
            want.to_bits(),
            "{target} dbl {i}: {g} vs {want}"
        );
    }
    // idiv: unsigned and signed division and remainder sequences.
    let ia: Vec<u32> = (0..64).map(|i| 1000 + i * 77).collect();
    let ib: Vec<u32> = (0..64i32).map(|i| (i * 5 - 100) as u32).collect();
    k.words(a, &ia);
    k.words(b, &ib);
    k.run("compute", "idiv", &[lo(a), 0, lo(b), 0, 64], 1);
    let got = k.read(a, 64);
    for i in 0..64 {
        let bi = ib[i] as i32;
        let want = (ia[i] / ((bi | 1) as u32))
            .wrapping_add((bi / 7) as u32)
            .wrapping_add(ia[i] % 13);
        assert_eq!(got[i], want, "{target} idiv {i}");
    }
    // fdiv: OpenCL's division (2.5 ulp), sqrt and fma.
    let fa: Vec<f32> = (0..64).map(|i| 1.0 + i as f32).collect();
    let fb: Vec<f32> = (0..64).map(|i| 2.0 + i as f32 * 0.5).collect();
    k.words(a, &fa.iter().map(|x| x.to_bits()).collect::<Vec<_>>());
    k.words(b, &fb.iter().map(|x| x.to_bits()).collect::<Vec<_>>());
    k.run("compute", "fdiv", &[lo(a), 0, lo(b), 0, 64], 1);
    let got = k.read(a, 64);
    for i in 0..64 {
        let g = f32::from_bits(got[i]);
        let want = fa[i] / fb[i] + fb[i].sqrt() + fa[i].mul_add(fb[i], 1.0);
        assert!(
            (g - want).abs() <= want.abs() * 1e-6,
            "{target} fdiv {i}: {g} vs {want}"
        );
    }
    // atom: add, max and compare-exchange from 128 work-items in 2 workgroups.
    k.words(c, &[0, 0, 0]);
    let v: Vec<u32> = (0..128).map(|i| i * 3 + 1).collect();
    k.words(b, &v);
    k.run("compute", "atom", &[lo(c), 0, lo(b), 0, 128], 2);
    let got = k.read(c, 3);
    assert_eq!(got[0], v.iter().sum::<u32>(), "{target} atomic add");
    assert_eq!(got[1], *v.iter().max().unwrap(), "{target} atomic max");
    assert!(
        v.contains(&got[2]),
        "{target} cmpxchg: one lane's value won"
    );
    // half_math: a[i] = a[i] * b[i] + 1.5 in f16 (one fma).
    let h = |v: f32| -> u16 {
        // Exact for these small values: sign 0, biased exponent, 10-bit mantissa.
        let b = v.to_bits();
        (((b >> 23) as i32 - 127 + 15) as u16) << 10 | ((b >> 13) & 0x3ff) as u16
    };
    let ha: Vec<u16> = (0..64).map(|i| h(1.0 + i as f32 * 0.25)).collect();
    let hb: Vec<u16> = (0..64).map(|i| h(2.0 + (i % 8) as f32 * 0.5)).collect();
    let pack = |v: &[u16]| -> Vec<u32> {
        v.chunks(2)
            .map(|p| u32::from(p[0]) | u32::from(p[1]) << 16)
            .collect()
    };
    k.words(a, &pack(&ha));
    k.words(b, &pack(&hb));
    k.run("compute", "half_math", &[lo(a), 0, lo(b), 0, 64], 1);
    let got = k.read(a, 32);
    for i in 0..64 {
        let g = (got[i / 2] >> (16 * (i % 2))) & 0xffff;
        let (x, y) = (1.0 + i as f32 * 0.25, 2.0 + (i % 8) as f32 * 0.5);
        // x * y + 1.5 is exact in f16 for these inputs (at most 11 significant bits).
        assert_eq!(g, u32::from(h(x * y + 1.5)), "{target} half_math {i}");
    }
    // reduce: 256 work-items sum through LDS, halving with barriers; one atomic per group.
    let r: Vec<u32> = (0..512).map(|i| i * 7 + 3).collect();
    k.words(b, &r);
    k.words(c, &[0]);
    k.run_shape(
        "compute",
        "reduce",
        &[lo(c), 0, lo(b), 0],
        [2, 1, 1],
        [256, 1, 1],
    );
    // compute.cl's "global id" is workgroup id * 64 + local id: group 1 reads from 64.
    let want = r[..256].iter().sum::<u32>() + r[64..320].iter().sum::<u32>();
    assert_eq!(k.read(c, 1)[0], want, "{target} reduce");
    // grid2d: o[y * w + x] = x * 0.5 + y over 8 x 8 workgroups of 64 x 4.
    let wdt = 8 * 64;
    k.run_shape("compute", "grid2d", &[lo(c), 0, wdt], [8, 8, 1], [64, 4, 1]);
    let got = k.read(c, (wdt * 32) as usize);
    for y in 0..32u32 {
        for x in 0..wdt {
            let want = (x as f32) * 0.5 + y as f32;
            assert_eq!(
                got[(y * wdt + x) as usize],
                want.to_bits(),
                "{target} grid2d ({x}, {y})"
            );
        }
    }
}

#[test]
fn compiled_compute_kernels_run_exactly_on_every_target() {
    for t in ["gfx1100", "gfx1201", "gfx90a", "gfx942"] {
        compute(t);
    }
}

/// The f16 bits of `v`, which must be exactly representable as a normal f16 (or zero).
fn f16_exact(v: f64) -> u32 {
    if v == 0.0 {
        return 0;
    }
    let sign = if v < 0.0 { 0x8000 } else { 0 };
    let a = v.abs();
    let e = a.log2().floor() as i32;
    let m = (a / 2f64.powi(e) - 1.0) * 1024.0;
    assert!(
        m.fract() == 0.0 && (-14..=15).contains(&e),
        "{v} is not an exact f16"
    );
    sign | (((e + 15) as u32) << 10) | m as u32
}

fn packed(target: &str) {
    let mem = FlatMemory::new(BASE, LEN);
    let k = K {
        mem: &mem,
        target,
        wave64: target.starts_with("gfx9"),
    };
    let (a, b) = (BUF, BUF + 0x1000);
    // half2_math: fma(x, y, (1.5, -0.25)) + fmax(x, y) * (0.5, 2) - y.yx per half; the inputs
    // keep every intermediate exact in f16, so contraction and order cannot matter.
    let ax = |i: u32| 1.0 + f64::from(i % 8) * 0.25;
    let ay = |i: u32| 0.5 + f64::from(i % 5) * 0.25;
    let bx = |i: u32| 2.0 - f64::from(i % 4) * 0.5;
    let by = |i: u32| 1.0 + f64::from(i % 3) * 0.5;
    let pair = |x: f64, y: f64| f16_exact(x) | f16_exact(y) << 16;
    k.words(a, &(0..64).map(|i| pair(ax(i), ay(i))).collect::<Vec<_>>());
    k.words(b, &(0..64).map(|i| pair(bx(i), by(i))).collect::<Vec<_>>());
    k.run("packed", "half2_math", &[lo(a), 0, lo(b), 0, 64], 1);
    let got = k.read(a, 64);
    for i in 0..64u32 {
        let (x0, x1, y0, y1) = (ax(i), ay(i), bx(i), by(i));
        let want = pair(
            x0 * y0 + 1.5 + x0.max(y0) * 0.5 - y1,
            x1 * y1 - 0.25 + x1.max(y1) * 2.0 - y0,
        );
        assert_eq!(got[i as usize], want, "{target} half2_math {i}");
    }
    // lds_atomics: every lane on its own LDS slots; returns and final values per lane.
    let v: Vec<u32> = (0..64).map(|l| l * 3).collect();
    k.words(b, &v);
    k.run("packed", "lds_atomics", &[lo(a), 0, lo(b), 0], 1);
    let got = k.read(a, 64 * 16);
    for l in 0..64u32 {
        let v = l * 3;
        let want = [
            v,
            v + 1,
            v + 2,
            v + 3,
            v + 4,
            v + 5,
            v + 6,
            (l as f32 * 0.5).to_bits(),
            if v >= 40 { 0 } else { v + 1 },
            if v + 1 > 20 { 20 } else { v },
            (v + 2).min(50),
            ((v + 3) as i32).max(10 - l as i32) as u32,
            (v + 4) & 0xf0f0,
            (v + 5) ^ 0x5555,
            if l % 2 == 0 { l * 3 } else { v + 6 },
            (l as f32 * 0.5 + 0.25).to_bits(),
        ];
        let at = (l * 16) as usize;
        assert_eq!(got[at..at + 16], want, "{target} lds_atomics lane {l}");
    }
}

#[test]
fn compiled_packed_f16_and_lds_atomic_kernels_run_exactly_on_every_target() {
    for t in ["gfx1100", "gfx1201", "gfx90a", "gfx942"] {
        packed(t);
    }
}
