use super::*;
use crate::arch::{GFX9, GFX11};
use crate::rsrc::ScratchRsrc;

fn sig(a: u64, mailbox: bool) -> SignalRef {
    SignalRef {
        addr: a,
        event_mailbox_ptr: if mailbox { 0x7fff_0000_0010 } else { 0 },
        event_id: if mailbox { 42 } else { 0 },
    }
}

fn prog() -> Program {
    Program {
        prog_addr: GpuVa(0x1000_0000),
        scratch_addr: GpuVa(0x2000_0000),
        tmpring_size: 1,
        rsrc1: 2,
        rsrc2: 3,
        rsrc3: 0,
        dispatch: None,
        private_segment_buffer: None,
        flat_scratch_init: None,
    }
}

#[test]
fn launch_is_105_dwords_and_patches() {
    let mut l: Pm4List<256, 8> = Pm4List::new(&GFX11);
    let w = l.wait(&sig(0x1000, false), 1).unwrap();
    l.memory_barrier().unwrap();
    let (e, dw) = l
        .exec(&prog(), GpuVa(0x3000), [1, 2, 3], [4, 5, 6])
        .unwrap();
    assert!(dw.is_none());
    let s = l.signal(&sig(0x2000, true), 2).unwrap();
    assert_eq!(l.as_dwords().len(), 105);
    assert_eq!(l.cmd_offsets(), &[0, 7, 22, 89]);

    l.update_wait(&w, Some(&sig(0xAB00, false)), Some(9))
        .unwrap();
    l.update_exec(&e, [7, 8, 9], [10, 11, 12]).unwrap();
    l.update_signal(&s, Some(&sig(0xCD00, true)), Some(0x1_0000_0003))
        .unwrap();

    // Same as building fresh with the new parameters.
    let mut f: Pm4List<256, 8> = Pm4List::new(&GFX11);
    f.wait(&sig(0xAB00, false), 9).unwrap();
    f.memory_barrier().unwrap();
    f.exec(&prog(), GpuVa(0x3000), [7, 8, 9], [10, 11, 12])
        .unwrap();
    f.signal(&sig(0xCD00, true), 0x1_0000_0003).unwrap();
    assert_eq!(l.as_dwords(), f.as_dwords());

    // Wrong handle kinds are refused.
    let bad = WaitCmd {
        offset: e.offset,
        engine: Engine::Pm4,
    };
    assert!(matches!(
        l.update_wait(&bad, None, Some(1)),
        Err(CmdError::WrongPacket { offset: 22, .. })
    ));
    let far = WaitCmd {
        offset: 200,
        engine: Engine::Pm4,
    };
    assert!(matches!(
        l.update_wait(&far, None, Some(1)),
        Err(CmdError::OutOfRange { .. })
    ));
}

#[test]
fn atomic_view_patch() {
    let mut l: Pm4List<64, 4> = Pm4List::new(&GFX11);
    let w = l.wait(&sig(0x1000, false), 1).unwrap();
    let mem: heapless::Vec<AtomicU32, 64> =
        l.as_dwords().iter().map(|&d| AtomicU32::new(d)).collect();
    let mut view: &[AtomicU32] = &mem;
    patch::update_wait(&mut view, &w, None, Some(77)).unwrap();
    assert_eq!(mem[4].load(Ordering::Relaxed), 77);
}

#[test]
fn overflow_leaves_list_unchanged() {
    let mut l: Pm4List<20, 8> = Pm4List::new(&GFX11);
    l.wait(&sig(0x1000, false), 1).unwrap();
    let before: heapless::Vec<u32, 20> = l.as_dwords().iter().copied().collect();
    assert!(matches!(
        l.memory_barrier(),
        Err(CmdError::Encode(EncodeError::BufferTooSmall { .. }))
    ));
    assert_eq!(l.as_dwords(), &before[..]);
    assert_eq!(l.len(), 1);
    let mut c: Pm4List<64, 1> = Pm4List::new(&GFX11);
    c.wait(&sig(0, false), 0).unwrap();
    assert_eq!(
        c.wait(&sig(0, false), 0),
        Err(CmdError::TooManyCommands { capacity: 1 })
    );
}

#[test]
fn dispatch_packet_roundtrip() {
    let mut l: Pm4List<128, 4> = Pm4List::new(&GFX11);
    let p = Program {
        dispatch: Some(DispatchInfo {
            packet_offset: 0x40,
            group_segment_size: 512,
            private_segment_size: 16,
        }),
        ..prog()
    };
    let (e, dw) = l.exec(&p, GpuVa(0x10_0000), [2, 3, 4], [8, 1, 1]).unwrap();
    let dw = dw.unwrap();
    assert_eq!(dw.addr, GpuVa(0x10_0040));
    assert_eq!((dw.packet.grid_size_x, dw.packet.grid_size_y), (16, 3));
    assert_eq!(dw.packet.kernarg_address, 0x10_0000);
    let dw2 = l.update_exec(&e, [5, 5, 5], [2, 2, 2]).unwrap().unwrap();
    assert_eq!(
        (dw2.packet.grid_size_z, dw2.packet.workgroup_size_z),
        (10, 2)
    );
    assert_eq!(l.as_dwords()[e.layout.dispatch_at + 1], 5);
    // Dims a dispatch packet cannot carry are refused before anything is written.
    let n = l.as_dwords().len();
    let mut before = [0u32; 128];
    before[..n].copy_from_slice(l.as_dwords());
    for (g, lo) in [
        ([1, 1, 1], [0x1_0000, 1, 1]),
        ([0x1_0000, 1, 1], [0x1_0000, 1, 1]),
    ] {
        let e2 = l.update_exec(&e, g, lo).unwrap_err();
        assert!(matches!(
            e2,
            CmdError::Encode(EncodeError::ValueTooLarge { .. })
        ));
        assert_eq!(l.as_dwords(), &before[..n]);
    }
}

/// A gfx9 launch with the private segment buffer, dispatch pointer and flat scratch init:
/// the handle's layout follows the 10 USER_DATA values, so patching the dims (checked
/// against the START and DISPATCH_DIRECT headers) hits NUM_THREAD and DISPATCH_DIRECT.
#[test]
fn exec_with_scratch_user_sgprs_patches() {
    let v = ScratchRsrc::new(&GFX9, GpuVa(0x3000_0000), 0x1_0000, false).unwrap();
    let p = Program {
        dispatch: Some(DispatchInfo {
            packet_offset: 0x40,
            group_segment_size: 0,
            private_segment_size: 68,
        }),
        private_segment_buffer: Some(v),
        flat_scratch_init: Some(GpuVa(0x3000_0000)),
        ..prog()
    };
    let mut l: Pm4List<256, 4> = Pm4List::new(&GFX9);
    l.memory_barrier().unwrap();
    let (e, dw) = l.exec(&p, GpuVa(0x10_0000), [2, 3, 4], [64, 1, 1]).unwrap();
    assert!(dw.is_some());
    assert_eq!(e.layout, pm4::exec_layout(&GFX9, &p));
    let d = l.as_dwords();
    let at = e.offset as usize;
    assert_eq!(d.len(), at + e.layout.dwords);
    assert_eq!(
        d[at + e.layout.local_at..at + e.layout.local_at + 3],
        [64, 1, 1]
    );
    assert_eq!(
        d[at + e.layout.dispatch_at + 1..at + e.layout.dispatch_at + 4],
        [2, 3, 4]
    );
    let dw2 = l.update_exec(&e, [7, 8, 9], [32, 2, 1]).unwrap().unwrap();
    assert_eq!(dw2.packet.grid_size_x, 7 * 32);
    let d = l.as_dwords();
    assert_eq!(
        d[at + e.layout.local_at..at + e.layout.local_at + 3],
        [32, 2, 1]
    );
    assert_eq!(
        d[at + e.layout.dispatch_at + 1..at + e.layout.dispatch_at + 4],
        [7, 8, 9]
    );
    // The USER_DATA block is untouched by the patch: V#, dispatch ptr, kernargs, FSI.
    let ud = at + 7 + 35;
    assert_eq!(d[ud + 1], GFX9.regs.user_data_0);
    assert_eq!(d[ud + 2..ud + 6], v.words());
    assert_eq!(
        d[ud + 6..ud + 12],
        [0x10_0040, 0, 0x10_0000, 0, 0x3000_0000, 0]
    );
    // A handle with the layout of a program without the scratch SGPRs points at the wrong
    // dwords: the header check refuses it instead of corrupting the list.
    let wrong = ExecCmd {
        layout: pm4::exec_layout(&GFX9, &Program::default()),
        dispatch: None,
        ..e
    };
    assert!(l.update_exec(&wrong, [1; 3], [1; 3]).is_err());
}

#[test]
fn sdma_sizes_and_patch() {
    let mut l: SdmaList<128, 8, 32> = SdmaList::new(&GFX11);
    l.copy(GpuVa(0x10_0000), GpuVa(0x20_0000), 0x80_0001)
        .unwrap();
    let s = l.signal(&sig(0x3000, true), 5).unwrap();
    let w = l.wait(&sig(0x4000, false), 6).unwrap();
    l.timestamp(&sig(0x5000, false)).unwrap();
    assert_eq!(l.packet_sizes(), &[5, 7, 7, 7, 5, 4, 4, 2, 6, 3]);
    assert_eq!(
        l.packets().map(<[u32]>::len).sum::<usize>(),
        l.as_dwords().len()
    );
    l.update_signal(&s, Some(&sig(0x6000, true)), Some(11))
        .unwrap();
    l.update_wait(&w, None, Some(12)).unwrap();
    let d = l.as_dwords();
    assert_eq!(d[s.offset as usize + 1], 0x6008);
    assert_eq!(d[s.offset as usize + 3], 11);
    assert_eq!(d[w.offset as usize + 3], 12);
    assert!(
        l.update_wait(
            &WaitCmd {
                offset: s.offset,
                engine: Engine::Sdma
            },
            None,
            Some(1)
        )
        .is_err()
    );
    let mut tiny: SdmaList<128, 8, 3> = SdmaList::new(&GFX11);
    assert_eq!(
        tiny.copy(GpuVa(0), GpuVa(0), 0x80_0000),
        Err(CmdError::TooManyPackets {
            needed: 4,
            capacity: 3
        })
    );
    assert!(tiny.is_empty());
}

/// `update_exec` refuses a handle that does not point at an exec command, or that runs past
/// the list, or dims the dispatch packet cannot hold, and writes nothing then; the same list
/// patched through a good handle matches a fresh build.
#[test]
fn update_exec_refusals_write_nothing() {
    let p = Program {
        dispatch: Some(DispatchInfo {
            packet_offset: 0x40,
            group_segment_size: 0,
            private_segment_size: 0,
        }),
        ..prog()
    };
    let mut l: Pm4List<256, 8> = Pm4List::new(&GFX11);
    l.wait(&sig(0x1000, false), 1).unwrap();
    let (e, _) = l.exec(&p, GpuVa(0x3000), [1, 2, 3], [4, 5, 6]).unwrap();
    let before: heapless::Vec<u32, 256> = l.as_dwords().iter().copied().collect();
    // Shifted onto the wait: DISPATCH_DIRECT's header is not where the handle says.
    let shifted = ExecCmd { offset: 0, ..e };
    assert!(matches!(
        l.update_exec(&shifted, [1; 3], [1; 3]),
        Err(CmdError::WrongPacket {
            expected: "DISPATCH_DIRECT",
            ..
        })
    ));
    let far = ExecCmd { offset: 250, ..e };
    assert!(matches!(
        l.update_exec(&far, [1; 3], [1; 3]),
        Err(CmdError::OutOfRange { .. })
    ));
    assert!(matches!(
        l.update_exec(&e, [1; 3], [0x1_0000, 1, 1]),
        Err(CmdError::Encode(EncodeError::ValueTooLarge { .. }))
    ));
    assert_eq!(l.as_dwords(), &before[..]);
    let w = l.update_exec(&e, [7, 8, 9], [10, 11, 12]).unwrap().unwrap();
    assert_eq!(w.addr, GpuVa(0x3040));
    let mut f: Pm4List<256, 8> = Pm4List::new(&GFX11);
    f.wait(&sig(0x1000, false), 1).unwrap();
    f.exec(&p, GpuVa(0x3000), [7, 8, 9], [10, 11, 12]).unwrap();
    assert_eq!(l.as_dwords(), f.as_dwords());
}
