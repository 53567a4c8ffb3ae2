//! Hardware queues: a ring, its rptr/wptr page and doorbell, created with CREATE_QUEUE, fed by
//! core's ring producer with back-pressure (the driver waits for the read pointer, with a
//! deadline, instead of overwriting what the GPU has not read).

use crate::buffer::{Bo, BoOptions};
use crate::error::{Error, MemoryKind, QueueState, Result, WaitReport};
use crate::kfd_core::KfdCore;
use crate::mem::{Doorbell, Mapping, RingLease, RingView};
use crate::signal::SignalPages;
use crate::sync::lock;
use core::sync::atomic::{AtomicU64, Ordering};
use core::time::Duration;
use hcq_core::addr::GpuVa;
use hcq_core::kfd::topology::CwsrSizes;
use hcq_core::kfd::{self as abi};
use hcq_core::ring::{Producer, RingError, RingKind, RingLayout, RingMemory, RingPtr};
use hcq_core::sdma;
use log::{debug, trace};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Byte offset of the write pointer in the queue's pointer page.
const WPTR_OFFSET: u64 = 0;
/// Byte offset of the read pointer in the queue's pointer page.
const RPTR_OFFSET: u64 = 8;

/// What the queue is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum QueueType {
    /// PM4 compute queue (pointers in dwords).
    Compute,
    /// SDMA copy queue (pointers in bytes).
    Sdma,
}

/// A ring's producer and the one lease on the ring's memory ([`RingLease`]): the only way to
/// write the ring. [`HwQueue::create`] makes one per queue; the caller keeps it.
#[derive(Debug)]
pub(crate) struct RingWriter<K: RingKind> {
    /// Core's producer (pointers, reservations).
    pub(crate) producer: Producer<K>,
    lease: RingLease,
}

/// One KFD user queue of kind `K` (`Pm4` or `Sdma`).
///
/// Its ring's writer is handed out by [`HwQueue::create`] and kept by the caller: the
/// device keeps both queues' writers in its timeline state, under the one lock every
/// submission holds, and lends the writer to [`HwQueue::submit`] (no second lock per
/// submission). A writer lends views of its own ring only (its lease says which).
pub(crate) struct HwQueue<K: RingKind> {
    name: String,
    core: Arc<KfdCore>,
    queue_id: u32,
    /// The engine's read pointer as last seen, monotonic (what the producer checks against).
    rptr_seen: AtomicU64,
    doorbell: Doorbell,
    // Buffers last: they are freed after DESTROY_QUEUE (Drop below runs first).
    ring: Bo,
    ptrs: Bo,
    _eop: Option<Bo>,
    _cwsr: Option<Bo>,
    /// The ring kind (the producer that writes it is kept by the caller).
    _kind: core::marker::PhantomData<K>,
}

impl<K: RingKind> core::fmt::Debug for HwQueue<K> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("HwQueue")
            .field("name", &self.name)
            .field("queue_id", &self.queue_id)
            .field("rptr", &self.rptr())
            .field("wptr", &self.wptr())
            .finish_non_exhaustive()
    }
}

/// Everything CREATE_QUEUE needs besides the queue's own buffers.
pub(crate) struct QueueParams<'a> {
    pub core: &'a Arc<KfdCore>,
    pub gpu_id: u32,
    pub ty: QueueType,
    pub ring_size: u64,
    pub cwsr: Option<&'a CwsrSizes>,
    /// The device's doorbell page, mapped by the first queue.
    pub doorbells: &'a Mutex<Option<Arc<Mapping>>>,
}

/// The ring's layout and its size as CREATE_QUEUE takes it, or why KFD would refuse it.
fn ring_layout<K: RingKind>(ring_size: u64) -> Result<(RingLayout<K>, u32)> {
    let layout = RingLayout::<K>::new(ring_size)
        .map_err(|e| Error::InvalidArgument(format!("{} ring: {e}", K::NAME)))?;
    if ring_size < u64::from(abi::KFD_MIN_QUEUE_RING_SIZE) {
        return Err(Error::InvalidArgument(format!(
            "{} ring of {} bytes: KFD needs at least {} (it would read past a smaller ring)",
            K::NAME,
            ring_size,
            abi::KFD_MIN_QUEUE_RING_SIZE
        )));
    }
    let size32 = u32::try_from(ring_size).map_err(|_| {
        Error::InvalidArgument(format!("ring size {ring_size:#x} does not fit 32 bits"))
    })?;
    Ok((layout, size32))
}

/// A compute queue's end-of-pipe buffer and context save area (CWSR), with the control-stack
/// and save-area sizes CREATE_QUEUE takes; none for SDMA queues or a node without CWSR.
pub(crate) fn save_areas(p: &QueueParams<'_>) -> Result<(Option<Bo>, Option<Bo>, u32, u32)> {
    Ok(match (p.ty, p.cwsr) {
        (QueueType::Compute, Some(c)) if c.eop_buffer_size != 0 => {
            let eop = p.core.alloc(
                p.gpu_id,
                u64::from(c.eop_buffer_size),
                MemoryKind::Vram,
                BoOptions::default(),
            )?;
            let cwsr_len = c.min_cwsr_mapping_size().ok_or_else(|| {
                Error::Protocol(format!(
                    "CWSR area for cwsr_size {:#x} overflows",
                    c.cwsr_size
                ))
            })?;
            let cwsr = p
                .core
                .alloc(p.gpu_id, cwsr_len, MemoryKind::Vram, BoOptions::default())?;
            (Some(eop), Some(cwsr), c.ctl_stack_size, c.cwsr_size)
        }
        (QueueType::Compute, Some(c)) => (None, None, c.ctl_stack_size, 0),
        _ => (None, None, 0, 0),
    })
}

/// The device's doorbell page: mapped by the first queue (at the slice holding
/// `doorbell_offset`), shared by the rest.
pub(crate) fn doorbell_page(p: &QueueParams<'_>, doorbell_offset: u64) -> Result<Arc<Mapping>> {
    let mut db = lock(p.doorbells);
    if let Some(m) = db.as_ref() {
        return Ok(Arc::clone(m));
    }
    let m = Arc::new(Mapping::new(
        &p.core.sys,
        "mmap doorbells",
        abi::KFD_DOORBELL_SLICE_SIZE,
        hcq_core::kfd::Prot::READ_WRITE,
        hcq_core::kfd::MapKind::File {
            fd: p.core.fd,
            offset: abi::doorbell_slice_offset(doorbell_offset),
        },
    )?);
    *db = Some(Arc::clone(&m));
    Ok(m)
}

/// CREATE_QUEUE's arguments for a queue of `p`: `queue_type`, its ring at `ring_va` of
/// `ring_size` bytes, its read and write pointers at `rptr`/`wptr`, and the save areas
/// [`save_areas`] made (`eop`, `cwsr`, the control-stack and save-area sizes).
pub(crate) fn create_queue_args(
    p: &QueueParams<'_>,
    queue_type: u32,
    (ring_va, ring_size): (u64, u32),
    (rptr, wptr): (u64, u64),
    (eop, cwsr): (Option<&Bo>, Option<&Bo>),
    (ctl_stack_size, ctx_size): (u32, u32),
) -> abi::CreateQueueArgs {
    abi::CreateQueueArgs {
        ring_base_address: ring_va,
        write_pointer_address: wptr,
        read_pointer_address: rptr,
        ring_size,
        gpu_id: p.gpu_id,
        queue_type,
        queue_percentage: abi::KFD_MAX_QUEUE_PERCENTAGE,
        queue_priority: 7,
        eop_buffer_address: eop.map_or(0, Bo::va),
        eop_buffer_size: eop.map_or(0, Bo::size),
        ctx_save_restore_address: cwsr.map_or(0, Bo::va),
        ctx_save_restore_size: ctx_size,
        ctl_stack_size,
        ..Default::default()
    }
}

impl<K: RingKind> HwQueue<K> {
    /// Creates the queue; returns it and its ring's producer.
    pub(crate) fn create(p: &QueueParams<'_>) -> Result<(Self, RingWriter<K>)> {
        let (layout, ring_size) = ring_layout::<K>(p.ring_size)?;
        let uncached = BoOptions {
            uncached: true,
            ..BoOptions::default()
        };
        let ring = p
            .core
            .alloc(p.gpu_id, p.ring_size, MemoryKind::Gtt, uncached)?;
        // Touch every page of the ring once now, before the queue exists, so submissions do
        // not take the first-touch page fault of its CPU mapping: one per 4 KiB, about 1 us
        // here, so ~60 ns a launch on the ring's first lap (a launch writes ~250 bytes). The
        // AQL queue does the same for its ring and PM4 buffers.
        for w in ring.mapping().u32s().iter().step_by(4096 / 4) {
            w.store(0, Ordering::Relaxed);
        }
        let ptrs = p.core.alloc(p.gpu_id, 4096, MemoryKind::Gtt, uncached)?;
        let (eop, cwsr, ctl_stack_size, ctx_size) = save_areas(p)?;
        let ptr_base = ptrs.va();
        let queue_type = match p.ty {
            QueueType::Compute => abi::KFD_IOC_QUEUE_TYPE_COMPUTE,
            QueueType::Sdma => abi::KFD_IOC_QUEUE_TYPE_SDMA,
        };
        let mut args = create_queue_args(
            p,
            queue_type,
            (ring.va(), ring_size),
            (ptr_base + RPTR_OFFSET, ptr_base + WPTR_OFFSET),
            (eop.as_ref(), cwsr.as_ref()),
            (ctl_stack_size, ctx_size),
        );
        p.core
            .ioctl(abi::AMDKFD_IOC_CREATE_QUEUE, &mut args)
            .map_err(|e| Error::sys("CREATE_QUEUE", e))?;
        if args.ring_size != ring_size {
            destroy_queue(p.core, args.queue_id);
            return Err(Error::Protocol(format!(
                "CREATE_QUEUE changed the ring size from {ring_size} to {} bytes",
                args.ring_size
            )));
        }
        let name = format!(
            "{} queue {} (gpu {:#x})",
            match p.ty {
                QueueType::Compute => "compute",
                QueueType::Sdma => "sdma",
            },
            args.queue_id,
            p.gpu_id
        );
        debug!("{name}: doorbell offset {:#x}", args.doorbell_offset);
        // Destroy the queue if anything below fails.
        let guard = DestroyGuard {
            core: p.core,
            queue_id: args.queue_id,
            armed: true,
        };
        let page = doorbell_page(p, args.doorbell_offset)?;
        let doorbell = Doorbell::new(page, abi::doorbell_in_slice(args.doorbell_offset))
            .ok_or_else(|| {
                Error::Protocol(format!(
                    "CREATE_QUEUE doorbell offset {:#x} is not an aligned slot",
                    args.doorbell_offset
                ))
            })?;
        let start = ptrs
            .mapping()
            .u64_at(WPTR_OFFSET)
            .map_or(0, |w| w.load(Ordering::Acquire));
        let producer = Producer::new(layout, RingPtr::new(start))
            .map_err(|e| Error::Protocol(format!("{name}: {e}")))?;
        let lease = RingLease::take(ring.mapping())
            .ok_or_else(|| Error::Protocol(format!("{name}: ring memory not writable")))?;
        let mut guard = guard;
        guard.armed = false;
        let queue = Self {
            name,
            core: Arc::clone(p.core),
            queue_id: args.queue_id,
            rptr_seen: AtomicU64::new(start),
            doorbell,
            ring,
            ptrs,
            _eop: eop,
            _cwsr: cwsr,
            _kind: core::marker::PhantomData,
        };
        Ok((queue, RingWriter { producer, lease }))
    }

    fn ptr(&self, off: u64) -> Option<&AtomicU64> {
        self.ptrs.mapping().u64_at(off)
    }

    /// KFD's id of the queue.
    pub(crate) fn queue_id(&self) -> u32 {
        self.queue_id
    }

    /// The read pointer the engine published.
    pub(crate) fn rptr(&self) -> u64 {
        self.ptr(RPTR_OFFSET)
            .map_or(0, |p| p.load(Ordering::Acquire))
    }

    /// The write pointer the driver published.
    pub(crate) fn wptr(&self) -> u64 {
        self.ptr(WPTR_OFFSET)
            .map_or(0, |p| p.load(Ordering::Acquire))
    }

    /// Pointers for error reports.
    pub(crate) fn state(&self) -> QueueState {
        QueueState {
            name: self.name.clone(),
            rptr: self.rptr(),
            wptr: self.wptr(),
        }
    }

    /// Copies `dwords` (whose packets have the lengths `packets`) into the ring, publishes the
    /// write pointer and rings the doorbell. When the ring is too full, sleeps (polling the
    /// fault events, which also lets a deterministic simulator run) until the engine has read
    /// enough, for at most `timeout` without progress.
    pub(crate) fn submit(
        &self,
        writer: &mut RingWriter<K>,
        dwords: &[u32],
        packets: &[usize],
        pages: &SignalPages,
        timeout: Duration,
        others: &dyn Fn() -> Vec<QueueState>,
    ) -> Result<()> {
        self.reserve_then(writer, dwords, packets, pages, timeout, others, true)
    }

    /// Waits, like [`HwQueue::submit`], until the ring has room for `dwords` (packets
    /// `packets`), and writes nothing. Room only grows until the next submission, so a
    /// submission of these dwords right after cannot wait for room (all of a device's
    /// submissions are made under its timeline lock).
    pub(crate) fn wait_room(
        &self,
        writer: &mut RingWriter<K>,
        dwords: &[u32],
        packets: &[usize],
        pages: &SignalPages,
        timeout: Duration,
        others: &dyn Fn() -> Vec<QueueState>,
    ) -> Result<()> {
        self.reserve_then(writer, dwords, packets, pages, timeout, others, false)
    }

    /// Reserves room for `dwords` (waiting for the engine when the ring is full) and, when
    /// `publish`, fills and publishes it; otherwise drops the grant (nothing written).
    #[expect(
        clippy::too_many_arguments,
        reason = "the two public entry points' arguments"
    )]
    fn reserve_then(
        &self,
        writer: &mut RingWriter<K>,
        dwords: &[u32],
        packets: &[usize],
        pages: &SignalPages,
        timeout: Duration,
        others: &dyn Fn() -> Vec<QueueState>,
        publish: bool,
    ) -> Result<()> {
        let RingWriter { producer, lease } = writer;
        if dwords.is_empty() {
            return Ok(());
        }
        let has_indirect = !K::SPLITS_PACKETS && has_sdma_indirect(dwords, packets);
        let (original, mut original_packets) = (dwords, packets);
        let ones; // seeded: every dword a packet of its own, so the ring splits packets anywhere
        if seeded!(SplitSdmaPackets) && !K::SPLITS_PACKETS {
            ones = vec![1; dwords.len()];
            original_packets = &ones;
        }
        let mut last_rptr = None;
        // Read the clock only once the ring is full (a submission with room never waits).
        let mut progress_at: Option<Instant> = None;
        loop {
            // Where the submission lands is only known under the lock: NOP-pad INDIRECTs for it.
            let aligned;
            let (dwords, packets) = if has_indirect {
                let size_dw = producer.layout().size() / K::UNITS_PER_DWORD;
                let idx = producer.write_pointer().get() / K::UNITS_PER_DWORD % size_dw;
                aligned = align_sdma_indirects(original, original_packets, idx, size_dw)
                    .map_err(|e| Error::InvalidArgument(format!("{}: {e}", self.name)))?;
                (aligned.0.as_slice(), aligned.1.as_slice())
            } else {
                (original, original_packets)
            };
            // The producer reads `rptr_seen` only when its cached read pointer says the ring is
            // full; then refresh it from the engine's pointer and try once more before sleeping.
            let mut attempt =
                producer.reserve_packets(dwords.len(), packets.iter().copied(), &self.rptr_seen);
            if matches!(attempt, Err(RingError::WouldOverrun { .. })) {
                let size = producer.layout().size();
                let fresh = monotonic_rptr(self.rptr(), producer.write_pointer().get(), size);
                self.rptr_seen.store(fresh, Ordering::Relaxed);
                attempt = producer.reserve_packets(
                    dwords.len(),
                    packets.iter().copied(),
                    &self.rptr_seen,
                );
            }
            match attempt {
                Ok(_) if !publish => return Ok(()),
                Ok(grant) => {
                    let (head, tail) = grant.ranges();
                    let mut view =
                        RingView::new(self.ring.mapping(), &mut *lease).ok_or_else(|| {
                            Error::Protocol(format!("{}: a writer of another ring", self.name))
                        })?;
                    let (h, t) = view.slices_mut(head, tail).ok_or_else(|| {
                        Error::Protocol(format!("{}: grant outside the ring", self.name))
                    })?;
                    grant
                        .fill(h, t, dwords)
                        .map_err(|e| Error::Protocol(format!("{}: {e}", self.name)))?;
                    let Some(write) = self.ptr(WPTR_OFFSET) else {
                        return Err(Error::Protocol(format!(
                            "{}: pointer page unmapped",
                            self.name
                        )));
                    };
                    let db = producer
                        .publish(grant, write)
                        .map_err(|e| Error::Protocol(format!("{}: {e}", self.name)))?;
                    // wptr was stored with Release by `publish`; the doorbell store is Release too.
                    self.doorbell.ring(db.value());
                    trace!(
                        "{}: submitted {} dwords, doorbell {:#x}",
                        self.name,
                        dwords.len(),
                        db.value()
                    );
                    return Ok(());
                }
                Err(RingError::WouldOverrun { .. }) => {
                    self.wait_progress(&mut progress_at, &mut last_rptr, pages, timeout, others)?;
                }
                Err(e) => return Err(Error::InvalidArgument(format!("{}: {e}", self.name))),
            }
        }
    }

    /// The ring is full: sleeps a moment (polling the fault events, which also lets a
    /// deterministic simulator run), then fails if the engine made no progress for `timeout`.
    fn wait_progress(
        &self,
        progress_at: &mut Option<Instant>,
        last_rptr: &mut Option<u64>,
        pages: &SignalPages,
        timeout: Duration,
        others: &dyn Fn() -> Vec<QueueState>,
    ) -> Result<()> {
        let since = *progress_at.get_or_insert_with(Instant::now);
        if let Some(f) = pages.sleep(None, 1)? {
            return Err(Error::DeviceFault(self.report(0, since, others, Some(f))));
        }
        let r = self.rptr();
        if *last_rptr != Some(r) {
            *last_rptr = Some(r);
            *progress_at = Some(Instant::now());
        } else if since.elapsed() >= timeout {
            return Err(Error::Timeout(self.report(0, since, others, None)));
        }
        Ok(())
    }

    /// [`HwQueue::submit`] of `len` dwords that `fill` writes straight into the ring, without
    /// a copy on the way: it gets the reserved dwords as one slice, or, when they wrap around
    /// the ring's end, a buffer that is then copied into both parts. `fill` returning `None`
    /// fails the submission with nothing published. Only for rings that may split a
    /// submission at their end (PM4).
    pub(crate) fn submit_with(
        &self,
        writer: &mut RingWriter<K>,
        len: usize,
        fill: impl FnOnce(&mut [u32]) -> Option<()>,
        pages: &SignalPages,
        timeout: Duration,
        others: &dyn Fn() -> Vec<QueueState>,
    ) -> Result<()> {
        let RingWriter { producer, lease } = writer;
        if !K::SPLITS_PACKETS {
            return Err(Error::Protocol(format!(
                "{}: a submission written in place needs a ring that splits packets",
                self.name
            )));
        }
        let mut last_rptr = None;
        let mut progress_at: Option<Instant> = None;
        loop {
            let mut attempt = producer.reserve(len, &self.rptr_seen);
            if matches!(attempt, Err(RingError::WouldOverrun { .. })) {
                let size = producer.layout().size();
                let fresh = monotonic_rptr(self.rptr(), producer.write_pointer().get(), size);
                self.rptr_seen.store(fresh, Ordering::Relaxed);
                attempt = producer.reserve(len, &self.rptr_seen);
            }
            match attempt {
                Ok(grant) => {
                    let (head, tail) = grant.ranges();
                    let mut view =
                        RingView::new(self.ring.mapping(), &mut *lease).ok_or_else(|| {
                            Error::Protocol(format!("{}: a writer of another ring", self.name))
                        })?;
                    let (h, t) = view.slices_mut(head, tail).ok_or_else(|| {
                        Error::Protocol(format!("{}: grant outside the ring", self.name))
                    })?;
                    let filled = if t.is_empty() && h.len() == len {
                        fill(h)
                    } else {
                        // Wrapping (once per trip around the ring): through a buffer.
                        let mut buf = vec![0u32; len];
                        fill(&mut buf).and_then(|()| grant.fill(h, t, &buf).ok())
                    };
                    if filled.is_none() {
                        // Not published: the engine never reads these dwords, and the next
                        // grant starts at the same write pointer.
                        return Err(Error::Protocol(format!(
                            "{}: a submission's writer failed",
                            self.name
                        )));
                    }
                    let Some(write) = self.ptr(WPTR_OFFSET) else {
                        return Err(Error::Protocol(format!(
                            "{}: pointer page unmapped",
                            self.name
                        )));
                    };
                    let db = producer
                        .publish(grant, write)
                        .map_err(|e| Error::Protocol(format!("{}: {e}", self.name)))?;
                    // wptr was stored with Release by `publish`; the doorbell store is Release too.
                    self.doorbell.ring(db.value());
                    // The next submission (likely as long) lands right after this one.
                    let size = producer.layout().size();
                    let next = producer.write_pointer().get() % size.max(1);
                    // A PM4 ring's unit is the dword.
                    self.ring.mapping().prefetch_write(next * 4, len * 4);
                    trace!(
                        "{}: submitted {len} dwords in place, doorbell {:#x}",
                        self.name,
                        db.value()
                    );
                    return Ok(());
                }
                Err(RingError::WouldOverrun { .. }) => {
                    self.wait_progress(&mut progress_at, &mut last_rptr, pages, timeout, others)?;
                }
                Err(e) => return Err(Error::InvalidArgument(format!("{}: {e}", self.name))),
            }
        }
    }

    fn report(
        &self,
        expected: u64,
        since: Instant,
        others: &dyn Fn() -> Vec<QueueState>,
        fault: Option<crate::signal::Fault>,
    ) -> Box<WaitReport> {
        let mut queues = vec![self.state()];
        queues.extend(others());
        Box::new(WaitReport {
            waited: crate::error::Waited::RingSpace(self.name.clone()),
            signal_addr: GpuVa(self.ptrs.va() + RPTR_OFFSET),
            expected,
            seen: self.rptr(),
            // CAST: milliseconds of a wait fit u64.
            waited_ms: since.elapsed().as_millis() as u64,
            queues,
            fault_addr: fault.as_ref().and_then(|f| f.addr),
            fault: fault.map(|f| f.what),
        })
    }
}

/// Whether an SDMA submission holds an INDIRECT packet.
fn has_sdma_indirect(dwords: &[u32], packets: &[usize]) -> bool {
    let mut off = 0usize;
    packets.iter().any(|&len| {
        let is = dwords
            .get(off)
            .is_some_and(|h| h & 0xff == sdma::op::INDIRECT);
        off = off.saturating_add(len);
        is
    })
}

/// Rebuilds an SDMA submission that will start at ring dword `idx` of a `size_dw`-dword ring so
/// that every INDIRECT ends on an 8-dword boundary, as real engines need (Linux `sdma_v6_0` and
/// ROCR pad `(2 - wptr) & 7` 1-dword NOPs before it; the simulator checks it too).
///
/// Packets are placed as core's producer places them: the whole submission before the end of
/// the ring when it fits, else the packets that fit, zero padding (NOPs, which keeps 8-dword
/// alignment since the ring size is a multiple of 8) and the rest from dword 0. Each INDIRECT
/// and its NOPs form one packet, so the wrap never separates them. Returns the dwords and
/// their packet lengths.
fn align_sdma_indirects(
    dwords: &[u32],
    packets: &[usize],
    idx: u64,
    size_dw: u64,
) -> core::result::Result<(Vec<u32>, Vec<usize>), String> {
    let mut out = Vec::with_capacity(dwords.len() + 8);
    let mut lens = Vec::with_capacity(packets.len());
    let mut pos = idx;
    let mut wrapped = false;
    let mut off = 0usize;
    for &len in packets {
        let pkt = off
            .checked_add(len)
            .and_then(|end| dwords.get(off..end))
            .ok_or_else(|| {
                format!(
                    "packet lengths {packets:?} do not fit the {} dwords submitted",
                    dwords.len()
                )
            })?;
        off += len;
        let indirect = pkt.first().is_some_and(|h| h & 0xff == sdma::op::INDIRECT);
        let nops = |at: u64| {
            if indirect {
                2u64.wrapping_sub(at) & 7
            } else {
                0
            }
        };
        // CAST: usize -> u64 widens.
        let len64 = len as u64;
        let mut pad = nops(pos);
        if !wrapped && pos + pad + len64 > size_dw {
            wrapped = true;
            pos = 0;
            pad = nops(0);
        }
        // CAST: pad < 8.
        out.extend(core::iter::repeat_n(0u32, pad as usize));
        out.extend_from_slice(pkt);
        // CAST: pad < 8.
        lens.push(pad as usize + len);
        pos += pad + len64;
    }
    if off != dwords.len() {
        return Err(format!(
            "packet lengths {packets:?} add up to {off}, not the {} dwords submitted",
            dwords.len()
        ));
    }
    Ok((out, lens))
}

/// The engine's read pointer as the monotonic counter core's producer expects. gfx9+ SDMA
/// engines report a monotonic 64-bit pointer; a CP may report its read position wrapped to the
/// ring (a dword index), which is rebuilt against our write pointer as ROCR does
/// (`commit - WrapIntoRing(commit - hw_rptr)`).
fn monotonic_rptr(raw: u64, write: u64, size: u64) -> u64 {
    if raw <= write && write - raw <= size {
        return raw;
    }
    let mask = size.wrapping_sub(1);
    write.wrapping_sub(write.wrapping_sub(raw & mask) & mask)
}

pub(crate) struct DestroyGuard<'a> {
    pub(crate) core: &'a Arc<KfdCore>,
    pub(crate) queue_id: u32,
    pub(crate) armed: bool,
}

impl Drop for DestroyGuard<'_> {
    fn drop(&mut self) {
        if self.armed {
            destroy_queue(self.core, self.queue_id);
        }
    }
}

pub(crate) fn destroy_queue(core: &KfdCore, queue_id: u32) {
    let mut args = abi::DestroyQueueArgs { queue_id, pad: 0 };
    if let Err(e) = core.ioctl_teardown(abi::AMDKFD_IOC_DESTROY_QUEUE, &mut args) {
        log::error!("DESTROY_QUEUE {queue_id} failed: {e}");
    }
}

impl<K: RingKind> Drop for HwQueue<K> {
    fn drop(&mut self) {
        destroy_queue(&self.core, self.queue_id);
    }
}

#[cfg(test)]
mod tests {
    use super::{align_sdma_indirects, monotonic_rptr};
    use core::sync::atomic::AtomicU64;
    use hcq_core::ring::{Producer, RingLayout, RingPtr, Sdma};

    /// At every start dword of a 64-dword ring (wrapping or not), every INDIRECT of the padded
    /// submission lands whole and ends at a ring dword = 7 mod 8, where core's producer puts it.
    #[test]
    fn indirects_end_on_8_dword_boundaries_wherever_the_grant_lands() {
        const IND: [u32; 6] = [4, 0x100, 0, 8, 0, 0];
        let nop3 = [2u32 << 16, 0, 0];
        let cases: [(Vec<u32>, Vec<usize>); 3] = [
            (IND.to_vec(), vec![6]),
            ([&nop3[..], &IND, &nop3, &IND].concat(), vec![3, 6, 3, 6]),
            ([&IND[..], &[0], &IND, &nop3].concat(), vec![6, 1, 6, 3]),
        ];
        for (dwords, packets) in &cases {
            for idx in 0..64u64 {
                let (out, lens) = align_sdma_indirects(dwords, packets, idx, 64).unwrap();
                assert_eq!(lens.iter().sum::<usize>(), out.len());
                let mut p =
                    Producer::new(RingLayout::<Sdma>::new(256).unwrap(), RingPtr::new(idx * 4))
                        .unwrap();
                let read = AtomicU64::new(idx * 4);
                let g = p
                    .reserve_packets(out.len(), lens.iter().copied(), &read)
                    .unwrap();
                let (head, _) = g.ranges();
                let at = |j: usize| {
                    if j < g.split() {
                        head.start + j
                    } else {
                        j - g.split()
                    }
                };
                let mut off = 0;
                let mut seen = 0;
                for &len in &lens {
                    let start = (off + len).saturating_sub(6);
                    if len >= 6 && out[start] == 4 {
                        seen += 1;
                        assert_eq!(&out[start..off + len], &IND, "idx {idx}");
                        assert!(out[off..start].iter().all(|&d| d == 0), "NOPs before it");
                        assert!(start + 5 < g.split() || start >= g.split(), "idx {idx}");
                        assert_eq!(at(start + 5) % 8, 7, "idx {idx}: {out:?} {lens:?}");
                    }
                    off += len;
                }
                assert_eq!(seen, dwords.iter().filter(|&&d| d == 4).count());
            }
        }
        assert!(align_sdma_indirects(&IND, &[5], 0, 64).is_err());
        assert!(align_sdma_indirects(&IND, &[7], 0, 64).is_err());
    }

    #[test]
    fn rptr_is_monotonic_or_rebuilt_from_a_wrapped_index() {
        // Already monotonic: unchanged (empty, partly used, exactly full).
        assert_eq!(monotonic_rptr(100, 100, 256), 100);
        assert_eq!(monotonic_rptr(90, 100, 256), 90);
        assert_eq!(monotonic_rptr(0, 256, 256), 0);
        // Wrapped index: write 1000 (index 232 in a 256 ring), engine at index 200 -> 968.
        assert_eq!(monotonic_rptr(200, 1000, 256), 968);
        // Engine caught up (index 232) -> 1000; index just past the wrap (10) -> 778.
        assert_eq!(monotonic_rptr(232, 1000, 256), 1000);
        assert_eq!(monotonic_rptr(10, 1000, 256), 778);
    }
}
