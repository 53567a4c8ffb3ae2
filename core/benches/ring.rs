//! Hot-path costs of rings and arenas: reserve + copy + publish (+ doorbell store) of one
//! 105-dword kernel launch into a 1 MiB PM4 ring, the bare memcpy of those dwords for
//! comparison, the same through the multi-producer path, and a `TimelineArena` allocation.
//!
//! The GPU is modelled by a relaxed store of the read pointer every 256 submissions (the 1 MiB
//! ring holds 2496 launches; on hardware the GPU's progress costs the CPU nothing), so the
//! producer runs on its cached read pointer, as it does while the GPU keeps up.

use core::hint::black_box;
use core::time::Duration;
use criterion::{Criterion, criterion_group, criterion_main};
use hcq_core::ring::{Pm4, Producer, RingLayout, RingPtr, SharedProducer};
use hcq_core::sync::atomic::{AtomicU64, Ordering};
use hcq_core::timeline::{TimelineArena, TimelineValue};

const RING_BYTES: u64 = 1 << 20;
const LAUNCH: usize = 105;

fn launch() -> [u32; LAUNCH] {
    core::array::from_fn(|i| 0xC000_0000 | i as u32)
}

fn ring(c: &mut Criterion) {
    let data = launch();
    let layout = RingLayout::<Pm4>::new(RING_BYTES).unwrap();
    let size_dw = layout.size_dwords();

    let mut mem = vec![0u32; size_dw];
    let start = (2u64 << 32) - 1000; // past 2^32, as the seed's 64-bit doorbell test
    let mut p = Producer::new(layout, RingPtr::new(start)).unwrap();
    let (wptr, rptr, doorbell) = (
        AtomicU64::new(start),
        AtomicU64::new(start),
        AtomicU64::new(0),
    );
    let mut n = 0u32;
    c.bench_function(
        "ring: reserve+copy+publish+doorbell, 105 dwords, 1 MiB PM4",
        |b| {
            b.iter(|| {
                let db = p
                    .submit(&mut mem[..], &rptr, &wptr, black_box(&data))
                    .unwrap();
                doorbell.store(db.value(), Ordering::Release);
                n = n.wrapping_add(1);
                if n % 256 == 0 {
                    // The GPU caught up.
                    rptr.store(wptr.load(Ordering::Relaxed), Ordering::Relaxed);
                }
            });
        },
    );
    black_box(&mem);

    let mut mem = vec![0u32; size_dw];
    let mut at = 0usize;
    c.bench_function("memcpy 105 dwords (same ring positions)", |b| {
        b.iter(|| {
            if at + LAUNCH > size_dw {
                at = 0;
            }
            mem[at..at + LAUNCH].copy_from_slice(black_box(&data));
            at += LAUNCH;
        });
    });
    black_box(&mem);

    let mut mem = vec![0u32; size_dw];
    let sp = SharedProducer::new(layout, RingPtr::new(0)).unwrap();
    let (wptr, rptr) = (AtomicU64::new(0), AtomicU64::new(0));
    c.bench_function(
        "ring (multi-producer CAS path, 1 thread): 105 dwords",
        |b| {
            b.iter(|| {
                let g = sp.reserve(LAUNCH, &rptr).unwrap();
                let (head, tail) = g.ranges();
                let (lo, hi) = mem.split_at_mut(head.start);
                g.fill(&mut hi[..head.len()], &mut lo[tail], black_box(&data))
                    .unwrap();
                sp.publish(g, &wptr, |d| doorbell.store(d.value(), Ordering::Release));
                n = n.wrapping_add(1);
                if n % 256 == 0 {
                    rptr.store(wptr.load(Ordering::Relaxed), Ordering::Relaxed);
                }
            });
        },
    );
    black_box(&mem);
}

fn arena(c: &mut Criterion) {
    // Kernargs: 16 MiB, 8-byte alignment, a new submission every 4 allocations, the GPU two
    // submissions behind.
    let mut a = TimelineArena::<64>::new(16 << 20).unwrap();
    let mut n = 0u64;
    c.bench_function("TimelineArena alloc (256 B, align 8, 16 MiB)", |b| {
        b.iter(|| {
            n += 1;
            let tag = n / 4 + 2;
            let r = a
                .alloc(
                    black_box(256),
                    8,
                    TimelineValue::new(tag),
                    TimelineValue::new(tag - 2),
                )
                .unwrap();
            black_box(r);
        });
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    targets = ring, arena
}
criterion_main!(benches);
