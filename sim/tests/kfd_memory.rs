//! ALLOC / FREE / MAP / UNMAP, CPU mappings, the GPU read/write path, USERPTR, two GPUs.

mod common;

use common::{GTT_FLAGS, Proc, VRAM_FLAGS, cpu_read, cpu_write};
use hcq_core::kfd::*;
use hcq_sim::engine::VmFaultKind;
use hcq_sim::{GpuConfig, GpuFault, SimConfig};

fn alloc_args(p: &Proc, va: u64, size: u64, flags: u32) -> AllocMemoryOfGpuArgs {
    AllocMemoryOfGpuArgs {
        va_addr: va,
        size,
        gpu_id: p.gpu(),
        flags,
        ..Default::default()
    }
}

#[test]
fn alloc_errors() {
    let p = Proc::one();
    let va = 0x7000_0000_0000;
    let mut a = alloc_args(&p, va, 0, VRAM_FLAGS);
    assert_eq!(
        p.ioctl(AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &mut a),
        Err(Errno::EINVAL)
    );
    let mut a = alloc_args(&p, va, 4096, VRAM_FLAGS);
    a.gpu_id = 0;
    assert_eq!(
        p.ioctl(AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &mut a),
        Err(Errno::EINVAL)
    );
    let mut a = alloc_args(&p, va, 4096, KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE);
    assert_eq!(
        p.ioctl(AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &mut a),
        Err(Errno::EINVAL),
        "no type"
    );
    let mut a = alloc_args(&p, va, 4096, KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL);
    assert_eq!(
        p.ioctl(AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &mut a),
        Err(Errno::EINVAL),
        "doorbell size"
    );
    let mut a = alloc_args(&p, va, 8192, KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP);
    assert_eq!(
        p.ioctl(AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &mut a),
        Err(Errno::EINVAL),
        "mmio size"
    );
    let mut a = alloc_args(&p, va, 4096, KFD_IOC_ALLOC_MEM_FLAGS_USERPTR);
    assert_eq!(
        p.ioctl(AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &mut a),
        Err(Errno::EINVAL),
        "userptr at 0"
    );
    a.mmap_offset = 0x10; // not mapped memory
    assert_eq!(
        p.ioctl(AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &mut a),
        Err(Errno::EFAULT),
        "userptr unpinnable"
    );
    // Memory the process has but the sim did not map (the test's own heap): refused too, so
    // the simulated GPU never writes memory Rust owns.
    let heap = vec![0u64; 2048];
    let page = (heap.as_ptr() as u64).next_multiple_of(4096);
    a.mmap_offset = page;
    assert_eq!(
        p.ioctl(AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &mut a),
        Err(Errno::EFAULT),
        "userptr outside the sim's mappings"
    );
    assert!(heap.iter().all(|&w| w == 0));
    // Without ACQUIRE_VM: ENODEV.
    let sim = hcq_sim::SimKfd::gfx1100().unwrap();
    let kfd = sim.open("/dev/kfd").unwrap();
    let mut a = alloc_args(&p, va, 4096, VRAM_FLAGS);
    a.gpu_id = sim.gpu_ids()[0];
    assert_eq!(
        sim.ioctl(kfd, Request::new(AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &mut a)),
        Err(Errno::ENODEV)
    );
    // VRAM|PUBLIC on a small-BAR GPU.
    let small = Proc::new(SimConfig {
        gpus: vec![GpuConfig {
            large_bar: false,
            ..GpuConfig::gfx1100()
        }],
        ..SimConfig::default()
    });
    let mut a = alloc_args(
        &small,
        va,
        4096,
        VRAM_FLAGS | KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC,
    );
    assert_eq!(
        small.ioctl(AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &mut a),
        Err(Errno::EINVAL)
    );
    assert!(p.sim.live_objects().nothing_leaked());
}

#[test]
fn handles_offsets_and_vram_limit() {
    let p = Proc::one();
    let gpu = p.gpu();
    let a = p.alloc_at(0, 100, GTT_FLAGS).unwrap(); // page-aligned to 4096
    let b = p.alloc_at(0, 8192, VRAM_FLAGS).unwrap();
    assert_eq!(a.handle, u64::from(gpu) << 32);
    assert_eq!(b.handle, (u64::from(gpu) << 32) | 1);
    p.release(a, &[]);
    let c = p.alloc_at(0, 4096, VRAM_FLAGS).unwrap();
    assert_eq!(c.handle, u64::from(gpu) << 32, "lowest free id reused");
    // MMIO remap: a /dev/kfd MMIO offset, not a DRM one.
    let mut m = alloc_args(
        &p,
        0x7100_0000_0000,
        4096,
        KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP,
    );
    p.ioctl(AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &mut m).unwrap();
    assert_eq!(m.mmap_offset, u64::from(gpu) << 46);
    p.free_raw(m.handle).unwrap();

    assert!(p.sim.set_vram_limit(gpu, 64 << 10));
    assert_eq!(
        p.alloc_at(0, 64 << 10, VRAM_FLAGS).unwrap_err(),
        Errno::ENOMEM
    );
    let d = p.alloc_at(0, 52 << 10, VRAM_FLAGS).unwrap(); // 12 KiB used before: now full
    assert_eq!(p.alloc_at(0, 4096, VRAM_FLAGS).unwrap_err(), Errno::ENOMEM);
    let e = p.alloc_at(0, 4096, GTT_FLAGS).unwrap(); // GTT is not VRAM
    for x in [b, c, d, e] {
        p.release(x, &[]);
    }
    assert_eq!(p.free_raw(b.handle), Err(Errno::EINVAL), "double free");
    assert_eq!(
        p.free_raw(0x1234 << 32),
        Err(Errno::EINVAL),
        "unknown gpu in handle"
    );
    assert!(p.sim.live_objects().nothing_leaked());
}

#[test]
fn cpu_and_gpu_see_the_same_bytes() {
    let p = Proc::one();
    let gpu = p.gpu();
    let b = p.alloc(2 * 4096, VRAM_FLAGS);
    assert_eq!(p.sim.live_objects().cpu_mappings, 1);
    // The GPU has read both pages (its view of them is taken; nothing is written yet).
    assert_eq!(p.sim.gpu_read_u32(gpu, b.va).unwrap(), 0);
    assert_eq!(p.sim.gpu_read_u32(gpu, b.va + 4100).unwrap(), 0);
    // CPU writes through its mapping at the VA...
    cpu_write::<u32>(b.va, 0xDEAD_BEEF);
    cpu_write::<u32>(b.va + 4100, 0x1234_5678);
    // ...but they reach the GPU only through the HDP: before a flush a GPU read of those
    // bytes faults (hardware would read stale data), an untouched dword reads fine.
    assert_eq!(
        p.sim.gpu_read_u32(gpu, b.va),
        Err(GpuFault {
            gpu_id: gpu,
            va: b.va,
            write: false,
            reason: VmFaultKind::HdpStale
        })
    );
    let mut b8 = [0u8; 8];
    assert_eq!(
        p.sim.gpu_read(gpu, b.va + 4096, &mut b8).unwrap_err(),
        GpuFault {
            gpu_id: gpu,
            va: b.va + 4100,
            write: false,
            reason: VmFaultKind::HdpStale
        }
    );
    assert_eq!(p.sim.gpu_read_u32(gpu, b.va + 16).unwrap(), 0);
    p.sim.hdp_flush(gpu);
    // After the flush the GPU reads them through its page table.
    assert_eq!(p.sim.gpu_read_u32(gpu, b.va).unwrap(), 0xDEAD_BEEF);
    assert_eq!(p.sim.gpu_read_u32(gpu, b.va + 4100).unwrap(), 0x1234_5678);
    // The GPU writes, the CPU sees.
    p.sim
        .gpu_write_u64(gpu, b.va + 8, 0xAABB_CCDD_EEFF_0011)
        .unwrap();
    assert_eq!(
        (cpu_read::<u32>(b.va + 8), cpu_read::<u32>(b.va + 12)),
        (0xEEFF_0011, 0xAABB_CCDD)
    );
    // A later CPU write is stale again until the next flush.
    cpu_write::<u32>(b.va + 16, 7);
    assert_eq!(
        p.sim.gpu_read_u32(gpu, b.va + 16).unwrap_err().reason,
        VmFaultKind::HdpStale
    );
    p.sim.hdp_flush(gpu);
    assert_eq!(p.sim.gpu_read_u32(gpu, b.va + 16).unwrap(), 7);
    let mut buf = [0u8; 16];
    p.sim.gpu_read(gpu, b.va + 8192 - 8, &mut buf[..8]).unwrap();
    // Past the end: fault at the first unmapped byte.
    assert_eq!(
        p.sim.gpu_read(gpu, b.va + 8192 - 8, &mut buf),
        Err(GpuFault {
            gpu_id: gpu,
            va: b.va + 8192,
            write: false,
            reason: VmFaultKind::NotPresent
        })
    );
    p.release(b, &[gpu]);
    // Unmapped from the GPU: any access faults.
    assert_eq!(
        p.sim.gpu_read_u32(gpu, b.va).unwrap_err().reason,
        VmFaultKind::NotPresent
    );
    assert!(p.sim.live_objects().nothing_leaked());
}

#[test]
fn read_only_buffers_fault_on_gpu_write() {
    let p = Proc::one();
    let gpu = p.gpu();
    let b = p.alloc(4096, KFD_IOC_ALLOC_MEM_FLAGS_GTT);
    assert_eq!(p.sim.gpu_read_u32(gpu, b.va).unwrap(), 0);
    let f = p.sim.gpu_write_u32(gpu, b.va, 1).unwrap_err();
    assert_eq!(
        (f.reason, f.write, f.va),
        (VmFaultKind::ReadOnly, true, b.va)
    );
    p.release(b, &[gpu]);
}

#[test]
fn mmap_rules() {
    let p = Proc::one();
    let b = p.alloc_at(0, 8192, GTT_FLAGS).unwrap();
    let mut a = alloc_args(&p, 0x7200_0000_0000, 8192, GTT_FLAGS);
    p.ioctl(AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &mut a).unwrap();
    let file = |fd, offset| MapKind::File { fd, offset };
    // Longer than the BO: EINVAL; unknown offset: EINVAL.
    assert_eq!(
        p.sim.mmap(
            None,
            3 * 4096,
            Prot::READ_WRITE,
            file(p.render[0], a.mmap_offset)
        ),
        Err(Errno::EINVAL)
    );
    assert_eq!(
        p.sim
            .mmap(None, 4096, Prot::READ_WRITE, file(p.render[0], 0x1234_5000)),
        Err(Errno::EINVAL)
    );
    // Through another open file of the same node (not the VM's DRM file): EACCES.
    let other = p.sim.open("/dev/dri/renderD128").unwrap();
    assert_eq!(
        p.sim
            .mmap(None, 4096, Prot::READ_WRITE, file(other, a.mmap_offset)),
        Err(Errno::EACCES)
    );
    // A second view anywhere sees the same memory.
    let view = p
        .sim
        .mmap(
            None,
            8192,
            Prot::READ_WRITE,
            file(p.render[0], a.mmap_offset),
        )
        .unwrap();
    // MAP_FIXED lands only inside a region the sim handed out: not at an address of its
    // choosing, not past the end of a reservation.
    assert_eq!(
        p.sim.mmap(
            Some(0x7200_0000_0000),
            8192,
            Prot::READ_WRITE,
            file(p.render[0], a.mmap_offset),
        ),
        Err(Errno::EINVAL)
    );
    let reserved = p
        .sim
        .mmap(None, 8192, Prot::NONE, MapKind::Reserve)
        .unwrap();
    assert_eq!(
        p.sim.mmap(
            Some(reserved + 4096),
            8192,
            Prot::READ_WRITE,
            file(p.render[0], a.mmap_offset),
        ),
        Err(Errno::EINVAL)
    );
    let fixed = p
        .sim
        .mmap(
            Some(reserved),
            8192,
            Prot::READ_WRITE,
            file(p.render[0], a.mmap_offset),
        )
        .unwrap();
    assert_eq!(fixed, reserved);
    cpu_write::<u64>(view, 77);
    assert_eq!(cpu_read::<u64>(fixed), 77);
    assert_eq!(p.sim.live_objects().cpu_mappings, 3);
    // munmap takes only whole regions the sim handed out, once.
    assert_eq!(p.sim.munmap(view + 4096, 4096), Err(Errno::EINVAL));
    assert_eq!(p.sim.munmap(view, 4096), Err(Errno::EINVAL));
    p.sim.munmap(view, 8192).unwrap();
    assert_eq!(p.sim.munmap(view, 8192), Err(Errno::EINVAL));
    p.sim.munmap(reserved, 8192).unwrap();
    p.free_raw(a.handle).unwrap();
    p.release(b, &[]);
    p.sim.close(other).unwrap();
    assert!(p.sim.live_objects().nothing_leaked());
}

#[test]
fn userptr_is_the_process_memory() {
    let p = Proc::one();
    let gpu = p.gpu();
    let size = 3 * 4096;
    let host = p
        .sim
        .mmap(None, size, Prot::READ_WRITE, MapKind::Anonymous)
        .unwrap();
    let va = p
        .sim
        .mmap(None, size, Prot::NONE, MapKind::Reserve)
        .unwrap();
    let mut a = AllocMemoryOfGpuArgs {
        va_addr: va,
        size,
        mmap_offset: host,
        gpu_id: gpu,
        flags: KFD_IOC_ALLOC_MEM_FLAGS_USERPTR | KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE,
        ..Default::default()
    };
    p.ioctl(AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &mut a).unwrap();
    assert_ne!(a.mmap_offset, host, "mmap_offset becomes a DRM offset");
    // A USERPTR BO cannot be mmapped through DRM.
    assert_eq!(
        p.sim.mmap(
            None,
            4096,
            Prot::READ_WRITE,
            MapKind::File {
                fd: p.render[0],
                offset: a.mmap_offset
            }
        ),
        Err(Errno::EPERM)
    );
    p.map(a.handle, &[gpu]).unwrap();
    cpu_write::<u8>(host + 5000, 0x5A);
    let mut one = [0u8; 1];
    p.sim.gpu_read(gpu, va + 5000, &mut one).unwrap();
    assert_eq!(one[0], 0x5A);
    p.sim.gpu_write(gpu, va + 2 * 4096, &[1, 2, 3]).unwrap();
    assert_eq!(cpu_read::<[u8; 3]>(host + 8192), [1, 2, 3]);
    // The process maps new pages over the memory (MAP_FIXED at the same address, as another
    // thread's allocation may): the kernel's MMU notifier invalidates the BO, so every later
    // GPU access faults instead of reaching the new mapping's bytes (the flaky run this test
    // once was read them).
    let again = p
        .sim
        .mmap(Some(host), size, Prot::READ_WRITE, MapKind::Anonymous)
        .unwrap();
    assert_eq!(again, host);
    cpu_write::<u8>(host + 5000, 0x77);
    assert_eq!(
        p.sim.gpu_read(gpu, va + 5000, &mut one).unwrap_err().reason,
        VmFaultKind::NotPresent
    );
    assert_eq!(
        p.sim.gpu_write(gpu, va, &[9]).unwrap_err().reason,
        VmFaultKind::NotPresent
    );
    assert_eq!(cpu_read::<u8>(host), 0, "the new mapping is not written");
    p.unmap(a.handle, &[gpu]).unwrap();
    p.free_raw(a.handle).unwrap();
    // A USERPTR BO over the new pages works, until the process frees them: a fault, not a
    // crash, on every later access.
    let mut b = AllocMemoryOfGpuArgs {
        va_addr: va,
        size,
        mmap_offset: host,
        gpu_id: gpu,
        flags: KFD_IOC_ALLOC_MEM_FLAGS_USERPTR | KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE,
        ..Default::default()
    };
    p.ioctl(AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &mut b).unwrap();
    p.map(b.handle, &[gpu]).unwrap();
    p.sim.gpu_read(gpu, va + 5000, &mut one).unwrap();
    assert_eq!(one[0], 0x77);
    p.sim.munmap(host, size).unwrap();
    assert_eq!(
        p.sim.gpu_read(gpu, va + 4096, &mut one).unwrap_err().va,
        va + 4096
    );
    p.unmap(b.handle, &[gpu]).unwrap();
    p.free_raw(b.handle).unwrap();
    p.sim.munmap(va, size).unwrap();
    assert!(p.sim.live_objects().nothing_leaked());
}

/// The simulated GPU copies into USERPTR pages while the process unmaps them and maps new
/// memory at the same address (as an allocator reusing the range would). `munmap` must wait
/// for the copy in flight: no byte of a copy may land in the new mapping. (The copy through
/// `/proc/self/mem` used to run after the translation's lock was released, so a write that
/// had translated before the unmap finished into whatever was mapped there next.)
#[test]
fn userptr_munmap_waits_for_gpu_copies_in_flight() {
    use core::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let p = Proc::one();
    let gpu = p.gpu();
    let size: u64 = 1 << 20;
    let (mut reused, mut rounds) = (0, 0);
    let start = std::time::Instant::now();
    while rounds < 400 && start.elapsed() < core::time::Duration::from_secs(8) {
        rounds += 1;
        let host = p
            .sim
            .mmap(None, size, Prot::READ_WRITE, MapKind::Anonymous)
            .unwrap();
        let va = p
            .sim
            .mmap(None, size, Prot::NONE, MapKind::Reserve)
            .unwrap();
        let mut a = AllocMemoryOfGpuArgs {
            va_addr: va,
            size,
            mmap_offset: host,
            gpu_id: gpu,
            flags: KFD_IOC_ALLOC_MEM_FLAGS_USERPTR | KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE,
            ..Default::default()
        };
        p.ioctl(AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &mut a).unwrap();
        p.map(a.handle, &[gpu]).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let writing = Arc::new(AtomicBool::new(false));
        let writer = {
            let (sim, stop, writing) =
                (Arc::clone(&p.sim), Arc::clone(&stop), Arc::clone(&writing));
            std::thread::spawn(move || {
                // CAST: 1 MiB fits usize.
                let data = vec![0xABu8; size as usize];
                while !stop.load(Ordering::Relaxed) {
                    writing.store(true, Ordering::Relaxed);
                    let _ = sim.gpu_write(gpu, va, &data);
                }
            })
        };
        while !writing.load(Ordering::Relaxed) {
            core::hint::spin_loop();
        }
        // Land the unmap somewhere inside a copy (one takes a few hundred microseconds).
        std::thread::sleep(core::time::Duration::from_micros(rounds % 7 * 40));
        p.sim.munmap(host, size).unwrap();
        let again = p
            .sim
            .mmap(None, size, Prot::READ_WRITE, MapKind::Anonymous)
            .unwrap();
        // Give a copy that escaped the unmap time to land, then stop the writer.
        std::thread::sleep(core::time::Duration::from_micros(300));
        stop.store(true, Ordering::Relaxed);
        writer.join().unwrap();
        if again == host {
            reused += 1;
            for page in (0..size).step_by(4096) {
                assert_eq!(
                    cpu_read::<u64>(again + page),
                    0,
                    "round {rounds}: a GPU copy landed in the new mapping at +{page:#x}"
                );
            }
        }
        p.unmap(a.handle, &[gpu]).unwrap();
        p.free_raw(a.handle).unwrap();
        p.sim.munmap(again, size).unwrap();
        p.sim.munmap(va, size).unwrap();
    }
    assert!(
        reused * 2 >= rounds,
        "the address was reused in only {reused} of {rounds} rounds: the test proves little"
    );
    assert!(p.sim.live_objects().nothing_leaked());
}

#[test]
fn map_unmap_rules() {
    let p = Proc::new(SimConfig::with_gpus(2));
    let (g0, g1) = (p.gpus[0], p.gpus[1]);
    let b = p.alloc_at(0, 4096, VRAM_FLAGS).unwrap();
    let ids = [g0, g1];
    let mut a = MapMemoryToGpuArgs {
        handle: b.handle,
        device_ids_array_ptr: 0,
        n_devices: 0,
        n_success: 0,
    };
    assert_eq!(
        p.map_ioctl(AMDKFD_IOC_MAP_MEMORY_TO_GPU, &mut a, &ids),
        Err(Errno::EINVAL),
        "n_devices 0"
    );
    a.n_devices = 1;
    a.n_success = 2;
    assert_eq!(
        p.map_ioctl(AMDKFD_IOC_MAP_MEMORY_TO_GPU, &mut a, &ids),
        Err(Errno::EINVAL),
        "n_success > n"
    );
    a.n_success = 0;
    a.n_devices = 3;
    assert_eq!(
        p.map_ioctl(AMDKFD_IOC_MAP_MEMORY_TO_GPU, &mut a, &ids),
        Err(Errno::EFAULT),
        "n_devices past the list"
    );
    a.n_devices = 1;
    a.handle = (u64::from(g0) << 32) | 99;
    assert_eq!(
        p.map_ioctl(AMDKFD_IOC_MAP_MEMORY_TO_GPU, &mut a, &ids),
        Err(Errno::ENOMEM),
        "IDR miss"
    );
    a.handle = 0x4242 << 32;
    assert_eq!(
        p.map_ioctl(AMDKFD_IOC_MAP_MEMORY_TO_GPU, &mut a, &ids),
        Err(Errno::EINVAL),
        "unknown gpu"
    );
    // Partial success: second id unknown, n_success = 1, retry resumes there.
    let bad = [g0, 0x4242];
    let mut a = MapMemoryToGpuArgs {
        handle: b.handle,
        device_ids_array_ptr: 0,
        n_devices: 2,
        n_success: 0,
    };
    assert_eq!(
        p.map_ioctl(AMDKFD_IOC_MAP_MEMORY_TO_GPU, &mut a, &bad),
        Err(Errno::EINVAL)
    );
    assert_eq!(a.n_success, 1);
    assert_eq!(p.sim.live_objects().gpu_mappings, 1);
    // Mapping again is a no-op; both GPUs now.
    assert_eq!(p.map(b.handle, &[g0, g1]).unwrap(), 2);
    assert_eq!(p.sim.live_objects().gpu_mappings, 2);
    // Both GPUs see the bytes at the same VA.
    p.sim.gpu_write_u32(g1, b.va + 64, 0xC0FFEE).unwrap();
    assert_eq!(p.sim.gpu_read_u32(g0, b.va + 64).unwrap(), 0xC0FFEE);
    assert_eq!(cpu_read::<u32>(b.va + 64), 0xC0FFEE);
    // FREE while mapped: EBUSY, handle stays valid.
    assert_eq!(p.free_raw(b.handle), Err(Errno::EBUSY));
    // Overlapping VA on the same GPU: EINVAL.
    let mut o = AllocMemoryOfGpuArgs {
        va_addr: b.va,
        size: 4096,
        gpu_id: g0,
        flags: GTT_FLAGS,
        ..Default::default()
    };
    p.ioctl(AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &mut o).unwrap();
    assert_eq!(p.map(o.handle, &[g0]), Err(Errno::EINVAL));
    // Unaligned VA: EINVAL at MAP (ALLOC does not check).
    let mut u = AllocMemoryOfGpuArgs {
        va_addr: 0x7300_0000_0010,
        size: 4096,
        gpu_id: g0,
        flags: GTT_FLAGS,
        ..Default::default()
    };
    p.ioctl(AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &mut u).unwrap();
    assert_eq!(p.map(u.handle, &[g0]), Err(Errno::EINVAL));
    // Beyond the 47-bit GPU VM: EINVAL.
    let mut h = AllocMemoryOfGpuArgs {
        va_addr: 1 << 47,
        size: 4096,
        gpu_id: g0,
        flags: GTT_FLAGS,
        ..Default::default()
    };
    p.ioctl(AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &mut h).unwrap();
    assert_eq!(p.map(h.handle, &[g0]), Err(Errno::EINVAL));
    for x in [o.handle, u.handle, h.handle] {
        p.free_raw(x).unwrap();
    }
    // UNMAP from a GPU it is not mapped on: EINVAL, after the first succeeded.
    p.unmap(b.handle, &[g1]).unwrap();
    let mut un = UnmapMemoryFromGpuArgs {
        handle: b.handle,
        device_ids_array_ptr: 0,
        n_devices: 2,
        n_success: 0,
    };
    assert_eq!(
        p.map_ioctl(AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU, &mut un, &ids),
        Err(Errno::EINVAL)
    );
    assert_eq!(un.n_success, 1);
    assert_eq!(p.sim.live_objects().gpu_mappings, 0);
    p.release(b, &[]);
    assert!(p.sim.live_objects().nothing_leaked());
}

#[test]
fn peer_vram_needs_large_bar() {
    let mut cfg = SimConfig::with_gpus(2);
    cfg.gpus[1].large_bar = false;
    let p = Proc::new(cfg);
    let b = p.alloc_at(0, 4096, VRAM_FLAGS).unwrap();
    assert_eq!(p.map(b.handle, &[p.gpus[0], p.gpus[1]]), Err(Errno::EINVAL));
    let g = p.alloc_at(0, 4096, GTT_FLAGS).unwrap();
    assert_eq!(
        p.map(g.handle, &[p.gpus[0], p.gpus[1]]).unwrap(),
        2,
        "GTT is reachable"
    );
    p.unmap(b.handle, &[p.gpus[0]]).unwrap();
    p.release(b, &[]);
    p.release(g, &[p.gpus[0], p.gpus[1]]);
    assert!(p.sim.live_objects().nothing_leaked());
}

#[test]
fn gpu_spans() {
    let p = Proc::one();
    let gpu = p.gpu();
    let b = p.alloc(8192, GTT_FLAGS);
    let s = p.sim.gpu_span(gpu, b.va + 4096, 4096, true).unwrap();
    assert_eq!((s.va(), s.len()), (b.va + 4096, 4096));
    cpu_write::<u32>(b.va + 4096 + 16, 0xABCD);
    assert_eq!(s.load_u32(16), Some(0xABCD));
    assert!(s.store_u64(24, 7));
    assert_eq!(cpu_read::<u64>(b.va + 4096 + 24), 7);
    assert_eq!(s.load_u32(4094), None, "past the span");
    assert!(!s.write(4090, &[0; 8]));
    let mut r = [0u8; 2];
    assert!(s.read(16, &mut r));
    assert_eq!(r, [0xCD, 0xAB]);
    // Past the mapping: fault at its end.
    let f = p.sim.gpu_span(gpu, b.va + 4096, 8192, false).unwrap_err();
    assert_eq!((f.va, f.reason), (b.va + 8192, VmFaultKind::NotPresent));
    // Read-only buffer: a write span faults.
    let ro = p.alloc(4096, KFD_IOC_ALLOC_MEM_FLAGS_GTT);
    assert!(p.sim.gpu_span(gpu, ro.va, 4096, false).is_ok());
    assert_eq!(
        p.sim.gpu_span(gpu, ro.va, 4096, true).unwrap_err().reason,
        VmFaultKind::ReadOnly
    );
    p.release(b, &[gpu]);
    p.release(ro, &[gpu]);
    assert!(p.sim.live_objects().nothing_leaked());
}

#[test]
fn big_buffers_are_sparse() {
    let p = Proc::one();
    let gpu = p.gpu();
    let size = 16u64 << 30;
    let b = p.alloc(size, VRAM_FLAGS);
    p.sim.gpu_write_u64(gpu, b.va + size - 8, 0x55).unwrap();
    assert_eq!(cpu_read::<u64>(b.va + size - 8), 0x55);
    assert_eq!(cpu_read::<u64>(b.va), 0);
    let mut m = GetAvailableMemoryArgs {
        gpu_id: gpu,
        ..Default::default()
    };
    p.ioctl(AMDKFD_IOC_AVAILABLE_MEMORY, &mut m).unwrap();
    assert_eq!(m.available, 8 << 30);
    p.release(b, &[gpu]);
}

/// The engines keep recent translations per thread (a TLB). Every page-table change voids
/// them, as amdgpu's TLB flush on unmap does: a VA freed and allocated again reaches the new
/// memory with the new permissions, and a translation another thread took before an unmap
/// faults there afterwards.
#[test]
fn cached_translations_follow_unmap_free_and_reuse() {
    let p = Proc::one();
    let gpu = p.gpu();
    let va = 0x7100_0000_0000;
    let mut a = alloc_args(&p, va, 4096, VRAM_FLAGS);
    p.ioctl(AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &mut a).unwrap();
    p.map(a.handle, &[gpu]).unwrap();
    p.sim.gpu_write_u32(gpu, va + 64, 0xC0FF_EE00).unwrap();
    assert_eq!(p.sim.gpu_read_u32(gpu, va + 64).unwrap(), 0xC0FF_EE00);
    // Another thread translates the page too (and keeps the translation), then waits.
    let sim = std::sync::Arc::clone(&p.sim);
    let (read, first) = std::sync::mpsc::channel();
    let (go, wait) = std::sync::mpsc::channel::<()>();
    let other = std::thread::spawn(move || {
        let _ = read.send(sim.gpu_read_u32(gpu, va + 64));
        let _ = wait.recv();
        sim.gpu_read_u32(gpu, va + 64)
    });
    assert_eq!(first.recv().unwrap(), Ok(0xC0FF_EE00));
    p.unmap(a.handle, &[gpu]).unwrap();
    p.free_raw(a.handle).unwrap();
    go.send(()).unwrap();
    let after = other.join().unwrap();
    assert_eq!(after.unwrap_err().reason, VmFaultKind::NotPresent);
    assert_eq!(
        p.sim.gpu_read_u32(gpu, va + 64).unwrap_err().reason,
        VmFaultKind::NotPresent
    );
    // The same VA again, a new BO without WRITABLE: the old memory is gone, and writes fault.
    let mut b = alloc_args(&p, va, 4096, VRAM_FLAGS & !KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE);
    p.ioctl(AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &mut b).unwrap();
    p.map(b.handle, &[gpu]).unwrap();
    assert_eq!(p.sim.gpu_read_u32(gpu, va + 64).unwrap(), 0);
    assert_eq!(
        p.sim.gpu_write_u32(gpu, va + 64, 1).unwrap_err().reason,
        VmFaultKind::ReadOnly
    );
    p.unmap(b.handle, &[gpu]).unwrap();
    p.free_raw(b.handle).unwrap();
}

#[test]
fn l2_write_backs_reach_every_dirtied_bo_and_leave_other_gpus_lines() {
    // GTT neither COHERENT nor UNCACHED: MTYPE NC, which the L2 holds dirty once the CPU maps it.
    let cached = GTT_FLAGS & !(KFD_IOC_ALLOC_MEM_FLAGS_COHERENT | KFD_IOC_ALLOC_MEM_FLAGS_UNCACHED);
    let p = Proc::new(SimConfig::with_gpus(2));
    let (g0, g1) = (p.gpus[0], p.gpus[1]);
    // Many BOs, a few of them dirtied: the write-back must reach exactly those. (One GPU's L2
    // owns a page at a time, so the two GPUs write different pages.)
    let bos: Vec<_> = (0..40)
        .map(|_| {
            let b = p.alloc_at(0, 8192, cached).unwrap();
            p.map(b.handle, &[g0, g1]).unwrap();
            b
        })
        .collect();
    p.sim.gpu_write_cached(g0, bos[3].va, &[1u8; 4]).unwrap();
    p.sim
        .gpu_write_cached(g1, bos[3].va + 4096, &[2u8; 4])
        .unwrap();
    p.sim.gpu_write_cached(g0, bos[17].va, &[3u8; 4]).unwrap();
    assert_eq!(cpu_read::<u32>(bos[3].va), 0, "in g0's L2 only");
    assert_eq!(
        p.sim.l2_dirty_pages(g0, bos[3].va).unwrap(),
        2,
        "a page in each GPU's L2"
    );
    p.sim.l2_writeback(g0);
    assert_eq!(cpu_read::<u32>(bos[3].va), 0x0101_0101);
    assert_eq!(cpu_read::<u32>(bos[17].va), 0x0303_0303);
    assert_eq!(
        cpu_read::<u32>(bos[3].va + 4096),
        0,
        "g1's line is g1's to write back"
    );
    p.sim.l2_writeback(g0);
    assert_eq!(
        cpu_read::<u32>(bos[3].va + 4096),
        0,
        "still g1's after a second g0 write-back"
    );
    p.sim.l2_writeback(g1);
    assert_eq!(cpu_read::<u32>(bos[3].va + 4096), 0x0202_0202);
    assert!(
        bos.iter()
            .all(|b| p.sim.l2_dirty_pages(g0, b.va).unwrap() == 0)
    );
    // Dirtied again after its write-back: the next one reaches it.
    p.sim.gpu_write_cached(g0, bos[3].va, &[9u8; 4]).unwrap();
    assert_eq!(cpu_read::<u32>(bos[3].va), 0x0101_0101);
    p.sim.l2_writeback(g0);
    assert_eq!(cpu_read::<u32>(bos[3].va), 0x0909_0909);
    // Freed while dirty: a later write-back skips it, the others still land.
    p.sim.gpu_write_cached(g0, bos[5].va, &[5u8; 4]).unwrap();
    p.sim.gpu_write_cached(g0, bos[6].va, &[6u8; 4]).unwrap();
    let mut bos = bos;
    let freed = bos.remove(5);
    p.release(freed, &[g0, g1]);
    p.sim.l2_writeback(g0);
    assert_eq!(cpu_read::<u32>(bos[5].va), 0x0606_0606);
    for b in bos {
        p.release(b, &[g0, g1]);
    }
    assert!(p.sim.live_objects().nothing_leaked());
}
