//! Modelled GPU time: what a dispatch would take on the simulated GPU, from the instructions
//! it executed. A throughput model, stated so it can be checked and argued with:
//!
//! - every wave instruction costs its SIMD issue cycles: scalar and SMEM 1; vector ALU one
//!   pass per SIMD width of lanes (gfx9's SIMD16 takes 4 passes for wave64, RDNA's SIMD32 one
//!   for wave32 and two for wave64), transcendental ops 4 times that, f64 ops 16 times on
//!   RDNA (CDNA runs f64 at the f32 rate); DS 2 cycles and VMEM 4 cycles per pass;
//! - the dispatch's SIMD cycles spread over every SIMD of the GPU (CUs x SIMDs per CU) at
//!   its engine clock: full occupancy, no latency, no cache misses;
//! - memory: the bytes vector memory instructions move (per active lane) at the GPU's memory
//!   bandwidth;
//! - one wave's serial cost: a wave runs on one SIMD, so a dispatch never finishes before its
//!   longest wave. Each wave keeps a clock of its own: every instruction advances it by its
//!   issue cycles; a memory instruction completes [`VMEM_LATENCY`], [`LDS_LATENCY`] or
//!   [`SMEM_LATENCY`] cycles after it issued; a wait (`s_waitcnt`, gfx12's `s_wait_*`) moves
//!   the clock to the completion of every operation the wait requires (the counters are in
//!   order: waiting for N outstanding retires all but the N newest); the wave's end waits for
//!   everything. The dependent chain of loads a wave waits on is so on its clock;
//! - the dispatch takes the longest of the three.
//!
//! The numbers are a model, not a measurement: callers label them "modelled".

use super::Isa;
use super::decode::{Enc, Inst};
use super::ops::Op;

/// Cycles from a vector memory instruction's issue to its data (a model constant: the order of
/// a GPU's L2/HBM latency at its engine clock).
pub const VMEM_LATENCY: u16 = 600;
/// Cycles from an LDS instruction's issue to its data.
pub const LDS_LATENCY: u16 = 64;
/// Cycles from a scalar memory load's issue to its data.
pub const SMEM_LATENCY: u16 = 200;

/// The wave counters the model follows: vector loads (gfx9: every vector memory access,
/// `vmcnt`), vector stores (gfx10+ `vscnt`, gfx12 `storecnt`), LDS (gfx9/gfx11: LDS and scalar
/// memory, `lgkmcnt`; gfx12 `dscnt`), scalar memory (gfx12 `kmcnt`).
const QUEUES: usize = 4;
const Q_LOAD: u8 = 0;
const Q_STORE: u8 = 1;
const Q_LGKM: u8 = 2;
const Q_KM: u8 = 3;
/// No wait on a counter.
const ANY: u8 = u8::MAX;

/// One wave's serial clock (cycles) and the completion times of its outstanding memory
/// operations per counter, oldest first.
#[derive(Clone, Debug, Default)]
pub(crate) struct WaveClock {
    pub(crate) t: u64,
    pending: [Pending; QUEUES],
}

/// Completion times a ring holds: more than any wait's count ([`ANY`] - 1), so a wait that
/// retires anything retires every time the ring let go of ([`Pending::over`]).
const RING: usize = 256;

/// One counter's outstanding operations: the newest [`RING`] completion times in a ring
/// (its storage allocated at the counter's first operation and never zeroed; no allocation
/// per operation), and the latest of the older ones, which the next wait retires whatever
/// its count.
#[derive(Clone, Debug, Default)]
struct Pending {
    /// The ring's slots written so far (at most [`RING`]).
    done: Vec<u64>,
    /// The oldest entry's index.
    head: u8,
    /// Entries held (at most [`RING`]).
    len: u16,
    /// The latest completion among operations pushed out of the full ring, if any.
    over: Option<u64>,
}

impl Pending {
    fn clear(&mut self) {
        self.head = 0;
        self.len = 0;
        self.over = None;
    }

    #[inline]
    fn push(&mut self, done: u64) {
        if usize::from(self.len) == RING {
            // Full: the oldest leaves the ring; only its completion time matters to a wait.
            let old = self.done.get(usize::from(self.head)).copied().unwrap_or(0);
            self.over = Some(self.over.map_or(old, |o| o.max(old)));
            self.head = self.head.wrapping_add(1);
            self.len -= 1;
        }
        // CAST: below RING = 256, the ring's index.
        let at = usize::from(self.head.wrapping_add(self.len as u8));
        if let Some(slot) = self.done.get_mut(at) {
            *slot = done;
        } else {
            // Until the ring has wrapped once, the next slot is the first never written.
            if self.done.capacity() == 0 {
                self.done.reserve_exact(RING);
            }
            self.done.push(done);
        }
        self.len += 1;
    }

    /// Retires all but the `n` newest operations; returns the latest completion retired.
    #[inline]
    fn retire(&mut self, n: u8) -> Option<u64> {
        // Anything pushed out of the ring is older than the ring's RING entries, and
        // `n` < RING: it retires first.
        let mut latest = if usize::from(self.len) > usize::from(n) {
            self.over.take()
        } else {
            None
        };
        while self.len > u16::from(n) {
            let d = self.done.get(usize::from(self.head)).copied().unwrap_or(0);
            latest = Some(latest.map_or(d, |l| l.max(d)));
            self.head = self.head.wrapping_add(1);
            self.len -= 1;
        }
        latest
    }
}

impl WaveClock {
    /// Back to zero with nothing outstanding (a new workgroup's wave).
    pub(crate) fn reset(&mut self) {
        self.t = 0;
        for q in &mut self.pending {
            q.clear();
        }
    }

    /// Issues one instruction of cost `c`.
    #[inline]
    pub(crate) fn issue(&mut self, c: &Cost) {
        self.t += u64::from(c.cycles);
        if let Some(q) = self.pending.get_mut(usize::from(c.queue)) {
            q.push(self.t + u64::from(c.latency));
        }
        // Four counters as one word: most instructions wait for nothing.
        if u32::from_ne_bytes(c.wait) != u32::from_ne_bytes([ANY; QUEUES]) {
            self.wait(c.wait);
        }
    }

    /// Waits until at most `most[k]` operations are outstanding on counter `k`.
    fn wait(&mut self, most: [u8; QUEUES]) {
        for (q, &n) in self.pending.iter_mut().zip(&most) {
            if let Some(done) = q.retire(n) {
                self.t = self.t.max(done);
            }
        }
    }

    /// The wave's end: everything outstanding completes. Returns the wave's serial cycles.
    pub(crate) fn finish(&mut self) -> u64 {
        self.wait([0; QUEUES]);
        self.t
    }
}

/// What the model needs to know of the GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GpuShape {
    /// Compute units.
    pub cus: u32,
    /// SIMDs per compute unit.
    pub simds_per_cu: u32,
    /// Engine clock in MHz.
    pub clock_mhz: u32,
    /// Memory bandwidth in bytes per microsecond (= MB/s).
    pub mem_bytes_per_us: u64,
}

impl GpuShape {
    /// Modelled nanoseconds for `simd_cycles` of issue and `mem_bytes` of vector memory
    /// traffic, and at least `wave_cycles` (the longest wave's serial cost) at the engine
    /// clock (at least 1 ns for a dispatch that executed anything).
    #[must_use]
    pub fn dispatch_ns(&self, simd_cycles: u64, mem_bytes: u64, wave_cycles: u64) -> u64 {
        let simds = u64::from(self.cus.max(1)) * u64::from(self.simds_per_cu.max(1));
        let mhz = u64::from(self.clock_mhz.max(1));
        // cycles / (simds * MHz) us = cycles * 1000 / (simds * MHz) ns.
        let compute = (u128::from(simd_cycles) * 1000).div_ceil(u128::from(simds * mhz));
        let memory =
            (u128::from(mem_bytes) * 1000).div_ceil(u128::from(self.mem_bytes_per_us.max(1)));
        let serial = (u128::from(wave_cycles) * 1000).div_ceil(u128::from(mhz));
        // CAST: saturating; a dispatch's modelled time stays far below 2^64 ns.
        let ns = compute.max(memory).max(serial).min(u128::from(u64::MAX)) as u64;
        if simd_cycles > 0 { ns.max(1) } else { ns }
    }
}

/// The cost of one decoded instruction: SIMD issue cycles, bytes per active lane it moves to
/// or from memory (vector memory only), the counter it occupies and for how long, and what
/// it waits for (the most operations each counter may keep outstanding; [`ANY`]: no wait).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Cost {
    pub(crate) cycles: u16,
    pub(crate) lane_bytes: u8,
    /// Counter index, or `u8::MAX` for none.
    queue: u8,
    latency: u16,
    wait: [u8; QUEUES],
}

impl Default for Cost {
    fn default() -> Self {
        Self {
            cycles: 0,
            lane_bytes: 0,
            queue: ANY,
            latency: 0,
            wait: [ANY; QUEUES],
        }
    }
}

/// The counter a memory instruction occupies and its latency; `None` for anything else.
fn counter(isa: Isa, i: &Inst) -> Option<(u8, u16)> {
    use Op::*;
    let name = i.op.name();
    Some(match i.enc {
        Enc::Smem => (if isa == Isa::Gfx12 { Q_KM } else { Q_LGKM }, SMEM_LATENCY),
        Enc::Ds if matches!(i.op, DsNop) => return None,
        Enc::Ds => (Q_LGKM, LDS_LATENCY),
        Enc::Flat | Enc::Mubuf => {
            if matches!(
                i.op,
                GlobalInv
                    | GlobalWb
                    | GlobalWbinv
                    | BufferGl0Inv
                    | BufferGl1Inv
                    | BufferWbinvl1Vol
                    | BufferWbinvl1
                    | BufferWbl2
                    | BufferInvl2
            ) {
                return None;
            }
            // Atomics that return count as loads; stores and atomics without return as stores
            // (gfx9 counts both on vmcnt).
            let load = name.contains("load") || (name.contains("atomic") && i.flags & 1 != 0);
            let q = if load || isa == Isa::Gfx9 {
                Q_LOAD
            } else {
                Q_STORE
            };
            (q, VMEM_LATENCY)
        }
        _ => return None,
    })
}

/// What a wait instruction waits for, per counter.
fn waits(isa: Isa, i: &Inst) -> [u8; QUEUES] {
    use Op::*;
    // CAST: the counts are 6 bits at most.
    let imm = (i.imm as u32) & 0xffff;
    let n = |v: u32| v.min(u32::from(ANY - 1)) as u8;
    let mut w = [ANY; QUEUES];
    match i.op {
        SWaitcnt if isa == Isa::Gfx9 => {
            w[usize::from(Q_LOAD)] = n((imm & 0xf) | ((imm >> 14) & 3) << 4);
            w[usize::from(Q_LGKM)] = n((imm >> 8) & 0xf);
        }
        SWaitcnt => {
            w[usize::from(Q_LOAD)] = n(imm >> 10);
            w[usize::from(Q_LGKM)] = n((imm >> 4) & 0x3f);
        }
        SWaitcntVscnt | SWaitStorecnt => w[usize::from(Q_STORE)] = n(imm),
        SWaitcntVmcnt | SWaitLoadcnt => w[usize::from(Q_LOAD)] = n(imm),
        SWaitcntLgkmcnt | SWaitDscnt => w[usize::from(Q_LGKM)] = n(imm),
        SWaitKmcnt => w[usize::from(Q_KM)] = n(imm),
        SWaitLoadcntDscnt => {
            w[usize::from(Q_LOAD)] = n((imm >> 8) & 0x3f);
            w[usize::from(Q_LGKM)] = n(imm & 0x3f);
        }
        SWaitStorecntDscnt => {
            w[usize::from(Q_STORE)] = n((imm >> 8) & 0x3f);
            w[usize::from(Q_LGKM)] = n(imm & 0x3f);
        }
        _ => {}
    }
    w
}

fn transcendental(op: Op) -> bool {
    use Op::*;
    matches!(
        op,
        VRcpF32
            | VRcpIflagF32
            | VRsqF32
            | VSqrtF32
            | VExpF32
            | VLogF32
            | VSinF32
            | VCosF32
            | VRcpF64
            | VRsqF64
            | VSqrtF64
    )
}

fn f64_op(op: Op) -> bool {
    op.is_f64()
}

fn mem_bytes(op: Op) -> u8 {
    use Op::*;
    match op {
        MLoadU8 | MLoadI8 | MStoreB8 | MStoreD16HiB8 => 1,
        MLoadU16 | MLoadI16 | MStoreB16 | MLoadD16B16 | MLoadD16HiB16 | MStoreD16HiB16 => 2,
        MLoadD16U8 | MLoadD16I8 | MLoadD16HiU8 | MLoadD16HiI8 => 1,
        MLoadB64 | MStoreB64 | MAtomicAddU64 | MAtomicSwapB64 | MAtomicCmpswapB64 => 8,
        op if op.name().starts_with("atomic_") && op.name().ends_with("64") => 8,
        MLoadB96 | MStoreB96 => 12,
        MLoadB128 | MStoreB128 => 16,
        GlobalInv | GlobalWb | GlobalWbinv | BufferGl0Inv | BufferGl1Inv | BufferWbinvl1
        | BufferWbl2 | BufferInvl2 => 0,
        _ => 4,
    }
}

/// The cost of `i` in a wave of `lanes` lanes on `isa`.
pub(crate) fn cost(isa: Isa, lanes: usize, i: &Inst) -> Cost {
    let simd = if isa == Isa::Gfx9 { 16 } else { 32 };
    // CAST: lanes <= 64, so passes <= 4.
    let passes = lanes.div_ceil(simd).max(1) as u16;
    let (cycles, lane_bytes) = match i.enc {
        Enc::Sop1 | Enc::Sop2 | Enc::Sopk | Enc::Sopc | Enc::Sopp | Enc::Smem => (1, 0),
        Enc::Ds => (2 * passes, 0),
        Enc::Flat | Enc::Mubuf => (4 * passes, mem_bytes(i.op)),
        Enc::Vop1
        | Enc::Vop2
        | Enc::Vopc
        | Enc::Vop3
        | Enc::Vop3sd
        | Enc::Vop3p
        | Enc::Vopd
        | Enc::Vinterp => {
            let rate = if transcendental(i.op) {
                4
            } else if f64_op(i.op) && isa != Isa::Gfx9 {
                16
            } else {
                1
            };
            (rate * passes, 0)
        }
    };
    let (queue, latency) = counter(isa, i).unwrap_or((ANY, 0));
    Cost {
        cycles,
        lane_bytes,
        queue,
        latency,
        wait: waits(isa, i),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const XTX: GpuShape = GpuShape {
        cus: 96,
        simds_per_cu: 2,
        clock_mhz: 2500,
        mem_bytes_per_us: 960_000,
    };

    /// The ring against the unbounded queue it replaced (oldest first, a wait pops while
    /// more than its count are outstanding), over runs of more than [`RING`] operations
    /// without a wait, waits of every count (255 included) and mixed latencies.
    #[test]
    fn the_ring_retires_as_an_unbounded_queue_does() {
        let mut seed = 0x1234_5678_9abc_def0u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..200 {
            let mut ring = Pending::default();
            let mut queue = std::collections::VecDeque::new();
            let mut t = 0u64;
            for _ in 0..2000 {
                let r = next();
                if r % 16 == 0 {
                    // CAST: the low byte, any count.
                    let n = (r >> 8) as u8;
                    let n = if r & 0x10000 != 0 { n % 8 } else { n };
                    let mut want = None;
                    while queue.len() > usize::from(n) {
                        let d: u64 = queue.pop_front().unwrap_or(0);
                        want = Some(want.map_or(d, |w: u64| w.max(d)));
                    }
                    assert_eq!(ring.retire(n), want);
                } else {
                    t += r % 5;
                    let done = t + (r >> 20) % 700;
                    ring.push(done);
                    queue.push_back(done);
                }
                assert_eq!(
                    usize::from(ring.len) + usize::from(ring.over.is_some()),
                    queue.len().min(RING) + usize::from(queue.len() > RING)
                );
            }
            let rest = queue.iter().copied().max();
            assert_eq!(ring.retire(0), rest);
        }
    }

    #[test]
    fn compute_bound_time_spreads_cycles_over_every_simd() {
        // 192 SIMDs at 2.5 GHz: 480 cycles per ns.
        assert_eq!(XTX.dispatch_ns(480_000, 0, 0), 1000);
        assert_eq!(XTX.dispatch_ns(1, 0, 0), 1);
        assert_eq!(XTX.dispatch_ns(0, 0, 0), 0);
    }

    #[test]
    fn memory_bound_time_is_bytes_over_bandwidth() {
        // 960 GB/s: 96 MB take 100 us, more than the 1 us of compute.
        assert_eq!(XTX.dispatch_ns(480_000, 96_000_000, 0), 100_000);
    }

    #[test]
    fn one_waves_serial_cycles_bound_the_dispatch() {
        // 2.5 GHz: 25 000 serial cycles are 10 us, more than the spread-out 1 us.
        assert_eq!(XTX.dispatch_ns(480_000, 0, 25_000), 10_000);
        assert_eq!(XTX.dispatch_ns(480_000, 0, 2_500), 1000);
    }

    #[test]
    fn costs_follow_simd_width_and_op_class() {
        let mut i = Inst::new(Op::VAddNcU32, Enc::Vop2);
        assert_eq!(cost(Isa::Gfx11, 32, &i).cycles, 1);
        assert_eq!(cost(Isa::Gfx11, 64, &i).cycles, 2);
        assert_eq!(cost(Isa::Gfx9, 64, &i).cycles, 4);
        i.op = Op::VRcpF32;
        assert_eq!(cost(Isa::Gfx11, 32, &i).cycles, 4);
        i.op = Op::VFmaF64;
        assert_eq!(cost(Isa::Gfx11, 32, &i).cycles, 16);
        assert_eq!(cost(Isa::Gfx9, 64, &i).cycles, 4);
        let s = Inst::new(Op::SAddU32, Enc::Sop2);
        assert_eq!(cost(Isa::Gfx9, 64, &s).cycles, 1);
        let g = Inst::new(Op::MLoadB64, Enc::Flat);
        let c = cost(Isa::Gfx11, 32, &g);
        assert_eq!((c.cycles, c.lane_bytes), (4, 8));
        assert_eq!((c.queue, c.latency), (Q_LOAD, VMEM_LATENCY));
    }
}
