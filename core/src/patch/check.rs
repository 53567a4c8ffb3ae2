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
        for (i, plan) in self.plans.iter_mut().enumerate() {
            let n = rest.iter().take_while(|e| e.var.index() == i).count();
            let Some((es, tail)) = rest.split_at_checked(n) else {
                break;
            };
            *plan = Plan::of(first, es);
            if !matches!(plan, Plan::Pair { .. }) {
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
            // Launch dims, nearly every variable of a graph, take the short way: `prev` has the
            // variable's kind (only checked values replace it).
            if let (Value::Dims(n), Value::Dims(o)) = (v, prev) {
                let d = (u8::from(n.global != o.global) * GLOBAL)
                    | (u8::from(n.local != o.local) * LOCAL);
                *dirty = d;
                if (d != 0 || info.stale) && !dims_ok(&info.limits, info.packet, n) {
                    check_dims(var, &info.limits, info.packet, n)?;
                }
                continue;
            }
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
}

/// Values [`PatchTable::check`]ed against a table, ready for [`PatchTable::write`]: they
/// borrow the caller's values, and the table notes which changed.
#[derive(Debug)]
#[must_use = "checked values are written with PatchTable::write"]
pub struct Checked<'v> {
    pub(super) values: &'v [Option<Value>],
    /// The table's check count when these were checked.
    pub(super) generation: u64,
}

/// Whether `d` is inside the variable's limits: the common case, branch-free; [`check_dims`]
/// says why not.
#[inline(always)]
pub(super) fn dims_ok(l: &DimLimits, packet: bool, d: &Dims) -> bool {
    let [g0, g1, g2] = d.global;
    let [l0, l1, l2] = d.local;
    // x in 1..=max  <=>  x - 1 < max (wrapping: 0 becomes u32::MAX, never below a max).
    let in_range = |x: u32, max: u32| x.wrapping_sub(1) < max;
    let grid = |g: u32, l: u32| u64::from(g) * u64::from(l);
    // Short-circuit: each test is a compare and a branch that is always taken the same way,
    // cheaper than folding all of them (which LLVM vectorises, shuffling the halves in).
    in_range(g0, l.max_global[0])
        && in_range(g1, l.max_global[1])
        && in_range(g2, l.max_global[2])
        && in_range(l0, l.max_local[0])
        && in_range(l1, l.max_local[1])
        && in_range(l2, l.max_local[2])
        && (u64::from(l0) * u64::from(l1)).saturating_mul(u64::from(l2))
            <= u64::from(l.max_threads)
        // A dispatch packet holds 32-bit grid sizes (its 16-bit workgroup sizes are in the
        // limits already).
        && (!packet || (grid(g0, l0) | grid(g1, l1) | grid(g2, l2)) >> 32 == 0)
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
