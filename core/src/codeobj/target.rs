//! ELF constants, processor (`EF_AMDGPU_MACH_*`) and target-id parsing.

use super::*;

/// `ELFOSABI_AMDGPU_HSA`: the OS ABI of HSA code objects (`e_ident[EI_OSABI]`).
pub const ELFOSABI_AMDGPU_HSA: u8 = 64;
/// `ELFABIVERSION_AMDGPU_HSA_V3`: code object v3.
pub const ELFABIVERSION_AMDGPU_HSA_V3: u8 = 1;
/// `ELFABIVERSION_AMDGPU_HSA_V4`: code object v4.
pub const ELFABIVERSION_AMDGPU_HSA_V4: u8 = 2;
/// `ELFABIVERSION_AMDGPU_HSA_V5`: code object v5 (clang 19's default).
pub const ELFABIVERSION_AMDGPU_HSA_V5: u8 = 3;
/// `ELFABIVERSION_AMDGPU_HSA_V6`: code object v6 (generic targets).
pub const ELFABIVERSION_AMDGPU_HSA_V6: u8 = 4;

/// `EF_AMDGPU_MACH`: the processor bits of `e_flags`.
pub const EF_AMDGPU_MACH: u32 = 0x0ff;
/// `EF_AMDGPU_FEATURE_XNACK_V3`: xnack enabled (code object v3 only).
pub const EF_AMDGPU_FEATURE_XNACK_V3: u32 = 0x100;
/// `EF_AMDGPU_FEATURE_SRAMECC_V3`: sramecc enabled (code object v3 only).
pub const EF_AMDGPU_FEATURE_SRAMECC_V3: u32 = 0x200;
/// `EF_AMDGPU_FEATURE_XNACK_V4`: the xnack setting (v4+): mask of the two bits.
pub const EF_AMDGPU_FEATURE_XNACK_V4: u32 = 0x300;
/// `EF_AMDGPU_FEATURE_SRAMECC_V4`: the sramecc setting (v4+): mask of the two bits.
pub const EF_AMDGPU_FEATURE_SRAMECC_V4: u32 = 0xc00;
/// `EF_AMDGPU_GENERIC_VERSION`: generic-target version (v6), bits 24..32.
pub const EF_AMDGPU_GENERIC_VERSION: u32 = 0xff00_0000;

/// Largest GPU image [`CodeObject::parse`] accepts (256 MiB): a bigger one is a lying header.
pub const MAX_IMAGE_SIZE: u64 = 256 << 20;
/// Most `PT_LOAD` segments a code object may have (LLVM emits 3 or 4).
pub const MAX_SEGMENTS: usize = 16;
/// GPU page size the image is rounded up to.
pub const IMAGE_PAGE: u64 = 0x1000;
/// Alignment the kernel entry point must have (bytes).
pub const ENTRY_ALIGN: u64 = 256;
/// Alignment a kernel descriptor must have (bytes).
pub const DESCRIPTOR_ALIGN: u64 = 64;
/// LDS allocation granularity of COMPUTE_PGM_RSRC2.LDS_SIZE on gfx9..gfx12 compute (bytes).
pub const LDS_GRANULE_BYTES: u32 = 512;
/// Largest value of the 9-bit RSRC2.LDS_SIZE field.
pub const MAX_LDS_GRANULES: u32 = 0x1ff;

pub use crate::name::Name;
pub(super) use crate::name::short_name;

/// An AMDGPU processor as encoded in `e_flags & EF_AMDGPU_MACH`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MachTarget {
    /// The `EF_AMDGPU_MACH_AMDGCN_*` value.
    pub mach: u32,
    /// The LLVM processor name (`gfx1100`, `gfx11-generic`).
    pub name: &'static str,
}

macro_rules! machs {
    ($($konst:ident = $val:literal, $name:literal;)*) => {
        $(
            #[doc = concat!("`EF_AMDGPU_MACH` value of `", $name, "`.")]
            pub const $konst: u32 = $val;
        )*
        /// Every processor this module knows, as LLVM 19 encodes it (pinned by a test against
        /// `llvm-readelf-19`'s decoding).
        pub const MACH_TARGETS: &[MachTarget] = &[$(MachTarget { mach: $val, name: $name }),*];
    };
}

machs! {
    EF_AMDGPU_MACH_AMDGCN_GFX600 = 0x20, "gfx600";
    EF_AMDGPU_MACH_AMDGCN_GFX601 = 0x21, "gfx601";
    EF_AMDGPU_MACH_AMDGCN_GFX700 = 0x22, "gfx700";
    EF_AMDGPU_MACH_AMDGCN_GFX701 = 0x23, "gfx701";
    EF_AMDGPU_MACH_AMDGCN_GFX702 = 0x24, "gfx702";
    EF_AMDGPU_MACH_AMDGCN_GFX703 = 0x25, "gfx703";
    EF_AMDGPU_MACH_AMDGCN_GFX704 = 0x26, "gfx704";
    EF_AMDGPU_MACH_AMDGCN_GFX801 = 0x28, "gfx801";
    EF_AMDGPU_MACH_AMDGCN_GFX802 = 0x29, "gfx802";
    EF_AMDGPU_MACH_AMDGCN_GFX803 = 0x2a, "gfx803";
    EF_AMDGPU_MACH_AMDGCN_GFX810 = 0x2b, "gfx810";
    EF_AMDGPU_MACH_AMDGCN_GFX900 = 0x2c, "gfx900";
    EF_AMDGPU_MACH_AMDGCN_GFX902 = 0x2d, "gfx902";
    EF_AMDGPU_MACH_AMDGCN_GFX904 = 0x2e, "gfx904";
    EF_AMDGPU_MACH_AMDGCN_GFX906 = 0x2f, "gfx906";
    EF_AMDGPU_MACH_AMDGCN_GFX908 = 0x30, "gfx908";
    EF_AMDGPU_MACH_AMDGCN_GFX909 = 0x31, "gfx909";
    EF_AMDGPU_MACH_AMDGCN_GFX90C = 0x32, "gfx90c";
    EF_AMDGPU_MACH_AMDGCN_GFX1010 = 0x33, "gfx1010";
    EF_AMDGPU_MACH_AMDGCN_GFX1011 = 0x34, "gfx1011";
    EF_AMDGPU_MACH_AMDGCN_GFX1012 = 0x35, "gfx1012";
    EF_AMDGPU_MACH_AMDGCN_GFX1030 = 0x36, "gfx1030";
    EF_AMDGPU_MACH_AMDGCN_GFX1031 = 0x37, "gfx1031";
    EF_AMDGPU_MACH_AMDGCN_GFX1032 = 0x38, "gfx1032";
    EF_AMDGPU_MACH_AMDGCN_GFX1033 = 0x39, "gfx1033";
    EF_AMDGPU_MACH_AMDGCN_GFX602 = 0x3a, "gfx602";
    EF_AMDGPU_MACH_AMDGCN_GFX705 = 0x3b, "gfx705";
    EF_AMDGPU_MACH_AMDGCN_GFX805 = 0x3c, "gfx805";
    EF_AMDGPU_MACH_AMDGCN_GFX1035 = 0x3d, "gfx1035";
    EF_AMDGPU_MACH_AMDGCN_GFX1034 = 0x3e, "gfx1034";
    EF_AMDGPU_MACH_AMDGCN_GFX90A = 0x3f, "gfx90a";
    EF_AMDGPU_MACH_AMDGCN_GFX940 = 0x40, "gfx940";
    EF_AMDGPU_MACH_AMDGCN_GFX1100 = 0x41, "gfx1100";
    EF_AMDGPU_MACH_AMDGCN_GFX1013 = 0x42, "gfx1013";
    EF_AMDGPU_MACH_AMDGCN_GFX1150 = 0x43, "gfx1150";
    EF_AMDGPU_MACH_AMDGCN_GFX1103 = 0x44, "gfx1103";
    EF_AMDGPU_MACH_AMDGCN_GFX1036 = 0x45, "gfx1036";
    EF_AMDGPU_MACH_AMDGCN_GFX1101 = 0x46, "gfx1101";
    EF_AMDGPU_MACH_AMDGCN_GFX1102 = 0x47, "gfx1102";
    EF_AMDGPU_MACH_AMDGCN_GFX1200 = 0x48, "gfx1200";
    EF_AMDGPU_MACH_AMDGCN_GFX1151 = 0x4a, "gfx1151";
    EF_AMDGPU_MACH_AMDGCN_GFX941 = 0x4b, "gfx941";
    EF_AMDGPU_MACH_AMDGCN_GFX942 = 0x4c, "gfx942";
    EF_AMDGPU_MACH_AMDGCN_GFX1201 = 0x4e, "gfx1201";
    EF_AMDGPU_MACH_AMDGCN_GFX950 = 0x4f, "gfx950";
    EF_AMDGPU_MACH_AMDGCN_GFX9_GENERIC = 0x51, "gfx9-generic";
    EF_AMDGPU_MACH_AMDGCN_GFX10_1_GENERIC = 0x52, "gfx10-1-generic";
    EF_AMDGPU_MACH_AMDGCN_GFX10_3_GENERIC = 0x53, "gfx10-3-generic";
    EF_AMDGPU_MACH_AMDGCN_GFX11_GENERIC = 0x54, "gfx11-generic";
    EF_AMDGPU_MACH_AMDGCN_GFX1152 = 0x55, "gfx1152";
    EF_AMDGPU_MACH_AMDGCN_GFX1153 = 0x58, "gfx1153";
    EF_AMDGPU_MACH_AMDGCN_GFX12_GENERIC = 0x59, "gfx12-generic";
    EF_AMDGPU_MACH_AMDGCN_GFX9_4_GENERIC = 0x5f, "gfx9-4-generic";
}

/// Which concrete processors a generic target's code runs on (LLVM `AMDGPUUsage`).
const GENERIC_MEMBERS: &[(&str, &[&str])] = &[
    (
        "gfx9-generic",
        &["gfx900", "gfx902", "gfx904", "gfx906", "gfx909", "gfx90c"],
    ),
    ("gfx9-4-generic", &["gfx940", "gfx941", "gfx942", "gfx950"]),
    (
        "gfx10-1-generic",
        &["gfx1010", "gfx1011", "gfx1012", "gfx1013"],
    ),
    (
        "gfx10-3-generic",
        &[
            "gfx1030", "gfx1031", "gfx1032", "gfx1033", "gfx1034", "gfx1035", "gfx1036",
        ],
    ),
    (
        "gfx11-generic",
        &[
            "gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151", "gfx1152", "gfx1153",
        ],
    ),
    ("gfx12-generic", &["gfx1200", "gfx1201"]),
];

impl MachTarget {
    /// The processor for an `EF_AMDGPU_MACH` value.
    #[must_use]
    pub fn from_mach(mach: u32) -> Option<Self> {
        MACH_TARGETS.iter().copied().find(|t| t.mach == mach)
    }

    /// The processor called `name` (`gfx1100`).
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        MACH_TARGETS.iter().copied().find(|t| t.name == name)
    }

    /// Whether this is a generic target (`gfx11-generic`), whose code runs on a family.
    #[must_use]
    pub fn is_generic(self) -> bool {
        self.name.ends_with("-generic")
    }

    /// Whether code built for this target runs on a device called `device` (`gfx1100`): the
    /// same name, or a generic target listing that device.
    #[must_use]
    pub fn runs_on(self, device: &str) -> bool {
        if self.name == device {
            return true;
        }
        GENERIC_MEMBERS
            .iter()
            .any(|(g, members)| *g == self.name && members.contains(&device))
    }

    /// The concrete [`GfxTarget`](crate::arch::GfxTarget) (`None` for generic targets and
    /// families hcq does not drive).
    #[must_use]
    pub fn gfx_target(self) -> Option<crate::arch::GfxTarget> {
        crate::arch::GfxTarget::parse(self.name).ok()
    }

    /// Whether the target is a gfx9 part (wave64 only; no wave32).
    #[must_use]
    pub fn is_gfx9(self) -> bool {
        self.name.starts_with("gfx9")
    }
}

impl fmt::Display for MachTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

/// A target feature's setting in `e_flags` (xnack, sramecc).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FeatureSetting {
    /// The processor does not have the feature.
    Unsupported,
    /// Code works with the feature on or off.
    Any,
    /// Code requires the feature off (`feature-`).
    Off,
    /// Code requires the feature on (`feature+`).
    On,
}

impl FeatureSetting {
    fn from_v4(bits: u32) -> Self {
        match bits & 3 {
            0 => Self::Unsupported,
            1 => Self::Any,
            2 => Self::Off,
            _ => Self::On,
        }
    }

    fn suffix(self) -> Option<char> {
        match self {
            Self::On => Some('+'),
            Self::Off => Some('-'),
            Self::Unsupported | Self::Any => None,
        }
    }
}

/// What `e_ident` and `e_flags` say the object was built for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TargetId {
    /// The processor.
    pub mach: MachTarget,
    /// The xnack setting.
    pub xnack: FeatureSetting,
    /// The sramecc setting.
    pub sramecc: FeatureSetting,
    /// `e_ident[EI_ABIVERSION]`: 1..=4 for code object v3..v6.
    pub abi_version: u8,
    /// Generic-target version (code object v6), else 0.
    pub generic_version: u8,
    /// The raw `e_flags`.
    pub e_flags: u32,
}

impl TargetId {
    /// Code object version (3..=6).
    #[must_use]
    pub const fn code_object_version(&self) -> u8 {
        self.abi_version.saturating_add(2)
    }

    pub(super) fn from_flags(e_flags: u32, abi_version: u8) -> Result<Self, CodeObjectError> {
        let mach_bits = e_flags & EF_AMDGPU_MACH;
        let mach = MachTarget::from_mach(mach_bits).ok_or(CodeObjectError::UnknownMach {
            mach: mach_bits,
            e_flags,
        })?;
        let (xnack, sramecc) = if abi_version == ELFABIVERSION_AMDGPU_HSA_V3 {
            let on_off = |set: bool| {
                if set {
                    FeatureSetting::On
                } else {
                    FeatureSetting::Off
                }
            };
            (
                on_off(e_flags & EF_AMDGPU_FEATURE_XNACK_V3 != 0),
                on_off(e_flags & EF_AMDGPU_FEATURE_SRAMECC_V3 != 0),
            )
        } else {
            (
                FeatureSetting::from_v4((e_flags & EF_AMDGPU_FEATURE_XNACK_V4) >> 8),
                FeatureSetting::from_v4((e_flags & EF_AMDGPU_FEATURE_SRAMECC_V4) >> 10),
            )
        };
        let generic_version = e_flags.to_le_bytes()[3];
        Ok(Self {
            mach,
            xnack,
            sramecc,
            abi_version,
            generic_version,
            e_flags,
        })
    }
}

impl fmt::Display for TargetId {
    /// LLVM's target-id form: `gfx90a`, `gfx90a:sramecc+:xnack-`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.mach.name)?;
        if let Some(c) = self.sramecc.suffix() {
            write!(f, ":sramecc{c}")?;
        }
        if let Some(c) = self.xnack.suffix() {
            write!(f, ":xnack{c}")?;
        }
        Ok(())
    }
}
