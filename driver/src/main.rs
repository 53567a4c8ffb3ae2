//! `hcq`: inspect, encode, decode and drive AMD GPU command streams.

mod cli;

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    cli::main(&args)
}
