//! # hcq-driver
//!
//! Binds `hcq-core` to Linux's `/dev/kfd` through rustix: devices, GPU buffers, compute and copy
//! queues, code-object programs, copies and graph replay. With the `sim` feature (default) the
//! same API runs on `hcq-sim`'s simulated GPU.
//!
//! Levels, cudarc style: `hcq_core::kfd` is the raw ABI; [`Kfd`], [`Device`], [`GpuBuffer`]
//! turn every ioctl into a [`Result`]; [`Program::launch`] is the one `unsafe` call (Rust
//! cannot check what a GPU kernel does with its arguments).
#![deny(missing_docs)]

pub mod bind;
mod buffer;
mod copy;
pub mod device;
pub mod encode;
pub mod error;
pub mod kernels;
pub mod kfd;
pub mod launch;
mod mem;
mod queue;
pub mod signal;
mod sys;

pub use bind::BoundList;
pub use device::{BufferKind, Device, DeviceOptions, GpuBuffer};
pub use error::{Error, MemoryKind, QueueState, Result, WaitReport};
pub use kfd::{GpuInfo, Kfd};
pub use launch::{LaunchRecord, Program};
pub use signal::Signal;
