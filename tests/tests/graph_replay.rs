//! Graph replay on the simulator: a 1000-kernel graph replayed with new inputs and dims gives
//! what the same launches give one by one; back-to-back replays never patch a running graph
//! (the engines' trace of executed IB packets is exactly one replay's, never a mix); the
//! timeline wraps in the middle of replays; a two-GPU graph.

use core::time::Duration;
use hcq_core::arch::GpuVa;
use hcq_core::pm4;
use hcq_driver::graph::{
    Arg, BufArg, Dep, DeviceGraph, DimLimits, Dims, DimsArg, GraphBuilder, MultiGraph, ScalarArg,
    SigArg, Value, VarId,
};
use hcq_driver::kernels::{FillArgs, VectorAddArgs};
use hcq_driver::{BufferKind, Device, GpuBuffer, Kfd, Program};
use hcq_sim::engine::kfd::SimGpu;
use hcq_sim::engine::trace::{Site, TraceEvent};
use hcq_sim::{SimConfig, SimKfd, SimMode};
use std::sync::Arc;

struct Rig {
    gpu: SimGpu,
    kfd: Kfd,
    _sim: Arc<SimKfd>,
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
    let sim = Arc::new(SimKfd::new(cfg).unwrap());
    let gpu = SimGpu::attach(&sim);
    gpu.engines().set_trace_capacity(trace);
    gpu.engines().with_kernels(|r| {
        for co in [
            hcq_driver::kernels::fill("gfx1100").unwrap(),
            hcq_driver::kernels::vector_add("gfx1100").unwrap(),
        ] {
            r.register_fixture(co).unwrap();
        }
    });
    let kfd = Kfd::with_sys(Arc::clone(&sim) as Arc<dyn hcq_core::kfd::KfdSys>).unwrap();
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
        fill: Program::load(d, hcq_driver::kernels::fill("gfx1100").unwrap(), "fill").unwrap(),
        add: Program::load(
            d,
            hcq_driver::kernels::vector_add("gfx1100").unwrap(),
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
    let vi = g.buffer(GpuVa(inp.va()), inp.len()).unwrap();
    let vo = g.buffer(GpuVa(out.va()), out.len()).unwrap();
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
            addr: GpuVa(inp.va()),
            bytes: inp.len(),
        }),
        Some(Value::Addr {
            addr: GpuVa(out.va()),
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
        let slot = |k: usize| out.va() + k as u64 * SLOT_BYTES;
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
                    a: inp.va() + (i % 8) as u64 * SLOT_BYTES,
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
    let mut graph = DeviceGraph::new(&dev, &g).unwrap();
    let zero = vec![0u8; n * SLOT_BYTES as usize];
    for replay in 1..=replays {
        let inp = &inps[(replay % 2) as usize];
        let out = &outs[(replay / 2 % 2) as usize];
        let val = val_for(replay);
        let dims: Vec<Dims> = (0..n).map(|i| dims_for(replay, i)).collect();
        out.write(0, &zero).unwrap();
        check.write(0, &zero).unwrap();
        let v = graph.replay(&values(inp, out, val, &dims)).unwrap();
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
    let mut graph = DeviceGraph::new(&dev, &g).unwrap();
    let (ib, ib_len) = graph.pm4_ib().unwrap();
    let ka = graph.encoded().kernargs_va;
    r.gpu.engines().clear_trace();
    for replay in 1..=REPLAYS {
        let inp = &inps[(replay % 2) as usize];
        let dims: Vec<Dims> = (0..N).map(|i| dims_for(replay, i)).collect();
        graph
            .replay(&values(inp, &out, val_for(replay), &dims))
            .unwrap();
    }
    dev.synchronize().unwrap();
    // Split the IB's executed packets into runs (a run starts at dword 0).
    let mut runs: Vec<Vec<(u32, Vec<u32>)>> = Vec::new();
    for e in r.gpu.engines().trace() {
        let (Site::Ib { base, index, .. }, TraceEvent::Packet { dwords, len }) = (e.site, &e.event)
        else {
            continue;
        };
        if base != ib {
            continue;
        }
        if index == 0 {
            runs.push(Vec::new());
        }
        if runs.is_empty() {
            panic!("first IB packet at index {index}: {e}");
        }
        let n = (*len as usize).min(dwords.len());
        runs.last_mut().unwrap().push((index, dwords[..n].to_vec()));
    }
    assert_eq!(runs.len(), REPLAYS as usize, "one IB execution per replay");
    for (k, run) in runs.iter().enumerate() {
        let replay = k as u32 + 1;
        let inp = &inps[(replay % 2) as usize];
        let (fg, _) = record(&p, N, replay, inp, &out);
        let fresh = fg.encode(ka).unwrap();
        let want = fresh.pm4.as_dwords();
        assert_eq!(want.len() as u32, ib_len);
        let mut covered = 0usize;
        for (index, got) in run {
            let at = *index as usize;
            assert_eq!(
                &want[at..at + got.len()],
                &got[..],
                "replay {replay}: packet at IB dword {at} is not this replay's"
            );
            covered += 1;
        }
        assert_eq!(
            covered,
            pm4::decode(want).count(),
            "replay {replay}: packets executed"
        );
    }
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
    let mut graph = DeviceGraph::new(&dev, &g).unwrap();
    dev.set_timeline_value((1 << 31) - 5).unwrap();
    let first = dev.timeline_target(dev.last_value() + 1);
    let mut signals = std::collections::BTreeSet::new();
    for replay in 1..=20u32 {
        let dims: Vec<Dims> = (0..N).map(|i| dims_for(replay, i)).collect();
        out.write(0, &vec![0u8; N * SLOT_BYTES as usize]).unwrap();
        let v = graph
            .replay(&values(&inp, &out, val_for(replay), &dims))
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
                Arg::Buf(BufArg::Fixed(GpuVa(shared.va() + i as u64 * SLOT_BYTES))),
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
                Arg::Buf(BufArg::Fixed(GpuVa(inp.va() + (i % 8) as u64 * SLOT_BYTES))),
                Arg::Buf(BufArg::Fixed(GpuVa(shared.va() + i as u64 * SLOT_BYTES))),
                Arg::Buf(BufArg::Fixed(GpuVa(out.va() + i as u64 * SLOT_BYTES))),
                Arg::U32(ScalarArg::Fixed(SLOT)),
            ],
            DimsArg::Fixed(Dims {
                global: [4, 1, 1],
                local: LOCAL,
            }),
        )
        .unwrap();
    }
    let gr0 = DeviceGraph::new(&d0, &g0).unwrap();
    let gr1 = DeviceGraph::new(&d1, &g1).unwrap();
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
            .find(|q| q.gpu_id == d0.gpu_id() && q.kind == hcq_sim::engine::QueueKind::Pm4)
            .unwrap()
            .id;
        r.gpu.engines().hang(q0, true).unwrap();
        let t = multi.replay(&mut vals).unwrap();
        let (t0, t1) = (t[0], t[1]);
        std::thread::sleep(Duration::from_millis(20));
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
    let mut graph = DeviceGraph::new(&dev, &g).unwrap();
    let dims: Vec<Dims> = (0..N).map(|i| dims_for(1, i)).collect();
    graph.replay(&values(&inp, &out, 5, &dims)).unwrap();
    let before = (graph.bound_pm4(), graph.last(), dev.last_value());
    let e = graph
        .replay(&values(&small, &out, 6, &dims))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("buffer of 6140 bytes") && e.contains("6144 bytes"),
        "{e}"
    );
    let mut big = dims.clone();
    big[3].local = [2048, 1, 1];
    let e = graph
        .replay(&values(&inp, &out, 6, &big))
        .unwrap_err()
        .to_string();
    assert!(e.contains("local[0] = 2048"), "{e}");
    let mut v = values(&inp, &out, 6, &dims);
    v.pop();
    let e = graph.replay(&v).unwrap_err().to_string();
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
        let mut graph = DeviceGraph::new(&dev, &g).unwrap();
        let dims: Vec<Dims> = (0..n).map(|i| dims_for(0, i)).collect();
        let vals = values(&inp, &out, val_for(0), &dims);
        dev.synchronize().unwrap();
        let w0 = dev.queue_states()[0].wptr;
        for _ in 0..3 {
            graph.replay(&vals).unwrap();
        }
        dev.synchronize().unwrap();
        per_replay.push((dev.queue_states()[0].wptr - w0) / 3);
    }
    assert_eq!(per_replay[0], per_replay[1], "ring dwords per replay");
    assert!(per_replay[0] < 32, "{per_replay:?}");
    for k in [10, 1000] {
        let ns = hcq_driver::graph::graph_replay_submit_ns(&dev, k, 21).unwrap();
        assert!(ns.is_finite() && ns > 0.0);
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
    let vi = g.buffer(GpuVa(inps[0].va()), inps[0].len()).unwrap();
    let val = g.scalar(0).unwrap();
    // Input block 2 -> stage.
    g.copy(
        BufArg::Fixed(GpuVa(stage.va())),
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
            Arg::Buf(BufArg::Fixed(GpuVa(out.va()))),
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
            Arg::Buf(BufArg::Fixed(GpuVa(stage.va()))),
            Arg::Buf(BufArg::Fixed(GpuVa(out.va()))),
            Arg::Buf(BufArg::Fixed(GpuVa(out.va() + SLOT_BYTES))),
            Arg::U32(ScalarArg::Fixed(SLOT)),
        ],
        DimsArg::Fixed(whole),
    )
    .unwrap();
    let mut graph = DeviceGraph::new(&dev, &g).unwrap();
    assert_eq!(graph.encoded().sdma_ib().len() % 8, 0);
    for replay in 1..=6u32 {
        let k = (replay % 3) as usize;
        let v = val_for(replay);
        let t = graph
            .replay(&[
                Some(Value::Addr {
                    addr: GpuVa(inps[k].va()),
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
