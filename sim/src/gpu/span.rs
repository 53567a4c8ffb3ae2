//! [`GpuSpan`]: a translated piece of GPU memory the engines reach without the page table
//! (rings, read/write pointers).

#[allow(clippy::wildcard_imports)]
use super::*;

/// A translated, contiguous piece of GPU memory the engine can access without going through
/// the page table again (no lock): the fast path for rings.
///
/// A span keeps the memory alive but does not see later UNMAP/FREE. Cache spans only of buffers
/// a live queue holds: the ring, rptr/wptr page, EOP and CWSR areas (the kernel refuses to UNMAP
/// those with EBUSY until DESTROY_QUEUE), and re-translate everything else per access.
#[derive(Clone, Debug)]
pub struct GpuSpan {
    mem: Arc<SharedMem>,
    off: u64,
    len: u64,
    va: u64,
}

impl GpuSpan {
    /// GPU VA of the first byte.
    #[must_use]
    pub fn va(&self) -> u64 {
        self.va
    }

    /// Bytes in the span.
    #[must_use]
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the span is empty.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn inside(&self, rel: u64, n: usize) -> Option<u64> {
        // CAST: usize fits u64.
        let end = rel.checked_add(n as u64)?;
        (end <= self.len).then(|| self.off + rel)
    }

    /// Copies `buf.len()` bytes at `rel` (offset from [`GpuSpan::va`]); false when outside.
    pub fn read(&self, rel: u64, buf: &mut [u8]) -> bool {
        self.inside(rel, buf.len())
            .is_some_and(|o| self.mem.read(o, buf))
    }

    /// Copies `data` to `rel`; false when outside.
    pub fn write(&self, rel: u64, data: &[u8]) -> bool {
        self.inside(rel, data.len())
            .is_some_and(|o| self.mem.write(o, data))
    }

    /// Acquire-load of the u32 at `rel`.
    #[must_use]
    pub fn load_u32(&self, rel: u64) -> Option<u32> {
        self.inside(rel, 4).and_then(|o| self.mem.load_u32(o))
    }

    /// Acquire-load of the u64 at `rel`.
    #[must_use]
    pub fn load_u64(&self, rel: u64) -> Option<u64> {
        self.inside(rel, 8).and_then(|o| self.mem.load_u64(o))
    }

    /// Release-store of a u32 at `rel`; false when outside.
    pub fn store_u32(&self, rel: u64, v: u32) -> bool {
        self.inside(rel, 4)
            .is_some_and(|o| self.mem.store_u32(o, v))
    }

    /// Release-store of a u64 at `rel`; false when outside.
    pub fn store_u64(&self, rel: u64, v: u64) -> bool {
        self.inside(rel, 8)
            .is_some_and(|o| self.mem.store_u64(o, v))
    }
}

impl SimKfd {
    /// Translates `[va, va + len)` on `gpu_id` into one [`GpuSpan`]: it must lie inside a single
    /// mapping of sim-owned memory (VRAM, GTT, doorbell); USERPTR memory has no span (use
    /// [`SimKfd::gpu_read`]).
    ///
    /// # Errors
    /// The first address that is unmapped, read-only for a `write` span, or not in the same
    /// mapping (reported as not mapped); a USERPTR mapping is reported at `va`.
    pub fn gpu_span(
        &self,
        gpu_id: u32,
        va: u64,
        len: u64,
        write: bool,
    ) -> Result<GpuSpan, GpuFault> {
        let (t, avail) = self.translate(gpu_id, va, write)?;
        if avail < len {
            return Err(GpuFault {
                gpu_id,
                va: va.saturating_add(avail),
                write,
                reason: VmFaultKind::NotPresent,
            });
        }
        match t {
            Target::Shared(mem, off) => Ok(GpuSpan { mem, off, len, va }),
            Target::User(..) => Err(GpuFault {
                gpu_id,
                va,
                write,
                reason: VmFaultKind::NotPresent,
            }),
        }
    }
}
