//! tinygrad's signal and wait behaviours (test_signal, test_wait, test_signal_update,
//! test_wait_update, test_wait_late_set) on both queues, in both simulator modes.

mod hcq_common;

use core::time::Duration;
use hcq_common::{LONG, P4, Sd, SimMode, both_modes, gpu_u64, one, until_queue};
use hcq_core::timeline::TimelineValue;
use hcq_driver::{Device, Error, Signal};
use hcq_sim::engine::{QueueState, WaitInfo};
use hcq_tests::Rig;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Q {
    Compute,
    Copy,
}

const BOTH: [Q; 2] = [Q::Compute, Q::Copy];

/// Submits `[wait(w) ...] [signal(s, v) ...]` on queue `q`.
fn submit(
    dev: &Device,
    q: Q,
    waits: &[(&Signal, u32)],
    signals: &[(&Signal, u32)],
) -> TimelineValue {
    match q {
        Q::Compute => {
            let mut l = P4::new(dev.arch());
            for (s, v) in waits {
                l.wait(&s.signal_ref(), *v).unwrap();
            }
            for (s, v) in signals {
                l.signal(&s.signal_ref(), u64::from(*v)).unwrap();
            }
            // SAFETY: the list only waits on and sets the signals passed in, which the callers keep alive past their waits.
            unsafe { dev.submit_pm4(&l) }.unwrap()
        }
        Q::Copy => {
            let mut l = Sd::new(dev.arch());
            for (s, v) in waits {
                l.wait(&s.signal_ref(), *v).unwrap();
            }
            for (s, v) in signals {
                l.signal(&s.signal_ref(), *v).unwrap();
            }
            // SAFETY: the list only waits on and sets the signals passed in, which the callers keep alive past their waits.
            unsafe { dev.submit_sdma(&l) }.unwrap()
        }
    }
}

fn queue_id(dev: &Device, q: Q) -> u32 {
    let (c, s) = dev.queue_ids();
    if q == Q::Compute { c } else { s }
}

/// test_signal: the queue writes the value; the host wait returns; the GPU-visible word holds
/// exactly that value. With and without a KFD event (interrupt path).
fn signal(mode: SimMode) {
    let (rig, dev) = one(mode);
    let gpu = dev.gpu_id();
    for event in [false, true] {
        let sig = if event {
            dev.new_event_signal(0).unwrap()
        } else {
            dev.new_signal(0).unwrap()
        };
        assert_eq!(sig.signal_ref().has_event(), event);
        let mut v = 0;
        for round in 0..3 {
            for q in BOTH {
                v += 1 + round;
                submit(&dev, q, &[], &[(&sig, v)]);
                dev.wait(&sig, u64::from(v)).unwrap();
                assert_eq!(sig.value(), u64::from(v), "{q:?} event {event}");
                assert_eq!(
                    gpu_u64(&rig.sim, gpu, sig.signal_ref().value_addr()),
                    u64::from(v)
                );
            }
        }
        dev.synchronize().unwrap();
        assert_eq!(dev.completed_value(), dev.last_value());
    }
}

/// test_wait: a wait on a signal that is already set passes at once; the work after it runs.
fn wait_on_already_set(mode: SimMode) {
    let (_rig, dev) = one(mode);
    let set = dev.new_signal(0xffff_fff0).unwrap();
    let done = dev.new_signal(0).unwrap();
    let mut v = 0;
    for q in BOTH {
        for want in [1u32, 0xffff_fff0] {
            v += 1;
            submit(&dev, q, &[(&set, want)], &[(&done, v)]);
            dev.wait(&done, u64::from(v)).unwrap();
            assert_eq!(done.value(), u64::from(v), "{q:?} waiting for {want:#x}");
        }
    }
}

/// test_signal_update: one list, its signal's address and value patched before each
/// resubmission; every signal gets exactly its own value and no other.
fn signal_update(mode: SimMode) {
    let (_rig, dev) = one(mode);
    let sigs: Vec<Signal> = (0..8).map(|_| dev.new_signal(0).unwrap()).collect();
    let mut p = P4::new(dev.arch());
    let ph = p.signal(&sigs[0].signal_ref(), 0).unwrap();
    let mut s = Sd::new(dev.arch());
    let sh = s.signal(&sigs[0].signal_ref(), 0).unwrap();
    for (i, sig) in sigs.iter().enumerate() {
        let v = 100 + u32::try_from(i).unwrap();
        if i % 2 == 0 {
            p.update_signal(&ph, Some(&sig.signal_ref()), Some(u64::from(v)))
                .unwrap();
            // SAFETY: the list only waits on and sets signals this test created, alive past the
            // waits below.
            unsafe { dev.submit_pm4(&p) }.unwrap();
        } else {
            s.update_signal(&sh, Some(&sig.signal_ref()), Some(v))
                .unwrap();
            // SAFETY: the list only waits on and sets signals this test created, alive past the
            // waits below.
            unsafe { dev.submit_sdma(&s) }.unwrap();
        }
    }
    dev.synchronize().unwrap();
    let got: Vec<u64> = sigs.iter().map(Signal::value).collect();
    assert_eq!(got, (100..108).collect::<Vec<u64>>());
}

/// test_wait_update: one list `wait(a, x) signal(done, y)`, the wait's address and value
/// patched before each resubmission (to signals that are already set).
fn wait_update(mode: SimMode) {
    let (_rig, dev) = one(mode);
    let gates: Vec<Signal> = (0..4u64).map(|i| dev.new_signal(10 + i).unwrap()).collect();
    let never = dev.new_signal(0).unwrap();
    let done = dev.new_signal(0).unwrap();
    let mut p = P4::new(dev.arch());
    let pw = p.wait(&never.signal_ref(), 1).unwrap();
    let ps = p.signal(&done.signal_ref(), 0).unwrap();
    let mut s = Sd::new(dev.arch());
    let sw = s.wait(&never.signal_ref(), 1).unwrap();
    let ss = s.signal(&done.signal_ref(), 0).unwrap();
    let mut v = 0u32;
    for (i, g) in gates.iter().enumerate() {
        let want = 10 + u32::try_from(i).unwrap();
        v += 1;
        p.update_wait(&pw, Some(&g.signal_ref()), Some(want))
            .unwrap();
        p.update_signal(&ps, None, Some(u64::from(v))).unwrap();
        // SAFETY: the list only waits on and sets signals this test created, alive past the
        // waits below.
        unsafe { dev.submit_pm4(&p) }.unwrap();
        dev.wait(&done, u64::from(v)).unwrap();
        v += 1;
        s.update_wait(&sw, Some(&g.signal_ref()), Some(want))
            .unwrap();
        s.update_signal(&ss, None, Some(v)).unwrap();
        // SAFETY: the list only waits on and sets signals this test created, alive past the
        // waits below.
        unsafe { dev.submit_sdma(&s) }.unwrap();
        dev.wait(&done, u64::from(v)).unwrap();
    }
    assert_eq!(done.value(), 8);
}

/// The simulator shows queue `q` blocked on `gate >= 1`.
fn blocked_on(rig: &Rig, dev: &Device, q: Q, gate: &Signal) {
    let info = until_queue(rig, queue_id(dev, q), |i| {
        matches!(i.state, QueueState::Waiting(_))
    });
    let QueueState::Waiting(w) = info.state else {
        unreachable!()
    };
    assert_eq!(
        w,
        WaitInfo {
            addr: gate.signal_ref().value_addr(),
            function: 5,
            reference: 1,
            mask: u32::MAX,
            seen: 0,
        },
        "{q:?}"
    );
}

/// test_wait_late_set, as tinygrad runs it: with a short deadline the wait fails with a
/// timeout naming the signal, the values and both queues; the host sets the signal; the
/// queue proceeds and the work after the wait completes.
fn late_set_times_out_then_completes(mode: SimMode) {
    let (rig, dev) = one(mode);
    for q in BOTH {
        let gate = dev.new_signal(0).unwrap();
        let done = dev.new_signal(0).unwrap();
        let v = submit(&dev, q, &[(&gate, 1)], &[(&done, 7)]);
        rig.kfd.set_wait_timeout(Duration::from_millis(100));
        let err = dev.wait(&done, 7).unwrap_err();
        let Error::Timeout(r) = &err else {
            panic!("{q:?}: expected a timeout, got {err:?}");
        };
        assert_eq!((r.signal_addr, r.expected, r.seen), (done.addr(), 7, 0));
        assert_eq!(r.fault_addr, None);
        let names: Vec<&str> = r.queues.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names.len(), 2, "{err}");
        assert!(
            names[0].starts_with("compute") && names[1].starts_with("sdma"),
            "{err}"
        );
        let blocked = &r.queues[usize::from(q == Q::Copy)];
        assert!(blocked.rptr < blocked.wptr, "{q:?} not blocked: {err}");
        let msg = err.to_string();
        assert!(
            msg.contains(&format!("signal at {} expected >= 7 but is 0", done.addr())),
            "{msg}"
        );
        blocked_on(&rig, &dev, q, &gate);
        assert_eq!(done.value(), 0);
        // A timeline wait for the blocked submission fails the same way.
        assert!(matches!(dev.wait_value(v), Err(Error::Timeout(_))));
        gate.set(1);
        rig.kfd.set_wait_timeout(LONG);
        dev.wait(&done, 7).unwrap();
        dev.synchronize().unwrap();
        assert_eq!(done.value(), 7);
        assert_eq!(dev.completed_value(), v);
    }
}

/// test_wait_late_set with a waiter that blocks: a host thread waits (long deadline) while
/// the queue sits on its wait; the test sets the signal only once the simulator shows the
/// queue blocked on exactly that signal and value; the waiter then returns.
fn late_set_blocks_until_the_host_sets(mode: SimMode) {
    let (rig, dev) = one(mode);
    for q in BOTH {
        let gate = dev.new_signal(0).unwrap();
        let done = dev.new_event_signal(0).unwrap();
        submit(&dev, q, &[(&gate, 1)], &[(&done, 1)]);
        std::thread::scope(|s| {
            let waiter = s.spawn(|| dev.wait(&done, 1));
            blocked_on(&rig, &dev, q, &gate);
            assert_eq!(done.value(), 0);
            assert!(!waiter.is_finished() || mode == SimMode::Deterministic);
            gate.set(1);
            waiter.join().unwrap().unwrap();
        });
        assert_eq!(done.value(), 1);
        dev.synchronize().unwrap();
    }
}

both_modes!(
    signal,
    wait_on_already_set,
    signal_update,
    wait_update,
    late_set_times_out_then_completes,
    late_set_blocks_until_the_host_sets,
);

/// submit_empty_queues: empty lists on both queues still get the driver's timeline wait and
/// signal; each completes with its own timeline value.
fn empty_submissions(mode: SimMode) {
    let (_rig, dev) = one(mode);
    let first = dev.last_value().get() + 1;
    for i in 0..20u64 {
        let v = if i % 2 == 0 {
            // SAFETY: an empty list: only the driver's own timeline wait and signal.
            unsafe { dev.submit_pm4(&P4::new(dev.arch())) }.unwrap()
        } else {
            // SAFETY: an empty list: only the driver's own timeline wait and signal.
            unsafe { dev.submit_sdma(&Sd::new(dev.arch())) }.unwrap()
        };
        assert_eq!(v.get(), first + i);
        dev.wait_value(v).unwrap();
        assert_eq!(dev.completed_value(), v);
    }
}

/// Submissions on one device run in submission order across its two queues (each waits for
/// the timeline value before it): a copy-queue submission blocked on a host gate holds back
/// the compute submission queued after it, until the gate opens.
fn submission_order_spans_both_queues(mode: SimMode) {
    let (rig, dev) = one(mode);
    let gate = dev.new_signal(0).unwrap();
    let a = dev.new_signal(0).unwrap();
    let b = dev.new_signal(0).unwrap();
    let va = submit(&dev, Q::Copy, &[(&gate, 1)], &[(&a, 1)]);
    let vb = submit(&dev, Q::Compute, &[], &[(&b, 1)]);
    assert_eq!(vb.get(), va.get() + 1);
    rig.kfd.set_wait_timeout(Duration::from_millis(50));
    assert!(matches!(dev.wait(&b, 1), Err(Error::Timeout(_))));
    blocked_on(&rig, &dev, Q::Copy, &gate);
    assert_eq!((a.value(), b.value()), (0, 0));
    gate.set(1);
    rig.kfd.set_wait_timeout(LONG);
    dev.wait(&b, 1).unwrap();
    assert_eq!((a.value(), b.value()), (1, 1));
}

both_modes!(empty_submissions, submission_order_spans_both_queues);
