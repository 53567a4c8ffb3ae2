//! End-to-end tests of hcq-driver on hcq-sim live in `tests/`. This library holds their shared
//! setup: a simulator with the test kernels registered, opened through the driver.

/// The directory `fixtures` reads the code objects from: the canonical fixtures the CI
/// rebuilds byte for byte from `kernels/`.
macro_rules! fixture_dir {
    () => {
        "/../core/tests/fixtures/kernels/"
    };
}

/// The fixture kernels (`vector_add`, `fill`, `dispatch_ptr`, `global_id`, the HIP `scale`
/// bundle), their argument structs, and `attach_sim`, which registers their host stand-ins.
/// The source is the `hcq` binary's `cli/fixtures.rs` (one list of fixtures); the bytes are
/// the test fixtures in `core/tests/fixtures/kernels/`.
#[path = "../../driver/src/cli/fixtures.rs"]
pub mod fixtures;

use core::time::Duration;
use hcq_driver::Kfd;
use hcq_sim::engine::attach::SimGpu;
use hcq_sim::{SimConfig, SimKfd};
use std::sync::Arc;

pub mod hidden_args;

/// `cfg` with the host guard on: hcq's suites run every simulator they build with it (the
/// host's own accesses in the race detector and the HDP model), while a library user's
/// simulator has it off unless asked for. `HCQ_SIM_HOST_GUARD=0` still turns it off.
#[must_use]
pub fn guarded(cfg: SimConfig) -> SimConfig {
    SimConfig {
        host_guard: true,
        ..cfg
    }
}

/// The target the suites simulate: `HCQ_SIM_TARGET` (gfx1100, gfx90a, gfx942, gfx1201, as
/// the `hcq` CLI and the Python package read it), else gfx1100. With `HCQ_SIM_XCC`, which
/// [`SimConfig::default`] reads, `HCQ_SIM_TARGET=gfx942 HCQ_SIM_XCC=8 cargo test -p
/// hcq-tests` runs the end-to-end suite on an MI300X in SPX mode.
///
/// # Panics
/// On a target the simulator does not have (a test setup error, named).
#[must_use]
pub fn target_gpu() -> hcq_sim::GpuConfig {
    use hcq_sim::GpuConfig;
    let t = std::env::var("HCQ_SIM_TARGET").unwrap_or_default();
    match t.trim() {
        "" | "gfx1100" => GpuConfig::gfx1100(),
        "gfx90a" => GpuConfig::gfx90a(),
        "gfx942" => GpuConfig::gfx942(),
        "gfx1201" => GpuConfig::gfx1201(),
        other => panic!(
            "HCQ_SIM_TARGET={other:?}: the simulator has gfx1100, gfx90a, gfx942 and gfx1201"
        ),
    }
}

/// Whether the suites run on another target than gfx1100 (`HCQ_SIM_TARGET`) or on several
/// XCCs (`HCQ_SIM_XCC`): tests of gfx1100-only facts skip then, saying so.
#[must_use]
pub fn other_target() -> Option<String> {
    let t = std::env::var("HCQ_SIM_TARGET").unwrap_or_default();
    let x = std::env::var("HCQ_SIM_XCC").unwrap_or_default();
    let t = t.trim();
    let x = x.trim();
    ((!t.is_empty() && t != "gfx1100") || (!x.is_empty() && x != "1"))
        .then(|| format!("HCQ_SIM_TARGET={t:?} HCQ_SIM_XCC={x:?}"))
}

/// [`SimConfig::with_gpus`] of the suites' target ([`target_gpu`]).
#[must_use]
pub fn with_gpus(n: usize) -> SimConfig {
    SimConfig {
        gpus: vec![target_gpu(); n],
        ..SimConfig::default()
    }
}

/// A simulator and the driver's KFD on it.
pub struct Rig {
    /// The simulator (fault injection, leak accounting). Its `KfdSys` methods (`munmap`,
    /// fixed `mmap`, `ioctl`) must not be called on what the driver mapped: `kfd` was opened
    /// with `Kfd::with_sim`, whose contract that is.
    pub sim: Arc<SimKfd>,
    /// KFD opened on it.
    pub kfd: Kfd,
    /// The engines attached to it (fault injection, trace, kernel registry).
    pub gpu: SimGpu,
}

impl Rig {
    /// `gpus` simulated GPUs of the suites' target ([`target_gpu`]: gfx1100 unless
    /// `HCQ_SIM_TARGET` says otherwise; deterministic), with the test kernels registered and a wait
    /// deadline of `timeout`.
    ///
    /// # Panics
    /// If the simulator or KFD cannot start (a test failure).
    #[must_use]
    pub fn new(gpus: usize, timeout: Duration) -> Self {
        // hcq's suites run strict: an access the hardware tolerates faults (`findings.rs`).
        let cfg = SimConfig {
            strict: true,
            ..with_gpus(gpus)
        };
        Self::with_config(cfg, timeout)
    }

    /// A rig for `cfg`.
    ///
    /// # Soundness
    /// This wraps the `unsafe` [`Kfd::with_sim`] in a safe function, which is sound only
    /// because of how this test-only crate (`publish = false`, used by `tests/` alone) is used:
    /// [`Rig::sim`] is public, and its `KfdSys` methods (`munmap`, fixed `mmap`, `ioctl`) could
    /// unmap what the driver mapped. No suite calls them on the driver's memory: they inject
    /// faults and inspect (`fail_ioctl`, `live_objects`, `gpu_read`), and the one fault-injecting
    /// port (`hcq_faults.rs`) forwards the driver's own calls. A suite that needs the port
    /// methods on driver memory must not use `Rig`.
    ///
    /// # Panics
    /// If the simulator or KFD cannot start (a test failure).
    #[must_use]
    pub fn with_config(mut cfg: SimConfig, timeout: Duration) -> Self {
        // `HCQ_SIM_XCC` (read by `SimConfig::default`) partitions the suites' target: a test
        // that builds a GPU of another target by name (gfx1100 facts, every-target loops)
        // gets its one XCC rather than the simulator's refusal of an XCC count it cannot take.
        if cfg.xcc > 1 && cfg.gpus.iter().any(|g| g.gfx_target_version / 100 != 904) {
            cfg.xcc = 1;
        }
        let sim = Arc::new(SimKfd::new(guarded(cfg)).expect("simulator"));
        let gpu = fixtures::attach_sim(&sim).expect("engines");
        // SAFETY: the suites use `sim` for fault injection and inspection only, never its
        // KfdSys methods on what the driver mapped (see `Rig::sim`).
        let kfd = unsafe { Kfd::with_sim(Arc::clone(&sim)) }.expect("kfd");
        kfd.set_wait_timeout(timeout);
        Self { sim, kfd, gpu }
    }
}
