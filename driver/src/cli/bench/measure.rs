//! The measurement loop: batches of `n` iterations timed with [`Instant`], the median of the
//! batches' per-iteration times. No criterion here (the binary stays small and the whole run
//! takes seconds); `workloads/benches/packets.rs` runs the same workloads under criterion.

use core::time::Duration;
use std::time::Instant;

/// How long to measure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Plan {
    /// Time spent running the workload before measuring (caches, branch predictors, clocks).
    pub warmup: Duration,
    /// Target duration of one batch (the iteration count is calibrated to reach it).
    pub batch: Duration,
    /// Batches measured (odd, so the median is one of them).
    pub batches: usize,
}

impl Plan {
    /// The default run: ~0.25 s per metric. Short batches, many of them: on a shared machine a
    /// batch that loses the CPU is an outlier the median ignores.
    pub const FULL: Plan = Plan {
        warmup: Duration::from_millis(30),
        batch: Duration::from_micros(500),
        batches: 401,
    };
    /// `--quick`: CI-sized, ~10 ms per metric (numbers are rough).
    pub const QUICK: Plan = Plan {
        warmup: Duration::from_millis(2),
        batch: Duration::from_micros(200),
        batches: 21,
    };
}

/// Per-iteration times of the measured batches, in nanoseconds.
#[derive(Clone, Debug, PartialEq)]
pub struct Stats {
    /// Iterations per batch.
    pub iters: u64,
    /// Sorted per-iteration nanoseconds, one per batch.
    pub per_iter_ns: Vec<f64>,
}

impl Stats {
    /// The median batch.
    #[must_use]
    pub fn median(&self) -> f64 {
        percentile(&self.per_iter_ns, 50.0)
    }
}

/// The `p`-th percentile (nearest rank) of sorted `v`; NaN when `v` is empty.
#[must_use]
pub fn percentile(v: &[f64], p: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    // CAST: len is small (batches or samples), far below 2^52; the rank is in 0..len.
    let rank = ((p / 100.0) * v.len() as f64).ceil() as usize;
    let i = rank.clamp(1, v.len()) - 1;
    v.get(i).copied().unwrap_or(f64::NAN)
}

fn as_ns(d: Duration) -> f64 {
    // CAST: a batch lasts milliseconds; u128 nanoseconds to f64 loses nothing that matters.
    d.as_nanos() as f64
}

/// Times `f` per `plan`: warm up, find the iteration count that fills one batch, then measure
/// `plan.batches` batches. `f` must route its result through [`core::hint::black_box`].
// The loops are written out here, not shared with `run_pair`: passing the closure on by
// reference made the 2 ns workloads measure ~0.8 ns slower.
pub fn run(plan: &Plan, mut f: impl FnMut()) -> Stats {
    let start = Instant::now();
    let mut warm: u64 = 0;
    while start.elapsed() < plan.warmup || warm == 0 {
        f();
        warm += 1;
    }
    let mut iters: u64 = 1;
    loop {
        let t = Instant::now();
        for _ in 0..iters {
            f();
        }
        let el = t.elapsed();
        if el >= plan.batch / 2 || iters >= 1 << 40 {
            // Scale to the target from this measurement.
            let per = as_ns(el) / iters.max(1) as f64;
            let want = as_ns(plan.batch) / per.max(0.01);
            // CAST: want is positive and bounded by batch/0.01 ns.
            iters = (want.ceil() as u64).max(1);
            break;
        }
        iters *= 2;
    }
    let mut per_iter_ns = Vec::with_capacity(plan.batches);
    for _ in 0..plan.batches {
        let t = Instant::now();
        for _ in 0..iters {
            f();
        }
        // CAST: iteration counts stay far below 2^52.
        per_iter_ns.push(as_ns(t.elapsed()) / iters as f64);
    }
    per_iter_ns.sort_by(f64::total_cmp);
    Stats { iters, per_iter_ns }
}

/// Two workloads timed in alternating batches (`a`, `b`, `a`, `b`, ...), so that a change of
/// the machine's speed during the run (another tenant, the clock) meets both alike, and the
/// median of the batch pairs' ratios `a / b`: a ratio budget measured in one run.
#[derive(Clone, Debug, PartialEq)]
pub struct Pair {
    /// `a`'s batches.
    pub a: Stats,
    /// `b`'s batches.
    pub b: Stats,
    /// The median of `a_i / b_i` over the batch pairs.
    pub ratio: f64,
}

/// Times `a` and `b` per `plan` in alternating batches (see [`Pair`]).
pub fn run_pair(plan: &Plan, mut a: impl FnMut(), mut b: impl FnMut()) -> Pair {
    let (ia, ib) = (calibrate(plan, &mut a), calibrate(plan, &mut b));
    let mut ta = Vec::with_capacity(plan.batches);
    let mut tb = Vec::with_capacity(plan.batches);
    let mut ratios = Vec::with_capacity(plan.batches);
    for _ in 0..plan.batches {
        let x = batch(ia, &mut a);
        let y = batch(ib, &mut b);
        ta.push(x);
        tb.push(y);
        ratios.push(x / y);
    }
    for v in [&mut ta, &mut tb, &mut ratios] {
        v.sort_by(f64::total_cmp);
    }
    Pair {
        ratio: percentile(&ratios, 50.0),
        a: Stats {
            iters: ia,
            per_iter_ns: ta,
        },
        b: Stats {
            iters: ib,
            per_iter_ns: tb,
        },
    }
}

/// Warms `f` up for `plan.warmup`, then finds the iteration count of one `plan.batch`.
fn calibrate(plan: &Plan, f: &mut impl FnMut()) -> u64 {
    let start = Instant::now();
    let mut warm: u64 = 0;
    while start.elapsed() < plan.warmup || warm == 0 {
        f();
        warm += 1;
    }
    let mut iters: u64 = 1;
    loop {
        let t = Instant::now();
        for _ in 0..iters {
            f();
        }
        let el = t.elapsed();
        if el >= plan.batch / 2 || iters >= 1 << 40 {
            // Scale to the target from this measurement.
            let per = as_ns(el) / iters.max(1) as f64;
            let want = as_ns(plan.batch) / per.max(0.01);
            // CAST: want is positive and bounded by batch/0.01 ns.
            return (want.ceil() as u64).max(1);
        }
        iters *= 2;
    }
}

/// One batch of `iters` calls: nanoseconds per call.
fn batch(iters: u64, f: &mut impl FnMut()) -> f64 {
    let t = Instant::now();
    for _ in 0..iters {
        f();
    }
    // CAST: iteration counts stay far below 2^52.
    as_ns(t.elapsed()) / iters as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentile_nearest_rank() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&v, 50.0), 50.0);
        assert_eq!(percentile(&v, 99.0), 99.0);
        assert_eq!(percentile(&v, 100.0), 100.0);
        assert_eq!(percentile(&v, 0.0), 1.0);
        assert_eq!(percentile(&[7.0], 50.0), 7.0);
        assert!(percentile(&[], 50.0).is_nan());
        let three = [1.0, 2.0, 3.0];
        assert_eq!(percentile(&three, 50.0), 2.0);
    }

    #[test]
    fn run_counts_batches_and_calls() {
        let plan = Plan {
            warmup: Duration::ZERO,
            batch: Duration::from_micros(10),
            batches: 5,
        };
        let mut calls = 0u64;
        let s = run(&plan, || {
            calls += 1;
            core::hint::black_box(calls);
        });
        assert_eq!(s.per_iter_ns.len(), 5);
        assert!(s.iters >= 1);
        assert!(calls > 5 * s.iters);
        assert!(s.per_iter_ns.windows(2).all(|w| w[0] <= w[1]));
    }

    #[test]
    fn run_pair_alternates_and_takes_the_median_ratio() {
        let plan = Plan {
            warmup: Duration::ZERO,
            batch: Duration::from_micros(200),
            batches: 7,
        };
        // `a` spins about four times as long as `b` per call.
        let spin = |n: u32| {
            let t = Instant::now();
            while t.elapsed() < Duration::from_nanos(u64::from(n)) {
                core::hint::black_box(n);
            }
        };
        let order = core::cell::RefCell::new(Vec::new());
        let p = run_pair(
            &plan,
            || {
                order.borrow_mut().push('a');
                spin(4000);
            },
            || {
                order.borrow_mut().push('b');
                spin(1000);
            },
        );
        assert_eq!(p.a.per_iter_ns.len(), 7);
        assert_eq!(p.b.per_iter_ns.len(), 7);
        assert!(p.a.per_iter_ns.windows(2).all(|w| w[0] <= w[1]));
        // Both measured phases alternate: after calibration the calls go a-run, b-run, ...
        let o = order.borrow();
        let runs = o.windows(2).filter(|w| w[0] != w[1]).count();
        assert!(runs >= 2 * 7 - 1, "{runs} alternations");
        assert!(p.ratio > 2.0 && p.ratio < 8.0, "ratio {}", p.ratio);
    }
}
