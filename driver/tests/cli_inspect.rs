//! `hcq inspect` on the committed code objects and on garbage: runs the built binary.

use std::path::PathBuf;
use std::process::{Command, Output};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../core/tests/fixtures/kernels")
        .join(name)
}

fn hcq(args: &[&std::ffi::OsStr]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hcq"))
        .arg("inspect")
        .args(args)
        .output()
        .unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

#[test]
fn json_for_vector_add_gfx1100() {
    let f = fixture("vector_add-gfx1100.co");
    let o = hcq(&["--json".as_ref(), f.as_os_str()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(
        v,
        serde_json::json!({
            "target": "gfx1100",
            "kernels": [{
                "name": "vector_add",
                "kernarg_size": 28,
                "group_segment_size": 0,
                "private_segment_size": 0,
                "wavefront_size": 32,
                "uses_dispatch_ptr": false,
                "entry_byte_offset": 0x1100,
                "args": [
                    {"offset": 0, "size": 8, "kind": "global_buffer", "type_name": "uint*"},
                    {"offset": 8, "size": 8, "kind": "global_buffer", "type_name": "uint*"},
                    {"offset": 16, "size": 8, "kind": "global_buffer", "type_name": "uint*"},
                    {"offset": 24, "size": 4, "kind": "by_value", "type_name": "uint"}
                ],
                "max_flat_workgroup_size": 64,
                "sgpr_count": 18,
                "vgpr_count": 6,
                "agpr_count": 0,
                "reqd_workgroup_size": [64, 1, 1],
                "kernarg_align": 8
            }]
        })
    );
    assert_eq!(stdout(&o).lines().count(), 1, "one JSON object on one line");
}

#[test]
fn json_for_every_fixture_matches_the_manifest() {
    let dir = fixture("");
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    for obj in manifest["objects"].as_array().unwrap() {
        let f = dir.join(obj["file"].as_str().unwrap());
        let o = hcq(&["--json".as_ref(), f.as_os_str()]);
        assert!(o.status.success(), "{}: {}", f.display(), stderr(&o));
        let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
        assert_eq!(v["target"], obj["target"]);
        let got = v["kernels"].as_array().unwrap();
        let want = obj["kernels"].as_array().unwrap();
        assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(want) {
            for key in [
                "name",
                "kernarg_size",
                "group_segment_size",
                "private_segment_size",
                "wavefront_size",
                "uses_dispatch_ptr",
            ] {
                assert_eq!(g[key], w[key], "{} {key}", f.display());
            }
            let entry = w["code_address"].as_i64().unwrap() - w["kd_address"].as_i64().unwrap();
            assert_eq!(g["entry_byte_offset"].as_i64(), Some(entry));
            // The metadata keys, as llvm-readelf --notes printed them.
            let llvm = obj["readelf_metadata"]["amdhsa.kernels"]
                .as_array()
                .unwrap()
                .iter()
                .find(|k| k[".name"] == g["name"])
                .unwrap();
            for (key, lkey) in [
                ("max_flat_workgroup_size", ".max_flat_workgroup_size"),
                ("sgpr_count", ".sgpr_count"),
                ("vgpr_count", ".vgpr_count"),
                ("kernarg_align", ".kernarg_segment_align"),
                ("kernarg_size", ".kernarg_segment_size"),
            ] {
                assert_eq!(g[key], llvm[lkey], "{} {key}", f.display());
            }
            assert_eq!(
                g["agpr_count"],
                *llvm.get(".agpr_count").unwrap_or(&0.into())
            );
            assert_eq!(
                g.get("reqd_workgroup_size"),
                llvm.get(".reqd_workgroup_size"),
                "{}",
                f.display()
            );
            let largs = llvm[".args"].as_array().unwrap();
            let gargs = g["args"].as_array().unwrap();
            assert_eq!(gargs.len(), largs.len());
            for (ga, la) in gargs.iter().zip(largs) {
                assert_eq!(ga["offset"], la[".offset"]);
                assert_eq!(ga["size"], la[".size"]);
                assert_eq!(ga["kind"], la[".value_kind"]);
                assert_eq!(ga.get("name"), la.get(".name"));
                assert_eq!(ga.get("type_name"), la.get(".type_name"));
            }
        }
    }
}

#[test]
fn text_lists_target_and_kernels() {
    let f = fixture("multi-gfx90a.co");
    let o = hcq(&[f.as_os_str()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("target      gfx90a (code object v5, e_flags 0x53f)"),
        "{out}"
    );
    assert!(out.contains("kernels     3"), "{out}");
    for k in ["vector_add_f32", "scale_f32", "copy_u32"] {
        assert!(out.lines().any(|l| l.trim() == k), "{k} in {out}");
    }
    let f = fixture("dispatch_ptr-gfx1201.co");
    let out = stdout(&hcq(&[f.as_os_str()]));
    assert!(
        out.contains("wave32  user SGPRs 4 (inputs take 4)  dispatch_ptr yes"),
        "{out}"
    );
}

#[test]
fn garbage_exits_nonzero_with_one_line() {
    let dir = std::env::temp_dir().join(format!("hcq-inspect-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let real = std::fs::read(fixture("vector_add-gfx1100.co")).unwrap();
    let mut cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("empty", vec![], "extends past the end of the file"),
        ("text", b"hello, world\n".to_vec(), "not an ELF file"),
        (
            "truncated",
            real[..1000].to_vec(),
            "extends past the end of the file",
        ),
    ];
    let mut x86 = real.clone();
    x86[18] = 62;
    cases.push(("x86", x86, "e_machine 62"));
    let mut random = vec![0u8; 4096];
    let mut s = 1u32;
    for b in &mut random {
        s = s.wrapping_mul(1_103_515_245).wrapping_add(12345);
        *b = (s >> 16) as u8;
    }
    cases.push(("random", random, ""));
    for (name, bytes, msg) in cases {
        let p = dir.join(name);
        std::fs::write(&p, bytes).unwrap();
        for json in [false, true] {
            let mut args = vec![p.as_os_str()];
            if json {
                args.insert(0, "--json".as_ref());
            }
            let o = hcq(&args);
            assert_eq!(o.status.code(), Some(1), "{name}");
            assert!(o.stdout.is_empty(), "{name}");
            let err = stderr(&o);
            // The error on one line, then what to do next.
            assert_eq!(err.lines().count(), 2, "{name}: {err}");
            assert!(
                err.lines().nth(1).is_some_and(|l| l.starts_with("next: ")),
                "{name}: {err}"
            );
            assert!(err.starts_with("hcq inspect: "), "{name}: {err}");
            assert!(err.contains(msg), "{name}: {err}");
            assert!(!err.contains("panicked"), "{name}: {err}");
        }
    }
    let o = hcq(&[dir.join("does-not-exist").as_os_str()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("cannot read"), "{}", stderr(&o));
    // Usage errors exit 2 with the usage; --help prints it and succeeds.
    for args in [
        &[][..],
        &["--frob".as_ref()][..],
        &["a".as_ref(), "b".as_ref()][..],
    ] {
        let o = hcq(args);
        assert_eq!(o.status.code(), Some(2));
        assert!(stderr(&o).contains("usage: hcq inspect"), "{}", stderr(&o));
    }
    let o = hcq(&["--help".as_ref()]);
    assert!(o.status.success());
    assert!(stdout(&o).starts_with("usage: hcq inspect"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn offload_bundle_entries() {
    let f = fixture("scale-hip.bundle");
    for t in ["gfx1100", "gfx90a", "gfx942", "gfx1201"] {
        let o = hcq(&[
            "--json".as_ref(),
            "--target".as_ref(),
            t.as_ref(),
            f.as_os_str(),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
        assert_eq!(v["target"], t);
        let k = &v["kernels"][0];
        assert_eq!(k["name"], "scale");
        assert_eq!(k["max_flat_workgroup_size"], 1024);
        assert_eq!(k["args"][1]["kind"], "by_value");
        assert!(
            k["args"]
                .as_array()
                .unwrap()
                .iter()
                .any(|a| a["kind"] == "hidden_group_size_x")
        );
    }
    let o = hcq(&["--target".as_ref(), "gfx1100".as_ref(), f.as_os_str()]);
    assert!(stdout(&o).contains("bundle entry hipv4-amdgcn-amd-amdhsa--gfx1100"));
    let o = hcq(&["--target".as_ref(), "gfx1030".as_ref(), f.as_os_str()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o)
            .contains("no code object for gfx1030; it holds gfx1100, gfx1201, gfx90a, gfx942"),
        "{}",
        stderr(&o)
    );
    // No --target and no GPU: several entries, so it asks for one.
    if !std::path::Path::new("/dev/kfd").exists() {
        let o = hcq(&[f.as_os_str()]);
        assert_eq!(o.status.code(), Some(1));
        assert!(
            stderr(&o).contains("pick one with --target"),
            "{}",
            stderr(&o)
        );
    }
}
