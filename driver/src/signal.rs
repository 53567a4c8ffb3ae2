//! Signals (`amd_signal_t` slots in the shared signal page), KFD events, and waits with a
//! deadline that surface GPU faults.

use crate::buffer::{Bo, BoOptions};
use crate::error::{Error, MemoryKind, QueueState, Result, WaitReport};
use crate::kfd_core::KfdCore;
use crate::sync::lock;
use core::sync::atomic::{AtomicU64, Ordering};
use core::time::Duration;
use hcq_core::addr::GpuVa;
use hcq_core::kfd::{self as abi, Errno};
use hcq_core::signal::{self as sig, SIGNAL_SIZE, SignalPool, SignalRef, SignalSlot};
use log::{debug, trace};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Signals in the shared signal page.
pub const SIGNAL_COUNT: u32 = 1024;

/// How long a wait spins before it sleeps in WAIT_EVENTS.
const SPIN_FOR: Duration = Duration::from_micros(2);
/// Longest single WAIT_EVENTS sleep on a signal with an event.
const SLEEP_WITH_EVENT_MS: u32 = 50;
/// WAIT_EVENTS sleep for a signal without an event (it polls the fault events meanwhile).
const SLEEP_WITHOUT_EVENT_MS: u32 = 1;

/// A KFD event, destroyed on drop.
#[derive(Debug)]
pub(crate) struct Event {
    core: Arc<KfdCore>,
    /// Event id.
    pub(crate) id: u32,
    /// Slot in the event page (signal events).
    pub(crate) slot: u32,
}

impl Event {
    pub(crate) fn create(core: &Arc<KfdCore>, event_type: u32, page_handle: u64) -> Result<Self> {
        let mut args = abi::CreateEventArgs {
            event_page_offset: page_handle,
            event_type,
            auto_reset: u32::from(event_type == abi::KFD_IOC_EVENT_SIGNAL),
            ..Default::default()
        };
        core.ioctl(abi::AMDKFD_IOC_CREATE_EVENT, &mut args)
            .map_err(|e| match e {
                Errno::ENOSPC => Error::Exhausted("KFD signal events"),
                e => Error::sys("CREATE_EVENT", e),
            })?;
        debug!(
            "CREATE_EVENT type {event_type}: id {} slot {}",
            args.event_id, args.event_slot_index
        );
        Ok(Self {
            core: Arc::clone(core),
            id: args.event_id,
            slot: args.event_slot_index,
        })
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        let mut args = abi::DestroyEventArgs {
            event_id: self.id,
            pad: 0,
        };
        if let Err(e) = self
            .core
            .ioctl_teardown(abi::AMDKFD_IOC_DESTROY_EVENT, &mut args)
        {
            log::error!("DESTROY_EVENT {} failed: {e}", self.id);
        }
    }
}

/// The process-wide signal page (a GTT uncached BO of [`SIGNAL_COUNT`] `amd_signal_t`), the
/// event page, and the memory-fault and hardware-exception events every wait also listens to.
pub(crate) struct SignalPages {
    core: Arc<KfdCore>,
    /// The GPU the pages were made for (a timeout's cause is asked of it).
    gpu_id: u32,
    signals: Bo,
    events: Bo,
    // CAST: a small constant.
    pool: SignalPool<{ SIGNAL_COUNT as usize / 64 }>,
    /// The event registered together with the event page, handed to the first signal event.
    spare: Mutex<Option<Event>>,
    memory_event: Event,
    hw_event: Event,
}

impl core::fmt::Debug for SignalPages {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("SignalPages")
            .field("signals", &self.signals)
            .field("events", &self.events)
            .finish_non_exhaustive()
    }
}

impl SignalPages {
    pub(crate) fn new(core: &Arc<KfdCore>, gpu_id: u32) -> Result<Self> {
        let uncached = BoOptions {
            uncached: true,
            ..BoOptions::default()
        };
        let signals = core.alloc(
            gpu_id,
            // CAST: SIGNAL_SIZE is 64.
            u64::from(SIGNAL_COUNT) * SIGNAL_SIZE as u64,
            MemoryKind::Gtt,
            uncached,
        )?;
        let mut events = core.alloc(gpu_id, abi::KFD_EVENT_PAGE_SIZE, MemoryKind::Gtt, uncached)?;
        // The first signal event registers the event page (its handle in event_page_offset);
        // from then on KFD refuses to free it (EPERM): it goes with the process.
        let first = Event::create(core, abi::KFD_IOC_EVENT_SIGNAL, events.handle())?;
        events.set_keep();
        let memory_event = Event::create(core, abi::KFD_IOC_EVENT_MEMORY, 0)?;
        let hw_event = Event::create(core, abi::KFD_IOC_EVENT_HW_EXCEPTION, 0)?;
        let pool = SignalPool::new(signals.va(), SIGNAL_COUNT)
            .map_err(|e| Error::Protocol(format!("signal pool: {e}")))?;
        Ok(Self {
            core: Arc::clone(core),
            gpu_id,
            signals,
            events,
            pool,
            spare: Mutex::new(Some(first)),
            memory_event,
            hw_event,
        })
    }

    /// Maps both pages to another GPU.
    pub(crate) fn map_to(&self, gpu_id: u32) -> Result<()> {
        self.signals.map_to(gpu_id)?;
        self.events.map_to(gpu_id)
    }

    /// A new auto-reset signal event (the page's registration event first).
    pub(crate) fn signal_event(&self) -> Result<Event> {
        if let Some(e) = lock(&self.spare).take() {
            return Ok(e);
        }
        Event::create(&self.core, abi::KFD_IOC_EVENT_SIGNAL, 0)
    }

    /// Sleeps in WAIT_EVENTS for up to `ms` on `event` (if any) and the fault events; returns
    /// the fault KFD reported, if one did.
    pub(crate) fn sleep(&self, event: Option<u32>, ms: u32) -> Result<Option<Fault>> {
        let mut events = Vec::with_capacity(3);
        if let Some(id) = event {
            events.push(abi::EventData::for_event(id));
        }
        let mem_idx = events.len();
        events.push(abi::EventData::for_event(self.memory_event.id));
        events.push(abi::EventData::for_event(self.hw_event.id));
        let mut args = abi::WaitEventsArgs {
            timeout: ms,
            ..Default::default()
        };
        match self.core.request(
            "WAIT_EVENTS",
            abi::Request::wait_events(&mut args, &mut events),
        ) {
            Ok(()) | Err(Errno::EINTR) => {}
            Err(e) => return Err(Error::sys("WAIT_EVENTS", e)),
        }
        trace!("WAIT_EVENTS result {}", args.wait_result);
        if let Some(m) = events.get(mem_idx).map(abi::EventData::memory_exception)
            && (m.gpu_id != 0 || m.va != 0)
        {
            // KFD sets ReadOnly for every faulting write (`prot_write`), NotPresent for a page
            // that is not mapped: a write to an unmapped page has both.
            let kind = if m.failure.not_present != 0 {
                "page not present"
            } else if m.failure.read_only != 0 {
                "write to read-only page"
            } else if m.failure.no_execute != 0 {
                "execute of no-execute page"
            } else {
                "page not present"
            };
            return Ok(Some(Fault {
                addr: Some(m.va),
                what: self.with_reasons(
                    m.gpu_id,
                    format!("MMU fault on gpu {:#x}: {kind}", m.gpu_id),
                ),
            }));
        }
        if let Some(h) = events.get(mem_idx + 1).map(abi::EventData::hw_exception)
            && h.gpu_id != 0
        {
            let cause = if h.reset_cause == abi::KFD_HW_EXCEPTION_ECC {
                "ECC error"
            } else {
                "GPU hang"
            };
            return Ok(Some(Fault {
                addr: None,
                what: self.with_reasons(
                    h.gpu_id,
                    format!(
                        "hardware exception on gpu {:#x}: {cause}, memory lost: {}",
                        h.gpu_id,
                        h.memory_lost != 0
                    ),
                ),
            }));
        }
        Ok(None)
    }

    /// At a timeout without a fault: the reasons the port gives for this GPU (a simulator's
    /// diagnosis of waits only the host can satisfy, `simulator: deadlock: ...`), as the
    /// report's cause; `None` on real KFD.
    fn stall(&self) -> Option<Fault> {
        let mut what = String::new();
        self.core.sys.fault_reasons(self.gpu_id, &mut |r| {
            if !what.is_empty() {
                what.push_str("; ");
            }
            what.push_str("simulator: ");
            what.push_str(r);
        });
        (!what.is_empty()).then_some(Fault { addr: None, what })
    }

    /// `what`, followed by the reasons the port gave for `gpu_id`'s faults (a simulator's
    /// `; simulator: ...`; nothing on real KFD).
    fn with_reasons(&self, gpu_id: u32, mut what: String) -> String {
        self.core.sys.fault_reasons(gpu_id, &mut |r| {
            what.push_str("; simulator: ");
            what.push_str(r);
        });
        what
    }

    fn mailbox_addr(&self, slot: u32) -> u64 {
        self.events.va() + u64::from(slot) * abi::KFD_EVENT_SLOT_SIZE
    }

    fn cell(&self, slot: u32, field: u64) -> Option<&AtomicU64> {
        self.signals
            .mapping()
            // CAST: SIGNAL_SIZE is 64.
            .u64_at(u64::from(slot) * SIGNAL_SIZE as u64 + field)
    }
}

/// A fault KFD reported through the memory or hardware-exception event.
#[derive(Clone, Debug)]
pub(crate) struct Fault {
    /// Faulting GPU VA (memory faults).
    pub(crate) addr: Option<u64>,
    /// Description.
    pub(crate) what: String,
}

/// A 64-byte `amd_signal_t` in GPU-visible memory: the GPU writes and compares its 32-bit value,
/// writes timestamps into it, and (with a KFD event) interrupts host waiters.
///
/// Dropping a signal returns its slot to the pool; drop it only when no queued work will still
/// write or wait on it (the driver's timeline signals live as long as their device).
#[derive(Debug)]
pub struct Signal {
    pages: Arc<SignalPages>,
    slot: SignalSlot,
    event: Option<Event>,
}

impl Signal {
    /// Takes a slot, sets the value to `value` and the event fields from `event`.
    pub(crate) fn new(pages: &Arc<SignalPages>, value: u64, event: Option<Event>) -> Result<Self> {
        let slot = pages
            .pool
            .alloc()
            .map_err(|_| Error::Exhausted("signal slots"))?;
        let s = Self {
            pages: Arc::clone(pages),
            slot,
            event,
        };
        let r = s.signal_ref();
        // CAST: the kind is the positive constant 1.
        s.store(0, sig::SIGNAL_KIND_USER as u64);
        s.store(sig::EVENT_MAILBOX_PTR_OFFSET, r.event_mailbox_ptr);
        s.store(sig::EVENT_ID_OFFSET, u64::from(r.event_id));
        s.store(sig::START_TS_OFFSET, 0);
        s.store(sig::END_TS_OFFSET, 0);
        s.set(value);
        Ok(s)
    }

    fn store(&self, field: u64, v: u64) {
        if let Some(c) = self.pages.cell(self.slot.index(), field) {
            c.store(v, Ordering::Release);
        }
    }

    fn load(&self, field: u64) -> u64 {
        self.pages
            .cell(self.slot.index(), field)
            .map_or(0, |c| c.load(Ordering::Acquire))
    }

    /// GPU address of the `amd_signal_t`.
    #[must_use]
    pub fn addr(&self) -> GpuVa {
        GpuVa(self.slot.addr())
    }

    /// What command encoders need: address, event mailbox and event id.
    #[must_use]
    pub fn signal_ref(&self) -> SignalRef {
        match &self.event {
            Some(e) => SignalRef {
                addr: self.slot.addr(),
                event_mailbox_ptr: self.pages.mailbox_addr(e.slot),
                event_id: e.id,
            },
            None => SignalRef::new(self.slot.addr()),
        }
    }

    /// The current value.
    #[must_use]
    pub fn value(&self) -> u64 {
        self.load(sig::VALUE_OFFSET)
    }

    /// Sets the value from the host (a queue blocked on it proceeds).
    pub fn set(&self, value: u64) {
        self.store(sig::VALUE_OFFSET, value);
    }

    /// The start timestamp the GPU wrote (GPU clock ticks).
    #[must_use]
    pub fn start_ts(&self) -> u64 {
        self.load(sig::START_TS_OFFSET)
    }

    /// The end timestamp the GPU wrote (GPU clock ticks).
    #[must_use]
    pub fn end_ts(&self) -> u64 {
        self.load(sig::END_TS_OFFSET)
    }

    /// Waits until the value is at least `target`; see [`wait_for`] for the details.
    pub(crate) fn wait_with(
        &self,
        target: u64,
        timeout: Duration,
        queues: &dyn Fn() -> Vec<QueueState>,
    ) -> Result<()> {
        wait_for(self, target, timeout, queues)
    }
}

impl Drop for Signal {
    fn drop(&mut self) {
        if let Err(e) = self.pages.pool.free(self.slot) {
            log::error!("freeing signal slot: {e}");
        }
    }
}

/// Waits until `signal`'s value is at least `target`: spins briefly, then sleeps in WAIT_EVENTS
/// on the signal's event (if any) plus the memory-fault and hardware-exception events. The
/// deadline restarts whenever the value moves (a long stream of work is not a hang).
///
/// # Errors
/// [`Error::DeviceFault`] when KFD reports a GPU memory fault (with the address) or a hardware
/// exception; [`Error::Timeout`] when `timeout` passes without progress; WAIT_EVENTS failures.
pub(crate) fn wait_for(
    signal: &Signal,
    target: u64,
    timeout: Duration,
    queues: &dyn Fn() -> Vec<QueueState>,
) -> Result<()> {
    // Complete already (the common case: a replay's wait for its previous run): no clock read.
    if signal.value() >= target {
        return Ok(());
    }
    let start = Instant::now();
    let pages = &signal.pages;
    // One non-blocking poll first: it reports a fault at once (and lets a deterministic
    // simulator run its engines), then a short spin before sleeping.
    if let Some(f) = pages.sleep(None, 0)? {
        return Err(Error::DeviceFault(Box::new(WaitReport {
            waited: crate::error::Waited::Signal,
            signal_addr: signal.addr(),
            expected: target,
            seen: signal.value(),
            waited_ms: 0,
            queues: queues(),
            fault_addr: f.addr,
            fault: Some(f.what),
        })));
    }
    while start.elapsed() < SPIN_FOR {
        if signal.value() >= target {
            return Ok(());
        }
        core::hint::spin_loop();
    }
    let mut seen = signal.value();
    let mut progress_at = Instant::now();
    loop {
        if seen >= target {
            return Ok(());
        }
        let sleep_ms = if signal.event.is_some() {
            SLEEP_WITH_EVENT_MS
        } else {
            SLEEP_WITHOUT_EVENT_MS
        };
        let remaining = timeout.saturating_sub(progress_at.elapsed());
        let ms = u32::try_from(remaining.as_millis())
            .unwrap_or(u32::MAX)
            .clamp(1, sleep_ms);
        let fault = pages.sleep(signal.event.as_ref().map(|e| e.id), ms)?;
        let report = |fault: Option<Fault>| {
            Box::new(WaitReport {
                waited: crate::error::Waited::Signal,
                signal_addr: signal.addr(),
                expected: target,
                seen: signal.value(),
                // CAST: a wait of 2^64 ms does not happen.
                waited_ms: start.elapsed().as_millis() as u64,
                queues: queues(),
                fault_addr: fault.as_ref().and_then(|f| f.addr),
                fault: fault.map(|f| f.what),
            })
        };
        if let Some(f) = fault {
            return Err(Error::DeviceFault(report(Some(f))));
        }
        let v = signal.value();
        if v != seen {
            seen = v;
            progress_at = Instant::now();
        } else if progress_at.elapsed() >= timeout {
            // A simulator says why its GPU cannot move by itself (a wait only the host can
            // satisfy): the timeout's cause. Nothing on real KFD.
            return Err(Error::Timeout(report(pages.stall())));
        }
    }
}
