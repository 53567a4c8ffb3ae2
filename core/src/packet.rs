//! What PM4 and SDMA encoders and decoders share: their error values and the "one bounds check,
//! then plain stores" helper encoders use.

use core::fmt;

/// Why an encoder wrote nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum EncodeError {
    /// The caller's buffer is shorter than the packet.
    BufferTooSmall {
        /// Dwords the packet needs.
        needed: usize,
        /// Dwords the buffer has.
        available: usize,
    },
    /// A parameter does not fit the field that carries it.
    ValueTooLarge {
        /// Which parameter.
        field: &'static str,
        /// The value given.
        value: u64,
        /// The largest value the field holds.
        max: u64,
    },
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EncodeError::BufferTooSmall { needed, available } => write!(
                f,
                "packet needs {needed} dwords but the buffer has room for {available}"
            ),
            EncodeError::ValueTooLarge { field, value, max } => {
                write!(f, "{field} = {value:#x} does not fit (max {max:#x})")
            }
        }
    }
}

impl core::error::Error for EncodeError {}

/// A length as u64 (lossless on every target hcq supports; saturates otherwise).
#[inline(always)]
pub(crate) fn len64(n: usize) -> u64 {
    u64::try_from(n).unwrap_or(u64::MAX)
}

/// Checks `value <= max`, naming `field` otherwise.
#[inline(always)]
pub(crate) const fn check_max(
    field: &'static str,
    value: u64,
    max: u64,
) -> Result<(), EncodeError> {
    if value <= max {
        Ok(())
    } else {
        Err(EncodeError::ValueTooLarge { field, value, max })
    }
}

/// The first `N` dwords of `buf` as an array (one bounds check), or `BufferTooSmall`.
#[inline(always)]
pub(crate) fn head<const N: usize>(buf: &mut [u32]) -> Result<&mut [u32; N], EncodeError> {
    let available = buf.len();
    buf.first_chunk_mut::<N>()
        .ok_or(EncodeError::BufferTooSmall {
            needed: N,
            available,
        })
}

/// Checks that `buf` holds `needed` dwords.
#[inline(always)]
pub(crate) fn room(buf: &mut [u32], needed: usize) -> Result<&mut [u32], EncodeError> {
    let available = buf.len();
    buf.get_mut(..needed)
        .ok_or(EncodeError::BufferTooSmall { needed, available })
}

/// What is wrong with a packet stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DecodeErrorKind {
    /// A PM4 header that is not type 3.
    NotType3 {
        /// The header dword.
        header: u32,
    },
    /// An opcode the decoder does not know.
    UnknownOpcode {
        /// The opcode.
        opcode: u32,
        /// The sub-opcode (SDMA; 0 for PM4).
        sub_op: u32,
    },
    /// A known packet with a body length it never has.
    BadCount {
        /// The opcode.
        opcode: u32,
        /// Body dwords the header claims.
        body_dwords: usize,
    },
    /// The stream ends inside a packet.
    Truncated {
        /// Dwords the packet (or, for SDMA, the part that tells its length) needs.
        needed: usize,
        /// Dwords left in the stream.
        available: usize,
    },
    /// A field holds a value the packet never has (e.g. an SDMA NOP whose count disagrees).
    BadField {
        /// Which field.
        field: &'static str,
        /// Its value.
        value: u32,
    },
}

/// A decode failure at dword `at` (the index of the packet's first dword in the stream).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DecodeError {
    /// Index of the failing packet's first dword.
    pub at: usize,
    /// What is wrong.
    pub kind: DecodeErrorKind,
}

impl DecodeError {
    /// The same error `base` dwords later in a larger stream.
    #[must_use]
    pub const fn shifted(self, base: usize) -> Self {
        Self {
            at: self.at.saturating_add(base),
            kind: self.kind,
        }
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "dword {}: ", self.at)?;
        match self.kind {
            DecodeErrorKind::NotType3 { header } => {
                write!(f, "header {header:#010x} is not a PM4 type-3 packet")
            }
            DecodeErrorKind::UnknownOpcode { opcode, sub_op } => {
                write!(f, "unknown opcode {opcode:#x} (sub-op {sub_op:#x})")
            }
            DecodeErrorKind::BadCount {
                opcode,
                body_dwords,
            } => write!(f, "opcode {opcode:#x} never has {body_dwords} body dwords"),
            DecodeErrorKind::Truncated { needed, available } => write!(
                f,
                "truncated packet: needs {needed} dwords, {available} left"
            ),
            DecodeErrorKind::BadField { field, value } => {
                write!(f, "field {field} has impossible value {value:#x}")
            }
        }
    }
}

impl core::error::Error for DecodeError {}

/// Writes ` name=value` for every field of a bitfield word (names lowercased, umr style).
pub(crate) fn write_fields<W>(
    f: &mut fmt::Formatter<'_>,
    fields: &[(&str, crate::bitfield::Field<W>)],
    raw: u32,
) -> fmt::Result {
    use fmt::Write as _;
    for (name, field) in fields {
        f.write_char(' ')?;
        for c in name.chars() {
            f.write_char(c.to_ascii_lowercase())?;
        }
        // CAST: the mask keeps at most 32 bits of a u32.
        let v = (u64::from(raw) >> field.lo) & field.mask64();
        write!(f, "={v:#x}")?;
    }
    Ok(())
}

/// A packet type that can be decoded from the front of a dword stream (PM4 or SDMA).
pub trait DecodeOne<'a>: Sized {
    /// Decodes the packet at the start of `dwords`: the packet and its length in dwords.
    ///
    /// # Errors
    /// A malformed or truncated packet, with the dword index relative to `dwords`.
    fn decode_one(dwords: &'a [u32]) -> Result<(Self, usize), DecodeError>;
}

/// Iterator over the packets of a stream: `(dword index, packet)`, stopping after the first
/// error (which carries the index of the bad packet). `pm4::decode` and `sdma::decode` make one.
#[derive(Clone, Debug)]
pub struct Decoder<'a, P> {
    dwords: &'a [u32],
    pos: usize,
    failed: bool,
    _packet: core::marker::PhantomData<P>,
}

impl<'a, P> Decoder<'a, P> {
    /// A decoder over `dwords`, from its first dword.
    #[must_use]
    #[inline]
    pub const fn new(dwords: &'a [u32]) -> Self {
        Self {
            dwords,
            pos: 0,
            failed: false,
            _packet: core::marker::PhantomData,
        }
    }
}

impl<'a, P: DecodeOne<'a>> Iterator for Decoder<'a, P> {
    type Item = Result<(usize, P), DecodeError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        let rest = self.dwords.get(self.pos..)?;
        if rest.is_empty() {
            return None;
        }
        match P::decode_one(rest) {
            Ok((p, n)) => {
                let at = self.pos;
                self.pos += n;
                Some(Ok((at, p)))
            }
            Err(e) => {
                self.failed = true;
                Some(Err(e.shifted(self.pos)))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::shown;

    crate::bitfield! {
        /// A test word.
        pub struct Word(u32) {
            /// Bits 3:0.
            LOW_NIBBLE: 3:0,
            /// Bit 4.
            FLAG: 4:4,
            /// Bits 31:28.
            TOP: 31:28,
        }
    }

    struct Fields(u32);

    impl fmt::Display for Fields {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("word")?;
            write_fields(f, Word::FIELDS, self.0)
        }
    }

    #[test]
    fn fields_print_lowercase_with_their_shifted_values() {
        assert_eq!(
            shown(&Fields(0xA000_001B)).as_str(),
            "word low_nibble=0xb flag=0x1 top=0xa"
        );
        assert_eq!(
            shown(&Fields(0)).as_str(),
            "word low_nibble=0x0 flag=0x0 top=0x0"
        );
    }

    #[test]
    fn errors_explain_themselves() {
        let enc = [
            (
                EncodeError::BufferTooSmall {
                    needed: 8,
                    available: 3,
                },
                "packet needs 8 dwords but the buffer has room for 3",
            ),
            (
                EncodeError::ValueTooLarge {
                    field: "count",
                    value: 0x1_0000,
                    max: 0x3fff,
                },
                "count = 0x10000 does not fit (max 0x3fff)",
            ),
        ];
        for (e, want) in enc {
            assert_eq!(shown(&e).as_str(), want);
        }
        let at = |kind| DecodeError { at: 7, kind }.shifted(5);
        let dec = [
            (
                DecodeErrorKind::NotType3 { header: 0x8000 },
                "dword 12: header 0x00008000 is not a PM4 type-3 packet",
            ),
            (
                DecodeErrorKind::UnknownOpcode {
                    opcode: 0x7f,
                    sub_op: 2,
                },
                "dword 12: unknown opcode 0x7f (sub-op 0x2)",
            ),
            (
                DecodeErrorKind::BadCount {
                    opcode: 0x3c,
                    body_dwords: 2,
                },
                "dword 12: opcode 0x3c never has 2 body dwords",
            ),
            (
                DecodeErrorKind::Truncated {
                    needed: 7,
                    available: 3,
                },
                "dword 12: truncated packet: needs 7 dwords, 3 left",
            ),
            (
                DecodeErrorKind::BadField {
                    field: "count",
                    value: 0xff,
                },
                "dword 12: field count has impossible value 0xff",
            ),
        ];
        for (kind, want) in dec {
            assert_eq!(shown(&at(kind)).as_str(), want);
        }
    }
}
