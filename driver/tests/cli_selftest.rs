//! `hcq selftest`: on the simulator (no /dev/kfd in CI) every check passes, the JSON names the
//! GPU, firmware, kernel and KFD versions; the kernels it embeds are the fixtures, byte for byte.

use std::path::Path;
use std::process::Command;

#[test]
fn every_check_passes_on_the_simulator() {
    if Path::new("/dev/kfd").exists() {
        return; // On a GPU the result is the GPU's: run `hcq selftest` by hand.
    }
    let o = Command::new(env!("CARGO_BIN_EXE_hcq"))
        .args(["selftest", "--json"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["backend"], "simulator");
    assert_eq!(r["gpu"]["target"], "gfx1100");
    assert!(r["kernel"].as_str().is_some_and(|k| !k.is_empty()));
    assert!(
        r["kfd_version"]
            .as_str()
            .is_some_and(|v| v.starts_with("1."))
    );
    assert!(r["firmware"].is_object());
    let checks = r["checks"].as_array().unwrap();
    let names: Vec<&str> = checks.iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "topology",
            "alloc:vram",
            "alloc:vram-visible",
            "alloc:gtt",
            "alloc:gtt-uncached",
            "alloc:host",
            "copy:1",
            "copy:4096",
            "copy:65537",
            "copy:4194304",
            "kernel:fill",
            "kernel:vector_add",
            "kernel:global_id",
            "kernel:lds_reverse",
            "kernel:grid_size",
            "kernel:scratch_sum",
            "kernel:reduce_sum",
            "refusals",
            "graph",
            "timestamps",
            "aql",
            "peer",
            "fault",
        ]
    );
    // AQL and XCC facts for a GPU owner's report: the simulated gfx1100 has one XCC and a PM4
    // queue; the "aql" check ran a dispatch on an AQL queue forced beside it.
    assert_eq!(r["gpu"]["num_xcc"], 1);
    assert_eq!(r["gpu"]["compute_queue"], "pm4");
    for c in checks {
        assert_eq!(c["pass"], true, "{c}");
        assert!(c["error"].is_null(), "{c}");
        assert!(c["ms"].as_f64().is_some_and(|ms| ms >= 0.0), "{c}");
    }
    assert_eq!(r["passed"], checks.len());
    assert_eq!(r["failed"], 0);
    let fault = &checks[checks.len() - 1];
    assert!(
        fault["detail"]
            .as_str()
            .unwrap()
            .contains("GPU memory fault at 0x"),
        "{fault}"
    );
    // Text output: one line per check, then the summary.
    let o = Command::new(env!("CARGO_BIN_EXE_hcq"))
        .arg("selftest")
        .output()
        .unwrap();
    assert!(o.status.success());
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(text.ends_with("23 passed, 0 failed\n"), "{text}");
    assert_eq!(
        text.lines().filter(|l| l.starts_with("  pass ")).count(),
        23
    );
}

#[test]
fn embedded_kernels_are_the_fixtures() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = here.join("fixtures");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let e = e.unwrap();
        let fixture = here
            .join("../core/tests/fixtures/kernels")
            .join(e.file_name());
        assert_eq!(
            std::fs::read(e.path()).unwrap(),
            std::fs::read(&fixture).unwrap(),
            "{} differs from {}: copy the rebuilt fixture",
            e.path().display(),
            fixture.display()
        );
        n += 1;
    }
    // 7 kernels x 4 targets, and the HIP bundle the demo and `hcq run` docs use.
    assert_eq!(n, 29);
}

#[test]
fn a_wrong_gpu_index_says_how_many_there_are() {
    if Path::new("/dev/kfd").exists() {
        return;
    }
    let o = Command::new(env!("CARGO_BIN_EXE_hcq"))
        .args(["selftest", "--gpu", "7"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("there is no GPU 7: 2 GPU(s)"), "{err}");
}
