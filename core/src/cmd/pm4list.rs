//! The PM4 command list.

use super::*;

/// Shared storage of both list kinds.
#[derive(Clone)]
pub(super) struct Store<const N: usize, const C: usize> {
    pub(super) buf: [u32; N],
    pub(super) len: usize,
    pub(super) cmds: heapless::Vec<u32, C>,
}

impl<const N: usize, const C: usize> Store<N, C> {
    pub(super) const fn new() -> Self {
        Self {
            buf: [0; N],
            len: 0,
            cmds: heapless::Vec::new(),
        }
    }

    /// Runs `enc` on the free tail and records a command; the list is unchanged on error.
    #[inline(always)]
    pub(super) fn push(
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

    pub(super) fn dwords(&self) -> &[u32] {
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
