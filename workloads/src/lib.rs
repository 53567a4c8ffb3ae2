//! # hcq-workloads
//!
//! The core workloads that `hcq bench` (in the `hcq` binary) and this crate's criterion benches
//! (`cargo bench -p hcq-workloads --bench packets`) both time, so the two report the same work. An
//! internal crate (not published): it exists so the benches and the binary share code without
//! including each other's source files.
//!
//! It depends only on `hcq_core` and `std`. Each workload is built once (`new`, which
//! runs it once and returns the error if it fails), then its `run` is the timed operation. `run`
//! returns a small value (a length, a pointer) for the caller to pass through
//! [`core::hint::black_box`], so the optimizer cannot drop the work.
#![deny(missing_docs)]

use core::hint::black_box;

use hcq_core::addr::GpuVa;
use hcq_core::arch::{ArchInfo, GFX11};
use hcq_core::cmd::{CmdError, ExecCmd, Pm4List, SdmaList, SignalCmd, WaitCmd};
use hcq_core::pm4::{self, Program};
use hcq_core::ring::{Pm4, Producer, RingError, RingLayout, RingPtr};
use hcq_core::signal::SignalRef;
use hcq_core::sync::atomic::{AtomicU64, Ordering};
use hcq_core::timeline::{ArenaError, TimelineArena, TimelineValue};

/// The family the workloads encode for (the seed's RDNA3 encodings).
pub const ARCH: &ArchInfo = &GFX11;
/// Dword capacity of the launch list (a launch is 105).
pub const LAUNCH_CAP: usize = 128;
/// Dwords of one launch: wait (7) + memory barrier (15) + exec (67) + signal with mailbox (16).
pub const LAUNCH_DWORDS: usize = 105;
/// Bytes of the PM4 ring the submit workload writes.
pub const RING_BYTES: u64 = 1 << 20;
/// Bytes the SDMA copy workload copies (16 COPY_LINEAR packets of 4 MiB).
pub const SDMA_COPY_BYTES: u64 = 64 << 20;
/// Launches in the stream the decode workload decodes.
pub const DECODE_LAUNCHES: usize = 256;

/// Errors a workload can hit while being set up (never expected: the inputs are fixed).
#[derive(Debug)]
#[non_exhaustive]
pub enum WorkError {
    /// A command-list builder or patch refused.
    Cmd(CmdError),
    /// The ring refused.
    Ring(RingError),
    /// The arena refused.
    Arena(ArenaError),
    /// The launch is not the expected size, or a decode failed.
    Unexpected(&'static str),
    /// The simulator refused or faulted (its message).
    Sim(String),
}

impl core::fmt::Display for WorkError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            WorkError::Cmd(e) => write!(f, "command list: {e}"),
            WorkError::Ring(e) => write!(f, "ring: {e}"),
            WorkError::Arena(e) => write!(f, "arena: {e}"),
            WorkError::Unexpected(what) => write!(f, "benchmark setup: {what}"),
            WorkError::Sim(msg) => write!(f, "simulator: {msg}"),
        }
    }
}

impl core::error::Error for WorkError {}

impl From<CmdError> for WorkError {
    fn from(e: CmdError) -> Self {
        WorkError::Cmd(e)
    }
}

impl From<RingError> for WorkError {
    fn from(e: RingError) -> Self {
        WorkError::Ring(e)
    }
}

impl From<ArenaError> for WorkError {
    fn from(e: ArenaError) -> Self {
        WorkError::Arena(e)
    }
}

/// The kernel every launch runs (no dispatch pointer, as most tinygrad kernels).
pub const PROGRAM: Program = Program {
    prog_addr: GpuVa(0x7f00_1000_0000),
    scratch_addr: GpuVa(0x7f00_2000_0000),
    tmpring_size: 0x0020_0010,
    rsrc1: 0x0060_00c1,
    rsrc2: 0x0000_0090,
    rsrc3: 0,
    dispatch: None,
    private_segment_buffer: None,
    flat_scratch_init: None,
};
/// Kernargs address of every launch.
pub const KERNARGS: GpuVa = GpuVa(0x7f00_3000_0000);
/// The queue's timeline signal, with a KFD event (so `signal` is two RELEASE_MEMs, 16 dwords).
pub const TIMELINE: SignalRef = SignalRef {
    addr: 0x7f00_4000_0000,
    event_mailbox_ptr: 0x7f00_5000_0008,
    event_id: 7,
};
/// Launch dims.
pub const GLOBAL: [u32; 3] = [64, 1, 1];
/// Work-group size.
pub const LOCAL: [u32; 3] = [256, 1, 1];

/// The launch the seed's `AMDProgram.__call__` builds: wait for the previous timeline value,
/// memory barrier, exec, signal the new value.
#[inline]
pub fn build_launch<const N: usize, const C: usize>(
    l: &mut Pm4List<N, C>,
    value: u64,
) -> Result<(WaitCmd, ExecCmd, SignalCmd), CmdError> {
    l.clear();
    // CAST: timeline values on the GPU are 32-bit (the wrap happens before 2^31).
    let w = l.wait(&TIMELINE, (value as u32).wrapping_sub(1))?;
    l.memory_barrier()?;
    let (e, _) = l.exec(&PROGRAM, KERNARGS, GLOBAL, LOCAL)?;
    let s = l.signal(&TIMELINE, value)?;
    Ok((w, e, s))
}

/// Builds one launch into a reused command list.
#[derive(Debug)]
pub struct BuildLaunch {
    list: Pm4List<LAUNCH_CAP, 8>,
    value: u64,
}

impl BuildLaunch {
    /// A fresh list; checks the launch is [`LAUNCH_DWORDS`] long.
    ///
    /// # Errors
    /// If the encoders refuse or the size is not 105 dwords.
    pub fn new() -> Result<Self, WorkError> {
        let mut s = Self {
            list: Pm4List::new(ARCH),
            value: 1,
        };
        s.run()?;
        if s.list.as_dwords().len() != LAUNCH_DWORDS {
            return Err(WorkError::Unexpected("a launch is not 105 dwords"));
        }
        Ok(s)
    }

    /// Clears the list and builds one launch (the timeline value changes every time).
    ///
    /// # Errors
    /// As [`build_launch`].
    #[inline]
    pub fn run(&mut self) -> Result<usize, CmdError> {
        self.value = self.value.wrapping_add(1);
        build_launch(&mut self.list, black_box(self.value))?;
        Ok(self.list.as_dwords().len())
    }

    /// The launch's dwords.
    #[must_use]
    pub fn dwords(&self) -> &[u32] {
        self.list.as_dwords()
    }
}

/// A launch's dwords, built once (the data the ring and memcpy workloads copy).
///
/// # Errors
/// As [`BuildLaunch::new`].
pub fn launch_dwords() -> Result<Vec<u32>, WorkError> {
    Ok(BuildLaunch::new()?.dwords().to_vec())
}

/// Reserve + copy + publish one launch into a 1 MiB PM4 ring, then the doorbell store.
///
/// The GPU is modelled as keeping up: when the producer finds the ring full, the read pointer
/// is set to the write pointer and the submit is retried (once per ~2500 submits; the common
/// path reads only the producer's cached read pointer, as the driver's does).
#[derive(Debug)]
pub struct RingSubmit {
    ring: Vec<u32>,
    producer: Producer<Pm4>,
    rptr: AtomicU64,
    wptr: AtomicU64,
    doorbell: AtomicU64,
    data: Vec<u32>,
}

impl RingSubmit {
    /// An empty 1 MiB ring and the launch to submit.
    ///
    /// # Errors
    /// If the ring layout or the launch cannot be built.
    pub fn new() -> Result<Self, WorkError> {
        let layout = RingLayout::<Pm4>::new(RING_BYTES)?;
        let mut s = Self {
            ring: vec![0; layout.size_dwords()],
            producer: Producer::new(layout, RingPtr::new(0))?,
            rptr: AtomicU64::new(0),
            wptr: AtomicU64::new(0),
            doorbell: AtomicU64::new(0),
            data: launch_dwords()?,
        };
        s.run()?;
        Ok(s)
    }

    /// Submits the launch once; returns the doorbell value.
    ///
    /// # Errors
    /// As [`Producer::submit`] (never, with a consumer that keeps up).
    #[inline]
    pub fn run(&mut self) -> Result<u64, RingError> {
        let db = match self
            .producer
            .submit(&mut self.ring[..], &self.rptr, &self.wptr, &self.data)
        {
            Err(RingError::WouldOverrun { .. }) => {
                self.rptr
                    .store(self.producer.write_pointer().get(), Ordering::Release);
                self.producer
                    .submit(&mut self.ring[..], &self.rptr, &self.wptr, &self.data)?
            }
            other => other?,
        };
        self.doorbell.store(db.value(), Ordering::Release);
        Ok(db.value())
    }

    /// Dwords of ring memory.
    #[must_use]
    pub fn ring_dwords(&self) -> usize {
        self.ring.len()
    }
}

/// The floor for [`RingSubmit`]: a bare copy of the same 105 dwords into the same ring at the
/// same advancing positions (no reservation, no pointers, no doorbell).
#[derive(Debug)]
pub struct Memcpy105 {
    ring: Vec<u32>,
    pos: usize,
    data: Vec<u32>,
}

impl Memcpy105 {
    /// A 1 MiB destination and the launch.
    ///
    /// # Errors
    /// If the launch cannot be built.
    pub fn new() -> Result<Self, WorkError> {
        let dwords = usize::try_from(RING_BYTES / 4)
            .map_err(|_| WorkError::Unexpected("ring size does not fit usize"))?;
        Ok(Self {
            ring: vec![0; dwords],
            pos: 0,
            data: launch_dwords()?,
        })
    }

    /// Copies the launch once; returns where it went.
    #[inline]
    pub fn run(&mut self) -> usize {
        let n = self.data.len();
        let at = if self.pos + n > self.ring.len() {
            0
        } else {
            self.pos
        };
        if let Some(dst) = self.ring.get_mut(at..at + n) {
            dst.copy_from_slice(&self.data);
        }
        self.pos = at + n;
        at
    }
}

/// The three patches of a built launch.
#[derive(Debug)]
pub struct PatchLaunch {
    list: Pm4List<LAUNCH_CAP, 8>,
    wait: WaitCmd,
    exec: ExecCmd,
    signal: SignalCmd,
    i: u32,
}

impl PatchLaunch {
    /// A built launch and its handles.
    ///
    /// # Errors
    /// As [`build_launch`], and if a patch refuses.
    pub fn new() -> Result<Self, WorkError> {
        let mut list = Pm4List::new(ARCH);
        let (wait, exec, signal) = build_launch(&mut list, 1)?;
        let mut s = Self {
            list,
            wait,
            exec,
            signal,
            i: 0,
        };
        s.update_exec()?;
        s.update_wait()?;
        s.update_signal()?;
        Ok(s)
    }

    /// New launch dims (the seed's `update_exec`).
    ///
    /// # Errors
    /// As [`Pm4List::update_exec`].
    #[inline]
    pub fn update_exec(&mut self) -> Result<u32, CmdError> {
        self.i = self.i.wrapping_add(1);
        self.list
            .update_exec(&self.exec, [black_box(self.i), 1, 1], LOCAL)?;
        Ok(self.i)
    }

    /// New wait value (the seed's `update_wait` with `value` only, as a graph replay does).
    ///
    /// # Errors
    /// As [`Pm4List::update_wait`].
    #[inline]
    pub fn update_wait(&mut self) -> Result<u32, CmdError> {
        self.i = self.i.wrapping_add(1);
        self.list
            .update_wait(&self.wait, None, Some(black_box(self.i)))?;
        Ok(self.i)
    }

    /// New signal value (the seed's `update_signal` with `value` only).
    ///
    /// # Errors
    /// As [`Pm4List::update_signal`].
    #[inline]
    pub fn update_signal(&mut self) -> Result<u32, CmdError> {
        self.i = self.i.wrapping_add(1);
        self.list
            .update_signal(&self.signal, None, Some(black_box(u64::from(self.i))))?;
        Ok(self.i)
    }
}

/// One 64 MiB SDMA copy built into a reused list (GCR + 16 COPY_LINEAR + GCR, 122 dwords).
#[derive(Debug)]
pub struct SdmaCopy {
    list: SdmaList<256, 8, 64>,
    i: u64,
}

impl SdmaCopy {
    /// A fresh list.
    ///
    /// # Errors
    /// If the encoder refuses.
    pub fn new() -> Result<Self, WorkError> {
        let mut s = Self {
            list: SdmaList::new(ARCH),
            i: 0,
        };
        s.run()?;
        Ok(s)
    }

    /// Clears the list and builds the copy; returns its dwords.
    ///
    /// # Errors
    /// As [`SdmaList::copy`].
    #[inline]
    pub fn run(&mut self) -> Result<usize, CmdError> {
        self.i = self.i.wrapping_add(0x1000);
        self.list.clear();
        let src = black_box(GpuVa(0x7e00_0000_0000 + self.i));
        let dst = black_box(GpuVa(0x7d00_0000_0000));
        self.list.copy(dst, src, black_box(SDMA_COPY_BYTES))?;
        Ok(self.list.as_dwords().len())
    }
}

/// Decodes a PM4 stream of [`DECODE_LAUNCHES`] launches, packet by packet.
#[derive(Debug)]
pub struct Decode {
    stream: Vec<u32>,
}

impl Decode {
    /// The stream; checks it decodes.
    ///
    /// # Errors
    /// If the launch cannot be built or the stream does not decode.
    pub fn new() -> Result<Self, WorkError> {
        let one = launch_dwords()?;
        let s = Self {
            stream: one.repeat(DECODE_LAUNCHES),
        };
        if s.run() != Some(DECODE_LAUNCHES * 18) {
            return Err(WorkError::Unexpected(
                "the launch stream does not decode into 18 packets per launch",
            ));
        }
        Ok(s)
    }

    /// Dwords in the stream (the unit of the throughput).
    #[must_use]
    pub fn dwords(&self) -> usize {
        self.stream.len()
    }

    /// Decodes the whole stream; the number of packets, or `None` on a decode error.
    #[inline]
    pub fn run(&self) -> Option<usize> {
        let mut n = 0;
        for p in pm4::decode(black_box(&self.stream)) {
            black_box(p.ok()?);
            n += 1;
        }
        Some(n)
    }
}

/// One kernargs allocation from a 16 MiB [`TimelineArena`], tagged with a new timeline value
/// each time, with completion trailing 32 values behind (a GPU a few launches behind).
#[derive(Debug)]
pub struct ArenaAlloc {
    arena: TimelineArena<64>,
    value: u64,
}

/// Bytes per arena allocation (a small kernel's kernargs).
pub const ARENA_ALLOC_BYTES: u64 = 256;

impl ArenaAlloc {
    /// An empty arena.
    ///
    /// # Errors
    /// If the arena refuses its capacity or the first allocation.
    pub fn new() -> Result<Self, WorkError> {
        let mut s = Self {
            arena: TimelineArena::new(16 << 20)?,
            value: 0,
        };
        s.run()?;
        Ok(s)
    }

    /// Allocates once; returns the offset.
    ///
    /// # Errors
    /// As [`TimelineArena::alloc`] (never here: completion keeps up).
    #[inline]
    pub fn run(&mut self) -> Result<u64, ArenaError> {
        self.value = self.value.wrapping_add(1);
        let tag = TimelineValue::new(self.value);
        let done = TimelineValue::new(self.value.saturating_sub(32));
        let r = self
            .arena
            .alloc(black_box(ARENA_ALLOC_BYTES), 16, tag, done)?;
        Ok(r.offset)
    }
}
