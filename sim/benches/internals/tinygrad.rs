//! `sim_isa_tinygrad_lane_instr_per_s`: the instruction interpreter over kernels tinygrad
//! generates (a 128x128 matmul, a 16-channel 3x3 conv, a row reduce), as tinygrad 0.9.1's AMD
//! renderer wrote them and clang-19 built them for gfx1100 (`sim/benches/tinygrad/`, made by
//! its `gen.py`, listed in its `kernels.txt`). Unlike the fixtures they have loops, VOPD dual
//! issue, partial EXEC (the reduce's 16-lane work-groups) and LDS reductions. Each is launched
//! as the driver programs it: kernarg pointer in USER_DATA, the hidden arguments CLR writes,
//! RSRC1/2 from the descriptor. Counts instructions per active lane (scalar ones count 1).

use core::sync::atomic::{AtomicU64, Ordering};
use std::path::PathBuf;
use std::time::Instant;

use hcq_core::codeobj::CodeObject;
use hcq_core::metadata::hidden::{self, LaunchShape};
use hcq_sim::isa::{FlatMemory, FloatMode, Isa, Launch, ScratchSetup, run_threads};

use super::WorkError;

const BASE: u64 = 0x100_0000;
const CODE: u64 = BASE;
const ARGS: u64 = BASE + 0x1_0000;
/// The buffers, each at a 64 KiB boundary from here.
const BUF: u64 = BASE + 0x2_0000;
const LEN: usize = 0x40_0000;

fn dir() -> PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/tinygrad")
}

fn sim_err(e: impl core::fmt::Display) -> WorkError {
    WorkError::Sim(format!("tinygrad bench: {e}"))
}

/// One kernel of `kernels.txt`: `<name> <symbol> <groups x y z> <local x y z> <bytes...>`.
struct Spec {
    name: String,
    symbol: String,
    groups: [u32; 3],
    local: [u32; 3],
    bufs: Vec<u64>,
}

fn specs() -> Result<Vec<Spec>, WorkError> {
    let path = dir().join("kernels.txt");
    let text = std::fs::read_to_string(&path)
        .map_err(|e| sim_err(format!("reading {}: {e}", path.display())))?;
    let bad = |l: &str| sim_err(format!("{}: malformed line {l:?}", path.display()));
    let mut out = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let f: Vec<&str> = line.split_whitespace().collect();
        let n = |k: usize| -> Result<u64, WorkError> {
            f.get(k)
                .and_then(|s| s.parse::<u64>().ok())
                .ok_or_else(|| bad(line))
        };
        let d =
            |k: usize| -> Result<u32, WorkError> { u32::try_from(n(k)?).map_err(|_| bad(line)) };
        if f.len() < 9 {
            return Err(bad(line));
        }
        out.push(Spec {
            name: f[0].to_owned(),
            symbol: f[1].to_owned(),
            groups: [d(2)?, d(3)?, d(4)?],
            local: [d(5)?, d(6)?, d(7)?],
            bufs: (8..f.len()).map(n).collect::<Result<_, _>>()?,
        });
    }
    Ok(out)
}

/// Loads `s`'s code object and kernargs into `mem`, fills its buffers, and returns its launch.
fn launch(mem: &FlatMemory, s: &Spec) -> Result<Launch, WorkError> {
    let path = dir().join(format!("{}-gfx1100.co", s.name));
    let co = std::fs::read(&path).map_err(|e| sim_err(format!("{}: {e}", path.display())))?;
    let obj = CodeObject::parse(&co).map_err(sim_err)?;
    let mut image = vec![0u8; usize::try_from(obj.image_size()).map_err(sim_err)?];
    obj.load_into(&mut image).map_err(sim_err)?;
    mem.poke(CODE, &image).map_err(sim_err)?;
    let k = obj.kernel(&s.symbol).map_err(sim_err)?;
    if k.uses_dispatch_ptr() || k.uses_queue_ptr() {
        return Err(sim_err(format!(
            "{}: the kernel asks for a dispatch or queue pointer",
            s.name
        )));
    }
    let meta = k
        .metadata
        .as_ref()
        .ok_or_else(|| sim_err(format!("{}: no kernel metadata", s.name)))?;
    // Explicit arguments: the buffers' addresses in order; then the hidden ones.
    let mut args = vec![0u8; usize::try_from(meta.kernarg_segment_size).map_err(sim_err)?];
    let mut addrs = Vec::new();
    for (b, bytes) in s.bufs.iter().enumerate() {
        // CAST: a handful of buffers.
        let va = BUF + 0x10_0000 * b as u64;
        // Small floats (1.0, 1.5, ... cycling): the kernels' control flow does not depend on them.
        let data: Vec<u8> = (0..bytes / 4)
            .flat_map(|i| (1.0f32 + (i % 7) as f32 * 0.5).to_le_bytes())
            .collect();
        mem.poke(va, &data).map_err(sim_err)?;
        addrs.push(va);
    }
    let mut next = addrs.iter();
    for a in meta.explicit_args() {
        let va = next
            .next()
            .ok_or_else(|| sim_err(format!("{}: more arguments than buffers", s.name)))?;
        let at = usize::try_from(a.offset).map_err(sim_err)?;
        args.get_mut(at..at + 8)
            .ok_or_else(|| sim_err("argument past the kernarg segment"))?
            .copy_from_slice(&va.to_le_bytes());
    }
    let shape = LaunchShape {
        groups: s.groups,
        block: s.local,
        dynamic_lds: 0,
    };
    for a in meta.hidden_args() {
        let kind = hidden::kind_of(&a).map_err(sim_err)?;
        hidden::write(&mut args, kind, a.offset, a.size, &shape).map_err(sim_err)?;
    }
    mem.poke(ARGS, &args).map_err(sim_err)?;
    let rsrc2 = k.descriptor.compute_pgm_rsrc2 | k.lds_granules() << 15;
    let usc = (rsrc2 >> 1) & 0x1f;
    let mut user = vec![0u32; usc as usize];
    // CAST: halves of the kernarg address.
    if let Some(u) = user.get_mut(..2) {
        u.copy_from_slice(&[ARGS as u32, (ARGS >> 32) as u32]);
    }
    Ok(Launch {
        isa: Isa::Gfx11,
        gfx940: true,
        pgm: CODE + k.entry_offset,
        wave64: false,
        user_sgprs: user,
        rsrc2,
        local: s.local,
        groups: s.groups,
        lds_bytes: k.lds_granules() * hcq_core::codeobj::LDS_GRANULE_BYTES,
        vgprs: ((k.descriptor.compute_pgm_rsrc1 & 0x3f) + 1) * 8,
        scratch: ScratchSetup {
            base: BUF + 0x30_0000,
            wave_bytes: 0,
        },
        scratch_waves: 1,
        accum_offset: 0,
        float: FloatMode::from_rsrc1(k.descriptor.compute_pgm_rsrc1),
        budget: u64::MAX,
        clock: 0,
        xcc: Default::default(),
    })
}

/// Lane instructions of the last pass (the callgrind example divides its instruction count
/// by this).
static LANES: AtomicU64 = AtomicU64::new(0);

/// Lane instructions of the last pass of [`lane_instr_per_s`].
#[allow(dead_code, reason = "the callgrind example's entry")]
pub fn last_lanes() -> u64 {
    LANES.load(Ordering::Relaxed)
}

/// Lane instructions per second over the tinygrad kernels on one host thread (as
/// `sim_isa_lane_instr_per_s`, whatever `HCQ_SIM_THREADS` says): the median of a few passes (each
/// pass runs every kernel), with the passes' spread.
///
/// # Errors
/// A kernel that does not load or a dispatch that faults.
pub fn lane_instr_per_s(quick: bool) -> Result<f64, WorkError> {
    let mem = FlatMemory::new(BASE, LEN);
    let specs = specs()?;
    let passes = if quick { 1 } else { 7 };
    let mut rates = Vec::new();
    for _ in 0..passes {
        let mut lanes = 0u64;
        let mut secs = 0.0;
        for s in &specs {
            // The kernels share the code address: load this one, then time only the run.
            let l = launch(&mem, s)?;
            let t = Instant::now();
            let st =
                run_threads(&l, &mem, true, 1).map_err(|e| sim_err(format!("{}: {e}", s.name)))?;
            secs += t.elapsed().as_secs_f64();
            lanes += st.lane_instructions;
        }
        LANES.store(lanes, Ordering::Relaxed);
        // CAST: instruction counts are far below 2^53.
        rates.push(lanes as f64 / secs);
    }
    rates.sort_by(f64::total_cmp);
    Ok(super::percentile(&rates, 50.0))
}
