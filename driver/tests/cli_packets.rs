//! `hcq encode` / `hcq decode` run as the built binary: golden cases from
//! core/tests/golden/seed_vectors.json (the seed's own encodings) fed as command scripts, and bad
//! input that must fail with the line/field or dword index.

use std::io::Write as _;
use std::process::{Command, Stdio};

use serde_json::Value;

const VECTORS: &str = include_str!("../../core/tests/golden/seed_vectors.json");

fn hcq(args: &[&str], stdin: &str) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_hcq"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn cases() -> Vec<Value> {
    serde_json::from_str(VECTORS).unwrap()
}

#[test]
fn encode_matches_seed_golden() {
    let cases = cases();
    // A spread of cases of both engines (single commands, patched lists, dispatch packets).
    let picked: Vec<&Value> = cases.iter().step_by(9).collect();
    assert!(picked.len() >= 15);
    for case in picked {
        let engine = case["engine"].as_str().unwrap();
        let script: String = case["ops"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| format!("{o}\n"))
            .collect();
        let (code, out, err) = hcq(&["encode", "--engine", engine], &script);
        assert_eq!(code, 0, "stderr: {err}");
        let mut dwords = Vec::new();
        let mut dps = serde_json::Map::new();
        let n_cmds = case["cmd_offsets"].as_array().unwrap().len();
        let lines: Vec<Value> = out
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), n_cmds, "one output line per command");
        for (i, l) in lines.iter().enumerate() {
            assert_eq!(l["cmd"], i);
            assert!(
                out.lines()
                    .nth(i)
                    .unwrap()
                    .starts_with(&format!("{{\"cmd\":{i},\"op\":"))
            );
            dwords.extend(l["dwords"].as_array().unwrap().iter().cloned());
            if let Some(dp) = l.get("dispatch_packet") {
                dps.insert(i.to_string(), dp.clone());
            }
        }
        assert_eq!(&Value::Array(dwords), &case["dwords"], "{script}");
        if engine == "pm4" {
            assert_eq!(&Value::Object(dps), &case["dispatch_packets"]);
        }
    }
}

#[test]
fn decode_prints_every_packet() {
    let cases = cases();
    let case = cases
        .iter()
        .find(|c| c["engine"] == "pm4" && c["ops"].as_array().unwrap().len() > 3)
        .unwrap();
    let text: String = case["dwords"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| format!("{:#x} ", d.as_u64().unwrap()))
        .collect();
    let (code, out, err) = hcq(&["decode", "--engine", "pm4"], &text);
    assert_eq!(code, 0, "{err}");
    assert!(out.lines().count() >= 4);
    assert!(out.lines().next().unwrap().starts_with("0: "));
    // TIMESTAMP sub-op 0 (SET) is not decoded: one packet, then the error at dword 5.
    let (code, out, err) = hcq(&["decode", "--engine", "sdma"], "17 0 0xc3e0 0 0\n13 0 0\n");
    assert_eq!(code, 1);
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(
        err.contains("dword 5: unknown opcode 0xd (sub-op 0x0)"),
        "{err}"
    );
    let (code, out, _) = hcq(&["decode", "--engine", "sdma"], "0x20d 16 0");
    assert_eq!(code, 0);
    assert_eq!(out, "0: SDMA_TIMESTAMP_GET_GLOBAL addr=0x10\n");
}

#[test]
fn bad_input_names_line_field_or_dword() {
    let (code, _, err) = hcq(
        &["encode", "--engine", "pm4"],
        "{\"op\":\"memory_barrier\"}\n{\"op\":\"wait\",\"signal\":{\"addr\":8},\"value\":4294967296}\n",
    );
    assert_eq!(code, 1);
    assert!(err.contains("line 2: field `value`"), "{err}");
    let (code, _, err) = hcq(&["encode", "--engine", "sdma"], "{\"op\":\"exec\"}\n");
    assert_eq!(code, 1);
    assert!(err.contains("line 1: field `op`"), "{err}");
    let (code, _, err) = hcq(
        &["encode", "--engine", "pm4"],
        "{\"op\":\"update_wait\",\"cmd\":0,\"value\":1}\n",
    );
    assert_eq!(code, 1);
    assert!(err.contains("line 1: field `cmd`"), "{err}");
    let (code, _, err) = hcq(&["encode", "--engine", "pm4"], "not json\n");
    assert_eq!(code, 1);
    assert!(err.contains("line 1"), "{err}");
    let (code, _, err) = hcq(
        &["encode", "--engine", "pm4"],
        "{\"op\":\"wait\",\"signal\":{\"addr\":8},\"value\":1,\"extra\":2}\n",
    );
    assert_eq!(code, 1);
    assert!(err.contains("field `extra`"), "{err}");
    // A missing --engine is a usage error: exit 2.
    let (code, _, err) = hcq(&["encode"], "");
    assert_eq!(code, 2);
    assert!(err.contains("--engine"), "{err}");
    // decode: a truncated RELEASE_MEM after one good WAIT_REG_MEM.
    let (code, out, err) = hcq(
        &["decode", "--engine", "pm4"],
        "0xC0053C00 0x15 8 0 1 0xffffffff 4 0xC0064900 1 2",
    );
    assert_eq!(code, 1);
    assert_eq!(out.lines().count(), 1);
    assert!(err.contains("dword 7"), "{err}");
    let (code, _, err) = hcq(&["decode", "--engine", "pm4"], "0xC0053C00 zz");
    assert_eq!(code, 1);
    assert!(err.contains("dword 1"), "{err}");
    let (code, _, err) = hcq(&["decode", "--engine", "sdma"], "0x0000ff01");
    assert_eq!(code, 1);
    assert!(err.contains("dword 0: unknown opcode"), "{err}");
}
