//! The note, finding it, and why metadata is refused.

use super::*;

/// `NT_AMDGPU_METADATA`: the note type of the metadata.
pub const NT_AMDGPU_METADATA: u32 = 32;
/// The note's owner name.
pub const NOTE_OWNER: &[u8] = b"AMDGPU";

/// Why the metadata was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum MetadataError {
    /// The MessagePack itself is malformed.
    Msgpack(MsgpackError),
    /// A note header or its name/description runs past the note section.
    BadNote {
        /// Offset of the note inside its section.
        offset: usize,
    },
    /// A value has the wrong MessagePack type.
    WrongType {
        /// The key (`amdhsa.kernels`, `.kernarg_segment_size`, ...).
        key: &'static str,
        /// What was expected.
        expected: &'static str,
        /// What was found.
        found: &'static str,
        /// Byte offset of the value in the note.
        offset: usize,
    },
    /// A key appears twice in one map.
    DuplicateKey {
        /// The key.
        key: &'static str,
        /// Byte offset of the second one.
        offset: usize,
    },
    /// A required key is missing.
    MissingKey {
        /// The key.
        key: &'static str,
        /// Index of the kernel whose map lacks it (`None`: the top-level map).
        kernel: Option<u32>,
        /// Index of the argument whose map lacks it.
        arg: Option<u32>,
    },
    /// An integer does not fit the field (or is negative).
    OutOfRange {
        /// The key.
        key: &'static str,
        /// Byte offset of the value.
        offset: usize,
    },
    /// A string is not UTF-8.
    NotUtf8 {
        /// The key.
        key: &'static str,
        /// Byte offset of the value.
        offset: usize,
    },
    /// `amdhsa.version` is not 1.x.
    UnsupportedVersion {
        /// Major version.
        major: u64,
        /// Minor version.
        minor: u64,
    },
    /// An argument lies outside the kernarg segment or overlaps the one before it.
    BadArgLayout {
        /// Kernel index.
        kernel: u32,
        /// Argument index.
        arg: u32,
        /// `.offset`.
        offset: u32,
        /// `.size`.
        size: u32,
        /// `.kernarg_segment_size`.
        segment: u32,
    },
    /// An alignment or size that must be a power of two is not.
    NotPowerOfTwo {
        /// The key.
        key: &'static str,
        /// The value.
        value: u32,
    },
}

impl From<MsgpackError> for MetadataError {
    fn from(e: MsgpackError) -> Self {
        Self::Msgpack(e)
    }
}

impl fmt::Display for MetadataError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Msgpack(e) => write!(f, "metadata note: {e}"),
            Self::BadNote { offset } => write!(
                f,
                "note at offset {offset} of its section runs past the section's end"
            ),
            Self::WrongType {
                key,
                expected,
                found,
                offset,
            } => write!(
                f,
                "metadata {key} at offset {offset} is a {found}, expected {expected}"
            ),
            Self::DuplicateKey { key, offset } => {
                write!(
                    f,
                    "metadata key {key} appears twice (again at offset {offset})"
                )
            }
            Self::MissingKey { key, kernel, arg } => match (kernel, arg) {
                (Some(k), Some(a)) => {
                    write!(f, "metadata of kernel {k}, argument {a}: no {key}")
                }
                (Some(k), None) => write!(f, "metadata of kernel {k}: no {key}"),
                _ => write!(f, "metadata: no {key}"),
            },
            Self::OutOfRange { key, offset } => {
                write!(f, "metadata {key} at offset {offset} is out of range")
            }
            Self::NotUtf8 { key, offset } => {
                write!(f, "metadata {key} at offset {offset} is not UTF-8")
            }
            Self::UnsupportedVersion { major, minor } => write!(
                f,
                "metadata amdhsa.version {major}.{minor} is not supported (need 1.x, code object v3..v6)"
            ),
            Self::BadArgLayout {
                kernel,
                arg,
                offset,
                size,
                segment,
            } => write!(
                f,
                "metadata of kernel {kernel}: argument {arg} (offset {offset}, size {size}) is outside the {segment}-byte kernarg segment or overlaps the argument before it"
            ),
            Self::NotPowerOfTwo { key, value } => {
                write!(f, "metadata {key} is {value}, not a power of two")
            }
        }
    }
}

impl core::error::Error for MetadataError {}

/// The description bytes of the first `AMDGPU` `NT_AMDGPU_METADATA` note in `notes` (the bytes
/// of an `SHT_NOTE` section), or `None`.
///
/// # Errors
/// [`MetadataError::BadNote`] for a note running past the section.
pub fn find_note(notes: &[u8]) -> Result<Option<&[u8]>, MetadataError> {
    let mut off = 0usize;
    while off < notes.len() {
        let bad = MetadataError::BadNote { offset: off };
        let word = |at: usize| {
            at.checked_add(4)
                .and_then(|end| notes.get(at..end))
                .and_then(|s| <[u8; 4]>::try_from(s).ok())
                .map(u32::from_le_bytes)
        };
        let (Some(namesz), Some(descsz), Some(ty)) =
            (word(off), word(off + 4), word(off.saturating_add(8)))
        else {
            return Err(bad);
        };
        let pad4 = |n: u32| {
            usize::try_from(n)
                .ok()
                .and_then(|n| n.checked_next_multiple_of(4))
        };
        let (Some(name_len), Some(desc_len)) = (pad4(namesz), pad4(descsz)) else {
            return Err(bad);
        };
        let name_at = off.saturating_add(12);
        let desc_at = name_at.checked_add(name_len).ok_or(bad)?;
        let name = usize::try_from(namesz)
            .ok()
            .and_then(|n| notes.get(name_at..name_at.checked_add(n)?))
            .ok_or(bad)?;
        let desc = usize::try_from(descsz)
            .ok()
            .and_then(|n| notes.get(desc_at..desc_at.checked_add(n)?))
            .ok_or(bad)?;
        let owner = name.strip_suffix(&[0]).unwrap_or(name);
        if ty == NT_AMDGPU_METADATA && owner == NOTE_OWNER {
            return Ok(Some(desc));
        }
        off = desc_at.checked_add(desc_len).ok_or(bad)?;
    }
    Ok(None)
}
