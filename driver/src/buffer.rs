//! Buffer objects: KFD allocations mapped at one virtual address for the CPU and every GPU.

use crate::error::{Error, MemoryKind, Result};
use crate::kfd_core::KfdCore;
use crate::mem::Mapping;
use crate::sync::lock;
use hcq_core::kfd::{self as abi, Errno, Fd, MapKind, Prot, Request};
use log::debug;
use std::sync::{Arc, Mutex};

/// Page size buffer sizes round up to.
pub(crate) const PAGE: u64 = 4096;

/// Allocation attributes beyond the memory kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct BoOptions {
    /// COHERENT | UNCACHED (rings, signals, rptr/wptr pages).
    pub uncached: bool,
    /// PUBLIC: CPU-visible VRAM.
    pub public: bool,
}

/// One KFD allocation: ALLOC at a reserved VA, the BO mmapped there, mapped to GPUs.
///
/// Dropping unmaps it from every GPU, unmaps the CPU view and frees it, in that order.
pub(crate) struct Bo {
    kfd: Arc<KfdCore>,
    handle: u64,
    size: u64,
    kind: MemoryKind,
    keep: bool,
    /// FREE already succeeded ([`Bo::free_now`]): Drop only unmaps the CPU view.
    freed: bool,
    /// The CPU mapping (taken in Drop so it is unmapped before FREE).
    mapping: Option<Mapping>,
    /// GPUs it is mapped to.
    gpus: Mutex<Vec<u32>>,
}

impl core::fmt::Debug for Bo {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Bo")
            .field("handle", &format_args!("{:#x}", self.handle))
            .field("va", &format_args!("{:#x}", self.va()))
            .field("size", &self.size)
            .field("kind", &self.kind)
            .finish_non_exhaustive()
    }
}

// The allocation entry point lives with the buffer objects it makes, over the raw handle (which
// knows nothing of buffers): `core.alloc(..)` everywhere a BO is needed.
impl KfdCore {
    /// Allocates a buffer object on `gpu_id` (whose VM must be acquired).
    pub(crate) fn alloc(
        self: &Arc<Self>,
        gpu_id: u32,
        size: u64,
        kind: MemoryKind,
        opts: BoOptions,
    ) -> Result<Bo> {
        let render_fd = self.render_fd(gpu_id)?;
        Bo::alloc(self, gpu_id, render_fd, size, kind, opts)
    }
}

fn round_up_page(size: u64) -> Option<u64> {
    size.checked_add(PAGE - 1).map(|s| s / PAGE * PAGE)
}

impl Bo {
    pub(crate) fn alloc(
        kfd: &Arc<KfdCore>,
        gpu_id: u32,
        render_fd: Fd,
        size: u64,
        kind: MemoryKind,
        opts: BoOptions,
    ) -> Result<Self> {
        let size = match round_up_page(size) {
            Some(s) if s > 0 => s,
            _ => {
                return Err(Error::InvalidArgument(format!(
                    "buffer size {size} (must be 1 ..= {} bytes)",
                    u64::MAX - PAGE
                )));
            }
        };
        let mut flags = abi::KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE
            | abi::KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE
            | abi::KFD_IOC_ALLOC_MEM_FLAGS_NO_SUBSTITUTE;
        flags |= match kind {
            MemoryKind::Vram => abi::KFD_IOC_ALLOC_MEM_FLAGS_VRAM,
            MemoryKind::Gtt => abi::KFD_IOC_ALLOC_MEM_FLAGS_GTT,
            MemoryKind::Host => abi::KFD_IOC_ALLOC_MEM_FLAGS_USERPTR,
            MemoryKind::AddressSpace => {
                return Err(Error::InvalidArgument(
                    "cannot allocate bare address space as a buffer".into(),
                ));
            }
        };
        if opts.uncached {
            flags |= abi::KFD_IOC_ALLOC_MEM_FLAGS_COHERENT | abi::KFD_IOC_ALLOC_MEM_FLAGS_UNCACHED;
        }
        if opts.public || kind == MemoryKind::Host {
            flags |= abi::KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC;
        }
        let oom = |e: Error| match e {
            Error::Sys { errno, .. } if errno == Errno::ENOMEM => Error::OutOfMemory {
                requested: size,
                kind: MemoryKind::AddressSpace,
                errno,
            },
            e => e,
        };
        let mut mapping = if kind == MemoryKind::Host {
            Mapping::new(
                &kfd.sys,
                "mmap host buffer",
                size,
                Prot::READ_WRITE,
                MapKind::Anonymous,
            )
            .map_err(oom)?
        } else {
            Mapping::reserve(&kfd.sys, size).map_err(oom)?
        };
        let va = mapping.addr();
        let mut args = abi::AllocMemoryOfGpuArgs {
            va_addr: va,
            size,
            handle: 0,
            mmap_offset: if kind == MemoryKind::Host { va } else { 0 },
            gpu_id,
            flags,
        };
        kfd.ioctl(abi::AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &mut args)
            .map_err(|e| Error::alloc("ALLOC_MEMORY_OF_GPU", e, size, kind))?;
        debug!(
            "ALLOC {kind} {size:#x} B at {va:#x} on gpu {gpu_id:#x}: handle {:#x} flags {flags:#x}",
            args.handle
        );
        // From here on, a failure must FREE the handle: build the owner first.
        let mut bo = Self {
            kfd: Arc::clone(kfd),
            handle: args.handle,
            size,
            kind,
            keep: false,
            freed: false,
            mapping: None,
            gpus: Mutex::new(Vec::new()),
        };
        if kind != MemoryKind::Host {
            mapping.overlay_file("mmap buffer object", render_fd, args.mmap_offset)?;
        }
        bo.mapping = Some(mapping);
        bo.map_to(gpu_id)?;
        Ok(bo)
    }

    /// GPU (and CPU) virtual address.
    pub(crate) fn va(&self) -> u64 {
        self.mapping.as_ref().map_or(0, Mapping::addr)
    }

    /// Never FREE this BO (KFD refuses once it is the registered event page).
    pub(crate) fn set_keep(&mut self) {
        self.keep = true;
    }

    /// KFD's handle.
    pub(crate) fn handle(&self) -> u64 {
        self.handle
    }

    /// Size in bytes (page multiple).
    pub(crate) fn size(&self) -> u64 {
        self.size
    }

    /// The CPU view.
    pub(crate) fn mapping(&self) -> &Mapping {
        // `mapping` is Some from the end of `alloc` until Drop takes it; `alloc` returns no Bo
        // before it is set, and nothing calls this after Drop.
        // PANIC: unreachable by the invariant above (no input, OS or GPU state reaches it).
        self.mapping
            .as_ref()
            .expect("Bo mapping present until drop")
    }

    /// Maps the BO into `gpu_id`'s VM (no-op when already mapped there).
    pub(crate) fn map_to(&self, gpu_id: u32) -> Result<()> {
        let mut gpus = lock(&self.gpus);
        if gpus.contains(&gpu_id) {
            return Ok(());
        }
        let ids = [gpu_id];
        let mut args = abi::MapMemoryToGpuArgs {
            handle: self.handle,
            ..Default::default()
        };
        let io = abi::AMDKFD_IOC_MAP_MEMORY_TO_GPU;
        self.kfd
            .request(io.name(), Request::map_memory(io, &mut args, &ids))
            .map_err(|e| Error::alloc("MAP_MEMORY_TO_GPU", e, self.size, self.kind))?;
        if args.n_success != 1 {
            return Err(Error::Protocol(format!(
                "MAP_MEMORY_TO_GPU mapped {} of 1 devices",
                args.n_success
            )));
        }
        gpus.push(gpu_id);
        Ok(())
    }

    /// GPUs the BO is mapped to.
    pub(crate) fn mapped_gpus(&self) -> Vec<u32> {
        lock(&self.gpus).clone()
    }

    /// Unmaps the BO from every GPU and FREEs it now, reporting what fails (Drop can only log).
    /// On failure the BO is left as it was, mapped back to the GPUs an UNMAP had already taken
    /// it from, so its owner can retry or drop it. The CPU view stays until Drop (the kernel
    /// keeps the memory alive while it is mapped).
    ///
    /// The caller guarantees no GPU still uses the BO (it waited for the GPUs' work).
    pub(crate) fn free_now(&mut self) -> Result<()> {
        if self.keep || self.freed {
            return Err(Error::InvalidArgument(
                "this buffer object is not freed by its owner".into(),
            ));
        }
        let gpus = lock(&self.gpus).clone();
        if !gpus.is_empty() {
            let mut args = abi::UnmapMemoryFromGpuArgs {
                handle: self.handle,
                ..Default::default()
            };
            let io = abi::AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU;
            let r = self
                .kfd
                .request(io.name(), Request::map_memory(io, &mut args, &gpus));
            if let Err(e) = r {
                // The kernel unmapped the first `n_success` devices before failing.
                let done = usize::try_from(args.n_success).unwrap_or(0).min(gpus.len());
                lock(&self.gpus).retain(|g| !gpus.get(..done).unwrap_or_default().contains(g));
                self.remap(&gpus);
                return Err(Error::sys("UNMAP_MEMORY_FROM_GPU", e));
            }
            lock(&self.gpus).clear();
        }
        let mut args = abi::FreeMemoryOfGpuArgs {
            handle: self.handle,
        };
        if let Err(e) = self
            .kfd
            .ioctl(abi::AMDKFD_IOC_FREE_MEMORY_OF_GPU, &mut args)
        {
            self.remap(&gpus);
            return Err(Error::sys("FREE_MEMORY_OF_GPU", e));
        }
        self.freed = true;
        Ok(())
    }

    /// Maps the BO back to `gpus` after a failed [`Bo::free_now`] (best effort: a GPU it cannot
    /// be mapped to again faults on access, and the BO's GPU list says so).
    fn remap(&self, gpus: &[u32]) {
        for &g in gpus {
            if let Err(e) = self.map_to(g) {
                log::warn!(
                    "mapping handle {:#x} back to gpu {g:#x} after a failed free: {e}",
                    self.handle
                );
            }
        }
    }
}

impl Drop for Bo {
    fn drop(&mut self) {
        let gpus = core::mem::take(&mut *lock(&self.gpus));
        let mut unmapped_all = true;
        if !gpus.is_empty() {
            let mut args = abi::MapMemoryToGpuArgs {
                handle: self.handle,
                ..Default::default()
            };
            if let Err(e) = self.kfd.unmap_teardown(&mut args, &gpus) {
                log::error!(
                    "UNMAP_MEMORY_FROM_GPU of handle {:#x} failed: {e}",
                    self.handle
                );
                unmapped_all = false;
            }
        }
        drop(self.mapping.take());
        if self.keep || self.freed {
            return;
        }
        if !unmapped_all {
            // FREE would fail with EBUSY; the handle goes when /dev/kfd closes.
            return;
        }
        let mut args = abi::FreeMemoryOfGpuArgs {
            handle: self.handle,
        };
        if let Err(e) = self
            .kfd
            .ioctl_teardown(abi::AMDKFD_IOC_FREE_MEMORY_OF_GPU, &mut args)
        {
            log::error!(
                "FREE_MEMORY_OF_GPU of handle {:#x} failed: {e}",
                self.handle
            );
        }
    }
}
