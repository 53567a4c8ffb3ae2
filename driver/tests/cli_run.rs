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
            serde_json::json!([{"arg": 0, "type": "u32", "shape": [200], "written": true, "values": want}])
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
        serde_json::json!([{"arg": 0, "type": "f32", "shape": [8], "written": true, "values": [0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 7.0, 8.0]}])
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
            "argument 0 (uint*) is global_buffer uint*: pass buf:u32:SPEC, buf:u32:@FILE or out:u32:N (got buf:f32)",
        ),
        (
            &["--groups", "1", "--block", "64", "buf:u32:4*0", "i32:4"],
            "argument 1 (uint) is by_value uint: pass u32:VALUE (got i32:VALUE)",
        ),
        (
            &["--groups", "1", "--block", "64", "buf:u32:4*0"],
            "kernel global_id takes 2 arguments (argument 0 (uint*) global_buffer uint*: pass buf:u32:SPEC, buf:u32:@FILE or out:u32:N; argument 1 (uint) by_value uint: pass u32:VALUE), got 1",
        ),
        (
            &["--groups", "1", "--block", "64", "u32:4", "u32:4"],
            "argument 0 (uint*) is global_buffer uint*: pass buf:u32:SPEC",
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

/// A temporary directory of this test process.
fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("hcq-cli-run-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A `.npy` (format 1.0) written by hand from numpy's format document, independent of hcq's
/// writer: magic, version, u16 header length, the dict, spaces and '\n' to a multiple of 64.
fn npy(descr: &str, shape: &str, data: &[u8]) -> Vec<u8> {
    let mut h = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    while (10 + h.len() + 1) % 64 != 0 {
        h.push(' ');
    }
    h.push('\n');
    let mut f = b"\x93NUMPY\x01\x00".to_vec();
    f.extend_from_slice(&u16::try_from(h.len()).unwrap().to_le_bytes());
    f.extend_from_slice(h.as_bytes());
    f.extend_from_slice(data);
    f
}

/// Issue 31's "done when": a published-style kernel with a file input (.npy), a `__local`
/// argument (lds:BYTES), a vector argument (f32x2) and an output-only buffer runs in one line,
/// its output saved as .npy; on each simulated target.
#[test]
fn file_inputs_local_and_vector_arguments_with_npy_output() {
    let d = tmp("npy");
    let input: Vec<f32> = (0..1000).map(|i| (i % 17) as f32 * 0.5).collect();
    let bytes: Vec<u8> = input.iter().flat_map(|v| v.to_le_bytes()).collect();
    let inp = d.join("in.npy");
    std::fs::write(&inp, npy("<f4", "(1000,)", &bytes)).unwrap();
    let raw = d.join("in.f32");
    std::fs::write(&raw, &bytes).unwrap();
    let want: Vec<f32> = input
        .chunks(256)
        .map(|c| c.iter().sum::<f32>() * 2.0 + 1.0)
        .collect();
    for t in ["gfx1100", "gfx90a", "gfx942", "gfx1201"] {
        let f = fixture(&format!("reduce_local-{t}.co"));
        let save = d.join(t);
        for src in [&inp, &raw] {
            let file_arg = format!("buf:f32:@{}", src.display());
            let o = hcq(&[
                &f,
                "reduce_affine",
                "--groups",
                "4",
                "--block",
                "256",
                &file_arg,
                "out:f32:4",
                "lds:1024",
                "f32x2:2,1",
                "u32:1000",
                "--save",
                save.to_str().unwrap(),
            ]);
            assert!(o.status.success(), "{t}: {}", stderr(&o));
            let text = String::from_utf8(o.stdout).unwrap();
            // Only the written buffer is printed by default.
            assert!(!text.contains("arg 0"), "{text}");
            let line: Vec<String> = want.iter().map(|v| format!("{v:?}")).collect();
            assert!(
                text.contains(&format!("arg 1 (4 x f32): {}", line.join(" "))),
                "{t}: {text}"
            );
            let out: Vec<u8> = want.iter().flat_map(|v| v.to_le_bytes()).collect();
            assert_eq!(
                std::fs::read(save.join("arg1.npy")).unwrap(),
                npy("<f4", "(4,)", &out),
                "{t}"
            );
            assert_eq!(
                std::fs::read(save.join("arg0.npy")).unwrap(),
                npy("<f4", "(1000,)", &bytes),
                "{t}: the input saved as it was"
            );
        }
    }
    // --print all prints the input too; none prints only the summary line; JSON keeps both.
    let f = fixture("reduce_local-gfx1100.co");
    let file_arg = format!("buf:f32:@{}", inp.display());
    let base = [
        f.as_str(),
        "reduce_affine",
        "--groups",
        "4",
        "--block",
        "256",
        &file_arg,
        "out:f32:4",
        "lds:1024",
        "f32x2:2,1",
        "u32:1000",
    ];
    let run = |extra: &[&str]| {
        let mut a = base.to_vec();
        a.extend_from_slice(extra);
        hcq(&a)
    };
    let all = String::from_utf8(run(&["--print", "all"]).stdout).unwrap();
    assert!(
        all.contains("arg 0 (1000 x f32)") && all.contains("arg 1 (4 x f32)"),
        "{all}"
    );
    let none = String::from_utf8(run(&["--print", "none"]).stdout).unwrap();
    assert_eq!(none.lines().count(), 1, "{none}");
    let v = json(&run(&["--json"]));
    let b = v["buffers"].as_array().unwrap();
    assert_eq!(b.len(), 2);
    assert_eq!(b[0]["written"], false);
    assert_eq!(b[1]["written"], true);
    assert_eq!(b[1]["shape"], serde_json::json!([4]));
    // A 2-D .npy keeps its shape when saved.
    let d2 = d.join("2d");
    let arg = format!("buf:f32:@{}", {
        let p = d.join("m.npy");
        std::fs::write(&p, npy("<f4", "(4, 250)", &bytes)).unwrap();
        p.display().to_string()
    });
    let mut a = base.to_vec();
    a[6] = &arg;
    a.extend_from_slice(&["--save", d2.to_str().unwrap()]);
    let o = hcq(&a);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        std::fs::read(d2.join("arg0.npy")).unwrap(),
        npy("<f4", "(4, 250)", &bytes)
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// Wrong arguments name the metadata's kind and what to pass; a wrong file names the dtype.
#[test]
fn wrong_arguments_name_the_metadata_kind() {
    let d = tmp("wrong");
    let f = fixture("reduce_local-gfx1100.co");
    let u32s = d.join("u.npy");
    std::fs::write(&u32s, npy("<u4", "(2,)", &[0; 8])).unwrap();
    let odd = d.join("odd.bin");
    std::fs::write(&odd, [0u8; 7]).unwrap();
    let u32_arg = format!("buf:f32:@{}", u32s.display());
    let odd_arg = format!("buf:f32:@{}", odd.display());
    let cases: [(&[&str], &str); 6] = [
        (
            &["buf:f32:1,2", "out:f32:1", "f32:1", "f32x2:1,2", "u32:2"],
            "argument 2 (float*) is dynamic_shared_pointer: pass lds:BYTES (got f32:VALUE)",
        ),
        (
            &["buf:f32:1,2", "out:f32:1", "lds:64", "u32x2:1,2", "u32:2"],
            "argument 3 (float2) is by_value float2: pass f32x2:A,B (got u32x2)",
        ),
        (
            &["buf:f32:1,2", "out:f32:1", "lds:64", "f32:1", "u32:2"],
            "argument 3 (float2) is by_value float2: pass f32x2:A,B (got f32:VALUE)",
        ),
        (
            &["lds:8", "out:f32:1", "lds:64", "f32x2:1,2", "u32:2"],
            "argument 0 (float*) is global_buffer float*: pass buf:f32:SPEC, buf:f32:@FILE or out:f32:N (got lds:BYTES)",
        ),
        (
            &[&u32_arg, "out:f32:1", "lds:64", "f32x2:1,2", "u32:2"],
            "the array's dtype is '<u4', but the argument is f32 ('<f4')",
        ),
        (
            &[&odd_arg, "out:f32:1", "lds:64", "f32x2:1,2", "u32:2"],
            "7 bytes of raw data is not a whole number of f32 (4-byte) elements",
        ),
    ];
    for (args, msg) in cases {
        let mut all = vec![
            f.as_str(),
            "reduce_affine",
            "--groups",
            "1",
            "--block",
            "64",
        ];
        all.extend_from_slice(args);
        let o = hcq(&all);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(msg), "{args:?}: {}", stderr(&o));
    }
    // LDS above the device's: the parts named.
    let o = hcq(&[
        &f,
        "reduce_affine",
        "--groups",
        "1",
        "--block",
        "64",
        "buf:f32:1,2",
        "out:f32:1",
        "lds:70000",
        "f32x2:1,2",
        "u32:2",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("dynamic LDS 70000 bytes is above the 65536 bytes left (device LDS 65536 minus the kernel's static 0): __local arguments 70000"),
        "{}",
        stderr(&o)
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// A faulting run prints one error: the cause first, what KFD reported, the queue state and
/// `next:`; no log line repeats the fault and no buffer is reported leaked.
#[test]
fn a_fault_prints_one_clean_error() {
    if !no_gpu() {
        return; // The fault below is the simulator's.
    }
    // global_id writes 1 Mi u32s into a 4-byte buffer: the writes leave its mapping.
    let f = fixture("global_id-gfx1100.co");
    let o = hcq(&[
        &f,
        "global_id",
        "--groups",
        "4096",
        "--block",
        "256",
        "buf:u32:1*0",
        "u32:1048576",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(o.stdout.is_empty());
    let err = stderr(&o);
    let lines: Vec<&str> = err.lines().collect();
    // The simulator note, the error (4 lines), next.
    assert_eq!(lines.len(), 6, "{err}");
    assert!(lines[0].contains("running on a simulated gfx1100"), "{err}");
    assert!(
        lines[1]
            .starts_with("hcq run: kernel global_id faulted on gfx1100: GPU VM fault: write at 0x"),
        "{err}"
    );
    // The cause names the buffer the store ran past, and the argument it is.
    assert!(
        lines[1].contains(": no GPU mapping (0 bytes past the end of the 4096-byte buffer at 0x")
            && lines[1].ends_with(" (arg 0))"),
        "{err}"
    );
    assert!(
        lines[2].starts_with("  instruction: global_store_b32 ")
            && lines[2].contains(" at kernel offset 0x")
            && lines[2].contains(", wave "),
        "{err}"
    );
    assert!(
        lines[3].starts_with("  KFD reported: memory fault at 0x")
            && lines[3].contains("page not present"),
        "{err}"
    );
    assert!(lines[4].starts_with("  queue state: signal at "), "{err}");
    assert!(
        lines[4].contains("rptr") && !lines[4].contains("fault"),
        "{err}"
    );
    assert!(
        lines[5].starts_with("next: an access outside the kernel's buffers"),
        "{err}"
    );
    assert!(
        !err.contains("ERROR") && !err.contains("WARN") && !err.contains("leak"),
        "{err}"
    );
}
