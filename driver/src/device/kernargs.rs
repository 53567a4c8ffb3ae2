//! [`Kernargs`]: the device's kernel-argument arena. Launches allocate from it and write their
//! arguments into it while they build their submission.

#[allow(clippy::wildcard_imports)]
use super::*;
use hcq_core::timeline::{ArenaError, TimelineArena};

/// Alignment of each kernel's arguments in the arena (16: dispatch packets need 16, tinygrad
/// graphs use 16).
pub(crate) const KERNARG_ALIGN: u64 = 16;
/// Stride at which [`Kernargs::new`] touches the arena's mapping.
const PAGE_BYTES: usize = 4096;

/// The kernel-argument arena: core's [`TimelineArena`] over a VRAM buffer, so a region is
/// handed out again only after the launch that used it completed. Allocated inside the
/// submission (under the timeline lock), tagged with the submission's own timeline value.
#[derive(Debug)]
pub(crate) struct Kernargs {
    /// The arena's memory (launches write their arguments through its CPU mapping).
    pub(crate) bo: Bo,
    arena: TimelineArena<1024>,
}

impl Kernargs {
    pub(crate) fn new(bo: Bo) -> Result<Self> {
        let arena = TimelineArena::new(bo.size())
            .map_err(|e| Error::InvalidArgument(format!("kernarg arena: {e}")))?;
        // Touch every page once now, so launches do not take the first-touch page fault of
        // the arena's CPU mapping (one per 4 KiB: about 1 us here, ~50 ns per launch averaged
        // over a first pass of 288-byte segments). Nothing uses the arena yet.
        for w in bo.mapping().u64s().iter().step_by(PAGE_BYTES / 8) {
            w.store(0, Ordering::Relaxed);
        }
        Ok(Self { bo, arena })
    }

    /// Reserves `size` bytes for the submission `s`; returns their byte offset.
    pub(crate) fn alloc(&mut self, size: u64, s: &Submit<'_>) -> Result<u64> {
        if seeded!(KernargsReusedEarly) && size <= self.bo.size() {
            return Ok(0);
        }
        loop {
            match self.arena.alloc(size, KERNARG_ALIGN, s.value, s.done()) {
                Ok(r) => return Ok(r.offset),
                Err(ArenaError::MustWait { value }) => s.wait_done(value)?,
                Err(e) => return Err(Error::InvalidArgument(format!("kernel arguments: {e}"))),
            }
        }
    }
}
