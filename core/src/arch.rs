//! GPU targets and per-family hardware facts.
//!
//! A [`GfxTarget`] comes from KFD's `gfx_target_version` (`110000` is gfx1100) or from its name
//! (`"gfx1100"`). Its [`Family`] selects one `const` [`ArchInfo`] table (Asahi style): register
//! offsets, packet layouts and limits. Encoders take `&ArchInfo`; nothing else branches on the
//! family.

use core::fmt;

use crate::bitfield::Field;
use crate::sel::{EventIndex, EventType};
use crate::vsharp::ScratchRsrcFormat;

// Kept here too so paths written before `addr` existed keep working.
#[doc(no_inline)]
pub use crate::addr::{GpuVa, hi32, join64, lo32};

/// GPU family: selects packet variants and register tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Family {
    /// GCN5 / CDNA (gfx9xx): SDMA v4, 7-dword ACQUIRE_MEM with CP_COHER_CNTL.
    Gfx9,
    /// RDNA1/2 (gfx10xx): SDMA v5.
    Gfx10,
    /// RDNA3 (gfx11xx): SDMA v6.
    Gfx11,
    /// RDNA4 (gfx12xx): SDMA v7.
    Gfx12,
}

impl Family {
    /// The hardware table for this family.
    #[must_use]
    #[inline]
    pub const fn info(self) -> &'static ArchInfo {
        match self {
            Family::Gfx9 => &GFX9,
            Family::Gfx10 => &GFX10,
            Family::Gfx11 => &GFX11,
            Family::Gfx12 => &GFX12,
        }
    }
}

/// A GPU target: `gfx<major><minor><stepping>` (minor and stepping are hex digits).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GfxTarget {
    /// Major version (9, 10, 11, 12).
    pub major: u32,
    /// Minor version (0..=15).
    pub minor: u32,
    /// Stepping (0..=15).
    pub stepping: u32,
}

/// Why a target could not be made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TargetError {
    /// `gfx_target_version` is not `major*10000 + minor*100 + stepping` with minor, stepping < 16.
    BadVersion(u32),
    /// The name is not `gfx` followed by 3 or 4 hex digits.
    BadName,
    /// A well-formed target of a family hcq does not drive (gfx7, gfx8, ...).
    UnsupportedMajor(u32),
}

impl fmt::Display for TargetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TargetError::BadVersion(v) => write!(
                f,
                "gfx_target_version {v} is not major*10000+minor*100+stepping with minor and stepping below 16"
            ),
            TargetError::BadName => {
                write!(
                    f,
                    "target name is not `gfx` followed by 3 or 4 hex digits (e.g. gfx1100)"
                )
            }
            TargetError::UnsupportedMajor(m) => {
                write!(
                    f,
                    "gfx{m} targets are not supported (only gfx9, gfx10, gfx11, gfx12)"
                )
            }
        }
    }
}

impl core::error::Error for TargetError {}

impl GfxTarget {
    /// From KFD's `gfx_target_version` (`110000` -> gfx1100, `90010` -> gfx90a).
    #[inline]
    pub const fn from_kfd_version(v: u32) -> Result<Self, TargetError> {
        let major = v / 10000;
        let minor = (v / 100) % 100;
        let stepping = v % 100;
        if major == 0 {
            return Err(TargetError::BadVersion(v));
        }
        // `new` refuses minor or stepping of 16 and more as BadVersion(v).
        Self::new(major, minor, stepping)
    }

    /// From its parts; only families hcq drives are accepted.
    #[inline]
    pub const fn new(major: u32, minor: u32, stepping: u32) -> Result<Self, TargetError> {
        if minor >= 16 || stepping >= 16 {
            return Err(TargetError::BadVersion(
                major
                    .saturating_mul(10000)
                    .saturating_add(minor * 100 + stepping),
            ));
        }
        match major {
            9..=12 => Ok(Self {
                major,
                minor,
                stepping,
            }),
            m => Err(TargetError::UnsupportedMajor(m)),
        }
    }

    /// KFD's `gfx_target_version` of this target.
    #[must_use]
    #[inline]
    pub const fn kfd_version(self) -> u32 {
        self.major * 10000 + self.minor * 100 + self.stepping
    }

    /// The family.
    #[must_use]
    #[inline]
    pub const fn family(self) -> Family {
        match self.major {
            9 => Family::Gfx9,
            10 => Family::Gfx10,
            11 => Family::Gfx11,
            // PANIC-free: `new` only admits 9..=12.
            _ => Family::Gfx12,
        }
    }

    /// The family's hardware table.
    #[must_use]
    #[inline]
    pub const fn info(self) -> &'static ArchInfo {
        self.family().info()
    }

    /// Parses `"gfx1100"`, `"gfx90a"`, `"gfx942"` (case-insensitive hex digits).
    #[inline]
    pub fn parse(s: &str) -> Result<Self, TargetError> {
        let digits = s
            .strip_prefix("gfx")
            .ok_or(TargetError::BadName)?
            .as_bytes();
        let hex = |b: u8| -> Result<u32, TargetError> {
            char::from(b).to_digit(16).ok_or(TargetError::BadName)
        };
        let (major, rest) = match digits.len() {
            // PANIC: none; the arm's length guarantees the indices below exist.
            3 => (hex(digits[0])?, &digits[1..]),
            4 => {
                let d0 = char::from(digits[0])
                    .to_digit(10)
                    .ok_or(TargetError::BadName)?;
                let d1 = char::from(digits[1])
                    .to_digit(10)
                    .ok_or(TargetError::BadName)?;
                (d0 * 10 + d1, &digits[2..])
            }
            _ => return Err(TargetError::BadName),
        };
        let [mi, st] = rest else {
            return Err(TargetError::BadName);
        };
        Self::new(major, hex(*mi)?, hex(*st)?)
    }
}

impl fmt::Display for GfxTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "gfx{}{:x}{:x}", self.major, self.minor, self.stepping)
    }
}

impl core::str::FromStr for GfxTarget {
    type Err = TargetError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

/// SET_SH_REG offsets (register dword − 0x2C00) of the compute registers hcq writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ComputeRegs {
    /// COMPUTE_START_X (then START_Y/Z, NUM_THREAD_X/Y/Z follow consecutively).
    pub start_x: u32,
    /// COMPUTE_PGM_LO (then PGM_HI, two unused, DISPATCH_SCRATCH_BASE_LO/HI).
    pub pgm_lo: u32,
    /// COMPUTE_PGM_RSRC1 (then RSRC2).
    pub pgm_rsrc1: u32,
    /// COMPUTE_PGM_RSRC3.
    pub pgm_rsrc3: u32,
    /// COMPUTE_RESOURCE_LIMITS.
    pub resource_limits: u32,
    /// COMPUTE_STATIC_THREAD_MGMT_SE0 (then SE1).
    pub static_thread_mgmt_se0: u32,
    /// COMPUTE_TMPRING_SIZE.
    pub tmpring_size: u32,
    /// COMPUTE_STATIC_THREAD_MGMT_SE2 (then SE3).
    pub static_thread_mgmt_se2: u32,
    /// COMPUTE_RESTART_X (then Y, Z and one more).
    pub restart_x: u32,
    /// COMPUTE_STATIC_THREAD_MGMT_SE4 (then SE5..SE7).
    pub static_thread_mgmt_se4: u32,
    /// COMPUTE_USER_DATA_0 (16 consecutive registers).
    pub user_data_0: u32,
}

/// How ACQUIRE_MEM is laid out on a family.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AcquireMemLayout {
    /// gfx9: 7 dwords, cache actions in CP_COHER_CNTL (dw1), poll interval in dw6.
    CoherCntl,
    /// gfx10+: 8 dwords, CP_COHER_CNTL 0, cache actions in GCR_CNTL (dw7).
    GcrCntl,
}

impl AcquireMemLayout {
    /// Total dwords of the packet, header included.
    #[must_use]
    #[inline]
    pub const fn dwords(self) -> usize {
        match self {
            AcquireMemLayout::CoherCntl => 7,
            AcquireMemLayout::GcrCntl => 8,
        }
    }
}

/// Event numbers (VGT_EVENT_TYPE) used by hcq.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Events {
    /// CS_PARTIAL_FLUSH (EVENT_WRITE after a dispatch).
    pub cs_partial_flush: EventType,
    /// EVENT_INDEX that goes with CS_PARTIAL_FLUSH.
    pub cs_partial_flush_index: EventIndex,
    /// CACHE_FLUSH_AND_INV_TS_EVENT (RELEASE_MEM).
    pub cache_flush_and_inv_ts: EventType,
    /// RELEASE_MEM event index "end of pipe".
    pub release_mem_end_of_pipe: EventIndex,
}

bitfield! {
    /// `COMPUTE_TMPRING_SIZE`, the queue's scratch ring size. `WAVESIZE` starts at bit 12 and
    /// its width depends on the family: [`ArchInfo::tmpring_wavesize`].
    pub struct ComputeTmpringSize(u32) {
        /// Waves the ring holds.
        WAVES: 11:0,
    }
}

/// Per-family hardware facts, one `const` per family.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArchInfo {
    /// The family this table describes.
    pub family: Family,
    /// Compute SH register offsets.
    pub regs: ComputeRegs,
    /// ACQUIRE_MEM layout.
    pub acquire_mem: AcquireMemLayout,
    /// RELEASE_MEM dw1 cache bits for a "flush caches" release (GCR bits on gfx10+,
    /// TC_WB/TCL1/TC on gfx9).
    pub release_mem_cache_flush: u32,
    /// NBIO `GPU_HDP_FLUSH_REQ` register dword (the seed: `nbioreg(0x0106)` = 0x0106 + 0xd20):
    /// what the kernel's `get_hdp_flush_req_offset` returns, offset 0x106 in NBIO segment 2
    /// (base 0xd20) for every target hcq drives: NBIO 7.4 (gfx90a), 7.9 (gfx942), 2.3
    /// (gfx1030), 4.3 (gfx1100) and NBIF 6.3.1 (gfx1201); `tests/reference_nbio.rs` checks it
    /// per target against `tests/reference/linux_nbio_hdp.tsv`.
    pub hdp_flush_req: u32,
    /// NBIO `GPU_HDP_FLUSH_DONE` register dword (offset 0x107 in segment 2, as REQ).
    pub hdp_flush_done: u32,
    /// The bit of `GPU_HDP_FLUSH_REQ`/`DONE` an SDMA engine 0 HDP flush writes and polls: the
    /// kernel's `ref_and_mask_sdma0` (`*_GPU_HDP_FLUSH_DONE__SDMA0_MASK` of `nbio_v7_4.c`,
    /// `nbio_v7_9.c`, `nbio_v2_3.c`, `nbio_v4_3.c`, `nbif_v6_3_1.c`), bit 10 after the ten CP
    /// bits in each of them.
    pub sdma0_hdp_flush_mask: u32,
    /// Maximum bytes one SDMA COPY_LINEAR moves (hcq and the seed use 4 MiB everywhere).
    pub sdma_max_copy_bytes: u64,
    /// Highest bit of COMPUTE_TMPRING_SIZE.WAVESIZE (low bit is 12).
    pub tmpring_wavesize_hi: u32,
    /// Bytes per unit of COMPUTE_TMPRING_SIZE.WAVESIZE: 1 KiB on gfx9/gfx10, 256 B from gfx11
    /// (ROCR's `mem_alignment_size` for the scratch SRD and TMPRING).
    pub tmpring_wavesize_unit: u32,
    /// Whether DISPATCH_INITIATOR has CS_W32_EN (wave32 dispatch).
    pub has_cs_w32_en: bool,
    /// Whether the SDMA FENCE header carries MTYPE 3 (uncached).
    pub sdma_fence_mtype_uc: bool,
    /// Whether `COMPUTE_STATIC_THREAD_MGMT_SE4..SE7` exist (gfx11+). On gfx10 the same offsets
    /// are `COMPUTE_RELAUNCH` / `COMPUTE_WAVE_RESTORE_ADDR_LO/HI` / `COMPUTE_RELAUNCH2`, and on
    /// gfx90a/gfx940 0x22c..0x22d are `COMPUTE_SHADER_CHKSUM` / `COMPUTE_PGM_RSRC3` (Mesa's
    /// register database): `exec` must not write all-ones there.
    pub has_static_thread_mgmt_se4: bool,
    /// Whether `exec` writes `COMPUTE_PGM_RSRC3` from the kernel descriptor (in the slot
    /// that SE4..SE7 take on gfx11+, so the launch keeps its length everywhere). Required on
    /// gfx90a/gfx940+ (ACCUM_OFFSET: where the AGPRs begin; TG_SPLIT); on gfx10 it carries
    /// SHARED_VGPR_CNT. Not on gfx11/gfx12, whose launches stay dword-exact with the seed:
    /// there RSRC3 holds only SHARED_VGPR_CNT (wave64; hcq dispatches wave32), INST_PREF_SIZE
    /// (a prefetch hint; 9:4 on gfx11, 11:4 on gfx12), TRAP_ON_START/END (debugger; gfx11
    /// only), GLG_EN (gfx12 only) and IMAGE_OP (graphics), none of which a compute kernel's
    /// results depend on, and the queue's copy starts zeroed in the MQD.
    pub exec_writes_pgm_rsrc3: bool,
    /// Event numbers.
    pub events: Events,
    /// How the private segment buffer (scratch V#) is built; `None` on families with
    /// architected flat scratch, whose kernels never ask for one.
    pub scratch_rsrc: Option<ScratchRsrcFormat>,
}

impl ArchInfo {
    /// `COMPUTE_TMPRING_SIZE.WAVESIZE` on this family: bits `tmpring_wavesize_hi:12`.
    #[must_use]
    #[inline]
    pub const fn tmpring_wavesize(&self) -> Field<ComputeTmpringSize> {
        Field::new(self.tmpring_wavesize_hi, 12)
    }
}

const EVENTS: Events = Events {
    cs_partial_flush: EventType::CsPartialFlush,
    cs_partial_flush_index: EventIndex::PartialFlush,
    cache_flush_and_inv_ts: EventType::CacheFlushAndInvTs,
    release_mem_end_of_pipe: EventIndex::EndOfPipe,
};

/// gfx10/11/12 compute registers (gc_11_0_0_offset.h + GC base 0x1260 − 0x2C00).
const REGS_GFX10PLUS: ComputeRegs = ComputeRegs {
    start_x: 0x204,
    pgm_lo: 0x20c,
    pgm_rsrc1: 0x212,
    pgm_rsrc3: 0x228,
    resource_limits: 0x215,
    static_thread_mgmt_se0: 0x216,
    tmpring_size: 0x218,
    static_thread_mgmt_se2: 0x219,
    restart_x: 0x21b,
    static_thread_mgmt_se4: 0x22b,
    user_data_0: 0x240,
};

/// RELEASE_MEM GCR bits the seed sets for a signal: GLM_WB|GLM_INV|GLV_INV|GL1_INV|GL2_INV|GL2_WB|SEQ.
const RELEASE_GCR_FLUSH: u32 =
    (1 << 12) | (1 << 13) | (1 << 14) | (1 << 15) | (1 << 20) | (1 << 21) | (1 << 22);

/// `GPU_HDP_FLUSH_DONE__SDMA0_MASK`: CP0..CP9 are bits 0..9, SDMA0 is bit 10.
const GPU_HDP_FLUSH_DONE_SDMA0: u32 = 1 << 10;

/// gfx9 RELEASE_MEM: TC_WB_ACTION_ENA (15) | TCL1_ACTION_ENA (16) | TC_ACTION_ENA (17).
const RELEASE_TC_FLUSH_GFX9: u32 = (1 << 15) | (1 << 16) | (1 << 17);

/// gfx11 (RDNA3): exact, matches the seed dword for dword.
pub const GFX11: ArchInfo = ArchInfo {
    family: Family::Gfx11,
    regs: REGS_GFX10PLUS,
    acquire_mem: AcquireMemLayout::GcrCntl,
    release_mem_cache_flush: RELEASE_GCR_FLUSH,
    hdp_flush_req: 0x0106 + 0xd20,
    hdp_flush_done: 0x0107 + 0xd20,
    sdma0_hdp_flush_mask: GPU_HDP_FLUSH_DONE_SDMA0,
    sdma_max_copy_bytes: 0x40_0000,
    tmpring_wavesize_hi: 26,
    tmpring_wavesize_unit: 256,
    has_cs_w32_en: true,
    sdma_fence_mtype_uc: true,
    has_static_thread_mgmt_se4: true,
    exec_writes_pgm_rsrc3: false,
    events: EVENTS,
    scratch_rsrc: None,
};

/// gfx10 (RDNA1/2): same register offsets and packets as gfx11 (reference doc §3).
pub const GFX10: ArchInfo = ArchInfo {
    family: Family::Gfx10,
    // Mesa gfx10/gfx103 COMPUTE_TMPRING_SIZE.WAVESIZE is bits 24:12 (13 bits).
    tmpring_wavesize_hi: 24,
    tmpring_wavesize_unit: 1024,
    has_static_thread_mgmt_se4: false,
    exec_writes_pgm_rsrc3: true,
    scratch_rsrc: Some(crate::vsharp::SCRATCH_GFX10),
    ..GFX11
};

/// gfx12 (RDNA4): gc_12_0_0 uses the same SH offsets; TMPRING wavesize is bits 29:12.
pub const GFX12: ArchInfo = ArchInfo {
    family: Family::Gfx12,
    tmpring_wavesize_hi: 29,
    // WAVESIZE counts 256-byte units, as on gfx11.
    ..GFX11
};

/// gfx9 (Vega / CDNA): RSRC3 at 0x22D, 7-dword ACQUIRE_MEM, no wave32, no FENCE mtype.
pub const GFX9: ArchInfo = ArchInfo {
    family: Family::Gfx9,
    regs: ComputeRegs {
        pgm_rsrc3: 0x22d,
        ..REGS_GFX10PLUS
    },
    acquire_mem: AcquireMemLayout::CoherCntl,
    release_mem_cache_flush: RELEASE_TC_FLUSH_GFX9,
    hdp_flush_req: 0x0106 + 0xd20,
    hdp_flush_done: 0x0107 + 0xd20,
    sdma0_hdp_flush_mask: GPU_HDP_FLUSH_DONE_SDMA0,
    sdma_max_copy_bytes: 0x40_0000,
    tmpring_wavesize_hi: 24,
    tmpring_wavesize_unit: 1024,
    has_cs_w32_en: false,
    sdma_fence_mtype_uc: false,
    has_static_thread_mgmt_se4: false,
    exec_writes_pgm_rsrc3: true,
    events: EVENTS,
    scratch_rsrc: Some(crate::vsharp::SCRATCH_GFX9),
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kfd_versions() {
        let t = |v| GfxTarget::from_kfd_version(v).unwrap();
        assert_eq!(t(110000).to_string_buf().as_str(), "gfx1100");
        assert_eq!(t(90010).to_string_buf().as_str(), "gfx90a");
        assert_eq!(t(90402).to_string_buf().as_str(), "gfx942");
        assert_eq!(t(120001).to_string_buf().as_str(), "gfx1201");
        assert_eq!(t(110000).family(), Family::Gfx11);
        assert_eq!(t(90010).family(), Family::Gfx9);
        assert_eq!(t(100300).family(), Family::Gfx10);
        assert_eq!(t(100300).to_string_buf().as_str(), "gfx1030");
        assert_eq!(t(120001).info().family, Family::Gfx12);
        assert_eq!(t(90402).kfd_version(), 90402);
        assert_eq!(
            GfxTarget::from_kfd_version(91700),
            Err(TargetError::BadVersion(91700))
        );
        assert_eq!(
            GfxTarget::from_kfd_version(80003),
            Err(TargetError::UnsupportedMajor(8))
        );
        assert_eq!(
            GfxTarget::from_kfd_version(0),
            Err(TargetError::BadVersion(0))
        );
        assert_eq!(
            GfxTarget::from_kfd_version(91016),
            Err(TargetError::BadVersion(91016))
        );
        assert_eq!(
            GfxTarget::from_kfd_version(1500),
            Err(TargetError::BadVersion(1500))
        );
    }

    #[test]
    fn rsrc3_is_written_where_the_family_needs_it() {
        let prog = crate::pm4::Program {
            rsrc3: 0xabc,
            ..crate::pm4::Program::default()
        };
        let writes_rsrc3 = |arch: &'static ArchInfo| {
            let mut l: crate::cmd::Pm4List<256, 8> = crate::cmd::Pm4List::new(arch);
            l.exec(&prog, crate::addr::GpuVa(0x1000), [1, 1, 1], [64, 1, 1])
                .unwrap();
            l.as_dwords()
                .windows(2)
                .any(|w| w == [arch.regs.pgm_rsrc3, 0xabc])
        };
        assert!(writes_rsrc3(&GFX9));
        assert!(writes_rsrc3(&GFX10));
        assert!(!writes_rsrc3(&GFX11));
        assert!(!writes_rsrc3(&GFX12));
    }

    #[test]
    fn target_errors_explain_themselves() {
        use crate::testing::shown;
        assert_eq!(
            shown(&TargetError::BadVersion(91700)).as_str(),
            "gfx_target_version 91700 is not major*10000+minor*100+stepping with minor and stepping below 16"
        );
        assert_eq!(
            shown(&TargetError::BadName).as_str(),
            "target name is not `gfx` followed by 3 or 4 hex digits (e.g. gfx1100)"
        );
        assert_eq!(
            shown(&TargetError::UnsupportedMajor(8)).as_str(),
            "gfx8 targets are not supported (only gfx9, gfx10, gfx11, gfx12)"
        );
    }

    #[test]
    fn parse_names() {
        assert_eq!(
            GfxTarget::parse("gfx1100"),
            GfxTarget::from_kfd_version(110000)
        );
        assert_eq!(
            GfxTarget::parse("gfx90a"),
            GfxTarget::from_kfd_version(90010)
        );
        assert_eq!(
            GfxTarget::parse("gfx942"),
            GfxTarget::from_kfd_version(90402)
        );
        assert_eq!(
            GfxTarget::parse("gfx1201"),
            GfxTarget::from_kfd_version(120001)
        );
        assert_eq!(GfxTarget::parse("gfx"), Err(TargetError::BadName));
        assert_eq!(GfxTarget::parse("gpu1100"), Err(TargetError::BadName));
        assert_eq!(GfxTarget::parse("gfx11000"), Err(TargetError::BadName));
        assert_eq!(
            GfxTarget::parse("gfx803"),
            Err(TargetError::UnsupportedMajor(8))
        );
        assert_eq!(GfxTarget::parse("gfx1é0"), Err(TargetError::BadName));
    }

    #[test]
    fn tables() {
        assert_eq!(GFX11.regs.pgm_lo, 0x1bac + 0x1260 - 0x2c00);
        assert_eq!(GFX11.regs.user_data_0, 0x1be0 + 0x1260 - 0x2c00);
        assert_eq!(GFX11.regs.pgm_rsrc3, 0x228);
        assert_eq!(GFX9.regs.pgm_rsrc3, 0x22d);
        assert_eq!(GFX11.hdp_flush_req, 0xe26);
        assert_eq!(GFX9.acquire_mem.dwords(), 7);
        assert_eq!(GFX12.acquire_mem.dwords(), 8);
        const { assert!(!GFX9.has_cs_w32_en) };
        // RSRC3 takes the SE4..SE7 slot of `exec`: never both.
        const {
            let all = [GFX9, GFX10, GFX11, GFX12];
            let mut k = 0;
            while k < all.len() {
                assert!(!(all[k].exec_writes_pgm_rsrc3 && all[k].has_static_thread_mgmt_se4));
                k += 1;
            }
            assert!(GFX9.exec_writes_pgm_rsrc3);
        };
    }

    /// A tiny fixed buffer for Display in no_std tests.
    struct Buf {
        b: [u8; 32],
        n: usize,
    }
    impl Buf {
        fn as_str(&self) -> &str {
            core::str::from_utf8(&self.b[..self.n]).unwrap()
        }
    }
    impl fmt::Write for Buf {
        fn write_str(&mut self, s: &str) -> fmt::Result {
            let end = self.n + s.len();
            self.b
                .get_mut(self.n..end)
                .ok_or(fmt::Error)?
                .copy_from_slice(s.as_bytes());
            self.n = end;
            Ok(())
        }
    }
    trait ToBuf {
        fn to_string_buf(&self) -> Buf;
    }
    impl ToBuf for GfxTarget {
        fn to_string_buf(&self) -> Buf {
            let mut b = Buf { b: [0; 32], n: 0 };
            fmt::write(&mut b, format_args!("{self}")).unwrap();
            b
        }
    }
}
