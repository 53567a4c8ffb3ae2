//! The ioctls of the kernel's table that hcq does not issue but other KFD clients (ROCr's
//! libhsakmt, rocm-smi, debuggers) do: each mirrors its `kfd_chardev.c` handler and what that
//! calls (`kfd_process_queue_manager.c`, `kfd_device_queue_manager.c`), with the kernel's
//! argument checks in the kernel's order and its errnos. Arguments are read at the kernel's
//! byte offsets (`<linux/kfd_ioctl.h>`); a user pointer inside one is never followed: the
//! request borrows no memory for these commands, so a copy through one is the kernel's
//! EFAULT for an unmapped pointer.

use super::*;

/// `KFD_MAX_QUEUE_PERCENTAGE`.
const MAX_QUEUE_PERCENTAGE: u32 = 100;
/// `KFD_MAX_QUEUE_PRIORITY`.
const MAX_QUEUE_PRIORITY: u32 = 15;
/// `KFD_MIN_QUEUE_RING_SIZE`.
const MIN_QUEUE_RING_SIZE: u32 = 1024;
/// `ARRAY_SIZE(adev->gfx.config.tile_mode_array)`.
const NUM_TILE_CONFIGS: u32 = 32;
/// `ARRAY_SIZE(adev->gfx.config.macrotile_mode_array)`.
const NUM_MACRO_TILE_CONFIGS: u32 = 16;

fn word(kbuf: &[u8], o: usize) -> u32 {
    kbuf.get(o..o + 4)
        .map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

fn dword(kbuf: &[u8], o: usize) -> u64 {
    u64::from(word(kbuf, o)) | (u64::from(word(kbuf, o + 4)) << 32)
}

fn set_word(kbuf: &mut [u8], o: usize, v: u32) {
    if let Some(d) = kbuf.get_mut(o..o + 4) {
        d.copy_from_slice(&v.to_le_bytes());
    }
}

/// `GB_ADDR_CONFIG` as `amdgpu_amdkfd_get_tile_config` reports it (`adev->gfx.config`).
///
/// gfx90a: `gfx_v9_0_gpu_early_init` (ALDEBARAN) keeps only bits `0x0c188800` of the
/// register and ORs in `0x22014042`; the simulated register has those bits clear. gfx942,
/// gfx11 and gfx12 drivers read the register as the hardware reset it, a value no public
/// document lists: the simulator's choice, built from the register's fields (NUM_PIPES
/// log2 in 2:0, PIPE_INTERLEAVE_SIZE 5:3, MAX_COMPRESSED_FRAGS 7:6, NUM_PKRS 10:8), is
/// gfx942 as gfx90a, gfx1100 32 pipes / 32 packers (`0x545`), gfx1201 16 / 16 (`0x444`).
/// Compute clients read it only to size tiled images, which the simulator does not model.
fn gb_addr_config(gfx_target_version: u32) -> u32 {
    match gfx_target_version {
        120000.. => 0x0000_0444,
        110000.. => 0x0000_0545,
        _ => 0x2201_4042,
    }
}

impl SimKfd {
    /// The (TBA, TMA) SET_TRAP_HANDLER installed for the process on `gpu_id`, if any.
    #[must_use]
    pub fn trap_handler(&self, gpu_id: u32) -> Option<(u64, u64)> {
        let st = self.lock();
        st.gpu_by_id(gpu_id)
            .and_then(|g| st.gpus.get(g))
            .and_then(|g| g.trap_handler)
    }

    /// The scratch backing VA SET_SCRATCH_BACKING_VA recorded for `gpu_id` (0: none).
    #[must_use]
    pub fn scratch_backing_va(&self, gpu_id: u32) -> Option<u64> {
        let st = self.lock();
        st.gpu_by_id(gpu_id)
            .and_then(|g| st.gpus.get(g))
            .map(|g| g.scratch_backing_va)
    }

    /// Runs command `nr` if this module handles it (`None`: not one of these).
    pub(super) fn dispatch_more(&self, nr: u8, kbuf: &mut [u8]) -> Option<Result<(), Errno>> {
        let r = match nr {
            0x07 => self.update_queue(kbuf),
            0x11 => self.set_scratch_backing_va(kbuf),
            0x12 => self.get_tile_config(kbuf),
            0x13 => self.set_trap_handler(kbuf),
            0x1A => Self::set_cu_mask(kbuf),
            0x1B => self.get_queue_wave_state(kbuf),
            0x1C => self.dmabuf_fd_lookup(word(kbuf, 28)),
            0x1D => self.import_dmabuf(kbuf),
            0x1E => self.alloc_queue_gws(kbuf),
            0x1F => self.smi_events(kbuf),
            // kfd_ioctl_svm without CONFIG_HSA_AMD_SVM: `return -EPERM`.
            0x20 => Err(Errno::EPERM),
            // kfd_ioctl: CRIU_OP carries KFD_IOC_FLAG_CHECKPOINT_RESTORE, refused before its
            // handler runs unless the caller has CAP_CHECKPOINT_RESTORE or CAP_SYS_ADMIN; the
            // simulated process has neither.
            0x22 => Err(Errno::EACCES),
            0x24 => self.export_dmabuf(kbuf),
            // kfd_ioctl_set_debug_trap's first check: debugging needs the hardware scheduler's
            // debug support (`sched_policy == KFD_SCHED_POLICY_NO_HWS` gives EINVAL before any
            // argument is read); the simulated CP has no wave-launch override, suspend/resume or
            // address watch.
            0x26 => Err(Errno::EINVAL),
            _ => return None,
        };
        Some(r)
    }

    /// The GPU index of `gpu_id` bound to the process (ACQUIRE_VM done): `unknown` for an
    /// unknown id (`kfd_process_device_data_by_id` failing), `unbound` when the VM is not
    /// acquired (`kfd_bind_process_to_device` failing).
    fn bound_gpu(&self, gpu_id: u32, unknown: Errno, unbound: Errno) -> Result<usize, Errno> {
        let st = self.lock();
        let g = st.gpu_by_id(gpu_id).ok_or(unknown)?;
        if st.gpus.get(g).and_then(|g| g.vm_file).is_none() {
            return Err(unbound);
        }
        Ok(g)
    }

    /// `kfd_ioctl_set_trap_handler` {u64 tba_addr, u64 tma_addr, u32 gpu_id, u32 pad}: EINVAL
    /// for an unknown GPU, ESRCH before ACQUIRE_VM, else records TBA/TMA for the process on
    /// that GPU (`kfd_process_set_trap_handler`). The simulator never runs the handler: a
    /// wave that traps faults, and the fault names the installed TBA.
    fn set_trap_handler(&self, kbuf: &[u8]) -> Result<(), Errno> {
        let (tba, tma, gpu_id) = (dword(kbuf, 0), dword(kbuf, 8), word(kbuf, 16));
        let g = self.bound_gpu(gpu_id, Errno::EINVAL, Errno::ESRCH)?;
        if let Some(gpu) = self.lock().gpus.get_mut(g) {
            gpu.trap_handler = Some((tba, tma));
        }
        Ok(())
    }

    /// `kfd_ioctl_set_scratch_backing_va` {u64 va_addr, u32 gpu_id, u32 pad}: EINVAL for an
    /// unknown GPU, `kfd_bind_process_to_device`'s own ENODEV before ACQUIRE_VM (passed on
    /// as is, unlike SET_TRAP_HANDLER's ESRCH), else records `sh_hidden_private_base`.
    fn set_scratch_backing_va(&self, kbuf: &[u8]) -> Result<(), Errno> {
        let (va, gpu_id) = (dword(kbuf, 0), word(kbuf, 8));
        let g = self.bound_gpu(gpu_id, Errno::EINVAL, Errno::ENODEV)?;
        if let Some(gpu) = self.lock().gpus.get_mut(g) {
            gpu.scratch_backing_va = va;
        }
        Ok(())
    }

    /// `kfd_ioctl_get_tile_config` {u64 tile_config_ptr, u64 macro_tile_config_ptr,
    /// u32 num_tile_configs, u32 num_macro_tile_configs, u32 gpu_id, u32 gb_addr_config,
    /// u32 num_banks, u32 num_ranks}: EINVAL for an unknown GPU (no VM needed); fills
    /// `gb_addr_config`, `num_banks` and `num_ranks` (0: not set from GFX9 on), clamps each count
    /// to the kernel's array (32 tile, 16 macro-tile modes, all 0 from GFX9 on) and copies that
    /// many words out; a copy of more than 0 words has no borrowed memory to land in, the
    /// kernel's EFAULT (the count then reads 0).
    fn get_tile_config(&self, kbuf: &mut [u8]) -> Result<(), Errno> {
        let gpu_id = word(kbuf, 24);
        let gfx = {
            let st = self.lock();
            let g = st.gpu_by_id(gpu_id).ok_or(Errno::EINVAL)?;
            st.gpus.get(g).map_or(0, |g| g.props.gfx_target_version)
        };
        set_word(kbuf, 28, gb_addr_config(gfx));
        set_word(kbuf, 32, 0);
        set_word(kbuf, 36, 0);
        let tiles = word(kbuf, 16).min(NUM_TILE_CONFIGS);
        set_word(kbuf, 16, tiles);
        if tiles > 0 {
            set_word(kbuf, 16, 0);
            return Err(Errno::EFAULT);
        }
        let macros = word(kbuf, 20).min(NUM_MACRO_TILE_CONFIGS);
        set_word(kbuf, 20, macros);
        if macros > 0 {
            set_word(kbuf, 20, 0);
            return Err(Errno::EFAULT);
        }
        Ok(())
    }

    /// `kfd_ioctl_update_queue` {u64 ring_base_address, u32 queue_id, u32 ring_size,
    /// u32 queue_percentage, u32 queue_priority} and `pqm_update_queue_properties`: the
    /// argument checks of CREATE_QUEUE, EFAULT for an unknown queue, and (Linux 6.12 on) a new
    /// ring must be a GPU mapping of exactly `ring_size` bytes (EFAULT otherwise). The queue
    /// then runs on the new ring from its read pointer, at the new percentage and priority;
    /// it is active only with a ring (base and size non-zero) and a percentage above 0
    /// (`QUEUE_IS_ACTIVE`), and the simulated CP fetches nothing from an inactive queue.
    fn update_queue(&self, kbuf: &[u8]) -> Result<(), Errno> {
        let ring_base = dword(kbuf, 0);
        let (queue_id, mut ring_size) = (word(kbuf, 8), word(kbuf, 12));
        let (percentage, priority) = (word(kbuf, 16), word(kbuf, 20));
        // Bits 15:8 of queue_percentage are the PM4 target XCC.
        if percentage & 0xFF > MAX_QUEUE_PERCENTAGE {
            return Err(Errno::EINVAL);
        }
        if priority > MAX_QUEUE_PRIORITY {
            return Err(Errno::EINVAL);
        }
        if ring_base != 0 && !access_ok(ring_base, 8) {
            return Err(Errno::EFAULT);
        }
        if ring_size != 0 && !ring_size.is_power_of_two() {
            return Err(Errno::EINVAL);
        }
        // The clamp is not written back (UPDATE_QUEUE is _IOW).
        ring_size = ring_size.max(MIN_QUEUE_RING_SIZE);
        let r = {
            let mut st = self.lock();
            let g = st.queues.get(&queue_id).ok_or(Errno::EFAULT)?.gpu;
            // "Update with NULL ring address is used to disable the queue": only a new ring
            // (address and size) is looked up and replaces the ring BO reference.
            if ring_base != 0 && self.cfg.queue_buffer_rules != QueueBufferRules::Pre612 {
                let h = Self::buffer_get(&st, g, ring_base, u64::from(ring_size))
                    .map_err(|_| Errno::EFAULT)?;
                // kfd_queue_acquire_buffers took wptr, rptr, then the ring: refs[2].
                let old = st
                    .queues
                    .get_mut(&queue_id)
                    .and_then(|q| q.refs.get_mut(2))
                    .map(|r| core::mem::replace(r, (g, h)));
                if let Some((og, o)) = old
                    && let Some(c) = st.bos.get_mut(&o).and_then(|b| b.mapped.get_mut(&og))
                {
                    *c = c.saturating_sub(1);
                }
                if let Some(c) = st.bos.get_mut(&h).and_then(|b| b.mapped.get_mut(&g)) {
                    *c += 1;
                }
            }
            let q = st.queues.get_mut(&queue_id).ok_or(Errno::EFAULT)?;
            q.info.ring_base = ring_base;
            q.info.ring_size = ring_size;
            q.info.percentage = percentage & 0xFF;
            q.info.priority = priority;
            Ok(())
        };
        self.queues_changed(r)
    }

    /// `kfd_ioctl_set_cu_mask` {u32 queue_id, u32 num_cu_mask, u64 cu_mask_ptr}: EINVAL when
    /// `num_cu_mask` is not a multiple of 32 or is 0; more than 1024 bits are cut to 1024; then
    /// `memdup_user` of the mask, before the queue is looked up: no memory is borrowed for it,
    /// the kernel's EFAULT.
    fn set_cu_mask(kbuf: &[u8]) -> Result<(), Errno> {
        let n = word(kbuf, 4);
        if n % 32 != 0 || n == 0 {
            return Err(Errno::EINVAL);
        }
        Err(Errno::EFAULT)
    }

    /// `kfd_ioctl_get_queue_wave_state` {u64 ctl_stack_address, u32 ctl_stack_used_size,
    /// u32 save_area_used_size, u32 queue_id, u32 pad}: EFAULT for an unknown queue
    /// (`pqm_get_wave_state`); EINVAL for an SDMA queue, an active queue or a queue without a
    /// CWSR area (dqm `get_wave_state`); else the used sizes (0: the simulated CP saves no
    /// waves) and the context-save header is copied to `ctl_stack_address`, which has no
    /// borrowed memory: the kernel's EFAULT, after the sizes are written.
    fn get_queue_wave_state(&self, kbuf: &mut [u8]) -> Result<(), Errno> {
        let queue_id = word(kbuf, 16);
        let st = self.lock();
        let q = st.queues.get(&queue_id).ok_or(Errno::EFAULT)?;
        let evicted = st.gpus.get(q.gpu).is_some_and(|g| g.evicted);
        let active = is_active(&q.info, evicted);
        let cwsr = st.gpus.get(q.gpu).is_some_and(|g| g.sizes.cwsr_size != 0);
        if q.info.kind != QueueKind::Compute || active || !cwsr {
            return Err(Errno::EINVAL);
        }
        drop(st);
        set_word(kbuf, 8, 0);
        set_word(kbuf, 12, 0);
        Err(Errno::EFAULT)
    }

    /// `dma_buf_get(fd)` as GET_DMABUF_INFO and IMPORT_DMABUF start: EBADF for a descriptor
    /// that is not open, EINVAL for one that is not a DMA-buf (the simulator hands none out).
    fn dmabuf_fd_lookup(&self, fd: u32) -> Result<(), Errno> {
        // CAST: the kernel takes the fd as an int.
        let fd = fd as i32;
        if self.lock().fds.contains_key(&fd) {
            Err(Errno::EINVAL)
        } else {
            Err(Errno::EBADF)
        }
    }

    /// `kfd_ioctl_import_dmabuf` {u64 va_addr, u64 handle, u32 gpu_id, u32 dmabuf_fd}: the
    /// DMA-buf is looked up first.
    fn import_dmabuf(&self, kbuf: &[u8]) -> Result<(), Errno> {
        self.dmabuf_fd_lookup(word(kbuf, 20))
    }

    /// `kfd_ioctl_export_dmabuf` {u64 handle, u32 flags, u32 dmabuf_fd}: EINVAL for a handle
    /// whose GPU or buffer the process does not have. Exporting a real buffer is not
    /// simulated (no DMA-buf files): ENODEV, a named refusal where the kernel succeeds.
    fn export_dmabuf(&self, kbuf: &[u8]) -> Result<(), Errno> {
        let handle = dword(kbuf, 0);
        let st = self.lock();
        // CAST: GET_GPU_ID(handle) is the upper 32 bits.
        st.gpu_by_id((handle >> 32) as u32).ok_or(Errno::EINVAL)?;
        if !st.bos.contains_key(&handle) {
            return Err(Errno::EINVAL);
        }
        Err(Errno::ENODEV)
    }

    /// `kfd_ioctl_alloc_queue_gws` {u32 queue_id, u32 num_gws, u32 first_gws, u32 pad}: EINVAL
    /// for an unknown queue, then ENODEV: the simulated GPUs have no GWS (`dev->gws` is NULL;
    /// their topology reports `num_gws 0`).
    fn alloc_queue_gws(&self, kbuf: &[u8]) -> Result<(), Errno> {
        if !self.lock().queues.contains_key(&word(kbuf, 0)) {
            return Err(Errno::EINVAL);
        }
        Err(Errno::ENODEV)
    }

    /// `kfd_ioctl_smi_events` {u32 gpuid, u32 anon_fd}: EINVAL for an unknown GPU. The event
    /// file (`kfd_smi_event_open`) is not simulated: ENODEV for a known GPU, a named refusal
    /// where the kernel succeeds (rocm-smi's event watch then reports no support).
    fn smi_events(&self, kbuf: &[u8]) -> Result<(), Errno> {
        self.lock().gpu_by_id(word(kbuf, 0)).ok_or(Errno::EINVAL)?;
        Err(Errno::ENODEV)
    }
}

/// `QUEUE_IS_ACTIVE`: a ring (size and address non-zero), a percentage above 0, not evicted.
pub(crate) fn is_active(q: &QueueInfo, evicted: bool) -> bool {
    q.ring_size > 0 && q.ring_base != 0 && q.percentage > 0 && !evicted
}
