//! Host accesses as operations of the race detector (the records of `mem/hostguard.rs`).
//!
//! Each record says which byte the CPU read or wrote and, per queue, the doorbell value at
//! that moment: every ring position below it was queued before the access. An operation at
//! such a position that executes after the access (the engines only see records of accesses
//! that already happened) and touches the byte, a write against its reads or writes, a read
//! against its writes, is a race: the host touched memory a queued, unfinished GPU operation
//! uses, and nothing ordered the two. Dispatches (their kernarg and kernel accesses) and SDMA
//! copies and fills are judged; signal writes and memory waits are how the host and the GPU
//! synchronise, not data. A record is dropped once every queue has executed past its doorbell
//! value with nothing left in flight.

use super::{Access, OpLabel};
use crate::mem::HostFault;

/// A queue as records name it: `gpu_id << 32 | doorbell byte offset`.
pub(crate) fn queue_key(gpu: u32, doorbell_offset: u64) -> u64 {
    (u64::from(gpu) << 32) | doorbell_offset
}

/// The host accesses not yet judged against everything queued before them.
#[derive(Debug, Default)]
pub(crate) struct HostAccesses {
    pending: Vec<HostFault>,
}

impl HostAccesses {
    pub(crate) fn add(&mut self, mut v: Vec<HostFault>) {
        self.pending.append(&mut v);
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.pending.is_empty()
    }

    /// Drops the records whose queued work has all executed: `done(queue, position)`.
    pub(crate) fn prune(&mut self, done: impl Fn(u64, u64) -> bool) {
        self.pending
            .retain(|h| !h.queued.iter().all(|&(q, pos)| done(q, pos)));
    }

    /// Whether operation `label`, at ring position `pos` of queue `queue`, which accessed
    /// `acc`, races a host access: the race's description (the caller adds what would have
    /// ordered them).
    ///
    /// `user_ptrs`: for a dispatch, the 64-bit values its user SGPR pairs hold. A host write
    /// into bytes the dispatch read at one of them (or into its kernarg segment, where the
    /// simulator knows it) is named as racing the dispatch's kernarg read.
    pub(crate) fn check(
        &self,
        label: &OpLabel,
        queue: u64,
        pos: u64,
        acc: &Access,
        user_ptrs: &[u64],
    ) -> Option<String> {
        for h in &self.pending {
            let queued = h.queued.iter().any(|&(q, wptr)| q == queue && pos < wptr);
            if !queued {
                continue;
            }
            let hit = |r: &super::Ranges| {
                r.v.iter()
                    .find(|&&(lo, hi)| lo <= h.va && h.va < hi)
                    .copied()
            };
            let (op_verb, range) = if h.write {
                match (hit(&acc.writes), hit(&acc.reads)) {
                    (Some(r), _) => ("writes", r),
                    (None, Some(r)) => ("reads", r),
                    (None, None) => continue,
                }
            } else {
                match hit(&acc.writes) {
                    Some(r) => ("writes", r),
                    None => continue,
                }
            };
            let verb = if h.write { "wrote" } else { "read" };
            let kernarg = acc
                .kernarg
                .or_else(|| user_ptrs.contains(&range.0).then_some(range));
            if let Some((lo, hi)) = kernarg
                && h.write
                && lo <= h.va
                && h.va < hi
                && op_verb == "reads"
            {
                return Some(format!(
                    "host race: a host write racing a queued dispatch's kernarg read: the CPU wrote {:#x} (byte {:#x} of the buffer at {:#x}, through its mapping at {:#x}), byte {:#x} of the kernarg segment {lo:#x}..{hi:#x} (bytes at a pointer its user SGPRs hold) of {label}, which reads it and was queued and not complete (kernargs must stay unchanged until the dispatch that reads them completes)",
                    h.va,
                    h.va - h.buf,
                    h.buf,
                    h.host,
                    h.va - lo
                ));
            }
            return Some(format!(
                "host race: the CPU {verb} {:#x} (byte {:#x} of the buffer at {:#x}, through its mapping at {:#x}) while {label}, which {op_verb} bytes {:#x}..{:#x}, was queued and not complete",
                h.va,
                h.va - h.buf,
                h.buf,
                h.host,
                range.0,
                range.1
            ));
        }
        None
    }
}
