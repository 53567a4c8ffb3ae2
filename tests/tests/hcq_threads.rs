//! One `Device` used from 4 threads at once (kernels, copies, command lists, waits), every
//! result checked; on the deterministic and the threaded simulator.

mod hcq_common;

use hcq_common::{P4, Sd, SimMode, both_modes, one, programs, read_u32s, to_bytes};
use hcq_driver::BufferKind;
use hcq_tests::fixtures::{FillArgs, VectorAddArgs};

fn four_threads(mode: SimMode) {
    let (rig, dev) = one(mode);
    let (fill, add) = programs(&dev);
    let before = dev.last_value();
    let rounds = 25u32;
    let subs = core::sync::atomic::AtomicU64::new(0);
    std::thread::scope(|s| {
        for t in 0..4u32 {
            let (dev, fill, add, subs) = (dev.clone(), &fill, &add, &subs);
            s.spawn(move || {
                let n = 1024u32;
                let bytes = u64::from(n) * 4;
                let a = dev.alloc(bytes, BufferKind::Vram).unwrap();
                let b = dev.alloc(bytes, BufferKind::Vram).unwrap();
                let c = dev.alloc(bytes, BufferKind::Vram).unwrap();
                let sig = dev.new_signal(0).unwrap();
                let mut mine = 0u64;
                for round in 0..rounds {
                    let base = (t << 24) | (round << 12);
                    // Host -> a (copy queue), fill b (kernel), c = a + b (kernel), c -> host.
                    let av: Vec<u32> = (0..n).map(|i| base + i).collect();
                    dev.copy_in(&a, &to_bytes(&av)).unwrap();
                    let fa = FillArgs {
                        buf: b.va().get(),
                        value: t + 1,
                        n,
                    };
                    let va = VectorAddArgs {
                        a: a.va().get(),
                        b: b.va().get(),
                        c: c.va().get(),
                        n,
                    };
                    // SAFETY: a, b, c hold n u32s and outlive the launches (read_u32s waits).
                    unsafe {
                        fill.launch_pod(&fa, [n / 64, 1, 1], [64, 1, 1]).unwrap();
                        add.launch_pod(&va, [n / 64, 1, 1], [64, 1, 1]).unwrap();
                    }
                    let got = read_u32s(&dev, &c, n as usize);
                    let want: Vec<u32> = av.iter().map(|v| v + t + 1).collect();
                    assert_eq!(got, want, "thread {t} round {round}");
                    // A device copy c -> a, then a list on each queue signalling this thread's
                    // signal; the signal ends at the round's value.
                    dev.copy(&a, &c).unwrap();
                    let v = 2 * round + 1;
                    let mut l = P4::new(dev.arch());
                    l.signal(&sig.signal_ref(), u64::from(v)).unwrap();
                    // SAFETY: the list only sets `sig`, this thread's signal, alive past the wait below.
                    unsafe { dev.submit_pm4(&l) }.unwrap();
                    let mut l = Sd::new(dev.arch());
                    l.wait(&sig.signal_ref(), v).unwrap();
                    l.signal(&sig.signal_ref(), v + 1).unwrap();
                    // SAFETY: the list only waits on and sets `sig`, this thread's signal, alive past the wait below.
                    unsafe { dev.submit_sdma(&l) }.unwrap();
                    dev.wait(&sig, u64::from(v + 1)).unwrap();
                    assert_eq!(sig.value(), u64::from(v + 1), "thread {t} round {round}");
                    assert_eq!(
                        read_u32s(&dev, &a, n as usize),
                        want,
                        "thread {t} round {round}"
                    );
                    mine += 1;
                }
                subs.fetch_add(mine, core::sync::atomic::Ordering::Relaxed);
            });
        }
    });
    assert_eq!(subs.into_inner(), 4 * u64::from(rounds));
    dev.synchronize().unwrap();
    assert_eq!(dev.completed_value(), dev.last_value());
    // Per round: copy_in, fill, add, copy_out, copy, PM4 list, SDMA list, copy_out: one
    // timeline value each, none lost or doubled across threads.
    assert_eq!(
        dev.last_value().get() - before.get(),
        4 * u64::from(rounds) * 8
    );
    hcq_common::settled(&rig, &dev);
}

both_modes!(four_threads);
