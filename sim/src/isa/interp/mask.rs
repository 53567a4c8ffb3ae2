//! Lane masks to and from one byte per lane, so the lane loops that read or produce a mask
//! (carries, compares, selects) are straight loops over arrays the compiler can vectorise
//! instead of a shift per lane.

use super::MAX_LANES;

/// `SPREAD[b]`: byte `j` is bit `j` of `b` (0 or 1).
const SPREAD: [u64; 256] = {
    let mut t = [0u64; 256];
    let mut b = 0;
    while b < 256 {
        let mut j = 0;
        while j < 8 {
            t[b] |= (((b >> j) & 1) as u64) << (8 * j);
            j += 1;
        }
        b += 1;
    }
    t
};

/// One byte per lane (0 or 1): bit `l` of `m`.
pub(super) fn spread(m: u64) -> [u8; MAX_LANES] {
    let mut out = [0u8; MAX_LANES];
    for (k, c) in out.chunks_exact_mut(8).enumerate() {
        // CAST: one byte of the mask.
        let b = ((m >> (8 * k)) & 0xff) as usize;
        c.copy_from_slice(&SPREAD[b].to_le_bytes());
    }
    out
}

/// The mask whose bit `l` is the low bit of `b[l]` (each byte 0 or 1).
pub(super) fn pack(b: &[u8; MAX_LANES]) -> u64 {
    let mut m = 0u64;
    for (k, c) in b.chunks_exact(8).enumerate() {
        let x = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
        // Byte j's low bit lands on bit 56 + j: the products of the other bytes fall on
        // distinct bits outside the top byte (so no carries), see the test.
        let bits = (x & 0x0101_0101_0101_0101).wrapping_mul(0x0102_0408_1020_4080) >> 56;
        m |= bits << (8 * k);
    }
    m
}

/// The first `n` lanes.
fn all(n: usize) -> u64 {
    if n >= 64 { !0 } else { (1u64 << n) - 1 }
}

/// The mask of the first `n` lanes of `a` and `b` where `f` holds.
#[inline]
pub(super) fn cmp<T: Copy>(n: usize, a: &[T], b: &[T], f: impl Fn(T, T) -> bool) -> u64 {
    let mut t = [0u8; MAX_LANES];
    for ((t, x), y) in t[..n].iter_mut().zip(&a[..n]).zip(&b[..n]) {
        *t = u8::from(f(*x, *y));
    }
    pack(&t)
}

/// Integer compare by condition (f lt eq le gt ne ge t) over the first `n` lanes.
pub(super) fn icmp<T: Copy + PartialOrd>(c: u8, n: usize, a: &[T], b: &[T]) -> u64 {
    match c {
        0 => 0,
        1 => cmp(n, a, b, |x, y| x < y),
        2 => cmp(n, a, b, |x, y| x == y),
        3 => cmp(n, a, b, |x, y| x <= y),
        4 => cmp(n, a, b, |x, y| x > y),
        5 => cmp(n, a, b, |x, y| x != y),
        6 => cmp(n, a, b, |x, y| x >= y),
        _ => all(n),
    }
}

/// Float compare by condition (f lt eq le gt lg ge o u nge nlg ngt nle neq nlt t) over the
/// first `n` lanes: the same predicates as `num::fcmp`, one loop per condition.
#[expect(
    clippy::double_comparisons,
    clippy::neg_cmp_op_on_partial_ord,
    reason = "IEEE predicates: with a NaN, `x < y || x > y` is not `x != y`, `!(x >= y)` not `x < y`"
)]
pub(super) fn fcmp<T: Copy + PartialOrd>(c: u8, n: usize, a: &[T], b: &[T]) -> u64 {
    #[expect(clippy::eq_op, reason = "x == x is the NaN test")]
    let ordered = |x: T, y: T| x == x && y == y;
    match c {
        0 => 0,
        1 => cmp(n, a, b, |x, y| x < y),
        2 => cmp(n, a, b, |x, y| x == y),
        3 => cmp(n, a, b, |x, y| x <= y),
        4 => cmp(n, a, b, |x, y| x > y),
        5 => cmp(n, a, b, |x, y| x < y || x > y),
        6 => cmp(n, a, b, |x, y| x >= y),
        7 => cmp(n, a, b, ordered),
        8 => cmp(n, a, b, |x, y| !ordered(x, y)),
        9 => cmp(n, a, b, |x, y| !(x >= y)),
        10 => cmp(n, a, b, |x, y| !(x < y || x > y)),
        11 => cmp(n, a, b, |x, y| !(x > y)),
        12 => cmp(n, a, b, |x, y| !(x <= y)),
        13 => cmp(n, a, b, |x, y| x != y),
        14 => cmp(n, a, b, |x, y| !(x < y)),
        _ => all(n),
    }
}

#[cfg(test)]
mod tests {
    use super::super::num;
    use super::*;

    #[test]
    fn spread_and_pack_round_trip_every_byte() {
        for b in 0..=255u64 {
            for k in 0..8 {
                let m = b << (8 * k) | 0x8000_0000_0000_0001;
                let s = spread(m);
                for (l, x) in s.iter().enumerate() {
                    assert_eq!(u64::from(*x), (m >> l) & 1, "mask {m:#x} lane {l}");
                }
                assert_eq!(pack(&s), m);
            }
        }
    }

    #[test]
    fn compares_match_the_scalar_predicates() {
        let v = [
            0.0f32,
            -0.0,
            1.0,
            -1.0,
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            2.5,
        ];
        let mut a = [0f32; 64];
        let mut b = [0f32; 64];
        for l in 0..64 {
            a[l] = v[l % 8];
            b[l] = v[l / 8];
        }
        for c in 0..16u8 {
            let m = fcmp(c, 64, &a, &b);
            for l in 0..64 {
                let want = num::fcmp(c, f64::from(a[l]), f64::from(b[l]));
                assert_eq!((m >> l) & 1 == 1, want, "cond {c} lane {l}");
            }
            let ia: Vec<i32> = (0..64).map(|l| l % 5 - 2).collect();
            let ib: Vec<i32> = (0..64).map(|l| l / 13 - 2).collect();
            let m = icmp(c, 32, &ia, &ib);
            for l in 0..64 {
                let want = l < 32 && num::icmp(c, ia[l], ib[l]);
                assert_eq!((m >> l) & 1 == 1, want, "icmp cond {c} lane {l}");
            }
        }
    }
}
