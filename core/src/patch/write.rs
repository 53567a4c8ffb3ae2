//! Writing the entries of changed variables.

use super::*;

impl<const V: usize, const E: usize, const T: usize> PatchTable<V, E, T> {
    /// Writes checked values: the entries of every variable whose value differs from the
    /// last written (or recorded) one (of launch dims, only the half that changed), into
    /// `targets[i]` for target `i`. Returns the dwords written. Launch dims bound as a launch
    /// binds them (one whole global half and one whole local half in one target) are written
    /// first, then the other variables in declaration order (where bindings of two variables
    /// cover the same dword, a misuse the table does not look for, this order decides). If
    /// the table changed since the check (another check, a new binding), the values are
    /// checked again first. On error nothing was written.
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
        // Launch dims bound as a launch binds them, nearly every variable of a graph, in one
        // tight loop; the rest after them.
        let mut written = 0;
        for (t, mem) in targets.iter_mut().enumerate() {
            if self.pairs_in.get(t) == Some(&true) {
                // CAST: t < T, and T targets are named by u8.
                written += write_pairs(checked.values, &mut self.prev, &self.plans, t as u8, mem);
            }
        }
        for &i in &self.walks {
            let i = usize::from(i);
            let (Some(Some(v)), Some(prev), Some(&plan)) = (
                checked.values.get(i),
                self.prev.get_mut(i),
                self.plans.get(i),
            ) else {
                continue;
            };
            let how = changes(v, prev);
            if how == 0 {
                continue;
            }
            written += match plan {
                Plan::Splits {
                    target,
                    first,
                    count,
                } => targets.get_mut(usize::from(target)).map_or(0, |mem| {
                    write_splits(entries(&self.entries, first, count), scalar_of(v), mem)
                }),
                Plan::Walk { first, count } => {
                    write_var(entries(&self.entries, first, count), v, how, targets)
                }
                // write_pairs wrote these.
                Plan::Pair { .. } => 0,
            };
            *prev = *v;
        }
        // The check is spent: writing the same token again re-checks (and finds nothing new).
        self.generation = self.generation.wrapping_add(1);
        Ok(written)
    }

    /// Every target the table writes is given and long enough.
    pub(super) fn check_targets<M: PatchTarget>(&self, targets: &[M]) -> Result<(), PatchError> {
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

/// [`changes`]: launch dims whose global sizes changed.
pub(super) const GLOBAL: u8 = 1;
/// [`changes`]: launch dims whose local sizes changed.
pub(super) const LOCAL: u8 = 2;
/// [`changes`]: any other change.
const OTHER: u8 = 4;

/// What changed from `old` to `v`: 0 for nothing, else [`GLOBAL`] | [`LOCAL`] for launch dims
/// (only the entries of the half that changed are written), [`OTHER`] for the rest.
#[inline(always)]
pub(super) fn changes(v: &Value, old: &Value) -> u8 {
    match (v, old) {
        (Value::Dims(n), Value::Dims(o)) => {
            (u8::from(n.global != o.global) * GLOBAL) | (u8::from(n.local != o.local) * LOCAL)
        }
        _ => u8::from(v != old) * OTHER,
    }
}

/// `entries[first..first + count]`.
fn entries(entries: &[Entry], first: u32, count: u32) -> &[Entry] {
    // CAST: u32 -> usize lossless.
    let first = first as usize;
    entries
        .get(first..first.saturating_add(count as usize))
        .unwrap_or_default()
}

/// Writes a [`Plan::Splits`] into its target: value `s` plus each entry's offset, as two
/// dwords.
#[inline(never)]
fn write_splits<M: PatchTarget>(es: &[Entry], s: u64, mem: &mut M) -> usize {
    for e in es {
        if let Op::Split64 { add } = e.op {
            let x = s.wrapping_add(u64::from(add));
            let _ = mem.store_all(idx(e.dword, 0), &[lo32(x), hi32(x)]);
        }
    }
    2 * es.len()
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

/// Writes every launch-dims [`Plan::Pair`] in target `t` whose value changed (the halves
/// that did) and notes the value in `prev`. Out of line: the loop gets the registers to
/// itself.
#[inline(never)]
fn write_pairs<M: PatchTarget>(
    values: &[Option<Value>],
    prev: &mut [Value],
    plans: &[Plan],
    t: u8,
    mem: &mut M,
) -> usize {
    let mut written = 0usize;
    for ((v, prev), plan) in values.iter().zip(prev.iter_mut()).zip(plans.iter()) {
        let (
            Some(Value::Dims(d)),
            &Plan::Pair {
                target,
                global,
                local,
            },
        ) = (v, plan)
        else {
            continue;
        };
        if target != t {
            continue;
        }
        // Each half on its own: compared, written and noted.
        let Value::Dims(p) = prev else {
            // Only checked values replace a variable's value, so it keeps its kind: not here.
            let _ = mem.store_all(idx(global, 0), &d.global);
            let _ = mem.store_all(idx(local, 0), &d.local);
            *prev = Value::Dims(*d);
            written += 6;
            continue;
        };
        if d.global != p.global {
            let _ = mem.store_all(idx(global, 0), &d.global);
            written += 3;
        }
        if d.local != p.local {
            let _ = mem.store_all(idx(local, 0), &d.local);
            written += 3;
        }
        *p = *d;
    }
    written
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
