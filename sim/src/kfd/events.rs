//! Event ioctls: CREATE / DESTROY / SET / RESET / WAIT_EVENTS (`kfd_events.c`).

use super::*;

/// One event a WAIT_EVENTS call waits on (the kernel's `struct kfd_event_waiter`).
struct Waiter {
    id: u32,
    activated: bool,
    age_enabled: bool,
    /// Age at registration: a change means the event was set for us.
    seen_age: u64,
    /// On the event's wait queue (not activated at wait start).
    registered: bool,
}

impl SimKfd {
    pub(super) fn create_event(&self, a: &mut CreateEventArgs) -> Result<(), Errno> {
        let mut st = self.lock();
        if a.event_page_offset != 0 {
            if st.event_page.is_some() {
                return Err(Errno::EINVAL);
            }
            let handle = a.event_page_offset;
            // CAST: the handle's high 32 bits are the gpu_id.
            let g = st.gpu_by_id((handle >> 32) as u32).ok_or(Errno::EINVAL)?;
            if st.gpus.get(g).and_then(|g| g.vm_file).is_none() {
                return Err(Errno::ENODEV);
            }
            let bo = st.bos.get(&handle).ok_or(Errno::EINVAL)?;
            let Backing::Shared(m) = &bo.backing else {
                return Err(Errno::EINVAL);
            };
            // The page is pinned in GTT and memset over 32 KiB: USERPTR, VRAM and pages smaller
            // than 32 KiB cannot be used.
            if bo.kind != BoKind::Gtt || bo.size < KFD_EVENT_PAGE_SIZE {
                return Err(Errno::EINVAL);
            }
            let m = Arc::clone(m);
            let size = bo.size;
            m.fill(0, KFD_EVENT_PAGE_SIZE, 0xFF);
            st.event_page = Some(EventPage {
                handle: Some(handle),
                mem: m,
                mapped_size: size,
            });
        }
        let ty = a.event_type;
        let has_slot = ty == KFD_IOC_EVENT_SIGNAL || ty == KFD_IOC_EVENT_DEBUG_EVENT;
        let id = if has_slot {
            if st.event_page.is_none() {
                let m = SharedMem::new("kfd-events", KFD_EVENT_PAGE_SIZE)?;
                m.fill(0, KFD_EVENT_PAGE_SIZE, 0xFF);
                st.event_page = Some(EventPage {
                    handle: None,
                    mem: Arc::new(m),
                    mapped_size: DEFAULT_SIGNAL_SLOTS * KFD_EVENT_SLOT_SIZE,
                });
            }
            let page = st.event_page.as_ref().ok_or(Errno::ENOMEM)?;
            let slots =
                (page.mapped_size / KFD_EVENT_SLOT_SIZE).min(u64::from(KFD_SIGNAL_EVENT_LIMIT));
            if u64::from(st.signal_event_count) >= slots {
                return Err(Errno::ENOSPC);
            }
            // CAST: slots <= 4096.
            let id = lowest_free_key(&st.events, 1, slots as u32).ok_or(Errno::ENOSPC)?;
            let _ = page.mem.store_u64(
                u64::from(id) * KFD_EVENT_SLOT_SIZE,
                KFD_EVENT_SLOT_UNSIGNALED,
            );
            st.signal_event_count += 1;
            a.event_page_offset = KFD_MMAP_TYPE_EVENTS;
            a.event_slot_index = id;
            id
        } else {
            a.event_page_offset = 0;
            lowest_free_key(&st.events, KFD_FIRST_NONSIGNAL_EVENT_ID, u32::MAX)
                .ok_or(Errno::ENOMEM)?
        };
        a.event_id = id;
        a.event_trigger_data = id;
        st.events.insert(
            id,
            Event {
                ty,
                auto_reset: a.auto_reset != 0,
                signaled: false,
                age: 1,
                has_slot,
                waiters: 0,
                mem: HsaMemoryExceptionData::default(),
                hw: HsaHwExceptionData::default(),
            },
        );
        Ok(())
    }

    pub(super) fn destroy_event(&self, a: &mut DestroyEventArgs) -> Result<(), Errno> {
        let mut st = self.lock();
        let ev = st.events.remove(&a.event_id).ok_or(Errno::EINVAL)?;
        if ev.has_slot {
            st.signal_event_count = st.signal_event_count.saturating_sub(1);
        }
        drop(st);
        self.cond.notify_all();
        Ok(())
    }

    /// `set_event`: signaled stays set only for manual-reset events or when nobody waits;
    /// the age change wakes registered waiters.
    pub(crate) fn set_event_locked(st: &mut State, id: u32) {
        if let Some(ev) = st.events.get_mut(&id) {
            ev.signaled = !ev.auto_reset || ev.waiters == 0;
            ev.age = ev.age.wrapping_add(1);
            if ev.age == 0 {
                ev.age = 2;
            }
        }
    }

    pub(super) fn set_event_ioctl(&self, a: &mut SetEventArgs) -> Result<(), Errno> {
        let mut st = self.lock();
        match st.events.get(&a.event_id) {
            Some(ev) if ev.ty == KFD_IOC_EVENT_SIGNAL => {}
            _ => return Err(Errno::EINVAL),
        }
        Self::set_event_locked(&mut st, a.event_id);
        drop(st);
        self.cond.notify_all();
        Ok(())
    }

    pub(super) fn reset_event(&self, a: &mut ResetEventArgs) -> Result<(), Errno> {
        let mut st = self.lock();
        match st.events.get_mut(&a.event_id) {
            Some(ev) if ev.ty == KFD_IOC_EVENT_SIGNAL => {
                ev.signaled = false;
                Ok(())
            }
            _ => Err(Errno::EINVAL),
        }
    }

    pub(super) fn wait_events(
        &self,
        a: &mut WaitEventsArgs,
        user: &mut [EventData],
    ) -> Result<(), Errno> {
        a.wait_result = KFD_IOC_WAIT_RESULT_FAIL;
        if a.num_events == 0 {
            a.wait_result = KFD_IOC_WAIT_RESULT_COMPLETE;
            return Ok(());
        }
        // sizeof(struct kfd_event_waiter) = 56
        if u64::from(a.num_events) * 56 > KMALLOC_MAX {
            return Err(Errno::ENOMEM);
        }
        let n = a.num_events as usize;
        // copy_from_user from the array the request borrows: EFAULT past its end.
        let data: Vec<EventData> = user.get(..n).ok_or(Errno::EFAULT)?.to_vec();

        let mut waiters = self.register_waiters(&data)?;
        let outcome = self.wait_on(&mut waiters, a.wait_for_all != 0, a.timeout);
        let copies = self.unregister_waiters(&waiters, matches!(outcome, Ok(true)));
        match outcome {
            Err(e) => Err(e),
            Ok(false) => {
                a.wait_result = KFD_IOC_WAIT_RESULT_TIMEOUT;
                Ok(())
            }
            Ok(true) => {
                for (i, bytes) in copies {
                    // copy_to_user of the event data into element i's union.
                    let dst = user
                        .get_mut(i)
                        .map(bytemuck::bytes_of_mut)
                        .and_then(|e| e.get_mut(EVENT_DATA_UNION_OFFSET..))
                        .and_then(|u| u.get_mut(..bytes.len()))
                        .ok_or(Errno::EFAULT)?;
                    dst.copy_from_slice(&bytes);
                }
                a.wait_result = KFD_IOC_WAIT_RESULT_COMPLETE;
                Ok(())
            }
        }
    }

    /// Registers a waiter on each event (the kernel's `init_event_waiter`): an event already
    /// signaled, or whose age moved past the caller's, activates it at once.
    fn register_waiters(&self, data: &[EventData]) -> Result<Vec<Waiter>, Errno> {
        let mut waiters = Vec::with_capacity(data.len());
        {
            let mut st = self.lock();
            if data.iter().any(|d| !st.events.contains_key(&d.event_id)) {
                return Err(Errno::EINVAL);
            }
            for d in data {
                let Some(ev) = st.events.get_mut(&d.event_id) else {
                    return Err(Errno::EINVAL);
                };
                let mut activated = ev.signaled;
                ev.signaled = ev.signaled && !ev.auto_reset;
                let age_enabled = ev.ty == KFD_IOC_EVENT_SIGNAL && d.last_event_age() != 0;
                if age_enabled && ev.age != d.last_event_age() {
                    activated = true;
                }
                if !activated {
                    ev.waiters += 1;
                }
                waiters.push(Waiter {
                    id: d.event_id,
                    activated,
                    age_enabled,
                    seen_age: ev.age,
                    registered: !activated,
                });
            }
        }

        Ok(waiters)
    }

    /// Waits until one (or, with `all`, every) waiter is activated: `Ok(true)`, or the timeout
    /// passed: `Ok(false)`; `EIO` when an event was destroyed under the wait. Deterministic
    /// mode runs the queues in the meantime; threaded mode sleeps on the condition variable.
    fn wait_on(&self, waiters: &mut [Waiter], all: bool, timeout_ms: u32) -> Result<bool, Errno> {
        let infinite = timeout_ms == KFD_WAIT_TIMEOUT_INFINITE;
        let deadline =
            Instant::now() + Duration::from_millis(u64::from(timeout_ms.min(0x7FFF_FFFF)));
        let mut rounds: u32 = 0;
        loop {
            // Check (under the lock).
            let st = self.lock();
            let mut destroyed = false;
            for w in waiters.iter_mut().filter(|w| !w.activated) {
                match st.events.get(&w.id) {
                    None => destroyed = true,
                    Some(ev) if ev.age != w.seen_age => w.activated = true,
                    Some(_) => {}
                }
            }
            if destroyed {
                break Err(Errno::EIO);
            }
            let done = if all {
                waiters.iter().all(|w| w.activated)
            } else {
                waiters.iter().any(|w| w.activated)
            };
            if done {
                break Ok(true);
            }
            match self.cfg.mode {
                SimMode::Deterministic => {
                    drop(st);
                    rounds += 1;
                    if rounds > 1 << 20 || !self.run_queues() {
                        if self.check_deadlock() {
                            continue;
                        }
                        break Ok(false);
                    }
                }
                SimMode::Threaded => {
                    let now = Instant::now();
                    if !infinite && now >= deadline {
                        break Ok(false);
                    }
                    let wait = if infinite {
                        Duration::from_millis(100)
                    } else {
                        (deadline - now).min(Duration::from_millis(100))
                    };
                    let (guard, _) = self
                        .cond
                        .wait_timeout(st, wait)
                        .unwrap_or_else(PoisonError::into_inner);
                    drop(guard);
                    self.check_deadlock();
                }
            }
        }
    }

    /// Takes the waiters off their events and collects, for a completed wait, the event data
    /// each activated one copies out (memory and HW exception data, a signal's age).
    fn unregister_waiters(&self, waiters: &[Waiter], completed: bool) -> Vec<(usize, Vec<u8>)> {
        // Unregister and collect copy-out data.
        let mut copies: Vec<(usize, Vec<u8>)> = Vec::new();
        {
            let mut st = self.lock();
            for (i, w) in waiters.iter().enumerate() {
                let Some(ev) = st.events.get_mut(&w.id) else {
                    continue;
                };
                if w.registered {
                    ev.waiters = ev.waiters.saturating_sub(1);
                }
                if completed && w.activated {
                    let bytes = match ev.ty {
                        KFD_IOC_EVENT_MEMORY => bytemuck::bytes_of(&ev.mem).to_vec(),
                        KFD_IOC_EVENT_HW_EXCEPTION => bytemuck::bytes_of(&ev.hw).to_vec(),
                        KFD_IOC_EVENT_SIGNAL if w.age_enabled => ev.age.to_le_bytes().to_vec(),
                        _ => continue,
                    };
                    copies.push((i, bytes));
                }
            }
        }
        copies
    }

    /// The host waits and the queues made no progress: asks the engine to report a deadlock
    /// ([`super::Engine::check_deadlock`]). Returns whether it reported one.
    fn check_deadlock(&self) -> bool {
        let engine = self
            .engine
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        engine.is_some_and(|e| e.check_deadlock())
    }
}
