//! The simulator's own checks, on hand-built command streams: each test feeds the engines a
//! stream a buggy producer could write (through the driver's raw submit, or straight into the
//! driver's rings) and asserts the simulator catches it, after the correct variant of the
//! same stream runs. Driver bugs switched on in the driver's real code paths are in
//! `seeded_bugs.rs`; the table of checks is in `sim/README.md` ("Seeded bugs").

mod hcq_common;

use core::time::Duration;
use hcq_common::{P4, SimMode, programs, rig};
use hcq_core::addr::GpuVa;
use hcq_core::hsa::PgmRsrc2;
use hcq_core::pm4;
use hcq_core::sdma;
use hcq_core::sel::{DataSel, IntSel};
use hcq_driver::{BufferKind, Device, Error, GpuBuffer, Program};
use hcq_tests::fixtures::{self as kernels, FillArgs};

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
    let release = |int_sel: IntSel, value: u64| {
        let s = sig.signal_ref();
        let p = pm4::release_packet(
            dev.arch(),
            DataSel::Data32,
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
    unsafe { dev.submit_compute_raw(&release(IntSel::InterruptAfterWrite, 1)) }.unwrap();
    dev.wait(&sig, 1).unwrap();
    // SAFETY: as above.
    unsafe { dev.submit_compute_raw(&release(IntSel::Interrupt, 2)) }.unwrap();
    let err = dev.wait(&sig, 2).unwrap_err();
    assert!(matches!(err, Error::DeviceFault(_)), "{err}");
    assert!(err.to_string().contains("INT_SEL 1"), "{err}");
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
    assert!(
        err.to_string().contains("COMPUTE_TMPRING_SIZE"),
        "the fault names the register: {err}"
    );
}

/// `n` u32s of `buf` (host memory: read directly).
fn words(buf: &GpuBuffer, n: usize) -> Vec<u32> {
    let mut b = vec![0u8; n * 4];
    buf.read(0, &mut b).unwrap();
    b.chunks_exact(4)
        .map(|w| u32::from_le_bytes(w.try_into().unwrap()))
        .collect()
}

/// An output buffer of `n` u32s, all `u32::MAX` (host memory, read back directly).
fn sentinel_out(dev: &Device, n: usize) -> GpuBuffer {
    let out = dev
        .alloc(u64::try_from(n * 4).unwrap(), BufferKind::Gtt)
        .unwrap();
    out.write(0, &vec![0xffu8; n * 4]).unwrap();
    out
}

/// A hand-built launch of `prog` as the driver does it: `args` written to `ka` (CPU-visible
/// VRAM), the HDP flush and cache invalidate (`memory_barrier`), then core's `exec` with
/// `patch` applied to its dwords (the injected bug, or nothing). Returns how it ended.
fn launch_by_hand(
    dev: &Device,
    prog: &pm4::Program,
    ka: &GpuBuffer,
    args: &[u8],
    grid: ([u32; 3], [u32; 3]),
    patch: impl FnOnce(&mut [u32]),
) -> hcq_driver::Result<()> {
    ka.write(0, args)?;
    let mut list = P4::new(dev.arch());
    list.exec(prog, ka.va(), grid.0, grid.1).unwrap();
    let mut exec = list.as_dwords().to_vec();
    patch(&mut exec);
    // SAFETY: the kernels write only through their kernarg pointers into the tests' GTT
    // outputs, alive past the wait. The injected bugs make a kernel compute a wrong address or
    // use stale kernargs: on the simulator every access goes through the GPU page table, so
    // it lands in this test's buffers or faults, and no host memory Rust owns is GPU-mapped.
    let v = unsafe {
        dev.submit_compute(|c| {
            c.memory_barrier()?;
            c.raw(&exec)
        })
    }?;
    dev.wait_value(v)
}

/// Kernarg memory for one hand-built launch.
fn kernargs(dev: &Device) -> GpuBuffer {
    dev.alloc(4096, BufferKind::VramCpuVisible).unwrap()
}

/// The queue fault a seeded bug must end in.
fn assert_fault(r: hcq_driver::Result<()>) -> Box<hcq_driver::WaitReport> {
    match r {
        Err(Error::DeviceFault(rep)) => rep,
        other => panic!("expected a device fault, got {other:?}"),
    }
}

const FILL: ([u32; 3], [u32; 3]) = ([1, 1, 1], [64, 1, 1]);
/// `global_id` over 256 elements: 4 groups of 64.
const GID: ([u32; 3], [u32; 3]) = ([4, 1, 1], [64, 1, 1]);

fn global_id(dev: &Device) -> Program {
    let prog = Program::load(
        dev,
        kernels::global_id(&dev.target_name()).unwrap(),
        "global_id",
    )
    .unwrap();
    assert_eq!(prog.kernarg_size(), 272);
    prog
}

/// `global_id`'s full kernarg segment (272 bytes) for 4 groups of 64 over 256 elements, with
/// the code object v5 hidden arguments the launch needs filled (`hidden`) or left zero.
/// Offsets from the fixture's metadata (`llvm-readelf --notes global_id-gfx1100.co`):
/// hidden_block_count_x/y/z u32 at 16/20/24, hidden_group_size_x/y/z u16 at 28/30/32,
/// hidden_grid_dims u16 at 80; the rest (remainders, offsets) is 0 for this launch.
fn global_id_args(out: &GpuBuffer, hidden: bool) -> Vec<u8> {
    let mut a = vec![0u8; 272];
    a[..8].copy_from_slice(&out.va().get().to_le_bytes());
    a[8..12].copy_from_slice(&256u32.to_le_bytes());
    if hidden {
        for (o, v) in [(16, 4u32), (20, 1), (24, 1)] {
            a[o..o + 4].copy_from_slice(&v.to_le_bytes());
        }
        for (o, v) in [(28, 64u16), (30, 1), (32, 1), (80, 1)] {
            a[o..o + 2].copy_from_slice(&v.to_le_bytes());
        }
    }
    a
}

/// Bug: RSRC2.USER_SGPR_COUNT left 0 (below the 2 the kernarg pointer needs; the fixture's
/// descriptor asks for 15 on gfx1100), so USER_DATA_0..1 never reach s[0:1]. Caught by the ISA
/// interpreter: the kernel's kernarg load goes through s[0:1] as the hardware leaves them
/// (s0 the work-group id, s1 undefined: the simulator's 0xBAADF00D), an unmapped address, and
/// the VM fault faults the queue.
fn wrong_user_sgpr_count(mode: SimMode) {
    let r = rig(mode, 1, SHORT);
    let dev = Device::open(&r.kfd, 0).unwrap();
    let (fill, _) = programs(&dev);
    let p = fill.pm4_program();
    let out = sentinel_out(&dev, 64);
    launch_by_hand(&dev, &p, &kernargs(&dev), &fill_args(&out, 5), FILL, |_| {}).unwrap();
    assert_eq!(words(&out, 64), [5; 64]);
    let rs = PgmRsrc2::from_raw(p.rsrc2);
    assert!(rs.get(PgmRsrc2::USER_SGPR_COUNT) >= 2);
    let mut bad = p;
    bad.rsrc2 = rs.with(PgmRsrc2::USER_SGPR_COUNT, 0).raw();
    let out = sentinel_out(&dev, 64);
    let ka = kernargs(&dev);
    let rep = assert_fault(launch_by_hand(
        &dev,
        &bad,
        &ka,
        &fill_args(&out, 5),
        FILL,
        |_| {},
    ));
    assert_ne!(
        rep.fault_addr,
        Some(ka.va().get()),
        "not the kernarg page: {rep:?}"
    );
}

/// Bug: RSRC2.ENABLE_SGPR_WORKGROUP_ID_X cleared for a kernel that reads its work-group id:
/// the SGPR the kernel reads is never loaded (on hardware every group may compute the same
/// indices). Caught by the ISA interpreter: the register holds the simulator's undefined value
/// (today every index lands past `n` and nothing is written), a wrong result either way.
fn tgid_enables_that_do_not_match_the_kernel(mode: SimMode) {
    let r = rig(mode, 1, SHORT);
    let dev = Device::open(&r.kfd, 0).unwrap();
    let prog = global_id(&dev);
    let want: Vec<u32> = (0..256).collect();
    let p = prog.pm4_program();
    let out = sentinel_out(&dev, 256);
    let args = global_id_args(&out, true);
    launch_by_hand(&dev, &p, &kernargs(&dev), &args, GID, |_| {}).unwrap();
    assert_eq!(words(&out, 256), want);
    let rs = PgmRsrc2::from_raw(p.rsrc2);
    assert_eq!(rs.get(PgmRsrc2::ENABLE_SGPR_WORKGROUP_ID_X), 1);
    let mut bad = p;
    bad.rsrc2 = rs.with(PgmRsrc2::ENABLE_SGPR_WORKGROUP_ID_X, 0).raw();
    let out = sentinel_out(&dev, 256);
    let args = global_id_args(&out, true);
    launch_by_hand(&dev, &bad, &kernargs(&dev), &args, GID, |_| {}).unwrap();
    let got = words(&out, 256);
    assert_ne!(got, want);
    assert_eq!(
        got[64..],
        [u32::MAX; 192],
        "no group but group 0 wrote its elements"
    );
}

/// Bug: the kernarg pointer written to USER_DATA_2..3 instead of USER_DATA_0..1 (the slot a
/// dispatch pointer would shift it to). The kernel reads s[0:1] from USER_DATA_0..1, which
/// still hold the previous launch's kernarg pointer (SH registers persist): it repeats the
/// previous launch. Caught by the ISA interpreter: the new output stays unwritten.
fn kernarg_pointer_in_the_wrong_user_data_slot(mode: SimMode) {
    let r = rig(mode, 1, SHORT);
    let dev = Device::open(&r.kfd, 0).unwrap();
    let (fill, _) = programs(&dev);
    let p = fill.pm4_program();
    let ud0 = dev.arch().regs.user_data_0;
    let first = sentinel_out(&dev, 64);
    let ka1 = kernargs(&dev);
    launch_by_hand(&dev, &p, &ka1, &fill_args(&first, 6), FILL, |_| {}).unwrap();
    assert_eq!(words(&first, 64), [6; 64]);
    first.write(0, &[0xff; 256]).unwrap();
    let out = sentinel_out(&dev, 64);
    let set_user_data = |d: &mut [u32]| {
        let set_sh = pm4::Pm4Header::packet3(pm4::op::SET_SH_REG, 3).raw();
        let at = d
            .windows(2)
            .position(|w| w == [set_sh, ud0])
            .expect("exec writes USER_DATA_0..1");
        d[at + 1] = ud0 + 2;
    };
    let ka2 = kernargs(&dev);
    launch_by_hand(&dev, &p, &ka2, &fill_args(&out, 7), FILL, set_user_data).unwrap();
    assert_eq!(
        words(&out, 64),
        [u32::MAX; 64],
        "the new launch wrote nothing"
    );
    assert_eq!(words(&first, 64), [6; 64], "the previous launch ran again");
}

/// Bug: code object v5 hidden arguments left zero (a runtime that copies only the explicit
/// arguments). `global_id` reads `hidden_group_size_x`: with 0 every group writes the first
/// group's elements. Caught by the ISA interpreter: workgroups storing the same bytes fault the
/// queue (sim/README.md "Threads").
fn zeroed_v5_hidden_arguments(mode: SimMode) {
    let r = rig(mode, 1, SHORT);
    let dev = Device::open(&r.kfd, 0).unwrap();
    let prog = global_id(&dev);
    let want: Vec<u32> = (0..256).collect();
    let p = prog.pm4_program();
    let out = sentinel_out(&dev, 256);
    let args = global_id_args(&out, true);
    launch_by_hand(&dev, &p, &kernargs(&dev), &args, GID, |_| {}).unwrap();
    assert_eq!(words(&out, 256), want);
    let out = sentinel_out(&dev, 256);
    let args = global_id_args(&out, false);
    let e = launch_by_hand(&dev, &p, &kernargs(&dev), &args, GID, |_| {}).unwrap_err();
    let e = format!("{e:?}");
    assert!(
        e.contains("workgroups [0, 0, 0] and [1, 0, 0] of the dispatch both store the 256 bytes"),
        "{e}"
    );
}

/// `fill_exec` without its trailing EVENT_WRITE CS_PARTIAL_FLUSH (2 dwords): the dispatch is
/// left in flight, as a driver that batches kernels without a barrier behind each leaves it.
fn fill_exec_no_flush(dev: &Device, fill: &Program, kernargs: GpuVa) -> Vec<u32> {
    let mut e = fill_exec(dev, fill, kernargs);
    let at = e.len() - 2;
    // PM4 type-3 header: opcode in bits 8..16; EVENT_WRITE is 0x46.
    assert_eq!((e[at] >> 8) & 0xff, 0x46, "exec must end with EVENT_WRITE");
    e.truncate(at);
    e
}

fn fill_words(out: &GpuBuffer) -> Vec<u32> {
    words(out, 64)
}

/// The error must be a device fault whose reason is the race detector's.
fn assert_race(r: hcq_driver::Result<()>) {
    let err = match r {
        Err(e @ Error::DeviceFault(_)) => e,
        other => panic!("expected a device fault, got {other:?}"),
    };
    let text = err.to_string();
    assert!(text.contains("race:"), "{text}");
    assert!(text.contains("dispatch of the kernel at"), "{text}");
}

/// Bug: two dependent kernels in one indirect buffer (the second overwrites what the first
/// wrote) without the CS_PARTIAL_FLUSH between them. Caught by asynchronous dispatch and the
/// race detector: both dispatches are in flight together, their write ranges overlap, the
/// queue faults naming both. Caught under every seed (the first dispatch stays in flight until
/// the sync point behind the second, wherever it lands). With the barrier: the second value.
fn missing_barrier_between_dependent_kernels_in_one_ib(mode: SimMode) {
    let r = rig(mode, 1, SHORT);
    let dev = Device::open(&r.kfd, 0).unwrap();
    let (fill, _) = programs(&dev);
    let out = sentinel_out(&dev, 64);
    let ka = kernargs(&dev);
    ka.write(0, &fill_args(&out, 1)).unwrap();
    ka.write(64, &fill_args(&out, 2)).unwrap();
    let ib = dev.alloc(64 << 10, BufferKind::Gtt).unwrap();
    let run = |barrier: bool| {
        let mut dw = if barrier {
            fill_exec(&dev, &fill, ka.va())
        } else {
            fill_exec_no_flush(&dev, &fill, ka.va())
        };
        dw.extend(fill_exec(&dev, &fill, ka.va().offset(64)));
        ib.write(0, bytemuck::cast_slice(&dw)).unwrap();
        let n = u32::try_from(dw.len()).unwrap();
        // SAFETY: the IB holds two fill launches writing 64 u32s into `out`, reading their
        // kernargs in `ka`; all three buffers outlive the wait.
        let v = unsafe {
            dev.submit_compute(|c| {
                c.memory_barrier()?;
                c.indirect_buffer(ib.va(), n)
            })
        }
        .unwrap();
        dev.wait_value(v)
    };
    run(true).unwrap();
    assert_eq!(fill_words(&out), [2; 64]);
    assert_race(run(false));
}

/// Bug: kernargs rewritten (here by the CP, WRITE_DATA) for the next launch while the launch
/// that reads them is still in flight (no barrier behind it). Caught by the race detector: the
/// dispatch's kernarg read and the WRITE_DATA overlap, unordered, under every seed. With the
/// barrier the second launch sees the new arguments.
fn kernargs_reused_while_in_flight(mode: SimMode) {
    let r = rig(mode, 1, SHORT);
    let dev = Device::open(&r.kfd, 0).unwrap();
    let (fill, _) = programs(&dev);
    let out = sentinel_out(&dev, 64);
    let ka = kernargs(&dev);
    let next: Vec<u32> = bytemuck::cast_slice(&fill_args(&out, 9)).to_vec();
    let run = |barrier: bool| {
        ka.write(0, &fill_args(&out, 8)).unwrap();
        let mut dw = if barrier {
            fill_exec(&dev, &fill, ka.va())
        } else {
            fill_exec_no_flush(&dev, &fill, ka.va())
        };
        let mut wd = [0u32; 32];
        let ctl = pm4::WriteDataCntl::zeroed().with(pm4::WriteDataCntl::DST_SEL, 5);
        let n = pm4::write_data(&mut wd, ctl, ka.va(), &next).unwrap();
        dw.extend_from_slice(&wd[..n]);
        dw.extend(fill_exec(&dev, &fill, ka.va()));
        // SAFETY: the fill launches write 64 u32s into `out`; WRITE_DATA writes `ka`; both
        // buffers outlive the wait.
        let v = unsafe {
            dev.submit_compute(|c| {
                c.memory_barrier()?;
                c.raw(&dw)
            })
        }
        .unwrap();
        dev.wait_value(v)
    };
    run(true).unwrap();
    assert_eq!(fill_words(&out), [9; 64]);
    assert_race(run(false));
}

/// Bug: a timeline signal written by WRITE_DATA right after a kernel (no end-of-pipe
/// RELEASE_MEM, no barrier), so the host sees the value before the kernel's stores landed. The
/// queue then waits on a gate the host opens later (more work behind the signal). Caught by
/// asynchronous dispatch: under the seeds whose dispatch lands late, the host reads the output
/// unwritten (a wrong result). Seeds that land the kernel before the WRITE_DATA are legal
/// orders in which the bug does not show, so the test sweeps 8 seeds and needs at least one
/// stale read; the correct signal (RELEASE_MEM) is never stale under any of them.
fn timeline_signal_by_write_data(mode: SimMode) {
    let mut stale = 0;
    for seed in 0..8 {
        for eop in [true, false] {
            let cfg = hcq_sim::SimConfig {
                mode,
                seed,
                ..hcq_sim::SimConfig::with_gpus(1)
            };
            let r = hcq_tests::Rig::with_config(cfg, SHORT);
            let dev = Device::open(&r.kfd, 0).unwrap();
            let (fill, _) = programs(&dev);
            let out = sentinel_out(&dev, 64);
            let ka = kernargs(&dev);
            ka.write(0, &fill_args(&out, 5)).unwrap();
            let sig = dev.new_signal(0).unwrap();
            let gate = dev.new_signal(0).unwrap();
            let exec = fill_exec_no_flush(&dev, &fill, ka.va());
            let sref = sig.signal_ref();
            let mut wd = [0u32; 8];
            let ctl = pm4::WriteDataCntl::zeroed().with(pm4::WriteDataCntl::DST_SEL, 5);
            let n = pm4::write_data(&mut wd, ctl, GpuVa(sref.value_addr()), &[1, 0]).unwrap();
            // SAFETY: fill writes 64 u32s into `out` and reads `ka`; the signal writes go to
            // `sig`; all outlive the waits below.
            let v = unsafe {
                dev.submit_compute(|c| {
                    c.memory_barrier()?;
                    c.raw(&exec)?;
                    if eop {
                        c.signal(&sref, 1)?;
                    } else {
                        c.raw(&wd[..n])?;
                    }
                    c.wait(&gate.signal_ref(), 1)
                })
            }
            .unwrap();
            dev.wait(&sig, 1).unwrap();
            // What a consumer trusting the signal reads now (`GpuBuffer::read` would first wait
            // for the driver's own timeline, which is correct).
            let mut b = [0u8; 256];
            r.sim
                .gpu_read(dev.gpu_id(), out.va().get(), &mut b)
                .unwrap();
            let seen: Vec<u32> = bytemuck::cast_slice(&b).to_vec();
            gate.set(1);
            dev.wait_value(v).unwrap();
            assert_eq!(fill_words(&out), [5; 64], "seed {seed}");
            if eop {
                assert_eq!(
                    seen, [5; 64],
                    "seed {seed}: end-of-pipe signal before the results"
                );
            } else if seen != [5; 64] {
                stale += 1;
            }
        }
    }
    assert!(stale > 0, "no seed of 8 showed the stale read");
}

/// Bug: the end-of-pipe signal that tells the host a kernel's results are there, released
/// without the L2 write-back (RELEASE_MEM GCR `GL2_WB` dropped on gfx10+, `TC_WB_ACTION_ENA` /
/// `TC_ACTION_ENA` on gfx9). The kernel's stores sit in the GPU's L2, which the CPU does not
/// snoop, so a host that reads the output when the signal arrives sees the old bytes. The
/// queue then waits on a gate (more work behind the signal, so the driver's own timeline
/// signal, which writes back, has not run). Caught by the L2 model: the CPU's view of the
/// output is still the sentinel, a wrong result, while the GPU sees the new bytes; after the
/// driver's signal the output is right. The same signal with the write-back bits shows the
/// results at once.
fn missing_l2_writeback_before_the_cpu_reads_results(mode: SimMode) {
    for gpu in [hcq_sim::GpuConfig::gfx1100(), hcq_sim::GpuConfig::gfx90a()] {
        let cfg = hcq_sim::SimConfig {
            mode,
            gpus: vec![gpu],
            ..hcq_sim::SimConfig::default()
        };
        let r = hcq_tests::Rig::with_config(cfg, SHORT);
        l2_writeback_on(&r);
    }
}

fn l2_writeback_on(r: &hcq_tests::Rig) {
    let dev = Device::open(&r.kfd, 0).unwrap();
    let (fill, _) = programs(&dev);
    let ka = kernargs(&dev);
    let writeback = match dev.arch().family {
        hcq_core::arch::Family::Gfx9 => (1u32 << 15) | (1 << 17),
        _ => 1 << 21,
    };
    // (write-back bits in the signal, a CS_PARTIAL_FLUSH and an ACQUIRE_MEM write-back after
    // the kernel instead): the signal alone, the ACQUIRE_MEM alone, neither (the bug).
    for (wb, acquire_wb) in [(true, false), (false, true), (false, false)] {
        let out = sentinel_out(&dev, 64);
        ka.write(0, &fill_args(&out, 5)).unwrap();
        let exec = if acquire_wb {
            fill_exec(&dev, &fill, ka.va())
        } else {
            fill_exec_no_flush(&dev, &fill, ka.va())
        };
        let sig = dev.new_signal(0).unwrap();
        let gate = dev.new_signal(0).unwrap();
        let s = sig.signal_ref();
        let mut p = pm4::release_packet(
            dev.arch(),
            DataSel::Data32,
            IntSel::InterruptAfterWrite,
            GpuVa(s.value_addr()),
            1,
            s.event_id,
            true,
        );
        assert_ne!(
            p.event.raw() & writeback,
            0,
            "the driver's signal writes back"
        );
        if !wb {
            p.event = pm4::ReleaseMemEventCntl(p.event.raw() & !writeback);
        }
        let mut rel = [0u32; pm4::RELEASE_MEM_DWORDS];
        pm4::release_mem(&mut rel, &p).unwrap();
        // SAFETY: fill writes 64 u32s into `out` and reads `ka`; the release writes `sig`;
        // all outlive the waits below.
        let v = unsafe {
            dev.submit_compute(|c| {
                c.memory_barrier()?;
                c.raw(&exec)?;
                if acquire_wb {
                    // The HDP flush and the ACQUIRE_MEM with GL2_WB (gfx9: TC_WB_ACTION_ENA).
                    c.memory_barrier()?;
                }
                c.raw(&rel)?;
                c.wait(&gate.signal_ref(), 1)
            })
        }
        .unwrap();
        dev.wait(&sig, 1).unwrap();
        // What a host reading the output on the signal sees (`GpuBuffer::read` would first
        // wait for the driver's own timeline, which writes back), and what the GPU sees.
        let mut cpu = [0u8; 256];
        r.sim
            .cpu_read(dev.gpu_id(), out.va().get(), &mut cpu)
            .unwrap();
        let mut gpu = [0u8; 256];
        r.sim
            .gpu_read(dev.gpu_id(), out.va().get(), &mut gpu)
            .unwrap();
        let cpu: Vec<u32> = bytemuck::cast_slice(&cpu).to_vec();
        let gpu: Vec<u32> = bytemuck::cast_slice(&gpu).to_vec();
        gate.set(1);
        dev.wait_value(v).unwrap();
        assert_eq!(gpu, [5; 64], "the GPU reads its L2");
        assert_eq!(fill_words(&out), [5; 64], "after the driver's write-back");
        if wb || acquire_wb {
            assert_eq!(cpu, [5; 64], "written back before the signal");
        } else {
            assert_eq!(
                cpu,
                [u32::MAX; 64],
                "the CPU read the results without a write-back"
            );
        }
    }
}

/// Bug: an SDMA copy into memory the host reads whose closing GCR_REQ does not write the L2
/// back: the seed's encoding (`GcrPlacement::Seed` puts the GCR bits in `base_va`, so the
/// GCR_CNTL the engine reads is 0). On gfx10+ SDMA writes through GL2, so the copied bytes
/// stay in the L2 and the host reads the old ones. Caught by the L2 model: a wrong result
/// through `GpuBuffer::read`, after the driver's own (FENCE) timeline signal. The driver's
/// encoding (`GcrPlacement::Hardware`) shows the data. On gfx9 SDMA is no L2 client and SDMA v4
/// has no GCR_REQ: the driver puts NOPs in its place (`GcrPlacement::Nop`) and the data shows;
/// the seed's GCR_REQ is an illegal packet there and faults the queue.
fn sdma_copy_without_the_l2_write_back(mode: SimMode) {
    for gpu in [hcq_sim::GpuConfig::gfx1100(), hcq_sim::GpuConfig::gfx90a()] {
        let cfg = hcq_sim::SimConfig {
            mode,
            gpus: vec![gpu],
            ..hcq_sim::SimConfig::default()
        };
        sdma_copy_l2_on(&hcq_tests::Rig::with_config(cfg, SHORT));
    }
}

fn sdma_copy_l2_on(r: &hcq_tests::Rig) {
    let dev = Device::open(&r.kfd, 0).unwrap();
    let gfx9 = dev.arch().family == hcq_core::arch::Family::Gfx9;
    let src = dev.alloc(4096, BufferKind::GttUncached).unwrap();
    let data: Vec<u8> = (0..=255).collect();
    src.write(0, &data).unwrap();
    for (opts, writes_back) in [
        (sdma::CopyOptions::hardware(dev.arch()), true),
        (sdma::CopyOptions::seed(dev.arch()), false),
    ] {
        let dst = dev.alloc(4096, BufferKind::Gtt).unwrap();
        let mut b = vec![0u32; 64];
        let n = sdma::copy_with(&mut b, &opts, dst.va(), src.va(), 256).unwrap();
        // SAFETY: the copy reads `src` and writes `dst`, both alive past the read below (which
        // waits for it).
        unsafe { dev.submit_copy_raw(&b[..n]) }.unwrap();
        let mut got = vec![0u8; 256];
        if gfx9 && !writes_back {
            // SDMA v4 has no GCR_REQ: the seed's packet is an illegal opcode there.
            let e = dst.read(0, &mut got).unwrap_err().to_string();
            assert!(e.contains("GCR_REQ"), "{e}");
            continue;
        }
        dst.read(0, &mut got).unwrap();
        if writes_back {
            assert_eq!(got, data);
        } else {
            assert_eq!(
                got,
                vec![0u8; 256],
                "the host read the copy without a write-back"
            );
        }
    }
}

/// Bug: the host refills a copy source (a staging buffer) through its mapping before the copy
/// that reads it completed. The copy queue runs behind a compute submission that waits on a gate the host
/// opens later, so the copy is pending when the host reuses the buffer. Caught as a wrong
/// result: the copy engine runs asynchronously to the host and moves the new bytes. Waiting
/// for the copy's timeline value first gives the old ones.
fn copy_queue_buffer_reused_before_its_copy_completed(mode: SimMode) {
    let r = rig(mode, 1, SHORT);
    let dev = Device::open(&r.kfd, 0).unwrap();
    let staging = dev.alloc(256, BufferKind::Gtt).unwrap();
    let dst = dev.alloc(256, BufferKind::Gtt).unwrap();
    let run = |wait_first: bool| {
        let gate = dev.new_signal(0).unwrap();
        dst.write(0, &[0u8; 256]).unwrap();
        staging.write(0, &[0xAA; 256]).unwrap();
        // SAFETY: waits on `gate` only, alive past the wait below.
        unsafe { dev.submit_compute(|c| c.wait(&gate.signal_ref(), 1)) }.unwrap();
        // SAFETY: copies between two buffers of this test, alive past the wait.
        let v = unsafe { dev.submit_copy(|c| c.copy(dst.va(), staging.va(), 256)) }.unwrap();
        // The reuse writes through the CPU mapping without waiting, as a staging ring that
        // hands a slot out too early does (`GpuBuffer::write` itself waits for all GPU work).
        let reuse = || {
            r.sim
                .gpu_write(dev.gpu_id(), staging.va().get(), &[0xBB; 256])
                .unwrap();
        };
        if wait_first {
            gate.set(1);
            dev.wait_value(v).unwrap();
            reuse();
        } else {
            reuse();
            gate.set(1);
            dev.wait_value(v).unwrap();
        }
        let mut got = [0u8; 256];
        dst.read(0, &mut got).unwrap();
        got
    };
    assert_eq!(run(true), [0xAA; 256]);
    assert_eq!(run(false), [0xBB; 256], "the copy moved the reused bytes");
}

hcq_common::both_modes!(
    missing_hdp_flush_before_a_launch,
    int_sel_1_where_the_wakeup_needs_the_write,
    wrong_scratch_wavesize_unit,
    wrong_user_sgpr_count,
    tgid_enables_that_do_not_match_the_kernel,
    kernarg_pointer_in_the_wrong_user_data_slot,
    zeroed_v5_hidden_arguments,
    missing_barrier_between_dependent_kernels_in_one_ib,
    kernargs_reused_while_in_flight,
    timeline_signal_by_write_data,
    copy_queue_buffer_reused_before_its_copy_completed,
    missing_l2_writeback_before_the_cpu_reads_results,
    sdma_copy_without_the_l2_write_back,
);

// ---------------------------------------------------------------------------------------------
// Cache invalidates (the sim's per-GPU I$ and K$, `sim/src/engine/cache.rs`).

/// HDP flush only: the WAIT_REG_MEM half of `memory_barrier`, without its ACQUIRE_MEM.
fn hdp_flush_only(dev: &Device) -> Vec<u32> {
    let mut b = [0u32; pm4::WAIT_REG_MEM_DWORDS];
    pm4::wait_reg_mem(&mut b, &pm4::hdp_flush_wait(dev.arch())).unwrap();
    b.to_vec()
}

/// Clears `bits` from the GCR_CNTL of the ACQUIRE_MEM core's `exec` starts with (gfx11: the
/// packet's dword 7), checking that the packet is there and asked for them.
fn drop_gcr_bits(exec: &mut [u32], bits: u32) {
    assert_eq!((exec[0] >> 8) & 0xff, pm4::op::ACQUIRE_MEM);
    assert_ne!(
        exec[7] & bits,
        0,
        "exec's invalidate no longer sets {bits:#x}"
    );
    exec[7] &= !bits;
}

/// Submits `exec` after the HDP flush alone (no cache invalidate before it) and waits.
fn launch_after_hdp_flush_only(dev: &Device, exec: &[u32]) -> hcq_driver::Result<()> {
    let flush = hdp_flush_only(dev);
    // SAFETY: as in `launch_by_hand`: the kernels write only into the tests' GTT outputs (or
    // fault on the simulator's page table).
    let v = unsafe {
        dev.submit_compute(|c| {
            c.raw(&flush)?;
            c.raw(exec)
        })
    }?;
    dev.wait_value(v)
}

/// GCR_CNTL GLK_INV (bit 7) and GLI_INV (bits 1:0; exec asks for 1, "all").
const GLK_INV: u32 = 1 << 7;
const GLI_INV: u32 = 0b11;

/// Bug: kernargs rewritten in place and launched without invalidating the scalar cache (the
/// ACQUIRE_MEM's GLK_INV dropped; the HDP flush is there). Caught by the sim's K$ model: the
/// kernel's s_load would hit the line the previous launch cached and store the old value; the
/// simulator refuses the dispatch naming the cause (the K$ holds a kernarg byte as the old
/// value while memory holds the new one, no K$ invalidate since). The same rewrite with the
/// invalidate stores the new value.
fn stale_kernargs_in_the_scalar_cache(mode: SimMode) {
    let r = rig(mode, 1, SHORT);
    let dev = Device::open(&r.kfd, 0).unwrap();
    let (fill, _) = programs(&dev);
    let prog = fill.pm4_program();
    let out = sentinel_out(&dev, 64);
    let ka = kernargs(&dev);
    launch_by_hand(&dev, &prog, &ka, &fill_args(&out, 5), FILL, |_| {}).unwrap();
    assert_eq!(words(&out, 64), [5; 64]);
    // Correct: the same kernargs rewritten, with the invalidate.
    launch_by_hand(&dev, &prog, &ka, &fill_args(&out, 6), FILL, |_| {}).unwrap();
    assert_eq!(words(&out, 64), [6; 64]);
    // The bug: rewritten again, HDP flushed, K$ not invalidated.
    ka.write(0, &fill_args(&out, 7)).unwrap();
    let mut exec = fill_exec(&dev, &fill, ka.va());
    drop_gcr_bits(&mut exec, GLK_INV);
    let err = launch_after_hdp_flush_only(&dev, &exec).unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, Error::DeviceFault(_)), "{text}");
    // `value` is byte 8 of fill's arguments.
    assert!(
        text.contains("stale kernargs, a replay running with the previous replay's values")
            && text.contains(&format!(
                "holds {:#x} (the kernarg segment or dispatch packet the kernel reads), and the K$ holds its byte {:#x} (offset 0x8) as 0x06, fetched before this dispatch began, while memory holds 0x07",
                ka.va().get(),
                ka.va().get() + 8
            )),
        "{text}"
    );
}

/// The machine code of kernel `name` in code object `co`: its loaded image from the entry
/// point on, 512 bytes (both fixtures' kernels are position independent and shorter).
fn code_of(co: &[u8], name: &str) -> Vec<u8> {
    let o = hcq_core::codeobj::CodeObject::parse(co).unwrap();
    let mut img = vec![0u8; usize::try_from(o.image_size()).unwrap()];
    o.load_into(&mut img).unwrap();
    let entry = usize::try_from(o.kernel(name).unwrap().entry_offset).unwrap();
    img[entry..entry + CODE_BYTES].to_vec()
}

const CODE_BYTES: usize = 512;

/// Bug: new code uploaded over code that already ran and launched without invalidating the
/// instruction cache (GLI_INV dropped from the ACQUIRE_MEM; the HDP flush is there). Caught by
/// the sim's I$ model: the dispatch fetches the old kernel's cached lines (`fill`'s code run
/// with `global_id`'s kernargs and registers) and ends in a fault or a wrong result. The same
/// upload with the invalidate runs `global_id` correctly.
fn missing_icache_invalidate_after_a_code_upload(mode: SimMode) {
    let r = rig(mode, 1, SHORT);
    let dev = Device::open(&r.kfd, 0).unwrap();
    let t = dev.target_name();
    let (fill, _) = programs(&dev);
    let gid = global_id(&dev);
    let fill_code = code_of(kernels::fill(&t).unwrap(), "fill");
    let gid_code = code_of(kernels::global_id(&t).unwrap(), "global_id");
    // Both kernels run from the same address, as code uploaded over code would.
    let code = dev.alloc(4096, BufferKind::VramCpuVisible).unwrap();
    let at = |p: &Program| {
        let mut q = p.pm4_program();
        q.prog_addr = code.va();
        q
    };
    let upload = |c: &[u8]| code.write(0, c).unwrap();
    let want: Vec<u32> = (0..256).collect();
    let (fill_p, gid_p) = (at(&fill), at(&gid));
    let ka = kernargs(&dev);
    let run_fill = || {
        let out = sentinel_out(&dev, 64);
        launch_by_hand(&dev, &fill_p, &ka, &fill_args(&out, 5), FILL, |_| {}).unwrap();
        assert_eq!(words(&out, 64), [5; 64]);
    };
    upload(&fill_code);
    run_fill();
    // Correct: global_id uploaded over it, launched with the invalidate.
    upload(&gid_code);
    let out = sentinel_out(&dev, 256);
    launch_by_hand(&dev, &gid_p, &ka, &global_id_args(&out, true), GID, |_| {}).unwrap();
    assert_eq!(words(&out, 256), want);
    // The bug: fill's code back (and cached by a run), then global_id over it, no GLI_INV.
    upload(&fill_code);
    run_fill();
    upload(&gid_code);
    let out = sentinel_out(&dev, 256);
    ka.write(0, &global_id_args(&out, true)).unwrap();
    let mut list = P4::new(dev.arch());
    list.exec(&gid_p, ka.va(), GID.0, GID.1).unwrap();
    let mut exec = list.as_dwords().to_vec();
    drop_gcr_bits(&mut exec, GLI_INV);
    let r = launch_after_hdp_flush_only(&dev, &exec);
    assert!(
        r.is_err() || words(&out, 256) != want,
        "global_id ran from the new code without an I$ invalidate"
    );
}

hcq_common::both_modes!(
    stale_kernargs_in_the_scalar_cache,
    missing_icache_invalidate_after_a_code_upload,
);

// ---------------------------------------------------------------------------------------------
// Rings and the timeline by hand: a producer that writes the driver's own (small) rings
// directly through the simulator (ring memory, the wptr page, the doorbell), as a driver with
// the bug would, after the driver's own submissions left the queues idle.

/// Ring bytes of both queues (PM4: 256 dwords; SDMA: 1024 bytes).
const SMALL_RING: u64 = 1024;

fn small_rings(mode: SimMode) -> (hcq_tests::Rig, Device) {
    let r = rig(mode, 1, SHORT);
    let opts = hcq_driver::DeviceOptions {
        compute_ring_size: SMALL_RING,
        sdma_ring_size: SMALL_RING,
        ..hcq_driver::DeviceOptions::default()
    };
    let dev = Device::open_with(&r.kfd, 0, opts).unwrap();
    (r, dev)
}

/// A producer of one of the device's queues, by hand.
struct RawRing<'a> {
    r: &'a hcq_tests::Rig,
    mode: SimMode,
    q: hcq_sim::QueueInfo,
    /// The next write pointer (queue units: PM4 dwords, SDMA bytes).
    wptr: u64,
}

impl<'a> RawRing<'a> {
    /// The device's queue of `kind`, taken over once both queues are idle.
    fn open(r: &'a hcq_tests::Rig, mode: SimMode, dev: &Device, kind: hcq_sim::QueueKind) -> Self {
        hcq_common::settled(r, dev);
        let q = r
            .sim
            .queues()
            .into_iter()
            .find(|q| q.gpu_id == dev.gpu_id() && q.kind == kind)
            .unwrap();
        let wptr = r.sim.read_wptr(&q).unwrap();
        Self { r, mode, q, wptr }
    }

    fn units_per_dword(&self) -> u64 {
        match self.q.kind {
            hcq_sim::QueueKind::Compute | hcq_sim::QueueKind::Aql => 1,
            hcq_sim::QueueKind::Sdma => 4,
        }
    }

    fn size_dw(&self) -> u64 {
        u64::from(self.q.ring_size) / 4
    }

    /// Ring index (dwords) of the next write.
    fn index(&self) -> u64 {
        self.wptr / self.units_per_dword() % self.size_dw()
    }

    /// Writes `dwords` at the write pointer, wrapping at the ring end, without publishing.
    fn put(&mut self, dwords: &[u32]) {
        for &d in dwords {
            let a = self.q.ring_base + self.index() * 4;
            self.r
                .sim
                .gpu_write(self.q.gpu_id, a, &d.to_le_bytes())
                .unwrap();
            self.wptr += self.units_per_dword();
        }
    }

    /// Publishes the write pointer: the wptr page, then the doorbell.
    fn publish(&self) {
        self.r
            .sim
            .gpu_write_u64(self.q.gpu_id, self.q.wptr_addr, self.wptr)
            .unwrap();
        assert!(
            self.r
                .sim
                .write_doorbell(self.q.gpu_id, self.q.doorbell_id, self.wptr)
        );
    }

    fn faults(&self) -> Vec<String> {
        self.r.sim.fault_reasons_of(self.q.gpu_id)
    }

    /// Lets the engine run until the queue faulted; returns the fault reasons (empty after
    /// [`SHORT`] without a fault).
    fn until_fault(&self) -> Vec<String> {
        let deadline = std::time::Instant::now() + SHORT;
        loop {
            if self.mode == SimMode::Deterministic {
                self.r.sim.step();
            } else {
                std::thread::sleep(Duration::from_millis(1));
            }
            let faults = self.faults();
            if !faults.is_empty() || std::time::Instant::now() >= deadline {
                return faults;
            }
        }
    }

    /// Lets the engine run until the queue's published read pointer is `at` (or it faulted);
    /// returns the fault reasons so far.
    fn run_to(&self, at: u64) -> Vec<String> {
        let deadline = std::time::Instant::now() + SHORT;
        loop {
            if self.mode == SimMode::Deterministic {
                self.r.sim.step();
            } else {
                std::thread::sleep(Duration::from_millis(1));
            }
            let rptr = self
                .r
                .sim
                .gpu_read_u64(self.q.gpu_id, self.q.rptr_addr)
                .unwrap();
            let faults = self.faults();
            if rptr == at || !faults.is_empty() {
                return faults;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "read pointer {rptr:#x}, waiting for {at:#x}"
            );
        }
    }

    /// Publishes and lets the engine read everything; asserts it did not fault.
    fn run_all(&self) {
        self.publish();
        let f = self.run_to(self.wptr);
        assert!(f.is_empty(), "{f:?}");
    }
}

/// `out[i] = v` as a PM4 WRITE_DATA to memory (5 dwords).
fn write_word(out: &GpuBuffer, i: u32, v: u32) -> Vec<u32> {
    let mut b = [0u32; 8];
    let ctl = pm4::WriteDataCntl::zeroed().with(pm4::WriteDataCntl::DST_SEL, 5);
    let n = pm4::write_data(&mut b, ctl, out.va().offset(4 * u64::from(i)), &[v]).unwrap();
    b[..n].to_vec()
}

/// The first `n` u32s of `out` as the CPU sees them now.
fn cpu_words(r: &hcq_tests::Rig, dev: &Device, out: &GpuBuffer, n: usize) -> Vec<u32> {
    let mut b = vec![0u8; n * 4];
    r.sim
        .cpu_read(dev.gpu_id(), out.va().get(), &mut b)
        .unwrap();
    bytemuck::cast_slice(&b).to_vec()
}

/// Bug: a producer that writes more commands into the PM4 ring than it has room for (a wrong
/// free-space rule), over commands the CP has not executed yet (the queue waits on a gate in
/// front of them). Caught by the PM4 engine: the new write pointer is more than one ring ahead
/// of its read pointer, a ring overrun, and the queue faults naming it (the CP executes what is
/// in the ring, so without the check it would run the overwritten commands). The correct
/// producer waits for the engine to read before it writes more, and every write lands.
fn ring_write_over_unread_commands(mode: SimMode) {
    let (r, dev) = small_rings(mode);
    let out = dev.alloc(4096, BufferKind::GttUncached).unwrap();
    let mut ring = RawRing::open(&r, mode, &dev, hcq_sim::QueueKind::Compute);
    let size = u32::try_from(ring.size_dw()).unwrap();
    for (base, overrun) in [(1u32, false), (1000, true)] {
        let gate = dev.new_signal(0).unwrap();
        let mut dw = vec![0u32; 16];
        let n = pm4::wait(&mut dw, &gate.signal_ref(), 1).unwrap();
        dw.truncate(n);
        // As many writes behind the gate as the ring holds.
        let k = (size - u32::try_from(n).unwrap()) / 5;
        for i in 0..k {
            dw.extend(write_word(&out, i, base + i));
        }
        let at = ring.wptr;
        ring.put(&dw);
        ring.publish();
        assert!(ring.run_to(at).is_empty(), "blocked on the gate");
        let more: Vec<u32> = (k..k + 10)
            .flat_map(|i| write_word(&out, i, base + i))
            .collect();
        if overrun {
            // Over the WAIT and the first writes, which the CP has not executed.
            ring.put(&more);
            ring.publish();
            // The engine sees the new write pointer while the queue still waits on the gate;
            // only then the gate opens (opened first, a threaded engine may run the
            // overwritten commands before it reads the doorbell: no overrun in sight then).
            let f = ring.until_fault();
            gate.set(1);
            assert!(
                f.iter().any(|t| t.contains("ring overrun")),
                "the overrun was not caught: {f:?}"
            );
            assert_ne!(
                cpu_words(&r, &dev, &out, 1),
                [base],
                "no command behind the overrun ran"
            );
        } else {
            // The correct producer waits for room: the gate opens, the engine reads, then
            // the rest is written.
            gate.set(1);
            ring.run_all();
            ring.put(&more);
            ring.run_all();
            let want: Vec<u32> = (base..base + k + 10).collect();
            assert_eq!(cpu_words(&r, &dev, &out, want.len()), want);
        }
    }
}

/// NOPs from the SDMA ring's write pointer up to `left` dwords before the ring end (through
/// the end and around when it is already closer), each NOP inside one lap; published and
/// read by the engine.
fn sdma_pad_to(ring: &mut RawRing<'_>, left: u64) {
    let size = ring.size_dw();
    let target = size - left;
    let nop = |ring: &mut RawRing<'_>, n: u64| {
        if n > 0 {
            let len = usize::try_from(n).unwrap();
            let mut b = vec![0u32; len];
            sdma::nop(&mut b, len).unwrap();
            ring.put(&b);
            ring.run_all();
        }
    };
    let idx = ring.index();
    if idx > target {
        nop(ring, size - idx);
        nop(ring, target);
    } else {
        nop(ring, target - idx);
    }
}

/// Bug: an SDMA packet written across the end of the ring, as a PM4 producer may write (the
/// SDMA engine does not wrap inside a packet; ROCr and core pad to the end with NOPs). Caught
/// by the SDMA engine: the queue faults naming the packet that crosses the end of the ring.
/// The same FENCE after NOPs up to the ring end starts the next lap and lands.
fn sdma_packet_split_at_the_ring_end(mode: SimMode) {
    let (r, dev) = small_rings(mode);
    let out = dev.alloc(4096, BufferKind::GttUncached).unwrap();
    let mut ring = RawRing::open(&r, mode, &dev, hcq_sim::QueueKind::Sdma);
    let fence = |i: u64, v: u32| {
        let mut b = [0u32; sdma::FENCE_DWORDS];
        let f = sdma::Fence {
            header: sdma::fence_header(dev.arch()),
            addr: out.va().offset(4 * i),
            data: v,
        };
        sdma::fence(&mut b, &f).unwrap();
        b
    };
    // Correct: padded to the ring end, the FENCE starts the next lap.
    sdma_pad_to(&mut ring, 0);
    assert_eq!(ring.index(), 0);
    ring.put(&fence(0, 7));
    ring.run_all();
    assert_eq!(cpu_words(&r, &dev, &out, 1), [7]);
    // The bug: two dwords of the FENCE at the end, two at the start.
    sdma_pad_to(&mut ring, 2);
    ring.put(&fence(1, 8));
    ring.publish();
    let f = ring.run_to(ring.wptr);
    assert!(
        f.iter().any(|t| t.contains("crosses the end of the ring")),
        "the split packet was not caught: {f:?}"
    );
    assert_eq!(cpu_words(&r, &dev, &out, 2), [7, 0]);
}

/// Bug: the timeline wrap (tinygrad's `_wrap_timeline_signal`) done one value early: the host
/// compares the GPU's value off by one, so it switches to the shadow signal while the last
/// submission before the wrap (a kernel behind a gate: more work queued) has not completed,
/// and then treats everything before the wrap as complete. Core's `Timeline::wrap` refuses
/// while the GPU shows less than the last value (`Busy`); the bug hands it the observed value
/// plus one. Caught as a wrong result: the simulator has not run the kernel (it is behind the
/// gate), so the host reads its output unwritten. The correct wrap waits for the last value
/// and reads the results.
fn timeline_wrap_off_by_one(mode: SimMode) {
    use hcq_core::timeline::{Timeline, TimelineError, Which};
    let r = rig(mode, 1, SHORT);
    let dev = Device::open(&r.kfd, 0).unwrap();
    let (fill, _) = programs(&dev);
    let ka = kernargs(&dev);
    for off_by_one in [false, true] {
        let signals = [dev.new_signal(0).unwrap(), dev.new_signal(0).unwrap()];
        let of = |w: Which| &signals[usize::from(w == Which::Shadow)];
        let gate = dev.new_signal(0).unwrap();
        let mut t = Timeline::starting_at((1 << 31) - 1);
        let (out_a, out_b) = (sentinel_out(&dev, 64), sentinel_out(&dev, 64));
        let submit = |t: &mut Timeline, out: &GpuBuffer, slot: u64, value: u32, gated| {
            let v = t.signal().unwrap();
            let g = t.gpu_value(v).unwrap();
            ka.write(slot * 64, &fill_args(out, value)).unwrap();
            let exec = fill_exec(&dev, &fill, ka.va().offset(slot * 64));
            let s = of(g.signal).signal_ref();
            // SAFETY: fill writes 64 u32s into `out` and reads `ka`; the signals are this
            // test's, alive past every wait below.
            unsafe {
                dev.submit_compute(|c| {
                    if gated {
                        c.wait(&gate.signal_ref(), 1)?;
                    }
                    c.memory_barrier()?;
                    c.raw(&exec)?;
                    c.signal(&s, g.value)
                })
            }
            .unwrap();
            v
        };
        submit(&mut t, &out_a, 0, 5, false);
        let vb = submit(&mut t, &out_b, 1, 6, true);
        assert!(t.needs_wrap());
        let primary = of(Which::Primary);
        dev.wait(primary, (1 << 31) - 1).unwrap();
        let seen = u32::try_from(primary.value()).unwrap();
        assert_eq!(seen, (1 << 31) - 1, "the gated kernel has not run");
        if off_by_one {
            t.wrap(seen + 1).unwrap();
        } else {
            assert!(matches!(t.wrap(seen), Err(TimelineError::Busy { .. })));
            gate.set(1);
            dev.wait(primary, 1 << 31).unwrap();
            t.wrap(u32::try_from(primary.value()).unwrap()).unwrap();
        }
        // After the wrap the host takes every value before it as complete and reads.
        assert!(t.is_complete(vb, 0));
        let seen_b = cpu_words(&r, &dev, &out_b, 64);
        gate.set(1);
        dev.synchronize().unwrap();
        assert_eq!(fill_words(&out_a), [5; 64]);
        if off_by_one {
            assert_eq!(seen_b, [u32::MAX; 64], "the wrap waited for the kernel");
        } else {
            assert_eq!(seen_b, [6; 64]);
        }
    }
}

hcq_common::both_modes!(
    ring_write_over_unread_commands,
    sdma_packet_split_at_the_ring_end,
    timeline_wrap_off_by_one,
);

/// `agpr_mix`'s kernargs: out, in, k, n (24 bytes).
fn agpr_args(out: &GpuBuffer, inp: &GpuBuffer, k: u32, n: u32) -> Vec<u8> {
    let mut a = out.va().get().to_le_bytes().to_vec();
    a.extend(inp.va().get().to_le_bytes());
    a.extend(k.to_le_bytes());
    a.extend(n.to_le_bytes());
    a
}

/// Turns `exec`'s SET_SH_REG of COMPUTE_PGM_RSRC3 (offset `reg`) into a NOP of the same length:
/// the launch the encoder emitted before it programmed the register.
fn drop_rsrc3(exec: &mut [u32], reg: u32) {
    let set = pm4::Pm4Header::packet3(pm4::op::SET_SH_REG, 2).raw();
    let k = exec
        .windows(2)
        .position(|w| w == [set, reg])
        .expect("exec writes COMPUTE_PGM_RSRC3");
    exec[k] = pm4::Pm4Header::packet3(pm4::op::NOP, 2).raw();
}

/// Bug: COMPUTE_PGM_RSRC3 not programmed for a gfx90a/gfx942 kernel that uses AGPRs (the CP
/// never reads the kernel descriptor, so its ACCUM_OFFSET stays 0 and the AGPRs begin at v4,
/// over ArchVGPRs the kernel holds live). Caught by the ISA interpreter's unified VGPR file:
/// `agpr_mix`'s AGPR writes clobber live values, a wrong result (or a fault). Run first on a
/// fresh queue (the register as KFD's zeroed MQD leaves it), then the same launch with the
/// descriptor's RSRC3 (ACCUM_OFFSET 2: AGPRs from v12) computes exactly.
fn accum_offset_not_programmed(mode: SimMode) {
    for gpu in [hcq_sim::GpuConfig::gfx90a(), hcq_sim::GpuConfig::gfx942()] {
        let cfg = hcq_sim::SimConfig {
            mode,
            gpus: vec![gpu],
            ..hcq_sim::SimConfig::default()
        };
        let r = hcq_tests::Rig::with_config(cfg, SHORT);
        let dev = Device::open(&r.kfd, 0).unwrap();
        let t = dev.target_name();
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(format!("../core/tests/fixtures/kernels/agpr-{t}.co"));
        let prog = Program::load(&dev, &std::fs::read(path).unwrap(), "agpr_mix").unwrap();
        let p = prog.pm4_program();
        let rsrc3 = hcq_core::hsa::PgmRsrc3Gfx90a(p.rsrc3);
        assert_eq!(rsrc3.accum_offset_vgprs(), 12, "{t}");
        let (n, k) = (128u32, 0x1234_5679u32);
        let inputs: Vec<u32> = (0..n).map(|i| i.wrapping_mul(0x0101_0101) ^ 0x55).collect();
        let inp = dev.alloc(u64::from(n) * 4, BufferKind::Gtt).unwrap();
        let bytes: Vec<u8> = inputs.iter().flat_map(|v| v.to_le_bytes()).collect();
        inp.write(0, &bytes).unwrap();
        let want: Vec<u32> = (0..n as usize)
            .map(|i| hcq_sim::stand_ins::fixtures::agpr_mix_value(inputs[i], inputs[i ^ 1], k))
            .collect();
        let grid = ([n / 64, 1, 1], [64, 1, 1]);
        let reg = dev.arch().regs.pgm_rsrc3;
        // The bug first, on the fresh queue.
        let out = sentinel_out(&dev, n as usize);
        let args = agpr_args(&out, &inp, k, n);
        let bad = launch_by_hand(&dev, &p, &kernargs(&dev), &args, grid, |e| {
            drop_rsrc3(e, reg)
        });
        assert!(
            bad.is_err() || words(&out, n as usize) != want,
            "{t}: agpr_mix computed right without COMPUTE_PGM_RSRC3"
        );
        // Correct: the driver's exec programs RSRC3 from the descriptor.
        let out = sentinel_out(&dev, n as usize);
        let args = agpr_args(&out, &inp, k, n);
        launch_by_hand(&dev, &p, &kernargs(&dev), &args, grid, |_| {}).unwrap();
        assert_eq!(words(&out, n as usize), want, "{t}");
    }
}

hcq_common::both_modes!(accum_offset_not_programmed);
