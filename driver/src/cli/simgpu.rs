//! The simulated GPU a command runs on, as the user asks for it: `--sim-target T`, `--xcc N`,
//! `--gpus N`, or the environment variables the Python package reads (`HCQ_SIM_TARGET`,
//! `HCQ_SIM_XCC`, `HCQ_SIM_GPUS`); a flag wins over its variable. Shared by every command
//! that can run on the simulator (`info`, `demo`, `bench`, `selftest`, `run`): the dispatcher
//! ([`super::main`]) takes these flags off the command line before the command parses the
//! rest, and each command's simulator is built by [`sim_config`].

use super::CliError;
use std::sync::OnceLock;

/// The simulated targets, as `--sim-target` and `HCQ_SIM_TARGET` name them.
pub const TARGETS: &[&str] = &["gfx1100", "gfx90a", "gfx942", "gfx1201"];

/// Usage lines for the shared flags (appended to each command's help).
pub const HELP: &str = "\
simulated GPU (any of these implies the simulator):
  --sim-target T  simulate target T: gfx1100 (default), gfx90a, gfx942, gfx1201 (HCQ_SIM_TARGET)
  --xcc N         XCCs per GPU: 1 (default); gfx942 takes 2, 4 or 8 (8: an MI300X in SPX mode) (HCQ_SIM_XCC)
  --gpus N        simulated GPUs, 1 to 16 (HCQ_SIM_GPUS)
";

/// What the user asked of the simulator; `None`: not asked (the variable, then the
/// command's default).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SimChoice {
    /// `--sim-target`.
    pub target: Option<String>,
    /// `--xcc`.
    pub xcc: Option<u32>,
    /// `--gpus`.
    pub gpus: Option<usize>,
}

impl SimChoice {
    /// Whether any flag was given (the command then runs on the simulator).
    #[must_use]
    pub fn any(&self) -> bool {
        self.target.is_some() || self.xcc.is_some() || self.gpus.is_some()
    }
}

static CHOICE: OnceLock<SimChoice> = OnceLock::new();

/// Records the command line's choice for [`sim_config`] (once per process: the CLI runs one
/// command).
pub fn set(c: SimChoice) {
    let _ = CHOICE.set(c);
}

/// The command line's choice (empty when [`set`] was not called).
pub fn choice() -> SimChoice {
    CHOICE.get().cloned().unwrap_or_default()
}

/// Whether the command line asked for the simulator through these flags.
pub fn forced() -> bool {
    choice().any()
}

/// Takes `--sim-target T`, `--xcc N`, `--gpus N` (or `--flag=V`) out of `args`; returns the
/// choice and the other arguments in order.
///
/// # Errors
/// A usage error for a flag without a value or with one that is not a target / a count.
pub fn split(args: &[String]) -> Result<(SimChoice, Vec<String>), CliError> {
    let mut c = SimChoice::default();
    let mut rest = Vec::with_capacity(args.len());
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let (flag, inline) = match a.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v.to_owned())),
            _ => (a.as_str(), None),
        };
        if !matches!(flag, "--sim-target" | "--xcc" | "--gpus") {
            rest.push(a.clone());
            continue;
        }
        let v = match inline {
            Some(v) => v,
            None => it
                .next()
                .cloned()
                .ok_or_else(|| CliError::usage(format!("{flag} needs a value")))?,
        };
        match flag {
            "--sim-target" => c.target = Some(parse_target(&v).map_err(CliError::usage)?),
            "--xcc" => c.xcc = Some(parse_xcc(&v).map_err(CliError::usage)?),
            _ => c.gpus = Some(parse_gpus(&v).map_err(CliError::usage)?),
        }
    }
    Ok((c, rest))
}

fn parse_target(v: &str) -> Result<String, String> {
    let t = v.trim();
    if TARGETS.contains(&t) {
        Ok(t.to_owned())
    } else {
        Err(format!(
            "the simulator has no GPU {t:?}: choose one of {}",
            TARGETS.join(", ")
        ))
    }
}

fn parse_xcc(v: &str) -> Result<u32, String> {
    v.trim()
        .parse::<u32>()
        .ok()
        .filter(|n| [1, 2, 4, 8].contains(n))
        .ok_or_else(|| format!("{v:?} is not an XCC count: 1, 2, 4 or 8 (8: an MI300X, gfx942)"))
}

fn parse_gpus(v: &str) -> Result<usize, String> {
    v.trim()
        .parse::<usize>()
        .ok()
        .filter(|n| (1..=16).contains(n))
        .ok_or_else(|| format!("{v:?} is not a GPU count from 1 to 16"))
}

/// An environment variable's value, `None` when unset or empty.
fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// The simulator configuration the user asked for: the target (flag, `HCQ_SIM_TARGET`, else
/// `default_target`), the XCCs (flag, else `HCQ_SIM_XCC` through [`hcq_sim::SimConfig`]'s
/// default), the GPU count (flag, `HCQ_SIM_GPUS`, else `default_gpus`), on top of `base`;
/// and a short description (`2 x gfx942 (8 XCCs)`).
///
/// # Errors
/// A bad variable, naming it and what it takes.
pub fn sim_config_from(
    c: &SimChoice,
    base: hcq_sim::SimConfig,
    default_target: &str,
    default_gpus: usize,
) -> Result<(hcq_sim::SimConfig, String), String> {
    let target = match (&c.target, env("HCQ_SIM_TARGET")) {
        (Some(t), _) => t.clone(),
        (None, Some(t)) => parse_target(&t).map_err(|e| format!("HCQ_SIM_TARGET: {e}"))?,
        (None, None) => default_target.to_owned(),
    };
    let gpus = match (c.gpus, env("HCQ_SIM_GPUS")) {
        (Some(n), _) => n,
        (None, Some(v)) => parse_gpus(&v).map_err(|e| format!("HCQ_SIM_GPUS: {e}"))?,
        (None, None) => default_gpus,
    };
    let xcc = match c.xcc {
        Some(x) => x,
        None => hcq_sim::env_xcc().map_err(|e| e.to_string())?.unwrap_or(1),
    };
    let gpu = gpu_config(&target).ok_or_else(|| {
        format!(
            "the simulator has no GPU {target:?}: choose one of {}",
            TARGETS.join(", ")
        )
    })?;
    let desc = format!(
        "{}{target}{}",
        if gpus > 1 {
            format!("{gpus} x ")
        } else {
            String::new()
        },
        if xcc > 1 {
            format!(" ({xcc} XCCs)")
        } else {
            String::new()
        }
    );
    Ok((
        hcq_sim::SimConfig {
            gpus: vec![gpu; gpus],
            xcc,
            ..base
        },
        desc,
    ))
}

/// [`sim_config_from`] with the command line's choice.
///
/// # Errors
/// As [`sim_config_from`].
pub fn sim_config(
    base: hcq_sim::SimConfig,
    default_target: &str,
    default_gpus: usize,
) -> Result<(hcq_sim::SimConfig, String), String> {
    sim_config_from(&choice(), base, default_target, default_gpus)
}

/// The simulator's description of `target`.
pub fn gpu_config(target: &str) -> Option<hcq_sim::GpuConfig> {
    use hcq_sim::GpuConfig;
    Some(match target {
        "gfx1100" => GpuConfig::gfx1100(),
        "gfx90a" => GpuConfig::gfx90a(),
        "gfx942" => GpuConfig::gfx942(),
        "gfx1201" => GpuConfig::gfx1201(),
        _ => return None,
    })
}

#[cfg(test)]
mod tests;
