//! Host accesses join the race detector: the CPU's reads and writes of GPU memory through the
//! process's mappings are seen the way sanitizers see them, by page protection, with no help
//! from the driver.
//!
//! The invariant: while the host runs, either the process's doorbell mappings are read-only
//! or every guarded data mapping (a BO the process mapped read-write) is inaccessible.
//! - The host's write to a read-only doorbell page faults: every data mapping of that
//!   simulator becomes `PROT_NONE` and the doorbell pages writable again; the write completes.
//! - The host's access to a `PROT_NONE` data page faults: the handler records the address,
//!   whether it writes (x86-64's page-fault error code), and every queue's doorbell value at
//!   that moment (which ring positions were queued before the access) into a preallocated slot,
//!   makes that page accessible again and the doorbell pages read-only, and the access
//!   completes.
//!
//! So the first host access to each page after every doorbell write is recorded, with what was
//! queued when it happened. The engines judge the records ([`HostGuard::collect`], then
//! `engine/flight/host.rs`): an operation queued before the access that executes after it and
//! touches the accessed byte (a write against its reads or writes, a read against its writes)
//! is a race. Later accesses to a page already opened are not seen until the next doorbell
//! (missed, never reported wrongly). When the engines are idle the large data mappings are
//! opened again ([`HostGuard::relax`]): nothing is queued, so nothing can race.
//!
//! The HDP model uses the same faults: a VRAM mapping's pages are read-only after each HDP
//! flush, so the CPU's first write to a page since the flush faults, and the handler keeps a
//! copy of the page as it was (a pre-image: what GPU engines see) in a preallocated slot
//! before the write goes on ([`take_images`] hands them to the buffer's HDP view,
//! [`hdp_flushed`] voids them and makes the pages read-only again).
//!
//! The handler is async-signal-safe: atomics, `mprotect(2)`, no allocation, no lock but a spin
//! flag that no code holds while it touches guarded memory, allocates, frees or logs (a
//! [`Held`] token is the flag; every function that needs it takes `&Held`, and freeing a
//! region's page states takes `&mut Held`, so no borrowed page state outlives its table
//! entry). A fault that is not ours (another
//! address, a `SEGV_MAPERR`) goes to the handler installed before ours (Rust's stack-overflow
//! handler, a sanitizer's), or to the default action. Only mappings the simulator made are
//! ever protected, and only while registered: unmapping or replacing one unregisters it first.
//! Linux on x86-64 only (elsewhere [`HostGuard::new`] is off). Off unless asked for
//! (`SimConfig::host_guard`, or `HCQ_SIM_HOST_GUARD=1`; `=0` forces it off): a library user
//! gets no process-wide handler it did not ask for. hcq's own test suites turn it on.
//!
//! A process whose other code owns SIGSEGV cannot have it: the guard relies on its handler
//! staying installed while pages are protected, and a runtime that restores "its" previous
//! handler later (Python's `faulthandler.disable()`, which pytest calls at the end of every
//! session) removes ours under protected pages, and the next host access kills the process.
//!
//! The tables are fixed (the handler cannot allocate): a record that finds no free slot, a
//! mapping that finds no free region, a queue that finds no free cell goes unwatched. That is
//! never silent: each simulator counts them ([`HostGuard::dropped`], public as
//! `SimKfd::host_guard_dropped`) and logs a warning the first time.

use core::ffi::c_void;
use core::sync::atomic::{
    AtomicBool, AtomicPtr, AtomicU8, AtomicU32, AtomicU64, AtomicUsize, Ordering,
};

const PAGE: u64 = 4096;
/// Guarded mappings, all simulators of the process together.
const REGIONS: usize = 1024;
/// Queue doorbells whose value a record snapshots.
const CELLS: usize = 128;
/// Records not yet collected.
const SLOTS: usize = 64;

const FREE: u8 = 0;
const DATA: u8 = 1;
const DOORBELL: u8 = 2;

struct Region {
    owner: AtomicU64,
    kind: AtomicU8,
    /// Whether the whole region was protected (data: `PROT_NONE`, doorbells: read-only) since
    /// it was last opened.
    guarded: AtomicBool,
    start: AtomicU64,
    len: AtomicU64,
    /// The buffer's GPU virtual address (data regions).
    va: AtomicU64,
    /// HDP tracking (VRAM behind the HDP): the simulator's own mapping of the buffer (0: not
    /// tracked) and its length, and one state per page ([`DIRTY`], [`LOST`], the race epoch
    /// the page was opened in).
    sim_base: AtomicUsize,
    sim_len: AtomicUsize,
    pages: AtomicPtr<AtomicU32>,
    npages: AtomicUsize,
    /// Bumped whenever a doorbell guards the region whole.
    epoch: AtomicU32,
    /// HDP flushes of the buffer so far (a pre-image taken before the last one is void).
    flushes: AtomicU64,
    /// Some page is dirty or lost since the last flush / has a pre-image to deliver.
    dirty_any: AtomicBool,
    /// Some page was opened since the region was last made inaccessible whole.
    opened: AtomicBool,
    images: AtomicBool,
    /// Records of accesses to this region lost because every slot was full (moved into the
    /// owner's count when the region is unregistered).
    dropped: AtomicU64,
    /// Pages opened one by one since the region was last made inaccessible whole (their
    /// addresses; a count past [`OPEN_LIST`] means "too many, protect it whole"): the next
    /// doorbell makes only these inaccessible again, not the whole mapping, whose cost grows
    /// with its resident pages.
    open_n: AtomicUsize,
    open_at: [AtomicU64; OPEN_LIST],
}

/// Pages a region remembers as opened one by one (see [`Region::open_at`]).
const OPEN_LIST: usize = 16;

/// A page the CPU wrote since the last HDP flush (write faults no longer see it).
const DIRTY: u32 = 1 << 31;
/// A dirty page whose pre-image found no free slot (not checked until the next flush).
const LOST: u32 = 1 << 30;
/// A dirty page whose pre-image is all zeros (a fresh buffer's first write, e.g. a driver
/// touching every page of a new arena): kept as this bit, not in a slot.
const ZEROED: u32 = 1 << 29;
const EPOCH: u32 = ZEROED - 1;

/// Pre-images: what the GPU sees of a page the CPU wrote after the last HDP flush (the page
/// as it was at the CPU's first write since the flush). Shared by every simulator of the
/// process (test threads run many at once): 16 MiB of address space, resident only as used.
const IMAGES: usize = 4096;
const WORDS: usize = PAGE as usize / 8;

struct Image {
    /// 0 free, 1 filled, 2 being filled.
    full: AtomicU8,
    region: AtomicUsize,
    start: AtomicU64,
    flushes: AtomicU64,
    page: AtomicUsize,
    data: [AtomicU64; WORDS],
}

struct Cell {
    owner: AtomicU64,
    /// `gpu_id << 32 | doorbell byte offset`.
    key: AtomicU64,
    /// The simulator's own mapping of the doorbell (never protected).
    addr: AtomicUsize,
}

struct Slot {
    /// 0 free, 1 filled.
    full: AtomicU8,
    owner: AtomicU64,
    addr: AtomicU64,
    /// 0 read, 1 write.
    write: AtomicU8,
    vals: [AtomicU64; CELLS],
}

#[allow(clippy::declare_interior_mutable_const)]
const REGION: Region = Region {
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
const CELL: Cell = Cell {
    owner: AtomicU64::new(0),
    key: AtomicU64::new(0),
    addr: AtomicUsize::new(0),
};
#[allow(clippy::declare_interior_mutable_const)]
const ZERO: AtomicU64 = AtomicU64::new(0);
#[allow(clippy::declare_interior_mutable_const)]
const SLOT: Slot = Slot {
    full: AtomicU8::new(0),
    owner: AtomicU64::new(0),
    addr: AtomicU64::new(0),
    write: AtomicU8::new(0),
    vals: [ZERO; CELLS],
};

#[allow(clippy::declare_interior_mutable_const)]
const IMAGE: Image = Image {
    full: AtomicU8::new(0),
    region: AtomicUsize::new(0),
    start: AtomicU64::new(0),
    flushes: AtomicU64::new(0),
    page: AtomicUsize::new(0),
    data: [ZERO; WORDS],
};

static REGION_TABLE: [Region; REGIONS] = [REGION; REGIONS];
/// One past the highest region index in use: scans stop there (registration takes the lowest
/// free index, so a process with a few dozen mappings scans a few dozen entries, not
/// [`REGIONS`], on every fault).
static REGIONS_USED: AtomicUsize = AtomicUsize::new(0);

/// Lowers [`REGIONS_USED`] past free entries at its end (after a region was freed).
fn shrink_used(_: &Held) {
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
fn live_regions() -> &'static [Region] {
    let n = REGIONS_USED.load(Ordering::Acquire).min(REGIONS);
    REGION_TABLE.get(..n).unwrap_or(&REGION_TABLE)
}
static IMAGE_TABLE: [Image; IMAGES] = [IMAGE; IMAGES];
static CELL_TABLE: [Cell; CELLS] = [CELL; CELLS];
static SLOT_TABLE: [Slot; SLOTS] = [SLOT; SLOTS];
/// Records lost because every slot was full.
static DROPPED: AtomicU64 = AtomicU64::new(0);
static NEXT_OWNER: AtomicU64 = AtomicU64::new(1);
/// Faults the handler resolved, process-wide (a relax with none since the last one has
/// nothing to do).
static RESOLVED: AtomicU64 = AtomicU64::new(0);
/// Regions with pre-images to deliver, process-wide (one load on every GPU access of a
/// guarded VRAM buffer while none is).
static WITH_IMAGES: AtomicUsize = AtomicUsize::new(0);
/// The spin flag over the tables (held by the handler and by registration, never while
/// touching guarded memory).
static LOCK: AtomicBool = AtomicBool::new(false);
/// The `sigaction` installed before ours (leaked once, read by the handler).
static PREVIOUS: AtomicPtr<libc::sigaction> = AtomicPtr::new(core::ptr::null_mut());
static INSTALLED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();

/// A slot or pre-image being read out by [`HostGuard::collect`] / [`take_images`] after the
/// spin flag was released (the handler takes only free ones: 0).
const CLAIMED: u8 = 3;

/// The spin flag over the tables, held: only async-signal-safe work (atomics, `mprotect`, no
/// allocation, no free, no logging) happens while one lives. Functions that need the flag
/// take `&Held`; freeing a table entry's memory takes `&mut Held` (and hands the memory out
/// to be freed after the flag is released).
struct Held(());

fn lock() -> Held {
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
unsafe fn protect(start: u64, len: u64, prot: libc::c_int) -> bool {
    let (Ok(a), Ok(l)) = (usize::try_from(start), usize::try_from(len)) else {
        return false;
    };
    // SAFETY: as the function's contract says; mprotect is async-signal-safe (a system call).
    unsafe { libc::mprotect(core::ptr::without_provenance_mut::<c_void>(a), l, prot) == 0 }
}

const RW: libc::c_int = libc::PROT_READ | libc::PROT_WRITE;

/// Sets every region of `owner` of `kind` that is not already so to `prot` (whole regions)
/// and marks them guarded (anything but read-write) or not.
fn protect_all(_: &Held, owner: u64, kind: u8, prot: libc::c_int) -> bool {
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
fn page_state<'h>(_: &'h Held, r: &Region, i: usize) -> Option<&'h AtomicU32> {
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
struct Pages(#[expect(dead_code, reason = "held only to be dropped")] Option<Box<[AtomicU32]>>);

/// Takes region `r`'s page states out of the table (the pointer cleared).
fn take_pages(_: &mut Held, r: &Region) -> Pages {
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
fn race_guarded(r: &Region, st: u32) -> bool {
    r.guarded.load(Ordering::Relaxed) && st & EPOCH != r.epoch.load(Ordering::Relaxed) & EPOCH
}

/// What the host may do with a page of region `r` in state `st`.
fn page_prot(r: &Region, st: u32) -> libc::c_int {
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
fn guard_data(_: &Held, owner: u64) {
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
const OPEN_WHEN_IDLE: u64 = 1 << 20;

/// Nothing is queued: the large data mappings of `owner` open (HDP-tracked pages the CPU has
/// not written since the last flush stay read-only).
fn open_data(held: &Held, owner: u64) {
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
fn apply_prots(held: &Held, r: &Region, start: u64) {
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

/// Most pre-image slots one simulator holds at once: the slots are the process's, and test
/// threads run several simulators at once; without a share each, one test writing a large
/// buffer could leave another's pages unchecked (their writes lost to the HDP model).
const IMAGES_PER_OWNER: usize = IMAGES / 8;

/// How many pre-image slots regions of `owner` hold.
fn images_held(_: &Held, owner: u64) -> usize {
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
fn page_is_zero(_: &Held, r: &Region, i: usize) -> bool {
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
fn capture(held: &Held, ri: usize, r: &Region, i: usize) -> bool {
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

/// The handler's work: whether the fault at `addr` was ours (and is resolved).
fn resolve(addr: u64, write: bool) -> bool {
    let held = lock();
    RESOLVED.fetch_add(1, Ordering::Relaxed);
    let Some((ri, r)) = live_regions().iter().enumerate().find(|(_, r)| {
        let k = r.kind.load(Ordering::Relaxed);
        let s = r.start.load(Ordering::Relaxed);
        k != FREE && s <= addr && addr - s < r.len.load(Ordering::Relaxed)
    }) else {
        return false;
    };
    let owner = r.owner.load(Ordering::Relaxed);
    match r.kind.load(Ordering::Relaxed) {
        DOORBELL => {
            // A doorbell write: guard every data mapping, then let it (and later ones) through.
            guard_data(&held, owner);
            protect_all(&held, owner, DOORBELL, RW)
        }
        DATA => {
            let page = addr & !(PAGE - 1);
            let start = r.start.load(Ordering::Relaxed);
            // CAST: inside the region, whose length fits usize.
            let i = ((page - start) / PAGE) as usize;
            let (prot, race) = if r.sim_base.load(Ordering::Relaxed) == 0 {
                (RW, r.guarded.load(Ordering::Relaxed))
            } else {
                let Some(st) = page_state(&held, r, i) else {
                    return false;
                };
                let s0 = st.load(Ordering::Relaxed);
                let race = race_guarded(r, s0);
                // Opened for this race epoch; a first write since the flush keeps what the
                // GPU sees of the page first.
                let mut s1 =
                    (s0 & (DIRTY | LOST | ZEROED)) | (r.epoch.load(Ordering::Relaxed) & EPOCH);
                if write && s0 & DIRTY == 0 {
                    s1 |= DIRTY;
                    if page_is_zero(&held, r, i) {
                        s1 |= ZEROED;
                    } else if !capture(&held, ri, r, i) {
                        s1 |= LOST;
                    }
                    r.dirty_any.store(true, Ordering::Relaxed);
                    if !r.images.swap(true, Ordering::Release) {
                        WITH_IMAGES.fetch_add(1, Ordering::Release);
                    }
                }
                st.store(s1, Ordering::Relaxed);
                (page_prot(r, s1), race)
            };
            // SAFETY: the page lies in a registered data region.
            if !unsafe { protect(page, PAGE, prot) } {
                return false;
            }
            r.opened.store(true, Ordering::Relaxed);
            let n = r.open_n.fetch_add(1, Ordering::Relaxed);
            if let Some(a) = r.open_at.get(n) {
                a.store(page, Ordering::Relaxed);
            }
            if !race {
                // Only the HDP's first-write fault: no GPU work was guarded against it.
                return true;
            }
            match SLOT_TABLE.iter().find(|s| {
                s.full
                    .compare_exchange(0, 2, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
            }) {
                Some(s) => {
                    s.owner.store(owner, Ordering::Relaxed);
                    s.addr.store(addr, Ordering::Relaxed);
                    s.write.store(u8::from(write), Ordering::Relaxed);
                    for (c, v) in CELL_TABLE.iter().zip(&s.vals) {
                        let a = c.addr.load(Ordering::Relaxed);
                        let val = if c.owner.load(Ordering::Relaxed) == owner && a != 0 {
                            // SAFETY: a registered cell: an aligned u64 of the simulator's own
                            // doorbell mapping, alive while registered (the owner unregisters
                            // before it drops the memory); read atomically.
                            unsafe {
                                (*core::ptr::with_exposed_provenance::<AtomicU64>(a))
                                    .load(Ordering::Acquire)
                            }
                        } else {
                            0
                        };
                        v.store(val, Ordering::Relaxed);
                    }
                    s.full.store(1, Ordering::Release);
                }
                None => {
                    DROPPED.fetch_add(1, Ordering::Relaxed);
                    r.dropped.fetch_add(1, Ordering::Relaxed);
                }
            }
            // The next doorbell write guards the page again.
            protect_all(&held, owner, DOORBELL, libc::PROT_READ);
            true
        }
        _ => false,
    }
}

/// Hands a fault that is not ours to the handler installed before ours, or to the default
/// action (reinstalled; the faulting access then repeats and takes it).
///
/// # Safety
/// Called from the SIGSEGV handler with the kernel's arguments.
unsafe fn chain(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut c_void) {
    let prev = PREVIOUS.load(Ordering::Acquire);
    // SAFETY: `PREVIOUS` is null or a leaked `sigaction` written once before our handler was
    // installed, never freed.
    let prev = unsafe { prev.as_ref() };
    match prev {
        Some(p) if p.sa_sigaction != libc::SIG_DFL && p.sa_sigaction != libc::SIG_IGN => {
            if p.sa_flags & libc::SA_SIGINFO != 0 {
                // SAFETY: with SA_SIGINFO, `sa_sigaction` is a three-argument handler that
                // its installer wrote for exactly this call.
                let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut c_void) =
                    unsafe { core::mem::transmute(p.sa_sigaction) };
                f(sig, info, ctx);
            } else {
                // SAFETY: without SA_SIGINFO, it is a one-argument handler.
                let f: extern "C" fn(libc::c_int) = unsafe { core::mem::transmute(p.sa_sigaction) };
                f(sig);
            }
        }
        _ => {
            // SAFETY: a zeroed sigaction with SIG_DFL is valid; sigaction is async-signal-safe.
            unsafe {
                let mut dfl: libc::sigaction = core::mem::zeroed();
                dfl.sa_sigaction = libc::SIG_DFL;
                libc::sigaction(sig, &dfl, core::ptr::null_mut());
            }
        }
    }
}

/// The SIGSEGV handler.
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
extern "C" fn on_segv(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut c_void) {
    /// Linux's `SEGV_ACCERR`: a mapped page without the permission.
    const SEGV_ACCERR: libc::c_int = 2;
    // SAFETY: the kernel passes a valid siginfo (SA_SIGINFO); for SIGSEGV `si_addr` is set.
    let (code, addr) = unsafe { ((*info).si_code, (*info).si_addr()) };
    // x86-64's page-fault error code: bit 1 set for a write.
    // SAFETY: for SA_SIGINFO handlers `ctx` is the interrupted thread's ucontext_t.
    let err =
        unsafe { (*ctx.cast::<libc::ucontext_t>()).uc_mcontext.gregs[libc::REG_ERR as usize] };
    // CAST: the address as a number.
    if code == SEGV_ACCERR && resolve(addr.expose_provenance() as u64, err & 2 != 0) {
        return;
    }
    // SAFETY: the kernel's arguments, from the handler.
    unsafe { chain(sig, info, ctx) };
}

/// Elsewhere: no page-fault error code to tell reads from writes; the guard stays off.
#[cfg(not(all(target_os = "linux", target_arch = "x86_64")))]
fn install() -> bool {
    false
}

/// Installs the handler once per process; whether it is installed.
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
fn install() -> bool {
    *INSTALLED.get_or_init(|| {
        // SAFETY: a zeroed sigaction is valid; we fill the handler, SA_SIGINFO (three
        // arguments) and SA_ONSTACK (it runs on the thread's alternate stack, as Rust's
        // stack-overflow handler needs), and keep the previous action for chaining. The
        // previous action is stored (leaked) before ours can run: a fault in between finds
        // PREVIOUS null and takes the default action, as it would have.
        unsafe {
            let mut act: libc::sigaction = core::mem::zeroed();
            act.sa_sigaction = on_segv as *const () as usize;
            act.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
            libc::sigemptyset(&mut act.sa_mask);
            let old = Box::into_raw(Box::new(core::mem::zeroed::<libc::sigaction>()));
            if libc::sigaction(libc::SIGSEGV, core::ptr::null(), old) != 0 {
                drop(Box::from_raw(old));
                return false;
            }
            PREVIOUS.store(old, Ordering::Release);
            libc::sigaction(libc::SIGSEGV, &act, core::ptr::null_mut()) == 0
        }
    })
}

/// One host access the handler recorded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct HostFault {
    /// The host address accessed.
    pub(crate) host: u64,
    /// The GPU virtual address of that byte (its buffer's VA plus the offset).
    pub(crate) va: u64,
    /// The buffer's GPU virtual address.
    pub(crate) buf: u64,
    /// Whether the access writes.
    pub(crate) write: bool,
    /// Each queue's doorbell value when it happened: `(gpu_id << 32 | doorbell offset, value)`.
    pub(crate) queued: Vec<(u64, u64)>,
}

/// One simulator's part of the guard (`0`: off).
#[derive(Debug)]
pub(crate) struct HostGuard {
    owner: u64,
    /// The buffers whose own mapping an HDP-tracked region reads (pre-images), kept alive
    /// while registered, by region index.
    keep: std::sync::Mutex<Vec<(usize, std::sync::Arc<super::SharedMem>)>>,
    /// [`RESOLVED`] at the last relax.
    relaxed_at: AtomicU64,
    /// What went unwatched because a table was full: records, regions and cells (the
    /// records of regions still registered are in their own count, [`Region::dropped`]).
    dropped: AtomicU64,
    /// Whether the first drop was logged.
    warned: AtomicBool,
}

impl HostGuard {
    /// A guard for one simulator: on when `wanted` (the simulator's configuration and
    /// `HCQ_SIM_HOST_GUARD`, resolved by the caller) and this target can have it.
    pub(crate) fn new(wanted: bool) -> Self {
        let on = cfg!(all(target_os = "linux", target_arch = "x86_64")) && wanted && install();
        Self {
            owner: if on {
                NEXT_OWNER.fetch_add(1, Ordering::Relaxed)
            } else {
                0
            },
            keep: std::sync::Mutex::new(Vec::new()),
            relaxed_at: AtomicU64::new(u64::MAX),
            dropped: AtomicU64::new(0),
            warned: AtomicBool::new(false),
        }
    }

    /// Host accesses, mappings and queues that went unwatched because one of the process's
    /// fixed tables was full, since this simulator was made.
    pub(crate) fn dropped(&self) -> u64 {
        if !self.on() {
            return 0;
        }
        let _held = lock();
        live_regions()
            .iter()
            .filter(|r| r.owner.load(Ordering::Relaxed) == self.owner)
            .map(|r| r.dropped.load(Ordering::Relaxed))
            .sum::<u64>()
            + self.dropped.load(Ordering::Relaxed)
    }

    /// Counts `n` things that went unwatched (`what`), and logs the first time.
    fn lost(&self, n: u64, what: &str) {
        self.dropped.fetch_add(n, Ordering::Relaxed);
        self.warn_once(what);
    }

    /// Logs a warning the first time anything went unwatched (outside the spin flag).
    fn warn_once(&self, what: &str) {
        if !self.warned.swap(true, Ordering::Relaxed) {
            log::warn!(
                "host guard: {what}: the race detector does not see every host access of this simulator from now on (SimKfd::host_guard_dropped counts what it missed)"
            );
        }
    }

    /// Whether host accesses are watched.
    pub(crate) fn on(&self) -> bool {
        self.owner != 0
    }

    /// Registers a mapping; its region index. `hdp`: the simulator's own mapping of the
    /// buffer (address, bytes) for HDP tracking.
    fn register(
        &self,
        kind: u8,
        start: u64,
        len: u64,
        va: u64,
        hdp: Option<(usize, usize)>,
    ) -> Option<usize> {
        if !self.on() || len == 0 || start % PAGE != 0 {
            return None;
        }
        let len = len.next_multiple_of(PAGE);
        // CAST: a mapping's page count fits usize.
        let npages = (len / PAGE) as usize;
        // Allocated outside the lock (the handler never allocates or frees).
        let pages: Option<Box<[AtomicU32]>> =
            hdp.map(|_| (0..npages).map(|_| AtomicU32::new(0)).collect());
        let held = lock();
        let Some((ri, r)) = REGION_TABLE
            .iter()
            .enumerate()
            .find(|(_, r)| r.kind.load(Ordering::Relaxed) == FREE)
        else {
            drop(held);
            // The page states (if any) are freed here, outside the flag.
            drop(pages);
            self.lost(
                1,
                &format!(
                    "the region table is full ({REGIONS}), the mapping at {start:#x} is not watched"
                ),
            );
            return None;
        };
        r.dropped.store(0, Ordering::Relaxed);
        r.open_n.store(0, Ordering::Relaxed);
        r.owner.store(self.owner, Ordering::Relaxed);
        r.start.store(start, Ordering::Relaxed);
        r.len.store(len, Ordering::Relaxed);
        r.va.store(va, Ordering::Relaxed);
        r.guarded.store(false, Ordering::Relaxed);
        r.dirty_any.store(false, Ordering::Relaxed);
        r.images.store(false, Ordering::Relaxed);
        let (base, blen) = hdp.unwrap_or((0, 0));
        r.sim_base.store(base, Ordering::Relaxed);
        r.sim_len.store(blen, Ordering::Relaxed);
        match pages {
            Some(p) => {
                let n = p.len();
                r.pages
                    .store(Box::into_raw(p).cast::<AtomicU32>(), Ordering::Relaxed);
                r.npages.store(n, Ordering::Relaxed);
            }
            None => {
                r.pages.store(core::ptr::null_mut(), Ordering::Relaxed);
                r.npages.store(0, Ordering::Relaxed);
            }
        }
        r.kind.store(kind, Ordering::Release);
        REGIONS_USED.fetch_max(ri + 1, Ordering::Release);
        let prot = match (kind, hdp) {
            (DOORBELL, _) => Some(libc::PROT_READ),
            // Every page clean: the CPU's first write to each is seen.
            (_, Some(_)) => Some(libc::PROT_READ),
            _ => None,
        };
        if let Some(prot) = prot {
            // SAFETY: the mapping the simulator just made for the process.
            let ok = unsafe { protect(start, len, prot) };
            if kind == DOORBELL {
                r.guarded.store(ok, Ordering::Relaxed);
            }
        }
        drop(held);
        Some(ri)
    }

    /// Watches a read-write mapping at `start` of a buffer whose GPU address is `va`; with
    /// `hdp` (the simulator's own mapping of it: address, bytes) the CPU's writes are tracked
    /// for the HDP model too. Its region index, for [`hdp_flushed`] and [`take_images`].
    pub(crate) fn add_data(
        &self,
        start: u64,
        len: u64,
        va: u64,
        hdp: Option<&std::sync::Arc<super::SharedMem>>,
    ) -> Option<usize> {
        let mut keep = self.kept();
        let ri = self.register(DATA, start, len, va, hdp.map(|m| m.own_mapping()))?;
        if let Some(m) = hdp {
            keep.push((ri, std::sync::Arc::clone(m)));
        }
        Some(ri)
    }

    fn kept(&self) -> std::sync::MutexGuard<'_, Vec<(usize, std::sync::Arc<super::SharedMem>)>> {
        self.keep
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Watches the process's doorbell mapping at `start` (made read-only now).
    pub(crate) fn add_doorbell(&self, start: u64, len: u64) {
        self.register(DOORBELL, start, len, 0, None);
    }

    /// Stops watching every mapping overlapping `[start, start + len)` (about to be unmapped or
    /// replaced), restoring read-write access.
    pub(crate) fn remove_range(&self, start: u64, len: u64) {
        if !self.on() {
            return;
        }
        let end = start.saturating_add(len);
        let mut freed = Vec::new();
        // `keep` before the spin flag (the order `add_data` takes them in).
        let mut keep = self.kept();
        // One region per holding of the flag: its page states are freed after the flag is
        // released (nothing but atomics and `mprotect` under it).
        loop {
            let mut held = lock();
            let Some((ri, r)) = live_regions().iter().enumerate().find(|(_, r)| {
                let (s, l) = (
                    r.start.load(Ordering::Relaxed),
                    r.len.load(Ordering::Relaxed),
                );
                r.owner.load(Ordering::Relaxed) == self.owner
                    && r.kind.load(Ordering::Relaxed) != FREE
                    && s < end
                    && start < s.saturating_add(l)
            }) else {
                break;
            };
            let (s, l) = (
                r.start.load(Ordering::Relaxed),
                r.len.load(Ordering::Relaxed),
            );
            // SAFETY: a registered region, still mapped (the caller unmaps after this).
            unsafe { protect(s, l, RW) };
            r.kind.store(FREE, Ordering::Release);
            r.owner.store(0, Ordering::Relaxed);
            r.sim_base.store(0, Ordering::Relaxed);
            shrink_used(&held);
            self.dropped
                .fetch_add(r.dropped.swap(0, Ordering::Relaxed), Ordering::Relaxed);
            if r.images.swap(false, Ordering::Relaxed) {
                WITH_IMAGES.fetch_sub(1, Ordering::Relaxed);
            }
            for m in &IMAGE_TABLE {
                if m.full.load(Ordering::Relaxed) == 1 && m.start.load(Ordering::Relaxed) == s {
                    m.full.store(0, Ordering::Release);
                }
            }
            let pages = take_pages(&mut held, r);
            drop(held);
            drop(pages);
            freed.push(ri);
        }
        // The buffers go outside the spin flag (their drop unmaps).
        keep.retain(|(ri, _)| !freed.contains(ri));
    }

    /// Snapshots the doorbell at `addr` (the simulator's own mapping of it, an aligned u64
    /// alive until [`HostGuard::remove_cell`] or drop) in every record, as queue `key`.
    pub(crate) fn add_cell(&self, key: u64, addr: usize) {
        if !self.on() || addr % 8 != 0 {
            return;
        }
        let held = lock();
        if let Some(c) = CELL_TABLE
            .iter()
            .find(|c| c.owner.load(Ordering::Relaxed) == 0)
        {
            c.key.store(key, Ordering::Relaxed);
            c.addr.store(addr, Ordering::Relaxed);
            c.owner.store(self.owner, Ordering::Release);
            return;
        }
        drop(held);
        self.lost(
            1,
            &format!("the doorbell cell table is full ({CELLS}), queue {key:#x}'s accesses are judged without its doorbell"),
        );
    }

    /// Stops snapshotting queue `key`.
    pub(crate) fn remove_cell(&self, key: u64) {
        if !self.on() {
            return;
        }
        let _held = lock();
        for c in &CELL_TABLE {
            if c.owner.load(Ordering::Relaxed) == self.owner && c.key.load(Ordering::Relaxed) == key
            {
                c.owner.store(0, Ordering::Relaxed);
                c.addr.store(0, Ordering::Relaxed);
            }
        }
    }

    /// The host accesses recorded since the last call.
    pub(crate) fn collect(&self) -> Vec<HostFault> {
        if !self.on() {
            return Vec::new();
        }
        // Under the flag only atomics: claim this simulator's filled slots, note each one's
        // buffer, and the cells' queues; the records are built after the flag is released.
        let mut claimed: [Option<(u64, u64)>; SLOTS] = [None; SLOTS];
        let mut keys: [Option<u64>; CELLS] = [None; CELLS];
        let held = lock();
        for (s, c) in SLOT_TABLE.iter().zip(&mut claimed) {
            if s.full.load(Ordering::Acquire) != 1 || s.owner.load(Ordering::Relaxed) != self.owner
            {
                continue;
            }
            let host = s.addr.load(Ordering::Relaxed);
            let region = live_regions().iter().find(|r| {
                let st = r.start.load(Ordering::Relaxed);
                r.owner.load(Ordering::Relaxed) == self.owner
                    && r.kind.load(Ordering::Relaxed) == DATA
                    && st <= host
                    && host - st < r.len.load(Ordering::Relaxed)
            });
            if let Some(r) = region {
                let buf = r.va.load(Ordering::Relaxed);
                *c = Some((buf + (host - r.start.load(Ordering::Relaxed)), buf));
                s.full.store(CLAIMED, Ordering::Relaxed);
            } else {
                s.full.store(0, Ordering::Release);
            }
        }
        for (c, k) in CELL_TABLE.iter().zip(&mut keys) {
            if c.owner.load(Ordering::Relaxed) == self.owner {
                *k = Some(c.key.load(Ordering::Relaxed));
            }
        }
        drop(held);
        let mut out = Vec::new();
        for (s, c) in SLOT_TABLE.iter().zip(&claimed) {
            let Some((va, buf)) = *c else {
                continue;
            };
            let queued = keys
                .iter()
                .zip(&s.vals)
                .filter_map(|(k, v)| k.map(|k| (k, v.load(Ordering::Relaxed))))
                .collect();
            out.push(HostFault {
                host: s.addr.load(Ordering::Relaxed),
                va,
                buf,
                write: s.write.load(Ordering::Relaxed) != 0,
                queued,
            });
            // A claimed slot is ours alone (the handler takes free ones).
            s.full.store(0, Ordering::Release);
        }
        if self.dropped() != 0 {
            self.warn_once("the record table was full, host accesses went unrecorded");
        }
        out
    }

    /// Nothing is queued: the data mappings open again (the doorbells stay read-only, so the
    /// next submission guards them).
    pub(crate) fn relax(&self) {
        if !self.on() {
            return;
        }
        let seen = RESOLVED.load(Ordering::Relaxed);
        if self.relaxed_at.swap(seen, Ordering::Relaxed) == seen {
            // No fault since the last relax: nothing was guarded or opened.
            return;
        }
        let held = lock();
        let mine = |kind: u8, guarded: bool| {
            live_regions().iter().any(|r| {
                r.owner.load(Ordering::Relaxed) == self.owner
                    && r.kind.load(Ordering::Relaxed) == kind
                    && r.guarded.load(Ordering::Relaxed) == guarded
            })
        };
        if mine(DATA, true) {
            open_data(&held, self.owner);
        }
        if mine(DOORBELL, false) {
            protect_all(&held, self.owner, DOORBELL, libc::PROT_READ);
        }
    }
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

impl Drop for HostGuard {
    fn drop(&mut self) {
        if !self.on() {
            return;
        }
        self.remove_range(0, u64::MAX);
        let _held = lock();
        for c in &CELL_TABLE {
            if c.owner.load(Ordering::Relaxed) == self.owner {
                c.owner.store(0, Ordering::Relaxed);
                c.addr.store(0, Ordering::Relaxed);
            }
        }
        for s in &SLOT_TABLE {
            if s.owner.load(Ordering::Relaxed) == self.owner {
                s.full.store(0, Ordering::Release);
            }
        }
    }
}

#[cfg(all(test, target_os = "linux", target_arch = "x86_64"))]
#[path = "hostguard_tests.rs"]
mod tests;
