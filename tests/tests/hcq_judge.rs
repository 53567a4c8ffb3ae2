//! The simulator's judge of ordering between queues and of deadlocks, on correct driver use:
//! what it must name (a wait nothing can satisfy, while the host waits) and what it must not
//! (a gate another host thread opens, writers ordered by waits or by the host).

mod hcq_common;

use core::time::Duration;
use hcq_common::{LONG, SimMode, rig};
use hcq_driver::{Device, Error};
use std::time::Instant;

/// A wait on a signal no GPU work will write, while the host waits for it: the host's wait
/// times out at its deadline with the cause (the queue, the signal, the value, its history),
/// and the queue is not faulted: the host may still write the value, and then it goes on.
fn a_wait_nothing_can_satisfy_is_a_deadlock(mode: SimMode) {
    let r = rig(mode, 1, Duration::from_millis(300));
    let dev = Device::open(&r.kfd, 0).unwrap();
    let never = dev.new_signal(0).unwrap();
    // SAFETY: waits on `never`, alive past the wait below.
    let v = unsafe { dev.submit_compute(|c| c.wait(&never.signal_ref(), 7)) }.unwrap();
    let err = dev.wait_value(v).unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, Error::Timeout(_)), "{text}");
    let want = format!(
        "waits for the value at {:#x} to be >= 7 (mask 0xffffffff) and it holds 0, but no queued or running operation can write it",
        never.signal_ref().value_addr()
    );
    // The compute queue's kind: AQL on a GPU of several XCCs (HCQ_SIM_XCC), else PM4.
    let kind = if dev.is_aql() { "AQL" } else { "PM4" };
    assert!(
        text.starts_with(&format!(
            "wait timed out: simulator: deadlock: {kind} queue "
        )),
        "{text}"
    );
    assert!(text.contains(&want), "{text}");
    assert!(
        text.contains("the signal's history, oldest first: no GPU write"),
        "{text}"
    );
    // Not a fault: the host writes the value late, and the queue goes on.
    never.set(7);
    r.kfd.set_wait_timeout(LONG);
    dev.wait_value(v).unwrap();
}

/// A gate another host thread opens while this one waits is no deadlock, however late it
/// comes: 1.5 s, three times the delay after which the simulator logs a warning.
fn a_gate_another_thread_opens_is_no_deadlock(mode: SimMode) {
    let r = rig(mode, 1, Duration::from_secs(10));
    let dev = Device::open(&r.kfd, 0).unwrap();
    let gate = std::sync::Arc::new(dev.new_signal(0).unwrap());
    // SAFETY: waits on `gate`, alive past the wait below.
    let v = unsafe { dev.submit_compute(|c| c.wait(&gate.signal_ref(), 1)) }.unwrap();
    let g = std::sync::Arc::clone(&gate);
    let opener = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(1500));
        g.set(1);
    });
    let t0 = Instant::now();
    dev.wait_value(v).unwrap();
    assert!(t0.elapsed() >= Duration::from_millis(1400));
    opener.join().unwrap();
}

/// One signal written by the compute queue, then (after the host saw the value) by the copy
/// queue with a lower value, is a value that goes down; the same writes in increasing order,
/// ordered by the host's wait, are fine.
fn writers_ordered_by_the_host(mode: SimMode) {
    let r = rig(mode, 1, Duration::from_secs(5));
    let dev = Device::open(&r.kfd, 0).unwrap();
    let sig = dev.new_signal(0).unwrap();
    // SAFETY: the submissions write only `sig`, alive past every wait below.
    unsafe { dev.submit_compute(|c| c.signal(&sig.signal_ref(), 1)) }.unwrap();
    dev.wait(&sig, 1).unwrap();
    // SAFETY: as above.
    unsafe { dev.submit_copy(|c| c.signal(&sig.signal_ref(), 2)) }.unwrap();
    dev.wait(&sig, 2).unwrap();
    // SAFETY: as above.
    unsafe { dev.submit_compute(|c| c.signal(&sig.signal_ref(), 1)) }.unwrap();
    let err = dev.synchronize().unwrap_err().to_string();
    assert!(
        err.contains(&format!(
            "timeline signal at {:#x} goes down: RELEASE_MEM ({} queue",
            sig.signal_ref().value_addr(),
            if dev.is_aql() { "AQL" } else { "PM4" }
        )) && err.contains("writes 1 over 2, which SDMA FENCE (SDMA queue"),
        "{err}"
    );
}

hcq_common::both_modes!(
    a_wait_nothing_can_satisfy_is_a_deadlock,
    a_gate_another_thread_opens_is_no_deadlock,
    writers_ordered_by_the_host,
);
