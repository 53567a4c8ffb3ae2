//! Files, topology, the dispatcher's generic rules and the small ioctls.

mod common;

use common::Proc;
use hcq_core::kfd::topology::{CwsrSizes, NodeProperties, ScratchSizing};
use hcq_core::kfd::*;
use hcq_sim::{GpuConfig, Persistence, SimConfig, SimKfd};

fn read(sim: &SimKfd, path: &str) -> Result<String, Errno> {
    let mut buf = [0u8; 4096];
    let n = sim.read_file(path, &mut buf)?;
    Ok(String::from_utf8(buf[..n].to_vec()).unwrap())
}

#[test]
fn topology_default_is_7900xtx() {
    let sim = SimKfd::gfx1100().unwrap();
    let base = "/sys/devices/virtual/kfd/kfd/topology/nodes";
    assert_eq!(read(&sim, &format!("{base}/0/gpu_id")).unwrap(), "0\n");
    let cpu = NodeProperties::parse(&read(&sim, &format!("{base}/0/properties")).unwrap()).unwrap();
    assert!(!cpu.is_gpu());
    let gpu_id = topology::parse_gpu_id(&read(&sim, &format!("{base}/1/gpu_id")).unwrap()).unwrap();
    assert_ne!(gpu_id, 0);
    assert!(gpu_id <= 0xFFFF);
    assert_eq!(sim.gpu_ids(), vec![gpu_id]);
    let p = NodeProperties::parse(&read(&sim, &format!("{base}/1/properties")).unwrap()).unwrap();
    assert_eq!(p.gfx_target_version, 110000);
    assert_eq!(p.simd_count, 192);
    assert_eq!(p.simd_per_cu, 2);
    assert_eq!(p.max_waves_per_simd, 16);
    assert_eq!(p.max_slots_scratch_cu, 32);
    assert_eq!(p.array_count, 12);
    assert_eq!(p.simd_arrays_per_engine, 2);
    assert_eq!(p.lds_size_in_kb, 64);
    assert_eq!(p.drm_render_minor, 128);
    assert_eq!(p.local_mem_size, 24 << 30);
    assert_eq!(
        ScratchSizing::for_node(&p).unwrap().tmpring_size,
        0x0020_0200
    );
    assert_eq!(
        CwsrSizes::for_node(&p).unwrap().min_cwsr_mapping_size(),
        Some(0x2C0_2000)
    );
    assert_eq!(read(&sim, &format!("{base}/2/gpu_id")), Err(Errno::ENOENT));
    assert_eq!(read(&sim, "/sys/nope"), Err(Errno::ENOENT));
    let mut small = [0u8; 8];
    assert_eq!(
        sim.read_file(&format!("{base}/1/properties"), &mut small),
        Err(Errno::ENOSPC)
    );
}

#[test]
fn topology_configurable() {
    let mut cfg = SimConfig::with_gpus(3);
    cfg.gpus[2] = GpuConfig {
        gfx_target_version: 120001,
        cu_count: 64,
        vram_size: 16 << 30,
        ..GpuConfig::gfx1100()
    };
    let sim = SimKfd::new(cfg).unwrap();
    let ids = sim.gpu_ids();
    assert_eq!(ids.len(), 3);
    assert!(ids[0] != ids[1] && ids[1] != ids[2] && ids[0] != ids[2]);
    let p = sim.properties(ids[2]).unwrap();
    assert_eq!(
        (p.gfx_target_version, p.simd_count, p.drm_render_minor),
        (120001, 128, 130)
    );
    assert_eq!(sim.queue_sizes(ids[2]).unwrap().ctl_stack_size, 0x7000);
    for minor in 128..131 {
        assert!(sim.open(&format!("/dev/dri/renderD{minor}")).is_ok());
    }
    assert_eq!(sim.open("/dev/dri/renderD131"), Err(Errno::ENOENT));
    assert_eq!(sim.open("/dev/nvidia0"), Err(Errno::ENOENT));
}

#[test]
fn files_and_generic_dispatch() {
    let sim = SimKfd::gfx1100().unwrap();
    let kfd = sim.open("/dev/kfd").unwrap();
    let mut v = GetVersionArgs::default();
    sim.ioctl(kfd, Request::new(AMDKFD_IOC_GET_VERSION, &mut v))
        .unwrap();
    assert_eq!((v.major_version, v.minor_version), (1, 14));
    // Unknown numbers: ENOTTY, never a panic.
    let mut junk = [0u8; 64];
    for nr in [0u8, 0x27, 0x28, 0x80, 0xFF] {
        assert_eq!(
            sim.ioctl(kfd, Request::raw(iowr(b'K', nr, 16), &mut junk).unwrap()),
            Err(Errno::ENOTTY),
            "nr {nr:#x}"
        );
    }
    // Deprecated debugger ioctls: EPERM.
    assert_eq!(
        sim.ioctl(
            kfd,
            Request::raw(AMDKFD_IOC_DBG_REGISTER_DEPRECATED.request(), &mut junk[..8]).unwrap()
        ),
        Err(Errno::EPERM)
    );
    // The user size comes from the request: a buffer shorter than it is EFAULT.
    assert_eq!(
        sim.ioctl(
            kfd,
            Request::raw(AMDKFD_IOC_GET_VERSION.request(), &mut junk[..4]).unwrap()
        ),
        Err(Errno::EFAULT)
    );
    // The kernel ignores the type byte and direction: 'X' type, same nr works.
    let mut v2 = [0u8; 8];
    sim.ioctl(kfd, Request::raw(ior(b'X', 0x01, 8), &mut v2).unwrap())
        .unwrap();
    assert_eq!(u32::from_le_bytes(v2[4..8].try_into().unwrap()), 14);
    // A shorter (older) user struct: only usize bytes copied back.
    let mut short = [0xAAu8; 8];
    sim.ioctl(kfd, Request::raw(ior(b'K', 0x01, 4), &mut short).unwrap())
        .unwrap();
    assert_eq!(short, [1, 0, 0, 0, 0xAA, 0xAA, 0xAA, 0xAA]);
    // Render nodes answer no KFD ioctls; unknown files are EBADF.
    let r = sim.open("/dev/dri/renderD128").unwrap();
    assert_eq!(
        sim.ioctl(
            r,
            Request::raw(AMDKFD_IOC_GET_VERSION.request(), &mut junk[..8]).unwrap()
        ),
        Err(Errno::ENOTTY)
    );
    assert_eq!(
        sim.ioctl(
            Fd(3),
            Request::raw(AMDKFD_IOC_GET_VERSION.request(), &mut junk[..8]).unwrap()
        ),
        Err(Errno::EBADF)
    );
    assert_eq!(sim.live_objects().open_files, 2);
    sim.close(r).unwrap();
    sim.close(kfd).unwrap();
    assert_eq!(sim.close(kfd), Err(Errno::EBADF));
    assert_eq!(sim.live_objects().open_files, 0);
}

#[test]
fn version_is_configurable() {
    let sim = SimKfd::new(SimConfig {
        kfd_minor_version: 18,
        ..SimConfig::default()
    })
    .unwrap();
    let kfd = sim.open("/dev/kfd").unwrap();
    let mut v = GetVersionArgs::default();
    sim.ioctl(kfd, Request::new(AMDKFD_IOC_GET_VERSION, &mut v))
        .unwrap();
    assert_eq!(v.minor_version, 18);
}

#[test]
fn acquire_vm_rules() {
    let sim = SimKfd::new(SimConfig::with_gpus(2)).unwrap();
    let ids = sim.gpu_ids();
    let kfd = sim.open("/dev/kfd").unwrap();
    let r0 = sim.open("/dev/dri/renderD128").unwrap();
    let r0b = sim.open("/dev/dri/renderD128").unwrap();
    let acq = |fd: Fd, gpu: u32| {
        let mut a = AcquireVmArgs {
            drm_fd: fd.0 as u32,
            gpu_id: gpu,
        };
        sim.ioctl(kfd, Request::new(AMDKFD_IOC_ACQUIRE_VM, &mut a))
    };
    assert_eq!(acq(Fd(12345), ids[0]), Err(Errno::EINVAL)); // not a file
    assert_eq!(acq(r0, 0), Err(Errno::EINVAL)); // gpu_id 0
    assert_eq!(acq(r0, 0xFFFF_FFFF), Err(Errno::EINVAL));
    assert_eq!(acq(kfd, ids[0]), Err(Errno::EINVAL)); // not a DRM file
    acq(r0, ids[0]).unwrap();
    acq(r0, ids[0]).unwrap(); // same file: no-op
    assert_eq!(acq(r0b, ids[0]), Err(Errno::EBUSY));
    assert_eq!(acq(r0, ids[1]), Err(Errno::EINVAL)); // that VM is already a compute VM
}

#[test]
fn runtime_enable_xnack_memory_clock_apertures() {
    let p = Proc::new(SimConfig::with_gpus(2));
    let mut r = RuntimeEnableArgs {
        r_debug: 0x1234,
        mode_mask: KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK,
        capabilities_mask: 0x77,
    };
    p.ioctl(AMDKFD_IOC_RUNTIME_ENABLE, &mut r).unwrap();
    assert_eq!(r.capabilities_mask, 0x77, "not written back");
    assert_eq!(
        p.ioctl(AMDKFD_IOC_RUNTIME_ENABLE, &mut r),
        Err(Errno::EBUSY)
    );
    r.mode_mask = 0;
    p.ioctl(AMDKFD_IOC_RUNTIME_ENABLE, &mut r).unwrap();

    let mut x = SetXnackModeArgs { xnack_enabled: -1 };
    p.ioctl(AMDKFD_IOC_SET_XNACK_MODE, &mut x).unwrap();
    assert_eq!(x.xnack_enabled, 0);
    x.xnack_enabled = 0;
    p.ioctl(AMDKFD_IOC_SET_XNACK_MODE, &mut x).unwrap();
    x.xnack_enabled = 1;
    assert_eq!(
        p.ioctl(AMDKFD_IOC_SET_XNACK_MODE, &mut x),
        Err(Errno::EPERM)
    ); // gfx11

    let mut m = GetAvailableMemoryArgs {
        gpu_id: p.gpu(),
        ..Default::default()
    };
    p.ioctl(AMDKFD_IOC_AVAILABLE_MEMORY, &mut m).unwrap();
    assert_eq!(m.available, 24 << 30);
    let b = p.alloc(3 << 20, common::VRAM_FLAGS);
    p.ioctl(AMDKFD_IOC_AVAILABLE_MEMORY, &mut m).unwrap();
    assert_eq!(m.available, (24 << 30) - (4 << 20), "aligned down to 2 MiB");
    m.gpu_id = 7;
    assert_eq!(
        p.ioctl(AMDKFD_IOC_AVAILABLE_MEMORY, &mut m),
        Err(Errno::EINVAL)
    );
    p.release(b, &[p.gpu()]);

    let mut c = GetClockCountersArgs {
        gpu_id: p.gpu(),
        ..Default::default()
    };
    p.ioctl(AMDKFD_IOC_GET_CLOCK_COUNTERS, &mut c).unwrap();
    let first = c.gpu_clock_counter;
    p.ioctl(AMDKFD_IOC_GET_CLOCK_COUNTERS, &mut c).unwrap();
    assert!(c.gpu_clock_counter > first);
    assert_eq!(c.system_clock_freq, 1_000_000_000);
    c.gpu_id = 0;
    p.ioctl(AMDKFD_IOC_GET_CLOCK_COUNTERS, &mut c).unwrap();
    assert_eq!(c.gpu_clock_counter, 0, "unknown GPU: counter 0, no error");

    let mut ap = [ProcessDeviceApertures::default(); 4];
    let mut a = GetProcessAperturesNewArgs::default();
    let ask = |a: &mut _, out: &mut [_]| p.sim.ioctl(p.kfd, Request::process_apertures(a, out));
    ask(&mut a, &mut []).unwrap();
    assert_eq!(a.num_of_nodes, 2);
    ask(&mut a, &mut ap[..1]).unwrap();
    assert_eq!(a.num_of_nodes, 1);
    assert_eq!(ap[0].gpu_id, p.gpus[0]);
    assert_eq!(ap[0].gpuvm_base, 0x1_0000);
    assert_eq!(ap[0].gpuvm_limit, (1 << 47) - 1);
    assert_eq!(ap[0].lds_base, 1 << 48);
    assert_eq!(ap[1].gpu_id, 0, "only num_of_nodes entries written");
    ask(&mut a, &mut ap).unwrap();
    assert_eq!(a.num_of_nodes, 2);
    assert_eq!(ap[1].gpu_id, p.gpus[1]);
    // A count past the borrowed array: the kernel's copy_to_user faults.
    let req = Request::process_apertures(&mut a, &mut ap[..1]);
    assert_eq!(p.ioctl_count(req, 8, 4), Err(Errno::EFAULT));
}

#[test]
fn fault_injection_once_and_always() {
    let p = Proc::one();
    let mut v = GetVersionArgs::default();
    p.sim.fail_ioctl(0x01, Errno::EIO, Persistence::Once);
    assert_eq!(p.ioctl(AMDKFD_IOC_GET_VERSION, &mut v), Err(Errno::EIO));
    p.ioctl(AMDKFD_IOC_GET_VERSION, &mut v).unwrap();
    p.sim.fail_ioctl(0x16, Errno::ENOMEM, Persistence::Always);
    assert_eq!(
        p.alloc_at(0, 4096, common::GTT_FLAGS).unwrap_err(),
        Errno::ENOMEM
    );
    assert_eq!(
        p.alloc_at(0, 4096, common::GTT_FLAGS).unwrap_err(),
        Errno::ENOMEM
    );
    p.sim.clear_ioctl_failures();
    let b = p.alloc_at(0, 4096, common::GTT_FLAGS).unwrap();
    p.release(b, &[]);
    assert!(p.sim.live_objects().nothing_leaked());
}
