//! hcq's driver on an AQL compute queue (issue 44): launches as kernel dispatch packets,
//! waits, copies through SDMA around them, a graph replayed as kernel dispatch packets, the ring
//! wrapping many times under back-pressure (a 64-slot ring), waits across devices, and the
//! queue kind chosen by the GPU. Every scenario runs on a gfx1100 with AQL forced and on an
//! MI300X as it ships (gfx942 in SPX mode, 8 XCCs), where the device picks AQL by itself.

#[allow(unused_macros, unused_imports)]
mod hcq_common;

use core::time::Duration;
use hcq_common::{LONG, SimMode, programs, read_u32s, write_u32s};
use hcq_driver::graph::{Arg, BufArg, DimLimits, Dims, DimsArg, Graph, GraphBuilder, ScalarArg};
use hcq_driver::{BufferKind, ComputeQueueKind, Device, DeviceOptions};
use hcq_sim::{GpuConfig, SimConfig};
use hcq_tests::Rig;
use hcq_tests::fixtures::{FillArgs, VectorAddArgs};

/// The GPU a scenario runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Gpu {
    /// A gfx1100 (one XCC) with AQL forced (`ComputeQueueKind::Aql`).
    Gfx1100Aql,
    /// An 8-XCC gfx942 opened with the default `ComputeQueueKind::Auto`.
    Mi300x,
}

fn rig(mode: SimMode, gpu: Gpu, gpus: usize, timeout: Duration) -> Rig {
    let (cfg, xcc) = match gpu {
        Gpu::Gfx1100Aql => (GpuConfig::gfx1100(), 1),
        Gpu::Mi300x => (GpuConfig::gfx942(), 8),
    };
    Rig::with_config(
        SimConfig {
            mode,
            strict: true,
            gpus: vec![cfg; gpus],
            xcc,
            ..SimConfig::default()
        },
        timeout,
    )
}

fn aql(gpu: Gpu, ring: u64) -> DeviceOptions {
    DeviceOptions {
        compute_ring_size: ring,
        compute_queue: match gpu {
            Gpu::Gfx1100Aql => ComputeQueueKind::Aql,
            Gpu::Mi300x => ComputeQueueKind::Auto,
        },
        ..DeviceOptions::default()
    }
}

/// One device on `gpu` with an AQL ring of `ring` bytes; checks the queue kind.
fn one_with(mode: SimMode, gpu: Gpu, ring: u64) -> (Rig, Device) {
    let r = rig(mode, gpu, 1, LONG);
    let dev = Device::open_with(&r.kfd, 0, aql(gpu, ring)).unwrap();
    assert!(dev.is_aql(), "{gpu:?}");
    assert_eq!(dev.num_xcc(), if gpu == Gpu::Mi300x { 8 } else { 1 });
    (r, dev)
}

/// vector_add and fill through kernel dispatch packets give what they compute; the copies
/// in and out (SDMA) wait for the launches and the launches for the copies.
fn launches_and_copies(mode: SimMode, gpu: Gpu) {
    let (_r, dev) = one_with(mode, gpu, 1 << 16);
    let (fill, add) = programs(&dev);
    let n = 1000u32;
    let a: Vec<u32> = (0..n).map(|i| i * 7 + 3).collect();
    let b: Vec<u32> = (0..n).map(|i| 1_000_000 - i).collect();
    let ba = dev.alloc(4000, BufferKind::Vram).unwrap();
    let bb = dev.alloc(4000, BufferKind::Vram).unwrap();
    let bc = dev.alloc(4004, BufferKind::Vram).unwrap();
    write_u32s(&dev, &ba, &a);
    write_u32s(&dev, &bb, &b);
    write_u32s(&dev, &bc, &vec![0x5a5a_5a5a; 1001]);
    let args = VectorAddArgs {
        a: ba.va().get(),
        b: bb.va().get(),
        c: bc.va().get(),
        n,
    };
    // SAFETY: a, b hold n u32s, c n + 1; all outlive the launch (read_u32s waits).
    let v = unsafe { add.launch_pod(&args, [16, 1, 1], [64, 1, 1]) }.unwrap();
    dev.wait_value(v).unwrap();
    let mut want: Vec<u32> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
    want.push(0x5a5a_5a5a);
    assert_eq!(read_u32s(&dev, &bc, 1001), want);
    let fa = FillArgs {
        buf: bc.va().get(),
        value: 0x0bad_cafe,
        n: 500,
    };
    // SAFETY: as above.
    unsafe { fill.launch_pod(&fa, [8, 1, 1], [64, 1, 1]) }.unwrap();
    let got = read_u32s(&dev, &bc, 1001);
    assert_eq!(&got[..500], &[0x0bad_cafe; 500][..]);
    assert_eq!(&got[500..], &want[500..]);
    // Timed launches take the stamps inside the PM4_IB packets around the dispatch.
    // SAFETY: as above.
    let t = unsafe {
        fill.launch_builder()
            .arg(&bc)
            .arg(&7u32)
            .arg(&n)
            .groups([16, 1, 1])
            .block([64, 1, 1])
            .launch_wait()
    }
    .unwrap();
    assert!(t.as_nanos() > 0, "the end stamp is after the start stamp");
    assert_eq!(read_u32s(&dev, &bc, 1000), vec![7; 1000]);
}

/// 300 launches of 3 packets each on a 64-slot ring: the producer waits for
/// `read_dispatch_id` instead of overwriting, and every launch ran (the last one's value
/// is what the buffer holds, each launch's value reached the timeline).
fn ring_wraps_under_back_pressure(mode: SimMode, gpu: Gpu) {
    let (_r, dev) = one_with(mode, gpu, 4096);
    let (fill, _) = programs(&dev);
    let buf = dev.alloc(256 * 4, BufferKind::Vram).unwrap();
    let mut last = None;
    for i in 0..300u32 {
        let fa = FillArgs {
            buf: buf.va().get(),
            value: i,
            n: 256,
        };
        // SAFETY: buf holds 256 u32s and outlives the launches (read_u32s waits).
        last = Some(unsafe { fill.launch_pod(&fa, [4, 1, 1], [64, 1, 1]) }.unwrap());
    }
    dev.wait_value(last.unwrap()).unwrap();
    assert_eq!(read_u32s(&dev, &buf, 256), vec![299; 256]);
    let q = &dev.queue_states()[0];
    assert!(
        q.wptr >= 900,
        "write_dispatch_id {} after 300 launches",
        q.wptr
    );
}

/// A recorded graph of fills, replayed on the AQL queue: each launch a kernel dispatch packet
/// copied into the ring (a PM4 DISPATCH_DIRECT in an AQL PM4 IB would run on every XCC of the
/// MI300X); `tests/tests/graph_aql.rs` has the rest of the graph suite on AQL queues.
fn graph_replay(mode: SimMode, gpu: Gpu) {
    let (_r, dev) = one_with(mode, gpu, 1 << 16);
    replay_rounds(&dev).unwrap();
}

/// What the graph's recording avoids: a PM4 DISPATCH_DIRECT submitted raw on the MI300X's
/// AQL queue would run inside a PM4_IB packet on every XCC (the simulator faults it naming
/// that); the driver refuses it before anything reaches the ring, naming what to use instead
/// (on the one-XCC gfx1100 the same submission runs the fill).
fn raw_pm4_dispatch(mode: SimMode, gpu: Gpu) {
    let (_r, dev) = one_with(mode, gpu, 1 << 16);
    let (fill, _) = programs(&dev);
    let out = dev.alloc(64 * 4, BufferKind::Gtt).unwrap();
    let ka = dev.alloc(64, BufferKind::Gtt).unwrap();
    let fa = FillArgs {
        buf: out.va().get(),
        value: 9,
        n: 64,
    };
    ka.write(0, bytemuck::bytes_of(&fa)).unwrap();
    let prog = fill.pm4_program();
    // SAFETY: fill writes 64 u32s of `out` and reads its arguments from `ka`; both outlive
    // the synchronize below.
    let r = unsafe {
        dev.submit_compute(|c| {
            c.memory_barrier()?;
            c.exec(&prog, ka.va(), [1, 1, 1], [64, 1, 1])
        })
    }
    .and_then(|v| dev.wait_value(v));
    if gpu == Gpu::Mi300x {
        let err = r.unwrap_err().to_string();
        assert!(
            err.contains(
                "a PM4 DISPATCH_DIRECT (Cmds::exec, or raw PM4) on an AQL queue of a GPU of 8 XCCs"
            ) && err.contains("Device::launch"),
            "{err}"
        );
        // Refused, not faulted: the device still runs work.
        assert!(dev.synchronize().is_ok());
    } else {
        r.unwrap();
        assert_eq!(read_u32s(&dev, &out, 64), vec![9; 64]);
    }
}

/// Four fills recorded as a graph and replayed three times, each checked.
fn replay_rounds(dev: &Device) -> hcq_driver::Result<()> {
    let dev = dev.clone();
    let (fill, _) = programs(&dev);
    let bufs: Vec<_> = (0..4)
        .map(|_| dev.alloc(64 * 4, BufferKind::Vram).unwrap())
        .collect();
    let mut g = GraphBuilder::new(dev.arch());
    for (i, b) in bufs.iter().enumerate() {
        g.launch(
            &fill.pm4_program(),
            DimLimits::AMD,
            &[
                Arg::Buf(BufArg::Fixed(b.va())),
                Arg::U32(ScalarArg::Fixed(100 + i as u64)),
                Arg::U32(ScalarArg::Fixed(64)),
            ],
            DimsArg::Fixed(Dims {
                global: [1, 1, 1],
                local: [64, 1, 1],
            }),
        )
        .unwrap();
    }
    let mut graph = Graph::record(&dev, &g)?;
    for round in 0..3 {
        for b in &bufs {
            write_u32s(&dev, b, &[0; 64]);
        }
        // SAFETY: each launch fills 64 u32s of its buffer, which outlives the replays (each
        // is waited for).
        let v = unsafe { graph.replay(&[]) }?;
        dev.wait_value(v)?;
        for (i, b) in bufs.iter().enumerate() {
            assert_eq!(
                read_u32s(&dev, b, 64),
                vec![100 + i as u32; 64],
                "round {round}"
            );
        }
    }
    Ok(())
}

/// Two devices on two GPUs, one AQL and one PM4: the PM4 one waits (on the GPU) for the AQL
/// one's timeline value before reading what its kernel wrote.
fn queues_wait_across_kinds(mode: SimMode, gpu: Gpu) {
    let r = rig(mode, gpu, 2, LONG);
    let d0 = Device::open_with(&r.kfd, 0, aql(gpu, 1 << 16)).unwrap();
    let d1 = Device::open_with(
        &r.kfd,
        1,
        DeviceOptions {
            compute_queue: ComputeQueueKind::Pm4,
            ..DeviceOptions::default()
        },
    )
    .unwrap();
    assert!(d0.is_aql() && !d1.is_aql());
    let (fill0, _) = programs(&d0);
    let shared = d0.alloc(64 * 4, BufferKind::Gtt).unwrap();
    let fa = FillArgs {
        buf: shared.va().get(),
        value: 42,
        n: 64,
    };
    // SAFETY: shared holds 64 u32s and outlives the launch.
    let v = unsafe { fill0.launch_pod(&fa, [1, 1, 1], [64, 1, 1]) }.unwrap();
    let (sig, val) = d0.timeline_target(v).expect("a fresh value has a target");
    // SAFETY: the list only waits on d0's timeline signal.
    let w = unsafe { d1.submit_compute(|c| c.wait(&sig, val)) }.unwrap();
    d1.wait_value(w).unwrap();
    assert_eq!(read_u32s(&d0, &shared, 64), vec![42; 64]);
}

/// The queue kind by GPU: AQL for more than one XCC, PM4 for one, unless forced.
#[test]
fn queue_kind_follows_the_gpu() {
    assert!(ComputeQueueKind::Aql.resolve_aql(1));
    assert!(!ComputeQueueKind::Pm4.resolve_aql(8));
    if std::env::var_os("HCQ_AQL").is_none() {
        assert!(ComputeQueueKind::Auto.resolve_aql(8));
        assert!(!ComputeQueueKind::Auto.resolve_aql(1));
    }
}

/// Each scenario on both GPUs, in both simulator modes.
macro_rules! on_both_gpus {
    ($($f:ident),* $(,)?) => {
        $(
            mod $f {
                use super::{Gpu, SimMode};
                #[test]
                fn gfx1100_aql_deterministic() {
                    super::$f(SimMode::Deterministic, Gpu::Gfx1100Aql);
                }
                #[test]
                fn gfx1100_aql_threaded() {
                    super::$f(SimMode::Threaded, Gpu::Gfx1100Aql);
                }
                #[test]
                fn mi300x_deterministic() {
                    super::$f(SimMode::Deterministic, Gpu::Mi300x);
                }
                #[test]
                fn mi300x_threaded() {
                    super::$f(SimMode::Threaded, Gpu::Mi300x);
                }
            }
        )*
    };
}

on_both_gpus!(
    launches_and_copies,
    ring_wraps_under_back_pressure,
    graph_replay,
    raw_pm4_dispatch,
    queues_wait_across_kinds
);
