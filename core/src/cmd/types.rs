//! Errors, patch targets, and the typed handles builders return.

use super::*;

/// Why a builder or a patch refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CmdError {
    /// The encoder refused (list too full for this command, or a value does not fit).
    Encode(EncodeError),
    /// The list already records as many commands (or SDMA packets) as it can hold.
    TooManyCommands {
        /// Its capacity.
        capacity: usize,
    },
    /// An SDMA list cannot record this many packets (a copy splits into one per 4 MiB).
    TooManyPackets {
        /// Packets the list would hold with this command.
        needed: usize,
        /// Its packet capacity.
        capacity: usize,
    },
    /// The handle's offset is outside the patched memory.
    OutOfRange {
        /// Dword offset the patch needs.
        offset: usize,
        /// Dwords in the target.
        len: usize,
    },
    /// The dword at the handle's offset is not the packet the handle names.
    WrongPacket {
        /// Dword offset of the mismatch.
        offset: usize,
        /// What the handle expected.
        expected: &'static str,
        /// The dword found.
        found: u32,
    },
}

impl fmt::Display for CmdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CmdError::Encode(e) => write!(f, "{e}"),
            CmdError::TooManyCommands { capacity } => {
                write!(
                    f,
                    "command list already holds its capacity of {capacity} entries"
                )
            }
            CmdError::TooManyPackets { needed, capacity } => write!(
                f,
                "SDMA list would hold {needed} packets but records at most {capacity}"
            ),
            CmdError::OutOfRange { offset, len } => {
                write!(
                    f,
                    "patch at dword {offset} is outside the {len}-dword command list"
                )
            }
            CmdError::WrongPacket {
                offset,
                expected,
                found,
            } => write!(
                f,
                "dword {offset} is {found:#010x}, not the {expected} header this handle names"
            ),
        }
    }
}

impl core::error::Error for CmdError {}

impl From<EncodeError> for CmdError {
    fn from(e: EncodeError) -> Self {
        CmdError::Encode(e)
    }
}

/// Memory a command list lives in, as patches see it.
pub trait PatchTarget {
    /// Dwords in the target.
    fn dword_len(&self) -> usize;
    /// The dword at `i`.
    fn load(&self, i: usize) -> Option<u32>;
    /// Stores `v` at `i`; `None` when `i` is out of range.
    fn store(&mut self, i: usize, v: u32) -> Option<()>;
    /// Stores `vals` from `at` on; `None` (having stored nothing) when they do not all fit.
    fn store_all(&mut self, at: usize, vals: &[u32]) -> Option<()> {
        if at.checked_add(vals.len())? > self.dword_len() {
            return None;
        }
        for (i, v) in vals.iter().enumerate() {
            self.store(at + i, *v)?;
        }
        Some(())
    }
}

impl PatchTarget for [u32] {
    #[inline(always)]
    fn dword_len(&self) -> usize {
        self.len()
    }
    #[inline(always)]
    fn load(&self, i: usize) -> Option<u32> {
        self.get(i).copied()
    }
    #[inline(always)]
    fn store(&mut self, i: usize, v: u32) -> Option<()> {
        *self.get_mut(i)? = v;
        Some(())
    }
    #[inline(always)]
    fn store_all(&mut self, at: usize, vals: &[u32]) -> Option<()> {
        self.get_mut(at..at.checked_add(vals.len())?)?
            .copy_from_slice(vals);
        Some(())
    }
}

/// GPU-visible memory shared with the device: relaxed loads and stores. Patch only what the GPU
/// is not executing (wait for the last submission that used it), and publish with the release
/// store of the ring's write pointer that submits it.
impl PatchTarget for &[AtomicU32] {
    #[inline(always)]
    fn dword_len(&self) -> usize {
        self.len()
    }
    #[inline(always)]
    fn load(&self, i: usize) -> Option<u32> {
        Some(self.get(i)?.load(Ordering::Relaxed))
    }
    #[inline(always)]
    fn store(&mut self, i: usize, v: u32) -> Option<()> {
        self.get(i)?.store(v, Ordering::Relaxed);
        Some(())
    }
    #[inline(always)]
    fn store_all(&mut self, at: usize, vals: &[u32]) -> Option<()> {
        let dst = self.get(at..at.checked_add(vals.len())?)?;
        for (d, v) in dst.iter().zip(vals) {
            d.store(*v, Ordering::Relaxed);
        }
        Some(())
    }
}

/// Which engine a command was built for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Engine {
    /// PM4 compute queue.
    Pm4,
    /// SDMA copy queue.
    Sdma,
}

/// Handle of a `wait` command.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct WaitCmd {
    /// Dword offset of the command in its list.
    pub offset: u32,
    /// Engine.
    pub engine: Engine,
}

/// Handle of a `signal` command.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SignalCmd {
    /// Dword offset of the command in its list.
    pub offset: u32,
    /// Dwords of the command (PM4: 8, or 16 with the mailbox RELEASE_MEM; SDMA 4 or 10).
    pub dwords: u32,
    /// Engine.
    pub engine: Engine,
}

/// Handle of an `exec` command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExecCmd {
    /// Dword offset of the command in its list.
    pub offset: u32,
    /// Where its patchable fields are.
    pub layout: pm4::ExecLayout,
    /// Kernargs address and dispatch-packet facts, for kernels with a dispatch pointer.
    pub dispatch: Option<(GpuVa, DispatchInfo)>,
}

/// Handle of a `timestamp` command.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TimestampCmd {
    /// Dword offset.
    pub offset: u32,
    /// Engine.
    pub engine: Engine,
}

/// Handle of a `memory_barrier` command.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BarrierCmd {
    /// Dword offset.
    pub offset: u32,
}

/// Handle of an `indirect_buffer` command.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct IbCmd {
    /// Dword offset.
    pub offset: u32,
}

/// Handle of an SDMA `copy` command.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CopyCmd {
    /// Dword offset.
    pub offset: u32,
    /// Dwords of the command.
    pub dwords: u32,
}

/// A new dispatch packet to write at `addr` (inside kernargs) after [`patch::update_exec`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DispatchWrite {
    /// Where the packet lives (`kernargs + packet_offset`).
    pub addr: GpuVa,
    /// The packet.
    pub packet: DispatchPacket,
}
