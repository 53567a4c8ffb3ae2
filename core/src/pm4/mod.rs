//! PM4 type-3 packets for the compute (MEC) queue: header and control words as bitfields, one
//! encoder per packet writing into a caller's `&mut [u32]`, the seed's command sequences
//! (`memory_barrier`, `exec`, `wait`, `signal`, `timestamp`), and a strict decoder.
//!
//! Every encoder returns the dwords it wrote, or an [`EncodeError`] having written nothing
//! useful; none panics. Fixed-size encoders check the buffer once and then store a whole array.

use core::fmt;

use crate::addr::{GpuVa, hi32, join64, lo32};
use crate::arch::{AcquireMemLayout, ArchInfo};
use crate::hsa::DispatchPacket;
use crate::packet::{
    DecodeError, DecodeErrorKind, EncodeError, check_max, head, len64, room, write_fields,
};
use crate::rsrc::ScratchRsrc;
use crate::signal::SignalRef;

mod body;
mod decode;
mod display;
mod encode;
mod regs;
mod seq;

pub use body::*;
pub use decode::*;
pub use encode::*;
pub use regs::*;
pub use seq::*;

#[cfg(test)]
mod tests;
