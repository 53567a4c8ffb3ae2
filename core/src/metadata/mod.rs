//! `NT_AMDGPU_METADATA`: the MessagePack note describing a code object's kernels (code object
//! v3..v6), read without allocation.
//!
//! [`Metadata::parse`] validates the whole document once: the top-level map, `amdhsa.version`,
//! `amdhsa.target`, and for every kernel of `amdhsa.kernels` each field hcq reads (with its
//! type) and each argument (offset and size inside the kernarg segment, in order, no overlap).
//! Afterwards [`Metadata::kernels`] and [`KernelMeta::args`] walk the validated bytes and
//! cannot fail. Unknown keys are skipped, as LLVM's own reader does; unknown argument value
//! kinds are kept ([`ValueKind::Other`]), and a launch that would have to fill one refuses
//! (see [`hidden`]).
//!
//! [`CodeObject::parse`](crate::codeobj::CodeObject::parse) finds the note, parses it, and
//! checks it against each kernel descriptor where the two say the same thing.

pub mod hidden;
pub mod msgpack;

use core::fmt;

use msgpack::{MsgpackError, Reader, Value};

mod error;
mod kinds;
mod parse;

pub use error::*;
pub use kinds::*;
use parse::*;

#[cfg(test)]
mod tests;
