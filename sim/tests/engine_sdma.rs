//! SDMA engine: every packet, POLL_REGMEM blocking, IB, ring wrap with padding, faults.

mod engine_common;
use engine_common::*;
use hcq_core::addr::GpuVa;
use hcq_core::arch::GFX11;
use hcq_core::sdma::{self, Indirect, IndirectHeader};
use hcq_sim::engine::{QueueFaultKind, QueueKind, QueueState, SimMode, Site};

#[test]
fn copy_fill_write_fence_trap_timestamp_gcr_nop() {
    let mut rig = Rig::new(SimMode::Deterministic);
    let mut q = rig.queue(0, QueueKind::Sdma, 4096);
    let src = DATA_VA + 0x1000;
    let dst = DATA_VA + 0x2000;
    let words: Vec<u32> = (0..300).map(|i| i * 3 + 1).collect();
    rig.write_words(src, &words);
    let mut s = pm4(|b| sdma::copy(b, &GFX11, GpuVa(dst), GpuVa(src), 1200));
    s.extend(pm4(|b| {
        sdma::const_fill(b, GpuVa(DATA_VA + 0x3000), 0xabcd_0123, 64)
    }));
    s.extend(pm4(|b| sdma::write(b, GpuVa(DATA_VA + 0x3100), &[5, 6, 7])));
    s.extend(pm4(|b| sdma::nop(b, 3)));
    s.extend(pm4(|b| sdma::hdp_flush(b, &GFX11, 1)));
    let sg = sig(0x4000, Some(12));
    s.extend(pm4(|b| sdma::timestamp(b, &sg)));
    s.extend(pm4(|b| sdma::signal(b, &GFX11, &sg, 0x55)));
    rig.submit(&mut q, &s);
    rig.engines.run_until_idle();
    assert_eq!(rig.engines.queue(q.id).unwrap().state, QueueState::Idle);
    for i in 0..300u64 {
        assert_eq!(rig.r32(dst + i * 4), (i as u32) * 3 + 1);
    }
    assert_eq!(rig.r32(dst + 1200), 0, "exactly 1200 bytes");
    for i in 0..16 {
        assert_eq!(rig.r32(DATA_VA + 0x3000 + i * 4), 0xabcd_0123);
    }
    assert_eq!(rig.r32(DATA_VA + 0x3040), 0);
    assert_eq!(
        [
            rig.r32(DATA_VA + 0x3100),
            rig.r32(DATA_VA + 0x3104),
            rig.r32(DATA_VA + 0x3108)
        ],
        [5, 6, 7]
    );
    // Timestamp: virtual clock = packets before it (GCR, COPY, GCR, FILL, WRITE, NOP, POLL).
    assert_eq!(rig.r64(sg.start_ts_addr()), 7);
    assert_eq!(rig.r32(sg.value_addr()), 0x55);
    assert_eq!(rig.r32(sg.event_mailbox_ptr), 12);
    assert_eq!(rig.gpus[0].events().interrupts, vec![12]);
    assert_eq!(rig.rptr(&q), s.len() as u64 * 4, "SDMA rptr counts bytes");
}

#[test]
fn overlapping_copy_is_a_memmove() {
    let mut rig = Rig::new(SimMode::Deterministic);
    let mut q = rig.queue(0, QueueKind::Sdma, 4096);
    let base = DATA_VA + 0x1000;
    let words: Vec<u32> = (0..64).collect();
    rig.write_words(base, &words);
    rig.submit(
        &mut q,
        &pm4(|b| sdma::copy(b, &GFX11, GpuVa(base + 16), GpuVa(base), 128)),
    );
    rig.engines.run_until_idle();
    for i in 0..32u64 {
        assert_eq!(rig.r32(base + 16 + i * 4), i as u32);
    }
}

#[test]
fn poll_regmem_blocks_until_memory_holds() {
    let mut rig = Rig::new(SimMode::Deterministic);
    let mut q = rig.queue(0, QueueKind::Sdma, 4096);
    let w = sig(0x100, None);
    let d = sig(0x140, None);
    let mut s = pm4(|b| sdma::wait(b, &w, 3));
    s.extend(pm4(|b| sdma::signal(b, &GFX11, &d, 1)));
    rig.submit(&mut q, &s);
    rig.engines.run_until_idle();
    let QueueState::Waiting(wi) = rig.engines.queue(q.id).unwrap().state else {
        panic!()
    };
    assert_eq!((wi.addr, wi.reference, wi.seen), (w.value_addr(), 3, 0));
    assert_eq!(rig.r32(d.value_addr()), 0);
    assert_eq!(rig.rptr(&q), 0);
    rig.w32(w.value_addr(), 3);
    rig.engines.run_until_idle();
    assert_eq!(rig.r32(d.value_addr()), 1);
    assert_eq!(rig.rptr(&q), 40);
}

#[test]
fn indirect_runs_an_ib_and_does_not_nest() {
    let mut rig = Rig::new(SimMode::Deterministic);
    let mut q = rig.queue(0, QueueKind::Sdma, 4096);
    let ib = DATA_VA + 0x6000;
    let body = pm4(|b| sdma::signal(b, &GFX11, &sig(0x200, None), 8));
    rig.write_words(ib, &body);
    let ind = |addr, size_dwords| {
        pm4(|b| {
            sdma::indirect(
                b,
                &Indirect {
                    header: IndirectHeader::zeroed(),
                    ib: GpuVa(addr),
                    size_dwords,
                    csa: GpuVa(0),
                },
            )
        })
    };
    // Two NOPs first: a ring INDIRECT must end on an 8-dword boundary.
    let padded = |v: Vec<u32>| [vec![0, 0], v].concat();
    rig.submit(&mut q, &padded(ind(ib, 4)));
    rig.engines.run_until_idle();
    assert_eq!(rig.r32(DATA_VA + 0x208), 8);
    assert_eq!(rig.rptr(&q), 32);
    let t = rig.engines.trace();
    assert!(matches!(t[3].site, Site::Ib { base, index: 0, depth: 1 } if base == ib));
    // Nested: fault. Misaligned: fault.
    let ib2 = DATA_VA + 0x7000;
    rig.write_words(ib2, &ind(ib, 4));
    rig.submit(&mut q, &padded(ind(ib2, 6)));
    let mut q2 = rig.queue(0, QueueKind::Sdma, 4096);
    rig.submit(&mut q2, &padded(ind(ib + 4, 4)));
    rig.engines.run_until_idle();
    for (q, want) in [(&q, "do not nest"), (&q2, "not 32-byte aligned")] {
        let QueueState::Faulted(f) = rig.engines.queue(q.id).unwrap().state else {
            panic!()
        };
        assert!(f.message.contains(want), "{}", f.message);
    }
}

/// A ring INDIRECT must end at a dword = 7 mod 8 (Linux pads `(2 - wptr) & 7` NOPs before
/// it); one starting at any of the other residues faults the queue, and the IB does not run.
#[test]
fn ring_indirect_must_end_on_an_8_dword_boundary() {
    let ib = DATA_VA + 0x6000;
    let body = pm4(|b| sdma::signal(b, &GFX11, &sig(0x200, None), 9));
    let ind = pm4(|b| {
        sdma::indirect(
            b,
            &Indirect {
                header: IndirectHeader::zeroed(),
                ib: GpuVa(ib),
                size_dwords: 4,
                csa: GpuVa(0),
            },
        )
    });
    for nops in 0..8u32 {
        let mut rig = Rig::new(SimMode::Deterministic);
        let mut q = rig.queue(0, QueueKind::Sdma, 4096);
        rig.write_words(ib, &body);
        let mut s = vec![0u32; nops as usize];
        s.extend(&ind);
        rig.submit(&mut q, &s);
        rig.engines.run_until_idle();
        let state = rig.engines.queue(q.id).unwrap().state.clone();
        if nops == 2 {
            assert_eq!(state, QueueState::Idle);
            assert_eq!(rig.r32(DATA_VA + 0x208), 9);
            assert_eq!(rig.rptr(&q), 32);
        } else {
            let QueueState::Faulted(f) = state else {
                panic!("{nops} NOPs: {state:?}")
            };
            let want = format!(
                "SDMA INDIRECT at ring dword {nops} ends at dword {}, not on an 8-dword boundary",
                nops + 5
            );
            assert!(f.message.contains(&want), "{}", f.message);
            assert_eq!(f.kind, QueueFaultKind::Hw);
            assert_eq!(rig.r32(DATA_VA + 0x208), 0, "the IB did not run");
            assert_eq!(rig.rptr(&q), u64::from(nops) * 4, "stopped at the INDIRECT");
        }
    }
}

/// Long runs through a small ring, submitted with core's producer (zero padding at the end).
#[test]
fn ring_wraps_with_nop_padding() {
    use hcq_core::ring::{Producer, RingLayout, RingPtr, Sdma as KSdma};
    use hcq_core::sync::atomic::{AtomicU64, Ordering};
    let mut rig = Rig::new(SimMode::Deterministic);
    let mut q = rig.queue(0, QueueKind::Sdma, 1024);
    let mut shadow = vec![0u32; 256];
    let (r, w) = (AtomicU64::new(0), AtomicU64::new(0));
    let mut p = Producer::<KSdma>::new(RingLayout::new(1024).unwrap(), RingPtr::new(0)).unwrap();
    let s = sig(0x300, None);
    let mut padded = 0;
    for i in 1..=400u32 {
        let mut b = pm4(|x| sdma::wait(x, &s, i - 1));
        let lens = [6usize, 4, 4 + (i as usize % 5)];
        b.extend(pm4(|x| sdma::signal(x, &GFX11, &s, i)));
        b.extend(pm4(|x| sdma::nop(x, lens[2])));
        r.store(rig.rptr(&q), Ordering::Release);
        let before = p.write_pointer().get();
        let db = p.submit_packets(&mut shadow[..], &r, &w, &b, lens).unwrap();
        if db.value() - before > b.len() as u64 * 4 {
            padded += 1;
        }
        for (k, d) in shadow.iter().enumerate() {
            q.ring.write(k as u64 * 4, &d.to_le_bytes());
        }
        q.wptr = db.value();
        rig.doorbell(&q);
        rig.engines.run_until_idle();
        assert_eq!(rig.r32(s.value_addr()), i);
        assert_eq!(rig.rptr(&q), q.wptr);
    }
    assert!(padded > 20, "{padded}");
}

#[test]
fn packet_crossing_the_ring_end_faults() {
    let mut rig = Rig::new(SimMode::Deterministic);
    let mut q = rig.queue(0, QueueKind::Sdma, 1024);
    rig.submit(&mut q, &pm4(|b| sdma::nop(b, 254)));
    rig.engines.run_until_idle();
    assert_eq!(rig.rptr(&q), 1016);
    // A 4-dword FENCE at dword 254 of 256.
    rig.submit(
        &mut q,
        &pm4(|b| sdma::signal(b, &GFX11, &sig(0x300, None), 1)),
    );
    rig.engines.run_until_idle();
    let QueueState::Faulted(f) = rig.engines.queue(q.id).unwrap().state else {
        panic!()
    };
    assert_eq!(f.kind, QueueFaultKind::Hw);
    assert_eq!(f.site, Site::Ring(1016));
    assert!(
        f.message.contains("crosses the end of the ring"),
        "{}",
        f.message
    );
    assert_eq!(rig.r32(DATA_VA + 0x308), 0);
    assert_eq!(rig.gpus[0].events().hw.len(), 1);
}

#[test]
fn unknown_and_malformed_sdma_packets_fault() {
    let mut rig = Rig::new(SimMode::Deterministic);
    let cases: [(&[u32], &str); 5] = [
        (&[0x0000_0009, 0, 0, 0], "unknown opcode 0x9"),
        (
            &[0x0000_0101, 0, 0, 0, 0, 0, 0],
            "unknown opcode 0x1 (sub-op 0x1)",
        ),
        (&[0x0000_0008, 0x1000, 0, 0, 0, 0], "register POLL_REGMEM"),
        (&[0x0000_000b, DATA_VA as u32, 0, 0, 3], "FILLSIZE 0"),
        (
            &[0x0000_0005, (DATA_VA + 2) as u32, 0, 1],
            "not dword aligned",
        ),
    ];
    let mut qs = Vec::new();
    for (pkt, _) in cases {
        let mut q = rig.queue(0, QueueKind::Sdma, 1024);
        rig.submit(&mut q, pkt);
        qs.push(q);
    }
    rig.engines.run_until_idle();
    for (q, (_, want)) in qs.iter().zip(cases) {
        let QueueState::Faulted(f) = rig.engines.queue(q.id).unwrap().state else {
            panic!("{want}")
        };
        assert!(f.message.contains(want), "{} vs {want}", f.message);
    }
    // Copy from unmapped memory: VM fault with the address.
    let mut q = rig.queue(0, QueueKind::Sdma, 1024);
    rig.submit(
        &mut q,
        &pm4(|b| sdma::copy(b, &GFX11, GpuVa(DATA_VA), GpuVa(0x5000_0010), 64)),
    );
    rig.engines.run_until_idle();
    let QueueState::Faulted(f) = rig.engines.queue(q.id).unwrap().state else {
        panic!()
    };
    assert!(matches!(f.kind, QueueFaultKind::Vm(v) if v.va == 0x5000_0010));
    assert_eq!(rig.gpus[0].events().memory[0].va, 0x5000_0000);
}
