//! Any-client mode (`SimConfig::for_any_client`): the kernel's rules for a KFD client that is
//! not hcq's driver (tinygrad's ops_amd.py): USERPTR over the process's own read-write memory,
//! `MAP_FIXED` of buffer objects over the client's own reservations, `munmap` of its ranges,
//! descriptors that dup and fstat, the queue-buffer checks of kernels before 6.12, and engines
//! on their own thread that follow doorbells rung by plain stores. Each rule is also checked
//! refused in hcq mode, where it is refused today.

mod common;

use common::{GTT_FLAGS, Proc, VRAM_FLAGS, cpu_read, cpu_write};
use hcq_core::kfd::*;
use hcq_sim::{QueueBufferRules, SimClient, SimConfig, SimMode};

/// A sim serving any client, with `rules`.
fn any(rules: QueueBufferRules) -> Proc {
    let cfg = SimConfig {
        queue_buffer_rules: rules,
        ..SimConfig::default()
    };
    // SAFETY: every range these tests pass to mmap(MAP_FIXED), munmap and USERPTR is one of
    // `Client`'s anonymous mappings (no Rust object lives there), unmapped only through the
    // simulator (or left to the `Client` drop after the simulator has dropped its pins).
    let cfg = unsafe { cfg.for_any_client() };
    Proc::new(cfg)
}

/// Anonymous memory the test maps itself, as a client would with libc's mmap.
struct Client {
    addr: u64,
    len: u64,
}

impl Client {
    fn map(len: u64, prot: rustix::mm::ProtFlags, flags: rustix::mm::MapFlags) -> Self {
        // SAFETY: a fresh anonymous mapping where the kernel chooses: it aliases nothing.
        let p =
            unsafe { rustix::mm::mmap_anonymous(core::ptr::null_mut(), len as usize, prot, flags) }
                .unwrap();
        Self {
            addr: p as u64,
            len,
        }
    }

    /// `mmap(0, len, PROT_NONE, MAP_PRIVATE|MAP_ANONYMOUS|MAP_NORESERVE)`: ops_amd.py's
    /// address reservation for a BO.
    fn reserve(len: u64) -> Self {
        use rustix::mm::{MapFlags, ProtFlags};
        Self::map(
            len,
            ProtFlags::empty(),
            MapFlags::PRIVATE | MapFlags::NORESERVE,
        )
    }

    /// `mmap(0, len, PROT_READ|PROT_WRITE, MAP_SHARED|MAP_ANONYMOUS)`: ops_amd.py's host
    /// (USERPTR) memory.
    fn shared_rw(len: u64) -> Self {
        use rustix::mm::{MapFlags, ProtFlags};
        Self::map(len, ProtFlags::READ | ProtFlags::WRITE, MapFlags::SHARED)
    }
}

impl Client {
    /// The simulator unmapped this range (the client's `munmap` went through it): forget it,
    /// so the drop does not unmap whatever another test thread has mapped there since.
    fn unmapped_by_the_simulator(self) {
        core::mem::forget(self);
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        // SAFETY: the test's own mapping (or, once the simulator unmapped it, free address
        // space the kernel ignores); nothing references it any more.
        let _ = unsafe { rustix::mm::munmap(self.addr as *mut _, self.len as usize) };
    }
}

fn alloc_args(p: &Proc, va: u64, size: u64, flags: u32, mmap_offset: u64) -> AllocMemoryOfGpuArgs {
    AllocMemoryOfGpuArgs {
        va_addr: va,
        size,
        gpu_id: p.gpu(),
        flags,
        mmap_offset,
        ..Default::default()
    }
}

/// ALLOC at `va` then `MAP_FIXED` of the BO over the client's reservation there; the handle
/// and the BO's mmap offset.
fn alloc_over(p: &Proc, va: u64, size: u64, flags: u32) -> Result<(u64, u64), Errno> {
    let mut a = alloc_args(p, va, size, flags, 0);
    p.ioctl(AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &mut a)?;
    p.sim.mmap(
        Some(va),
        size,
        Prot::READ_WRITE,
        MapKind::File {
            fd: p.render[0],
            offset: a.mmap_offset,
        },
    )?;
    p.map(a.handle, &[p.gpu()])?;
    Ok((a.handle, a.mmap_offset))
}

#[test]
fn the_grant_is_what_turns_the_mode_on() {
    assert_eq!(SimConfig::default().client, SimClient::Hcq);
    // SAFETY: the config is only inspected.
    let cfg = unsafe { SimConfig::default().for_any_client() };
    assert!(matches!(cfg.client, SimClient::Any(_)));
    assert_eq!(
        cfg.mode,
        SimMode::Threaded,
        "clients spin: the GPU runs on its own"
    );
}

#[test]
fn userptr_over_the_processes_own_rw_memory() {
    let host = Client::shared_rw(0x4000);
    let flags = KFD_IOC_ALLOC_MEM_FLAGS_USERPTR | KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE;
    // hcq mode pins only memory the simulator mapped.
    let strict = Proc::one();
    let mut a = alloc_args(&strict, host.addr, host.len, flags, host.addr);
    assert_eq!(
        strict.ioctl(AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &mut a),
        Err(Errno::EFAULT)
    );
    let p = any(QueueBufferRules::Relaxed);
    let mut a = alloc_args(&p, host.addr, host.len, flags, host.addr);
    p.ioctl(AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &mut a).unwrap();
    assert_eq!(p.map(a.handle, &[p.gpu()]).unwrap(), 1);
    // get_user_pages needs write access: a read-only mapping is EFAULT in this mode too.
    let ro = Client::map(
        0x1000,
        rustix::mm::ProtFlags::READ,
        rustix::mm::MapFlags::PRIVATE,
    );
    let mut b = alloc_args(&p, ro.addr, ro.len, flags, ro.addr);
    assert_eq!(
        p.ioctl(AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &mut b),
        Err(Errno::EFAULT)
    );
    // The client frees as ops_amd.py does: GPU unmap, munmap (through the simulator: the MMU
    // notifier runs), FREE.
    p.unmap(a.handle, &[p.gpu()]).unwrap();
    p.sim.munmap(host.addr, host.len).unwrap();
    host.unmapped_by_the_simulator();
    p.free_raw(a.handle).unwrap();
}

#[test]
fn map_fixed_of_a_bo_over_the_clients_reservation() {
    let res = Client::reserve(0x2000);
    let strict = Proc::one();
    let mut a = alloc_args(&strict, res.addr, res.len, GTT_FLAGS, 0);
    strict
        .ioctl(AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &mut a)
        .unwrap();
    let file = MapKind::File {
        fd: strict.render[0],
        offset: a.mmap_offset,
    };
    assert_eq!(
        strict
            .sim
            .mmap(Some(res.addr), res.len, Prot::READ_WRITE, file),
        Err(Errno::EINVAL),
        "hcq mode: MAP_FIXED only inside ranges the simulator handed out"
    );

    let p = any(QueueBufferRules::Relaxed);
    let (_, off) = alloc_over(&p, res.addr, res.len, GTT_FLAGS).unwrap();
    // The BO's pages are now at the client's address: a second view of the BO (where the
    // kernel chooses) sees the client's store.
    cpu_write::<u64>(res.addr + 8, 0xC0FFEE);
    let view = p
        .sim
        .mmap(
            None,
            res.len,
            Prot::READ_WRITE,
            MapKind::File {
                fd: p.render[0],
                offset: off,
            },
        )
        .unwrap();
    assert_eq!(cpu_read::<u64>(view + 8), 0xC0FFEE);
    p.sim.munmap(res.addr, res.len).unwrap();
    let len = res.len;
    res.unmapped_by_the_simulator();
    // Unmapped range: nothing of the client's is there, MAP_FIXED is EINVAL. Not the range
    // just unmapped: other test threads map concurrently, and the kernel may hand that hole to
    // one of them (a MAP_FIXED there would then replace their mapping). 16 TiB is far below
    // where the kernel's top-down search places mappings in a process of this size.
    let never_mapped = 0x1000_0000_0000;
    assert_eq!(
        p.sim.mmap(
            Some(never_mapped),
            len,
            Prot::READ_WRITE,
            MapKind::File {
                fd: p.render[0],
                offset: off,
            }
        ),
        Err(Errno::EINVAL)
    );
    p.sim.munmap(view, len).unwrap();
}

#[test]
fn munmap_takes_client_ranges_but_never_cuts_a_simulator_region() {
    let p = any(QueueBufferRules::Relaxed);
    let region = p
        .sim
        .mmap(None, 0x3000, Prot::NONE, MapKind::Reserve)
        .unwrap();
    assert_eq!(p.sim.munmap(region + 0x1000, 0x1000), Err(Errno::EINVAL));
    assert_eq!(p.sim.munmap(region, 0x2000), Err(Errno::EINVAL));
    p.sim.munmap(region, 0x3000).unwrap();
    let strict = Proc::one();
    let c = Client::reserve(0x1000);
    assert_eq!(strict.sim.munmap(c.addr, c.len), Err(Errno::EINVAL));
    p.sim.munmap(c.addr, c.len).unwrap();
    c.unmapped_by_the_simulator();
}

#[test]
fn a_dup_of_the_render_node_is_the_same_file() {
    let p = any(QueueBufferRules::Relaxed);
    let dup = p.sim.dup(p.render[0]).unwrap();
    assert_ne!(dup, p.render[0]);
    let st = p.sim.fstat(dup).unwrap();
    assert_eq!((st.major, st.minor), (226, 128));
    assert_eq!(st.path, "/dev/dri/renderD128");
    assert_eq!(p.sim.fstat(p.kfd).unwrap().path, "/dev/kfd");
    // The VM was acquired through the original; ACQUIRE_VM through the dup is the same file
    // (no EBUSY), and a BO maps through the dup.
    let mut vm = AcquireVmArgs {
        drm_fd: dup.0 as u32,
        gpu_id: p.gpu(),
    };
    p.ioctl(AMDKFD_IOC_ACQUIRE_VM, &mut vm).unwrap();
    let other = p.sim.open("/dev/dri/renderD128").unwrap();
    let mut vm2 = AcquireVmArgs {
        drm_fd: other.0 as u32,
        gpu_id: p.gpu(),
    };
    assert_eq!(
        p.ioctl(AMDKFD_IOC_ACQUIRE_VM, &mut vm2),
        Err(Errno::EBUSY),
        "another open of the node is another file"
    );
    p.sim.close(p.render[0]).unwrap();
    let mut a = alloc_args(&p, 0x7000_0000_0000, 0x1000, VRAM_FLAGS, 0);
    p.ioctl(AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &mut a).unwrap();
    let m = p
        .sim
        .mmap(
            None,
            0x1000,
            Prot::READ_WRITE,
            MapKind::File {
                fd: dup,
                offset: a.mmap_offset,
            },
        )
        .unwrap();
    p.sim.munmap(m, 0x1000).unwrap();
    assert_eq!(p.sim.fstat(Fd(-1)), Err(Errno::EBADF));
}

#[test]
fn kernel_versions_pick_the_queue_buffer_rules() {
    use QueueBufferRules as R;
    assert_eq!(R::for_kernel("6.8"), Some(R::Pre612));
    assert_eq!(R::for_kernel("5.15.0"), Some(R::Pre612));
    assert_eq!(R::for_kernel("6.11.9"), Some(R::Pre612));
    assert_eq!(R::for_kernel("6.12"), Some(R::Strict612));
    assert_eq!(R::for_kernel("6.13"), Some(R::Relaxed));
    assert_eq!(R::for_kernel("7.0"), Some(R::Relaxed));
    assert_eq!(R::for_kernel("six"), None);
}

/// CREATE_QUEUE as tinygrad 0.9.1 issues it: ctl_stack_size 0, a 0x2C02000-byte save area and
/// a 4 KiB EOP buffer, whatever the node's sizes.
fn seed_compute_queue(p: &Proc) -> Result<u32, Errno> {
    let gart = p.alloc(0x1000, GTT_FLAGS);
    let ring = p.alloc(0x10_0000, GTT_FLAGS);
    let ctx = p.alloc(0x2C0_2000, VRAM_FLAGS);
    let eop = p.alloc(0x1000, VRAM_FLAGS);
    let mut q = CreateQueueArgs {
        ring_base_address: ring.va,
        write_pointer_address: gart.va,
        read_pointer_address: gart.va + 8,
        ring_size: 0x10_0000,
        gpu_id: p.gpu(),
        queue_type: KFD_IOC_QUEUE_TYPE_COMPUTE,
        queue_percentage: KFD_MAX_QUEUE_PERCENTAGE,
        queue_priority: KFD_MAX_QUEUE_PRIORITY,
        eop_buffer_address: eop.va,
        eop_buffer_size: 0x1000,
        ctx_save_restore_address: ctx.va,
        ctx_save_restore_size: 0x2C0_2000,
        ctl_stack_size: 0,
        ..Default::default()
    };
    p.ioctl(AMDKFD_IOC_CREATE_QUEUE, &mut q)
        .map(|()| q.queue_id)
}

#[test]
fn pre_6_12_kernels_take_the_seeds_queue_buffers() {
    for rules in [QueueBufferRules::Strict612, QueueBufferRules::Relaxed] {
        let p = any(rules);
        assert_eq!(seed_compute_queue(&p), Err(Errno::EINVAL), "{rules:?}");
    }
    let p = any(QueueBufferRules::Pre612);
    let id = seed_compute_queue(&p).unwrap();
    // No references held: a buffer can leave the GPU under the live queue (pre-6.12).
    assert!(p.sim.queue(id).is_some());
    // Ring and pointers that are no GPU mapping at all are not looked up either.
    let mut q = CreateQueueArgs {
        ring_base_address: 0x1000_0000,
        write_pointer_address: 0x2000_0000,
        read_pointer_address: 0x2000_0008,
        ring_size: 0x1000,
        gpu_id: p.gpu(),
        queue_type: KFD_IOC_QUEUE_TYPE_SDMA,
        queue_percentage: KFD_MAX_QUEUE_PERCENTAGE,
        queue_priority: KFD_MAX_QUEUE_PRIORITY,
        ..Default::default()
    };
    p.ioctl(AMDKFD_IOC_CREATE_QUEUE, &mut q).unwrap();
    let strict = any(QueueBufferRules::Relaxed);
    q.gpu_id = strict.gpu();
    assert_eq!(
        strict.ioctl(AMDKFD_IOC_CREATE_QUEUE, &mut q),
        Err(Errno::EINVAL)
    );
}

#[test]
fn the_engine_thread_follows_a_doorbell_rung_by_a_plain_store() {
    let p = any(QueueBufferRules::Pre612);
    let _gpu = hcq_sim::engine::attach::SimGpu::attach(&p.sim).unwrap();
    // The client's layout: reservations, BOs mapped over them.
    let (gart_r, ring_r, sig_r) = (
        Client::reserve(0x1000),
        Client::reserve(0x1000),
        Client::reserve(0x1000),
    );
    alloc_over(&p, gart_r.addr, 0x1000, GTT_FLAGS).unwrap();
    alloc_over(&p, ring_r.addr, 0x1000, GTT_FLAGS).unwrap();
    alloc_over(&p, sig_r.addr, 0x1000, GTT_FLAGS).unwrap();
    let mut q = CreateQueueArgs {
        ring_base_address: ring_r.addr,
        write_pointer_address: gart_r.addr,
        read_pointer_address: gart_r.addr + 8,
        ring_size: 0x1000,
        gpu_id: p.gpu(),
        queue_type: KFD_IOC_QUEUE_TYPE_SDMA,
        queue_percentage: KFD_MAX_QUEUE_PERCENTAGE,
        queue_priority: KFD_MAX_QUEUE_PRIORITY,
        ..Default::default()
    };
    p.ioctl(AMDKFD_IOC_CREATE_QUEUE, &mut q).unwrap();
    let doorbells = p
        .sim
        .mmap(
            None,
            KFD_DOORBELL_SLICE_SIZE,
            Prot::READ_WRITE,
            MapKind::File {
                fd: p.kfd,
                offset: doorbell_slice_offset(q.doorbell_offset),
            },
        )
        .unwrap();
    // SDMA FENCE: op 5, address, value.
    let target = sig_r.addr + 0x40;
    let pkt = [5u32, target as u32, (target >> 32) as u32, 0x1234_5678];
    for (i, w) in pkt.iter().enumerate() {
        cpu_write::<u32>(ring_r.addr + 4 * i as u64, *w);
    }
    cpu_write::<u64>(gart_r.addr, 16);
    cpu_write::<u64>(doorbells + doorbell_in_slice(q.doorbell_offset), 16);
    // No ioctl from here: the engine thread must see the doorbell on its own.
    let start = std::time::Instant::now();
    while cpu_read::<u32>(target) != 0x1234_5678 {
        assert!(
            start.elapsed() < core::time::Duration::from_secs(20),
            "the engine thread never ran the fence"
        );
        std::thread::yield_now();
    }
}
