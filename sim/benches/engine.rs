//! Engine throughput on a long PM4 stream of waits (satisfied), signals and NOPs, decoded in
//! place from ring memory. Budget: >= 100 M dwords/s (ARCHITECTURE.md).

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use hcq_core::arch::GFX11;
use hcq_core::pm4;
use hcq_core::sdma;
use hcq_core::signal::SignalRef;
use hcq_sim::engine::membus::{MemBus, Perms, Region};
use hcq_sim::engine::{Engines, GpuBus, QueueDesc, QueueId, QueueKind, SimMode};
use std::sync::Arc;

const RING_VA: u64 = 0x100_0000;
const RING_BYTES: u64 = 4 << 20;
const DATA_VA: u64 = 0x20_0000;

fn stream(kind: QueueKind) -> Vec<u32> {
    let w = SignalRef::new(DATA_VA);
    let s = SignalRef::new(DATA_VA + 0x40);
    let mut out = Vec::new();
    let mut b = [0u32; 64];
    let mut i = 0u64;
    while out.len() + 64 < (RING_BYTES / 4) as usize {
        i += 1;
        let n = match kind {
            // AQL rings are not benchmarked here: only PM4 and SDMA kinds reach this.
            QueueKind::Compute | QueueKind::Aql => {
                let mut n = pm4::wait(&mut b, &w, 0).unwrap();
                n += pm4::signal(&mut b[n..], &GFX11, &s, i).unwrap();
                n += pm4::nop(&mut b[n..], 4).unwrap();
                n
            }
            QueueKind::Sdma => {
                let mut n = sdma::wait(&mut b, &w, 0).unwrap();
                // CAST: i < 2^32 here.
                n += sdma::signal(&mut b[n..], &GFX11, &s, i as u32).unwrap();
                n += sdma::nop(&mut b[n..], 4).unwrap();
                n
            }
        };
        out.extend_from_slice(&b[..n]);
    }
    out
}

fn setup(kind: QueueKind) -> (Arc<MemBus>, usize) {
    let bus = MemBus::new(1);
    let ring = Region::new(RING_BYTES);
    let data = Region::new(0x1000);
    bus.map(RING_VA, RING_BYTES, &ring, Perms::RW).unwrap();
    bus.map(DATA_VA, 0x1000, &data, Perms::RW).unwrap();
    let s = stream(kind);
    bus.write(RING_VA, bytemuck::cast_slice(&s)).unwrap();
    (bus, s.len())
}

fn engines_for(bus: &Arc<MemBus>, kind: QueueKind, dwords: usize) -> Engines {
    let e = Engines::new(SimMode::Deterministic).expect("deterministic engines start no thread");
    let desc = QueueDesc {
        kind,
        arch: &GFX11,
        gfx940: true,
        ring_base: RING_VA,
        ring_size: RING_BYTES,
        rptr_addr: DATA_VA + 0x800,
        wptr_addr: DATA_VA + 0x808,
        doorbell_offset: 0,
        start: 0,
    };
    let b: Arc<dyn GpuBus> = bus.clone();
    e.add_queue(QueueId(0), desc, b).unwrap();
    let units = match kind {
        QueueKind::Compute | QueueKind::Aql => 1,
        QueueKind::Sdma => 4,
    };
    bus.ring_doorbell(0, dwords as u64 * units);
    e
}

fn thread_cpu_ns() -> u128 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    // CAST: non-negative by definition.
    t.tv_sec as u128 * 1_000_000_000 + t.tv_nsec as u128
}

/// Dwords per second of this thread's CPU time: the machine may be shared, so wall-clock
/// throughput (criterion's) understates the engine; this is the number to compare with the
/// budget.
fn cpu_time_throughput(kind: QueueKind) {
    let (bus, dwords) = setup(kind);
    let runs = 20;
    let mut cpu = 0u128;
    for _ in 0..runs {
        let e = engines_for(&bus, kind, dwords);
        let t0 = thread_cpu_ns();
        e.run_until_idle();
        cpu += thread_cpu_ns() - t0;
    }
    let total = dwords as f64 * f64::from(runs);
    println!(
        "engine/{kind}: {:.1} M dwords/s of thread CPU time ({} dwords x {runs} runs)",
        total / (cpu as f64 / 1e9) / 1e6,
        dwords
    );
}

fn bench(c: &mut Criterion) {
    cpu_time_throughput(QueueKind::Compute);
    cpu_time_throughput(QueueKind::Sdma);
    let mut g = c.benchmark_group("engine");
    for kind in [QueueKind::Compute, QueueKind::Sdma] {
        let (bus, dwords) = setup(kind);
        g.throughput(Throughput::Elements(dwords as u64));
        let name = format!("{kind}_wait_signal_nop_stream");
        let units = match kind {
            QueueKind::Compute | QueueKind::Aql => 1,
            QueueKind::Sdma => 4,
        };
        g.bench_function(name, |b| {
            b.iter_batched(
                || engines_for(&bus, kind, dwords),
                |e| {
                    e.run_until_idle();
                    assert_eq!(e.queue(QueueId(0)).unwrap().rptr, dwords as u64 * units);
                    e
                },
                BatchSize::LargeInput,
            );
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
