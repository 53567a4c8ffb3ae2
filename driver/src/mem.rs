//! Owning mappings and the one place mapped memory becomes Rust values.
//!
//! Memory the GPU shares (rings, rptr/wptr, signals, doorbells, buffers) is touched only through
//! atomics or explicit byte copies while no engine uses it, never through `&mut` to a struct
//! (the GPU may write at any time, as the Asahi GPU driver's documentation explains). Every [`Mapping`] unmaps on drop.

use crate::error::{Error, Result};
use core::sync::atomic::{AtomicU8, AtomicU32, AtomicU64, Ordering};
use hcq_core::kfd::{Fd, KfdSys, MapKind, Prot};
use std::sync::Arc;

/// A region of this process's address space mapped through a [`KfdSys`] port, unmapped on drop.
///
/// # Invariants
/// `[addr, addr + len)` is mapped for the whole life of the value (the port's `mmap` contract),
/// `addr` is page aligned and `len` is a non-zero multiple of the page size that fits `usize`.
/// When `prot` is read-write, the memory may be read and written through atomics. `guard`
/// more bytes after `len` are reserved (no access) and unmapped with it, never used.
pub(crate) struct Mapping {
    sys: Arc<dyn KfdSys>,
    addr: u64,
    len: u64,
    guard: u64,
    prot: Prot,
    /// The id of the [`RingLease`] taken on this mapping, 0 while none is: once set, it never
    /// changes, and the mapping lends no shared view of its bytes.
    lease: AtomicU64,
}

impl core::fmt::Debug for Mapping {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Mapping")
            .field("addr", &format_args!("{:#x}", self.addr))
            .field("len", &format_args!("{:#x}", self.len))
            .field("prot", &self.prot)
            .finish()
    }
}

const PAGE: u64 = 4096;

impl Mapping {
    /// Maps `len` bytes (`kind` as the port defines it) where the OS chooses.
    pub(crate) fn new(
        sys: &Arc<dyn KfdSys>,
        op: &'static str,
        len: u64,
        prot: Prot,
        kind: MapKind,
    ) -> Result<Self> {
        if len == 0 || len % PAGE != 0 || usize::try_from(len).is_err() {
            return Err(Error::InvalidArgument(format!(
                "{op}: mapping length {len:#x} is not a non-zero multiple of {PAGE:#x}"
            )));
        }
        let addr = sys
            .mmap(None, len, prot, kind)
            .map_err(|e| Error::sys(op, e))?;
        let end_ok = addr
            .checked_add(len)
            .and_then(|end| usize::try_from(end).ok())
            .is_some();
        if addr == 0 || addr % PAGE != 0 || !end_ok {
            // Not a mapping we can use; give it back.
            let _ = sys.munmap(addr, len);
            return Err(Error::Protocol(format!(
                "{op}: mmap returned unusable address {addr:#x} for {len:#x} bytes"
            )));
        }
        Ok(Self {
            sys: Arc::clone(sys),
            addr,
            len,
            guard: 0,
            prot,
            lease: AtomicU64::new(0),
        })
    }

    /// Reserves address space (no access) to place a buffer object in, with one more page
    /// after it that stays reserved and never mapped (to the CPU or any GPU): buffer objects
    /// are never adjacent, so a kernel that runs past a buffer's end faults at that end (the
    /// fault names that buffer) instead of writing into a neighbour, on hardware as on the
    /// simulator.
    pub(crate) fn reserve(sys: &Arc<dyn KfdSys>, len: u64) -> Result<Self> {
        if len == 0 || len % PAGE != 0 {
            return Err(Error::InvalidArgument(format!(
                "reserve address space: length {len:#x} is not a non-zero multiple of {PAGE:#x}"
            )));
        }
        let mut m = Self::new(
            sys,
            "reserve address space",
            len.checked_add(PAGE).ok_or_else(|| {
                Error::InvalidArgument(format!("reserve address space: {len:#x} bytes"))
            })?,
            Prot::NONE,
            MapKind::Reserve,
        )?;
        m.len = len;
        m.guard = PAGE;
        Ok(m)
    }

    /// Maps `fd` at `offset` over the whole region (`MAP_FIXED`), read-write.
    pub(crate) fn overlay_file(&mut self, op: &'static str, fd: Fd, offset: u64) -> Result<()> {
        let got = self
            .sys
            .mmap(
                Some(self.addr),
                self.len,
                Prot::READ_WRITE,
                MapKind::File { fd, offset },
            )
            .map_err(|e| Error::sys(op, e))?;
        if got != self.addr {
            return Err(Error::Protocol(format!(
                "{op}: MAP_FIXED at {:#x} landed at {got:#x}",
                self.addr
            )));
        }
        self.prot = Prot::READ_WRITE;
        Ok(())
    }

    /// Start address (host VA; for buffers also the GPU VA).
    pub(crate) fn addr(&self) -> u64 {
        self.addr
    }

    /// Whether the mapping lends shared views (atomics, byte copies): read-write, and no ring
    /// lease taken on it.
    fn accessible(&self) -> bool {
        self.prot == Prot::READ_WRITE && self.lease.load(Ordering::Relaxed) == 0
    }

    fn base_ptr(&self) -> *mut u8 {
        // CAST: `addr` fits usize (checked in `new`).
        core::ptr::with_exposed_provenance_mut(self.addr as usize)
    }

    /// Asks the CPU to bring the cache lines of bytes `off..off + len` of the mapping (those
    /// inside it) into its caches ahead of a write: the next submission's ring space or
    /// kernarg segment, fetched while the caller does other work rather than stalling that
    /// submission's stores on misses. A hint: it reads and writes nothing.
    /// On a GPU's uncached or write-combined mappings (GTT rings, VRAM kernargs through the
    /// BAR) x86 ignores prefetches (Intel SDM, PREFETCHh), so there it costs a few
    /// instructions and gains nothing; it pays on cached mappings such as the simulator's.
    pub(crate) fn prefetch_write(&self, off: u64, len: usize) {
        if self.prot != Prot::READ_WRITE {
            return;
        }
        // CAST: `len` fits usize (checked in `new`).
        let size = self.len as usize;
        let Ok(start) = usize::try_from(off) else {
            return;
        };
        let end = start.saturating_add(len).min(size);
        let mut at = start - start % 64;
        while at < end {
            let p = self.base_ptr().wrapping_add(at);
            #[cfg(target_arch = "x86_64")]
            // SAFETY: a prefetch neither reads nor writes memory as the program sees it and
            // never faults; `p` is inside the mapping anyway (`at < end <= len`).
            unsafe {
                core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_ET0 }>(
                    p.cast::<i8>().cast_const(),
                );
            }
            #[cfg(not(target_arch = "x86_64"))]
            let _ = p;
            at += 64;
        }
    }

    /// The mapping as 32-bit atomics (empty when not accessible).
    pub(crate) fn u32s(&self) -> &[AtomicU32] {
        if !self.accessible() {
            return &[];
        }
        // CAST: `len` fits usize (checked in `new`).
        let n = (self.len / 4) as usize;
        // SAFETY: the region is mapped read-write for the life of `self` (type invariant), page
        // aligned (so 4-byte aligned), `n * 4 <= len` bytes long; atomics have no invalid bit
        // patterns and tolerate concurrent writes by the GPU or the simulator's engine threads.
        unsafe { core::slice::from_raw_parts(self.base_ptr().cast::<AtomicU32>(), n) }
    }

    /// The mapping as 64-bit atomics (empty when not accessible).
    pub(crate) fn u64s(&self) -> &[AtomicU64] {
        if !self.accessible() {
            return &[];
        }
        // CAST: `len` fits usize (checked in `new`).
        let n = (self.len / 8) as usize;
        // SAFETY: as in `u32s`; page alignment covers the 8-byte alignment of AtomicU64.
        unsafe { core::slice::from_raw_parts(self.base_ptr().cast::<AtomicU64>(), n) }
    }

    /// The mapping as byte atomics (empty when not accessible).
    fn u8s(&self) -> &[AtomicU8] {
        if !self.accessible() {
            return &[];
        }
        // CAST: `len` fits usize (checked in `new`).
        let n = self.len as usize;
        // SAFETY: as in `u32s`; AtomicU8 needs no alignment.
        unsafe { core::slice::from_raw_parts(self.base_ptr().cast::<AtomicU8>(), n) }
    }

    /// The 64-bit atomic at byte offset `off` (8-byte aligned, inside the mapping).
    pub(crate) fn u64_at(&self, off: u64) -> Option<&AtomicU64> {
        if off % 8 != 0 {
            return None;
        }
        self.u64s().get(usize::try_from(off / 8).ok()?)
    }

    /// The 32-bit atomic at byte offset `off` (4-byte aligned, inside the mapping).
    #[cfg(test)]
    pub(crate) fn u32_at(&self, off: u64) -> Option<&AtomicU32> {
        if off % 4 != 0 {
            return None;
        }
        self.u32s().get(usize::try_from(off / 4).ok()?)
    }

    /// Copies `data` into the mapping at byte offset `off`, through relaxed atomic stores
    /// (8 bytes at a time where aligned), then a release fence: memory the GPU shares is never
    /// written through plain references.
    ///
    /// Callers use this on memory no engine is using at that time (staging buffers whose
    /// timeline value has completed, code objects before their first launch).
    pub(crate) fn write_bytes(&self, off: u64, data: &[u8]) -> Result<()> {
        let start = self.check_range(off, data.len())?;
        let (bytes, words) = (self.u8s(), self.u64s());
        // The bytes up to the first 8-byte boundary, then whole words in one tight loop (one
        // load and one store per word, no per-word bounds checks: ~4x the byte-at-a-time
        // loop on staging copies), then the tail.
        let head = ((8 - start % 8) % 8).min(data.len());
        let (h, rest) = data.split_at(head);
        let chunks = rest.chunks_exact(8);
        let tail = chunks.remainder();
        let first_word = (start + head) / 8;
        let n_words = chunks.len();
        for (b, &v) in bytes.iter().skip(start).zip(h) {
            b.store(v, Ordering::Relaxed);
        }
        if let Some(ws) = words.get(first_word..first_word + n_words) {
            for (w, c) in ws.iter().zip(chunks) {
                w.store(
                    c.first_chunk::<8>().map_or(0, |c| u64::from_le_bytes(*c)),
                    Ordering::Relaxed,
                );
            }
        }
        let tail_at = start + head + n_words * 8;
        for (b, &v) in bytes.iter().skip(tail_at).zip(tail) {
            b.store(v, Ordering::Relaxed);
        }
        core::sync::atomic::fence(Ordering::Release);
        Ok(())
    }

    /// Copies `len` bytes at `src` into the mapping at byte offset `off` with one raw copy
    /// (`ptr::copy_nonoverlapping`, no reference formed over either side), then a release
    /// fence. For sources Rust does not own, which another thread may write meanwhile (a
    /// Python array): the bytes copied are then a mix of old and new, as for a C `memcpy`.
    /// Same caller contract as [`Mapping::write_bytes`] for the mapping's side.
    ///
    /// # Safety
    /// `src` is valid for reads of `len` bytes until this returns and does not overlap this
    /// mapping.
    pub(crate) unsafe fn write_raw(&self, off: u64, src: *const u8, len: usize) -> Result<()> {
        let start = self.check_range(off, len)?;
        if len == 0 {
            return Ok(());
        }
        // SAFETY: `start + len <= self.len` (checked, and the mapping is accessible:
        // read-write for the life of `self`), so the destination is `len` writable bytes;
        // the caller vouches that `src` is `len` readable bytes outside the mapping. No engine
        // uses these bytes now (this function's contract, as `write_bytes`'), so the plain
        // stores race with no atomic access; the fence below orders them before the
        // submission that hands them to an engine.
        unsafe { core::ptr::copy_nonoverlapping(src, self.base_ptr().add(start), len) };
        core::sync::atomic::fence(Ordering::Release);
        Ok(())
    }

    /// Copies `len` bytes of the mapping at byte offset `off` to `dst` with an acquire fence,
    /// then one raw copy (`ptr::copy_nonoverlapping`, no reference formed over either side):
    /// the counterpart of [`Mapping::write_raw`] for destinations Rust does not own. Same
    /// caller contract as [`Mapping::read_bytes`] for the mapping's side.
    ///
    /// # Safety
    /// `dst` is valid for writes of `len` bytes until this returns and does not overlap this
    /// mapping.
    pub(crate) unsafe fn read_raw(&self, off: u64, dst: *mut u8, len: usize) -> Result<()> {
        let start = self.check_range(off, len)?;
        if len == 0 {
            return Ok(());
        }
        core::sync::atomic::fence(Ordering::Acquire);
        // SAFETY: `start + len <= self.len` (checked, and the mapping is accessible: mapped
        // for the life of `self`), so the source is `len` readable bytes; the caller vouches
        // that `dst` is `len` writable bytes outside the mapping. No engine writes these bytes
        // now (this function's contract, as `read_bytes`'), and the fence orders the reads
        // after the wait that saw the engine's copy complete.
        unsafe {
            core::ptr::copy_nonoverlapping(self.base_ptr().add(start).cast_const(), dst, len)
        };
        Ok(())
    }

    /// Copies bytes out of the mapping at byte offset `off` into `out` (an acquire fence, then
    /// relaxed atomic loads; same caller contract as [`Mapping::write_bytes`]).
    pub(crate) fn read_bytes(&self, off: u64, out: &mut [u8]) -> Result<()> {
        let start = self.check_range(off, out.len())?;
        core::sync::atomic::fence(Ordering::Acquire);
        let (bytes, words) = (self.u8s(), self.u64s());
        // As `write_bytes`: head bytes, whole words, tail bytes.
        let head = ((8 - start % 8) % 8).min(out.len());
        let (h, rest) = out.split_at_mut(head);
        let first_word = (start + head) / 8;
        let n_words = rest.len() / 8;
        let (body, tail) = rest.split_at_mut(n_words * 8);
        for (b, v) in bytes.iter().skip(start).zip(h) {
            *v = b.load(Ordering::Relaxed);
        }
        if let Some(ws) = words.get(first_word..first_word + n_words) {
            for (w, c) in ws.iter().zip(body.chunks_exact_mut(8)) {
                if let Some(c) = c.first_chunk_mut::<8>() {
                    *c = w.load(Ordering::Relaxed).to_le_bytes();
                }
            }
        }
        let tail_at = start + head + n_words * 8;
        for (b, v) in bytes.iter().skip(tail_at).zip(tail) {
            *v = b.load(Ordering::Relaxed);
        }
        Ok(())
    }

    /// Checks `[off, off + len)` is inside the accessible mapping; returns `off` as usize.
    fn check_range(&self, off: u64, len: usize) -> Result<usize> {
        let end = u64::try_from(len).ok().and_then(|l| off.checked_add(l));
        if !self.accessible() || end.is_none_or(|e| e > self.len) {
            return Err(Error::InvalidArgument(format!(
                "{len} bytes at offset {off:#x} do not fit a {:#x}-byte mapping",
                self.len
            )));
        }
        // PANIC: none; off < len, which fits usize (checked in `new`).
        usize::try_from(off).map_err(|_| Error::InvalidArgument(format!("offset {off:#x}")))
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        let len = self.len + self.guard;
        if let Err(e) = self.sys.munmap(self.addr, len) {
            log::error!("munmap {:#x} ({len:#x} B) failed: {e}", self.addr);
        }
    }
}

/// The right to write one ring's memory as `&mut [u32]`, kept beside the ring's producer
/// (the queue's `RingWriter`).
///
/// [`RingLease::take`] succeeds once per mapping, ever: from then on the mapping lends no
/// shared view of its bytes (`u32s`, `u64_at`, `read_bytes`, `write_bytes` are empty or
/// refused), and the only way to them is a [`RingView`], which borrows this lease mutably. So
/// at most one view of a ring exists at a time, and nothing aliases it, by construction.
#[derive(Debug)]
pub(crate) struct RingLease {
    id: u64,
}

/// Lease ids: unique for the life of the process, so a lease matches one mapping only.
static NEXT_LEASE: AtomicU64 = AtomicU64::new(1);

impl RingLease {
    /// Takes the lease on `ring`; `None` when it is not read-write or already leased.
    pub(crate) fn take(ring: &Mapping) -> Option<Self> {
        if ring.prot != Prot::READ_WRITE {
            return None;
        }
        let id = NEXT_LEASE.fetch_add(1, Ordering::Relaxed);
        ring.lease
            .compare_exchange(0, id, Ordering::Relaxed, Ordering::Relaxed)
            .ok()?;
        Some(Self { id })
    }
}

/// A ring's memory lent to core's ring producer: the granted dwords as `&mut [u32]`.
///
/// Built only from the ring's [`RingLease`], borrowed mutably for the view's life; the GPU
/// reads only dwords that were published (below the write pointer), and a grant covers only
/// free space (behind the read pointer).
pub(crate) struct RingView<'a> {
    ring: &'a Mapping,
    _lease: &'a mut RingLease,
}

impl<'a> RingView<'a> {
    /// The view of `ring` that `lease` allows; `None` when `lease` is not `ring`'s.
    pub(crate) fn new(ring: &'a Mapping, lease: &'a mut RingLease) -> Option<Self> {
        (ring.lease.load(Ordering::Relaxed) == lease.id).then_some(Self {
            ring,
            _lease: lease,
        })
    }
}

impl hcq_core::ring::RingMemory for RingView<'_> {
    fn slices_mut(
        &mut self,
        head: core::ops::Range<usize>,
        tail: core::ops::Range<usize>,
    ) -> Option<(&mut [u32], &mut [u32])> {
        let m = self.ring;
        if m.prot != Prot::READ_WRITE {
            return None;
        }
        // CAST: `len` fits usize (Mapping invariant).
        let n = (m.len / 4) as usize;
        let head_len = head.end.checked_sub(head.start)?;
        let tail_len = tail.end.checked_sub(tail.start)?;
        if head.end > n || tail.end > head.start {
            return None;
        }
        let base = m.base_ptr().cast::<u32>();
        // SAFETY: both ranges are inside the read-write mapping (checked: `head.end <= n`) and
        // disjoint (`tail.end <= head.start`); the mapping is page aligned so the u32s are
        // aligned. The mapping is leased (checked in `new`), so it lends no shared view, and
        // this view holds the one lease by `&mut` for its life: no other reference to these
        // dwords exists on the CPU side. The granted space is free (the engine has consumed
        // it and will not read it before the write pointer is published). The borrow of
        // `self` bounds the slices' lifetime.
        unsafe {
            Some((
                core::slice::from_raw_parts_mut(base.add(head.start), head_len),
                core::slice::from_raw_parts_mut(base.add(tail.start), tail_len),
            ))
        }
    }
}

/// A 64-bit doorbell inside a mapped doorbell page.
#[derive(Debug)]
pub(crate) struct Doorbell {
    page: Arc<Mapping>,
    offset: u64,
}

impl Doorbell {
    /// The doorbell at byte `offset` of `page`; `None` when it is out of range or unaligned.
    pub(crate) fn new(page: Arc<Mapping>, offset: u64) -> Option<Self> {
        page.u64_at(offset)?;
        Some(Self { page, offset })
    }

    /// Rings the doorbell with `value` (one 64-bit store, release: everything written before,
    /// ring contents and the wptr, is visible to the engine that sees the new value).
    pub(crate) fn ring(&self, value: u64) {
        if let Some(cell) = self.page.u64_at(self.offset) {
            cell.store(value, Ordering::Release);
        }
    }

    #[cfg(test)]
    /// The last value written (for diagnostics).
    pub(crate) fn last(&self) -> u64 {
        self.page
            .u64_at(self.offset)
            .map_or(0, |c| c.load(Ordering::Relaxed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::LinuxKfd;

    fn port() -> Arc<dyn KfdSys> {
        Arc::new(LinuxKfd::new())
    }

    /// A ring's `&mut [u32]` view must be the only reference to its dwords: once leased, the
    /// mapping lends no shared view, a second lease is refused, and a view needs the ring's
    /// own lease (borrowed mutably, so one view at a time).
    #[test]
    fn a_leased_ring_has_one_writer_and_no_shared_view() {
        use hcq_core::ring::RingMemory;
        let sys = port();
        let ring = Mapping::new(&sys, "test", 4096, Prot::READ_WRITE, MapKind::Anonymous).unwrap();
        let other = Mapping::new(&sys, "test", 4096, Prot::READ_WRITE, MapKind::Anonymous).unwrap();
        let none = Mapping::reserve(&sys, 4096).unwrap();
        assert!(
            RingLease::take(&none).is_none(),
            "no lease on memory that is not mapped rw"
        );
        let mut lease = RingLease::take(&ring).unwrap();
        assert!(
            RingLease::take(&ring).is_none(),
            "a second lease on the same ring"
        );
        assert!(ring.u32s().is_empty() && ring.u64s().is_empty() && ring.u64_at(0).is_none());
        assert!(ring.read_bytes(0, &mut [0u8; 4]).is_err());
        assert!(ring.write_bytes(0, &[1]).is_err());
        let mut foreign = RingLease::take(&other).unwrap();
        assert!(
            RingView::new(&ring, &mut foreign).is_none(),
            "another ring's lease"
        );
        let mut view = RingView::new(&ring, &mut lease).unwrap();
        let (h, t) = view.slices_mut(4..8, 0..2).unwrap();
        h.fill(7);
        t.fill(9);
        assert!(view.slices_mut(1020..1025, 0..0).is_none(), "past the ring");
        assert!(view.slices_mut(0..4, 2..6).is_none(), "overlapping parts");
    }

    #[test]
    fn anonymous_mapping_views_and_copies() {
        let sys = port();
        let m = Mapping::new(&sys, "test", 8192, Prot::READ_WRITE, MapKind::Anonymous).unwrap();
        assert_eq!(m.u32s().len(), 2048);
        m.u32s()[3].store(0xdead_beef, Ordering::Relaxed);
        let mut out = [0u8; 4];
        m.read_bytes(12, &mut out).unwrap();
        assert_eq!(u32::from_le_bytes(out), 0xdead_beef);
        m.write_bytes(8190, &[1, 2]).unwrap();
        assert!(m.write_bytes(8191, &[1, 2]).is_err());
        assert!(m.write_bytes(u64::MAX, &[1]).is_err());
        assert_eq!(
            m.u64_at(8184).unwrap().load(Ordering::Relaxed) >> 48,
            0x0201
        );
        assert!(m.u64_at(8188).is_none());
        assert!(m.u64_at(8192).is_none());
        m.write_bytes(0, &[0xff; 16]).unwrap();
        assert_eq!(m.u32_at(12).unwrap().load(Ordering::Relaxed), u32::MAX);
        // Unaligned head and tail around aligned words round-trip.
        let data: Vec<u8> = (0..=40u8).collect();
        m.write_bytes(3, &data).unwrap();
        let mut back = vec![0u8; data.len()];
        m.read_bytes(3, &mut back).unwrap();
        assert_eq!(back, data);
    }

    #[test]
    fn reservation_has_no_views_until_overlaid() {
        let sys = port();
        let fd = rustix::fs::memfd_create("hcq-bo", rustix::fs::MemfdFlags::CLOEXEC).unwrap();
        rustix::fs::ftruncate(&fd, 4096).unwrap();
        let path = format!("/proc/self/fd/{}", rustix::fd::AsRawFd::as_raw_fd(&fd));
        let file = sys.open(&path).unwrap();
        let mut m = Mapping::reserve(&sys, 4096).unwrap();
        assert!(m.u32s().is_empty());
        assert!(m.write_bytes(0, &[1]).is_err());
        m.overlay_file("map bo", file, 0).unwrap();
        m.write_bytes(0, b"abcd").unwrap();
        let mut back = [0u8; 4];
        rustix::io::pread(&fd, &mut back, 0).unwrap();
        assert_eq!(&back, b"abcd");
        drop(m);
        sys.close(file).unwrap();
    }

    #[test]
    fn doorbell_is_one_64_bit_store() {
        let sys = port();
        let page =
            Arc::new(Mapping::new(&sys, "db", 8192, Prot::READ_WRITE, MapKind::Anonymous).unwrap());
        assert!(Doorbell::new(Arc::clone(&page), 8192).is_none());
        assert!(Doorbell::new(Arc::clone(&page), 4).is_none());
        let db = Doorbell::new(Arc::clone(&page), 0x1008).unwrap();
        db.ring(0x1_0000_0002);
        assert_eq!(db.last(), 0x1_0000_0002);
        assert_eq!(page.u32s()[0x1008 / 4].load(Ordering::Relaxed), 2);
        assert_eq!(page.u32s()[0x100c / 4].load(Ordering::Relaxed), 1);
    }

    #[test]
    fn bad_lengths_are_errors() {
        let sys = port();
        assert!(Mapping::new(&sys, "t", 0, Prot::READ_WRITE, MapKind::Anonymous).is_err());
        assert!(Mapping::new(&sys, "t", 100, Prot::READ_WRITE, MapKind::Anonymous).is_err());
    }
}
