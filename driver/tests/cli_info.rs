//! `hcq info --json`: one object with the documented keys (driver/README.md), on the simulator.

use std::process::Command;

#[path = "../src/cli/info_keys.rs"]
mod info_keys;
use info_keys::GPU_KEYS;

#[test]
fn info_json_has_the_schema_keys() {
    let o = Command::new(env!("CARGO_BIN_EXE_hcq"))
        .args(["info", "--sim", "--json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8(o.stdout).unwrap();
    assert_eq!(out.lines().count(), 1, "one JSON object on one line: {out}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let top = v.as_object().unwrap();
    let mut keys: Vec<&str> = top.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(keys, ["backend", "gpus", "kfd_version"]);
    assert_eq!(v["kfd_version"], "1.14");
    assert_eq!(v["backend"], "sim");
    let gpus = v["gpus"].as_array().unwrap();
    assert_eq!(gpus.len(), 1);
    let g = gpus[0].as_object().unwrap();
    let mut want = GPU_KEYS.to_vec();
    want.sort_unstable();
    let mut got: Vec<&str> = g.keys().map(String::as_str).collect();
    got.sort_unstable();
    assert_eq!(got, want);
    // Numbers are in bytes and Hz; the simulated gfx1100 is a 7900 XTX.
    assert_eq!(g["gfx_target"], "gfx1100");
    assert_eq!(g["max_workgroup_size"], 1024);
    assert_eq!(g["lds_bytes"], 65536);
    assert_eq!(g["max_engine_clock_hz"], 2_482_000_000u64);
    assert_eq!(g["vram_bytes"], 24u64 << 30);
    for k in ["queues", "features"] {
        assert!(g[k].is_object(), "{k}: {}", g[k]);
    }
}

/// A mistyped `HCQ_SIM_*` value is an error naming the variable, its value and the values it
/// takes, never a silent fallback to the default.
#[test]
fn a_mistyped_sim_variable_is_an_error_that_names_it() {
    for (var, value, accepted) in [
        ("HCQ_SIM_SEED", "12abc", "decimal or 0x hex"),
        ("HCQ_SIM_DISPATCH", "synch", "`sync`"),
        ("HCQ_SIM_KERNEL", "six", "a Linux version"),
        ("HCQ_SIM_HOST_GUARD", "yes", "`1` (host guard on) or `0`"),
        (
            "HCQ_SIM_INSTRUCTION_BUDGET",
            "lots",
            "a number of wave instructions above 0",
        ),
        (
            "HCQ_SIM_INSTRUCTION_BUDGET",
            "0",
            "a number of wave instructions above 0",
        ),
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_hcq"))
            .args(["info", "--sim", "--json"])
            .env(var, value)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{var}={value} was accepted");
        assert!(
            err.contains(&format!("{var}=\"{value}\"")) && err.contains(accepted),
            "{var}: {err}"
        );
    }
}
