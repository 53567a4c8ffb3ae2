//! `hcq bench --json --quick`: one JSON object with every documented key, each a number or null.
//! No timing thresholds (machines are noisy); the numbers themselves are checked for sanity only
//! where they cannot depend on speed (positive, finite).

use std::process::Command;

#[path = "../src/cli/bench/keys.rs"]
mod keys;
use keys::{ALWAYS_MEASURED, KEYS, MEASURED_ON_SIM};

fn bench(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_hcq"))
        .arg("bench")
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn json_quick_has_every_key() {
    let o = bench(&["--json", "--quick"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let out = String::from_utf8(o.stdout).unwrap();
    assert_eq!(out.lines().count(), 1, "one JSON object on one line: {out}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    let obj = v.as_object().unwrap();
    assert!(obj["cpu"].is_string(), "cpu: {}", obj["cpu"]);
    assert!(!obj["cpu"].as_str().unwrap().is_empty());
    assert_eq!(obj["quick"], serde_json::Value::Bool(true));
    for k in KEYS {
        let x = obj
            .get(*k)
            .unwrap_or_else(|| panic!("missing key {k} in {out}"));
        assert!(x.is_number() || x.is_null(), "{k} is {x}");
    }
    let sim: &[&str] = if cfg!(feature = "sim") {
        MEASURED_ON_SIM
    } else {
        &[]
    };
    for k in ALWAYS_MEASURED.iter().chain(sim) {
        let x = obj[*k]
            .as_f64()
            .unwrap_or_else(|| panic!("{k} is not measured: {out}"));
        assert!(x.is_finite() && x > 0.0, "{k} = {x}");
    }
}

#[test]
fn table_lists_every_key() {
    let o = bench(&["--quick"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8(o.stdout).unwrap();
    assert!(out.starts_with("cpu: "), "{out}");
    for k in KEYS {
        assert_eq!(
            out.lines()
                .filter(|l| l.starts_with(&format!("{k} ")))
                .count(),
            1,
            "{k} in\n{out}"
        );
    }
}

#[test]
fn bad_argument_is_a_usage_error() {
    let o = bench(&["--fast"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(
        err.starts_with("hcq bench: unknown argument `--fast`\n\nusage: hcq bench "),
        "{err}"
    );
}

/// `--check` fails (exit 1) when a budget is missed and names it; an impossible budget
/// (`--budget`) makes the miss certain. The real budgets stay the defaults.
#[test]
fn check_fails_on_a_missed_budget_and_names_it() {
    let o = bench(&[
        "--quick",
        "--check",
        "--budget",
        "build_launch_ns=0.0001",
        "--budget",
        "demo_copy_in_gb_per_s=1e30",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}\n{err}");
    let line = err
        .lines()
        .find(|l| l.starts_with("hcq bench: ") && l.contains("missed"))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(line.contains("budget(s) missed: "), "{line}");
    assert!(line.contains("build_launch_ns = "), "{line}");
    assert!(line.contains("(budget <= 1.000e-4)"), "{line}");
    if cfg!(feature = "sim") {
        assert!(line.contains("demo_copy_in_gb_per_s = "), "{line}");
        assert!(line.contains("(budget >= 1.000e30)"), "{line}");
    }
    assert!(
        err.trim_end().lines().last().unwrap().starts_with("next: "),
        "{err}"
    );
    // The table still printed, with the misses marked.
    assert!(
        out.contains("build_launch_ns") && out.contains("MISSED"),
        "{out}"
    );
    // Without --check the same misses exit 0.
    let o = bench(&["--quick", "--budget", "build_launch_ns=0.0001"]);
    assert_eq!(o.status.code(), Some(0));
}

/// `--check` passes when every budget is met (generous overrides for every budgeted metric,
/// so the result does not depend on this machine's speed).
#[test]
fn check_passes_when_every_budget_is_met() {
    let mut args = vec!["--quick", "--check"];
    for b in [
        "build_launch_ns=1e12",
        "ring_submit_ns=1e12",
        "update_exec_ns=1e12",
        "update_wait_ns=1e12",
        "update_signal_ns=1e12",
        "demo_copy_in_gb_per_s=0",
        "driver_launch_ns=1e12",
        "driver_launch_aql_ns=1e12",
        "graph_patch_1000_over_floor=1e12",
        "graph_patch_1000_timeline_ns=1e12",
    ] {
        args.extend(["--budget", b]);
    }
    let o = bench(&args);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}
