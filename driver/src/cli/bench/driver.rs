//! The driver's numbers on the simulator: launches per second through the full API
//! ([`Program::launch_pod`] of the `fill` fixture kernel on a simulated gfx1100, deterministic
//! engines: kernargs from the arena, the launch built and submitted to the PM4 ring, the
//! doorbell; the simulated GPU runs the kernels inside the wait), counted over batches that end
//! with [`Device::synchronize`].

use std::sync::Arc;
use std::time::Instant;

use hcq_core::addr::GpuVa;

use crate::cli::fixtures::{self as kernels, FillArgs};
use hcq_driver::graph::{Arg, BufArg, DimLimits, Dims, DimsArg, GraphBuilder, ScalarArg};
use hcq_driver::{BufferKind, ComputeQueueKind, Device, Kfd, Program};

use super::measure;
use hcq_workloads::WorkError;

/// Kernels in the replayed graph.
const GRAPH_KERNELS: usize = 1000;

fn sim_err(what: &str, e: impl core::fmt::Display) -> WorkError {
    WorkError::Sim(format!("{what}: {e}"))
}

/// The driver's numbers on the simulator.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DriverRun {
    /// Launches per second (median of batches).
    pub launches_per_s: f64,
    /// Submitting a bound 1000-kernel graph (ns, median).
    pub graph_submit_ns: f64,
    /// One launch through the checked builder, host cost only (ns, median of batches).
    pub launch_ns: f64,
    /// The same with the simulator's host guard on (`SimConfig::host_guard`): what each
    /// doorbell and first host access of a page costs the race detector (ns, median).
    pub launch_guarded_ns: f64,
    /// `launch_ns` on an AQL compute queue (the kernel dispatch packet and the two PM4_IB
    /// packets around it; ns, median).
    pub launch_aql_ns: f64,
}

/// Launches per second, the submit of a bound 1000-kernel graph, and one builder launch.
///
/// # Errors
/// If the simulator, the device, a launch or the graph fails.
pub fn run(quick: bool) -> Result<DriverRun, WorkError> {
    let (launches, submit, launch_ns) = on_device(false, ComputeQueueKind::Pm4, |dev| {
        let r = measure_device(dev, quick)?;
        Ok((r.0, r.1, builder_launch_ns(dev, &r.2, quick)?))
    })?;
    // With the host guard on (as hcq's test suites run), measured the same way right after.
    let launch_guarded_ns = on_device(true, ComputeQueueKind::Pm4, |dev| {
        let out = dev
            .alloc(64 * 4, BufferKind::Vram)
            .map_err(|e| sim_err("allocating the output", e))?;
        builder_launch_ns(dev, &out, quick)
    })?;
    // The same launch on an AQL queue (what a multi-XCC GPU gets), guard off like launch_ns.
    let launch_aql_ns = on_device(false, ComputeQueueKind::Aql, |dev| {
        let out = dev
            .alloc(64 * 4, BufferKind::Vram)
            .map_err(|e| sim_err("allocating the output", e))?;
        builder_launch_ns(dev, &out, quick)
    })?;
    Ok(DriverRun {
        launches_per_s: launches,
        graph_submit_ns: submit,
        launch_ns,
        launch_guarded_ns,
        launch_aql_ns,
    })
}

/// Runs `f` on a device of a fresh deterministic gfx1100 simulator with the fixture kernels,
/// the host guard on or off (as given: the environment's `HCQ_SIM_HOST_GUARD` still wins).
fn on_device<R>(
    host_guard: bool,
    queue: ComputeQueueKind,
    f: impl FnOnce(&Device) -> Result<R, WorkError>,
) -> Result<R, WorkError> {
    let base = hcq_sim::SimConfig {
        host_guard,
        ..hcq_sim::SimConfig::default()
    };
    let (cfg, _) = crate::cli::simgpu::sim_config(base, "gfx1100", 1)
        .map_err(|e| sim_err("choosing the simulated GPU", e))?;
    let sim =
        Arc::new(hcq_sim::SimKfd::new(cfg).map_err(|e| sim_err("starting the simulator", e))?);
    // The engines and host implementations of the fixture kernels.
    let gpu = hcq_sim::engine::attach::SimGpu::attach(&sim)
        .map_err(|e| sim_err("attaching the engines", e))?;
    gpu.engines()
        .with_kernels(|k| {
            kernels::TARGETS
                .iter()
                .flat_map(|t| [kernels::fill(t), kernels::global_id(t)])
                .flatten()
                .try_for_each(|co| k.register_fixture(co).map(|_| ()))
        })
        .map_err(|e| sim_err("registering the fill kernel", e))?;
    // SAFETY: `sim` serves only the engines and fixture registration; nothing but the driver
    // calls its port methods.
    let kfd = unsafe { Kfd::with_sim(Arc::clone(&sim)) }
        .map_err(|e| sim_err("opening the simulated KFD", e))?;
    kfd.set_wait_timeout(core::time::Duration::from_secs(10));
    let opts = hcq_driver::DeviceOptions {
        compute_queue: queue,
        ..hcq_driver::DeviceOptions::default()
    };
    let dev =
        Device::open_with(&kfd, 0, opts).map_err(|e| sim_err("opening the simulated GPU", e))?;
    // The engines learn about KFD's queues when they next run, and start a new queue at the
    // driver's write pointer as it is then: run them once now, while the rings are empty, or
    // the first launches would be skipped.
    sim.run_until_idle(16);
    f(&dev)
}

/// Launches per second and the graph submit on `dev`; the output buffer it used.
fn measure_device(
    dev: &Device,
    quick: bool,
) -> Result<(f64, f64, hcq_driver::GpuBuffer), WorkError> {
    let n: u32 = 64;
    let buf = dev
        .alloc(u64::from(n) * 4, BufferKind::Vram)
        .map_err(|e| sim_err("allocating the output", e))?;
    let co = kernels::fill(&dev.target_name())
        .ok_or_else(|| WorkError::Sim(format!("no fill kernel for {}", dev.target_name())))?;
    let fill = Program::load(dev, co, "fill").map_err(|e| sim_err("loading fill", e))?;
    let args = FillArgs {
        buf: buf.va().get(),
        value: 7,
        n,
    };
    let (batch, batches) = if quick { (50, 3) } else { (500, 11) };
    let mut rates = Vec::with_capacity(batches);
    for i in 0..=batches {
        let t = Instant::now();
        for _ in 0..batch {
            // SAFETY: `fill` writes `n` u32s at `buf`, which holds exactly that many and is
            // dropped only after `synchronize` below (and GpuBuffer waits on drop anyway).
            unsafe { fill.launch_pod(&args, [1, 1, 1], [64, 1, 1]) }
                .map_err(|e| sim_err("launching fill", e))?;
        }
        dev.synchronize()
            .map_err(|e| sim_err("waiting for the launches", e))?;
        let el = t.elapsed();
        if i > 0 {
            // CAST: counts and nanoseconds far below 2^52.
            rates.push(f64::from(batch) / el.as_nanos() as f64 * 1e9);
        }
    }
    rates.sort_by(f64::total_cmp);
    let launches = measure::percentile(&rates, 50.0);
    let submit = graph_submit_ns(dev, &fill, buf.va().get(), quick)?;
    Ok((launches, submit, buf))
}

/// One launch of `global_id` (code object v5: 13 hidden arguments) through
/// [`Program::launch_builder`]: the builder and its checks, the hidden arguments, the kernarg
/// allocation, the PM4 packets, the ring and the doorbell. Host cost only: batches of launches
/// are timed without waiting, then the simulator runs them in [`Device::synchronize`] (not
/// timed).
fn builder_launch_ns(
    dev: &Device,
    out: &hcq_driver::GpuBuffer,
    quick: bool,
) -> Result<f64, WorkError> {
    let t = dev.target_name();
    let co = kernels::global_id(&t)
        .ok_or_else(|| WorkError::Sim(format!("no global_id kernel for {t}")))?;
    let prog = Program::load(dev, co, "global_id").map_err(|e| sim_err("loading global_id", e))?;
    let n = 64u32;
    let (batch, batches) = if quick { (64u32, 3) } else { (64, 31) };
    let mut per = Vec::with_capacity(batches);
    for i in 0..=batches {
        let t = Instant::now();
        for _ in 0..batch {
            // SAFETY: global_id writes n = 64 u32s at `out`, which holds 64 and outlives the
            // launches (synchronize below).
            unsafe {
                prog.launch_builder()
                    .arg(out)
                    .arg(&n)
                    .groups([1, 1, 1])
                    .block([64, 1, 1])
                    .launch()
            }
            .map_err(|e| sim_err("launching global_id", e))?;
        }
        let el = t.elapsed();
        dev.synchronize()
            .map_err(|e| sim_err("waiting for the launches", e))?;
        if i > 0 {
            // CAST: nanoseconds of a few dozen launches, far below 2^52.
            per.push(el.as_nanos() as f64 / f64::from(batch));
        }
    }
    per.sort_by(f64::total_cmp);
    Ok(measure::percentile(&per, 50.0))
}

/// `hcq demo`'s copy in (2 x 64 MiB, 2 x 8 MiB with `quick`) into fresh VRAM buffers on the
/// deterministic sim, as the demo does it: GB/s, the median of a few runs.
///
/// # Errors
/// If the simulator, the device, an allocation or a copy fails.
pub fn demo_copy_in_gb_per_s(quick: bool) -> Result<f64, WorkError> {
    let backend =
        crate::cli::demo::open_backend(true).map_err(|e| sim_err("starting the simulator", e))?;
    let dev =
        Device::open(backend.kfd(), 0).map_err(|e| sim_err("opening the simulated GPU", e))?;
    let (mib, runs): (u32, usize) = if quick { (8, 3) } else { (64, 5) };
    let bytes = u64::from(mib) << 20;
    let (host_a, host_b) = crate::cli::demo::inputs(mib << 18);
    let mut rates = Vec::with_capacity(runs);
    for _ in 0..runs {
        let alloc = || {
            dev.alloc(bytes, BufferKind::Vram)
                .map_err(|e| sim_err("allocating", e))
        };
        let (a, b) = (alloc()?, alloc()?);
        let s = crate::cli::demo::timed_copy_in(&dev, &a, &b, &host_a, &host_b)
            .map_err(|e| sim_err("copy in", e))?;
        // CAST: display only; 128 MiB is exact in f64.
        rates.push(2.0 * bytes as f64 / s.max(1e-9) / 1e9);
    }
    rates.sort_by(f64::total_cmp);
    Ok(measure::percentile(&rates, 50.0))
}

/// A graph of 1000 `fill` launches bound into GPU memory; times `BoundList::submit`
/// (the driver's timeline wait, one INDIRECT_BUFFER, its timeline signal, the doorbell), in
/// batches whose replays the simulator then runs in [`Device::synchronize`] (not timed).
fn graph_submit_ns(dev: &Device, fill: &Program, out: u64, quick: bool) -> Result<f64, WorkError> {
    let gerr = |e: hcq_driver::graph::GraphError| sim_err("graph", e);
    let mut g = GraphBuilder::new(dev.arch());
    let prog = fill.pm4_program();
    for _ in 0..GRAPH_KERNELS {
        g.launch(
            &prog,
            DimLimits::AMD,
            &[
                Arg::Buf(BufArg::Fixed(GpuVa(out))),
                Arg::U32(ScalarArg::Fixed(7)),
                Arg::U32(ScalarArg::Fixed(64)),
            ],
            DimsArg::Fixed(Dims {
                global: [1, 1, 1],
                local: [64, 1, 1],
            }),
        )
        .map_err(gerr)?;
    }
    let ka = dev
        .alloc(g.kernargs_bytes().max(4096), BufferKind::GttUncached)
        .map_err(|e| sim_err("allocating graph kernargs", e))?;
    let enc = g.encode(ka.va()).map_err(gerr)?;
    ka.write(0, bytemuck::cast_slice(&enc.kernargs))
        .map_err(|e| sim_err("writing graph kernargs", e))?;
    let bound = dev
        .bind_pm4(&enc.pm4)
        .map_err(|e| sim_err("binding the graph", e))?;
    let (batch, batches) = if quick { (2, 2) } else { (8, 7) };
    let mut per = Vec::with_capacity(batches);
    for i in 0..=batches {
        let t = Instant::now();
        for _ in 0..batch {
            // SAFETY: the bound graph's fill kernels write `out`, a live buffer of this
            // device with room for their 64 u32s, and read the kernargs in `ka`; both outlive
            // the synchronize below, and the CPU touches neither meanwhile.
            unsafe { bound.submit() }.map_err(|e| sim_err("submitting the graph", e))?;
        }
        let el = t.elapsed();
        dev.synchronize()
            .map_err(|e| sim_err("waiting for the graph replays", e))?;
        if i > 0 {
            // CAST: nanoseconds of a few replays, far below 2^52.
            per.push(el.as_nanos() as f64 / f64::from(batch));
        }
    }
    per.sort_by(f64::total_cmp);
    Ok(measure::percentile(&per, 50.0))
}
