//! Cases `cargo mutants` over `core/src/sdma/` showed untested: GCR_REQ, CONST_FILL and WRITE
//! limits at their exact boundaries, the HDP flush packet's dwords, and the SDMA_WRITE data list's
//! separators in the decoder's `Display`.

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

/// CONST_FILL takes a nonzero multiple of 4 bytes up to 2^30 (the 30-bit count is bytes - 1);
/// anything else is refused naming the rule and the 2^30 limit.
#[test]
fn const_fill_takes_nonzero_dword_multiples_up_to_2_pow_30() {
    let mut buf = [0u32; 5];
    for (bytes, count) in [(4u64, 3u32), (0x100, 0xff), (1 << 30, (1 << 30) - 1)] {
        assert_eq!(
            sdma::const_fill(&mut buf, GpuVa(0x12_3456_7800), 0xdead_beef, bytes),
            Ok(5)
        );
        // op 11, FILLSIZE 2 (dword) in bits 31:30.
        assert_eq!(buf, [0x8000_000b, 0x3456_7800, 0x12, 0xdead_beef, count]);
    }
    let rule = "const_fill bytes (must be a nonzero multiple of 4)";
    let cases = [(0, rule), (6, rule), ((1 << 30) + 4, "const_fill bytes")];
    for (bytes, field) in cases {
        assert_eq!(
            sdma::const_fill(&mut buf, GpuVa(0x1000), 0, bytes),
            Err(EncodeError::ValueTooLarge {
                field,
                value: bytes,
                max: 1 << 30
            }),
            "{bytes:#x}"
        );
    }
}

/// A linear WRITE carries 1..=2^20 dwords (count = dwords - 1 in 20 bits).
#[test]
#[cfg_attr(
    miri,
    ignore = "encodes 4 MiB of dwords (~140 s of CI's miri step); plain bounds arithmetic, run natively"
)]
fn sdma_write_takes_up_to_2_pow_20_dwords() {
    let data = vec![7u32; (1 << 20) + 1];
    let mut buf = vec![0u32; (1 << 20) + 5];
    assert_eq!(
        sdma::write(&mut buf, GpuVa(0x1000), &data[..1 << 20]),
        Ok((1 << 20) + 4)
    );
    assert_eq!(buf[..4], [0x0000_0002, 0x1000, 0, 0xf_ffff]);
    assert_eq!(
        sdma::write(&mut buf, GpuVa(0x1000), &data),
        Err(EncodeError::ValueTooLarge {
            field: "sdma write length",
            value: (1 << 20) + 1,
            max: 1 << 20
        })
    );
}

/// The kernel's `sdma_v6_0_ring_emit_hdp_flush`: POLL_REGMEM with HDP_FLUSH and FUNC=equal, the
/// DONE register's byte offset in dw1 and REQ's in dw2, ref = mask, interval 10, retry 0xfff.
#[test]
fn hdp_flush_writes_the_kernels_poll_regmem() {
    let arch = &hcq_core::arch::GFX11;
    let mask = 1 << 10;
    let mut buf = [0u32; 6];
    assert_eq!(sdma::hdp_flush(&mut buf, arch, mask), Ok(6));
    assert_eq!(
        buf,
        [
            0x3400_0008,
            arch.hdp_flush_done << 2,
            arch.hdp_flush_req << 2,
            mask,
            mask,
            0x0fff_000a
        ]
    );
    // GFX11's NBIO v4.3 HDP_FLUSH registers: DONE 0xe27 and REQ 0xe26 (dword offsets).
    assert_eq!((buf[1], buf[2]), (0x389c, 0x3898));
}

/// COPY_LINEAR's count is 30 bits (bytes - 1), so a copy's chunk size is 1..=2^30; 0 and
/// 2^30 + 1 are refused, each error naming the 2^30 limit.
#[test]
fn copy_chunk_size_is_1_to_2_pow_30_bytes() {
    let opts = |max_copy_bytes| sdma::CopyOptions {
        gcr: sdma::GcrPlacement::Hardware,
        max_copy_bytes,
    };
    let mut buf = [0u32; 5 + 7 + 7 + 5];
    // 2^30 + 1 bytes at the largest chunk: one full COPY_LINEAR, then a 1-byte one.
    let n = sdma::copy_with(
        &mut buf,
        &opts(1 << 30),
        GpuVa(0x8000_0000),
        GpuVa(0x1000),
        (1 << 30) + 1,
    );
    assert_eq!(n, Ok(24));
    assert_eq!(buf[5..7], [0x0000_0001, 0x3fff_ffff]);
    assert_eq!(buf[12..14], [0x0000_0001, 0]);
    assert_eq!(buf[15..19], [0x4000_1000, 0, 0xc000_0000, 0]);
    for (max, field) in [
        (0, "max_copy_bytes (must be at least 1)"),
        ((1 << 30) + 1, "max_copy_bytes"),
    ] {
        assert_eq!(
            sdma::copy_with(&mut buf, &opts(max), GpuVa(0), GpuVa(0), 4),
            Err(EncodeError::ValueTooLarge {
                field,
                value: max,
                max: 1 << 30
            })
        );
    }
}

/// `signal_dwords` is what `signal` writes: one FENCE (4), or FENCE + mailbox FENCE + TRAP (10)
/// when the signal has a KFD event.
#[test]
fn signal_dwords_matches_what_signal_writes() {
    let arch = &hcq_core::arch::GFX11;
    let plain = hcq_core::signal::SignalRef::new(0x2000);
    let evented = hcq_core::signal::SignalRef {
        event_mailbox_ptr: 0x9000,
        event_id: 5,
        ..plain
    };
    for (sig, want) in [(plain, 4), (evented, 10)] {
        let mut buf = [0u32; 16];
        assert_eq!(sdma::signal_dwords(&sig), want);
        assert_eq!(sdma::signal(&mut buf, arch, &sig, 1), Ok(want));
    }
}
