//! Deadlocks: a queue waits on a value that no queued or running operation can ever write.
//!
//! What the simulator can prove, and what it cannot:
//! - **The GPU side.** When every queue of every GPU is idle (its ring drained) or blocked on
//!   a memory wait, no dispatch is in flight, no interrupt is pending and no queue is held
//!   (hung or suspended by fault injection), no engine will ever write memory again: a blocked
//!   wait can then be satisfied only by a write from outside the GPU, the host's. This is a
//!   fact about the simulator's own state and is checked exactly ([`Engines::stall_reasons`]).
//! - **The host side.** The simulator cannot prove that the host will never write the value.
//!   In threaded mode any host thread may write it at any time (a gate another thread opens
//!   after seconds). In deterministic mode too: the thread that waits may, after its wait
//!   times out, write the value and wait again (tinygrad's `test_wait_late_set`), and another
//!   thread may write it meanwhile. No amount of wall-clock time turns "the host has not
//!   written it yet" into "the host never will".
//!
//! So the simulator never faults a queue as deadlocked. The rule it implements: while the
//! GPU-side condition holds, each blocked wait's diagnosis (the queue, where it waits, the
//! value it waits for, what the memory holds, the signal's history from `flight::order`, and
//! that only the host can write it now) is what the simulator says about the GPU
//! ([`crate::SimKfd`]'s `KfdSys::fault_reasons` when no fault is recorded), so a host whose
//! wait gives up at its own deadline reports the cause, not just a timeout. A host that waits
//! on such a GPU for [`DEADLOCK_LOG_AFTER`] gets a warning in the log (once per stuck shape),
//! never a fault. A host write that comes later, at any time, lets the queue go on.

use super::Engines;
use super::types::QueueState;
use core::time::Duration;
use std::time::Instant;

/// How long the host waits on a GPU that cannot move before the simulator logs a warning
/// (never a fault: see the module docs).
pub const DEADLOCK_LOG_AFTER: Duration = Duration::from_millis(500);

/// WAIT_REG_MEM / POLL_REGMEM FUNCTION as an operator.
fn function_text(f: u32) -> &'static str {
    match f {
        0 => "(always)",
        1 => "<",
        2 => "<=",
        3 => "==",
        4 => "!=",
        5 => ">=",
        6 => ">",
        _ => "(reserved)",
    }
}

/// The GPU-side proof: every queue idle (drained) or blocked, nothing in flight, nothing held;
/// the blocked waits' diagnoses (GPU id, text) and the shape they were taken in.
type Stall = (Vec<super::flight::QueueShape>, Vec<(u32, String)>);

impl Engines {
    /// The GPU-side condition of the module docs, with each blocked wait's diagnosis; `None`
    /// when some engine can still write (work queued, running or held) or no queue waits.
    fn stall(&self) -> Option<Stall> {
        let g = self.lock();
        let inner = &*g;
        let mut moving = !inner.delayed.is_empty() || inner.flight.borrow().active();
        let mut shape: Vec<super::flight::QueueShape> = Vec::new();
        let mut waiting = 0usize;
        for q in inner.queues.values() {
            match &q.state {
                QueueState::Faulted(_) => {}
                QueueState::Waiting(w) => {
                    waiting += 1;
                    shape.push((q.id.0, q.rptr, Some(w.seen)));
                }
                QueueState::Idle => {
                    let drained = !q.aql_ib_running() && q.wptr().is_none_or(|w| w == q.rptr);
                    moving |= !drained || q.inj.hang || q.suspended;
                    shape.push((q.id.0, q.rptr, None));
                }
            }
        }
        if moving || waiting == 0 {
            return None;
        }
        let summary: Vec<String> = inner
            .queues
            .values()
            .map(|q| {
                let st = match &q.state {
                    QueueState::Waiting(_) => "waiting",
                    QueueState::Idle => "idle",
                    QueueState::Faulted(_) => "faulted",
                };
                format!(
                    "{} queue {} of GPU {:#x} {st}",
                    q.desc.kind, q.id.0, q.gpu_id
                )
            })
            .collect();
        let f = inner.flight.borrow();
        let reasons = inner
            .queues
            .values()
            .filter_map(|q| match &q.state {
                QueueState::Waiting(w) => Some((
                    q.gpu_id,
                    format!(
                        "deadlock: {} queue {} at {} waits for the value at {:#x} to be {} {} (mask {:#x}) and it holds {}, but no queued or running operation can write it: every queue is idle or waiting ({}), so only a host write can satisfy it{}",
                        q.desc.kind,
                        q.id.0,
                        position(q),
                        w.addr,
                        function_text(w.function),
                        w.reference,
                        w.mask,
                        w.seen,
                        summary.join(", "),
                        f.order.history(w.addr),
                    ),
                )),
                _ => None,
            })
            .collect();
        Some((shape, reasons))
    }

    /// Why the waiting queues of GPU `gpu_id` cannot go on by the GPU's own work (the
    /// GPU-side condition of the module docs holds): one diagnosis per blocked wait, each
    /// starting `deadlock: `; empty when some engine can still write. Never faults anything.
    #[must_use]
    pub fn stall_reasons(&self, gpu_id: u32) -> Vec<String> {
        self.stall().map_or_else(Vec::new, |(_, r)| {
            r.into_iter()
                .filter(|(g, _)| *g == gpu_id)
                .map(|(_, t)| t)
                .collect()
        })
    }

    /// The host is waiting (KFD's WAIT_EVENTS) and the queues made no progress: when the
    /// GPU-side condition has held in the same shape for `DEADLOCK_LOG_AFTER` (0.5 s), logs each
    /// diagnosis once as a warning. Never faults a queue (the host may still write the value:
    /// see the module docs), so it always returns `false` (no deadlock reported as a fault).
    pub fn check_deadlock(&self) -> bool {
        let stall = self.stall();
        let g = self.lock();
        let mut f = g.flight.borrow_mut();
        let since = &mut f.order.stuck;
        let Some((shape, reasons)) = stall else {
            *since = None;
            return false;
        };
        match since {
            Some((t0, s, logged)) if *s == shape => {
                if *logged || t0.elapsed() < DEADLOCK_LOG_AFTER {
                    return false;
                }
                *logged = true;
            }
            _ => {
                *since = Some((Instant::now(), shape, false));
                return false;
            }
        }
        drop(f);
        drop(g);
        for (_, r) in reasons {
            log::warn!(
                "the host has waited {} ms on a GPU that cannot move by itself: {r}",
                DEADLOCK_LOG_AFTER.as_millis()
            );
        }
        false
    }
}

/// Where a waiting queue is: its ring dword (PM4, SDMA) or AQL packet index, and on a
/// multi-XCC node the XCC whose CP is blocked in the packet's indirect buffer (`aql_xcc.rs`:
/// the queue waits only when every XCC with work left is blocked; the last one tried).
fn position(q: &super::queue::Queue) -> String {
    if q.desc.kind != super::QueueKind::Aql {
        return format!("ring dword {}", q.rptr);
    }
    if q.seat.count > 1 && q.aql_pending.is_some() {
        format!(
            "packet {} (in its PM4 indirect buffer on XCC {} of {}, every XCC with work left blocked)",
            q.rptr, q.aql_xcc, q.seat.count
        )
    } else {
        format!("packet {}", q.rptr)
    }
}
