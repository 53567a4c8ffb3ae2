//! Unit tests on hand-built MessagePack documents (the fixtures are checked against
//! `llvm-readelf` in `core/tests/metadata_fixtures.rs`).

use super::*;

/// A tiny MessagePack writer for the tests.
struct W(heapless::Vec<u8, 2048>);

impl W {
    fn new() -> Self {
        Self(heapless::Vec::new())
    }
    fn b(&mut self, b: &[u8]) -> &mut Self {
        self.0.extend_from_slice(b).unwrap();
        self
    }
    fn s(&mut self, s: &str) -> &mut Self {
        let n = u8::try_from(s.len()).unwrap();
        if n < 32 {
            self.b(&[0xa0 | n]);
        } else {
            self.b(&[0xd9, n]);
        }
        self.b(s.as_bytes())
    }
    fn u(&mut self, v: u32) -> &mut Self {
        self.b(&[0xce]).b(&v.to_be_bytes())
    }
    fn map(&mut self, n: u8) -> &mut Self {
        self.b(&[0x80 | n])
    }
    fn arr(&mut self, n: u8) -> &mut Self {
        self.b(&[0x90 | n])
    }
}

/// One kernel `k` with a global buffer at 0, a u32 at 8, hidden_group_size_x at 16 (2 bytes)
/// and `extra` more key/value pairs written by `more`.
fn doc(args: &[(u32, u32, &str)], segment: u32, more: impl Fn(&mut W) -> u8) -> W {
    let mut w = W::new();
    w.map(3).s("amdhsa.version").arr(2).u(1).u(2);
    w.s("amdhsa.target").s("amdgcn-amd-amdhsa--gfx1100");
    w.s("amdhsa.kernels").arr(1);
    let mut extra = W::new();
    let n = more(&mut extra);
    w.map(11 + n);
    w.s(".name").s("k").s(".symbol").s("k.kd");
    w.s(".kernarg_segment_size").u(segment);
    w.s(".kernarg_segment_align").u(8);
    w.s(".group_segment_fixed_size").u(0);
    w.s(".private_segment_fixed_size").u(0);
    w.s(".max_flat_workgroup_size").u(256);
    w.s(".wavefront_size").u(32);
    w.s(".sgpr_count").u(10);
    w.s(".vgpr_count").u(4);
    w.s(".args").arr(u8::try_from(args.len()).unwrap());
    for (off, size, kind) in args {
        w.map(4)
            .s(".offset")
            .u(*off)
            .s(".size")
            .u(*size)
            .s(".value_kind")
            .s(kind)
            .s(".name")
            .s("x");
    }
    w.b(&extra.0);
    w
}

const ARGS: [(u32, u32, &str); 3] = [
    (0, 8, "global_buffer"),
    (8, 4, "by_value"),
    (16, 2, "hidden_group_size_x"),
];

#[test]
fn parses_a_kernel_and_its_args() {
    let w = doc(&ARGS, 24, |w| {
        w.s(".reqd_workgroup_size").arr(3).u(64).u(1).u(1);
        w.s(".uniform_work_group_size").u(1);
        w.s(".unknown_key").map(1).s("a").arr(2).u(1).u(2);
        3
    });
    let md = Metadata::parse(&w.0).unwrap();
    assert_eq!(md.version, [1, 2]);
    assert_eq!(md.target, Some("amdgcn-amd-amdhsa--gfx1100"));
    let k = md.by_symbol("k.kd").unwrap();
    assert_eq!(k.kernarg_segment_size, 24);
    assert_eq!(k.max_flat_workgroup_size, 256);
    assert_eq!(k.reqd_workgroup_size, Some([64, 1, 1]));
    assert_eq!(k.uniform_work_group_size, Some(true));
    assert_eq!(k.agpr_count, None);
    let args: heapless::Vec<ArgMeta<'_>, 4> = k.args().collect();
    assert_eq!(args.len(), 3);
    assert_eq!(args[0].value_kind, ValueKind::GlobalBuffer);
    assert_eq!(
        args[2].value_kind,
        ValueKind::Hidden(HiddenKind::GroupSizeX)
    );
    assert_eq!(args[2].value_kind_str, "hidden_group_size_x");
    assert_eq!(k.explicit_args().count(), 2);
    assert_eq!(k.hidden_args().count(), 1);
    assert!(md.by_symbol("nope.kd").is_none());
}

#[test]
fn every_lie_is_an_error() {
    // An argument past the segment.
    let w = doc(&ARGS, 16, |_| 0);
    assert!(matches!(
        Metadata::parse(&w.0),
        Err(MetadataError::BadArgLayout { arg: 2, .. })
    ));
    // Overlapping arguments.
    let w = doc(&[(0, 8, "global_buffer"), (4, 4, "by_value")], 16, |_| 0);
    assert!(matches!(
        Metadata::parse(&w.0),
        Err(MetadataError::BadArgLayout { arg: 1, .. })
    ));
    // A duplicate key.
    let w = doc(&ARGS, 24, |w| {
        w.s(".sgpr_count").u(3);
        1
    });
    assert!(matches!(
        Metadata::parse(&w.0),
        Err(MetadataError::DuplicateKey {
            key: ".sgpr_count",
            ..
        })
    ));
    // A wrong type.
    let w = doc(&ARGS, 24, |w| {
        w.s(".agpr_count").s("four");
        1
    });
    assert!(matches!(
        Metadata::parse(&w.0),
        Err(MetadataError::WrongType {
            key: ".agpr_count",
            ..
        })
    ));
    // A wrong reqd_workgroup_size length.
    let w = doc(&ARGS, 24, |w| {
        w.s(".reqd_workgroup_size").arr(2).u(1).u(1);
        1
    });
    assert!(matches!(
        Metadata::parse(&w.0),
        Err(MetadataError::OutOfRange { .. })
    ));
    // Version 2.x.
    let mut w = W::new();
    w.map(1).s("amdhsa.version").arr(2).u(2).u(0);
    assert_eq!(
        Metadata::parse(&w.0),
        Err(MetadataError::UnsupportedVersion { major: 2, minor: 0 })
    );
    // No version.
    let mut w = W::new();
    w.map(0);
    assert!(matches!(
        Metadata::parse(&w.0),
        Err(MetadataError::MissingKey { .. })
    ));
    // Every truncation of a valid document is an error, never a panic.
    let w = doc(&ARGS, 24, |_| 0);
    for len in 0..w.0.len() {
        assert!(Metadata::parse(&w.0[..len]).is_err(), "{len}");
    }
}

#[test]
fn missing_required_arg_key() {
    let mut w = W::new();
    w.map(2).s("amdhsa.version").arr(2).u(1).u(1);
    w.s("amdhsa.kernels").arr(1).map(11);
    w.s(".name").s("k").s(".symbol").s("k.kd");
    for key in [
        ".kernarg_segment_size",
        ".kernarg_segment_align",
        ".group_segment_fixed_size",
        ".private_segment_fixed_size",
        ".max_flat_workgroup_size",
        ".wavefront_size",
        ".sgpr_count",
        ".vgpr_count",
    ] {
        w.s(key).u(8);
    }
    w.s(".args").arr(1).map(2).s(".offset").u(0).s(".size").u(4);
    assert_eq!(
        Metadata::parse(&w.0),
        Err(MetadataError::MissingKey {
            key: ".value_kind",
            kernel: Some(0),
            arg: Some(0)
        })
    );
}

#[test]
fn notes_are_found_and_bounds_checked() {
    let mut n = W::new();
    // A foreign note, then the metadata note.
    n.b(&4u32.to_le_bytes())
        .b(&2u32.to_le_bytes())
        .b(&1u32.to_le_bytes());
    n.b(b"GNU\0").b(&[1, 2, 0, 0]);
    n.b(&7u32.to_le_bytes())
        .b(&3u32.to_le_bytes())
        .b(&32u32.to_le_bytes());
    n.b(b"AMDGPU\0\0").b(&[0x80, 0xc0, 0xc0, 0]);
    assert_eq!(find_note(&n.0), Ok(Some(&[0x80u8, 0xc0, 0xc0][..])));
    // Truncated inside the metadata note: an error (or, cut in the first note's padding, no
    // note), never the note and never a panic.
    for len in 1..n.0.len() - 4 {
        let r = find_note(&n.0[..len]);
        assert!(r.is_err() || r == Ok(None), "{len}");
    }
    assert!(find_note(&n.0[..12]).is_err());
    assert_eq!(find_note(&[]), Ok(None));
}

#[test]
fn value_kinds_round_trip() {
    for (name, k) in HIDDEN_NAMES {
        assert_eq!(ValueKind::parse(name), ValueKind::Hidden(k));
        assert_eq!(k.name(), name);
    }
    assert_eq!(ValueKind::parse("hidden_future"), ValueKind::Other);
    assert!(ValueKind::Other.is_hidden("hidden_future"));
    assert!(!ValueKind::Other.is_hidden("image_2d"));
}

#[test]
fn notes_need_both_the_owner_and_the_type() {
    // An AMDGPU note of another type (NT_AMDGPU_ISA_VERSION-like 1), a GNU note of type 32,
    // then the metadata note: only the last is it.
    let mut n = W::new();
    n.b(&7u32.to_le_bytes())
        .b(&4u32.to_le_bytes())
        .b(&1u32.to_le_bytes());
    n.b(b"AMDGPU\0\0").b(&[9, 9, 9, 9]);
    n.b(&4u32.to_le_bytes())
        .b(&4u32.to_le_bytes())
        .b(&32u32.to_le_bytes());
    n.b(b"GNU\0").b(&[8, 8, 8, 8]);
    n.b(&7u32.to_le_bytes())
        .b(&1u32.to_le_bytes())
        .b(&32u32.to_le_bytes());
    n.b(b"AMDGPU\0\0").b(&[0xc0, 0, 0, 0]);
    assert_eq!(find_note(&n.0), Ok(Some(&[0xc0u8][..])));
}

#[test]
fn every_value_kind_llvm_names() {
    // AMDGPUUsage, "Code Object V3 Metadata", .value_kind.
    for (s, k) in [
        ("by_value", ValueKind::ByValue),
        ("global_buffer", ValueKind::GlobalBuffer),
        ("dynamic_shared_pointer", ValueKind::DynamicSharedPointer),
        ("sampler", ValueKind::Sampler),
        ("image", ValueKind::Image),
        ("pipe", ValueKind::Pipe),
        ("queue", ValueKind::Queue),
    ] {
        assert_eq!(ValueKind::parse(s), k, "{s}");
        assert!(!k.is_hidden(s), "{s}");
    }
}

#[test]
fn errors_say_where() {
    let cases = [
        (
            MetadataError::MissingKey {
                key: ".offset",
                kernel: Some(1),
                arg: Some(2),
            },
            "metadata of kernel 1, argument 2: no .offset",
        ),
        (
            MetadataError::MissingKey {
                key: ".name",
                kernel: Some(0),
                arg: None,
            },
            "metadata of kernel 0: no .name",
        ),
        (
            MetadataError::MissingKey {
                key: "amdhsa.kernels",
                kernel: None,
                arg: None,
            },
            "metadata: no amdhsa.kernels",
        ),
        (
            MetadataError::BadNote { offset: 12 },
            "note at offset 12 of its section runs past the section's end",
        ),
        (
            MetadataError::UnsupportedVersion { major: 2, minor: 0 },
            "metadata amdhsa.version 2.0 is not supported (need 1.x, code object v3..v6)",
        ),
    ];
    for (e, want) in cases {
        assert_eq!(crate::testing::shown(&e).as_str(), want);
    }
}

#[test]
fn every_address_space_llvm_names() {
    // AMDGPUUsage, .address_space.
    for (s, a) in [
        ("private", AddressSpace::Private),
        ("global", AddressSpace::Global),
        ("constant", AddressSpace::Constant),
        ("local", AddressSpace::Local),
        ("generic", AddressSpace::Generic),
        ("region", AddressSpace::Region),
        ("flat", AddressSpace::Other),
    ] {
        assert_eq!(AddressSpace::parse(s), a, "{s}");
    }
}

#[test]
fn every_required_kernel_key_is_required() {
    let required = [
        ".name",
        ".symbol",
        ".kernarg_segment_size",
        ".kernarg_segment_align",
        ".group_segment_fixed_size",
        ".private_segment_fixed_size",
        ".max_flat_workgroup_size",
        ".wavefront_size",
        ".sgpr_count",
        ".vgpr_count",
    ];
    for missing in required {
        let mut w = W::new();
        w.map(2).s("amdhsa.version").arr(2).u(1).u(1);
        // CAST: 10 keys.
        w.s("amdhsa.kernels").arr(1).map(required.len() as u8);
        for key in required.iter().filter(|k| **k != missing) {
            match *key {
                ".name" => w.s(key).s("k"),
                ".symbol" => w.s(key).s("k.kd"),
                _ => w.s(key).u(8),
            };
        }
        w.s(".args").arr(0);
        assert_eq!(
            Metadata::parse(&w.0),
            Err(MetadataError::MissingKey {
                key: missing,
                kernel: Some(0),
                arg: None
            }),
            "{missing}"
        );
    }
}
