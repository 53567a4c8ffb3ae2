//! `SimKfd`: the simulated amdkfd. Files, mmap, sysfs topology and the ioctl dispatcher with
//! the kernel's checks and errnos (amdkfd's `kfd_chardev.c`, `kfd_queue.c`, `kfd_events.c`).

use crate::config::{GpuConfig, QueueBufferRules, SimConfig, SimMode, gpu_id_for};
use crate::mem::{self, SharedMem, UserPages};
use crate::state::{
    Backing, Bo, BoKind, Event, EventPage, FdKind, Gpu, Injection, PtEntry, Queue, QueueInfo,
    QueueKind, State, lowest_free, lowest_free_key,
};
use bytemuck::Pod;
use core::mem::size_of;
use core::time::Duration;
use hcq_core::kfd::topology::{CwsrSizes, NodeProperties, TOPOLOGY_NODES_DIR};
use hcq_core::kfd::*;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

/// VRAM and GTT BOs up to this size are populated at ALLOC ([`SharedMem::populate`]); larger
/// ones at their first bulk write ([`SharedMem::populate_on_first_bulk_write`]). Populating a
/// runtime's scratch area and kernarg arena at every device open cost ~150 ms of zero-filling
/// per open, most of it never touched.
const POPULATE_MAX: u64 = 8 << 20;

/// Page size of the simulated machine.
pub(crate) const PAGE: u64 = 4096;
/// First DRM fake mmap offset (`DRM_FILE_PAGE_OFFSET_START` in bytes).
const DRM_OFFSET_START: u64 = 0x1_0000_0000;
/// `TASK_SIZE_MAX` on x86-64: highest user address + 1.
const TASK_SIZE: u64 = 0x7FFF_FFFF_F000;
/// GPU VM size: 48-bit VA, 47 bits usable for user buffers.
const GPUVM_LIMIT: u64 = 1 << 47;
/// Queues per device before ENOSPC.
const MAX_QUEUES_PER_DEVICE: u32 = 127;
/// Queue ids per process.
const MAX_PROCESS_QUEUES: u32 = 1024;
/// Largest kmalloc the simulated kernel manages (4 MiB): bigger waiter/device arrays are ENOMEM.
const KMALLOC_MAX: u64 = 4 << 20;
/// Signal slots before an EVENTS mmap sets the page size (kernel-allocated page).
const DEFAULT_SIGNAL_SLOTS: u64 = 256;
/// First doorbell id of SDMA queues (compute ids are below).
const SDMA_DOORBELL_BASE: u32 = 0x100;
/// Files the sim hands out start here (so they never look like the process's real fds).
const FIRST_FD: i32 = 0x4000;

/// Counts of what the simulated kernel holds for the process: after a driver has dropped
/// everything, all are zero (except the files it still has open).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LiveObjects {
    /// Buffer objects (ALLOC without FREE), not counting the event page.
    pub bos: usize,
    /// The BO registered as the event page by CREATE_EVENT is still allocated. The kernel never
    /// lets the process free it (FREE is EPERM); it goes with the process, so it is not a leak.
    pub event_page_bo: bool,
    /// (buffer, GPU) mappings (MAP without UNMAP).
    pub gpu_mappings: usize,
    /// CPU mappings made through sim files (mmap without munmap).
    pub cpu_mappings: usize,
    /// Queues.
    pub queues: usize,
    /// Events.
    pub events: usize,
    /// Open sim files.
    pub open_files: usize,
}

impl LiveObjects {
    /// Whether no buffer, mapping, queue or event is live (open files are not counted).
    #[must_use]
    pub fn nothing_leaked(&self) -> bool {
        self.bos == 0
            && self.gpu_mappings == 0
            && self.cpu_mappings == 0
            && self.queues == 0
            && self.events == 0
    }
}

/// How long a forced ioctl failure lasts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Persistence {
    /// The next call with that number fails, later ones run normally.
    Once,
    /// Every call fails until [`SimKfd::clear_ioctl_failures`].
    Always,
}

/// Runs queues: implemented by the engine (sim/src/engine). See the crate docs.
pub trait Engine: Send + Sync {
    /// Advances every runnable queue as far as it can without waiting; returns whether anything
    /// changed (a packet executed, rptr moved, an interrupt was raised).
    fn run(&self, sim: &SimKfd) -> bool;

    /// Called after CREATE_QUEUE or DESTROY_QUEUE succeeded (no `SimKfd` lock held), so the
    /// engine knows the new queue set before the ioctl returns (fault injection by queue id
    /// right after CREATE_QUEUE finds the queue). The default does nothing.
    fn queues_changed(&self, sim: &SimKfd) {
        let _ = sim;
    }

    /// Called while the host waits (WAIT_EVENTS) and the queues made no progress: may log
    /// that the GPU cannot move by itself (`engine/deadlock.rs`); returns whether it changed
    /// any queue (the engines' never does: only the host could still write the value). The
    /// default does nothing.
    fn check_deadlock(&self) -> bool {
        false
    }

    /// Why GPU `gpu_id`'s waiting queues cannot go on by the GPU's own work (each blocked
    /// wait's diagnosis), empty when some engine can still write; given as the fault reasons
    /// when no fault is recorded, so a host's timeout names its cause. The default: none.
    fn stall_reasons(&self, gpu_id: u32) -> Vec<String> {
        let _ = gpu_id;
        Vec::new()
    }
}

/// The simulated amdkfd (and, through [`Engine`], GPU). Implements [`KfdSys`].
///
/// The host guard (the host's own reads and writes of GPU memory in the race detector and the
/// HDP model, sim/README.md "Host accesses") is off unless asked for: with
/// [`SimConfig::host_guard`] or `HCQ_SIM_HOST_GUARD=1` (`=0` forces it off) the simulator
/// installs a process-wide SIGSEGV handler and changes the protection of the process's
/// mappings of its buffers. What it could not watch (full tables) is counted by
/// [`SimKfd::host_guard_dropped`].
pub struct SimKfd {
    /// Host accesses in the race detector (`mem/hostguard.rs`); first, so it unregisters
    /// before the memory it watches goes.
    pub(crate) guard: mem::HostGuard,
    pub(crate) cfg: SimConfig,
    pub(crate) state: Mutex<State>,
    /// Notified on every event set, destroy and interrupt (threaded waits).
    pub(crate) cond: Condvar,
    pub(crate) engine: Mutex<Option<Arc<dyn Engine>>>,
    pub(crate) epoch: Instant,
    /// The GPU clock (engines attached to this simulator share it).
    pub(crate) clock: Arc<crate::clock::Clock>,
    /// The regions `mmap` handed out (`MAP_FIXED` and `munmap` are checked against them).
    pub(crate) maps: mem::ProcessMaps,
    /// What the GPUs did that the hardware tolerates (`findings.rs`).
    pub(crate) findings: std::sync::Arc<crate::findings::Findings>,
    /// This simulator among the process's (the engines' translation caches are per thread
    /// and must not take one simulator's mapping for another's).
    pub(crate) uid: u64,
    /// Bumped (under the state lock, after the change) whenever a GPU page table or a BO's
    /// backing changes: a cached translation taken under an older value is not used (the
    /// TLB shootdown amdgpu does on unmap, `amdgpu_amdkfd_flush_tlb`).
    pub(crate) vm_epoch: core::sync::atomic::AtomicU64,
    /// Memory some GPU's L2 may hold dirty: each write that dirties clean memory adds it, each
    /// write-back keeps what is still dirty (a superset, with duplicates at worst), so a
    /// write-back visits these rather than every BO.
    pub(crate) l2_dirty_mems: Mutex<Vec<std::sync::Weak<mem::SharedMem>>>,
}

impl core::fmt::Debug for SimKfd {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("SimKfd")
            .field("cfg", &self.cfg)
            .field("live", &self.live_objects())
            .finish_non_exhaustive()
    }
}

/// Why a simulator could not be built.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SimError {
    /// A GPU's properties cannot be sized (index, reason).
    BadGpu(usize, hcq_core::kfd::topology::SizingError),
    /// Allocating the doorbell or MMIO page failed.
    Memory(Errno),
    /// More than 64 GPUs requested.
    TooManyGpus(usize),
    /// A `HCQ_SIM_*` environment variable holds a value the simulator does not accept.
    Env(crate::config::EnvError),
    /// A GPU has no partition of [`SimConfig::xcc`] XCCs (index, reason).
    Xcc(usize, crate::config::XccError),
}

impl core::fmt::Display for SimError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::BadGpu(i, e) => write!(f, "simulated GPU {i}: {e}"),
            Self::Memory(e) => write!(f, "simulator memory: {e}"),
            Self::TooManyGpus(n) => write!(f, "{n} simulated GPUs requested; at most 64"),
            Self::Env(e) => write!(f, "{e}"),
            Self::Xcc(i, e) => write!(f, "simulated GPU {i}: {e}"),
        }
    }
}

impl core::error::Error for SimError {}

fn get<T: Pod>(kbuf: &[u8]) -> T {
    kbuf.get(..size_of::<T>())
        .map_or_else(T::zeroed, bytemuck::pod_read_unaligned)
}

fn put<T: Pod>(kbuf: &mut [u8], v: &T) {
    if let Some(d) = kbuf.get_mut(..size_of::<T>()) {
        d.copy_from_slice(bytemuck::bytes_of(v));
    }
}

/// `access_ok(addr, n)`.
fn access_ok(addr: u64, n: u64) -> bool {
    addr.checked_add(n).is_some_and(|e| e <= TASK_SIZE)
}

fn page_align(v: u64) -> Option<u64> {
    v.checked_add(PAGE - 1).map(|s| s & !(PAGE - 1))
}

mod events;
mod files;
pub use files::FileStat;
mod ioctl_table;
mod ip_discovery;
mod memory;
mod more;
pub(crate) use more::is_active;
mod queues;

impl SimKfd {
    /// A simulator for `cfg`.
    ///
    /// # Errors
    /// A GPU whose properties cannot be sized, no memory for the doorbell pages, or a
    /// `HCQ_SIM_*` variable set to a value it does not accept ([`crate::check_env`]).
    pub fn new(mut cfg: SimConfig) -> Result<Self, SimError> {
        crate::config::check_env().map_err(SimError::Env)?;
        // The GPUs as they run: partitioned into `cfg.xcc` XCCs.
        cfg.gpus = (cfg.gpus.iter().enumerate())
            .map(|(i, g)| cfg.gpu_as_run(g).map_err(|e| SimError::Xcc(i, e)))
            .collect::<Result<_, _>>()?;
        let guard_on = crate::config::env_host_guard()
            .map_err(SimError::Env)?
            .unwrap_or(cfg.host_guard);
        let mode = cfg.mode;
        let any_client = matches!(cfg.client, crate::config::SimClient::Any(_));
        if cfg.gpus.len() > 64 {
            return Err(SimError::TooManyGpus(cfg.gpus.len()));
        }
        let mut gpus = Vec::with_capacity(cfg.gpus.len());
        let mut ids = Vec::new();
        for (i, g) in cfg.gpus.iter().enumerate() {
            // CAST: at most 64 GPUs.
            let index = i as u32;
            let gpu_id = gpu_id_for(index, g, &ids);
            ids.push(gpu_id);
            let props = g.properties(index);
            let sizes = CwsrSizes::for_node(&props).map_err(|e| SimError::BadGpu(i, e))?;
            let doorbells = SharedMem::new("kfd-doorbells", KFD_DOORBELL_SLICE_SIZE)
                .map_err(SimError::Memory)?;
            let mmio = SharedMem::new("kfd-mmio", PAGE).map_err(SimError::Memory)?;
            gpus.push(Gpu {
                gpu_id,
                cfg: g.clone(),
                props,
                sizes,
                vm_file: None,
                vram_used: 0,
                vram_limit: g.vram_size,
                idr: BTreeSet::new(),
                page_table: BTreeMap::new(),
                doorbells: Arc::new(doorbells),
                mmio: Arc::new(mmio),
                doorbell_ids: BTreeSet::new(),
                sdma_slots: BTreeSet::new(),
                queue_count: 0,
                evicted: false,
                drm_offset_next: DRM_OFFSET_START,
                trap_handler: None,
                scratch_backing_va: 0,
            });
        }
        let state = State {
            gpus,
            signal_event_count: 1, // event id 0 is reserved at process creation
            next_fd: FIRST_FD,
            ..State::default()
        };
        Ok(Self {
            guard: mem::HostGuard::new(guard_on),
            cfg,
            state: Mutex::new(state),
            cond: Condvar::new(),
            engine: Mutex::new(None),
            epoch: Instant::now(),
            clock: Arc::new(crate::clock::Clock::new(mode)),
            maps: mem::ProcessMaps::new(any_client),
            findings: std::sync::Arc::default(),
            uid: {
                static NEXT: core::sync::atomic::AtomicU64 = core::sync::atomic::AtomicU64::new(1);
                NEXT.fetch_add(1, core::sync::atomic::Ordering::Relaxed)
            },
            vm_epoch: core::sync::atomic::AtomicU64::new(0),
            l2_dirty_mems: Mutex::new(Vec::new()),
        })
    }

    /// The default machine: one gfx1100 (7900 XTX), deterministic.
    ///
    /// # Errors
    /// As [`SimKfd::new`].
    pub fn gfx1100() -> Result<Self, SimError> {
        Self::new(SimConfig::default())
    }

    /// The configuration.
    #[must_use]
    pub fn config(&self) -> &SimConfig {
        &self.cfg
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A page table or a BO's backing changed: translations cached before are void. Called
    /// with the state lock held, after the change.
    pub(crate) fn vm_changed(&self) {
        self.vm_epoch
            .fetch_add(1, core::sync::atomic::Ordering::Release);
    }

    /// What the simulated kernel still holds for the process.
    #[must_use]
    pub fn live_objects(&self) -> LiveObjects {
        let st = self.lock();
        let event_page_bo = st
            .event_page
            .as_ref()
            .and_then(|p| p.handle)
            .is_some_and(|h| st.bos.contains_key(&h));
        LiveObjects {
            bos: st.bos.len() - usize::from(event_page_bo),
            event_page_bo,
            gpu_mappings: st.gpu_mapping_count(),
            cpu_mappings: st.cpu_maps.len(),
            queues: st.queues.len(),
            events: st.events.len(),
            open_files: st.fds.len(),
        }
    }

    /// gpu_ids of the simulated GPUs, in topology order.
    #[must_use]
    pub fn gpu_ids(&self) -> Vec<u32> {
        self.lock().gpus.iter().map(|g| g.gpu_id).collect()
    }

    /// The configuration GPU `gpu_id` was built from.
    #[must_use]
    pub fn gpu_config(&self, gpu_id: u32) -> Option<&GpuConfig> {
        let index = self.lock().gpu_by_id(gpu_id)?;
        self.cfg.gpus.get(index)
    }

    /// The topology properties of a GPU.
    #[must_use]
    pub fn properties(&self, gpu_id: u32) -> Option<NodeProperties> {
        let st = self.lock();
        st.gpu_by_id(gpu_id)
            .and_then(|i| st.gpus.get(i))
            .map(|g| g.props)
    }

    /// The kernel's queue buffer sizes for a GPU.
    #[must_use]
    pub fn queue_sizes(&self, gpu_id: u32) -> Option<CwsrSizes> {
        let st = self.lock();
        st.gpu_by_id(gpu_id)
            .and_then(|i| st.gpus.get(i))
            .map(|g| g.sizes)
    }

    // ---- fault injection --------------------------------------------------------------------

    /// Makes ioctl number `nr` fail with `errno` (before any other check).
    pub fn fail_ioctl(&self, nr: u8, errno: Errno, persistence: Persistence) {
        self.lock().injections.insert(
            nr,
            Injection {
                errno,
                once: persistence == Persistence::Once,
            },
        );
    }

    /// Removes every forced ioctl failure.
    pub fn clear_ioctl_failures(&self) {
        self.lock().injections.clear();
    }

    /// Sets how much VRAM a GPU has for allocations (ENOMEM past it); returns false for an
    /// unknown gpu_id.
    pub fn set_vram_limit(&self, gpu_id: u32, bytes: u64) -> bool {
        let mut st = self.lock();
        match st.gpu_by_id(gpu_id).and_then(|i| st.gpus.get_mut(i)) {
            Some(g) => {
                g.vram_limit = bytes;
                true
            }
            None => false,
        }
    }

    /// Drops the next `n` completion interrupts (the CP "forgets" to interrupt).
    pub fn drop_interrupts(&self, n: u32) {
        self.lock().drop_interrupts = n;
    }

    /// Delivers each later interrupt only after `steps` more engine rounds (0: at once).
    pub fn delay_interrupts(&self, steps: u32) {
        self.lock().delay_interrupts = steps;
    }
}

impl KfdSys for SimKfd {
    fn open(&self, path: &str) -> Result<Fd, Errno> {
        if path == "/dev/kfd" {
            return Ok(self.new_fd(FdKind::Kfd));
        }
        if let Some(minor) = path.strip_prefix("/dev/dri/renderD") {
            let minor: u32 = minor.parse().map_err(|_| Errno::ENOENT)?;
            let gpu = {
                let st = self.lock();
                st.gpus
                    .iter()
                    .position(|g| g.props.drm_render_minor == minor)
                    .ok_or(Errno::ENOENT)?
            };
            return Ok(self.new_render_fd(gpu));
        }
        Err(Errno::ENOENT)
    }

    fn close(&self, fd: Fd) -> Result<(), Errno> {
        self.lock()
            .fds
            .remove(&fd.0)
            .map(|_| ())
            .ok_or(Errno::EBADF)
    }

    fn ioctl(&self, fd: Fd, request: Request<'_>) -> Result<(), Errno> {
        let kind = self.lock().fds.get(&fd.0).copied().ok_or(Errno::EBADF)?;
        match kind {
            FdKind::Kfd => self.kfd_ioctl(request),
            // DRM ioctls (AMDGPU_INFO, ...) are not simulated.
            FdKind::Render { .. } => Err(Errno::ENOTTY),
        }
    }

    fn mmap(
        &self,
        fixed_addr: Option<u64>,
        len: u64,
        prot: Prot,
        kind: MapKind,
    ) -> Result<u64, Errno> {
        let Some(at) = fixed_addr else {
            return match kind {
                MapKind::Reserve => self.maps.reserve(None, len),
                MapKind::Anonymous => self.maps.anon_shared(None, len, prot),
                MapKind::File { fd, offset } => self.mmap_file(None, len, prot, fd, offset),
            };
        };
        // MAP_FIXED replaces the pages mapped there: the kernel's MMU notifier invalidates the
        // USERPTR BOs over the old pages (as munmap does), before they go, so no GPU copy in
        // flight lands in the new ones.
        if at % PAGE != 0 || !self.maps.may_map_fixed(at, len) {
            return Err(Errno::EINVAL);
        }
        {
            let mut st = self.lock();
            invalidate_userptr(&mut st, at, len);
            self.vm_changed();
        }
        self.guard.remove_range(at, len);
        match kind {
            MapKind::File { fd, offset } => self.mmap_file(Some(at), len, prot, fd, offset),
            MapKind::Reserve => self.maps.reserve(Some(at), len),
            MapKind::Anonymous => self.maps.anon_shared(Some(at), len, prot),
        }
    }

    fn munmap(&self, addr: u64, len: u64) -> Result<(), Errno> {
        let end = addr.saturating_add(len);
        // The state lock first (the order ALLOC_MEMORY_OF_GPU takes them in), so no GPU access
        // translates into the range between the unmap and the invalidation below.
        // The notifier runs before the pages go: it waits for the GPU copies in flight into
        // them, so none lands in whatever the process maps at the address next.
        let mut st = self.lock();
        if !self.maps.may_unmap(addr, len) {
            return Err(Errno::EINVAL);
        }
        invalidate_userptr(&mut st, addr, len);
        self.vm_changed();
        self.guard.remove_range(addr, len);
        self.maps.unmap(addr, len)?;
        let gone: Vec<u64> = st.cpu_maps.range(addr..end).map(|(&a, _)| a).collect();
        for a in gone {
            st.cpu_maps.remove(&a);
        }
        Ok(())
    }

    fn fault_reasons(&self, gpu_id: u32, each: &mut dyn FnMut(&str)) {
        let mut reasons = self.fault_reasons_of(gpu_id);
        if reasons.is_empty() {
            // No fault: why the GPU cannot move by itself, if so (engine/deadlock.rs).
            reasons = self.stall_reasons_of(gpu_id);
        }
        for r in reasons {
            each(&r);
        }
    }

    fn read_file(&self, path: &str, buf: &mut [u8]) -> Result<usize, Errno> {
        if !path.starts_with("/sys/") {
            return Err(Errno::ENOENT);
        }
        let text = if path.starts_with("/sys/class/drm/") {
            self.drm_file(path)?
        } else {
            self.topology_file(path)?
        };
        let out = buf.get_mut(..text.len()).ok_or(Errno::ENOSPC)?;
        out.copy_from_slice(text.as_bytes());
        Ok(text.len())
    }
}

/// The MMU notifier: USERPTR BOs over any part of `[addr, addr + len)` are invalidated (the
/// caller holds the state lock, so no new GPU access translates into the range; each pin
/// waits for the copies in flight), and stay so even when another mapping later reuses the
/// address. Called before the pages are unmapped or replaced.
fn invalidate_userptr(st: &mut State, addr: u64, len: u64) {
    for bo in st.bos.values_mut() {
        if let Backing::User(pages) = &bo.backing
            && pages.overlaps(addr, len)
        {
            pages.invalidate();
            bo.backing = Backing::UserInvalidated;
        }
    }
}

/// The topology directory of node `n` (for callers building paths).
#[must_use]
pub fn node_dir(n: usize) -> String {
    format!("{TOPOLOGY_NODES_DIR}/{n}")
}

impl SimKfd {
    /// What the simulated GPUs did that the hardware tolerates ([`Finding`](crate::findings::Finding)), in the order the
    /// dispatches completed (at most [`MAX_FINDINGS`](crate::findings::MAX_FINDINGS)).
    #[must_use]
    pub fn findings(&self) -> Vec<crate::findings::Finding> {
        self.findings.list()
    }

    /// The shared list the engines record into.
    pub(crate) fn findings_handle(&self) -> std::sync::Arc<crate::findings::Findings> {
        std::sync::Arc::clone(&self.findings)
    }
}
