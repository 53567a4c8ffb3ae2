//! AQL compute queues (`KFD_IOC_QUEUE_TYPE_COMPUTE_AQL`): the ring of 64-byte packets, its
//! `amd_queue_t`, the per-slot PM4 indirect buffers and the doorbell.
//!
//! Built as ROCR's `AqlQueue` builds one (`amd_aql_queue.cpp`): the ring starts with every
//! header INVALID; CREATE_QUEUE gets `amd_queue_t.write_dispatch_id` and `.read_dispatch_id`
//! as the write and read pointers; each ring slot owns a 256-byte PM4 buffer (`pm4_ib_buf_`,
//! `ExecutePM4`) that an `AMD_AQL_FORMAT_PM4_IB` packet in that slot points at, so the buffer
//! is free again exactly when the slot is (the packet processor advances `read_dispatch_id`
//! only after the packet, indirect buffer included, completed). A PM4 body longer than one
//! slot's buffer takes the buffers of the following slots too, which then hold no-op
//! barrier-AND packets.
//!
//! A launch ([`AqlQueue::submit_launch`]) is three packets: a PM4_IB prologue (the memory
//! barrier, written once per queue, or the timeline wait and the barrier in the slot's
//! buffer when the previous value is another queue's), the kernel dispatch, and a PM4_IB
//! epilogue signalling the timeline in the slot's second, 64-byte buffer (owned by the slot
//! the same way; dense, so a run of launches writes its epilogues close together).
//!
//! A submission writes each packet's body, then its first dword (header and setup) with a
//! release store, then `write_dispatch_id`, then the doorbell with the index of the last
//! packet. It never writes a slot the processor has not retired: it waits (with the device's
//! deadline) until `read_dispatch_id + slots` covers every slot it needs.

use crate::buffer::{Bo, BoOptions};
use crate::error::{Error, MemoryKind, QueueState, Result, WaitReport};
use crate::kfd_core::KfdCore;
use crate::mem::Doorbell;
use crate::queue::{DestroyGuard, QueueParams, destroy_queue, doorbell_page, save_areas};
use crate::signal::SignalPages;
use core::sync::atomic::Ordering;
use core::time::Duration;
use hcq_core::addr::GpuVa;
use hcq_core::aql::{self, Header, PACKET_DWORDS, queue as q};
use hcq_core::hsa::DispatchPacket;
use hcq_core::kfd::{self as abi};
use hcq_core::pm4;
use log::debug;
use std::sync::Arc;
use std::time::Instant;

/// Dwords of each slot's PM4 buffer (ROCR's `pm4_ib_size_b_` is 0x100 bytes).
pub(crate) const IB_SLOT_DWORDS: usize = 64;
/// Bytes of each slot's PM4 buffer.
const IB_SLOT_BYTES: u64 = (IB_SLOT_DWORDS * 4) as u64;
/// Dwords of each slot's small PM4 buffer: a launch's epilogue (the timeline signal's one or
/// two RELEASE_MEMs) goes there when it fits. A slot owns both of its buffers until the
/// processor retires it; the small ones sit 64 bytes apart, so consecutive launches' epilogues
/// are 192 bytes apart rather than 768 (on the simulator's cached memory a launch writes its
/// epilogue's cache line faster: ~30 ns of ~380, measured 2026-12-07 on a loaded machine).
const EPILOGUE_SLOT_DWORDS: usize = 16;

/// One part of a submission, in ring order.
#[derive(Clone, Copy, Debug)]
pub(crate) enum AqlPart<'a> {
    /// PM4 dwords, run through an `AMD_AQL_FORMAT_PM4_IB` packet (after every earlier packet).
    Pm4(&'a [u32]),
    /// A kernel dispatch of `dims` dimensions (header and setup are the queue's).
    Dispatch(u16, &'a DispatchPacket),
    /// A whole packet as given, header and setup included (a graph's recorded dispatch).
    Packet(&'a [u32; PACKET_DWORDS]),
}

/// A timeline signal's launch prologue and epilogue for an AQL queue, encoded once: the PM4
/// before a dispatch (wait until the signal holds the previous value, then the memory barrier:
/// HDP flush and cache invalidation) and after it (the signal's RELEASE_MEMs), with where a
/// launch patches its values, and the PM4_IB packets running each (IB address 0: a launch
/// patches in its slot's buffer).
#[derive(Clone, Debug)]
pub(crate) struct AqlSync {
    pre: [u32; IB_SLOT_DWORDS],
    pre_len: usize,
    /// Index in `pre` of the wait's reference value.
    wait_at: usize,
    post: [u32; IB_SLOT_DWORDS],
    post_len: usize,
    /// Index in `post` of the first RELEASE_MEM's 64-bit data.
    data_at: usize,
    /// The PM4_IB packets of `pre` and `post`.
    pre_packet: [u32; PACKET_DWORDS],
    post_packet: [u32; PACKET_DWORDS],
}

/// Dwords of a PM4_IB packet holding the indirect buffer's address (INDIRECT_BUFFER's
/// `IB_BASE_LO`/`_HI`, after its header in dword 1).
const PM4_IB_ADDR_AT: usize = 2;

impl AqlSync {
    /// From the timeline signal's pre-encoded `wait` and `signal` (value 0) and the
    /// architecture's memory barrier.
    pub(crate) fn new(
        arch: &hcq_core::arch::ArchInfo,
        wait: &[u32],
        wait_at: usize,
        signal: &[u32],
        data_at: usize,
    ) -> Result<Self> {
        let mut pre = [0u32; IB_SLOT_DWORDS];
        let mut post = [0u32; IB_SLOT_DWORDS];
        let too_long = || Error::Protocol("AQL launch prologue longer than a slot".into());
        pre.get_mut(..wait.len())
            .ok_or_else(too_long)?
            .copy_from_slice(wait);
        let n =
            hcq_core::pm4::memory_barrier(pre.get_mut(wait.len()..).ok_or_else(too_long)?, arch)
                .map_err(|source| Error::Encode {
                    what: "the AQL launch's memory barrier",
                    source,
                })?;
        post.get_mut(..signal.len())
            .filter(|_| signal.len() <= EPILOGUE_SLOT_DWORDS)
            .ok_or_else(|| {
                Error::Protocol("AQL launch epilogue longer than a small PM4 buffer".into())
            })?
            .copy_from_slice(signal);
        let pre_len = wait.len() + n;
        Ok(Self {
            pre,
            pre_len,
            wait_at,
            post,
            post_len: signal.len(),
            data_at,
            pre_packet: ib_packet(GpuVa(0), pre_len)?,
            post_packet: ib_packet(GpuVa(0), signal.len())?,
        })
    }
}

/// The PM4_IB packet (barrier bit, system-scope fences) running the `len` dwords at `ib`.
fn ib_packet(ib: GpuVa, len: usize) -> Result<[u32; PACKET_DWORDS]> {
    let len =
        u32::try_from(len).map_err(|_| Error::Protocol(format!("a PM4 body of {len} dwords")))?;
    aql::pm4_ib(Header::ordered(aql::TYPE_VENDOR_SPECIFIC), ib, len, 0).map_err(|source| {
        Error::Encode {
            what: "an AQL packet",
            source,
        }
    })
}

/// Which of a slot's PM4 buffers a launch writes: the slot's full one or its small one.
#[derive(Clone, Copy, Debug)]
struct IbRegion {
    /// Dwords of each buffer.
    dwords: usize,
}

impl IbRegion {
    const SLOTS: Self = Self {
        dwords: IB_SLOT_DWORDS,
    };
    const EPILOGUES: Self = Self {
        dwords: EPILOGUE_SLOT_DWORDS,
    };
}

/// The queue's producer state, kept by the device under its timeline lock.
#[derive(Debug)]
pub(crate) struct AqlWriter {
    /// The next packet index to write (monotonic).
    next: u64,
    /// A `read_dispatch_id` seen before (it only grows): every slot below `read_seen + slots`
    /// is free without reading it again.
    read_seen: u64,
    /// The last timeline value whose signal this ring got (in a packet with the barrier bit,
    /// as every packet hcq writes).
    signaled: Option<u64>,
}

impl AqlWriter {
    /// Records that the packets just written end with the signal of timeline value `value`.
    pub(crate) fn note_signal(&mut self, value: u64) {
        self.signaled = Some(value);
    }

    /// Whether the previous timeline value (`value - 1`) is signalled by a packet already in
    /// this ring. A packet with the barrier bit then starts only after that signal's packet,
    /// and everything before it, completed (HSA runtime `hsa.h`, the packet header's barrier
    /// bit: "If set, the processing of the current packet only launches when all preceding
    /// packets (within the same queue) are complete"; hcq-sim's AQL processor runs it as a
    /// CS_PARTIAL_FLUSH over every XCC's share): a wait for that value is redundant there.
    pub(crate) fn follows_own_signal(&self, value: u64) -> bool {
        seeded!(AqlLaunchSkipsCopyWait)
            || value
                .checked_sub(1)
                .is_some_and(|prev| self.signaled == Some(prev))
    }
}

/// One AQL compute queue.
pub(crate) struct AqlQueue {
    name: String,
    core: Arc<KfdCore>,
    queue_id: u32,
    doorbell: Doorbell,
    /// Packets in the ring (a power of two).
    slots: u64,
    ring: Bo,
    desc: Bo,
    ib: Bo,
    /// The PM4_IB packet running the memory barrier (HDP flush, cache invalidation) kept in
    /// the buffer after the slots' ones: the prologue of a launch that waits for nothing.
    barrier_packet: [u32; PACKET_DWORDS],
    /// XCCs of the GPU (every one runs each PM4 indirect buffer, so above 1 the signals in
    /// them are predicated onto XCC 0: [`pm4::releases_on_xccs`]).
    xcc: u32,
    _eop: Option<Bo>,
    _cwsr: Option<Bo>,
}

impl core::fmt::Debug for AqlQueue {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("AqlQueue")
            .field("name", &self.name)
            .field("queue_id", &self.queue_id)
            .field("read_dispatch_id", &self.read_index())
            .field("write_dispatch_id", &self.write_index())
            .finish_non_exhaustive()
    }
}

/// The scratch an AQL queue gives its dispatches (`amd_queue_t`'s scratch fields).
#[derive(Clone, Copy, Debug)]
pub(crate) struct AqlScratch {
    pub(crate) tmpring_size: u32,
    pub(crate) rsrc: [u32; 4],
    pub(crate) base: GpuVa,
    pub(crate) len: u64,
    /// XCCs of the GPU: each runs every PM4 indirect buffer of the queue.
    pub(crate) num_xcc: u32,
    pub(crate) lane_bytes: u32,
    pub(crate) max_cu_id: u32,
    pub(crate) max_wave_id: u32,
}

impl AqlQueue {
    /// Creates the queue (ring of `p.ring_size` bytes) for a GPU of `arch`; returns it and
    /// its producer.
    pub(crate) fn create(
        p: &QueueParams<'_>,
        scratch: &AqlScratch,
        arch: &hcq_core::arch::ArchInfo,
    ) -> Result<(Self, AqlWriter)> {
        let ring_size = p.ring_size;
        let slots = ring_size / aql::PACKET_BYTES;
        if !ring_size.is_power_of_two()
            || ring_size < u64::from(abi::KFD_MIN_QUEUE_RING_SIZE)
            || slots < 4
        {
            return Err(Error::InvalidArgument(format!(
                "AQL ring of {ring_size} bytes: must be a power of two of at least {} bytes",
                abi::KFD_MIN_QUEUE_RING_SIZE.max(256)
            )));
        }
        let size32 = u32::try_from(ring_size).map_err(|_| {
            Error::InvalidArgument(format!("ring size {ring_size:#x} does not fit 32 bits"))
        })?;
        let uncached = BoOptions {
            uncached: true,
            ..BoOptions::default()
        };
        let gtt = |len| p.core.alloc(p.gpu_id, len, MemoryKind::Gtt, uncached);
        let ring = gtt(ring_size)?;
        let desc = gtt(4096)?;
        // One PM4 buffer per slot, then the memory barrier's, then one small buffer per slot.
        let ib = gtt((slots + 1) * IB_SLOT_BYTES + slots * EPILOGUE_SLOT_DWORDS as u64 * 4)?;
        // Touch every page of the PM4 buffers once now, so launches do not take the first-
        // touch page fault of their CPU mapping (one per 4 KiB, about 1 us here: a launch uses
        // 768 bytes of them, so ~200 ns a launch on a first lap). The ring is touched below.
        for w in ib.mapping().u32s().iter().step_by(4096 / 4) {
            w.store(0, Ordering::Relaxed);
        }
        let mut barrier = [0u32; IB_SLOT_DWORDS];
        let n =
            hcq_core::pm4::memory_barrier(&mut barrier, arch).map_err(|source| Error::Encode {
                what: "the AQL launch's memory barrier",
                source,
            })?;
        let barrier_off = slots * IB_SLOT_BYTES;
        ib.mapping().write_bytes(
            barrier_off,
            bytemuck::cast_slice(barrier.get(..n).unwrap_or_default()),
        )?;
        let barrier_packet = ib_packet(GpuVa(ib.va() + barrier_off), n)?;
        // Every slot INVALID before the queue exists (ROCR AqlQueue's constructor).
        for (i, w) in ring.mapping().u32s().iter().enumerate() {
            let v = if i % PACKET_DWORDS == 0 {
                u32::from(aql::TYPE_INVALID)
            } else {
                0
            };
            w.store(v, Ordering::Relaxed);
        }
        let mut d = [0u8; q::SIZE];
        let init = aql::AmdQueueInit {
            ring: GpuVa(ring.va()),
            packets: u32::try_from(slots).unwrap_or(u32::MAX),
            max_cu_id: scratch.max_cu_id,
            max_wave_id: scratch.max_wave_id,
            tmpring_size: scratch.tmpring_size,
            scratch_rsrc: scratch.rsrc,
            scratch_base: scratch.base,
            scratch_len: scratch.len,
            lane_bytes: scratch.lane_bytes,
            properties: q::PROPERTIES_IS_PTR64,
        };
        aql::amd_queue(&mut d, &init).map_err(|source| Error::Encode {
            what: "amd_queue_t",
            source,
        })?;
        desc.mapping().write_bytes(0, &d)?;
        let (eop, cwsr, ctl_stack_size, ctx_size) = save_areas(p)?;
        let base = desc.va();
        let mut args = crate::queue::create_queue_args(
            p,
            abi::KFD_IOC_QUEUE_TYPE_COMPUTE_AQL,
            (ring.va(), size32),
            (
                base + q::READ_DISPATCH_ID as u64,
                base + q::WRITE_DISPATCH_ID as u64,
            ),
            (eop.as_ref(), cwsr.as_ref()),
            (ctl_stack_size, ctx_size),
        );
        p.core
            .ioctl(abi::AMDKFD_IOC_CREATE_QUEUE, &mut args)
            .map_err(|e| Error::sys("CREATE_QUEUE (AQL)", e))?;
        let mut guard = DestroyGuard {
            core: p.core,
            queue_id: args.queue_id,
            armed: true,
        };
        let name = format!("compute queue {} (AQL, gpu {:#x})", args.queue_id, p.gpu_id);
        debug!("{name}: doorbell offset {:#x}", args.doorbell_offset);
        let page = doorbell_page(p, args.doorbell_offset)?;
        let doorbell = Doorbell::new(page, abi::doorbell_in_slice(args.doorbell_offset))
            .ok_or_else(|| {
                Error::Protocol(format!(
                    "CREATE_QUEUE doorbell offset {:#x} is not an aligned slot",
                    args.doorbell_offset
                ))
            })?;
        guard.armed = false;
        Ok((
            Self {
                name,
                core: Arc::clone(p.core),
                queue_id: args.queue_id,
                doorbell,
                slots,
                ring,
                desc,
                ib,
                barrier_packet,
                xcc: scratch.num_xcc.max(1),
                _eop: eop,
                _cwsr: cwsr,
            },
            AqlWriter {
                next: 0,
                read_seen: 0,
                signaled: None,
            },
        ))
    }

    /// KFD's id of the queue.
    pub(crate) fn queue_id(&self) -> u32 {
        self.queue_id
    }

    /// `amd_queue_t.read_dispatch_id`: packets the processor retired.
    pub(crate) fn read_index(&self) -> u64 {
        self.desc
            .mapping()
            .u64_at(q::READ_DISPATCH_ID as u64)
            .map_or(0, |p| p.load(Ordering::Acquire))
    }

    /// `amd_queue_t.write_dispatch_id`: packets published.
    pub(crate) fn write_index(&self) -> u64 {
        self.desc
            .mapping()
            .u64_at(q::WRITE_DISPATCH_ID as u64)
            .map_or(0, |p| p.load(Ordering::Acquire))
    }

    /// Pointers for error reports (in packets).
    pub(crate) fn state(&self) -> QueueState {
        QueueState {
            name: self.name.clone(),
            rptr: self.read_index(),
            wptr: self.write_index(),
        }
    }

    /// The ring slot of packet index `at`: `at % slots`, as a mask (`slots` is a power of
    /// two, checked at creation; a 64-bit division costs tens of cycles on a launch's path).
    fn slot_of(&self, at: u64) -> u64 {
        at & (self.slots - 1)
    }

    /// Slots a PM4 body of `len` dwords takes.
    fn pm4_slots(len: usize) -> u64 {
        // CAST: usize -> u64 widens.
        (len.div_ceil(IB_SLOT_DWORDS)).max(1) as u64
    }

    /// The slots `parts` take from packet index `at` (no-op fillers before a multi-slot PM4
    /// body that would run past the ring's end included); `None` if one PM4 body alone is
    /// longer than the ring's buffers.
    fn slots_needed(&self, mut at: u64, parts: &[AqlPart<'_>]) -> Option<u64> {
        let start = at;
        for p in parts {
            match p {
                AqlPart::Pm4(d) => {
                    let once;
                    let d: &[u32] = if self.xcc > 1 {
                        once = self.signals_once(d).ok()?;
                        &once
                    } else {
                        d
                    };
                    let m = Self::pm4_slots(d.len());
                    if m > self.slots {
                        return None;
                    }
                    let room = self.slots - at % self.slots;
                    if m > room {
                        at += room;
                    }
                    at += m;
                }
                AqlPart::Dispatch(..) | AqlPart::Packet(_) => at += 1,
            }
        }
        Some(at - start)
    }

    /// Waits, like [`AqlQueue::submit`], until the ring has room for `parts`; writes nothing.
    pub(crate) fn wait_room(
        &self,
        w: &mut AqlWriter,
        parts: &[AqlPart<'_>],
        pages: &SignalPages,
        timeout: Duration,
        others: &dyn Fn() -> Vec<QueueState>,
    ) -> Result<()> {
        let n = self.check_size(w, parts)?;
        self.wait_for(w.next + n, pages, timeout, others)
            .map(|_| ())
    }

    fn check_size(&self, w: &AqlWriter, parts: &[AqlPart<'_>]) -> Result<u64> {
        if self.xcc > 1 {
            for p in parts {
                if let AqlPart::Pm4(d) = p {
                    self.refuse_pm4_dispatch(d)?;
                }
            }
        }
        match self.slots_needed(w.next, parts) {
            Some(n) if n <= self.slots => Ok(n),
            _ => Err(Error::InvalidArgument(format!(
                "{}: a submission of {} AQL packets / {} PM4 dwords does not fit the ring's {} slots ({} PM4 dwords each)",
                self.name,
                parts.len(),
                parts
                    .iter()
                    .map(|p| match p {
                        AqlPart::Pm4(d) => d.len(),
                        AqlPart::Dispatch(..) | AqlPart::Packet(_) => 0,
                    })
                    .sum::<usize>(),
                self.slots,
                IB_SLOT_DWORDS
            ))),
        }
    }

    /// Waits until every slot below packet index `end` is free (`end - read_dispatch_id <=
    /// slots`); returns the `read_dispatch_id` it last read.
    fn wait_for(
        &self,
        end: u64,
        pages: &SignalPages,
        timeout: Duration,
        others: &dyn Fn() -> Vec<QueueState>,
    ) -> Result<u64> {
        if seeded!(AqlOverwritesUnread) {
            return Ok(self.read_index());
        }
        let mut last = None;
        let mut progress_at: Option<Instant> = None;
        loop {
            let r = self.read_index();
            if end.saturating_sub(r) <= self.slots {
                return Ok(r);
            }
            let since = *progress_at.get_or_insert_with(Instant::now);
            if let Some(f) = pages.sleep(None, 1)? {
                return Err(Error::DeviceFault(self.report(end, since, others, Some(f))));
            }
            if last != Some(r) {
                last = Some(r);
                progress_at = Some(Instant::now());
            } else if since.elapsed() >= timeout {
                return Err(Error::Timeout(self.report(end, since, others, None)));
            }
        }
    }

    fn report(
        &self,
        end: u64,
        since: Instant,
        others: &dyn Fn() -> Vec<QueueState>,
        fault: Option<crate::signal::Fault>,
    ) -> Box<WaitReport> {
        let mut queues = vec![self.state()];
        queues.extend(others());
        Box::new(WaitReport {
            waited: crate::error::Waited::RingSpace(self.name.clone()),
            signal_addr: GpuVa(self.desc.va() + q::READ_DISPATCH_ID as u64),
            expected: end.saturating_sub(self.slots),
            seen: self.read_index(),
            // CAST: milliseconds of a wait fit u64.
            waited_ms: since.elapsed().as_millis() as u64,
            queues,
            fault_addr: fault.as_ref().and_then(|f| f.addr),
            fault: fault.map(|f| f.what),
        })
    }

    /// Writes `parts` as AQL packets, publishes them and rings the doorbell, waiting (at most
    /// `timeout` without progress) for the processor to retire the slots they need.
    pub(crate) fn submit(
        &self,
        w: &mut AqlWriter,
        parts: &[AqlPart<'_>],
        pages: &SignalPages,
        timeout: Duration,
        others: &dyn Fn() -> Vec<QueueState>,
    ) -> Result<()> {
        if parts.is_empty() {
            return Ok(());
        }
        let n = self.check_size(w, parts)?;
        self.wait_for(w.next + n, pages, timeout, others)?;
        let enc = |source| Error::Encode {
            what: "an AQL packet",
            source,
        };
        let mut at = w.next;
        let filler = aql::barrier_and(
            Header {
                ty: aql::TYPE_BARRIER_AND,
                barrier: false,
                acquire: aql::FenceScope::None,
                release: aql::FenceScope::None,
            },
            [0; 5],
            0,
        );
        for p in parts {
            match p {
                AqlPart::Pm4(d) => {
                    let once;
                    let d: &[u32] = if self.xcc > 1 {
                        once = self.signals_once(d)?;
                        &once
                    } else {
                        d
                    };
                    let m = Self::pm4_slots(d.len());
                    let room = self.slots - at % self.slots;
                    if m > room {
                        for _ in 0..room {
                            self.write_packet(at, &filler)?;
                            at += 1;
                        }
                    }
                    let slot = at % self.slots;
                    let ib_off = slot * IB_SLOT_BYTES;
                    let ib = self
                        .ib
                        .mapping()
                        .u32s()
                        .get(usize::try_from(ib_off / 4).unwrap_or(usize::MAX)..)
                        .and_then(|s| s.get(..d.len()))
                        .ok_or_else(|| {
                            Error::Protocol(format!("{}: PM4 buffer outside its slots", self.name))
                        })?;
                    for (dst, &v) in ib.iter().zip(d.iter()) {
                        dst.store(v, Ordering::Relaxed);
                    }
                    // CAST: at most slots * 64 dwords, checked against the ring above.
                    let len = d.len() as u32;
                    let pkt = aql::pm4_ib(
                        Header::ordered(aql::TYPE_VENDOR_SPECIFIC),
                        GpuVa(self.ib.va() + ib_off),
                        len,
                        0,
                    )
                    .map_err(enc)?;
                    self.write_packet(at, &pkt)?;
                    at += 1;
                    for _ in 1..m {
                        self.write_packet(at, &filler)?;
                        at += 1;
                    }
                }
                AqlPart::Dispatch(dims, dp) => {
                    let pkt =
                        aql::kernel_dispatch(Header::ordered(aql::TYPE_KERNEL_DISPATCH), *dims, dp)
                            .map_err(enc)?;
                    self.write_packet(at, &pkt)?;
                    at += 1;
                }
                AqlPart::Packet(pkt) => {
                    self.write_packet(at, pkt)?;
                    at += 1;
                }
            }
        }
        w.next = at;
        if let Some(wp) = self.desc.mapping().u64_at(q::WRITE_DISPATCH_ID as u64) {
            wp.store(at, Ordering::Release);
        }
        // The doorbell holds the index of the last packet (ROCR: write index - 1).
        self.doorbell.ring(at - 1);
        Ok(())
    }

    /// A launch in three slots: a prologue, the kernel dispatch, `sync`'s epilogue signalling
    /// `value`; the fast path of [`AqlQueue::submit`] (the same packets, without building the
    /// PM4 first). The prologue is `sync`'s (wait until the signal holds `value - 1`, then the
    /// memory barrier) when `wait`, else the queue's memory barrier alone, written once at
    /// creation. Both PM4 bodies fit one slot's buffer, so no slot crosses the ring's end.
    #[expect(
        clippy::too_many_arguments,
        reason = "submit's arguments and the launch's"
    )]
    pub(crate) fn submit_launch(
        &self,
        w: &mut AqlWriter,
        sync: &AqlSync,
        value: u32,
        wait: bool,
        dims: u16,
        dp: &DispatchPacket,
        pages: &SignalPages,
        timeout: Duration,
        others: &dyn Fn() -> Vec<QueueState>,
    ) -> Result<()> {
        let at = w.next;
        let pkt = aql::kernel_dispatch(Header::ordered(aql::TYPE_KERNEL_DISPATCH), dims, dp)
            .map_err(|source| Error::Encode {
                what: "an AQL packet",
                source,
            })?;
        if (at + 3).saturating_sub(w.read_seen) > self.slots {
            w.read_seen = self.wait_for(at + 3, pages, timeout, others)?;
        }
        if wait {
            let pre = sync.pre.get(..sync.pre_len).unwrap_or_default();
            self.write_ib(
                at,
                IbRegion::SLOTS,
                pre,
                sync.wait_at,
                &[value.wrapping_sub(1)],
                &sync.pre_packet,
            )?;
        } else {
            self.write_packet(at, &self.barrier_packet)?;
        }
        self.write_packet(at + 1, &pkt)?;
        let post = sync.post.get(..sync.post_len).unwrap_or_default();
        let (d, v) = (sync.data_at, [value, 0]);
        if self.xcc > 1 {
            // Every XCC runs the epilogue: its RELEASE_MEMs go behind a PRED_EXEC of XCC 0
            // (the signal's RELEASE_MEMs are one run, so the data moves by the PRED_EXEC),
            // in the slot's full buffer (the small one has no room for the 2 dwords more).
            let mut once = [0u32; IB_SLOT_DWORDS];
            let n = pm4::releases_on_xccs(post, &mut once, 1).map_err(|source| Error::Encode {
                what: "the AQL launch's epilogue under PRED_EXEC",
                source,
            })?;
            let body = once.get(..n).unwrap_or_default();
            let pkt = ib_packet(GpuVa(0), n)?;
            let d = d + (n - post.len());
            self.write_ib(at + 2, IbRegion::SLOTS, body, d, &v, &pkt)?;
        } else {
            self.write_ib(at + 2, IbRegion::EPILOGUES, post, d, &v, &sync.post_packet)?;
        }
        w.next = at + 3;
        if let Some(wp) = self.desc.mapping().u64_at(q::WRITE_DISPATCH_ID as u64) {
            wp.store(at + 3, Ordering::Release);
        }
        self.doorbell.ring(at + 2);
        self.prefetch_launch(at + 3);
        Ok(())
    }

    /// Brings into the CPU's caches what the next launch (packets `next..next + 3`) writes:
    /// its three ring slots and its epilogue's PM4 buffer, fetched while the caller does
    /// other work instead of stalling that launch's stores (a hint: nothing is read or
    /// written).
    fn prefetch_launch(&self, next: u64) {
        let ring = self.ring.mapping();
        for p in next..next + 3 {
            ring.prefetch_write(self.slot_of(p) * 64, 64);
        }
        let epilogue = (self.slots + 1) * IB_SLOT_BYTES
            // CAST: the region's dwords per buffer are a small constant.
            + self.slot_of(next + 2) * (IbRegion::EPILOGUES.dwords as u64 * 4);
        self.ib.mapping().prefetch_write(epilogue, 64);
    }

    /// Refuses a PM4 body holding a DISPATCH_DIRECT on a GPU of several XCCs: every XCC's
    /// command processor runs an AQL queue's PM4 indirect buffers, so each would run the
    /// whole grid (hcq-sim faults it; the hardware runs the kernel once per XCC). Kernels go
    /// to an AQL queue as kernel dispatch packets, which the XCCs share out.
    fn refuse_pm4_dispatch(&self, d: &[u32]) -> Result<()> {
        let mut i = 0;
        while let Some(&h) = d.get(i) {
            if h >> 30 != 3 {
                return Ok(());
            }
            if (h >> 8) & 0xFF == pm4::op::DISPATCH_DIRECT {
                return Err(Error::InvalidArgument(format!(
                    "{}: a PM4 DISPATCH_DIRECT (Cmds::exec, or raw PM4) on an AQL queue of a GPU of {} XCCs: each XCC runs the queue's PM4 and would run the whole grid; launch kernels with Device::launch (an AQL kernel dispatch packet the XCCs share out), or open the device with DeviceOptions {{ compute_queue: ComputeQueueKind::Pm4, .. }} (a PM4 queue runs on one XCC)",
                    self.name, self.xcc
                )));
            }
            i += if h == pm4::NOP_1DW {
                1
            } else {
                ((h >> 16) & 0x3FFF) as usize + 2
            };
        }
        Ok(())
    }

    /// `d` with its RELEASE_MEMs (signals, their interrupts, timestamps) run by XCC 0 alone:
    /// every XCC's command processor runs an AQL queue's PM4 indirect buffers, so without the
    /// predicate a signal is written once per XCC and a later XCC's write can take a value
    /// back down after another engine wrote a higher one. The dispatch before the packet is
    /// complete on every XCC when it starts (the packet's barrier bit), so XCC 0's write
    /// covers all of them.
    fn signals_once(&self, d: &[u32]) -> Result<Vec<u32>> {
        let mut out = vec![0u32; d.len() + d.len() / 4 + pm4::PRED_EXEC_DWORDS];
        let n = pm4::releases_on_xccs(d, &mut out, 1).map_err(|source| Error::Encode {
            what: "a PM4 body's signals under PRED_EXEC",
            source,
        })?;
        out.truncate(n);
        Ok(out)
    }

    /// Copies `d` (at most one buffer of `region`) into the PM4 buffer of `region` of packet
    /// index `at`'s slot with `patch` over its dwords from `patch_at`, and writes `packet` (a
    /// PM4_IB packet of `d.len()` dwords at address 0) there pointing at it.
    fn write_ib(
        &self,
        at: u64,
        region: IbRegion,
        d: &[u32],
        patch_at: usize,
        patch: &[u32],
        packet: &[u32; PACKET_DWORDS],
    ) -> Result<()> {
        let slot = self.slot_of(at);
        let base = if region.dwords == IB_SLOT_DWORDS {
            0
        } else {
            (self.slots + 1) * IB_SLOT_BYTES
        };
        // CAST: slot < slots, whose buffers were allocated: the index fits usize (and u64).
        let first = (slot as usize) * region.dwords;
        let ib_off = base + first as u64 * 4;
        let first = first + usize::try_from(base / 4).unwrap_or(usize::MAX);
        let ib = self
            .ib
            .mapping()
            .u32s()
            .get(first..first.saturating_add(region.dwords))
            .and_then(|b| b.get(..d.len()))
            .ok_or_else(|| {
                Error::Protocol(format!("{}: PM4 buffer outside its slot", self.name))
            })?;
        for (dst, &v) in ib.iter().zip(d) {
            dst.store(v, Ordering::Relaxed);
        }
        for (dst, &v) in ib.iter().skip(patch_at).zip(patch) {
            dst.store(v, Ordering::Relaxed);
        }
        let va = GpuVa(self.ib.va() + ib_off);
        let mut pkt = *packet;
        if let Some(a) = pkt
            .get_mut(PM4_IB_ADDR_AT..)
            .and_then(|p| p.first_chunk_mut::<2>())
        {
            *a = [va.lo(), va.hi()];
        }
        self.write_packet(at, &pkt)
    }

    /// Writes packet `words` into the slot of packet index `at`: the body (dwords 2..16 as
    /// 64-bit stores, then dword 1), then the first dword (header and setup) with a release
    /// store (the processor waits on an INVALID header, so the header publishes the body).
    fn write_packet(&self, at: u64, words: &[u32; PACKET_DWORDS]) -> Result<()> {
        // CAST: at % slots < slots, the ring's packets: the index fits usize.
        let first = self.slot_of(at) as usize * (PACKET_DWORDS / 2);
        let map = self.ring.mapping();
        let (Some(body), Some(head)) = (
            map.u64s()
                .get(first..)
                .and_then(|s| s.first_chunk::<{ PACKET_DWORDS / 2 }>()),
            map.u32s()
                .get(2 * first..)
                .and_then(|s| s.first_chunk::<2>()),
        ) else {
            return Err(Error::Protocol(format!(
                "{}: slot outside the ring",
                self.name
            )));
        };
        for (i, dst) in body.iter().enumerate().skip(1) {
            let (lo, hi) = (words[2 * i], words[2 * i + 1]);
            dst.store(u64::from(lo) | u64::from(hi) << 32, Ordering::Relaxed);
        }
        head[1].store(words[1], Ordering::Relaxed);
        head[0].store(words[0], Ordering::Release);
        Ok(())
    }
}

impl AqlSync {
    /// The prologue (wait until the timeline signal holds `prev`, then the memory barrier) as
    /// one slot's PM4: the dwords and how many of them are used.
    pub(crate) fn prologue(&self, prev: u32) -> ([u32; IB_SLOT_DWORDS], usize) {
        let mut pre = self.pre;
        if let Some(v) = pre.get_mut(self.wait_at) {
            *v = prev;
        }
        (pre, self.pre_len)
    }

    /// The epilogue (the timeline signal's RELEASE_MEMs of `value`) as one slot's PM4.
    pub(crate) fn epilogue(&self, value: u32) -> ([u32; IB_SLOT_DWORDS], usize) {
        let mut post = self.post;
        if let Some(d) = post.get_mut(self.data_at..self.data_at + 2) {
            d.copy_from_slice(&[value, 0]);
        }
        (post, self.post_len)
    }
}

impl AqlQueue {
    /// Packets the ring holds: a larger submission goes in parts.
    pub(crate) fn slots(&self) -> u64 {
        self.slots
    }

    /// Most slots `part` can take wherever it starts: a PM4 body of `m` slots may first fill
    /// up to `m - 1` slots at the ring's end with no-op packets.
    pub(crate) fn worst_slots(part: &AqlPart<'_>) -> u64 {
        match part {
            AqlPart::Pm4(d) => 2 * Self::pm4_slots(d.len()) - 1,
            AqlPart::Dispatch(..) | AqlPart::Packet(_) => 1,
        }
    }
}

impl Drop for AqlQueue {
    fn drop(&mut self) {
        destroy_queue(&self.core, self.queue_id);
    }
}

#[cfg(test)]
mod tests {
    use super::IB_SLOT_DWORDS;

    #[test]
    fn pm4_bodies_take_whole_slots() {
        assert_eq!(super::AqlQueue::pm4_slots(0), 1);
        assert_eq!(super::AqlQueue::pm4_slots(IB_SLOT_DWORDS), 1);
        assert_eq!(super::AqlQueue::pm4_slots(IB_SLOT_DWORDS + 1), 2);
    }
}
