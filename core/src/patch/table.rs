//! The table: declaring variables and binding them to command words.

use super::*;

/// How [`PatchTable::write`] writes one variable, worked out by [`PatchTable::seal`] (small:
/// `write` reads one per variable).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Plan {
    /// Launch dims whose only entries are one global half (DISPATCH_DIRECT x..z) and one local
    /// half (COMPUTE_NUM_THREAD_X..Z) in one target, as a kernel launch binds them: written
    /// from here without walking the entries.
    Pair {
        /// The target both halves are in.
        target: u8,
        /// The global half's first dword.
        global: u32,
        /// The local half's first dword.
        local: u32,
    },
    /// An address or scalar whose entries `entries[first..first + count]` are all 64-bit
    /// splits in one target (buffer pointers in kernargs, as launches bind them): written in
    /// a loop over just those.
    Splits {
        /// The target they are all in.
        target: u8,
        /// The first entry.
        first: u32,
        /// How many.
        count: u32,
    },
    /// Anything else: the entries `entries[first..first + count]` (sorted by variable).
    Walk {
        /// The first entry.
        first: u32,
        /// How many.
        count: u32,
    },
}

const _: () = assert!(size_of::<Plan>() <= 12);

impl Plan {
    /// A variable without entries (until `seal` works its plan out).
    pub(super) const NONE: Self = Self::Walk { first: 0, count: 0 };

    /// The plan of a variable whose (sorted) entries are `es`, starting at `first`.
    pub(super) fn of(first: usize, es: &[Entry]) -> Self {
        if let [x, y] = es {
            let pair = match (x.op, y.op) {
                (Op::Dwords { first: 0, n: 3 }, Op::Dwords { first: 3, n: 3 }) => Some((x, y)),
                (Op::Dwords { first: 3, n: 3 }, Op::Dwords { first: 0, n: 3 }) => Some((y, x)),
                _ => None,
            };
            if let Some((g, l)) = pair
                && g.target == l.target
            {
                return Self::Pair {
                    target: g.target,
                    global: g.dword,
                    local: l.dword,
                };
            }
        }
        // CAST (both): entries are at most E, and every entry names a u32 dword.
        let (first, count) = (first as u32, es.len() as u32);
        if let Some(target) = es.first().map(|e| e.target)
            && es
                .iter()
                .all(|e| e.target == target && matches!(e.op, Op::Split64 { .. }))
        {
            Self::Splits {
                target,
                first,
                count,
            }
        } else {
            Self::Walk { first, count }
        }
    }
}

/// Limits of a fresh dims variable (none yet).
const NO_LIMITS: DimLimits = DimLimits {
    max_global: [u32::MAX; 3],
    max_local: [u32::MAX; 3],
    max_threads: u32::MAX,
};

/// A patch table of at most `V` variables, `E` entries and `T` target memories.
#[derive(Clone)]
pub struct PatchTable<const V: usize, const E: usize, const T: usize = 4> {
    pub(super) vars: heapless::Vec<VarInfo, V>,
    pub(super) prev: heapless::Vec<Value, V>,
    /// How each variable is written (valid once sealed).
    pub(super) plans: heapless::Vec<Plan, V>,
    /// The variables whose plan is not a [`Plan::Pair`], in order (valid once sealed): `write`
    /// visits them after the pairs.
    pub(super) walks: heapless::Vec<u16, V>,
    /// Targets holding some [`Plan::Pair`] (valid once sealed): `write` runs the pair loop
    /// over each.
    pub(super) pairs_in: [bool; T],
    /// Bumped by every check, write and change of the table: a [`Checked`] of another
    /// generation is checked again before it is written.
    pub(super) generation: u64,
    pub(super) entries: heapless::Vec<Entry, E>,
    /// Dwords each target must have.
    pub(super) need: [usize; T],
    pub(super) sealed: bool,
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

pub(super) fn idx(base: u32, add: usize) -> usize {
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
pub(super) fn produce(op: &Op, v: &Value, k: usize, old: u32) -> u32 {
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
pub(super) fn scalar_of(v: &Value) -> u64 {
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
            plans: heapless::Vec::new(),
            walks: heapless::Vec::new(),
            pairs_in: [false; T],
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
        let info = match initial.kind() {
            Kind::Addr => VarInfo::Addr { bytes: 0 },
            Kind::Scalar => VarInfo::Scalar { max: u64::MAX },
            Kind::Dims => VarInfo::Dims {
                packet: false,
                limits: NO_LIMITS,
            },
        };
        self.vars
            .push(info)
            .map_err(|_| PatchError::TooManyVars { capacity: V })?;
        if self.prev.push(initial).is_err() || self.plans.push(Plan::NONE).is_err() {
            self.vars.pop();
            self.prev.truncate(n);
            return Err(PatchError::TooManyVars { capacity: V });
        }
        self.sealed = false;
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
        match self.vars.get(var.index()) {
            Some(VarInfo::Addr { bytes }) => Ok(*bytes),
            Some(i) => Err(PatchError::WrongKind {
                var,
                expected: i.kind(),
                found: Kind::Addr,
            }),
            None => Err(PatchError::UnknownVar(var)),
        }
    }

    fn info(&self, var: VarId, kind: Kind) -> Result<&VarInfo, PatchError> {
        let i = self
            .vars
            .get(var.index())
            .ok_or(PatchError::UnknownVar(var))?;
        if i.kind() != kind {
            return Err(PatchError::WrongKind {
                var,
                expected: i.kind(),
                found: kind,
            });
        }
        Ok(i)
    }

    fn info_mut(&mut self, var: VarId, kind: Kind) -> Result<&mut VarInfo, PatchError> {
        self.info(var, kind)?;
        // What a check accepted may no longer be acceptable.
        self.generation = self.generation.wrapping_add(1);
        self.vars
            .get_mut(var.index())
            .ok_or(PatchError::UnknownVar(var))
    }

    fn initial(&self, var: VarId) -> Result<Value, PatchError> {
        self.prev
            .get(var.index())
            .copied()
            .ok_or(PatchError::UnknownVar(var))
    }

    /// Adds an entry after checking that `mem` (the recorded target) already holds what the
    /// variable's record-time value produces there.
    pub(super) fn push<M: PatchTarget + ?Sized>(
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
        if let VarInfo::Addr { bytes: b } = self.info_mut(var, Kind::Addr)? {
            *b = (*b).max(bytes);
        }
        Ok(())
    }

    fn limit_scalar(&mut self, var: VarId, max: u64) -> Result<(), PatchError> {
        if let VarInfo::Scalar { max: m } = self.info_mut(var, Kind::Scalar)? {
            *m = (*m).min(max);
        }
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
        if let VarInfo::Dims {
            packet: p,
            limits: l,
        } = self.info_mut(var, Kind::Dims)?
        {
            *p |= packet.is_some();
            *l = l.meet(limits);
            if *p {
                // A dispatch packet holds 16-bit workgroup sizes.
                l.max_local = l.max_local.map(|m| m.min(u16::MAX.into()));
            }
        }
        Ok(())
    }

    /// Launch dims of an HSA kernel dispatch packet alone (an AQL queue's dispatch, which has
    /// no PM4 exec command): the packet starts at dword `dword` of `target`; its workgroup
    /// sizes (byte 4) and grid sizes (byte 12, `global * local`) are patched. `limits` are the
    /// kernel's; a dims variable shared by several kernels keeps the tightest, with local
    /// sizes at most `u16::MAX` (the packet's fields).
    pub fn bind_packet_dims(
        &mut self,
        var: VarId,
        target: u8,
        dword: u32,
        limits: DimLimits,
    ) -> Result<(), PatchError> {
        self.info(var, Kind::Dims)?;
        let before = self.entries.len();
        let r: Result<(), PatchError> = (|| {
            self.push::<[u32]>(
                None,
                Entry::new(var, target, dword.saturating_add(1), Op::Workgroup),
            )?;
            self.push::<[u32]>(
                None,
                Entry::new(var, target, dword.saturating_add(3), Op::Grid),
            )
        })();
        if let Err(e) = r {
            self.entries.truncate(before);
            return Err(e);
        }
        if let VarInfo::Dims {
            packet: p,
            limits: l,
        } = self.info_mut(var, Kind::Dims)?
        {
            *p = true;
            *l = l.meet(limits);
            l.max_local = l.max_local.map(|m| m.min(u16::MAX.into()));
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
        // The copy is framed by GCR_REQs, or, on gfx9 (SDMA v4 has no GCR_REQ), by NOPs of the
        // same length in their place (`sdma::CopyOptions::hardware`, `GcrPlacement::Nop`).
        let mut nop = [0u32; sdma::GCR_REQ_DWORDS];
        let nop_hdr = sdma::nop(&mut nop, g).ok().and(nop.first().copied());
        let is_gcr = |x: u32| sdma_op(x).0 == sdma::op::GCR_REQ || Some(x) == nop_hdr;
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
}
