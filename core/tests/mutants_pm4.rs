//! Cases `cargo mutants` over `core/src/pm4/` and the doc review showed untested: the variable-length
//! packets at the largest body a type-3 header's 14-bit count describes (0x4000 dwords, count
//! 0x3FFF; only NOP reserves count 0x3FFF for its header-only form).

use hcq_core::addr::GpuVa;
use hcq_core::packet::EncodeError;
use hcq_core::pm4::{self, Pm4Packet, WriteDataCntl};

const MAX_BODY: usize = 0x4000;

/// The header's count field (bits 29:16).
fn count(header: u32) -> u32 {
    (header >> 16) & 0x3FFF
}

#[test]
fn set_reg_packets_take_up_to_0x3fff_values_and_refuse_0x4000() {
    type Enc = fn(&mut [u32], u32, &[u32]) -> Result<usize, EncodeError>;
    let encoders: [(Enc, u32); 2] = [
        (pm4::set_sh_reg, pm4::op::SET_SH_REG),
        (pm4::set_uconfig_reg, pm4::op::SET_UCONFIG_REG),
    ];
    let values: Vec<u32> = (0..MAX_BODY as u32).collect();
    let mut buf = vec![0u32; MAX_BODY + 2];
    for (enc, opcode) in encoders {
        let most = &values[..MAX_BODY - 1];
        assert_eq!(enc(&mut buf, 0x10, most), Ok(MAX_BODY + 1));
        assert_eq!(count(buf[0]), 0x3FFF);
        assert_eq!((buf[0] >> 8) & 0xFF, opcode);
        let (pk, n) = pm4::decode_one(&buf[..MAX_BODY + 1]).unwrap();
        assert_eq!(n, MAX_BODY + 1);
        match pk {
            Pm4Packet::SetShReg { reg_offset, values }
            | Pm4Packet::SetUconfigReg { reg_offset, values } => {
                assert_eq!((reg_offset, values), (0x10, most));
            }
            other => panic!("decoded {other:?}"),
        }
        assert_eq!(
            enc(&mut buf, 0x10, &values),
            Err(EncodeError::ValueTooLarge {
                field: "register count",
                value: 0x4000,
                max: 0x3FFF,
            })
        );
    }
}

#[test]
fn write_data_takes_up_to_0x3ffd_dwords_and_refuses_0x3ffe() {
    let data: Vec<u32> = (0..MAX_BODY as u32).collect();
    let mut buf = vec![0u32; MAX_BODY + 4];
    let ctl = WriteDataCntl(0);
    let most = &data[..MAX_BODY - 3];
    assert_eq!(
        pm4::write_data(&mut buf, ctl, GpuVa(0x1000), most),
        Ok(MAX_BODY + 1)
    );
    assert_eq!(count(buf[0]), 0x3FFF);
    let (pk, n) = pm4::decode_one(&buf[..MAX_BODY + 1]).unwrap();
    assert_eq!(n, MAX_BODY + 1);
    assert_eq!(
        pk,
        Pm4Packet::WriteData {
            control: ctl,
            addr: GpuVa(0x1000),
            data: most
        }
    );
    assert_eq!(
        pm4::write_data(&mut buf, ctl, GpuVa(0x1000), &data[..MAX_BODY - 2]),
        Err(EncodeError::ValueTooLarge {
            field: "write_data length",
            value: 0x3FFE,
            max: 0x3FFD,
        })
    );
}

/// The decoder prints register values as a comma-separated list, one separator fewer than values,
/// with the absolute register (offset + the window's start) next to the offset.
#[test]
fn set_reg_display_lists_values_with_commas() {
    let cases: [(&[u32], &str); 3] = [
        (&[0x1], "[0x1]"),
        (&[0x1, 0x2], "[0x1, 0x2]"),
        (&[0x1, 0x2, 0x3], "[0x1, 0x2, 0x3]"),
    ];
    for (values, list) in cases {
        let mut buf = [0u32; 8];
        let n = pm4::set_sh_reg(&mut buf, 0x10, values).unwrap();
        let (pk, _) = pm4::decode_one(&buf[..n]).unwrap();
        assert_eq!(
            pk.to_string(),
            format!("SET_SH_REG reg_offset=0x10 reg=0x2c10 values={list}")
        );
        let n = pm4::set_uconfig_reg(&mut buf, 0x10, values).unwrap();
        let (pk, _) = pm4::decode_one(&buf[..n]).unwrap();
        assert_eq!(
            pk.to_string(),
            format!("SET_UCONFIG_REG reg_offset=0x10 reg=0xc010 values={list}")
        );
    }
}

/// INDIRECT_BUFFER's IB_SIZE is 20 bits: 0xF_FFFF dwords encode (with VALID, bit 23), 2^20 is
/// refused.
#[test]
fn indirect_buffer_size_is_20_bits() {
    let mut buf = [0u32; 4];
    assert_eq!(
        pm4::indirect_buffer(&mut buf, GpuVa(0x1_2345_6700), 0xF_FFFF),
        Ok(4)
    );
    assert_eq!(buf, [0xC002_3F00, 0x2345_6700, 0x1, 0x008F_FFFF]);
    assert_eq!(
        pm4::indirect_buffer(&mut buf, GpuVa(0x1000), 1 << 20),
        Err(EncodeError::ValueTooLarge {
            field: "indirect_buffer size_dwords",
            value: 1 << 20,
            max: 0xF_FFFF,
        })
    );
}

/// The dispatch packet holds workgroup sizes in u16 and grid sizes (global * local) in u32: on
/// every axis 0xFFFF and 0x1_0001 * 0xFFFF = u32::MAX fit, one more of either is refused.
#[test]
fn dispatch_dims_fit_u16_workgroups_and_u32_grids_on_every_axis() {
    let wg = [
        "local[0] (dispatch packet workgroup_size_x)",
        "local[1] (dispatch packet workgroup_size_y)",
        "local[2] (dispatch packet workgroup_size_z)",
    ];
    let grid = [
        "global[0]*local[0] (dispatch packet grid_size_x)",
        "global[1]*local[1] (dispatch packet grid_size_y)",
        "global[2]*local[2] (dispatch packet grid_size_z)",
    ];
    let on_axis = |i: usize, v: u32| {
        let mut a = [1u32; 3];
        a[i] = v;
        a
    };
    for i in 0..3 {
        let ok = pm4::check_dispatch_dims(on_axis(i, 0x1_0001), on_axis(i, 0xFFFF));
        assert_eq!(ok, Ok(()));
        assert_eq!(
            pm4::check_dispatch_dims([1; 3], on_axis(i, 0x1_0000)),
            Err(EncodeError::ValueTooLarge {
                field: wg[i],
                value: 0x1_0000,
                max: 0xFFFF
            })
        );
        assert_eq!(
            pm4::check_dispatch_dims(on_axis(i, 0x1_0002), on_axis(i, 0xFFFF)),
            Err(EncodeError::ValueTooLarge {
                field: grid[i],
                value: 0x1_0002 * 0xFFFF,
                max: 0xFFFF_FFFF
            })
        );
    }
}
