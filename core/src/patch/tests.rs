use super::*;
use crate::arch::GFX11;
use crate::cmd::{Pm4List, SdmaList};
use crate::hsa::DispatchPacket;
use crate::pm4::{DispatchInfo, Program};
use crate::signal::SignalRef;
use crate::sync::atomic::{AtomicU32, Ordering};

/// Everything a small graph depends on.
#[derive(Clone, Copy, Debug)]
struct Vals {
    tl_sig: u64,
    wait_v: u32,
    signal_v: u64,
    dims: Dims,
    inp: (u64, u64),
    scale: u32,
}

const KA: u64 = 0x7000_0000;
const MAILBOX: u64 = 0x7fff_0000_0010;

fn prog() -> Program {
    Program {
        prog_addr: GpuVa(0x1000_0000),
        scratch_addr: GpuVa(0x2000_0000),
        tmpring_size: 1,
        rsrc1: 2,
        rsrc2: 3,
        rsrc3: 0,
        dispatch: Some(DispatchInfo {
            packet_offset: 64,
            group_segment_size: 0,
            private_segment_size: 0,
        }),
        ..Program::default()
    }
}

struct Rec {
    pm4: Pm4List<512, 16>,
    sdma: SdmaList<256, 16, 64>,
    ka: [u32; 32],
    exec: ExecCmd,
    wait: WaitCmd,
    sig: SignalCmd,
    copy: CopyCmd,
    swait: WaitCmd,
    ssig: SignalCmd,
}

/// Records the graph with `v`, the way a fresh encode with those values looks.
fn record(v: &Vals) -> Rec {
    let mut pm4: Pm4List<512, 16> = Pm4List::new(&GFX11);
    let tl = SignalRef {
        addr: v.tl_sig,
        event_mailbox_ptr: MAILBOX,
        event_id: 7,
    };
    let wait = pm4.wait(&tl, v.wait_v).unwrap();
    pm4.memory_barrier().unwrap();
    let (exec, dw) = pm4
        .exec(&prog(), GpuVa(KA), v.dims.global, v.dims.local)
        .unwrap();
    let sig = pm4.signal(&tl, v.signal_v).unwrap();
    // Kernargs: [ptr to inp + 0x40 (u64), scale (u32), pad], dispatch packet at byte 64.
    let mut ka = [0u32; 32];
    let p = v.inp.0 + 0x40;
    ka[0] = lo32(p);
    ka[1] = hi32(p);
    ka[2] = v.scale;
    let pkt = dw.unwrap().packet.to_bytes();
    for (i, c) in pkt.chunks_exact(4).enumerate() {
        ka[16 + i] = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
    }
    let mut sdma: SdmaList<256, 16, 64> = SdmaList::new(&GFX11);
    let swait = sdma.wait(&tl, v.wait_v).unwrap();
    // Two chunks with a 0x10-byte offset into the input buffer.
    let opts = sdma::CopyOptions {
        max_copy_bytes: 0x100,
        ..sdma::CopyOptions::seed(&GFX11)
    };
    let copy = sdma
        .copy_with(&opts, GpuVa(0x9000_0000), GpuVa(v.inp.0 + 0x10), 0x180)
        .unwrap();
    let ssig = sdma.signal(&tl, v.wait_v).unwrap();
    Rec {
        pm4,
        sdma,
        ka,
        exec,
        wait,
        sig,
        copy,
        swait,
        ssig,
    }
}

const V0: Vals = Vals {
    tl_sig: 0x5000,
    wait_v: 3,
    signal_v: 4,
    dims: Dims {
        global: [4, 2, 1],
        local: [64, 1, 1],
    },
    inp: (0x8000_0000, 0x400),
    scale: 9,
};

struct Ids {
    tl: VarId,
    wait_v: VarId,
    signal_v: VarId,
    dims: VarId,
    inp: VarId,
    scale: VarId,
}

fn values(ids: &Ids, v: &Vals) -> [Option<Value>; 6] {
    let mut out = [None; 6];
    out[ids.tl.index()] = Some(Value::Addr {
        addr: GpuVa(v.tl_sig),
        bytes: 64,
    });
    out[ids.wait_v.index()] = Some(Value::Scalar(v.wait_v.into()));
    out[ids.signal_v.index()] = Some(Value::Scalar(v.signal_v));
    out[ids.dims.index()] = Some(Value::Dims(v.dims));
    out[ids.inp.index()] = Some(Value::Addr {
        addr: GpuVa(v.inp.0),
        bytes: v.inp.1,
    });
    out[ids.scale.index()] = Some(Value::Scalar(v.scale.into()));
    out
}

fn build(r: &Rec) -> (PatchTable<8, 64, 3>, Ids) {
    let mut t: PatchTable<8, 64, 3> = PatchTable::new();
    let tl = t
        .declare(Value::Addr {
            addr: GpuVa(V0.tl_sig),
            bytes: 64,
        })
        .unwrap();
    let wait_v = t.declare(Value::Scalar(V0.wait_v.into())).unwrap();
    let signal_v = t.declare(Value::Scalar(V0.signal_v)).unwrap();
    let dims = t.declare(Value::Dims(V0.dims)).unwrap();
    let inp = t
        .declare(Value::Addr {
            addr: GpuVa(V0.inp.0),
            bytes: V0.inp.1,
        })
        .unwrap();
    let scale = t.declare(Value::Scalar(V0.scale.into())).unwrap();
    let pm4 = r.pm4.as_dwords();
    let sd = r.sdma.as_dwords();
    t.bind_wait_signal(tl, 0, pm4, &r.wait).unwrap();
    t.bind_wait_value(wait_v, 0, pm4, &r.wait).unwrap();
    t.bind_exec(dims, 0, pm4, &r.exec, DimLimits::AMD, Some((2, 16)))
        .unwrap();
    t.bind_signal_addr(tl, 0, pm4, &r.sig).unwrap();
    t.bind_signal_value(signal_v, 0, pm4, &r.sig).unwrap();
    t.bind_u64(inp, 2, Some(&r.ka[..]), 0, 0x40).unwrap();
    t.require_bytes(inp, 0x100).unwrap();
    t.bind_u32(scale, 2, Some(&r.ka[..]), 2).unwrap();
    t.bind_wait_signal(tl, 1, sd, &r.swait).unwrap();
    t.bind_wait_value(wait_v, 1, sd, &r.swait).unwrap();
    t.bind_copy(Some(inp), None, 1, sd, &r.copy).unwrap();
    t.bind_signal_addr(tl, 1, sd, &r.ssig).unwrap();
    t.bind_signal_value(wait_v, 1, sd, &r.ssig).unwrap();
    (
        t,
        Ids {
            tl,
            wait_v,
            signal_v,
            dims,
            inp,
            scale,
        },
    )
}

fn copies(r: &Rec) -> ([u32; 512], [u32; 256], [u32; 32]) {
    let mut a = [0u32; 512];
    let mut b = [0u32; 256];
    a[..r.pm4.as_dwords().len()].copy_from_slice(r.pm4.as_dwords());
    b[..r.sdma.as_dwords().len()].copy_from_slice(r.sdma.as_dwords());
    (a, b, r.ka)
}

#[test]
fn patched_equals_fresh_encode() {
    let r = record(&V0);
    let (mut t, ids) = build(&r);
    let (mut a, mut b, mut k) = copies(&r);
    let (na, nb) = (r.pm4.as_dwords().len(), r.sdma.as_dwords().len());
    // Up to the last patched dword: the signals' values (the mailbox parts are fixed).
    let (sa, sb) = (r.sig.offset as usize, r.ssig.offset as usize);
    assert_eq!(t.needed_dwords(), &[sa + 7, sb + 4, 16 + 6]);
    assert_eq!(t.required_bytes(ids.inp).unwrap(), 0x190);

    let v1 = Vals {
        tl_sig: 0xA000,
        wait_v: 77,
        signal_v: 0x1_0000_0078,
        dims: Dims {
            global: [9, 3, 2],
            local: [16, 4, 2],
        },
        inp: (0x1_2345_0000, 0x1000),
        scale: 0xdead,
    };
    let n = t
        .apply(
            &values(&ids, &v1),
            &mut [&mut a[..na], &mut b[..nb], &mut k[..]],
        )
        .unwrap();
    // tl: 2 pm4 + 2 sdma (x2 dwords); wait_v: pm4 1 + sdma 2; signal_v 2; dims 6 + 2 + 3;
    // inp: ka 2 + 2 chunks * 2; scale 1.
    assert_eq!(n, 8 + 3 + 2 + 11 + 6 + 1);
    let f = record(&v1);
    assert_eq!(&a[..na], f.pm4.as_dwords());
    assert_eq!(&b[..nb], f.sdma.as_dwords());
    assert_eq!(k, f.ka);
    // The decoders see the same packets.
    assert!(pm4::decode(&a[..na]).eq(pm4::decode(f.pm4.as_dwords())));
    assert!(sdma::decode(&b[..nb]).eq(sdma::decode(f.sdma.as_dwords())));
    let pkt_bytes: [u8; 64] = core::array::from_fn(|i| k[16 + i / 4].to_le_bytes()[i % 4]);
    let pkt = DispatchPacket::from_bytes(&pkt_bytes);
    assert_eq!(
        (pkt.grid_size_x, pkt.grid_size_y, pkt.grid_size_z),
        (144, 12, 4)
    );
    assert_eq!(
        (
            pkt.workgroup_size_x,
            pkt.workgroup_size_y,
            pkt.workgroup_size_z
        ),
        (16, 4, 2)
    );

    // Same values again: nothing written.
    let n = t
        .apply(
            &values(&ids, &v1),
            &mut [&mut a[..na], &mut b[..nb], &mut k[..]],
        )
        .unwrap();
    assert_eq!(n, 0);
    // One scalar: one dword.
    let v2 = Vals { scale: 1, ..v1 };
    let n = t
        .apply(
            &values(&ids, &v2),
            &mut [&mut a[..na], &mut b[..nb], &mut k[..]],
        )
        .unwrap();
    assert_eq!(n, 1);
    assert_eq!(k[2], 1);
}

#[test]
fn errors_patch_nothing() {
    let r = record(&V0);
    let (mut t, ids) = build(&r);
    let (mut a, mut b, mut k) = copies(&r);
    let (na, nb) = (r.pm4.as_dwords().len(), r.sdma.as_dwords().len());
    let before = (a, b, k);
    let good = Vals {
        wait_v: 5,
        dims: Dims {
            global: [1, 1, 1],
            local: [1, 1, 1],
        },
        ..V0
    };

    let mut run =
        |vals: [Option<Value>; 6]| t.apply(&vals, &mut [&mut a[..na], &mut b[..nb], &mut k[..]]);
    let mut v = values(&ids, &good);
    v[ids.scale.index()] = None;
    assert_eq!(run(v), Err(PatchError::MissingVar(ids.scale)));
    assert_eq!(
        run(values(
            &ids,
            &Vals {
                inp: (0x8000_0000, 0x18f),
                ..good
            }
        )),
        Err(PatchError::BufferTooSmall {
            var: ids.inp,
            bytes: 0x18f,
            needed: 0x190
        })
    );
    assert_eq!(
        run(values(
            &ids,
            &Vals {
                dims: Dims {
                    global: [1, 1, 1],
                    local: [64, 32, 1]
                },
                ..good
            }
        )),
        Err(PatchError::BadDim {
            var: ids.dims,
            what: "local (threads per workgroup)",
            axis: 3,
            value: 2048,
            max: 1024
        })
    );
    assert_eq!(
        run(values(
            &ids,
            &Vals {
                dims: Dims {
                    global: [0x0100_0000, 1, 1],
                    local: [1024, 1, 1]
                },
                ..good
            }
        )),
        Err(PatchError::BadDim {
            var: ids.dims,
            what: "grid (global*local)",
            axis: 0,
            value: 0x4_0000_0000,
            max: u32::MAX.into()
        })
    );
    assert!(matches!(
        run(values(
            &ids,
            &Vals {
                dims: Dims {
                    global: [1, 0, 1],
                    local: [1, 1, 1]
                },
                ..good
            }
        )),
        Err(PatchError::BadDim {
            what: "global",
            axis: 1,
            value: 0,
            ..
        })
    ));
    let mut v = values(&ids, &good);
    v[ids.wait_v.index()] = Some(Value::Scalar(1 << 32));
    assert_eq!(
        run(v),
        Err(PatchError::ScalarTooLarge {
            var: ids.wait_v,
            value: 1 << 32,
            max: u32::MAX.into()
        })
    );
    let mut v = values(&ids, &good);
    v[ids.dims.index()] = Some(Value::Scalar(3));
    assert_eq!(
        run(v),
        Err(PatchError::WrongKind {
            var: ids.dims,
            expected: Kind::Dims,
            found: Kind::Scalar
        })
    );
    assert_eq!(
        t.apply(
            &values(&ids, &good),
            &mut [&mut a[..na], &mut b[..nb - 7], &mut k[..]]
        ),
        Err(PatchError::TargetTooShort {
            target: 1,
            len: nb - 7,
            needed: nb - 6
        })
    );
    assert_eq!(
        t.apply(&values(&ids, &good), &mut [&mut a[..na], &mut b[..nb]]),
        Err(PatchError::MissingTarget { target: 2 })
    );
    assert_eq!((a, b, k), before);
    // The good values go through, and the messages name the value.
    t.apply(
        &values(&ids, &good),
        &mut [&mut a[..na], &mut b[..nb], &mut k[..]],
    )
    .unwrap();
    assert_ne!((a, b, k), before);
    let msg = PatchError::BufferTooSmall {
        var: ids.inp,
        bytes: 3,
        needed: 4,
    };
    let mut s: heapless::String<128> = heapless::String::new();
    core::fmt::write(&mut s, format_args!("{msg}")).unwrap();
    assert_eq!(
        s.as_str(),
        "variable 4: buffer of 3 bytes, the graph recorded uses of 4 bytes"
    );
}

#[test]
fn bindings_are_verified() {
    let r = record(&V0);
    let pm4 = r.pm4.as_dwords();
    let mut t: PatchTable<8, 64, 3> = PatchTable::new();
    // A variable whose record-time value is not what the list holds.
    let wrong = t.declare(Value::Scalar(4)).unwrap();
    assert!(matches!(
        t.bind_wait_value(wrong, 0, pm4, &r.wait),
        Err(PatchError::Mismatch {
            found: 3,
            expected: 4,
            ..
        })
    ));
    // A handle pointing at another packet.
    let s = t.declare(Value::Scalar(3)).unwrap();
    let bad = WaitCmd {
        offset: r.exec.offset,
        engine: Engine::Pm4,
    };
    assert!(matches!(
        t.bind_wait_value(s, 0, pm4, &bad),
        Err(PatchError::Cmd(CmdError::WrongPacket { .. }))
    ));
    // Kind checks, unknown ids and targets.
    assert!(matches!(
        t.bind_exec(s, 0, pm4, &r.exec, DimLimits::AMD, Some((2, 16))),
        Err(PatchError::WrongKind { .. })
    ));
    assert_eq!(
        t.bind_u32::<[u32]>(VarId(9), 0, None, 0),
        Err(PatchError::UnknownVar(VarId(9)))
    );
    assert_eq!(
        t.bind_u32::<[u32]>(s, 3, None, 0),
        Err(PatchError::BadTarget {
            target: 3,
            capacity: 3
        })
    );
    // An exec with a dispatch pointer needs its packet location.
    let d = t.declare(Value::Dims(V0.dims)).unwrap();
    assert!(
        t.bind_exec(d, 0, pm4, &r.exec, DimLimits::AMD, None)
            .is_err()
    );
    // A copy from a buffer declared smaller than the copy reads.
    let small = t
        .declare(Value::Addr {
            addr: GpuVa(V0.inp.0),
            bytes: 0x100,
        })
        .unwrap();
    assert_eq!(
        t.bind_copy(Some(small), None, 1, r.sdma.as_dwords(), &r.copy),
        Err(PatchError::BufferTooSmall {
            var: small,
            bytes: 0x100,
            needed: 0x190
        })
    );
    // Failed bindings add nothing.
    assert!(t.entries().is_empty());
    // Capacity.
    let mut tiny: PatchTable<1, 1, 1> = PatchTable::new();
    let a = tiny.declare(Value::Scalar(3)).unwrap();
    assert_eq!(
        tiny.declare(Value::Scalar(0)),
        Err(PatchError::TooManyVars { capacity: 1 })
    );
    tiny.bind_wait_value(a, 0, pm4, &r.wait).unwrap();
    assert_eq!(
        tiny.bind_wait_value(a, 0, pm4, &r.wait),
        Err(PatchError::TooManyEntries { capacity: 1 })
    );
}

#[test]
fn shared_dims_keep_the_tightest_limits() {
    let mut l: Pm4List<512, 8> = Pm4List::new(&GFX11);
    let p = Program::default();
    let d0 = Dims {
        global: [2, 2, 2],
        local: [8, 8, 1],
    };
    let (e1, _) = l.exec(&p, GpuVa(0x1000), d0.global, d0.local).unwrap();
    let (e2, _) = l.exec(&p, GpuVa(0x2000), d0.global, d0.local).unwrap();
    let mut t: PatchTable<2, 8, 1> = PatchTable::new();
    let d = t.declare(Value::Dims(d0)).unwrap();
    t.bind_exec(d, 0, l.as_dwords(), &e1, DimLimits::AMD, None)
        .unwrap();
    let tight = DimLimits {
        max_threads: 128,
        ..DimLimits::AMD
    };
    t.bind_exec(d, 0, l.as_dwords(), &e2, tight, None).unwrap();
    let mut mem = [0u32; 512];
    let n = l.as_dwords().len();
    mem[..n].copy_from_slice(l.as_dwords());
    let big = Dims {
        global: [1, 1, 1],
        local: [16, 16, 1],
    };
    assert!(matches!(
        t.apply(&[Some(Value::Dims(big))], &mut [&mut mem[..n]]),
        Err(PatchError::BadDim { max: 128, .. })
    ));
    let ok = Dims {
        global: [5, 6, 7],
        local: [16, 8, 1],
    };
    assert_eq!(
        t.apply(&[Some(Value::Dims(ok))], &mut [&mut mem[..n]]),
        Ok(12)
    );
    let mut f: Pm4List<512, 8> = Pm4List::new(&GFX11);
    f.exec(&p, GpuVa(0x1000), ok.global, ok.local).unwrap();
    f.exec(&p, GpuVa(0x2000), ok.global, ok.local).unwrap();
    assert_eq!(&mem[..n], f.as_dwords());
}

#[test]
fn patches_gpu_memory_views() {
    let r = record(&V0);
    let (mut t, ids) = build(&r);
    let to_atomic = |d: &[u32]| -> heapless::Vec<AtomicU32, 512> {
        d.iter().map(|&x| AtomicU32::new(x)).collect()
    };
    let a = to_atomic(r.pm4.as_dwords());
    let b = to_atomic(r.sdma.as_dwords());
    let k = to_atomic(&r.ka);
    let v1 = Vals {
        tl_sig: 0xB000,
        wait_v: 8,
        ..V0
    };
    let mut targets: [&[AtomicU32]; 3] = [&a, &b, &k];
    t.apply(&values(&ids, &v1), &mut targets).unwrap();
    let f = record(&v1);
    let back = |m: &[AtomicU32]| -> heapless::Vec<u32, 512> {
        m.iter().map(|x| x.load(Ordering::Relaxed)).collect()
    };
    assert_eq!(&back(&a)[..], f.pm4.as_dwords());
    assert_eq!(&back(&b)[..], f.sdma.as_dwords());
}

#[test]
fn field_op_masks() {
    // A 64-bit address stored as `addr >> 8` in two non-adjacent fields.
    let mut mem = [0xAAAA_0000u32, 0, 0xFFFF_FFFF];
    let mut t: PatchTable<1, 4, 1> = PatchTable::new();
    let v = t.declare(Value::Scalar(0)).unwrap();
    t.bind_field::<[u32]>(v, 0, None, 0, 8, 0, 0x0000_FFFF)
        .unwrap();
    t.bind_field::<[u32]>(v, 0, None, 2, 32, 4, 0x0000_0FF0)
        .unwrap();
    let n = t
        .apply(&[Some(Value::Scalar(0x12_3456_7800))], &mut [&mut mem[..]])
        .unwrap();
    assert_eq!(n, 2);
    assert_eq!(mem, [0xAAAA_5678, 0, 0xFFFF_F12F]);
}

#[test]
fn short_values_name_the_first_missing() {
    let r = record(&V0);
    let (mut t, ids) = build(&r);
    let (mut a, mut b, mut k) = copies(&r);
    let v = values(&ids, &V0);
    assert_eq!(
        t.apply(&v[..4], &mut [&mut a[..], &mut b[..], &mut k[..]]),
        Err(PatchError::MissingVar(VarId(4)))
    );
}

#[test]
fn validate_counts_changes_and_writes_nothing() {
    let r = record(&V0);
    let (t, ids) = build(&r);
    assert_eq!(t.validate(&values(&ids, &V0)), Ok(0));
    let v1 = Vals {
        scale: 2,
        wait_v: 9,
        ..V0
    };
    assert_eq!(t.validate(&values(&ids, &v1)), Ok(2));
    let mut v = values(&ids, &v1);
    v[ids.inp.index()] = Some(Value::Addr {
        addr: GpuVa(0x1000),
        bytes: 1,
    });
    assert!(matches!(
        t.validate(&v),
        Err(PatchError::BufferTooSmall { .. })
    ));
    assert_eq!(t.current()[ids.scale.index()], Value::Scalar(9));
}

/// `check` then `write` is `apply` split around a wait; a stale check is redone before writing.
#[test]
fn check_then_write() {
    let r = record(&V0);
    let (mut t, ids) = build(&r);
    let (mut a, mut b, mut k) = copies(&r);
    let (na, nb) = (r.pm4.as_dwords().len(), r.sdma.as_dwords().len());
    let v1 = Vals {
        scale: 2,
        wait_v: 9,
        ..V0
    };
    let vals1 = values(&ids, &v1);
    let c = t.check(&vals1).unwrap();
    // Nothing written by the check.
    assert_eq!((a, b, k), copies(&r));
    let n = t
        .write(c, &mut [&mut a[..na], &mut b[..nb], &mut k[..]])
        .unwrap();
    // wait_v: pm4 1 + sdma 2 (wait and fence); scale 1.
    assert_eq!(n, 4);
    let f = record(&v1);
    assert_eq!(&a[..na], f.pm4.as_dwords());
    assert_eq!(k, f.ka);
    // A token checked before another check is checked again: v2's values, not stale notes.
    let v2 = Vals { scale: 3, ..v1 };
    let vals2 = values(&ids, &v2);
    let stale = t.check(&vals2).unwrap();
    let v3 = Vals { scale: 4, ..v1 };
    let vals3 = values(&ids, &v3);
    let _other = t.check(&vals3).unwrap();
    let n = t
        .write(stale, &mut [&mut a[..na], &mut b[..nb], &mut k[..]])
        .unwrap();
    assert_eq!((n, k[2]), (1, 3));
    // A binding added after the check makes the check stale too: a requirement the values
    // no longer meet is an error at write time, with nothing written.
    let v4 = Vals {
        inp: (0x8800_0000, 0x400),
        ..v1
    };
    let vals4 = values(&ids, &v4);
    let c = t.check(&vals4).unwrap();
    t.require_bytes(ids.inp, 1 << 20).unwrap();
    let before = (a, b, k);
    assert!(matches!(
        t.write(c, &mut [&mut a[..na], &mut b[..nb], &mut k[..]]),
        Err(PatchError::BufferTooSmall { .. })
    ));
    assert_eq!((a, b, k), before);
    // An unchanged value is checked again against the new requirement too.
    assert!(matches!(
        t.validate(&vals3),
        Err(PatchError::BufferTooSmall { .. })
    ));
    assert!(matches!(
        t.check(&vals3),
        Err(PatchError::BufferTooSmall { .. })
    ));
    let mut big = vals3;
    big[ids.inp.index()] = Some(Value::Addr {
        addr: GpuVa(V0.inp.0),
        bytes: 1 << 20,
    });
    assert!(t.check(&big).is_ok());
}

#[test]
fn dims_write_only_the_half_that_changed() {
    let r = record(&V0);
    let (mut t, ids) = build(&r);
    let (mut a, mut b, mut k) = copies(&r);
    let (na, nb) = (r.pm4.as_dwords().len(), r.sdma.as_dwords().len());
    let mut run = |v: &Vals| {
        t.apply(
            &values(&ids, v),
            &mut [&mut a[..na], &mut b[..nb], &mut k[..]],
        )
        .unwrap()
    };
    // Global only: DISPATCH_DIRECT (3) + the packet's grid (3).
    let g = Vals {
        dims: Dims {
            global: [7, 7, 7],
            local: V0.dims.local,
        },
        ..V0
    };
    assert_eq!(run(&g), 6);
    // Local only: NUM_THREAD (3) + workgroup sizes (2) + grid (3).
    let l = Vals {
        dims: Dims {
            global: [7, 7, 7],
            local: [8, 8, 2],
        },
        ..V0
    };
    assert_eq!(run(&l), 8);
    let f = record(&l);
    assert_eq!(&a[..na], f.pm4.as_dwords());
    assert_eq!(k, f.ka);
}

mod props {
    use super::*;
    use proptest::prelude::*;

    fn edge() -> impl Strategy<Value = u32> {
        prop_oneof![
            Just(0u32),
            Just(1),
            Just(2),
            Just(1024),
            Just(1025),
            Just(0xFFFF),
            Just(0x1_0000),
            Just(u32::MAX),
            any::<u32>(),
        ]
    }

    fn limits() -> impl Strategy<Value = DimLimits> {
        (
            proptest::array::uniform3(edge()),
            proptest::array::uniform3(edge()),
            edge(),
        )
            .prop_map(|(max_global, max_local, max_threads)| DimLimits {
                max_global,
                max_local,
                max_threads,
            })
    }

    fn dims() -> impl Strategy<Value = Dims> {
        (
            proptest::array::uniform3(edge()),
            proptest::array::uniform3(edge()),
        )
            .prop_map(|(global, local)| Dims { global, local })
    }

    /// Mostly acceptable values (small dims, a big enough buffer), sometimes not.
    fn vals() -> impl Strategy<Value = Vals> {
        let dim = prop_oneof![9 => 1u32..40, 1 => Just(0u32)];
        let loc = prop_oneof![19 => 1u32..9, 1 => Just(2000u32)];
        (
            (0u64..64).prop_map(|i| 0x1_0000 + i * 64),
            any::<u32>(),
            any::<u64>(),
            proptest::array::uniform3(dim),
            proptest::array::uniform3(loc),
            (
                0u64..8,
                prop_oneof![9 => Just(0x400u64), 1 => Just(0x100u64)],
            ),
            any::<u32>(),
        )
            .prop_map(
                |(tl_sig, wait_v, signal_v, global, local, (a, bytes), scale)| Vals {
                    tl_sig,
                    wait_v,
                    signal_v,
                    dims: Dims { global, local },
                    inp: (0x8000_0000 + a * 0x1000, bytes),
                    scale,
                },
            )
    }

    proptest! {
        /// The branch-free acceptance test agrees with the one that explains refusals.
        #[test]
        #[cfg_attr(miri, ignore = "pure arithmetic, ~85 s of CI's miri step; runs natively")]
        fn fast_dims_check_agrees(l in limits(), packet in any::<bool>(), d in dims()) {
            let mut l = l;
            if packet {
                l.max_local = l.max_local.map(|m| m.min(u16::MAX.into()));
            }
            prop_assert_eq!(dims_ok(&l, packet, &d), check_dims(VarId(0), &l, packet, &d).is_ok());
        }

        /// Any sequence of replays leaves exactly what a fresh record of the last accepted
        /// values holds; a refused replay changes nothing.
        #[test]
        fn replays_equal_fresh_records(seq in proptest::collection::vec(vals(), 1..12)) {
            let r = record(&V0);
            let (mut t, ids) = build(&r);
            let (mut a, mut b, mut k) = copies(&r);
            let (na, nb) = (r.pm4.as_dwords().len(), r.sdma.as_dwords().len());
            let mut last = V0;
            for v in seq {
                let before = (a, b, k);
                let res = t.apply(&values(&ids, &v), &mut [&mut a[..na], &mut b[..nb], &mut k[..]]);
                let valid = v.dims.global.iter().all(|&g| g != 0)
                    && v.dims.local.iter().map(|&l| u64::from(l)).product::<u64>() <= 1024
                    && v.inp.1 >= 0x190;
                prop_assert_eq!(res.is_ok(), valid, "{:?}", res);
                if valid {
                    last = v;
                    let f = record(&v);
                    prop_assert_eq!(&a[..na], f.pm4.as_dwords());
                    prop_assert_eq!(&b[..nb], f.sdma.as_dwords());
                    prop_assert_eq!(k, f.ka);
                } else {
                    prop_assert!(before == (a, b, k));
                }
                let cur: [Option<Value>; 6] = core::array::from_fn(|i| t.current().get(i).copied());
                prop_assert_eq!(cur, values(&ids, &last));
            }
        }
    }
}

/// Launch dims bound only by `bind_exec` without a dispatch packet are a pair: written from the
/// plan, each half only when it changed, and the result is what a fresh record holds.
#[test]
fn exec_dims_pairs_write_each_half() {
    let prog = Program::default();
    let rec = |d: &[Dims; 2]| {
        let mut l: Pm4List<512, 8> = Pm4List::new(&GFX11);
        let mut hs = [None, None];
        for (h, d) in hs.iter_mut().zip(d) {
            *h = Some(l.exec(&prog, GpuVa(KA), d.global, d.local).unwrap().0);
        }
        (l, hs.map(Option::unwrap))
    };
    let d0 = [
        Dims {
            global: [4, 1, 1],
            local: [64, 1, 1],
        },
        Dims {
            global: [2, 2, 1],
            local: [8, 8, 1],
        },
    ];
    let (list, hs) = rec(&d0);
    let mut t: PatchTable<4, 16> = PatchTable::new();
    let ids = d0.map(|d| t.declare(Value::Dims(d)).unwrap());
    for (id, h) in ids.iter().zip(&hs) {
        t.bind_exec(*id, 0, list.as_dwords(), h, DimLimits::AMD, None)
            .unwrap();
    }
    t.seal();
    for (id, h) in ids.iter().zip(&hs) {
        let Plan::Pair {
            target,
            global,
            local,
        } = t.plans[id.index()]
        else {
            panic!("{id}: not a pair");
        };
        assert_eq!(target, 0);
        let at = |x: usize| u32::try_from(x).unwrap() + h.offset;
        // DISPATCH_DIRECT's x..z follow its header; NUM_THREAD_X..Z start at local_at.
        assert_eq!(
            (global, local),
            (at(h.layout.dispatch_at + 1), at(h.layout.local_at))
        );
    }
    let n = list.as_dwords().len();
    let mut ib = [0u32; 512];
    ib[..n].copy_from_slice(list.as_dwords());
    let mut run = |d: [Dims; 2]| {
        let w = t
            .apply(&d.map(|d| Some(Value::Dims(d))), &mut [&mut ib[..n]])
            .unwrap();
        assert_eq!(&ib[..n], rec(&d).0.as_dwords());
        w
    };
    let mut d = d0;
    d[0].global = [9, 3, 1];
    assert_eq!(run(d), 3);
    d[1].local = [4, 4, 4];
    assert_eq!(run(d), 3);
    d[0].local = [32, 2, 1];
    d[1].global = [5, 6, 7];
    assert_eq!(run(d), 6);
    d[0] = Dims {
        global: [1, 1, 1],
        local: [1, 1, 1],
    };
    assert_eq!(run(d), 6);
    assert_eq!(run(d), 0);
}

/// What makes a pair: exactly a whole global half and a whole local half, in either order, in
/// one target; anything else walks its entries.
#[test]
fn plans_name_pairs_only() {
    let e = |t: u8, dword: u32, first: u8, n: u8| {
        Entry::new(VarId(0), t, dword, Op::Dwords { first, n })
    };
    let pair = |global, local| Plan::Pair {
        target: 1,
        global,
        local,
    };
    let walk = |first, count| Plan::Walk { first, count };
    assert_eq!(Plan::of(5, &[e(1, 10, 0, 3), e(1, 40, 3, 3)]), pair(10, 40));
    assert_eq!(Plan::of(5, &[e(1, 4, 3, 3), e(1, 40, 0, 3)]), pair(40, 4));
    assert_eq!(Plan::of(5, &[e(0, 10, 0, 3), e(1, 40, 3, 3)]), walk(5, 2));
    assert_eq!(Plan::of(5, &[e(1, 10, 0, 3), e(1, 40, 0, 3)]), walk(5, 2));
    assert_eq!(Plan::of(5, &[e(1, 10, 3, 3), e(1, 40, 3, 3)]), walk(5, 2));
    assert_eq!(Plan::of(5, &[e(1, 10, 0, 2), e(1, 40, 3, 3)]), walk(5, 2));
    assert_eq!(Plan::of(5, &[e(1, 10, 0, 3), e(1, 40, 4, 2)]), walk(5, 2));
    assert_eq!(Plan::of(7, &[e(1, 10, 0, 3)]), walk(7, 1));
    assert_eq!(
        Plan::of(7, &[e(1, 10, 0, 3), e(1, 40, 3, 3), e(1, 50, 3, 3)]),
        walk(7, 3)
    );
    assert_eq!(Plan::of(0, &[]), walk(0, 0));
}

/// Addresses and scalars whose entries are all 64-bit splits in one target are written by
/// their own loop; one other entry, or another target, makes the variable walk.
#[test]
fn plans_name_split_runs() {
    let split = |t: u8, dword: u32, add: u32| Entry::new(VarId(0), t, dword, Op::Split64 { add });
    let field = Entry::new(
        VarId(0),
        0,
        9,
        Op::Field {
            shift: 0,
            pos: 0,
            mask: 0xff,
        },
    );
    let splits = |target, first, count| Plan::Splits {
        target,
        first,
        count,
    };
    assert_eq!(Plan::of(3, &[split(2, 0, 0)]), splits(2, 3, 1));
    assert_eq!(
        Plan::of(3, &[split(1, 0, 0), split(1, 4, 8), split(1, 6, 16)]),
        splits(1, 3, 3)
    );
    // Splits in two targets walk.
    assert_eq!(
        Plan::of(3, &[split(2, 0, 0), split(2, 4, 8), split(1, 6, 16)]),
        Plan::Walk { first: 3, count: 3 }
    );
    assert_eq!(
        Plan::of(3, &[split(2, 0, 0), field]),
        Plan::Walk { first: 3, count: 2 }
    );
}

/// Pairs, split runs, walks and variables without entries in one table: each writes its
/// dwords (pairs first, the rest in order) and every changed value becomes current, bound or
/// not.
#[test]
fn every_plan_writes_and_updates_current() {
    let prog = Program::default();
    let mut list: Pm4List<512, 8> = Pm4List::new(&GFX11);
    let d0 = Dims {
        global: [4, 1, 1],
        local: [64, 1, 1],
    };
    let (h, _) = list.exec(&prog, GpuVa(KA), d0.global, d0.local).unwrap();
    let n = list.as_dwords().len();
    let mut ka = [0u32; 16];
    let base = 0x1_0000_0000u64;
    for (k, add) in [(0usize, 0u64), (4, 0x40)] {
        ka[k] = lo32(base + add);
        ka[k + 1] = hi32(base + add);
    }
    ka[8] = 7;
    let mut t: PatchTable<8, 32> = PatchTable::new();
    let unbound = t.declare(Value::Scalar(1)).unwrap();
    let buf = t
        .declare(Value::Addr {
            addr: GpuVa(base),
            bytes: 0x100,
        })
        .unwrap();
    let scale = t.declare(Value::Scalar(7)).unwrap();
    let dims = t.declare(Value::Dims(d0)).unwrap();
    t.bind_u64(buf, 1, Some(&ka[..]), 0, 0).unwrap();
    t.bind_u64(buf, 1, Some(&ka[..]), 4, 0x40).unwrap();
    t.bind_u32(scale, 1, Some(&ka[..]), 8).unwrap();
    t.bind_exec(dims, 0, list.as_dwords(), &h, DimLimits::AMD, None)
        .unwrap();
    t.seal();
    assert!(matches!(
        t.plans[buf.index()],
        Plan::Splits { count: 2, .. }
    ));
    assert!(matches!(
        t.plans[scale.index()],
        Plan::Walk { count: 1, .. }
    ));
    assert!(matches!(t.plans[dims.index()], Plan::Pair { .. }));
    assert!(matches!(
        t.plans[unbound.index()],
        Plan::Walk { count: 0, .. }
    ));

    let mut ib = [0u32; 512];
    ib[..n].copy_from_slice(list.as_dwords());
    let d1 = Dims {
        global: [8, 2, 1],
        local: [32, 2, 1],
    };
    let vals = [
        Some(Value::Scalar(5)),
        Some(Value::Addr {
            addr: GpuVa(0x2_0000_1000),
            bytes: 0x100,
        }),
        Some(Value::Scalar(9)),
        Some(Value::Dims(d1)),
    ];
    let w = t.apply(&vals, &mut [&mut ib[..n], &mut ka[..]]).unwrap();
    assert_eq!(w, 6 + 4 + 1);
    assert_eq!(ka[..9], [0x1000, 2, 0, 0, 0x1040, 2, 0, 0, 9]);
    let mut fresh: Pm4List<512, 8> = Pm4List::new(&GFX11);
    fresh.exec(&prog, GpuVa(KA), d1.global, d1.local).unwrap();
    assert_eq!(&ib[..n], fresh.as_dwords());
    let cur: heapless::Vec<Value, 8> = t.current().iter().copied().collect();
    let want: heapless::Vec<Value, 8> = vals.iter().flatten().copied().collect();
    assert_eq!(cur, want);
    // Nothing changed: nothing written, nothing counted.
    assert_eq!(t.validate(&vals).unwrap(), 0);
    assert_eq!(t.apply(&vals, &mut [&mut ib[..n], &mut ka[..]]).unwrap(), 0);
}

/// The branch-free screen agrees with the exact check, and passes what is valid (so valid
/// dims never take the slow path): every axis's grid overflow alone, in and out of a packet.
#[test]
fn dims_screen_agrees_with_the_exact_check() {
    let l = DimLimits {
        max_global: [u32::MAX; 3],
        max_local: [u16::MAX.into(); 3],
        max_threads: u32::MAX,
    };
    let mut cases = heapless::Vec::<Dims, 32>::new();
    let ok = Dims {
        global: [1 << 20, 3, 2],
        local: [1 << 10, 1, 1],
    };
    cases.push(ok).unwrap();
    for axis in 0..3 {
        // global * local = 2^32 on one axis only (2^17 * 2^15), the others small.
        let mut d = Dims {
            global: [1, 1, 1],
            local: [1, 1, 1],
        };
        d.global[axis] = 1 << 17;
        d.local[axis] = 1 << 15;
        cases.push(d).unwrap();
        // Just inside: (2^17 - 1) * 2^15 < 2^32.
        d.global[axis] = (1 << 17) - 1;
        cases.push(d).unwrap();
        // And far outside on this axis alone.
        d.local[axis] = u16::MAX.into();
        d.global[axis] = u32::MAX;
        cases.push(d).unwrap();
    }
    // Two axes over by the same amount (an exclusive or of the products would cancel).
    for (a, b) in [(0, 1), (1, 2), (0, 2)] {
        let mut d = Dims {
            global: [1, 1, 1],
            local: [1, 1, 1],
        };
        for k in [a, b] {
            d.global[k] = 1 << 17;
            d.local[k] = 1 << 15;
        }
        cases.push(d).unwrap();
    }
    for d in &cases {
        for packet in [false, true] {
            let exact = check_dims(VarId(0), &l, packet, d).is_ok();
            assert_eq!(dims_ok(&l, packet, d), exact, "{d:?} packet {packet}");
        }
    }
    assert!(dims_ok(&l, true, &ok));
    let big = Dims {
        global: [1 << 17, 1, 1],
        local: [1 << 15, 1, 1],
    };
    assert!(dims_ok(&l, false, &big) && !dims_ok(&l, true, &big));
}

/// Launch dims in two targets are each written into their own (the pair loop runs per target),
/// and a pair whose noted value has lost its kind, which only checked values can replace, is
/// rewritten whole rather than skipped.
#[test]
fn pairs_in_two_targets_and_a_pair_without_its_kind() {
    let prog = Program::default();
    let d0 = Dims {
        global: [4, 1, 1],
        local: [64, 1, 1],
    };
    let mut a: Pm4List<512, 8> = Pm4List::new(&GFX11);
    let mut b: Pm4List<512, 8> = Pm4List::new(&GFX11);
    let (ha, _) = a.exec(&prog, GpuVa(KA), d0.global, d0.local).unwrap();
    b.memory_barrier().unwrap();
    let (hb, _) = b.exec(&prog, GpuVa(KA), d0.global, d0.local).unwrap();
    let mut t: PatchTable<4, 16> = PatchTable::new();
    let da = t.declare(Value::Dims(d0)).unwrap();
    let db = t.declare(Value::Dims(d0)).unwrap();
    t.bind_exec(da, 0, a.as_dwords(), &ha, DimLimits::AMD, None)
        .unwrap();
    t.bind_exec(db, 2, b.as_dwords(), &hb, DimLimits::AMD, None)
        .unwrap();
    t.seal();
    assert_eq!(t.pairs_in, [true, false, true, false]);
    let (na, nb) = (a.as_dwords().len(), b.as_dwords().len());
    let mut ia = [0u32; 512];
    let mut ib = [0u32; 512];
    ia[..na].copy_from_slice(a.as_dwords());
    ib[..nb].copy_from_slice(b.as_dwords());
    let (d1, d2) = (
        Dims {
            global: [8, 2, 1],
            local: [64, 1, 1],
        },
        Dims {
            global: [4, 1, 1],
            local: [32, 2, 1],
        },
    );
    let vals = [Some(Value::Dims(d1)), Some(Value::Dims(d2))];
    let mut none = [0u32; 0];
    let w = t
        .apply(&vals, &mut [&mut ia[..na], &mut none[..], &mut ib[..nb]])
        .unwrap();
    // Only the global half of one and the local half of the other changed.
    assert_eq!(w, 3 + 3);
    let exec = |d: Dims, nops: bool| {
        let mut l: Pm4List<512, 8> = Pm4List::new(&GFX11);
        if nops {
            l.memory_barrier().unwrap();
        }
        l.exec(&prog, GpuVa(KA), d.global, d.local).unwrap();
        l
    };
    assert_eq!(&ia[..na], exec(d1, false).as_dwords());
    assert_eq!(&ib[..nb], exec(d2, true).as_dwords());

    // The same values again write nothing, unless the noted value is not launch dims.
    t.prev[db.index()] = Value::Scalar(0);
    ib[..nb].copy_from_slice(b.as_dwords());
    let w = t
        .apply(&vals, &mut [&mut ia[..na], &mut none[..], &mut ib[..nb]])
        .unwrap();
    assert_eq!(w, 6);
    assert_eq!(&ib[..nb], exec(d2, true).as_dwords());
    assert_eq!(t.current()[db.index()], Value::Dims(d2));
}

/// `required_bytes` answers for address variables only.
#[test]
fn required_bytes_names_wrong_kinds_and_unknown_vars() {
    let mut t: PatchTable<4, 4> = PatchTable::new();
    let s = t.declare(Value::Scalar(1)).unwrap();
    assert_eq!(
        t.required_bytes(s),
        Err(PatchError::WrongKind {
            var: s,
            expected: Kind::Scalar,
            found: Kind::Addr,
        })
    );
    assert_eq!(
        t.required_bytes(VarId(3)),
        Err(PatchError::UnknownVar(VarId(3)))
    );
}

/// gfx9's SDMA v4 has no GCR_REQ: a copy made for the hardware there is framed by NOPs of the
/// same length, and its buffers bind and patch as on gfx10+.
#[test]
fn a_gfx9_copy_framed_by_nops_binds_its_buffers() {
    let mut l: SdmaList<64, 16> = SdmaList::new(&crate::arch::GFX9);
    let opts = crate::sdma::CopyOptions::hardware(&crate::arch::GFX9);
    let c = l
        .copy_with(&opts, GpuVa(0x9000_0000), GpuVa(0x8000_0000), 0x100)
        .unwrap();
    let d = l.as_dwords();
    assert_eq!(d[0] & 0xff, crate::sdma::op::NOP);
    let mut t: PatchTable<2, 8, 1> = PatchTable::new();
    let src = t
        .declare(Value::Addr {
            addr: GpuVa(0x8000_0000),
            bytes: 0x100,
        })
        .unwrap();
    t.bind_copy(Some(src), None, 0, d, &c).unwrap();
    assert_eq!(t.entries().len(), 1);
    // A NOP of another length is not a copy's frame.
    let mut bad = [0u32; 64];
    bad[..d.len()].copy_from_slice(d);
    crate::sdma::nop(&mut bad[..2], 2).unwrap();
    assert!(
        t.bind_copy(Some(src), None, 0, &bad[..d.len()], &c)
            .is_err()
    );
}

/// Dims bound to an AQL kernel dispatch packet alone (`bind_packet_dims`): a replay writes the
/// workgroup sizes (keeping `reserved0`) and the grid, checks the kernel's limits and the
/// packet's 16-bit workgroup fields, and a bad value writes nothing.
#[test]
fn packet_dims_alone() {
    let d0 = Dims {
        global: [4, 1, 1],
        local: [64, 1, 1],
    };
    let mut t: PatchTable<4, 16, 2> = PatchTable::new();
    let v = t.declare(Value::Dims(d0)).unwrap();
    let limits = DimLimits {
        max_local: [1024, 1024, 1024],
        max_threads: 256,
        ..DimLimits::AMD
    };
    t.bind_packet_dims(v, 1, 16, limits).unwrap();
    // A scalar is not launch dims.
    let s = t.declare(Value::Scalar(1)).unwrap();
    assert!(t.bind_packet_dims(s, 1, 0, limits).is_err());
    t.seal();
    let mut pm4 = [0u32; 4];
    let mut pkts = [0u32; 32];
    pkts[16 + 2] = 0xabcd_0000; // reserved0 above workgroup_size_z
    let d1 = Dims {
        global: [3, 5, 2],
        local: [8, 4, 2],
    };
    let mut targets: [&mut [u32]; 2] = [&mut pm4, &mut pkts];
    t.apply(
        &[Some(Value::Dims(d1)), Some(Value::Scalar(1))],
        &mut targets,
    )
    .unwrap();
    assert_eq!(pkts[17], 8 | 4 << 16);
    assert_eq!(pkts[18], 0xabcd_0000 | 2);
    assert_eq!(&pkts[19..22], &[24, 20, 4]);
    assert_eq!(pkts[..16], [0; 16]);
    // Above the kernel's 256 work-items per workgroup: refused, nothing written.
    let before = pkts;
    let big = Dims {
        global: [1, 1, 1],
        local: [512, 1, 1],
    };
    let mut targets: [&mut [u32]; 2] = [&mut pm4, &mut pkts];
    assert!(
        t.apply(
            &[Some(Value::Dims(big)), Some(Value::Scalar(1))],
            &mut targets
        )
        .is_err()
    );
    assert_eq!(pkts, before);
}
