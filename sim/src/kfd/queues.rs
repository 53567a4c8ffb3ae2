//! Queue ioctls: CREATE_QUEUE / DESTROY_QUEUE with `kfd_queue.c`'s buffer checks.

use super::*;

impl SimKfd {
    /// `kfd_queue_buffer_get`: the mapping containing `addr` must start at `addr`'s page and,
    /// when `expected >= 4 KiB`, be exactly `expected` bytes. Returns the BO handle.
    pub(super) fn buffer_get(
        st: &State,
        gpu: usize,
        addr: u64,
        expected: u64,
    ) -> Result<u64, Errno> {
        let (start, e) = st.lookup(gpu, addr).ok_or(Errno::EINVAL)?;
        let page = addr / PAGE;
        if page != start / PAGE {
            return Err(Errno::EINVAL);
        }
        let pages = expected / PAGE;
        if pages != 0 && e.end / PAGE != page + pages {
            return Err(Errno::EINVAL);
        }
        Ok(e.handle)
    }

    pub(super) fn create_queue(&self, a: &mut CreateQueueArgs) -> Result<(), Errno> {
        if a.queue_percentage & 0xFF > KFD_MAX_QUEUE_PERCENTAGE {
            return Err(Errno::EINVAL);
        }
        if a.queue_priority > KFD_MAX_QUEUE_PRIORITY {
            return Err(Errno::EINVAL);
        }
        if a.ring_base_address != 0 && !access_ok(a.ring_base_address, 8) {
            return Err(Errno::EFAULT);
        }
        if a.ring_size != 0 && !a.ring_size.is_power_of_two() {
            return Err(Errno::EINVAL);
        }
        if a.ring_size < KFD_MIN_QUEUE_RING_SIZE {
            a.ring_size = KFD_MIN_QUEUE_RING_SIZE;
        }
        if !access_ok(a.read_pointer_address, 4) || !access_ok(a.write_pointer_address, 4) {
            return Err(Errno::EFAULT);
        }
        if (a.eop_buffer_address != 0 && !access_ok(a.eop_buffer_address, 4))
            || (a.ctx_save_restore_address != 0 && !access_ok(a.ctx_save_restore_address, 4))
        {
            return Err(Errno::EFAULT);
        }
        let qt = a.queue_type;
        if qt > KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID {
            return Err(Errno::ENOTSUPP);
        }
        let st = self.lock();
        let g = st.gpu_by_id(a.gpu_id).ok_or(Errno::EINVAL)?;
        let (bound, sizes, engines, per_engine) = {
            let gpu = st.gpus.get(g).ok_or(Errno::EINVAL)?;
            (
                gpu.vm_file.is_some(),
                gpu.sizes,
                gpu.props.num_sdma_engines,
                gpu.props.num_sdma_queues_per_engine,
            )
        };
        if !bound {
            return Err(Errno::ESRCH);
        }
        if qt == KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID && a.sdma_engine_id >= engines {
            return Err(Errno::EINVAL);
        }
        // kfd_chardev.c set_queue_properties_from_user: COMPUTE_AQL is a compute queue of
        // KFD_QUEUE_FORMAT_AQL; every check and buffer rule of compute queues applies to it
        // (kfd_queue.c kfd_queue_acquire_buffers halves the expected ring size only for AQL
        // queues on gfx7/gfx8, which hcq-sim does not simulate).
        let kind = match qt {
            KFD_IOC_QUEUE_TYPE_COMPUTE => QueueKind::Compute,
            KFD_IOC_QUEUE_TYPE_COMPUTE_AQL => QueueKind::Aql,
            _ => QueueKind::Sdma,
        };

        // kfd_queue_acquire_buffers (Linux 6.12 on; earlier kernels looked nothing up).
        let mut refs = Vec::new();
        if self.cfg.queue_buffer_rules != QueueBufferRules::Pre612 {
            self.acquire_buffers(&st, g, kind, sizes, a, &mut refs)?;
        }
        self.finish_create_queue(st, g, kind, qt, engines, per_engine, refs, a)
    }

    /// `kfd_queue_acquire_buffers` (Linux 6.12): each buffer CREATE_QUEUE names must be a GPU
    /// mapping of the right size; `refs` gets the handles to hold.
    fn acquire_buffers(
        &self,
        st: &State,
        g: usize,
        kind: QueueKind,
        sizes: CwsrSizes,
        a: &CreateQueueArgs,
        refs: &mut Vec<u64>,
    ) -> Result<(), Errno> {
        refs.push(Self::buffer_get(st, g, a.write_pointer_address, PAGE)?);
        refs.push(Self::buffer_get(st, g, a.read_pointer_address, PAGE)?);
        refs.push(Self::buffer_get(
            st,
            g,
            a.ring_base_address,
            u64::from(a.ring_size),
        )?);
        if kind != QueueKind::Sdma && sizes.cwsr_size != 0 {
            let strict = self.cfg.queue_buffer_rules == QueueBufferRules::Strict612;
            if a.eop_buffer_address != 0 {
                let node = u64::from(sizes.eop_buffer_size);
                let ok = if strict {
                    a.eop_buffer_size == node
                } else {
                    a.eop_buffer_size >= node
                };
                if !ok {
                    return Err(Errno::EINVAL);
                }
                let expected = page_align(a.eop_buffer_size).ok_or(Errno::EINVAL)?;
                refs.push(Self::buffer_get(st, g, a.eop_buffer_address, expected)?);
            }
            if a.ctl_stack_size != sizes.ctl_stack_size {
                return Err(Errno::EINVAL);
            }
            let ok = if strict {
                a.ctx_save_restore_size == sizes.cwsr_size
            } else {
                a.ctx_save_restore_size >= sizes.cwsr_size
            };
            if !ok {
                return Err(Errno::EINVAL);
            }
            let declared = if strict {
                sizes.cwsr_size
            } else {
                a.ctx_save_restore_size
            };
            let total = sizes.cwsr_mapping_size(declared).ok_or(Errno::EINVAL)?;
            refs.push(Self::buffer_get(st, g, a.ctx_save_restore_address, total)?);
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn finish_create_queue(
        &self,
        mut st: MutexGuard<'_, State>,
        g: usize,
        kind: QueueKind,
        qt: u32,
        engines: u32,
        per_engine: u32,
        refs: Vec<u64>,
        a: &mut CreateQueueArgs,
    ) -> Result<(), Errno> {
        let gpu = st.gpus.get(g).ok_or(Errno::EINVAL)?;
        if gpu.queue_count >= MAX_QUEUES_PER_DEVICE {
            return Err(Errno::ENOSPC);
        }
        let queue_id = lowest_free_key(&st.queues, 0, MAX_PROCESS_QUEUES).ok_or(Errno::ENOMEM)?;
        let (sdma_slot, sdma_engine) = if kind == QueueKind::Sdma {
            let total = engines.saturating_mul(per_engine);
            let slot = if qt == KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID {
                (0..per_engine)
                    .map(|q| q * engines + a.sdma_engine_id)
                    .find(|s| !gpu.sdma_slots.contains(s))
            } else if qt == KFD_IOC_QUEUE_TYPE_SDMA_XGMI {
                None // no XGMI SDMA engines simulated
            } else {
                lowest_free(&gpu.sdma_slots, 0, total)
            }
            .ok_or(Errno::ENOMEM)?;
            let engine = slot.checked_rem(engines).unwrap_or(0);
            let q = slot.checked_div(engines).unwrap_or(0);
            (Some(slot), Some((engine, q)))
        } else {
            (None, None)
        };
        let doorbell_id = match sdma_engine {
            Some((e, q)) => SDMA_DOORBELL_BASE + e * 16 + q,
            None => lowest_free(&gpu.doorbell_ids, 0, SDMA_DOORBELL_BASE).ok_or(Errno::EBUSY)?,
        };
        let doorbell_offset = KfdMmapOffset::doorbell(a.gpu_id, doorbell_id).encode();
        let percentage = a.queue_percentage & 0xFF;
        let info = QueueInfo {
            queue_id,
            gpu_id: a.gpu_id,
            kind,
            ring_base: a.ring_base_address,
            ring_size: a.ring_size,
            rptr_addr: a.read_pointer_address,
            wptr_addr: a.write_pointer_address,
            doorbell_id,
            doorbell_offset,
            eop_addr: a.eop_buffer_address,
            eop_size: a.eop_buffer_size,
            ctx_save_restore_addr: a.ctx_save_restore_address,
            ctx_save_restore_size: a.ctx_save_restore_size,
            priority: a.queue_priority,
            percentage,
            pm4_target_xcc: (a.queue_percentage >> 8) & 0xFF,
            sdma_engine,
            active: percentage > 0 && !gpu.evicted,
        };
        // Commit.
        let mut held = Vec::with_capacity(refs.len());
        for h in refs {
            if let Some(c) = st.bos.get_mut(&h).and_then(|b| b.mapped.get_mut(&g)) {
                *c += 1;
            }
            held.push((g, h));
        }
        if let Some(gpu) = st.gpus.get_mut(g) {
            gpu.doorbell_ids.insert(doorbell_id);
            if let Some(s) = sdma_slot {
                gpu.sdma_slots.insert(s);
            }
            gpu.queue_count += 1;
            // A recycled doorbell must not carry a stale value (rocm-systems#8821).
            // An AQL doorbell holds the index of the last packet written, so "none written
            // yet" is index -1 (the MQD starts the queue empty: CP_HQD_PQ_WPTR = RPTR = 0).
            let empty = if kind == QueueKind::Aql { u64::MAX } else { 0 };
            let _ = gpu
                .doorbells
                .store_u64(u64::from(doorbell_id) * KFD_DOORBELL_SIZE, empty);
        }
        st.queues.insert(
            queue_id,
            Queue {
                info,
                gpu: g,
                refs: held,
                sdma_slot,
                ctl_stack_size: a.ctl_stack_size,
                cu_mask: None,
            },
        );
        a.queue_id = queue_id;
        a.doorbell_offset = doorbell_offset;
        Ok(())
    }

    pub(super) fn destroy_queue(&self, a: &mut DestroyQueueArgs) -> Result<(), Errno> {
        let mut st = self.lock();
        let q = st.queues.remove(&a.queue_id).ok_or(Errno::EINVAL)?;
        for (g, h) in &q.refs {
            if let Some(c) = st.bos.get_mut(h).and_then(|b| b.mapped.get_mut(g)) {
                *c = c.saturating_sub(1);
            }
        }
        if let Some(gpu) = st.gpus.get_mut(q.gpu) {
            gpu.doorbell_ids.remove(&q.info.doorbell_id);
            if let Some(s) = q.sdma_slot {
                gpu.sdma_slots.remove(&s);
            }
            gpu.queue_count = gpu.queue_count.saturating_sub(1);
        }
        Ok(())
    }
}
