//! AMDGPU ELF code objects (HSA code object v3..v6), parsed without allocation.
//!
//! [`CodeObject::parse`] validates the file once: ELF64, little endian, `EM_AMDGPU`, OS ABI
//! `ELFOSABI_AMDGPU_HSA` with ABI version 1..=4 (code object v3..v6), a known
//! `EF_AMDGPU_MACH_*` processor in `e_flags`, the program headers (the `PT_LOAD` segments
//! become the [loading plan](CodeObject::segments)), the section headers, the symbol table, and
//! every kernel (`<name>.kd` symbol: its 64-byte [`KernelDescriptor`] and entry point). Every
//! offset and size read from the file is bounds-checked; a truncated, overlapping or lying
//! header is a [`CodeObjectError`] naming the offending value, never a panic.
//!
//! Only `object`'s `elf` feature is used (raw `#[repr(C)]` structs and `object::pod`); its
//! `read_core` API would pull in `alloc`.
//!
//! ```no_run
//! # fn demo(bytes: &[u8]) -> Result<(), hcq_core::codeobj::CodeObjectError> {
//! use hcq_core::codeobj::{CodeObject, DeviceLimits};
//! let co = CodeObject::parse(bytes)?;
//! co.check_target("gfx1100")?;
//! let k = co.kernel("vector_add")?;
//! k.check_resources(&DeviceLimits { lds_bytes: 64 * 1024, max_private_segment_bytes: 4096 })?;
//! let mut image = [0u8; 1 << 16];
//! co.load_into(&mut image)?; // then copy `image[..co.image_size()]` to VRAM at `base`
//! // dispatch: kernel_object = base + k.descriptor_offset
//! # Ok(()) }
//! ```

use core::fmt;
use core::ops::Range;

use object::elf::{
    ELFCLASS64, ELFDATA2LSB, ELFMAG, EM_AMDGPU, ET_DYN, FileHeader64, PF_W, PF_X, PT_LOAD,
    ProgramHeader64, SHN_UNDEF, SHT_DYNSYM, SHT_NOBITS, SHT_NOTE, SHT_NULL, SHT_STRTAB, SHT_SYMTAB,
    SectionHeader64, Sym64,
};
use object::endian::LittleEndian as LE;
use object::pod;

use crate::hsa::{KernelCodeProperties, KernelDescriptor};
use crate::metadata::{KernelMeta, Metadata, MetadataError};

mod error;
mod kernel;
mod parse;
mod target;

pub use error::*;
pub use kernel::*;
pub use parse::*;
pub use target::*;

#[cfg(test)]
mod tests;
