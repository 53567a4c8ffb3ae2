//! The engines' shared vocabulary: what a queue is (kind, descriptor, id), its state and
//! faults, the modes, and what executing one packet yields (`Cause`, `Exec`) against the
//! queue's registers (`Regs`), where a packet came from (`Site`). The lowest layer of the
//! engine: it names no sibling. The run loop is `queue.rs`, the packets `pm4.rs`, `sdma.rs`,
//! `dispatch.rs`, the in-flight dispatches `flight.rs`.

pub use crate::state::QueueKind;
use crate::vm::VmFault;
use core::fmt;
use hcq_core::arch::ArchInfo;
use hcq_core::pm4::DispatchDirect;
use hcq_core::sel::CompareFunction;

/// Where a packet came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Site {
    /// The ring, at this monotonic ring pointer (queue units: PM4 dwords, SDMA bytes).
    Ring(u64),
    /// An indirect buffer at `base`, dword `index` inside it, `depth` levels below the ring.
    Ib {
        /// IB base address.
        base: u64,
        /// Dword index inside the IB.
        index: u32,
        /// Nesting depth (1 = called from the ring).
        depth: u8,
    },
}

impl fmt::Display for Site {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Site::Ring(p) => write!(f, "ring@{p:#x}"),
            Site::Ib { base, index, depth } => write!(f, "ib{depth}@{base:#x}+dw{index}"),
        }
    }
}

/// An engine's queue: where its ring, pointers and doorbell are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueDesc {
    /// PM4 or SDMA.
    pub kind: QueueKind,
    /// The GPU family's facts (register offsets, packet layouts, HDP registers).
    pub arch: &'static ArchInfo,
    /// On gfx9: whether the GPU is gfx940+ (gfx942) rather than gfx90a, where the two decode
    /// some instruction words differently ([`crate::isa::Launch::gfx940`]). Other families: true.
    pub gfx940: bool,
    /// GPU VA of the ring.
    pub ring_base: u64,
    /// Ring size in bytes (a power of two, at least 64).
    pub ring_size: u64,
    /// GPU VA where the engine writes the read pointer back (64-bit, monotonic, queue units).
    pub rptr_addr: u64,
    /// GPU VA of the write pointer the driver maintains (informational: the engine follows the
    /// doorbell, as gfx9+ hardware does).
    pub wptr_addr: u64,
    /// Byte offset of the queue's 64-bit doorbell in the process doorbell slice.
    pub doorbell_offset: u64,
    /// Initial read pointer (queue units; usually 0).
    pub start: u64,
}

/// Identifies a queue in an [`Engines`](super::Engines) (the caller chooses it, e.g. KFD's queue id).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct QueueId(pub u32);

/// What a blocked WAIT_REG_MEM / POLL_REGMEM is waiting for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WaitInfo {
    /// Polled address.
    pub addr: u64,
    /// Compare function (0 always, 1 <, 2 <=, 3 ==, 4 !=, 5 >=, 6 >).
    pub function: u32,
    /// Reference value.
    pub reference: u32,
    /// Mask applied to the memory value.
    pub mask: u32,
    /// Memory value at the last poll.
    pub seen: u32,
}

/// `(value & mask) FUNCTION reference` with the WAIT_REG_MEM/POLL_REGMEM function codes;
/// `None` for the reserved code 7.
pub(crate) fn compare(function: u32, value: u32, mask: u32, reference: u32) -> Option<bool> {
    match CompareFunction::from_raw(function) {
        Ok(f) => Some(f.holds(value, mask, reference)),
        Err(_) => None,
    }
}

/// Why a queue stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueFaultKind {
    /// A GPU memory access outside GPU-mapped memory (MEMORY event).
    Vm(VmFault),
    /// An unknown or malformed packet, a bad pointer, or a kernel failure (HW_EXCEPTION event).
    Hw,
}

/// A stopped queue: where and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueueFault {
    /// The packet's place (ring pointer, or IB address and dword index).
    pub site: Site,
    /// The kind.
    pub kind: QueueFaultKind,
    /// The message (names the queue, the place and the decoder's or checker's complaint).
    pub message: String,
}

/// A queue's state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum QueueState {
    /// Runnable (nothing to do or more to do).
    Idle,
    /// Blocked on a memory wait.
    Waiting(WaitInfo),
    /// Stopped for good.
    Faulted(QueueFault),
}

/// A snapshot of one queue's engine: where it is and what state it is in. (What KFD knows
/// of the queue, its ring, pointers' addresses and doorbell, is [`crate::QueueInfo`].)
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueueStatus {
    /// The queue.
    pub id: QueueId,
    /// Its GPU.
    pub gpu_id: u32,
    /// PM4 or SDMA.
    pub kind: QueueKind,
    /// Read pointer (queue units).
    pub rptr: u64,
    /// Doorbell value (queue units), if the bus has the doorbell.
    pub doorbell: Option<u64>,
    /// State.
    pub state: QueueState,
    /// Hung by fault injection.
    pub hung: bool,
    /// Packets executed so far.
    pub executed: u64,
}

/// What happens to the interrupts a queue raises (fault injection).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum InterruptPolicy {
    /// Delivered at once.
    #[default]
    Deliver,
    /// Delivered after this many further [`Engines::step`](super::Engines::step) rounds.
    Delay(u32),
    /// Never delivered.
    Drop,
}

/// Why a queue could not be added.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum EngineError {
    /// A queue with this id exists.
    Exists(QueueId),
    /// The ring size is not a power of two of at least 64 bytes.
    BadRingSize(u64),
    /// The ring base is not 256-byte aligned.
    BadRingBase(u64),
    /// No such queue.
    NoQueue(QueueId),
    /// The engine thread (threaded mode) could not be started: the OS error.
    ThreadSpawn(String),
}

impl fmt::Display for EngineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EngineError::Exists(q) => write!(f, "queue {} already has an engine", q.0),
            EngineError::BadRingSize(s) => write!(
                f,
                "ring size {s:#x} is not a power of two of at least 64 bytes"
            ),
            EngineError::BadRingBase(b) => {
                write!(f, "ring base {b:#x} is not 256-byte aligned")
            }
            EngineError::NoQueue(q) => write!(f, "no engine for queue {}", q.0),
            EngineError::ThreadSpawn(e) => write!(
                f,
                "cannot start the simulated GPU's engine thread ({e}); threaded mode needs one"
            ),
        }
    }
}

impl core::error::Error for EngineError {}

/// SH register window (SET_SH_REG offsets 0..0x400).
pub(crate) const SH_REGS: usize = 0x400;
/// UCONFIG register window (SET_UCONFIG_REG offsets 0..0x4000).
pub(crate) const UCONFIG_REGS: usize = 0x4000;

/// Why a packet could not complete.
#[derive(Debug)]
pub(crate) enum Cause {
    /// A GPU memory access faulted.
    Vm(VmFault),
    /// A kernel's memory access faulted: the fault and the instruction's place (`at kernel
    /// offset 0x.. (program address 0x..), wave W of workgroup [x, y, z]`).
    VmAt(VmFault, String),
    /// The packet is unknown, malformed or unsupported; a kernel failed.
    Hw(String),
}

impl From<VmFault> for Cause {
    fn from(v: VmFault) -> Self {
        Cause::Vm(v)
    }
}

/// What executing one packet did.
#[derive(Debug)]
pub(crate) enum Exec {
    /// Completed.
    Done,
    /// Blocked on memory; retried on the next step.
    Wait(WaitInfo),
    /// Run the indirect buffer at `base` (`dwords` long); `chain` replaces the current IB.
    Ib { base: u64, dwords: u32, chain: bool },
    /// A dispatch passed the CP's checks and is issued (asynchronous mode): it lands later.
    Dispatch(DispatchDirect),
}

/// The queue's registers (PM4 register file; SDMA has none).
/// An AQL AMD_AQL_FORMAT_PM4_IB packet whose indirect buffer the CP is executing: finished
/// (release fence, completion signal, header reset, read index) when the IB returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct AqlPending {
    /// GPU VA of the packet's slot.
    pub(crate) slot: u64,
    /// Its first dword (header | vendor header << 16).
    pub(crate) word0: u32,
    /// `completion_signal` (0: none).
    pub(crate) signal: u64,
    /// The GPU clock when the packet was launched (`start_ts` of a profiled signal).
    pub(crate) start: u64,
}

#[derive(Clone)]
pub(crate) struct Regs {
    pub(crate) sh: Box<[u32]>,
    pub(crate) uconfig: Box<[u32]>,
}

impl Regs {
    pub(crate) fn new(kind: QueueKind) -> Self {
        let (sh, uc) = match kind {
            QueueKind::Compute | QueueKind::Aql => (SH_REGS, UCONFIG_REGS),
            QueueKind::Sdma => (0, 0),
        };
        Self {
            sh: vec![0; sh].into_boxed_slice(),
            uconfig: vec![0; uc].into_boxed_slice(),
        }
    }

    /// The SH register at SET_SH_REG offset `off` (0 outside the window).
    pub(crate) fn sh(&self, off: u32) -> u32 {
        usize::try_from(off)
            .ok()
            .and_then(|o| self.sh.get(o))
            .copied()
            .unwrap_or(0)
    }
}
