//! Rough per-call costs of the simulated kernel (run with `--release`): GET_VERSION, an
//! ALLOC+MAP+UNMAP+FREE round trip, SET_EVENT+WAIT_EVENTS, and the GPU read path.

use hcq_core::kfd::*;
use hcq_sim::SimKfd;
use std::time::Instant;

fn per_call(n: u32, start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1e9 / f64::from(n)
}

fn main() -> Result<(), Box<dyn core::error::Error>> {
    let sim = SimKfd::gfx1100()?;
    let kfd = sim.open("/dev/kfd")?;
    let render = sim.open("/dev/dri/renderD128")?;
    let gpu = sim.gpu_ids()[0];
    let mut acq = AcquireVmArgs {
        drm_fd: render.0 as u32,
        gpu_id: gpu,
    };
    sim.ioctl(kfd, Request::new(AMDKFD_IOC_ACQUIRE_VM, &mut acq))?;

    let n = 200_000;
    let t = Instant::now();
    for _ in 0..n {
        let mut v = GetVersionArgs::default();
        sim.ioctl(kfd, Request::new(AMDKFD_IOC_GET_VERSION, &mut v))?;
    }
    println!("GET_VERSION: {:.0} ns", per_call(n, t));

    let n = 5_000;
    let ids = [gpu];
    let t = Instant::now();
    for i in 0..n {
        let mut a = AllocMemoryOfGpuArgs {
            va_addr: 0x7000_0000_0000 + u64::from(i) * 0x10000,
            size: 0x10000,
            gpu_id: gpu,
            flags: KFD_IOC_ALLOC_MEM_FLAGS_GTT | KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE,
            ..Default::default()
        };
        sim.ioctl(kfd, Request::new(AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &mut a))?;
        let mut m = MapMemoryToGpuArgs {
            handle: a.handle,
            ..Default::default()
        };
        sim.ioctl(
            kfd,
            Request::map_memory(AMDKFD_IOC_MAP_MEMORY_TO_GPU, &mut m, &ids),
        )?;
        m.n_success = 0;
        sim.ioctl(
            kfd,
            Request::map_memory(AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU, &mut m, &ids),
        )?;
        let mut f = FreeMemoryOfGpuArgs { handle: a.handle };
        sim.ioctl(kfd, Request::new(AMDKFD_IOC_FREE_MEMORY_OF_GPU, &mut f))?;
    }
    println!(
        "ALLOC+MAP+UNMAP+FREE (64 KiB GTT): {:.0} ns",
        per_call(n, t)
    );

    let mut e = CreateEventArgs {
        auto_reset: 1,
        ..Default::default()
    };
    sim.ioctl(kfd, Request::new(AMDKFD_IOC_CREATE_EVENT, &mut e))?;
    let n = 100_000;
    let mut data = [EventData::for_event(e.event_id)];
    let t = Instant::now();
    for _ in 0..n {
        let mut s = SetEventArgs {
            event_id: e.event_id,
            pad: 0,
        };
        sim.ioctl(kfd, Request::new(AMDKFD_IOC_SET_EVENT, &mut s))?;
        let mut w = WaitEventsArgs {
            wait_for_all: 1,
            ..Default::default()
        };
        sim.ioctl(kfd, Request::wait_events(&mut w, &mut data))?;
        assert_eq!(w.wait_result, KFD_IOC_WAIT_RESULT_COMPLETE);
    }
    println!("SET_EVENT+WAIT_EVENTS: {:.0} ns", per_call(n, t));

    let mut a = AllocMemoryOfGpuArgs {
        va_addr: 0x7100_0000_0000,
        size: 1 << 20,
        gpu_id: gpu,
        flags: KFD_IOC_ALLOC_MEM_FLAGS_GTT | KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE,
        ..Default::default()
    };
    sim.ioctl(kfd, Request::new(AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &mut a))?;
    let mut m = MapMemoryToGpuArgs {
        handle: a.handle,
        ..Default::default()
    };
    sim.ioctl(
        kfd,
        Request::map_memory(AMDKFD_IOC_MAP_MEMORY_TO_GPU, &mut m, &ids),
    )?;
    let n = 1_000_000;
    let t = Instant::now();
    let mut sum = 0u64;
    for i in 0..n {
        sum += u64::from(sim.gpu_read_u32(gpu, a.va_addr + u64::from(i % 1024) * 4)?);
    }
    println!("gpu_read_u32: {:.0} ns (sum {sum})", per_call(n, t));
    let mut buf = vec![0u8; 1 << 20];
    let n = 2_000;
    let t = Instant::now();
    for _ in 0..n {
        sim.gpu_read(gpu, a.va_addr, &mut buf)?;
    }
    let ns = per_call(n, t);
    println!(
        "gpu_read 1 MiB: {:.0} ns ({:.1} GB/s)",
        ns,
        (1u64 << 20) as f64 / ns
    );
    Ok(())
}
