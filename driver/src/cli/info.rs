//! `hcq info [--sim] [--json]`: what rocminfo and `amd-smi static` show that KFD's topology
//! gives, per GPU, plus the KFD interface version. The real /dev/kfd, else the simulator; both
//! through the same sysfs reading and parsing (`hcq_core::kfd::topology`).
//!
//! The JSON schema (stable keys; sizes in bytes, clocks in Hz; `null` where the system does not
//! say) is documented in driver/README.md, "`hcq info --json`".

use hcq_core::kfd::topology::{MAX_WORKGROUP_SIZE, NodeProperties, marketing_name};
use hcq_driver::topology::GpuDetails;
use hcq_driver::{GpuInfo, Kfd};
use serde_json::{Value, json};

use super::CliError;
use super::demo::open_backend;

/// `hcq info`'s help text.
pub const HELP: &str = "\
usage: hcq info [--sim] [--json] [--sim-target T] [--xcc N] [--gpus N]

Lists the GPUs KFD reports, with what rocminfo shows that KFD's topology gives: gfx target and
features, marketing name, compute units, waves, workgroup size, LDS, caches, clock, VRAM, GTT,
queues, SDMA engines, doorbell size, DRM render node; and the KFD interface version.

options:
  --sim    use the simulated GPU even when /dev/kfd exists
  --json   one JSON object (schema: driver/README.md, `hcq info --json`)
";

/// The JSON keys of each GPU object (the schema's), one list for this module's tests and
/// `driver/tests/cli_info.rs`.
#[cfg(test)]
#[path = "info_keys.rs"]
mod info_keys;
#[cfg(test)]
use info_keys::GPU_KEYS;

/// One GPU as JSON.
fn gpu_json(g: &GpuInfo, d: &GpuDetails, xnack: Option<bool>) -> Value {
    let p = &g.properties;
    let target = g.target_name();
    let xnack = p.has_xnack().then_some(xnack).flatten();
    let sramecc = p
        .has_sramecc()
        .then_some(p.capability & NodeProperties::CAP_SRAM_EDCSUPPORTED != 0);
    let mut isa = format!("amdgcn-amd-amdhsa--{target}");
    if let Some(on) = sramecc {
        isa.push_str(if on { ":sramecc+" } else { ":sramecc-" });
    }
    if let Some(on) = xnack {
        isa.push_str(if on { ":xnack+" } else { ":xnack-" });
    }
    let per_engine = u64::from(p.num_sdma_queues_per_engine);
    json!({
        "node": g.node,
        "gpu_id": g.gpu_id,
        "gfx_target": target,
        "gfx_target_version": p.gfx_target_version,
        "isa": isa,
        "features": { "xnack": xnack, "sramecc": sramecc },
        "marketing_name": marketing_name(p.device_id),
        "vendor_id": p.vendor_id,
        "device_id": p.device_id,
        "compute_units": p.cu_count(),
        "simds_per_cu": p.simd_per_cu,
        "max_waves_per_cu": p.max_waves_per_cu(),
        "wave_size": p.wave_front_size,
        "max_workgroup_size": MAX_WORKGROUP_SIZE,
        "lds_bytes": u64::from(p.lds_size_in_kb) << 10,
        "l1_cache_bytes": d.data_cache(1),
        "l2_cache_bytes": d.data_cache(2),
        "l3_cache_bytes": d.data_cache(3),
        "max_engine_clock_hz": u64::from(p.max_engine_clk_fcompute) * 1_000_000,
        "vram_bytes": d.vram_bytes(g),
        "vram_visible_bytes": d.vram_visible(g),
        "gtt_bytes": d.gtt_bytes,
        "queues": {
            "compute": p.num_cp_queues,
            "sdma": u64::from(p.num_sdma_engines) * per_engine,
            "sdma_xgmi": u64::from(p.num_sdma_xgmi_engines) * per_engine,
        },
        "sdma_engines": p.num_sdma_engines,
        "sdma_xgmi_engines": p.num_sdma_xgmi_engines,
        "doorbell_bytes": p.doorbell_bytes(),
        "num_xcc": p.num_xcc,
        "compute_queue": if hcq_driver::ComputeQueueKind::Auto.resolve_aql(p.num_xcc.max(1)) {
            "aql"
        } else {
            "pm4"
        },
        "drm_render_node": format!("/dev/dri/renderD{}", p.drm_render_minor),
    })
}

/// The whole report as JSON: `{"kfd_version", "backend", "gpus": [...]}`.
fn report(kfd: &Kfd, backend: &str) -> Result<Value, CliError> {
    let (major, minor) = kfd.version();
    let xnack = kfd.xnack_mode()?;
    let mut gpus = Vec::new();
    for g in kfd.gpus() {
        let d = kfd.gpu_details(g)?;
        gpus.push(gpu_json(g, &d, xnack));
    }
    Ok(json!({
        "kfd_version": format!("{major}.{minor}"),
        "backend": backend,
        "gpus": gpus,
    }))
}

/// `n` bytes as KiB/MiB/GiB for the text output.
fn size(v: &Value) -> String {
    match v.as_u64() {
        None => "unknown".into(),
        Some(n) if n >= 1 << 30 && n % (1 << 30) == 0 => format!("{} GiB", n >> 30),
        Some(n) if n >= 1 << 20 => format!("{} MiB", n >> 20),
        Some(n) => format!("{} KiB", n >> 10),
    }
}

/// The text form: one block per GPU, rocminfo style.
fn print_text(r: &Value) {
    println!(
        "KFD ioctl interface {}, {} GPU(s)",
        r["kfd_version"].as_str().unwrap_or("?"),
        r["gpus"].as_array().map_or(0, Vec::len)
    );
    for (i, g) in r["gpus"].as_array().into_iter().flatten().enumerate() {
        let name = g["marketing_name"]
            .as_str()
            .unwrap_or("(marketing name unknown)");
        println!("gpu {i}: {name}");
        let line = |k: &str, v: String| println!("  {k:<22} {v}");
        line(
            "node / gpu_id",
            format!("{} / {:#06x}", g["node"], g["gpu_id"].as_u64().unwrap_or(0)),
        );
        line("ISA", g["isa"].as_str().unwrap_or("?").to_owned());
        line(
            "compute units",
            format!(
                "{} CUs, {} SIMDs per CU, {} waves per CU, wave{}",
                g["compute_units"], g["simds_per_cu"], g["max_waves_per_cu"], g["wave_size"]
            ),
        );
        line(
            "XCCs / compute queue",
            format!(
                "{} / {} (hcq's choice: AQL for more than one XCC; HCQ_AQL=1 forces it)",
                g["num_xcc"],
                g["compute_queue"].as_str().unwrap_or("?").to_uppercase()
            ),
        );
        line("max workgroup size", g["max_workgroup_size"].to_string());
        line(
            "max engine clock",
            format!(
                "{} MHz",
                g["max_engine_clock_hz"].as_u64().unwrap_or(0) / 1_000_000
            ),
        );
        line(
            "LDS / L1 / L2 / L3",
            format!(
                "{} / {} / {} / {}",
                size(&g["lds_bytes"]),
                size(&g["l1_cache_bytes"]),
                size(&g["l2_cache_bytes"]),
                if g["l3_cache_bytes"].is_null() {
                    "none".into()
                } else {
                    size(&g["l3_cache_bytes"])
                }
            ),
        );
        line(
            "VRAM (CPU-visible)",
            format!(
                "{} ({})",
                size(&g["vram_bytes"]),
                size(&g["vram_visible_bytes"])
            ),
        );
        line("GTT", size(&g["gtt_bytes"]));
        let q = &g["queues"];
        line(
            "queues",
            format!(
                "{} compute, {} SDMA on {} engines ({} XGMI)",
                q["compute"], q["sdma"], g["sdma_engines"], g["sdma_xgmi_engines"]
            ),
        );
        line("doorbell", format!("{} bytes", g["doorbell_bytes"]));
        line(
            "render node",
            g["drm_render_node"].as_str().unwrap_or("?").to_owned(),
        );
    }
}

/// Runs `hcq info`.
pub fn run(args: &[String]) -> Result<(), CliError> {
    let (mut force_sim, mut json_out) = (false, false);
    for a in args {
        match a.as_str() {
            "--sim" => force_sim = true,
            "--json" => json_out = true,
            other => return Err(CliError::usage(format!("unknown option `{other}`"))),
        }
    }
    let backend = open_backend(force_sim)?;
    let kind = if backend.note().is_some() {
        "sim"
    } else {
        "kfd"
    };
    let r = report(backend.kfd(), kind)?;
    if json_out {
        println!("{r}");
    } else {
        if let Some(note) = backend.note() {
            println!("{note}");
        }
        print_text(&r);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use hcq_sim::{GpuConfig, SimConfig, SimKfd};
    use std::sync::Arc;

    fn kfd(gpus: Vec<GpuConfig>) -> Kfd {
        let sim = Arc::new(
            SimKfd::new(SimConfig {
                gpus,
                ..SimConfig::default()
            })
            .unwrap(),
        );
        // SAFETY: the simulator is reachable only through the `Kfd` from here on.
        unsafe { Kfd::with_sim(sim) }.unwrap()
    }

    /// Every simulated GPU yields exactly the schema's keys, with the values its topology files
    /// say (read and parsed the way a real /dev/kfd's are).
    #[test]
    fn schema_keys_and_values_from_the_simulated_sysfs() {
        let small_bar = GpuConfig {
            large_bar: false,
            ..GpuConfig::gfx1100()
        };
        let k = kfd(vec![
            GpuConfig::gfx1100(),
            GpuConfig::gfx90a(),
            GpuConfig::gfx942(),
            small_bar,
        ]);
        let r = report(&k, "sim").unwrap();
        assert_eq!(r["kfd_version"], "1.14");
        let gpus = r["gpus"].as_array().unwrap();
        assert_eq!(gpus.len(), 4);
        let mut want: Vec<&str> = GPU_KEYS.to_vec();
        want.sort_unstable();
        for g in gpus {
            let mut keys: Vec<&str> = g.as_object().unwrap().keys().map(String::as_str).collect();
            keys.sort_unstable();
            assert_eq!(keys, want);
        }
        let (xtx, mi210, mi300, small) = (&gpus[0], &gpus[1], &gpus[2], &gpus[3]);
        assert_eq!(xtx["isa"], "amdgcn-amd-amdhsa--gfx1100");
        assert_eq!(xtx["features"], json!({"xnack": null, "sramecc": null}));
        assert_eq!(xtx["marketing_name"], "AMD Radeon RX 7900 XTX");
        assert_eq!(xtx["compute_units"], 96);
        assert_eq!(xtx["max_waves_per_cu"], 32);
        assert_eq!(xtx["wave_size"], 32);
        assert_eq!(xtx["l1_cache_bytes"], 32 << 10);
        assert_eq!(xtx["l2_cache_bytes"], 6 << 20);
        assert_eq!(xtx["l3_cache_bytes"], 96 << 20);
        assert_eq!(xtx["max_engine_clock_hz"], 2_482_000_000u64);
        assert_eq!(xtx["vram_bytes"], 24u64 << 30);
        assert_eq!(xtx["vram_visible_bytes"], 24u64 << 30);
        assert_eq!(xtx["gtt_bytes"], 64u64 << 30);
        assert_eq!(
            xtx["queues"],
            json!({"compute": 8, "sdma": 12, "sdma_xgmi": 0})
        );
        assert_eq!(xtx["drm_render_node"], "/dev/dri/renderD128");
        assert_eq!(mi210["isa"], "amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-");
        assert_eq!(mi210["features"], json!({"xnack": false, "sramecc": true}));
        assert_eq!(mi210["wave_size"], 64);
        assert_eq!(mi210["l3_cache_bytes"], Value::Null);
        assert_eq!(mi210["drm_render_node"], "/dev/dri/renderD129");
        assert_eq!(mi300["gfx_target"], "gfx942");
        assert_eq!(mi300["marketing_name"], "AMD Instinct MI300X");
        assert_eq!(small["vram_visible_bytes"], 256u64 << 20);
    }
}
