//! The L2 model: GPU writes that sit in a GPU's L2 until a write-back, for memory the CPU
//! reads without snooping that L2.
//!
//! The GPU's L2 (GL2 on gfx10+, TC L2 on gfx9) is a write-back cache: a shader store, an
//! atomic, an SDMA copy on gfx10+ (SDMA is a GL2 client there: ROCr ends each SDMA copy with a
//! GCR_REQ write-back) or a CP write with an L2 destination lands in L2 lines, and reaches
//! memory only when the line is written back: by a cache action (RELEASE_MEM GCR_CNTL
//! `GL2_WB` / gfx9 `TC_WB_ACTION_ENA`, `TC_ACTION_ENA`; ACQUIRE_MEM GCR_CNTL `GL2_WB` / gfx9
//! CP_COHER_CNTL `TC_WB_ACTION_ENA`, `TC_ACTION_ENA`; SDMA GCR_REQ `GL2_WB`) or by eviction.
//! GPU engines of that GPU read through the L2 and see the new bytes at once; the CPU reads
//! memory (VRAM through the BAR, GTT through its own caches, which the GPU's L2 does not
//! update) and sees the old bytes until the write-back.
//!
//! [`L2Lines`] keeps, per BO, the dirty bytes of each 4 KiB page (a copy of the page and a
//! bit per dirty byte) and the GPU whose L2 holds them. Memory keeps the old bytes, so a
//! missing write-back is a wrong result the CPU sees, as on hardware. Only BOs the CPU reads
//! and whose MTYPE the L2 caches are tracked (see `SharedMem::l2_track`): nothing else can
//! tell the difference, so GPU-only VRAM (kernel outputs, copies into it) pays nothing.
//!
//! Eviction: a BO keeps at most [`MAX_DIRTY_PAGES`] dirty pages (4 MiB, the order of the
//! simulated GPUs' L2: 6 MiB on Navi 31, 8 MiB on MI200, 4 MiB per XCD on MI300); beyond
//! that the oldest page is written back, as capacity evicts lines on hardware. So a missing
//! write-back after a large copy leaves its last 4 MiB stale, not all of it.

use super::SharedMem;
use std::collections::VecDeque;

/// Granule of the model (dirty bytes are tracked to the byte inside it).
pub(super) const L2_PAGE: usize = 4096;
/// Mask words per page (one bit per byte).
const MASK_WORDS: usize = L2_PAGE / 64;
/// Most dirty pages a BO keeps before the oldest is evicted (written back).
pub(crate) const MAX_DIRTY_PAGES: usize = 1024;
/// Page buffers kept for reuse after a write-back (fresh memory costs a page fault per
/// 4 KiB on first touch).
const POOL_PAGES: usize = 256;

/// One page's dirty bytes.
#[derive(Debug)]
struct Dirty {
    /// The GPU whose L2 holds them.
    gpu: u32,
    /// The page as that GPU's L2 holds it (only the bytes in `mask` are meaningful).
    data: Box<[u8; L2_PAGE]>,
    /// One bit per dirty byte.
    mask: [u64; MASK_WORDS],
}

impl Dirty {
    fn is_clean(&self) -> bool {
        self.mask.iter().all(|&w| w == 0)
    }

    /// Sets (or with `set == false` clears) the mask bits of `[start, start + n)`: the edge
    /// words bit by bit, whole words between them at once.
    fn mark(&mut self, start: usize, n: usize, set: bool) {
        let end = start + n;
        if n == 0 || end > L2_PAGE {
            return;
        }
        let (w0, w1) = (start / 64, (end - 1) / 64);
        let bits = |lo: usize, hi: usize| -> u64 {
            // Bits lo..hi of one word (0 <= lo < hi <= 64).
            let high = if hi == 64 { u64::MAX } else { (1u64 << hi) - 1 };
            high & !((1u64 << lo) - 1)
        };
        let apply = |m: &mut u64, b: u64| {
            if set {
                *m |= b;
            } else {
                *m &= !b;
            }
        };
        if w0 == w1 {
            if let Some(m) = self.mask.get_mut(w0) {
                apply(m, bits(start % 64, end - w0 * 64));
            }
            return;
        }
        if let Some(m) = self.mask.get_mut(w0) {
            apply(m, bits(start % 64, 64));
        }
        if let Some(mid) = self.mask.get_mut(w0 + 1..w1) {
            mid.fill(if set { u64::MAX } else { 0 });
        }
        if let Some(m) = self.mask.get_mut(w1) {
            apply(m, bits(0, end - w1 * 64));
        }
    }

    /// The first byte at or after `from` whose mask bit is `set`.
    fn next(&self, from: usize, set: bool) -> Option<usize> {
        let mut i = from;
        while i < L2_PAGE {
            let w = self.mask.get(i / 64).copied().unwrap_or(0);
            let w = if set { w } else { !w } >> (i % 64);
            if w != 0 {
                // CAST: trailing_zeros < 64.
                return Some(i + w.trailing_zeros() as usize);
            }
            i = (i / 64 + 1) * 64;
        }
        None
    }

    /// Runs of dirty bytes: `(start, len)` in page order.
    fn runs(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        let mut i = 0usize;
        core::iter::from_fn(move || {
            let start = self.next(i, true)?;
            i = self.next(start, false).unwrap_or(L2_PAGE);
            Some((start, i - start))
        })
    }
}

type PageMap = crate::inthash::IntMap<usize, Dirty>;

/// The dirty L2 bytes of one BO, page by page.
#[derive(Debug, Default)]
pub(super) struct L2Lines {
    pages: PageMap,
    /// Pages in the order they became dirty (entries of pages written back since are skipped).
    order: VecDeque<usize>,
    /// Page buffers to reuse.
    pool: Vec<Box<[u8; L2_PAGE]>>,
}

/// Whether the L2 of a GPU with `gfx_target_version` caches (write-back) a VRAM or GTT BO
/// allocated with KFD alloc `flags`, as the kernel picks its PTE's MTYPE:
/// `gmc_v10_0_get_vm_pte` / `gmc_v11_0_get_vm_pte` map BOs created `COHERENT`,
/// `EXT_COHERENT` or `UNCACHED` (`amdgpu_amdkfd_gpuvm.c` turns the KFD flags into those GEM
/// flags) as `MTYPE_UC`, everything else `MTYPE_NC`; `gmc_v12_0_get_vm_pte` only `UNCACHED`;
/// gfx9's `gmc_v9_0_get_coherence_flags` gives `UNCACHED` `MTYPE_UC` and `COHERENT` /
/// `EXT_COHERENT` `MTYPE_UC` or `MTYPE_CC` (coherent: written through for the CPU), else
/// `MTYPE_RW`/`MTYPE_NC`. UC and CC lines are not held dirty for the CPU; RW and NC are.
#[must_use]
pub(crate) fn l2_caches(gfx_target_version: u32, flags: u32) -> bool {
    use hcq_core::kfd::{
        KFD_IOC_ALLOC_MEM_FLAGS_COHERENT as COHERENT,
        KFD_IOC_ALLOC_MEM_FLAGS_EXT_COHERENT as EXT_COHERENT,
        KFD_IOC_ALLOC_MEM_FLAGS_UNCACHED as UNCACHED,
    };
    let uncached = if gfx_target_version >= 120_000 {
        UNCACHED
    } else {
        UNCACHED | COHERENT | EXT_COHERENT
    };
    flags & uncached == 0
}

/// `(page, offset in page, bytes)` pieces of `[off, off + len)`.
fn pieces(off: u64, len: usize) -> impl Iterator<Item = (usize, usize, usize, usize)> {
    let mut done = 0usize;
    core::iter::from_fn(move || {
        if done >= len {
            return None;
        }
        // CAST: usize -> u64 widens; offsets are inside a usize-sized mapping (the caller
        // checked the range).
        let a = off + done as u64;
        let (page, in_page) = ((a / L2_PAGE as u64) as usize, (a % L2_PAGE as u64) as usize);
        let n = (L2_PAGE - in_page).min(len - done);
        let r = (page, in_page, n, done);
        done += n;
        Some(r)
    })
}

impl L2Lines {
    /// Whether any byte is dirty.
    pub(super) fn is_empty(&self) -> bool {
        self.pages.is_empty()
    }

    /// Dirty pages now.
    pub(super) fn dirty_pages(&self) -> usize {
        self.pages.len()
    }

    fn recycle(&mut self, d: Dirty) {
        if self.pool.len() < POOL_PAGES {
            self.pool.push(d.data);
        }
    }

    /// Writes page `page`'s dirty bytes to memory (through `mem`'s GPU-visible write, which
    /// keeps the HDP view in step) and forgets them.
    fn write_back_page(&mut self, mem: &SharedMem, page: usize) {
        let Some(d) = self.pages.remove(&page) else {
            return;
        };
        let base = page * L2_PAGE;
        for (s, n) in d.runs() {
            if let Some(b) = d.data.get(s..s + n) {
                // CAST: usize -> u64 widens.
                mem.write_memory((base + s) as u64, b);
            }
        }
        self.recycle(d);
    }

    /// A GPU write of `data` at `off` by GPU `gpu` into its L2. A page another GPU's L2 holds
    /// dirty is written back first (one owner per page); beyond [`MAX_DIRTY_PAGES`] the
    /// oldest page is.
    pub(super) fn write(&mut self, mem: &SharedMem, gpu: u32, off: u64, data: &[u8]) {
        for (page, in_page, n, done) in pieces(off, data.len()) {
            if self.pages.get(&page).is_some_and(|d| d.gpu != gpu) {
                self.write_back_page(mem, page);
            }
            if !self.pages.contains_key(&page) {
                while self.pages.len() >= MAX_DIRTY_PAGES {
                    let Some(old) = self.order.pop_front() else {
                        break;
                    };
                    self.write_back_page(mem, old);
                }
                let whole = data.get(done..done + L2_PAGE).filter(|_| n == L2_PAGE);
                let data = match (self.pool.pop(), whole) {
                    (Some(b), _) => b,
                    // A fresh buffer filled by the copy itself (no zeroing first).
                    (None, Some(src)) => {
                        Box::<[u8; L2_PAGE]>::try_from(src.to_vec().into_boxed_slice())
                            .unwrap_or_else(|_| Box::new([0u8; L2_PAGE]))
                    }
                    (None, None) => Box::new([0u8; L2_PAGE]),
                };
                self.pages.insert(
                    page,
                    Dirty {
                        gpu,
                        data,
                        mask: [0; MASK_WORDS],
                    },
                );
                self.order.push_back(page);
                if self.order.len() > 2 * MAX_DIRTY_PAGES {
                    self.compact();
                }
            }
            if let (Some(d), Some(src)) = (self.pages.get_mut(&page), data.get(done..done + n)) {
                if let Some(dst) = d.data.get_mut(in_page..in_page + n) {
                    dst.copy_from_slice(src);
                }
                d.mark(in_page, n, true);
            }
        }
    }

    /// Drops the entries of `order` whose page is clean now, and all but the newest of a
    /// page's entries (a page cleaned by write-through writes and dirtied again gets a new
    /// one), so `order` stays bounded by the dirty pages.
    fn compact(&mut self) {
        let mut seen = std::collections::HashSet::new();
        let mut kept: Vec<usize> = self
            .order
            .iter()
            .rev()
            .copied()
            .filter(|p| self.pages.contains_key(p) && seen.insert(*p))
            .collect();
        kept.reverse();
        self.order = kept.into();
    }

    /// What GPU `gpu` reads at `off`: `buf` holds memory's bytes; the bytes its L2 holds dirty
    /// replace them (only the mask words the read covers are looked at).
    pub(super) fn overlay(&self, gpu: u32, off: u64, buf: &mut [u8]) {
        for (page, in_page, n, done) in pieces(off, buf.len()) {
            let Some(d) = self.pages.get(&page).filter(|d| d.gpu == gpu) else {
                continue;
            };
            let end = in_page + n;
            let mut i = in_page;
            while let Some(a) = d.next(i, true).filter(|&a| a < end) {
                let b = d.next(a, false).unwrap_or(L2_PAGE).min(end);
                if let (Some(dst), Some(src)) = (
                    buf.get_mut(done + a - in_page..done + b - in_page),
                    d.data.get(a..b),
                ) {
                    dst.copy_from_slice(src);
                }
                i = b;
            }
        }
    }

    /// A write that went to memory past the L2 (a memory-controller destination): the bytes
    /// it covers are no longer dirty in any L2 (the L2 keeps coherent with its own
    /// write-through traffic), so a later write-back does not undo it.
    pub(super) fn clean(&mut self, off: u64, len: usize) {
        for (page, in_page, n, _) in pieces(off, len) {
            let now_clean = match self.pages.get_mut(&page) {
                Some(d) => {
                    d.mark(in_page, n, false);
                    d.is_clean()
                }
                None => false,
            };
            if now_clean && let Some(d) = self.pages.remove(&page) {
                self.recycle(d);
            }
        }
    }

    /// A write-back of GPU `gpu`'s L2: every page it holds dirty goes to memory.
    pub(super) fn write_back(&mut self, mem: &SharedMem, gpu: u32) {
        let order = core::mem::take(&mut self.order);
        let mut kept = VecDeque::new();
        for page in order {
            match self.pages.get(&page) {
                Some(d) if d.gpu == gpu => self.write_back_page(mem, page),
                Some(_) => kept.push_back(page),
                None => {}
            }
        }
        self.order = kept;
    }
}

#[cfg(test)]
mod tests {
    use super::{Dirty, L2_PAGE, MASK_WORDS, MAX_DIRTY_PAGES};
    use crate::mem::SharedMem;

    fn dirty() -> Dirty {
        Dirty {
            gpu: 1,
            data: Box::new([0; L2_PAGE]),
            mask: [0; MASK_WORDS],
        }
    }

    #[test]
    fn runs_follow_the_mask() {
        let mut d = dirty();
        assert_eq!(d.runs().count(), 0);
        d.mark(3, 5, true);
        d.mark(60, 70, true);
        d.mark(4000, 96, true);
        let r: Vec<_> = d.runs().collect();
        assert_eq!(r, [(3, 5), (60, 70), (4000, 96)]);
        d.mark(64, 64, false);
        let r: Vec<_> = d.runs().collect();
        assert_eq!(r, [(3, 5), (60, 4), (128, 2), (4000, 96)]);
        d.mark(0, L2_PAGE, true);
        assert_eq!(d.runs().collect::<Vec<_>>(), [(0, L2_PAGE)]);
        d.mark(0, L2_PAGE, false);
        assert!(d.is_clean());
    }

    /// A BO the CPU mapped, L2-tracked; `mem.read` stands for a CPU read.
    fn bo(pages: usize) -> SharedMem {
        let m = SharedMem::new("l2-test", (pages * L2_PAGE) as u64).unwrap();
        m.l2_track();
        m
    }

    #[test]
    fn the_cpu_sees_gpu_writes_only_after_a_write_back() {
        let m = bo(2);
        assert!(m.write(0, &[7u8; 16]));
        assert!(m.gpu_write_cached(1, 4, &[9u8; 4]).is_some());
        let mut cpu = [0u8; 16];
        assert!(m.read(0, &mut cpu));
        assert_eq!(cpu, [7u8; 16], "memory holds the old bytes");
        let mut gpu = [0u8; 16];
        assert_eq!(m.gpu_read(Some(1), 0, &mut gpu, false), Ok(true));
        assert_eq!(&gpu[..8], &[7, 7, 7, 7, 9, 9, 9, 9], "the GPU reads its L2");
        // Another GPU reads memory.
        assert_eq!(m.gpu_read(Some(2), 0, &mut gpu, false), Ok(true));
        assert_eq!(gpu, [7u8; 16]);
        // A write-back of another GPU's L2 changes nothing.
        m.l2_writeback(2);
        assert!(m.read(0, &mut cpu));
        assert_eq!(cpu[4], 7);
        m.l2_writeback(1);
        assert!(m.read(0, &mut cpu));
        assert_eq!(&cpu[..8], &[7, 7, 7, 7, 9, 9, 9, 9]);
        assert!(!m.l2_dirty());
    }

    #[test]
    fn a_write_back_keeps_cpu_writes_to_clean_bytes_of_the_page() {
        let m = bo(1);
        assert!(m.gpu_write_cached(1, 100, &[1u8; 4]).is_some());
        // The CPU writes other bytes of the page meanwhile.
        assert!(m.write(0, &[5u8; 8]));
        m.l2_writeback(1);
        let mut cpu = [0u8; 104];
        assert!(m.read(0, &mut cpu));
        assert_eq!(&cpu[..8], &[5u8; 8]);
        assert_eq!(&cpu[100..104], &[1u8; 4]);
    }

    #[test]
    fn a_write_through_is_not_undone_by_a_later_write_back() {
        let m = bo(1);
        assert!(m.gpu_write_cached(1, 0, &[1u8; 8]).is_some());
        assert!(m.gpu_write(0, &[2u8; 4]));
        let mut cpu = [0u8; 8];
        assert!(m.read(0, &mut cpu));
        assert_eq!(cpu, [2, 2, 2, 2, 0, 0, 0, 0]);
        m.l2_writeback(1);
        assert!(m.read(0, &mut cpu));
        assert_eq!(cpu, [2, 2, 2, 2, 1, 1, 1, 1]);
    }

    #[test]
    fn capacity_evicts_the_oldest_page() {
        let m = bo(MAX_DIRTY_PAGES + 1);
        for p in 0..=MAX_DIRTY_PAGES {
            assert!(
                m.gpu_write_cached(1, (p * L2_PAGE) as u64, &[3u8; 8])
                    .is_some()
            );
        }
        let mut cpu = [0u8; 8];
        assert!(m.read(0, &mut cpu));
        assert_eq!(cpu, [3u8; 8], "the first page was evicted to memory");
        assert!(m.read((MAX_DIRTY_PAGES * L2_PAGE) as u64, &mut cpu));
        assert_eq!(cpu, [0u8; 8], "the last one is still in the L2");
    }

    #[test]
    fn the_eviction_order_stays_bounded_when_pages_are_cleaned_and_dirtied_again() {
        let m = bo(2);
        for _ in 0..4 * MAX_DIRTY_PAGES {
            assert!(m.gpu_write_cached(1, 0, &[1u8; 4]).is_some());
            // A write-through of the same bytes cleans the page.
            assert!(m.gpu_write(0, &[2u8; 4]));
            assert!(m.gpu_write_cached(1, L2_PAGE as u64, &[1u8; 4]).is_some());
        }
        let l2 = m.l2.lock().unwrap();
        assert!(
            l2.order.len() <= 2 * MAX_DIRTY_PAGES + 1,
            "{}",
            l2.order.len()
        );
        assert_eq!(l2.dirty_pages(), 1);
    }

    /// 16 MiB copied into a tracked BO in 1 MiB chunks (more than the L2 holds: the oldest
    /// pages are evicted on the way), then written back: nothing stays dirty. Also the cost
    /// probe the README's numbers come from (run it under callgrind in release).
    #[test]
    fn l2_cost_probe() {
        let m = bo(4096);
        let chunk = vec![7u8; 1 << 20];
        for i in 0..16u64 {
            assert!(m.gpu_write_cached(1, i << 20, &chunk).is_some());
        }
        m.l2_writeback(1);
        assert!(!m.l2_dirty());
    }

    #[test]
    fn mtype_per_family() {
        use super::l2_caches;
        use hcq_core::kfd::{
            KFD_IOC_ALLOC_MEM_FLAGS_COHERENT as C, KFD_IOC_ALLOC_MEM_FLAGS_GTT as GTT,
            KFD_IOC_ALLOC_MEM_FLAGS_UNCACHED as U,
        };
        for v in [90010, 90402, 100300, 110000, 120001] {
            assert!(l2_caches(v, GTT), "{v}: NC/RW by default");
            assert!(
                !l2_caches(v, GTT | U | C),
                "{v}: the driver's uncached signal memory"
            );
        }
        assert!(!l2_caches(110000, GTT | C));
        assert!(
            l2_caches(120001, GTT | C),
            "gfx12: only UNCACHED is MTYPE_UC"
        );
    }

    #[test]
    fn untracked_memory_is_written_at_once() {
        let m = SharedMem::new("l2-off", L2_PAGE as u64).unwrap();
        assert!(m.gpu_write_cached(1, 0, &[4u8; 4]).is_some());
        let mut cpu = [0u8; 4];
        assert!(m.read(0, &mut cpu));
        assert_eq!(cpu, [4u8; 4]);
    }
}
