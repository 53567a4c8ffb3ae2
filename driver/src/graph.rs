//! Graph replay: record a chain of launches, copies, waits and signals once, then replay it
//! with new inputs by patching the recorded commands in place (tinygrad's `HCQGraph`, Metal's
//! indirect command buffers) and submitting one indirect buffer per queue.
//!
//! Recording ([`GraphBuilder`]) is device-independent: it declares the graph's
//! **variables** (input/output buffers, scalar kernel arguments, launch dims of updatable
//! kernels, timeline values and signal addresses), takes the operations, lays out every
//! launch's kernel arguments (plus its dispatch packet) in a graph-owned kernargs region, and
//! [`GraphBuilder::encode`]s them for that region's GPU address into a PM4 list (compute), an
//! SDMA list (copies) and the kernargs dwords, together with core's
//! [`PatchTable`] (every dword each variable lands in).
//!
//! Operations run in recorded order across both queues. Where consecutive operations change
//! queue, the earlier queue's list signals a graph-internal signal and the later queue's list
//! waits for it; a graph on both queues also ends its copy list with a signal that the compute
//! list waits for before it ends. These internal signals are `amd_signal_t`s at the end of the
//! kernargs region ([`GraphBuilder::internal_signals`]), always signaled with and waited for
//! [`INTERNAL_SIGNAL_VALUE`] (1): they are never patched, and a replay resets them to 0 from
//! the CPU, which is safe because it first waits for the previous replay of the same graph.
//!
//! A replay ([`Encoded::apply`]) checks all values first (every variable present, buffers
//! large enough, dims within the kernels' limits) and then writes only what changed, into
//! plain memory or the `&[AtomicU32]` views of the bound GPU copies.
//!
//! [`Graph::record`] binds an encoded graph to a device: kernargs (with the internal signals),
//! the PM4 list and the SDMA list (padded to 8 dwords) live in GPU memory; [`Graph::replay`]
//! validates, waits until the previous replay of the same graph completed (so it never
//! patches bytes the GPU may read), patches in place, resets the internal signals and submits
//! the copy IB (SDMA INDIRECT) and the compute IB (INDIRECT_BUFFER) under one timeline value
//! ([`crate::Device::submit_pair`]: both wait for the previous value, the compute part
//! signals it after the copy list's end), or the one IB of a one-queue graph as a single
//! submission: the submission is the same few ring dwords whatever the graph's size.
//! [`MultiGraph`] replays graphs of several devices in order; a graph waits on the GPU for
//! the replays it depends on through a recorded wait whose signal address and value are
//! variables ([`Dep`]), set each replay to the other device's timeline value (and its shadow
//! signal after a wrap).

use core::fmt;

use hcq_core::addr::{GpuVa, hi32, lo32};
use hcq_core::arch::ArchInfo;
use hcq_core::cmd::{CmdError, PatchTarget, Pm4List, SdmaList};
use hcq_core::patch::{PatchError, PatchTable};
use hcq_core::pm4::Program;
use hcq_core::sdma;
use hcq_core::signal::{SIGNAL_SIZE, SignalRef, VALUE_OFFSET};

pub use hcq_core::patch::{DimLimits, Dims, Value, VarId};

/// PM4 storage of a graph: up to 128 Ki dwords (about 1900 launches) and 8192 commands.
pub type GraphPm4 = Pm4List<{ 128 * 1024 }, 8192>;
/// SDMA storage of a graph.
pub type GraphSdma = SdmaList<{ 32 * 1024 }, 2048, 8192>;
/// Patch table of a graph: 4096 variables, 16 Ki entries, three targets.
pub type GraphTable = PatchTable<4096, { 16 * 1024 }, 3>;

/// Patch target index of the PM4 list.
pub const TARGET_PM4: u8 = 0;
/// Patch target index of the SDMA list.
pub const TARGET_SDMA: u8 = 1;
/// Patch target index of the kernargs region.
pub const TARGET_KERNARGS: u8 = 2;

/// Alignment of each launch's kernel arguments in the graph's region (tinygrad's graph uses
/// 16 too).
pub const KERNARG_ALIGN: u64 = 16;
/// Alignment of the arguments of a launch with a dispatch packet (the packet is 64-byte
/// aligned, as an AQL packet).
pub const KERNARG_ALIGN_DISPATCH: u64 = 64;

/// Why recording or replaying a graph failed.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum GraphError {
    /// A patch table refused (bad binding, missing or bad value at replay).
    Patch(PatchError),
    /// A command did not encode (list full, value too large).
    Cmd(CmdError),
    /// A variable used as the wrong kind, or an argument the graph cannot take.
    Invalid(String),
}

impl fmt::Display for GraphError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GraphError::Patch(e) => write!(f, "graph: {e}"),
            GraphError::Cmd(e) => write!(f, "graph: {e}"),
            GraphError::Invalid(s) => write!(f, "graph: {s}"),
        }
    }
}

impl core::error::Error for GraphError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            GraphError::Patch(e) => Some(e),
            GraphError::Cmd(e) => Some(e),
            GraphError::Invalid(_) => None,
        }
    }
}

impl From<PatchError> for GraphError {
    fn from(e: PatchError) -> Self {
        GraphError::Patch(e)
    }
}

impl From<CmdError> for GraphError {
    fn from(e: CmdError) -> Self {
        GraphError::Cmd(e)
    }
}

/// A buffer as a launch argument or copy end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BufArg {
    /// A fixed GPU address (a graph-internal buffer).
    Fixed(GpuVa),
    /// `offset` bytes into an address variable; the graph uses `bytes` bytes from there (a
    /// replay with a smaller buffer is refused).
    Var {
        /// The variable.
        var: VarId,
        /// Byte offset.
        offset: u64,
        /// Bytes used from `offset`.
        bytes: u64,
    },
}

impl BufArg {
    /// The whole of an input buffer of `bytes` bytes.
    #[must_use]
    pub const fn var(var: VarId, bytes: u64) -> Self {
        BufArg::Var {
            var,
            offset: 0,
            bytes,
        }
    }
}

/// A scalar: fixed or a scalar variable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScalarArg {
    /// A fixed value.
    Fixed(u64),
    /// A scalar variable.
    Var(VarId),
}

/// A kernel argument, laid out in order with natural alignment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arg {
    /// A 64-bit pointer.
    Buf(BufArg),
    /// A 32-bit scalar.
    U32(ScalarArg),
    /// A 64-bit scalar.
    U64(ScalarArg),
}

/// Launch dims: fixed or a dims variable (an updatable kernel).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DimsArg {
    /// Fixed at record time.
    Fixed(Dims),
    /// A dims variable.
    Var(VarId),
}

/// A signal a wait or signal command uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SigArg {
    /// A fixed signal.
    Fixed(SignalRef),
    /// An address variable (the timeline signal, which changes when the timeline wraps), with
    /// the fixed event part of the signal (mailbox and event id, 0 for none).
    Var {
        /// The variable (the signal's base address).
        var: VarId,
        /// Event mailbox address (0: no event).
        event_mailbox_ptr: u64,
        /// Event id.
        event_id: u32,
    },
}

/// The engine a wait or signal runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Queue {
    /// The compute (PM4) queue.
    Compute,
    /// The copy (SDMA) queue.
    Copy,
}

#[derive(Clone, Debug)]
enum Op {
    Launch {
        prog: Program,
        limits: DimLimits,
        args: Vec<Arg>,
        dims: DimsArg,
        /// Byte offset of the arguments in the kernargs region.
        ka_offset: u64,
    },
    Copy {
        dst: BufArg,
        src: BufArg,
        size: u64,
    },
    Wait {
        queue: Queue,
        sig: SigArg,
        value: ScalarArg,
    },
    Signal {
        queue: Queue,
        sig: SigArg,
        value: ScalarArg,
    },
    Barrier,
}

impl Op {
    /// The queue the operation runs on.
    fn queue(&self) -> Queue {
        match self {
            Op::Launch { .. } | Op::Barrier => Queue::Compute,
            Op::Copy { .. } => Queue::Copy,
            Op::Wait { queue, .. } | Op::Signal { queue, .. } => *queue,
        }
    }
}

/// Value every internal signal is signaled with and waited for (a replay resets them to 0
/// first).
pub const INTERNAL_SIGNAL_VALUE: u32 = 1;

/// Alignment of the internal signals in the kernargs region (an `amd_signal_t`'s).
const INTERNAL_SIGNAL_ALIGN: u64 = SIGNAL_SIZE as u64;

/// Records a graph: variables, then operations in order.
#[derive(Clone, Debug)]
pub struct GraphBuilder {
    arch: &'static ArchInfo,
    vars: Vec<Value>,
    ops: Vec<Op>,
    /// Bytes of the launches' arguments (the internal signals follow them).
    ka_bytes: u64,
    /// Queue of the last operation.
    last_queue: Option<Queue>,
    /// How many times consecutive operations changed queue.
    switches: usize,
}

/// A recorded graph encoded for one kernargs address: the lists, the kernargs, the patch
/// table.
pub struct Encoded {
    /// The compute commands.
    pub pm4: Box<GraphPm4>,
    /// The copy commands.
    pub sdma: Box<GraphSdma>,
    /// The kernargs region's contents (dwords).
    pub kernargs: Vec<u32>,
    /// Where each variable lands.
    pub table: Box<GraphTable>,
    /// The kernargs region's GPU address.
    pub kernargs_va: GpuVa,
    /// Byte offset of the first internal signal in the kernargs region.
    pub internal_offset: u64,
    /// Internal signals (see [`GraphBuilder::internal_signals`]): one per queue switch, in
    /// recorded order, then the "copy list finished" signal; 0 for a one-queue graph.
    pub internal_signals: usize,
}

impl fmt::Debug for Encoded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Encoded")
            .field("pm4_dwords", &self.pm4.as_dwords().len())
            .field("sdma_dwords", &self.sdma.as_dwords().len())
            .field("kernargs_dwords", &self.kernargs.len())
            .field("table", &self.table)
            .finish()
    }
}

// Big inline lists live on the heap; build each in its own frame so debug builds do not stack
// several copies in one.
#[inline(never)]
fn new_pm4(arch: &'static ArchInfo) -> Box<GraphPm4> {
    Box::new(Pm4List::new(arch))
}
#[inline(never)]
fn new_sdma(arch: &'static ArchInfo) -> Box<GraphSdma> {
    Box::new(SdmaList::new(arch))
}
#[inline(never)]
fn new_table() -> Box<GraphTable> {
    Box::new(PatchTable::new())
}

fn invalid(s: impl Into<String>) -> GraphError {
    GraphError::Invalid(s.into())
}

/// Offsets of each argument and the end of the arguments.
fn arg_layout(args: &[Arg]) -> (Vec<u64>, u64) {
    let mut at = 0u64;
    let mut offs = Vec::with_capacity(args.len());
    for a in args {
        let size = match a {
            Arg::U32(_) => 4,
            Arg::Buf(_) | Arg::U64(_) => 8,
        };
        at = at.next_multiple_of(size);
        offs.push(at);
        at += size;
    }
    (offs, at)
}

fn dword_of(byte: u64) -> Result<u32, GraphError> {
    u32::try_from(byte / 4).map_err(|_| invalid(format!("kernargs offset {byte} too large")))
}

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

    fn declare(&mut self, v: Value) -> Result<VarId, GraphError> {
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
    fn on_queue(&mut self, queue: Queue) {
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

    fn var_value(&self, var: VarId) -> Result<Value, GraphError> {
        self.vars
            .get(var.index())
            .copied()
            .ok_or_else(|| invalid(format!("{var} was not declared")))
    }

    fn addr_of(&self, b: &BufArg) -> Result<u64, GraphError> {
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

    fn scalar_of(&self, s: &ScalarArg) -> Result<u64, GraphError> {
        match *s {
            ScalarArg::Fixed(v) => Ok(v),
            ScalarArg::Var(var) => match self.var_value(var)? {
                Value::Scalar(v) => Ok(v),
                _ => Err(invalid(format!("{var} is not a scalar variable"))),
            },
        }
    }

    fn sig_of(&self, s: &SigArg) -> Result<SignalRef, GraphError> {
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

    fn dims_of(&self, d: &DimsArg) -> Result<Dims, GraphError> {
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
        let mut pm4 = new_pm4(self.arch);
        let mut sd = new_sdma(self.arch);
        let mut table = new_table();
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
        // CAST: bytes / 4 of a region the host allocated.
        let mut ka = vec![0u32; (self.kernargs_bytes() / 4) as usize];
        for v in &self.vars {
            table.declare(*v)?;
        }
        let mut prev: Option<Queue> = None;
        let mut next_internal = 0usize;
        for op in &self.ops {
            let q = op.queue();
            if let Some(p) = prev.filter(|&p| p != q) {
                let r = internal(next_internal);
                next_internal += 1;
                internal_signal(&mut pm4, &mut sd, p, &r)?;
                internal_wait(&mut pm4, &mut sd, q, &r)?;
            }
            prev = Some(q);
            match op {
                Op::Launch {
                    prog,
                    limits,
                    args,
                    dims,
                    ka_offset,
                } => {
                    let (offs, _) = arg_layout(args);
                    for (a, off) in args.iter().zip(offs) {
                        let at = dword_of(ka_offset + off)?;
                        // CAST: at < ka.len(), which is a usize.
                        let i = at as usize;
                        match a {
                            Arg::Buf(b) => {
                                let p = self.addr_of(b)?;
                                put(&mut ka, i, &[lo32(p), hi32(p)])?;
                                if let BufArg::Var { var, offset, bytes } = *b {
                                    table.bind_u64(
                                        var,
                                        TARGET_KERNARGS,
                                        Some(&ka[..]),
                                        at,
                                        offset,
                                    )?;
                                    table.require_bytes(var, offset.saturating_add(bytes))?;
                                }
                            }
                            Arg::U32(s) => {
                                let v = self.scalar_of(s)?;
                                let v32 = u32::try_from(v).map_err(|_| {
                                    invalid(format!("u32 kernel argument {v:#x} does not fit"))
                                })?;
                                put(&mut ka, i, &[v32])?;
                                if let ScalarArg::Var(var) = *s {
                                    table.bind_u32(var, TARGET_KERNARGS, Some(&ka[..]), at)?;
                                }
                            }
                            Arg::U64(s) => {
                                let v = self.scalar_of(s)?;
                                put(&mut ka, i, &[lo32(v), hi32(v)])?;
                                if let ScalarArg::Var(var) = *s {
                                    table.bind_u64(var, TARGET_KERNARGS, Some(&ka[..]), at, 0)?;
                                }
                            }
                        }
                    }
                    let d = self.dims_of(dims)?;
                    let kva = kernargs_va.offset(*ka_offset);
                    let (h, dw) = pm4.exec(prog, kva, d.global, d.local)?;
                    let packet = match (dw, &prog.dispatch) {
                        (Some(dw), Some(info)) => {
                            let at = dword_of(ka_offset + info.packet_offset)?;
                            let words: Vec<u32> = dw
                                .packet
                                .to_bytes()
                                .chunks_exact(4)
                                .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                                .collect();
                            // CAST: as above.
                            put(&mut ka, at as usize, &words)?;
                            Some((TARGET_KERNARGS, at))
                        }
                        _ => None,
                    };
                    match dims {
                        DimsArg::Var(var) => {
                            table.bind_exec(
                                *var,
                                TARGET_PM4,
                                pm4.as_dwords(),
                                &h,
                                *limits,
                                packet,
                            )?;
                        }
                        DimsArg::Fixed(d) => check_fixed_dims(d, limits)?,
                    }
                }
                Op::Copy { dst, src, size } => {
                    let (d, s) = (self.addr_of(dst)?, self.addr_of(src)?);
                    let opts = sdma::CopyOptions::hardware(self.arch);
                    let h = sd.copy_with(&opts, GpuVa(d), GpuVa(s), *size)?;
                    let var = |b: &BufArg| match b {
                        BufArg::Var { var, .. } => Some(*var),
                        BufArg::Fixed(_) => None,
                    };
                    if var(src).is_some() || var(dst).is_some() {
                        table.bind_copy(var(src), var(dst), TARGET_SDMA, sd.as_dwords(), &h)?;
                    }
                }
                Op::Wait { queue, sig, value } => {
                    let r = self.sig_of(sig)?;
                    let v = self.scalar_of(value)?;
                    let v32 = u32::try_from(v)
                        .map_err(|_| invalid(format!("wait value {v:#x} does not fit 32 bits")))?;
                    match queue {
                        Queue::Compute => {
                            let h = pm4.wait(&r, v32)?;
                            bind_wait(&mut table, TARGET_PM4, pm4.as_dwords(), &h, sig, value)?;
                        }
                        Queue::Copy => {
                            let h = sd.wait(&r, v32)?;
                            bind_wait(&mut table, TARGET_SDMA, sd.as_dwords(), &h, sig, value)?;
                        }
                    }
                }
                Op::Signal { queue, sig, value } => {
                    let r = self.sig_of(sig)?;
                    let v = self.scalar_of(value)?;
                    match queue {
                        Queue::Compute => {
                            let h = pm4.signal(&r, v)?;
                            bind_signal(&mut table, TARGET_PM4, pm4.as_dwords(), &h, sig, value)?;
                        }
                        Queue::Copy => {
                            let v32 = u32::try_from(v).map_err(|_| {
                                invalid(format!("SDMA signal value {v:#x} does not fit 32 bits"))
                            })?;
                            let h = sd.signal(&r, v32)?;
                            bind_signal(&mut table, TARGET_SDMA, sd.as_dwords(), &h, sig, value)?;
                        }
                    }
                }
                Op::Barrier => {
                    pm4.memory_barrier()?;
                }
            }
        }
        if internal_signals > 0 {
            // The copy list's end: the compute list (whose end the driver's timeline signal
            // follows) waits for it, so the replay's timeline value means both lists finished.
            let r = internal(next_internal);
            next_internal += 1;
            internal_signal(&mut pm4, &mut sd, Queue::Copy, &r)?;
            internal_wait(&mut pm4, &mut sd, Queue::Compute, &r)?;
        }
        if next_internal != internal_signals {
            return Err(invalid(format!(
                "{next_internal} internal signals encoded, {internal_signals} laid out"
            )));
        }
        table.seal();
        Ok(Encoded {
            pm4,
            sdma: sd,
            kernargs: ka,
            table,
            kernargs_va,
            internal_offset,
            internal_signals,
        })
    }
}

/// The signal of an internal signal on `queue`.
fn internal_signal(
    pm4: &mut GraphPm4,
    sd: &mut GraphSdma,
    queue: Queue,
    r: &SignalRef,
) -> Result<(), GraphError> {
    match queue {
        Queue::Compute => pm4
            .signal(r, INTERNAL_SIGNAL_VALUE.into())
            .map(|_| ())
            .map_err(GraphError::Cmd),
        Queue::Copy => sd
            .signal(r, INTERNAL_SIGNAL_VALUE)
            .map(|_| ())
            .map_err(GraphError::Cmd),
    }
}

/// The wait for an internal signal on `queue`.
fn internal_wait(
    pm4: &mut GraphPm4,
    sd: &mut GraphSdma,
    queue: Queue,
    r: &SignalRef,
) -> Result<(), GraphError> {
    match queue {
        Queue::Compute => pm4.wait(r, INTERNAL_SIGNAL_VALUE).map(|_| ()),
        Queue::Copy => sd.wait(r, INTERNAL_SIGNAL_VALUE).map(|_| ()),
    }
    .map_err(GraphError::Cmd)
}

fn put(ka: &mut [u32], at: usize, vals: &[u32]) -> Result<(), GraphError> {
    ka.get_mut(at..at + vals.len())
        .ok_or_else(|| invalid(format!("kernargs dword {at} outside the region")))?
        .copy_from_slice(vals);
    Ok(())
}

fn check_fixed_dims(d: &Dims, l: &DimLimits) -> Result<(), GraphError> {
    // Saturating: three 32-bit factors can exceed 64 bits.
    let threads =
        (u64::from(d.local[0]) * u64::from(d.local[1])).saturating_mul(u64::from(d.local[2]));
    for k in 0..3 {
        if d.global[k] == 0 || d.global[k] > l.max_global[k] || d.local[k] == 0 {
            return Err(invalid(format!(
                "launch dims global {:?} local {:?} outside the kernel's limits",
                d.global, d.local
            )));
        }
        if d.local[k] > l.max_local[k] {
            return Err(invalid(format!(
                "local[{k}] = {} above the kernel's {}",
                d.local[k], l.max_local[k]
            )));
        }
    }
    if threads > u64::from(l.max_threads) {
        return Err(invalid(format!(
            "{threads} work-items per workgroup above the kernel's {}",
            l.max_threads
        )));
    }
    Ok(())
}

fn bind_wait<M: PatchTarget + ?Sized>(
    t: &mut GraphTable,
    target: u8,
    list: &M,
    h: &hcq_core::cmd::WaitCmd,
    sig: &SigArg,
    value: &ScalarArg,
) -> Result<(), GraphError> {
    if let SigArg::Var { var, .. } = sig {
        t.bind_wait_signal(*var, target, list, h)?;
    }
    if let ScalarArg::Var(var) = value {
        t.bind_wait_value(*var, target, list, h)?;
    }
    Ok(())
}

fn bind_signal<M: PatchTarget + ?Sized>(
    t: &mut GraphTable,
    target: u8,
    list: &M,
    h: &hcq_core::cmd::SignalCmd,
    sig: &SigArg,
    value: &ScalarArg,
) -> Result<(), GraphError> {
    if let SigArg::Var { var, .. } = sig {
        t.bind_signal_addr(*var, target, list, h)?;
    }
    if let ScalarArg::Var(var) = value {
        t.bind_signal_value(*var, target, list, h)?;
    }
    Ok(())
}

impl Encoded {
    /// Internal signal `i` (see [`GraphBuilder::internal_signals`]).
    #[must_use]
    pub fn internal_signal(&self, i: usize) -> Option<SignalRef> {
        (i < self.internal_signals).then(|| {
            // CAST (below): usize -> u64 widens.
            SignalRef::new(
                self.kernargs_va
                    .offset(self.internal_offset + INTERNAL_SIGNAL_ALIGN * i as u64)
                    .get(),
            )
        })
    }

    /// Kernargs dword index of each internal signal's 64-bit value (low dword; the high one
    /// follows): what a replay zeroes before it submits.
    pub fn internal_value_dwords(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.internal_signals).map(|i| {
            // CAST: usize -> u64 widens; the result is inside the kernargs region, whose dword
            // count is a usize.
            ((self.internal_offset + INTERNAL_SIGNAL_ALIGN * i as u64 + VALUE_OFFSET) / 4) as usize
        })
    }

    /// The SDMA list as an indirect buffer: padded with NOPs to a multiple of 8 dwords.
    #[must_use]
    pub fn sdma_ib(&self) -> Vec<u32> {
        let mut ib = self.sdma.as_dwords().to_vec();
        let pad = ib.len().next_multiple_of(8) - ib.len();
        if pad > 0 {
            let at = ib.len();
            ib.resize(at + pad, 0);
            // PANIC-free: the slice has exactly `pad` dwords, which is what nop() fills.
            let _ = sdma::nop(&mut ib[at..], pad);
        }
        ib
    }

    /// Checks `values` without writing (see [`Encoded::apply`]); returns how many variables
    /// changed since the last apply.
    pub fn validate(&self, values: &[Option<Value>]) -> Result<usize, GraphError> {
        Ok(self.table.validate(values)?)
    }

    /// Checks `values` (one per declared variable) and writes what changed into the three
    /// targets (`pm4`, `sdma`, `kernargs`: the bound copies or plain memory). Returns the
    /// dwords written; on error nothing was written.
    pub fn apply<M: PatchTarget>(
        &mut self,
        values: &[Option<Value>],
        targets: &mut [M; 3],
    ) -> Result<usize, GraphError> {
        Ok(self.table.apply(values, targets)?)
    }
}

/// Numbers for `hcq bench` (`graph_patch_1000_ns`).
pub mod bench {
    use super::*;
    use core::hint::black_box;
    use core::sync::atomic::AtomicU32;
    use std::time::Instant;

    /// A 1000-kernel graph bound into (host) memory, ready to patch.
    pub struct Patch1000 {
        enc: Encoded,
        ib: Vec<AtomicU32>,
        sdma: Vec<AtomicU32>,
        ka: Vec<AtomicU32>,
        sets: [Vec<Option<Value>>; 2],
        flip: usize,
        /// Every dword the patch writes, per target, for [`Patch1000::store_floor_once`].
        floor: [Vec<u32>; 3],
    }

    impl fmt::Debug for Patch1000 {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.debug_struct("Patch1000").field("enc", &self.enc).finish()
        }
    }

    /// Kernels in the benchmark graph.
    pub const KERNELS: usize = 1000;

    fn dims(i: usize, replay: u32) -> Dims {
        // CAST: i < 1000.
        let i = i as u32;
        Dims {
            global: [1 + (i + replay) % 64, 1 + replay % 3, 1],
            local: [32 + (replay % 2) * 32, 1, 1],
        }
    }

    fn values(replay: u32) -> Vec<Option<Value>> {
        let mut v = vec![Some(Value::Addr {
            addr: GpuVa(0x1_0000_0000 + 0x10_0000 * u64::from(replay % 16)),
            bytes: 1 << 20,
        })];
        v.extend((0..KERNELS).map(|i| Some(Value::Dims(dims(i, replay)))));
        v
    }

    impl Patch1000 {
        /// Records the graph: 1000 launches, each with its own dims variable, all reading one
        /// input buffer variable (at their own offset) and writing a fixed buffer.
        pub fn new(arch: &'static ArchInfo) -> Result<Self, GraphError> {
            let mut g = GraphBuilder::new(arch);
            let input = g.buffer(GpuVa(0x1_0000_0000), 1 << 20)?;
            let prog = Program {
                prog_addr: GpuVa(0x4000_0000),
                ..Program::default()
            };
            for i in 0..KERNELS {
                let d = g.dims(dims(i, 0))?;
                let off = 8 * i as u64;
                g.launch(
                    &prog,
                    DimLimits::AMD,
                    &[
                        Arg::Buf(BufArg::Var {
                            var: input,
                            offset: off,
                            bytes: 8,
                        }),
                        Arg::Buf(BufArg::Fixed(GpuVa(0x3_0000_0000 + off))),
                    ],
                    DimsArg::Var(d),
                )?;
            }
            let enc = g.encode(GpuVa(0x2_0000_0000))?;
            let atom = |d: &[u32]| d.iter().map(|&x| AtomicU32::new(x)).collect::<Vec<_>>();
            let mut floor: [Vec<u32>; 3] = Default::default();
            for e in enc.table.entries() {
                if let Some(f) = floor.get_mut(usize::from(e.target)) {
                    // CAST: an op spans at most 3 dwords.
                    f.extend((0..e.op.span() as u32).map(|k| e.dword + k));
                }
            }
            for f in &mut floor {
                f.sort_unstable();
            }
            Ok(Self {
                ib: atom(enc.pm4.as_dwords()),
                sdma: atom(enc.sdma.as_dwords()),
                ka: atom(&enc.kernargs),
                enc,
                sets: [values(1), values(2)],
                flip: 0,
                floor,
            })
        }

        /// One replay's patch: every kernel's dims and the input buffer change. Returns the
        /// dwords written.
        pub fn patch_once(&mut self) -> Result<usize, GraphError> {
            self.flip ^= 1;
            let set = self.sets.get(self.flip).map_or(&[][..], |s| &s[..]);
            let mut t: [&[AtomicU32]; 3] = [&self.ib, &self.sdma, &self.ka];
            self.enc.apply(set, &mut t)
        }

        /// The floor under [`Self::patch_once`]: plain stores of every dword it writes, at the
        /// same places, with no values to check or compute (`graph_patch_1000_floor_ns`).
        /// Returns the dwords written.
        pub fn store_floor_once(&mut self) -> usize {
            self.flip ^= 1;
            // CAST: a benchmark counter.
            let v = self.flip as u32;
            let mut n = 0;
            for (mem, idx) in [&self.ib, &self.sdma, &self.ka]
                .into_iter()
                .zip(&self.floor)
            {
                for &i in idx {
                    if let Some(w) = mem.get(i as usize) {
                        w.store(v, core::sync::atomic::Ordering::Relaxed);
                    }
                }
                n += idx.len();
            }
            n
        }
    }

    /// Median nanoseconds of [`Patch1000::patch_once`] over `rounds` rounds of `batch` calls.
    pub fn graph_patch_1000_ns(rounds: usize, batch: usize) -> Result<f64, GraphError> {
        let mut p = Patch1000::new(&hcq_core::arch::GFX11)?;
        let batch = batch.max(1);
        let mut times = Vec::with_capacity(rounds.max(1));
        for _ in 0..rounds.max(1) {
            let t = Instant::now();
            for _ in 0..batch {
                black_box(p.patch_once()?);
            }
            // CAST: batch is small; ns as f64 is exact enough for a benchmark.
            times.push(t.elapsed().as_nanos() as f64 / batch as f64);
        }
        times.sort_by(f64::total_cmp);
        Ok(times.get(times.len() / 2).copied().unwrap_or(f64::NAN))
    }
}

mod device;
pub use device::{Dep, Graph, MultiGraph, graph_replay_submit_ns};

#[cfg(test)]
mod tests;
