//! The driver's numbers on the simulator: launches per second through the full API
//! ([`Program::launch_pod`] of the `fill` fixture kernel on a simulated gfx1100, deterministic
//! engines: kernargs from the arena, the launch built and submitted to the PM4 ring, the
//! doorbell; the simulated GPU runs the kernels inside the wait), counted over batches that end
//! with [`Device::synchronize`].

use std::sync::Arc;
use std::time::Instant;

use hcq_core::arch::GpuVa;

use crate::graph::{Arg, BufArg, DimLimits, Dims, DimsArg, GraphBuilder, ScalarArg};
use crate::kernels::{self, FillArgs};
use crate::{BufferKind, Device, Kfd, Program};

use super::measure;
use super::work::WorkError;

/// Kernels in the replayed graph.
const GRAPH_KERNELS: usize = 1000;

fn sim_err(what: &str, e: impl core::fmt::Display) -> WorkError {
    WorkError::Sim(format!("{what}: {e}"))
}

/// Launches per second (median of batches) and the submit of a bound 1000-kernel graph (ns,
/// median).
///
/// # Errors
/// If the simulator, the device, a launch or the graph fails.
pub fn run(quick: bool) -> Result<(f64, f64), WorkError> {
    let sim =
        Arc::new(hcq_sim::SimKfd::gfx1100().map_err(|e| sim_err("starting the simulator", e))?);
    // The engines and host implementations of the fixture kernels.
    let gpu = hcq_sim::engine::kfd::SimGpu::attach(&sim);
    gpu.engines()
        .with_kernels(|k| {
            kernels::TARGETS
                .iter()
                .filter_map(|t| kernels::fill(t))
                .try_for_each(|co| k.register_fixture(co).map(|_| ()))
        })
        .map_err(|e| sim_err("registering the fill kernel", e))?;
    // SAFETY: `sim` serves only the engines and fixture registration; nothing but the driver
    // calls its port methods.
    let kfd = unsafe { Kfd::with_sim(Arc::clone(&sim)) }
        .map_err(|e| sim_err("opening the simulated KFD", e))?;
    kfd.set_wait_timeout(core::time::Duration::from_secs(10));
    let dev = Device::open(&kfd, 0).map_err(|e| sim_err("opening the simulated GPU", e))?;
    // The engines learn about KFD's queues when they next run, and start a new queue at the
    // driver's write pointer as it is then: run them once now, while the rings are empty, or
    // the first launches would be skipped.
    sim.run_until_idle(16);
    let n: u32 = 64;
    let buf = dev
        .alloc(u64::from(n) * 4, BufferKind::Vram)
        .map_err(|e| sim_err("allocating the output", e))?;
    let co = kernels::fill(&dev.target_name())
        .ok_or_else(|| WorkError::Sim(format!("no fill kernel for {}", dev.target_name())))?;
    let fill = Program::load(&dev, co, "fill").map_err(|e| sim_err("loading fill", e))?;
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
    let submit = graph_submit_ns(&dev, &fill, buf.va().get(), quick)?;
    Ok((launches, submit))
}

/// A graph of 1000 `fill` launches bound into GPU memory; times [`crate::BoundList::submit`]
/// (the driver's timeline wait, one INDIRECT_BUFFER, its timeline signal, the doorbell), in
/// batches whose replays the simulator then runs in [`Device::synchronize`] (not timed).
fn graph_submit_ns(dev: &Device, fill: &Program, out: u64, quick: bool) -> Result<f64, WorkError> {
    let gerr = |e: crate::graph::GraphError| sim_err("graph", e);
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
