//! The command processor's AQL packet processor: an AQL queue (KFD_IOC_QUEUE_TYPE_COMPUTE_AQL)
//! is a ring of 64-byte HSA packets the CP reads from `read_dispatch_id` up to the doorbell.
//!
//! Sources: the HSA Platform System Architecture spec 1.2 §2.8-2.9 (packet header, packet
//! types, barrier bit, acquire/release fence scopes; "INVALID: the packet has been processed
//! in the past, but has not been reassigned to the packet processor. A packet processor must
//! not process a packet of this type", so the CP waits on it), HSA runtime `hsa.h`
//! (`hsa_kernel_dispatch_packet_t`, `hsa_barrier_and_packet_t`/`_or_`), ROCR-Runtime
//! `amd_hsa_queue.h` (`amd_queue_t`: `read_dispatch_id` at 128, followed by
//! `read_dispatch_id_field_base_byte_offset` — how the CP finds the structure from the read
//! pointer KFD was given — `compute_tmpring_size` at 140, `scratch_resource_descriptor` at
//! 144, `scratch_backing_memory_location` at 160, `scratch_wave64_lane_byte_size` at 176,
//! `queue_properties` at 180 with `AMD_QUEUE_PROPERTIES_ENABLE_PROFILING` = bit 3),
//! `amd_hsa_signal.h` (`amd_signal_t`: kind at 0, value at 8, `event_mailbox_ptr` at 16,
//! `event_id` at 24, `start_ts`/`end_ts` at 32/40; AMD_SIGNAL_KIND_USER = 1), `amd_aql_queue.cpp`
//! and `amd_hsa_kernel_code.h` (AMD_AQL_FORMAT_PM4_IB = 1: a vendor-specific packet whose
//! dwords 1..=4 are a PM4 INDIRECT_BUFFER and dword 5 `dw_cnt_remain` = 0xA, the rest of the
//! slot; tinygrad 0.14's `AMDComputeAQLQueue._pm4_pkt` builds the same), LLVM AMDGPUUsage
//! "Initial Kernel Execution State" (the user SGPRs the CP loads for a dispatch, in order).
//!
//! Each packet is executed as the PM4 operations the CP performs for it, through the same
//! `exec_op` path PM4 queues take (so the race detector, the HDP and cache models, the
//! ordering checks and the dispatch checks of `dispatch.rs` judge AQL dispatches alike): the
//! barrier bit is a CS_PARTIAL_FLUSH (wait for every earlier packet), an acquire fence an
//! ACQUIRE_MEM invalidation (the L2 too at system scope), a kernel dispatch the SH registers
//! the descriptor and packet give plus DISPATCH_DIRECT, a release fence or completion signal
//! an end-of-pipe RELEASE_MEM (L2 write-back at system scope) after which the signal is
//! decremented, its mailbox written and the interrupt raised. After a packet the CP writes
//! its header back to INVALID (keeping `setup`) and advances `read_dispatch_id`.
//!
//! Not modelled: partial work-groups at the grid's edge (a grid that is not a multiple of the
//! work-group size faults, naming the simulator), and the CP's scratch-growth request to the
//! runtime (a dispatch needing more private memory than the queue's scratch faults).

use super::dispatch::{LDS_LIMIT, MAX_WORKGROUP_SIZE};
use super::env::Env;
use super::op::{Ctx, Decoded, exec_op};
use super::queue::{Flow, Queue, StepResult};
use super::types::{AqlPending, Cause, Exec, QueueState, Site, WaitInfo};
use crate::vm::Access;
use hcq_core::addr::GpuVa;
use hcq_core::codeobj::LDS_GRANULE_BYTES;
use hcq_core::hsa::{DispatchPacket, KernelCodeProperties, KernelDescriptor, PgmRsrc2};
use hcq_core::pm4::{CacheInvalidate, release_packet};
use hcq_core::pm4::{DispatchDirect, DispatchInitiator, EventWriteCntl, Pm4Packet};
use hcq_core::sel::{DataSel, IntSel};

/// `hsa_packet_type_t` (hsa.h).
const TYPE_VENDOR_SPECIFIC: u32 = 0;
const TYPE_INVALID: u32 = 1;
const TYPE_KERNEL_DISPATCH: u32 = 2;
const TYPE_BARRIER_AND: u32 = 3;
const TYPE_AGENT_DISPATCH: u32 = 4;
const TYPE_BARRIER_OR: u32 = 5;
/// `HSA_PACKET_HEADER_BARRIER` (bit 8), `_SCACQUIRE_FENCE_SCOPE` (9..=10),
/// `_SCRELEASE_FENCE_SCOPE` (11..=12); scopes: 0 none, 1 agent, 2 system.
const BARRIER_BIT: u32 = 1 << 8;
const SCOPE_SYSTEM: u32 = 2;
/// `AMD_AQL_FORMAT_PM4_IB` (amd_hsa_queue.h / amd_aql_queue.cpp).
const AMD_AQL_FORMAT_PM4_IB: u32 = 1;
/// `dw_cnt_remain` of an AMD_AQL_FORMAT_PM4_IB packet: the 10 dwords after it in the slot.
const PM4_IB_DW_CNT_REMAIN: u32 = 0xA;
/// `amd_queue_t` offsets (amd_hsa_queue.h).
const Q_READ_DISPATCH_ID: u64 = 128;
const Q_FIELD_BASE_OFFSET: u64 = 136;
/// `AMD_QUEUE_PROPERTIES_ENABLE_PROFILING`.
const Q_PROFILING: u32 = 1 << 3;
/// `AMD_SIGNAL_KIND_USER`.
const SIGNAL_KIND_USER: i64 = 1;
/// Bytes of one AQL packet.
pub(crate) const AQL_PACKET_BYTES: u64 = 64;

/// What the CP reads of `amd_queue_t` for a dispatch.
struct AmdQueue {
    base: u64,
    tmpring: u32,
    scratch_rsrc: [u32; 4],
    scratch_base: u64,
    /// `scratch_backing_memory_byte_size` (at 168): the scratch of one XCC.
    xcc_bytes: u64,
    lane_bytes: u32,
}

fn le32(b: &[u8], at: usize) -> u32 {
    b.get(at..at + 4)
        .and_then(|s| s.try_into().ok())
        .map_or(0, u32::from_le_bytes)
}

fn le64(b: &[u8], at: usize) -> u64 {
    u64::from(le32(b, at)) | u64::from(le32(b, at + 4)) << 32
}

fn hw<T>(msg: String) -> Result<T, Cause> {
    Err(Cause::Hw(msg))
}

/// How one packet's processing ended.
enum Done {
    /// Finished: reset the header, advance the read index.
    Finished,
    /// Its indirect buffer was entered: finished when the IB returns.
    InIb,
    /// Blocked (INVALID header, unsatisfied barrier): tried again next time.
    Wait(WaitInfo),
}

impl Queue {
    /// Runs up to `budget` AQL packets (or PM4 packets of their indirect buffers); the AQL
    /// counterpart of [`Queue::step`].
    pub(crate) fn step_aql(
        &mut self,
        env: &Env<'_>,
        irqs: &mut Vec<u32>,
        seq: &mut u64,
        budget: usize,
    ) -> StepResult {
        let mut res = StepResult::default();
        if self.inj.hang || self.suspended || matches!(self.state, QueueState::Faulted(_)) {
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
            let flow = if self.aql_pending.is_some() && self.aql_ib_running() {
                self.step_aql_ibs(env, irqs, seq)
            } else if self.ibs.is_empty() {
                self.step_aql_packet(env, irqs, seq)
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
        // The read pointer KFD was given is `amd_queue_t.read_dispatch_id`.
        if self.publish(env, seq) || self.state != before {
            res.progressed = true;
        }
        if res.executed > 0
            && !matches!(self.state, QueueState::Faulted(_) | QueueState::Waiting(_))
        {
            self.state = QueueState::Idle;
        }
        res
    }

    fn slot_addr(&self, index: u64) -> u64 {
        let n = (self.desc.ring_size / AQL_PACKET_BYTES).max(1);
        self.desc.ring_base + (index & (n - 1)) * AQL_PACKET_BYTES
    }

    fn step_aql_packet(&mut self, env: &Env<'_>, irqs: &mut Vec<u32>, seq: &mut u64) -> Flow {
        let site = Site::Ring(self.rptr);
        if let Some(p) = self.aql_pending.take() {
            // The IB of a PM4_IB packet returned on every XCC (`aql_xcc.rs`): the packet
            // completes.
            self.aql_xcc_leave();
            let scope = (p.word0 >> 11) & 3;
            let r = self
                .release(env, irqs, scope, p.signal, p.start, site)
                .and_then(|()| {
                    self.retire_packet(env, p.slot, p.word0)
                        .map_err(|c| (site, c))
                });
            return match r {
                Ok(()) => Flow::Next,
                Err((at, c)) => {
                    self.fault(seq, at, c);
                    Flow::Stop
                }
            };
        }
        let Some(wptr) = self.wptr() else {
            return Flow::Stop;
        };
        if wptr != self.seen_wptr {
            // A doorbell rung in the middle of a step (the threaded engine finds it here before
            // `step_aql` does): what runs from here on was published after every signal write
            // the host saw, so the host-ordering point moves here, as `Queue::refill` does for
            // PM4; else a packet the host ordered after a wait is judged unordered.
            self.seen_wptr = wptr;
            if let Some(c) = self.overrun(wptr) {
                self.fault(seq, site, c);
                return Flow::Stop;
            }
            env.flight
                .borrow_mut()
                .order
                .doorbell((self.gpu_id, self.id.0));
        }
        if wptr == self.rptr {
            if matches!(self.state, QueueState::Waiting(_)) {
                self.state = QueueState::Idle;
            }
            return Flow::Stop;
        }
        let slot = self.slot_addr(self.rptr);
        let mut b = [0u8; 64];
        if let Err(v) = env.read_unrecorded(slot, &mut b, Access::Read) {
            self.fault(seq, site, Cause::Vm(v));
            return Flow::Stop;
        }
        match self.aql_packet(env, irqs, &b, slot, site) {
            Ok(Done::Finished) => {
                if let Err(c) = self.retire_packet(env, slot, le32(&b, 0)) {
                    self.fault(seq, site, c);
                    return Flow::Stop;
                }
                *seq += 1;
                let words: [u32; 16] = core::array::from_fn(|i| le32(&b, i * 4));
                self.trace.packet(*seq, site, &words, 16);
                env.clock.tick();
                if matches!(self.state, QueueState::Waiting(_)) {
                    self.state = QueueState::Idle;
                }
                Flow::Next
            }
            Ok(Done::InIb) => {
                *seq += 1;
                let words: [u32; 16] = core::array::from_fn(|i| le32(&b, i * 4));
                self.trace.packet(*seq, site, &words, 16);
                env.clock.tick();
                if matches!(self.state, QueueState::Waiting(_)) {
                    self.state = QueueState::Idle;
                }
                Flow::Next
            }
            Ok(Done::Wait(w)) => {
                self.state = QueueState::Waiting(w);
                Flow::Stop
            }
            Err((at, c)) => {
                self.fault(seq, at, c);
                Flow::Stop
            }
        }
    }

    /// The packet at the read index is done: its header goes back to INVALID (the `setup`
    /// half stays) and the read index moves on.
    fn retire_packet(&mut self, env: &Env<'_>, slot: u64, word0: u32) -> Result<(), Cause> {
        env.store_u32(slot, (word0 & 0xffff_0000) | TYPE_INVALID)?;
        self.rptr = self.rptr.wrapping_add(1);
        Ok(())
    }

    /// One PM4 operation of a packet, through the path PM4 queues take.
    fn op(
        &mut self,
        env: &Env<'_>,
        irqs: &mut Vec<u32>,
        pkt: &Pm4Packet<'_>,
        site: Site,
    ) -> Result<Exec, (Site, Cause)> {
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
        exec_op(c, env, irqs, &Decoded::Pm4(*pkt), 0, site)
    }

    /// The barrier bit (wait for every earlier packet) and the acquire fence.
    fn launch(
        &mut self,
        env: &Env<'_>,
        irqs: &mut Vec<u32>,
        word0: u32,
        site: Site,
    ) -> Result<(), (Site, Cause)> {
        let arch = self.desc.arch;
        if word0 & BARRIER_BIT != 0 {
            self.aql_unfenced = false;
            let ev = EventWriteCntl::zeroed()
                .with(
                    EventWriteCntl::EVENT_TYPE,
                    arch.events.cs_partial_flush.raw(),
                )
                .with(
                    EventWriteCntl::EVENT_INDEX,
                    arch.events.cs_partial_flush_index.raw(),
                );
            self.op(env, irqs, &Pm4Packet::EventWrite(ev), site)?;
        }
        let acquire = (word0 >> 9) & 3;
        if acquire != 0 {
            let which = CacheInvalidate {
                gl2: acquire == SCOPE_SYSTEM,
                ..CacheInvalidate::ALL
            };
            let a = which.acquire(arch, 0, u64::MAX);
            self.op(env, irqs, &Pm4Packet::AcquireMem(a), site)?;
        }
        Ok(())
    }

    /// The release fence and the completion signal: an end-of-pipe RELEASE_MEM (every earlier
    /// dispatch done; L2 written back at system scope), then the signal's decrement, mailbox
    /// and interrupt.
    fn release(
        &mut self,
        env: &Env<'_>,
        irqs: &mut Vec<u32>,
        scope: u32,
        signal: u64,
        start: u64,
        site: Site,
    ) -> Result<(), (Site, Cause)> {
        if scope == 0 && signal == 0 {
            return Ok(());
        }
        let r = release_packet(
            self.desc.arch,
            DataSel::None,
            IntSel::None,
            GpuVa(0),
            0,
            0,
            scope == SCOPE_SYSTEM,
        );
        self.op(env, irqs, &Pm4Packet::ReleaseMem(r), site)?;
        if signal != 0 {
            self.complete_signal(env, irqs, signal, start)
                .map_err(|c| (site, c))?;
        }
        Ok(())
    }

    /// The CP's completion of `amd_signal_t` at `sig`: value decremented atomically, then
    /// `event_id` written to `event_mailbox_ptr` and the interrupt raised with it as context.
    fn complete_signal(
        &mut self,
        env: &Env<'_>,
        irqs: &mut Vec<u32>,
        sig: u64,
        start: u64,
    ) -> Result<(), Cause> {
        if sig % 8 != 0 {
            return hw(format!(
                "completion signal {sig:#x} is not 8-byte aligned (an amd_signal_t is 64-byte aligned)"
            ));
        }
        let mut s = [0u8; 32];
        env.read(sig, &mut s, Access::Read)?;
        // CAST: two's complement: amd_signal_kind64_t is signed.
        let kind = le64(&s, 0) as i64;
        if kind != SIGNAL_KIND_USER {
            return hw(format!(
                "completion signal {sig:#x} has kind {kind}, not AMD_SIGNAL_KIND_USER (1): the CP decrements only user signals' values"
            ));
        }
        if self.queue_properties(env)? & Q_PROFILING != 0 {
            env.store_u64(sig + 32, start)?;
            env.store_u64(sig + 40, env.now())?;
        }
        let value = le64(&s, 8);
        env.store_u64(sig + 8, value.wrapping_sub(1))?;
        let mailbox = le64(&s, 16);
        if mailbox != 0 {
            let id = le32(&s, 24);
            env.store_u32(mailbox, id)?;
            irqs.push(id);
        }
        Ok(())
    }

    /// `amd_queue_t`'s address: the read pointer KFD was given is its `read_dispatch_id`,
    /// and the field after it says how far that is from the structure's start.
    fn amd_queue_base(&self, env: &Env<'_>) -> Result<u64, Cause> {
        let off = u64::from(env.bus.load_u32(self.desc.rptr_addr + 8)?);
        if off != Q_READ_DISPATCH_ID {
            return hw(format!(
                "amd_queue_t.read_dispatch_id_field_base_byte_offset (at {:#x}, after the read pointer) is {off}, not {Q_READ_DISPATCH_ID}: the read pointer given to CREATE_QUEUE is not an amd_queue_t's read_dispatch_id",
                self.desc.rptr_addr + 8
            ));
        }
        Ok(self.desc.rptr_addr.wrapping_sub(off))
    }

    fn queue_properties(&self, env: &Env<'_>) -> Result<u32, Cause> {
        let base = self.amd_queue_base(env)?;
        Ok(env.bus.load_u32(base + 180)?)
    }

    fn amd_queue(&self, env: &Env<'_>) -> Result<AmdQueue, Cause> {
        let base = self.amd_queue_base(env)?;
        let mut b = [0u8; 56];
        env.read_unrecorded(base + Q_FIELD_BASE_OFFSET, &mut b, Access::Read)?;
        // Offsets below are from 136.
        Ok(AmdQueue {
            base,
            tmpring: le32(&b, 4),
            scratch_rsrc: [le32(&b, 8), le32(&b, 12), le32(&b, 16), le32(&b, 20)],
            scratch_base: le64(&b, 24),
            xcc_bytes: le64(&b, 32),
            lane_bytes: le32(&b, 40),
        })
    }

    fn aql_packet(
        &mut self,
        env: &Env<'_>,
        irqs: &mut Vec<u32>,
        b: &[u8; 64],
        slot: u64,
        site: Site,
    ) -> Result<Done, (Site, Cause)> {
        let word0 = le32(b, 0);
        let ty = word0 & 0xff;
        let err = |m: String| (site, Cause::Hw(m));
        match ty {
            TYPE_INVALID => Ok(Done::Wait(WaitInfo {
                addr: slot,
                function: 4, // not equal
                reference: TYPE_INVALID,
                mask: 0xff,
                seen: word0,
            })),
            TYPE_KERNEL_DISPATCH => {
                let start = env.now();
                self.launch(env, irqs, word0, site)?;
                let p = DispatchPacket::from_bytes(b);
                self.kernel_dispatch(env, irqs, &p, slot, site)?;
                let scope = (word0 >> 11) & 3;
                self.release(env, irqs, scope, p.completion_signal, start, site)?;
                self.aql_unfenced = scope == 0 && p.completion_signal == 0;
                Ok(Done::Finished)
            }
            TYPE_BARRIER_AND | TYPE_BARRIER_OR => {
                if word0 & BARRIER_BIT != 0 {
                    // Earlier packets complete before the dependencies are looked at.
                    self.launch(env, irqs, word0 & BARRIER_BIT, site)?;
                }
                let deps: Vec<u64> = (0..5)
                    .map(|i| le64(b, 8 + i * 8))
                    .filter(|&d| d != 0)
                    .collect();
                let mut first_unmet = None;
                let mut met = 0;
                for &d in &deps {
                    let mut v = [0u8; 8];
                    env.read_unrecorded(d + 8, &mut v, Access::Read)
                        .map_err(|e| (site, Cause::Vm(e)))?;
                    if u64::from_le_bytes(v) == 0 {
                        met += 1;
                    } else if first_unmet.is_none() {
                        first_unmet = Some((d, u64::from_le_bytes(v)));
                    }
                }
                // HSA §2.8.4/2.8.5: barrier-AND completes when every dependent signal is 0,
                // barrier-OR when any is; null handles are ignored (ROCR never submits a
                // barrier-OR without one, which this treats as satisfied).
                let ready = if ty == TYPE_BARRIER_AND {
                    first_unmet.is_none()
                } else {
                    met > 0 || deps.is_empty()
                };
                if !ready {
                    let (d, v) = first_unmet.unwrap_or((0, 0));
                    return Ok(Done::Wait(WaitInfo {
                        addr: d + 8,
                        function: 3, // equal
                        reference: 0,
                        mask: u32::MAX,
                        // CAST: the low half, as a 32-bit wait shows it.
                        seen: v as u32,
                    }));
                }
                for &d in &deps {
                    env.wait_satisfied(d + 8);
                    env.flight
                        .borrow_mut()
                        .order
                        .acquire((self.gpu_id, self.id.0), d + 8);
                }
                let start = env.now();
                self.launch(env, irqs, word0 & !BARRIER_BIT, site)?;
                self.release(env, irqs, (word0 >> 11) & 3, le64(b, 56), start, site)?;
                Ok(Done::Finished)
            }
            TYPE_VENDOR_SPECIFIC => {
                let format = word0 >> 16;
                if format != AMD_AQL_FORMAT_PM4_IB {
                    return Err(err(format!(
                        "vendor-specific AQL packet with AMD format {format} (the CP knows only AMD_AQL_FORMAT_PM4_IB = 1)"
                    )));
                }
                let remain = le32(b, 20);
                if remain != PM4_IB_DW_CNT_REMAIN {
                    return Err(err(format!(
                        "AMD_AQL_FORMAT_PM4_IB packet with dw_cnt_remain {remain} (must be {PM4_IB_DW_CNT_REMAIN}: the slot's dwords after the INDIRECT_BUFFER)"
                    )));
                }
                let cmd = [le32(b, 4), le32(b, 8), le32(b, 12), le32(b, 16)];
                let pkt = match hcq_core::pm4::decode_one(&cmd) {
                    Ok((p @ Pm4Packet::IndirectBuffer(_), 4)) => p,
                    Ok((p, _)) => {
                        return Err(err(format!(
                            "AMD_AQL_FORMAT_PM4_IB packet carries {p}, not a 4-dword INDIRECT_BUFFER"
                        )));
                    }
                    Err(e) => {
                        return Err(err(format!(
                            "AMD_AQL_FORMAT_PM4_IB packet's command does not decode: {e}"
                        )));
                    }
                };
                let start = env.now();
                self.launch(env, irqs, word0, site)?;
                match self.op(env, irqs, &pkt, site)? {
                    Exec::Ib { base, dwords, .. } => {
                        self.aql_xcc_leave();
                        self.push_ib(env, base, dwords, 0).map_err(|c| (site, c))?;
                        // Every XCC's CP runs the IB, interleaved (`aql_xcc.rs`).
                        self.aql_xcc_enter(env, base, dwords)
                            .map_err(|c| (site, c))?;
                        self.aql_pending = Some(AqlPending {
                            slot,
                            word0,
                            signal: le64(b, 56),
                            start,
                        });
                        Ok(Done::InIb)
                    }
                    _ => Err(err("AMD_AQL_FORMAT_PM4_IB's INDIRECT_BUFFER did not branch".into())),
                }
            }
            TYPE_AGENT_DISPATCH => Err(err(
                "AGENT_DISPATCH packet on a GPU queue: the CP processes kernel dispatch, barrier and AMD vendor packets only".into(),
            )),
            other => Err(err(format!(
                "AQL packet type {other} is reserved (hsa_packet_type_t is 0..=5): the CP faults the queue"
            ))),
        }
    }

    /// A kernel dispatch packet: the SH registers the CP programs from the packet, the kernel
    /// descriptor at `kernel_object` and `amd_queue_t`, then DISPATCH_DIRECT.
    fn kernel_dispatch(
        &mut self,
        env: &Env<'_>,
        irqs: &mut Vec<u32>,
        p: &DispatchPacket,
        slot: u64,
        site: Site,
    ) -> Result<(), (Site, Cause)> {
        let err = |m: String| (site, Cause::Hw(m));
        let dims = u32::from(p.setup & 3);
        if dims == 0 {
            return Err(err(format!(
                "kernel dispatch packet setup {:#x}: dimensions 0 (must be 1..=3)",
                p.setup
            )));
        }
        let wg = [
            u32::from(p.workgroup_size_x),
            u32::from(p.workgroup_size_y),
            u32::from(p.workgroup_size_z),
        ];
        let grid = [p.grid_size_x, p.grid_size_y, p.grid_size_z];
        for i in 0..3 {
            // CAST: i < 3.
            if i as u32 >= dims && (wg[i] != 1 || grid[i] != 1) {
                return Err(err(format!(
                    "kernel dispatch of {dims} dimensions has workgroup_size[{i}] {} and grid_size[{i}] {} (unused dimensions must be 1, HSA §2.9.1)",
                    wg[i], grid[i]
                )));
            }
            if wg[i] == 0 || grid[i] == 0 {
                return Err(err(format!(
                    "kernel dispatch with workgroup size {wg:?} and grid size {grid:?}: every size must be at least 1"
                )));
            }
            if grid[i] % wg[i] != 0 {
                return Err(err(format!(
                    "kernel dispatch grid size {grid:?} is not a multiple of the workgroup size {wg:?}: partial workgroups are not simulated yet"
                )));
            }
        }
        let items: u64 = wg.iter().map(|&w| u64::from(w)).product();
        if items > MAX_WORKGROUP_SIZE {
            return Err(err(format!(
                "kernel dispatch workgroup {wg:?} has {items} work-items (at most {MAX_WORKGROUP_SIZE})"
            )));
        }
        let mut kdb = [0u8; KernelDescriptor::SIZE];
        env.read(p.kernel_object, &mut kdb, Access::Read)
            .map_err(|v| (site, Cause::Vm(v)))?;
        let Some(kd) = KernelDescriptor::read(&kdb) else {
            return Err(err(format!(
                "kernel_object {:#x} is not a kernel descriptor",
                p.kernel_object
            )));
        };
        // CAST: two's complement; the entry is this far from the descriptor.
        let pgm = p
            .kernel_object
            .wrapping_add(kd.kernel_code_entry_byte_offset as u64);
        if pgm % 256 != 0 {
            return Err(err(format!(
                "kernel entry {pgm:#x} (kernel_object {:#x} + kernel_code_entry_byte_offset) is not 256-byte aligned",
                p.kernel_object
            )));
        }
        if p.group_segment_size < kd.group_segment_fixed_size {
            return Err(err(format!(
                "kernel dispatch group_segment_size {} is below the kernel's group_segment_fixed_size {}",
                p.group_segment_size, kd.group_segment_fixed_size
            )));
        }
        if p.group_segment_size > LDS_LIMIT {
            return Err(err(format!(
                "kernel dispatch group_segment_size {} exceeds the {LDS_LIMIT} bytes of LDS a workgroup can have",
                p.group_segment_size
            )));
        }
        let q = self.amd_queue(env).map_err(|c| (site, c))?;
        let rsrc2 = PgmRsrc2(kd.compute_pgm_rsrc2);
        let private = p.private_segment_size.max(kd.private_segment_fixed_size);
        if (private > 0 || rsrc2.get(PgmRsrc2::ENABLE_PRIVATE_SEGMENT) != 0)
            && private > q.lane_bytes
        {
            return Err(err(format!(
                "kernel dispatch needs {private} bytes of private segment per work-item but the queue's scratch gives {} (amd_queue_t.scratch_wave64_lane_byte_size at {:#x}); the runtime must grow it before dispatching",
                q.lane_bytes,
                q.base + 176
            )));
        }
        // Each XCC's waves take their scratch from their XCC's slice (`xcc.rs`).
        self.aql_scratch_stride = q.xcc_bytes;
        if private > 0 || rsrc2.get(PgmRsrc2::ENABLE_PRIVATE_SEGMENT) != 0 {
            let at = q.base + 168;
            if let Err(m) =
                super::xcc::check_aql_scratch(self.seat, &self.desc, q.tmpring, q.xcc_bytes, at)
            {
                // Waves of two XCCs on the same private memory: a race the hardware does
                // not fault on, so a finding, or the queue's fault under the strict judge.
                if env.registry.strict() {
                    return Err(err(m));
                }
                env.registry.findings().push(crate::findings::Finding {
                    kernel: pgm,
                    instruction: format!("kernel dispatch packet at {slot:#x}"),
                    address: q.scratch_base,
                    bytes: 0,
                    allocation: 0,
                    what: m,
                    count: 1,
                });
            }
        }
        let props = kd.properties();
        let on = |f| props.get(f) != 0;
        let dispatch_id = self.rptr;
        let mut user: Vec<u32> = Vec::with_capacity(16);
        let halves = |v: u64| [(v & 0xffff_ffff) as u32, (v >> 32) as u32];
        if on(KernelCodeProperties::ENABLE_SGPR_PRIVATE_SEGMENT_BUFFER) {
            user.extend(q.scratch_rsrc);
        }
        if on(KernelCodeProperties::ENABLE_SGPR_DISPATCH_PTR) {
            user.extend(halves(slot));
        }
        if on(KernelCodeProperties::ENABLE_SGPR_QUEUE_PTR) {
            user.extend(halves(q.base));
        }
        if on(KernelCodeProperties::ENABLE_SGPR_KERNARG_SEGMENT_PTR) {
            user.extend(halves(p.kernarg_address));
        }
        if on(KernelCodeProperties::ENABLE_SGPR_DISPATCH_ID) {
            user.extend(halves(dispatch_id));
        }
        if on(KernelCodeProperties::ENABLE_SGPR_FLAT_SCRATCH_INIT) {
            user.extend(halves(q.scratch_base));
        }
        if on(KernelCodeProperties::ENABLE_SGPR_PRIVATE_SEGMENT_SIZE) {
            user.push(private);
        }
        if user.len() > 16 {
            return Err(err(format!(
                "kernel descriptor at {:#x} enables {} user SGPRs (at most 16)",
                p.kernel_object,
                user.len()
            )));
        }
        let granules = p.group_segment_size.div_ceil(LDS_GRANULE_BYTES);
        let lds_mask =
            (PgmRsrc2::GRANULATED_LDS_SIZE.mask64() << PgmRsrc2::GRANULATED_LDS_SIZE.lo) as u32;
        let rsrc2 = (kd.compute_pgm_rsrc2 & !lds_mask)
            | ((granules << PgmRsrc2::GRANULATED_LDS_SIZE.lo) & lds_mask);
        let arch = self.desc.arch;
        let r = &arch.regs;
        let pgm8 = pgm >> 8;
        let scratch8 = q.scratch_base >> 8;
        let mut writes: Vec<(u32, u32)> = vec![
            (r.pgm_lo, halves(pgm8)[0]),
            (r.pgm_lo + 1, halves(pgm8)[1]),
            (r.pgm_lo + 4, halves(scratch8)[0]),
            (r.pgm_lo + 5, halves(scratch8)[1]),
            (r.pgm_rsrc1, kd.compute_pgm_rsrc1),
            (r.pgm_rsrc1 + 1, rsrc2),
            (r.tmpring_size, q.tmpring),
            (r.start_x, 0),
            (r.start_x + 1, 0),
            (r.start_x + 2, 0),
            (r.start_x + 3, wg[0]),
            (r.start_x + 4, wg[1]),
            (r.start_x + 5, wg[2]),
        ];
        if arch.exec_writes_pgm_rsrc3 {
            writes.push((r.pgm_rsrc3, kd.compute_pgm_rsrc3));
        }
        for (i, &v) in user.iter().enumerate() {
            // CAST: i < 16.
            writes.push((r.user_data_0 + i as u32, v));
        }
        for (off, v) in writes {
            match usize::try_from(off)
                .ok()
                .and_then(|o| self.regs.sh.get_mut(o))
            {
                Some(s) => *s = v,
                None => return Err(err(format!("SH register {off:#x} outside the window"))),
            }
        }
        let wave32 = on(KernelCodeProperties::ENABLE_WAVEFRONT_SIZE32);
        let d = DispatchDirect {
            dim: [grid[0] / wg[0], grid[1] / wg[1], grid[2] / wg[2]],
            initiator: DispatchInitiator::zeroed()
                .with(DispatchInitiator::COMPUTE_SHADER_EN, 1)
                .with(DispatchInitiator::FORCE_START_AT_000, 1)
                .with_flag(DispatchInitiator::CS_W32_EN, arch.has_cs_w32_en && wave32),
        };
        self.op(env, irqs, &Pm4Packet::DispatchDirect(d), site)?;
        Ok(())
    }
}
