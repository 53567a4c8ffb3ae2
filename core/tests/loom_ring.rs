//! loom models of the ring publish protocol.
//!
//! Ring slots are `loom::cell::UnsafeCell<u32>`, so a consumer read of a slot the producer is
//! still writing (or a producer write of a slot the consumer has not finished reading) is a
//! causality violation that fails the test.
//!
//! Run: `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 cargo test -p hcq-core --release --test loom_ring`
#![cfg(loom)]

use hcq_core::ring::{
    Consumer, Grant, Pm4, Producer, RingError, RingKind, RingLayout, RingPtr, Sdma, SharedProducer,
};
use hcq_core::sync::atomic::{AtomicU64, Ordering};
use loom::cell::UnsafeCell;
use loom::sync::Arc;
use loom::thread;

/// The owner of the ring memory in the model: one cell per dword.
struct Slots(Vec<UnsafeCell<u32>>);

impl Slots {
    fn new(n: usize) -> Self {
        Self((0..n).map(|_| UnsafeCell::new(0xDEAD)).collect())
    }

    /// Writes a grant the way `Grant::fill` does: data, zero padding, rest of the data.
    fn fill<K: RingKind>(&self, g: &Grant<K>, data: &[u32]) {
        let (head, tail) = g.ranges();
        let (first, rest) = data.split_at(g.split());
        let head_vals = first.iter().copied().chain(core::iter::repeat(0));
        for (i, v) in head.zip(head_vals) {
            // SAFETY: the grant gives this producer exclusive use of its slots; loom checks it.
            self.0[i].with_mut(|p| unsafe { *p = v });
        }
        for (i, &v) in tail.zip(rest) {
            // SAFETY: as above.
            self.0[i].with_mut(|p| unsafe { *p = v });
        }
    }

    fn read(&self, i: usize) -> u32 {
        // SAFETY: the consumer reads only published slots; loom checks it.
        self.0[i].with(|p| unsafe { *p })
    }
}

/// Shared state: ring memory and the GPU-visible pointers.
struct Shared {
    slots: Slots,
    wptr: AtomicU64,
    rptr: AtomicU64,
}

/// One producer submits packets that do not all fit; it waits for the consumer (back-pressure)
/// and wraps. Returns what the consumer read.
fn single_producer<K: RingKind>(
    ring_dw: usize,
    start_dw: u64,
    packets: &'static [&'static [u32]],
) -> Vec<u32> {
    let start = start_dw * K::UNITS_PER_DWORD;
    let layout = RingLayout::<K>::new(ring_dw as u64 * 4).unwrap();
    let sh = Arc::new(Shared {
        slots: Slots::new(ring_dw),
        wptr: AtomicU64::new(start),
        rptr: AtomicU64::new(start),
    });
    let total: usize = packets.iter().map(|p| p.len()).sum::<usize>();
    let p_sh = sh.clone();
    let producer = thread::spawn(move || {
        let mut p = Producer::new(layout, RingPtr::new(start)).unwrap();
        for pkt in packets {
            let g = loop {
                match p.reserve(pkt.len(), &p_sh.rptr) {
                    Ok(g) => break g,
                    Err(RingError::WouldOverrun { .. }) => thread::yield_now(),
                    Err(e) => panic!("{e}"),
                }
            };
            p_sh.slots.fill(&g, pkt);
            let _doorbell = p.publish(g, &p_sh.wptr).unwrap();
        }
    });
    // Padding dwords are read too (they are part of the stream).
    let mut got = Vec::new();
    let mut c = Consumer::new(layout, RingPtr::new(start)).unwrap();
    let mut read_units = 0u64;
    let end_units = loop {
        // Stop when the producer is done and everything published is read.
        let rd = c.readable(&sh.wptr).unwrap();
        if rd.is_empty() {
            if got.iter().filter(|&&v| v != 0).count() == total {
                break read_units;
            }
            thread::yield_now();
            continue;
        }
        let len = rd.len();
        for i in rd.head.chain(rd.tail) {
            got.push(sh.slots.read(i));
        }
        c.consume(len as u64, &sh.rptr).unwrap();
        read_units += len as u64 * K::UNITS_PER_DWORD;
    };
    producer.join().unwrap();
    assert_eq!(sh.wptr.load(Ordering::Relaxed), start + end_units);
    got
}

#[test]
fn pm4_publish_with_concurrent_consumer() {
    loom::model(|| {
        // 4-dword ring, two 3-dword packets: the second waits for the consumer and wraps.
        let got = single_producer::<Pm4>(4, (1 << 32) - 1, &[&[1, 2, 3], &[4, 5, 6]]);
        assert_eq!(got, [1, 2, 3, 4, 5, 6]);
    });
}

#[test]
fn sdma_publish_pads_and_waits() {
    loom::model(|| {
        // 4-dword (16-byte) SDMA ring: [3] at 0..3, then [2] does not fit in the last dword:
        // one zero dword of padding, the packet at 0..2.
        let got = single_producer::<Sdma>(4, 0, &[&[1, 2, 3], &[4, 5]]);
        assert_eq!(got, [1, 2, 3, 0, 4, 5]);
    });
}

#[test]
fn multi_producer_reserve_and_in_order_publish() {
    loom::model(|| {
        let layout = RingLayout::<Pm4>::new(8 * 4).unwrap();
        let sh = Arc::new(Shared {
            slots: Slots::new(8),
            wptr: AtomicU64::new(0),
            rptr: AtomicU64::new(0),
        });
        let sp = Arc::new(SharedProducer::new(layout, RingPtr::new(0)).unwrap());
        let doorbell = Arc::new(AtomicU64::new(0));
        let producers: Vec<_> = [[10u32, 11], [20, 21]]
            .into_iter()
            .map(|pkt| {
                let (sh, sp, doorbell) = (sh.clone(), sp.clone(), doorbell.clone());
                thread::spawn(move || {
                    let g = sp.reserve(2, &sh.rptr).unwrap();
                    sh.slots.fill(&g, &pkt);
                    sp.publish(g, &sh.wptr, |d| {
                        // The doorbell only ever moves forward.
                        let prev = doorbell.swap(d.value(), Ordering::Relaxed);
                        assert!(
                            prev < d.value(),
                            "doorbell went from {prev} to {}",
                            d.value()
                        );
                    });
                })
            })
            .collect();
        // A consumer polls once while the producers run (it must read only published slots:
        // loom flags a read of a slot still being written), then once after they are done.
        // Polling without bound would make every interleaving a spin loop.
        let mut c = Consumer::new(layout, RingPtr::new(0)).unwrap();
        let mut got = Vec::new();
        let rd = c.readable(&sh.wptr).unwrap();
        let n = rd.len();
        for i in rd.head.chain(rd.tail) {
            got.push(sh.slots.read(i));
        }
        c.consume(n as u64, &sh.rptr).unwrap();
        for p in producers {
            p.join().unwrap();
        }
        // No lost wakeup: the write pointer alone announces both packets.
        let rd = c.readable(&sh.wptr).unwrap();
        let n = rd.len();
        for i in rd.head.chain(rd.tail) {
            got.push(sh.slots.read(i));
        }
        c.consume(n as u64, &sh.rptr).unwrap();
        assert!(
            got == [10, 11, 20, 21] || got == [20, 21, 10, 11],
            "{got:?}"
        );
        assert_eq!(sh.wptr.load(Ordering::Relaxed), 4);
        assert_eq!(doorbell.load(Ordering::Relaxed), 4);
    });
}
