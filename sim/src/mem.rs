//! Host memory: memfd-backed shared memory (BOs, doorbell slices, event pages), mappings into
//! the process at the driver's addresses, and copies to/from arbitrary user addresses.
//!
//! This module (with its `hostguard`, which protects the process's mappings of these buffers
//! to see the host's accesses) is the only one of the simulator with `unsafe`. Memory here is
//! shared with the driver (and, in threaded mode, with engine threads) while both run, exactly
//! as GPU memory is shared with a real GPU. It is only ever viewed as slices of atomics (`AtomicU8`,
//! `AtomicU32`, `AtomicU64`), never as plain bytes: every copy is a run of relaxed atomic
//! loads or stores between fences, as the driver's own accesses are, so concurrent access by
//! the driver and the engine threads is never a data race.
//!
//! Mappings made for the port's callers are tracked ([`ProcessMaps`]): `MAP_FIXED` only lands
//! inside a region the sim handed out, and `munmap` only takes such a region, so the safe
//! `KfdSys` methods cannot unmap or overwrite memory Rust owns.
//!
//! USERPTR memory must lie in a region the sim mapped. The simulated GPU reaches it through
//! `/proc/self/mem` (which fails with EIO on an unmapped address instead of crashing), and only
//! through a [`UserPages`] pin: the MMU notifier waits for its copies in flight before the
//! pages go, so a GPU access never lands in memory mapped there later.

use core::ffi::c_void;
use core::ptr::NonNull;
use core::sync::atomic::{AtomicBool, AtomicU8, AtomicU32, AtomicU64, Ordering, fence};
use hcq_core::kfd::{Errno, Prot};
use rustix::fd::{AsFd, OwnedFd};
use rustix::fs::{MemfdFlags, ftruncate, memfd_create};
use rustix::mm::{MapFlags, ProtFlags};
use std::collections::BTreeMap;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError, RwLock};

mod hdp;
mod hostguard;
mod l2;
mod process;

pub(crate) use hdp::HdpStale;
use hdp::HdpView;
pub(crate) use hostguard::{HostFault, HostGuard};
use l2::L2Lines;
pub(crate) use l2::l2_caches;
pub(crate) use process::{ProcessMaps, UserPages};

fn errno(e: rustix::io::Errno) -> Errno {
    Errno(e.raw_os_error())
}

/// `(head, body)` of a copy of `len` bytes at byte offset `start`: `head` single bytes up to
/// 8-byte alignment, then `body` bytes of whole aligned words; the rest is the tail.
fn split_aligned(start: usize, len: usize) -> (usize, usize) {
    let head = ((8 - start % 8) % 8).min(len);
    (head, (len - head) / 8 * 8)
}

fn to_usize(v: u64) -> Result<usize, Errno> {
    usize::try_from(v).map_err(|_| Errno::EINVAL)
}

/// rustix protection flags from the port's.
fn prot_flags(p: Prot) -> ProtFlags {
    let mut f = ProtFlags::empty();
    if p.0 & Prot::READ.0 != 0 {
        f |= ProtFlags::READ;
    }
    if p.0 & Prot::WRITE.0 != 0 {
        f |= ProtFlags::WRITE;
    }
    f
}

/// Writes of at least this many bytes populate a deferred mapping
/// ([`SharedMem::populate_on_first_bulk_write`]).
const BULK_WRITE: usize = 4096;

/// A memfd and the simulator's own read-write mapping of all of it.
///
/// Invariant: `ptr .. ptr + len` is a live `MAP_SHARED` mapping of `fd` owned by this value,
/// unmapped only in `Drop`.
#[derive(Debug)]
pub(crate) struct SharedMem {
    fd: OwnedFd,
    ptr: NonNull<u8>,
    len: usize,
    /// The HDP model, for VRAM the process has mapped: the bytes GPU engines see. CPU writes
    /// through the process mapping land in the memfd at once but reach this view only at an
    /// HDP flush; GPU writes go to both. `None` until the process maps the BO (or for memory
    /// the HDP does not sit in front of: GTT is snooped, doorbells and MMIO are registers).
    hdp: Mutex<Option<HdpView>>,
    /// Whether `hdp` is `Some` (checked without the lock on every GPU access).
    hdp_on: AtomicBool,
    /// The L2 model (`mem/l2.rs`): GPU writes held dirty in a GPU's L2 until a write-back,
    /// for memory the L2 caches and the CPU has mapped (see [`SharedMem::l2_track`]).
    l2: Mutex<L2Lines>,
    /// Whether GPU writes go through `l2` ([`SharedMem::l2_track`] was called).
    l2_on: AtomicBool,
    /// Whether `l2` holds any dirty byte (checked without the lock on every GPU access).
    l2_dirty: AtomicBool,
    /// Whether the first bulk write should populate the whole mapping
    /// ([`SharedMem::populate_on_first_bulk_write`]).
    populate_pending: AtomicBool,
    /// The host guard's regions of the process's mappings of this memory (index, start), for
    /// the HDP model: the CPU's first write to each page after a flush ([`hostguard`]).
    guarded: Mutex<Vec<(usize, u64)>>,
}

// SAFETY: the mapping is plain shared memory owned by this value; all access goes through raw
// copies and atomics (no references), which are valid from any thread.
unsafe impl Send for SharedMem {}
// SAFETY: as above; `&SharedMem` only allows raw copies and atomic accesses.
unsafe impl Sync for SharedMem {}

impl SharedMem {
    /// A zero-filled memfd of `len` bytes (sparse until touched), mapped read-write.
    pub(crate) fn new(name: &str, len: u64) -> Result<Self, Errno> {
        let ulen = to_usize(len)?;
        if ulen == 0 {
            return Err(Errno::EINVAL);
        }
        let fd = memfd_create(name, MemfdFlags::CLOEXEC).map_err(errno)?;
        ftruncate(&fd, len).map_err(errno)?;
        // SAFETY: a fresh shared mapping of our own memfd at an address the kernel picks; it
        // aliases no Rust object.
        let p = unsafe {
            rustix::mm::mmap(
                core::ptr::null_mut(),
                ulen,
                ProtFlags::READ | ProtFlags::WRITE,
                MapFlags::SHARED,
                &fd,
                0,
            )
        }
        .map_err(|e| {
            if e == rustix::io::Errno::NOMEM {
                Errno::ENOMEM
            } else {
                errno(e)
            }
        })?;
        let ptr = NonNull::new(p.cast::<u8>()).ok_or(Errno::ENOMEM)?;
        Ok(Self {
            fd,
            ptr,
            len: ulen,
            hdp: Mutex::new(None),
            hdp_on: AtomicBool::new(false),
            l2: Mutex::new(L2Lines::default()),
            l2_on: AtomicBool::new(false),
            l2_dirty: AtomicBool::new(false),
            populate_pending: AtomicBool::new(false),
            guarded: Mutex::new(Vec::new()),
        })
    }

    fn hdp(&self) -> std::sync::MutexGuard<'_, Option<HdpView>> {
        self.hdp.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Puts this memory behind the HDP (a VRAM BO the process just mapped): from now on CPU
    /// writes reach GPU engines only through [`SharedMem::hdp_flush`].
    pub(crate) fn hdp_track(&self) {
        let mut h = self.hdp();
        if h.is_none() {
            *h = Some(HdpView::new(self.len));
            self.hdp_on.store(true, Ordering::Release);
        }
    }

    /// Whether GPU accesses go through [`SharedMem::gpu_read`] / [`SharedMem::gpu_write`].
    pub(crate) fn hdp_tracked(&self) -> bool {
        self.hdp_on.load(Ordering::Acquire)
    }

    /// An HDP flush: every CPU write so far becomes visible to GPU engines. The pages whose
    /// view was taken since the last flush take their current bytes as what the GPU sees;
    /// every other page's view lapses (the next GPU access takes it afresh).
    pub(crate) fn hdp_flush(&self) {
        let mut h = self.hdp();
        for &(ri, start) in self.guard_regions().iter() {
            hostguard::hdp_flushed(ri, start);
        }
        if let Some(v) = h.as_mut() {
            v.flush(self);
        }
    }

    fn guard_regions(&self) -> MutexGuard<'_, Vec<(usize, u64)>> {
        self.guarded.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The host guard watches a process mapping of this memory at `start` as region `ri`:
    /// the CPU's first write to each page after an HDP flush is seen, with the page as the
    /// GPU sees it ([`SharedMem::hdp_take_preimages`]).
    pub(crate) fn guard_region(&self, ri: usize, start: u64) {
        self.guard_regions().push((ri, start));
    }

    /// The simulator's own mapping: (address, bytes), for the host guard's pre-images.
    pub(crate) fn own_mapping(&self) -> (usize, usize) {
        (self.ptr.as_ptr().expose_provenance(), self.len)
    }

    /// Takes the pages the CPU wrote since the last HDP flush into the HDP view: what GPU
    /// engines see of them is the page before that write (or, when the guard had no room
    /// for it, nothing the CPU wrote may be read: any GPU read of the page is stale).
    pub(crate) fn hdp_take_preimages(&self) {
        let mut h = self.hdp();
        if let Some(v) = h.as_mut() {
            self.preimages_into(v);
        }
    }

    /// [`SharedMem::hdp_take_preimages`] with the HDP lock held (before every GPU access of
    /// the view: a threaded engine may reach the page before its next round).
    fn preimages_into(&self, v: &mut HdpView) {
        if !hostguard::images_ready_anywhere() {
            return;
        }
        for &(ri, start) in self.guard_regions().iter() {
            if hostguard::images_ready(ri) {
                for (page, data) in hostguard::take_images(ri, start) {
                    v.preimage(page, data.as_deref().map(|b| &b[..]));
                }
            }
        }
    }

    /// A GPU engine's read through GPU `gpu`'s L2 (`None`: past any L2): `Ok(false)` out of
    /// bounds; `Err` when a byte differs from what the GPU may see (written by the CPU after
    /// the last HDP flush). With `relaxed`, such bytes read as their GPU-visible (old) value
    /// instead. Bytes `gpu`'s L2 holds dirty read as the L2 holds them.
    pub(crate) fn gpu_read(
        &self,
        gpu: Option<u32>,
        off: u64,
        buf: &mut [u8],
        relaxed: bool,
    ) -> Result<bool, HdpStale> {
        if self.hdp_tracked() {
            let mut h = self.hdp();
            if !self.read(off, buf) {
                return Ok(false);
            }
            if let Some(v) = h.as_mut() {
                self.preimages_into(v);
                v.read(self, off, buf, relaxed)?;
            }
        } else if !self.read(off, buf) {
            return Ok(false);
        }
        if let Some(g) = gpu
            && self.l2_dirty()
        {
            self.l2_lines().overlay(g, off, buf);
        }
        Ok(true)
    }

    /// A GPU write that goes to memory past the L2's write-back (a memory-controller
    /// destination, or memory the L2 does not cache): to memory and to the HDP view at once;
    /// bytes an L2 held dirty there are clean from now on.
    pub(crate) fn gpu_write(&self, off: u64, data: &[u8]) -> bool {
        if !self.l2_dirty() {
            return self.write_memory(off, data);
        }
        let mut l2 = self.l2_lines();
        if !self.write_memory(off, data) {
            return false;
        }
        l2.clean(off, data.len());
        self.l2_dirty.store(!l2.is_empty(), Ordering::Release);
        true
    }

    /// A GPU write by GPU `gpu` through its L2: for memory [`SharedMem::l2_track`]ed, it stays
    /// in the L2 (GPU engines of `gpu` read it at once, the CPU and other GPUs only after
    /// [`SharedMem::l2_writeback`]); otherwise as [`SharedMem::gpu_write`]. `None` when out of
    /// bounds, else whether this write made clean memory dirty (decided under the L2 lock, so
    /// of writes and write-backs racing on this memory, the write that dirties it last says
    /// so: the simulator's list of dirty memory relies on it).
    pub(crate) fn gpu_write_cached(&self, gpu: u32, off: u64, data: &[u8]) -> Option<bool> {
        if !self.l2_on.load(Ordering::Acquire) {
            return self.gpu_write(off, data).then_some(false);
        }
        self.range(off, data.len())?;
        let mut l2 = self.l2_lines();
        let was_dirty = !l2.is_empty();
        l2.write(self, gpu, off, data);
        let dirty = !l2.is_empty();
        self.l2_dirty.store(dirty, Ordering::Release);
        Some(dirty && !was_dirty)
    }

    /// Puts this memory behind the L2 model: from now on GPU writes through the L2
    /// ([`SharedMem::gpu_write_cached`]) reach memory only at a write-back. For BOs whose MTYPE
    /// the L2 caches once the CPU maps them (before that, nothing reads memory but GPUs).
    pub(crate) fn l2_track(&self) {
        self.l2_on.store(true, Ordering::Release);
    }

    /// Whether some GPU's L2 holds dirty bytes of this memory.
    pub(crate) fn l2_dirty(&self) -> bool {
        self.l2_dirty.load(Ordering::Acquire)
    }

    /// Pages some GPU's L2 holds dirty (tests and statistics).
    pub(crate) fn l2_dirty_pages(&self) -> usize {
        if self.l2_dirty() {
            self.l2_lines().dirty_pages()
        } else {
            0
        }
    }

    /// A write-back of GPU `gpu`'s L2: the bytes it holds dirty here reach memory.
    pub(crate) fn l2_writeback(&self, gpu: u32) {
        if !self.l2_dirty() {
            return;
        }
        let mut l2 = self.l2_lines();
        l2.write_back(self, gpu);
        self.l2_dirty.store(!l2.is_empty(), Ordering::Release);
    }

    fn l2_lines(&self) -> MutexGuard<'_, L2Lines> {
        self.l2.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A GPU write reaching memory: to memory and to the GPU-visible (HDP) view.
    fn write_memory(&self, off: u64, data: &[u8]) -> bool {
        if !self.hdp_tracked() {
            return self.write(off, data);
        }
        let mut h = self.hdp();
        if self.range(off, data.len()).is_none() {
            return false;
        }
        if let Some(v) = h.as_mut() {
            self.preimages_into(v);
            v.before_write(self, off, data.len());
        }
        if !self.write(off, data) {
            return false;
        }
        if let Some(v) = h.as_mut() {
            v.write(self, off, data);
        }
        true
    }

    /// Allocates (zero-filled) every page and fills the simulator's page table for them in one
    /// `MADV_POPULATE_WRITE`, so the first GPU write to each page does not take a page fault
    /// (~3 us per 4 KiB here: the first copy into a fresh buffer ran at 1 GB/s instead of 4).
    /// Best effort: on a kernel without it (before 5.14) pages are faulted in on first use.
    pub(crate) fn populate(&self) {
        // SAFETY: `ptr..ptr+len` is our own live mapping (type invariant); MADV_POPULATE_WRITE
        // only faults in its pages (zero-filled memfd pages) and changes no byte.
        let r = unsafe {
            rustix::mm::madvise(
                self.ptr.as_ptr().cast::<c_void>(),
                self.len,
                rustix::mm::Advice::LinuxPopulateWrite,
            )
        };
        if let Err(e) = r {
            log::debug!("MADV_POPULATE_WRITE of {} bytes: {e}", self.len);
        }
    }

    /// Defers [`SharedMem::populate`] to the first write or fill of at least a page: a large
    /// buffer a copy fills is populated in one call before the copy's first chunk lands, and
    /// one nobody writes in bulk (a runtime's scratch area, a kernarg arena the CPU fills a
    /// few bytes at a time) stays sparse.
    pub(crate) fn populate_on_first_bulk_write(&self) {
        self.populate_pending.store(true, Ordering::Relaxed);
    }

    fn populate_if_pending(&self, n: usize) {
        if n >= BULK_WRITE && self.populate_pending.swap(false, Ordering::Relaxed) {
            self.populate();
        }
    }

    /// Size in bytes.
    pub(crate) fn len(&self) -> u64 {
        // CAST: usize is 64 bits on every supported target.
        self.len as u64
    }

    fn range(&self, off: u64, n: usize) -> Option<usize> {
        let off = usize::try_from(off).ok()?;
        let end = off.checked_add(n)?;
        (end <= self.len).then_some(off)
    }

    /// The whole mapping as byte atomics.
    fn bytes(&self) -> &[AtomicU8] {
        // SAFETY: `ptr .. ptr + len` is a live read-write mapping for as long as `&self`
        // (type invariant); AtomicU8 has u8's size and alignment and no invalid values. Every
        // access to the mapping from this process, here and in the driver, is atomic, so
        // concurrent accesses by other threads are not data races.
        unsafe { core::slice::from_raw_parts(self.ptr.as_ptr().cast::<AtomicU8>(), self.len) }
    }

    /// The whole mapping as 64-bit atomics (`len / 8` of them).
    fn words(&self) -> &[AtomicU64] {
        // SAFETY: as in `bytes`; the mapping is page aligned, so 8-byte aligned, and
        // `len / 8 * 8 <= len` bytes are covered.
        unsafe { core::slice::from_raw_parts(self.ptr.as_ptr().cast::<AtomicU64>(), self.len / 8) }
    }

    /// The whole mapping as 32-bit atomics (`len / 4` of them).
    fn dwords(&self) -> &[AtomicU32] {
        // SAFETY: as in `words`, with 4-byte alignment.
        unsafe { core::slice::from_raw_parts(self.ptr.as_ptr().cast::<AtomicU32>(), self.len / 4) }
    }

    /// Copies `buf.len()` bytes at `off` into `buf`; `false` when out of bounds.
    ///
    /// Relaxed atomic loads (8 bytes at a time where aligned, single bytes at the edges), then
    /// an acquire fence: the driver and engine threads may write the mapping meanwhile, and
    /// every access to it is atomic, so nothing here is a data race. The loads touch only the
    /// bytes asked for, so a copy of `[rptr, wptr)` never reads a word the driver is writing
    /// past `wptr`.
    pub(crate) fn read(&self, off: u64, buf: &mut [u8]) -> bool {
        let Some(start) = self.range(off, buf.len()) else {
            return false;
        };
        let (head, body) = split_aligned(start, buf.len());
        let (b_head, rest) = buf.split_at_mut(head);
        let (b_body, b_tail) = rest.split_at_mut(body);
        let bytes = self.bytes();
        let load = |dst: &mut [u8], at: usize| {
            let src = bytes.get(at..at + dst.len()).unwrap_or_default();
            for (d, s) in dst.iter_mut().zip(src) {
                *d = s.load(Ordering::Relaxed);
            }
        };
        load(b_head, start);
        let w0 = (start + head) / 8;
        let words = self.words().get(w0..w0 + body / 8).unwrap_or_default();
        for (d, w) in b_body.chunks_exact_mut(8).zip(words) {
            d.copy_from_slice(&w.load(Ordering::Relaxed).to_le_bytes());
        }
        load(b_tail, start + head + body);
        fence(Ordering::Acquire);
        true
    }

    /// Copies `data` to `off`; `false` when out of bounds.
    ///
    /// A release fence, then relaxed atomic stores (as [`SharedMem::read`], mirrored).
    pub(crate) fn write(&self, off: u64, data: &[u8]) -> bool {
        let Some(start) = self.range(off, data.len()) else {
            return false;
        };
        self.populate_if_pending(data.len());
        let (head, body) = split_aligned(start, data.len());
        let (d_head, rest) = data.split_at(head);
        let (d_body, d_tail) = rest.split_at(body);
        let bytes = self.bytes();
        let store = |src: &[u8], at: usize| {
            let dst = bytes.get(at..at + src.len()).unwrap_or_default();
            for (d, s) in dst.iter().zip(src) {
                d.store(*s, Ordering::Relaxed);
            }
        };
        fence(Ordering::Release);
        store(d_head, start);
        let w0 = (start + head) / 8;
        let words = self.words().get(w0..w0 + body / 8).unwrap_or_default();
        for (w, s) in words.iter().zip(d_body.chunks_exact(8)) {
            let mut v = [0u8; 8];
            v.copy_from_slice(s);
            w.store(u64::from_le_bytes(v), Ordering::Relaxed);
        }
        store(d_tail, start + head + body);
        true
    }

    /// Fills `n` bytes at `off` with `byte`; `false` when out of bounds (atomic stores, as
    /// [`SharedMem::write`]).
    pub(crate) fn fill(&self, off: u64, n: u64, byte: u8) -> bool {
        let Ok(n) = usize::try_from(n) else {
            return false;
        };
        let Some(start) = self.range(off, n) else {
            return false;
        };
        self.populate_if_pending(n);
        let (head, body) = split_aligned(start, n);
        let bytes = self.bytes();
        let store = |at: usize, len: usize| {
            for b in bytes.get(at..at + len).unwrap_or_default() {
                b.store(byte, Ordering::Relaxed);
            }
        };
        fence(Ordering::Release);
        store(start, head);
        let w0 = (start + head) / 8;
        let word = u64::from_le_bytes([byte; 8]);
        for w in self.words().get(w0..w0 + body / 8).unwrap_or_default() {
            w.store(word, Ordering::Relaxed);
        }
        store(start + head + body, n - head - body);
        true
    }

    fn atomic64(&self, off: u64) -> Option<&AtomicU64> {
        let o = self.range(off, 8)?;
        if o % 8 != 0 {
            return None;
        }
        self.words().get(o / 8)
    }

    fn atomic32(&self, off: u64) -> Option<&AtomicU32> {
        let o = self.range(off, 4)?;
        if o % 4 != 0 {
            return None;
        }
        self.dwords().get(o / 4)
    }

    /// Acquire-load of an aligned u64, or a plain copy when unaligned; `None` out of bounds.
    pub(crate) fn load_u64(&self, off: u64) -> Option<u64> {
        if let Some(a) = self.atomic64(off) {
            return Some(a.load(Ordering::Acquire));
        }
        let mut b = [0u8; 8];
        self.read(off, &mut b).then(|| u64::from_le_bytes(b))
    }

    /// Release-store of an aligned u64, or a plain copy when unaligned; `false` out of bounds.
    pub(crate) fn store_u64(&self, off: u64, v: u64) -> bool {
        if let Some(a) = self.atomic64(off) {
            a.store(v, Ordering::Release);
            return true;
        }
        self.write(off, &v.to_le_bytes())
    }

    /// Acquire-load of an aligned u32, or a plain copy when unaligned; `None` out of bounds.
    pub(crate) fn load_u32(&self, off: u64) -> Option<u32> {
        if let Some(a) = self.atomic32(off) {
            return Some(a.load(Ordering::Acquire));
        }
        let mut b = [0u8; 4];
        self.read(off, &mut b).then(|| u32::from_le_bytes(b))
    }

    /// Release-store of an aligned u32, or a plain copy when unaligned; `false` out of bounds.
    pub(crate) fn store_u32(&self, off: u64, v: u32) -> bool {
        if let Some(a) = self.atomic32(off) {
            a.store(v, Ordering::Release);
            return true;
        }
        self.write(off, &v.to_le_bytes())
    }

    /// The address of the aligned u64 at `off` in the simulator's own mapping (a doorbell the
    /// host guard snapshots), valid while `self` lives.
    pub(crate) fn word_addr(&self, off: u64) -> Option<usize> {
        let a = self.atomic64(off)?;
        Some(core::ptr::from_ref(a).expose_provenance())
    }

    /// The memfd, for [`ProcessMaps::map_shared`].
    fn fd(&self) -> rustix::fd::BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

impl Drop for SharedMem {
    fn drop(&mut self) {
        // SAFETY: `ptr..ptr+len` is our own mapping (type invariant) and no reference into it
        // exists; it is unmapped exactly once, here.
        let _ = unsafe { rustix::mm::munmap(self.ptr.as_ptr().cast::<c_void>(), self.len) };
    }
}
