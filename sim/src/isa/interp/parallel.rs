//! Splitting a dispatch's workgroups over host threads (sim/README.md "Threads").
//!
//! The split is a function of the dispatch alone, never of the thread count: the workgroups
//! (linear order, x fastest) are cut into [`Plan::chunks`] chunks of [`Plan::per_chunk`]
//! consecutive workgroups; each chunk runs on a fresh decode cache and scalar cache, and its
//! waves take scratch slots from one of [`Plan::parts`] fixed partitions of the scratch ring,
//! chunks of one partition running in chunk order. Workers (the calling thread and up to
//! `threads - 1` more, started for the dispatch) claim
//! chunks in increasing order from a shared counter, so a thread that comes late or runs
//! slowly takes fewer; the chunks' results are merged in
//! chunk order: counts summed, the first out-of-range access of the lowest chunk kept, and of
//! several faults the lowest workgroup's reported. So a race-free kernel leaves the same bytes,
//! counts and fault on 1 thread as on 64.
//!
//! A kernel whose workgroups may observe one another through memory within the dispatch (a
//! global, flat, buffer or scalar atomic, or code the scan cannot see: [`parallel_safe`]) runs
//! its chunks in order on the calling thread, as does a dispatch whose memory is not offered
//! for sharing ([`Memory::shared`]).

use super::super::{IsaError, Launch, Memory, Stats};
use super::decode::{self, Enc};
use super::race::{self, Stored};
use super::{Op, run_range, scratch_spread};
use crate::vm::Access;
use core::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, PoisonError};

/// Most chunks a dispatch is cut into.
const MAX_CHUNKS: u64 = 1024;
/// Fewest waves a chunk holds (where the dispatch has that many): below this a thread's start
/// costs more than the work it takes over.
const MIN_CHUNK_WAVES: u64 = 32;
/// Most scratch partitions (chunks of different partitions may run at once).
const MAX_PARTS: u64 = 64;
/// Most code words the atomics scan reads from the program address.
const SCAN_WORDS: usize = 1 << 14;

/// How one dispatch is cut: a function of the launch only.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Plan {
    /// Workgroups in the dispatch.
    pub(crate) total: u64,
    /// Workgroups per chunk (the last chunk may hold fewer).
    pub(crate) per_chunk: u64,
    /// Chunks.
    pub(crate) chunks: u64,
    /// Scratch partitions: chunk `c` takes partition `(c + spread) % parts`.
    pub(crate) parts: u64,
    /// Scratch slots per partition.
    pub(crate) part_slots: u32,
    /// Whether the waves use scratch (chunks of one partition then run in chunk order).
    pub(crate) scratch: bool,
    /// Where the partitions start being handed out ([`scratch_spread`]).
    pub(crate) spread: u64,
    /// Whether each workgroup's stores are recorded for the race check ([`race`]).
    pub(crate) track: bool,
}

impl Plan {
    /// The plan of dispatch `l`.
    pub(crate) fn of(l: &Launch) -> Self {
        let total = u64::from(l.groups[0]) * u64::from(l.groups[1]) * u64::from(l.groups[2]);
        let items: u64 = l.local.iter().map(|&n| u64::from(n)).product();
        let lanes = if l.wave64 { 64 } else { 32 };
        let nwaves = items.div_ceil(lanes).max(1);
        let per_chunk = MIN_CHUNK_WAVES
            .div_ceil(nwaves)
            .max(total.div_ceil(MAX_CHUNKS))
            .max(1);
        let chunks = total.div_ceil(per_chunk);
        let slots = u64::from(l.scratch_waves.max(1));
        let scratch = l.scratch.wave_bytes != 0;
        // Each partition holds a workgroup's waves where the ring has room for that.
        let parts = if scratch {
            (slots / nwaves).clamp(1, MAX_PARTS)
        } else {
            1
        };
        Self {
            total,
            per_chunk,
            chunks,
            parts,
            // CAST: at most `slots`, a u32.
            part_slots: (slots / parts) as u32,
            scratch,
            spread: scratch_spread(l),
            track: false,
        }
    }

    /// Chunk `c`'s workgroups: the first and the count.
    fn range(&self, c: u64) -> (u64, u64) {
        let first = (c * self.per_chunk).min(self.total);
        (first, self.per_chunk.min(self.total - first))
    }

    /// Chunk `c`'s scratch partition.
    fn part(&self, c: u64) -> u64 {
        c.wrapping_add(self.spread) % self.parts
    }

    /// Chunk `c`'s scratch slots: the first and the count.
    fn slots(&self, c: u64) -> (u32, u32) {
        // CAST: below parts * part_slots <= scratch_waves, a u32.
        (
            (self.part(c) * u64::from(self.part_slots)) as u32,
            self.part_slots,
        )
    }

    /// Runs chunk `c` on `mem`.
    fn run(&self, l: &Launch, mem: &dyn Memory, c: u64, strict: bool) -> ChunkResult {
        let (first, count) = self.range(c);
        let mut stored = Vec::new();
        let st = run_range(
            l,
            mem,
            first,
            count,
            self.slots(c),
            strict,
            self.track.then_some(&mut stored),
        )?;
        Ok((st, stored))
    }
}

/// What one chunk did: its counts and its workgroups' stores (when tracked), or the fault with
/// its workgroup's linear index.
type ChunkResult = Result<(Stats, Vec<Stored>), (u64, IsaError)>;

/// Runs every workgroup of a dispatch on up to `threads` threads (see the module's text).
pub(crate) fn run_dispatch(
    l: &Launch,
    mem: &dyn Memory,
    strict: bool,
    threads: usize,
) -> Result<Stats, IsaError> {
    let mut plan = Plan::of(l);
    // One workgroup races with none, and a kernel with atomics is not checked.
    let safe = plan.total > 1 && parallel_safe(l, mem);
    plan.track = safe;
    // CAST: usize -> u64 widens.
    let workers = (threads.max(1) as u64).min(plan.chunks);
    let (mut stats, stored) = match mem.shared() {
        Some(shared) if workers > 1 && safe => run_parallel(l, shared, &plan, workers, strict)?,
        _ => run_serial(l, mem, &plan, strict)?,
    };
    if plan.track
        && let Some(r) = race::find(l, stored)
    {
        if strict {
            return Err(IsaError::Fault(format!(
                "{}: {r} (the kernel at program address {:#x})",
                l.isa.name(),
                l.pgm
            )));
        }
        stats.race = Some(r);
    }
    Ok(stats)
}

/// Every chunk in order on this thread, up to the first fault.
fn run_serial(
    l: &Launch,
    mem: &dyn Memory,
    plan: &Plan,
    strict: bool,
) -> Result<(Stats, Vec<Stored>), IsaError> {
    let mut stats = Stats::default();
    let mut stored = Vec::new();
    for c in 0..plan.chunks {
        let (st, s) = plan.run(l, mem, c, strict).map_err(|(_, e)| e)?;
        merge(&mut stats, &st);
        stored.extend(s);
    }
    Ok((stats, stored))
}

/// Adds chunk counts `st` (a later chunk's) to `stats`.
fn merge(stats: &mut Stats, st: &Stats) {
    stats.wave_instructions += st.wave_instructions;
    stats.lane_instructions += st.lane_instructions;
    stats.simd_cycles += st.simd_cycles;
    stats.wave_cycles = stats.wave_cycles.max(st.wave_cycles);
    stats.mem_bytes += st.mem_bytes;
    stats.out_of_range += st.out_of_range;
    stats.first_out_of_range = stats.first_out_of_range.or(st.first_out_of_range);
}

/// The state the workers of one dispatch share.
struct Shared<'a> {
    l: &'a Launch,
    mem: &'a (dyn Memory + Sync),
    plan: &'a Plan,
    strict: bool,
    /// The next chunk to hand out.
    next: AtomicU64,
    /// The lowest chunk that faulted (`u64::MAX`: none): later chunks need not run.
    fault: AtomicU64,
    /// Per scratch partition, how many of its chunks have finished (chunks of a partition run
    /// in chunk order: the slots' contents after the dispatch do not depend on timing).
    turns: Mutex<Vec<u64>>,
    turn: Condvar,
    /// The chunks run so far with their results, in no order.
    done: Mutex<Vec<(u64, ChunkResult)>>,
}

impl Shared<'_> {
    fn wait_turn(&self, c: u64) {
        if !self.plan.scratch {
            return;
        }
        let (p, k) = (self.plan.part(c), c / self.plan.parts);
        let mut t = self.turns.lock().unwrap_or_else(PoisonError::into_inner);
        // CAST: p < parts <= MAX_PARTS.
        while t.get(p as usize).is_some_and(|&done| done < k) {
            t = self.turn.wait(t).unwrap_or_else(PoisonError::into_inner);
        }
    }

    fn end_turn(&self, c: u64) {
        if !self.plan.scratch {
            return;
        }
        let mut t = self.turns.lock().unwrap_or_else(PoisonError::into_inner);
        // CAST: p < parts <= MAX_PARTS.
        if let Some(done) = t.get_mut(self.plan.part(c) as usize) {
            *done += 1;
        }
        drop(t);
        self.turn.notify_all();
    }

    /// One worker: takes chunks in increasing order until none is left or one below faulted,
    /// then adds their results to `done`. Every chunk it takes ends its partition's turn, run
    /// or not, and on a panic too (chunks are handed out in order, so a chunk waiting for its
    /// turn waits on one already handed out).
    fn work(&self) {
        let mut out = Vec::new();
        loop {
            let c = self.next.fetch_add(1, Ordering::Relaxed);
            if c >= self.plan.chunks {
                break;
            }
            self.wait_turn(c);
            let turn = Turn { sh: self, c };
            let skip = c > self.fault.load(Ordering::Acquire);
            if !skip {
                let r = self.plan.run(self.l, self.mem, c, self.strict);
                if r.is_err() {
                    self.fault.fetch_min(c, Ordering::AcqRel);
                }
                out.push((c, r));
            }
            drop(turn);
            if skip {
                break;
            }
        }
        self.done
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .append(&mut out);
    }
}

/// Ends chunk `c`'s turn when dropped; dropped by a panic, it also stops the chunks above.
struct Turn<'s, 'a> {
    sh: &'s Shared<'a>,
    c: u64,
}

impl Drop for Turn<'_, '_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.sh.fault.fetch_min(self.c, Ordering::AcqRel);
        }
        self.sh.end_turn(self.c);
    }
}

/// The chunks on `workers` threads (this one and `workers - 1` more), merged in chunk order.
fn run_parallel(
    l: &Launch,
    mem: &(dyn Memory + Sync),
    plan: &Plan,
    workers: u64,
    strict: bool,
) -> Result<(Stats, Vec<Stored>), IsaError> {
    let sh = Shared {
        l,
        mem,
        plan,
        strict,
        next: AtomicU64::new(0),
        fault: AtomicU64::new(u64::MAX),
        // CAST: parts <= MAX_PARTS.
        turns: Mutex::new(vec![0; plan.parts as usize]),
        turn: Condvar::new(),
        // CAST: chunks <= MAX_CHUNKS.
        done: Mutex::new(Vec::with_capacity(plan.chunks as usize)),
    };
    // Helpers live for this dispatch only: a pool kept between dispatches would have to hand
    // this dispatch's borrowed state to threads that outlive the call, which safe Rust allows
    // only through scoped threads (the interpreter has no `unsafe`).
    let panicked = std::thread::scope(|s| {
        let handles: Vec<_> = (1..workers)
            .filter_map(|_| {
                std::thread::Builder::new()
                    .spawn_scoped(s, || sh.work())
                    .ok()
            })
            .collect();
        // A helper that could not start took no chunk: the others take them all.
        sh.work();
        // Every helper joined here (a scoped thread left to the scope's end would make the
        // scope itself panic); the first panic's message kept.
        let mut first = None;
        for h in handles {
            if let Err(p) = h.join() {
                first.get_or_insert_with(|| panic_message(p.as_ref()));
            }
        }
        first
    });
    if let Some(m) = panicked {
        return Err(IsaError::Fault(format!(
            "an interpreter thread panicked: {m}"
        )));
    }
    let mut done = sh.done.into_inner().unwrap_or_else(PoisonError::into_inner);
    done.sort_unstable_by_key(|(c, _)| *c);
    let mut stats = Stats::default();
    let mut stored = Vec::new();
    for (_, r) in done {
        let (st, s) = r.map_err(|(_, e)| e)?;
        merge(&mut stats, &st);
        stored.extend(s);
    }
    Ok((stats, stored))
}

/// Whether the kernel's workgroups may run on several threads with a result that cannot
/// depend on thread timing: its code has no global, flat, buffer or scalar atomic. Without
/// atomics the workgroups of a race-free kernel cannot observe one another within a dispatch
/// (LDS and scratch are private to a workgroup and a wave). The code is scanned linearly from
/// the program address up to `s_code_end`, an undecodable word, memory that cannot be fetched,
/// or [`SCAN_WORDS`] words; a call or jump through a register (`s_swappc`, `s_setpc`) may
/// leave that stretch, so it keeps the dispatch on one thread too. The scan reads through
/// [`Memory::fill`], which the race detector does not record: it reads past the code the
/// waves will run, bytes the dispatch does not use.
fn parallel_safe(l: &Launch, mem: &dyn Memory) -> bool {
    // The words are fetched as the decoding reaches them (a dispatch's code is most often a
    // few hundred bytes, the memory past it mapped: fetching all SCAN_WORDS first cost more
    // than a small dispatch's share of work on 16 threads).
    let mut words: Vec<u32> = Vec::new();
    let mut end = false;
    let mut k = 0;
    loop {
        // The words an instruction at `k` may take, where memory holds them.
        while !end && words.len() < (k + 3).min(SCAN_WORDS) {
            end = !fetch_code(l, mem, &mut words);
        }
        if k >= words.len() {
            return true;
        }
        let w = [
            words[k],
            words.get(k + 1).copied().unwrap_or(0),
            words.get(k + 2).copied().unwrap_or(0),
        ];
        let Ok(i) = decode::decode_for(l.isa, l.gfx940, &w) else {
            return true;
        };
        if i.op == Op::SCodeEnd {
            return true;
        }
        if (matches!(i.enc, Enc::Flat | Enc::Mubuf) && i.op.is_atomic())
            || matches!(i.op, Op::SAtomic | Op::SBufferAtomic)
        {
            return false;
        }
        // A call or jump through a register (gfx9's fork to S1 and join's popped PC too) may
        // reach code the scan did not see.
        if matches!(
            i.op,
            Op::SSwappcB64 | Op::SSetpcB64 | Op::SCbranchGFork | Op::SCbranchJoin
        ) {
            return false;
        }
        k += usize::from(i.len / 4).max(1);
    }
}

/// Appends the next [`SCAN_WORDS`]`/16` code words at the program address to `words`, or,
/// where part of them cannot be fetched, those up to the first that cannot; false then (no
/// more words follow).
fn fetch_code(l: &Launch, mem: &dyn Memory, words: &mut Vec<u32>) -> bool {
    const CHUNK: usize = SCAN_WORDS / 16;
    let mut b = [0u8; 4 * CHUNK];
    // CAST: usize -> u64 widens.
    let va = l.pgm.wrapping_add(4 * words.len() as u64);
    if mem.fill(va, &mut b, Access::Execute).is_err() {
        // The last partial chunk: fetch word by word up to the first fault.
        for _ in 0..CHUNK {
            let mut w = [0u8; 4];
            // CAST: usize -> u64 widens.
            let at = l.pgm.wrapping_add(4 * words.len() as u64);
            if mem.fill(at, &mut w, Access::Execute).is_err() {
                break;
            }
            words.push(u32::from_le_bytes(w));
        }
        return false;
    }
    words.extend(
        b.chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])),
    );
    true
}

/// The text a panic carried (`panic!`'s message), or a placeholder when it carried none.
fn panic_message(p: &(dyn core::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::{FloatMode, Isa, ScratchSetup};

    fn launch(groups: u32, local: u32, scratch_waves: u32, wave_bytes: u64) -> Launch {
        Launch {
            isa: Isa::Gfx11,
            gfx940: true,
            pgm: 0x1000,
            wave64: false,
            user_sgprs: Vec::new(),
            rsrc2: 0,
            local: [local, 1, 1],
            groups: [groups, 1, 1],
            lds_bytes: 0,
            vgprs: 8,
            accum_offset: 0,
            scratch: ScratchSetup {
                base: 0x10_0000,
                wave_bytes,
            },
            scratch_waves,
            float: FloatMode::from_rsrc1(0),
            budget: 1 << 20,
            clock: 0,
            xcc: Default::default(),
        }
    }

    #[test]
    fn chunks_cover_every_workgroup_once() {
        for (groups, local) in [(1, 64), (7, 32), (1024, 64), (100_000, 256), (4096, 1024)] {
            let p = Plan::of(&launch(groups, local, 0, 0));
            let mut next = 0;
            for c in 0..p.chunks {
                let (first, count) = p.range(c);
                assert_eq!(first, next);
                assert!(count >= 1);
                next += count;
            }
            assert_eq!(next, u64::from(groups));
            assert!(p.chunks <= MAX_CHUNKS);
        }
    }

    #[test]
    fn scratch_partitions_are_disjoint_and_inside_the_ring() {
        for (slots, local) in [(1, 64), (16, 64), (32, 32), (4095, 1024), (7, 64)] {
            let p = Plan::of(&launch(512, local, slots, 256));
            let mut used = vec![false; slots as usize];
            for part in 0..p.parts {
                // Some chunk of each partition.
                let c = (0..p.parts)
                    .find(|&c| p.part(c) == part)
                    .unwrap_or_default();
                let (first, n) = p.slots(c);
                assert!(n >= 1 && first + n <= slots);
                for s in first..first + n {
                    assert!(!used[s as usize], "slot {s} in two partitions");
                    used[s as usize] = true;
                }
            }
        }
    }
}
