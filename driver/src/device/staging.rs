//! [`Staging`]: the two buffers a device stages host copies through (`copy_in`, `copy_out`).

#[allow(clippy::wildcard_imports)]
use super::*;

/// Two staging buffers and the timeline value (with generation) that last used each.
#[derive(Debug)]
pub(crate) struct Staging {
    pub(crate) bufs: [Bo; 2],
    pub(crate) last: [TimelineValue; 2],
    /// The buffer the next chunk goes through (0 or 1).
    pub(crate) next: usize,
}

impl Staging {
    pub(crate) fn new(dev: &DeviceInner) -> Result<Self> {
        let alloc = || {
            dev.kfd.core.alloc(
                dev.info.gpu_id,
                dev.options.staging_size,
                MemoryKind::Gtt,
                BoOptions::default(),
            )
        };
        Ok(Self {
            bufs: [alloc()?, alloc()?],
            last: [TimelineValue::ZERO; 2],
            next: 0,
        })
    }
}
