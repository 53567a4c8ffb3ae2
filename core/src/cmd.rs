//! Command lists (the seed's `HWQueue`): fixed-capacity dword storage plus where each command
//! starts, builders returning typed handles, and patch operations that verify the packet they
//! patch.
//!
//! [`Pm4List`] and [`SdmaList`] own their storage (`[u32; N]` inline, no allocation). The patch
//! functions in [`patch`] are generic over [`PatchTarget`], implemented for `[u32]` and for a
//! shared view of GPU memory (`&[AtomicU32]`), so a list copied into GPU memory (a bound IB)
//! is patched by the same code with the same handles (offsets are relative to the list start).
//!
//! Every builder either appends a whole command or leaves the list unchanged and returns an
//! error. Handles are checked when used: the offset must be inside the target and the header
//! at that offset must be the packet the handle names.

use core::fmt;

use crate::arch::{ArchInfo, GpuVa, hi32, lo32};
use crate::hsa::DispatchPacket;
use crate::packet::EncodeError;
use crate::pm4::{self, DispatchInfo, Pm4Header, Program};
use crate::sdma;
use crate::signal::SignalRef;
use crate::sync::atomic::{AtomicU32, Ordering};

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

/// Patch operations on any [`PatchTarget`] (a list's own storage or its copy in GPU memory).
pub mod patch {
    use super::*;

    fn idx(h: u32, add: usize) -> usize {
        // CAST: u32 -> usize is lossless on the 32/64-bit targets hcq supports.
        (h as usize).saturating_add(add)
    }

    fn expect<T: PatchTarget + ?Sized>(
        mem: &T,
        offset: usize,
        last: usize,
        expected_name: &'static str,
        ok: impl Fn(u32) -> bool,
    ) -> Result<(), CmdError> {
        let len = mem.dword_len();
        if last >= len {
            return Err(CmdError::OutOfRange { offset: last, len });
        }
        let found = mem
            .load(offset)
            .ok_or(CmdError::OutOfRange { offset, len })?;
        if ok(found) {
            Ok(())
        } else {
            Err(CmdError::WrongPacket {
                offset,
                expected: expected_name,
                found,
            })
        }
    }

    #[inline(always)]
    fn put<T: PatchTarget + ?Sized>(mem: &mut T, i: usize, v: u32) -> Result<(), CmdError> {
        let len = mem.dword_len();
        mem.store(i, v)
            .ok_or(CmdError::OutOfRange { offset: i, len })
    }

    #[inline(always)]
    fn put_all<T: PatchTarget + ?Sized>(mem: &mut T, i: usize, v: &[u32]) -> Result<(), CmdError> {
        let len = mem.dword_len();
        mem.store_all(i, v)
            .ok_or(CmdError::OutOfRange { offset: i, len })
    }

    /// The new dispatch packet; kept out of line so the common patch (no dispatch pointer) stays
    /// small enough to inline.
    #[inline(never)]
    pub(super) fn dispatch_write(
        info: &DispatchInfo,
        kernargs: GpuVa,
        global: [u32; 3],
        local: [u32; 3],
    ) -> Result<DispatchWrite, CmdError> {
        Ok(DispatchWrite {
            addr: kernargs.offset(info.packet_offset),
            packet: pm4::dispatch_packet(info, kernargs, global, local)?,
        })
    }

    const WAIT_HDR: u32 = Pm4Header::packet3(pm4::op::WAIT_REG_MEM, 6).raw();
    const RELEASE_HDR: u32 = Pm4Header::packet3(pm4::op::RELEASE_MEM, 7).raw();
    const DISPATCH_HDR: u32 = Pm4Header::packet3(pm4::op::DISPATCH_DIRECT, 4).raw();
    const START_HDR: u32 = Pm4Header::packet3(pm4::op::SET_SH_REG, 9).raw();

    fn sdma_op(h: u32) -> u32 {
        sdma::SdmaHeader(h).get(sdma::SdmaHeader::OP)
    }

    /// The seed's `update_exec`: new launch dims into NUM_THREAD_X..Z and DISPATCH_DIRECT.
    /// Returns the dispatch packet to write into kernargs when the kernel has one.
    #[inline]
    pub fn update_exec<T: PatchTarget + ?Sized>(
        mem: &mut T,
        h: &ExecCmd,
        global: [u32; 3],
        local: [u32; 3],
    ) -> Result<Option<DispatchWrite>, CmdError> {
        let d = idx(h.offset, h.layout.dispatch_at);
        let s = idx(h.offset, h.layout.start_at);
        expect(mem, d, d + 3, "DISPATCH_DIRECT", |x| x == DISPATCH_HDR)?;
        expect(mem, s, s + 8, "SET_SH_REG(COMPUTE_START_X)", |x| {
            x == START_HDR
        })?;
        // Checked before anything is written; the packet is built after the stores, so no
        // value has to live across its construction.
        if h.dispatch.is_some() {
            pm4::check_dispatch_dims(global, local)?;
        }
        // In range: NUM_THREAD_X..Z sit inside the COMPUTE_START packet checked above.
        let lo = idx(h.offset, h.layout.local_at);
        // Fresh arrays: `local` and `global` may live in memory, and a copy straight from there
        // reads them with wider loads than they were written with (a store-forwarding stall).
        let ([lx, ly, lz], [gx, gy, gz]) = (local, global);
        put_all(mem, lo, &[lx, ly, lz])?;
        put_all(mem, d + 1, &[gx, gy, gz])?;
        Ok(h.dispatch.as_ref().map(|(kernargs, info)| DispatchWrite {
            addr: kernargs.offset(info.packet_offset),
            packet: pm4::dispatch_packet_checked(info, *kernargs, global, local),
        }))
    }

    /// The seed's `update_wait`: new signal address and/or value (PM4 or SDMA).
    #[inline]
    pub fn update_wait<T: PatchTarget + ?Sized>(
        mem: &mut T,
        h: &WaitCmd,
        signal: Option<&SignalRef>,
        value: Option<u32>,
    ) -> Result<(), CmdError> {
        let o = idx(h.offset, 0);
        // PM4: hdr, ctl, lo, hi, ref; SDMA: hdr, lo, hi, ref.
        let (addr_at, value_at) = match h.engine {
            Engine::Pm4 => {
                expect(mem, o, o + 6, "WAIT_REG_MEM", |x| x == WAIT_HDR)?;
                (o + 2, o + 4)
            }
            Engine::Sdma => {
                expect(mem, o, o + 5, "SDMA POLL_REGMEM", |x| {
                    sdma_op(x) == sdma::op::POLL_REGMEM
                })?;
                (o + 1, o + 3)
            }
        };
        if let Some(s) = signal {
            let a = s.value_addr();
            put_all(mem, addr_at, &[lo32(a), hi32(a)])?;
        }
        if let Some(v) = value {
            put(mem, value_at, v)?;
        }
        Ok(())
    }

    /// The seed's `update_signal`: new signal address (PM4: also the mailbox part when the
    /// command has one) and/or value. PM4 writes 64-bit values; SDMA FENCE takes the low 32
    /// bits (an SDMA value above `u32::MAX` is refused).
    #[inline]
    pub fn update_signal<T: PatchTarget + ?Sized>(
        mem: &mut T,
        h: &SignalCmd,
        signal: Option<&SignalRef>,
        value: Option<u64>,
    ) -> Result<(), CmdError> {
        let o = idx(h.offset, 0);
        match h.engine {
            Engine::Pm4 => {
                let mailbox = h.dwords > 8;
                let last = if mailbox { o + 15 } else { o + 7 };
                expect(mem, o, last, "RELEASE_MEM", |x| x == RELEASE_HDR)?;
                if mailbox {
                    expect(mem, o + 8, last, "RELEASE_MEM (mailbox)", |x| {
                        x == RELEASE_HDR
                    })?;
                }
                if let Some(s) = signal {
                    let a = s.value_addr();
                    put_all(mem, o + 3, &[lo32(a), hi32(a)])?;
                    if mailbox {
                        let m = s.event_mailbox_ptr;
                        put_all(mem, o + 11, &[lo32(m), hi32(m), s.event_id, 0, s.event_id])?;
                    }
                }
                if let Some(v) = value {
                    put_all(mem, o + 5, &[lo32(v), hi32(v)])?;
                }
            }
            Engine::Sdma => {
                expect(mem, o, o + 3, "SDMA FENCE", |x| {
                    sdma_op(x) == sdma::op::FENCE
                })?;
                let v32 = match value {
                    Some(v) => Some(u32::try_from(v).map_err(|_| {
                        CmdError::Encode(EncodeError::ValueTooLarge {
                            field: "SDMA signal value",
                            value: v,
                            max: u32::MAX.into(),
                        })
                    })?),
                    None => None,
                };
                if let Some(s) = signal {
                    let a = s.value_addr();
                    put_all(mem, o + 1, &[lo32(a), hi32(a)])?;
                }
                if let Some(v) = v32 {
                    put(mem, o + 3, v)?;
                }
            }
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------

/// Shared storage of both list kinds.
#[derive(Clone)]
struct Store<const N: usize, const C: usize> {
    buf: [u32; N],
    len: usize,
    cmds: heapless::Vec<u32, C>,
}

impl<const N: usize, const C: usize> Store<N, C> {
    const fn new() -> Self {
        Self {
            buf: [0; N],
            len: 0,
            cmds: heapless::Vec::new(),
        }
    }

    /// Runs `enc` on the free tail and records a command; the list is unchanged on error.
    #[inline(always)]
    fn push(
        &mut self,
        enc: impl FnOnce(&mut [u32]) -> Result<usize, EncodeError>,
    ) -> Result<u32, CmdError> {
        if self.cmds.is_full() {
            return Err(CmdError::TooManyCommands { capacity: C });
        }
        let start = self.len;
        let tail = self.buf.get_mut(start..).unwrap_or_default();
        let n = enc(tail)?;
        // CAST: start < N; lists longer than 2^32 dwords do not fit in memory the GPU maps
        // for a command list, and `u32::try_from` refuses them anyway.
        let off = u32::try_from(start).map_err(|_| CmdError::OutOfRange {
            offset: start,
            len: N,
        })?;
        self.cmds
            .push(off)
            .map_err(|_| CmdError::TooManyCommands { capacity: C })?;
        self.len = start + n;
        Ok(off)
    }

    fn dwords(&self) -> &[u32] {
        self.buf.get(..self.len).unwrap_or_default()
    }
}

/// A PM4 command list of at most `N` dwords and `C` commands.
#[derive(Clone)]
pub struct Pm4List<const N: usize, const C: usize = 256> {
    arch: &'static ArchInfo,
    s: Store<N, C>,
}

impl<const N: usize, const C: usize> fmt::Debug for Pm4List<N, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pm4List")
            .field("family", &self.arch.family)
            .field("dwords", &self.s.len)
            .field("commands", &self.s.cmds.len())
            .finish()
    }
}

impl<const N: usize, const C: usize> Pm4List<N, C> {
    /// An empty list for `arch`.
    #[must_use]
    #[inline]
    pub const fn new(arch: &'static ArchInfo) -> Self {
        Self {
            arch,
            s: Store::new(),
        }
    }

    /// The family table the list encodes for.
    #[must_use]
    #[inline]
    pub const fn arch(&self) -> &'static ArchInfo {
        self.arch
    }

    /// The encoded dwords (what to copy into the ring or an IB).
    #[must_use]
    #[inline]
    pub fn as_dwords(&self) -> &[u32] {
        self.s.dwords()
    }

    /// Dword offset of each command.
    #[must_use]
    #[inline]
    pub fn cmd_offsets(&self) -> &[u32] {
        &self.s.cmds
    }

    /// Number of commands.
    #[must_use]
    #[inline]
    pub fn len(&self) -> usize {
        self.s.cmds.len()
    }

    /// Whether the list is empty.
    #[must_use]
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.s.cmds.is_empty()
    }

    /// Forgets every command.
    #[inline]
    pub fn clear(&mut self) {
        self.s.len = 0;
        self.s.cmds.clear();
    }

    /// The seed's `memory_barrier`.
    #[inline]
    pub fn memory_barrier(&mut self) -> Result<BarrierCmd, CmdError> {
        let arch = self.arch;
        let offset = self.s.push(|b| pm4::memory_barrier(b, arch))?;
        Ok(BarrierCmd { offset })
    }

    /// The seed's `exec`. For a kernel with a dispatch pointer, write the returned
    /// [`DispatchWrite`] into kernargs memory.
    #[inline]
    pub fn exec(
        &mut self,
        prog: &Program,
        kernargs: GpuVa,
        global: [u32; 3],
        local: [u32; 3],
    ) -> Result<(ExecCmd, Option<DispatchWrite>), CmdError> {
        let dw = match &prog.dispatch {
            Some(info) => Some(patch::dispatch_write(info, kernargs, global, local)?),
            None => None,
        };
        let arch = self.arch;
        let offset = self
            .s
            .push(|b| pm4::exec(b, arch, prog, kernargs, global, local))?;
        let h = ExecCmd {
            offset,
            layout: pm4::exec_layout(arch, prog),
            dispatch: prog.dispatch.map(|d| (kernargs, d)),
        };
        Ok((h, dw))
    }

    /// The seed's `wait`.
    #[inline]
    pub fn wait(&mut self, signal: &SignalRef, value: u32) -> Result<WaitCmd, CmdError> {
        let offset = self.s.push(|b| pm4::wait(b, signal, value))?;
        Ok(WaitCmd {
            offset,
            engine: Engine::Pm4,
        })
    }

    /// The seed's `signal`.
    #[inline]
    pub fn signal(&mut self, signal: &SignalRef, value: u64) -> Result<SignalCmd, CmdError> {
        let arch = self.arch;
        let offset = self.s.push(|b| pm4::signal(b, arch, signal, value))?;
        Ok(SignalCmd {
            offset,
            // CAST: 8 or 16.
            dwords: pm4::signal_dwords(signal) as u32,
            engine: Engine::Pm4,
        })
    }

    /// The seed's `timestamp`.
    #[inline]
    pub fn timestamp(&mut self, signal: &SignalRef) -> Result<TimestampCmd, CmdError> {
        let arch = self.arch;
        let offset = self.s.push(|b| pm4::timestamp(b, arch, signal))?;
        Ok(TimestampCmd {
            offset,
            engine: Engine::Pm4,
        })
    }

    /// An INDIRECT_BUFFER to `size_dwords` dwords at `addr`.
    #[inline]
    pub fn indirect_buffer(&mut self, addr: GpuVa, size_dwords: u32) -> Result<IbCmd, CmdError> {
        let offset = self
            .s
            .push(|b| pm4::indirect_buffer(b, addr, size_dwords))?;
        Ok(IbCmd { offset })
    }

    /// [`patch::update_exec`] on this list.
    #[inline]
    pub fn update_exec(
        &mut self,
        h: &ExecCmd,
        global: [u32; 3],
        local: [u32; 3],
    ) -> Result<Option<DispatchWrite>, CmdError> {
        let len = self.s.len;
        patch::update_exec(
            self.s.buf.get_mut(..len).unwrap_or_default(),
            h,
            global,
            local,
        )
    }

    /// [`patch::update_wait`] on this list.
    #[inline]
    pub fn update_wait(
        &mut self,
        h: &WaitCmd,
        signal: Option<&SignalRef>,
        value: Option<u32>,
    ) -> Result<(), CmdError> {
        let len = self.s.len;
        patch::update_wait(
            self.s.buf.get_mut(..len).unwrap_or_default(),
            h,
            signal,
            value,
        )
    }

    /// [`patch::update_signal`] on this list.
    #[inline]
    pub fn update_signal(
        &mut self,
        h: &SignalCmd,
        signal: Option<&SignalRef>,
        value: Option<u64>,
    ) -> Result<(), CmdError> {
        let len = self.s.len;
        patch::update_signal(
            self.s.buf.get_mut(..len).unwrap_or_default(),
            h,
            signal,
            value,
        )
    }
}

const _: () = assert!(sdma::POLL_REGMEM_DWORDS == 6 && sdma::TIMESTAMP_DWORDS == 3);

/// An SDMA command list of at most `N` dwords, `C` commands and `P` packets; it records each
/// packet's size so a ring never splits a packet.
#[derive(Clone)]
pub struct SdmaList<const N: usize, const C: usize = 256, const P: usize = 1024> {
    arch: &'static ArchInfo,
    s: Store<N, C>,
    sizes: heapless::Vec<u16, P>,
}

impl<const N: usize, const C: usize, const P: usize> fmt::Debug for SdmaList<N, C, P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SdmaList")
            .field("family", &self.arch.family)
            .field("dwords", &self.s.len)
            .field("commands", &self.s.cmds.len())
            .field("packets", &self.sizes.len())
            .finish()
    }
}

impl<const N: usize, const C: usize, const P: usize> SdmaList<N, C, P> {
    /// An empty list for `arch`.
    #[must_use]
    #[inline]
    pub const fn new(arch: &'static ArchInfo) -> Self {
        Self {
            arch,
            s: Store::new(),
            sizes: heapless::Vec::new(),
        }
    }

    /// The encoded dwords.
    #[must_use]
    #[inline]
    pub fn as_dwords(&self) -> &[u32] {
        self.s.dwords()
    }

    /// Dword offset of each command.
    #[must_use]
    #[inline]
    pub fn cmd_offsets(&self) -> &[u32] {
        &self.s.cmds
    }

    /// Size in dwords of every packet, in order (sums to `as_dwords().len()`).
    #[must_use]
    #[inline]
    pub fn packet_sizes(&self) -> &[u16] {
        &self.sizes
    }

    /// Iterator over the packets as dword slices.
    #[inline]
    pub fn packets(&self) -> impl Iterator<Item = &[u32]> + '_ {
        let mut rest = self.as_dwords();
        self.sizes.iter().map(move |&n| {
            let (a, b) = rest.split_at_checked(usize::from(n)).unwrap_or((rest, &[]));
            rest = b;
            a
        })
    }

    /// Number of commands.
    #[must_use]
    #[inline]
    pub fn len(&self) -> usize {
        self.s.cmds.len()
    }

    /// Whether the list is empty.
    #[must_use]
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.s.cmds.is_empty()
    }

    /// Forgets every command.
    #[inline]
    pub fn clear(&mut self) {
        self.s.len = 0;
        self.s.cmds.clear();
        self.sizes.clear();
    }

    /// Appends a command whose packet sizes are `sizes`, all or nothing.
    fn push_cmd(
        &mut self,
        sizes: impl Iterator<Item = u16> + Clone,
        enc: impl FnOnce(&mut [u32]) -> Result<usize, EncodeError>,
    ) -> Result<u32, CmdError> {
        let count = sizes.clone().count();
        let needed = self.sizes.len().saturating_add(count);
        if needed > P {
            return Err(CmdError::TooManyPackets {
                needed,
                capacity: P,
            });
        }
        let off = self.s.push(enc)?;
        for sz in sizes {
            // PANIC-free: capacity checked above; an error here cannot happen.
            self.sizes.push(sz).map_err(|_| CmdError::TooManyPackets {
                needed,
                capacity: P,
            })?;
        }
        Ok(off)
    }

    /// The seed's `copy` (GCR invalidate, COPY_LINEAR per `arch.sdma_max_copy_bytes`, GCR
    /// write-back).
    #[inline]
    pub fn copy(&mut self, dst: GpuVa, src: GpuVa, size: u64) -> Result<CopyCmd, CmdError> {
        self.copy_with(&sdma::CopyOptions::seed(self.arch), dst, src, size)
    }

    /// `copy` with explicit options.
    #[inline]
    pub fn copy_with(
        &mut self,
        opts: &sdma::CopyOptions,
        dst: GpuVa,
        src: GpuVa,
        size: u64,
    ) -> Result<CopyCmd, CmdError> {
        let chunks = sdma::copy_chunks(size, opts.max_copy_bytes);
        let chunks = usize::try_from(chunks).unwrap_or(usize::MAX);
        if chunks > P {
            return Err(CmdError::TooManyPackets {
                needed: self.sizes.len().saturating_add(chunks).saturating_add(2),
                capacity: P,
            });
        }
        // CAST: packet sizes are small constants (5 and 7).
        let g = sdma::GCR_REQ_DWORDS as u16;
        let c = sdma::COPY_LINEAR_DWORDS as u16;
        let sizes = core::iter::once(g)
            .chain(core::iter::repeat_n(c, chunks))
            .chain(core::iter::once(g));
        let before = self.s.len;
        let offset = self.push_cmd(sizes, |b| sdma::copy_with(b, opts, dst, src, size))?;
        Ok(CopyCmd {
            offset,
            // CAST: bounded by N, and N dwords fit in memory.
            dwords: (self.s.len - before) as u32,
        })
    }

    /// The seed's `signal` (FENCE, plus mailbox FENCE + TRAP when the signal has an event).
    #[inline]
    pub fn signal(&mut self, signal: &SignalRef, value: u32) -> Result<SignalCmd, CmdError> {
        let arch = self.arch;
        // CAST: packet sizes are small constants (4 and 2).
        let f = sdma::FENCE_DWORDS as u16;
        let t = sdma::TRAP_DWORDS as u16;
        let offset = if signal.has_event() {
            self.push_cmd([f, f, t].into_iter(), |b| {
                sdma::signal(b, arch, signal, value)
            })?
        } else {
            self.push_cmd(core::iter::once(f), |b| {
                sdma::signal(b, arch, signal, value)
            })?
        };
        Ok(SignalCmd {
            offset,
            // CAST: 4 or 10.
            dwords: sdma::signal_dwords(signal) as u32,
            engine: Engine::Sdma,
        })
    }

    /// The seed's `wait`.
    #[inline]
    pub fn wait(&mut self, signal: &SignalRef, value: u32) -> Result<WaitCmd, CmdError> {
        let offset = self.push_cmd(core::iter::once(6u16), |b| sdma::wait(b, signal, value))?;
        Ok(WaitCmd {
            offset,
            engine: Engine::Sdma,
        })
    }

    /// The seed's `timestamp`.
    #[inline]
    pub fn timestamp(&mut self, signal: &SignalRef) -> Result<TimestampCmd, CmdError> {
        let offset = self.push_cmd(core::iter::once(3u16), |b| sdma::timestamp(b, signal))?;
        Ok(TimestampCmd {
            offset,
            engine: Engine::Sdma,
        })
    }

    /// [`patch::update_wait`] on this list.
    #[inline]
    pub fn update_wait(
        &mut self,
        h: &WaitCmd,
        signal: Option<&SignalRef>,
        value: Option<u32>,
    ) -> Result<(), CmdError> {
        let len = self.s.len;
        patch::update_wait(
            self.s.buf.get_mut(..len).unwrap_or_default(),
            h,
            signal,
            value,
        )
    }

    /// [`patch::update_signal`] on this list (value must fit in 32 bits).
    #[inline]
    pub fn update_signal(
        &mut self,
        h: &SignalCmd,
        signal: Option<&SignalRef>,
        value: Option<u32>,
    ) -> Result<(), CmdError> {
        let len = self.s.len;
        patch::update_signal(
            self.s.buf.get_mut(..len).unwrap_or_default(),
            h,
            signal,
            value.map(u64::from),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arch::{GFX9, GFX11};
    use crate::rsrc::ScratchRsrc;

    fn sig(a: u64, mailbox: bool) -> SignalRef {
        SignalRef {
            addr: a,
            event_mailbox_ptr: if mailbox { 0x7fff_0000_0010 } else { 0 },
            event_id: if mailbox { 42 } else { 0 },
        }
    }

    fn prog() -> Program {
        Program {
            prog_addr: GpuVa(0x1000_0000),
            scratch_addr: GpuVa(0x2000_0000),
            tmpring_size: 1,
            rsrc1: 2,
            rsrc2: 3,
            dispatch: None,
            private_segment_buffer: None,
            flat_scratch_init: None,
        }
    }

    #[test]
    fn launch_is_105_dwords_and_patches() {
        let mut l: Pm4List<256, 8> = Pm4List::new(&GFX11);
        let w = l.wait(&sig(0x1000, false), 1).unwrap();
        l.memory_barrier().unwrap();
        let (e, dw) = l
            .exec(&prog(), GpuVa(0x3000), [1, 2, 3], [4, 5, 6])
            .unwrap();
        assert!(dw.is_none());
        let s = l.signal(&sig(0x2000, true), 2).unwrap();
        assert_eq!(l.as_dwords().len(), 105);
        assert_eq!(l.cmd_offsets(), &[0, 7, 22, 89]);

        l.update_wait(&w, Some(&sig(0xAB00, false)), Some(9))
            .unwrap();
        l.update_exec(&e, [7, 8, 9], [10, 11, 12]).unwrap();
        l.update_signal(&s, Some(&sig(0xCD00, true)), Some(0x1_0000_0003))
            .unwrap();

        // Same as building fresh with the new parameters.
        let mut f: Pm4List<256, 8> = Pm4List::new(&GFX11);
        f.wait(&sig(0xAB00, false), 9).unwrap();
        f.memory_barrier().unwrap();
        f.exec(&prog(), GpuVa(0x3000), [7, 8, 9], [10, 11, 12])
            .unwrap();
        f.signal(&sig(0xCD00, true), 0x1_0000_0003).unwrap();
        assert_eq!(l.as_dwords(), f.as_dwords());

        // Wrong handle kinds are refused.
        let bad = WaitCmd {
            offset: e.offset,
            engine: Engine::Pm4,
        };
        assert!(matches!(
            l.update_wait(&bad, None, Some(1)),
            Err(CmdError::WrongPacket { offset: 22, .. })
        ));
        let far = WaitCmd {
            offset: 200,
            engine: Engine::Pm4,
        };
        assert!(matches!(
            l.update_wait(&far, None, Some(1)),
            Err(CmdError::OutOfRange { .. })
        ));
    }

    #[test]
    fn atomic_view_patch() {
        let mut l: Pm4List<64, 4> = Pm4List::new(&GFX11);
        let w = l.wait(&sig(0x1000, false), 1).unwrap();
        let mem: heapless::Vec<AtomicU32, 64> =
            l.as_dwords().iter().map(|&d| AtomicU32::new(d)).collect();
        let mut view: &[AtomicU32] = &mem;
        patch::update_wait(&mut view, &w, None, Some(77)).unwrap();
        assert_eq!(mem[4].load(Ordering::Relaxed), 77);
    }

    #[test]
    fn overflow_leaves_list_unchanged() {
        let mut l: Pm4List<20, 8> = Pm4List::new(&GFX11);
        l.wait(&sig(0x1000, false), 1).unwrap();
        let before: heapless::Vec<u32, 20> = l.as_dwords().iter().copied().collect();
        assert!(matches!(
            l.memory_barrier(),
            Err(CmdError::Encode(EncodeError::BufferTooSmall { .. }))
        ));
        assert_eq!(l.as_dwords(), &before[..]);
        assert_eq!(l.len(), 1);
        let mut c: Pm4List<64, 1> = Pm4List::new(&GFX11);
        c.wait(&sig(0, false), 0).unwrap();
        assert_eq!(
            c.wait(&sig(0, false), 0),
            Err(CmdError::TooManyCommands { capacity: 1 })
        );
    }

    #[test]
    fn dispatch_packet_roundtrip() {
        let mut l: Pm4List<128, 4> = Pm4List::new(&GFX11);
        let p = Program {
            dispatch: Some(DispatchInfo {
                packet_offset: 0x40,
                group_segment_size: 512,
                private_segment_size: 16,
            }),
            ..prog()
        };
        let (e, dw) = l.exec(&p, GpuVa(0x10_0000), [2, 3, 4], [8, 1, 1]).unwrap();
        let dw = dw.unwrap();
        assert_eq!(dw.addr, GpuVa(0x10_0040));
        assert_eq!((dw.packet.grid_size_x, dw.packet.grid_size_y), (16, 3));
        assert_eq!(dw.packet.kernarg_address, 0x10_0000);
        let dw2 = l.update_exec(&e, [5, 5, 5], [2, 2, 2]).unwrap().unwrap();
        assert_eq!(
            (dw2.packet.grid_size_z, dw2.packet.workgroup_size_z),
            (10, 2)
        );
        assert_eq!(l.as_dwords()[e.layout.dispatch_at + 1], 5);
        // Dims a dispatch packet cannot carry are refused before anything is written.
        let n = l.as_dwords().len();
        let mut before = [0u32; 128];
        before[..n].copy_from_slice(l.as_dwords());
        for (g, lo) in [
            ([1, 1, 1], [0x1_0000, 1, 1]),
            ([0x1_0000, 1, 1], [0x1_0000, 1, 1]),
        ] {
            let e2 = l.update_exec(&e, g, lo).unwrap_err();
            assert!(matches!(
                e2,
                CmdError::Encode(EncodeError::ValueTooLarge { .. })
            ));
            assert_eq!(l.as_dwords(), &before[..n]);
        }
    }

    /// A gfx9 launch with the private segment buffer, dispatch pointer and flat scratch init:
    /// the handle's layout follows the 10 USER_DATA values, so patching the dims (checked
    /// against the START and DISPATCH_DIRECT headers) hits NUM_THREAD and DISPATCH_DIRECT.
    #[test]
    fn exec_with_scratch_user_sgprs_patches() {
        let v = ScratchRsrc::new(&GFX9, GpuVa(0x3000_0000), 0x1_0000, false).unwrap();
        let p = Program {
            dispatch: Some(DispatchInfo {
                packet_offset: 0x40,
                group_segment_size: 0,
                private_segment_size: 68,
            }),
            private_segment_buffer: Some(v),
            flat_scratch_init: Some(GpuVa(0x3000_0000)),
            ..prog()
        };
        let mut l: Pm4List<256, 4> = Pm4List::new(&GFX9);
        l.memory_barrier().unwrap();
        let (e, dw) = l.exec(&p, GpuVa(0x10_0000), [2, 3, 4], [64, 1, 1]).unwrap();
        assert!(dw.is_some());
        assert_eq!(e.layout, pm4::exec_layout(&GFX9, &p));
        let d = l.as_dwords();
        let at = e.offset as usize;
        assert_eq!(d.len(), at + e.layout.dwords);
        assert_eq!(
            d[at + e.layout.local_at..at + e.layout.local_at + 3],
            [64, 1, 1]
        );
        assert_eq!(
            d[at + e.layout.dispatch_at + 1..at + e.layout.dispatch_at + 4],
            [2, 3, 4]
        );
        let dw2 = l.update_exec(&e, [7, 8, 9], [32, 2, 1]).unwrap().unwrap();
        assert_eq!(dw2.packet.grid_size_x, 7 * 32);
        let d = l.as_dwords();
        assert_eq!(
            d[at + e.layout.local_at..at + e.layout.local_at + 3],
            [32, 2, 1]
        );
        assert_eq!(
            d[at + e.layout.dispatch_at + 1..at + e.layout.dispatch_at + 4],
            [7, 8, 9]
        );
        // The USER_DATA block is untouched by the patch: V#, dispatch ptr, kernargs, FSI.
        let ud = at + 7 + 35;
        assert_eq!(d[ud + 1], GFX9.regs.user_data_0);
        assert_eq!(d[ud + 2..ud + 6], v.words());
        assert_eq!(
            d[ud + 6..ud + 12],
            [0x10_0040, 0, 0x10_0000, 0, 0x3000_0000, 0]
        );
        // A handle with the layout of a program without the scratch SGPRs points at the wrong
        // dwords: the header check refuses it instead of corrupting the list.
        let wrong = ExecCmd {
            layout: pm4::exec_layout(&GFX9, &Program::default()),
            dispatch: None,
            ..e
        };
        assert!(l.update_exec(&wrong, [1; 3], [1; 3]).is_err());
    }

    #[test]
    fn sdma_sizes_and_patch() {
        let mut l: SdmaList<128, 8, 32> = SdmaList::new(&GFX11);
        l.copy(GpuVa(0x10_0000), GpuVa(0x20_0000), 0x80_0001)
            .unwrap();
        let s = l.signal(&sig(0x3000, true), 5).unwrap();
        let w = l.wait(&sig(0x4000, false), 6).unwrap();
        l.timestamp(&sig(0x5000, false)).unwrap();
        assert_eq!(l.packet_sizes(), &[5, 7, 7, 7, 5, 4, 4, 2, 6, 3]);
        assert_eq!(
            l.packets().map(<[u32]>::len).sum::<usize>(),
            l.as_dwords().len()
        );
        l.update_signal(&s, Some(&sig(0x6000, true)), Some(11))
            .unwrap();
        l.update_wait(&w, None, Some(12)).unwrap();
        let d = l.as_dwords();
        assert_eq!(d[s.offset as usize + 1], 0x6008);
        assert_eq!(d[s.offset as usize + 3], 11);
        assert_eq!(d[w.offset as usize + 3], 12);
        assert!(
            l.update_wait(
                &WaitCmd {
                    offset: s.offset,
                    engine: Engine::Sdma
                },
                None,
                Some(1)
            )
            .is_err()
        );
        let mut tiny: SdmaList<128, 8, 3> = SdmaList::new(&GFX11);
        assert_eq!(
            tiny.copy(GpuVa(0), GpuVa(0), 0x80_0000),
            Err(CmdError::TooManyPackets {
                needed: 4,
                capacity: 3
            })
        );
        assert!(tiny.is_empty());
    }
}
