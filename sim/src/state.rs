//! The simulated kernel's bookkeeping: GPUs, buffer objects, GPU page tables, queues, events,
//! open files, CPU mappings and fault injections. Everything here lives behind one mutex in
//! [`crate::SimKfd`].

use crate::config::GpuConfig;
use crate::mem::{SharedMem, UserPages};
use core::fmt;
use hcq_core::kfd::topology::{CwsrSizes, NodeProperties};
use hcq_core::kfd::{Errno, HsaHwExceptionData, HsaMemoryExceptionData};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// What an open sim file is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FdKind {
    /// `/dev/kfd`.
    Kfd,
    /// `/dev/dri/renderD<minor>` of GPU `gpu` (index); `file` names the open file (the fd
    /// `open` returned; its `dup`s share it, as descriptors of one open file do).
    Render { gpu: usize, file: i32 },
}

/// One GPU VM page-table entry: `[start, end)` maps buffer `handle`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PtEntry {
    pub end: u64,
    pub handle: u64,
}

/// One simulated GPU.
#[derive(Debug)]
pub(crate) struct Gpu {
    pub gpu_id: u32,
    pub cfg: GpuConfig,
    pub props: NodeProperties,
    pub sizes: CwsrSizes,
    /// Render fd whose DRM VM became this process's compute VM (ACQUIRE_VM).
    pub vm_file: Option<i32>,
    pub vram_used: u64,
    pub vram_limit: u64,
    /// Used buffer ids (the per-device IDR).
    pub idr: BTreeSet<u32>,
    /// GPU VM: start VA -> entry.
    pub page_table: BTreeMap<u64, PtEntry>,
    /// The process doorbell slice (8 KiB).
    pub doorbells: Arc<SharedMem>,
    /// The HDP-flush MMIO remap page (4 KiB).
    pub mmio: Arc<SharedMem>,
    /// Doorbell ids in use.
    pub doorbell_ids: BTreeSet<u32>,
    /// SDMA queue slots in use (bit index: engine = i % engines, queue = i / engines).
    pub sdma_slots: BTreeSet<u32>,
    pub queue_count: u32,
    /// Queues were evicted by a VM fault or reset: nothing on this GPU runs any more.
    pub evicted: bool,
    /// Next DRM fake mmap offset handed out for a BO on this GPU.
    pub drm_offset_next: u64,
    /// (TBA, TMA) of SET_TRAP_HANDLER (recorded; the simulator never runs a trap handler).
    pub trap_handler: Option<(u64, u64)>,
    /// SET_SCRATCH_BACKING_VA's `sh_hidden_private_base` (recorded only).
    pub scratch_backing_va: u64,
}

/// Memory type of a buffer object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BoKind {
    Vram,
    Gtt,
    Userptr,
    Doorbell,
    MmioRemap,
}

/// Where a buffer's bytes are.
#[derive(Clone, Debug)]
pub(crate) enum Backing {
    /// Sim-owned shared memory (VRAM/GTT memfd, a GPU's doorbell slice or MMIO page).
    Shared(Arc<SharedMem>),
    /// The process's own memory, pinned (USERPTR).
    User(Arc<UserPages>),
    /// A USERPTR BO whose host range the process unmapped (through the port): the kernel's MMU
    /// notifier invalidated it, so every later GPU access faults, whatever is mapped at that
    /// address now.
    UserInvalidated,
}

/// A buffer object.
#[derive(Debug)]
pub(crate) struct Bo {
    pub gpu: usize,
    pub va: u64,
    pub size: u64,
    pub flags: u32,
    pub kind: BoKind,
    pub backing: Backing,
    pub drm_offset: u64,
    /// GPUs (index) it is mapped on -> live queues using it there.
    pub mapped: BTreeMap<usize, u32>,
}

/// Which command processor a queue feeds: one type for KFD's queues and the engines that run
/// them (`engine` re-exports it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum QueueKind {
    /// PM4 compute queue (MEC; KFD_IOC_QUEUE_TYPE_COMPUTE): pointers in dwords, packets may
    /// cross the ring end.
    Compute,
    /// SDMA copy queue: pointers in bytes, a packet crossing the ring end is a fault.
    Sdma,
    /// AQL compute queue (MEC; KFD_IOC_QUEUE_TYPE_COMPUTE_AQL): a ring of 64-byte HSA packets,
    /// pointers in packets (dispatch ids), the doorbell holding the last packet's index
    /// (`engine/aql.rs`).
    Aql,
}

impl fmt::Display for QueueKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            QueueKind::Compute => "PM4",
            QueueKind::Sdma => "SDMA",
            QueueKind::Aql => "AQL",
        })
    }
}

/// Everything an engine needs to run a queue, as KFD created it (a snapshot; see
/// [`crate::SimKfd::queues`]). The engine's running state is [`crate::engine::QueueStatus`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueInfo {
    /// KFD queue id (0..1023).
    pub queue_id: u32,
    /// The GPU it runs on.
    pub gpu_id: u32,
    /// PM4 or SDMA.
    pub kind: QueueKind,
    /// GPU VA of the ring.
    pub ring_base: u64,
    /// Ring bytes (power of two, >= 1024).
    pub ring_size: u32,
    /// GPU VA of the 64-bit read pointer the engine publishes.
    pub rptr_addr: u64,
    /// GPU VA of the 64-bit write pointer the driver publishes.
    pub wptr_addr: u64,
    /// Doorbell index in the GPU's doorbell slice (byte offset = 8 x id).
    pub doorbell_id: u32,
    /// The `doorbell_offset` CREATE_QUEUE returned.
    pub doorbell_offset: u64,
    /// EOP buffer VA (compute) or 0.
    pub eop_addr: u64,
    /// EOP buffer bytes.
    pub eop_size: u64,
    /// CWSR area VA (compute) or 0.
    pub ctx_save_restore_addr: u64,
    /// CWSR size as passed.
    pub ctx_save_restore_size: u32,
    /// 0..=15.
    pub priority: u32,
    /// 0..=100; 0 = created but not scheduled.
    pub percentage: u32,
    /// `pm4_target_xcc`: bits 8..=15 of `queue_percentage` (`kfd_chardev.c`
    /// `set_queue_properties_from_user`; "drm/amdkfd: Add PM4 target XCC": "unlike AQL queues,
    /// the PM4 queue will be only processed in one XCC in the partitioning"). The XCC that runs
    /// a PM4 queue on a multi-XCC node; AQL queues run on every XCC.
    pub pm4_target_xcc: u32,
    /// SDMA engine and queue on it (SDMA queues).
    pub sdma_engine: Option<(u32, u32)>,
    /// Scheduled: percentage > 0 and the GPU's queues are not evicted.
    pub active: bool,
}

/// A live queue and the buffer references it holds.
#[derive(Debug)]
pub(crate) struct Queue {
    pub info: QueueInfo,
    pub gpu: usize,
    /// (gpu index, handle) per acquired buffer (rptr, wptr, ring, EOP, CWSR).
    pub refs: Vec<(usize, u64)>,
    pub sdma_slot: Option<u32>,
    /// `ctl_stack_size` as CREATE_QUEUE passed it (the MQD's control stack size).
    pub ctl_stack_size: u32,
    /// The mask SET_CU_MASK copied in (`min(num_cu_mask, 1024) / 32` words), if any.
    pub cu_mask: Option<Vec<u32>>,
}

/// An event.
#[derive(Debug)]
pub(crate) struct Event {
    pub ty: u32,
    pub auto_reset: bool,
    pub signaled: bool,
    /// Incremented by every set (wraps to 2); waiters are woken by its change.
    pub age: u64,
    /// Has an event-page slot (signal and debug events; slot index = id).
    pub has_slot: bool,
    /// Waiters currently registered (not activated at wait start).
    pub waiters: u32,
    pub mem: HsaMemoryExceptionData,
    pub hw: HsaHwExceptionData,
}

/// The signal/event page.
#[derive(Debug)]
pub(crate) struct EventPage {
    /// The BO handle it came from (FREE of it is EPERM), or None for the kernel's own page.
    pub handle: Option<u64>,
    pub mem: Arc<SharedMem>,
    /// Bytes of slots in use (`signal_mapped_size`).
    pub mapped_size: u64,
}

/// A forced ioctl failure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Injection {
    pub errno: Errno,
    pub once: bool,
}

/// The whole simulated kernel state.
#[derive(Debug, Default)]
pub(crate) struct State {
    pub gpus: Vec<Gpu>,
    pub bos: BTreeMap<u64, Bo>,
    pub gtt_used: u64,
    pub queues: BTreeMap<u32, Queue>,
    pub events: BTreeMap<u32, Event>,
    pub event_page: Option<EventPage>,
    /// Signal events incl. the reserved id 0.
    pub signal_event_count: u32,
    pub runtime_enabled: bool,
    pub xnack: bool,
    pub fds: BTreeMap<i32, FdKind>,
    pub next_fd: i32,
    /// CPU mappings made through sim files: address -> length.
    pub cpu_maps: BTreeMap<u64, u64>,
    pub injections: BTreeMap<u8, Injection>,
    pub drop_interrupts: u32,
    pub delay_interrupts: u32,
    /// Delayed interrupts: (deliver at step, gpu_id, context id).
    pub pending_interrupts: Vec<(u64, u32, u32)>,
    pub steps: u64,
    /// Why queues faulted, oldest first (gpu_id, text): at most [`FAULT_REASONS_KEPT`].
    pub fault_reasons: Vec<(u32, String)>,
    /// Buffers taken off a GPU's page table (unmapped, then maybe freed), oldest first: what a
    /// later page fault at their addresses names. At most [`RETIRED_KEPT`].
    pub retired: std::collections::VecDeque<Retired>,
}

/// A buffer's mapping that left a GPU's page table ([`State::retired`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Retired {
    /// The GPU (index) it was mapped on.
    pub gpu: usize,
    /// Its GPU VA range.
    pub va: u64,
    /// End of the range (exclusive).
    pub end: u64,
    /// Its handle.
    pub handle: u64,
    /// FREE_MEMORY_OF_GPU released it after the unmap.
    pub freed: bool,
}

/// How many unmapped buffers [`State::retired`] remembers.
pub(crate) const RETIRED_KEPT: usize = 256;

/// How many fault reasons [`State::fault_reasons`] keeps.
pub(crate) const FAULT_REASONS_KEPT: usize = 8;

impl State {
    /// `kfd_process_device_data_by_id`: gpu_id 0 never matches.
    pub(crate) fn gpu_by_id(&self, gpu_id: u32) -> Option<usize> {
        if gpu_id == 0 {
            return None;
        }
        self.gpus.iter().position(|g| g.gpu_id == gpu_id)
    }

    /// The page-table entry on GPU `gpu` containing `va`: (start, entry).
    pub(crate) fn lookup(&self, gpu: usize, va: u64) -> Option<(u64, PtEntry)> {
        let g = self.gpus.get(gpu)?;
        let (&start, &e) = g.page_table.range(..=va).next_back()?;
        (va < e.end).then_some((start, e))
    }

    /// Total GPU (BO, device) mappings.
    pub(crate) fn gpu_mapping_count(&self) -> usize {
        self.bos.values().map(|b| b.mapped.len()).sum()
    }
}

/// Lowest integer in `[lo, hi)` not in `used`.
pub(crate) fn lowest_free(used: &BTreeSet<u32>, lo: u32, hi: u32) -> Option<u32> {
    let mut want = lo;
    for &u in used.range(lo..hi) {
        if u != want {
            break;
        }
        want = want.checked_add(1)?;
    }
    (want < hi).then_some(want)
}

/// Lowest key in `[lo, hi)` of a map not present.
pub(crate) fn lowest_free_key<V>(used: &BTreeMap<u32, V>, lo: u32, hi: u32) -> Option<u32> {
    let mut want = lo;
    for &u in used.range(lo..hi).map(|(k, _)| k) {
        if u != want {
            break;
        }
        want = want.checked_add(1)?;
    }
    (want < hi).then_some(want)
}
