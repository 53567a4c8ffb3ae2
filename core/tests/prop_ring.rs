//! Random reserve / publish / consume sequences against a plain model of the ring.
//!
//! The consumer lags by random amounts. Checked after every step: the consumer reads back
//! exactly the packets submitted, in order; no SDMA packet is split by the end of the ring;
//! nothing unread is overwritten; free space is never negative; a submission is refused exactly
//! when the model says it does not fit, and a refusal writes nothing.

use hcq_core::ring::{
    Consumer, Pm4, Producer, RingError, RingKind, RingLayout, RingPtr, Sdma, SharedProducer,
};
use hcq_core::sync::atomic::{AtomicU64, Ordering};
use proptest::prelude::*;
use std::collections::VecDeque;

/// Fewer cases under miri (each case runs thousands of ring operations there too).
fn config() -> ProptestConfig {
    ProptestConfig {
        cases: if cfg!(miri) { 3 } else { 256 },
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

#[derive(Clone, Debug)]
enum Op {
    /// Submit packets of these lengths (dwords).
    Submit(Vec<usize>),
    /// Consume this fraction (0..=8 eighths) of what is readable.
    Consume(u8),
}

fn ops(max_packet: usize) -> impl Strategy<Value = Vec<Op>> {
    let op = prop_oneof![
        3 => prop::collection::vec(1..=max_packet, 1..5).prop_map(Op::Submit),
        2 => (0u8..=8).prop_map(Op::Consume),
    ];
    prop::collection::vec(op, 1..if cfg!(miri) { 30 } else { 120 })
}

/// Runs `ops` on a ring of `size_dw` dwords starting at pointer `start` (in `K` units).
fn run<K: RingKind>(size_dw: usize, start: u64, ops: &[Op]) -> Result<(), TestCaseError> {
    let upd = K::UNITS_PER_DWORD;
    let start = start * upd;
    let size_units = size_dw as u64 * upd;
    let layout = RingLayout::<K>::new(size_dw as u64 * 4).unwrap();
    let mut prod = Producer::new(layout, RingPtr::new(start)).unwrap();
    let mut cons = Consumer::new(layout, RingPtr::new(start)).unwrap();
    let (wptr, rptr) = (AtomicU64::new(start), AtomicU64::new(start));
    let mut mem = vec![0xBAD0_0000u32; size_dw];
    // Model: write/read pointers, the dword stream still to be read, and which slots hold it.
    let (mut w, mut r) = (start, start);
    let mut expected: VecDeque<u32> = VecDeque::new();
    let mut unread = vec![false; size_dw];
    let mut next_word = 1u32;

    for op in ops {
        match op {
            Op::Submit(packets) => {
                let len: usize = packets.iter().sum();
                let data: Vec<u32> = (0..len)
                    .map(|_| {
                        next_word += 1;
                        next_word
                    })
                    .collect();
                // The model's decision.
                let idx = ((w % size_units) / upd) as usize;
                let room = size_dw - idx;
                let (split, pad) = if len <= room || K::SPLITS_PACKETS {
                    (len.min(room), 0)
                } else {
                    let mut fit = 0;
                    for &p in packets {
                        if fit + p > room {
                            break;
                        }
                        fit += p;
                    }
                    (fit, room - fit)
                };
                let needed = (len + pad) as u64 * upd;
                let free = size_units - w.wrapping_sub(r);
                let before = mem.clone();
                let res =
                    prod.submit_packets(&mut mem[..], &rptr, &wptr, &data, packets.iter().copied());
                if needed > size_units {
                    prop_assert_eq!(
                        res.unwrap_err(),
                        RingError::TooLarge {
                            needed,
                            size: size_units,
                            unit: K::UNIT
                        }
                    );
                    prop_assert_eq!(&mem, &before);
                    continue;
                }
                if needed > free {
                    prop_assert_eq!(
                        res.unwrap_err(),
                        RingError::WouldOverrun {
                            needed,
                            free,
                            unit: K::UNIT
                        }
                    );
                    prop_assert_eq!(&mem, &before);
                    prop_assert_eq!(wptr.load(Ordering::Relaxed), w);
                    continue;
                }
                let db = res.map_err(|e| TestCaseError::fail(format!("{e}")))?;
                prop_assert_eq!(db.value(), w.wrapping_add(needed));
                prop_assert_eq!(wptr.load(Ordering::Relaxed), w.wrapping_add(needed));
                // No SDMA packet crosses the end: the split is a packet boundary.
                if !K::SPLITS_PACKETS && split < len {
                    let mut acc = 0;
                    let boundary = packets.iter().any(|&p| {
                        acc += p;
                        acc == split
                    }) || split == 0;
                    prop_assert!(boundary, "split {} is inside a packet", split);
                }
                // Nothing unread was overwritten; everything else is what we wrote.
                let mut stream: Vec<u32> = data[..split].to_vec();
                stream.extend(core::iter::repeat_n(0, pad));
                stream.extend_from_slice(&data[split..]);
                for (k, &v) in stream.iter().enumerate() {
                    let i = (idx + k) % size_dw;
                    prop_assert!(!unread[i], "slot {} overwritten before it was read", i);
                    prop_assert_eq!(mem[i], v);
                    unread[i] = true;
                }
                for i in 0..size_dw {
                    if !unread[i] {
                        prop_assert_eq!(mem[i], before[i], "slot {} outside the grant changed", i);
                    }
                }
                expected.extend(stream);
                w = w.wrapping_add(needed);
            }
            Op::Consume(eighths) => {
                let rd = cons.readable(&wptr).unwrap();
                prop_assert_eq!(rd.len() as u64 * upd, w.wrapping_sub(r));
                let n = rd.len() * usize::from(*eighths) / 8;
                let got: Vec<u32> = rd
                    .head
                    .clone()
                    .chain(rd.tail.clone())
                    .take(n)
                    .map(|i| mem[i])
                    .collect();
                let want: Vec<u32> = expected.drain(..n).collect();
                prop_assert_eq!(got, want);
                for i in rd.head.chain(rd.tail).take(n) {
                    unread[i] = false;
                }
                cons.consume(n as u64, &rptr).unwrap();
                r = r.wrapping_add(n as u64 * upd);
                prop_assert_eq!(rptr.load(Ordering::Relaxed), r);
            }
        }
        // Free space never negative.
        prop_assert!(w.wrapping_sub(r) <= size_units);
        prop_assert_eq!(expected.len() as u64 * upd, w.wrapping_sub(r));
    }
    Ok(())
}

fn starts() -> impl Strategy<Value = u64> {
    prop_oneof![
        Just(0u64),
        0u64..1000,
        ((2u64 << 32) - 300)..((2u64 << 32) + 300),
        // Near the end of the u64 range (in dwords; SDMA multiplies by 4).
        ((u64::MAX / 4) - 500)..=(u64::MAX / 4),
    ]
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn pm4_model(size_log in 4u32..9, start in starts(), ops in ops(40)) {
        run::<Pm4>(1 << size_log, start, &ops)?;
    }

    #[test]
    fn sdma_model(size_log in 4u32..9, start in starts(), ops in ops(40)) {
        run::<Sdma>(1 << size_log, start, &ops)?;
    }

    /// Several producers, interleaved by the test: grants are reserved in one order and
    /// offered for publication in a random order; only the oldest may publish, the write
    /// pointer and doorbell only move forward, and reservations never overlap.
    #[test]
    fn shared_producers_in_order(
        lens in prop::collection::vec(1usize..10, 1..12),
        picks in prop::collection::vec(any::<prop::sample::Index>(), 1..40),
    ) {
        let layout = RingLayout::<Sdma>::new(256).unwrap();
        let sp = SharedProducer::new(layout, RingPtr::new(4 << 32)).unwrap();
        let (wptr, rptr) = (AtomicU64::new(4 << 32), AtomicU64::new(4 << 32));
        let mut pending = VecDeque::new();
        for &len in &lens {
            match sp.reserve(len, &rptr) {
                Ok(g) => {
                    if let Some(prev) = pending.back() {
                        let prev: &hcq_core::ring::Grant<Sdma> = prev;
                        prop_assert_eq!(g.start(), prev.end());
                    }
                    pending.push_back(g);
                }
                Err(RingError::WouldOverrun { .. }) => break,
                Err(e) => return Err(TestCaseError::fail(format!("{e}"))),
            }
        }
        let mut last_doorbell = wptr.load(Ordering::Relaxed);
        let mut picks = picks.into_iter();
        while !pending.is_empty() {
            let i = picks.next().map_or(0, |p| p.index(pending.len()));
            let g = pending.remove(i).unwrap();
            let end = g.end().get();
            let mut rung = None;
            match sp.try_publish(g, &wptr, |d| rung = Some(d.value())) {
                Ok(()) => {
                    prop_assert_eq!(i, 0, "a later grant published first");
                    prop_assert_eq!(rung, Some(end));
                    prop_assert!(end > last_doorbell);
                    last_doorbell = end;
                    prop_assert_eq!(wptr.load(Ordering::Relaxed), end);
                }
                Err(g) => {
                    prop_assert!(i != 0);
                    prop_assert_eq!(rung, None);
                    pending.insert(i, g);
                }
            }
        }
        prop_assert_eq!(sp.committed().get(), last_doorbell);
    }
}
