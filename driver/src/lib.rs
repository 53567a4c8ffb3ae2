//! # hcq-driver
//!
//! Binds `hcq-core` to Linux's `/dev/kfd` through rustix: devices, GPU buffers, compute and copy
//! queues, code-object programs, copies and graph replay. With the `sim` feature (on by default
//! through `cli`; see the README for `default-features = false`) the
//! same API runs on `hcq-sim`'s simulated GPU.
//!
//! Levels, cudarc style: `hcq_core::kfd` is the raw ABI; [`Kfd`], [`Device`], [`GpuBuffer`]
//! turn every ioctl into a [`Result`]. [`Program::launch`] and the submissions of commands the
//! caller built ([`Device::submit_compute`], [`Device::submit_pm4`], ...) are `unsafe`: Rust
//! cannot check what a GPU kernel or a command does with an address (the
//! [submission contract](Device#submission-contract)). Copies between [`GpuBuffer`]s are safe.
//!
//! ```no_run
//! use hcq_driver::{BufferKind, Device, Kfd, Program};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let kfd = Kfd::open()?; // or unsafe { Kfd::with_sim(Arc::new(SimKfd::gfx1100()?)) }
//! let dev = Device::open(&kfd, 0)?;
//! let buf = dev.alloc(1024 * 4, BufferKind::Vram)?;
//! // `fill(buf, value, n)` from kernels/fill.cl, built for this GPU's target.
//! let co = std::fs::read(format!("fill-{}.co", dev.target_name()))?;
//! let fill = Program::load(&dev, &co, "fill")?;
//! #[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
//! #[repr(C)]
//! struct FillArgs { buf: u64, value: u32, n: u32 }
//! let args = FillArgs { buf: buf.va().get(), value: 7, n: 1024 };
//! // SAFETY: `buf` holds 1024 u32s and outlives the launch (copy_out below waits for it).
//! unsafe { fill.launch_pod(&args, [16, 1, 1], [64, 1, 1])? };
//! let mut out = vec![0u8; 4096];
//! dev.copy_out(&buf, &mut out)?;
//! # Ok(()) }
//! ```
//!
//! Every mapping is an owning type that unmaps on drop; `unsafe` lives only in the Linux port
//! (`sys`: ioctl, mmap) and where mapped memory becomes atomics, ring slices or a doorbell
//! store (`mem`). Buffers are freed only after the GPUs they are mapped to finished the work
//! submitted before the drop; kernel arguments come from a `TimelineArena`, so the GPU never
//! reads arguments that were overwritten; the rings refuse to overwrite what the GPU has not
//! read and the driver waits (with a deadline) instead.
#![deny(missing_docs)]

/// Whether seeded bug `$bug` ([`seeded::Bug`]) is armed: the constant `false` without the
/// `seeded-bugs` feature, so every hook compiles out.
macro_rules! seeded {
    ($bug:ident) => {{
        #[cfg(feature = "seeded-bugs")]
        let on = $crate::seeded::armed($crate::seeded::Bug::$bug);
        #[cfg(not(feature = "seeded-bugs"))]
        let on = false;
        on
    }};
}

mod aql;
pub mod bind;
mod buffer;
mod copy;
pub mod device;
pub mod encode;
pub mod error;
/// The directory `cli/fixtures.rs` reads the fixture code objects from (unit tests only).
#[cfg(test)]
macro_rules! fixture_dir {
    () => {
        "/fixtures/"
    };
}
#[cfg(test)]
#[path = "cli/fixtures.rs"]
#[allow(dead_code, reason = "the unit tests use a few of the fixtures")]
mod fixtures;
pub mod kfd;
mod kfd_core;
pub mod launch;
mod mem;
mod queue;
#[cfg(feature = "seeded-bugs")]
pub mod seeded;
pub mod signal;
mod sync;
mod sys;
pub mod topology;

pub use bind::BoundList;
pub use device::{BufferKind, ComputeQueueKind, Device, DeviceOptions, GpuBuffer};
pub use error::{Error, MemoryKind, QueueState, Result, WaitReport, Waited};
pub use kfd::{GpuInfo, Kfd};
pub use launch::{
    ArgClass, ArgInfo, BufferView, ByValue, LaunchArg, LaunchBuilder, LaunchRecord, Lds,
    LdsPlacement, Program, RawValue,
};
pub use signal::Signal;
pub mod graph;

// The README's example is compiled and run as a doctest (on the simulator).
#[cfg(all(doctest, feature = "sim"))]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

// So is the repository README's ("Your own kernels": load and launch with the builder).
#[cfg(all(doctest, feature = "sim"))]
#[doc = include_str!("../../README.md")]
pub struct RepoReadmeDoctests;
