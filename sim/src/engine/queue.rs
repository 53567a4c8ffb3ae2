//! One queue's engine: fetch from the ring (and indirect buffers), decode in place with core's
//! decoders, execute, write the read pointer back.

use super::bus::GpuBus;
use super::env::Env;
use super::op::{Ctx, Decoded, Inflight, decode, exec_op};
use super::trace::{Trace, TraceEvent};
use super::types::{
    AqlPending, Cause, Exec, InterruptPolicy, QueueDesc, QueueFault, QueueFaultKind, QueueId,
    QueueKind, QueueState, Regs, Site,
};
use crate::vm::Access;
use hcq_core::kfd::{
    HsaHwExceptionData, KFD_HW_EXCEPTION_GPU_HANG, KFD_HW_EXCEPTION_PER_ENGINE_RESET,
};
use hcq_core::packet::{DecodeError, DecodeErrorKind};
use hcq_core::pm4::Pm4Packet;
use hcq_core::sdma::SdmaPacket;
use std::sync::Arc;

/// Dwords fetched from the ring per read (larger packets are fetched whole).
const FETCH_DWORDS: usize = 8192;
/// Deepest indirect-buffer nesting (PM4: IB1 and IB2, as the CP has; SDMA: one level).
pub(crate) const MAX_IB_DEPTH: usize = 2;
pub(crate) struct IbFrame {
    base: u64,
    dwords: Vec<u32>,
    pos: usize,
    /// Ring units to advance when the whole IB stack has completed (set on the depth-1 frame).
    ring_len: u64,
}

/// One XCC's command processor state while another XCC's is the queue's current one, during
/// an AQL PM4 IB that every XCC runs (`aql_xcc.rs`).
pub(crate) struct XccCp {
    /// The XCC.
    pub(crate) xcc: u32,
    /// Its indirect-buffer stack (empty: it has returned from the packet's IB).
    pub(crate) ibs: Vec<IbFrame>,
    /// Its registers.
    pub(crate) regs: Regs,
}

/// The XCCs not running now, in the order they get their next turn.
pub(crate) type Parked = std::collections::VecDeque<XccCp>;

/// Fault injection state of one queue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Injection {
    pub(crate) hang: bool,
    pub(crate) stall_rptr: bool,
    pub(crate) interrupts: InterruptPolicy,
}

/// What a step did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct StepResult {
    /// Packets completed.
    pub(crate) executed: usize,
    /// Anything changed (packets, rptr, state).
    pub(crate) progressed: bool,
}

pub(crate) struct Queue {
    pub(crate) id: QueueId,
    pub(crate) desc: QueueDesc,
    pub(crate) bus: Arc<dyn GpuBus>,
    pub(crate) gpu_id: u32,
    pub(crate) rptr: u64,
    published: u64,
    pub(crate) state: QueueState,
    pub(crate) inj: Injection,
    pub(crate) suspended: bool,
    buf: Vec<u32>,
    buf_ptr: u64,
    buf_len: usize,
    /// The write pointer the doorbell showed when last looked at ([`Queue::step`]).
    pub(crate) seen_wptr: u64,
    /// AQL: the AMD_AQL_FORMAT_PM4_IB packet whose indirect buffer is running (`aql.rs`).
    pub(crate) aql_pending: Option<AqlPending>,
    /// SDMA: buffer index where the ring wraps (a packet may not cross it).
    ring_end_at: usize,
    pub(crate) ibs: Vec<IbFrame>,
    ib_pool: Vec<Vec<u32>>,
    pub(crate) regs: Regs,
    pub(crate) scratch: Vec<u8>,
    pub(crate) inflight: Inflight,
    pub(crate) trace: Trace,
    pub(crate) executed: u64,
    /// Which XCC runs this queue, of how many (`xcc.rs`).
    pub(crate) seat: super::xcc::XccSeat,
    /// AQL: the XCC whose command processor is the current one (`ibs`, `regs`) while an
    /// AMD_AQL_FORMAT_PM4_IB packet's indirect buffer runs on every XCC (`aql_xcc.rs`).
    pub(crate) aql_xcc: u32,
    /// AQL: the other XCCs' command processors running that IB, in turn order.
    pub(crate) aql_parked: Parked,
    /// AQL: `amd_queue_t.scratch_backing_memory_byte_size` at the last kernel dispatch: the
    /// bytes from one XCC's scratch to the next's (`xcc.rs`).
    pub(crate) aql_scratch_stride: u64,
    /// AQL: the last kernel dispatch packet had no completion signal and no release fence,
    /// and no packet with the barrier bit came since (`xcc::check_aql_release`).
    pub(crate) aql_unfenced: bool,
}

fn units_per_dword(kind: QueueKind) -> u64 {
    match kind {
        QueueKind::Compute | QueueKind::Aql => 1,
        QueueKind::Sdma => 4,
    }
}

/// Read/write pointer units in the ring: dwords (PM4), bytes (SDMA), 64-byte packets (AQL).
fn ring_units(kind: QueueKind, ring_size: u64) -> u64 {
    match kind {
        QueueKind::Compute => ring_size / 4,
        QueueKind::Sdma => ring_size,
        QueueKind::Aql => ring_size / 64,
    }
}

/// Stop reasons inside the fetch loop.
pub(crate) enum Flow {
    /// Executed one packet, entered or left an IB, or fetched more of a packet; keep going
    /// (counted against the budget, which bounds the loop).
    Next,
    /// Nothing more to do now (empty ring, incomplete packet, blocked, faulted).
    Stop,
}

impl Queue {
    pub(crate) fn new(
        id: QueueId,
        desc: QueueDesc,
        bus: Arc<dyn GpuBus>,
        trace_cap: usize,
    ) -> Self {
        let gpu_id = bus.gpu_id();
        Self {
            id,
            desc,
            gpu_id,
            rptr: desc.start,
            published: desc.start,
            state: QueueState::Idle,
            inj: Injection::default(),
            suspended: false,
            buf: Vec::new(),
            buf_ptr: desc.start,
            buf_len: 0,
            seen_wptr: desc.start,
            aql_pending: None,
            ring_end_at: usize::MAX,
            ibs: Vec::new(),
            ib_pool: Vec::new(),
            regs: Regs::new(desc.kind),
            scratch: Vec::new(),
            inflight: Inflight::default(),
            trace: Trace::new(trace_cap),
            executed: 0,
            seat: super::xcc::XccSeat::default(),
            aql_xcc: 0,
            aql_parked: Parked::new(),
            aql_scratch_stride: 0,
            aql_unfenced: false,
            bus,
        }
    }

    fn upd(&self) -> u64 {
        units_per_dword(self.desc.kind)
    }

    fn size_dw(&self) -> u64 {
        self.desc.ring_size / 4
    }

    /// The write pointer the doorbell announces (`None`: the bus has no such doorbell). An AQL
    /// doorbell holds the index of the last packet written (ROCR `AqlQueue::StoreRelaxed`
    /// stores the packet id; tinygrad's AMD_AQL path rings `put_value - 1`), so the write
    /// pointer is one more; KFD starts it at 2^64 - 1 (`kfd/queues.rs`): an empty queue.
    pub(crate) fn wptr(&self) -> Option<u64> {
        let d = self.bus.doorbell(self.desc.doorbell_offset)?;
        Some(match self.desc.kind {
            QueueKind::Aql => d.wrapping_add(1),
            _ => d,
        })
    }

    fn site_ring(&self) -> Site {
        Site::Ring(self.rptr)
    }

    fn trace(&mut self, seq: &mut u64, site: Site, event: TraceEvent) {
        *seq += 1;
        self.trace.event(*seq, site, event);
    }

    /// The first signal write in the ring from the current packet on (address, value, packet,
    /// ring position): what the host should have waited for before a racing access.
    fn release_after(&self) -> Option<(u64, u32, &'static str, u64)> {
        let upd = self.upd();
        let mut cursor = usize::try_from(self.rptr.wrapping_sub(self.buf_ptr) / upd).ok()?;
        let mut pos = self.rptr;
        while let Some(avail) = self.buf.get(cursor..self.buf_len)
            && !avail.is_empty()
        {
            let (pkt, len) = decode(self.desc.kind, avail).ok()?;
            if let Some((addr, value, name)) = super::op::release_of(&pkt) {
                return Some((addr, value, name, pos));
            }
            cursor += len;
            // CAST: usize -> u64 widens.
            pos = pos.wrapping_add(len as u64 * upd);
        }
        None
    }

    /// Stops the queue and raises the exception event.
    pub(crate) fn fault(&mut self, seq: &mut u64, site: Site, cause: Cause) {
        // A page fault names what the address is near or was (a buffer it runs past, one
        // freed or not mapped to this GPU), then the kernel instruction's place.
        let near = |v: &crate::vm::VmFault| {
            self.bus
                .describe_va(v.va)
                .map(|d| format!(" ({d})"))
                .unwrap_or_default()
        };
        let mut message = match &cause {
            Cause::Vm(v) => format!("{v}{}", near(v)),
            Cause::VmAt(v, at) => format!("{v}{} {at}", near(v)),
            Cause::Hw(m) => m.clone(),
        };
        if message.starts_with("host race:") {
            match self.release_after() {
                Some((addr, value, name, pos)) => message.push_str(&format!(
                    ": waiting for the value at {addr:#x} to reach {value} (the {name} at ring@{pos:#x} after it signals its completion) before the access would have ordered them"
                )),
                None => message.push_str(
                    ": nothing after it in the ring signals its completion, so nothing could have ordered the access after it",
                ),
            }
        }
        let text = format!(
            "{} queue {} at {site}: {message}",
            self.desc.kind, self.id.0
        );
        // The reason first, so a host that sees the exception can already ask why.
        self.bus.fault_reason(&text);
        let kind = match cause {
            Cause::Vm(v) | Cause::VmAt(v, _) => {
                self.bus.memory_exception(&v.memory_exception(self.gpu_id));
                QueueFaultKind::Vm(v)
            }
            Cause::Hw(_) => {
                self.bus.hw_exception(&HsaHwExceptionData {
                    reset_type: KFD_HW_EXCEPTION_PER_ENGINE_RESET,
                    reset_cause: KFD_HW_EXCEPTION_GPU_HANG,
                    memory_lost: 0,
                    gpu_id: self.gpu_id,
                });
                QueueFaultKind::Hw
            }
        };
        // What real hardware cannot tell its driver (KFD reports only the exception), the
        // simulator logs.
        log::warn!("simulated GPU {:#x}: {text}", self.gpu_id);
        self.trace(seq, site, TraceEvent::Fault(text.clone()));
        self.state = QueueState::Faulted(QueueFault {
            site,
            kind,
            message: text,
        });
        self.ibs.clear();
        self.aql_parked.clear();
    }

    /// Fetches ring dwords from `rptr` (at least `min_dw` if published). Returns how many
    /// dwords are now buffered from `rptr`.
    fn refill(&mut self, env: &Env<'_>, min_dw: usize) -> Result<usize, Cause> {
        let Some(wptr) = self.wptr() else {
            return Ok(0);
        };
        if wptr != self.seen_wptr {
            // The CP fetches whatever the doorbell announces, also in the middle of a step (the
            // threaded engine can find a new write pointer here before `step` sees it): what it
            // executes from here on was published after every signal write the host saw, so the
            // host-ordering point moves here too, or a copy the host ordered after a wait would
            // be judged unordered.
            self.seen_wptr = wptr;
            env.flight
                .borrow_mut()
                .order
                .doorbell((self.gpu_id, self.id.0));
        }
        let upd = self.upd();
        let avail = wptr.wrapping_sub(self.rptr);
        if let Some(c) = self.overrun(wptr) {
            return Err(c);
        }
        if avail % upd != 0 {
            return Err(Cause::Hw(format!(
                "SDMA write pointer {wptr:#x} is not a multiple of 4 bytes"
            )));
        }
        let avail_dw = usize::try_from(avail / upd).unwrap_or(usize::MAX);
        if avail_dw == 0 {
            return Ok(0);
        }
        let n = avail_dw.min(FETCH_DWORDS.max(min_dw));
        if self.buf.len() < n {
            self.buf.resize(n, 0);
        }
        let size_dw = self.size_dw();
        let idx = (self.rptr / upd) & (size_dw - 1);
        let first = usize::try_from(size_dw - idx).unwrap_or(usize::MAX).min(n);
        let base = self.desc.ring_base;
        let (a, b) = self.buf.split_at_mut(first);
        env.read(
            base.wrapping_add(idx * 4),
            bytemuck::cast_slice_mut(a),
            Access::Read,
        )?;
        if let Some(rest) = b.get_mut(..n - first) {
            if !rest.is_empty() {
                env.read(base, bytemuck::cast_slice_mut(rest), Access::Read)?;
            }
        }
        self.ring_end_at = match self.desc.kind {
            QueueKind::Sdma => first,
            QueueKind::Compute | QueueKind::Aql => usize::MAX,
        };
        self.buf_ptr = self.rptr;
        self.buf_len = n;
        Ok(n)
    }

    /// Whether write pointer `wptr` is more than one ring ahead of (or behind) the read
    /// pointer: the producer wrote over commands the CP has not executed (or went back).
    pub(crate) fn overrun(&self, wptr: u64) -> Option<Cause> {
        let ring = ring_units(self.desc.kind, self.desc.ring_size);
        let unit = match self.desc.kind {
            QueueKind::Compute => "dwords",
            QueueKind::Sdma => "bytes",
            QueueKind::Aql => "packets",
        };
        if wptr < self.rptr {
            return Some(Cause::Hw(format!(
                "write pointer {wptr:#x} is behind the read pointer {:#x} (ring of {ring:#x} {unit}): the write pointer only grows",
                self.rptr
            )));
        }
        (wptr - self.rptr > ring).then(|| {
            Cause::Hw(format!(
                "write pointer {wptr:#x} is not within one ring ({ring:#x} {unit}) of the read pointer {:#x}: ring overrun, the producer wrote over {:#x} {unit} of commands the CP had not read",
                self.rptr,
                wptr - self.rptr - ring
            ))
        })
    }

    /// A new write pointer on the doorbell: checked against the read pointer (an overrun
    /// faults), and the commands not executed yet are read from the ring again (the CP
    /// executes what is in the ring, so a producer that wrote over them is seen). `false`
    /// when the queue faulted.
    pub(crate) fn doorbell_changed(&mut self, seq: &mut u64) -> bool {
        let Some(w) = self.wptr() else {
            return true;
        };
        if w == self.seen_wptr {
            return true;
        }
        self.seen_wptr = w;
        if let Some(c) = self.overrun(w) {
            let site = self.site_ring();
            self.fault(seq, site, c);
            return false;
        }
        self.buf_len = 0;
        true
    }

    /// Writes the read pointer back (unless stalled). Returns whether it wrote.
    pub(crate) fn publish(&mut self, env: &Env<'_>, seq: &mut u64) -> bool {
        if self.inj.stall_rptr || self.published == self.rptr {
            return false;
        }
        match env.store_u64(self.desc.rptr_addr, self.rptr) {
            Ok(()) => {
                self.published = self.rptr;
                true
            }
            Err(v) => {
                let site = self.site_ring();
                self.fault(seq, site, Cause::Vm(v));
                true
            }
        }
    }

    /// Runs up to `budget` packets. Interrupts raised are appended to `irqs`.
    pub(crate) fn step(
        &mut self,
        env: &Env<'_>,
        irqs: &mut Vec<u32>,
        seq: &mut u64,
        budget: usize,
    ) -> StepResult {
        if self.desc.kind == QueueKind::Aql {
            return self.step_aql(env, irqs, seq, budget);
        }
        let mut res = StepResult::default();
        if self.inj.hang || self.suspended || matches!(self.state, QueueState::Faulted(_)) {
            return res;
        }
        if self.desc.kind == QueueKind::Compute && self.seat.xcc >= self.seat.count {
            let msg = format!(
                "PM4 target XCC {} (CREATE_QUEUE queue_percentage bits 8..=15) on a node of {} XCCs: no XCC processes this queue",
                self.seat.xcc, self.seat.count
            );
            let site = self.site_ring();
            self.fault(seq, site, Cause::Hw(msg));
            res.progressed = true;
            return res;
        }
        let before = self.state.clone();
        let seen = self.seen_wptr;
        if !self.doorbell_changed(seq) {
            res.progressed = true;
            return res;
        }
        if self.seen_wptr != seen {
            env.flight
                .borrow_mut()
                .order
                .doorbell((self.gpu_id, self.id.0));
        }
        while res.executed < budget {
            let flow = if self.ibs.is_empty() {
                self.step_ring(env, irqs, seq)
            } else {
                self.step_ib(env, irqs, seq)
            };
            match flow {
                Flow::Next => res.executed += 1,
                Flow::Stop => break,
            }
        }
        if res.executed > 0 {
            res.progressed = true;
            // CAST: usize -> u64 widens.
            self.executed += res.executed as u64;
        }
        if self.publish(env, seq) {
            res.progressed = true;
        }
        if self.state != before {
            res.progressed = true;
        }
        if res.executed > 0
            && !matches!(self.state, QueueState::Faulted(_) | QueueState::Waiting(_))
        {
            self.state = QueueState::Idle;
        }
        res
    }

    fn step_ring(&mut self, env: &Env<'_>, irqs: &mut Vec<u32>, seq: &mut u64) -> Flow {
        let upd = self.upd();
        let mut cursor =
            usize::try_from((self.rptr.wrapping_sub(self.buf_ptr)) / upd).unwrap_or(usize::MAX);
        if cursor >= self.buf_len {
            match self.refill(env, 0) {
                Ok(0) => {
                    if matches!(self.state, QueueState::Waiting(_)) {
                        self.state = QueueState::Idle;
                    }
                    return Flow::Stop;
                }
                Ok(_) => cursor = 0,
                Err(c) => {
                    let site = self.site_ring();
                    self.fault(seq, site, c);
                    return Flow::Stop;
                }
            }
        }
        let site = self.site_ring();
        let kind = self.desc.kind;
        let avail = self.buf.get(cursor..self.buf_len).unwrap_or_default();
        if kind != QueueKind::Sdma && avail.first().is_some_and(|&h| super::xcc::is_pred_exec(h)) {
            let msg = format!(
                "ring dword {:#x}: PRED_EXEC in the ring: the CP honours it only inside an indirect buffer (put the XCC-predicated packets in an IB)",
                self.rptr / upd
            );
            self.fault(seq, site, Cause::Hw(msg));
            return Flow::Stop;
        }
        let (len, outcome) = match decode(kind, avail) {
            Ok((pkt, len)) => {
                // CAST: usize -> u64 widens.
                if cursor < self.ring_end_at && cursor + len > self.ring_end_at {
                    let msg = format!(
                        "SDMA packet of {len} dwords at dword {} crosses the end of the ring ({} dwords): the engine would read it wrong",
                        self.rptr / upd % self.size_dw(),
                        self.size_dw()
                    );
                    self.fault(seq, site, Cause::Hw(msg));
                    return Flow::Stop;
                }
                if let Decoded::Sdma(SdmaPacket::Indirect(_)) = pkt {
                    // Real engines (Linux sdma_v6_0 pads `(2 - wptr) & 7` NOPs before it) need a
                    // ring INDIRECT to end on an 8-dword boundary.
                    // CAST: usize -> u64 widens.
                    let end = (self.rptr / upd + len as u64 - 1) % self.size_dw();
                    if end % 8 != 7 {
                        let msg = format!(
                            "SDMA INDIRECT at ring dword {} ends at dword {end}, not on an 8-dword boundary (pad it with NOPs to end at a dword = 7 mod 8)",
                            self.rptr / upd % self.size_dw()
                        );
                        self.fault(seq, site, Cause::Hw(msg));
                        return Flow::Stop;
                    }
                }
                if let Err(c) = self.xcc_checks(&pkt) {
                    self.fault(seq, site, c);
                    return Flow::Stop;
                }
                let c = Ctx {
                    id: self.id,
                    gpu: self.gpu_id,
                    regs: &mut self.regs,
                    scratch: &mut self.scratch,
                    inflight: &mut self.inflight,
                    desc: &self.desc,
                    pos: self.rptr,
                    xcc: self.seat.split(self.desc.kind, self.aql_scratch_stride),
                };
                (len, exec_op(c, env, irqs, &pkt, 0, site))
            }
            Err(DecodeError {
                kind: DecodeErrorKind::Truncated { needed, .. },
                ..
            }) => {
                // CAST: usize -> u64 widens.
                if needed as u64 > self.size_dw() {
                    let msg = format!(
                        "ring dword {:#x}: a packet of {needed} dwords is longer than the ring ({} dwords)",
                        self.rptr / upd,
                        self.size_dw()
                    );
                    self.fault(seq, site, Cause::Hw(msg));
                    return Flow::Stop;
                }
                // The packet is not fully fetched: fetch more if it is published, else wait for
                // the producer to publish the rest.
                return match self.refill(env, needed) {
                    Ok(n) if n >= needed => Flow::Next,
                    Ok(_) => Flow::Stop,
                    Err(c) => {
                        self.fault(seq, site, c);
                        Flow::Stop
                    }
                };
            }
            Err(e) => {
                let at = self.rptr / upd;
                let msg = format!("ring dword {at:#x}: {}", strip_at(&e));
                self.fault(seq, site, Cause::Hw(msg));
                return Flow::Stop;
            }
        };
        match outcome {
            Ok(Exec::Done | Exec::Dispatch(_)) => {
                *seq += 1;
                let window = self.buf.get(cursor..self.buf_len).unwrap_or_default();
                self.trace.packet(*seq, site, window, len);
                // CAST: usize -> u64 widens.
                self.rptr = self.rptr.wrapping_add(len as u64 * upd);
                env.clock.tick();
                if matches!(self.state, QueueState::Waiting(_)) {
                    self.state = QueueState::Idle;
                }
                Flow::Next
            }
            Ok(Exec::Wait(w)) => {
                self.state = QueueState::Waiting(w);
                Flow::Stop
            }
            Ok(Exec::Ib { base, dwords, .. }) => {
                *seq += 1;
                let window = self.buf.get(cursor..self.buf_len).unwrap_or_default();
                self.trace.packet(*seq, site, window, len);
                env.clock.tick();
                // CAST: usize -> u64 widens.
                match self.push_ib(env, base, dwords, len as u64 * upd) {
                    Ok(()) => Flow::Next,
                    Err(c) => {
                        self.fault(seq, site, c);
                        Flow::Stop
                    }
                }
            }
            Err((at, c)) => {
                self.fault(seq, at, c);
                Flow::Stop
            }
        }
    }

    pub(crate) fn push_ib(
        &mut self,
        env: &Env<'_>,
        base: u64,
        dwords: u32,
        ring_len: u64,
    ) -> Result<(), Cause> {
        if self.ibs.len() >= MAX_IB_DEPTH {
            return Err(Cause::Hw(format!(
                "indirect buffer at {base:#x} nested deeper than {MAX_IB_DEPTH} levels"
            )));
        }
        let mut v = self.ib_pool.pop().unwrap_or_default();
        v.clear();
        // CAST: u32 -> usize widens.
        v.resize(dwords as usize, 0);
        if let Err(e) = env.read(base, bytemuck::cast_slice_mut(&mut v), Access::Read) {
            self.ib_pool.push(v);
            return Err(Cause::Vm(e));
        }
        self.ibs.push(IbFrame {
            base,
            dwords: v,
            pos: 0,
            ring_len,
        });
        Ok(())
    }

    fn pop_ib(&mut self) {
        if let Some(f) = self.ibs.pop() {
            if self.ibs.is_empty() {
                self.rptr = self.rptr.wrapping_add(f.ring_len);
            }
            self.ib_pool.push(f.dwords);
        }
    }

    /// Records the packet of `len` dwords at the top IB's position.
    fn record_ib(&mut self, seq: &mut u64, site: Site, len: usize) {
        *seq += 1;
        if let Some(t) = self.ibs.last() {
            let window = t.dwords.get(t.pos..).unwrap_or_default();
            self.trace.packet(*seq, site, window, len);
        }
    }

    pub(crate) fn step_ib(&mut self, env: &Env<'_>, irqs: &mut Vec<u32>, seq: &mut u64) -> Flow {
        let depth = self.ibs.len();
        let kind = self.desc.kind;
        let Some(top) = self.ibs.last() else {
            return Flow::Next;
        };
        if top.pos >= top.dwords.len() {
            self.pop_ib();
            return Flow::Next;
        }
        let site = Site::Ib {
            base: top.base,
            // CAST: positions are below 2^20 (IB_SIZE is 20 bits).
            index: top.pos as u32,
            // CAST: depth <= MAX_IB_DEPTH.
            depth: depth as u8,
        };
        let rest = top.dwords.get(top.pos..).unwrap_or_default();
        if kind != QueueKind::Sdma && rest.first().is_some_and(|&h| super::xcc::is_pred_exec(h)) {
            let xcc = if kind == QueueKind::Aql {
                self.aql_xcc
            } else {
                self.seat.xcc
            };
            let (pos, end) = (top.pos, top.dwords.len());
            return match super::xcc::pred_exec(rest, xcc) {
                Ok(n) if pos + n <= end => {
                    self.record_ib(seq, site, 2);
                    env.clock.tick();
                    if let Some(t) = self.ibs.last_mut() {
                        t.pos += n;
                    }
                    Flow::Next
                }
                Ok(n) => {
                    let msg = format!(
                        "PRED_EXEC governs {} dwords but the indirect buffer has {} after it",
                        n - 2,
                        end - pos - 2
                    );
                    self.fault(seq, site, Cause::Hw(msg));
                    Flow::Stop
                }
                Err(m) => {
                    self.fault(seq, site, Cause::Hw(m));
                    Flow::Stop
                }
            };
        }
        let (pkt, len) = match decode(kind, rest) {
            Ok(x) => x,
            Err(e) => {
                let msg = match e.kind {
                    DecodeErrorKind::Truncated { needed, available } => format!(
                        "indirect buffer ends inside a packet (needs {needed} dwords, {available} left)"
                    ),
                    _ => strip_at(&e),
                };
                self.fault(seq, site, Cause::Hw(msg));
                return Flow::Stop;
            }
        };
        if let Err(c) = self.xcc_checks(&pkt) {
            self.fault(seq, site, c);
            return Flow::Stop;
        }
        let c = Ctx {
            id: self.id,
            gpu: self.gpu_id,
            regs: &mut self.regs,
            scratch: &mut self.scratch,
            inflight: &mut self.inflight,
            desc: &self.desc,
            pos: self.rptr,
            xcc: self.seat.split(self.desc.kind, self.aql_scratch_stride),
        };
        let r = exec_op(c, env, irqs, &pkt, depth, site);
        match r {
            Ok(Exec::Done | Exec::Dispatch(_)) => {
                self.record_ib(seq, site, len);
                env.clock.tick();
                if let Some(t) = self.ibs.last_mut() {
                    t.pos += len;
                }
                if matches!(self.state, QueueState::Waiting(_)) {
                    self.state = QueueState::Idle;
                }
                Flow::Next
            }
            Ok(Exec::Wait(w)) => {
                self.state = QueueState::Waiting(w);
                Flow::Stop
            }
            Ok(Exec::Ib {
                base,
                dwords,
                chain,
            }) => {
                self.record_ib(seq, site, len);
                env.clock.tick();
                let ring_len = if chain {
                    // The chained IB replaces this one.
                    let f = self.ibs.pop();
                    let rl = f.as_ref().map_or(0, |f| f.ring_len);
                    if let Some(f) = f {
                        self.ib_pool.push(f.dwords);
                    }
                    rl
                } else {
                    if let Some(t) = self.ibs.last_mut() {
                        t.pos += len;
                    }
                    0
                };
                let ring_len = if self.ibs.is_empty() { ring_len } else { 0 };
                match self.push_ib(env, base, dwords, ring_len) {
                    Ok(()) => Flow::Next,
                    Err(c) => {
                        self.fault(seq, site, c);
                        Flow::Stop
                    }
                }
            }
            Err((at, c)) => {
                self.fault(seq, at, c);
                Flow::Stop
            }
        }
    }
}

impl Queue {
    /// The multi-XCC checks before a packet runs (`xcc.rs`).
    fn xcc_checks(&self, pkt: &Decoded<'_>) -> Result<(), Cause> {
        if self.seat.count <= 1 {
            return Ok(());
        }
        match pkt {
            Decoded::Pm4(Pm4Packet::DispatchDirect(_)) => {
                super::xcc::check_dispatch(self.seat, self.desc.kind, &self.regs, &self.desc)
            }
            Decoded::Pm4(Pm4Packet::ReleaseMem(r)) if self.desc.kind == QueueKind::Aql => {
                super::xcc::check_aql_release(self.seat, self.aql_xcc, self.aql_unfenced, r)
            }
            _ => Ok(()),
        }
    }
}

/// The decoder's message without its "dword N:" prefix (the caller names the place).
fn strip_at(e: &DecodeError) -> String {
    let s = e.to_string();
    match s.split_once(": ") {
        Some((_, rest)) => rest.to_string(),
        None => s,
    }
}

impl Queue {
    /// Ring and IBs consumed, nothing blocked: the CP is idle.
    pub(crate) fn is_drained(&self) -> bool {
        !self.aql_ib_running()
            && matches!(self.state, QueueState::Idle)
            && self.wptr().is_none_or(|w| w == self.rptr)
    }

    /// After the queue's turn in round `round` (it executed `executed` packets): a faulted
    /// queue drops its dispatches; a queue that executed nothing lets its in-flight dispatches
    /// land once they have lingered, and, when drained, retire. Returns whether one landed.
    pub(crate) fn age(
        &mut self,
        env: &Env<'_>,
        seq: &mut u64,
        executed: usize,
        round: u64,
    ) -> bool {
        if matches!(self.state, QueueState::Faulted(_)) {
            self.inflight.clear();
            env.flight.borrow_mut().retire_queue(self.id);
            return false;
        }
        if executed > 0 {
            env.flight.borrow_mut().busy(self.id);
            return false;
        }
        let landed = match self.inflight.land_lingered(&self.desc, env, round) {
            Ok(landed) => landed,
            Err((site, c)) => {
                self.fault(seq, site, c);
                return true;
            }
        };
        if self.is_drained() {
            env.flight.borrow_mut().retire_lingered(self.id, round);
        }
        landed
    }
}
