//! Patch tables: the variables of a recorded command stream (a graph) and every dword that
//! depends on them, computed once at record time, applied per replay by writing only what
//! changed.
//!
//! tinygrad's `HCQGraph` records symbolic placeholders (`q_sints`, `mv_sints`) and resolves them
//! on every submit; Metal's indirect command buffers re-set changed bindings. A [`PatchTable`]
//! is the same idea, allocation-free and typed:
//!
//! * A **variable** ([`VarId`]) is declared with its record-time [`Value`]: a buffer or signal
//!   address ([`Value::Addr`], which also carries the buffer's size so a replay with a smaller
//!   buffer is refused), a scalar ([`Value::Scalar`]: kernel arguments, timeline values) or the
//!   launch dimensions of one or more kernels ([`Value::Dims`]).
//! * **Bindings** say where a variable lands: `bind_*` functions verify the packet they point at
//!   in the recorded command list (the header must be the packet the handle names, the recorded
//!   value must be what the variable produces) and add [`Entry`]s: (variable, target, dword
//!   index, [`Op`]). Targets are indices into the slice of memories given to
//!   [`PatchTable::apply`]: by convention the bound PM4 list, the bound SDMA list and the
//!   kernargs region, but the table does not care.
//! * [`PatchTable::apply`] checks every value first (all present, right kind, buffers large
//!   enough, dims inside the kernels' limits, scalars inside the fields that carry them); on any
//!   error nothing has been written. Then it writes the entries of the variables whose value
//!   differs from the last applied (or recorded) one, and only those.
//!
//! [`PatchTable::check`] and [`PatchTable::write`] are `apply` in two halves, for a caller
//! that must wait between checking and writing (a graph replay checks, waits until the GPU is
//! done with the previous replay, then writes): the values are checked once.
//!
//! The memory written is a [`PatchTarget`]: a plain `[u32]` or a shared `&[AtomicU32]` view of
//! GPU memory. Patching GPU memory the device may be reading is the caller's business to avoid
//! (wait for the previous replay of the same buffers to complete, or alternate two copies).
//!
//! ```
//! use hcq_core::arch::{GpuVa, GFX11};
//! use hcq_core::cmd::Pm4List;
//! use hcq_core::patch::{Dims, DimLimits, PatchTable, Value};
//! use hcq_core::pm4::Program;
//!
//! let mut list: Pm4List<512, 8> = Pm4List::new(&GFX11);
//! let prog = Program::default();
//! let (exec, _) = list.exec(&prog, GpuVa(0x1000), [4, 1, 1], [64, 1, 1])?;
//! let mut table: PatchTable<4, 16> = PatchTable::new();
//! let dims = table.declare(Value::Dims(Dims { global: [4, 1, 1], local: [64, 1, 1] }))?;
//! table.bind_exec(dims, 0, list.as_dwords(), &exec, DimLimits::AMD, None)?;
//!
//! let mut ib: [u32; 512] = [0; 512];
//! let n = list.as_dwords().len();
//! ib[..n].copy_from_slice(list.as_dwords());
//! let new = [Some(Value::Dims(Dims { global: [8, 2, 1], local: [32, 1, 1] }))];
//! let written = table.apply(&new, &mut [&mut ib[..n]])?;
//! assert_eq!(written, 6);
//! assert_eq!(table.apply(&new, &mut [&mut ib[..n]])?, 0); // nothing changed
//! # Ok::<(), hcq_core::patch::PatchError>(())
//! ```

use core::fmt;

use crate::arch::{GpuVa, hi32, join64, lo32};
use crate::cmd::{CmdError, CopyCmd, Engine, ExecCmd, PatchTarget, SignalCmd, WaitCmd};
use crate::pm4::{self, Pm4Header};
use crate::sdma;
use crate::signal::VALUE_OFFSET;

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
    const fn kind(&self) -> Kind {
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
const FAST_GLOBAL: u8 = 0;
const FAST_LOCAL: u8 = 1;
const FAST_SPLIT: u8 = 2;
const FAST_OTHER: u8 = 3;

impl Op {
    /// The write loop's code for the op: the shapes almost every entry has get their own.
    const fn fast(&self) -> u8 {
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
    fast: u8,
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

/// Per-variable facts (kept small: `apply` reads one per changed variable).
#[derive(Clone, Copy, Debug)]
struct VarInfo {
    kind: Kind,
    /// Dims: whether a dispatch packet carries it (local <= u16, grid <= u32).
    packet: bool,
    /// Its current value has not been checked against what the bindings require (it was
    /// declared, or a binding changed the requirements, since): checked even if unchanged.
    stale: bool,
    /// Addr: bytes the graph uses from the address. Scalar: the largest value every field
    /// holds.
    bound: u64,
    /// Entries of the variable (they follow the previous variable's once sealed).
    count: u32,
    /// Dims: the tightest limits of the kernels using it, `max_local` capped at `u16::MAX`
    /// when a dispatch packet carries it.
    limits: DimLimits,
}

const _: () = assert!(size_of::<VarInfo>() <= 48);

/// Limits of a fresh dims variable (none yet).
const NO_LIMITS: DimLimits = DimLimits {
    max_global: [u32::MAX; 3],
    max_local: [u32::MAX; 3],
    max_threads: u32::MAX,
};

/// A patch table of at most `V` variables, `E` entries and `T` target memories.
#[derive(Clone)]
pub struct PatchTable<const V: usize, const E: usize, const T: usize = 4> {
    vars: heapless::Vec<VarInfo, V>,
    prev: heapless::Vec<Value, V>,
    /// Scratch of `check`/`write`: what changed in each variable ([`changes`]).
    dirty: heapless::Vec<u8, V>,
    /// Bumped by every check, write and change of the table: a [`Checked`] of another
    /// generation is checked again before it is written.
    generation: u64,
    entries: heapless::Vec<Entry, E>,
    /// Dwords each target must have.
    need: [usize; T],
    sealed: bool,
}

impl<const V: usize, const E: usize, const T: usize> fmt::Debug for PatchTable<V, E, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PatchTable")
            .field("vars", &self.vars.len())
            .field("entries", &self.entries.len())
            .field("need", &self.need)
            .finish()
    }
}

impl<const V: usize, const E: usize, const T: usize> Default for PatchTable<V, E, T> {
    fn default() -> Self {
        Self::new()
    }
}

const WAIT_HDR: u32 = Pm4Header::packet3(pm4::op::WAIT_REG_MEM, 6).raw();
const RELEASE_HDR: u32 = Pm4Header::packet3(pm4::op::RELEASE_MEM, 7).raw();
const DISPATCH_HDR: u32 = Pm4Header::packet3(pm4::op::DISPATCH_DIRECT, 4).raw();
const START_HDR: u32 = Pm4Header::packet3(pm4::op::SET_SH_REG, 9).raw();

fn idx(base: u32, add: usize) -> usize {
    // CAST: u32 -> usize is lossless on the 32/64-bit targets hcq supports.
    (base as usize).saturating_add(add)
}

fn to_u32(i: usize) -> Result<u32, PatchError> {
    u32::try_from(i).map_err(|_| {
        PatchError::Cmd(CmdError::OutOfRange {
            offset: i,
            len: u32::MAX as usize,
        })
    })
}

/// Checks that `mem[at]` satisfies `ok` and `mem` reaches `last`.
fn expect<M: PatchTarget + ?Sized>(
    mem: &M,
    at: usize,
    last: usize,
    name: &'static str,
    ok: impl Fn(u32) -> bool,
) -> Result<(), PatchError> {
    let len = mem.dword_len();
    if last >= len {
        return Err(CmdError::OutOfRange { offset: last, len }.into());
    }
    let found = mem
        .load(at)
        .ok_or(CmdError::OutOfRange { offset: at, len })?;
    if ok(found) {
        Ok(())
    } else {
        Err(CmdError::WrongPacket {
            offset: at,
            expected: name,
            found,
        }
        .into())
    }
}

fn sdma_op(h: u32) -> (u32, u32) {
    let h = sdma::SdmaHeader(h);
    (h.get(sdma::SdmaHeader::OP), h.get(sdma::SdmaHeader::SUB_OP))
}

/// The dword `op` writes at `dword + k` for value `v`, given the dword there now (`old`).
#[inline(always)]
fn produce(op: &Op, v: &Value, k: usize, old: u32) -> u32 {
    match (op, v) {
        (Op::Split64 { add }, _) => {
            let s = scalar_of(v).wrapping_add(u64::from(*add));
            if k == 0 { lo32(s) } else { hi32(s) }
        }
        (Op::Field { shift, pos, mask }, _) => {
            let s = scalar_of(v);
            // CAST: a field takes the low 32 bits of the shifted value by definition.
            let f = (s.checked_shr(u32::from(*shift)).unwrap_or(0) as u32)
                .checked_shl(u32::from(*pos))
                .unwrap_or(0);
            (old & !mask) | (f & mask)
        }
        (Op::Dwords { first, .. }, Value::Dims(d)) => {
            comp(d, usize::from(*first).saturating_add(k))
        }
        // CAST: validation keeps scalars written as dwords within u32.
        (Op::Dwords { .. }, _) => scalar_of(v) as u32,
        (Op::Grid, Value::Dims(d)) => {
            let g = d.global.get(k).copied().unwrap_or(0);
            let l = d.local.get(k).copied().unwrap_or(0);
            g.wrapping_mul(l)
        }
        (Op::Workgroup, Value::Dims(d)) => {
            if k == 0 {
                (d.local[0] & 0xFFFF) | (d.local[1] << 16)
            } else {
                (old & 0xFFFF_0000) | (d.local[2] & 0xFFFF)
            }
        }
        (Op::Grid | Op::Workgroup, _) => old,
    }
}

#[inline(always)]
fn scalar_of(v: &Value) -> u64 {
    match v {
        Value::Addr { addr, .. } => addr.get(),
        Value::Scalar(s) => *s,
        Value::Dims(_) => 0,
    }
}

#[inline(always)]
fn comp(d: &Dims, i: usize) -> u32 {
    match i {
        0..3 => d.global.get(i).copied().unwrap_or(0),
        _ => d.local.get(i.wrapping_sub(3)).copied().unwrap_or(0),
    }
}

impl<const V: usize, const E: usize, const T: usize> PatchTable<V, E, T> {
    /// An empty table.
    #[must_use]
    pub const fn new() -> Self {
        Self {
            vars: heapless::Vec::new(),
            prev: heapless::Vec::new(),
            dirty: heapless::Vec::new(),
            generation: 0,
            entries: heapless::Vec::new(),
            need: [0; T],
            sealed: true,
        }
    }

    /// Declares a variable with its record-time value (what the recorded lists hold).
    pub fn declare(&mut self, initial: Value) -> Result<VarId, PatchError> {
        let n = self.vars.len();
        let id = u16::try_from(n).map_err(|_| PatchError::TooManyVars { capacity: V })?;
        let kind = initial.kind();
        let info = VarInfo {
            kind,
            packet: false,
            stale: true,
            bound: if kind == Kind::Scalar { u64::MAX } else { 0 },
            count: 0,
            limits: NO_LIMITS,
        };
        self.vars
            .push(info)
            .map_err(|_| PatchError::TooManyVars { capacity: V })?;
        if self.prev.push(initial).is_err() || self.dirty.push(0).is_err() {
            self.vars.pop();
            self.prev.truncate(n);
            return Err(PatchError::TooManyVars { capacity: V });
        }
        self.generation = self.generation.wrapping_add(1);
        Ok(VarId(id))
    }

    /// Variables declared.
    #[must_use]
    pub fn var_count(&self) -> usize {
        self.vars.len()
    }

    /// The entries (sorted by variable after the first `apply`).
    #[must_use]
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The values last applied (the record-time values before the first `apply`).
    #[must_use]
    pub fn current(&self) -> &[Value] {
        &self.prev
    }

    /// Dwords each target must have for [`Self::apply`].
    #[must_use]
    pub fn needed_dwords(&self) -> &[usize; T] {
        &self.need
    }

    /// Bytes an address variable must cover (the largest use the bindings recorded).
    pub fn required_bytes(&self, var: VarId) -> Result<u64, PatchError> {
        Ok(self.info(var, Kind::Addr)?.bound)
    }

    fn info(&self, var: VarId, kind: Kind) -> Result<&VarInfo, PatchError> {
        let i = self
            .vars
            .get(var.index())
            .ok_or(PatchError::UnknownVar(var))?;
        if i.kind != kind {
            return Err(PatchError::WrongKind {
                var,
                expected: i.kind,
                found: kind,
            });
        }
        Ok(i)
    }

    fn info_mut(&mut self, var: VarId, kind: Kind) -> Result<&mut VarInfo, PatchError> {
        self.info(var, kind)?;
        // What a check accepted may no longer be acceptable.
        self.generation = self.generation.wrapping_add(1);
        let i = self
            .vars
            .get_mut(var.index())
            .ok_or(PatchError::UnknownVar(var))?;
        i.stale = true;
        Ok(i)
    }

    fn initial(&self, var: VarId) -> Result<Value, PatchError> {
        self.prev
            .get(var.index())
            .copied()
            .ok_or(PatchError::UnknownVar(var))
    }

    /// Adds an entry after checking that `mem` (the recorded target) already holds what the
    /// variable's record-time value produces there.
    fn push<M: PatchTarget + ?Sized>(
        &mut self,
        mem: Option<&M>,
        e: Entry,
    ) -> Result<(), PatchError> {
        let t = usize::from(e.target);
        if t >= T {
            return Err(PatchError::BadTarget {
                target: e.target,
                capacity: T,
            });
        }
        if self.entries.is_full() {
            return Err(PatchError::TooManyEntries { capacity: E });
        }
        let v = self.initial(e.var)?;
        let end = idx(e.dword, e.op.span());
        if let Some(mem) = mem {
            let len = mem.dword_len();
            if end > len {
                return Err(CmdError::OutOfRange {
                    offset: end - 1,
                    len,
                }
                .into());
            }
            for k in 0..e.op.span() {
                let at = idx(e.dword, k);
                let found = mem
                    .load(at)
                    .ok_or(CmdError::OutOfRange { offset: at, len })?;
                let expected = produce(&e.op, &v, k, found);
                if found != expected {
                    return Err(PatchError::Mismatch {
                        var: e.var,
                        target: e.target,
                        dword: to_u32(at)?,
                        found,
                        expected,
                    });
                }
            }
        }
        if let Some(n) = self.need.get_mut(t) {
            *n = (*n).max(end);
        }
        self.entries
            .push(e)
            .map_err(|_| PatchError::TooManyEntries { capacity: E })?;
        self.sealed = false;
        self.generation = self.generation.wrapping_add(1);
        Ok(())
    }

    fn need_bytes(&mut self, var: VarId, bytes: u64) -> Result<(), PatchError> {
        let i = self.info_mut(var, Kind::Addr)?;
        i.bound = i.bound.max(bytes);
        Ok(())
    }

    fn limit_scalar(&mut self, var: VarId, max: u64) -> Result<(), PatchError> {
        let i = self.info_mut(var, Kind::Scalar)?;
        i.bound = i.bound.min(max);
        Ok(())
    }

    /// Records that the graph uses `bytes` bytes of an address variable (a kernel's view of a
    /// buffer): a replay with a smaller buffer is refused.
    pub fn require_bytes(&mut self, var: VarId, bytes: u64) -> Result<(), PatchError> {
        self.need_bytes(var, bytes)
    }

    /// A 64-bit kernarg slot (or any lo/hi pair) at dword `dword` of `target` holding the
    /// variable's value plus `add` (an address variable: a pointer `add` bytes into the
    /// buffer; a scalar: a 64-bit argument). `mem`, when given, is checked to hold the
    /// record-time value already.
    pub fn bind_u64<M: PatchTarget + ?Sized>(
        &mut self,
        var: VarId,
        target: u8,
        mem: Option<&M>,
        dword: u32,
        add: u64,
    ) -> Result<(), PatchError> {
        if self.initial(var)?.kind() == Kind::Dims {
            return Err(PatchError::WrongKind {
                var,
                expected: Kind::Dims,
                found: Kind::Scalar,
            });
        }
        let add =
            u32::try_from(add).map_err(|_| PatchError::OffsetTooLarge { var, offset: add })?;
        self.push(mem, Entry::new(var, target, dword, Op::Split64 { add }))
    }

    /// A 32-bit scalar slot (kernel argument, 32-bit timeline value) at `dword` of `target`.
    /// The variable's values are then limited to `u32`.
    pub fn bind_u32<M: PatchTarget + ?Sized>(
        &mut self,
        var: VarId,
        target: u8,
        mem: Option<&M>,
        dword: u32,
    ) -> Result<(), PatchError> {
        self.limit_scalar(var, u32::MAX.into())?;
        self.push(
            mem,
            Entry::new(var, target, dword, Op::Dwords { first: 0, n: 1 }),
        )
    }

    /// A masked field (see [`Op::Field`]) of an address or scalar variable.
    #[expect(clippy::too_many_arguments, reason = "one argument per Op::Field part")]
    pub fn bind_field<M: PatchTarget + ?Sized>(
        &mut self,
        var: VarId,
        target: u8,
        mem: Option<&M>,
        dword: u32,
        shift: u8,
        pos: u8,
        mask: u32,
    ) -> Result<(), PatchError> {
        if self.initial(var)?.kind() == Kind::Dims {
            return Err(PatchError::WrongKind {
                var,
                expected: Kind::Dims,
                found: Kind::Scalar,
            });
        }
        self.push(
            mem,
            Entry::new(var, target, dword, Op::Field { shift, pos, mask }),
        )
    }

    /// Launch dims of an exec command in `list` (bound as `target`): NUM_THREAD_X..Z and
    /// DISPATCH_DIRECT's x, y, z. For a kernel with a dispatch pointer, `packet` names the
    /// target and dword of its dispatch packet (kernargs + packet offset): workgroup and grid
    /// sizes there are patched too. `limits` are the kernel's; a dims variable shared by
    /// several kernels keeps the tightest.
    pub fn bind_exec<M: PatchTarget + ?Sized>(
        &mut self,
        var: VarId,
        target: u8,
        list: &M,
        h: &ExecCmd,
        limits: DimLimits,
        packet: Option<(u8, u32)>,
    ) -> Result<(), PatchError> {
        self.info(var, Kind::Dims)?;
        let d = idx(h.offset, h.layout.dispatch_at);
        let s = idx(h.offset, h.layout.start_at);
        expect(list, d, d + 4, "DISPATCH_DIRECT", |x| x == DISPATCH_HDR)?;
        expect(list, s, s + 9, "SET_SH_REG(COMPUTE_START_X)", |x| {
            x == START_HDR
        })?;
        if h.dispatch.is_some() != packet.is_some() {
            return Err(CmdError::WrongPacket {
                offset: d,
                expected: if packet.is_some() {
                    "exec with a dispatch pointer"
                } else {
                    "exec without a dispatch pointer (or give its packet location)"
                },
                found: DISPATCH_HDR,
            }
            .into());
        }
        let before = self.entries.len();
        let r: Result<(), PatchError> = (|| {
            self.push(
                Some(list),
                Entry::new(
                    var,
                    target,
                    to_u32(idx(h.offset, h.layout.local_at))?,
                    Op::Dwords { first: 3, n: 3 },
                ),
            )?;
            self.push(
                Some(list),
                Entry::new(var, target, to_u32(d + 1)?, Op::Dwords { first: 0, n: 3 }),
            )?;
            if let Some((pt, pd)) = packet {
                // Workgroup sizes at byte 4, grid at byte 12 of the packet.
                self.push::<M>(
                    None,
                    Entry::new(var, pt, pd.saturating_add(1), Op::Workgroup),
                )?;
                self.push::<M>(None, Entry::new(var, pt, pd.saturating_add(3), Op::Grid))?;
            }
            Ok(())
        })();
        if let Err(e) = r {
            self.entries.truncate(before);
            return Err(e);
        }
        let i = self.info_mut(var, Kind::Dims)?;
        i.packet |= packet.is_some();
        i.limits = i.limits.meet(limits);
        if i.packet {
            // A dispatch packet holds 16-bit workgroup sizes.
            i.limits.max_local = i.limits.max_local.map(|m| m.min(u16::MAX.into()));
        }
        Ok(())
    }

    /// The value a wait command waits for (a scalar; limited to `u32`).
    pub fn bind_wait_value<M: PatchTarget + ?Sized>(
        &mut self,
        var: VarId,
        target: u8,
        list: &M,
        h: &WaitCmd,
    ) -> Result<(), PatchError> {
        let o = idx(h.offset, 0);
        let at = match h.engine {
            Engine::Pm4 => {
                expect(list, o, o + 6, "WAIT_REG_MEM", |x| x == WAIT_HDR)?;
                o + 4
            }
            Engine::Sdma => {
                expect(list, o, o + 5, "SDMA POLL_REGMEM", |x| {
                    sdma_op(x).0 == sdma::op::POLL_REGMEM
                })?;
                o + 3
            }
        };
        self.bind_u32(var, target, Some(list), to_u32(at)?)
    }

    /// The signal a wait command polls: `var` is the signal's address (an `amd_signal_t`;
    /// the command reads its value field).
    pub fn bind_wait_signal<M: PatchTarget + ?Sized>(
        &mut self,
        var: VarId,
        target: u8,
        list: &M,
        h: &WaitCmd,
    ) -> Result<(), PatchError> {
        let o = idx(h.offset, 0);
        let at = match h.engine {
            Engine::Pm4 => {
                expect(list, o, o + 6, "WAIT_REG_MEM", |x| x == WAIT_HDR)?;
                o + 2
            }
            Engine::Sdma => {
                expect(list, o, o + 5, "SDMA POLL_REGMEM", |x| {
                    sdma_op(x).0 == sdma::op::POLL_REGMEM
                })?;
                o + 1
            }
        };
        self.info(var, Kind::Addr)?;
        self.need_bytes(var, VALUE_OFFSET + 8)?;
        self.bind_u64(var, target, Some(list), to_u32(at)?, VALUE_OFFSET)
    }

    /// The value a signal command writes (PM4: 64 bits; SDMA: limited to `u32`).
    pub fn bind_signal_value<M: PatchTarget + ?Sized>(
        &mut self,
        var: VarId,
        target: u8,
        list: &M,
        h: &SignalCmd,
    ) -> Result<(), PatchError> {
        let o = idx(h.offset, 0);
        match h.engine {
            Engine::Pm4 => {
                expect(list, o, o + 7, "RELEASE_MEM", |x| x == RELEASE_HDR)?;
                self.info(var, Kind::Scalar)?;
                self.bind_u64(var, target, Some(list), to_u32(o + 5)?, 0)
            }
            Engine::Sdma => {
                expect(list, o, o + 3, "SDMA FENCE", |x| {
                    sdma_op(x).0 == sdma::op::FENCE
                })?;
                self.bind_u32(var, target, Some(list), to_u32(o + 3)?)
            }
        }
    }

    /// The signal a signal command writes: `var` is the signal's address (its value field is
    /// written). The mailbox/event part of the command is not a variable.
    pub fn bind_signal_addr<M: PatchTarget + ?Sized>(
        &mut self,
        var: VarId,
        target: u8,
        list: &M,
        h: &SignalCmd,
    ) -> Result<(), PatchError> {
        let o = idx(h.offset, 0);
        let at = match h.engine {
            Engine::Pm4 => {
                expect(list, o, o + 7, "RELEASE_MEM", |x| x == RELEASE_HDR)?;
                o + 3
            }
            Engine::Sdma => {
                expect(list, o, o + 3, "SDMA FENCE", |x| {
                    sdma_op(x).0 == sdma::op::FENCE
                })?;
                o + 1
            }
        };
        self.info(var, Kind::Addr)?;
        self.need_bytes(var, VALUE_OFFSET + 8)?;
        self.bind_u64(var, target, Some(list), to_u32(at)?, VALUE_OFFSET)
    }

    /// The source (`src`) and/or destination (`dst`) buffer of an SDMA copy: every
    /// COPY_LINEAR chunk's address, at the byte offset it was recorded with relative to the
    /// variable's record-time address. The variables then need `offset + size` bytes.
    pub fn bind_copy<M: PatchTarget + ?Sized>(
        &mut self,
        src: Option<VarId>,
        dst: Option<VarId>,
        target: u8,
        list: &M,
        h: &CopyCmd,
    ) -> Result<(), PatchError> {
        let base = |v: Option<VarId>| -> Result<Option<(VarId, u64, u64)>, PatchError> {
            match v {
                None => Ok(None),
                Some(v) => {
                    self.info(v, Kind::Addr)?;
                    match self.initial(v)? {
                        Value::Addr { addr, bytes } => Ok(Some((v, addr.get(), bytes))),
                        other => Err(PatchError::WrongKind {
                            var: v,
                            expected: Kind::Addr,
                            found: other.kind(),
                        }),
                    }
                }
            }
        };
        let (src, dst) = (base(src)?, base(dst)?);
        let o = idx(h.offset, 0);
        let g = sdma::GCR_REQ_DWORDS;
        let c = sdma::COPY_LINEAR_DWORDS;
        let is_gcr = |x: u32| sdma_op(x).0 == sdma::op::GCR_REQ;
        expect(list, o, o + g - 1, "SDMA GCR_REQ (copy start)", is_gcr)?;
        let before = self.entries.len();
        let body = idx(h.dwords, 0).saturating_sub(2 * g);
        if idx(h.dwords, 0) < 2 * g || body % c != 0 {
            return Err(CmdError::WrongPacket {
                offset: o,
                expected: "copy command of GCR_REQ, COPY_LINEAR * n, GCR_REQ",
                found: h.dwords,
            }
            .into());
        }
        let chunks = body / c;
        let rd = |i: usize| list.load(i).unwrap_or(0);
        let chunk_at = |k: usize| o + g + k * c;
        // First pass: packets, and the bytes each buffer must hold.
        let mut needed = [0u64; 2];
        for k in 0..chunks {
            let at = chunk_at(k);
            expect(list, at, at + c - 1, "SDMA COPY_LINEAR", |x| {
                sdma_op(x) == (sdma::op::COPY, sdma::sub_op::COPY_LINEAR)
            })?;
            let bytes = u64::from(rd(at + 1)) + 1;
            for (j, var, dw) in [(0, src, at + 3), (1, dst, at + 5)] {
                if let (Some((_, a0, _)), Some(n)) = (var, needed.get_mut(j)) {
                    let rec = join64(rd(dw), rd(dw + 1));
                    *n = (*n).max(rec.wrapping_sub(a0).saturating_add(bytes));
                }
            }
        }
        let at = chunk_at(chunks);
        expect(list, at, at + g - 1, "SDMA GCR_REQ (copy end)", is_gcr)?;
        for (var, n) in [(src, needed[0]), (dst, needed[1])] {
            if let Some((v, _, size)) = var {
                if n > size {
                    return Err(PatchError::BufferTooSmall {
                        var: v,
                        bytes: size,
                        needed: n,
                    });
                }
            }
        }
        if let Some((v, _, _)) = src {
            self.need_bytes(v, needed[0])?;
        }
        if let Some((v, _, _)) = dst {
            self.need_bytes(v, needed[1])?;
        }
        let r: Result<(), PatchError> = (|| {
            for k in 0..chunks {
                let at = chunk_at(k);
                for (var, dw) in [(src, at + 3), (dst, at + 5)] {
                    if let Some((v, a0, _)) = var {
                        let rec = join64(rd(dw), rd(dw + 1));
                        let off = rec.wrapping_sub(a0);
                        let add = u32::try_from(off).map_err(|_| PatchError::OffsetTooLarge {
                            var: v,
                            offset: off,
                        })?;
                        self.push(
                            Some(list),
                            Entry::new(v, target, to_u32(dw)?, Op::Split64 { add }),
                        )?;
                    }
                }
            }
            Ok(())
        })();
        if let Err(e) = r {
            self.entries.truncate(before);
            return Err(e);
        }
        Ok(())
    }

    /// Sorts entries by variable and counts each variable's (done by `apply`): a variable's
    /// entries then start where the previous variable's end.
    pub fn seal(&mut self) {
        if self.sealed {
            return;
        }
        self.entries
            .sort_unstable_by_key(|e| (e.var, e.target, e.dword));
        for i in self.vars.iter_mut() {
            i.count = 0;
        }
        for e in &self.entries {
            if let Some(i) = self.vars.get_mut(e.var.index()) {
                i.count = i.count.saturating_add(1);
            }
        }
        self.sealed = true;
    }

    /// Checks one new value against its variable.
    #[inline(always)]
    fn check_value(var: VarId, info: &VarInfo, v: &Value) -> Result<(), PatchError> {
        match (info.kind, v) {
            (Kind::Addr, Value::Addr { addr, bytes }) => {
                if *bytes < info.bound {
                    return Err(PatchError::BufferTooSmall {
                        var,
                        bytes: *bytes,
                        needed: info.bound,
                    });
                }
                if addr.get().checked_add(*bytes).is_none() {
                    return Err(PatchError::BadAddress { var, addr: *addr });
                }
                Ok(())
            }
            (Kind::Scalar, Value::Scalar(s)) => {
                if *s > info.bound {
                    return Err(PatchError::ScalarTooLarge {
                        var,
                        value: *s,
                        max: info.bound,
                    });
                }
                Ok(())
            }
            (Kind::Dims, Value::Dims(d)) => {
                if dims_ok(&info.limits, info.packet, d) {
                    Ok(())
                } else {
                    check_dims(var, &info.limits, info.packet, d)
                }
            }
            (k, v) => Err(PatchError::WrongKind {
                var,
                expected: k,
                found: v.kind(),
            }),
        }
    }

    /// Checks `values` as [`Self::apply`] would, without writing: every variable present and
    /// acceptable. Returns how many changed since the last apply.
    pub fn validate(&self, values: &[Option<Value>]) -> Result<usize, PatchError> {
        let mut n = 0usize;
        self.check_all(values, |_| n += 1)?;
        Ok(n)
    }

    fn check_all<'v>(
        &self,
        values: &'v [Option<Value>],
        mut on_changed: impl FnMut(u16),
    ) -> Result<&'v [Option<Value>], PatchError> {
        let n = self.prev.len();
        let Some(given) = values.get(..n) else {
            // CAST: values.len() < n <= V, and declare() refused ids beyond u16.
            return Err(PatchError::MissingVar(VarId(values.len() as u16)));
        };
        for (i, ((v, prev), info)) in given
            .iter()
            .zip(self.prev.iter())
            .zip(self.vars.iter())
            .enumerate()
        {
            // CAST: i < V and declare() refused ids beyond u16.
            let var = VarId(i as u16);
            let Some(v) = v else {
                return Err(PatchError::MissingVar(var));
            };
            let changed = v != prev;
            if changed || info.stale {
                Self::check_value(var, info, v)?;
            }
            if changed {
                on_changed(var.0);
            }
        }
        Ok(given)
    }

    /// Checks `values` (one per declared variable, in declaration order) and, when all are
    /// acceptable, writes the entries of every variable whose value changed since the last
    /// apply (or since recording); of launch dims, only the half (global or local) that
    /// changed. `targets[i]` is the memory of target `i`. Returns the
    /// dwords written. On error nothing was written.
    ///
    /// The same as [`Self::check`] then [`Self::write`]; split them to check before waiting
    /// until the memory may be written.
    pub fn apply<M: PatchTarget>(
        &mut self,
        values: &[Option<Value>],
        targets: &mut [M],
    ) -> Result<usize, PatchError> {
        self.check_targets(targets)?;
        let c = self.check(values)?;
        self.write(c, targets)
    }

    /// Checks `values` as [`Self::apply`] does and notes which changed, writing nothing: the
    /// result is what [`Self::write`] writes. A graph replay checks, waits until the GPU is
    /// done with the previous replay, then writes, without checking twice.
    pub fn check<'v>(&mut self, values: &'v [Option<Value>]) -> Result<Checked<'v>, PatchError> {
        self.seal();
        self.generation = self.generation.wrapping_add(1);
        let n = self.prev.len();
        let Some(given) = values.get(..n) else {
            // CAST: values.len() < n <= V, and declare() refused ids beyond u16.
            return Err(PatchError::MissingVar(VarId(values.len() as u16)));
        };
        for (i, (((v, prev), info), dirty)) in given
            .iter()
            .zip(self.prev.iter())
            .zip(self.vars.iter())
            .zip(self.dirty.iter_mut())
            .enumerate()
        {
            // CAST: i < V and declare() refused ids beyond u16.
            let var = VarId(i as u16);
            let Some(v) = v else {
                return Err(PatchError::MissingVar(var));
            };
            *dirty = changes(v, prev);
            if *dirty != 0 || info.stale {
                Self::check_value(var, info, v)?;
            }
        }
        Ok(Checked {
            values: given,
            generation: self.generation,
        })
    }

    /// Writes what [`Self::check`] found changed: the entries of every changed variable (of
    /// launch dims, only the half that changed), into `targets[i]` for target `i`. Returns the
    /// dwords written. If the table changed since the check (another check, a new binding),
    /// the values are checked again first. On error nothing was written.
    pub fn write<M: PatchTarget>(
        &mut self,
        checked: Checked<'_>,
        targets: &mut [M],
    ) -> Result<usize, PatchError> {
        self.check_targets(targets)?;
        let checked = if checked.generation == self.generation {
            checked
        } else {
            self.check(checked.values)?
        };
        // A variable's entries follow the previous variable's, so a running cursor finds them
        // (no lookup between the loads and the stores).
        let mut written = 0usize;
        let mut end = 0usize;
        for (((v, prev), info), dirty) in checked
            .values
            .iter()
            .zip(self.prev.iter_mut())
            .zip(self.vars.iter_mut())
            .zip(self.dirty.iter())
        {
            // The check behind `checked` covered every value.
            info.stale = false;
            let start = end;
            // CAST: u32 -> usize lossless.
            end = start.saturating_add(info.count as usize);
            if let (1.., Some(v)) = (*dirty, v) {
                let es = self.entries.get(start..end).unwrap_or_default();
                written += write_var(es, v, *dirty, targets);
                *prev = *v;
            }
        }
        // The notes are spent: writing the same token again re-checks (and finds nothing).
        self.generation = self.generation.wrapping_add(1);
        Ok(written)
    }

    /// Every target the table writes is given and long enough.
    fn check_targets<M: PatchTarget>(&self, targets: &[M]) -> Result<(), PatchError> {
        for (t, &need) in self.need.iter().enumerate() {
            if need == 0 {
                continue;
            }
            // CAST: t < T, and T targets are named by u8.
            let target = t as u8;
            let len = targets
                .get(t)
                .ok_or(PatchError::MissingTarget { target })?
                .dword_len();
            if len < need {
                return Err(PatchError::TargetTooShort {
                    target,
                    len,
                    needed: need,
                });
            }
        }
        Ok(())
    }
}

/// Values [`PatchTable::check`]ed against a table, ready for [`PatchTable::write`]: they
/// borrow the caller's values, and the table notes which changed.
#[derive(Debug)]
#[must_use = "checked values are written with PatchTable::write"]
pub struct Checked<'v> {
    values: &'v [Option<Value>],
    /// The table's check count when these were checked.
    generation: u64,
}

/// [`changes`]: launch dims whose global sizes changed.
const GLOBAL: u8 = 1;
/// [`changes`]: launch dims whose local sizes changed.
const LOCAL: u8 = 2;
/// [`changes`]: any other change.
const OTHER: u8 = 4;

/// What changed from `old` to `v`: 0 for nothing, else [`GLOBAL`] | [`LOCAL`] for launch dims
/// (only the entries of the half that changed are written), [`OTHER`] for the rest.
#[inline(always)]
fn changes(v: &Value, old: &Value) -> u8 {
    match (v, old) {
        (Value::Dims(n), Value::Dims(o)) => {
            (u8::from(n.global != o.global) * GLOBAL) | (u8::from(n.local != o.local) * LOCAL)
        }
        _ => u8::from(v != old) * OTHER,
    }
}

/// Writes the entries `es` of a variable whose value changed to `v` ([`changes`] says how);
/// returns the dwords written.
#[inline(always)]
fn write_var<M: PatchTarget>(es: &[Entry], v: &Value, how: u8, targets: &mut [M]) -> usize {
    match v {
        Value::Dims(d) => {
            // A dims variable recorded with other dims is rewritten whole.
            let how = if how & OTHER != 0 {
                GLOBAL | LOCAL
            } else {
                how
            };
            write_dims(es, d, how, targets)
        }
        _ => write_scalar(es, v, targets),
    }
}

/// Writes the entries of a dims variable; `how`: which halves changed ([`GLOBAL`] | [`LOCAL`]).
#[inline(always)]
fn write_dims<M: PatchTarget>(es: &[Entry], d: &Dims, how: u8, targets: &mut [M]) -> usize {
    let mut written = 0;
    for e in es {
        let Some(mem) = targets.get_mut(usize::from(e.target)) else {
            continue;
        };
        // The common entries are a whole half (NUM_THREAD_X..Z, DISPATCH_DIRECT x..z):
        // FAST_GLOBAL (0) and FAST_LOCAL (1) are also the bit of `how` that says they changed.
        if e.fast > FAST_LOCAL {
            written += write_dims_other(mem, e, d, how & GLOBAL != 0, how & LOCAL != 0);
            continue;
        }
        if (how >> e.fast) & 1 != 0 {
            let src = if e.fast == FAST_GLOBAL {
                &d.global
            } else {
                &d.local
            };
            let _ = mem.store_all(idx(e.dword, 0), src);
            written += 3;
        }
    }
    written
}

/// The dims entries that are not a whole half: single components, the dispatch packet's.
#[inline(never)]
fn write_dims_other<M: PatchTarget>(
    mem: &mut M,
    e: &Entry,
    d: &Dims,
    global: bool,
    local: bool,
) -> usize {
    match e.op {
        Op::Dwords { first, .. } if (first < 3 && !global) || (first >= 3 && !local) => 0,
        Op::Workgroup if !local => 0,
        _ => write_entry(mem, e, &Value::Dims(*d)),
    }
}

/// Writes the entries of an address or scalar variable.
#[inline(always)]
fn write_scalar<M: PatchTarget>(es: &[Entry], v: &Value, targets: &mut [M]) -> usize {
    let s = scalar_of(v);
    let mut written = 0;
    for e in es {
        let Some(mem) = targets.get_mut(usize::from(e.target)) else {
            continue;
        };
        written += match (e.fast, e.op) {
            (FAST_SPLIT, Op::Split64 { add }) => {
                let x = s.wrapping_add(u64::from(add));
                let _ = mem.store_all(idx(e.dword, 0), &[lo32(x), hi32(x)]);
                2
            }
            _ => write_entry(mem, e, v),
        };
    }
    written
}

/// Whether `d` is inside the variable's limits: the common case, branch-free; [`check_dims`]
/// says why not.
#[inline(always)]
fn dims_ok(l: &DimLimits, packet: bool, d: &Dims) -> bool {
    let [g0, g1, g2] = d.global;
    let [l0, l1, l2] = d.local;
    // x in 1..=max  <=>  x - 1 < max (wrapping: 0 becomes u32::MAX, never below a max).
    let in_range = |x: u32, max: u32| x.wrapping_sub(1) < max;
    let ok = in_range(g0, l.max_global[0])
        & in_range(g1, l.max_global[1])
        & in_range(g2, l.max_global[2])
        & in_range(l0, l.max_local[0])
        & in_range(l1, l.max_local[1])
        & in_range(l2, l.max_local[2])
        & ((u64::from(l0) * u64::from(l1)).saturating_mul(u64::from(l2))
            <= u64::from(l.max_threads));
    // A dispatch packet holds 32-bit grid sizes (its 16-bit workgroup sizes are in the
    // limits already).
    ok && (!packet
        || (g0.checked_mul(l0).is_some()
            & g1.checked_mul(l1).is_some()
            & g2.checked_mul(l2).is_some()))
}

/// Why `d` is outside the limits (`Ok` if it is not).
#[cold]
#[inline(never)]
fn check_dims(var: VarId, l: &DimLimits, packet: bool, d: &Dims) -> Result<(), PatchError> {
    let bad = |what, axis: usize, value: u64, max: u64| PatchError::BadDim {
        var,
        what,
        // CAST: axis <= 3.
        axis: axis as u8,
        value,
        max,
    };
    for k in 0..3 {
        let (g, lo) = (d.global[k], d.local[k]);
        let (mg, ml) = (l.max_global[k], l.max_local[k]);
        if g == 0 || g > mg {
            return Err(bad("global", k, g.into(), mg.into()));
        }
        if lo == 0 || lo > ml {
            return Err(bad("local", k, lo.into(), ml.into()));
        }
        if packet {
            let grid = u64::from(g) * u64::from(lo);
            if grid > u32::MAX.into() {
                return Err(bad("grid (global*local)", k, grid, u32::MAX.into()));
            }
        }
    }
    // Saturating: three 32-bit factors can exceed 64 bits.
    let threads =
        (u64::from(d.local[0]) * u64::from(d.local[1])).saturating_mul(u64::from(d.local[2]));
    if threads > u64::from(l.max_threads) {
        return Err(bad(
            "local (threads per workgroup)",
            3,
            threads,
            l.max_threads.into(),
        ));
    }
    Ok(())
}

/// Writes one entry of any shape; returns the dwords written.
#[inline(never)]
fn write_entry<M: PatchTarget>(mem: &mut M, e: &Entry, v: &Value) -> usize {
    let at = idx(e.dword, 0);
    let n = e.op.span();
    for k in 0..n {
        let old = match e.op {
            Op::Field { .. } | Op::Workgroup => mem.load(at + k).unwrap_or(0),
            _ => 0,
        };
        let _ = mem.store(at + k, produce(&e.op, v, k, old));
    }
    n
}

#[cfg(test)]
mod tests;
