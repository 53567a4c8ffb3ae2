//! Fuzz harnesses for hcq-core's packet layer, as plain functions so `tests/corpus.rs` can
//! replay the committed corpus with `cargo test` (no libFuzzer needed).
//!
//! * [`decode`]: arbitrary bytes as dwords through the PM4 and SDMA decoders: no panic, packet
//!   offsets agree with `packet_len`, errors carry the index where decoding stopped.
//! * [`patching`]: a random command list plus random patches; the patched list (patched in
//!   place and through an `&[AtomicU32]` view) must equal the list built fresh with the patched
//!   parameters, and must decode cleanly.
//! * [`patch_table::run`]: graph patch tables: replays with arbitrary (some unacceptable)
//!   values against fresh records and a model of what is acceptable.
//! * [`metadata::run`]: NT_AMDGPU_METADATA documents, notes and hidden arguments.
//! * [`ring::ring_wrap`], [`ring::arena`]: ring and timeline-arena operations against models.

pub mod codeobj;
pub mod isa;
pub mod metadata;
pub mod patch_table;
pub mod ring;
pub mod sim_exec;

use arbitrary::{Arbitrary, Unstructured};
use core::sync::atomic::{AtomicU32, Ordering};
use hcq_core::addr::GpuVa;
use hcq_core::arch::GFX11;
use hcq_core::cmd::{ExecCmd, Pm4List, SdmaList, SignalCmd, WaitCmd, patch};
use hcq_core::pm4::{self, DispatchInfo, Program};
use hcq_core::sdma;
use hcq_core::signal::SignalRef;

/// Decoder harness.
pub fn decode(data: &[u8]) {
    let dwords: Vec<u32> = data
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let mut at = 0;
    for r in pm4::decode(&dwords) {
        match r {
            Ok((off, p)) => {
                assert_eq!(off, at);
                at += pm4::packet_len(dwords[off]).expect("decoded packet has a length");
                let _ = p.to_string();
            }
            Err(e) => {
                assert_eq!(e.at, at);
                let _ = e.to_string();
            }
        }
    }
    let mut at = 0;
    for r in sdma::decode(&dwords) {
        match r {
            Ok((off, p)) => {
                assert_eq!(off, at);
                at += sdma::packet_len(&dwords[off..]).expect("decoded packet has a length");
                let _ = p.to_string();
            }
            Err(e) => {
                assert_eq!(e.at, at);
                let _ = e.to_string();
            }
        }
    }
}

/// A signal as the fuzzer makes it.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub struct FSig {
    addr: u64,
    mailbox: Option<u64>,
    event_id: u32,
}

impl FSig {
    fn get(self) -> SignalRef {
        match self.mailbox {
            Some(m) if m != 0 => SignalRef {
                addr: self.addr & !0x3f & (u64::MAX - 0x40),
                event_mailbox_ptr: m,
                event_id: self.event_id & 0x0FFF_FFFF,
            },
            _ => SignalRef::new(self.addr & !0x3f & (u64::MAX - 0x40)),
        }
    }
}

/// One command.
#[derive(Arbitrary, Debug, Clone)]
pub enum FOp {
    /// memory_barrier (PM4) / timestamp (SDMA).
    Barrier,
    /// exec (PM4) / copy (SDMA).
    Exec {
        /// Program and scratch addresses.
        addrs: [u64; 2],
        /// tmpring, rsrc1, rsrc2.
        regs: [u32; 3],
        /// Kernel takes a dispatch pointer.
        dp: bool,
        /// Kernargs address (SDMA: copy destination).
        kernargs: u64,
        /// Global size (SDMA: copy size bits).
        global: [u16; 3],
        /// Local size.
        local: [u16; 3],
    },
    /// wait.
    Wait(FSig, u32),
    /// signal.
    Signal(FSig, u64),
    /// timestamp.
    Timestamp(FSig),
}

/// One patch of command `cmd % len`.
#[derive(Arbitrary, Debug, Clone)]
pub enum FPatch {
    /// update_exec.
    Exec([u16; 3], [u16; 3]),
    /// update_wait.
    Wait(Option<FSig>, Option<u32>),
    /// update_signal.
    Signal(Option<FSig>, Option<u64>),
}

/// The patching harness input.
#[derive(Arbitrary, Debug, Clone)]
pub struct PatchInput {
    sdma: bool,
    ops: Vec<FOp>,
    patches: Vec<(u8, FPatch)>,
}

#[derive(Clone, Copy)]
enum H {
    E(ExecCmd),
    W(WaitCmd),
    S(SignalCmd),
    O,
}

type P4 = Pm4List<4096, 64>;
type Sd = SdmaList<4096, 64, 512>;

fn program(addrs: [u64; 2], regs: [u32; 3], dp: bool) -> Program {
    Program {
        prog_addr: GpuVa(addrs[0]),
        scratch_addr: GpuVa(addrs[1]),
        tmpring_size: regs[0],
        rsrc1: regs[1],
        rsrc2: regs[2],
        rsrc3: 0,
        dispatch: dp.then_some(DispatchInfo {
            packet_offset: u64::from(regs[0] & 0xff8),
            group_segment_size: regs[1],
            private_segment_size: regs[2],
        }),
        private_segment_buffer: None,
        flat_scratch_init: None,
    }
}

fn w3(v: [u16; 3]) -> [u32; 3] {
    v.map(u32::from)
}

fn build_pm4(ops: &[FOp]) -> Option<(Box<P4>, Vec<H>)> {
    let mut l = Box::new(P4::new(&GFX11));
    let mut hs = Vec::new();
    for o in ops {
        hs.push(match o {
            FOp::Barrier => l.memory_barrier().ok().map(|_| H::O)?,
            FOp::Exec {
                addrs,
                regs,
                dp,
                kernargs,
                global,
                local,
            } => H::E(
                l.exec(
                    &program(*addrs, *regs, *dp),
                    GpuVa(*kernargs),
                    w3(*global),
                    w3(*local),
                )
                .ok()?
                .0,
            ),
            FOp::Wait(s, v) => H::W(l.wait(&s.get(), *v).ok()?),
            FOp::Signal(s, v) => H::S(l.signal(&s.get(), *v).ok()?),
            FOp::Timestamp(s) => l.timestamp(&s.get()).ok().map(|_| H::O)?,
        });
    }
    Some((l, hs))
}

fn copy_size(g: [u16; 3]) -> u64 {
    (u64::from(g[0]) << 10 | u64::from(g[1])) & 0x3FF_FFFF
}

fn build_sdma(ops: &[FOp]) -> Option<(Box<Sd>, Vec<H>)> {
    let mut l = Box::new(Sd::new(&GFX11));
    let mut hs = Vec::new();
    for o in ops {
        hs.push(match o {
            FOp::Barrier | FOp::Timestamp(_) => {
                let s = if let FOp::Timestamp(s) = o {
                    s.get()
                } else {
                    SignalRef::new(0x1000)
                };
                l.timestamp(&s).ok().map(|_| H::O)?
            }
            FOp::Exec {
                addrs,
                kernargs,
                global,
                ..
            } => {
                let size = copy_size(*global);
                let src = addrs[0].min(u64::MAX - size);
                let dst = kernargs.min(&(u64::MAX - size)).to_owned();
                l.copy(GpuVa(dst), GpuVa(src), size).ok().map(|_| H::O)?
            }
            FOp::Wait(s, v) => H::W(l.wait(&s.get(), *v).ok()?),
            FOp::Signal(s, v) => H::S(l.signal(&s.get(), *v as u32).ok()?),
        });
    }
    Some((l, hs))
}

/// Patching harness.
pub fn patching(data: &[u8]) {
    let Ok(input) = PatchInput::arbitrary(&mut Unstructured::new(data)) else {
        return;
    };
    if input.ops.is_empty() || input.ops.len() > 48 {
        return;
    }
    let mut fresh = input.ops.clone();
    if input.sdma {
        let Some((mut l, hs)) = build_sdma(&input.ops) else {
            return;
        };
        for (i, p) in &input.patches {
            let i = usize::from(*i) % fresh.len();
            match (p, hs[i], &mut fresh[i]) {
                (FPatch::Wait(s, v), H::W(h), FOp::Wait(fs, fv)) => {
                    l.update_wait(&h, s.map(FSig::get).as_ref(), *v)
                        .expect("wait patch");
                    if let Some(s) = s {
                        fs.addr = s.addr;
                    }
                    if let Some(v) = v {
                        *fv = *v;
                    }
                }
                (FPatch::Signal(s, v), H::S(h), FOp::Signal(fs, fv)) => {
                    let v32 = v.map(|v| v as u32);
                    l.update_signal(&h, s.map(FSig::get).as_ref(), v32)
                        .expect("signal patch");
                    // SDMA update_signal rewrites only the value FENCE (as the seed).
                    if let Some(s) = s {
                        fs.addr = s.addr;
                    }
                    if let Some(v) = v32 {
                        *fv = u64::from(v);
                    }
                }
                (_, H::O, _) | (_, H::E(_), _) => {}
                (FPatch::Wait(_, v), H::S(h), _) => {
                    let before = l.as_dwords().to_vec();
                    let w = WaitCmd {
                        offset: h.offset,
                        engine: hcq_core::cmd::Engine::Sdma,
                    };
                    assert!(l.update_wait(&w, None, *v).is_err());
                    assert_eq!(l.as_dwords(), &before[..]);
                }
                _ => {}
            }
        }
        let (f, _) = build_sdma(&fresh).expect("fresh list fits like the original");
        assert_eq!(l.as_dwords(), f.as_dwords());
        assert_eq!(l.packet_sizes(), f.packet_sizes());
        for r in sdma::decode(l.as_dwords()) {
            r.expect("patched SDMA list decodes");
        }
        return;
    }
    let Some((mut l, hs)) = build_pm4(&input.ops) else {
        return;
    };
    let mem: Vec<AtomicU32> = l.as_dwords().iter().map(|&d| AtomicU32::new(d)).collect();
    let mut view: &[AtomicU32] = &mem;
    for (i, p) in &input.patches {
        let i = usize::from(*i) % fresh.len();
        match (p, hs[i], &mut fresh[i]) {
            (FPatch::Exec(g, lo), H::E(h), FOp::Exec { global, local, .. }) => {
                let a = l.update_exec(&h, w3(*g), w3(*lo)).expect("exec patch");
                let b =
                    patch::update_exec(&mut view, &h, w3(*g), w3(*lo)).expect("exec patch (view)");
                assert_eq!(a, b);
                *global = *g;
                *local = *lo;
            }
            (FPatch::Wait(s, v), H::W(h), FOp::Wait(fs, fv)) => {
                let s = s.map(FSig::get);
                l.update_wait(&h, s.as_ref(), *v).expect("wait patch");
                patch::update_wait(&mut view, &h, s.as_ref(), *v).expect("wait patch (view)");
                if let Some(s) = s {
                    fs.addr = s.addr;
                }
                if let Some(v) = v {
                    *fv = *v;
                }
            }
            (FPatch::Signal(s, v), H::S(h), FOp::Signal(fs, fv)) => {
                let had = fs.get().has_event();
                // A command with a mailbox part gets a signal with one (see prop_cmd.rs).
                let s = s.map(|s| {
                    let mut s = s.get();
                    if had && !s.has_event() {
                        s.event_mailbox_ptr = 0x1000;
                        s.event_id = 1;
                    }
                    s
                });
                l.update_signal(&h, s.as_ref(), *v).expect("signal patch");
                patch::update_signal(&mut view, &h, s.as_ref(), *v).expect("signal patch (view)");
                if let Some(s) = s {
                    *fs = if had {
                        FSig {
                            addr: s.addr,
                            mailbox: Some(s.event_mailbox_ptr),
                            event_id: s.event_id,
                        }
                    } else {
                        FSig {
                            addr: s.addr,
                            mailbox: None,
                            event_id: 0,
                        }
                    };
                }
                if let Some(v) = v {
                    *fv = *v;
                }
            }
            (p, h, _) => {
                let before = l.as_dwords().to_vec();
                let off = match h {
                    H::E(e) => e.offset,
                    H::W(w) => w.offset,
                    H::S(s) => s.offset,
                    H::O => continue,
                };
                let r = match p {
                    FPatch::Exec(g, lo) => l
                        .update_exec(
                            &ExecCmd {
                                offset: off,
                                layout: pm4::exec_layout(&GFX11, &Program::default()),
                                dispatch: None,
                            },
                            w3(*g),
                            w3(*lo),
                        )
                        .map(|_| ()),
                    FPatch::Wait(_, v) => l.update_wait(
                        &WaitCmd {
                            offset: off,
                            engine: hcq_core::cmd::Engine::Pm4,
                        },
                        None,
                        *v,
                    ),
                    FPatch::Signal(_, v) => l.update_signal(
                        &SignalCmd {
                            offset: off,
                            dwords: 8,
                            engine: hcq_core::cmd::Engine::Pm4,
                        },
                        None,
                        *v,
                    ),
                };
                assert!(
                    r.is_err(),
                    "a patch of the wrong command kind must be refused"
                );
                assert_eq!(l.as_dwords(), &before[..]);
            }
        }
    }
    let (f, _) = build_pm4(&fresh).expect("fresh list fits like the original");
    assert_eq!(l.as_dwords(), f.as_dwords());
    let viewed: Vec<u32> = mem.iter().map(|a| a.load(Ordering::Relaxed)).collect();
    assert_eq!(l.as_dwords(), &viewed[..]);
    for r in pm4::decode(l.as_dwords()) {
        r.expect("patched PM4 list decodes");
    }
}
