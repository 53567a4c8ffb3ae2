//! The XCCs of a multi-XCC node running an AQL queue's `AMD_AQL_FORMAT_PM4_IB` packet: every
//! XCC's command processor runs the indirect buffer (Linux amdkfd `init_mqd_v9_4_3`: one MQD
//! per XCC, all on the same ring), and they run concurrently, each with its own registers and
//! its own IB fetch position. The simulator advances them interleaved, deterministically: one
//! PM4 packet of one XCC, then one of the next XCC that has work, round-robin from XCC 0. An
//! XCC blocked in a WAIT_REG_MEM gives the others their turns, so a wait for a value a later
//! XCC writes resolves as it does on the hardware; the packet waits only when every XCC that
//! has work left is blocked. The packet completes (its release and completion signal, `aql.rs`)
//! once every XCC has returned from the IB.

use super::env::Env;
use super::queue::{Flow, Queue, XccCp};
use super::types::{Cause, QueueState};

impl Queue {
    /// Starts the IB `(base, dwords)` on every XCC after XCC 0 (XCC 0's frame is already the
    /// queue's current one): each gets its own frame and a copy of the registers the packets
    /// before programmed (every CP processed them alike).
    pub(crate) fn aql_xcc_enter(
        &mut self,
        env: &Env<'_>,
        base: u64,
        dwords: u32,
    ) -> Result<(), Cause> {
        self.aql_parked.clear();
        for xcc in 1..self.seat.count {
            self.push_ib(env, base, dwords, 0)?;
            let frame = self.ibs.pop().into_iter().collect();
            self.aql_parked.push_back(XccCp {
                xcc,
                ibs: frame,
                regs: self.regs.clone(),
            });
        }
        Ok(())
    }

    /// Whether an XCC, current or parked, still runs the pending packet's IB.
    pub(crate) fn aql_ib_running(&self) -> bool {
        !self.ibs.is_empty() || self.aql_parked.iter().any(|c| !c.ibs.is_empty())
    }

    /// XCCs with IB work left.
    fn aql_xccs_with_work(&self) -> usize {
        usize::from(!self.ibs.is_empty())
            + self.aql_parked.iter().filter(|c| !c.ibs.is_empty()).count()
    }

    /// Makes the next parked XCC with work the current one (the current goes to the back of
    /// the turn order). `false` when no parked XCC has work (the current stays).
    fn aql_rotate(&mut self) -> bool {
        let Some(i) = self.aql_parked.iter().position(|c| !c.ibs.is_empty()) else {
            return false;
        };
        let Some(mut cp) = self.aql_parked.remove(i) else {
            return false;
        };
        core::mem::swap(&mut self.ibs, &mut cp.ibs);
        core::mem::swap(&mut self.regs, &mut cp.regs);
        core::mem::swap(&mut self.aql_xcc, &mut cp.xcc);
        self.aql_parked.push_back(cp);
        true
    }

    /// The IB phase is over: XCC 0's registers become the queue's again and the parked
    /// states are dropped.
    pub(crate) fn aql_xcc_leave(&mut self) {
        if self.aql_xcc != 0
            && let Some(i) = self.aql_parked.iter().position(|c| c.xcc == 0)
            && let Some(mut cp) = self.aql_parked.remove(i)
        {
            core::mem::swap(&mut self.regs, &mut cp.regs);
        }
        self.aql_parked.clear();
        self.aql_xcc = 0;
    }

    /// One turn of the XCCs running the pending packet's IB: one PM4 packet (or IB entry or
    /// return) of the current XCC, then the next XCC with work becomes current. A blocked XCC
    /// passes its turn; `Flow::Stop` when every XCC with work is blocked (the queue waits) or
    /// the queue faulted; `Flow::Next` with no XCC left running the IB (the packet completes
    /// next).
    pub(crate) fn step_aql_ibs(
        &mut self,
        env: &Env<'_>,
        irqs: &mut Vec<u32>,
        seq: &mut u64,
    ) -> Flow {
        let mut blocked = 0usize;
        loop {
            if self.ibs.is_empty() && !self.aql_rotate() {
                return Flow::Next;
            }
            match self.step_ib(env, irqs, seq) {
                Flow::Next => {
                    self.aql_rotate();
                    return Flow::Next;
                }
                Flow::Stop if matches!(self.state, QueueState::Waiting(_)) => {
                    blocked += 1;
                    if blocked >= self.aql_xccs_with_work() || !self.aql_rotate() {
                        return Flow::Stop;
                    }
                }
                Flow::Stop => {
                    self.aql_parked.clear();
                    return Flow::Stop;
                }
            }
        }
    }
}
