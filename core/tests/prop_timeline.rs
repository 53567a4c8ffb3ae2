//! Timeline and TimelineArena against plain models.
//!
//! Timeline: a GPU completing signaled values in order, synchronize-and-wrap at random times,
//! random start values. Checked: GPU values fit 32 bits and are what the host thinks, "is
//! complete" agrees with the model, a wrap is refused exactly while work is in flight.
//!
//! Arena: random allocations (sizes, alignments, tags) and timeline progress. Checked: a region
//! is in bounds and aligned, never overlaps a region whose tag is not complete, and a
//! `MustWait { value }` is honest (value not complete yet) and sufficient (once the timeline
//! reaches it, the same allocation succeeds).

use hcq_core::timeline::{
    ArenaError, Region, Timeline, TimelineArena, TimelineError, TimelineValue, Which,
};
use proptest::prelude::*;

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: if cfg!(miri) { 3 } else { 256 },
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

fn steps() -> usize {
    if cfg!(miri) { 40 } else { 300 }
}

#[derive(Clone, Debug)]
enum TOp {
    Signal,
    /// The GPU completes this many more of the signaled values.
    Gpu(u8),
    /// Wait for everything, then wrap if needed.
    Synchronize,
    /// Try to wrap now.
    Wrap,
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn timeline_model(
        start in prop_oneof![Just(1u32), 1u32..100, (1u32 << 31) - 50..(1u32 << 31) + 50, u32::MAX - 60..=u32::MAX],
        ops in prop::collection::vec(prop_oneof![
            4 => Just(TOp::Signal), 3 => (0u8..4).prop_map(TOp::Gpu), 1 => Just(TOp::Synchronize), 1 => Just(TOp::Wrap)
        ], 1..steps()),
    ) {
        let mut t = Timeline::starting_at(start);
        // GPU memory: the two signals. Model: host values signaled and completed.
        let mut sig = [start - 1, 0x5A5A_5A5A];
        let slot = |w: Which| match w { Which::Primary => 0, Which::Shadow => 1 };
        let mut signaled: Vec<(TimelineValue, Which, u32)> = Vec::new();
        let mut done = 0usize; // signaled[..done] are complete
        let mut last_gpu = start - 1;
        let mut next_gpu = u64::from(start);
        for op in ops {
            match op {
                TOp::Signal => match t.signal() {
                    Ok(v) => {
                        let g = t.gpu_value(v).unwrap();
                        prop_assert_eq!(g.signal, t.active());
                        prop_assert_eq!(u64::from(g.value), next_gpu);
                        next_gpu += 1;
                        signaled.push((v, g.signal, g.value));
                    }
                    Err(TimelineError::MustWrap { next }) => prop_assert_eq!(next, 1u64 << 32),
                    Err(e) => return Err(TestCaseError::fail(format!("{e}"))),
                },
                TOp::Gpu(n) => {
                    for _ in 0..n {
                        if let Some(&(_, w, value)) = signaled.get(done) {
                            sig[slot(w)] = value;
                            last_gpu = value;
                            done += 1;
                        }
                    }
                }
                TOp::Synchronize => {
                    while let Some(&(_, w, value)) = signaled.get(done) {
                        sig[slot(w)] = value;
                        last_gpu = value;
                        done += 1;
                    }
                    if t.needs_wrap() {
                        let w = t.wrap(sig[slot(t.active())]).unwrap();
                        sig[slot(w.signal)] = w.reset_to;
                        next_gpu = 1;
                    }
                }
                TOp::Wrap => {
                    let all_done = done == signaled.len();
                    let active_before = t.active();
                    match t.wrap(sig[slot(t.active())]) {
                        Ok(w) => {
                            prop_assert!(all_done, "wrapped with work in flight");
                            prop_assert_eq!(w.signal, active_before.other());
                            sig[slot(w.signal)] = w.reset_to;
                            next_gpu = 1;
                        }
                        Err(TimelineError::Busy { waiting_for, observed }) => {
                            prop_assert!(!all_done);
                            prop_assert_eq!(observed, sig[slot(active_before)]);
                            prop_assert_eq!(Some(waiting_for), signaled.last().map(|s| s.2));
                        }
                        Err(e) => return Err(TestCaseError::fail(format!("{e}"))),
                    }
                }
            }
            // "Has this completed" agrees with the model for every value handed out.
            let observed = sig[slot(t.active())];
            for (i, &(v, _, _)) in signaled.iter().enumerate() {
                prop_assert_eq!(t.is_complete(v, observed), i < done, "value {:?}", v);
            }
            prop_assert_eq!(t.is_complete(t.last_signaled(), observed), done == signaled.len());
            let _ = last_gpu;
        }
    }
}

#[derive(Clone, Debug)]
enum AOp {
    /// Allocate `size` bytes at alignment `1 << align_log`, for the current submission.
    Alloc { size: u64, align_log: u32 },
    /// Submit: later allocations belong to the next timeline value.
    Submit,
    /// The GPU completes this many submissions.
    Complete(u8),
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn arena_model(
        cap_log in 6u32..12,
        ops in prop::collection::vec(prop_oneof![
            5 => (1u64..300, 0u32..8).prop_map(|(size, align_log)| AOp::Alloc { size, align_log }),
            2 => Just(AOp::Submit),
            2 => (0u8..3).prop_map(AOp::Complete),
        ], 1..steps()),
    ) {
        let cap = 1u64 << cap_log;
        let mut arena = TimelineArena::<4>::new(cap).unwrap();
        let mut tag = 1u64; // the submission being built
        let mut done = 0u64; // completed timeline value
        let mut handed: Vec<(Region, u64)> = Vec::new();
        for op in ops {
            match op {
                AOp::Submit => tag += 1,
                AOp::Complete(n) => done = (done + u64::from(n)).min(tag - 1),
                AOp::Alloc { size, align_log } => {
                    let align = 1u64 << align_log;
                    let r = arena.alloc(size, align, TimelineValue::new(tag), TimelineValue::new(done));
                    if align > cap {
                        prop_assert_eq!(r, Err(ArenaError::BadAlign { align }));
                        continue;
                    }
                    if size > cap {
                        prop_assert_eq!(r, Err(ArenaError::TooLarge { size, capacity: cap }));
                        continue;
                    }
                    match r {
                        Ok(reg) => {
                            prop_assert_eq!(reg.size, size);
                            prop_assert_eq!(reg.offset % align, 0);
                            prop_assert!(reg.offset + size <= cap);
                            for &(old, t) in &handed {
                                let overlap = reg.offset < old.offset + old.size && old.offset < reg.offset + size;
                                prop_assert!(!(overlap && t > done), "{:?} overlaps {:?} of incomplete tag {}", reg, old, t);
                            }
                            handed.retain(|&(_, t)| t > done);
                            handed.push((reg, tag));
                        }
                        Err(ArenaError::MustWait { value }) => {
                            prop_assert!(value.get() > done && value.get() <= tag);
                            let mut later = arena.clone();
                            prop_assert!(later.alloc(size, align, TimelineValue::new(tag), value).is_ok(),
                                "waiting for {:?} was not enough", value);
                            // Waiting for the current submission itself means a flush first.
                            if value.get() == tag { tag += 1; }
                            done = value.get();
                        }
                        Err(e) => return Err(TestCaseError::fail(format!("{e}"))),
                    }
                }
            }
            prop_assert!(arena.in_use() <= cap);
        }
    }
}
