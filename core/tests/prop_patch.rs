//! Applying a patch table equals re-encoding with the new values, for random command lists,
//! random variable sharing and random new values (some unchanged); checked dword for dword and
//! through core's decoders. Also: a table never writes outside what it binds, and refused
//! values leave memory untouched.

use hcq_core::addr::GpuVa;
use hcq_core::arch::GFX11;
use hcq_core::cmd::{CopyCmd, ExecCmd, Pm4List, SdmaList, SignalCmd, WaitCmd};
use hcq_core::patch::{DimLimits, Dims, PatchError, PatchTable, Value, VarId};
use hcq_core::pm4::{self, DispatchInfo, Program};
use hcq_core::sdma;
use hcq_core::signal::SignalRef;
use proptest::prelude::*;

const NSIG: usize = 2;
const NVAL: usize = 2;
const NDIM: usize = 3;
const NBUF: usize = 2;
const BUF_BYTES: u64 = 0x1000;

#[derive(Clone, Copy, Debug)]
enum Cmd {
    Wait {
        sig: usize,
        val: usize,
    },
    Barrier,
    Exec {
        dims: usize,
        dispatch: bool,
        buf: usize,
        off: u64,
    },
    Signal {
        sig: usize,
        val: usize,
        mailbox: bool,
    },
    Copy {
        src: usize,
        dst: usize,
        soff: u64,
        doff: u64,
        size: u64,
    },
    SWait {
        sig: usize,
        val: usize,
    },
    SSignal {
        sig: usize,
        val: usize,
        mailbox: bool,
    },
}

#[derive(Clone, Copy, Debug, PartialEq)]
struct Vals {
    sig: [u64; NSIG],
    val: [u32; NVAL],
    dims: [Dims; NDIM],
    buf: [u64; NBUF],
}

enum H {
    Wait(WaitCmd),
    Exec(ExecCmd, Option<u32>),
    Signal(SignalCmd),
    Copy(CopyCmd),
    None,
}

struct Rec {
    pm4: Box<Pm4List<4096, 64>>,
    sdma: Box<SdmaList<2048, 64, 256>>,
    ka: Vec<u32>,
    handles: Vec<H>,
}

fn sref(addr: u64, mailbox: bool) -> SignalRef {
    SignalRef {
        addr,
        event_mailbox_ptr: if mailbox { 0x7fff_0000_0100 } else { 0 },
        event_id: if mailbox { 3 } else { 0 },
    }
}

const KA_SLOT_DW: usize = 32; // 128 bytes per exec: pointer at 0, dispatch packet at 64.

fn record(cmds: &[Cmd], v: &Vals) -> Rec {
    let mut pm4: Box<Pm4List<4096, 64>> = Box::new(Pm4List::new(&GFX11));
    let mut sd: Box<SdmaList<2048, 64, 256>> = Box::new(SdmaList::new(&GFX11));
    let mut ka = vec![0u32; KA_SLOT_DW * cmds.len()];
    let mut handles = Vec::new();
    let opts = sdma::CopyOptions {
        max_copy_bytes: 0x100,
        ..sdma::CopyOptions::seed(&GFX11)
    };
    for (i, c) in cmds.iter().enumerate() {
        let h = match *c {
            Cmd::Wait { sig, val } => {
                H::Wait(pm4.wait(&sref(v.sig[sig], false), v.val[val]).unwrap())
            }
            Cmd::Barrier => {
                pm4.memory_barrier().unwrap();
                H::None
            }
            Cmd::Exec {
                dims,
                dispatch,
                buf,
                off,
            } => {
                let prog = Program {
                    prog_addr: GpuVa(0x1000_0000),
                    dispatch: dispatch.then_some(DispatchInfo {
                        packet_offset: 64,
                        group_segment_size: 0,
                        private_segment_size: 0,
                    }),
                    ..Program::default()
                };
                let kaddr = 0x7000_0000 + (i * KA_SLOT_DW * 4) as u64;
                let d = v.dims[dims];
                let (h, dw) = pm4.exec(&prog, GpuVa(kaddr), d.global, d.local).unwrap();
                let p = v.buf[buf] + off;
                ka[i * KA_SLOT_DW] = p as u32;
                ka[i * KA_SLOT_DW + 1] = (p >> 32) as u32;
                if let Some(dw) = dw {
                    for (j, c) in dw.packet.to_bytes().chunks_exact(4).enumerate() {
                        ka[i * KA_SLOT_DW + 16 + j] = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
                    }
                }
                H::Exec(h, dispatch.then_some((i * KA_SLOT_DW + 16) as u32))
            }
            Cmd::Signal { sig, val, mailbox } => H::Signal(
                pm4.signal(&sref(v.sig[sig], mailbox), v.val[val].into())
                    .unwrap(),
            ),
            Cmd::Copy {
                src,
                dst,
                soff,
                doff,
                size,
            } => H::Copy(
                sd.copy_with(
                    &opts,
                    GpuVa(v.buf[dst] + doff),
                    GpuVa(v.buf[src] + soff),
                    size,
                )
                .unwrap(),
            ),
            Cmd::SWait { sig, val } => {
                H::Wait(sd.wait(&sref(v.sig[sig], false), v.val[val]).unwrap())
            }
            Cmd::SSignal { sig, val, mailbox } => {
                H::Signal(sd.signal(&sref(v.sig[sig], mailbox), v.val[val]).unwrap())
            }
        };
        handles.push(h);
    }
    Rec {
        pm4,
        sdma: sd,
        ka,
        handles,
    }
}

struct Ids {
    sig: [VarId; NSIG],
    val: [VarId; NVAL],
    dims: [VarId; NDIM],
    buf: [VarId; NBUF],
}

type Table = PatchTable<16, 512, 3>;

fn build(cmds: &[Cmd], r: &Rec, v: &Vals) -> (Box<Table>, Ids) {
    let mut t: Box<Table> = Box::new(PatchTable::new());
    let sig = v.sig.map(|a| {
        t.declare(Value::Addr {
            addr: GpuVa(a),
            bytes: 64,
        })
        .unwrap()
    });
    let val = v.val.map(|x| t.declare(Value::Scalar(x.into())).unwrap());
    let dims = v.dims.map(|d| t.declare(Value::Dims(d)).unwrap());
    let buf = v.buf.map(|a| {
        t.declare(Value::Addr {
            addr: GpuVa(a),
            bytes: BUF_BYTES,
        })
        .unwrap()
    });
    let (p, s) = (r.pm4.as_dwords(), r.sdma.as_dwords());
    for (i, (c, h)) in cmds.iter().zip(&r.handles).enumerate() {
        match (*c, h) {
            (Cmd::Wait { sig: a, val: b }, H::Wait(h)) => {
                t.bind_wait_signal(sig[a], 0, p, h).unwrap();
                t.bind_wait_value(val[b], 0, p, h).unwrap();
            }
            (Cmd::SWait { sig: a, val: b }, H::Wait(h)) => {
                t.bind_wait_signal(sig[a], 1, s, h).unwrap();
                t.bind_wait_value(val[b], 1, s, h).unwrap();
            }
            (Cmd::Signal { sig: a, val: b, .. }, H::Signal(h)) => {
                t.bind_signal_addr(sig[a], 0, p, h).unwrap();
                t.bind_signal_value(val[b], 0, p, h).unwrap();
            }
            (Cmd::SSignal { sig: a, val: b, .. }, H::Signal(h)) => {
                t.bind_signal_addr(sig[a], 1, s, h).unwrap();
                t.bind_signal_value(val[b], 1, s, h).unwrap();
            }
            (
                Cmd::Exec {
                    dims: d,
                    buf: b,
                    off,
                    ..
                },
                H::Exec(h, pkt),
            ) => {
                t.bind_exec(dims[d], 0, p, h, DimLimits::AMD, pkt.map(|dw| (2, dw)))
                    .unwrap();
                t.bind_u64(buf[b], 2, Some(&r.ka[..]), (i * KA_SLOT_DW) as u32, off)
                    .unwrap();
            }
            (Cmd::Copy { src, dst, .. }, H::Copy(h)) => {
                t.bind_copy(Some(buf[src]), Some(buf[dst]), 1, s, h)
                    .unwrap();
            }
            _ => {}
        }
    }
    (
        t,
        Ids {
            sig,
            val,
            dims,
            buf,
        },
    )
}

fn values(ids: &Ids, v: &Vals) -> Vec<Option<Value>> {
    let mut out = vec![None; 16];
    for k in 0..NSIG {
        out[ids.sig[k].index()] = Some(Value::Addr {
            addr: GpuVa(v.sig[k]),
            bytes: 64,
        });
    }
    for k in 0..NVAL {
        out[ids.val[k].index()] = Some(Value::Scalar(v.val[k].into()));
    }
    for k in 0..NDIM {
        out[ids.dims[k].index()] = Some(Value::Dims(v.dims[k]));
    }
    for k in 0..NBUF {
        out[ids.buf[k].index()] = Some(Value::Addr {
            addr: GpuVa(v.buf[k]),
            bytes: BUF_BYTES,
        });
    }
    out.truncate(NSIG + NVAL + NDIM + NBUF);
    out
}

fn cmd() -> impl Strategy<Value = Cmd> {
    prop_oneof![
        (0..NSIG, 0..NVAL).prop_map(|(sig, val)| Cmd::Wait { sig, val }),
        Just(Cmd::Barrier),
        (
            0..NDIM,
            any::<bool>(),
            0..NBUF,
            (0u64..0x100).prop_map(|x| x * 8)
        )
            .prop_map(|(dims, dispatch, buf, off)| Cmd::Exec {
                dims,
                dispatch,
                buf,
                off
            }),
        (0..NSIG, 0..NVAL, any::<bool>()).prop_map(|(sig, val, mailbox)| Cmd::Signal {
            sig,
            val,
            mailbox
        }),
        (0..NBUF, 0..NBUF, 0u64..0x800, 0u64..0x800, 1u64..0x500).prop_map(
            |(src, dst, soff, doff, size)| Cmd::Copy {
                src,
                dst,
                soff,
                doff,
                size
            }
        ),
        (0..NSIG, 0..NVAL).prop_map(|(sig, val)| Cmd::SWait { sig, val }),
        (0..NSIG, 0..NVAL, any::<bool>()).prop_map(|(sig, val, mailbox)| Cmd::SSignal {
            sig,
            val,
            mailbox
        }),
    ]
}

fn dims() -> impl Strategy<Value = Dims> {
    (
        prop::array::uniform3(1u32..5000),
        (1u32..=64, 1u32..=4, 1u32..=4),
    )
        .prop_map(|(global, (x, y, z))| Dims {
            global,
            local: [x, y, z],
        })
}

fn vals() -> impl Strategy<Value = Vals> {
    (
        prop::array::uniform2((1u64..0xffff_ffff).prop_map(|a| a << 6)),
        prop::array::uniform2(any::<u32>()),
        prop::array::uniform3(dims()),
        prop::array::uniform2((1u64..0xf_ffff).prop_map(|a| a << 12)),
    )
        .prop_map(|(sig, val, dims, buf)| Vals {
            sig,
            val,
            dims,
            buf,
        })
}

/// New values that keep each group of the old ones with probability 1/2.
fn mix(a: &Vals, b: &Vals, keep: u8) -> Vals {
    let k = |bit: u8| keep & (1 << bit) != 0;
    Vals {
        sig: if k(0) { a.sig } else { b.sig },
        val: if k(1) { a.val } else { b.val },
        dims: if k(2) { a.dims } else { b.dims },
        buf: if k(3) { a.buf } else { b.buf },
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn apply_equals_fresh_encode(
        cmds in prop::collection::vec(cmd(), 1..24),
        v0 in vals(),
        steps in prop::collection::vec((vals(), any::<u8>()), 1..4),
    ) {
        let r0 = record(&cmds, &v0);
        let (mut t, ids) = build(&cmds, &r0, &v0);
        let mut a = r0.pm4.as_dwords().to_vec();
        let mut b = r0.sdma.as_dwords().to_vec();
        let mut k = r0.ka.clone();
        let mut cur = v0;
        for (nv, keep) in steps {
            let next = mix(&cur, &nv, keep);
            let n = t.apply(&values(&ids, &next), &mut [&mut a[..], &mut b[..], &mut k[..]]).unwrap();
            if next == cur {
                prop_assert_eq!(n, 0);
            }
            let f = record(&cmds, &next);
            prop_assert_eq!(&a[..], f.pm4.as_dwords());
            prop_assert_eq!(&b[..], f.sdma.as_dwords());
            prop_assert_eq!(&k, &f.ka);
            let pa: Vec<_> = pm4::decode(&a).collect();
            let pf: Vec<_> = pm4::decode(f.pm4.as_dwords()).collect();
            prop_assert!(pa.iter().all(Result::is_ok));
            prop_assert_eq!(pa, pf);
            let sa: Vec<_> = sdma::decode(&b).collect();
            let sf: Vec<_> = sdma::decode(f.sdma.as_dwords()).collect();
            prop_assert!(sa.iter().all(Result::is_ok));
            prop_assert_eq!(sa, sf);
            cur = next;
        }
    }

    #[test]
    fn refused_values_touch_nothing(
        cmds in prop::collection::vec(cmd(), 1..16),
        v0 in vals(),
        v1 in vals(),
        which in 0usize..4,
    ) {
        let r0 = record(&cmds, &v0);
        let (mut t, ids) = build(&cmds, &r0, &v0);
        let mut a = r0.pm4.as_dwords().to_vec();
        let mut b = r0.sdma.as_dwords().to_vec();
        let mut k = r0.ka.clone();
        let mut vals = values(&ids, &v1);
        let bad = match which {
            0 => { vals[ids.buf[0].index()] = None; ids.buf[0] }
            1 => { vals[ids.buf[1].index()] = Some(Value::Addr { addr: GpuVa(v1.buf[1]), bytes: 0 }); ids.buf[1] }
            2 => { vals[ids.dims[0].index()] = Some(Value::Dims(Dims { global: [1, 1, 1], local: [1025, 1, 1] })); ids.dims[0] }
            _ => { vals[ids.val[1].index()] = Some(Value::Scalar(1 << 32)); ids.val[1] }
        };
        let res = t.apply(&vals, &mut [&mut a[..], &mut b[..], &mut k[..]]);
        // A variable nothing binds may still be refused (missing, wrong size): either way
        // nothing is written.
        match res {
            Err(PatchError::MissingVar(v)) | Err(PatchError::BufferTooSmall { var: v, .. })
            | Err(PatchError::BadDim { var: v, .. }) | Err(PatchError::ScalarTooLarge { var: v, .. }) => {
                prop_assert_eq!(v, bad);
            }
            Ok(_) => {
                // Only when the refused constraint was never recorded (unbound variable).
                prop_assert!(which != 0);
                return Ok(());
            }
            Err(e) => prop_assert!(false, "unexpected {e}"),
        }
        prop_assert_eq!(&a[..], r0.pm4.as_dwords());
        prop_assert_eq!(&b[..], r0.sdma.as_dwords());
        prop_assert_eq!(&k, &r0.ka);
    }
}
