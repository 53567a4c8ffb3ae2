use super::*;

/// Header bits as hsa.h places them, and tinygrad 0.14's AQL_HDR (barrier, system
/// acquire and release) for a kernel dispatch: 0x1502.
#[test]
fn header_bits_are_hsa_h() {
    assert_eq!(Header::ordered(TYPE_KERNEL_DISPATCH).raw(), 0x1502);
    assert_eq!(Header::ordered(TYPE_VENDOR_SPECIFIC).word0(1), 0x0001_1500);
    let none = Header {
        ty: TYPE_BARRIER_AND,
        barrier: false,
        acquire: FenceScope::None,
        release: FenceScope::Agent,
    };
    assert_eq!(none.raw(), 3 | 1 << 11);
    assert_eq!(Header::type_of(0xffff_1502), TYPE_KERNEL_DISPATCH);
}

/// The PM4_IB packet is what ROCR's ExecutePM4 and tinygrad's `_pm4_pkt` write: the
/// INDIRECT_BUFFER in dwords 1..=4, 0xA in dword 5, the completion signal in 14..=15.
#[test]
fn pm4_ib_packet_layout() {
    let w = pm4_ib(
        Header::ordered(TYPE_VENDOR_SPECIFIC),
        GpuVa(0x1234_5678_9a00),
        17,
        0xdead_beef_0040,
    )
    .unwrap();
    assert_eq!(w[0], 0x0001_1500);
    assert_eq!(w[1], 0xC002_3F00, "PACKET3(INDIRECT_BUFFER, 2)");
    assert_eq!([w[2], w[3]], [0x5678_9a00, 0x1234]);
    assert_eq!(w[4], 17 | 1 << 23, "size | VALID");
    assert_eq!(w[5], 0xA);
    assert_eq!([w[14], w[15]], [0xbeef_0040, 0xdead]);
    assert!(pm4_ib(Header::ordered(0), GpuVa(0), 1 << 20, 0).is_err());
}

/// A dispatch packet keeps every field of `p` and carries the header and dimensions.
#[test]
fn kernel_dispatch_layout() {
    let p = DispatchPacket {
        workgroup_size_x: 64,
        workgroup_size_y: 2,
        workgroup_size_z: 1,
        grid_size_x: 640,
        grid_size_y: 4,
        grid_size_z: 1,
        private_segment_size: 16,
        group_segment_size: 1024,
        kernel_object: 0x7000_0000_0100,
        kernarg_address: 0x7000_0010_0000,
        completion_signal: 0x7000_0020_0040,
        ..DispatchPacket::default()
    };
    let w = kernel_dispatch(Header::ordered(0), 2, &p).unwrap();
    assert_eq!(w[0], 0x1502 | 2 << 16);
    assert_eq!(w[1], 64 | 2 << 16);
    assert_eq!(w[2], 1);
    assert_eq!([w[3], w[4], w[5]], [640, 4, 1]);
    assert_eq!([w[6], w[7]], [16, 1024]);
    assert_eq!([w[8], w[9]], [0x0000_0100, 0x7000]);
    assert_eq!([w[10], w[11]], [0x0010_0000, 0x7000]);
    assert_eq!([w[14], w[15]], [0x0020_0040, 0x7000]);
    assert!(kernel_dispatch(Header::ordered(0), 0, &p).is_err());
    assert!(kernel_dispatch(Header::ordered(0), 4, &p).is_err());
}

#[test]
fn barrier_and_layout() {
    let w = barrier_and(
        Header::ordered(0),
        [0x10_0000_0040, 0, 0, 0, 0x20_0000_0080],
        0,
    );
    assert_eq!(w[0], 0x1503);
    assert_eq!([w[2], w[3]], [0x40, 0x10]);
    assert_eq!([w[10], w[11]], [0x80, 0x20]);
    assert_eq!([w[14], w[15]], [0, 0]);
}

#[test]
fn amd_queue_fields() {
    let mut b = [0xffu8; 300];
    let q = AmdQueueInit {
        ring: GpuVa(0x1000),
        packets: 1024,
        max_cu_id: 7,
        max_wave_id: 31,
        tmpring_size: 0x1234,
        scratch_rsrc: [1, 2, 3, 4],
        scratch_base: GpuVa(0x2000),
        scratch_len: 0x3000,
        lane_bytes: 4096,
        properties: queue::PROPERTIES_IS_PTR64,
    };
    amd_queue(&mut b, &q).unwrap();
    let u32_at = |o: usize| u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
    assert_eq!(u32_at(queue::READ_DISPATCH_ID_FIELD_BASE_BYTE_OFFSET), 128);
    assert_eq!(u32_at(queue::COMPUTE_TMPRING_SIZE), 0x1234);
    assert_eq!(u32_at(queue::SCRATCH_RESOURCE_DESCRIPTOR + 12), 4);
    assert_eq!(u32_at(queue::SCRATCH_BACKING_MEMORY_LOCATION), 0x2000);
    assert_eq!(u32_at(queue::SCRATCH_WAVE64_LANE_BYTE_SIZE), 4096);
    assert_eq!(u32_at(queue::QUEUE_PROPERTIES), 2);
    assert_eq!(u32_at(queue::READ_DISPATCH_ID), 0);
    assert_eq!(b[256], 0xff, "nothing past the structure");
    assert!(amd_queue(&mut [0u8; 255], &q).is_err());
}
