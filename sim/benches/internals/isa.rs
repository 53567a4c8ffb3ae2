//! `sim_isa_lane_instr_per_s`: the simulator's instruction interpreter over the gfx1100
//! fixture kernels (vector_add, fill, lds_reverse, scratch_sum), each launched as the driver
//! programs it (USER_DATA = kernarg pointer, RSRC1/2 from the descriptor, LDS granules), on
//! one flat block of memory. Counts instructions per active lane (scalar ones count 1).

use core::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use hcq_core::codeobj::CodeObject;
use hcq_sim::isa::{FlatMemory, FloatMode, Isa, Launch, ScratchSetup, run_threads};

use super::WorkError;

const BASE: u64 = 0x100_0000;
const CODE: u64 = BASE;
const ARGS: u64 = BASE + 0x1_0000;
const BUF: u64 = BASE + 0x2_0000;
/// Elements per array (and work-items per dispatch).
const N: u32 = 1 << 16;
const SCRATCH: u64 = BUF + 4 * 4 * N as u64;
const SCRATCH_WAVE_BYTES: u64 = 128 * 32;
/// Scratch wave slots (COMPUTE_TMPRING_SIZE.WAVES): the 64 KiB past SCRATCH.
const SCRATCH_WAVES: u32 = 16;
const LEN: usize = 0x2_0000 + 4 * 4 * N as usize + 0x1_0000;

/// The gfx1100 fixture `stem` (`vector_add`, `fill`, `lds_reverse`, `scratch`), read from the
/// repository's fixtures (`core/tests/fixtures/kernels/`, built by `scripts/build-kernels.sh`):
/// those of the checkout the bench was built in, else those under the current directory (a
/// copied bench binary run from another checkout's root).
fn fixture(stem: &str) -> Result<Vec<u8>, WorkError> {
    let name = format!("{stem}-gfx1100.co");
    let built = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../core/tests/fixtures/kernels")
        .join(&name);
    let path = if built.exists() {
        built
    } else {
        std::path::Path::new("core/tests/fixtures/kernels").join(&name)
    };
    std::fs::read(&path).map_err(|e| {
        WorkError::Sim(format!(
            "isa bench: reading {}: {e} (run it from a checkout of the repository)",
            path.display()
        ))
    })
}

fn sim_err(e: impl core::fmt::Display) -> WorkError {
    WorkError::Sim(format!("isa bench: {e}"))
}

/// One dispatch of `kernel` from `stem` with `args` over `N` work-items: the code object's
/// image (to load at `CODE`), the kernargs' bytes (at `ARGS`) and the launch.
fn launch(stem: &str, kernel: &str, args: &[u32]) -> Result<(Vec<u8>, Vec<u8>, Launch), WorkError> {
    let co = fixture(stem)?;
    let obj = CodeObject::parse(&co).map_err(sim_err)?;
    let mut image = vec![0u8; usize::try_from(obj.image_size()).map_err(sim_err)?];
    obj.load_into(&mut image).map_err(sim_err)?;
    let k = obj.kernel(kernel).map_err(sim_err)?;
    let a: Vec<u8> = args.iter().flat_map(|w| w.to_le_bytes()).collect();
    let rsrc2 = k.descriptor.compute_pgm_rsrc2 | k.lds_granules() << 15;
    let usc = (rsrc2 >> 1) & 0x1f;
    let mut user = vec![0u32; usc as usize];
    // CAST: halves of the kernarg address.
    user[..2].copy_from_slice(&[ARGS as u32, (ARGS >> 32) as u32]);
    let l = Launch {
        isa: Isa::Gfx11,
        gfx940: true,
        pgm: CODE + k.entry_offset,
        wave64: false,
        user_sgprs: user,
        rsrc2,
        local: [64, 1, 1],
        groups: [N / 64, 1, 1],
        lds_bytes: k.lds_granules() * hcq_core::codeobj::LDS_GRANULE_BYTES,
        vgprs: ((k.descriptor.compute_pgm_rsrc1 & 0x3f) + 1) * 8,
        scratch: ScratchSetup {
            base: SCRATCH,
            wave_bytes: SCRATCH_WAVE_BYTES,
        },
        scratch_waves: SCRATCH_WAVES,
        accum_offset: 0,
        float: FloatMode::from_rsrc1(k.descriptor.compute_pgm_rsrc1),
        budget: u64::MAX,
        clock: 0,
        xcc: Default::default(),
    };
    Ok((image, a, l))
}

/// Lane instructions of the last one-thread pass (the callgrind example divides its
/// instruction count by this).
static LANES: AtomicU64 = AtomicU64::new(0);

/// Lane instructions of the last one-thread pass of [`lane_instr_per_s_threads`].
#[allow(dead_code, reason = "the callgrind example's entry")]
pub fn last_lanes() -> u64 {
    LANES.load(Ordering::Relaxed)
}

/// Lane instructions per second over the fixture kernels on one host thread (the median of a
/// few passes, [`lane_instr_per_s_threads`]).
///
/// # Errors
/// A fixture that does not load or a dispatch that faults.
#[allow(dead_code, reason = "the callgrind example's entry")]
pub fn lane_instr_per_s(quick: bool) -> Result<f64, WorkError> {
    let r = lane_instr_per_s_threads(quick, &[])?;
    Ok(r.first().copied().unwrap_or(f64::NAN))
}

/// Shortest timed pass (not in quick mode): a pass repeats the four dispatches until this much
/// time was spent in them, so that one pass is not a few milliseconds, as a single round of the
/// four dispatches is on one thread (and far less on 16), where a timer tick, a page fault or
/// a neighbour's burst weighs on the figure.
const MIN_PASS_S: f64 = 0.05;

/// [`lane_instr_per_s`] on one host thread, then on each of `threads`: the median over passes
/// (5, or 1 in quick mode) of lane instructions over the seconds spent in the dispatches. Each
/// pass repeats the four dispatches until [`MIN_PASS_S`] were spent in them (only the
/// dispatches are timed: loading a kernel's code and arguments is not); what one lane runs is
/// the same as in one round. The passes alternate between the counts, so a machine whose load
/// changes meanwhile weighs on each alike.
///
/// # Errors
/// A fixture that does not load or a dispatch that faults.
pub fn lane_instr_per_s_threads(quick: bool, threads: &[usize]) -> Result<Vec<f64>, WorkError> {
    let mem = FlatMemory::new(BASE, LEN);
    // CAST: addresses split into dwords.
    let lo = |a: u64| a as u32;
    let hi = |a: u64| (a >> 32) as u32;
    let (a, b, c) = (BUF, BUF + 4 * u64::from(N), BUF + 8 * u64::from(N));
    let kernels = [
        launch(
            "vector_add",
            "vector_add",
            &[lo(a), hi(a), lo(b), hi(b), lo(c), hi(c), N],
        )?,
        launch("fill", "fill", &[lo(a), hi(a), 7, N])?,
        launch("lds_reverse", "lds_reverse", &[lo(a), hi(a)])?,
        launch("scratch", "scratch_sum", &[lo(c), hi(c), 3])?,
    ];
    let (passes, min_s) = if quick { (1, 0.0) } else { (5, MIN_PASS_S) };
    let counts: Vec<usize> = core::iter::once(1).chain(threads.iter().copied()).collect();
    let mut rates = vec![Vec::with_capacity(passes); counts.len()];
    for _ in 0..passes {
        for (r, &n) in rates.iter_mut().zip(&counts) {
            let mut lanes = 0u64;
            let mut secs = 0.0;
            loop {
                for (image, args, l) in &kernels {
                    // The fixtures share the code address: load this one, then time only the run.
                    mem.poke(CODE, image).map_err(sim_err)?;
                    mem.poke(ARGS, args).map_err(sim_err)?;
                    let t = Instant::now();
                    let st = run_threads(l, &mem, true, n).map_err(sim_err)?;
                    secs += t.elapsed().as_secs_f64();
                    lanes += st.lane_instructions;
                }
                if secs >= min_s {
                    break;
                }
            }
            if n == 1 {
                LANES.store(lanes, Ordering::Relaxed);
            }
            // CAST: instruction counts are far below 2^53.
            r.push(lanes as f64 / secs);
        }
    }
    Ok(rates
        .into_iter()
        .map(|mut r| {
            r.sort_by(f64::total_cmp);
            r.get(r.len() / 2).copied().unwrap_or(f64::NAN)
        })
        .collect())
}
