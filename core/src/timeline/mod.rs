//! Timelines: the value the next submission signals, the value to wait for, "has this
//! completed", and the wrap of the 32-bit GPU value onto a shadow signal.
//!
//! # Host values and GPU values
//!
//! A [`TimelineValue`] is a host-side 64-bit counter that only grows, across wraps too, so
//! comparing two of them is plain `<=` and they can tag memory for reuse ([`TimelineArena`]).
//! The GPU sees 32-bit values (RELEASE_MEM writes the low 32 bits, WAIT_REG_MEM / POLL_REGMEM
//! compare 32 bits), so each value maps to a [`GpuValue`]: one of two signals and a `u32`.
//! Within one signal the GPU value is `host - base` and never exceeds `u32::MAX` (refused with
//! [`TimelineError::MustWrap`]), so the unsigned comparison `observed >= value` is exact; values
//! from before a wrap belong to the other signal and are complete by construction (a wrap
//! happens only when everything before it is complete).
//!
//! # The wrap (tinygrad's `_wrap_timeline_signal`)
//!
//! Once the next value passes 2^31 ([`Timeline::needs_wrap`]), the owner's synchronize step
//! waits for the last signaled value and calls [`Timeline::wrap`]: the timeline switches to the
//! shadow signal, the host writes 0 into it, and the next GPU value is 1.
//!
//! ```
//! use hcq_core::timeline::{Timeline, Which};
//! let mut t = Timeline::starting_at((1 << 31) - 1);
//! let v = t.signal()?;                         // GPU value 2^31 - 1
//! let last = t.signal()?;                       // GPU value 2^31
//! assert_eq!(t.gpu_value(last).unwrap().value, 1 << 31);
//! assert!(t.needs_wrap());
//! assert!(t.wrap(0x7fff_ffff).is_err());        // the GPU has not reached 2^31 yet
//! let w = t.wrap(1 << 31)?;                     // it has: switch to the shadow
//! assert_eq!((w.signal, w.reset_to), (Which::Shadow, 0));
//! let next = t.signal()?;
//! assert_eq!(t.gpu_value(next).unwrap().value, 1);
//! assert!(t.is_complete(v, 0));                 // before the wrap: complete by construction
//! assert!(!t.is_complete(next, 0) && t.is_complete(next, 1));
//! # Ok::<(), hcq_core::timeline::TimelineError>(())
//! ```

mod arena;

pub use arena::{ArenaError, Region, TimelineArena};

use crate::sync::atomic::{AtomicU64, Ordering};
use core::fmt;

/// A point on a timeline, host side: monotonic across wraps (starts at 0 = "nothing").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TimelineValue(u64);

impl TimelineValue {
    /// The value before anything was signaled: always complete.
    pub const ZERO: Self = Self(0);

    /// A value from its raw host counter.
    #[must_use]
    pub const fn new(raw: u64) -> Self {
        Self(raw)
    }

    /// The raw host counter.
    #[must_use]
    pub const fn get(self) -> u64 {
        self.0
    }
}

/// Which of a timeline's two signals is meant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Which {
    /// The signal the timeline starts with.
    Primary,
    /// The signal it switches to at the first wrap (then they alternate).
    Shadow,
}

impl Which {
    /// The other signal.
    #[must_use]
    pub const fn other(self) -> Self {
        match self {
            Self::Primary => Self::Shadow,
            Self::Shadow => Self::Primary,
        }
    }
}

/// What the GPU sees for a timeline value: the signal and the 32-bit value in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GpuValue {
    /// The signal holding the value.
    pub signal: Which,
    /// The 32-bit value the GPU writes or compares.
    pub value: u32,
}

/// What the owner must do after [`Timeline::wrap`]: write `reset_to` into `signal`, which is
/// now the active one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct WrapTo {
    /// The newly active signal.
    pub signal: Which,
    /// The value to store into it before any new work (0).
    pub reset_to: u32,
}

/// Why a timeline operation was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TimelineError {
    /// The next GPU value would not fit in 32 bits: synchronize and [`Timeline::wrap`] first.
    MustWrap {
        /// The GPU value the next signal would need.
        next: u64,
    },
    /// A wrap was asked for while work is in flight: the GPU has not reached the last value.
    Busy {
        /// The GPU value of the last signal (what to wait for).
        waiting_for: u32,
        /// The value the GPU shows.
        observed: u32,
    },
}

impl fmt::Display for TimelineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::MustWrap { next } => write!(
                f,
                "timeline value {next:#x} does not fit the GPU's 32 bits: synchronize and wrap the timeline first"
            ),
            Self::Busy {
                waiting_for,
                observed,
            } => write!(
                f,
                "cannot wrap the timeline while work is in flight: signal shows {observed:#x}, last signaled {waiting_for:#x}"
            ),
        }
    }
}

impl core::error::Error for TimelineError {}

/// The GPU value past which the timeline must wrap (tinygrad: `timeline_value > 1 << 31`).
pub const WRAP_THRESHOLD: u64 = 1 << 31;

/// A timeline: a pair of signals (active and shadow) and the next value to signal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timeline {
    /// Next host value to signal.
    next: u64,
    /// Host value that is GPU value 0 on the active signal.
    base: u64,
    /// The active signal.
    active: Which,
}

impl Default for Timeline {
    fn default() -> Self {
        Self::new()
    }
}

impl Timeline {
    /// A fresh timeline: the primary signal holds 0, the next value to signal is 1.
    #[must_use]
    pub const fn new() -> Self {
        Self::starting_at(1)
    }

    /// A timeline whose next GPU value is `next` on the primary signal (which must then hold
    /// `next - 1`); tinygrad's rollover test starts at `2^32 - 20`. `0` is taken as `1` (the
    /// signal cannot hold `-1`).
    #[must_use]
    pub const fn starting_at(next: u32) -> Self {
        let next = if next == 0 { 1 } else { next };
        Self {
            // CAST: u32 -> u64 widens (`From` is not const).
            next: next as u64,
            base: 0,
            active: Which::Primary,
        }
    }

    /// The next value a submission will signal.
    #[must_use]
    pub const fn next_value(&self) -> TimelineValue {
        TimelineValue(self.next)
    }

    /// The last value handed out (what a synchronize waits for).
    #[must_use]
    pub const fn last_signaled(&self) -> TimelineValue {
        TimelineValue(self.next.wrapping_sub(1))
    }

    /// The active signal.
    #[must_use]
    pub const fn active(&self) -> Which {
        self.active
    }

    /// Hands out the next value to signal and advances (increment before submitting:
    /// tinygrad c631c72f22).
    ///
    /// # Errors
    /// [`TimelineError::MustWrap`] when its GPU value would not fit in 32 bits.
    pub fn signal(&mut self) -> Result<TimelineValue, TimelineError> {
        let gpu = self.next - self.base;
        if gpu > u64::from(u32::MAX) {
            return Err(TimelineError::MustWrap { next: gpu });
        }
        let v = TimelineValue(self.next);
        self.next += 1;
        Ok(v)
    }

    /// What the GPU writes or waits for to mean `v`, or `None` if `v` is from before the last
    /// wrap (complete: nothing to wait for) or not representable on the active signal.
    #[must_use]
    pub fn gpu_value(&self, v: TimelineValue) -> Option<GpuValue> {
        let value = u32::try_from(v.0.checked_sub(self.base)?).ok()?;
        Some(GpuValue {
            signal: self.active,
            value,
        })
    }

    /// The host value the GPU has completed, given the 32-bit value `observed` in the active
    /// signal.
    #[must_use]
    pub const fn completed(&self, observed: u32) -> TimelineValue {
        // CAST: u32 -> u64 widens; base + u32 cannot overflow in any real lifetime (2^64).
        TimelineValue(self.base + observed as u64)
    }

    /// Whether `v` has completed, given the 32-bit value `observed` in the active signal.
    /// Values from before the last wrap are complete.
    #[must_use]
    pub const fn is_complete(&self, v: TimelineValue, observed: u32) -> bool {
        // CAST: u32 -> u64 widens.
        v.0 <= self.base + observed as u64
    }

    /// Whether the next value has passed 2^31 on the GPU, so the next synchronize must wrap.
    #[must_use]
    pub const fn needs_wrap(&self) -> bool {
        self.next - self.base > WRAP_THRESHOLD
    }

    /// Switches to the shadow signal (which the owner resets to 0); the next GPU value is 1.
    /// Allowed only when everything signaled is complete: `observed` (the active signal's
    /// value) has reached the last signaled value.
    ///
    /// # Errors
    /// [`TimelineError::Busy`] while work is in flight; nothing changes then.
    pub fn wrap(&mut self, observed: u32) -> Result<WrapTo, TimelineError> {
        let last = self.last_signaled();
        if !self.is_complete(last, observed) {
            return Err(TimelineError::Busy {
                // CAST: last - base < next - base <= 2^32 (signal refuses more), so it fits.
                waiting_for: (last.0 - self.base) as u32,
                observed,
            });
        }
        self.active = self.active.other();
        self.base = last.0;
        Ok(WrapTo {
            signal: self.active,
            reset_to: 0,
        })
    }
}

/// Reads the 32-bit GPU value of a signal's 64-bit `value` word (`Acquire`, so what the GPU
/// wrote before signaling is visible after this returns a value that completes it).
#[must_use]
pub fn observe(value: &AtomicU64) -> u32 {
    // CAST: the GPU writes only the low 32 bits; the high half is ignored on purpose.
    value.load(Ordering::Acquire) as u32
}

#[cfg(test)]
mod tests;
