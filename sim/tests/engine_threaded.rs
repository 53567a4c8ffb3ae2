//! Threaded mode on the standalone bus: the engine thread polls doorbells while the host races
//! it through a small ring; hang injection; clean shutdown on drop. And host threads under a
//! dispatch: deterministic mode gives the same memory, trace, clock and faults whatever
//! `KernelRegistry::set_threads` says.

mod engine_common;
use engine_common::*;
use hcq_core::addr::GpuVa;
use hcq_core::arch::GFX11;
use hcq_core::codeobj::CodeObject;
use hcq_core::pm4;
use hcq_sim::engine::{DispatchMode, QueueKind, QueueState, SimMode};

fn spin_until(mut f: impl FnMut() -> bool) {
    let mut n = 0u64;
    while !f() {
        n += 1;
        assert!(n < 1 << 34, "the engine thread made no progress");
        core::hint::spin_loop();
    }
}

#[test]
fn host_races_the_engine_thread_through_a_small_ring() {
    let mut rig = Rig::new(SimMode::Threaded);
    let mut q = rig.queue(0, QueueKind::Compute, 1024);
    let s = sig(0x100, None);
    for i in 1..=3000u32 {
        let pkt = pm4(|b| pm4::signal(b, &GFX11, &s, u64::from(i)));
        spin_until(|| q.wptr + pkt.len() as u64 - rig.rptr(&q) <= 256);
        rig.submit(&mut q, &pkt);
        rig.engines.kick();
    }
    spin_until(|| rig.rptr(&q) == q.wptr);
    assert_eq!(rig.r32(s.value_addr()), 3000);
    assert_eq!(rig.engines.queue(q.id).unwrap().executed, 3000);
    assert!(rig.engines.gpu_clock() > 0, "real-time clock");
}

#[test]
fn hung_queue_resumes_and_other_queues_run_on() {
    let mut rig = Rig::new(SimMode::Threaded);
    let mut a = rig.queue(0, QueueKind::Compute, 4096);
    let mut b = rig.queue(0, QueueKind::Sdma, 4096);
    rig.engines.hang(a.id, true).unwrap();
    let sa = sig(0x200, None);
    let sb = sig(0x240, None);
    rig.submit(&mut a, &pm4(|x| pm4::signal(x, &GFX11, &sa, 1)));
    rig.submit(&mut b, &pm4(|x| hcq_core::sdma::signal(x, &GFX11, &sb, 1)));
    spin_until(|| rig.r32(sb.value_addr()) == 1);
    let info = rig.engines.queue(a.id).unwrap();
    assert!(info.hung);
    assert_eq!(info.executed, 0);
    assert_eq!(info.state, QueueState::Idle);
    rig.engines.hang(a.id, false).unwrap();
    spin_until(|| rig.r32(sa.value_addr()) == 1);
    // A blocked wait is released by a host store, as on hardware.
    let gate = sig(0x280, None);
    let mut p = pm4(|x| pm4::wait(x, &gate, 7));
    p.extend(pm4(|x| pm4::signal(x, &GFX11, &sa, 2)));
    rig.submit(&mut a, &p);
    spin_until(|| {
        matches!(
            rig.engines.queue(a.id).unwrap().state,
            QueueState::Waiting(_)
        )
    });
    rig.w32(gate.value_addr(), 7);
    spin_until(|| rig.r32(sa.value_addr()) == 2);
    drop(rig); // joins the engine thread
}

/// What a deterministic run of vector_add over 512 workgroups left.
#[derive(Debug, PartialEq)]
struct Run {
    data: Vec<u8>,
    trace: String,
    state: QueueState,
    clock: u64,
}

/// vector_add (c = a + b over 512 x 64 elements, c at `c`) then a signal, on a deterministic
/// rig with asynchronous dispatch (the race detector) under `seed`, the dispatch on `threads`
/// host threads.
fn vector_add(threads: usize, c: u64, seed: u64) -> Run {
    const GROUPS: u32 = 512;
    const N: u32 = GROUPS * 64;
    let (a, b, args) = (DATA_VA + 0x1_0000, DATA_VA + 0x3_0000, DATA_VA + 0x8_0000);
    let mut rig = Rig::new(SimMode::Deterministic);
    rig.engines.set_dispatch(DispatchMode::Async, seed, false);
    rig.engines.with_kernels(|k| k.set_threads(threads));
    let co = std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../core/tests/fixtures/kernels/vector_add-gfx1100.co"),
    )
    .unwrap();
    let obj = CodeObject::parse(&co).unwrap();
    let mut image = vec![0u8; obj.image_size() as usize];
    obj.load_into(&mut image).unwrap();
    assert!(rig.code.write(0, &image));
    let k = obj.kernel("vector_add").unwrap();
    let prog = pm4::Program {
        prog_addr: GpuVa(CODE_VA + k.entry_offset),
        scratch_addr: GpuVa(0),
        tmpring_size: 0,
        rsrc1: k.descriptor.compute_pgm_rsrc1,
        rsrc2: k.descriptor.compute_pgm_rsrc2 | k.lds_granules() << 15,
        rsrc3: k.descriptor.compute_pgm_rsrc3,
        dispatch: None,
        private_segment_buffer: None,
        flat_scratch_init: None,
    };
    let words: Vec<u32> = (0..2 * N).map(|i| i.wrapping_mul(0x0101_0101)).collect();
    rig.write_words(a, &words);
    rig.write_words(
        args,
        &[a as u32, 0, b as u32, 0, c as u32, (c >> 32) as u32, N],
    );
    let mut q = rig.queue(0, QueueKind::Compute, 4096);
    let mut s = pm4(|x| pm4::exec(x, &GFX11, &prog, GpuVa(args), [GROUPS, 1, 1], [64, 1, 1]));
    s.extend(pm4(|x| pm4::signal(x, &GFX11, &sig(0x100, None), 1)));
    rig.submit(&mut q, &s);
    rig.engines.run_until_idle();
    let mut data = vec![0u8; DATA_LEN as usize];
    assert!(rig.data.read(0, &mut data));
    Run {
        data,
        trace: rig.engines.trace_text(),
        state: rig.engines.queue(q.id).unwrap().state,
        clock: rig.engines.gpu_clock(),
    }
}

#[test]
fn deterministic_runs_do_not_depend_on_the_dispatch_thread_count() {
    let c = DATA_VA + 0x5_0000;
    for seed in [0, 7] {
        let one = vector_add(1, c, seed);
        assert!(
            !matches!(one.state, QueueState::Faulted(_)),
            "{:?}",
            one.state
        );
        // c[0] = a[0] + b[0] = 0 + (64 * 512) * 0x0101_0101.
        assert_eq!(
            one.data[0x5_0000..][..4],
            (64 * 512u32).wrapping_mul(0x0101_0101).to_le_bytes(),
        );
        for threads in [2, 4] {
            assert!(
                vector_add(threads, c, seed) == one,
                "seed {seed}, {threads} threads: the same memory, trace, state and clock"
            );
        }
    }
    // c runs off the data mapping from element 64 * 300 + 9 on: the same fault (the lowest
    // workgroup's) on every thread count.
    let c = DATA_VA + DATA_LEN - 4 * (64 * 300 + 9);
    let one = vector_add(1, c, 3);
    let QueueState::Faulted(f) = &one.state else {
        panic!("{:?}", one.state)
    };
    assert!(f.message.contains("workgroup [300, 0, 0]"), "{}", f.message);
    for threads in [2, 4] {
        let n = vector_add(threads, c, 3);
        assert_eq!(n.state, one.state, "{threads} threads");
        assert_eq!(n.trace, one.trace, "{threads} threads");
    }
}
