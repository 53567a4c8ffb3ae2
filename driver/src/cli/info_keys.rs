//! The keys of each GPU object of `hcq info --json` (driver/README.md's schema): the one list
//! the unit tests of `info.rs` and `driver/tests/cli_info.rs` (through `#[path]`) check.

/// Every key of a GPU object, in the order the schema lists them.
pub const GPU_KEYS: &[&str] = &[
    "node",
    "gpu_id",
    "gfx_target",
    "gfx_target_version",
    "isa",
    "features",
    "marketing_name",
    "vendor_id",
    "device_id",
    "compute_units",
    "simds_per_cu",
    "max_waves_per_cu",
    "wave_size",
    "max_workgroup_size",
    "lds_bytes",
    "l1_cache_bytes",
    "l2_cache_bytes",
    "l3_cache_bytes",
    "max_engine_clock_hz",
    "vram_bytes",
    "vram_visible_bytes",
    "gtt_bytes",
    "queues",
    "sdma_engines",
    "sdma_xgmi_engines",
    "doorbell_bytes",
    "num_xcc",
    "drm_render_node",
];
