//! The typical graph replay's patch (tinygrad's `HCQGraph` between two runs of a JIT'd model):
//! 1000 launches with fixed arguments and dims, bracketed by a wait on the kickoff signal and a
//! signal of the device timeline; a replay changes the two values and the timeline signal's
//! address (a variable, because of the 2^31 wrap; unchanged here, so not rewritten).
//! `graph_patch_1000_ns` ([`Patch1000`]) is the other extreme: every
//! kernel's dims and the input buffer change.

use core::sync::atomic::AtomicU32;

use hcq_core::addr::{GpuVa, hi32, lo32};
use hcq_core::arch::ArchInfo;
use hcq_core::patch::Op;
use hcq_core::pm4::Program;

use hcq_driver::graph::{
    Arg, BufArg, DimLimits, Dims, DimsArg, Encoded, GraphBuilder, GraphError, Queue, ScalarArg,
    SigArg, Value,
};

use hcq_workloads::{ARCH, WorkError};

/// Kernels in the graph.
pub const KERNELS: usize = 1000;

fn gerr(e: impl core::fmt::Display) -> WorkError {
    WorkError::Sim(format!("graph: {e}"))
}

/// A recorded 1000-kernel graph in (host) memory standing in for its bound GPU copies.
#[derive(Debug)]
pub struct TimelinePatch {
    enc: Encoded,
    ib: Vec<AtomicU32>,
    sdma: Vec<AtomicU32>,
    ka: Vec<AtomicU32>,
    values: Vec<Option<Value>>,
    replay: u64,
}

/// Indices of the variables, in declaration order.
const KICKOFF_VALUE: usize = 1;
const TIMELINE_VALUE: usize = 3;

impl TimelinePatch {
    /// Records and encodes the graph.
    ///
    /// # Errors
    /// If the graph layer refuses (a bug: the inputs are fixed).
    pub fn new() -> Result<Self, WorkError> {
        let mut g = GraphBuilder::new(ARCH);
        let kickoff = g.signal_var(GpuVa(0x5_0000_0000)).map_err(gerr)?;
        let kick_v = g.scalar(1).map_err(gerr)?;
        let timeline = g.signal_var(GpuVa(0x5_0000_1000)).map_err(gerr)?;
        let tl_v = g.scalar(1).map_err(gerr)?;
        let prog = Program {
            prog_addr: GpuVa(0x4000_0000),
            ..Program::default()
        };
        g.wait(
            Queue::Compute,
            SigArg::Var {
                var: kickoff,
                event_mailbox_ptr: 0,
                event_id: 0,
            },
            ScalarArg::Var(kick_v),
        )
        .map_err(|e| WorkError::Sim(format!("graph: {e}")))?;
        g.barrier();
        for i in 0..KERNELS {
            // CAST: i < 1000.
            let off = 8 * i as u64;
            g.launch(
                &prog,
                DimLimits::AMD,
                &[
                    Arg::Buf(BufArg::Fixed(GpuVa(0x1_0000_0000 + off))),
                    Arg::Buf(BufArg::Fixed(GpuVa(0x3_0000_0000 + off))),
                ],
                DimsArg::Fixed(Dims {
                    global: [64, 1, 1],
                    local: [64, 1, 1],
                }),
            )
            .map_err(gerr)?;
        }
        g.signal(
            Queue::Compute,
            SigArg::Var {
                var: timeline,
                event_mailbox_ptr: 0x5_0000_2008,
                event_id: 9,
            },
            ScalarArg::Var(tl_v),
        )
        .map_err(|e| WorkError::Sim(format!("graph: {e}")))?;
        let enc = g.encode(GpuVa(0x2_0000_0000)).map_err(gerr)?;
        let atom = |d: &[u32]| d.iter().map(|&x| AtomicU32::new(x)).collect::<Vec<_>>();
        let mut s = Self {
            ib: atom(enc.pm4.as_dwords()),
            sdma: atom(enc.sdma.as_dwords()),
            ka: atom(&enc.kernargs),
            values: g.initial_values(),
            enc,
            replay: 1,
        };
        if s.values.len() != 4 {
            return Err(WorkError::Unexpected("the graph does not have 4 variables"));
        }
        if s.run()? != 3 {
            return Err(WorkError::Unexpected(
                "a timeline replay does not patch exactly 3 dwords",
            ));
        }
        Ok(s)
    }

    /// One replay's patch: new kickoff and timeline values. Returns the dwords written.
    ///
    /// # Errors
    /// As [`Encoded::apply`].
    #[inline]
    pub fn run(&mut self) -> Result<usize, WorkError> {
        self.replay += 1;
        if let Some(v) = self.values.get_mut(KICKOFF_VALUE) {
            *v = Some(Value::Scalar(self.replay));
        }
        if let Some(v) = self.values.get_mut(TIMELINE_VALUE) {
            *v = Some(Value::Scalar(self.replay));
        }
        let mut t: [&[AtomicU32]; 3] = [&self.ib, &self.sdma, &self.ka];
        self.enc.apply(&self.values, &mut t).map_err(gerr)
    }
}

/// `graph_patch_1000_ns`: a 1000-kernel graph bound into (host) memory, ready to patch, where a
/// replay changes every kernel's dims and the input buffer.
pub struct Patch1000 {
    enc: Encoded,
    ib: Vec<AtomicU32>,
    sdma: Vec<AtomicU32>,
    ka: Vec<AtomicU32>,
    sets: [Vec<Option<Value>>; 2],
    flip: usize,
    /// Every dword the patch writes, per target, for [`Patch1000::store_floor_once`].
    floor: [Vec<u32>; 3],
    /// State of [`Patch1000::hand_once`].
    hand: Hand,
}

/// [`Patch1000::hand_once`]: what a loop written for this one graph shape keeps, in place of
/// the table: the record-time positions and its own previous values.
#[derive(Debug, Default)]
struct Hand {
    /// Kernargs dword of each kernel's input pointer, and its offset into the buffer.
    input_at: Vec<(u32, u32)>,
    /// PM4 dword of each kernel's DISPATCH_DIRECT x (global) and COMPUTE_NUM_THREAD_X (local).
    dims_at: Vec<(u32, u32)>,
    /// Bytes the input buffer must hold.
    input_bytes: u64,
    prev_input: u64,
    prev_dims: Vec<Dims>,
    flip: usize,
}

impl core::fmt::Debug for Patch1000 {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Patch1000").field("enc", &self.enc).finish()
    }
}

/// Kernels in the benchmark graph.
pub const PATCH1000_KERNELS: usize = 1000;

fn patch1000_dims(i: usize, replay: u32) -> Dims {
    // CAST: i < 1000.
    let i = i as u32;
    Dims {
        global: [1 + (i + replay) % 64, 1 + replay % 3, 1],
        local: [32 + (replay % 2) * 32, 1, 1],
    }
}

fn patch1000_values(replay: u32) -> Vec<Option<Value>> {
    let mut v = vec![Some(Value::Addr {
        addr: GpuVa(0x1_0000_0000 + 0x10_0000 * u64::from(replay % 16)),
        bytes: 1 << 20,
    })];
    v.extend((0..PATCH1000_KERNELS).map(|i| Some(Value::Dims(patch1000_dims(i, replay)))));
    v
}

impl Patch1000 {
    /// Records the graph: 1000 launches, each with its own dims variable, all reading one
    /// input buffer variable (at their own offset) and writing a fixed buffer.
    pub fn new(arch: &'static ArchInfo) -> Result<Self, GraphError> {
        let mut g = GraphBuilder::new(arch);
        let input = g.buffer(GpuVa(0x1_0000_0000), 1 << 20)?;
        let prog = Program {
            prog_addr: GpuVa(0x4000_0000),
            ..Program::default()
        };
        for i in 0..PATCH1000_KERNELS {
            let d = g.dims(patch1000_dims(i, 0))?;
            let off = 8 * i as u64;
            g.launch(
                &prog,
                DimLimits::AMD,
                &[
                    Arg::Buf(BufArg::Var {
                        var: input,
                        offset: off,
                        bytes: 8,
                    }),
                    Arg::Buf(BufArg::Fixed(GpuVa(0x3_0000_0000 + off))),
                ],
                DimsArg::Var(d),
            )?;
        }
        let enc = g.encode(GpuVa(0x2_0000_0000))?;
        let atom = |d: &[u32]| d.iter().map(|&x| AtomicU32::new(x)).collect::<Vec<_>>();
        let mut floor: [Vec<u32>; 3] = Default::default();
        for e in enc.table.entries() {
            if let Some(f) = floor.get_mut(usize::from(e.target)) {
                // CAST: an op spans at most 3 dwords.
                f.extend((0..e.op.span() as u32).map(|k| e.dword + k));
            }
        }
        for f in &mut floor {
            f.sort_unstable();
        }
        let mut hand = Hand {
            dims_at: vec![(0, 0); PATCH1000_KERNELS],
            prev_dims: (0..PATCH1000_KERNELS)
                .map(|i| patch1000_dims(i, 0))
                .collect(),
            prev_input: 0x1_0000_0000,
            ..Hand::default()
        };
        for e in enc.table.entries() {
            let kernel = e.var.index().wrapping_sub(1);
            match (e.op, hand.dims_at.get_mut(kernel)) {
                (Op::Split64 { add }, _) => hand.input_at.push((e.dword, add)),
                (Op::Dwords { first: 0, n: 3 }, Some(at)) => at.0 = e.dword,
                (Op::Dwords { first: 3, n: 3 }, Some(at)) => at.1 = e.dword,
                _ => {
                    return Err(GraphError::Invalid(
                        "Patch1000: an entry of another shape".into(),
                    ));
                }
            }
        }
        if let Some(input) = enc.table.entries().first().map(|e| e.var) {
            hand.input_bytes = enc.table.required_bytes(input)?;
        }
        Ok(Self {
            ib: atom(enc.pm4.as_dwords()),
            sdma: atom(enc.sdma.as_dwords()),
            ka: atom(&enc.kernargs),
            enc,
            sets: [patch1000_values(1), patch1000_values(2)],
            flip: 0,
            floor,
            hand,
        })
    }

    /// One replay's patch: every kernel's dims and the input buffer change. Returns the
    /// dwords written.
    pub fn patch_once(&mut self) -> Result<usize, GraphError> {
        self.flip ^= 1;
        let set = self.sets.get(self.flip).map_or(&[][..], |s| &s[..]);
        let mut t: [&[AtomicU32]; 3] = [&self.ib, &self.sdma, &self.ka];
        self.enc.apply(set, &mut t)
    }

    /// The floor under [`Self::patch_once`]: plain stores of every dword it writes, at the
    /// same places, with no values to check or compute (`graph_patch_1000_floor_ns`).
    /// Returns the dwords written.
    pub fn store_floor_once(&mut self) -> usize {
        self.flip ^= 1;
        // CAST: a benchmark counter.
        let v = self.flip as u32;
        let mut n = 0;
        for (mem, idx) in [&self.ib, &self.sdma, &self.ka]
            .into_iter()
            .zip(&self.floor)
        {
            for &i in idx {
                if let Some(w) = mem.get(i as usize) {
                    w.store(v, core::sync::atomic::Ordering::Relaxed);
                }
            }
            n += idx.len();
        }
        n
    }

    /// The same replay as [`Self::patch_once`] by a loop written for this one graph shape, with
    /// the same checks (every value present and of its kind, the buffer large enough, dims
    /// inside [`DimLimits::AMD`], nothing written unless all pass) and the same dwords written,
    /// into the same memory: what the table's generality costs (`graph_patch_1000_hand_ns`).
    /// Returns the dwords written, `None` if a value is refused.
    pub fn hand_once(&mut self) -> Option<usize> {
        let h = &mut self.hand;
        h.flip ^= 1;
        let set = self.sets.get(h.flip).map_or(&[][..], |s| &s[..]);
        let Some((Some(Value::Addr { addr, bytes }), dims)) = set.split_first() else {
            return None;
        };
        if *bytes < h.input_bytes || addr.get().checked_add(*bytes).is_none() {
            return None;
        }
        let dims = dims.get(..h.prev_dims.len())?;
        // DimLimits::AMD, as this graph's kernels were recorded with: any non-zero workgroup
        // count, 1..=1024 work-items per axis and per workgroup.
        const MAX_LOCAL: u32 = 1024;
        const _: () = assert!(
            DimLimits::AMD.max_threads == MAX_LOCAL
                && DimLimits::AMD.max_local[0] == MAX_LOCAL
                && DimLimits::AMD.max_local[1] == MAX_LOCAL
                && DimLimits::AMD.max_local[2] == MAX_LOCAL
                && DimLimits::AMD.max_global[0] == u32::MAX
                && DimLimits::AMD.max_global[1] == u32::MAX
                && DimLimits::AMD.max_global[2] == u32::MAX
        );
        for v in dims {
            let Some(Value::Dims(d)) = v else {
                return None;
            };
            let [l0, l1, l2] = d.local;
            let threads = (u64::from(l0) * u64::from(l1)).saturating_mul(u64::from(l2));
            if d.global.contains(&0)
                || d.local.iter().any(|&x| !(1..=MAX_LOCAL).contains(&x))
                || threads > u64::from(MAX_LOCAL)
            {
                return None;
            }
        }
        let mut n = 0;
        let store = |mem: &[AtomicU32], at: u32, vals: &[u32]| {
            let at = at as usize;
            if let Some(w) = mem.get(at..at + vals.len()) {
                for (w, &v) in w.iter().zip(vals) {
                    w.store(v, core::sync::atomic::Ordering::Relaxed);
                }
            }
            vals.len()
        };
        let a = addr.get();
        if a != h.prev_input {
            for &(at, add) in &h.input_at {
                let x = a.wrapping_add(u64::from(add));
                n += store(&self.ka, at, &[lo32(x), hi32(x)]);
            }
            h.prev_input = a;
        }
        for ((v, prev), &(g_at, l_at)) in dims.iter().zip(&mut h.prev_dims).zip(&h.dims_at) {
            let Some(Value::Dims(d)) = v else { continue };
            if d.global != prev.global {
                n += store(&self.ib, g_at, &d.global);
            }
            if d.local != prev.local {
                n += store(&self.ib, l_at, &d.local);
            }
            *prev = *d;
        }
        Some(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patch1000_patches_what_a_replay_changes() {
        let mut p = Patch1000::new(ARCH).unwrap();
        // First from the recorded values: only the grids (local stays 32) + 1000 input pointers.
        assert_eq!(p.patch_once().unwrap(), 5000);
        // Then both halves of every kernel's dims alternate: 1000 * 6 + 1000 * 2.
        assert_eq!(p.patch_once().unwrap(), 8000);
        assert_eq!(p.patch_once().unwrap(), 8000);
        // The floor stores exactly the dwords a full patch writes.
        assert_eq!(p.store_floor_once(), 8000);
    }

    #[test]
    fn hand_written_loop_writes_what_the_table_writes() {
        let mut table = Patch1000::new(ARCH).unwrap();
        let mut hand = Patch1000::new(ARCH).unwrap();
        let words = |p: &Patch1000| -> Vec<u32> {
            p.ib.iter()
                .chain(&p.ka)
                .map(|w| w.load(core::sync::atomic::Ordering::Relaxed))
                .collect()
        };
        for written in [5000, 8000, 8000, 8000] {
            assert_eq!(table.patch_once().unwrap(), written);
            assert_eq!(hand.hand_once().unwrap(), written);
            assert_eq!(words(&table), words(&hand));
        }
        // It refuses what the table refuses, writing nothing.
        let before = words(&hand);
        for set in &mut hand.sets {
            set[500] = Some(Value::Dims(Dims {
                global: [1, 1, 1],
                local: [1025, 1, 1],
            }));
        }
        assert!(hand.hand_once().is_none());
        assert!(hand.patch_once().is_err());
        assert_eq!(words(&hand), before);
    }
}
