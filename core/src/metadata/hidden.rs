//! Hidden (implicit) kernel arguments: the values a runtime writes after the explicit ones,
//! as ROCm's CLR does (`rocvirtual.cpp`, `VirtualGPU::submitKernelInternal`).
//!
//! CLR starts from zeroed argument memory and writes, per `hidden_*` argument of the metadata:
//! block counts `global / local` and group sizes `local` per axis; remainders `global % local`
//! (always 0 here: hcq launches whole work-groups); global offsets (0); `hidden_grid_dims` (the
//! number of dimensions); the dynamic LDS size; the private and shared aperture bases (the high
//! 32 bits of the apertures, from `amd_queue_t`); and for the features a runtime without them
//! has (printf, hostcall, heap, default queue, completion action, multigrid sync, queue
//! pointer) a null pointer, which is what CLR leaves when the feature is off. A `hidden_*` kind
//! this module does not know is an error naming it, never silent zeros.

use core::fmt;

use super::{ArgMeta, HiddenKind, ValueKind};
use crate::name::{Name, short_name};

/// High 32 bits of the LDS (shared) aperture KFD gives a 64-bit process on gfx9+
/// (`MAKE_LDS_APP_BASE_V9`, `kfd_flat_memory.c`: `1 << 48`).
pub const SHARED_APERTURE_HI_GFX9: u32 = 0x1_0000;
/// High 32 bits of the scratch (private) aperture on gfx9+ (`MAKE_SCRATCH_APP_BASE_V9`: `2 << 48`).
pub const PRIVATE_APERTURE_HI_GFX9: u32 = 0x2_0000;

/// What a launch looks like, for the hidden arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchShape {
    /// Work-groups per axis.
    pub groups: [u32; 3],
    /// Work-items per work-group per axis.
    pub block: [u32; 3],
    /// Dynamic LDS bytes per work-group.
    pub dynamic_lds: u32,
}

impl LaunchShape {
    /// `hidden_grid_dims`: 1 + the highest axis with more than one work-item.
    #[must_use]
    pub fn dims(&self) -> u32 {
        let big = |i: usize| self.groups[i] > 1 || self.block[i] > 1;
        if big(2) {
            3
        } else if big(1) {
            2
        } else {
            1
        }
    }
}

/// Why a hidden argument could not be filled.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum HiddenError {
    /// A `hidden_*` kind hcq does not know.
    UnknownKind {
        /// The `.value_kind` as written.
        kind: Name,
    },
    /// The argument's `.size` cannot hold the value.
    TooSmall {
        /// The kind.
        kind: HiddenKind,
        /// `.size`.
        size: u32,
        /// The value.
        value: u64,
    },
    /// The argument lies outside the kernarg buffer.
    OutOfBounds {
        /// The kind.
        kind: HiddenKind,
        /// `.offset`.
        offset: u32,
        /// `.size`.
        size: u32,
    },
}

impl fmt::Display for HiddenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnknownKind { kind } => write!(
                f,
                "the kernel takes a hidden argument of kind {kind}, which hcq does not know how to fill"
            ),
            Self::TooSmall { kind, size, value } => write!(
                f,
                "hidden argument {} is {size} bytes, too small for its value {value}",
                kind.name()
            ),
            Self::OutOfBounds { kind, offset, size } => write!(
                f,
                "hidden argument {} (offset {offset}, size {size}) is outside the kernarg buffer",
                kind.name()
            ),
        }
    }
}

impl core::error::Error for HiddenError {}

/// The kind of a hidden argument, or [`HiddenError::UnknownKind`] naming it.
///
/// # Errors
/// An unknown `hidden_*` kind.
pub fn kind_of(arg: &ArgMeta<'_>) -> Result<HiddenKind, HiddenError> {
    match arg.value_kind {
        ValueKind::Hidden(k) => Ok(k),
        _ => Err(HiddenError::UnknownKind {
            kind: short_name(arg.value_kind_str),
        }),
    }
}

/// The value CLR writes for `kind` (see the module docs); `None` for `hidden_none` (nothing
/// written).
#[must_use]
pub fn value(kind: HiddenKind, shape: &LaunchShape) -> Option<u64> {
    let axis = |v: [u32; 3], i: usize| u64::from(v[i]);
    Some(match kind {
        HiddenKind::None => return None,
        HiddenKind::BlockCountX => axis(shape.groups, 0),
        HiddenKind::BlockCountY => axis(shape.groups, 1),
        HiddenKind::BlockCountZ => axis(shape.groups, 2),
        HiddenKind::GroupSizeX => axis(shape.block, 0),
        HiddenKind::GroupSizeY => axis(shape.block, 1),
        HiddenKind::GroupSizeZ => axis(shape.block, 2),
        HiddenKind::GridDims => shape.dims().into(),
        HiddenKind::DynamicLdsSize => shape.dynamic_lds.into(),
        HiddenKind::PrivateBase => PRIVATE_APERTURE_HI_GFX9.into(),
        HiddenKind::SharedBase => SHARED_APERTURE_HI_GFX9.into(),
        // Whole work-groups: no partial group, no offset; features hcq does not have: null.
        HiddenKind::RemainderX
        | HiddenKind::RemainderY
        | HiddenKind::RemainderZ
        | HiddenKind::GlobalOffsetX
        | HiddenKind::GlobalOffsetY
        | HiddenKind::GlobalOffsetZ
        | HiddenKind::PrintfBuffer
        | HiddenKind::HostcallBuffer
        | HiddenKind::DefaultQueue
        | HiddenKind::CompletionAction
        | HiddenKind::MultigridSyncArg
        | HiddenKind::HeapV1
        | HiddenKind::QueuePtr => 0,
    })
}

/// Whether CLR writes 0 for `kind` whatever the launch (remainders, offsets, absent features):
/// a runtime whose kernarg buffer starts zeroed may skip it. `hidden_none` writes nothing.
#[must_use]
pub fn is_always_zero(kind: HiddenKind) -> bool {
    let a = LaunchShape {
        groups: [2, 3, 4],
        block: [5, 6, 7],
        dynamic_lds: 8,
    };
    value(kind, &a) == Some(0)
}

/// Writes the value of hidden argument `kind` at `offset` (`size` bytes, little endian,
/// zero-extended) into `kernarg` (the whole kernarg segment).
///
/// # Errors
/// [`HiddenError::TooSmall`] when the value does not fit `size` bytes,
/// [`HiddenError::OutOfBounds`] when the slot is outside `kernarg`.
#[inline]
pub fn write(
    kernarg: &mut [u8],
    kind: HiddenKind,
    offset: u32,
    size: u32,
    shape: &LaunchShape,
) -> Result<(), HiddenError> {
    let Some(v) = value(kind, shape) else {
        return Ok(());
    };
    let oob = || HiddenError::OutOfBounds { kind, offset, size };
    let start = usize::try_from(offset).map_err(|_| oob())?;
    let fits = |bytes: u32| bytes >= 8 || v >> (bytes * 8) == 0;
    if !fits(size) {
        return Err(HiddenError::TooSmall {
            kind,
            size,
            value: v,
        });
    }
    // The sizes LLVM emits (2, 4, 8) as single fixed-size stores; anything else byte-wise.
    // CAST (narrowing): `fits` checked the value fits `size` bytes.
    match size {
        2 => put(kernarg, start, (v as u16).to_le_bytes()),
        4 => put(kernarg, start, (v as u32).to_le_bytes()),
        8 => put(kernarg, start, v.to_le_bytes()),
        _ => {
            let len = usize::try_from(size).map_err(|_| oob())?;
            let end = start.checked_add(len).ok_or_else(oob)?;
            let dst = kernarg.get_mut(start..end).ok_or_else(oob)?;
            let bytes = v.to_le_bytes();
            for (i, d) in dst.iter_mut().enumerate() {
                *d = bytes.get(i).copied().unwrap_or(0);
            }
            Some(())
        }
    }
    .ok_or_else(oob)
}

/// Stores `bytes` at `kernarg[start..]`; `None` when they do not fit.
#[inline]
fn put<const N: usize>(kernarg: &mut [u8], start: usize, bytes: [u8; N]) -> Option<()> {
    let dst: &mut [u8; N] = kernarg
        .get_mut(start..start.checked_add(N)?)?
        .try_into()
        .ok()?;
    *dst = bytes;
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHAPE: LaunchShape = LaunchShape {
        groups: [4, 1, 1],
        block: [64, 1, 1],
        dynamic_lds: 128,
    };

    #[test]
    fn values_follow_clr() {
        assert_eq!(value(HiddenKind::BlockCountX, &SHAPE), Some(4));
        assert_eq!(value(HiddenKind::GroupSizeX, &SHAPE), Some(64));
        assert_eq!(value(HiddenKind::GroupSizeY, &SHAPE), Some(1));
        assert_eq!(value(HiddenKind::RemainderX, &SHAPE), Some(0));
        assert_eq!(value(HiddenKind::GridDims, &SHAPE), Some(1));
        assert_eq!(value(HiddenKind::DynamicLdsSize, &SHAPE), Some(128));
        assert_eq!(value(HiddenKind::SharedBase, &SHAPE), Some(0x1_0000));
        assert_eq!(value(HiddenKind::None, &SHAPE), None);
        assert!(is_always_zero(HiddenKind::RemainderY));
        assert!(is_always_zero(HiddenKind::HostcallBuffer));
        assert!(!is_always_zero(HiddenKind::GroupSizeZ));
        assert!(!is_always_zero(HiddenKind::SharedBase));
        assert!(!is_always_zero(HiddenKind::None));
        let s3 = LaunchShape {
            groups: [1, 1, 2],
            ..SHAPE
        };
        assert_eq!(s3.dims(), 3);
        let s2 = LaunchShape {
            block: [8, 8, 1],
            ..SHAPE
        };
        assert_eq!(s2.dims(), 2);
    }

    #[test]
    fn write_checks_size_and_bounds() {
        let mut k = [0xaau8; 16];
        write(&mut k, HiddenKind::GroupSizeX, 4, 2, &SHAPE).unwrap();
        assert_eq!(&k[4..6], &[64, 0]);
        assert_eq!(k[6], 0xaa);
        let big = LaunchShape {
            block: [300, 1, 1],
            ..SHAPE
        };
        assert_eq!(
            write(&mut k, HiddenKind::GroupSizeX, 0, 1, &big),
            Err(HiddenError::TooSmall {
                kind: HiddenKind::GroupSizeX,
                size: 1,
                value: 300
            })
        );
        assert!(matches!(
            write(&mut k, HiddenKind::BlockCountX, 14, 4, &SHAPE),
            Err(HiddenError::OutOfBounds { .. })
        ));
        // hidden_none writes nothing, even out of bounds.
        assert!(write(&mut k, HiddenKind::None, 100, 8, &SHAPE).is_ok());
    }

    use crate::testing::shown;

    #[test]
    fn kinds_and_errors_read_right() {
        let arg = |value_kind_str, value_kind| ArgMeta {
            name: None,
            type_name: None,
            offset: 0,
            size: 8,
            value_kind_str,
            value_kind,
            address_space: None,
            is_const: false,
            pointee_align: None,
        };
        assert_eq!(
            kind_of(&arg(
                "hidden_block_count_x",
                ValueKind::Hidden(HiddenKind::BlockCountX)
            )),
            Ok(HiddenKind::BlockCountX)
        );
        let unknown = kind_of(&arg("hidden_teapot", ValueKind::Other)).unwrap_err();
        assert_eq!(
            shown(&unknown),
            "the kernel takes a hidden argument of kind hidden_teapot, which hcq does not know how to fill"
        );
        let small = HiddenError::TooSmall {
            kind: HiddenKind::GroupSizeX,
            size: 1,
            value: 300,
        };
        assert_eq!(
            shown(&small),
            "hidden argument hidden_group_size_x is 1 bytes, too small for its value 300"
        );
        let oob = HiddenError::OutOfBounds {
            kind: HiddenKind::BlockCountX,
            offset: 14,
            size: 4,
        };
        assert_eq!(
            shown(&oob),
            "hidden argument hidden_block_count_x (offset 14, size 4) is outside the kernarg buffer"
        );
    }
}
