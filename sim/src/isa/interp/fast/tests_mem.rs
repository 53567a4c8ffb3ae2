//! The fast path's memory forms (GLOBAL, SCRATCH, DS) against the general path, and by hand.

use super::tests::{MBASE, copy, exec_lds, exec_on, launch, mem_bytes, mem_with_pattern, wave};
use super::*;
use crate::isa::{FlatMemory, ScratchSetup};

#[test]
fn fast_memory_matches_the_general_path() {
    use Op::*;
    let v = |r: u16| VGPR + r;
    let ops = [
        MLoadB32, MLoadB64, MLoadB96, MLoadB128, MStoreB32, MStoreB64, MStoreB96, MStoreB128,
    ];
    let mut fast_runs = 0;
    for wave64 in [false, true] {
        let mut l = launch(wave64);
        l.vgprs = 16;
        l.scratch = ScratchSetup {
            base: MBASE + 0x8000,
            wave_bytes: 64 * 64,
        };
        let lanes = if wave64 { 64usize } else { 32 };
        for op in ops {
            let dwords = match op {
                MLoadB32 | MStoreB32 => 1,
                MLoadB64 | MStoreB64 => 2,
                MLoadB96 | MStoreB96 => 3,
                _ => 4,
            };
            let load = matches!(op, MLoadB32 | MLoadB64 | MLoadB96 | MLoadB128);
            // (segment, saddr, lane stride in bytes, offset): consecutive lanes, one
            // lane's gap (the gather), a negative offset, the scratch forms, accesses
            // beyond memory (the same fault: the gather's faulting access runs the general
            // path), every lane at one address (a store's last lane wins), scattered lanes
            // off the 8-byte grid, and scattered lanes whose last ones leave memory.
            let size = 4 * dwords;
            let cases: [(u8, u16, u32, i32, u64); 11] = [
                (SEG_GLOBAL, NONE, size, 16, MBASE),
                (SEG_GLOBAL, 2, size, 0, MBASE + 0x100),
                (SEG_GLOBAL, 2, size + 4, -8, MBASE + 0x100),
                (SEG_GLOBAL, NONE, size, 0, MBASE + 0x1_0000 - 64),
                (SEG_GLOBAL, NONE, size, 0, 0x10),
                (SEG_SCRATCH, NONE, 0, 8, 0),
                (SEG_SCRATCH, 4, 0, 4, 0),
                (SEG_SCRATCH, NONE, 0, 60, 0),
                (SEG_GLOBAL, NONE, 0, 4, MBASE + 0x200),
                (SEG_GLOBAL, 2, 2 * size + 4, 4, MBASE + 0x300),
                (
                    SEG_GLOBAL,
                    NONE,
                    size + 8,
                    0,
                    MBASE + 0x1_0000 - 16 * u64::from(size),
                ),
            ];
            for (k, (seg, saddr, stride, off, base)) in cases.into_iter().enumerate() {
                let mut i = Inst::new(op, Enc::Flat);
                i.sub = seg;
                i.imm = off;
                i.src[2] = saddr;
                if seg == SEG_GLOBAL {
                    i.src[0] = v(8);
                }
                if load {
                    i.dst = v(2);
                } else {
                    i.src[1] = v(2);
                }
                let mut w = wave(lanes, 0, k);
                w.v.resize(17 * lanes, UNDEFINED);
                w.nvgpr = 16;
                // The address rows: a 64-bit pair, or a 32-bit offset from SADDR.
                for lane in 0..lanes {
                    // CAST: lane < 64.
                    let a = u64::from(stride) * lane as u64;
                    let va = if saddr == NONE { base + a } else { a };
                    w.set_v(8, lane, va as u32);
                    w.set_v(9, lane, (va >> 32) as u32);
                }
                w.s[2] = (base & 0xffff_ffff) as u32;
                w.s[3] = (base >> 32) as u32;
                w.s[4] = 16;
                let (ma, mb) = (mem_with_pattern(), mem_with_pattern());
                let mut a = copy(&w);
                let mut b = w;
                let fast = exec_on(&ma, &l, &mut a, &i, true);
                let slow = exec_on(&mb, &l, &mut b, &i, false);
                let slow = slow.unwrap();
                match fast {
                    Some(r) => {
                        fast_runs += 1;
                        assert_eq!(
                            r.map_err(|e| e.to_string()),
                            slow.map_err(|e| e.to_string()),
                            "{op:?} case {k}"
                        );
                    }
                    // Declined: only an access that faults (the general path runs it).
                    None => {
                        let r = exec_on(&ma, &l, &mut a, &i, false).unwrap();
                        assert!(slow.is_err(), "{op:?} case {k} declined");
                        assert_eq!(
                            r.map_err(|e| e.to_string()),
                            slow.map_err(|e| e.to_string()),
                            "{op:?} case {k}"
                        );
                    }
                }
                assert_eq!(a.v, b.v, "{op:?} case {k} wave64 {wave64}");
                assert!(mem_bytes(&ma) == mem_bytes(&mb), "{op:?} case {k} memory");
            }
        }
    }
    // Every case but the scattered lanes that leave memory.
    assert_eq!(fast_runs, 2 * 8 * 10);
}

#[test]
fn fast_memory_values_by_hand() {
    let l = {
        let mut l = launch(false);
        l.scratch = ScratchSetup {
            base: MBASE + 0x8000,
            wave_bytes: 32 * 16,
        };
        l
    };
    let m = FlatMemory::new(MBASE, 0x1_0000);
    let words: Vec<u8> = (0..64u32).flat_map(|k| (0x100 + k).to_le_bytes()).collect();
    m.poke(MBASE + 0x40, &words).unwrap();
    let mut w = wave(32, 0, 0);
    for lane in 0..32 {
        // CAST: lane < 32.
        w.set_v(4, lane, 8 * lane as u32);
    }
    w.s[2] = MBASE as u32;
    w.s[3] = 0;
    // global_load_b64 v[0:1], v4, s[2:3] offset:0x40: lane l reads words 2l and 2l + 1.
    let mut i = Inst::new(Op::MLoadB64, Enc::Flat);
    i.sub = SEG_GLOBAL;
    i.imm = 0x40;
    i.src = [VGPR + 4, NONE, 2];
    i.dst = VGPR;
    assert!(matches!(exec_on(&m, &l, &mut w, &i, true), Some(Ok(()))));
    assert_eq!(&w.v[..3], &[0x100, 0x102, 0x104]);
    assert_eq!(&w.v[32..35], &[0x101, 0x103, 0x105]);
    // scratch_store_b32 off, v0, off offset:4: lane l's dword 1 is at slot + 4 * 32 +
    // 4 * l (the swizzle: dword-major across the wave).
    let mut i = Inst::new(Op::MStoreB32, Enc::Flat);
    i.sub = SEG_SCRATCH;
    i.imm = 4;
    i.src = [NONE, VGPR, NONE];
    assert!(matches!(exec_on(&m, &l, &mut w, &i, true), Some(Ok(()))));
    let mut b = [0u8; 8];
    m.peek(MBASE + 0x8000 + 128 + 4 * 3, &mut b).unwrap();
    assert_eq!(b, [0x06, 1, 0, 0, 0x08, 1, 0, 0]);
    // Beyond the 16 bytes a lane has: the general path's scratch fault.
    i.imm = 16;
    let e = exec_on(&m, &l, &mut w, &i, true).unwrap().unwrap_err();
    assert!(e.to_string().contains("beyond the wave's slot"), "{e}");
}

/// A lane's LDS address.
type LaneAddr = fn(usize) -> u32;

#[test]
fn fast_lds_matches_the_general_path() {
    use Op::*;
    let v = |r: u16| VGPR + r;
    let ops = [
        DsLoadB32,
        DsLoadB64,
        DsLoadB96,
        DsLoadB128,
        DsStoreB32,
        DsStoreB64,
        DsStoreB96,
        DsStoreB128,
    ];
    let mut fast_runs = 0;
    for wave64 in [false, true] {
        let mut l = launch(wave64);
        l.vgprs = 16;
        let lanes = if wave64 { 64usize } else { 32 };
        for op in ops {
            let load = matches!(op, DsLoadB32 | DsLoadB64 | DsLoadB96 | DsLoadB128);
            // (lane address, offset): reversed lanes, every lane at one address (the
            // last lane's store wins), unaligned, and the last lane past the end (the
            // general path's fault, after the lanes before it).
            let cases: [(LaneAddr, i32); 4] = [
                (|l| 4 * (63 - l as u32), 8),
                (|_| 40, 0),
                (|l| 3 + 20 * l as u32, 1),
                (|l| 60 * l as u32, 0),
            ];
            for (k, (at, off)) in cases.into_iter().enumerate() {
                let mut i = Inst::new(op, Enc::Ds);
                i.imm = off;
                i.src[0] = v(8);
                if load {
                    i.dst = v(2);
                } else {
                    i.src[1] = v(2);
                }
                let mut w = wave(lanes, 0, k);
                w.v.resize(17 * lanes, UNDEFINED);
                w.nvgpr = 16;
                for lane in 0..lanes {
                    w.set_v(8, lane, at(lane));
                }
                let mut la: Vec<u8> = (0..2048u32).map(|x| (x * 13 + 5) as u8).collect();
                let mut lb = la.clone();
                let mut a = copy(&w);
                let mut b = w;
                let m = FlatMemory::new(MBASE, 64);
                let slow = exec_lds(&m, &mut lb, &l, &mut b, &i, false).unwrap();
                match exec_lds(&m, &mut la, &l, &mut a, &i, true) {
                    Some(r) => {
                        fast_runs += 1;
                        assert!(r.is_ok() && slow.is_ok(), "{op:?} case {k}");
                    }
                    None => {
                        assert!(slow.is_err(), "{op:?} case {k} declined");
                        let r = exec_lds(&m, &mut la, &l, &mut a, &i, false).unwrap();
                        assert_eq!(
                            r.map_err(|e| e.to_string()),
                            slow.map_err(|e| e.to_string())
                        );
                    }
                }
                assert_eq!(a.v, b.v, "{op:?} case {k} wave64 {wave64}");
                assert!(la == lb, "{op:?} case {k} LDS");
            }
        }
    }
    // The last case faults in wave64 (lane 63 at 3780) and for the wider ops in wave32.
    assert!((2 * 8 * 3..2 * 8 * 4).contains(&fast_runs), "{fast_runs}");
}

#[test]
fn fast_lds_values_by_hand() {
    let l = launch(false);
    let m = FlatMemory::new(MBASE, 64);
    let mut lds = vec![0u8; 256];
    let mut w = wave(32, 0, 0);
    for lane in 0..32 {
        // CAST: lane < 32.
        w.set_v(1, lane, 4 * (31 - lane as u32));
        w.set_v(2, lane, 0x100 + lane as u32);
    }
    // ds_store_b32 v1, v2 offset:16: lane l's value at 16 + 4 * (31 - l).
    let mut i = Inst::new(Op::DsStoreB32, Enc::Ds);
    i.imm = 16;
    i.src = [VGPR + 1, VGPR + 2, NONE];
    assert!(matches!(
        exec_lds(&m, &mut lds, &l, &mut w, &i, true),
        Some(Ok(()))
    ));
    assert_eq!(&lds[16..20], &[0x1f, 1, 0, 0]);
    assert_eq!(&lds[140..144], &[0x00, 1, 0, 0]);
    // ds_load_b64 v[3:4], v1 offset:16 reads lane l's word and the one after it.
    let mut i = Inst::new(Op::DsLoadB64, Enc::Ds);
    i.imm = 16;
    i.src = [VGPR + 1, NONE, NONE];
    i.dst = VGPR + 3;
    assert!(matches!(
        exec_lds(&m, &mut lds, &l, &mut w, &i, true),
        Some(Ok(()))
    ));
    assert_eq!(w.v[3 * 32 + 31], 0x11f);
    assert_eq!(w.v[4 * 32 + 31], 0x11e);
    assert_eq!(w.v[3 * 32], 0x100);
    assert_eq!(w.v[4 * 32], 0);
}
