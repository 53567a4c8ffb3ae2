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

/// One dispatch of `kernel` from `stem` with `args` over `N` work-items.
fn launch(mem: &FlatMemory, stem: &str, kernel: &str, args: &[u32]) -> Result<Launch, WorkError> {
    let co = fixture(stem)?;
    let obj = CodeObject::parse(&co).map_err(sim_err)?;
    let mut image = vec![0u8; usize::try_from(obj.image_size()).map_err(sim_err)?];
    obj.load_into(&mut image).map_err(sim_err)?;
    mem.poke(CODE, &image).map_err(sim_err)?;
    let k = obj.kernel(kernel).map_err(sim_err)?;
    let a: Vec<u8> = args.iter().flat_map(|w| w.to_le_bytes()).collect();
    mem.poke(ARGS, &a).map_err(sim_err)?;
    let rsrc2 = k.descriptor.compute_pgm_rsrc2 | k.lds_granules() << 15;
    let usc = (rsrc2 >> 1) & 0x1f;
    let mut user = vec![0u32; usc as usize];
    // CAST: halves of the kernarg address.
    user[..2].copy_from_slice(&[ARGS as u32, (ARGS >> 32) as u32]);
    Ok(Launch {
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
    })
}

/// Lane instructions of the last one-thread pass (the callgrind example divides its
/// instruction count by this).
static LANES: AtomicU64 = AtomicU64::new(0);

/// Lane instructions of the last one-thread pass of [`lane_instr_per_s_threads`].
#[allow(dead_code, reason = "the callgrind example's entry")]
pub fn last_lanes() -> u64 {
    LANES.load(Ordering::Relaxed)
}

/// Lane instructions per second over the fixture kernels (best of a few passes) on one host
/// thread.
///
/// # Errors
/// A fixture that does not load or a dispatch that faults.
#[allow(dead_code, reason = "the callgrind example's entry")]
pub fn lane_instr_per_s(quick: bool) -> Result<f64, WorkError> {
    let r = lane_instr_per_s_threads(quick, &[])?;
    Ok(r.first().copied().unwrap_or(f64::NAN))
}

/// [`lane_instr_per_s`] on one host thread, then on each of `threads` (the passes alternate between the counts, so a machine
/// whose load changes meanwhile weighs on each alike).
///
/// # Errors
/// A fixture that does not load or a dispatch that faults.
pub fn lane_instr_per_s_threads(quick: bool, threads: &[usize]) -> Result<Vec<f64>, WorkError> {
    let mem = FlatMemory::new(BASE, LEN);
    // CAST: addresses split into dwords.
    let lo = |a: u64| a as u32;
    let hi = |a: u64| (a >> 32) as u32;
    let (a, b, c) = (BUF, BUF + 4 * u64::from(N), BUF + 8 * u64::from(N));
    let kernels: [(&str, &str, Vec<u32>); 4] = [
        (
            "vector_add",
            "vector_add",
            vec![lo(a), hi(a), lo(b), hi(b), lo(c), hi(c), N],
        ),
        ("fill", "fill", vec![lo(a), hi(a), 7, N]),
        ("lds_reverse", "lds_reverse", vec![lo(a), hi(a)]),
        ("scratch", "scratch_sum", vec![lo(c), hi(c), 3]),
    ];
    let passes = if quick { 1 } else { 5 };
    let counts: Vec<usize> = core::iter::once(1).chain(threads.iter().copied()).collect();
    let mut best = vec![0.0f64; counts.len()];
    for _ in 0..passes {
        for (b, &n) in best.iter_mut().zip(&counts) {
            let mut lanes = 0u64;
            let mut secs = 0.0;
            for (stem, kernel, args) in &kernels {
                // The fixtures share the code address: load this one, then time only the run.
                let l = launch(&mem, stem, kernel, args)?;
                let t = Instant::now();
                let st = run_threads(&l, &mem, true, n).map_err(sim_err)?;
                secs += t.elapsed().as_secs_f64();
                lanes += st.lane_instructions;
            }
            if n == 1 {
                LANES.store(lanes, Ordering::Relaxed);
            }
            // CAST: instruction counts are far below 2^53.
            *b = b.max(lanes as f64 / secs);
        }
    }
    Ok(best)
}
