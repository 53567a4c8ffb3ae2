//! The simulated GPU as the user asks for it (issue 44): `--sim-target`, `--xcc`, `--gpus` and
//! `HCQ_SIM_TARGET` / `HCQ_SIM_XCC` / `HCQ_SIM_GPUS` on the commands that run on the
//! simulator; refusals name what is accepted; help texts list the flags.

use std::process::{Command, Output};

fn hcq(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_hcq"));
    c.args(args);
    for v in ["HCQ_SIM_TARGET", "HCQ_SIM_XCC", "HCQ_SIM_GPUS", "HCQ_AQL"] {
        c.env_remove(v);
    }
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

fn info_json(o: &Output) -> serde_json::Value {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// `hcq info --json` shows the GPUs, XCCs and queue kind asked for, by flag or variable.
#[test]
fn info_takes_the_simulated_gpu_by_flag_and_by_variable() {
    let by_flag = info_json(&hcq(
        &[
            "info",
            "--json",
            "--sim-target",
            "gfx942",
            "--xcc=8",
            "--gpus",
            "2",
        ],
        &[],
    ));
    let by_env = info_json(&hcq(
        &["info", "--json"],
        &[
            ("HCQ_SIM_TARGET", "gfx942"),
            ("HCQ_SIM_XCC", "8"),
            ("HCQ_SIM_GPUS", "2"),
        ],
    ));
    for v in [&by_flag, &by_env] {
        let gpus = v["gpus"].as_array().unwrap();
        assert_eq!(gpus.len(), 2, "{v}");
        for g in gpus {
            assert_eq!(g["gfx_target"], "gfx942");
            assert_eq!(g["num_xcc"], 8);
            assert_eq!(g["compute_units"], 304);
            assert_eq!(g["compute_queue"], "aql");
        }
    }
    // A flag wins over its variable; one XCC gets PM4 unless HCQ_AQL=1.
    let v = info_json(&hcq(
        &["info", "--json", "--xcc", "1", "--sim-target", "gfx90a"],
        &[("HCQ_SIM_XCC", "8"), ("HCQ_SIM_TARGET", "gfx942")],
    ));
    assert_eq!(v["gpus"][0]["gfx_target"], "gfx90a");
    assert_eq!(v["gpus"][0]["num_xcc"], 1);
    assert_eq!(v["gpus"][0]["compute_queue"], "pm4");
    let v = info_json(&hcq(&["info", "--json"], &[("HCQ_AQL", "1")]));
    assert_eq!(v["gpus"][0]["compute_queue"], "aql");
    let text = hcq(&["info", "--sim-target", "gfx942", "--xcc", "8"], &[]);
    let out = String::from_utf8_lossy(&text.stdout);
    assert!(out.contains("XCCs / compute queue   8 / AQL"), "{out}");
}

/// Bad values are usage errors (exit 2) naming what is accepted; a count the target has no
/// partition for is the simulator's refusal (exit 1) saying which it has.
#[test]
fn refusals_name_what_is_accepted() {
    for (args, want) in [
        (&["info", "--xcc", "3"][..], "1, 2, 4 or 8"),
        (
            &["demo", "--sim-target", "gfx803"][..],
            "gfx1100, gfx90a, gfx942, gfx1201",
        ),
        (&["selftest", "--gpus", "17"][..], "1 to 16"),
        (&["bench", "--gpus"][..], "--gpus needs a value"),
    ] {
        let o = hcq(args, &[]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
    let o = hcq(&["info", "--xcc", "8"], &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("XCC"), "{err}");
    let o = hcq(&["info"], &[("HCQ_SIM_GPUS", "zero")]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("HCQ_SIM_GPUS"), "{err}");
}

/// `hcq --help` and each simulator command's help list the flags; other commands take none.
#[test]
fn help_lists_the_flags() {
    let o = hcq(&["--help"], &[]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("--sim-target T, --xcc N, --gpus N"), "{out}");
    assert!(out.contains("HCQ_AQL"), "{out}");
    for cmd in ["info", "demo", "bench", "selftest", "run"] {
        let o = hcq(&[cmd, "--help"], &[]);
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(
            out.contains("--sim-target T") && out.contains("--xcc N") && out.contains("--gpus N"),
            "{cmd}: {out}"
        );
    }
    let o = hcq(&["decode", "--xcc", "8"], &[]);
    assert_eq!(o.status.code(), Some(2), "decode takes no --xcc");
}

/// `hcq run` on the GPU asked for: a gfx942 code object on an 8-XCC MI300X (AQL).
#[test]
fn run_takes_the_simulated_gpu() {
    let co = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../core/tests/fixtures/kernels/global_id-gfx942.co"
    );
    if !std::path::Path::new(co).exists() {
        panic!("fixture {co} missing");
    }
    let o = hcq(
        &[
            "run",
            co,
            "global_id",
            "--groups",
            "4",
            "--block",
            "64",
            "buf:u32:256*0",
            "u32:256",
            "--xcc",
            "8",
            "--json",
        ],
        &[],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("running on a simulated gfx942 (8 XCCs)"),
        "{err}"
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let text = v.to_string();
    assert!(text.contains("255"), "{text}");
}
