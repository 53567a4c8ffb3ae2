//! `hcq demo`: a real workload end to end: allocate, copy in, run `vector_add` (and a chain of
//! kernels) over it, copy out, verify every element, and report launch times, copy bandwidth
//! and the timeline; then record the same chain once as a graph and replay it with a new
//! value, verifying again. On the simulator when there is no /dev/kfd (or with `--sim`).

use super::fixtures::{self as kernels, FillArgs, VectorAddArgs};
use hcq_driver::graph::{
    Arg, BufArg, DimLimits, Dims, DimsArg, Graph, GraphBuilder, ScalarArg, Value,
};
use hcq_driver::{BufferKind, Device, GpuBuffer, Kfd, Program};
use std::io::{IsTerminal as _, Write as _};

use std::time::Instant;

use super::CliError;

/// Where the demo runs.
pub enum Backend {
    /// The machine's /dev/kfd.
    Real(Kfd),
    /// The embedded simulator.
    #[cfg(feature = "sim")]
    Sim {
        /// KFD on the simulator.
        kfd: Kfd,
        /// Why the simulator is used.
        reason: String,
        /// The simulator's engines (kept alive for the run).
        _gpu: hcq_sim::engine::attach::SimGpu,
    },
}

impl Backend {
    /// The KFD handle.
    pub fn kfd(&self) -> &Kfd {
        match self {
            Self::Real(k) => k,
            #[cfg(feature = "sim")]
            Self::Sim { kfd, .. } => kfd,
        }
    }

    /// A line saying the simulator is in use, and why.
    pub fn note(&self) -> Option<String> {
        match self {
            Self::Real(_) => None,
            #[cfg(feature = "sim")]
            Self::Sim { reason, .. } => Some(reason.clone()),
        }
    }
}

/// Opens the real KFD, or the simulator when there is none (or when `force_sim`).
pub fn open_backend(force_sim: bool) -> Result<Backend, String> {
    let real_err = if force_sim || super::simgpu::forced() {
        None
    } else {
        match Kfd::open() {
            Ok(k) if !k.gpus().is_empty() => return Ok(Backend::Real(k)),
            Ok(_) => Some("/dev/kfd has no usable GPU".to_owned()),
            Err(e) => Some(format!("no usable /dev/kfd ({e})")),
        }
    };
    #[cfg(feature = "sim")]
    {
        let (cfg, desc) = super::simgpu::sim_config(hcq_sim::SimConfig::default(), "gfx1100", 1)?;
        let sim = std::sync::Arc::new(
            hcq_sim::SimKfd::new(cfg)
                .map_err(|e| format!("starting the simulator ({desc}): {e}"))?,
        );
        let gpu = kernels::attach_sim(&sim)?;
        // SAFETY: the demo uses `sim` only to attach the engines (above); nothing calls its
        // port methods besides the driver.
        let kfd = unsafe { Kfd::with_sim(std::sync::Arc::clone(&sim)) }
            .map_err(|e| format!("opening the simulated KFD: {e}"))?;
        let reason = match real_err {
            Some(e) => format!("{e}: using the simulated GPU (hcq-sim)"),
            None => "--sim: using the simulated GPU (hcq-sim)".to_owned(),
        };
        Ok(Backend::Sim {
            kfd,
            reason,
            _gpu: gpu,
        })
    }
    #[cfg(not(feature = "sim"))]
    {
        Err(real_err.unwrap_or_else(|| "built without the simulator (feature `sim`)".to_owned()))
    }
}

/// `hcq demo`'s help text.
pub const HELP: &str = "\
usage: hcq demo [--sim] [--trace] [--mib N] [--chain N]

Runs a workload end to end: allocates four buffers, copies two in, launches fill and a chain
of vector_add kernels, copies the result out and verifies every element, then records the
chain as a graph and replays it twice with new values. Ends with a summary table.

options:
  --sim       use the simulated GPU even when /dev/kfd exists
  --trace     print the packets the simulated GPU executed
  --mib N     buffer size in MiB, 1..=4096 (default 64)
  --chain N   vector_add launches after the first, 1..=1000 (default 4)
";

struct Opts {
    sim: bool,
    trace: bool,
    mib: u64,
    chain: u32,
}

fn parse(args: &[String]) -> Result<Opts, CliError> {
    let mut o = Opts {
        sim: false,
        trace: false,
        mib: 64,
        chain: 4,
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--sim" => o.sim = true,
            "--trace" => o.trace = true,
            "--mib" => {
                let v = it.next().ok_or(CliError::usage("--mib needs a value"))?;
                o.mib = v
                    .parse()
                    .ok()
                    .filter(|&m| (1..=4096).contains(&m))
                    .ok_or_else(|| CliError::usage(format!("--mib {v}: expected 1..=4096")))?;
            }
            "--chain" => {
                let v = it.next().ok_or(CliError::usage("--chain needs a value"))?;
                o.chain = v
                    .parse()
                    .ok()
                    .filter(|&c| (1..=1000).contains(&c))
                    .ok_or_else(|| CliError::usage(format!("--chain {v}: expected 1..=1000")))?;
            }
            other => return Err(CliError::usage(format!("unknown option `{other}`"))),
        }
    }
    Ok(o)
}

/// A progress line on a terminal (rewritten in place); nothing when stderr is not a terminal.
fn progress(msg: &str) {
    let mut err = std::io::stderr();
    if err.is_terminal() {
        let _ = write!(err, "\r\x1b[2K{msg}");
        let _ = err.flush();
    }
}

fn gb_per_s(bytes: u64, secs: f64) -> f64 {
    // CAST: display only.
    bytes as f64 / secs.max(1e-9) / 1e9
}

/// The steps the summary table lists: name, milliseconds, and a rate where one applies.
#[derive(Default)]
struct Summary {
    rows: Vec<(String, f64, String)>,
}

impl Summary {
    fn add(&mut self, step: impl Into<String>, secs: f64, rate: impl Into<String>) {
        self.rows.push((step.into(), secs * 1e3, rate.into()));
    }

    fn print(&self) {
        println!("\nsummary:");
        println!("  {:<44} {:>10}  rate", "step", "ms");
        for (step, ms, rate) in &self.rows {
            println!("  {step:<44} {ms:>10.1}  {rate}");
        }
    }
}

/// The demo's buffers and host data.
struct Buffers {
    a: GpuBuffer,
    b: GpuBuffer,
    c: GpuBuffer,
    ones: GpuBuffer,
}

/// Copies 2 x `bytes` into fresh VRAM buffers `a` and `b` and waits for the copies; returns the
/// seconds it took (the clock runs from the first staging write to the last copy's completion).
/// Shared with `hcq bench` (`demo_copy_in_gb_per_s`).
pub fn timed_copy_in(
    dev: &Device,
    a: &GpuBuffer,
    b: &GpuBuffer,
    host_a: &[u8],
    host_b: &[u8],
) -> hcq_driver::Result<f64> {
    let t = Instant::now();
    dev.copy_in(a, host_a)?;
    dev.copy_in(b, host_b)?;
    dev.synchronize()?;
    Ok(t.elapsed().as_secs_f64())
}

/// The demo's inputs: `a[i] = i`, `b[i] = 3i + 7` (little-endian u32s).
pub fn inputs(n: u32) -> (Vec<u8>, Vec<u8>) {
    let a = (0..n).flat_map(|i| i.to_le_bytes()).collect();
    let b = (0..n)
        .flat_map(|i| i.wrapping_mul(3).wrapping_add(7).to_le_bytes())
        .collect();
    (a, b)
}

/// Runs `hcq demo`.
pub fn run(args: &[String]) -> Result<(), CliError> {
    let o = parse(args)?;
    let backend = open_backend(o.sim)?;
    let on_sim = backend.note().is_some();
    if let Some(note) = backend.note() {
        println!("{note}");
    }
    let mut sum = Summary::default();
    let (dev, add, fill) = open_and_load(&backend, &mut sum)?;
    dev.set_trace(o.trace);
    dev.set_profiling(true);

    let bytes = o.mib << 20;
    let n = bytes / 4;
    let n32 = u32::try_from(n).map_err(|_| CliError::usage("--mib too large"))?;
    progress(&format!("allocating 4 x {} MiB of VRAM ...", o.mib));
    let t = Instant::now();
    let bufs = Buffers {
        a: dev.alloc(bytes, BufferKind::Vram)?,
        b: dev.alloc(bytes, BufferKind::Vram)?,
        c: dev.alloc(bytes, BufferKind::Vram)?,
        ones: dev.alloc(bytes, BufferKind::Vram)?,
    };
    sum.add(
        format!("allocate 4 x {} MiB VRAM", o.mib),
        t.elapsed().as_secs_f64(),
        "",
    );
    let (host_a, host_b) = inputs(n32);
    // The output buffer starts as 0xff bytes (no element's expected value), so a copy that
    // leaves it alone fails verification; writing it now also keeps its first-touch page
    // faults out of the copy's time.
    let mut out = vec![0xffu8; host_a.len()];

    progress(&format!("copy in 2 x {} MiB ...", o.mib));
    let copy_in_s = timed_copy_in(&dev, &bufs.a, &bufs.b, &host_a, &host_b)?;
    progress("");
    let rate = format!("{:.2} GB/s", gb_per_s(2 * bytes, copy_in_s));
    println!(
        "copy in: {} MiB in {:.1} ms ({rate})",
        2 * o.mib,
        copy_in_s * 1e3
    );
    sum.add(format!("copy in 2 x {} MiB", o.mib), copy_in_s, rate);

    let chain = Chain {
        fill: &fill,
        add: &add,
        a: &bufs.a,
        b: &bufs.b,
        c: &bufs.c,
        ones: &bufs.ones,
        n: n32,
        chain: o.chain,
    };
    launch_chain(&dev, &chain, on_sim, &mut sum)?;
    copy_out_and_verify(&dev, &chain, &o, &mut out, &mut sum)?;
    graph_replays(&dev, &chain, &mut out, &mut sum)?;
    sum.print();
    Ok(())
}

/// Opens GPU 0 of `backend` and loads the demo's two kernels (`vector_add`, `fill`).
fn open_and_load(
    backend: &Backend,
    sum: &mut Summary,
) -> Result<(Device, Program, Program), CliError> {
    let t = Instant::now();
    let dev = Device::open(backend.kfd(), 0).map_err(|e| {
        CliError::failed_with(format!("opening GPU 0: {e}"), super::driver_next_step(&e))
    })?;
    let target = dev.target_name();
    println!(
        "device: gpu_id {:#x} {target}, {} CUs",
        dev.gpu_id(),
        dev.properties().cu_count()
    );
    let add_co = kernels::vector_add(&target).ok_or_else(|| {
        CliError::failed_with(
            format!("no vector_add build for {target}"),
            format!("use a GPU of {:?}, or --sim", kernels::TARGETS),
        )
    })?;
    let fill_co = kernels::fill(&target)
        .ok_or_else(|| CliError::failed_with(format!("no fill build for {target}"), "use --sim"))?;
    let add = Program::load(&dev, add_co, "vector_add")?;
    let fill = Program::load(&dev, fill_co, "fill")?;
    sum.add(
        "open the device, load 2 kernels",
        t.elapsed().as_secs_f64(),
        "",
    );
    Ok((dev, add, fill))
}

/// Launches the chain (`ones = 1; c = a + b;` then `chain` times `c = c + ones`), waits for it
/// and prints each launch's GPU time (modelled on the simulator, measured on a GPU).
fn launch_chain(
    dev: &Device,
    ch: &Chain<'_>,
    on_sim: bool,
    sum: &mut Summary,
) -> Result<(), CliError> {
    let n32 = ch.n;
    let groups = n32.div_ceil(64);
    let t = Instant::now();
    let fill_args = FillArgs {
        buf: ch.ones.va().get(),
        value: 1,
        n: n32,
    };
    progress(&format!(
        "launch fill, vector_add and {} more ...",
        ch.chain
    ));
    // SAFETY: `ones` holds n u32s, stays alive until the synchronize below.
    unsafe { ch.fill.launch_pod(&fill_args, [groups, 1, 1], [64, 1, 1]) }?;
    let first = VectorAddArgs {
        a: ch.a.va().get(),
        b: ch.b.va().get(),
        c: ch.c.va().get(),
        n: n32,
    };
    // SAFETY: a, b, c hold n u32s each and outlive the synchronize below.
    unsafe { ch.add.launch_pod(&first, [groups, 1, 1], [64, 1, 1]) }?;
    for _ in 0..ch.chain {
        let step = VectorAddArgs {
            a: ch.c.va().get(),
            b: ch.ones.va().get(),
            c: ch.c.va().get(),
            n: n32,
        };
        // SAFETY: as above; in-place c = c + 1 reads and writes each element in one thread.
        unsafe { ch.add.launch_pod(&step, [groups, 1, 1], [64, 1, 1]) }?;
    }
    progress(&format!("running {} launches ...", ch.chain + 2));
    dev.synchronize()?;
    let run_s = t.elapsed().as_secs_f64();
    progress("");
    let records = dev.take_profile()?;
    // On the simulator the GPU clock is virtual: each dispatch advances it by the time a
    // model of the instructions it executed gives on the simulated GPU (hcq-sim's
    // `isa::model`), so the timestamps around a launch bracket a modelled duration.
    let how = if on_sim { "modelled" } else { "measured" };
    if on_sim {
        println!(
            "GPU time per launch: modelled by the simulator from the instructions each kernel executed (issue cycles over every SIMD, bytes over memory bandwidth), not measured"
        );
    }
    for r in &records {
        println!(
            "launch {:<10} {groups} x 64 work-items {:>12.3} us GPU ({how})",
            r.name,
            r.duration().as_secs_f64() * 1e6
        );
    }
    let n = u64::from(n32);
    println!(
        "{} launches over {n} elements in {:.1} ms host time",
        records.len(),
        run_s * 1e3
    );
    sum.add(
        format!("{} launches, {n} elements each", records.len()),
        run_s,
        // CAST: display only.
        format!(
            "{:.0} M elements/s",
            (n as f64 * records.len() as f64) / run_s.max(1e-9) / 1e6
        ),
    );
    Ok(())
}

/// Copies `c` out into `out` and checks every element against the chain's inputs.
fn copy_out_and_verify(
    dev: &Device,
    ch: &Chain<'_>,
    o: &Opts,
    out: &mut [u8],
    sum: &mut Summary,
) -> Result<(), CliError> {
    let (n, mib) = (u64::from(ch.n), o.mib);
    progress(&format!("copy out {mib} MiB ..."));
    let t = Instant::now();
    dev.copy_out(ch.c, out)?;
    let copy_out_s = t.elapsed().as_secs_f64();
    progress("");
    let rate = format!("{:.2} GB/s", gb_per_s(mib << 20, copy_out_s));
    println!("copy out: {mib} MiB in {:.1} ms ({rate})", copy_out_s * 1e3);
    sum.add(format!("copy out {mib} MiB"), copy_out_s, rate);

    let t = Instant::now();
    let first_bad = check(out, ch.chain, 1);
    sum.add(
        format!("verify {n} elements"),
        t.elapsed().as_secs_f64(),
        "",
    );
    println!(
        "timeline: last submitted {}, completed {}",
        dev.last_value().get(),
        dev.completed_value().get()
    );
    if o.trace {
        for line in dev.take_trace() {
            println!("{line}");
        }
    }
    if let Some((bad, i, got, want)) = first_bad {
        return Err(CliError::failed_with(
            format!(
                "verification failed: {bad} of {n} elements wrong, first at {i}: {got} != {want}"
            ),
            "rerun with --trace to see the packets the GPU executed",
        ));
    }
    println!(
        "verified all {n} elements: c[i] = a[i] + b[i] + {}",
        ch.chain
    );
    Ok(())
}

/// Checks `c[i] = a[i] + b[i] + chain * value` for the demo's inputs; the number of wrong
/// elements and the first one (index, got, want).
fn check(out: &[u8], chain: u32, value: u32) -> Option<(u64, u32, u32, u32)> {
    let mut bad = 0u64;
    let mut first = None;
    for (i, w) in out.chunks_exact(4).enumerate() {
        let got = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
        // CAST: i < n <= u32::MAX.
        let i = i as u32;
        let want = i
            .wrapping_add(i.wrapping_mul(3).wrapping_add(7))
            .wrapping_add(chain.wrapping_mul(value));
        if got != want {
            bad += 1;
            first.get_or_insert((i, got, want));
        }
    }
    first.map(|(i, got, want)| (bad, i, got, want))
}

/// The demo's chain: `ones = value; c = a + b; chain times c = c + ones`.
struct Chain<'a> {
    fill: &'a Program,
    add: &'a Program,
    a: &'a GpuBuffer,
    b: &'a GpuBuffer,
    c: &'a GpuBuffer,
    ones: &'a GpuBuffer,
    n: u32,
    chain: u32,
}

/// Records the chain once as a graph whose fill value is a variable, replays it with two new
/// values and verifies every element after each.
fn graph_replays(
    dev: &Device,
    k: &Chain<'_>,
    out: &mut [u8],
    sum: &mut Summary,
) -> Result<(), CliError> {
    let gerr = |e: hcq_driver::graph::GraphError| CliError::failed(format!("graph: {e}"));
    let dims = Dims {
        global: [k.n.div_ceil(64), 1, 1],
        local: [64, 1, 1],
    };
    let buf = |b: &GpuBuffer| Arg::Buf(BufArg::Fixed(b.va()));
    let n = Arg::U32(ScalarArg::Fixed(k.n.into()));
    let mut g = GraphBuilder::new(dev.arch());
    let value = g.scalar(1).map_err(gerr)?;
    let fill = k.fill.pm4_program();
    let add = k.add.pm4_program();
    g.launch(
        &fill,
        DimLimits::AMD,
        &[buf(k.ones), Arg::U32(ScalarArg::Var(value)), n],
        DimsArg::Fixed(dims),
    )
    .map_err(gerr)?;
    g.launch(
        &add,
        DimLimits::AMD,
        &[buf(k.a), buf(k.b), buf(k.c), n],
        DimsArg::Fixed(dims),
    )
    .map_err(gerr)?;
    for _ in 0..k.chain {
        g.launch(
            &add,
            DimLimits::AMD,
            &[buf(k.c), buf(k.ones), buf(k.c), n],
            DimsArg::Fixed(dims),
        )
        .map_err(gerr)?;
    }
    let t = Instant::now();
    let mut graph = Graph::record(dev, &g)?;
    sum.add(
        format!("record the chain as a graph ({} launches)", g.len()),
        t.elapsed().as_secs_f64(),
        "",
    );
    let kernargs = graph.encoded().kernargs.len() * 4;
    // A PM4 queue replays one indirect buffer; an AQL queue (a multi-XCC GPU's) gets the
    // graph's kernel dispatch packets and PM4 bodies copied into its ring.
    let form = match graph.aql_layout() {
        Some(a) => {
            let packets = a
                .items
                .iter()
                .filter(|i| matches!(i, hcq_driver::graph::AqlItem::Dispatch { .. }))
                .count();
            format!(
                "{packets} AQL kernel dispatch packets, {} PM4 dwords",
                a.pm4_dwords
            )
        }
        None => format!("{}-dword IB", graph.pm4_ib().map_or(0, |(_, d)| d)),
    };
    println!(
        "graph: the chain recorded once ({} launches, {form}, {kernargs} bytes of kernargs)",
        g.len()
    );
    for v in [2u32, 5] {
        progress(&format!("graph replay with value {v} ..."));
        let t = Instant::now();
        // SAFETY: every launch reads and writes the first n u32s of a, b, c and ones, which
        // hold n u32s each and outlive the wait below.
        let done = unsafe { graph.replay(&[Some(Value::Scalar(v.into()))]) }?;
        let submit_us = t.elapsed().as_secs_f64() * 1e6;
        dev.wait_value(done)?;
        let total_ms = t.elapsed().as_secs_f64() * 1e3;
        progress("");
        sum.add(
            format!("graph replay, value {v} (patch + run)"),
            total_ms / 1e3,
            format!("submit {submit_us:.1} us"),
        );
        dev.copy_out(k.c, out)?;
        if let Some((bad, i, got, want)) = check(out, k.chain, v) {
            return Err(CliError::failed_with(
                format!(
                    "graph replay with value {v}: {bad} elements wrong, first at {i}: {got} != {want}"
                ),
                "rerun with --trace to see the packets the GPU executed",
            ));
        }
        println!(
            "graph replay, value {v}: patch + submit {submit_us:.1} us, done in {total_ms:.1} ms; verified c[i] = a[i] + b[i] + {}",
            k.chain * v
        );
    }
    Ok(())
}
