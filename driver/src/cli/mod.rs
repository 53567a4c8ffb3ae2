//! Sub-command dispatch: one table ([`COMMANDS`]) names each sub-command, its help text and its
//! entry point. `hcq CMD -h|--help` prints the help (exit 0); a usage error prints the message
//! and the usage (exit 2); a runtime failure prints the message and what to do next (exit 1).

use std::process::ExitCode;

mod bench;
mod cc;
mod decode;
mod demo;
mod encode;
mod fault;
pub(crate) mod fixtures;
mod info;
mod inspect;
mod run;
mod selftest;
pub(crate) mod simgpu;

/// Why a sub-command failed.
#[derive(Debug)]
pub enum CliError {
    /// The command line was wrong (exit 2, usage printed).
    Usage(String),
    /// The work failed (exit 1).
    Failed {
        /// What went wrong.
        msg: String,
        /// What the user can do next (a default is printed when `None`).
        next: Option<String>,
    },
}

impl CliError {
    /// A usage error.
    pub fn usage(msg: impl Into<String>) -> Self {
        Self::Usage(msg.into())
    }

    /// A runtime failure with the default next step.
    pub fn failed(msg: impl Into<String>) -> Self {
        Self::Failed {
            msg: msg.into(),
            next: None,
        }
    }

    /// A runtime failure and what to do about it.
    pub fn failed_with(msg: impl Into<String>, next: impl Into<String>) -> Self {
        Self::Failed {
            msg: msg.into(),
            next: Some(next.into()),
        }
    }
}

impl From<String> for CliError {
    fn from(msg: String) -> Self {
        Self::failed(msg)
    }
}

impl From<&str> for CliError {
    fn from(msg: &str) -> Self {
        Self::failed(msg)
    }
}

/// A runtime failure from the driver, with the next step its kind calls for.
impl From<hcq_driver::Error> for CliError {
    fn from(e: hcq_driver::Error) -> Self {
        let next = driver_next_step(&e);
        Self::failed_with(e.to_string(), next)
    }
}

/// What to do after a driver error.
pub fn driver_next_step(e: &hcq_driver::Error) -> &'static str {
    use hcq_driver::Error as E;
    match e {
        E::DeviceFault(_) => {
            "the fault above names the packet or kernel; `hcq demo --trace` prints the packets \
             the simulated GPU executed, HCQ_LOG=debug the driver's log"
        }
        E::Timeout(_) => {
            "the GPU stopped making progress: check the queue pointers above (rptr < wptr: \
             work is stuck), rerun with HCQ_LOG=debug; on real hardware see `dmesg`"
        }
        E::OutOfMemory { .. } => "allocate less (e.g. `hcq demo --mib 16`) or free buffers",
        E::Sys { .. } | E::Protocol(_) => {
            "check that /dev/kfd is readable by you (group `render`), or use --sim; \
             HCQ_LOG=debug shows each ioctl"
        }
        _ => "rerun with HCQ_LOG=debug for the driver's log",
    }
}

/// One sub-command.
pub struct Command {
    /// Its name (`hcq NAME`).
    pub name: &'static str,
    /// One line for `hcq --help`.
    pub summary: &'static str,
    /// Its help text (starts with `usage: `).
    pub help: &'static str,
    /// Runs it with the arguments after its name (never `-h`/`--help`).
    pub run: fn(&[String]) -> Result<(), CliError>,
}

/// Writes `s` to stdout; a closed pipe (`hcq ... | head`) is not an error, others are.
pub(crate) fn emit(s: &str) -> Result<(), String> {
    use std::io::Write as _;
    let mut o = std::io::stdout().lock();
    match o.write_all(s.as_bytes()).and_then(|()| o.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(format!("writing to stdout: {e}"))
        }
        _ => Ok(()),
    }
}

/// Every sub-command, in `hcq --help` order. Add a sub-command here and nowhere else.
pub const COMMANDS: &[Command] = &[
    Command {
        name: "info",
        summary: "list GPUs and their properties, like rocminfo (--json)",
        help: info::HELP,
        run: info::run,
    },
    Command {
        name: "demo",
        summary: "run the end-to-end workload (allocate, copy in, launch, copy out, verify, time)",
        help: demo::HELP,
        run: demo::run,
    },
    Command {
        name: "encode",
        summary: "read a JSON command script on stdin, print PM4/SDMA dwords",
        help: encode::HELP,
        run: encode::run,
    },
    Command {
        name: "decode",
        summary: "read dwords on stdin, print one decoded packet per line",
        help: decode::HELP,
        run: decode::run,
    },
    Command {
        name: "inspect",
        summary: "show an AMDGPU code object's target and kernels (--json)",
        help: inspect::HELP,
        run: inspect::main,
    },
    Command {
        name: "run",
        summary: "run one kernel of a code object with arguments from the command line (--json)",
        help: run::HELP,
        run: run::main,
    },
    Command {
        name: "cc",
        summary: "compile OpenCL C or HIP to a code object or bundle (clang + ROCm device libs)",
        help: cc::HELP,
        run: cc::main,
    },
    Command {
        name: "selftest",
        summary: "check every path on this GPU (or the simulator) for a bug report (--json)",
        help: selftest::HELP,
        run: selftest::main,
    },
    Command {
        name: "bench",
        summary: "measure the hot paths against their budgets (--json, --quick, --check)",
        help: bench::HELP,
        run: bench::main,
    },
];

/// `hcq --help`.
fn usage() -> String {
    let mut s = String::from(
        "usage: hcq <command> [options]    (hcq <command> --help for its options)\n\ncommands:\n",
    );
    for c in COMMANDS {
        s.push_str(&format!("  {:<9} {}\n", c.name, c.summary));
    }
    s.push_str(
        "\ninfo, demo, bench, selftest and run take the simulated GPU as asked:\n  \
         --sim-target T, --xcc N, --gpus N (or HCQ_SIM_TARGET, HCQ_SIM_XCC, HCQ_SIM_GPUS)\n",
    );
    s.push_str(
        "\nenvironment:\n  HCQ_LOG   log level on stderr: off, error, warn (default), info, debug, trace\n  \
         HCQ_AQL   1: AQL compute queues on every GPU, 0: PM4 (default: AQL when a GPU has more than one XCC)\n",
    );
    s
}

/// Writes `log` records at or above the chosen level to stderr, one line each.
struct StderrLog;

impl log::Log for StderrLog {
    fn enabled(&self, m: &log::Metadata<'_>) -> bool {
        let quiet = m.target().starts_with("hcq_sim")
            && QUIET_SIM.load(core::sync::atomic::Ordering::Relaxed);
        m.level()
            <= if quiet {
                log::LevelFilter::Error
            } else {
                log::max_level()
            }
    }
    fn log(&self, r: &log::Record<'_>) {
        if self.enabled(r.metadata()) {
            eprintln!("hcq [{} {}] {}", r.level(), r.target(), r.args());
        }
    }
    fn flush(&self) {}
}

/// Whether `HCQ_LOG` is unset: the simulator's own warnings (a fault it found, which the
/// driver then reports as the command's error) are not repeated on stderr.
static QUIET_SIM: core::sync::atomic::AtomicBool = core::sync::atomic::AtomicBool::new(false);

/// Installs [`StderrLog`] at `HCQ_LOG`'s level (warn when unset; unknown values say so).
fn init_log() {
    static LOGGER: StderrLog = StderrLog;
    let level = match std::env::var("HCQ_LOG") {
        Err(_) => {
            QUIET_SIM.store(true, core::sync::atomic::Ordering::Relaxed);
            log::LevelFilter::Warn
        }
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
        eprint!("{}", usage());
        return ExitCode::from(2);
    };
    if matches!(cmd.as_str(), "-h" | "--help" | "help") {
        print!("{}", usage());
        return ExitCode::SUCCESS;
    }
    let Some(c) = COMMANDS.iter().find(|c| c.name == cmd) else {
        eprintln!("hcq: unknown command `{cmd}`\n");
        eprint!("{}", usage());
        return ExitCode::from(2);
    };
    let sim_cmd = SIM_COMMANDS.contains(&c.name);
    if rest.iter().any(|a| a == "-h" || a == "--help") {
        print!("{}", c.help);
        if sim_cmd {
            print!("\n{}", simgpu::HELP);
        }
        return ExitCode::SUCCESS;
    }
    // The simulated GPU's flags, for the commands that can run on the simulator.
    let owned;
    let rest = if sim_cmd {
        match simgpu::split(rest) {
            Ok((choice, r)) => {
                simgpu::set(choice);
                owned = r;
                owned.as_slice()
            }
            Err(e) => return finish(cmd, c, Err(e)),
        }
    } else {
        rest
    };
    finish(cmd, c, (c.run)(rest))
}

/// Commands that can run on the simulator: they take `--sim-target`, `--xcc`, `--gpus`.
pub const SIM_COMMANDS: &[&str] = &["info", "demo", "bench", "selftest", "run"];

/// The exit of `hcq cmd` after `r`.
fn finish(cmd: &str, c: &Command, r: Result<(), CliError>) -> ExitCode {
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(CliError::Usage(msg)) => {
            eprintln!("hcq {cmd}: {msg}\n");
            eprint!("{}", c.help);
            ExitCode::from(2)
        }
        Err(CliError::Failed { msg, next }) => {
            eprintln!("hcq {cmd}: {msg}");
            let next = next.unwrap_or_else(|| {
                format!("see `hcq {cmd} --help`; HCQ_LOG=debug shows the driver's log")
            });
            eprintln!("next: {next}");
            ExitCode::FAILURE
        }
    }
}
