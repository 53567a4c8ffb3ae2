//! Why a code object is refused.

use super::*;

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
