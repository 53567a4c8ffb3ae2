//! [`Program`]: a kernel of a code object loaded into VRAM, and its launches (kernargs from an
//! arena the GPU is never still reading, optional timestamps and profiling).

use crate::buffer::{Bo, BoOptions};
use crate::device::{Device, DeviceInner, GpuBuffer, Submit};
use crate::encode::Cmds;
use crate::error::{Error, MemoryKind, Result};
use crate::kfd::lock;
use crate::signal::Signal;
use bytemuck::Pod;
use core::time::Duration;
use hcq_core::arch::GpuVa;
use hcq_core::bitfield::Field;
use hcq_core::codeobj::{CodeObject, DeviceLimits, Kernel, LDS_GRANULE_BYTES, MAX_LDS_GRANULES};
use hcq_core::hsa::{DispatchPacket, KernelCodeProperties, PgmRsrc2};
use hcq_core::kfd as abi;
use hcq_core::metadata::hidden::{self as hidden_args, LaunchShape};
use hcq_core::metadata::{HiddenKind, KernelMeta, ValueKind};
use hcq_core::pm4;
use hcq_core::rsrc::ScratchRsrc;
use hcq_core::timeline::{ArenaError, TimelineArena, TimelineValue};
use log::debug;
use std::sync::Arc;

/// Alignment of each kernel's arguments in the arena (16: dispatch packets need 16, tinygrad
/// graphs use 16).
const KERNARG_ALIGN: u64 = 16;
/// The GPU timestamp counter runs at 100 MHz (gfx10+): 10 ns per tick.
pub const GPU_TICK_NS: u64 = 10;
/// Profiling records kept before the oldest are harvested (each holds two signal slots).
const MAX_PENDING_RECORDS: usize = 128;

/// The kernel-argument arena: core's [`TimelineArena`] over a VRAM buffer, so a region is
/// handed out again only after the launch that used it completed. Allocated inside the
/// submission (under the timeline lock), tagged with the submission's own timeline value.
#[derive(Debug)]
pub(crate) struct Kernargs {
    bo: Bo,
    arena: TimelineArena<1024>,
}

impl Kernargs {
    pub(crate) fn new(bo: Bo) -> Result<Self> {
        let arena = TimelineArena::new(bo.size())
            .map_err(|e| Error::InvalidArgument(format!("kernarg arena: {e}")))?;
        Ok(Self { bo, arena })
    }

    /// Reserves `size` bytes for the submission `s`; returns their byte offset.
    fn alloc(&mut self, size: u64, s: &Submit<'_>) -> Result<u64> {
        loop {
            match self.arena.alloc(size, KERNARG_ALIGN, s.value, s.done()) {
                Ok(r) => return Ok(r.offset),
                Err(ArenaError::MustWait { value }) => s.wait_done(value)?,
                Err(e) => return Err(Error::InvalidArgument(format!("kernel arguments: {e}"))),
            }
        }
    }
}

/// One profiled launch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaunchRecord {
    /// Kernel name.
    pub name: String,
    /// Host time (CLOCK_MONOTONIC_RAW ns) the kernel started, converted from the GPU clock.
    pub start_ns: u64,
    /// Host time it ended.
    pub end_ns: u64,
}

impl LaunchRecord {
    /// GPU execution time.
    #[must_use]
    pub fn duration(&self) -> Duration {
        Duration::from_nanos(self.end_ns.saturating_sub(self.start_ns))
    }
}

#[derive(Debug, Default)]
pub(crate) struct Profile {
    enabled: bool,
    pending: Vec<(String, Signal, Signal)>,
    done: Vec<LaunchRecord>,
    /// (gpu ticks, cpu ns) sampled together by GET_CLOCK_COUNTERS.
    clock: Option<(u64, u64)>,
}

impl DeviceInner {
    /// GET_CLOCK_COUNTERS: the GPU clock and CLOCK_MONOTONIC_RAW at the same instant.
    pub(crate) fn clock_counters(&self) -> Result<(u64, u64)> {
        let mut args = abi::GetClockCountersArgs {
            gpu_id: self.info.gpu_id,
            ..Default::default()
        };
        self.kfd
            .core
            .ioctl(abi::AMDKFD_IOC_GET_CLOCK_COUNTERS, &mut args)
            .map_err(|e| Error::sys("GET_CLOCK_COUNTERS", e))?;
        Ok((args.gpu_clock_counter, args.cpu_clock_counter))
    }

    /// Converts GPU timestamp ticks to host ns using the sampled clock pair.
    fn gpu_to_host(clock: (u64, u64), ticks: u64) -> u64 {
        let (gpu, cpu) = clock;
        let delta = i128::from(ticks) - i128::from(gpu);
        let ns = i128::from(cpu) + delta * i128::from(GPU_TICK_NS);
        u64::try_from(ns.max(0)).unwrap_or(u64::MAX)
    }

    /// Waits for the pending profiled launches and converts their timestamps.
    fn harvest(&self, profile: &mut Profile) -> Result<()> {
        if profile.pending.is_empty() {
            return Ok(());
        }
        let last = self.last_value();
        self.wait_value(last)?;
        let clock = match profile.clock {
            Some(c) => c,
            None => {
                let c = self.clock_counters()?;
                profile.clock = Some(c);
                c
            }
        };
        for (name, st, en) in profile.pending.drain(..) {
            profile.done.push(LaunchRecord {
                name,
                start_ns: Self::gpu_to_host(clock, st.start_ts()),
                end_ns: Self::gpu_to_host(clock, en.start_ts()),
            });
        }
        Ok(())
    }
}

impl Device {
    /// Turns per-launch profiling on or off.
    pub fn set_profiling(&self, on: bool) {
        lock(&self.inner.profile).enabled = on;
    }

    /// Waits for the profiled launches so far and returns their records (oldest first).
    ///
    /// # Errors
    /// A failed wait or GET_CLOCK_COUNTERS.
    pub fn take_profile(&self) -> Result<Vec<LaunchRecord>> {
        let mut p = lock(&self.inner.profile);
        self.inner.harvest(&mut p)?;
        Ok(core::mem::take(&mut p.done))
    }

    /// The GPU clock and CLOCK_MONOTONIC_RAW (ns), sampled together.
    ///
    /// # Errors
    /// GET_CLOCK_COUNTERS failing.
    pub fn clock_counters(&self) -> Result<(u64, u64)> {
        self.inner.clock_counters()
    }
}

/// User SGPR inputs `pm4::exec` cannot fill: a kernel asking for one is refused at load.
const UNSUPPORTED_USER_SGPRS: [(Field, &str); 3] = [
    (
        KernelCodeProperties::ENABLE_SGPR_QUEUE_PTR,
        "the queue pointer (ENABLE_SGPR_QUEUE_PTR)",
    ),
    (
        KernelCodeProperties::ENABLE_SGPR_DISPATCH_ID,
        "the dispatch id (ENABLE_SGPR_DISPATCH_ID)",
    ),
    (
        KernelCodeProperties::ENABLE_SGPR_PRIVATE_SEGMENT_SIZE,
        "the private segment size (ENABLE_SGPR_PRIVATE_SEGMENT_SIZE)",
    ),
];

/// The scratch inputs `kernel` takes in user SGPRs on `dev`, over the device's scratch
/// allocation (the memory `COMPUTE_DISPATCH_SCRATCH_BASE` and `COMPUTE_TMPRING_SIZE`
/// describe): the private segment buffer V# (gfx9 before gfx940, gfx10) and flat scratch
/// init (its base address: absolute flat scratch, LLVM `AMDGPUUsage` "Flat Scratch").
fn scratch_user_sgprs(
    dev: &DeviceInner,
    kernel: &Kernel<'_>,
) -> Result<(Option<ScratchRsrc>, Option<GpuVa>)> {
    let props = kernel.properties();
    let name = kernel.name;
    if let Some((_, what)) = UNSUPPORTED_USER_SGPRS
        .iter()
        .find(|(f, _)| props.get(*f) != 0)
    {
        return Err(Error::code_object(format!(
            "kernel {name} takes {what} in user SGPRs, which hcq's dispatch does not provide"
        )));
    }
    let base = GpuVa(dev.scratch_bo.va());
    let on = |f| props.get(f) != 0;
    let psb = if on(KernelCodeProperties::ENABLE_SGPR_PRIVATE_SEGMENT_BUFFER) {
        let wave32 = kernel.wavefront_size() == 32;
        let v = ScratchRsrc::new(dev.arch, base, dev.scratch.scratch_len, wave32).map_err(|e| {
            Error::code_object(format!("kernel {name}: private segment buffer: {e}"))
        })?;
        Some(v)
    } else {
        None
    };
    let fsi = on(KernelCodeProperties::ENABLE_SGPR_FLAT_SCRATCH_INIT).then_some(base);
    Ok((psb, fsi))
}

/// One kernel of a code object, loaded into VRAM of one device.
#[derive(Debug)]
pub struct Program {
    device: Device,
    name: String,
    image: Arc<Bo>,
    prog: pm4::Program,
    kernarg_size: u64,
    alloc_size: u64,
    meta: Option<ProgramMeta>,
    lds_bytes: u32,
    group_segment_size: u32,
}

/// How an explicit kernel argument is passed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgClass {
    /// `global_buffer`: a [`GpuBuffer`] (or a [`BufferView`] of one).
    Buffer,
    /// `by_value`: a plain value.
    Value,
    /// Any other kind (`image`, `sampler`, `pipe`, `queue`, `dynamic_shared_pointer`, ...):
    /// hcq cannot pass it, and a launch through the builder refuses.
    Unsupported,
}

/// One explicit kernel argument, from the code object's metadata.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArgInfo {
    /// Source name, when the metadata has one.
    pub name: Option<String>,
    /// Source type (`float*`, `uint`), when the metadata has one.
    pub type_name: Option<String>,
    /// Byte offset in the kernarg segment.
    pub offset: u32,
    /// Size in bytes.
    pub size: u32,
    /// `.value_kind` as written in the metadata.
    pub value_kind: String,
    /// How it is passed.
    pub class: ArgClass,
}

impl ArgInfo {
    /// `argument 2 (n: uint)`: how refusals name it.
    #[must_use]
    pub fn describe(&self, index: usize) -> String {
        match (&self.name, &self.type_name) {
            (Some(n), Some(t)) => format!("argument {index} ({n}: {t})"),
            (Some(n), None) => format!("argument {index} ({n})"),
            (None, Some(t)) => format!("argument {index} ({t})"),
            (None, None) => format!("argument {index}"),
        }
    }
}

/// What a launch needs from the metadata, copied at load.
#[derive(Clone, Debug)]
struct ProgramMeta {
    args: Vec<ArgInfo>,
    /// (kind, offset, size) of every hidden argument hcq fills with a value that depends on
    /// the launch (or a constant other than 0).
    hidden: Vec<(HiddenKind, u32, u32)>,
    /// (offset, size) of the hidden arguments that are always 0 (remainders, offsets, absent
    /// features): written only when the buffer did not start zeroed.
    zero_hidden: Vec<(u32, u32)>,
    /// The first `hidden_*` kind hcq does not know: every launch refuses, naming it.
    unknown_hidden: Option<String>,
    /// End of the last explicit argument.
    explicit_end: u32,
    /// Offset of the first hidden argument (the kernarg size when there is none).
    hidden_start: u32,
    max_flat_workgroup_size: u32,
    reqd_workgroup_size: Option<[u32; 3]>,
}

impl ProgramMeta {
    fn new(m: &KernelMeta<'_>) -> Self {
        let mut args = Vec::new();
        let mut hidden = Vec::new();
        let mut zero_hidden = Vec::new();
        let mut unknown_hidden = None;
        let mut explicit_end = 0;
        let mut hidden_start = m.kernarg_segment_size;
        for a in m.args() {
            if a.is_hidden() {
                hidden_start = hidden_start.min(a.offset);
                match hidden_args::kind_of(&a) {
                    Ok(k) if hidden_args::is_always_zero(k) => zero_hidden.push((a.offset, a.size)),
                    Ok(k) => hidden.push((k, a.offset, a.size)),
                    Err(_) => {
                        if unknown_hidden.is_none() {
                            unknown_hidden = Some(a.value_kind_str.to_owned());
                        }
                    }
                }
                continue;
            }
            explicit_end = explicit_end.max(a.offset.saturating_add(a.size));
            args.push(ArgInfo {
                name: a.name.map(str::to_owned),
                type_name: a.type_name.map(str::to_owned),
                offset: a.offset,
                size: a.size,
                value_kind: a.value_kind_str.to_owned(),
                class: match a.value_kind {
                    ValueKind::GlobalBuffer => ArgClass::Buffer,
                    ValueKind::ByValue => ArgClass::Value,
                    _ => ArgClass::Unsupported,
                },
            });
        }
        Self {
            args,
            hidden,
            zero_hidden,
            unknown_hidden,
            explicit_end,
            hidden_start: hidden_start.max(explicit_end),
            max_flat_workgroup_size: m.max_flat_workgroup_size,
            reqd_workgroup_size: m.reqd_workgroup_size,
        }
    }
}

impl Drop for Program {
    fn drop(&mut self) {
        // The image must outlive every launch of it: wait for the device's work so far.
        let dev = &self.device.inner;
        if let Err(e) = dev.wait_value(dev.last_value()) {
            log::error!(
                "program {} dropped while its GPU is not idle ({e}); leaking its code",
                self.name
            );
            core::mem::forget(Arc::clone(&self.image));
        }
    }
}

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
        // CAST: the 64-byte packet size fits u64.
        let alloc_size = dispatch.map_or(kernarg_size, |d| {
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
            dispatch,
            private_segment_buffer,
            flat_scratch_init,
        };
        let meta = k.metadata.as_ref().map(ProgramMeta::new);
        debug!(
            "loaded {kernel_name} at {:#x} ({size} B image, {kernarg_size} B kernargs)",
            prog.prog_addr.get()
        );
        // Make the CPU's writes of the image visible to the GPU before any launch.
        dev.submit_compute(|s| s.cmds.memory_barrier())?;
        Ok(Self {
            device: device.clone(),
            name: kernel_name.to_owned(),
            image: Arc::new(bo),
            prog,
            kernarg_size,
            alloc_size,
            meta,
            lds_bytes: limits.lds_bytes,
            group_segment_size: k.group_segment_size(),
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
    pub fn entry_addr(&self) -> u64 {
        self.prog.prog_addr.get()
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

    fn check_dims(global: [u32; 3], local: [u32; 3]) -> Result<()> {
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
    fn launch_inner(
        &self,
        args: &[u8],
        global: [u32; 3],
        local: [u32; 3],
        timed: bool,
    ) -> Result<(TimelineValue, Option<Duration>)> {
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
            return self.launch_raw(args, global, local, 0, timed);
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
            return self.launch_raw(args, global, local, 0, timed);
        }
        let mut buf = KernargBuf::new(self.kernarg_size);
        let bytes = buf.bytes_mut();
        if let Some(d) = bytes.get_mut(..args.len()) {
            d.copy_from_slice(args);
        }
        // The buffer is zero past `args`: the always-zero hidden arguments need no store
        // unless the caller's bytes cover them.
        let zeroed = len <= u64::from(meta.hidden_start);
        self.fill_hidden(bytes, global, local, 0, zeroed)?;
        self.launch_raw(bytes, global, local, 0, timed)
    }

    /// Refuses a block above `.max_flat_workgroup_size` (or the hardware's 1024) or other than
    /// `.reqd_workgroup_size`.
    fn check_block(&self, meta: &ProgramMeta, block: [u32; 3]) -> Result<()> {
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

    /// Writes every hidden argument into `kernarg` (the whole segment); the always-zero ones
    /// only when `kernarg` is not `zeroed` there already.
    fn fill_hidden(
        &self,
        kernarg: &mut [u8],
        groups: [u32; 3],
        block: [u32; 3],
        dynamic_lds: u32,
        zeroed: bool,
    ) -> Result<()> {
        let Some(meta) = &self.meta else {
            return Ok(());
        };
        if let Some(kind) = &meta.unknown_hidden {
            return Err(Error::InvalidArgument(format!(
                "kernel {}: the kernel takes a hidden argument of kind {kind}, which hcq does not know how to fill",
                self.name
            )));
        }
        let shape = LaunchShape {
            groups,
            block,
            dynamic_lds,
        };
        for &(kind, offset, size) in &meta.hidden {
            hidden_args::write(kernarg, kind, offset, size, &shape)
                .map_err(|e| Error::InvalidArgument(format!("kernel {}: {e}", self.name)))?;
        }
        if !zeroed {
            for &(offset, size) in &meta.zero_hidden {
                let start = usize::try_from(offset).unwrap_or(usize::MAX);
                let end = start.saturating_add(usize::try_from(size).unwrap_or(usize::MAX));
                if let Some(d) = kernarg.get_mut(start..end) {
                    d.fill(0);
                }
            }
        }
        Ok(())
    }

    /// Launches with `args` exactly the kernarg segment.
    fn launch_raw(
        &self,
        args: &[u8],
        global: [u32; 3],
        local: [u32; 3],
        dynamic_lds: u32,
        timed: bool,
    ) -> Result<(TimelineValue, Option<Duration>)> {
        let dev = &self.device.inner;
        let profiling = lock(&dev.profile).enabled;
        let stamps = if timed || profiling {
            Some((self.device.new_signal(0)?, self.device.new_signal(0)?))
        } else {
            None
        };
        let mut prog = self.prog;
        if dynamic_lds > 0 {
            // RSRC2.LDS_SIZE and the dispatch packet cover static plus dynamic LDS.
            let lds = self.group_segment_size.saturating_add(dynamic_lds);
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
        let alloc_size = self.alloc_size.max(1);
        let refs = stamps
            .as_ref()
            .map(|(a, b)| (a.signal_ref(), b.signal_ref()));
        let value = dev.submit_compute(|s| {
            let mut kernargs = lock(&dev.kernargs);
            let off = kernargs.alloc(alloc_size, s)?;
            let base = kernargs.bo.va() + off;
            let map = kernargs.bo.mapping();
            map.write_bytes(off, args)?;
            if let Some(d) = &prog.dispatch {
                let pkt =
                    pm4::dispatch_packet(d, GpuVa(base), global, local).map_err(|source| {
                        Error::Encode {
                            what: "the dispatch packet",
                            source,
                        }
                    })?;
                map.write_bytes(off + d.packet_offset, bytemuck::bytes_of(&pkt))?;
            }
            let c: &mut Cmds = &mut s.cmds;
            // The kernargs (and any code or data the CPU wrote) are in VRAM, written through
            // the CPU mapping: flush HDP so the kernel reads them, as the seed's
            // `wait(...).memory_barrier()` before every launch (exec then invalidates caches).
            c.memory_barrier()?;
            if let Some((st, _)) = &refs {
                c.timestamp(st)?;
            }
            c.exec(&prog, GpuVa(base), global, local)?;
            if let Some((_, en)) = &refs {
                c.timestamp(en)?;
            }
            Ok(())
        })?;
        let mut elapsed = None;
        if let Some((st, en)) = stamps {
            if timed {
                dev.wait_value(value)?;
                let ticks = en.start_ts().saturating_sub(st.start_ts());
                elapsed = Some(Duration::from_nanos(ticks.saturating_mul(GPU_TICK_NS)));
            }
            if profiling {
                let mut p = lock(&dev.profile);
                p.pending.push((self.name.clone(), st, en));
                if p.pending.len() >= MAX_PENDING_RECORDS {
                    dev.harvest(&mut p)?;
                }
            }
        }
        Ok((value, elapsed))
    }
}

/// Largest kernarg segment [`Program::load`] accepts (LLVM's own limit is far below; a bigger
/// one is a lying code object).
const MAX_KERNARG_BYTES: u64 = 1 << 20;

/// Kernarg bytes inline up to this size (no allocation per launch); larger segments use the
/// heap.
const INLINE_KERNARGS: usize = 512;

/// A kernarg segment being laid out: zeroed, inline when small.
#[derive(Debug)]
struct KernargBuf {
    inline: [u8; INLINE_KERNARGS],
    heap: Vec<u8>,
    len: usize,
}

impl KernargBuf {
    fn new(size: u64) -> Self {
        let len = usize::try_from(size).unwrap_or(usize::MAX);
        let heap = if len > INLINE_KERNARGS {
            vec![0; len]
        } else {
            Vec::new()
        };
        Self {
            inline: [0; INLINE_KERNARGS],
            heap,
            len,
        }
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        if self.len > INLINE_KERNARGS {
            &mut self.heap
        } else {
            self.inline.get_mut(..self.len).unwrap_or_default()
        }
    }
}

/// A typed view of part of a [`GpuBuffer`], passed to a `global_buffer` argument as the
/// address of its first element.
#[derive(Clone, Copy, Debug)]
pub struct BufferView<'a, T> {
    buf: &'a GpuBuffer,
    offset: u64,
    len: u64,
    _elem: core::marker::PhantomData<T>,
}

impl<'a, T: Pod> BufferView<'a, T> {
    /// The whole buffer as elements of `T` (a trailing partial element is left out).
    #[must_use]
    pub fn new(buf: &'a GpuBuffer) -> Self {
        // CAST: size_of::<T>() fits u64.
        let elem = (size_of::<T>() as u64).max(1);
        Self {
            buf,
            offset: 0,
            len: buf.len() / elem,
            _elem: core::marker::PhantomData,
        }
    }

    /// Elements `start..start + len` of this view.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when the range is outside the view.
    pub fn slice(&self, start: u64, len: u64) -> Result<Self> {
        let end = start.checked_add(len).filter(|&e| e <= self.len);
        if end.is_none() {
            return Err(Error::InvalidArgument(format!(
                "view elements {start}..{start}+{len} are outside its {} elements",
                self.len
            )));
        }
        // CAST: size_of::<T>() fits u64.
        let elem = size_of::<T>() as u64;
        Ok(Self {
            offset: self.offset + start * elem,
            len,
            ..*self
        })
    }

    /// GPU address of the first element.
    #[must_use]
    pub fn va(&self) -> GpuVa {
        self.buf.va().offset(self.offset)
    }

    /// Elements in the view.
    #[must_use]
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the view has no elements.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// What [`LaunchBuilder::arg`] accepts: a buffer for a `global_buffer` argument, a plain
/// value for a `by_value` one.
pub trait LaunchArg {
    /// Buffer or value.
    fn class(&self) -> ArgClass;
    /// The bytes placed in the kernarg segment (a buffer's GPU address).
    fn bytes(&self) -> ArgBytes;
    /// Alignment the argument's offset must have.
    fn align(&self) -> u32;
    /// The buffer, for checking it is mapped on the launching device.
    fn buffer(&self) -> Option<&GpuBuffer> {
        None
    }
}

/// An argument's bytes, inline (at most 64; larger structs go through [`ByValue`]'s slice).
#[derive(Clone, Copy, Debug)]
pub struct ArgBytes {
    data: [u8; 64],
    len: usize,
}

impl ArgBytes {
    fn of(b: &[u8]) -> Self {
        let mut data = [0; 64];
        let len = b.len().min(64);
        if let (Some(d), Some(s)) = (data.get_mut(..len), b.get(..len)) {
            d.copy_from_slice(s);
        }
        Self { data, len: b.len() }
    }

    fn as_slice(&self) -> Option<&[u8]> {
        self.data.get(..self.len)
    }
}

impl LaunchArg for GpuBuffer {
    fn class(&self) -> ArgClass {
        ArgClass::Buffer
    }
    fn bytes(&self) -> ArgBytes {
        ArgBytes::of(&self.va().get().to_le_bytes())
    }
    fn align(&self) -> u32 {
        8
    }
    fn buffer(&self) -> Option<&GpuBuffer> {
        Some(self)
    }
}

impl<T: Pod> LaunchArg for BufferView<'_, T> {
    fn class(&self) -> ArgClass {
        ArgClass::Buffer
    }
    fn bytes(&self) -> ArgBytes {
        ArgBytes::of(&self.va().get().to_le_bytes())
    }
    fn align(&self) -> u32 {
        8
    }
    fn buffer(&self) -> Option<&GpuBuffer> {
        Some(self.buf)
    }
}

macro_rules! value_args {
    ($($t:ty),*) => {$(
        impl LaunchArg for $t {
            fn class(&self) -> ArgClass {
                ArgClass::Value
            }
            fn bytes(&self) -> ArgBytes {
                ArgBytes::of(&self.to_le_bytes())
            }
            fn align(&self) -> u32 {
                // CAST: primitive alignments are at most 16.
                align_of::<$t>() as u32
            }
        }
    )*};
}

value_args!(u8, u16, u32, u64, i8, i16, i32, i64, f32, f64);

/// A `by_value` argument of any `Pod` type (a struct, a vector such as `[f32; 4]`), at most 64
/// bytes: `builder.arg(&ByValue(my_struct))`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ByValue<T>(pub T);

impl<T: Pod> LaunchArg for ByValue<T> {
    fn class(&self) -> ArgClass {
        ArgClass::Value
    }
    fn bytes(&self) -> ArgBytes {
        ArgBytes::of(bytemuck::bytes_of(&self.0))
    }
    fn align(&self) -> u32 {
        // CAST: alignments fit u32.
        align_of::<T>() as u32
    }
}

/// Whether an argument of `class`, `size` bytes and `align` alignment may go where `info`
/// says; the refusal names the argument.
fn check_arg(
    info: &ArgInfo,
    index: usize,
    class: ArgClass,
    size: u32,
    align: u32,
) -> core::result::Result<(), String> {
    let what = || info.describe(index);
    match (info.class, class) {
        (ArgClass::Unsupported, _) | (_, ArgClass::Unsupported) => {
            return Err(format!(
                "{} is a {} argument, which hcq cannot pass",
                what(),
                info.value_kind
            ));
        }
        (ArgClass::Buffer, ArgClass::Value) => {
            return Err(format!(
                "{} is a global_buffer: pass a GpuBuffer or BufferView, not a value",
                what()
            ));
        }
        (ArgClass::Value, ArgClass::Buffer) => {
            return Err(format!(
                "{} is a by_value argument: pass a value, not a buffer",
                what()
            ));
        }
        _ => {}
    }
    if size != info.size {
        return Err(format!("{} is {} bytes, got {size}", what(), info.size));
    }
    let align = align.max(1);
    if info.offset % align != 0 {
        return Err(format!(
            "{} is at kernarg offset {}, not a multiple of the value's {align}-byte alignment",
            what(),
            info.offset
        ));
    }
    Ok(())
}

/// A checked launch of a [`Program`] (see [`Program::launch_builder`]):
///
/// ```no_run
/// # fn demo(dev: &hcq_driver::Device, co: &[u8]) -> hcq_driver::Result<()> {
/// use hcq_driver::{BufferKind, Program};
/// let prog = Program::load(dev, co, "global_id")?;
/// let out = dev.alloc(256 * 4, BufferKind::Vram)?;
/// // SAFETY: global_id writes n u32s at `out`, which holds 256 and outlives the launch.
/// let done = unsafe {
///     prog.launch_builder()
///         .arg(&out)
///         .arg(&256u32)
///         .groups([4, 1, 1])
///         .block([64, 1, 1])
///         .dynamic_lds(0)
///         .launch()?
/// };
/// dev.wait_value(done)?;
/// # Ok(()) }
/// ```
///
/// Refusals (returned by [`LaunchBuilder::launch`], the first one found, each naming the
/// argument or limit): a kernel without metadata; too many or too few arguments; an argument
/// whose size or alignment differs from the metadata's; a buffer where a value is expected or
/// the other way round, or an argument kind hcq cannot pass; a buffer not mapped on the
/// device; a zero dimension; a block above `.max_flat_workgroup_size`, the hardware's 1024, or
/// different from `.reqd_workgroup_size`; dynamic LDS above the device's LDS minus the
/// kernel's static LDS; a grid axis of 2^32 work-items or more; a hidden argument kind hcq does
/// not know.
#[derive(Debug)]
pub struct LaunchBuilder<'p> {
    prog: &'p Program,
    buf: KernargBuf,
    next: usize,
    groups: [u32; 3],
    block: [u32; 3],
    dynamic_lds: u32,
    err: Option<Error>,
}

impl<'p> LaunchBuilder<'p> {
    fn new(prog: &'p Program) -> Self {
        Self {
            prog,
            buf: KernargBuf::new(prog.kernarg_size),
            next: 0,
            groups: [1, 1, 1],
            block: [1, 1, 1],
            dynamic_lds: 0,
            err: None,
        }
    }

    fn refuse(&mut self, msg: String) {
        if self.err.is_none() {
            self.err = Some(Error::InvalidArgument(format!(
                "kernel {}: {msg}",
                self.prog.name
            )));
        }
    }

    /// Adds the next explicit argument: a [`GpuBuffer`] or [`BufferView`] for a
    /// `global_buffer`, a number or [`ByValue`] for a `by_value`.
    pub fn arg<A: LaunchArg + ?Sized>(&mut self, a: &A) -> &mut Self {
        let index = self.next;
        self.next += 1;
        if self.err.is_some() {
            return self;
        }
        let Some(meta) = &self.prog.meta else {
            self.refuse(
                "the code object has no NT_AMDGPU_METADATA entry for it; use launch_pod".into(),
            );
            return self;
        };
        let Some(info) = meta.args.get(index) else {
            let n = meta.args.len();
            self.refuse(format!(
                "too many arguments: it takes {n}, argument {index} is one more"
            ));
            return self;
        };
        let bytes = a.bytes();
        // CAST: argument sizes are at most 64 here, far below u32::MAX.
        if let Err(e) = check_arg(info, index, a.class(), bytes.len as u32, a.align()) {
            self.refuse(e);
            return self;
        }
        let (offset, size) = (info.offset, info.size);
        if a.buffer()
            .is_some_and(|b| !b.is_mapped_on(&self.prog.device))
        {
            let what = info.describe(index);
            self.refuse(format!(
                "{what}: the buffer is not mapped on this program's device"
            ));
            return self;
        }
        let start = usize::try_from(offset).unwrap_or(usize::MAX);
        let dst = start
            .checked_add(bytes.len)
            .and_then(|end| self.buf.bytes_mut().get_mut(start..end));
        match (dst, bytes.as_slice()) {
            (Some(d), Some(s)) => d.copy_from_slice(s),
            _ => {
                let what = info.describe(index);
                self.refuse(format!(
                    "{what} ({size} bytes at offset {offset}) does not fit the kernarg segment"
                ));
            }
        }
        self
    }

    /// Work-groups per axis.
    pub fn groups(&mut self, groups: [u32; 3]) -> &mut Self {
        self.groups = groups;
        self
    }

    /// Work-items per work-group per axis.
    pub fn block(&mut self, block: [u32; 3]) -> &mut Self {
        self.block = block;
        self
    }

    /// Dynamic LDS bytes per work-group (on top of the kernel's static LDS).
    pub fn dynamic_lds(&mut self, bytes: u32) -> &mut Self {
        self.dynamic_lds = bytes;
        self
    }

    /// Every check that does not depend on an argument's value; then the hidden arguments.
    fn finish(&mut self) -> Result<()> {
        if let Some(e) = self.err.take() {
            return Err(e);
        }
        let p = self.prog;
        let Some(meta) = &p.meta else {
            return Err(Error::InvalidArgument(format!(
                "kernel {}: the code object has no NT_AMDGPU_METADATA entry for it; use launch_pod",
                p.name
            )));
        };
        if self.next != meta.args.len() {
            return Err(Error::InvalidArgument(format!(
                "kernel {}: takes {} arguments, got {}",
                p.name,
                meta.args.len(),
                self.next
            )));
        }
        let (groups, block) = (self.groups, self.block);
        if groups.contains(&0) || block.contains(&0) {
            return Err(Error::InvalidArgument(format!(
                "kernel {}: groups {groups:?} block {block:?} contain 0",
                p.name
            )));
        }
        p.check_block(meta, block)?;
        let lds_max = p.max_dynamic_lds();
        if self.dynamic_lds > lds_max {
            return Err(Error::InvalidArgument(format!(
                "kernel {}: dynamic LDS {} bytes is above the {lds_max} bytes left (device LDS {} minus the kernel's static {})",
                p.name,
                self.dynamic_lds,
                p.lds_bytes.min(MAX_LDS_GRANULES * LDS_GRANULE_BYTES),
                p.group_segment_size
            )));
        }
        for (i, axis) in ["x", "y", "z"].iter().enumerate() {
            let items = u64::from(groups[i]) * u64::from(block[i]);
            if items > u64::from(u32::MAX) {
                return Err(Error::InvalidArgument(format!(
                    "kernel {}: grid {axis} is {} groups x {} work-items = {items} work-items, at least 2^32",
                    p.name, groups[i], block[i]
                )));
            }
        }
        // Only explicit arguments were written: the hidden part is still zero.
        p.fill_hidden(self.buf.bytes_mut(), groups, block, self.dynamic_lds, true)
    }

    /// Launches; returns the timeline value that completes it. The builder can launch again
    /// (same arguments) after a successful launch.
    ///
    /// # Safety
    /// As [`Program::launch`]: every buffer argument must stay allocated until the launch
    /// completes, be large enough for every access the kernel makes for this grid, and not be
    /// accessed by the CPU in a conflicting way meanwhile.
    ///
    /// # Errors
    /// The refusals listed on [`LaunchBuilder`]; ring or wait failures.
    pub unsafe fn launch(&mut self) -> Result<TimelineValue> {
        self.finish()?;
        let (g, b, l) = (self.groups, self.block, self.dynamic_lds);
        self.prog
            .launch_raw(self.buf.bytes_mut(), g, b, l, false)
            .map(|(v, _)| v)
    }

    /// [`LaunchBuilder::launch`], then waits and returns the GPU time between timestamps taken
    /// right before and after the dispatch.
    ///
    /// # Safety
    /// As [`LaunchBuilder::launch`].
    ///
    /// # Errors
    /// As [`LaunchBuilder::launch`], plus the wait's.
    pub unsafe fn launch_wait(&mut self) -> Result<Duration> {
        self.finish()?;
        let (g, b, l) = (self.groups, self.block, self.dynamic_lds);
        let (_, t) = self.prog.launch_raw(self.buf.bytes_mut(), g, b, l, true)?;
        Ok(t.unwrap_or_default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(class: ArgClass, offset: u32, size: u32, kind: &str) -> ArgInfo {
        ArgInfo {
            name: Some("x".into()),
            type_name: Some("T".into()),
            offset,
            size,
            value_kind: kind.into(),
            class,
        }
    }

    #[test]
    fn arg_checks_name_the_argument() {
        let v = info(ArgClass::Value, 12, 8, "by_value");
        assert_eq!(check_arg(&v, 1, ArgClass::Value, 8, 8), Err(
            "argument 1 (x: T) is at kernarg offset 12, not a multiple of the value's 8-byte alignment".into()
        ));
        assert_eq!(check_arg(&v, 1, ArgClass::Value, 8, 4), Ok(()));
        assert_eq!(
            check_arg(&v, 1, ArgClass::Value, 4, 4),
            Err("argument 1 (x: T) is 8 bytes, got 4".into())
        );
        assert_eq!(
            check_arg(&v, 1, ArgClass::Buffer, 8, 8),
            Err("argument 1 (x: T) is a by_value argument: pass a value, not a buffer".into())
        );
        let b = info(ArgClass::Buffer, 0, 8, "global_buffer");
        assert_eq!(
            check_arg(&b, 0, ArgClass::Value, 8, 8),
            Err(
                "argument 0 (x: T) is a global_buffer: pass a GpuBuffer or BufferView, not a value"
                    .into()
            )
        );
        let i = info(ArgClass::Unsupported, 0, 8, "image");
        assert_eq!(
            check_arg(&i, 0, ArgClass::Buffer, 8, 8),
            Err("argument 0 (x: T) is a image argument, which hcq cannot pass".into())
        );
    }

    #[test]
    fn kernarg_buf_is_zeroed_inline_or_on_the_heap() {
        let mut small = KernargBuf::new(272);
        assert_eq!(small.bytes_mut().len(), 272);
        assert!(small.bytes_mut().iter().all(|&b| b == 0));
        let mut big = KernargBuf::new(4096);
        assert_eq!(big.bytes_mut().len(), 4096);
        assert!(big.bytes_mut().iter().all(|&b| b == 0));
    }
}
