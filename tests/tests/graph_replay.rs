//! Graph replay on the simulator: a 1000-kernel graph replayed with new inputs and dims gives
//! what the same launches give one by one; so does a graph interleaving copies and kernels;
//! back-to-back replays never patch a running graph (the engines' trace of executed IB packets
//! is exactly one replay's, never a mix) and run the operations in recorded order across both
//! queues; a graph ending in a copy completes its timeline value only after the copy; the
//! timeline wraps in the middle of replays; a two-GPU graph.

use core::time::Duration;
use hcq_core::addr::GpuVa;
use hcq_core::pm4;
use hcq_core::timeline::TimelineValue;
use hcq_driver::graph::{
    Arg, BufArg, Dep, DimLimits, Dims, DimsArg, Graph, GraphBuilder, MultiGraph, ScalarArg, SigArg,
    Value, VarId,
};
use hcq_driver::{BufferKind, Device, GpuBuffer, Kfd, Program};
use hcq_sim::engine::attach::SimGpu;
use hcq_sim::engine::trace::{Site, TraceEntry, TraceEvent};
use hcq_sim::{SimConfig, SimKfd, SimMode};
use hcq_tests::fixtures::{FillArgs, VectorAddArgs};
use std::sync::Arc;

/// `Graph::replay` / `MultiGraph::replay` for this file's graphs. Their launches and copies
/// read and write only buffers the tests allocated (fixed addresses and variable values inside
/// them, sized for the recorded dims), and every test waits for its replays before reading or
/// dropping those buffers (a `GpuBuffer` also waits on drop); replays refused for a bad value
/// run nothing.
trait Replay {
    fn run(&mut self, values: &[Option<Value>]) -> hcq_driver::Result<TimelineValue>;
}

impl Replay for Graph {
    fn run(&mut self, values: &[Option<Value>]) -> hcq_driver::Result<TimelineValue> {
        // SAFETY: see the trait's comment.
        unsafe { self.replay(values) }
    }
}

/// [`Replay`] for several devices' graphs.
trait ReplayAll {
    fn run_all(
        &mut self,
        values: &mut [Vec<Option<Value>>],
    ) -> hcq_driver::Result<Vec<TimelineValue>>;
}

impl ReplayAll for MultiGraph {
    fn run_all(
        &mut self,
        values: &mut [Vec<Option<Value>>],
    ) -> hcq_driver::Result<Vec<TimelineValue>> {
        // SAFETY: see Replay's comment.
        unsafe { self.replay(values) }
    }
}

struct Rig {
    gpu: SimGpu,
    kfd: Kfd,
    _sim: Arc<SimKfd>,
}

/// Waits (up to 10 s) until the engines have done everything they can: every queue that is
/// not held by fault injection is blocked in a memory wait or has read all it was given.
/// What a test then checks of the queues cannot change until it releases one.
fn settle(r: &Rig) {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let e = r.gpu.engines();
        let quiet = e.queues().iter().all(|q| {
            q.hung
                || matches!(q.state, hcq_sim::engine::QueueState::Waiting(_))
                || q.doorbell.is_none_or(|d| d == q.rptr)
        });
        if quiet {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the engines did not settle in 10 s: {:?}",
            e.queues()
        );
        std::thread::yield_now();
    }
}

/// The host cost of `Graph::replay` with
/// unchanged values (validate, no patch, one INDIRECT_BUFFER on the ring) for a graph of
/// `kernels` `fill` launches on `device`, median over `rounds` (each replay waited for outside
/// the timed part). The cost does not depend on `kernels`.
/// (What `hcq bench` once timed through this; it now times `BoundList::submit` in
/// `driver/src/cli/bench/driver.rs`. Kept here for the test below, which checks it replays.)
fn graph_replay_submit_ns(
    device: &Device,
    kernels: usize,
    rounds: usize,
) -> hcq_driver::Result<f64> {
    use hcq_driver::graph::{Arg, BufArg, DimLimits, Dims, DimsArg, GraphBuilder, ScalarArg};
    let co = hcq_tests::fixtures::fill(&device.target_name()).ok_or_else(|| {
        hcq_driver::Error::InvalidArgument(format!("no fill kernel for {}", device.target_name()))
    })?;
    let fill = Program::load(device, co, "fill")?;
    let buf = device.alloc(256, BufferKind::Gtt)?;
    let mut g = GraphBuilder::new(device.arch());
    for _ in 0..kernels.max(1) {
        g.launch(
            &fill.pm4_program(),
            DimLimits::AMD,
            &[
                Arg::Buf(BufArg::Fixed(buf.va())),
                Arg::U32(ScalarArg::Fixed(1)),
                Arg::U32(ScalarArg::Fixed(64)),
            ],
            DimsArg::Fixed(Dims {
                global: [1, 1, 1],
                local: [64, 1, 1],
            }),
        )
        .map_err(|e| hcq_driver::Error::InvalidArgument(e.to_string()))?;
    }
    let mut graph = Graph::record(device, &g)?;
    let mut times = Vec::with_capacity(rounds.max(1));
    for _ in 0..rounds.max(1) {
        let t = std::time::Instant::now();
        // SAFETY: every launch fills 1 u32 per work-item, 64 of them, into `buf` (256 bytes),
        // which outlives the replays (each is waited for below).
        let v = unsafe { graph.replay(&[]) }?;
        // CAST: ns as f64 is exact enough for a benchmark.
        times.push(t.elapsed().as_nanos() as f64);
        device.wait_value(v)?;
    }
    times.sort_by(f64::total_cmp);
    Ok(times.get(times.len() / 2).copied().unwrap_or(f64::NAN))
}

fn rig(gpus: usize) -> Rig {
    rig_with_trace(gpus, hcq_sim::engine::DEFAULT_TRACE_CAPACITY)
}

/// A rig whose queues keep `trace` executed packets each.
fn rig_with_trace(gpus: usize, trace: usize) -> Rig {
    let cfg = SimConfig {
        mode: SimMode::Threaded,
        ..SimConfig::with_gpus(gpus)
    };
    let sim = Arc::new(SimKfd::new(hcq_tests::guarded(cfg)).unwrap());
    let gpu = SimGpu::attach(&sim).unwrap();
    gpu.engines().set_trace_capacity(trace);
    gpu.engines().with_kernels(|r| {
        for co in [
            hcq_tests::fixtures::fill("gfx1100").unwrap(),
            hcq_tests::fixtures::vector_add("gfx1100").unwrap(),
        ] {
            r.register_fixture(co).unwrap();
        }
    });
    // SAFETY: the tests use `sim` only through the engines and inspection, never its port
    // methods on what the driver mapped.
    let kfd = unsafe { Kfd::with_sim(Arc::clone(&sim)) }.unwrap();
    kfd.set_wait_timeout(Duration::from_secs(20));
    Rig {
        gpu,
        kfd,
        _sim: sim,
    }
}

fn open(r: &Rig, i: usize) -> Device {
    Device::open(&r.kfd, i).unwrap()
}

struct Progs {
    fill: Program,
    add: Program,
}

fn progs(d: &Device) -> Progs {
    Progs {
        fill: Program::load(d, hcq_tests::fixtures::fill("gfx1100").unwrap(), "fill").unwrap(),
        add: Program::load(
            d,
            hcq_tests::fixtures::vector_add("gfx1100").unwrap(),
            "vector_add",
        )
        .unwrap(),
    }
}

/// Work-items of one kernel's slot, and bytes.
const SLOT: u64 = 256;
const SLOT_BYTES: u64 = SLOT * 4;
const LOCAL: [u32; 3] = [64, 1, 1];

// The `i`th launch: even `i` fills slot `i` with `val`; odd `i` adds input block `i % 8` to
// slot `i - 1` into slot `i`; 1 to 4 workgroups of 64, changing with every replay.

fn dims_for(replay: u32, i: usize) -> Dims {
    // CAST: i < 1000.
    let i = i as u32;
    Dims {
        global: [1 + (i * 5 + replay * 3) % 4, 1, 1],
        local: LOCAL,
    }
}

/// The graph of `n` launches, recorded with the values of replay `replay`.
fn record(
    p: &Progs,
    n: usize,
    replay: u32,
    inp: &GpuBuffer,
    out: &GpuBuffer,
) -> (GraphBuilder, Vec<VarId>) {
    let mut g = GraphBuilder::new(&hcq_core::arch::GFX11);
    let vi = g.buffer(inp.va(), inp.len()).unwrap();
    let vo = g.buffer(out.va(), out.len()).unwrap();
    let val = g.scalar(val_for(replay).into()).unwrap();
    let mut dims = Vec::new();
    for i in 0..n {
        let d = g.dims(dims_for(replay, i)).unwrap();
        dims.push(d);
        let slot = |k: usize| BufArg::Var {
            var: vo,
            offset: k as u64 * SLOT_BYTES,
            bytes: SLOT_BYTES,
        };
        if i % 2 == 0 {
            g.launch(
                &p.fill.pm4_program(),
                DimLimits::AMD,
                &[
                    Arg::Buf(slot(i)),
                    Arg::U32(ScalarArg::Var(val)),
                    Arg::U32(ScalarArg::Fixed(SLOT)),
                ],
                DimsArg::Var(d),
            )
            .unwrap();
        } else {
            g.launch(
                &p.add.pm4_program(),
                DimLimits::AMD,
                &[
                    Arg::Buf(BufArg::Var {
                        var: vi,
                        offset: (i % 8) as u64 * SLOT_BYTES,
                        bytes: SLOT_BYTES,
                    }),
                    Arg::Buf(slot(i - 1)),
                    Arg::Buf(slot(i)),
                    Arg::U32(ScalarArg::Fixed(SLOT)),
                ],
                DimsArg::Var(d),
            )
            .unwrap();
        }
    }
    (g, dims)
}

fn val_for(replay: u32) -> u32 {
    replay.wrapping_mul(0x9E37_79B9)
}

fn values(inp: &GpuBuffer, out: &GpuBuffer, val: u32, dims: &[Dims]) -> Vec<Option<Value>> {
    let mut v = vec![
        Some(Value::Addr {
            addr: inp.va(),
            bytes: inp.len(),
        }),
        Some(Value::Addr {
            addr: out.va(),
            bytes: out.len(),
        }),
        Some(Value::Scalar(val.into())),
    ];
    v.extend(dims.iter().map(|d| Some(Value::Dims(*d))));
    v
}

/// The same launches one by one through `Program::launch`.
fn one_by_one(p: &Progs, n: usize, inp: &GpuBuffer, out: &GpuBuffer, val: u32, dims: &[Dims]) {
    for (i, d) in dims.iter().enumerate().take(n) {
        let slot = |k: usize| out.va().get() + k as u64 * SLOT_BYTES;
        // SAFETY: every address is inside `inp` / `out`, which outlive the launches (the caller
        // waits before reading them back).
        unsafe {
            if i % 2 == 0 {
                let a = FillArgs {
                    buf: slot(i),
                    value: val,
                    n: SLOT as u32,
                };
                p.fill.launch_pod(&a, d.global, d.local).unwrap();
            } else {
                let a = VectorAddArgs {
                    a: inp.va().get() + (i % 8) as u64 * SLOT_BYTES,
                    b: slot(i - 1),
                    c: slot(i),
                    n: SLOT as u32,
                };
                p.add.launch_pod(&a, d.global, d.local).unwrap();
            }
        }
    }
}

fn read(b: &GpuBuffer) -> Vec<u8> {
    let mut v = vec![0u8; b.len() as usize];
    b.read(0, &mut v).unwrap();
    v
}

fn input_bytes(seed: u32) -> Vec<u8> {
    (0..8 * SLOT as u32)
        .flat_map(|k| {
            k.wrapping_mul(2_654_435_761)
                .wrapping_add(seed)
                .to_le_bytes()
        })
        .collect()
}

fn run_replays(n: usize, replays: u32) {
    run_replay_sequence(n, 1..=replays);
}

/// [`run_replays`] with the values of replay `k` for each `k` of `seq` in turn.
fn run_replay_sequence(n: usize, seq: impl IntoIterator<Item = u32>) {
    let r = rig(1);
    let dev = open(&r, 0);
    let p = progs(&dev);
    let inps: Vec<GpuBuffer> = (0..2)
        .map(|s| {
            let b = dev.alloc(8 * SLOT_BYTES, BufferKind::Gtt).unwrap();
            b.write(0, &input_bytes(s)).unwrap();
            b
        })
        .collect();
    let outs: Vec<GpuBuffer> = (0..2)
        .map(|_| dev.alloc(n as u64 * SLOT_BYTES, BufferKind::Gtt).unwrap())
        .collect();
    let check = dev.alloc(n as u64 * SLOT_BYTES, BufferKind::Gtt).unwrap();
    let (g, _) = record(&p, n, 0, &inps[0], &outs[0]);
    let mut graph = Graph::record(&dev, &g).unwrap();
    let zero = vec![0u8; n * SLOT_BYTES as usize];
    for replay in seq {
        let inp = &inps[(replay % 2) as usize];
        let out = &outs[(replay / 2 % 2) as usize];
        let val = val_for(replay);
        let dims: Vec<Dims> = (0..n).map(|i| dims_for(replay, i)).collect();
        out.write(0, &zero).unwrap();
        check.write(0, &zero).unwrap();
        let v = graph.run(&values(inp, out, val, &dims)).unwrap();
        dev.wait_value(v).unwrap();
        one_by_one(&p, n, inp, &check, val, &dims);
        dev.synchronize().unwrap();
        let got = read(out);
        assert_eq!(
            &got[..4],
            &val.to_le_bytes(),
            "replay {replay}: slot 0 not filled"
        );
        assert!(got == read(&check), "replay {replay}: graph output differs");
    }
    drop(r.gpu);
}

#[test]
fn graph_of_1000_kernels_replayed_100_times_equals_launches_one_by_one() {
    run_replays(1000, 100);
}

/// Replays submitted back to back (no host wait in between): every execution of the bound IB
/// the engines traced is exactly one replay's commands (those of a fresh encode with that
/// replay's values), never a mix of two.
/// A replay with the values the lists hold already (a JIT replaying with the buffers it
/// captured) checks and writes nothing and runs them; the next changed value is written, and
/// a return to earlier values after it is written again.
#[test]
fn replays_with_unchanged_values_run_the_lists_as_they_are() {
    run_replay_sequence(6, [1, 1, 1, 2, 2, 3, 1, 1]);
}

#[test]
fn back_to_back_replays_never_patch_a_running_graph() {
    const N: usize = 40;
    const REPLAYS: u32 = 24;
    let r = rig_with_trace(1, 1 << 16);
    let dev = open(&r, 0);
    let p = progs(&dev);
    let inps: Vec<GpuBuffer> = (0..2)
        .map(|_| dev.alloc(8 * SLOT_BYTES, BufferKind::Gtt).unwrap())
        .collect();
    let out = dev.alloc(N as u64 * SLOT_BYTES, BufferKind::Gtt).unwrap();
    let (g, _) = record(&p, N, 0, &inps[0], &out);
    let mut graph = Graph::record(&dev, &g).unwrap();
    let (ib, ib_len) = graph.pm4_ib().unwrap();
    let ka = graph.encoded().kernargs_va;
    r.gpu.engines().clear_trace();
    for replay in 1..=REPLAYS {
        let inp = &inps[(replay % 2) as usize];
        let dims: Vec<Dims> = (0..N).map(|i| dims_for(replay, i)).collect();
        graph
            .run(&values(inp, &out, val_for(replay), &dims))
            .unwrap();
    }
    dev.synchronize().unwrap();
    let runs = ib_runs(&r.gpu.engines().trace(), ib);
    assert_eq!(runs.len(), REPLAYS as usize, "one IB execution per replay");
    for (k, run) in runs.iter().enumerate() {
        let replay = k as u32 + 1;
        let inp = &inps[(replay % 2) as usize];
        let (fg, _) = record(&p, N, replay, inp, &out);
        let fresh = fg.encode(ka).unwrap();
        let want = fresh.pm4.as_dwords();
        assert_eq!(want.len() as u32, ib_len);
        assert_run(run, want, pm4::decode(want).count(), replay);
    }
}

/// One packet of a bound IB as the engines executed it.
struct Executed {
    /// Dword index in the IB.
    index: u32,
    /// Its first dwords (up to the trace's limit).
    dwords: Vec<u32>,
    /// Global order of execution (across queues).
    seq: u64,
}

/// The executed packets of the IB at `base`, split into runs (a run starts at dword 0).
fn ib_runs(trace: &[TraceEntry], base: GpuVa) -> Vec<Vec<Executed>> {
    let base = base.get();
    let mut runs: Vec<Vec<Executed>> = Vec::new();
    for e in trace {
        let (Site::Ib { base: b, index, .. }, TraceEvent::Packet { dwords, len }) =
            (e.site, &e.event)
        else {
            continue;
        };
        if b != base {
            continue;
        }
        if index == 0 {
            runs.push(Vec::new());
        }
        let n = (*len as usize).min(dwords.len());
        runs.last_mut()
            .unwrap_or_else(|| panic!("first IB packet at index {index}: {e}"))
            .push(Executed {
                index,
                dwords: dwords[..n].to_vec(),
                seq: e.seq,
            });
    }
    runs
}

/// `run` executed exactly the `packets` packets of `want` (that replay's fresh encode).
fn assert_run(run: &[Executed], want: &[u32], packets: usize, replay: u32) {
    for x in run {
        let at = x.index as usize;
        assert_eq!(
            &want[at..at + x.dwords.len()],
            &x.dwords[..],
            "replay {replay}: packet at IB dword {at} is not this replay's"
        );
    }
    assert_eq!(run.len(), packets, "replay {replay}: packets executed");
}

/// The timeline passes 2^31 and wraps onto its shadow signal in the middle of the replays.
#[test]
fn timeline_wraps_in_the_middle_of_replays() {
    const N: usize = 8;
    let r = rig(1);
    let dev = open(&r, 0);
    let p = progs(&dev);
    let inp = dev.alloc(8 * SLOT_BYTES, BufferKind::Gtt).unwrap();
    inp.write(0, &input_bytes(3)).unwrap();
    let out = dev.alloc(N as u64 * SLOT_BYTES, BufferKind::Gtt).unwrap();
    let check = dev.alloc(N as u64 * SLOT_BYTES, BufferKind::Gtt).unwrap();
    let (g, _) = record(&p, N, 0, &inp, &out);
    let mut graph = Graph::record(&dev, &g).unwrap();
    dev.set_timeline_value((1 << 31) - 5).unwrap();
    let first = dev.timeline_target(TimelineValue::new(dev.last_value().get() + 1));
    let mut signals = std::collections::BTreeSet::new();
    for replay in 1..=20u32 {
        let dims: Vec<Dims> = (0..N).map(|i| dims_for(replay, i)).collect();
        out.write(0, &vec![0u8; N * SLOT_BYTES as usize]).unwrap();
        let v = graph
            .run(&values(&inp, &out, val_for(replay), &dims))
            .unwrap();
        dev.wait_value(v).unwrap();
        if let Some((s, _)) = dev.timeline_target(v) {
            signals.insert(s.addr);
        }
        let zero = vec![0u8; N * SLOT_BYTES as usize];
        check.write(0, &zero).unwrap();
        let _ = &zero;
        one_by_one(&p, N, &inp, &check, val_for(replay), &dims);
        dev.synchronize().unwrap();
        assert!(read(&out)[..] == read(&check)[..], "replay {replay}");
    }
    assert!(first.is_some());
    assert_eq!(signals.len(), 2, "the replays used both timeline signals");
}

/// Two GPUs: GPU 0's graph fills a buffer; GPU 1's graph waits for GPU 0's timeline value of
/// this replay (signal address and value are variables: they change every replay, and the
/// signal when GPU 0's timeline wraps) and then adds it into its own buffer.
#[test]
fn two_gpu_graph() {
    const N: usize = 4;
    let r = rig(2);
    let d0 = open(&r, 0);
    let d1 = open(&r, 1);
    let (p0, p1) = (progs(&d0), progs(&d1));
    let shared = d0.alloc(N as u64 * SLOT_BYTES, BufferKind::Gtt).unwrap();
    shared.map_to(&d1).unwrap();
    let inp = d1.alloc(8 * SLOT_BYTES, BufferKind::Gtt).unwrap();
    inp.write(0, &input_bytes(9)).unwrap();
    let out = d1.alloc(N as u64 * SLOT_BYTES, BufferKind::Gtt).unwrap();
    // GPU 0: fill every slot of `shared` with the replay's value.
    let mut g0 = GraphBuilder::new(&hcq_core::arch::GFX11);
    let val = g0.scalar(1).unwrap();
    for i in 0..N {
        g0.launch(
            &p0.fill.pm4_program(),
            DimLimits::AMD,
            &[
                Arg::Buf(BufArg::Fixed(GpuVa(
                    shared.va().get() + i as u64 * SLOT_BYTES,
                ))),
                Arg::U32(ScalarArg::Var(val)),
                Arg::U32(ScalarArg::Fixed(SLOT)),
            ],
            DimsArg::Fixed(Dims {
                global: [4, 1, 1],
                local: LOCAL,
            }),
        )
        .unwrap();
    }
    // GPU 1: wait for GPU 0's replay, then out[i] = inp[i % 8] + shared[i].
    let (s0, v0) = d0.timeline_target(d0.last_value()).unwrap();
    let mut g1 = GraphBuilder::new(&hcq_core::arch::GFX11);
    let tl_sig = g1.signal_var(GpuVa(s0.addr)).unwrap();
    let tl_val = g1.scalar(v0.into()).unwrap();
    g1.wait(
        hcq_driver::graph::Queue::Compute,
        SigArg::Var {
            var: tl_sig,
            event_mailbox_ptr: 0,
            event_id: 0,
        },
        ScalarArg::Var(tl_val),
    )
    .unwrap();
    for i in 0..N {
        g1.launch(
            &p1.add.pm4_program(),
            DimLimits::AMD,
            &[
                Arg::Buf(BufArg::Fixed(GpuVa(
                    inp.va().get() + (i % 8) as u64 * SLOT_BYTES,
                ))),
                Arg::Buf(BufArg::Fixed(GpuVa(
                    shared.va().get() + i as u64 * SLOT_BYTES,
                ))),
                Arg::Buf(BufArg::Fixed(GpuVa(out.va().get() + i as u64 * SLOT_BYTES))),
                Arg::U32(ScalarArg::Fixed(SLOT)),
            ],
            DimsArg::Fixed(Dims {
                global: [4, 1, 1],
                local: LOCAL,
            }),
        )
        .unwrap();
    }
    let gr0 = Graph::record(&d0, &g0).unwrap();
    let gr1 = Graph::record(&d1, &g1).unwrap();
    let mut multi = MultiGraph::new(vec![
        (gr0, vec![]),
        (
            gr1,
            vec![Dep {
                on: 0,
                signal: tl_sig,
                value: tl_val,
            }],
        ),
    ])
    .unwrap();
    d0.set_timeline_value((1 << 31) - 3).unwrap();
    let input = input_bytes(9);
    let mut signals = std::collections::BTreeSet::new();
    for replay in 1..=8u32 {
        let v = val_for(replay);
        // GPU 1's dependency variables are filled in by the multi-graph.
        let mut vals = vec![vec![Some(Value::Scalar(v.into()))], vec![None, None]];
        // Hold GPU 0's compute queue: GPU 1 must sit in its wait until GPU 0's replay is done.
        let q0 = r
            .gpu
            .engines()
            .queues()
            .into_iter()
            .find(|q| q.gpu_id == d0.gpu_id() && q.kind == hcq_sim::engine::QueueKind::Compute)
            .unwrap()
            .id;
        r.gpu.engines().hang(q0, true).unwrap();
        let t = multi.run_all(&mut vals).unwrap();
        let (t0, t1) = (t[0], t[1]);
        settle(&r);
        let q1 = &d1.queue_states()[0];
        assert_ne!(
            q1.rptr, q1.wptr,
            "replay {replay}: GPU 1 ran before GPU 0 finished"
        );
        r.gpu.engines().hang(q0, false).unwrap();
        if let Some((s, _)) = d0.timeline_target(t0) {
            signals.insert(s.addr);
        }
        d1.wait_value(t1).unwrap();
        let got = read(&out);
        for k in 0..(N * SLOT as usize) {
            let a = u32::from_le_bytes(
                input[(k % (8 * SLOT as usize)) * 4..][..4]
                    .try_into()
                    .unwrap(),
            );
            let want = a.wrapping_add(v);
            let g = u32::from_le_bytes(got[k * 4..k * 4 + 4].try_into().unwrap());
            assert_eq!(g, want, "replay {replay}, element {k}");
        }
        // GPU 0's timeline wraps (both devices idle) between replays 3 and 4.
        d0.synchronize().unwrap();
    }
    assert_eq!(
        signals.len(),
        2,
        "GPU 1 waited on both of GPU 0's timeline signals"
    );
}

/// A buffer too small for what the graph recorded, a launch dim beyond the kernel's limits and
/// a missing variable are errors before anything is patched (or submitted).
#[test]
fn bad_replays_are_errors_before_any_patch() {
    const N: usize = 6;
    let r = rig(1);
    let dev = open(&r, 0);
    let p = progs(&dev);
    let inp = dev.alloc(8 * SLOT_BYTES, BufferKind::Gtt).unwrap();
    // Odd launches 1, 3, 5 read input blocks 1, 3, 5: the graph uses 6 KiB of it.
    let small = dev.alloc(6 * SLOT_BYTES - 4, BufferKind::Gtt).unwrap();
    let out = dev.alloc(N as u64 * SLOT_BYTES, BufferKind::Gtt).unwrap();
    let (g, _) = record(&p, N, 0, &inp, &out);
    let mut graph = Graph::record(&dev, &g).unwrap();
    let dims: Vec<Dims> = (0..N).map(|i| dims_for(1, i)).collect();
    graph.run(&values(&inp, &out, 5, &dims)).unwrap();
    let before = (graph.bound_pm4(), graph.last(), dev.last_value());
    let e = graph
        .run(&values(&small, &out, 6, &dims))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("buffer of 6140 bytes") && e.contains("6144 bytes"),
        "{e}"
    );
    let mut big = dims.clone();
    big[3].local = [2048, 1, 1];
    let e = graph
        .run(&values(&inp, &out, 6, &big))
        .unwrap_err()
        .to_string();
    assert!(e.contains("local[0] = 2048"), "{e}");
    let mut v = values(&inp, &out, 6, &dims);
    v.pop();
    let e = graph.run(&v).unwrap_err().to_string();
    assert!(e.contains("no value given for variable 8"), "{e}");
    assert_eq!((graph.bound_pm4(), graph.last(), dev.last_value()), before);
}

/// A replay's submission is the same few ring dwords whatever the graph's size (one
/// INDIRECT_BUFFER between the driver's timeline wait and signal), and the bench function for
/// `hcq bench` runs (its numbers are printed, not asserted).
#[test]
fn replay_submit_is_independent_of_graph_size() {
    let r = rig(1);
    let dev = open(&r, 0);
    let p = progs(&dev);
    let inp = dev.alloc(8 * SLOT_BYTES, BufferKind::Gtt).unwrap();
    let mut per_replay = Vec::new();
    for n in [2usize, 200] {
        let out = dev.alloc(n as u64 * SLOT_BYTES, BufferKind::Gtt).unwrap();
        let (g, _) = record(&p, n, 0, &inp, &out);
        let mut graph = Graph::record(&dev, &g).unwrap();
        let dims: Vec<Dims> = (0..n).map(|i| dims_for(0, i)).collect();
        let vals = values(&inp, &out, val_for(0), &dims);
        dev.synchronize().unwrap();
        let w0 = dev.queue_states()[0].wptr;
        for _ in 0..3 {
            graph.run(&vals).unwrap();
        }
        dev.synchronize().unwrap();
        per_replay.push((dev.queue_states()[0].wptr - w0) / 3);
    }
    assert_eq!(per_replay[0], per_replay[1], "ring dwords per replay");
    assert!(per_replay[0] < 32, "{per_replay:?}");
    // The benchmark function really replays: its timeline values (the replays, plus the
    // fill program's load) all complete, and each replay adds the same few ring dwords.
    for k in [10, 1000] {
        let (before, w0) = (dev.last_value(), dev.queue_states()[0].wptr);
        let ns = graph_replay_submit_ns(&dev, k, 21).unwrap();
        let after = dev.last_value();
        assert!(
            (21..=22).contains(&(after.get() - before.get())),
            "{k} kernels: {} timeline values for 21 replays",
            after.get() - before.get()
        );
        assert_eq!(dev.completed_value(), after, "every replay was waited for");
        let ring = dev.queue_states()[0].wptr - w0;
        assert!(
            ring <= 22 * 32,
            "{k} kernels: {ring} ring dwords for 21 replays"
        );
        assert!(ns.is_finite() && ns > 0.0, "{ns}");
        eprintln!("graph_replay_submit_ns({k} kernels) = {ns:.0}");
    }
}

/// A graph with copies: the copy queue's IB (SDMA INDIRECT, padded to 8 dwords) brings the
/// replay's input into a staging buffer, then the compute IB adds it to a filled slot. The
/// input buffer variable is patched in the SDMA IB's COPY_LINEAR addresses.
#[test]
fn graph_with_copies_then_kernels() {
    let r = rig(1);
    let dev = open(&r, 0);
    let p = progs(&dev);
    let inps: Vec<GpuBuffer> = (0..3)
        .map(|s| {
            let b = dev.alloc(8 * SLOT_BYTES, BufferKind::Gtt).unwrap();
            b.write(0, &input_bytes(s + 20)).unwrap();
            b
        })
        .collect();
    let stage = dev.alloc(SLOT_BYTES, BufferKind::Vram).unwrap();
    let out = dev.alloc(2 * SLOT_BYTES, BufferKind::Gtt).unwrap();
    let mut g = GraphBuilder::new(&hcq_core::arch::GFX11);
    let vi = g.buffer(inps[0].va(), inps[0].len()).unwrap();
    let val = g.scalar(0).unwrap();
    // Input block 2 -> stage.
    g.copy(
        BufArg::Fixed(stage.va()),
        BufArg::Var {
            var: vi,
            offset: 2 * SLOT_BYTES,
            bytes: SLOT_BYTES,
        },
        SLOT_BYTES,
    )
    .unwrap();
    let whole = Dims {
        global: [4, 1, 1],
        local: LOCAL,
    };
    g.launch(
        &p.fill.pm4_program(),
        DimLimits::AMD,
        &[
            Arg::Buf(BufArg::Fixed(out.va())),
            Arg::U32(ScalarArg::Var(val)),
            Arg::U32(ScalarArg::Fixed(SLOT)),
        ],
        DimsArg::Fixed(whole),
    )
    .unwrap();
    g.launch(
        &p.add.pm4_program(),
        DimLimits::AMD,
        &[
            Arg::Buf(BufArg::Fixed(stage.va())),
            Arg::Buf(BufArg::Fixed(out.va())),
            Arg::Buf(BufArg::Fixed(GpuVa(out.va().get() + SLOT_BYTES))),
            Arg::U32(ScalarArg::Fixed(SLOT)),
        ],
        DimsArg::Fixed(whole),
    )
    .unwrap();
    let mut graph = Graph::record(&dev, &g).unwrap();
    assert_eq!(graph.encoded().sdma_ib().len() % 8, 0);
    for replay in 1..=6u32 {
        let k = (replay % 3) as usize;
        let v = val_for(replay);
        let t = graph
            .run(&[
                Some(Value::Addr {
                    addr: inps[k].va(),
                    bytes: inps[k].len(),
                }),
                Some(Value::Scalar(v.into())),
            ])
            .unwrap();
        dev.wait_value(t).unwrap();
        let got = read(&out);
        let src = input_bytes(k as u32 + 20);
        for j in 0..SLOT as usize {
            let a = u32::from_le_bytes(src[(2 * SLOT as usize + j) * 4..][..4].try_into().unwrap());
            let o = (SLOT as usize + j) * 4;
            let g = u32::from_le_bytes(got[o..o + 4].try_into().unwrap());
            assert_eq!(g, a.wrapping_add(v), "replay {replay}, element {j}");
        }
    }
}

/// A copy-only graph replayed 200 times on a 1 KiB SDMA ring, each replay after 0 to 7 3-dword
/// TIMESTAMPs: the replay's INDIRECT starts at every ring residue mod 8 and across many ring
/// wraps, and the driver's NOP padding makes each one end on an 8-dword boundary (the simulator
/// faults the queue otherwise, as hardware would misbehave), so every replay completes.
#[test]
fn sdma_indirects_at_every_ring_offset_and_across_wraps() {
    use hcq_core::cmd::SdmaList;
    let r = rig(1);
    let opts = hcq_driver::DeviceOptions {
        sdma_ring_size: 1024,
        ..hcq_driver::DeviceOptions::default()
    };
    let dev = Device::open_with(&r.kfd, 0, opts).unwrap();
    let srcs: Vec<GpuBuffer> = (0..2)
        .map(|s| {
            let b = dev.alloc(SLOT_BYTES, BufferKind::Gtt).unwrap();
            b.write(0, &input_bytes(s + 40)[..SLOT_BYTES as usize])
                .unwrap();
            b
        })
        .collect();
    let dst = dev.alloc(SLOT_BYTES, BufferKind::Gtt).unwrap();
    let mut g = GraphBuilder::new(&hcq_core::arch::GFX11);
    let vs = g.buffer(srcs[0].va(), SLOT_BYTES).unwrap();
    g.copy(
        BufArg::Fixed(dst.va()),
        BufArg::Var {
            var: vs,
            offset: 0,
            bytes: SLOT_BYTES,
        },
        SLOT_BYTES,
    )
    .unwrap();
    let mut graph = Graph::record(&dev, &g).unwrap();
    let ts = dev.new_signal(0).unwrap();
    let mut residues = [0u32; 8];
    let mut last_wptr = 0;
    for i in 0..200u32 {
        let stamps = i % 8;
        if stamps > 0 {
            let mut l = SdmaList::<64, 8, 8>::new(dev.arch());
            for _ in 0..stamps {
                l.timestamp(&ts.signal_ref()).unwrap();
            }
            // SAFETY: the list only writes timestamps into `ts`, a signal this test created and
            // keeps to the end.
            unsafe { dev.submit_sdma(&l) }.unwrap();
        }
        let wptr = dev.queue_states()[1].wptr;
        residues[(wptr / 4 % 8) as usize] += 1;
        let k = (i % 2) as usize;
        let t = graph
            .run(&[Some(Value::Addr {
                addr: srcs[k].va(),
                bytes: SLOT_BYTES,
            })])
            .unwrap();
        dev.wait_value(t).unwrap();
        assert_eq!(
            read(&dst),
            input_bytes(k as u32 + 40)[..SLOT_BYTES as usize],
            "replay {i}"
        );
        last_wptr = dev.queue_states()[1].wptr;
    }
    assert!(
        residues.iter().all(|&n| n > 0),
        "replays started at ring dword residues {residues:?}"
    );
    assert!(
        last_wptr > 20 * 1024,
        "the ring wrapped only {last_wptr} bytes"
    );
}

/// The intermediate buffers of the interleaved graph (one slot each).
struct Steps {
    s: GpuBuffer,
    t: GpuBuffer,
    u: GpuBuffer,
    r: GpuBuffer,
}

fn steps(dev: &Device) -> Steps {
    let b = || dev.alloc(SLOT_BYTES, BufferKind::Gtt).unwrap();
    Steps {
        s: b(),
        t: b(),
        u: b(),
        r: b(),
    }
}

impl Steps {
    fn all(&self) -> [&GpuBuffer; 4] {
        [&self.s, &self.t, &self.u, &self.r]
    }
}

/// copy -> kernel -> copy -> kernel -> copy, recorded with the values of replay `replay`:
/// `s = inp[block 2]; t = s + s; u = t; r = u + inp[block 5]; out = r`. Variables: the input,
/// the output, the two kernels' dims (1 to 4 workgroups of 64, changing every replay).
fn record_interleaved(
    p: &Progs,
    st: &Steps,
    replay: u32,
    inp: &GpuBuffer,
    out: &GpuBuffer,
) -> GraphBuilder {
    let mut g = GraphBuilder::new(&hcq_core::arch::GFX11);
    let vi = g.buffer(inp.va(), inp.len()).unwrap();
    let vo = g.buffer(out.va(), out.len()).unwrap();
    let d1 = g.dims(dims_for(replay, 1)).unwrap();
    let d3 = g.dims(dims_for(replay, 3)).unwrap();
    let at = |b: &GpuBuffer| BufArg::Fixed(b.va());
    let block = |k: u64| BufArg::Var {
        var: vi,
        offset: k * SLOT_BYTES,
        bytes: SLOT_BYTES,
    };
    let add = |g: &mut GraphBuilder, a: BufArg, b: BufArg, c: BufArg, d: VarId| {
        g.launch(
            &p.add.pm4_program(),
            DimLimits::AMD,
            &[
                Arg::Buf(a),
                Arg::Buf(b),
                Arg::Buf(c),
                Arg::U32(ScalarArg::Fixed(SLOT)),
            ],
            DimsArg::Var(d),
        )
        .unwrap();
    };
    g.copy(at(&st.s), block(2), SLOT_BYTES).unwrap();
    add(&mut g, at(&st.s), at(&st.s), at(&st.t), d1);
    g.copy(at(&st.u), at(&st.t), SLOT_BYTES).unwrap();
    add(&mut g, at(&st.u), block(5), at(&st.r), d3);
    g.copy(BufArg::var(vo, SLOT_BYTES), at(&st.r), SLOT_BYTES)
        .unwrap();
    g
}

fn interleaved_values(inp: &GpuBuffer, out: &GpuBuffer, replay: u32) -> Vec<Option<Value>> {
    vec![
        Some(Value::Addr {
            addr: inp.va(),
            bytes: inp.len(),
        }),
        Some(Value::Addr {
            addr: out.va(),
            bytes: out.len(),
        }),
        Some(Value::Dims(dims_for(replay, 1))),
        Some(Value::Dims(dims_for(replay, 3))),
    ]
}

/// The interleaved graph's operations one by one (each its own submission).
fn interleaved_one_by_one(
    dev: &Device,
    p: &Progs,
    st: &Steps,
    inp: &GpuBuffer,
    out: &GpuBuffer,
    replay: u32,
) {
    let add = |a: u64, b: u64, c: u64, d: Dims| {
        let args = VectorAddArgs {
            a,
            b,
            c,
            n: SLOT as u32,
        };
        // SAFETY: every address is one slot inside a live buffer; the caller waits before
        // reading or freeing them.
        unsafe { p.add.launch_pod(&args, d.global, d.local).unwrap() };
    };
    dev.copy_range(&st.s, 0, inp, 2 * SLOT_BYTES, SLOT_BYTES)
        .unwrap();
    add(
        st.s.va().get(),
        st.s.va().get(),
        st.t.va().get(),
        dims_for(replay, 1),
    );
    dev.copy_range(&st.u, 0, &st.t, 0, SLOT_BYTES).unwrap();
    add(
        st.u.va().get(),
        inp.va().get() + 5 * SLOT_BYTES,
        st.r.va().get(),
        dims_for(replay, 3),
    );
    dev.copy_range(out, 0, &st.r, 0, SLOT_BYTES).unwrap();
}

fn word(b: &[u8], k: usize) -> u32 {
    u32::from_le_bytes(b[k * 4..k * 4 + 4].try_into().unwrap())
}

/// copy -> kernel -> copy -> kernel -> copy replayed 30 times with new inputs, outputs and
/// dims gives, in every buffer it touches, the bytes the same operations give one by one.
/// Everything is zeroed before each replay: an operation that ran before the one it reads
/// from would see zeros.
#[test]
fn interleaved_copies_and_kernels_equal_one_by_one() {
    let r = rig(1);
    let dev = open(&r, 0);
    let p = progs(&dev);
    let inps: Vec<GpuBuffer> = (0..3)
        .map(|s| {
            let b = dev.alloc(8 * SLOT_BYTES, BufferKind::Gtt).unwrap();
            b.write(0, &input_bytes(s + 60)).unwrap();
            b
        })
        .collect();
    let outs: Vec<GpuBuffer> = (0..2)
        .map(|_| dev.alloc(SLOT_BYTES, BufferKind::Gtt).unwrap())
        .collect();
    let check_out = dev.alloc(SLOT_BYTES, BufferKind::Gtt).unwrap();
    let (gs, cs) = (steps(&dev), steps(&dev));
    let g = record_interleaved(&p, &gs, 0, &inps[0], &outs[0]);
    assert_eq!(g.internal_signals(), 5);
    let mut graph = Graph::record(&dev, &g).unwrap();
    let zero = vec![0u8; SLOT_BYTES as usize];
    for replay in 1..=30u32 {
        let k = (replay % 3) as usize;
        let (inp, out) = (&inps[k], &outs[(replay / 3 % 2) as usize]);
        for b in gs
            .all()
            .into_iter()
            .chain(cs.all())
            .chain([out, &check_out])
        {
            b.write(0, &zero).unwrap();
        }
        let v = graph.run(&interleaved_values(inp, out, replay)).unwrap();
        dev.wait_value(v).unwrap();
        interleaved_one_by_one(&dev, &p, &cs, inp, &check_out, replay);
        dev.synchronize().unwrap();
        for (what, a, b) in [
            ("s", &gs.s, &cs.s),
            ("t", &gs.t, &cs.t),
            ("u", &gs.u, &cs.u),
            ("r", &gs.r, &cs.r),
            ("out", out, &check_out),
        ] {
            assert!(read(a) == read(b), "replay {replay}: {what} differs");
        }
        // Workgroup 0 of both kernels always runs: out[0] = 2 * inp[2][0] + inp[5][0].
        let src = input_bytes(k as u32 + 60);
        let want = word(&src, 2 * SLOT as usize)
            .wrapping_mul(2)
            .wrapping_add(word(&src, 5 * SLOT as usize));
        assert_eq!(word(&read(out), 0), want, "replay {replay}");
    }
}

/// The interleaved graph replayed back to back (no host wait in between): every execution of
/// each bound IB is exactly that replay's commands, the copies and kernels of a replay ran in
/// recorded order across the two queues, and a replay started only after the previous one
/// ended (on both queues).
#[test]
fn back_to_back_interleaved_replays_keep_order_and_never_patch_a_running_graph() {
    back_to_back_interleaved(&(1..=24).collect::<Vec<u32>>());
}

/// As above, with replays whose values equal the previous replay's (or, first, the recorded
/// ones) between replays that change them: a replay with unchanged values writes nothing and
/// checks nothing, yet each run must still be exactly its own values' commands, in order, after
/// the previous replay ended on both queues, and the result the one-by-one result.
#[test]
fn back_to_back_interleaved_replays_with_unchanged_and_changed_values() {
    back_to_back_interleaved(&[0, 0, 0, 5, 5, 6, 6, 6, 0, 0, 7, 8, 8, 5, 5]);
}

/// Replays the interleaved graph (recorded with replay 0's values) back to back with replay
/// `seq[k]`'s values as replay `k + 1`, then checks the trace run by run (see the tests above).
fn back_to_back_interleaved(seq: &[u32]) {
    let r = rig_with_trace(1, 1 << 16);
    let dev = open(&r, 0);
    let p = progs(&dev);
    let inps: Vec<GpuBuffer> = (0..2)
        .map(|s| {
            let b = dev.alloc(8 * SLOT_BYTES, BufferKind::Gtt).unwrap();
            b.write(0, &input_bytes(s + 70)).unwrap();
            b
        })
        .collect();
    let out = dev.alloc(SLOT_BYTES, BufferKind::Gtt).unwrap();
    let st = steps(&dev);
    let g = record_interleaved(&p, &st, 0, &inps[0], &out);
    let mut graph = Graph::record(&dev, &g).unwrap();
    let (pm4_ib, pm4_len) = graph.pm4_ib().unwrap();
    let (sdma_ib, sdma_len) = graph.sdma_ib().unwrap();
    let ka = graph.encoded().kernargs_va;
    r.gpu.engines().clear_trace();
    for &id in seq {
        let inp = &inps[(id % 2) as usize];
        graph.run(&interleaved_values(inp, &out, id)).unwrap();
    }
    dev.synchronize().unwrap();
    let trace = r.gpu.engines().trace();
    let (pm4_runs, sdma_runs) = (ib_runs(&trace, pm4_ib), ib_runs(&trace, sdma_ib));
    assert_eq!(pm4_runs.len(), seq.len(), "one PM4 IB run per replay");
    assert_eq!(sdma_runs.len(), seq.len(), "one SDMA IB run per replay");
    let mut prev_end = 0u64;
    for (k, (pr, sr)) in pm4_runs.iter().zip(&sdma_runs).enumerate() {
        let replay = k as u32 + 1;
        let id = seq[k];
        let inp = &inps[(id % 2) as usize];
        let fresh = record_interleaved(&p, &st, id, inp, &out)
            .encode(ka)
            .unwrap();
        let (pw, sw) = (fresh.pm4.as_dwords(), fresh.sdma_ib());
        assert_eq!((pw.len() as u32, sw.len() as u32), (pm4_len, sdma_len));
        assert_run(pr, pw, pm4::decode(pw).count(), replay);
        assert_run(sr, &sw, hcq_core::sdma::decode(&sw).count(), replay);
        // The recorded operations in the order the engines finished them.
        let mut ops: Vec<(u64, &str)> = pr
            .iter()
            .filter(|x| {
                matches!(
                    pm4::decode_one(&pw[x.index as usize..]).unwrap().0,
                    pm4::Pm4Packet::DispatchDirect(_)
                )
            })
            .map(|x| (x.seq, "kernel"))
            .chain(
                sr.iter()
                    .filter(|x| {
                        matches!(
                            hcq_core::sdma::decode_one(&sw[x.index as usize..])
                                .unwrap()
                                .0,
                            hcq_core::sdma::SdmaPacket::CopyLinear(_)
                        )
                    })
                    .map(|x| (x.seq, "copy")),
            )
            .collect();
        ops.sort_unstable();
        let order: Vec<&str> = ops.iter().map(|o| o.1).collect();
        assert_eq!(
            order,
            ["copy", "kernel", "copy", "kernel", "copy"],
            "replay {replay}"
        );
        let seqs = pr.iter().chain(sr).map(|x| x.seq);
        let (first, last) = (seqs.clone().min().unwrap(), seqs.max().unwrap());
        assert!(
            first > prev_end,
            "replay {replay} started (seq {first}) before replay {} ended (seq {prev_end})",
            replay - 1
        );
        prev_end = last;
    }
    // And the last replay's result is the one-by-one result (in workgroup 0, which every
    // replay's kernels cover: the rest of the slots keeps earlier replays' bytes).
    let check = steps(&dev);
    let check_out = dev.alloc(SLOT_BYTES, BufferKind::Gtt).unwrap();
    let last = *seq.last().unwrap();
    interleaved_one_by_one(
        &dev,
        &p,
        &check,
        &inps[(last % 2) as usize],
        &check_out,
        last,
    );
    dev.synchronize().unwrap();
    assert_eq!(read(&out)[..256], read(&check_out)[..256]);
}

/// A graph whose last operation is a copy: its timeline value completes only after the copy.
/// The copy writes into a signal's memory, which the host reads right after `wait_value`
/// without any further wait; while the copy queue is held, the value does not complete.
#[test]
fn graph_ending_in_a_copy_completes_after_the_copy() {
    let r = rig(1);
    let dev = open(&r, 0);
    let p = progs(&dev);
    let x = dev.alloc(SLOT_BYTES, BufferKind::Gtt).unwrap();
    let dst = dev.new_signal(0).unwrap();
    let mut g = GraphBuilder::new(&hcq_core::arch::GFX11);
    let val = g.scalar(0).unwrap();
    g.launch(
        &p.fill.pm4_program(),
        DimLimits::AMD,
        &[
            Arg::Buf(BufArg::Fixed(x.va())),
            Arg::U32(ScalarArg::Var(val)),
            Arg::U32(ScalarArg::Fixed(SLOT)),
        ],
        DimsArg::Fixed(Dims {
            global: [4, 1, 1],
            local: LOCAL,
        }),
    )
    .unwrap();
    // The signal's 64-bit value <- x[0..2].
    g.copy(
        BufArg::Fixed(GpuVa(dst.signal_ref().value_addr())),
        BufArg::Fixed(x.va()),
        8,
    )
    .unwrap();
    let mut graph = Graph::record(&dev, &g).unwrap();
    let sdma_q = r
        .gpu
        .engines()
        .queues()
        .into_iter()
        .find(|q| q.gpu_id == dev.gpu_id() && q.kind == hcq_sim::engine::QueueKind::Sdma)
        .unwrap()
        .id;
    for replay in 1..=6u32 {
        let v32 = val_for(replay) | 1;
        let hold = replay % 2 == 1;
        if hold {
            r.gpu.engines().hang(sdma_q, true).unwrap();
        }
        let v = graph.run(&[Some(Value::Scalar(v32.into()))]).unwrap();
        if hold {
            settle(&r);
            assert!(
                dev.completed_value() < v,
                "replay {replay}: value {v:?} completed while the copy queue was held"
            );
            assert_ne!(dst.value(), u64::from(v32) * 0x1_0000_0001);
            r.gpu.engines().hang(sdma_q, false).unwrap();
        }
        dev.wait_value(v).unwrap();
        assert_eq!(
            dst.value(),
            u64::from(v32) * 0x1_0000_0001,
            "replay {replay}: the copy had not landed when value {v:?} completed"
        );
    }
}

/// `submit_pair` waits for room on the compute ring before writing either ring: with the
/// compute queue held and its ring full, it times out having written nothing (the copy part
/// never runs, the timeline is unchanged), and the device works normally afterwards.
#[test]
fn submit_pair_writes_neither_ring_when_the_compute_ring_has_no_room() {
    let r = rig(1);
    let opts = hcq_driver::DeviceOptions {
        compute_ring_size: 4096,
        ..hcq_driver::DeviceOptions::default()
    };
    let dev = Device::open_with(&r.kfd, 0, opts).unwrap();
    let p = progs(&dev);
    let buf = dev.alloc(SLOT_BYTES, BufferKind::Gtt).unwrap();
    // A compute-only graph: its IB is what every compute part below runs.
    let mut g = GraphBuilder::new(&hcq_core::arch::GFX11);
    g.launch(
        &p.fill.pm4_program(),
        DimLimits::AMD,
        &[
            Arg::Buf(BufArg::Fixed(buf.va())),
            Arg::U32(ScalarArg::Fixed(7)),
            Arg::U32(ScalarArg::Fixed(SLOT)),
        ],
        DimsArg::Fixed(Dims {
            global: [4, 1, 1],
            local: LOCAL,
        }),
    )
    .unwrap();
    let graph = Graph::record(&dev, &g).unwrap();
    let (va, n) = graph.pm4_ib().unwrap();
    let q0 = r
        .gpu
        .engines()
        .queues()
        .into_iter()
        .find(|q| q.gpu_id == dev.gpu_id() && q.kind == hcq_sim::engine::QueueKind::Compute)
        .unwrap()
        .id;
    dev.synchronize().unwrap();
    r.gpu.engines().hang(q0, true).unwrap();
    r.kfd.set_wait_timeout(Duration::from_millis(200));
    // Fill the compute ring with submissions of the compute part's size until one no longer
    // fits.
    let mut filled = 0;
    let err = loop {
        // SAFETY: runs the graph's compute IB (its fill kernels write `buf`, alive to the end;
        // kernargs in the graph's arena); the graph is not replayed or patched meanwhile.
        match unsafe { dev.submit_compute(|c| c.indirect_buffer(va, n)) } {
            Ok(_) => filled += 1,
            Err(e) => break e,
        }
    };
    assert!(matches!(err, hcq_driver::Error::Timeout(_)), "{err}");
    assert!(filled > 10, "{filled} submissions filled a 4 KiB ring");
    let (last, states) = (dev.last_value(), dev.queue_states());
    let marker = dev.new_signal(0).unwrap();
    // SAFETY: as above, plus setting `marker`, a signal this test created.
    let e = unsafe {
        dev.submit_pair(
            |c| c.signal(&marker.signal_ref(), 7),
            |c| c.indirect_buffer(va, n),
        )
    }
    .unwrap_err();
    assert!(matches!(e, hcq_driver::Error::Timeout(_)), "{e}");
    assert_eq!(dev.last_value(), last, "the timeline was put back");
    let after = dev.queue_states();
    assert_eq!(
        (after[0].wptr, after[1].wptr),
        (states[0].wptr, states[1].wptr),
        "neither ring was written"
    );
    r.kfd.set_wait_timeout(Duration::from_secs(20));
    r.gpu.engines().hang(q0, false).unwrap();
    dev.synchronize().unwrap();
    assert_eq!(marker.value(), 0, "the copy part never ran");
    // A pair that fits goes through; its compute part waits for the copy part's signal, so
    // its value covers both.
    // SAFETY: as above.
    let v = unsafe {
        dev.submit_pair(
            |c| c.signal(&marker.signal_ref(), 7),
            |c| {
                c.wait(&marker.signal_ref(), 7)?;
                c.indirect_buffer(va, n)
            },
        )
    }
    .unwrap();
    assert_eq!(v.get(), last.get() + 1);
    dev.wait_value(v).unwrap();
    assert_eq!(marker.value(), 7);
    assert_eq!(word(&read(&buf), 0), 7);
}
