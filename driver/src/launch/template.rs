//! What a launch of a [`Program`] prepares once, at load: the kernarg segment with every hidden
//! argument that does not depend on the launch already in place (zeros, aperture bases), the
//! hidden arguments that do (block counts, group sizes, grid dims, dynamic LDS) as checked
//! (offset, size, source) entries, and the memory barrier + exec packets with the dwords each
//! launch patches (kernarg and dispatch pointers, NUM_THREAD, DISPATCH_DIRECT).

#[allow(clippy::wildcard_imports)]
use super::*;

/// Where the value of a hidden argument that depends on the launch comes from: an index
/// into [`shape_values`].
fn shape_source(kind: HiddenKind) -> Option<u8> {
    Some(match kind {
        HiddenKind::BlockCountX => 0,
        HiddenKind::BlockCountY => 1,
        HiddenKind::BlockCountZ => 2,
        HiddenKind::GroupSizeX => 3,
        HiddenKind::GroupSizeY => 4,
        HiddenKind::GroupSizeZ => 5,
        HiddenKind::GridDims => 6,
        HiddenKind::DynamicLdsSize => 7,
        _ => return None,
    })
}

/// The launch-dependent hidden values of `shape`, as [`shape_source`] indexes them (what
/// `hidden_args::value` gives for those kinds).
fn shape_values(shape: &LaunchShape) -> [u64; 8] {
    let ([gx, gy, gz], [bx, by, bz]) = (shape.groups, shape.block);
    [
        gx.into(),
        gy.into(),
        gz.into(),
        bx.into(),
        if seeded!(HiddenGroupSizeYFromX) {
            bx
        } else {
            by
        }
        .into(),
        bz.into(),
        if seeded!(HiddenGridDimsOne) {
            1
        } else {
            shape.dims().into()
        },
        shape.dynamic_lds.into(),
    ]
}

/// A hidden argument whose value depends on the launch, placed at load: bits `shift..` of
/// kernarg word `word` (a 2-, 4- or 8-byte argument at an offset its size divides never
/// straddles two words).
#[derive(Clone, Copy, Debug)]
pub(super) struct ShapeHidden {
    kind: HiddenKind,
    src: u8,
    offset: u32,
    size: u32,
    word: usize,
    shift: u32,
    /// The bits the value may use (`size` bytes).
    mask: u64,
    /// Index of `word` in [`HiddenPlan::shape_words`].
    slot: usize,
}

/// Most distinct kernarg words the launch-dependent hidden arguments may share for a launch to
/// write them as whole words (LLVM's code object v5 layout uses 3).
pub(super) const MAX_SHAPE_WORDS: usize = 8;

/// The kernarg words holding launch-dependent hidden arguments, with those arguments written
/// over the template's word: what a launch stores there.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct ShapeWords {
    /// (word index, value) pairs; the first `n` are used.
    pub(super) words: [(usize, u64); MAX_SHAPE_WORDS],
    /// Pairs used.
    pub(super) n: usize,
}

impl ShapeWords {
    /// The used pairs.
    pub(super) fn as_slice(&self) -> &[(usize, u64)] {
        self.words.get(..self.n).unwrap_or_default()
    }
}

/// The hidden-argument part of a program's launch state, built at load.
#[derive(Clone, Debug, Default)]
pub(super) struct HiddenPlan {
    /// The kernarg segment (8-byte words, zero padded) with every launch-independent hidden
    /// argument written: explicit arguments and launch-dependent values go on top.
    pub(super) template: Vec<u64>,
    /// The launch-dependent hidden arguments.
    pub(super) shape: Vec<ShapeHidden>,
    /// Whether one of them has a size or offset [`ShapeHidden`] cannot place (not seen from
    /// LLVM): they are then written byte-wise through `hidden_args::write`.
    shape_bytewise: bool,
    /// Why every launch through the metadata refuses (a hidden argument hcq cannot fill), in
    /// the words of the refusal.
    pub(super) refusal: Option<String>,
    /// Whether an explicit argument overlaps a hidden one (a malformed code object): the
    /// launch-independent hidden arguments are then written again after the explicit ones.
    pub(super) overlap: bool,
    /// The distinct words the launch-dependent hidden arguments lie in.
    shape_words: Vec<usize>,
    /// Bytes of the explicit part a builder keeps: up to the end of the last explicit
    /// argument (at most the segment).
    pub(super) explicit_bytes: u64,
    /// Whether a launch may write the segment as three runs of whole words: the explicit
    /// part's words, the template's after them, the [`ShapeWords`] over those (no explicit
    /// argument shares a word with a hidden one, and the launch-dependent ones are placed).
    pub(super) split: bool,
    /// The last shape [`HiddenPlan::shape_words`] placed and its words.
    cache: ShapeCache,
}

/// The last launch shape a plan's [`HiddenPlan::shape_words`] placed (without error) and the
/// word values it gave, for the next launch of the same shape (the usual case: a kernel
/// launched again and again with the same grid). A seqlock of atomics: a hit costs plain
/// loads (no locked instruction, which alone costs a good part of the ~220 instructions the
/// words take to place); a writer takes the sequence from even to odd with a compare-exchange
/// and simply skips caching when another one holds it. Exact: the key is the whole
/// [`LaunchShape`], the words are a pure function of it and of the plan, which never changes
/// after load.
#[derive(Debug, Default)]
struct ShapeCache {
    /// Even: `key` and `vals` are consistent; odd: a writer is storing them.
    seq: AtomicU64,
    /// [`ShapeCache::key_of`] of the cached shape (all zero: none; a key has bit 32 of its
    /// last word set).
    key: [AtomicU64; 4],
    /// The cached words' values, in [`HiddenPlan::shape_words`]'s order.
    vals: [AtomicU64; MAX_SHAPE_WORDS],
}

impl Clone for ShapeCache {
    fn clone(&self) -> Self {
        Self::default()
    }
}

impl ShapeCache {
    fn key_of(shape: &LaunchShape) -> [u64; 4] {
        let ([gx, gy, gz], [bx, by, bz]) = (shape.groups, shape.block);
        let pair = |a: u32, b: u32| u64::from(a) | (u64::from(b) << 32);
        [
            pair(gx, gy),
            pair(gz, bx),
            pair(by, bz),
            pair(shape.dynamic_lds, 1),
        ]
    }

    /// The cached values of `key`'s first `n` words into `out`; whether they were there.
    fn get(&self, key: &[u64; 4], out: &mut [(usize, u64); MAX_SHAPE_WORDS], n: usize) -> bool {
        let s1 = self.seq.load(Ordering::Acquire);
        if s1 % 2 == 1 {
            return false;
        }
        if self
            .key
            .iter()
            .zip(key)
            .any(|(a, &b)| a.load(Ordering::Relaxed) != b)
        {
            return false;
        }
        for ((_, w), v) in out.iter_mut().zip(&self.vals).take(n) {
            *w = v.load(Ordering::Relaxed);
        }
        // Seqlock read side: the loads above happen before the re-read of the sequence.
        core::sync::atomic::fence(Ordering::Acquire);
        self.seq.load(Ordering::Relaxed) == s1
    }

    /// Caches `words` as `key`'s, unless another writer is at it.
    fn put(&self, key: &[u64; 4], words: &ShapeWords) {
        let s = self.seq.load(Ordering::Relaxed);
        if s % 2 == 1
            || self
                .seq
                .compare_exchange(s, s + 1, Ordering::Acquire, Ordering::Relaxed)
                .is_err()
        {
            return;
        }
        // Seqlock write side: the odd sequence is visible before any of the stores below.
        core::sync::atomic::fence(Ordering::Release);
        for (a, &b) in self.key.iter().zip(key) {
            a.store(b, Ordering::Relaxed);
        }
        for (a, &(_, b)) in self.vals.iter().zip(words.as_slice()) {
            a.store(b, Ordering::Relaxed);
        }
        self.seq.store(s + 2, Ordering::Release);
    }
}

/// Words of a kernarg segment of `size` bytes.
pub(super) fn words_for(size: u64) -> usize {
    usize::try_from(size.div_ceil(8)).unwrap_or(usize::MAX)
}

impl HiddenPlan {
    /// The plan for a kernel with `kernarg_size` bytes of arguments and metadata `meta`
    /// (`None`: no metadata, an all-zero template).
    pub(super) fn new(kernarg_size: u64, meta: Option<&ProgramMeta>) -> Self {
        let mut template = vec![0u64; words_for(kernarg_size)];
        let Some(meta) = meta else {
            return Self {
                template,
                ..Self::default()
            };
        };
        let len = usize::try_from(kernarg_size).unwrap_or(usize::MAX);
        let mut refusal = meta.unknown_hidden.as_ref().map(|kind| {
            format!(
                "the kernel takes a hidden argument of kind {kind}, which hcq does not know how to fill"
            )
        });
        let mut shape = Vec::new();
        let mut shape_bytewise = false;
        let mut shape_words = Vec::new();
        let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut template);
        let kernarg = bytes.get_mut(..len).unwrap_or_default();
        // Any launch: the launch-independent values are the same for all of them.
        let any = LaunchShape {
            groups: [1, 1, 1],
            block: [1, 1, 1],
            dynamic_lds: 0,
        };
        for &(kind, offset, size) in &meta.hidden {
            let r = match shape_source(kind) {
                Some(src) => {
                    let end = u64::from(offset) + u64::from(size);
                    if end > kernarg_size {
                        Err(hidden_args::HiddenError::OutOfBounds { kind, offset, size })
                    } else {
                        let placed = matches!(size, 2 | 4 | 8) && offset % size == 0;
                        shape_bytewise |= !placed;
                        // CAST: offset / 8 < kernarg_size / 8, which fits usize.
                        let word = (offset / 8) as usize;
                        let slot = match shape_words.iter().position(|&w| w == word) {
                            Some(i) => i,
                            None => {
                                shape_words.push(word);
                                shape_words.len() - 1
                            }
                        };
                        shape.push(ShapeHidden {
                            kind,
                            src,
                            offset,
                            size,
                            word,
                            shift: offset % 8 * 8,
                            mask: u64::MAX >> (64 - size.clamp(1, 8) * 8),
                            slot,
                        });
                        Ok(())
                    }
                }
                None => hidden_args::write(kernarg, kind, offset, size, &any),
            };
            if let Err(e) = r
                && refusal.is_none()
            {
                refusal = Some(e.to_string());
            }
        }
        let overlap = meta.explicit_end > meta.first_hidden;
        let explicit_bytes = u64::from(meta.explicit_end).min(kernarg_size);
        // Launch-dependent arguments are ORed into the template's zero bytes: they must not
        // overlap one another.
        let disjoint = shape.iter().enumerate().all(|(i, a)| {
            shape
                .iter()
                .skip(i + 1)
                .all(|b| a.offset + a.size <= b.offset || b.offset + b.size <= a.offset)
        });
        let split = !overlap
            && disjoint
            && !shape_bytewise
            && shape_words.len() <= MAX_SHAPE_WORDS
            && explicit_bytes.div_ceil(8) * 8 <= u64::from(meta.first_hidden);
        Self {
            template,
            shape,
            shape_bytewise,
            refusal,
            overlap,
            shape_words,
            explicit_bytes,
            split,
            cache: ShapeCache::default(),
        }
    }

    /// Puts into `out` the words holding the launch-dependent hidden arguments of a launch of
    /// shape `shape` (for a [`HiddenPlan::split`] plan).
    ///
    /// # Errors
    /// As [`HiddenPlan::fill_shape`].
    pub(super) fn shape_words(
        &self,
        shape: &LaunchShape,
        out: &mut ShapeWords,
    ) -> core::result::Result<(), hidden_args::HiddenError> {
        let n = self.shape_words.len().min(MAX_SHAPE_WORDS);
        // A seeded bug that changes the values (armed per thread) bypasses the cache.
        let cached = !seeded!(HiddenGroupSizeYFromX) && !seeded!(HiddenGridDimsOne);
        let key = ShapeCache::key_of(shape);
        for (slot, &w) in out.words.iter_mut().zip(&self.shape_words) {
            slot.0 = w;
        }
        out.n = n;
        if cached && self.cache.get(&key, &mut out.words, n) {
            return Ok(());
        }
        self.place_shape_words(shape, out)?;
        if cached {
            self.cache.put(&key, out);
        }
        Ok(())
    }

    /// [`HiddenPlan::shape_words`] without the cache (`out`'s word indices set).
    fn place_shape_words(
        &self,
        shape: &LaunchShape,
        out: &mut ShapeWords,
    ) -> core::result::Result<(), hidden_args::HiddenError> {
        for slot in out.words.iter_mut().take(out.n) {
            slot.1 = self.template.get(slot.0).copied().unwrap_or(0);
        }
        let values = shape_values(shape);
        // Every value checked at once (the common case: all fit), then placed; a value that
        // does not fit is named by the second pass.
        let mut over = 0;
        for h in &self.shape {
            // MASK: `src` < 8 (`shape_source`): the mask changes nothing, and the index needs
            // no bounds check.
            let v = values[usize::from(h.src) & 7];
            over |= v & !h.mask;
            if let Some((_, w)) = out.words.get_mut(h.slot) {
                // The segment is little endian: byte `offset % 8` of the word is bits
                // `shift..`, zero in the template (nothing else lies there in a split plan).
                *w |= (v << h.shift).to_le();
            }
        }
        if over != 0 {
            for h in &self.shape {
                let v = values[usize::from(h.src) & 7];
                if v & !h.mask != 0 {
                    return Err(hidden_args::HiddenError::TooSmall {
                        kind: h.kind,
                        size: h.size,
                        value: v,
                    });
                }
            }
        }
        Ok(())
    }

    /// Writes the launch-dependent hidden arguments of a launch of shape `shape` into
    /// `kernarg` (the whole segment, laid out from the template).
    ///
    /// # Errors
    /// A value too large for its argument's size (e.g. more than 65535 groups into a 2-byte
    /// block count).
    pub(super) fn fill_shape(
        &self,
        kernarg: &mut KernargBuf,
        shape: &LaunchShape,
    ) -> core::result::Result<(), hidden_args::HiddenError> {
        if self.shape_bytewise {
            let bytes = kernarg.bytes_mut();
            for h in &self.shape {
                hidden_args::write(bytes, h.kind, h.offset, h.size, shape)?;
            }
            return Ok(());
        }
        let values = shape_values(shape);
        let words = kernarg.words_mut();
        for h in &self.shape {
            let v = values.get(usize::from(h.src)).copied().unwrap_or(0);
            if v & !h.mask != 0 {
                return Err(hidden_args::HiddenError::TooSmall {
                    kind: h.kind,
                    size: h.size,
                    value: v,
                });
            }
            let w = words
                .get_mut(h.word)
                .ok_or(hidden_args::HiddenError::OutOfBounds {
                    kind: h.kind,
                    offset: h.offset,
                    size: h.size,
                })?;
            // The segment is little endian: byte `offset % 8` of the word is bits `shift..`.
            let le = u64::from_le(*w);
            *w = ((le & !(h.mask << h.shift)) | (v << h.shift)).to_le();
        }
        Ok(())
    }
}

/// The launch's PM4 commands, pre-encoded: `memory_barrier` then `exec` of the program with a
/// zero kernarg address and 1x1x1 dims, and where a launch patches them.
#[derive(Clone, Debug, Default)]
pub(super) struct ExecTemplate {
    /// The dwords of both commands.
    pub(super) dwords: Vec<u32>,
    /// The kernarg pointer (low, high).
    kernargs_at: usize,
    /// The dispatch pointer (low, high), when the program takes one.
    dispatch_ptr_at: Option<usize>,
    /// NUM_THREAD_X..Z.
    local_at: usize,
    /// DISPATCH_DIRECT's dims.
    global_at: usize,
}

impl ExecTemplate {
    /// Encodes the commands of `prog` on `arch`.
    pub(super) fn new(arch: &ArchInfo, prog: &pm4::Program) -> Result<Self> {
        let enc = |source| Error::Encode {
            what: "the launch template",
            source,
        };
        let barrier = pm4::memory_barrier_dwords(arch);
        let layout = pm4::exec_layout(arch, prog);
        let mut dwords = vec![0u32; barrier + layout.dwords];
        let (b, e) = dwords.split_at_mut(barrier);
        let n = pm4::memory_barrier(b, arch).map_err(enc)?;
        if seeded!(LaunchWithoutBarrier)
            && let Some(h) = b.first_mut()
        {
            *h = pm4::Pm4Header::packet3(pm4::op::NOP, u32::try_from(n).unwrap_or(1) - 1).raw();
        }
        let m = pm4::exec(e, arch, prog, GpuVa(0), [1, 1, 1], [1, 1, 1]).map_err(enc)?;
        if n != barrier || m != layout.dwords {
            return Err(Error::Protocol(format!(
                "launch template: {n} + {m} dwords encoded, {barrier} + {} expected",
                layout.dwords
            )));
        }
        Ok(Self {
            dwords,
            kernargs_at: barrier + layout.kernargs_at,
            dispatch_ptr_at: layout.dispatch_ptr_at.map(|d| barrier + d),
            local_at: barrier + layout.local_at,
            global_at: barrier + layout.dispatch_at + 1,
        })
    }

    /// Patches a copy of the template (`out`, as long as it) for a launch with kernargs at
    /// `kernargs`: what `memory_barrier` then `exec` encode.
    pub(super) fn patch(
        &self,
        out: &mut [u32],
        prog: &pm4::Program,
        kernargs: GpuVa,
        global: [u32; 3],
        local: [u32; 3],
    ) -> Option<()> {
        // Fixed-size stores (a copy of a slice of run-time length is a memcpy call).
        fn put<const N: usize>(out: &mut [u32], at: usize, v: [u32; N]) -> Option<()> {
            *out.get_mut(at..)?.first_chunk_mut::<N>()? = v;
            Some(())
        }
        put(out, self.kernargs_at, [kernargs.lo(), kernargs.hi()])?;
        if let (Some(at), Some(d)) = (self.dispatch_ptr_at, &prog.dispatch) {
            let dp = kernargs.offset(d.packet_offset);
            put(out, at, [dp.lo(), dp.hi()])?;
            if seeded!(KernargDispatchPtrsSwapped) {
                put(out, self.kernargs_at, [dp.lo(), dp.hi()])?;
                put(out, at, [kernargs.lo(), kernargs.hi()])?;
            }
        }
        let ([lx, ly, lz], [gx, gy, gz]) = (local, global);
        put(out, self.local_at, [lx, ly, lz])?;
        put(out, self.global_at, [gx, gy, gz])
    }
}

#[cfg(test)]
mod tests;

/// Launches through the templates on the simulator, with a compute ring so small (KFD's 1 KiB
/// minimum, two launches) that submissions keep wrapping around its end: in place and
/// through the wrap buffer, every launch runs with its own arguments.
#[cfg(all(test, feature = "sim"))]
mod sim_tests {
    use crate::fixtures::{self, FillArgs};
    use crate::{BufferKind, Device, DeviceOptions, Kfd, Program};
    use std::sync::Arc;

    #[test]
    fn launches_written_in_place_survive_ring_wraps() {
        let sim = Arc::new(hcq_sim::SimKfd::gfx1100().unwrap());
        let _gpu = fixtures::attach_sim(&sim).unwrap();
        // SAFETY: nothing else calls the simulator's port methods.
        let kfd = unsafe { Kfd::with_sim(Arc::clone(&sim)) }.unwrap();
        let opts = DeviceOptions {
            compute_ring_size: 1024,
            ..DeviceOptions::default()
        };
        let dev = Device::open_with(&kfd, 0, opts).unwrap();
        sim.run_until_idle(16);
        let t = dev.target_name();
        let fill = Program::load(&dev, fixtures::fill(&t).unwrap(), "fill").unwrap();
        let gid = Program::load(&dev, fixtures::global_id(&t).unwrap(), "global_id").unwrap();
        let n = 64u32;
        let outs: Vec<_> = (0..12)
            .map(|_| dev.alloc(u64::from(n) * 4, BufferKind::Gtt).unwrap())
            .collect();
        for (i, out) in outs.iter().enumerate() {
            if i % 2 == 0 {
                let args = FillArgs {
                    buf: out.va().get(),
                    value: 100 + i as u32,
                    n,
                };
                // SAFETY: fill writes n u32s into `out`, which holds n and outlives the
                // synchronize below.
                unsafe { fill.launch_pod(&args, [1, 1, 1], [64, 1, 1]) }.unwrap();
            } else {
                // SAFETY: as above; global_id writes out[i] = i for i < n.
                unsafe {
                    gid.launch_builder()
                        .arg(out)
                        .arg(&n)
                        .groups([2, 1, 1])
                        .block([32, 1, 1])
                        .launch()
                }
                .unwrap();
            }
        }
        dev.synchronize().unwrap();
        for (i, out) in outs.iter().enumerate() {
            let mut b = vec![0u8; n as usize * 4];
            out.read(0, &mut b).unwrap();
            let got: Vec<u32> = b
                .chunks_exact(4)
                .map(|w| u32::from_le_bytes(w.try_into().unwrap()))
                .collect();
            let want: Vec<u32> = if i % 2 == 0 {
                vec![100 + i as u32; n as usize]
            } else {
                (0..n).collect()
            };
            assert_eq!(got, want, "launch {i}");
        }
    }
}
