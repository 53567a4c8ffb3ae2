//! The fixed tables every simulator of the process shares (guarded regions, doorbell cells,
//! records, pre-images), the spin flag over them, and the protection of regions.

#[allow(clippy::wildcard_imports)]
use super::*;

pub(super) const PAGE: u64 = 4096;
/// Guarded mappings, all simulators of the process together.
pub(super) const REGIONS: usize = 1024;
/// Queue doorbells whose value a record snapshots.
pub(super) const CELLS: usize = 128;
/// Records not yet collected.
pub(super) const SLOTS: usize = 64;

pub(super) const FREE: u8 = 0;
pub(super) const DATA: u8 = 1;
pub(super) const DOORBELL: u8 = 2;

pub(super) struct Region {
    pub(super) owner: AtomicU64,
    pub(super) kind: AtomicU8,
    /// Whether the whole region was protected (data: `PROT_NONE`, doorbells: read-only) since
    /// it was last opened.
    pub(super) guarded: AtomicBool,
    pub(super) start: AtomicU64,
    pub(super) len: AtomicU64,
    /// The buffer's GPU virtual address (data regions).
    pub(super) va: AtomicU64,
    /// HDP tracking (VRAM behind the HDP): the simulator's own mapping of the buffer (0: not
    /// tracked) and its length, and one state per page ([`DIRTY`], [`LOST`], the race epoch
    /// the page was opened in).
    pub(super) sim_base: AtomicUsize,
    pub(super) sim_len: AtomicUsize,
    pub(super) pages: AtomicPtr<AtomicU32>,
    pub(super) npages: AtomicUsize,
    /// Bumped whenever a doorbell guards the region whole.
    pub(super) epoch: AtomicU32,
    /// HDP flushes of the buffer so far (a pre-image taken before the last one is void).
    pub(super) flushes: AtomicU64,
    /// Some page is dirty or lost since the last flush / has a pre-image to deliver.
    pub(super) dirty_any: AtomicBool,
    /// Some page was opened since the region was last made inaccessible whole.
    pub(super) opened: AtomicBool,
    pub(super) images: AtomicBool,
    /// Records of accesses to this region lost because every slot was full (moved into the
    /// owner's count when the region is unregistered).
    pub(super) dropped: AtomicU64,
    /// Pages opened one by one since the region was last made inaccessible whole (their
    /// addresses; a count past [`OPEN_LIST`] means "too many, protect it whole"): the next
    /// doorbell makes only these inaccessible again, not the whole mapping, whose cost grows
    /// with its resident pages.
    pub(super) open_n: AtomicUsize,
    pub(super) open_at: [AtomicU64; OPEN_LIST],
}

/// Pages a region remembers as opened one by one (see [`Region::open_at`]).
pub(super) const OPEN_LIST: usize = 16;

/// A page the CPU wrote since the last HDP flush (write faults no longer see it).
pub(super) const DIRTY: u32 = 1 << 31;
/// A dirty page whose pre-image found no free slot (not checked until the next flush).
pub(super) const LOST: u32 = 1 << 30;
/// A dirty page whose pre-image is all zeros (a fresh buffer's first write, e.g. a driver
/// touching every page of a new arena): kept as this bit, not in a slot.
pub(super) const ZEROED: u32 = 1 << 29;
pub(super) const EPOCH: u32 = ZEROED - 1;

/// Pre-images: what the GPU sees of a page the CPU wrote after the last HDP flush (the page
/// as it was at the CPU's first write since the flush). Shared by every simulator of the
/// process (test threads run many at once): 16 MiB of address space, resident only as used.
pub(super) const IMAGES: usize = 4096;
pub(super) const WORDS: usize = PAGE as usize / 8;

pub(super) struct Image {
    /// 0 free, 1 filled, 2 being filled.
    pub(super) full: AtomicU8,
    pub(super) region: AtomicUsize,
    pub(super) start: AtomicU64,
    pub(super) flushes: AtomicU64,
    pub(super) page: AtomicUsize,
    pub(super) data: [AtomicU64; WORDS],
}

pub(super) struct Cell {
    pub(super) owner: AtomicU64,
    /// `gpu_id << 32 | doorbell byte offset`.
    pub(super) key: AtomicU64,
    /// The simulator's own mapping of the doorbell (never protected).
    pub(super) addr: AtomicUsize,
}

pub(super) struct Slot {
    /// 0 free, 1 filled.
    pub(super) full: AtomicU8,
    pub(super) owner: AtomicU64,
    pub(super) addr: AtomicU64,
    /// 0 read, 1 write.
    pub(super) write: AtomicU8,
    pub(super) vals: [AtomicU64; CELLS],
}

#[allow(clippy::declare_interior_mutable_const)]
pub(super) const REGION: Region = Region {
    owner: AtomicU64::new(0),
    kind: AtomicU8::new(FREE),
    guarded: AtomicBool::new(false),
    start: AtomicU64::new(0),
    len: AtomicU64::new(0),
    va: AtomicU64::new(0),
    sim_base: AtomicUsize::new(0),
    sim_len: AtomicUsize::new(0),
    pages: AtomicPtr::new(core::ptr::null_mut()),
    npages: AtomicUsize::new(0),
    epoch: AtomicU32::new(1),
    flushes: AtomicU64::new(0),
    dirty_any: AtomicBool::new(false),
    opened: AtomicBool::new(false),
    images: AtomicBool::new(false),
    dropped: AtomicU64::new(0),
    open_n: AtomicUsize::new(0),
    open_at: [ZERO; OPEN_LIST],
};
#[allow(clippy::declare_interior_mutable_const)]
pub(super) const CELL: Cell = Cell {
    owner: AtomicU64::new(0),
    key: AtomicU64::new(0),
    addr: AtomicUsize::new(0),
};
#[allow(clippy::declare_interior_mutable_const)]
pub(super) const ZERO: AtomicU64 = AtomicU64::new(0);
#[allow(clippy::declare_interior_mutable_const)]
pub(super) const SLOT: Slot = Slot {
    full: AtomicU8::new(0),
    owner: AtomicU64::new(0),
    addr: AtomicU64::new(0),
    write: AtomicU8::new(0),
    vals: [ZERO; CELLS],
};

#[allow(clippy::declare_interior_mutable_const)]
pub(super) const IMAGE: Image = Image {
    full: AtomicU8::new(0),
    region: AtomicUsize::new(0),
    start: AtomicU64::new(0),
    flushes: AtomicU64::new(0),
    page: AtomicUsize::new(0),
    data: [ZERO; WORDS],
};

pub(super) static REGION_TABLE: [Region; REGIONS] = [REGION; REGIONS];
/// One past the highest region index in use: scans stop there (registration takes the lowest
/// free index, so a process with a few dozen mappings scans a few dozen entries, not
/// [`REGIONS`], on every fault).
pub(super) static REGIONS_USED: AtomicUsize = AtomicUsize::new(0);

/// Lowers [`REGIONS_USED`] past free entries at its end (after a region was freed).
pub(super) fn shrink_used(_: &Held) {
    let mut n = REGIONS_USED.load(Ordering::Relaxed).min(REGIONS);
    while n > 0
        && REGION_TABLE
            .get(n - 1)
            .is_some_and(|r| r.kind.load(Ordering::Relaxed) == FREE)
    {
        n -= 1;
    }
    REGIONS_USED.store(n, Ordering::Release);
}

/// The regions up to the highest one in use (entries in it may be free).
pub(super) fn live_regions() -> &'static [Region] {
    let n = REGIONS_USED.load(Ordering::Acquire).min(REGIONS);
    REGION_TABLE.get(..n).unwrap_or(&REGION_TABLE)
}
pub(super) static IMAGE_TABLE: [Image; IMAGES] = [IMAGE; IMAGES];
pub(super) static CELL_TABLE: [Cell; CELLS] = [CELL; CELLS];
pub(super) static SLOT_TABLE: [Slot; SLOTS] = [SLOT; SLOTS];
/// Records lost because every slot was full.
pub(super) static DROPPED: AtomicU64 = AtomicU64::new(0);
pub(super) static NEXT_OWNER: AtomicU64 = AtomicU64::new(1);
/// Faults the handler resolved, process-wide (a relax with none since the last one has
/// nothing to do).
pub(super) static RESOLVED: AtomicU64 = AtomicU64::new(0);
/// Regions with pre-images to deliver, process-wide (one load on every GPU access of a
/// guarded VRAM buffer while none is).
pub(super) static WITH_IMAGES: AtomicUsize = AtomicUsize::new(0);
/// The spin flag over the tables (held by the handler and by registration, never while
/// touching guarded memory).
pub(super) static LOCK: AtomicBool = AtomicBool::new(false);
/// The `sigaction` installed before ours (leaked once, read by the handler).
pub(super) static PREVIOUS: AtomicPtr<libc::sigaction> = AtomicPtr::new(core::ptr::null_mut());
pub(super) static INSTALLED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();

/// A slot or pre-image being read out by [`HostGuard::collect`] / [`take_images`] after the
/// spin flag was released (the handler takes only free ones: 0).
pub(super) const CLAIMED: u8 = 3;

/// The spin flag over the tables, held: only async-signal-safe work (atomics, `mprotect`, no
/// allocation, no free, no logging) happens while one lives. Functions that need the flag
/// take `&Held`; freeing a table entry's memory takes `&mut Held` (and hands the memory out
/// to be freed after the flag is released).
pub(super) struct Held(());

pub(super) fn lock() -> Held {
    while LOCK
        .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
        .is_err()
    {
        // Yield to the holder (it may be a descheduled thread in a few `mprotect`s):
        // sched_yield is async-signal-safe.
        // SAFETY: a system call without arguments.
        unsafe { libc::sched_yield() };
    }
    Held(())
}

impl Drop for Held {
    fn drop(&mut self) {
        LOCK.store(false, Ordering::Release);
    }
}

/// `mprotect(2)` of `[start, start + len)`; whether it succeeded.
///
/// # Safety
/// The range lies in a mapping the simulator made for the process (a registered region), in
/// which no Rust object lives: changing its protection affects only the host's accesses by
/// address, which this module's handler resolves.
pub(super) unsafe fn protect(start: u64, len: u64, prot: libc::c_int) -> bool {
    let (Ok(a), Ok(l)) = (usize::try_from(start), usize::try_from(len)) else {
        return false;
    };
    // SAFETY: as the function's contract says; mprotect is async-signal-safe (a system call).
    unsafe { libc::mprotect(core::ptr::without_provenance_mut::<c_void>(a), l, prot) == 0 }
}

pub(super) const RW: libc::c_int = libc::PROT_READ | libc::PROT_WRITE;

/// Sets every region of `owner` of `kind` that is not already so to `prot` (whole regions)
/// and marks them guarded (anything but read-write) or not.
pub(super) fn protect_all(_: &Held, owner: u64, kind: u8, prot: libc::c_int) -> bool {
    let mut ok = true;
    let want_guarded = prot != RW;
    for r in live_regions() {
        if r.owner.load(Ordering::Relaxed) == owner
            && r.kind.load(Ordering::Relaxed) == kind
            // Already so (a doorbell made read-only by an earlier fault of this epoch): no
            // system call.
            && r.guarded.load(Ordering::Relaxed) != want_guarded
        {
            let (s, l) = (
                r.start.load(Ordering::Relaxed),
                r.len.load(Ordering::Relaxed),
            );
            // SAFETY: a registered region: a mapping the simulator made (`register`).
            ok &= unsafe { protect(s, l, prot) };
            r.guarded.store(prot != RW, Ordering::Relaxed);
        }
    }
    ok
}

/// Page `i`'s state of an HDP-tracked region, borrowed for as long as the spin flag is held
/// (the states are freed only through [`take_pages`], which needs the flag exclusively).
pub(super) fn page_state<'h>(_: &'h Held, r: &Region, i: usize) -> Option<&'h AtomicU32> {
    let p = r.pages.load(Ordering::Relaxed);
    if p.is_null() || i >= r.npages.load(Ordering::Relaxed) {
        return None;
    }
    // SAFETY: `pages` is a leaked boxed slice of `npages` states, taken back only by
    // `take_pages` (which clears the pointer first and needs `&mut Held`, so no borrow of the
    // flag, and so no state this returns, is alive then).
    Some(unsafe { &*p.add(i) })
}

/// A region's page states, taken out of the table: dropped (freed) by the caller after it
/// released the spin flag.
pub(super) struct Pages(
    #[expect(dead_code, reason = "held only to be dropped")] Option<Box<[AtomicU32]>>,
);

/// Takes region `r`'s page states out of the table (the pointer cleared).
pub(super) fn take_pages(_: &mut Held, r: &Region) -> Pages {
    let p = r.pages.swap(core::ptr::null_mut(), Ordering::Relaxed);
    let n = r.npages.swap(0, Ordering::Relaxed);
    if p.is_null() {
        return Pages(None);
    }
    // SAFETY: the boxed slice `register` leaked (`n` states); the pointer is cleared, and
    // with the flag held exclusively no reference from `page_state` is alive.
    Pages(Some(unsafe {
        Box::from_raw(core::ptr::slice_from_raw_parts_mut(p, n))
    }))
}

/// Whether a page in state `st` is still guarded by the last doorbell (not opened since).
pub(super) fn race_guarded(r: &Region, st: u32) -> bool {
    r.guarded.load(Ordering::Relaxed) && st & EPOCH != r.epoch.load(Ordering::Relaxed) & EPOCH
}

/// What the host may do with a page of region `r` in state `st`.
pub(super) fn page_prot(r: &Region, st: u32) -> libc::c_int {
    if race_guarded(r, st) {
        libc::PROT_NONE
    } else if st & DIRTY == 0 {
        libc::PROT_READ
    } else {
        RW
    }
}

/// A doorbell was written: every data mapping of `owner` becomes inaccessible (a new race
/// epoch).
pub(super) fn guard_data(_: &Held, owner: u64) {
    for r in live_regions() {
        if r.owner.load(Ordering::Relaxed) == owner
            && r.kind.load(Ordering::Relaxed) == DATA
            // Not still inaccessible whole since the last doorbell (else nothing to do).
            && (!r.guarded.load(Ordering::Relaxed) || r.opened.load(Ordering::Relaxed))
        {
            let (s, l) = (
                r.start.load(Ordering::Relaxed),
                r.len.load(Ordering::Relaxed),
            );
            let n = r.open_n.swap(0, Ordering::Relaxed);
            let whole = !r.guarded.load(Ordering::Relaxed) || n > OPEN_LIST;
            r.epoch.fetch_add(1, Ordering::Relaxed);
            r.guarded.store(true, Ordering::Relaxed);
            r.opened.store(false, Ordering::Relaxed);
            if whole {
                // SAFETY: a registered region: a mapping the simulator made (`register`).
                unsafe { protect(s, l, libc::PROT_NONE) };
            } else {
                // Inaccessible whole since the last doorbell but for these pages: one page each.
                for a in r.open_at.iter().take(n) {
                    // SAFETY: a page of a registered region (recorded by `resolve`).
                    unsafe { protect(a.load(Ordering::Relaxed), PAGE, libc::PROT_NONE) };
                }
            }
        }
    }
}

/// Mappings at least this large open when nothing is queued (a host filling a large buffer
/// after a wait would take a fault per page); smaller ones (rings, signals, pointers) stay
/// guarded until the host touches them, which costs less than opening them whole each time.
pub(super) const OPEN_WHEN_IDLE: u64 = 1 << 20;

/// Nothing is queued: the large data mappings of `owner` open (HDP-tracked pages the CPU has
/// not written since the last flush stay read-only).
pub(super) fn open_data(held: &Held, owner: u64) {
    for r in live_regions() {
        if r.owner.load(Ordering::Relaxed) != owner
            || r.kind.load(Ordering::Relaxed) != DATA
            || !r.guarded.load(Ordering::Relaxed)
            || r.len.load(Ordering::Relaxed) < OPEN_WHEN_IDLE
        {
            continue;
        }
        r.guarded.store(false, Ordering::Relaxed);
        r.opened.store(true, Ordering::Relaxed);
        let (s, l) = (
            r.start.load(Ordering::Relaxed),
            r.len.load(Ordering::Relaxed),
        );
        if r.sim_base.load(Ordering::Relaxed) == 0 {
            // SAFETY: a registered region.
            unsafe { protect(s, l, RW) };
            continue;
        }
        apply_prots(held, r, s);
    }
}

/// Sets every page of HDP-tracked region `r` (at `start`) to what its state asks
/// ([`page_prot`]), one `mprotect` per run of pages that ask the same.
pub(super) fn apply_prots(held: &Held, r: &Region, start: u64) {
    let mut run: Option<(usize, libc::c_int)> = None;
    let mut i = 0;
    loop {
        let prot = page_state(held, r, i).map(|st| page_prot(r, st.load(Ordering::Relaxed)));
        match (run, prot) {
            (Some((_, p)), Some(q)) if p == q => {}
            (prev, next) => {
                if let Some((from, p)) = prev {
                    // CAST: page indexes of a usize-sized mapping.
                    let (a, n) = (start + from as u64 * PAGE, (i - from) as u64 * PAGE);
                    // SAFETY: pages of a registered region.
                    unsafe { protect(a, n, p) };
                }
                match next {
                    Some(q) => run = Some((i, q)),
                    None => return,
                }
            }
        }
        i += 1;
    }
}
