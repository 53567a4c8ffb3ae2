//! `hcq info` and `hcq demo` end to end (on the embedded simulator).

use std::process::Command;

fn hcq(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_hcq"))
        .args(args)
        .output()
        .expect("run hcq");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn info_on_the_simulator() {
    let (ok, out, err) = hcq(&["info", "--sim"]);
    assert!(ok, "{err}");
    assert!(out.starts_with("--sim: using the simulated GPU"), "{out}");
    assert!(out.contains("KFD ioctl interface 1.14, 1 GPU(s)"), "{out}");
    assert!(out.contains("gpu 0: AMD Radeon RX 7900 XTX"), "{out}");
    assert!(
        out.contains("ISA                    amdgcn-amd-amdhsa--gfx1100"),
        "{out}"
    );
    assert!(
        out.contains("96 CUs, 2 SIMDs per CU, 32 waves per CU, wave32"),
        "{out}"
    );
    assert!(
        out.contains("LDS / L1 / L2 / L3     64 KiB / 32 KiB / 6 MiB / 96 MiB"),
        "{out}"
    );
}

#[test]
fn info_rejects_unknown_options() {
    let (ok, _, err) = hcq(&["info", "--bogus"]);
    assert!(!ok);
    assert!(err.contains("unknown option `--bogus`"), "{err}");
}

#[test]
fn demo_runs_and_verifies_on_the_simulator() {
    let (ok, out, err) = hcq(&["demo", "--sim", "--mib", "1", "--chain", "2", "--trace"]);
    assert!(ok, "{out}\n{err}");
    assert!(
        out.contains("verified all 262144 elements: c[i] = a[i] + b[i] + 2"),
        "{out}"
    );
    assert!(out.contains("copy in: 2 MiB"), "{out}");
    assert!(out.contains("copy out: 1 MiB"), "{out}");
    // fill, the first add and two chained adds.
    assert_eq!(out.matches("launch vector_add").count(), 3, "{out}");
    assert_eq!(out.matches("launch fill").count(), 1, "{out}");
    assert!(out.contains("timeline: last submitted"), "{out}");
    assert!(
        out.contains("DISPATCH_DIRECT"),
        "--trace prints decoded packets: {out}"
    );
    assert!(out.contains("SDMA_COPY_LINEAR"), "{out}");
    // Per-launch GPU times on the simulator are modelled, and say so. vector_add moves
    // 12 bytes per element: 3 MiB at gfx1100's 960 GB/s is 3.277 us, 328 ticks of 10 ns
    // (memory-bound: its issue cycles spread over 192 SIMDs take less); the timestamps
    // around it add one tick (10 ns) for each packet executed between them (the GPU's one
    // clock ticks per packet: ~14 here, the SET_SH_REGs and the dispatch).
    assert!(
        out.contains("GPU time per launch: modelled by the simulator"),
        "{out}"
    );
    let times: Vec<f64> = out
        .lines()
        .filter(|l| l.starts_with("launch vector_add"))
        .map(|l| {
            assert!(l.ends_with(" us GPU (modelled)"), "{l}");
            let us = l.split_whitespace().rev().nth(3).expect("a time");
            us.parse().expect("microseconds")
        })
        .collect();
    assert_eq!(times.len(), 3, "{out}");
    for t in times {
        assert!(
            (3.28..3.50).contains(&t),
            "modelled vector_add time {t} us in {out}"
        );
    }
    assert!(!out.contains("(measured)"), "{out}");
    // The summary table: every step, with the copies' rates.
    let summary = &out[out.find("\nsummary:\n").expect("a summary table")..];
    for step in [
        "open the device, load 2 kernels",
        "allocate 4 x 1 MiB VRAM",
        "copy in 2 x 1 MiB",
        "4 launches, 262144 elements each",
        "copy out 1 MiB",
        "verify 262144 elements",
        "record the chain as a graph (4 launches)",
        "graph replay, value 2 (patch + run)",
        "graph replay, value 5 (patch + run)",
    ] {
        assert!(
            summary.contains(&format!("  {step} ")),
            "{step} in {summary}"
        );
    }
    assert_eq!(summary.matches(" GB/s").count(), 2, "{summary}");
    // The chain as a graph, replayed with fill values 2 and 5 (2 chained adds each).
    assert!(
        out.contains("graph: the chain recorded once (4 launches"),
        "{out}"
    );
    assert!(
        out.contains("graph replay, value 2: ") && out.contains("c[i] = a[i] + b[i] + 4"),
        "{out}"
    );
    assert!(
        out.contains("graph replay, value 5: ") && out.contains("c[i] = a[i] + b[i] + 10"),
        "{out}"
    );
}

#[test]
fn demo_rejects_bad_sizes() {
    let (ok, _, err) = hcq(&["demo", "--sim", "--mib", "0"]);
    assert!(!ok);
    assert!(err.contains("--mib 0: expected 1..=4096"), "{err}");
}

#[test]
fn hcq_log_sets_the_stderr_log_level() {
    let run = |level: Option<&str>| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_hcq"));
        c.args(["info", "--sim"]);
        match level {
            Some(l) => c.env("HCQ_LOG", l),
            None => c.env_remove("HCQ_LOG"),
        };
        let out = c.output().expect("run hcq");
        assert!(out.status.success());
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let debug = run(Some("debug"));
    assert!(
        debug.contains("hcq [DEBUG hcq_driver::kfd] KFD ioctl version 1.14"),
        "{debug}"
    );
    assert!(!run(None).contains("[DEBUG"));
    let bogus = run(Some("bogus"));
    assert!(
        bogus.contains("HCQ_LOG=bogus is not off/error/warn/info/debug/trace; using warn"),
        "{bogus}"
    );
}
