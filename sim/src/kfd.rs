//! `SimKfd`: the simulated amdkfd. Files, mmap, sysfs topology and the ioctl dispatcher with
//! the kernel's checks and errnos (amdkfd's `kfd_chardev.c`, `kfd_queue.c`, `kfd_events.c`).

use crate::config::{QueueBufferRules, SimConfig, SimMode, gpu_id_for};
use crate::mem::{self, SharedMem};
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

/// VRAM and GTT BOs up to this size are populated at ALLOC ([`SharedMem::populate`]).
const POPULATE_MAX: u64 = 256 << 20;

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
}

/// The simulated amdkfd (and, through [`Engine`], GPU). Implements [`KfdSys`].
pub struct SimKfd {
    pub(crate) cfg: SimConfig,
    pub(crate) state: Mutex<State>,
    /// Notified on every event set, destroy and interrupt (threaded waits).
    pub(crate) cond: Condvar,
    pub(crate) engine: Mutex<Option<Arc<dyn Engine>>>,
    pub(crate) epoch: Instant,
    pub(crate) virtual_clock: core::sync::atomic::AtomicU64,
    /// The regions `mmap` handed out (`MAP_FIXED` and `munmap` are checked against them).
    pub(crate) maps: mem::ProcessMaps,
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
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SimError {
    /// A GPU's properties cannot be sized (index, reason).
    BadGpu(usize, hcq_core::kfd::topology::SizingError),
    /// Allocating the doorbell or MMIO page failed.
    Memory(Errno),
    /// More than 64 GPUs requested.
    TooManyGpus(usize),
}

impl core::fmt::Display for SimError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::BadGpu(i, e) => write!(f, "simulated GPU {i}: {e}"),
            Self::Memory(e) => write!(f, "simulator memory: {e}"),
            Self::TooManyGpus(n) => write!(f, "{n} simulated GPUs requested; at most 64"),
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

/// The ioctls the simulated kernel's table has, by number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    GetVersion,
    CreateQueue,
    DestroyQueue,
    SetMemoryPolicy,
    GetClockCounters,
    CreateEvent,
    DestroyEvent,
    SetEvent,
    ResetEvent,
    WaitEvents,
    Deprecated,
    GetProcessAperturesNew,
    AcquireVm,
    Alloc,
    Free,
    Map,
    Unmap,
    SetXnackMode,
    AvailableMemory,
    RuntimeEnable,
    /// In the kernel's table but not simulated.
    NotSimulated,
}

/// The kernel's table entry: (request as the kernel defines it, operation).
fn table(nr: u8) -> Option<(u32, Op)> {
    Some(match nr {
        0x01 => (AMDKFD_IOC_GET_VERSION, Op::GetVersion),
        0x02 => (AMDKFD_IOC_CREATE_QUEUE, Op::CreateQueue),
        0x03 => (AMDKFD_IOC_DESTROY_QUEUE, Op::DestroyQueue),
        0x04 => (AMDKFD_IOC_SET_MEMORY_POLICY, Op::SetMemoryPolicy),
        0x05 => (AMDKFD_IOC_GET_CLOCK_COUNTERS, Op::GetClockCounters),
        0x06 => (AMDKFD_IOC_GET_PROCESS_APERTURES, Op::NotSimulated),
        0x07 => (AMDKFD_IOC_UPDATE_QUEUE, Op::NotSimulated),
        0x08 => (AMDKFD_IOC_CREATE_EVENT, Op::CreateEvent),
        0x09 => (AMDKFD_IOC_DESTROY_EVENT, Op::DestroyEvent),
        0x0A => (AMDKFD_IOC_SET_EVENT, Op::SetEvent),
        0x0B => (AMDKFD_IOC_RESET_EVENT, Op::ResetEvent),
        0x0C => (AMDKFD_IOC_WAIT_EVENTS, Op::WaitEvents),
        0x0D => (AMDKFD_IOC_DBG_REGISTER_DEPRECATED, Op::Deprecated),
        0x0E => (AMDKFD_IOC_DBG_UNREGISTER_DEPRECATED, Op::Deprecated),
        0x0F => (AMDKFD_IOC_DBG_ADDRESS_WATCH_DEPRECATED, Op::Deprecated),
        0x10 => (AMDKFD_IOC_DBG_WAVE_CONTROL_DEPRECATED, Op::Deprecated),
        0x11 => (AMDKFD_IOC_SET_SCRATCH_BACKING_VA, Op::NotSimulated),
        0x12 => (AMDKFD_IOC_GET_TILE_CONFIG, Op::NotSimulated),
        0x13 => (AMDKFD_IOC_SET_TRAP_HANDLER, Op::NotSimulated),
        0x14 => (
            AMDKFD_IOC_GET_PROCESS_APERTURES_NEW,
            Op::GetProcessAperturesNew,
        ),
        0x15 => (AMDKFD_IOC_ACQUIRE_VM, Op::AcquireVm),
        0x16 => (AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, Op::Alloc),
        0x17 => (AMDKFD_IOC_FREE_MEMORY_OF_GPU, Op::Free),
        0x18 => (AMDKFD_IOC_MAP_MEMORY_TO_GPU, Op::Map),
        0x19 => (AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU, Op::Unmap),
        0x1A => (AMDKFD_IOC_SET_CU_MASK, Op::NotSimulated),
        0x1B => (AMDKFD_IOC_GET_QUEUE_WAVE_STATE, Op::NotSimulated),
        0x1C => (AMDKFD_IOC_GET_DMABUF_INFO, Op::NotSimulated),
        0x1D => (AMDKFD_IOC_IMPORT_DMABUF, Op::NotSimulated),
        0x1E => (AMDKFD_IOC_ALLOC_QUEUE_GWS, Op::NotSimulated),
        0x1F => (AMDKFD_IOC_SMI_EVENTS, Op::NotSimulated),
        0x20 => (AMDKFD_IOC_SVM, Op::NotSimulated),
        0x21 => (AMDKFD_IOC_SET_XNACK_MODE, Op::SetXnackMode),
        0x22 => (AMDKFD_IOC_CRIU_OP, Op::NotSimulated),
        0x23 => (AMDKFD_IOC_AVAILABLE_MEMORY, Op::AvailableMemory),
        0x24 => (AMDKFD_IOC_EXPORT_DMABUF, Op::NotSimulated),
        0x25 => (AMDKFD_IOC_RUNTIME_ENABLE, Op::RuntimeEnable),
        0x26 => (AMDKFD_IOC_DBG_TRAP, Op::NotSimulated),
        0x27 => (AMDKFD_IOC_CREATE_PROCESS, Op::NotSimulated),
        _ => return None,
    })
}

impl SimKfd {
    /// A simulator for `cfg`.
    ///
    /// # Errors
    /// A GPU whose properties cannot be sized, or no memory for the doorbell pages.
    pub fn new(cfg: SimConfig) -> Result<Self, SimError> {
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
            });
        }
        let state = State {
            gpus,
            signal_event_count: 1, // event id 0 is reserved at process creation
            next_fd: FIRST_FD,
            ..State::default()
        };
        Ok(Self {
            cfg,
            state: Mutex::new(state),
            cond: Condvar::new(),
            engine: Mutex::new(None),
            epoch: Instant::now(),
            virtual_clock: core::sync::atomic::AtomicU64::new(0),
            maps: mem::ProcessMaps::default(),
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

    // ---- KfdSys pieces ----------------------------------------------------------------------

    fn new_fd(&self, kind: FdKind) -> Fd {
        let mut st = self.lock();
        let fd = st.next_fd;
        st.next_fd = st.next_fd.saturating_add(1);
        st.fds.insert(fd, kind);
        Fd(fd)
    }

    fn topology_file(&self, path: &str) -> Result<String, Errno> {
        let rest = path
            .strip_prefix("/sys/devices/virtual/kfd/kfd/topology/")
            .or_else(|| path.strip_prefix("/sys/class/kfd/kfd/topology/"))
            .ok_or(Errno::ENOENT)?;
        match rest {
            "generation_id" => return Ok("1\n".into()),
            "system_properties" => {
                return Ok("platform_oem 0\nplatform_id 0\nplatform_rev 0\n".into());
            }
            _ => {}
        }
        let rest = rest.strip_prefix("nodes/").ok_or(Errno::ENOENT)?;
        let (node, file) = rest.split_once('/').ok_or(Errno::ENOENT)?;
        let node: usize = node.parse().map_err(|_| Errno::ENOENT)?;
        let st = self.lock();
        let gpu = match node {
            0 => None,
            n => Some(st.gpus.get(n - 1).ok_or(Errno::ENOENT)?),
        };
        match file {
            "gpu_id" => Ok(format!("{}\n", gpu.map_or(0, |g| g.gpu_id))),
            "name" => Ok(if gpu.is_some() {
                "ip discovery\n"
            } else {
                "\n"
            }
            .into()),
            "properties" => {
                let props = match gpu {
                    Some(g) => g.props,
                    None => cpu_node_properties(),
                };
                let mut s = String::new();
                props.write_to(&mut s).map_err(|_| Errno::EIO)?;
                Ok(s)
            }
            file => {
                // mem_banks/<i>/properties and caches/<i>/properties of a GPU node.
                let cfg = node.checked_sub(1).and_then(|i| self.cfg.gpus.get(i));
                let (dir, rest) = file.split_once('/').ok_or(Errno::ENOENT)?;
                let i: usize = match rest.strip_suffix("/properties") {
                    Some(i) => i.parse().map_err(|_| Errno::ENOENT)?,
                    None => return Err(Errno::ENOENT),
                };
                let mut s = String::new();
                match (dir, cfg) {
                    ("mem_banks", Some(c)) if i == 0 => c.mem_bank().write_to(&mut s),
                    ("caches", Some(c)) => c.caches().get(i).ok_or(Errno::ENOENT)?.write_to(&mut s),
                    _ => return Err(Errno::ENOENT),
                }
                .map_err(|_| Errno::EIO)?;
                Ok(s)
            }
        }
    }

    /// amdgpu's memory totals under `/sys/class/drm/renderD<minor>/device/`
    /// (`mem_info_vram_total`, `mem_info_vis_vram_total`, `mem_info_gtt_total`).
    fn drm_file(&self, path: &str) -> Result<String, Errno> {
        let rest = path
            .strip_prefix("/sys/class/drm/renderD")
            .ok_or(Errno::ENOENT)?;
        let (minor, file) = rest.split_once("/device/").ok_or(Errno::ENOENT)?;
        let minor: u32 = minor.parse().map_err(|_| Errno::ENOENT)?;
        let st = self.lock();
        let i = st
            .gpus
            .iter()
            .position(|g| g.props.drm_render_minor == minor)
            .ok_or(Errno::ENOENT)?;
        let cfg = self.cfg.gpus.get(i).ok_or(Errno::ENOENT)?;
        let v = match file {
            "mem_info_vram_total" => cfg.vram_size,
            "mem_info_vis_vram_total" => cfg.vram_visible(),
            "mem_info_gtt_total" => self.cfg.gtt_size,
            _ => return Err(Errno::ENOENT),
        };
        Ok(format!("{v}\n"))
    }

    fn track_cpu_map(&self, addr: u64, len: u64) {
        self.lock().cpu_maps.insert(addr, len);
    }

    fn mmap_file(
        &self,
        fixed: Option<u64>,
        len: u64,
        prot: Prot,
        fd: Fd,
        offset: u64,
    ) -> Result<u64, Errno> {
        let (mem, map_len) = {
            let mut st = self.lock();
            let kind = *st.fds.get(&fd.0).ok_or(Errno::EBADF)?;
            match kind {
                FdKind::Kfd => {
                    let off = KfdMmapOffset::decode(offset);
                    match off.ty {
                        KfdMmapType::Doorbell => {
                            let g = st.gpu_by_id(off.gpu_id).ok_or(Errno::ENODEV)?;
                            if len != KFD_DOORBELL_SLICE_SIZE {
                                return Err(Errno::EINVAL);
                            }
                            let gpu = st.gpus.get(g).ok_or(Errno::ENODEV)?;
                            (Arc::clone(&gpu.doorbells), len)
                        }
                        KfdMmapType::Mmio => {
                            let g = st.gpu_by_id(off.gpu_id).ok_or(Errno::ENODEV)?;
                            if len != PAGE {
                                return Err(Errno::EINVAL);
                            }
                            let gpu = st.gpus.get(g).ok_or(Errno::ENODEV)?;
                            (Arc::clone(&gpu.mmio), len)
                        }
                        KfdMmapType::Events => {
                            // get_order(len) > get_order(32 KiB)
                            let pages = len.div_ceil(PAGE).max(1).next_power_of_two();
                            if pages * PAGE > KFD_EVENT_PAGE_SIZE || len == 0 {
                                return Err(Errno::EINVAL);
                            }
                            let page = st.event_page.as_mut().ok_or(Errno::EINVAL)?;
                            page.mapped_size = len;
                            (Arc::clone(&page.mem), len)
                        }
                        KfdMmapType::ReservedMem => return Err(Errno::EINVAL),
                    }
                }
                FdKind::Render { gpu } => {
                    let bo = st
                        .bos
                        .values()
                        .find(|b| b.gpu == gpu && b.drm_offset == offset)
                        .ok_or(Errno::EINVAL)?;
                    if st.gpus.get(gpu).and_then(|g| g.vm_file) != Some(fd.0) {
                        // The BO's GEM object is only visible to the DRM file of the VM.
                        return Err(Errno::EACCES);
                    }
                    if len == 0 || len > bo.size {
                        return Err(Errno::EINVAL);
                    }
                    match &bo.backing {
                        Backing::Shared(m) => {
                            if bo.kind == BoKind::Vram {
                                // The CPU reaches VRAM through the HDP from now on.
                                m.hdp_track();
                            }
                            (Arc::clone(m), len)
                        }
                        Backing::User(_) | Backing::UserInvalidated => return Err(Errno::EPERM),
                    }
                }
            }
        };
        let addr = self.maps.map_shared(&mem, fixed, map_len, prot)?;
        self.track_cpu_map(addr, map_len);
        Ok(addr)
    }

    // ---- ioctl dispatcher --------------------------------------------------------------------

    fn kfd_ioctl(&self, request: u32, arg: &mut [u8]) -> Result<(), Errno> {
        let req = IoctlRequest::from_raw(request);
        // CAST: NR is an 8-bit field.
        let nr = req.get(IoctlRequest::NR) as u8;
        // CAST: SIZE is a 14-bit field.
        let usize_ = req.get(IoctlRequest::SIZE) as usize;
        let Some((kreq, op)) = table(nr) else {
            return Err(Errno::ENOTTY);
        };
        if nr == 0x27 && self.cfg.kfd_minor_version < 19 {
            return Err(Errno::ENOTTY);
        }
        {
            let mut st = self.lock();
            if let Some(inj) = st.injections.get(&nr).copied() {
                if inj.once {
                    st.injections.remove(&nr);
                }
                return Err(inj.errno);
            }
        }
        let kr = IoctlRequest::from_raw(kreq);
        let kdir = kr.get(IoctlRequest::DIR);
        // CAST: a 14-bit field.
        let ksize = kr.get(IoctlRequest::SIZE) as usize;
        if kdir != IOC_NONE && usize_ > arg.len() {
            // copy_from_user / copy_to_user of `usize` bytes would run off the argument.
            return Err(Errno::EFAULT);
        }
        let mut kbuf = vec![0u8; usize_.max(ksize)];
        if kdir & IOC_WRITE != 0 {
            if let (Some(d), Some(s)) = (kbuf.get_mut(..usize_), arg.get(..usize_)) {
                d.copy_from_slice(s);
            }
        }
        let r = self.dispatch(op, &mut kbuf);
        if kdir & IOC_READ != 0 {
            if let (Some(d), Some(s)) = (arg.get_mut(..usize_), kbuf.get(..usize_)) {
                d.copy_from_slice(s);
            }
        }
        if let Err(e) = r {
            log::debug!("sim kfd ioctl nr {nr:#x}: {e}");
        }
        r
    }

    fn dispatch(&self, op: Op, kbuf: &mut [u8]) -> Result<(), Errno> {
        macro_rules! with {
            ($t:ty, $f:ident) => {{
                let mut a: $t = get(kbuf);
                let r = self.$f(&mut a);
                put(kbuf, &a);
                r
            }};
        }
        match op {
            Op::GetVersion => with!(GetVersionArgs, get_version),
            Op::CreateQueue => self.queues_changed(with!(CreateQueueArgs, create_queue)),
            Op::DestroyQueue => self.queues_changed(with!(DestroyQueueArgs, destroy_queue)),
            Op::SetMemoryPolicy => self.set_memory_policy(kbuf),
            Op::GetClockCounters => with!(GetClockCountersArgs, get_clock_counters),
            Op::CreateEvent => with!(CreateEventArgs, create_event),
            Op::DestroyEvent => with!(DestroyEventArgs, destroy_event),
            Op::SetEvent => with!(SetEventArgs, set_event_ioctl),
            Op::ResetEvent => with!(ResetEventArgs, reset_event),
            Op::WaitEvents => with!(WaitEventsArgs, wait_events),
            Op::Deprecated => Err(Errno::EPERM),
            Op::GetProcessAperturesNew => with!(GetProcessAperturesNewArgs, apertures),
            Op::AcquireVm => with!(AcquireVmArgs, acquire_vm),
            Op::Alloc => with!(AllocMemoryOfGpuArgs, alloc),
            Op::Free => with!(FreeMemoryOfGpuArgs, free),
            Op::Map => with!(MapMemoryToGpuArgs, map),
            Op::Unmap => with!(UnmapMemoryFromGpuArgs, unmap),
            Op::SetXnackMode => with!(SetXnackModeArgs, set_xnack),
            Op::AvailableMemory => with!(GetAvailableMemoryArgs, available_memory),
            Op::RuntimeEnable => with!(RuntimeEnableArgs, runtime_enable),
            Op::NotSimulated => Err(Errno::EINVAL),
        }
    }

    /// Tells the engine (if any) that the queue set changed when `r` is a success; returns `r`.
    fn queues_changed(&self, r: Result<(), Errno>) -> Result<(), Errno> {
        if r.is_ok() {
            let engine = self
                .engine
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone();
            if let Some(e) = engine {
                e.queues_changed(self);
            }
        }
        r
    }

    fn get_version(&self, a: &mut GetVersionArgs) -> Result<(), Errno> {
        a.major_version = KFD_IOCTL_MAJOR_VERSION;
        a.minor_version = self.cfg.kfd_minor_version;
        Ok(())
    }

    fn set_memory_policy(&self, kbuf: &[u8]) -> Result<(), Errno> {
        // {u64 base, u64 size, u32 gpu_id, u32 default_policy, u32 alternate_policy, u32 pad}
        let word = |o: usize| {
            kbuf.get(o..o + 4)
                .map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        };
        let (gpu_id, def, alt) = (word(16), word(20), word(24));
        if def > 1 || alt > 1 {
            return Err(Errno::EINVAL);
        }
        let st = self.lock();
        let g = st.gpu_by_id(gpu_id).ok_or(Errno::EINVAL)?;
        if st.gpus.get(g).and_then(|g| g.vm_file).is_none() {
            return Err(Errno::ESRCH);
        }
        Ok(())
    }

    fn get_clock_counters(&self, a: &mut GetClockCountersArgs) -> Result<(), Errno> {
        let known = self.lock().gpu_by_id(a.gpu_id).is_some();
        a.gpu_clock_counter = if known { self.gpu_clock() } else { 0 };
        // CAST: u128 ns since the sim started fits u64 for 584 years.
        let now = self.epoch.elapsed().as_nanos() as u64;
        a.cpu_clock_counter = now;
        a.system_clock_counter = now;
        a.system_clock_freq = 1_000_000_000;
        Ok(())
    }

    fn acquire_vm(&self, a: &mut AcquireVmArgs) -> Result<(), Errno> {
        let mut st = self.lock();
        // CAST: the kernel takes drm_fd as an int.
        let fd = a.drm_fd as i32;
        let kind = st.fds.get(&fd).copied().ok_or(Errno::EINVAL)?;
        let g = st.gpu_by_id(a.gpu_id).ok_or(Errno::EINVAL)?;
        let current = st.gpus.get(g).and_then(|g| g.vm_file);
        match current {
            Some(f) if f == fd => return Ok(()),
            Some(_) => return Err(Errno::EBUSY),
            None => {}
        }
        if !matches!(kind, FdKind::Render { .. }) {
            return Err(Errno::EINVAL);
        }
        if st.gpus.iter().any(|g| g.vm_file == Some(fd)) {
            // That DRM file's VM is already a compute VM.
            return Err(Errno::EINVAL);
        }
        if let Some(gpu) = st.gpus.get_mut(g) {
            gpu.vm_file = Some(fd);
        }
        Ok(())
    }

    fn runtime_enable(&self, a: &mut RuntimeEnableArgs) -> Result<(), Errno> {
        let mut st = self.lock();
        if a.mode_mask & KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK != 0 {
            if st.runtime_enabled {
                return Err(Errno::EBUSY);
            }
            if st.gpus.iter().any(|g| g.queue_count > 0) {
                return Err(Errno::EEXIST);
            }
            st.runtime_enabled = true;
        } else {
            st.runtime_enabled = false;
        }
        Ok(())
    }

    fn set_xnack(&self, a: &mut SetXnackModeArgs) -> Result<(), Errno> {
        let mut st = self.lock();
        if a.xnack_enabled < 0 {
            a.xnack_enabled = i32::from(st.xnack);
            return Ok(());
        }
        if !st.queues.is_empty() {
            return Err(Errno::EBUSY);
        }
        let want = a.xnack_enabled != 0;
        if want == st.xnack {
            return Ok(());
        }
        // Per-process XNACK exists only before GC 10.1.1 (and only on some gfx9 parts).
        if want && st.gpus.iter().any(|g| g.props.gfx_target_version >= 100101) {
            return Err(Errno::EPERM);
        }
        st.xnack = want;
        Ok(())
    }

    fn available_memory(&self, a: &mut GetAvailableMemoryArgs) -> Result<(), Errno> {
        let st = self.lock();
        let g = st
            .gpu_by_id(a.gpu_id)
            .and_then(|i| st.gpus.get(i))
            .ok_or(Errno::EINVAL)?;
        let free = g.vram_limit.saturating_sub(g.vram_used);
        a.available = free & !((2 << 20) - 1);
        Ok(())
    }

    fn apertures(&self, a: &mut GetProcessAperturesNewArgs) -> Result<(), Errno> {
        let st = self.lock();
        // CAST: at most 64 GPUs.
        let n = st.gpus.len() as u32;
        if a.num_of_nodes == 0 {
            a.num_of_nodes = n;
            return Ok(());
        }
        let fill = a.num_of_nodes.min(n);
        let mut out = Vec::with_capacity(fill as usize);
        for g in st.gpus.iter().take(fill as usize) {
            out.push(ProcessDeviceApertures {
                lds_base: 0x1_0000_0000_0000,
                lds_limit: 0x1_0000_FFFF_FFFF,
                scratch_base: 0x2_0000_0000_0000,
                scratch_limit: 0x2_0000_FFFF_FFFF,
                gpuvm_base: 0x1_0000,
                gpuvm_limit: GPUVM_LIMIT - 1,
                gpu_id: g.gpu_id,
                pad: 0,
            });
        }
        drop(st);
        mem::copy_to_user(
            a.kfd_process_device_apertures_ptr,
            bytemuck::cast_slice(&out),
        )?;
        a.num_of_nodes = fill;
        Ok(())
    }

    // ---- memory ------------------------------------------------------------------------------

    fn alloc(&self, a: &mut AllocMemoryOfGpuArgs) -> Result<(), Errno> {
        if a.size == 0 {
            return Err(Errno::EINVAL);
        }
        let mut st = self.lock();
        let g = st.gpu_by_id(a.gpu_id).ok_or(Errno::EINVAL)?;
        let (large_bar, bound) = {
            let gpu = st.gpus.get(g).ok_or(Errno::EINVAL)?;
            (gpu.cfg.large_bar, gpu.vm_file.is_some())
        };
        let f = a.flags;
        if f & KFD_IOC_ALLOC_MEM_FLAGS_VRAM != 0
            && f & KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC != 0
            && !large_bar
        {
            return Err(Errno::EINVAL);
        }
        if !bound {
            return Err(Errno::ENODEV);
        }
        let size = page_align(a.size).ok_or(Errno::EINVAL)?;
        if f & KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL != 0 && size != KFD_DOORBELL_SLICE_SIZE {
            return Err(Errno::EINVAL);
        }
        if f & KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP != 0 && size != PAGE {
            return Err(Errno::EINVAL);
        }
        let kind = if f & KFD_IOC_ALLOC_MEM_FLAGS_VRAM != 0 {
            BoKind::Vram
        } else if f & KFD_IOC_ALLOC_MEM_FLAGS_GTT != 0 {
            BoKind::Gtt
        } else if f & KFD_IOC_ALLOC_MEM_FLAGS_USERPTR != 0 {
            BoKind::Userptr
        } else if f & KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL != 0 {
            BoKind::Doorbell
        } else if f & KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP != 0 {
            BoKind::MmioRemap
        } else {
            return Err(Errno::EINVAL);
        };
        if kind == BoKind::Userptr && a.mmap_offset == 0 {
            return Err(Errno::EINVAL);
        }
        let gtt_size = self.cfg.gtt_size;
        let gtt_used = st.gtt_used;
        let gpu = st.gpus.get_mut(g).ok_or(Errno::EINVAL)?;
        match kind {
            BoKind::Vram if gpu.vram_used.saturating_add(size) > gpu.vram_limit => {
                return Err(Errno::ENOMEM);
            }
            BoKind::Gtt if gtt_used.saturating_add(size) > gtt_size => {
                return Err(Errno::ENOMEM);
            }
            _ => {}
        }
        let backing = match kind {
            BoKind::Vram | BoKind::Gtt => {
                let m = SharedMem::new(
                    if kind == BoKind::Vram {
                        "kfd-vram"
                    } else {
                        "kfd-gtt"
                    },
                    size,
                )?;
                // amdgpu hands out resident, cleared memory; so does the sim, up to
                // POPULATE_MAX (larger BOs, such as a runtime's scratch area, stay sparse so
                // every simulated device does not pin hundreds of MiB of host memory).
                if size <= POPULATE_MAX {
                    m.populate();
                }
                Backing::Shared(Arc::new(m))
            }
            BoKind::Userptr => {
                // The simulated GPU reaches USERPTR pages through /proc/self/mem, writes that
                // must not land in memory Rust owns: the sim pins only pages of mappings it
                // made itself (the driver maps host buffers through the port), where a real
                // kernel pins any user page.
                if !self.maps.contains(a.mmap_offset, size)
                    || !mem::range_is_rw_mapped(a.mmap_offset, size)
                {
                    return Err(Errno::EFAULT);
                }
                Backing::User(a.mmap_offset)
            }
            BoKind::Doorbell => Backing::Shared(Arc::clone(&gpu.doorbells)),
            BoKind::MmioRemap => Backing::Shared(Arc::clone(&gpu.mmio)),
        };
        let idr = lowest_free(&gpu.idr, 0, u32::MAX).ok_or(Errno::EFAULT)?;
        gpu.idr.insert(idr);
        let drm_offset = gpu.drm_offset_next;
        gpu.drm_offset_next = gpu.drm_offset_next.saturating_add(size);
        match kind {
            BoKind::Vram => gpu.vram_used += size,
            BoKind::Gtt => st.gtt_used += size,
            _ => {}
        }
        let handle = (u64::from(a.gpu_id) << 32) | u64::from(idr);
        st.bos.insert(
            handle,
            Bo {
                gpu: g,
                va: a.va_addr,
                size,
                flags: f,
                kind,
                backing,
                drm_offset,
                mapped: BTreeMap::new(),
            },
        );
        a.handle = handle;
        a.mmap_offset = if kind == BoKind::MmioRemap {
            KfdMmapOffset {
                ty: KfdMmapType::Mmio,
                gpu_id: a.gpu_id,
                value: 0,
            }
            .encode()
        } else {
            drm_offset
        };
        Ok(())
    }

    fn free(&self, a: &mut FreeMemoryOfGpuArgs) -> Result<(), Errno> {
        let mut st = self.lock();
        if st.event_page.as_ref().and_then(|p| p.handle) == Some(a.handle) {
            return Err(Errno::EPERM);
        }
        // CAST: the handle's high 32 bits are the gpu_id.
        let g = st.gpu_by_id((a.handle >> 32) as u32).ok_or(Errno::EINVAL)?;
        let bo = st.bos.get(&a.handle).ok_or(Errno::EINVAL)?;
        if !bo.mapped.is_empty() {
            return Err(Errno::EBUSY);
        }
        let (kind, size) = (bo.kind, bo.size);
        st.bos.remove(&a.handle);
        match kind {
            BoKind::Gtt => st.gtt_used = st.gtt_used.saturating_sub(size),
            BoKind::Vram => {
                if let Some(gpu) = st.gpus.get_mut(g) {
                    gpu.vram_used = gpu.vram_used.saturating_sub(size);
                }
            }
            _ => {}
        }
        if let Some(gpu) = st.gpus.get_mut(g) {
            // CAST: low 32 bits are the IDR id.
            gpu.idr.remove(&(a.handle as u32));
        }
        Ok(())
    }

    fn read_device_ids(a: &MapMemoryToGpuArgs) -> Result<Vec<u32>, Errno> {
        if a.n_devices == 0 || a.n_success > a.n_devices {
            return Err(Errno::EINVAL);
        }
        if u64::from(a.n_devices) * 4 > KMALLOC_MAX {
            return Err(Errno::ENOMEM);
        }
        let mut raw = vec![0u8; a.n_devices as usize * 4];
        mem::copy_from_user(a.device_ids_array_ptr, &mut raw)?;
        Ok(raw
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect())
    }

    fn map(&self, a: &mut MapMemoryToGpuArgs) -> Result<(), Errno> {
        let ids = Self::read_device_ids(a)?;
        let mut st = self.lock();
        // CAST: the handle's high 32 bits are the gpu_id.
        let owner = st.gpu_by_id((a.handle >> 32) as u32).ok_or(Errno::EINVAL)?;
        if st.gpus.get(owner).and_then(|g| g.vm_file).is_none() {
            return Err(Errno::ENODEV);
        }
        let (va, size, kind) = {
            let bo = st.bos.get(&a.handle).ok_or(Errno::ENOMEM)?;
            (bo.va, bo.size, bo.kind)
        };
        for i in a.n_success..a.n_devices {
            let id = ids.get(i as usize).copied().unwrap_or(0);
            let g = st.gpu_by_id(id).ok_or(Errno::EINVAL)?;
            let (bound, peer_ok) = {
                let gpu = st.gpus.get(g).ok_or(Errno::EINVAL)?;
                (gpu.vm_file.is_some(), gpu.cfg.large_bar)
            };
            if !bound {
                return Err(Errno::ENODEV);
            }
            let already = st
                .bos
                .get(&a.handle)
                .is_some_and(|b| b.mapped.contains_key(&g));
            if !already {
                // amdgpu_vm_verify_parameters + overlap check.
                let end = va.checked_add(size).ok_or(Errno::EINVAL)?;
                if va % PAGE != 0 || size % PAGE != 0 || size == 0 || end > GPUVM_LIMIT {
                    return Err(Errno::EINVAL);
                }
                let overlaps = st.gpus.get(g).is_some_and(|gpu| {
                    gpu.page_table
                        .range(..end)
                        .next_back()
                        .is_some_and(|(_, e)| e.end > va)
                });
                if overlaps {
                    return Err(Errno::EINVAL);
                }
                let needs_bar = matches!(kind, BoKind::Vram | BoKind::Doorbell | BoKind::MmioRemap);
                if g != owner && needs_bar && !peer_ok {
                    return Err(Errno::EINVAL);
                }
                if let Some(gpu) = st.gpus.get_mut(g) {
                    gpu.page_table.insert(
                        va,
                        PtEntry {
                            end,
                            handle: a.handle,
                        },
                    );
                }
                if let Some(bo) = st.bos.get_mut(&a.handle) {
                    bo.mapped.insert(g, 0);
                }
            }
            a.n_success = i + 1;
        }
        Ok(())
    }

    fn unmap(&self, a: &mut UnmapMemoryFromGpuArgs) -> Result<(), Errno> {
        let ids = Self::read_device_ids(a)?;
        let mut st = self.lock();
        // CAST: the handle's high 32 bits are the gpu_id.
        st.gpu_by_id((a.handle >> 32) as u32).ok_or(Errno::EINVAL)?;
        let va = st.bos.get(&a.handle).ok_or(Errno::ENOMEM)?.va;
        for i in a.n_success..a.n_devices {
            let id = ids.get(i as usize).copied().unwrap_or(0);
            let g = st.gpu_by_id(id).ok_or(Errno::EINVAL)?;
            let refs = st
                .bos
                .get(&a.handle)
                .and_then(|b| b.mapped.get(&g).copied())
                .ok_or(Errno::EINVAL)?;
            if refs > 0 {
                return Err(Errno::EBUSY);
            }
            if let Some(bo) = st.bos.get_mut(&a.handle) {
                bo.mapped.remove(&g);
            }
            if let Some(gpu) = st.gpus.get_mut(g) {
                gpu.page_table.remove(&va);
            }
            a.n_success = i + 1;
        }
        Ok(())
    }

    // ---- queues ------------------------------------------------------------------------------

    /// `kfd_queue_buffer_get`: the mapping containing `addr` must start at `addr`'s page and,
    /// when `expected >= 4 KiB`, be exactly `expected` bytes. Returns the BO handle.
    fn buffer_get(st: &State, gpu: usize, addr: u64, expected: u64) -> Result<u64, Errno> {
        let (start, e) = st.lookup(gpu, addr).ok_or(Errno::EINVAL)?;
        let page = addr / PAGE;
        if page != start / PAGE {
            return Err(Errno::EINVAL);
        }
        let pages = expected / PAGE;
        if pages != 0 && e.end / PAGE != page + pages {
            return Err(Errno::EINVAL);
        }
        Ok(e.handle)
    }

    fn create_queue(&self, a: &mut CreateQueueArgs) -> Result<(), Errno> {
        if a.queue_percentage & 0xFF > KFD_MAX_QUEUE_PERCENTAGE {
            return Err(Errno::EINVAL);
        }
        if a.queue_priority > KFD_MAX_QUEUE_PRIORITY {
            return Err(Errno::EINVAL);
        }
        if a.ring_base_address != 0 && !access_ok(a.ring_base_address, 8) {
            return Err(Errno::EFAULT);
        }
        if a.ring_size != 0 && !a.ring_size.is_power_of_two() {
            return Err(Errno::EINVAL);
        }
        if a.ring_size < KFD_MIN_QUEUE_RING_SIZE {
            a.ring_size = KFD_MIN_QUEUE_RING_SIZE;
        }
        if !access_ok(a.read_pointer_address, 4) || !access_ok(a.write_pointer_address, 4) {
            return Err(Errno::EFAULT);
        }
        if (a.eop_buffer_address != 0 && !access_ok(a.eop_buffer_address, 4))
            || (a.ctx_save_restore_address != 0 && !access_ok(a.ctx_save_restore_address, 4))
        {
            return Err(Errno::EFAULT);
        }
        let qt = a.queue_type;
        if qt > KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID {
            return Err(Errno::ENOTSUPP);
        }
        let mut st = self.lock();
        let g = st.gpu_by_id(a.gpu_id).ok_or(Errno::EINVAL)?;
        let (bound, sizes, engines, per_engine) = {
            let gpu = st.gpus.get(g).ok_or(Errno::EINVAL)?;
            (
                gpu.vm_file.is_some(),
                gpu.sizes,
                gpu.props.num_sdma_engines,
                gpu.props.num_sdma_queues_per_engine,
            )
        };
        if !bound {
            return Err(Errno::ESRCH);
        }
        if qt == KFD_IOC_QUEUE_TYPE_COMPUTE_AQL {
            // Not simulated yet: the engine runs PM4 and SDMA rings only.
            return Err(Errno::EINVAL);
        }
        if qt == KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID && a.sdma_engine_id >= engines {
            return Err(Errno::EINVAL);
        }
        let kind = if qt == KFD_IOC_QUEUE_TYPE_COMPUTE {
            QueueKind::Compute
        } else {
            QueueKind::Sdma
        };

        // kfd_queue_acquire_buffers
        let mut refs = Vec::new();
        refs.push(Self::buffer_get(&st, g, a.write_pointer_address, PAGE)?);
        refs.push(Self::buffer_get(&st, g, a.read_pointer_address, PAGE)?);
        refs.push(Self::buffer_get(
            &st,
            g,
            a.ring_base_address,
            u64::from(a.ring_size),
        )?);
        if kind == QueueKind::Compute && sizes.cwsr_size != 0 {
            let strict = self.cfg.queue_buffer_rules == QueueBufferRules::Strict612;
            if a.eop_buffer_address != 0 {
                let node = u64::from(sizes.eop_buffer_size);
                let ok = if strict {
                    a.eop_buffer_size == node
                } else {
                    a.eop_buffer_size >= node
                };
                if !ok {
                    return Err(Errno::EINVAL);
                }
                let expected = page_align(a.eop_buffer_size).ok_or(Errno::EINVAL)?;
                refs.push(Self::buffer_get(&st, g, a.eop_buffer_address, expected)?);
            }
            if a.ctl_stack_size != sizes.ctl_stack_size {
                return Err(Errno::EINVAL);
            }
            let ok = if strict {
                a.ctx_save_restore_size == sizes.cwsr_size
            } else {
                a.ctx_save_restore_size >= sizes.cwsr_size
            };
            if !ok {
                return Err(Errno::EINVAL);
            }
            let declared = if strict {
                sizes.cwsr_size
            } else {
                a.ctx_save_restore_size
            };
            let total = sizes.cwsr_mapping_size(declared).ok_or(Errno::EINVAL)?;
            refs.push(Self::buffer_get(&st, g, a.ctx_save_restore_address, total)?);
        }

        let gpu = st.gpus.get(g).ok_or(Errno::EINVAL)?;
        if gpu.queue_count >= MAX_QUEUES_PER_DEVICE {
            return Err(Errno::ENOSPC);
        }
        let queue_id = lowest_free_key(&st.queues, 0, MAX_PROCESS_QUEUES).ok_or(Errno::ENOMEM)?;
        let (sdma_slot, sdma_engine) = if kind == QueueKind::Sdma {
            let total = engines.saturating_mul(per_engine);
            let slot = if qt == KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID {
                (0..per_engine)
                    .map(|q| q * engines + a.sdma_engine_id)
                    .find(|s| !gpu.sdma_slots.contains(s))
            } else if qt == KFD_IOC_QUEUE_TYPE_SDMA_XGMI {
                None // no XGMI SDMA engines simulated
            } else {
                lowest_free(&gpu.sdma_slots, 0, total)
            }
            .ok_or(Errno::ENOMEM)?;
            let engine = slot.checked_rem(engines).unwrap_or(0);
            let q = slot.checked_div(engines).unwrap_or(0);
            (Some(slot), Some((engine, q)))
        } else {
            (None, None)
        };
        let doorbell_id = match sdma_engine {
            Some((e, q)) => SDMA_DOORBELL_BASE + e * 16 + q,
            None => lowest_free(&gpu.doorbell_ids, 0, SDMA_DOORBELL_BASE).ok_or(Errno::EBUSY)?,
        };
        let doorbell_offset = KfdMmapOffset::doorbell(a.gpu_id, doorbell_id).encode();
        let percentage = a.queue_percentage & 0xFF;
        let info = QueueInfo {
            queue_id,
            gpu_id: a.gpu_id,
            kind,
            ring_base: a.ring_base_address,
            ring_size: a.ring_size,
            rptr_addr: a.read_pointer_address,
            wptr_addr: a.write_pointer_address,
            doorbell_id,
            doorbell_offset,
            eop_addr: a.eop_buffer_address,
            eop_size: a.eop_buffer_size,
            ctx_save_restore_addr: a.ctx_save_restore_address,
            ctx_save_restore_size: a.ctx_save_restore_size,
            priority: a.queue_priority,
            percentage,
            sdma_engine,
            active: percentage > 0 && !gpu.evicted,
        };
        // Commit.
        let mut held = Vec::with_capacity(refs.len());
        for h in refs {
            if let Some(c) = st.bos.get_mut(&h).and_then(|b| b.mapped.get_mut(&g)) {
                *c += 1;
            }
            held.push((g, h));
        }
        if let Some(gpu) = st.gpus.get_mut(g) {
            gpu.doorbell_ids.insert(doorbell_id);
            if let Some(s) = sdma_slot {
                gpu.sdma_slots.insert(s);
            }
            gpu.queue_count += 1;
            // A recycled doorbell must not carry a stale value (rocm-systems#8821).
            let _ = gpu
                .doorbells
                .store_u64(u64::from(doorbell_id) * KFD_DOORBELL_SIZE, 0);
        }
        st.queues.insert(
            queue_id,
            Queue {
                info,
                gpu: g,
                refs: held,
                sdma_slot,
            },
        );
        a.queue_id = queue_id;
        a.doorbell_offset = doorbell_offset;
        Ok(())
    }

    fn destroy_queue(&self, a: &mut DestroyQueueArgs) -> Result<(), Errno> {
        let mut st = self.lock();
        let q = st.queues.remove(&a.queue_id).ok_or(Errno::EINVAL)?;
        for (g, h) in &q.refs {
            if let Some(c) = st.bos.get_mut(h).and_then(|b| b.mapped.get_mut(g)) {
                *c = c.saturating_sub(1);
            }
        }
        if let Some(gpu) = st.gpus.get_mut(q.gpu) {
            gpu.doorbell_ids.remove(&q.info.doorbell_id);
            if let Some(s) = q.sdma_slot {
                gpu.sdma_slots.remove(&s);
            }
            gpu.queue_count = gpu.queue_count.saturating_sub(1);
        }
        Ok(())
    }

    // ---- events ------------------------------------------------------------------------------

    fn create_event(&self, a: &mut CreateEventArgs) -> Result<(), Errno> {
        let mut st = self.lock();
        if a.event_page_offset != 0 {
            if st.event_page.is_some() {
                return Err(Errno::EINVAL);
            }
            let handle = a.event_page_offset;
            // CAST: the handle's high 32 bits are the gpu_id.
            let g = st.gpu_by_id((handle >> 32) as u32).ok_or(Errno::EINVAL)?;
            if st.gpus.get(g).and_then(|g| g.vm_file).is_none() {
                return Err(Errno::ENODEV);
            }
            let bo = st.bos.get(&handle).ok_or(Errno::EINVAL)?;
            let Backing::Shared(m) = &bo.backing else {
                return Err(Errno::EINVAL);
            };
            // The page is pinned in GTT and memset over 32 KiB: USERPTR, VRAM and pages smaller
            // than 32 KiB cannot be used.
            if bo.kind != BoKind::Gtt || bo.size < KFD_EVENT_PAGE_SIZE {
                return Err(Errno::EINVAL);
            }
            let m = Arc::clone(m);
            let size = bo.size;
            m.fill(0, KFD_EVENT_PAGE_SIZE, 0xFF);
            st.event_page = Some(EventPage {
                handle: Some(handle),
                mem: m,
                mapped_size: size,
            });
        }
        let ty = a.event_type;
        let has_slot = ty == KFD_IOC_EVENT_SIGNAL || ty == KFD_IOC_EVENT_DEBUG_EVENT;
        let id = if has_slot {
            if st.event_page.is_none() {
                let m = SharedMem::new("kfd-events", KFD_EVENT_PAGE_SIZE)?;
                m.fill(0, KFD_EVENT_PAGE_SIZE, 0xFF);
                st.event_page = Some(EventPage {
                    handle: None,
                    mem: Arc::new(m),
                    mapped_size: DEFAULT_SIGNAL_SLOTS * KFD_EVENT_SLOT_SIZE,
                });
            }
            let page = st.event_page.as_ref().ok_or(Errno::ENOMEM)?;
            let slots =
                (page.mapped_size / KFD_EVENT_SLOT_SIZE).min(u64::from(KFD_SIGNAL_EVENT_LIMIT));
            if u64::from(st.signal_event_count) >= slots {
                return Err(Errno::ENOSPC);
            }
            // CAST: slots <= 4096.
            let id = lowest_free_key(&st.events, 1, slots as u32).ok_or(Errno::ENOSPC)?;
            let _ = page.mem.store_u64(
                u64::from(id) * KFD_EVENT_SLOT_SIZE,
                KFD_EVENT_SLOT_UNSIGNALED,
            );
            st.signal_event_count += 1;
            a.event_page_offset = KFD_MMAP_TYPE_EVENTS;
            a.event_slot_index = id;
            id
        } else {
            a.event_page_offset = 0;
            lowest_free_key(&st.events, KFD_FIRST_NONSIGNAL_EVENT_ID, u32::MAX)
                .ok_or(Errno::ENOMEM)?
        };
        a.event_id = id;
        a.event_trigger_data = id;
        st.events.insert(
            id,
            Event {
                ty,
                auto_reset: a.auto_reset != 0,
                signaled: false,
                age: 1,
                has_slot,
                waiters: 0,
                mem: HsaMemoryExceptionData::default(),
                hw: HsaHwExceptionData::default(),
            },
        );
        Ok(())
    }

    fn destroy_event(&self, a: &mut DestroyEventArgs) -> Result<(), Errno> {
        let mut st = self.lock();
        let ev = st.events.remove(&a.event_id).ok_or(Errno::EINVAL)?;
        if ev.has_slot {
            st.signal_event_count = st.signal_event_count.saturating_sub(1);
        }
        drop(st);
        self.cond.notify_all();
        Ok(())
    }

    /// `set_event`: signaled stays set only for manual-reset events or when nobody waits;
    /// the age change wakes registered waiters.
    pub(crate) fn set_event_locked(st: &mut State, id: u32) {
        if let Some(ev) = st.events.get_mut(&id) {
            ev.signaled = !ev.auto_reset || ev.waiters == 0;
            ev.age = ev.age.wrapping_add(1);
            if ev.age == 0 {
                ev.age = 2;
            }
        }
    }

    fn set_event_ioctl(&self, a: &mut SetEventArgs) -> Result<(), Errno> {
        let mut st = self.lock();
        match st.events.get(&a.event_id) {
            Some(ev) if ev.ty == KFD_IOC_EVENT_SIGNAL => {}
            _ => return Err(Errno::EINVAL),
        }
        Self::set_event_locked(&mut st, a.event_id);
        drop(st);
        self.cond.notify_all();
        Ok(())
    }

    fn reset_event(&self, a: &mut ResetEventArgs) -> Result<(), Errno> {
        let mut st = self.lock();
        match st.events.get_mut(&a.event_id) {
            Some(ev) if ev.ty == KFD_IOC_EVENT_SIGNAL => {
                ev.signaled = false;
                Ok(())
            }
            _ => Err(Errno::EINVAL),
        }
    }

    fn wait_events(&self, a: &mut WaitEventsArgs) -> Result<(), Errno> {
        a.wait_result = KFD_IOC_WAIT_RESULT_FAIL;
        if a.num_events == 0 {
            a.wait_result = KFD_IOC_WAIT_RESULT_COMPLETE;
            return Ok(());
        }
        // sizeof(struct kfd_event_waiter) = 56
        if u64::from(a.num_events) * 56 > KMALLOC_MAX {
            return Err(Errno::ENOMEM);
        }
        let n = a.num_events as usize;
        let elem = size_of::<EventData>();
        let mut raw = vec![0u8; n * elem];
        mem::copy_from_user(a.events_ptr, &mut raw)?;
        let data: Vec<EventData> = raw
            .chunks_exact(elem)
            .map(bytemuck::pod_read_unaligned)
            .collect();

        // Register the waiters (init_event_waiter).
        struct Waiter {
            id: u32,
            activated: bool,
            age_enabled: bool,
            /// Age at registration: a change means the event was set for us.
            seen_age: u64,
            /// On the event's wait queue (not activated at wait start).
            registered: bool,
        }
        let mut waiters = Vec::with_capacity(n);
        {
            let mut st = self.lock();
            if data.iter().any(|d| !st.events.contains_key(&d.event_id)) {
                return Err(Errno::EINVAL);
            }
            for d in &data {
                let Some(ev) = st.events.get_mut(&d.event_id) else {
                    return Err(Errno::EINVAL);
                };
                let mut activated = ev.signaled;
                ev.signaled = ev.signaled && !ev.auto_reset;
                let age_enabled = ev.ty == KFD_IOC_EVENT_SIGNAL && d.last_event_age() != 0;
                if age_enabled && ev.age != d.last_event_age() {
                    activated = true;
                }
                if !activated {
                    ev.waiters += 1;
                }
                waiters.push(Waiter {
                    id: d.event_id,
                    activated,
                    age_enabled,
                    seen_age: ev.age,
                    registered: !activated,
                });
            }
        }

        let all = a.wait_for_all != 0;
        let infinite = a.timeout == KFD_WAIT_TIMEOUT_INFINITE;
        let deadline =
            Instant::now() + Duration::from_millis(u64::from(a.timeout.min(0x7FFF_FFFF)));
        let mut rounds: u32 = 0;
        let outcome: Result<bool, Errno> = loop {
            // Check (under the lock).
            let st = self.lock();
            let mut destroyed = false;
            for w in waiters.iter_mut().filter(|w| !w.activated) {
                match st.events.get(&w.id) {
                    None => destroyed = true,
                    Some(ev) if ev.age != w.seen_age => w.activated = true,
                    Some(_) => {}
                }
            }
            if destroyed {
                break Err(Errno::EIO);
            }
            let done = if all {
                waiters.iter().all(|w| w.activated)
            } else {
                waiters.iter().any(|w| w.activated)
            };
            if done {
                break Ok(true);
            }
            match self.cfg.mode {
                SimMode::Deterministic => {
                    drop(st);
                    rounds += 1;
                    if rounds > 1 << 20 || !self.run_queues() {
                        break Ok(false);
                    }
                }
                SimMode::Threaded => {
                    let now = Instant::now();
                    if !infinite && now >= deadline {
                        break Ok(false);
                    }
                    let wait = if infinite {
                        Duration::from_millis(100)
                    } else {
                        (deadline - now).min(Duration::from_millis(100))
                    };
                    let (guard, _) = self
                        .cond
                        .wait_timeout(st, wait)
                        .unwrap_or_else(PoisonError::into_inner);
                    drop(guard);
                }
            }
        };

        // Unregister and collect copy-out data.
        let mut copies: Vec<(usize, Vec<u8>)> = Vec::new();
        {
            let mut st = self.lock();
            for (i, w) in waiters.iter().enumerate() {
                let Some(ev) = st.events.get_mut(&w.id) else {
                    continue;
                };
                if w.registered {
                    ev.waiters = ev.waiters.saturating_sub(1);
                }
                if matches!(outcome, Ok(true)) && w.activated {
                    let bytes = match ev.ty {
                        KFD_IOC_EVENT_MEMORY => bytemuck::bytes_of(&ev.mem).to_vec(),
                        KFD_IOC_EVENT_HW_EXCEPTION => bytemuck::bytes_of(&ev.hw).to_vec(),
                        KFD_IOC_EVENT_SIGNAL if w.age_enabled => ev.age.to_le_bytes().to_vec(),
                        _ => continue,
                    };
                    copies.push((i, bytes));
                }
            }
        }
        match outcome {
            Err(e) => Err(e),
            Ok(false) => {
                a.wait_result = KFD_IOC_WAIT_RESULT_TIMEOUT;
                Ok(())
            }
            Ok(true) => {
                for (i, bytes) in copies {
                    // CAST: i < num_events (u32), elem = 48.
                    let addr = a.events_ptr + (i * elem) as u64 + EVENT_DATA_UNION_OFFSET as u64;
                    mem::copy_to_user(addr, &bytes)?;
                }
                a.wait_result = KFD_IOC_WAIT_RESULT_COMPLETE;
                Ok(())
            }
        }
    }
}

fn cpu_node_properties() -> NodeProperties {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    NodeProperties {
        // CAST: core counts fit u32.
        cpu_cores_count: cores as u32,
        simd_count: 0,
        max_waves_per_simd: 0,
        lds_size_in_kb: 0,
        array_count: 0,
        simd_arrays_per_engine: 0,
        cu_per_simd_array: 0,
        simd_per_cu: 0,
        max_slots_scratch_cu: 0,
        gfx_target_version: 0,
        drm_render_minor: 0,
        vendor_id: 0,
        device_id: 0,
        location_id: 0,
        domain: 0,
        wave_front_size: 0,
        num_sdma_engines: 0,
        num_sdma_xgmi_engines: 0,
        num_sdma_queues_per_engine: 0,
        num_cp_queues: 0,
        max_engine_clk_fcompute: 0,
        local_mem_size: 0,
        num_xcc: 0,
        unique_id: 0,
        capability: 0,
        mem_banks_count: 0,
        caches_count: 0,
        io_links_count: 0,
        hive_id: 0,
        fw_version: 0,
        sdma_fw_version: 0,
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
            return Ok(self.new_fd(FdKind::Render { gpu }));
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

    fn ioctl(&self, fd: Fd, request: u32, arg: &mut [u8]) -> Result<(), Errno> {
        let kind = self.lock().fds.get(&fd.0).copied().ok_or(Errno::EBADF)?;
        match kind {
            FdKind::Kfd => self.kfd_ioctl(request, arg),
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
        // USERPTR BOs over the old pages, as munmap does.
        if let MapKind::File { fd, offset } = kind {
            let addr = self.mmap_file(Some(at), len, prot, fd, offset)?;
            invalidate_userptr(&mut self.lock(), at, len);
            return Ok(addr);
        }
        let mut st = self.lock();
        let addr = match kind {
            MapKind::Reserve => self.maps.reserve(Some(at), len),
            _ => self.maps.anon_shared(Some(at), len, prot),
        }?;
        invalidate_userptr(&mut st, at, len);
        Ok(addr)
    }

    fn munmap(&self, addr: u64, len: u64) -> Result<(), Errno> {
        let end = addr.saturating_add(len);
        // The state lock first (the order ALLOC_MEMORY_OF_GPU takes them in), so no GPU access
        // translates into the range between the unmap and the invalidation below.
        let mut st = self.lock();
        self.maps.unmap(addr, len)?;
        invalidate_userptr(&mut st, addr, len);
        let gone: Vec<u64> = st.cpu_maps.range(addr..end).map(|(&a, _)| a).collect();
        for a in gone {
            st.cpu_maps.remove(&a);
        }
        Ok(())
    }

    fn fault_reasons(&self, gpu_id: u32, each: &mut dyn FnMut(&str)) {
        for r in self.fault_reasons_of(gpu_id) {
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
/// caller holds the state lock, so no new GPU access translates into the range), and stay so
/// even when another mapping later reuses the address.
fn invalidate_userptr(st: &mut State, addr: u64, len: u64) {
    let end = addr.saturating_add(len);
    for bo in st.bos.values_mut() {
        if let Backing::User(host) = bo.backing
            && host < end
            && addr < host.saturating_add(bo.size)
        {
            bo.backing = Backing::UserInvalidated;
        }
    }
}

/// The topology directory of node `n` (for callers building paths).
#[must_use]
pub fn node_dir(n: usize) -> String {
    format!("{TOPOLOGY_NODES_DIR}/{n}")
}
