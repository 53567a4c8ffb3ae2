//! `hcq inspect [--json] [--target GFX] FILE`: an AMDGPU code object's (or a clang offload
//! bundle entry's) target and kernels, with the fields a runtime needs: the kernel descriptor
//! and the `NT_AMDGPU_METADATA` note (arguments, limits, register counts), like
//! `llvm-readelf --notes`.

use super::{CliError, emit};

use hcq_core::bundle::{Bundle, is_bundle};
use hcq_core::codeobj::{CodeObject, Kernel};
use serde_json::json;

const USAGE: &str = "\
usage: hcq inspect [--json] [--target GFX] FILE

Shows the target and kernels of an AMDGPU code object or clang offload bundle FILE: each
kernel's descriptor fields and its metadata (arguments with offset, size and value kind,
max_flat_workgroup_size, register counts, reqd_workgroup_size, kernarg alignment).
  --json          one JSON object: {\"target\", \"kernels\": [...]}
  --target GFX    for a bundle: the entry for GFX (default: the GPU's target, else the
                  bundle's only AMDGPU entry)
Exit status: 0 success, 1 the file could not be read or parsed, 2 usage error.
";

struct Opts {
    json: bool,
    target: Option<String>,
    file: String,
}

fn parse(args: &[String]) -> Result<Option<Opts>, String> {
    let (mut json_out, mut target, mut file) = (false, None, None);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--json" => json_out = true,
            "--target" => target = Some(it.next().ok_or("--target needs a value")?.clone()),
            "-h" | "--help" => return Ok(None),
            s if s.starts_with('-') => return Err(format!("unknown option `{s}`")),
            s if file.is_none() => file = Some(s.to_owned()),
            s => return Err(format!("one file only, got also `{s}`")),
        }
    }
    Ok(Some(Opts {
        json: json_out,
        target,
        file: file.ok_or("missing FILE")?,
    }))
}

/// Its help text.
pub const HELP: &str = USAGE;

/// Runs `hcq inspect` with `args` (after the sub-command name).
pub fn main(args: &[String]) -> Result<(), CliError> {
    let Some(o) = parse(args).map_err(CliError::Usage)? else {
        return emit(USAGE).map_err(CliError::from);
    };
    run(&o).map_err(|e| {
        CliError::failed_with(
            e,
            "check that FILE is an AMDGPU code object or offload bundle \
             (`llvm-readelf-19 -h --notes FILE`); for a bundle pick an entry with --target",
        )
    })
}

/// The target to pick from a bundle when `--target` is not given: the first real GPU's.
fn device_target() -> Option<String> {
    let kfd = hcq_driver::Kfd::open().ok()?;
    kfd.gpus().first().map(hcq_driver::GpuInfo::target_name)
}

fn run(o: &Opts) -> Result<(), String> {
    let file = &o.file;
    let data = std::fs::read(file).map_err(|e| format!("cannot read {file}: {e}"))?;
    let mut entry = None;
    let code: &[u8] = if is_bundle(&data) {
        let b = Bundle::parse(&data).map_err(|e| format!("{file}: {e}"))?;
        let amd: Vec<_> = b.entries().filter(|e| e.target().is_some()).collect();
        let pick = match o.target.clone().or_else(device_target) {
            Some(t) => b.select(&t).map_err(|e| format!("{file}: {e}"))?,
            None if amd.len() == 1 => amd[0],
            None => {
                return Err(format!(
                    "{file}: offload bundle holds {}; pick one with --target",
                    b.targets()
                ));
            }
        };
        entry = Some(pick.id.to_owned());
        pick.code
    } else {
        &data
    };
    let co = CodeObject::parse(code).map_err(|e| format!("{file}: {e}"))?;
    if o.json {
        emit(&format!("{}\n", to_json(&co)))
    } else {
        emit(&to_text(file, entry.as_deref(), &co))
    }
}

fn kernel_json(k: &Kernel<'_>) -> serde_json::Value {
    let mut v = json!({
        "name": k.name,
        "kernarg_size": k.kernarg_size(),
        "group_segment_size": k.group_segment_size(),
        "private_segment_size": k.private_segment_size(),
        "wavefront_size": k.wavefront_size(),
        "uses_dispatch_ptr": k.uses_dispatch_ptr(),
        "entry_byte_offset": k.entry_byte_offset(),
    });
    let args: Vec<serde_json::Value> = k
        .metadata
        .iter()
        .flat_map(|m| m.args())
        .map(|a| {
            let mut o = json!({ "offset": a.offset, "size": a.size, "kind": a.value_kind_str });
            if let Some(n) = a.name {
                o["name"] = json!(n);
            }
            if let Some(t) = a.type_name {
                o["type_name"] = json!(t);
            }
            o
        })
        .collect();
    v["args"] = json!(args);
    if let Some(m) = &k.metadata {
        v["max_flat_workgroup_size"] = json!(m.max_flat_workgroup_size);
        v["sgpr_count"] = json!(m.sgpr_count);
        v["vgpr_count"] = json!(m.vgpr_count);
        // Targets without AGPRs (gfx10+) have no .agpr_count: 0.
        v["agpr_count"] = json!(m.agpr_count.unwrap_or(0));
        if let Some(r) = m.reqd_workgroup_size {
            v["reqd_workgroup_size"] = json!(r);
        }
        v["kernarg_align"] = json!(m.kernarg_segment_align);
    }
    v
}

/// The `--json` object: `{"target": "gfx1100", "kernels": [...]}`.
fn to_json(co: &CodeObject<'_>) -> serde_json::Value {
    let kernels: Vec<_> = co.kernels().map(|k| kernel_json(&k)).collect();
    json!({ "target": co.target().mach.name, "kernels": kernels })
}

fn to_text(file: &str, entry: Option<&str>, co: &CodeObject<'_>) -> String {
    use core::fmt::Write as _;
    let t = co.target();
    let mut s = String::new();
    let _ = writeln!(s, "{file}");
    if let Some(e) = entry {
        let _ = writeln!(s, "  bundle entry {e}");
    }
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
        let Some(m) = &k.metadata else {
            let _ = writeln!(s, "    no metadata note");
            continue;
        };
        let _ = writeln!(
            s,
            "    max_flat_workgroup_size {}{}  kernarg align {}",
            m.max_flat_workgroup_size,
            m.reqd_workgroup_size
                .map(|r| format!("  reqd_workgroup_size {r:?}"))
                .unwrap_or_default(),
            m.kernarg_segment_align
        );
        let _ = writeln!(
            s,
            "    SGPRs {}  VGPRs {}  AGPRs {}  spills {} SGPR / {} VGPR",
            m.sgpr_count,
            m.vgpr_count,
            m.agpr_count.unwrap_or(0),
            m.sgpr_spill_count.unwrap_or(0),
            m.vgpr_spill_count.unwrap_or(0)
        );
        let _ = writeln!(s, "    args");
        for a in m.args() {
            let _ = writeln!(
                s,
                "      {:>4} +{:<3} {:<24} {}{}",
                a.offset,
                a.size,
                a.value_kind_str,
                a.type_name.unwrap_or(""),
                a.name.map(|n| format!(" {n}")).unwrap_or_default()
            );
        }
    }
    s
}

fn yes_no(b: bool) -> &'static str {
    if b { "yes" } else { "no" }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> Vec<u8> {
        std::fs::read(format!(
            "{}/../core/tests/fixtures/kernels/{name}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap()
    }

    #[test]
    fn json_has_the_metadata_keys() {
        let d = fixture("global_id-gfx90a.co");
        let co = CodeObject::parse(&d).unwrap();
        let v = to_json(&co);
        let k = &v["kernels"][0];
        assert_eq!(k["name"], "global_id");
        assert_eq!(k["kernarg_size"], 272);
        assert_eq!(k["max_flat_workgroup_size"], 256);
        assert_eq!(k["kernarg_align"], 8);
        assert_eq!(k["agpr_count"], 0);
        assert!(k["sgpr_count"].as_u64().unwrap() > 0);
        assert!(k["vgpr_count"].as_u64().unwrap() > 0);
        assert!(k.get("reqd_workgroup_size").is_none());
        assert_eq!(
            k["args"][0],
            json!({"offset": 0, "size": 8, "kind": "global_buffer", "type_name": "uint*"})
        );
        assert_eq!(
            k["args"][5],
            json!({"offset": 28, "size": 2, "kind": "hidden_group_size_x"})
        );
        let d = fixture("fill-gfx1100.co");
        let co = CodeObject::parse(&d).unwrap();
        let k = &to_json(&co)["kernels"][0];
        assert_eq!(k["reqd_workgroup_size"], json!([64, 1, 1]));
        // Today's keys stay.
        for key in [
            "group_segment_size",
            "private_segment_size",
            "wavefront_size",
            "uses_dispatch_ptr",
            "entry_byte_offset",
        ] {
            assert!(k.get(key).is_some(), "{key}");
        }
        let text = to_text("fill-gfx1100.co", None, &co);
        assert!(text.contains("reqd_workgroup_size [64, 1, 1]"), "{text}");
        assert!(text.contains("by_value"), "{text}");
    }

    #[test]
    fn options() {
        let s = |v: &[&str]| v.iter().map(|x| (*x).to_owned()).collect::<Vec<_>>();
        let o = parse(&s(&["--json", "--target", "gfx90a", "f.co"]))
            .unwrap()
            .unwrap();
        assert!(o.json);
        assert_eq!(o.target.as_deref(), Some("gfx90a"));
        assert!(parse(&s(&["-h"])).unwrap().is_none());
        assert!(parse(&s(&[])).is_err());
        assert!(parse(&s(&["a", "b"])).is_err());
        assert!(parse(&s(&["--target"])).is_err());
    }
}
