//! `.npy` files: buffers read from `@FILE` arguments and saved after the kernel.

#[allow(clippy::wildcard_imports)]
use super::*;

/// The dtype string `.npy` files spell `ty` with (little-endian).
pub(super) fn npy_descr(ty: Ty) -> &'static str {
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
pub(super) fn read_npy(ty: Ty, path: &str, data: &[u8]) -> Result<(Vec<u8>, Vec<usize>), String> {
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
pub(super) fn write_npy(ty: Ty, shape: &[usize], bytes: &[u8]) -> Vec<u8> {
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
pub(super) fn load_file(ty: Ty, path: &str) -> Result<CliArg, String> {
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
