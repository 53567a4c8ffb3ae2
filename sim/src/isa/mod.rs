//! The instruction interpreter: the simulated GPU executes the kernel's machine code.
//!
//! A dispatch becomes a [`Launch`] built from the registers the driver programmed (never from
//! the kernel descriptor, which PM4 hardware does not read): program address, RSRC1/2,
//! USER_DATA, workgroup shape and count, scratch ring, wave size. [`run`] executes every
//! workgroup: the waves of a workgroup run in turn up to each `s_barrier`; every instruction
//! fetch, load, store and atomic goes through [`Memory`] (the GPU's page table in the
//! simulator). Anything the hardware would fault on, or that the interpreter does not
//! implement, stops the dispatch with an [`IsaError`] naming the ISA, the instruction, its
//! offset in the kernel, the wave and the workgroup.
//!
//! Layout: `decode` turns words into [`decode::Inst`] (decoded once per dispatch and cached
//! by program offset), `ops` names the shared operations, `interp` runs them (per-lane loops
//! over fixed arrays, EXEC as a bitmask; `interp::init` builds the initial wave state), `launch`
//! checks what the hardware could not launch. Layer order: `ops < decode < model < exec`,
//! `decode < disasm`; `launch` names none of them (and none names it).
//!
//! Families: gfx9 (gfx90a and gfx942, wave64; scratch through the buffer descriptor and the
//! wave-offset SGPR; AGPRs in the unified VGPR file from RSRC3's ACCUM_OFFSET on), gfx11 (gfx1100, wave32 and wave64) and gfx12 (gfx1201: its SMEM and VFLAT
//! layouts, s_wait_* counters, split barriers, workgroup ids in ttmp9/ttmp7) are interpreted.
//! Host stand-ins remain an explicit opt-in of the registry ([`crate::stand_ins::ExecMode`]).

pub mod decode;
pub mod disasm;
pub(crate) mod interp;
pub(crate) mod launch;
pub mod mai;
pub mod model;
pub mod ops;

use crate::vm::{Access, VmFault, VmFaultKind};
use core::fmt;
use core::sync::atomic::{AtomicU64, Ordering};
use hcq_core::arch::Family;

/// An instruction set the simulator knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Isa {
    /// GCN5/CDNA (gfx90a, gfx942): wave64.
    Gfx9,
    /// RDNA3 (gfx1100): wave32 and wave64.
    Gfx11,
    /// RDNA4 (gfx1201).
    Gfx12,
}

impl Isa {
    /// The ISA of a GPU family (`None` for gfx10, which the simulator does not model).
    #[must_use]
    pub fn of(family: Family) -> Option<Self> {
        match family {
            Family::Gfx9 => Some(Isa::Gfx9),
            Family::Gfx11 => Some(Isa::Gfx11),
            Family::Gfx12 => Some(Isa::Gfx12),
            Family::Gfx10 => None,
        }
    }

    /// Whether the interpreter executes this ISA.
    #[must_use]
    pub fn interpreted(self) -> bool {
        matches!(self, Isa::Gfx9 | Isa::Gfx11 | Isa::Gfx12)
    }

    /// Name for messages.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Isa::Gfx9 => "gfx9",
            Isa::Gfx11 => "gfx11",
            Isa::Gfx12 => "gfx12",
        }
    }
}

/// Float modes from COMPUTE_PGM_RSRC1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FloatMode {
    /// FLOAT_DENORM_MODE_32 keeps f32 denormals (else they flush to zero, in and out).
    pub denorm32: bool,
    /// FLOAT_DENORM_MODE_16_64 keeps f16/f64 denormals.
    pub denorm16_64: bool,
}

impl FloatMode {
    /// From COMPUTE_PGM_RSRC1: denormals are kept only in mode 3 (keep on input and output).
    #[must_use]
    pub fn from_rsrc1(rsrc1: u32) -> Self {
        Self {
            denorm32: (rsrc1 >> 16) & 3 == 3,
            denorm16_64: (rsrc1 >> 18) & 3 == 3,
        }
    }
}

/// Per-wave scratch as the hardware computes it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ScratchSetup {
    /// GPU address of wave slot 0 (COMPUTE_DISPATCH_SCRATCH_BASE).
    pub base: u64,
    /// Bytes per wave slot (COMPUTE_TMPRING_SIZE.WAVESIZE in the family's unit); 0: none.
    pub wave_bytes: u64,
}

/// The XCCs a dispatch runs on (a multi-XCC node, `engine/xcc.rs`): its work-groups are shared
/// out one at a time (COMPUTE_TG_CHUNK_SIZE 1, Linux amdkfd `init_mqd_v9_4_3`), so linear
/// work-group `g` runs on XCC `g % count`, and each XCC's waves take their scratch slots from
/// that XCC's own scratch, `scratch_stride` bytes after the previous XCC's (ROCdbgapi
/// `aql_queue_t::scratch_memory_region`: "The scratch memory for this queue is evenly divided
/// between all XCCs, so each XCC has its own scratch base",
/// `scratch_backing_memory_location + scratch_backing_memory_byte_size * xcc_id`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct XccSplit {
    /// XCCs sharing the work-groups (1: the whole grid on XCC `id`).
    pub count: u32,
    /// The XCC of this launch's waves (what `s_getreg_b32 HW_REG_XCC_ID` reads on gfx940+):
    /// with `count` 1 the queue's XCC; [`Launch::on_xcc`] sets it per work-group otherwise.
    pub id: u32,
    /// Bytes from one XCC's scratch base (COMPUTE_DISPATCH_SCRATCH_BASE) to the next's.
    pub scratch_stride: u64,
}

impl XccSplit {
    /// One XCC, number 0: every GPU that is not a partitioned gfx942.
    pub const ONE: Self = Self {
        count: 1,
        id: 0,
        scratch_stride: 0,
    };
}

impl Default for XccSplit {
    fn default() -> Self {
        Self::ONE
    }
}

/// Everything one dispatch's waves start from: the registers, decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Launch {
    /// The instruction set.
    pub isa: Isa,
    /// On gfx9: whether the chip is gfx940+ (CDNA3, gfx942) rather than gfx90a (CDNA2), where
    /// the two give an encoding different meanings ([`decode::decode_for`]). Other ISAs: true.
    pub gfx940: bool,
    /// Program address (COMPUTE_PGM_LO/HI << 8).
    pub pgm: u64,
    /// Wave64 (else wave32).
    pub wave64: bool,
    /// COMPUTE_USER_DATA_0.. for the RSRC2.USER_SGPR_COUNT user SGPRs.
    pub user_sgprs: Vec<u32>,
    /// COMPUTE_PGM_RSRC2 (TGID enables, TG_SIZE, TIDIG_COMP_CNT, SCRATCH_EN).
    pub rsrc2: u32,
    /// Work-items per workgroup (COMPUTE_NUM_THREAD_X/Y/Z).
    pub local: [u32; 3],
    /// Workgroups (DISPATCH_DIRECT dims).
    pub groups: [u32; 3],
    /// LDS bytes per workgroup (RSRC2.LDS_SIZE granules).
    pub lds_bytes: u32,
    /// VGPRs per lane (RSRC1.VGPRS granules). On gfx90a/gfx942 the unified file: ArchVGPRs
    /// and AGPRs together.
    pub vgprs: u32,
    /// gfx90a/gfx942: the VGPR where the AGPRs begin, from COMPUTE_PGM_RSRC3.ACCUM_OFFSET as
    /// `(field + 1) * 4`: AGPR `aN` is VGPR `accum_offset + N` of the unified file, so AGPRs
    /// and ArchVGPRs share the RSRC1 budget. Unused by ISAs without AGPRs.
    pub accum_offset: u32,
    /// Scratch.
    pub scratch: ScratchSetup,
    /// Scratch wave slots (COMPUTE_TMPRING_SIZE.WAVES).
    pub scratch_waves: u32,
    /// Float modes.
    pub float: FloatMode,
    /// Most instructions one wave may execute before it faults (`u64::MAX`: no budget, the
    /// default; endless loops are found by lack of progress, `interp/hang.rs`). An opt-in cap
    /// for loops whose state never repeats.
    pub budget: u64,
    /// What `s_memtime` reads.
    pub clock: u64,
    /// The XCCs the dispatch runs on ([`XccSplit::ONE`] but on a multi-XCC node).
    pub xcc: XccSplit,
}

impl Launch {
    /// This dispatch as XCC `xcc` of [`Launch::xcc`] runs its share: `HW_REG_XCC_ID` reads
    /// `xcc` and the scratch slots start `xcc * scratch_stride` bytes further.
    #[must_use]
    pub fn on_xcc(&self, xcc: u32) -> Self {
        let mut l = self.clone();
        l.xcc.id = xcc;
        l.scratch.base = l
            .scratch
            .base
            .wrapping_add(u64::from(xcc).wrapping_mul(self.xcc.scratch_stride));
        l
    }

    /// The bytes from the scratch base that some XCC's wave slots span: every XCC's
    /// `scratch_waves` slots of `wave_bytes`, `scratch_stride` apart.
    #[must_use]
    pub fn scratch_span(&self) -> u64 {
        let one = u64::from(self.scratch_waves).saturating_mul(self.scratch.wave_bytes);
        u64::from(self.xcc.count.saturating_sub(1))
            .saturating_mul(self.xcc.scratch_stride)
            .saturating_add(one)
    }
}

/// What a dispatch executed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Accesses past an allocation the hardware tolerates (LDS: reads 0, writes dropped),
    /// counted when the run is not strict ([`run_with`]).
    pub out_of_range: u64,
    /// The first of them.
    pub first_out_of_range: Option<OutOfRange>,
    /// Two workgroups that stored the same bytes (a race: no atomic orders them), counted
    /// when the run is not strict ([`run_with`]); kernels with atomics are not checked.
    pub race: Option<GroupRace>,
    /// Instructions executed per wave.
    pub wave_instructions: u64,
    /// Instructions counted per active lane (a scalar instruction counts 1).
    pub lane_instructions: u64,
    /// SIMD issue cycles of every executed instruction ([`model`]).
    pub simd_cycles: u64,
    /// Bytes vector memory instructions moved, counted per active lane ([`model`]).
    pub mem_bytes: u64,
    /// The longest wave's serial cost in cycles: issue cycles plus the memory latency it
    /// waited for ([`model`]).
    pub wave_cycles: u64,
}

impl Stats {
    /// The dispatch's modelled duration on a GPU of `shape` ([`model`]: a throughput model,
    /// to be labelled "modelled" wherever it is shown).
    #[must_use]
    pub fn modelled_ns(&self, shape: &model::GpuShape) -> u64 {
        shape.dispatch_ns(self.simd_cycles, self.mem_bytes, self.wave_cycles)
    }
}

/// Why a dispatch stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IsaError {
    /// A memory access (fetch, load, store, atomic) the page table refused.
    Vm(VmFault),
    /// [`IsaError::Vm`] with where it happened: `at kernel offset 0x.. (program address
    /// 0x..), wave W of workgroup [x, y, z]`, the text [`IsaError::Fault`] messages end with.
    VmAt(VmFault, String),
    /// Anything else: unsupported instruction, out-of-range register, LDS or scratch, the
    /// instruction budget, a bad launch state. The message names where.
    Fault(String),
}

impl fmt::Display for IsaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IsaError::Vm(v) => write!(f, "{v}"),
            IsaError::VmAt(v, at) => write!(f, "{v} {at}"),
            IsaError::Fault(m) => f.write_str(m),
        }
    }
}

impl core::error::Error for IsaError {}

/// GPU memory as the waves see it.
pub trait Memory {
    /// Copies `buf.len()` bytes at `va` into `buf` (`access`: read or instruction fetch).
    ///
    /// # Errors
    /// The first byte that is not accessible.
    fn read(&self, va: u64, buf: &mut [u8], access: Access) -> Result<(), VmFault>;
    /// Copies `data` to `va`.
    ///
    /// # Errors
    /// The first byte that is not writable.
    fn write(&self, va: u64, data: &[u8]) -> Result<(), VmFault>;
    /// Reads `out.len()` little-endian dwords at `va`: the same bytes, fault and access as
    /// [`Memory::read`] of `4 * out.len()` bytes (which the default does), in a form a
    /// memory of words may copy without the byte view.
    ///
    /// # Errors
    /// As [`Memory::read`].
    fn read_dwords(&self, va: u64, out: &mut [u32]) -> Result<(), VmFault> {
        read_dwords_bytes(self, va, out)
    }
    /// Writes `data` as little-endian dwords at `va`: the same bytes and fault as
    /// [`Memory::write`] of their bytes (which the default does).
    ///
    /// # Errors
    /// As [`Memory::write`].
    fn write_dwords(&self, va: u64, data: &[u32]) -> Result<(), VmFault> {
        write_dwords_bytes(self, va, data)
    }
    /// Reads `out.len() / addrs.len()` dwords at each of `addrs` (a wave's lanes) into
    /// consecutive runs of `out`, lane `l`'s at `out[l * n..(l + 1) * n]`: the same bytes,
    /// faults and accesses as one [`Memory::read_dwords`] per address in lane order (which
    /// the default does), in a form a memory may run without a call per lane.
    ///
    /// # Errors
    /// As [`Memory::read_dwords`], of the first lane that faults.
    fn read_lanes(&self, addrs: &[u64], out: &mut [u32]) -> Result<(), VmFault> {
        let n = out.len().checked_div(addrs.len()).unwrap_or(0);
        for (va, chunk) in addrs.iter().zip(out.chunks_exact_mut(n.max(1))) {
            self.read_dwords(*va, chunk)?;
        }
        Ok(())
    }
    /// Writes `data.len() / addrs.len()` dwords at each of `addrs` (a wave's lanes) from
    /// consecutive runs of `data`: the same bytes and faults as one [`Memory::write_dwords`]
    /// per address in lane order (which the default does; a later lane's bytes overwrite an
    /// earlier one's).
    ///
    /// # Errors
    /// As [`Memory::write_dwords`], of the first lane that faults (earlier lanes written).
    fn write_lanes(&self, addrs: &[u64], data: &[u32]) -> Result<(), VmFault> {
        let n = data.len().checked_div(addrs.len()).unwrap_or(0);
        for (va, chunk) in addrs.iter().zip(data.chunks_exact(n.max(1))) {
            self.write_dwords(*va, chunk)?;
        }
        Ok(())
    }
    /// A line fill of the scalar cache: reads as [`Memory::read`] does, but the bytes are
    /// fetched ahead, not used; what the kernel uses of them is [`Memory::used`] (the race
    /// detector records that, so a kernel reading 32 bytes of kernargs does not read the next
    /// launch's bytes in the same line). Default: [`Memory::read`].
    ///
    /// # Errors
    /// As [`Memory::read`].
    fn fill(&self, va: u64, buf: &mut [u8], access: Access) -> Result<(), VmFault> {
        self.read(va, buf, access)
    }
    /// The kernel used `len` bytes at `va` that a [`Memory::fill`] fetched. Default: nothing.
    fn used(&self, va: u64, len: usize) {
        let _ = (va, len);
    }
    /// Reads as [`Memory::read`] (a data read), except that bytes the CPU wrote through its
    /// VRAM mapping after the last HDP flush read as GPU engines see them (what the HDP held)
    /// instead of faulting: the tail of a widened scalar load ([`Space::StaleTail`]).
    /// Default: [`Memory::read`].
    ///
    /// # Errors
    /// The first byte that is not accessible (never a stale one, where the memory models the
    /// HDP).
    fn read_visible(&self, va: u64, buf: &mut [u8]) -> Result<(), VmFault> {
        self.read(va, buf, Access::Read)
    }
    /// This memory as one several threads may use at once, when it is: the interpreter then
    /// may run a dispatch's workgroups on several threads (deterministically: see
    /// [`run_threads`]). `None`, the default, keeps every dispatch on one thread.
    fn shared(&self) -> Option<&(dyn Memory + Sync)> {
        None
    }
}

/// [`Memory::read_dwords`] through [`Memory::read`]: 256 dwords at a time.
fn read_dwords_bytes<M: Memory + ?Sized>(m: &M, va: u64, out: &mut [u32]) -> Result<(), VmFault> {
    let mut buf = [0u8; 1024];
    let mut done = 0;
    for chunk in out.chunks_mut(256) {
        let bytes = buf.get_mut(..4 * chunk.len()).unwrap_or_default();
        // CAST: usize -> u64 widens.
        m.read(va.wrapping_add(done as u64), bytes, Access::Read)?;
        for (x, c) in chunk.iter_mut().zip(bytes.chunks_exact(4)) {
            *x = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        }
        done += 4 * chunk.len();
    }
    Ok(())
}

/// [`Memory::write_dwords`] through [`Memory::write`]: 256 dwords at a time.
fn write_dwords_bytes<M: Memory + ?Sized>(m: &M, va: u64, data: &[u32]) -> Result<(), VmFault> {
    let mut buf = [0u8; 1024];
    let mut done = 0;
    for chunk in data.chunks(256) {
        let bytes = buf.get_mut(..4 * chunk.len()).unwrap_or_default();
        for (c, x) in bytes.chunks_exact_mut(4).zip(chunk) {
            c.copy_from_slice(&x.to_le_bytes());
        }
        // CAST: usize -> u64 widens.
        m.write(va.wrapping_add(done as u64), bytes)?;
        done += 4 * chunk.len();
    }
    Ok(())
}

/// One contiguous block of memory at a GPU address (tests, fuzzing, benchmarks): everything
/// outside it faults as not present.
///
/// The bytes live in relaxed atomic words, not behind a lock: the interpreter's threads (and
/// a wave's every access) read and write them without taking a mutex, and a kernel's racing
/// lanes tear per byte at worst, as on the hardware.
#[derive(Debug)]
pub struct FlatMemory {
    base: u64,
    len: usize,
    words: Box<[AtomicU64]>,
}

impl FlatMemory {
    /// `len` zero bytes at `base`.
    #[must_use]
    pub fn new(base: u64, len: usize) -> Self {
        Self {
            base,
            len,
            words: (0..len.div_ceil(8)).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    /// Copies `data` in at `va` (host side, unchecked beyond the block's bounds).
    ///
    /// # Errors
    /// `va..va+len` outside the block.
    pub fn poke(&self, va: u64, data: &[u8]) -> Result<(), VmFault> {
        Memory::write(self, va, data)
    }

    /// Copies bytes out at `va`.
    ///
    /// # Errors
    /// Outside the block.
    pub fn peek(&self, va: u64, buf: &mut [u8]) -> Result<(), VmFault> {
        Memory::read(self, va, buf, Access::Read)
    }

    /// Whether `n` dwords at each of `addrs` lie inside the block at dword boundaries (then
    /// `Some`: with `true` when every lane's dwords are whole words, `n` even at 8-byte
    /// boundaries); `None` when a lane may fault or is unaligned (the per-lane path).
    #[inline]
    fn lanes_inside(&self, addrs: &[u64], n: usize) -> Option<bool> {
        // CAST: usize -> u64 widens.
        let (bytes, len) = (4 * n as u64, self.len as u64);
        let (mut lo, mut hi, mut bits) = (u64::MAX, 0u64, 0u64);
        for a in addrs {
            lo = lo.min(*a);
            hi = hi.max(*a);
            bits |= a.wrapping_sub(self.base);
        }
        let end = hi.checked_add(bytes)?;
        let inside = lo >= self.base && end - self.base <= len;
        let even = n % 2 == 0 && bits % 8 == 0;
        (inside && bits % 4 == 0 && !addrs.is_empty()).then_some(even)
    }

    /// [`Memory::read_dwords`] (inlined into the lane gather).
    #[inline(always)]
    fn dwords_in(&self, va: u64, out: &mut [u32]) -> Result<(), VmFault> {
        let r = self.range(va, 4 * out.len(), Access::Read)?;
        if r.start % 4 != 0 {
            return read_dwords_bytes(self, va, out);
        }
        // Aligned dwords: each is one half of a word (little-endian: the low half first).
        let mut off = r.start;
        let mut rest = out;
        if off % 8 == 4
            && let Some((first, tail)) = core::mem::take(&mut rest).split_first_mut()
        {
            if let Some(w) = self.words.get(off / 8) {
                // CAST: the high half.
                *first = (w.load(Ordering::Relaxed) >> 32) as u32;
            }
            rest = tail;
            off += 4;
        }
        let words = self.words.get(off / 8..).unwrap_or_default();
        let (pairs, last) = rest.split_at_mut(rest.len() & !1);
        for (p, w) in pairs.chunks_exact_mut(2).zip(words) {
            let x = w.load(Ordering::Relaxed);
            // CAST: halves of a word.
            p[0] = x as u32;
            p[1] = (x >> 32) as u32;
        }
        if let ([x], Some(w)) = (last, words.get(pairs.len() / 2)) {
            // CAST: the low half.
            *x = w.load(Ordering::Relaxed) as u32;
        }
        Ok(())
    }
    /// [`Memory::write_dwords`] (inlined into the lane scatter).
    #[inline(always)]
    fn dwords_out(&self, va: u64, data: &[u32]) -> Result<(), VmFault> {
        let r = self.range(va, 4 * data.len(), Access::Write)?;
        if r.start % 4 != 0 {
            return write_dwords_bytes(self, va, data);
        }
        // A half word replaces only its bytes (other threads may write the other half), as
        // `write` does; whole words are stored.
        let half = |w: &AtomicU64, x: u32, hi: bool| {
            let (mask, val) = if hi {
                (0xffff_ffff_0000_0000, u64::from(x) << 32)
            } else {
                (0xffff_ffff, u64::from(x))
            };
            let _ = w.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |old| {
                Some((old & !mask) | val)
            });
        };
        let mut off = r.start;
        let mut rest = data;
        if off % 8 == 4
            && let Some((first, tail)) = rest.split_first()
        {
            if let Some(w) = self.words.get(off / 8) {
                half(w, *first, true);
            }
            rest = tail;
            off += 4;
        }
        let words = self.words.get(off / 8..).unwrap_or_default();
        let (pairs, last) = rest.split_at(rest.len() & !1);
        for (p, w) in pairs.chunks_exact(2).zip(words) {
            w.store(u64::from(p[0]) | (u64::from(p[1]) << 32), Ordering::Relaxed);
        }
        if let ([x], Some(w)) = (last, words.get(pairs.len() / 2)) {
            half(w, *x, false);
        }
        Ok(())
    }
    #[inline]
    fn range(
        &self,
        va: u64,
        len: usize,
        access: Access,
    ) -> Result<core::ops::Range<usize>, VmFault> {
        let n = self.len;
        let fault = VmFault {
            va,
            access,
            kind: VmFaultKind::NotPresent,
        };
        let off = va.checked_sub(self.base).ok_or(fault)?;
        let off = usize::try_from(off).map_err(|_| fault)?;
        match off.checked_add(len) {
            Some(end) if end <= n => Ok(off..end),
            _ => Err(VmFault {
                va: va.max(self.base + n as u64),
                ..fault
            }),
        }
    }
}

impl Memory for FlatMemory {
    fn shared(&self) -> Option<&(dyn Memory + Sync)> {
        Some(self)
    }
    fn read(&self, va: u64, buf: &mut [u8], access: Access) -> Result<(), VmFault> {
        let r = self.range(va, buf.len(), access)?;
        let mut off = r.start;
        let mut out = buf;
        // Bytes of a word up to alignment, whole words, then the last word's bytes.
        while !out.is_empty() {
            let at = off % 8;
            if at == 0 && out.len() >= 8 {
                let body = out.len() / 8;
                let (dst, rest) = out.split_at_mut(body * 8);
                let src = self.words.get(off / 8..off / 8 + body).unwrap_or_default();
                for (d, w) in dst.chunks_exact_mut(8).zip(src) {
                    d.copy_from_slice(&w.load(Ordering::Relaxed).to_le_bytes());
                }
                out = rest;
                off += body * 8;
                continue;
            }
            let Some(word) = self.words.get(off / 8) else {
                break;
            };
            let w = word.load(Ordering::Relaxed).to_le_bytes();
            let n = (8 - at).min(out.len());
            let (dst, rest) = out.split_at_mut(n);
            for (d, b) in dst.iter_mut().zip(&w[at..]) {
                *d = *b;
            }
            out = rest;
            off += n;
        }
        Ok(())
    }
    fn read_dwords(&self, va: u64, out: &mut [u32]) -> Result<(), VmFault> {
        self.dwords_in(va, out)
    }
    fn read_lanes(&self, addrs: &[u64], out: &mut [u32]) -> Result<(), VmFault> {
        let n = out.len().checked_div(addrs.len()).unwrap_or(0);
        if let Some(even) = self.lanes_inside(addrs, n) {
            // Every lane inside the block at a dword boundary: no fault, each dword one
            // half of a word (the low half first).
            for (va, chunk) in addrs.iter().zip(out.chunks_exact_mut(n.max(1))) {
                // CAST: inside the block, checked above.
                let off = (*va - self.base) as usize;
                if even {
                    let words = self.words.get(off / 8..).unwrap_or_default();
                    for (p, w) in chunk.chunks_exact_mut(2).zip(words) {
                        let x = w.load(Ordering::Relaxed);
                        // CAST: halves of a word.
                        p[0] = x as u32;
                        p[1] = (x >> 32) as u32;
                    }
                } else {
                    for (k, x) in chunk.iter_mut().enumerate() {
                        let o = off + 4 * k;
                        let w = self
                            .words
                            .get(o / 8)
                            .map_or(0, |w| w.load(Ordering::Relaxed));
                        // CAST: the half at o.
                        *x = (w >> (8 * (o % 8))) as u32;
                    }
                }
            }
            return Ok(());
        }
        for (va, chunk) in addrs.iter().zip(out.chunks_exact_mut(n.max(1))) {
            self.dwords_in(*va, chunk)?;
        }
        Ok(())
    }
    fn write_lanes(&self, addrs: &[u64], data: &[u32]) -> Result<(), VmFault> {
        let n = data.len().checked_div(addrs.len()).unwrap_or(0);
        if self.lanes_inside(addrs, n) == Some(true) {
            // Every lane inside the block, whole words: stored in lane order.
            for (va, chunk) in addrs.iter().zip(data.chunks_exact(n.max(1))) {
                // CAST: inside the block, checked above.
                let off = (*va - self.base) as usize;
                let words = self.words.get(off / 8..).unwrap_or_default();
                for (p, w) in chunk.chunks_exact(2).zip(words) {
                    w.store(u64::from(p[0]) | (u64::from(p[1]) << 32), Ordering::Relaxed);
                }
            }
            return Ok(());
        }
        for (va, chunk) in addrs.iter().zip(data.chunks_exact(n.max(1))) {
            self.dwords_out(*va, chunk)?;
        }
        Ok(())
    }
    fn write_dwords(&self, va: u64, data: &[u32]) -> Result<(), VmFault> {
        self.dwords_out(va, data)
    }
    fn write(&self, va: u64, data: &[u8]) -> Result<(), VmFault> {
        let r = self.range(va, data.len(), Access::Write)?;
        let mut off = r.start;
        let mut src = data;
        while !src.is_empty() {
            let at = off % 8;
            if at == 0 && src.len() >= 8 {
                let body = src.len() / 8;
                let (bytes, rest) = src.split_at(body * 8);
                let dst = self.words.get(off / 8..off / 8 + body).unwrap_or_default();
                for (w, b) in dst.iter().zip(bytes.chunks_exact(8)) {
                    let mut x = [0u8; 8];
                    x.copy_from_slice(b);
                    w.store(u64::from_le_bytes(x), Ordering::Relaxed);
                }
                src = rest;
                off += body * 8;
                continue;
            }
            let Some(word) = self.words.get(off / 8) else {
                break;
            };
            // Part of a word: replace only these bytes (other threads may write the rest).
            let n = (8 - at).min(src.len());
            let (bytes, rest) = src.split_at(n);
            let mut w = [0u8; 8];
            for (d, b) in w[at..].iter_mut().zip(bytes) {
                *d = *b;
            }
            let val = u64::from_le_bytes(w);
            let mask = (u64::MAX >> (64 - 8 * n)) << (8 * at);
            let _ = word.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |old| {
                Some((old & !mask) | val)
            });
            src = rest;
            off += n;
        }
        Ok(())
    }
}

/// Runs every workgroup of the dispatch `l` on `mem`.
///
/// # Errors
/// The first fault: see [`IsaError`].
pub fn run(l: &Launch, mem: &dyn Memory) -> Result<Stats, IsaError> {
    run_with(l, mem, true)
}

/// The memory an [`OutOfRange`] access left.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Space {
    /// LDS: the allocation is the bytes RSRC2.LDS_SIZE grants; the address an LDS byte address.
    Lds,
    /// A buffer (MUBUF): the allocation is the V#'s NUM_RECORDS (bytes, or records for a
    /// structured access); the address the buffer offset (or the record index).
    Buffer,
    /// Scratch: the allocation is the bytes each lane has (COMPUTE_TMPRING_SIZE.WAVESIZE over
    /// the wave's lanes); the address the lane's private offset.
    Scratch,
    /// The last dwords of a scalar load that the CPU wrote after the last HDP flush, past
    /// dwords it had flushed: LLVM widens kernarg loads past the arguments (an `s_load_b256`
    /// of a 56-byte segment reads 8 bytes more), and a runtime that packs the next launch's
    /// arguments right after writes those bytes while this launch runs. The GPU reads what
    /// the HDP held; a kernel that uses those registers depends on a missing flush. The
    /// address is the first such byte's VA; no allocation.
    StaleTail,
}

impl Space {
    /// What the hardware does with such an access, for a finding's text.
    #[must_use]
    pub fn what(self) -> &'static str {
        match self {
            Space::Lds => {
                "an LDS access past the allocation: the hardware reads 0 and drops the write"
            }
            Space::Buffer => {
                "a buffer access past the V#'s NUM_RECORDS: the hardware reads 0 and drops the write"
            }
            Space::Scratch => {
                "a scratch access past the lane's private size: the hardware reads 0 and drops the write"
            }
            Space::StaleTail => {
                "the last bytes of a scalar load were written by the CPU after the last HDP flush (LLVM widens kernarg loads past the arguments, into memory a runtime may be filling for the next launch): the GPU reads what the HDP held; only a kernel that uses those registers depends on a missing flush"
            }
        }
    }
}

/// An access past an allocation that the hardware tolerates: an LDS access beyond the bytes
/// RSRC2.LDS_SIZE grants reads 0 and drops its write (RDNA3/RDNA4/CDNA3 ISA guides, LDS
/// chapter); so does a buffer access past the V#'s NUM_RECORDS (RDNA3 ISA guide, buffer
/// "Range Checking": out-of-range reads return zero, writes do not write, multi-dword loads
/// and stores are checked per dword) and a scratch access past the lane's private size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutOfRange {
    /// The memory it left.
    pub space: Space,
    /// The instruction's offset from the program address.
    pub pc_offset: u64,
    /// Its mnemonic (the memory instructions' without their segment: [`Self::instruction`]).
    pub mnemonic: &'static str,
    /// The first byte accessed.
    pub address: u64,
    /// Bytes accessed.
    pub bytes: u32,
    /// Bytes allocated.
    pub allocation: u64,
}

/// Two workgroups of one dispatch that stored the same bytes of global memory: the GPU runs
/// them in any order, so which value stays is the scheduling's choice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GroupRace {
    /// The first byte both stored.
    pub address: u64,
    /// Consecutive bytes from there both stored.
    pub bytes: u64,
    /// The two workgroups, the lower first.
    pub groups: [[u32; 3]; 2],
}

impl fmt::Display for GroupRace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "workgroups {:?} and {:?} of the dispatch both store the {} bytes at {:#x}, and no atomic orders them: which store stays depends on the order the GPU runs them in",
            self.groups[0], self.groups[1], self.bytes, self.address
        )
    }
}

impl OutOfRange {
    /// The instruction's name: the mnemonic with its segment (`buffer_load_b32`,
    /// `scratch_store_b32`, `ds_load_b32`).
    #[must_use]
    pub fn instruction(&self) -> String {
        let seg = match self.space {
            Space::Lds => "",
            Space::Buffer => "buffer_",
            Space::Scratch => "scratch_",
            Space::StaleTail => "",
        };
        format!("{seg}{}", self.mnemonic)
    }
}

/// [`run`], choosing what an access the hardware tolerates does: with `strict` it faults the
/// dispatch (the judge [`run`] keeps); without, it does what the GPU does and is counted in
/// [`Stats::out_of_range`]. The same holds for workgroups that store the same bytes
/// ([`Stats::race`]).
///
/// # Errors
/// As [`run`].
pub fn run_with(l: &Launch, mem: &dyn Memory, strict: bool) -> Result<Stats, IsaError> {
    static THREADS: std::sync::OnceLock<Result<usize, crate::EnvError>> =
        std::sync::OnceLock::new();
    let threads = THREADS
        .get_or_init(crate::config::default_threads)
        .clone()
        .map_err(|e| IsaError::Fault(e.to_string()))?;
    run_threads(l, mem, strict, threads)
}

/// [`run_with`] on up to `threads` host threads (0 counts as 1). The result does not depend
/// on `threads` (sim/README.md "Threads"): the workgroups are cut into chunks by the dispatch
/// alone, the chunks' results merged in workgroup order, and a kernel with atomics, or a
/// memory that does not offer itself for sharing ([`Memory::shared`]), stays on this thread.
///
/// # Errors
/// As [`run`].
pub fn run_threads(
    l: &Launch,
    mem: &dyn Memory,
    strict: bool,
    threads: usize,
) -> Result<Stats, IsaError> {
    launch::check(l)?;
    interp::run_dispatch(l, mem, strict, threads)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A memory that only has the byte methods: the trait's defaults of the dword ones.
    struct Bytes<'a>(&'a FlatMemory);

    impl Memory for Bytes<'_> {
        fn read(&self, va: u64, buf: &mut [u8], access: Access) -> Result<(), VmFault> {
            self.0.read(va, buf, access)
        }
        fn write(&self, va: u64, data: &[u8]) -> Result<(), VmFault> {
            self.0.write(va, data)
        }
    }

    #[test]
    fn dword_access_matches_the_byte_access() {
        const BASE: u64 = 0x1000;
        const LEN: usize = 96;
        let pattern = |m: &FlatMemory| {
            let b: Vec<u8> = (0..LEN).map(|k| (k * 37 + 11) as u8).collect();
            m.poke(BASE, &b).map(|()| b)
        };
        // Word-aligned, half-word-aligned and unaligned starts; odd and even counts; the
        // last byte of the block; past the end (a fault naming the first missing byte).
        for start in [0u64, 4, 8, 12, 1, 2, 3, 5, 7, 84, 88, 92, 93] {
            for n in [0usize, 1, 2, 3, 4, 5, 8] {
                let va = BASE + start;
                let (words, bytes) = (FlatMemory::new(BASE, LEN), FlatMemory::new(BASE, LEN));
                let (Ok(_), Ok(init)) = (pattern(&words), pattern(&bytes)) else {
                    panic!("pattern");
                };
                // Reads: each way, the same values and the same fault.
                let mut a = vec![0u32; n];
                let mut b = vec![0u32; n];
                let ra = words.read_dwords(va, &mut a);
                let rb = Bytes(&bytes).read_dwords(va, &mut b);
                assert_eq!(ra, rb, "read {start} {n}");
                if ra.is_ok() {
                    let want: Vec<u32> = (0..n)
                        .map(|k| {
                            let o = start as usize + 4 * k;
                            u32::from_le_bytes([init[o], init[o + 1], init[o + 2], init[o + 3]])
                        })
                        .collect();
                    assert_eq!(a, want, "read {start} {n}");
                    assert_eq!(b, want, "read {start} {n}");
                }
                // Writes: the same bytes after, the same fault.
                let data: Vec<u32> = (0..n)
                    .map(|k| 0xa0b0_c0d0 ^ (k as u32 * 0x0101_0101))
                    .collect();
                let wa = words.write_dwords(va, &data);
                let wb = Bytes(&bytes).write_dwords(va, &data);
                assert_eq!(wa, wb, "write {start} {n}");
                let mut after_a = vec![0u8; LEN];
                let mut after_b = vec![0u8; LEN];
                assert!(words.peek(BASE, &mut after_a).is_ok());
                assert!(bytes.peek(BASE, &mut after_b).is_ok());
                assert_eq!(after_a, after_b, "write {start} {n}");
            }
        }
    }

    #[test]
    fn lane_gather_and_scatter_match_the_byte_access() {
        const BASE: u64 = 0x1000;
        const LEN: usize = 256;
        let pattern = |m: &FlatMemory| {
            let b: Vec<u8> = (0..LEN).map(|k| (k * 37 + 11) as u8).collect();
            m.poke(BASE, &b)
        };
        // Lane address sets: whole words, dwords off the 8-byte grid, unaligned, lanes that
        // repeat an address (a later lane's store wins), one that leaves the block, one
        // below it.
        let sets: [&[u64]; 7] = [
            &[0, 48, 16, 200, 96],
            &[4, 36, 4, 100],
            &[1, 70, 9],
            &[32, 32, 32],
            &[0, 16, 252, 64],
            &[0, 240, 248],
            &[64, 8, 0],
        ];
        for (s, rel) in sets.iter().enumerate() {
            for n in [1usize, 2, 3, 4] {
                let mut addrs: Vec<u64> = rel.iter().map(|r| BASE + r).collect();
                if s == 6 {
                    addrs[1] = BASE - 8;
                }
                let (words, bytes) = (FlatMemory::new(BASE, LEN), FlatMemory::new(BASE, LEN));
                assert!(pattern(&words).is_ok() && pattern(&bytes).is_ok());
                let mut a = vec![0u32; n * addrs.len()];
                let mut b = vec![0u32; n * addrs.len()];
                let ra = words.read_lanes(&addrs, &mut a);
                let rb = Bytes(&bytes).read_lanes(&addrs, &mut b);
                assert_eq!(ra, rb, "read set {s} n {n}");
                if ra.is_ok() {
                    assert_eq!(a, b, "read set {s} n {n}");
                }
                let data: Vec<u32> = (0..n * addrs.len())
                    .map(|k| 0xa0b0_c0d0 ^ (k as u32 * 0x0101_0101))
                    .collect();
                let wa = words.write_lanes(&addrs, &data);
                let wb = Bytes(&bytes).write_lanes(&addrs, &data);
                assert_eq!(wa, wb, "write set {s} n {n}");
                let mut after_a = vec![0u8; LEN];
                let mut after_b = vec![0u8; LEN];
                assert!(words.peek(BASE, &mut after_a).is_ok());
                assert!(bytes.peek(BASE, &mut after_b).is_ok());
                assert_eq!(after_a, after_b, "write set {s} n {n}");
            }
        }
    }
}
