//! The HDP model: what GPU engines see of VRAM the process mapped for the CPU.
//!
//! CPU writes through the process mapping land in the memfd at once, but reach GPU engines
//! only at an HDP flush. [`HdpView`] keeps, per 4 KiB page, what GPU engines see and the flush
//! generation that view was taken in. A page taken whole (a GPU engine wrote or read all of
//! it: copies into a BO, kernel outputs) is kept as a 64-bit hash of its bytes, with no copy
//! and no allocation; fresh memory costs ~1 ms per MiB to fault in on this kind of VM, which
//! made a per-page copy the whole cost of a copy into a fresh BO. A page first taken by a
//! partial access (kernargs, a ring) keeps a copy of its bytes, so a stale read is found to
//! the byte. A hashed page read in part becomes a copy after memory is checked against the
//! hash.
//!
//! A page's view is valid for the generation it was taken in. An HDP flush refreshes the
//! pages GPU engines touched since the previous flush (cost: those pages, not the BO, in runs
//! of adjacent pages) and lets every other page lapse; a lapsed page is taken afresh from
//! memory at its next GPU access. So a CPU write that lands after the GPU touched a page, with
//! no flush in between, is seen (the launch bug: the next kernargs share the page of the last
//! ones); a CPU write before the page's first GPU access after a flush is not (documented in
//! the sim README).

use super::SharedMem;

/// Granule of the GPU-visible view.
pub(super) const HDP_PAGE: usize = 4096;

/// A GPU read of bytes the CPU wrote through its VRAM mapping after the last HDP flush.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct HdpStale {
    /// Byte offset (in the BO) of the first such byte.
    pub off: u64,
}

/// A 64-bit hash of a page's bytes. Each of four lanes is a chain of `(h ^ word) * odd`, a
/// bijection of `h` for a fixed word, so a change of any single word (or byte) always changes
/// the hash; lanes combine by rotate-and-xor, injective in each lane.
fn page_hash(b: &[u8]) -> u64 {
    const P: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut acc = [1u64, 2, 3, 4];
    let mut chunks = b.chunks_exact(32);
    for c in &mut chunks {
        for (a, w) in acc.iter_mut().zip(c.chunks_exact(8)) {
            let mut v = [0u8; 8];
            v.copy_from_slice(w);
            *a = (*a ^ u64::from_le_bytes(v)).wrapping_mul(P);
        }
    }
    for &x in chunks.remainder() {
        acc[0] = (acc[0] ^ u64::from(x)).wrapping_mul(P);
    }
    // CAST: usize -> u64 widens.
    acc[0]
        ^ acc[1].rotate_left(16)
        ^ acc[2].rotate_left(32)
        ^ acc[3].rotate_left(48)
        ^ b.len() as u64
}

/// One page's view.
#[derive(Debug, Default)]
enum View {
    /// Never taken.
    #[default]
    Never,
    /// The page was last taken from a whole-page GPU write or read: what the GPU sees is what
    /// memory held then, kept as its hash (no copy, no allocation: a copy into a fresh BO pays
    /// nothing per page but the hash). A partial access turns it into `Full` after checking
    /// memory against the hash.
    Hashed(u64),
    /// The GPU-visible bytes (the page was first taken by a partial access: kernargs).
    Full(Box<[u8; HDP_PAGE]>),
}

/// What GPU engines see of one BO behind the HDP, page by page.
#[derive(Debug)]
pub(super) struct HdpView {
    /// The current flush generation (starts at 1; 0 marks a page never taken).
    generation: u64,
    /// Per page: the generation its view was taken in, and the view.
    pages: Vec<(u64, View)>,
    /// Pages taken in the current generation, in the order taken.
    touched: Vec<usize>,
    /// Bytes of the BO (the last page may be partial).
    len: usize,
}

/// Whether memory's page `page` (`n` bytes) still hashes to `h`.
fn mem_matches(mem: &SharedMem, page: usize, n: usize, h: u64) -> bool {
    let mut b = [0u8; HDP_PAGE];
    let b = b.get_mut(..n).unwrap_or_default();
    // CAST: usize -> u64 widens.
    mem.read((page * HDP_PAGE) as u64, b) && page_hash(b) == h
}

impl HdpView {
    /// A view of a BO of `len` bytes; no page is taken yet.
    pub(super) fn new(len: usize) -> Self {
        let mut pages = Vec::new();
        pages.resize_with(len.div_ceil(HDP_PAGE), <(u64, View)>::default);
        Self {
            generation: 1,
            pages,
            touched: Vec::new(),
            len,
        }
    }

    /// Bytes of page `page` inside the BO.
    fn page_len(&self, page: usize) -> usize {
        self.len.saturating_sub(page * HDP_PAGE).min(HDP_PAGE)
    }

    /// Takes page `page`'s view from memory as it is now.
    fn take(mem: &SharedMem, page: usize, n: usize, view: &mut View) {
        let mut b = [0u8; HDP_PAGE];
        // CAST: usize -> u64 widens.
        if !mem.read((page * HDP_PAGE) as u64, b.get_mut(..n).unwrap_or_default()) {
            return;
        }
        match view {
            View::Full(f) => **f = b,
            View::Never | View::Hashed(_) => {
                *view = View::Hashed(page_hash(b.get(..n).unwrap_or_default()))
            }
        }
    }

    /// An HDP flush: the pages taken since the last flush take their current bytes from
    /// `mem` as what the GPU sees; every other page lapses.
    pub(super) fn flush(&mut self, mem: &SharedMem) {
        // Cost: one read (and a hash, or a copy) of each touched page; a 4 MiB copy into a BO
        // is followed by one flush that reads its 1024 pages once.
        self.generation += 1;
        let g = self.generation;
        let touched = core::mem::take(&mut self.touched);
        for &page in &touched {
            let n = self.page_len(page);
            if let Some((t, view)) = self.pages.get_mut(page) {
                Self::take(mem, page, n, view);
                *t = g;
            }
        }
        self.touched = touched;
        self.touched.clear();
        // Refreshed pages belong to the new generation; they are touched again only when the
        // GPU takes them anew after the next flush, so the list starts empty.
    }

    /// The CPU wrote page `page` after the last flush (the host guard saw its first write):
    /// `data` is the page before that write, what GPU engines see. `None`: the guard had no
    /// room to keep it, so what the GPU sees of the page is unknown until the next flush; the
    /// page is then not checked (it lapses: the next GPU access takes memory as it is). Taking
    /// every read of it as stale instead made correct reads fault whenever other buffers (in
    /// this process: other simulators too) held the guard's slots. A page already taken in
    /// this generation keeps its view (it holds what the GPU saw, and the CPU's write differs
    /// from it already).
    pub(super) fn preimage(&mut self, page: usize, data: Option<&[u8]>) {
        let g = self.generation;
        let n = self.page_len(page);
        let Some((t, view)) = self.pages.get_mut(page) else {
            return;
        };
        if *t == g {
            return;
        }
        let Some(d) = data else {
            log::debug!("HDP: no pre-image slot for page {page}: not checked until the next flush");
            return;
        };
        *t = g;
        self.touched.push(page);
        let mut b = Box::new([0u8; HDP_PAGE]);
        if let (Some(dst), Some(src)) = (b.get_mut(..n), d.get(..n)) {
            dst.copy_from_slice(src);
        }
        *view = View::Full(b);
    }

    /// Page `page`'s view for an access of `n_acc` bytes at `in_page`: taken afresh (from
    /// `whole`, the page's current bytes when the access covers it, else from memory) when it
    /// lapsed. Returns the view and whether it was taken afresh; `None` beyond the BO.
    fn page(
        &mut self,
        mem: &SharedMem,
        page: usize,
        whole: Option<&[u8]>,
    ) -> Option<(&mut View, bool)> {
        let g = self.generation;
        let n = self.page_len(page);
        let (t, view) = self.pages.get_mut(page)?;
        let fresh = *t != g;
        if fresh {
            *t = g;
            self.touched.push(page);
            match whole {
                Some(src) => match view {
                    View::Full(f) => f.get_mut(..n)?.copy_from_slice(src),
                    View::Never | View::Hashed(_) => *view = View::Hashed(page_hash(src)),
                },
                None => {
                    if matches!(view, View::Never) {
                        *view = View::Full(Box::new([0u8; HDP_PAGE]));
                    }
                    Self::take(mem, page, n, view);
                }
            }
        }
        Some((view, fresh))
    }
    /// Before a GPU write of `len` bytes at `off` reaches memory: a page kept as a hash that
    /// the write covers only in part becomes a copy of memory, if memory still matches the
    /// hash (else the CPU wrote the page since the GPU saw it, and it stays stale).
    pub(super) fn before_write(&mut self, mem: &SharedMem, off: u64, len: usize) {
        let mut done = 0usize;
        while done < len {
            // CAST: usize -> u64 widens.
            let a = off + done as u64;
            // CAST: offsets are inside a usize-sized mapping (checked by the caller).
            let (page, in_page) = (
                (a / HDP_PAGE as u64) as usize,
                (a % HDP_PAGE as u64) as usize,
            );
            let n = (HDP_PAGE - in_page).min(len - done);
            let pn = self.page_len(page);
            let g = self.generation;
            if let Some((t, view)) = self.pages.get_mut(page)
                && *t == g
                && n != pn
                && let View::Hashed(h) = *view
                && mem_matches(mem, page, pn, h)
            {
                *view = View::Full(Box::new([0u8; HDP_PAGE]));
                Self::take(mem, page, pn, view);
            }
            done += n;
        }
    }

    /// Checks a GPU read of `buf` at `off`, which holds memory's current bytes: `Err` at the
    /// first byte that differs from what the GPU may see; with `relaxed`, such bytes are
    /// replaced by their GPU-visible (old) value instead. A page kept as a hash has no old
    /// bytes: a read of it after a CPU write to any of its bytes is `Err` at the read's first
    /// byte in the page, relaxed or not.
    pub(super) fn read(
        &mut self,
        mem: &SharedMem,
        off: u64,
        buf: &mut [u8],
        relaxed: bool,
    ) -> Result<(), HdpStale> {
        let mut done = 0usize;
        while done < buf.len() {
            // CAST: usize -> u64 widens.
            let a = off + done as u64;
            // CAST: offsets are inside a usize-sized mapping (checked by the caller's read).
            let (page, in_page) = (
                (a / HDP_PAGE as u64) as usize,
                (a % HDP_PAGE as u64) as usize,
            );
            let n = (HDP_PAGE - in_page).min(buf.len() - done);
            let pn = self.page_len(page);
            let got = buf.get_mut(done..done + n).unwrap_or_default();
            let whole = (n == pn).then_some(&*got);
            match self.page(mem, page, whole) {
                Some((View::Full(seen), false)) => {
                    let seen = seen.get(in_page..in_page + n).unwrap_or_default();
                    // Compare whole slices first (memcmp); find the byte only when they differ.
                    if seen != &*got
                        && let Some(i) = seen.iter().zip(got.iter()).position(|(x, y)| x != y)
                    {
                        if relaxed {
                            got.copy_from_slice(seen);
                        } else {
                            // CAST: usize -> u64 widens.
                            return Err(HdpStale { off: a + i as u64 });
                        }
                    }
                }
                Some((view, false)) => {
                    let View::Hashed(h) = *view else {
                        done += n;
                        continue;
                    };
                    if whole.is_some() {
                        if page_hash(got) != h {
                            return Err(HdpStale { off: a });
                        }
                    } else if mem_matches(mem, page, pn, h) {
                        // Partial reads follow (a kernel's lanes): compare bytes from now on.
                        *view = View::Full(Box::new([0u8; HDP_PAGE]));
                        Self::take(mem, page, pn, view);
                    } else {
                        return Err(HdpStale { off: a });
                    }
                }
                _ => {}
            }
            done += n;
        }
        Ok(())
    }

    /// Records a GPU write of `data` at `off` (already in memory, after
    /// [`HdpView::before_write`]) in the GPU-visible view.
    pub(super) fn write(&mut self, mem: &SharedMem, off: u64, data: &[u8]) {
        let mut done = 0usize;
        while done < data.len() {
            // CAST: usize -> u64 widens.
            let a = off + done as u64;
            // CAST: as in `read`.
            let (page, in_page) = (
                (a / HDP_PAGE as u64) as usize,
                (a % HDP_PAGE as u64) as usize,
            );
            let n = (HDP_PAGE - in_page).min(data.len() - done);
            let src = data.get(done..done + n).unwrap_or_default();
            let whole = (n == self.page_len(page)).then_some(src);
            match self.page(mem, page, whole) {
                // Taken afresh from memory, which holds the write.
                Some((_, true)) | None => {}
                Some((View::Full(f), false)) => {
                    if let Some(dst) = f.get_mut(in_page..in_page + n) {
                        dst.copy_from_slice(src);
                    }
                }
                Some((view, false)) => {
                    if whole.is_some() {
                        *view = View::Hashed(page_hash(src));
                    }
                    // A partial write to a page still kept as a hash: memory no longer
                    // matched it before the write (see `before_write`), so it stays stale.
                }
            }
            done += n;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{HDP_PAGE, HdpStale, page_hash};
    use crate::mem::SharedMem;

    /// A tracked 3-page BO; `mem.write` stands for a CPU write through the process mapping.
    fn bo() -> SharedMem {
        let m = SharedMem::new("hdp-test", 3 * HDP_PAGE as u64).unwrap();
        m.hdp_track();
        m
    }

    #[test]
    fn hash_changes_with_any_single_byte() {
        let a = [7u8; HDP_PAGE];
        let h = page_hash(&a);
        for i in [0, 1, 31, 32, 4000, HDP_PAGE - 1] {
            let mut b = a;
            b[i] ^= 0x80;
            assert_ne!(page_hash(&b), h, "byte {i}");
        }
        assert_ne!(page_hash(&a[..100]), page_hash(&a[..101]));
    }

    #[test]
    fn cpu_write_after_a_whole_page_gpu_write_is_stale_until_a_flush() {
        let m = bo();
        assert!(m.gpu_write(0, &[1u8; HDP_PAGE]));
        assert!(m.write(100, &[9]));
        let mut b = [0u8; HDP_PAGE];
        assert_eq!(
            m.gpu_read(Some(1), 0, &mut b, false),
            Err(HdpStale { off: 0 })
        );
        // In part, too: the hash cannot tell which byte, so the read's first byte is named.
        let mut s = [0u8; 4];
        assert_eq!(
            m.gpu_read(Some(1), 8, &mut s, false),
            Err(HdpStale { off: 8 })
        );
        m.hdp_flush();
        assert_eq!(m.gpu_read(Some(1), 0, &mut b, false), Ok(true));
        assert_eq!(b[100], 9);
    }

    #[test]
    fn a_copied_page_names_the_stale_byte_and_relaxed_reads_the_old_one() {
        let m = bo();
        // First taken by a partial access: a copy of the page's bytes.
        assert!(m.gpu_write(HDP_PAGE as u64, &[5u8; 16]));
        assert!(m.write(HDP_PAGE as u64 + 40, &[6, 6]));
        let mut s = [0u8; 8];
        // Bytes the CPU did not write read fine.
        assert_eq!(
            m.gpu_read(Some(1), HDP_PAGE as u64, &mut s, false),
            Ok(true)
        );
        let mut t = [0u8; 8];
        assert_eq!(
            m.gpu_read(Some(1), HDP_PAGE as u64 + 36, &mut t, false),
            Err(HdpStale {
                off: HDP_PAGE as u64 + 40
            })
        );
        assert_eq!(
            m.gpu_read(Some(1), HDP_PAGE as u64 + 36, &mut t, true),
            Ok(true)
        );
        assert_eq!(t, [0; 8]);
    }

    #[test]
    fn a_flush_pins_the_touched_pages_so_a_later_cpu_write_is_stale() {
        let m = bo();
        let mut b = [0u8; HDP_PAGE];
        assert_eq!(m.gpu_read(Some(1), 0, &mut b, false), Ok(true));
        m.hdp_flush();
        // The launch bug: the next kernargs land in the page the last launch read.
        assert!(m.write(64, &[1]));
        assert_eq!(
            m.gpu_read(Some(1), 0, &mut b, false),
            Err(HdpStale { off: 0 })
        );
        let mut s = [0u8; 4];
        assert_eq!(
            m.gpu_read(Some(1), 64, &mut s, false),
            Err(HdpStale { off: 64 })
        );
    }

    #[test]
    fn a_partial_gpu_write_keeps_a_hashed_page_checked() {
        let m = bo();
        assert!(m.gpu_write(0, &[1u8; HDP_PAGE]));
        // Clean: the page becomes a copy and the write lands in it.
        assert!(m.gpu_write(8, &[2u8; 8]));
        let mut b = [0u8; HDP_PAGE];
        assert_eq!(m.gpu_read(Some(1), 0, &mut b, false), Ok(true));
        assert_eq!(&b[8..16], &[2u8; 8]);
        // CPU write, then a partial GPU write elsewhere in a hashed page: still stale.
        assert!(m.gpu_write(2 * HDP_PAGE as u64, &[1u8; HDP_PAGE]));
        assert!(m.write(2 * HDP_PAGE as u64 + 500, &[3]));
        assert!(m.gpu_write(2 * HDP_PAGE as u64, &[4u8; 8]));
        let mut s = [0u8; 4];
        assert!(
            m.gpu_read(Some(1), 2 * HDP_PAGE as u64 + 100, &mut s, false)
                .is_err()
        );
        m.hdp_flush();
        assert_eq!(
            m.gpu_read(Some(1), 2 * HDP_PAGE as u64 + 100, &mut s, false),
            Ok(true)
        );
    }

    #[test]
    fn a_preimage_makes_a_cpu_write_before_the_first_gpu_access_stale() {
        // The host guard saw the CPU's first write to page 1 after the flush and kept the page
        // as it was: the GPU sees that, and the written byte is named.
        let m = bo();
        let before = [0u8; HDP_PAGE];
        assert!(m.write(HDP_PAGE as u64 + 77, &[5]));
        m.hdp().as_mut().unwrap().preimage(1, Some(&before[..]));
        let mut s = [0u8; 128];
        assert_eq!(
            m.gpu_read(Some(1), HDP_PAGE as u64, &mut s, false),
            Err(HdpStale {
                off: HDP_PAGE as u64 + 77
            })
        );
        // No pre-image (the guard had no room): what the GPU sees of the page is unknown, so
        // it is not checked until the next flush (a correct read must never fault), and the
        // read sees memory.
        assert!(m.write(2 * HDP_PAGE as u64 + 9, &[1]));
        m.hdp().as_mut().unwrap().preimage(2, None);
        let mut t = [0u8; 4];
        assert_eq!(
            m.gpu_read(Some(1), 2 * HDP_PAGE as u64 + 8, &mut t, false),
            Ok(true)
        );
        assert_eq!(t, [0, 1, 0, 0]);
        // The flush makes both visible.
        m.hdp_flush();
        assert_eq!(
            m.gpu_read(Some(1), HDP_PAGE as u64, &mut s, false),
            Ok(true)
        );
        assert_eq!(s[77], 5);
        assert_eq!(
            m.gpu_read(Some(1), 2 * HDP_PAGE as u64 + 1000, &mut t, false),
            Ok(true)
        );
    }

    #[test]
    fn a_cpu_write_before_the_first_gpu_access_after_a_flush_is_not_seen() {
        // The view's own limit, which the host guard's pre-images lift for the process's
        // writes (`preimage`): a lapsed page is taken afresh at its next GPU access.
        let m = bo();
        assert!(m.write(0, &[8]));
        let mut s = [0u8; 4];
        assert_eq!(m.gpu_read(Some(1), 0, &mut s, false), Ok(true));
        assert_eq!(s[0], 8);
    }
}
