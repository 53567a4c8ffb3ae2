//! Buffer resource descriptors (V#, `SQ_BUF_RSRC_WORD0..3`) and the one hcq hands to kernels:
//! the scratch descriptor of the *private segment buffer*.
//!
//! On targets with *absolute flat scratch* (gfx9 before gfx940, i.e. gfx90a/MI200 and older;
//! gfx10.x) a kernel that touches scratch sets `ENABLE_SGPR_PRIVATE_SEGMENT_BUFFER` in its
//! `kernel_code_properties` and expects a V# describing the queue's scratch memory in its first
//! four user SGPRs; its prologue adds the per-wave scratch offset to the V#'s base and accesses
//! scratch with `buffer_*` instructions through it. Targets with *architected flat scratch*
//! (gfx940+, gfx11, gfx12) have no private segment buffer: the hardware sets `FLAT_SCRATCH` from
//! `COMPUTE_DISPATCH_SCRATCH_BASE` (LLVM `AMDGPUUsage`, "Processors" table, "Flat Scratch" and
//! "Private Segment Buffer").
//!
//! Where the words come from:
//!
//! - ROCR-Runtime `AqlQueue::InitScratchSRD` (`amd_aql_queue.cpp`), which fills the V# the CP
//!   loads into the SGPRs of AQL dispatches: word 0 `BASE_ADDRESS` = low 32 bits of the
//!   scratch base; word 1 `BASE_ADDRESS_HI`, `STRIDE = 0`, `SWIZZLE_ENABLE = 1`; word 2
//!   `NUM_RECORDS` = scratch bytes (per XCC); word 3 (`FillBufRsrcWord3`, every gfx9 including
//!   gfx90a and gfx942) `DST_SEL_XYZW = X,Y,Z,W`, `NUM_FORMAT = UINT`, `DATA_FORMAT = 32`,
//!   `ELEMENT_SIZE = 1` (4 bytes), `INDEX_STRIDE = 3` (64), `ADD_TID_ENABLE = 1`, `ATC` only on
//!   APUs (0 here), `TYPE = BUF`; gfx10 (`FillBufRsrcWord3_Gfx10`) `FORMAT = 32_UINT`,
//!   `ADD_TID_ENABLE = 1`, `RESOURCE_LEVEL = 1`, `OOB_SELECT = 2` ("no bounds check in swizzle
//!   mode"), `INDEX_STRIDE = 0` ("filled in by CP").
//! - tinygrad `AMDComputeQueue.exec` (`ops_amd.py`), a PM4 runtime like hcq: it writes
//!   `[scratch_lo, scratch_hi | 1 << 31, 0xffffffff, 0x20c14000]` into `USER_DATA_0..3` when
//!   `enable_private_segment_sgpr`, then the dispatch and kernarg pointers. Its word 3 was
//!   derived for gfx103x (tinygrad PR #7987, "fix: private segment sgpr on gfx103x": `0x14 << 12`
//!   is gfx10's `FORMAT = 32_UINT`, `2 << 21` `INDEX_STRIDE = 32` for wave32, `1 << 23`
//!   `ADD_TID_ENABLE`, `2 << 28` `OOB_SELECT = 2`); read with gfx9's word-3 layout it would say
//!   `DATA_FORMAT = 16`, `ELEMENT_SIZE = 2 bytes`, `INDEX_STRIDE = 32`, wrong for wave64.
//!   tinygrad's own AQL path (`_ensure_has_local_memory`) uses ROCR's gfx9 fields.
//!
//! hcq follows ROCR's fields, with one change forced by PM4 dispatch: no CP patches the V# on
//! the way into the SGPRs, so `INDEX_STRIDE` is set here from the kernel's wave size (3 = 64
//! lanes for wave64, 2 = 32 for wave32), as tinygrad does for gfx103x. `NUM_RECORDS` is the
//! scratch allocation's size, as ROCR's (tinygrad writes `0xffffffff`).

use core::fmt;

use crate::addr::{GpuVa, hi32, lo32};
use crate::arch::{ArchInfo, Family};

pub use crate::vsharp::*;

/// `INDEX_STRIDE` sits at bits 22:21 in both word-3 layouts hcq builds.
const INDEX_STRIDE: crate::bitfield::Field<BufRsrcWord3Gfx9> = BufRsrcWord3Gfx9::INDEX_STRIDE;
const _: () = assert!(BufRsrcWord3Gfx10::INDEX_STRIDE.same_bits(INDEX_STRIDE));

/// Why a scratch V# could not be built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ScratchRsrcError {
    /// The family has architected flat scratch and no private segment buffer.
    Unsupported {
        /// The family.
        family: Family,
    },
    /// The base address does not fit the V#'s 48 bits.
    BaseTooHigh {
        /// The address given.
        base: u64,
    },
    /// A zero-byte scratch area.
    Empty,
}

impl fmt::Display for ScratchRsrcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScratchRsrcError::Unsupported { family } => write!(
                f,
                "{family:?} has architected flat scratch: kernels there take no private segment buffer"
            ),
            ScratchRsrcError::BaseTooHigh { base } => write!(
                f,
                "scratch base {base:#x} does not fit the 48-bit base of a buffer descriptor"
            ),
            ScratchRsrcError::Empty => write!(f, "the scratch area for the descriptor is 0 bytes"),
        }
    }
}

impl core::error::Error for ScratchRsrcError {}

/// The private segment buffer: a V# over the queue's scratch memory, the 4 dwords `exec`
/// writes to `USER_DATA_0..=3` for a kernel with `ENABLE_SGPR_PRIVATE_SEGMENT_BUFFER`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ScratchRsrc(pub [u32; 4]);

impl ScratchRsrc {
    /// The descriptor of `bytes` of scratch at `base` on `arch`, for a wave32 or wave64 kernel.
    /// `NUM_RECORDS` saturates at `u32::MAX` bytes.
    ///
    /// # Errors
    /// The family has no private segment buffer, the base is above 2^48, or `bytes` is 0.
    #[inline]
    pub const fn new(
        arch: &ArchInfo,
        base: GpuVa,
        bytes: u64,
        wave32: bool,
    ) -> Result<Self, ScratchRsrcError> {
        let Some(fmt) = arch.scratch_rsrc else {
            return Err(ScratchRsrcError::Unsupported {
                family: arch.family,
            });
        };
        let hi = hi32(base.get());
        if !BufRsrcWord1::fits(BufRsrcWord1::BASE_ADDRESS_HI, hi) {
            return Err(ScratchRsrcError::BaseTooHigh { base: base.get() });
        }
        if bytes == 0 {
            return Err(ScratchRsrcError::Empty);
        }
        let num_records = if bytes > u32::MAX as u64 {
            u32::MAX
        } else {
            lo32(bytes)
        };
        let stride = if wave32 {
            INDEX_STRIDE_32
        } else {
            INDEX_STRIDE_64
        };
        let word3 = BufRsrcWord3Gfx9(fmt.word3).with(INDEX_STRIDE, stride).raw();
        Ok(Self([lo32(base.get()), fmt.word1 | hi, num_records, word3]))
    }

    /// The 4 dwords (`SQ_BUF_RSRC_WORD0..3`).
    #[must_use]
    #[inline]
    pub const fn words(self) -> [u32; 4] {
        self.0
    }

    /// The descriptor from 4 dwords (e.g. `USER_DATA_0..=3` as read back).
    #[must_use]
    #[inline]
    pub const fn from_words(words: [u32; 4]) -> Self {
        Self(words)
    }

    /// Word 1 as a typed word (gfx9/gfx10 layout).
    #[must_use]
    #[inline]
    pub const fn word1(self) -> BufRsrcWord1 {
        BufRsrcWord1(self.0[1])
    }

    /// The 48-bit base address (words 0 and 1).
    #[must_use]
    #[inline]
    pub const fn base(self) -> GpuVa {
        let hi = self.word1().get(BufRsrcWord1::BASE_ADDRESS_HI);
        GpuVa(crate::addr::join64(self.0[0], hi))
    }

    /// `NUM_RECORDS` (word 2): bytes, with `STRIDE` 0.
    #[must_use]
    #[inline]
    pub const fn num_records(self) -> u32 {
        self.0[2]
    }

    /// `INDEX_STRIDE` in lanes (8, 16, 32 or 64).
    #[must_use]
    #[inline]
    pub const fn index_stride_lanes(self) -> u32 {
        8 << BufRsrcWord3Gfx9(self.0[3]).get(INDEX_STRIDE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arch::{GFX9, GFX10, GFX11, GFX12};
    use crate::testing::shown;

    #[test]
    fn errors_explain_themselves() {
        let cases = [
            (
                ScratchRsrcError::Unsupported {
                    family: Family::Gfx11,
                },
                "Gfx11 has architected flat scratch: kernels there take no private segment buffer",
            ),
            (
                ScratchRsrcError::BaseTooHigh { base: 1 << 48 },
                "scratch base 0x1000000000000 does not fit the 48-bit base of a buffer descriptor",
            ),
            (
                ScratchRsrcError::Empty,
                "the scratch area for the descriptor is 0 bytes",
            ),
        ];
        for (e, want) in cases {
            assert_eq!(shown(&e).as_str(), want);
        }
    }

    #[test]
    fn gfx9_words_are_rocr_fields() {
        // ROCR FillBufRsrcWord3 by hand: X,Y,Z,W = 4,5,6,7 -> 0xfac; NUM_FORMAT 4 << 12;
        // DATA_FORMAT 4 << 15; ELEMENT_SIZE 1 << 19; INDEX_STRIDE 3 << 21; ADD_TID 1 << 23.
        let want3 = 0xfac | 4 << 12 | 4 << 15 | 1 << 19 | 3 << 21 | 1 << 23;
        assert_eq!(want3, 0x00ea_4fac);
        let r = ScratchRsrc::new(&GFX9, GpuVa(0x7f12_3456_7800), 0x20_0000, false).unwrap();
        assert_eq!(r.words(), [0x3456_7800, 0x8000_7f12, 0x20_0000, want3]);
        assert_eq!(r.base(), GpuVa(0x7f12_3456_7800));
        assert_eq!(r.num_records(), 0x20_0000);
        assert_eq!(r.index_stride_lanes(), 64);
        assert_eq!(r.word1().get(BufRsrcWord1::SWIZZLE_ENABLE), 1);
        let w3 = BufRsrcWord3Gfx9(r.words()[3]);
        assert_eq!(w3.get(BufRsrcWord3Gfx9::TYPE), 0);
        assert_eq!(w3.get(BufRsrcWord3Gfx9::ATC), 0);
    }

    #[test]
    fn gfx10_words_are_rocr_fields_with_the_wave_stride() {
        // FORMAT 20 << 12, INDEX_STRIDE 2 << 21 (wave32), ADD_TID 1 << 23, RESOURCE_LEVEL
        // 1 << 24, OOB_SELECT 2 << 28: tinygrad's gfx103x 0x20c14000 plus the DST_SELs and
        // RESOURCE_LEVEL ROCR sets.
        let r = ScratchRsrc::new(&GFX10, GpuVa(0x1000), 4096, true).unwrap();
        assert_eq!(r.words()[3], 0x20c1_4000 | 0xfac | 1 << 24);
        assert_eq!(r.index_stride_lanes(), 32);
        let r64 = ScratchRsrc::new(&GFX10, GpuVa(0x1000), 4096, false).unwrap();
        assert_eq!(r64.words()[3], r.words()[3] | 1 << 21);
    }

    #[test]
    fn refusals() {
        for a in [&GFX11, &GFX12] {
            assert_eq!(
                ScratchRsrc::new(a, GpuVa(0x1000), 4096, true),
                Err(ScratchRsrcError::Unsupported { family: a.family })
            );
        }
        assert_eq!(
            ScratchRsrc::new(&GFX9, GpuVa(1 << 48), 4096, false),
            Err(ScratchRsrcError::BaseTooHigh { base: 1 << 48 })
        );
        assert_eq!(
            ScratchRsrc::new(&GFX9, GpuVa(0x1000), 0, false),
            Err(ScratchRsrcError::Empty)
        );
        let big = ScratchRsrc::new(&GFX9, GpuVa(0x1000), 1 << 33, false).unwrap();
        assert_eq!(big.num_records(), u32::MAX);
    }
}
