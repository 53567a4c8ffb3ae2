//! Property test for command lists: patching a list (in place, and through an `&[AtomicU32]`
//! view as if it were in GPU memory) equals building it fresh with the patched parameters.

use core::sync::atomic::AtomicU32;
use hcq_core::addr::GpuVa;
use hcq_core::arch::GFX11;
use hcq_core::cmd::{CmdError, ExecCmd, Pm4List, SdmaList, SignalCmd, WaitCmd, patch};
use hcq_core::pm4::{DispatchInfo, Program};
use hcq_core::signal::SignalRef;
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Op {
    Barrier,
    Exec(Program, u64, [u32; 3], [u32; 3]),
    Wait(SignalRef, u32),
    Signal(SignalRef, u64),
    Timestamp(SignalRef),
}

fn signal() -> impl Strategy<Value = SignalRef> {
    (
        any::<u64>(),
        prop_oneof![Just(0u64), any::<u64>()],
        1u32..0x0FFF_FFFF,
    )
        .prop_map(|(a, m, e)| SignalRef {
            addr: a & !0x3f & (u64::MAX - 0x40),
            event_mailbox_ptr: m,
            event_id: if m == 0 { 0 } else { e },
        })
}

fn dims() -> impl Strategy<Value = ([u32; 3], [u32; 3])> {
    (any::<[u16; 3]>(), any::<[u16; 3]>()).prop_map(|(g, l)| (g.map(u32::from), l.map(u32::from)))
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        Just(Op::Barrier),
        (
            any::<[u64; 2]>(),
            any::<[u32; 3]>(),
            any::<bool>(),
            0u64..(1 << 60),
            dims()
        )
            .prop_map(|(a, r, dp, k, (g, l))| Op::Exec(
                Program {
                    prog_addr: GpuVa(a[0]),
                    scratch_addr: GpuVa(a[1]),
                    tmpring_size: r[0],
                    rsrc1: r[1],
                    rsrc2: r[2],
                    rsrc3: 0,
                    dispatch: dp.then_some(DispatchInfo {
                        packet_offset: 0x40,
                        group_segment_size: 3,
                        private_segment_size: 4
                    }),
                    ..Program::default()
                },
                k,
                g,
                l
            )),
        (signal(), any::<u32>()).prop_map(|(s, v)| Op::Wait(s, v)),
        (signal(), any::<u64>()).prop_map(|(s, v)| Op::Signal(s, v)),
        signal().prop_map(Op::Timestamp),
    ]
}

#[derive(Clone, Debug)]
enum Patch {
    Exec([u32; 3], [u32; 3]),
    Wait(Option<SignalRef>, Option<u32>),
    Signal(Option<SignalRef>, Option<u64>),
}

fn patch_strategy() -> impl Strategy<Value = (usize, Patch)> {
    (
        any::<usize>(),
        prop_oneof![
            dims().prop_map(|(g, l)| Patch::Exec(g, l)),
            (
                proptest::option::of(signal()),
                proptest::option::of(any::<u32>())
            )
                .prop_map(|(s, v)| Patch::Wait(s, v)),
            (
                proptest::option::of(signal()),
                proptest::option::of(any::<u64>())
            )
                .prop_map(|(s, v)| Patch::Signal(s, v)),
        ],
    )
}

#[derive(Clone, Copy)]
enum H {
    E(ExecCmd),
    W(WaitCmd),
    S(SignalCmd),
    O,
}

type L = Pm4List<4096, 64>;

fn build(ops: &[Op]) -> (Box<L>, Vec<H>) {
    let mut l = Box::new(L::new(&GFX11));
    let hs = ops
        .iter()
        .map(|o| match o {
            Op::Barrier => {
                l.memory_barrier().unwrap();
                H::O
            }
            Op::Exec(p, k, g, lo) => H::E(l.exec(p, GpuVa(*k), *g, *lo).unwrap().0),
            Op::Wait(s, v) => H::W(l.wait(s, *v).unwrap()),
            Op::Signal(s, v) => H::S(l.signal(s, *v).unwrap()),
            Op::Timestamp(s) => {
                l.timestamp(s).unwrap();
                H::O
            }
        })
        .collect();
    (l, hs)
}

proptest! {
    #[test]
    fn pm4_patch_equals_fresh(ops in proptest::collection::vec(op(), 1..12), patches in proptest::collection::vec(patch_strategy(), 0..8)) {
        let (mut l, hs) = build(&ops);
        let mem: Vec<AtomicU32> = l.as_dwords().iter().map(|&d| AtomicU32::new(d)).collect();
        let mut view: &[AtomicU32] = &mem;
        let mut fresh_ops = ops.clone();
        for (i, p) in patches {
            let i = i % ops.len();
            match (&p, hs[i], &mut fresh_ops[i]) {
                (Patch::Exec(g, lo), H::E(h), Op::Exec(_, _, fg, fl)) => {
                    let a = l.update_exec(&h, *g, *lo).unwrap();
                    let b = patch::update_exec(&mut view, &h, *g, *lo).unwrap();
                    prop_assert_eq!(a, b);
                    *fg = *g;
                    *fl = *lo;
                }
                (Patch::Wait(s, v), H::W(h), Op::Wait(fs, fv)) => {
                    l.update_wait(&h, s.as_ref(), *v).unwrap();
                    patch::update_wait(&mut view, &h, s.as_ref(), *v).unwrap();
                    if let Some(s) = s { fs.addr = s.addr; }
                    if let Some(v) = v { *fv = *v; }
                }
                (Patch::Signal(s, v), H::S(h), Op::Signal(fs, fv)) => {
                    // A command with a mailbox part is patched with a signal that has one (the
                    // seed would otherwise point the mailbox write at address 0).
                    let s = s.map(|mut s| {
                        if fs.has_event() && !s.has_event() {
                            s.event_mailbox_ptr = 0x1000;
                            s.event_id = 1;
                        }
                        s
                    });
                    l.update_signal(&h, s.as_ref(), *v).unwrap();
                    patch::update_signal(&mut view, &h, s.as_ref(), *v).unwrap();
                    if let Some(s) = s {
                        *fs = if fs.has_event() { s } else { SignalRef::new(s.addr) };
                    }
                    if let Some(v) = v { *fv = *v; }
                }
                (Patch::Exec(..), h, _) | (Patch::Wait(..), h, _) | (Patch::Signal(..), h, _) => {
                    // Patching the wrong kind of command is refused and changes nothing.
                    let before = l.as_dwords().to_vec();
                    let r = match (&p, h) {
                        (Patch::Exec(g, lo), H::W(w)) => l.update_exec(&ExecCmd { offset: w.offset, layout: hcq_core::pm4::exec_layout(&GFX11, &Program::default()), dispatch: None }, *g, *lo).map(|_| ()),
                        (Patch::Wait(_, v), H::S(s)) => l.update_wait(&WaitCmd { offset: s.offset, engine: hcq_core::cmd::Engine::Pm4 }, None, *v),
                        (Patch::Signal(_, v), H::W(w)) => l.update_signal(&SignalCmd { offset: w.offset, dwords: 8, engine: hcq_core::cmd::Engine::Pm4 }, None, *v),
                        _ => Err(CmdError::TooManyCommands { capacity: 0 }),
                    };
                    prop_assert!(r.is_err());
                    prop_assert_eq!(l.as_dwords(), &before[..]);
                }
            }
        }
        let (f, _) = build(&fresh_ops);
        let patched = l.as_dwords();
        let viewed: Vec<u32> = mem.iter().map(|a| a.load(core::sync::atomic::Ordering::Relaxed)).collect();
        prop_assert_eq!(patched, &viewed[..]);
        prop_assert_eq!(patched, f.as_dwords());
    }

    #[test]
    fn sdma_patch_equals_fresh(s0 in signal(), s1 in signal(), v0 in any::<u32>(), v1 in any::<u32>(), size in 0u64..(16 << 20)) {
        let mut l: Box<SdmaList<512, 16, 64>> = Box::new(SdmaList::new(&GFX11));
        l.copy(GpuVa(0x1000), GpuVa(0x10_0000_0000), size).unwrap();
        let w = l.wait(&s0, v0).unwrap();
        let s = l.signal(&s0, v0).unwrap();
        l.update_wait(&w, Some(&s1), Some(v1)).unwrap();
        l.update_signal(&s, Some(&s1), Some(v1)).unwrap();
        let mut f: Box<SdmaList<512, 16, 64>> = Box::new(SdmaList::new(&GFX11));
        f.copy(GpuVa(0x1000), GpuVa(0x10_0000_0000), size).unwrap();
        f.wait(&s1, v1).unwrap();
        // SDMA update_signal patches only the FENCE of the value (as the seed): the mailbox
        // FENCE + TRAP keep the original signal's event.
        f.signal(&SignalRef { addr: s1.addr, ..s0 }, v1).unwrap();
        prop_assert_eq!(l.as_dwords(), f.as_dwords());
        prop_assert_eq!(l.packet_sizes(), f.packet_sizes());
    }
}
