//! Reading the MessagePack document.

use super::*;

/// Keys the readers below know, as `&'static str` for error messages.
const KERNEL_KEYS: [&str; 17] = [
    ".name",
    ".symbol",
    ".kernarg_segment_size",
    ".kernarg_segment_align",
    ".group_segment_fixed_size",
    ".private_segment_fixed_size",
    ".max_flat_workgroup_size",
    ".reqd_workgroup_size",
    ".wavefront_size",
    ".sgpr_count",
    ".vgpr_count",
    ".agpr_count",
    ".sgpr_spill_count",
    ".vgpr_spill_count",
    ".uniform_work_group_size",
    ".uses_dynamic_stack",
    ".args",
];

const ARG_KEYS: [&str; 8] = [
    ".name",
    ".type_name",
    ".offset",
    ".size",
    ".value_kind",
    ".address_space",
    ".is_const",
    ".pointee_align",
];

/// Reads a map key (a string) and finds it in `keys`: `Some(index)` or `None` for others.
fn key<'a>(r: &mut Reader<'a>, keys: &[&'static str]) -> Result<Option<usize>, MetadataError> {
    let at = r.position();
    match r.next()? {
        Value::Str(s) => Ok(keys.iter().position(|k| k.as_bytes() == s)),
        v => Err(MetadataError::WrongType {
            key: "map key",
            expected: "string",
            found: v.type_name(),
            offset: at,
        }),
    }
}

fn wrong(key: &'static str, expected: &'static str, v: &Value<'_>, at: usize) -> MetadataError {
    MetadataError::WrongType {
        key,
        expected,
        found: v.type_name(),
        offset: at,
    }
}

fn read_u32(r: &mut Reader<'_>, key: &'static str) -> Result<u32, MetadataError> {
    let at = r.position();
    match r.next()? {
        Value::UInt(v) => {
            u32::try_from(v).map_err(|_| MetadataError::OutOfRange { key, offset: at })
        }
        Value::Int(_) => Err(MetadataError::OutOfRange { key, offset: at }),
        v => Err(wrong(key, "integer", &v, at)),
    }
}

fn read_bool(r: &mut Reader<'_>, key: &'static str) -> Result<bool, MetadataError> {
    let at = r.position();
    match r.next()? {
        Value::Bool(b) => Ok(b),
        // LLVM writes `.uniform_work_group_size: 1`.
        Value::UInt(0) => Ok(false),
        Value::UInt(1) => Ok(true),
        Value::UInt(_) | Value::Int(_) => Err(MetadataError::OutOfRange { key, offset: at }),
        v => Err(wrong(key, "boolean", &v, at)),
    }
}

fn read_str<'a>(r: &mut Reader<'a>, key: &'static str) -> Result<&'a str, MetadataError> {
    let at = r.position();
    match r.next()? {
        Value::Str(s) => {
            core::str::from_utf8(s).map_err(|_| MetadataError::NotUtf8 { key, offset: at })
        }
        v => Err(wrong(key, "string", &v, at)),
    }
}

fn read_array(r: &mut Reader<'_>, key: &'static str) -> Result<u32, MetadataError> {
    let at = r.position();
    match r.next()? {
        Value::Array(n) => Ok(n),
        v => Err(wrong(key, "array", &v, at)),
    }
}

fn read_map(r: &mut Reader<'_>, key: &'static str) -> Result<u32, MetadataError> {
    let at = r.position();
    match r.next()? {
        Value::Map(n) => Ok(n),
        v => Err(wrong(key, "map", &v, at)),
    }
}

/// Marks key `i` seen; a second time is [`MetadataError::DuplicateKey`].
fn seen(mask: &mut u32, i: usize, keys: &[&'static str], at: usize) -> Result<(), MetadataError> {
    let bit = 1u32 << (i % 32);
    if *mask & bit != 0 {
        return Err(MetadataError::DuplicateKey {
            key: keys.get(i).copied().unwrap_or("?"),
            offset: at,
        });
    }
    *mask |= bit;
    Ok(())
}

pub(super) fn parse_arg<'a>(
    r: &mut Reader<'a>,
    kernel: u32,
    index: u32,
) -> Result<ArgMeta<'a>, MetadataError> {
    let n = read_map(r, ".args entry")?;
    let mut mask = 0u32;
    let mut a = ArgMeta {
        name: None,
        type_name: None,
        offset: 0,
        size: 0,
        value_kind_str: "",
        value_kind: ValueKind::Other,
        address_space: None,
        is_const: false,
        pointee_align: None,
    };
    for _ in 0..n {
        let at = r.position();
        let Some(i) = key(r, &ARG_KEYS)? else {
            r.skip()?;
            continue;
        };
        seen(&mut mask, i, &ARG_KEYS, at)?;
        match i {
            0 => a.name = Some(read_str(r, ".name")?),
            1 => a.type_name = Some(read_str(r, ".type_name")?),
            2 => a.offset = read_u32(r, ".offset")?,
            3 => a.size = read_u32(r, ".size")?,
            4 => {
                a.value_kind_str = read_str(r, ".value_kind")?;
                a.value_kind = ValueKind::parse(a.value_kind_str);
            }
            5 => a.address_space = Some(AddressSpace::parse(read_str(r, ".address_space")?)),
            6 => a.is_const = read_bool(r, ".is_const")?,
            _ => a.pointee_align = Some(read_u32(r, ".pointee_align")?),
        }
    }
    for (bit, k) in [(2, ".offset"), (3, ".size"), (4, ".value_kind")] {
        if mask & (1 << bit) == 0 {
            return Err(MetadataError::MissingKey {
                key: k,
                kernel: Some(kernel),
                arg: Some(index),
            });
        }
    }
    Ok(a)
}

fn parse_kernel<'a>(
    r: &mut Reader<'a>,
    doc: &'a [u8],
    index: u32,
) -> Result<KernelMeta<'a>, MetadataError> {
    let n = read_map(r, "amdhsa.kernels entry")?;
    let mut mask = 0u32;
    let mut k = KernelMeta {
        name: "",
        symbol: "",
        kernarg_segment_size: 0,
        kernarg_segment_align: 0,
        group_segment_fixed_size: 0,
        private_segment_fixed_size: 0,
        max_flat_workgroup_size: 0,
        reqd_workgroup_size: None,
        wavefront_size: 0,
        sgpr_count: 0,
        vgpr_count: 0,
        agpr_count: None,
        sgpr_spill_count: None,
        vgpr_spill_count: None,
        uniform_work_group_size: None,
        uses_dynamic_stack: None,
        arg_count: 0,
        doc,
        args_at: 0,
    };
    for _ in 0..n {
        let at = r.position();
        let Some(i) = key(r, &KERNEL_KEYS)? else {
            r.skip()?;
            continue;
        };
        seen(&mut mask, i, &KERNEL_KEYS, at)?;
        let name = KERNEL_KEYS.get(i).copied().unwrap_or("?");
        match i {
            0 => k.name = read_str(r, name)?,
            1 => k.symbol = read_str(r, name)?,
            2 => k.kernarg_segment_size = read_u32(r, name)?,
            3 => k.kernarg_segment_align = read_u32(r, name)?,
            4 => k.group_segment_fixed_size = read_u32(r, name)?,
            5 => k.private_segment_fixed_size = read_u32(r, name)?,
            6 => k.max_flat_workgroup_size = read_u32(r, name)?,
            7 => {
                let at = r.position();
                if read_array(r, name)? != 3 {
                    return Err(MetadataError::OutOfRange {
                        key: name,
                        offset: at,
                    });
                }
                let mut v = [0u32; 3];
                for x in &mut v {
                    *x = read_u32(r, name)?;
                }
                k.reqd_workgroup_size = Some(v);
            }
            8 => k.wavefront_size = read_u32(r, name)?,
            9 => k.sgpr_count = read_u32(r, name)?,
            10 => k.vgpr_count = read_u32(r, name)?,
            11 => k.agpr_count = Some(read_u32(r, name)?),
            12 => k.sgpr_spill_count = Some(read_u32(r, name)?),
            13 => k.vgpr_spill_count = Some(read_u32(r, name)?),
            14 => k.uniform_work_group_size = Some(read_bool(r, name)?),
            15 => k.uses_dynamic_stack = Some(read_bool(r, name)?),
            _ => {
                k.arg_count = read_array(r, name)?;
                k.args_at = r.position();
                // Validated after the whole map: the segment size may come later.
                for _ in 0..k.arg_count {
                    r.skip()?;
                }
            }
        }
    }
    for (bit, key) in KERNEL_KEYS.iter().enumerate().take(11) {
        if bit != 7 && mask & (1 << bit) == 0 {
            return Err(MetadataError::MissingKey {
                key,
                kernel: Some(index),
                arg: None,
            });
        }
    }
    for (key, v) in [
        (".kernarg_segment_align", k.kernarg_segment_align),
        (".wavefront_size", k.wavefront_size),
    ] {
        if !v.is_power_of_two() {
            return Err(MetadataError::NotPowerOfTwo { key, value: v });
        }
    }
    // The arguments: each inside the segment, none overlapping the one before.
    let mut ar = Reader::at(doc, k.args_at);
    let mut end = 0u32;
    for i in 0..k.arg_count {
        let a = parse_arg(&mut ar, index, i)?;
        let a_end = a.offset.checked_add(a.size);
        match a_end {
            Some(e) if a.offset >= end && e <= k.kernarg_segment_size => end = e,
            _ => {
                return Err(MetadataError::BadArgLayout {
                    kernel: index,
                    arg: i,
                    offset: a.offset,
                    size: a.size,
                    segment: k.kernarg_segment_size,
                });
            }
        }
    }
    Ok(k)
}

impl<'a> Metadata<'a> {
    /// Parses and validates the note's description bytes (see the module docs).
    ///
    /// # Errors
    /// The first problem, as a [`MetadataError`] naming the key and offset.
    pub fn parse(doc: &'a [u8]) -> Result<Self, MetadataError> {
        const TOP: [&str; 3] = ["amdhsa.version", "amdhsa.target", "amdhsa.kernels"];
        let mut r = Reader::new(doc);
        let n = read_map(&mut r, "metadata document")?;
        let mut mask = 0u32;
        let mut md = Self {
            version: [0, 0],
            target: None,
            kernel_count: 0,
            doc,
            kernels_at: 0,
        };
        for _ in 0..n {
            let at = r.position();
            let Some(i) = key(&mut r, &TOP)? else {
                r.skip()?;
                continue;
            };
            seen(&mut mask, i, &TOP, at)?;
            match i {
                0 => {
                    let at = r.position();
                    if read_array(&mut r, TOP[0])? != 2 {
                        return Err(MetadataError::OutOfRange {
                            key: TOP[0],
                            offset: at,
                        });
                    }
                    md.version = [read_u32(&mut r, TOP[0])?, read_u32(&mut r, TOP[0])?];
                }
                1 => md.target = Some(read_str(&mut r, TOP[1])?),
                _ => {
                    md.kernel_count = read_array(&mut r, TOP[2])?;
                    md.kernels_at = r.position();
                    for k in 0..md.kernel_count {
                        parse_kernel(&mut r, doc, k)?;
                    }
                }
            }
        }
        if mask & 1 == 0 {
            return Err(MetadataError::MissingKey {
                key: TOP[0],
                kernel: None,
                arg: None,
            });
        }
        if md.version[0] != 1 {
            return Err(MetadataError::UnsupportedVersion {
                major: md.version[0].into(),
                minor: md.version[1].into(),
            });
        }
        Ok(md)
    }

    /// Every kernel, in metadata order.
    pub fn kernels(&self) -> impl Iterator<Item = KernelMeta<'a>> + 'a {
        let mut r = Reader::at(self.doc, self.kernels_at);
        let doc = self.doc;
        // Validated by parse: an error cannot happen here; the iterator stops if it does.
        (0..self.kernel_count).map_while(move |i| parse_kernel(&mut r, doc, i).ok())
    }

    /// The kernel whose `.symbol` is `symbol` (`vector_add.kd`).
    #[must_use]
    pub fn by_symbol(&self, symbol: &str) -> Option<KernelMeta<'a>> {
        self.kernels().find(|k| k.symbol == symbol)
    }
}
