//! The simulated GPU's command processors: one engine per queue, executing PM4 (compute) and
//! SDMA (copy) rings.
//!
//! An engine reads its ring from the read pointer to the write pointer announced by the queue's
//! doorbell (monotonic pointers: PM4 in dwords, SDMA in bytes; the ring is indexed modulo its
//! size), decodes each packet in place with core's decoders (`hcq_core::pm4::decode_one`,
//! `hcq_core::sdma::decode_one`) and executes it against a [`GpuBus`] (this GPU's page table,
//! doorbells and interrupt lines). The read pointer is written back to the queue's
//! `read_pointer_address` after each batch. Unknown or malformed packets and any access outside
//! GPU-mapped memory stop the queue and raise the KFD HW-exception or memory-exception event;
//! nothing is skipped, nothing panics, the host is never touched outside mapped memory.
//!
//! Two ways to run ([`SimMode`], the one mode enum of the simulator): **deterministic** (engines advance only in [`Engines::step`] /
//! [`Engines::run_until_idle`], which `SimKfd` calls from WAIT_EVENTS; the GPU clock is virtual,
//! so the same inputs give the same trace) and **threaded** (a thread steps all engines,
//! polling doorbells with acquire loads while the host races it, and stops on drop).
//!
//! Dispatches run asynchronously by default ([`DispatchMode`], `flight.rs`): a DISPATCH_DIRECT
//! stays in flight until a sync point retires it, lands where the seed says, and the race
//! detector faults a queue whose operation overlaps an in-flight dispatch unordered.
//!
//! Layers (a module names only those left of it): `types` < `trace`, `flight`, `cache` < `bus`
//! < `env` < `dispatch` < `pm4`, `sdma` < `op` < `queue`; `membus` and `attach` over `bus`.
//!
//! Fault injection ([`Engines::hang`], [`Engines::stall_rptr`], [`Engines::set_interrupts`],
//! [`Engines::fault_address`]) and a bounded trace ([`Engines::trace`]) serve tests and the CLI.

mod aql;
mod aql_xcc;
pub mod attach;
pub mod bus;
pub mod cache;
mod deadlock;
mod dispatch;
mod env;
mod flight;
pub mod membus;
mod op;
mod pm4;
mod queue;
mod sdma;
pub mod trace;
mod types;
mod xcc;

pub(crate) use crate::clock::Clock;
pub use crate::clock::GPU_CLOCK_HZ;
pub use crate::config::{DISPATCH_ENV, DispatchMode, SEED_ENV, SimMode, env_dispatch, env_seed};
pub use bus::{Access, GPU_PAGE_SIZE, GpuBus, VmFault, VmFaultKind};
pub use dispatch::{LDS_LIMIT, MAX_WORKGROUP_SIZE, MAX_WORKGROUPS};
pub use trace::{DEFAULT_TRACE_CAPACITY, TRACE_PACKET_DWORDS, TraceEntry, TraceEvent};
pub use types::{
    EngineError, InterruptPolicy, QueueDesc, QueueFault, QueueFaultKind, QueueId, QueueKind,
    QueueState, QueueStatus, Site, WaitInfo,
};
pub use xcc::XccSeat;

use crate::stand_ins::KernelRegistry;
use core::fmt;
use core::sync::atomic::{AtomicBool, Ordering};
use core::time::Duration;
use env::Env;
use flight::{Flight, FlightCell, Recorder};
use queue::Queue;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

struct Delayed {
    due: u64,
    bus: Arc<dyn GpuBus>,
    context: u32,
}

/// Interrupts raised and not yet delivered, in the order they were raised.
///
/// Keeps the latest due round so that a round which raises thousands of interrupts (one per
/// signal packet, up to the queue's budget) costs O(1) per interrupt, not a scan of the list.
#[derive(Default)]
struct PendingIrqs {
    list: Vec<Delayed>,
    /// The largest `due` in `list` (exact while `list` is non-empty: delivery removes only
    /// entries due by now, and every entry left is due later than any removed).
    latest: u64,
}

impl PendingIrqs {
    fn latest(&self) -> Option<u64> {
        (!self.list.is_empty()).then_some(self.latest)
    }

    fn push(&mut self, d: Delayed) {
        self.latest = if self.list.is_empty() {
            d.due
        } else {
            self.latest.max(d.due)
        };
        self.list.push(d);
    }

    /// Delivers, in the order raised, every interrupt due by round `now`; true if any was.
    fn deliver_due(&mut self, now: u64) -> bool {
        let before = self.list.len();
        self.list.retain(|d| {
            if d.due <= now {
                d.bus.interrupt(d.context);
                false
            } else {
                true
            }
        });
        self.list.len() != before
    }

    fn is_empty(&self) -> bool {
        self.list.is_empty()
    }
}

struct Inner {
    queues: BTreeMap<QueueId, Queue>,
    registry: KernelRegistry,
    faults: Vec<u64>,
    seq: u64,
    round: u64,
    delayed: PendingIrqs,
    irqs: Vec<u32>,
    trace_cap: usize,
    budget: usize,
    rec: Recorder,
    flight: FlightCell,
}

/// Packets one queue executes per round before the next queue gets its turn.
pub const DEFAULT_BUDGET: usize = 4096;

/// Upper bound on rounds of [`Engines::run_until_idle`] (a stream that never stops
/// progressing, e.g. an IB that calls itself forever, is cut off here).
pub const MAX_IDLE_ROUNDS: u64 = 1 << 20;

impl Inner {
    fn step(&mut self, clock: &Clock) -> bool {
        self.round += 1;
        let mut progressed = false;
        let Inner {
            queues,
            registry,
            faults,
            seq,
            irqs,
            delayed,
            round,
            budget,
            rec,
            flight,
            ..
        } = self;
        for q in queues.values_mut() {
            let bus = Arc::clone(&q.bus);
            let env = Env {
                bus: &*bus,
                faults,
                registry,
                clock,
                rec,
                flight,
            };
            irqs.clear();
            let r = q.step(&env, irqs, seq, *budget);
            progressed |= r.progressed;
            if flight.borrow().active() {
                progressed |= q.age(&env, seq, r.executed, *round);
            }
            for &ctx in irqs.iter() {
                match q.inj.interrupts {
                    InterruptPolicy::Deliver => {
                        // Interrupts travel through the IH ring asynchronously, in order: in
                        // the asynchronous mode the seed delays each by 0..=2 rounds, never
                        // ahead of one raised before it.
                        let late = flight.borrow_mut().interrupt_delay();
                        trace_irq(q, seq, TraceEvent::Interrupt(ctx));
                        let after = delayed.latest();
                        if late == 0 && after.is_none() {
                            q.bus.interrupt(ctx);
                        } else {
                            delayed.push(Delayed {
                                due: (*round + u64::from(late)).max(after.unwrap_or(0)),
                                bus: Arc::clone(&q.bus),
                                context: ctx,
                            });
                        }
                    }
                    InterruptPolicy::Delay(n) => delayed.push(Delayed {
                        due: *round + u64::from(n),
                        bus: Arc::clone(&q.bus),
                        context: ctx,
                    }),
                    InterruptPolicy::Drop => {
                        trace_irq(q, seq, TraceEvent::InterruptDropped(ctx));
                    }
                }
            }
        }
        if !flight.borrow().host.is_empty() {
            // Host accesses whose queued work has all executed (nothing left in flight) are
            // judged: drop them.
            let done: Vec<(u64, u64)> = queues
                .values()
                .filter(|q| !q.inflight.has_pending())
                .map(|q| (flight::queue_key(q.gpu_id, q.desc.doorbell_offset), q.rptr))
                .collect();
            flight
                .borrow_mut()
                .host
                .prune(|key, pos| done.iter().any(|&(k, rptr)| k == key && rptr >= pos));
        }
        let now = *round;
        progressed |= delayed.deliver_due(now);
        // Dispatches in flight age in every round but are not progress by themselves: a host
        // that stops stepping when nothing else moves sees them unfinished, as it would see a
        // GPU finishing late ([`Engines::run_until_idle`] runs them out).
        progressed || !delayed.is_empty()
    }
}

/// The host guard snapshots doorbells as written: an AQL doorbell holds the last packet's
/// index, so the write pointer the race detector compares ring positions with is one more
/// (2^64 - 1, nothing written, becomes 0).
fn aql_write_pointers(queues: &BTreeMap<QueueId, Queue>, host: &mut [crate::mem::HostFault]) {
    let aql: Vec<u64> = queues
        .values()
        .filter(|q| q.desc.kind == QueueKind::Aql)
        .map(|q| flight::queue_key(q.gpu_id, q.desc.doorbell_offset))
        .collect();
    if aql.is_empty() {
        return;
    }
    for h in host {
        for (key, wptr) in &mut h.queued {
            if aql.contains(key) {
                *wptr = wptr.wrapping_add(1);
            }
        }
    }
}

fn trace_irq(q: &mut Queue, seq: &mut u64, ev: TraceEvent) {
    *seq += 1;
    q.trace.event(*seq, Site::Ring(q.rptr), ev);
}

struct Shared {
    inner: Mutex<Inner>,
    clock: Arc<Clock>,
    stop: AtomicBool,
}

/// All engines of a simulated machine (every queue of every GPU).
pub struct Engines {
    shared: Arc<Shared>,
    mode: SimMode,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl fmt::Debug for Engines {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Engines")
            .field("mode", &self.mode)
            .field("queues", &self.lock().queues.len())
            .finish()
    }
}

impl Engines {
    /// Engines with no queues, on a clock of their own; [`SimMode::Threaded`] starts the
    /// engine thread.
    ///
    /// # Errors
    /// [`EngineError::ThreadSpawn`] when the OS cannot start the engine thread.
    pub fn new(mode: SimMode) -> Result<Self, EngineError> {
        let mut engines = Self::on_clock(mode, Arc::new(Clock::new(mode)));
        engines.thread = match mode {
            SimMode::Deterministic => None,
            SimMode::Threaded => {
                let s = Arc::clone(&engines.shared);
                Some(spawn_engine_thread("hcq-sim-engines", move || {
                    run_engine_loop(&s.stop, || {
                        let mut g = s.inner.lock().unwrap_or_else(PoisonError::into_inner);
                        Some(g.step(&s.clock))
                    });
                })?)
            }
        };
        Ok(engines)
    }

    /// Engines with no queues and no thread of their own, on `clock` (the `SimKfd`'s: one
    /// GPU clock for timestamps and GET_CLOCK_COUNTERS). In threaded `mode` the caller runs
    /// the engine loop.
    pub(crate) fn on_clock(mode: SimMode, clock: Arc<Clock>) -> Self {
        let shared = Arc::new(Shared {
            inner: Mutex::new(Inner {
                queues: BTreeMap::new(),
                registry: KernelRegistry::new(),
                faults: Vec::new(),
                seq: 0,
                round: 0,
                delayed: PendingIrqs::default(),
                irqs: Vec::new(),
                trace_cap: DEFAULT_TRACE_CAPACITY,
                budget: DEFAULT_BUDGET,
                rec: Recorder::default(),
                flight: FlightCell::new(Flight::new(
                    // SimKfd::new refused a malformed value (check_env).
                    env_dispatch().unwrap_or_default(),
                    env_seed().unwrap_or_default(),
                    mode == SimMode::Threaded,
                )),
            }),
            clock,
            stop: AtomicBool::new(false),
        });
        Self {
            shared,
            mode,
            thread: None,
        }
    }

    /// The mode.
    #[must_use]
    pub fn mode(&self) -> SimMode {
        self.mode
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.shared
            .inner
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Adds an engine for queue `id` on the GPU behind `bus`.
    ///
    /// # Errors
    /// [`EngineError`] for a duplicate id or a bad ring.
    pub fn add_queue(
        &self,
        id: QueueId,
        desc: QueueDesc,
        bus: Arc<dyn GpuBus>,
    ) -> Result<(), EngineError> {
        if !desc.ring_size.is_power_of_two() || desc.ring_size < 64 {
            return Err(EngineError::BadRingSize(desc.ring_size));
        }
        if desc.ring_base % 256 != 0 {
            return Err(EngineError::BadRingBase(desc.ring_base));
        }
        let mut g = self.lock();
        if g.queues.contains_key(&id) {
            return Err(EngineError::Exists(id));
        }
        let cap = g.trace_cap;
        g.queues.insert(id, Queue::new(id, desc, bus, cap));
        Ok(())
    }

    /// Removes queue `id`'s engine (DESTROY_QUEUE); its trace goes with it.
    ///
    /// # Errors
    /// [`EngineError::NoQueue`].
    pub fn remove_queue(&self, id: QueueId) -> Result<(), EngineError> {
        let mut g = self.lock();
        let q = g.queues.remove(&id).ok_or(EngineError::NoQueue(id))?;
        // Its dispatches go with it (KFD preempts the queue): none stays in flight.
        g.flight.borrow_mut().retire_queue(id);
        drop(q);
        Ok(())
    }

    /// Runs `f` on the kernel registry (to register host kernels).
    pub fn with_kernels<R>(&self, f: impl FnOnce(&mut KernelRegistry) -> R) -> R {
        f(&mut self.lock().registry)
    }

    /// One round: every queue runs up to its budget of packets; delayed interrupts that are
    /// due are delivered. Returns whether anything happened (or is still pending).
    pub fn step(&self) -> bool {
        let mut g = self.lock();
        g.step(&self.shared.clock)
    }

    /// One round after adding the host accesses recorded since the last
    /// (`mem/hostguard.rs`); whether anything changed, and whether the GPU is idle with nothing
    /// queued (every ring drained, nothing in flight, no host access left to judge).
    pub(crate) fn step_with_host(&self, host: Vec<crate::mem::HostFault>) -> (bool, bool) {
        let mut g = self.lock();
        if !host.is_empty() {
            let mut host = host;
            aql_write_pointers(&g.queues, &mut host);
            g.flight.borrow_mut().host.add(host);
        }
        let progressed = g.step(&self.shared.clock);
        let idle = !g.flight.borrow().watching()
            && g.delayed.is_empty()
            && g.queues.values().all(Queue::is_drained);
        (progressed, idle)
    }

    /// The GPU id and doorbell id of queue `id`.
    pub(crate) fn queue_doorbell(&self, id: QueueId) -> Option<(u32, u32)> {
        let g = self.lock();
        let q = g.queues.get(&id)?;
        Some((q.gpu_id, u32::try_from(q.desc.doorbell_offset / 8).ok()?))
    }

    /// Steps until no queue can make progress (every ring drained, blocked or faulted), no
    /// delayed interrupt is pending and no dispatch is in flight (the GPU is idle). Returns the
    /// rounds run.
    pub fn run_until_idle(&self) -> u64 {
        let mut g = self.lock();
        let mut rounds = 0;
        while rounds < MAX_IDLE_ROUNDS && (g.step(&self.shared.clock) || g.flight.borrow().active())
        {
            rounds += 1;
        }
        rounds
    }

    /// How DISPATCH_DIRECT runs from now on, and the seed that picks when asynchronous
    /// dispatches land (`wall`: dispatches of an idle queue also linger some milliseconds of
    /// real time, for engines that race a host thread). Dispatches in flight stay in flight.
    pub fn set_dispatch(&self, mode: DispatchMode, seed: u64, wall: bool) {
        self.lock().flight.borrow_mut().configure(mode, seed, wall);
    }

    /// Dispatches issued and not yet retired, on every queue.
    #[must_use]
    pub fn in_flight(&self) -> usize {
        self.lock().flight.borrow().in_flight()
    }

    /// The GPU clock (100 MHz ticks): virtual in deterministic mode, real time otherwise.
    #[must_use]
    pub fn gpu_clock(&self) -> u64 {
        self.shared.clock.now()
    }

    /// A snapshot of queue `id`.
    #[must_use]
    pub fn queue(&self, id: QueueId) -> Option<QueueStatus> {
        let g = self.lock();
        let q = g.queues.get(&id)?;
        Some(QueueStatus {
            id,
            gpu_id: q.gpu_id,
            kind: q.desc.kind,
            rptr: q.rptr,
            doorbell: q.bus.doorbell(q.desc.doorbell_offset),
            state: q.state.clone(),
            hung: q.inj.hang,
            executed: q.executed,
        })
    }

    /// Snapshots of every queue, in id order.
    #[must_use]
    pub fn queues(&self) -> Vec<QueueStatus> {
        let ids: Vec<QueueId> = self.lock().queues.keys().copied().collect();
        ids.into_iter().filter_map(|id| self.queue(id)).collect()
    }

    /// Whether any queue has faulted.
    #[must_use]
    pub fn any_faulted(&self) -> bool {
        self.lock()
            .queues
            .values()
            .any(|q| matches!(q.state, QueueState::Faulted(_)))
    }

    fn with_queue<R>(
        &self,
        id: QueueId,
        f: impl FnOnce(&mut Queue) -> R,
    ) -> Result<R, EngineError> {
        self.lock()
            .queues
            .get_mut(&id)
            .map(f)
            .ok_or(EngineError::NoQueue(id))
    }

    /// Fault injection: a hung queue stops consuming its ring (until un-hung).
    ///
    /// # Errors
    /// [`EngineError::NoQueue`].
    pub fn hang(&self, id: QueueId, hung: bool) -> Result<(), EngineError> {
        self.with_queue(id, |q| q.inj.hang = hung)
    }

    /// Scheduling: a suspended queue does not run (KFD made it inactive or evicted its GPU's
    /// queues). Unlike [`Engines::hang`], this is the driver's state, not fault injection.
    ///
    /// # Errors
    /// [`EngineError::NoQueue`].
    pub fn suspend(&self, id: QueueId, suspended: bool) -> Result<(), EngineError> {
        self.with_queue(id, |q| q.suspended = suspended)
    }

    /// Seats queue `id` on a multi-XCC node ([`XccSeat`], `engine/xcc.rs`): a PM4 queue runs
    /// on XCC `seat.xcc`, an AQL queue's indirect buffers on each of the `seat.count` XCCs.
    ///
    /// # Errors
    /// [`EngineError::NoQueue`].
    pub fn set_xcc(&self, id: QueueId, seat: XccSeat) -> Result<(), EngineError> {
        self.with_queue(id, |q| q.seat = seat)
    }

    /// Fault injection: the queue keeps executing but does not write its read pointer back
    /// (the producer sees the ring fill up) until un-stalled.
    ///
    /// # Errors
    /// [`EngineError::NoQueue`].
    pub fn stall_rptr(&self, id: QueueId, stalled: bool) -> Result<(), EngineError> {
        self.with_queue(id, |q| q.inj.stall_rptr = stalled)
    }

    /// Fault injection: what happens to the queue's interrupts.
    ///
    /// # Errors
    /// [`EngineError::NoQueue`].
    pub fn set_interrupts(&self, id: QueueId, policy: InterruptPolicy) -> Result<(), EngineError> {
        self.with_queue(id, |q| q.inj.interrupts = policy)
    }

    /// Fault injection: every GPU access that covers byte `va` faults (on every GPU).
    pub fn fault_address(&self, va: u64) {
        let mut g = self.lock();
        if !g.faults.contains(&va) {
            g.faults.push(va);
        }
    }

    /// Removes every injected fault address.
    pub fn clear_fault_addresses(&self) {
        self.lock().faults.clear();
    }

    /// Entries kept per queue from now on (existing traces keep their size until cleared).
    pub fn set_trace_capacity(&self, cap: usize) {
        self.lock().trace_cap = cap;
    }

    /// Packets a queue runs per round (at least 1).
    pub fn set_budget(&self, packets: usize) {
        self.lock().budget = packets.max(1);
    }

    /// Every queue's trace, merged in execution order.
    #[must_use]
    pub fn trace(&self) -> Vec<TraceEntry> {
        let g = self.lock();
        let mut all: Vec<TraceEntry> = g
            .queues
            .values()
            .flat_map(|q| q.trace.entries(q.gpu_id, q.id, q.desc.kind))
            .collect();
        all.sort_by_key(|e| e.seq);
        all
    }

    /// The trace as text, one line per entry.
    #[must_use]
    pub fn trace_text(&self) -> String {
        let mut s = String::new();
        for e in self.trace() {
            s.push_str(&e.to_string());
            s.push('\n');
        }
        s
    }

    /// Clears every trace.
    pub fn clear_trace(&self) {
        for q in self.lock().queues.values_mut() {
            q.trace.clear();
        }
    }
}

/// Rounds without progress the engine thread spins through before it yields, and yields
/// through before it parks.
const IDLE_SPINS: u32 = 64;
const IDLE_YIELDS: u32 = 2048;
/// How long an idle engine thread parks at first (a doorbell's `kick` unparks it sooner); each
/// park without progress doubles it up to [`IDLE_PARK_MAX`]. A client that rings doorbells by
/// plain stores to the mapped page (any KFD client: no `kick`) is found by these rounds, so
/// an idle simulator polls 1 000 times a second, not 20 000 (a fifth of a core).
const IDLE_PARK: Duration = Duration::from_micros(50);
const IDLE_PARK_MAX: Duration = Duration::from_millis(1);

/// The one engine-thread loop (standalone engines and a `SimKfd`'s attached GPU alike): runs
/// `round` until `stop`, spinning, then yielding, then parking while rounds make no progress.
/// `round` returns whether anything happened, or `None` to end the loop (the simulator is gone).
pub(crate) fn run_engine_loop(stop: &AtomicBool, mut round: impl FnMut() -> Option<bool>) {
    let mut idle: u32 = 0;
    let mut park = IDLE_PARK;
    while !stop.load(Ordering::Acquire) {
        let Some(progressed) = round() else { return };
        if progressed {
            idle = 0;
            park = IDLE_PARK;
        } else {
            idle = idle.saturating_add(1);
            if idle < IDLE_SPINS {
                core::hint::spin_loop();
            } else if idle < IDLE_YIELDS {
                std::thread::yield_now();
            } else {
                std::thread::park_timeout(park);
                park = (park * 2).min(IDLE_PARK_MAX);
            }
        }
    }
}

/// Starts an engine thread named `name` running `body` (which runs [`run_engine_loop`]).
pub(crate) fn spawn_engine_thread(
    name: &str,
    body: impl FnOnce() + Send + 'static,
) -> Result<std::thread::JoinHandle<()>, EngineError> {
    std::thread::Builder::new()
        .name(name.into())
        .spawn(body)
        .map_err(|e| EngineError::ThreadSpawn(e.to_string()))
}

impl Engines {
    /// Wakes the engine thread (threaded mode) if it is sleeping, e.g. after a doorbell.
    pub fn kick(&self) {
        if let Some(t) = &self.thread {
            t.thread().unpark();
        }
    }
}

impl Drop for Engines {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
        if let Some(t) = self.thread.take() {
            t.thread().unpark();
            attach::log_join(t);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Delayed, GpuBus, PendingIrqs};
    use crate::engine::membus::MemBus;
    use std::sync::Arc;

    #[test]
    fn pending_irqs_deliver_due_ones_in_raised_order_and_know_the_latest() {
        let bus = MemBus::new(1);
        let dynbus: Arc<dyn GpuBus> = bus.clone();
        let mut p = PendingIrqs::default();
        assert_eq!(p.latest(), None);
        for (due, context) in [(3, 10), (1, 11), (5, 12), (2, 13)] {
            p.push(Delayed {
                due,
                bus: Arc::clone(&dynbus),
                context,
            });
        }
        assert_eq!(p.latest(), Some(5));
        assert!(!p.deliver_due(0));
        assert!(p.deliver_due(3));
        assert_eq!(bus.take_events().interrupts, vec![10, 11, 13]);
        assert_eq!(p.latest(), Some(5));
        assert!(!p.is_empty());
        assert!(!p.deliver_due(4));
        assert!(p.deliver_due(5));
        assert_eq!(bus.take_events().interrupts, vec![12]);
        assert!(p.is_empty());
        assert_eq!(p.latest(), None);
        p.push(Delayed {
            due: 1,
            bus: dynbus,
            context: 14,
        });
        assert_eq!(
            p.latest(),
            Some(1),
            "the latest restarts once the list drained"
        );
    }
}
