//! Events: CREATE / DESTROY / SET / RESET / WAIT_EVENTS, the event page, interrupts from an
//! engine, memory-fault and HW-exception events, interrupt fault injection, threaded waits.

mod common;

use common::{Buf, GTT_FLAGS, Proc, cpu_read};
use core::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use hcq_core::kfd::*;
use hcq_sim::engine::VmFaultKind;
use hcq_sim::{Engine, GpuFault, SimConfig, SimKfd, SimMode};
use std::sync::Arc;

const COMPLETE: u32 = KFD_IOC_WAIT_RESULT_COMPLETE;
const TIMEOUT: u32 = KFD_IOC_WAIT_RESULT_TIMEOUT;

fn with_page() -> (Proc, Buf) {
    let p = Proc::one();
    let page = p.alloc(KFD_EVENT_PAGE_SIZE, GTT_FLAGS);
    (p, page)
}

fn wait1(p: &Proc, id: u32, timeout: u32) -> u32 {
    let mut e = [EventData::for_event(id)];
    p.wait(&mut e, true, timeout).unwrap()
}

/// Completes a signal the way the CP does, once: write the event id to the mailbox, interrupt.
struct OneShot {
    gpu: u32,
    mailbox: u64,
    event_id: u32,
    fired: AtomicBool,
    runs: AtomicU32,
}

impl Engine for OneShot {
    fn run(&self, sim: &SimKfd) -> bool {
        self.runs.fetch_add(1, Ordering::Relaxed);
        if self.fired.swap(true, Ordering::Relaxed) {
            return false;
        }
        sim.gpu_write_u64(self.gpu, self.mailbox, u64::from(self.event_id))
            .unwrap();
        sim.signal_interrupt(self.gpu, self.event_id);
        true
    }
}

fn one_shot(p: &Proc, page: &Buf, id: u32) -> Arc<OneShot> {
    let e = Arc::new(OneShot {
        gpu: p.gpu(),
        mailbox: page.va + 8 * u64::from(id),
        event_id: id,
        fired: AtomicBool::new(false),
        runs: AtomicU32::new(0),
    });
    p.sim.set_engine(e.clone());
    e
}

#[test]
fn event_page_from_a_handle() {
    let (p, page) = with_page();
    let e = p
        .create_event(KFD_IOC_EVENT_SIGNAL, true, page.handle)
        .unwrap();
    assert_eq!(
        (e.event_id, e.event_slot_index, e.event_trigger_data),
        (1, 1, 1)
    );
    assert_eq!(e.event_page_offset, KFD_MMAP_TYPE_EVENTS);
    assert_eq!(cpu_read::<u64>(page.va), u64::MAX, "page memset to 0xFF");
    assert_eq!(cpu_read::<u64>(page.va + 0x7FF8), u64::MAX);
    // A page exists: giving one again is EINVAL, even the same handle.
    assert_eq!(
        p.create_event(KFD_IOC_EVENT_SIGNAL, true, page.handle)
            .unwrap_err(),
        Errno::EINVAL
    );
    let e2 = p.create_event(KFD_IOC_EVENT_SIGNAL, false, 0).unwrap();
    assert_eq!(e2.event_id, 2);
    // Non-signal events: ids from 0x40000000, no slot, no page offset.
    let m = p.create_event(KFD_IOC_EVENT_MEMORY, false, 0).unwrap();
    assert_eq!(
        (m.event_id, m.event_page_offset, m.event_slot_index),
        (0x4000_0000, 0, 0)
    );
    let h = p
        .create_event(KFD_IOC_EVENT_HW_EXCEPTION, false, 0)
        .unwrap();
    assert_eq!(h.event_id, 0x4000_0001);
    // The page's BO cannot be freed.
    p.unmap(page.handle, &[p.gpu()]).unwrap();
    assert_eq!(p.free_raw(page.handle), Err(Errno::EPERM));
    for id in [1, 2, m.event_id, h.event_id] {
        p.destroy_event(id).unwrap();
    }
    assert_eq!(p.destroy_event(1), Err(Errno::EINVAL));
    assert_eq!(p.destroy_event(0), Err(Errno::EINVAL), "id 0 is reserved");
    assert_eq!(p.live_objects_events(), 0);
}

trait LiveEvents {
    fn live_objects_events(&self) -> usize;
}
impl LiveEvents for Proc {
    fn live_objects_events(&self) -> usize {
        self.sim.live_objects().events
    }
}

#[test]
fn bad_event_pages() {
    let p = Proc::one();
    let small = p.alloc(0x4000, GTT_FLAGS);
    assert_eq!(
        p.create_event(0, true, small.handle).unwrap_err(),
        Errno::EINVAL
    );
    let vram = p.alloc(0x8000, common::VRAM_FLAGS);
    assert_eq!(
        p.create_event(0, true, vram.handle).unwrap_err(),
        Errno::EINVAL
    );
    assert_eq!(
        p.create_event(0, true, u64::from(p.gpu()) << 32 | 77)
            .unwrap_err(),
        Errno::EINVAL
    );
    assert_eq!(
        p.create_event(0, true, 0x4242 << 32).unwrap_err(),
        Errno::EINVAL
    );
    p.release(small, &[p.gpu()]);
    p.release(vram, &[p.gpu()]);
}

#[test]
fn kernel_page_and_events_mmap() {
    let p = Proc::one();
    let ev_file = MapKind::File {
        fd: p.kfd,
        offset: KFD_MMAP_TYPE_EVENTS,
    };
    // No signal page yet: EINVAL.
    assert_eq!(
        p.sim.mmap(None, 0x8000, Prot::READ_WRITE, ev_file),
        Err(Errno::EINVAL)
    );
    let e = p.create_event(KFD_IOC_EVENT_SIGNAL, true, 0).unwrap();
    assert_eq!(e.event_id, 1);
    // 256 slots (id 0 reserved) until the page is mmapped.
    for id in 2..256 {
        assert_eq!(p.create_event(0, true, 0).unwrap().event_id, id);
    }
    assert_eq!(p.create_event(0, true, 0).unwrap_err(), Errno::ENOSPC);
    assert_eq!(
        p.sim.mmap(None, 0x10000, Prot::READ_WRITE, ev_file),
        Err(Errno::EINVAL)
    );
    let page = p.sim.mmap(None, 0x8000, Prot::READ_WRITE, ev_file).unwrap();
    assert_eq!(cpu_read::<u64>(page + 8), u64::MAX);
    assert_eq!(p.create_event(0, true, 0).unwrap().event_id, 256);
    p.sim.munmap(page, 0x8000).unwrap();
    for id in 1..=256 {
        p.destroy_event(id).unwrap();
    }
    assert!(p.sim.live_objects().nothing_leaked());
}

#[test]
fn set_reset_wait() {
    let (p, page) = with_page();
    let auto = p.create_event(0, true, page.handle).unwrap().event_id;
    let manual = p.create_event(0, false, 0).unwrap().event_id;
    let mem = p
        .create_event(KFD_IOC_EVENT_MEMORY, false, 0)
        .unwrap()
        .event_id;
    // Nothing set: deterministic mode times out at once, whatever the timeout.
    assert_eq!(wait1(&p, auto, 0), TIMEOUT);
    assert_eq!(wait1(&p, auto, KFD_WAIT_TIMEOUT_INFINITE), TIMEOUT);
    // Auto-reset: one wait consumes it.
    p.set_event(auto).unwrap();
    assert_eq!(wait1(&p, auto, 1000), COMPLETE);
    assert_eq!(wait1(&p, auto, 1000), TIMEOUT);
    // Manual reset: stays set until RESET.
    p.set_event(manual).unwrap();
    assert_eq!(wait1(&p, manual, 0), COMPLETE);
    assert_eq!(wait1(&p, manual, 0), COMPLETE);
    let mut r = ResetEventArgs {
        event_id: manual,
        pad: 0,
    };
    p.ioctl(AMDKFD_IOC_RESET_EVENT, &mut r).unwrap();
    assert_eq!(wait1(&p, manual, 0), TIMEOUT);
    // SET/RESET only for SIGNAL events.
    assert_eq!(p.set_event(mem), Err(Errno::EINVAL));
    assert_eq!(p.set_event(12345), Err(Errno::EINVAL));
    r.event_id = mem;
    assert_eq!(p.ioctl(AMDKFD_IOC_RESET_EVENT, &mut r), Err(Errno::EINVAL));
    // any vs all.
    p.set_event(auto).unwrap();
    let mut two = [EventData::for_event(auto), EventData::for_event(manual)];
    assert_eq!(p.wait(&mut two, true, 0).unwrap(), TIMEOUT);
    p.set_event(auto).unwrap();
    assert_eq!(p.wait(&mut two, false, 0).unwrap(), COMPLETE);
    p.set_event(manual).unwrap();
    p.set_event(auto).unwrap();
    assert_eq!(p.wait(&mut two, true, 0).unwrap(), COMPLETE);
    // Errors.
    let mut bad = [EventData::for_event(auto), EventData::for_event(999)];
    let mut a = WaitEventsArgs {
        events_ptr: 0,
        num_events: 2,
        wait_for_all: 0,
        timeout: 0,
        wait_result: 7,
    };
    let req = Request::wait_events(&mut a, &mut bad);
    assert_eq!(p.sim.ioctl(p.kfd, req), Err(Errno::EINVAL));
    assert_eq!(a.wait_result, KFD_IOC_WAIT_RESULT_FAIL);
    p.sim
        .ioctl(p.kfd, Request::wait_events(&mut a, &mut []))
        .unwrap();
    assert_eq!(a.wait_result, COMPLETE);
    // A count past the borrowed array: the kernel's copy_from_user faults.
    let req = Request::wait_events(&mut a, &mut bad[..0]);
    assert_eq!(p.ioctl_count(req, 8, 1), Err(Errno::EFAULT));
    let req = Request::wait_events(&mut a, &mut bad[..1]);
    assert_eq!(p.ioctl_count(req, 8, 1 << 20), Err(Errno::ENOMEM));
    for id in [auto, manual, mem] {
        p.destroy_event(id).unwrap();
    }
}

#[test]
fn event_age_copy_out() {
    let (p, page) = with_page();
    let id = p.create_event(0, true, page.handle).unwrap().event_id;
    p.set_event(id).unwrap(); // age 1 -> 2
    let mut e = [EventData::for_event(id)];
    e[0].set_last_event_age(1);
    assert_eq!(p.wait(&mut e, true, 0).unwrap(), COMPLETE);
    assert_eq!(e[0].last_event_age(), 2, "current age copied out");
    // Same age as last seen: not activated.
    assert_eq!(p.wait(&mut e, true, 0).unwrap(), TIMEOUT);
    p.destroy_event(id).unwrap();
}

#[test]
fn engine_interrupt_completes_a_wait() {
    let (p, page) = with_page();
    let id = p.create_event(0, true, page.handle).unwrap().event_id;
    let eng = one_shot(&p, &page, id);
    assert_eq!(wait1(&p, id, 5000), COMPLETE);
    assert_eq!(
        eng.runs.load(Ordering::Relaxed),
        1,
        "engine ran inside WAIT_EVENTS"
    );
    assert_eq!(p.sim.event_slot(id), Some(u64::MAX), "slot acknowledged");
    assert_eq!(
        wait1(&p, id, 0),
        TIMEOUT,
        "auto-reset consumed by the waiter"
    );
    p.destroy_event(id).unwrap();
}

#[test]
fn dropped_interrupt_then_scan() {
    let (p, page) = with_page();
    let id = p.create_event(0, true, page.handle).unwrap().event_id;
    p.sim.drop_interrupts(1);
    one_shot(&p, &page, id);
    assert_eq!(wait1(&p, id, 1000), TIMEOUT, "the interrupt was lost");
    assert_eq!(
        p.sim.event_slot(id),
        Some(u64::from(id)),
        "mailbox written, not acked"
    );
    // A later interrupt without a usable context id scans the slots and finds it.
    p.sim.signal_interrupt(p.gpu(), 0);
    assert_eq!(wait1(&p, id, 0), COMPLETE);
    p.destroy_event(id).unwrap();
}

#[test]
fn delayed_interrupt_still_arrives() {
    let (p, page) = with_page();
    let id = p.create_event(0, true, page.handle).unwrap().event_id;
    p.sim.delay_interrupts(3);
    let eng = one_shot(&p, &page, id);
    assert_eq!(wait1(&p, id, 1000), COMPLETE);
    assert!(
        eng.runs.load(Ordering::Relaxed) >= 3,
        "waited for the delayed interrupt"
    );
    p.destroy_event(id).unwrap();
}

#[test]
fn memory_fault_event() {
    let (p, page) = with_page();
    let sig = p.create_event(0, true, page.handle).unwrap().event_id;
    let mem = p
        .create_event(KFD_IOC_EVENT_MEMORY, false, 0)
        .unwrap()
        .event_id;
    let hw = p
        .create_event(KFD_IOC_EVENT_HW_EXCEPTION, false, 0)
        .unwrap()
        .event_id;
    let fault = p.sim.gpu_read_u32(p.gpu(), 0xDEAD_BEE1).unwrap_err();
    assert_eq!(fault.reason, VmFaultKind::NotPresent);
    p.sim.raise_memory_fault(&fault);
    let mut e = [
        EventData::for_event(sig),
        EventData::for_event(mem),
        EventData::for_event(hw),
    ];
    assert_eq!(p.wait(&mut e, false, 1000).unwrap(), COMPLETE);
    let d = e[1].memory_exception();
    assert_eq!(d.va, 0xDEAD_B000);
    assert_eq!(d.gpu_id, p.gpu());
    assert_eq!((d.failure.not_present, d.failure.read_only), (1, 0));
    assert_eq!(e[0].memory_exception().va, 0, "not activated: untouched");
    // A write to a read-only page.
    p.sim.raise_memory_fault(&GpuFault {
        gpu_id: p.gpu(),
        va: 0x1234_5678,
        write: true,
        reason: VmFaultKind::ReadOnly,
    });
    let mut e = [EventData::for_event(mem)];
    assert_eq!(p.wait(&mut e, true, 0).unwrap(), COMPLETE);
    let d = e[0].memory_exception();
    assert_eq!(
        (d.va, d.failure.not_present, d.failure.read_only),
        (0x1234_5000, 0, 1)
    );
    // GPU reset.
    p.sim
        .raise_hw_exception(p.gpu(), KFD_HW_EXCEPTION_GPU_HANG, true);
    let mut e = [EventData::for_event(hw)];
    assert_eq!(p.wait(&mut e, true, 0).unwrap(), COMPLETE);
    let h = e[0].hw_exception();
    assert_eq!(
        (h.reset_type, h.reset_cause, h.memory_lost, h.gpu_id),
        (0, 0, 1, p.gpu())
    );
    for id in [sig, mem, hw] {
        p.destroy_event(id).unwrap();
    }
}

#[test]
fn fault_evicts_queues() {
    let p = Proc::one();
    let gart = p.alloc(4096, GTT_FLAGS);
    let ring = p.alloc(4096, GTT_FLAGS);
    let mut a = CreateQueueArgs {
        ring_base_address: ring.va,
        write_pointer_address: gart.va,
        read_pointer_address: gart.va + 8,
        ring_size: 4096,
        gpu_id: p.gpu(),
        queue_type: KFD_IOC_QUEUE_TYPE_SDMA,
        queue_percentage: 100,
        ..Default::default()
    };
    p.ioctl(AMDKFD_IOC_CREATE_QUEUE, &mut a).unwrap();
    assert!(p.sim.queue(a.queue_id).unwrap().active);
    p.sim.raise_memory_fault(&GpuFault {
        gpu_id: p.gpu(),
        va: 0,
        write: false,
        reason: VmFaultKind::NotPresent,
    });
    assert!(!p.sim.queue(a.queue_id).unwrap().active);
    let mut d = DestroyQueueArgs {
        queue_id: a.queue_id,
        pad: 0,
    };
    p.ioctl(AMDKFD_IOC_DESTROY_QUEUE, &mut d).unwrap();
    p.release(gart, &[p.gpu()]);
    p.release(ring, &[p.gpu()]);
    assert!(p.sim.live_objects().nothing_leaked());
}

#[test]
fn threaded_wait_is_woken_by_set_event() {
    let p = Arc::new(Proc::new(SimConfig {
        mode: SimMode::Threaded,
        ..SimConfig::default()
    }));
    let page = p.alloc(KFD_EVENT_PAGE_SIZE, GTT_FLAGS);
    let id = p.create_event(0, true, page.handle).unwrap().event_id;
    // Zero timeout in threaded mode: a poll.
    assert_eq!(wait1(&p, id, 0), TIMEOUT);
    let done = Arc::new(AtomicBool::new(false));
    let setter = {
        let (p, done) = (Arc::clone(&p), Arc::clone(&done));
        std::thread::spawn(move || {
            while !done.load(Ordering::Acquire) {
                p.set_event(id).unwrap();
                std::thread::yield_now();
            }
        })
    };
    assert_eq!(wait1(&p, id, KFD_WAIT_TIMEOUT_INFINITE), COMPLETE);
    done.store(true, Ordering::Release);
    setter.join().unwrap();
    p.destroy_event(id).unwrap();
}

/// Destroys an event from inside WAIT_EVENTS (as another thread would mid-wait).
struct Destroyer {
    kfd: Fd,
    event_id: u32,
}

impl Engine for Destroyer {
    fn run(&self, sim: &SimKfd) -> bool {
        let mut d = DestroyEventArgs {
            event_id: self.event_id,
            pad: 0,
        };
        sim.ioctl(self.kfd, Request::new(AMDKFD_IOC_DESTROY_EVENT, &mut d))
            .is_ok()
    }
}

#[test]
fn destroyed_while_waiting_is_eio() {
    let (p, page) = with_page();
    let id = p.create_event(0, true, page.handle).unwrap().event_id;
    p.sim.set_engine(Arc::new(Destroyer {
        kfd: p.kfd,
        event_id: id,
    }));
    let mut e = [EventData::for_event(id)];
    let mut a = WaitEventsArgs {
        wait_for_all: 1,
        timeout: 1000,
        ..Default::default()
    };
    let req = Request::wait_events(&mut a, &mut e);
    assert_eq!(p.sim.ioctl(p.kfd, req), Err(Errno::EIO));
    assert_eq!(a.wait_result, KFD_IOC_WAIT_RESULT_FAIL);
    assert_eq!(p.sim.live_objects().events, 0);
}
