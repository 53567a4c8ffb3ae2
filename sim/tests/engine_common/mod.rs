//! Shared rig for the engine tests: GPUs as `MemBus`es over shared regions, queues with rings
//! in their own regions, a host that writes rings and rings doorbells.
#![allow(dead_code)]

use hcq_core::addr::GpuVa;
use hcq_core::arch::{ArchInfo, GFX11};
use hcq_core::signal::SignalRef;
use hcq_sim::engine::membus::{MemBus, Perms, Region};
use hcq_sim::engine::{Engines, GpuBus, QueueDesc, QueueId, QueueKind, SimMode};
use std::sync::Arc;

/// Shared system memory (mapped to every GPU).
pub const DATA_VA: u64 = 0x20_0000;
pub const DATA_LEN: u64 = 0x10_0000;
/// Code (RWX, mapped to every GPU).
pub const CODE_VA: u64 = 0x40_0000;
pub const CODE_LEN: u64 = 0x4_0000;
/// Queue pointer pages.
pub const PTR_VA: u64 = 0x80_0000;
/// Rings: queue i at RING_VA + i * RING_STRIDE.
pub const RING_VA: u64 = 0x100_0000;
pub const RING_STRIDE: u64 = 0x10_0000;
/// Memory only GPU 0 sees.
pub const PRIVATE_VA: u64 = 0x300_0000;

pub struct Rig {
    pub engines: Engines,
    pub gpus: Vec<Arc<MemBus>>,
    pub data: Arc<Region>,
    pub code: Arc<Region>,
    pub ptrs: Arc<Region>,
    next: u32,
}

pub struct Q {
    pub id: QueueId,
    pub gpu: usize,
    pub kind: QueueKind,
    pub ring: Arc<Region>,
    pub ring_va: u64,
    pub size: u64,
    /// Write pointer (queue units).
    pub wptr: u64,
    pub rptr_va: u64,
    pub doorbell: u64,
}

impl Rig {
    pub fn new(mode: SimMode) -> Self {
        Self::multi(mode, 1)
    }

    pub fn multi(mode: SimMode, n: usize) -> Self {
        let data = Region::new(DATA_LEN);
        let code = Region::new(CODE_LEN);
        let ptrs = Region::new(0x1000);
        let private = Region::new(0x1000);
        let gpus: Vec<Arc<MemBus>> = (0..n)
            .map(|i| {
                let b = MemBus::new(0x1000 + i as u32);
                b.map(DATA_VA, DATA_LEN, &data, Perms::RW).unwrap();
                b.map(CODE_VA, CODE_LEN, &code, Perms::RWX).unwrap();
                b.map(PTR_VA, 0x1000, &ptrs, Perms::RW).unwrap();
                if i == 0 {
                    b.map(PRIVATE_VA, 0x1000, &private, Perms::RW).unwrap();
                }
                b
            })
            .collect();
        Self {
            engines: Engines::new(mode).expect("engine thread"),
            gpus,
            data,
            code,
            ptrs,
            next: 0,
        }
    }

    pub fn queue(&mut self, gpu: usize, kind: QueueKind, size: u64) -> Q {
        self.queue_arch(gpu, kind, size, &GFX11)
    }

    /// A queue whose engine is of `arch`'s family.
    pub fn queue_arch(
        &mut self,
        gpu: usize,
        kind: QueueKind,
        size: u64,
        arch: &'static ArchInfo,
    ) -> Q {
        let i = self.next;
        self.next += 1;
        let ring = Region::new(size.max(0x1000));
        let ring_va = RING_VA + u64::from(i) * RING_STRIDE;
        for b in &self.gpus {
            b.map(ring_va, size.max(0x1000), &ring, Perms::RW).unwrap();
        }
        let rptr_va = PTR_VA + u64::from(i) * 64;
        let doorbell = u64::from(i) * 8;
        let desc = QueueDesc {
            kind,
            arch,
            gfx940: true,
            ring_base: ring_va,
            ring_size: size,
            rptr_addr: rptr_va,
            wptr_addr: rptr_va + 8,
            doorbell_offset: doorbell,
            start: 0,
        };
        let bus: Arc<dyn GpuBus> = self.gpus[gpu].clone();
        self.engines.add_queue(QueueId(i), desc, bus).unwrap();
        Q {
            id: QueueId(i),
            gpu,
            kind,
            ring,
            ring_va,
            size,
            wptr: 0,
            rptr_va,
            doorbell,
        }
    }

    fn upd(q: &Q) -> u64 {
        match q.kind {
            QueueKind::Compute | QueueKind::Aql => 1,
            QueueKind::Sdma => 4,
        }
    }

    /// Writes `dwords` at the write pointer (modulo the ring) without ringing the doorbell.
    pub fn write_ring(&self, q: &mut Q, dwords: &[u32]) {
        let size_dw = q.size / 4;
        for &d in dwords {
            let idx = (q.wptr / Self::upd(q)) % size_dw;
            q.ring.write(idx * 4, &d.to_le_bytes());
            q.wptr += Self::upd(q);
        }
    }

    pub fn doorbell(&self, q: &Q) {
        assert!(self.gpus[q.gpu].ring_doorbell(q.doorbell, q.wptr));
    }

    /// Writes and rings.
    pub fn submit(&self, q: &mut Q, dwords: &[u32]) {
        self.write_ring(q, dwords);
        self.doorbell(q);
    }

    pub fn rptr(&self, q: &Q) -> u64 {
        self.gpus[0].load_u64(q.rptr_va).unwrap()
    }

    pub fn w32(&self, va: u64, v: u32) {
        self.gpus[0].store_u32(va, v).unwrap();
    }

    pub fn r32(&self, va: u64) -> u32 {
        self.gpus[0].load_u32(va).unwrap()
    }

    pub fn r64(&self, va: u64) -> u64 {
        self.gpus[0].load_u64(va).unwrap()
    }

    pub fn write_words(&self, va: u64, words: &[u32]) {
        self.gpus[0].write(va, bytemuck::cast_slice(words)).unwrap();
    }
}

/// A signal at `DATA_VA + off` (64-byte aligned), optionally with a mailbox and event id.
pub fn sig(off: u64, event: Option<u32>) -> SignalRef {
    SignalRef {
        addr: DATA_VA + off,
        event_mailbox_ptr: event.map_or(0, |_| DATA_VA + 0x8000 + off / 8),
        event_id: event.unwrap_or(0),
    }
}

pub fn pm4<F: FnOnce(&mut [u32]) -> Result<usize, hcq_core::packet::EncodeError>>(
    f: F,
) -> Vec<u32> {
    let mut b = vec![0u32; 256];
    let n = f(&mut b).unwrap();
    b.truncate(n);
    b
}

pub fn va(v: u64) -> GpuVa {
    GpuVa(v)
}
