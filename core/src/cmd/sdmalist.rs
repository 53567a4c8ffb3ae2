//! The SDMA command list.

use super::*;

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
