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
    /// `TYPE:VALUE` or `TYPExN:A,B,...`: `lanes` elements (1 for a scalar), the bytes padded
    /// to the vector's size (a 3-element vector takes 4 elements' room, as in OpenCL).
    Value {
        ty: Ty,
        lanes: usize,
        bytes: Vec<u8>,
    },
    /// `buf:TYPE:SPEC` or `out:TYPE:N`: a buffer of `shape` elements; `out` when it starts
    /// zeroed as an output only.
    Buf {
        ty: Ty,
        bytes: Vec<u8>,
        shape: Vec<usize>,
        out: bool,
    },
    /// `buf:TYPE:@FILE`: read when the run starts (a `.npy` or raw little-endian bytes).
    File { ty: Ty, path: String },
    /// `lds:BYTES`: a `dynamic_shared_pointer` (`__local`) argument's LDS.
    Lds { bytes: u32 },
}

/// The most elements a buffer SPEC may ask for (1 Gi elements).
const MAX_ELEMS: usize = 1 << 30;

/// Vector widths `TYPExN` accepts (OpenCL's).
const LANES: [usize; 5] = [2, 3, 4, 8, 16];

/// `u32` or `u32x4`: the scalar type and the lane count (1 for a scalar).
fn parse_vec_ty(s: &str) -> Result<(Ty, usize), String> {
    if let Ok(t) = Ty::parse(s) {
        return Ok((t, 1));
    }
    let Some((t, n)) = s.rsplit_once('x') else {
        return Ty::parse(s).map(|t| (t, 1));
    };
    let ty = Ty::parse(t)?;
    match n.parse::<usize>() {
        Ok(n) if LANES.contains(&n) => Ok((ty, n)),
        _ => Err(format!(
            "`{s}`: a vector is TYPExN with N one of 2, 3, 4, 8, 16"
        )),
    }
}

/// Elements a vector of `lanes` takes in memory (3 takes 4, as OpenCL's `type3`).
fn padded_lanes(lanes: usize) -> usize {
    if lanes == 3 { 4 } else { lanes }
}

fn parse_arg(s: &str) -> Result<CliArg, String> {
    if let Some(n) = s.strip_prefix("lds:") {
        let bytes = n
            .parse::<u32>()
            .map_err(|e| format!("`{s}`: lds:BYTES takes a byte count: {e}"))?;
        return Ok(CliArg::Lds { bytes });
    }
    let count_of = |n: &str| -> Result<usize, String> {
        let n: usize = n.parse().map_err(|e| format!("`{s}`: count `{n}`: {e}"))?;
        if n == 0 || n > MAX_ELEMS {
            return Err(format!("`{s}`: count {n} is not in 1..={MAX_ELEMS}"));
        }
        Ok(n)
    };
    if let Some(rest) = s.strip_prefix("out:") {
        let (ty, n) = rest
            .split_once(':')
            .ok_or_else(|| format!("`{s}`: an output buffer is out:TYPE:N"))?;
        let ty = Ty::parse(ty).map_err(|e| format!("`{s}`: {e}"))?;
        let count = count_of(n)?;
        return Ok(CliArg::Buf {
            ty,
            bytes: vec![0; count * ty.size()],
            shape: vec![count],
            out: true,
        });
    }
    if let Some(rest) = s.strip_prefix("buf:") {
        let (ty, spec) = rest
            .split_once(':')
            .ok_or_else(|| format!("`{s}`: a buffer is buf:TYPE:SPEC"))?;
        let ty = Ty::parse(ty).map_err(|e| format!("`{s}`: {e}"))?;
        if let Some(path) = spec.strip_prefix('@') {
            if path.is_empty() {
                return Err(format!("`{s}`: buf:TYPE:@FILE needs a file name"));
            }
            return Ok(CliArg::File {
                ty,
                path: path.to_owned(),
            });
        }
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
        return Ok(CliArg::Buf {
            ty,
            bytes,
            shape: vec![count],
            out: false,
        });
    }
    let (ty, v) = s.split_once(':').ok_or_else(|| {
        format!("`{s}`: an argument is TYPE:VALUE, TYPExN:A,B,..., buf:TYPE:SPEC, out:TYPE:N or lds:BYTES")
    })?;
    let (ty, lanes) = parse_vec_ty(ty).map_err(|e| format!("`{s}`: {e}"))?;
    let vals: Vec<&str> = if lanes == 1 {
        vec![v]
    } else {
        v.split(',').collect()
    };
    if vals.len() != lanes {
        return Err(format!(
            "`{s}`: {}x{lanes} takes {lanes} comma-separated values, got {}",
            ty.name(),
            vals.len()
        ));
    }
    let mut bytes = Vec::new();
    for v in vals {
        bytes.extend(ty.encode(v).map_err(|e| format!("`{s}`: {e}"))?);
    }
    bytes.resize(padded_lanes(lanes) * ty.size(), 0);
    Ok(CliArg::Value { ty, lanes, bytes })
}

/// The dtype string `.npy` files spell `ty` with (little-endian).
fn npy_descr(ty: Ty) -> &'static str {
    match ty {
        Ty::U8 => "|u1",
        Ty::I8 => "|i1",
        Ty::U16 => "<u2",
        Ty::I16 => "<i2",
        Ty::F16 => "<f2",
        Ty::U32 => "<u4",
        Ty::I32 => "<i4",
        Ty::F32 => "<f4",
        Ty::U64 => "<u8",
        Ty::I64 => "<i8",
        Ty::F64 => "<f8",
    }
}

/// The data and shape of a `.npy` file (format versions 1.0, 2.0 and 3.0, as numpy's
/// `numpy.lib.format` describes them), refusing a dtype other than `ty`'s, big-endian data or
/// Fortran order.
fn read_npy(ty: Ty, path: &str, data: &[u8]) -> Result<(Vec<u8>, Vec<usize>), String> {
    let bad = |why: &str| format!("{path}: not a readable .npy file: {why}");
    let rest = data
        .strip_prefix(b"\x93NUMPY")
        .ok_or_else(|| bad("no \\x93NUMPY magic"))?;
    let (major, rest) = rest.split_first().ok_or_else(|| bad("truncated"))?;
    let rest = rest.get(1..).ok_or_else(|| bad("truncated"))?;
    let (len, rest) = match major {
        1 => {
            let (l, r) = rest
                .split_first_chunk::<2>()
                .ok_or_else(|| bad("truncated"))?;
            (usize::from(u16::from_le_bytes(*l)), r)
        }
        2 | 3 => {
            let (l, r) = rest
                .split_first_chunk::<4>()
                .ok_or_else(|| bad("truncated"))?;
            (
                usize::try_from(u32::from_le_bytes(*l)).unwrap_or(usize::MAX),
                r,
            )
        }
        v => return Err(bad(&format!("format version {v} (hcq reads 1, 2 and 3)"))),
    };
    let header = rest
        .get(..len)
        .ok_or_else(|| bad("header runs past the end"))?;
    let body = rest.get(len..).unwrap_or_default();
    let header = core::str::from_utf8(header).map_err(|_| bad("header is not text"))?;
    let field = |key: &str| -> Result<&str, String> {
        let at = header
            .find(&format!("'{key}'"))
            .ok_or_else(|| bad(&format!("header has no '{key}'")))?;
        let after = header.get(at + key.len() + 2..).unwrap_or_default();
        let after = after
            .trim_start()
            .strip_prefix(':')
            .unwrap_or(after)
            .trim_start();
        Ok(after)
    };
    let descr = field("descr")?;
    let descr = descr
        .strip_prefix('\'')
        .and_then(|d| d.split_once('\''))
        .map(|(d, _)| d)
        .ok_or_else(|| bad("'descr' is not a simple dtype string"))?;
    let want = npy_descr(ty);
    let same = |d: &str| {
        let (o, k) = d.split_at(1.min(d.len()));
        let (wo, wk) = want.split_at(1);
        k == wk && (o == wo || o == "=" || o == "|" || (o == "<" && wo == "|"))
    };
    if !same(descr) {
        return Err(format!(
            "{path}: the array's dtype is '{descr}', but the argument is {} ('{want}'): convert it (numpy: a.astype('{want}')) or pass buf:TYPE with its type",
            ty.name()
        ));
    }
    if field("fortran_order")?.starts_with("True") {
        return Err(format!(
            "{path}: the array is in Fortran order; save a C-ordered copy (numpy.ascontiguousarray)"
        ));
    }
    let shape = field("shape")?;
    let shape = shape
        .strip_prefix('(')
        .and_then(|s| s.split_once(')'))
        .map(|(s, _)| s)
        .ok_or_else(|| bad("'shape' is not a tuple"))?;
    let dims = shape
        .split(',')
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(|d| d.trim_end_matches('L').parse::<usize>())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| bad(&format!("shape ({shape}): {e}")))?;
    let count = dims
        .iter()
        .try_fold(1usize, |a, &d| a.checked_mul(d))
        .filter(|&c| c <= MAX_ELEMS)
        .ok_or_else(|| bad(&format!("shape ({shape}) is over {MAX_ELEMS} elements")))?;
    let bytes = body
        .get(..count * ty.size())
        .ok_or_else(|| {
            bad(&format!(
                "shape ({shape}) needs {} bytes of data, the file has {}",
                count * ty.size(),
                body.len()
            ))
        })?
        .to_vec();
    Ok((bytes, dims))
}

/// A `.npy` file (format 1.0) of `bytes` as `shape` elements of `ty`.
fn write_npy(ty: Ty, shape: &[usize], bytes: &[u8]) -> Vec<u8> {
    let dims: Vec<String> = shape.iter().map(ToString::to_string).collect();
    let shape = if dims.len() == 1 {
        format!("({},)", dims.join(""))
    } else {
        format!("({})", dims.join(", "))
    };
    let mut header = format!(
        "{{'descr': '{}', 'fortran_order': False, 'shape': {shape}, }}",
        npy_descr(ty)
    );
    // Magic (6) + version (2) + length (2) + header + '\n', padded with spaces to a multiple
    // of 64 bytes, so the data is aligned.
    let total = (10 + header.len() + 1).div_ceil(64) * 64;
    while 10 + header.len() + 1 < total {
        header.push(' ');
    }
    header.push('\n');
    let mut out = Vec::with_capacity(total + bytes.len());
    out.extend_from_slice(b"\x93NUMPY\x01\x00");
    // CAST: the header is a few hundred bytes at most.
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(bytes);
    out
}

/// `buf:TYPE:@FILE`'s buffer: a `.npy` (by its magic) or raw little-endian elements.
fn load_file(ty: Ty, path: &str) -> Result<CliArg, String> {
    let data = std::fs::read(path).map_err(|e| format!("cannot read {path}: {e}"))?;
    let (bytes, shape) = if data.starts_with(b"\x93NUMPY") {
        read_npy(ty, path, &data)?
    } else {
        if data.is_empty() || data.len() % ty.size() != 0 {
            return Err(format!(
                "{path}: {} bytes of raw data is not a whole number of {} ({}-byte) elements",
                data.len(),
                ty.name(),
                ty.size()
            ));
        }
        let n = data.len() / ty.size();
        (data, vec![n])
    };
    if bytes.is_empty() {
        return Err(format!(
            "{path}: the array is empty; a buffer needs at least one element"
        ));
    }
    Ok(CliArg::Buf {
        ty,
        bytes,
        shape,
        out: false,
    })
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

/// Which buffers the text output prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Print {
    All,
    Written,
    None,
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
    save: Option<String>,
    print: Print,
    strict: bool,
}

/// `Ok(None)`: help was asked for.
fn parse(args: &[String]) -> Result<Option<Opts>, String> {
    let mut pos = Vec::new();
    let (mut groups, mut block, mut dynamic_lds, mut json_out) = (None, None, 0, false);
    let (mut save, mut print, mut strict) = (None, Print::Written, false);
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
            "--strict" => strict = true,
            "--groups" => groups = Some(parse_dims("--groups", &value("--groups")?)?),
            "--block" => block = Some(parse_dims("--block", &value("--block")?)?),
            "--dynamic-lds" => {
                let v = value("--dynamic-lds")?;
                dynamic_lds = v.parse().map_err(|e| format!("--dynamic-lds `{v}`: {e}"))?;
            }
            "--save" => save = Some(value("--save")?),
            "--print" => {
                print = match value("--print")?.as_str() {
                    "all" => Print::All,
                    "written" => Print::Written,
                    "none" => Print::None,
                    v => return Err(format!("--print takes all, written or none, got `{v}`")),
                }
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
        save,
        print,
        strict,
    }))
}

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
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| (*x).to_owned()).collect()
    }

    #[test]
    fn fault_text_names_the_argument_of_each_buffer() {
        let t = "GPU VM fault: write at 0x2000: no GPU mapping (0 bytes past the end of the \
                 4096-byte buffer at 0x1000..0x2000) at kernel offset 0x68";
        assert_eq!(
            name_buffers(t, &[(2, 0x5000), (0, 0x1000)]),
            "GPU VM fault: write at 0x2000: no GPU mapping (0 bytes past the end of the \
             4096-byte buffer at 0x1000..0x2000 (arg 0)) at kernel offset 0x68"
        );
        assert_eq!(
            name_buffers(t, &[(1, 0x10)]),
            t,
            "0x10 is not a buffer named there"
        );
    }

    #[test]
    fn arg_syntax() {
        assert_eq!(
            parse_arg("u32:7").unwrap(),
            CliArg::Value {
                ty: Ty::U32,
                lanes: 1,
                bytes: vec![7, 0, 0, 0]
            }
        );
        assert_eq!(
            parse_arg("i8:-2").unwrap(),
            CliArg::Value {
                ty: Ty::I8,
                lanes: 1,
                bytes: vec![0xfe]
            }
        );
        assert_eq!(
            parse_arg("buf:u16:1,2,3").unwrap(),
            CliArg::Buf {
                ty: Ty::U16,
                bytes: vec![1, 0, 2, 0, 3, 0],
                shape: vec![3],
                out: false
            }
        );
        assert_eq!(
            parse_arg("buf:u8:4*9").unwrap(),
            CliArg::Buf {
                ty: Ty::U8,
                bytes: vec![9; 4],
                shape: vec![4],
                out: false
            }
        );
        assert_eq!(
            parse_arg("buf:u8:iota:3").unwrap(),
            CliArg::Buf {
                ty: Ty::U8,
                bytes: vec![0, 1, 2],
                shape: vec![3],
                out: false
            }
        );
        assert_eq!(
            parse_arg("f32:2.5").unwrap(),
            CliArg::Value {
                ty: Ty::F32,
                lanes: 1,
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
    fn new_arg_syntax() {
        assert_eq!(
            parse_arg("u32x2:1,2").unwrap(),
            CliArg::Value {
                ty: Ty::U32,
                lanes: 2,
                bytes: vec![1, 0, 0, 0, 2, 0, 0, 0]
            }
        );
        // A 3-vector takes 4 elements' room, as OpenCL's uint3.
        assert_eq!(
            parse_arg("u8x3:1,2,3").unwrap(),
            CliArg::Value {
                ty: Ty::U8,
                lanes: 3,
                bytes: vec![1, 2, 3, 0]
            }
        );
        let CliArg::Value { bytes, .. } =
            parse_arg("f64x16:1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16").unwrap()
        else {
            panic!()
        };
        assert_eq!(bytes.len(), 128);
        assert!(
            parse_arg("u32x5:1,2,3,4,5")
                .unwrap_err()
                .contains("2, 3, 4, 8, 16")
        );
        assert!(
            parse_arg("f32x4:1,2,3")
                .unwrap_err()
                .contains("takes 4 comma-separated values, got 3")
        );
        assert_eq!(parse_arg("lds:1024").unwrap(), CliArg::Lds { bytes: 1024 });
        assert!(parse_arg("lds:x").unwrap_err().contains("lds:BYTES"));
        assert_eq!(
            parse_arg("out:f32:3").unwrap(),
            CliArg::Buf {
                ty: Ty::F32,
                bytes: vec![0; 12],
                shape: vec![3],
                out: true
            }
        );
        assert_eq!(
            parse_arg("buf:f32:@x.npy").unwrap(),
            CliArg::File {
                ty: Ty::F32,
                path: "x.npy".into()
            }
        );
        assert!(
            parse_arg("buf:f32:@")
                .unwrap_err()
                .contains("needs a file name")
        );
    }

    #[test]
    fn c_types_with_vectors() {
        assert_eq!(c_type("uint"), Some((Ty::U32, 1)));
        assert_eq!(c_type("float4*"), Some((Ty::F32, 4)));
        assert_eq!(c_type("const float*"), Some((Ty::F32, 1)));
        assert_eq!(c_type("uint2"), Some((Ty::U32, 2)));
        assert_eq!(c_type("half16"), Some((Ty::F16, 16)));
        assert_eq!(c_type("uint5"), None);
        assert_eq!(c_type("struct S"), None);
    }

    /// The .npy format as numpy's `numpy.lib.format` documents version 1.0: magic, version
    /// 1.0, a little-endian u16 header length, a Python dict literal ending in '\n' and padded
    /// with spaces so the data starts at a multiple of 64.
    #[test]
    fn npy_bytes_follow_the_format() {
        let data: Vec<u8> = [1.5f32, -2.0, 3.25]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let f = write_npy(Ty::F32, &[3], &data);
        assert_eq!(&f[..8], b"\x93NUMPY\x01\x00");
        let hl = usize::from(u16::from_le_bytes([f[8], f[9]]));
        assert_eq!((10 + hl) % 64, 0);
        let header = core::str::from_utf8(&f[10..10 + hl]).unwrap();
        assert!(
            header.starts_with("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }"),
            "{header}"
        );
        assert!(header.ends_with('\n'));
        assert!(header.trim_end_matches('\n').ends_with(['}', ' ']));
        assert_eq!(&f[10 + hl..], &data[..]);
        let g = write_npy(Ty::U8, &[2, 3], &[0; 6]);
        let hl = usize::from(u16::from_le_bytes([g[8], g[9]]));
        let header = core::str::from_utf8(&g[10..10 + hl]).unwrap();
        assert!(
            header.contains("'descr': '|u1'") && header.contains("'shape': (2, 3)"),
            "{header}"
        );
        // Round trip, and what numpy itself writes (version 1.0, shape with a trailing L from
        // Python 2 is accepted too).
        assert_eq!(read_npy(Ty::F32, "t", &f).unwrap(), (data.clone(), vec![3]));
        assert_eq!(read_npy(Ty::U8, "t", &g).unwrap(), (vec![0; 6], vec![2, 3]));
        let e = read_npy(Ty::U32, "t.npy", &f).unwrap_err();
        assert!(
            e.contains("the array's dtype is '<f4', but the argument is u32 ('<u4')"),
            "{e}"
        );
        let mut big = f.clone();
        let at = big.windows(3).position(|w| w == b"<f4").unwrap();
        big[at] = b'>';
        assert!(
            read_npy(Ty::F32, "t", &big)
                .unwrap_err()
                .contains("dtype is '>f4'")
        );
        assert!(
            read_npy(Ty::F32, "t", &f[..f.len() - 1])
                .unwrap_err()
                .contains("needs 12 bytes")
        );
        assert!(
            read_npy(Ty::F32, "t", b"nope")
                .unwrap_err()
                .contains("magic")
        );
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
        assert_eq!(o.print, Print::Written);
        assert_eq!(o.save, None);
        let o = parse(&s(&[
            "k.co", "k", "--groups", "1", "--block", "1", "--print", "all", "--save", "d",
        ]))
        .unwrap()
        .unwrap();
        assert_eq!((o.print, o.save.as_deref()), (Print::All, Some("d")));
        assert!(!o.strict);
        let o = parse(&s(&[
            "k.co", "k", "--groups", "1", "--block", "1", "--strict",
        ]))
        .unwrap()
        .unwrap();
        assert!(o.strict);
        let text = to_text(
            &json!({"kernel": "k", "target": "gfx1100", "groups": [1, 1, 1], "block": [1, 1, 1],
                    "buffers": [], "gpu_time_ns": 1, "gpu_time_kind": "modelled",
                    "findings": ["kernel at 0x1000, ds_load_b32 at kernel offset 0x8: ..."]}),
            Print::Written,
        );
        assert!(
            text.contains("  finding: kernel at 0x1000, ds_load_b32"),
            "{text}"
        );
        assert!(
            parse(&s(&[
                "k.co", "k", "--groups", "1", "--block", "1", "--print", "x"
            ]))
            .unwrap_err()
            .contains("all, written or none")
        );
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
