//! The `mathmix` fixture (kernels/mathmix.cl, clang-19 for every target) runs from its machine
//! code with results checked against Rust references computed here: an LDS-tiled matmul, a
//! reduction with global atomics, 32-bit integer, f32, f64, f16 and 64-bit integer math, a 3-D
//! grid, f16 <-> f32 conversions with f16 min/max/fma (v_fma_mix*, v_pack_b32_f16), byte and
//! short loads and stores through global memory and LDS (gfx9 SDWA, 16-bit integer ops) and
//! 64-bit atomics with a compare-exchange float add. Integer, f64, f16 and rounding results are
//! exact; the f32 transcendentals and OpenCL's 2.5-ulp division within a small tolerance.

const FIXTURE_DIR: &str = "../core/tests/fixtures/kernels";
include!("isa_common/fixture_runner.rs");

/// Buffer `k` (0x4000 bytes apart).
fn buf(k: u64) -> u64 {
    BUF + k * 0x4000
}

fn f32s(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

fn u64s(v: &[u64]) -> Vec<u32> {
    v.iter()
        .flat_map(|x| [*x as u32, (*x >> 32) as u32])
        .collect()
}

/// `v` rounded to the nearest f16 (ties to even); normal f16 range or zero only.
fn f16_bits(v: f64) -> u32 {
    if v == 0.0 {
        return if v.is_sign_negative() { 0x8000 } else { 0 };
    }
    let sign = if v < 0.0 { 0x8000 } else { 0 };
    let a = v.abs();
    let mut e = a.log2().floor() as i32;
    let mut m = (a / 2f64.powi(e) * 1024.0).round_ties_even();
    if m >= 2048.0 {
        m = 1024.0;
        e += 1;
    }
    assert!(
        (-14..=15).contains(&e),
        "{v} is outside the normal f16 range"
    );
    sign | (((e + 15) as u32) << 10) | (m as u32 - 1024)
}

/// The f64 value of f16 bits (normal or zero).
fn f16_val(h: u32) -> f64 {
    let s = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let (e, m) = ((h >> 10) & 0x1f, h & 0x3ff);
    if e == 0 && m == 0 {
        return 0.0 * s;
    }
    s * (1.0 + f64::from(m) / 1024.0) * 2f64.powi(e as i32 - 15)
}

/// 16-bit values packed two per word.
fn halves(v: &[u32]) -> Vec<u32> {
    v.chunks(2)
        .map(|p| p[0] | p.get(1).map_or(0, |h| h << 16))
        .collect()
}

fn unhalves(w: &[u32]) -> Vec<u32> {
    w.iter().flat_map(|x| [x & 0xffff, x >> 16]).collect()
}

fn close(got: f32, want: f64, tol: f64) -> bool {
    (f64::from(got) - want).abs() <= tol * want.abs().max(1.0)
        || (got.is_infinite()
            && want.is_infinite()
            && got.is_sign_positive() == want.is_sign_positive())
}

fn mathmix(target: &str) {
    let mem = FlatMemory::new(BASE, LEN);
    let k = K {
        mem: &mem,
        target,
        wave64: target.starts_with("gfx9"),
    };
    let p = |b: u64| [lo(buf(b)), 0];
    // matmul: 16 x 16 through 8 x 8 LDS tiles, 2 x 2 workgroups of 8 x 8.
    let n = 16usize;
    let ma: Vec<f32> = (0..n * n).map(|i| ((i * 7) % 5) as f32 - 2.0).collect();
    let mb: Vec<f32> = (0..n * n).map(|i| ((i * 3) % 7) as f32 - 3.0).collect();
    k.words(buf(0), &f32s(&ma));
    k.words(buf(1), &f32s(&mb));
    k.words(buf(2), &vec![0; n * n]);
    let args = [&p(0)[..], &p(1), &p(2), &[n as u32]].concat();
    k.run_shape("mathmix", "matmul", &args, [2, 2, 1], [8, 8, 1]);
    let got = k.read(buf(2), n * n);
    for y in 0..n {
        for x in 0..n {
            let want = (0..n).fold(0f32, |acc, j| ma[y * n + j].mul_add(mb[j * n + x], acc));
            assert_eq!(got[y * n + x], want.to_bits(), "{target} matmul ({x}, {y})");
        }
    }
    // reduce_atomic: 200 values over 4 workgroups: LDS tree sum, then global add/max/min/xor/
    // count/exchange.
    let cnt = 200u32;
    let input: Vec<i32> = (0..u64::from(cnt))
        .map(|i| ((i * 2_654_435_761) % 1000) as i32 - 500)
        .collect();
    k.words(buf(0), &input.iter().map(|x| *x as u32).collect::<Vec<_>>());
    k.words(buf(1), &[0, -1_000_000i32 as u32, 1_000_000, 0, 0, 0]);
    k.run(
        "mathmix",
        "reduce_atomic",
        &[&p(0)[..], &p(1), &[cnt]].concat(),
        4,
    );
    let got = k.read(buf(1), 6);
    let want = [
        input.iter().sum::<i32>(),
        *input.iter().max().unwrap(),
        *input.iter().min().unwrap(),
        input.iter().fold(0, |a, x| a ^ x),
        cnt as i32,
    ];
    assert_eq!(got[..5], want.map(|x| x as u32), "{target} reduce_atomic");
    assert!(got[5] < cnt, "{target} reduce_atomic exchange {}", got[5]);
    // intmath: 128 work-items, 12 results each.
    let m = 128u32;
    let ia: Vec<i32> = (0..m)
        .map(|i| i.wrapping_mul(0x9E37_79B1).wrapping_add(12345) as i32)
        .collect();
    k.words(buf(0), &ia.iter().map(|x| *x as u32).collect::<Vec<_>>());
    k.run("mathmix", "intmath", &[&p(0)[..], &p(1)].concat(), 2);
    let got = k.read(buf(1), 12 * m as usize);
    for i in 0..m {
        let x = ia[i as usize];
        let d = if i == 5 { 7 } else { i as i32 - 5 };
        let ux = x as u32;
        let want = [
            x.wrapping_div(d),
            x.wrapping_rem(d),
            (ux / (i + 1)) as i32,
            (ux % (i + 3)) as i32,
            ((i64::from(x) * 0x1234_5678) >> 32) as i32,
            ux.count_ones() as i32,
            ux.leading_zeros() as i32,
            (ux.wrapping_shl(i & 31) | ux.wrapping_shr(32u32.wrapping_sub(i) & 31)) as i32,
            x.wrapping_abs()
                .wrapping_add(x.min(d))
                .wrapping_add(x.max(d)),
            x >> (i & 31),
            (ux >> (i & 31)) as i32,
            (((x << 8) >> 8).wrapping_mul((d << 8) >> 8).wrapping_add(3))
                ^ (x << (i & 7))
                ^ (ux | 0x8000_0000).trailing_zeros() as i32,
        ];
        let at = 12 * i as usize;
        assert_eq!(
            got[at..at + 12],
            want.map(|v| v as u32),
            "{target} intmath {i}"
        );
    }
    // fmath: exact where the operation rounds once; transcendentals and OpenCL's division
    // within a tolerance.
    let fa: Vec<f32> = (0..m)
        .map(|i| ((f64::from(i) - 64.0) * 0.37) as f32)
        .collect();
    k.words(buf(0), &f32s(&fa));
    k.run("mathmix", "fmath", &[&p(0)[..], &p(1)].concat(), 2);
    let got = k.read(buf(1), 10 * m as usize);
    for (i, &x) in fa.iter().enumerate() {
        let g = |j: usize| f32::from_bits(got[10 * i + j]);
        let xd = f64::from(x);
        let approx = [
            (0, xd.abs().sqrt()),
            (1, (xd * 0.25).exp2()),
            (2, (xd.abs() + 1.0).log2()),
            (3, (core::f64::consts::TAU * xd).sin()),
            (7, 1.0 / xd),
            (8, xd / 3.0),
        ];
        for (j, want) in approx {
            assert!(
                close(g(j), want, 2e-5),
                "{target} fmath {i}.{j}: {} vs {want}",
                g(j)
            );
        }
        let exact = [
            (4, x.floor() + x.ceil() + x.trunc() + x.round_ties_even()),
            (5, x.min(1.5) * x.max(-2.0)),
            (6, (x as i32) as f32 + (x.abs() as u32) as f32),
            (
                9,
                (x.abs() * 0.5).copysign(-x) + if x > 1.0 { 2.0 } else { -1.0 },
            ),
        ];
        for (j, want) in exact {
            assert_eq!(g(j).to_bits(), want.to_bits(), "{target} fmath {i}.{j}");
        }
    }
    // dmath: contracted x * x + 1, fma, conversions, min/max, correctly rounded division and
    // square root.
    let da: Vec<f64> = (0..m).map(|i| (f64::from(i) - 64.0) * 1.37).collect();
    k.words(
        buf(0),
        &u64s(&da.iter().map(|x| x.to_bits()).collect::<Vec<_>>()),
    );
    k.run("mathmix", "dmath", &[&p(0)[..], &p(1)].concat(), 2);
    let got = k.read64(buf(1), 6 * m as usize);
    for (i, &x) in da.iter().enumerate() {
        let want = [
            x.mul_add(x, 1.0),
            x.mul_add(3.0, -2.0),
            (x as i64) as f64,
            x.min(0.5) + x.max(-0.5),
            x / 7.0,
            x.abs().sqrt(),
        ];
        for (j, w) in want.iter().enumerate() {
            assert_eq!(got[6 * i + j], w.to_bits(), "{target} dmath {i}.{j}");
        }
    }
    // hmath: f16 x * 2 + 1 (one fma) and x * x (rounded to f16), packed by v_pack_b32_f16.
    let ha: Vec<u32> = (0..m)
        .map(|i| f16_bits((f64::from(i) - 64.0) * 0.25))
        .collect();
    k.words(buf(0), &halves(&ha));
    k.run("mathmix", "hmath", &[&p(0)[..], &p(1)].concat(), 2);
    let got = unhalves(&k.read(buf(1), m as usize));
    for (i, &h) in ha.iter().enumerate() {
        let x = f16_val(h);
        let want = [f16_bits(x * 2.0 + 1.0), f16_bits(x * x)];
        assert_eq!(got[2 * i..2 * i + 2], want, "{target} hmath {i}");
    }
    // grid3d: 2 x 2 x 2 workgroups of 4 x 4 x 2.
    k.words(buf(0), &[0; 256]);
    k.run_shape(
        "mathmix",
        "grid3d",
        &[&p(0)[..], &[8, 8]].concat(),
        [2, 2, 2],
        [4, 4, 2],
    );
    let got = k.read(buf(0), 256);
    for z in 0..4u32 {
        for y in 0..8u32 {
            for x in 0..8u32 {
                let want = x | y << 8 | z << 16 | (z / 2) << 24;
                assert_eq!(got[((z * 8 + y) * 8 + x) as usize], want, "{target} grid3d");
            }
        }
    }
    // longmath: 64-bit multiply, unsigned and signed division, remainder, rotate.
    let la: Vec<u64> = (0..u64::from(m))
        .map(|i| {
            i.wrapping_mul(0x9E37_79B9_7F4A_7C15)
                .wrapping_add(0x123_4567)
        })
        .collect();
    k.words(buf(0), &u64s(&la));
    k.run("mathmix", "longmath", &[&p(0)[..], &p(1)].concat(), 2);
    let got = k.read64(buf(1), 5 * m as usize);
    for (i, &x) in la.iter().enumerate() {
        let iu = i as u64;
        let want = [
            x.wrapping_mul(0x9E37_79B9_7F4A_7C15),
            x / (iu + 3),
            x % (iu + 7),
            x.wrapping_shr((iu & 63) as u32) | x.wrapping_shl((64u64.wrapping_sub(iu) & 63) as u32),
            ((x as i64).wrapping_div(-(i as i64 + 2))) as u64,
        ];
        assert_eq!(got[5 * i..5 * i + 5], want, "{target} longmath {i}");
    }
    // hconv: f16 <-> f32 conversions, f16 fma/min/max/sub (every value exact in f16). No
    // input is zero: LLVM turns (half)(x * y) into v_fma_mix(x, y, +0), whose -0 * y + 0 is +0.
    let hx: Vec<u32> = (0..m)
        .map(|i| f16_bits((f64::from(i % 16) - 8.0) * 0.25 + 0.125))
        .collect();
    let fy: Vec<f32> = (0..m)
        .map(|i| ((i % 7) as f32 - 3.0) * 0.5 + 0.25)
        .collect();
    k.words(buf(0), &halves(&hx));
    k.words(buf(1), &f32s(&fy));
    let args = [&p(0)[..], &p(1), &p(2), &p(3)].concat();
    k.run("mathmix", "hconv", &args, 2);
    let got = unhalves(&k.read(buf(2), 2 * m as usize));
    let gotf = k.read(buf(3), m as usize);
    for i in 0..m as usize {
        let (x, y) = (f16_val(hx[i]), f64::from(fy[i]));
        let want = [
            f16_bits(x.mul_add(y, 0.5)),
            f16_bits(x.max(y) - x.min(1.0)),
            f16_bits(x - y),
            f16_bits(x * y),
        ];
        assert_eq!(got[4 * i..4 * i + 4], want, "{target} hconv {i}");
        assert_eq!(
            gotf[i],
            ((x + y * 3.0) as f32).to_bits(),
            "{target} hconv f32 {i}"
        );
    }
    // bytes: u8/i8/u16 loads, byte and short stores through global memory and LDS, selects.
    let ba: Vec<u8> = (0..m).map(|i| (i * 37 + 11) as u8).collect();
    let bb: Vec<i8> = (0..m).map(|i| (i * 53) as u8 as i8).collect();
    let bc: Vec<u16> = (0..m).map(|i| (i * 4099 + 7) as u16).collect();
    mem.poke(buf(0), &ba).unwrap();
    mem.poke(buf(1), &bb.iter().map(|x| *x as u8).collect::<Vec<_>>())
        .unwrap();
    mem.poke(
        buf(2),
        &bc.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<_>>(),
    )
    .unwrap();
    let args = [&p(0)[..], &p(1), &p(2), &p(3), &p(4), &p(5)].concat();
    k.run("mathmix", "bytes", &args, 2);
    let (o8, o16, o32) = (
        k.bytes(buf(3), m as usize),
        k.bytes(buf(4), 2 * m as usize),
        k.read(buf(5), 2 * m as usize),
    );
    for i in 0..m as usize {
        let j = i / 64 * 64 + 63 - i % 64;
        let (x, y, z) = (i32::from(ba[i]), i32::from(bb[i]), i32::from(bc[i]));
        let want8 = (ba[j] ^ bb[j] as u8).wrapping_add(1);
        let ls = (i32::from(bc[j] as i16) - i32::from(bb[j])) as i16;
        let want16 = (i32::from(ls) >> 1) as i16;
        let mx = x.max(y);
        let mn = z.min(mx);
        let sel = if x & 1 == 1 {
            mn
        } else if y < 0 {
            -mx
        } else {
            mx * 3
        };
        let bits =
            ((z as u32 >> 3) & 0x1f) | (((x & 7) as u32) << 10) | (u32::from(bb[i] as u8) << 24);
        assert_eq!(o8[i], want8, "{target} bytes u8 {i}");
        assert_eq!(
            i16::from_le_bytes([o16[2 * i], o16[2 * i + 1]]),
            want16,
            "{target} bytes i16 {i}"
        );
        assert_eq!(
            o32[2 * i..2 * i + 2],
            [sel as u32, bits],
            "{target} bytes int {i}"
        );
    }
    // atom64: 64-bit atomic add and max, a compare-exchange loop adding floats (exact sums).
    let v: Vec<u64> = (0..u64::from(m))
        .map(|i| i.wrapping_mul(0x1234_5678_9abc).wrapping_add(77))
        .collect();
    k.words(buf(0), &[0, 0, 0, 0]);
    k.words(buf(1), &[0]);
    k.words(buf(2), &u64s(&v));
    k.run("mathmix", "atom64", &[&p(0)[..], &p(1), &p(2)].concat(), 2);
    let got = k.read64(buf(0), 2);
    let want_sum = v.iter().fold(0u64, |a, x| a.wrapping_add(*x));
    assert_eq!(got, [want_sum, *v.iter().max().unwrap()], "{target} atom64");
    let fsum: f32 = (0..m).map(|i| (i & 7) as f32 * 0.5).sum();
    assert_eq!(
        k.read(buf(1), 1)[0],
        fsum.to_bits(),
        "{target} atom64 float add"
    );
}

/// The bit-manipulation, select, vector, half2 and LDS-atomic kernels.
fn mathmix_more(target: &str) {
    let mem = FlatMemory::new(BASE, LEN);
    let k = K {
        mem: &mem,
        target,
        wave64: target.starts_with("gfx9"),
    };
    let p = |b: u64| [lo(buf(b)), 0];
    let m = 128usize;
    // bits: bitfield extract/insert, byte swap and permute, bit reverse, 64-bit counts.
    let xa: Vec<u32> = (0..m as u32)
        .map(|i| i.wrapping_mul(0x9E37_79B1) ^ (i << 7))
        .collect();
    let xb: Vec<u32> = (0..m as u32)
        .map(|i| i.wrapping_mul(0x85EB_CA6B).rotate_left(i % 32))
        .collect();
    k.words(buf(0), &xa);
    k.words(buf(1), &xb);
    k.run("mathmix", "bits", &[&p(0)[..], &p(1), &p(2)].concat(), 2);
    let got = k.read(buf(2), 8 * m);
    for i in 0..m {
        let (x, y) = (xa[i], xb[i]);
        let (x64, y64) = (u64::from(x), u64::from(y));
        let want = [
            (x >> 5) & 0x3ff,
            (x & !(0xff << 8)) | ((y & 0xff) << 8),
            x.swap_bytes(),
            ((x & 0xff) << 24) | ((y >> 8) & 0xff) | (x & 0xff00) | (y & 0xff_0000),
            // OpenCL's `long long` is 128 bits: __builtin_clzll counts from bit 127.
            x.reverse_bits() ^ u128::from((x64 << 32) | y64 | 1).leading_zeros(),
            (((x << 3) as i32) >> 11) as u32,
            ((x64 << 32) | y64).count_ones() + ((y64 << 32) | 0x8000_0000).trailing_zeros(),
            (((x64 * y64) >> 32) as u32).wrapping_add((x & 0xff_ffff).wrapping_mul(y & 0xff_ffff)),
        ];
        assert_eq!(got[8 * i..8 * i + 8], want, "{target} bits {i}");
    }
    // sel: select chains and 64-bit min/max.
    let sa: Vec<i32> = (0..m as i32).map(|i| (i * 37 - 2000) ^ (i << 9)).collect();
    let sb: Vec<i32> = (0..m as i32).map(|i| (i % 11 - 5) * (i * 13 + 1)).collect();
    k.words(buf(0), &sa.iter().map(|x| *x as u32).collect::<Vec<_>>());
    k.words(buf(1), &sb.iter().map(|x| *x as u32).collect::<Vec<_>>());
    k.run(
        "mathmix",
        "sel",
        &[&p(0)[..], &p(1), &p(2), &p(3)].concat(),
        2,
    );
    let got = k.read(buf(2), 4 * m);
    let gotl = k.read64(buf(3), 2 * m);
    for i in 0..m {
        let (x, y) = (sa[i], sb[i]);
        let r = if x > y {
            x.wrapping_sub(y)
        } else {
            y.wrapping_sub(x)
        };
        let r = if x & 1 == 1 {
            r
        } else if y < 0 {
            r.wrapping_mul(2)
        } else {
            r.wrapping_add(7)
        };
        let r = if x == y { 0 } else { r };
        let q = match (x < 0, y < 0) {
            (true, true) => 1,
            (true, false) => 2,
            (false, true) => 3,
            (false, false) => 4,
        };
        let c = x.clamp(-1000, 1000) + (y % 17).abs();
        let want = [r, q, (x as u32).min(y as u32) as i32, c];
        assert_eq!(
            got[4 * i..4 * i + 4],
            want.map(|v| v as u32),
            "{target} sel {i}"
        );
        let (lx, ly) = (i64::from(x) * 3, i64::from(y) << 20);
        let wl = [lx.min(ly), if lx as u64 > ly as u64 { lx } else { ly }];
        assert_eq!(
            gotl[2 * i..2 * i + 2],
            wl.map(|v| v as u64),
            "{target} sel i64 {i}"
        );
    }
    // vec8: char4/short2 vectors; a u16 per lane exchanged with the neighbour through LDS.
    let va: Vec<[u8; 4]> = (0..m as u32)
        .map(|i| (i.wrapping_mul(0x0101_0101 * 7) ^ 0x5a3c_0f81).to_le_bytes())
        .collect();
    let vb: Vec<[i16; 2]> = (0..m as i32)
        .map(|i| [(i * 517 - 30000) as i16, (i * 299 - 19000) as i16])
        .collect();
    mem.poke(buf(0), &va.concat()).unwrap();
    let bb: Vec<u8> = vb
        .iter()
        .flat_map(|v| v.iter().flat_map(|h| h.to_le_bytes()))
        .collect();
    mem.poke(buf(1), &bb).unwrap();
    k.run(
        "mathmix",
        "vec8",
        &[&p(0)[..], &p(1), &p(2), &p(3), &p(4)].concat(),
        2,
    );
    let (o4, oi, oc) = (
        k.bytes(buf(2), 4 * m),
        k.read(buf(3), 2 * m),
        k.bytes(buf(4), m),
    );
    let ls = |j: usize| -> u16 {
        (i32::from(va[j][0]) + i32::from(va[j][1]) * 2) as u16 ^ vb[j][1] as u16
    };
    for i in 0..m {
        let (x, y) = (va[i], vb[i]);
        let pv = ls(i ^ 1);
        let want4 = [x[3], x[2].wrapping_add(1), x[1] >> 1, pv as u8];
        assert_eq!(o4[4 * i..4 * i + 4], want4, "{target} vec8 u8x4 {i}");
        let wi = [
            i32::from(y[0]) * i32::from(y[1]),
            i32::from(pv) - i32::from(y[0]),
        ];
        assert_eq!(
            oi[2 * i..2 * i + 2],
            wi.map(|v| v as u32),
            "{target} vec8 int2 {i}"
        );
        assert_eq!(oc[i], (y[0] >> 3) as u8, "{target} vec8 char {i}");
    }
    // half2m: half2 fma and max, f16 <-> integer conversions (every value exact in f16).
    let hx = |i: usize| (f64::from((i % 16) as u32) - 8.0) * 0.5 + 0.25;
    let hy = |i: usize| (f64::from((i % 9) as u32) - 4.0) * 0.75;
    let hb = |i: usize| (f64::from((i % 5) as u32) - 2.0) * 0.5 + 0.125;
    let ha: Vec<u32> = (0..m)
        .map(|i| f16_bits(hx(i)) | f16_bits(hy(i)) << 16)
        .collect();
    k.words(buf(0), &ha);
    k.words(
        buf(1),
        &halves(&(0..m).map(|i| f16_bits(hb(i))).collect::<Vec<_>>()),
    );
    k.run(
        "mathmix",
        "half2m",
        &[&p(0)[..], &p(1), &p(2), &p(3), &p(4)].concat(),
        2,
    );
    let (o2, oi, os) = (
        k.read(buf(2), 2 * m),
        k.read(buf(3), m),
        k.bytes(buf(4), 2 * m),
    );
    for i in 0..m {
        let (x0, x1, y) = (hx(i), hy(i), hb(i));
        let r = [(x0 * y + 1.0).max(x0), (x1 * y - 1.0).max(x1)];
        assert_eq!(
            o2[i],
            f16_bits(r[0]) | f16_bits(r[1]) << 16,
            "{target} half2m {i}"
        );
        let wi = x0 as i32 + i32::from(x1 < y) + y.abs() as u32 as i32;
        assert_eq!(oi[i], wi as u32, "{target} half2m int {i}");
        let ws = ((x0 * 4.0) as i16).wrapping_add(if y > 0.0 { 1 } else { -1 });
        assert_eq!(
            i16::from_le_bytes([os[2 * i], os[2 * i + 1]]),
            ws,
            "{target} half2m short {i}"
        );
        let conv = f16_bits(i as f64) | f16_bits((i * 3) as f64) << 16;
        assert_eq!(o2[i + m], conv, "{target} half2m conversions {i}");
    }
    // latom: one group: 64-bit and f32 LDS atomics, 64-bit global add/min/and.
    k.words(buf(0), &[0]);
    k.words(buf(1), &u64s(&[0, 0, 0, 0, 1000, u64::MAX]));
    k.run("mathmix", "latom", &[&p(0)[..], &p(1)].concat(), 1);
    let got = k.read64(buf(1), 6);
    let lanes = 0..64u64;
    let want = [
        lanes.clone().map(|l| l << 33).sum::<u64>(),
        (63 * 77) << 20,
        u64::MAX,
        64 << 40,
        5,
        0,
    ];
    assert_eq!(got, want, "{target} latom");
    let fsum: f32 = lanes.map(|l| l as f32 * 0.25).sum();
    assert_eq!(
        k.read(buf(0), 1)[0],
        fsum.to_bits(),
        "{target} latom float add"
    );
}

/// Cross-lane shuffles, f64/f16/64-bit integer conversions, LDS and global atomics.
fn mathmix_lanes(target: &str) {
    let mem = FlatMemory::new(BASE, LEN);
    let wave64 = target.starts_with("gfx9");
    let k = K {
        mem: &mem,
        target,
        wave64,
    };
    let p = |b: u64| [lo(buf(b)), 0];
    let m = 128usize;
    // wave: bpermute from lane ^ 1, permute to lane + 3 (mod 32), readfirstlane, swizzle
    // SWAP 1. Lane ids are within the wave; permute's targets stay below 32, so in wave64
    // lanes 32..63 write over lanes 0..31 (the highest writer wins) and read 0.
    let wa: Vec<u32> = (0..m as u32)
        .map(|i| i.wrapping_mul(0x2545_F491) ^ 0xdead)
        .collect();
    k.words(buf(0), &wa);
    k.run("mathmix", "wave", &[&p(0)[..], &p(1)].concat(), 2);
    let got = k.read(buf(1), 4 * m);
    let w = if wave64 { 64 } else { 32 };
    for i in 0..m {
        let (base, lane) = (i / w * w, i % w);
        let permuted = (0..w)
            .filter(|&src| (src + 3) % 32 == lane)
            .max()
            .map_or(0, |src| wa[base + src]);
        let want = [wa[i ^ 1], permuted, wa[base], wa[i ^ 1]];
        assert_eq!(got[4 * i..4 * i + 4], want, "{target} wave {i}");
    }
    // conv: u64/i64 -> f64, f64 rounding, f64 -> i64/u64, f64 and f32 -> f16.
    let cx: Vec<f64> = (0..m)
        .map(|i| (i as f64 - 64.0) * 123.456_789 + 0.5)
        .collect();
    let cy: Vec<u64> = (0..m as u64)
        .map(|i| 1_000_000_000_000_000 + i * 123_456_789_012_345_678)
        .collect();
    k.words(
        buf(0),
        &u64s(&cx.iter().map(|x| x.to_bits()).collect::<Vec<_>>()),
    );
    k.words(buf(1), &u64s(&cy));
    k.run(
        "mathmix",
        "conv",
        &[&p(0)[..], &p(1), &p(2), &p(3), &p(4)].concat(),
        2,
    );
    let (od, ol, oh) = (
        k.read64(buf(2), 3 * m),
        k.read64(buf(3), 2 * m),
        unhalves(&k.read(buf(4), m)),
    );
    for i in 0..m {
        let (x, y) = (cx[i], cy[i]);
        let wd = [
            y as f64,
            (y as i64) as f64 + f64::from(x as f32),
            x.floor() - (x * 0.5).ceil() + x.round_ties_even() + x.trunc(),
        ];
        assert_eq!(
            od[3 * i..3 * i + 3],
            wd.map(f64::to_bits),
            "{target} conv f64 {i}"
        );
        assert_eq!(
            ol[2 * i..2 * i + 2],
            [(x as i64) as u64, (x * 1e10).abs() as u64],
            "{target} conv i64 {i}"
        );
        assert_eq!(oh[i], f16_bits(x), "{target} conv f64 -> f16 {i}");
        let f = (y as f32) * 1e-15;
        assert_eq!(
            oh[i + m],
            f16_bits(f64::from(f)),
            "{target} conv f32 -> f16 {i}"
        );
    }
    // fatom: per group LDS f32 add, u32 max and sub; global inc/dec wrapping at 17, f32 add,
    // sub (128 work-items).
    k.words(buf(0), &[0, 0]);
    k.words(buf(1), &[0, 0, 1000, 0, 0]);
    k.run("mathmix", "fatom", &[&p(0)[..], &p(1)].concat(), 2);
    let got = k.read(buf(0), 2);
    assert_eq!(
        got,
        [32f32.to_bits(), 4032f32.to_bits()],
        "{target} fatom f32"
    );
    let inc = (0..128).fold(0u32, |o, _| if o >= 17 { 0 } else { o + 1 });
    let dec = (0..128).fold(0u32, |o, _| if o == 0 || o > 17 { 17 } else { o - 1 });
    let want = [inc, dec, 1000 - 3 * 128, 63 * 3, 0u32.wrapping_sub(2016)];
    assert_eq!(k.read(buf(1), 5), want, "{target} fatom u32");
}

#[test]
fn the_mathmix_fixture_runs_exactly_on_every_target() {
    for t in ["gfx1100", "gfx1201", "gfx90a", "gfx942"] {
        mathmix(t);
        mathmix_more(t);
        mathmix_lanes(t);
    }
}
