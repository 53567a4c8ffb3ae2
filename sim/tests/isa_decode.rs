//! The decoder against LLVM's disassembler: every instruction of every fixture, of the
//! ordinary compute kernels in `isa_golden/compute.cl` and `packed.cl` (clang-19) and of
//! `extra-gfx1100.s`, `extra-gfx1201.s` and `extra-gfx9.s` (gfx90a/gfx942 AGPR, DPP and
//! packed-f32 forms)
//! (golden text from `scripts/isa-golden.sh`, i.e. `llvm-objdump-19 -d`) decodes to the same
//! mnemonic and operands, with the same length, on every target.

use hcq_sim::isa::{Isa, decode::decode, disasm::disasm_target};

fn golden(name: &str) -> Vec<(String, Vec<u32>)> {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/isa_golden")
        .join(name);
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    text.lines()
        .map(|l| {
            let (asm, rest) = l.split_once("//").unwrap();
            let words = rest.split_once(':').unwrap().1;
            let words = words
                .split_whitespace()
                .map(|w| u32::from_str_radix(w, 16).unwrap())
                .collect();
            (asm.split_whitespace().collect::<Vec<_>>().join(" "), words)
        })
        .collect()
}

/// Every fixture kernel built for `target` (`core/tests/fixtures/kernels/<stem>-<target>.co`):
/// a fixture added to `kernels/` is checked without editing this file (its golden text must exist).
fn fixtures(target: &str) -> Vec<String> {
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../core/tests/fixtures/kernels");
    let suffix = format!("-{target}.co");
    let mut v: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            name.strip_suffix(&suffix).map(str::to_owned)
        })
        .collect();
    v.sort();
    assert!(v.len() >= 7, "{target}: fixtures {v:?}");
    v
}

/// Mismatches between the decoder and the golden text of `files`.
fn check<S: AsRef<str>>(isa: Isa, target: &str, files: &[S]) -> (usize, Vec<String>) {
    let mut n = 0;
    let mut bad = Vec::new();
    for f in files {
        let f = f.as_ref();
        for (want, words) in golden(&format!("{f}-{target}.txt")) {
            n += 1;
            let w = |k: usize| words.get(k).copied().unwrap_or(0);
            let i = match decode(isa, &[w(0), w(1), w(2)]) {
                Ok(i) => i,
                Err(e) => {
                    bad.push(format!("{f}: {want}: {e:?}"));
                    continue;
                }
            };
            if usize::from(i.len) != 4 * words.len() {
                bad.push(format!(
                    "{f}: {want}: {} bytes, LLVM {}",
                    i.len,
                    4 * words.len()
                ));
            }
            let got = disasm_target(isa, target == "gfx942", &i, isa == Isa::Gfx9);
            if got != want {
                bad.push(format!("{f}: got  {got}\n{f}: want {want}"));
            }
        }
    }
    (n, bad)
}

#[test]
fn every_gfx1100_fixture_instruction_matches_llvm_objdump() {
    let (n, bad) = check(Isa::Gfx11, "gfx1100", &fixtures("gfx1100"));
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    assert!(n > 300, "{n} instructions");
}

#[test]
fn a_wider_gfx11_instruction_set_matches_llvm_objdump() {
    let (n, bad) = check(Isa::Gfx11, "gfx1100", &["extra"]);
    assert!(
        bad.is_empty(),
        "{} of {n} differ:\n{}",
        bad.len(),
        bad.join("\n")
    );
    assert!(n > 150, "{n} instructions");
}

#[test]
fn a_wider_gfx12_instruction_set_matches_llvm_objdump() {
    let (n, bad) = check(Isa::Gfx12, "gfx1201", &["extra"]);
    assert!(
        bad.is_empty(),
        "{} of {n} differ:\n{}",
        bad.len(),
        bad.join("\n")
    );
    assert!(n >= 40, "{n} instructions");
}

#[test]
fn every_gfx1201_fixture_instruction_matches_llvm_objdump() {
    let (n, bad) = check(Isa::Gfx12, "gfx1201", &fixtures("gfx1201"));
    assert!(
        bad.is_empty(),
        "{} of {n} differ:\n{}",
        bad.len(),
        bad.join("\n")
    );
    assert!(n > 250, "{n} instructions");
}

#[test]
fn the_agpr_forms_of_gfx90a_and_gfx942_match_llvm_objdump() {
    for target in ["gfx90a", "gfx942"] {
        let (n, bad) = check(Isa::Gfx9, target, &["extra"]);
        assert!(
            bad.is_empty(),
            "{target}: {} of {n} differ:\n{}",
            bad.len(),
            bad.join("\n")
        );
        assert!(n >= 34, "{target}: {n} instructions");
    }
}

#[test]
fn every_gfx90a_and_gfx942_fixture_instruction_matches_llvm_objdump() {
    for target in ["gfx90a", "gfx942"] {
        let (n, bad) = check(Isa::Gfx9, target, &fixtures(target));
        assert!(
            bad.is_empty(),
            "{target}: {} of {n} differ:\n{}",
            bad.len(),
            bad.join("\n")
        );
        assert!(n > 150, "{target}: {n} instructions");
    }
}

#[test]
fn compiled_compute_kernels_match_llvm_objdump_on_every_target() {
    for (isa, target) in [
        (Isa::Gfx11, "gfx1100"),
        (Isa::Gfx12, "gfx1201"),
        (Isa::Gfx9, "gfx90a"),
        (Isa::Gfx9, "gfx942"),
    ] {
        let (n, bad) = check(isa, target, &["compute", "packed"]);
        assert!(
            bad.is_empty(),
            "{target}: {} of {n} differ:\n{}",
            bad.len(),
            bad.join("\n")
        );
        assert!(n > 400, "{target}: {n} instructions");
    }
}
