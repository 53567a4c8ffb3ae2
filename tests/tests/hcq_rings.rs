//! The PM4 and SDMA rings wrap thousands of times while fault injection stalls the engine's
//! read pointer: the driver never overwrites commands the engine has not read (every
//! submission's own result is exact), never deadlocks (the test thread releases the stall
//! each time the ring is full), and a stall nobody releases is a deadline error naming the
//! queue, after which the ring recovers. Both simulator modes.

mod hcq_common;

use core::sync::atomic::{AtomicBool, Ordering};
use core::time::Duration;
use hcq_common::{LONG, P4, Sd, SimMode, both_modes, one_with, to_u32s};
use hcq_core::signal::SignalRef;
use hcq_core::timeline::TimelineValue;
use hcq_driver::{BufferKind, Device, DeviceOptions, Error, GpuBuffer};
use hcq_sim::engine::QueueId;
use hcq_tests::Rig;

/// Smallest ring KFD takes: 1 KiB.
const RING: u64 = 1024;

fn small_rings(mode: SimMode, timeout: Duration) -> (Rig, Device) {
    let opts = DeviceOptions {
        compute_ring_size: RING,
        sdma_ring_size: RING,
        ..DeviceOptions::default()
    };
    one_with(mode, timeout, opts)
}

/// Submission `i` writes `i + 1` into 8-byte slot `i` of `out` (a signal write to a bare
/// address: RELEASE_MEM on PM4, FENCE on SDMA).
fn submit_slot(
    dev: &Device,
    compute: bool,
    out: &GpuBuffer,
    i: u32,
) -> hcq_driver::Result<TimelineValue> {
    // The signal's value word is at +8: slot i is the value of a "signal" at out + 8 i - 8.
    let sig = SignalRef::new(out.va().get() + 8 * u64::from(i));
    if compute {
        let mut l = P4::new(dev.arch());
        l.signal(&sig, u64::from(i) + 1).unwrap();
        // SAFETY: the list writes one u64 into slot i of `out`, which the callers size for every slot and keep alive past their synchronize.
        unsafe { dev.submit_pm4(&l) }
    } else {
        let mut l = Sd::new(dev.arch());
        l.signal(&sig, i + 1).unwrap();
        // SAFETY: the list writes one u64 into slot i of `out`, which the callers size for every slot and keep alive past their synchronize.
        unsafe { dev.submit_sdma(&l) }
    }
}

/// The slots' values (slot i is the u32 at out + 8 + 8 i).
fn slots(out: &GpuBuffer, n: u32) -> Vec<u32> {
    let mut back = vec![0u8; 8 * n as usize];
    out.read(8, &mut back).unwrap();
    to_u32s(&back).into_iter().step_by(2).collect()
}

struct Setup {
    rig: Rig,
    dev: Device,
    q: QueueId,
    idx: usize,
    /// Ring size in the queue's units.
    units: u64,
    /// Units one submission takes (measured on the first).
    per_sub: u64,
}

fn setup(
    mode: SimMode,
    compute: bool,
    timeout: Duration,
    out: &dyn Fn(&Device) -> GpuBuffer,
) -> (Setup, GpuBuffer) {
    let (rig, dev) = small_rings(mode, timeout);
    let (cq, sq) = dev.queue_ids();
    let idx = usize::from(!compute);
    let out = out(&dev);
    let w0 = dev.queue_states()[idx].wptr;
    submit_slot(&dev, compute, &out, 0).unwrap();
    // The measuring submission is no deadline case: on a loaded machine a threaded engine may
    // not run within the short `timeout` (seen in CI at 8 test threads), so it waits LONG.
    rig.kfd.set_wait_timeout(LONG);
    dev.synchronize().unwrap();
    rig.kfd.set_wait_timeout(timeout);
    let per_sub = dev.queue_states()[idx].wptr - w0;
    let units = if compute { RING / 4 } else { RING };
    assert!(
        per_sub > 0 && per_sub * 4 < units,
        "{per_sub} units per submission"
    );
    let q = QueueId(if compute { cq } else { sq });
    (
        Setup {
            rig,
            dev,
            q,
            idx,
            units,
            per_sub,
        },
        out,
    )
}

/// `rounds` submissions while a controller thread stalls the read pointer, waits until the
/// driver's view shows the ring full, releases it, waits until the read pointer moved, and
/// stalls again.
fn wraps_under_stalls(mode: SimMode, compute: bool, rounds: u32) {
    let alloc = |d: &Device| {
        d.alloc(8 * (u64::from(rounds) + 2), BufferKind::GttUncached)
            .unwrap()
    };
    let (s, out) = setup(mode, compute, LONG, &alloc);
    let start_w = s.dev.queue_states()[s.idx].wptr;
    let done = AtomicBool::new(false);
    let mut fills = 0u32;
    // Stalled before the first submission: the first lap fills the ring for sure.
    s.rig.gpu.engines().stall_rptr(s.q, true).unwrap();
    std::thread::scope(|sc| {
        let ctl = sc.spawn(|| {
            let engines = s.rig.gpu.engines();
            let mut fills = 0u32;
            let state = || s.dev.queue_states()[s.idx].clone();
            'outer: loop {
                engines.stall_rptr(s.q, true).unwrap();
                // Full: the next submission (plus SDMA's end-of-ring padding) cannot fit.
                loop {
                    if done.load(Ordering::Acquire) {
                        break 'outer;
                    }
                    let st = state();
                    if st.wptr - st.rptr > s.units - 2 * s.per_sub {
                        break;
                    }
                    std::thread::yield_now();
                }
                fills += 1;
                let before = state().rptr;
                engines.stall_rptr(s.q, false).unwrap();
                s.rig.gpu.kick();
                while state().rptr == before && !done.load(Ordering::Acquire) {
                    std::thread::yield_now();
                }
            }
            engines.stall_rptr(s.q, false).unwrap();
            fills
        });
        for i in 1..=rounds {
            submit_slot(&s.dev, compute, &out, i).unwrap();
        }
        done.store(true, Ordering::Release);
        fills = ctl.join().unwrap();
    });
    s.dev.synchronize().unwrap();
    // Every submission ran, exactly once, with its own value.
    let want: Vec<u32> = (1..=rounds + 1).collect();
    assert_eq!(slots(&out, rounds + 1), want);
    let st = &hcq_common::settled(&s.rig, &s.dev)[s.idx];
    let used = st.wptr - start_w;
    if compute {
        // PM4 packets may straddle the ring end: no padding, the units are exact.
        assert_eq!(used, u64::from(rounds) * s.per_sub);
    } else {
        assert!(used >= u64::from(rounds) * s.per_sub);
    }
    assert!(used / s.units >= 1000, "only {} laps", used / s.units);
    // The controller saw the ring full and released it at least once (the first lap); how
    // often after that depends on scheduling: it races the producer to re-stall.
    assert!(fills >= 1);
}

fn pm4_ring_wraps_under_stalls(mode: SimMode) {
    wraps_under_stalls(mode, true, 8_500);
}

fn sdma_ring_wraps_under_stalls(mode: SimMode) {
    wraps_under_stalls(mode, false, 13_000);
}

/// A stall nobody releases: submissions fill the ring, the next one fails after the deadline
/// with a timeout naming the queue and "ring full"; the failed submission changed nothing
/// (its timeline value is handed out again, its slot stays 0); after the release every
/// accepted submission completes with its own value and the ring takes new work.
fn stalled_ring_is_a_deadline_error(mode: SimMode, compute: bool) {
    let alloc = |d: &Device| d.alloc(8 * 64, BufferKind::GttUncached).unwrap();
    let (s, out) = setup(mode, compute, Duration::from_millis(100), &alloc);
    s.rig.gpu.engines().stall_rptr(s.q, true).unwrap();
    let mut ok = 0u32;
    let err = loop {
        match submit_slot(&s.dev, compute, &out, ok + 1) {
            Ok(v) => {
                ok += 1;
                assert_eq!(v, s.dev.last_value());
            }
            Err(e) => break e,
        }
        assert!(ok < 60, "a stalled 1 KiB ring took 60 submissions");
    };
    let last = s.dev.last_value();
    let Error::Timeout(r) = &err else {
        panic!("expected a timeout, got {err:?}");
    };
    let q0 = &r.queues[0];
    let name = if compute { "compute" } else { "sdma" };
    assert!(q0.name.starts_with(name), "{err}");
    assert!(q0.wptr - q0.rptr <= s.units, "{err}");
    assert!(q0.wptr - q0.rptr + s.per_sub > s.units - s.per_sub, "{err}");
    assert!(err.to_string().contains("ring full"), "{err}");
    assert!(ok >= 1);
    s.rig.gpu.engines().stall_rptr(s.q, false).unwrap();
    s.rig.kfd.set_wait_timeout(LONG);
    s.dev.synchronize().unwrap();
    let mut want: Vec<u32> = (1..=ok + 1).collect();
    want.push(0);
    assert_eq!(slots(&out, ok + 2), want);
    // The ring takes the failed submission now, with the timeline value it did not use.
    let v = submit_slot(&s.dev, compute, &out, ok + 1).unwrap();
    assert_eq!(v.get(), last.get() + 1);
    s.dev.wait_value(v).unwrap();
    *want.last_mut().unwrap() = ok + 2;
    assert_eq!(slots(&out, ok + 2), want);
}

fn stalled_pm4_ring_is_a_deadline_error(mode: SimMode) {
    stalled_ring_is_a_deadline_error(mode, true);
}

fn stalled_sdma_ring_is_a_deadline_error(mode: SimMode) {
    stalled_ring_is_a_deadline_error(mode, false);
}

/// Both 1 KiB rings at once, submissions alternating between them (each waits for the one
/// before on the other queue, through the timeline): 3000 submissions, every value in order,
/// both rings wrapped many times, nothing left unread.
fn both_rings_wrap_alternating(mode: SimMode) {
    let (_rig, dev) = small_rings(mode, LONG);
    let sig = dev.new_signal(0).unwrap();
    for v in 1..=3000u32 {
        if v % 2 == 0 {
            let mut l = P4::new(dev.arch());
            l.signal(&sig.signal_ref(), u64::from(v)).unwrap();
            // SAFETY: the list only sets `sig`, a signal this test created (alive to the end).
            unsafe { dev.submit_pm4(&l) }.unwrap();
        } else {
            let mut l = Sd::new(dev.arch());
            l.signal(&sig.signal_ref(), v).unwrap();
            // SAFETY: as above.
            unsafe { dev.submit_sdma(&l) }.unwrap();
        }
    }
    dev.synchronize().unwrap();
    assert_eq!(sig.value(), 3000);
    let states = dev.queue_states();
    for (st, units) in states.iter().zip([RING / 4, RING]) {
        assert_eq!(st.rptr, st.wptr, "{}", st.name);
        assert!(
            st.wptr / units >= 50,
            "{}: only {} laps",
            st.name,
            st.wptr / units
        );
    }
}

both_modes!(
    both_rings_wrap_alternating,
    pm4_ring_wraps_under_stalls,
    sdma_ring_wraps_under_stalls,
    stalled_pm4_ring_is_a_deadline_error,
    stalled_sdma_ring_is_a_deadline_error,
);
