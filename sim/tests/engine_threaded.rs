//! Threaded mode on the standalone bus: the engine thread polls doorbells while the host races
//! it through a small ring; hang injection; clean shutdown on drop.

mod engine_common;
use engine_common::*;
use hcq_core::arch::GFX11;
use hcq_core::pm4;
use hcq_sim::engine::{QueueKind, QueueState, SimMode};

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
