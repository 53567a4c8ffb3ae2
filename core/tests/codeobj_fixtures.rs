//! Every committed code object (built by clang-19, `scripts/build-kernels.sh`) parses and
//! matches what the compiler said about it in `manifest.json`.

use hcq_core::codeobj::{CodeObject, CodeObjectError, DeviceLimits, FeatureSetting, MachTarget};
use hcq_core::hsa::KernelDescriptor;
use serde_json::Value;
use std::path::PathBuf;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/kernels")
}

fn manifest() -> Vec<Value> {
    let text = std::fs::read_to_string(dir().join("manifest.json")).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    v["objects"].as_array().unwrap().clone()
}

fn read(file: &str) -> Vec<u8> {
    std::fs::read(dir().join(file)).unwrap()
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap()
}

#[test]
#[cfg_attr(
    miri,
    ignore = "parses the 90 KB manifest.json: minutes under miri; every_fixture_parses runs the parsers on every fixture"
)]
fn manifest_covers_every_kernel_and_target() {
    let objs = manifest();
    assert_eq!(objs.len(), 56, "14 sources x 4 targets");
    let mut targets: Vec<&str> = objs.iter().map(|o| o["target"].as_str().unwrap()).collect();
    targets.sort_unstable();
    targets.dedup();
    assert_eq!(targets, ["gfx1100", "gfx1201", "gfx90a", "gfx942"]);
    // Every .co in the directory is in the manifest.
    let on_disk = std::fs::read_dir(dir())
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "co")
        })
        .count();
    assert_eq!(on_disk, objs.len());
}

#[test]
#[cfg_attr(
    miri,
    ignore = "parses the 90 KB manifest.json: minutes under miri; every_fixture_parses runs the parsers on every fixture"
)]
fn every_fixture_matches_its_metadata() {
    let mut kernels_seen = 0;
    for o in manifest() {
        let file = o["file"].as_str().unwrap();
        let data = read(file);
        assert_eq!(data.len() as u64, u(&o["size"]), "{file}");
        let co = CodeObject::parse(&data).unwrap_or_else(|e| panic!("{file}: {e}"));
        let t = co.target();
        assert_eq!(t.mach.name, o["target"].as_str().unwrap(), "{file}");
        assert_eq!(u64::from(t.e_flags), u(&o["e_flags"]), "{file}");
        assert_eq!(u64::from(t.abi_version), u(&o["abi_version"]), "{file}");
        assert_eq!(t.code_object_version(), 5, "{file}");
        co.check_target(t.mach.name).unwrap();

        let want = o["kernels"].as_array().unwrap();
        assert_eq!(co.kernel_count(), want.len(), "{file}");
        assert_eq!(co.kernels().count(), want.len(), "{file}");
        for w in want {
            let name = w["name"].as_str().unwrap();
            let k = co.kernel(name).unwrap_or_else(|e| panic!("{file}: {e}"));
            let ctx = format!("{file} {name}");
            assert_eq!(u64::from(k.kernarg_size()), u(&w["kernarg_size"]), "{ctx}");
            assert_eq!(
                u64::from(k.group_segment_size()),
                u(&w["group_segment_size"]),
                "{ctx}"
            );
            assert_eq!(
                u64::from(k.private_segment_size()),
                u(&w["private_segment_size"]),
                "{ctx}"
            );
            assert_eq!(
                u64::from(k.wavefront_size()),
                u(&w["wavefront_size"]),
                "{ctx}"
            );
            assert_eq!(
                k.uses_dispatch_ptr(),
                w["uses_dispatch_ptr"].as_bool().unwrap(),
                "{ctx}"
            );
            assert_eq!(
                u64::from(k.user_sgpr_count()),
                u(&w["user_sgpr_count"]),
                "{ctx}"
            );
            // Image base is 0 for these objects: image offsets are the symbols' addresses.
            assert_eq!(co.image_base(), 0);
            assert_eq!(k.descriptor_offset, u(&w["kd_address"]), "{ctx}");
            assert_eq!(k.entry_offset, u(&w["code_address"]), "{ctx}");
            assert_eq!(k.entry_offset % 256, 0, "{ctx}");
            assert_eq!(
                k.entry_offset as i64 - k.descriptor_offset as i64,
                k.entry_byte_offset(),
                "{ctx}"
            );
            let uses_kernarg = w["uses_kernarg_ptr"].as_bool().unwrap();
            assert_eq!(
                k.properties()
                    .get(hcq_core::hsa::KernelCodeProperties::ENABLE_SGPR_KERNARG_SEGMENT_PTR)
                    != 0,
                uses_kernarg,
                "{ctx}"
            );
            // Only global_id, reduce_sum and reduce_affine (hidden_group_size_x) and hidden_args (all
            // of them) read hidden arguments (code object v5).
            assert_eq!(
                w["hidden_args"].as_array().unwrap().is_empty(),
                !["global_id", "reduce_sum", "reduce_affine", "hidden_args"].contains(&k.name),
                "{ctx}"
            );
            kernels_seen += 1;
        }
    }
    // 11 kernels in the runtime fixtures, 19 in mathmix, 3 in codegen, 4 in dpp, 1 in matrix, 3 in reduce_local.
    assert_eq!(kernels_seen, 4 * (11 + 19 + 3 + 4 + 1 + 3));
}

#[test]
#[cfg_attr(
    miri,
    ignore = "parses the 90 KB manifest.json: minutes under miri; every_fixture_parses runs the parsers on every fixture"
)]
fn load_plan_places_descriptors_and_code() {
    for o in manifest() {
        let file = o["file"].as_str().unwrap();
        let data = read(file);
        let co = CodeObject::parse(&data).unwrap();
        assert_eq!(co.image_size() % 4096, 0);
        let segs = co.segments();
        assert!(segs.iter().any(|s| s.executable), "{file}");
        let end = segs.iter().map(|s| s.image_range().end).max().unwrap();
        assert_eq!(co.image_size(), end.div_ceil(4096) * 4096, "{file}");
        let mut image = vec![0xAAu8; co.image_size() as usize + 16];
        co.load_into(&mut image).unwrap();
        assert!(
            image[co.image_size() as usize..].iter().all(|&b| b == 0xAA),
            "past the image"
        );
        for s in segs {
            let (zoff, zlen) = s.zero_fill();
            assert_eq!(zoff + zlen, s.image_range().end);
            let at = s.image_offset as usize;
            assert_eq!(
                &image[at..at + s.file_size],
                &data[s.file_range()],
                "{file}"
            );
            assert!(
                image[zoff as usize..(zoff + zlen) as usize]
                    .iter()
                    .all(|&b| b == 0)
            );
        }
        for k in co.kernels() {
            let at = k.descriptor_offset as usize;
            let kd = KernelDescriptor::read(&image[at..at + 64]).unwrap();
            assert_eq!(kd, k.descriptor, "{file} {}", k.name);
        }
        assert_eq!(
            co.load_into(&mut image[..co.image_size() as usize - 1]),
            Err(CodeObjectError::ImageBufferTooSmall {
                need: co.image_size(),
                have: co.image_size() as usize - 1
            })
        );
    }
}

#[test]
fn vector_add_gfx1100_exact_values() {
    let data = read("vector_add-gfx1100.co");
    let co = CodeObject::parse(&data).unwrap();
    assert_eq!(co.target().to_string(), "gfx1100");
    assert_eq!(co.target().xnack, FeatureSetting::Unsupported);
    assert_eq!(co.image_size(), 0x3000);
    let k = co.kernel("vector_add").unwrap();
    assert_eq!((k.descriptor_offset, k.entry_offset), (0x600, 0x1700));
    assert_eq!(k.entry_byte_offset(), 0x1100);
    assert_eq!(
        (
            k.kernarg_size(),
            k.wavefront_size(),
            k.required_user_sgprs()
        ),
        (28, 32, 2)
    );
    assert_eq!(
        co.kernel("vector_add_f32"),
        Err(CodeObjectError::KernelNotFound {
            name: "vector_add_f32".try_into().unwrap()
        })
    );
}

#[test]
fn gfx90a_object_refused_on_gfx1100() {
    let data = read("vector_add-gfx90a.co");
    let co = CodeObject::parse(&data).unwrap();
    assert_eq!(co.target().to_string(), "gfx90a");
    let err = co.check_target("gfx1100").unwrap_err();
    assert_eq!(
        err,
        CodeObjectError::TargetMismatch {
            object: "gfx90a",
            device: "gfx1100".try_into().unwrap()
        }
    );
    let msg = err.to_string();
    assert!(msg.contains("gfx90a") && msg.contains("gfx1100"), "{msg}");
    assert!(co.check_target("gfx942").is_err());
    let gfx1100 = hcq_core::arch::GfxTarget::from_kfd_version(110000).unwrap();
    assert_eq!(
        co.check_device(gfx1100),
        Err(CodeObjectError::TargetMismatch {
            object: "gfx90a",
            device: "gfx1100".try_into().unwrap()
        })
    );
    let gfx90a = hcq_core::arch::GfxTarget::from_kfd_version(90010).unwrap();
    co.check_device(gfx90a).unwrap();
    assert_eq!(co.target().mach.gfx_target(), Some(gfx90a));
    assert_eq!(
        MachTarget::from_name("gfx11-generic").unwrap().gfx_target(),
        None
    );
    // xnack "any": either device mode is fine.
    co.check_xnack(true).unwrap();
    co.check_xnack(false).unwrap();
    // A gfx1100 object refused on gfx1201 and the other way around.
    let co = CodeObject::parse(&read("fill-gfx1201.co"))
        .unwrap()
        .target();
    assert_eq!(co.mach, MachTarget::from_name("gfx1201").unwrap());
    let data = read("fill-gfx1100.co");
    assert!(matches!(
        CodeObject::parse(&data).unwrap().check_target("gfx1201"),
        Err(CodeObjectError::TargetMismatch {
            object: "gfx1100",
            ..
        })
    ));
}

#[test]
fn resource_checks_are_errors() {
    let data = read("lds_reverse-gfx1100.co");
    let co = CodeObject::parse(&data).unwrap();
    let k = co.kernel("lds_reverse").unwrap();
    assert_eq!((k.group_segment_size(), k.lds_granules()), (256, 1));
    let big = DeviceLimits {
        lds_bytes: 64 * 1024,
        max_private_segment_bytes: 0,
    };
    k.check_resources(&big).unwrap();
    let small = DeviceLimits {
        lds_bytes: 255,
        max_private_segment_bytes: 0,
    };
    assert_eq!(
        k.check_resources(&small),
        Err(CodeObjectError::GroupSegmentTooLarge {
            kernel: "lds_reverse".try_into().unwrap(),
            size: 256,
            limit: 255
        })
    );
    let data = read("scratch-gfx90a.co");
    let co = CodeObject::parse(&data).unwrap();
    let k = co.kernel("scratch_sum").unwrap();
    assert_eq!(
        k.check_resources(&DeviceLimits {
            lds_bytes: 65536,
            max_private_segment_bytes: 64
        }),
        Err(CodeObjectError::PrivateSegmentTooLarge {
            kernel: "scratch_sum".try_into().unwrap(),
            size: 68,
            limit: 64
        })
    );
    k.check_resources(&DeviceLimits {
        lds_bytes: 65536,
        max_private_segment_bytes: 68,
    })
    .unwrap();
}

#[test]
fn multi_kernel_object_lists_all_in_symbol_order() {
    let data = read("multi-gfx942.co");
    let co = CodeObject::parse(&data).unwrap();
    let names: Vec<&str> = co.kernels().map(|k| k.name).collect();
    assert_eq!(names, ["vector_add_f32", "scale_f32", "copy_u32"]);
    let k = co.kernel("scale_f32").unwrap();
    assert_eq!((k.kernarg_size(), k.wavefront_size()), (16, 64));
}

#[test]
#[cfg_attr(
    miri,
    ignore = "parses the 90 KB manifest.json: minutes under miri; every_fixture_parses runs the parsers on every fixture"
)]
fn mach_table_matches_llvm() {
    let text = std::fs::read_to_string(dir().join("manifest.json")).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    let machs = v["llvm_machs"].as_array().unwrap();
    assert!(machs.len() >= 45, "{}", machs.len());
    for m in machs {
        let name = m["name"].as_str().unwrap();
        let flags = u(&m["e_flags"]) as u32;
        let t = MachTarget::from_mach(flags & hcq_core::codeobj::EF_AMDGPU_MACH)
            .unwrap_or_else(|| panic!("{name}: mach {flags:#x} unknown"));
        assert_eq!(t.name, name);
        assert_eq!(MachTarget::from_name(name), Some(t));
        assert_eq!(t.is_generic(), u(&m["abi_version"]) == 4, "{name}");
        assert_eq!(
            flags >> 24,
            u32::from(t.is_generic()),
            "{name}: generic version 1"
        );
    }
}

/// Every committed object parses, with its kernels, descriptors and metadata note, without the
/// manifest (so this sweep runs under miri too, where parsing the JSON takes minutes).
#[test]
fn every_fixture_parses() {
    let mut n = 0;
    for e in std::fs::read_dir(dir()).unwrap() {
        let path = e.unwrap().path();
        if path.extension().and_then(|x| x.to_str()) != Some("co") {
            continue;
        }
        let data = std::fs::read(&path).unwrap();
        let co = CodeObject::parse(&data).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let md = co.metadata().expect("every fixture has a metadata note");
        assert!(md.kernel_count > 0, "{}", path.display());
        let names: Vec<_> = co.kernels().map(|k| k.name).collect();
        assert_eq!(names.len(), md.kernels().count(), "{}", path.display());
        for m in md.kernels() {
            assert!(names.contains(&m.name), "{}: {}", path.display(), m.name);
            assert!(co.kernel(m.name).is_ok(), "{}: {}", path.display(), m.name);
        }
        n += 1;
    }
    assert_eq!(n, 56, "14 sources x 4 targets");
}
