//! [`LaunchBuilder`]: arguments by name or position, the shape, and the checked launch.

#[allow(clippy::wildcard_imports)]
use super::*;

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
    pub(super) prog: &'p Program,
    /// The explicit arguments' bytes (the hidden ones come from the program at launch).
    pub(super) buf: KernargBuf<INLINE_EXPLICIT_WORDS>,
    pub(super) next: usize,
    pub(super) groups: [u32; 3],
    pub(super) block: [u32; 3],
    pub(super) dynamic_lds: u32,
    /// (argument index, bytes) of every `dynamic_shared_pointer` argument, in order.
    pub(super) locals: Vec<(usize, u32)>,
    pub(super) err: Option<Error>,
}

impl<'p> LaunchBuilder<'p> {
    pub(super) fn new(prog: &'p Program) -> Self {
        Self {
            prog,
            buf: KernargBuf::zeroed(prog.plan.explicit_bytes),
            next: 0,
            groups: [1, 1, 1],
            block: [1, 1, 1],
            dynamic_lds: 0,
            locals: Vec::new(),
            err: None,
        }
    }

    pub(super) fn refuse(&mut self, msg: String) {
        if self.err.is_none() {
            self.err = Some(Error::InvalidArgument(format!(
                "kernel {}: {msg}",
                self.prog.name
            )));
        }
    }

    /// Adds the next explicit argument: a [`GpuBuffer`] or [`BufferView`] for a
    /// `global_buffer`, a number or [`ByValue`] for a `by_value`, an [`Lds`] size for a
    /// `dynamic_shared_pointer`.
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
        let len = u32::try_from(bytes.len).unwrap_or(u32::MAX);
        if let Err(e) = check_arg(info, index, a.class(), len, a.align()) {
            self.refuse(e);
            return self;
        }
        if a.class() == ArgClass::Lds {
            // Placed (and its address written) once every argument is known.
            let b = bytes.as_slice().and_then(|b| b.first_chunk::<4>());
            self.locals
                .push((index, b.map_or(0, |b| u32::from_le_bytes(*b))));
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

    /// Dynamic LDS bytes per work-group (on top of the kernel's static LDS and its
    /// [`Lds`] arguments).
    pub fn dynamic_lds(&mut self, bytes: u32) -> &mut Self {
        self.dynamic_lds = bytes;
        self
    }

    /// Every check that does not depend on an argument's value; places the [`Lds`]
    /// arguments and returns the dynamic LDS bytes of the launch (theirs, then
    /// [`LaunchBuilder::dynamic_lds`]).
    pub(super) fn finish(&mut self) -> Result<u32> {
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
        let dynamic = self.place_locals(meta)?;
        self.check_grid()?;
        Ok(dynamic)
    }

    /// Lays the [`Lds`] arguments out ([`Program::lds_placement`]) and writes each one's LDS
    /// address over its argument. Returns the dynamic LDS bytes.
    fn place_locals(&mut self, meta: &ProgramMeta) -> Result<u32> {
        let p = self.prog;
        if self.locals.is_empty() && self.dynamic_lds <= p.max_dynamic_lds() {
            // Nothing to place, and the dynamic LDS fits: what the placement below returns.
            return Ok(self.dynamic_lds);
        }
        let placed = p.lds_placement(&self.locals, self.dynamic_lds)?;
        for &(index, addr) in &placed.addrs {
            let Some(info) = meta.args.get(index) else {
                continue;
            };
            let at = usize::try_from(info.offset).unwrap_or(usize::MAX);
            let n = usize::try_from(info.size).unwrap_or(usize::MAX).min(8);
            let dst = at
                .checked_add(n)
                .and_then(|end| self.buf.bytes_mut().get_mut(at..end));
            match dst {
                Some(d) => {
                    d.copy_from_slice(u64::from(addr).to_le_bytes().get(..n).unwrap_or_default())
                }
                None => {
                    return Err(Error::InvalidArgument(format!(
                        "kernel {}: {} ({} bytes at offset {}) does not fit the kernarg segment",
                        p.name,
                        info.describe(index),
                        info.size,
                        info.offset
                    )));
                }
            }
        }
        Ok(placed.dynamic)
    }

    /// The grid checks [`LaunchBuilder::finish`] ends with.
    fn check_grid(&self) -> Result<()> {
        let p = self.prog;
        let (groups, block) = (self.groups, self.block);
        for (i, axis) in ["x", "y", "z"].iter().enumerate() {
            let items = u64::from(groups[i]) * u64::from(block[i]);
            if items > u64::from(u32::MAX) {
                return Err(Error::InvalidArgument(format!(
                    "kernel {}: grid {axis} is {} groups x {} work-items = {items} work-items, at least 2^32",
                    p.name, groups[i], block[i]
                )));
            }
        }
        Ok(())
    }

    /// Checks, lays out the kernarg segment (the explicit arguments, the program's template,
    /// the launch-dependent hidden arguments) and launches.
    fn checked_launch(&mut self, timed: bool) -> Result<(TimelineValue, Option<Duration>)> {
        let l = self.finish()?;
        let p = self.prog;
        let (g, b) = (self.groups, self.block);
        if let Some(why) = &p.plan.refusal {
            return Err(Error::InvalidArgument(format!("kernel {}: {why}", p.name)));
        }
        if p.plan.split {
            // Straight into the arena: no copy of the whole segment on the way.
            let shape = LaunchShape {
                groups: g,
                block: b,
                dynamic_lds: l,
            };
            let mut words = template::ShapeWords::default();
            p.plan
                .shape_words(&shape, &mut words)
                .map_err(|e| Error::InvalidArgument(format!("kernel {}: {e}", p.name)))?;
            let src = KernargSrc::Split {
                explicit: self.buf.words(),
                template: &p.plan.template,
                shape: &words,
            };
            return p.launch_raw(src, g, b, l, timed);
        }
        // A layout the split cannot express: the whole segment, from the template.
        let mut full =
            KernargBuf::<INLINE_KERNARG_WORDS>::from_template(&p.plan.template, p.kernarg_size);
        let explicit = self.buf.bytes_mut();
        if let Some(d) = full.bytes_mut().get_mut(..explicit.len()) {
            d.copy_from_slice(explicit);
        }
        // Unless an explicit argument overlaps a hidden one (a malformed code object), the
        // launch-independent hidden arguments are in place.
        p.fill_hidden(&mut full, g, b, l, p.plan.overlap)?;
        let words = bytemuck::cast_slice(full.words());
        p.launch_raw(KernargSrc::Bytes(words), g, b, l, timed)
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
        self.checked_launch(false).map(|(v, _)| v)
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
        let (_, t) = self.checked_launch(true)?;
        Ok(t.unwrap_or_default())
    }
}
