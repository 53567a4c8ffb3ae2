//! [`GraphBuilder`]: declaring variables, taking operations, and encoding them into the PM4 and
//! SDMA lists, the kernargs and the patch table.

use super::aql::{AqlRec, KernelObject};
#[allow(clippy::wildcard_imports)]
use super::*;

impl GraphBuilder {
    /// An empty graph for `arch`.
    #[must_use]
    pub fn new(arch: &'static ArchInfo) -> Self {
        Self {
            arch,
            vars: Vec::new(),
            ops: Vec::new(),
            ka_bytes: 0,
            last_queue: None,
            switches: 0,
        }
    }

    pub(super) fn declare(&mut self, v: Value) -> Result<VarId, GraphError> {
        let id = u16::try_from(self.vars.len())
            .map_err(|_| invalid("more than 65536 graph variables"))?;
        self.vars.push(v);
        Ok(VarId(id))
    }

    /// Declares a buffer variable with its record-time address and size.
    pub fn buffer(&mut self, addr: GpuVa, bytes: u64) -> Result<VarId, GraphError> {
        self.declare(Value::Addr { addr, bytes })
    }

    /// Declares a signal-address variable (an `amd_signal_t`, 64 bytes).
    pub fn signal_var(&mut self, addr: GpuVa) -> Result<VarId, GraphError> {
        self.declare(Value::Addr { addr, bytes: 64 })
    }

    /// Declares a scalar variable (kernel argument, timeline value).
    pub fn scalar(&mut self, v: u64) -> Result<VarId, GraphError> {
        self.declare(Value::Scalar(v))
    }

    /// Declares a launch-dims variable.
    pub fn dims(&mut self, d: Dims) -> Result<VarId, GraphError> {
        self.declare(Value::Dims(d))
    }

    /// The record-time values, in declaration order (the values of an `apply` that changes
    /// nothing).
    #[must_use]
    pub fn initial_values(&self) -> Vec<Option<Value>> {
        self.vars.iter().copied().map(Some).collect()
    }

    /// Bytes of kernargs region the graph needs: the launches' arguments, then the internal
    /// signals.
    #[must_use]
    pub fn kernargs_bytes(&self) -> u64 {
        // CAST: usize -> u64 widens.
        self.internal_offset() + INTERNAL_SIGNAL_ALIGN * self.internal_signals() as u64
    }

    /// Byte offset of the internal signals in the kernargs region (after the arguments,
    /// 64-byte aligned).
    #[must_use]
    pub fn internal_offset(&self) -> u64 {
        if self.internal_signals() == 0 {
            self.ka_bytes
        } else {
            self.ka_bytes.next_multiple_of(INTERNAL_SIGNAL_ALIGN)
        }
    }

    /// Number of graph-internal signals: when the graph uses both queues, one per queue
    /// switch between consecutive operations (the queue of the earlier one signals it, the
    /// queue of the later one waits for it) plus one the copy list signals at its end and
    /// the compute list waits for before it ends, so the compute list's end means the whole
    /// graph is done; 0 for a graph on one queue. They are `amd_signal_t`s in the kernargs
    /// region (at [`Self::internal_offset`]), signaled with and waited for
    /// [`INTERNAL_SIGNAL_VALUE`]: nothing about them is patched, and a replay resets them to 0
    /// from the CPU once the previous replay of the same graph has completed.
    #[must_use]
    pub fn internal_signals(&self) -> usize {
        if self.switches == 0 {
            0
        } else {
            self.switches + 1
        }
    }

    /// Number of operations.
    #[must_use]
    pub fn len(&self) -> usize {
        self.ops.len()
    }

    /// Whether no operation was recorded.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    /// A kernel launch: `prog` with `args` (laid out in order, natural alignment), `dims`
    /// (fixed, or a dims variable for an updatable kernel), `limits` the kernel's dims limits.
    pub fn launch(
        &mut self,
        prog: &Program,
        limits: DimLimits,
        args: &[Arg],
        dims: DimsArg,
    ) -> Result<(), GraphError> {
        let (_, end) = arg_layout(args);
        let end = match &prog.dispatch {
            Some(d) => {
                if d.packet_offset % 4 != 0 || d.packet_offset < end {
                    return Err(invalid(format!(
                        "dispatch packet offset {} overlaps the {end} argument bytes or is \
                         not dword aligned",
                        d.packet_offset
                    )));
                }
                d.packet_offset + 64
            }
            None => end,
        };
        let ka_offset = if prog.dispatch.is_some() {
            self.ka_bytes.next_multiple_of(KERNARG_ALIGN_DISPATCH)
        } else {
            self.ka_bytes
        };
        self.ka_bytes = (ka_offset + end.max(1)).next_multiple_of(KERNARG_ALIGN);
        self.on_queue(Queue::Compute);
        self.ops.push(Op::Launch {
            prog: *prog,
            limits,
            args: args.to_vec(),
            dims,
            ka_offset,
        });
        Ok(())
    }

    /// Records that the next operation runs on `queue` (counting queue switches: each one
    /// becomes an internal signal and wait, see [`Self::internal_signals`]).
    pub(super) fn on_queue(&mut self, queue: Queue) {
        if self.last_queue.is_some_and(|q| q != queue) {
            self.switches += 1;
        }
        self.last_queue = Some(queue);
    }

    /// A copy of `size` bytes (copy queue). It runs after every operation recorded before
    /// it, on either queue, and before every later one (see [`Self::internal_signals`]).
    ///
    /// # Errors
    /// None today: recording checks come at [`Self::encode`]; the `Result` leaves room for
    /// checks at the call.
    pub fn copy(&mut self, dst: BufArg, src: BufArg, size: u64) -> Result<(), GraphError> {
        self.on_queue(Queue::Copy);
        self.ops.push(Op::Copy { dst, src, size });
        Ok(())
    }

    /// A wait on `queue` until `sig >= value`.
    ///
    /// # Errors
    /// As [`Self::copy`].
    pub fn wait(&mut self, queue: Queue, sig: SigArg, value: ScalarArg) -> Result<(), GraphError> {
        self.on_queue(queue);
        self.ops.push(Op::Wait { queue, sig, value });
        Ok(())
    }

    /// A signal of `value` into `sig` from `queue`.
    ///
    /// # Errors
    /// As [`Self::copy`].
    pub fn signal(
        &mut self,
        queue: Queue,
        sig: SigArg,
        value: ScalarArg,
    ) -> Result<(), GraphError> {
        self.on_queue(queue);
        self.ops.push(Op::Signal { queue, sig, value });
        Ok(())
    }

    /// A memory barrier on the compute queue.
    pub fn barrier(&mut self) {
        self.on_queue(Queue::Compute);
        self.ops.push(Op::Barrier);
    }

    pub(super) fn var_value(&self, var: VarId) -> Result<Value, GraphError> {
        self.vars
            .get(var.index())
            .copied()
            .ok_or_else(|| invalid(format!("{var} was not declared")))
    }

    pub(super) fn addr_of(&self, b: &BufArg) -> Result<u64, GraphError> {
        match *b {
            BufArg::Fixed(a) => Ok(a.get()),
            BufArg::Var { var, offset, bytes } => match self.var_value(var)? {
                Value::Addr { addr, bytes: have } => {
                    if offset.saturating_add(bytes) > have {
                        return Err(GraphError::Patch(PatchError::BufferTooSmall {
                            var,
                            bytes: have,
                            needed: offset.saturating_add(bytes),
                        }));
                    }
                    Ok(addr.get().wrapping_add(offset))
                }
                _ => Err(invalid(format!("{var} is not a buffer variable"))),
            },
        }
    }

    pub(super) fn scalar_of(&self, s: &ScalarArg) -> Result<u64, GraphError> {
        match *s {
            ScalarArg::Fixed(v) => Ok(v),
            ScalarArg::Var(var) => match self.var_value(var)? {
                Value::Scalar(v) => Ok(v),
                _ => Err(invalid(format!("{var} is not a scalar variable"))),
            },
        }
    }

    pub(super) fn sig_of(&self, s: &SigArg) -> Result<SignalRef, GraphError> {
        match *s {
            SigArg::Fixed(r) => Ok(r),
            SigArg::Var {
                var,
                event_mailbox_ptr,
                event_id,
            } => match self.var_value(var)? {
                Value::Addr { addr, .. } => Ok(SignalRef {
                    addr: addr.get(),
                    event_mailbox_ptr,
                    event_id,
                }),
                _ => Err(invalid(format!("{var} is not a signal variable"))),
            },
        }
    }

    /// Writes a launch's explicit arguments into the kernargs image `ka` at byte `ka_offset`
    /// and binds the variable ones (buffer addresses, scalars) in `table`.
    fn write_args(
        &self,
        args: &[Arg],
        ka_offset: u64,
        ka: &mut [u32],
        table: &mut GraphTable,
    ) -> Result<(), GraphError> {
        let (offs, _) = arg_layout(args);
        for (a, off) in args.iter().zip(offs) {
            let at = dword_of(ka_offset + off)?;
            // CAST: at < ka.len(), which is a usize.
            let i = at as usize;
            match a {
                Arg::Buf(b) => {
                    let p = self.addr_of(b)?;
                    put(ka, i, &[lo32(p), hi32(p)])?;
                    if let BufArg::Var { var, offset, bytes } = *b {
                        table.bind_u64(var, TARGET_KERNARGS, Some(&ka[..]), at, offset)?;
                        table.require_bytes(var, offset.saturating_add(bytes))?;
                    }
                }
                Arg::U32(s) => {
                    let v = self.scalar_of(s)?;
                    let v32 = u32::try_from(v)
                        .map_err(|_| invalid(format!("u32 kernel argument {v:#x} does not fit")))?;
                    put(ka, i, &[v32])?;
                    if let ScalarArg::Var(var) = *s {
                        table.bind_u32(var, TARGET_KERNARGS, Some(&ka[..]), at)?;
                    }
                }
                Arg::U64(s) => {
                    let v = self.scalar_of(s)?;
                    put(ka, i, &[lo32(v), hi32(v)])?;
                    if let ScalarArg::Var(var) = *s {
                        table.bind_u64(var, TARGET_KERNARGS, Some(&ka[..]), at, 0)?;
                    }
                }
            }
        }
        Ok(())
    }

    pub(super) fn dims_of(&self, d: &DimsArg) -> Result<Dims, GraphError> {
        match *d {
            DimsArg::Fixed(d) => Ok(d),
            DimsArg::Var(var) => match self.var_value(var)? {
                Value::Dims(d) => Ok(d),
                _ => Err(invalid(format!("{var} is not a dims variable"))),
            },
        }
    }

    /// Encodes the graph for a kernargs region at `kernargs_va` (of at least
    /// [`Self::kernargs_bytes`], 64-byte aligned when the graph has internal signals) and
    /// builds its patch table.
    ///
    /// Recorded order holds across the two queues: where consecutive operations change queue,
    /// the earlier queue's list signals the next internal signal and the later queue's list
    /// waits for it (see [`Self::internal_signals`]); a graph on both queues also ends its
    /// copy list with a signal the compute list waits for at its end.
    pub fn encode(&self, kernargs_va: GpuVa) -> Result<Encoded, GraphError> {
        self.encode_with(kernargs_va, None)
    }

    /// [`Self::encode`] for an AQL compute queue ([`super::aql`]): each launch becomes a
    /// kernel dispatch packet of the kernel `kernel` names for its entry address (the
    /// device's loaded kernels, as [`Graph::record`] looks them up), the rest of the compute
    /// part PM4 bodies between them; [`Encoded::aql`] holds the layout.
    ///
    /// # Errors
    /// As [`Self::encode`]; a launch whose kernel `kernel` does not know.
    pub fn encode_aql(
        &self,
        kernargs_va: GpuVa,
        kernel: &dyn Fn(GpuVa) -> Option<KernelObject>,
    ) -> Result<Encoded, GraphError> {
        self.encode_with(kernargs_va, Some(AqlRec::new(kernel)))
    }

    fn encode_with(
        &self,
        kernargs_va: GpuVa,
        aql: Option<AqlRec<'_>>,
    ) -> Result<Encoded, GraphError> {
        let internal_offset = self.internal_offset();
        let internal_signals = self.internal_signals();
        if internal_signals > 0 && kernargs_va.get() % INTERNAL_SIGNAL_ALIGN != 0 {
            return Err(invalid(format!(
                "kernargs region at {:#x} is not {INTERNAL_SIGNAL_ALIGN}-byte aligned (the \
                 graph's internal signals live in it)",
                kernargs_va.get()
            )));
        }
        let internal = |i: usize| {
            // CAST (below): usize -> u64 widens.
            SignalRef::new(
                kernargs_va
                    .offset(internal_offset + INTERNAL_SIGNAL_ALIGN * i as u64)
                    .get(),
            )
        };
        let mut l = Lists {
            pm4: new_pm4(self.arch),
            sd: new_sdma(self.arch),
            table: new_table(),
            // CAST: bytes / 4 of a region the host allocated.
            ka: vec![0u32; (self.kernargs_bytes() / 4) as usize],
            kernargs_va,
            aql,
        };
        for v in &self.vars {
            l.table.declare(*v)?;
        }
        let mut prev: Option<Queue> = None;
        let mut next_internal = 0usize;
        for (index, op) in self.ops.iter().enumerate() {
            let q = op.queue();
            if let Some(p) = prev.filter(|&p| p != q) {
                let r = internal(next_internal);
                next_internal += 1;
                internal_signal(&mut l.pm4, &mut l.sd, p, &r)?;
                internal_wait(&mut l.pm4, &mut l.sd, q, &r)?;
            }
            prev = Some(q);
            match op {
                Op::Launch {
                    prog,
                    limits,
                    args,
                    dims,
                    ka_offset,
                } => self.encode_launch(&mut l, index, prog, limits, args, dims, *ka_offset)?,
                Op::Copy { dst, src, size } => self.encode_copy(&mut l, index, dst, src, *size)?,
                Op::Wait { queue, sig, value } => self.encode_wait(&mut l, *queue, sig, value)?,
                Op::Signal { queue, sig, value } => {
                    self.encode_signal(&mut l, *queue, sig, value)?;
                }
                Op::Barrier => {
                    if !seeded!(GraphLaunchWithoutBarrier) {
                        l.pm4.memory_barrier()?;
                    }
                }
            }
        }
        if internal_signals > 0 {
            // The copy list's end: the compute list (whose end the driver's timeline signal
            // follows) waits for it, so the replay's timeline value means both lists finished.
            let r = internal(next_internal);
            next_internal += 1;
            internal_signal(&mut l.pm4, &mut l.sd, Queue::Copy, &r)?;
            internal_wait(&mut l.pm4, &mut l.sd, Queue::Compute, &r)?;
        }
        if next_internal != internal_signals {
            return Err(invalid(format!(
                "{next_internal} internal signals encoded, {internal_signals} laid out"
            )));
        }
        let aql = match l.aql.take() {
            Some(a) => Some(a.finish(l.pm4.as_dwords(), &mut l.table)?),
            None => None,
        };
        l.table.seal();
        // Every record-time value passes the check a replay makes (with each variable's
        // limits as all its uses tightened them): the lists start out holding checked values,
        // which is what lets a replay with unchanged values skip the check
        // (`Graph::replay`'s fast path).
        l.table.validate(&self.initial_values())?;
        Ok(Encoded {
            pm4: l.pm4,
            sdma: l.sd,
            kernargs: l.ka,
            table: l.table,
            kernargs_va,
            internal_offset,
            internal_signals,
            aql,
        })
    }

    /// Encodes one launch (operation `index`): its arguments into the kernargs image, its
    /// dispatch into the PM4 list, and the patch-table entries of a variable's dims. The dims
    /// it is recorded with, fixed or a variable's record-time value, are checked against the
    /// kernel's limits here, the refusal naming the launch and the value.
    #[allow(clippy::too_many_arguments)]
    fn encode_launch(
        &self,
        l: &mut Lists<'_>,
        index: usize,
        prog: &Program,
        limits: &DimLimits,
        args: &[Arg],
        dims: &DimsArg,
        ka_offset: u64,
    ) -> Result<(), GraphError> {
        self.write_args(args, ka_offset, &mut l.ka, &mut l.table)?;
        let d = self.dims_of(dims)?;
        check_fixed_dims(&d, limits).map_err(|e| {
            let what = match dims {
                DimsArg::Var(var) => format!("dims {var} recorded as"),
                DimsArg::Fixed(_) => "fixed dims".to_owned(),
            };
            invalid(format!(
                "operation {index} (launch of the kernel at {}): {what} global {:?} local {:?}: \
                 {}",
                prog.prog_addr,
                d.global,
                d.local,
                e.to_string().trim_start_matches("graph: ")
            ))
        })?;
        let kva = l.kernargs_va.offset(ka_offset);
        if let Some(a) = l.aql.as_mut() {
            // A kernel dispatch packet (the kernel reads the packet in the ring through its
            // dispatch pointer: no copy in the kernargs).
            return a.launch(l.pm4.as_dwords().len(), index, prog, limits, dims, &d, kva);
        }
        let (h, dw) = l.pm4.exec(prog, kva, d.global, d.local)?;
        let packet = match (dw, &prog.dispatch) {
            (Some(dw), Some(info)) => Some(write_dispatch_packet(
                &dw.packet,
                ka_offset + info.packet_offset,
                &mut l.ka,
            )?),
            _ => None,
        };
        match dims {
            DimsArg::Var(var) => {
                l.table
                    .bind_exec(*var, TARGET_PM4, l.pm4.as_dwords(), &h, *limits, packet)?;
            }
            DimsArg::Fixed(_) => {}
        }
        Ok(())
    }

    /// Encodes one copy (operation `index`) into the SDMA list, binding the ends that are
    /// variables: each such end needs `size` bytes from its offset, now (its record-time
    /// buffer, the refusal naming the copy and the sizes) and at every replay.
    fn encode_copy(
        &self,
        l: &mut Lists<'_>,
        index: usize,
        dst: &BufArg,
        src: &BufArg,
        size: u64,
    ) -> Result<(), GraphError> {
        for (end, b) in [("destination", dst), ("source", src)] {
            if let BufArg::Var { var, offset, .. } = *b {
                let needed = offset.saturating_add(size);
                if let Value::Addr { bytes, .. } = self.var_value(var)? {
                    if needed > bytes {
                        return Err(invalid(format!(
                            "operation {index} (copy of {size} bytes): its {end}, buffer \
                             variable {var} at offset {offset}, was recorded as a {bytes}-byte \
                             buffer; the copy needs {needed}"
                        )));
                    }
                }
                l.table.require_bytes(var, needed)?;
            }
        }
        let (d, s) = (self.addr_of(dst)?, self.addr_of(src)?);
        let opts = sdma::CopyOptions::hardware(self.arch);
        let h = l.sd.copy_with(&opts, GpuVa(d), GpuVa(s), size)?;
        let var = |b: &BufArg| match b {
            BufArg::Var { var, .. } => Some(*var),
            BufArg::Fixed(_) => None,
        };
        if var(src).is_some() || var(dst).is_some() {
            l.table
                .bind_copy(var(src), var(dst), TARGET_SDMA, l.sd.as_dwords(), &h)?;
        }
        Ok(())
    }

    /// Encodes a wait on `queue`'s list for `sig` to reach `value`.
    fn encode_wait(
        &self,
        l: &mut Lists<'_>,
        queue: Queue,
        sig: &SigArg,
        value: &ScalarArg,
    ) -> Result<(), GraphError> {
        let r = self.sig_of(sig)?;
        let v = self.scalar_of(value)?;
        let v32 = u32::try_from(v)
            .map_err(|_| invalid(format!("wait value {v:#x} does not fit 32 bits")))?;
        match queue {
            Queue::Compute => {
                let h = l.pm4.wait(&r, v32)?;
                bind_wait(&mut l.table, TARGET_PM4, l.pm4.as_dwords(), &h, sig, value)
            }
            Queue::Copy => {
                let h = l.sd.wait(&r, v32)?;
                bind_wait(&mut l.table, TARGET_SDMA, l.sd.as_dwords(), &h, sig, value)
            }
        }
    }

    /// Encodes a signal write of `value` to `sig` at the end of `queue`'s work so far.
    fn encode_signal(
        &self,
        l: &mut Lists<'_>,
        queue: Queue,
        sig: &SigArg,
        value: &ScalarArg,
    ) -> Result<(), GraphError> {
        let r = self.sig_of(sig)?;
        let v = self.scalar_of(value)?;
        match queue {
            Queue::Compute => {
                let h = l.pm4.signal(&r, v)?;
                bind_signal(&mut l.table, TARGET_PM4, l.pm4.as_dwords(), &h, sig, value)
            }
            Queue::Copy => {
                let v32 = u32::try_from(v).map_err(|_| {
                    invalid(format!("SDMA signal value {v:#x} does not fit 32 bits"))
                })?;
                let h = l.sd.signal(&r, v32)?;
                bind_signal(&mut l.table, TARGET_SDMA, l.sd.as_dwords(), &h, sig, value)
            }
        }
    }
}

/// The lists and kernargs image a graph is encoded into.
struct Lists<'k> {
    pm4: Box<GraphPm4>,
    sd: Box<GraphSdma>,
    table: Box<GraphTable>,
    ka: Vec<u32>,
    kernargs_va: GpuVa,
    /// The AQL recording, when encoding for an AQL queue.
    aql: Option<AqlRec<'k>>,
}

/// Writes the HSA dispatch packet a launch's kernel reads (through its dispatch pointer) into
/// the kernargs image `ka` at byte `byte`; returns where, as the patch table names it.
fn write_dispatch_packet(
    packet: &hcq_core::hsa::DispatchPacket,
    byte: u64,
    ka: &mut [u32],
) -> Result<(u8, u32), GraphError> {
    let at = dword_of(byte)?;
    let words: Vec<u32> = packet
        .to_bytes()
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    // CAST: at < ka.len(), which is a usize.
    put(ka, at as usize, &words)?;
    Ok((TARGET_KERNARGS, at))
}
