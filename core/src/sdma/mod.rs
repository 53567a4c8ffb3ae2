//! SDMA (copy engine) packets, v5/v6 layout (gfx10/gfx11; gfx9's v4 differs only in the FENCE
//! mtype, which [`ArchInfo::sdma_fence_mtype_uc`] selects): encoders writing into a caller's
//! `&mut [u32]`, the seed's commands (`copy`, `signal`, `wait`, `timestamp`), and a strict decoder.
//!
//! Header dword 0: `op[7:0] | sub_op[15:8] | per-packet bits[31:16]`. Each per-packet header
//! bitfield below holds only bits 31:16; the encoder adds op and sub-op.

use core::fmt;

use crate::addr::{GpuVa, hi32, join64, lo32};
use crate::arch::ArchInfo;
use crate::packet::{
    DecodeError, DecodeErrorKind, EncodeError, check_max, head, len64, room, write_fields,
};
use crate::pm4::GcrCntl;
use crate::sel::{CompareFunction, UnknownSelector};
use crate::signal::SignalRef;

mod decode;
mod encode;
mod regs;
mod seq;

pub use decode::*;
pub use encode::*;
pub use regs::*;
pub use seq::*;

#[cfg(test)]
mod tests;
