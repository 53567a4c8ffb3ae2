//! The keys of `hcq bench --json`: the one list the binary prints and its tests check
//! (`driver/tests/cli_bench.rs` compiles this file too, through `#[path]`).

/// The JSON keys `hcq bench --json` always prints with a number or null (besides `cpu` and
/// `quick`); the table prints one line for each.
pub const KEYS: &[&str] = &[
    "build_launch_ns",
    "ring_submit_ns",
    "update_exec_ns",
    "update_wait_ns",
    "update_signal_ns",
    "sdma_copy_64mib_build_ns",
    "decode_dwords_per_s",
    "arena_alloc_ns",
    "driver_launches_per_s",
    "driver_launch_ns",
    "driver_launch_aql_ns",
    "driver_launch_guarded_ns",
    "demo_copy_in_gb_per_s",
    "graph_patch_1000_ns",
    "graph_patch_1000_floor_ns",
    "graph_patch_1000_over_floor",
    "graph_patch_1000_hand_ns",
    "graph_patch_1000_over_hand",
    "graph_patch_1000_timeline_ns",
    "graph_replay_submit_ns",
    "memcpy_105_dwords_ns",
    "ring_submit_over_memcpy",
];

/// Keys measured in every build, `--quick` included (a number, never null).
#[cfg_attr(not(test), allow(dead_code))]
pub const ALWAYS_MEASURED: &[&str] = &[
    "build_launch_ns",
    "ring_submit_ns",
    "update_exec_ns",
    "update_wait_ns",
    "update_signal_ns",
    "sdma_copy_64mib_build_ns",
    "decode_dwords_per_s",
    "arena_alloc_ns",
    "memcpy_105_dwords_ns",
    "ring_submit_over_memcpy",
    "graph_patch_1000_ns",
    "graph_patch_1000_timeline_ns",
];

/// Keys measured whenever the simulator is built in (feature `sim`, on by default).
#[cfg_attr(not(test), allow(dead_code))]
pub const MEASURED_ON_SIM: &[&str] = &[
    "driver_launches_per_s",
    "driver_launch_aql_ns",
    "driver_launch_guarded_ns",
    "demo_copy_in_gb_per_s",
    "graph_replay_submit_ns",
];
