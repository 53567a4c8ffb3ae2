//! `hcq run` on the committed fixtures (the simulator runs them: no /dev/kfd in CI), through
//! the built binary: JSON and text output, the simulated GPU taking the object's target,
//! offload bundles, refusals (exit 1) and usage errors (exit 2).

use std::path::PathBuf;
use std::process::{Command, Output};

fn fixture(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../core/tests/fixtures/kernels")
        .join(name)
        .display()
        .to_string()
}

fn hcq(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hcq"))
        .arg("run")
        .args(args)
        .output()
        .unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

fn json(o: &Output) -> serde_json::Value {
    assert!(o.status.success(), "{}", stderr(o));
    let out = String::from_utf8(o.stdout.clone()).unwrap();
    assert_eq!(out.lines().count(), 1, "one JSON object on one line: {out}");
    serde_json::from_str(out.trim()).unwrap()
}

fn no_gpu() -> bool {
    !std::path::Path::new("/dev/kfd").exists()
}

#[test]
fn global_id_json_on_each_simulated_target() {
    if !no_gpu() {
        return; // The expectations below are the simulator's (target and GPU time).
    }
    for t in ["gfx1100", "gfx90a", "gfx942", "gfx1201"] {
        let f = fixture(&format!("global_id-{t}.co"));
        let o = hcq(&[
            &f,
            "global_id",
            "--groups",
            "3",
            "--block",
            "64",
            "buf:u32:200*7",
            "u32:150",
            "--json",
        ]);
        let v = json(&o);
        let mut want: Vec<u32> = (0..150).collect();
        want.extend([7; 50]);
        assert_eq!(v["kernel"], "global_id");
        assert_eq!(
            v["target"], t,
            "the simulated GPU takes the object's target"
        );
        assert_eq!(v["groups"], serde_json::json!([3, 1, 1]));
        assert_eq!(v["block"], serde_json::json!([64, 1, 1]));
        assert_eq!(
            v["buffers"],
            serde_json::json!([{"arg": 0, "type": "u32", "values": want}])
        );
        assert!(v["gpu_time_ns"].is_u64());
        if no_gpu() {
            assert_eq!(v["gpu_time_kind"], "modelled");
            // 3 x 64 items storing 4 bytes each: memory-bound, under a microsecond, never 0.
            let ns = v["gpu_time_ns"].as_u64().unwrap();
            assert!((10..1000).contains(&ns), "{t}: {ns} ns");
        }
        assert!(stderr(&o).contains(&format!("running on a simulated {t}")));
    }
}

#[test]
fn hip_bundle_with_floats_and_text_output() {
    let f = fixture("scale-hip.bundle");
    let o = hcq(&[
        &f,
        "scale",
        "--groups",
        "2",
        "--block",
        "4,1",
        "buf:f32:1,2,3,4,5,6,7,8",
        "f32:0.5",
        "u32:6",
        "--json",
    ]);
    let v = json(&o);
    assert_eq!(
        v["buffers"],
        serde_json::json!([{"arg": 0, "type": "f32", "values": [0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 7.0, 8.0]}])
    );
    let o = hcq(&[
        &f,
        "scale",
        "--groups",
        "1",
        "--block",
        "4",
        "buf:f32:iota:4",
        "f32:2",
        "u32:4",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(text.starts_with("scale on "), "{text}");
    assert!(text.contains("arg 0 (4 x f32): 0.0 2.0 4.0 6.0"), "{text}");
}

#[test]
fn refusals_exit_1_with_the_reason() {
    let f = fixture("global_id-gfx1100.co");
    let cases: [(&[&str], &str); 6] = [
        (
            &["--groups", "1", "--block", "512", "buf:u32:4*0", "u32:4"],
            "above 256 (the kernel's max_flat_workgroup_size)",
        ),
        (
            &["--groups", "1", "--block", "64", "buf:f32:4*0", "u32:4"],
            "argument 0 (uint*) is a buffer of uint, got buf:f32",
        ),
        (
            &["--groups", "1", "--block", "64", "buf:u32:4*0", "i32:4"],
            "argument 1 (uint) is a uint, got i32",
        ),
        (
            &["--groups", "1", "--block", "64", "buf:u32:4*0"],
            "kernel global_id takes 2 arguments (argument 0 (uint*) buf:TYPE:SPEC, argument 1 (uint) TYPE:VALUE), got 1",
        ),
        (
            &["--groups", "1", "--block", "64", "u32:4", "u32:4"],
            "argument 0 (uint*) is a global_buffer",
        ),
        (
            &[
                "--groups",
                "1",
                "--block",
                "64",
                "buf:u32:4*0",
                "u32:4",
                "--dynamic-lds",
                "1000000",
            ],
            "dynamic LDS 1000000 bytes is above",
        ),
    ];
    for (args, msg) in cases {
        let mut all = vec![f.as_str(), "global_id"];
        all.extend_from_slice(args);
        let o = hcq(&all);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stderr(&o));
        assert!(o.stdout.is_empty());
        assert!(stderr(&o).contains(msg), "{args:?}: {}", stderr(&o));
    }
    let o = hcq(&[&f, "nope", "--groups", "1", "--block", "64"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("no kernel nope"), "{}", stderr(&o));
    if no_gpu() {
        // A gfx1030 object (the gfx1100 fixture with e_flags' EF_AMDGPU_MACH set to gfx1030):
        // a target the simulator has no GPU for.
        let mut co = std::fs::read(fixture("global_id-gfx1100.co")).unwrap();
        co[48] = 0x36;
        let g1030 =
            std::env::temp_dir().join(format!("hcq-cli-run-{}-gfx1030.co", std::process::id()));
        std::fs::write(&g1030, &co).unwrap();
        let g1030 = g1030.to_str().unwrap().to_owned();
        let o = hcq(&[
            &g1030,
            "global_id",
            "--groups",
            "1",
            "--block",
            "64",
            "buf:u32:1*0",
            "u32:1",
        ]);
        let _ = std::fs::remove_file(&g1030);
        assert_eq!(o.status.code(), Some(1));
        assert!(
            stderr(&o).contains("the simulator has no GPU for gfx1030"),
            "{}",
            stderr(&o)
        );
    }
}

#[test]
fn usage_errors_exit_2() {
    let f = fixture("global_id-gfx1100.co");
    for args in [
        &[][..],
        &[f.as_str()][..],
        &[f.as_str(), "global_id", "--block", "64"][..],
        &[
            f.as_str(),
            "global_id",
            "--groups",
            "1",
            "--block",
            "1,2,3,4",
        ][..],
        &[
            f.as_str(),
            "global_id",
            "--groups",
            "1",
            "--block",
            "64",
            "u8:300",
        ][..],
        &[
            f.as_str(),
            "global_id",
            "--groups",
            "1",
            "--block",
            "64",
            "--frob",
        ][..],
        &[
            f.as_str(),
            "global_id",
            "--groups",
            "1",
            "--block",
            "64",
            "buf:u32:iota:x",
        ][..],
    ] {
        let o = hcq(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("usage: hcq run FILE KERNEL"),
            "{args:?}"
        );
    }
    let o = hcq(&["--help"]);
    assert!(o.status.success());
    assert!(
        String::from_utf8(o.stdout)
            .unwrap()
            .starts_with("usage: hcq run")
    );
}
