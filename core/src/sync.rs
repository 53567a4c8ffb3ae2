//! Atomics and locks, from `core`/`spin` normally and from `loom` under `cfg(loom)`, so every
//! shared-memory protocol in core can be model-checked (concurrent-queue's `sync.rs` pattern).
//!
//! Code in core names `crate::sync::atomic::AtomicU64` etc., never `core::sync::atomic` directly.

#[cfg(not(loom))]
mod imp {
    pub use core::sync::atomic;

    /// A spin lock (`spin`), for the rare state that atomics alone cannot protect.
    pub use spin::Mutex;

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

    pub use loom::sync::Mutex;

    /// Under loom a spin must yield, or the model never lets the other thread run.
    #[inline]
    pub fn spin_loop() {
        loom::thread::yield_now();
    }
}

pub use imp::*;
