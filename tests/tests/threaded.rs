//! The same driver on the threaded simulator: engines run on their own thread and see doorbells
//! as real concurrent writes, WAIT_EVENTS sleeps until an interrupt wakes it.

use core::time::Duration;
use hcq_core::cmd::{Pm4List, SdmaList};
use hcq_driver::kernels::{self, FillArgs, VectorAddArgs};
use hcq_driver::{BufferKind, Device, DeviceOptions, Error, Program};
use hcq_sim::{SimConfig, SimMode};
use hcq_tests::Rig;

fn threaded(gpus: usize, timeout: Duration) -> Rig {
    let cfg = SimConfig {
        mode: SimMode::Threaded,
        ..SimConfig::with_gpus(gpus)
    };
    Rig::with_config(cfg, timeout)
}

fn u32s(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks_exact(4)
        .map(|w| u32::from_le_bytes(w.try_into().unwrap()))
        .collect()
}

#[test]
fn signal_wait_and_late_set_on_both_queues() {
    let rig = threaded(1, Duration::from_secs(20));
    let dev = Device::open(&rig.kfd, 0).unwrap();
    for compute in [true, false] {
        let gate = dev.new_signal(0).unwrap();
        let done = dev.new_event_signal(0).unwrap();
        if compute {
            let mut l = Pm4List::<256, 8>::new(dev.arch());
            l.wait(&gate.signal_ref(), 1).unwrap();
            l.signal(&done.signal_ref(), 1).unwrap();
            // SAFETY: the list only waits on and sets signals this test created, alive past the waits below.
            unsafe { dev.submit_pm4(&l) }.unwrap();
        } else {
            let mut l = SdmaList::<256, 8, 16>::new(dev.arch());
            l.wait(&gate.signal_ref(), 1).unwrap();
            l.signal(&done.signal_ref(), 1).unwrap();
            // SAFETY: the list only waits on and sets signals this test created, alive past the waits below.
            unsafe { dev.submit_sdma(&l) }.unwrap();
        }
        rig.kfd.set_wait_timeout(Duration::from_millis(100));
        assert!(matches!(dev.wait(&done, 1), Err(Error::Timeout(_))));
        rig.kfd.set_wait_timeout(Duration::from_secs(20));
        gate.set(1);
        dev.wait(&done, 1).unwrap();
        dev.synchronize().unwrap();
    }
}

#[test]
fn kernels_and_copies() {
    let rig = threaded(1, Duration::from_secs(20));
    let dev = Device::open(&rig.kfd, 0).unwrap();
    let t = dev.target_name();
    let fill = Program::load(&dev, kernels::fill(&t).unwrap(), "fill").unwrap();
    let add = Program::load(&dev, kernels::vector_add(&t).unwrap(), "vector_add").unwrap();
    let n = 1u32 << 16;
    let bytes = u64::from(n) * 4;
    let a = dev.alloc(bytes, BufferKind::Vram).unwrap();
    let b = dev.alloc(bytes, BufferKind::Vram).unwrap();
    let c = dev.alloc(bytes, BufferKind::Vram).unwrap();
    let host: Vec<u8> = (0..n).flat_map(|i| i.to_le_bytes()).collect();
    dev.copy_in(&a, &host).unwrap();
    let fa = FillArgs {
        buf: b.va(),
        value: 5,
        n,
    };
    let va = VectorAddArgs {
        a: a.va(),
        b: b.va(),
        c: c.va(),
        n,
    };
    // SAFETY: a, b, c hold n u32s each and outlive the launches (copy_out waits).
    unsafe {
        fill.launch_pod(&fa, [n / 64, 1, 1], [64, 1, 1]).unwrap();
        add.launch_pod(&va, [n / 64, 1, 1], [64, 1, 1]).unwrap();
    }
    let mut out = vec![0u8; host.len()];
    dev.copy_out(&c, &mut out).unwrap();
    assert_eq!(u32s(&out), (0..n).map(|i| i + 5).collect::<Vec<_>>());
}

#[test]
fn four_threads_on_one_device() {
    let rig = threaded(1, Duration::from_secs(20));
    let dev = Device::open(&rig.kfd, 0).unwrap();
    let fill = Program::load(&dev, kernels::fill(&dev.target_name()).unwrap(), "fill").unwrap();
    std::thread::scope(|s| {
        for t in 0..4u32 {
            let (dev, fill) = (dev.clone(), &fill);
            s.spawn(move || {
                let n = 1024u32;
                let buf = dev.alloc(u64::from(n) * 4, BufferKind::Vram).unwrap();
                for round in 0..25u32 {
                    let value = (t << 16) | round;
                    let args = FillArgs {
                        buf: buf.va(),
                        value,
                        n,
                    };
                    // SAFETY: buf holds n u32s and outlives the launch (copy_out waits).
                    unsafe { fill.launch_pod(&args, [n / 64, 1, 1], [64, 1, 1]) }.unwrap();
                    let mut out = vec![0u8; n as usize * 4];
                    dev.copy_out(&buf, &mut out).unwrap();
                    assert!(
                        u32s(&out).iter().all(|&v| v == value),
                        "thread {t} round {round}"
                    );
                }
            });
        }
    });
}

#[test]
fn rings_wrap_with_the_engine_racing() {
    let rig = threaded(1, Duration::from_secs(20));
    let opts = DeviceOptions {
        compute_ring_size: 1024,
        sdma_ring_size: 1024,
        ..DeviceOptions::default()
    };
    let dev = Device::open_with(&rig.kfd, 0, opts).unwrap();
    let sig = dev.new_signal(0).unwrap();
    for v in 1..=3000u32 {
        if v % 2 == 0 {
            let mut l = Pm4List::<64, 4>::new(dev.arch());
            l.signal(&sig.signal_ref(), u64::from(v)).unwrap();
            // SAFETY: the list only waits on and sets signals this test created, alive past the waits below.
            unsafe { dev.submit_pm4(&l) }.unwrap();
        } else {
            let mut l = SdmaList::<64, 4, 8>::new(dev.arch());
            l.signal(&sig.signal_ref(), v).unwrap();
            // SAFETY: the list only waits on and sets signals this test created, alive past the waits below.
            unsafe { dev.submit_sdma(&l) }.unwrap();
        }
    }
    dev.synchronize().unwrap();
    assert_eq!(sig.value(), 3000);
}

#[test]
fn hang_surfaces_as_a_fault() {
    let rig = threaded(1, Duration::from_secs(5));
    let dev = Device::open(&rig.kfd, 0).unwrap();
    let fill = Program::load(&dev, kernels::fill(&dev.target_name()).unwrap(), "fill").unwrap();
    let bad = 0x5eed_0000_0000u64;
    let args = FillArgs {
        buf: bad,
        value: 1,
        n: 64,
    };
    // SAFETY: deliberately unmapped; the simulated GPU faults, the host is not touched.
    unsafe { fill.launch_pod(&args, [1, 1, 1], [64, 1, 1]) }.unwrap();
    let err = dev.synchronize().unwrap_err();
    let Error::DeviceFault(r) = &err else {
        panic!("expected a device fault, got {err:?}");
    };
    assert_eq!(r.fault_addr.map(|a| a & !0xfff), Some(bad));
}

#[test]
fn peer_transfer_between_two_gpus() {
    let rig = threaded(2, Duration::from_secs(20));
    let d0 = Device::open(&rig.kfd, 0).unwrap();
    let d1 = Device::open(&rig.kfd, 1).unwrap();
    let n = 3 << 20;
    let src = d0.alloc(n as u64, BufferKind::Vram).unwrap();
    let dst = d1.alloc(n as u64, BufferKind::Vram).unwrap();
    let data: Vec<u8> = (0..n).map(|i| (i % 251) as u8).collect();
    d0.copy_in(&src, &data).unwrap();
    Device::transfer(&d1, &dst, &d0, &src).unwrap();
    let mut out = vec![0u8; n];
    d1.copy_out(&dst, &mut out).unwrap();
    assert!(out == data);
}
