//! Parsing and validating the ELF file.

use super::*;

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
        let size = u64::from(phnum) * 56;
        let table = region(data, Region::ProgramHeaders, phoff, size)?;
        // `table` holds exactly phnum headers of 56 bytes, which have alignment 1.
        let (phdrs, _) = pod::slice_from_bytes::<ProgramHeader64<LE>>(table, phnum.into())
            .map_err(|()| CodeObjectError::OutOfBounds {
                region: Region::ProgramHeaders,
                offset: phoff,
                size,
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
        let size = u64::from(shnum) * 64;
        let table = region(data, Region::SectionHeaders, shoff, size)?;
        // `table` holds exactly shnum headers of 64 bytes, which have alignment 1.
        let (shdrs, _) = pod::slice_from_bytes::<SectionHeader64<LE>>(table, shnum.into())
            .map_err(|()| CodeObjectError::OutOfBounds {
                region: Region::SectionHeaders,
                offset: shoff,
                size,
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
