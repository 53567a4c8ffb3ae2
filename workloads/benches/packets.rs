//! Criterion benches of the hot paths in ARCHITECTURE.md's performance budgets: building a launch,
//! submitting it to a ring, patching it, building a 64 MiB SDMA copy, decoding, and the
//! kernargs arena. `cargo bench -p hcq-workloads --bench packets`.
//!
//! The workloads are the ones `hcq bench` times (the `hcq-workloads` crate), so
//! the two report the same work; `hcq bench` uses its own short loop, criterion gives
//! confidence intervals and change detection.

use core::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};

use hcq_workloads as work;

fn launch(c: &mut Criterion) {
    let mut g = c.benchmark_group("launch");
    let mut build = work::BuildLaunch::new().unwrap();
    g.bench_function("build_launch", |b| {
        b.iter(|| black_box(build.run().is_ok()))
    });
    let mut submit = work::RingSubmit::new().unwrap();
    g.bench_function("ring_submit", |b| {
        b.iter(|| black_box(submit.run().is_ok()))
    });
    let mut copy = work::Memcpy105::new().unwrap();
    g.bench_function("memcpy_105_dwords", |b| b.iter(|| black_box(copy.run())));
    g.finish();
}

fn patch(c: &mut Criterion) {
    let mut g = c.benchmark_group("patch");
    let mut p = work::PatchLaunch::new().unwrap();
    g.bench_function("update_exec", |b| {
        b.iter(|| black_box(p.update_exec().is_ok()))
    });
    g.bench_function("update_wait", |b| {
        b.iter(|| black_box(p.update_wait().is_ok()))
    });
    g.bench_function("update_signal", |b| {
        b.iter(|| black_box(p.update_signal().is_ok()))
    });
    g.finish();
}

fn sdma(c: &mut Criterion) {
    let mut s = work::SdmaCopy::new().unwrap();
    c.bench_function("sdma_copy_64mib_build", |b| {
        b.iter(|| black_box(s.run().is_ok()))
    });
}

fn decode(c: &mut Criterion) {
    let d = work::Decode::new().unwrap();
    let mut g = c.benchmark_group("decode");
    g.throughput(Throughput::Elements(u64::try_from(d.dwords()).unwrap()));
    g.bench_function("pm4_launch_stream", |b| {
        b.iter(|| black_box(d.run().is_some()))
    });
    g.finish();
}

fn arena(c: &mut Criterion) {
    let mut a = work::ArenaAlloc::new().unwrap();
    c.bench_function("arena_alloc", |b| b.iter(|| black_box(a.run().is_ok())));
}

criterion_group!(benches, launch, patch, sdma, decode, arena);
criterion_main!(benches);
