//! One packet as one operation of the race detector, and the queue's dispatches in flight:
//! a sync point lands and retires them, every packet's accesses are checked against them, a
//! DISPATCH_DIRECT joins them, and an idle queue lets them land and retire after lingering
//! (`flight.rs` holds the ranges and the seed). Also the decoded packet ([`Decoded`]) and its
//! execution by its engine ([`run_packet`]: `pm4.rs` or `sdma.rs`).

use super::env::Env;
use super::flight::{self, OpLabel, What};
use super::types::{Cause, Exec, QueueDesc, QueueId, QueueKind, Regs, Site};
use super::{dispatch, pm4, sdma};
use crate::isa::XccSplit;
use hcq_core::addr::join64;
use hcq_core::packet::DecodeError;
use hcq_core::pm4::{DispatchDirect, EventWriteCntl, Pm4Packet, ReleaseMemEventCntl};
use hcq_core::sdma::SdmaPacket;
use hcq_core::sel::EventType;

/// A dispatch issued on this queue that has not landed yet: the launch state it was issued
/// with (the SH registers are a snapshot: later SET_SH_REGs do not change it).
struct Pending {
    id: u64,
    sh: Box<[u32]>,
    d: DispatchDirect,
    site: Site,
    /// Packets after which it lands ([`flight::NEVER`]: only at a sync point or idle).
    after: u32,
    /// Its name in reports, and its ring position (host accesses are judged by it).
    label: OpLabel,
    pos: u64,
    /// The XCCs it runs on.
    xcc: XccSplit,
}

/// The queue's dispatches that have not landed.
#[derive(Default)]
pub(crate) struct Inflight {
    pending: Vec<Pending>,
    lds: Vec<u8>,
    /// The last copy, fill or dispatch the queue executed since its last signal write: what
    /// that write completes (named when the write breaks the signal's order).
    last_work: Option<OpLabel>,
}

impl Inflight {
    pub(crate) fn has_pending(&self) -> bool {
        !self.pending.is_empty()
    }

    /// The queue faulted: its dispatches never land.
    pub(crate) fn clear(&mut self) {
        self.pending.clear();
    }

    /// A turn of an idle queue in round `round`: the dispatches that have lingered long
    /// enough land. Returns whether one landed.
    pub(crate) fn land_lingered(
        &mut self,
        desc: &QueueDesc,
        env: &Env<'_>,
        round: u64,
    ) -> Result<bool, (Site, Cause)> {
        let mut landed = false;
        let ids: Vec<u64> = self.pending.iter().map(|p| p.id).collect();
        for id in ids {
            if env.flight.borrow_mut().lingered(id, round) {
                self.land(desc, env, id)?;
                landed = true;
            }
        }
        Ok(landed)
    }

    /// Lands dispatch `id` (runs the kernel, records its ranges, checks them for races).
    fn land(&mut self, desc: &QueueDesc, env: &Env<'_>, id: u64) -> Result<(), (Site, Cause)> {
        let Some(i) = self.pending.iter().position(|p| p.id == id) else {
            return Ok(());
        };
        let p = self.pending.remove(i);
        let regs = Regs {
            sh: p.sh,
            uconfig: Box::new([]),
        };
        env.rec.begin();
        let r = dispatch::run(&regs, &mut self.lds, desc, env, &p.d, p.xcc);
        let acc = env.rec.end();
        // A host access it races is the cause of whatever else its run found (a stale HDP
        // read of kernargs the host rewrote).
        // The pointers its user SGPR pairs hold (COMPUTE_USER_DATA_0..15): the kernarg
        // segment's among them.
        let u0 = desc.arch.regs.user_data_0;
        let user_ptrs: Vec<u64> = (0..15)
            .map(|i| join64(regs.sh(u0 + i), regs.sh(u0 + i + 1)))
            .collect();
        host_race(env, &p.label, desc, p.pos, &acc, &user_ptrs).map_err(|m| (p.site, m))?;
        r.map_err(|c| (p.site, c))?;
        env.flight
            .borrow_mut()
            .land(id, acc)
            .map_err(|m| (p.site, Cause::Hw(m)))
    }

    /// A sync point on this queue: everything issued lands, then retires.
    fn sync(&mut self, desc: &QueueDesc, env: &Env<'_>, id: QueueId) -> Result<(), (Site, Cause)> {
        while let Some(p) = self.pending.first() {
            let pid = p.id;
            self.land(desc, env, pid)?;
        }
        env.flight.borrow_mut().retire_queue(id);
        Ok(())
    }

    /// One more packet completed on the queue: dispatches whose turn it is land.
    fn after_packet(&mut self, desc: &QueueDesc, env: &Env<'_>) -> Result<(), (Site, Cause)> {
        let mut due = Vec::new();
        for p in &mut self.pending {
            if p.after != flight::NEVER {
                p.after = p.after.saturating_sub(1);
                if p.after == 0 {
                    due.push(p.id);
                }
            }
        }
        for id in due {
            self.land(desc, env, id)?;
        }
        Ok(())
    }
}

/// A packet decoded in place (it borrows the fetch buffer).
pub(crate) enum Decoded<'a> {
    Pm4(Pm4Packet<'a>),
    Sdma(SdmaPacket<'a>),
}

pub(crate) fn decode(kind: QueueKind, d: &[u32]) -> Result<(Decoded<'_>, usize), DecodeError> {
    match kind {
        // An AQL queue's indirect buffers (AMD_AQL_FORMAT_PM4_IB packets) hold PM4.
        QueueKind::Compute | QueueKind::Aql => {
            hcq_core::pm4::decode_one(d).map(|(p, n)| (Decoded::Pm4(p), n))
        }
        QueueKind::Sdma => hcq_core::sdma::decode_one(d).map(|(p, n)| (Decoded::Sdma(p), n)),
    }
}

/// Executes one packet on its engine.
pub(crate) fn run_packet(
    c: &mut Ctx<'_>,
    env: &Env<'_>,
    irqs: &mut Vec<u32>,
    pkt: &Decoded<'_>,
    depth: usize,
) -> Result<Exec, Cause> {
    match pkt {
        Decoded::Pm4(p) => pm4::exec(c.regs, c.scratch, c.desc, env, irqs, p, c.xcc),
        Decoded::Sdma(p) => sdma::exec(c.scratch, c.desc, env, irqs, p, depth),
    }
}

/// The name of a packet in race reports, and whether it is a sync point that retires the
/// queue's dispatches (EVENT_WRITE CS_PARTIAL_FLUSH; RELEASE_MEM at end of pipe,
/// CACHE_FLUSH_AND_INV_TS_EVENT or BOTTOM_OF_PIPE_TS, or end of shader, CS_DONE).
fn classify(pkt: &Decoded<'_>, desc: &QueueDesc) -> (&'static str, bool) {
    let event = |raw: u32| EventType::try_from(raw).ok();
    match pkt {
        Decoded::Pm4(p) => match p {
            Pm4Packet::EventWrite(e) => (
                "EVENT_WRITE",
                event(e.get(EventWriteCntl::EVENT_TYPE)) == Some(desc.arch.events.cs_partial_flush),
            ),
            Pm4Packet::ReleaseMem(r) => {
                let t = event(r.event.get(ReleaseMemEventCntl::EVENT_TYPE));
                (
                    "RELEASE_MEM",
                    t == Some(desc.arch.events.cache_flush_and_inv_ts)
                        || t == Some(EventType::BottomOfPipeTs)
                        || t == Some(EventType::CsDone),
                )
            }
            Pm4Packet::WriteData { .. } => ("WRITE_DATA", false),
            Pm4Packet::WaitRegMem(_) => ("WAIT_REG_MEM", false),
            Pm4Packet::AcquireMem(_) => ("ACQUIRE_MEM", false),
            Pm4Packet::DispatchDirect(_) => ("DISPATCH_DIRECT", false),
            _ => ("PM4 packet", false),
        },
        Decoded::Sdma(p) => (
            match p {
                SdmaPacket::CopyLinear(_) => "SDMA COPY_LINEAR",
                SdmaPacket::Write { .. } => "SDMA WRITE",
                SdmaPacket::Fence(_) => "SDMA FENCE",
                SdmaPacket::ConstFill(_) => "SDMA CONST_FILL",
                SdmaPacket::Timestamp { .. } => "SDMA TIMESTAMP",
                SdmaPacket::PollRegmem(_) => "SDMA POLL_REGMEM",
                _ => "SDMA packet",
            },
            false,
        ),
    }
}

/// The parts of a queue one packet's execution needs (disjoint from the fetch buffer the
/// decoded packet borrows).
pub(crate) struct Ctx<'q> {
    pub(crate) id: QueueId,
    pub(crate) gpu: u32,
    pub(crate) regs: &'q mut Regs,
    pub(crate) scratch: &'q mut Vec<u8>,
    pub(crate) inflight: &'q mut Inflight,
    pub(crate) desc: &'q QueueDesc,
    /// The ring position of the packet (of the ring's INDIRECT_BUFFER, inside an IB).
    pub(crate) pos: u64,
    /// The XCCs its dispatches run on (`xcc.rs`).
    pub(crate) xcc: XccSplit,
}

/// A host access recorded after operation `label` (at ring position `pos`) was queued that
/// touches what it accessed: the queue faults naming both (`flight/host.rs`); the queue adds
/// what would have ordered them.
fn host_race(
    env: &Env<'_>,
    label: &OpLabel,
    desc: &QueueDesc,
    pos: u64,
    acc: &flight::Access,
    user_ptrs: &[u64],
) -> Result<(), Cause> {
    let f = env.flight.borrow();
    if f.host.is_empty() {
        return Ok(());
    }
    let key = flight::queue_key(label.gpu, desc.doorbell_offset);
    match f.host.check(label, key, pos, acc, user_ptrs) {
        Some(m) => Err(Cause::Hw(m)),
        None => Ok(()),
    }
}

/// What a packet does to a signal, for the ordering between queues (`flight::order`).
enum SignalSync {
    /// Writes `value` to the signal at `addr` (RELEASE_MEM with data, SDMA FENCE).
    Release { addr: u64, value: u32 },
    /// Waits on the memory at `addr` (WAIT_REG_MEM, POLL_REGMEM on memory).
    Acquire { addr: u64 },
}

fn signal_sync(pkt: &Decoded<'_>) -> Option<SignalSync> {
    use hcq_core::sdma::PollRegmemHeader;
    use hcq_core::sel::{DataSel, MemSpace};
    match pkt {
        Decoded::Pm4(Pm4Packet::ReleaseMem(r))
            if matches!(
                r.data_cntl.data_sel(),
                Ok(DataSel::Data32 | DataSel::Data64)
            ) =>
        {
            Some(SignalSync::Release {
                addr: r.addr.get(),
                // CAST: the GPU compares 32-bit signal values; the low half.
                value: r.data as u32,
            })
        }
        Decoded::Pm4(Pm4Packet::WaitRegMem(w)) if w.control.mem_space() == Ok(MemSpace::Memory) => {
            Some(SignalSync::Acquire {
                addr: w.addr().get(),
            })
        }
        Decoded::Sdma(SdmaPacket::Fence(f)) => Some(SignalSync::Release {
            addr: f.addr.get(),
            value: f.data,
        }),
        Decoded::Sdma(SdmaPacket::PollRegmem(p))
            if p.header.get(PollRegmemHeader::MEM_POLL) != 0 =>
        {
            Some(SignalSync::Acquire { addr: p.addr.get() })
        }
        _ => None,
    }
}

/// The signal write `pkt` makes, `(address, value, packet name)`: what a host waits for
/// (a host race names the one after the racing operation).
pub(crate) fn release_of(pkt: &Decoded<'_>) -> Option<(u64, u32, &'static str)> {
    match signal_sync(pkt) {
        Some(SignalSync::Release { addr, value }) => Some((
            addr,
            value,
            match pkt {
                Decoded::Pm4(_) => "RELEASE_MEM",
                Decoded::Sdma(_) => "SDMA FENCE",
            },
        )),
        _ => None,
    }
}

/// Executes one packet as one operation ([`exec_op_racing`]), checking first what it does to
/// a signal against the signal's other writers (ordering between queues).
pub(crate) fn exec_op(
    c: Ctx<'_>,
    env: &Env<'_>,
    irqs: &mut Vec<u32>,
    pkt: &Decoded<'_>,
    depth: usize,
    site: Site,
) -> Result<Exec, (Site, Cause)> {
    let sync = signal_sync(pkt);
    let key = (c.gpu, c.id.0);
    if let Some(SignalSync::Release { addr, value }) = sync
        && let Ok(current) = env.poll_u32(addr)
    {
        let label = OpLabel {
            gpu: c.gpu,
            queue: c.id,
            kind: c.desc.kind,
            what: What::Packet(classify(pkt, c.desc).0),
            site,
        };
        env.flight
            .borrow_mut()
            .order
            .release(
                key,
                label,
                addr,
                value,
                current,
                c.inflight.last_work.take(),
            )
            .map_err(|m| (site, Cause::Hw(m)))?;
    }
    let work = sync.is_none().then(|| classify(pkt, c.desc).0).filter(|n| {
        matches!(
            *n,
            "SDMA COPY_LINEAR" | "SDMA CONST_FILL" | "SDMA WRITE" | "WRITE_DATA"
        )
    });
    if let Some(name) = work {
        c.inflight.last_work = Some(OpLabel {
            gpu: c.gpu,
            queue: c.id,
            kind: c.desc.kind,
            what: What::Packet(name),
            site,
        });
    }
    let r = exec_op_racing(c, env, irqs, pkt, depth, site)?;
    if let (Some(SignalSync::Acquire { addr }), Exec::Done) = (sync, &r) {
        env.flight.borrow_mut().order.acquire(key, addr);
    }
    Ok(r)
}

/// Executes one packet as one operation: a sync point first lands and retires the queue's
/// dispatches; the packet's accesses are recorded and checked against the dispatches in flight;
/// an issued dispatch joins them; dispatches whose turn it is land after the packet.
fn exec_op_racing(
    mut c: Ctx<'_>,
    env: &Env<'_>,
    irqs: &mut Vec<u32>,
    pkt: &Decoded<'_>,
    depth: usize,
    site: Site,
) -> Result<Exec, (Site, Cause)> {
    if !env.flight.borrow().watching() {
        // Nothing in flight, no host access to judge: nothing to retire, record or check.
        let r = run_packet(&mut c, env, irqs, pkt, depth);
        return match r.map_err(|e| (site, e))? {
            Exec::Dispatch(d) => issue(c, env, d, site),
            r => Ok(r),
        };
    }
    let (name, sync) = classify(pkt, c.desc);
    if sync {
        c.inflight.sync(c.desc, env, c.id)?;
    }
    let record = env.flight.borrow().watching();
    if record {
        env.rec.begin();
    }
    let r = run_packet(&mut c, env, irqs, pkt, depth);
    let acc = record.then(|| env.rec.end());
    if let Some(acc) = &acc
        && matches!(
            name,
            "SDMA COPY_LINEAR" | "SDMA CONST_FILL" | "DISPATCH_DIRECT"
        )
    {
        let label = OpLabel {
            gpu: c.gpu,
            queue: c.id,
            kind: c.desc.kind,
            what: What::Packet(name),
            site,
        };
        host_race(env, &label, c.desc, c.pos, acc, &[]).map_err(|m| (site, m))?;
    }
    let r = r.map_err(|e| (site, e))?;
    if let Some(acc) = acc {
        if matches!(r, Exec::Done) {
            let label = OpLabel {
                gpu: c.gpu,
                queue: c.id,
                kind: c.desc.kind,
                what: What::Packet(name),
                site,
            };
            env.flight
                .borrow_mut()
                .observe(label, &acc)
                .map_err(|m| (site, Cause::Hw(m)))?;
        }
    }
    let r = match r {
        Exec::Dispatch(d) => return issue(c, env, d, site),
        r => r,
    };
    if matches!(r, Exec::Done) && c.inflight.has_pending() {
        c.inflight.after_packet(c.desc, env)?;
    }
    Ok(r)
}

/// A DISPATCH_DIRECT passed the CP's checks: it joins the dispatches in flight (and lands at
/// once if the seed says so).
fn issue(c: Ctx<'_>, env: &Env<'_>, d: DispatchDirect, site: Site) -> Result<Exec, (Site, Cause)> {
    {
        {
            let ar = &c.desc.arch.regs;
            let pgm = join64(c.regs.sh(ar.pgm_lo), c.regs.sh(ar.pgm_lo + 1)) << 8;
            let label = OpLabel {
                gpu: c.gpu,
                queue: c.id,
                kind: c.desc.kind,
                what: What::Dispatch(pgm),
                site,
            };
            let (id, after) = env.flight.borrow_mut().issue(label);
            c.inflight.last_work = Some(label);
            c.inflight.pending.push(Pending {
                id,
                sh: c.regs.sh.clone(),
                d,
                site,
                after,
                label,
                pos: c.pos,
                xcc: c.xcc,
            });
            if after == 0 {
                c.inflight.land(c.desc, env, id)?;
            }
            Ok(Exec::Done)
        }
    }
}
