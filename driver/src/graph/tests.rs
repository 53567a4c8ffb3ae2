use super::*;
use hcq_core::arch::GFX11;
use hcq_core::pm4::{self, DispatchInfo};

const KA: GpuVa = GpuVa(0x2_0000_0000);

fn prog(dispatch: bool) -> Program {
    Program {
        prog_addr: GpuVa(0x4000_0000),
        scratch_addr: GpuVa(0x5000_0000),
        rsrc1: 1,
        rsrc2: 2,
        rsrc3: 0,
        tmpring_size: 0,
        dispatch: dispatch.then_some(DispatchInfo {
            packet_offset: 64,
            group_segment_size: 0,
            private_segment_size: 0,
        }),
        ..Program::default()
    }
}

/// What a replay of the big graph takes.
#[derive(Clone, Debug)]
struct Inputs {
    inp: (u64, u64),
    out: (u64, u64),
    scale: u32,
    dims: Vec<Dims>,
}

/// The 1000-kernel graph recorded with `x` (every launch: input at its offset, the output,
/// a scale scalar; every 7th kernel has a dispatch packet and every 3rd fixed dims).
fn big(x: &Inputs) -> (GraphBuilder, Vec<usize>) {
    let mut g = GraphBuilder::new(&GFX11);
    let inp = g.buffer(GpuVa(x.inp.0), x.inp.1).unwrap();
    let out = g.buffer(GpuVa(x.out.0), x.out.1).unwrap();
    let scale = g.scalar(x.scale.into()).unwrap();
    let mut dim_vars = Vec::new();
    for (i, d) in x.dims.iter().enumerate() {
        let dims = if i % 3 == 0 {
            DimsArg::Fixed(Dims {
                global: [1, 1, 1],
                local: [64, 1, 1],
            })
        } else {
            dim_vars.push(i);
            DimsArg::Var(g.dims(*d).unwrap())
        };
        let off = 16 * i as u64;
        g.launch(
            &prog(i % 7 == 0),
            DimLimits::AMD,
            &[
                Arg::Buf(BufArg::Var {
                    var: inp,
                    offset: off,
                    bytes: 16,
                }),
                Arg::U32(ScalarArg::Var(scale)),
                Arg::Buf(BufArg::Var {
                    var: out,
                    offset: off,
                    bytes: 16,
                }),
            ],
            dims,
        )
        .unwrap();
        if i % 100 == 99 {
            g.barrier();
        }
    }
    (g, dim_vars)
}

fn values(x: &Inputs, dim_vars: &[usize]) -> Vec<Option<Value>> {
    let mut v = vec![
        Some(Value::Addr {
            addr: GpuVa(x.inp.0),
            bytes: x.inp.1,
        }),
        Some(Value::Addr {
            addr: GpuVa(x.out.0),
            bytes: x.out.1,
        }),
        Some(Value::Scalar(x.scale.into())),
    ];
    v.extend(dim_vars.iter().map(|&i| Some(Value::Dims(x.dims[i]))));
    v
}

fn inputs(r: u32) -> Inputs {
    let n = 1000;
    Inputs {
        inp: (
            0x1_0000_0000 + 0x10_0000 * u64::from(r % 7),
            16 * n + u64::from(r),
        ),
        out: (0x3_0000_0000 + 0x1000 * u64::from(r % 5), 16 * n),
        scale: r.wrapping_mul(2_654_435_761),
        dims: (0..1000u32)
            .map(|i| Dims {
                global: [1 + (i * 7 + r) % 300, 1 + (r + i) % 4, 1 + r % 2],
                local: [[32, 64, 128, 256][((i + r) % 4) as usize], 1 + (r % 2), 1],
            })
            .collect(),
    }
}

#[test]
fn thousand_kernels_replayed_equal_fresh_encodes() {
    let x0 = inputs(0);
    let (g, dv) = big(&x0);
    let mut enc = g.encode(KA).unwrap();
    let mut ib = enc.pm4.as_dwords().to_vec();
    let mut sd = enc.sdma.as_dwords().to_vec();
    let mut ka = enc.kernargs.clone();
    for r in 1..=100u32 {
        // Every 4th replay keeps the previous values (nothing may be written then).
        let x = if r % 4 == 0 { inputs(r - 1) } else { inputs(r) };
        let n = enc
            .apply(
                &values(&x, &dv),
                &mut [&mut ib[..], &mut sd[..], &mut ka[..]],
            )
            .unwrap();
        if r % 4 == 0 {
            assert_eq!(n, 0, "replay {r} rewrote unchanged values");
        }
        if r % 10 == 0 || r == 1 {
            let (fg, _) = big(&x);
            let fresh = fg.encode(KA).unwrap();
            assert_eq!(&ib[..], fresh.pm4.as_dwords(), "replay {r}: PM4 differs");
            assert_eq!(ka, fresh.kernargs, "replay {r}: kernargs differ");
            let a: Vec<_> = pm4::decode(&ib).collect();
            assert!(a.iter().all(Result::is_ok));
            assert_eq!(a, pm4::decode(fresh.pm4.as_dwords()).collect::<Vec<_>>());
        }
    }
}

#[test]
fn replay_errors_patch_nothing() {
    let x0 = inputs(0);
    let (g, dv) = big(&x0);
    let mut enc = g.encode(KA).unwrap();
    let mut ib = enc.pm4.as_dwords().to_vec();
    let mut sd = enc.sdma.as_dwords().to_vec();
    let mut ka = enc.kernargs.clone();
    let before = (ib.clone(), ka.clone());
    let mut x = inputs(5);
    x.inp.1 = 16 * 1000 - 1;
    let e = enc
        .apply(
            &values(&x, &dv),
            &mut [&mut ib[..], &mut sd[..], &mut ka[..]],
        )
        .unwrap_err();
    assert_eq!(
        e,
        GraphError::Patch(PatchError::BufferTooSmall {
            var: VarId(0),
            bytes: 15_999,
            needed: 16_000
        })
    );
    assert_eq!(
        e.to_string(),
        "graph: variable 0: buffer of 15999 bytes, the graph recorded uses of 16000 bytes"
    );
    let mut x = inputs(5);
    x.dims[998].local = [2048, 1, 1];
    let e = enc
        .apply(
            &values(&x, &dv),
            &mut [&mut ib[..], &mut sd[..], &mut ka[..]],
        )
        .unwrap_err();
    assert!(
        matches!(
            e,
            GraphError::Patch(PatchError::BadDim {
                what: "local",
                axis: 0,
                value: 2048,
                max: 1024,
                ..
            })
        ),
        "{e}"
    );
    let mut v = values(&inputs(5), &dv);
    v.pop();
    let e = enc
        .apply(&v, &mut [&mut ib[..], &mut sd[..], &mut ka[..]])
        .unwrap_err();
    assert_eq!(
        e,
        GraphError::Patch(PatchError::MissingVar(VarId(3 + dv.len() as u16 - 1)))
    );
    assert_eq!((ib, ka), before);
}

#[test]
fn copies_waits_signals_and_timeline_variables() {
    let rec = |tl: u64, v: u64, inp: u64| {
        let mut g = GraphBuilder::new(&GFX11);
        let tl_var = g.signal_var(GpuVa(tl)).unwrap();
        let val = g.scalar(v).unwrap();
        let next = g.scalar(v + 1).unwrap();
        let input = g.buffer(GpuVa(inp), 0x10_0000).unwrap();
        let sig = SigArg::Var {
            var: tl_var,
            event_mailbox_ptr: 0x7fff_0000_0040,
            event_id: 5,
        };
        g.wait(Queue::Copy, sig, ScalarArg::Var(val)).unwrap();
        g.copy(
            BufArg::Fixed(GpuVa(0x9_0000_0000)),
            BufArg::Var {
                var: input,
                offset: 0x100,
                bytes: 0x8_0000,
            },
            0x8_0000,
        )
        .unwrap();
        g.signal(Queue::Copy, sig, ScalarArg::Var(next)).unwrap();
        g.wait(Queue::Compute, sig, ScalarArg::Var(next)).unwrap();
        g.launch(
            &prog(false),
            DimLimits::AMD,
            &[
                Arg::Buf(BufArg::Fixed(GpuVa(0x9_0000_0000))),
                Arg::U64(ScalarArg::Fixed(7)),
            ],
            DimsArg::Fixed(Dims {
                global: [4, 1, 1],
                local: [64, 1, 1],
            }),
        )
        .unwrap();
        g.signal(Queue::Compute, sig, ScalarArg::Var(next)).unwrap();
        g
    };
    let g = rec(0x1000, 10, 0x1_0000_0000);
    // 16 argument bytes, then the internal signals of the one queue switch and of the copy
    // list's end.
    assert_eq!(g.internal_signals(), 2);
    assert_eq!(g.kernargs_bytes(), 64 + 2 * 64);
    let mut enc = g.encode(KA).unwrap();
    let ib = enc.sdma_ib();
    assert_eq!(ib.len() % 8, 0);
    assert!(sdma::decode(&ib).all(|p| p.is_ok()));
    let mut a = enc.pm4.as_dwords().to_vec();
    let mut b = enc.sdma.as_dwords().to_vec();
    let mut k = enc.kernargs.clone();
    // Timeline wrapped to the shadow signal; values restart.
    let vals = [
        Some(Value::Addr {
            addr: GpuVa(0x2000),
            bytes: 64,
        }),
        Some(Value::Scalar(1)),
        Some(Value::Scalar(2)),
        Some(Value::Addr {
            addr: GpuVa(0x7_0000_0000),
            bytes: 0x10_0000,
        }),
    ];
    enc.apply(&vals, &mut [&mut a[..], &mut b[..], &mut k[..]])
        .unwrap();
    let f = rec(0x2000, 1, 0x7_0000_0000).encode(KA).unwrap();
    assert_eq!(&a[..], f.pm4.as_dwords());
    assert_eq!(&b[..], f.sdma.as_dwords());
    assert_eq!(k, f.kernargs);
    // A 64-bit value does not fit an SDMA signal.
    let big = [
        vals[0],
        Some(Value::Scalar(1)),
        Some(Value::Scalar(1 << 32)),
        vals[3],
    ];
    assert!(matches!(
        enc.apply(&big, &mut [&mut a[..], &mut b[..], &mut k[..]]),
        Err(GraphError::Patch(PatchError::ScalarTooLarge { .. }))
    ));
}

#[test]
fn record_time_errors() {
    let mut g = GraphBuilder::new(&GFX11);
    let b = g.buffer(GpuVa(0x1000), 16).unwrap();
    g.launch(
        &prog(false),
        DimLimits::AMD,
        &[Arg::Buf(BufArg::Var {
            var: b,
            offset: 8,
            bytes: 16,
        })],
        DimsArg::Fixed(Dims {
            global: [1, 1, 1],
            local: [1, 1, 1],
        }),
    )
    .unwrap();
    assert!(matches!(
        g.encode(KA),
        Err(GraphError::Patch(PatchError::BufferTooSmall {
            needed: 24,
            ..
        }))
    ));
    let mut g = GraphBuilder::new(&GFX11);
    g.launch(
        &prog(false),
        DimLimits::AMD,
        &[],
        DimsArg::Fixed(Dims {
            global: [1, 1, 1],
            local: [2048, 1, 1],
        }),
    )
    .unwrap();
    assert!(
        g.encode(KA)
            .unwrap_err()
            .to_string()
            .contains("local[0] = 2048")
    );
}

/// Two GPUs: GPU 0 computes into its buffer and signals a shared signal with the replay's
/// kickoff value; GPU 1 waits for it, copies the peer buffer in and computes. Each device's
/// graph is its own recording; the kickoff value and both timeline signals are variables.
#[test]
fn two_gpu_graph_replays() {
    const SHARED: SignalRef = SignalRef {
        addr: 0x7f00_0000,
        event_mailbox_ptr: 0,
        event_id: 0,
    };
    let rec = |kick: u64, tl: [u64; 2], inp: u64| {
        let mut g0 = GraphBuilder::new(&GFX11);
        let k0 = g0.scalar(kick).unwrap();
        let t0 = g0.signal_var(GpuVa(tl[0])).unwrap();
        let i0 = g0.buffer(GpuVa(inp), 0x1000).unwrap();
        g0.launch(
            &prog(false),
            DimLimits::AMD,
            &[
                Arg::Buf(BufArg::var(i0, 0x1000)),
                Arg::Buf(BufArg::Fixed(GpuVa(0xA_0000_0000))),
            ],
            DimsArg::Fixed(Dims {
                global: [16, 1, 1],
                local: [64, 1, 1],
            }),
        )
        .unwrap();
        g0.signal(Queue::Compute, SigArg::Fixed(SHARED), ScalarArg::Var(k0))
            .unwrap();
        g0.signal(
            Queue::Compute,
            SigArg::Var {
                var: t0,
                event_mailbox_ptr: 0,
                event_id: 0,
            },
            ScalarArg::Var(k0),
        )
        .unwrap();
        let mut g1 = GraphBuilder::new(&GFX11);
        let k1 = g1.scalar(kick).unwrap();
        let t1 = g1.signal_var(GpuVa(tl[1])).unwrap();
        g1.wait(Queue::Copy, SigArg::Fixed(SHARED), ScalarArg::Var(k1))
            .unwrap();
        g1.copy(
            BufArg::Fixed(GpuVa(0xB_0000_0000)),
            BufArg::Fixed(GpuVa(0xA_0000_0000)),
            0x1000,
        )
        .unwrap();
        g1.signal(
            Queue::Copy,
            SigArg::Var {
                var: t1,
                event_mailbox_ptr: 0,
                event_id: 0,
            },
            ScalarArg::Var(k1),
        )
        .unwrap();
        g1.wait(
            Queue::Compute,
            SigArg::Var {
                var: t1,
                event_mailbox_ptr: 0,
                event_id: 0,
            },
            ScalarArg::Var(k1),
        )
        .unwrap();
        g1.launch(
            &prog(false),
            DimLimits::AMD,
            &[Arg::Buf(BufArg::Fixed(GpuVa(0xB_0000_0000)))],
            DimsArg::Fixed(Dims {
                global: [16, 1, 1],
                local: [64, 1, 1],
            }),
        )
        .unwrap();
        (g0, g1)
    };
    let (g0, g1) = rec(1, [0x1000, 0x2000], 0x1_0000_0000);
    let mut e0 = g0.encode(KA).unwrap();
    let mut e1 = g1.encode(KA.offset(0x1000)).unwrap();
    let mem = |e: &Encoded| {
        (
            e.pm4.as_dwords().to_vec(),
            e.sdma.as_dwords().to_vec(),
            e.kernargs.clone(),
        )
    };
    let (mut a0, mut b0, mut k0) = mem(&e0);
    let (mut a1, mut b1, mut k1) = mem(&e1);
    for replay in 2..40u64 {
        // GPU 1's timeline wraps onto its shadow signal at replay 20.
        let tl = [0x1000, if replay < 20 { 0x2000 } else { 0x3000 }];
        let inp = 0x1_0000_0000 + 0x1000 * (replay % 3);
        let v0 = [
            Some(Value::Scalar(replay)),
            Some(Value::Addr {
                addr: GpuVa(tl[0]),
                bytes: 64,
            }),
            Some(Value::Addr {
                addr: GpuVa(inp),
                bytes: 0x1000,
            }),
        ];
        let v1 = [
            Some(Value::Scalar(replay)),
            Some(Value::Addr {
                addr: GpuVa(tl[1]),
                bytes: 64,
            }),
        ];
        e0.apply(&v0, &mut [&mut a0[..], &mut b0[..], &mut k0[..]])
            .unwrap();
        e1.apply(&v1, &mut [&mut a1[..], &mut b1[..], &mut k1[..]])
            .unwrap();
        let (f0, f1) = rec(replay, tl, inp);
        let (f0, f1) = (
            f0.encode(KA).unwrap(),
            f1.encode(KA.offset(0x1000)).unwrap(),
        );
        assert_eq!((&a0, &b0, &k0), (&mem(&f0).0, &mem(&f0).1, &mem(&f0).2));
        assert_eq!((&a1, &b1, &k1), (&mem(&f1).0, &mem(&f1).1, &mem(&f1).2));
    }
}

/// One step of a decoded list, as far as ordering goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    /// A DISPATCH_DIRECT.
    Dispatch,
    /// A COPY_LINEAR from, to.
    Copy(u64, u64),
    /// A wait (WAIT_REG_MEM / POLL_REGMEM) for `>= value` at a signal's value address.
    Wait(u64, u32),
    /// A signal (RELEASE_MEM / FENCE) of a value into a signal's value address.
    Signal(u64, u64),
}

/// The PM4 list's dispatches, memory waits and signals (cache and register packets left out).
fn pm4_steps(d: &[u32]) -> Vec<Step> {
    pm4::decode(d)
        .filter_map(|p| match p.unwrap().1 {
            pm4::Pm4Packet::DispatchDirect(_) => Some(Step::Dispatch),
            // Register waits (the barrier's HDP flush) are left out.
            pm4::Pm4Packet::WaitRegMem(w) if w.control.get(pm4::WaitRegMemCtl::MEM_SPACE) == 1 => {
                // Every memory wait here is a wait for >= (the seed's `wait`).
                assert_eq!(w, pm4::wait_packet(w.addr(), w.reference));
                Some(Step::Wait(w.addr().get(), w.reference))
            }
            pm4::Pm4Packet::ReleaseMem(r) => {
                // With the cache flush: what the kernels wrote is in memory for the copy queue.
                assert_eq!(
                    r,
                    pm4::release_packet(
                        &GFX11,
                        hcq_core::sel::DataSel::Data32,
                        hcq_core::sel::IntSel::InterruptAfterWrite,
                        r.addr,
                        r.data,
                        0,
                        true
                    )
                );
                Some(Step::Signal(r.addr.get(), r.data))
            }
            _ => None,
        })
        .collect()
}

/// The SDMA list's copies, waits and signals (GCR_REQ and NOP left out).
fn sdma_steps(d: &[u32]) -> Vec<Step> {
    sdma::decode(d)
        .filter_map(|p| match p.unwrap().1 {
            sdma::SdmaPacket::CopyLinear(c) => Some(Step::Copy(c.src.get(), c.dst.get())),
            sdma::SdmaPacket::PollRegmem(w) => {
                assert_eq!(w, sdma::wait_packet(w.addr, w.value));
                Some(Step::Wait(w.addr.get(), w.value))
            }
            sdma::SdmaPacket::Fence(f) => Some(Step::Signal(f.addr.get(), f.data.into())),
            _ => None,
        })
        .collect()
}

fn launch_fixed(g: &mut GraphBuilder, args: &[Arg]) {
    g.launch(
        &prog(false),
        DimLimits::AMD,
        args,
        DimsArg::Fixed(Dims {
            global: [1, 1, 1],
            local: [64, 1, 1],
        }),
    )
    .unwrap();
}

/// copy -> kernel -> copy -> kernel: every queue switch is a signal on the queue left and a
/// wait on the queue entered (value 1, internal signals at the end of the kernargs region),
/// and the copy list's end is a signal the compute list waits for last.
#[test]
fn interleaved_lists_carry_internal_waits_and_signals() {
    let fixed = |a| BufArg::Fixed(GpuVa(a));
    let rec = |inp: u64| {
        let mut g = GraphBuilder::new(&GFX11);
        let vi = g.buffer(GpuVa(inp), 0x1000).unwrap();
        g.copy(fixed(0xA000), BufArg::var(vi, 0x100), 0x100)
            .unwrap();
        launch_fixed(&mut g, &[Arg::Buf(fixed(0xA000)), Arg::Buf(fixed(0xB000))]);
        g.copy(fixed(0xC000), fixed(0xB000), 0x100).unwrap();
        launch_fixed(
            &mut g,
            &[Arg::Buf(fixed(0xC000)), Arg::Buf(BufArg::var(vi, 0x1000))],
        );
        g
    };
    let g = rec(0x1_0000_0000);
    assert_eq!(
        g.internal_signals(),
        4,
        "three switches and the copy list's end"
    );
    // Two launches of 16 argument bytes, then four 64-byte signals.
    assert_eq!(g.internal_offset(), 64);
    assert_eq!(g.kernargs_bytes(), 64 + 4 * 64);
    let mut enc = g.encode(KA).unwrap();
    assert_eq!(enc.internal_signals, 4);
    let s: Vec<u64> = (0..4)
        .map(|i| enc.internal_signal(i).unwrap().value_addr())
        .collect();
    assert_eq!(s, [0x40, 0x80, 0xC0, 0x100].map(|o| KA.get() + o + 8));
    assert_eq!(enc.internal_signal(4), None);
    assert_eq!(
        enc.internal_value_dwords().collect::<Vec<_>>(),
        [18, 34, 50, 66]
    );
    assert_eq!(enc.kernargs.len(), 80);
    assert!(enc.kernargs[16..].iter().all(|&d| d == 0));
    use Step::*;
    assert_eq!(
        sdma_steps(enc.sdma.as_dwords()),
        [
            Copy(0x1_0000_0000, 0xA000),
            Signal(s[0], 1),
            Wait(s[1], 1),
            Copy(0xB000, 0xC000),
            Signal(s[2], 1),
            Signal(s[3], 1),
        ]
    );
    assert_eq!(
        pm4_steps(enc.pm4.as_dwords()),
        [
            Wait(s[0], 1),
            Dispatch,
            Signal(s[1], 1),
            Wait(s[2], 1),
            Dispatch,
            Wait(s[3], 1),
        ]
    );
    // Copies keep the hardware GCR placement: GCR_REQ, COPY_LINEAR, GCR_REQ per copy.
    let opts = sdma::CopyOptions::hardware(&GFX11);
    let mut one = [0u32; 64];
    let n = sdma::copy_with(&mut one, &opts, GpuVa(0xA000), GpuVa(0x1_0000_0000), 0x100).unwrap();
    assert_eq!(&enc.sdma.as_dwords()[..n], &one[..n]);
    // Patching the input moves the copy's source and the kernel argument, nothing else.
    let mut a = enc.pm4.as_dwords().to_vec();
    let mut b = enc.sdma.as_dwords().to_vec();
    let mut k = enc.kernargs.clone();
    let vals = [Some(Value::Addr {
        addr: GpuVa(0x7_0000_0000),
        bytes: 0x1000,
    })];
    enc.apply(&vals, &mut [&mut a[..], &mut b[..], &mut k[..]])
        .unwrap();
    let f = rec(0x7_0000_0000).encode(KA).unwrap();
    assert_eq!(&a[..], f.pm4.as_dwords());
    assert_eq!(&b[..], f.sdma.as_dwords());
    assert_eq!(k, f.kernargs);
    assert_eq!(sdma_steps(&b)[0], Copy(0x7_0000_0000, 0xA000));
}

/// kernel -> copy (the graph starts on the compute queue and ends with a copy): the copy list
/// first waits for the kernel; the compute list ends waiting for the copy list's end.
#[test]
fn compute_first_graph_ending_in_a_copy() {
    let mut g = GraphBuilder::new(&GFX11);
    launch_fixed(&mut g, &[Arg::U32(ScalarArg::Fixed(1))]);
    g.barrier();
    let sig = SigArg::Fixed(SignalRef::new(0x9000));
    g.signal(Queue::Compute, sig, ScalarArg::Fixed(5)).unwrap();
    g.wait(Queue::Copy, sig, ScalarArg::Fixed(5)).unwrap();
    g.copy(
        BufArg::Fixed(GpuVa(0xD000)),
        BufArg::Fixed(GpuVa(0xE000)),
        64,
    )
    .unwrap();
    assert_eq!(g.internal_signals(), 2);
    assert_eq!(g.kernargs_bytes(), 64 + 2 * 64);
    let enc = g.encode(KA).unwrap();
    let s: Vec<u64> = (0..2)
        .map(|i| enc.internal_signal(i).unwrap().value_addr())
        .collect();
    use Step::*;
    assert_eq!(
        pm4_steps(enc.pm4.as_dwords()),
        [Dispatch, Signal(0x9008, 5), Signal(s[0], 1), Wait(s[1], 1)]
    );
    assert_eq!(
        sdma_steps(enc.sdma.as_dwords()),
        [
            Wait(s[0], 1),
            Wait(0x9008, 5),
            Copy(0xE000, 0xD000),
            Signal(s[1], 1),
        ]
    );
    // The internal signals need a 64-byte aligned region.
    let e = g.encode(KA.offset(16)).unwrap_err();
    assert!(e.to_string().contains("not 64-byte aligned"), "{e}");
}

/// A graph on one queue has no internal signal and no extra command.
#[test]
fn one_queue_graphs_have_no_internal_signals() {
    let mut g = GraphBuilder::new(&GFX11);
    g.copy(
        BufArg::Fixed(GpuVa(0x1000)),
        BufArg::Fixed(GpuVa(0x2000)),
        64,
    )
    .unwrap();
    g.wait(
        Queue::Copy,
        SigArg::Fixed(SignalRef::new(0x3000)),
        ScalarArg::Fixed(1),
    )
    .unwrap();
    g.copy(
        BufArg::Fixed(GpuVa(0x4000)),
        BufArg::Fixed(GpuVa(0x5000)),
        64,
    )
    .unwrap();
    assert_eq!((g.internal_signals(), g.kernargs_bytes()), (0, 0));
    let enc = g.encode(KA.offset(4)).unwrap();
    assert!(enc.pm4.is_empty());
    assert_eq!(
        sdma_steps(enc.sdma.as_dwords()),
        [
            Step::Copy(0x2000, 0x1000),
            Step::Wait(0x3008, 1),
            Step::Copy(0x5000, 0x4000)
        ]
    );
    let mut g = GraphBuilder::new(&GFX11);
    launch_fixed(&mut g, &[Arg::U32(ScalarArg::Fixed(1))]);
    g.barrier();
    launch_fixed(&mut g, &[Arg::U32(ScalarArg::Fixed(2))]);
    assert_eq!((g.internal_signals(), g.kernargs_bytes()), (0, 32));
    let enc = g.encode(KA).unwrap();
    assert!(enc.sdma.is_empty());
    assert_eq!(enc.internal_value_dwords().count(), 0);
    assert_eq!(
        pm4_steps(enc.pm4.as_dwords()),
        [Step::Dispatch, Step::Dispatch]
    );
}

/// A graph error keeps core's error as its source, and becomes the driver's typed variant.
#[test]
fn graph_errors_keep_their_source() {
    use core::error::Error as _;
    let p = PatchError::TooManyVars { capacity: 4 };
    let g = GraphError::Patch(p);
    assert_eq!(g.source().and_then(|s| s.downcast_ref()), Some(&p));
    let c = hcq_core::cmd::CmdError::TooManyCommands { capacity: 2 };
    assert_eq!(
        GraphError::Cmd(c).source().and_then(|s| s.downcast_ref()),
        Some(&c)
    );
    assert!(GraphError::Invalid("x".into()).source().is_none());
    assert!(matches!(
        super::device::graph_err(g),
        crate::Error::Patch(e) if e == p
    ));
}

/// Values given at record time are checked when the graph is recorded, as a replay checks
/// new ones: a replay with unchanged values checks nothing (`Graph::replay`'s fast path), so
/// a recorded value over the limits would otherwise run on the first replay.
#[test]
fn record_time_values_are_checked_at_record() {
    let limits = DimLimits {
        max_local: [256; 3],
        max_threads: 256,
        ..DimLimits::AMD
    };
    // A dims variable recorded with a block over the kernel's limit: refused at encode,
    // naming the operation, the variable and the value.
    let mut g = GraphBuilder::new(&GFX11);
    launch_fixed(&mut g, &[]);
    let d = g
        .dims(Dims {
            global: [4, 1, 1],
            local: [512, 1, 1],
        })
        .unwrap();
    g.launch(&prog(false), limits, &[], DimsArg::Var(d))
        .unwrap();
    let e = g.encode(KA).unwrap_err().to_string();
    for want in [
        "operation 1",
        "launch",
        "dims variable",
        "[512, 1, 1]",
        "local[0] = 512",
    ] {
        assert!(e.contains(want), "{want:?} missing from {e:?}");
    }
    // The same within the limits records.
    let mut g = GraphBuilder::new(&GFX11);
    let d = g
        .dims(Dims {
            global: [4, 1, 1],
            local: [256, 1, 1],
        })
        .unwrap();
    g.launch(&prog(false), limits, &[], DimsArg::Var(d))
        .unwrap();
    assert!(g.encode(KA).is_ok());
    // Fixed dims over the limit name the launch too.
    let mut g = GraphBuilder::new(&GFX11);
    g.launch(
        &prog(false),
        limits,
        &[],
        DimsArg::Fixed(Dims {
            global: [0, 1, 1],
            local: [1, 1, 1],
        }),
    )
    .unwrap();
    let e = g.encode(KA).unwrap_err().to_string();
    assert!(
        e.contains("operation 0") && e.contains("fixed dims global [0, 1, 1]"),
        "{e}"
    );
    // A dims variable shared by two kernels: the value is checked against each one's limits
    // (the second, tighter, refuses it).
    let mut g = GraphBuilder::new(&GFX11);
    let d = g
        .dims(Dims {
            global: [1, 1, 1],
            local: [512, 1, 1],
        })
        .unwrap();
    g.launch(&prog(false), DimLimits::AMD, &[], DimsArg::Var(d))
        .unwrap();
    g.launch(&prog(false), limits, &[], DimsArg::Var(d))
        .unwrap();
    let e = g.encode(KA).unwrap_err().to_string();
    assert!(
        e.contains("operation 1") && e.contains("local[0] = 512"),
        "{e}"
    );
}

/// A copy between buffer variables needs its size from each end's offset: a record-time
/// buffer too small is refused naming the copy, and a replay with one is refused too.
#[test]
fn copy_sizes_are_checked_at_record_and_replay() {
    let mut g = GraphBuilder::new(&GFX11);
    let a = g.buffer(GpuVa(0x1_0000), 4096).unwrap();
    let b = g.buffer(GpuVa(0x2_0000), 1024).unwrap();
    g.copy(BufArg::var(a, 4096), BufArg::var(b, 1024), 2048)
        .unwrap();
    let e = g.encode(KA).unwrap_err().to_string();
    for want in [
        "operation 0",
        "copy of 2048 bytes",
        "source",
        "1024-byte",
        "needs 2048",
    ] {
        assert!(e.contains(want), "{want:?} missing from {e:?}");
    }
    let mut g = GraphBuilder::new(&GFX11);
    let a = g.buffer(GpuVa(0x1_0000), 4096).unwrap();
    let b = g.buffer(GpuVa(0x2_0000), 4096).unwrap();
    g.copy(BufArg::var(a, 4096), BufArg::var(b, 4096), 2048)
        .unwrap();
    let mut enc = g.encode(KA).unwrap();
    let mut v = g.initial_values();
    v[1] = Some(Value::Addr {
        addr: GpuVa(0x3_0000),
        bytes: 1024,
    });
    assert!(matches!(
        enc.table.check(&v),
        Err(PatchError::BufferTooSmall { needed: 2048, .. })
    ));
    v[1] = Some(Value::Addr {
        addr: GpuVa(0x3_0000),
        bytes: 2048,
    });
    assert!(enc.table.check(&v).is_ok());
}

/// The kernel lookup of an AQL encoding: the one kernel `prog` names.
fn kernel_at(entry: GpuVa) -> Option<KernelObject> {
    (entry == prog(false).prog_addr).then_some(KernelObject {
        kernel_object: 0x4000_0000 - 0x40,
        group_segment_size: 0,
        private_segment_size: 16,
    })
}

/// The 1000-kernel graph encoded for an AQL queue: one dispatch packet per launch (no
/// DISPATCH_DIRECT left in the PM4), a PM4 body per barrier; replayed 100 times with new
/// values, the patched image (after `set_dimensions`) and kernargs equal a fresh AQL encoding
/// of the same values, and every packet's sizes are its launch's dims.
#[test]
fn thousand_kernels_as_aql_packets_equal_fresh_encodes() {
    let x0 = inputs(0);
    let (g, dv) = big(&x0);
    let mut enc = g.encode_aql(KA, &kernel_at).unwrap();
    let layout = enc.aql.clone().unwrap();
    let packets: Vec<u32> = layout
        .items
        .iter()
        .filter_map(|i| match *i {
            AqlItem::Dispatch { at } => Some(at),
            AqlItem::Pm4 { .. } => None,
        })
        .collect();
    assert_eq!(packets.len(), 1000);
    assert_eq!(
        layout.items.len(),
        1010,
        "one PM4 body (a barrier) every 100 launches"
    );
    let pm4_part = &layout.image[..layout.pm4_dwords as usize];
    for p in pm4::decode(pm4_part) {
        let (_, p) = p.unwrap();
        assert!(!matches!(p, pm4::Pm4Packet::DispatchDirect(_)), "{p}");
    }
    let mut image = layout.image.clone();
    let mut sd = enc.sdma.as_dwords().to_vec();
    let mut ka = enc.kernargs.clone();
    for r in 1..=100u32 {
        let x = if r % 4 == 0 { inputs(r - 1) } else { inputs(r) };
        let n = enc
            .apply(
                &values(&x, &dv),
                &mut [&mut image[..], &mut sd[..], &mut ka[..]],
            )
            .unwrap();
        if r % 4 == 0 {
            assert_eq!(n, 0, "replay {r} rewrote unchanged values");
        }
        let mut l = AqlLayout {
            image: image.clone(),
            ..layout.clone()
        };
        l.set_dimensions();
        image = l.image;
        if r % 10 == 0 || r == 1 {
            let (fg, _) = big(&x);
            let fresh = fg.encode_aql(KA, &kernel_at).unwrap();
            assert_eq!(image, fresh.aql.unwrap().image, "replay {r}: image differs");
            assert_eq!(ka, fresh.kernargs, "replay {r}: kernargs differ");
        }
        for (i, &at) in packets.iter().enumerate() {
            let w = &image[at as usize..at as usize + 16];
            let d = if i % 3 == 0 {
                Dims {
                    global: [1, 1, 1],
                    local: [64, 1, 1],
                }
            } else {
                x.dims[i]
            };
            assert_eq!(w[1], d.local[0] | d.local[1] << 16, "replay {r} launch {i}");
            assert_eq!(w[2] & 0xffff, d.local[2]);
            let grid: Vec<u32> = (0..3).map(|k| d.global[k] * d.local[k]).collect();
            assert_eq!(&w[3..6], &grid[..], "replay {r} launch {i}");
            let dims = if grid[2] > 1 || d.local[2] > 1 {
                3
            } else if grid[1] > 1 || d.local[1] > 1 {
                2
            } else {
                1
            };
            assert_eq!(w[0] >> 16, dims, "replay {r} launch {i}: setup");
            assert_eq!(
                w[0] & 0xffff,
                u32::from(
                    hcq_core::aql::Header::ordered(hcq_core::aql::TYPE_KERNEL_DISPATCH).raw()
                )
            );
            assert_eq!(u64::from(w[8]) | u64::from(w[9]) << 32, 0x4000_0000 - 0x40);
            assert_eq!(w[6], 16, "private segment");
        }
    }
}

/// A launch of a kernel the lookup does not know is refused when an AQL encoding is made,
/// naming the launch; the PM4 encoding needs no lookup.
#[test]
fn aql_encoding_needs_the_kernel_descriptor() {
    let mut g = GraphBuilder::new(&GFX11);
    let mut p = prog(false);
    p.prog_addr = GpuVa(0x4000_1000);
    g.launch(
        &p,
        DimLimits::AMD,
        &[],
        DimsArg::Fixed(Dims {
            global: [1, 1, 1],
            local: [64, 1, 1],
        }),
    )
    .unwrap();
    g.encode(KA).unwrap();
    let e = g.encode_aql(KA, &kernel_at).unwrap_err().to_string();
    assert!(
        e.contains("operation 0 (launch of the kernel at 0x40001000)")
            && e.contains("kernel descriptor"),
        "{e}"
    );
}
