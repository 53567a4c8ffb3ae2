//! Graph patch tables (`hcq_core::patch::PatchTable`) against fresh encodes.
//!
//! The input describes a small graph (1..=6 kernels, each with or without a dispatch packet and
//! its own launch limits, sharing 1..=3 dims variables; an input buffer every kernel points
//! into and an SDMA copy reads; a scalar kernel argument; a timeline wait and signal whose
//! signal address and values are variables) and a sequence of replays with arbitrary values,
//! some of them unacceptable. The graph is recorded with the first values and bound into a
//! table; each replay is applied to the recorded memory (PM4 and kernargs as plain `[u32]`,
//! SDMA through an `&[AtomicU32]` view). Invariants:
//!
//! * `validate` and `apply` agree, and agree with an independent model of what is acceptable
//!   (every dims value inside the tightest limits of its kernels, 16-bit workgroup sizes and
//!   32-bit grid sizes where a dispatch packet carries them, the buffer large enough, 32-bit
//!   scalars where 32-bit fields carry them);
//! * an accepted replay leaves exactly the lists and kernargs a fresh record of the new values
//!   holds (dword for dword, and the decoders see the same packets);
//! * a refused replay changes no dword and no current value.

use arbitrary::Unstructured;
use core::sync::atomic::{AtomicU32, Ordering};
use hcq_core::addr::{GpuVa, hi32, lo32};
use hcq_core::arch::GFX11;
use hcq_core::cmd::{Pm4List, SdmaList};
use hcq_core::patch::{DimLimits, Dims, PatchTable, Value, VarId};
use hcq_core::pm4::{self, DispatchInfo, Program};
use hcq_core::sdma;
use hcq_core::signal::SignalRef;

const KA: u64 = 0x7000_0000;
/// Dwords of kernargs per kernel: [ptr lo, ptr hi, scalar, ...], dispatch packet at dword 16.
const KA_DW: usize = 32;
const MAILBOX: u64 = 0x7fff_0000_0010;
const COPY_DST: u64 = 0x9000_0000;

#[derive(Debug, Clone, Copy)]
struct Kernel {
    packet: bool,
    dims_var: usize,
    limits: DimLimits,
    /// Byte offset of the kernel's pointer into the input buffer.
    off: u64,
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct Vals {
    dims: [Dims; 3],
    buf: (u64, u64),
    scalar: u64,
    sig: u64,
    wait_v: u64,
    signal_v: u64,
}

struct Graph {
    kernels: Vec<Kernel>,
    ndims: usize,
    copy: (u64, u64, u64), // src offset, size, max chunk
}

fn limits(u: &mut Unstructured<'_>) -> arbitrary::Result<DimLimits> {
    let pick =
        |u: &mut Unstructured<'_>, xs: &[u32]| -> arbitrary::Result<u32> { Ok(*u.choose(xs)?) };
    Ok(DimLimits {
        max_global: [
            pick(u, &[u32::MAX, 64, 7])?,
            pick(u, &[u32::MAX, 64, 7])?,
            pick(u, &[u32::MAX, 64, 7])?,
        ],
        max_local: [
            pick(u, &[1024, 256, 16])?,
            pick(u, &[1024, 256, 16])?,
            pick(u, &[1024, 64, 4])?,
        ],
        max_threads: pick(u, &[1024, 256, 64])?,
    })
}

fn dims(u: &mut Unstructured<'_>) -> arbitrary::Result<Dims> {
    // Mostly small sizes; sometimes zero or huge ones, to be refused.
    let d = |u: &mut Unstructured<'_>| -> arbitrary::Result<u32> {
        Ok(match u.int_in_range(0u8..=19)? {
            0 => 0,
            1 => u32::MAX,
            2 => 0x1_0000,
            3 => u.arbitrary()?,
            _ => u.int_in_range(1..=40)?,
        })
    };
    Ok(Dims {
        global: [d(u)?, d(u)?, d(u)?],
        local: [d(u)?, d(u)?, d(u)?],
    })
}

/// Dims that every limit above accepts (the record-time values).
fn small_dims(u: &mut Unstructured<'_>) -> arbitrary::Result<Dims> {
    Ok(Dims {
        global: [
            u.int_in_range(1..=7)?,
            u.int_in_range(1..=7)?,
            u.int_in_range(1..=7)?,
        ],
        local: [
            u.int_in_range(1..=4)?,
            u.int_in_range(1..=4)?,
            u.int_in_range(1..=4)?,
        ],
    })
}

fn vals(u: &mut Unstructured<'_>, prev: &Vals) -> arbitrary::Result<Vals> {
    let mut v = *prev;
    for d in &mut v.dims {
        if u.arbitrary()? {
            *d = dims(u)?;
        }
    }
    if u.arbitrary()? {
        v.buf = (
            0x8000_0000 + u64::from(u.int_in_range(0u32..=255)?) * 0x1000,
            *u.choose(&[0x100u64, 0x400, 0x1000, 0x1_0000, 0])?,
        );
    }
    if u.arbitrary()? {
        v.scalar = if u.ratio(1, 8)? {
            u.arbitrary()?
        } else {
            u.arbitrary::<u32>()?.into()
        };
    }
    if u.arbitrary()? {
        v.sig = 0x1_0000 + u64::from(u.int_in_range(0u32..=63)?) * 64;
    }
    if u.arbitrary()? {
        v.wait_v = if u.ratio(1, 8)? {
            u.arbitrary()?
        } else {
            u.arbitrary::<u32>()?.into()
        };
    }
    if u.arbitrary()? {
        v.signal_v = u.arbitrary()?;
    }
    Ok(v)
}

fn prog(packet: bool) -> Program {
    Program {
        prog_addr: GpuVa(0x1000_0000),
        scratch_addr: GpuVa(0x2000_0000),
        tmpring_size: 1,
        rsrc1: 2,
        rsrc2: 3,
        rsrc3: 0,
        dispatch: packet.then_some(DispatchInfo {
            packet_offset: 64,
            group_segment_size: 0,
            private_segment_size: 0,
        }),
        ..Program::default()
    }
}

struct Rec {
    pm4: Box<Pm4List<2048, 64>>,
    sdma: Box<SdmaList<512, 32, 128>>,
    ka: Vec<u32>,
    execs: Vec<hcq_core::cmd::ExecCmd>,
    wait: hcq_core::cmd::WaitCmd,
    sig: hcq_core::cmd::SignalCmd,
    copy: hcq_core::cmd::CopyCmd,
    swait: hcq_core::cmd::WaitCmd,
}

/// The graph recorded fresh with `v` (must be acceptable).
fn record(g: &Graph, v: &Vals) -> Rec {
    let mut pm4: Box<Pm4List<2048, 64>> = Box::new(Pm4List::new(&GFX11));
    let tl = SignalRef {
        addr: v.sig,
        event_mailbox_ptr: MAILBOX,
        event_id: 7,
    };
    // CAST: acceptable wait values fit u32.
    let wait = pm4.wait(&tl, v.wait_v as u32).expect("wait");
    let mut ka = vec![0u32; KA_DW * g.kernels.len()];
    let mut execs = Vec::new();
    for (i, k) in g.kernels.iter().enumerate() {
        let d = v.dims[k.dims_var];
        let base = KA + (i * KA_DW * 4) as u64;
        let (e, dw) = pm4
            .exec(&prog(k.packet), GpuVa(base), d.global, d.local)
            .expect("exec");
        execs.push(e);
        let slot = &mut ka[i * KA_DW..(i + 1) * KA_DW];
        let p = v.buf.0 + k.off;
        slot[0] = lo32(p);
        slot[1] = hi32(p);
        // CAST: acceptable scalars fit u32.
        slot[2] = v.scalar as u32;
        if let Some(dw) = dw {
            for (j, c) in dw.packet.to_bytes().chunks_exact(4).enumerate() {
                slot[16 + j] = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
            }
        }
    }
    let sig = pm4.signal(&tl, v.signal_v).expect("signal");
    let mut sdma: Box<SdmaList<512, 32, 128>> = Box::new(SdmaList::new(&GFX11));
    // CAST: acceptable wait values fit u32.
    let swait = sdma.wait(&tl, v.wait_v as u32).expect("sdma wait");
    let opts = sdma::CopyOptions {
        max_copy_bytes: g.copy.2,
        ..sdma::CopyOptions::hardware(&GFX11)
    };
    let copy = sdma
        .copy_with(&opts, GpuVa(COPY_DST), GpuVa(v.buf.0 + g.copy.0), g.copy.1)
        .expect("copy");
    Rec {
        pm4,
        sdma,
        ka,
        execs,
        wait,
        sig,
        copy,
        swait,
    }
}

struct Ids {
    dims: [Option<VarId>; 3],
    buf: VarId,
    scalar: VarId,
    sig: VarId,
    wait_v: VarId,
    signal_v: VarId,
    n: usize,
}

fn values(ids: &Ids, v: &Vals) -> Vec<Option<Value>> {
    let mut out = vec![None; ids.n];
    for (i, d) in ids.dims.iter().enumerate() {
        if let Some(d) = d {
            out[d.index()] = Some(Value::Dims(v.dims[i]));
        }
    }
    out[ids.buf.index()] = Some(Value::Addr {
        addr: GpuVa(v.buf.0),
        bytes: v.buf.1,
    });
    out[ids.scalar.index()] = Some(Value::Scalar(v.scalar));
    out[ids.sig.index()] = Some(Value::Addr {
        addr: GpuVa(v.sig),
        bytes: 64,
    });
    out[ids.wait_v.index()] = Some(Value::Scalar(v.wait_v));
    out[ids.signal_v.index()] = Some(Value::Scalar(v.signal_v));
    out
}

type Table = PatchTable<16, 256, 3>;

fn bind(g: &Graph, r: &Rec, v0: &Vals) -> (Table, Ids) {
    let mut t = Table::new();
    let mut dims = [None; 3];
    for (i, d) in dims.iter_mut().enumerate().take(g.ndims) {
        *d = Some(t.declare(Value::Dims(v0.dims[i])).expect("declare dims"));
    }
    let buf = t
        .declare(Value::Addr {
            addr: GpuVa(v0.buf.0),
            bytes: v0.buf.1,
        })
        .expect("declare buf");
    let scalar = t.declare(Value::Scalar(v0.scalar)).expect("declare scalar");
    let sig = t
        .declare(Value::Addr {
            addr: GpuVa(v0.sig),
            bytes: 64,
        })
        .expect("declare sig");
    let wait_v = t.declare(Value::Scalar(v0.wait_v)).expect("declare wait");
    let signal_v = t
        .declare(Value::Scalar(v0.signal_v))
        .expect("declare signal");
    let pm4 = r.pm4.as_dwords();
    let sd = r.sdma.as_dwords();
    t.bind_wait_signal(sig, 0, pm4, &r.wait)
        .expect("bind wait signal");
    t.bind_wait_value(wait_v, 0, pm4, &r.wait)
        .expect("bind wait value");
    for (i, (k, e)) in g.kernels.iter().zip(&r.execs).enumerate() {
        let slot = (i * KA_DW) as u32;
        let var = dims[k.dims_var].expect("dims var");
        t.bind_exec(var, 0, pm4, e, k.limits, k.packet.then_some((2, slot + 16)))
            .expect("bind exec");
        t.bind_u64(buf, 2, Some(&r.ka[..]), slot, k.off)
            .expect("bind ptr");
        t.require_bytes(buf, k.off + 8).expect("require");
        t.bind_u32(scalar, 2, Some(&r.ka[..]), slot + 2)
            .expect("bind scalar");
    }
    t.bind_signal_addr(sig, 0, pm4, &r.sig)
        .expect("bind signal addr");
    t.bind_signal_value(signal_v, 0, pm4, &r.sig)
        .expect("bind signal value");
    t.bind_wait_signal(sig, 1, sd, &r.swait)
        .expect("bind sdma wait signal");
    t.bind_wait_value(wait_v, 1, sd, &r.swait)
        .expect("bind sdma wait value");
    t.bind_copy(Some(buf), None, 1, sd, &r.copy)
        .expect("bind copy");
    let n = t.var_count();
    (
        t,
        Ids {
            dims,
            buf,
            scalar,
            sig,
            wait_v,
            signal_v,
            n,
        },
    )
}

/// The model: is `v` acceptable for graph `g`?
fn acceptable(g: &Graph, v: &Vals) -> bool {
    for (i, d) in v.dims.iter().enumerate().take(g.ndims) {
        let mut users: Vec<Kernel> = g
            .kernels
            .iter()
            .filter(|k| k.dims_var == i)
            .copied()
            .collect();
        if users.is_empty() {
            // A dims variable no kernel uses: only nonzero sizes and a threads count that
            // fits 32 bits.
            users.push(Kernel {
                packet: false,
                dims_var: i,
                limits: DimLimits {
                    max_global: [u32::MAX; 3],
                    max_local: [u32::MAX; 3],
                    max_threads: u32::MAX,
                },
                off: 0,
            });
        }
        for k in &users {
            let l = &k.limits;
            for a in 0..3 {
                let (gl, lo) = (d.global[a], d.local[a]);
                if gl == 0 || gl > l.max_global[a] || lo == 0 || lo > l.max_local[a] {
                    return false;
                }
                if k.packet && (lo > 0xFFFF || u64::from(gl) * u64::from(lo) > u32::MAX.into()) {
                    return false;
                }
            }
            let threads: u128 = d.local.iter().map(|&x| u128::from(x)).product();
            if threads > l.max_threads.into() {
                return false;
            }
        }
    }
    let need = g
        .kernels
        .iter()
        .map(|k| k.off + 8)
        .chain([g.copy.0 + g.copy.1])
        .max()
        .unwrap_or(0);
    v.buf.1 >= need
        && v.buf.0.checked_add(v.buf.1).is_some()
        && v.scalar <= u32::MAX.into()
        && v.wait_v <= u32::MAX.into()
}

/// Graph patch-table harness.
pub fn run(data: &[u8]) {
    let mut u = Unstructured::new(data);
    let _ = body(&mut u);
}

fn body(u: &mut Unstructured<'_>) -> arbitrary::Result<()> {
    let ndims = u.int_in_range(1..=3)?;
    let nk = u.int_in_range(1..=6)?;
    let mut kernels = Vec::new();
    for _ in 0..nk {
        kernels.push(Kernel {
            packet: u.arbitrary()?,
            dims_var: u.int_in_range(0..=ndims - 1)?,
            limits: limits(u)?,
            off: u64::from(u.int_in_range(0u32..=32)?) * 8,
        });
    }
    let copy = (
        u64::from(u.int_in_range(0u32..=64)?) * 4,
        u64::from(u.int_in_range(1u32..=256)?) * 4,
        *u.choose(&[64u64, 256, 1 << 20])?,
    );
    let g = Graph {
        kernels,
        ndims,
        copy,
    };
    let v0 = Vals {
        dims: [small_dims(u)?, small_dims(u)?, small_dims(u)?],
        buf: (0x8000_0000, 0x1000),
        scalar: u64::from(u.arbitrary::<u32>()?),
        sig: 0x1_0000,
        wait_v: u64::from(u.arbitrary::<u32>()?),
        signal_v: u.arbitrary()?,
    };
    assert!(
        acceptable(&g, &v0),
        "record-time values are acceptable: {v0:?}"
    );
    let r = record(&g, &v0);
    let (mut t, ids) = bind(&g, &r, &v0);
    let mut pm4 = r.pm4.as_dwords().to_vec();
    let sdma: Vec<AtomicU32> = r
        .sdma
        .as_dwords()
        .iter()
        .map(|&x| AtomicU32::new(x))
        .collect();
    let mut ka = r.ka.clone();
    let mut cur = v0;
    for n in 0..u.int_in_range(1..=8)? {
        let v = vals(u, &cur)?;
        let given = values(&ids, &v);
        let ok = acceptable(&g, &v);
        let val = t.validate(&given);
        assert_eq!(
            val.is_ok(),
            ok,
            "validate vs model: {v:?}: {val:?}: kernels {:?}",
            g.kernels
        );
        let before = (
            pm4.clone(),
            snapshot(&sdma),
            ka.clone(),
            t.current().to_vec(),
        );
        // Alternate plain memory and atomic views of the same lists.
        let res = if n % 2 == 0 {
            apply_plain(&mut t, &given, &mut pm4, &sdma, &mut ka, n % 4 == 0)
        } else {
            apply_atomic(&mut t, &given, &mut pm4, &sdma, &mut ka)
        };
        assert_eq!(res.is_ok(), ok, "apply vs model: {v:?}: {res:?}");
        if ok {
            cur = v;
            let f = record(&g, &v);
            assert_eq!(pm4, f.pm4.as_dwords(), "PM4 after {v:?}");
            assert_eq!(snapshot(&sdma), f.sdma.as_dwords(), "SDMA after {v:?}");
            assert_eq!(ka, f.ka, "kernargs after {v:?}");
            assert!(pm4::decode(&pm4).eq(pm4::decode(f.pm4.as_dwords())));
            assert_eq!(
                t.current(),
                &values(&ids, &v).into_iter().flatten().collect::<Vec<_>>()[..]
            );
        } else {
            assert_eq!(
                (
                    pm4.clone(),
                    snapshot(&sdma),
                    ka.clone(),
                    t.current().to_vec()
                ),
                before,
                "a refused replay changed something: {v:?}"
            );
        }
    }
    Ok(())
}

fn snapshot(m: &[AtomicU32]) -> Vec<u32> {
    m.iter().map(|x| x.load(Ordering::Relaxed)).collect()
}

/// `apply` on plain `[u32]` copies (the SDMA list is copied out of and back into its view);
/// every other time as `check` then `write`.
fn apply_plain(
    t: &mut Table,
    given: &[Option<Value>],
    pm4: &mut [u32],
    sdma: &[AtomicU32],
    ka: &mut [u32],
    split: bool,
) -> Result<usize, hcq_core::patch::PatchError> {
    let mut sd = snapshot(sdma);
    let r = if !split {
        t.apply(given, &mut [pm4, &mut sd[..], ka])
    } else {
        t.check(given)
            .and_then(|c| t.write(c, &mut [pm4, &mut sd[..], ka]))
    };
    for (d, s) in sdma.iter().zip(&sd) {
        d.store(*s, Ordering::Relaxed);
    }
    r
}

/// `apply` on `&[AtomicU32]` views (the PM4 list and kernargs are copied in and back out).
fn apply_atomic(
    t: &mut Table,
    given: &[Option<Value>],
    pm4: &mut [u32],
    sdma: &[AtomicU32],
    ka: &mut [u32],
) -> Result<usize, hcq_core::patch::PatchError> {
    let pv: Vec<AtomicU32> = pm4.iter().map(|&x| AtomicU32::new(x)).collect();
    let kv: Vec<AtomicU32> = ka.iter().map(|&x| AtomicU32::new(x)).collect();
    let mut targets: [&[AtomicU32]; 3] = [&pv, sdma, &kv];
    let r = t.apply(given, &mut targets);
    for (d, s) in pm4.iter_mut().zip(&pv) {
        *d = s.load(Ordering::Relaxed);
    }
    for (d, s) in ka.iter_mut().zip(&kv) {
        *d = s.load(Ordering::Relaxed);
    }
    r
}
