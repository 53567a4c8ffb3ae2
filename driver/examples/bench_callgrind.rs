//! Runs each `hcq bench` core workload a fixed number of times, each call behind its own
//! `#[inline(never)]` function, so callgrind reports repeatable instructions per call:
//!
//! ```text
//! cargo build --release -p hcq-driver --example bench_callgrind
//! valgrind --tool=callgrind --callgrind-out-file=cg.out target/release/examples/bench_callgrind
//! callgrind_annotate --inclusive=yes cg.out | grep bench_callgrind::
//! ```
//!
//! Each `bench_callgrind::<name>` line is `ITERS` calls: divide by 100 000. The graph patches
//! (`graph_patch_1000_ns`, `graph_timeline_patch_ns`) are the `hcq` binary's own workloads
//! (`src/cli/bench/graph.rs`, not library API): profile them with
//! `valgrind --tool=callgrind target/release/hcq bench --quick`.

use core::hint::black_box;

use hcq_workloads as work;

const ITERS: usize = 100_000;

#[inline(never)]
fn build_launch(w: &mut work::BuildLaunch) {
    black_box(w.run().is_ok());
}
#[inline(never)]
fn ring_submit(w: &mut work::RingSubmit) {
    black_box(w.run().is_ok());
}
#[inline(never)]
fn memcpy_105(w: &mut work::Memcpy105) {
    black_box(w.run());
}
#[inline(never)]
fn update_exec(w: &mut work::PatchLaunch) {
    black_box(w.update_exec().is_ok());
}
#[inline(never)]
fn update_wait(w: &mut work::PatchLaunch) {
    black_box(w.update_wait().is_ok());
}
#[inline(never)]
fn update_signal(w: &mut work::PatchLaunch) {
    black_box(w.update_signal().is_ok());
}
#[inline(never)]
fn sdma_copy_64mib(w: &mut work::SdmaCopy) {
    black_box(w.run().is_ok());
}
#[inline(never)]
fn arena_alloc(w: &mut work::ArenaAlloc) {
    black_box(w.run().is_ok());
}

fn main() -> Result<(), work::WorkError> {
    let mut b = work::BuildLaunch::new()?;
    let mut r = work::RingSubmit::new()?;
    let mut m = work::Memcpy105::new()?;
    let mut p = work::PatchLaunch::new()?;
    let mut s = work::SdmaCopy::new()?;
    let mut a = work::ArenaAlloc::new()?;
    for _ in 0..ITERS {
        build_launch(&mut b);
        ring_submit(&mut r);
        memcpy_105(&mut m);
        update_exec(&mut p);
        update_wait(&mut p);
        update_signal(&mut p);
        sdma_copy_64mib(&mut s);
        arena_alloc(&mut a);
    }
    Ok(())
}
