//! Sub-command dispatch. Each sub-command lives in its own module and returns
//! `Result<(), String>`; the error is printed as one line and the exit code is 1 (2 for usage).

use std::process::ExitCode;

mod bench;
mod decode;
mod demo;
mod encode;
mod info;
mod inspect;
mod run;

const USAGE: &str = "\
usage: hcq <command> [options]

commands:
  info      list GPUs (real /dev/kfd, or the simulator when there is none; --sim forces it)
  demo      run the end-to-end workload (allocate, copy in, launch, copy out, verify, time)
  encode    read a JSON command script on stdin, print PM4/SDMA dwords (--engine pm4|sdma)
  decode    read dwords on stdin, print one decoded packet per line (--engine pm4|sdma)
  inspect   show an AMDGPU code object's (or offload bundle's) target, kernels and metadata
  run       run one kernel of a code object with arguments from the command line
  bench     measure the hot paths (--json, --quick)

environment:
  HCQ_LOG   log level on stderr: off, error, warn (default), info, debug, trace
";

/// Writes `log` records at or above the chosen level to stderr, one line each.
struct StderrLog;

impl log::Log for StderrLog {
    fn enabled(&self, m: &log::Metadata<'_>) -> bool {
        m.level() <= log::max_level()
    }
    fn log(&self, r: &log::Record<'_>) {
        if self.enabled(r.metadata()) {
            eprintln!("hcq [{} {}] {}", r.level(), r.target(), r.args());
        }
    }
    fn flush(&self) {}
}

/// Installs [`StderrLog`] at `HCQ_LOG`'s level (warn when unset; unknown values say so).
fn init_log() {
    static LOGGER: StderrLog = StderrLog;
    let level = match std::env::var("HCQ_LOG") {
        Err(_) => log::LevelFilter::Warn,
        Ok(v) => v.parse().unwrap_or_else(|_| {
            eprintln!("hcq: HCQ_LOG={v} is not off/error/warn/info/debug/trace; using warn");
            log::LevelFilter::Warn
        }),
    };
    if log::set_logger(&LOGGER).is_ok() {
        log::set_max_level(level);
    }
}

/// Runs the CLI with `args` (without the program name).
pub fn main(args: &[String]) -> ExitCode {
    init_log();
    let Some((cmd, rest)) = args.split_first() else {
        eprint!("{USAGE}");
        return ExitCode::from(2);
    };
    let result: Result<(), String> = match cmd.as_str() {
        // `inspect` and `run` print their own errors and exit 2 on usage errors.
        "inspect" => return inspect::main(rest),
        "run" => return run::main(rest),
        "encode" => encode::run(rest),
        "decode" => decode::run(rest),
        "info" => info::run(rest),
        "demo" => demo::run(rest),
        "bench" => bench::run(rest),
        "-h" | "--help" | "help" => {
            print!("{USAGE}");
            Ok(())
        }
        _ => {
            eprintln!("hcq: unknown command `{cmd}`\n");
            eprint!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("hcq {cmd}: {e}");
            ExitCode::FAILURE
        }
    }
}
