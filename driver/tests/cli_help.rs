//! Every sub-command answers `-h`/`--help` with its usage on stdout (exit 0); a usage error
//! exits 2 with the usage on stderr; a runtime failure exits 1 and ends with what to do next.

use std::io::Write as _;
use std::process::{Command, Output, Stdio};

const COMMANDS: &[&str] = &["info", "demo", "encode", "decode", "inspect", "bench"];

fn hcq(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_hcq"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run hcq");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn every_command_answers_help() {
    for cmd in COMMANDS {
        for flag in ["-h", "--help"] {
            let o = hcq(&[cmd, flag], "");
            let out = text(&o.stdout);
            assert_eq!(
                o.status.code(),
                Some(0),
                "hcq {cmd} {flag}: {}",
                text(&o.stderr)
            );
            assert!(
                out.starts_with(&format!("usage: hcq {cmd}")),
                "hcq {cmd} {flag}: {out}"
            );
            assert!(o.stderr.is_empty(), "hcq {cmd} {flag}: {}", text(&o.stderr));
        }
    }
    // The top level lists every command.
    let o = hcq(&["--help"], "");
    assert_eq!(o.status.code(), Some(0));
    let out = text(&o.stdout);
    for cmd in COMMANDS {
        assert!(out.contains(&format!("\n  {cmd} ")), "{cmd} in {out}");
    }
}

#[test]
fn usage_errors_exit_2_with_the_usage() {
    let cases: &[&[&str]] = &[
        &["info", "--bogus"],
        &["demo", "--mib", "0"],
        &["demo", "--chain"],
        &["encode"],
        &["decode", "--engine", "x86"],
        &["inspect", "--bogus"],
        &["bench", "--fast"],
        &["bench", "--budget", "no_such_metric=1"],
        &["frobnicate"],
        &[],
    ];
    for args in cases {
        let o = hcq(args, "");
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "hcq {args:?}: {err}");
        assert!(err.contains("usage: hcq"), "hcq {args:?}: {err}");
    }
}

#[test]
fn runtime_failures_exit_1_and_say_what_next() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["encode", "--engine", "pm4"],
            "{\"op\":\"nop\"}\n{\"op\":\"wait\"}\n",
        ),
        (&["decode", "--engine", "pm4"], "0xzz\n"),
        (&["decode", "--engine", "pm4"], "0xc0053c00 0x15\n"),
        (&["inspect", "/nonexistent.co"], ""),
    ];
    for (args, stdin) in cases {
        let o = hcq(args, stdin);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "hcq {args:?}: {err}");
        let last = err.trim_end().lines().last().unwrap_or_default();
        assert!(
            last.starts_with("next: "),
            "hcq {args:?} ends with a next step: {err}"
        );
        assert!(!err.contains("usage: hcq"), "not a usage error: {err}");
    }
}
