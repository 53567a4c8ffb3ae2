//! Files the simulated kernel serves: file descriptors, sysfs topology and DRM totals, mmap of
//! `/dev/kfd` (doorbells, MMIO, events) and render nodes (buffer objects).

use super::*;

impl SimKfd {
    pub(super) fn new_fd(&self, kind: FdKind) -> Fd {
        let mut st = self.lock();
        let fd = st.next_fd;
        st.next_fd = st.next_fd.saturating_add(1);
        st.fds.insert(fd, kind);
        Fd(fd)
    }

    pub(super) fn new_render_fd(&self, gpu: usize) -> Fd {
        let mut st = self.lock();
        let fd = st.next_fd;
        st.next_fd = st.next_fd.saturating_add(1);
        st.fds.insert(fd, FdKind::Render { gpu, file: fd });
        Fd(fd)
    }

    /// `dup(2)`: a new descriptor of the open file `fd` is (`EBADF` for none). Both name the
    /// same file: a VM acquired through one is the other's, and closing one leaves the other
    /// open.
    ///
    /// # Errors
    /// `EBADF` when `fd` is not an open sim file.
    pub fn dup(&self, fd: Fd) -> Result<Fd, Errno> {
        let mut st = self.lock();
        let kind = *st.fds.get(&fd.0).ok_or(Errno::EBADF)?;
        let new = st.next_fd;
        st.next_fd = st.next_fd.saturating_add(1);
        st.fds.insert(new, kind);
        Ok(Fd(new))
    }

    /// `fstat(2)` of an open sim file: the character device it is.
    ///
    /// # Errors
    /// `EBADF` when `fd` is not an open sim file.
    pub fn fstat(&self, fd: Fd) -> Result<FileStat, Errno> {
        let st = self.lock();
        match *st.fds.get(&fd.0).ok_or(Errno::EBADF)? {
            FdKind::Kfd => Ok(FileStat {
                path: "/dev/kfd".into(),
                major: KFD_CHAR_MAJOR,
                minor: 0,
            }),
            FdKind::Render { gpu, .. } => {
                let minor = st.gpus.get(gpu).map_or(0, |g| g.props.drm_render_minor);
                Ok(FileStat {
                    path: format!("/dev/dri/renderD{minor}"),
                    major: DRM_CHAR_MAJOR,
                    minor,
                })
            }
        }
    }

    pub(super) fn topology_file(&self, path: &str) -> Result<String, Errno> {
        let rest = path
            .strip_prefix("/sys/devices/virtual/kfd/kfd/topology/")
            .or_else(|| path.strip_prefix("/sys/class/kfd/kfd/topology/"))
            .ok_or(Errno::ENOENT)?;
        match rest {
            "generation_id" => return Ok("1\n".into()),
            "system_properties" => {
                return Ok("platform_oem 0\nplatform_id 0\nplatform_rev 0\n".into());
            }
            _ => {}
        }
        let rest = rest.strip_prefix("nodes/").ok_or(Errno::ENOENT)?;
        let (node, file) = rest.split_once('/').ok_or(Errno::ENOENT)?;
        let node: usize = node.parse().map_err(|_| Errno::ENOENT)?;
        let st = self.lock();
        let gpu = match node {
            0 => None,
            n => Some(st.gpus.get(n - 1).ok_or(Errno::ENOENT)?),
        };
        match file {
            "gpu_id" => Ok(format!("{}\n", gpu.map_or(0, |g| g.gpu_id))),
            "name" => Ok(if gpu.is_some() {
                "ip discovery\n"
            } else {
                "\n"
            }
            .into()),
            "properties" => {
                let props = match gpu {
                    Some(g) => g.props,
                    None => cpu_node_properties(),
                };
                let mut s = String::new();
                props.write_to(&mut s).map_err(|_| Errno::EIO)?;
                Ok(s)
            }
            file => {
                // mem_banks/<i>/properties and caches/<i>/properties of a GPU node.
                let cfg = node.checked_sub(1).and_then(|i| self.cfg.gpus.get(i));
                let (dir, rest) = file.split_once('/').ok_or(Errno::ENOENT)?;
                let i: usize = match rest.strip_suffix("/properties") {
                    Some(i) => i.parse().map_err(|_| Errno::ENOENT)?,
                    None => return Err(Errno::ENOENT),
                };
                let mut s = String::new();
                match (dir, cfg) {
                    ("mem_banks", Some(c)) if i == 0 => c.mem_bank().write_to(&mut s),
                    ("caches", Some(c)) => c.caches().get(i).ok_or(Errno::ENOENT)?.write_to(&mut s),
                    _ => return Err(Errno::ENOENT),
                }
                .map_err(|_| Errno::EIO)?;
                Ok(s)
            }
        }
    }

    /// amdgpu's memory totals under `/sys/class/drm/renderD<minor>/device/`
    /// (`mem_info_vram_total`, `mem_info_vis_vram_total`, `mem_info_gtt_total`) and its
    /// IP-discovery tree (`ip_discovery/`, see `ip_discovery.rs`).
    pub(super) fn drm_file(&self, path: &str) -> Result<String, Errno> {
        let rest = path
            .strip_prefix("/sys/class/drm/renderD")
            .ok_or(Errno::ENOENT)?;
        let (minor, file) = rest.split_once("/device/").ok_or(Errno::ENOENT)?;
        let minor: u32 = minor.parse().map_err(|_| Errno::ENOENT)?;
        let st = self.lock();
        let i = st
            .gpus
            .iter()
            .position(|g| g.props.drm_render_minor == minor)
            .ok_or(Errno::ENOENT)?;
        let cfg = self.cfg.gpus.get(i).ok_or(Errno::ENOENT)?;
        if let Some(rest) = file.strip_prefix("ip_discovery/") {
            return Self::ip_discovery_file(cfg.gfx_target_version, rest);
        }
        let v = match file {
            "mem_info_vram_total" => cfg.vram_size,
            "mem_info_vis_vram_total" => cfg.vram_visible(),
            "mem_info_gtt_total" => self.cfg.gtt_size,
            _ => return Err(Errno::ENOENT),
        };
        Ok(format!("{v}\n"))
    }

    pub(super) fn track_cpu_map(&self, addr: u64, len: u64) {
        self.lock().cpu_maps.insert(addr, len);
    }

    pub(super) fn mmap_file(
        &self,
        fixed: Option<u64>,
        len: u64,
        prot: Prot,
        fd: Fd,
        offset: u64,
    ) -> Result<u64, Errno> {
        // What the host guard watches: the doorbells, and buffers mapped read-write.
        let mut watch = Watch::None;
        let (mem, map_len) = {
            let mut st = self.lock();
            let kind = *st.fds.get(&fd.0).ok_or(Errno::EBADF)?;
            match kind {
                FdKind::Kfd => {
                    let off = KfdMmapOffset::decode(offset);
                    match off.ty {
                        KfdMmapType::Doorbell => {
                            let g = st.gpu_by_id(off.gpu_id).ok_or(Errno::ENODEV)?;
                            if len != KFD_DOORBELL_SLICE_SIZE {
                                return Err(Errno::EINVAL);
                            }
                            let gpu = st.gpus.get(g).ok_or(Errno::ENODEV)?;
                            watch = Watch::Doorbell;
                            (Arc::clone(&gpu.doorbells), len)
                        }
                        KfdMmapType::Mmio => {
                            let g = st.gpu_by_id(off.gpu_id).ok_or(Errno::ENODEV)?;
                            if len != PAGE {
                                return Err(Errno::EINVAL);
                            }
                            let gpu = st.gpus.get(g).ok_or(Errno::ENODEV)?;
                            (Arc::clone(&gpu.mmio), len)
                        }
                        KfdMmapType::Events => {
                            // get_order(len) > get_order(32 KiB)
                            let pages = len.div_ceil(PAGE).max(1).next_power_of_two();
                            if pages * PAGE > KFD_EVENT_PAGE_SIZE || len == 0 {
                                return Err(Errno::EINVAL);
                            }
                            let page = st.event_page.as_mut().ok_or(Errno::EINVAL)?;
                            page.mapped_size = len;
                            (Arc::clone(&page.mem), len)
                        }
                        KfdMmapType::ReservedMem => return Err(Errno::EINVAL),
                    }
                }
                FdKind::Render { gpu, file } => {
                    let bo = st
                        .bos
                        .values()
                        .find(|b| b.gpu == gpu && b.drm_offset == offset)
                        .ok_or(Errno::EINVAL)?;
                    if st.gpus.get(gpu).and_then(|g| g.vm_file) != Some(file) {
                        // The BO's GEM object is only visible to the DRM file of the VM.
                        return Err(Errno::EACCES);
                    }
                    if len == 0 || len > bo.size {
                        return Err(Errno::EINVAL);
                    }
                    match &bo.backing {
                        Backing::Shared(m) => {
                            if bo.kind == BoKind::Vram {
                                // The CPU reaches VRAM through the HDP from now on.
                                m.hdp_track();
                            }
                            // The CPU reads it without snooping the GPU's L2 from now on: GTT,
                            // and VRAM allocated for the CPU (PUBLIC; other VRAM is reached
                            // through copies, whatever is mapped).
                            let gfx = st.gpus.get(gpu).map_or(0, |g| g.cfg.gfx_target_version);
                            let cpu_reads = bo.kind == BoKind::Gtt
                                || (bo.kind == BoKind::Vram
                                    && bo.flags & KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC != 0);
                            if cpu_reads && crate::mem::l2_caches(gfx, bo.flags) {
                                m.l2_track();
                            }
                            if prot.0 & Prot::READ.0 != 0 && prot.0 & Prot::WRITE.0 != 0 {
                                watch = Watch::Data(bo.va, bo.kind == BoKind::Vram);
                            }
                            (Arc::clone(m), len)
                        }
                        Backing::User(_) | Backing::UserInvalidated => return Err(Errno::EPERM),
                    }
                }
            }
        };
        let addr = self.maps.map_shared(&mem, fixed, map_len, prot)?;
        self.track_cpu_map(addr, map_len);
        match watch {
            Watch::Data(va, vram) => {
                if let Some(ri) = self.guard.add_data(addr, map_len, va, vram.then_some(&mem))
                    && vram
                {
                    mem.guard_region(ri, addr);
                }
            }
            Watch::Doorbell => self.guard.add_doorbell(addr, map_len),
            Watch::None => {}
        }
        Ok(addr)
    }
}

/// Major number of `/dev/kfd` as the sim reports it (the kernel's is dynamic; 238 is what
/// Debian's kernels usually get).
const KFD_CHAR_MAJOR: u32 = 238;
/// Major number of DRM devices (`DRM_MAJOR`).
const DRM_CHAR_MAJOR: u32 = 226;

/// What `fstat(2)` of a sim file says: a character device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileStat {
    /// The device node it was opened as.
    pub path: String,
    /// Device major number (`st_rdev`).
    pub major: u32,
    /// Device minor number (`st_rdev`).
    pub minor: u32,
}

/// What the host guard watches of a new process mapping.
enum Watch {
    None,
    Doorbell,
    /// A buffer at this GPU virtual address; whether it is VRAM (behind the HDP).
    Data(u64, bool),
}

pub(super) fn cpu_node_properties() -> NodeProperties {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    NodeProperties {
        // CAST: core counts fit u32.
        cpu_cores_count: cores as u32,
        simd_count: 0,
        max_waves_per_simd: 0,
        lds_size_in_kb: 0,
        array_count: 0,
        simd_arrays_per_engine: 0,
        cu_per_simd_array: 0,
        simd_per_cu: 0,
        max_slots_scratch_cu: 0,
        gfx_target_version: 0,
        drm_render_minor: 0,
        vendor_id: 0,
        device_id: 0,
        location_id: 0,
        domain: 0,
        wave_front_size: 0,
        num_sdma_engines: 0,
        num_sdma_xgmi_engines: 0,
        num_sdma_queues_per_engine: 0,
        num_cp_queues: 0,
        max_engine_clk_fcompute: 0,
        local_mem_size: 0,
        num_xcc: 0,
        unique_id: 0,
        capability: 0,
        mem_banks_count: 0,
        caches_count: 0,
        io_links_count: 0,
        hive_id: 0,
        fw_version: 0,
        sdma_fw_version: 0,
    }
}
