//! Corrupted variants of a real code object (clang-19's `vector_add` for gfx1100, and one for
//! gfx90a): each is refused with the expected error, and nothing panics.

use hcq_core::codeobj::{
    CodeObject, CodeObjectError as E, DeviceLimits, FeatureSetting, MAX_IMAGE_SIZE, MAX_SEGMENTS,
    Region,
};
use std::path::PathBuf;

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/kernels")
            .join(name),
    )
    .unwrap()
}

fn base() -> Vec<u8> {
    fixture("vector_add-gfx1100.co")
}

fn rd16(d: &[u8], at: usize) -> u16 {
    u16::from_le_bytes(d[at..at + 2].try_into().unwrap())
}
fn rd32(d: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(d[at..at + 4].try_into().unwrap())
}
fn rd64(d: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(d[at..at + 8].try_into().unwrap())
}
fn wr16(d: &mut [u8], at: usize, v: u16) {
    d[at..at + 2].copy_from_slice(&v.to_le_bytes());
}
fn wr32(d: &mut [u8], at: usize, v: u32) {
    d[at..at + 4].copy_from_slice(&v.to_le_bytes());
}
fn wr64(d: &mut [u8], at: usize, v: u64) {
    d[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

/// File offset of program header `i`.
fn ph(d: &[u8], i: usize) -> usize {
    rd64(d, 0x20) as usize + i * 56
}
/// File offset of section header `i`.
fn sh(d: &[u8], i: usize) -> usize {
    rd64(d, 0x28) as usize + i * 64
}
fn shnum(d: &[u8]) -> usize {
    rd16(d, 0x3c).into()
}
/// Index of the first section of type `ty`.
fn section_of_type(d: &[u8], ty: u32) -> usize {
    (0..shnum(d))
        .find(|&i| rd32(d, sh(d, i) + 4) == ty)
        .unwrap()
}
/// (file offset of the symbol entry, its index) of `name` in SHT_SYMTAB.
fn symbol(d: &[u8], name: &str) -> (usize, usize) {
    let st = section_of_type(d, 2);
    let (off, size) = (
        rd64(d, sh(d, st) + 24) as usize,
        rd64(d, sh(d, st) + 32) as usize,
    );
    let strtab = rd32(d, sh(d, st) + 40) as usize;
    let str_off = rd64(d, sh(d, strtab) + 24) as usize;
    for i in 0..size / 24 {
        let e = off + i * 24;
        let n = str_off + rd32(d, e) as usize;
        let end = n + d[n..].iter().position(|&b| b == 0).unwrap();
        if &d[n..end] == name.as_bytes() {
            return (e, i);
        }
    }
    panic!("no symbol {name}");
}
/// Program header index of the first PT_LOAD with PF_X, and of the writable one.
fn load_indices(d: &[u8]) -> Vec<usize> {
    (0..rd16(d, 0x38) as usize)
        .filter(|&i| rd32(d, ph(d, i)) == 1)
        .collect()
}

const KD: usize = 0x600; // vector_add.kd: vaddr 0x600 in segment 1 (offset 0, vaddr 0)

fn parse(d: &[u8]) -> Result<(), E> {
    CodeObject::parse(d).map(|_| ())
}

fn name(s: &str) -> hcq_core::codeobj::Name {
    s.try_into().unwrap()
}

#[test]
fn base_fixture_layout_is_what_the_table_assumes() {
    let d = base();
    assert!(parse(&d).is_ok());
    assert_eq!(symbol(&d, "vector_add.kd").0, symbol(&d, "vector_add.kd").0);
    assert_eq!(rd64(&d, symbol(&d, "vector_add.kd").0 + 8), KD as u64);
    assert_eq!(load_indices(&d), [1, 2, 3]);
    assert_eq!(
        (rd64(&d, ph(&d, 1) + 8), rd64(&d, ph(&d, 1) + 16)),
        (0, 0),
        "segment 1 at 0"
    );
    assert_eq!(rd64(&d, KD + 16), 0x1100, "entry byte offset");
}

#[test]
#[cfg_attr(
    miri,
    ignore = "thousands of parses: minutes under miri; the prefix logic runs in the other tests"
)]
fn every_prefix_is_refused_as_out_of_bounds() {
    let d = base();
    let ph_end = ph(&d, rd16(&d, 0x38).into());
    for n in 0..d.len() {
        let got = parse(&d[..n]);
        let region = match got {
            Err(E::OutOfBounds {
                region, file_len, ..
            }) => {
                assert_eq!(file_len, n as u64);
                region
            }
            other => panic!("prefix {n}: {other:?}"),
        };
        // The header region exactly.
        if n < 64 {
            assert_eq!(region, Region::ElfHeader, "prefix {n}");
        } else if n < ph_end {
            assert_eq!(region, Region::ProgramHeaders, "prefix {n}");
        }
    }
    assert!(parse(&d).is_ok());
}

#[test]
fn corrupted_headers_give_the_expected_error() {
    type Patch = fn(&mut Vec<u8>);
    let cases: &[(&str, Patch, E)] = &[
        (
            "bad magic",
            |d| d[1] = b'X',
            E::BadMagic {
                magic: [0x7f, b'X', b'L', b'F'],
            },
        ),
        ("ELF32 class", |d| d[4] = 1, E::NotElf64 { class: 1 }),
        ("big endian", |d| d[5] = 2, E::NotLittleEndian { data: 2 }),
        (
            "x86-64 machine",
            |d| wr16(d, 18, 62),
            E::WrongMachine { machine: 62 },
        ),
        ("SysV OS ABI", |d| d[7] = 0, E::WrongOsAbi { os_abi: 0 }),
        (
            "ABI version 0",
            |d| d[8] = 0,
            E::UnsupportedAbiVersion { abi_version: 0 },
        ),
        (
            "ABI version 5",
            |d| d[8] = 5,
            E::UnsupportedAbiVersion { abi_version: 5 },
        ),
        (
            "relocatable",
            |d| wr16(d, 16, 1),
            E::NotSharedObject { e_type: 1 },
        ),
        (
            "unknown mach",
            |d| wr32(d, 48, 0x7f),
            E::UnknownMach {
                mach: 0x7f,
                e_flags: 0x7f,
            },
        ),
        (
            "e_ehsize 52",
            |d| wr16(d, 52, 52),
            E::BadEntrySize {
                field: "e_ehsize",
                size: 52,
                expected: 64,
            },
        ),
        (
            "e_phentsize 32",
            |d| wr16(d, 54, 32),
            E::BadEntrySize {
                field: "e_phentsize",
                size: 32,
                expected: 56,
            },
        ),
        (
            "e_shentsize 40",
            |d| wr16(d, 58, 40),
            E::BadEntrySize {
                field: "e_shentsize",
                size: 40,
                expected: 64,
            },
        ),
        (
            "e_phoff near u64::MAX",
            |d| wr64(d, 32, u64::MAX - 10),
            E::OutOfBounds {
                region: Region::ProgramHeaders,
                offset: u64::MAX - 10,
                size: 8 * 56,
                file_len: 3800,
            },
        ),
        (
            "e_phnum 0xffff",
            |d| wr16(d, 56, 0xffff),
            E::OutOfBounds {
                region: Region::ProgramHeaders,
                offset: 64,
                size: 0xffff * 56,
                file_len: 3800,
            },
        ),
        (
            "e_shoff past the end",
            |d| wr64(d, 40, 3800),
            E::OutOfBounds {
                region: Region::SectionHeaders,
                offset: 3800,
                size: 14 * 64,
                file_len: 3800,
            },
        ),
        (
            "segment filesz huge",
            |d| {
                let p = ph(d, 1);
                wr64(d, p + 32, 1 << 40);
            },
            E::OutOfBounds {
                region: Region::Segment(1),
                offset: 0,
                size: 1 << 40,
                file_len: 3800,
            },
        ),
        (
            "segment offset wraps",
            |d| {
                let p = ph(d, 2);
                wr64(d, p + 8, u64::MAX);
            },
            E::OutOfBounds {
                region: Region::Segment(2),
                offset: u64::MAX,
                size: 0x280,
                file_len: 3800,
            },
        ),
        (
            "segment memsz below filesz",
            |d| {
                let p = ph(d, 2);
                wr64(d, p + 40, 0x10);
            },
            E::SegmentFileSizeExceedsMemSize {
                index: 2,
                file_size: 0x280,
                mem_size: 0x10,
            },
        ),
        (
            "segment memsz huge",
            |d| {
                let p = ph(d, 3);
                wr64(d, p + 40, 1 << 40);
            },
            E::ImageTooLarge {
                index: 3,
                vaddr: 0x2980,
                mem_size: 1 << 40,
            },
        ),
        (
            "segment vaddr wraps",
            |d| {
                let p = ph(d, 3);
                wr64(d, p + 16, u64::MAX - 4);
            },
            E::ImageTooLarge {
                index: 3,
                vaddr: u64::MAX - 4,
                mem_size: 0x680,
            },
        ),
        (
            "segment vaddr far away",
            |d| {
                let p = ph(d, 3);
                wr64(d, p + 16, 1 << 40);
            },
            E::ImageTooLarge {
                index: 3,
                vaddr: 1 << 40,
                mem_size: 0x680,
            },
        ),
        (
            "segments overlap",
            |d| {
                let p = ph(d, 2);
                wr64(d, p + 16, 0x600);
            },
            E::SegmentsOverlap {
                first: 1,
                second: 2,
            },
        ),
        (
            "no PT_LOAD",
            |d| {
                for i in load_indices(d) {
                    let p = ph(d, i);
                    wr32(d, p, 0);
                }
            },
            E::NoLoadSegments,
        ),
        (
            "only empty PT_LOADs",
            |d| {
                for i in load_indices(d) {
                    let p = ph(d, i);
                    wr64(d, p + 32, 0);
                    wr64(d, p + 40, 0);
                }
            },
            E::NoLoadSegments,
        ),
        (
            "section overlapping the header",
            |d| {
                let s = sh(d, 1);
                wr64(d, s + 24, 0x10);
            },
            E::SectionOverlapsHeader {
                index: 1,
                offset: 0x10,
                size: 0x330,
            },
        ),
        (
            "section size huge",
            |d| {
                let s = sh(d, 6);
                wr64(d, s + 32, u64::MAX);
            },
            E::OutOfBounds {
                region: Region::Section(6),
                offset: 0x600,
                size: u64::MAX,
                file_len: 3800,
            },
        ),
        (
            "no symbol table",
            |d| {
                for ty in [2, 11] {
                    let i = section_of_type(d, ty);
                    let s = sh(d, i);
                    wr32(d, s + 4, 1);
                }
            },
            E::NoSymbolTable,
        ),
        (
            "symtab sh_link out of range",
            |d| {
                let s = sh(d, section_of_type(d, 2));
                wr32(d, s + 40, 99);
            },
            E::BadStringTable { link: 99 },
        ),
        (
            "symtab sh_link to a non-string table",
            |d| {
                let s = sh(d, section_of_type(d, 2));
                wr32(d, s + 40, 7);
            },
            E::BadStringTable { link: 7 },
        ),
        (
            "symtab entsize 16",
            |d| {
                let s = sh(d, section_of_type(d, 2));
                wr64(d, s + 56, 16);
            },
            E::BadEntrySize {
                field: "symbol table sh_entsize",
                size: 16,
                expected: 24,
            },
        ),
        (
            "symbol name outside the string table",
            |d| {
                let (e, _) = symbol(d, "vector_add.kd");
                wr32(d, e, 0xffff_ff00);
            },
            E::BadSymbolName {
                index: 4,
                name_offset: 0xffff_ff00,
            },
        ),
        (
            "kd symbol pointing outside the file",
            |d| {
                let (e, _) = symbol(d, "vector_add.kd");
                wr64(d, e + 8, 0x10_0000);
            },
            E::DescriptorOutsideImage {
                kernel: name("vector_add"),
                address: 0x10_0000,
            },
        ),
        (
            "kd symbol near u64::MAX",
            |d| {
                let (e, _) = symbol(d, "vector_add.kd");
                wr64(d, e + 8, u64::MAX - 63);
            },
            E::DescriptorOutsideImage {
                kernel: name("vector_add"),
                address: u64::MAX - 63,
            },
        ),
        (
            "kd symbol in the zero-filled part",
            |d| {
                let (e, _) = symbol(d, "vector_add.kd");
                wr64(d, e + 8, 0x2a00);
            },
            E::DescriptorOutsideImage {
                kernel: name("vector_add"),
                address: 0x2a00,
            },
        ),
        (
            "kd symbol straddling the end of a segment",
            |d| {
                let (e, _) = symbol(d, "vector_add.kd");
                wr64(d, e + 8, 0x640); // segment 1's file bytes end at 0x644
            },
            E::DescriptorOutsideImage {
                kernel: name("vector_add"),
                address: 0x640,
            },
        ),
        (
            "kd symbol misaligned",
            |d| {
                let (e, _) = symbol(d, "vector_add.kd");
                wr64(d, e + 8, 0x604);
            },
            E::DescriptorMisaligned {
                kernel: name("vector_add"),
                address: 0x604,
            },
        ),
        (
            "entry not 256-aligned",
            |d| wr64(d, KD + 16, 0x1104),
            E::EntryMisaligned {
                kernel: name("vector_add"),
                entry_byte_offset: 0x1104,
            },
        ),
        (
            "entry outside the image",
            |d| wr64(d, KD + 16, 0x10_0000),
            E::EntryOutsideCode {
                kernel: name("vector_add"),
                entry_byte_offset: 0x10_0000,
            },
        ),
        (
            "entry i64::MIN",
            |d| wr64(d, KD + 16, i64::MIN as u64),
            E::EntryOutsideCode {
                kernel: name("vector_add"),
                entry_byte_offset: i64::MIN,
            },
        ),
        (
            "entry in a non-executable segment",
            |d| wr64(d, KD + 16, (-0x600i64) as u64),
            E::EntryOutsideCode {
                kernel: name("vector_add"),
                entry_byte_offset: -0x600,
            },
        ),
        (
            "entry exactly at the end of the code's file bytes",
            |d| {
                let p = ph(d, 2);
                wr64(d, p + 32, 0); // the text segment keeps its memsz, loses its file bytes
            },
            E::EntryOutsideCode {
                kernel: name("vector_add"),
                entry_byte_offset: 0x1100,
            },
        ),
        (
            "the second of two bad segments is not reached",
            |d| {
                let (p2, p3) = (ph(d, 2), ph(d, 3));
                wr64(d, p2 + 40, 1 << 40);
                wr64(d, p3 + 40, 0x10); // below its filesz: would be SegmentFileSizeExceedsMemSize
            },
            E::ImageTooLarge {
                index: 2,
                vaddr: 0x1700,
                mem_size: 1 << 40,
            },
        ),
        (
            "a wrapping segment stops the scan",
            |d| {
                let (p2, p3) = (ph(d, 2), ph(d, 3));
                wr64(d, p2 + 16, u64::MAX - 4);
                wr64(d, p3 + 40, 0x10);
            },
            E::ImageTooLarge {
                index: 2,
                vaddr: u64::MAX - 4,
                mem_size: 0x280,
            },
        ),
        (
            "a segment of exactly the largest image, at 0, overlapping the next",
            |d| {
                let p = ph(d, 1);
                wr64(d, p + 40, MAX_IMAGE_SIZE);
            },
            E::SegmentsOverlap {
                first: 1,
                second: 2,
            },
        ),
        (
            "a segment ending one byte past the largest image",
            |d| {
                let p = ph(d, 3);
                wr64(d, p + 40, MAX_IMAGE_SIZE - 0x2980 + 1);
            },
            E::ImageTooLarge {
                index: 3,
                vaddr: 0x2980,
                mem_size: MAX_IMAGE_SIZE - 0x2980 + 1,
            },
        ),
        (
            "descriptor kernarg_size disagrees with the metadata",
            |d| wr32(d, KD + 8, 32),
            E::MetadataMismatch {
                kernel: name("vector_add"),
                field: "kernarg_segment_size",
                metadata: 28,
                descriptor: 32,
            },
        ),
        (
            "descriptor group_segment_fixed_size disagrees with the metadata",
            |d| wr32(d, KD, 1024),
            E::MetadataMismatch {
                kernel: name("vector_add"),
                field: "group_segment_fixed_size",
                metadata: 0,
                descriptor: 1024,
            },
        ),
        (
            "descriptor private_segment_fixed_size disagrees with the metadata",
            |d| wr32(d, KD + 4, 16),
            E::MetadataMismatch {
                kernel: name("vector_add"),
                field: "private_segment_fixed_size",
                metadata: 0,
                descriptor: 16,
            },
        ),
        (
            "descriptor says wave64, the metadata wave32",
            |d| {
                let props = rd16(d, KD + 56);
                wr16(d, KD + 56, props & !(1 << 10));
            },
            E::MetadataMismatch {
                kernel: name("vector_add"),
                field: "wavefront_size",
                metadata: 32,
                descriptor: 64,
            },
        ),
        (
            "user SGPR count below the enabled inputs",
            |d| {
                let r = rd32(d, KD + 52) & !(0x1f << 1);
                wr32(d, KD + 52, r | (1 << 1));
            },
            E::UserSgprCountTooSmall {
                kernel: name("vector_add"),
                count: 1,
                required: 2,
            },
        ),
    ];
    for (what, patch, want) in cases {
        let mut d = base();
        assert_eq!(d.len(), 3800);
        patch(&mut d);
        assert_eq!(parse(&d).as_ref(), Err(want), "{what}");
        // The message names the offending value and is one line.
        let msg = want.to_string();
        assert!(!msg.contains('\n') && !msg.is_empty(), "{what}: {msg}");
    }
}

#[test]
fn too_many_segments() {
    // A new program header table appended to the file: 17 small PT_LOADs, disjoint.
    let mut d = base();
    let phoff = d.len() as u64;
    for i in 0..17u64 {
        let mut p = [0u8; 56];
        wr32(&mut p, 0, 1); // PT_LOAD
        wr32(&mut p, 4, 4); // PF_R
        wr64(&mut p, 16, i * 0x1000); // p_vaddr
        wr64(&mut p, 40, 0x10); // p_memsz
        d.extend_from_slice(&p);
    }
    wr64(&mut d, 0x20, phoff);
    wr16(&mut d, 0x38, 17);
    assert_eq!(parse(&d), Err(E::TooManySegments { count: 17 }));
}

#[test]
fn wave32_refused_on_gfx9() {
    let mut d = fixture("vector_add-gfx90a.co");
    let (e, _) = symbol(&d, "vector_add.kd");
    let kd = rd64(&d, e + 8) as usize; // segment 1 maps vaddr == file offset
    let props = rd16(&d, kd + 56);
    wr16(&mut d, kd + 56, props | 1 << 10);
    assert_eq!(
        parse(&d),
        Err(E::Wave32Unsupported {
            kernel: name("vector_add"),
            target: "gfx90a"
        })
    );
}

#[test]
fn stripped_symtab_falls_back_to_dynsym() {
    let mut d = base();
    let s = sh(&d, section_of_type(&d, 2));
    wr32(&mut d, s + 4, 1); // SHT_SYMTAB -> PROGBITS
    let co = CodeObject::parse(&d).unwrap();
    let k = co.kernel("vector_add").unwrap();
    assert_eq!((k.descriptor_offset, k.entry_offset), (0x600, 0x1700));
}

#[test]
#[cfg_attr(
    miri,
    ignore = "a sweep of thousands of parses: over 6 minutes under miri; the fuzz target covers it"
)]
fn garbage_never_panics() {
    // A cheap deterministic sweep (the fuzz target goes further): xorshift bytes, and the
    // fixture with one byte changed at every offset of the headers.
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for len in [0usize, 16, 64, 100, 512, 4096] {
        for _ in 0..50 {
            let v: Vec<u8> = (0..len)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x as u8
                })
                .collect();
            let _ = parse(&v);
        }
    }
    let d = base();
    let ph_end = ph(&d, 8);
    for at in (0..ph_end).chain(sh(&d, 0)..d.len()) {
        for v in [0u8, 0xff, 0x80, 1] {
            let mut m = d.clone();
            m[at] = v;
            if let Ok(co) = CodeObject::parse(&m) {
                for k in co.kernels() {
                    let _ = k.check_resources(&hcq_core::codeobj::DeviceLimits {
                        lds_bytes: 65536,
                        max_private_segment_bytes: 0,
                    });
                }
                let mut img = vec![0u8; co.image_size().min(1 << 20) as usize];
                let _ = co.load_into(&mut img);
            }
        }
    }
}

/// Adds `delta` to every PT_LOAD's addresses and every defined symbol's value: the same object
/// linked at another address.
fn relocate(d: &mut [u8], delta: u64) {
    for i in load_indices(d) {
        let p = ph(d, i);
        for f in [16, 24] {
            let v = rd64(d, p + f);
            wr64(d, p + f, v + delta);
        }
    }
    for ty in [2, 11] {
        let s = sh(d, section_of_type(d, ty));
        let (off, size) = (rd64(d, s + 24) as usize, rd64(d, s + 32) as usize);
        for e in (off..off + size).step_by(24) {
            if rd16(d, e + 6) != 0 && rd64(d, e + 8) != 0 {
                let v = rd64(d, e + 8);
                wr64(d, e + 8, v + delta);
            }
        }
    }
}

/// Offsets in the image, as the loader lays them out: (image offset, mem size, file offset,
/// file size, executable, writable) of each segment.
fn layout(co: &CodeObject<'_>) -> Vec<(u64, u64, usize, usize, bool, bool)> {
    co.segments()
        .iter()
        .map(|s| {
            (
                s.image_offset,
                s.mem_size,
                s.file_offset,
                s.file_size,
                s.executable,
                s.writable,
            )
        })
        .collect()
}

#[test]
fn segments_are_the_program_headers() {
    let d = base();
    let co = CodeObject::parse(&d).unwrap();
    assert_eq!(
        layout(&co),
        [
            (0, 0x644, 0, 0x644, false, false),
            (0x1700, 0x280, 0x700, 0x280, true, false),
            (0x2980, 0x680, 0x980, 0x70, false, true),
        ]
    );
    assert_eq!((co.image_base(), co.image_size()), (0, 0x3000));
    let idx: Vec<u16> = co.segments().iter().map(|s| s.index).collect();
    assert_eq!(idx, [1, 2, 3]);
}

#[test]
fn an_object_linked_elsewhere_keeps_its_image_offsets() {
    let mut d = base();
    relocate(&mut d, 0x10_0000);
    let co = CodeObject::parse(&d).unwrap();
    assert_eq!(co.image_base(), 0x10_0000);
    assert_eq!(
        layout(&co),
        layout(&CodeObject::parse(&base()).unwrap()),
        "image offsets do not move with the link address"
    );
    let k = co.kernel("vector_add").unwrap();
    assert_eq!((k.descriptor_offset, k.entry_offset), (0x600, 0x1700));
    // Not page-aligned: the base is the page below the lowest segment.
    let mut d = base();
    relocate(&mut d, 0x10_0100);
    let co = CodeObject::parse(&d).unwrap();
    assert_eq!(co.image_base(), 0x10_0000);
    assert_eq!(co.segments()[0].image_offset, 0x100);
    let k = co.kernel("vector_add").unwrap();
    assert_eq!((k.descriptor_offset, k.entry_offset), (0x700, 0x1800));
    assert_eq!(
        k.descriptor,
        CodeObject::parse(&base())
            .unwrap()
            .kernel("vector_add")
            .unwrap()
            .descriptor
    );
}

#[test]
fn a_descriptor_filling_a_segment_exactly() {
    // Segment 1 shrunk to the descriptor's 64 bytes: it starts and ends where the descriptor
    // does, at an unaligned address (the image base stays the page below).
    let mut d = base();
    let p = ph(&d, 1);
    for (f, v) in [(8, 0x600), (16, 0x600), (24, 0x600), (32, 0x40), (40, 0x40)] {
        wr64(&mut d, p + f, v);
    }
    let co = CodeObject::parse(&d).unwrap();
    assert_eq!(co.image_base(), 0);
    assert_eq!(layout(&co)[0], (0x600, 0x40, 0x600, 0x40, false, false));
    let k = co.kernel("vector_add").unwrap();
    assert_eq!((k.descriptor_offset, k.entry_offset), (0x600, 0x1700));
    assert_eq!(k.kernarg_size(), 28);
}

#[test]
fn adjacent_segments_do_not_overlap() {
    // The writable segment moved right after the code, then right before it.
    for (vaddr, what) in [(0x1980u64, "after"), (0x1700 - 0x680, "before")] {
        let mut d = base();
        let p = ph(&d, 3);
        wr64(&mut d, p + 16, vaddr);
        let co = CodeObject::parse(&d).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(co.segments()[2].image_offset, vaddr, "{what}");
    }
}

#[test]
fn the_largest_image_and_segment_count_are_accepted() {
    let mut d = base();
    let p = ph(&d, 3);
    wr64(&mut d, p + 40, MAX_IMAGE_SIZE - 0x2980);
    let co = CodeObject::parse(&d).unwrap();
    assert_eq!(co.image_size(), MAX_IMAGE_SIZE);

    // The 8 program headers plus small disjoint PT_LOADs, up to MAX_SEGMENTS loads and one more.
    for extra in [MAX_SEGMENTS - 3, MAX_SEGMENTS - 2] {
        let mut d = base();
        let phoff = d.len();
        let table = d[ph(&d, 0)..ph(&d, 8)].to_vec();
        d.extend_from_slice(&table);
        for i in 0..extra as u64 {
            let mut p = [0u8; 56];
            wr32(&mut p, 0, 1); // PT_LOAD
            wr32(&mut p, 4, 4); // PF_R
            wr64(&mut p, 16, 0x10_0000 + i * 0x1000); // p_vaddr
            wr64(&mut p, 40, 0x10); // p_memsz
            d.extend_from_slice(&p);
        }
        wr64(&mut d, 0x20, phoff as u64);
        wr16(&mut d, 0x38, (8 + extra) as u16);
        let got = CodeObject::parse(&d).map(|co| co.segments().len());
        if extra + 3 == MAX_SEGMENTS {
            assert_eq!(got, Ok(MAX_SEGMENTS));
        } else {
            assert_eq!(got, Err(E::TooManySegments { count: extra + 3 }));
        }
    }
}

#[test]
fn a_section_may_start_right_after_the_header() {
    let mut d = base();
    let s = sh(&d, 10); // .comment
    wr64(&mut d, s + 24, 64);
    assert!(parse(&d).is_ok());
    wr64(&mut d, s + 24, 63);
    assert_eq!(
        parse(&d),
        Err(E::SectionOverlapsHeader {
            index: 10,
            offset: 63,
            size: 0x43
        })
    );
}

#[test]
fn only_the_first_note_section_is_read() {
    // .comment retyped SHT_NOTE: its bytes are not a note, but the metadata note came first.
    let mut d = base();
    let s = sh(&d, 10);
    wr32(&mut d, s + 4, 7);
    let co = CodeObject::parse(&d).unwrap();
    assert!(co.metadata().is_some());
    assert!(co.kernel("vector_add").unwrap().metadata.is_some());
}

#[test]
fn xnack_settings_in_e_flags() {
    use FeatureSetting::{Any, Off, On};
    for (bits, want, ok_on, ok_off) in [
        (0x100u32, Any, true, true),
        (0x200, Off, false, true),
        (0x300, On, true, false),
    ] {
        let mut d = fixture("vector_add-gfx90a.co");
        let f = rd32(&d, 48) & !0x300;
        wr32(&mut d, 48, f | bits);
        let co = CodeObject::parse(&d).unwrap();
        assert_eq!(co.target().xnack, want);
        for (device, ok) in [(true, ok_on), (false, ok_off)] {
            let got = co.check_xnack(device);
            if ok {
                assert_eq!(got, Ok(()), "{want:?} on a device with xnack {device}");
            } else {
                assert_eq!(
                    got,
                    Err(E::XnackMismatch {
                        object: "gfx90a",
                        object_wants: want == On
                    })
                );
            }
        }
    }
}

#[test]
fn queue_pointer_bit_is_read() {
    let d = base();
    let k = CodeObject::parse(&d).unwrap().kernel("vector_add").unwrap();
    assert!(!k.uses_queue_ptr());
    let mut d = base();
    let props = rd16(&d, KD + 56);
    wr16(&mut d, KD + 56, props | 1 << 2); // ENABLE_SGPR_QUEUE_PTR
    let co = CodeObject::parse(&d).unwrap();
    let k = co.kernel("vector_add").unwrap();
    assert!(k.uses_queue_ptr());
    assert!(!k.uses_dispatch_ptr());
    assert_eq!(k.required_user_sgprs(), 4);
}

#[test]
fn lds_limits_at_their_boundaries() {
    // Without the metadata note (retyped PROGBITS) the descriptor's sizes are not compared.
    let with_lds = |bytes: u32| {
        let mut d = base();
        let s = sh(&d, section_of_type(&d, 7));
        wr32(&mut d, s + 4, 1);
        wr32(&mut d, KD, bytes);
        d
    };
    let limits = |lds_bytes| DeviceLimits {
        lds_bytes,
        max_private_segment_bytes: 0,
    };
    let d = with_lds(1000);
    let co = CodeObject::parse(&d).unwrap();
    let k = co.kernel("vector_add").unwrap();
    assert!(k.metadata.is_none());
    assert_eq!((k.group_segment_size(), k.lds_granules()), (1000, 2));
    assert_eq!(k.check_resources(&limits(1000)), Ok(()));
    assert_eq!(
        k.check_resources(&limits(999)),
        Err(E::GroupSegmentTooLarge {
            kernel: name("vector_add"),
            size: 1000,
            limit: 999
        })
    );
    // RSRC2.LDS_SIZE holds 0x1ff granules of 512 bytes, whatever the device has.
    let most = 0x1ff * 512;
    let d = with_lds(most);
    let co = CodeObject::parse(&d).unwrap();
    let k = co.kernel("vector_add").unwrap();
    assert_eq!(k.lds_granules(), 0x1ff);
    assert_eq!(k.check_resources(&limits(1 << 20)), Ok(()));
    let d = with_lds(most + 1);
    let co = CodeObject::parse(&d).unwrap();
    let k = co.kernel("vector_add").unwrap();
    assert_eq!(k.lds_granules(), 0x200);
    assert_eq!(
        k.check_resources(&limits(1 << 20)),
        Err(E::GroupSegmentTooLarge {
            kernel: name("vector_add"),
            size: most + 1,
            limit: most
        })
    );
}
