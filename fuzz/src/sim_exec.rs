//! Harness for the `sim_exec` fuzz target: arbitrary command streams into a simulated queue.
//!
//! The simulator must fault or complete, never panic, never loop without bound, and never touch
//! memory outside what was mapped to the GPU: the harness checks that an unmapped "canary"
//! region and the read-only code region are unchanged, that the read pointer never passes the
//! write pointer, and that every fault is reported as exactly one exception event.
//!
//! Input: `data[0]` bit 0 picks PM4 or SDMA, bit 1 raw or structured mode, bits 2-3 a
//! fault injection; the rest is either raw dwords (raw mode) or a list of small ops that the
//! core encoders turn into plausible packets aimed at mapped and unmapped addresses
//! (structured mode). The stream is submitted through a 1 KiB ring in pieces, with engine
//! rounds in between (so it wraps), and blocked waits are released by the "host".

use hcq_core::addr::GpuVa;
use hcq_core::arch::GFX11;
use hcq_core::pm4;
use hcq_core::sdma;
use hcq_core::signal::SignalRef;
use hcq_sim::engine::membus::{MemBus, Perms, Region};
use hcq_sim::engine::{
    Engines, GpuBus, InterruptPolicy, QueueDesc, QueueId, QueueKind, QueueState, SimMode,
};
use std::sync::Arc;

const RING_VA: u64 = 0x10_0000;
const RING_BYTES: u64 = 1024;
const DATA_VA: u64 = 0x20_0000;
const DATA_LEN: u64 = 0x1_0000;
const CODE_VA: u64 = 0x40_0000;
const CODE_LEN: u64 = 0x4000;
const PTR_VA: u64 = 0x80_0000;
/// A region that exists but is mapped nowhere: it must stay zero.
const CANARY_LEN: u64 = 0x1000;

/// Addresses structured ops aim at.
const TARGETS: [u64; 8] = [
    DATA_VA,
    DATA_VA + 0x100,
    DATA_VA + DATA_LEN - 8,
    DATA_VA + DATA_LEN - 2,
    CODE_VA,
    RING_VA,
    0,
    0xdead_b000,
];

fn target(b: u8) -> u64 {
    TARGETS[usize::from(b) % TARGETS.len()].wrapping_add(u64::from(b >> 3) * 8)
}

/// Turns op bytes into a packet stream with core's encoders.
fn structured(kind: QueueKind, ops: &[u8]) -> Vec<u32> {
    let mut out = Vec::new();
    let mut buf = [0u32; 128];
    for op in ops.chunks(4) {
        let [o, a, b, c] = [0, 1, 2, 3].map(|i| op.get(i).copied().unwrap_or(0));
        let s = SignalRef {
            addr: target(a),
            event_mailbox_ptr: if c & 1 != 0 { target(b) } else { 0 },
            event_id: u32::from(c),
        };
        let v = u32::from(b) << 8 | u32::from(c);
        let r = match (kind, o % 10) {
            (QueueKind::Compute, 0) => pm4::signal(&mut buf, &GFX11, &s, u64::from(v)),
            (QueueKind::Compute, 1) => pm4::wait(&mut buf, &s, v),
            (QueueKind::Compute, 2) => pm4::memory_barrier(&mut buf, &GFX11),
            (QueueKind::Compute, 3) => pm4::timestamp(&mut buf, &GFX11, &s),
            (QueueKind::Compute, 4) => pm4::nop(&mut buf, usize::from(b % 40) + 1),
            (QueueKind::Compute, 5) => {
                pm4::indirect_buffer(&mut buf, GpuVa(target(a)), u32::from(b))
            }
            (QueueKind::Compute, 6) => pm4::set_sh_reg(&mut buf, u32::from(a) * 4, &[v; 3]),
            (QueueKind::Compute, 7) => {
                let prog = pm4::Program {
                    prog_addr: GpuVa(target(a) & !0xff),
                    rsrc2: u32::from(b),
                    rsrc3: 0,
                    ..pm4::Program::default()
                };
                pm4::exec(
                    &mut buf,
                    &GFX11,
                    &prog,
                    GpuVa(target(c)),
                    [1, 1, 1],
                    [64, 1, 1],
                )
            }
            (QueueKind::Compute, 8) => pm4::write_data(
                &mut buf,
                pm4::WriteDataCntl::zeroed().with(pm4::WriteDataCntl::DST_SEL, u32::from(b % 6)),
                GpuVa(target(a)),
                &[v, v],
            ),
            (QueueKind::Compute | QueueKind::Aql, _) => {
                buf[0] = u32::from_le_bytes([o, a, b, c]);
                Ok(1)
            }
            (QueueKind::Sdma, 0) => sdma::signal(&mut buf, &GFX11, &s, v),
            (QueueKind::Sdma, 1) => sdma::wait(&mut buf, &s, v),
            (QueueKind::Sdma, 2) => sdma::copy(
                &mut buf,
                &GFX11,
                GpuVa(target(a)),
                GpuVa(target(b)),
                u64::from(c) * 9,
            ),
            (QueueKind::Sdma, 3) => sdma::timestamp(&mut buf, &s),
            (QueueKind::Sdma, 4) => sdma::nop(&mut buf, usize::from(b % 40) + 1),
            (QueueKind::Sdma, 5) => {
                sdma::const_fill(&mut buf, GpuVa(target(a)), v, u64::from(c) * 4 + 4)
            }
            (QueueKind::Sdma, 6) => sdma::write(&mut buf, GpuVa(target(a)), &[v; 3]),
            (QueueKind::Sdma, 7) => sdma::hdp_flush(&mut buf, &GFX11, 1),
            (QueueKind::Sdma, 8) => sdma::indirect(
                &mut buf,
                &sdma::Indirect {
                    ib: GpuVa(target(a) & !31),
                    size_dwords: u32::from(b),
                    ..sdma::Indirect::default()
                },
            ),
            (QueueKind::Sdma, _) => {
                buf[0] = u32::from_le_bytes([o, a, b, c]);
                Ok(1)
            }
        };
        if let Ok(n) = r {
            out.extend_from_slice(&buf[..n]);
        }
    }
    out
}

/// The harness.
pub fn run(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let kind = if mode & 1 == 0 {
        QueueKind::Compute
    } else {
        QueueKind::Sdma
    };
    let stream: Vec<u32> = if mode & 2 == 0 {
        rest.chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    } else {
        structured(kind, rest)
    };

    let bus = MemBus::new(7);
    let ring = Region::new(RING_BYTES.max(4096));
    let mem = Region::new(DATA_LEN);
    let code = Region::new(CODE_LEN);
    let ptrs = Region::new(4096);
    let canary = Region::new(CANARY_LEN);
    bus.map(RING_VA, 4096, &ring, Perms::RW).unwrap();
    bus.map(DATA_VA, DATA_LEN, &mem, Perms::RW).unwrap();
    bus.map(
        CODE_VA,
        CODE_LEN,
        &code,
        Perms {
            write: false,
            execute: true,
        },
    )
    .unwrap();
    bus.map(PTR_VA, 4096, &ptrs, Perms::RW).unwrap();
    // The code region holds a recognisable pattern that must survive.
    let pattern: Vec<u8> = (0..CODE_LEN).map(|i| (i * 7 + 3) as u8).collect();
    assert!(code.write(0, &pattern));

    let engines =
        Engines::new(SimMode::Deterministic).expect("deterministic engines start no thread");
    engines.set_budget(64);
    engines.set_trace_capacity(64);
    let desc = QueueDesc {
        kind,
        arch: &GFX11,
        gfx940: true,
        ring_base: RING_VA,
        ring_size: RING_BYTES,
        rptr_addr: PTR_VA,
        wptr_addr: PTR_VA + 8,
        doorbell_offset: 0,
        start: 0,
    };
    let q = QueueId(0);
    let b: Arc<dyn GpuBus> = bus.clone();
    engines.add_queue(q, desc, b).unwrap();
    match (mode >> 2) & 3 {
        1 => engines.fault_address(DATA_VA + 0x108),
        2 => engines
            .set_interrupts(q, InterruptPolicy::Delay(2))
            .unwrap(),
        3 => engines.stall_rptr(q, true).unwrap(),
        _ => {}
    }

    let upd: u64 = match kind {
        QueueKind::Compute | QueueKind::Aql => 1,
        QueueKind::Sdma => 4,
    };
    let size_dw = RING_BYTES / 4;
    let mut wptr = 0u64;
    let mut pos = 0usize;
    let mut rounds = 0;
    while rounds < 200 {
        rounds += 1;
        // Submit what fits.
        let rptr = bus.load_u64(PTR_VA).unwrap();
        assert!(rptr <= wptr, "rptr {rptr:#x} passed wptr {wptr:#x}");
        let free = size_dw - (wptr - rptr) / upd;
        let n = (stream.len() - pos).min(free as usize);
        for &d in &stream[pos..pos + n] {
            assert!(ring.write((wptr / upd % size_dw) * 4, &d.to_le_bytes()));
            wptr += upd;
        }
        pos += n;
        bus.ring_doorbell(0, wptr);
        for _ in 0..8 {
            if !engines.step() {
                break;
            }
        }
        let info = engines.queue(q).unwrap();
        assert!(info.rptr <= wptr);
        match info.state {
            QueueState::Faulted(f) => {
                let ev = bus.events();
                assert_eq!(ev.memory.len() + ev.hw.len(), 1, "{}", f.message);
                let _ = engines.trace_text();
                break;
            }
            QueueState::Waiting(w) => {
                // The host releases the wait if it can.
                let _ = bus.store_u32(w.addr, w.reference);
                let _ = bus.store_u32(
                    w.addr,
                    if w.function == 4 {
                        !w.reference
                    } else {
                        w.reference
                    },
                );
            }
            QueueState::Idle => {
                if pos == stream.len() && info.rptr == wptr {
                    break;
                }
                if n == 0 && (mode >> 2) & 3 == 3 {
                    engines.stall_rptr(q, false).unwrap();
                }
            }
        }
    }
    // Nothing outside GPU-mapped memory changed.
    let mut c = vec![0u8; CANARY_LEN as usize];
    assert!(canary.read(0, &mut c));
    assert!(c.iter().all(|&b| b == 0));
    let mut now = vec![0u8; CODE_LEN as usize];
    assert!(code.read(0, &mut now));
    assert_eq!(now, pattern, "the read-only code region was written");
    let _ = engines.trace_text();
}
