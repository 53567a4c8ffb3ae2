//! `hcq`: inspect, encode, decode and drive AMD GPU command streams.

/// The directory `cli/fixtures.rs` reads the embedded fixture code objects from.
macro_rules! fixture_dir {
    () => {
        "/fixtures/"
    };
}

mod cli;

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    cli::main(&args)
}
