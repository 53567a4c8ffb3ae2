//! Kfd, Device, GpuBuffer and signals on the simulator's ioctl side: setup, memory, teardown,
//! errors, and every ioctl failure the simulator can inject.

use core::time::Duration;
use hcq_core::kfd::Errno;
use hcq_driver::{BufferKind, Device, Error, MemoryKind};
use hcq_sim::{LiveObjects, Persistence};
use hcq_tests::Rig;

/// What survives a fully dropped driver: the registered event page (KFD refuses to free it,
/// EPERM; it goes with the process).
const AFTER_DROP: LiveObjects = LiveObjects {
    bos: 0,
    event_page_bo: true,
    gpu_mappings: 0,
    cpu_mappings: 0,
    queues: 0,
    events: 0,
    open_files: 0,
};

fn assert_send_sync<T: Send + Sync>() {}

#[test]
fn device_and_buffer_are_send_and_sync() {
    assert_send_sync::<Device>();
    assert_send_sync::<hcq_driver::GpuBuffer>();
    assert_send_sync::<hcq_driver::Program>();
    assert_send_sync::<hcq_driver::Kfd>();
}

#[test]
fn open_device_and_drop_leaks_nothing() {
    let rig = Rig::new(1, Duration::from_millis(200));
    {
        let dev = Device::open(&rig.kfd, 0).unwrap();
        assert_eq!(dev.target_name(), "gfx1100");
        assert_eq!(dev.gpu_id(), rig.sim.gpu_ids()[0]);
        let live = rig.sim.live_objects();
        assert_eq!(live.queues, 2);
        // Signal page, scratch, kernargs, and per queue: ring + pointers (+ EOP and CWSR for
        // compute); the event page is counted apart.
        assert_eq!(live.bos, 9);
        assert!(live.event_page_bo);
        // Timeline + shadow signal events, plus memory and HW-exception events.
        assert_eq!(live.events, 4);
    }
    let sim = rig.sim.clone();
    drop(rig);
    assert_eq!(sim.live_objects(), AFTER_DROP);
}

#[test]
fn unknown_device_index_is_an_error() {
    let rig = Rig::new(1, Duration::from_millis(200));
    match Device::open(&rig.kfd, 3) {
        Err(Error::NoSuchDevice { available, .. }) => assert_eq!(available, 1),
        other => panic!("expected NoSuchDevice, got {other:?}"),
    }
}

#[test]
fn buffers_of_every_kind_share_bytes_with_the_cpu() {
    let rig = Rig::new(1, Duration::from_millis(200));
    let dev = Device::open(&rig.kfd, 0).unwrap();
    for kind in [
        BufferKind::VramCpuVisible,
        BufferKind::Gtt,
        BufferKind::GttUncached,
        BufferKind::Host,
    ] {
        let buf = dev.alloc(10_000, kind).unwrap();
        assert_eq!(buf.len(), 10_000);
        assert_eq!(buf.va().get() % 4096, 0);
        buf.write(9_996, &[1, 2, 3, 4]).unwrap();
        let mut back = [0u8; 4];
        buf.read(9_996, &mut back).unwrap();
        assert_eq!(back, [1, 2, 3, 4], "{kind:?}");
        assert!(matches!(
            buf.write(9_997, &[1, 2, 3, 4]),
            Err(Error::InvalidArgument(_))
        ));
    }
    let vram = dev.alloc(4096, BufferKind::Vram).unwrap();
    assert!(matches!(
        vram.read(0, &mut [0u8; 4]),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        dev.alloc(0, BufferKind::Vram),
        Err(Error::InvalidArgument(_))
    ));
}

#[test]
fn out_of_vram_is_an_error_naming_the_size() {
    let rig = Rig::new(1, Duration::from_millis(200));
    let dev = Device::open(&rig.kfd, 0).unwrap();
    let gpu = dev.gpu_id();
    let before = rig.sim.live_objects();
    // The device itself holds ~450 MiB (scratch 384 MiB, CWSR, kernargs).
    assert!(rig.sim.set_vram_limit(gpu, 1 << 30));
    let err = dev.alloc(1 << 30, BufferKind::Vram).unwrap_err();
    match &err {
        Error::OutOfMemory {
            requested, kind, ..
        } => {
            assert_eq!(*requested, 1 << 30);
            assert_eq!(*kind, MemoryKind::Vram);
        }
        other => panic!("expected OutOfMemory, got {other:?}"),
    }
    assert!(err.to_string().contains("1073741824 bytes"), "{err}");
    // Nothing of the failed allocation stays behind.
    assert_eq!(rig.sim.live_objects(), before);
    // Smaller allocations still work.
    let ok = dev.alloc(1 << 20, BufferKind::Vram).unwrap();
    drop(ok);
    assert_eq!(rig.sim.live_objects(), before);
}

#[test]
fn peer_mapping_and_unmapping() {
    let rig = Rig::new(2, Duration::from_millis(200));
    let d0 = Device::open(&rig.kfd, 0).unwrap();
    let d1 = Device::open(&rig.kfd, 1).unwrap();
    assert_ne!(d0.gpu_id(), d1.gpu_id());
    let before = rig.sim.live_objects();
    let buf = d0.alloc(1 << 16, BufferKind::Vram).unwrap();
    buf.map_to(&d1).unwrap();
    buf.map_to(&d1).unwrap(); // no-op the second time
    let live = rig.sim.live_objects();
    assert_eq!(live.gpu_mappings, before.gpu_mappings + 2);
    drop(buf);
    assert_eq!(rig.sim.live_objects(), before);
}

#[test]
fn host_set_signal_completes_a_wait() {
    let rig = Rig::new(1, Duration::from_millis(200));
    let dev = Device::open(&rig.kfd, 0).unwrap();
    let s = dev.new_signal(0).unwrap();
    assert_eq!(s.value(), 0);
    s.set(7);
    dev.wait(&s, 7).unwrap();
    dev.wait(&s, 3).unwrap();
    let e = dev.new_event_signal(1).unwrap();
    assert!(e.signal_ref().has_event());
    dev.wait(&e, 1).unwrap();
}

#[test]
fn a_wait_that_never_completes_times_out_with_a_report() {
    let rig = Rig::new(1, Duration::from_millis(100));
    let dev = Device::open(&rig.kfd, 0).unwrap();
    let s = dev.new_signal(1).unwrap();
    let err = dev.wait(&s, 5).unwrap_err();
    let Error::Timeout(r) = &err else {
        panic!("expected a timeout, got {err:?}");
    };
    assert_eq!(r.signal_addr, s.addr());
    assert_eq!((r.expected, r.seen), (5, 1));
    assert_eq!(r.queues.len(), 2);
    assert!(r.waited_ms >= 100);
    let msg = err.to_string();
    assert!(msg.contains("expected >= 5 but is 1"), "{msg}");
    assert!(msg.contains("compute queue"), "{msg}");
    assert!(msg.contains("sdma queue"), "{msg}");
}

/// ioctl numbers the driver issues while opening KFD and a device.
const SETUP_IOCTLS: [(u8, &str); 7] = [
    (0x01, "GET_VERSION"),
    (0x25, "RUNTIME_ENABLE"),
    (0x15, "ACQUIRE_VM"),
    (0x16, "ALLOC_MEMORY_OF_GPU"),
    (0x18, "MAP_MEMORY_TO_GPU"),
    (0x08, "CREATE_EVENT"),
    (0x02, "CREATE_QUEUE"),
];

#[test]
fn every_injected_setup_failure_is_an_error_and_leaks_nothing() {
    for (nr, name) in SETUP_IOCTLS {
        for errno in [Errno::EINVAL, Errno::ENOMEM, Errno::EIO] {
            let rig = Rig::new(1, Duration::from_millis(100));
            rig.sim.fail_ioctl(nr, errno, Persistence::Always);
            let failed = if matches!(nr, 0x01 | 0x25) {
                // Issued by Kfd::open: open a second KFD on the same simulator.
                // SAFETY: as in `Rig`: the sim is used for injection only.
                unsafe { hcq_driver::Kfd::with_sim(rig.sim.clone()) }.is_err()
            } else {
                Device::open(&rig.kfd, 0)
                    .and_then(|d| d.alloc(4096, BufferKind::Vram).map(|b| (d, b)))
                    .is_err()
            };
            rig.sim.clear_ioctl_failures();
            assert!(failed, "{name} failing with {errno} was not reported");
            let sim = rig.sim.clone();
            drop(rig);
            let live = sim.live_objects();
            // Only the event page may stay (if it was registered before the failure).
            assert!(
                live.nothing_leaked() && live.open_files == 0,
                "{name} failing with {errno}: {live:?}"
            );
        }
    }
}

#[test]
fn injected_wait_events_failure_surfaces() {
    let rig = Rig::new(1, Duration::from_millis(100));
    let dev = Device::open(&rig.kfd, 0).unwrap();
    let s = dev.new_signal(0).unwrap();
    rig.sim.fail_ioctl(0x0c, Errno::EIO, Persistence::Once);
    match dev.wait(&s, 1) {
        Err(Error::Sys { op, errno }) => {
            assert_eq!(op, "WAIT_EVENTS");
            assert_eq!(errno, Errno::EIO);
        }
        other => panic!("expected the WAIT_EVENTS error, got {other:?}"),
    }
}

/// Teardown ioctls (UNMAP, FREE, DESTROY_QUEUE, DESTROY_EVENT) run in `Drop`: a single
/// injected failure is retried, so nothing leaks.
#[test]
fn injected_teardown_failures_leak_nothing() {
    for (nr, name) in [
        (0x19u8, "UNMAP_MEMORY_FROM_GPU"),
        (0x17, "FREE_MEMORY_OF_GPU"),
        (0x03, "DESTROY_QUEUE"),
        (0x09, "DESTROY_EVENT"),
    ] {
        let rig = Rig::new(1, Duration::from_millis(100));
        let dev = Device::open(&rig.kfd, 0).unwrap();
        let buf = dev.alloc(4096, BufferKind::Vram).unwrap();
        let sig = dev.new_event_signal(0).unwrap();
        rig.sim.fail_ioctl(nr, Errno::EINTR, Persistence::Once);
        drop(buf);
        drop(sig);
        drop(dev);
        let sim = rig.sim.clone();
        drop(rig);
        assert_eq!(sim.live_objects(), AFTER_DROP, "{name}");
    }
}

/// `GpuBuffer::free` reports what Drop can only log: a wait that times out, a failed UNMAP or
/// FREE each hand the buffer back, still allocated, mapped and holding its bytes; the next
/// `free` succeeds and leaks nothing.
#[test]
fn explicit_free_reports_failures_and_hands_the_buffer_back() {
    let rig = Rig::new(1, Duration::from_millis(100));
    let dev = Device::open(&rig.kfd, 0).unwrap();
    let data: Vec<u8> = (0..=255u8).cycle().take(4096).collect();
    let other = dev.alloc(4096, BufferKind::Vram).unwrap();
    // The device's staging buffers exist from the first copy_out on.
    dev.copy_out(&other, &mut [0u8; 8]).unwrap();
    let before = rig.sim.live_objects();
    let mut buf = dev.alloc(4096, BufferKind::Gtt).unwrap();
    buf.write(0, &data).unwrap();
    let va = buf.va();
    let still_works = |buf: &hcq_driver::GpuBuffer| {
        assert_eq!(buf.va(), va);
        let mut back = vec![0u8; 4096];
        buf.read(0, &mut back).unwrap();
        assert_eq!(back, data, "the CPU view holds the bytes");
        // The GPU still reaches it: a copy through the copy queue.
        dev.copy(&other, buf).unwrap();
        let mut out = vec![0u8; 4096];
        dev.copy_out(&other, &mut out).unwrap();
        assert_eq!(out, data, "the GPU reaches the buffer");
    };
    // The wait for the GPU fails: a copy into the buffer on a hung copy queue.
    let (_, sq) = dev.queue_ids();
    let q = hcq_sim::engine::QueueId(sq);
    rig.gpu.engines().hang(q, true).unwrap();
    dev.copy(&buf, &buf).unwrap();
    let (e, back) = buf.free().unwrap_err();
    assert!(matches!(e, Error::Timeout(_)), "{e}");
    buf = back;
    rig.gpu.engines().hang(q, false).unwrap();
    rig.gpu.kick();
    rig.kfd.set_wait_timeout(Duration::from_secs(20));
    still_works(&buf);
    // UNMAP and FREE refused once each.
    for (nr, op) in [
        (0x19u8, "UNMAP_MEMORY_FROM_GPU"),
        (0x17, "FREE_MEMORY_OF_GPU"),
    ] {
        rig.sim.fail_ioctl(nr, Errno::EIO, Persistence::Once);
        let (e, back) = buf.free().unwrap_err();
        match &e {
            Error::Sys { op: o, errno } => assert_eq!((*o, *errno), (op, Errno::EIO)),
            other => panic!("{op}: expected Sys, got {other:?}"),
        }
        assert_eq!(
            core::error::Error::source(&e).and_then(|s| s.downcast_ref::<Errno>()),
            Some(&Errno::EIO)
        );
        buf = back;
        still_works(&buf);
    }
    buf.free().unwrap();
    assert_eq!(
        rig.sim.live_objects(),
        before,
        "free released the buffer's memory and its mappings"
    );
}

/// Failures of the ioctls a running device issues are errors, and the device keeps working.
#[test]
fn injected_runtime_failures_are_errors() {
    let rig = Rig::new(2, Duration::from_millis(100));
    let d0 = Device::open(&rig.kfd, 0).unwrap();
    let d1 = Device::open(&rig.kfd, 1).unwrap();
    rig.sim.fail_ioctl(0x16, Errno::ENOMEM, Persistence::Once);
    assert!(matches!(
        d0.alloc(4096, BufferKind::Gtt),
        Err(Error::OutOfMemory {
            requested: 4096,
            kind: MemoryKind::Gtt,
            ..
        })
    ));
    let buf = d0.alloc(4096, BufferKind::Gtt).unwrap();
    rig.sim.fail_ioctl(0x18, Errno::EINVAL, Persistence::Once);
    assert!(matches!(
        buf.map_to(&d1),
        Err(Error::Sys {
            op: "MAP_MEMORY_TO_GPU",
            ..
        })
    ));
    buf.map_to(&d1).unwrap();
    rig.sim.fail_ioctl(0x05, Errno::EIO, Persistence::Once);
    assert!(matches!(
        d0.clock_counters(),
        Err(Error::Sys {
            op: "GET_CLOCK_COUNTERS",
            ..
        })
    ));
    let (gpu, cpu) = d0.clock_counters().unwrap();
    assert!(cpu > 0 || gpu > 0);
    rig.sim.fail_ioctl(0x08, Errno::ENOSPC, Persistence::Once);
    assert!(matches!(d0.new_event_signal(0), Err(Error::Exhausted(_))));
    drop(buf);
    drop((d0, d1));
    let sim = rig.sim.clone();
    drop(rig);
    assert_eq!(sim.live_objects(), AFTER_DROP);
}

#[test]
fn rings_below_the_kfd_minimum_are_refused() {
    let rig = Rig::new(1, Duration::from_millis(100));
    let opts = hcq_driver::DeviceOptions {
        compute_ring_size: 512,
        ..hcq_driver::DeviceOptions::default()
    };
    match Device::open_with(&rig.kfd, 0, opts) {
        Err(Error::InvalidArgument(m)) => assert!(m.contains("512 bytes"), "{m}"),
        other => panic!("expected InvalidArgument, got {other:?}"),
    }
    let opts = hcq_driver::DeviceOptions {
        sdma_ring_size: 3000,
        ..hcq_driver::DeviceOptions::default()
    };
    assert!(matches!(
        Device::open_with(&rig.kfd, 0, opts),
        Err(Error::InvalidArgument(_))
    ));
}
