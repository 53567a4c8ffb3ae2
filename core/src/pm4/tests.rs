use super::*;
use crate::arch::{GFX9, GFX11};

fn sig(mailbox: bool) -> SignalRef {
    SignalRef {
        addr: 0x1234_5678_9abc_de00,
        event_mailbox_ptr: if mailbox { 0x7fff_0000_0010 } else { 0 },
        event_id: if mailbox { 42 } else { 0 },
    }
}

#[test]
fn headers() {
    assert_eq!(Pm4Header::packet3(op::RELEASE_MEM, 7).raw(), 0xC006_4900);
    assert_eq!(Pm4Header::packet3(op::NOP, 0x4000).raw(), NOP_1DW);
    assert_eq!(packet_len(NOP_1DW), Ok(1));
    assert_eq!(packet_len(0xC006_4900), Ok(8));
    assert_eq!(
        packet_len(0x8000_0000),
        Err(DecodeErrorKind::NotType3 {
            header: 0x8000_0000
        })
    );
    assert_eq!(
        packet_len(0xC005_4900),
        Err(DecodeErrorKind::BadCount {
            opcode: 0x49,
            body_dwords: 6
        })
    );
    assert_eq!(
        packet_len(0xC000_2300),
        Err(DecodeErrorKind::UnknownOpcode {
            opcode: 0x23,
            sub_op: 0
        })
    );
}

#[test]
fn wait_exact() {
    let mut b = [0u32; 7];
    assert_eq!(wait(&mut b, &sig(false), 7), Ok(7));
    assert_eq!(
        b,
        [
            0xC005_3C00,
            0x15,
            0x9abc_de08,
            0x1234_5678,
            7,
            0xffff_ffff,
            4
        ]
    );
    let mut small = [0u32; 6];
    assert_eq!(
        wait(&mut small, &sig(false), 7),
        Err(EncodeError::BufferTooSmall {
            needed: 7,
            available: 6
        })
    );
}

#[test]
fn barrier_exact() {
    let mut b = [0u32; 15];
    assert_eq!(memory_barrier(&mut b, &GFX11), Ok(15));
    assert_eq!(
        b,
        [
            0xC005_3C00,
            0x43,
            0xe26,
            0xe27,
            0xffff_ffff,
            0xffff_ffff,
            0x20,
            0xC006_5800,
            0,
            0xffff_ffff,
            0xffff_ffff,
            0,
            0,
            0,
            0xC3F1
        ]
    );
    let mut b9 = [0u32; 14];
    assert_eq!(memory_barrier(&mut b9, &GFX9), Ok(14));
    assert_eq!(b9[7], 0xC005_5800);
    assert_eq!(
        b9[8],
        (1 << 29) | (1 << 27) | (1 << 23) | (1 << 22) | (1 << 18)
    );
    assert_eq!(b9[13], 0xA);
}

#[test]
fn signal_exact() {
    let mut b = [0u32; 16];
    assert_eq!(signal(&mut b, &GFX11, &sig(true), 0x1_0000_0005), Ok(16));
    let ev = 0x14
        | (5 << 8)
        | (1 << 12)
        | (1 << 13)
        | (1 << 14)
        | (1 << 15)
        | (1 << 20)
        | (1 << 21)
        | (1 << 22);
    let dc = (1 << 29) | (2 << 24);
    assert_eq!(
        b[..8],
        [0xC006_4900, ev, dc, 0x9abc_de08, 0x1234_5678, 5, 1, 0]
    );
    assert_eq!(b[8..], [0xC006_4900, ev, dc, 0x10, 0x7fff, 42, 0, 42]);
    assert_eq!(signal(&mut b, &GFX11, &sig(false), 3), Ok(8));
    assert_eq!(
        signal(&mut b[..15], &GFX11, &sig(true), 3),
        Err(EncodeError::BufferTooSmall {
            needed: 16,
            available: 15
        })
    );
}

#[test]
fn exec_layout_matches_seed() {
    let prog = Program {
        prog_addr: GpuVa(0x7f00_1234_5600),
        scratch_addr: GpuVa(0x7e00_0000_0000),
        tmpring_size: 0x1234,
        rsrc1: 0x11,
        rsrc2: 0x22,
        rsrc3: 0,
        dispatch: None,
        private_segment_buffer: None,
        flat_scratch_init: None,
    };
    let mut b = [0u32; 80];
    let n = exec(
        &mut b,
        &GFX11,
        &prog,
        GpuVa(0x5555_0000_1000),
        [4, 5, 6],
        [32, 2, 1],
    )
    .unwrap();
    assert_eq!(n, 67);
    assert_eq!(b[60], 0xC003_1500);
    assert_eq!(b[52..55], [32, 2, 1]);
    assert_eq!(b[61..64], [4, 5, 6]);
    assert_eq!(b[64], 0x8005);
    assert_eq!(b[65..67], [0xC000_4600, 0x407]);
    assert_eq!(
        b[8..16],
        [0xC006_7600, 0x20c, 0x0012_3456, 0x7f, 0, 0, 0, 0x7e]
    );
    let l = exec_layout(&GFX11, &prog);
    assert_eq!((l.local_at, l.dispatch_at), (52, 60));
    let dp = Program {
        dispatch: Some(DispatchInfo {
            packet_offset: 0x40,
            group_segment_size: 0,
            private_segment_size: 0,
        }),
        ..prog
    };
    assert_eq!(
        exec(&mut b, &GFX11, &dp, GpuVa(0x1000), [1; 3], [1; 3]),
        Ok(69)
    );
    assert_eq!(b[43..49], [0xC004_7600, 0x240, 0x1040, 0, 0x1000, 0]);
    assert_eq!(b[62], 0xC003_1500);
    // Decode the whole thing back.
    let pk: heapless::Vec<_, 32> = decode(&b[..69]).map(|r| r.unwrap().1).collect();
    assert_eq!(pk.len(), 13);
    assert!(matches!(pk[12], Pm4Packet::EventWrite(_)));
}

/// gfx90a-style programs: the private segment buffer first, then the dispatch and kernarg
/// pointers, then flat scratch init; every patchable offset follows the longer USER_DATA.
#[test]
fn exec_with_private_segment_buffer() {
    let v = ScratchRsrc::new(&GFX9, GpuVa(0x7e00_0000_0000), 0x10_0000, false).unwrap();
    let base = Program {
        prog_addr: GpuVa(0x7f00_1234_5600),
        scratch_addr: GpuVa(0x7e00_0000_0000),
        private_segment_buffer: Some(v),
        // ACCUM_OFFSET 3: AGPRs from v16.
        rsrc3: 3,
        ..Program::default()
    };
    let dp = DispatchInfo {
        packet_offset: 0x40,
        group_segment_size: 0,
        private_segment_size: 68,
    };
    let ka = GpuVa(0x5555_0000_1000);
    // (program, USER_DATA values exec must write)
    let hv = |v: &[u32]| heapless::Vec::<u32, 10>::from_slice(v).unwrap();
    let w = v.words();
    let cases = [
        (base, hv(&[w[0], w[1], w[2], w[3], 0x1000, 0x5555])),
        (
            Program {
                dispatch: Some(dp),
                ..base
            },
            hv(&[w[0], w[1], w[2], w[3], 0x1040, 0x5555, 0x1000, 0x5555]),
        ),
        (
            Program {
                flat_scratch_init: Some(GpuVa(0x7e00_0000_0000)),
                ..base
            },
            hv(&[w[0], w[1], w[2], w[3], 0x1000, 0x5555, 0, 0x7e00]),
        ),
        (
            Program {
                dispatch: Some(dp),
                flat_scratch_init: Some(GpuVa(0x7e00_0000_0000)),
                ..base
            },
            hv(&[
                w[0], w[1], w[2], w[3], 0x1040, 0x5555, 0x1000, 0x5555, 0, 0x7e00,
            ]),
        ),
        (
            Program {
                private_segment_buffer: None,
                flat_scratch_init: Some(GpuVa(0x7e00_0000_0000)),
                ..base
            },
            hv(&[0x1000, 0x5555, 0, 0x7e00]),
        ),
    ];
    for (prog, user) in cases {
        let mut b = [0xdead_beefu32; 96];
        let n = exec(&mut b, &GFX9, &prog, ka, [4, 5, 6], [64, 1, 1]).unwrap();
        let l = exec_layout(&GFX9, &prog);
        assert_eq!(n, l.dwords);
        assert_eq!(exec_dwords(&GFX9, &prog), n);
        assert_eq!(prog.user_data_dwords(), user.len());
        assert!(user.len() <= EXEC_MAX_USER_DATA);
        // 7-dword ACQUIRE_MEM, the 35-dword register block, then USER_DATA.
        let ud = 7 + 35;
        assert_eq!(n, ud + 2 + user.len() + 20);
        assert_eq!(
            b[ud],
            Pm4Header::packet3(op::SET_SH_REG, 1 + user.len() as u32).raw()
        );
        assert_eq!(b[ud + 1], GFX9.regs.user_data_0);
        assert_eq!(b[ud + 2..ud + 2 + user.len()], user[..]);
        assert_eq!(b[n], 0xdead_beef, "exec wrote past its length");
        // The patchable offsets land on START/NUM_THREAD and DISPATCH_DIRECT.
        assert_eq!(b[l.start_at], Pm4Header::packet3(op::SET_SH_REG, 9).raw());
        assert_eq!(b[l.start_at + 1], GFX9.regs.start_x);
        assert_eq!(b[l.local_at..l.local_at + 3], [64, 1, 1]);
        assert_eq!(b[l.dispatch_at], 0xC003_1500);
        assert_eq!(b[l.dispatch_at + 1..l.dispatch_at + 4], [4, 5, 6]);
        // ... and the pointer offsets on the kernarg and dispatch pointers' USER_DATA values.
        assert_eq!(b[l.kernargs_at..l.kernargs_at + 2], [0x1000, 0x5555]);
        match (prog.dispatch, l.dispatch_ptr_at) {
            (Some(_), Some(at)) => assert_eq!(b[at..at + 2], [0x1040, 0x5555]),
            (None, None) => {}
            other => panic!("dispatch pointer layout {other:?}"),
        }
        // The decoder reads it back: the USER_DATA SET_SH_REG with every value.
        // On gfx9 the SE4..SE7 slot carries COMPUTE_PGM_RSRC3 (ACCUM_OFFSET) and a NOP.
        let pk: heapless::Vec<_, 32> = decode(&b[..n]).map(|r| r.unwrap().1).collect();
        assert_eq!(pk.len(), 14);
        let Pm4Packet::SetShReg { reg_offset, values } = pk[7] else {
            panic!("{:?}", pk[7]);
        };
        assert_eq!((reg_offset, values), (0x22d, &[prog.rsrc3][..]));
        assert!(matches!(pk[8], Pm4Packet::Nop { .. }), "{:?}", pk[8]);
        let Pm4Packet::SetShReg { reg_offset, values } = pk[9] else {
            panic!("{:?}", pk[9]);
        };
        assert_eq!(reg_offset, GFX9.regs.user_data_0);
        assert_eq!(values, &user[..]);
        assert!(matches!(pk[12], Pm4Packet::DispatchDirect(_)));
        // A buffer one dword short is refused.
        let mut small = [0u32; 96];
        assert_eq!(
            exec(&mut small[..n - 1], &GFX9, &prog, ka, [1; 3], [1; 3]),
            Err(EncodeError::BufferTooSmall {
                needed: n,
                available: n - 1
            })
        );
    }
}

#[test]
fn nops() {
    let mut b = [7u32; 5];
    assert_eq!(nop(&mut b, 1), Ok(1));
    assert_eq!(b[0], NOP_1DW);
    assert_eq!(nop(&mut b, 4), Ok(4));
    assert_eq!(b[..4], [0xC002_1000, 0, 0, 0]);
    assert!(nop(&mut b, 0).is_err());
    assert_eq!(decode_one(&b[..4]).unwrap().1, 4);
}

#[test]
fn decode_errors_carry_index() {
    let mut b = [0u32; 20];
    let n = wait(&mut b, &sig(false), 1).unwrap();
    b[n] = 0xC006_4900; // RELEASE_MEM cut short
    let r: heapless::Vec<_, 4> = decode(&b[..n + 3]).collect();
    assert_eq!(r.len(), 2);
    assert_eq!(
        r[1],
        Err(DecodeError {
            at: 7,
            kind: DecodeErrorKind::Truncated {
                needed: 8,
                available: 3
            }
        })
    );
}

#[test]
fn value_positions_are_where_the_encoders_put_them() {
    let sig = SignalRef::new(0x1234_5678_9000);
    let mut b = [0u32; 16];
    wait(&mut b, &sig, 0xabcd).unwrap();
    assert_eq!(b[WAIT_REG_MEM_REFERENCE_AT], 0xabcd);
    signal(&mut b, &GFX11, &sig, 0x1_0000_0002).unwrap();
    assert_eq!(b[RELEASE_MEM_DATA_AT..RELEASE_MEM_DATA_AT + 2], [2, 1]);
}

#[test]
fn releases_run_on_the_selected_xccs_only() {
    let sig = SignalRef::new(0x1234_5678_9000);
    let mut src = [0u32; 64];
    let mut n = wait(&mut src, &sig, 3).unwrap();
    let s = signal(&mut src[n..], &GFX9, &sig, 4).unwrap();
    let sig_at = n;
    n += s;
    n += wait(&mut src[n..], &sig, 5).unwrap();
    let mut out = [0u32; 80];
    let m = releases_on_xccs(&src[..n], &mut out, 1).unwrap();
    assert_eq!(m, n + PRED_EXEC_DWORDS);
    // The wait stays as it was, for every XCC.
    assert_eq!(out[..sig_at], src[..sig_at]);
    // One PRED_EXEC of XCC 0 over the signal's RELEASE_MEMs (value and interrupt).
    assert_eq!(out[sig_at], 0xC000_2300);
    assert_eq!(out[sig_at + 1], 1 << 24 | s as u32);
    assert_eq!(
        out[sig_at + 2..sig_at + 2 + s],
        src[sig_at..sig_at + s],
        "the RELEASE_MEMs follow unchanged"
    );
    assert_eq!(out[sig_at + 2 + s..m], src[sig_at + s..n]);
    // No room, a cut-off packet and an empty mask are errors, never a partial copy.
    assert!(releases_on_xccs(&src[..n], &mut out[..n], 1).is_err());
    assert!(releases_on_xccs(&src[..sig_at + 3], &mut out, 1).is_err());
    assert!(pred_exec(&mut out, 0, 4).is_err());
    assert!(pred_exec(&mut out, 1, 0x4000).is_err());
}
