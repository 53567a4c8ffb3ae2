//! The HDP model's pre-images: each page as GPU engines see it, kept at the CPU's first write
//! to it since the last flush.

#[allow(clippy::wildcard_imports)]
use super::*;

/// Most pre-image slots one simulator holds at once: the slots are the process's, and test
/// threads run several simulators at once; without a share each, one test writing a large
/// buffer could leave another's pages unchecked (their writes lost to the HDP model).
pub(super) const IMAGES_PER_OWNER: usize = IMAGES / 8;

/// How many pre-image slots regions of `owner` hold.
pub(super) fn images_held(_: &Held, owner: u64) -> usize {
    IMAGE_TABLE
        .iter()
        .filter(|m| {
            m.full.load(Ordering::Relaxed) != 0
                && REGION_TABLE
                    .get(m.region.load(Ordering::Relaxed))
                    .is_some_and(|r| r.owner.load(Ordering::Relaxed) == owner)
        })
        .count()
}

/// Whether page `i` of HDP-tracked region `r` holds only zeros (read from the simulator's own
/// mapping).
pub(super) fn page_is_zero(_: &Held, r: &Region, i: usize) -> bool {
    let base = r.sim_base.load(Ordering::Relaxed);
    let words = r
        .sim_len
        .load(Ordering::Relaxed)
        .saturating_sub(i * PAGE as usize)
        .min(PAGE as usize)
        / 8;
    (0..words).all(|k| {
        // SAFETY: inside the simulator's own read-write mapping of the buffer (`sim_len` bytes
        // from `sim_base`, alive while the region is registered), 8-byte aligned
        // (page-aligned base); read atomically, as every access to it is.
        unsafe {
            (*core::ptr::with_exposed_provenance::<AtomicU64>(base + i * PAGE as usize + k * 8))
                .load(Ordering::Relaxed)
        }
    } == 0)
}

/// Copies page `i` of HDP-tracked region `r` (index `ri`) into a free pre-image slot, from
/// the simulator's own mapping; `false` when no slot is free or the region's simulator holds
/// its share ([`IMAGES_PER_OWNER`]).
pub(super) fn capture(held: &Held, ri: usize, r: &Region, i: usize) -> bool {
    if images_held(held, r.owner.load(Ordering::Relaxed)) >= IMAGES_PER_OWNER {
        return false;
    }
    let Some(img) = IMAGE_TABLE.iter().find(|m| {
        m.full
            .compare_exchange(0, 2, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }) else {
        return false;
    };
    img.region.store(ri, Ordering::Relaxed);
    img.start
        .store(r.start.load(Ordering::Relaxed), Ordering::Relaxed);
    img.flushes
        .store(r.flushes.load(Ordering::Relaxed), Ordering::Relaxed);
    img.page.store(i, Ordering::Relaxed);
    let base = r.sim_base.load(Ordering::Relaxed);
    let words = r
        .sim_len
        .load(Ordering::Relaxed)
        .saturating_sub(i * PAGE as usize)
        .min(PAGE as usize)
        / 8;
    for (k, w) in img.data.iter().enumerate() {
        let v = if k < words {
            // SAFETY: inside the simulator's own read-write mapping of the buffer (`sim_len`
            // bytes from `sim_base`, alive while the region is registered), 8-byte aligned
            // (page-aligned base); read atomically, as every access to it is.
            unsafe {
                (*core::ptr::with_exposed_provenance::<AtomicU64>(base + i * PAGE as usize + k * 8))
                    .load(Ordering::Relaxed)
            }
        } else {
            0
        };
        w.store(v, Ordering::Relaxed);
    }
    img.full.store(1, Ordering::Release);
    true
}

/// Region `ri` (mapped at `start`) of a buffer that had an HDP flush: what the CPU wrote is
/// visible to GPU engines now, so every page is clean again (read-only, unless a doorbell
/// guards it) and pre-images taken before are void. The caller holds the buffer's HDP lock.
pub(crate) fn hdp_flushed(ri: usize, start: u64) {
    let held = lock();
    let Some(r) = REGION_TABLE.get(ri) else {
        return;
    };
    if r.kind.load(Ordering::Relaxed) != DATA || r.start.load(Ordering::Relaxed) != start {
        return;
    }
    r.flushes.fetch_add(1, Ordering::Relaxed);
    if r.images.swap(false, Ordering::Relaxed) {
        WITH_IMAGES.fetch_sub(1, Ordering::Relaxed);
        for m in &IMAGE_TABLE {
            if m.full.load(Ordering::Relaxed) == 1 && m.region.load(Ordering::Relaxed) == ri {
                m.full.store(0, Ordering::Release);
            }
        }
    }
    if !r.dirty_any.swap(false, Ordering::Relaxed) {
        return;
    }
    let mut i = 0;
    while let Some(st) = page_state(&held, r, i) {
        let s0 = st.load(Ordering::Relaxed);
        if s0 & DIRTY != 0 {
            st.store(s0 & EPOCH, Ordering::Relaxed);
        }
        i += 1;
    }
    apply_prots(&held, r, start);
}

/// Whether any region has pre-images to take (one atomic load).
pub(crate) fn images_ready_anywhere() -> bool {
    WITH_IMAGES.load(Ordering::Acquire) != 0
}

/// Whether region `ri` has pre-images to take (one atomic load: checked on every GPU access
/// of a guarded VRAM buffer).
pub(crate) fn images_ready(ri: usize) -> bool {
    WITH_IMAGES.load(Ordering::Acquire) != 0
        && REGION_TABLE
            .get(ri)
            .is_some_and(|r| r.images.load(Ordering::Acquire))
}

/// A page the CPU wrote after the last HDP flush: its index, and what the GPU sees of it
/// (`None`: no pre-image slot was free, what it held is unknown).
pub(crate) type PreImage = (usize, Option<Box<[u8; PAGE as usize]>>);

/// The pre-images of region `ri` (mapped at `start`) taken since the last call or flush.
/// The caller holds the buffer's HDP lock (so no flush slips in between).
pub(crate) fn take_images(ri: usize, start: u64) -> Vec<PreImage> {
    let Some(r) = REGION_TABLE.get(ri) else {
        return Vec::new();
    };
    // Allocated before the flag: room for a mark on every page (lost or zeroed pre-images),
    // and the claimed slots as a bit set.
    let mut marks: Vec<(usize, bool)> = Vec::with_capacity(2 * r.npages.load(Ordering::Relaxed));
    let mut claimed = [0u64; IMAGES / 64];
    let held = lock();
    if r.kind.load(Ordering::Relaxed) != DATA
        || r.start.load(Ordering::Relaxed) != start
        || !r.images.swap(false, Ordering::Relaxed)
    {
        return Vec::new();
    }
    WITH_IMAGES.fetch_sub(1, Ordering::Relaxed);
    let flushes = r.flushes.load(Ordering::Relaxed);
    for (k, m) in IMAGE_TABLE.iter().enumerate() {
        if m.full.load(Ordering::Acquire) != 1 || m.region.load(Ordering::Relaxed) != ri {
            continue;
        }
        if m.flushes.load(Ordering::Relaxed) == flushes {
            m.full.store(CLAIMED, Ordering::Relaxed);
            claimed[k / 64] |= 1 << (k % 64);
        } else {
            m.full.store(0, Ordering::Release);
        }
    }
    let mut i = 0;
    let mut more = false;
    while let Some(st) = page_state(&held, r, i) {
        let s0 = st.load(Ordering::Relaxed);
        if s0 & (LOST | ZEROED) != 0 {
            if marks.len() + 2 > marks.capacity() {
                // No room without allocating: the rest wait for the next call.
                more = true;
                break;
            }
            if s0 & LOST != 0 {
                st.store(s0 & !LOST, Ordering::Relaxed);
                marks.push((i, false));
            }
            if s0 & ZEROED != 0 {
                st.store(s0 & !(ZEROED | LOST), Ordering::Relaxed);
                marks.push((i, true));
            }
        }
        i += 1;
    }
    if more && !r.images.swap(true, Ordering::Relaxed) {
        WITH_IMAGES.fetch_add(1, Ordering::Release);
    }
    drop(held);
    let mut out = Vec::with_capacity(marks.len());
    for (k, m) in IMAGE_TABLE.iter().enumerate() {
        if claimed[k / 64] & (1 << (k % 64)) == 0 {
            continue;
        }
        let mut b = Box::new([0u8; PAGE as usize]);
        for (d, w) in b.chunks_exact_mut(8).zip(&m.data) {
            d.copy_from_slice(&w.load(Ordering::Relaxed).to_le_bytes());
        }
        out.push((m.page.load(Ordering::Relaxed), Some(b)));
        // A claimed slot is ours alone (the handler takes free ones).
        m.full.store(0, Ordering::Release);
    }
    out.extend(
        marks
            .into_iter()
            .map(|(i, zeroed)| (i, zeroed.then(|| Box::new([0u8; PAGE as usize])))),
    );
    out
}

impl HostGuard {
    /// Whether some buffer of this simulator has pre-images to deliver ([`take_images`]).
    pub(crate) fn images_pending(&self) -> bool {
        self.on()
            && live_regions().iter().any(|r| {
                r.owner.load(Ordering::Relaxed) == self.owner && r.images.load(Ordering::Relaxed)
            })
    }
}
