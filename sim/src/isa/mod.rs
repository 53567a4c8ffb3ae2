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
//! checks what the hardware could not launch; `memory` holds [`Memory`] and [`FlatMemory`]. Layer order: `ops < decode < model < interp`,
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
mod memory;
pub mod model;
pub mod ops;

pub use memory::{FlatMemory, Memory};

use crate::vm::VmFault;
use core::fmt;
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
