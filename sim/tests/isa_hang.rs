//! Hang detection by lack of progress (`isa/interp/hang.rs`, sim/README.md "Endless loops"):
//! with no instruction budget, a wave whose state repeats faults with its place, and long
//! legal loops, including one whose registers repeat while the memory it counts in changes,
//! run to their end. Programs assembled with `llvm-mc-19 -arch=amdgcn -mcpu=gfx1100
//! -filetype=obj` (source beside each), so the test needs no LLVM.

use hcq_sim::isa::{FlatMemory, FloatMode, Isa, IsaError, Launch, ScratchSetup, Stats, run};
use hcq_sim::stand_ins::DEFAULT_INSTRUCTION_BUDGET;
use std::time::Instant;

const BASE: u64 = 0x1_0000;
const CODE: u64 = 0x1_0000;
const OUT: u64 = 0x2_0000;

/// `s_branch -1`: a branch to itself.
const SELF_BRANCH: &[u32] = &[0xbfa0ffff];

/// A loop whose counter never changes (the increment adds 0):
///   s_mov_b32 s4, 10
/// loop:
///   v_mov_b32 v1, s4
///   s_add_u32 s4, s4, 0
///   s_cmp_lg_u32 s4, 0
///   s_cbranch_scc1 loop
///   s_endpgm
const STUCK_COUNTER: &[u32] = &[
    0xbe84008a, 0x7e020204, 0x80048004, 0xbf078004, 0xbfa2fffc, 0xbfb00000,
];

/// An endless loop that stores the same value to the same address every iteration:
///   v_mov_b32 v1, 0
///   v_mov_b32 v2, 7
/// loop:
///   global_store_b32 v1, v2, s[0:1]
///   s_waitcnt_vscnt null, 0
///   s_branch loop
const SAME_STORE: &[u32] = &[
    0x7e020280, 0x7e040287, 0xdc6a0000, 0x00000201, 0xbc7c0000, 0xbfa0fffc,
];

/// A legal loop whose registers are the same at every backward branch but one (the last):
/// the count lives in memory, loaded, incremented and stored each iteration, 0x90000 times.
///   v_mov_b32 v1, 0
/// loop:
///   global_load_b32 v2, v1, s[0:1]
///   s_waitcnt vmcnt(0)
///   v_add_nc_u32 v2, 1, v2
///   global_store_b32 v1, v2, s[0:1]
///   s_waitcnt_vscnt null, 0
///   v_cmp_gt_u32 vcc_lo, 0x90000, v2
///   v_mov_b32 v2, 0
///   s_cbranch_vccnz loop
///   s_endpgm
const MEMORY_COUNTER: &[u32] = &[
    0x7e020280, 0xdc520000, 0x02000001, 0xbf8903f7, 0x4a040481, 0xdc6a0000, 0x00000201, 0xbc7c0000,
    0x7c9804ff, 0x00090000, 0x7e040280, 0xbfa4fff5, 0xbfb00000,
];

/// A long legal loop: 0x500000 iterations of a scalar counter (~15.7 M instructions in one
/// wave, past any budget the simulator used to impose by default at its scale), then stores
/// the count.
///   s_mov_b32 s4, 0
/// loop:
///   s_add_u32 s4, s4, 1
///   s_cmp_lt_u32 s4, 0x500000
///   s_cbranch_scc1 loop
///   v_mov_b32 v1, 0
///   v_mov_b32 v2, s4
///   global_store_b32 v1, v2, s[0:1]
///   s_endpgm
const LONG_LOOP: &[u32] = &[
    0xbe840080, 0x80048104, 0xbf0aff04, 0x00500000, 0xbfa2fffc, 0x7e020280, 0x7e040204, 0xdc6a0000,
    0x00000201, 0xbfb00000,
];

/// Polls the dword at OUT + 4 until it is not 0:
///   v_mov_b32 v1, 0
/// loop:
///   global_load_b32 v2, v1, s[0:1] offset:4
///   s_waitcnt vmcnt(0)
///   v_cmp_eq_u32 vcc_lo, 0, v2
///   s_cbranch_vccnz loop
///   s_endpgm
const POLL: &[u32] = &[
    0x7e020280, 0xdc520004, 0x02000001, 0xbf8903f7, 0x7c940480, 0xbfa4fffb, 0xbfb00000,
];

fn launch() -> Launch {
    Launch {
        isa: Isa::Gfx11,
        gfx940: true,
        pgm: CODE,
        wave64: false,
        user_sgprs: vec![OUT as u32, (OUT >> 32) as u32],
        // USER_SGPR_COUNT 2.
        rsrc2: 2 << 1,
        local: [32, 1, 1],
        groups: [1, 1, 1],
        lds_bytes: 256,
        vgprs: 16,
        scratch: ScratchSetup::default(),
        scratch_waves: 0,
        accum_offset: 0,
        float: FloatMode {
            denorm32: true,
            denorm16_64: true,
        },
        budget: DEFAULT_INSTRUCTION_BUDGET,
        clock: 0,
        xcc: Default::default(),
    }
}

fn exec(code: &[u32], l: &Launch) -> (Result<Stats, IsaError>, FlatMemory) {
    let mem = FlatMemory::new(BASE, 0x2_0000);
    let bytes: Vec<u8> = code.iter().flat_map(|w| w.to_le_bytes()).collect();
    mem.poke(CODE, &bytes).unwrap();
    (run(l, &mem), mem)
}

fn out(mem: &FlatMemory) -> u32 {
    let mut b = [0u8; 4];
    mem.peek(OUT, &mut b).unwrap();
    u32::from_le_bytes(b)
}

#[test]
fn there_is_no_default_budget() {
    assert_eq!(DEFAULT_INSTRUCTION_BUDGET, u64::MAX);
}

#[test]
fn a_branch_to_itself_is_an_endless_loop_with_its_place() {
    let e = exec(SELF_BRANCH, &launch()).0.unwrap_err().to_string();
    assert!(e.contains("endless loop: every 1 instructions"), "{e}");
    assert!(
        e.contains("at kernel offset 0x0 (program address 0x10000), wave 0 of workgroup [0, 0, 0]"),
        "{e}"
    );
}

#[test]
fn a_loop_whose_counter_never_changes_is_an_endless_loop() {
    let e = exec(STUCK_COUNTER, &launch()).0.unwrap_err().to_string();
    assert!(e.contains("endless loop: every 4 instructions"), "{e}");
    // The place is inside the loop (kernel offsets 0x4..0x14).
    assert!(e.contains("wave 0 of workgroup [0, 0, 0]"), "{e}");
    assert!(
        ["0x4 ", "0x8 ", "0xc ", "0x10 "]
            .iter()
            .any(|o| e.contains(&format!("at kernel offset {o}"))),
        "{e}"
    );
}

#[test]
fn a_loop_rewriting_the_same_bytes_is_an_endless_loop() {
    let (r, mem) = exec(SAME_STORE, &launch());
    let e = r.unwrap_err().to_string();
    assert!(
        e.contains("endless loop: every 3 instructions") && e.contains("rewriting the same bytes"),
        "{e}"
    );
    assert_eq!(out(&mem), 7);
}

#[test]
fn a_loop_counting_in_memory_runs_to_its_end() {
    // Its registers repeat at every backward branch; only memory tells the iterations apart.
    let (r, mem) = exec(MEMORY_COUNTER, &launch());
    let st = r.unwrap();
    assert_eq!(out(&mem), 0x90000);
    assert_eq!(st.wave_instructions, 1 + 8 * 0x90000 + 1);
}

#[test]
fn a_long_legal_loop_runs_to_its_end() {
    let (r, mem) = exec(LONG_LOOP, &launch());
    let st = r.unwrap();
    assert_eq!(out(&mem), 0x50_0000);
    assert!(st.wave_instructions > 15_000_000, "{st:?}");
}

#[test]
fn a_wave_polling_memory_nothing_writes_is_reported_after_the_grace() {
    let t = Instant::now();
    let e = exec(POLL, &launch()).0.unwrap_err().to_string();
    assert!(
        e.contains("endless loop: every 4 instructions") && e.contains("polling memory"),
        "{e}"
    );
    assert!(t.elapsed().as_secs_f64() >= 2.0, "{:?}", t.elapsed());
}

#[test]
fn a_budget_the_user_sets_still_stops_a_wave() {
    let mut l = launch();
    l.budget = 5000;
    let e = exec(LONG_LOOP, &l).0.unwrap_err().to_string();
    assert!(
        e.contains("exceeded its instruction budget of 5000 wave instructions (set by HCQ_SIM_INSTRUCTION_BUDGET"),
        "{e}"
    );
}
