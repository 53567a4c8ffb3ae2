//! The PM4 and SDMA rings wrap thousands of times while the engine's read pointer is stalled
//! on and off (fault injection): the driver waits instead of overwriting unread commands, never
//! deadlocks, and a stall longer than the deadline is a timeout naming the queue.

use core::sync::atomic::{AtomicBool, Ordering};
use core::time::Duration;
use hcq_core::cmd::{Pm4List, SdmaList};
use hcq_driver::{Device, DeviceOptions, Error};
use hcq_sim::engine::QueueId;
use hcq_tests::Rig;

/// Smallest ring KFD takes: 1 KiB (256 dwords).
const RING: u64 = 1024;

fn small_rings(rig: &Rig) -> Device {
    let opts = DeviceOptions {
        compute_ring_size: RING,
        sdma_ring_size: RING,
        ..DeviceOptions::default()
    };
    Device::open_with(&rig.kfd, 0, opts).unwrap()
}

fn submit(
    dev: &Device,
    compute: bool,
    sig: &hcq_driver::Signal,
    v: u32,
) -> hcq_driver::Result<u64> {
    if compute {
        let mut l = Pm4List::<64, 4>::new(dev.arch());
        l.signal(&sig.signal_ref(), u64::from(v)).unwrap();
        // SAFETY: the list only sets `sig`, which the callers create and keep past their synchronize.
        unsafe { dev.submit_pm4(&l) }
    } else {
        let mut l = SdmaList::<64, 4, 8>::new(dev.arch());
        l.signal(&sig.signal_ref(), v).unwrap();
        // SAFETY: the list only sets `sig`, which the callers create and keep past their synchronize.
        unsafe { dev.submit_sdma(&l) }
    }
}

fn stalled_ring_times_out_then_recovers(compute: bool) {
    let rig = Rig::new(1, Duration::from_millis(200));
    let dev = small_rings(&rig);
    let (cq, sq) = dev.queue_ids();
    let q = QueueId(if compute { cq } else { sq });
    let sig = dev.new_signal(0).unwrap();
    rig.gpu.engines().stall_rptr(q, true).unwrap();
    let mut ok = 0u32;
    let err = loop {
        match submit(&dev, compute, &sig, ok + 1) {
            Ok(_) => ok += 1,
            Err(e) => break e,
        }
        assert!(ok < 1000, "a stalled 1 KiB ring took 1000 submissions");
    };
    let Error::Timeout(r) = &err else {
        panic!("expected a timeout, got {err:?}");
    };
    let q0 = &r.queues[0];
    assert!(
        q0.name.contains(if compute { "compute" } else { "sdma" }),
        "{err}"
    );
    let units = if compute { RING / 4 } else { RING };
    assert!(q0.wptr - q0.rptr <= units, "{err}");
    assert!(err.to_string().contains("ring full"), "{err}");
    assert!(ok >= 1);
    rig.gpu.engines().stall_rptr(q, false).unwrap();
    rig.kfd.set_wait_timeout(Duration::from_secs(20));
    dev.synchronize().unwrap();
    assert_eq!(sig.value(), u64::from(ok));
}

#[test]
fn stalled_pm4_ring_times_out_then_recovers() {
    stalled_ring_times_out_then_recovers(true);
}

#[test]
fn stalled_sdma_ring_times_out_then_recovers() {
    stalled_ring_times_out_then_recovers(false);
}

fn wraps_with_toggling_stall(compute: bool, rounds: u32) {
    let rig = Rig::new(1, Duration::from_secs(20));
    let dev = small_rings(&rig);
    let (cq, sq) = dev.queue_ids();
    let q = QueueId(if compute { cq } else { sq });
    let sig = dev.new_signal(0).unwrap();
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut on = false;
            while !done.load(Ordering::Acquire) {
                on = !on;
                rig.gpu.engines().stall_rptr(q, on).unwrap();
                std::thread::sleep(Duration::from_micros(300));
            }
            rig.gpu.engines().stall_rptr(q, false).unwrap();
        });
        for v in 1..=rounds {
            submit(&dev, compute, &sig, v).unwrap();
        }
        done.store(true, Ordering::Release);
    });
    dev.synchronize().unwrap();
    assert_eq!(sig.value(), u64::from(rounds));
    let st = &dev.queue_states()[usize::from(!compute)];
    assert_eq!(st.rptr, st.wptr);
    let units = if compute { RING / 4 } else { RING };
    let wraps = st.wptr / units;
    assert!(wraps >= 1000, "only {wraps} wraps");
}

#[test]
fn pm4_ring_wraps_thousands_of_times_under_stalls() {
    // ~31 dwords per submission (timeline wait + signal, user signal): 8 per 256-dword lap.
    wraps_with_toggling_stall(true, 8_500);
}

#[test]
fn sdma_ring_wraps_thousands_of_times_under_stalls() {
    // 6 + 10 + 4 dwords per submission (+ wrap padding): 12 per 1 KiB lap.
    wraps_with_toggling_stall(false, 13_000);
}
