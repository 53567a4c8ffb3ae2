//! What the metadata describes: argument kinds, arguments, kernels.

use super::*;

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

pub(super) const HIDDEN_NAMES: [(&str, HiddenKind); 24] = [
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
    pub(super) fn parse(s: &str) -> Self {
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
    /// `.pointee_align`: the alignment a `dynamic_shared_pointer`'s LDS must have, when
    /// present.
    pub pointee_align: Option<u32>,
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
    pub(super) doc: &'a [u8],
    pub(super) args_at: usize,
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
    pub(super) doc: &'a [u8],
    pub(super) kernels_at: usize,
}
