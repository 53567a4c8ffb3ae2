//! Harnesses for the ring and the timeline arena: structured operations against plain models.
//!
//! * [`ring_wrap`]: PM4 or SDMA ring of 4..512 dwords at any start pointer (including near
//!   2^32 and 2^64), random submissions (packet lists) and a consumer lagging by random
//!   amounts. The consumer must read back exactly what was submitted (with SDMA zero padding
//!   only at packet boundaries), nothing unread may be overwritten, a refusal must match the
//!   model and write nothing.
//! * [`arena`]: random allocations, submissions and completions on a `TimelineArena`; a region
//!   never overlaps one whose tag is incomplete, and `MustWait` is honest and sufficient.

use arbitrary::{Arbitrary, Unstructured};
use hcq_core::ring::{Consumer, Pm4, Producer, RingError, RingKind, RingLayout, RingPtr, Sdma};
use hcq_core::sync::atomic::{AtomicU64, Ordering};
use hcq_core::timeline::{ArenaError, Region, TimelineArena, TimelineValue};
use std::collections::VecDeque;

/// One ring step.
#[derive(Arbitrary, Debug, Clone)]
pub enum RingOp {
    /// Submit packets of these lengths (each 1..=64 dwords).
    Submit(Vec<u8>),
    /// Consume `n * readable / 255` dwords.
    Consume(u8),
}

/// The ring harness input.
#[derive(Arbitrary, Debug, Clone)]
pub struct RingInput {
    sdma: bool,
    size_log: u8,
    start: u64,
    ops: Vec<RingOp>,
}

/// Ring harness.
pub fn ring_wrap(data: &[u8]) {
    let Ok(input) = RingInput::arbitrary(&mut Unstructured::new(data)) else {
        return;
    };
    let size_dw = 1usize << (2 + input.size_log % 8); // 4..=512 dwords
    if input.sdma {
        run::<Sdma>(size_dw, input.start & !3, &input.ops);
    } else {
        run::<Pm4>(size_dw, input.start, &input.ops);
    }
}

fn run<K: RingKind>(size_dw: usize, start: u64, ops: &[RingOp]) {
    let upd = K::UNITS_PER_DWORD;
    let size = size_dw as u64 * upd;
    let layout = RingLayout::<K>::new(size_dw as u64 * 4).expect("power of two");
    let mut prod = Producer::new(layout, RingPtr::new(start)).expect("aligned start");
    let mut cons = Consumer::new(layout, RingPtr::new(start)).expect("aligned start");
    let (wptr, rptr) = (AtomicU64::new(start), AtomicU64::new(start));
    let mut mem = vec![0xBAD0_0000u32; size_dw];
    let (mut w, mut r) = (start, start);
    let mut expected: VecDeque<u32> = VecDeque::new();
    let mut unread = vec![false; size_dw];
    let mut word = 0u32;
    for op in ops.iter().take(256) {
        match op {
            RingOp::Submit(lens) => {
                let packets: Vec<usize> = lens
                    .iter()
                    .take(8)
                    .map(|&l| usize::from(l % 64) + 1)
                    .collect();
                let len: usize = packets.iter().sum();
                let data: Vec<u32> = (0..len)
                    .map(|_| {
                        word = word.wrapping_add(1) | 1; // never 0, so padding is recognisable
                        word
                    })
                    .collect();
                let idx = ((w % size) / upd) as usize;
                let room = size_dw - idx;
                let (split, pad) = if len <= room || K::SPLITS_PACKETS {
                    (len.min(room), 0)
                } else {
                    let mut fit = 0;
                    for &p in &packets {
                        if fit + p > room {
                            break;
                        }
                        fit += p;
                    }
                    (fit, room - fit)
                };
                let needed = (len + pad) as u64 * upd;
                let free = size - w.wrapping_sub(r);
                let before = mem.clone();
                let res =
                    prod.submit_packets(&mut mem[..], &rptr, &wptr, &data, packets.iter().copied());
                if needed > size {
                    assert_eq!(
                        res.unwrap_err(),
                        RingError::TooLarge {
                            needed,
                            size,
                            unit: K::UNIT
                        }
                    );
                    assert_eq!(mem, before);
                    continue;
                }
                if needed > free {
                    assert_eq!(
                        res.unwrap_err(),
                        RingError::WouldOverrun {
                            needed,
                            free,
                            unit: K::UNIT
                        }
                    );
                    assert_eq!(mem, before);
                    continue;
                }
                let db = res.expect("model says it fits");
                assert_eq!(db.value(), w.wrapping_add(needed));
                assert_eq!(wptr.load(Ordering::Relaxed), w.wrapping_add(needed));
                if !K::SPLITS_PACKETS && split < len {
                    let mut acc = 0;
                    assert!(
                        split == 0
                            || packets.iter().any(|&p| {
                                acc += p;
                                acc == split
                            }),
                        "SDMA packet split by the end of the ring"
                    );
                }
                let mut stream: Vec<u32> = data[..split].to_vec();
                stream.extend(core::iter::repeat_n(0, pad));
                stream.extend_from_slice(&data[split..]);
                for (k, &v) in stream.iter().enumerate() {
                    let i = (idx + k) % size_dw;
                    assert!(!unread[i], "unread slot {i} overwritten");
                    assert_eq!(mem[i], v);
                    unread[i] = true;
                }
                for i in 0..size_dw {
                    if !unread[i] {
                        assert_eq!(mem[i], before[i], "slot {i} outside the grant changed");
                    }
                }
                expected.extend(stream);
                w = w.wrapping_add(needed);
            }
            RingOp::Consume(frac) => {
                let rd = cons.readable(&wptr).expect("consistent pointers");
                assert_eq!(rd.len() as u64 * upd, w.wrapping_sub(r));
                let n = rd.len() * usize::from(*frac) / 255;
                let idxs: Vec<usize> = rd.head.chain(rd.tail).take(n).collect();
                for i in idxs {
                    assert_eq!(Some(mem[i]), expected.pop_front());
                    unread[i] = false;
                }
                cons.consume(n as u64, &rptr).expect("readable");
                r = r.wrapping_add(n as u64 * upd);
            }
        }
        assert!(w.wrapping_sub(r) <= size, "free space went negative");
        assert_eq!(expected.len() as u64 * upd, w.wrapping_sub(r));
    }
}

/// One arena step.
#[derive(Arbitrary, Debug, Clone)]
pub enum ArenaOp {
    /// Allocate `size` bytes at alignment `1 << (align_log % 12)`.
    Alloc {
        /// Bytes.
        size: u16,
        /// log2 of the alignment.
        align_log: u8,
    },
    /// Start the next submission (later allocations get the next tag).
    Submit,
    /// The GPU completes this many submissions.
    Complete(u8),
}

/// The arena harness input.
#[derive(Arbitrary, Debug, Clone)]
pub struct ArenaInput {
    cap_log: u8,
    ops: Vec<ArenaOp>,
}

/// Arena harness.
pub fn arena(data: &[u8]) {
    let Ok(input) = ArenaInput::arbitrary(&mut Unstructured::new(data)) else {
        return;
    };
    let cap = 1u64 << (4 + input.cap_log % 13); // 16 B ..= 64 KiB
    let mut a = TimelineArena::<4>::new(cap).expect("power of two");
    let (mut tag, mut done) = (1u64, 0u64);
    let mut handed: Vec<(Region, u64)> = Vec::new();
    for op in input.ops.iter().take(512) {
        match *op {
            ArenaOp::Submit => tag += 1,
            ArenaOp::Complete(n) => done = (done + u64::from(n)).min(tag - 1),
            ArenaOp::Alloc { size, align_log } => {
                let size = u64::from(size);
                let align = 1u64 << (align_log % 12);
                let res = a.alloc(
                    size,
                    align,
                    TimelineValue::new(tag),
                    TimelineValue::new(done),
                );
                if align > cap {
                    assert_eq!(res, Err(ArenaError::BadAlign { align }));
                    continue;
                }
                if size > cap {
                    assert_eq!(
                        res,
                        Err(ArenaError::TooLarge {
                            size,
                            capacity: cap
                        })
                    );
                    continue;
                }
                match res {
                    Ok(reg) => {
                        assert_eq!(reg.size, size);
                        assert_eq!(reg.offset % align, 0);
                        assert!(reg.offset + size <= cap);
                        for &(old, t) in &handed {
                            let overlap = reg.offset < old.offset + old.size
                                && old.offset < reg.offset + size;
                            assert!(
                                !(overlap && t > done),
                                "{reg:?} overlaps {old:?} of incomplete tag {t}"
                            );
                        }
                        handed.retain(|&(_, t)| t > done);
                        handed.push((reg, tag));
                    }
                    Err(ArenaError::MustWait { value }) => {
                        assert!(value.get() > done && value.get() <= tag);
                        let mut later = a.clone();
                        assert!(
                            later
                                .alloc(size, align, TimelineValue::new(tag), value)
                                .is_ok(),
                            "waiting for {value:?} was not enough"
                        );
                        if value.get() == tag {
                            tag += 1;
                        }
                        done = value.get();
                    }
                    Err(e) => panic!("unexpected {e}"),
                }
            }
        }
        assert!(a.in_use() <= cap);
    }
}
