//! `hcq encode --engine pm4|sdma [--arch gfx1100]`: reads a command script on stdin (one JSON
//! object per line), prints one JSON object per command after all input is read:
//! `{"cmd": i, "op": "...", "dwords": [...]}` (plus `"dispatch_packet": [64 bytes]` for an exec
//! whose kernel takes a dispatch pointer). Patch lines (`update_exec`, `update_wait`,
//! `update_signal`) print nothing and change command `cmd` (counted from 0 in input order).

use std::io::Read as _;

use hcq_core::addr::GpuVa;
use hcq_core::arch::{ArchInfo, GfxTarget};
use hcq_core::cmd::{ExecCmd, Pm4List, SdmaList, SignalCmd, WaitCmd};
use hcq_core::pm4::{DispatchInfo, Program};
use hcq_core::signal::SignalRef;
use serde_json::{Map, Value, json};

const USAGE: &str = "usage: hcq encode --engine pm4|sdma [--arch gfxNNNN] < script.jsonl";

/// `hcq encode`'s help text.
pub const HELP: &str = "\
usage: hcq encode --engine pm4|sdma [--arch gfxNNNN] < script.jsonl

Reads a command script on stdin (one JSON object per line, named after tinygrad's HWPM4Queue /
HWCopyQueue methods) and prints one JSON object per command: {\"cmd\": i, \"op\": ..., \"dwords\": [...]}.
Every op and its fields: driver/README.md, \"Command scripts\".

options:
  --engine pm4|sdma   the queue the script is for (required)
  --arch gfxNNNN      the target whose encodings to use (default gfx1100)
";

/// Which queue the script is for.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum EngineArg {
    Pm4,
    Sdma,
}

/// Parses `--engine` and `--arch` (shared with `decode`).
pub(crate) fn parse_args(
    args: &[String],
    usage: &str,
) -> Result<(EngineArg, &'static ArchInfo), String> {
    let mut engine = None;
    let mut arch = GfxTarget::parse("gfx1100").map_err(|e| e.to_string())?;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--engine" => {
                engine = Some(match it.next().map(String::as_str) {
                    Some("pm4") => EngineArg::Pm4,
                    Some("sdma") => EngineArg::Sdma,
                    Some(other) => {
                        return Err(format!(
                            "--engine must be pm4 or sdma, not `{other}` ({usage})"
                        ));
                    }
                    None => return Err(format!("--engine needs a value ({usage})")),
                })
            }
            "--arch" => {
                let v = it
                    .next()
                    .ok_or_else(|| format!("--arch needs a value ({usage})"))?;
                arch = GfxTarget::parse(v).map_err(|e| format!("--arch `{v}`: {e}"))?;
            }
            other => return Err(format!("unknown argument `{other}` ({usage})")),
        }
    }
    let engine = engine.ok_or_else(|| format!("--engine is required ({usage})"))?;
    Ok((engine, arch.info()))
}

/// Runs `hcq encode`.
pub fn run(args: &[String]) -> Result<(), super::CliError> {
    let (engine, arch) = parse_args(args, USAGE).map_err(super::CliError::Usage)?;
    let mut input = String::new();
    std::io::stdin()
        .read_to_string(&mut input)
        .map_err(|e| format!("cannot read stdin: {e}"))?;
    let lines = encode_script(&input, engine, arch).map_err(|e| {
        super::CliError::failed_with(
            e,
            "fix that line; every op and its fields are in driver/README.md (Command scripts)",
        )
    })?;
    for line in lines {
        println!("{line}");
    }
    Ok(())
}

/// A field error on one input line.
fn err(line: usize, field: &str, what: impl core::fmt::Display) -> String {
    format!("line {line}: field `{field}`: {what}")
}

struct Line<'a> {
    n: usize,
    obj: &'a Map<String, Value>,
}

impl<'a> Line<'a> {
    fn get(&self, k: &str) -> Result<&'a Value, String> {
        self.obj.get(k).ok_or_else(|| err(self.n, k, "missing"))
    }
    fn u64_of(&self, k: &str, v: &Value) -> Result<u64, String> {
        v.as_u64().ok_or_else(|| {
            err(
                self.n,
                k,
                format!("{v} is not a non-negative integer below 2^64"),
            )
        })
    }
    fn u64(&self, k: &str) -> Result<u64, String> {
        self.u64_of(k, self.get(k)?)
    }
    fn u32_of(&self, k: &str, v: &Value) -> Result<u32, String> {
        let x = self.u64_of(k, v)?;
        u32::try_from(x).map_err(|_| err(self.n, k, format!("{x} does not fit in 32 bits")))
    }
    fn u32(&self, k: &str) -> Result<u32, String> {
        self.u32_of(k, self.get(k)?)
    }
    fn opt<T>(
        &self,
        k: &str,
        f: impl Fn(&Self, &str) -> Result<T, String>,
    ) -> Result<Option<T>, String> {
        if self.obj.contains_key(k) {
            f(self, k).map(Some)
        } else {
            Ok(None)
        }
    }
    fn dims(&self, k: &str) -> Result<[u32; 3], String> {
        let a = self
            .get(k)?
            .as_array()
            .filter(|a| a.len() == 3)
            .ok_or_else(|| err(self.n, k, "must be an array of 3 integers"))?;
        Ok([
            self.u32_of(k, &a[0])?,
            self.u32_of(k, &a[1])?,
            self.u32_of(k, &a[2])?,
        ])
    }
    fn sub(&self, k: &str) -> Result<Line<'a>, String> {
        let obj = self
            .get(k)?
            .as_object()
            .ok_or_else(|| err(self.n, k, "must be an object"))?;
        Ok(Line { n: self.n, obj })
    }
    fn only(&self, keys: &[&str], ctx: &str) -> Result<(), String> {
        for k in self.obj.keys() {
            if !keys.contains(&k.as_str()) {
                return Err(err(
                    self.n,
                    k,
                    format!("unknown field for {ctx} (allowed: {})", keys.join(", ")),
                ));
            }
        }
        Ok(())
    }
    fn signal(&self, k: &str) -> Result<SignalRef, String> {
        let s = self.sub(k)?;
        s.only(&["addr", "event_mailbox_ptr", "event_id"], "a signal")?;
        Ok(SignalRef {
            addr: s.u64("addr")?,
            event_mailbox_ptr: s.opt("event_mailbox_ptr", Self::u64)?.unwrap_or(0),
            event_id: s.opt("event_id", Self::u32)?.unwrap_or(0),
        })
    }
    fn program(&self, k: &str) -> Result<Program, String> {
        let p = self.sub(k)?;
        p.only(
            &[
                "prog_addr",
                "scratch_addr",
                "tmpring_size",
                "rsrc1",
                "rsrc2",
                "rsrc3",
                "dispatch_packet_offset",
                "group_segment_size",
                "private_segment_size",
            ],
            "a program",
        )?;
        let dispatch = match p.opt("dispatch_packet_offset", Self::u64)? {
            Some(off) => Some(DispatchInfo {
                packet_offset: off,
                group_segment_size: p.opt("group_segment_size", Self::u32)?.unwrap_or(0),
                private_segment_size: p.opt("private_segment_size", Self::u32)?.unwrap_or(0),
            }),
            None => None,
        };
        Ok(Program {
            prog_addr: GpuVa(p.u64("prog_addr")?),
            scratch_addr: GpuVa(p.u64("scratch_addr")?),
            tmpring_size: p.u32("tmpring_size")?,
            rsrc1: p.u32("rsrc1")?,
            rsrc2: p.u32("rsrc2")?,
            rsrc3: p.opt("rsrc3", Self::u32)?.unwrap_or(0),
            dispatch,
            private_segment_buffer: None,
            flat_scratch_init: None,
        })
    }
}

#[derive(Clone, Copy)]
enum Handle {
    Exec(ExecCmd),
    Wait(WaitCmd),
    Signal(SignalCmd),
    Other,
}

type Pm4 = Pm4List<{ 1 << 16 }, 4096>;
type Sdma = SdmaList<{ 1 << 18 }, 4096, { 1 << 15 }>;

/// Encodes a whole script; returns the output lines.
pub(crate) fn encode_script(
    input: &str,
    engine: EngineArg,
    arch: &'static ArchInfo,
) -> Result<Vec<String>, String> {
    let mut enc = Encoder {
        engine,
        pm4: Box::new(Pm4::new(arch)),
        sdma: Box::new(Sdma::new(arch)),
        ops: Vec::new(),
        dps: Vec::new(),
    };
    for (i, text) in input.lines().enumerate() {
        let n = i + 1;
        if text.trim().is_empty() {
            continue;
        }
        let v: Value =
            serde_json::from_str(text).map_err(|e| format!("line {n}: not JSON: {e}"))?;
        let obj = v
            .as_object()
            .ok_or_else(|| format!("line {n}: must be a JSON object"))?;
        let l = Line { n, obj };
        let op = l
            .get("op")?
            .as_str()
            .ok_or_else(|| err(n, "op", "must be a string"))?;
        if op.starts_with("update_") {
            enc.update(&l, op)?;
        } else {
            let h = enc.command(&l, op)?;
            enc.ops.push((op.to_string(), h));
        }
    }
    Ok(enc.lines())
}

fn cmd_err(n: usize, op: &str, e: hcq_core::cmd::CmdError) -> String {
    format!("line {n}: {op}: {e}")
}

/// A script's command list being built: the engine's list, each command's op and handle, and
/// the dispatch packet of each exec (for the output's `dispatch_packet`).
struct Encoder {
    engine: EngineArg,
    pm4: Box<Pm4>,
    sdma: Box<Sdma>,
    ops: Vec<(String, Handle)>,
    dps: Vec<Option<[u8; 64]>>,
}

impl Encoder {
    /// Appends the command of line `l` (`op` is not an `update_*`).
    fn command(&mut self, l: &Line<'_>, op: &str) -> Result<Handle, String> {
        Ok(match (self.engine, op) {
            (EngineArg::Pm4, "memory_barrier") => {
                l.only(&["op"], "memory_barrier")?;
                self.pm4.memory_barrier().map_err(|e| cmd_err(l.n, op, e))?;
                Handle::Other
            }
            (EngineArg::Pm4, "indirect_buffer") => {
                l.only(&["op", "addr", "size_dwords"], "indirect_buffer")?;
                self.pm4
                    .indirect_buffer(GpuVa(l.u64("addr")?), l.u32("size_dwords")?)
                    .map_err(|e| cmd_err(l.n, op, e))?;
                Handle::Other
            }
            (EngineArg::Pm4, "exec") => {
                l.only(&["op", "program", "kernargs", "global", "local"], "exec")?;
                let prog = l.program("program")?;
                let (h, dw) = self
                    .pm4
                    .exec(
                        &prog,
                        GpuVa(l.u64("kernargs")?),
                        l.dims("global")?,
                        l.dims("local")?,
                    )
                    .map_err(|e| cmd_err(l.n, op, e))?;
                self.dps.resize(self.ops.len() + 1, None);
                if let (Some(dw), Some(slot)) = (dw, self.dps.last_mut()) {
                    *slot = Some(dw.packet.to_bytes());
                }
                Handle::Exec(h)
            }
            (EngineArg::Sdma, "copy") => {
                l.only(&["op", "dst", "src", "size"], "copy")?;
                self.sdma
                    .copy(GpuVa(l.u64("dst")?), GpuVa(l.u64("src")?), l.u64("size")?)
                    .map_err(|e| cmd_err(l.n, op, e))?;
                Handle::Other
            }
            (_, "wait") => {
                l.only(&["op", "signal", "value"], "wait")?;
                let s = l.signal("signal")?;
                let v = l.u32("value")?;
                Handle::Wait(
                    match self.engine {
                        EngineArg::Pm4 => self.pm4.wait(&s, v),
                        EngineArg::Sdma => self.sdma.wait(&s, v),
                    }
                    .map_err(|e| cmd_err(l.n, op, e))?,
                )
            }
            (_, "signal") => {
                l.only(&["op", "signal", "value"], "signal")?;
                let s = l.signal("signal")?;
                Handle::Signal(
                    match self.engine {
                        EngineArg::Pm4 => self.pm4.signal(&s, l.u64("value")?),
                        EngineArg::Sdma => self.sdma.signal(&s, l.u32("value")?),
                    }
                    .map_err(|e| cmd_err(l.n, op, e))?,
                )
            }
            (_, "timestamp") => {
                l.only(&["op", "signal"], "timestamp")?;
                let s = l.signal("signal")?;
                match self.engine {
                    EngineArg::Pm4 => self.pm4.timestamp(&s).map(|_| ()),
                    EngineArg::Sdma => self.sdma.timestamp(&s).map(|_| ()),
                }
                .map_err(|e| cmd_err(l.n, op, e))?;
                Handle::Other
            }
            (e, other) => {
                let eng = if e == EngineArg::Pm4 { "pm4" } else { "sdma" };
                return Err(err(
                    l.n,
                    "op",
                    format!("`{other}` is not an op of the {eng} engine"),
                ));
            }
        })
    }

    /// The command line `l`'s `cmd` names, with its handle.
    fn handle(&self, l: &Line<'_>) -> Result<(usize, Handle), String> {
        let c = l.u64("cmd")?;
        let idx = usize::try_from(c)
            .ok()
            .filter(|&c| c < self.ops.len())
            .ok_or_else(|| {
                err(
                    l.n,
                    "cmd",
                    format!(
                        "{c} is not a command index (there are {} commands so far)",
                        self.ops.len()
                    ),
                )
            })?;
        Ok((idx, self.ops[idx].1))
    }

    /// Patches an earlier command (`op` is an `update_*`).
    fn update(&mut self, l: &Line<'_>, op: &str) -> Result<(), String> {
        match (self.engine, op) {
            (EngineArg::Pm4, "update_exec") => {
                l.only(&["op", "cmd", "global", "local"], "update_exec")?;
                let (idx, h) = self.handle(l)?;
                let Handle::Exec(h) = h else {
                    return Err(err(
                        l.n,
                        "cmd",
                        format!("command {idx} is a {}, not an exec", self.ops[idx].0),
                    ));
                };
                let dw = self
                    .pm4
                    .update_exec(&h, l.dims("global")?, l.dims("local")?)
                    .map_err(|e| cmd_err(l.n, op, e))?;
                if let (Some(dw), Some(slot)) = (dw, self.dps.get_mut(idx)) {
                    *slot = Some(dw.packet.to_bytes());
                }
                Ok(())
            }
            (_, "update_wait") => {
                l.only(&["op", "cmd", "signal", "value"], "update_wait")?;
                let (idx, h) = self.handle(l)?;
                let Handle::Wait(h) = h else {
                    return Err(err(
                        l.n,
                        "cmd",
                        format!("command {idx} is a {}, not a wait", self.ops[idx].0),
                    ));
                };
                let s = l.opt("signal", Line::signal)?;
                let v = l.opt("value", Line::u32)?;
                match self.engine {
                    EngineArg::Pm4 => self.pm4.update_wait(&h, s.as_ref(), v),
                    EngineArg::Sdma => self.sdma.update_wait(&h, s.as_ref(), v),
                }
                .map_err(|e| cmd_err(l.n, op, e))?;
                Ok(())
            }
            (_, "update_signal") => {
                l.only(&["op", "cmd", "signal", "value"], "update_signal")?;
                let (idx, h) = self.handle(l)?;
                let Handle::Signal(h) = h else {
                    return Err(err(
                        l.n,
                        "cmd",
                        format!("command {idx} is a {}, not a signal", self.ops[idx].0),
                    ));
                };
                let s = l.opt("signal", Line::signal)?;
                match self.engine {
                    EngineArg::Pm4 => {
                        self.pm4
                            .update_signal(&h, s.as_ref(), l.opt("value", Line::u64)?)
                    }
                    EngineArg::Sdma => {
                        self.sdma
                            .update_signal(&h, s.as_ref(), l.opt("value", Line::u32)?)
                    }
                }
                .map_err(|e| cmd_err(l.n, op, e))?;
                Ok(())
            }
            (e, other) => {
                let eng = if e == EngineArg::Pm4 { "pm4" } else { "sdma" };
                Err(err(
                    l.n,
                    "op",
                    format!("`{other}` is not an op of the {eng} engine"),
                ))
            }
        }
    }

    /// One output line per command: its index, op, dwords and dispatch packet.
    fn lines(&self) -> Vec<String> {
        let engine = self.engine;
        let (pm4, sdma, ops, dps) = (&self.pm4, &self.sdma, &self.ops, &self.dps);
        let (dwords, offsets) = match engine {
            EngineArg::Pm4 => (pm4.as_dwords(), pm4.cmd_offsets()),
            EngineArg::Sdma => (sdma.as_dwords(), sdma.cmd_offsets()),
        };
        let mut out = Vec::with_capacity(ops.len());
        for (i, (op, _)) in ops.iter().enumerate() {
            let start = offsets.get(i).map_or(0, |&o| o as usize);
            let end = offsets.get(i + 1).map_or(dwords.len(), |&o| o as usize);
            // Built by hand so the keys keep the documented order (cmd, op, dwords, dispatch_packet).
            let mut line = format!(
                "{{\"cmd\":{i},\"op\":{},\"dwords\":{}",
                json!(op),
                json!(dwords.get(start..end).unwrap_or_default())
            );
            if let Some(Some(dp)) = dps.get(i) {
                line.push_str(&format!(",\"dispatch_packet\":{}", json!(dp.to_vec())));
            }
            line.push('}');
            out.push(line);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hcq_core::arch::GFX11;

    fn enc(engine: EngineArg, script: &str) -> Result<Vec<String>, String> {
        // The lists (1.25 MiB) are built on the stack before they are boxed in a debug build:
        // more than a test thread's 2 MiB holds with both (the binary's main thread has 8).
        let script = script.to_string();
        std::thread::Builder::new()
            .stack_size(16 << 20)
            .spawn(move || encode_script(&script, engine, &GFX11))
            .unwrap()
            .join()
            .unwrap()
    }

    const WAIT: &str = r#"{"op":"wait","signal":{"addr":4096},"value":3}"#;

    #[test]
    fn updates_patch_the_command_they_name() {
        let before = enc(EngineArg::Pm4, WAIT).unwrap();
        let after = enc(
            EngineArg::Pm4,
            &format!("{WAIT}\n{}", r#"{"op":"update_wait","cmd":0,"value":9}"#),
        )
        .unwrap();
        assert_eq!(after.len(), 1, "an update adds no command: {after:?}");
        assert_ne!(before, after);
        assert!(after[0].contains(",9,"), "{after:?}");
    }

    #[test]
    fn updates_name_a_wrong_or_missing_command() {
        let e = enc(
            EngineArg::Pm4,
            &format!(
                "{WAIT}\n{}",
                r#"{"op":"update_exec","cmd":0,"global":[1,1,1],"local":[1,1,1]}"#
            ),
        )
        .unwrap_err();
        assert!(
            e.contains("line 2") && e.contains("command 0 is a wait, not an exec"),
            "{e}"
        );
        let e = enc(EngineArg::Sdma, r#"{"op":"update_signal","cmd":3}"#).unwrap_err();
        assert!(
            e.contains("3 is not a command index (there are 0 commands so far)"),
            "{e}"
        );
    }

    #[test]
    fn ops_of_the_other_engine_are_refused() {
        let e = enc(EngineArg::Sdma, r#"{"op":"memory_barrier"}"#).unwrap_err();
        assert!(
            e.contains("`memory_barrier` is not an op of the sdma engine"),
            "{e}"
        );
        let e = enc(EngineArg::Pm4, r#"{"op":"update_copy","cmd":0}"#).unwrap_err();
        assert!(
            e.contains("`update_copy` is not an op of the pm4 engine"),
            "{e}"
        );
    }
}
