//! Ordering between queues, for signals: who wrote each signal, and what ordered the writers.
//!
//! Each queue carries a vector clock. A signal write (RELEASE_MEM with data, SDMA FENCE) ticks
//! the writer's clock and leaves the writer's clock on the signal; a memory wait on the signal
//! that is satisfied (WAIT_REG_MEM, POLL_REGMEM) takes it into the waiting queue's clock. So
//! a write is ordered after an earlier write by another queue exactly when a chain of
//! satisfied waits leads from the one to the other. The host orders queues too, without the
//! simulator seeing it (it waits for a value, then submits): an earlier write that executed
//! before the writing queue last saw a new write pointer counts as ordered by the host.
//!
//! Two faults, each naming both writers and the values:
//! - a signal written by two queues with different values and nothing ordering the writes
//!   (the same value from both, an event mailbox's event id, is no conflict);
//! - a timeline signal whose value goes down: a queue writes a value below the one another
//!   queue last wrote there, which is still in memory (a host write in between starts a new
//!   history, which is how a timeline is reset at its wrap; one queue rewriting its own signal
//!   lower, a counter or a benchmark's repeated stream, is its own business).
//!
//! The history of each signal (the last writes and host resets) is what a deadlock report
//! shows.

use super::OpLabel;
use core::fmt::Write as _;
use std::collections::{HashMap, VecDeque};

/// A queue: (GPU id, queue id).
pub(crate) type QueueKey = (u32, u32);

/// One queue as a deadlock check sees it: id, read pointer, the value a blocked wait saw.
pub(crate) type QueueShape = (u32, u64, Option<u32>);

/// Entries of a signal's history kept for reports.
const HISTORY: usize = 8;

/// A vector clock: per queue, how many of its signal writes are known.
#[derive(Clone, Debug, Default)]
struct VClock(Vec<(QueueKey, u64)>);

impl VClock {
    fn get(&self, q: QueueKey) -> u64 {
        self.0.iter().find(|(k, _)| *k == q).map_or(0, |&(_, t)| t)
    }

    fn set(&mut self, q: QueueKey, t: u64) {
        match self.0.iter_mut().find(|(k, _)| *k == q) {
            Some(e) => e.1 = e.1.max(t),
            None => self.0.push((q, t)),
        }
    }

    fn join(&mut self, other: &VClock) {
        for &(q, t) in &other.0 {
            self.set(q, t);
        }
    }
}

/// One GPU write of a signal.
#[derive(Clone, Copy, Debug)]
struct Write {
    queue: QueueKey,
    /// The writer's own clock component after the write.
    tick: u64,
    /// Global order of the write among all signal writes.
    seq: u64,
    value: u32,
    label: OpLabel,
    /// The copy, fill or dispatch the write completes (the writer queue's last one before it).
    work: Option<OpLabel>,
}

/// One entry of a signal's history.
#[derive(Clone, Copy, Debug)]
enum Event {
    Gpu(Write),
    /// The value was found changed by someone other than a GPU signal write (the host).
    Host(u32),
}

#[derive(Debug, Default)]
struct SignalState {
    /// The value the last GPU write left (compared with memory to see host writes).
    last: Option<u32>,
    /// The latest write of each queue since the last host write.
    writes: Vec<Write>,
    /// The join of the writers' clocks (what a satisfied wait learns).
    joined: VClock,
    history: VecDeque<Event>,
}

impl SignalState {
    fn push(&mut self, e: Event) {
        if self.history.len() == HISTORY {
            self.history.pop_front();
        }
        self.history.push_back(e);
    }
}

/// The signal-ordering state of every queue (behind the flight lock).
#[derive(Debug, Default)]
pub(crate) struct SignalOrder {
    seq: u64,
    clocks: HashMap<QueueKey, VClock>,
    /// Per queue: `seq` when it last saw a new write pointer.
    doorbells: HashMap<QueueKey, u64>,
    signals: HashMap<u64, SignalState>,
    /// Since when, and in which shape (per queue: id, read pointer, value a blocked wait
    /// saw), every queue has been idle or blocked while the host waits, and whether that was
    /// logged (`deadlock.rs`).
    pub(crate) stuck: Option<(std::time::Instant, Vec<QueueShape>, bool)>,
}

impl SignalOrder {
    /// Queue `q` saw a new write pointer (the host published commands).
    pub(crate) fn doorbell(&mut self, q: QueueKey) {
        self.doorbells.insert(q, self.seq);
    }

    /// Queue `q` (its packet `label`) is about to write `value` to the signal at `addr`, which
    /// holds `current`, completing `work` (the queue's last copy, fill or dispatch since its
    /// last signal write). Checks the write against the signal's other writers and records it.
    ///
    /// # Errors
    /// The fault's reason: a value that goes down, or two unordered writers.
    pub(crate) fn release(
        &mut self,
        q: QueueKey,
        label: OpLabel,
        addr: u64,
        value: u32,
        current: u32,
        work: Option<OpLabel>,
    ) -> Result<(), String> {
        let st = self.signals.entry(addr).or_default();
        if st.last.is_some_and(|l| l != current) {
            // Someone else wrote it since (the host): the old writers are behind that write.
            st.writes.clear();
            st.push(Event::Host(current));
        }
        let clock = self.clocks.entry(q).or_default();
        if let Some(w) = st.writes.iter().max_by_key(|w| w.seq)
            && w.queue != q
            && value < w.value
            && st.last == Some(current)
        {
            // The later value was written first: the work it completes ran before the value
            // below it existed, so nothing on its queue waited for that value.
            let cause = w.work.map_or_else(String::new, |op| {
                format!(
                    "; {op}, which {} completes, ran before the value it should have waited for: {value}, which {label} writes only now (a missing wait for {value} before it: it raced the producer of {value})",
                    w.label
                )
            });
            return Err(format!(
                "timeline signal at {addr:#x} goes down: {label} writes {value} over {}, which {} wrote{cause} (a timeline value only grows; wait for the write before it, or reset the signal from the host){}",
                w.value,
                w.label,
                history_text(st)
            ));
        }
        let seen = self.doorbells.get(&q).copied().unwrap_or(0);
        if let Some(w) = st.writes.iter().find(|w| {
            w.queue != q && w.value != value && clock.get(w.queue) < w.tick && w.seq >= seen
        }) {
            return Err(format!(
                "signal at {addr:#x} is written by two queues with nothing ordering them: {label} writes {value}, and {} wrote {} without a wait on this queue seeing it (order them: wait for {} on the signal before writing {value}){}",
                w.label,
                w.value,
                w.value,
                history_text(st)
            ));
        }
        let tick = clock.get(q) + 1;
        clock.set(q, tick);
        st.joined.join(clock);
        let w = Write {
            queue: q,
            tick,
            seq: self.seq,
            value,
            label,
            work,
        };
        self.seq += 1;
        st.writes.retain(|x| x.queue != q);
        st.writes.push(w);
        st.last = Some(value);
        st.push(Event::Gpu(w));
        Ok(())
    }

    /// Queue `q`'s memory wait on `addr` was satisfied: it is ordered after every GPU write
    /// of that signal so far.
    pub(crate) fn acquire(&mut self, q: QueueKey, addr: u64) {
        if let Some(st) = self.signals.get(&addr) {
            self.clocks.entry(q).or_default().join(&st.joined);
        }
    }

    /// The signal at `addr`'s recent history, for a report.
    pub(crate) fn history(&self, addr: u64) -> String {
        self.signals
            .get(&addr)
            .map_or_else(|| history_text(&SignalState::default()), history_text)
    }
}

fn history_text(st: &SignalState) -> String {
    let mut s = String::from("; the signal's history, oldest first:");
    if st.history.is_empty() {
        s.push_str(" no GPU write");
    }
    for (i, e) in st.history.iter().enumerate() {
        let sep = if i == 0 { " " } else { ", " };
        let _ = match e {
            Event::Gpu(w) => write!(s, "{sep}{} by {}", w.value, w.label),
            Event::Host(v) => write!(s, "{sep}{v} by the host"),
        };
    }
    s
}

#[cfg(test)]
mod tests {
    use super::super::What;
    use super::*;
    use crate::engine::types::{QueueId, QueueKind, Site};

    fn label(q: u32, kind: QueueKind) -> OpLabel {
        OpLabel {
            gpu: 1,
            queue: QueueId(q),
            kind,
            what: What::Packet(if kind == QueueKind::Sdma {
                "SDMA FENCE"
            } else {
                "RELEASE_MEM"
            }),
            site: Site::Ring(16),
        }
    }

    const C: QueueKey = (1, 0);
    const S: QueueKey = (1, 1);

    #[test]
    fn writes_ordered_by_waits_pass() {
        let mut o = SignalOrder::default();
        let (lc, ls) = (label(0, QueueKind::Compute), label(1, QueueKind::Sdma));
        o.doorbell(C);
        o.doorbell(S);
        o.release(C, lc, 0x100, 1, 0, None).unwrap();
        o.acquire(S, 0x100);
        o.release(S, ls, 0x100, 2, 1, None).unwrap();
        o.acquire(C, 0x100);
        o.release(C, lc, 0x100, 3, 2, None).unwrap();
    }

    #[test]
    fn unordered_writers_are_named() {
        let mut o = SignalOrder::default();
        let (lc, ls) = (label(0, QueueKind::Compute), label(1, QueueKind::Sdma));
        o.doorbell(C);
        o.doorbell(S);
        o.release(C, lc, 0x100, 1, 0, None).unwrap();
        let e = o.release(S, ls, 0x100, 2, 1, None).unwrap_err();
        assert!(e.contains("two queues"), "{e}");
        assert!(e.contains("SDMA FENCE") && e.contains("RELEASE_MEM"), "{e}");
        assert!(e.contains("wait for 1"), "{e}");
    }

    #[test]
    fn the_host_orders_what_it_saw_before_submitting() {
        let mut o = SignalOrder::default();
        let (lc, ls) = (label(0, QueueKind::Compute), label(1, QueueKind::Sdma));
        o.doorbell(C);
        o.release(C, lc, 0x100, 1, 0, None).unwrap();
        // The host saw 1, then published the copy queue's commands.
        o.doorbell(S);
        o.release(S, ls, 0x100, 2, 1, None).unwrap();
    }

    #[test]
    fn a_value_that_goes_down_is_named_and_a_host_reset_is_not() {
        let mut o = SignalOrder::default();
        let (lc, ls) = (label(0, QueueKind::Compute), label(1, QueueKind::Sdma));
        o.doorbell(C);
        o.doorbell(S);
        let copy = OpLabel {
            what: What::Packet("SDMA COPY_LINEAR"),
            ..ls
        };
        o.release(S, ls, 0x100, 2, 0, Some(copy)).unwrap();
        let e = o.release(C, lc, 0x100, 1, 2, None).unwrap_err();
        assert!(
            e.contains("goes down") && e.contains("writes 1 over 2"),
            "{e}"
        );
        // The cause: the copy the later value completes ran before the value below it.
        assert!(
            e.contains(&format!(
                "; {copy}, which {ls} completes, ran before the value it should have waited for: 1, which {lc} writes only now"
            )),
            "{e}"
        );
        // Memory shows 0: the host reset it; writing 1 then is fine.
        let mut o = SignalOrder::default();
        o.release(C, lc, 0x200, 5, 0, None).unwrap();
        o.release(S, ls, 0x200, 1, 0, None).unwrap();
        assert!(o.history(0x200).contains("0 by the host"));
        // One queue rewriting its own signal lower is no timeline going down.
        o.release(C, lc, 0x300, 5, 0, None).unwrap();
        o.release(C, lc, 0x300, 1, 5, None).unwrap();
    }
}
