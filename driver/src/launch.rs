//! [`Program`]: a kernel of a code object loaded into VRAM, and its launches (kernargs from an
//! arena the GPU is never still reading, optional timestamps and profiling).

use crate::buffer::{Bo, BoOptions};
use crate::device::{Device, DeviceInner, Submit};
use crate::encode::Cmds;
use crate::error::{Error, MemoryKind, Result};
use crate::kfd::lock;
use crate::signal::Signal;
use bytemuck::Pod;
use core::time::Duration;
use hcq_core::arch::GpuVa;
use hcq_core::bitfield::Field;
use hcq_core::codeobj::{CodeObject, DeviceLimits, Kernel};
use hcq_core::hsa::{DispatchPacket, KernelCodeProperties, PgmRsrc2};
use hcq_core::kfd as abi;
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
            .ioctl(
                "GET_CLOCK_COUNTERS",
                abi::AMDKFD_IOC_GET_CLOCK_COUNTERS,
                &mut args,
            )
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
    /// Loads `code_object` on `device` and picks `kernel_name`.
    ///
    /// # Errors
    /// [`Error::CodeObject`] for a malformed object, a target that does not run on the device,
    /// an unknown kernel or one needing more LDS or scratch than the device offers; allocation
    /// failures.
    pub fn load(device: &Device, code_object: &[u8], kernel_name: &str) -> Result<Self> {
        let co_err = |e| Error::code_object_parse(kernel_name, e);
        let co = CodeObject::parse(code_object).map_err(co_err)?;
        co.check_target(&device.target_name()).map_err(co_err)?;
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
        })
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

    fn launch_inner(
        &self,
        args: &[u8],
        global: [u32; 3],
        local: [u32; 3],
        timed: bool,
    ) -> Result<(TimelineValue, Option<Duration>)> {
        // CAST: usize -> u64 is lossless on 64-bit hosts.
        if args.len() as u64 != self.kernarg_size {
            return Err(Error::InvalidArgument(format!(
                "kernel {} takes {} bytes of arguments, got {}",
                self.name,
                self.kernarg_size,
                args.len()
            )));
        }
        Self::check_dims(global, local)?;
        let dev = &self.device.inner;
        let profiling = lock(&dev.profile).enabled;
        let stamps = if timed || profiling {
            Some((self.device.new_signal(0)?, self.device.new_signal(0)?))
        } else {
            None
        };
        let prog = self.prog;
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
