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

mod handler;
mod images;
mod tables;

use handler::*;
use images::*;
pub(crate) use images::{hdp_flushed, images_ready, images_ready_anywhere, take_images};
use tables::*;

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
