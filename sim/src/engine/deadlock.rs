//! Deadlocks: a queue waits on a value that no queued or running operation can ever write.
//!
//! When every queue of every GPU is idle (its ring drained) or blocked on a memory wait, no
//! dispatch is in flight and no interrupt is pending, nothing on the GPU can write again: a
//! blocked wait is satisfied only if the host writes its value. While the host itself waits
//! (KFD's WAIT_EVENTS) and nothing changes for [`DEADLOCK_GRACE`], the simulator reports a
//! deadlock: it faults every waiting queue with a reason that names the queue, where it
//! waits, the value it waits for, what the signal holds and the signal's history (who wrote
//! it, `flight::order`), instead of leaving the host to time out. The grace leaves room for a
//! second host thread that opens a gate.

use super::Engines;
use super::types::{Cause, QueueState, Site};
use core::time::Duration;
use std::time::Instant;

/// How long the host must wait on a GPU that cannot move before the deadlock is reported.
pub const DEADLOCK_GRACE: Duration = Duration::from_millis(500);

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

impl Engines {
    /// The host is waiting: reports a deadlock if every queue has been idle or blocked on a
    /// memory wait, with nothing in flight, for the deadlock grace period (0.5 s), faulting the
    /// waiting queues. Returns whether it reported one.
    pub fn check_deadlock(&self) -> bool {
        let mut g = self.lock();
        let inner = &mut *g;
        let mut stuck = !inner.delayed.is_empty() || inner.flight.borrow().active();
        // What must stay the same for the grace period: every queue's place and state.
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
                    let drained = q.ibs.is_empty() && q.wptr().is_none_or(|w| w == q.rptr);
                    stuck |= !drained || q.inj.hang || q.suspended;
                    shape.push((q.id.0, q.rptr, None));
                }
            }
        }
        let mut f = inner.flight.borrow_mut();
        let since = &mut f.order.stuck;
        if stuck || waiting == 0 {
            *since = None;
            return false;
        }
        match since {
            Some((t0, s)) if *s == shape => {
                if t0.elapsed() < DEADLOCK_GRACE {
                    return false;
                }
            }
            _ => {
                *since = Some((Instant::now(), shape));
                return false;
            }
        }
        *since = None;
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
        let reasons: Vec<(super::QueueId, Site, String)> = inner
            .queues
            .values()
            .filter_map(|q| match &q.state {
                QueueState::Waiting(w) => Some((
                    q.id,
                    Site::Ring(q.rptr),
                    format!(
                        "deadlock: the queue waits for the value at {:#x} to be {} {} (mask {:#x}) and it holds {}, but no queued or running operation can write it: every queue is idle or waiting ({}) and the host waited {} ms without writing it{}",
                        w.addr,
                        function_text(w.function),
                        w.reference,
                        w.mask,
                        w.seen,
                        summary.join(", "),
                        DEADLOCK_GRACE.as_millis(),
                        f.order.history(w.addr),
                    ),
                )),
                _ => None,
            })
            .collect();
        drop(f);
        let seq = &mut inner.seq;
        for (id, site, why) in reasons {
            if let Some(q) = inner.queues.get_mut(&id) {
                q.fault(seq, site, Cause::Hw(why));
            }
        }
        true
    }
}
