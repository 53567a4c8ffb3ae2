//! Every register offset, field position and width, PM4 opcode and SDMA opcode core defines,
//! compared with facts extracted from independent references: Mesa's register database and
//! `sid.h`, the Linux kernel's amdgpu PM4 headers (`soc15d.h` for gfx9, `nvd.h` for gfx10+,
//! which `gfx_v12_0.c` includes too), and for gfx12 the kernel's GC register headers
//! (`gc_12_0_0_offset.h`, `gc_12_0_0_sh_mask.h`, `soc24_enum.h`) and the SDMA 6 packet header
//! `sdma_v6_0_0_pkt_open.h` that `sdma_v7_0.c` includes.
//!
//! The reference files live in `tests/reference/*.tsv` (made by `scripts/extract-ref-tables.py`,
//! each naming its repository, path and commit). This test parses them itself and shares no code
//! with the encoders: a typo in a core table fails here even though the simulator, which decodes
//! with the same tables, would agree with it.
//!
//! Families map to reference chips: gfx9 -> Mesa `gfx9` (gfx900..gfx90a) and `gfx940` (gfx942),
//! gfx10 -> Mesa `gfx10` and `gfx103`, gfx11 -> Mesa `gfx11`, gfx12 -> `linux-gfx12` (the Mesa
//! snapshot has no gfx12 database; rows of the `linux_*` files are keyed `linux-<chip>`). The
//! kernel headers give offsets relative to a GC base segment; `linux_gfx11_matches_mesa` checks
//! that the extraction's convention reproduces Mesa's gfx11 addresses exactly.

use hcq_core::arch::{ArchInfo, ComputeTmpringSize, Family, GFX9, GFX10, GFX11, GFX12};
use hcq_core::bitfield::Field;
use hcq_core::hsa::{PgmRsrc1, PgmRsrc2, PgmRsrc3, PgmRsrc3Gfx90a};
use hcq_core::pm4::{
    self, CpCoherCntl, DispatchInitiator, EventWriteCntl, GcrCntl, IbControl, Pm4Header,
    ReleaseMemDataCntl, ReleaseMemEventCntl, WaitRegMemCtl, WriteDataCntl,
};
use hcq_core::rsrc::{self, BufRsrcWord1, BufRsrcWord3Gfx9, BufRsrcWord3Gfx10};
use hcq_core::sdma::{
    self, ConstFillHeader, CopyLinearHeader, CopyLinearParams, FenceHeader, GcrReq, IndirectHeader,
    PollRegmemDw5, PollRegmemHeader, WriteDw3,
};
use hcq_core::sel::{CompareFunction, EventType};
use std::collections::HashMap;
use std::path::PathBuf;

/// Rows of one reference file, comments and the header dropped.
fn rows(name: &str) -> Vec<Vec<String>> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/reference")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let source = text
        .lines()
        .find(|l| l.starts_with("# source: "))
        .unwrap_or_else(|| panic!("{name} names no source"));
    assert!(
        source.contains('@'),
        "{name}: the source line names no commit"
    );
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| l.split('\t').map(str::to_owned).collect())
        .collect()
}

fn num(s: &str) -> u32 {
    match s.strip_prefix("0x") {
        Some(h) => u32::from_str_radix(h, 16),
        None => s.parse(),
    }
    .unwrap_or_else(|e| panic!("{s:?}: {e}"))
}

/// What the reference files say.
struct Refs {
    /// (chip, register) -> dword address.
    regs: HashMap<(String, String), u32>,
    /// (chip, register, field) -> (lo, hi).
    fields: HashMap<(String, String, String), (u32, u32)>,
    /// (chip, enum entry) -> value.
    enums: HashMap<(String, String), u32>,
    /// (file, define) -> (kind, a, b).
    defines: HashMap<(String, String), (String, u32, Option<u32>)>,
}

fn load() -> Refs {
    let mut r = Refs {
        regs: HashMap::new(),
        fields: HashMap::new(),
        enums: HashMap::new(),
        defines: HashMap::new(),
    };
    for row in rows("mesa_registers.tsv") {
        r.regs
            .insert((row[0].clone(), row[1].clone()), num(&row[2]));
    }
    for row in rows("mesa_fields.tsv") {
        r.fields.insert(
            (row[0].clone(), row[1].clone(), row[2].clone()),
            (num(&row[3]), num(&row[4])),
        );
    }
    for row in rows("mesa_enums.tsv") {
        r.enums
            .insert((row[0].clone(), row[2].clone()), num(&row[3]));
    }
    for row in rows("linux_gc_registers.tsv") {
        r.regs
            .insert((format!("linux-{}", row[0]), row[1].clone()), num(&row[2]));
    }
    for row in rows("linux_gc_fields.tsv") {
        r.fields.insert(
            (format!("linux-{}", row[0]), row[1].clone(), row[2].clone()),
            (num(&row[3]), num(&row[4])),
        );
    }
    for row in rows("linux_soc_enums.tsv") {
        r.enums
            .insert((format!("linux-{}", row[0]), row[2].clone()), num(&row[3]));
    }
    for file in ["mesa_sid", "linux_soc15d", "linux_nvd"] {
        for row in rows(&format!("{file}.tsv")) {
            let b = (row[3] != "-").then(|| num(&row[3]));
            r.defines.insert(
                (file.to_owned(), row[0].clone()),
                (row[1].clone(), num(&row[2]), b),
            );
        }
    }
    r
}

/// Collects mismatches so one run lists all of them.
struct Check<'a> {
    refs: &'a Refs,
    errors: Vec<String>,
    compared: usize,
}

impl Check<'_> {
    fn fail(&mut self, msg: String) {
        self.errors.push(msg);
    }

    /// A register's SET_SH_REG offset.
    fn sh_reg(&mut self, chip: &str, reg: &str, core: u32) {
        self.compared += 1;
        match self.refs.regs.get(&(chip.into(), reg.into())) {
            Some(&dw) if dw.wrapping_sub(0x2C00) == core => {}
            Some(&dw) => self.fail(format!(
                "{chip} {reg}: core offset {core:#x}, reference {:#x} (dword {dw:#x})",
                dw.wrapping_sub(0x2C00)
            )),
            None => self.fail(format!(
                "{chip} {reg}: core writes offset {core:#x}; the reference has no such register"
            )),
        }
    }

    fn absent(&mut self, chip: &str, reg: &str) {
        self.compared += 1;
        if let Some(dw) = self.refs.regs.get(&(chip.into(), reg.into())) {
            self.fail(format!(
                "{chip} {reg}: the reference has it at dword {dw:#x}, core thinks it is absent"
            ));
        }
    }

    /// A core field against a reference (Mesa or kernel header) field.
    fn field<W>(&mut self, what: &str, core: Field<W>, chip: &str, reg: &str, name: &str) {
        self.compared += 1;
        match self
            .refs
            .fields
            .get(&(chip.into(), reg.into(), name.into()))
        {
            Some(&(lo, hi)) if lo == core.lo && hi == core.hi => {}
            Some(&(lo, hi)) => self.fail(format!(
                "{what}: core {}:{}, reference {chip} {reg}.{name} {hi}:{lo}",
                core.hi, core.lo
            )),
            None => self.fail(format!(
                "{what}: reference {chip} {reg} has no field {name}"
            )),
        }
    }

    /// Several core fields that together tile one reference field.
    fn tiles<W>(&mut self, what: &str, core: &[Field<W>], chip: &str, reg: &str, name: &str) {
        self.compared += 1;
        let lo = core.iter().map(|f| f.lo).min().unwrap_or(0);
        let hi = core.iter().map(|f| f.hi).max().unwrap_or(0);
        let width: u32 = core.iter().map(|f| f.width()).sum();
        match self.refs.fields.get(&(chip.into(), reg.into(), name.into())) {
            Some(&(l, h)) if l == lo && h == hi && width == h - l + 1 => {}
            other => self.fail(format!(
                "{what}: core fields cover {hi}:{lo} ({width} bits), reference {chip} {reg}.{name} {other:?}"
            )),
        }
    }

    fn define(&mut self, file: &str, name: &str) -> Option<(String, u32, Option<u32>)> {
        let d = self.refs.defines.get(&(file.into(), name.into())).cloned();
        if d.is_none() {
            self.fail(format!("{file}: no {name}"));
        }
        d
    }

    /// A `#define NAME value`.
    fn value(&mut self, what: &str, core: u32, file: &str, name: &str) {
        self.compared += 1;
        if let Some((kind, a, _)) = self.define(file, name)
            && (kind != "value" || a != core)
        {
            self.fail(format!(
                "{what}: core {core:#x}, {file} {name} = {kind} {a:#x}"
            ));
        }
    }

    /// A `#define NAME(x) ... << shift` (with a width when the macro masks).
    fn shift<W>(&mut self, what: &str, core: Field<W>, file: &str, name: &str) {
        self.compared += 1;
        if let Some((kind, a, b)) = self.define(file, name) {
            let ok = match (kind.as_str(), b) {
                ("field", Some(w)) => a == core.lo && w == core.width(),
                ("field", None) => a == core.lo,
                ("shifted", Some(v)) => {
                    a == core.lo && 32 - v.leading_zeros() <= core.width() && v != 0
                }
                _ => false,
            };
            if !ok {
                self.fail(format!(
                    "{what}: core {}:{}, {file} {name} = {kind} {a} {b:?}",
                    core.hi, core.lo
                ));
            }
        }
    }

    /// A `#define NAME (v << n)` single-bit flag, against a bit mask core builds.
    fn bit(&mut self, what: &str, core_mask: u32, file: &str, name: &str) {
        self.compared += 1;
        if let Some((kind, a, b)) = self.define(file, name)
            && (kind != "shifted" || b != Some(1) || core_mask & (1 << a) == 0)
        {
            self.fail(format!(
                "{what}: core mask {core_mask:#x} lacks {file} {name} = {kind} {a} {b:?}"
            ));
        }
    }

    fn enum_value(&mut self, what: &str, core: u32, chip: &str, entry: &str) {
        self.compared += 1;
        match self.refs.enums.get(&(chip.into(), entry.into())) {
            Some(&v) if v == core => {}
            other => self.fail(format!(
                "{what}: core {core}, reference {chip} {entry} {other:?}"
            )),
        }
    }
}

fn chips(family: Family) -> &'static [&'static str] {
    match family {
        Family::Gfx9 => &["gfx9", "gfx940"],
        Family::Gfx10 => &["gfx10", "gfx103"],
        Family::Gfx11 => &["gfx11"],
        Family::Gfx12 => &["linux-gfx12"],
    }
}

fn registers(c: &mut Check, arch: &ArchInfo, chip: &str) {
    let r = &arch.regs;
    for (i, n) in [
        "START_X",
        "START_Y",
        "START_Z",
        "NUM_THREAD_X",
        "NUM_THREAD_Y",
        "NUM_THREAD_Z",
    ]
    .iter()
    .enumerate()
    {
        c.sh_reg(chip, &format!("COMPUTE_{n}"), r.start_x + i as u32);
    }
    c.sh_reg(chip, "COMPUTE_PGM_LO", r.pgm_lo);
    c.sh_reg(chip, "COMPUTE_PGM_HI", r.pgm_lo + 1);
    c.sh_reg(chip, "COMPUTE_DISPATCH_SCRATCH_BASE_LO", r.pgm_lo + 4);
    c.sh_reg(chip, "COMPUTE_DISPATCH_SCRATCH_BASE_HI", r.pgm_lo + 5);
    c.sh_reg(chip, "COMPUTE_PGM_RSRC1", r.pgm_rsrc1);
    c.sh_reg(chip, "COMPUTE_PGM_RSRC2", r.pgm_rsrc1 + 1);
    c.sh_reg(chip, "COMPUTE_RESOURCE_LIMITS", r.resource_limits);
    c.sh_reg(chip, "COMPUTE_TMPRING_SIZE", r.tmpring_size);
    for (i, n) in ["X", "Y", "Z"].iter().enumerate() {
        c.sh_reg(
            chip,
            &format!("COMPUTE_RESTART_{n}"),
            r.restart_x + i as u32,
        );
    }
    // Mesa calls SE0..SE3 COMPUTE_DESTINATION_EN_SEn from gfx10 on (the kernel's headers keep
    // STATIC_THREAD_MGMT).
    let se = if chip.starts_with("gfx9") {
        "COMPUTE_STATIC_THREAD_MGMT_SE"
    } else {
        "COMPUTE_DESTINATION_EN_SE"
    };
    c.sh_reg(chip, &format!("{se}0"), r.static_thread_mgmt_se0);
    c.sh_reg(chip, &format!("{se}1"), r.static_thread_mgmt_se0 + 1);
    c.sh_reg(chip, &format!("{se}2"), r.static_thread_mgmt_se2);
    c.sh_reg(chip, &format!("{se}3"), r.static_thread_mgmt_se2 + 1);
    for i in 0..4 {
        let name = format!("COMPUTE_STATIC_THREAD_MGMT_SE{}", 4 + i);
        if arch.has_static_thread_mgmt_se4 {
            c.sh_reg(chip, &name, r.static_thread_mgmt_se4 + i);
        } else {
            c.absent(chip, &name);
        }
    }
    for i in 0..16 {
        c.sh_reg(chip, &format!("COMPUTE_USER_DATA_{i}"), r.user_data_0 + i);
    }
    // gfx9 before gfx90a has no COMPUTE_PGM_RSRC3 at all; gfx90a and gfx940 have it at 0x22d.
    if chip != "gfx9" {
        c.sh_reg(chip, "COMPUTE_PGM_RSRC3", r.pgm_rsrc3);
    }
}

fn rsrc_fields(c: &mut Check, family: Family, chip: &str) {
    let r1 = "COMPUTE_PGM_RSRC1";
    let f = |c: &mut Check, core: Field<_>, name: &str| {
        c.field(&format!("{chip} PgmRsrc1.{name}"), core, chip, r1, name)
    };
    f(c, PgmRsrc1::GRANULATED_WORKITEM_VGPR_COUNT, "VGPRS");
    f(c, PgmRsrc1::GRANULATED_WAVEFRONT_SGPR_COUNT, "SGPRS");
    f(c, PgmRsrc1::PRIORITY, "PRIORITY");
    f(c, PgmRsrc1::PRIV, "PRIV");
    f(c, PgmRsrc1::BULKY, "BULKY");
    f(c, PgmRsrc1::FP16_OVFL, "FP16_OVFL");
    // gfx12 gives bits 21 and 23 new names (WG_RR_EN, DISABLE_PERF): `gfx12_renamed_bits`.
    if family != Family::Gfx12 {
        f(c, PgmRsrc1::ENABLE_DX10_CLAMP, "DX10_CLAMP");
        f(c, PgmRsrc1::ENABLE_IEEE_MODE, "IEEE_MODE");
    }
    if matches!(family, Family::Gfx9 | Family::Gfx12) {
        f(c, PgmRsrc1::DEBUG_MODE, "DEBUG_MODE");
        f(c, PgmRsrc1::CDBG_USER, "CDBG_USER");
    }
    if family != Family::Gfx9 {
        f(c, PgmRsrc1::WGP_MODE, "WGP_MODE");
        f(c, PgmRsrc1::MEM_ORDERED, "MEM_ORDERED");
        f(c, PgmRsrc1::FWD_PROGRESS, "FWD_PROGRESS");
    }
    c.tiles(
        &format!("{chip} PgmRsrc1.FLOAT_*"),
        &[
            PgmRsrc1::FLOAT_ROUND_MODE_32,
            PgmRsrc1::FLOAT_ROUND_MODE_16_64,
            PgmRsrc1::FLOAT_DENORM_MODE_32,
            PgmRsrc1::FLOAT_DENORM_MODE_16_64,
        ],
        chip,
        r1,
        "FLOAT_MODE",
    );

    let r2 = "COMPUTE_PGM_RSRC2";
    let f = |c: &mut Check, core: Field<_>, name: &str| {
        c.field(&format!("{chip} PgmRsrc2.{name}"), core, chip, r2, name)
    };
    f(c, PgmRsrc2::ENABLE_PRIVATE_SEGMENT, "SCRATCH_EN");
    f(c, PgmRsrc2::USER_SGPR_COUNT, "USER_SGPR");
    // gfx12's bit 6 is DYNAMIC_VGPR: `gfx12_renamed_bits`.
    if family != Family::Gfx12 {
        f(c, PgmRsrc2::ENABLE_TRAP_HANDLER, "TRAP_PRESENT");
    }
    f(c, PgmRsrc2::ENABLE_SGPR_WORKGROUP_ID_X, "TGID_X_EN");
    f(c, PgmRsrc2::ENABLE_SGPR_WORKGROUP_ID_Y, "TGID_Y_EN");
    f(c, PgmRsrc2::ENABLE_SGPR_WORKGROUP_ID_Z, "TGID_Z_EN");
    f(c, PgmRsrc2::ENABLE_SGPR_WORKGROUP_INFO, "TG_SIZE_EN");
    f(c, PgmRsrc2::ENABLE_VGPR_WORKITEM_ID, "TIDIG_COMP_CNT");
    f(c, PgmRsrc2::GRANULATED_LDS_SIZE, "LDS_SIZE");
    f(c, PgmRsrc2::ENABLE_EXCEPTION_FP, "EXCP_EN");
    c.tiles(
        &format!("{chip} PgmRsrc2.ENABLE_EXCEPTION_{{ADDRESS_WATCH,MEMORY}}"),
        &[
            PgmRsrc2::ENABLE_EXCEPTION_ADDRESS_WATCH,
            PgmRsrc2::ENABLE_EXCEPTION_MEMORY,
        ],
        chip,
        r2,
        "EXCP_EN_MSB",
    );

    // PgmRsrc3 is the gfx10+ layout (gfx90a/gfx940 use ACCUM_OFFSET/TG_SPLIT there).
    let r3 = "COMPUTE_PGM_RSRC3";
    let f = |c: &mut Check, core: Field<_>, name: &str| {
        c.field(&format!("{chip} PgmRsrc3.{name}"), core, chip, r3, name)
    };
    match chip {
        "gfx10" | "gfx103" => f(c, PgmRsrc3::SHARED_VGPR_COUNT, "SHARED_VGPR_CNT"),
        "gfx11" => {
            f(c, PgmRsrc3::SHARED_VGPR_COUNT, "SHARED_VGPR_CNT");
            f(c, PgmRsrc3::INST_PREF_SIZE, "INST_PREF_SIZE");
            f(c, PgmRsrc3::TRAP_ON_START, "TRAP_ON_START");
            f(c, PgmRsrc3::TRAP_ON_END, "TRAP_ON_END");
            f(c, PgmRsrc3::IMAGE_OP, "IMAGE_OP");
        }
        // gfx12 widens INST_PREF_SIZE to 11:4 and drops TRAP_ON_START/END:
        // `gfx12_renamed_bits`.
        "linux-gfx12" => {
            f(c, PgmRsrc3::SHARED_VGPR_COUNT, "SHARED_VGPR_CNT");
            f(c, PgmRsrc3::IMAGE_OP, "IMAGE_OP");
        }
        _ => {}
    }
    // gfx90a/gfx940's layout, which `exec` writes on gfx9 (Mesa has it for gfx940; its gfx9.json,
    // which stands for gfx900..gfx90a, has no RSRC3: gfx90a shares gfx940's descriptor layout,
    // LLVM AMDGPUUsage "compute_pgm_rsrc3 for GFX90A, GFX942").
    if chip == "gfx940" {
        let f = |c: &mut Check, core: Field<_>, name: &str| {
            c.field(
                &format!("{chip} PgmRsrc3Gfx90a.{name}"),
                core,
                chip,
                r3,
                name,
            )
        };
        f(c, PgmRsrc3Gfx90a::ACCUM_OFFSET, "ACCUM_OFFSET");
        f(c, PgmRsrc3Gfx90a::TRAP_ON_START, "TRAP_ON_START");
        f(c, PgmRsrc3Gfx90a::TRAP_ON_END, "TRAP_ON_END");
        f(c, PgmRsrc3Gfx90a::TG_SPLIT, "TG_SPLIT");
    }
}

fn dispatch_and_scratch(c: &mut Check, arch: &ArchInfo, chip: &str) {
    let di = "COMPUTE_DISPATCH_INITIATOR";
    let f = |c: &mut Check, core: Field<_>, name: &str| {
        c.field(
            &format!("{chip} DispatchInitiator.{name}"),
            core,
            chip,
            di,
            name,
        )
    };
    f(c, DispatchInitiator::COMPUTE_SHADER_EN, "COMPUTE_SHADER_EN");
    f(c, DispatchInitiator::PARTIAL_TG_EN, "PARTIAL_TG_EN");
    f(
        c,
        DispatchInitiator::FORCE_START_AT_000,
        "FORCE_START_AT_000",
    );
    f(c, DispatchInitiator::ORDER_MODE, "ORDER_MODE");
    f(c, DispatchInitiator::RESTORE, "RESTORE");
    if arch.family != Family::Gfx9 {
        f(c, DispatchInitiator::TUNNEL, "TUNNEL_ENABLE");
    }
    c.compared += 1;
    let has_w32 = c
        .refs
        .fields
        .contains_key(&(chip.into(), di.into(), "CS_W32_EN".into()));
    if has_w32 != arch.has_cs_w32_en {
        c.fail(format!(
            "{chip}: core has_cs_w32_en {}, reference CS_W32_EN present {has_w32}",
            arch.has_cs_w32_en
        ));
    }
    if has_w32 {
        f(c, DispatchInitiator::CS_W32_EN, "CS_W32_EN");
    }

    let wavesize = arch.tmpring_wavesize();
    c.field(
        &format!("{chip} tmpring_wavesize_hi"),
        wavesize,
        chip,
        "COMPUTE_TMPRING_SIZE",
        "WAVESIZE",
    );
    c.field(
        &format!("{chip} ComputeTmpringSize.WAVES"),
        ComputeTmpringSize::WAVES,
        chip,
        "COMPUTE_TMPRING_SIZE",
        "WAVES",
    );

    // The scratch V# words core builds.
    if arch.scratch_rsrc.is_some() {
        let w1 = "SQ_BUF_RSRC_WORD1";
        let f = |c: &mut Check, core: Field<_>, name: &str| {
            c.field(&format!("{chip} BufRsrcWord1.{name}"), core, chip, w1, name)
        };
        f(c, BufRsrcWord1::BASE_ADDRESS_HI, "BASE_ADDRESS_HI");
        f(c, BufRsrcWord1::STRIDE, "STRIDE");
        f(c, BufRsrcWord1::CACHE_SWIZZLE, "CACHE_SWIZZLE");
        f(c, BufRsrcWord1::SWIZZLE_ENABLE, "SWIZZLE_ENABLE");
    }
    let w3 = "SQ_BUF_RSRC_WORD3";
    match arch.family {
        Family::Gfx9 => {
            let f = |c: &mut Check, core: Field<_>, name: &str| {
                c.field(
                    &format!("{chip} BufRsrcWord3Gfx9.{name}"),
                    core,
                    chip,
                    w3,
                    name,
                )
            };
            f(c, BufRsrcWord3Gfx9::DST_SEL_X, "DST_SEL_X");
            f(c, BufRsrcWord3Gfx9::DST_SEL_Y, "DST_SEL_Y");
            f(c, BufRsrcWord3Gfx9::DST_SEL_Z, "DST_SEL_Z");
            f(c, BufRsrcWord3Gfx9::DST_SEL_W, "DST_SEL_W");
            f(c, BufRsrcWord3Gfx9::NUM_FORMAT, "NUM_FORMAT");
            f(c, BufRsrcWord3Gfx9::DATA_FORMAT, "DATA_FORMAT");
            f(c, BufRsrcWord3Gfx9::INDEX_STRIDE, "INDEX_STRIDE");
            f(c, BufRsrcWord3Gfx9::ADD_TID_ENABLE, "ADD_TID_ENABLE");
            f(c, BufRsrcWord3Gfx9::TYPE, "TYPE");
            // Not checked: ELEMENT_SIZE (20:19), ATC (24), HASH_ENABLE (25), HEAP (26),
            // MTYPE (29:27) are ROCR's gfx9 names (its `SQ_BUF_RSRC_WORD3` carried over from
            // gfx8); Mesa's gfx9 database names bits 19 and 20 USER_VM_ENABLE / USER_VM_MODE and
            // leaves 24..29 (but NV at 27) unnamed. See `gfx9_word3_differs_from_mesa`.
            c.enum_value(
                "BUF_NUM_FORMAT_UINT",
                rsrc::BUF_NUM_FORMAT_UINT,
                chip,
                "BUF_NUM_FORMAT_UINT",
            );
            c.enum_value(
                "BUF_DATA_FORMAT_32",
                rsrc::BUF_DATA_FORMAT_32,
                chip,
                "BUF_DATA_FORMAT_32",
            );
            for (i, s) in ["SQ_SEL_X", "SQ_SEL_Y", "SQ_SEL_Z", "SQ_SEL_W"]
                .iter()
                .enumerate()
            {
                let word3 = rsrc::SCRATCH_GFX9.word3;
                let core = (word3 >> (3 * i)) & 7;
                c.enum_value(&format!("SCRATCH_GFX9 DST_SEL {s}"), core, chip, s);
            }
        }
        Family::Gfx10 => {
            let f = |c: &mut Check, core: Field<_>, name: &str| {
                c.field(
                    &format!("{chip} BufRsrcWord3Gfx10.{name}"),
                    core,
                    chip,
                    w3,
                    name,
                )
            };
            f(c, BufRsrcWord3Gfx10::DST_SEL_X, "DST_SEL_X");
            f(c, BufRsrcWord3Gfx10::DST_SEL_Y, "DST_SEL_Y");
            f(c, BufRsrcWord3Gfx10::DST_SEL_Z, "DST_SEL_Z");
            f(c, BufRsrcWord3Gfx10::DST_SEL_W, "DST_SEL_W");
            f(c, BufRsrcWord3Gfx10::FORMAT, "FORMAT");
            f(c, BufRsrcWord3Gfx10::INDEX_STRIDE, "INDEX_STRIDE");
            f(c, BufRsrcWord3Gfx10::ADD_TID_ENABLE, "ADD_TID_ENABLE");
            f(c, BufRsrcWord3Gfx10::RESOURCE_LEVEL, "RESOURCE_LEVEL");
            f(c, BufRsrcWord3Gfx10::OOB_SELECT, "OOB_SELECT");
            f(c, BufRsrcWord3Gfx10::TYPE, "TYPE");
        }
        _ => {}
    }

    // Cache control on gfx9: ACQUIRE_MEM's CP_COHER_CNTL.
    if arch.family == Family::Gfx9 {
        let cc = "CP_COHER_CNTL";
        let f = |c: &mut Check, core: Field<_>, name: &str| {
            c.field(&format!("{chip} CpCoherCntl.{name}"), core, chip, cc, name)
        };
        f(c, CpCoherCntl::TC_WB_ACTION_ENA, "TC_WB_ACTION_ENA");
        f(c, CpCoherCntl::TCL1_ACTION_ENA, "TCL1_ACTION_ENA");
        f(c, CpCoherCntl::TC_ACTION_ENA, "TC_ACTION_ENA");
        f(c, CpCoherCntl::SH_KCACHE_ACTION_ENA, "SH_KCACHE_ACTION_ENA");
        f(c, CpCoherCntl::SH_ICACHE_ACTION_ENA, "SH_ICACHE_ACTION_ENA");
    }

    // gfx940.json holds only the registers that differ from gfx9: events come from gfx9.json.
    let chip = if chip == "gfx940" { "gfx9" } else { chip };
    c.enum_value(
        "events.cs_partial_flush",
        arch.events.cs_partial_flush.raw(),
        chip,
        "CS_PARTIAL_FLUSH",
    );
    c.enum_value(
        "events.cache_flush_and_inv_ts",
        arch.events.cache_flush_and_inv_ts.raw(),
        chip,
        "CACHE_FLUSH_AND_INV_TS_EVENT",
    );
    // The selector enum's values where Mesa's VGT_EVENT_TYPE names them.
    for (ty, name) in [
        (EventType::CsPartialFlush, "CS_PARTIAL_FLUSH"),
        (
            EventType::CacheFlushAndInvTs,
            "CACHE_FLUSH_AND_INV_TS_EVENT",
        ),
        (EventType::BottomOfPipeTs, "BOTTOM_OF_PIPE_TS"),
    ] {
        c.enum_value(&format!("{ty:?}"), ty.raw(), chip, name);
    }
}

fn packet_words(c: &mut Check, arch: &ArchInfo, chip: &str) {
    // gfx12's packet words come from the kernel's nvd.h and SDMA header, not from Mesa's
    // pkt3.json: `gfx12_packets_match_linux`.
    if arch.family == Family::Gfx9 || chip.starts_with("linux-") {
        return;
    }
    let g = "PKT3_GCR_CNTL";
    let f = |c: &mut Check, core: Field<_>, name: &str| {
        c.field(&format!("{chip} GcrCntl.{name}"), core, chip, g, name)
    };
    f(c, GcrCntl::GLI_INV, "GLI_INV");
    f(c, GcrCntl::GL1_RANGE, "GL1_RANGE");
    f(c, GcrCntl::GLM_WB, "GLM_WB");
    f(c, GcrCntl::GLM_INV, "GLM_INV");
    f(c, GcrCntl::GLK_WB, "GLK_WB");
    f(c, GcrCntl::GLK_INV, "GLK_INV");
    f(c, GcrCntl::GLV_INV, "GLV_INV");
    f(c, GcrCntl::GL1_INV, "GL1_INV");
    f(c, GcrCntl::GL2_US, "GL2_US");
    f(c, GcrCntl::GL2_RANGE, "GL2_RANGE");
    f(c, GcrCntl::GL2_DISCARD, "GL2_DISCARD");
    f(c, GcrCntl::GL2_INV, "GL2_INV");
    f(c, GcrCntl::GL2_WB, "GL2_WB");
    f(c, GcrCntl::SEQ, "SEQ");
    f(c, GcrCntl::RANGE_IS_PA, "RANGE_IS_PA");

    let r = "PKT3_RELEASE_MEM_OP";
    let f = |c: &mut Check, core: Field<_>, name: &str| {
        c.field(
            &format!("{chip} ReleaseMemEventCntl.{name}"),
            core,
            chip,
            r,
            name,
        )
    };
    f(c, ReleaseMemEventCntl::EVENT_TYPE, "EVENT_TYPE");
    f(c, ReleaseMemEventCntl::EVENT_INDEX, "EVENT_INDEX");
    f(c, ReleaseMemEventCntl::GCR_GLM_WB, "GLM_WB");
    f(c, ReleaseMemEventCntl::GCR_GLM_INV, "GLM_INV");
    f(c, ReleaseMemEventCntl::GCR_GLV_INV, "GLV_INV");
    f(c, ReleaseMemEventCntl::GCR_GL1_INV, "GL1_INV");
    f(c, ReleaseMemEventCntl::GCR_GL2_US, "GL2_US");
    f(c, ReleaseMemEventCntl::GCR_GL2_RANGE, "GL2_RANGE");
    f(c, ReleaseMemEventCntl::GCR_GL2_DISCARD, "GL2_DISCARD");
    f(c, ReleaseMemEventCntl::GCR_GL2_INV, "GL2_INV");
    f(c, ReleaseMemEventCntl::GCR_GL2_WB, "GL2_WB");
    f(c, ReleaseMemEventCntl::GCR_SEQ, "SEQ");
    if chip == "gfx11" {
        f(c, ReleaseMemEventCntl::CACHE_POLICY, "CACHE_POLICY");
        f(c, ReleaseMemEventCntl::EXECUTE, "EXECUTE");
    }
}

#[test]
fn families_match_mesa_and_linux() {
    let refs = load();
    let mut c = Check {
        refs: &refs,
        errors: Vec::new(),
        compared: 0,
    };
    for arch in [&GFX9, &GFX10, &GFX11, &GFX12] {
        for chip in chips(arch.family) {
            registers(&mut c, arch, chip);
            rsrc_fields(&mut c, arch.family, chip);
            dispatch_and_scratch(&mut c, arch, chip);
            packet_words(&mut c, arch, chip);
        }
    }
    // PM4 packet words common to all families (Mesa pkt3.json).
    for chip in ["gfx9", "gfx940", "gfx10", "gfx103", "gfx11"] {
        let f = |c: &mut Check, core: Field<_>, reg: &str, name: &str| {
            c.field(&format!("{chip} {reg}.{name}"), core, chip, reg, name)
        };
        f(&mut c, IbControl::IB_SIZE, "PKT3_IB_CONTROL", "IB_SIZE");
        f(&mut c, IbControl::CHAIN, "PKT3_IB_CONTROL", "CHAIN");
        f(&mut c, IbControl::PRE_ENA, "PKT3_IB_CONTROL", "PRE_ENA");
        f(&mut c, IbControl::VALID, "PKT3_IB_CONTROL", "VALID");
        // A field is typed by its word: one closure per word.
        let f = |c: &mut Check, core: Field<_>, reg: &str, name: &str| {
            c.field(&format!("{chip} {reg}.{name}"), core, chip, reg, name)
        };
        f(&mut c, WriteDataCntl::DST_SEL, "PKT3_CONTROL", "DST_SEL");
        f(
            &mut c,
            WriteDataCntl::WR_ONE_ADDR,
            "PKT3_CONTROL",
            "WR_ONE_ADDR",
        );
        f(
            &mut c,
            WriteDataCntl::WR_CONFIRM,
            "PKT3_CONTROL",
            "WR_CONFIRM",
        );
        f(
            &mut c,
            WriteDataCntl::ENGINE_SEL,
            "PKT3_CONTROL",
            "ENGINE_SEL",
        );
    }
    assert!(
        c.errors.is_empty(),
        "{} of {} facts differ from Mesa or Linux:\n{}",
        c.errors.len(),
        c.compared,
        c.errors.join("\n")
    );
    assert!(c.compared > 300, "only {} facts compared", c.compared);
}

#[test]
fn pm4_matches_linux_and_mesa_sid() {
    let refs = load();
    let mut c = Check {
        refs: &refs,
        errors: Vec::new(),
        compared: 0,
    };
    let ops = [
        (pm4::op::NOP, "NOP"),
        (pm4::op::DISPATCH_DIRECT, "DISPATCH_DIRECT"),
        (pm4::op::WRITE_DATA, "WRITE_DATA"),
        (pm4::op::WAIT_REG_MEM, "WAIT_REG_MEM"),
        (pm4::op::INDIRECT_BUFFER, "INDIRECT_BUFFER"),
        (pm4::op::EVENT_WRITE, "EVENT_WRITE"),
        (pm4::op::RELEASE_MEM, "RELEASE_MEM"),
        (pm4::op::ACQUIRE_MEM, "ACQUIRE_MEM"),
        (pm4::op::SET_SH_REG, "SET_SH_REG"),
        (pm4::op::SET_UCONFIG_REG, "SET_UCONFIG_REG"),
    ];
    for (core, name) in ops {
        c.value(name, core, "linux_soc15d", &format!("PACKET3_{name}"));
        c.value(name, core, "linux_nvd", &format!("PACKET3_{name}"));
        c.value(name, core, "mesa_sid", &format!("PKT3_{name}"));
    }
    for file in ["linux_soc15d", "linux_nvd"] {
        c.value(
            "SET_SH_REG_START",
            pm4::SET_SH_REG_START,
            file,
            "PACKET3_SET_SH_REG_START",
        );
        c.shift(
            "WaitRegMemCtl.FUNCTION",
            WaitRegMemCtl::FUNCTION,
            file,
            "WAIT_REG_MEM_FUNCTION",
        );
        c.shift(
            "WaitRegMemCtl.MEM_SPACE",
            WaitRegMemCtl::MEM_SPACE,
            file,
            "WAIT_REG_MEM_MEM_SPACE",
        );
        c.shift(
            "WaitRegMemCtl.OPERATION",
            WaitRegMemCtl::OPERATION,
            file,
            "WAIT_REG_MEM_OPERATION",
        );
        c.shift(
            "WaitRegMemCtl.ENGINE",
            WaitRegMemCtl::ENGINE,
            file,
            "WAIT_REG_MEM_ENGINE",
        );
        c.shift(
            "WriteDataCntl.DST_SEL",
            WriteDataCntl::DST_SEL,
            file,
            "WRITE_DATA_DST_SEL",
        );
        c.shift(
            "WriteDataCntl.WR_ONE_ADDR",
            WriteDataCntl::WR_ONE_ADDR,
            file,
            "WR_ONE_ADDR",
        );
        c.shift(
            "WriteDataCntl.WR_CONFIRM",
            WriteDataCntl::WR_CONFIRM,
            file,
            "WR_CONFIRM",
        );
        c.shift(
            "WriteDataCntl.CACHE_POLICY",
            WriteDataCntl::CACHE_POLICY,
            file,
            "WRITE_DATA_CACHE_POLICY",
        );
        c.shift(
            "WriteDataCntl.ENGINE_SEL",
            WriteDataCntl::ENGINE_SEL,
            file,
            "WRITE_DATA_ENGINE_SEL",
        );
        c.shift(
            "IbControl.VALID",
            IbControl::VALID,
            file,
            "INDIRECT_BUFFER_VALID",
        );
        c.shift(
            "IbControl.CACHE_POLICY",
            IbControl::CACHE_POLICY,
            file,
            "INDIRECT_BUFFER_CACHE_POLICY",
        );
        c.shift(
            "IbControl.PRE_ENA",
            IbControl::PRE_ENA,
            file,
            "INDIRECT_BUFFER_PRE_ENB",
        );
        c.shift(
            "IbControl.PRE_RESUME",
            IbControl::PRE_RESUME,
            file,
            "INDIRECT_BUFFER_PRE_RESUME",
        );
        c.shift(
            "EventWriteCntl.EVENT_TYPE",
            EventWriteCntl::EVENT_TYPE,
            file,
            "EVENT_TYPE",
        );
        c.shift(
            "EventWriteCntl.EVENT_INDEX",
            EventWriteCntl::EVENT_INDEX,
            file,
            "EVENT_INDEX",
        );
    }
    // soc15d.h (gfx9) masked forms.
    let s = "linux_soc15d";
    c.shift(
        "WaitRegMemCtl.FUNCTION",
        WaitRegMemCtl::FUNCTION,
        s,
        "PACKET3_WAIT_REG_MEM__FUNCTION",
    );
    c.shift(
        "WaitRegMemCtl.MEM_SPACE",
        WaitRegMemCtl::MEM_SPACE,
        s,
        "PACKET3_WAIT_REG_MEM__MEM_SPACE",
    );
    c.shift(
        "WaitRegMemCtl.OPERATION",
        WaitRegMemCtl::OPERATION,
        s,
        "PACKET3_WAIT_REG_MEM__OPERATION",
    );
    c.shift(
        "WriteDataCntl.DST_SEL",
        WriteDataCntl::DST_SEL,
        s,
        "PACKET3_WRITE_DATA__DST_SEL",
    );
    c.shift(
        "WriteDataCntl.WR_ONE_ADDR",
        WriteDataCntl::WR_ONE_ADDR,
        s,
        "PACKET3_WRITE_DATA__ADDR_INCR",
    );
    c.shift(
        "WriteDataCntl.WR_CONFIRM",
        WriteDataCntl::WR_CONFIRM,
        s,
        "PACKET3_WRITE_DATA__WR_CONFIRM",
    );
    c.shift(
        "WriteDataCntl.CACHE_POLICY",
        WriteDataCntl::CACHE_POLICY,
        s,
        "PACKET3_WRITE_DATA__CACHE_POLICY",
    );
    c.shift(
        "IbControl.IB_SIZE",
        IbControl::IB_SIZE,
        s,
        "PACKET3_INDIRECT_BUFFER__IB_SIZE",
    );
    c.shift(
        "IbControl.CHAIN",
        IbControl::CHAIN,
        s,
        "PACKET3_INDIRECT_BUFFER__CHAIN",
    );
    c.shift(
        "IbControl.VALID",
        IbControl::VALID,
        s,
        "PACKET3_INDIRECT_BUFFER__VALID",
    );
    c.shift(
        "IbControl.VMID",
        IbControl::VMID,
        s,
        "PACKET3_INDIRECT_BUFFER__VMID",
    );
    c.shift(
        "IbControl.CACHE_POLICY",
        IbControl::CACHE_POLICY,
        s,
        "PACKET3_INDIRECT_BUFFER__CACHE_POLICY",
    );
    c.shift(
        "EventWriteCntl.EVENT_TYPE",
        EventWriteCntl::EVENT_TYPE,
        s,
        "PACKET3_EVENT_WRITE__EVENT_TYPE",
    );
    c.shift(
        "EventWriteCntl.EVENT_INDEX",
        EventWriteCntl::EVENT_INDEX,
        s,
        "PACKET3_EVENT_WRITE__EVENT_INDEX",
    );
    c.shift(
        "ReleaseMemDataCntl.DATA_SEL",
        ReleaseMemDataCntl::DATA_SEL,
        s,
        "DATA_SEL",
    );
    c.shift(
        "ReleaseMemDataCntl.INT_SEL",
        ReleaseMemDataCntl::INT_SEL,
        s,
        "INT_SEL",
    );
    c.shift(
        "ReleaseMemDataCntl.DST_SEL",
        ReleaseMemDataCntl::DST_SEL,
        s,
        "DST_SEL",
    );
    c.shift(
        "CpCoherCntl.TC_WB_ACTION_ENA",
        CpCoherCntl::TC_WB_ACTION_ENA,
        s,
        "PACKET3_ACQUIRE_MEM_CP_COHER_CNTL_TC_WB_ACTION_ENA",
    );
    c.shift(
        "CpCoherCntl.TCL1_ACTION_ENA",
        CpCoherCntl::TCL1_ACTION_ENA,
        s,
        "PACKET3_ACQUIRE_MEM_CP_COHER_CNTL_TCL1_ACTION_ENA",
    );
    c.shift(
        "CpCoherCntl.TC_ACTION_ENA",
        CpCoherCntl::TC_ACTION_ENA,
        s,
        "PACKET3_ACQUIRE_MEM_CP_COHER_CNTL_TC_ACTION_ENA",
    );
    c.shift(
        "CpCoherCntl.SH_KCACHE_ACTION_ENA",
        CpCoherCntl::SH_KCACHE_ACTION_ENA,
        s,
        "PACKET3_ACQUIRE_MEM_CP_COHER_CNTL_SH_KCACHE_ACTION_ENA",
    );
    c.shift(
        "CpCoherCntl.SH_ICACHE_ACTION_ENA",
        CpCoherCntl::SH_ICACHE_ACTION_ENA,
        s,
        "PACKET3_ACQUIRE_MEM_CP_COHER_CNTL_SH_ICACHE_ACTION_ENA",
    );
    // gfx9 RELEASE_MEM cache flush: TC_WB | TCL1 | TC, and nothing else.
    let gfx9 = GFX9.release_mem_cache_flush;
    c.bit(
        "GFX9.release_mem_cache_flush",
        gfx9,
        s,
        "EOP_TC_WB_ACTION_EN",
    );
    c.bit(
        "GFX9.release_mem_cache_flush",
        gfx9,
        s,
        "EOP_TCL1_ACTION_EN",
    );
    c.bit("GFX9.release_mem_cache_flush", gfx9, s, "EOP_TC_ACTION_EN");
    c.compared += 1;
    if gfx9.count_ones() != 3 {
        c.fail(format!(
            "GFX9.release_mem_cache_flush {gfx9:#x} has bits beyond TC_WB|TCL1|TC"
        ));
    }

    // nvd.h (gfx10+): RELEASE_MEM dword 1 and 2.
    let n = "linux_nvd";
    let rm = |c: &mut Check, core: Field<_>, name: &str| {
        c.shift(
            &format!("ReleaseMemEventCntl {name}"),
            core,
            n,
            &format!("PACKET3_RELEASE_MEM_{name}"),
        )
    };
    rm(&mut c, ReleaseMemEventCntl::EVENT_TYPE, "EVENT_TYPE");
    rm(&mut c, ReleaseMemEventCntl::EVENT_INDEX, "EVENT_INDEX");
    rm(&mut c, ReleaseMemEventCntl::GCR_GLM_WB, "GCR_GLM_WB");
    rm(&mut c, ReleaseMemEventCntl::GCR_GLM_INV, "GCR_GLM_INV");
    rm(&mut c, ReleaseMemEventCntl::GCR_GLV_INV, "GCR_GLV_INV");
    rm(&mut c, ReleaseMemEventCntl::GCR_GL1_INV, "GCR_GL1_INV");
    rm(&mut c, ReleaseMemEventCntl::GCR_GL2_US, "GCR_GL2_US");
    rm(&mut c, ReleaseMemEventCntl::GCR_GL2_RANGE, "GCR_GL2_RANGE");
    rm(
        &mut c,
        ReleaseMemEventCntl::GCR_GL2_DISCARD,
        "GCR_GL2_DISCARD",
    );
    rm(&mut c, ReleaseMemEventCntl::GCR_GL2_INV, "GCR_GL2_INV");
    rm(&mut c, ReleaseMemEventCntl::GCR_GL2_WB, "GCR_GL2_WB");
    rm(&mut c, ReleaseMemEventCntl::GCR_SEQ, "GCR_SEQ");
    rm(&mut c, ReleaseMemEventCntl::CACHE_POLICY, "CACHE_POLICY");
    rm(&mut c, ReleaseMemEventCntl::EXECUTE, "EXECUTE");
    let rm = |c: &mut Check, core: Field<_>, name: &str| {
        c.shift(
            &format!("ReleaseMemEventCntl {name}"),
            core,
            n,
            &format!("PACKET3_RELEASE_MEM_{name}"),
        )
    };
    rm(&mut c, ReleaseMemDataCntl::DATA_SEL, "DATA_SEL");
    rm(&mut c, ReleaseMemDataCntl::INT_SEL, "INT_SEL");
    rm(&mut c, ReleaseMemDataCntl::DST_SEL, "DST_SEL");
    let flush = GFX11.release_mem_cache_flush;
    for b in [
        "GLM_WB", "GLM_INV", "GLV_INV", "GL1_INV", "GL2_INV", "GL2_WB", "SEQ",
    ] {
        c.bit(
            "GFX11.release_mem_cache_flush",
            flush,
            n,
            &format!("PACKET3_RELEASE_MEM_GCR_{b}"),
        );
    }
    c.compared += 1;
    if flush.count_ones() != 7 {
        c.fail(format!(
            "GFX11.release_mem_cache_flush {flush:#x} has bits beyond the seven"
        ));
    }

    // Mesa sid.h: header fields, wait functions, RELEASE_MEM dword 2.
    let m = "mesa_sid";
    c.shift("Pm4Header.TYPE", Pm4Header::TYPE, m, "PKT_TYPE_S");
    c.shift("Pm4Header.COUNT", Pm4Header::COUNT, m, "PKT_COUNT_S");
    c.shift("Pm4Header.OPCODE", Pm4Header::OPCODE, m, "PKT3_IT_OPCODE_S");
    c.shift(
        "Pm4Header.SHADER_TYPE",
        Pm4Header::SHADER_TYPE,
        m,
        "PKT3_SHADER_TYPE_S",
    );
    c.shift(
        "Pm4Header.RESET_FILTER_CAM",
        Pm4Header::RESET_FILTER_CAM,
        m,
        "PKT3_RESET_FILTER_CAM_S",
    );
    c.shift(
        "WaitRegMemCtl.MEM_SPACE",
        WaitRegMemCtl::MEM_SPACE,
        m,
        "WAIT_REG_MEM_MEM_SPACE",
    );
    c.shift(
        "WaitRegMemCtl.ENGINE (PFP)",
        WaitRegMemCtl::ENGINE,
        m,
        "WAIT_REG_MEM_PFP",
    );
    c.value(
        "CompareFunction::Equal",
        CompareFunction::Equal.raw(),
        m,
        "WAIT_REG_MEM_EQUAL",
    );
    c.value(
        "CompareFunction::NotEqual",
        CompareFunction::NotEqual.raw(),
        m,
        "WAIT_REG_MEM_NOT_EQUAL",
    );
    c.value(
        "CompareFunction::GreaterEqual",
        CompareFunction::GreaterEqual.raw(),
        m,
        "WAIT_REG_MEM_GREATER_OR_EQUAL",
    );
    c.shift(
        "ReleaseMemDataCntl.INT_SEL",
        ReleaseMemDataCntl::INT_SEL,
        m,
        "EOP_INT_SEL",
    );
    c.shift(
        "ReleaseMemDataCntl.DATA_SEL",
        ReleaseMemDataCntl::DATA_SEL,
        m,
        "EOP_DATA_SEL",
    );
    c.shift(
        "ReleaseMemDataCntl.DST_SEL",
        ReleaseMemDataCntl::DST_SEL,
        m,
        "EOP_DST_SEL",
    );
    c.bit(
        "GFX9.release_mem_cache_flush",
        gfx9,
        m,
        "EVENT_TC_WB_ACTION_ENA",
    );
    c.bit(
        "GFX9.release_mem_cache_flush",
        gfx9,
        m,
        "EVENT_TCL1_ACTION_ENA",
    );
    c.bit(
        "GFX9.release_mem_cache_flush",
        gfx9,
        m,
        "EVENT_TC_ACTION_ENA",
    );
    // PKT3(NOP, 0x3fff, 0): the 1-dword NOP.
    c.compared += 1;
    let nop_pad = (3 << 30) | (0x3fff << 16) | (pm4::op::NOP << 8);
    if pm4::NOP_1DW != nop_pad {
        c.fail(format!(
            "NOP_1DW {:#x}, PKT3_NOP_PAD {nop_pad:#x}",
            pm4::NOP_1DW
        ));
    }
    assert!(
        c.errors.is_empty(),
        "{} of {} PM4 facts differ:\n{}",
        c.errors.len(),
        c.compared,
        c.errors.join("\n")
    );
}

#[test]
fn sdma_matches_mesa_sid() {
    let refs = load();
    let mut c = Check {
        refs: &refs,
        errors: Vec::new(),
        compared: 0,
    };
    let m = "mesa_sid";
    c.value("op::NOP", sdma::op::NOP, m, "SDMA_OPCODE_NOP");
    c.value("op::COPY", sdma::op::COPY, m, "SDMA_OPCODE_COPY");
    c.value("op::WRITE", sdma::op::WRITE, m, "SDMA_OPCODE_WRITE");
    c.value(
        "op::INDIRECT",
        sdma::op::INDIRECT,
        m,
        "SDMA_OPCODE_INDIRECT_BUFFER",
    );
    c.value("op::FENCE", sdma::op::FENCE, m, "SDMA_OPCODE_FENCE");
    c.value("op::TRAP", sdma::op::TRAP, m, "SDMA_OPCODE_TRAP");
    c.value(
        "op::POLL_REGMEM",
        sdma::op::POLL_REGMEM,
        m,
        "SDMA_OPCODE_POLL_REGMEM",
    );
    c.value(
        "op::CONST_FILL",
        sdma::op::CONST_FILL,
        m,
        "SDMA_OPCODE_CONSTANT_FILL",
    );
    c.value(
        "op::TIMESTAMP",
        sdma::op::TIMESTAMP,
        m,
        "SDMA_OPCODE_TIMESTAMP",
    );
    c.value(
        "sub_op::COPY_LINEAR",
        sdma::sub_op::COPY_LINEAR,
        m,
        "SDMA_COPY_SUB_OPCODE_LINEAR",
    );
    c.value(
        "sub_op::WRITE_LINEAR",
        sdma::sub_op::WRITE_LINEAR,
        m,
        "SDMA_WRITE_SUB_OPCODE_LINEAR",
    );
    c.value(
        "sub_op::TIMESTAMP_GET_GLOBAL",
        sdma::sub_op::TIMESTAMP_GET_GLOBAL,
        m,
        "SDMA_TS_SUB_OPCODE_GET_GLOBAL_TIMESTAMP",
    );
    c.shift(
        "PollRegmemHeader.MEM_POLL",
        sdma::PollRegmemHeader::MEM_POLL,
        m,
        "SDMA_POLL_MEM",
    );
    c.value(
        "PollRegmemDw5.RETRY_COUNT all ones",
        (1 << sdma::PollRegmemDw5::RETRY_COUNT.width()) - 1,
        m,
        "SDMA_POLL_RETRY_INDEFINITELY",
    );
    c.value("FENCE MTYPE UC", 3, m, "SDMA_FENCE_MTYPE_UC");
    // SDMA_PACKET(op, sub_op, n) = n << 16 | sub_op << 8 | op.
    c.compared += 1;
    if (
        sdma::SdmaHeader::OP.lo,
        sdma::SdmaHeader::OP.hi,
        sdma::SdmaHeader::SUB_OP.lo,
    ) != (0, 7, 8)
        || sdma::SdmaHeader::SUB_OP.hi != 15
    {
        c.fail("SdmaHeader OP/SUB_OP differ from SDMA_PACKET".into());
    }
    assert!(
        c.errors.is_empty(),
        "{} of {} SDMA facts differ:\n{}",
        c.errors.len(),
        c.compared,
        c.errors.join("\n")
    );
}

/// gfx9 `SQ_BUF_RSRC_WORD3`: core follows ROCR (`ELEMENT_SIZE` at 20:19 set to 1 for 4-byte
/// swizzle elements); Mesa's gfx9 database calls bits 19 and 20 `USER_VM_ENABLE` and
/// `USER_VM_MODE`. Pin the difference so a change on either side is seen: bit 19 is the only bit
/// of those two core sets.
#[test]
fn gfx9_word3_differs_from_mesa() {
    let refs = load();
    for chip in ["gfx9", "gfx940"] {
        let key = |f: &str| {
            (
                chip.to_owned(),
                "SQ_BUF_RSRC_WORD3".to_owned(),
                f.to_owned(),
            )
        };
        assert_eq!(refs.fields.get(&key("USER_VM_ENABLE")), Some(&(19, 19)));
        assert_eq!(refs.fields.get(&key("USER_VM_MODE")), Some(&(20, 20)));
        assert_eq!(refs.fields.get(&key("ELEMENT_SIZE")), None);
    }
    assert_eq!((rsrc::SCRATCH_GFX9.word3 >> 19) & 3, 1);
}

/// The kernel's gc_11_0_0_offset.h and soc21_enum.h, read with the same convention as the gfx12
/// files (offset + GC segment base), give exactly Mesa's gfx11 addresses and event numbers: every
/// Mesa gfx11 row is in the kernel file with the same value, and every kernel row Mesa also names
/// agrees (the kernel adds the STATIC_THREAD_MGMT_SE0..3 aliases of DESTINATION_EN_SE0..3).
#[test]
fn linux_gfx11_matches_mesa() {
    let refs = load();
    let mut compared = 0;
    for ((chip, reg), dw) in &refs.regs {
        if chip == "gfx11" {
            let linux = refs.regs.get(&("linux-gfx11".into(), reg.clone()));
            assert_eq!(
                linux,
                Some(dw),
                "{reg}: Mesa gfx11 {dw:#x}, kernel {linux:?}"
            );
            compared += 1;
        }
    }
    for ((chip, entry), v) in &refs.enums {
        if chip == "gfx11" {
            let linux = refs.enums.get(&("linux-gfx11".into(), entry.clone()));
            assert_eq!(linux, Some(v), "{entry}: Mesa gfx11 {v}, kernel {linux:?}");
            compared += 1;
        }
    }
    assert!(compared >= 40, "only {compared} gfx11 rows compared");
}

/// gfx12 reuses bits of the kernel descriptor's words under new names, so core's bitfields
/// (named after the gfx9-gfx11 descriptor, LLVM AMDGPUUsage) do not match them by name. core
/// copies `compute_pgm_rsrc1/2` verbatim and reads only VGPR count, user SGPRs, scratch enable
/// and LDS size (compared in `families_match_mesa_and_linux`), and it does not write RSRC3 on
/// gfx12 (`exec_writes_pgm_rsrc3`). Pin the differences so a change on either side is seen.
#[test]
fn gfx12_renamed_bits() {
    let refs = load();
    let field = |reg: &str, f: &str| {
        refs.fields
            .get(&("linux-gfx12".into(), reg.into(), f.into()))
            .copied()
    };
    let r1 = "COMPUTE_PGM_RSRC1";
    // Bit 21: DX10_CLAMP up to gfx11, WG_RR_EN on gfx12; bit 23: IEEE_MODE, then DISABLE_PERF.
    let (dx10, ieee) = (PgmRsrc1::ENABLE_DX10_CLAMP, PgmRsrc1::ENABLE_IEEE_MODE);
    assert_eq!(field(r1, "WG_RR_EN"), Some((dx10.lo, dx10.hi)));
    assert_eq!(field(r1, "DISABLE_PERF"), Some((ieee.lo, ieee.hi)));
    assert_eq!(field(r1, "DX10_CLAMP"), None);
    assert_eq!(field(r1, "IEEE_MODE"), None);
    // RSRC2 bit 6: TRAP_PRESENT up to gfx11, DYNAMIC_VGPR on gfx12.
    let r2 = "COMPUTE_PGM_RSRC2";
    let trap = PgmRsrc2::ENABLE_TRAP_HANDLER;
    assert_eq!(field(r2, "DYNAMIC_VGPR"), Some((trap.lo, trap.hi)));
    assert_eq!(field(r2, "TRAP_PRESENT"), None);
    // RSRC3: INST_PREF_SIZE is 9:4 on gfx11 (core's field) and 11:4 on gfx12, where bits 10 and
    // 11 (TRAP_ON_START/END on gfx11) belong to it.
    let r3 = "COMPUTE_PGM_RSRC3";
    assert_eq!(
        (PgmRsrc3::INST_PREF_SIZE.lo, PgmRsrc3::INST_PREF_SIZE.hi),
        (4, 9)
    );
    assert_eq!(field(r3, "INST_PREF_SIZE"), Some((4, 11)));
    assert_eq!(field(r3, "TRAP_ON_START"), None);
    assert_eq!(field(r3, "TRAP_ON_END"), None);
    const { assert!(!GFX12.exec_writes_pgm_rsrc3) };
}

/// gfx12 PM4 packet words: gfx_v12_0.c builds its packets with nvd.h (ACQUIRE_MEM's GCR_CNTL
/// and RELEASE_MEM's GCR bits), and sdma_v7_0.c's GCR_REQ carries the same GCR_CNTL word
/// (`SDMA_GCR_*` of sdma_v6_0_0_pkt_open.h, whose macros also give each field's width).
///
/// Not a mismatch, noted: since Linux 6.12 gfx_v12_0.c's fence RELEASE_MEM sets only GCR_SEQ |
/// GCR_GL2_WB ("GLM flags are also removed because the hw ignores them"; invalidations belong in
/// ACQUIRE_MEM), while core's `GFX12.release_mem_cache_flush` keeps gfx11's seven bits, all at
/// the positions nvd.h gives.
#[test]
fn gfx12_packets_match_linux() {
    let refs = load();
    let mut c = Check {
        refs: &refs,
        errors: Vec::new(),
        compared: 0,
    };
    let n = "linux_nvd";
    let gcr = [
        (GcrCntl::GLI_INV, "GLI_INV"),
        (GcrCntl::GL1_RANGE, "GL1_RANGE"),
        (GcrCntl::GLM_WB, "GLM_WB"),
        (GcrCntl::GLM_INV, "GLM_INV"),
        (GcrCntl::GLK_WB, "GLK_WB"),
        (GcrCntl::GLK_INV, "GLK_INV"),
        (GcrCntl::GLV_INV, "GLV_INV"),
        (GcrCntl::GL1_INV, "GL1_INV"),
        (GcrCntl::GL2_US, "GL2_US"),
        (GcrCntl::GL2_RANGE, "GL2_RANGE"),
        (GcrCntl::GL2_DISCARD, "GL2_DISCARD"),
        (GcrCntl::GL2_INV, "GL2_INV"),
        (GcrCntl::GL2_WB, "GL2_WB"),
        (GcrCntl::SEQ, "SEQ"),
    ];
    for (core, name) in gcr {
        c.shift(
            &format!("GcrCntl.{name}"),
            core,
            n,
            &format!("PACKET3_ACQUIRE_MEM_GCR_CNTL_{name}"),
        );
    }
    c.shift(
        "GcrCntl.RANGE_IS_PA",
        GcrCntl::RANGE_IS_PA,
        n,
        "PACKET3_ACQUIRE_MEM_GCR_RANGE_IS_PA",
    );
    let flush = GFX12.release_mem_cache_flush;
    for b in [
        "GLM_WB", "GLM_INV", "GLV_INV", "GL1_INV", "GL2_INV", "GL2_WB", "SEQ",
    ] {
        c.bit(
            "GFX12.release_mem_cache_flush",
            flush,
            n,
            &format!("PACKET3_RELEASE_MEM_GCR_{b}"),
        );
    }
    c.compared += 1;
    if flush.count_ones() != 7 {
        c.fail(format!(
            "GFX12.release_mem_cache_flush {flush:#x} has bits beyond the seven"
        ));
    }
    // The same GCR_CNTL word as SDMA 6/7 sees it, with widths.
    let t = sdma6();
    for (core, name) in gcr
        .into_iter()
        .chain([(GcrCntl::RANGE_IS_PA, "RANGE_IS_PA")])
    {
        c.compared += 1;
        let row = t.get(&format!("SDMA_GCR_{name}"));
        if row.map(|r| (r.1, r.2)) != Some((core.lo, core.width())) {
            c.fail(format!(
                "GcrCntl.{name} {}:{}, sdma_v6_0_0_pkt_open.h SDMA_GCR_{name} {row:?}",
                core.hi, core.lo
            ));
        }
    }
    assert!(
        c.errors.is_empty(),
        "{} of {} gfx12 packet facts differ:\n{}",
        c.errors.len(),
        c.compared,
        c.errors.join("\n")
    );
    assert!(c.compared >= 38, "only {} compared", c.compared);
}

/// `linux_sdma_v6_0_0_pkt_open.tsv`: name -> (dword column, shift, width); the dword column is
/// the value for SDMA_OP_/SDMA_SUBOP_ rows and `-` (read as `u32::MAX`) for SDMA_GCR_ rows.
fn sdma6() -> HashMap<String, (u32, u32, u32)> {
    let n = |s: &str| if s == "-" { u32::MAX } else { num(s) };
    rows("linux_sdma_v6_0_0_pkt_open.tsv")
        .into_iter()
        .map(|r| (r[0].clone(), (n(&r[1]), n(&r[2]), n(&r[3]))))
        .collect()
}

/// gfx12's SDMA 7 engine: sdma_v7_0.c includes sdma_v6_0_0_pkt_open.h, so every SDMA opcode
/// and packet field core encodes (the same encoder serves gfx11 and gfx12) is compared with that
/// header, and a GCR_REQ core builds is read back at the header's dwords and bits.
///
/// Not covered, noted: sdma_v7_0.c defines CONSTANT_FILL bit 16 as `compress` (SDMA 6's SW is
/// 17:16); core's fill writes SW 0, so the packets agree on both.
#[test]
fn gfx12_sdma_matches_sdma_v6_pkt_open() {
    let t = sdma6();
    let mut errors = Vec::new();
    let mut compared = 0;
    let mut get = |name: &str| {
        compared += 1;
        let v = t.get(name).copied();
        if v.is_none() {
            errors.push(format!("sdma_v6_0_0_pkt_open.h: no {name}"));
        }
        v
    };
    let mut mismatches = Vec::new();
    for (core, name) in [
        (sdma::op::NOP, "SDMA_OP_NOP"),
        (sdma::op::COPY, "SDMA_OP_COPY"),
        (sdma::op::WRITE, "SDMA_OP_WRITE"),
        (sdma::op::INDIRECT, "SDMA_OP_INDIRECT"),
        (sdma::op::FENCE, "SDMA_OP_FENCE"),
        (sdma::op::TRAP, "SDMA_OP_TRAP"),
        (sdma::op::POLL_REGMEM, "SDMA_OP_POLL_REGMEM"),
        (sdma::op::CONST_FILL, "SDMA_OP_CONST_FILL"),
        (sdma::op::TIMESTAMP, "SDMA_OP_TIMESTAMP"),
        (sdma::op::GCR_REQ, "SDMA_OP_GCR_REQ"),
        (sdma::sub_op::COPY_LINEAR, "SDMA_SUBOP_COPY_LINEAR"),
        (sdma::sub_op::WRITE_LINEAR, "SDMA_SUBOP_WRITE_LINEAR"),
        (
            sdma::sub_op::TIMESTAMP_GET_GLOBAL,
            "SDMA_SUBOP_TIMESTAMP_GET_GLOBAL",
        ),
    ] {
        if let Some((v, _, _)) = get(name)
            && v != core
        {
            mismatches.push(format!("{name}: core {core}, header {v}"));
        }
    }
    // (dword, lo, width) of each core bitfield, by header name.
    let fields: &[(u32, u32, u32, &str)] = &[
        f(0, sdma::SdmaHeader::OP, "COPY_LINEAR_HEADER_op"),
        f(0, sdma::SdmaHeader::SUB_OP, "COPY_LINEAR_HEADER_sub_op"),
        f(0, sdma::NopHeader::COUNT, "NOP_HEADER_count"),
        f(0, CopyLinearHeader::ENCRYPT, "COPY_LINEAR_HEADER_encrypt"),
        f(0, CopyLinearHeader::TMZ, "COPY_LINEAR_HEADER_tmz"),
        f(0, CopyLinearHeader::CPV, "COPY_LINEAR_HEADER_cpv"),
        f(
            0,
            CopyLinearHeader::BACKWARDS,
            "COPY_LINEAR_HEADER_backwards",
        ),
        f(
            0,
            CopyLinearHeader::BROADCAST,
            "COPY_LINEAR_HEADER_broadcast",
        ),
        f(2, CopyLinearParams::DST_SW, "COPY_LINEAR_PARAMETER_dst_sw"),
        f(
            2,
            CopyLinearParams::DST_CACHE_POLICY,
            "COPY_LINEAR_PARAMETER_dst_cache_policy",
        ),
        f(2, CopyLinearParams::SRC_SW, "COPY_LINEAR_PARAMETER_src_sw"),
        f(
            2,
            CopyLinearParams::SRC_CACHE_POLICY,
            "COPY_LINEAR_PARAMETER_src_cache_policy",
        ),
        f(0, FenceHeader::MTYPE, "FENCE_HEADER_mtype"),
        f(0, FenceHeader::GCC, "FENCE_HEADER_gcc"),
        f(0, FenceHeader::SYS, "FENCE_HEADER_sys"),
        f(0, FenceHeader::SNP, "FENCE_HEADER_snp"),
        f(0, FenceHeader::GPA, "FENCE_HEADER_gpa"),
        f(0, FenceHeader::L2_POLICY, "FENCE_HEADER_l2_policy"),
        f(0, FenceHeader::LLC, "FENCE_HEADER_llc_policy"),
        f(0, FenceHeader::CPV, "FENCE_HEADER_cpv"),
        f(
            0,
            PollRegmemHeader::CACHE_POLICY,
            "POLL_REGMEM_HEADER_cache_policy",
        ),
        f(0, PollRegmemHeader::CPV, "POLL_REGMEM_HEADER_cpv"),
        f(
            0,
            PollRegmemHeader::HDP_FLUSH,
            "POLL_REGMEM_HEADER_hdp_flush",
        ),
        f(0, PollRegmemHeader::FUNC, "POLL_REGMEM_HEADER_func"),
        f(0, PollRegmemHeader::MEM_POLL, "POLL_REGMEM_HEADER_mem_poll"),
        f(5, PollRegmemDw5::INTERVAL, "POLL_REGMEM_DW5_interval"),
        f(5, PollRegmemDw5::RETRY_COUNT, "POLL_REGMEM_DW5_retry_count"),
        f(0, ConstFillHeader::SW, "CONSTANT_FILL_HEADER_sw"),
        f(
            0,
            ConstFillHeader::CACHE_POLICY,
            "CONSTANT_FILL_HEADER_cache_policy",
        ),
        f(0, ConstFillHeader::CPV, "CONSTANT_FILL_HEADER_cpv"),
        f(
            0,
            ConstFillHeader::FILLSIZE,
            "CONSTANT_FILL_HEADER_fillsize",
        ),
        f(3, WriteDw3::COUNT, "WRITE_UNTILED_DW_3_count"),
        f(3, WriteDw3::SW, "WRITE_UNTILED_DW_3_sw"),
        f(3, WriteDw3::CACHE_POLICY, "WRITE_UNTILED_DW_3_cache_policy"),
        f(0, IndirectHeader::VMID, "INDIRECT_HEADER_vmid"),
        f(0, IndirectHeader::PRIV, "INDIRECT_HEADER_priv"),
    ];
    for &(dw, lo, width, name) in fields {
        let name = format!("SDMA_PKT_{name}");
        if let Some(row) = get(&name)
            && row != (dw, lo, width)
        {
            mismatches.push(format!(
                "{name}: core dword {dw} lo {lo} width {width}, header {row:?}"
            ));
        }
    }
    // The largest COPY_LINEAR / CONSTANT_FILL count core emits fits the 30-bit count fields.
    for name in [
        "SDMA_PKT_COPY_LINEAR_COUNT_count",
        "SDMA_PKT_CONSTANT_FILL_COUNT_count",
    ] {
        if let Some((_, _, width)) = get(name) {
            for (what, max) in [
                ("MAX_COUNT", u64::from(sdma::MAX_COUNT)),
                (
                    "GFX12.sdma_max_copy_bytes - 1",
                    GFX12.sdma_max_copy_bytes - 1,
                ),
            ] {
                if max >= 1 << width {
                    mismatches.push(format!("{what} {max:#x} overflows {name} ({width} bits)"));
                }
            }
        }
    }
    // A GCR_REQ as core encodes it, read back where SDMA 6/7 reads each field.
    let req = GcrReq {
        sub_op: 0,
        base_va: 0xabcd_1234_5680,
        limit_va: 0x1234_5678_9a80,
        gcr: GcrCntl(0x5_a5a5),
        vmid: 9,
    };
    let mut b = [0u32; 8];
    let len = sdma::gcr_req(&mut b, &req).unwrap_or(0);
    let pkt = &b[..len];
    let gcr = u64::from(req.gcr.raw());
    for (name, want) in [
        ("SDMA_PKT_GCR_REQ_HEADER_op", u64::from(sdma::op::GCR_REQ)),
        (
            "SDMA_PKT_GCR_REQ_PAYLOAD1_base_va_31_7",
            (req.base_va & 0xffff_ffff) >> 7,
        ),
        ("SDMA_PKT_GCR_REQ_PAYLOAD2_base_va_47_32", req.base_va >> 32),
        ("SDMA_PKT_GCR_REQ_PAYLOAD2_gcr_control_15_0", gcr & 0xffff),
        ("SDMA_PKT_GCR_REQ_PAYLOAD3_gcr_control_18_16", gcr >> 16),
        (
            "SDMA_PKT_GCR_REQ_PAYLOAD3_limit_va_31_7",
            (req.limit_va & 0xffff_ffff) >> 7,
        ),
        (
            "SDMA_PKT_GCR_REQ_PAYLOAD4_limit_va_47_32",
            req.limit_va >> 32,
        ),
        ("SDMA_PKT_GCR_REQ_PAYLOAD4_vmid", u64::from(req.vmid)),
    ] {
        if let Some((dw, lo, width)) = get(name) {
            let word = pkt
                .get(dw as usize)
                .map(|&w| (u64::from(w) >> lo) & ((1 << width) - 1));
            if word != Some(want) {
                mismatches.push(format!("{name}: packet has {word:?}, want {want:#x}"));
            }
        }
    }
    errors.extend(mismatches);
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    assert!(compared >= 59, "only {compared} SDMA facts compared");
}

/// (dword, lo, width, name) of a core bitfield.
const fn f<W>(dword: u32, core: Field<W>, name: &'static str) -> (u32, u32, u32, &'static str) {
    (dword, core.lo, core.hi - core.lo + 1, name)
}
