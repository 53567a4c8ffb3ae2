//! A GPU fault as the CLI prints it: the cause first, the faulting instruction by its
//! disassembly (the simulator's decoder and disassembler, which print what `llvm-objdump-19`
//! prints), where it was (kernel offset, wave, workgroup), then what KFD reported and the queue
//! state. The `next:` line is the caller's.

use hcq_driver::{Error, WaitReport};

/// Lines describing `e` when it is a device fault of `kernel` (in `code`, an ELF or offload
/// bundle, run on `target`); `None` for any other error.
pub(crate) fn describe(e: &Error, kernel: &str, target: &str, code: &[u8]) -> Option<String> {
    let Error::DeviceFault(r) = e else {
        return None;
    };
    Some(describe_report(r, kernel, target, code))
}

/// The parts of a simulator's (or KFD's) fault text.
#[derive(Debug, Default, PartialEq, Eq)]
struct Parts<'a> {
    /// What KFD reported (the memory fault or hardware exception).
    kfd: &'a str,
    /// The cause (the simulator's reason without its queue site), when known.
    cause: Option<&'a str>,
    /// `kernel offset 0x20`, as a number.
    offset: Option<u64>,
    /// `wave 0 of workgroup [0, 0, 0]`.
    wave: Option<&'a str>,
}

/// Splits `KFD; simulator: PM4 queue 0 at ring@0x80: CAUSE at kernel offset 0x20 (program
/// address 0x...), wave 0 of workgroup [0, 0, 0]`.
fn parts(fault: &str) -> Parts<'_> {
    let (kfd, sim) = match fault.split_once("; simulator: ") {
        Some((k, s)) => (k, Some(s)),
        None => (fault, None),
    };
    let mut p = Parts {
        kfd,
        ..Parts::default()
    };
    let Some(sim) = sim else {
        return p;
    };
    // The queue site (`PM4 queue 0 at ring@0x80`) ends at the first ": ".
    let msg = sim.split_once(": ").map_or(sim, |(_, m)| m);
    match msg.split_once(" at kernel offset ") {
        Some((cause, rest)) => {
            p.cause = Some(cause);
            let hex = rest.split([' ', ',']).next().unwrap_or("");
            p.offset = u64::from_str_radix(hex.trim_start_matches("0x"), 16).ok();
            p.wave = rest.split_once("), ").map(|(_, w)| w.trim());
        }
        None => p.cause = Some(msg),
    }
    p
}

/// The instruction at `offset` from `kernel`'s entry in `code`, disassembled for `target`.
#[cfg(feature = "sim")]
fn instruction(code: &[u8], target: &str, kernel: &str, offset: u64) -> Option<String> {
    use hcq_sim::isa::{Isa, decode::decode_for, disasm::disasm_target};
    let co = hcq_core::bundle::code_object_for(code, target).ok()?;
    let co = hcq_core::codeobj::CodeObject::parse(co).ok()?;
    let k = co.kernel(kernel).ok()?;
    let mut image = vec![0u8; usize::try_from(co.image_size()).ok()?];
    co.load_into(&mut image).ok()?;
    let at = usize::try_from(k.entry_offset.checked_add(offset)?).ok()?;
    let mut w = [0u32; 3];
    for (i, slot) in w.iter_mut().enumerate() {
        let b = image.get(at + 4 * i..at + 4 * i + 4).unwrap_or(&[0; 4]);
        *slot = u32::from_le_bytes(b.try_into().ok()?);
    }
    let isa = if target.starts_with("gfx9") {
        Isa::Gfx9
    } else if target.starts_with("gfx11") {
        Isa::Gfx11
    } else if target.starts_with("gfx12") {
        Isa::Gfx12
    } else {
        return None;
    };
    let gfx940 = !target.starts_with("gfx90");
    let Ok(inst) = decode_for(isa, gfx940, &w) else {
        return Some(llvm_mc(target, &w));
    };
    let wave64 = isa == Isa::Gfx9 || k.wavefront_size() == 64;
    Some(disasm_target(
        isa,
        gfx940 && isa == Isa::Gfx9,
        &inst,
        wave64,
    ))
}

/// The LLVM disassembler that names instructions hcq's decoder does not know.
#[cfg(feature = "sim")]
const LLVM_MC: &str = "llvm-mc-19";

/// `llvm-mc-19 --disassemble`'s text for the words at the fault, for an instruction hcq's
/// decoder does not know; when LLVM 19 cannot name them, the words and why (never nothing).
#[cfg(feature = "sim")]
fn llvm_mc(target: &str, w: &[u32; 3]) -> String {
    match llvm_mc_text(LLVM_MC, target, w) {
        Ok(inst) => format!("{inst} ({LLVM_MC}; hcq's decoder does not know it)"),
        Err(why) => format!(
            "words {:#010x} {:#010x} {:#010x}, which hcq's decoder does not know ({why})",
            w[0], w[1], w[2]
        ),
    }
}

/// `program --disassemble`'s first instruction for `w`, or why there is none.
#[cfg(feature = "sim")]
fn llvm_mc_text(program: &str, target: &str, w: &[u32; 3]) -> Result<String, String> {
    use std::io::Write as _;
    let hex: Vec<String> = w
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .map(|b| format!("{b:#04x}"))
        .collect();
    let mut child = std::process::Command::new(program)
        .args(["--disassemble", "-arch=amdgcn"])
        .arg(format!("-mcpu={target}"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| {
            format!("{program} could not run: {e}; install LLVM 19 to see them disassembled")
        })?;
    let mut stdin = child
        .stdin
        .take()
        .ok_or_else(|| format!("{program} has no standard input"))?;
    let written = stdin.write_all(hex.join(" ").as_bytes());
    drop(stdin);
    let out = child
        .wait_with_output()
        .map_err(|e| format!("waiting for {program}: {e}"))?;
    written.map_err(|e| format!("writing the words to {program}: {e}"))?;
    let err = String::from_utf8_lossy(&out.stderr);
    let err = err.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    if !out.status.success() {
        return Err(format!("{program} failed ({}): {err}", out.status));
    }
    let text = String::from_utf8(out.stdout).map_err(|_| format!("{program} printed no text"))?;
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('.') && !l.starts_with(';'))
        .ok_or_else(|| format!("{program} names no instruction there: {err}"))?;
    let inst = line.split("//").next().unwrap_or(line).trim();
    if inst.is_empty() {
        return Err(format!("{program} names no instruction there: {err}"));
    }
    Ok(inst.to_owned())
}

#[cfg(not(feature = "sim"))]
fn instruction(_: &[u8], _: &str, _: &str, _: u64) -> Option<String> {
    None
}

/// The fault report: cause, instruction, where, KFD's report, queue state.
fn describe_report(r: &WaitReport, kernel: &str, target: &str, code: &[u8]) -> String {
    use core::fmt::Write as _;
    let mut s = String::new();
    let fault = r.fault.as_deref().unwrap_or("");
    let p = parts(fault);
    let cause = match (p.cause, r.fault_addr) {
        (Some(c), _) => c.to_owned(),
        (None, Some(a)) => format!("GPU memory fault at {a:#x}"),
        (None, None) if !fault.is_empty() => fault.to_owned(),
        (None, None) => "the GPU reported a fault".to_owned(),
    };
    let _ = write!(s, "kernel {kernel} faulted on {target}: {cause}");
    if let Some(off) = p.offset {
        let _ = write!(s, "\n  instruction: ");
        match instruction(code, target, kernel, off) {
            Some(text) => {
                let _ = write!(s, "{text}");
            }
            None => {
                let _ = write!(s, "(not decodable here)");
            }
        }
        let _ = write!(s, " at kernel offset {off:#x}");
        if let Some(w) = p.wave {
            let _ = write!(s, ", {w}");
        }
    }
    if p.cause.is_some() && !p.kfd.is_empty() {
        match r.fault_addr {
            Some(a) => {
                let _ = write!(s, "\n  KFD reported: memory fault at {a:#x}: {}", p.kfd);
            }
            None => {
                let _ = write!(s, "\n  KFD reported: {}", p.kfd);
            }
        }
    }
    // The queue state: the wait and the queues' pointers, without the fault again.
    let plain = WaitReport {
        fault: None,
        fault_addr: None,
        ..r.clone()
    };
    let _ = write!(s, "\n  queue state: {plain}");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_the_simulators_fault_text() {
        let t = "hardware exception on gpu 0x4928: GPU hang, memory lost: false; simulator: PM4 queue 0 at ring@0x80: gfx11: unsupported instruction word 0xbf820001 (SOPP 2) at kernel offset 0x20 (program address 0x7f5cdd60a620), wave 0 of workgroup [0, 0, 0]";
        assert_eq!(
            parts(t),
            Parts {
                kfd: "hardware exception on gpu 0x4928: GPU hang, memory lost: false",
                cause: Some("gfx11: unsupported instruction word 0xbf820001 (SOPP 2)"),
                offset: Some(0x20),
                wave: Some("wave 0 of workgroup [0, 0, 0]"),
            }
        );
        let v = "MMU fault on gpu 0x4928: page not present; simulator: PM4 queue 0 at ring@0x80: GPU VM fault: write at 0x1000: no GPU mapping";
        assert_eq!(
            parts(v),
            Parts {
                kfd: "MMU fault on gpu 0x4928: page not present",
                cause: Some("GPU VM fault: write at 0x1000: no GPU mapping"),
                offset: None,
                wave: None,
            }
        );
        assert_eq!(parts("MMU fault").kfd, "MMU fault");
    }

    /// The whole report for an instruction the simulator names by offset: the disassembly is
    /// LLVM's text for the instruction at that offset (from the golden `llvm-objdump-19`
    /// output of the fixture), the KFD part and the queue state follow, the fault once.
    #[test]
    fn report_names_the_instruction_by_its_disassembly() {
        let code = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../core/tests/fixtures/kernels/global_id-gfx1100.co"
        ))
        .unwrap();
        let r = WaitReport {
            waited: hcq_driver::Waited::Signal,
            signal_addr: hcq_core::addr::GpuVa(0x2000),
            expected: 3,
            seen: 2,
            waited_ms: 0,
            queues: vec![hcq_driver::QueueState {
                name: "compute queue 0 (gpu 0x4928)".into(),
                rptr: 133,
                wptr: 159,
            }],
            fault_addr: None,
            fault: Some("hardware exception on gpu 0x4928: GPU hang, memory lost: false; simulator: PM4 queue 0 at ring@0x80: gfx11: something at kernel offset 0x4 (program address 0x1904), wave 1 of workgroup [2, 0, 0]".into()),
        };
        let text = describe_report(&r, "global_id", "gfx1100", &code);
        let want = "kernel global_id faulted on gfx1100: gfx11: something\n  \
                    instruction: s_load_b32 s2, s[0:1], 0x1c at kernel offset 0x4, wave 1 of workgroup [2, 0, 0]\n  \
                    KFD reported: hardware exception on gpu 0x4928: GPU hang, memory lost: false\n  \
                    queue state: signal at 0x2000 expected >= 3 but is 2 after 0 ms; compute queue 0 (gpu 0x4928) rptr 133 wptr 159";
        assert_eq!(text, want);
    }

    #[cfg(feature = "sim")]
    #[test]
    fn a_missing_disassembler_is_named_with_its_cause() {
        let w = [0xdead_beef, 0, 0];
        let err = llvm_mc_text("hcq-no-such-llvm-mc-19", "gfx1100", &w).unwrap_err();
        assert!(
            err.starts_with("hcq-no-such-llvm-mc-19 could not run: ")
                && err.contains("install LLVM 19"),
            "{err}"
        );
    }
}
