//! The simulated GPU's one clock (100 MHz timestamps): the `SimKfd` owns it, its attached
//! engines write timestamps from it, GET_CLOCK_COUNTERS reads it. A leaf below `kfd` and
//! `engine`, so both can name it.

use crate::config::SimMode;
use core::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// The GPU clock (100 MHz): virtual (a tick per executed packet, plus each dispatch's
/// modelled duration) or real time.
#[derive(Debug)]
pub(crate) struct Clock {
    virtual_ticks: Option<AtomicU64>,
    origin: Instant,
}

/// GPU clock frequency (Hz): `timestamp_divider` 100 in tinygrad.
pub const GPU_CLOCK_HZ: u64 = 100_000_000;

impl Clock {
    pub(crate) fn new(mode: SimMode) -> Self {
        Self {
            virtual_ticks: match mode {
                SimMode::Deterministic => Some(AtomicU64::new(0)),
                SimMode::Threaded => None,
            },
            origin: Instant::now(),
        }
    }

    /// Current GPU clock value.
    pub(crate) fn now(&self) -> u64 {
        match &self.virtual_ticks {
            Some(t) => t.load(Ordering::Relaxed),
            None => {
                let ns = self.origin.elapsed().as_nanos();
                // CAST: 10 ns per tick; u64 covers 5800 years.
                (ns / 10) as u64
            }
        }
    }

    /// `ticks` of virtual time at once (a dispatch's modelled duration); real time ignores it.
    pub(crate) fn advance(&self, ticks: u64) {
        if let Some(t) = &self.virtual_ticks {
            t.fetch_add(ticks, Ordering::Relaxed);
        }
    }

    /// One packet's worth of virtual time.
    pub(crate) fn tick(&self) {
        self.advance(1);
    }

    /// A host's read of the counter (GET_CLOCK_COUNTERS): virtual time moves one tick per
    /// read, so two reads never return the same value; real time is read as it is.
    pub(crate) fn sample(&self) -> u64 {
        match &self.virtual_ticks {
            Some(t) => t.fetch_add(1, Ordering::Relaxed).wrapping_add(1),
            None => self.now(),
        }
    }
}
