//! Runs the `sim_isa_lane_instr_per_s` workload (the bench's own code, `benches/internals/isa.rs`:
//! the gfx1100 fixture kernels) once, for a repeatable instruction count under callgrind:
//!
//! ```text
//! cargo build --profile bench -p hcq-sim --example isa_callgrind
//! valgrind --tool=callgrind --callgrind-out-file=cg.out target/release/examples/isa_callgrind
//! ```
//!
//! (the bench profile's binary is `target/release/examples/` too). It prints the lane
//! instructions per second it measured (meaningless under valgrind; compare total `Ir`).

#[path = "../benches/internals/isa.rs"]
mod isa;

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
    match isa::lane_instr_per_s(true) {
        Ok(v) => {
            println!("sim_isa_lane_instr_per_s {v:.0}");
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e}");
            std::process::ExitCode::FAILURE
        }
    }
}
