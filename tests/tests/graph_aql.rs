//! Graphs on AQL compute queues (issue 44): recorded launches become kernel dispatch packets
//! that a replay copies into the AQL ring (on an 8-XCC MI300X a PM4 DISPATCH_DIRECT would run
//! once per XCC). Every scenario runs on a gfx1100 with AQL forced and on an 8-XCC gfx942
//! (AQL chosen by the device), in both simulator modes, with the simulator strict (its
//! findings are faults): a chain of kernels with scalar, buffer and dims variables replayed
//! with unchanged and changed values and back to back; a graph mixing copies and kernels; a
//! graph larger than the ring; graphs of two GPUs waiting on each other (`MultiGraph`); and
//! what the recording holds (no DISPATCH_DIRECT in its PM4, every dispatch packet ordered
//! and fenced, the trace of a replay).

#[allow(unused_macros, unused_imports)]
mod hcq_common;

use core::time::Duration;
use hcq_common::{LONG, SimMode, programs, read_u32s, write_u32s};
use hcq_core::addr::GpuVa;
use hcq_core::aql;
use hcq_core::timeline::TimelineValue;
use hcq_driver::graph::{
    AqlItem, Arg, BufArg, DimLimits, Dims, DimsArg, Graph, GraphBuilder, ScalarArg, Value,
};
use hcq_driver::{BufferKind, ComputeQueueKind, Device, DeviceOptions, GpuBuffer};
use hcq_sim::{GpuConfig, SimConfig};
use hcq_tests::Rig;

/// The GPU a scenario runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Gpu {
    /// A gfx1100 (one XCC) with AQL forced.
    Gfx1100Aql,
    /// An 8-XCC gfx942 opened with the default `ComputeQueueKind::Auto`.
    Mi300x,
}

fn open(mode: SimMode, gpu: Gpu, ring: u64, timeout: Duration) -> (Rig, Device) {
    let (r, mut devs) = open_n(mode, gpu, 1, ring, timeout);
    let dev = devs.remove(0);
    (r, dev)
}

/// `gpus` GPUs of the kind, each opened with an AQL ring of `ring` bytes.
fn open_n(
    mode: SimMode,
    gpu: Gpu,
    gpus: usize,
    ring: u64,
    timeout: Duration,
) -> (Rig, Vec<Device>) {
    let (cfg, xcc) = match gpu {
        Gpu::Gfx1100Aql => (GpuConfig::gfx1100(), 1),
        Gpu::Mi300x => (GpuConfig::gfx942(), 8),
    };
    let r = Rig::with_config(
        SimConfig {
            mode,
            strict: true,
            gpus: vec![cfg; gpus],
            xcc,
            ..SimConfig::default()
        },
        timeout,
    );
    let devs = (0..gpus).map(|i| open_dev(&r, i, gpu, ring)).collect();
    (r, devs)
}

fn open_dev(r: &Rig, i: usize, gpu: Gpu, ring: u64) -> Device {
    let dev = Device::open_with(
        &r.kfd,
        i,
        DeviceOptions {
            compute_ring_size: ring,
            compute_queue: match gpu {
                Gpu::Gfx1100Aql => ComputeQueueKind::Aql,
                Gpu::Mi300x => ComputeQueueKind::Auto,
            },
            ..DeviceOptions::default()
        },
    )
    .unwrap();
    assert!(dev.is_aql(), "{gpu:?}");
    dev
}

/// `Graph::replay` for this file's graphs: their kernels and copies touch only buffers the
/// tests allocated, sized for every dims and value the tests give, and every test waits for
/// its replays before reading or dropping them.
fn replay(g: &mut Graph, values: &[Option<Value>]) -> hcq_driver::Result<TimelineValue> {
    // SAFETY: see above.
    unsafe { g.replay(values) }
}

fn dims(groups: u32) -> Dims {
    Dims {
        global: [groups, 1, 1],
        local: [64, 1, 1],
    }
}

/// The chain: `fill(a, value, n)` with dims variable `d`, then `c = a + b` (vector_add over
/// the same `n` work-items, dims variable `d` too). Variables: a, value, n, c, d.
struct Chain {
    g: GraphBuilder,
    /// The programs stay loaded while the graph is recorded and replayed (the device knows
    /// their kernel descriptors while their images live).
    _progs: (hcq_driver::Program, hcq_driver::Program),
}

const A: usize = 0;
const VALUE: usize = 1;
const N: usize = 2;
const C: usize = 3;
const D: usize = 4;

/// Items each buffer holds: the largest dims used (4 groups of 64).
const MAX_N: u32 = 256;
const BYTES: u64 = MAX_N as u64 * 4;

fn chain(dev: &Device, a: &GpuBuffer, b: &GpuBuffer, c: &GpuBuffer) -> (Chain, [Value; 5]) {
    let (fill, add) = programs(dev);
    let mut g = GraphBuilder::new(dev.arch());
    let va = g.buffer(a.va(), BYTES).unwrap();
    let vv = g.scalar(7).unwrap();
    let vn = g.scalar(128).unwrap();
    let vc = g.buffer(c.va(), BYTES).unwrap();
    let vd = g.dims(dims(2)).unwrap();
    g.launch(
        &fill.pm4_program(),
        DimLimits::AMD,
        &[
            Arg::Buf(BufArg::var(va, BYTES)),
            Arg::U32(ScalarArg::Var(vv)),
            Arg::U32(ScalarArg::Var(vn)),
        ],
        DimsArg::Var(vd),
    )
    .unwrap();
    g.launch(
        &add.pm4_program(),
        DimLimits::AMD,
        &[
            Arg::Buf(BufArg::var(va, BYTES)),
            Arg::Buf(BufArg::Fixed(b.va())),
            Arg::Buf(BufArg::var(vc, BYTES)),
            Arg::U32(ScalarArg::Var(vn)),
        ],
        DimsArg::Var(vd),
    )
    .unwrap();
    let init = g.initial_values();
    let init: Vec<Value> = init.into_iter().map(Option::unwrap).collect();
    (
        Chain {
            g,
            _progs: (fill, add),
        },
        init.try_into().unwrap(),
    )
}

fn vals(a: &GpuBuffer, value: u32, n: u32, c: &GpuBuffer, groups: u32) -> Vec<Option<Value>> {
    let mut v = vec![None; 5];
    v[A] = Some(Value::Addr {
        addr: a.va(),
        bytes: BYTES,
    });
    v[VALUE] = Some(Value::Scalar(value.into()));
    v[N] = Some(Value::Scalar(n.into()));
    v[C] = Some(Value::Addr {
        addr: c.va(),
        bytes: BYTES,
    });
    v[D] = Some(Value::Dims(dims(groups)));
    v
}

/// What the chain leaves in `a` and `c` (`b` holds `i * 3`, both start as `0xeeee_eeee`).
fn expect(dev: &Device, a: &GpuBuffer, c: &GpuBuffer, value: u32, n: u32, what: &str) {
    let n = n as usize;
    let got_a = read_u32s(dev, a, MAX_N as usize);
    let got_c = read_u32s(dev, c, MAX_N as usize);
    for i in 0..MAX_N as usize {
        let (wa, wc) = if i < n {
            (value, value + 3 * i as u32)
        } else {
            (0xeeee_eeee, 0xeeee_eeee)
        };
        assert_eq!((got_a[i], got_c[i]), (wa, wc), "{what}: item {i}");
    }
}

fn reset(dev: &Device, bufs: &[&GpuBuffer]) {
    for b in bufs {
        write_u32s(dev, b, &[0xeeee_eeee; MAX_N as usize]);
    }
}

/// The chain replayed with its recorded values (the fast path), with every value changed
/// (other buffers, scalar, dims), back to back without a host wait in between (each replay
/// patches only after the previous one completed), then with the first values again.
fn chain_replays(mode: SimMode, gpu: Gpu) {
    let (_r, dev) = open(mode, gpu, 1 << 16, LONG);
    let buf = || dev.alloc(BYTES, BufferKind::Vram).unwrap();
    let (a0, a1, b, c0, c1) = (buf(), buf(), buf(), buf(), buf());
    write_u32s(&dev, &b, &(0..MAX_N).map(|i| i * 3).collect::<Vec<_>>());
    let (ch, init) = chain(&dev, &a0, &b, &c0);
    let mut graph = Graph::record(&dev, &ch.g).unwrap();
    let all = [&a0, &a1, &c0, &c1];
    let recorded: Vec<_> = init.iter().copied().map(Some).collect();
    // The recorded values, twice (the fast path: nothing checked or written again).
    for _ in 0..2 {
        reset(&dev, &all);
        let v = replay(&mut graph, &recorded).unwrap();
        dev.wait_value(v).unwrap();
        expect(&dev, &a0, &c0, 7, 128, "recorded values");
    }
    // Everything changed: the other buffers, a new value and n, four groups.
    reset(&dev, &all);
    let v = replay(&mut graph, &vals(&a1, 11, 256, &c1, 4)).unwrap();
    dev.wait_value(v).unwrap();
    expect(&dev, &a1, &c1, 11, 256, "changed values");
    expect(
        &dev,
        &a0,
        &c0,
        0xeeee_eeee,
        0,
        "the recorded buffers untouched",
    );
    // Back to back: three replays submitted before any host wait; the last one's values
    // stay, and each ran whole (a1/c1 and a0/c0 each end with their last replay's values).
    reset(&dev, &all);
    replay(&mut graph, &vals(&a0, 1, 64, &c0, 1)).unwrap();
    replay(&mut graph, &vals(&a1, 2, 192, &c1, 3)).unwrap();
    let v = replay(&mut graph, &vals(&a0, 5, 128, &c0, 2)).unwrap();
    dev.wait_value(v).unwrap();
    let got_a0 = read_u32s(&dev, &a0, MAX_N as usize);
    assert_eq!(&got_a0[..128], &[5; 128][..]);
    // The first replay's 64 items were overwritten by the third; item 128.. kept by none.
    assert_eq!(&got_a0[128..], &[0xeeee_eeee; 128][..]);
    expect(
        &dev,
        &a1,
        &c1,
        2,
        192,
        "second of three back-to-back replays",
    );
    // A bad value (n groups of 64 above the kernel's limit) is refused before anything runs.
    let mut bad = vals(&a0, 1, 64, &c0, 1);
    bad[D] = Some(Value::Dims(Dims {
        global: [1, 1, 1],
        local: [2048, 1, 1],
    }));
    assert!(replay(&mut graph, &bad).is_err());
    // The recorded values again.
    reset(&dev, &all);
    let v = replay(&mut graph, &recorded).unwrap();
    dev.wait_value(v).unwrap();
    expect(&dev, &a0, &c0, 7, 128, "recorded values again");
}

/// A graph that copies its input in (SDMA), fills and adds (AQL dispatch packets), and copies
/// the result out, replayed with other input and output buffers: the recorded order holds
/// across both queues (internal signals from the AQL queue's PM4 bodies).
fn copies_and_kernels(mode: SimMode, gpu: Gpu) {
    let (_r, dev) = open(mode, gpu, 1 << 16, LONG);
    let (fill, add) = programs(&dev);
    let buf = || dev.alloc(BYTES, BufferKind::Vram).unwrap();
    let (src0, src1, dst0, dst1, a, b, c) = (buf(), buf(), buf(), buf(), buf(), buf(), buf());
    let mut g = GraphBuilder::new(dev.arch());
    let vsrc = g.buffer(src0.va(), BYTES).unwrap();
    let vdst = g.buffer(dst0.va(), BYTES).unwrap();
    let fixed = |x: &GpuBuffer| Arg::Buf(BufArg::Fixed(x.va()));
    g.copy(BufArg::Fixed(b.va()), BufArg::var(vsrc, BYTES), BYTES)
        .unwrap();
    g.launch(
        &fill.pm4_program(),
        DimLimits::AMD,
        &[
            fixed(&a),
            Arg::U32(ScalarArg::Fixed(1000)),
            Arg::U32(ScalarArg::Fixed(MAX_N.into())),
        ],
        DimsArg::Fixed(dims(4)),
    )
    .unwrap();
    g.launch(
        &add.pm4_program(),
        DimLimits::AMD,
        &[
            fixed(&a),
            fixed(&b),
            fixed(&c),
            Arg::U32(ScalarArg::Fixed(MAX_N.into())),
        ],
        DimsArg::Fixed(dims(4)),
    )
    .unwrap();
    g.copy(BufArg::var(vdst, BYTES), BufArg::Fixed(c.va()), BYTES)
        .unwrap();
    let mut graph = Graph::record(&dev, &g).unwrap();
    assert!(graph.encoded().internal_signals > 0);
    for (round, (src, dst)) in [(&src0, &dst0), (&src1, &dst1), (&src0, &dst1)]
        .into_iter()
        .enumerate()
    {
        let k = round as u32 * 10_000;
        write_u32s(&dev, src, &(0..MAX_N).map(|i| i + k).collect::<Vec<_>>());
        write_u32s(&dev, dst, &[0; MAX_N as usize]);
        let values = [
            Some(Value::Addr {
                addr: src.va(),
                bytes: BYTES,
            }),
            Some(Value::Addr {
                addr: dst.va(),
                bytes: BYTES,
            }),
        ];
        let v = replay(&mut graph, &values).unwrap();
        dev.wait_value(v).unwrap();
        let want: Vec<u32> = (0..MAX_N).map(|i| 1000 + i + k).collect();
        assert_eq!(read_u32s(&dev, dst, MAX_N as usize), want, "round {round}");
    }
    drop((fill, add));
}

/// 100 launches on a 64-slot ring (a graph larger than the ring goes in ring-sized parts,
/// each waiting for room), replayed twice: every launch ran.
fn larger_than_the_ring(mode: SimMode, gpu: Gpu) {
    let (_r, dev) = open(mode, gpu, 4096, LONG);
    let (fill, _) = programs(&dev);
    let out = dev.alloc(100 * 64 * 4, BufferKind::Vram).unwrap();
    let mut g = GraphBuilder::new(dev.arch());
    let vbase = g.scalar(0).unwrap();
    for i in 0..100u64 {
        g.launch(
            &fill.pm4_program(),
            DimLimits::AMD,
            &[
                Arg::Buf(BufArg::Fixed(GpuVa(out.va().get() + i * 256))),
                Arg::U32(ScalarArg::Var(vbase)),
                Arg::U32(ScalarArg::Fixed(64)),
            ],
            DimsArg::Fixed(dims(1)),
        )
        .unwrap();
    }
    let mut graph = Graph::record(&dev, &g).unwrap();
    for value in [3u32, 9] {
        let v = replay(&mut graph, &[Some(Value::Scalar(value.into()))]).unwrap();
        dev.wait_value(v).unwrap();
        assert_eq!(read_u32s(&dev, &out, 6400), vec![value; 6400]);
    }
    let q = &dev.queue_states()[0];
    assert!(
        q.wptr > 200,
        "write_dispatch_id {} after two replays",
        q.wptr
    );
}

/// What the recording holds: no DISPATCH_DIRECT in the PM4 bodies; one dispatch packet per
/// launch with the barrier bit and system-scope fences, the kernel descriptor of the loaded
/// kernel, its arguments in the graph's kernargs; a dims variable patches its grid, work-group
/// and dimensions.
fn recording(mode: SimMode, gpu: Gpu) {
    let (_r, dev) = open(mode, gpu, 1 << 16, LONG);
    let buf = || dev.alloc(BYTES, BufferKind::Vram).unwrap();
    let (a, b, c) = (buf(), buf(), buf());
    let (ch, _) = chain(&dev, &a, &b, &c);
    let mut graph = Graph::record(&dev, &ch.g).unwrap();
    for p in hcq_core::pm4::decode(&graph.bound_pm4()) {
        let (_, p) = p.unwrap();
        assert!(
            !matches!(p, hcq_core::pm4::Pm4Packet::DispatchDirect(_)),
            "{p}"
        );
    }
    let check = |graph: &Graph, grid: u32| {
        let l = graph.aql_layout().expect("an AQL layout");
        let packets: Vec<&[u32]> = l
            .items
            .iter()
            .filter_map(|it| match *it {
                AqlItem::Dispatch { at } => Some(&l.image[at as usize..at as usize + 16]),
                AqlItem::Pm4 { .. } => None,
            })
            .collect();
        assert_eq!(packets.len(), 2);
        for w in packets {
            let h = aql::Header::ordered(aql::TYPE_KERNEL_DISPATCH).raw();
            assert_eq!(w[0] & 0xffff, u32::from(h), "header {:#x}", w[0]);
            assert_eq!(w[0] >> 16, 1, "one dimension");
            assert_eq!(w[1], 64 | 1 << 16);
            assert_eq!(&w[3..6], &[grid, 1, 1]);
            let kernarg = u64::from(w[10]) | u64::from(w[11]) << 32;
            let ka = graph.encoded().kernargs_va.get();
            assert!(
                kernarg >= ka,
                "kernarg {kernarg:#x} in the graph's region {ka:#x}"
            );
        }
    };
    check(&graph, 128);
    dev.set_trace(true);
    let v = replay(&mut graph, &vals(&a, 1, 192, &c, 3)).unwrap();
    dev.wait_value(v).unwrap();
    check(&graph, 192);
    // The trace shows the replay as the ring got it: the prologue's wait, both packets, the
    // epilogue's signal.
    let trace = dev.take_trace();
    let packets: Vec<_> = trace
        .iter()
        .filter(|l| l.contains(" packet] header "))
        .collect();
    assert_eq!(packets.len(), 2, "{trace:#?}");
    assert!(
        packets.iter().all(|l| l.contains("grid [192, 1, 1]")),
        "{packets:?}"
    );
    assert!(
        trace.iter().any(|l| l.contains("WAIT_REG_MEM")),
        "{trace:#?}"
    );
    assert!(
        trace.iter().any(|l| l.contains("RELEASE_MEM")),
        "{trace:#?}"
    );
}

/// A graph recorded with a PM4 program no `Program::load` on this device produced is refused
/// at record time with what to do.
fn unknown_kernel_refused(mode: SimMode, gpu: Gpu) {
    let (_r, dev) = open(mode, gpu, 1 << 16, LONG);
    let (fill, _) = programs(&dev);
    let mut p = fill.pm4_program();
    p.prog_addr = GpuVa(p.prog_addr.get() + 0x100);
    let out = dev.alloc(BYTES, BufferKind::Vram).unwrap();
    let mut g = GraphBuilder::new(dev.arch());
    g.launch(
        &p,
        DimLimits::AMD,
        &[
            Arg::Buf(BufArg::Fixed(out.va())),
            Arg::U32(ScalarArg::Fixed(1)),
            Arg::U32(ScalarArg::Fixed(64)),
        ],
        DimsArg::Fixed(dims(1)),
    )
    .unwrap();
    let e = Graph::record(&dev, &g).unwrap_err().to_string();
    assert!(e.contains("kernel descriptor"), "{e}");
}

/// Two GPUs (`MultiGraph`): GPU 0's graph fills a shared buffer with the replay's value;
/// GPU 1's graph waits (a PM4 body between its dispatch packets) for GPU 0's timeline value of
/// the replay, whose signal address and value are variables patched in the AQL image every
/// replay (the signal changes when GPU 0's timeline wraps, between replays 2 and 3), then
/// adds the shared buffer into its own.
fn two_gpus(mode: SimMode, gpu: Gpu) {
    use hcq_driver::graph::{Dep, MultiGraph, Queue, SigArg};
    let (_r, devs) = open_n(mode, gpu, 2, 1 << 16, LONG);
    let (d0, d1) = (&devs[0], &devs[1]);
    let (fill0, _) = programs(d0);
    let (_, add1) = programs(d1);
    let shared = d0.alloc(BYTES, BufferKind::Gtt).unwrap();
    shared.map_to(d1).unwrap();
    let inp = d1.alloc(BYTES, BufferKind::Vram).unwrap();
    write_u32s(d1, &inp, &(0..MAX_N).map(|i| i * 5).collect::<Vec<_>>());
    let out = d1.alloc(BYTES, BufferKind::Vram).unwrap();
    let mut g0 = GraphBuilder::new(d0.arch());
    let val = g0.scalar(1).unwrap();
    g0.launch(
        &fill0.pm4_program(),
        DimLimits::AMD,
        &[
            Arg::Buf(BufArg::Fixed(shared.va())),
            Arg::U32(ScalarArg::Var(val)),
            Arg::U32(ScalarArg::Fixed(MAX_N.into())),
        ],
        DimsArg::Fixed(dims(4)),
    )
    .unwrap();
    let (s0, v0) = d0.timeline_target(d0.last_value()).unwrap();
    let mut g1 = GraphBuilder::new(d1.arch());
    let tl_sig = g1.signal_var(GpuVa(s0.addr)).unwrap();
    let tl_val = g1.scalar(v0.into()).unwrap();
    g1.wait(
        Queue::Compute,
        SigArg::Var {
            var: tl_sig,
            event_mailbox_ptr: 0,
            event_id: 0,
        },
        ScalarArg::Var(tl_val),
    )
    .unwrap();
    g1.launch(
        &add1.pm4_program(),
        DimLimits::AMD,
        &[
            Arg::Buf(BufArg::Fixed(inp.va())),
            Arg::Buf(BufArg::Fixed(shared.va())),
            Arg::Buf(BufArg::Fixed(out.va())),
            Arg::U32(ScalarArg::Fixed(MAX_N.into())),
        ],
        DimsArg::Fixed(dims(4)),
    )
    .unwrap();
    let mut multi = MultiGraph::new(vec![
        (Graph::record(d0, &g0).unwrap(), vec![]),
        (
            Graph::record(d1, &g1).unwrap(),
            vec![Dep {
                on: 0,
                signal: tl_sig,
                value: tl_val,
            }],
        ),
    ])
    .unwrap();
    d0.set_timeline_value((1 << 31) - 3).unwrap();
    let mut signals = std::collections::BTreeSet::new();
    for replay in 1..=5u32 {
        let v = replay * 1000;
        let mut vals = vec![vec![Some(Value::Scalar(v.into()))], vec![None, None]];
        // SAFETY: as `replay`'s: the kernels touch MAX_N u32s of shared, inp and out.
        let t = unsafe { multi.replay(&mut vals) }.unwrap();
        if let Some((s, _)) = d0.timeline_target(t[0]) {
            signals.insert(s.addr);
        }
        d1.wait_value(t[1]).unwrap();
        let want: Vec<u32> = (0..MAX_N).map(|i| i * 5 + v).collect();
        assert_eq!(read_u32s(d1, &out, MAX_N as usize), want, "replay {replay}");
        d0.synchronize().unwrap();
    }
    assert_eq!(
        signals.len(),
        2,
        "the replays waited on both of GPU 0's timeline signals"
    );
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
    chain_replays,
    copies_and_kernels,
    larger_than_the_ring,
    recording,
    unknown_kernel_refused,
    two_gpus,
);
