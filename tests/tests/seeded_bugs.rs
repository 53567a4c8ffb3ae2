//! Seeded bugs: realistic driver bugs, each switched on in the driver's real code path
//! (`hcq_driver::seeded`, the `seeded-bugs` feature this crate enables), and the simulator's
//! verdict on each. Every case runs the same driver calls with the bug armed and asserts the
//! fault the simulator names: its kind, and the object it names (an address, a register, a
//! signal and its writers, a hidden argument), never "some error". One case per driver path:
//! launch, copies in and out, device copy, graph replay, ring wrap, scratch, hidden
//! arguments, multi-queue ordering. Hand-built command streams that test the simulator's own
//! checks are in `judge_streams.rs`.

mod hcq_common;

use core::time::Duration;
use hcq_common::{SimMode, programs, rig};
use hcq_driver::seeded::{Bug, arm};
use hcq_driver::{BufferKind, Device, DeviceOptions, Error, GpuBuffer, Program};
use hcq_tests::fixtures as kernels;
use hcq_tests::hidden_args::mismatches;

/// Faults come back long before this; a verdict that needs it is a missed bug.
const SHORT: Duration = Duration::from_secs(5);

/// The fault a seeded bug must end in, as the driver reports it.
fn fault_of<T: core::fmt::Debug>(
    r: hcq_driver::Result<T>,
) -> (Box<hcq_driver::WaitReport>, String) {
    match r {
        Err(e @ Error::DeviceFault(_)) => {
            let text = e.to_string();
            let Error::DeviceFault(rep) = e else {
                unreachable!()
            };
            (rep, text)
        }
        other => panic!("expected a device fault naming the bug, got {other:?}"),
    }
}

fn launch_fill(fill: &Program, out: &GpuBuffer, value: u32, n: u32) -> hcq_driver::Result<()> {
    let args = kernels::FillArgs {
        buf: out.va().get(),
        value,
        n,
    };
    // SAFETY: fill writes `n` u32s into `out`, which holds at least that many and outlives the
    // launch (every test waits before it drops the buffer).
    unsafe { fill.launch_pod(&args, [n.div_ceil(64), 1, 1], [64, 1, 1]) }?;
    Ok(())
}

/// Launch path, bug: the launch's HDP flush and cache invalidate dropped (the pre-encoded
/// `memory_barrier` before the dispatch). The launch's kernargs, written by the CPU into VRAM
/// after the last flush, still sit in HDP (any CPU write may, whatever the GPU touched since
/// the flush): the simulator faults the dispatch's kernarg read as a read of VRAM the CPU
/// wrote after the last HDP flush, at the first kernarg byte that differs from what the GPU
/// sees.
fn launch_without_its_hdp_flush(mode: SimMode) {
    let r = rig(mode, 1, SHORT);
    let dev = Device::open(&r.kfd, 0).unwrap();
    let out = dev.alloc(4096, BufferKind::Gtt).unwrap();
    let (fill, _) = programs(&dev);
    launch_fill(&fill, &out, 1, 64).unwrap();
    dev.synchronize().unwrap();
    let _bug = arm(Bug::LaunchWithoutBarrier);
    let (fill, _) = programs(&dev);
    let res = launch_fill(&fill, &out, 2, 64).and_then(|()| dev.synchronize());
    let (rep, text) = fault_of(res);
    let page = rep.fault_addr.expect("a memory fault");
    assert!(
        text.contains("PM4 queue 0 at ring@0x153: GPU VM fault: read at 0x")
            && text.contains(
                "VRAM bytes the CPU wrote after the last HDP flush (missing HDP flush before the GPU read)"
            ),
        "{text}"
    );
    assert_eq!(page % 4096, 0, "the page of the kernargs: {text}");
    let read: u64 = text
        .split("read at 0x")
        .nth(1)
        .and_then(|t| t.split(':').next())
        .and_then(|h| u64::from_str_radix(h, 16).ok())
        .unwrap_or_else(|| panic!("no address named: {text}"));
    // The byte is inside the kernargs' page: `value` (2 now, 1 in the launch before).
    assert!(read > page && read < page + 4096, "{text}");
}

/// Device copy, bug: `Device::copy` without its HDP flush. The source is CPU-visible VRAM the
/// host rewrote after the last copy read it: the copy's read of it faults, naming the source
/// address.
fn device_copy_without_its_hdp_flush(mode: SimMode) {
    let r = rig(mode, 1, SHORT);
    let dev = Device::open(&r.kfd, 0).unwrap();
    let src = dev.alloc(4096, BufferKind::VramCpuVisible).unwrap();
    let dst = dev.alloc(4096, BufferKind::Gtt).unwrap();
    src.write(0, &[1; 4096]).unwrap();
    dev.wait_value(dev.copy(&dst, &src).unwrap()).unwrap();
    let _bug = arm(Bug::DeviceCopyWithoutHdpFlush);
    src.write(0, &[2; 4096]).unwrap();
    let res = dev.copy(&dst, &src).and_then(|v| dev.wait_value(v));
    let (rep, text) = fault_of(res);
    assert!(
        text.contains("SDMA queue 1 at ring@")
            && text.contains("VRAM bytes the CPU wrote after the last HDP flush"),
        "{text}"
    );
    assert_eq!(rep.fault_addr, Some(src.va().get()), "{text}");
}

/// Device copy, bug: `Device::copy` without its HDP flush, from CPU-visible VRAM the GPU has
/// never read: the CPU's write may sit in HDP whatever the GPU touched before (the simulator
/// sees the CPU's first write to each VRAM page after a flush), so the copy's read faults at
/// the source's first byte.
fn device_copy_of_vram_the_gpu_never_read(mode: SimMode) {
    let r = rig(mode, 1, SHORT);
    let dev = Device::open(&r.kfd, 0).unwrap();
    let src = dev.alloc(4096, BufferKind::VramCpuVisible).unwrap();
    let dst = dev.alloc(4096, BufferKind::Gtt).unwrap();
    dev.synchronize().unwrap();
    let _bug = arm(Bug::DeviceCopyWithoutHdpFlush);
    src.write(0, &[3; 4096]).unwrap();
    let res = dev.copy(&dst, &src).and_then(|v| dev.wait_value(v));
    let (rep, text) = fault_of(res);
    assert!(
        text.contains("SDMA queue 1 at ring@")
            && text.contains(&format!(
                "read at {:#x}: VRAM bytes the CPU wrote after the last HDP flush",
                src.va().get()
            )),
        "{text}"
    );
    assert_eq!(rep.fault_addr, Some(src.va().get()), "{text}");
}

/// Multi-queue ordering, bug: copy-queue submissions skip their wait for the previous timeline
/// value. The compute submission before the copy is held behind a gate; the copy runs at once
/// and writes its timeline value; the compute queue then writes the earlier value over it.
/// The simulator names the timeline signal going down, both writers and both values, and the
/// cause: the copy the later value completes ran before the value it should have waited for.
fn copy_without_its_timeline_wait(mode: SimMode) {
    let r = rig(mode, 1, SHORT);
    let dev = Device::open(&r.kfd, 0).unwrap();
    let (fill, _) = programs(&dev);
    let gate = dev.new_signal(0).unwrap();
    let a = dev.alloc(4096, BufferKind::Vram).unwrap();
    let b = dev.alloc(4096, BufferKind::Vram).unwrap();
    let out = dev.alloc(4096, BufferKind::Gtt).unwrap();
    dev.synchronize().unwrap();
    let _bug = arm(Bug::CopySkipsTimelineWait);
    // SAFETY: waits on `gate`, alive past every wait below.
    let held = unsafe { dev.submit_compute(|c| c.wait(&gate.signal_ref(), 1)) }.unwrap();
    let copied = dev.copy(&b, &a).unwrap();
    assert_eq!(copied.get(), held.get() + 1);
    // The copy completes at once: nothing held it behind the gated work.
    dev.wait_value(copied).unwrap();
    gate.set(1);
    let res = launch_fill(&fill, &out, 1, 64).and_then(|()| dev.synchronize());
    let (_rep, text) = fault_of(res);
    let (h, c) = (held.get(), copied.get());
    assert!(
        text.contains("goes down: RELEASE_MEM (PM4 queue")
            && text.contains(&format!(
                "writes {h} over {c}, which SDMA FENCE (SDMA queue"
            )),
        "{text}"
    );
    // The cause: the copy ran before the value it should have waited for, and what it raced.
    assert!(
        text.contains("; SDMA COPY_LINEAR (SDMA queue")
            && text.contains(&format!(
                "ran before the value it should have waited for: {h}, which RELEASE_MEM (PM4 queue"
            ))
            && text.contains(&format!("a missing wait for {h} before it")),
        "{text}"
    );
}

/// Copies in and out, bug: copy-queue submissions skip their wait for the previous timeline
/// value. `copy_in` (and `copy_out`, whose own wait then passes at once) run ahead of the
/// gated compute work before them; when the compute queue catches up, its timeline value goes
/// below the copy's, and the simulator names both writers and values.
fn copies_in_and_out_without_their_timeline_wait(mode: SimMode) {
    for copy_out in [false, true] {
        let r = rig(mode, 1, SHORT);
        let dev = Device::open(&r.kfd, 0).unwrap();
        let (fill, _) = programs(&dev);
        let gate = dev.new_signal(0).unwrap();
        let buf = dev.alloc(4096, BufferKind::Vram).unwrap();
        let out = dev.alloc(4096, BufferKind::Gtt).unwrap();
        dev.copy_in(&buf, &[7; 4096]).unwrap();
        dev.synchronize().unwrap();
        let _bug = arm(Bug::CopySkipsTimelineWait);
        // SAFETY: waits on `gate`, alive past every wait below.
        let held = unsafe { dev.submit_compute(|c| c.wait(&gate.signal_ref(), 1)) }.unwrap();
        if copy_out {
            let mut got = vec![0u8; 4096];
            dev.copy_out(&buf, &mut got).unwrap();
        } else {
            dev.copy_in(&buf, &[9; 4096]).unwrap();
            dev.wait_value(dev.last_value()).unwrap();
        }
        let copied = dev.last_value().get();
        assert_eq!(copied, held.get() + 1);
        gate.set(1);
        let res = launch_fill(&fill, &out, 1, 64).and_then(|()| dev.synchronize());
        let (_rep, text) = fault_of(res);
        let h = held.get();
        assert!(
            text.contains("goes down: RELEASE_MEM (PM4 queue")
                && text.contains(&format!(
                    "writes {h} over {copied}, which SDMA FENCE (SDMA queue"
                ))
                && text.contains("; SDMA COPY_LINEAR (SDMA queue")
                && text.contains(&format!(
                    "ran before the value it should have waited for: {h}, which RELEASE_MEM"
                )),
            "copy_out {copy_out}: {text}"
        );
    }
}

/// Wrong timeline value in a wait, bug: every submission waits for its own timeline value
/// instead of the previous one. The launch's queue waits for a value only it would write,
/// while every queue is idle: no GPU work can satisfy it, but the host still could, so the
/// simulator faults nothing; the host's wait times out at its deadline with the cause,
/// naming the waiting queue, the signal, the value and the signal's history.
fn wait_for_the_submissions_own_value(mode: SimMode) {
    let r = rig(mode, 1, Duration::from_secs(1));
    let dev = Device::open(&r.kfd, 0).unwrap();
    let out = dev.alloc(4096, BufferKind::Gtt).unwrap();
    let (fill, _) = programs(&dev);
    dev.synchronize().unwrap();
    let before = dev.last_value().get();
    let _bug = arm(Bug::WaitForOwnValue);
    let res = launch_fill(&fill, &out, 1, 64).and_then(|()| dev.synchronize());
    let Err(err @ Error::Timeout(_)) = res else {
        panic!("expected a timeout naming the deadlock, got {res:?}");
    };
    let text = err.to_string();
    let Error::Timeout(rep) = err else {
        unreachable!()
    };
    // The value of an amd_signal_t is at byte 8.
    let want = format!(
        "waits for the value at {:#x} to be >= {} (mask 0xffffffff) and it holds {before}, but no queued or running operation can write it",
        rep.signal_addr.get() + 8,
        before + 1
    );
    assert!(
        text.starts_with("wait timed out: simulator: deadlock: "),
        "{text}"
    );
    assert!(text.contains(&want), "{text}");
    assert!(text.contains("the signal's history"), "{text}");
}

/// Ring wrap, bug: the SDMA ring's producer splits a packet at the ring end. Copies on a small
/// ring wrap it; the engine faults naming the packet that crosses the end.
fn sdma_packet_split_at_the_ring_end(mode: SimMode) {
    let r = rig(mode, 1, SHORT);
    let opts = DeviceOptions {
        sdma_ring_size: 1024,
        ..DeviceOptions::default()
    };
    let dev = Device::open_with(&r.kfd, 0, opts).unwrap();
    let a = dev.alloc(4096, BufferKind::Vram).unwrap();
    let b = dev.alloc(4096, BufferKind::Vram).unwrap();
    let _bug = arm(Bug::SplitSdmaPackets);
    let mut res = Ok(());
    for _ in 0..64 {
        res = dev.copy(&b, &a).and_then(|v| dev.wait_value(v));
        if res.is_err() {
            break;
        }
    }
    let (_rep, text) = fault_of(res);
    assert!(
        text.contains("SDMA queue 1 at ring@")
            && text.contains("crosses the end of the ring (256 dwords)"),
        "{text}"
    );
}

/// Scratch, bug: the scratch buffer allocated 64 times smaller than COMPUTE_TMPRING_SIZE
/// programs. A scratch kernel's dispatch faults at once, naming both sizes.
fn short_scratch_buffer(mode: SimMode) {
    let r = rig(mode, 1, SHORT);
    let _bug = arm(Bug::ShortScratch);
    let dev = Device::open(&r.kfd, 0).unwrap();
    let co = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../core/tests/fixtures/kernels/scratch-gfx1100.co"
    ))
    .unwrap();
    let prog = Program::load(&dev, &co, "scratch_sum").unwrap();
    let out = dev.alloc(4096, BufferKind::Gtt).unwrap();
    let mut args = out.va().get().to_le_bytes().to_vec();
    args.extend(3u32.to_le_bytes());
    // SAFETY: scratch_sum writes 64 u32s into `out` (4096 bytes), alive past the wait.
    let res = unsafe { prog.launch(&args, [1, 1, 1], [64, 1, 1]) }.and_then(|_| dev.synchronize());
    let (_rep, text) = fault_of(res);
    let s = dev.scratch();
    let waves = s.tmpring_size & 0xfff;
    let want = format!(
        "scratch: COMPUTE_TMPRING_SIZE {:#x} programs {waves} wave slots of {} bytes = {} bytes",
        s.tmpring_size,
        s.wave_scratch_len,
        u64::from(waves) * s.wave_scratch_len
    );
    assert!(text.contains(&want), "{text}");
    // The mapped prefix from the base: the short buffer, and whatever the allocator placed
    // right after it, short of the programmed region.
    let short = (s.scratch_len / 64).next_multiple_of(4096);
    let mapped: u64 = text
        .split("but only ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no mapped size named: {text}"));
    assert!(
        mapped >= short && mapped < u64::from(waves) * s.wave_scratch_len,
        "{text}"
    );
}

/// Hidden arguments, bug: `hidden_grid_dims` written as 1 whatever the launch. The
/// `hidden_args` fixture kernel reads every hidden argument; on a 3-dimensional launch every
/// work-group reports `hidden_grid_dims` 1 where the launch has 3, and nothing else wrong.
fn hidden_grid_dims_written_as_one(mode: SimMode) {
    let r = rig(mode, 1, SHORT);
    let dev = Device::open(&r.kfd, 0).unwrap();
    let (groups, block) = ([2, 1, 2], [8, 2, 2]);
    assert!(mismatches(&dev, groups, block).unwrap().is_empty());
    let _bug = arm(Bug::HiddenGridDimsOne);
    let bad = mismatches(&dev, groups, block).unwrap();
    let want: Vec<String> = (0..4)
        .map(|g| format!("group {g}: hidden_grid_dims read 1, the launch has 3"))
        .collect();
    assert_eq!(bad, want);
}

/// Hidden arguments, bug: `hidden_group_size_y` filled from the x size (a swapped launch
/// dimension). The kernel reports `hidden_group_size_y`, and the work-group size y clang's
/// builtin computes from it, wrong in every group.
fn hidden_group_size_y_from_x(mode: SimMode) {
    let r = rig(mode, 1, SHORT);
    let dev = Device::open(&r.kfd, 0).unwrap();
    let (groups, block) = ([2, 1, 1], [16, 4, 1]);
    let _bug = arm(Bug::HiddenGroupSizeYFromX);
    let bad = mismatches(&dev, groups, block).unwrap();
    let want: Vec<String> = (0..2)
        .flat_map(|g| {
            [
                format!("group {g}: hidden_group_size_y read 16, the launch has 4"),
                format!(
                    "group {g}: workgroup size y (group size or remainder) read 16, the launch has 4"
                ),
            ]
        })
        .collect();
    assert_eq!(bad, want);
}

/// Graph replay, bug: the recorded graph loses its memory barrier (`GraphBuilder::barrier`,
/// the HDP flush and cache invalidate) before a launch that reads CPU-visible VRAM the host
/// writes before the replay. The replay's kernel reads the input the host wrote after the
/// last HDP flush (an ordinary launch flushed the graph's recorded kernargs before): the
/// simulator faults the read, naming the input's address.
fn graph_replay_without_its_barrier(mode: SimMode) {
    use hcq_driver::graph::{
        Arg, BufArg, DimLimits, Dims, DimsArg, Graph, GraphBuilder, ScalarArg,
    };
    let r = rig(mode, 1, SHORT);
    let dev = Device::open(&r.kfd, 0).unwrap();
    let (_, add) = programs(&dev);
    let a = dev.alloc(4096, BufferKind::VramCpuVisible).unwrap();
    let b = dev.alloc(4096, BufferKind::Gtt).unwrap();
    let c = dev.alloc(4096, BufferKind::Gtt).unwrap();
    let bug = arm(Bug::GraphLaunchWithoutBarrier);
    let mut g = GraphBuilder::new(dev.arch());
    g.barrier();
    g.launch(
        &add.pm4_program(),
        DimLimits::AMD,
        &[
            Arg::Buf(BufArg::Fixed(a.va())),
            Arg::Buf(BufArg::Fixed(b.va())),
            Arg::Buf(BufArg::Fixed(c.va())),
            Arg::U32(ScalarArg::Fixed(1024)),
        ],
        DimsArg::Fixed(Dims {
            global: [16, 1, 1],
            local: [64, 1, 1],
        }),
    )
    .unwrap();
    let mut graph = Graph::record(&dev, &g).unwrap();
    drop(bug);
    // An ordinary launch's HDP flush makes the kernargs the recording wrote visible.
    let (fill, _) = programs(&dev);
    launch_fill(&fill, &c, 0, 64).unwrap();
    dev.synchronize().unwrap();
    let mut replay = || {
        // SAFETY: the graph's one launch reads `a` and `b` and writes `c` (1024 u32s each,
        // 4096 bytes), all alive past the waits below.
        let v = unsafe { graph.replay(&[]) }?;
        dev.wait_value(v)
    };
    a.write(0, &[1; 4096]).unwrap();
    let (rep, text) = fault_of(replay());
    assert_eq!(rep.fault_addr, Some(a.va().get()), "{text}");
    assert!(
        text.contains(&format!(
            "read at {:#x}: VRAM bytes the CPU wrote after the last HDP flush",
            a.va().get()
        )),
        "{text}"
    );
}

/// Graph replay, bug: the recorded list's cache invalidates leave the K$ (every ACQUIRE_MEM
/// without GLK_INV). The first replay's kernel fills K$ lines with its kernargs; the second
/// replay's patch writes a new value there (`value`, byte 8 of `fill`'s arguments), and its
/// kernel would read the first replay's value from the K$ (without the verdict: the replay
/// completes and writes the old value). The simulator refuses the dispatch naming the
/// cause: the pointer, the byte, the value the K$ holds and the one memory holds, and the
/// missing K$ invalidate.
fn graph_replay_with_the_previous_replays_values(mode: SimMode) {
    use hcq_driver::graph::{
        Arg, BufArg, DimLimits, Dims, DimsArg, Graph, GraphBuilder, ScalarArg, Value,
    };
    let r = rig(mode, 1, SHORT);
    let dev = Device::open(&r.kfd, 0).unwrap();
    let (fill, _) = programs(&dev);
    let out = dev.alloc(4096, BufferKind::Gtt).unwrap();
    let mut g = GraphBuilder::new(dev.arch());
    let val = g.scalar(0).unwrap();
    g.launch(
        &fill.pm4_program(),
        DimLimits::AMD,
        &[
            Arg::Buf(BufArg::Fixed(out.va())),
            Arg::U32(ScalarArg::Var(val)),
            Arg::U32(ScalarArg::Fixed(64)),
        ],
        DimsArg::Fixed(Dims {
            global: [1, 1, 1],
            local: [64, 1, 1],
        }),
    )
    .unwrap();
    let bug = arm(Bug::GraphKeepsKcache);
    let mut graph = Graph::record(&dev, &g).unwrap();
    drop(bug);
    let mut replay = |v: u32| {
        // SAFETY: the graph's one launch writes 64 u32s into `out` (1024), alive past the wait.
        let t = unsafe { graph.replay(&[Some(Value::Scalar(v.into()))]) }?;
        dev.wait_value(t)
    };
    replay(0x11).unwrap();
    let mut got = [0u8; 4];
    out.read(0, &mut got).unwrap();
    assert_eq!(u32::from_le_bytes(got), 0x11);
    // Unchanged values: the K$ holds what memory holds, nothing stale.
    replay(0x11).unwrap();
    let (_rep, text) = fault_of(replay(0x22));
    assert!(
        text.contains("PM4 queue 0 at ib1@")
            && text.contains(
                "stale kernargs, a replay running with the previous replay's values: USER_DATA_"
            )
            && text.contains(
                "(offset 0x8) as 0x11, fetched before this dispatch began, while memory holds 0x22"
            )
            && text.contains("no K$ invalidate ran since (ACQUIRE_MEM GLK_INV on gfx10+"),
        "{text}"
    );
}

/// Graph replay, bug: as above, with the launch's dims a variable. The graph patches the new
/// grid into the dispatch packet it keeps beside the kernargs (the `grid_size(out)` kernel
/// reads its grid from there through its dispatch pointer); the K$ still holds the packet the
/// first replay read, so the kernel would write the first replay's grid. The verdict names
/// the packet's `grid_size_x` (byte 0xc): 128 work-items cached, 256 in memory.
fn graph_replay_with_the_previous_replays_dispatch_packet(mode: SimMode) {
    use hcq_driver::graph::{Arg, BufArg, DimLimits, Dims, DimsArg, Graph, GraphBuilder, Value};
    let r = rig(mode, 1, SHORT);
    let dev = Device::open(&r.kfd, 0).unwrap();
    let t = dev.target_name();
    let gs = Program::load(&dev, kernels::dispatch_ptr(&t).unwrap(), "grid_size").unwrap();
    let out = dev.alloc(4096, BufferKind::Gtt).unwrap();
    let dims = |groups: u32| Dims {
        global: [groups, 1, 1],
        local: [64, 1, 1],
    };
    let mut g = GraphBuilder::new(dev.arch());
    let d = g.dims(dims(2)).unwrap();
    g.launch(
        &gs.pm4_program(),
        DimLimits::AMD,
        &[Arg::Buf(BufArg::Fixed(out.va()))],
        DimsArg::Var(d),
    )
    .unwrap();
    let bug = arm(Bug::GraphKeepsKcache);
    let mut graph = Graph::record(&dev, &g).unwrap();
    drop(bug);
    let mut replay = |groups: u32| {
        // SAFETY: grid_size writes one u32 per work-item (at most 256) into `out` (1024 u32s),
        // alive past the wait.
        let v = unsafe { graph.replay(&[Some(Value::Dims(dims(groups)))]) }?;
        dev.wait_value(v)
    };
    replay(2).unwrap();
    let mut got = [0u8; 4];
    out.read(0, &mut got).unwrap();
    assert_eq!(
        u32::from_le_bytes(got),
        128,
        "grid_size writes the grid's work-items"
    );
    let (_rep, text) = fault_of(replay(4));
    assert!(
        text.contains(
            "stale kernargs, a replay running with the previous replay's values: USER_DATA_"
        ) && text.contains(
            "(offset 0xc) as 0x80, fetched before this dispatch began, while memory holds 0x00"
        ),
        "{text}"
    );
}

/// The host-race verdict's text for a race with the operation the timeline value `value`
/// completes: the simulator names what the host should have waited for.
fn ordering(rep: &hcq_driver::WaitReport, value: u64) -> String {
    // The value of an amd_signal_t is at byte 8.
    format!(
        "waiting for the value at {:#x} to reach {value} (the ",
        rep.signal_addr.get() + 8
    )
}

/// Copy out, bug: the staging buffer is read back without waiting for the copy into it. The
/// host reads the staging buffer while the SDMA copy that writes it is queued; the simulator
/// (host accesses in the race detector) faults the copy's queue naming the host's read, the
/// copy, and the timeline value that would have ordered them. Deterministic mode: the engine
/// runs only when the host waits, so the copy is always still queued at the read.
fn copy_out_reads_before_its_copy_completed(mode: SimMode) {
    let r = rig(mode, 1, SHORT);
    let dev = Device::open(&r.kfd, 0).unwrap();
    let buf = dev.alloc(4096, BufferKind::Vram).unwrap();
    dev.copy_in(&buf, &[7; 4096]).unwrap();
    dev.synchronize().unwrap();
    let _bug = arm(Bug::CopyOutSkipsWait);
    let mut got = vec![0u8; 4096];
    // The read itself returns (whatever the staging buffer held); the verdict comes when the
    // GPU runs the copy.
    let res = dev
        .copy_out(&buf, &mut got)
        .and_then(|()| dev.synchronize());
    let copied = dev.last_value().get();
    let (rep, text) = fault_of(res);
    assert!(
        text.contains("SDMA queue 1 at ring@")
            && text.contains("host race: the CPU read 0x")
            && text.contains("(byte 0x0 of the buffer at 0x")
            && text.contains("while SDMA COPY_LINEAR (SDMA queue 1 of GPU")
            && text.contains("which writes bytes")
            && text.contains("was queued and not complete")
            && text.contains(&ordering(&rep, copied))
            && text.contains("SDMA FENCE at ring@"),
        "{text}"
    );
}

/// Copy out, bug: the staging pointers are swapped, so each chunk is read back from the other
/// staging buffer. With 4 KiB staging buffers a 12 KiB copy_out queues chunk i+1's copy before
/// it reads chunk i back: the host's read of the other staging buffer races that copy, and the
/// verdict names the read, the copy that writes the bytes and the value that orders them.
fn copy_out_reads_the_other_staging_buffer(mode: SimMode) {
    let r = rig(mode, 1, SHORT);
    let opts = DeviceOptions {
        staging_size: 4096,
        ..DeviceOptions::default()
    };
    let dev = Device::open_with(&r.kfd, 0, opts).unwrap();
    let buf = dev.alloc(3 * 4096, BufferKind::Vram).unwrap();
    dev.copy_in(&buf, &[5; 3 * 4096]).unwrap();
    dev.synchronize().unwrap();
    // Chunks 0, 1, 2 complete at +1, +2, +3. The wait before chunk 0's read back runs the
    // queued copies through chunk 1's, so the first read that races is chunk 1's: from
    // staging 0, which chunk 2's copy (+3, queued just before) writes.
    let third = dev.last_value().get() + 3;
    let _bug = arm(Bug::CopyOutReadsOtherStaging);
    let mut got = vec![0u8; 3 * 4096];
    let res = dev
        .copy_out(&buf, &mut got)
        .and_then(|()| dev.synchronize());
    let (rep, text) = fault_of(res);
    assert!(
        text.contains("host race: the CPU read 0x")
            && text.contains("(byte 0x0 of the buffer at 0x")
            && text.contains("while SDMA COPY_LINEAR (SDMA queue 1 of GPU")
            && text.contains("which writes bytes")
            && text.contains(&ordering(&rep, third)),
        "{text}"
    );
}

/// Copy in, bug: a staging buffer is rewritten without waiting for the copy that last read
/// it. With 4 KiB staging buffers a 12 KiB copy_in uses staging 0 twice: the host's write of
/// the third chunk lands in it while the first chunk's copy, which reads it, is still queued.
fn copy_in_reuses_staging_before_its_copy_completed(mode: SimMode) {
    let r = rig(mode, 1, SHORT);
    let opts = DeviceOptions {
        staging_size: 4096,
        ..DeviceOptions::default()
    };
    let dev = Device::open_with(&r.kfd, 0, opts).unwrap();
    let buf = dev.alloc(3 * 4096, BufferKind::Vram).unwrap();
    dev.copy_in(&buf, &[1; 4096]).unwrap();
    dev.synchronize().unwrap();
    let first = dev.last_value().get() + 1;
    let _bug = arm(Bug::CopyInReusesStaging);
    let res = dev
        .copy_in(&buf, &[2; 3 * 4096])
        .and_then(|()| dev.synchronize());
    let (rep, text) = fault_of(res);
    assert!(
        text.contains("host race: the CPU wrote 0x")
            && text.contains("(byte 0x0 of the buffer at 0x")
            && text.contains("while SDMA COPY_LINEAR (SDMA queue 1 of GPU")
            && text.contains("which reads bytes")
            && text.contains(&ordering(&rep, first)),
        "{text}"
    );
}

/// Launch, bug: the kernarg arena hands out its start for every launch. The second launch's
/// kernargs overwrite the first's while the first launch, which reads them, is queued: the
/// simulator names the cause (a host write racing a queued dispatch's kernarg read), the
/// host's write (the arena buffer and offset 0), the dispatch and its kernarg segment, and the
/// first launch's timeline value.
fn kernargs_reused_before_the_launch_completed(mode: SimMode) {
    let r = rig(mode, 1, SHORT);
    let dev = Device::open(&r.kfd, 0).unwrap();
    let out = dev.alloc(4096, BufferKind::Gtt).unwrap();
    let (fill, _) = programs(&dev);
    launch_fill(&fill, &out, 1, 64).unwrap();
    dev.synchronize().unwrap();
    let _bug = arm(Bug::KernargsReusedEarly);
    let res = launch_fill(&fill, &out, 2, 64);
    let first = dev.last_value().get();
    let res = res
        .and_then(|()| launch_fill(&fill, &out, 3, 64))
        .and_then(|()| dev.synchronize());
    let (rep, text) = fault_of(res);
    assert!(
        text.contains("PM4 queue 0 at ring@")
            && text.contains(
                "host race: a host write racing a queued dispatch's kernarg read: the CPU wrote 0x"
            )
            && text.contains("(byte 0x0 of the buffer at 0x")
            && text.contains("byte 0x0 of the kernarg segment 0x")
            && text.contains(" of the dispatch of the kernel at 0x")
            && text.contains("(PM4 queue 0 of GPU")
            && text.contains("which reads it and was queued and not complete")
            && text.contains(&ordering(&rep, first))
            && text.contains("RELEASE_MEM at ring@"),
        "{text}"
    );
}

/// Launch, bug: the kernarg pointer and the dispatch pointer user SGPRs swapped. The
/// `dispatch_ptr` fixture kernel (`grid_size(out)`) takes both; with the bug its kernarg
/// pointer names the launch's dispatch packet, whose first bytes it would take for `out`. The
/// simulator refuses the dispatch naming the cause: the kernarg pointer is not a kernarg
/// segment but this launch's dispatch packet (its work-group size and grid are the launch's).
fn kernarg_and_dispatch_pointers_swapped(mode: SimMode) {
    let r = rig(mode, 1, SHORT);
    let dev = Device::open(&r.kfd, 0).unwrap();
    let t = dev.target_name();
    let gs = Program::load(&dev, kernels::dispatch_ptr(&t).unwrap(), "grid_size").unwrap();
    let out = dev.alloc(4096, BufferKind::Gtt).unwrap();
    let args = out.va().get();
    // SAFETY: grid_size writes one u32 per work-item (128) into `out` (1024 u32s), alive past
    // the wait.
    unsafe { gs.launch_pod(&args, [2, 1, 1], [64, 1, 1]) }.unwrap();
    dev.synchronize().unwrap();
    let _bug = arm(Bug::KernargDispatchPtrsSwapped);
    // SAFETY: as above.
    let res =
        unsafe { gs.launch_pod(&args, [2, 1, 1], [64, 1, 1]) }.and_then(|_| dev.synchronize());
    let (_rep, text) = fault_of(res);
    assert!(
        text.contains("USER_DATA_")
            && text.contains(
                "is not a kernarg segment: it points at this launch's kernel dispatch packet (work-group size [64, 1, 1], grid [128, 1, 1] work-items"
            ),
        "{text}"
    );
}

/// Launch, bug: the launch's work-group counts are taken for work-item counts (multiplied by
/// the block again). The `grid_size(out)` kernel writes one u32 per work-item of the grid its
/// dispatch packet gives: the 64 times larger grid writes past `out`. The simulator's fault names the cause: the address is so many bytes
/// past the buffer the dispatch's arguments point at, and the grid (groups x block) is larger
/// than that buffer.
fn work_group_counts_given_as_work_items(mode: SimMode) {
    let r = rig(mode, 1, SHORT);
    let dev = Device::open(&r.kfd, 0).unwrap();
    let t = dev.target_name();
    let gs = Program::load(&dev, kernels::dispatch_ptr(&t).unwrap(), "grid_size").unwrap();
    let out = dev.alloc(4096, BufferKind::Gtt).unwrap();
    let args = out.va().get();
    let _bug = arm(Bug::GroupsAsWorkItems);
    // SAFETY: grid_size writes one u32 per work-item (1024 without the bug) into `out` (1024
    // u32s), alive past the wait.
    let res =
        unsafe { gs.launch_pod(&args, [16, 1, 1], [64, 1, 1]) }.and_then(|_| dev.synchronize());
    let (_rep, text) = fault_of(res);
    assert!(
        text.contains("cause: a grid larger than the buffers it indexes: the address is 0x")
            && text.contains(&format!(
                "bytes past the end of the 0x1000-byte buffer at {:#x} that the dispatch's arguments point at, and the grid is [1024, 1, 1] work-groups x [64, 1, 1] = 65536 work-items",
                out.va().get()
            )),
        "{text}"
    );
}

/// The host-race cases run deterministically: there the engines run only while the host
/// waits, so the GPU operation is always still queued at the racing access (a threaded engine
/// may finish it first, and then the race is invisible, as on hardware that happens to win).
mod host_races {
    #[test]
    fn copy_out_reads_before_its_copy_completed() {
        super::copy_out_reads_before_its_copy_completed(super::SimMode::Deterministic);
    }
    #[test]
    fn copy_in_reuses_staging_before_its_copy_completed() {
        super::copy_in_reuses_staging_before_its_copy_completed(super::SimMode::Deterministic);
    }
    #[test]
    fn copy_out_reads_the_other_staging_buffer() {
        super::copy_out_reads_the_other_staging_buffer(super::SimMode::Deterministic);
    }
    #[test]
    fn kernargs_reused_before_the_launch_completed() {
        super::kernargs_reused_before_the_launch_completed(super::SimMode::Deterministic);
    }
}

hcq_common::both_modes!(
    graph_replay_with_the_previous_replays_dispatch_packet,
    graph_replay_with_the_previous_replays_values,
    copies_in_and_out_without_their_timeline_wait,
    kernarg_and_dispatch_pointers_swapped,
    work_group_counts_given_as_work_items,
    graph_replay_without_its_barrier,
    hidden_grid_dims_written_as_one,
    hidden_group_size_y_from_x,
    launch_without_its_hdp_flush,
    device_copy_without_its_hdp_flush,
    device_copy_of_vram_the_gpu_never_read,
    copy_without_its_timeline_wait,
    wait_for_the_submissions_own_value,
    sdma_packet_split_at_the_ring_end,
    short_scratch_buffer,
);
