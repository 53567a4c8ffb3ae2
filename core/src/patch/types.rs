//! Variables, values, entries and errors of a patch table.

use super::*;

/// A variable of a patch table (its index in declaration order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct VarId(pub u16);

impl VarId {
    /// The index into the values slice given to [`PatchTable::apply`].
    #[must_use]
    pub const fn index(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Display for VarId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "variable {}", self.0)
    }
}

/// Launch dimensions: workgroups per axis (`global`, what DISPATCH_DIRECT takes) and work-items
/// per workgroup (`local`, COMPUTE_NUM_THREAD_X..Z).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Dims {
    /// Workgroups in x, y, z.
    pub global: [u32; 3],
    /// Work-items per workgroup in x, y, z.
    pub local: [u32; 3],
}

/// What launch dimensions a kernel accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DimLimits {
    /// Largest workgroups per axis.
    pub max_global: [u32; 3],
    /// Largest work-items per workgroup per axis.
    pub max_local: [u32; 3],
    /// Largest work-items per workgroup (product of `local`).
    pub max_threads: u32,
}

impl DimLimits {
    /// What AMD compute hardware accepts: 1024 work-items per workgroup, 32-bit workgroup
    /// counts.
    pub const AMD: Self = Self {
        max_global: [u32::MAX; 3],
        max_local: [1024; 3],
        max_threads: 1024,
    };

    /// The tighter of two limits (a dims variable shared by several kernels).
    #[must_use]
    pub fn meet(self, o: Self) -> Self {
        let m = |a: [u32; 3], b: [u32; 3]| [a[0].min(b[0]), a[1].min(b[1]), a[2].min(b[2])];
        Self {
            max_global: m(self.max_global, o.max_global),
            max_local: m(self.max_local, o.max_local),
            max_threads: self.max_threads.min(o.max_threads),
        }
    }
}

/// The value of a variable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Value {
    /// A buffer (or signal) address and the bytes available there.
    Addr {
        /// GPU address.
        addr: GpuVa,
        /// Bytes the buffer holds from `addr`.
        bytes: u64,
    },
    /// A scalar: kernel argument, timeline value.
    Scalar(u64),
    /// Launch dimensions.
    Dims(Dims),
}

impl Value {
    pub(super) const fn kind(&self) -> Kind {
        match self {
            Value::Addr { .. } => Kind::Addr,
            Value::Scalar(_) => Kind::Scalar,
            Value::Dims(_) => Kind::Dims,
        }
    }
}

/// The kind of a variable (the [`Value`] variant it takes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// [`Value::Addr`].
    Addr,
    /// [`Value::Scalar`].
    Scalar,
    /// [`Value::Dims`].
    Dims,
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Kind::Addr => "address",
            Kind::Scalar => "scalar",
            Kind::Dims => "launch dims",
        })
    }
}

/// What a variable's new values are checked against, by kind (32 bytes, the size of a
/// [`Value`]: `check` streams one beside each value).
#[derive(Clone, Copy, Debug)]
pub(super) enum VarInfo {
    /// An address: bytes the graph uses from it.
    Addr {
        /// The largest use the bindings recorded.
        bytes: u64,
    },
    /// A scalar: the largest value every field it lands in holds.
    Scalar {
        /// That value.
        max: u64,
    },
    /// Launch dims.
    Dims {
        /// Whether a dispatch packet carries them (local <= u16, grid <= u32).
        packet: bool,
        /// The tightest limits of the kernels using them, `max_local` capped at `u16::MAX`
        /// when a dispatch packet carries them.
        limits: DimLimits,
    },
}

const _: () = assert!(size_of::<VarInfo>() == size_of::<Value>());

impl VarInfo {
    /// The kind of value the variable takes.
    pub(super) const fn kind(&self) -> Kind {
        match self {
            VarInfo::Addr { .. } => Kind::Addr,
            VarInfo::Scalar { .. } => Kind::Scalar,
            VarInfo::Dims { .. } => Kind::Dims,
        }
    }
}

/// How an [`Entry`] turns its variable's value into dwords at `dword`, `dword + 1`, ...
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// A 64-bit value split into two dwords: `lo32(v + add)` at `dword`, `hi32(v + add)` at
    /// `dword + 1` (the address or scalar plus a byte offset: a copy chunk, a signal's value
    /// field).
    Split64 {
        /// Added (wrapping) to the value: a byte offset below 4 GiB.
        add: u32,
    },
    /// A masked field of one dword: `d = (d & !mask) | (((v >> shift) as u32) << pos & mask)`;
    /// covers one half of a 64-bit value that is not stored as a lo/hi pair, and sub-dword
    /// fields.
    Field {
        /// Right shift of the value.
        shift: u8,
        /// Left shift into the dword.
        pos: u8,
        /// Bits of the dword the field owns.
        mask: u32,
    },
    /// `n` consecutive dwords from consecutive components of the value, starting at
    /// component `first`: a scalar has one component (its low 32 bits; validation keeps it
    /// within `u32`), dims have six (global x, y, z, then local x, y, z).
    Dwords {
        /// First component.
        first: u8,
        /// Dwords written (1..=3).
        n: u8,
    },
    /// A dispatch packet's grid: `global[k] * local[k]` at `dword + k`, k = 0..3.
    Grid,
    /// A dispatch packet's workgroup sizes: `local[0] | local[1] << 16` at `dword`, and the
    /// low half of `dword + 1` = `local[2]` (its high half, `reserved0`, is kept).
    Workgroup,
}

/// [`Op::fast`] codes: a dims variable's whole global or local half, a 64-bit pair, anything
/// else.
pub(super) const FAST_GLOBAL: u8 = 0;
pub(super) const FAST_LOCAL: u8 = 1;
pub(super) const FAST_SPLIT: u8 = 2;
pub(super) const FAST_OTHER: u8 = 3;

impl Op {
    /// The write loop's code for the op: the shapes almost every entry has get their own.
    pub(super) const fn fast(&self) -> u8 {
        match self {
            Op::Dwords { first: 0, n: 3 } => FAST_GLOBAL,
            Op::Dwords { first: 3, n: 3 } => FAST_LOCAL,
            Op::Split64 { .. } => FAST_SPLIT,
            _ => FAST_OTHER,
        }
    }

    /// Dwords the op touches from its entry's `dword`.
    #[must_use]
    pub const fn span(&self) -> usize {
        match self {
            Op::Split64 { .. } | Op::Workgroup => 2,
            Op::Field { .. } => 1,
            Op::Dwords { n, .. } => *n as usize,
            Op::Grid => 3,
        }
    }
}

/// One patch: where a variable's value lands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Entry {
    /// The variable.
    pub var: VarId,
    /// Index of the target memory in [`PatchTable::apply`]'s `targets`.
    pub target: u8,
    /// `op` as `apply`'s write loop dispatches on it ([`Op::fast`]), kept in what would be
    /// padding.
    pub(super) fast: u8,
    /// First dword written, in the target.
    pub dword: u32,
    /// What is written.
    pub op: Op,
}

impl Entry {
    /// An entry writing `var` with `op` at `dword` of target `target`.
    #[must_use]
    pub const fn new(var: VarId, target: u8, dword: u32, op: Op) -> Self {
        Self {
            var,
            target,
            fast: op.fast(),
            dword,
            op,
        }
    }
}

// Entries are streamed on every apply: keep them to 16 bytes.
const _: () = assert!(size_of::<Entry>() == 16);
// write_dims uses the fast codes of the halves as bits of `changes`.
const _: () = assert!(1 << FAST_GLOBAL == GLOBAL && 1 << FAST_LOCAL == LOCAL);

/// Why a table refused to record or to apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PatchError {
    /// The table holds its capacity of variables.
    TooManyVars {
        /// Capacity.
        capacity: usize,
    },
    /// The table holds its capacity of entries.
    TooManyEntries {
        /// Capacity.
        capacity: usize,
    },
    /// A target index beyond the table's target capacity.
    BadTarget {
        /// The index.
        target: u8,
        /// Targets the table supports.
        capacity: usize,
    },
    /// A variable id the table did not declare.
    UnknownVar(VarId),
    /// A variable bound or given as the wrong kind.
    WrongKind {
        /// The variable.
        var: VarId,
        /// Its declared kind.
        expected: Kind,
        /// The kind used.
        found: Kind,
    },
    /// The recorded command list does not hold the packet (or the value) a binding expects.
    Cmd(CmdError),
    /// The recorded dword is not what the variable's record-time value produces.
    Mismatch {
        /// The variable.
        var: VarId,
        /// Target.
        target: u8,
        /// Dword.
        dword: u32,
        /// What the list holds.
        found: u32,
        /// What the variable produces.
        expected: u32,
    },
    /// `apply` got fewer values than the table declares variables, or `None` for one.
    MissingVar(VarId),
    /// `apply` got fewer target memories than the table writes to.
    MissingTarget {
        /// The target index.
        target: u8,
    },
    /// A target memory is shorter than the dwords the table patches in it.
    TargetTooShort {
        /// The target index.
        target: u8,
        /// Its dwords.
        len: usize,
        /// Dwords the table needs.
        needed: usize,
    },
    /// A buffer is smaller than what the graph reads or writes through it.
    BufferTooSmall {
        /// The variable.
        var: VarId,
        /// Bytes given.
        bytes: u64,
        /// Bytes the graph recorded.
        needed: u64,
    },
    /// A buffer address range wraps around the address space.
    BadAddress {
        /// The variable.
        var: VarId,
        /// The address.
        addr: GpuVa,
    },
    /// A launch dimension outside the kernels' limits (or zero).
    BadDim {
        /// The variable.
        var: VarId,
        /// `"global"`, `"local"`, `"local (threads per workgroup)"` or `"grid (global*local)"`.
        what: &'static str,
        /// Axis (0..3; 3 for the threads-per-workgroup product).
        axis: u8,
        /// The value given.
        value: u64,
        /// The largest value allowed.
        max: u64,
    },
    /// A scalar too large for a field it is written to.
    ScalarTooLarge {
        /// The variable.
        var: VarId,
        /// The value.
        value: u64,
        /// The largest value every field holds.
        max: u64,
    },
    /// A binding at a byte offset from its variable of 4 GiB or more.
    OffsetTooLarge {
        /// The variable.
        var: VarId,
        /// The offset.
        offset: u64,
    },
}

impl fmt::Display for PatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PatchError::TooManyVars { capacity } => {
                write!(f, "patch table already holds {capacity} variables")
            }
            PatchError::TooManyEntries { capacity } => {
                write!(f, "patch table already holds {capacity} entries")
            }
            PatchError::BadTarget { target, capacity } => write!(
                f,
                "patch target {target} is out of range (the table has {capacity})"
            ),
            PatchError::UnknownVar(v) => write!(f, "{v} was not declared"),
            PatchError::WrongKind {
                var,
                expected,
                found,
            } => write!(f, "{var} is a {expected} variable, used as a {found}"),
            PatchError::Cmd(e) => write!(f, "{e}"),
            PatchError::Mismatch {
                var,
                target,
                dword,
                found,
                expected,
            } => write!(
                f,
                "target {target} dword {dword} holds {found:#010x}, but {var} produces \
                 {expected:#010x} there"
            ),
            PatchError::MissingVar(v) => write!(f, "no value given for {v}"),
            PatchError::MissingTarget { target } => {
                write!(f, "no memory given for patch target {target}")
            }
            PatchError::TargetTooShort {
                target,
                len,
                needed,
            } => write!(
                f,
                "patch target {target} has {len} dwords, the table patches up to {needed}"
            ),
            PatchError::BufferTooSmall { var, bytes, needed } => write!(
                f,
                "{var}: buffer of {bytes} bytes, the graph recorded uses of {needed} bytes"
            ),
            PatchError::BadAddress { var, addr } => {
                write!(f, "{var}: address {addr:?} plus its size wraps")
            }
            PatchError::BadDim {
                var,
                what,
                axis,
                value,
                max,
            } => write!(
                f,
                "{var}: {what}[{axis}] = {value} is outside 1..={max} for the kernels using it"
            ),
            PatchError::ScalarTooLarge { var, value, max } => write!(
                f,
                "{var}: {value:#x} does not fit the fields it patches (max {max:#x})"
            ),
            PatchError::OffsetTooLarge { var, offset } => write!(
                f,
                "{var}: offset {offset:#x} from the variable is 4 GiB or more"
            ),
        }
    }
}

impl core::error::Error for PatchError {}

impl From<CmdError> for PatchError {
    fn from(e: CmdError) -> Self {
        PatchError::Cmd(e)
    }
}

/// A mutable reference to a target is a target (so `apply` takes `&mut [&mut [u32]]`).
impl<T: PatchTarget + ?Sized> PatchTarget for &mut T {
    #[inline(always)]
    fn dword_len(&self) -> usize {
        (**self).dword_len()
    }
    #[inline(always)]
    fn load(&self, i: usize) -> Option<u32> {
        (**self).load(i)
    }
    #[inline(always)]
    fn store(&mut self, i: usize, v: u32) -> Option<()> {
        (**self).store(i, v)
    }
    #[inline(always)]
    fn store_all(&mut self, at: usize, vals: &[u32]) -> Option<()> {
        (**self).store_all(at, vals)
    }
}
