//! A growable submission built from core's PM4/SDMA encoders, with the packet lengths the SDMA
//! ring needs to wrap between packets.

use crate::error::{Error, Result};
use crate::queue::QueueType;
use hcq_core::addr::GpuVa;
use hcq_core::arch::ArchInfo;
use hcq_core::packet::EncodeError;
use hcq_core::signal::SignalRef;
use hcq_core::{pm4, sdma};

fn enc(source: EncodeError) -> Error {
    Error::Encode {
        what: "a packet",
        source,
    }
}

/// Dwords and packet lengths of one submission for one queue type.
#[derive(Debug)]
pub struct Cmds {
    ty: QueueType,
    arch: &'static ArchInfo,
    buf: Vec<u32>,
    lens: Vec<usize>,
    /// Where the driver's closing timeline signal starts, once added (an AQL queue runs it in
    /// a packet of its own, after the body completed on every XCC).
    signal_at: Option<usize>,
}

impl Cmds {
    /// A list without storage (a placeholder while the real one is lent out).
    pub(crate) const fn empty(ty: QueueType, arch: &'static ArchInfo) -> Self {
        Self {
            ty,
            arch,
            buf: Vec::new(),
            lens: Vec::new(),
            signal_at: None,
        }
    }

    pub(crate) fn new(ty: QueueType, arch: &'static ArchInfo) -> Self {
        Self {
            ty,
            arch,
            buf: Vec::with_capacity(256),
            lens: Vec::with_capacity(16),
            signal_at: None,
        }
    }

    /// Empties the list, keeping its storage (and its queue type and architecture).
    pub(crate) fn clear(&mut self) {
        self.buf.clear();
        self.lens.clear();
        self.signal_at = None;
    }

    /// Marks the end of the list as where the closing timeline signal starts.
    pub(crate) fn mark_signal(&mut self) {
        self.signal_at = Some(self.buf.len());
    }

    /// The dwords before and from the closing timeline signal (all in the first part when
    /// none was marked).
    pub(crate) fn split_at_signal(&self) -> (&[u32], &[u32]) {
        let at = self.signal_at.unwrap_or(self.buf.len()).min(self.buf.len());
        self.buf.split_at(at)
    }

    /// The queue type the list is for.
    pub(crate) fn queue_type(&self) -> QueueType {
        self.ty
    }

    /// The dwords so far.
    #[must_use]
    pub fn dwords(&self) -> &[u32] {
        &self.buf
    }

    /// The packet lengths so far.
    #[must_use]
    pub fn packet_lens(&self) -> &[usize] {
        &self.lens
    }

    /// The architecture table packets are encoded for.
    #[must_use]
    pub fn arch(&self) -> &'static ArchInfo {
        self.arch
    }

    /// Appends `max` dwords' room, lets `f` encode into it, keeps what it wrote and records the
    /// packet lengths (SDMA: split by the decoder's packet lengths; PM4: one entry).
    fn push(
        &mut self,
        max: usize,
        f: impl FnOnce(&mut [u32]) -> core::result::Result<usize, EncodeError>,
    ) -> Result<()> {
        let start = self.buf.len();
        self.buf.resize(start + max, 0);
        let n = match self.buf.get_mut(start..) {
            Some(room) => f(room).map_err(enc),
            None => Err(Error::Protocol("encode buffer".into())),
        };
        let n = match n {
            Ok(n) if n <= max => n,
            Ok(_) => Err(Error::Protocol("encoder wrote past its room".into()))?,
            Err(e) => {
                self.buf.truncate(start);
                return Err(e);
            }
        };
        self.buf.truncate(start + n);
        let r = self.record(start);
        if r.is_err() {
            self.buf.truncate(start);
        }
        r
    }

    fn record(&mut self, start: usize) -> Result<()> {
        let lens_before = self.lens.len();
        let r = self.record_lens(start);
        if r.is_err() {
            self.lens.truncate(lens_before);
        }
        r
    }

    fn record_lens(&mut self, start: usize) -> Result<()> {
        match self.ty {
            QueueType::Compute => {
                let n = self.buf.len() - start;
                if n > 0 {
                    self.lens.push(n);
                }
            }
            QueueType::Sdma => {
                let mut at = start;
                while let Some(rest) = self.buf.get(at..).filter(|r| !r.is_empty()) {
                    let n = sdma::packet_len(rest)
                        .map_err(|e| Error::InvalidArgument(format!("SDMA packet: {e:?}")))?;
                    if n == 0 || n > rest.len() {
                        return Err(Error::InvalidArgument(format!(
                            "SDMA packet of {n} dwords with {} left",
                            rest.len()
                        )));
                    }
                    self.lens.push(n);
                    at += n;
                }
            }
        }
        Ok(())
    }

    /// Raw dwords (whole packets).
    ///
    /// # Errors
    /// For SDMA, dwords that do not decode as whole packets.
    pub fn raw(&mut self, dwords: &[u32]) -> Result<()> {
        let start = self.buf.len();
        self.buf.extend_from_slice(dwords);
        let r = self.record(start);
        if r.is_err() {
            self.buf.truncate(start);
        }
        r
    }

    /// PM4 only: appends pre-encoded whole packets `dwords` (one command), then lets `patch`
    /// change the copy in place (a template's launch-dependent dwords).
    ///
    /// # Errors
    /// On the copy queue, or when `patch` fails (`None`: a patch outside the template).
    pub(crate) fn pm4_patched(
        &mut self,
        dwords: &[u32],
        patch: impl FnOnce(&mut [u32]) -> Option<()>,
    ) -> Result<()> {
        if self.ty != QueueType::Compute {
            return Err(Error::InvalidArgument(
                "pre-encoded PM4 is a compute-queue command".into(),
            ));
        }
        let start = self.buf.len();
        self.buf.extend_from_slice(dwords);
        if self.buf.get_mut(start..).and_then(patch).is_none() {
            self.buf.truncate(start);
            return Err(Error::Protocol(
                "a template patch outside its dwords".into(),
            ));
        }
        if !dwords.is_empty() {
            self.lens.push(dwords.len());
        }
        Ok(())
    }

    /// Waits until `signal >= value` (32-bit compare).
    ///
    /// # Errors
    /// Encoder errors.
    pub fn wait(&mut self, signal: &SignalRef, value: u32) -> Result<()> {
        match self.ty {
            QueueType::Compute => self.push(16, |b| pm4::wait(b, signal, value)),
            QueueType::Sdma => self.push(16, |b| sdma::wait(b, signal, value)),
        }
    }

    /// Writes `value` to `signal` (and its event mailbox + interrupt, if it has one).
    ///
    /// # Errors
    /// Encoder errors.
    pub fn signal(&mut self, signal: &SignalRef, value: u32) -> Result<()> {
        let arch = self.arch;
        match self.ty {
            QueueType::Compute => self.push(32, |b| pm4::signal(b, arch, signal, u64::from(value))),
            QueueType::Sdma => self.push(16, |b| sdma::signal(b, arch, signal, value)),
        }
    }

    /// Writes the GPU clock to `signal`'s `start_ts`.
    ///
    /// # Errors
    /// Encoder errors.
    pub fn timestamp(&mut self, signal: &SignalRef) -> Result<()> {
        let arch = self.arch;
        match self.ty {
            QueueType::Compute => self.push(16, |b| pm4::timestamp(b, arch, signal)),
            QueueType::Sdma => self.push(16, |b| sdma::timestamp(b, signal)),
        }
    }

    /// HDP flush, so CPU writes into VRAM are visible to what follows: on the compute queue
    /// the seed's WAIT_REG_MEM on the HDP flush registers plus a cache invalidate, on the copy
    /// queue the kernel's SDMA POLL_REGMEM HDP flush (`sdma_v*_ring_emit_hdp_flush`).
    ///
    /// # Errors
    /// Encoder errors.
    pub fn memory_barrier(&mut self) -> Result<()> {
        let arch = self.arch;
        match self.ty {
            QueueType::Compute => self.push(64, |b| pm4::memory_barrier(b, arch)),
            QueueType::Sdma => {
                self.push(8, |b| sdma::hdp_flush(b, arch, arch.sdma0_hdp_flush_mask))
            }
        }
    }

    /// SDMA only: copies `size` bytes from `src` to `dst` (chunked per the arch's maximum).
    ///
    /// # Errors
    /// On the compute queue, or encoder errors.
    pub fn copy(&mut self, dst: GpuVa, src: GpuVa, size: u64) -> Result<()> {
        let arch = self.arch;
        if self.ty != QueueType::Sdma {
            return Err(Error::InvalidArgument(
                "copy is a copy-queue command".into(),
            ));
        }
        let n = sdma::copy_dwords(size, arch.sdma_max_copy_bytes).ok_or_else(|| {
            Error::InvalidArgument(format!("copy of {size} bytes is too large to encode"))
        })?;
        // The seed's copy, with the GCR_REQ cache bits where the engine reads them (the seed's
        // placement makes its cache invalidate/write-back no-ops on hardware).
        let opts = sdma::CopyOptions::hardware(arch);
        self.push(n, |b| sdma::copy_with(b, &opts, dst, src, size))
    }

    /// PM4 only: runs `size_dwords` dwords of commands at `addr` (an indirect buffer).
    ///
    /// # Errors
    /// On the copy queue, or encoder errors.
    pub fn indirect_buffer(&mut self, addr: GpuVa, size_dwords: u32) -> Result<()> {
        if self.ty != QueueType::Compute {
            return Err(Error::InvalidArgument(
                "indirect buffers are compute-queue commands here".into(),
            ));
        }
        self.push(8, |b| pm4::indirect_buffer(b, addr, size_dwords))
    }

    /// PM4 only: one kernel dispatch.
    ///
    /// # Errors
    /// On the copy queue, or encoder errors (sizes out of range).
    pub fn exec(
        &mut self,
        prog: &pm4::Program,
        kernargs: GpuVa,
        global: [u32; 3],
        local: [u32; 3],
    ) -> Result<()> {
        let arch = self.arch;
        if self.ty != QueueType::Compute {
            return Err(Error::InvalidArgument(
                "exec is a compute-queue command".into(),
            ));
        }
        let n = pm4::exec_dwords(arch, prog);
        self.push(n, |b| pm4::exec(b, arch, prog, kernargs, global, local))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hcq_core::arch::GfxTarget;

    fn arch() -> &'static ArchInfo {
        GfxTarget::parse("gfx1100").unwrap().info()
    }

    #[test]
    fn sdma_packet_lengths_follow_the_packets() {
        let mut c = Cmds::new(QueueType::Sdma, arch());
        let with_event = SignalRef {
            addr: 0x1000,
            event_mailbox_ptr: 0x2000,
            event_id: 7,
        };
        c.wait(&SignalRef::new(0x1000), 3).unwrap();
        c.copy(GpuVa(0x10_0000), GpuVa(0x20_0000), (4 << 20) + 8)
            .unwrap();
        c.signal(&with_event, 4).unwrap();
        // POLL_REGMEM 6; GCR 5, two COPY_LINEAR 7, GCR 5; FENCE 4, FENCE 4, TRAP 2.
        assert_eq!(c.packet_lens(), &[6, 5, 7, 7, 5, 4, 4, 2]);
        assert_eq!(c.dwords().len(), 40);
        // The copy queue's memory barrier is the SDMA HDP flush POLL_REGMEM (6 dwords).
        c.memory_barrier().unwrap();
        assert_eq!(c.packet_lens().last(), Some(&6));
        let (p, _) = sdma::decode_one(&c.dwords()[40..]).unwrap();
        assert!(
            matches!(p, sdma::SdmaPacket::PollRegmem(r) if r.header.get(sdma::PollRegmemHeader::HDP_FLUSH) == 1),
            "{p:?}"
        );
        assert!(c.indirect_buffer(GpuVa(0x1000), 4).is_err());
    }

    #[test]
    fn copies_put_the_cache_bits_where_the_sdma_engine_reads_them() {
        let mut c = Cmds::new(QueueType::Sdma, arch());
        c.copy(GpuVa(0x10_0000), GpuVa(0x20_0000), 64).unwrap();
        let d = c.dwords();
        let (first, n) = sdma::decode_one(d).unwrap();
        let last = sdma::decode_one(&d[n + 7..]).unwrap().0;
        // Not the seed's placement (bits in base_va[47:32], GCR_CNTL 0): the engine would
        // invalidate and write back nothing.
        assert_eq!(
            first,
            sdma::SdmaPacket::GcrReq(sdma::copy_gcr(
                sdma::COPY_GCR_INVALIDATE,
                sdma::GcrPlacement::Hardware
            ))
        );
        assert_eq!(
            last,
            sdma::SdmaPacket::GcrReq(sdma::copy_gcr(
                sdma::COPY_GCR_WRITEBACK,
                sdma::GcrPlacement::Hardware
            ))
        );
        if let sdma::SdmaPacket::GcrReq(g) = first {
            assert_eq!(g.base_va, 0);
            assert_ne!(g.gcr.raw(), 0);
        }
    }

    #[test]
    fn raw_sdma_must_be_whole_packets() {
        let mut c = Cmds::new(QueueType::Sdma, arch());
        let mut one = Cmds::new(QueueType::Sdma, arch());
        one.signal(&SignalRef::new(0x40), 1).unwrap();
        c.raw(one.dwords()).unwrap();
        assert_eq!(c.packet_lens(), &[4]);
        // A truncated FENCE is refused and leaves the list unchanged.
        assert!(c.raw(&one.dwords()[..2]).is_err());
        assert_eq!(c.dwords().len(), 4);
    }

    #[test]
    fn pm4_commands_record_one_length_each() {
        let mut c = Cmds::new(QueueType::Compute, arch());
        c.wait(&SignalRef::new(0x1000), 1).unwrap();
        c.memory_barrier().unwrap();
        c.signal(&SignalRef::new(0x1000), 2).unwrap();
        c.indirect_buffer(GpuVa(0x4000), 16).unwrap();
        assert_eq!(c.packet_lens().len(), 4);
        assert_eq!(c.packet_lens().iter().sum::<usize>(), c.dwords().len());
        assert!(c.copy(GpuVa(0), GpuVa(0), 4).is_err());
    }
}
