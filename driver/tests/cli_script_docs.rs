//! Runs every example of driver/README.md's "Command scripts" section: each
//! `$ hcq ARGS <<'EOF'` block's input goes to `hcq ARGS` on stdin, and the output must be the
//! lines after `EOF` exactly. So the documented ops, fields and dwords cannot drift from the
//! CLI; every op of both engines must have an example.

use std::io::Write as _;
use std::process::{Command, Stdio};

struct Example {
    args: Vec<String>,
    input: String,
    output: String,
}

fn examples() -> Vec<Example> {
    let readme = include_str!("../README.md");
    let start = readme
        .find("## Command scripts")
        .expect("the README has a Command scripts section");
    let section = &readme[start..];
    let section = section[2..]
        .find("\n## ")
        .map_or(section, |end| &section[..end + 2]);
    let mut out = Vec::new();
    let mut lines = section.lines();
    while let Some(l) = lines.next() {
        let Some(cmd) = l.strip_prefix("$ hcq ") else {
            continue;
        };
        let args = cmd
            .strip_suffix(" <<'EOF'")
            .expect("examples read their input from a heredoc")
            .split_whitespace()
            .map(str::to_owned)
            .collect();
        let mut input = String::new();
        for l in lines.by_ref().take_while(|l| *l != "EOF") {
            input.push_str(l);
            input.push('\n');
        }
        let mut output = String::new();
        for l in lines.by_ref().take_while(|l| *l != "```") {
            output.push_str(l);
            output.push('\n');
        }
        out.push(Example {
            args,
            input,
            output,
        });
    }
    out
}

fn run(e: &Example) -> (bool, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_hcq"))
        .args(&e.args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(e.input.as_bytes())
        .unwrap();
    let o = child.wait_with_output().unwrap();
    (
        o.status.success(),
        String::from_utf8(o.stdout).unwrap(),
        String::from_utf8(o.stderr).unwrap(),
    )
}

#[test]
fn every_documented_example_runs_as_shown() {
    let ex = examples();
    assert!(ex.len() >= 17, "found {} examples", ex.len());
    for e in &ex {
        let (ok, out, err) = run(e);
        assert!(ok, "hcq {:?} failed: {err}", e.args);
        assert_eq!(out, e.output, "hcq {:?} with input\n{}", e.args, e.input);
    }
}

#[test]
fn every_op_has_an_example() {
    let ex = examples();
    let has = |engine: &str, op: &str| {
        ex.iter().any(|e| {
            e.args.first().is_some_and(|a| a == "encode")
                && e.args.iter().any(|a| a == engine)
                && e.input.contains(&format!("\"op\":\"{op}\""))
        })
    };
    for op in [
        "memory_barrier",
        "indirect_buffer",
        "exec",
        "wait",
        "signal",
        "timestamp",
        "update_exec",
        "update_wait",
        "update_signal",
    ] {
        assert!(has("pm4", op), "pm4 {op}");
    }
    for op in [
        "copy",
        "wait",
        "signal",
        "timestamp",
        "update_wait",
        "update_signal",
    ] {
        assert!(has("sdma", op), "sdma {op}");
    }
    assert!(
        ex.iter()
            .any(|e| e.args.first().is_some_and(|a| a == "decode"))
    );
}
