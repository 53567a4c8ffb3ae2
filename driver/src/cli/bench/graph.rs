//! The typical graph replay's patch (tinygrad's `HCQGraph` between two runs of a JIT'd model):
//! 1000 launches with fixed arguments and dims, bracketed by a wait on the kickoff signal and a
//! signal of the device timeline; a replay changes the two values and the timeline signal's
//! address (a variable, because of the 2^31 wrap; unchanged here, so not rewritten).
//! `graph_patch_1000_ns` (`hcq_driver::graph::bench::Patch1000`) is the other extreme: every
//! kernel's dims and the input buffer change.

use core::sync::atomic::AtomicU32;

use hcq_core::addr::GpuVa;
use hcq_core::pm4::Program;

use hcq_driver::graph::{
    Arg, BufArg, DimLimits, Dims, DimsArg, Encoded, GraphBuilder, Queue, ScalarArg, SigArg, Value,
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
