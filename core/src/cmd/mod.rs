//! Command lists (the seed's `HWQueue`): fixed-capacity dword storage plus where each command
//! starts, builders returning typed handles, and patch operations that verify the packet they
//! patch.
//!
//! [`Pm4List`] and [`SdmaList`] own their storage (`[u32; N]` inline, no allocation). The patch
//! functions in [`patch`] are generic over [`PatchTarget`], implemented for `[u32]` and for a
//! shared view of GPU memory (`&[AtomicU32]`), so a list copied into GPU memory (a bound IB)
//! is patched by the same code with the same handles (offsets are relative to the list start).
//!
//! Every builder either appends a whole command or leaves the list unchanged and returns an
//! error. Handles are checked when used: the offset must be inside the target and the header
//! at that offset must be the packet the handle names.

use core::fmt;

use crate::addr::{GpuVa, hi32, lo32};
use crate::arch::ArchInfo;
use crate::hsa::DispatchPacket;
use crate::packet::EncodeError;
use crate::pm4::{self, DispatchInfo, Pm4Header, Program};
use crate::sdma;
use crate::signal::SignalRef;
use crate::sync::atomic::{AtomicU32, Ordering};

mod pm4list;
mod sdmalist;
mod types;

/// Patch operations on any [`PatchTarget`] (a list's own storage or its copy in GPU memory).
pub mod patch;

pub use pm4list::*;
pub use sdmalist::*;
pub use types::*;

#[cfg(test)]
mod tests;
