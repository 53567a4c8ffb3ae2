//! `NT_AMDGPU_METADATA`: the MessagePack note describing a code object's kernels (code object
//! v3..v6), read without allocation.
//!
//! [`Metadata::parse`] validates the whole document once: the top-level map, `amdhsa.version`,
//! `amdhsa.target`, and for every kernel of `amdhsa.kernels` each field hcq reads (with its
//! type) and each argument (offset and size inside the kernarg segment, in order, no overlap).
//! Afterwards [`Metadata::kernels`] and [`KernelMeta::args`] walk the validated bytes and
//! cannot fail. Unknown keys are skipped, as LLVM's own reader does; unknown argument value
//! kinds are kept ([`ValueKind::Other`]), and a launch that would have to fill one refuses
//! (see [`hidden`]).
//!
//! [`CodeObject::parse`](crate::codeobj::CodeObject::parse) finds the note, parses it, and
//! checks it against each kernel descriptor where the two say the same thing.

pub mod hidden;
pub mod msgpack;

use core::fmt;

use msgpack::{MsgpackError, Reader, Value};

/// `NT_AMDGPU_METADATA`: the note type of the metadata.
pub const NT_AMDGPU_METADATA: u32 = 32;
/// The note's owner name.
pub const NOTE_OWNER: &[u8] = b"AMDGPU";

/// Why the metadata was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum MetadataError {
    /// The MessagePack itself is malformed.
    Msgpack(MsgpackError),
    /// A note header or its name/description runs past the note section.
    BadNote {
        /// Offset of the note inside its section.
        offset: usize,
    },
    /// A value has the wrong MessagePack type.
    WrongType {
        /// The key (`amdhsa.kernels`, `.kernarg_segment_size`, ...).
        key: &'static str,
        /// What was expected.
        expected: &'static str,
        /// What was found.
        found: &'static str,
        /// Byte offset of the value in the note.
        offset: usize,
    },
    /// A key appears twice in one map.
    DuplicateKey {
        /// The key.
        key: &'static str,
        /// Byte offset of the second one.
        offset: usize,
    },
    /// A required key is missing.
    MissingKey {
        /// The key.
        key: &'static str,
        /// Index of the kernel whose map lacks it (`None`: the top-level map).
        kernel: Option<u32>,
        /// Index of the argument whose map lacks it.
        arg: Option<u32>,
    },
    /// An integer does not fit the field (or is negative).
    OutOfRange {
        /// The key.
        key: &'static str,
        /// Byte offset of the value.
        offset: usize,
    },
    /// A string is not UTF-8.
    NotUtf8 {
        /// The key.
        key: &'static str,
        /// Byte offset of the value.
        offset: usize,
    },
    /// `amdhsa.version` is not 1.x.
    UnsupportedVersion {
        /// Major version.
        major: u64,
        /// Minor version.
        minor: u64,
    },
    /// An argument lies outside the kernarg segment or overlaps the one before it.
    BadArgLayout {
        /// Kernel index.
        kernel: u32,
        /// Argument index.
        arg: u32,
        /// `.offset`.
        offset: u32,
        /// `.size`.
        size: u32,
        /// `.kernarg_segment_size`.
        segment: u32,
    },
    /// An alignment or size that must be a power of two is not.
    NotPowerOfTwo {
        /// The key.
        key: &'static str,
        /// The value.
        value: u32,
    },
}

impl From<MsgpackError> for MetadataError {
    fn from(e: MsgpackError) -> Self {
        Self::Msgpack(e)
    }
}

impl fmt::Display for MetadataError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Msgpack(e) => write!(f, "metadata note: {e}"),
            Self::BadNote { offset } => write!(
                f,
                "note at offset {offset} of its section runs past the section's end"
            ),
            Self::WrongType {
                key,
                expected,
                found,
                offset,
            } => write!(
                f,
                "metadata {key} at offset {offset} is a {found}, expected {expected}"
            ),
            Self::DuplicateKey { key, offset } => {
                write!(
                    f,
                    "metadata key {key} appears twice (again at offset {offset})"
                )
            }
            Self::MissingKey { key, kernel, arg } => match (kernel, arg) {
                (Some(k), Some(a)) => {
                    write!(f, "metadata of kernel {k}, argument {a}: no {key}")
                }
                (Some(k), None) => write!(f, "metadata of kernel {k}: no {key}"),
                _ => write!(f, "metadata: no {key}"),
            },
            Self::OutOfRange { key, offset } => {
                write!(f, "metadata {key} at offset {offset} is out of range")
            }
            Self::NotUtf8 { key, offset } => {
                write!(f, "metadata {key} at offset {offset} is not UTF-8")
            }
            Self::UnsupportedVersion { major, minor } => write!(
                f,
                "metadata amdhsa.version {major}.{minor} is not supported (need 1.x, code object v3..v6)"
            ),
            Self::BadArgLayout {
                kernel,
                arg,
                offset,
                size,
                segment,
            } => write!(
                f,
                "metadata of kernel {kernel}: argument {arg} (offset {offset}, size {size}) is outside the {segment}-byte kernarg segment or overlaps the argument before it"
            ),
            Self::NotPowerOfTwo { key, value } => {
                write!(f, "metadata {key} is {value}, not a power of two")
            }
        }
    }
}

impl core::error::Error for MetadataError {}

/// The description bytes of the first `AMDGPU` `NT_AMDGPU_METADATA` note in `notes` (the bytes
/// of an `SHT_NOTE` section), or `None`.
///
/// # Errors
/// [`MetadataError::BadNote`] for a note running past the section.
pub fn find_note(notes: &[u8]) -> Result<Option<&[u8]>, MetadataError> {
    let mut off = 0usize;
    while off < notes.len() {
        let bad = MetadataError::BadNote { offset: off };
        let word = |at: usize| {
            at.checked_add(4)
                .and_then(|end| notes.get(at..end))
                .and_then(|s| <[u8; 4]>::try_from(s).ok())
                .map(u32::from_le_bytes)
        };
        let (Some(namesz), Some(descsz), Some(ty)) =
            (word(off), word(off + 4), word(off.saturating_add(8)))
        else {
            return Err(bad);
        };
        let pad4 = |n: u32| {
            usize::try_from(n)
                .ok()
                .and_then(|n| n.checked_next_multiple_of(4))
        };
        let (Some(name_len), Some(desc_len)) = (pad4(namesz), pad4(descsz)) else {
            return Err(bad);
        };
        let name_at = off.saturating_add(12);
        let desc_at = name_at.checked_add(name_len).ok_or(bad)?;
        let name = usize::try_from(namesz)
            .ok()
            .and_then(|n| notes.get(name_at..name_at.checked_add(n)?))
            .ok_or(bad)?;
        let desc = usize::try_from(descsz)
            .ok()
            .and_then(|n| notes.get(desc_at..desc_at.checked_add(n)?))
            .ok_or(bad)?;
        let owner = name.strip_suffix(&[0]).unwrap_or(name);
        if ty == NT_AMDGPU_METADATA && owner == NOTE_OWNER {
            return Ok(Some(desc));
        }
        off = desc_at.checked_add(desc_len).ok_or(bad)?;
    }
    Ok(None)
}

/// An argument's `.value_kind`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ValueKind {
    /// `by_value`: a plain value copied into the kernarg segment.
    ByValue,
    /// `global_buffer`: a pointer to global memory.
    GlobalBuffer,
    /// `dynamic_shared_pointer`: a pointer into dynamically sized LDS.
    DynamicSharedPointer,
    /// `sampler`.
    Sampler,
    /// `image`.
    Image,
    /// `pipe`.
    Pipe,
    /// `queue`.
    Queue,
    /// A `hidden_*` argument the runtime fills.
    Hidden(HiddenKind),
    /// A kind this module does not know (kept, so a launch can name it).
    Other,
}

/// The hidden (runtime-filled) argument kinds of code object v3..v6.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum HiddenKind {
    /// `hidden_global_offset_x`.
    GlobalOffsetX,
    /// `hidden_global_offset_y`.
    GlobalOffsetY,
    /// `hidden_global_offset_z`.
    GlobalOffsetZ,
    /// `hidden_none`: padding the runtime leaves zero.
    None,
    /// `hidden_printf_buffer`.
    PrintfBuffer,
    /// `hidden_hostcall_buffer`.
    HostcallBuffer,
    /// `hidden_default_queue`.
    DefaultQueue,
    /// `hidden_completion_action`.
    CompletionAction,
    /// `hidden_multigrid_sync_arg`.
    MultigridSyncArg,
    /// `hidden_heap_v1`.
    HeapV1,
    /// `hidden_block_count_x`.
    BlockCountX,
    /// `hidden_block_count_y`.
    BlockCountY,
    /// `hidden_block_count_z`.
    BlockCountZ,
    /// `hidden_group_size_x`.
    GroupSizeX,
    /// `hidden_group_size_y`.
    GroupSizeY,
    /// `hidden_group_size_z`.
    GroupSizeZ,
    /// `hidden_remainder_x`.
    RemainderX,
    /// `hidden_remainder_y`.
    RemainderY,
    /// `hidden_remainder_z`.
    RemainderZ,
    /// `hidden_grid_dims`.
    GridDims,
    /// `hidden_private_base`.
    PrivateBase,
    /// `hidden_shared_base`.
    SharedBase,
    /// `hidden_queue_ptr`.
    QueuePtr,
    /// `hidden_dynamic_lds_size`.
    DynamicLdsSize,
}

const HIDDEN_NAMES: [(&str, HiddenKind); 24] = [
    ("hidden_global_offset_x", HiddenKind::GlobalOffsetX),
    ("hidden_global_offset_y", HiddenKind::GlobalOffsetY),
    ("hidden_global_offset_z", HiddenKind::GlobalOffsetZ),
    ("hidden_none", HiddenKind::None),
    ("hidden_printf_buffer", HiddenKind::PrintfBuffer),
    ("hidden_hostcall_buffer", HiddenKind::HostcallBuffer),
    ("hidden_default_queue", HiddenKind::DefaultQueue),
    ("hidden_completion_action", HiddenKind::CompletionAction),
    ("hidden_multigrid_sync_arg", HiddenKind::MultigridSyncArg),
    ("hidden_heap_v1", HiddenKind::HeapV1),
    ("hidden_block_count_x", HiddenKind::BlockCountX),
    ("hidden_block_count_y", HiddenKind::BlockCountY),
    ("hidden_block_count_z", HiddenKind::BlockCountZ),
    ("hidden_group_size_x", HiddenKind::GroupSizeX),
    ("hidden_group_size_y", HiddenKind::GroupSizeY),
    ("hidden_group_size_z", HiddenKind::GroupSizeZ),
    ("hidden_remainder_x", HiddenKind::RemainderX),
    ("hidden_remainder_y", HiddenKind::RemainderY),
    ("hidden_remainder_z", HiddenKind::RemainderZ),
    ("hidden_grid_dims", HiddenKind::GridDims),
    ("hidden_private_base", HiddenKind::PrivateBase),
    ("hidden_shared_base", HiddenKind::SharedBase),
    ("hidden_queue_ptr", HiddenKind::QueuePtr),
    ("hidden_dynamic_lds_size", HiddenKind::DynamicLdsSize),
];

impl HiddenKind {
    /// The metadata spelling (`hidden_group_size_x`).
    #[must_use]
    pub fn name(self) -> &'static str {
        HIDDEN_NAMES
            .iter()
            .find(|(_, k)| *k == self)
            .map_or("hidden_?", |(n, _)| n)
    }
}

impl ValueKind {
    /// The kind a `.value_kind` string names.
    #[must_use]
    pub fn parse(s: &str) -> Self {
        match s {
            "by_value" => Self::ByValue,
            "global_buffer" => Self::GlobalBuffer,
            "dynamic_shared_pointer" => Self::DynamicSharedPointer,
            "sampler" => Self::Sampler,
            "image" => Self::Image,
            "pipe" => Self::Pipe,
            "queue" => Self::Queue,
            _ => HIDDEN_NAMES
                .iter()
                .find(|(n, _)| *n == s)
                .map_or(Self::Other, |(_, k)| Self::Hidden(*k)),
        }
    }

    /// Whether the runtime fills this argument (any `hidden_*` kind, known or not).
    #[must_use]
    pub fn is_hidden(self, raw: &str) -> bool {
        matches!(self, Self::Hidden(_)) || raw.starts_with("hidden_")
    }
}

/// An argument's `.address_space`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AddressSpace {
    /// `private`.
    Private,
    /// `global`.
    Global,
    /// `constant`.
    Constant,
    /// `local`.
    Local,
    /// `generic`.
    Generic,
    /// `region`.
    Region,
    /// Something else.
    Other,
}

impl AddressSpace {
    fn parse(s: &str) -> Self {
        match s {
            "private" => Self::Private,
            "global" => Self::Global,
            "constant" => Self::Constant,
            "local" => Self::Local,
            "generic" => Self::Generic,
            "region" => Self::Region,
            _ => Self::Other,
        }
    }
}

/// One kernel argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArgMeta<'a> {
    /// `.name` (source name), when present.
    pub name: Option<&'a str>,
    /// `.type_name` (`float*`, `uint`), when present.
    pub type_name: Option<&'a str>,
    /// `.offset` in the kernarg segment.
    pub offset: u32,
    /// `.size` in bytes.
    pub size: u32,
    /// `.value_kind` exactly as written.
    pub value_kind_str: &'a str,
    /// `.value_kind` decoded.
    pub value_kind: ValueKind,
    /// `.address_space`, when present.
    pub address_space: Option<AddressSpace>,
    /// `.is_const`.
    pub is_const: bool,
}

impl ArgMeta<'_> {
    /// Whether the runtime fills it (`hidden_*`).
    #[must_use]
    pub fn is_hidden(&self) -> bool {
        self.value_kind.is_hidden(self.value_kind_str)
    }
}

/// One kernel's metadata (the fields hcq reads; the others are skipped).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelMeta<'a> {
    /// `.name`.
    pub name: &'a str,
    /// `.symbol` (`<name>.kd`).
    pub symbol: &'a str,
    /// `.kernarg_segment_size`.
    pub kernarg_segment_size: u32,
    /// `.kernarg_segment_align`.
    pub kernarg_segment_align: u32,
    /// `.group_segment_fixed_size` (static LDS bytes).
    pub group_segment_fixed_size: u32,
    /// `.private_segment_fixed_size` (scratch bytes per work-item).
    pub private_segment_fixed_size: u32,
    /// `.max_flat_workgroup_size`.
    pub max_flat_workgroup_size: u32,
    /// `.reqd_workgroup_size`, when present.
    pub reqd_workgroup_size: Option<[u32; 3]>,
    /// `.wavefront_size`.
    pub wavefront_size: u32,
    /// `.sgpr_count`.
    pub sgpr_count: u32,
    /// `.vgpr_count`.
    pub vgpr_count: u32,
    /// `.agpr_count`, when present.
    pub agpr_count: Option<u32>,
    /// `.sgpr_spill_count`, when present.
    pub sgpr_spill_count: Option<u32>,
    /// `.vgpr_spill_count`, when present.
    pub vgpr_spill_count: Option<u32>,
    /// `.uniform_work_group_size`, when present.
    pub uniform_work_group_size: Option<bool>,
    /// `.uses_dynamic_stack`, when present.
    pub uses_dynamic_stack: Option<bool>,
    /// Number of entries in `.args`.
    pub arg_count: u32,
    doc: &'a [u8],
    args_at: usize,
}

impl<'a> KernelMeta<'a> {
    /// Every argument, in metadata order (explicit ones, then hidden ones).
    #[must_use]
    pub fn args(&self) -> Args<'a> {
        Args {
            r: Reader::at(self.doc, self.args_at),
            left: self.arg_count,
        }
    }

    /// The explicit (non-hidden) arguments.
    pub fn explicit_args(&self) -> impl Iterator<Item = ArgMeta<'a>> + 'a {
        self.args().filter(|a| !a.is_hidden())
    }

    /// The hidden arguments.
    pub fn hidden_args(&self) -> impl Iterator<Item = ArgMeta<'a>> + 'a {
        self.args().filter(ArgMeta::is_hidden)
    }
}

/// Iterator over a kernel's validated arguments.
#[derive(Clone, Debug)]
pub struct Args<'a> {
    r: Reader<'a>,
    left: u32,
}

impl<'a> Iterator for Args<'a> {
    type Item = ArgMeta<'a>;
    fn next(&mut self) -> Option<ArgMeta<'a>> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        // Validated by Metadata::parse: an error here cannot happen; stop if it does.
        parse_arg(&mut self.r, 0, 0).ok()
    }
}

/// The parsed metadata document.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Metadata<'a> {
    /// `amdhsa.version` (major, minor).
    pub version: [u32; 2],
    /// `amdhsa.target` (`amdgcn-amd-amdhsa--gfx1100`), when present.
    pub target: Option<&'a str>,
    /// Number of kernels.
    pub kernel_count: u32,
    doc: &'a [u8],
    kernels_at: usize,
}

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

const ARG_KEYS: [&str; 7] = [
    ".name",
    ".type_name",
    ".offset",
    ".size",
    ".value_kind",
    ".address_space",
    ".is_const",
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

fn parse_arg<'a>(
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
            _ => a.is_const = read_bool(r, ".is_const")?,
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

#[cfg(test)]
mod tests;
