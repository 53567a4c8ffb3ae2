//! Shared setup of the `hcq_*` end-to-end tests: every scenario is written once as a function
//! of the simulator's mode and run in both (`both_modes!`).
#![allow(dead_code)]

use core::time::Duration;
use hcq_core::cmd::{Pm4List, SdmaList};
use hcq_driver::{Device, DeviceOptions, GpuBuffer, Program};
pub use hcq_sim::SimMode;
use hcq_sim::engine::{QueueId, QueueStatus};
use hcq_sim::{SimConfig, SimKfd};
use hcq_tests::Rig;
use hcq_tests::fixtures;
use std::sync::Arc;

/// Deadline for waits that must succeed (a failure, not a threshold: they return much sooner).
pub const LONG: Duration = Duration::from_secs(30);

/// PM4 list big enough for every scenario here.
pub type P4 = Pm4List<8192, 256>;
/// SDMA list big enough for every scenario here.
pub type Sd = SdmaList<2048, 128, 512>;

/// A rig of `gpus` simulated GPUs of the suites' target (`hcq_tests::target_gpu`: gfx1100
/// unless `HCQ_SIM_TARGET` says otherwise) in `mode`, wait deadline `timeout`.
pub fn rig(mode: SimMode, gpus: usize, timeout: Duration) -> Rig {
    let cfg = SimConfig {
        mode,
        // hcq's suites run strict: an access the hardware tolerates faults.
        strict: true,
        ..hcq_tests::with_gpus(gpus)
    };
    Rig::with_config(cfg, timeout)
}

/// A rig with one GPU and the device opened on it.
pub fn one(mode: SimMode) -> (Rig, Device) {
    let r = rig(mode, 1, LONG);
    let dev = Device::open(&r.kfd, 0).unwrap();
    (r, dev)
}

/// A rig with one GPU, opened with `opts`.
pub fn one_with(mode: SimMode, timeout: Duration, opts: DeviceOptions) -> (Rig, Device) {
    let r = rig(mode, 1, timeout);
    let dev = Device::open_with(&r.kfd, 0, opts).unwrap();
    (r, dev)
}

/// `fill` and `vector_add` loaded on `dev`.
pub fn programs(dev: &Device) -> (Program, Program) {
    let t = dev.target_name();
    let fill = Program::load(dev, fixtures::fill(&t).unwrap(), "fill").unwrap();
    let add = Program::load(dev, fixtures::vector_add(&t).unwrap(), "vector_add").unwrap();
    (fill, add)
}

pub fn to_u32s(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks_exact(4)
        .map(|w| u32::from_le_bytes(w.try_into().unwrap()))
        .collect()
}

pub fn to_bytes(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// Reads `n` u32s of `buf` through the copy queue.
pub fn read_u32s(dev: &Device, buf: &GpuBuffer, n: usize) -> Vec<u32> {
    let mut out = vec![0u8; n * 4];
    dev.copy_out(buf, &mut out).unwrap();
    to_u32s(&out)
}

/// Writes `data` to the start of `buf` through the copy queue.
pub fn write_u32s(dev: &Device, buf: &GpuBuffer, data: &[u32]) {
    dev.copy_in(buf, &to_bytes(data)).unwrap();
}

/// `n` bytes that differ for different `seed`s and have no short period (built a u64 at a
/// time: this is on the 64 MiB path and runs in debug builds).
pub fn pattern(n: usize, seed: u32) -> Vec<u8> {
    let words: Vec<u64> = (0..n.div_ceil(8) as u64)
        .map(|i| (i ^ (u64::from(seed) << 40)).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 3)
        .collect();
    let mut out: Vec<u8> = bytemuck::cast_slice(&words).to_vec();
    out.truncate(n);
    out
}

/// Polls (yielding) until `pred` holds for the simulator's view of queue `id`; panics after
/// `LONG` (a hang, not a threshold). In deterministic mode engines only run inside waits:
/// call this after one.
pub fn until_queue(rig: &Rig, id: u32, pred: impl Fn(&QueueStatus) -> bool) -> QueueStatus {
    let start = std::time::Instant::now();
    loop {
        // None: the engine thread has not attached the queue yet.
        let q = rig.gpu.engines().queue(QueueId(id));
        if let Some(q) = q.as_ref().filter(|q| pred(q)) {
            return q.clone();
        }
        assert!(
            start.elapsed() < LONG,
            "queue {id} never reached the state: {q:?}"
        );
        rig.gpu.kick();
        std::thread::yield_now();
    }
}

/// A GPU-side read of a u64 (through the simulated GPU's page table, as a queue sees it).
pub fn gpu_u64(sim: &Arc<SimKfd>, gpu_id: u32, va: u64) -> u64 {
    sim.gpu_read_u64(gpu_id, va).unwrap()
}

/// Runs `$f(SimMode)` as two tests, `$f::deterministic` and `$f::threaded`.
macro_rules! both_modes {
    ($($f:ident),* $(,)?) => {
        $(
            mod $f {
                #[test]
                fn deterministic() {
                    super::$f(super::hcq_common::SimMode::Deterministic);
                }
                #[test]
                fn threaded() {
                    super::$f(super::hcq_common::SimMode::Threaded);
                }
            }
        )*
    };
}
pub(crate) use both_modes;

/// Waits until both queues' read pointers (as the driver sees them) reached their write
/// pointers, and returns the states. A completed signal does not mean the engine already
/// wrote its read pointer back (it does so after the packet), so this polls, up to `LONG`.
pub fn settled(rig: &Rig, dev: &Device) -> Vec<hcq_driver::QueueState> {
    let start = std::time::Instant::now();
    loop {
        let st = dev.queue_states();
        if st.iter().all(|q| q.rptr == q.wptr) {
            return st;
        }
        assert!(
            start.elapsed() < LONG,
            "read pointers never caught up: {st:?}"
        );
        rig.gpu.kick();
        // Deterministic mode: engines run (and publish) inside a wait.
        dev.synchronize().unwrap();
        std::thread::yield_now();
    }
}
