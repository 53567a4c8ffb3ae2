//! The ioctl dispatcher (the kernel's table, the size/direction copy and forced failures) and
//! the small ioctls: version, memory policy, clocks, VM, runtime, XNACK, available memory, apertures.

use super::*;

/// The ioctls the simulated kernel's table has, by number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    GetVersion,
    CreateQueue,
    DestroyQueue,
    SetMemoryPolicy,
    GetClockCounters,
    CreateEvent,
    DestroyEvent,
    SetEvent,
    ResetEvent,
    WaitEvents,
    Deprecated,
    GetProcessAperturesNew,
    AcquireVm,
    Alloc,
    Free,
    Map,
    Unmap,
    SetXnackMode,
    AvailableMemory,
    RuntimeEnable,
    /// In the kernel's table but not simulated.
    NotSimulated,
}

/// The kernel's table entry: (request as the kernel defines it, operation).
fn table(nr: u8) -> Option<(u32, Op)> {
    Some(match nr {
        0x01 => (AMDKFD_IOC_GET_VERSION, Op::GetVersion),
        0x02 => (AMDKFD_IOC_CREATE_QUEUE, Op::CreateQueue),
        0x03 => (AMDKFD_IOC_DESTROY_QUEUE, Op::DestroyQueue),
        0x04 => (AMDKFD_IOC_SET_MEMORY_POLICY, Op::SetMemoryPolicy),
        0x05 => (AMDKFD_IOC_GET_CLOCK_COUNTERS, Op::GetClockCounters),
        0x06 => (AMDKFD_IOC_GET_PROCESS_APERTURES, Op::NotSimulated),
        0x07 => (AMDKFD_IOC_UPDATE_QUEUE, Op::NotSimulated),
        0x08 => (AMDKFD_IOC_CREATE_EVENT, Op::CreateEvent),
        0x09 => (AMDKFD_IOC_DESTROY_EVENT, Op::DestroyEvent),
        0x0A => (AMDKFD_IOC_SET_EVENT, Op::SetEvent),
        0x0B => (AMDKFD_IOC_RESET_EVENT, Op::ResetEvent),
        0x0C => (AMDKFD_IOC_WAIT_EVENTS, Op::WaitEvents),
        0x0D => (AMDKFD_IOC_DBG_REGISTER_DEPRECATED, Op::Deprecated),
        0x0E => (AMDKFD_IOC_DBG_UNREGISTER_DEPRECATED, Op::Deprecated),
        0x0F => (AMDKFD_IOC_DBG_ADDRESS_WATCH_DEPRECATED, Op::Deprecated),
        0x10 => (AMDKFD_IOC_DBG_WAVE_CONTROL_DEPRECATED, Op::Deprecated),
        0x11 => (AMDKFD_IOC_SET_SCRATCH_BACKING_VA, Op::NotSimulated),
        0x12 => (AMDKFD_IOC_GET_TILE_CONFIG, Op::NotSimulated),
        0x13 => (AMDKFD_IOC_SET_TRAP_HANDLER, Op::NotSimulated),
        0x14 => (
            AMDKFD_IOC_GET_PROCESS_APERTURES_NEW,
            Op::GetProcessAperturesNew,
        ),
        0x15 => (AMDKFD_IOC_ACQUIRE_VM, Op::AcquireVm),
        0x16 => (AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, Op::Alloc),
        0x17 => (AMDKFD_IOC_FREE_MEMORY_OF_GPU, Op::Free),
        0x18 => (AMDKFD_IOC_MAP_MEMORY_TO_GPU, Op::Map),
        0x19 => (AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU, Op::Unmap),
        0x1A => (AMDKFD_IOC_SET_CU_MASK, Op::NotSimulated),
        0x1B => (AMDKFD_IOC_GET_QUEUE_WAVE_STATE, Op::NotSimulated),
        0x1C => (AMDKFD_IOC_GET_DMABUF_INFO, Op::NotSimulated),
        0x1D => (AMDKFD_IOC_IMPORT_DMABUF, Op::NotSimulated),
        0x1E => (AMDKFD_IOC_ALLOC_QUEUE_GWS, Op::NotSimulated),
        0x1F => (AMDKFD_IOC_SMI_EVENTS, Op::NotSimulated),
        0x20 => (AMDKFD_IOC_SVM, Op::NotSimulated),
        0x21 => (AMDKFD_IOC_SET_XNACK_MODE, Op::SetXnackMode),
        0x22 => (AMDKFD_IOC_CRIU_OP, Op::NotSimulated),
        0x23 => (AMDKFD_IOC_AVAILABLE_MEMORY, Op::AvailableMemory),
        0x24 => (AMDKFD_IOC_EXPORT_DMABUF, Op::NotSimulated),
        0x25 => (AMDKFD_IOC_RUNTIME_ENABLE, Op::RuntimeEnable),
        0x26 => (AMDKFD_IOC_DBG_TRAP, Op::NotSimulated),
        0x27 => (AMDKFD_IOC_CREATE_PROCESS, Op::NotSimulated),
        _ => return None,
    })
}

impl SimKfd {
    pub(super) fn kfd_ioctl(&self, request: u32, arg: &mut [u8]) -> Result<(), Errno> {
        let req = IoctlRequest::from_raw(request);
        // CAST: NR is an 8-bit field.
        let nr = req.get(IoctlRequest::NR) as u8;
        // CAST: SIZE is a 14-bit field.
        let usize_ = req.get(IoctlRequest::SIZE) as usize;
        let Some((kreq, op)) = table(nr) else {
            return Err(Errno::ENOTTY);
        };
        if nr == 0x27 && self.cfg.kfd_minor_version < 19 {
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
        let kr = IoctlRequest::from_raw(kreq);
        let kdir = kr.get(IoctlRequest::DIR);
        // CAST: a 14-bit field.
        let ksize = kr.get(IoctlRequest::SIZE) as usize;
        if kdir != IOC_NONE && usize_ > arg.len() {
            // copy_from_user / copy_to_user of `usize` bytes would run off the argument.
            return Err(Errno::EFAULT);
        }
        let mut kbuf = vec![0u8; usize_.max(ksize)];
        if kdir & IOC_WRITE != 0 {
            if let (Some(d), Some(s)) = (kbuf.get_mut(..usize_), arg.get(..usize_)) {
                d.copy_from_slice(s);
            }
        }
        let r = self.dispatch(op, &mut kbuf);
        if kdir & IOC_READ != 0 {
            if let (Some(d), Some(s)) = (arg.get_mut(..usize_), kbuf.get(..usize_)) {
                d.copy_from_slice(s);
            }
        }
        if let Err(e) = r {
            log::debug!("sim kfd ioctl nr {nr:#x}: {e}");
        }
        r
    }

    fn dispatch(&self, op: Op, kbuf: &mut [u8]) -> Result<(), Errno> {
        macro_rules! with {
            ($t:ty, $f:ident) => {{
                let mut a: $t = get(kbuf);
                let r = self.$f(&mut a);
                put(kbuf, &a);
                r
            }};
        }
        match op {
            Op::GetVersion => with!(GetVersionArgs, get_version),
            Op::CreateQueue => self.queues_changed(with!(CreateQueueArgs, create_queue)),
            Op::DestroyQueue => self.queues_changed(with!(DestroyQueueArgs, destroy_queue)),
            Op::SetMemoryPolicy => self.set_memory_policy(kbuf),
            Op::GetClockCounters => with!(GetClockCountersArgs, get_clock_counters),
            Op::CreateEvent => with!(CreateEventArgs, create_event),
            Op::DestroyEvent => with!(DestroyEventArgs, destroy_event),
            Op::SetEvent => with!(SetEventArgs, set_event_ioctl),
            Op::ResetEvent => with!(ResetEventArgs, reset_event),
            Op::WaitEvents => with!(WaitEventsArgs, wait_events),
            Op::Deprecated => Err(Errno::EPERM),
            Op::GetProcessAperturesNew => with!(GetProcessAperturesNewArgs, apertures),
            Op::AcquireVm => with!(AcquireVmArgs, acquire_vm),
            Op::Alloc => with!(AllocMemoryOfGpuArgs, alloc),
            Op::Free => with!(FreeMemoryOfGpuArgs, free),
            Op::Map => with!(MapMemoryToGpuArgs, map),
            Op::Unmap => with!(UnmapMemoryFromGpuArgs, unmap),
            Op::SetXnackMode => with!(SetXnackModeArgs, set_xnack),
            Op::AvailableMemory => with!(GetAvailableMemoryArgs, available_memory),
            Op::RuntimeEnable => with!(RuntimeEnableArgs, runtime_enable),
            Op::NotSimulated => Err(Errno::EINVAL),
        }
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
        let current = st.gpus.get(g).and_then(|g| g.vm_file);
        match current {
            Some(f) if f == fd => return Ok(()),
            Some(_) => return Err(Errno::EBUSY),
            None => {}
        }
        if !matches!(kind, FdKind::Render { .. }) {
            return Err(Errno::EINVAL);
        }
        if st.gpus.iter().any(|g| g.vm_file == Some(fd)) {
            // That DRM file's VM is already a compute VM.
            return Err(Errno::EINVAL);
        }
        if let Some(gpu) = st.gpus.get_mut(g) {
            gpu.vm_file = Some(fd);
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

    pub(super) fn apertures(&self, a: &mut GetProcessAperturesNewArgs) -> Result<(), Errno> {
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
        mem::copy_to_user(
            a.kfd_process_device_apertures_ptr,
            bytemuck::cast_slice(&out),
        )?;
        a.num_of_nodes = fill;
        Ok(())
    }
}
