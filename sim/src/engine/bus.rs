//! The engines' view of one GPU: checked access to its virtual memory, its doorbells, and the
//! interrupt/exception lines into the kernel driver.
//!
//! The engines are written against [`GpuBus`] only, so they run on the simulated KFD's page
//! tables (`SimKfd`) and on the standalone [`MemBus`](super::membus::MemBus) (tests, benches,
//! fuzzing) alike.

pub use crate::vm::{Access, GPU_PAGE_SIZE, VmFault, VmFaultKind};
use hcq_core::kfd::{HsaHwExceptionData, HsaMemoryExceptionData};

/// One GPU as its command processors see it.
///
/// Every memory access is checked against this GPU's page table; an access outside memory
/// mapped to this GPU returns a [`VmFault`] and touches nothing of the host. Implementations
/// must be usable from an engine thread while the host runs (threaded mode), so memory is
/// accessed with atomics or raw copies, never through references.
pub trait GpuBus: Send + Sync {
    /// KFD's `gpu_id` of this GPU (reported in exception data).
    fn gpu_id(&self) -> u32;

    /// Copies `buf.len()` bytes at `va` into `buf`. `access` is [`Access::Read`] or
    /// [`Access::Execute`] (which also needs an executable mapping).
    ///
    /// # Errors
    /// The first byte that is not accessible.
    fn read(&self, va: u64, buf: &mut [u8], access: Access) -> Result<(), VmFault>;

    /// Copies `data` to `va`.
    ///
    /// # Errors
    /// The first byte that is not writable (bytes before it may have been written, as on
    /// hardware).
    fn write(&self, va: u64, data: &[u8]) -> Result<(), VmFault>;

    /// Copies `data` to `va` past this GPU's L2 write-back: a memory-controller destination
    /// (RELEASE_MEM `DST_SEL` 0, WRITE_DATA `DST_SEL` 1 or 5), whose bytes the CPU sees at
    /// once. [`GpuBus::write`] goes through the L2 (shader stores, SDMA copies), where they
    /// stay until [`GpuBus::l2_writeback`]. Buses without an L2 model: [`GpuBus::write`].
    ///
    /// # Errors
    /// As [`GpuBus::write`].
    fn write_through(&self, va: u64, data: &[u8]) -> Result<(), VmFault> {
        self.write(va, data)
    }

    /// Copies `buf.len()` bytes at `va` into `buf` from memory, past this GPU's L2: what an
    /// engine that is no L2 client reads (SDMA on gfx9). Buses without an L2 model:
    /// [`GpuBus::read`].
    ///
    /// # Errors
    /// As [`GpuBus::read`].
    fn read_through(&self, va: u64, buf: &mut [u8]) -> Result<(), VmFault> {
        self.read(va, buf, Access::Read)
    }

    /// A data read through this GPU's L2 whose bytes the CPU wrote after the last HDP flush
    /// read as GPU engines see them (what the HDP held) instead of faulting. Buses without an
    /// HDP model: [`GpuBus::read`].
    ///
    /// # Errors
    /// As [`GpuBus::read`], never for a stale byte.
    fn read_visible(&self, va: u64, buf: &mut [u8]) -> Result<(), VmFault> {
        self.read(va, buf, Access::Read)
    }

    /// An L2 write-back (RELEASE_MEM / ACQUIRE_MEM `GL2_WB`, gfx9 `TC_WB_ACTION_ENA` /
    /// `TC_ACTION_ENA`, SDMA GCR_REQ `GL2_WB`): every byte this GPU's L2 holds dirty reaches
    /// memory, where the CPU reads it (buses without an L2 model: nothing to do).
    fn l2_writeback(&self) {}

    /// Acquire-load of the u32 at `va` (what WAIT_REG_MEM / POLL_REGMEM poll).
    ///
    /// # Errors
    /// As [`GpuBus::read`].
    fn load_u32(&self, va: u64) -> Result<u32, VmFault> {
        let mut b = [0u8; 4];
        self.read(va, &mut b, Access::Read)?;
        Ok(u32::from_le_bytes(b))
    }

    /// Acquire-load of the u64 at `va`.
    ///
    /// # Errors
    /// As [`GpuBus::read`].
    fn load_u64(&self, va: u64) -> Result<u64, VmFault> {
        let mut b = [0u8; 8];
        self.read(va, &mut b, Access::Read)?;
        Ok(u64::from_le_bytes(b))
    }

    /// Release-store of a u32 (RELEASE_MEM 32-bit, FENCE).
    ///
    /// # Errors
    /// As [`GpuBus::write`].
    fn store_u32(&self, va: u64, v: u32) -> Result<(), VmFault> {
        self.write(va, &v.to_le_bytes())
    }

    /// Release-store of a u64 (RELEASE_MEM 64-bit, timestamps, rptr write-back).
    ///
    /// # Errors
    /// As [`GpuBus::write`].
    fn store_u64(&self, va: u64, v: u64) -> Result<(), VmFault> {
        self.write(va, &v.to_le_bytes())
    }

    /// Acquire-load of the 64-bit doorbell at byte `offset` of the process's doorbell slice
    /// (the offset part of CREATE_QUEUE's `doorbell_offset`); `None` when there is none.
    fn doorbell(&self, offset: u64) -> Option<u64>;

    /// The CP/SDMA end-of-pipe interrupt with context id `context_id` (RELEASE_MEM
    /// `int_ctxid`, SDMA TRAP `int_context`): KFD's `kfd_signal_event_interrupt`.
    fn interrupt(&self, context_id: u32);

    /// A VM fault on this GPU: KFD sets every MEMORY event with `data`.
    fn memory_exception(&self, data: &HsaMemoryExceptionData);

    /// A queue hang/reset on this GPU: KFD sets every HW_EXCEPTION event with `data`.
    fn hw_exception(&self, data: &HsaHwExceptionData);

    /// Why a queue is about to fault (the queue, the packet's place and the reason), told
    /// before the exception is raised, so whoever sees the exception can learn why. Real
    /// hardware cannot say; the default drops it.
    fn fault_reason(&self, text: &str) {
        let _ = text;
    }

    /// What GPU VA `va` is, for a page fault's message: the buffer it runs past or falls
    /// before, a buffer there that was freed or is not mapped to this GPU. Real hardware
    /// cannot say; the default (and any bus that keeps no buffer table) says nothing.
    fn describe_va(&self, va: u64) -> Option<String> {
        let _ = va;
        None
    }

    /// Where the GPU mapping containing `va` ends (exclusive), for checks of a whole region
    /// (the scratch region at dispatch); `None` when `va` is not mapped or the bus keeps no
    /// page table (then callers probe with reads).
    fn mapped_end(&self, va: u64) -> Option<u64> {
        let _ = va;
        None
    }

    /// An HDP flush: CPU writes into this GPU's VRAM so far become visible to its engines
    /// (buses without an HDP model: nothing to do).
    fn hdp_flush(&self) {}

    /// This GPU's instruction and scalar caches, which persist across dispatches until an
    /// invalidate (buses that model none: `None`, every read goes to memory).
    fn caches(&self) -> Option<&super::cache::GpuCaches> {
        None
    }

    /// The GPU's shape for the modelled dispatch time ([`crate::isa::model`]); `None` (the
    /// default) gives dispatches no modelled duration: the clock moves per packet only.
    fn gpu_shape(&self) -> Option<crate::isa::model::GpuShape> {
        None
    }
}
