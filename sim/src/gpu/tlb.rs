//! Each thread's recent GPU address translations (a software TLB over the page table).

#[allow(clippy::wildcard_imports)]
use super::*;

/// One translation a thread keeps: `walk` on GPU `gpu_id` of simulator `sim`, valid while
/// that simulator's `vm_epoch` is still `epoch`.
pub(super) struct TlbEntry {
    pub(super) sim: u64,
    pub(super) gpu_id: u32,
    pub(super) epoch: u64,
    pub(super) walk: Walk,
}

/// Entries per thread: a dispatch touches a handful of buffers (code, kernargs, a few
/// tensors, scratch); more would only lengthen the search.
pub(super) const TLB_ENTRIES: usize = 8;

/// A thread's recent translations: the engines' and interpreter threads' memory accesses
/// would otherwise each take the simulator's state lock and bump the BO's reference count,
/// which two interpreter threads then fight over cache line by cache line.
pub(super) struct Tlb {
    pub(super) entries: [Option<TlbEntry>; TLB_ENTRIES],
    pub(super) next: usize,
}

std::thread_local! {
    pub(super) static TLB: core::cell::RefCell<Tlb> = const {
        core::cell::RefCell::new(Tlb {
            entries: [const { None }; TLB_ENTRIES],
            next: 0,
        })
    };
}

impl Tlb {
    /// The entry of `sim` for `va` on `gpu_id` under `epoch` (dropping `sim`'s stale ones, so
    /// a thread does not keep freed memory alive past its next access).
    pub(super) fn find(&mut self, sim: u64, epoch: u64, gpu_id: u32, va: u64) -> Option<&TlbEntry> {
        let mut hit = None;
        for (i, slot) in self.entries.iter_mut().enumerate() {
            if let Some(e) = slot
                && e.sim == sim
            {
                if e.epoch != epoch {
                    *slot = None;
                } else if e.gpu_id == gpu_id && (e.walk.start..e.walk.end).contains(&va) {
                    hit = Some(i);
                }
            }
        }
        hit.and_then(|i| self.entries.get(i))
            .and_then(Option::as_ref)
    }

    pub(super) fn insert(&mut self, e: TlbEntry) {
        if let Some(slot) = self.entries.get_mut(self.next) {
            *slot = Some(e);
        }
        self.next = (self.next + 1) % TLB_ENTRIES;
    }
}
