//! A minimal "driver" for sim tests: raw ioctls with core's ABI structs.
#![allow(dead_code)]

use hcq_core::kfd::topology::NodeProperties;
use hcq_core::kfd::*;
use hcq_sim::{SimConfig, SimKfd};
use std::sync::Arc;

pub struct Proc {
    pub sim: Arc<SimKfd>,
    pub kfd: Fd,
    pub render: Vec<Fd>,
    pub gpus: Vec<u32>,
}

pub const GTT_FLAGS: u32 = KFD_IOC_ALLOC_MEM_FLAGS_GTT
    | KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE
    | KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE
    | KFD_IOC_ALLOC_MEM_FLAGS_COHERENT
    | KFD_IOC_ALLOC_MEM_FLAGS_UNCACHED;
pub const VRAM_FLAGS: u32 = KFD_IOC_ALLOC_MEM_FLAGS_VRAM
    | KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE
    | KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE;

/// A BO the test allocated and CPU-mapped at its VA.
#[derive(Clone, Copy, Debug)]
pub struct Buf {
    pub handle: u64,
    pub va: u64,
    pub size: u64,
    pub gpu_id: u32,
}

impl Proc {
    /// Opens /dev/kfd and every render node, acquires every VM.
    pub fn new(cfg: SimConfig) -> Self {
        // hcq's suites run with the host guard on (a library user's simulator has it off).
        let cfg = SimConfig {
            host_guard: true,
            ..cfg
        };
        let sim = Arc::new(SimKfd::new(cfg).unwrap());
        let kfd = sim.open("/dev/kfd").unwrap();
        let mut p = Self {
            sim,
            kfd,
            render: Vec::new(),
            gpus: Vec::new(),
        };
        for node in 1.. {
            let mut buf = [0u8; 4096];
            let path = format!("/sys/devices/virtual/kfd/kfd/topology/nodes/{node}/gpu_id");
            let Ok(n) = p.sim.read_file(&path, &mut buf) else {
                break;
            };
            let gpu_id = topology::parse_gpu_id(core::str::from_utf8(&buf[..n]).unwrap()).unwrap();
            let path = format!("/sys/devices/virtual/kfd/kfd/topology/nodes/{node}/properties");
            let n = p.sim.read_file(&path, &mut buf).unwrap();
            let props = NodeProperties::parse(core::str::from_utf8(&buf[..n]).unwrap()).unwrap();
            let fd = p
                .sim
                .open(&format!("/dev/dri/renderD{}", props.drm_render_minor))
                .unwrap();
            p.render.push(fd);
            p.gpus.push(gpu_id);
        }
        for i in 0..p.gpus.len() {
            let mut a = AcquireVmArgs {
                drm_fd: p.render[i].0 as u32,
                gpu_id: p.gpus[i],
            };
            p.ioctl(AMDKFD_IOC_ACQUIRE_VM, &mut a).unwrap();
        }
        p
    }

    pub fn one() -> Self {
        // The suites run strict: an access the hardware tolerates faults.
        Self::new(SimConfig {
            strict: true,
            ..SimConfig::default()
        })
    }

    pub fn ioctl<T: PlainArgs>(&self, io: Ioctl<T>, a: &mut T) -> Result<(), Errno> {
        self.sim.ioctl(self.kfd, Request::new(io, a))
    }

    /// Any request number on raw bytes (refused for commands that carry pointers).
    pub fn ioctl_raw(&self, request: u32, bytes: &mut [u8]) -> Result<(), Errno> {
        let req = Request::raw(request, bytes).expect("a command without user pointers");
        self.sim.ioctl(self.kfd, req)
    }

    /// MAP/UNMAP with `a` as the caller set it (`n_devices` included: past the end of `ids` is
    /// the kernel's EFAULT), the device list borrowed from `ids`.
    pub fn map_ioctl(
        &self,
        io: Ioctl<MapMemoryToGpuArgs>,
        a: &mut MapMemoryToGpuArgs,
        ids: &[u32],
    ) -> Result<(), Errno> {
        let n = a.n_devices;
        let mut req = Request::map_memory(io, a, ids);
        req.arg_mut()[16..20].copy_from_slice(&n.to_le_bytes());
        self.sim.ioctl(self.kfd, req)
    }

    /// A pointer-carrying request with its element count (the u32 at `count_at`) set back to
    /// `n`, as a caller who wrote a count past the borrowed array would.
    pub fn ioctl_count(&self, mut req: Request<'_>, count_at: usize, n: u32) -> Result<(), Errno> {
        req.arg_mut()[count_at..count_at + 4].copy_from_slice(&n.to_le_bytes());
        self.sim.ioctl(self.kfd, req)
    }

    pub fn gpu(&self) -> u32 {
        self.gpus[0]
    }

    /// Reserve VA, ALLOC there, mmap through the render node at the VA (not GPU-mapped).
    pub fn alloc_at(&self, gpu: usize, size: u64, flags: u32) -> Result<Buf, Errno> {
        let va = self
            .sim
            .mmap(None, size, Prot::NONE, MapKind::Reserve)
            .unwrap();
        let mut a = AllocMemoryOfGpuArgs {
            va_addr: va,
            size,
            gpu_id: self.gpus[gpu],
            flags,
            ..Default::default()
        };
        if let Err(e) = self.ioctl(AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &mut a) {
            self.sim.munmap(va, size).unwrap();
            return Err(e);
        }
        let got = self
            .sim
            .mmap(
                Some(va),
                size,
                Prot::READ_WRITE,
                MapKind::File {
                    fd: self.render[gpu],
                    offset: a.mmap_offset,
                },
            )
            .unwrap();
        assert_eq!(got, va);
        Ok(Buf {
            handle: a.handle,
            va,
            size,
            gpu_id: self.gpus[gpu],
        })
    }

    /// alloc_at + MAP to the owner GPU.
    pub fn alloc(&self, size: u64, flags: u32) -> Buf {
        let b = self.alloc_at(0, size, flags).unwrap();
        self.map(b.handle, &[b.gpu_id]).unwrap();
        b
    }

    pub fn map(&self, handle: u64, gpus: &[u32]) -> Result<u32, Errno> {
        let mut a = MapMemoryToGpuArgs {
            handle,
            ..Default::default()
        };
        let r = self.sim.ioctl(
            self.kfd,
            Request::map_memory(AMDKFD_IOC_MAP_MEMORY_TO_GPU, &mut a, gpus),
        );
        r.map(|()| a.n_success)
    }

    pub fn unmap(&self, handle: u64, gpus: &[u32]) -> Result<u32, Errno> {
        let mut a = UnmapMemoryFromGpuArgs {
            handle,
            ..Default::default()
        };
        let r = self.sim.ioctl(
            self.kfd,
            Request::map_memory(AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU, &mut a, gpus),
        );
        r.map(|()| a.n_success)
    }

    pub fn free_raw(&self, handle: u64) -> Result<(), Errno> {
        let mut a = FreeMemoryOfGpuArgs { handle };
        self.ioctl(AMDKFD_IOC_FREE_MEMORY_OF_GPU, &mut a)
    }

    /// Unmap from `gpus`, munmap the CPU view, free.
    pub fn release(&self, b: Buf, gpus: &[u32]) {
        if !gpus.is_empty() {
            assert_eq!(self.unmap(b.handle, gpus).unwrap(), gpus.len() as u32);
        }
        self.sim.munmap(b.va, b.size).unwrap();
        self.free_raw(b.handle).unwrap();
    }

    pub fn create_event(
        &self,
        ty: u32,
        auto_reset: bool,
        page: u64,
    ) -> Result<CreateEventArgs, Errno> {
        let mut a = CreateEventArgs {
            event_page_offset: page,
            event_type: ty,
            auto_reset: u32::from(auto_reset),
            ..Default::default()
        };
        self.ioctl(AMDKFD_IOC_CREATE_EVENT, &mut a).map(|()| a)
    }

    pub fn destroy_event(&self, id: u32) -> Result<(), Errno> {
        let mut a = DestroyEventArgs {
            event_id: id,
            pad: 0,
        };
        self.ioctl(AMDKFD_IOC_DESTROY_EVENT, &mut a)
    }

    pub fn set_event(&self, id: u32) -> Result<(), Errno> {
        let mut a = SetEventArgs {
            event_id: id,
            pad: 0,
        };
        self.ioctl(AMDKFD_IOC_SET_EVENT, &mut a)
    }

    /// WAIT_EVENTS on `events` (modified in place), returns wait_result.
    pub fn wait(&self, events: &mut [EventData], all: bool, timeout: u32) -> Result<u32, Errno> {
        let mut a = WaitEventsArgs {
            wait_for_all: u32::from(all),
            timeout,
            wait_result: 99,
            ..Default::default()
        };
        let r = self
            .sim
            .ioctl(self.kfd, Request::wait_events(&mut a, events));
        r.map(|()| a.wait_result)
    }
}

/// Writes `v` at host address `addr` (a live read-write mapping the test made).
///
/// # Soundness
/// A safe wrapper around a raw store, sound only by how the sim suites call it (this module is
/// compiled into the sim's tests alone): `addr` is always inside a mapping the test made
/// through the simulator's port (`SimKfd::mmap`, memory no Rust object lives in), still
/// mapped, and aligned for `T`. A wrong address is a test bug that faults, caught in review
/// of the test, not an API a caller can misuse.
pub fn cpu_write<T: Copy>(addr: u64, v: T) {
    // SAFETY: tests only pass addresses inside live read-write mappings they created, aligned
    // for T; volatile because the simulated GPU shares the memory.
    unsafe { core::ptr::write_volatile(addr as *mut T, v) }
}

/// Reads a `T` at host address `addr` (a live readable mapping the test made).
///
/// # Soundness
/// As [`cpu_write`].
pub fn cpu_read<T: Copy>(addr: u64) -> T {
    // SAFETY: as `cpu_write`.
    unsafe { core::ptr::read_volatile(addr as *const T) }
}
