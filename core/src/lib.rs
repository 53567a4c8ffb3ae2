//! # hcq-core
//!
//! The heart of hcq: everything needed to drive an AMD GPU's command processors that does not
//! need an operating system. PM4 (compute) and SDMA (copy) packet encoders and decoders,
//! patchable command lists, ring producer/consumer state machines, timelines, the
//! `amd_signal_t` / dispatch packet / kernel descriptor layouts, AMDGPU code-object parsing and
//! the KFD ioctl ABI.
//!
//! The crate is `#![no_std]`, allocation-free and `#![forbid(unsafe_code)]`: every function is a
//! value in, value out, or a write into a caller-provided buffer, and no input can make it panic.
#![no_std]
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![deny(missing_debug_implementations)]

#[macro_use]
pub mod bitfield;

pub mod addr;
pub mod aql;
pub mod arch;
pub mod bundle;
pub mod cmd;
pub mod codeobj;
pub mod hsa;
pub mod kfd;
pub mod metadata;
pub mod name;
pub mod packet;
pub mod patch;
pub mod pm4;
pub mod ring;
pub mod rsrc;
pub mod sdma;
pub mod sel;
pub mod signal;
pub mod sync;
pub mod timeline;
mod vsharp;

/// Helpers of core's unit tests.
#[cfg(test)]
pub(crate) mod testing {
    /// `v` as its `Display` text (no allocation: core's tests run without `alloc`).
    pub(crate) fn shown(v: &dyn core::fmt::Display) -> heapless::String<256> {
        let mut s = heapless::String::new();
        // PANIC: test-only; a text over 256 bytes fails the test that printed it.
        core::fmt::write(&mut s, format_args!("{v}")).unwrap();
        s
    }
}

// The README's example is compiled and run as a doctest.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
