//! `LinuxKfd`: core's [`KfdSys`] port on Linux, through rustix only.
//!
//! Files are owned by the port (`OwnedFd` in a table keyed by the number handed out), so a
//! stale [`Fd`] is `EBADF`, never someone else's file. Mappings are tracked too: a `MAP_FIXED`
//! mapping is only accepted inside a region this port mapped earlier (the driver reserves the
//! address range, then maps the buffer object over it), and `munmap` only takes a region this
//! port handed out. That keeps the safe `mmap`/`munmap` methods from clobbering memory Rust owns.
//!
//! The ioctl argument is a [`Request`]: its bytes must be exactly the size encoded in the request
//! number, so the kernel never reads or writes past them, and the user pointers inside it
//! (MAP_MEMORY_TO_GPU's device list, WAIT_EVENTS' event array) come from
//! [`Request::kernel_arg`], which sets them from the slices the request borrows: the kernel
//! follows them only into that memory (GET_QUEUE_WAVE_STATE, whose argument carries no length
//! for how far the kernel writes, is refused with `ENOTSUPP`). Ioctls go only to `/dev/kfd`
//! files (a DRM render node
//! dispatches other numbers, with other pointers), so no safe caller can make the kernel write
//! memory the request does not borrow.

use core::ffi::c_void;
use hcq_core::kfd::{self as abi, Errno, Fd, KfdSys, MapKind, Prot, Request};
use log::{debug, trace};
use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use rustix::fs::{Mode, OFlags};
use rustix::ioctl::{Ioctl, IoctlOutput, Opcode};
use rustix::mm::{MapFlags, ProtFlags};
use std::collections::HashSet;
use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use crate::sync::lock;

/// Path of the KFD device (the only file this port sends ioctls to).
pub const KFD_PATH: &str = "/dev/kfd";

/// Bytes per page (x86-64 and the arm64 4 KiB configuration amdgpu supports).
pub(crate) const PAGE_SIZE: u64 = 4096;

/// `_IOC_SIZE(request)`: bits 16..30 of a Linux ioctl number.
#[must_use]
pub(crate) const fn ioctl_size(request: u32) -> usize {
    // CAST: a 14-bit field always fits usize.
    ((request >> 16) & 0x3fff) as usize
}

/// An ioctl on raw bytes: rustix's [`Ioctl`] with the opcode taken at run time.
struct RawIoctl<'a> {
    request: Opcode,
    arg: &'a mut [u8],
}

// SAFETY: `as_ptr` points at `arg`, which is exactly `_IOC_SIZE(request)` bytes (checked by
// `LinuxKfd::ioctl` before constructing this), so the kernel's copy_from_user/copy_to_user of the
// argument stays inside it; `arg` comes from `Request::kernel_arg`, so its user pointers address
// the slices the request borrows; the output is the unit value and reads nothing.
unsafe impl Ioctl for RawIoctl<'_> {
    type Output = ();
    const IS_MUTATING: bool = true;

    fn opcode(&self) -> Opcode {
        self.request
    }

    fn as_ptr(&mut self) -> *mut c_void {
        self.arg.as_mut_ptr().cast()
    }

    unsafe fn output_from_ptr(
        _out: IoctlOutput,
        _extract_output: *mut c_void,
    ) -> rustix::io::Result<Self::Output> {
        Ok(())
    }
}

fn errno(e: rustix::io::Errno) -> Errno {
    Errno(e.raw_os_error())
}

/// The Linux port: `/dev/kfd`, DRM render nodes and sysfs through rustix.
#[derive(Debug, Default)]
pub(crate) struct LinuxKfd {
    files: Mutex<HashMap<i32, OwnedFd>>,
    /// The files that are `/dev/kfd` (the only ones ioctls go to).
    kfd_files: Mutex<HashSet<i32>>,
    /// Regions this port mapped: start address -> length in bytes.
    regions: Mutex<BTreeMap<u64, u64>>,
}

impl LinuxKfd {
    /// A port with no open files.
    #[must_use]
    pub(crate) fn new() -> Self {
        Self::default()
    }

    fn with_fd<R>(&self, fd: Fd, f: impl FnOnce(BorrowedFd<'_>) -> R) -> Result<R, Errno> {
        let files = lock(&self.files);
        let owned = files.get(&fd.0).ok_or(Errno::EBADF)?;
        Ok(f(owned.as_fd()))
    }
}

impl LinuxKfd {
    /// ALLOC_MEMORY_OF_GPU with `USERPTR` hands the kernel a host range (`mmap_offset`,
    /// `size`) that it pins until FREE, and that the GPU then reads and writes: the one
    /// pointer a [`hcq_core::kfd::PlainArgs`] struct carries. The port accepts it only inside a
    /// region it mapped itself (as the simulator does), memory no Rust object lives in, and
    /// returns the region table's guard for the caller to hold across the ioctl (`EFAULT`
    /// outside its regions). `None` for every other request.
    fn userptr_regions(
        &self,
        request: u32,
        arg: &[u8],
    ) -> Result<Option<std::sync::MutexGuard<'_, BTreeMap<u64, u64>>>, Errno> {
        if request != abi::AMDKFD_IOC_ALLOC_MEMORY_OF_GPU.request() {
            return Ok(None);
        }
        let a = bytemuck::try_pod_read_unaligned::<abi::AllocMemoryOfGpuArgs>(arg)
            .map_err(|_| Errno::EINVAL)?;
        if a.flags & abi::KFD_IOC_ALLOC_MEM_FLAGS_USERPTR == 0 {
            return Ok(None);
        }
        let regions = lock(&self.regions);
        if !inside(&regions, a.mmap_offset, a.size) {
            return Err(Errno::EFAULT);
        }
        Ok(Some(regions))
    }
}

/// Whether `[addr, addr + len)` lies inside one of `regions` (start -> length).
fn inside(regions: &BTreeMap<u64, u64>, addr: u64, len: u64) -> bool {
    let Some((&start, &rlen)) = regions.range(..=addr).next_back() else {
        return false;
    };
    match (addr.checked_add(len), start.checked_add(rlen)) {
        (Some(end), Some(rend)) => end <= rend,
        _ => false,
    }
}

impl KfdSys for LinuxKfd {
    fn open(&self, path: &str) -> Result<Fd, Errno> {
        let owned =
            rustix::fs::open(path, OFlags::RDWR | OFlags::CLOEXEC, Mode::empty()).map_err(errno)?;
        let raw = rustix::fd::AsRawFd::as_raw_fd(&owned);
        debug!("open {path} -> fd {raw}");
        lock(&self.files).insert(raw, owned);
        if path == KFD_PATH {
            lock(&self.kfd_files).insert(raw);
        }
        Ok(Fd(raw))
    }

    fn close(&self, fd: Fd) -> Result<(), Errno> {
        let owned = lock(&self.files).remove(&fd.0).ok_or(Errno::EBADF)?;
        lock(&self.kfd_files).remove(&fd.0);
        debug!("close fd {}", fd.0);
        drop(owned);
        Ok(())
    }

    fn ioctl(&self, fd: Fd, mut req: Request<'_>) -> Result<(), Errno> {
        let request = req.request();
        if req.nr() == abi::AMDKFD_IOC_GET_QUEUE_WAVE_STATE.nr() {
            // The kernel writes the queue's control-stack header(s) and, on gfx9, its saved
            // control stack past `ctl_stack_address`, as far as that queue's save area reaches:
            // no length in the argument bounds it by the slice the request borrows.
            return Err(Errno::ENOTSUPP);
        }
        let arg = req.kernel_arg();
        if arg.len() != ioctl_size(request) {
            return Err(Errno::EINVAL);
        }
        // Held until the kernel has pinned the range: no munmap can slip in between.
        let _regions = self.userptr_regions(request, arg)?;
        if !lock(&self.kfd_files).contains(&fd.0) {
            // Not /dev/kfd (a render node dispatches the same numbers to DRM ioctls with other
            // pointers), or no file at all.
            return Err(if lock(&self.files).contains_key(&fd.0) {
                Errno::ENOTTY
            } else {
                Errno::EBADF
            });
        }
        trace!(
            "ioctl fd {} request {request:#010x} ({} B)",
            fd.0,
            arg.len()
        );
        self.with_fd(fd, |bfd| {
            let raw = RawIoctl { request, arg };
            // SAFETY: `RawIoctl` hands the kernel exactly `_IOC_SIZE(request)` bytes (checked
            // above) of a `/dev/kfd` request whose user pointers address only memory the request
            // borrows (`kernel_arg`; see the module docs).
            unsafe { rustix::ioctl::ioctl(bfd, raw) }
        })?
        .map_err(errno)
    }

    fn mmap(
        &self,
        fixed_addr: Option<u64>,
        len: u64,
        prot: Prot,
        kind: MapKind,
    ) -> Result<u64, Errno> {
        let size = usize::try_from(len).map_err(|_| Errno::ENOMEM)?;
        if len == 0 || len % PAGE_SIZE != 0 {
            return Err(Errno::EINVAL);
        }
        // Held across the check and the mmap (as the simulator's twin does): a munmap of the
        // region cannot slip between them and leave MAP_FIXED replacing pages someone else
        // mapped there since.
        let mut regions = lock(&self.regions);
        if let Some(addr) = fixed_addr
            && (addr % PAGE_SIZE != 0 || !inside(&regions, addr, len))
        {
            return Err(Errno::EINVAL);
        }
        let prot_flags = ProtFlags::from_bits_truncate(prot.0);
        let fixed = if fixed_addr.is_some() {
            MapFlags::FIXED
        } else {
            MapFlags::empty()
        };
        // Only a fixed address inside our own region is used as a hint-with-FIXED; otherwise null.
        let hint: *mut c_void = match fixed_addr {
            Some(a) => {
                core::ptr::without_provenance_mut(usize::try_from(a).map_err(|_| Errno::EINVAL)?)
            }
            None => core::ptr::null_mut(),
        };
        let ptr = match kind {
            MapKind::Reserve => {
                // SAFETY: PROT_NONE private anonymous memory; with FIXED it replaces only pages of
                // a region this port mapped (checked above), which no Rust reference points into
                // except through the driver's own mapping owners.
                unsafe {
                    rustix::mm::mmap_anonymous(
                        hint,
                        size,
                        ProtFlags::empty(),
                        MapFlags::PRIVATE | MapFlags::NORESERVE | fixed,
                    )
                }
            }
            MapKind::Anonymous => {
                // SAFETY: as above: fresh memory, or pages of a region this port owns.
                unsafe {
                    rustix::mm::mmap_anonymous(hint, size, prot_flags, MapFlags::SHARED | fixed)
                }
            }
            MapKind::File { fd, offset } => self.with_fd(fd, |bfd| {
                // SAFETY: as above; the file is one this port opened and still owns.
                unsafe {
                    rustix::mm::mmap(
                        hint,
                        size,
                        prot_flags,
                        MapFlags::SHARED | fixed,
                        bfd,
                        offset,
                    )
                }
            })?,
        }
        .map_err(errno)?;
        // CAST: usize is 64 bits on every target amdkfd exists for.
        let addr = ptr.expose_provenance() as u64;
        debug!("mmap {kind:?} {len:#x} B prot {:#x} at {addr:#x}", prot.0);
        if fixed_addr.is_none() {
            regions.insert(addr, len);
        }
        Ok(addr)
    }

    fn munmap(&self, addr: u64, len: u64) -> Result<(), Errno> {
        let mut regions = lock(&self.regions);
        if regions.get(&addr) != Some(&len) {
            return Err(Errno::EINVAL);
        }
        let size = usize::try_from(len).map_err(|_| Errno::EINVAL)?;
        let ptr: *mut c_void =
            core::ptr::without_provenance_mut(usize::try_from(addr).map_err(|_| Errno::EINVAL)?);
        // SAFETY: exactly a region this port mapped and has not unmapped; the driver's owning
        // types call this only from Drop, after their last view into it is gone.
        unsafe { rustix::mm::munmap(ptr, size) }.map_err(errno)?;
        regions.remove(&addr);
        debug!("munmap {addr:#x} {len:#x} B");
        Ok(())
    }

    fn read_file(&self, path: &str, buf: &mut [u8]) -> Result<usize, Errno> {
        let fd = rustix::fs::open(path, OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty())
            .map_err(errno)?;
        let mut filled = 0;
        loop {
            let rest = buf.get_mut(filled..).unwrap_or_default();
            if rest.is_empty() {
                // Full: is there more?
                let mut probe = [0u8; 1];
                return match rustix::io::read(&fd, &mut probe).map_err(errno)? {
                    0 => Ok(filled),
                    _ => Err(Errno::ENOSPC),
                };
            }
            match rustix::io::read(&fd, rest) {
                Ok(0) => return Ok(filled),
                Ok(n) => filled += n,
                Err(rustix::io::Errno::INTR) => {}
                Err(e) => return Err(errno(e)),
            }
        }
    }
}

impl Drop for LinuxKfd {
    fn drop(&mut self) {
        let regions = core::mem::take(&mut *lock(&self.regions));
        for (addr, len) in regions {
            log::warn!("LinuxKfd dropped with {len:#x} B still mapped at {addr:#x}; unmapping");
            if let (Ok(a), Ok(size)) = (usize::try_from(addr), usize::try_from(len)) {
                // SAFETY: a region this port mapped; the port is being dropped, and every owner
                // of a view holds an `Arc` to the port, so none is left.
                let _ = unsafe { rustix::mm::munmap(core::ptr::without_provenance_mut(a), size) };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustix::fs::MemfdFlags;

    fn memfd_path(len: u64) -> (OwnedFd, String) {
        let fd = rustix::fs::memfd_create("hcq-test", MemfdFlags::CLOEXEC).unwrap();
        rustix::fs::ftruncate(&fd, len).unwrap();
        let path = format!("/proc/self/fd/{}", rustix::fd::AsRawFd::as_raw_fd(&fd));
        (fd, path)
    }

    #[test]
    fn ioctl_size_field() {
        // AMDKFD_IOC_GET_VERSION = _IOR('K', 1, 8 bytes), CREATE_QUEUE = _IOWR('K', 2, 96 bytes).
        assert_eq!(ioctl_size(0x8008_4b01), 8);
        assert_eq!(ioctl_size(0xc060_4b02), 96);
    }

    #[test]
    fn ioctl_rejects_wrong_size_and_unknown_fd() {
        let kfd = LinuxKfd::new();
        let mut arg = [0u8; 4];
        let req = Request::raw(0x8008_4b01, &mut arg).unwrap();
        assert_eq!(kfd.ioctl(Fd(12345), req), Err(Errno::EINVAL));
        let mut v = hcq_core::kfd::GetVersionArgs::default();
        let req = Request::new(hcq_core::kfd::AMDKFD_IOC_GET_VERSION, &mut v);
        assert_eq!(kfd.ioctl(Fd(12345), req), Err(Errno::EBADF));
    }

    #[test]
    fn ioctl_on_a_memfd_is_enotty() {
        let kfd = LinuxKfd::new();
        let (_keep, path) = memfd_path(4096);
        let fd = kfd.open(&path).unwrap();
        // Not /dev/kfd: refused before the kernel sees it, even a pointer-carrying request.
        let mut v = hcq_core::kfd::GetVersionArgs::default();
        let req = Request::new(hcq_core::kfd::AMDKFD_IOC_GET_VERSION, &mut v);
        assert_eq!(kfd.ioctl(fd, req), Err(Errno::ENOTTY));
        let mut w = hcq_core::kfd::WaitEventsArgs::default();
        let req = Request::wait_events(&mut w, &mut []);
        assert_eq!(kfd.ioctl(fd, req), Err(Errno::ENOTTY));
        // GET_QUEUE_WAVE_STATE: how far the kernel writes is not bounded by the borrowed slice.
        let mut q = hcq_core::kfd::GetQueueWaveStateArgs::default();
        let req = Request::queue_wave_state(&mut q, &mut []);
        assert_eq!(kfd.ioctl(fd, req), Err(Errno::ENOTSUPP));
        kfd.close(fd).unwrap();
        assert_eq!(kfd.close(fd), Err(Errno::EBADF));
    }

    #[test]
    fn reserve_then_map_file_fixed_shares_bytes() {
        let kfd = LinuxKfd::new();
        let (keep, path) = memfd_path(2 * PAGE_SIZE);
        let fd = kfd.open(&path).unwrap();
        let va = kfd
            .mmap(None, 2 * PAGE_SIZE, Prot::NONE, MapKind::Reserve)
            .unwrap();
        assert_eq!(va % PAGE_SIZE, 0);
        let got = kfd
            .mmap(
                Some(va),
                2 * PAGE_SIZE,
                Prot::READ_WRITE,
                MapKind::File { fd, offset: 0 },
            )
            .unwrap();
        assert_eq!(got, va);
        // Write through the file, read it through both mappings (the fixed one and a second
        // one the kernel places); write through one mapping, read it back through the file.
        rustix::io::pwrite(&keep, b"hcq!", PAGE_SIZE + 8).unwrap();
        let second = kfd
            .mmap(
                None,
                2 * PAGE_SIZE,
                Prot::READ_WRITE,
                MapKind::File { fd, offset: 0 },
            )
            .unwrap();
        assert_ne!(second, va);
        let word = |base: u64| {
            // CAST: a user address fits usize.
            core::ptr::with_exposed_provenance_mut::<[u8; 4]>((base + PAGE_SIZE + 8) as usize)
        };
        // SAFETY: both are live read-write shared mappings of the memfd this test made, two
        // pages long; nothing else refers to them.
        unsafe {
            assert_eq!(&word(va).read_volatile(), b"hcq!");
            assert_eq!(&word(second).read_volatile(), b"hcq!");
            word(second).write_volatile(*b"back");
        }
        let mut back = [0u8; 4];
        rustix::io::pread(&keep, &mut back, PAGE_SIZE + 8).unwrap();
        assert_eq!(&back, b"back");
        // Fixed mappings outside our regions are refused.
        assert_eq!(
            kfd.mmap(
                Some(va + 2 * PAGE_SIZE),
                PAGE_SIZE,
                Prot::READ_WRITE,
                MapKind::Anonymous
            ),
            Err(Errno::EINVAL)
        );
        // munmap takes only whole regions we handed out.
        assert_eq!(kfd.munmap(va + PAGE_SIZE, PAGE_SIZE), Err(Errno::EINVAL));
        kfd.munmap(va, 2 * PAGE_SIZE).unwrap();
        kfd.munmap(second, 2 * PAGE_SIZE).unwrap();
        assert_eq!(kfd.munmap(va, 2 * PAGE_SIZE), Err(Errno::EINVAL));
    }

    #[test]
    fn read_file_whole_and_too_small() {
        let kfd = LinuxKfd::new();
        let (keep, path) = memfd_path(0);
        rustix::io::write(&keep, b"gpu_id 1234\nsimd_count 96\n").unwrap();
        let mut buf = [0u8; 64];
        let n = kfd.read_file(&path, &mut buf).unwrap();
        assert_eq!(&buf[..n], b"gpu_id 1234\nsimd_count 96\n");
        let mut small = [0u8; 8];
        assert_eq!(kfd.read_file(&path, &mut small), Err(Errno::ENOSPC));
        let mut exact = [0u8; 26];
        assert_eq!(kfd.read_file(&path, &mut exact), Ok(26));
        assert_eq!(
            kfd.read_file("/nonexistent/hcq", &mut buf),
            Err(Errno::ENOENT)
        );
    }

    /// A `MAP_FIXED` into a region races the region's `munmap` and a new mapping that reuses
    /// its address: the fixed mapping must land only while the region is still ours, never
    /// over the new mapping's pages (the check and the mmap under one lock).
    #[test]
    fn map_fixed_never_lands_in_an_unmapped_region() {
        use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};
        use std::sync::Arc;
        let kfd = Arc::new(LinuxKfd::new());
        let region = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (_keep, path) = memfd_path(PAGE_SIZE);
        let fd = kfd.open(&path).unwrap();
        let file = MapKind::File { fd, offset: 0 };
        let mapper = {
            let (kfd, region, stop) = (Arc::clone(&kfd), Arc::clone(&region), Arc::clone(&stop));
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let r = region.load(Ordering::Relaxed);
                    if r != 0 {
                        let _ = kfd.mmap(Some(r), PAGE_SIZE, Prot::READ_WRITE, file);
                    }
                }
            })
        };
        // Mapping the file elsewhere keeps the port's file table busy, so the mapper often
        // waits for it after its region check: the window a check without the lock leaves.
        let busy = {
            let (kfd, stop) = (Arc::clone(&kfd), Arc::clone(&stop));
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    if let Ok(a) = kfd.mmap(None, PAGE_SIZE, Prot::READ_WRITE, file) {
                        let _ = kfd.munmap(a, PAGE_SIZE);
                    }
                }
            })
        };
        let start = std::time::Instant::now();
        let mut rounds = 0u32;
        while start.elapsed() < core::time::Duration::from_millis(500) {
            rounds += 1;
            let r = kfd
                .mmap(None, PAGE_SIZE, Prot::NONE, MapKind::Reserve)
                .unwrap();
            region.store(r, Ordering::Relaxed);
            for _ in 0..rounds % 64 {
                core::hint::spin_loop();
            }
            region.store(0, Ordering::Relaxed);
            kfd.munmap(r, PAGE_SIZE).unwrap();
            // Memory mapped outside the port (as the allocator maps Rust's heap), likely at the
            // freed address: the port must never map over it.
            // SAFETY: a fresh anonymous page where the kernel chooses aliases nothing.
            let p = unsafe {
                rustix::mm::mmap_anonymous(
                    core::ptr::null_mut(),
                    4096,
                    ProtFlags::READ | ProtFlags::WRITE,
                    MapFlags::PRIVATE,
                )
            }
            .unwrap()
            .cast::<u64>();
            // SAFETY: `p` is that fresh read-write page, which only this thread addresses.
            unsafe { p.write_volatile(0x5eed) };
            for _ in 0..200 {
                core::hint::spin_loop();
            }
            // SAFETY: as above.
            let back = unsafe { p.read_volatile() };
            // SAFETY: the page this test mapped above; nothing refers to it any more.
            unsafe { rustix::mm::munmap(p.cast(), 4096) }.unwrap();
            if back != 0x5eed {
                stop.store(true, Ordering::Relaxed);
                let _ = (mapper.join(), busy.join());
                panic!("round {rounds}: a MAP_FIXED replaced a page mapped after the unmap");
            }
        }
        stop.store(true, Ordering::Relaxed);
        mapper.join().unwrap();
        busy.join().unwrap();
    }

    /// USERPTR memory the kernel would pin and the GPU write must be a region the port
    /// mapped: the test's own heap is refused before the request reaches any kernel.
    #[test]
    fn userptr_outside_the_ports_regions_is_efault() {
        let kfd = LinuxKfd::new();
        let (_keep, path) = memfd_path(PAGE_SIZE);
        let fd = kfd.open(&path).unwrap();
        let heap = vec![0u8; 3 * PAGE_SIZE as usize];
        let host = (heap.as_ptr() as u64).next_multiple_of(PAGE_SIZE);
        let mut a = abi::AllocMemoryOfGpuArgs {
            va_addr: 0x1_0000_0000,
            size: PAGE_SIZE,
            mmap_offset: host,
            flags: abi::KFD_IOC_ALLOC_MEM_FLAGS_USERPTR,
            ..Default::default()
        };
        let alloc = abi::AMDKFD_IOC_ALLOC_MEMORY_OF_GPU;
        assert_eq!(
            kfd.ioctl(fd, Request::new(alloc, &mut a)),
            Err(Errno::EFAULT)
        );
        // Inside a region of the port's: past the check (and refused as not /dev/kfd).
        let mine = kfd
            .mmap(None, PAGE_SIZE, Prot::READ_WRITE, MapKind::Anonymous)
            .unwrap();
        a.mmap_offset = mine;
        assert_eq!(
            kfd.ioctl(fd, Request::new(alloc, &mut a)),
            Err(Errno::ENOTTY)
        );
        // Not USERPTR: the offset is no host address.
        a.mmap_offset = host;
        a.flags = abi::KFD_IOC_ALLOC_MEM_FLAGS_GTT;
        assert_eq!(
            kfd.ioctl(fd, Request::new(alloc, &mut a)),
            Err(Errno::ENOTTY)
        );
        kfd.munmap(mine, PAGE_SIZE).unwrap();
    }
}
