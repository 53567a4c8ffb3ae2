//! The engines wired into [`SimKfd`]: a [`GpuBus`] per simulated GPU over the simulated
//! kernel driver's page tables, doorbells, interrupts and exception events, and the
//! [`Engine`] that `SimKfd::run_queues` (WAIT_EVENTS, `step`, `run_until_idle`) drives.
//!
//! ```no_run
//! # use std::sync::Arc;
//! use hcq_sim::{SimKfd, engine::attach::SimGpu};
//! let sim = Arc::new(SimKfd::gfx1100()?);
//! let gpu = SimGpu::attach(&sim)?; // engines now run inside WAIT_EVENTS (or on a thread)
//! let co = std::fs::read("vector_add-gfx1100.co")?;
//! gpu.engines().with_kernels(|k| k.register_fixture(&co))?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use super::bus::{Access, GpuBus, VmFault, VmFaultKind};
use super::{EngineError, Engines, QueueDesc, QueueId, run_engine_loop, spawn_engine_thread};
use crate::config::GpuConfig;
use crate::gpu::GpuFault;
use crate::isa::model::GpuShape;
use crate::kfd::{Engine, SimKfd};
use crate::state::QueueInfo as KfdQueue;
use core::sync::atomic::{AtomicBool, Ordering};
use hcq_core::arch::{GFX11, GfxTarget};
use hcq_core::kfd::{HsaHwExceptionData, HsaMemoryExceptionData};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, PoisonError, Weak};

/// One simulated GPU as its engines see it: `SimKfd`'s page table for `gpu_id`.
#[derive(Debug)]
pub struct KfdBus {
    sim: Weak<SimKfd>,
    gpu_id: u32,
    caches: super::cache::GpuCaches,
    shape: Option<GpuShape>,
}

impl KfdBus {
    /// The bus of GPU `gpu_id` of `sim`.
    #[must_use]
    pub fn new(sim: &Arc<SimKfd>, gpu_id: u32) -> Self {
        Self {
            sim: Arc::downgrade(sim),
            gpu_id,
            caches: super::cache::GpuCaches::default(),
            shape: sim.gpu_config(gpu_id).map(model_shape),
        }
    }

    fn vm(f: GpuFault, access: Access) -> VmFault {
        VmFault {
            va: f.va,
            access,
            kind: f.reason,
        }
    }

    fn gone(&self, va: u64, access: Access) -> VmFault {
        VmFault {
            va,
            access,
            kind: VmFaultKind::NotPresent,
        }
    }
}

/// The modelled GPU behind a configuration: every CU and SIMD at the maximum engine clock;
/// memory bandwidth = bus width x memory clock x transfers per clock, which KFD's memory
/// clock leaves implicit: 2 for the HBM2e of gfx90a (1600 MHz: 3.2 Gbps per pin), 4 for the
/// HBM3 of gfx94x (1300 MHz: 5.2 Gbps), 16 for the GDDR6 of gfx10+ (gfx1100: 384 bits x
/// 1250 MHz x 16 = 960 GB/s).
fn model_shape(cfg: &GpuConfig) -> GpuShape {
    let transfers_per_clock: u64 = match cfg.gfx_target_version {
        90400..=90499 => 4,
        ..=99999 => 2,
        _ => 16,
    };
    GpuShape {
        cus: cfg.cu_count,
        simds_per_cu: cfg.simd_per_cu,
        clock_mhz: cfg.max_engine_clk_fcompute,
        // bits / 8 x MHz x transfers = bytes per microsecond.
        mem_bytes_per_us: u64::from(cfg.vram_width) / 8
            * u64::from(cfg.mem_clk_max)
            * transfers_per_clock,
    }
}

impl GpuBus for KfdBus {
    fn gpu_id(&self) -> u32 {
        self.gpu_id
    }

    fn hdp_flush(&self) {
        if let Some(sim) = self.sim.upgrade() {
            sim.hdp_flush(self.gpu_id);
        }
    }

    fn caches(&self) -> Option<&super::cache::GpuCaches> {
        Some(&self.caches)
    }

    // KFD buffers carry no execute permission the page table records (every runtime maps with
    // EXECUTABLE), so an instruction fetch is checked as a read.
    fn read(&self, va: u64, buf: &mut [u8], access: Access) -> Result<(), VmFault> {
        let sim = self.sim.upgrade().ok_or_else(|| self.gone(va, access))?;
        sim.gpu_read(self.gpu_id, va, buf)
            .map_err(|f| Self::vm(f, access))
    }

    fn write(&self, va: u64, data: &[u8]) -> Result<(), VmFault> {
        let sim = self
            .sim
            .upgrade()
            .ok_or_else(|| self.gone(va, Access::Write))?;
        sim.gpu_write_cached(self.gpu_id, va, data)
            .map_err(|f| Self::vm(f, Access::Write))
    }

    fn write_through(&self, va: u64, data: &[u8]) -> Result<(), VmFault> {
        let sim = self
            .sim
            .upgrade()
            .ok_or_else(|| self.gone(va, Access::Write))?;
        sim.gpu_write(self.gpu_id, va, data)
            .map_err(|f| Self::vm(f, Access::Write))
    }

    fn read_visible(&self, va: u64, buf: &mut [u8]) -> Result<(), VmFault> {
        let sim = self
            .sim
            .upgrade()
            .ok_or_else(|| self.gone(va, Access::Read))?;
        sim.gpu_read_visible(self.gpu_id, va, buf)
            .map_err(|f| Self::vm(f, Access::Read))
    }

    fn read_through(&self, va: u64, buf: &mut [u8]) -> Result<(), VmFault> {
        let sim = self
            .sim
            .upgrade()
            .ok_or_else(|| self.gone(va, Access::Read))?;
        sim.gpu_read_memory(self.gpu_id, va, buf)
            .map_err(|f| Self::vm(f, Access::Read))
    }

    fn l2_writeback(&self) {
        if let Some(sim) = self.sim.upgrade() {
            sim.l2_writeback(self.gpu_id);
        }
    }

    fn load_u32(&self, va: u64) -> Result<u32, VmFault> {
        let sim = self
            .sim
            .upgrade()
            .ok_or_else(|| self.gone(va, Access::Read))?;
        sim.gpu_read_u32(self.gpu_id, va)
            .map_err(|f| Self::vm(f, Access::Read))
    }

    fn load_u64(&self, va: u64) -> Result<u64, VmFault> {
        let sim = self
            .sim
            .upgrade()
            .ok_or_else(|| self.gone(va, Access::Read))?;
        sim.gpu_read_u64(self.gpu_id, va)
            .map_err(|f| Self::vm(f, Access::Read))
    }

    fn store_u32(&self, va: u64, v: u32) -> Result<(), VmFault> {
        let sim = self
            .sim
            .upgrade()
            .ok_or_else(|| self.gone(va, Access::Write))?;
        sim.gpu_write_u32(self.gpu_id, va, v)
            .map_err(|f| Self::vm(f, Access::Write))
    }

    fn store_u64(&self, va: u64, v: u64) -> Result<(), VmFault> {
        let sim = self
            .sim
            .upgrade()
            .ok_or_else(|| self.gone(va, Access::Write))?;
        sim.gpu_write_u64(self.gpu_id, va, v)
            .map_err(|f| Self::vm(f, Access::Write))
    }

    fn doorbell(&self, offset: u64) -> Option<u64> {
        let sim = self.sim.upgrade()?;
        let id = u32::try_from(offset / 8).ok()?;
        sim.doorbell(self.gpu_id, id)
    }

    fn interrupt(&self, context_id: u32) {
        if let Some(sim) = self.sim.upgrade() {
            sim.signal_interrupt(self.gpu_id, context_id);
        }
    }

    fn memory_exception(&self, data: &HsaMemoryExceptionData) {
        if let Some(sim) = self.sim.upgrade() {
            let write = data.failure.read_only != 0;
            sim.raise_memory_fault(&GpuFault {
                gpu_id: self.gpu_id,
                va: data.va,
                write,
                reason: if data.failure.not_present == 0 && write {
                    VmFaultKind::ReadOnly
                } else {
                    VmFaultKind::NotPresent
                },
            });
        }
    }

    fn hw_exception(&self, data: &HsaHwExceptionData) {
        if let Some(sim) = self.sim.upgrade() {
            sim.raise_hw_exception(self.gpu_id, data.reset_cause, data.memory_lost != 0);
        }
    }

    fn fault_reason(&self, text: &str) {
        if let Some(sim) = self.sim.upgrade() {
            sim.record_fault_reason(self.gpu_id, text);
        }
    }

    fn describe_va(&self, va: u64) -> Option<String> {
        self.sim.upgrade()?.describe_va(self.gpu_id, va)
    }

    fn mapped_end(&self, va: u64) -> Option<u64> {
        self.sim.upgrade()?.mapped_end(self.gpu_id, va)
    }

    fn gpu_shape(&self) -> Option<GpuShape> {
        self.shape
    }
}

/// The [`Engine`] installed in a `SimKfd`: keeps one engine per live queue (added on
/// CREATE_QUEUE, removed on DESTROY_QUEUE, both before the ioctl returns, suspended while KFD has the queue inactive or its
/// GPU's queues evicted after a fault) and runs one round per `run`.
pub struct KfdEngine {
    sim: Weak<SimKfd>,
    engines: Engines,
    /// Queue id -> the ring (base, size) its engine runs (UPDATE_QUEUE may move it).
    known: Mutex<BTreeMap<u32, (u64, u32)>>,
}

impl core::fmt::Debug for KfdEngine {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("KfdEngine")
            .field("engines", &self.engines)
            .finish_non_exhaustive()
    }
}

fn desc_of(sim: &SimKfd, q: &KfdQueue) -> QueueDesc {
    let arch = sim
        .properties(q.gpu_id)
        .and_then(|p| GfxTarget::from_kfd_version(p.gfx_target_version).ok())
        .map_or(&GFX11, GfxTarget::info);
    QueueDesc {
        kind: q.kind,
        arch,
        // gfx940+ (KFD's gfx_target_version 9.4.x) or a later family.
        gfx940: sim
            .properties(q.gpu_id)
            .is_none_or(|p| p.gfx_target_version >= 90400),
        ring_base: q.ring_base,
        ring_size: u64::from(q.ring_size),
        rptr_addr: q.rptr_addr,
        wptr_addr: q.wptr_addr,
        doorbell_offset: u64::from(q.doorbell_id) * 8,
        // The engine may first see the queue after the driver has already submitted, so it
        // starts at the read pointer the driver initialised (where the CP reports it), not at
        // the current write pointer.
        start: sim.gpu_read_u64(q.gpu_id, q.rptr_addr).unwrap_or(0),
    }
}

impl KfdEngine {
    /// Brings the engine set in line with KFD's queues.
    fn sync(&self, sim: &Arc<SimKfd>) {
        // The snapshot is taken under `known`'s lock: the engine thread and the ioctl path both
        // sync, and a snapshot taken before the lock could be older than the one the other
        // side applied (a queue destroyed and its id reused in between would be removed again
        // and re-added fresh, losing its state, e.g. an injected hang).
        let mut known = self.known.lock().unwrap_or_else(PoisonError::into_inner);
        let live = sim.queues();
        let ids: BTreeSet<u32> = live.iter().map(|q| q.queue_id).collect();
        // A queue whose ring UPDATE_QUEUE moved restarts on the new ring from its read pointer
        // (the CP reloads the MQD's ring base and size when the queue is mapped again).
        let moved: Vec<u32> = live
            .iter()
            .filter(|q| {
                known
                    .get(&q.queue_id)
                    .is_some_and(|r| *r != (q.ring_base, q.ring_size))
            })
            .map(|q| q.queue_id)
            .collect();
        let gone_ids: Vec<u32> = known.keys().filter(|k| !ids.contains(k)).copied().collect();
        for gone in gone_ids.into_iter().chain(moved) {
            if let Some((gpu, db)) = self.engines.queue_doorbell(QueueId(gone)) {
                sim.guard_doorbell(gpu, db, false);
            }
            let _ = self.engines.remove_queue(QueueId(gone));
            known.remove(&gone);
        }
        for q in &live {
            if known
                .insert(q.queue_id, (q.ring_base, q.ring_size))
                .is_none()
            {
                let bus: Arc<dyn GpuBus> = Arc::new(KfdBus::new(sim, q.gpu_id));
                if self
                    .engines
                    .add_queue(QueueId(q.queue_id), desc_of(sim, q), bus)
                    .is_err()
                {
                    // KFD validated the ring; an engine that cannot take it stays absent.
                    known.remove(&q.queue_id);
                    continue;
                }
                sim.guard_doorbell(q.gpu_id, q.doorbell_id, true);
            }
            let _ = self.engines.suspend(QueueId(q.queue_id), !q.active);
            // The XCC running it on a multi-XCC node (`xcc.rs`): a PM4 queue its
            // `pm4_target_xcc` (UPDATE_QUEUE may change it), an AQL queue every XCC.
            let count = sim.properties(q.gpu_id).map_or(1, |p| p.num_xcc.max(1));
            let xcc = if q.kind == super::QueueKind::Compute {
                q.pm4_target_xcc
            } else {
                0
            };
            let _ = self
                .engines
                .set_xcc(QueueId(q.queue_id), super::XccSeat { xcc, count });
        }
    }

    /// The engines (trace, fault injection, kernel registry).
    #[must_use]
    pub fn engines(&self) -> &Engines {
        &self.engines
    }
}

impl Engine for KfdEngine {
    fn run(&self, _sim: &SimKfd) -> bool {
        let Some(sim) = self.sim.upgrade() else {
            return false;
        };
        self.sync(&sim);
        sim.take_hdp_preimages();
        let host = sim.host_accesses();
        let (progressed, idle) = self.engines.step_with_host(host);
        if idle {
            sim.relax_host_guard();
        }
        progressed
    }

    fn check_deadlock(&self) -> bool {
        self.engines.check_deadlock()
    }

    fn stall_reasons(&self, gpu_id: u32) -> Vec<String> {
        self.engines.stall_reasons(gpu_id)
    }

    fn queues_changed(&self, _sim: &SimKfd) {
        if let Some(sim) = self.sim.upgrade() {
            self.sync(&sim);
        }
    }
}

/// The engines attached to a `SimKfd`; in threaded mode also the engine thread, stopped and
/// joined on drop.
#[derive(Debug)]
pub struct SimGpu {
    engine: Arc<KfdEngine>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl SimGpu {
    /// Installs engines in `sim` (`SimKfd::set_engine`), on the simulator's GPU clock. In
    /// `SimMode::Threaded` a thread runs the queues, watching doorbells while the host races it.
    ///
    /// # Errors
    /// [`EngineError::ThreadSpawn`] when threaded mode's engine thread cannot start (a GPU
    /// that never ran would only show as waits timing out).
    pub fn attach(sim: &Arc<SimKfd>) -> Result<Self, EngineError> {
        let cfg = sim.config();
        let engine = Arc::new(KfdEngine {
            sim: Arc::downgrade(sim),
            engines: Engines::on_clock(cfg.mode, Arc::clone(sim.clock())),
            known: Mutex::new(BTreeMap::new()),
        });
        engine
            .engines
            .set_dispatch(cfg.dispatch, cfg.seed, cfg.mode == crate::SimMode::Threaded);
        let findings = sim.findings_handle();
        engine.engines.with_kernels(|k| {
            k.set_judge(cfg.strict, findings);
            k.set_threads(cfg.threads);
        });
        let stop = Arc::new(AtomicBool::new(false));
        let thread = match cfg.mode {
            crate::SimMode::Deterministic => None,
            crate::SimMode::Threaded => {
                let weak = Arc::downgrade(sim);
                let stop = Arc::clone(&stop);
                Some(spawn_engine_thread("hcq-sim-gpu", move || {
                    run_engine_loop(&stop, || Some(weak.upgrade()?.run_queues()));
                })?)
            }
        };
        sim.set_engine(Arc::clone(&engine) as Arc<dyn Engine>);
        Ok(Self {
            engine,
            stop,
            thread,
        })
    }

    /// The engines (trace, fault injection, kernel registry).
    #[must_use]
    pub fn engines(&self) -> &Engines {
        self.engine.engines()
    }

    /// Wakes the engine thread (threaded mode) if it is sleeping.
    pub fn kick(&self) {
        if let Some(t) = &self.thread {
            t.thread().unpark();
        }
    }
}

impl Drop for SimGpu {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(t) = self.thread.take() {
            t.thread().unpark();
            log_join(t);
        }
    }
}

/// Joins an engine thread; a panic in it is an error naming its message (never dropped).
///
/// # Errors
/// The thread panicked: `engine thread panicked: <message>`.
pub(crate) fn join_engine_thread(t: std::thread::JoinHandle<()>) -> Result<(), String> {
    t.join().map_err(|p| {
        let msg = p
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| p.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic without a message".to_owned());
        format!(
            "engine thread panicked: {msg} (the simulated GPU stopped running queues then; waits after it timed out)"
        )
    })
}

/// Joins an engine thread from a `Drop` (which cannot return an error): a panic in it is
/// logged as an error with its message.
pub(crate) fn log_join(t: std::thread::JoinHandle<()>) {
    if let Err(e) = join_engine_thread(t) {
        log::error!("{e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_engine_threads_panic_is_an_error_with_its_message() {
        let t = std::thread::spawn(|| panic!("queue table corrupt"));
        let err = join_engine_thread(t).unwrap_err();
        assert!(
            err.starts_with("engine thread panicked: queue table corrupt"),
            "{err}"
        );
        assert_eq!(join_engine_thread(std::thread::spawn(|| {})), Ok(()));
    }

    #[test]
    fn model_shapes_give_the_boards_memory_bandwidth() {
        // RX 7900 XTX: 960 GB/s; MI250X, one GCD: 1.64 TB/s; MI300X: 5.3 TB/s.
        let xtx = model_shape(&GpuConfig::gfx1100());
        assert_eq!(xtx.mem_bytes_per_us, 960_000);
        assert_eq!((xtx.cus, xtx.simds_per_cu, xtx.clock_mhz), (96, 2, 2482));
        assert_eq!(
            model_shape(&GpuConfig::gfx90a()).mem_bytes_per_us,
            1_638_400
        );
        assert_eq!(
            model_shape(&GpuConfig::gfx942()).mem_bytes_per_us,
            5_324_800
        );
    }
}
