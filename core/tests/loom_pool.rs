//! loom models of SignalPool: concurrent alloc/free never hands one slot to two owners, and a
//! slot's memory written by its last owner is visible (not racing) to its next owner.
//!
//! Run: `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 cargo test -p hcq-core --release --test loom_pool`
#![cfg(loom)]

use hcq_core::signal::{PoolError, SignalPool};
use loom::cell::UnsafeCell;
use loom::sync::Arc;
use loom::thread;

#[test]
fn concurrent_alloc_distinct_slots() {
    loom::model(|| {
        let pool = Arc::new(SignalPool::<1>::new(0x1000, 2).unwrap());
        let t: Vec<_> = (0..2)
            .map(|_| {
                let pool = pool.clone();
                thread::spawn(move || pool.alloc().unwrap())
            })
            .collect();
        let a = t.into_iter().map(|h| h.join().unwrap()).collect::<Vec<_>>();
        assert_ne!(a[0], a[1]);
        assert_eq!(pool.alloc(), Err(PoolError::Exhausted { capacity: 2 }));
        pool.free(a[0]).unwrap();
        pool.free(a[1]).unwrap();
        assert_eq!(pool.in_use(), 0);
    });
}

#[test]
fn slot_reuse_is_ordered() {
    loom::model(|| {
        // One slot: whoever gets it second must see the first owner's writes happen before.
        let pool = Arc::new(SignalPool::<1>::new(0, 1).unwrap());
        let mem = Arc::new(UnsafeCell::new(0u64));
        let t: Vec<_> = (1..=2u64)
            .map(|id| {
                let (pool, mem) = (pool.clone(), mem.clone());
                thread::spawn(move || {
                    let slot = loop {
                        match pool.alloc() {
                            Ok(s) => break s,
                            Err(_) => thread::yield_now(),
                        }
                    };
                    // SAFETY: the pool gives this thread exclusive use of the slot; loom checks it.
                    mem.with_mut(|p| unsafe { *p = id });
                    pool.free(slot).unwrap();
                })
            })
            .collect();
        for h in t {
            h.join().unwrap();
        }
        assert_eq!(pool.in_use(), 0);
    });
}

#[test]
fn double_free_race_has_one_winner() {
    loom::model(|| {
        let pool = Arc::new(SignalPool::<1>::new(0, 1).unwrap());
        let s = pool.alloc().unwrap();
        let t: Vec<_> = (0..2)
            .map(|_| {
                let pool = pool.clone();
                thread::spawn(move || pool.free(s))
            })
            .collect();
        let r: Vec<_> = t.into_iter().map(|h| h.join().unwrap()).collect();
        assert_eq!(r.iter().filter(|r| r.is_ok()).count(), 1, "{r:?}");
        assert!(r.contains(&Err(PoolError::DoubleFree { addr: 0 })));
    });
}
