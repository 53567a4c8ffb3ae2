//! [`Program`]: loading a kernel, its launch state, and the checked and raw launch paths.

#[allow(clippy::wildcard_imports)]
use super::*;

impl Program {
    /// Loads `code_object` on `device` and picks `kernel_name`. `code_object` is an AMDGPU ELF
    /// or a clang offload bundle (`__CLANG_OFFLOAD_BUNDLE__`, what `hipcc --genco` and
    /// `clang -x hip --offload-device-only` write), whose entry for the device's target is used.
    ///
    /// # Errors
    /// [`Error::CodeObject`] for a malformed object, a target that does not run on the device
    /// (or a bundle without one, naming the targets it has), an unknown kernel or one needing
    /// more LDS or scratch than the device offers; allocation failures.
    pub fn load(device: &Device, code_object: &[u8], kernel_name: &str) -> Result<Self> {
        let co_err = |e| Error::code_object_parse(kernel_name, e);
        let target = device.target_name();
        let code_object = hcq_core::bundle::code_object_for(code_object, &target)
            .map_err(|e| Error::code_object(e.to_string()))?;
        let co = CodeObject::parse(code_object).map_err(co_err)?;
        co.check_target(&target).map_err(co_err)?;
        let k = co.kernel(kernel_name).map_err(co_err)?;
        let dev = &device.inner;
        let limits = DeviceLimits {
            lds_bytes: dev.info.properties.lds_size_in_kb.saturating_mul(1024),
            max_private_segment_bytes: dev.scratch.max_private_segment_size,
        };
        k.check_resources(&limits).map_err(co_err)?;
        if k.entry_offset % 256 != 0 {
            return Err(Error::code_object(format!(
                "kernel {kernel_name}: entry at image offset {:#x} is not 256-byte aligned",
                k.entry_offset
            )));
        }
        let size = co.image_size();
        let len = usize::try_from(size)
            .map_err(|_| Error::code_object(format!("image of {size} bytes")))?;
        let mut image = vec![0u8; len];
        co.load_into(&mut image).map_err(co_err)?;
        let bo = dev.kfd.core.alloc(
            dev.info.gpu_id,
            size.max(1),
            MemoryKind::Vram,
            BoOptions {
                public: true,
                ..BoOptions::default()
            },
        )?;
        bo.mapping().write_bytes(0, &image)?;
        let kernarg_size = u64::from(k.kernarg_size());
        if kernarg_size > MAX_KERNARG_BYTES {
            return Err(Error::code_object(format!(
                "kernel {kernel_name}: kernarg segment of {kernarg_size} bytes is larger than hcq's {MAX_KERNARG_BYTES}-byte limit"
            )));
        }
        let dispatch = k.uses_dispatch_ptr().then(|| pm4::DispatchInfo {
            packet_offset: kernarg_size.div_ceil(KERNARG_ALIGN) * KERNARG_ALIGN,
            group_segment_size: k.group_segment_size(),
            private_segment_size: k.private_segment_size(),
        });
        // Whole words: launches copy the segment into the arena 8 bytes at a time.
        let words_bytes = template::words_for(kernarg_size) as u64 * 8;
        // CAST: the 64-byte packet size fits u64.
        let alloc_size = dispatch.map_or(words_bytes, |d| {
            d.packet_offset + size_of::<DispatchPacket>() as u64
        });
        let (private_segment_buffer, flat_scratch_init) = scratch_user_sgprs(dev, &k)?;
        let rsrc2 = k
            .descriptor
            .rsrc2()
            .with(PgmRsrc2::GRANULATED_LDS_SIZE, k.lds_granules())
            .raw();
        let prog = pm4::Program {
            prog_addr: GpuVa(bo.va() + k.entry_offset),
            scratch_addr: GpuVa(dev.scratch_bo.va()),
            tmpring_size: dev.scratch.tmpring_size,
            rsrc1: k.descriptor.rsrc1().raw(),
            rsrc2,
            rsrc3: k.descriptor.compute_pgm_rsrc3,
            dispatch,
            private_segment_buffer,
            flat_scratch_init,
        };
        let image = Arc::new(bo);
        // For AQL dispatches of launches that name the kernel by its entry (graphs).
        dev.kernels.insert(
            prog.prog_addr.get(),
            crate::device::KernelObject {
                kernel_object: image.va() + k.descriptor_offset,
                group_segment_size: k.group_segment_size(),
                private_segment_size: k.private_segment_size(),
            },
            &image,
        );
        let meta = k.metadata.as_ref().map(ProgramMeta::new);
        let plan = template::HiddenPlan::new(kernarg_size, meta.as_ref());
        let exec_tpl = template::ExecTemplate::new(dev.arch, &prog)?;
        debug!(
            "loaded {kernel_name} at {:#x} ({size} B image, {kernarg_size} B kernargs)",
            prog.prog_addr.get()
        );
        // Make the CPU's writes of the image visible to the GPU before any launch.
        dev.submit_compute(|s| s.cmds.memory_barrier())?;
        Ok(Self {
            device: device.clone(),
            name: kernel_name.to_owned(),
            kd_addr: image.va() + k.descriptor_offset,
            image,
            prog,
            kernarg_size,
            alloc_size,
            meta,
            lds_bytes: limits.lds_bytes,
            group_segment_size: k.group_segment_size(),
            plan,
            exec_tpl,
        })
    }

    /// The explicit arguments from the code object's metadata, in order (empty without
    /// metadata).
    #[must_use]
    pub fn args(&self) -> &[ArgInfo] {
        self.meta.as_ref().map_or(&[], |m| &m.args)
    }

    /// Whether the code object had an `NT_AMDGPU_METADATA` entry for the kernel (the builder
    /// needs it).
    #[must_use]
    pub fn has_metadata(&self) -> bool {
        self.meta.is_some()
    }

    /// `.max_flat_workgroup_size` (1024 without metadata).
    #[must_use]
    pub fn max_flat_workgroup_size(&self) -> u32 {
        self.meta
            .as_ref()
            .map_or(1024, |m| m.max_flat_workgroup_size)
    }

    /// `.reqd_workgroup_size`, when the kernel has one.
    #[must_use]
    pub fn reqd_workgroup_size(&self) -> Option<[u32; 3]> {
        self.meta.as_ref().and_then(|m| m.reqd_workgroup_size)
    }

    /// Dynamic LDS bytes a launch may ask for: the device's LDS minus the kernel's static LDS
    /// (and at most what RSRC2.LDS_SIZE can describe).
    #[must_use]
    pub fn max_dynamic_lds(&self) -> u32 {
        self.lds_bytes
            .min(MAX_LDS_GRANULES * LDS_GRANULE_BYTES)
            .saturating_sub(self.group_segment_size)
    }

    /// Where a launch's `__local` arguments go, as ROCm's runtime (CLR's `processMemObjects`)
    /// lays them out: after the kernel's static LDS, in argument order, each at its
    /// `.pointee_align`. `locals` is (argument index, bytes) for each [`Lds`] argument, in
    /// order; `dynamic_lds` more bytes follow them (HIP's `extern __shared__`). The builder
    /// uses it; a launch laid out elsewhere (a graph's) passes the addresses as the arguments'
    /// values and runs [`Self::pm4_program_with_lds`].
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when the total is above the device's LDS left after the
    /// static LDS, naming the parts.
    pub fn lds_placement(&self, locals: &[(usize, u32)], dynamic_lds: u32) -> Result<LdsPlacement> {
        let start = u64::from(self.group_segment_size);
        let mut addr = start;
        let mut bytes_total = 0u64;
        let mut addrs = Vec::with_capacity(locals.len());
        for &(index, bytes) in locals {
            let align = self
                .meta
                .as_ref()
                .and_then(|m| m.args.get(index))
                .map_or(1, |info| u64::from(info.pointee_align.max(1)));
            addr = addr.div_ceil(align) * align;
            // CAST: below lds_max (checked at the end) or refused there.
            addrs.push((index, u32::try_from(addr).unwrap_or(u32::MAX)));
            addr += u64::from(bytes);
            bytes_total += u64::from(bytes);
        }
        let dynamic = addr - start + u64::from(dynamic_lds);
        let lds_max = self.max_dynamic_lds();
        if dynamic > u64::from(lds_max) {
            let device = self.lds_bytes.min(MAX_LDS_GRANULES * LDS_GRANULE_BYTES);
            let parts = if locals.is_empty() {
                String::new()
            } else {
                format!(
                    ": __local arguments {bytes_total} + alignment padding {} + dynamic {dynamic_lds}",
                    addr - start - bytes_total,
                )
            };
            return Err(Error::InvalidArgument(format!(
                "kernel {}: dynamic LDS {dynamic} bytes is above the {lds_max} bytes left (device LDS {device} minus the kernel's static {}){parts}",
                self.name, self.group_segment_size,
            )));
        }
        Ok(LdsPlacement {
            addrs,
            // CAST: at most lds_max, a u32.
            dynamic: dynamic as u32,
        })
    }

    /// [`Self::pm4_program`] for a launch with `dynamic` LDS bytes beyond the static LDS:
    /// RSRC2.LDS_SIZE (and the dispatch packet, when the kernel takes one) cover both.
    #[must_use]
    pub fn pm4_program_with_lds(&self, dynamic: u32) -> pm4::Program {
        let mut prog = self.prog;
        if dynamic > 0 {
            let lds = self.group_segment_size.saturating_add(dynamic);
            prog.rsrc2 = hcq_core::hsa::PgmRsrc2::from_raw(prog.rsrc2)
                .with(
                    PgmRsrc2::GRANULATED_LDS_SIZE,
                    lds.div_ceil(LDS_GRANULE_BYTES),
                )
                .raw();
            if let Some(d) = &mut prog.dispatch {
                d.group_segment_size = lds;
            }
        }
        prog
    }

    /// A checked launch: add the explicit arguments in order with [`LaunchBuilder::arg`], set
    /// the grid, then [`LaunchBuilder::launch`]. Everything is checked against the kernel's
    /// metadata, and the hidden arguments are filled.
    #[must_use]
    pub fn launch_builder(&self) -> LaunchBuilder<'_> {
        LaunchBuilder::new(self)
    }

    /// Kernel name.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Bytes of arguments the kernel expects.
    #[must_use]
    pub fn kernarg_size(&self) -> u64 {
        self.kernarg_size
    }

    /// Entry-point GPU address.
    #[must_use]
    pub fn entry_addr(&self) -> GpuVa {
        self.prog.prog_addr
    }

    /// The program as core's PM4 `exec` encoder takes it.
    #[must_use]
    pub fn pm4_program(&self) -> pm4::Program {
        self.prog
    }

    /// Launches the kernel with `args` (exactly [`Program::kernarg_size`] bytes), `global`
    /// work-groups and `local` work-items per group; returns the timeline value that completes
    /// it.
    ///
    /// # Safety
    /// The GPU runs arbitrary code with these arguments, which Rust cannot check: every address
    /// in `args` must point into GPU memory mapped to this device that stays allocated until
    /// the launch completes (a [`crate::GpuBuffer`] waits for that on drop), large enough for
    /// every access the kernel makes for this grid, and not concurrently accessed by the CPU
    /// in a conflicting way; never the driver's own memory (the
    /// [submission contract](crate::Device#submission-contract)).
    ///
    /// # Errors
    /// Wrong argument size, zero or oversized dimensions, ring or wait failures.
    pub unsafe fn launch(
        &self,
        args: &[u8],
        global: [u32; 3],
        local: [u32; 3],
    ) -> Result<TimelineValue> {
        self.launch_inner(args, global, local, false)
            .map(|(v, _)| v)
    }

    /// [`Program::launch`] with the arguments as a `Pod` struct (its bytes, `#[repr(C)]`).
    ///
    /// # Safety
    /// As [`Program::launch`].
    ///
    /// # Errors
    /// As [`Program::launch`].
    pub unsafe fn launch_pod<T: Pod>(
        &self,
        args: &T,
        global: [u32; 3],
        local: [u32; 3],
    ) -> Result<TimelineValue> {
        self.launch_inner(bytemuck::bytes_of(args), global, local, false)
            .map(|(v, _)| v)
    }

    /// [`Program::launch`], then waits for it and returns the GPU time between timestamps
    /// taken right before and after the dispatch.
    ///
    /// # Safety
    /// As [`Program::launch`].
    ///
    /// # Errors
    /// As [`Program::launch`], plus the wait's.
    pub unsafe fn launch_wait(
        &self,
        args: &[u8],
        global: [u32; 3],
        local: [u32; 3],
    ) -> Result<Duration> {
        let (_, t) = self.launch_inner(args, global, local, true)?;
        Ok(t.unwrap_or_default())
    }

    pub(super) fn check_dims(global: [u32; 3], local: [u32; 3]) -> Result<()> {
        if global.contains(&0) || local.contains(&0) {
            return Err(Error::InvalidArgument(format!(
                "launch dimensions global {global:?} local {local:?} contain 0"
            )));
        }
        let threads: u64 = local.iter().map(|&l| u64::from(l)).product();
        if threads > 1024 {
            return Err(Error::InvalidArgument(format!(
                "local size {local:?} is {threads} work-items per group (at most 1024)"
            )));
        }
        for i in 0..3 {
            let (g, l) = (
                global.get(i).copied().unwrap_or(1),
                local.get(i).copied().unwrap_or(1),
            );
            if u64::from(g) * u64::from(l) > u64::from(u32::MAX) {
                return Err(Error::InvalidArgument(format!(
                    "grid axis {i}: {g} groups x {l} items exceeds 2^32"
                )));
            }
        }
        Ok(())
    }

    /// Lays out `args` (the explicit arguments' bytes, or the whole kernarg segment) with the
    /// hidden arguments filled, and launches.
    pub(super) fn launch_inner(
        &self,
        args: &[u8],
        global: [u32; 3],
        local: [u32; 3],
        timed: bool,
    ) -> Result<(TimelineValue, Option<Duration>)> {
        let global = if seeded!(GroupsAsWorkItems) {
            [0, 1, 2].map(|k| global[k].saturating_mul(local[k]))
        } else {
            global
        };
        Self::check_dims(global, local)?;
        // CAST: usize -> u64 is lossless on 64-bit hosts.
        let len = args.len() as u64;
        let Some(meta) = &self.meta else {
            if len != self.kernarg_size {
                return Err(Error::InvalidArgument(format!(
                    "kernel {} takes {} bytes of arguments, got {}",
                    self.name, self.kernarg_size, len
                )));
            }
            return self.launch_raw(KernargSrc::Bytes(args), global, local, 0, timed);
        };
        self.check_block(meta, local)?;
        let hidden_count = meta.hidden.len() + meta.zero_hidden.len();
        if len < u64::from(meta.explicit_end) || len > self.kernarg_size {
            return Err(Error::InvalidArgument(format!(
                "kernel {} takes {} bytes of explicit arguments (up to {} with padding, {} with its {} hidden arguments, which hcq fills), got {}",
                self.name,
                meta.explicit_end,
                meta.hidden_start,
                self.kernarg_size,
                hidden_count,
                len
            )));
        }
        if hidden_count == 0 && meta.unknown_hidden.is_none() && len == self.kernarg_size {
            return self.launch_raw(KernargSrc::Bytes(args), global, local, 0, timed);
        }
        let mut buf = KernargBuf::<INLINE_KERNARG_WORDS>::from_template(
            &self.plan.template,
            self.kernarg_size,
        );
        if let Some(d) = buf.bytes_mut().get_mut(..args.len()) {
            d.copy_from_slice(args);
        }
        // The template holds the launch-independent hidden arguments: write them again only
        // where the caller's bytes cover them.
        let rewrite = len > u64::from(meta.first_hidden);
        self.fill_hidden(&mut buf, global, local, 0, rewrite)?;
        let words = bytemuck::cast_slice(buf.words());
        self.launch_raw(KernargSrc::Bytes(words), global, local, 0, timed)
    }

    /// Refuses a block above `.max_flat_workgroup_size` (or the hardware's 1024) or other than
    /// `.reqd_workgroup_size`.
    pub(super) fn check_block(&self, meta: &ProgramMeta, block: [u32; 3]) -> Result<()> {
        let threads: u64 = block.iter().map(|&b| u64::from(b)).product();
        let max = meta.max_flat_workgroup_size.min(1024);
        if threads > u64::from(max) {
            return Err(Error::InvalidArgument(format!(
                "kernel {}: block {block:?} is {threads} work-items, above {} ({})",
                self.name,
                max,
                if max == meta.max_flat_workgroup_size {
                    "the kernel's max_flat_workgroup_size"
                } else {
                    "the hardware's limit per work-group"
                }
            )));
        }
        if let Some(reqd) = meta.reqd_workgroup_size.filter(|r| *r != block) {
            return Err(Error::InvalidArgument(format!(
                "kernel {}: block {block:?} differs from the kernel's reqd_workgroup_size {reqd:?}",
                self.name
            )));
        }
        Ok(())
    }

    /// Writes the hidden arguments that depend on the launch into `buf` (the whole segment,
    /// laid out from the program's template); when `rewrite`, the launch-independent ones too
    /// (the caller's bytes covered them).
    pub(super) fn fill_hidden(
        &self,
        buf: &mut KernargBuf,
        groups: [u32; 3],
        block: [u32; 3],
        dynamic_lds: u32,
        rewrite: bool,
    ) -> Result<()> {
        let Some(meta) = &self.meta else {
            return Ok(());
        };
        if let Some(why) = &self.plan.refusal {
            return Err(Error::InvalidArgument(format!(
                "kernel {}: {why}",
                self.name
            )));
        }
        let shape = LaunchShape {
            groups,
            block,
            dynamic_lds,
        };
        if rewrite {
            let kernarg = buf.bytes_mut();
            for &(kind, offset, size) in &meta.hidden {
                hidden_args::write(kernarg, kind, offset, size, &shape)
                    .map_err(|e| Error::InvalidArgument(format!("kernel {}: {e}", self.name)))?;
            }
            for &(offset, size) in &meta.zero_hidden {
                let start = usize::try_from(offset).unwrap_or(usize::MAX);
                let end = start.saturating_add(usize::try_from(size).unwrap_or(usize::MAX));
                if let Some(d) = kernarg.get_mut(start..end) {
                    d.fill(0);
                }
            }
            return Ok(());
        }
        self.plan
            .fill_shape(buf, &shape)
            .map_err(|e| Error::InvalidArgument(format!("kernel {}: {e}", self.name)))
    }

    /// Launches with `args` exactly the kernarg segment.
    pub(super) fn launch_raw(
        &self,
        args: KernargSrc<'_>,
        global: [u32; 3],
        local: [u32; 3],
        dynamic_lds: u32,
        timed: bool,
    ) -> Result<(TimelineValue, Option<Duration>)> {
        let dev = &self.device.inner;
        let profiling = dev.profiling.load(Ordering::Relaxed);
        let stamps = if timed || profiling {
            Some((self.device.new_signal(0)?, self.device.new_signal(0)?))
        } else {
            None
        };
        // RSRC2.LDS_SIZE and the dispatch packet cover static plus dynamic LDS.
        let prog = self.pm4_program_with_lds(dynamic_lds);
        let alloc_size = self.alloc_size.max(1);
        let refs = stamps
            .as_ref()
            .map(|(a, b)| (a.signal_ref(), b.signal_ref()));
        // The kernargs: allocated from the arena for this submission, written, and the
        // dispatch packet after them when the kernel takes a dispatch pointer.
        let place = |s: &mut Submit<'_>| -> Result<u64> {
            let mut kernargs = s.kernargs()?;
            let off = kernargs.alloc(alloc_size, s)?;
            let base = kernargs.bo.va() + off;
            kernargs.write(off, &args)?;
            if let Some(d) = &prog.dispatch {
                let pkt =
                    pm4::dispatch_packet(d, GpuVa(base), global, local).map_err(|source| {
                        Error::Encode {
                            what: "the dispatch packet",
                            source,
                        }
                    })?;
                let map = kernargs.bo.mapping();
                map.write_bytes(off + d.packet_offset, bytemuck::bytes_of(&pkt))?;
            }
            Ok(base)
        };
        // The kernargs (and any code or data the CPU wrote) are in VRAM, written through the
        // CPU mapping: flush HDP so the kernel reads them, as the seed's
        // `wait(...).memory_barrier()` before every launch (exec then invalidates caches).
        // Without timestamps or dynamic LDS that and the exec are the program's pre-encoded
        // commands, patched in the ring.
        let value = if let ComputeQueue::Aql(_) = dev.compute {
            let stamps = refs.as_ref().map(|(a, b)| (a, b));
            let kd = self.kd_addr;
            let private = self.prog.dispatch.map_or(0, |d| d.private_segment_size);
            let group = self.group_segment_size.saturating_add(dynamic_lds);
            dev.submit_aql_launch(stamps, place, |base| {
                aql_dispatch(kd, base, global, local, private, group)
            })?
        } else if refs.is_none() && dynamic_lds == 0 {
            let tpl = &self.exec_tpl;
            dev.submit_compute_in_place(&tpl.dwords, place, |d, base| {
                tpl.patch(d, &prog, GpuVa(base), global, local)
            })?
        } else {
            dev.submit_compute(|s| {
                let base = place(s)?;
                let c: &mut Cmds = &mut s.cmds;
                if !seeded!(LaunchWithoutBarrier) {
                    c.memory_barrier()?;
                }
                if let Some((st, _)) = &refs {
                    c.timestamp(st)?;
                }
                c.exec(&prog, GpuVa(base), global, local)?;
                if let Some((_, en)) = &refs {
                    c.timestamp(en)?;
                }
                Ok(())
            })?
        };
        let mut elapsed = None;
        if let Some((st, en)) = stamps {
            if timed {
                dev.wait_value(value)?;
                let ticks = en.start_ts().saturating_sub(st.start_ts());
                elapsed = Some(Duration::from_nanos(ticks.saturating_mul(GPU_TICK_NS)));
            }
            if profiling {
                dev.record_launch(&self.name, st, en)?;
            }
        }
        Ok((value, elapsed))
    }
}

/// The AQL kernel dispatch packet of a launch of `global` work-groups of `local` work-items
/// (grid sizes in work-items, as HSA counts them) of the kernel whose descriptor is at `kd`,
/// with its arguments at `kernargs`; and its dimensions (the highest one above 1).
fn aql_dispatch(
    kd: u64,
    kernargs: u64,
    global: [u32; 3],
    local: [u32; 3],
    private: u32,
    group: u32,
) -> Result<(u16, DispatchPacket)> {
    pm4::check_dispatch_dims(global, local).map_err(|source| Error::Encode {
        what: "the AQL dispatch packet",
        source,
    })?;
    let grid = [0, 1, 2].map(|i| global[i].saturating_mul(local[i]));
    let dims = if grid[2] > 1 || local[2] > 1 {
        3
    } else if grid[1] > 1 || local[1] > 1 {
        2
    } else {
        1
    };
    // CAST: checked above: local sizes fit u16.
    let wg = local.map(|l| l as u16);
    Ok((
        dims,
        DispatchPacket {
            workgroup_size_x: wg[0],
            workgroup_size_y: wg[1],
            workgroup_size_z: wg[2],
            grid_size_x: grid[0],
            grid_size_y: grid[1],
            grid_size_z: grid[2],
            private_segment_size: private,
            group_segment_size: group,
            kernel_object: kd,
            kernarg_address: kernargs,
            ..DispatchPacket::default()
        },
    ))
}
