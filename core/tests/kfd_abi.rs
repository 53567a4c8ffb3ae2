//! Pins core::kfd's argument structs and ioctl numbers to the kernel's own header.
//!
//! Compiles a C program against `<linux/kfd_ioctl.h>` (linux-libc-dev; override the path with
//! `KFD_IOCTL_H`) that prints `sizeof`/`offsetof` of every struct field hcq mirrors and every
//! `AMDKFD_IOC_*` the header defines, runs it, and compares with the Rust values. Items newer
//! than the installed header are reported on stderr and checked against the numbers in
//! Linux's `include/uapi/linux/kfd_ioctl.h` (KFD ABI 1.17) instead. No gcc or no header is a failure, not a skip.

use core::mem::{offset_of, size_of};
use hcq_core::kfd::*;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;

fn field_size<T, F>(_: fn(&T) -> &F) -> usize {
    size_of::<F>()
}

/// One C struct field and where Rust puts it.
struct FieldCheck {
    c_struct: &'static str,
    c_field: &'static str,
    rust_off: usize,
    rust_size: usize,
    /// Text the header must contain for this field to exist there (newer ABI), or "".
    needs: &'static str,
}

macro_rules! fields {
    ($v:ident, $t:ty, $cs:literal, needs $needs:literal, { $($rf:ident => $cf:literal),* $(,)? }) => {
        $( $v.push(FieldCheck {
            c_struct: $cs,
            c_field: $cf,
            rust_off: offset_of!($t, $rf),
            rust_size: field_size(|s: &$t| &s.$rf),
            needs: $needs,
        }); )*
    };
    ($v:ident, $t:ty, $cs:literal, { $($rf:ident => $cf:literal),* $(,)? }) => {
        fields!($v, $t, $cs, needs "", { $($rf => $cf),* });
    };
}

fn field_checks() -> Vec<FieldCheck> {
    let mut v = Vec::new();
    fields!(v, GetVersionArgs, "kfd_ioctl_get_version_args", {
        major_version => "major_version", minor_version => "minor_version",
    });
    fields!(v, CreateQueueArgs, "kfd_ioctl_create_queue_args", {
        ring_base_address => "ring_base_address", write_pointer_address => "write_pointer_address",
        read_pointer_address => "read_pointer_address", doorbell_offset => "doorbell_offset",
        ring_size => "ring_size", gpu_id => "gpu_id", queue_type => "queue_type",
        queue_percentage => "queue_percentage", queue_priority => "queue_priority",
        queue_id => "queue_id", eop_buffer_address => "eop_buffer_address",
        eop_buffer_size => "eop_buffer_size", ctx_save_restore_address => "ctx_save_restore_address",
        ctx_save_restore_size => "ctx_save_restore_size", ctl_stack_size => "ctl_stack_size",
    });
    fields!(v, CreateQueueArgs, "kfd_ioctl_create_queue_args", needs "sdma_engine_id", {
        sdma_engine_id => "sdma_engine_id",
    });
    fields!(v, DestroyQueueArgs, "kfd_ioctl_destroy_queue_args", { queue_id => "queue_id", pad => "pad" });
    fields!(v, GetClockCountersArgs, "kfd_ioctl_get_clock_counters_args", {
        gpu_clock_counter => "gpu_clock_counter", cpu_clock_counter => "cpu_clock_counter",
        system_clock_counter => "system_clock_counter", system_clock_freq => "system_clock_freq",
        gpu_id => "gpu_id", pad => "pad",
    });
    fields!(v, ProcessDeviceApertures, "kfd_process_device_apertures", {
        lds_base => "lds_base", lds_limit => "lds_limit", scratch_base => "scratch_base",
        scratch_limit => "scratch_limit", gpuvm_base => "gpuvm_base", gpuvm_limit => "gpuvm_limit",
        gpu_id => "gpu_id", pad => "pad",
    });
    fields!(v, GetProcessAperturesNewArgs, "kfd_ioctl_get_process_apertures_new_args", {
        kfd_process_device_apertures_ptr => "kfd_process_device_apertures_ptr",
        num_of_nodes => "num_of_nodes", pad => "pad",
    });
    fields!(v, CreateEventArgs, "kfd_ioctl_create_event_args", {
        event_page_offset => "event_page_offset", event_trigger_data => "event_trigger_data",
        event_type => "event_type", auto_reset => "auto_reset", node_id => "node_id",
        event_id => "event_id", event_slot_index => "event_slot_index",
    });
    fields!(v, DestroyEventArgs, "kfd_ioctl_destroy_event_args", { event_id => "event_id", pad => "pad" });
    fields!(v, SetEventArgs, "kfd_ioctl_set_event_args", { event_id => "event_id", pad => "pad" });
    fields!(v, ResetEventArgs, "kfd_ioctl_reset_event_args", { event_id => "event_id", pad => "pad" });
    fields!(v, MemoryExceptionFailure, "kfd_memory_exception_failure", {
        not_present => "NotPresent", read_only => "ReadOnly", no_execute => "NoExecute",
        imprecise => "imprecise",
    });
    fields!(v, HsaMemoryExceptionData, "kfd_hsa_memory_exception_data", {
        failure => "failure", va => "va", gpu_id => "gpu_id", error_type => "ErrorType",
    });
    fields!(v, HsaHwExceptionData, "kfd_hsa_hw_exception_data", {
        reset_type => "reset_type", reset_cause => "reset_cause", memory_lost => "memory_lost",
        gpu_id => "gpu_id",
    });
    fields!(v, EventData, "kfd_event_data", {
        kfd_event_data_ext => "kfd_event_data_ext", event_id => "event_id", pad => "pad",
    });
    // The union members: kept raw in Rust (`data`), read through typed accessors.
    v.push(FieldCheck {
        c_struct: "kfd_event_data",
        c_field: "memory_exception_data",
        rust_off: EVENT_DATA_UNION_OFFSET,
        rust_size: size_of::<HsaMemoryExceptionData>(),
        needs: "",
    });
    v.push(FieldCheck {
        c_struct: "kfd_event_data",
        c_field: "hw_exception_data",
        rust_off: EVENT_DATA_UNION_OFFSET,
        rust_size: size_of::<HsaHwExceptionData>(),
        needs: "",
    });
    v.push(FieldCheck {
        c_struct: "kfd_event_data",
        c_field: "signal_event_data.last_event_age",
        rust_off: EVENT_DATA_UNION_OFFSET,
        rust_size: 8,
        needs: "signal_event_data",
    });
    fields!(v, WaitEventsArgs, "kfd_ioctl_wait_events_args", {
        events_ptr => "events_ptr", num_events => "num_events", wait_for_all => "wait_for_all",
        timeout => "timeout", wait_result => "wait_result",
    });
    fields!(v, AcquireVmArgs, "kfd_ioctl_acquire_vm_args", { drm_fd => "drm_fd", gpu_id => "gpu_id" });
    fields!(v, AllocMemoryOfGpuArgs, "kfd_ioctl_alloc_memory_of_gpu_args", {
        va_addr => "va_addr", size => "size", handle => "handle", mmap_offset => "mmap_offset",
        gpu_id => "gpu_id", flags => "flags",
    });
    fields!(v, FreeMemoryOfGpuArgs, "kfd_ioctl_free_memory_of_gpu_args", { handle => "handle" });
    fields!(v, MapMemoryToGpuArgs, "kfd_ioctl_map_memory_to_gpu_args", {
        handle => "handle", device_ids_array_ptr => "device_ids_array_ptr",
        n_devices => "n_devices", n_success => "n_success",
    });
    fields!(v, UnmapMemoryFromGpuArgs, "kfd_ioctl_unmap_memory_from_gpu_args", {
        handle => "handle", device_ids_array_ptr => "device_ids_array_ptr",
        n_devices => "n_devices", n_success => "n_success",
    });
    fields!(v, SetXnackModeArgs, "kfd_ioctl_set_xnack_mode_args", { xnack_enabled => "xnack_enabled" });
    fields!(v, GetAvailableMemoryArgs, "kfd_ioctl_get_available_memory_args", {
        available => "available", gpu_id => "gpu_id", pad => "pad",
    });
    fields!(v, SetCuMaskArgs, "kfd_ioctl_set_cu_mask_args", {
        queue_id => "queue_id", num_cu_mask => "num_cu_mask", cu_mask_ptr => "cu_mask_ptr",
    });
    fields!(v, GetQueueWaveStateArgs, "kfd_ioctl_get_queue_wave_state_args", {
        ctl_stack_address => "ctl_stack_address", ctl_stack_used_size => "ctl_stack_used_size",
        save_area_used_size => "save_area_used_size", queue_id => "queue_id", pad => "pad",
    });
    fields!(v, GetTileConfigArgs, "kfd_ioctl_get_tile_config_args", {
        tile_config_ptr => "tile_config_ptr", macro_tile_config_ptr => "macro_tile_config_ptr",
        num_tile_configs => "num_tile_configs", num_macro_tile_configs => "num_macro_tile_configs",
        gpu_id => "gpu_id", gb_addr_config => "gb_addr_config", num_banks => "num_banks",
        num_ranks => "num_ranks",
    });
    fields!(v, GetDmabufInfoArgs, "kfd_ioctl_get_dmabuf_info_args", {
        size => "size", metadata_ptr => "metadata_ptr", metadata_size => "metadata_size",
        gpu_id => "gpu_id", flags => "flags", dmabuf_fd => "dmabuf_fd",
    });
    fields!(v, RuntimeEnableArgs, "kfd_ioctl_runtime_enable_args", needs "kfd_ioctl_runtime_enable_args", {
        r_debug => "r_debug", mode_mask => "mode_mask", capabilities_mask => "capabilities_mask",
    });
    v
}

/// (C struct, Rust size, size in a header without the newer fields or 0 when it must match, text
/// marking the newer layout).
fn struct_sizes() -> Vec<(&'static str, usize, usize, &'static str)> {
    vec![
        (
            "kfd_ioctl_get_version_args",
            size_of::<GetVersionArgs>(),
            0,
            "",
        ),
        (
            "kfd_ioctl_create_queue_args",
            size_of::<CreateQueueArgs>(),
            CREATE_QUEUE_ARGS_SIZE_V1_11,
            "sdma_engine_id",
        ),
        (
            "kfd_ioctl_destroy_queue_args",
            size_of::<DestroyQueueArgs>(),
            0,
            "",
        ),
        (
            "kfd_ioctl_get_clock_counters_args",
            size_of::<GetClockCountersArgs>(),
            0,
            "",
        ),
        (
            "kfd_process_device_apertures",
            size_of::<ProcessDeviceApertures>(),
            0,
            "",
        ),
        (
            "kfd_ioctl_get_process_apertures_new_args",
            size_of::<GetProcessAperturesNewArgs>(),
            0,
            "",
        ),
        (
            "kfd_ioctl_create_event_args",
            size_of::<CreateEventArgs>(),
            0,
            "",
        ),
        (
            "kfd_ioctl_destroy_event_args",
            size_of::<DestroyEventArgs>(),
            0,
            "",
        ),
        ("kfd_ioctl_set_event_args", size_of::<SetEventArgs>(), 0, ""),
        (
            "kfd_ioctl_reset_event_args",
            size_of::<ResetEventArgs>(),
            0,
            "",
        ),
        (
            "kfd_memory_exception_failure",
            size_of::<MemoryExceptionFailure>(),
            0,
            "",
        ),
        (
            "kfd_hsa_memory_exception_data",
            size_of::<HsaMemoryExceptionData>(),
            0,
            "",
        ),
        (
            "kfd_hsa_hw_exception_data",
            size_of::<HsaHwExceptionData>(),
            0,
            "",
        ),
        ("kfd_event_data", size_of::<EventData>(), 0, ""),
        (
            "kfd_ioctl_wait_events_args",
            size_of::<WaitEventsArgs>(),
            0,
            "",
        ),
        (
            "kfd_ioctl_acquire_vm_args",
            size_of::<AcquireVmArgs>(),
            0,
            "",
        ),
        (
            "kfd_ioctl_alloc_memory_of_gpu_args",
            size_of::<AllocMemoryOfGpuArgs>(),
            0,
            "",
        ),
        (
            "kfd_ioctl_free_memory_of_gpu_args",
            size_of::<FreeMemoryOfGpuArgs>(),
            0,
            "",
        ),
        (
            "kfd_ioctl_map_memory_to_gpu_args",
            size_of::<MapMemoryToGpuArgs>(),
            0,
            "",
        ),
        (
            "kfd_ioctl_unmap_memory_from_gpu_args",
            size_of::<UnmapMemoryFromGpuArgs>(),
            0,
            "",
        ),
        (
            "kfd_ioctl_set_xnack_mode_args",
            size_of::<SetXnackModeArgs>(),
            0,
            "",
        ),
        (
            "kfd_ioctl_get_available_memory_args",
            size_of::<GetAvailableMemoryArgs>(),
            0,
            "",
        ),
        (
            "kfd_ioctl_set_cu_mask_args",
            size_of::<SetCuMaskArgs>(),
            0,
            "",
        ),
        (
            "kfd_ioctl_get_queue_wave_state_args",
            size_of::<GetQueueWaveStateArgs>(),
            0,
            "",
        ),
        (
            "kfd_ioctl_get_tile_config_args",
            size_of::<GetTileConfigArgs>(),
            0,
            "",
        ),
        (
            "kfd_ioctl_get_dmabuf_info_args",
            size_of::<GetDmabufInfoArgs>(),
            0,
            "",
        ),
        (
            "kfd_ioctl_runtime_enable_args",
            size_of::<RuntimeEnableArgs>(),
            0,
            "kfd_ioctl_runtime_enable_args",
        ),
    ]
}

/// Every ioctl hcq names, with the number Linux's `kfd_ioctl.h` gives (ABI 1.17 sizes).
const IOCTLS: &[(&str, u32, u32)] = &[
    ("GET_VERSION", AMDKFD_IOC_GET_VERSION.request(), 0x8008_4B01),
    (
        "CREATE_QUEUE",
        AMDKFD_IOC_CREATE_QUEUE.request(),
        0xC060_4B02,
    ),
    (
        "DESTROY_QUEUE",
        AMDKFD_IOC_DESTROY_QUEUE.request(),
        0xC008_4B03,
    ),
    (
        "SET_MEMORY_POLICY",
        AMDKFD_IOC_SET_MEMORY_POLICY.request(),
        0x4020_4B04,
    ),
    (
        "GET_CLOCK_COUNTERS",
        AMDKFD_IOC_GET_CLOCK_COUNTERS.request(),
        0xC028_4B05,
    ),
    (
        "GET_PROCESS_APERTURES",
        AMDKFD_IOC_GET_PROCESS_APERTURES.request(),
        0x8190_4B06,
    ),
    (
        "UPDATE_QUEUE",
        AMDKFD_IOC_UPDATE_QUEUE.request(),
        0x4018_4B07,
    ),
    (
        "CREATE_EVENT",
        AMDKFD_IOC_CREATE_EVENT.request(),
        0xC020_4B08,
    ),
    (
        "DESTROY_EVENT",
        AMDKFD_IOC_DESTROY_EVENT.request(),
        0x4008_4B09,
    ),
    ("SET_EVENT", AMDKFD_IOC_SET_EVENT.request(), 0x4008_4B0A),
    ("RESET_EVENT", AMDKFD_IOC_RESET_EVENT.request(), 0x4008_4B0B),
    ("WAIT_EVENTS", AMDKFD_IOC_WAIT_EVENTS.request(), 0xC018_4B0C),
    (
        "DBG_REGISTER_DEPRECATED",
        AMDKFD_IOC_DBG_REGISTER_DEPRECATED.request(),
        0x4008_4B0D,
    ),
    (
        "DBG_UNREGISTER_DEPRECATED",
        AMDKFD_IOC_DBG_UNREGISTER_DEPRECATED.request(),
        0x4008_4B0E,
    ),
    (
        "DBG_ADDRESS_WATCH_DEPRECATED",
        AMDKFD_IOC_DBG_ADDRESS_WATCH_DEPRECATED.request(),
        0x4010_4B0F,
    ),
    (
        "DBG_WAVE_CONTROL_DEPRECATED",
        AMDKFD_IOC_DBG_WAVE_CONTROL_DEPRECATED.request(),
        0x4010_4B10,
    ),
    (
        "SET_SCRATCH_BACKING_VA",
        AMDKFD_IOC_SET_SCRATCH_BACKING_VA.request(),
        0xC010_4B11,
    ),
    (
        "GET_TILE_CONFIG",
        AMDKFD_IOC_GET_TILE_CONFIG.request(),
        0xC028_4B12,
    ),
    (
        "SET_TRAP_HANDLER",
        AMDKFD_IOC_SET_TRAP_HANDLER.request(),
        0x4018_4B13,
    ),
    (
        "GET_PROCESS_APERTURES_NEW",
        AMDKFD_IOC_GET_PROCESS_APERTURES_NEW.request(),
        0xC010_4B14,
    ),
    ("ACQUIRE_VM", AMDKFD_IOC_ACQUIRE_VM.request(), 0x4008_4B15),
    (
        "ALLOC_MEMORY_OF_GPU",
        AMDKFD_IOC_ALLOC_MEMORY_OF_GPU.request(),
        0xC028_4B16,
    ),
    (
        "FREE_MEMORY_OF_GPU",
        AMDKFD_IOC_FREE_MEMORY_OF_GPU.request(),
        0x4008_4B17,
    ),
    (
        "MAP_MEMORY_TO_GPU",
        AMDKFD_IOC_MAP_MEMORY_TO_GPU.request(),
        0xC018_4B18,
    ),
    (
        "UNMAP_MEMORY_FROM_GPU",
        AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU.request(),
        0xC018_4B19,
    ),
    ("SET_CU_MASK", AMDKFD_IOC_SET_CU_MASK.request(), 0x4010_4B1A),
    (
        "GET_QUEUE_WAVE_STATE",
        AMDKFD_IOC_GET_QUEUE_WAVE_STATE.request(),
        0xC018_4B1B,
    ),
    (
        "GET_DMABUF_INFO",
        AMDKFD_IOC_GET_DMABUF_INFO.request(),
        0xC020_4B1C,
    ),
    (
        "IMPORT_DMABUF",
        AMDKFD_IOC_IMPORT_DMABUF.request(),
        0xC018_4B1D,
    ),
    (
        "ALLOC_QUEUE_GWS",
        AMDKFD_IOC_ALLOC_QUEUE_GWS.request(),
        0xC010_4B1E,
    ),
    ("SMI_EVENTS", AMDKFD_IOC_SMI_EVENTS.request(), 0xC008_4B1F),
    ("SVM", AMDKFD_IOC_SVM.request(), 0xC018_4B20),
    (
        "SET_XNACK_MODE",
        AMDKFD_IOC_SET_XNACK_MODE.request(),
        0xC004_4B21,
    ),
    ("CRIU_OP", AMDKFD_IOC_CRIU_OP.request(), 0xC038_4B22),
    (
        "AVAILABLE_MEMORY",
        AMDKFD_IOC_AVAILABLE_MEMORY.request(),
        0xC010_4B23,
    ),
    (
        "EXPORT_DMABUF",
        AMDKFD_IOC_EXPORT_DMABUF.request(),
        0xC010_4B24,
    ),
    (
        "RUNTIME_ENABLE",
        AMDKFD_IOC_RUNTIME_ENABLE.request(),
        0xC010_4B25,
    ),
    ("DBG_TRAP", AMDKFD_IOC_DBG_TRAP.request(), 0xC020_4B26),
    (
        "CREATE_PROCESS",
        AMDKFD_IOC_CREATE_PROCESS.request(),
        0x0000_4B27,
    ),
];

fn header_path() -> PathBuf {
    std::env::var_os("KFD_IOCTL_H").map_or_else(
        || PathBuf::from("/usr/include/linux/kfd_ioctl.h"),
        PathBuf::from,
    )
}

/// `AMDKFD_IOC_*` names the header defines (line continuations joined).
fn header_ioctl_names(header: &str) -> Vec<String> {
    let joined = header.replace("\\\n", " ");
    let mut names = Vec::new();
    for line in joined.lines() {
        let mut words = line.split_whitespace();
        if words.next() == Some("#define")
            && let Some(name) = words.next()
            && let Some(short) = name.strip_prefix("AMDKFD_IOC_")
            && !name.contains('(')
        {
            names.push(short.to_string());
        }
    }
    names
}

#[test]
fn pinned_numbers_match_reference_table() {
    for &(name, ours, reference) in IOCTLS {
        assert_eq!(
            ours, reference,
            "AMDKFD_IOC_{name}: {ours:#x} vs reference {reference:#x}"
        );
        let r = IoctlRequest::from_raw(ours);
        assert_eq!(r.get(IoctlRequest::TYPE), u32::from(b'K'), "{name}");
    }
    assert_eq!(IOCTLS.len(), 0x27, "one entry per command 0x01..=0x27");
    // The typed table the driver and the simulator dispatch on is this one, name for name.
    assert_eq!(KFD_IOCTLS.len(), IOCTLS.len());
    for (e, &(name, ours, _)) in KFD_IOCTLS.iter().zip(IOCTLS) {
        assert_eq!((e.name, e.request), (name, ours), "KFD_IOCTLS[{:#x}]", e.nr);
    }
}

#[test]
#[cfg_attr(
    miri,
    ignore = "runs gcc on the kernel header: miri cannot spawn processes"
)]
fn abi_matches_kernel_header() {
    let path = header_path();
    let header = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "cannot read {} ({e}); install linux-libc-dev (apt-get install linux-libc-dev) \
             or point KFD_IOCTL_H at kfd_ioctl.h",
            path.display()
        )
    });
    let names = header_ioctl_names(&header);
    assert!(
        names.len() >= 30,
        "only {} AMDKFD_IOC_* in {}",
        names.len(),
        path.display()
    );

    let fields = field_checks();
    let sizes = struct_sizes();
    let mut c = String::from(
        "#include <stdio.h>\n#include <stddef.h>\n#include <linux/kfd_ioctl.h>\nint main(void) {\n",
    );
    for n in &names {
        c.push_str(&format!(
            "  printf(\"ioc {n} %lu\\n\", (unsigned long)(AMDKFD_IOC_{n}));\n"
        ));
    }
    for (s, _, old, needs) in &sizes {
        if needs.is_empty() || header.contains(needs) || *old != 0 {
            c.push_str(&format!(
                "  printf(\"size {s} %zu\\n\", sizeof(struct {s}));\n"
            ));
        }
    }
    for f in &fields {
        if f.needs.is_empty() || header.contains(f.needs) {
            let (s, fl) = (f.c_struct, f.c_field);
            c.push_str(&format!(
                "  printf(\"field {s}.{fl} %zu %zu\\n\", offsetof(struct {s}, {fl}), \
                 sizeof(((struct {s} *)0)->{fl}));\n"
            ));
        }
    }
    c.push_str("  return 0;\n}\n");

    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("kfd_abi");
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("kfd_abi.c");
    let exe = dir.join("kfd_abi");
    std::fs::write(&src, &c).unwrap();
    // kfd_ioctl.h includes <drm/drm.h> only for the __u32 types and _IOWR macros; Debian ships
    // drm.h in libdrm-dev, so a fallback (searched after the system dirs) provides just those.
    let shim = dir.join("shim");
    std::fs::create_dir_all(shim.join("drm")).unwrap();
    std::fs::write(
        shim.join("drm/drm.h"),
        "#include <linux/types.h>\n#include <linux/ioctl.h>\n",
    )
    .unwrap();
    let mut cc = Command::new("gcc");
    cc.arg("-idirafter")
        .arg(&shim)
        .arg("-o")
        .arg(&exe)
        .arg(&src);
    if let Some(dir) = std::env::var_os("KFD_IOCTL_H").map(PathBuf::from) {
        // KFD_IOCTL_H=/x/linux/kfd_ioctl.h -> -I/x
        if let Some(inc) = dir.parent().and_then(|p| p.parent()) {
            cc.arg("-I").arg(inc);
        }
    }
    let out = cc
        .output()
        .unwrap_or_else(|e| panic!("cannot run gcc ({e}); install gcc (apt-get install gcc)"));
    assert!(
        out.status.success(),
        "gcc failed on {}:\n{}",
        src.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let run = Command::new(&exe).output().unwrap();
    assert!(run.status.success(), "{} failed", exe.display());
    let text = String::from_utf8(run.stdout).unwrap();

    let mut c_ioc = BTreeMap::new();
    let mut c_size = BTreeMap::new();
    let mut c_field = BTreeMap::new();
    for line in text.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        match w.as_slice() {
            ["ioc", n, v] => {
                c_ioc.insert(n.to_string(), v.parse::<u64>().unwrap());
            }
            ["size", s, v] => {
                c_size.insert(s.to_string(), v.parse::<usize>().unwrap());
            }
            ["field", f, o, s] => {
                c_field.insert(
                    f.to_string(),
                    (o.parse::<usize>().unwrap(), s.parse::<usize>().unwrap()),
                );
            }
            _ => panic!("unexpected line from the C program: {line}"),
        }
    }

    let mut failures = Vec::new();
    let mut checked = 0;

    // Every ioctl the header has must be one we define, with the same number (or, for a struct
    // that grew since the header, the number built from the header's size).
    for n in &names {
        let Some(&(_, ours, _)) = IOCTLS.iter().find(|(name, _, _)| name == n) else {
            failures.push(format!("header defines AMDKFD_IOC_{n}, core::kfd does not"));
            continue;
        };
        let theirs = c_ioc[n];
        let expected = if n == "CREATE_QUEUE" && !header.contains("sdma_engine_id") {
            u64::from(iowr(b'K', 0x02, CREATE_QUEUE_ARGS_SIZE_V1_11))
        } else {
            u64::from(ours)
        };
        checked += 1;
        if theirs != expected {
            failures.push(format!(
                "AMDKFD_IOC_{n}: header {theirs:#x}, core {expected:#x}"
            ));
        }
    }
    for (name, _, _) in IOCTLS {
        if !names.iter().any(|n| n == name) {
            eprintln!(
                "AMDKFD_IOC_{name}: not in {} (older ABI); pinned to rocm_kernel.md §5",
                path.display()
            );
        }
    }
    for (s, ours, old, needs) in &sizes {
        match c_size.get(*s) {
            Some(&theirs) => {
                checked += 1;
                let want = if *old != 0 && !header.contains(needs) {
                    *old
                } else {
                    *ours
                };
                if theirs != want {
                    failures.push(format!("sizeof(struct {s}): header {theirs}, core {want}"));
                }
            }
            None => {
                eprintln!("struct {s}: not in this header (newer ABI); size pinned by const assert")
            }
        }
    }
    for f in &fields {
        let key = format!("{}.{}", f.c_struct, f.c_field);
        match c_field.get(&key) {
            Some(&(off, size)) => {
                checked += 1;
                if off != f.rust_off || size != f.rust_size {
                    failures.push(format!(
                        "{key}: header offset {off} size {size}, core offset {} size {}",
                        f.rust_off, f.rust_size
                    ));
                }
            }
            None => {
                eprintln!("{key}: not in this header (newer ABI); offset pinned by const assert")
            }
        }
    }
    // Every constant of core::kfd::consts: the header's value when it defines the name, else
    // the number in Linux's mainline header (KFD ABI 1.17) or what amdkfd's source and ROCR use
    // (the event page, doorbells), pinned here. A constant added to consts.rs without a line
    // here fails the coverage check below.
    macro_rules! c {
        ($n:ident) => {
            (stringify!($n), u64::from($n))
        };
    }
    let consts: &[(&str, u64)] = &[
        c!(KFD_IOCTL_MAJOR_VERSION),
        c!(KFD_IOCTL_MINOR_RUNTIME_ENABLE),
        c!(KFD_IOC_QUEUE_TYPE_COMPUTE),
        c!(KFD_IOC_QUEUE_TYPE_SDMA),
        c!(KFD_IOC_QUEUE_TYPE_COMPUTE_AQL),
        c!(KFD_IOC_QUEUE_TYPE_SDMA_XGMI),
        c!(KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID),
        c!(KFD_MAX_QUEUE_PERCENTAGE),
        c!(KFD_MAX_QUEUE_PRIORITY),
        c!(KFD_MIN_QUEUE_RING_SIZE),
        c!(KFD_IOC_EVENT_SIGNAL),
        c!(KFD_IOC_EVENT_NODECHANGE),
        c!(KFD_IOC_EVENT_DEVICESTATECHANGE),
        c!(KFD_IOC_EVENT_HW_EXCEPTION),
        c!(KFD_IOC_EVENT_SYSTEM_EVENT),
        c!(KFD_IOC_EVENT_DEBUG_EVENT),
        c!(KFD_IOC_EVENT_PROFILE_EVENT),
        c!(KFD_IOC_EVENT_QUEUE_EVENT),
        c!(KFD_IOC_EVENT_MEMORY),
        c!(KFD_IOC_WAIT_RESULT_COMPLETE),
        c!(KFD_IOC_WAIT_RESULT_TIMEOUT),
        c!(KFD_IOC_WAIT_RESULT_FAIL),
        c!(KFD_WAIT_TIMEOUT_INFINITE),
        c!(KFD_SIGNAL_EVENT_LIMIT),
        c!(KFD_EVENT_SLOT_SIZE),
        c!(KFD_EVENT_PAGE_SIZE),
        c!(KFD_EVENT_SLOT_UNSIGNALED),
        c!(KFD_FIRST_NONSIGNAL_EVENT_ID),
        c!(KFD_HW_EXCEPTION_WHOLE_GPU_RESET),
        c!(KFD_HW_EXCEPTION_PER_ENGINE_RESET),
        c!(KFD_HW_EXCEPTION_GPU_HANG),
        c!(KFD_HW_EXCEPTION_ECC),
        c!(KFD_MEM_ERR_NO_RAS),
        c!(KFD_MEM_ERR_SRAM_ECC),
        c!(KFD_MEM_ERR_POISON_CONSUMED),
        c!(KFD_MEM_ERR_GPU_HANG),
        c!(KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK),
        c!(KFD_RUNTIME_ENABLE_MODE_TTMP_SAVE_MASK),
        c!(KFD_IOC_ALLOC_MEM_FLAGS_VRAM),
        c!(KFD_IOC_ALLOC_MEM_FLAGS_GTT),
        c!(KFD_IOC_ALLOC_MEM_FLAGS_USERPTR),
        c!(KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL),
        c!(KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP),
        c!(KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE),
        c!(KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE),
        c!(KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC),
        c!(KFD_IOC_ALLOC_MEM_FLAGS_NO_SUBSTITUTE),
        c!(KFD_IOC_ALLOC_MEM_FLAGS_AQL_QUEUE_MEM),
        c!(KFD_IOC_ALLOC_MEM_FLAGS_COHERENT),
        c!(KFD_IOC_ALLOC_MEM_FLAGS_UNCACHED),
        c!(KFD_IOC_ALLOC_MEM_FLAGS_EXT_COHERENT),
        c!(KFD_IOC_ALLOC_MEM_FLAGS_CONTIGUOUS),
        c!(KFD_DOORBELL_SIZE),
        c!(KFD_DOORBELL_SLICE_SIZE),
        c!(KFD_DOORBELLS_PER_SLICE),
    ];
    // Not in every header: (name, value in mainline's header or amdkfd's source).
    let pinned: &[(&str, u64)] = &[
        // Minor version 14 added AMDKFD_IOC_RUNTIME_ENABLE (kfd_ioctl.h version history).
        ("KFD_IOCTL_MINOR_RUNTIME_ENABLE", 14),
        ("KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID", 0x4),
        ("KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK", 1),
        ("KFD_RUNTIME_ENABLE_MODE_TTMP_SAVE_MASK", 2),
        ("KFD_IOC_ALLOC_MEM_FLAGS_EXT_COHERENT", 1 << 24),
        ("KFD_IOC_ALLOC_MEM_FLAGS_CONTIGUOUS", 1 << 23),
        // kfd_events.h: KFD_EVENT_TIMEOUT_INFINITE.
        ("KFD_WAIT_TIMEOUT_INFINITE", 0xFFFF_FFFF),
        // kfd_events.c/h: KFD_SIGNAL_EVENT_LIMIT 64-bit slots, UNSIGNALED_EVENT_SLOT all ones.
        ("KFD_EVENT_SLOT_SIZE", 8),
        ("KFD_EVENT_PAGE_SIZE", 4096 * 8),
        ("KFD_EVENT_SLOT_UNSIGNALED", u64::MAX),
        // kfd_events.h: (INT_MAX >> 1) + 1.
        ("KFD_FIRST_NONSIGNAL_EVENT_ID", 0x4000_0000),
        // kfd_doorbell.c / kfd_priv.h: 64-bit doorbells, a two-page slice per process on SOC15.
        ("KFD_DOORBELL_SIZE", 8),
        ("KFD_DOORBELL_SLICE_SIZE", 0x2000),
        ("KFD_DOORBELLS_PER_SLICE", 1024),
    ];
    // Coverage: every `pub const` of consts.rs is in the list above.
    let src = include_str!("../src/kfd/consts.rs");
    for line in src.lines() {
        if let Some(rest) = line.strip_prefix("pub const ") {
            let name = rest.split(':').next().unwrap_or("").trim();
            if !consts.iter().any(|(n, _)| *n == name) {
                failures.push(format!("{name}: in consts.rs but not checked by kfd_abi"));
            }
        }
    }
    // Every one the header defines is a 32-bit int (`1 << 31` is negative as an int: read it
    // as unsigned).
    let mut c2 =
        String::from("#include <stdio.h>\n#include <linux/kfd_ioctl.h>\nint main(void) {\n");
    for (n, _) in consts {
        c2.push_str(&format!(
            "#ifdef {n}\n  printf(\"{n} %llu\\n\", (unsigned long long)(unsigned int)({n}));\n#else\n  \
             printf(\"{n} -\\n\");\n#endif\n"
        ));
    }
    c2.push_str("  return 0;\n}\n");
    let src2 = dir.join("kfd_consts.c");
    let exe2 = dir.join("kfd_consts");
    std::fs::write(&src2, c2).unwrap();
    let st = Command::new("gcc")
        .arg("-idirafter")
        .arg(&shim)
        .arg("-o")
        .arg(&exe2)
        .arg(&src2)
        .status()
        .unwrap();
    assert!(st.success(), "gcc failed on {}", src2.display());
    let out2 = String::from_utf8(Command::new(&exe2).output().unwrap().stdout).unwrap();
    let mut from_header = 0;
    for ((n, ours), line) in consts.iter().zip(out2.lines()) {
        let theirs = line.split_whitespace().nth(1).unwrap_or("-");
        let want = if theirs == "-" {
            // Not a macro here: an enum value or a newer ABI's; the pinned number.
            match pinned.iter().find(|(p, _)| p == n) {
                Some(&(_, v)) => v,
                None => {
                    failures.push(format!("{n}: not a macro in the header and not pinned"));
                    continue;
                }
            }
        } else {
            from_header += 1;
            theirs.parse::<u64>().unwrap()
        };
        checked += 1;
        if want != *ours {
            failures.push(format!("{n}: expected {want}, core {ours}"));
        }
    }
    assert!(
        from_header >= 30,
        "only {from_header} constants came from the header"
    );

    assert!(
        failures.is_empty(),
        "ABI mismatches:\n{}",
        failures.join("\n")
    );
    assert!(checked > 120, "only {checked} items checked");
    eprintln!("kfd_abi: {checked} items match {}", path.display());
}

/// `Errno::name` against the C library's `<errno.h>` (the kernel's asm-generic numbers), and
/// how an errno reads in messages.
#[test]
fn errno_names_match_errno_h() {
    let known: Vec<(i32, &str)> = (0..4096i32)
        .filter_map(|n| Errno(n).name().map(|s| (n, s)))
        .collect();
    assert!(known.len() >= 19, "only {} errnos named", known.len());
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("kfd_errno");
    std::fs::create_dir_all(&dir).unwrap();
    let mut c = String::from("#include <stdio.h>\n#include <errno.h>\nint main(void) {\n");
    for (_, name) in &known {
        // ENOTSUPP (524) is the kernel's own, not in userspace headers.
        c.push_str(&format!(
            "#ifdef {name}\n  printf(\"{name} %d\\n\", {name});\n#else\n  printf(\"{name} -\\n\");\n#endif\n"
        ));
    }
    c.push_str("  return 0;\n}\n");
    let (src, exe) = (dir.join("errno.c"), dir.join("errno"));
    std::fs::write(&src, c).unwrap();
    let st = Command::new("gcc")
        .arg("-o")
        .arg(&exe)
        .arg(&src)
        .status()
        .unwrap();
    assert!(st.success(), "gcc failed on {}", src.display());
    let out = String::from_utf8(Command::new(&exe).output().unwrap().stdout).unwrap();
    let mut from_header = 0;
    for ((n, name), line) in known.iter().zip(out.lines()) {
        match line.split_whitespace().nth(1) {
            Some("-") => assert_eq!((*name, *n), ("ENOTSUPP", 524), "{name} not in errno.h"),
            Some(v) => {
                assert_eq!(v.parse::<i32>().unwrap(), *n, "{name}");
                from_header += 1;
            }
            None => panic!("no line for {name}"),
        }
    }
    assert_eq!(from_header, known.len() - 1);
    assert_eq!(Errno::EINVAL.to_string(), "EINVAL (22)");
    assert_eq!(format!("{:?}", Errno::ENOTSUPP), "ENOTSUPP (524)");
    assert_eq!(Errno(4000).to_string(), "errno 4000");
}
