use super::*;
use crate::sync::atomic::{AtomicU64, Ordering};

fn pm4(bytes: u64, start: u64) -> (Producer<Pm4>, Consumer<Pm4>) {
    let layout = RingLayout::<Pm4>::new(bytes).unwrap();
    (
        Producer::new(layout, RingPtr::new(start)).unwrap(),
        Consumer::new(layout, RingPtr::new(start)).unwrap(),
    )
}

fn sdma(bytes: u64, start: u64) -> (Producer<Sdma>, Consumer<Sdma>) {
    let layout = RingLayout::<Sdma>::new(bytes).unwrap();
    (
        Producer::new(layout, RingPtr::new(start)).unwrap(),
        Consumer::new(layout, RingPtr::new(start)).unwrap(),
    )
}

#[test]
fn layout_sizes() {
    assert_eq!(RingLayout::<Pm4>::new(1 << 20).unwrap().size(), 1 << 18);
    assert_eq!(RingLayout::<Sdma>::new(1 << 20).unwrap().size(), 1 << 20);
    assert_eq!(
        RingLayout::<Sdma>::new(1 << 20).unwrap().size_dwords(),
        1 << 18
    );
    assert!(matches!(
        RingLayout::<Pm4>::new(8),
        Err(RingError::BadSize { bytes: 8 })
    ));
    assert!(matches!(
        RingLayout::<Pm4>::new(0),
        Err(RingError::BadSize { bytes: 0 })
    ));
    assert!(matches!(
        RingLayout::<Pm4>::new(1 << 41),
        Err(RingError::BadSize { .. })
    ));
}

#[test]
fn pm4_wraps_inside_a_packet_near_2_pow_33() {
    // 16-dword ring; the seed's tests start the PM4 wptr near 2 << 32.
    let start = (2u64 << 32) - 12;
    let (mut p, mut c) = pm4(64, start);
    let (w, r) = (AtomicU64::new(start), AtomicU64::new(start));
    let mut mem = [0xdead_beefu32; 16];
    let a: [u32; 10] = core::array::from_fn(|i| 100 + i as u32);
    let db = p.submit(&mut mem[..], &r, &w, &a).unwrap();
    assert_eq!(db.value(), start + 10);
    assert_eq!(w.load(Ordering::Relaxed), start + 10);
    let rd = c.readable(&w).unwrap();
    assert_eq!((rd.head.clone(), rd.tail.clone()), (4..14, 0..0));
    c.consume(10, &r).unwrap();
    // Next packet of 8 crosses the end (2 before, 6 after) and 2^33.
    let b: [u32; 8] = core::array::from_fn(|i| 200 + i as u32);
    let g = p.reserve(8, &r).unwrap();
    assert_eq!(g.ranges(), (14..16, 0..6));
    assert_eq!(g.padding(), 0);
    // The submission's dwords are both halves: 2 before the end, 6 after it.
    assert_eq!((g.split(), g.data_len()), (2, 8));
    let (head, tail) = g.ranges();
    let (lo, hi) = mem.split_at_mut(head.start);
    g.fill(&mut hi[..head.len()], &mut lo[tail], &b).unwrap();
    assert_eq!(p.publish(g, &w).unwrap().value(), 2u64 << 32 | 6);
    assert_eq!(&mem[14..16], &[200, 201]);
    assert_eq!(&mem[0..6], &[202, 203, 204, 205, 206, 207]);
    let rd = c.readable(&w).unwrap();
    assert_eq!(
        (rd.head, rd.tail, rd.start.get(), rd.end.get()),
        (14..16, 0..6, start + 10, start + 18)
    );
}

#[test]
fn pm4_back_pressure_writes_nothing() {
    let (mut p, _) = pm4(64, 0);
    let (w, r) = (AtomicU64::new(0), AtomicU64::new(0));
    let mut mem = [7u32; 16];
    let _ = p.submit(&mut mem[..], &r, &w, &[1; 12]).unwrap();
    let err = p.submit(&mut mem[..], &r, &w, &[2; 5]).unwrap_err();
    assert_eq!(
        err,
        RingError::WouldOverrun {
            needed: 5,
            free: 4,
            unit: Unit::Dwords
        }
    );
    assert_eq!(&mem[12..], &[7; 4]);
    assert_eq!(w.load(Ordering::Relaxed), 12);
    assert_eq!(p.write_pointer().get(), 12);
    // Exactly full is allowed (no wasted slot).
    let _ = p.submit(&mut mem[..], &r, &w, &[3; 4]).unwrap();
    assert_eq!(p.write_pointer().get(), 16);
    // The consumer frees 5: the refused packet now fits; the producer rereads rptr itself.
    r.store(5, Ordering::Release);
    let _ = p.submit(&mut mem[..], &r, &w, &[2; 5]).unwrap();
    assert_eq!(&mem[..5], &[2; 5]);
    assert_eq!(&mem[5..12], &[1; 7]);
    // Larger than the ring: an error, not a wait.
    assert_eq!(
        p.reserve(17, &r).unwrap_err(),
        RingError::TooLarge {
            needed: 17,
            size: 16,
            unit: Unit::Dwords
        }
    );
}

#[test]
fn impossible_read_pointer() {
    let (mut p, _) = pm4(64, 100);
    let (w, r) = (AtomicU64::new(100), AtomicU64::new(100));
    let mut mem = [0u32; 16];
    let _ = p.submit(&mut mem[..], &r, &w, &[1; 16]).unwrap();
    r.store(200, Ordering::Release); // ahead of the write pointer
    assert_eq!(
        p.reserve(1, &r).unwrap_err(),
        RingError::BadPointer {
            read: 200,
            write: 116,
            unit: Unit::Dwords
        }
    );
    r.store(116, Ordering::Release);
    assert!(p.reserve(1, &r).is_ok());
}

#[test]
fn sdma_pads_between_packets_in_bytes() {
    // 16-dword (64-byte) SDMA ring, write position at dword 10.
    let (mut p, mut c) = sdma(64, 40);
    let (w, r) = (AtomicU64::new(40), AtomicU64::new(40));
    let mut mem = [0xffff_ffffu32; 16];
    // Packets 3 + 4: the 3 fit before the end (10..13), the 4 would cross: pad 13..16.
    let data = [1, 2, 3, 4, 5, 6, 7];
    let db = p
        .submit_packets(&mut mem[..], &r, &w, &data, [3, 4])
        .unwrap();
    assert_eq!(db.value(), 40 + (7 + 3) * 4);
    assert_eq!(&mem[10..16], &[1, 2, 3, 0, 0, 0]);
    assert_eq!(&mem[0..4], &[4, 5, 6, 7]);
    assert_eq!(mem[4], 0xffff_ffff);
    let rd = c.readable(&w).unwrap();
    assert_eq!((rd.head, rd.tail), (10..16, 0..4));
}

#[test]
fn sdma_packet_exactly_at_end_needs_no_pad() {
    let (mut p, _) = sdma(64, 48);
    let (w, r) = (AtomicU64::new(48), AtomicU64::new(48));
    let mut mem = [9u32; 16];
    let g = p.reserve_packets(6, [4, 2], &r).unwrap();
    assert_eq!((g.ranges(), g.split(), g.padding()), ((12..16, 0..2), 4, 0));
    let (head, tail) = g.ranges();
    let (lo, hi) = mem.split_at_mut(head.start);
    g.fill(&mut hi[..head.len()], &mut lo[tail], &[1, 2, 3, 4, 5, 6])
        .unwrap();
    assert_eq!(p.publish(g, &w).unwrap().value(), 48 + 24);
}

#[test]
fn sdma_errors() {
    let (mut p, _) = sdma(64, 40);
    let r = AtomicU64::new(40);
    // The single 8-dword packet does not fit before the end: 6 pad + 8 = 14 dwords (56 bytes).
    let g = p.reserve_packets(8, [8], &r).unwrap();
    assert_eq!((g.ranges(), g.padding()), ((10..16, 0..8), 6));
    // 12 dwords: 6 pad + 12 = 18 dwords > ring: too large, waiting cannot help.
    assert_eq!(
        p.reserve_packets(12, [12], &r).unwrap_err(),
        RingError::TooLarge {
            needed: 72,
            size: 64,
            unit: Unit::Bytes
        }
    );
    assert_eq!(
        p.reserve_packets(5, [2, 2], &r).unwrap_err(),
        RingError::PacketLengths { sum: 4, len: 5 }
    );
    let layout = RingLayout::<Sdma>::new(64).unwrap();
    assert_eq!(
        Producer::new(layout, RingPtr::new(6)).unwrap_err(),
        RingError::Misaligned { pointer: 6 }
    );
}

#[test]
fn stale_grant_and_bad_memory() {
    let (mut p, _) = pm4(64, 0);
    let (w, r) = (AtomicU64::new(0), AtomicU64::new(0));
    let g1 = p.reserve(2, &r).unwrap();
    let g2 = p.reserve(2, &r).unwrap();
    assert_eq!(p.publish(g1, &w).unwrap().value(), 2);
    assert_eq!(
        p.publish(g2, &w).unwrap_err(),
        RingError::StaleGrant {
            start: 0,
            write: 2,
            unit: Unit::Dwords
        }
    );
    let mut small = [0u32; 8];
    assert_eq!(
        p.submit(&mut small[..], &r, &w, &[1; 7]).unwrap_err(),
        RingError::Memory {
            expected: 7,
            got: 0
        }
    );
    let g = p.reserve(3, &r).unwrap();
    let mut a = [0u32; 2];
    assert_eq!(
        g.fill(&mut a, &mut [], &[1, 2, 3]).unwrap_err(),
        RingError::Memory {
            expected: 3,
            got: 2
        }
    );
    let mut b = [0u32; 3];
    assert_eq!(
        g.fill(&mut b, &mut [], &[1, 2]).unwrap_err(),
        RingError::PacketLengths { sum: 3, len: 2 }
    );
}

#[test]
fn consumer_refuses_bad_pointers() {
    let (_, mut c) = sdma(64, 0);
    let (w, r) = (AtomicU64::new(68), AtomicU64::new(0));
    assert_eq!(
        c.readable(&w).unwrap_err(),
        RingError::BadPointer {
            read: 0,
            write: 68,
            unit: Unit::Bytes
        }
    );
    w.store(6, Ordering::Relaxed);
    assert_eq!(
        c.readable(&w).unwrap_err(),
        RingError::Misaligned { pointer: 6 }
    );
    w.store(8, Ordering::Relaxed);
    assert_eq!(c.readable(&w).unwrap().len(), 2);
    assert_eq!(
        c.consume(3, &r).unwrap_err(),
        RingError::ConsumeTooMuch {
            dwords: 3,
            readable: 2
        }
    );
    c.consume(2, &r).unwrap();
    assert_eq!(r.load(Ordering::Relaxed), 8);
}

#[test]
fn shared_producers_publish_in_order() {
    let layout = RingLayout::<Sdma>::new(64).unwrap();
    let sp = SharedProducer::new(layout, RingPtr::new(0)).unwrap();
    let (w, r) = (AtomicU64::new(0), AtomicU64::new(0));
    let a = sp.reserve(4, &r).unwrap();
    let b = sp.reserve(4, &r).unwrap();
    assert_eq!((b.start().get(), b.end().get()), (16, 32));
    let mut rung = 0;
    let b = sp.try_publish(b, &w, |d| rung = d.value()).unwrap_err();
    assert_eq!((rung, w.load(Ordering::Relaxed)), (0, 0));
    sp.publish(a, &w, |d| rung = d.value());
    assert_eq!(rung, 16);
    sp.publish(b, &w, |d| rung = d.value());
    assert_eq!(
        (rung, w.load(Ordering::Relaxed), sp.committed().get()),
        (32, 32, 32)
    );
    // Overrun is refused without reserving anything.
    assert_eq!(
        sp.reserve_packets(9, [4, 5], &r).unwrap_err(),
        RingError::WouldOverrun {
            needed: 52,
            free: 32,
            unit: Unit::Bytes
        }
    );
    let c = sp.reserve(8, &r).unwrap();
    assert_eq!(c.start().get(), 32);
    sp.publish(c, &w, |_| {});
}

#[test]
fn errors_display_the_values() {
    let e = RingError::WouldOverrun {
        needed: 120,
        free: 100,
        unit: Unit::Dwords,
    };
    let mut buf = heapless::String::<128>::new();
    core::fmt::write(&mut buf, format_args!("{e}")).unwrap();
    assert_eq!(
        buf.as_str(),
        "submission needs 120 dwords but only 100 dwords are free: wait for the read pointer"
    );
}

/// Ring pointers compare by value: equal raw values are equal, different ones are not (the
/// producer and consumer compare them to tell a full ring from an empty one).
#[test]
fn ring_ptrs_compare_by_value() {
    assert_eq!(RingPtr::<Pm4>::new(7), RingPtr::new(7));
    assert_ne!(RingPtr::<Pm4>::new(7), RingPtr::new(8));
    assert_ne!(RingPtr::<Sdma>::new(0), RingPtr::new(1 << 32));
}
