//! Failures: a GPU memory fault surfacing from the wait with its address (tinygrad's
//! test_on_device_hang), a hung queue, lost and late interrupts, out of memory, and every
//! ioctl failure the simulator can inject at every step of a workload, each an error that
//! leaks nothing. Both simulator modes.

mod hcq_common;

use core::time::Duration;
use hcq_common::{LONG, P4, Sd, SimMode, both_modes, one, programs, rig};
use hcq_core::kfd::{Errno, Fd, KfdSys, MapKind, Prot, Request};
use hcq_driver::{BufferKind, Device, Error, GpuBuffer, Kfd, MemoryKind, Program, Signal};
use hcq_sim::engine::QueueId;
use hcq_sim::engine::attach::SimGpu;
use hcq_sim::{Persistence, SimConfig, SimKfd};
use hcq_tests::fixtures::{self, FillArgs};
use std::sync::{Arc, Mutex};

/// Deadline of the fault tests: a fault must come back as a `DeviceFault` before it (a
/// `Timeout` would mean the fault was not seen).
const SHORT: Duration = Duration::from_secs(2);

/// test_on_device_hang: a kernel writes through an unmapped address; the wait fails with a
/// device fault naming that address (not a timeout), with both queues' pointers.
fn kernel_vm_fault_names_the_address(mode: SimMode) {
    let r = rig(mode, 1, SHORT);
    let dev = Device::open(&r.kfd, 0).unwrap();
    let (fill, _) = programs(&dev);
    let bad = 0x7ead_bee0_1000u64;
    let args = FillArgs {
        buf: bad,
        value: 1,
        n: 64,
    };
    // SAFETY: deliberately unmapped: the simulated GPU faults; no host memory is touched.
    let v = unsafe { fill.launch_pod(&args, [1, 1, 1], [64, 1, 1]) }.unwrap();
    let err = dev.wait_value(v).unwrap_err();
    let Error::DeviceFault(rep) = &err else {
        panic!("expected a device fault, got {err:?}");
    };
    assert_eq!(rep.fault_addr, Some(bad), "{err}");
    assert_eq!(rep.queues.len(), 2);
    assert!(rep.queues[0].name.starts_with("compute"), "{err}");
    assert_eq!(rep.seen, v.get() - 1, "{err}");
    let msg = err.to_string();
    assert!(msg.contains("GPU memory fault at 0x7eadbee01000"), "{msg}");
    assert!(msg.contains("page not present"), "{msg}");
    // The fault sticks: later waits on the device fail the same way, at once.
    for _ in 0..2 {
        let err = dev.synchronize().unwrap_err();
        assert_eq!(err.wait_report().unwrap().fault_addr, Some(bad), "{err}");
        assert!(matches!(err, Error::DeviceFault(_)), "{err}");
    }
    let sig = dev.new_signal(0).unwrap();
    let mut l = P4::new(dev.arch());
    l.signal(&sig.signal_ref(), 1).unwrap();
    // SAFETY: the list only waits on and sets signals this test created, alive past the
    // waits below.
    unsafe { dev.submit_pm4(&l) }.unwrap();
    let err = dev.wait(&sig, 1).unwrap_err();
    assert!(matches!(err, Error::DeviceFault(_)), "{err}");
    assert_eq!(sig.value(), 0);
}

/// An injected fault on a mapped page hit by an SDMA copy: a device fault naming the first
/// faulting byte's page, reported from a synchronize.
fn copy_vm_fault_names_the_address(mode: SimMode) {
    let r = rig(mode, 1, SHORT);
    let dev = Device::open(&r.kfd, 0).unwrap();
    let src = dev.alloc(1 << 16, BufferKind::Vram).unwrap();
    let dst = dev.alloc(1 << 16, BufferKind::Vram).unwrap();
    let poisoned = dst.va().get() + 0x2000;
    r.gpu.engines().fault_address(poisoned);
    dev.copy(&dst, &src).unwrap();
    let err = dev.synchronize().unwrap_err();
    let Error::DeviceFault(rep) = &err else {
        panic!("expected a device fault, got {err:?}");
    };
    assert_eq!(rep.fault_addr.map(|a| a & !0xfff), Some(poisoned), "{err}");
    assert!(rep.queues[1].name.starts_with("sdma"), "{err}");
}

/// A hung queue: the wait times out after the deadline with the expected and seen values
/// and the stuck queue's pointers; un-hung, the same work completes.
fn hung_queue_times_out_then_recovers(mode: SimMode) {
    let r = rig(mode, 1, Duration::from_millis(200));
    let dev = Device::open(&r.kfd, 0).unwrap();
    let (cq, sq) = dev.queue_ids();
    for (q, idx) in [(cq, 0usize), (sq, 1)] {
        r.gpu.engines().hang(QueueId(q), true).unwrap();
        let sig = dev.new_signal(0).unwrap();
        let v = if idx == 0 {
            let mut l = P4::new(dev.arch());
            l.signal(&sig.signal_ref(), 5).unwrap();
            // SAFETY: the list only waits on and sets signals this test created, alive past the
            // waits below.
            unsafe { dev.submit_pm4(&l) }.unwrap()
        } else {
            let mut l = Sd::new(dev.arch());
            l.signal(&sig.signal_ref(), 5).unwrap();
            // SAFETY: the list only waits on and sets signals this test created, alive past the
            // waits below.
            unsafe { dev.submit_sdma(&l) }.unwrap()
        };
        let err = dev.wait_value(v).unwrap_err();
        let Error::Timeout(rep) = &err else {
            panic!("expected a timeout, got {err:?}");
        };
        assert_eq!((rep.expected, rep.seen), (v.get(), v.get() - 1), "{err}");
        assert!(rep.waited_ms >= 200, "{err}");
        assert_eq!(rep.fault_addr, None);
        let stuck = &rep.queues[idx];
        assert!(stuck.rptr < stuck.wptr, "{err}");
        let other = &rep.queues[1 - idx];
        assert_eq!(other.rptr, other.wptr, "{err}");
        assert_eq!(sig.value(), 0);
        r.gpu.engines().hang(QueueId(q), false).unwrap();
        r.gpu.kick();
        r.kfd.set_wait_timeout(LONG);
        dev.wait(&sig, 5).unwrap();
        dev.synchronize().unwrap();
        r.kfd.set_wait_timeout(Duration::from_millis(200));
    }
}

/// Completion interrupts dropped or delayed: waits on event signals still complete (the
/// wait rechecks the value), and every value is exact.
fn lost_and_late_interrupts(mode: SimMode) {
    let (r, dev) = one(mode);
    let sig = dev.new_event_signal(0).unwrap();
    let mut v = 0u32;
    for (drop_n, delay) in [(3, 0), (0, 5), (2, 3)] {
        r.sim.drop_interrupts(drop_n);
        r.sim.delay_interrupts(delay);
        for _ in 0..4 {
            v += 1;
            let mut l = P4::new(dev.arch());
            l.signal(&sig.signal_ref(), u64::from(v)).unwrap();
            // SAFETY: the list only waits on and sets signals this test created, alive past the
            // waits below.
            unsafe { dev.submit_pm4(&l) }.unwrap();
            dev.wait(&sig, u64::from(v)).unwrap();
            v += 1;
            let mut l = Sd::new(dev.arch());
            l.signal(&sig.signal_ref(), v).unwrap();
            // SAFETY: the list only waits on and sets signals this test created, alive past the
            // waits below.
            unsafe { dev.submit_sdma(&l) }.unwrap();
            dev.wait(&sig, u64::from(v)).unwrap();
            assert_eq!(sig.value(), u64::from(v));
        }
    }
    r.sim.delay_interrupts(0);
    dev.synchronize().unwrap();
}

/// Out of memory: every pool answers `OutOfMemory` with the requested size and pool, and
/// the failed allocation leaves nothing behind; smaller allocations still work.
fn out_of_memory(mode: SimMode) {
    let (r, dev) = one(mode);
    // The staging buffers copies use are created on first use: create them first.
    dev.copy_in(&dev.alloc(64, BufferKind::Vram).unwrap(), &[0; 64])
        .unwrap();
    dev.synchronize().unwrap();
    let before = r.sim.live_objects();
    let huge = 1u64 << 45;
    for (kind, pool) in [
        (BufferKind::Vram, MemoryKind::Vram),
        (BufferKind::VramCpuVisible, MemoryKind::Vram),
        (BufferKind::Gtt, MemoryKind::Gtt),
        (BufferKind::GttUncached, MemoryKind::Gtt),
    ] {
        let err = dev.alloc(huge, kind).unwrap_err();
        let Error::OutOfMemory {
            requested, kind: k, ..
        } = &err
        else {
            panic!("{kind:?}: expected OutOfMemory, got {err:?}");
        };
        assert_eq!((*requested, *k), (huge, pool), "{kind:?}");
        assert!(
            err.to_string()
                .contains(&format!("out of {pool}: {huge} bytes requested")),
            "{err}"
        );
        assert_eq!(r.sim.live_objects(), before, "{kind:?}");
    }
    // A VRAM limit below what is free: the next allocation past it fails, exactly.
    assert!(r.sim.set_vram_limit(dev.gpu_id(), 1 << 30));
    let err = dev.alloc(1 << 30, BufferKind::Vram).unwrap_err();
    assert!(
        matches!(
            err,
            Error::OutOfMemory {
                requested: 0x4000_0000,
                kind: MemoryKind::Vram,
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(r.sim.live_objects(), before);
    let ok = dev.alloc(1 << 20, BufferKind::Vram).unwrap();
    dev.copy_in(&ok, &[3; 64]).unwrap();
    let mut out = [0u8; 64];
    dev.copy_out(&ok, &mut out).unwrap();
    assert_eq!(out, [3; 64]);
    drop(ok);
    assert_eq!(r.sim.live_objects(), before);
}

// ---- every injected ioctl failure ------------------------------------------------------------

/// The simulator, counting which ioctl numbers the driver issues.
struct Counting {
    sim: Arc<SimKfd>,
    log: Mutex<Vec<u8>>,
}

impl KfdSys for Counting {
    fn open(&self, path: &str) -> Result<Fd, Errno> {
        self.sim.open(path)
    }
    fn close(&self, fd: Fd) -> Result<(), Errno> {
        self.sim.close(fd)
    }
    fn ioctl(&self, fd: Fd, request: Request<'_>) -> Result<(), Errno> {
        self.log.lock().unwrap().push(request.nr());
        self.sim.ioctl(fd, request)
    }
    fn mmap(&self, fixed: Option<u64>, len: u64, prot: Prot, kind: MapKind) -> Result<u64, Errno> {
        self.sim.mmap(fixed, len, prot, kind)
    }
    fn munmap(&self, addr: u64, len: u64) -> Result<(), Errno> {
        self.sim.munmap(addr, len)
    }
    fn read_file(&self, path: &str, buf: &mut [u8]) -> Result<usize, Errno> {
        self.sim.read_file(path, buf)
    }
}

/// What a workload holds (dropped in reverse order of creation at the end).
#[derive(Default)]
struct Held {
    kfd: Option<Kfd>,
    devs: Vec<Device>,
    bufs: Vec<GpuBuffer>,
    progs: Vec<Program>,
    sigs: Vec<Signal>,
}

impl Held {
    fn dev(&self, i: usize) -> &Device {
        &self.devs[i]
    }
}

type Step = fn(&Arc<Counting>, &mut Held) -> hcq_driver::Result<()>;

/// The workload: every ioctl the driver issues while running, step by step.
const STEPS: [(&str, Step); 10] = [
    ("open KFD", |sys, h| {
        // SAFETY: `Counting` forwards every call to a `SimKfd` unchanged (it only records the
        // ioctl numbers), so it meets `with_sys`'s contract as `SimKfd` does.
        let kfd = unsafe { Kfd::with_sys(Arc::clone(sys) as Arc<dyn KfdSys>) }?;
        kfd.set_wait_timeout(Duration::from_millis(500));
        h.kfd = Some(kfd);
        Ok(())
    }),
    ("open GPU 0", |_, h| {
        let d = Device::open(h.kfd.as_ref().unwrap(), 0)?;
        h.devs.push(d);
        Ok(())
    }),
    ("open GPU 1", |_, h| {
        let d = Device::open(h.kfd.as_ref().unwrap(), 1)?;
        h.devs.push(d);
        Ok(())
    }),
    ("allocate", |_, h| {
        for kind in [BufferKind::Vram, BufferKind::Gtt, BufferKind::Host] {
            let b = h.dev(0).alloc(1 << 16, kind)?;
            h.bufs.push(b);
        }
        Ok(())
    }),
    ("load a program", |_, h| {
        let d = h.dev(0);
        let p = Program::load(d, fixtures::fill(&d.target_name()).unwrap(), "fill")?;
        h.progs.push(p);
        Ok(())
    }),
    ("event signal", |_, h| {
        let s = h.dev(0).new_event_signal(0)?;
        h.sigs.push(s);
        Ok(())
    }),
    ("launch and wait", |_, h| {
        let args = FillArgs {
            buf: h.bufs[0].va().get(),
            value: 42,
            n: 1 << 14,
        };
        // SAFETY: bufs[0] holds 2^14 u32s and outlives the launch (held until the end).
        let v = unsafe { h.progs[0].launch_pod(&args, [256, 1, 1], [64, 1, 1]) }?;
        h.dev(0).wait_value(v)
    }),
    ("copy out", |_, h| {
        let mut out = vec![0u8; 1 << 16];
        h.dev(0).copy_out(&h.bufs[0], &mut out)?;
        assert!(out.chunks(4).all(|w| w == [42, 0, 0, 0]));
        Ok(())
    }),
    ("map to GPU 1", |_, h| h.bufs[0].map_to(h.dev(1))),
    ("clock counters", |_, h| {
        h.dev(0).clock_counters().map(|_| ())
    }),
];

struct Run {
    sim: Arc<SimKfd>,
    sys: Arc<Counting>,
    _gpu: SimGpu,
    held: Held,
}

fn start(mode: SimMode) -> Run {
    let sim = Arc::new(
        SimKfd::new(SimConfig {
            mode,
            host_guard: true,
            ..SimConfig::with_gpus(2)
        })
        .unwrap(),
    );
    let gpu = fixtures::attach_sim(&sim).unwrap();
    let sys = Arc::new(Counting {
        sim: Arc::clone(&sim),
        log: Mutex::new(Vec::new()),
    });
    Run {
        sim,
        sys,
        _gpu: gpu,
        held: Held::default(),
    }
}

/// Runs steps `from..` on `run`; returns the index and error of the first failing step.
fn run_steps(run: &mut Run, from: usize) -> Option<(usize, Error)> {
    for (i, (_, step)) in STEPS.iter().enumerate().skip(from) {
        if let Err(e) = step(&run.sys, &mut run.held) {
            return Some((i, e));
        }
    }
    None
}

/// Drops everything the workload holds and checks the simulated kernel holds nothing of the
/// process any more (the registered event page aside: KFD never frees it).
fn finish(run: Run, what: &str) {
    let Run {
        sim,
        sys,
        _gpu,
        held,
    } = run;
    let Held {
        kfd,
        devs,
        bufs,
        progs,
        sigs,
    } = held;
    drop((sigs, progs, bufs, devs, kfd, sys));
    drop(_gpu);
    let live = sim.live_objects();
    assert!(
        live.nothing_leaked() && live.open_files == 0,
        "{what}: leaked {live:?}"
    );
}

/// For every ioctl number the workload issues, every step it could first fail at, once and
/// always: the workload fails at exactly the step whose ioctl was refused (teardown ioctls
/// aside, which run in `Drop` and are retried), and after dropping everything nothing is left
/// in the simulated kernel. The errno (EINVAL / EIO / ENOMEM) rotates over the steps, so each
/// ioctl fails with each errno somewhere; the allocation ioctl, whose ENOMEM becomes
/// `Error::OutOfMemory`, takes all three at every step.
fn every_injected_ioctl_failure(mode: SimMode) {
    // Baseline: which step issues which ioctl numbers.
    let mut base = start(mode);
    let mut per_step: Vec<Vec<u8>> = Vec::new();
    for (i, (name, step)) in STEPS.iter().enumerate() {
        let n0 = base.sys.log.lock().unwrap().len();
        step(&base.sys, &mut base.held).unwrap_or_else(|e| panic!("step {i} {name}: {e}"));
        let mut nrs = base.sys.log.lock().unwrap()[n0..].to_vec();
        nrs.sort_unstable();
        nrs.dedup();
        per_step.push(nrs);
    }
    finish(base, "baseline");
    let mut all: Vec<u8> = per_step.concat();
    all.sort_unstable();
    all.dedup();
    // Open, alloc, map, events, queues, waits, clocks at least.
    for nr in [0x01u8, 0x02, 0x05, 0x08, 0x0c, 0x15, 0x16, 0x18, 0x25] {
        assert!(
            all.contains(&nr),
            "the workload never issues ioctl {nr:#x}: {all:x?}"
        );
    }
    let mut cases = 0;
    for &nr in &all {
        for (from, (from_name, _)) in STEPS.iter().enumerate() {
            let Some(first) = (from..STEPS.len()).find(|&s| per_step[s].contains(&nr)) else {
                continue;
            };
            const ERRNOS: [Errno; 3] = [Errno::EINVAL, Errno::EIO, Errno::ENOMEM];
            let errnos: &[Errno] = if nr == 0x16 {
                &ERRNOS
            } else {
                core::slice::from_ref(&ERRNOS[from % ERRNOS.len()])
            };
            for &errno in errnos {
                for persistence in [Persistence::Once, Persistence::Always] {
                    let what = format!(
                        "ioctl {nr:#x} failing with {errno} ({persistence:?}) from step {from} ({from_name})"
                    );
                    // From scratch: the steps before `from` clean, then the injection.
                    let mut run2 = start(mode);
                    for (s, (name, step)) in STEPS.iter().enumerate().take(from) {
                        step(&run2.sys, &mut run2.held)
                            .unwrap_or_else(|e| panic!("{what}: step {s} {name}: {e}"));
                    }
                    run2.sim.fail_ioctl(nr, errno, persistence);
                    let failed = run_steps(&mut run2, from);
                    run2.sim.clear_ioctl_failures();
                    // With engines on their own thread, whether a wait sleeps in WAIT_EVENTS
                    // (0x0c) depends on whether the engine finished first: a refused
                    // WAIT_EVENTS may hit a later step than in the baseline, or none.
                    let timing = mode == SimMode::Threaded && nr == 0x0c;
                    match failed {
                        Some((i, e)) if timing => {
                            assert!(i >= from, "{what}: failed at step {i} ({})", STEPS[i].0);
                            assert!(!e.to_string().is_empty());
                        }
                        None if timing => {}
                        Some((i, e)) => {
                            assert_eq!(i, first, "{what}: failed at step {i} ({})", STEPS[i].0);
                            if errno == Errno::ENOMEM && nr == 0x16 {
                                assert!(matches!(e, Error::OutOfMemory { .. }), "{what}: {e:?}");
                            }
                            assert!(!e.to_string().is_empty());
                        }
                        None => panic!("{what}: the workload did not fail"),
                    }
                    finish(run2, &what);
                    cases += 1;
                }
            }
        }
    }
    eprintln!(
        "{cases} injected ioctl failures over {} ioctl numbers",
        all.len()
    );
    assert!(cases >= 60, "only {cases} cases");
    // Teardown ioctls (run in Drop) failing once at the end: retried, nothing leaks.
    for nr in [0x19u8, 0x17, 0x03, 0x09] {
        for errno in [Errno::EINVAL, Errno::EIO, Errno::EINTR] {
            let mut run = start(mode);
            assert!(run_steps(&mut run, 0).is_none());
            run.sim.fail_ioctl(nr, errno, Persistence::Once);
            finish(
                run,
                &format!("teardown ioctl {nr:#x} failing once with {errno}"),
            );
        }
    }
}

both_modes!(
    kernel_vm_fault_names_the_address,
    copy_vm_fault_names_the_address,
    hung_queue_times_out_then_recovers,
    lost_and_late_interrupts,
    out_of_memory,
    every_injected_ioctl_failure,
);

/// Dropping everything while the compute queue is hung with a launch in flight: the drops
/// return (each buffer the launch may still read waits out the deadline), queues and events
/// are destroyed, and the two buffers the hung launch may still read (its output and the
/// program's code) are deliberately not freed, so the GPU never reads freed memory; they
/// keep the KFD and render-node files open. Pinned here so a change is a decision.
fn dropping_a_hung_device(mode: SimMode) {
    let r = rig(mode, 1, Duration::from_millis(100));
    let dev = Device::open(&r.kfd, 0).unwrap();
    let (fill, add) = programs(&dev);
    drop(add);
    let buf = dev.alloc(4096, BufferKind::Vram).unwrap();
    let idle = dev.alloc(4096, BufferKind::Vram).unwrap();
    drop(idle);
    let (cq, _) = dev.queue_ids();
    r.gpu.engines().hang(QueueId(cq), true).unwrap();
    let args = FillArgs {
        buf: buf.va().get(),
        value: 1,
        n: 64,
    };
    // SAFETY: buf holds 64 u32s; the launch never runs (hung queue), and the driver keeps
    // buf's memory allocated while the launch may still run.
    unsafe { fill.launch_pod(&args, [1, 1, 1], [64, 1, 1]) }.unwrap();
    drop((buf, fill, dev));
    let hcq_tests::Rig { sim, kfd, gpu } = r;
    drop((kfd, gpu));
    let live = sim.live_objects();
    assert_eq!(
        live,
        hcq_sim::LiveObjects {
            bos: 2,
            event_page_bo: true,
            gpu_mappings: 2,
            cpu_mappings: 2,
            queues: 0,
            events: 0,
            open_files: 2,
        }
    );
}

both_modes!(dropping_a_hung_device);
