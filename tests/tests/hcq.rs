//! tinygrad's HCQ behaviours (reference/tinygrad.md §3), driver on the simulator.

use core::time::Duration;
use hcq_core::arch::GpuVa;
use hcq_core::cmd::{Pm4List, SdmaList, patch};
use hcq_driver::kernels::{self, FillArgs, VectorAddArgs};
use hcq_driver::{BufferKind, Device, DeviceOptions, Error, GpuBuffer, Program};
use hcq_tests::Rig;

const LONG: Duration = Duration::from_secs(20);

fn rig() -> (Rig, Device) {
    let rig = Rig::new(1, LONG);
    let dev = Device::open(&rig.kfd, 0).unwrap();
    (rig, dev)
}

fn read_u32s(dev: &Device, buf: &GpuBuffer, n: usize) -> Vec<u32> {
    let mut out = vec![0u8; n * 4];
    dev.copy_out(buf, &mut out).unwrap();
    out.chunks_exact(4)
        .map(|w| u32::from_le_bytes(w.try_into().unwrap()))
        .collect()
}

fn write_u32s(dev: &Device, buf: &GpuBuffer, data: &[u32]) {
    let bytes: Vec<u8> = data.iter().flat_map(|v| v.to_le_bytes()).collect();
    dev.copy_in(buf, &bytes).unwrap();
}

fn programs(dev: &Device) -> (Program, Program) {
    let t = dev.target_name();
    let fill = Program::load(dev, kernels::fill(&t).unwrap(), "fill").unwrap();
    let add = Program::load(dev, kernels::vector_add(&t).unwrap(), "vector_add").unwrap();
    (fill, add)
}

type P4 = Pm4List<4096, 64>;
type Sd = SdmaList<1024, 64, 256>;

// ---- signal / wait --------------------------------------------------------------------------

#[test]
fn signal_on_both_queues() {
    let (_rig, dev) = rig();
    let sig = dev.new_signal(0).unwrap();
    let mut c = P4::new(dev.arch());
    c.signal(&sig.signal_ref(), 1).unwrap();
    // SAFETY: the list only waits on and sets signals this test created, alive past the waits below.
    unsafe { dev.submit_pm4(&c) }.unwrap();
    dev.wait(&sig, 1).unwrap();
    assert_eq!(sig.value(), 1);
    let mut s = Sd::new(dev.arch());
    s.signal(&sig.signal_ref(), 2).unwrap();
    // SAFETY: the list only waits on and sets signals this test created, alive past the waits below.
    unsafe { dev.submit_sdma(&s) }.unwrap();
    dev.wait(&sig, 2).unwrap();
    assert_eq!(sig.value(), 2);
}

#[test]
fn wait_on_an_already_set_signal_on_both_queues() {
    let (_rig, dev) = rig();
    let set = dev.new_signal(5).unwrap();
    let done = dev.new_signal(0).unwrap();
    let mut c = P4::new(dev.arch());
    c.wait(&set.signal_ref(), 5).unwrap();
    c.signal(&done.signal_ref(), 1).unwrap();
    // SAFETY: the list only waits on and sets signals this test created, alive past the waits below.
    unsafe { dev.submit_pm4(&c) }.unwrap();
    dev.wait(&done, 1).unwrap();
    let mut s = Sd::new(dev.arch());
    s.wait(&set.signal_ref(), 5).unwrap();
    s.signal(&done.signal_ref(), 2).unwrap();
    // SAFETY: the list only waits on and sets signals this test created, alive past the waits below.
    unsafe { dev.submit_sdma(&s) }.unwrap();
    dev.wait(&done, 2).unwrap();
}

fn late_set(dev: &Device, rig: &Rig, compute: bool) {
    let gate = dev.new_signal(0).unwrap();
    let done = dev.new_signal(0).unwrap();
    if compute {
        let mut c = P4::new(dev.arch());
        c.wait(&gate.signal_ref(), 1).unwrap();
        c.signal(&done.signal_ref(), 1).unwrap();
        // SAFETY: the list only waits on and sets signals this test created, alive past the waits below.
        unsafe { dev.submit_pm4(&c) }.unwrap();
    } else {
        let mut s = Sd::new(dev.arch());
        s.wait(&gate.signal_ref(), 1).unwrap();
        s.signal(&done.signal_ref(), 1).unwrap();
        // SAFETY: the list only waits on and sets signals this test created, alive past the waits below.
        unsafe { dev.submit_sdma(&s) }.unwrap();
    }
    rig.kfd.set_wait_timeout(Duration::from_millis(100));
    assert!(matches!(dev.wait(&done, 1), Err(Error::Timeout(_))));
    assert_eq!(done.value(), 0);
    gate.set(1);
    rig.kfd.set_wait_timeout(LONG);
    dev.wait(&done, 1).unwrap();
    dev.synchronize().unwrap();
}

#[test]
fn late_set_wait_on_both_queues() {
    let (rig, dev) = rig();
    late_set(&dev, &rig, true);
    late_set(&dev, &rig, false);
}

// ---- exec -----------------------------------------------------------------------------------

#[test]
fn exec_one_kernel() {
    let (_rig, dev) = rig();
    let (fill, _) = programs(&dev);
    let buf = dev.alloc(1000 * 4, BufferKind::Vram).unwrap();
    let args = FillArgs {
        buf: buf.va(),
        value: 0xabcd_0123,
        n: 1000,
    };
    // SAFETY: buf holds 1000 u32s and outlives the launch (synchronized by copy_out).
    unsafe { fill.launch_pod(&args, [16, 1, 1], [64, 1, 1]) }.unwrap();
    assert_eq!(read_u32s(&dev, &buf, 1000), vec![0xabcd_0123; 1000]);
}

#[test]
fn launch_checks_arguments_and_dimensions() {
    let (_rig, dev) = rig();
    let (fill, _) = programs(&dev);
    // SAFETY: every call below is refused before anything reaches the GPU.
    unsafe {
        assert!(matches!(
            fill.launch(&[0u8; 12], [1, 1, 1], [64, 1, 1]),
            Err(Error::InvalidArgument(_))
        ));
        assert!(matches!(
            fill.launch(&[0u8; 16], [0, 1, 1], [64, 1, 1]),
            Err(Error::InvalidArgument(_))
        ));
        assert!(matches!(
            fill.launch(&[0u8; 16], [1, 1, 1], [64, 32, 1]),
            Err(Error::InvalidArgument(_))
        ));
    }
    assert!(matches!(
        Program::load(&dev, kernels::fill("gfx1100").unwrap(), "nope"),
        Err(Error::CodeObject(_))
    ));
    assert!(matches!(
        Program::load(&dev, kernels::fill("gfx90a").unwrap(), "fill"),
        Err(Error::CodeObject(_))
    ));
    assert!(matches!(
        Program::load(&dev, b"not an elf", "fill"),
        Err(Error::CodeObject(_))
    ));
}

#[test]
fn launch_wait_reports_gpu_time_and_profiling_records() {
    let (_rig, dev) = rig();
    let (fill, _) = programs(&dev);
    let buf = dev.alloc(64 * 4, BufferKind::Vram).unwrap();
    let args = FillArgs {
        buf: buf.va(),
        value: 1,
        n: 64,
    };
    dev.set_profiling(true);
    // SAFETY: buf holds 64 u32s and outlives the launch (launch_wait waits).
    let t = unsafe { fill.launch_wait(bytemuck::bytes_of(&args), [1, 1, 1], [64, 1, 1]) }.unwrap();
    assert!(t > Duration::ZERO, "{t:?}");
    let recs = dev.take_profile().unwrap();
    assert_eq!(recs.len(), 1);
    assert_eq!(recs[0].name, "fill");
    assert!(recs[0].end_ns > recs[0].start_ns);
}

/// One command list (wait v-1, two kernels, signal v) resubmitted 100 times with v patched:
/// each kernel adds 1, so the result is 200.
#[test]
fn exec_2_kernels_100_times() {
    let (_rig, dev) = rig();
    let (fill, add) = programs(&dev);
    let n = 256u32;
    let c = dev.alloc(u64::from(n) * 4, BufferKind::Vram).unwrap();
    let ones = dev.alloc(u64::from(n) * 4, BufferKind::Vram).unwrap();
    write_u32s(&dev, &c, &vec![0; n as usize]);
    let fa = FillArgs {
        buf: ones.va(),
        value: 1,
        n,
    };
    // SAFETY: ones holds n u32s and lives to the end of the test.
    unsafe { fill.launch_pod(&fa, [n / 64, 1, 1], [64, 1, 1]) }.unwrap();
    let kernargs = dev.alloc(4096, BufferKind::VramCpuVisible).unwrap();
    let args = VectorAddArgs {
        a: c.va(),
        b: ones.va(),
        c: c.va(),
        n,
    };
    kernargs.write(0, bytemuck::bytes_of(&args)).unwrap();
    let sig = dev.new_signal(0).unwrap();
    let mut list = P4::new(dev.arch());
    let w = list.wait(&sig.signal_ref(), 0).unwrap();
    let prog = add.pm4_program();
    list.exec(&prog, GpuVa(kernargs.va()), [n / 64, 1, 1], [64, 1, 1])
        .unwrap();
    list.exec(&prog, GpuVa(kernargs.va()), [n / 64, 1, 1], [64, 1, 1])
        .unwrap();
    let s = list.signal(&sig.signal_ref(), 1).unwrap();
    for v in 1..=100u32 {
        list.update_wait(&w, None, Some(v - 1)).unwrap();
        list.update_signal(&s, None, Some(u64::from(v))).unwrap();
        // SAFETY: the list runs vector_add over `c` and `ones` (n u32s each, alive to the end) with kernargs in `kernargs`, and waits on and sets `sig`, a signal this test created.
        unsafe { dev.submit_pm4(&list) }.unwrap();
    }
    dev.wait(&sig, 100).unwrap();
    assert_eq!(read_u32s(&dev, &c, n as usize), vec![200; n as usize]);
}

/// Patched launch dimensions: the dispatch packet the kernel reads follows the patch.
#[test]
fn exec_update_dims() {
    let (_rig, dev) = rig();
    let t = dev.target_name();
    let co = kernels::dispatch_ptr(&t).unwrap();
    let grid = Program::load(&dev, co, "grid_size").unwrap();
    let out = dev.alloc(64 * 3 * 4, BufferKind::Vram).unwrap();
    let kernargs = dev.alloc(4096, BufferKind::VramCpuVisible).unwrap();
    kernargs.write(0, &out.va().to_le_bytes()).unwrap();
    let prog = grid.pm4_program();
    let mut list = P4::new(dev.arch());
    let (h, dw) = list
        .exec(&prog, GpuVa(kernargs.va()), [1, 1, 1], [64, 1, 1])
        .unwrap();
    let dw = dw.expect("grid_size takes a dispatch pointer");
    assert_eq!(dw.addr.get(), kernargs.va() + 16);
    for gx in 1..=3u32 {
        for gy in 1..=3u32 {
            for gz in 1..=3u32 {
                write_u32s(&dev, &out, &[0; 192]);
                let mut copy = list.as_dwords().to_vec();
                let w = patch::update_exec(&mut copy[..], &h, [gx, gy, gz], [64, 1, 1])
                    .unwrap()
                    .unwrap();
                kernargs
                    .write(w.addr.get() - kernargs.va(), bytemuck::bytes_of(&w.packet))
                    .unwrap();
                // SAFETY: the patched list runs the test kernel over `out` and the kernargs in
                // `kernargs` (both alive to the end), as the unpatched one did; only its
                // dispatch sizes changed.
                unsafe { dev.submit_compute(|c| c.raw(&copy)) }.unwrap();
                dev.synchronize().unwrap();
                assert_eq!(
                    (
                        w.packet.grid_size_x,
                        w.packet.grid_size_y,
                        w.packet.grid_size_z
                    ),
                    (64 * gx, gy, gz)
                );
                let got = read_u32s(&dev, &out, 192);
                let threads = 64 * gx;
                for (i, v) in got.iter().enumerate() {
                    let want = if (i as u32) < threads { threads } else { 0 };
                    assert_eq!(*v, want, "dims ({gx},{gy},{gz}) element {i}");
                }
            }
        }
    }
}

#[test]
fn four_thousand_kernels_in_one_submission() {
    let rig = Rig::new(1, LONG);
    let opts = DeviceOptions {
        compute_ring_size: 4 << 20,
        ..DeviceOptions::default()
    };
    let dev = Device::open_with(&rig.kfd, 0, opts).unwrap();
    let (fill, add) = programs(&dev);
    let c = dev.alloc(64 * 4, BufferKind::Vram).unwrap();
    let ones = dev.alloc(64 * 4, BufferKind::Vram).unwrap();
    write_u32s(&dev, &c, &[0; 64]);
    let fa = FillArgs {
        buf: ones.va(),
        value: 1,
        n: 64,
    };
    // SAFETY: ones holds 64 u32s and lives to the end of the test.
    unsafe { fill.launch_pod(&fa, [1, 1, 1], [64, 1, 1]) }.unwrap();
    let kernargs = dev.alloc(4096, BufferKind::VramCpuVisible).unwrap();
    let args = VectorAddArgs {
        a: c.va(),
        b: ones.va(),
        c: c.va(),
        n: 64,
    };
    kernargs.write(0, bytemuck::bytes_of(&args)).unwrap();
    let prog = add.pm4_program();
    // SAFETY: 4000 vector_adds over `c` and `ones` (64 u32s each, alive to the end), kernargs
    // in `kernargs`.
    unsafe {
        dev.submit_compute(|cmds| {
            for _ in 0..4000 {
                cmds.exec(&prog, kernargs.va(), [1, 1, 1], [64, 1, 1])?;
            }
            Ok(())
        })
    }
    .unwrap();
    assert_eq!(read_u32s(&dev, &c, 64), vec![4000; 64]);
}

// ---- copies ---------------------------------------------------------------------------------

fn pattern(n: usize, seed: u32) -> Vec<u8> {
    (0..n)
        .map(|i| {
            (i as u32)
                .wrapping_mul(2_654_435_761)
                .wrapping_add(seed)
                .to_le_bytes()[3]
        })
        .collect()
}

#[test]
fn copy_8_bytes() {
    let (_rig, dev) = rig();
    let buf = dev.alloc(8, BufferKind::Vram).unwrap();
    dev.copy_in(&buf, &[1, 2, 3, 4, 5, 6, 7, 8]).unwrap();
    let mut out = [0u8; 8];
    dev.copy_out(&buf, &mut out).unwrap();
    assert_eq!(out, [1, 2, 3, 4, 5, 6, 7, 8]);
}

#[test]
fn copy_64_mib() {
    let (_rig, dev) = rig();
    let n = 64 << 20;
    let a = dev.alloc(n as u64, BufferKind::Vram).unwrap();
    let b = dev.alloc(n as u64, BufferKind::Vram).unwrap();
    let data = pattern(n, 7);
    dev.copy_in(&a, &data).unwrap();
    dev.copy(&b, &a).unwrap();
    let mut out = vec![0u8; n];
    dev.copy_out(&b, &mut out).unwrap();
    assert!(out == data, "64 MiB round trip differs");
}

#[test]
fn copies_across_chunk_boundaries() {
    let (_rig, dev) = rig();
    const MIB4: usize = 4 << 20;
    for n in [MIB4 - 4, MIB4, MIB4 + 4, 2 * MIB4 + 12, 3 * MIB4 - 1] {
        let a = dev.alloc(n as u64, BufferKind::Vram).unwrap();
        let b = dev.alloc(n as u64, BufferKind::Vram).unwrap();
        let data = pattern(n, n as u32);
        dev.copy_in(&a, &data).unwrap();
        dev.copy(&b, &a).unwrap();
        let mut out = vec![0u8; n];
        dev.copy_out(&b, &mut out).unwrap();
        assert!(out == data, "size {n}");
    }
}

#[test]
fn small_copies_from_a_host_buffer() {
    let (_rig, dev) = rig();
    let host = dev.alloc(256, BufferKind::Host).unwrap();
    let data: Vec<u8> = (0..=255u8).collect();
    host.write(0, &data).unwrap();
    let dst = dev.alloc(256, BufferKind::Vram).unwrap();
    for i in 0..256u64 {
        dev.copy_range(&dst, 255 - i, &host, i, 1).unwrap();
    }
    let mut out = vec![0u8; 256];
    dev.copy_out(&dst, &mut out).unwrap();
    let want: Vec<u8> = (0..=255u8).rev().collect();
    assert_eq!(out, want);
}

#[test]
fn chained_copies() {
    let (_rig, dev) = rig();
    let n = 100_000usize;
    let bufs: Vec<_> = (0..5)
        .map(|_| dev.alloc(n as u64, BufferKind::Vram).unwrap())
        .collect();
    let data = pattern(n, 3);
    dev.copy_in(&bufs[0], &data).unwrap();
    for w in bufs.windows(2) {
        dev.copy(&w[1], &w[0]).unwrap();
    }
    let mut out = vec![0u8; n];
    dev.copy_out(&bufs[4], &mut out).unwrap();
    assert!(out == data);
}

// ---- bind, barrier --------------------------------------------------------------------------

#[test]
fn bound_list_patched_between_runs() {
    let (_rig, dev) = rig();
    let gate = dev.new_signal(0).unwrap();
    let done = dev.new_signal(0).unwrap();
    let mut list = P4::new(dev.arch());
    let w = list.wait(&gate.signal_ref(), 0).unwrap();
    let s = list.signal(&done.signal_ref(), 0).unwrap();
    let bound = dev.bind_pm4(&list).unwrap();
    assert_eq!(bound.dwords() as usize, list.as_dwords().len());
    for v in 1..=10u32 {
        bound
            .patch(|mem| {
                patch::update_wait(mem, &w, None, Some(v))?;
                patch::update_signal(mem, &s, None, Some(u64::from(v)))
            })
            .unwrap();
        gate.set(u64::from(v));
        // SAFETY: the list only waits on and sets signals this test created, alive past the waits below.
        unsafe { bound.submit() }.unwrap();
        dev.wait(&done, u64::from(v)).unwrap();
        assert_eq!(done.value(), u64::from(v));
    }
}

/// A CPU write to CPU-visible VRAM is visible to a kernel after a memory barrier.
#[test]
fn memory_barrier_makes_cpu_writes_visible() {
    let (_rig, dev) = rig();
    let (_, add) = programs(&dev);
    let a = dev.alloc(64 * 4, BufferKind::VramCpuVisible).unwrap();
    let zero = dev.alloc(64 * 4, BufferKind::Vram).unwrap();
    let c = dev.alloc(64 * 4, BufferKind::Vram).unwrap();
    write_u32s(&dev, &zero, &[0; 64]);
    let kernargs = dev.alloc(4096, BufferKind::VramCpuVisible).unwrap();
    let args = VectorAddArgs {
        a: a.va(),
        b: zero.va(),
        c: c.va(),
        n: 64,
    };
    kernargs.write(0, bytemuck::bytes_of(&args)).unwrap();
    let prog = add.pm4_program();
    for i in 0..255u32 {
        let vals: Vec<u8> = (0..64u32)
            .flat_map(|j| (i * 64 + j).to_le_bytes())
            .collect();
        a.write(0, &vals).unwrap();
        // SAFETY: one vector_add over `a`, `zero` and `c` (64 u32s each, alive to the end),
        // kernargs in `kernargs`; the CPU reads `c` only after the copy_out's wait.
        unsafe {
            dev.submit_compute(|cmds| {
                cmds.memory_barrier()?;
                cmds.exec(&prog, kernargs.va(), [1, 1, 1], [64, 1, 1])
            })
        }
        .unwrap();
        let got = read_u32s(&dev, &c, 64);
        assert_eq!(
            got,
            (0..64u32).map(|j| i * 64 + j).collect::<Vec<_>>(),
            "round {i}"
        );
    }
}

// ---- timeline -------------------------------------------------------------------------------

#[test]
fn timeline_rollover() {
    let (_rig, dev) = rig();
    dev.set_timeline_value((1 << 32) - 20).unwrap();
    let sig = dev.new_signal(0).unwrap();
    for i in 1..=40u32 {
        let mut c = P4::new(dev.arch());
        c.signal(&sig.signal_ref(), u64::from(i)).unwrap();
        // SAFETY: the list only waits on and sets signals this test created, alive past the waits below.
        unsafe { dev.submit_pm4(&c) }.unwrap();
        let mut s = Sd::new(dev.arch());
        s.signal(&sig.signal_ref(), i + 1000).unwrap();
        // SAFETY: the list only waits on and sets signals this test created, alive past the waits below.
        unsafe { dev.submit_sdma(&s) }.unwrap();
        dev.synchronize().unwrap();
        assert_eq!(sig.value(), u64::from(i + 1000));
    }
    // Host values keep growing across the wrap.
    assert_eq!(dev.last_value(), (1 << 32) - 20 + 80 - 1);
    assert_eq!(dev.completed_value(), dev.last_value());
}

// ---- hang -----------------------------------------------------------------------------------

#[test]
fn device_hang_surfaces_with_the_fault_address() {
    let rig = Rig::new(1, Duration::from_secs(5));
    let dev = Device::open(&rig.kfd, 0).unwrap();
    let (fill, _) = programs(&dev);
    let bad = 0x7ead_bee0_0000u64;
    let args = FillArgs {
        buf: bad,
        value: 1,
        n: 64,
    };
    // SAFETY: deliberately wrong: the address is not mapped; the simulated GPU faults and
    // no host memory is touched.
    unsafe { fill.launch_pod(&args, [1, 1, 1], [64, 1, 1]) }.unwrap();
    let t = std::time::Instant::now();
    let err = dev.synchronize().unwrap_err();
    assert!(t.elapsed() < Duration::from_secs(5));
    let Error::DeviceFault(r) = &err else {
        panic!("expected a device fault, got {err:?}");
    };
    assert_eq!(r.fault_addr.map(|a| a & !0xfff), Some(bad));
    assert!(err.to_string().contains("0x7eadbee00000"), "{err}");
}

// ---- multi-device ---------------------------------------------------------------------------

#[test]
fn one_gpu_waits_on_a_signal_written_by_another() {
    let rig = Rig::new(2, LONG);
    let d0 = Device::open(&rig.kfd, 0).unwrap();
    let d1 = Device::open(&rig.kfd, 1).unwrap();
    let sig = d0.new_signal(0).unwrap();
    let done = d1.new_signal(0).unwrap();
    let mut w = P4::new(d1.arch());
    w.wait(&sig.signal_ref(), 1).unwrap();
    w.signal(&done.signal_ref(), 1).unwrap();
    // SAFETY: the list only waits on and sets signals this test created, alive past the waits below.
    unsafe { d1.submit_pm4(&w) }.unwrap();
    let mut s = Sd::new(d0.arch());
    s.signal(&sig.signal_ref(), 1).unwrap();
    // SAFETY: the list only waits on and sets signals this test created, alive past the waits below.
    unsafe { d0.submit_sdma(&s) }.unwrap();
    d1.wait(&done, 1).unwrap();
    assert_eq!(sig.value(), 1);
}

#[test]
fn peer_transfer() {
    let rig = Rig::new(2, LONG);
    let d0 = Device::open(&rig.kfd, 0).unwrap();
    let d1 = Device::open(&rig.kfd, 1).unwrap();
    let n = 5 << 20;
    let src = d0.alloc(n as u64, BufferKind::Vram).unwrap();
    let dst = d1.alloc(n as u64, BufferKind::Vram).unwrap();
    let data = pattern(n, 11);
    d0.copy_in(&src, &data).unwrap();
    Device::transfer(&d1, &dst, &d0, &src).unwrap();
    let mut out = vec![0u8; n];
    d1.copy_out(&dst, &mut out).unwrap();
    assert!(out == data);
}

// ---- threads --------------------------------------------------------------------------------

#[test]
fn four_threads_submit_at_once() {
    let (_rig, dev) = rig();
    let (fill, _) = programs(&dev);
    std::thread::scope(|s| {
        for t in 0..4u32 {
            let dev = dev.clone();
            let fill = &fill;
            s.spawn(move || {
                let n = 4096u32;
                let buf = dev.alloc(u64::from(n) * 4, BufferKind::Vram).unwrap();
                let copy = dev.alloc(u64::from(n) * 4, BufferKind::Vram).unwrap();
                for round in 0..20u32 {
                    let value = t * 1000 + round;
                    let args = FillArgs {
                        buf: buf.va(),
                        value,
                        n,
                    };
                    // SAFETY: buf holds n u32s and outlives the launch (copy_out waits).
                    unsafe { fill.launch_pod(&args, [n / 64, 1, 1], [64, 1, 1]) }.unwrap();
                    dev.copy(&copy, &buf).unwrap();
                    let got = read_u32s(&dev, &copy, n as usize);
                    assert!(got.iter().all(|&v| v == value), "thread {t} round {round}");
                }
            });
        }
    });
}

/// A VM fault injected at a mapped buffer's address (the simulator's fault injection) surfaces
/// from the next wait, within the deadline, naming the address; so does an SDMA copy touching it.
#[test]
fn injected_vm_fault_surfaces_from_the_wait() {
    let rig = Rig::new(1, Duration::from_secs(5));
    let dev = Device::open(&rig.kfd, 0).unwrap();
    let src = dev.alloc(1 << 16, BufferKind::Vram).unwrap();
    let dst = dev.alloc(1 << 16, BufferKind::Vram).unwrap();
    let poisoned = dst.va() + 0x2000;
    rig.gpu.engines().fault_address(poisoned);
    dev.copy(&dst, &src).unwrap();
    let t = std::time::Instant::now();
    let err = dev.synchronize().unwrap_err();
    assert!(t.elapsed() < Duration::from_secs(5));
    let Error::DeviceFault(r) = &err else {
        panic!("expected a device fault, got {err:?}");
    };
    assert_eq!(r.fault_addr.map(|a| a & !0xfff), Some(poisoned));
    assert_eq!(r.queues.len(), 2);
}

/// A hung queue (injected) is a timeout after the deadline, with both queues' pointers.
#[test]
fn hung_queue_is_a_timeout_with_the_queue_state() {
    let rig = Rig::new(1, Duration::from_millis(300));
    let dev = Device::open(&rig.kfd, 0).unwrap();
    let (cq, _) = dev.queue_ids();
    rig.gpu
        .engines()
        .hang(hcq_sim::engine::QueueId(cq), true)
        .unwrap();
    let sig = dev.new_signal(0).unwrap();
    let mut c = P4::new(dev.arch());
    c.signal(&sig.signal_ref(), 1).unwrap();
    // SAFETY: the list only waits on and sets signals this test created, alive past the waits below.
    let v = unsafe { dev.submit_pm4(&c) }.unwrap();
    let err = dev.wait_value(v).unwrap_err();
    let Error::Timeout(r) = &err else {
        panic!("expected a timeout, got {err:?}");
    };
    assert_eq!(r.expected, v);
    assert!(r.queues[0].wptr > r.queues[0].rptr, "{err}");
    assert!(r.waited_ms >= 300);
    rig.gpu
        .engines()
        .hang(hcq_sim::engine::QueueId(cq), false)
        .unwrap();
    rig.kfd.set_wait_timeout(LONG);
    dev.wait(&sig, 1).unwrap();
}
