//! `hcq inspect [--json] FILE.co`: an AMDGPU code object's target and kernels, with the fields
//! a runtime needs (like `llvm-readelf --notes`, but read from the kernel descriptors).

use hcq_core::codeobj::{CodeObject, Kernel};
use serde_json::json;

const USAGE: &str = "usage: hcq inspect [--json] FILE.co";

/// Runs `hcq inspect` with `args` (after the sub-command name).
pub fn run(args: &[String]) -> Result<(), String> {
    let mut json_out = false;
    let mut file = None;
    for a in args {
        match a.as_str() {
            "--json" => json_out = true,
            "-h" | "--help" => {
                println!("{USAGE}");
                return Ok(());
            }
            s if s.starts_with('-') => return Err(format!("unknown option `{s}` ({USAGE})")),
            s if file.is_none() => file = Some(s),
            s => return Err(format!("one file only, got also `{s}` ({USAGE})")),
        }
    }
    let file = file.ok_or_else(|| USAGE.to_string())?;
    let data = std::fs::read(file).map_err(|e| format!("cannot read {file}: {e}"))?;
    let co = CodeObject::parse(&data).map_err(|e| format!("{file}: {e}"))?;
    if json_out {
        println!("{}", to_json(&co));
    } else {
        print!("{}", to_text(file, &co));
    }
    Ok(())
}

fn kernel_json(k: &Kernel<'_>) -> serde_json::Value {
    json!({
        "name": k.name,
        "kernarg_size": k.kernarg_size(),
        "group_segment_size": k.group_segment_size(),
        "private_segment_size": k.private_segment_size(),
        "wavefront_size": k.wavefront_size(),
        "uses_dispatch_ptr": k.uses_dispatch_ptr(),
        "entry_byte_offset": k.entry_byte_offset(),
    })
}

/// The `--json` object: `{"target": "gfx1100", "kernels": [...]}`.
fn to_json(co: &CodeObject<'_>) -> serde_json::Value {
    let kernels: Vec<_> = co.kernels().map(|k| kernel_json(&k)).collect();
    json!({ "target": co.target().mach.name, "kernels": kernels })
}

fn to_text(file: &str, co: &CodeObject<'_>) -> String {
    use core::fmt::Write as _;
    let t = co.target();
    let mut s = String::new();
    let _ = writeln!(s, "{file}");
    let _ = writeln!(
        s,
        "  target      {t} (code object v{}, e_flags {:#x})",
        t.code_object_version(),
        t.e_flags
    );
    let _ = writeln!(
        s,
        "  image       {:#x} bytes (base {:#x}), {} segments",
        co.image_size(),
        co.image_base(),
        co.segments().len()
    );
    for seg in co.segments() {
        let (zoff, zlen) = seg.zero_fill();
        let _ = writeln!(
            s,
            "    segment {}  file {:#x}..{:#x} -> image {:#x}..{:#x}{}{}{}",
            seg.index,
            seg.file_range().start,
            seg.file_range().end,
            seg.image_range().start,
            seg.image_range().end,
            if seg.executable { "  exec" } else { "" },
            if seg.writable { "  write" } else { "" },
            if zlen > 0 {
                format!("  zero {zoff:#x}+{zlen:#x}")
            } else {
                String::new()
            },
        );
    }
    let _ = writeln!(s, "  kernels     {}", co.kernel_count());
    for k in co.kernels() {
        let d = &k.descriptor;
        let _ = writeln!(s, "  {}", k.name);
        let _ = writeln!(
            s,
            "    descriptor {:#x}  entry {:#x} (descriptor {:+#x})",
            k.descriptor_offset,
            k.entry_offset,
            k.entry_byte_offset()
        );
        let _ = writeln!(
            s,
            "    kernarg {} B  group (LDS) {} B ({} granules)  private {} B/work-item",
            k.kernarg_size(),
            k.group_segment_size(),
            k.lds_granules(),
            k.private_segment_size()
        );
        let _ = writeln!(
            s,
            "    wave{}  user SGPRs {} (inputs take {})  dispatch_ptr {}  queue_ptr {}",
            k.wavefront_size(),
            k.user_sgpr_count(),
            k.required_user_sgprs(),
            yes_no(k.uses_dispatch_ptr()),
            yes_no(k.uses_queue_ptr())
        );
        let _ = writeln!(
            s,
            "    rsrc1 {:#010x}  rsrc2 {:#010x}  rsrc3 {:#010x}  properties {:#06x}",
            d.compute_pgm_rsrc1, d.compute_pgm_rsrc2, d.compute_pgm_rsrc3, d.kernel_code_properties
        );
    }
    s
}

fn yes_no(b: bool) -> &'static str {
    if b { "yes" } else { "no" }
}
