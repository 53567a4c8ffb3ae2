//! Differential test of single instructions against an executor that shares no code with the
//! interpreter: tinygrad's RDNA emulator (`test/mockgpu/amd/emu.py`, which compiles the
//! pseudo-code of AMD's ISA documents), pinned at the commit `scripts/isa-diff.py` names. The
//! script ran every SOP1/SOP2/SOPC/VOP1/VOP2/VOPC/VOP3/VOP3P instruction of LLVM's gfx1100 and
//! gfx1201 lists on it with seeded random and edge operands (denormals, NaN payloads, +-0,
//! +-inf, integer extremes, shift counts at and above the width), modifiers (abs, neg, clamp,
//! op_sel) and EXEC masks with inactive lanes, and wrote the registers before and after to
//! `tests/isa_diff/<target>.tsv`. This test replays every line on hcq-sim and compares every
//! register bit for bit; it needs neither Python nor the reference.
//!
//! Disagreements are resolved against the RDNA3/RDNA4 ISA guides and recorded in
//! `tests/isa_diff/verdicts-<target>.tsv` (the reference deviates from the guide, the guide
//! leaves the bits undefined, or hcq-sim deviates and the entry names what is left to do);
//! the list is checked exactly, so an entry that stops disagreeing must leave it. Where
//! hcq-sim was wrong, the interpreter was fixed. An instruction the interpreter does not
//! execute yet must be a gap of `isa-list/gaps-<target>.txt`.

use hcq_sim::isa::{FlatMemory, FloatMode, Isa, Launch, ScratchSetup, run};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const LANES: usize = 32;
const BASE: u64 = 0x1_0000;
const CODE: u64 = BASE;
const IN: u64 = BASE + 0x1000;
const OUT: u64 = BASE + 0x2000;
/// VGPRs loaded before the instruction (sources v10..v15, destination v20/v21 with OLD).
const VGPRS: [u32; 8] = [10, 11, 12, 13, 14, 15, 20, 21];
/// SGPRs set before and read after (s106 = VCC_LO, s125 = M0).
const SGPRS: [u32; 12] = [10, 11, 12, 13, 14, 15, 20, 21, 24, 25, 106, 125];

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/isa_diff")
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn hex(s: &str) -> u32 {
    u32::from_str_radix(s, 16).unwrap_or_else(|e| panic!("{s:?}: {e}"))
}

/// The value of v20/v21 before the instruction (scripts/isa-diff.py `old_v`).
fn old_v(reg: u32, lane: usize) -> u32 {
    0xDEAD_0000 | reg << 8 | lane as u32
}

/// A wave's registers as the test sees them.
#[derive(Clone, PartialEq, Eq, Debug)]
struct State {
    s: BTreeMap<u32, u32>,
    exec: u32,
    scc: u32,
    v: BTreeMap<u32, [u32; LANES]>,
}

/// One line of the golden file.
struct Case {
    family: String,
    mnemonic: String,
    kind: String,
    words: Vec<u32>,
    before: State,
    after: State,
}

fn parse(line: &str) -> Case {
    let f: Vec<&str> = line.split('\t').collect();
    assert_eq!(f.len(), 7, "golden file: {line}");
    let mut before = State {
        s: BTreeMap::new(),
        exec: 0,
        scc: 0,
        v: VGPRS.iter().map(|&r| (r, [0; LANES])).collect(),
    };
    for r in [20, 21] {
        let lanes = before.v.get_mut(&r).unwrap();
        for (l, x) in lanes.iter_mut().enumerate() {
            *x = old_v(r, l);
        }
    }
    let set = |st: &mut State, item: &str| {
        let (k, val) = item.split_once('=').unwrap();
        match k {
            "exec" => st.exec = hex(val),
            "scc" => st.scc = hex(val),
            _ if k.starts_with('s') => {
                st.s.insert(k[1..].parse().unwrap(), hex(val));
            }
            _ if k.starts_with('v') => {
                let lanes: Vec<u32> = val.split(',').map(hex).collect();
                st.v.insert(k[1..].parse().unwrap(), lanes.try_into().unwrap());
            }
            _ => panic!("golden file: register {k}"),
        }
    };
    for item in f[4].split(' ') {
        set(&mut before, item);
    }
    if f[5] != "-" {
        for item in f[5].split(' ') {
            set(&mut before, item);
        }
    }
    let mut after = before.clone();
    for item in f[6].split(' ') {
        set(&mut after, item);
    }
    Case {
        family: f[0].into(),
        mnemonic: f[1].into(),
        kind: f[2].into(),
        words: f[3].split(' ').map(hex).collect(),
        before,
        after,
    }
}

/// `global_load_b32 v{reg}, v1, s[0:1] offset:{off}` for the ISA.
fn load(isa: Isa, reg: u32, off: u32) -> Vec<u32> {
    match isa {
        Isa::Gfx12 => vec![0xEE05_0000, reg, 1 | off << 8],
        _ => vec![0xDC52_0000 | off, 1 | reg << 24],
    }
}

/// `global_store_b32 v1, v{reg}, s[2:3] offset:{off}` for the ISA.
fn store(isa: Isa, reg: u32, off: u32) -> Vec<u32> {
    match isa {
        Isa::Gfx12 => vec![0xEE06_8002, reg << 23, 1 | off << 8],
        _ => vec![0xDC6A_0000 | off, 1 | reg << 8 | 2 << 16],
    }
}

/// The program that sets `st`, runs `words` and stores every compared register (encodings
/// from `llvm-mc-19 -mcpu=gfx1100/gfx1201 -show-encoding`; the SALU and VOP1 ones are the
/// same on both).
fn program(isa: Isa, words: &[u32], st: &State) -> Vec<u32> {
    // v_lshlrev_b32 v1, 2, v0
    let mut c = vec![0x3002_0082];
    for (k, r) in VGPRS.iter().enumerate() {
        c.extend(load(isa, *r, k as u32 * 128));
    }
    // s_waitcnt vmcnt(0) / s_wait_loadcnt 0
    c.push(if isa == Isa::Gfx12 {
        0xBFC0_0000
    } else {
        0xBF89_03F7
    });
    for (r, x) in &st.s {
        c.extend([0xBE80_00FF | r << 16, *x]); // s_mov_b32 s{r}, x
    }
    // s_cmp_eq_u32 0, 0 (SCC = 1) or 0, 1 (SCC = 0)
    c.push(if st.scc == 1 {
        0xBF06_8080
    } else {
        0xBF06_8180
    });
    c.extend([0xBEFE_00FF, st.exec]); // s_mov_b32 exec_lo, exec
    c.extend_from_slice(words);
    c.push(0xBEA8_007E); // s_mov_b32 s40, exec_lo
    c.push(0x9829_8081); // s_cselect_b32 s41, 1, 0
    c.push(0xBEFE_00C1); // s_mov_b32 exec_lo, -1
    for (k, r) in VGPRS.iter().enumerate() {
        c.extend(store(isa, *r, k as u32 * 128));
    }
    for (k, r) in SGPRS.iter().chain(&[40, 41]).enumerate() {
        c.push(0x7E04_0200 | r); // v_mov_b32 v2, s{r}
        c.extend(store(isa, 2, (VGPRS.len() + k) as u32 * 128));
    }
    c.push(0xBFB0_0000); // s_endpgm
    c
}

fn words_le(w: &[u32]) -> Vec<u8> {
    w.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Runs one case on hcq-sim: the registers after, or the interpreter's error.
fn simulate(isa: Isa, c: &Case) -> Result<State, String> {
    let mem = FlatMemory::new(BASE, 0x4000);
    mem.poke(CODE, &words_le(&program(isa, &c.words, &c.before)))
        .unwrap();
    for (k, r) in VGPRS.iter().enumerate() {
        mem.poke(IN + 128 * k as u64, &words_le(&c.before.v[r]))
            .unwrap();
    }
    let l = Launch {
        isa,
        gfx940: true,
        pgm: CODE,
        wave64: false,
        user_sgprs: vec![IN as u32, 0, OUT as u32, 0],
        // USER_SGPR_COUNT 4.
        rsrc2: 4 << 1,
        local: [LANES as u32, 1, 1],
        groups: [1, 1, 1],
        lds_bytes: 0,
        vgprs: 32,
        scratch: ScratchSetup::default(),
        scratch_waves: 0,
        accum_offset: 0,
        float: FloatMode {
            denorm32: true,
            denorm16_64: true,
        },
        budget: 1 << 12,
        clock: 0,
        xcc: Default::default(),
    };
    run(&l, &mem).map_err(|e| e.to_string())?;
    let word = |off: u64| {
        let mut b = [0u8; 4];
        mem.peek(OUT + off, &mut b).unwrap();
        u32::from_le_bytes(b)
    };
    let mut st = State {
        s: BTreeMap::new(),
        exec: 0,
        scc: 0,
        v: BTreeMap::new(),
    };
    for (k, r) in VGPRS.iter().enumerate() {
        let mut lanes = [0; LANES];
        for (l, x) in lanes.iter_mut().enumerate() {
            *x = word(128 * k as u64 + 4 * l as u64);
        }
        st.v.insert(*r, lanes);
    }
    let sbase = 128 * VGPRS.len() as u64;
    for (k, r) in SGPRS.iter().enumerate() {
        st.s.insert(*r, word(sbase + 128 * k as u64));
    }
    st.exec = word(sbase + 128 * SGPRS.len() as u64);
    st.scc = word(sbase + 128 * (SGPRS.len() + 1) as u64);
    Ok(st)
}

/// The registers where `got` and `want` differ, for the message.
fn diff(got: &State, want: &State) -> String {
    let mut d = Vec::new();
    for (r, w) in &want.s {
        if got.s.get(r) != Some(w) {
            d.push(format!("s{r}: sim {:08x} ref {w:08x}", got.s[r]));
        }
    }
    if got.exec != want.exec {
        d.push(format!("exec: sim {:08x} ref {:08x}", got.exec, want.exec));
    }
    if got.scc != want.scc {
        d.push(format!("scc: sim {} ref {}", got.scc, want.scc));
    }
    for (r, w) in &want.v {
        for (l, (g, w)) in got.v[r].iter().zip(w).enumerate() {
            if g != w {
                d.push(format!("v{r}[{l}]: sim {g:08x} ref {w:08x}"));
            }
        }
    }
    let n = d.len();
    d.truncate(6);
    if n > 6 {
        d.push(format!("... {} more", n - 6));
    }
    d.join("; ")
}

/// A verdict: the cases (plain, mods, sgpr) that disagree, the verdict, the reason.
type Verdict = (String, String, String);

/// `mnemonic -> verdict` from the verdict list.
fn verdicts(target: &str) -> BTreeMap<String, Verdict> {
    let mut m = BTreeMap::new();
    for l in read(&dir().join(format!("verdicts-{target}.tsv"))).lines() {
        if l.starts_with('#') || l.is_empty() {
            continue;
        }
        let f: Vec<&str> = l.split('\t').collect();
        assert_eq!(f.len(), 4, "verdicts-{target}.tsv: {l}");
        assert!(
            ["reference", "undefined", "sim-open"].contains(&f[2]),
            "verdicts-{target}.tsv: {l}: the verdict is `reference` (the reference deviates from the ISA guide), `undefined` (the guide leaves these bits open) or `sim-open` (hcq-sim deviates; the reason names the follow-up)"
        );
        assert!(
            f[3].len() > 30,
            "verdicts-{target}.tsv: {l}: give the reason"
        );
        m.insert(
            f[0].to_string(),
            (f[1].to_string(), f[2].to_string(), f[3].to_string()),
        );
    }
    m
}

/// Gaps of the LLVM list (`isa-list/gaps-<target>.txt`): `family mnemonic`.
fn gaps(target: &str) -> BTreeSet<(String, String)> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("isa-list/gaps-{target}.txt"));
    read(&p)
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (f[0].to_string(), f[1].to_string())
        })
        .collect()
}

/// Replays every case of `target`'s golden file; fails on a disagreement without a verdict, a
/// stale verdict, or an instruction that does not execute and is no gap.
fn check(target: &str, isa: Isa, min_cases: usize) {
    let text = read(&dir().join(format!("{target}.tsv")));
    let cases: Vec<Case> = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(parse)
        .collect();
    assert!(cases.len() > min_cases, "{target}: {} cases", cases.len());
    let verdicts = verdicts(target);
    let gaps = gaps(target);
    // mnemonic -> (the first disagreement, the first one of each case that disagrees)
    type Seen = (String, BTreeMap<String, String>);
    let mut disagree: BTreeMap<String, Seen> = BTreeMap::new();
    let mut unexecuted: BTreeMap<(String, String), String> = BTreeMap::new();
    let mut compared = BTreeSet::new();
    for c in &cases {
        match simulate(isa, c) {
            Ok(got) => {
                compared.insert(c.mnemonic.clone());
                if got != c.after {
                    let d = format!("{} {}: {}", c.mnemonic, c.kind, diff(&got, &c.after));
                    let e = disagree
                        .entry(c.mnemonic.clone())
                        .or_insert_with(|| (d.clone(), BTreeMap::new()));
                    e.1.entry(c.kind.clone()).or_insert(d);
                }
            }
            Err(e) => {
                unexecuted.insert((c.family.clone(), c.mnemonic.clone()), e);
            }
        }
    }
    let mut bad = Vec::new();
    for (k, e) in &unexecuted {
        if !gaps.contains(k) {
            bad.push(format!(
                "{target} {} {}: does not execute and is no gap of isa-list/gaps-{target}.txt: {e}",
                k.0, k.1
            ));
        }
    }
    for (m, (d, kinds)) in &disagree {
        let kinds = kinds.keys().cloned().collect::<Vec<_>>().join(",");
        match verdicts.get(m) {
            None => bad.push(format!(
                "{target}: disagrees with the reference, no verdict in verdicts-{target}.tsv: {d} (cases {kinds})"
            )),
            Some(v) if v.0 != kinds => bad.push(format!(
                "verdicts-{target}.tsv: {m} disagrees in cases {kinds}, the verdict is for {}: {d}",
                v.0
            )),
            Some(_) => {}
        }
    }
    for m in verdicts.keys() {
        if compared.contains(m) && !disagree.contains_key(m) {
            bad.push(format!(
                "verdicts-{target}.tsv: {m} now agrees with the reference: remove its entry"
            ));
        }
        if !compared.contains(m) && !unexecuted.keys().any(|k| &k.1 == m) {
            bad.push(format!("verdicts-{target}.tsv: {m} is not in {target}.tsv"));
        }
    }
    if std::env::var_os("ISA_DIFF_VERBOSE").is_some() {
        for (d, kinds) in disagree.values() {
            let names = kinds.keys().cloned().collect::<Vec<_>>().join(",");
            eprintln!("{d} [{names}]");
            for k in kinds.values().filter(|k| *k != d) {
                eprintln!("  also {k}");
            }
        }
    }
    eprintln!(
        "isa_diff {target}: {} cases, {} instructions compared, {} disagree (all with verdicts), {} not executed (gaps)",
        cases.len(),
        compared.len(),
        disagree.len(),
        unexecuted.len()
    );
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn gfx1100_single_instructions_agree_with_the_reference() {
    check("gfx1100", Isa::Gfx11, 3000);
}

#[test]
fn gfx1201_single_instructions_agree_with_the_reference() {
    check("gfx1201", Isa::Gfx12, 3000);
}
