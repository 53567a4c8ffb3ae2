//! tinygrad's exec behaviours (test_exec_one_kernel, test_exec_2_kernels_100_times,
//! test_exec_update(_fuzz), test_bind, test_memory_barrier, run_1000_times_one_submit) on
//! the deterministic and the threaded simulator; launch argument checks, `launch_wait` and
//! profiling records.

mod hcq_common;

use hcq_common::{
    LONG, P4, SimMode, both_modes, one, one_with, programs, read_u32s, to_bytes, to_u32s,
    write_u32s,
};
use hcq_core::cmd::patch;
use hcq_core::codeobj::CodeObjectError;
use hcq_driver::{BufferKind, Device, DeviceOptions, Error, GpuBuffer, Program};
use hcq_sim::stand_ins::{KernelCtx, KernelError};
use hcq_tests::fixtures::{self, FillArgs, VectorAddArgs};
use std::sync::Arc;

/// A device with a PM4 compute queue: `exec` is a PM4 DISPATCH_DIRECT, which an AQL queue of
/// several XCCs refuses (each XCC would run the whole grid), so these tests of PM4 command
/// lists take the PM4 queue on every GPU (on gfx1100 the default anyway; on an 8-XCC gfx942
/// it runs on one XCC, as KFD's PM4 target XCC).
fn pm4(mode: SimMode) -> (hcq_tests::Rig, Device) {
    let opts = DeviceOptions {
        compute_queue: hcq_driver::ComputeQueueKind::Pm4,
        ..DeviceOptions::default()
    };
    one_with(mode, LONG, opts)
}

/// A buffer of `n` ones (filled by the `fill` kernel).
fn ones(dev: &Device, fill: &Program, n: u32) -> GpuBuffer {
    let buf = dev.alloc(u64::from(n) * 4, BufferKind::Vram).unwrap();
    let fa = FillArgs {
        buf: buf.va().get(),
        value: 1,
        n,
    };
    // SAFETY: buf holds n u32s and is returned to the caller (lives past the launch, which
    // the caller's later work is ordered after).
    unsafe { fill.launch_pod(&fa, [n.div_ceil(64), 1, 1], [64, 1, 1]) }.unwrap();
    buf
}

/// Kernel arguments in CPU-visible VRAM (for command lists built by hand).
fn kernargs(dev: &Device, args: &[u8]) -> GpuBuffer {
    let k = dev.alloc(4096, BufferKind::VramCpuVisible).unwrap();
    k.write(0, args).unwrap();
    k
}

/// test_exec_one_kernel: vector_add over 1000 elements (not a multiple of 64: the last
/// workgroup is partial) gives exactly a + b and leaves the element past n untouched.
fn exec_one_kernel(mode: SimMode) {
    let (_rig, dev) = one(mode);
    let (fill, add) = programs(&dev);
    let n = 1000u32;
    let a: Vec<u32> = (0..n).map(|i| i * 3 + 1).collect();
    let b: Vec<u32> = (0..n).map(|i| u32::MAX - i).collect();
    let (ba, bb) = (
        dev.alloc(4000, BufferKind::Vram).unwrap(),
        dev.alloc(4000, BufferKind::Vram).unwrap(),
    );
    let bc = dev.alloc(4004, BufferKind::Vram).unwrap();
    write_u32s(&dev, &ba, &a);
    write_u32s(&dev, &bb, &b);
    write_u32s(&dev, &bc, &vec![0x5a5a_5a5a; 1001]);
    let args = VectorAddArgs {
        a: ba.va().get(),
        b: bb.va().get(),
        c: bc.va().get(),
        n,
    };
    // SAFETY: a, b hold n u32s, c n + 1; all outlive the launch (read_u32s waits).
    unsafe { add.launch_pod(&args, [16, 1, 1], [64, 1, 1]) }.unwrap();
    let got = read_u32s(&dev, &bc, 1001);
    let mut want: Vec<u32> = a.iter().zip(&b).map(|(x, y)| x.wrapping_add(*y)).collect();
    want.push(0x5a5a_5a5a);
    assert_eq!(got, want);
    // And fill, on the same device.
    let fa = FillArgs {
        buf: bc.va().get(),
        value: 0xabcd_0123,
        n: 999,
    };
    // SAFETY: as above.
    unsafe { fill.launch_pod(&fa, [16, 1, 1], [64, 1, 1]) }.unwrap();
    let got = read_u32s(&dev, &bc, 1001);
    assert_eq!(&got[..999], &[0xabcd_0123; 999][..]);
    assert_eq!(&got[999..], &want[999..]);
}

/// test_exec_2_kernels_100_times: one list `wait(sig, v-1) exec exec signal(sig, v)`, the
/// wait and signal values patched and the list resubmitted 100 times; c += 1 twice per run.
fn exec_2_kernels_100_times(mode: SimMode) {
    let (_rig, dev) = pm4(mode);
    let (fill, add) = programs(&dev);
    let n = 256u32;
    let c = dev.alloc(u64::from(n) * 4, BufferKind::Vram).unwrap();
    write_u32s(&dev, &c, &vec![0; n as usize]);
    let one = ones(&dev, &fill, n);
    let args = VectorAddArgs {
        a: c.va().get(),
        b: one.va().get(),
        c: c.va().get(),
        n,
    };
    let ka = kernargs(&dev, bytemuck::bytes_of(&args));
    let sig = dev.new_signal(0).unwrap();
    let mut list = P4::new(dev.arch());
    let w = list.wait(&sig.signal_ref(), 0).unwrap();
    // The kernargs are CPU-written VRAM: flushed out of HDP before the kernels read them.
    list.memory_barrier().unwrap();
    let prog = add.pm4_program();
    for _ in 0..2 {
        list.exec(&prog, ka.va(), [n / 64, 1, 1], [64, 1, 1])
            .unwrap();
    }
    let s = list.signal(&sig.signal_ref(), 0).unwrap();
    for v in 1..=100u32 {
        list.update_wait(&w, None, Some(v - 1)).unwrap();
        list.update_signal(&s, None, Some(u64::from(v))).unwrap();
        // SAFETY: the list runs vector_add over `c` and `one` (n u32s each, alive to the end) with kernargs `ka`, and waits on and sets `sig`, a signal this test created.
        unsafe { dev.submit_pm4(&list) }.unwrap();
    }
    dev.wait(&sig, 100).unwrap();
    assert_eq!(sig.value(), 100);
    assert_eq!(read_u32s(&dev, &c, n as usize), vec![200; n as usize]);
}

/// A host kernel standing in for `copy_u32` (multi-gfx1100.co): per workgroup, adds its
/// work-item count to `out[0]`, 1 to `out[1]`, and 1 to `out[2 + linear workgroup id]`.
fn count_threads(wg: &mut KernelCtx<'_>) -> Result<(), KernelError> {
    let out = wg.arg_u64(0)?;
    let [lx, ly, lz] = wg.local_size();
    let [nx, ny, _] = wg.num_workgroups();
    let [x, y, z] = wg.workgroup_id();
    let lin = u64::from(x + nx * (y + ny * z));
    let bump = |wg: &KernelCtx<'_>, at: u64, by: u32| -> Result<(), KernelError> {
        let v = wg.read_u32(at)?;
        wg.write_u32(at, v + by)
    };
    bump(wg, out, lx * ly * lz)?;
    bump(wg, out + 4, 1)?;
    bump(wg, out + 8 + 4 * lin, 1)
}

const MULTI: &[u8] = include_bytes!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../core/tests/fixtures/kernels/multi-gfx1100.co"
));

/// test_exec_update_fuzz: one exec command, its global and local sizes patched to every
/// combination of 1..=3 per axis; each run executes exactly global x local work-items and
/// every workgroup exactly once.
fn exec_update_dims(mode: SimMode) {
    let (rig, dev) = pm4(mode);
    rig.gpu
        .engines()
        .with_kernels(|k| {
            // A custom host closure in place of copy_u32: the explicit host stand-in opt-in.
            k.set_mode(hcq_sim::stand_ins::ExecMode::HostStandIns);
            k.register_from_code_object(MULTI, "copy_u32", Arc::new(count_threads))
        })
        .unwrap();
    let prog = Program::load(&dev, MULTI, "copy_u32").unwrap();
    let out = dev.alloc(4096, BufferKind::VramCpuVisible).unwrap();
    let ka = kernargs(&dev, &out.va().get().to_le_bytes());
    let mut list = P4::new(dev.arch());
    // `out` is zeroed through the CPU's VRAM mapping before every run: flush HDP first.
    list.memory_barrier().unwrap();
    let (h, dw) = list
        .exec(&prog.pm4_program(), ka.va(), [1, 1, 1], [1, 1, 1])
        .unwrap();
    assert!(dw.is_none(), "copy_u32 takes no dispatch pointer");
    let dims: Vec<[u32; 3]> = (1..=3)
        .flat_map(|x| (1..=3).flat_map(move |y| (1..=3).map(move |z| [x, y, z])))
        .collect();
    let zero = vec![0u8; 4 * (2 + 27)];
    let mut runs = 0;
    for g in &dims {
        for l in &dims {
            out.write(0, &zero).unwrap();
            assert!(list.update_exec(&h, *g, *l).unwrap().is_none());
            // SAFETY: the list's kernel writes its counts into `out` (4096 bytes, room for the 2 + 27 u32s), alive until after the synchronize below; kernargs in `ka`.
            unsafe { dev.submit_pm4(&list) }.unwrap();
            dev.synchronize().unwrap();
            let mut back = vec![0u8; 4 * (2 + 27)];
            out.read(0, &mut back).unwrap();
            let got = to_u32s(&back);
            let groups = g.iter().product::<u32>();
            let items = groups * l.iter().product::<u32>();
            assert_eq!(
                (got[0], got[1]),
                (items, groups),
                "global {g:?} local {l:?}"
            );
            let mut per_group = vec![1u32; groups as usize];
            per_group.resize(27, 0);
            assert_eq!(&got[2..], &per_group[..], "global {g:?} local {l:?}");
            runs += 1;
        }
    }
    assert_eq!(runs, 729);
}

/// test_bind: a list (wait gate >= v, exec, signal done = v) copied to GPU memory once and run
/// as an indirect buffer 10 times, its wait and signal patched in GPU memory between runs.
fn bind(mode: SimMode) {
    let (_rig, dev) = pm4(mode);
    let (fill, add) = programs(&dev);
    let n = 128u32;
    let c = dev.alloc(u64::from(n) * 4, BufferKind::Vram).unwrap();
    write_u32s(&dev, &c, &vec![5; n as usize]);
    let one = ones(&dev, &fill, n);
    let args = VectorAddArgs {
        a: c.va().get(),
        b: one.va().get(),
        c: c.va().get(),
        n,
    };
    let ka = kernargs(&dev, bytemuck::bytes_of(&args));
    let gate = dev.new_signal(0).unwrap();
    let done = dev.new_signal(0).unwrap();
    let mut list = P4::new(dev.arch());
    let w = list.wait(&gate.signal_ref(), 0).unwrap();
    // The kernargs are CPU-written VRAM: flushed out of HDP before the kernel reads them.
    list.memory_barrier().unwrap();
    list.exec(&add.pm4_program(), ka.va(), [n / 64, 1, 1], [64, 1, 1])
        .unwrap();
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
        // SAFETY: the bound list waits on `gate`, runs vector_add over `c` and `one` (n u32s each, alive to the end) and sets `done`; the wait below completes it before the next patch.
        let tv = unsafe { bound.submit() }.unwrap();
        dev.wait(&done, u64::from(v)).unwrap();
        dev.wait_value(tv).unwrap();
        assert_eq!(done.value(), u64::from(v));
        assert_eq!(read_u32s(&dev, &c, n as usize), vec![5 + v; n as usize]);
    }
}

/// test_memory_barrier: 256 rounds of a CPU write to CPU-visible VRAM, then
/// `memory_barrier; exec(c = a + 0)`; the kernel sees each round's bytes.
fn memory_barrier(mode: SimMode) {
    let (_rig, dev) = pm4(mode);
    let (_, add) = programs(&dev);
    let a = dev.alloc(64 * 4, BufferKind::VramCpuVisible).unwrap();
    let zero = dev.alloc(64 * 4, BufferKind::Vram).unwrap();
    let c = dev.alloc(64 * 4, BufferKind::VramCpuVisible).unwrap();
    write_u32s(&dev, &zero, &[0; 64]);
    let args = VectorAddArgs {
        a: a.va().get(),
        b: zero.va().get(),
        c: c.va().get(),
        n: 64,
    };
    let ka = kernargs(&dev, bytemuck::bytes_of(&args));
    let prog = add.pm4_program();
    for i in 0..256u32 {
        let vals: Vec<u32> = (0..64u32).map(|j| i * 64 + j).collect();
        a.write(0, &to_bytes(&vals)).unwrap();
        // SAFETY: one vector_add over `a`, `zero` and `c` (64 u32s each, alive to the end),
        // kernargs in `ka`; the CPU reads `c` only after the wait.
        let v = unsafe {
            dev.submit_compute(|cmds| {
                cmds.memory_barrier()?;
                cmds.exec(&prog, ka.va(), [1, 1, 1], [64, 1, 1])
            })
        }
        .unwrap();
        dev.wait_value(v).unwrap();
        let mut back = vec![0u8; 256];
        c.read(0, &mut back).unwrap();
        assert_eq!(to_u32s(&back), vals, "round {i}");
    }
}

/// run_1000_times_one_submit (4000 kernels): one submission of 4000 `c += 1` dispatches.
fn four_thousand_kernels_in_one_submission(mode: SimMode) {
    let opts = DeviceOptions {
        compute_ring_size: 4 << 20,
        // PM4 command lists: see `pm4`.
        compute_queue: hcq_driver::ComputeQueueKind::Pm4,
        ..DeviceOptions::default()
    };
    let (_rig, dev) = one_with(mode, LONG, opts);
    let (fill, add) = programs(&dev);
    let c = dev.alloc(64 * 4, BufferKind::Vram).unwrap();
    write_u32s(&dev, &c, &[7; 64]);
    let one = ones(&dev, &fill, 64);
    let args = VectorAddArgs {
        a: c.va().get(),
        b: one.va().get(),
        c: c.va().get(),
        n: 64,
    };
    let ka = kernargs(&dev, bytemuck::bytes_of(&args));
    let prog = add.pm4_program();
    let before = dev.last_value();
    // SAFETY: 4000 vector_adds over `c` and `one` (64 u32s each, alive to the end), kernargs
    // in `ka`; the CPU reads `c` only after the wait.
    let v = unsafe {
        dev.submit_compute(|cmds| {
            // The kernargs are CPU-written VRAM: flushed out of HDP before the kernels read them.
            cmds.memory_barrier()?;
            for _ in 0..4000 {
                cmds.exec(&prog, ka.va(), [1, 1, 1], [64, 1, 1])?;
            }
            Ok(())
        })
    }
    .unwrap();
    assert_eq!(
        v.get(),
        before.get() + 1,
        "one submission, one timeline value"
    );
    dev.wait_value(v).unwrap();
    assert_eq!(read_u32s(&dev, &c, 64), vec![4007; 64]);
}

/// Launches with the wrong argument size, a zero dimension or a workgroup over the kernel's
/// limit, and loads of a missing kernel, a code object for another target or not an ELF,
/// are errors before anything reaches the GPU.
fn launch_checks_arguments_and_dimensions(mode: SimMode) {
    let (rig, dev) = one(mode);
    let (fill, _) = programs(&dev);
    let before = dev.last_value();
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
    assert_eq!(
        dev.last_value(),
        before,
        "a refused launch takes no timeline value"
    );
    // Code-object errors keep core's typed cause: in the variant and as `source()`.
    let load = |co: &[u8], name: &str| Program::load(&dev, co, name).unwrap_err();
    let e = load(fixtures::fill("gfx1100").unwrap(), "nope");
    assert!(
        matches!(
            &e,
            Error::CodeObject { source: Some(c), .. }
                if matches!(**c, CodeObjectError::KernelNotFound { .. })
        ),
        "{e:?}"
    );
    assert!(e.to_string().contains("kernel nope"), "{e}");
    let e = load(fixtures::fill("gfx90a").unwrap(), "fill");
    let cause = core::error::Error::source(&e).and_then(|s| s.downcast_ref::<CodeObjectError>());
    assert!(
        matches!(
            cause,
            Some(CodeObjectError::TargetMismatch {
                object: "gfx90a",
                ..
            })
        ),
        "{e:?}"
    );
    let e = load(b"not an elf", "fill");
    let cause = core::error::Error::source(&e).and_then(|s| s.downcast_ref::<CodeObjectError>());
    assert!(
        matches!(
            cause,
            Some(CodeObjectError::OutOfBounds { .. } | CodeObjectError::BadMagic { .. })
        ),
        "{e:?}"
    );
    drop(rig);
}

/// `launch_wait` returns the GPU time between the timestamps around the dispatch, and with
/// profiling on the launch leaves one record naming the kernel.
fn launch_wait_reports_gpu_time_and_profiling_records(mode: SimMode) {
    let (_rig, dev) = one(mode);
    let (fill, _) = programs(&dev);
    let buf = dev.alloc(64 * 4, BufferKind::Vram).unwrap();
    let args = FillArgs {
        buf: buf.va().get(),
        value: 1,
        n: 64,
    };
    dev.set_profiling(true);
    // SAFETY: buf holds 64 u32s and outlives the launch (launch_wait waits).
    let t = unsafe { fill.launch_wait(bytemuck::bytes_of(&args), [1, 1, 1], [64, 1, 1]) }.unwrap();
    assert!(t > core::time::Duration::ZERO, "{t:?}");
    let recs = dev.take_profile().unwrap();
    assert_eq!(recs.len(), 1);
    assert_eq!(recs[0].name, "fill");
    assert!(recs[0].end_ns > recs[0].start_ns);
    assert_eq!(read_u32s(&dev, &buf, 64), vec![1; 64]);
}

both_modes!(
    launch_checks_arguments_and_dimensions,
    launch_wait_reports_gpu_time_and_profiling_records,
    exec_one_kernel,
    exec_2_kernels_100_times,
    exec_update_dims,
    bind,
    memory_barrier,
    four_thousand_kernels_in_one_submission,
);
