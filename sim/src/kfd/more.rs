//! The ioctls of the kernel's table that hcq does not issue but other KFD clients (ROCr's
//! libhsakmt, rocm-smi, debuggers) do: each mirrors its `kfd_chardev.c` handler and what that
//! calls (`kfd_process_queue_manager.c`, `kfd_device_queue_manager.c`), with the kernel's
//! argument checks in the kernel's order and its errnos. Arguments are read at the kernel's
//! byte offsets (`<linux/kfd_ioctl.h>`); a user pointer inside one is never followed. Where
//! the kernel copies from or to user memory (SET_CU_MASK's mask, GET_TILE_CONFIG's arrays,
//! GET_QUEUE_WAVE_STATE's control stack, GET_DMABUF_INFO's metadata) the copy goes to the
//! slices the [`Request`] borrows, and a copy past their end is the kernel's EFAULT for an
//! unmapped pointer (the commands with no typed constructor borrow nothing).

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
/// `max_num_cus` of `kfd_ioctl_set_cu_mask`: mask bits past it are dropped.
const MAX_CU_MASK_BITS: u32 = 1024;
/// `sizeof(struct mqd_user_context_save_area_header)`: what GET_QUEUE_WAVE_STATE writes at
/// the start of each XCC's control stack copy.
const WAVE_STATE_HEADER: usize = 16;

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

    /// The CU mask SET_CU_MASK last stored on queue `queue_id` (`min(num_cu_mask, 1024) / 32`
    /// words as copied from the caller; bit `i` = CU `i`); `None` for an unknown queue or one
    /// whose mask was never set (all CUs). The simulated engine does not restrict dispatch by
    /// it.
    #[must_use]
    pub fn queue_cu_mask(&self, queue_id: u32) -> Option<Vec<u32>> {
        self.lock().queues.get(&queue_id)?.cu_mask.clone()
    }

    /// Runs command `nr` if this module handles it (`None`: not one of these), with the user
    /// memory `req` borrows.
    pub(super) fn dispatch_more(
        &self,
        nr: u8,
        kbuf: &mut [u8],
        req: &mut Request<'_>,
    ) -> Option<Result<(), Errno>> {
        let r = match nr {
            0x07 => self.update_queue(kbuf),
            0x11 => self.set_scratch_backing_va(kbuf),
            0x12 => {
                let (tiles, macros) = req.tile_configs();
                self.get_tile_config(kbuf, tiles, macros)
            }
            0x13 => self.set_trap_handler(kbuf),
            0x1A => self.set_cu_mask(kbuf, req.cu_mask()),
            0x1B => self.get_queue_wave_state(kbuf, req.ctl_stack()),
            0x1C => self.get_dmabuf_info(kbuf),
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
    /// `gb_addr_config`, `num_banks` and `num_ranks` (0: not set from GFX9 on), clamps each
    /// count to the kernel's array (`amdgpu_amdkfd_get_tile_config`: 32 tile, 16 macro-tile
    /// modes, whatever the ASIC; from GFX9 on amdgpu never fills them, so every entry is 0) and
    /// copies that many words into the borrowed `tiles` / `macros`. A count past its slice is
    /// the kernel's `copy_to_user` fault: EFAULT, that count reads 0 (the tile array is
    /// copied, and may fault, before the macro-tile count is even clamped).
    fn get_tile_config(
        &self,
        kbuf: &mut [u8],
        tiles: &mut [u32],
        macros: &mut [u32],
    ) -> Result<(), Errno> {
        let gpu_id = word(kbuf, 24);
        let gfx = {
            let st = self.lock();
            let g = st.gpu_by_id(gpu_id).ok_or(Errno::EINVAL)?;
            st.gpus.get(g).map_or(0, |g| g.props.gfx_target_version)
        };
        set_word(kbuf, 28, gb_addr_config(gfx));
        set_word(kbuf, 32, 0);
        set_word(kbuf, 36, 0);
        // (count offset, kernel array size, borrowed slice), in the kernel's order.
        for (at, kernel_len, user) in [
            (16, NUM_TILE_CONFIGS, tiles),
            (20, NUM_MACRO_TILE_CONFIGS, macros),
        ] {
            let n = word(kbuf, at).min(kernel_len);
            set_word(kbuf, at, n);
            // CAST: at most 32.
            match user.get_mut(..n as usize) {
                Some(dst) => dst.fill(0),
                None => {
                    set_word(kbuf, at, 0);
                    return Err(Errno::EFAULT);
                }
            }
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
            q.info.pm4_target_xcc = (percentage >> 8) & 0xFF;
            q.info.priority = priority;
            Ok(())
        };
        self.queues_changed(r)
    }

    /// `kfd_ioctl_set_cu_mask` {u32 queue_id, u32 num_cu_mask, u64 cu_mask_ptr}: EINVAL when
    /// `num_cu_mask` is not a multiple of 32 or is 0; more than 1024 bits are cut to 1024; then
    /// `memdup_user` of `min(num_cu_mask, 1024) / 32` words from the borrowed `mask`, before the
    /// queue is looked up (past the slice: EFAULT). `pqm_update_mqd`: EFAULT for an unknown
    /// queue; on GC 10.0 up to (not including) 12.1, where CUs come in WGP pairs, EINVAL when a
    /// pair within the mask's bits is half enabled. The mask is then the queue's
    /// ([`SimKfd::queue_cu_mask`]); `mqd_symmetrically_map_cu_mask` uses only the bits below
    /// the GPU's CU count (a debug line names the ignored ones) and SDMA queues ignore it.
    fn set_cu_mask(&self, kbuf: &[u8], mask: &[u32]) -> Result<(), Errno> {
        let (queue_id, n) = (word(kbuf, 0), word(kbuf, 4));
        if n % 32 != 0 || n == 0 {
            return Err(Errno::EINVAL);
        }
        let bits = n.min(MAX_CU_MASK_BITS);
        // CAST: at most 32 words.
        let words = mask.get(..(bits / 32) as usize).ok_or(Errno::EFAULT)?;
        let mut st = self.lock();
        let q = st.queues.get(&queue_id).ok_or(Errno::EFAULT)?;
        let props = st.gpus.get(q.gpu).map(|g| g.props);
        let gfx = props.map_or(0, |p| p.gfx_target_version);
        // The kernel's `ptr[i / 32] >> (i % 32)`.
        let bit = |i: u32| {
            words
                // CAST: i < 1024.
                .get((i / 32) as usize)
                .is_some_and(|w| w >> (i % 32) & 1 != 0)
        };
        // GC 10.0.0 <= version < 12.1.0, as gfx_target_version.
        if (100000..120100).contains(&gfx) && (0..bits).step_by(2).any(|i| bit(i) != bit(i + 1)) {
            return Err(Errno::EINVAL);
        }
        let cus = props.map_or(0, |p| p.simd_count.checked_div(p.simd_per_cu).unwrap_or(0));
        if (cus..bits).any(bit) {
            log::debug!(
                "sim kfd SET_CU_MASK queue {queue_id}: mask bits past the GPU's {cus} CUs are ignored"
            );
        }
        let words = words.to_vec();
        if let Some(q) = st.queues.get_mut(&queue_id) {
            q.cu_mask = Some(words);
        }
        Ok(())
    }

    /// `kfd_ioctl_get_queue_wave_state` {u64 ctl_stack_address, u32 ctl_stack_used_size,
    /// u32 save_area_used_size, u32 queue_id, u32 pad}: EFAULT for an unknown queue
    /// (`pqm_get_wave_state`); EINVAL for an SDMA queue, an active queue or a GPU without CWSR
    /// (dqm `get_wave_state`). Else the MQD manager's `get_wave_state`: the simulated CP never
    /// preempts with waves saved, so the MQD is as `init_mqd` left it (control stack and
    /// work-group offsets both at the queue's `ctl_stack_size`; on gfx9 only for a queue
    /// created with a save area, else 0): both used sizes are 0 and written first, then the
    /// 16-byte header {control_stack_offset, control_stack_size, wave_state_offset,
    /// wave_state_size} goes to the start of the borrowed `ctl_stack`, once per XCC
    /// `ctx_save_restore_size` apart (GC 9.4.3's `get_wave_state_v9_4_3`; one XCC elsewhere).
    /// gfx9 then copies the 0 control-stack bytes in use, which cannot fault. A header past the
    /// slice is EFAULT (the sizes stay written, as the kernel copies the argument back). gfx10,
    /// gfx11 and gfx12 write the header alike (`kfd_mqd_manager_v1x.c`; the first gfx11
    /// manager had its header copy commented out and wrote nothing).
    fn get_queue_wave_state(&self, kbuf: &mut [u8], ctl_stack: &mut [u8]) -> Result<(), Errno> {
        let queue_id = word(kbuf, 16);
        let st = self.lock();
        let q = st.queues.get(&queue_id).ok_or(Errno::EFAULT)?;
        let gpu = st.gpus.get(q.gpu).ok_or(Errno::EFAULT)?;
        let active = is_active(&q.info, gpu.evicted);
        // Compute queues, PM4 or AQL (KFD_QUEUE_TYPE_COMPUTE of either format), have a save area.
        if q.info.kind == QueueKind::Sdma || active || gpu.sizes.cwsr_size == 0 {
            return Err(Errno::EINVAL);
        }
        let gfx9 = gpu.props.gfx_target_version < 100000;
        let ctl = if gfx9 && q.info.ctx_save_restore_addr == 0 {
            0
        } else {
            q.ctl_stack_size
        };
        let (xccs, stride) = (gpu.sizes.num_xcc.max(1), q.info.ctx_save_restore_size);
        drop(st);
        set_word(kbuf, 8, 0);
        set_word(kbuf, 12, 0);
        let mut header = [0u8; WAVE_STATE_HEADER];
        for (i, v) in [ctl, 0, ctl, 0].into_iter().enumerate() {
            set_word(&mut header, i * 4, v);
        }
        for xcc in 0..xccs {
            let at =
                usize::try_from(u64::from(xcc) * u64::from(stride)).map_err(|_| Errno::EFAULT)?;
            at.checked_add(WAVE_STATE_HEADER)
                .and_then(|end| ctl_stack.get_mut(at..end))
                .ok_or(Errno::EFAULT)?
                .copy_from_slice(&header);
        }
        Ok(())
    }

    /// `kfd_ioctl_get_dmabuf_info` {u64 size, u64 metadata_ptr, u32 metadata_size, u32 gpu_id,
    /// u32 flags, u32 dmabuf_fd}: with a metadata pointer, the kernel buffer of
    /// `metadata_size` bytes is allocated first (ENOMEM past kmalloc's 4 MiB); then
    /// `dma_buf_get` fails (see [`Self::dmabuf_fd_lookup`]): the simulator hands out no
    /// DMA-bufs, so the borrowed metadata buffer is never written.
    fn get_dmabuf_info(&self, kbuf: &[u8]) -> Result<(), Errno> {
        if dword(kbuf, 8) != 0 && u64::from(word(kbuf, 16)) > KMALLOC_MAX {
            return Err(Errno::ENOMEM);
        }
        self.dmabuf_fd_lookup(word(kbuf, 28))
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
