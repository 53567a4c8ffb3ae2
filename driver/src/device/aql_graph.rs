//! A graph replay on an AQL compute queue: one timeline value for the graph's recorded
//! packets (kernel dispatches and PM4 bodies) on the AQL ring and its copy list on the SDMA
//! ring, as [`DeviceInner::submit_pair`] does for a PM4 queue.

use super::submit::{take_scratch, trace_submission};
#[allow(clippy::wildcard_imports)]
use super::*;
use crate::aql::AqlPart;

/// How far a failed graph submission got.
enum Failed {
    /// Nothing reached a ring: the timeline value is given back.
    Nothing(Error),
    /// The copy ring took its part (the value stays taken, see [`Error::PartialSubmit`]).
    AfterCopy(Error),
}

impl From<Error> for Failed {
    fn from(e: Error) -> Self {
        Failed::Nothing(e)
    }
}

impl DeviceInner {
    /// Submits a graph's compute `parts` (in ring order) on the AQL queue under one new
    /// timeline value `v`: `[PM4_IB: wait timeline >= v-1, memory barrier] parts [PM4_IB:
    /// signal v]`, every packet as the graph recorded it (the driver's two with the barrier
    /// bit and system-scope fences, so the signal runs once every XCC finished every packet
    /// before it). With `copy` (one SDMA INDIRECT, whole packets), the copy ring gets `[wait
    /// timeline >= v-1] copy` under the same value, as [`DeviceInner::submit_pair`] builds it.
    ///
    /// The packets are written with the queue's back-pressure, body first and header last
    /// with a release store, then `write_dispatch_id` and one doorbell; a graph larger than
    /// the ring goes in ring-sized parts, each waiting for room and ringing the doorbell. The
    /// compute ring's room for the first part is waited for before the copy ring is written.
    ///
    /// # Errors
    /// Ring errors and timeouts waiting for room (nothing submitted, the timeline unchanged);
    /// [`Error::PartialSubmit`] when the compute ring refused a part after the copy ring (or
    /// an earlier part) was written.
    pub(crate) fn submit_aql_graph(
        &self,
        copy: Option<&[u32]>,
        parts: &[AqlPart<'_>],
    ) -> Result<TimelineValue> {
        let mut st = lock(&self.timeline);
        let (saved, value) = st.take_value()?;
        let mut c = take_scratch(&mut st, QueueType::Sdma, self.arch);
        let r = self.aql_graph(&st, &mut c, value, copy, parts);
        st.scratch.push(c);
        match r {
            Ok(()) => Ok(value),
            Err(Failed::Nothing(e)) => {
                st.tl = saved;
                Err(e)
            }
            Err(Failed::AfterCopy(e)) => Err(Error::PartialSubmit {
                value: value.get(),
                cause: Box::new(e),
            }),
        }
    }

    /// [`DeviceInner::submit_aql_graph`] under the timeline lock (`st`).
    fn aql_graph(
        &self,
        st: &TimelineState,
        c: &mut Cmds,
        value: TimelineValue,
        copy: Option<&[u32]>,
        parts: &[AqlPart<'_>],
    ) -> core::result::Result<(), Failed> {
        let g = st.tl.gpu_value(value).ok_or_else(|| {
            Error::Protocol(format!("timeline value {} has no GPU value", value.get()))
        })?;
        let sync = st.aql_sync_of(g.signal)?;
        // The previous value lives on the same signal (a wrap resets it to 0 and hands out 1).
        let prev = if seeded!(WaitForOwnValue) {
            g.value
        } else {
            g.value.wrapping_sub(1)
        };
        let (pre, pre_len) = sync.prologue(prev);
        let (post, post_len) = sync.epilogue(g.value);
        let mut all = Vec::with_capacity(parts.len() + 2);
        all.push(AqlPart::Pm4(pre.get(..pre_len).unwrap_or_default()));
        all.extend_from_slice(parts);
        // The timeline signal in a packet of its own with the barrier bit: it runs once every
        // packet before it completed on every XCC.
        all.push(AqlPart::Pm4(post.get(..post_len).unwrap_or_default()));
        let (ComputeQueue::Aql(q), ComputeWriter::Aql(w)) = (
            &self.compute,
            &mut *st
                .pm4_producer
                .try_borrow_mut()
                .map_err(|_| Error::Protocol("a ring producer is already in use".into()))?,
        ) else {
            return Err(Error::Protocol("an AQL graph replay on a PM4 queue".into()).into());
        };
        // Ring-sized parts: each fits the ring wherever it starts.
        let cap = q.slots();
        let mut chunks: Vec<&[AqlPart<'_>]> = Vec::new();
        let (mut from, mut used) = (0, 0);
        for (i, p) in all.iter().enumerate() {
            let n = crate::aql::AqlQueue::worst_slots(p);
            if used + n > cap && i > from {
                chunks.push(&all[from..i]);
                (from, used) = (i, 0);
            }
            used += n;
        }
        chunks.push(&all[from..]);
        let others = || self.queue_states();
        let timeout = self.kfd.wait_timeout();
        if self.tracing.load(Ordering::Relaxed)
            && let Some(t) = lock(&self.trace).as_mut()
        {
            trace_parts(t, value.get(), &all);
        }
        if let Some(copy) = copy {
            self.build(st, c, value, false, |s| s.cmds.raw(copy))?;
            if let Some(first) = chunks.first() {
                q.wait_room(w, first, &self.pages, timeout, &others)?;
            }
            self.write(st, c, value)?;
        }
        for (i, chunk) in chunks.iter().enumerate() {
            q.submit(w, chunk, &self.pages, timeout, &others)
                .map_err(|e| {
                    if copy.is_some() || i > 0 {
                        Failed::AfterCopy(e)
                    } else {
                        Failed::Nothing(e)
                    }
                })?;
        }
        Ok(())
    }
}

/// Trace lines of a graph's AQL parts: the PM4 decoded, each packet's header and sizes.
fn trace_parts(out: &mut Vec<String>, value: u64, parts: &[AqlPart<'_>]) {
    for p in parts {
        match p {
            AqlPart::Pm4(d) => trace_submission(out, QueueType::Compute, value, d),
            AqlPart::Packet(w) => out.push(format!(
                "[aql t={value} packet] header {:#06x} setup {} workgroup [{}, {}, {}] grid {:?} kernel_object {:#x} kernarg {:#x}",
                w[0] & 0xffff,
                w[0] >> 16,
                w[1] & 0xffff,
                w[1] >> 16,
                w[2] & 0xffff,
                [w[3], w[4], w[5]],
                u64::from(w[8]) | u64::from(w[9]) << 32,
                u64::from(w[10]) | u64::from(w[11]) << 32,
            )),
            AqlPart::Dispatch(dims, d) => out.push(format!(
                "[aql t={value} dispatch] dims {dims} grid {:?} kernel_object {:#x}",
                [d.grid_size_x, d.grid_size_y, d.grid_size_z],
                d.kernel_object
            )),
        }
    }
}
