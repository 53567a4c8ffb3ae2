use super::*;
use crate::arch::GFX11;

fn sig(mailbox: bool) -> SignalRef {
    SignalRef {
        addr: 0x1234_5678_9abc_de00,
        event_mailbox_ptr: if mailbox { 0x7fff_0000_0010 } else { 0 },
        event_id: if mailbox { 42 } else { 0 },
    }
}

#[test]
fn seed_headers() {
    let mut b = [0u32; 10];
    assert_eq!(wait(&mut b, &sig(false), 9), Ok(6));
    assert_eq!(
        b[..6],
        [
            0xD000_0008,
            0x9abc_de08,
            0x1234_5678,
            9,
            0xffff_ffff,
            0x0FFF_0004
        ]
    );
    assert_eq!(timestamp(&mut b, &sig(false)), Ok(3));
    assert_eq!(b[..3], [0x20D, 0x9abc_de20, 0x1234_5678]);
    assert_eq!(signal(&mut b, &GFX11, &sig(true), 5), Ok(10));
    assert_eq!(
        b,
        [
            0x3_0005,
            0x9abc_de08,
            0x1234_5678,
            5,
            0x3_0005,
            0x10,
            0x7fff,
            42,
            6,
            42
        ]
    );
}

#[test]
fn copy_splits() {
    let mut b = [0u32; 40];
    let n = copy(
        &mut b,
        &GFX11,
        GpuVa(0x2000_0000),
        GpuVa(0x1000_0000),
        0x40_0001,
    )
    .unwrap();
    assert_eq!(n, 24);
    assert_eq!(b[..5], [17, 0, COPY_GCR_INVALIDATE.raw(), 0, 0]);
    assert_eq!(COPY_GCR_INVALIDATE.raw(), 0xC3E0);
    assert_eq!(b[5..12], [1, 0x3f_ffff, 0, 0x1000_0000, 0, 0x2000_0000, 0]);
    assert_eq!(b[12..19], [1, 0, 0, 0x1040_0000, 0, 0x2040_0000, 0]);
    assert_eq!(b[19..24], [17, 0, 0x8040, 0, 0]);
    let bb = b;
    let v: heapless::Vec<_, 8> = decode(&bb[..n]).map(|r| r.unwrap().1).collect();
    assert_eq!(v.len(), 4);
    assert_eq!(
        v[0],
        SdmaPacket::GcrReq(copy_gcr(COPY_GCR_INVALIDATE, GcrPlacement::Seed))
    );
    assert_eq!(copy(&mut b, &GFX11, GpuVa(0), GpuVa(0), 0), Ok(10));
    assert!(copy(&mut b, &GFX11, GpuVa(u64::MAX), GpuVa(0), 2).is_err());
}

#[test]
fn write_len_needs_dw3() {
    assert_eq!(
        packet_len(&[2, 0, 0]),
        Err(DecodeErrorKind::Truncated {
            needed: 4,
            available: 3
        })
    );
    assert_eq!(packet_len(&[2, 0, 0, 1]), Ok(6));
    assert_eq!(packet_len(&[0]), Ok(1));
    assert_eq!(packet_len(&[0x0003_0000]), Ok(4));
    assert_eq!(
        packet_len(&[0x0000_0101]),
        Err(DecodeErrorKind::UnknownOpcode {
            opcode: 1,
            sub_op: 1
        })
    );
}

#[test]
fn gcr_roundtrip() {
    let g = GcrReq {
        sub_op: 1,
        base_va: 0xffff_ffff_ff80,
        limit_va: 0x1234_5678_9a80,
        gcr: GcrCntl(0x7_ffff),
        vmid: 7,
    };
    let mut b = [0u32; 5];
    gcr_req(&mut b, &g).unwrap();
    assert_eq!(decode_one(&b).unwrap(), (SdmaPacket::GcrReq(g), 5));
}

#[test]
fn gfx9_copies_carry_no_gcr_req() {
    use crate::arch::GFX9;
    let (mut a, mut b) = ([0u32; 64], [0u32; 64]);
    let dst = GpuVa(0x1_0000);
    let src = GpuVa(0x2_0000);
    let n9 = copy_with(&mut a, &CopyOptions::hardware(&GFX9), dst, src, 4096).unwrap();
    let n11 = copy_with(&mut b, &CopyOptions::hardware(&GFX11), dst, src, 4096).unwrap();
    // Same layout (patch offsets do not depend on the family) ...
    assert_eq!(n9, n11);
    let mut at = 0;
    let mut packets = 0;
    while at < n9 {
        let (p, len) = decode_one(&a[at..n9]).unwrap();
        assert!(!matches!(p, SdmaPacket::GcrReq(_)), "GCR_REQ on SDMA v4");
        packets += 1;
        at += len;
    }
    // ... and gfx11 keeps both GCR_REQs.
    let (first, _) = decode_one(&b[..n11]).unwrap();
    assert!(matches!(first, SdmaPacket::GcrReq(_)));
    assert_eq!(packets, 3, "NOP, COPY_LINEAR, NOP");
}
