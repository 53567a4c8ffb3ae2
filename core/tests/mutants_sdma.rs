//! Cases `cargo mutants` over `core/src/sdma/` showed untested: GCR_REQ's field limits at their
//! exact boundaries and the SDMA_WRITE data list's separators in the decoder's `Display`.

use hcq_core::addr::GpuVa;
use hcq_core::packet::EncodeError;
use hcq_core::pm4::GcrCntl;
use hcq_core::sdma::{self, GcrReq, SdmaPacket};

const VA_MAX: u64 = (1 << 48) - 1;
const GCR_MAX: u32 = (1 << 19) - 1;

fn gcr(base_va: u64, limit_va: u64, cntl: u32) -> GcrReq {
    GcrReq {
        sub_op: 0,
        base_va,
        limit_va,
        gcr: GcrCntl(cntl),
        vmid: 0,
    }
}

/// GCR_REQ carries 48-bit VAs (bits 47:7 in two dwords) and a 19-bit GCR_CNTL (16 bits in dw2,
/// 3 in dw3): the largest value of each encodes, one more is refused with the field's limit.
#[test]
fn gcr_req_accepts_each_field_up_to_its_width_and_refuses_one_more() {
    let cases: [(&str, GcrReq, GcrReq, u64); 3] = [
        (
            "gcr_req base_va",
            gcr(VA_MAX, 0, 0),
            gcr(VA_MAX + 1, 0, 0),
            VA_MAX,
        ),
        (
            "gcr_req limit_va",
            gcr(0, VA_MAX, 0),
            gcr(0, VA_MAX + 1, 0),
            VA_MAX,
        ),
        (
            "gcr_req gcr_cntl",
            gcr(0, 0, GCR_MAX),
            gcr(0, 0, GCR_MAX + 1),
            GCR_MAX.into(),
        ),
    ];
    for (field, fits, too_big, max) in cases {
        let mut buf = [0u32; 5];
        assert_eq!(sdma::gcr_req(&mut buf, &fits), Ok(5), "{field}");
        assert_eq!(
            sdma::gcr_req(&mut buf, &too_big),
            Err(EncodeError::ValueTooLarge {
                field,
                value: max + 1,
                max
            }),
            "{field}"
        );
    }
}

#[test]
fn gcr_req_at_its_limits_packs_every_bit_and_decodes_back() {
    let p = GcrReq {
        sub_op: 1,
        base_va: VA_MAX,
        limit_va: VA_MAX,
        gcr: GcrCntl(GCR_MAX),
        vmid: 15,
    };
    let mut buf = [0u32; 5];
    sdma::gcr_req(&mut buf, &p).unwrap();
    assert_eq!(
        buf,
        [
            0x0000_0111,
            0xffff_ff80,
            0xffff_ffff,
            0xffff_ff87,
            0x0f00_ffff
        ]
    );
    let (pk, n) = sdma::decode_one(&buf).unwrap();
    assert_eq!(n, 5);
    let want = GcrReq {
        base_va: VA_MAX & !0x7f,
        limit_va: VA_MAX & !0x7f,
        ..p
    };
    assert_eq!(pk, SdmaPacket::GcrReq(want));
}

/// The decoder prints SDMA_WRITE's data as a comma-separated list; a one-, two- and three-dword
/// write each print exactly one separator fewer than dwords.
#[test]
fn sdma_write_display_separates_data_dwords_with_commas() {
    let cases: [(&[u32], &str); 3] = [
        (&[0x1], "data=[0x1]"),
        (&[0x1, 0x2], "data=[0x1, 0x2]"),
        (&[0x1, 0x2, 0x3], "data=[0x1, 0x2, 0x3]"),
    ];
    for (data, want) in cases {
        let mut buf = [0u32; 8];
        let n = sdma::write(&mut buf, GpuVa(0x1000), data).unwrap();
        let (pk, _) = sdma::decode_one(&buf[..n]).unwrap();
        let text = pk.to_string();
        assert!(text.starts_with("SDMA_WRITE dst=0x1000"), "{text}");
        assert!(text.ends_with(want), "{text} should end with {want}");
    }
}
