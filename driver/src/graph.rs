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
//! On a device with an AQL compute queue the recording differs ([`aql`]): each launch is an
//! HSA kernel dispatch packet, the rest of the compute part PM4 bodies between them, and a
//! replay copies them into the AQL ring (one slot per packet) after patching them in host
//! memory; everything else above holds as written.
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

pub mod aql;
mod builder;

#[allow(unused_imports)]
pub use builder::*;

pub use aql::{AqlItem, AqlLayout, KernelObject};

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
    /// For an AQL queue ([`GraphBuilder::encode_aql`]): the compute part as PM4 bodies and
    /// kernel dispatch packets; the PM4 list then holds no dispatch.
    pub aql: Option<AqlLayout>,
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
    /// targets (`pm4`, `sdma`, `kernargs`: the bound copies or plain memory; for an AQL
    /// encoding the first is [`AqlLayout::image`], after which [`AqlLayout::set_dimensions`]
    /// brings the packets' `setup` up to date). Returns the dwords written; on error nothing
    /// was written.
    pub fn apply<M: PatchTarget>(
        &mut self,
        values: &[Option<Value>],
        targets: &mut [M; 3],
    ) -> Result<usize, GraphError> {
        Ok(self.table.apply(values, targets)?)
    }
}

mod device;
pub use device::{Dep, Graph, MultiGraph};

#[cfg(test)]
mod tests;
