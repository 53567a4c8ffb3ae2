//! The ioctl dispatcher (the kernel's table, the size/direction copy and forced failures) and
//! the small ioctls: version, memory policy, clocks, VM, runtime, XNACK, available memory, apertures.

use super::*;

/// Runs `f` on the argument struct of `io` read from the kernel buffer, and writes it back.
/// The struct type comes from the typed constant, so a number cannot meet another's struct.
fn with<A: Pod>(
    _io: Ioctl<A>,
    kbuf: &mut [u8],
    f: impl FnOnce(&mut A) -> Result<(), Errno>,
) -> Result<(), Errno> {
    let mut a: A = get(kbuf);
    let r = f(&mut a);
    put(kbuf, &a);
    r
}

impl SimKfd {
    pub(super) fn kfd_ioctl(&self, mut req: Request<'_>) -> Result<(), Errno> {
        let nr = req.nr();
        let r = IoctlRequest::from_raw(req.request());
        // CAST: SIZE is a 14-bit field.
        let usize_ = r.get(IoctlRequest::SIZE) as usize;
        // The kernel dispatches on the number alone, with its own size and direction.
        let Some(entry) = kfd_ioctl(nr) else {
            return Err(Errno::ENOTTY);
        };
        if nr == AMDKFD_IOC_CREATE_PROCESS.nr() && self.cfg.kfd_minor_version < 19 {
            return Err(Errno::ENOTTY);
        }
        {
            let mut st = self.lock();
            if let Some(inj) = st.injections.get(&nr).copied() {
                if inj.once {
                    st.injections.remove(&nr);
                }
                return Err(inj.errno);
            }
        }
        let kdir = entry.dir();
        let ksize = entry.size();
        if kdir != IOC_NONE && usize_ > req.arg().len() {
            // copy_from_user / copy_to_user of `usize` bytes would run off the argument.
            return Err(Errno::EFAULT);
        }
        let mut kbuf = vec![0u8; usize_.max(ksize)];
        if kdir & IOC_WRITE != 0 {
            if let (Some(d), Some(s)) = (kbuf.get_mut(..usize_), req.arg().get(..usize_)) {
                d.copy_from_slice(s);
            }
        }
        let r = self.dispatch(nr, &mut kbuf, &mut req);
        if kdir & IOC_READ != 0 {
            if let (Some(d), Some(s)) = (req.arg_mut().get_mut(..usize_), kbuf.get(..usize_)) {
                d.copy_from_slice(s);
            }
        }
        if let Err(e) = r {
            log::debug!("sim kfd ioctl {} ({nr:#x}): {e}", entry.name);
        }
        r
    }

    /// Runs command `nr` on the kernel's copy of the argument. The user memory a command
    /// follows pointers into is the request's borrowed slices, never the pointer fields.
    fn dispatch(&self, nr: u8, kbuf: &mut [u8], req: &mut Request<'_>) -> Result<(), Errno> {
        macro_rules! table {
            ($($io:ident => $call:expr),* $(,)?) => {
                $( if nr == $io.nr() { return with($io, kbuf, $call); } )*
            };
        }
        table! {
            AMDKFD_IOC_GET_VERSION => |a| self.get_version(a),
            AMDKFD_IOC_CREATE_QUEUE => |a| self.queues_changed(self.create_queue(a)),
            AMDKFD_IOC_DESTROY_QUEUE => |a| self.queues_changed(self.destroy_queue(a)),
            AMDKFD_IOC_GET_CLOCK_COUNTERS => |a| self.get_clock_counters(a),
            AMDKFD_IOC_CREATE_EVENT => |a| self.create_event(a),
            AMDKFD_IOC_DESTROY_EVENT => |a| self.destroy_event(a),
            AMDKFD_IOC_SET_EVENT => |a| self.set_event_ioctl(a),
            AMDKFD_IOC_RESET_EVENT => |a| self.reset_event(a),
            AMDKFD_IOC_WAIT_EVENTS => |a| self.wait_events(a, req.events()),
            AMDKFD_IOC_GET_PROCESS_APERTURES_NEW => |a| self.apertures(a, req.apertures()),
            AMDKFD_IOC_ACQUIRE_VM => |a| self.acquire_vm(a),
            AMDKFD_IOC_ALLOC_MEMORY_OF_GPU => |a| self.alloc(a),
            AMDKFD_IOC_FREE_MEMORY_OF_GPU => |a| self.free(a),
            AMDKFD_IOC_MAP_MEMORY_TO_GPU => |a| self.map(a, req.device_ids()),
            AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU => |a| self.unmap(a, req.device_ids()),
            AMDKFD_IOC_SET_XNACK_MODE => |a| self.set_xnack(a),
            AMDKFD_IOC_AVAILABLE_MEMORY => |a| self.available_memory(a),
            AMDKFD_IOC_RUNTIME_ENABLE => |a| self.runtime_enable(a),
        }
        if nr == AMDKFD_IOC_SET_MEMORY_POLICY.nr() {
            return self.set_memory_policy(kbuf);
        }
        if let Some(r) = self.dispatch_more(nr, kbuf, req) {
            return r;
        }
        let deprecated = [
            AMDKFD_IOC_DBG_REGISTER_DEPRECATED,
            AMDKFD_IOC_DBG_UNREGISTER_DEPRECATED,
            AMDKFD_IOC_DBG_ADDRESS_WATCH_DEPRECATED,
            AMDKFD_IOC_DBG_WAVE_CONTROL_DEPRECATED,
        ];
        if deprecated.iter().any(|d| d.nr() == nr) {
            return Err(Errno::EPERM);
        }
        // In the kernel's table but not simulated.
        Err(Errno::EINVAL)
    }

    /// Tells the engine (if any) that the queue set changed when `r` is a success; returns `r`.
    pub(super) fn queues_changed(&self, r: Result<(), Errno>) -> Result<(), Errno> {
        if r.is_ok() {
            let engine = self
                .engine
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone();
            if let Some(e) = engine {
                e.queues_changed(self);
            }
        }
        r
    }

    pub(super) fn get_version(&self, a: &mut GetVersionArgs) -> Result<(), Errno> {
        a.major_version = KFD_IOCTL_MAJOR_VERSION;
        a.minor_version = self.cfg.kfd_minor_version;
        Ok(())
    }

    pub(super) fn set_memory_policy(&self, kbuf: &[u8]) -> Result<(), Errno> {
        // {u64 base, u64 size, u32 gpu_id, u32 default_policy, u32 alternate_policy, u32 pad}
        let word = |o: usize| {
            kbuf.get(o..o + 4)
                .map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        };
        let (gpu_id, def, alt) = (word(16), word(20), word(24));
        if def > 1 || alt > 1 {
            return Err(Errno::EINVAL);
        }
        let st = self.lock();
        let g = st.gpu_by_id(gpu_id).ok_or(Errno::EINVAL)?;
        if st.gpus.get(g).and_then(|g| g.vm_file).is_none() {
            return Err(Errno::ESRCH);
        }
        Ok(())
    }

    pub(super) fn get_clock_counters(&self, a: &mut GetClockCountersArgs) -> Result<(), Errno> {
        let known = self.lock().gpu_by_id(a.gpu_id).is_some();
        a.gpu_clock_counter = if known { self.gpu_clock() } else { 0 };
        // CAST: u128 ns since the sim started fits u64 for 584 years.
        let now = self.epoch.elapsed().as_nanos() as u64;
        a.cpu_clock_counter = now;
        a.system_clock_counter = now;
        a.system_clock_freq = 1_000_000_000;
        Ok(())
    }

    pub(super) fn acquire_vm(&self, a: &mut AcquireVmArgs) -> Result<(), Errno> {
        let mut st = self.lock();
        // CAST: the kernel takes drm_fd as an int.
        let fd = a.drm_fd as i32;
        let kind = st.fds.get(&fd).copied().ok_or(Errno::EINVAL)?;
        let g = st.gpu_by_id(a.gpu_id).ok_or(Errno::EINVAL)?;
        // The open file, which every dup of the descriptor shares.
        let file = match kind {
            FdKind::Render { file, .. } => file,
            FdKind::Kfd => fd,
        };
        let current = st.gpus.get(g).and_then(|g| g.vm_file);
        match current {
            Some(f) if f == file => return Ok(()),
            Some(_) => return Err(Errno::EBUSY),
            None => {}
        }
        if !matches!(kind, FdKind::Render { .. }) {
            return Err(Errno::EINVAL);
        }
        if st.gpus.iter().any(|g| g.vm_file == Some(file)) {
            // That DRM file's VM is already a compute VM.
            return Err(Errno::EINVAL);
        }
        if let Some(gpu) = st.gpus.get_mut(g) {
            gpu.vm_file = Some(file);
        }
        Ok(())
    }

    pub(super) fn runtime_enable(&self, a: &mut RuntimeEnableArgs) -> Result<(), Errno> {
        let mut st = self.lock();
        if a.mode_mask & KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK != 0 {
            if st.runtime_enabled {
                return Err(Errno::EBUSY);
            }
            if st.gpus.iter().any(|g| g.queue_count > 0) {
                return Err(Errno::EEXIST);
            }
            st.runtime_enabled = true;
        } else {
            st.runtime_enabled = false;
        }
        Ok(())
    }

    pub(super) fn set_xnack(&self, a: &mut SetXnackModeArgs) -> Result<(), Errno> {
        let mut st = self.lock();
        if a.xnack_enabled < 0 {
            a.xnack_enabled = i32::from(st.xnack);
            return Ok(());
        }
        if !st.queues.is_empty() {
            return Err(Errno::EBUSY);
        }
        let want = a.xnack_enabled != 0;
        if want == st.xnack {
            return Ok(());
        }
        // Per-process XNACK exists only before GC 10.1.1 (and only on some gfx9 parts).
        if want && st.gpus.iter().any(|g| g.props.gfx_target_version >= 100101) {
            return Err(Errno::EPERM);
        }
        st.xnack = want;
        Ok(())
    }

    pub(super) fn available_memory(&self, a: &mut GetAvailableMemoryArgs) -> Result<(), Errno> {
        let st = self.lock();
        let g = st
            .gpu_by_id(a.gpu_id)
            .and_then(|i| st.gpus.get(i))
            .ok_or(Errno::EINVAL)?;
        let free = g.vram_limit.saturating_sub(g.vram_used);
        a.available = free & !((2 << 20) - 1);
        Ok(())
    }

    pub(super) fn apertures(
        &self,
        a: &mut GetProcessAperturesNewArgs,
        user: &mut [ProcessDeviceApertures],
    ) -> Result<(), Errno> {
        let st = self.lock();
        // CAST: at most 64 GPUs.
        let n = st.gpus.len() as u32;
        if a.num_of_nodes == 0 {
            a.num_of_nodes = n;
            return Ok(());
        }
        let fill = a.num_of_nodes.min(n);
        let mut out = Vec::with_capacity(fill as usize);
        for g in st.gpus.iter().take(fill as usize) {
            out.push(ProcessDeviceApertures {
                lds_base: 0x1_0000_0000_0000,
                lds_limit: 0x1_0000_FFFF_FFFF,
                scratch_base: 0x2_0000_0000_0000,
                scratch_limit: 0x2_0000_FFFF_FFFF,
                gpuvm_base: 0x1_0000,
                gpuvm_limit: GPUVM_LIMIT - 1,
                gpu_id: g.gpu_id,
                pad: 0,
            });
        }
        drop(st);
        // copy_to_user into the array the request borrows: EFAULT past its end.
        user.get_mut(..out.len())
            .ok_or(Errno::EFAULT)?
            .copy_from_slice(&out);
        a.num_of_nodes = fill;
        Ok(())
    }
}
