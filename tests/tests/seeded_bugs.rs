//! Seeded bugs: each test injects one known class of driver bug into an otherwise correct path
//! (hand-built command streams through the driver's raw submit) and asserts that the simulator
//! catches it: a queue fault or a detected wrong result, never a pass. Each test first runs the
//! correct variant of the same hand-built path. Launches are built with core's `exec` encoder
//! from the program's `pm4::Program` with one register changed, after the HDP flush the driver
//! issues, so the injected register is the only bug. The table of bugs and the checks that
//! catch them is in `sim/README.md` ("Seeded bugs").

mod hcq_common;

use core::time::Duration;
use hcq_common::{P4, SimMode, programs, rig};
use hcq_core::addr::GpuVa;
use hcq_core::hsa::PgmRsrc2;
use hcq_core::pm4;
use hcq_core::sel::{DataSel, IntSel};
use hcq_driver::kernels::{self, FillArgs};
use hcq_driver::{BufferKind, Device, Error, GpuBuffer, Program};

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
/// group's elements. Caught by the ISA interpreter: elements 64.. stay unwritten.
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
    launch_by_hand(&dev, &p, &kernargs(&dev), &args, GID, |_| {}).unwrap();
    let got = words(&out, 256);
    assert_eq!(got[..64], want[..64]);
    assert_eq!(got[64..], [u32::MAX; 192]);
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
/// kernel's s_load hits the line the previous launch cached and stores the old value, a wrong
/// result. The same rewrite with the invalidate stores the new one.
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
    launch_after_hdp_flush_only(&dev, &exec).unwrap();
    assert_eq!(words(&out, 64), [6; 64], "the kernel read the new kernargs");
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
            .map(|i| hcq_sim::kernels::fixtures::agpr_mix_value(inputs[i], inputs[i ^ 1], k))
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
