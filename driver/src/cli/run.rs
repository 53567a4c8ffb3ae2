//! `hcq run FILE KERNEL --groups X[,Y[,Z]] --block X[,Y[,Z]] [ARG]... [--dynamic-lds BYTES]
//! [--save DIR] [--print all|written|none] [--strict] [--json]`: runs one kernel of a code object (or
//! offload bundle) through the checked launch builder. Each ARG is one explicit argument, in
//! the kernel's order: `TYPE:VALUE` or `TYPExN:A,B,...` for a `by_value` argument,
//! `buf:TYPE:SPEC` (values, `N*V`, `iota:N` or `@FILE`: a `.npy` or raw bytes) or
//! `out:TYPE:N` for a `global_buffer`, `lds:BYTES` for a `dynamic_shared_pointer`. Buffers are
//! read back after the kernel, printed, and saved as `.npy`. On a machine without a GPU the
//! simulator runs it, as a GPU of the code object's target.

use super::{CliError, emit};

use hcq_driver::{BufferKind, Device, GpuBuffer, Kfd, Lds, Program, RawValue};
use serde_json::json;

const USAGE: &str = "\
usage: hcq run FILE KERNEL --groups X[,Y[,Z]] --block X[,Y[,Z]] [ARG]... [--dynamic-lds BYTES]
               [--save DIR] [--print all|written|none] [--strict] [--json]

Runs KERNEL of the code object (or clang offload bundle) FILE once and prints the buffers it
wrote. ARG, one per explicit kernel argument, in order, checked against the kernel's metadata:
  TYPE:VALUE         a by_value scalar                  (u32:1000, f32:2.5, i64:-3)
  TYPExN:A,B,...     a by_value vector, N = 2 3 4 8 16  (u32x2:1,2  f32x4:1,2,3,4)
  buf:TYPE:SPEC      a global_buffer, filled from SPEC and read back after the kernel:
                     1,2,3 (these values), N*V (N copies of V), iota:N (0, 1, ..., N-1),
                     @FILE (a .npy file whose dtype is TYPE, or raw little-endian bytes)
  out:TYPE:N         a global_buffer of N zeroed elements the kernel writes
  lds:BYTES          a dynamic_shared_pointer (OpenCL __local T*): BYTES of LDS per
                     work-group, placed after the kernel's static LDS
TYPE: u8 u16 u32 u64 i8 i16 i32 i64 f16 f32 f64
  --dynamic-lds BYTES     dynamic LDS per work-group (HIP extern __shared__; default 0)
  --save DIR              write every buffer as DIR/arg<I>.npy (its dtype and shape)
  --print all|written|none  which buffers the text output prints (default written: the
                          out: buffers and those whose contents the kernel changed)
  --strict                on the simulator, fault on an access the hardware tolerates (an
                          LDS access past the allocation: the GPU reads 0 and drops the
                          write) instead of printing it as a finding (also HCQ_SIM_STRICT=1)
  --json                  one JSON object on stdout, with every buffer:
                          {\"kernel\", \"target\", \"groups\", \"block\",
                           \"buffers\": [{\"arg\", \"type\", \"shape\", \"written\", \"values\"}],
                           \"gpu_time_ns\", \"gpu_time_kind\": \"modelled\" (simulator) or \"measured\",
                           \"findings\": [text of each access the hardware tolerated]}
Without a GPU (/dev/kfd), the simulator runs the kernel's machine code as a GPU of the code
object's target (gfx90a, gfx942, gfx1100, gfx1201); its gpu_time_ns is then modelled, not
measured: the duration a model of the instructions the kernel executed gives on that GPU
(issue cycles over every SIMD, or bytes over memory bandwidth), plus a few 10 ns ticks for
the packets between the timestamps around the dispatch.
Exit status: 0 success, 1 the run failed or was refused, 2 usage error.
";

mod args;
mod npy;

use args::*;
use npy::*;

/// The scalar type and lane count a metadata `.type_name` names (`uint` -> (u32, 1),
/// `float4*` -> (f32, 4)), when it is one hcq run knows.
fn c_type(type_name: &str) -> Option<(Ty, usize)> {
    let t = type_name
        .trim_end_matches('*')
        .trim()
        .trim_start_matches("const ")
        .trim_start_matches("__global ")
        .trim();
    if let Some((_, ty)) = TYPES.iter().find(|(_, ty)| ty.c_names().contains(&t)) {
        return Some((*ty, 1));
    }
    let base = t.trim_end_matches(|c: char| c.is_ascii_digit());
    let lanes: usize = t.get(base.len()..)?.parse().ok()?;
    let (_, ty) = TYPES.iter().find(|(_, ty)| ty.c_names().contains(&base))?;
    LANES.contains(&lanes).then_some((*ty, lanes))
}

/// What `hcq run` takes for metadata argument `m`: `pass u32x2:A,B`.
fn expected(m: &hcq_driver::ArgInfo) -> String {
    let ty = m.type_name.as_deref().and_then(c_type);
    match m.class {
        hcq_driver::ArgClass::Buffer => {
            let t = ty.map_or("TYPE", |(t, _)| t.name());
            format!("pass buf:{t}:SPEC, buf:{t}:@FILE or out:{t}:N")
        }
        hcq_driver::ArgClass::Lds => "pass lds:BYTES".to_owned(),
        hcq_driver::ArgClass::Value => match ty {
            Some((t, 1)) => format!("pass {}:VALUE", t.name()),
            Some((t, n)) => {
                let vals: Vec<&str> = ["A", "B", "C", "D"].into_iter().take(n.min(4)).collect();
                let more = if n > 4 { ",..." } else { "" };
                format!("pass {}x{n}:{}{more}", t.name(), vals.join(","))
            }
            None => format!("pass TYPE:VALUE of {} bytes", m.size),
        },
        hcq_driver::ArgClass::Unsupported => "hcq run cannot pass it".to_owned(),
    }
}

/// `by_value uint2`: the metadata kind and type of `m`.
fn kind_of(m: &hcq_driver::ArgInfo) -> String {
    match &m.type_name {
        Some(t) if m.class != hcq_driver::ArgClass::Lds => format!("{} {t}", m.value_kind),
        _ => m.value_kind.clone(),
    }
}

/// How a command-line argument is spelled back in errors.
fn spelled(a: &CliArg) -> String {
    match a {
        CliArg::Value { ty, lanes: 1, .. } => format!("{}:VALUE", ty.name()),
        CliArg::Value { ty, lanes, .. } => format!("{}x{lanes}", ty.name()),
        CliArg::Buf { ty, out: true, .. } => format!("out:{}", ty.name()),
        CliArg::Buf { ty, .. } | CliArg::File { ty, .. } => format!("buf:{}", ty.name()),
        CliArg::Lds { .. } => "lds:BYTES".to_owned(),
    }
}

/// Refuses a command-line argument whose kind or type differs from the metadata's, naming
/// the metadata's kind and what to pass.
fn check_against(prog: &Program, args: &[CliArg]) -> Result<(), String> {
    let meta = prog.args();
    if !prog.has_metadata() {
        return Err(format!(
            "kernel {}: the code object has no metadata for it, so hcq run cannot check or place its arguments",
            prog.name()
        ));
    }
    if args.len() != meta.len() {
        let kinds: Vec<String> = meta
            .iter()
            .enumerate()
            .map(|(i, a)| format!("{} {}: {}", a.describe(i), kind_of(a), expected(a)))
            .collect();
        return Err(format!(
            "kernel {} takes {} arguments ({}), got {}",
            prog.name(),
            meta.len(),
            kinds.join("; "),
            args.len()
        ));
    }
    use hcq_driver::ArgClass as C;
    for (i, (a, m)) in args.iter().zip(meta).enumerate() {
        let refuse = || {
            Err(format!(
                "{} is {}: {} (got {})",
                m.describe(i),
                kind_of(m),
                expected(m),
                spelled(a)
            ))
        };
        let want = m.type_name.as_deref().and_then(c_type);
        match (a, m.class) {
            (CliArg::Lds { .. }, C::Lds) => {}
            (CliArg::Buf { ty, .. } | CliArg::File { ty, .. }, C::Buffer) => {
                // A `float4*` takes a buffer of f32 too: the elements are its lanes.
                if want.is_some_and(|(t, _)| t != *ty) {
                    return refuse();
                }
            }
            (CliArg::Value { ty, lanes, bytes }, C::Value) => {
                if want.is_some_and(|w| w != (*ty, *lanes)) || bytes.len() != m.size as usize {
                    return refuse();
                }
            }
            _ => return refuse(),
        }
    }
    Ok(())
}

/// Where the kernel runs: the real KFD, or a simulator with a GPU of the object's target.
struct Backend {
    kfd: Kfd,
    note: Option<String>,
    #[cfg(feature = "sim")]
    _gpu: Option<hcq_sim::engine::attach::SimGpu>,
    /// The simulator, whose findings the report lists.
    #[cfg(feature = "sim")]
    sim: Option<std::sync::Arc<hcq_sim::SimKfd>>,
}

impl Backend {
    /// What the simulated GPU did that the hardware tolerates (none on a real GPU).
    fn findings(&self) -> Vec<String> {
        #[cfg(feature = "sim")]
        if let Some(sim) = &self.sim {
            return sim.findings().iter().map(ToString::to_string).collect();
        }
        Vec::new()
    }
}

/// The processors `data` (an ELF or a bundle) has code for.
fn targets_of(data: &[u8]) -> Result<Vec<String>, String> {
    if hcq_core::bundle::is_bundle(data) {
        let b = hcq_core::bundle::Bundle::parse(data).map_err(|e| e.to_string())?;
        return Ok(b
            .entries()
            .filter(|e| !e.code.is_empty())
            .filter_map(|e| e.processor().map(str::to_owned))
            .collect());
    }
    let co = hcq_core::codeobj::CodeObject::parse(data).map_err(|e| e.to_string())?;
    Ok(vec![co.target().mach.name.to_owned()])
}

fn open_backend(data: &[u8], strict: bool) -> Result<Backend, String> {
    let targets = targets_of(data)?;
    let real_err = match Kfd::open() {
        Ok(k) if !k.gpus().is_empty() && !super::simgpu::forced() => {
            return Ok(Backend {
                kfd: k,
                note: None,
                #[cfg(feature = "sim")]
                _gpu: None,
                #[cfg(feature = "sim")]
                sim: None,
            });
        }
        Ok(_) => "/dev/kfd has no usable GPU".to_owned(),
        Err(e) => format!("no usable /dev/kfd ({e})"),
    };
    #[cfg(feature = "sim")]
    {
        use hcq_sim::{SimConfig, SimKfd};
        let name = targets
            .iter()
            .find(|t| super::simgpu::TARGETS.contains(&t.as_str()))
            .ok_or_else(|| {
                format!(
                    "{real_err}, and the simulator has no GPU for {} (it simulates gfx1100, gfx90a, gfx942, gfx1201)",
                    targets.join(", ")
                )
            })?;
        let env_strict = hcq_sim::env_strict().map_err(|e| e.to_string())?;
        // The code object's target unless --sim-target / HCQ_SIM_TARGET says otherwise.
        let base = SimConfig {
            strict: strict || env_strict,
            ..SimConfig::default()
        };
        let (cfg, name) = super::simgpu::sim_config(base, name, 1)?;
        let sim = std::sync::Arc::new(
            SimKfd::new(cfg).map_err(|e| format!("starting the simulator ({name}): {e}"))?,
        );
        let gpu = super::fixtures::attach_sim(&sim)?;
        // SAFETY: `sim` is used only to attach the GPU above; nothing unmaps through it.
        let kfd = unsafe { Kfd::with_sim(std::sync::Arc::clone(&sim)) }
            .map_err(|e| format!("opening the simulated KFD: {e}"))?;
        Ok(Backend {
            kfd,
            note: Some(format!(
                "{real_err}: running on a simulated {name} (hcq-sim)"
            )),
            _gpu: Some(gpu),
            sim: Some(sim),
        })
    }
    #[cfg(not(feature = "sim"))]
    {
        let _ = (targets, strict);
        Err(real_err)
    }
}

/// Runs the kernel; returns the JSON report.
fn execute(o: &Opts) -> Result<serde_json::Value, String> {
    let data = std::fs::read(&o.file).map_err(|e| format!("cannot read {}: {e}", o.file))?;
    let args = o
        .args
        .iter()
        .map(|a| match a {
            CliArg::File { ty, path } => load_file(*ty, path),
            a => Ok(a.clone()),
        })
        .collect::<Result<Vec<_>, _>>()?;
    let backend = open_backend(&data, o.strict)?;
    if let Some(n) = &backend.note {
        eprintln!("hcq run: {n}");
    }
    let dev = Device::open(&backend.kfd, 0).map_err(|e| format!("opening the GPU: {e}"))?;
    let target = dev.target_name();
    let prog = Program::load(&dev, &data, &o.kernel).map_err(|e| format!("{}: {e}", o.file))?;
    check_against(&prog, &args)?;
    let mut bufs: Vec<Option<GpuBuffer>> = Vec::new();
    for a in &args {
        bufs.push(match a {
            CliArg::Buf { bytes, .. } => {
                // CAST: usize -> u64 is lossless on 64-bit hosts.
                let b = dev
                    .alloc(bytes.len() as u64, BufferKind::Vram)
                    .map_err(|e| format!("allocating a buffer: {e}"))?;
                dev.copy_in(&b, bytes)
                    .map_err(|e| format!("filling a buffer: {e}"))?;
                Some(b)
            }
            _ => None,
        });
    }
    let mut builder = prog.launch_builder();
    for (a, b) in args.iter().zip(&bufs) {
        match (a, b) {
            (_, Some(b)) => builder.arg(b),
            (CliArg::Value { ty, lanes, bytes }, None) => {
                // CAST: at most 16 lanes of 8 bytes.
                let align = (padded_lanes(*lanes) * ty.size()) as u32;
                builder.arg(&RawValue { bytes, align })
            }
            (CliArg::Lds { bytes }, None) => builder.arg(&Lds(*bytes)),
            _ => &mut builder,
        };
    }
    builder
        .groups(o.groups)
        .block(o.block)
        .dynamic_lds(o.dynamic_lds);
    // SAFETY: every buffer argument is a GpuBuffer allocated above at the size its SPEC
    // gives, alive until after the wait inside launch_wait; the kernel's accesses beyond that
    // size are the user's responsibility as with any GPU program, and on a GPU they fault
    // the queue (reported as an error), not the host.
    let t = unsafe { builder.launch_wait() }.map_err(|e| {
        let text =
            super::fault::describe(&e, &o.kernel, &target, &data).unwrap_or_else(|| e.to_string());
        let vas: Vec<(usize, u64)> = bufs
            .iter()
            .enumerate()
            .filter_map(|(i, b)| b.as_ref().map(|b| (i, b.va().get())))
            .collect();
        name_buffers(&text, &vas)
    })?;
    let mut buffers = Vec::new();
    for (i, (a, b)) in args.iter().zip(&bufs).enumerate() {
        if let (
            CliArg::Buf {
                ty,
                bytes,
                shape,
                out: is_out,
            },
            Some(b),
        ) = (a, b)
        {
            let mut out = vec![0u8; bytes.len()];
            dev.copy_out(b, &mut out)
                .map_err(|e| format!("reading buffer {i} back: {e}"))?;
            if let Some(dir) = &o.save {
                std::fs::create_dir_all(dir)
                    .map_err(|e| format!("--save: cannot create {dir}: {e}"))?;
                let path = std::path::Path::new(dir).join(format!("arg{i}.npy"));
                std::fs::write(&path, write_npy(*ty, shape, &out))
                    .map_err(|e| format!("--save: cannot write {}: {e}", path.display()))?;
            }
            let written = *is_out || out != *bytes;
            let values: Vec<serde_json::Value> =
                out.chunks_exact(ty.size()).map(|c| ty.decode(c)).collect();
            buffers.push(json!({
                "arg": i,
                "type": ty.name(),
                "shape": shape,
                "written": written,
                "values": values,
            }));
        }
    }
    Ok(json!({
        "kernel": o.kernel,
        "target": target,
        "groups": o.groups,
        "block": o.block,
        "buffers": buffers,
        "gpu_time_ns": u64::try_from(t.as_nanos()).unwrap_or(u64::MAX),
        "gpu_time_kind": if backend.note.is_some() { "modelled" } else { "measured" },
        "findings": backend.findings(),
    }))
}

fn to_text(r: &serde_json::Value, print: Print) -> String {
    use core::fmt::Write as _;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{} on {}: groups {} block {}, GPU time {} ns ({})",
        r["kernel"].as_str().unwrap_or("?"),
        r["target"].as_str().unwrap_or("?"),
        r["groups"],
        r["block"],
        r["gpu_time_ns"],
        r["gpu_time_kind"].as_str().unwrap_or("?")
    );
    for b in r["buffers"].as_array().into_iter().flatten() {
        let show = match print {
            Print::All => true,
            Print::Written => b["written"].as_bool().unwrap_or(true),
            Print::None => false,
        };
        if !show {
            continue;
        }
        let vals: Vec<String> = b["values"]
            .as_array()
            .into_iter()
            .flatten()
            .map(ToString::to_string)
            .collect();
        let _ = writeln!(
            s,
            "  arg {} ({} x {}): {}",
            b["arg"],
            vals.len(),
            b["type"].as_str().unwrap_or("?"),
            vals.join(" ")
        );
    }
    for f in r["findings"].as_array().into_iter().flatten() {
        let _ = writeln!(s, "  finding: {}", f.as_str().unwrap_or("?"));
    }
    s
}

/// `text` with each `buffer at 0xVA..0xEND` the simulator names followed by the argument
/// the buffer was made for (`(arg I)`), for the buffers `(I, VA)` of this launch.
fn name_buffers(text: &str, vas: &[(usize, u64)]) -> String {
    let mut s = text.to_owned();
    for &(i, va) in vas {
        let needle = format!("buffer at {va:#x}..");
        let Some(at) = s.find(&needle) else {
            continue;
        };
        let from = at + needle.len();
        let end = s[from..]
            .find(|c: char| !(c.is_ascii_hexdigit() || c == 'x'))
            .map_or(s.len(), |n| from + n);
        s.insert_str(end, &format!(" (arg {i})"));
    }
    s
}

/// Its help text.
pub const HELP: &str = USAGE;

/// Runs `hcq run` with `args` (after the sub-command name).
pub fn main(args: &[String]) -> Result<(), CliError> {
    let Some(o) = parse(args).map_err(CliError::Usage)? else {
        return emit(USAGE).map_err(CliError::from);
    };
    let r = execute(&o).map_err(|e| {
        let next = if e.contains(": GPU VM fault: ") {
            "an access outside the kernel's buffers: check each buf:/out: size against what the \
             grid (--groups x --block) touches; `llvm-objdump-19 -d FILE` shows the code around \
             the faulting instruction's kernel offset; HCQ_LOG=debug the driver's log"
        } else if e.contains("\n  instruction: ") {
            "the instruction above faulted: `llvm-objdump-19 -d FILE` shows the code around its \
             kernel offset; `hcq inspect FILE` the kernel's arguments; HCQ_LOG=debug the driver's log"
        } else if e.starts_with(&format!("kernel {} faulted", o.kernel)) {
            "an access outside the kernel's buffers: check each buf:/out: size against what the \
             grid (--groups x --block) touches; HCQ_LOG=debug shows the driver's log"
        } else {
            "`hcq inspect FILE` lists the kernel's arguments and limits; \
             HCQ_LOG=debug shows the driver's log"
        };
        CliError::failed_with(e, next)
    })?;
    if o.json {
        emit(&format!("{r}\n"))
    } else {
        emit(&to_text(&r, o.print))
    }
    .map_err(CliError::from)
}

#[cfg(test)]
mod tests;
