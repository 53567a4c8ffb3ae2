//! [`Program`]: a kernel of a code object loaded into VRAM, and its launches (kernargs from an
//! arena the GPU is never still reading, optional timestamps and profiling).

use crate::buffer::{Bo, BoOptions};
use crate::device::{
    ComputeQueue, Device, DeviceInner, GpuBuffer, KERNARG_ALIGN, Kernargs, Submit,
};
use crate::encode::Cmds;
use crate::error::{Error, MemoryKind, Result};
use bytemuck::Pod;
use core::sync::atomic::{AtomicU64, Ordering};
use core::time::Duration;
use hcq_core::addr::GpuVa;
use hcq_core::arch::ArchInfo;
use hcq_core::bitfield::Field;
use hcq_core::codeobj::{CodeObject, DeviceLimits, Kernel, LDS_GRANULE_BYTES, MAX_LDS_GRANULES};
use hcq_core::hsa::{DispatchPacket, KernelCodeProperties, PgmRsrc2};
use hcq_core::metadata::hidden::{self as hidden_args, LaunchShape};
use hcq_core::metadata::{HiddenKind, KernelMeta, ValueKind};
use hcq_core::pm4;
use hcq_core::rsrc::ScratchRsrc;
use hcq_core::timeline::TimelineValue;
use log::debug;
use std::sync::Arc;

mod args;
mod builder;
mod program;
mod template;

#[allow(unused_imports)]
pub use args::*;
#[allow(unused_imports)]
pub use builder::*;
#[allow(unused_imports)]
pub use program::*;

// Profiling records are kept by the device (which hands them out); launches add to them.
pub use crate::device::profile::{GPU_TICK_NS, LaunchRecord};

// How a launch writes its arguments into the device's arena (the arena itself, and how
// launches allocate from it, belong to the device that holds it).
impl Kernargs {
    /// Copies a launch's kernarg segment to byte offset `off` of the arena (from
    /// [`Kernargs::alloc`]): 8 bytes at a time when the source is whole aligned words, else
    /// through [`crate::mem::Mapping::write_bytes`]. Relaxed atomic stores then a release
    /// fence, as `write_bytes`: the memory is the GPU's.
    fn write(&self, off: u64, src: &KernargSrc<'_>) -> Result<()> {
        let map = self.bo.mapping();
        let (explicit, template, shape) = match *src {
            KernargSrc::Bytes(args) => match bytemuck::try_cast_slice::<u8, u64>(args) {
                Ok(words) => (words, &[][..], &[][..]),
                Err(_) => return map.write_bytes(off, args),
            },
            KernargSrc::Split {
                explicit,
                template,
                shape,
            } => (explicit, template, shape.as_slice()),
        };
        let n = explicit.len().max(template.len());
        let first = usize::try_from(off / 8).unwrap_or(usize::MAX);
        let dst = map
            .u64s()
            .get(first..first.saturating_add(n))
            .filter(|_| off % 8 == 0)
            .ok_or_else(|| {
                Error::InvalidArgument(format!(
                    "{} kernarg bytes at arena offset {off:#x} do not fit the arena",
                    n * 8
                ))
            })?;
        let (head, tail) = dst.split_at(explicit.len().min(n));
        store_words(head, explicit);
        store_words(tail, template.get(head.len()..).unwrap_or_default());
        for &(i, w) in shape {
            if let Some(d) = dst.get(i) {
                d.store(w, Ordering::Relaxed);
            }
        }
        core::sync::atomic::fence(Ordering::Release);
        // The next launch's segment (likely as long) comes right after this one.
        map.prefetch_write(off + n as u64 * 8, n * 8);
        Ok(())
    }
}

/// Relaxed stores of `src` into `dst` (as many words as the shorter has), four per step.
fn store_words(dst: &[AtomicU64], src: &[u64]) {
    let n = dst.len().min(src.len());
    let (Some(dst), Some(src)) = (dst.get(..n), src.get(..n)) else {
        return;
    };
    let (mut d, mut s) = (dst.chunks_exact(4), src.chunks_exact(4));
    for (d4, s4) in (&mut d).zip(&mut s) {
        if let (Some(d4), Some(s4)) = (d4.first_chunk::<4>(), s4.first_chunk::<4>()) {
            for (a, &b) in d4.iter().zip(s4) {
                a.store(b, Ordering::Relaxed);
            }
        }
    }
    for (a, &b) in d.remainder().iter().zip(s.remainder()) {
        a.store(b, Ordering::Relaxed);
    }
}

/// A launch's kernarg segment, as [`Kernargs::write`] copies it into the arena.
#[derive(Clone, Copy, Debug)]
enum KernargSrc<'a> {
    /// The whole segment.
    Bytes(&'a [u8]),
    /// The whole segment as words: `explicit`, then the rest of `template` after as many
    /// words, then `shape`'s words over those.
    Split {
        explicit: &'a [u64],
        template: &'a [u64],
        shape: &'a template::ShapeWords,
    },
}

/// User SGPR inputs `pm4::exec` cannot fill: a kernel asking for one is refused at load.
const UNSUPPORTED_USER_SGPRS: [(Field<KernelCodeProperties>, &str); 3] = [
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
    /// The kernarg template and the launch-dependent hidden arguments.
    plan: template::HiddenPlan,
    /// The memory barrier + exec packets, pre-encoded.
    exec_tpl: template::ExecTemplate,
    /// GPU address of the kernel descriptor (an AQL dispatch's `kernel_object`).
    kd_addr: u64,
}

/// Where a launch's `__local` arguments sit in LDS ([`Program::lds_placement`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LdsPlacement {
    /// (argument index, LDS byte address) of each `__local` argument, in order.
    pub addrs: Vec<(usize, u32)>,
    /// LDS bytes beyond the kernel's static LDS (the arguments, their padding, and any
    /// dynamic LDS asked for besides).
    pub dynamic: u32,
}

/// How an explicit kernel argument is passed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgClass {
    /// `global_buffer`: a [`GpuBuffer`] (or a [`BufferView`] of one).
    Buffer,
    /// `by_value`: a plain value.
    Value,
    /// `dynamic_shared_pointer` (an OpenCL `__local T*`): an [`Lds`] size; the launch places
    /// it in LDS and passes its address.
    Lds,
    /// Any other kind (`image`, `sampler`, `pipe`, `queue`, ...): hcq cannot pass it, and a
    /// launch through the builder refuses.
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
    /// `.pointee_align` (1 when absent): the alignment of a `dynamic_shared_pointer`'s LDS.
    pub pointee_align: u32,
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
    /// Offset of the first hidden argument, or the end of the explicit ones if later (the
    /// kernarg size when there is none).
    hidden_start: u32,
    /// Offset of the first hidden argument (the kernarg size when there is none).
    first_hidden: u32,
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
                    ValueKind::DynamicSharedPointer => ArgClass::Lds,
                    _ => ArgClass::Unsupported,
                },
                pointee_align: a.pointee_align.unwrap_or(1).max(1),
            });
        }
        Self {
            args,
            hidden,
            zero_hidden,
            unknown_hidden,
            explicit_end,
            hidden_start: hidden_start.max(explicit_end),
            first_hidden: hidden_start,
            max_flat_workgroup_size: m.max_flat_workgroup_size,
            reqd_workgroup_size: m.reqd_workgroup_size,
        }
    }
}

impl Drop for Program {
    fn drop(&mut self) {
        // The image must outlive every launch of it: wait for the device's work so far.
        let dev = &self.device.inner;
        match dev.wait_value(dev.last_value()) {
            Ok(_) => {}
            // The fault was the caller's error already, and a faulted queue runs nothing more
            // (KFD stops the process's queues on a memory fault or hardware exception): the
            // code can go.
            Err(Error::DeviceFault(_)) => {
                debug!("program {}: freed after a device fault", self.name);
            }
            Err(e) => {
                log::error!(
                    "program {} dropped while its GPU is not idle ({e}); leaking its code",
                    self.name
                );
                core::mem::forget(Arc::clone(&self.image));
            }
        }
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
            pointee_align: 1,
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

    fn template_round_trip<const N: usize>(size: u64) {
        let n = template::words_for(size);
        let t: Vec<u64> = (1..=n as u64).collect();
        let mut b = KernargBuf::<N>::from_template(&t, size);
        assert_eq!(b.words(), &t[..], "{size} bytes, {N} inline");
        let len = b.bytes_mut().len();
        assert_eq!(len as u64, size);
        b.bytes_mut()[len - 1] = 0xff;
        assert_eq!(b.words()[n - 1] >> ((len - 1) % 8 * 8) & 0xff, 0xff);
        let mut z = KernargBuf::<N>::zeroed(size);
        assert_eq!(z.bytes_mut().len() as u64, size);
        assert!(z.words().iter().all(|&w| w == 0));
    }

    #[test]
    fn store_words_copies_as_many_words_as_the_shorter_side_has() {
        for n in 0..11usize {
            for m in [0, n / 2, n, n + 3] {
                let dst: Vec<AtomicU64> = (0..m).map(|_| AtomicU64::new(u64::MAX)).collect();
                let src: Vec<u64> = (0..n as u64).collect();
                store_words(&dst, &src);
                for (i, d) in dst.iter().enumerate() {
                    let want = if i < n { i as u64 } else { u64::MAX };
                    assert_eq!(d.load(Ordering::Relaxed), want, "n {n} m {m} word {i}");
                }
            }
        }
    }

    #[test]
    fn kernarg_buf_copies_the_template_inline_or_on_the_heap() {
        for size in [272u64, 270, 4096, 4092, 8, 3] {
            template_round_trip::<INLINE_KERNARG_WORDS>(size);
            template_round_trip::<INLINE_EXPLICIT_WORDS>(size);
        }
    }
}
