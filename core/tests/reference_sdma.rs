//! Every SDMA packet field core encodes, compared with the Linux kernel's SDMA packet headers:
//! `navi10_sdma_pkt_open.h` (SDMA 5, the gfx10+ engines) and `vega10_sdma_pkt_open.h` (SDMA 4,
//! gfx9), as extracted into `tests/reference/linux_*_sdma_pkt_open.tsv` by
//! `scripts/extract-ref-tables.py` (each file names its repository and commit).
//!
//! The test parses the files itself and shares no code with the encoder: the opcodes, the field
//! positions of the bitfields, and the places the encoders put each value (checked by encoding
//! a packet and reading every field back at the header's dword, shift and width).
//!
//! Fields of newer SDMA versions (SDMA 5.2/6: the `CPV` and cache-policy bits, `LLC`) are not in
//! these headers; `newer_fields_are_absent_from_sdma5` pins that they are not silently matched.

use hcq_core::arch::{GFX9, GFX10, GFX11, GpuVa};
use hcq_core::bitfield::Field;
use hcq_core::pm4::GcrCntl;
use hcq_core::sdma::{
    self, ConstFillHeader, CopyLinearHeader, CopyLinearParams, FenceHeader, GcrReq, IndirectHeader,
    NopHeader, PollRegmemDw5, PollRegmemHeader, SdmaHeader, WriteDw3,
};
use std::collections::HashMap;
use std::path::PathBuf;

/// name -> (dword, shift, width); for SDMA_OP_/SDMA_SUBOP_ rows (value, 0, 0).
fn table(file: &str) -> HashMap<String, (u32, u32, u32)> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/reference")
        .join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let source = text
        .lines()
        .find(|l| l.starts_with("# source: "))
        .unwrap_or_else(|| panic!("{file} names no source"));
    assert!(source.contains('@'), "{file}: the source names no commit");
    let n = |s: &str| s.parse::<u32>().unwrap_or(0);
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let c: Vec<&str> = l.split('\t').collect();
            assert_eq!(c.len(), 4, "{file}: {l:?}");
            (c[0].to_owned(), (n(c[1]), n(c[2]), n(c[3])))
        })
        .collect()
}

const SDMA5: &str = "linux_navi10_sdma_pkt_open.tsv";
const SDMA4: &str = "linux_vega10_sdma_pkt_open.tsv";

struct Check {
    t: HashMap<String, (u32, u32, u32)>,
    file: &'static str,
    errors: Vec<String>,
    compared: usize,
}

impl Check {
    fn new(file: &'static str) -> Self {
        Self {
            t: table(file),
            file,
            errors: Vec::new(),
            compared: 0,
        }
    }

    fn get(&mut self, name: &str) -> Option<(u32, u32, u32)> {
        let v = self.t.get(name).copied();
        if v.is_none() {
            self.errors.push(format!("{}: no row {name}", self.file));
        }
        v
    }

    fn value(&mut self, what: &str, core: u32, name: &str) {
        if let Some((v, _, _)) = self.get(name) {
            self.compared += 1;
            if v != core {
                self.errors
                    .push(format!("{what} = {core}, {} {name} = {v}", self.file));
            }
        }
    }

    /// A core bitfield against the header's field (dword `dword`).
    fn field<W>(&mut self, what: &str, core: Field<W>, dword: u32, name: &str) {
        if let Some((d, shift, width)) = self.get(name) {
            self.compared += 1;
            if (d, shift, width) != (dword, core.lo, core.width()) {
                self.errors.push(format!(
                    "{what}: core dword {dword} bits {}..={} ({} wide), {} {name}: dword {d} shift {shift} width {width}",
                    core.lo,
                    core.hi,
                    core.width(),
                    self.file
                ));
            }
        }
    }

    /// The value at `name`'s place in the encoded packet `pkt` (whose header's bits 31:16 core
    /// keeps in a bitfield, so field rows of dword 0 are read from the whole dword).
    fn read(&mut self, pkt: &[u32], name: &str) -> Option<u64> {
        let (d, shift, width) = self.get(name)?;
        let w = u64::from(*pkt.get(d as usize)?);
        self.compared += 1;
        Some((w >> shift) & ((1u64 << width) - 1))
    }

    fn expect(&mut self, pkt: &[u32], name: &str, want: u64) {
        if let Some(v) = self.read(pkt, name)
            && v != want
        {
            self.errors.push(format!(
                "{}: {name} reads {v:#x} from the packet, want {want:#x}",
                self.file
            ));
        }
    }

    fn done(self, min: usize) {
        assert!(self.errors.is_empty(), "{}", self.errors.join("\n"));
        assert!(self.compared >= min, "only {} comparisons", self.compared);
    }
}

/// Checks both headers agree with core on what SDMA 4 and SDMA 5 share.
fn common(c: &mut Check) {
    c.value("op::NOP", sdma::op::NOP, "SDMA_OP_NOP");
    c.value("op::COPY", sdma::op::COPY, "SDMA_OP_COPY");
    c.value("op::WRITE", sdma::op::WRITE, "SDMA_OP_WRITE");
    c.value("op::INDIRECT", sdma::op::INDIRECT, "SDMA_OP_INDIRECT");
    c.value("op::FENCE", sdma::op::FENCE, "SDMA_OP_FENCE");
    c.value("op::TRAP", sdma::op::TRAP, "SDMA_OP_TRAP");
    c.value(
        "op::POLL_REGMEM",
        sdma::op::POLL_REGMEM,
        "SDMA_OP_POLL_REGMEM",
    );
    c.value("op::CONST_FILL", sdma::op::CONST_FILL, "SDMA_OP_CONST_FILL");
    c.value("op::TIMESTAMP", sdma::op::TIMESTAMP, "SDMA_OP_TIMESTAMP");
    c.value(
        "sub_op::COPY_LINEAR",
        sdma::sub_op::COPY_LINEAR,
        "SDMA_SUBOP_COPY_LINEAR",
    );
    c.value(
        "sub_op::WRITE_LINEAR",
        sdma::sub_op::WRITE_LINEAR,
        "SDMA_SUBOP_WRITE_LINEAR",
    );
    c.value(
        "sub_op::TIMESTAMP_GET_GLOBAL",
        sdma::sub_op::TIMESTAMP_GET_GLOBAL,
        "SDMA_SUBOP_TIMESTAMP_GET_GLOBAL",
    );
    c.field("SdmaHeader::OP", SdmaHeader::OP, 0, "SDMA_PKT_HEADER_op");
    c.field(
        "SdmaHeader::SUB_OP",
        SdmaHeader::SUB_OP,
        0,
        "SDMA_PKT_HEADER_sub_op",
    );
    c.field(
        "NopHeader::COUNT",
        NopHeader::COUNT,
        0,
        "SDMA_PKT_NOP_HEADER_count",
    );
    c.field(
        "CopyLinearHeader::BROADCAST",
        CopyLinearHeader::BROADCAST,
        0,
        "SDMA_PKT_COPY_LINEAR_HEADER_broadcast",
    );
    c.field(
        "CopyLinearParams::DST_SW",
        CopyLinearParams::DST_SW,
        2,
        "SDMA_PKT_COPY_LINEAR_PARAMETER_dst_sw",
    );
    c.field(
        "CopyLinearParams::SRC_SW",
        CopyLinearParams::SRC_SW,
        2,
        "SDMA_PKT_COPY_LINEAR_PARAMETER_src_sw",
    );
    c.field(
        "IndirectHeader::VMID",
        IndirectHeader::VMID,
        0,
        "SDMA_PKT_INDIRECT_HEADER_vmid",
    );
    c.field(
        "PollRegmemHeader::HDP_FLUSH",
        PollRegmemHeader::HDP_FLUSH,
        0,
        "SDMA_PKT_POLL_REGMEM_HEADER_hdp_flush",
    );
    c.field(
        "PollRegmemHeader::FUNC",
        PollRegmemHeader::FUNC,
        0,
        "SDMA_PKT_POLL_REGMEM_HEADER_func",
    );
    c.field(
        "PollRegmemHeader::MEM_POLL",
        PollRegmemHeader::MEM_POLL,
        0,
        "SDMA_PKT_POLL_REGMEM_HEADER_mem_poll",
    );
    c.field(
        "PollRegmemDw5::INTERVAL",
        PollRegmemDw5::INTERVAL,
        5,
        "SDMA_PKT_POLL_REGMEM_DW5_interval",
    );
    c.field(
        "PollRegmemDw5::RETRY_COUNT",
        PollRegmemDw5::RETRY_COUNT,
        5,
        "SDMA_PKT_POLL_REGMEM_DW5_retry_count",
    );
    c.field(
        "ConstFillHeader::SW",
        ConstFillHeader::SW,
        0,
        "SDMA_PKT_CONSTANT_FILL_HEADER_sw",
    );
    c.field(
        "ConstFillHeader::FILLSIZE",
        ConstFillHeader::FILLSIZE,
        0,
        "SDMA_PKT_CONSTANT_FILL_HEADER_fillsize",
    );
    c.field(
        "WriteDw3::SW",
        WriteDw3::SW,
        3,
        "SDMA_PKT_WRITE_UNTILED_DW_3_sw",
    );
}

/// Encodes the packets core builds and reads every field back where the header puts it.
fn packets(c: &mut Check) {
    let (src, dst) = (GpuVa(0x1234_5678_9a00), GpuVa(0x7ede_dcba_9880));
    let mut b = [0u32; 16];
    let n = sdma::copy_linear(
        &mut b,
        &sdma::CopyLinear {
            header: CopyLinearHeader::zeroed(),
            count: 0x3f_fffe,
            params: CopyLinearParams::zeroed(),
            src,
            dst,
        },
    )
    .unwrap();
    let p = &b[..n];
    c.expect(p, "SDMA_PKT_COPY_LINEAR_HEADER_op", sdma::op::COPY.into());
    c.expect(p, "SDMA_PKT_COPY_LINEAR_COUNT_count", 0x3f_fffe);
    c.expect(
        p,
        "SDMA_PKT_COPY_LINEAR_SRC_ADDR_LO_src_addr_31_0",
        src.get() & 0xffff_ffff,
    );
    c.expect(
        p,
        "SDMA_PKT_COPY_LINEAR_SRC_ADDR_HI_src_addr_63_32",
        src.get() >> 32,
    );
    c.expect(
        p,
        "SDMA_PKT_COPY_LINEAR_DST_ADDR_LO_dst_addr_31_0",
        dst.get() & 0xffff_ffff,
    );
    c.expect(
        p,
        "SDMA_PKT_COPY_LINEAR_DST_ADDR_HI_dst_addr_63_32",
        dst.get() >> 32,
    );

    let n = sdma::write(&mut b, dst, &[1, 2, 3]).unwrap();
    let p = &b[..n];
    c.expect(
        p,
        "SDMA_PKT_WRITE_UNTILED_HEADER_op",
        sdma::op::WRITE.into(),
    );
    c.expect(
        p,
        "SDMA_PKT_WRITE_UNTILED_DST_ADDR_LO_dst_addr_31_0",
        dst.get() & 0xffff_ffff,
    );
    c.expect(
        p,
        "SDMA_PKT_WRITE_UNTILED_DST_ADDR_HI_dst_addr_63_32",
        dst.get() >> 32,
    );
    c.expect(p, "SDMA_PKT_WRITE_UNTILED_DW_3_count", 2);
    c.expect(p, "SDMA_PKT_WRITE_UNTILED_DATA0_data0", 1);

    let n = sdma::const_fill(&mut b, dst, 0xdead_beef, 4096).unwrap();
    let p = &b[..n];
    c.expect(
        p,
        "SDMA_PKT_CONSTANT_FILL_HEADER_op",
        sdma::op::CONST_FILL.into(),
    );
    c.expect(p, "SDMA_PKT_CONSTANT_FILL_HEADER_fillsize", 2);
    c.expect(
        p,
        "SDMA_PKT_CONSTANT_FILL_DST_ADDR_LO_dst_addr_31_0",
        dst.get() & 0xffff_ffff,
    );
    c.expect(
        p,
        "SDMA_PKT_CONSTANT_FILL_DST_ADDR_HI_dst_addr_63_32",
        dst.get() >> 32,
    );
    c.expect(p, "SDMA_PKT_CONSTANT_FILL_DATA_src_data_31_0", 0xdead_beef);
}

#[test]
fn sdma5_matches_navi10_sdma_pkt_open() {
    let mut c = Check::new(SDMA5);
    common(&mut c);
    packets(&mut c);
    c.value("op::GCR_REQ", sdma::op::GCR_REQ, "SDMA_OP_GCR_REQ");
    for (what, f, name) in [
        (
            "ENCRYPT",
            CopyLinearHeader::ENCRYPT,
            "SDMA_PKT_COPY_LINEAR_HEADER_encrypt",
        ),
        (
            "TMZ",
            CopyLinearHeader::TMZ,
            "SDMA_PKT_COPY_LINEAR_HEADER_tmz",
        ),
        (
            "BACKWARDS",
            CopyLinearHeader::BACKWARDS,
            "SDMA_PKT_COPY_LINEAR_HEADER_backwards",
        ),
    ] {
        c.field(&format!("CopyLinearHeader::{what}"), f, 0, name);
    }
    for (what, f, name) in [
        ("MTYPE", FenceHeader::MTYPE, "SDMA_PKT_FENCE_HEADER_mtype"),
        ("GCC", FenceHeader::GCC, "SDMA_PKT_FENCE_HEADER_gcc"),
        ("SYS", FenceHeader::SYS, "SDMA_PKT_FENCE_HEADER_sys"),
        ("SNP", FenceHeader::SNP, "SDMA_PKT_FENCE_HEADER_snp"),
        ("GPA", FenceHeader::GPA, "SDMA_PKT_FENCE_HEADER_gpa"),
        (
            "L2_POLICY",
            FenceHeader::L2_POLICY,
            "SDMA_PKT_FENCE_HEADER_l2_policy",
        ),
    ] {
        c.field(&format!("FenceHeader::{what}"), f, 0, name);
    }
    c.field(
        "WriteDw3::COUNT",
        WriteDw3::COUNT,
        3,
        "SDMA_PKT_WRITE_UNTILED_DW_3_count",
    );

    // GCR_REQ: every field read back where SDMA 5 reads it (GCR_CNTL split over dwords 2-3).
    let gcr = GcrCntl(0x5_a5a5);
    let req = GcrReq {
        sub_op: 0,
        base_va: 0xabcd_1234_5680,
        limit_va: 0x1234_5678_9a80,
        gcr,
        vmid: 9,
    };
    let mut b = [0u32; 8];
    let n = sdma::gcr_req(&mut b, &req).unwrap();
    let p = &b[..n];
    c.expect(p, "SDMA_PKT_GCR_REQ_HEADER_op", sdma::op::GCR_REQ.into());
    c.expect(
        p,
        "SDMA_PKT_GCR_REQ_PAYLOAD1_base_va_31_7",
        (req.base_va & 0xffff_ffff) >> 7,
    );
    c.expect(
        p,
        "SDMA_PKT_GCR_REQ_PAYLOAD2_base_va_47_32",
        req.base_va >> 32,
    );
    c.expect(
        p,
        "SDMA_PKT_GCR_REQ_PAYLOAD2_gcr_control_15_0",
        u64::from(gcr.raw() & 0xffff),
    );
    c.expect(
        p,
        "SDMA_PKT_GCR_REQ_PAYLOAD3_gcr_control_18_16",
        u64::from(gcr.raw() >> 16),
    );
    c.expect(
        p,
        "SDMA_PKT_GCR_REQ_PAYLOAD3_limit_va_31_7",
        (req.limit_va & 0xffff_ffff) >> 7,
    );
    c.expect(
        p,
        "SDMA_PKT_GCR_REQ_PAYLOAD4_limit_va_47_32",
        req.limit_va >> 32,
    );
    c.expect(p, "SDMA_PKT_GCR_REQ_PAYLOAD4_vmid", 9);
    c.done(60);
}

#[test]
fn sdma4_matches_vega10_sdma_pkt_open() {
    let mut c = Check::new(SDMA4);
    common(&mut c);
    packets(&mut c);
    c.done(40);
}

/// The largest COPY_LINEAR core emits per packet fits the count field of the SDMA version of
/// every family (22 bits in SDMA 4 and 5: `count_mask 0x003FFFFF`); core's `MAX_COUNT` (30
/// bits) is SDMA 5.2/6's, so only `arch.sdma_max_copy_bytes` keeps gfx9/gfx10.1 packets legal.
#[test]
fn copy_chunks_fit_the_count_field() {
    for (arch, file) in [(&GFX9, SDMA4), (&GFX10, SDMA5), (&GFX11, SDMA5)] {
        let t = table(file);
        let (_, _, width) = t["SDMA_PKT_COPY_LINEAR_COUNT_count"];
        assert!(
            arch.sdma_max_copy_bytes - 1 < 1 << width,
            "{:?}: {} bytes per COPY_LINEAR overflow the {width}-bit count of {file}",
            arch.family,
            arch.sdma_max_copy_bytes
        );
    }
}

/// Fields core defines for newer SDMA versions are not in the SDMA 5.0 header (so a match can
/// only come from the right header, never from a stray row).
#[test]
fn newer_fields_are_absent_from_sdma5() {
    let t = table(SDMA5);
    for name in [
        "SDMA_PKT_COPY_LINEAR_HEADER_cpv",
        "SDMA_PKT_POLL_REGMEM_HEADER_cpv",
        "SDMA_PKT_CONSTANT_FILL_HEADER_cpv",
    ] {
        assert!(!t.contains_key(name), "{name} is in {SDMA5}: compare it");
    }
}
