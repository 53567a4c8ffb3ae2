//! core's NT_AMDGPU_METADATA reader against LLVM's own: for every committed fixture,
//! `manifest.json` keeps each kernel's metadata as `llvm-readelf-19 --notes` printed it
//! (`readelf_metadata`, written by `scripts/build-kernels.sh`); every field core reads must be
//! identical, every argument in order.

use hcq_core::codeobj::CodeObject;
use hcq_core::metadata::{AddressSpace, ValueKind};
use serde_json::Value;
use std::path::PathBuf;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/kernels")
}

fn manifest() -> Value {
    let text = std::fs::read_to_string(dir().join("manifest.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn u32_of(v: &Value, key: &str) -> u32 {
    u32::try_from(v[key].as_u64().unwrap_or_else(|| panic!("{key} in {v}"))).unwrap()
}

fn opt_u32(v: &Value, key: &str) -> Option<u32> {
    v.get(key)
        .map(|x| u32::try_from(x.as_u64().unwrap()).unwrap())
}

fn opt_bool(v: &Value, key: &str) -> Option<bool> {
    v.get(key).map(|x| match x {
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_u64().unwrap() != 0,
        _ => panic!("{key}: {x}"),
    })
}

#[test]
#[cfg_attr(
    miri,
    ignore = "parses the 90 KB manifest.json: minutes under miri; every_fixture_parses runs the parsers on every fixture"
)]
fn every_fixture_matches_llvm_readelf() {
    let m = manifest();
    let mut kernels = 0;
    let mut hidden = 0;
    for o in m["objects"].as_array().unwrap() {
        let file = o["file"].as_str().unwrap();
        let data = std::fs::read(dir().join(file)).unwrap();
        let co = CodeObject::parse(&data).unwrap_or_else(|e| panic!("{file}: {e}"));
        let llvm = &o["readelf_metadata"];
        let md = co
            .metadata()
            .unwrap_or_else(|| panic!("{file}: no metadata note"));
        let v = llvm["amdhsa.version"].as_array().unwrap();
        assert_eq!(
            md.version.map(u64::from),
            [v[0].as_u64().unwrap(), v[1].as_u64().unwrap()],
            "{file}"
        );
        assert_eq!(md.target, llvm["amdhsa.target"].as_str(), "{file}");
        let lk = llvm["amdhsa.kernels"].as_array().unwrap();
        assert_eq!(md.kernel_count as usize, lk.len(), "{file}");
        for (k, l) in md.kernels().zip(lk) {
            let ctx = format!("{file} {}", k.name);
            assert_eq!(k.name, l[".name"].as_str().unwrap(), "{ctx}");
            assert_eq!(k.symbol, l[".symbol"].as_str().unwrap(), "{ctx}");
            for (got, key) in [
                (k.kernarg_segment_size, ".kernarg_segment_size"),
                (k.kernarg_segment_align, ".kernarg_segment_align"),
                (k.group_segment_fixed_size, ".group_segment_fixed_size"),
                (k.private_segment_fixed_size, ".private_segment_fixed_size"),
                (k.max_flat_workgroup_size, ".max_flat_workgroup_size"),
                (k.wavefront_size, ".wavefront_size"),
                (k.sgpr_count, ".sgpr_count"),
                (k.vgpr_count, ".vgpr_count"),
            ] {
                assert_eq!(got, u32_of(l, key), "{ctx} {key}");
            }
            for (got, key) in [
                (k.agpr_count, ".agpr_count"),
                (k.sgpr_spill_count, ".sgpr_spill_count"),
                (k.vgpr_spill_count, ".vgpr_spill_count"),
            ] {
                assert_eq!(got, opt_u32(l, key), "{ctx} {key}");
            }
            assert_eq!(
                k.uniform_work_group_size,
                opt_bool(l, ".uniform_work_group_size"),
                "{ctx}"
            );
            assert_eq!(
                k.uses_dynamic_stack,
                opt_bool(l, ".uses_dynamic_stack"),
                "{ctx}"
            );
            let reqd = l.get(".reqd_workgroup_size").map(|r| {
                let r = r.as_array().unwrap();
                [0, 1, 2].map(|i| u32::try_from(r[i].as_u64().unwrap()).unwrap())
            });
            assert_eq!(k.reqd_workgroup_size, reqd, "{ctx}");
            let largs = l[".args"].as_array().map(Vec::as_slice).unwrap_or(&[]);
            assert_eq!(k.arg_count as usize, largs.len(), "{ctx}");
            assert_eq!(k.args().count(), largs.len(), "{ctx}");
            for (a, la) in k.args().zip(largs) {
                assert_eq!(a.offset, u32_of(la, ".offset"), "{ctx}");
                assert_eq!(a.size, u32_of(la, ".size"), "{ctx}");
                assert_eq!(
                    a.value_kind_str,
                    la[".value_kind"].as_str().unwrap(),
                    "{ctx}"
                );
                assert_ne!(a.value_kind, ValueKind::Other, "{ctx}: known kind");
                assert_eq!(a.name, la.get(".name").and_then(Value::as_str), "{ctx}");
                assert_eq!(
                    a.type_name,
                    la.get(".type_name").and_then(Value::as_str),
                    "{ctx}"
                );
                assert_eq!(
                    a.address_space.is_some(),
                    la.get(".address_space").is_some(),
                    "{ctx}"
                );
                if la.get(".address_space").and_then(Value::as_str) == Some("global") {
                    assert_eq!(a.address_space, Some(AddressSpace::Global), "{ctx}");
                }
                assert_eq!(
                    a.is_const,
                    opt_bool(la, ".is_const").unwrap_or(false),
                    "{ctx}"
                );
                assert_eq!(
                    a.pointee_align.map(u64::from),
                    la.get(".pointee_align").and_then(Value::as_u64),
                    "{ctx}"
                );
                hidden += usize::from(a.is_hidden());
            }
            // The kernel's descriptor agrees (CodeObject::parse checked it; kernarg_size is
            // the metadata's segment size).
            let kd = co.kernel(k.name).unwrap();
            assert_eq!(kd.kernarg_size(), k.kernarg_segment_size, "{ctx}");
            assert_eq!(kd.metadata, Some(k), "{ctx}");
            kernels += 1;
        }
    }
    assert_eq!(
        kernels,
        4 * (11 + 19 + 3 + 4 + 1 + 3),
        "11 + mathmix's 19 + codegen's 3 + dpp's 4 + matrix's 1 + reduce_local's 3 kernels x 4 targets"
    );
    assert!(
        hidden >= 4 * 13,
        "global_id's hidden arguments on every target"
    );
}

#[test]
fn global_id_has_v5_hidden_arguments() {
    let data = std::fs::read(dir().join("global_id-gfx1100.co")).unwrap();
    let co = CodeObject::parse(&data).unwrap();
    let k = co.kernel("global_id").unwrap().metadata.unwrap();
    let kinds: Vec<&str> = k.args().map(|a| a.value_kind_str).collect();
    assert_eq!(
        &kinds[..3],
        ["global_buffer", "by_value", "hidden_block_count_x"]
    );
    let gsx = k
        .args()
        .find(|a| a.value_kind_str == "hidden_group_size_x")
        .unwrap();
    assert_eq!((gsx.offset, gsx.size), (28, 2));
    assert_eq!(k.kernarg_segment_size, 272);
    assert_eq!(k.max_flat_workgroup_size, 256);
    assert_eq!(k.reqd_workgroup_size, None);
}

#[test]
fn descriptor_disagreement_is_refused() {
    // Patch the descriptor's kernarg_size of vector_add: the metadata still says 28.
    let mut data = std::fs::read(dir().join("vector_add-gfx1100.co")).unwrap();
    let co = CodeObject::parse(&data).unwrap();
    let k = co.kernel("vector_add").unwrap();
    let seg = co
        .segments()
        .iter()
        .find(|s| s.image_range().contains(&k.descriptor_offset))
        .copied()
        .unwrap();
    let file_off = seg.file_offset + (k.descriptor_offset - seg.image_offset) as usize;
    drop(co);
    data[file_off + 8..file_off + 12].copy_from_slice(&32u32.to_le_bytes());
    let err = CodeObject::parse(&data).unwrap_err().to_string();
    assert_eq!(
        err,
        "kernel vector_add: metadata kernarg_segment_size is 28, the kernel descriptor says 32"
    );
}
