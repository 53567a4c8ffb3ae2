//! Checking new values against each variable's limits.

use super::*;

impl<const V: usize, const E: usize, const T: usize> PatchTable<V, E, T> {
    /// Sorts entries by variable and works out how each variable is written (done by
    /// `apply`): a variable's entries then sit together, and launch dims bound as a kernel
    /// launch binds them are written without walking their entries.
    pub fn seal(&mut self) {
        if self.sealed {
            return;
        }
        self.entries
            .sort_unstable_by_key(|e| (e.var, e.target, e.dword));
        let mut rest = &self.entries[..];
        let mut first = 0usize;
        self.walks.clear();
        self.pairs_in = [false; T];
        for (i, plan) in self.plans.iter_mut().enumerate() {
            let n = rest.iter().take_while(|e| e.var.index() == i).count();
            let Some((es, tail)) = rest.split_at_checked(n) else {
                break;
            };
            *plan = Plan::of(first, es);
            if let Plan::Pair { target, .. } = plan {
                if let Some(p) = self.pairs_in.get_mut(usize::from(*target)) {
                    *p = true;
                }
            } else {
                // CAST: declare() refused ids beyond u16; `walks` holds as many as `plans`.
                let _ = self.walks.push(i as u16);
            }
            first += n;
            rest = tail;
        }
        self.sealed = true;
    }

    /// Checks one new value against its variable.
    #[inline(always)]
    fn check_value(var: VarId, info: &VarInfo, v: &Value) -> Result<(), PatchError> {
        match (info, v) {
            (&VarInfo::Addr { bytes: needed }, &Value::Addr { addr, bytes }) => {
                if bytes < needed {
                    return Err(PatchError::BufferTooSmall { var, bytes, needed });
                }
                if addr.get().checked_add(bytes).is_none() {
                    return Err(PatchError::BadAddress { var, addr });
                }
                Ok(())
            }
            (&VarInfo::Scalar { max }, &Value::Scalar(s)) => {
                if s > max {
                    return Err(PatchError::ScalarTooLarge { var, value: s, max });
                }
                Ok(())
            }
            (VarInfo::Dims { packet, limits }, Value::Dims(d)) => {
                if dims_ok(limits, *packet, d) {
                    Ok(())
                } else {
                    check_dims(var, limits, *packet, d)
                }
            }
            (i, v) => Err(PatchError::WrongKind {
                var,
                expected: i.kind(),
                found: v.kind(),
            }),
        }
    }

    /// Checks `values` as [`Self::apply`] would, without writing: every variable present and
    /// acceptable. Returns how many changed since the last apply.
    pub fn validate(&self, values: &[Option<Value>]) -> Result<usize, PatchError> {
        let given = self.check_all(values)?;
        Ok(given
            .iter()
            .zip(self.prev.iter())
            .filter(|(v, prev)| v.as_ref() != Some(*prev))
            .count())
    }

    /// Every value present and acceptable to its variable; `values` cut to the declared ones.
    #[inline(always)]
    fn check_all<'v>(
        &self,
        values: &'v [Option<Value>],
    ) -> Result<&'v [Option<Value>], PatchError> {
        let n = self.vars.len();
        let Some(given) = values.get(..n) else {
            // CAST: values.len() < n <= V, and declare() refused ids beyond u16.
            return Err(PatchError::MissingVar(VarId(values.len() as u16)));
        };
        for (i, (v, info)) in given.iter().zip(self.vars.iter()).enumerate() {
            // CAST: i < V and declare() refused ids beyond u16.
            let var = VarId(i as u16);
            // Launch dims, nearly every variable of a graph, take the short way.
            if let (
                Some(Value::Dims(d)),
                VarInfo::Dims {
                    packet: false,
                    limits,
                },
            ) = (v, info)
            {
                if !dims_ok(limits, false, d) {
                    check_dims(var, limits, false, d)?;
                }
                continue;
            }
            let Some(v) = v else {
                return Err(PatchError::MissingVar(var));
            };
            Self::check_value(var, info, v)?;
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

    /// Checks `values` as [`Self::apply`] does, writing nothing: the result is what
    /// [`Self::write`] writes. A graph replay checks, waits until the GPU is done with the
    /// previous replay, then writes, without checking twice.
    ///
    /// Every value is checked, changed or not, and nothing is compared here: [`Self::write`]
    /// compares each value with the last written one as it writes, so a replay that changes
    /// every kernel's dims compares once, not twice (one that changes nothing pays the checks
    /// instead). A binding made since the last check is covered too.
    pub fn check<'v>(&mut self, values: &'v [Option<Value>]) -> Result<Checked<'v>, PatchError> {
        self.seal();
        self.generation = self.generation.wrapping_add(1);
        Ok(Checked {
            values: self.check_all(values)?,
            generation: self.generation,
        })
    }
}

/// Values [`PatchTable::check`]ed against a table, ready for [`PatchTable::write`]: they
/// borrow the caller's values.
#[derive(Debug)]
#[must_use = "checked values are written with PatchTable::write"]
pub struct Checked<'v> {
    pub(super) values: &'v [Option<Value>],
    /// The table's check count when these were checked.
    pub(super) generation: u64,
}

/// Whether `d` is inside the variable's limits: the common case, a compare and an always-taken
/// branch per test; [`check_dims`] says why not.
#[inline(always)]
pub(super) fn dims_ok(l: &DimLimits, packet: bool, d: &Dims) -> bool {
    if packet {
        return dims_ok_in_packet(l, d);
    }
    let [g0, g1, g2] = d.global;
    let [l0, l1, l2] = d.local;
    // x in 1..=max  <=>  x - 1 < max (wrapping: 0 becomes u32::MAX, never below a max).
    let in_range = |x: u32, max: u32| x.wrapping_sub(1) < max;
    // Short-circuit: each test is a compare and a branch that is always taken the same way,
    // cheaper than folding all of them (which LLVM vectorises, shuffling the halves in).
    in_range(g0, l.max_global[0])
        && in_range(g1, l.max_global[1])
        && in_range(g2, l.max_global[2])
        && in_range(l0, l.max_local[0])
        && in_range(l1, l.max_local[1])
        && in_range(l2, l.max_local[2])
        && (u64::from(l0) * u64::from(l1)).saturating_mul(u64::from(l2)) <= u64::from(l.max_threads)
}

/// [`dims_ok`] for dims a dispatch packet carries: also 32-bit grid sizes (its 16-bit
/// workgroup sizes are in the limits already).
#[inline(never)]
fn dims_ok_in_packet(l: &DimLimits, d: &Dims) -> bool {
    let grid = |k: usize| u64::from(d.global[k]) * u64::from(d.local[k]);
    dims_ok(l, false, d) && (grid(0) | grid(1) | grid(2)) >> 32 == 0
}

/// Why `d` is outside the limits (`Ok` if it is not).
#[cold]
#[inline(never)]
pub(super) fn check_dims(
    var: VarId,
    l: &DimLimits,
    packet: bool,
    d: &Dims,
) -> Result<(), PatchError> {
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
