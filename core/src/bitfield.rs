//! Typed bitfields for hardware words: PM4 headers, control dwords, GCR_CNTL, SDMA headers,
//! RSRC1/2/3, kernel_code_properties.
//!
//! A word is declared once, as data, with named bit ranges (nova-core style):
//!
//! ```
//! hcq_core::bitfield! {
//!     /// A PM4 type-3 header.
//!     pub struct Header(u32) {
//!         /// Opcode.
//!         OPCODE: 15:8,
//!         /// Body dwords minus one.
//!         COUNT: 29:16,
//!         /// Packet type (3).
//!         TYPE: 31:30,
//!     }
//! }
//! let h = Header::zeroed().with(Header::TYPE, 3).with(Header::COUNT, 5).with(Header::OPCODE, 0x49);
//! assert_eq!(h.raw(), 0xC005_4900);
//! assert_eq!(h.get(Header::COUNT), 5);
//! assert!(Header::try_zeroed_with(Header::COUNT, 0x4000).is_none()); // 14-bit field
//! ```
//!
//! A range whose high bit is below its low bit, or past the word, fails to compile. Values are
//! built immutably; `with` masks the value to the field (the hardware's own semantics), and
//! `try_with` refuses a value that does not fit. `Debug` prints the raw word and every field.
//! A field's type names its word ([`Field<W>`](Field)): using it on another word is a compile
//! error.

use core::fmt;
use core::marker::PhantomData;

/// A bit range `hi:lo` (inclusive) inside the hardware word `W`.
///
/// The word type is part of the field's type, so a field of one register or packet word
/// cannot be applied to another: this does not compile.
///
/// ```compile_fail
/// use hcq_core::pm4::{GcrCntl, Pm4Header};
/// let _ = Pm4Header::zeroed().with(GcrCntl::GL2_WB, 1); // a GCR_CNTL field on a PM4 header
/// ```
///
/// while the same call with the header's own field does:
///
/// ```
/// use hcq_core::pm4::{GcrCntl, Pm4Header};
/// assert_eq!(Pm4Header::zeroed().with(Pm4Header::TYPE, 3).raw(), 0xC000_0000);
/// assert_eq!(GcrCntl::zeroed().with(GcrCntl::GL2_WB, 1).raw(), 1 << 15);
/// ```
pub struct Field<W> {
    /// Lowest bit of the field.
    pub lo: u32,
    /// Highest bit of the field (inclusive).
    pub hi: u32,
    // `fn() -> W`: the field neither owns nor borrows a `W`, and is `Send`, `Sync` and `Copy`
    // whatever `W` is.
    word: PhantomData<fn() -> W>,
}

impl<W> Field<W> {
    /// A field of `W` covering bits `hi..=lo`. Use through [`bitfield!`](crate::bitfield!),
    /// which checks the range at compile time; for tables that place a field per family
    /// (`ArchInfo`), the caller keeps `hi >= lo` and `hi` inside the word.
    #[must_use]
    pub const fn new(hi: u32, lo: u32) -> Self {
        Self {
            lo,
            hi,
            word: PhantomData,
        }
    }

    /// Width in bits.
    #[must_use]
    pub const fn width(self) -> u32 {
        self.hi - self.lo + 1
    }

    /// Mask of the field's bits, not shifted (`(1 << width) - 1`), as a u64.
    #[must_use]
    pub const fn mask64(self) -> u64 {
        if self.width() >= 64 {
            u64::MAX
        } else {
            (1u64 << self.width()) - 1
        }
    }

    /// Whether `other` (a field of any word) covers the same bits: for checks that two
    /// layouts agree on a position.
    #[must_use]
    pub const fn same_bits<V>(self, other: Field<V>) -> bool {
        self.lo == other.lo && self.hi == other.hi
    }
}

// Written out rather than derived: a derive would require `W: Clone` (and so on), and the
// word types are only markers here.
impl<W> Clone for Field<W> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<W> Copy for Field<W> {}

impl<W> PartialEq for Field<W> {
    fn eq(&self, other: &Self) -> bool {
        self.same_bits(*other)
    }
}

impl<W> Eq for Field<W> {}

impl<W> fmt::Debug for Field<W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Field")
            .field("word", &core::any::type_name::<W>())
            .field("lo", &self.lo)
            .field("hi", &self.hi)
            .finish()
    }
}

/// Declares a transparent newtype over `u32` (or `u16`, `u8`, `u64`) with named bit fields.
/// See the [module documentation](mod@crate::bitfield).
#[macro_export]
macro_rules! bitfield {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident($t:ty) {
            $(
                $(#[$fmeta:meta])*
                $field:ident : $hi:literal : $lo:literal
            ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
        #[repr(transparent)]
        $vis struct $name(pub $t);

        #[allow(dead_code)]
        impl $name {
            $(
                $(#[$fmeta])*
                pub const $field: $crate::bitfield::Field<Self> = {
                    assert!($hi >= $lo, "bitfield: MSB is smaller than its LSB");
                    assert!(($hi as u32) < <$t>::BITS, "bitfield: field lies outside the word");
                    $crate::bitfield::Field::new($hi, $lo)
                };
            )*

            /// Every field with its name, in declaration order.
            pub const FIELDS: &'static [(&'static str, $crate::bitfield::Field<Self>)] =
                &[$((stringify!($field), Self::$field)),*];

            /// The word with every bit clear.
            #[must_use]
            #[inline]
            pub const fn zeroed() -> Self {
                Self(0)
            }

            /// The word from its raw bits.
            #[must_use]
            #[inline]
            pub const fn from_raw(raw: $t) -> Self {
                Self(raw)
            }

            /// The raw bits.
            #[must_use]
            #[inline]
            pub const fn raw(self) -> $t {
                self.0
            }

            /// The value of `field`.
            #[must_use]
            #[inline]
            pub const fn get(self, field: $crate::bitfield::Field<Self>) -> $t {
                // CAST: the mask is at most the word's width, so the value fits in $t.
                ((self.0 >> field.lo) as u64 & field.mask64()) as $t
            }

            /// `field` set to `value`, masked to the field's width.
            #[must_use]
            #[inline]
            pub const fn with(self, field: $crate::bitfield::Field<Self>, value: $t) -> Self {
                // CAST: the mask is at most the word's width, so it fits in $t.
                let mask = (field.mask64() as $t) << field.lo;
                Self((self.0 & !mask) | ((value << field.lo) & mask))
            }

            /// `field` set to a boolean.
            #[must_use]
            #[inline]
            pub const fn with_flag(self, field: $crate::bitfield::Field<Self>, on: bool) -> Self {
                self.with(field, on as $t)
            }

            /// Whether `value` fits in `field`.
            #[must_use]
            #[inline]
            pub const fn fits(field: $crate::bitfield::Field<Self>, value: $t) -> bool {
                (value as u64) <= field.mask64()
            }

            /// `field` set to `value`, or `None` when `value` does not fit in the field.
            #[must_use]
            #[inline]
            pub const fn try_with(self, field: $crate::bitfield::Field<Self>, value: $t) -> Option<Self> {
                if Self::fits(field, value) {
                    Some(self.with(field, value))
                } else {
                    None
                }
            }

            /// A zeroed word with one field set, or `None` when `value` does not fit.
            #[must_use]
            #[inline]
            pub const fn try_zeroed_with(field: $crate::bitfield::Field<Self>, value: $t) -> Option<Self> {
                Self::zeroed().try_with(field, value)
            }
        }

        impl core::fmt::Debug for $name {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                let mut s = f.debug_struct(stringify!($name));
                s.field("<raw>", &format_args!("{:#x}", self.0));
                $( s.field(stringify!($field), &format_args!("{:#x}", self.get(Self::$field))); )*
                s.finish()
            }
        }

        impl From<$name> for $t {
            fn from(v: $name) -> $t {
                v.0
            }
        }
    };
}

#[cfg(test)]
mod tests {
    bitfield! {
        /// Test word.
        pub struct W(u32) {
            /// Low nibble.
            LO: 3:0,
            /// One bit.
            B: 4:4,
            /// Top two bits.
            TOP: 31:30,
        }
    }

    #[test]
    fn set_get_mask() {
        let w = W::zeroed()
            .with(W::LO, 0x1f)
            .with(W::TOP, 3)
            .with_flag(W::B, true);
        assert_eq!(w.raw(), 0xC000_001F);
        assert_eq!(w.get(W::LO), 0xf);
        assert_eq!(w.get(W::TOP), 3);
        assert!(W::zeroed().try_with(W::LO, 16).is_none());
        assert_eq!(W::zeroed().try_with(W::LO, 15).map(W::raw), Some(15));
        assert_eq!(W::FIELDS.len(), 3);
    }

    bitfield! {
        /// Another word, one field placed like W's.
        pub struct X(u32) {
            /// Same bits as W::LO.
            LO: 3:0,
            /// Same low bit as W::LO, wider.
            WIDE: 7:0,
            /// Same high bit as W::LO, narrower.
            NARROW: 3:2,
        }
    }

    #[test]
    fn fields_compare_by_position() {
        assert!(W::LO.same_bits(X::LO));
        assert!(!W::LO.same_bits(X::WIDE));
        assert!(!W::LO.same_bits(X::NARROW));
        assert!(!W::LO.same_bits(W::B));
        assert_eq!(W::LO, W::LO);
        assert_ne!(W::LO, W::B);
        assert_ne!(X::LO, X::WIDE);
        assert_ne!(X::LO, X::NARROW);
        let mut s = heapless::String::<96>::new();
        core::fmt::write(&mut s, format_args!("{:?}", W::TOP)).unwrap();
        assert!(s.starts_with("Field { word: \""), "{s}");
        assert!(s.ends_with("W\", lo: 30, hi: 31 }"), "{s}");
    }
}
