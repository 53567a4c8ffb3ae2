//! Seeded bugs in hcq's AQL path (issue 44), each armed in the driver's real code and judged
//! by the simulator's AQL packet processor, on an 8-XCC gfx942 (AQL chosen by the device):
//! - an AQL launch without its HDP flush (`LaunchWithoutBarrier` on the AQL path): the
//!   dispatch reads kernargs the CPU wrote into VRAM still in HDP, and the fault names them;
//! - a producer without back-pressure (`AqlOverwritesUnread`): packets written over slots
//!   `read_dispatch_id` has not passed; the simulator faults the queue naming the ring
//!   overrun, and the report's AQL queue pointers show more packets published than the ring
//!   holds;
//! - a launch that leaves out its timeline wait after a copy (`AqlLaunchSkipsCopyWait`: the
//!   wait is redundant only after the AQL ring's own signal, which the dispatch's barrier bit
//!   orders): the dispatch runs before the copy it should have waited for, and the simulator
//!   names the kernel, the copy's fence and the value.
//! - a graph whose kernel dispatch packets lack the barrier bit and fences
//!   (`AqlGraphDispatchWithoutBarrier`): a replay's dispatch overlaps the one before it, and
//!   the simulator names the race on the buffer one writes and the other reads;
//! - a graph replay that patches before the previous replay completed
//!   (`GraphReplayPatchesEarly`, on the AQL queue and on a gfx1100's PM4 queue): the host's
//!   write of a new kernel argument races the queued dispatch that reads the old one.

#[allow(unused_macros, unused_imports)]
mod hcq_common;

use core::time::Duration;
use hcq_common::{SimMode, programs, write_u32s};
use hcq_driver::seeded::{Bug, arm};
use hcq_driver::{BufferKind, Device, DeviceOptions, Error, GpuBuffer, Program};
use hcq_sim::{GpuConfig, SimConfig};
use hcq_tests::Rig;
use hcq_tests::fixtures as kernels;

/// Faults come back long before this; a verdict that needs it is a missed bug.
const SHORT: Duration = Duration::from_secs(5);

fn mi300x(mode: SimMode) -> Rig {
    Rig::with_config(
        SimConfig {
            mode,
            strict: true,
            gpus: vec![GpuConfig::gfx942()],
            xcc: 8,
            ..SimConfig::default()
        },
        SHORT,
    )
}

fn launch_fill(fill: &Program, out: &GpuBuffer, value: u32, n: u32) -> hcq_driver::Result<()> {
    let args = kernels::FillArgs {
        buf: out.va().get(),
        value,
        n,
    };
    // SAFETY: fill writes n u32s at `out`, which holds at least n and outlives the launch
    // (the callers synchronize before dropping it).
    unsafe { fill.launch_pod(&args, [n.div_ceil(64), 1, 1], [64, 1, 1]) }.map(|_| ())
}

/// Bug: the AQL launch's first PM4_IB packet has no HDP flush. The kernel's kernarg read
/// faults, naming the missing flush and an address in the kernargs' page.
fn aql_launch_without_hdp_flush(mode: SimMode) {
    let r = mi300x(mode);
    let dev = Device::open(&r.kfd, 0).unwrap();
    assert!(dev.is_aql());
    let out = dev.alloc(64 * 4, BufferKind::Gtt).unwrap();
    let (fill, _) = programs(&dev);
    launch_fill(&fill, &out, 1, 64).unwrap();
    dev.synchronize().unwrap();
    let _bug = arm(Bug::LaunchWithoutBarrier);
    let res = launch_fill(&fill, &out, 2, 64).and_then(|()| dev.synchronize());
    let text = match res {
        Err(e @ Error::DeviceFault(_)) => e.to_string(),
        other => panic!("expected a device fault naming the missing HDP flush, got {other:?}"),
    };
    assert!(
        text.contains("missing HDP flush before the GPU read"),
        "{text}"
    );
}

/// Bug: no back-pressure. 40 launches (120 packets) on a 64-slot ring with the deterministic
/// simulator (which runs only inside the driver's waits): without the bug the producer waits
/// for `read_dispatch_id` and everything completes; with it the last launches overwrite the
/// first ones' slots: the simulator faults the queue naming the overrun, and the report shows
/// the AQL queue's write index more than a ring ahead of its read index.
fn aql_ring_overwrites_unread_packets() {
    let opts = DeviceOptions {
        compute_ring_size: 4096,
        ..DeviceOptions::default()
    };
    let run = |bug: bool| {
        let r = mi300x(SimMode::Deterministic);
        let dev = Device::open_with(&r.kfd, 0, opts).unwrap();
        let out = dev.alloc(64 * 4, BufferKind::Gtt).unwrap();
        let (fill, _) = programs(&dev);
        dev.synchronize().unwrap();
        let armed = bug.then(|| arm(Bug::AqlOverwritesUnread));
        for i in 0..40 {
            launch_fill(&fill, &out, i, 64).unwrap();
        }
        drop(armed);
        let res = dev.synchronize();
        (res, dev.queue_states())
    };
    let (ok, _) = run(false);
    ok.unwrap();
    let (res, states) = run(true);
    let rep = match res {
        Err(Error::DeviceFault(rep)) => rep,
        other => panic!("expected the simulator to fault the overrun ring, got {other:?}"),
    };
    let why = rep.fault.clone().unwrap_or_default();
    assert!(
        why.contains("ring overrun, the producer wrote over")
            && why.contains("packets of commands the CP had not read"),
        "{why}"
    );
    let q = rep
        .queues
        .iter()
        .chain(&states)
        .find(|q| q.name.contains("(AQL"))
        .unwrap_or_else(|| panic!("no AQL queue in {rep:?}"));
    assert!(
        q.wptr - q.rptr > 64,
        "write_dispatch_id {} is more than the ring's 64 slots past read_dispatch_id {}: {rep:?}",
        q.wptr,
        q.rptr
    );
}

/// Bug: an AQL launch skips its wait for the previous timeline value although that value is
/// the copy queue's (`copy_in` returns once the copy is queued). Without the bug the launch
/// reads what the copies wrote; with it the dispatch runs before the copy's fence, and the
/// fault names the copy's SDMA FENCE writing its value below the launch's signal, and (on a
/// one-XCC GPU, whose signal history the judge can follow) the dispatch that ran before the
/// value it should have waited for.
fn aql_launch_after_a_copy_without_its_wait(xcc8: bool) {
    let run = |bug: bool| {
        let (r, opts) = if xcc8 {
            (mi300x(SimMode::Deterministic), DeviceOptions::default())
        } else {
            let r = Rig::with_config(
                SimConfig {
                    mode: SimMode::Deterministic,
                    strict: true,
                    gpus: vec![GpuConfig::gfx1100()],
                    ..SimConfig::default()
                },
                SHORT,
            );
            let opts = DeviceOptions {
                compute_queue: hcq_driver::ComputeQueueKind::Aql,
                ..DeviceOptions::default()
            };
            (r, opts)
        };
        let dev = Device::open_with(&r.kfd, 0, opts).unwrap();
        assert!(dev.is_aql());
        let (_, add) = programs(&dev);
        let n = 256u32;
        let a: Vec<u32> = (0..n).collect();
        let bufs: Vec<GpuBuffer> = (0..3)
            .map(|_| dev.alloc(u64::from(n) * 4, BufferKind::Vram).unwrap())
            .collect();
        dev.synchronize().unwrap();
        for b in &bufs {
            write_u32s(&dev, b, &a);
        }
        let armed = bug.then(|| arm(Bug::AqlLaunchSkipsCopyWait));
        let args = kernels::VectorAddArgs {
            a: bufs[0].va().get(),
            b: bufs[1].va().get(),
            c: bufs[2].va().get(),
            n,
        };
        // SAFETY: a, b and c hold n u32s and outlive the launch (waited for below).
        let res = unsafe { add.launch_pod(&args, [n / 64, 1, 1], [64, 1, 1]) }
            .and_then(|v| dev.wait_value(v));
        drop(armed);
        let launched = dev.last_value().get();
        let got = res
            .is_ok()
            .then(|| hcq_common::read_u32s(&dev, &bufs[2], n as usize));
        (res, launched, got)
    };
    let (ok, _, got) = run(false);
    ok.unwrap();
    assert_eq!(got, Some((0..256u32).map(|i| 2 * i).collect::<Vec<_>>()));
    let (res, launched, _) = run(true);
    let text = match res {
        Err(e @ Error::DeviceFault(_)) => e.to_string(),
        other => panic!("expected a device fault naming the skipped wait, got {other:?}"),
    };
    let copied = launched - 1;
    assert!(
        text.contains("goes down: SDMA FENCE (SDMA queue 1 of GPU")
            && text.contains(&format!(
                "writes {copied} over {launched}, which RELEASE_MEM (AQL queue"
            )),
        "{text}"
    );
    assert!(
        xcc8 || text.contains(&format!(
            "ran before the value it should have waited for: {copied}, which SDMA FENCE (SDMA queue"
        )),
        "{text}"
    );
}

#[test]
fn aql_launch_skipping_a_copys_wait_is_caught_gfx1100() {
    aql_launch_after_a_copy_without_its_wait(false);
}

#[test]
fn aql_launch_skipping_a_copys_wait_is_caught_mi300x() {
    aql_launch_after_a_copy_without_its_wait(true);
}

#[test]
fn aql_launch_without_hdp_flush_deterministic() {
    aql_launch_without_hdp_flush(SimMode::Deterministic);
}

#[test]
fn aql_launch_without_hdp_flush_threaded() {
    aql_launch_without_hdp_flush(SimMode::Threaded);
}

#[test]
fn aql_ring_overwrite_is_caught() {
    aql_ring_overwrites_unread_packets();
}

/// Bug: a graph's kernel dispatch packets recorded without the barrier bit and fences
/// (`AqlGraphDispatchWithoutBarrier`). The graph fills `a`, then adds `a` and `b` into `c`:
/// without the bug every replay is right; with it the add is dispatched while the fill may
/// still run, and the simulator names the race between the two dispatches on `a`.
fn aql_graph_dispatch_without_barrier(mode: SimMode) {
    use hcq_driver::graph::{
        Arg, BufArg, DimLimits, Dims, DimsArg, Graph, GraphBuilder, ScalarArg,
    };
    let run = |bug: bool| -> hcq_driver::Result<()> {
        let r = mi300x(mode);
        let dev = Device::open(&r.kfd, 0).unwrap();
        let buf = || dev.alloc(256 * 4, BufferKind::Vram).unwrap();
        let (a, b, c) = (buf(), buf(), buf());
        let (fill, add) = programs(&dev);
        dev.synchronize().unwrap();
        let d = DimsArg::Fixed(Dims {
            global: [4, 1, 1],
            local: [64, 1, 1],
        });
        let fixed = |x: &GpuBuffer| Arg::Buf(BufArg::Fixed(x.va()));
        let mut g = GraphBuilder::new(dev.arch());
        let armed = bug.then(|| arm(Bug::AqlGraphDispatchWithoutBarrier));
        g.launch(
            &fill.pm4_program(),
            DimLimits::AMD,
            &[
                fixed(&a),
                Arg::U32(ScalarArg::Fixed(5)),
                Arg::U32(ScalarArg::Fixed(256)),
            ],
            d,
        )
        .unwrap();
        g.launch(
            &add.pm4_program(),
            DimLimits::AMD,
            &[
                fixed(&a),
                fixed(&b),
                fixed(&c),
                Arg::U32(ScalarArg::Fixed(256)),
            ],
            d,
        )
        .unwrap();
        let mut graph = Graph::record(&dev, &g)?;
        drop(armed);
        for _ in 0..3 {
            // SAFETY: the kernels touch 256 u32s of a, b and c, which outlive the replays
            // (synchronized below).
            unsafe { graph.replay(&[]) }?;
        }
        dev.synchronize()
    };
    run(false).unwrap();
    let text = match run(true) {
        Err(e @ Error::DeviceFault(_)) => e.to_string(),
        other => panic!("expected a device fault naming the race, got {other:?}"),
    };
    assert!(
        text.contains("race: the dispatch of the kernel at")
            && text.contains(") reads")
            && text.contains(") writes")
            && text.contains("and nothing orders them")
            && text.contains("the later packet's barrier bit"),
        "{text}"
    );
}

#[test]
fn aql_graph_dispatch_without_barrier_deterministic() {
    aql_graph_dispatch_without_barrier(SimMode::Deterministic);
}

#[test]
fn aql_graph_dispatch_without_barrier_threaded() {
    aql_graph_dispatch_without_barrier(SimMode::Threaded);
}

/// Bug: a replay patches without waiting for the previous replay of the same graph
/// (`GraphReplayPatchesEarly`). Two replays with different fill values are submitted back to
/// back: without the bug the second waits, then patches; with it the second replay's host
/// write of the fill value lands in the kernargs while the first replay's queued dispatch has
/// yet to read them, and the simulator names that host write and the dispatch it races. On
/// the MI300X's AQL queue and on a gfx1100's PM4 queue (`pm4`), where the graph is one IB.
fn graph_replay_patches_early(mode: SimMode, pm4: bool) {
    use hcq_driver::graph::{
        Arg, BufArg, DimLimits, Dims, DimsArg, Graph, GraphBuilder, ScalarArg, Value,
    };
    let run = |bug: bool| -> hcq_driver::Result<Vec<u32>> {
        let r = if pm4 {
            hcq_common::rig(mode, 1, SHORT)
        } else {
            mi300x(mode)
        };
        let dev = Device::open(&r.kfd, 0).unwrap();
        assert_eq!(dev.is_aql(), !pm4);
        let a = dev.alloc(256 * 4, BufferKind::Vram).unwrap();
        let (fill, _) = programs(&dev);
        dev.synchronize().unwrap();
        let mut g = GraphBuilder::new(dev.arch());
        let value = g.scalar(1).unwrap();
        g.launch(
            &fill.pm4_program(),
            DimLimits::AMD,
            &[
                Arg::Buf(BufArg::Fixed(a.va())),
                Arg::U32(ScalarArg::Var(value)),
                Arg::U32(ScalarArg::Fixed(256)),
            ],
            DimsArg::Fixed(Dims {
                global: [4, 1, 1],
                local: [64, 1, 1],
            }),
        )
        .unwrap();
        let mut graph = Graph::record(&dev, &g)?;
        let armed = bug.then(|| arm(Bug::GraphReplayPatchesEarly));
        for v in [2u64, 3] {
            // SAFETY: the kernel fills 256 u32s of `a`, which outlives the replays
            // (synchronized below).
            unsafe { graph.replay(&[Some(Value::Scalar(v))]) }?;
        }
        drop(armed);
        dev.synchronize()?;
        let mut out = vec![0u8; 1024];
        dev.copy_out(&a, &mut out)?;
        Ok(hcq_common::to_u32s(&out))
    };
    assert_eq!(run(false).unwrap(), vec![3; 256]);
    // Threaded, the GPU may finish the first replay before the host patches for the second
    // (then nothing races and the result is right): each try is a fresh rig, so try again.
    let tries = if mode == SimMode::Threaded { 20 } else { 1 };
    let text = (0..tries)
        .find_map(|_| match run(true) {
            Err(e @ Error::DeviceFault(_)) => Some(e.to_string()),
            Ok(v) if tries > 1 && v == vec![3; 256] => None,
            other => panic!("expected a device fault naming the early patch, got {other:?}"),
        })
        .expect("a device fault naming the early patch in 20 threaded tries");
    assert!(
        text.contains("host race: a host write racing a queued dispatch's kernarg read")
            && text.contains("of the kernarg segment")
            && text.contains(if pm4 { "(PM4 queue" } else { "(AQL queue" }),
        "{text}"
    );
}

#[test]
fn graph_replay_patches_early_deterministic() {
    graph_replay_patches_early(SimMode::Deterministic, false);
}

#[test]
fn graph_replay_patches_early_threaded() {
    graph_replay_patches_early(SimMode::Threaded, false);
}

#[test]
fn graph_replay_patches_early_pm4() {
    graph_replay_patches_early(SimMode::Deterministic, true);
}
