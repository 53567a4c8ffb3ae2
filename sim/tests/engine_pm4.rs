//! PM4 engine: every packet, blocking waits, IBs, ring wrap, faults, determinism.

mod engine_common;
use engine_common::*;
use hcq_core::addr::GpuVa;
use hcq_core::arch::{GFX9, GFX11};
use hcq_core::pm4::{self, IbControl, Pm4Header, WriteDataCntl};
use hcq_core::sel::{DataSel, IntSel};
use hcq_sim::engine::{QueueFaultKind, QueueKind, QueueState, SimMode, Site, VmFaultKind};

#[test]
fn release_mem_writes_32_64_and_clock_and_interrupts() {
    let mut rig = Rig::new(SimMode::Deterministic);
    let mut q = rig.queue(0, QueueKind::Compute, 4096);
    let a = DATA_VA + 0x100;
    let mut s = Vec::new();
    s.extend(pm4(|b| pm4::nop(b, 3)));
    // 32-bit: low half only.
    s.extend(pm4(|b| {
        pm4::release_mem(
            b,
            &pm4::release_packet(
                &GFX11,
                DataSel::Data32,
                IntSel::None,
                GpuVa(a),
                0x1_2345_6789,
                0,
                true,
            ),
        )
    }));
    s.extend(pm4(|b| {
        pm4::release_mem(
            b,
            &pm4::release_packet(
                &GFX11,
                DataSel::Data64,
                IntSel::None,
                GpuVa(a + 8),
                0xaabb_ccdd_0011_2233,
                0,
                true,
            ),
        )
    }));
    s.extend(pm4(|b| {
        pm4::release_mem(
            b,
            &pm4::release_packet(
                &GFX11,
                DataSel::GpuClock,
                IntSel::None,
                GpuVa(a + 16),
                0,
                0,
                false,
            ),
        )
    }));
    // Signal with a mailbox: value, then event id to the mailbox + interrupt.
    let sg = sig(0x200, Some(77));
    s.extend(pm4(|b| pm4::signal(b, &GFX11, &sg, 9)));
    rig.w32(a + 4, 0xffff_ffff);
    rig.submit(&mut q, &s);
    rig.engines.run_until_idle();
    assert_eq!(rig.r32(a), 0x2345_6789);
    assert_eq!(
        rig.r32(a + 4),
        0xffff_ffff,
        "a 32-bit release writes 4 bytes"
    );
    assert_eq!(rig.r64(a + 8), 0xaabb_ccdd_0011_2233);
    // Virtual clock: one tick per packet executed before (NOP, 2 releases).
    assert_eq!(rig.r64(a + 16), 3);
    assert_eq!(rig.r64(sg.value_addr()), 9);
    assert_eq!(rig.r64(sg.event_mailbox_ptr), 77);
    // The seed's value RELEASE_MEM also interrupts (INT_SEL 2, context 0), as on hardware.
    assert_eq!(rig.gpus[0].events().interrupts, vec![0, 77]);
    assert_eq!(rig.rptr(&q), s.len() as u64);
    let info = rig.engines.queue(q.id).unwrap();
    assert_eq!(info.state, QueueState::Idle);
    assert_eq!(info.executed, 6);
}

#[test]
fn wait_reg_mem_blocks_until_memory_holds_then_releases() {
    let mut rig = Rig::new(SimMode::Deterministic);
    let mut q = rig.queue(0, QueueKind::Compute, 4096);
    let mut other = rig.queue(0, QueueKind::Compute, 4096);
    let w = sig(0x400, None);
    let done = sig(0x440, None);
    let mut s = pm4(|b| pm4::wait(b, &w, 5));
    s.extend(pm4(|b| pm4::signal(b, &GFX11, &done, 1)));
    rig.submit(&mut q, &s);
    // Another queue keeps running while the first is blocked.
    let d2 = sig(0x480, None);
    rig.submit(&mut other, &pm4(|b| pm4::signal(b, &GFX11, &d2, 3)));
    rig.engines.run_until_idle();
    assert_eq!(rig.r32(done.value_addr()), 0);
    assert_eq!(rig.r32(d2.value_addr()), 3);
    match rig.engines.queue(q.id).unwrap().state {
        QueueState::Waiting(wi) => {
            assert_eq!(wi.addr, w.value_addr());
            assert_eq!(
                (wi.function, wi.reference, wi.mask, wi.seen),
                (5, 5, 0xffff_ffff, 0)
            );
        }
        s => panic!("expected Waiting, got {s:?}"),
    }
    assert_eq!(rig.rptr(&q), 0, "rptr stays on the blocked wait");
    rig.w32(w.value_addr(), 4);
    rig.engines.run_until_idle();
    assert_eq!(rig.r32(done.value_addr()), 0);
    rig.w32(w.value_addr(), 6);
    rig.engines.run_until_idle();
    assert_eq!(rig.r32(done.value_addr()), 1);
    assert_eq!(rig.engines.queue(q.id).unwrap().state, QueueState::Idle);
    assert_eq!(rig.rptr(&q), 15);
}

#[test]
fn barrier_hdp_flush_acquire_mem_event_write_set_regs_write_data() {
    let mut rig = Rig::new(SimMode::Deterministic);
    let mut q = rig.queue(0, QueueKind::Compute, 4096);
    let mut s = pm4(|b| pm4::memory_barrier(b, &GFX11));
    s.extend(pm4(|b| pm4::set_sh_reg(b, 0x240, &[1, 2, 3])));
    s.extend(pm4(|b| pm4::set_uconfig_reg(b, 0x200, &[7])));
    s.extend(pm4(|b| {
        pm4::event_write(
            b,
            pm4::EventWriteCntl::zeroed()
                .with(pm4::EventWriteCntl::EVENT_TYPE, 7)
                .with(pm4::EventWriteCntl::EVENT_INDEX, 4),
        )
    }));
    let ctl = WriteDataCntl::zeroed().with(WriteDataCntl::DST_SEL, 5);
    s.extend(pm4(|b| {
        pm4::write_data(b, ctl, GpuVa(DATA_VA + 0x600), &[10, 11, 12])
    }));
    let one = ctl.with(WriteDataCntl::WR_ONE_ADDR, 1);
    s.extend(pm4(|b| {
        pm4::write_data(b, one, GpuVa(DATA_VA + 0x700), &[20, 21])
    }));
    rig.submit(&mut q, &s);
    rig.engines.run_until_idle();
    assert_eq!(rig.engines.queue(q.id).unwrap().state, QueueState::Idle);
    assert_eq!(
        [
            rig.r32(DATA_VA + 0x600),
            rig.r32(DATA_VA + 0x604),
            rig.r32(DATA_VA + 0x608)
        ],
        [10, 11, 12]
    );
    assert_eq!(rig.r32(DATA_VA + 0x700), 21);
    assert_eq!(rig.r32(DATA_VA + 0x704), 0);
    let t = rig.engines.trace_text();
    assert!(t.contains("WAIT_REG_MEM"), "{t}");
    assert!(t.contains("ACQUIRE_MEM"), "{t}");
    assert!(t.contains("SET_SH_REG reg_offset=0x240"), "{t}");
    assert!(t.contains("EVENT_WRITE"), "{t}");
    assert_eq!(t.lines().count(), 7);
}

#[test]
fn gfx9_acquire_mem_on_gfx11_queue_faults() {
    let mut rig = Rig::new(SimMode::Deterministic);
    let mut q = rig.queue(0, QueueKind::Compute, 4096);
    let s = pm4(|b| pm4::invalidate_cache(b, &GFX9, 0, u64::MAX, pm4::CacheInvalidate::ALL));
    rig.submit(&mut q, &s);
    rig.engines.run_until_idle();
    let QueueState::Faulted(f) = rig.engines.queue(q.id).unwrap().state else {
        panic!("expected a fault")
    };
    assert_eq!(f.kind, QueueFaultKind::Hw);
    assert!(
        f.message.contains("ACQUIRE_MEM of 7 dwords"),
        "{}",
        f.message
    );
    assert_eq!(rig.gpus[0].events().hw.len(), 1);
}

#[test]
fn indirect_buffers_nest_two_levels_and_no_deeper() {
    let mut rig = Rig::new(SimMode::Deterministic);
    let mut q = rig.queue(0, QueueKind::Compute, 4096);
    let ib2 = DATA_VA + 0x2000;
    let ib1 = DATA_VA + 0x3000;
    let s2 = pm4(|b| pm4::signal(b, &GFX11, &sig(0x500, None), 2));
    rig.write_words(ib2, &s2);
    let mut s1 = pm4(|b| pm4::signal(b, &GFX11, &sig(0x540, None), 1));
    s1.extend(pm4(|b| {
        pm4::indirect_buffer(b, GpuVa(ib2), s2.len() as u32)
    }));
    s1.extend(pm4(|b| pm4::signal(b, &GFX11, &sig(0x580, None), 3)));
    rig.write_words(ib1, &s1);
    let ring = pm4(|b| pm4::indirect_buffer(b, GpuVa(ib1), s1.len() as u32));
    rig.submit(&mut q, &ring);
    rig.engines.run_until_idle();
    assert_eq!(rig.r32(DATA_VA + 0x548), 1);
    assert_eq!(rig.r32(DATA_VA + 0x508), 2);
    assert_eq!(rig.r32(DATA_VA + 0x588), 3);
    assert_eq!(rig.rptr(&q), 4);
    let tr = rig.engines.trace();
    assert!(matches!(tr[0].site, Site::Ring(0)));
    assert!(matches!(tr[2].site, Site::Ib { base, index: 8, depth: 1 } if base == ib1));
    assert!(matches!(tr[3].site, Site::Ib { base, index: 0, depth: 2 } if base == ib2));
    // A third level faults.
    let ib3 = DATA_VA + 0x4000;
    rig.write_words(ib3, &pm4(|b| pm4::nop(b, 1)));
    rig.write_words(ib2, &pm4(|b| pm4::indirect_buffer(b, GpuVa(ib3), 1)));
    rig.submit(&mut q, &ring);
    rig.engines.run_until_idle();
    let QueueState::Faulted(f) = rig.engines.queue(q.id).unwrap().state else {
        panic!("expected a fault")
    };
    assert!(f.message.contains("nested deeper than 2"), "{}", f.message);
}

#[test]
fn wait_inside_an_ib_blocks_and_resumes() {
    let mut rig = Rig::new(SimMode::Deterministic);
    let mut q = rig.queue(0, QueueKind::Compute, 4096);
    let ib = DATA_VA + 0x2000;
    let mut s = pm4(|b| pm4::wait(b, &sig(0x500, None), 1));
    s.extend(pm4(|b| pm4::signal(b, &GFX11, &sig(0x540, None), 7)));
    rig.write_words(ib, &s);
    rig.submit(
        &mut q,
        &pm4(|b| pm4::indirect_buffer(b, GpuVa(ib), s.len() as u32)),
    );
    rig.engines.run_until_idle();
    assert!(matches!(
        rig.engines.queue(q.id).unwrap().state,
        QueueState::Waiting(_)
    ));
    assert_eq!(rig.rptr(&q), 0);
    rig.w32(DATA_VA + 0x508, 1);
    rig.engines.run_until_idle();
    assert_eq!(rig.r32(DATA_VA + 0x548), 7);
    assert_eq!(rig.rptr(&q), 4);
}

/// Long runs through a tiny ring (256 dwords): packets of odd lengths cross the end.
#[test]
fn ring_wraps_with_packets_crossing_the_end() {
    let mut rig = Rig::new(SimMode::Deterministic);
    let mut q = rig.queue(0, QueueKind::Compute, 1024);
    let s = sig(0x600, None);
    let mut crossed = 0;
    for i in 1..=500u32 {
        let mut b = pm4(|b| pm4::wait(b, &s, i - 1));
        b.extend(pm4(|b| pm4::nop(b, (i % 7 + 1) as usize)));
        b.extend(pm4(|b| pm4::signal(b, &GFX11, &s, u64::from(i))));
        let start = q.wptr % 256;
        if start + b.len() as u64 > 256 {
            crossed += 1;
        }
        rig.submit(&mut q, &b);
        rig.engines.run_until_idle();
        assert_eq!(rig.r32(s.value_addr()), i);
        assert_eq!(rig.rptr(&q), q.wptr);
    }
    assert!(
        crossed > 20,
        "only {crossed} submissions crossed the ring end"
    );
    assert_eq!(rig.engines.queue(q.id).unwrap().state, QueueState::Idle);
    assert!(q.wptr > 10 * 256);
}

/// The producer of core::ring sees back-pressure while rptr write-back is stalled.
#[test]
fn stalled_rptr_write_back_fills_the_ring() {
    use hcq_core::ring::{Pm4 as KPm4, Producer, RingError, RingLayout, RingPtr};
    use hcq_core::sync::atomic::{AtomicU64, Ordering};
    let mut rig = Rig::new(SimMode::Deterministic);
    let mut q = rig.queue(0, QueueKind::Compute, 1024);
    let mut shadow = vec![0u32; 256];
    let (r, w) = (AtomicU64::new(0), AtomicU64::new(0));
    let mut p = Producer::<KPm4>::new(RingLayout::new(1024).unwrap(), RingPtr::new(0)).unwrap();
    rig.engines.stall_rptr(q.id, true).unwrap();
    let s = sig(0x600, None);
    let mut i = 0u32;
    let full = loop {
        i += 1;
        let pkt = pm4(|b| pm4::signal(b, &GFX11, &s, u64::from(i)));
        r.store(rig.rptr(&q), Ordering::Release);
        match p.submit(&mut shadow[..], &r, &w, &pkt) {
            Ok(db) => {
                for (k, d) in shadow.iter().enumerate() {
                    q.ring.write(k as u64 * 4, &d.to_le_bytes());
                }
                q.wptr = db.value();
                rig.doorbell(&q);
                rig.engines.run_until_idle();
            }
            Err(e) => break e,
        }
    };
    assert!(matches!(full, RingError::WouldOverrun { .. }), "{full:?}");
    assert_eq!(i, 33, "32 signals of 8 dwords fill 256 dwords");
    assert_eq!(
        rig.r32(s.value_addr()),
        32,
        "the engine executed everything"
    );
    assert_eq!(rig.rptr(&q), 0, "but wrote no rptr back");
    rig.engines.stall_rptr(q.id, false).unwrap();
    rig.engines.step();
    assert_eq!(rig.rptr(&q), 256);
    r.store(rig.rptr(&q), Ordering::Release);
    let pkt = pm4(|b| pm4::signal(b, &GFX11, &s, 99));
    assert!(p.submit(&mut shadow[..], &r, &w, &pkt).is_ok());
}

#[test]
fn unknown_opcode_faults_with_index_and_decoder_message() {
    let mut rig = Rig::new(SimMode::Deterministic);
    let mut q = rig.queue(0, QueueKind::Compute, 4096);
    let done = sig(0x700, None);
    let mut s = pm4(|b| pm4::nop(b, 2));
    // 0x1E (DMA_DATA_FILL_MULTI on gfx9): an opcode the simulated CP does not execute.
    // (PRED_EXEC, 0x23, is known: `sim/tests/xcc.rs`.)
    s.push(Pm4Header::packet3(0x1E, 1).raw());
    s.push(0);
    s.extend(pm4(|b| pm4::signal(b, &GFX11, &done, 1)));
    rig.submit(&mut q, &s);
    rig.engines.run_until_idle();
    let info = rig.engines.queue(q.id).unwrap();
    let QueueState::Faulted(f) = info.state else {
        panic!("{info:?}")
    };
    assert_eq!(f.kind, QueueFaultKind::Hw);
    assert_eq!(f.site, Site::Ring(2));
    assert!(
        f.message.contains("ring dword 0x2: unknown opcode 0x1e"),
        "{}",
        f.message
    );
    assert_eq!(
        rig.r32(done.value_addr()),
        0,
        "nothing after the fault runs"
    );
    let ev = rig.gpus[0].events();
    assert_eq!(ev.hw.len(), 1);
    assert_eq!(ev.hw[0].gpu_id, 0x1000);
    assert!(ev.memory.is_empty());
    // Not type 3, and a bad count, too.
    let mut q2 = rig.queue(0, QueueKind::Compute, 4096);
    rig.submit(&mut q2, &[0x8000_0000]);
    let mut q3 = rig.queue(0, QueueKind::Compute, 4096);
    rig.submit(&mut q3, &[0xC005_4900, 0, 0, 0, 0, 0, 0]);
    rig.engines.run_until_idle();
    for (q, want) in [(&q2, "not a PM4 type-3"), (&q3, "never has 6 body dwords")] {
        let QueueState::Faulted(f) = rig.engines.queue(q.id).unwrap().state else {
            panic!()
        };
        assert!(f.message.contains(want), "{}", f.message);
    }
}

#[test]
fn vm_fault_names_the_address_and_stops_the_queue() {
    let mut rig = Rig::new(SimMode::Deterministic);
    let mut q = rig.queue(0, QueueKind::Compute, 4096);
    let bad = 0xdead_b008u64;
    let mut s = pm4(|b| pm4::signal(b, &GFX11, &hcq_core::signal::SignalRef::new(bad - 8), 1));
    s.extend(pm4(|b| pm4::signal(b, &GFX11, &sig(0x700, None), 1)));
    rig.submit(&mut q, &s);
    rig.engines.run_until_idle();
    let QueueState::Faulted(f) = rig.engines.queue(q.id).unwrap().state else {
        panic!()
    };
    match f.kind {
        QueueFaultKind::Vm(v) => {
            assert_eq!(v.va, bad);
            assert_eq!(v.kind, VmFaultKind::NotPresent);
        }
        k => panic!("{k:?}"),
    }
    let ev = rig.gpus[0].events();
    assert_eq!(ev.memory.len(), 1);
    assert_eq!(ev.memory[0].va, 0xdead_b000);
    assert_eq!(ev.memory[0].gpu_id, 0x1000);
    assert_eq!(ev.memory[0].failure.not_present, 1);
    assert_eq!(
        ev.memory[0].failure.read_only, 1,
        "KFD's ReadOnly bit means 'was a write'"
    );
    assert_eq!(rig.r32(DATA_VA + 0x708), 0);
    // Reads fault too (WAIT_REG_MEM on an unmapped address), and an IB outside memory.
    let mut q2 = rig.queue(0, QueueKind::Compute, 4096);
    rig.submit(
        &mut q2,
        &pm4(|b| pm4::indirect_buffer(b, GpuVa(0x7000_0000), 16)),
    );
    rig.engines.run_until_idle();
    let QueueState::Faulted(f) = rig.engines.queue(q2.id).unwrap().state else {
        panic!()
    };
    assert!(matches!(f.kind, QueueFaultKind::Vm(v) if v.va == 0x7000_0000));
}

#[test]
fn injected_fault_address_and_hang() {
    let mut rig = Rig::new(SimMode::Deterministic);
    let mut q = rig.queue(0, QueueKind::Compute, 4096);
    let s = sig(0x800, None);
    rig.engines.hang(q.id, true).unwrap();
    rig.submit(&mut q, &pm4(|b| pm4::signal(b, &GFX11, &s, 1)));
    assert_eq!(rig.engines.run_until_idle(), 0);
    assert_eq!(rig.r32(s.value_addr()), 0);
    assert!(rig.engines.queue(q.id).unwrap().hung);
    rig.engines.hang(q.id, false).unwrap();
    rig.engines.run_until_idle();
    assert_eq!(rig.r32(s.value_addr()), 1);
    rig.engines.fault_address(s.value_addr() + 2);
    rig.submit(&mut q, &pm4(|b| pm4::signal(b, &GFX11, &s, 2)));
    rig.engines.run_until_idle();
    let QueueState::Faulted(f) = rig.engines.queue(q.id).unwrap().state else {
        panic!()
    };
    assert!(
        matches!(f.kind, QueueFaultKind::Vm(v) if v.va == s.value_addr() + 2 && v.kind == VmFaultKind::Injected)
    );
    assert_eq!(rig.r32(s.value_addr()), 1);
}

#[test]
fn interrupts_can_be_delayed_or_dropped() {
    use hcq_sim::engine::InterruptPolicy;
    let mut rig = Rig::new(SimMode::Deterministic);
    let mut q = rig.queue(0, QueueKind::Compute, 4096);
    let s = sig(0x900, Some(5));
    rig.engines
        .set_interrupts(q.id, InterruptPolicy::Delay(3))
        .unwrap();
    rig.submit(&mut q, &pm4(|b| pm4::signal(b, &GFX11, &s, 1)));
    rig.engines.step();
    assert!(rig.gpus[0].events().interrupts.is_empty());
    rig.engines.step();
    rig.engines.step();
    assert!(rig.gpus[0].events().interrupts.is_empty());
    rig.engines.step();
    assert_eq!(rig.gpus[0].events().interrupts, vec![0, 5]);
    rig.engines
        .set_interrupts(q.id, InterruptPolicy::Drop)
        .unwrap();
    rig.submit(&mut q, &pm4(|b| pm4::signal(b, &GFX11, &s, 2)));
    rig.engines.run_until_idle();
    assert_eq!(rig.gpus[0].events().interrupts, vec![0, 5]);
    assert_eq!(rig.r32(s.value_addr()), 2, "the write still happens");
    assert!(rig.engines.trace_text().contains("DROPPED"));
}

#[test]
fn bad_doorbell_and_malformed_fields_fault() {
    let mut rig = Rig::new(SimMode::Deterministic);
    let mut q = rig.queue(0, QueueKind::Compute, 1024);
    q.wptr = 257; // more than one ring ahead
    rig.doorbell(&q);
    rig.engines.run_until_idle();
    let QueueState::Faulted(f) = rig.engines.queue(q.id).unwrap().state else {
        panic!()
    };
    assert!(f.message.contains("not within one ring"), "{}", f.message);
    // IB without VALID.
    let mut q2 = rig.queue(0, QueueKind::Compute, 1024);
    let ib = pm4::IndirectBuffer {
        addr: GpuVa(DATA_VA),
        control: IbControl::zeroed().with(IbControl::IB_SIZE, 4),
    };
    rig.submit(&mut q2, &pm4(|b| pm4::indirect_buffer_raw(b, &ib)));
    // RELEASE_MEM misaligned 64-bit.
    let mut q3 = rig.queue(0, QueueKind::Compute, 1024);
    rig.submit(
        &mut q3,
        &pm4(|b| {
            pm4::release_mem(
                b,
                &pm4::release_packet(
                    &GFX11,
                    DataSel::Data64,
                    IntSel::None,
                    GpuVa(DATA_VA + 4),
                    1,
                    0,
                    false,
                ),
            )
        }),
    );
    rig.engines.run_until_idle();
    for (q, want) in [(&q2, "without VALID"), (&q3, "not 8-byte aligned")] {
        let QueueState::Faulted(f) = rig.engines.queue(q.id).unwrap().state else {
            panic!()
        };
        assert!(f.message.contains(want), "{}", f.message);
    }
    assert_eq!(rig.gpus[0].events().hw.len(), 3);
}

#[test]
fn same_scenario_gives_identical_traces() {
    let run = || {
        let mut rig = Rig::multi(SimMode::Deterministic, 2);
        let mut a = rig.queue(0, QueueKind::Compute, 1024);
        let mut b = rig.queue(1, QueueKind::Compute, 1024);
        let mut c = rig.queue(0, QueueKind::Sdma, 1024);
        let s = sig(0xa00, Some(3));
        for i in 1..40u32 {
            rig.submit(&mut a, &pm4(|x| pm4::wait(x, &sig(0xa40, None), i - 1)));
            rig.submit(&mut a, &pm4(|x| pm4::signal(x, &GFX11, &s, u64::from(i))));
            rig.submit(
                &mut b,
                &pm4(|x| pm4::signal(x, &GFX11, &sig(0xa40, None), u64::from(i))),
            );
            rig.submit(&mut b, &pm4(|x| pm4::timestamp(x, &GFX11, &s)));
            rig.submit(
                &mut c,
                &pm4(|x| hcq_core::sdma::timestamp(x, &sig(0xa80, None))),
            );
            rig.engines.step();
        }
        rig.engines.run_until_idle();
        (
            rig.engines.trace_text(),
            rig.r64(s.start_ts_addr()),
            rig.r32(s.value_addr()),
        )
    };
    let (t1, ts1, v1) = run();
    let (t2, ts2, v2) = run();
    assert_eq!(t1, t2);
    assert_eq!((ts1, v1), (ts2, v2));
    assert_eq!(v1, 39);
    assert!(t1.lines().count() > 200);
}

#[test]
fn packet_longer_than_the_ring_faults_and_a_partial_one_waits() {
    let mut rig = Rig::new(SimMode::Deterministic);
    let mut q = rig.queue(0, QueueKind::Compute, 1024);
    // The first 3 dwords of an 8-dword RELEASE_MEM: the engine waits for the rest.
    let full = pm4(|b| pm4::signal(b, &GFX11, &sig(0x100, None), 5));
    rig.submit(&mut q, &full[..3]);
    rig.engines.run_until_idle();
    assert_eq!(rig.engines.queue(q.id).unwrap().state, QueueState::Idle);
    assert_eq!(rig.rptr(&q), 0);
    rig.submit(&mut q, &full[3..]);
    rig.engines.run_until_idle();
    assert_eq!(rig.r32(DATA_VA + 0x108), 5);
    // A NOP claiming 1000 dwords in a 256-dword ring can never be published whole.
    rig.submit(&mut q, &[Pm4Header::packet3(0x10, 999).raw(), 0]);
    rig.engines.run_until_idle();
    let QueueState::Faulted(f) = rig.engines.queue(q.id).unwrap().state else {
        panic!()
    };
    assert!(f.message.contains("longer than the ring"), "{}", f.message);
}

/// RELEASE_MEM INT_SEL as the PM4 headers define it: 2 interrupts after the write, 3 writes
/// with no interrupt, 1 interrupts only and refuses a data write (its interrupt is not ordered
/// after the write, so a waiter could read the old value).
#[test]
fn release_mem_int_sel_follows_the_headers() {
    let mut rig = Rig::new(SimMode::Deterministic);
    let mut q = rig.queue(0, QueueKind::Compute, 4096);
    let a = DATA_VA + 0x300;
    let rel = |data_sel, int_sel, addr, data, ctx| {
        pm4(|b| {
            pm4::release_mem(
                b,
                &pm4::release_packet(&GFX11, data_sel, int_sel, GpuVa(addr), data, ctx, true),
            )
        })
    };
    let mut s = rel(DataSel::Data32, IntSel::InterruptAfterWrite, a, 5, 21);
    s.extend(rel(DataSel::Data32, IntSel::WriteConfirm, a + 4, 6, 22));
    s.extend(rel(DataSel::None, IntSel::Interrupt, a + 8, 0, 23));
    rig.submit(&mut q, &s);
    rig.engines.run_until_idle();
    assert_eq!((rig.r32(a), rig.r32(a + 4)), (5, 6));
    assert_eq!(rig.gpus[0].events().interrupts, vec![21, 23]);
    assert_eq!(rig.engines.queue(q.id).unwrap().state, QueueState::Idle);
    let mut q2 = rig.queue(0, QueueKind::Compute, 4096);
    rig.submit(
        &mut q2,
        &rel(DataSel::Data32, IntSel::Interrupt, a + 12, 7, 24),
    );
    rig.engines.run_until_idle();
    let QueueState::Faulted(f) = rig.engines.queue(q2.id).unwrap().state else {
        panic!("INT_SEL 1 with a data write must fault")
    };
    assert!(f.message.contains("INT_SEL 1"), "{}", f.message);
    assert_eq!(rig.r32(a + 12), 0, "nothing written");
    assert_eq!(rig.gpus[0].events().interrupts, vec![21, 23]);
}

/// A WAIT_REG_MEM on a gate at `g`, then `out[0] = 1` behind it: the CP blocks with the
/// WRITE_DATA fetched but not executed.
fn blocked_queue(rig: &mut Rig, g: &hcq_core::signal::SignalRef, out: u64) -> Q {
    let mut q = rig.queue(0, QueueKind::Compute, 1024);
    let ctl = WriteDataCntl::zeroed().with(WriteDataCntl::DST_SEL, 5);
    let mut dw = pm4(|b| pm4::wait(b, g, 1));
    dw.extend(pm4(|b| pm4::write_data(b, ctl, va(out), &[1])));
    rig.submit(&mut q, &dw);
    rig.engines.run_until_idle();
    assert!(matches!(
        rig.engines.queue(q.id).unwrap().state,
        QueueState::Waiting(_)
    ));
    q
}

#[test]
fn the_cp_executes_what_is_in_the_ring_when_the_doorbell_moves() {
    let mut rig = Rig::new(SimMode::Deterministic);
    let g = sig(0x100, None);
    let out = DATA_VA + 0x200;
    let mut q = blocked_queue(&mut rig, &g, out);
    // A producer rewrites the unexecuted WRITE_DATA's data in place (writing before it had
    // room), then publishes more: the CP runs the ring as it is now, not what it prefetched.
    let wait_dw = pm4(|b| pm4::wait(b, &g, 1)).len() as u64;
    let data_dw = q.wptr - 1;
    assert_eq!(data_dw, wait_dw + 4);
    q.ring.write(data_dw * 4, &2u32.to_le_bytes());
    let ctl = WriteDataCntl::zeroed().with(WriteDataCntl::DST_SEL, 5);
    rig.submit(&mut q, &pm4(|b| pm4::write_data(b, ctl, va(out + 4), &[3])));
    rig.w32(g.value_addr(), 1);
    rig.engines.run_until_idle();
    assert_eq!((rig.r32(out), rig.r32(out + 4)), (2, 3));
}

#[test]
fn a_doorbell_over_unexecuted_commands_is_a_ring_overrun() {
    let mut rig = Rig::new(SimMode::Deterministic);
    let g = sig(0x100, None);
    let out = DATA_VA + 0x200;
    let mut q = blocked_queue(&mut rig, &g, out);
    // 256 more dwords: the last ones land over the WAIT and the WRITE_DATA, unread.
    rig.submit(&mut q, &pm4(|b| pm4::nop(b, 256)));
    rig.engines.run_until_idle();
    let QueueState::Faulted(f) = rig.engines.queue(q.id).unwrap().state else {
        panic!("the overrun was not caught")
    };
    assert!(f.message.contains("ring overrun"), "{}", f.message);
    rig.w32(g.value_addr(), 1);
    rig.engines.run_until_idle();
    assert_eq!(rig.r32(out), 0, "nothing behind the overrun ran");
}
