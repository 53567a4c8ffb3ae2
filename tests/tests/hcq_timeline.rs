//! tinygrad's test_timeline_signal_rollover: the timeline starts at 2^32 - 20 and runs 40
//! rounds of wait / signal / synchronize on both queues. The GPU compares and writes 32-bit
//! values, so the driver wraps onto the shadow signal at the first synchronize past 2^31;
//! checked here on the words the simulated GPU reads. Both simulator modes.

mod hcq_common;

use hcq_common::{P4, Sd, SimMode, both_modes, gpu_u64, one};
use hcq_core::signal::SignalRef;
use hcq_driver::Error;

const START: u64 = (1 << 32) - 20;

fn rollover(mode: SimMode) {
    let (rig, dev) = one(mode);
    let gpu = dev.gpu_id();
    let word = |s: &SignalRef| gpu_u64(&rig.sim, gpu, s.value_addr());
    assert!(matches!(
        dev.set_timeline_value(1 << 32),
        Err(Error::InvalidArgument(_))
    ));
    dev.set_timeline_value(START).unwrap();
    assert_eq!(dev.last_value().get(), START - 1);
    assert_eq!(dev.completed_value().get(), START - 1);
    let user = dev.new_signal(0).unwrap();
    let mut primary: Option<SignalRef> = None;
    let mut shadow: Option<SignalRef> = None;
    for round in 1..=40u64 {
        // Compute: wait for the last value (through the signal and 32-bit value the driver
        // names for it), signal the user signal; then the same on the copy queue.
        let prev = dev.last_value();
        let mut c = P4::new(dev.arch());
        if let Some((s, v)) = dev.timeline_target(prev) {
            c.wait(&s, v).unwrap();
        }
        c.signal(&user.signal_ref(), 2 * round - 1).unwrap();
        // SAFETY: the list waits on the timeline (a wait only) and sets `user`, a signal this test created.
        let vc = unsafe { dev.submit_pm4(&c) }.unwrap();
        let mut s = Sd::new(dev.arch());
        let (ts, tv) = dev.timeline_target(vc).unwrap();
        s.wait(&ts, tv).unwrap();
        s.signal(&user.signal_ref(), u32::try_from(2 * round).unwrap())
            .unwrap();
        // SAFETY: the list waits on the timeline (a wait only) and sets `user`, a signal this test created.
        let vs = unsafe { dev.submit_sdma(&s) }.unwrap();
        assert_eq!(
            (vc.get(), vs.get()),
            (START + 2 * round - 2, START + 2 * round - 1)
        );
        // The GPU values the two submissions signal.
        let (sc, gc) = dev.timeline_target(vc).unwrap();
        let (ss, gs) = dev.timeline_target(vs).unwrap();
        assert_eq!(sc, ss);
        if round == 1 {
            // Before the wrap: the primary signal, GPU value = host value (< 2^32).
            assert_eq!((u64::from(gc), u64::from(gs)), (vc.get(), vs.get()));
            primary = Some(sc);
        } else {
            // After it: the shadow signal, counting again from 1.
            assert_ne!(Some(sc), primary);
            if let Some(sh) = shadow {
                assert_eq!(sc, sh);
            }
            shadow = Some(sc);
            assert_eq!(
                (u64::from(gc), u64::from(gs)),
                (2 * round - 3, 2 * round - 2)
            );
        }
        dev.synchronize().unwrap();
        assert_eq!(user.value(), 2 * round);
        assert_eq!(dev.completed_value(), vs);
        assert_eq!(dev.last_value(), vs);
        let p = primary.unwrap();
        // The primary keeps the last value it was given (the GPU wrote 2^32 - 19).
        assert_eq!(word(&p), START + 1, "round {round}");
        match round {
            // The synchronize of round 1 passed 2^31 and wrapped: values before the last one
            // have no GPU value any more (complete by construction); the last one is 0 on
            // the shadow, which the host reset to 0.
            1 => {
                assert_eq!(dev.timeline_target(vc), None);
                let (sh, v) = dev.timeline_target(vs).unwrap();
                assert_ne!(sh, p);
                assert_eq!((v, word(&sh)), (0, 0));
            }
            _ => assert_eq!(word(&shadow.unwrap()), 2 * round - 2, "round {round}"),
        }
    }
    // Host values never went back: 80 submissions after START - 1.
    assert_eq!(dev.last_value().get(), START + 79);
    assert_eq!(dev.completed_value().get(), START + 79);
    // The timeline keeps working with kernels and copies on the shadow signal.
    let buf = dev.alloc(64, hcq_driver::BufferKind::Vram).unwrap();
    dev.copy_in(&buf, &[9u8; 64]).unwrap();
    let mut out = [0u8; 64];
    dev.copy_out(&buf, &mut out).unwrap();
    assert_eq!(out, [9u8; 64]);
}

both_modes!(rollover);

/// The wrap at 2^31 while 4 threads submit on both queues and synchronize: every thread's
/// own signal ends at its last value, no timeline value is lost or doubled, and the GPU
/// value of the last submission is on the signal the driver names for it.
fn wrap_while_four_threads_submit(mode: SimMode) {
    let (rig, dev) = one(mode);
    let start = (1u64 << 31) - 100;
    dev.set_timeline_value(start).unwrap();
    let rounds = 60u32;
    std::thread::scope(|s| {
        for t in 0..4u32 {
            let dev = dev.clone();
            s.spawn(move || {
                let sig = dev.new_signal(0).unwrap();
                for r in 1..=rounds {
                    let v = t * 1000 + r;
                    if (r + t) % 2 == 0 {
                        let mut l = P4::new(dev.arch());
                        l.signal(&sig.signal_ref(), u64::from(v)).unwrap();
                        // SAFETY: the list only sets `sig`, this thread's signal (alive to the end).
                        unsafe { dev.submit_pm4(&l) }.unwrap();
                    } else {
                        let mut l = Sd::new(dev.arch());
                        l.signal(&sig.signal_ref(), v).unwrap();
                        // SAFETY: the list only sets `sig`, this thread's signal (alive to the end).
                        unsafe { dev.submit_sdma(&l) }.unwrap();
                    }
                    if r % 7 == 0 {
                        dev.synchronize().unwrap();
                        assert_eq!(sig.value(), u64::from(v), "thread {t} round {r}");
                    }
                }
                dev.synchronize().unwrap();
                assert_eq!(sig.value(), u64::from(t * 1000 + rounds), "thread {t}");
            });
        }
    });
    dev.synchronize().unwrap();
    let last = dev.last_value();
    assert_eq!(last.get(), start - 1 + 4 * u64::from(rounds));
    assert_eq!(dev.completed_value(), last);
    // 240 submissions from 2^31 - 100: the wrap happened (at a synchronize past 2^31), so
    // the last value's GPU value is small and sits in the signal the driver names.
    let (sig, gv) = dev.timeline_target(last).unwrap();
    assert!(
        u64::from(gv) < 4 * u64::from(rounds),
        "no wrap: GPU value {gv}"
    );
    assert_eq!(
        gpu_u64(&rig.sim, dev.gpu_id(), sig.value_addr()),
        u64::from(gv)
    );
}

both_modes!(wrap_while_four_threads_submit);
