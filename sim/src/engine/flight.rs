//! Asynchronous dispatch and the race detector: one mechanism for every engine.
//!
//! A DISPATCH_DIRECT issues a dispatch that stays *in flight* while the command processor goes
//! on. Its memory effects land (the kernel runs, atomically) at a point the seed picks inside
//! the legal window: at issue, a few packets later, or only at the sync point that retires it.
//! It is *retired* (ordered before what follows) only by what the hardware waits on: an
//! EVENT_WRITE CS_PARTIAL_FLUSH or an end-of-pipe / end-of-shader RELEASE_MEM on its queue, a
//! memory wait (WAIT_REG_MEM, POLL_REGMEM) satisfied by a value it wrote, or its queue staying
//! idle for a while ("some later time": seeded rounds, plus real time in threaded mode).
//!
//! Every operation that executes while a dispatch is in flight, on any queue of any GPU (CP
//! writes, SDMA copies, fills and signals, other dispatches landing), is unordered with it:
//! the engines record each operation's read and write byte ranges (coalesced into intervals),
//! and two unordered operations whose ranges overlap, one of them writing, fault the queue with
//! a reason that names both and the range.

mod host;
mod order;

use super::types::{QueueId, QueueKind, Site};
use crate::config::DispatchMode;
use core::fmt;
use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use core::time::Duration;
pub(crate) use host::queue_key;
pub(crate) use order::QueueShape;
use order::SignalOrder;
use std::sync::{Mutex, PoisonError};
use std::time::Instant;

/// Byte ranges `[lo, hi)`, appended in access order and coalesced: an access that touches or
/// extends one of the last two intervals merges into it, so a kernel streaming through 64 MiB costs one
/// entry, not one per access. [`Ranges::normalize`] sorts and merges the rest.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Ranges {
    v: Vec<(u64, u64)>,
    /// Length after the last normalize (compaction happens when it doubles).
    settled: usize,
}

impl Ranges {
    pub(crate) fn add(&mut self, lo: u64, len: u64) {
        if len == 0 {
            return;
        }
        let hi = lo.saturating_add(len);
        // The last two: a dispatch split across two threads appends two interleaved streams.
        let n = self.v.len();
        for last in self.v[n.saturating_sub(2)..].iter_mut().rev() {
            if lo <= last.1 && hi >= last.0 {
                last.0 = last.0.min(lo);
                last.1 = last.1.max(hi);
                return;
            }
        }
        self.v.push((lo, hi));
        if self.v.len() > 2 * self.settled + 64 {
            self.normalize();
        }
    }

    /// Sorts and merges overlapping or adjacent intervals.
    pub(crate) fn normalize(&mut self) {
        self.v.sort_unstable();
        let mut out: Vec<(u64, u64)> = Vec::with_capacity(self.v.len());
        for &(lo, hi) in &self.v {
            match out.last_mut() {
                Some(last) if lo <= last.1 => last.1 = last.1.max(hi),
                _ => out.push((lo, hi)),
            }
        }
        self.v = out;
        self.settled = self.v.len();
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.v.is_empty()
    }

    /// Whether byte `a` is inside (normalized ranges).
    pub(crate) fn contains(&self, a: u64) -> bool {
        let i = self.v.partition_point(|&(_, hi)| hi <= a);
        self.v.get(i).is_some_and(|&(lo, _)| lo <= a)
    }

    /// The first overlap of two normalized range sets.
    pub(crate) fn overlap(&self, other: &Ranges) -> Option<(u64, u64)> {
        let (mut i, mut j) = (0, 0);
        while let (Some(&(a0, a1)), Some(&(b0, b1))) = (self.v.get(i), other.v.get(j)) {
            let (lo, hi) = (a0.max(b0), a1.min(b1));
            if lo < hi {
                return Some((lo, hi));
            }
            if a1 <= b1 {
                i += 1;
            } else {
                j += 1;
            }
        }
        None
    }
}

/// The bytes one operation read and wrote.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Access {
    pub(crate) reads: Ranges,
    pub(crate) writes: Ranges,
    /// A dispatch's kernarg segment (the bytes its kernarg pointer user SGPRs name), so a
    /// race on them is named as a race with the kernarg read.
    pub(crate) kernarg: Option<(u64, u64)>,
}

impl Access {
    fn normalize(&mut self) {
        self.reads.normalize();
        self.writes.normalize();
    }

    /// The first conflicting range with `other` and who writes: (range, self writes, other
    /// writes).
    fn conflict(&self, other: &Access) -> Option<((u64, u64), bool, bool)> {
        if let Some(r) = self.writes.overlap(&other.writes) {
            return Some((r, true, true));
        }
        if let Some(r) = self.writes.overlap(&other.reads) {
            return Some((r, true, false));
        }
        other.writes.overlap(&self.reads).map(|r| (r, false, true))
    }
}

/// The in-flight dispatches behind a lock: the engines' state is reached through [`super::queue::Env`],
/// which the threads of a split dispatch share (they never touch it; the lock keeps `Env` `Sync`).
#[derive(Debug)]
pub(crate) struct FlightCell(Mutex<Flight>);

impl FlightCell {
    pub(crate) fn new(f: Flight) -> Self {
        Self(Mutex::new(f))
    }

    /// The state (one holder at a time, as the `RefCell` it replaces).
    pub(crate) fn borrow(&self) -> std::sync::MutexGuard<'_, Flight> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Same as [`Self::borrow`], named for the call sites that change it.
    pub(crate) fn borrow_mut(&self) -> std::sync::MutexGuard<'_, Flight> {
        self.borrow()
    }
}

/// The recorder the engines' memory accesses go through while an operation executes (a flag
/// checked per access; the ranges are touched only while it is on). Shared by the threads a
/// large dispatch runs on (`isa::interp::run_dispatch`), so the flag is atomic and the ranges sit
/// behind locks taken only while recording: one per shard, each thread recording into its own
/// shard (threads spread over [`SHARDS`]), so a split dispatch's two threads do not contend for
/// one lock on every wave's access. [`Recorder::end`] merges the shards: the same union of
/// ranges as one set.
#[derive(Debug, Default)]
pub(crate) struct Recorder {
    on: AtomicBool,
    acc: [Mutex<Access>; SHARDS],
    /// The kernarg segment of the dispatch being recorded (set by the dispatch once).
    kernarg: Mutex<Option<(u64, u64)>>,
}

/// Range sets a recorder keeps (threads take them in turn).
const SHARDS: usize = 4;

/// This thread's shard of every recorder.
fn shard() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static SHARD: usize = NEXT.fetch_add(1, Ordering::Relaxed) % SHARDS;
    }
    SHARD.with(|s| *s)
}

impl Recorder {
    fn acc(&self) -> std::sync::MutexGuard<'_, Access> {
        let m = self.acc.get(shard()).unwrap_or(&self.acc[0]);
        m.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn begin(&self) {
        self.on.store(true, Ordering::Relaxed);
        for m in &self.acc {
            let mut a = m.lock().unwrap_or_else(PoisonError::into_inner);
            a.reads.v.clear();
            a.reads.settled = 0;
            a.writes.v.clear();
            a.writes.settled = 0;
        }
        *self.kernarg.lock().unwrap_or_else(PoisonError::into_inner) = None;
    }

    /// The operation being recorded is a dispatch whose kernarg segment is `len` bytes at
    /// `va`.
    pub(crate) fn kernarg(&self, va: u64, len: usize) {
        if self.on.load(Ordering::Relaxed) {
            // CAST: usize -> u64 widens.
            let end = va.saturating_add(len as u64);
            *self.kernarg.lock().unwrap_or_else(PoisonError::into_inner) = Some((va, end));
        }
    }

    pub(crate) fn end(&self) -> Access {
        self.on.store(false, Ordering::Relaxed);
        let mut a = Access::default();
        for m in &self.acc {
            let s = core::mem::take(&mut *m.lock().unwrap_or_else(PoisonError::into_inner));
            a.reads.v.extend(s.reads.v);
            a.writes.v.extend(s.writes.v);
        }
        a.normalize();
        a.kernarg = self
            .kernarg
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        a
    }

    #[inline]
    pub(crate) fn read(&self, va: u64, len: usize) {
        if self.on.load(Ordering::Relaxed) {
            // CAST: usize -> u64 widens.
            self.acc().reads.add(va, len as u64);
        }
    }

    #[inline]
    pub(crate) fn write(&self, va: u64, len: usize) {
        if self.on.load(Ordering::Relaxed) {
            // CAST: usize -> u64 widens.
            self.acc().writes.add(va, len as u64);
        }
    }
}

/// What an operation was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum What {
    /// A packet the engine executed (its name).
    Packet(&'static str),
    /// A dispatch of the kernel at this program address.
    Dispatch(u64),
}

/// Names an operation in a race report: kind, queue, GPU, place, kernel address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct OpLabel {
    pub(crate) gpu: u32,
    pub(crate) queue: QueueId,
    pub(crate) kind: QueueKind,
    pub(crate) what: What,
    pub(crate) site: Site,
}

impl fmt::Display for OpLabel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.what {
            What::Packet(n) => write!(f, "{n}")?,
            What::Dispatch(pgm) => write!(f, "the dispatch of the kernel at {pgm:#x}")?,
        }
        write!(
            f,
            " ({} queue {} of GPU {:#x} at {})",
            self.kind, self.queue.0, self.gpu, self.site
        )
    }
}

/// Seeded choices (splitmix64: small, deterministic, good enough to spread choices).
#[derive(Debug, Clone)]
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// Packets after its issue at which a dispatch lands if nothing retires it first.
pub(crate) const NEVER: u32 = u32::MAX;

struct Entry {
    id: u64,
    queue: QueueId,
    label: OpLabel,
    /// What it touched, once landed.
    acc: Option<Access>,
    /// Operations executed since its issue while it had not landed.
    concurrent: Vec<(OpLabel, Access)>,
    /// Idle rounds of its queue before it lands (pending) or retires (landed).
    linger_rounds: u32,
    /// Real time of idleness needed as well (threaded mode).
    linger_wall: Duration,
    /// Since when its queue has been idle (round, time).
    idle_since: Option<(u64, Instant)>,
}

/// The in-flight dispatches of every queue, and the seed.
pub(crate) struct Flight {
    mode: DispatchMode,
    rng: Rng,
    /// Whether lingering needs real time too (threaded engines).
    wall: bool,
    next: u64,
    entries: Vec<Entry>,
    /// Who wrote each signal and what ordered the writers (ordering between queues).
    pub(crate) order: SignalOrder,
    /// Host accesses to judge against the work queued before them (`flight/host.rs`).
    pub(crate) host: host::HostAccesses,
}

impl fmt::Debug for Flight {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Flight")
            .field("mode", &self.mode)
            .field("in_flight", &self.entries.len())
            .finish_non_exhaustive()
    }
}

fn race(a: &OpLabel, a_acc: &Access, b: &OpLabel, b_acc: &Access) -> Option<String> {
    let ((lo, hi), aw, bw) = a_acc.conflict(b_acc)?;
    let verb = |w: bool| if w { "writes" } else { "reads" };
    // On an AQL queue the packet processor issues those for a packet's header (`aql.rs`):
    // name what a producer of AQL packets sets (HSA System Architecture 1.2 §2.8-2.9).
    let aql = if a.kind == QueueKind::Aql || b.kind == QueueKind::Aql {
        "; on an AQL queue: the later packet's barrier bit, or the earlier kernel dispatch's release fence or completion signal"
    } else {
        ""
    };
    Some(format!(
        "race: {a} {} and {b} {} bytes {lo:#x}..{hi:#x}, and nothing orders them (a dispatch is ordered only by a CS_PARTIAL_FLUSH, an end-of-pipe RELEASE_MEM or a memory wait on what it wrote{aql})",
        verb(aw),
        verb(bw)
    ))
}

impl Flight {
    pub(crate) fn new(mode: DispatchMode, seed: u64, wall: bool) -> Self {
        Self {
            mode,
            rng: Rng(seed),
            wall,
            next: 0,
            entries: Vec::new(),
            order: SignalOrder::default(),
            host: host::HostAccesses::default(),
        }
    }

    /// New mode and seed; dispatches in flight stay in flight.
    pub(crate) fn configure(&mut self, mode: DispatchMode, seed: u64, wall: bool) {
        self.mode = mode;
        self.rng = Rng(seed);
        self.wall = wall;
    }

    pub(crate) fn mode(&self) -> DispatchMode {
        self.mode
    }

    /// Whether any dispatch is in flight (operations must be recorded).
    pub(crate) fn active(&self) -> bool {
        !self.entries.is_empty()
    }

    /// Whether operations must record their accesses: a dispatch in flight, or host accesses
    /// waiting to be judged.
    pub(crate) fn watching(&self) -> bool {
        self.active() || !self.host.is_empty()
    }

    pub(crate) fn in_flight(&self) -> usize {
        self.entries.len()
    }

    /// Registers a new dispatch; returns its id and the packet count after which it lands
    /// ([`NEVER`]: only when retired or after lingering).
    pub(crate) fn issue(&mut self, label: OpLabel) -> (u64, u32) {
        self.next += 1;
        let id = self.next;
        let after = match self.rng.below(5) {
            0 => 0,
            1 => 1,
            2 => 2,
            _ => NEVER,
        };
        // CAST: below(8) < 8.
        let linger_rounds = 1 + self.rng.below(8) as u32;
        let linger_wall = if self.wall {
            Duration::from_millis(50 + self.rng.below(101))
        } else {
            Duration::ZERO
        };
        // Dispatches already landed and still in flight are unordered with this one.
        let concurrent = self
            .entries
            .iter()
            .filter_map(|e| e.acc.as_ref().map(|a| (e.label, a.clone())))
            .collect();
        self.entries.push(Entry {
            id,
            queue: label.queue,
            label,
            acc: None,
            concurrent,
            linger_rounds,
            linger_wall,
            idle_since: None,
        });
        (id, after)
    }

    /// Rounds by which a delivered interrupt arrives late (0 in the synchronous mode).
    pub(crate) fn interrupt_delay(&mut self) -> u32 {
        match self.mode {
            DispatchMode::Synchronous => 0,
            // CAST: below(3) < 3.
            DispatchMode::Async => self.rng.below(3) as u32,
        }
    }

    /// An operation executed: checks it against every landed in-flight dispatch, and records
    /// it for those that have not landed.
    pub(crate) fn observe(&mut self, label: OpLabel, acc: &Access) -> Result<(), String> {
        if acc.reads.is_empty() && acc.writes.is_empty() {
            return Ok(());
        }
        for e in &self.entries {
            if let Some(a) = &e.acc {
                if let Some(m) = race(&e.label, a, &label, acc) {
                    return Err(m);
                }
            }
        }
        for e in self.entries.iter_mut().filter(|e| e.acc.is_none()) {
            e.concurrent.push((label, acc.clone()));
        }
        Ok(())
    }

    /// Dispatch `id` landed with `acc`: checks it against everything that ran since its issue,
    /// then records it for the dispatches that have not landed.
    pub(crate) fn land(&mut self, id: u64, acc: Access) -> Result<(), String> {
        let Some(i) = self.entries.iter().position(|e| e.id == id) else {
            return Ok(());
        };
        let label = match self.entries.get_mut(i) {
            Some(e) => {
                for (l, a) in &e.concurrent {
                    if let Some(m) = race(&e.label, &acc, l, a) {
                        return Err(m);
                    }
                }
                e.concurrent = Vec::new();
                e.idle_since = None;
                e.label
            }
            None => return Ok(()),
        };
        for e in self
            .entries
            .iter_mut()
            .filter(|e| e.acc.is_none() && e.id != id)
        {
            e.concurrent.push((label, acc.clone()));
        }
        if let Some(e) = self.entries.get_mut(i) {
            e.acc = Some(acc);
        }
        Ok(())
    }

    /// Retires every in-flight dispatch of `queue` (all landed first by the caller).
    pub(crate) fn retire_queue(&mut self, queue: QueueId) {
        self.entries.retain(|e| e.queue != queue);
    }

    /// A memory wait saw the value at `addr`: the landed dispatches that wrote it are ordered
    /// before what follows the wait.
    pub(crate) fn retire_writers_of(&mut self, addr: u64) {
        self.entries
            .retain(|e| !e.acc.as_ref().is_some_and(|a| a.writes.contains(addr)));
    }

    /// Whether dispatch `id` of an idle queue has lingered long enough (starts the clock on the
    /// first call).
    pub(crate) fn lingered(&mut self, id: u64, round: u64) -> bool {
        let Some(e) = self.entries.iter_mut().find(|e| e.id == id) else {
            return true;
        };
        let (r0, t0) = *e.idle_since.get_or_insert((round, Instant::now()));
        round.saturating_sub(r0) >= u64::from(e.linger_rounds) && t0.elapsed() >= e.linger_wall
    }

    /// The queue ran packets: idleness restarts.
    pub(crate) fn busy(&mut self, queue: QueueId) {
        for e in self.entries.iter_mut().filter(|e| e.queue == queue) {
            e.idle_since = None;
        }
    }

    /// Retires the landed dispatches of an idle `queue` that have lingered long enough.
    pub(crate) fn retire_lingered(&mut self, queue: QueueId, round: u64) {
        let ids: Vec<u64> = self
            .entries
            .iter()
            .filter(|e| e.queue == queue && e.acc.is_some())
            .map(|e| e.id)
            .collect();
        for id in ids {
            if self.lingered(id, round) {
                self.entries.retain(|e| e.id != id);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(v: &[(u64, u64)]) -> Ranges {
        let mut r = Ranges::default();
        for &(lo, len) in v {
            r.add(lo, len);
        }
        r.normalize();
        r
    }

    #[test]
    fn streaming_accesses_coalesce_into_one_interval() {
        let mut r = Ranges::default();
        for i in 0..(64u64 << 20) / 64 {
            r.add(0x1000 + i * 64, 64);
        }
        assert_eq!(r.v, [(0x1000, 0x1000 + (64 << 20))]);
    }

    #[test]
    fn scattered_accesses_stay_bounded_and_merge() {
        let mut r = Ranges::default();
        for i in (0..10_000u64).rev() {
            r.add(i * 8, 4);
            r.add(i * 8 + 4, 4);
        }
        assert!(r.v.len() < 10_000);
        r.normalize();
        assert_eq!(r.v, [(0, 80_000)]);
    }

    #[test]
    fn overlap_and_contains() {
        let a = set(&[(0, 16), (100, 10)]);
        let b = set(&[(16, 84), (105, 1)]);
        assert_eq!(a.overlap(&b), Some((105, 106)));
        assert_eq!(set(&[(0, 16)]).overlap(&set(&[(16, 4)])), None);
        assert!(a.contains(109) && !a.contains(110) && !a.contains(50));
    }

    #[test]
    fn a_race_needs_a_writer() {
        let label = OpLabel {
            gpu: 1,
            queue: QueueId(2),
            kind: QueueKind::Compute,
            what: What::Packet("WRITE_DATA"),
            site: Site::Ring(8),
        };
        let reads = Access {
            reads: set(&[(0, 8)]),
            ..Access::default()
        };
        let writes = Access {
            writes: set(&[(4, 8)]),
            ..Access::default()
        };
        assert!(race(&label, &reads, &label, &reads).is_none());
        let m = race(&label, &reads, &label, &writes).unwrap();
        assert!(m.contains("reads and WRITE_DATA"), "{m}");
        assert!(m.contains("bytes 0x4..0x8"), "{m}");
    }

    #[test]
    fn the_seed_decides_and_repeats() {
        let label = OpLabel {
            gpu: 1,
            queue: QueueId(2),
            kind: QueueKind::Compute,
            what: What::Dispatch(0x1000),
            site: Site::Ring(8),
        };
        let picks = |seed| {
            let mut f = Flight::new(DispatchMode::Async, seed, false);
            (0..32).map(|_| f.issue(label).1).collect::<Vec<_>>()
        };
        assert_eq!(picks(7), picks(7));
        assert_ne!(picks(7), picks(8));
        assert!(picks(7).contains(&NEVER) && picks(7).contains(&0));
    }
}
