//! [`Device`]: one GPU (its VM, queues, timeline, kernargs, scratch) and [`GpuBuffer`].

use crate::aql::{AqlQueue, AqlScratch, AqlSync, AqlWriter};
use crate::buffer::{Bo, BoOptions};
use crate::encode::Cmds;
use crate::error::{Error, MemoryKind, QueueState, Result};
use crate::kfd::{GpuInfo, Kfd, KfdInner};
use crate::mem::Mapping;
use crate::queue::RingWriter;
use crate::queue::{HwQueue, QueueParams, QueueType};
use crate::signal::{Signal, SignalPages};
use crate::sync::lock;
use core::cell::RefCell;
use core::sync::atomic::{AtomicBool, Ordering};
use core::time::Duration;
use hcq_core::addr::GpuVa;
use hcq_core::arch::{ArchInfo, GfxTarget};
use hcq_core::kfd::topology::{CwsrSizes, NodeProperties, ScratchSizing};
use hcq_core::ring::{Pm4, Sdma};
use hcq_core::signal::SignalRef;
use hcq_core::timeline::{Timeline, TimelineValue, Which};
use log::debug;
use std::sync::{Arc, Mutex};

mod aql_graph;
mod gpu_buffer;
mod kernargs;
mod kernels;
pub(crate) mod profile;
mod staging;
mod submit;

#[allow(unused_imports)]
pub use gpu_buffer::*;
#[allow(unused_imports)]
pub use submit::*;

pub(crate) use kernargs::{KERNARG_ALIGN, Kernargs};
pub use kernels::KernelObject;
pub(crate) use kernels::Kernels;
pub(crate) use profile::Profile;
pub(crate) use staging::Staging;

/// Timeline values above this are wrapped (reset through the shadow signal) at the next
/// [`Device::synchronize`]: the GPU compares and writes 32-bit values.
pub const TIMELINE_WRAP: u64 = hcq_core::timeline::WRAP_THRESHOLD;

/// Sizes a [`Device`] is opened with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceOptions {
    /// Compute (PM4) ring bytes (power of two).
    pub compute_ring_size: u64,
    /// SDMA ring bytes (power of two).
    pub sdma_ring_size: u64,
    /// Kernel-argument arena bytes.
    pub kernargs_size: u64,
    /// Bytes of each of the two staging buffers used by `copy_in`/`copy_out`.
    pub staging_size: u64,
    /// Which kind of compute queue to create (PM4 or AQL).
    pub compute_queue: ComputeQueueKind,
}

/// Which kind of compute queue a [`Device`] drives.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ComputeQueueKind {
    /// What is right for the GPU: AQL when the node has more than one XCC (each XCC's command
    /// processor would run a PM4 stream once, while AQL packets are dispatched once across
    /// all XCCs, as ROCm and tinygrad 0.14 choose), PM4 otherwise. The environment variable
    /// `HCQ_AQL` overrides it: `1` forces AQL, `0` PM4.
    #[default]
    Auto,
    /// A PM4 compute queue (`KFD_IOC_QUEUE_TYPE_COMPUTE`).
    Pm4,
    /// An AQL compute queue (`KFD_IOC_QUEUE_TYPE_COMPUTE_AQL`): launches become kernel
    /// dispatch packets, every other compute command runs through `AMD_AQL_FORMAT_PM4_IB`
    /// packets.
    Aql,
}

impl ComputeQueueKind {
    /// Whether a node with `num_xcc` XCCs gets an AQL queue (`HCQ_AQL` read for `Auto`).
    #[must_use]
    pub fn resolve_aql(self, num_xcc: u32) -> bool {
        match self {
            Self::Pm4 => false,
            Self::Aql => true,
            Self::Auto => match std::env::var("HCQ_AQL").ok().as_deref().map(str::trim) {
                Some("1") => true,
                Some("0") => false,
                _ => num_xcc > 1,
            },
        }
    }
}

impl Default for DeviceOptions {
    fn default() -> Self {
        Self {
            compute_ring_size: 1 << 20,
            sdma_ring_size: 1 << 20,
            kernargs_size: 1 << 24,
            staging_size: 4 << 20,
            compute_queue: ComputeQueueKind::Auto,
        }
    }
}

/// Which memory a [`GpuBuffer`] lives in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BufferKind {
    /// Device memory, GPU only (the CPU reaches it through copies).
    Vram,
    /// Device memory the CPU can also map (large BAR).
    VramCpuVisible,
    /// System memory through the GART, cached.
    Gtt,
    /// System memory through the GART, uncached and coherent.
    GttUncached,
    /// The process's own memory registered with the GPU (USERPTR).
    Host,
}

/// The device's compute queue: PM4 or AQL ([`ComputeQueueKind`]).
#[derive(Debug)]
pub(crate) enum ComputeQueue {
    /// A PM4 queue.
    Pm4(HwQueue<Pm4>),
    /// An AQL queue.
    Aql(AqlQueue),
}

impl ComputeQueue {
    pub(crate) fn state(&self) -> QueueState {
        match self {
            Self::Pm4(q) => q.state(),
            Self::Aql(q) => q.state(),
        }
    }

    pub(crate) fn queue_id(&self) -> u32 {
        match self {
            Self::Pm4(q) => q.queue_id(),
            Self::Aql(q) => q.queue_id(),
        }
    }
}

/// The compute queue's producer, of the queue's kind.
#[derive(Debug)]
pub(crate) enum ComputeWriter {
    /// A PM4 ring's producer.
    Pm4(RingWriter<Pm4>),
    /// An AQL ring's producer.
    Aql(AqlWriter),
}

/// One XCC's share of the scratch and the `compute_tmpring_size` of one XCC's waves.
///
/// Every XCC's command processor takes its scratch at `scratch_backing_memory_location +
/// xcc * scratch_backing_memory_byte_size` (ROCdbgapi `aql_queue_t::scratch_memory_region`:
/// "evenly divided between all XCCs"), so the byte size is the size per XCC: ROCR
/// `AqlQueue::InitScratchSRD` stores `main_size / num_xcc` ("report size per XCC"), and
/// `AqlQueue::FillComputeTmpRingSize` counts WAVES from that share, `(main_size / num_xcc) /
/// (WAVESIZE * unit)`, capped at the XCC's `cus * max_slots_scratch_cu` and divided by the
/// shader engines on gfx10+ (where WAVES counts one engine's waves; tinygrad 0.14's
/// `_ensure_has_local_memory` does the same). On one XCC the length is the whole buffer.
fn aql_scratch_per_xcc(
    arch: &'static ArchInfo,
    props: &NodeProperties,
    scratch: &ScratchSizing,
) -> (u64, u32) {
    let xcc = u64::from(props.num_xcc.max(1));
    let len = scratch.scratch_len / xcc;
    let wave = scratch.wave_scratch_len.max(1);
    let mut waves = len / wave;
    if arch.family == hcq_core::arch::Family::Gfx9 {
        let cus = u64::from(props.cu_count().max(1)) / xcc;
        waves = waves.min(cus.max(1) * u64::from(props.max_slots_scratch_cu));
    } else {
        waves /= (u64::from(scratch.engines) / xcc).max(1);
    }
    // CAST: at most 0xfff, the WAVES field.
    let waves = waves.min(0xfff) as u32;
    (len, (scratch.tmpring_size & !0xfff) | waves)
}

/// What an AQL queue's `amd_queue_t` gives dispatches: the device's scratch (the buffer
/// `COMPUTE_TMPRING_SIZE` describes, its V# for kernels that take a private segment buffer).
fn aql_scratch(
    arch: &'static ArchInfo,
    props: &NodeProperties,
    scratch: &ScratchSizing,
    bo: &Bo,
) -> Result<AqlScratch> {
    let base = GpuVa(bo.va());
    let (len, tmpring_size) = aql_scratch_per_xcc(arch, props, scratch);
    // The V# the CP loads is the queue's; wave32 on gfx10+ (the kernels hcq runs there).
    let wave32 = arch.family != hcq_core::arch::Family::Gfx9;
    // Families with architected flat scratch (gfx11+, gfx940+) take no private segment
    // buffer: the descriptor stays zero there (ROCR fills it only where it is used).
    let rsrc = hcq_core::rsrc::ScratchRsrc::new(arch, base, len, wave32)
        .map_or([0; 4], hcq_core::rsrc::ScratchRsrc::words);
    let cus = props.cu_count().max(1);
    Ok(AqlScratch {
        tmpring_size,
        rsrc,
        base,
        len,
        num_xcc: props.num_xcc.max(1),
        lane_bytes: scratch.max_private_segment_size,
        max_cu_id: cus - 1,
        max_wave_id: props
            .max_waves_per_simd
            .saturating_mul(props.simd_per_cu)
            .saturating_sub(1),
    })
}

/// The timeline (core's state machine) and its two signals.
#[derive(Debug)]
pub(crate) struct TimelineState {
    pub(crate) tl: Timeline,
    /// Primary and shadow signals, indexed by [`Which`].
    pub(crate) signals: [Arc<Signal>; 2],
    /// Command storage reused by submissions (they run under this lock): no allocation per
    /// submission once warm.
    pub(crate) scratch: Vec<Cmds>,
    /// The compute queue's timeline wait and signal of each signal, pre-encoded.
    pub(crate) pm4_sync: [SyncPackets; 2],
    /// The AQL launch prologue and epilogue of each signal (an AQL queue only).
    pub(crate) aql_sync: Option<[AqlSync; 2]>,
    /// The kernel-argument arena. Launches allocate from it while they build their
    /// submission, under this state's lock: a cell, not a second lock.
    pub(crate) kernargs: RefCell<Kernargs>,
    /// The compute ring's producer (its queue writes the ring only when lent it, under this
    /// state's lock).
    pub(crate) pm4_producer: RefCell<ComputeWriter>,
    /// The copy ring's producer.
    pub(crate) sdma_producer: RefCell<RingWriter<Sdma>>,
}

impl TimelineState {
    pub(crate) fn signal_of(&self, w: Which) -> &Arc<Signal> {
        match w {
            Which::Primary => &self.signals[0],
            Which::Shadow => &self.signals[1],
        }
    }

    /// The pre-encoded compute wait and signal of `w`'s signal.
    pub(crate) fn aql_sync_of(&self, w: Which) -> Result<&AqlSync> {
        let s = self
            .aql_sync
            .as_ref()
            .ok_or_else(|| Error::Protocol("an AQL launch on a PM4 queue".into()))?;
        Ok(match w {
            Which::Primary => &s[0],
            Which::Shadow => &s[1],
        })
    }

    pub(crate) fn pm4_sync_of(&self, w: Which) -> &SyncPackets {
        match w {
            Which::Primary => &self.pm4_sync[0],
            Which::Shadow => &self.pm4_sync[1],
        }
    }

    pub(crate) fn active(&self) -> &Arc<Signal> {
        self.signal_of(self.tl.active())
    }

    /// The next timeline value, and the timeline as it was before (put it back if nothing
    /// reached a ring). The value is taken before the ring is written (tinygrad #9550).
    pub(crate) fn take_value(&mut self) -> Result<(Timeline, TimelineValue)> {
        let saved = self.tl;
        let value = self
            .tl
            .signal()
            .map_err(|e| Error::InvalidArgument(format!("{e} (call synchronize)")))?;
        Ok((saved, value))
    }

    /// The host value the GPU has completed.
    pub(crate) fn done(&self) -> TimelineValue {
        // CAST: the GPU writes only the low 32 bits of the value.
        self.tl.completed(self.active().value() as u32)
    }

    /// The signal and 32-bit value to wait for to see `v`, or `None` when `v` is complete by
    /// construction (before the last wrap).
    pub(crate) fn target(&self, v: TimelineValue) -> Option<(Arc<Signal>, u32)> {
        let g = self.tl.gpu_value(v)?;
        Some((Arc::clone(self.signal_of(g.signal)), g.value))
    }
}

/// One submission being built: its timeline value and commands, under the timeline lock.
pub(crate) struct Submit<'a> {
    /// The timeline value this submission signals.
    pub(crate) value: TimelineValue,
    /// The commands between the driver's wait and signal.
    pub(crate) cmds: Cmds,
    state: &'a TimelineState,
    dev: &'a DeviceInner,
}

impl<'a> Submit<'a> {
    /// The kernel-argument arena (in the timeline state, whose lock the submission holds).
    ///
    /// # Errors
    /// [`Error::Protocol`] if it is already borrowed (a submission inside a submission).
    pub(crate) fn kernargs(&self) -> Result<core::cell::RefMut<'a, Kernargs>> {
        let state: &'a TimelineState = self.state;
        state
            .kernargs
            .try_borrow_mut()
            .map_err(|_| Error::Protocol("the kernarg arena is already in use".into()))
    }

    /// The value the GPU has completed.
    pub(crate) fn done(&self) -> TimelineValue {
        self.state.done()
    }

    /// Waits (keeping the timeline lock, which the wait does not need) until `v` completed.
    pub(crate) fn wait_done(&self, v: TimelineValue) -> Result<()> {
        match self.state.target(v) {
            None => Ok(()),
            Some((sig, val)) => sig.wait_with(u64::from(val), self.dev.kfd.wait_timeout(), &|| {
                self.dev.queue_states()
            }),
        }
    }
}

pub(crate) struct DeviceInner {
    pub(crate) kfd: Arc<KfdInner>,
    pub(crate) info: GpuInfo,
    pub(crate) arch: &'static ArchInfo,
    pub(crate) pages: Arc<SignalPages>,
    pub(crate) scratch: ScratchSizing,
    pub(crate) cwsr: CwsrSizes,
    pub(crate) options: DeviceOptions,
    /// Held while a submission takes its timeline value and writes the ring, so the order of
    /// values on the GPU is the order of submissions.
    pub(crate) timeline: Mutex<TimelineState>,
    pub(crate) compute: ComputeQueue,
    pub(crate) sdma: HwQueue<Sdma>,
    pub(crate) staging: Mutex<Option<Staging>>,
    pub(crate) profile: Mutex<Profile>,
    /// Whether launches are profiled: read on every launch without taking `profile`'s lock.
    pub(crate) profiling: AtomicBool,
    pub(crate) scratch_bo: Bo,
    /// Decoded submissions, when tracing is on.
    trace: Mutex<Option<Vec<String>>>,
    /// Whether `trace` is on: read on every submission without taking its lock.
    tracing: AtomicBool,
    /// The kernels loaded on the device, for AQL dispatches of recorded launches.
    pub(crate) kernels: Kernels,
    _doorbells: Mutex<Option<Arc<Mapping>>>,
}

impl core::fmt::Debug for DeviceInner {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Device")
            .field("gpu_id", &format_args!("{:#x}", self.info.gpu_id))
            .field("target", &self.info.target_name())
            .field("compute", &self.compute)
            .field("sdma", &self.sdma)
            .finish_non_exhaustive()
    }
}

/// One GPU, ready to run work: its VM acquired, a compute (PM4) and a copy (SDMA) queue, a
/// timeline, a kernel-argument arena and scratch.
///
/// `Device` is `Send + Sync` and cheap to clone: several threads may build and submit work at
/// once (a submission takes the timeline value and writes the ring under one lock).
///
/// # Submission contract
/// The safe calls ([`Device::copy`], [`Device::copy_in`], [`GpuBuffer::write`], ...) only make
/// the GPU touch memory they can check. Commands built by the caller
/// ([`Device::submit_compute`], [`Device::submit_pm4`], raw dwords, [`crate::Program::launch`])
/// can make the GPU read and write any address, which Rust cannot check; those calls are
/// `unsafe`, and their caller promises, for every address the commands (and the kernels and
/// indirect buffers they start) read or write:
/// - it lies in GPU memory mapped to this device that stays allocated until the returned
///   timeline value completes ([`GpuBuffer`] waits for that on drop), with room for every
///   access;
/// - it is not memory the driver owns: rings, read/write pointers, doorbells, the kernel
///   argument arena, staging buffers, bound command lists, timeline signals. The exceptions
///   are signals and command lists: commands may wait on any signal (the timeline's
///   included, as [`Device::timeline_target`] names them), may set a [`crate::Signal`] the
///   caller created (the driver reads and writes signals only atomically), and may run a
///   bound list or a graph's indirect buffer (whose own commands are under this contract)
///   that nobody patches or replays until the value completes;
/// - the CPU does not access it in a conflicting way until the value completes.
#[derive(Clone, Debug)]
pub struct Device {
    pub(crate) inner: Arc<DeviceInner>,
}

impl Device {
    /// Opens the `index`-th usable GPU with default sizes.
    ///
    /// # Errors
    /// [`Error::NoSuchDevice`], or any failure setting the GPU up (ACQUIRE_VM, allocations,
    /// CREATE_QUEUE, ...).
    pub fn open(kfd: &Kfd, index: usize) -> Result<Self> {
        Self::open_with(kfd, index, DeviceOptions::default())
    }

    /// Opens the GPU whose KFD id is `gpu_id`.
    ///
    /// # Errors
    /// As [`Device::open`].
    pub fn open_gpu_id(kfd: &Kfd, gpu_id: u32, options: DeviceOptions) -> Result<Self> {
        let index = kfd
            .gpus()
            .iter()
            .position(|g| g.gpu_id == gpu_id)
            .ok_or_else(|| Error::NoSuchDevice {
                wanted: format!("with gpu_id {gpu_id:#x}"),
                available: kfd.gpus().len(),
            })?;
        Self::open_with(kfd, index, options)
    }

    /// Opens the `index`-th usable GPU with `options`.
    ///
    /// # Errors
    /// As [`Device::open`].
    pub fn open_with(kfd: &Kfd, index: usize, options: DeviceOptions) -> Result<Self> {
        let kfdi = &kfd.inner;
        let info = kfdi
            .gpus()
            .get(index)
            .cloned()
            .ok_or_else(|| Error::NoSuchDevice {
                wanted: format!("#{index}"),
                available: kfdi.gpus().len(),
            })?;
        let core = &kfdi.core;
        let props = &info.properties;
        let scratch = ScratchSizing::for_node(props)
            .map_err(|e| Error::Protocol(format!("gpu {:#x} scratch: {e}", info.gpu_id)))?;
        let cwsr = CwsrSizes::for_node(props)
            .map_err(|e| Error::Protocol(format!("gpu {:#x} CWSR: {e}", info.gpu_id)))?;
        let arch = GfxTarget::from_kfd_version(props.gfx_target_version)
            .map_err(|e| {
                Error::Protocol(format!(
                    "gpu {:#x}: gfx_target_version {}: {e}",
                    info.gpu_id, props.gfx_target_version
                ))
            })?
            .info();
        core.acquire_vm(info.gpu_id, info.properties.drm_render_minor)?;
        let pages = kfdi.pages_for(info.gpu_id)?;
        let signals = [
            Arc::new(Signal::new(&pages, 0, Some(pages.signal_event()?))?),
            Arc::new(Signal::new(&pages, 0, Some(pages.signal_event()?))?),
        ];
        let pm4_sync = [
            SyncPackets::new(arch, &signals[0].signal_ref())?,
            SyncPackets::new(arch, &signals[1].signal_ref())?,
        ];
        let scratch_bo = core.alloc(
            info.gpu_id,
            if seeded!(ShortScratch) {
                (scratch.scratch_len / 64).next_multiple_of(4096)
            } else {
                scratch.scratch_len
            },
            MemoryKind::Vram,
            BoOptions::default(),
        )?;
        let kernargs = Kernargs::new(core.alloc(
            info.gpu_id,
            options.kernargs_size,
            MemoryKind::Vram,
            BoOptions {
                public: true,
                ..BoOptions::default()
            },
        )?)?;
        let doorbells = Mutex::new(None);
        let params = |ty, ring_size| QueueParams {
            core,
            gpu_id: info.gpu_id,
            ty,
            ring_size,
            cwsr: Some(&cwsr),
            doorbells: &doorbells,
        };
        let aql = options.compute_queue.resolve_aql(props.num_xcc.max(1));
        let (compute, pm4_producer) = if aql {
            let s = aql_scratch(arch, props, &scratch, &scratch_bo)?;
            let (q, w) = AqlQueue::create(
                &params(QueueType::Compute, options.compute_ring_size),
                &s,
                arch,
            )?;
            (ComputeQueue::Aql(q), ComputeWriter::Aql(w))
        } else {
            let (q, w) =
                HwQueue::<Pm4>::create(&params(QueueType::Compute, options.compute_ring_size))?;
            (ComputeQueue::Pm4(q), ComputeWriter::Pm4(w))
        };
        let (sdma, sdma_producer) =
            HwQueue::<Sdma>::create(&params(QueueType::Sdma, options.sdma_ring_size))?;
        let aql_sync = if aql {
            Some([pm4_sync[0].aql(arch)?, pm4_sync[1].aql(arch)?])
        } else {
            None
        };
        let timeline = TimelineState {
            aql_sync,
            scratch: Vec::new(),
            tl: Timeline::new(),
            pm4_sync,
            signals,
            kernargs: RefCell::new(kernargs),
            pm4_producer: RefCell::new(pm4_producer),
            sdma_producer: RefCell::new(sdma_producer),
        };
        // Poll the fault events once: a GPU that is already faulted fails here rather than at
        // the first wait (and a simulator syncs its engines with the new queues).
        if let Some(f) = pages.sleep(None, 0)? {
            return Err(Error::DeviceFault(Box::new(crate::error::WaitReport {
                waited: crate::error::Waited::DeviceOpen,
                signal_addr: GpuVa(0),
                expected: 0,
                seen: 0,
                waited_ms: 0,
                queues: vec![compute.state(), sdma.state()],
                fault_addr: f.addr,
                fault: Some(f.what),
            })));
        }
        debug!(
            "device gpu {:#x} ({}) open: {} CUs",
            info.gpu_id,
            info.target_name(),
            props.cu_count()
        );
        Ok(Self {
            inner: Arc::new(DeviceInner {
                kfd: Arc::clone(kfdi),
                info,
                arch,
                pages,
                scratch,
                cwsr,
                options,
                timeline: Mutex::new(timeline),
                compute,
                sdma,
                staging: Mutex::new(None),
                profile: Mutex::new(Profile::default()),
                profiling: AtomicBool::new(false),
                scratch_bo,
                trace: Mutex::new(None),
                tracing: AtomicBool::new(false),
                kernels: Kernels::default(),
                _doorbells: doorbells,
            }),
        })
    }

    /// KFD's id of this GPU.
    #[must_use]
    pub fn gpu_id(&self) -> u32 {
        self.inner.info.gpu_id
    }

    /// The topology entry (node, gpu_id, properties).
    #[must_use]
    pub fn info(&self) -> &GpuInfo {
        &self.inner.info
    }

    /// The architecture table command lists for this GPU are encoded with.
    #[must_use]
    pub fn arch(&self) -> &'static ArchInfo {
        self.inner.arch
    }

    /// The node's properties.
    #[must_use]
    pub fn properties(&self) -> &NodeProperties {
        &self.inner.info.properties
    }

    /// The gfx target name (`gfx1100`).
    #[must_use]
    pub fn target_name(&self) -> String {
        self.inner.info.target_name()
    }

    /// The scratch sizing (and `COMPUTE_TMPRING_SIZE`) of this GPU.
    #[must_use]
    pub fn scratch(&self) -> &ScratchSizing {
        &self.inner.scratch
    }

    /// The CWSR/EOP sizes the compute queue was created with.
    #[must_use]
    pub fn cwsr(&self) -> &CwsrSizes {
        &self.inner.cwsr
    }

    /// The deadline of this device's waits (process-wide, see [`Kfd::set_wait_timeout`]).
    #[must_use]
    pub fn wait_timeout(&self) -> Duration {
        self.inner.kfd.wait_timeout()
    }

    /// Allocates `size` bytes of `kind` memory, mapped for the CPU and this GPU at one address.
    ///
    /// # Errors
    /// [`Error::OutOfMemory`] when the pool cannot hold it; [`Error::InvalidArgument`] for size 0.
    pub fn alloc(&self, size: u64, kind: BufferKind) -> Result<GpuBuffer> {
        if size == 0 {
            return Err(Error::InvalidArgument("buffer size 0".into()));
        }
        let (mk, opts) = match kind {
            BufferKind::Vram => (MemoryKind::Vram, BoOptions::default()),
            BufferKind::VramCpuVisible => (
                MemoryKind::Vram,
                BoOptions {
                    public: true,
                    ..BoOptions::default()
                },
            ),
            BufferKind::Gtt => (MemoryKind::Gtt, BoOptions::default()),
            BufferKind::GttUncached => (
                MemoryKind::Gtt,
                BoOptions {
                    uncached: true,
                    ..BoOptions::default()
                },
            ),
            BufferKind::Host => (MemoryKind::Host, BoOptions::default()),
        };
        let bo = self.inner.kfd.core.alloc(self.gpu_id(), size, mk, opts)?;
        Ok(GpuBuffer {
            bo: Arc::new(bo),
            len: size,
            kind,
            owner: Arc::clone(&self.inner),
            peers: Mutex::new(Vec::new()),
        })
    }

    /// A new signal (no KFD event: waits on it poll) with initial `value`.
    ///
    /// # Errors
    /// [`Error::Exhausted`] when the signal page is full.
    pub fn new_signal(&self, value: u64) -> Result<Signal> {
        Signal::new(&self.inner.pages, value, None)
    }

    /// A new signal with its own KFD event: the GPU interrupts host waiters when it writes it.
    ///
    /// # Errors
    /// [`Error::Exhausted`] when the signal page or the event slots are full.
    pub fn new_event_signal(&self, value: u64) -> Result<Signal> {
        let event = self.inner.pages.signal_event()?;
        Signal::new(&self.inner.pages, value, Some(event))
    }

    /// Waits until `signal` reaches `value` (deadline: [`Device::wait_timeout`]).
    ///
    /// # Errors
    /// [`Error::Timeout`] or [`Error::DeviceFault`] with the queues' pointers.
    pub fn wait(&self, signal: &Signal, value: u64) -> Result<()> {
        let inner = &self.inner;
        signal.wait_with(value, inner.kfd.wait_timeout(), &|| inner.queue_states())
    }

    /// The last timeline value submitted (host value: monotonic across wraps).
    #[must_use]
    pub fn last_value(&self) -> TimelineValue {
        lock(&self.inner.timeline).tl.last_signaled()
    }

    /// The timeline value the GPU has completed.
    #[must_use]
    pub fn completed_value(&self) -> TimelineValue {
        lock(&self.inner.timeline).done()
    }

    /// What another queue waits for to see timeline value `value` of this device: the signal
    /// and the 32-bit value, or `None` when it completed before the last wrap.
    #[must_use]
    pub fn timeline_target(&self, value: TimelineValue) -> Option<(SignalRef, u32)> {
        lock(&self.inner.timeline)
            .target(value)
            .map(|(s, v)| (s.signal_ref(), v))
    }

    /// Restarts the timeline so the next submission signals GPU value `next` (tests: start
    /// near the 32-bit wrap, as tinygrad's rollover test). Waits for everything submitted
    /// first; `next` may not be below the next value now.
    ///
    /// # Errors
    /// As [`Device::synchronize`]; [`Error::InvalidArgument`] for a value that goes backwards
    /// or does not fit 32 bits.
    pub fn set_timeline_value(&self, next: u64) -> Result<()> {
        self.synchronize()?;
        let mut st = lock(&self.inner.timeline);
        let cur = st.tl.next_value().get();
        let n32 = u32::try_from(next).ok().filter(|&n| n >= 1 && next >= cur);
        let Some(n32) = n32 else {
            return Err(Error::InvalidArgument(format!(
                "timeline value {next} (must be {cur} ..= 2^32 - 1)"
            )));
        };
        st.tl = Timeline::starting_at(n32);
        st.signals[0].set(u64::from(n32 - 1));
        Ok(())
    }

    /// Waits until every submission so far has completed, then wraps the timeline if it passed
    /// 2^31.
    ///
    /// # Errors
    /// [`Error::Timeout`] or [`Error::DeviceFault`].
    pub fn synchronize(&self) -> Result<()> {
        self.inner.synchronize()
    }

    /// Submits raw PM4 dwords on the compute queue, wrapped in a wait for the previous timeline
    /// value and a signal of the next one; returns that value.
    ///
    /// # Safety
    /// The [submission contract](Device#submission-contract), for every packet of `dwords`.
    ///
    /// # Errors
    /// Ring errors, a submission too large for the ring, faults while waiting for space.
    pub unsafe fn submit_compute_raw(&self, dwords: &[u32]) -> Result<TimelineValue> {
        self.inner.submit_compute(|s| s.cmds.raw(dwords))
    }

    /// Submits raw SDMA dwords (whole packets) on the copy queue, wrapped like
    /// [`Device::submit_compute_raw`].
    ///
    /// # Safety
    /// As [`Device::submit_compute_raw`].
    ///
    /// # Errors
    /// As [`Device::submit_compute_raw`].
    pub unsafe fn submit_copy_raw(&self, dwords: &[u32]) -> Result<TimelineValue> {
        self.inner.submit_copy(|s| s.cmds.raw(dwords))
    }

    /// Builds one compute submission with `body` (between the timeline wait and signal, which
    /// the driver adds) and submits it; returns its timeline value.
    ///
    /// # Safety
    /// The [submission contract](Device#submission-contract), for every command `body` adds.
    ///
    /// # Errors
    /// Encoder errors from `body`, ring errors, faults while waiting for ring space.
    pub unsafe fn submit_compute(
        &self,
        body: impl FnOnce(&mut Cmds) -> Result<()>,
    ) -> Result<TimelineValue> {
        self.inner.submit_compute(|s| body(&mut s.cmds))
    }

    /// Builds one copy submission with `body`, like [`Device::submit_compute`].
    ///
    /// # Safety
    /// As [`Device::submit_compute`].
    ///
    /// # Errors
    /// As [`Device::submit_compute`].
    pub unsafe fn submit_copy(
        &self,
        body: impl FnOnce(&mut Cmds) -> Result<()>,
    ) -> Result<TimelineValue> {
        self.inner.submit_copy(|s| body(&mut s.cmds))
    }

    /// Builds work for both queues under ONE timeline value `v` and submits it: the copy
    /// ring gets `[wait timeline >= v-1] copy` (no timeline signal), the compute ring
    /// `[wait timeline >= v-1] compute [signal v]`. The two parts run side by side (they may
    /// wait on each other through signals of their own, which two separate submissions could
    /// not do: each would wait for the other's timeline value). `v` completes when the
    /// compute part does: to make it cover the copy part too, end `copy` with a signal and
    /// `compute` with a wait on it (as a [`crate::graph::Graph`] replay does). Returns `v`.
    ///
    /// # Safety
    /// The [submission contract](Device#submission-contract), for every command of both
    /// parts, with "until `v` completes" read as "until the part that uses it completed".
    ///
    /// # Errors
    /// Encoder errors from either body and ring errors, among them [`Error::Timeout`] when the
    /// compute ring stays too full for its part (nothing submitted, the timeline unchanged:
    /// the compute ring's room is waited for before either ring is written);
    /// [`Error::PartialSubmit`] if the compute ring refused its part after the copy ring took
    /// its own (the device cannot complete `v` and must be opened again).
    pub unsafe fn submit_pair(
        &self,
        copy: impl FnOnce(&mut Cmds) -> Result<()>,
        compute: impl FnOnce(&mut Cmds) -> Result<()>,
    ) -> Result<TimelineValue> {
        self.inner
            .submit_pair(|s| copy(&mut s.cmds), |s| compute(&mut s.cmds))
    }

    /// Waits until the submission that got timeline `value` (from a submit call) completed.
    ///
    /// # Errors
    /// [`Error::Timeout`] or [`Error::DeviceFault`].
    pub fn wait_value(&self, value: TimelineValue) -> Result<()> {
        self.inner.wait_value(value)
    }

    /// Whether the compute queue is an AQL queue ([`ComputeQueueKind`]).
    #[must_use]
    pub fn is_aql(&self) -> bool {
        matches!(self.inner.compute, ComputeQueue::Aql(_))
    }

    /// XCCs of this GPU (the node's `num_xcc`, at least 1).
    #[must_use]
    pub fn num_xcc(&self) -> u32 {
        self.inner.info.properties.num_xcc.max(1)
    }

    /// KFD's ids of the compute and the copy queue.
    #[must_use]
    pub fn queue_ids(&self) -> (u32, u32) {
        (self.inner.compute.queue_id(), self.inner.sdma.queue_id())
    }

    /// The queues' read and write pointers.
    #[must_use]
    pub fn queue_states(&self) -> Vec<QueueState> {
        self.inner.queue_states()
    }

    /// Turns tracing on or off: while on, every submission is decoded (one line per packet,
    /// prefixed with the queue and timeline value) and kept for [`Device::take_trace`].
    pub fn set_trace(&self, on: bool) {
        let mut t = lock(&self.inner.trace);
        *t = on.then(Vec::new);
        self.inner.tracing.store(on, Ordering::Relaxed);
    }

    /// The decoded packets traced since the last call.
    #[must_use]
    pub fn take_trace(&self) -> Vec<String> {
        lock(&self.inner.trace)
            .as_mut()
            .map(core::mem::take)
            .unwrap_or_default()
    }
}
