//! `hcq run`'s command line: the argument types and their values, the dimensions, the options.

#[allow(clippy::wildcard_imports)]
use super::*;

/// Scalar element types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Ty {
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

pub(super) const TYPES: [(&str, Ty); 11] = [
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
    pub(super) fn parse(s: &str) -> Result<Self, String> {
        TYPES
            .iter()
            .find(|(n, _)| *n == s)
            .map(|(_, t)| *t)
            .ok_or_else(|| {
                format!("unknown type `{s}` (one of u8 u16 u32 u64 i8 i16 i32 i64 f16 f32 f64)")
            })
    }

    pub(super) fn name(self) -> &'static str {
        TYPES
            .iter()
            .find(|(_, t)| *t == self)
            .map_or("?", |(n, _)| n)
    }

    pub(super) fn size(self) -> usize {
        match self {
            Ty::U8 | Ty::I8 => 1,
            Ty::U16 | Ty::I16 | Ty::F16 => 2,
            Ty::U32 | Ty::I32 | Ty::F32 => 4,
            Ty::U64 | Ty::I64 | Ty::F64 => 8,
        }
    }

    /// C/OpenCL/HIP spellings of the type, as metadata `.type_name`s write them.
    pub(super) fn c_names(self) -> &'static [&'static str] {
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
    pub(super) fn encode(self, value: &str) -> Result<Vec<u8>, String> {
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
    pub(super) fn decode(self, b: &[u8]) -> serde_json::Value {
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
pub(super) fn f32_to_f16(v: f32) -> u16 {
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
pub(super) fn f16_to_f32(h: u16) -> f32 {
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
pub(super) enum CliArg {
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
pub(super) const MAX_ELEMS: usize = 1 << 30;

/// Vector widths `TYPExN` accepts (OpenCL's).
pub(super) const LANES: [usize; 5] = [2, 3, 4, 8, 16];

/// `u32` or `u32x4`: the scalar type and the lane count (1 for a scalar).
pub(super) fn parse_vec_ty(s: &str) -> Result<(Ty, usize), String> {
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
pub(super) fn padded_lanes(lanes: usize) -> usize {
    if lanes == 3 { 4 } else { lanes }
}

pub(super) fn parse_arg(s: &str) -> Result<CliArg, String> {
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

pub(super) fn parse_dims(flag: &str, s: &str) -> Result<[u32; 3], String> {
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
pub(super) enum Print {
    All,
    Written,
    None,
}

/// The parsed command line.
#[derive(Debug)]
pub(super) struct Opts {
    pub(super) file: String,
    pub(super) kernel: String,
    pub(super) groups: [u32; 3],
    pub(super) block: [u32; 3],
    pub(super) args: Vec<CliArg>,
    pub(super) dynamic_lds: u32,
    pub(super) json: bool,
    pub(super) save: Option<String>,
    pub(super) print: Print,
    pub(super) strict: bool,
}

/// `Ok(None)`: help was asked for.
pub(super) fn parse(args: &[String]) -> Result<Option<Opts>, String> {
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
