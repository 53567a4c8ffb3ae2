//! Runs the `sim_isa_lane_instr_per_s` workload (the bench's own code, `benches/internals/isa.rs`:
//! the gfx1100 fixture kernels) once, for a repeatable instruction count under callgrind, or
//! with the argument `tinygrad` the `sim_isa_tinygrad_lane_instr_per_s` one
//! (`benches/internals/tinygrad.rs`):
//!
//! ```text
//! cargo build --profile bench -p hcq-sim --example isa_callgrind
//! valgrind --tool=callgrind --callgrind-out-file=cg.out target/release/examples/isa_callgrind [tinygrad]
//! ```
//!
//! (the bench profile's binary is `target/release/examples/` too). It prints the lane
//! instructions per second it measured (meaningless under valgrind; compare total `Ir`).

#[path = "../benches/internals/isa.rs"]
mod isa;
#[path = "../benches/internals/tinygrad.rs"]
mod tinygrad;

/// The `p`-th percentile (nearest rank) of sorted `v` (the bench's, which `tinygrad` uses).
pub fn percentile(v: &[f64], p: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    // CAST: a few passes; the rank is in 0..len.
    let rank = ((p / 100.0) * v.len() as f64).ceil() as usize;
    v[rank.clamp(1, v.len()) - 1]
}

/// Why the workload could not run (the bench's error type, the variant its ISA part uses).
#[derive(Debug)]
pub enum WorkError {
    /// The simulator refused or faulted (its message).
    Sim(String),
}

impl core::fmt::Display for WorkError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let WorkError::Sim(msg) = self;
        write!(f, "simulator: {msg}")
    }
}

fn main() -> std::process::ExitCode {
    let tg = std::env::args().nth(1).is_some_and(|a| a == "tinygrad");
    let (key, r, lanes) = if tg {
        let r = tinygrad::lane_instr_per_s(true);
        (
            "sim_isa_tinygrad_lane_instr_per_s",
            r,
            tinygrad::last_lanes(),
        )
    } else {
        let r = isa::lane_instr_per_s(true);
        ("sim_isa_lane_instr_per_s", r, isa::last_lanes())
    };
    match r {
        Ok(v) => {
            println!("{key} {v:.0} ({lanes} lane instructions)");
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e}");
            std::process::ExitCode::FAILURE
        }
    }
}
