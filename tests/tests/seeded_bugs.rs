//! Seeded bugs: each test injects one known class of driver bug into an otherwise correct path
//! (hand-built command streams through the driver's raw submit) and asserts that the simulator
//! catches it: a queue fault, never a pass. The table of bugs and the checks that catch them is
//! in `sim/README.md` ("Seeded bugs"); rows that need the ISA interpreter or asynchronous
//! dispatch are marked there as not yet covered.

mod hcq_common;

use core::time::Duration;
use hcq_common::{P4, SimMode, programs, rig};
use hcq_core::arch::GpuVa;
use hcq_core::pm4;
use hcq_driver::kernels::FillArgs;
use hcq_driver::{BufferKind, Device, Error, GpuBuffer};

/// A fault must come back as a `DeviceFault` before this (a timeout would mean it was missed).
const SHORT: Duration = Duration::from_secs(5);

fn fill_args(out: &GpuBuffer, value: u32) -> Vec<u8> {
    bytemuck::bytes_of(&FillArgs {
        buf: out.va().get(),
        value,
        n: 64,
    })
    .to_vec()
}

/// The `fill` kernel's exec command with its kernargs at `kernargs`.
fn fill_exec(dev: &Device, fill: &hcq_driver::Program, kernargs: GpuVa) -> Vec<u32> {
    let mut list = P4::new(dev.arch());
    list.exec(&fill.pm4_program(), kernargs, [1, 1, 1], [64, 1, 1])
        .unwrap();
    list.as_dwords().to_vec()
}

/// Bug: a launch whose kernargs the CPU just wrote into VRAM, without the seed's HDP flush
/// (`memory_barrier`) before the dispatch. Caught by the HDP model: the GPU read of bytes the
/// CPU wrote after the last flush faults the queue (on hardware the kernel may read stale
/// arguments). The same launch with the flush runs.
fn missing_hdp_flush_before_a_launch(mode: SimMode) {
    let r = rig(mode, 1, SHORT);
    let dev = Device::open(&r.kfd, 0).unwrap();
    let (fill, _) = programs(&dev);
    let out = dev.alloc(256, BufferKind::Gtt).unwrap();
    let kernargs = dev.alloc(4096, BufferKind::VramCpuVisible).unwrap();
    // Correct: write kernargs, flush, launch.
    kernargs.write(0, &fill_args(&out, 5)).unwrap();
    let exec = fill_exec(&dev, &fill, kernargs.va());
    // SAFETY: fill writes 64 u32s into `out` (256 bytes) and reads its kernargs in `kernargs`,
    // both alive past the wait.
    let v = unsafe {
        dev.submit_compute(|c| {
            c.memory_barrier()?;
            c.raw(&exec)
        })
    }
    .unwrap();
    dev.wait_value(v).unwrap();
    let mut got = [0u8; 4];
    out.read(0, &mut got).unwrap();
    assert_eq!(u32::from_le_bytes(got), 5);
    // The bug: the next kernargs (same page) without the flush.
    kernargs.write(64, &fill_args(&out, 6)).unwrap();
    let exec = fill_exec(&dev, &fill, kernargs.va().offset(64));
    // SAFETY: as above (the GPU faults before it writes anything).
    let v = unsafe { dev.submit_compute(|c| c.raw(&exec)) }.unwrap();
    let err = dev.wait_value(v).unwrap_err();
    let Error::DeviceFault(rep) = &err else {
        panic!("expected a device fault, got {err:?}");
    };
    assert_eq!(rep.fault_addr, Some(kernargs.va().get()), "{err}");
}

/// Bug: a signal whose waiter needs the value, released with RELEASE_MEM INT_SEL 1 ("interrupt
/// only", sent without waiting for the write to be confirmed) instead of 2. Caught by the PM4
/// engine: INT_SEL 1 with DATA_SEL other than 0 faults the queue (the PM4 headers: "1 -
/// interrupt only (DATA_SEL = 0)"), since a waiter woken by the interrupt may read the old
/// value. The same signal with INT_SEL 2 completes.
fn int_sel_1_where_the_wakeup_needs_the_write(mode: SimMode) {
    let r = rig(mode, 1, SHORT);
    let dev = Device::open(&r.kfd, 0).unwrap();
    let sig = dev.new_signal(0).unwrap();
    let release = |int_sel: u32, value: u64| {
        let s = sig.signal_ref();
        let p = pm4::release_packet(
            dev.arch(),
            1,
            int_sel,
            GpuVa(s.value_addr()),
            value,
            s.event_id,
            true,
        );
        let mut b = [0u32; pm4::RELEASE_MEM_DWORDS];
        pm4::release_mem(&mut b, &p).unwrap();
        b.to_vec()
    };
    // SAFETY: each stream only writes the value of `sig`, a signal this test created and keeps
    // alive past the waits below.
    unsafe { dev.submit_compute_raw(&release(2, 1)) }.unwrap();
    dev.wait(&sig, 1).unwrap();
    // SAFETY: as above.
    unsafe { dev.submit_compute_raw(&release(1, 2)) }.unwrap();
    let err = dev.wait(&sig, 2).unwrap_err();
    assert!(matches!(err, Error::DeviceFault(_)), "{err}");
}

/// Bug: COMPUTE_TMPRING_SIZE.WAVESIZE computed in gfx9/gfx10 units (1 KiB) on gfx11, whose
/// unit is 256 bytes: each wave gets a quarter of the scratch it needs. Caught by the dispatch's
/// scratch check (TMPRING bytes per wave below the kernel's need faults the queue). The same
/// dispatch with the right unit runs.
fn wrong_scratch_wavesize_unit(mode: SimMode) {
    let r = rig(mode, 1, SHORT);
    let dev = Device::open(&r.kfd, 0).unwrap();
    let co = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../core/tests/fixtures/kernels/scratch-gfx1100.co"
    ))
    .unwrap();
    r.gpu
        .engines()
        .with_kernels(|k| k.register_fixture(&co))
        .unwrap();
    let prog = hcq_driver::Program::load(&dev, &co, "scratch_sum").unwrap();
    let out = dev.alloc(4096, BufferKind::Gtt).unwrap();
    let ka = dev.alloc(4096, BufferKind::Gtt).unwrap();
    let mut args = out.va().get().to_le_bytes().to_vec();
    args.extend(3u32.to_le_bytes());
    ka.write(0, &args).unwrap();
    // scratch_sum: 68 private bytes per lane, wave32 (the fixture manifest).
    let need_per_wave = 68u32 * 32;
    let run = |wavesize: u32| {
        let mut p = prog.pm4_program();
        let waves = p.tmpring_size & 0xfff;
        assert_ne!(waves, 0, "the device sets up scratch for a scratch kernel");
        p.tmpring_size = waves | wavesize << 12;
        let mut list = P4::new(dev.arch());
        list.exec(&p, ka.va(), [1, 1, 1], [64, 1, 1]).unwrap();
        let exec = list.as_dwords().to_vec();
        // SAFETY: scratch_sum writes 64 u32s into `out` (4096 bytes) and reads its kernargs in
        // `ka`, both alive past the wait.
        let v = unsafe { dev.submit_compute(|c| c.raw(&exec)) }.unwrap();
        dev.wait_value(v)
    };
    assert_eq!(dev.arch().tmpring_wavesize_unit, 256);
    run(need_per_wave.div_ceil(256)).unwrap();
    let mut got = [0u8; 4];
    out.read(63 * 4, &mut got).unwrap();
    assert_eq!(u32::from_le_bytes(got), 360);
    let err = run(need_per_wave.div_ceil(1024)).unwrap_err();
    assert!(matches!(err, Error::DeviceFault(_)), "{err}");
}

hcq_common::both_modes!(
    missing_hdp_flush_before_a_launch,
    int_sel_1_where_the_wakeup_needs_the_write,
    wrong_scratch_wavesize_unit,
);
