//! A zero-copy MessagePack reader: no allocation, no recursion, never a panic.
//!
//! [`Reader::next`] decodes one value header (strings and binaries come back as slices of the
//! input; arrays and maps as their element counts, the elements follow). [`Reader::skip`] steps
//! over one whole value, nested ones included, with a counter instead of recursion, so a
//! deeply nested or lying input costs at most one step per input byte.

use core::fmt;

/// Why MessagePack bytes could not be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum MsgpackError {
    /// The input ends inside a value.
    Truncated {
        /// Offset of the value.
        offset: usize,
    },
    /// The byte 0xc1, which MessagePack never uses.
    Reserved {
        /// Its offset.
        offset: usize,
    },
    /// An array or map claims more elements than there are bytes left.
    TooManyElements {
        /// Offset of its header.
        offset: usize,
        /// Elements claimed (a map counts keys and values).
        count: u64,
    },
}

impl fmt::Display for MsgpackError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Truncated { offset } => {
                write!(f, "MessagePack value at offset {offset} is truncated")
            }
            Self::Reserved { offset } => {
                write!(f, "MessagePack byte 0xc1 (never used) at offset {offset}")
            }
            Self::TooManyElements { offset, count } => write!(
                f,
                "MessagePack container at offset {offset} claims {count} elements, more than the bytes left"
            ),
        }
    }
}

impl core::error::Error for MsgpackError {}

/// One decoded value header.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value<'a> {
    /// `nil`.
    Nil,
    /// `true` / `false`.
    Bool(bool),
    /// A non-negative integer (any width).
    UInt(u64),
    /// A negative integer.
    Int(i64),
    /// A 32-bit float.
    F32(f32),
    /// A 64-bit float.
    F64(f64),
    /// A string's bytes (UTF-8 is not checked here).
    Str(&'a [u8]),
    /// Binary bytes.
    Bin(&'a [u8]),
    /// An extension value: type and bytes.
    Ext(i8, &'a [u8]),
    /// An array of this many values (they follow).
    Array(u32),
    /// A map of this many key/value pairs (they follow).
    Map(u32),
}

impl Value<'_> {
    /// The MessagePack type's name, for messages.
    #[must_use]
    pub const fn type_name(&self) -> &'static str {
        match self {
            Self::Nil => "nil",
            Self::Bool(_) => "boolean",
            Self::UInt(_) | Self::Int(_) => "integer",
            Self::F32(_) | Self::F64(_) => "float",
            Self::Str(_) => "string",
            Self::Bin(_) => "binary",
            Self::Ext(..) => "extension",
            Self::Array(_) => "array",
            Self::Map(_) => "map",
        }
    }
}

/// A cursor over MessagePack bytes.
#[derive(Clone, Debug)]
pub struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    /// A reader at the start of `data`.
    #[must_use]
    pub const fn new(data: &'a [u8]) -> Self {
        Self { data, pos: 0 }
    }

    /// A reader at `pos` in `data` (a position [`Reader::position`] returned).
    #[must_use]
    pub const fn at(data: &'a [u8], pos: usize) -> Self {
        Self { data, pos }
    }

    /// Offset of the next value.
    #[must_use]
    pub const fn position(&self) -> usize {
        self.pos
    }

    /// Bytes not yet read.
    #[must_use]
    pub fn remaining(&self) -> usize {
        self.data.len().saturating_sub(self.pos)
    }

    fn take(&mut self, n: usize, start: usize) -> Result<&'a [u8], MsgpackError> {
        let end = self
            .pos
            .checked_add(n)
            .ok_or(MsgpackError::Truncated { offset: start })?;
        let s = self
            .data
            .get(self.pos..end)
            .ok_or(MsgpackError::Truncated { offset: start })?;
        self.pos = end;
        Ok(s)
    }

    fn be<const N: usize>(&mut self, start: usize) -> Result<[u8; N], MsgpackError> {
        let s = self.take(N, start)?;
        <[u8; N]>::try_from(s).map_err(|_| MsgpackError::Truncated { offset: start })
    }

    fn len(&mut self, bytes: usize, start: usize) -> Result<usize, MsgpackError> {
        let n: u64 = match bytes {
            1 => u8::from_be_bytes(self.be::<1>(start)?).into(),
            2 => u16::from_be_bytes(self.be::<2>(start)?).into(),
            _ => u32::from_be_bytes(self.be::<4>(start)?).into(),
        };
        usize::try_from(n).map_err(|_| MsgpackError::Truncated { offset: start })
    }

    fn count(&mut self, bytes: usize, start: usize, per: u64) -> Result<u32, MsgpackError> {
        let n: u32 = if bytes == 2 {
            u16::from_be_bytes(self.be::<2>(start)?).into()
        } else {
            u32::from_be_bytes(self.be::<4>(start)?)
        };
        self.check_count(n, start, per)
    }

    fn check_count(&self, n: u32, start: usize, per: u64) -> Result<u32, MsgpackError> {
        // Every element takes at least one byte: a count beyond the bytes left is a lie.
        let need = u64::from(n).saturating_mul(per);
        // CAST: usize -> u64 is lossless on every supported target.
        if need > self.remaining() as u64 {
            return Err(MsgpackError::TooManyElements {
                offset: start,
                count: need,
            });
        }
        Ok(n)
    }

    /// Decodes the next value header.
    ///
    /// # Errors
    /// Truncated input, the reserved byte 0xc1, or a container longer than the input.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Result<Value<'a>, MsgpackError> {
        let start = self.pos;
        let [b] = self.be::<1>(start)?;
        Ok(match b {
            0x00..=0x7f => Value::UInt(b.into()),
            0x80..=0x8f => Value::Map(self.check_count((b & 0x0f).into(), start, 2)?),
            0x90..=0x9f => Value::Array(self.check_count((b & 0x0f).into(), start, 1)?),
            0xa0..=0xbf => Value::Str(self.take((b & 0x1f).into(), start)?),
            0xc0 => Value::Nil,
            0xc1 => return Err(MsgpackError::Reserved { offset: start }),
            0xc2 => Value::Bool(false),
            0xc3 => Value::Bool(true),
            0xc4..=0xc6 => {
                let n = self.len(1 << (b - 0xc4), start)?;
                Value::Bin(self.take(n, start)?)
            }
            0xc7..=0xc9 => {
                let n = self.len(1 << (b - 0xc7), start)?;
                let [t] = self.be::<1>(start)?;
                Value::Ext(i8::from_be_bytes([t]), self.take(n, start)?)
            }
            0xca => Value::F32(f32::from_be_bytes(self.be::<4>(start)?)),
            0xcb => Value::F64(f64::from_be_bytes(self.be::<8>(start)?)),
            0xcc => Value::UInt(u8::from_be_bytes(self.be::<1>(start)?).into()),
            0xcd => Value::UInt(u16::from_be_bytes(self.be::<2>(start)?).into()),
            0xce => Value::UInt(u32::from_be_bytes(self.be::<4>(start)?).into()),
            0xcf => Value::UInt(u64::from_be_bytes(self.be::<8>(start)?)),
            0xd0 => int(i8::from_be_bytes(self.be::<1>(start)?).into()),
            0xd1 => int(i16::from_be_bytes(self.be::<2>(start)?).into()),
            0xd2 => int(i32::from_be_bytes(self.be::<4>(start)?).into()),
            0xd3 => int(i64::from_be_bytes(self.be::<8>(start)?)),
            0xd4..=0xd8 => {
                let [t] = self.be::<1>(start)?;
                Value::Ext(i8::from_be_bytes([t]), self.take(1 << (b - 0xd4), start)?)
            }
            0xd9..=0xdb => {
                let n = self.len(1 << (b - 0xd9), start)?;
                Value::Str(self.take(n, start)?)
            }
            0xdc | 0xdd => Value::Array(self.count(if b == 0xdc { 2 } else { 4 }, start, 1)?),
            0xde | 0xdf => Value::Map(self.count(if b == 0xde { 2 } else { 4 }, start, 2)?),
            // 0xe0..=0xff: negative fixint.
            _ => Value::Int(i8::from_be_bytes([b]).into()),
        })
    }

    /// Steps over one whole value (a container with everything in it).
    ///
    /// # Errors
    /// As [`Reader::next`], for any value inside.
    pub fn skip(&mut self) -> Result<(), MsgpackError> {
        let mut pending: u64 = 1;
        while pending > 0 {
            pending -= 1;
            match self.next()? {
                Value::Array(n) => pending = pending.saturating_add(n.into()),
                Value::Map(n) => pending = pending.saturating_add(u64::from(n) * 2),
                _ => {}
            }
        }
        Ok(())
    }
}

/// Signed MessagePack integers that are non-negative read as [`Value::UInt`], so callers
/// compare one variant.
fn int(v: i64) -> Value<'static> {
    match u64::try_from(v) {
        Ok(u) => Value::UInt(u),
        Err(_) => Value::Int(v),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_every_header_form() {
        let cases: &[(&[u8], Value<'_>)] = &[
            (&[0x05], Value::UInt(5)),
            (&[0xff], Value::Int(-1)),
            (&[0xcc, 0xfe], Value::UInt(254)),
            (&[0xcd, 0x01, 0x00], Value::UInt(256)),
            (&[0xce, 0, 1, 0, 0], Value::UInt(65536)),
            (&[0xcf, 0, 0, 0, 1, 0, 0, 0, 0], Value::UInt(1 << 32)),
            (&[0xd0, 0x80], Value::Int(-128)),
            (&[0xd1, 0x00, 0x10], Value::UInt(16)),
            (&[0xc0], Value::Nil),
            (&[0xc3], Value::Bool(true)),
            (&[0xa2, b'h', b'i'], Value::Str(b"hi")),
            (&[0xd9, 1, b'x'], Value::Str(b"x")),
            (&[0xda, 0, 2, b'h', b'i'], Value::Str(b"hi")),
            (&[0xdb, 0, 0, 0, 1, b'z'], Value::Str(b"z")),
            (&[0xc5, 0, 1, 7], Value::Bin(&[7])),
            (&[0xc6, 0, 0, 0, 2, 7, 8], Value::Bin(&[7, 8])),
            (&[0xc7, 1, 5, 9], Value::Ext(5, &[9])),
            (&[0xc8, 0, 2, 0xfe, 1, 2], Value::Ext(-2, &[1, 2])),
            (&[0xc9, 0, 0, 0, 1, 6, 3], Value::Ext(6, &[3])),
            (&[0xd5, 1, 1, 2], Value::Ext(1, &[1, 2])),
            (&[0xd6, 1, 1, 2, 3, 4], Value::Ext(1, &[1, 2, 3, 4])),
            (
                &[0xd7, 2, 1, 2, 3, 4, 5, 6, 7, 8],
                Value::Ext(2, &[1, 2, 3, 4, 5, 6, 7, 8]),
            ),
            (
                &[
                    0xd8, 3, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
                ],
                Value::Ext(3, &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]),
            ),
            (&[0xcb, 0x3f, 0xf8, 0, 0, 0, 0, 0, 0], Value::F64(1.5)),
            (&[0xd2, 0xff, 0xff, 0xff, 0xfe], Value::Int(-2)),
            (&[0xd2, 0, 1, 0, 0], Value::UInt(65536)),
            (
                &[0xd3, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00],
                Value::Int(-256),
            ),
            (&[0xde, 0, 1, 1, 2], Value::Map(1)),
            (&[0xdf, 0, 0, 0, 1, 1, 2], Value::Map(1)),
            (&[0xdd, 0, 0, 0, 2, 1, 2], Value::Array(2)),
            (&[0xe0], Value::Int(-32)),
            (&[0xc4, 2, 1, 2], Value::Bin(&[1, 2])),
            (&[0x92, 1, 2], Value::Array(2)),
            (&[0x81, 1, 2], Value::Map(1)),
            (&[0xdc, 0, 1, 7], Value::Array(1)),
            (&[0xca, 0x3f, 0x80, 0, 0], Value::F32(1.0)),
            (&[0xd4, 3, 9], Value::Ext(3, &[9])),
        ];
        for (bytes, want) in cases {
            assert_eq!(Reader::new(bytes).next(), Ok(*want), "{bytes:x?}");
        }
    }

    #[test]
    fn lies_are_errors() {
        assert_eq!(
            Reader::new(&[0xc1]).next(),
            Err(MsgpackError::Reserved { offset: 0 })
        );
        assert_eq!(
            Reader::new(&[0xa3, b'a']).next(),
            Err(MsgpackError::Truncated { offset: 0 })
        );
        assert!(matches!(
            Reader::new(&[0xdd, 0xff, 0xff, 0xff, 0xff]).next(),
            Err(MsgpackError::TooManyElements { .. })
        ));
        assert!(matches!(
            Reader::new(&[0xdf, 0, 0, 0, 1, 0x01]).next(),
            Err(MsgpackError::TooManyElements { .. })
        ));
    }

    #[test]
    fn skip_steps_over_nested_containers() {
        // {"a": [1, {"b": nil}], "c": true} then 7
        let bytes = [
            0x82, 0xa1, b'a', 0x92, 0x01, 0x81, 0xa1, b'b', 0xc0, 0xa1, b'c', 0xc3, 0x07,
        ];
        let mut r = Reader::new(&bytes);
        r.skip().unwrap();
        assert_eq!(r.next(), Ok(Value::UInt(7)));
        // Deep nesting costs one step per byte and never recurses.
        let deep = [0x91u8; 10_000];
        assert!(Reader::new(&deep).skip().is_err());
    }

    #[test]
    fn names_and_errors_read_right() {
        let names = [
            (Value::Nil, "nil"),
            (Value::Bool(false), "boolean"),
            (Value::UInt(1), "integer"),
            (Value::Int(-1), "integer"),
            (Value::F32(0.5), "float"),
            (Value::F64(0.5), "float"),
            (Value::Str(b"a"), "string"),
            (Value::Bin(b"a"), "binary"),
            (Value::Ext(1, b"a"), "extension"),
            (Value::Array(0), "array"),
            (Value::Map(0), "map"),
        ];
        for (v, name) in names {
            assert_eq!(v.type_name(), name);
        }
        for (e, want) in [
            (
                MsgpackError::Truncated { offset: 3 },
                "MessagePack value at offset 3 is truncated",
            ),
            (
                MsgpackError::Reserved { offset: 0 },
                "MessagePack byte 0xc1 (never used) at offset 0",
            ),
            (
                MsgpackError::TooManyElements {
                    offset: 1,
                    count: 9,
                },
                "MessagePack container at offset 1 claims 9 elements, more than the bytes left",
            ),
        ] {
            assert_eq!(crate::testing::shown(&e).as_str(), want);
        }
    }
}
