//! Memory ioctls: ALLOC / FREE / MAP / UNMAP of GPU memory (`kfd_chardev.c`).

use super::*;

impl SimKfd {
    pub(super) fn alloc(&self, a: &mut AllocMemoryOfGpuArgs) -> Result<(), Errno> {
        if a.size == 0 {
            return Err(Errno::EINVAL);
        }
        let mut st = self.lock();
        let g = st.gpu_by_id(a.gpu_id).ok_or(Errno::EINVAL)?;
        let (large_bar, bound) = {
            let gpu = st.gpus.get(g).ok_or(Errno::EINVAL)?;
            (gpu.cfg.large_bar, gpu.vm_file.is_some())
        };
        let f = a.flags;
        if f & KFD_IOC_ALLOC_MEM_FLAGS_VRAM != 0
            && f & KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC != 0
            && !large_bar
        {
            return Err(Errno::EINVAL);
        }
        if !bound {
            return Err(Errno::ENODEV);
        }
        let size = page_align(a.size).ok_or(Errno::EINVAL)?;
        if f & KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL != 0 && size != KFD_DOORBELL_SLICE_SIZE {
            return Err(Errno::EINVAL);
        }
        if f & KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP != 0 && size != PAGE {
            return Err(Errno::EINVAL);
        }
        let kind = if f & KFD_IOC_ALLOC_MEM_FLAGS_VRAM != 0 {
            BoKind::Vram
        } else if f & KFD_IOC_ALLOC_MEM_FLAGS_GTT != 0 {
            BoKind::Gtt
        } else if f & KFD_IOC_ALLOC_MEM_FLAGS_USERPTR != 0 {
            BoKind::Userptr
        } else if f & KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL != 0 {
            BoKind::Doorbell
        } else if f & KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP != 0 {
            BoKind::MmioRemap
        } else {
            return Err(Errno::EINVAL);
        };
        if kind == BoKind::Userptr && a.mmap_offset == 0 {
            return Err(Errno::EINVAL);
        }
        let gtt_size = self.cfg.gtt_size;
        let gtt_used = st.gtt_used;
        let gpu = st.gpus.get_mut(g).ok_or(Errno::EINVAL)?;
        match kind {
            BoKind::Vram if gpu.vram_used.saturating_add(size) > gpu.vram_limit => {
                return Err(Errno::ENOMEM);
            }
            BoKind::Gtt if gtt_used.saturating_add(size) > gtt_size => {
                return Err(Errno::ENOMEM);
            }
            _ => {}
        }
        let backing = match kind {
            BoKind::Vram | BoKind::Gtt => {
                let m = SharedMem::new(
                    if kind == BoKind::Vram {
                        "kfd-vram"
                    } else {
                        "kfd-gtt"
                    },
                    size,
                )?;
                // amdgpu hands out resident, cleared memory. The sim populates small BOs at
                // once; larger ones (a runtime's scratch area, a kernarg arena, a tensor)
                // when the first copy or fill writes them in bulk, so a device open does not
                // zero-fill tens of MiB nobody touches, and a copy into fresh VRAM still
                // takes no page fault per 4 KiB.
                if size <= POPULATE_MAX {
                    m.populate();
                } else {
                    m.populate_on_first_bulk_write();
                }
                Backing::Shared(Arc::new(m))
            }
            BoKind::Userptr => {
                // The simulated GPU reaches USERPTR pages through /proc/self/mem, writes that
                // must not land in memory Rust owns: the sim pins only pages of mappings it
                // made itself (the driver maps host buffers through the port), where a real
                // kernel pins any user page.
                Backing::User(Arc::new(UserPages::pin(&self.maps, a.mmap_offset, size)?))
            }
            BoKind::Doorbell => Backing::Shared(Arc::clone(&gpu.doorbells)),
            BoKind::MmioRemap => Backing::Shared(Arc::clone(&gpu.mmio)),
        };
        let idr = lowest_free(&gpu.idr, 0, u32::MAX).ok_or(Errno::EFAULT)?;
        gpu.idr.insert(idr);
        let drm_offset = gpu.drm_offset_next;
        gpu.drm_offset_next = gpu.drm_offset_next.saturating_add(size);
        match kind {
            BoKind::Vram => gpu.vram_used += size,
            BoKind::Gtt => st.gtt_used += size,
            _ => {}
        }
        let handle = (u64::from(a.gpu_id) << 32) | u64::from(idr);
        st.bos.insert(
            handle,
            Bo {
                gpu: g,
                va: a.va_addr,
                size,
                flags: f,
                kind,
                backing,
                drm_offset,
                mapped: BTreeMap::new(),
            },
        );
        a.handle = handle;
        a.mmap_offset = if kind == BoKind::MmioRemap {
            KfdMmapOffset {
                ty: KfdMmapType::Mmio,
                gpu_id: a.gpu_id,
                value: 0,
            }
            .encode()
        } else {
            drm_offset
        };
        Ok(())
    }

    pub(super) fn free(&self, a: &mut FreeMemoryOfGpuArgs) -> Result<(), Errno> {
        let mut st = self.lock();
        if st.event_page.as_ref().and_then(|p| p.handle) == Some(a.handle) {
            return Err(Errno::EPERM);
        }
        // CAST: the handle's high 32 bits are the gpu_id.
        let g = st.gpu_by_id((a.handle >> 32) as u32).ok_or(Errno::EINVAL)?;
        let bo = st.bos.get(&a.handle).ok_or(Errno::EINVAL)?;
        if !bo.mapped.is_empty() {
            return Err(Errno::EBUSY);
        }
        let (kind, size) = (bo.kind, bo.size);
        st.bos.remove(&a.handle);
        self.vm_changed();
        for r in st.retired.iter_mut().filter(|r| r.handle == a.handle) {
            r.freed = true;
        }
        match kind {
            BoKind::Gtt => st.gtt_used = st.gtt_used.saturating_sub(size),
            BoKind::Vram => {
                if let Some(gpu) = st.gpus.get_mut(g) {
                    gpu.vram_used = gpu.vram_used.saturating_sub(size);
                }
            }
            _ => {}
        }
        if let Some(gpu) = st.gpus.get_mut(g) {
            // CAST: low 32 bits are the IDR id.
            gpu.idr.remove(&(a.handle as u32));
        }
        Ok(())
    }

    pub(super) fn read_device_ids(a: &MapMemoryToGpuArgs, user: &[u32]) -> Result<Vec<u32>, Errno> {
        if a.n_devices == 0 || a.n_success > a.n_devices {
            return Err(Errno::EINVAL);
        }
        if u64::from(a.n_devices) * 4 > KMALLOC_MAX {
            return Err(Errno::ENOMEM);
        }
        // copy_from_user from the list the request borrows: EFAULT past its end.
        user.get(..a.n_devices as usize)
            .map(<[u32]>::to_vec)
            .ok_or(Errno::EFAULT)
    }

    pub(super) fn map(&self, a: &mut MapMemoryToGpuArgs, user: &[u32]) -> Result<(), Errno> {
        let ids = Self::read_device_ids(a, user)?;
        let mut st = self.lock();
        // CAST: the handle's high 32 bits are the gpu_id.
        let owner = st.gpu_by_id((a.handle >> 32) as u32).ok_or(Errno::EINVAL)?;
        if st.gpus.get(owner).and_then(|g| g.vm_file).is_none() {
            return Err(Errno::ENODEV);
        }
        let (va, size, kind) = {
            let bo = st.bos.get(&a.handle).ok_or(Errno::ENOMEM)?;
            (bo.va, bo.size, bo.kind)
        };
        for i in a.n_success..a.n_devices {
            let id = ids.get(i as usize).copied().unwrap_or(0);
            let g = st.gpu_by_id(id).ok_or(Errno::EINVAL)?;
            let (bound, peer_ok) = {
                let gpu = st.gpus.get(g).ok_or(Errno::EINVAL)?;
                (gpu.vm_file.is_some(), gpu.cfg.large_bar)
            };
            if !bound {
                return Err(Errno::ENODEV);
            }
            let already = st
                .bos
                .get(&a.handle)
                .is_some_and(|b| b.mapped.contains_key(&g));
            if !already {
                // amdgpu_vm_verify_parameters + overlap check.
                let end = va.checked_add(size).ok_or(Errno::EINVAL)?;
                if va % PAGE != 0 || size % PAGE != 0 || size == 0 || end > GPUVM_LIMIT {
                    return Err(Errno::EINVAL);
                }
                let overlaps = st.gpus.get(g).is_some_and(|gpu| {
                    gpu.page_table
                        .range(..end)
                        .next_back()
                        .is_some_and(|(_, e)| e.end > va)
                });
                if overlaps {
                    return Err(Errno::EINVAL);
                }
                let needs_bar = matches!(kind, BoKind::Vram | BoKind::Doorbell | BoKind::MmioRemap);
                if g != owner && needs_bar && !peer_ok {
                    return Err(Errno::EINVAL);
                }
                if let Some(gpu) = st.gpus.get_mut(g) {
                    gpu.page_table.insert(
                        va,
                        PtEntry {
                            end,
                            handle: a.handle,
                        },
                    );
                }
                if let Some(bo) = st.bos.get_mut(&a.handle) {
                    bo.mapped.insert(g, 0);
                }
                self.vm_changed();
            }
            a.n_success = i + 1;
        }
        Ok(())
    }

    pub(super) fn unmap(&self, a: &mut UnmapMemoryFromGpuArgs, user: &[u32]) -> Result<(), Errno> {
        let ids = Self::read_device_ids(a, user)?;
        let mut st = self.lock();
        // CAST: the handle's high 32 bits are the gpu_id.
        st.gpu_by_id((a.handle >> 32) as u32).ok_or(Errno::EINVAL)?;
        let (va, size) = {
            let bo = st.bos.get(&a.handle).ok_or(Errno::ENOMEM)?;
            (bo.va, bo.size)
        };
        for i in a.n_success..a.n_devices {
            let id = ids.get(i as usize).copied().unwrap_or(0);
            let g = st.gpu_by_id(id).ok_or(Errno::EINVAL)?;
            let refs = st
                .bos
                .get(&a.handle)
                .and_then(|b| b.mapped.get(&g).copied())
                .ok_or(Errno::EINVAL)?;
            if refs > 0 {
                return Err(Errno::EBUSY);
            }
            if let Some(bo) = st.bos.get_mut(&a.handle) {
                bo.mapped.remove(&g);
            }
            if let Some(gpu) = st.gpus.get_mut(g) {
                gpu.page_table.remove(&va);
            }
            self.vm_changed();
            if st.retired.len() >= crate::state::RETIRED_KEPT {
                st.retired.pop_front();
            }
            st.retired.push_back(crate::state::Retired {
                gpu: g,
                va,
                end: va.saturating_add(size),
                handle: a.handle,
                freed: false,
            });
            a.n_success = i + 1;
        }
        Ok(())
    }
}
