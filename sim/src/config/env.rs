//! The `HCQ_SIM_*` environment variables: each one's parsing (a malformed value is an
//! [`EnvError`] naming the variable and what it takes, never a silent default), the choices
//! they set, and [`check_env`], which [`crate::SimKfd::new`] runs.

#[cfg(doc)]
use super::{GpuConfig, SimClient, SimConfig};

/// Environment variable that sets [`SimConfig::xcc`]'s default ([`env_xcc`]).
pub const XCC_ENV: &str = "HCQ_SIM_XCC";

pub(super) const XCC_ACCEPTED: &str = "1, 2, 4 or 8 (the XCCs of each simulated GPU: 8 for an MI300X in SPX mode; 1 for GPUs other than gfx942)";

/// The XCC count [`XCC_ENV`] asks for; `None` when unset. Whether the target has that
/// partition is checked by [`crate::SimKfd::new`] ([`GpuConfig::with_xcc`]).
///
/// # Errors
/// A value other than 1, 2, 4 or 8, naming the variable and the accepted values.
pub fn env_xcc() -> Result<Option<u32>, EnvError> {
    let Some(v) = env_value(XCC_ENV, XCC_ACCEPTED)? else {
        return Ok(None);
    };
    match v.trim().parse::<u32>() {
        Ok(n @ (1 | 2 | 4 | 8)) => Ok(Some(n)),
        _ => Err(EnvError {
            var: XCC_ENV,
            value: v,
            accepted: XCC_ACCEPTED,
        }),
    }
}

/// How DISPATCH_DIRECT runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum DispatchMode {
    /// Dispatches stay in flight until a sync point retires them; the landing point is chosen
    /// by the seed; unordered overlapping accesses fault (the race detector).
    #[default]
    Async,
    /// Every workgroup has finished before the next packet runs (faster; no race detection).
    Synchronous,
}

/// Environment variable that sets the default seed ([`env_seed`]), so CI can sweep seeds.
pub const SEED_ENV: &str = "HCQ_SIM_SEED";

/// Environment variable that sets the default [`DispatchMode`] ([`env_dispatch`]): `sync` or
/// `async`.
pub const DISPATCH_ENV: &str = "HCQ_SIM_DISPATCH";

/// A `HCQ_SIM_*` environment variable set to a value the simulator cannot use: never a silent
/// fallback to the default. [`crate::SimKfd::new`] refuses to build a simulator while one is
/// set ([`check_env`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EnvError {
    /// The variable.
    pub var: &'static str,
    /// What it holds.
    pub value: String,
    /// The values it accepts, in words.
    pub accepted: &'static str,
}

impl core::fmt::Display for EnvError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "{}={:?} is not a value the simulator accepts (it takes {})\nnext: set {} to one of those, or unset it for the default",
            self.var, self.value, self.accepted, self.var
        )
    }
}

impl core::error::Error for EnvError {}

/// `var`'s value, if it is set (a value that is not UTF-8 is reported as such).
pub(super) fn env_value(
    var: &'static str,
    accepted: &'static str,
) -> Result<Option<String>, EnvError> {
    match std::env::var(var) {
        Ok(v) => Ok(Some(v)),
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(v)) => Err(EnvError {
            var,
            value: v.to_string_lossy().into_owned(),
            accepted,
        }),
    }
}

pub(super) const DISPATCH_ACCEPTED: &str = "`async` (the default: the race detector) or `sync`";

/// The dispatch mode [`DISPATCH_ENV`] asks for: `sync` ([`DispatchMode::Synchronous`]),
/// `async` or unset ([`DispatchMode::Async`]), case-insensitive.
///
/// # Errors
/// Any other value, naming the variable and the accepted values.
pub fn env_dispatch() -> Result<DispatchMode, EnvError> {
    let Some(v) = env_value(DISPATCH_ENV, DISPATCH_ACCEPTED)? else {
        return Ok(DispatchMode::Async);
    };
    match v.trim().to_ascii_lowercase().as_str() {
        "sync" => Ok(DispatchMode::Synchronous),
        "async" => Ok(DispatchMode::Async),
        _ => Err(EnvError {
            var: DISPATCH_ENV,
            value: v,
            accepted: DISPATCH_ACCEPTED,
        }),
    }
}

pub(super) const SEED_ACCEPTED: &str = "a 64-bit number, decimal or 0x hex";

/// The seed [`SEED_ENV`] sets (decimal or `0x` hex), 0 when unset.
///
/// # Errors
/// A value that is not such a number, naming the variable and the accepted values.
pub fn env_seed() -> Result<u64, EnvError> {
    let Some(v) = env_value(SEED_ENV, SEED_ACCEPTED)? else {
        return Ok(0);
    };
    let s = v.trim();
    let parsed = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    };
    parsed.ok_or(EnvError {
        var: SEED_ENV,
        value: v,
        accepted: SEED_ACCEPTED,
    })
}

/// Environment variable that turns the host guard on (`1`) or off (`0`) whatever
/// [`SimConfig::host_guard`] says (sim/README.md "Host accesses").
pub const HOST_GUARD_ENV: &str = "HCQ_SIM_HOST_GUARD";

pub(super) const HOST_GUARD_ACCEPTED: &str = "`1` (host guard on) or `0` (off)";

/// What [`HOST_GUARD_ENV`] asks for: `Some(true)` for `1`, `Some(false)` for `0`, `None` when
/// unset (then [`SimConfig::host_guard`] decides).
///
/// # Errors
/// Any other value, naming the variable and the accepted values.
pub fn env_host_guard() -> Result<Option<bool>, EnvError> {
    let Some(v) = env_value(HOST_GUARD_ENV, HOST_GUARD_ACCEPTED)? else {
        return Ok(None);
    };
    match v.trim() {
        "1" => Ok(Some(true)),
        "0" => Ok(Some(false)),
        _ => Err(EnvError {
            var: HOST_GUARD_ENV,
            value: v,
            accepted: HOST_GUARD_ACCEPTED,
        }),
    }
}

/// How engines advance.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum SimMode {
    /// Engines run only inside WAIT_EVENTS and explicit [`crate::SimKfd::step`] /
    /// [`crate::SimKfd::run_until_idle`]; a wait that cannot be satisfied once engines are idle
    /// returns TIMEOUT at once, and the GPU clock is virtual. Reproducible.
    #[default]
    Deterministic,
    /// Engines run on their own thread (the engine's business); WAIT_EVENTS blocks up to its
    /// timeout, woken by SET_EVENT and interrupts. The GPU clock follows real time.
    Threaded,
}

/// Which version of CREATE_QUEUE's buffer-size rules to apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum QueueBufferRules {
    /// Linux before 6.12: CREATE_QUEUE does not look the ring, pointers, EOP or save area up
    /// among the process's GPU mappings (`kfd_queue_acquire_buffers` came with 6.12), takes
    /// `ctl_stack_size` and the save-area size as given (0 included), and holds no reference
    /// on the buffers (unmapping one under a live queue is not EBUSY). tinygrad 0.9.1 was
    /// written against these kernels.
    Pre612,
    /// Linux 6.12 as merged: `ctx_save_restore_size == cwsr_size`, `eop_buffer_size ==`
    /// node size, mappings of exactly those sizes.
    Strict612,
    /// After "relax checks for over allocation of save area" (stable): sizes may be larger
    /// (`>=`), and each mapping must be exactly the size derived from the size passed.
    #[default]
    Relaxed,
}

impl QueueBufferRules {
    /// The rules of Linux `version` (`"6.8"`, `"6.12"`, `"6.13.2"`): before 6.12
    /// [`QueueBufferRules::Pre612`], 6.12 [`QueueBufferRules::Strict612`] (as merged; its
    /// stable releases took the relaxation later), 6.13 on [`QueueBufferRules::Relaxed`].
    /// `None` for text that is not a version.
    #[must_use]
    pub fn for_kernel(version: &str) -> Option<Self> {
        let mut it = version.trim().split('.');
        let major: u32 = it.next()?.trim().parse().ok()?;
        let minor: u32 = match it.next() {
            Some(m) => m.trim().parse().ok()?,
            None => 0,
        };
        Some(match (major, minor) {
            (m, _) if m < 6 => Self::Pre612,
            (6, n) if n < 12 => Self::Pre612,
            (6, 12) => Self::Strict612,
            _ => Self::Relaxed,
        })
    }
}

/// Environment variable naming the simulated kernel's version (`6.8`, `6.12`, `6.13`), which
/// picks [`SimConfig::queue_buffer_rules`] ([`env_kernel`]).
pub const KERNEL_ENV: &str = "HCQ_SIM_KERNEL";

pub(super) const KERNEL_ACCEPTED: &str = "a Linux version such as `6.8`, `6.12` or `6.13`";

/// The queue-buffer rules of the kernel [`KERNEL_ENV`] names; `None` when unset.
///
/// # Errors
/// A value that is not a version, naming the variable and the accepted values.
pub fn env_kernel() -> Result<Option<QueueBufferRules>, EnvError> {
    let Some(v) = env_value(KERNEL_ENV, KERNEL_ACCEPTED)? else {
        return Ok(None);
    };
    match QueueBufferRules::for_kernel(&v) {
        Some(r) => Ok(Some(r)),
        None => Err(EnvError {
            var: KERNEL_ENV,
            value: v,
            accepted: KERNEL_ACCEPTED,
        }),
    }
}

/// Environment variable choosing which clients a simulator built from the environment serves:
/// `hcq` (the default: [`SimClient::Hcq`]) or `any` ([`SimClient::Any`], granted by the
/// embedder through [`SimConfig::for_any_client`]; the variable alone grants nothing).
pub const CLIENT_ENV: &str = "HCQ_SIM_CLIENT";

/// What [`CLIENT_ENV`] asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ClientChoice {
    /// `hcq` or unset: hcq's own driver, the strict checks.
    #[default]
    Hcq,
    /// `any`: any in-process KFD client, the kernel's rules.
    Any,
}

/// Environment variable setting how many host threads run a dispatch's work-groups
/// ([`SimConfig::threads`], [`env_threads`]): a number from 1 to [`MAX_THREADS`].
pub const THREADS_ENV: &str = "HCQ_SIM_THREADS";

/// Most host threads one dispatch may run on.
pub const MAX_THREADS: usize = 1024;

pub(super) const THREADS_ACCEPTED: &str = "a number of host threads from 1 to 1024 (decimal)";

/// The thread count [`THREADS_ENV`] sets; `None` when unset.
///
/// # Errors
/// A value that is not a decimal number from 1 to [`MAX_THREADS`], naming the variable and the
/// accepted values.
pub fn env_threads() -> Result<Option<usize>, EnvError> {
    let Some(v) = env_value(THREADS_ENV, THREADS_ACCEPTED)? else {
        return Ok(None);
    };
    match parse_threads(&v) {
        Some(n) => Ok(Some(n)),
        None => Err(EnvError {
            var: THREADS_ENV,
            value: v,
            accepted: THREADS_ACCEPTED,
        }),
    }
}

/// A thread count as [`THREADS_ENV`] takes it: decimal, 1 to [`MAX_THREADS`].
pub(super) fn parse_threads(v: &str) -> Option<usize> {
    v.trim()
        .parse::<usize>()
        .ok()
        .filter(|n| (1..=MAX_THREADS).contains(n))
}

/// The host threads the process may use (`std::thread::available_parallelism`, at least 1,
/// at most [`MAX_THREADS`]), asked once: the standard library reads the cgroup quota files on
/// every call, which a per-dispatch question would pay on every launch.
#[must_use]
pub fn host_threads() -> usize {
    static HOST: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *HOST.get_or_init(|| {
        std::thread::available_parallelism().map_or(1, |n| n.get().min(MAX_THREADS))
    })
}

/// The default of [`SimConfig::threads`]: [`THREADS_ENV`] when set, else [`host_threads`].
///
/// # Errors
/// [`THREADS_ENV`] set to a value it does not accept ([`env_threads`]).
pub fn default_threads() -> Result<usize, EnvError> {
    Ok(env_threads()?.unwrap_or_else(host_threads))
}

/// Environment variable that sets a new registry's instruction budget: the most instructions
/// one wave may execute before the simulator stops it (decimal, `_` separators allowed, or
/// `0x` hex; above 0). Unset: no budget (`stand_ins::DEFAULT_INSTRUCTION_BUDGET`). For a user who wants
/// a hard stop for loops whose state never repeats (a counter climbing past its bound); a value
/// that does not parse is refused ([`crate::SimKfd::new`] fails with the
/// [`EnvError`]).
pub const INSTRUCTION_BUDGET_ENV: &str = "HCQ_SIM_INSTRUCTION_BUDGET";

/// What [`INSTRUCTION_BUDGET_ENV`] accepts, in words.
pub(super) const BUDGET_ACCEPTED: &str =
    "a number of wave instructions above 0 (decimal, `_` separators allowed, or 0x hex)";

/// The budget [`INSTRUCTION_BUDGET_ENV`] asks for; `None` when it is unset.
///
/// # Errors
/// A value that is not a number above 0, naming the variable and what it takes.
pub fn env_instruction_budget() -> Result<Option<u64>, EnvError> {
    let v = match std::env::var(INSTRUCTION_BUDGET_ENV) {
        Err(std::env::VarError::NotPresent) => return Ok(None),
        Err(std::env::VarError::NotUnicode(v)) => v.to_string_lossy().into_owned(),
        Ok(v) => v,
    };
    parse_budget(&v).map(Some).ok_or(EnvError {
        var: INSTRUCTION_BUDGET_ENV,
        value: v,
        accepted: BUDGET_ACCEPTED,
    })
}

/// `4000000000`, `4_000_000_000` or `0xee6b2800`; `None` for 0 or what does not parse.
pub(crate) fn parse_budget(s: &str) -> Option<u64> {
    let s = s.trim().replace('_', "");
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
    .filter(|&b| b > 0)
}

/// Every `HCQ_SIM_*` variable this module reads ([`SEED_ENV`], [`DISPATCH_ENV`],
/// [`KERNEL_ENV`], [`HOST_GUARD_ENV`], [`CLIENT_ENV`], [`STRICT_ENV`], [`THREADS_ENV`], [`XCC_ENV`],
/// and the instruction budget [`INSTRUCTION_BUDGET_ENV`]), checked: [`SimConfig::default`] falls
/// back to a default for a malformed one, so [`crate::SimKfd::new`] calls this and refuses.
///
/// # Errors
/// The first variable set to a value it does not accept.
pub fn check_env() -> Result<(), EnvError> {
    env_seed()?;
    env_dispatch()?;
    env_kernel()?;
    env_host_guard()?;
    env_strict()?;
    env_threads()?;
    env_instruction_budget()?;
    env_xcc()?;
    env_client().map_err(|_| EnvError {
        var: CLIENT_ENV,
        value: std::env::var(CLIENT_ENV).unwrap_or_default(),
        accepted: "`hcq` (hcq's driver, strict) or `any` (any KFD client, kernel rules)",
    })?;
    Ok(())
}

/// [`CLIENT_ENV`] parsed.
///
/// # Errors
/// A value other than `hcq`, `any` or empty, with what to set instead.
pub fn env_client() -> Result<ClientChoice, String> {
    match std::env::var(CLIENT_ENV) {
        Err(_) => Ok(ClientChoice::Hcq),
        Ok(v) => match v.trim().to_ascii_lowercase().as_str() {
            "" | "hcq" => Ok(ClientChoice::Hcq),
            "any" => Ok(ClientChoice::Any),
            other => Err(format!(
                "{CLIENT_ENV}={other:?} is not a client mode\nnext: set {CLIENT_ENV}=hcq (hcq's driver, strict) or {CLIENT_ENV}=any (any KFD client, kernel rules)"
            )),
        },
    }
}

/// Environment variable that makes simulators strict by default ([`SimConfig::strict`]).
pub const STRICT_ENV: &str = "HCQ_SIM_STRICT";

/// `HCQ_SIM_STRICT=1` (or `true`): findings fault the queue; unset, `0` or `false`: they are
/// recorded.
///
/// # Errors
/// Any other value, naming the variable and the accepted values.
pub fn env_strict() -> Result<bool, EnvError> {
    let Some(v) = env_value(STRICT_ENV, STRICT_ACCEPTED)? else {
        return Ok(false);
    };
    match v.trim().to_ascii_lowercase().as_str() {
        "" | "0" | "false" => Ok(false),
        "1" | "true" => Ok(true),
        _ => Err(EnvError {
            var: STRICT_ENV,
            value: v,
            accepted: STRICT_ACCEPTED,
        }),
    }
}

/// What [`STRICT_ENV`] accepts.
pub(super) const STRICT_ACCEPTED: &str =
    "`1`/`true` (findings fault) or `0`/`false` (findings are recorded)";
