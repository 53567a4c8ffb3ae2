//! The engines' numbers: the engines on a standalone bus ([`MemBus`]), without KFD.
//!
//! - PM4 throughput: a 1 MiB ring filled with 8192 units of wait (already satisfied) +
//!   signal (RELEASE_MEM with interrupt) + 17-dword NOP (32 dwords each); each pass rings the
//!   doorbell a quarter ring further and runs the deterministic engines until idle.
//! - SDMA copy bandwidth: one 4 MiB copy (GCR + COPY_LINEAR + GCR) per pass, deterministic.
//! - Round trip: the threaded engines; the host writes a RELEASE_MEM into the ring, rings the
//!   doorbell, kicks the engine thread and spins until the signal holds the new value.

use std::sync::Arc;
use std::time::Instant;

use hcq_core::addr::GpuVa;
use hcq_core::arch::GFX11;
use hcq_core::cmd::SdmaList;
use hcq_core::pm4;
use hcq_core::signal::SignalRef;
use hcq_sim::engine::membus::{MemBus, Perms, Region};
use hcq_sim::engine::{Engines, GpuBus, QueueDesc, QueueId, QueueKind, QueueState, SimMode};

use super::{EngineMetrics, WorkError, percentile, samples};

const DATA_VA: u64 = 0x20_0000;
const DATA_LEN: u64 = 0x1_0000;
const PTR_VA: u64 = 0x80_0000;
const RING_VA: u64 = 0x100_0000;
const PM4_RING_BYTES: u64 = 1 << 20;
const SDMA_RING_BYTES: u64 = 1 << 16;
const COPY_SRC_VA: u64 = 0x1000_0000;
const COPY_DST_VA: u64 = 0x2000_0000;
/// Bytes of the SDMA copy timed per pass (one 4 MiB COPY_LINEAR between two GCRs: a few ms).
pub const SDMA_COPY_BYTES: u64 = 4 << 20;
/// Dwords of one PM4 unit (wait 7 + signal 8 + NOP 17).
const UNIT_DWORDS: usize = 32;

fn err(what: &'static str) -> WorkError {
    WorkError::Unexpected(what)
}

/// One GPU with a data page, a pointer page and one queue.
struct Rig {
    engines: Engines,
    bus: Arc<MemBus>,
    ring_bytes: u64,
    rptr_va: u64,
    /// Write pointer (queue units).
    wptr: u64,
    unit: u64,
}

impl Rig {
    fn new(mode: SimMode, kind: QueueKind, ring_bytes: u64) -> Result<Self, WorkError> {
        let bus = MemBus::new(1);
        let data = Region::new(DATA_LEN);
        let ptrs = Region::new(0x1000);
        let ring = Region::new(ring_bytes);
        bus.map(DATA_VA, DATA_LEN, &data, Perms::RW)
            .map_err(|_| err("sim: map data"))?;
        bus.map(PTR_VA, 0x1000, &ptrs, Perms::RW)
            .map_err(|_| err("sim: map pointers"))?;
        bus.map(RING_VA, ring_bytes, &ring, Perms::RW)
            .map_err(|_| err("sim: map ring"))?;
        let engines = Engines::new(mode).map_err(|e| WorkError::Sim(format!("sim: {e}")))?;
        let desc = QueueDesc {
            kind,
            arch: &GFX11,
            gfx940: true,
            ring_base: RING_VA,
            ring_size: ring_bytes,
            rptr_addr: PTR_VA,
            wptr_addr: PTR_VA + 8,
            doorbell_offset: 0,
            start: 0,
        };
        let dynbus: Arc<dyn GpuBus> = bus.clone();
        engines
            .add_queue(QueueId(0), desc, dynbus)
            .map_err(|_| err("sim: add queue"))?;
        Ok(Self {
            engines,
            bus,
            ring_bytes,
            rptr_va: PTR_VA,
            wptr: 0,
            unit: match kind {
                QueueKind::Compute | QueueKind::Aql => 1,
                QueueKind::Sdma => 4,
            },
        })
    }

    /// Writes `dwords` at the write pointer (no wrap inside: callers keep packets whole).
    fn write(&mut self, dwords: &[u32]) -> Result<(), WorkError> {
        let off = (self.wptr * 4 / self.unit) % self.ring_bytes;
        self.bus
            .write(RING_VA + off, bytemuck::cast_slice(dwords))
            .map_err(|_| err("sim: ring write"))?;
        // CAST: usize -> u64 widens.
        self.wptr += dwords.len() as u64 * self.unit;
        Ok(())
    }

    fn doorbell(&self) -> Result<(), WorkError> {
        if self.bus.ring_doorbell(0, self.wptr) {
            Ok(())
        } else {
            Err(err("sim: doorbell"))
        }
    }

    fn rptr(&self) -> u64 {
        self.bus.load_u64(self.rptr_va).unwrap_or(0)
    }

    fn healthy(&self) -> Result<(), WorkError> {
        match self.engines.queue(QueueId(0)).map(|q| q.state) {
            Some(QueueState::Faulted(f)) => Err(WorkError::Sim(f.message)),
            Some(_) => Ok(()),
            None => Err(err("sim: the queue is gone")),
        }
    }
}

fn sig(off: u64) -> SignalRef {
    SignalRef::new(DATA_VA + off)
}

/// PM4 dwords per second, SDMA GB/s, round-trip p50/p99 (ns).
///
/// # Errors
/// If a rig cannot be set up or a queue faults (a bug in the stream or the engine).
pub fn run(quick: bool) -> Result<EngineMetrics, WorkError> {
    let pm4 = pm4_dwords_per_s(quick)?;
    let sdma = sdma_gb_per_s(quick)?;
    let (p50, p99) = roundtrip_ns(quick)?;
    Ok(EngineMetrics {
        pm4_dwords_per_s: Some(pm4),
        sdma_copy_gb_per_s: Some(sdma),
        roundtrip_ns_p50: Some(p50),
        roundtrip_ns_p99: Some(p99),
    })
}

fn pm4_unit(value: u32) -> Result<[u32; UNIT_DWORDS], WorkError> {
    let mut u = [0u32; UNIT_DWORDS];
    let mut n = pm4::wait(&mut u, &sig(0), 0).map_err(|_| err("sim: wait"))?;
    n += pm4::signal(
        u.get_mut(n..).unwrap_or_default(),
        &GFX11,
        &sig(0x40),
        value.into(),
    )
    .map_err(|_| err("sim: signal"))?;
    let rest = UNIT_DWORDS - n;
    pm4::nop(u.get_mut(n..).unwrap_or_default(), rest).map_err(|_| err("sim: nop"))?;
    Ok(u)
}

fn pm4_dwords_per_s(quick: bool) -> Result<f64, WorkError> {
    let mut rig = Rig::new(SimMode::Deterministic, QueueKind::Compute, PM4_RING_BYTES)?;
    let units = usize::try_from(PM4_RING_BYTES / 4).map_err(|_| err("ring"))? / UNIT_DWORDS;
    let kinds: Vec<Option<usize>> = pm4::decode(&pm4_unit(1)?)
        .map(|p| p.ok().map(|p| p.0))
        .collect();
    if kinds != [Some(0), Some(7), Some(15)] {
        return Err(err("sim: a PM4 unit is not wait + signal + NOP"));
    }
    let mut stream = Vec::with_capacity(units * UNIT_DWORDS);
    for i in 0..units {
        // CAST: units < 2^32.
        stream.extend_from_slice(&pm4_unit(i as u32 + 1)?);
    }
    rig.write(&stream)?;
    rig.wptr = 0;
    // A quarter of the ring per pass (~0.3 ms): short passes, many of them, so the median
    // ignores the passes that lost the CPU on a shared machine.
    let per_pass = PM4_RING_BYTES / 16;
    let passes = if quick { 7 } else { 61 };
    let mut rates = Vec::with_capacity(passes);
    for pass in 0..=passes {
        // The ring holds the stream already: announcing the next quarter replays it.
        rig.wptr += per_pass;
        let t = Instant::now();
        rig.doorbell()?;
        rig.engines.run_until_idle();
        let el = t.elapsed();
        rig.healthy()?;
        if rig.rptr() != rig.wptr {
            return Err(err("sim: the PM4 engine did not drain the ring"));
        }
        let _ = rig.bus.take_events();
        if pass > 0 {
            // CAST: dword counts and nanoseconds far below 2^52.
            rates.push(per_pass as f64 / el.as_nanos() as f64 * 1e9);
        }
    }
    rates.sort_by(f64::total_cmp);
    Ok(percentile(&rates, 50.0))
}

fn sdma_gb_per_s(quick: bool) -> Result<f64, WorkError> {
    let mut rig = Rig::new(SimMode::Deterministic, QueueKind::Sdma, SDMA_RING_BYTES)?;
    let src = Region::new(SDMA_COPY_BYTES);
    let dst = Region::new(SDMA_COPY_BYTES);
    rig.bus
        .map(COPY_SRC_VA, SDMA_COPY_BYTES, &src, Perms::RW)
        .map_err(|_| err("sim: map src"))?;
    rig.bus
        .map(COPY_DST_VA, SDMA_COPY_BYTES, &dst, Perms::RW)
        .map_err(|_| err("sim: map dst"))?;
    let mut list: SdmaList<64, 4, 16> = SdmaList::new(&GFX11);
    list.copy(GpuVa(COPY_DST_VA), GpuVa(COPY_SRC_VA), SDMA_COPY_BYTES)
        .map_err(|_| err("sim: sdma copy"))?;
    let passes = if quick { 3 } else { 21 };
    let bytes_per_pass = u64::try_from(list.as_dwords().len() * 4).unwrap_or(u64::MAX);
    if bytes_per_pass * (passes + 1) > SDMA_RING_BYTES {
        return Err(err(
            "sim: the SDMA passes do not fit the ring without a wrap",
        ));
    }
    let mut rates = Vec::new();
    for pass in 0..=passes {
        rig.write(list.as_dwords())?;
        let t = Instant::now();
        rig.doorbell()?;
        rig.engines.run_until_idle();
        let el = t.elapsed();
        rig.healthy()?;
        if rig.rptr() != rig.wptr {
            return Err(err("sim: the SDMA engine did not drain the ring"));
        }
        if pass > 0 {
            // CAST: bytes and nanoseconds far below 2^52; bytes per ns = GB/s.
            rates.push(SDMA_COPY_BYTES as f64 / el.as_nanos() as f64);
        }
    }
    rates.sort_by(f64::total_cmp);
    Ok(percentile(&rates, 50.0))
}

fn roundtrip_ns(quick: bool) -> Result<(f64, f64), WorkError> {
    let mut rig = Rig::new(SimMode::Threaded, QueueKind::Compute, 1 << 16)?;
    let s = sig(0x80);
    let mut value: u32 = 0;
    let mut packet = [0u32; pm4::RELEASE_MEM_DWORDS];
    let mut failed = None;
    let mut one = |rig: &mut Rig| -> Result<(), WorkError> {
        value = value.wrapping_add(1);
        pm4::signal(&mut packet, &GFX11, &s, value.into()).map_err(|_| err("sim: signal"))?;
        rig.write(&packet)?;
        rig.doorbell()?;
        rig.engines.kick();
        let deadline = Instant::now() + core::time::Duration::from_secs(5);
        while rig.bus.load_u32(s.value_addr()).unwrap_or(0) != value {
            if Instant::now() > deadline {
                return Err(err("sim: no completion within 5 s on the threaded engines"));
            }
            core::hint::spin_loop();
        }
        Ok(())
    };
    let (warm, n) = if quick { (20, 200) } else { (200, 5000) };
    let v = samples(warm, n, || {
        if failed.is_none() {
            if let Err(e) = one(&mut rig) {
                failed = Some(e);
            }
        }
    });
    if let Some(e) = failed {
        return Err(e);
    }
    let _ = rig.bus.take_events();
    rig.healthy()?;
    Ok((percentile(&v, 50.0), percentile(&v, 99.0)))
}
