//! loom model of a timeline signal set by one thread (the GPU) and awaited by another (the
//! host): once the host sees the value complete, the work before it is visible.
//!
//! Run: `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 cargo test -p hcq-core --release --test loom_timeline`
#![cfg(loom)]

use hcq_core::sync::atomic::{AtomicU64, Ordering};
use hcq_core::timeline::{Timeline, observe};
use loom::cell::UnsafeCell;
use loom::sync::Arc;
use loom::thread;

#[test]
fn signal_then_wait() {
    loom::model(|| {
        let mut t = Timeline::new();
        let v1 = t.signal().unwrap();
        let v2 = t.signal().unwrap();
        let g1 = t.gpu_value(v1).unwrap().value;
        let g2 = t.gpu_value(v2).unwrap().value;
        let signal = Arc::new(AtomicU64::new(0));
        let out = Arc::new(UnsafeCell::new([0u32; 2]));
        let gpu = {
            let (signal, out) = (signal.clone(), out.clone());
            thread::spawn(move || {
                // Work 1, signal 1 (RELEASE_MEM writes the low 32 bits after the work).
                // SAFETY: the host reads out[0] only after seeing value 1; loom checks it.
                out.with_mut(|p| unsafe { (*p)[0] = 11 });
                signal.store(u64::from(g1), Ordering::Release);
                // SAFETY: as above, for out[1] and value 2.
                out.with_mut(|p| unsafe { (*p)[1] = 22 });
                signal.store(u64::from(g2), Ordering::Release);
            })
        };
        // Host: wait for v2 (the synchronize), then read the results.
        while !t.is_complete(v2, observe(&signal)) {
            thread::yield_now();
        }
        assert!(t.is_complete(v1, observe(&signal)));
        // SAFETY: the GPU's writes happen before its release of v2, which we acquired.
        let r = out.with(|p| unsafe { *p });
        assert_eq!(r, [11, 22]);
        gpu.join().unwrap();
        // Everything is complete: the wrap is allowed.
        assert!(t.wrap(observe(&signal)).is_ok());
    });
}
