//! The HDP-flush registers and masks core uses, compared per target with the Linux kernel's NBIO
//! code: `tests/reference/linux_nbio_hdp.tsv`, made by `scripts/extract-nbio-hdp.py` from
//! `amdgpu_discovery.c` (which `nbio_v*.c` a target's NBIO version selects), that file's
//! `get_hdp_flush_{req,done}_offset` and `*_hdp_flush_reg`, the NBIO register headers and the
//! ASIC's NBIO segment base. The test parses the file itself and shares no code with core.
//!
//! Core keeps one `ArchInfo` per family; the NBIO version differs per chip inside a family
//! (gfx90a: NBIO 7.4, gfx942: 7.9), so every target row is checked against its family's table,
//! and the encoded PM4 WAIT_REG_MEM and SDMA POLL_REGMEM are read back at the dwords the kernel
//! writes (`gfx_v*_ring_emit_hdp_flush` / `sdma_v*_ring_emit_hdp_flush`).

use hcq_core::arch::{Family, GfxTarget};
use hcq_core::{pm4, sdma};
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

/// One row of the reference file.
struct Row {
    target: String,
    role: String,
    symbol: String,
    offset: Option<u32>,
    segment_base: Option<u32>,
    value: u32,
}

fn num(s: &str) -> Option<u32> {
    if s == "-" {
        return None;
    }
    Some(
        match s.strip_prefix("0x") {
            Some(h) => u32::from_str_radix(h, 16),
            None => s.parse(),
        }
        .unwrap_or_else(|e| panic!("{s:?}: {e}")),
    )
}

fn load() -> Vec<Row> {
    let name = "linux_nbio_hdp.tsv";
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/reference")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let source = text
        .lines()
        .find(|l| l.starts_with("# source: "))
        .unwrap_or_else(|| panic!("{name} names no source"));
    assert!(source.contains('@'), "{name}: the source names no commit");
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let c: Vec<&str> = l.split('\t').collect();
            assert_eq!(c.len(), 9, "{name}: {l:?}");
            Row {
                target: c[0].to_owned(),
                role: c[2].to_owned(),
                symbol: c[3].to_owned(),
                offset: num(c[4]),
                segment_base: num(c[6]),
                value: num(c[8]).unwrap_or_else(|| panic!("{name}: no value in {l:?}")),
            }
        })
        .collect()
}

/// target -> role -> row.
fn by_target(rows: &[Row]) -> BTreeMap<&str, BTreeMap<&str, &Row>> {
    let mut m: BTreeMap<&str, BTreeMap<&str, &Row>> = BTreeMap::new();
    for r in rows {
        let prev = m
            .entry(r.target.as_str())
            .or_default()
            .insert(r.role.as_str(), r);
        assert!(prev.is_none(), "{} {}: two rows", r.target, r.role);
    }
    m
}

#[test]
fn hdp_flush_registers_match_linux_per_target() {
    let rows = load();
    let targets = by_target(&rows);
    // The targets hcq is built for, one or more per family.
    for t in ["gfx90a", "gfx942", "gfx1030", "gfx1100", "gfx1201"] {
        assert!(targets.contains_key(t), "{t}: no rows");
    }
    let mut families = BTreeSet::new();
    let mut failures = Vec::new();
    for (target, roles) in &targets {
        let arch = GfxTarget::parse(target)
            .unwrap_or_else(|e| panic!("{target}: {e}"))
            .info();
        families.insert(arch.family);
        for (role, core) in [
            ("hdp_flush_req", arch.hdp_flush_req),
            ("hdp_flush_done", arch.hdp_flush_done),
        ] {
            let r = roles
                .get(role)
                .unwrap_or_else(|| panic!("{target}: no {role} row"));
            // The row's own arithmetic: SOC15_REG_OFFSET = segment base + offset.
            let (off, base) = (r.offset.unwrap_or(u32::MAX), r.segment_base.unwrap_or(0));
            assert_eq!(off.wrapping_add(base), r.value, "{target} {role}: row sum");
            if core != r.value {
                failures.push(format!(
                    "{target} {role}: core {core:#x}, Linux {} = {:#x}",
                    r.symbol, r.value
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let all = [Family::Gfx9, Family::Gfx10, Family::Gfx11, Family::Gfx12];
    assert_eq!(families, all.into_iter().collect(), "families covered");
}

#[test]
fn sdma0_mask_matches_linux() {
    let rows = load();
    let targets = by_target(&rows);
    let mut families = BTreeSet::new();
    for (target, roles) in &targets {
        // Targets whose sh_mask header could not be read have no mask rows (the file says
        // which); every family must still be covered by one that has.
        let Some(r) = roles.get("ref_and_mask_sdma0") else {
            continue;
        };
        let arch = GfxTarget::parse(target)
            .unwrap_or_else(|e| panic!("{target}: {e}"))
            .info();
        families.insert(arch.family);
        assert_eq!(
            arch.sdma0_hdp_flush_mask, r.value,
            "{target}: core's SDMA0 bit vs {}",
            r.symbol
        );
        // SDMA engine N flushes with sdma0 << N (sdma_v*_ring_emit_hdp_flush): sdma1 is next.
        let s1 = roles
            .get("ref_and_mask_sdma1")
            .unwrap_or_else(|| panic!("{target}: sdma0 row without sdma1"));
        assert_eq!(s1.value, r.value << 1, "{target}: sdma1 is sdma0 << 1");
        // The CP bits (cp0..cp9) lie below it: a PM4 flush never collides with SDMA0's bit.
        for n in 0..10 {
            let cp = roles
                .get(format!("ref_and_mask_cp{n}").as_str())
                .unwrap_or_else(|| panic!("{target}: no cp{n} row"));
            assert_eq!(cp.value & r.value, 0, "{target}: cp{n} overlaps sdma0");
        }
    }
    let all = [Family::Gfx9, Family::Gfx10, Family::Gfx11, Family::Gfx12];
    assert_eq!(
        families,
        all.into_iter().collect(),
        "families with mask rows"
    );
}

/// The packets carry the registers where the kernel puts them: PM4 WAIT_REG_MEM (register form,
/// write then wait) dw2 = REQ, dw3 = DONE; SDMA POLL_REGMEM with HDP_FLUSH dw1 = DONE << 2,
/// dw2 = REQ << 2, dw3 = dw4 = the engine's bit.
#[test]
fn hdp_flush_packets_carry_the_linux_registers() {
    let rows = load();
    let targets = by_target(&rows);
    for (target, roles) in &targets {
        let arch = GfxTarget::parse(target)
            .unwrap_or_else(|e| panic!("{target}: {e}"))
            .info();
        let req = roles["hdp_flush_req"].value;
        let done = roles["hdp_flush_done"].value;

        let mut b = [0u32; pm4::WAIT_REG_MEM_DWORDS];
        let n = pm4::wait_reg_mem(&mut b, &pm4::hdp_flush_wait(arch)).expect("fits");
        assert_eq!(n, pm4::WAIT_REG_MEM_DWORDS);
        assert_eq!(
            (b[2], b[3]),
            (req, done),
            "{target}: WAIT_REG_MEM registers"
        );

        let mask = roles
            .get("ref_and_mask_sdma0")
            .map_or(arch.sdma0_hdp_flush_mask, |r| r.value);
        let mut s = [0u32; sdma::POLL_REGMEM_DWORDS];
        let n = sdma::hdp_flush(&mut s, arch, mask).expect("fits");
        assert_eq!(n, sdma::POLL_REGMEM_DWORDS);
        assert_eq!(
            (s[1], s[2], s[3], s[4]),
            (done << 2, req << 2, mask, mask),
            "{target}: POLL_REGMEM words"
        );
    }
}
