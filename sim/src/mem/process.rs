//! The process side of the simulated kernel's memory: the regions it mapped into the process
//! for its callers ([`ProcessMaps`]), USERPTR pins ([`UserPages`]) and the copies to and from
//! user addresses they allow (through `/proc/self/mem`).

#[allow(clippy::wildcard_imports)]
use super::*;

/// The regions the simulated kernel mapped into this process for its callers (what
/// `mmap(2)` without `MAP_FIXED` returned and `munmap(2)` has not taken back): start -> length.
///
/// The port's `mmap`/`munmap` are safe trait methods, so they must not be able to clobber
/// memory Rust owns: a `MAP_FIXED` mapping is accepted only inside one of these regions (the
/// driver reserves a range, then maps a buffer object over it), and `munmap` takes only a
/// whole region. Anything else is `EINVAL`, as the Linux port answers.
///
/// Serving any client ([`crate::SimClient::Any`], granted by the `unsafe`
/// [`crate::SimConfig::for_any_client`]), the table also accepts what the kernel accepts on the
/// client's word: `MAP_FIXED` over any mapped range of the process, `munmap` of any range
/// (regions it covers whole leave the table; one it cuts is `EINVAL`), USERPTR over any
/// read-write range.
#[derive(Debug, Default)]
pub(crate) struct ProcessMaps {
    regions: Mutex<BTreeMap<u64, u64>>,
    /// The embedder vouched for the client's ranges (`SimConfig::for_any_client`'s contract).
    any_client: bool,
}

pub(super) fn lock_regions(m: &Mutex<BTreeMap<u64, u64>>) -> MutexGuard<'_, BTreeMap<u64, u64>> {
    // The table is consistent between statements; a panic elsewhere does not corrupt it.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Whether `[addr, addr + len)` lies inside one of `regions`.
pub(super) fn inside(regions: &BTreeMap<u64, u64>, addr: u64, len: u64) -> bool {
    let Some((&start, &rlen)) = regions.range(..=addr).next_back() else {
        return false;
    };
    match (addr.checked_add(len), start.checked_add(rlen)) {
        (Some(end), Some(rend)) => end <= rend,
        _ => false,
    }
}

/// How a mapping is backed.
pub(super) enum Backing<'a> {
    Anonymous(MapFlags),
    File(rustix::fd::BorrowedFd<'a>),
}

/// Whether `[addr, addr + len)` overlaps a region without covering it whole.
pub(super) fn cuts_region(regions: &BTreeMap<u64, u64>, addr: u64, len: u64) -> bool {
    let end = addr.saturating_add(len);
    let before = regions
        .range(..addr)
        .next_back()
        .is_some_and(|(&s, &l)| s.saturating_add(l) > addr);
    before
        || regions
            .range(addr..end)
            .any(|(&s, &l)| s.saturating_add(l) > end)
}

/// Whether `munmap` takes `[addr, addr + len)`: exactly one region, or (`any_client`) any
/// page-aligned range that cuts no region.
pub(super) fn client_may_unmap(
    regions: &BTreeMap<u64, u64>,
    any_client: bool,
    addr: u64,
    len: u64,
) -> bool {
    if regions.get(&addr) == Some(&len) {
        return true;
    }
    any_client && addr % 4096 == 0 && len != 0 && !cuts_region(regions, addr, len)
}

impl ProcessMaps {
    /// The table of a simulator; `any_client` only when the embedder took
    /// `SimConfig::for_any_client`'s contract.
    pub(crate) fn new(any_client: bool) -> Self {
        Self {
            regions: Mutex::default(),
            any_client,
        }
    }

    /// Whether `[addr, addr + len)` may be replaced by a `MAP_FIXED` mapping: inside one
    /// region, or (any client) mapped in the process, the client's own reservation.
    pub(crate) fn may_map_fixed(&self, addr: u64, len: u64) -> bool {
        inside(&lock_regions(&self.regions), addr, len)
            || (self.any_client && range_is_mapped(addr, len, false))
    }

    /// Whether USERPTR pages may be pinned over `[addr, addr + len)`: inside one region (hcq's
    /// driver maps host buffers through the port), or anywhere for any client.
    pub(crate) fn may_pin(&self, addr: u64, len: u64) -> bool {
        self.any_client || inside(&lock_regions(&self.regions), addr, len)
    }

    /// Whether `munmap` takes `[addr, addr + len)`: exactly one region, or (any client) a
    /// range that cuts no region.
    pub(crate) fn may_unmap(&self, addr: u64, len: u64) -> bool {
        client_may_unmap(&lock_regions(&self.regions), self.any_client, addr, len)
    }

    /// Maps `len` bytes of `mem` (from offset 0), shared, at `fixed` or where the kernel
    /// chooses.
    pub(crate) fn map_shared(
        &self,
        mem: &SharedMem,
        fixed: Option<u64>,
        len: u64,
        prot: Prot,
    ) -> Result<u64, Errno> {
        if len > mem.len() {
            return Err(Errno::EINVAL);
        }
        self.map(fixed, len, prot, Backing::File(mem.fd()))
    }

    /// Reserves address space (`PROT_NONE`, private, anonymous, `MAP_NORESERVE`).
    pub(crate) fn reserve(&self, fixed: Option<u64>, len: u64) -> Result<u64, Errno> {
        let flags = MapFlags::PRIVATE | MapFlags::NORESERVE;
        self.map(fixed, len, Prot::NONE, Backing::Anonymous(flags))
    }

    /// Maps anonymous shared memory (USERPTR buffers).
    pub(crate) fn anon_shared(
        &self,
        fixed: Option<u64>,
        len: u64,
        prot: Prot,
    ) -> Result<u64, Errno> {
        self.map(fixed, len, prot, Backing::Anonymous(MapFlags::SHARED))
    }

    fn map(
        &self,
        fixed: Option<u64>,
        len: u64,
        prot: Prot,
        backing: Backing<'_>,
    ) -> Result<u64, Errno> {
        let ulen = to_usize(len)?;
        if ulen == 0 {
            return Err(Errno::EINVAL);
        }
        // Held across the mmap: no munmap of the region can slip between check and map.
        let mut regions = lock_regions(&self.regions);
        let (addr, fixed_flag) = match fixed {
            Some(a)
                if a % 4096 != 0
                    || !(inside(&regions, a, len)
                        || (self.any_client && range_is_mapped(a, len, false))) =>
            {
                return Err(Errno::EINVAL);
            }
            Some(a) => (
                core::ptr::without_provenance_mut::<c_void>(to_usize(a)?),
                MapFlags::FIXED,
            ),
            None => (core::ptr::null_mut(), MapFlags::empty()),
        };
        let p = match backing {
            // SAFETY: without `fixed` the kernel picks free address space, which aliases
            // nothing; with it, the range lies inside a region this table says we mapped and
            // handed out (checked above under the lock), so only pages of that region are
            // replaced, which the caller addresses by number and no Rust object lives in; or,
            // serving any client, it is a mapped range the embedder vouched is the client's
            // own reservation (`SimConfig::for_any_client`'s contract).
            Backing::Anonymous(flags) => unsafe {
                rustix::mm::mmap_anonymous(addr, ulen, prot_flags(prot), flags | fixed_flag)
            },
            // SAFETY: as above; `fd` is a memfd `SharedMem` owns, alive for this call.
            Backing::File(fd) => unsafe {
                rustix::mm::mmap(
                    addr,
                    ulen,
                    prot_flags(prot),
                    MapFlags::SHARED | fixed_flag,
                    fd,
                    0,
                )
            },
        }
        .map_err(errno)?;
        // CAST: usize is 64 bits on every supported target.
        let got = p.expose_provenance() as u64;
        if fixed.is_none() {
            regions.insert(got, len);
        }
        Ok(got)
    }

    /// Unmaps exactly a region this table holds (the port's `munmap(2)`), or, serving any
    /// client, a range that cuts none (regions inside it leave the table); `EINVAL` for
    /// anything else.
    pub(crate) fn unmap(&self, addr: u64, len: u64) -> Result<(), Errno> {
        let mut regions = lock_regions(&self.regions);
        if !client_may_unmap(&regions, self.any_client, addr, len) {
            return Err(Errno::EINVAL);
        }
        let ulen = to_usize(len)?;
        let ptr = core::ptr::without_provenance_mut::<c_void>(to_usize(addr)?);
        // SAFETY: exactly a region mapped through this table and not unmapped since (checked
        // under the lock), so no memory Rust owns is affected; the caller addresses it by
        // number only, and the simulator's own views (`SharedMem`) are separate mappings.
        // Serving any client, a range that cuts no region and that the embedder vouched is
        // the client's (`SimConfig::for_any_client`'s contract).
        unsafe { rustix::mm::munmap(ptr, ulen) }.map_err(errno)?;
        let end = addr.saturating_add(len);
        let gone: Vec<u64> = regions.range(addr..end).map(|(&a, _)| a).collect();
        for a in gone {
            regions.remove(&a);
        }
        Ok(())
    }
}

impl Drop for ProcessMaps {
    fn drop(&mut self) {
        let regions = core::mem::take(&mut *lock_regions(&self.regions));
        for (addr, len) in regions {
            if let (Ok(a), Ok(l)) = (to_usize(addr), to_usize(len)) {
                // SAFETY: a region this table mapped; its users reach the simulator through
                // an `Arc` (the driver's mappings hold one), so none is left to use it.
                let _ = unsafe { rustix::mm::munmap(core::ptr::without_provenance_mut(a), l) };
            }
        }
    }
}

pub(super) fn proc_mem() -> Result<&'static File, Errno> {
    static MEM: OnceLock<Option<File>> = OnceLock::new();
    MEM.get_or_init(|| {
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/proc/self/mem")
            .ok()
    })
    .as_ref()
    .ok_or(Errno::EFAULT)
}

/// USERPTR pages the simulator pinned: a range of one region [`ProcessMaps`] mapped (or, serving
/// any client, a range the embedder vouched for), checked
/// mapped read-write when pinned. This is the token that lets the simulated GPU copy to and
/// from process memory: [`UserPages::pin`] is the only way to make one, and its copies stay
/// inside the range and run only while the pages are pinned.
///
/// The MMU notifier (`munmap`, `MAP_FIXED` over the range) calls [`UserPages::invalidate`]
/// *before* the pages go: it takes the write side of `live`, so it waits for every copy in
/// flight (each holds the read side across its whole copy), and no copy starts after it. So
/// a GPU access never reaches whatever the address space maps there later (memory Rust owns,
/// once the allocator reuses the address).
#[derive(Debug)]
pub(crate) struct UserPages {
    addr: u64,
    len: u64,
    /// `true` while pinned; cleared once, under the write lock, by `invalidate`.
    live: RwLock<bool>,
}

impl UserPages {
    /// Pins `[addr, addr + len)`: it must lie inside one region `maps` holds (any range when
    /// serving any client) and be mapped read-write (what the kernel's `get_user_pages`
    /// needs). `EFAULT` otherwise.
    pub(crate) fn pin(maps: &ProcessMaps, addr: u64, len: u64) -> Result<Self, Errno> {
        if addr == 0 || len == 0 || !maps.may_pin(addr, len) || !range_is_mapped(addr, len, true) {
            return Err(Errno::EFAULT);
        }
        Ok(Self {
            addr,
            len,
            live: RwLock::new(true),
        })
    }

    /// Whether the pinned range overlaps `[addr, addr + len)`.
    pub(crate) fn overlaps(&self, addr: u64, len: u64) -> bool {
        self.addr < addr.saturating_add(len) && addr < self.addr.saturating_add(self.len)
    }

    /// The MMU notifier: unpins, after waiting for the copies in flight. Every later copy is
    /// `EFAULT`. Call it before the pages are unmapped or replaced.
    pub(crate) fn invalidate(&self) {
        *self.live.write().unwrap_or_else(PoisonError::into_inner) = false;
    }

    /// The host address of byte `off`, with `n` bytes from there inside the range, while the
    /// caller holds `live`'s read side and it says pinned.
    fn host(&self, live: bool, off: u64, n: usize) -> Result<u64, Errno> {
        // CAST: usize fits u64.
        let end = off.checked_add(n as u64).ok_or(Errno::EFAULT)?;
        if !live || end > self.len {
            return Err(Errno::EFAULT);
        }
        Ok(self.addr + off)
    }

    /// `copy_from_user`: reads `buf.len()` bytes at offset `off` of the pinned range.
    ///
    /// # Errors
    /// `EFAULT` once invalidated, past the range, or when the process unmapped a page behind
    /// the simulator's back.
    pub(crate) fn read(&self, off: u64, buf: &mut [u8]) -> Result<(), Errno> {
        let live = self.live.read().unwrap_or_else(PoisonError::into_inner);
        let host = self.host(*live, off, buf.len())?;
        // SAFETY: `host..+len` lies in a region `ProcessMaps` mapped (checked at `pin`), or in
        // client memory the embedder vouched for (`SimConfig::for_any_client`), that is still
        // pinned: the read guard held across the copy keeps `invalidate`, which the
        // notifier runs before any unmap or replacement, from completing until it is done.
        unsafe { copy_from_user(host, buf) }
    }

    /// `copy_to_user`: writes `data` at offset `off` of the pinned range.
    ///
    /// # Errors
    /// As [`UserPages::read`].
    pub(crate) fn write(&self, off: u64, data: &[u8]) -> Result<(), Errno> {
        let live = self.live.read().unwrap_or_else(PoisonError::into_inner);
        let host = self.host(*live, off, data.len())?;
        // SAFETY: as in `read`.
        unsafe { copy_to_user(host, data) }
    }
}

/// `copy_from_user`: reads process memory at `addr`; EFAULT when any byte is unmapped.
///
/// # Safety
/// Every byte of `[addr, addr + buf.len())` lies in a mapping [`ProcessMaps`] made, or in
/// client memory the embedder vouched for (`SimConfig::for_any_client`), that is not unmapped
/// or replaced until this returns (no Rust object lives there; the caller pins it).
pub(super) unsafe fn copy_from_user(addr: u64, buf: &mut [u8]) -> Result<(), Errno> {
    if buf.is_empty() {
        return Ok(());
    }
    if addr == 0 {
        return Err(Errno::EFAULT);
    }
    proc_mem()?
        .read_exact_at(buf, addr)
        .map_err(|_| Errno::EFAULT)
}

/// `copy_to_user`: writes process memory at `addr`; EFAULT when any byte is unmapped.
///
/// # Safety
/// As [`copy_from_user`]: the bytes written land in a pinned mapping of the simulator's,
/// never in memory Rust owns.
pub(super) unsafe fn copy_to_user(addr: u64, data: &[u8]) -> Result<(), Errno> {
    if data.is_empty() {
        return Ok(());
    }
    if addr == 0 {
        return Err(Errno::EFAULT);
    }
    proc_mem()?
        .write_all_at(data, addr)
        .map_err(|_| Errno::EFAULT)
}

/// Whether every byte of `[addr, addr + len)` is mapped in this process (readable and writable
/// when `rw`: what pinning USERPTR pages needs), from `/proc/self/maps`.
pub(super) fn range_is_mapped(addr: u64, len: u64, rw: bool) -> bool {
    let Some(end) = addr.checked_add(len) else {
        return false;
    };
    let Ok(maps) = std::fs::read_to_string("/proc/self/maps") else {
        return false;
    };
    let mut cursor = addr;
    for line in maps.lines() {
        let mut it = line.split_whitespace();
        let (Some(range), Some(perms)) = (it.next(), it.next()) else {
            continue;
        };
        let Some((a, b)) = range.split_once('-') else {
            continue;
        };
        let (Ok(a), Ok(b)) = (u64::from_str_radix(a, 16), u64::from_str_radix(b, 16)) else {
            continue;
        };
        if a <= cursor && cursor < b {
            if rw && !perms.starts_with("rw") {
                return false;
            }
            cursor = b;
            if cursor >= end {
                return true;
            }
        }
    }
    cursor >= end
}
