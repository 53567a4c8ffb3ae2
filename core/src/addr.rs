//! GPU virtual addresses and the 32-bit halves packets split them into.
//!
//! The lowest layer of core's vocabulary: it depends on nothing else in the crate, so every
//! module (arch tables, descriptors, encoders, decoders) can use it without import circles.

use core::fmt;

/// A GPU virtual address (what packets carry), as opposed to a host pointer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GpuVa(pub u64);

impl GpuVa {
    /// The raw address.
    #[must_use]
    #[inline]
    pub const fn get(self) -> u64 {
        self.0
    }

    /// Low 32 bits.
    #[must_use]
    #[inline]
    pub const fn lo(self) -> u32 {
        lo32(self.0)
    }

    /// High 32 bits.
    #[must_use]
    #[inline]
    pub const fn hi(self) -> u32 {
        hi32(self.0)
    }

    /// The address plus `bytes`, wrapping (the GPU's 64-bit arithmetic).
    #[must_use]
    #[inline]
    pub const fn offset(self, bytes: u64) -> Self {
        Self(self.0.wrapping_add(bytes))
    }
}

impl fmt::Display for GpuVa {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#x}", self.0)
    }
}

/// Low 32 bits of a u64.
#[must_use]
#[inline(always)]
pub const fn lo32(v: u64) -> u32 {
    // CAST: truncation to the low half is the point.
    v as u32
}

/// High 32 bits of a u64.
#[must_use]
#[inline(always)]
pub const fn hi32(v: u64) -> u32 {
    // CAST: after the shift the value fits in 32 bits.
    (v >> 32) as u32
}

/// A u64 from its halves.
#[must_use]
#[inline(always)]
pub const fn join64(lo: u32, hi: u32) -> u64 {
    // CAST: u32 -> u64 is lossless (`From` is not const).
    (hi as u64) << 32 | lo as u64
}
