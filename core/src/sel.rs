//! Selector fields as enums: the values a packet's FUNCTION, MEM_SPACE, OPERATION, DST_SEL,
//! DATA_SEL, INT_SEL, EVENT_TYPE and EVENT_INDEX fields may hold, named once and shared by the
//! encoders, the decoder's accessors and the simulator.
//!
//! Each is `#[repr(u32)]` with the hardware value as its discriminant; [`TryFrom<u32>`] (or the
//! `const` `from_raw`) refuses a value the enum does not name with an [`UnknownSelector`] that
//! names the field and the value. Values from `rocm_kernel.md`'s packet table (PM4 manuals,
//! `soc15d.h` / `nvd.h`; Mesa `sid.h`).

use core::fmt;

/// A selector field held a value its enum does not name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnknownSelector {
    /// The packet and field (`"RELEASE_MEM DATA_SEL"`).
    pub field: &'static str,
    /// The raw value.
    pub value: u32,
}

impl fmt::Display for UnknownSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} is not a value hcq knows", self.field, self.value)
    }
}

impl core::error::Error for UnknownSelector {}

macro_rules! selector {
    (
        $(#[$meta:meta])*
        $name:ident, $field:literal {
            $( $(#[$vmeta:meta])* $variant:ident = $value:literal ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[repr(u32)]
        pub enum $name {
            $( $(#[$vmeta])* $variant = $value ),*
        }

        impl $name {
            /// The packet and field this selector fills, as errors name it.
            pub const FIELD: &'static str = $field;

            /// The value the hardware field holds.
            #[must_use]
            #[inline(always)]
            pub const fn raw(self) -> u32 {
                self as u32
            }

            /// The selector a raw field value names.
            ///
            /// # Errors
            /// [`UnknownSelector`] (naming the field and value) for a value the enum lacks.
            #[inline]
            pub const fn from_raw(value: u32) -> Result<Self, UnknownSelector> {
                match value {
                    $( $value => Ok(Self::$variant), )*
                    _ => Err(UnknownSelector { field: $field, value }),
                }
            }
        }

        impl TryFrom<u32> for $name {
            type Error = UnknownSelector;

            #[inline]
            fn try_from(value: u32) -> Result<Self, UnknownSelector> {
                Self::from_raw(value)
            }
        }

        impl From<$name> for u32 {
            #[inline(always)]
            fn from(s: $name) -> u32 {
                s.raw()
            }
        }
    };
}

selector! {
    /// WAIT_REG_MEM `FUNCTION` / SDMA POLL_REGMEM `FUNC`: how `value & mask` is compared with
    /// the reference (7 is reserved).
    CompareFunction, "compare FUNCTION" {
        /// Always true.
        Always = 0,
        /// `<`.
        Less = 1,
        /// `<=`.
        LessEqual = 2,
        /// `==`.
        Equal = 3,
        /// `!=`.
        NotEqual = 4,
        /// `>=`.
        GreaterEqual = 5,
        /// `>`.
        Greater = 6,
    }
}

impl CompareFunction {
    /// Whether `(value & mask) FUNCTION reference` holds.
    #[must_use]
    #[inline]
    pub const fn holds(self, value: u32, mask: u32, reference: u32) -> bool {
        let v = value & mask;
        match self {
            Self::Always => true,
            Self::Less => v < reference,
            Self::LessEqual => v <= reference,
            Self::Equal => v == reference,
            Self::NotEqual => v != reference,
            Self::GreaterEqual => v >= reference,
            Self::Greater => v > reference,
        }
    }
}

selector! {
    /// WAIT_REG_MEM `MEM_SPACE`: what the poll address names.
    MemSpace, "WAIT_REG_MEM MEM_SPACE" {
        /// A register (dword offsets in the address words).
        Register = 0,
        /// Memory.
        Memory = 1,
    }
}

selector! {
    /// WAIT_REG_MEM `OPERATION`.
    WaitOperation, "WAIT_REG_MEM OPERATION" {
        /// Wait for the condition.
        Wait = 0,
        /// Write the first register, then wait on the second (the register form; HDP flush).
        WriteThenWait = 1,
        /// Wait, then write.
        WaitThenWrite = 2,
    }
}

selector! {
    /// WRITE_DATA `DST_SEL`: where the data goes.
    WriteDataDst, "WRITE_DATA DST_SEL" {
        /// Memory-mapped register.
        Register = 0,
        /// Memory, synchronous.
        MemorySync = 1,
        /// GL2 (TC L2).
        Gl2 = 2,
        /// Memory, asynchronous.
        Memory = 5,
    }
}

selector! {
    /// RELEASE_MEM `DST_SEL`: where the data goes.
    ReleaseDst, "RELEASE_MEM DST_SEL" {
        /// Memory (through the memory controller).
        Memory = 0,
        /// GL2 (TC L2).
        Gl2 = 1,
    }
}

selector! {
    /// RELEASE_MEM `DATA_SEL`: what is written at the address.
    DataSel, "RELEASE_MEM DATA_SEL" {
        /// Nothing.
        None = 0,
        /// The low 32 bits of the data.
        Data32 = 1,
        /// The 64-bit data.
        Data64 = 2,
        /// The 64-bit GPU clock counter.
        GpuClock = 3,
        /// The 64-bit system clock counter.
        SystemClock = 4,
    }
}

selector! {
    /// RELEASE_MEM `INT_SEL`: whether (and when) an interrupt is sent.
    IntSel, "RELEASE_MEM INT_SEL" {
        /// No interrupt.
        None = 0,
        /// Interrupt only, sent without waiting for the write (meant for `DATA_SEL = 0`).
        Interrupt = 1,
        /// Interrupt once the write is confirmed.
        InterruptAfterWrite = 2,
        /// Write confirmed, no interrupt (`EOP_INT_SEL_SEND_DATA_AFTER_WR_CONFIRM`).
        WriteConfirm = 3,
    }
}

selector! {
    /// `EVENT_TYPE` (`VGT_EVENT_TYPE`) of EVENT_WRITE and RELEASE_MEM: the events a compute
    /// queue uses.
    EventType, "EVENT_TYPE" {
        /// CACHE_FLUSH_TS.
        CacheFlushTs = 0x04,
        /// CACHE_FLUSH.
        CacheFlush = 0x06,
        /// CS_PARTIAL_FLUSH.
        CsPartialFlush = 0x07,
        /// CACHE_FLUSH_AND_INV_TS_EVENT.
        CacheFlushAndInvTs = 0x14,
        /// CACHE_FLUSH_AND_INV_EVENT.
        CacheFlushAndInv = 0x16,
        /// BOTTOM_OF_PIPE_TS.
        BottomOfPipeTs = 0x28,
        /// CS_DONE.
        CsDone = 0x2F,
    }
}

selector! {
    /// `EVENT_INDEX` of EVENT_WRITE and RELEASE_MEM.
    EventIndex, "EVENT_INDEX" {
        /// Any other event.
        Other = 0,
        /// ZPASS_DONE.
        ZpassDone = 1,
        /// SAMPLE_PIPELINESTATS.
        SamplePipelineStats = 2,
        /// SAMPLE_STREAMOUTSTATS.
        SampleStreamoutStats = 3,
        /// CS_VS_PS_PARTIAL_FLUSH (EVENT_WRITE of CS_PARTIAL_FLUSH).
        PartialFlush = 4,
        /// End of pipe (RELEASE_MEM).
        EndOfPipe = 5,
        /// End of shader / shader done (RELEASE_MEM).
        ShaderDone = 6,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_names_unknown_values() {
        for v in 0..7 {
            assert_eq!(
                CompareFunction::try_from(v).map(CompareFunction::raw),
                Ok(v)
            );
        }
        let e = CompareFunction::try_from(7).unwrap_err();
        assert_eq!(
            e,
            UnknownSelector {
                field: "compare FUNCTION",
                value: 7
            }
        );
        let mut s = heapless::String::<64>::new();
        core::fmt::Write::write_fmt(
            &mut s,
            format_args!("{}", DataSel::try_from(6).unwrap_err()),
        )
        .unwrap();
        assert_eq!(s, "RELEASE_MEM DATA_SEL 6 is not a value hcq knows");
        assert_eq!(EventType::try_from(0x14), Ok(EventType::CacheFlushAndInvTs));
        assert!(EventType::try_from(0x15).is_err());
        assert_eq!(WriteDataDst::try_from(5), Ok(WriteDataDst::Memory));
        assert!(WriteDataDst::try_from(3).is_err());
        assert_eq!(u32::from(IntSel::InterruptAfterWrite), 2);
    }

    #[test]
    fn compare_functions() {
        use CompareFunction::*;
        let cases = [
            (Always, 0, true),
            (Less, 4, true),
            (Less, 5, false),
            (LessEqual, 5, true),
            (LessEqual, 6, false),
            (Equal, 5, true),
            (Equal, 4, false),
            (NotEqual, 4, true),
            (NotEqual, 5, false),
            (GreaterEqual, 5, true),
            (GreaterEqual, 4, false),
            (Greater, 6, true),
            (Greater, 5, false),
        ];
        for (f, value, want) in cases {
            // The mask applies before the compare: the high bits never count.
            assert_eq!(f.holds(value | 0xff00, 0xff, 5), want, "{f:?} {value}");
        }
    }
}
