//! What the engines did: a bounded per-queue record of executed packets (kept raw, formatted
//! with the core decoder's text only when printed) and of faults and interrupts.

pub use super::types::Site;
use super::types::{QueueId, QueueKind};
use core::fmt;
use std::collections::VecDeque;

/// Dwords of a packet kept in a trace entry; longer packets are summarised.
pub const TRACE_PACKET_DWORDS: usize = 16;

/// Default number of entries kept per queue (older entries are dropped first): the last 256
/// packets (~24 KiB a queue) tell a fault's story; a longer ring is written through on every
/// packet and pushes the host's working set out of its caches (4096 entries made a JIT replay
/// after 100 kernels ~2x slower). [`crate::engine::Engines::set_trace_capacity`] keeps more.
pub const DEFAULT_TRACE_CAPACITY: usize = 256;

/// What happened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TraceEvent {
    /// A packet was executed (its first dwords and its total length).
    Packet {
        /// First dwords of the packet (entries past `len` are unspecified).
        dwords: [u32; TRACE_PACKET_DWORDS],
        /// Total dwords.
        len: u32,
    },
    /// An interrupt was raised with this context id.
    Interrupt(u32),
    /// An interrupt was dropped by fault injection.
    InterruptDropped(u32),
    /// The queue faulted.
    Fault(String),
}

/// One trace record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceEntry {
    /// Global sequence number (orders entries across queues).
    pub seq: u64,
    /// GPU of the queue.
    pub gpu_id: u32,
    /// The queue.
    pub queue: QueueId,
    /// Its kind (selects the decoder).
    pub kind: QueueKind,
    /// Where.
    pub site: Site,
    /// What.
    pub event: TraceEvent,
}

impl fmt::Display for TraceEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "#{} gpu {:#x} q{} {} {}: ",
            self.seq, self.gpu_id, self.queue.0, self.kind, self.site
        )?;
        match &self.event {
            TraceEvent::Packet { dwords, len } => {
                // CAST: u32 -> usize widens.
                let n = (*len as usize).min(TRACE_PACKET_DWORDS);
                let d = dwords.get(..n).unwrap_or_default();
                match self.kind {
                    QueueKind::Aql if *len == 16 => write!(
                        f,
                        "AQL packet type {}, header {:#06x}",
                        d.first().copied().unwrap_or(0) & 0xff,
                        d.first().copied().unwrap_or(0) & 0xffff
                    ),
                    QueueKind::Compute | QueueKind::Aql => match hcq_core::pm4::decode_one(d) {
                        Ok((p, _)) => write!(f, "{p}"),
                        Err(_) => write!(
                            f,
                            "PM4 packet of {len} dwords, header {:#010x}",
                            d.first().copied().unwrap_or(0)
                        ),
                    },
                    QueueKind::Sdma => match hcq_core::sdma::decode_one(d) {
                        Ok((p, _)) => write!(f, "{p}"),
                        Err(_) => write!(
                            f,
                            "SDMA packet of {len} dwords, header {:#010x}",
                            d.first().copied().unwrap_or(0)
                        ),
                    },
                }
            }
            TraceEvent::Interrupt(c) => write!(f, "interrupt context {c:#x}"),
            TraceEvent::InterruptDropped(c) => {
                write!(f, "interrupt context {c:#x} DROPPED (fault injection)")
            }
            TraceEvent::Fault(m) => write!(f, "FAULT {m}"),
        }
    }
}

/// A packet record, kept compact and `Copy` so recording is a plain store into a ring.
#[derive(Clone, Copy)]
struct PacketRec {
    seq: u64,
    site: Site,
    len: u32,
    dwords: [u32; TRACE_PACKET_DWORDS],
}

/// A bounded trace of one queue: packets in a fixed ring (oldest overwritten), rarer events
/// (faults, interrupts) in a bounded list.
#[derive(Clone, Debug)]
pub(crate) struct Trace {
    packets: Vec<PacketRec>,
    /// Next slot to write in `packets` once it is full.
    head: usize,
    other: VecDeque<(u64, Site, TraceEvent)>,
    cap: usize,
    /// Entries dropped because the trace was full.
    pub(crate) dropped: u64,
}

impl core::fmt::Debug for PacketRec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PacketRec")
            .field("seq", &self.seq)
            .field("site", &self.site)
            .field("len", &self.len)
            .finish_non_exhaustive()
    }
}

impl Trace {
    pub(crate) fn new(cap: usize) -> Self {
        Self {
            packets: Vec::with_capacity(cap.min(DEFAULT_TRACE_CAPACITY)),
            head: 0,
            other: VecDeque::new(),
            cap,
            dropped: 0,
        }
    }

    /// Records an executed packet of `len` dwords (the hot path). `window` holds the packet
    /// from its first dword and may run past its end (a fixed-size copy is cheaper).
    #[inline]
    pub(crate) fn packet(&mut self, seq: u64, site: Site, window: &[u32], len: usize) {
        if self.cap == 0 {
            self.dropped += 1;
            return;
        }
        let dwords = match window.first_chunk::<TRACE_PACKET_DWORDS>() {
            Some(w) => *w,
            None => head_dwords(window.get(..len).unwrap_or(window)),
        };
        let rec = PacketRec {
            seq,
            site,
            // CAST: packets are at most 2^20 + 5 dwords.
            len: len as u32,
            dwords,
        };
        if self.packets.len() < self.cap {
            self.packets.push(rec);
        } else {
            if let Some(slot) = self.packets.get_mut(self.head) {
                *slot = rec;
            }
            self.head = (self.head + 1) % self.cap;
            self.dropped += 1;
        }
    }

    /// Records a fault or an interrupt.
    pub(crate) fn event(&mut self, seq: u64, site: Site, ev: TraceEvent) {
        if self.cap == 0 {
            self.dropped += 1;
            return;
        }
        if self.other.len() >= self.cap {
            self.other.pop_front();
            self.dropped += 1;
        }
        self.other.push_back((seq, site, ev));
    }

    /// Every entry, tagged with the queue's identity, in sequence order.
    pub(crate) fn entries(&self, gpu_id: u32, queue: QueueId, kind: QueueKind) -> Vec<TraceEntry> {
        let mut out: Vec<TraceEntry> = self
            .packets
            .iter()
            .map(|r| TraceEntry {
                seq: r.seq,
                gpu_id,
                queue,
                kind,
                site: r.site,
                event: TraceEvent::Packet {
                    dwords: r.dwords,
                    len: r.len,
                },
            })
            .chain(self.other.iter().map(|(seq, site, ev)| TraceEntry {
                seq: *seq,
                gpu_id,
                queue,
                kind,
                site: *site,
                event: ev.clone(),
            }))
            .collect();
        out.sort_by_key(|e| e.seq);
        out
    }

    pub(crate) fn clear(&mut self) {
        self.packets.clear();
        self.other.clear();
        self.head = 0;
        self.dropped = 0;
    }
}

/// The first [`TRACE_PACKET_DWORDS`] dwords of `pkt`, zero padded.
pub(crate) fn head_dwords(pkt: &[u32]) -> [u32; TRACE_PACKET_DWORDS] {
    let mut out = [0u32; TRACE_PACKET_DWORDS];
    let n = pkt.len().min(TRACE_PACKET_DWORDS);
    if let (Some(d), Some(s)) = (out.get_mut(..n), pkt.get(..n)) {
        d.copy_from_slice(s);
    }
    out
}
