//! `hcq bench`'s `driver_launch_ns` workload under callgrind: one launch of `global_id` (code
//! object v5, 13 hidden arguments) through [`Program::launch_builder`] on the deterministic
//! simulated gfx1100, each behind its own `#[inline(never)]` function, so callgrind reports
//! repeatable instructions per launch (host cost: builder and checks, hidden arguments,
//! kernarg arena, packets, ring, doorbell):
//!
//! ```text
//! cargo build --release -p hcq-driver --example launch_callgrind
//! valgrind --tool=callgrind --callgrind-out-file=cg.out target/release/examples/launch_callgrind
//! callgrind_annotate --inclusive=yes cg.out | grep launch_callgrind::
//! ```
//!
//! `launch_callgrind::builder_launch` is `LAUNCHES` calls; `launch_callgrind::pod_launch` the
//! same count of `launch_pod` of `fill` (no hidden arguments). The simulator runs the kernels
//! in `synchronize`, outside both. To count only one of them, add
//! `--toggle-collect='launch_callgrind::builder_launch'` and divide the total by 9984 (156
//! batches of 64).
//!
//! `launch_callgrind time` (outside valgrind) prints the median, quartiles and best
//! wall-clock time per builder launch over the same batches, for comparing builds in one
//! session.
//!
//! With `aql` as an argument (`launch_callgrind aql`, `launch_callgrind time aql`) the device
//! drives an AQL compute queue instead (`driver_launch_aql_ns`'s workload).

use std::sync::Arc;

/// The directory `fixtures.rs` reads the fixture code objects from.
macro_rules! fixture_dir {
    () => {
        "/fixtures/"
    };
}
#[path = "../src/cli/fixtures.rs"]
#[allow(dead_code, reason = "the example uses two of the fixtures")]
mod fixtures;
use fixtures::FillArgs;
use hcq_driver::{BufferKind, Device, GpuBuffer, Kfd, Program, Result};

/// Launches of each kind (in batches of `BATCH`, each followed by an untimed synchronize).
const LAUNCHES: u32 = 10_000;
const BATCH: u32 = 64;

#[inline(never)]
fn builder_launch(prog: &Program, out: &GpuBuffer, n: u32) -> Result<()> {
    // SAFETY: global_id writes n = 64 u32s at `out`, which holds 64 and outlives the launch
    // (the caller synchronizes before dropping it).
    unsafe {
        prog.launch_builder()
            .arg(out)
            .arg(&n)
            .groups([1, 1, 1])
            .block([64, 1, 1])
            .launch()
    }
    .map(|_| ())
}

#[inline(never)]
fn pod_launch(prog: &Program, args: &FillArgs) -> Result<()> {
    // SAFETY: fill writes `n` = 64 u32s at `buf`, which holds 64 and outlives the launch.
    unsafe { prog.launch_pod(args, [1, 1, 1], [64, 1, 1]) }.map(|_| ())
}

fn main() -> core::result::Result<(), Box<dyn core::error::Error>> {
    let sim = Arc::new(hcq_sim::SimKfd::gfx1100()?);
    let gpu = hcq_sim::engine::attach::SimGpu::attach(&sim)?;
    gpu.engines().with_kernels(|k| {
        [fixtures::fill("gfx1100"), fixtures::global_id("gfx1100")]
            .into_iter()
            .flatten()
            .try_for_each(|co| k.register_fixture(co).map(|_| ()))
    })?;
    // SAFETY: `sim` serves only the engines and fixture registration; nothing but the driver
    // calls its port methods.
    let kfd = unsafe { Kfd::with_sim(Arc::clone(&sim)) }?;
    let opened = std::time::Instant::now();
    let aql = std::env::args().any(|a| a == "aql");
    let opts = hcq_driver::DeviceOptions {
        compute_queue: if aql {
            hcq_driver::ComputeQueueKind::Aql
        } else {
            hcq_driver::ComputeQueueKind::Pm4
        },
        ..hcq_driver::DeviceOptions::default()
    };
    let dev = Device::open_with(&kfd, 0, opts)?;
    let open_time = opened.elapsed();
    // Let the engines see the queues while the rings are empty (as `hcq bench` does).
    sim.run_until_idle(16);
    let out = dev.alloc(64 * 4, BufferKind::Vram)?;
    let t = dev.target_name();
    let gid = Program::load(
        &dev,
        fixtures::global_id(&t).ok_or("no global_id")?,
        "global_id",
    )?;
    let fill = Program::load(&dev, fixtures::fill(&t).ok_or("no fill")?, "fill")?;
    let args = FillArgs {
        buf: out.va().get(),
        value: 7,
        n: 64,
    };
    if std::env::args().nth(1).as_deref() == Some("time") {
        // Wall-clock per builder launch (batches of BATCH, median), for comparing builds
        // outside valgrind.
        let mut per = Vec::new();
        for _ in 0..LAUNCHES / BATCH {
            let t = std::time::Instant::now();
            for _ in 0..BATCH {
                builder_launch(&gid, &out, 64)?;
            }
            per.push(t.elapsed().as_nanos() / u128::from(BATCH));
            dev.synchronize()?;
        }
        per.sort_unstable();
        println!(
            "builder launch ({}): median {} ns, quartiles {}-{} ns, best {} ns (Device::open took {open_time:?})",
            if aql { "AQL" } else { "PM4" },
            per[per.len() / 2],
            per[per.len() / 4],
            per[per.len() * 3 / 4],
            per[0]
        );
        return Ok(());
    }
    for _ in 0..LAUNCHES / BATCH {
        for _ in 0..BATCH {
            builder_launch(&gid, &out, 64)?;
        }
        dev.synchronize()?;
        for _ in 0..BATCH {
            pod_launch(&fill, &args)?;
        }
        dev.synchronize()?;
    }
    Ok(())
}
