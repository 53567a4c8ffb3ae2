//! AMDGPU ELF code objects (HSA code object v3..v6), parsed without allocation.
//!
//! [`CodeObject::parse`] validates the file once: ELF64, little endian, `EM_AMDGPU`, OS ABI
//! `ELFOSABI_AMDGPU_HSA` with ABI version 1..=4 (code object v3..v6), a known
//! `EF_AMDGPU_MACH_*` processor in `e_flags`, the program headers (the `PT_LOAD` segments
//! become the [loading plan](CodeObject::segments)), the section headers, the symbol table, and
//! every kernel (`<name>.kd` symbol: its 64-byte [`KernelDescriptor`] and entry point). Every
//! offset and size read from the file is bounds-checked; a truncated, overlapping or lying
//! header is a [`CodeObjectError`] naming the offending value, never a panic.
//!
//! Only `object`'s `elf` feature is used (raw `#[repr(C)]` structs and `object::pod`); its
//! `read_core` API would pull in `alloc`.
//!
//! ```no_run
//! # fn demo(bytes: &[u8]) -> Result<(), hcq_core::codeobj::CodeObjectError> {
//! use hcq_core::codeobj::{CodeObject, DeviceLimits};
//! let co = CodeObject::parse(bytes)?;
//! co.check_target("gfx1100")?;
//! let k = co.kernel("vector_add")?;
//! k.check_resources(&DeviceLimits { lds_bytes: 64 * 1024, max_private_segment_bytes: 4096 })?;
//! let mut image = [0u8; 1 << 16];
//! co.load_into(&mut image)?; // then copy `image[..co.image_size()]` to VRAM at `base`
//! // dispatch: kernel_object = base + k.descriptor_offset
//! # Ok(()) }
//! ```

use core::fmt;
use core::ops::Range;

use object::elf::{
    ELFCLASS64, ELFDATA2LSB, ELFMAG, EM_AMDGPU, ET_DYN, FileHeader64, PF_W, PF_X, PT_LOAD,
    ProgramHeader64, SHN_UNDEF, SHT_DYNSYM, SHT_NOBITS, SHT_NOTE, SHT_NULL, SHT_STRTAB, SHT_SYMTAB,
    SectionHeader64, Sym64,
};
use object::endian::LittleEndian as LE;
use object::pod;

use crate::hsa::{KernelCodeProperties, KernelDescriptor};
use crate::metadata::{KernelMeta, Metadata, MetadataError};

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

/// A short name kept inside an error (kernel or device name, truncated to 64 bytes).
pub type Name = heapless::String<64>;

fn short_name(s: &str) -> Name {
    let mut out = Name::new();
    for c in s.chars() {
        if out.push(c).is_err() {
            break;
        }
    }
    out
}

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

    fn from_flags(e_flags: u32, abi_version: u8) -> Result<Self, CodeObjectError> {
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

/// Which part of the file a bounds error is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Region {
    /// The 64-byte ELF header.
    ElfHeader,
    /// The program header table.
    ProgramHeaders,
    /// The section header table.
    SectionHeaders,
    /// The file bytes of program header `n`.
    Segment(u16),
    /// The file bytes of section `n`.
    Section(u16),
    /// The name of symbol `n` in the string table.
    SymbolName(u32),
}

impl fmt::Display for Region {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ElfHeader => f.write_str("ELF header"),
            Self::ProgramHeaders => f.write_str("program header table"),
            Self::SectionHeaders => f.write_str("section header table"),
            Self::Segment(i) => write!(f, "segment {i}"),
            Self::Section(i) => write!(f, "section {i}"),
            Self::SymbolName(i) => write!(f, "name of symbol {i}"),
        }
    }
}

/// Why a code object was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CodeObjectError {
    /// A region the headers describe lies (partly) outside the file.
    OutOfBounds {
        /// What was being read.
        region: Region,
        /// Its file offset.
        offset: u64,
        /// Its size in bytes.
        size: u64,
        /// The file's length.
        file_len: u64,
    },
    /// `e_ident` does not start with `\x7fELF`.
    BadMagic {
        /// The first four bytes.
        magic: [u8; 4],
    },
    /// Not a 64-bit ELF (`EI_CLASS`).
    NotElf64 {
        /// The `EI_CLASS` byte.
        class: u8,
    },
    /// Not little endian (`EI_DATA`).
    NotLittleEndian {
        /// The `EI_DATA` byte.
        data: u8,
    },
    /// `e_machine` is not `EM_AMDGPU` (224).
    WrongMachine {
        /// The `e_machine` value.
        machine: u16,
    },
    /// `EI_OSABI` is not `ELFOSABI_AMDGPU_HSA` (64).
    WrongOsAbi {
        /// The `EI_OSABI` byte.
        os_abi: u8,
    },
    /// `EI_ABIVERSION` is not 1..=4 (code object v3..v6).
    UnsupportedAbiVersion {
        /// The `EI_ABIVERSION` byte.
        abi_version: u8,
    },
    /// `e_type` is not `ET_DYN` (a linked code object).
    NotSharedObject {
        /// The `e_type` value.
        e_type: u16,
    },
    /// A header's entry size is not the ELF64 one.
    BadEntrySize {
        /// Which header (`e_ehsize`, `e_phentsize`, `e_shentsize`, symbol table `sh_entsize`).
        field: &'static str,
        /// The value found.
        size: u64,
        /// The value ELF64 requires.
        expected: u64,
    },
    /// `e_flags` names a processor this module does not know.
    UnknownMach {
        /// `e_flags & EF_AMDGPU_MACH`.
        mach: u32,
        /// The whole `e_flags`.
        e_flags: u32,
    },
    /// The object was built for another processor than the device's.
    TargetMismatch {
        /// The object's processor.
        object: &'static str,
        /// The device's processor.
        device: Name,
    },
    /// The object requires an xnack mode the device is not in.
    XnackMismatch {
        /// The object's processor.
        object: &'static str,
        /// Whether the object wants xnack on.
        object_wants: bool,
    },
    /// A `PT_LOAD` segment has more file bytes than memory bytes.
    SegmentFileSizeExceedsMemSize {
        /// Program header index.
        index: u16,
        /// `p_filesz`.
        file_size: u64,
        /// `p_memsz`.
        mem_size: u64,
    },
    /// A `PT_LOAD` segment's address range wraps around or the image exceeds
    /// [`MAX_IMAGE_SIZE`].
    ImageTooLarge {
        /// Program header index of the offending segment.
        index: u16,
        /// `p_vaddr`.
        vaddr: u64,
        /// `p_memsz`.
        mem_size: u64,
    },
    /// Two `PT_LOAD` segments overlap in memory.
    SegmentsOverlap {
        /// Program header index of the first.
        first: u16,
        /// Program header index of the second.
        second: u16,
    },
    /// More than [`MAX_SEGMENTS`] `PT_LOAD` segments.
    TooManySegments {
        /// How many.
        count: usize,
    },
    /// No `PT_LOAD` segment: nothing to load.
    NoLoadSegments,
    /// A section's file bytes overlap the 64-byte ELF header.
    SectionOverlapsHeader {
        /// Section index.
        index: u16,
        /// `sh_offset`.
        offset: u64,
        /// `sh_size`.
        size: u64,
    },
    /// Neither `SHT_SYMTAB` nor `SHT_DYNSYM`: kernels cannot be found.
    NoSymbolTable,
    /// The symbol table's `sh_link` is not a string table.
    BadStringTable {
        /// The `sh_link` value.
        link: u32,
    },
    /// A symbol's name is not NUL-terminated UTF-8 inside the string table.
    BadSymbolName {
        /// Symbol index.
        index: u32,
        /// `st_name`.
        name_offset: u32,
    },
    /// A kernel descriptor is not (wholly) inside file-backed bytes of a `PT_LOAD` segment.
    DescriptorOutsideImage {
        /// Kernel name.
        kernel: Name,
        /// The `.kd` symbol's value.
        address: u64,
    },
    /// A kernel descriptor is not 64-byte aligned.
    DescriptorMisaligned {
        /// Kernel name.
        kernel: Name,
        /// The `.kd` symbol's value.
        address: u64,
    },
    /// `kernel_code_entry_byte_offset` does not land on a 256-byte boundary.
    EntryMisaligned {
        /// Kernel name.
        kernel: Name,
        /// `kernel_code_entry_byte_offset`.
        entry_byte_offset: i64,
    },
    /// `kernel_code_entry_byte_offset` does not land inside an executable segment.
    EntryOutsideCode {
        /// Kernel name.
        kernel: Name,
        /// `kernel_code_entry_byte_offset`.
        entry_byte_offset: i64,
    },
    /// RSRC2.USER_SGPR_COUNT is below what `kernel_code_properties` enable.
    UserSgprCountTooSmall {
        /// Kernel name.
        kernel: Name,
        /// RSRC2.USER_SGPR_COUNT.
        count: u32,
        /// User SGPRs the enabled inputs take.
        required: u32,
    },
    /// A wave32 kernel for a processor without wave32 (gfx9).
    Wave32Unsupported {
        /// Kernel name.
        kernel: Name,
        /// The processor.
        target: &'static str,
    },
    /// No `<name>.kd` symbol.
    KernelNotFound {
        /// The name asked for.
        name: Name,
    },
    /// The kernel's static LDS exceeds the device's.
    GroupSegmentTooLarge {
        /// Kernel name.
        kernel: Name,
        /// `group_segment_fixed_size` (bytes).
        size: u32,
        /// The device's LDS per work-group (bytes).
        limit: u32,
    },
    /// The kernel's scratch per work-item exceeds what the device provides.
    PrivateSegmentTooLarge {
        /// Kernel name.
        kernel: Name,
        /// `private_segment_fixed_size` (bytes per work-item).
        size: u32,
        /// The device's limit (bytes per work-item).
        limit: u32,
    },
    /// The `NT_AMDGPU_METADATA` note is malformed.
    Metadata(MetadataError),
    /// The metadata note has no entry for a kernel the symbol table has.
    MetadataMissing {
        /// Kernel name.
        kernel: Name,
    },
    /// The metadata and the kernel descriptor disagree.
    MetadataMismatch {
        /// Kernel name.
        kernel: Name,
        /// The field (`kernarg_segment_size`, ...).
        field: &'static str,
        /// What the metadata says.
        metadata: u64,
        /// What the kernel descriptor says.
        descriptor: u64,
    },
    /// The buffer given to [`CodeObject::load_into`] is shorter than the image.
    ImageBufferTooSmall {
        /// [`CodeObject::image_size`].
        need: u64,
        /// The buffer's length.
        have: usize,
    },
}

impl fmt::Display for CodeObjectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::OutOfBounds {
                region,
                offset,
                size,
                file_len,
            } => write!(
                f,
                "{region} at offset {offset:#x} size {size:#x} extends past the end of the file ({file_len:#x} bytes)"
            ),
            Self::BadMagic { magic } => write!(f, "not an ELF file: magic {magic:02x?}"),
            Self::NotElf64 { class } => {
                write!(f, "not a 64-bit ELF: EI_CLASS {class} (need 2, ELFCLASS64)")
            }
            Self::NotLittleEndian { data } => {
                write!(f, "not little endian: EI_DATA {data} (need 1, ELFDATA2LSB)")
            }
            Self::WrongMachine { machine } => {
                write!(
                    f,
                    "not an AMDGPU object: e_machine {machine} (need 224, EM_AMDGPU)"
                )
            }
            Self::WrongOsAbi { os_abi } => {
                write!(
                    f,
                    "not an HSA code object: EI_OSABI {os_abi} (need 64, AMDGPU_HSA)"
                )
            }
            Self::UnsupportedAbiVersion { abi_version } => write!(
                f,
                "unsupported code object ABI version {abi_version} (supported: 1..=4, code object v3..v6)"
            ),
            Self::NotSharedObject { e_type } => {
                write!(
                    f,
                    "not a linked code object: e_type {e_type} (need 3, ET_DYN)"
                )
            }
            Self::BadEntrySize {
                field,
                size,
                expected,
            } => {
                write!(f, "{field} is {size} (ELF64 needs {expected})")
            }
            Self::UnknownMach { mach, e_flags } => {
                write!(
                    f,
                    "unknown AMDGPU processor {mach:#x} in e_flags {e_flags:#x}"
                )
            }
            Self::TargetMismatch { object, device } => write!(
                f,
                "code object is built for {object}, the device is {device}"
            ),
            Self::XnackMismatch {
                object,
                object_wants,
            } => write!(
                f,
                "code object ({object}) requires xnack {}, the device has it {}",
                if *object_wants { "on" } else { "off" },
                if *object_wants { "off" } else { "on" }
            ),
            Self::SegmentFileSizeExceedsMemSize {
                index,
                file_size,
                mem_size,
            } => write!(
                f,
                "segment {index}: p_filesz {file_size:#x} exceeds p_memsz {mem_size:#x}"
            ),
            Self::ImageTooLarge {
                index,
                vaddr,
                mem_size,
            } => write!(
                f,
                "segment {index}: p_vaddr {vaddr:#x} + p_memsz {mem_size:#x} makes the image larger than {MAX_IMAGE_SIZE:#x} bytes"
            ),
            Self::SegmentsOverlap { first, second } => {
                write!(f, "segments {first} and {second} overlap in memory")
            }
            Self::TooManySegments { count } => {
                write!(f, "{count} PT_LOAD segments (at most {MAX_SEGMENTS})")
            }
            Self::NoLoadSegments => f.write_str("no PT_LOAD segment: nothing to load"),
            Self::SectionOverlapsHeader {
                index,
                offset,
                size,
            } => write!(
                f,
                "section {index} (offset {offset:#x}, size {size:#x}) overlaps the ELF header"
            ),
            Self::NoSymbolTable => f.write_str("no symbol table (SHT_SYMTAB or SHT_DYNSYM)"),
            Self::BadStringTable { link } => {
                write!(f, "symbol table's sh_link {link} is not a string table")
            }
            Self::BadSymbolName { index, name_offset } => write!(
                f,
                "symbol {index}: name at string-table offset {name_offset:#x} is not NUL-terminated UTF-8"
            ),
            Self::DescriptorOutsideImage { kernel, address } => write!(
                f,
                "kernel {kernel}: descriptor at {address:#x} is not inside the loaded file bytes"
            ),
            Self::DescriptorMisaligned { kernel, address } => write!(
                f,
                "kernel {kernel}: descriptor at {address:#x} is not {DESCRIPTOR_ALIGN}-byte aligned"
            ),
            Self::EntryMisaligned {
                kernel,
                entry_byte_offset,
            } => write!(
                f,
                "kernel {kernel}: entry point (descriptor {entry_byte_offset:+#x}) is not {ENTRY_ALIGN}-byte aligned"
            ),
            Self::EntryOutsideCode {
                kernel,
                entry_byte_offset,
            } => write!(
                f,
                "kernel {kernel}: entry point (descriptor {entry_byte_offset:+#x}) is outside the executable segment"
            ),
            Self::UserSgprCountTooSmall {
                kernel,
                count,
                required,
            } => write!(
                f,
                "kernel {kernel}: RSRC2.USER_SGPR_COUNT {count} is below the {required} user SGPRs kernel_code_properties enable"
            ),
            Self::Wave32Unsupported { kernel, target } => {
                write!(
                    f,
                    "kernel {kernel}: wave32 on {target}, which has only wave64"
                )
            }
            Self::KernelNotFound { name } => write!(f, "no kernel {name} (no symbol {name}.kd)"),
            Self::GroupSegmentTooLarge {
                kernel,
                size,
                limit,
            } => write!(
                f,
                "kernel {kernel}: group segment (LDS) {size} bytes exceeds the device's {limit}"
            ),
            Self::PrivateSegmentTooLarge {
                kernel,
                size,
                limit,
            } => write!(
                f,
                "kernel {kernel}: private segment {size} bytes per work-item exceeds the device's {limit}"
            ),
            Self::Metadata(e) => write!(f, "{e}"),
            Self::MetadataMissing { kernel } => write!(
                f,
                "kernel {kernel}: no entry in the NT_AMDGPU_METADATA note (symbol {kernel}.kd)"
            ),
            Self::MetadataMismatch {
                kernel,
                field,
                metadata,
                descriptor,
            } => write!(
                f,
                "kernel {kernel}: metadata {field} is {metadata}, the kernel descriptor says {descriptor}"
            ),
            Self::ImageBufferTooSmall { need, have } => {
                write!(
                    f,
                    "image buffer is {have} bytes, the code object needs {need}"
                )
            }
        }
    }
}

impl core::error::Error for CodeObjectError {}

/// One `PT_LOAD` segment: copy `file_range()` of the file to `image_offset`, then zero
/// `zero_fill()`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoadSegment {
    /// Program header index.
    pub index: u16,
    /// `p_offset` (bounds-checked: `file_offset + file_size <= file length`).
    pub file_offset: usize,
    /// `p_filesz`.
    pub file_size: usize,
    /// Where the segment starts in the GPU image (`p_vaddr - image base`).
    pub image_offset: u64,
    /// `p_memsz` (>= `file_size`).
    pub mem_size: u64,
    /// `PF_X`.
    pub executable: bool,
    /// `PF_W`.
    pub writable: bool,
}

impl LoadSegment {
    /// The file bytes to copy.
    #[must_use]
    pub const fn file_range(&self) -> Range<usize> {
        self.file_offset..self.file_offset.saturating_add(self.file_size)
    }

    /// The image bytes this segment covers.
    #[must_use]
    pub const fn image_range(&self) -> Range<u64> {
        self.image_offset..self.image_offset.saturating_add(self.mem_size)
    }

    /// (image offset, length) to zero after the copied bytes (`p_memsz - p_filesz`).
    #[must_use]
    pub const fn zero_fill(&self) -> (u64, u64) {
        // CAST: usize -> u64 is lossless on every supported target (<= 64-bit).
        let file = self.file_size as u64;
        (
            self.image_offset.saturating_add(file),
            self.mem_size.saturating_sub(file),
        )
    }
}

/// A device's resource limits, for [`Kernel::check_resources`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceLimits {
    /// LDS bytes per work-group (KFD `lds_size_in_kb * 1024`).
    pub lds_bytes: u32,
    /// Scratch bytes per work-item the runtime has set up.
    pub max_private_segment_bytes: u32,
}

/// One kernel: its `<name>.kd` descriptor and where it lives in the image.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Kernel<'a> {
    /// Kernel name (the symbol without `.kd`).
    pub name: &'a str,
    /// Offset of the 64-byte descriptor in the image (`kernel_object = base + this`).
    pub descriptor_offset: u64,
    /// Offset of the first instruction in the image (`descriptor_offset +
    /// kernel_code_entry_byte_offset`, 256-byte aligned).
    pub entry_offset: u64,
    /// The parsed descriptor.
    pub descriptor: KernelDescriptor,
    /// Whether the target is gfx9 (LDS granularity, RSRC3 meaning).
    pub wave64_only: bool,
    /// The kernel's entry of the `NT_AMDGPU_METADATA` note (checked against the descriptor),
    /// when the object has the note.
    pub metadata: Option<KernelMeta<'a>>,
}

impl Kernel<'_> {
    /// Static LDS bytes per work-group.
    #[must_use]
    pub const fn group_segment_size(&self) -> u32 {
        self.descriptor.group_segment_fixed_size
    }

    /// Static scratch bytes per work-item.
    #[must_use]
    pub const fn private_segment_size(&self) -> u32 {
        self.descriptor.private_segment_fixed_size
    }

    /// Kernarg segment bytes (explicit plus any hidden arguments).
    #[must_use]
    pub const fn kernarg_size(&self) -> u32 {
        self.descriptor.kernarg_size
    }

    /// `kernel_code_entry_byte_offset`.
    #[must_use]
    pub const fn entry_byte_offset(&self) -> i64 {
        self.descriptor.kernel_code_entry_byte_offset
    }

    /// The `kernel_code_properties` word.
    #[must_use]
    pub const fn properties(&self) -> KernelCodeProperties {
        self.descriptor.properties()
    }

    /// Whether the kernel reads the dispatch packet (ENABLE_SGPR_DISPATCH_PTR).
    #[must_use]
    pub fn uses_dispatch_ptr(&self) -> bool {
        self.properties()
            .get(KernelCodeProperties::ENABLE_SGPR_DISPATCH_PTR)
            != 0
    }

    /// Whether the kernel reads the queue pointer (ENABLE_SGPR_QUEUE_PTR).
    #[must_use]
    pub fn uses_queue_ptr(&self) -> bool {
        self.properties()
            .get(KernelCodeProperties::ENABLE_SGPR_QUEUE_PTR)
            != 0
    }

    /// 32 or 64.
    #[must_use]
    pub fn wavefront_size(&self) -> u32 {
        if self
            .properties()
            .get(KernelCodeProperties::ENABLE_WAVEFRONT_SIZE32)
            != 0
        {
            32
        } else {
            64
        }
    }

    /// RSRC2.USER_SGPR_COUNT: user SGPRs the hardware loads (may exceed
    /// [`Kernel::required_user_sgprs`]: LLVM 19 pads it to 15 on gfx11).
    #[must_use]
    pub fn user_sgpr_count(&self) -> u32 {
        self.descriptor
            .rsrc2()
            .get(crate::hsa::PgmRsrc2::USER_SGPR_COUNT)
    }

    /// User SGPRs the inputs enabled in `kernel_code_properties` take, in allocation order.
    #[must_use]
    pub const fn required_user_sgprs(&self) -> u32 {
        self.properties().user_sgpr_count()
    }

    /// RSRC2.LDS_SIZE for this kernel's static LDS: granules of [`LDS_GRANULE_BYTES`], rounded
    /// up (what the runtime ORs into RSRC2 at dispatch).
    #[must_use]
    pub const fn lds_granules(&self) -> u32 {
        self.group_segment_size().div_ceil(LDS_GRANULE_BYTES)
    }

    /// Compares the metadata with the descriptor where both say the same thing.
    fn check_metadata(&self, m: &KernelMeta<'_>) -> Result<(), CodeObjectError> {
        let d = &self.descriptor;
        let props = self.properties();
        let checks: [(&'static str, u64, u64); 5] = [
            (
                "kernarg_segment_size",
                m.kernarg_segment_size.into(),
                d.kernarg_size.into(),
            ),
            (
                "group_segment_fixed_size",
                m.group_segment_fixed_size.into(),
                d.group_segment_fixed_size.into(),
            ),
            (
                "private_segment_fixed_size",
                m.private_segment_fixed_size.into(),
                d.private_segment_fixed_size.into(),
            ),
            (
                "wavefront_size",
                m.wavefront_size.into(),
                self.wavefront_size().into(),
            ),
            (
                "uses_dynamic_stack",
                m.uses_dynamic_stack.map_or(
                    u64::from(props.get(KernelCodeProperties::USES_DYNAMIC_STACK)),
                    u64::from,
                ),
                props.get(KernelCodeProperties::USES_DYNAMIC_STACK).into(),
            ),
        ];
        for (field, metadata, descriptor) in checks {
            if metadata != descriptor {
                return Err(CodeObjectError::MetadataMismatch {
                    kernel: short_name(self.name),
                    field,
                    metadata,
                    descriptor,
                });
            }
        }
        Ok(())
    }

    /// Refuses a kernel whose static LDS or scratch exceed the device's `limits`.
    ///
    /// # Errors
    /// [`CodeObjectError::GroupSegmentTooLarge`], [`CodeObjectError::PrivateSegmentTooLarge`].
    pub fn check_resources(&self, limits: &DeviceLimits) -> Result<(), CodeObjectError> {
        let size = self.group_segment_size();
        if size > limits.lds_bytes || self.lds_granules() > MAX_LDS_GRANULES {
            return Err(CodeObjectError::GroupSegmentTooLarge {
                kernel: short_name(self.name),
                size,
                limit: limits.lds_bytes.min(MAX_LDS_GRANULES * LDS_GRANULE_BYTES),
            });
        }
        let size = self.private_segment_size();
        if size > limits.max_private_segment_bytes {
            return Err(CodeObjectError::PrivateSegmentTooLarge {
                kernel: short_name(self.name),
                size,
                limit: limits.max_private_segment_bytes,
            });
        }
        Ok(())
    }
}

/// A validated AMDGPU code object borrowing the file's bytes.
#[derive(Clone, Debug)]
pub struct CodeObject<'a> {
    data: &'a [u8],
    target: TargetId,
    segments: heapless::Vec<LoadSegment, MAX_SEGMENTS>,
    image_base: u64,
    image_size: u64,
    symbols: &'a [Sym64<LE>],
    strings: &'a [u8],
    metadata: Option<Metadata<'a>>,
    kernel_count: usize,
}

/// The symbol table, its string table and the metadata note's bytes (if any).
type Sections<'a> = (&'a [Sym64<LE>], &'a [u8], Option<&'a [u8]>);

fn len64(n: usize) -> u64 {
    // CAST: usize -> u64 is lossless on every supported target (<= 64-bit).
    n as u64
}

/// `data[offset..offset + size]`, or [`CodeObjectError::OutOfBounds`].
fn region(data: &[u8], region: Region, offset: u64, size: u64) -> Result<&[u8], CodeObjectError> {
    let oob = CodeObjectError::OutOfBounds {
        region,
        offset,
        size,
        file_len: len64(data.len()),
    };
    let end = offset.checked_add(size).ok_or_else(|| oob.clone())?;
    let start = usize::try_from(offset).map_err(|_| oob.clone())?;
    let end = usize::try_from(end).map_err(|_| oob.clone())?;
    data.get(start..end).ok_or(oob)
}

fn round_up(v: u64, align: u64) -> Option<u64> {
    v.checked_add(align - 1).map(|x| x & !(align - 1))
}

impl<'a> CodeObject<'a> {
    /// Validates `data` as an AMDGPU HSA code object (see the module docs for every check),
    /// including every kernel descriptor.
    ///
    /// # Errors
    /// The first problem found, as a [`CodeObjectError`] naming the offending value.
    pub fn parse(data: &'a [u8]) -> Result<Self, CodeObjectError> {
        let file_len = len64(data.len());
        // A short file that is not ELF at all says so, rather than "too short".
        if let Some(magic) = data.first_chunk::<4>().filter(|m| **m != ELFMAG) {
            return Err(CodeObjectError::BadMagic { magic: *magic });
        }
        let hdr_bytes = region(data, Region::ElfHeader, 0, 64)?;
        let (h, _) = pod::from_bytes::<FileHeader64<LE>>(hdr_bytes).map_err(|()| {
            CodeObjectError::OutOfBounds {
                region: Region::ElfHeader,
                offset: 0,
                size: 64,
                file_len,
            }
        })?;
        let id = &h.e_ident;
        if id.magic != ELFMAG {
            return Err(CodeObjectError::BadMagic { magic: id.magic });
        }
        if id.class != ELFCLASS64 {
            return Err(CodeObjectError::NotElf64 { class: id.class.0 });
        }
        if id.data != ELFDATA2LSB {
            return Err(CodeObjectError::NotLittleEndian { data: id.data.0 });
        }
        let machine = h.e_machine.get(LE);
        if machine != EM_AMDGPU {
            return Err(CodeObjectError::WrongMachine { machine: machine.0 });
        }
        if id.os_abi.0 != ELFOSABI_AMDGPU_HSA {
            return Err(CodeObjectError::WrongOsAbi {
                os_abi: id.os_abi.0,
            });
        }
        if !(ELFABIVERSION_AMDGPU_HSA_V3..=ELFABIVERSION_AMDGPU_HSA_V6).contains(&id.abi_version) {
            return Err(CodeObjectError::UnsupportedAbiVersion {
                abi_version: id.abi_version,
            });
        }
        let e_type = h.e_type.get(LE);
        if e_type != ET_DYN {
            return Err(CodeObjectError::NotSharedObject { e_type: e_type.0 });
        }
        let target = TargetId::from_flags(h.e_flags.get(LE).0, id.abi_version)?;
        let ehsize = h.e_ehsize.get(LE);
        if ehsize != 64 {
            return Err(CodeObjectError::BadEntrySize {
                field: "e_ehsize",
                size: ehsize.into(),
                expected: 64,
            });
        }

        let (segments, image_base, image_size) = Self::parse_segments(data, h)?;
        let (symbols, strings, note) = Self::parse_sections(data, h)?;
        let metadata = note
            .map(Metadata::parse)
            .transpose()
            .map_err(CodeObjectError::Metadata)?;
        let mut co = Self {
            data,
            target,
            segments,
            image_base,
            image_size,
            symbols,
            strings,
            metadata,
            kernel_count: 0,
        };
        let mut count = 0;
        for i in 0..co.symbols.len() {
            if co.kernel_at(i)?.is_some() {
                count += 1;
            }
        }
        co.kernel_count = count;
        Ok(co)
    }

    fn parse_segments(
        data: &'a [u8],
        h: &FileHeader64<LE>,
    ) -> Result<(heapless::Vec<LoadSegment, MAX_SEGMENTS>, u64, u64), CodeObjectError> {
        let phnum = h.e_phnum.get(LE);
        let phentsize = h.e_phentsize.get(LE);
        if phnum != 0 && usize::from(phentsize) != size_of::<ProgramHeader64<LE>>() {
            return Err(CodeObjectError::BadEntrySize {
                field: "e_phentsize",
                size: phentsize.into(),
                expected: 56,
            });
        }
        let phoff = h.e_phoff.get(LE);
        let table = region(data, Region::ProgramHeaders, phoff, u64::from(phnum) * 56)?;
        let (phdrs, _) = pod::slice_from_bytes::<ProgramHeader64<LE>>(table, phnum.into())
            .map_err(|()| CodeObjectError::OutOfBounds {
                region: Region::ProgramHeaders,
                offset: phoff,
                size: u64::from(phnum) * 56,
                file_len: len64(data.len()),
            })?;

        // First pass: bounds and the lowest address.
        let mut base = u64::MAX;
        let mut loads = 0usize;
        for (i, p) in phdrs.iter().enumerate() {
            if p.p_type.get(LE) != PT_LOAD {
                continue;
            }
            // PANIC-free: i < phnum <= u16::MAX.
            let index = u16::try_from(i).unwrap_or(u16::MAX);
            let (offset, filesz, vaddr, memsz) = (
                p.p_offset.get(LE),
                p.p_filesz.get(LE),
                p.p_vaddr.get(LE),
                p.p_memsz.get(LE),
            );
            region(data, Region::Segment(index), offset, filesz)?;
            if filesz > memsz {
                return Err(CodeObjectError::SegmentFileSizeExceedsMemSize {
                    index,
                    file_size: filesz,
                    mem_size: memsz,
                });
            }
            if memsz > MAX_IMAGE_SIZE || vaddr.checked_add(memsz).is_none() {
                return Err(CodeObjectError::ImageTooLarge {
                    index,
                    vaddr,
                    mem_size: memsz,
                });
            }
            base = base.min(vaddr);
            loads += 1;
        }
        if loads == 0 {
            return Err(CodeObjectError::NoLoadSegments);
        }
        if loads > MAX_SEGMENTS {
            return Err(CodeObjectError::TooManySegments { count: loads });
        }
        let base = base & !(IMAGE_PAGE - 1);

        let mut segments = heapless::Vec::new();
        let mut end = 0u64;
        for (i, p) in phdrs.iter().enumerate() {
            if p.p_type.get(LE) != PT_LOAD {
                continue;
            }
            let index = u16::try_from(i).unwrap_or(u16::MAX);
            let (vaddr, memsz) = (p.p_vaddr.get(LE), p.p_memsz.get(LE));
            // Checked in the first pass: vaddr >= base, vaddr + memsz does not overflow.
            let image_offset = vaddr.saturating_sub(base);
            let seg_end = image_offset.saturating_add(memsz);
            if seg_end > MAX_IMAGE_SIZE {
                return Err(CodeObjectError::ImageTooLarge {
                    index,
                    vaddr,
                    mem_size: memsz,
                });
            }
            end = end.max(seg_end);
            let flags = p.p_flags.get(LE).0;
            // Both fit: checked by `region` in the first pass.
            let seg = LoadSegment {
                index,
                file_offset: usize::try_from(p.p_offset.get(LE)).unwrap_or(0),
                file_size: usize::try_from(p.p_filesz.get(LE)).unwrap_or(0),
                image_offset,
                mem_size: memsz,
                executable: flags & PF_X.0 != 0,
                writable: flags & PF_W.0 != 0,
            };
            for other in &segments {
                let o: &LoadSegment = other;
                let (a, b) = (o.image_range(), seg.image_range());
                if a.start < b.end && b.start < a.end {
                    return Err(CodeObjectError::SegmentsOverlap {
                        first: o.index,
                        second: index,
                    });
                }
            }
            // Capacity checked above (loads <= MAX_SEGMENTS).
            segments
                .push(seg)
                .map_err(|_| CodeObjectError::TooManySegments { count: loads })?;
        }
        if segments.iter().all(|s: &LoadSegment| s.mem_size == 0) {
            // Only empty PT_LOADs: nothing to load either.
            return Err(CodeObjectError::NoLoadSegments);
        }
        let size = round_up(end, IMAGE_PAGE).unwrap_or(u64::MAX);
        Ok((segments, base, size))
    }

    fn parse_sections(
        data: &'a [u8],
        h: &FileHeader64<LE>,
    ) -> Result<Sections<'a>, CodeObjectError> {
        let shnum = h.e_shnum.get(LE);
        let shentsize = h.e_shentsize.get(LE);
        if shnum != 0 && usize::from(shentsize) != size_of::<SectionHeader64<LE>>() {
            return Err(CodeObjectError::BadEntrySize {
                field: "e_shentsize",
                size: shentsize.into(),
                expected: 64,
            });
        }
        let shoff = h.e_shoff.get(LE);
        let table = region(data, Region::SectionHeaders, shoff, u64::from(shnum) * 64)?;
        let (shdrs, _) = pod::slice_from_bytes::<SectionHeader64<LE>>(table, shnum.into())
            .map_err(|()| CodeObjectError::OutOfBounds {
                region: Region::SectionHeaders,
                offset: shoff,
                size: u64::from(shnum) * 64,
                file_len: len64(data.len()),
            })?;
        for (i, s) in shdrs.iter().enumerate() {
            let ty = s.sh_type.get(LE);
            if ty == SHT_NULL || ty == SHT_NOBITS {
                continue;
            }
            let index = u16::try_from(i).unwrap_or(u16::MAX);
            let (offset, size) = (s.sh_offset.get(LE), s.sh_size.get(LE));
            region(data, Region::Section(index), offset, size)?;
            if size != 0 && offset < 64 {
                return Err(CodeObjectError::SectionOverlapsHeader {
                    index,
                    offset,
                    size,
                });
            }
        }
        let find = |want| {
            shdrs
                .iter()
                .enumerate()
                .find(|(_, s)| s.sh_type.get(LE) == want)
        };
        let mut note = None;
        for (i, sh) in shdrs.iter().enumerate() {
            if sh.sh_type.get(LE) != SHT_NOTE || note.is_some() {
                continue;
            }
            let index = u16::try_from(i).unwrap_or(u16::MAX);
            let bytes = region(
                data,
                Region::Section(index),
                sh.sh_offset.get(LE),
                sh.sh_size.get(LE),
            )?;
            note = crate::metadata::find_note(bytes).map_err(CodeObjectError::Metadata)?;
        }
        let (sym_index, symtab) = find(SHT_SYMTAB)
            .or_else(|| find(SHT_DYNSYM))
            .ok_or(CodeObjectError::NoSymbolTable)?;
        let entsize = symtab.sh_entsize.get(LE);
        if entsize != 24 {
            return Err(CodeObjectError::BadEntrySize {
                field: "symbol table sh_entsize",
                size: entsize,
                expected: 24,
            });
        }
        let sym_index = u16::try_from(sym_index).unwrap_or(u16::MAX);
        let (offset, size) = (symtab.sh_offset.get(LE), symtab.sh_size.get(LE));
        let bytes = region(data, Region::Section(sym_index), offset, size)?;
        let count = bytes.len() / 24;
        let (symbols, _) = pod::slice_from_bytes::<Sym64<LE>>(bytes, count).map_err(|()| {
            CodeObjectError::OutOfBounds {
                region: Region::Section(sym_index),
                offset,
                size,
                file_len: len64(data.len()),
            }
        })?;
        let link = symtab.sh_link.get(LE);
        let strtab = usize::try_from(link)
            .ok()
            .and_then(|l| shdrs.get(l))
            .filter(|s| s.sh_type.get(LE) == SHT_STRTAB)
            .ok_or(CodeObjectError::BadStringTable { link })?;
        let str_index = u16::try_from(link).unwrap_or(u16::MAX);
        let strings = region(
            data,
            Region::Section(str_index),
            strtab.sh_offset.get(LE),
            strtab.sh_size.get(LE),
        )?;
        Ok((symbols, strings, note))
    }

    /// The parsed `NT_AMDGPU_METADATA` note, when the object has one.
    #[must_use]
    pub const fn metadata(&self) -> Option<Metadata<'a>> {
        self.metadata
    }

    /// The file's bytes.
    #[must_use]
    pub const fn data(&self) -> &'a [u8] {
        self.data
    }

    /// What the object was built for.
    #[must_use]
    pub const fn target(&self) -> TargetId {
        self.target
    }

    /// Refuses an object built for another processor than `device` (`gfx1100`; a generic
    /// object runs on its family's members). xnack/sramecc are not compared: see
    /// [`CodeObject::check_xnack`].
    ///
    /// # Errors
    /// [`CodeObjectError::TargetMismatch`] naming both processors.
    pub fn check_target(&self, device: &str) -> Result<(), CodeObjectError> {
        if self.target.mach.runs_on(device) {
            Ok(())
        } else {
            Err(CodeObjectError::TargetMismatch {
                object: self.target.mach.name,
                device: short_name(device),
            })
        }
    }

    /// [`CodeObject::check_target`] for a device's [`GfxTarget`](crate::arch::GfxTarget).
    ///
    /// # Errors
    /// [`CodeObjectError::TargetMismatch`] naming both processors.
    pub fn check_device(&self, device: crate::arch::GfxTarget) -> Result<(), CodeObjectError> {
        let mut name = Name::new();
        // A GfxTarget prints as at most "gfx" + 2 + 2 digits: always fits in 64 bytes.
        let _ = fmt::write(&mut name, format_args!("{device}"));
        self.check_target(&name)
    }

    /// Refuses an object that requires xnack on (off) on a device with it off (on).
    ///
    /// # Errors
    /// [`CodeObjectError::XnackMismatch`].
    pub fn check_xnack(&self, device_xnack_enabled: bool) -> Result<(), CodeObjectError> {
        let wants = match self.target.xnack {
            FeatureSetting::On => true,
            FeatureSetting::Off => false,
            FeatureSetting::Any | FeatureSetting::Unsupported => return Ok(()),
        };
        if wants == device_xnack_enabled {
            Ok(())
        } else {
            Err(CodeObjectError::XnackMismatch {
                object: self.target.mach.name,
                object_wants: wants,
            })
        }
    }

    /// The loading plan: every `PT_LOAD` segment, in program-header order.
    #[must_use]
    pub fn segments(&self) -> &[LoadSegment] {
        &self.segments
    }

    /// GPU bytes to allocate: the highest segment end, rounded up to 4 KiB.
    #[must_use]
    pub const fn image_size(&self) -> u64 {
        self.image_size
    }

    /// The lowest `PT_LOAD` address rounded down to a page; image offset = address - base.
    #[must_use]
    pub const fn image_base(&self) -> u64 {
        self.image_base
    }

    /// Writes the image into `dst[..image_size]`: zeroes, then copies each segment's file
    /// bytes (the zero fill comes from the zeroing). `dst` may be longer.
    ///
    /// # Errors
    /// [`CodeObjectError::ImageBufferTooSmall`].
    pub fn load_into(&self, dst: &mut [u8]) -> Result<(), CodeObjectError> {
        let too_small = || CodeObjectError::ImageBufferTooSmall {
            need: self.image_size,
            have: dst.len(),
        };
        let size = usize::try_from(self.image_size).map_err(|_| too_small())?;
        let err = too_small();
        let image = dst.get_mut(..size).ok_or(err)?;
        image.fill(0);
        for seg in &self.segments {
            // Both ranges were checked at parse time: file range inside the file, image
            // range inside image_size.
            let (Some(src), Ok(start)) = (
                self.data.get(seg.file_range()),
                usize::try_from(seg.image_offset),
            ) else {
                continue;
            };
            if let Some(d) = start
                .checked_add(src.len())
                .and_then(|end| image.get_mut(start..end))
            {
                d.copy_from_slice(src);
            }
        }
        Ok(())
    }

    /// How many kernels the object has.
    #[must_use]
    pub const fn kernel_count(&self) -> usize {
        self.kernel_count
    }

    /// Every kernel, in symbol-table order (all validated by [`CodeObject::parse`]).
    pub fn kernels(&self) -> impl Iterator<Item = Kernel<'a>> + '_ {
        (0..self.symbols.len()).filter_map(|i| self.kernel_at(i).ok().flatten())
    }

    /// The kernel called `name`.
    ///
    /// # Errors
    /// [`CodeObjectError::KernelNotFound`].
    pub fn kernel(&self, name: &str) -> Result<Kernel<'a>, CodeObjectError> {
        self.kernels()
            .find(|k| k.name == name)
            .ok_or_else(|| CodeObjectError::KernelNotFound {
                name: short_name(name),
            })
    }

    fn symbol_name(&self, index: usize, sym: &Sym64<LE>) -> Result<&'a str, CodeObjectError> {
        let name_offset = sym.st_name.get(LE);
        let err = || CodeObjectError::BadSymbolName {
            index: u32::try_from(index).unwrap_or(u32::MAX),
            name_offset,
        };
        let start = usize::try_from(name_offset).map_err(|_| err())?;
        let tail = self.strings.get(start..).ok_or_else(err)?;
        let len = tail.iter().position(|&b| b == 0).ok_or_else(err)?;
        let bytes = tail.get(..len).ok_or_else(err)?;
        core::str::from_utf8(bytes).map_err(|_| err())
    }

    /// The segment whose file-backed bytes hold `[addr, addr + len)`, and the file slice.
    fn file_bytes_at(&self, addr: u64, len: u64) -> Option<(&LoadSegment, &'a [u8])> {
        let off = addr.checked_sub(self.image_base)?;
        let end = off.checked_add(len)?;
        self.segments.iter().find_map(|s| {
            let file_end = s.image_offset.checked_add(len64(s.file_size))?;
            if off < s.image_offset || end > file_end {
                return None;
            }
            let start = s
                .file_offset
                .checked_add(usize::try_from(off - s.image_offset).ok()?)?;
            let bytes = self
                .data
                .get(start..start.checked_add(usize::try_from(len).ok()?)?)?;
            Some((s, bytes))
        })
    }

    /// Symbol `index` as a kernel if it is a defined `<name>.kd`.
    fn kernel_at(&self, index: usize) -> Result<Option<Kernel<'a>>, CodeObjectError> {
        let Some(sym) = self.symbols.get(index) else {
            return Ok(None);
        };
        if sym.st_shndx.get(LE) == SHN_UNDEF {
            return Ok(None);
        }
        let full = self.symbol_name(index, sym)?;
        let Some(name) = full.strip_suffix(".kd").filter(|n| !n.is_empty()) else {
            return Ok(None);
        };
        let address = sym.st_value.get(LE);
        if address % DESCRIPTOR_ALIGN != 0 {
            return Err(CodeObjectError::DescriptorMisaligned {
                kernel: short_name(name),
                address,
            });
        }
        let outside = || CodeObjectError::DescriptorOutsideImage {
            kernel: short_name(name),
            address,
        };
        let (_, bytes) = self
            .file_bytes_at(address, len64(KernelDescriptor::SIZE))
            .ok_or_else(outside)?;
        let descriptor = KernelDescriptor::read(bytes).ok_or_else(outside)?;
        // file_bytes_at found it, so address >= image_base.
        let descriptor_offset = address.saturating_sub(self.image_base);

        let entry_byte_offset = descriptor.kernel_code_entry_byte_offset;
        let entry = descriptor_offset.checked_add_signed(entry_byte_offset);
        let Some(entry_offset) = entry else {
            return Err(CodeObjectError::EntryOutsideCode {
                kernel: short_name(name),
                entry_byte_offset,
            });
        };
        if (self.image_base.wrapping_add(entry_offset)) % ENTRY_ALIGN != 0 {
            return Err(CodeObjectError::EntryMisaligned {
                kernel: short_name(name),
                entry_byte_offset,
            });
        }
        let in_code = self.segments.iter().any(|s| {
            s.executable
                && entry_offset >= s.image_offset
                && entry_offset < s.image_offset.saturating_add(len64(s.file_size))
        });
        if !in_code {
            return Err(CodeObjectError::EntryOutsideCode {
                kernel: short_name(name),
                entry_byte_offset,
            });
        }
        let metadata = match &self.metadata {
            None => None,
            Some(md) => {
                Some(
                    md.by_symbol(full)
                        .ok_or_else(|| CodeObjectError::MetadataMissing {
                            kernel: short_name(name),
                        })?,
                )
            }
        };
        let kernel = Kernel {
            name,
            descriptor_offset,
            entry_offset,
            descriptor,
            wave64_only: self.target.mach.is_gfx9(),
            metadata,
        };
        if kernel.wave64_only && kernel.wavefront_size() == 32 {
            return Err(CodeObjectError::Wave32Unsupported {
                kernel: short_name(name),
                target: self.target.mach.name,
            });
        }
        if kernel.user_sgpr_count() < kernel.required_user_sgprs() {
            return Err(CodeObjectError::UserSgprCountTooSmall {
                kernel: short_name(name),
                count: kernel.user_sgpr_count(),
                required: kernel.required_user_sgprs(),
            });
        }
        if let Some(m) = &metadata {
            kernel.check_metadata(m)?;
        }
        Ok(Some(kernel))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mach_table_is_unique() {
        for (i, a) in MACH_TARGETS.iter().enumerate() {
            for b in &MACH_TARGETS[i + 1..] {
                assert_ne!(a.mach, b.mach, "{} and {}", a.name, b.name);
                assert_ne!(a.name, b.name);
            }
        }
        assert_eq!(MachTarget::from_name("gfx1100").map(|t| t.mach), Some(0x41));
        assert_eq!(MachTarget::from_mach(0x3f).map(|t| t.name), Some("gfx90a"));
    }

    #[test]
    fn generic_targets_run_on_members_only() {
        let g = MachTarget::from_name("gfx11-generic").unwrap();
        assert!(g.runs_on("gfx1100"));
        assert!(g.runs_on("gfx1151"));
        assert!(!g.runs_on("gfx1030"));
        let t = MachTarget::from_name("gfx90a").unwrap();
        assert!(t.runs_on("gfx90a"));
        assert!(!t.runs_on("gfx942"));
    }

    #[test]
    fn target_id_decodes_feature_bits() {
        let t = TargetId::from_flags(0x53f, ELFABIVERSION_AMDGPU_HSA_V5).unwrap();
        assert_eq!(t.mach.name, "gfx90a");
        assert_eq!(t.xnack, FeatureSetting::Any);
        assert_eq!(t.sramecc, FeatureSetting::Any);
        let t = TargetId::from_flags(0x0e3f, ELFABIVERSION_AMDGPU_HSA_V4).unwrap();
        assert_eq!(t.xnack, FeatureSetting::Off);
        assert_eq!(t.sramecc, FeatureSetting::On);
        let mut s = heapless::String::<32>::new();
        core::fmt::write(&mut s, format_args!("{t}")).unwrap();
        assert_eq!(s.as_str(), "gfx90a:sramecc+:xnack-");
        let t = TargetId::from_flags(0x0100_0054, ELFABIVERSION_AMDGPU_HSA_V6).unwrap();
        assert_eq!(
            (t.mach.name, t.generic_version, t.code_object_version()),
            ("gfx11-generic", 1, 6)
        );
        assert_eq!(
            TargetId::from_flags(0x7a, 3),
            Err(CodeObjectError::UnknownMach {
                mach: 0x7a,
                e_flags: 0x7a
            })
        );
    }

    #[test]
    fn empty_and_short_inputs_are_out_of_bounds() {
        let mut data = [0u8; 64];
        data[..4].copy_from_slice(&ELFMAG);
        for n in [0usize, 1, 4, 63] {
            assert!(matches!(
                CodeObject::parse(&data[..n]),
                Err(CodeObjectError::OutOfBounds {
                    region: Region::ElfHeader,
                    ..
                })
            ));
        }
    }
}
