//! Hang detection by lack of progress: a wave whose whole state comes back unchanged is in an
//! endless loop, however long a legal kernel runs (there is no default instruction budget).
//!
//! The rule (sim/README.md, "Endless loops"): within one stretch of a wave's execution
//! between barriers (no other wave of its workgroup runs meanwhile, and no other engine of the
//! simulated GPU writes memory while a dispatch runs), the wave's future is fixed by its
//! registers (PC, SGPRs, SCC, EXEC, VCC, M0, MODE, TRAPSTS, VGPRs), its workgroup's LDS, the
//! scalar cache's lines, the workgroup barrier's count and the memory it reads. A wave whose
//! registers, LDS, cache lines and barrier count at a PC equal those of an earlier visit of
//! that PC, with memory provably the same, repeats that stretch forever. Memory is provably
//! the same when the wave wrote nothing in between, or when it wrote exactly the same bytes to
//! the same addresses in the same order as in the stretch before, which began in the same
//! registers (writing a sequence twice leaves what writing it once left). A stretch that read
//! the wave's own cycle counter (`s_getreg` of SHADER_CYCLES, the only input that changes
//! without a write) proves nothing.
//!
//! Checking every instruction would cost the interpreter its speed, so waves are watched in
//! windows at growing intervals (Brent's cycle detection): a wave past [`FIRST_WATCH`]
//! instructions takes a snapshot and is checked at every instruction for the next eighth of
//! what it has executed (its memory accesses through [`Watched`], which logs writes); then it
//! runs unwatched until it has doubled its count, and so on. A cycle of `p` instructions is
//! found once the wave has run about `16 p` instructions (and past [`FIRST_WATCH`]): an
//! `s_branch` to itself within a few milliseconds. At most an eighth of a long wave's
//! instructions pay the check; waves shorter than [`FIRST_WATCH`] pay one compare per
//! instruction, as the old budget did.
//!
//! A repeat whose stretch read global memory is a wave polling memory: only the host could
//! still write it, so it is reported once it has kept repeating for [`POLL_GRACE`] of wall
//! time. A wave whose state never repeats (a counter that climbs past its bound) cannot be
//! told from a long legal loop: it is logged as a warning with its place at every doubling
//! from [`WARN_FROM`] instructions, and stopped only by an instruction budget the user asked
//! for (`HCQ_SIM_INSTRUCTION_BUDGET`, `KernelRegistry::set_instruction_budget`).

use super::{Exec, IsaError, Memory};
use crate::isa::decode::Inst;
use crate::isa::ops::Op;
use crate::vm::{Access, VmFault};
use core::cell::{Cell, RefCell};
use core::time::Duration;
use std::time::Instant;

/// Instructions a wave executes before it is first watched.
pub(crate) const FIRST_WATCH: u64 = 1 << 20;
/// Fewest instructions a watch window lasts.
const MIN_WINDOW: u64 = 1 << 14;
/// Bytes of writes one stretch may log; a stretch that writes more proves nothing.
const LOG_LIMIT: usize = 1 << 20;
/// How long a wave must keep polling unchanged memory before it is reported.
pub(crate) const POLL_GRACE: Duration = Duration::from_secs(2);
/// Instructions after which a wave still running is logged as a warning (then at every
/// doubling).
pub(crate) const WARN_FROM: u64 = 1 << 32;

/// One wave's watch: when the slow path runs next, and the open window if any.
#[derive(Default)]
pub(crate) struct Watch {
    /// The instruction count at which [`tick`] runs next (0: at the wave's first).
    pub(crate) check_at: u64,
    /// The count at which the next window opens.
    next_window: u64,
    /// The count at which the next long-wave warning is logged.
    warn_at: u64,
    window: Option<Box<Window>>,
}

/// An open window: the snapshot, and what the stretches since it did.
struct Window {
    /// The count past which the window closes.
    end: u64,
    /// The count at which the snapshot was taken.
    start: u64,
    /// The count at which the last stretch ended (the snapshot's or a repeat's).
    last: u64,
    snap: Snapshot,
    /// The writes of the previous stretch from the snapshot's registers, when it proved
    /// nothing else (`None`: no such stretch yet, or it read the cycle counter).
    reference: Option<Vec<u8>>,
    /// The current stretch read the cycle counter.
    tainted: bool,
    /// A polling repeat was first proven then.
    polling_since: Option<Instant>,
}

/// The state a wave's future depends on besides memory.
struct Snapshot {
    pc: u64,
    s: [u32; 128],
    scc: bool,
    mode: u32,
    trapsts: u32,
    signals: u32,
    v: Vec<u32>,
    lds: Vec<u8>,
    kcache: Vec<(u64, [u8; 64])>,
}

impl Snapshot {
    fn take(x: &Exec<'_, '_>) -> Self {
        Self {
            pc: x.w.pc,
            s: x.w.s,
            scc: x.w.scc,
            mode: x.w.mode,
            trapsts: x.w.trapsts,
            signals: x.bar.signals,
            v: x.w.v.clone(),
            lds: x.lds.to_vec(),
            kcache: x.kcache.lines.clone(),
        }
    }

    /// Whether `x` is in this state (cheapest fields first).
    fn matches(&self, x: &Exec<'_, '_>) -> bool {
        self.pc == x.w.pc
            && self.scc == x.w.scc
            && self.s == x.w.s
            && self.mode == x.w.mode
            && self.trapsts == x.w.trapsts
            && self.signals == x.bar.signals
            && self.v == x.w.v
            && self.kcache == x.kcache.lines
            && *self.lds == *x.lds
    }
}

/// The memory a watched wave accesses: its writes logged (address, length, bytes), and
/// whether it read any.
pub(crate) struct Watched<'m> {
    inner: &'m dyn Memory,
    log: RefCell<Vec<u8>>,
    overflow: Cell<bool>,
    read: Cell<bool>,
}

impl<'m> Watched<'m> {
    pub(crate) fn new(inner: &'m dyn Memory) -> Self {
        Self {
            inner,
            log: RefCell::new(Vec::new()),
            overflow: Cell::new(false),
            read: Cell::new(false),
        }
    }

    fn record(&self, va: u64, data: &[u8]) {
        let mut log = self.log.borrow_mut();
        if self.overflow.get() || log.len() + data.len() + 16 > LOG_LIMIT {
            self.overflow.set(true);
            return;
        }
        log.extend_from_slice(&va.to_le_bytes());
        // CAST: usize -> u64 widens.
        log.extend_from_slice(&(data.len() as u64).to_le_bytes());
        log.extend_from_slice(data);
    }

    /// The stretch's writes (`None` when they overflowed the log) and whether it read memory;
    /// both start afresh.
    fn take(&self) -> (Option<Vec<u8>>, bool) {
        let log = core::mem::take(&mut *self.log.borrow_mut());
        let over = self.overflow.replace(false);
        let read = self.read.replace(false);
        ((!over).then_some(log), read)
    }
}

impl Memory for Watched<'_> {
    fn read_visible(&self, va: u64, buf: &mut [u8]) -> Result<(), VmFault> {
        self.read.set(true);
        self.inner.read_visible(va, buf)
    }
    fn read(&self, va: u64, buf: &mut [u8], access: Access) -> Result<(), VmFault> {
        // A fetch of the wave's own code is no poll.
        if access != Access::Execute {
            self.read.set(true);
        }
        self.inner.read(va, buf, access)
    }
    fn write(&self, va: u64, data: &[u8]) -> Result<(), VmFault> {
        self.record(va, data);
        self.inner.write(va, data)
    }
    fn read_dwords(&self, va: u64, out: &mut [u32]) -> Result<(), VmFault> {
        self.read.set(true);
        self.inner.read_dwords(va, out)
    }
    fn write_dwords(&self, va: u64, data: &[u32]) -> Result<(), VmFault> {
        let bytes: Vec<u8> = data.iter().flat_map(|d| d.to_le_bytes()).collect();
        self.record(va, &bytes);
        self.inner.write_dwords(va, data)
    }
    fn fill(&self, va: u64, buf: &mut [u8], access: Access) -> Result<(), VmFault> {
        self.read.set(true);
        self.inner.fill(va, buf, access)
    }
    fn used(&self, va: u64, len: usize) {
        self.inner.used(va, len);
    }
}

/// Called when a wave (re)starts running: a window open when it last stopped (at a barrier,
/// where the other waves ran) is closed, its snapshot no longer a state the wave was in alone.
pub(crate) fn resume(w: &mut Watch, executed: u64, budget: u64) {
    if let Some(win) = w.window.take() {
        w.next_window = win.start.saturating_mul(2).max(executed + 1);
        w.check_at = w.next_window.min(w.warn_at).min(budget);
    }
}

/// Whether `i` reads the wave's cycle counter (SHADER_CYCLES, hardware register 29; gfx12's
/// high half 30): the one input that changes with nothing written.
fn reads_clock(i: &Inst) -> bool {
    // CAST: simm16's bits.
    i.op == Op::SGetregB32 && matches!((i.imm as u32) & 63, 29 | 30)
}

/// The slow path, run before instruction `i` at the wave's PC once the wave's count reaches
/// its `check_at`: the user's budget, the long-wave warning, and the watch windows.
pub(crate) fn tick<'a>(
    x: &mut Exec<'a, '_>,
    watched: &'a Watched<'a>,
    i: &Inst,
) -> Result<(), IsaError> {
    let n = x.w.executed;
    let budget = x.l.budget;
    if n >= budget {
        return Err(x.at.msg(&format!(
            "the wave exceeded its instruction budget of {budget} wave instructions (set by HCQ_SIM_INSTRUCTION_BUDGET or KernelRegistry::set_instruction_budget; by default there is none)"
        )));
    }
    if x.w.hang.warn_at == 0 {
        // A new wave's first instruction.
        x.w.hang.next_window = FIRST_WATCH;
        x.w.hang.warn_at = WARN_FROM;
    }
    if n >= x.w.hang.warn_at {
        log::warn!(
            "{}: the wave has executed {n} instructions and still runs {}; its state has not repeated, so the simulator cannot tell an endless loop from a long one (HCQ_SIM_INSTRUCTION_BUDGET stops such a wave)",
            x.l.isa.name(),
            x.at.place()
        );
        x.w.hang.warn_at = x.w.hang.warn_at.saturating_mul(2);
    }
    match x.w.hang.window.take() {
        None if n >= x.w.hang.next_window => {
            // Open a window: snapshot the state before this instruction.
            let _ = watched.take();
            x.w.hang.window = Some(Box::new(Window {
                end: n + (n / 8).max(MIN_WINDOW),
                start: n,
                last: n,
                snap: Snapshot::take(x),
                reference: None,
                tainted: reads_clock(i),
                polling_since: None,
            }));
            x.mem = watched;
            x.w.hang.check_at = n + 1;
            Ok(())
        }
        None => {
            x.w.hang.check_at = x.w.hang.next_window.min(x.w.hang.warn_at).min(budget);
            Ok(())
        }
        Some(mut win) => {
            if n > win.last && win.snap.matches(x) {
                stretch_ended(x, watched, &mut win, n)?;
            }
            if reads_clock(i) {
                win.tainted = true;
            }
            if n >= win.end {
                // Close the window; the next opens when the count has doubled.
                x.mem = watched.inner;
                x.w.hang.next_window = win.start.saturating_mul(2).max(n + 1);
                x.w.hang.check_at = x.w.hang.next_window.min(x.w.hang.warn_at).min(budget);
            } else {
                x.w.hang.window = Some(win);
                x.w.hang.check_at = n + 1;
            }
            Ok(())
        }
    }
}

/// The wave is back in the snapshot's state at instruction count `n`: decides whether the
/// stretch just ended proves an endless loop.
fn stretch_ended(
    x: &Exec<'_, '_>,
    watched: &Watched<'_>,
    win: &mut Window,
    n: u64,
) -> Result<(), IsaError> {
    let period = n - win.last;
    win.last = n;
    let (writes, read) = watched.take();
    let tainted = core::mem::replace(&mut win.tainted, false);
    let proven = !tainted
        && writes
            .as_ref()
            .is_some_and(|w| w.is_empty() || win.reference.as_ref() == Some(w));
    if !proven {
        win.reference = if tainted { None } else { writes };
        win.polling_since = None;
        return Ok(());
    }
    if !read {
        return Err(x.at.msg(&format!(
            "the wave is in an endless loop: every {period} instructions it comes back to the same registers, LDS and memory{}",
            if writes.is_some_and(|w| !w.is_empty()) {
                " (rewriting the same bytes)"
            } else {
                ""
            }
        )));
    }
    // Polling memory: only the host could still write it.
    let since = *win.polling_since.get_or_insert_with(Instant::now);
    if since.elapsed() >= POLL_GRACE {
        return Err(x.at.msg(&format!(
            "the wave is in an endless loop: every {period} instructions it comes back to the same registers and LDS, polling memory that nothing on the GPU writes while the dispatch runs and the host has not written for {} s",
            POLL_GRACE.as_secs()
        )));
    }
    win.end = win.end.max(n + 4 * period);
    Ok(())
}
