//! Submission: taking a timeline value, building the commands around the caller's, writing
//! them to the ring and ringing the doorbell; waits and synchronization.

#[allow(clippy::wildcard_imports)]
use super::*;
use crate::aql::AqlPart;
use core::cell::{RefCell, RefMut};
use hcq_core::hsa::DispatchPacket;
use hcq_core::pm4;

/// A timeline signal's compute-queue wait (`WAIT_REG_MEM` until it reaches a value) and signal
/// (`RELEASE_MEM` of a value, plus the mailbox one when it has an event), encoded once with
/// value 0: a submission copies them and patches the value.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SyncPackets {
    wait: [u32; pm4::WAIT_DWORDS],
    signal: [u32; 2 * pm4::RELEASE_MEM_DWORDS],
    signal_len: usize,
}

impl SyncPackets {
    pub(crate) fn new(arch: &ArchInfo, sig: &SignalRef) -> Result<Self> {
        let enc = |source| Error::Encode {
            what: "the timeline packets",
            source,
        };
        let mut wait = [0; pm4::WAIT_DWORDS];
        let mut signal = [0; 2 * pm4::RELEASE_MEM_DWORDS];
        pm4::wait(&mut wait, sig, 0).map_err(enc)?;
        let signal_len = pm4::signal(&mut signal, arch, sig, 0).map_err(enc)?;
        Ok(Self {
            wait,
            signal,
            signal_len,
        })
    }

    /// The AQL launch prologue/epilogue of this signal.
    pub(crate) fn aql(&self, arch: &ArchInfo) -> Result<crate::aql::AqlSync> {
        crate::aql::AqlSync::new(
            arch,
            &self.wait,
            pm4::WAIT_REG_MEM_REFERENCE_AT,
            self.signal_dwords(),
            pm4::RELEASE_MEM_DATA_AT,
        )
    }

    /// The signal's dwords.
    fn signal_dwords(&self) -> &[u32] {
        self.signal.get(..self.signal_len).unwrap_or_default()
    }

    /// Patches a copy of the wait to wait for `value`.
    fn patch_wait(d: &mut [u32], value: u32) -> Option<()> {
        *d.get_mut(pm4::WAIT_REG_MEM_REFERENCE_AT)? = value;
        Some(())
    }

    /// Patches a copy of the signal to write `value`.
    fn patch_signal(d: &mut [u32], value: u32) -> Option<()> {
        // The 64-bit data of the first RELEASE_MEM: the value, zero-extended.
        let data = d
            .get_mut(pm4::RELEASE_MEM_DATA_AT..)?
            .first_chunk_mut::<2>()?;
        *data = [value, 0];
        Some(())
    }

    /// Appends the wait until the signal reaches `value` (what `Cmds::wait` encodes).
    fn wait(&self, cmds: &mut Cmds, value: u32) -> Result<()> {
        cmds.pm4_patched(&self.wait, |d| Self::patch_wait(d, value))
    }

    /// Appends the signal of `value` (what `Cmds::signal` encodes).
    fn signal(&self, cmds: &mut Cmds, value: u32) -> Result<()> {
        cmds.pm4_patched(self.signal_dwords(), |d| Self::patch_signal(d, value))
    }
}

impl DeviceInner {
    pub(crate) fn queue_states(&self) -> Vec<QueueState> {
        vec![self.compute.state(), self.sdma.state()]
    }

    /// The last value submitted.
    pub(crate) fn last_value(&self) -> TimelineValue {
        lock(&self.timeline).tl.last_signaled()
    }

    /// Waits until timeline value `v` completed.
    pub(crate) fn wait_value(&self, v: TimelineValue) -> Result<()> {
        // Do not hold the lock while waiting: other threads keep submitting. A wrap meanwhile
        // (only after everything completed) leaves this signal at its final value.
        let target = lock(&self.timeline).target(v);
        let Some((signal, value)) = target else {
            return Ok(());
        };
        signal.wait_with(u64::from(value), self.kfd.wait_timeout(), &|| {
            self.queue_states()
        })
    }

    pub(crate) fn synchronize(&self) -> Result<()> {
        let st = lock(&self.timeline);
        let last = st.tl.last_signaled();
        if let Some((signal, value)) = st.target(last) {
            signal.wait_with(u64::from(value), self.kfd.wait_timeout(), &|| {
                self.queue_states()
            })?;
        }
        let mut st = st;
        if st.tl.needs_wrap() {
            // CAST: the GPU writes only the low 32 bits.
            let observed = st.active().value() as u32;
            let to = st
                .tl
                .wrap(observed)
                .map_err(|e| Error::Protocol(format!("timeline wrap: {e}")))?;
            st.signal_of(to.signal).set(u64::from(to.reset_to));
            debug!("gpu {:#x}: timeline wrapped", self.info.gpu_id);
        }
        Ok(())
    }

    /// Builds and submits one compute submission: `[wait timeline >= v-1] body [signal v]`.
    pub(crate) fn submit_compute(
        &self,
        body: impl FnOnce(&mut Submit<'_>) -> Result<()>,
    ) -> Result<TimelineValue> {
        self.submit(QueueType::Compute, body)
    }

    /// Builds and submits one copy submission, like [`DeviceInner::submit_compute`].
    pub(crate) fn submit_copy(
        &self,
        body: impl FnOnce(&mut Submit<'_>) -> Result<()>,
    ) -> Result<TimelineValue> {
        self.submit(QueueType::Sdma, body)
    }

    pub(super) fn submit(
        &self,
        ty: QueueType,
        body: impl FnOnce(&mut Submit<'_>) -> Result<()>,
    ) -> Result<TimelineValue> {
        let mut st = lock(&self.timeline);
        let (saved, value) = st.take_value()?;
        let mut cmds = take_scratch(&mut st, ty, self.arch);
        let r = self
            .build(&st, &mut cmds, value, true, body)
            .and_then(|()| self.write(&st, &cmds, value));
        st.scratch.push(cmds);
        if r.is_err() {
            st.tl = saved;
        }
        r.map(|()| value)
    }

    /// A compute submission written straight into the ring, for a command pre-encoded as
    /// `tpl`: `body` does the host side (kernarg allocation and writes, under the timeline
    /// lock like every submission) and returns what `patch` needs to patch a copy of `tpl`;
    /// the ring gets `[wait timeline >= v-1] tpl (patched) [signal v]`, the same dwords
    /// [`DeviceInner::submit_compute`] would write, without building them elsewhere first.
    /// With tracing on it takes that path (the trace decodes the built dwords).
    pub(crate) fn submit_compute_in_place<T>(
        &self,
        tpl: &[u32],
        body: impl FnOnce(&mut Submit<'_>) -> Result<T>,
        patch: impl FnOnce(&mut [u32], T) -> Option<()>,
    ) -> Result<TimelineValue> {
        if self.tracing.load(Ordering::Relaxed) || matches!(self.compute, ComputeQueue::Aql(_)) {
            return self.submit_compute(|s| {
                let t = body(s)?;
                s.cmds.pm4_patched(tpl, |d| patch(d, t))
            });
        }
        let mut st = lock(&self.timeline);
        let (saved, value) = st.take_value()?;
        let r = self.write_in_place(&st, value, tpl, body, patch);
        if r.is_err() {
            st.tl = saved;
        }
        r.map(|()| value)
    }

    /// [`DeviceInner::submit_compute_in_place`] under the timeline lock (`st`).
    fn write_in_place<T>(
        &self,
        st: &TimelineState,
        value: TimelineValue,
        tpl: &[u32],
        body: impl FnOnce(&mut Submit<'_>) -> Result<T>,
        patch: impl FnOnce(&mut [u32], T) -> Option<()>,
    ) -> Result<()> {
        let g = st.tl.gpu_value(value).ok_or_else(|| {
            Error::Protocol(format!("timeline value {} has no GPU value", value.get()))
        })?;
        let sync = st.pm4_sync_of(g.signal);
        let mut s = Submit {
            value,
            cmds: Cmds::empty(QueueType::Compute, self.arch),
            state: st,
            dev: self,
        };
        let t = body(&mut s)?;
        if !s.cmds.dwords().is_empty() {
            return Err(Error::Protocol(
                "an in-place submission's body added commands".into(),
            ));
        }
        let signal = sync.signal_dwords();
        let len = sync.wait.len() + tpl.len() + signal.len();
        let fill = |d: &mut [u32]| {
            let (w, rest) = d.split_at_mut_checked(sync.wait.len())?;
            let (c, sg) = rest.split_at_mut_checked(tpl.len())?;
            w.copy_from_slice(&sync.wait);
            // The previous value lives on the same signal (a wrap resets it to 0 and hands
            // out 1).
            SyncPackets::patch_wait(
                w,
                if seeded!(WaitForOwnValue) {
                    g.value
                } else {
                    g.value.wrapping_sub(1)
                },
            )?;
            c.copy_from_slice(tpl);
            patch(c, t)?;
            sg.copy_from_slice(signal);
            SyncPackets::patch_signal(sg, g.value)
        };
        let others = || self.queue_states();
        let (ComputeQueue::Pm4(q), ComputeWriter::Pm4(w)) =
            (&self.compute, &mut *producer(&st.pm4_producer)?)
        else {
            return Err(Error::Protocol(
                "an in-place PM4 submission on an AQL queue".into(),
            ));
        };
        q.submit_with(w, len, fill, &self.pages, self.kfd.wait_timeout(), &others)
    }

    /// A launch on an AQL queue: `[PM4_IB: wait timeline >= v-1, memory barrier, start
    /// stamp] [KERNEL_DISPATCH] [PM4_IB: end stamp, signal v]`, every packet with the barrier
    /// bit and system-scope fences. `body` does the host side (kernargs, under the timeline
    /// lock) and returns what `packet` turns into the dispatch's dimensions and packet.
    pub(crate) fn submit_aql_launch<T>(
        &self,
        stamps: Option<(&SignalRef, &SignalRef)>,
        body: impl FnOnce(&mut Submit<'_>) -> Result<T>,
        packet: impl FnOnce(T) -> Result<(u16, DispatchPacket)>,
    ) -> Result<TimelineValue> {
        if stamps.is_none()
            && !self.tracing.load(Ordering::Relaxed)
            && !seeded!(LaunchWithoutBarrier)
            && !seeded!(WaitForOwnValue)
        {
            return self.submit_aql_launch_fast(body, packet);
        }
        let mut st = lock(&self.timeline);
        let (saved, value) = st.take_value()?;
        let mut pre = take_scratch(&mut st, QueueType::Compute, self.arch);
        let mut post = take_scratch(&mut st, QueueType::Compute, self.arch);
        let r = self.aql_launch(&st, &mut pre, &mut post, value, stamps, body, packet);
        st.scratch.push(pre);
        st.scratch.push(post);
        if r.is_err() {
            st.tl = saved;
        }
        r.map(|()| value)
    }

    /// [`DeviceInner::submit_aql_launch`] without stamps: the wait + memory barrier and the
    /// signal pre-encoded per timeline signal ([`AqlSync`]), patched as they are copied into
    /// the slots' PM4 buffers. When the previous timeline value is signalled by a packet
    /// already in the AQL ring, the wait is left out (the dispatch's barrier bit orders it
    /// after that packet: [`crate::aql::AqlWriter::follows_own_signal`]) and the prologue is
    /// the queue's memory barrier alone.
    fn submit_aql_launch_fast<T>(
        &self,
        body: impl FnOnce(&mut Submit<'_>) -> Result<T>,
        packet: impl FnOnce(T) -> Result<(u16, DispatchPacket)>,
    ) -> Result<TimelineValue> {
        let mut st = lock(&self.timeline);
        let (saved, value) = st.take_value()?;
        let r = self.aql_launch_fast(&st, value, body, packet);
        if r.is_err() {
            st.tl = saved;
        }
        r.map(|()| value)
    }

    /// Runs an AQL launch's `body` (it writes the kernargs and hands back what the dispatch
    /// packet needs), which must add no PM4 commands: the packet is the launch.
    fn aql_body<T>(
        &self,
        st: &TimelineState,
        value: TimelineValue,
        body: impl FnOnce(&mut Submit<'_>) -> Result<T>,
    ) -> Result<T> {
        let mut s = Submit {
            value,
            cmds: Cmds::empty(QueueType::Compute, self.arch),
            state: st,
            dev: self,
        };
        let t = body(&mut s)?;
        if !s.cmds.dwords().is_empty() {
            return Err(Error::Protocol(
                "an AQL launch's body added commands".into(),
            ));
        }
        Ok(t)
    }

    fn aql_launch_fast<T>(
        &self,
        st: &TimelineState,
        value: TimelineValue,
        body: impl FnOnce(&mut Submit<'_>) -> Result<T>,
        packet: impl FnOnce(T) -> Result<(u16, DispatchPacket)>,
    ) -> Result<()> {
        let g = st.tl.gpu_value(value).ok_or_else(|| {
            Error::Protocol(format!("timeline value {} has no GPU value", value.get()))
        })?;
        let sync = st.aql_sync_of(g.signal)?;
        let t = self.aql_body(st, value, body)?;
        let (dims, pkt) = packet(t)?;
        let others = || self.queue_states();
        let (ComputeQueue::Aql(q), ComputeWriter::Aql(w)) =
            (&self.compute, &mut *producer(&st.pm4_producer)?)
        else {
            return Err(Error::Protocol("an AQL launch on a PM4 queue".into()));
        };
        let wait = !w.follows_own_signal(value.get());
        q.submit_launch(
            w,
            sync,
            g.value,
            wait,
            dims,
            &pkt,
            &self.pages,
            self.kfd.wait_timeout(),
            &others,
        )?;
        w.note_signal(value.get());
        Ok(())
    }

    /// [`DeviceInner::submit_aql_launch`] under the timeline lock (`st`).
    #[expect(
        clippy::too_many_arguments,
        reason = "the launch's parts and the scratch command lists"
    )]
    fn aql_launch<T>(
        &self,
        st: &TimelineState,
        pre: &mut Cmds,
        post: &mut Cmds,
        value: TimelineValue,
        stamps: Option<(&SignalRef, &SignalRef)>,
        body: impl FnOnce(&mut Submit<'_>) -> Result<T>,
        packet: impl FnOnce(T) -> Result<(u16, DispatchPacket)>,
    ) -> Result<()> {
        let g = st.tl.gpu_value(value).ok_or_else(|| {
            Error::Protocol(format!("timeline value {} has no GPU value", value.get()))
        })?;
        let sync = st.pm4_sync_of(g.signal);
        pre.clear();
        post.clear();
        // The previous value lives on the same signal (a wrap resets it to 0 and hands out 1).
        let prev = if seeded!(WaitForOwnValue) {
            g.value
        } else {
            g.value.wrapping_sub(1)
        };
        sync.wait(pre, prev)?;
        // The kernargs were written into VRAM through the CPU mapping: flush HDP (the
        // dispatch's system-scope acquire fence then invalidates the caches).
        if !seeded!(LaunchWithoutBarrier) {
            pre.memory_barrier()?;
        }
        if let Some((start, _)) = stamps {
            pre.timestamp(start)?;
        }
        let t = self.aql_body(st, value, body)?;
        let (dims, pkt) = packet(t)?;
        if let Some((_, end)) = stamps {
            post.timestamp(end)?;
        }
        sync.signal(post, g.value)?;
        if self.tracing.load(Ordering::Relaxed)
            && let Some(t) = lock(&self.trace).as_mut()
        {
            trace_submission(t, QueueType::Compute, value.get(), pre.dwords());
            t.push(format!(
                "[aql t={} dispatch] grid {:?} workgroup {:?} kernel_object {:#x} kernarg {:#x}",
                value.get(),
                [pkt.grid_size_x, pkt.grid_size_y, pkt.grid_size_z],
                [
                    pkt.workgroup_size_x,
                    pkt.workgroup_size_y,
                    pkt.workgroup_size_z
                ],
                pkt.kernel_object,
                pkt.kernarg_address
            ));
            trace_submission(t, QueueType::Compute, value.get(), post.dwords());
        }
        let others = || self.queue_states();
        let (ComputeQueue::Aql(q), ComputeWriter::Aql(w)) =
            (&self.compute, &mut *producer(&st.pm4_producer)?)
        else {
            return Err(Error::Protocol("an AQL launch on a PM4 queue".into()));
        };
        q.submit(
            w,
            &[
                AqlPart::Pm4(pre.dwords()),
                AqlPart::Dispatch(dims, &pkt),
                AqlPart::Pm4(post.dwords()),
            ],
            &self.pages,
            self.kfd.wait_timeout(),
            &others,
        )?;
        w.note_signal(value.get());
        Ok(())
    }

    /// One timeline value for work on both queues: the copy ring gets
    /// `[wait timeline >= v-1] copy`, the compute ring `[wait timeline >= v-1] compute
    /// [signal v]`. Both start once everything before completed and run side by side; `v`
    /// means the compute part finished, so a caller that needs `v` to cover the copy part
    /// makes `compute` wait (on the GPU) for the end of `copy`.
    ///
    /// Both parts are encoded, and the compute ring is waited on for room, before either ring
    /// is written, then the copy ring is written, then the compute ring. If writing the copy
    /// ring fails, nothing reached a ring and the timeline is put back. If the compute ring
    /// then fails anyway (it had room, so only a driver bug can make it), the copy ring holds
    /// work of value `v` that nothing will ever complete: the value stays taken (the timeline
    /// says what the rings hold: `v` submitted, never done) and the error is
    /// [`Error::PartialSubmit`] (open the device again).
    pub(crate) fn submit_pair(
        &self,
        copy: impl FnOnce(&mut Submit<'_>) -> Result<()>,
        compute: impl FnOnce(&mut Submit<'_>) -> Result<()>,
    ) -> Result<TimelineValue> {
        let mut st = lock(&self.timeline);
        let (saved, value) = st.take_value()?;
        let mut c = take_scratch(&mut st, QueueType::Sdma, self.arch);
        let mut k = take_scratch(&mut st, QueueType::Compute, self.arch);
        let r = self
            .build(&st, &mut c, value, false, copy)
            .and_then(|()| self.build(&st, &mut k, value, true, compute))
            .and_then(|()| {
                let others = || self.queue_states();
                match (&self.compute, &mut *producer(&st.pm4_producer)?) {
                    (ComputeQueue::Pm4(q), ComputeWriter::Pm4(w)) => q.wait_room(
                        w,
                        k.dwords(),
                        k.packet_lens(),
                        &self.pages,
                        self.kfd.wait_timeout(),
                        &others,
                    ),
                    (ComputeQueue::Aql(q), ComputeWriter::Aql(w)) => q.wait_room(
                        w,
                        &{
                            let (body, signal) = k.split_at_signal();
                            [AqlPart::Pm4(body), AqlPart::Pm4(signal)]
                        },
                        &self.pages,
                        self.kfd.wait_timeout(),
                        &others,
                    ),
                    _ => Err(mismatch()),
                }
            })
            .and_then(|()| self.write(&st, &c, value));
        let r = match r {
            Err(e) => {
                st.tl = saved;
                Err(e)
            }
            Ok(()) => self
                .write(&st, &k, value)
                .map_err(|e| Error::PartialSubmit {
                    value: value.get(),
                    cause: Box::new(e),
                }),
        };
        st.scratch.push(c);
        st.scratch.push(k);
        r.map(|()| value)
    }

    /// Encodes `[wait timeline >= v-1] body [signal v]` (no signal unless `signal`) into
    /// `cmds`, which is emptied first and keeps its storage.
    pub(super) fn build(
        &self,
        st: &TimelineState,
        cmds: &mut Cmds,
        value: TimelineValue,
        signal: bool,
        body: impl FnOnce(&mut Submit<'_>) -> Result<()>,
    ) -> Result<()> {
        let ty = cmds.queue_type();
        cmds.clear();
        let g = st.tl.gpu_value(value).ok_or_else(|| {
            Error::Protocol(format!("timeline value {} has no GPU value", value.get()))
        })?;
        let sig = st.signal_of(g.signal).signal_ref();
        // The compute queue's wait and signal come pre-encoded.
        let pm4 = (ty == QueueType::Compute).then(|| st.pm4_sync_of(g.signal));
        let mut s = Submit {
            value,
            cmds: core::mem::replace(cmds, Cmds::empty(ty, self.arch)),
            state: st,
            dev: self,
        };
        // The previous value lives on the same signal (a wrap resets it to 0 and hands out 1).
        let prev = if seeded!(WaitForOwnValue) {
            g.value
        } else {
            g.value.wrapping_sub(1)
        };
        let r = match pm4 {
            Some(p) => p.wait(&mut s.cmds, prev),
            None if seeded!(CopySkipsTimelineWait) => Ok(()),
            None => s.cmds.wait(&sig, prev),
        }
        .and_then(|()| body(&mut s))
        .and_then(|()| {
            if signal {
                s.cmds.mark_signal();
            }
            match (signal, pm4) {
                (false, _) => Ok(()),
                (true, Some(p)) => p.signal(&mut s.cmds, g.value),
                (true, None) => s.cmds.signal(&sig, g.value),
            }
        });
        // Hand the storage back for the ring write and the next submission.
        *cmds = s.cmds;
        r
    }

    /// Writes `cmds` (built for timeline `value`) into its queue's ring, with that ring's
    /// producer from `st` (the timeline state, locked by the caller).
    pub(super) fn write(
        &self,
        st: &TimelineState,
        cmds: &Cmds,
        value: TimelineValue,
    ) -> Result<()> {
        let ty = cmds.queue_type();
        let others = || self.queue_states();
        let timeout = self.kfd.wait_timeout();
        let (buf, lens) = (cmds.dwords(), cmds.packet_lens());
        if self.tracing.load(Ordering::Relaxed)
            && let Some(t) = lock(&self.trace).as_mut()
        {
            trace_submission(t, ty, value.get(), buf);
        }
        match ty {
            QueueType::Compute => match (&self.compute, &mut *producer(&st.pm4_producer)?) {
                (ComputeQueue::Pm4(q), ComputeWriter::Pm4(w)) => {
                    q.submit(w, buf, lens, &self.pages, timeout, &others)
                }
                (ComputeQueue::Aql(q), ComputeWriter::Aql(w)) => {
                    // The timeline signal in a packet of its own, with the barrier bit: it
                    // runs once the body's packet completed (on every XCC of the GPU), never
                    // after one XCC's share of it.
                    let (body, signal) = cmds.split_at_signal();
                    let parts = [AqlPart::Pm4(body), AqlPart::Pm4(signal)];
                    let n = if signal.is_empty() { 1 } else { 2 };
                    q.submit(w, &parts[..n], &self.pages, timeout, &others)?;
                    if !signal.is_empty() {
                        w.note_signal(value.get());
                    }
                    Ok(())
                }
                _ => Err(mismatch()),
            },
            QueueType::Sdma => self.sdma.submit(
                &mut *producer(&st.sdma_producer)?,
                buf,
                lens,
                &self.pages,
                timeout,
                &others,
            ),
        }
    }
}

/// The compute queue and its producer are of different kinds (a driver bug).
fn mismatch() -> Error {
    Error::Protocol("the compute queue and its producer are of different kinds".into())
}

/// A ring producer from the timeline state (a cell: the state's lock is held).
fn producer<K>(cell: &RefCell<K>) -> Result<RefMut<'_, K>> {
    cell.try_borrow_mut()
        .map_err(|_| Error::Protocol("a ring producer is already in use".into()))
}

/// The command storage for `ty` kept from an earlier submission, or a new one.
pub(super) fn take_scratch(st: &mut TimelineState, ty: QueueType, arch: &'static ArchInfo) -> Cmds {
    match st.scratch.iter().position(|c| c.queue_type() == ty) {
        Some(i) => st.scratch.swap_remove(i),
        None => Cmds::new(ty, arch),
    }
}

impl Drop for DeviceInner {
    fn drop(&mut self) {
        // Queues are destroyed and buffers freed right after this: let the GPU finish first.
        match self.synchronize() {
            Ok(()) => {}
            // Reported to the caller already; the faulted queues run nothing more.
            Err(crate::Error::DeviceFault(_)) => log::debug!(
                "gpu {:#x}: destroying its queues after a device fault",
                self.info.gpu_id
            ),
            Err(e) => log::error!(
                "gpu {:#x} dropped with work outstanding ({e}); destroying its queues anyway",
                self.info.gpu_id
            ),
        }
    }
}

pub(super) fn trace_submission(out: &mut Vec<String>, ty: QueueType, value: u64, dwords: &[u32]) {
    let q = match ty {
        QueueType::Compute => "pm4",
        QueueType::Sdma => "sdma",
    };
    let mut push = |at: usize, text: String| out.push(format!("[{q} t={value} +{at}] {text}"));
    match ty {
        QueueType::Compute => {
            for p in hcq_core::pm4::decode(dwords) {
                match p {
                    Ok((at, p)) => push(at, p.to_string()),
                    Err(e) => push(0, format!("decode error: {e}")),
                }
            }
        }
        QueueType::Sdma => {
            for p in hcq_core::sdma::decode(dwords) {
                match p {
                    Ok((at, p)) => push(at, p.to_string()),
                    Err(e) => push(0, format!("decode error: {e}")),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pre-encoded wait and signal, patched, are what `Cmds::wait` and `Cmds::signal`
    /// encode, for a signal with and without an event mailbox, on each family.
    #[test]
    fn sync_packets_are_what_the_encoders_write() {
        let sigs = [
            SignalRef::new(0x7f00_0000_1000),
            SignalRef {
                addr: 0x7f00_0000_1040,
                event_mailbox_ptr: 0x7f00_0000_2000,
                event_id: 9,
            },
        ];
        for target in ["gfx1100", "gfx1201", "gfx90a", "gfx942"] {
            let arch = GfxTarget::parse(target).unwrap().info();
            for sig in &sigs {
                let p = SyncPackets::new(arch, sig).unwrap();
                for v in [0u32, 1, 0x7fff_fffe, u32::MAX] {
                    let mut want = Cmds::new(QueueType::Compute, arch);
                    want.wait(sig, v).unwrap();
                    want.signal(sig, v).unwrap();
                    let mut got = Cmds::new(QueueType::Compute, arch);
                    p.wait(&mut got, v).unwrap();
                    p.signal(&mut got, v).unwrap();
                    assert_eq!(got.dwords(), want.dwords(), "{target} {sig:?} {v}");
                    assert_eq!(got.packet_lens(), want.packet_lens());
                }
            }
        }
    }
}
