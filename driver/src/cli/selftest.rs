//! `hcq selftest [--json] [--gpu N]`: a fixed battery of checks on `/dev/kfd` (or on the
//! simulator when there is none), each reported with pass/fail, its time and the exact error;
//! the JSON also names the GPU, its firmware, the kernel and KFD versions, for bug reports.

pub(crate) mod kernels;

use super::{CliError, emit};
use hcq_driver::graph::{Arg, BufArg, DimLimits, Dims, DimsArg, Graph, GraphBuilder, ScalarArg};
use hcq_driver::{BufferKind, Device, Error, GpuBuffer, Kfd, Lds, Program};
use serde_json::json;
use std::time::Instant;

const USAGE: &str = "\
usage: hcq selftest [--json] [--gpu N]

Runs a fixed battery of checks on GPU N (default 0) of /dev/kfd, or on the simulator (two
simulated gfx1100s) when there is no usable /dev/kfd, and reports each: pass or fail, its time
and the exact error. The checks:
  topology        the GPU's topology properties and its apertures (GET_PROCESS_APERTURES_NEW)
  alloc:KIND      allocating, writing and reading back each memory kind (vram, vram-visible,
                  gtt, gtt-uncached, host)
  copy:SIZE       copies host->GPU, GPU->GPU and GPU->host at several sizes, byte for byte
  kernel:NAME     every embedded fixture kernel (fill, vector_add, global_id, lds_reverse,
                  grid_size through the dispatch packet, scratch_sum with private memory,
                  reduce_sum with a __local argument) against its expected output
  refusals        the launch builder's refusals (argument count, kind, block, LDS)
  graph           a recorded graph of launches replayed twice
  timestamps      GPU timestamps around a dispatch: nonzero and ordered
  fault           a deliberately faulting kernel (writes past its buffer), in a child process of
                  its own, reports a fault; then this process's GPU still runs a kernel (or
                  the check says why not)
  peer            a copy between two GPUs (with two or more)
  --json    one JSON object: {\"backend\", \"gpu\", \"firmware\", \"kernel\", \"kfd_version\",
            \"checks\": [{\"name\", \"pass\", \"ms\", \"error\"}], \"passed\", \"failed\"}
            (what to paste into a bug report)
  --gpu N   the GPU to test (index in `hcq info`)
Exit status: 0 every check passed, 1 a check failed (or the GPU could not be opened), 2 usage.
";

/// Its help text.
pub const HELP: &str = USAGE;

/// The parsed command line.
#[derive(Debug, PartialEq, Eq)]
struct Opts {
    json: bool,
    gpu: usize,
    /// Internal: run only the faulting kernel (the `fault` check's child process).
    fault_child: bool,
}

fn parse(args: &[String]) -> Result<Option<Opts>, String> {
    let mut o = Opts {
        json: false,
        gpu: 0,
        fault_child: false,
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "-h" | "--help" => return Ok(None),
            "--json" => o.json = true,
            "--fault-child" => {
                o.fault_child = true;
                let v = it.next().ok_or("--fault-child needs a GPU index")?;
                o.gpu = v.parse().map_err(|e| format!("--fault-child `{v}`: {e}"))?;
            }
            "--gpu" => {
                let v = it.next().ok_or("--gpu needs a value")?;
                o.gpu = v.parse().map_err(|e| format!("--gpu `{v}`: {e}"))?;
            }
            s => return Err(format!("unknown argument `{s}`")),
        }
    }
    Ok(Some(o))
}

/// One check's outcome.
struct Check {
    name: String,
    result: Result<String, String>,
    ms: f64,
}

/// Runs `f` as the check `name`, timing it.
fn check(out: &mut Vec<Check>, name: &str, f: impl FnOnce() -> Result<String, String>) {
    let t = Instant::now();
    let result = f();
    out.push(Check {
        name: name.to_owned(),
        result,
        ms: t.elapsed().as_secs_f64() * 1e3,
    });
}

/// Where the checks run: the real KFD, or the simulator (two gfx1100s, so peer copies run).
struct Backend {
    kfd: Kfd,
    simulated: bool,
    _gpu: Option<hcq_sim::engine::attach::SimGpu>,
}

fn open_backend() -> Result<Backend, String> {
    let real_err = match Kfd::open() {
        Ok(k) if !k.gpus().is_empty() && !super::simgpu::forced() => {
            return Ok(Backend {
                kfd: k,
                simulated: false,
                _gpu: None,
            });
        }
        Ok(_) => "/dev/kfd has no usable GPU".to_owned(),
        Err(e) => format!("no usable /dev/kfd ({e})"),
    };
    let (cfg, desc) = super::simgpu::sim_config(hcq_sim::SimConfig::default(), "gfx1100", 2)?;
    let sim = std::sync::Arc::new(
        hcq_sim::SimKfd::new(cfg)
            .map_err(|e| format!("{real_err}; starting the simulator ({desc}): {e}"))?,
    );
    // The engines only: every kernel runs through the ISA interpreter, no host shortcut.
    let gpu = hcq_sim::engine::attach::SimGpu::attach(&sim)
        .map_err(|e| format!("{real_err}; starting the simulated GPU: {e}"))?;
    // SAFETY: `sim` is used only to attach the engines above; nothing unmaps through it.
    let kfd = unsafe { Kfd::with_sim(sim) }.map_err(|e| format!("opening the simulator: {e}"))?;
    eprintln!("hcq selftest: {real_err}: running on the simulator ({desc})");
    Ok(Backend {
        kfd,
        simulated: true,
        _gpu: Some(gpu),
    })
}

fn e2s(e: Error) -> String {
    e.to_string()
}

fn read_u32s(dev: &Device, b: &GpuBuffer, n: usize) -> Result<Vec<u32>, String> {
    let mut out = vec![0u8; n * 4];
    dev.copy_out(b, &mut out).map_err(e2s)?;
    Ok(out
        .chunks_exact(4)
        .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
        .collect())
}

fn buf_u32(dev: &Device, data: &[u32]) -> Result<GpuBuffer, String> {
    let b = dev
        .alloc((data.len() * 4) as u64, BufferKind::Vram)
        .map_err(e2s)?;
    let bytes: Vec<u8> = data.iter().flat_map(|v| v.to_le_bytes()).collect();
    dev.copy_in(&b, &bytes).map_err(e2s)?;
    Ok(b)
}

fn load(dev: &Device, stem: &str, kernel: &str) -> Result<Program, String> {
    let t = dev.target_name();
    let co = kernels::object(stem, &t).ok_or_else(|| {
        format!(
            "no embedded {stem} kernel for {t} (hcq selftest carries {})",
            kernels::TARGETS.join(", ")
        )
    })?;
    Program::load(dev, co, kernel).map_err(e2s)
}

fn expect_eq<T: PartialEq + core::fmt::Debug>(
    what: &str,
    got: &[T],
    want: &[T],
) -> Result<(), String> {
    if got == want {
        return Ok(());
    }
    let at = got.iter().zip(want).position(|(a, b)| a != b).unwrap_or(0);
    Err(format!(
        "{what}: element {at} is {:?}, expected {:?} ({} elements)",
        got.get(at),
        want.get(at),
        want.len()
    ))
}

/// Work-items of the one-dimensional kernel checks.
const N: u32 = 1000;

/// The fixture kernels, each against its expected output.
fn kernel_checks(out: &mut Vec<Check>, dev: &Device) {
    type KernelCheck = fn(&Device) -> Result<String, String>;
    const CHECKS: &[(&str, KernelCheck)] = &[
        ("kernel:fill", kernel_fill),
        ("kernel:vector_add", kernel_vector_add),
        ("kernel:global_id", kernel_global_id),
        ("kernel:lds_reverse", kernel_lds_reverse),
        ("kernel:grid_size", kernel_grid_size),
        ("kernel:scratch_sum", kernel_scratch_sum),
        ("kernel:reduce_sum", kernel_reduce_sum),
    ];
    for (name, f) in CHECKS {
        check(out, name, || f(dev));
    }
}

/// `kernel:fill`: `fill` writes one value into every element.
fn kernel_fill(dev: &Device) -> Result<String, String> {
    let n = N;
    let p = load(dev, "fill", "fill")?;
    let b = buf_u32(dev, &vec![0; n as usize])?;
    // SAFETY: fill writes n u32s of `b`, which holds n; waited for below.
    unsafe {
        p.launch_builder()
            .arg(&b)
            .arg(&0xC0FFEEu32)
            .arg(&n)
            .groups([n.div_ceil(64), 1, 1])
            .block([64, 1, 1])
            .launch_wait()
    }
    .map_err(e2s)?;
    expect_eq(
        "fill",
        &read_u32s(dev, &b, n as usize)?,
        &vec![0xC0FFEE; n as usize],
    )?;
    Ok(format!("{n} u32s"))
}

/// `kernel:vector_add`: `vector_add` adds two buffers element by element.
fn kernel_vector_add(dev: &Device) -> Result<String, String> {
    let n = N;
    let p = load(dev, "vector_add", "vector_add")?;
    let a: Vec<u32> = (0..n).collect();
    let bv: Vec<u32> = (0..n).map(|i| i * 3 + 7).collect();
    let (ab, bb, cb) = (
        buf_u32(dev, &a)?,
        buf_u32(dev, &bv)?,
        buf_u32(dev, &vec![0; n as usize])?,
    );
    // SAFETY: vector_add reads n u32s of `ab` and `bb` and writes n of `cb`; waited for.
    unsafe {
        p.launch_builder()
            .arg(&ab)
            .arg(&bb)
            .arg(&cb)
            .arg(&n)
            .groups([n.div_ceil(64), 1, 1])
            .block([64, 1, 1])
            .launch_wait()
    }
    .map_err(e2s)?;
    let want: Vec<u32> = a.iter().zip(&bv).map(|(x, y)| x + y).collect();
    expect_eq("vector_add", &read_u32s(dev, &cb, n as usize)?, &want)?;
    Ok(format!("{n} u32s"))
}

/// `kernel:global_id`: `global_id` writes each work-item's id (hidden arguments filled).
fn kernel_global_id(dev: &Device) -> Result<String, String> {
    let n = N;
    let p = load(dev, "global_id", "global_id")?;
    let b = buf_u32(dev, &vec![u32::MAX; n as usize])?;
    // SAFETY: global_id writes n u32s of `b`, which holds n; waited for.
    unsafe {
        p.launch_builder()
            .arg(&b)
            .arg(&n)
            .groups([n.div_ceil(128), 1, 1])
            .block([128, 1, 1])
            .launch_wait()
    }
    .map_err(e2s)?;
    let want: Vec<u32> = (0..n).collect();
    expect_eq("global_id", &read_u32s(dev, &b, n as usize)?, &want)?;
    Ok("hidden arguments filled".into())
}

/// `kernel:lds_reverse`: `lds_reverse` reverses each group's 64 elements through LDS.
fn kernel_lds_reverse(dev: &Device) -> Result<String, String> {
    let p = load(dev, "lds_reverse", "lds_reverse")?;
    let data: Vec<u32> = (0..256).collect();
    let b = buf_u32(dev, &data)?;
    // SAFETY: lds_reverse rewrites 64 u32s per group, 4 groups: 256, `b`'s size.
    unsafe {
        p.launch_builder()
            .arg(&b)
            .groups([4, 1, 1])
            .block([64, 1, 1])
            .launch_wait()
    }
    .map_err(e2s)?;
    let want: Vec<u32> = data
        .chunks(64)
        .flat_map(|c| c.iter().rev().copied())
        .collect();
    expect_eq("lds_reverse", &read_u32s(dev, &b, 256)?, &want)?;
    Ok("256 u32s through LDS".into())
}

/// `kernel:grid_size`: `grid_size` reads the grid size from the dispatch packet.
fn kernel_grid_size(dev: &Device) -> Result<String, String> {
    let p = load(dev, "dispatch_ptr", "grid_size")?;
    let b = buf_u32(dev, &[0; 256])?;
    // SAFETY: grid_size writes one u32 per work-item, 192, into `b` (256).
    unsafe {
        p.launch_builder()
            .arg(&b)
            .groups([3, 1, 1])
            .block([64, 1, 1])
            .launch_wait()
    }
    .map_err(e2s)?;
    let mut want = vec![192; 192];
    want.extend([0; 64]);
    expect_eq("grid_size", &read_u32s(dev, &b, 256)?, &want)?;
    Ok("the dispatch packet's grid size".into())
}

/// `kernel:scratch_sum`: `scratch_sum` sums through 68 bytes of private segment per work-item.
fn kernel_scratch_sum(dev: &Device) -> Result<String, String> {
    let p = load(dev, "scratch", "scratch_sum")?;
    let b = buf_u32(dev, &[0; 256])?;
    // SAFETY: scratch_sum writes one u32 per work-item, 192, into `b` (256).
    unsafe {
        p.launch_builder()
            .arg(&b)
            .arg(&7u32)
            .groups([3, 1, 1])
            .block([64, 1, 1])
            .launch_wait()
    }
    .map_err(e2s)?;
    let mut want = vec![840; 192];
    want.extend([0; 64]);
    expect_eq("scratch_sum", &read_u32s(dev, &b, 256)?, &want)?;
    Ok("68 bytes of private segment per work-item".into())
}

/// `kernel:reduce_sum`: `reduce_sum` reduces each group of 256 floats through a `__local` argument.
fn kernel_reduce_sum(dev: &Device) -> Result<String, String> {
    let n = N;
    let p = load(dev, "reduce_local", "reduce_sum")?;
    let input: Vec<f32> = (0..n).map(|i| (i % 13) as f32).collect();
    let inb = buf_u32(dev, &input.iter().map(|v| v.to_bits()).collect::<Vec<_>>())?;
    let groups = n.div_ceil(256);
    let ob = buf_u32(dev, &vec![0; groups as usize])?;
    // SAFETY: reduce_sum reads n floats of `inb` and writes `groups` of `ob`; waited for.
    unsafe {
        p.launch_builder()
            .arg(&inb)
            .arg(&ob)
            .arg(&Lds(256 * 4))
            .arg(&n)
            .groups([groups, 1, 1])
            .block([256, 1, 1])
            .launch_wait()
    }
    .map_err(e2s)?;
    let got: Vec<f32> = read_u32s(dev, &ob, groups as usize)?
        .into_iter()
        .map(f32::from_bits)
        .collect();
    let want: Vec<f32> = input.chunks(256).map(|c| c.iter().sum()).collect();
    expect_eq("reduce_sum", &got, &want)?;
    Ok("__local scratch argument".into())
}

/// The builder's refusals: each must be refused with its reason.
fn refusals(dev: &Device) -> Result<String, String> {
    let p = load(dev, "reduce_local", "reduce_sum")?;
    let b = buf_u32(dev, &[0; 64])?;
    let refused = |build: &mut hcq_driver::LaunchBuilder<'_>, want: &str| -> Result<(), String> {
        // SAFETY: each launch here is refused before it reaches the GPU (checked below).
        match unsafe { build.launch() } {
            Ok(_) => Err(format!("launched where it should refuse ({want})")),
            Err(e) if e.to_string().contains(want) => Ok(()),
            Err(e) => Err(format!("refused with `{e}`, expected `{want}`")),
        }
    };
    refused(p.launch_builder().arg(&b), "takes 4 arguments, got 1")?;
    refused(
        p.launch_builder().arg(&b).arg(&b).arg(&7u32).arg(&1u32),
        "is a dynamic_shared_pointer (__local): pass Lds(bytes)",
    )?;
    refused(
        p.launch_builder().arg(&1u32),
        "is a global_buffer: pass a GpuBuffer or BufferView, not a value",
    )?;
    refused(
        p.launch_builder()
            .arg(&b)
            .arg(&b)
            .arg(&Lds(64))
            .arg(&1u32)
            .block([2048, 1, 1]),
        "above",
    )?;
    refused(
        p.launch_builder()
            .arg(&b)
            .arg(&b)
            .arg(&Lds(1 << 20))
            .arg(&1u32),
        "is above the",
    )?;
    refused(
        p.launch_builder()
            .arg(&b)
            .arg(&b)
            .arg(&Lds(4))
            .arg(&1u32)
            .groups([0, 1, 1]),
        "contain 0",
    )?;
    Ok("6 refusals, each with its reason".into())
}

/// A graph of 8 fill launches recorded once, replayed twice.
fn graph(dev: &Device) -> Result<String, String> {
    let p = load(dev, "fill", "fill")?;
    let b = buf_u32(dev, &[0; 8 * 64])?;
    let mut g = GraphBuilder::new(dev.arch());
    for k in 0..8u32 {
        g.launch(
            &p.pm4_program(),
            DimLimits::AMD,
            &[
                Arg::Buf(BufArg::Fixed(b.va().offset(u64::from(k) * 256))),
                Arg::U32(ScalarArg::Fixed(u64::from(k) + 1)),
                Arg::U32(ScalarArg::Fixed(64)),
            ],
            DimsArg::Fixed(Dims {
                global: [1, 1, 1],
                local: [64, 1, 1],
            }),
        )
        .map_err(|e| e.to_string())?;
    }
    let mut graph = Graph::record(dev, &g).map_err(e2s)?;
    for round in 0..2 {
        dev.copy_in(&b, &[0; 8 * 64 * 4]).map_err(e2s)?;
        // SAFETY: the launches fill 64 u32s each inside `b` (8 x 256 bytes), which outlives
        // the replay, waited for below.
        let v = unsafe { graph.replay(&[]) }.map_err(e2s)?;
        dev.wait_value(v).map_err(e2s)?;
        let want: Vec<u32> = (0..8 * 64).map(|i| i / 64 + 1).collect();
        expect_eq(
            &format!("replay {round}"),
            &read_u32s(dev, &b, 8 * 64)?,
            &want,
        )?;
    }
    Ok(if graph.aql_layout().is_some() {
        "8 launches as AQL kernel dispatch packets, 2 replays".into()
    } else {
        "8 launches, 2 replays".into()
    })
}

/// GPU timestamps around a dispatch.
fn timestamps(dev: &Device) -> Result<String, String> {
    let p = load(dev, "fill", "fill")?;
    let b = buf_u32(dev, &[0; 4096])?;
    // SAFETY: fill writes 4096 u32s of `b`, which holds 4096; launch_wait waits.
    let t = unsafe {
        p.launch_builder()
            .arg(&b)
            .arg(&1u32)
            .arg(&4096u32)
            .groups([64, 1, 1])
            .block([64, 1, 1])
            .launch_wait()
    }
    .map_err(e2s)?;
    if t.is_zero() {
        return Err("the timestamps around a 4096-item dispatch are equal".into());
    }
    Ok(format!(
        "{} ns between the dispatch's timestamps",
        t.as_nanos()
    ))
}

/// An AQL compute queue on GPU `index` (the device's own when it already drives one, as on a
/// multi-XCC GPU; else a second device with AQL forced): a fill launched as a kernel dispatch
/// packet, checked, and the queue's facts.
fn aql(kfd: &Kfd, index: usize, dev: &Device) -> Result<String, String> {
    let forced;
    let d = if dev.is_aql() {
        dev
    } else {
        let opts = hcq_driver::DeviceOptions {
            compute_queue: hcq_driver::ComputeQueueKind::Aql,
            ..hcq_driver::DeviceOptions::default()
        };
        forced = Device::open_with(kfd, index, opts).map_err(e2s)?;
        &forced
    };
    let p = load(d, "fill", "fill")?;
    let b = buf_u32(d, &[0; 4096])?;
    // SAFETY: fill writes 4096 u32s of `b`, which holds 4096; waited for below.
    let v = unsafe {
        p.launch_builder()
            .arg(&b)
            .arg(&0xa91u32)
            .arg(&4096u32)
            .groups([64, 1, 1])
            .block([64, 1, 1])
            .launch()
    }
    .map_err(e2s)?;
    d.wait_value(v).map_err(e2s)?;
    let got = read_u32s(d, &b, 4096)?;
    if got.iter().any(|&x| x != 0xa91) {
        return Err(
            "a fill dispatched through an AQL kernel dispatch packet wrote wrong values".into(),
        );
    }
    let q = d.queue_states().into_iter().next();
    Ok(format!(
        "AQL queue ({}): a 4096-item fill as a kernel dispatch packet, verified; {} XCC(s); read/write dispatch ids {}",
        if dev.is_aql() {
            "the device's own"
        } else {
            "forced beside the device's PM4 queue"
        },
        d.num_xcc(),
        q.map_or_else(|| "?".into(), |q| format!("{}/{}", q.rptr, q.wptr))
    ))
}

/// The faulting kernel: `global_id` writing 1 Mi u32s into a 4-byte buffer. `Ok` with the
/// fault's text when the GPU reported a fault, as it must.
fn fault_once(kfd: &Kfd, index: usize) -> Result<String, String> {
    let dev = Device::open(kfd, index).map_err(e2s)?;
    let p = load(&dev, "global_id", "global_id")?;
    let b = buf_u32(&dev, &[0])?;
    // SAFETY: deliberately unsafe for the GPU, not the host: global_id writes 1 Mi u32s into
    // a 4-byte buffer; the GPU faults on the writes past its mapping, which is the point of
    // the check. No host memory is involved.
    let r = unsafe {
        p.launch_builder()
            .arg(&b)
            .arg(&(1u32 << 20))
            .groups([4096, 1, 1])
            .block([256, 1, 1])
            .launch_wait()
    };
    match r {
        Err(e @ Error::DeviceFault(_)) => Ok(e.to_string()),
        Err(e) => Err(format!("expected a device fault, got: {e}")),
        Ok(_) => Err("1 Mi writes into a 4-byte buffer did not fault".into()),
    }
}

/// `hcq selftest --fault-child N`: the faulting kernel in a process of its own (a fault ends
/// the KFD process's queues, so it must not be this one's); exit 0 when it faulted.
fn fault_child(index: usize) -> Result<(), CliError> {
    let b = open_backend().map_err(CliError::failed)?;
    let msg = fault_once(&b.kfd, index).map_err(CliError::failed)?;
    emit(&format!("{msg}\n")).map_err(CliError::from)
}

/// The faulting kernel runs in a child process (on a GPU a fault ends the process's queues);
/// then this process's device must still run a kernel.
fn fault(dev: &Device, index: usize) -> Result<String, String> {
    let exe = std::env::current_exe().map_err(|e| format!("finding hcq's own binary: {e}"))?;
    let o = std::process::Command::new(exe)
        .args(["selftest", "--fault-child", &index.to_string()])
        .env("HCQ_LOG", "off")
        .output()
        .map_err(|e| format!("starting the faulting child: {e}"))?;
    let said = String::from_utf8_lossy(&o.stdout).trim().to_owned();
    if !o.status.success() {
        return Err(format!(
            "the faulting kernel did not report a fault: {}",
            String::from_utf8_lossy(&o.stderr).trim()
        ));
    }
    let p = load(dev, "fill", "fill")?;
    let b = buf_u32(dev, &[0; 64])?;
    // SAFETY: fill writes 64 u32s of `b`, which holds 64; launch_wait waits.
    unsafe {
        p.launch_builder()
            .arg(&b)
            .arg(&9u32)
            .arg(&64u32)
            .groups([1, 1, 1])
            .block([64, 1, 1])
            .launch_wait()
    }
    .map_err(|e| {
        format!("the fault was reported ({said}), but the GPU no longer runs a kernel: {e}")
    })?;
    expect_eq("after the fault", &read_u32s(dev, &b, 64)?, &[9; 64])?;
    let first = said.split(';').next().unwrap_or(&said);
    Ok(format!("reported ({first}); the GPU still runs kernels"))
}

/// A copy between two GPUs, both directions.
fn peer(kfd: &Kfd, a: usize, b: usize) -> Result<String, String> {
    let (da, db) = (
        Device::open(kfd, a).map_err(e2s)?,
        Device::open(kfd, b).map_err(e2s)?,
    );
    let n = 1 << 20;
    let data: Vec<u8> = (0..n).map(|i| (i * 31 % 251) as u8).collect();
    let src = da.alloc(n as u64, BufferKind::Vram).map_err(e2s)?;
    let dst = db.alloc(n as u64, BufferKind::Vram).map_err(e2s)?;
    da.copy_in(&src, &data).map_err(e2s)?;
    Device::transfer(&db, &dst, &da, &src).map_err(e2s)?;
    db.synchronize().map_err(e2s)?;
    let mut got = vec![0u8; n];
    db.copy_out(&dst, &mut got).map_err(e2s)?;
    expect_eq("GPU -> peer GPU", &got, &data)?;
    Ok(format!("{n} bytes GPU {a} -> GPU {b}"))
}

/// Every check; the GPU's description for the report.
fn run_all(b: &Backend, index: usize) -> Result<(Vec<Check>, serde_json::Value), String> {
    let gpus = b.kfd.gpus();
    let info = gpus.get(index).ok_or_else(|| {
        format!(
            "there is no GPU {index}: {} GPU(s) (see `hcq info`)",
            gpus.len()
        )
    })?;
    let dev = Device::open(&b.kfd, index).map_err(|e| format!("opening GPU {index}: {e}"))?;
    let props = &info.properties;
    let gpu = json!({
        "index": index,
        "gpu_id": info.gpu_id,
        "target": info.target_name(),
        "device_id": props.device_id,
        "vendor_id": props.vendor_id,
        "compute_units": props.cu_count(),
        "simd_count": props.simd_count,
        "lds_kb": props.lds_size_in_kb,
        "wavefront_size": props.wave_front_size,
        "drm_render_minor": props.drm_render_minor,
        "node": info.node,
        "num_xcc": props.num_xcc.max(1),
        "compute_queue": if dev.is_aql() { "aql" } else { "pm4" },
    });
    let mut out = Vec::new();
    check(&mut out, "topology", || {
        let p = props;
        if p.simd_count == 0 || p.lds_size_in_kb == 0 || p.gfx_target_version == 0 {
            return Err(format!(
                "implausible properties: simd_count {}, lds_size_in_kb {}, gfx_target_version {}",
                p.simd_count, p.lds_size_in_kb, p.gfx_target_version
            ));
        }
        let ap = b.kfd.apertures().map_err(e2s)?;
        let a = ap.iter().find(|a| a.gpu_id == info.gpu_id).ok_or_else(|| {
            format!(
                "GET_PROCESS_APERTURES_NEW has no entry for gpu {:#x}",
                info.gpu_id
            )
        })?;
        for (name, base, limit) in [
            ("lds", a.lds_base, a.lds_limit),
            ("scratch", a.scratch_base, a.scratch_limit),
            ("gpuvm", a.gpuvm_base, a.gpuvm_limit),
        ] {
            if limit <= base {
                return Err(format!("{name} aperture {base:#x}..{limit:#x} is empty"));
            }
        }
        let probe = dev.alloc(4096, BufferKind::Vram).map_err(e2s)?;
        let va = probe.va().get();
        if !(a.gpuvm_base..=a.gpuvm_limit).contains(&va) {
            return Err(format!(
                "a VRAM buffer at {va:#x} is outside the GPUVM aperture {:#x}..{:#x}",
                a.gpuvm_base, a.gpuvm_limit
            ));
        }
        Ok(format!(
            "{} ({} CUs, {} KiB LDS); apertures lds {:#x} scratch {:#x} gpuvm {:#x}..{:#x}",
            info.target_name(),
            p.cu_count(),
            p.lds_size_in_kb,
            a.lds_base,
            a.scratch_base,
            a.gpuvm_base,
            a.gpuvm_limit
        ))
    });
    for (name, kind) in [
        ("vram", BufferKind::Vram),
        ("vram-visible", BufferKind::VramCpuVisible),
        ("gtt", BufferKind::Gtt),
        ("gtt-uncached", BufferKind::GttUncached),
        ("host", BufferKind::Host),
    ] {
        check(&mut out, &format!("alloc:{name}"), || {
            let size = 3 << 20;
            let buf = dev.alloc(size, kind).map_err(e2s)?;
            let data: Vec<u8> = (0..size).map(|i| (i % 253) as u8).collect();
            dev.copy_in(&buf, &data).map_err(e2s)?;
            let mut back = vec![0u8; data.len()];
            dev.copy_out(&buf, &mut back).map_err(e2s)?;
            expect_eq(name, &back, &data)?;
            Ok(format!("{} MiB at {}", size >> 20, buf.va()))
        });
    }
    for size in [1u64, 4096, 65_537, 4 << 20] {
        check(&mut out, &format!("copy:{size}"), || {
            let data: Vec<u8> = (0..size).map(|i| (i * 7 % 255) as u8 ^ 0x5a).collect();
            let a = dev.alloc(size, BufferKind::Vram).map_err(e2s)?;
            let c = dev.alloc(size, BufferKind::Gtt).map_err(e2s)?;
            dev.copy_in(&a, &data).map_err(e2s)?;
            let v = dev.copy(&c, &a).map_err(e2s)?;
            dev.wait_value(v).map_err(e2s)?;
            let mut back = vec![0u8; data.len()];
            dev.copy_out(&c, &mut back).map_err(e2s)?;
            expect_eq("host -> VRAM -> GTT -> host", &back, &data)?;
            Ok("host -> GPU, GPU -> GPU, GPU -> host".into())
        });
    }
    kernel_checks(&mut out, &dev);
    check(&mut out, "refusals", || refusals(&dev));
    check(&mut out, "graph", || graph(&dev));
    check(&mut out, "timestamps", || timestamps(&dev));
    check(&mut out, "aql", || aql(&b.kfd, index, &dev));
    if gpus.len() >= 2 {
        let other = usize::from(index == 0);
        check(&mut out, "peer", || peer(&b.kfd, index, other));
    }
    check(&mut out, "fault", || fault(&dev, index));
    Ok((out, gpu))
}

/// `/sys/class/drm/renderD<minor>/device/fw_version/*`: every firmware version file.
fn firmware(render_minor: u32) -> serde_json::Value {
    let dir = format!("/sys/class/drm/renderD{render_minor}/device/fw_version");
    let mut m = serde_json::Map::new();
    if let Ok(entries) = std::fs::read_dir(&dir) {
        let mut names: Vec<_> = entries.flatten().map(|e| e.path()).collect();
        names.sort();
        for p in names {
            if let (Some(n), Ok(v)) = (p.file_name(), std::fs::read_to_string(&p)) {
                m.insert(n.to_string_lossy().into_owned(), json!(v.trim()));
            }
        }
    }
    serde_json::Value::Object(m)
}

/// Runs `hcq selftest`.
pub fn main(args: &[String]) -> Result<(), CliError> {
    let Some(o) = parse(args).map_err(CliError::Usage)? else {
        return emit(USAGE).map_err(CliError::from);
    };
    if o.fault_child {
        return fault_child(o.gpu);
    }
    let next =
        "paste `hcq selftest --json` into a bug report; HCQ_LOG=debug shows the driver's log";
    let b = open_backend().map_err(|e| CliError::failed_with(e, next))?;
    let (checks, gpu) = run_all(&b, o.gpu).map_err(|e| CliError::failed_with(e, next))?;
    let info = b.kfd.gpus().get(o.gpu);
    let mut fw = if b.simulated {
        json!({})
    } else {
        firmware(info.map_or(0, |i| i.properties.drm_render_minor))
    };
    if let (Some(i), Some(m)) = (info, fw.as_object_mut()) {
        m.insert("kfd_fw_version".into(), json!(i.properties.fw_version));
        m.insert(
            "kfd_sdma_fw_version".into(),
            json!(i.properties.sdma_fw_version),
        );
    }
    let (major, minor) = b.kfd.version();
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map_or_else(|e| format!("unknown ({e})"), |s| s.trim().to_owned());
    let failed = checks.iter().filter(|c| c.result.is_err()).count();
    let report = json!({
        "backend": if b.simulated { "simulator" } else { "kfd" },
        "gpu": gpu,
        "firmware": fw,
        "kernel": kernel,
        "kfd_version": format!("{major}.{minor}"),
        "checks": checks.iter().map(|c| json!({
            "name": c.name,
            "pass": c.result.is_ok(),
            "ms": (c.ms * 1000.0).round() / 1000.0,
            "detail": c.result.as_ref().ok(),
            "error": c.result.as_ref().err(),
        })).collect::<Vec<_>>(),
        "passed": checks.len() - failed,
        "failed": failed,
    });
    let text = if o.json {
        format!("{report}\n")
    } else {
        use core::fmt::Write as _;
        let mut s = format!(
            "hcq selftest on {} ({}), Linux {kernel}, KFD {major}.{minor}\n",
            report["gpu"]["target"].as_str().unwrap_or("?"),
            report["backend"].as_str().unwrap_or("?")
        );
        for c in &checks {
            let _ = match &c.result {
                Ok(d) => writeln!(s, "  pass {:<18} {:>9.2} ms  {d}", c.name, c.ms),
                Err(e) => writeln!(s, "  FAIL {:<18} {:>9.2} ms  {e}", c.name, c.ms),
            };
        }
        let _ = writeln!(s, "{} passed, {failed} failed", checks.len() - failed);
        s
    };
    emit(&text).map_err(CliError::from)?;
    if failed > 0 {
        return Err(CliError::failed_with(
            format!("{failed} check(s) failed"),
            next,
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_line() {
        let s = |v: &[&str]| v.iter().map(|x| (*x).to_owned()).collect::<Vec<_>>();
        assert_eq!(
            parse(&s(&["--json", "--gpu", "1"])).unwrap(),
            Some(Opts {
                json: true,
                gpu: 1,
                fault_child: false
            })
        );
        assert!(parse(&s(&["--gpu"])).is_err());
        assert!(parse(&s(&["--frob"])).is_err());
        assert_eq!(parse(&s(&["--help"])).unwrap(), None);
    }
}
