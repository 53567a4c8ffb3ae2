//! Clang offload bundles (`__CLANG_OFFLOAD_BUNDLE__`): what `hipcc --genco` and
//! `clang -x hip --offload-device-only` write, one code object per target, read without
//! allocation.
//!
//! Layout (uncompressed, LLVM `clang-offload-bundler`): the 24-byte magic, a u64 entry count,
//! then per entry a u64 file offset, a u64 size, a u64 id length and the id
//! (`hipv4-amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-`, `host-x86_64-unknown-linux--`), all
//! little endian. [`Bundle::parse`] checks every header and range; [`code_object_for`] picks the
//! code object for a device, or says which targets the bundle has.
//!
//! ```
//! # fn demo(file: &[u8]) -> Result<(), hcq_core::bundle::BundleError> {
//! let elf = hcq_core::bundle::code_object_for(file, "gfx1100")?; // a plain ELF passes through
//! # let _ = elf; Ok(()) }
//! ```

// The error names the targets present inline (no alloc): larger than clippy likes.
#![allow(clippy::result_large_err)]

use core::fmt;

use crate::codeobj::MachTarget;

/// The magic an uncompressed bundle starts with.
pub const BUNDLE_MAGIC: &[u8; 24] = b"__CLANG_OFFLOAD_BUNDLE__";
/// The magic of a compressed bundle (`clang-offload-bundler -compress`).
pub const COMPRESSED_MAGIC: &[u8; 4] = b"CCOB";
/// The part of an entry id before an AMDGPU processor.
const AMDHSA: &str = "amdgcn-amd-amdhsa--";

/// The processors of a bundle's entries, comma-separated, for messages (truncated at 256 bytes).
pub type TargetList = heapless::String<256>;

/// Why a bundle was refused. Without `alloc` the list of targets present is kept inline, which
/// makes the error large; it is only built on the failure path.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
#[allow(clippy::large_enum_variant)]
pub enum BundleError {
    /// The header or an entry runs past the end of the file.
    Truncated {
        /// Offset of the part that does not fit.
        offset: u64,
    },
    /// More entries than the file could hold.
    TooManyEntries {
        /// The count in the header.
        count: u64,
    },
    /// An entry's code lies outside the file.
    EntryOutOfBounds {
        /// Entry index.
        index: u64,
        /// Its offset.
        offset: u64,
        /// Its size.
        size: u64,
    },
    /// An entry id is not UTF-8.
    BadId {
        /// Entry index.
        index: u64,
    },
    /// A compressed bundle (`CCOB`), which hcq does not decompress.
    Compressed,
    /// No entry runs on the device.
    NoMatchingTarget {
        /// The device's processor.
        device: crate::codeobj::Name,
        /// The AMDGPU processors the bundle holds.
        present: TargetList,
    },
}

impl fmt::Display for BundleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Truncated { offset } => {
                write!(f, "offload bundle truncated at offset {offset:#x}")
            }
            Self::TooManyEntries { count } => write!(
                f,
                "offload bundle claims {count} entries, more than the file holds"
            ),
            Self::EntryOutOfBounds {
                index,
                offset,
                size,
            } => write!(
                f,
                "offload bundle entry {index} (offset {offset:#x}, size {size:#x}) is outside the file"
            ),
            Self::BadId { index } => write!(f, "offload bundle entry {index}: id is not UTF-8"),
            Self::Compressed => f.write_str(
                "compressed offload bundle (CCOB): unbundle it first (clang-offload-bundler --unbundle) or build without -compress",
            ),
            Self::NoMatchingTarget { device, present } => {
                if present.is_empty() {
                    write!(f, "offload bundle has no AMDGPU code object (device is {device})")
                } else {
                    write!(
                        f,
                        "offload bundle has no code object for {device}; it holds {present}"
                    )
                }
            }
        }
    }
}

impl core::error::Error for BundleError {}

/// One entry of a bundle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BundleEntry<'a> {
    /// The entry id (`hipv4-amdgcn-amd-amdhsa--gfx1100`).
    pub id: &'a str,
    /// Its bytes (an ELF code object for AMDGPU entries; empty for the host entry).
    pub code: &'a [u8],
}

impl<'a> BundleEntry<'a> {
    /// The AMDGPU target id (`gfx90a:sramecc+:xnack-`), if this is an AMDGPU entry.
    #[must_use]
    pub fn target(&self) -> Option<&'a str> {
        self.id.split_once(AMDHSA).map(|(_, t)| t)
    }

    /// The processor (`gfx90a`), if this is an AMDGPU entry.
    #[must_use]
    pub fn processor(&self) -> Option<&'a str> {
        self.target().map(|t| t.split(':').next().unwrap_or(t))
    }
}

/// A validated bundle borrowing the file's bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bundle<'a> {
    data: &'a [u8],
    count: u64,
}

fn u64_at(data: &[u8], off: u64) -> Result<u64, BundleError> {
    let start = usize::try_from(off).map_err(|_| BundleError::Truncated { offset: off })?;
    start
        .checked_add(8)
        .and_then(|end| data.get(start..end))
        .and_then(|s| <[u8; 8]>::try_from(s).ok())
        .map(u64::from_le_bytes)
        .ok_or(BundleError::Truncated { offset: off })
}

/// Whether `data` starts like a bundle (compressed or not).
#[must_use]
pub fn is_bundle(data: &[u8]) -> bool {
    data.starts_with(BUNDLE_MAGIC) || data.starts_with(COMPRESSED_MAGIC)
}

impl<'a> Bundle<'a> {
    /// Validates `data` as an uncompressed bundle.
    ///
    /// # Errors
    /// [`BundleError`] naming the first bad header or range.
    pub fn parse(data: &'a [u8]) -> Result<Self, BundleError> {
        if data.starts_with(COMPRESSED_MAGIC) {
            return Err(BundleError::Compressed);
        }
        if !data.starts_with(BUNDLE_MAGIC) {
            return Err(BundleError::Truncated { offset: 0 });
        }
        let count = u64_at(data, 24)?;
        // CAST: usize -> u64 is lossless on every supported target.
        let len = data.len() as u64;
        // Each entry header takes at least 24 bytes.
        if count > len.saturating_sub(32) / 24 {
            return Err(BundleError::TooManyEntries { count });
        }
        let b = Self { data, count };
        let mut at = 32u64;
        for index in 0..count {
            let (entry, next) = b.entry_at(index, at)?;
            let _ = entry;
            at = next;
        }
        Ok(b)
    }

    fn entry_at(&self, index: u64, at: u64) -> Result<(BundleEntry<'a>, u64), BundleError> {
        let data = self.data;
        let offset = u64_at(data, at)?;
        let size = u64_at(data, at.saturating_add(8))?;
        let id_len = u64_at(data, at.saturating_add(16))?;
        let id_at = at.saturating_add(24);
        let id_end = id_at
            .checked_add(id_len)
            .ok_or(BundleError::Truncated { offset: id_at })?;
        let id_bytes = usize::try_from(id_at)
            .ok()
            .zip(usize::try_from(id_end).ok())
            .and_then(|(s, e)| data.get(s..e))
            .ok_or(BundleError::Truncated { offset: id_at })?;
        let id = core::str::from_utf8(id_bytes).map_err(|_| BundleError::BadId { index })?;
        let oob = BundleError::EntryOutOfBounds {
            index,
            offset,
            size,
        };
        let code = offset
            .checked_add(size)
            .and_then(|end| {
                let s = usize::try_from(offset).ok()?;
                let e = usize::try_from(end).ok()?;
                data.get(s..e)
            })
            .ok_or(oob)?;
        Ok((BundleEntry { id, code }, id_end))
    }

    /// Number of entries.
    #[must_use]
    pub const fn len(&self) -> u64 {
        self.count
    }

    /// Whether the bundle has no entry.
    #[must_use]
    pub const fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Every entry, in file order.
    pub fn entries(&self) -> impl Iterator<Item = BundleEntry<'a>> + 'a {
        let b = *self;
        let mut at = 32u64;
        // Validated by parse: an error cannot happen; the iterator stops if it does.
        (0..self.count).map_while(move |i| {
            let (e, next) = b.entry_at(i, at).ok()?;
            at = next;
            Some(e)
        })
    }

    /// The AMDGPU processors present, comma-separated.
    #[must_use]
    pub fn targets(&self) -> TargetList {
        let mut s = TargetList::new();
        for t in self.entries().filter_map(|e| e.target()) {
            if !s.is_empty() && s.push_str(", ").is_err() {
                break;
            }
            if s.push_str(t).is_err() {
                break;
            }
        }
        s
    }

    /// The entry whose code runs on `device` (`gfx1100`): the exact processor first, else a
    /// generic target listing it.
    ///
    /// # Errors
    /// [`BundleError::NoMatchingTarget`] naming the targets present.
    pub fn select(&self, device: &str) -> Result<BundleEntry<'a>, BundleError> {
        let amd = || self.entries().filter(|e| !e.code.is_empty());
        let exact = amd().find(|e| e.processor() == Some(device));
        let generic = || {
            amd().find(|e| {
                e.processor()
                    .and_then(MachTarget::from_name)
                    .is_some_and(|m| m.runs_on(device))
            })
        };
        exact.or_else(generic).ok_or_else(|| {
            let mut name = crate::codeobj::Name::new();
            for c in device.chars() {
                if name.push(c).is_err() {
                    break;
                }
            }
            BundleError::NoMatchingTarget {
                device: name,
                present: self.targets(),
            }
        })
    }
}

/// The code object in `data` for `device`: `data` itself unless it is a bundle, else the
/// bundle's entry for the device.
///
/// # Errors
/// A malformed bundle, or one without a code object for the device (naming those it has).
pub fn code_object_for<'a>(data: &'a [u8], device: &str) -> Result<&'a [u8], BundleError> {
    if !is_bundle(data) {
        return Ok(data);
    }
    Ok(Bundle::parse(data)?.select(device)?.code)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A bundle of `(id, code)` entries.
    fn build(entries: &[(&str, &[u8])], out: &mut heapless::Vec<u8, 1024>) {
        out.extend_from_slice(BUNDLE_MAGIC).unwrap();
        out.extend_from_slice(&(entries.len() as u64).to_le_bytes())
            .unwrap();
        let header: usize = 32 + entries.iter().map(|(id, _)| 24 + id.len()).sum::<usize>();
        let mut at = header as u64;
        for (id, code) in entries {
            out.extend_from_slice(&at.to_le_bytes()).unwrap();
            out.extend_from_slice(&(code.len() as u64).to_le_bytes())
                .unwrap();
            out.extend_from_slice(&(id.len() as u64).to_le_bytes())
                .unwrap();
            out.extend_from_slice(id.as_bytes()).unwrap();
            at += code.len() as u64;
        }
        for (_, code) in entries {
            out.extend_from_slice(code).unwrap();
        }
    }

    #[test]
    fn selects_the_device_and_names_the_others() {
        let mut b = heapless::Vec::new();
        build(
            &[
                ("host-x86_64-unknown-linux--", b""),
                ("hipv4-amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-", b"A90a"),
                ("hipv4-amdgcn-amd-amdhsa--gfx11-generic", b"G11"),
                ("hipv4-amdgcn-amd-amdhsa--gfx1100", b"A1100"),
            ],
            &mut b,
        );
        let bundle = Bundle::parse(&b).unwrap();
        assert_eq!(bundle.len(), 4);
        assert_eq!(code_object_for(&b, "gfx1100"), Ok(&b"A1100"[..]));
        assert_eq!(code_object_for(&b, "gfx1101"), Ok(&b"G11"[..]));
        assert_eq!(code_object_for(&b, "gfx90a"), Ok(&b"A90a"[..]));
        let e = code_object_for(&b, "gfx942").unwrap_err();
        let mut msg = heapless::String::<256>::new();
        core::fmt::write(&mut msg, format_args!("{e}")).unwrap();
        assert_eq!(
            msg.as_str(),
            "offload bundle has no code object for gfx942; it holds gfx90a:sramecc+:xnack-, gfx11-generic, gfx1100"
        );
        // Not a bundle: passes through.
        assert_eq!(code_object_for(b"\x7fELF", "gfx942"), Ok(&b"\x7fELF"[..]));
        // Every truncation is an error, never a panic.
        for len in BUNDLE_MAGIC.len()..b.len() - 1 {
            assert!(Bundle::parse(&b[..len]).is_err(), "{len}");
        }
        assert_eq!(Bundle::parse(b"CCOB\x01\x00"), Err(BundleError::Compressed));
    }

    #[test]
    fn entry_count_is_bounded_by_the_smallest_headers() {
        // N entries with empty ids and code: 32 + 24 * N bytes, the most that many bytes hold.
        let mut b = heapless::Vec::<u8, 1024>::new();
        build(&[("", b""), ("", b""), ("", b"")], &mut b);
        assert_eq!(b.len(), 32 + 3 * 24);
        let bundle = Bundle::parse(&b).unwrap();
        assert_eq!((bundle.len(), bundle.is_empty()), (3, false));
        b[24..32].copy_from_slice(&4u64.to_le_bytes());
        assert_eq!(
            Bundle::parse(&b),
            Err(BundleError::TooManyEntries { count: 4 })
        );
        let mut empty = heapless::Vec::<u8, 1024>::new();
        build(&[], &mut empty);
        let bundle = Bundle::parse(&empty).unwrap();
        assert_eq!((bundle.len(), bundle.is_empty()), (0, true));
        assert_eq!(bundle.entries().count(), 0);
    }

    #[test]
    fn lying_headers_are_errors() {
        let mut b = heapless::Vec::<u8, 1024>::new();
        build(&[("hipv4-amdgcn-amd-amdhsa--gfx1100", b"code")], &mut b);
        let mut huge = b.clone();
        huge[24..32].copy_from_slice(&u64::MAX.to_le_bytes());
        assert_eq!(
            Bundle::parse(&huge),
            Err(BundleError::TooManyEntries { count: u64::MAX })
        );
        let mut out = b.clone();
        out[40..48].copy_from_slice(&1000u64.to_le_bytes()); // size
        assert!(matches!(
            Bundle::parse(&out),
            Err(BundleError::EntryOutOfBounds { index: 0, .. })
        ));
        let mut wrap = b.clone();
        wrap[32..40].copy_from_slice(&u64::MAX.to_le_bytes()); // offset
        assert!(matches!(
            Bundle::parse(&wrap),
            Err(BundleError::EntryOutOfBounds { .. })
        ));
        let mut bad_id = b;
        bad_id[56] = 0xff;
        assert_eq!(Bundle::parse(&bad_id), Err(BundleError::BadId { index: 0 }));
    }
}
