//! Atomics and the spin hint, from `core` normally and from `loom` under `cfg(loom)`, so every
//! shared-memory protocol in core can be model-checked (concurrent-queue's `sync.rs` pattern).
//!
//! Code in core names `crate::sync::atomic::AtomicU64` etc., never `core::sync::atomic` directly.
//!
//! There is no lock here: every state core shares between threads (ring pointers, timeline
//! values, the signal pool) is a single-writer protocol over atomics, and a caller that shares
//! a producer between cores wraps it in its own lock (the driver holds its ring writers under
//! the device's timeline mutex). The `spin` crate was a dependency only for a re-export no one
//! used, so it went.

#[cfg(not(loom))]
mod imp {
    pub use core::sync::atomic;

    /// Hint to the CPU that we are spinning.
    #[inline]
    pub fn spin_loop() {
        core::hint::spin_loop();
    }
}

#[cfg(loom)]
mod imp {
    /// loom's atomics (with `core`'s `compiler_fence`, which loom does not model).
    pub mod atomic {
        pub use core::sync::atomic::compiler_fence;
        pub use loom::sync::atomic::*;
    }

    /// Under loom a spin must yield, or the model never lets the other thread run.
    #[inline]
    pub fn spin_loop() {
        loom::thread::yield_now();
    }
}

pub use imp::*;
