//! `hcq run FILE KERNEL --groups X[,Y[,Z]] --block X[,Y[,Z]] [ARG]... [--dynamic-lds BYTES]
//! [--json]`: runs one kernel of a code object (or offload bundle) through the checked launch
//! builder. Each ARG is one explicit argument, in the kernel's order: `TYPE:VALUE` for a
//! `by_value` argument, `buf:TYPE:SPEC` for a `global_buffer` (SPEC `1,2,3`, `N*V` or
//! `iota:N`), allocated at that size, filled, and read back after the kernel. On a machine
//! without a GPU the simulator runs it, as a GPU of the code object's target.

use super::{CliError, emit};

use hcq_driver::{BufferKind, ByValue, Device, GpuBuffer, Kfd, Program};
use serde_json::json;

const USAGE: &str = "\
usage: hcq run FILE KERNEL --groups X[,Y[,Z]] --block X[,Y[,Z]] [ARG]... [--dynamic-lds BYTES] [--json]

Runs KERNEL of the code object (or clang offload bundle) FILE once and prints its buffers.
ARG, one per explicit kernel argument, in order, checked against the kernel's metadata:
  TYPE:VALUE       a by_value argument          (u32:1000, f32:2.5, i64:-3)
  buf:TYPE:SPEC    a global_buffer, filled from SPEC and read back after the kernel:
                   1,2,3 (these values), N*V (N copies of V), iota:N (0, 1, ..., N-1)
TYPE: u8 u16 u32 u64 i8 i16 i32 i64 f16 f32 f64
  --dynamic-lds BYTES   dynamic LDS per work-group (default 0)
  --json                one JSON object on stdout:
                        {\"kernel\", \"target\", \"groups\", \"block\",
                         \"buffers\": [{\"arg\", \"type\", \"values\"}], \"gpu_time_ns\",
                         \"gpu_time_kind\": \"modelled\" (simulator) or \"measured\"}
Without a GPU (/dev/kfd), the simulator runs the kernel's machine code as a GPU of the code
object's target (gfx90a, gfx942, gfx1100, gfx1201); its gpu_time_ns is then modelled, not
measured: the duration a model of the instructions the kernel executed gives on that GPU
(issue cycles over every SIMD, or bytes over memory bandwidth), plus a few 10 ns ticks for
the packets between the timestamps around the dispatch.
Exit status: 0 success, 1 the run failed or was refused, 2 usage error.
";

/// Scalar element types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ty {
    U8,
    U16,
    U32,
    U64,
    I8,
    I16,
    I32,
    I64,
    F16,
    F32,
    F64,
}

const TYPES: [(&str, Ty); 11] = [
    ("u8", Ty::U8),
    ("u16", Ty::U16),
    ("u32", Ty::U32),
    ("u64", Ty::U64),
    ("i8", Ty::I8),
    ("i16", Ty::I16),
    ("i32", Ty::I32),
    ("i64", Ty::I64),
    ("f16", Ty::F16),
    ("f32", Ty::F32),
    ("f64", Ty::F64),
];

impl Ty {
    fn parse(s: &str) -> Result<Self, String> {
        TYPES
            .iter()
            .find(|(n, _)| *n == s)
            .map(|(_, t)| *t)
            .ok_or_else(|| {
                format!("unknown type `{s}` (one of u8 u16 u32 u64 i8 i16 i32 i64 f16 f32 f64)")
            })
    }

    fn name(self) -> &'static str {
        TYPES
            .iter()
            .find(|(_, t)| *t == self)
            .map_or("?", |(n, _)| n)
    }

    fn size(self) -> usize {
        match self {
            Ty::U8 | Ty::I8 => 1,
            Ty::U16 | Ty::I16 | Ty::F16 => 2,
            Ty::U32 | Ty::I32 | Ty::F32 => 4,
            Ty::U64 | Ty::I64 | Ty::F64 => 8,
        }
    }

    /// C/OpenCL/HIP spellings of the type, as metadata `.type_name`s write them.
    fn c_names(self) -> &'static [&'static str] {
        match self {
            Ty::U8 => &["uchar", "unsigned char", "uint8_t"],
            Ty::U16 => &["ushort", "unsigned short", "uint16_t"],
            Ty::U32 => &["uint", "unsigned int", "unsigned", "uint32_t"],
            Ty::U64 => &[
                "ulong",
                "unsigned long",
                "unsigned long long",
                "uint64_t",
                "size_t",
            ],
            Ty::I8 => &["char", "signed char", "int8_t"],
            Ty::I16 => &["short", "int16_t"],
            Ty::I32 => &["int", "int32_t"],
            Ty::I64 => &["long", "long long", "int64_t"],
            Ty::F16 => &["half", "_Float16", "__half"],
            Ty::F32 => &["float"],
            Ty::F64 => &["double"],
        }
    }

    /// `value` (decimal; `0x` hex for integers) as this type's little-endian bytes.
    fn encode(self, value: &str) -> Result<Vec<u8>, String> {
        let bad = |e: &dyn core::fmt::Display| format!("`{value}` is not a {}: {e}", self.name());
        let int = |v: &str| -> Result<i128, String> {
            let (neg, digits) = match v.strip_prefix('-') {
                Some(d) => (true, d),
                None => (false, v),
            };
            let mag = match digits.strip_prefix("0x") {
                Some(h) => i128::from_str_radix(h, 16),
                None => digits.parse::<i128>(),
            }
            .map_err(|e| bad(&e))?;
            Ok(if neg { -mag } else { mag })
        };
        let range = |v: i128, lo: i128, hi: i128| {
            if (lo..=hi).contains(&v) {
                Ok(v)
            } else {
                Err(format!("{v} does not fit {}", self.name()))
            }
        };
        let float = |v: &str| v.parse::<f64>().map_err(|e| bad(&e));
        // CAST (all narrowing below): each value was range-checked for its type first.
        Ok(match self {
            Ty::U8 => vec![range(int(value)?, 0, u8::MAX.into())? as u8],
            Ty::U16 => (range(int(value)?, 0, u16::MAX.into())? as u16)
                .to_le_bytes()
                .to_vec(),
            Ty::U32 => (range(int(value)?, 0, u32::MAX.into())? as u32)
                .to_le_bytes()
                .to_vec(),
            Ty::U64 => (range(int(value)?, 0, u64::MAX.into())? as u64)
                .to_le_bytes()
                .to_vec(),
            Ty::I8 => (range(int(value)?, i8::MIN.into(), i8::MAX.into())? as i8)
                .to_le_bytes()
                .to_vec(),
            Ty::I16 => (range(int(value)?, i16::MIN.into(), i16::MAX.into())? as i16)
                .to_le_bytes()
                .to_vec(),
            Ty::I32 => (range(int(value)?, i32::MIN.into(), i32::MAX.into())? as i32)
                .to_le_bytes()
                .to_vec(),
            Ty::I64 => (range(int(value)?, i64::MIN.into(), i64::MAX.into())? as i64)
                .to_le_bytes()
                .to_vec(),
            // CAST: f64 -> f32 rounds, as C does for a float argument.
            Ty::F16 => f32_to_f16(float(value)? as f32).to_le_bytes().to_vec(),
            // CAST: as above.
            Ty::F32 => (float(value)? as f32).to_le_bytes().to_vec(),
            Ty::F64 => float(value)?.to_le_bytes().to_vec(),
        })
    }

    /// One element's bytes as JSON.
    fn decode(self, b: &[u8]) -> serde_json::Value {
        let mut w = [0u8; 8];
        if let Some(d) = w.get_mut(..b.len()) {
            d.copy_from_slice(b);
        }
        let u = u64::from_le_bytes(w);
        // CAST (narrowing): each value is `size()` bytes wide, so the casts keep every bit.
        match self {
            Ty::U8 | Ty::U16 | Ty::U32 | Ty::U64 => json!(u),
            Ty::I8 => json!(u as u8 as i8),
            Ty::I16 => json!(u as u16 as i16),
            Ty::I32 => json!(u as u32 as i32),
            Ty::I64 => json!(u as i64),
            Ty::F16 => json!(f16_to_f32(u as u16)),
            Ty::F32 => json!(f32::from_bits(u as u32)),
            Ty::F64 => json!(f64::from_bits(u)),
        }
    }
}

/// IEEE binary16 bits of `v`, rounded to nearest even.
fn f32_to_f16(v: f32) -> u16 {
    let x = v.to_bits();
    // CAST: the sign bit shifted to bit 15 fits u16.
    let sign = ((x >> 16) & 0x8000) as u16;
    let exp = ((x >> 23) & 0xff) as i32;
    let man = x & 0x7f_ffff;
    if exp == 0xff {
        // Inf or NaN (quiet).
        return sign | 0x7c00 | if man != 0 { 0x200 } else { 0 };
    }
    let e = exp - 127 + 15;
    if e >= 0x1f {
        return sign | 0x7c00;
    }
    if e <= 0 {
        if e < -10 {
            return sign;
        }
        let m = man | 0x80_0000;
        // CAST: e in -10..=0, so the shift is 14..=24.
        let shift = (14 - e) as u32;
        let half = 1u32 << (shift - 1);
        let rest = m & ((1 << shift) - 1);
        let mut r = m >> shift;
        if rest > half || (rest == half && r & 1 == 1) {
            r += 1;
        }
        // CAST: a subnormal (or the smallest normal after rounding) fits 11 bits.
        return sign | r as u16;
    }
    let mut r = ((e as u32) << 10) | (man >> 13);
    let rest = man & 0x1fff;
    if rest > 0x1000 || (rest == 0x1000 && r & 1 == 1) {
        r += 1; // may carry into the exponent (up to infinity), as IEEE rounding does
    }
    // CAST: r <= 0x7c00.
    sign | r as u16
}

/// The value of IEEE binary16 bits.
fn f16_to_f32(h: u16) -> f32 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = i32::from((h >> 10) & 0x1f);
    let man = f32::from(h & 0x3ff);
    match exp {
        0 => sign * man * 2f32.powi(-24),
        0x1f if man == 0.0 => sign * f32::INFINITY,
        0x1f => f32::NAN,
        _ => sign * (1.0 + man / 1024.0) * 2f32.powi(exp - 15),
    }
}

/// One command-line kernel argument.
#[derive(Clone, Debug, PartialEq)]
enum CliArg {
    Value {
        ty: Ty,
        bytes: Vec<u8>,
    },
    Buf {
        ty: Ty,
        bytes: Vec<u8>,
        count: usize,
    },
}

/// The most elements a buffer SPEC may ask for (1 Gi elements).
const MAX_ELEMS: usize = 1 << 30;

fn parse_arg(s: &str) -> Result<CliArg, String> {
    if let Some(rest) = s.strip_prefix("buf:") {
        let (ty, spec) = rest
            .split_once(':')
            .ok_or_else(|| format!("`{s}`: a buffer is buf:TYPE:SPEC"))?;
        let ty = Ty::parse(ty).map_err(|e| format!("`{s}`: {e}"))?;
        let count_of = |n: &str| -> Result<usize, String> {
            let n: usize = n.parse().map_err(|e| format!("`{s}`: count `{n}`: {e}"))?;
            if n == 0 || n > MAX_ELEMS {
                return Err(format!("`{s}`: count {n} is not in 1..={MAX_ELEMS}"));
            }
            Ok(n)
        };
        let mut bytes = Vec::new();
        let count;
        if let Some(n) = spec.strip_prefix("iota:") {
            count = count_of(n)?;
            for i in 0..count {
                bytes.extend(
                    ty.encode(&i.to_string())
                        .map_err(|e| format!("`{s}`: {e}"))?,
                );
            }
        } else if let Some((n, v)) = spec.split_once('*') {
            count = count_of(n)?;
            let one = ty.encode(v).map_err(|e| format!("`{s}`: {e}"))?;
            for _ in 0..count {
                bytes.extend_from_slice(&one);
            }
        } else {
            let vals: Vec<&str> = spec.split(',').collect();
            count = vals.len();
            for v in vals {
                bytes.extend(ty.encode(v).map_err(|e| format!("`{s}`: {e}"))?);
            }
        }
        return Ok(CliArg::Buf { ty, bytes, count });
    }
    let (ty, v) = s
        .split_once(':')
        .ok_or_else(|| format!("`{s}`: an argument is TYPE:VALUE or buf:TYPE:SPEC"))?;
    let ty = Ty::parse(ty).map_err(|e| format!("`{s}`: {e}"))?;
    let bytes = ty.encode(v).map_err(|e| format!("`{s}`: {e}"))?;
    Ok(CliArg::Value { ty, bytes })
}

fn parse_dims(flag: &str, s: &str) -> Result<[u32; 3], String> {
    let parts: Vec<&str> = s.split(',').collect();
    if parts.is_empty() || parts.len() > 3 {
        return Err(format!("{flag} takes X[,Y[,Z]], got `{s}`"));
    }
    let mut d = [1u32; 3];
    for (slot, p) in d.iter_mut().zip(&parts) {
        *slot = p
            .parse()
            .map_err(|e| format!("{flag} `{s}`: `{p}` is not a u32: {e}"))?;
    }
    Ok(d)
}

/// The parsed command line.
#[derive(Debug)]
struct Opts {
    file: String,
    kernel: String,
    groups: [u32; 3],
    block: [u32; 3],
    args: Vec<CliArg>,
    dynamic_lds: u32,
    json: bool,
}

/// `Ok(None)`: help was asked for.
fn parse(args: &[String]) -> Result<Option<Opts>, String> {
    let mut pos = Vec::new();
    let (mut groups, mut block, mut dynamic_lds, mut json_out) = (None, None, 0, false);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = |flag: &str| {
            it.next()
                .cloned()
                .ok_or_else(|| format!("{flag} needs a value"))
        };
        match a.as_str() {
            "-h" | "--help" => return Ok(None),
            "--json" => json_out = true,
            "--groups" => groups = Some(parse_dims("--groups", &value("--groups")?)?),
            "--block" => block = Some(parse_dims("--block", &value("--block")?)?),
            "--dynamic-lds" => {
                let v = value("--dynamic-lds")?;
                dynamic_lds = v.parse().map_err(|e| format!("--dynamic-lds `{v}`: {e}"))?;
            }
            s if s.starts_with("--") => return Err(format!("unknown option `{s}`")),
            s => pos.push(s.to_owned()),
        }
    }
    let mut pos = pos.into_iter();
    let file = pos.next().ok_or("missing FILE")?;
    let kernel = pos.next().ok_or("missing KERNEL")?;
    let args = pos.map(|a| parse_arg(&a)).collect::<Result<Vec<_>, _>>()?;
    Ok(Some(Opts {
        file,
        kernel,
        groups: groups.ok_or("missing --groups")?,
        block: block.ok_or("missing --block")?,
        args,
        dynamic_lds,
        json: json_out,
    }))
}

/// Refuses a command-line argument whose kind or type differs from the metadata's.
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
            .map(|(i, a)| {
                format!(
                    "{} {}",
                    a.describe(i),
                    if a.class == hcq_driver::ArgClass::Buffer {
                        "buf:TYPE:SPEC"
                    } else {
                        "TYPE:VALUE"
                    }
                )
            })
            .collect();
        return Err(format!(
            "kernel {} takes {} arguments ({}), got {}",
            prog.name(),
            meta.len(),
            kinds.join(", "),
            args.len()
        ));
    }
    for (i, (a, m)) in args.iter().zip(meta).enumerate() {
        let what = m.describe(i);
        let (ty, is_buf) = match a {
            CliArg::Value { ty, .. } => (*ty, false),
            CliArg::Buf { ty, .. } => (*ty, true),
        };
        let c_type = m.type_name.as_deref().map(|t| {
            t.trim_end_matches('*')
                .trim()
                .trim_start_matches("const ")
                .trim_start_matches("__global ")
                .trim()
                .to_owned()
        });
        let known = c_type
            .as_deref()
            .filter(|c| TYPES.iter().any(|(_, t)| t.c_names().contains(c)));
        if let Some(c) = known.filter(|c| !ty.c_names().contains(c)) {
            return Err(format!(
                "{what} is {}{c}, got {}{}",
                if is_buf { "a buffer of " } else { "a " },
                if is_buf { "buf:" } else { "" },
                ty.name()
            ));
        }
        if !is_buf && m.class == hcq_driver::ArgClass::Value && ty.size() as u32 != m.size {
            return Err(format!(
                "{what} is {} bytes, {} is {}",
                m.size,
                ty.name(),
                ty.size()
            ));
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

fn open_backend(data: &[u8]) -> Result<Backend, String> {
    let targets = targets_of(data)?;
    let real_err = match Kfd::open() {
        Ok(k) if !k.gpus().is_empty() => {
            return Ok(Backend {
                kfd: k,
                note: None,
                #[cfg(feature = "sim")]
                _gpu: None,
            });
        }
        Ok(_) => "/dev/kfd has no usable GPU".to_owned(),
        Err(e) => format!("no usable /dev/kfd ({e})"),
    };
    #[cfg(feature = "sim")]
    {
        use hcq_sim::{GpuConfig, SimConfig, SimKfd};
        let simulated = [
            ("gfx1100", GpuConfig::gfx1100 as fn() -> GpuConfig),
            ("gfx90a", GpuConfig::gfx90a),
            ("gfx942", GpuConfig::gfx942),
            ("gfx1201", GpuConfig::gfx1201),
        ];
        let (name, cfg) = targets
            .iter()
            .find_map(|t| simulated.iter().find(|(n, _)| n == t))
            .ok_or_else(|| {
                format!(
                    "{real_err}, and the simulator has no GPU for {} (it simulates gfx1100, gfx90a, gfx942, gfx1201)",
                    targets.join(", ")
                )
            })?;
        let sim = std::sync::Arc::new(
            SimKfd::new(SimConfig {
                gpus: vec![cfg()],
                ..SimConfig::default()
            })
            .map_err(|e| format!("starting the simulator: {e}"))?,
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
        })
    }
    #[cfg(not(feature = "sim"))]
    {
        let _ = targets;
        Err(real_err)
    }
}

/// Runs the kernel; returns the JSON report.
fn execute(o: &Opts) -> Result<serde_json::Value, String> {
    let data = std::fs::read(&o.file).map_err(|e| format!("cannot read {}: {e}", o.file))?;
    let backend = open_backend(&data)?;
    if let Some(n) = &backend.note {
        eprintln!("hcq run: {n}");
    }
    let dev = Device::open(&backend.kfd, 0).map_err(|e| format!("opening the GPU: {e}"))?;
    let target = dev.target_name();
    let prog = Program::load(&dev, &data, &o.kernel).map_err(|e| format!("{}: {e}", o.file))?;
    check_against(&prog, &o.args)?;
    let mut bufs: Vec<Option<GpuBuffer>> = Vec::new();
    for a in &o.args {
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
            CliArg::Value { .. } => None,
        });
    }
    let mut builder = prog.launch_builder();
    for (a, b) in o.args.iter().zip(&bufs) {
        match (a, b) {
            (_, Some(b)) => builder.arg(b),
            (CliArg::Value { ty, bytes }, None) => push_value(&mut builder, *ty, bytes),
            (CliArg::Buf { .. }, None) => &mut builder,
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
    let t = unsafe { builder.launch_wait() }.map_err(|e| e.to_string())?;
    let mut buffers = Vec::new();
    for (i, (a, b)) in o.args.iter().zip(&bufs).enumerate() {
        if let (CliArg::Buf { ty, bytes, .. }, Some(b)) = (a, b) {
            let mut out = vec![0u8; bytes.len()];
            dev.copy_out(b, &mut out)
                .map_err(|e| format!("reading buffer {i} back: {e}"))?;
            let values: Vec<serde_json::Value> =
                out.chunks_exact(ty.size()).map(|c| ty.decode(c)).collect();
            buffers.push(json!({ "arg": i, "type": ty.name(), "values": values }));
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
    }))
}

fn push_value<'b, 'p>(
    b: &'b mut hcq_driver::LaunchBuilder<'p>,
    ty: Ty,
    bytes: &[u8],
) -> &'b mut hcq_driver::LaunchBuilder<'p> {
    let mut w = [0u8; 8];
    if let Some(d) = w.get_mut(..bytes.len()) {
        d.copy_from_slice(bytes);
    }
    let u = u64::from_le_bytes(w);
    // CAST (narrowing): `bytes` is the type's width, so the casts keep every bit.
    match ty {
        Ty::U8 => b.arg(&(u as u8)),
        Ty::U16 => b.arg(&(u as u16)),
        Ty::U32 => b.arg(&(u as u32)),
        Ty::U64 => b.arg(&u),
        Ty::I8 => b.arg(&(u as u8 as i8)),
        Ty::I16 => b.arg(&(u as u16 as i16)),
        Ty::I32 => b.arg(&(u as u32 as i32)),
        Ty::I64 => b.arg(&(u as i64)),
        Ty::F16 => b.arg(&ByValue(u as u16)),
        Ty::F32 => b.arg(&f32::from_bits(u as u32)),
        Ty::F64 => b.arg(&f64::from_bits(u)),
    }
}

fn to_text(r: &serde_json::Value) -> String {
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
        CliError::failed_with(
            e,
            "`hcq inspect FILE` lists the kernel's arguments and limits; \
             HCQ_LOG=debug shows the driver's log",
        )
    })?;
    if o.json {
        emit(&format!("{r}\n"))
    } else {
        emit(&to_text(&r))
    }
    .map_err(CliError::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| (*x).to_owned()).collect()
    }

    #[test]
    fn arg_syntax() {
        assert_eq!(
            parse_arg("u32:7").unwrap(),
            CliArg::Value {
                ty: Ty::U32,
                bytes: vec![7, 0, 0, 0]
            }
        );
        assert_eq!(
            parse_arg("i8:-2").unwrap(),
            CliArg::Value {
                ty: Ty::I8,
                bytes: vec![0xfe]
            }
        );
        assert_eq!(
            parse_arg("buf:u16:1,2,3").unwrap(),
            CliArg::Buf {
                ty: Ty::U16,
                bytes: vec![1, 0, 2, 0, 3, 0],
                count: 3
            }
        );
        assert_eq!(
            parse_arg("buf:u8:4*9").unwrap(),
            CliArg::Buf {
                ty: Ty::U8,
                bytes: vec![9; 4],
                count: 4
            }
        );
        assert_eq!(
            parse_arg("buf:u8:iota:3").unwrap(),
            CliArg::Buf {
                ty: Ty::U8,
                bytes: vec![0, 1, 2],
                count: 3
            }
        );
        assert_eq!(
            parse_arg("f32:2.5").unwrap(),
            CliArg::Value {
                ty: Ty::F32,
                bytes: 2.5f32.to_le_bytes().to_vec()
            }
        );
        assert_eq!(
            parse_arg("u8:300").unwrap_err(),
            "`u8:300`: 300 does not fit u8"
        );
        assert!(
            parse_arg("q32:1")
                .unwrap_err()
                .contains("unknown type `q32`")
        );
        assert!(parse_arg("buf:u32:0*1").unwrap_err().contains("count 0"));
        assert!(parse_arg("buf:u32").unwrap_err().contains("buf:TYPE:SPEC"));
        assert!(parse_arg("7").unwrap_err().contains("TYPE:VALUE"));
    }

    #[test]
    fn f16_conversion_round_trips() {
        for v in [0.0f32, 1.0, -2.5, 65504.0, 6.1035156e-5, 5.9604645e-8] {
            assert_eq!(f16_to_f32(f32_to_f16(v)), v, "{v}");
        }
        assert_eq!(f32_to_f16(1.0), 0x3c00);
        assert_eq!(f32_to_f16(1e6), 0x7c00);
        assert!(f16_to_f32(f32_to_f16(f32::NAN)).is_nan());
    }

    #[test]
    fn command_line() {
        let o = parse(&s(&[
            "k.co",
            "k",
            "--groups",
            "4",
            "--block",
            "64,2",
            "buf:u32:iota:4",
            "u32:4",
            "--json",
        ]))
        .unwrap()
        .unwrap();
        assert_eq!(o.groups, [4, 1, 1]);
        assert_eq!(o.block, [64, 2, 1]);
        assert_eq!(o.args.len(), 2);
        assert!(o.json);
        assert!(parse(&s(&["--help"])).unwrap().is_none());
        assert_eq!(
            parse(&s(&["k.co", "k", "--block", "1"])).unwrap_err(),
            "missing --groups"
        );
        assert!(parse(&s(&["k.co", "k", "--groups", "1,2,3,4"])).is_err());
        assert!(parse(&s(&["k.co", "--groups"])).is_err());
        assert!(parse(&s(&["k.co", "k", "--frob"])).is_err());
    }
}
