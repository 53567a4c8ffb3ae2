//! The ioctl argument structs, each mirroring its `kfd_ioctl.h` struct with size and
//! `offset_of!` asserts.

use bytemuck::{Pod, Zeroable};
use core::mem::{offset_of, size_of};

/// Asserts a struct's size and every listed field offset at compile time.
macro_rules! abi_layout {
    ($t:ty, $size:expr, { $($field:ident @ $off:expr),* $(,)? }) => {
        const _: () = assert!(size_of::<$t>() == $size);
        $( const _: () = assert!(offset_of!($t, $field) == $off); )*
    };
}

/// `kfd_ioctl_get_version_args`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct GetVersionArgs {
    /// From KFD: major version (1).
    pub major_version: u32,
    /// From KFD: minor version.
    pub minor_version: u32,
}
abi_layout!(GetVersionArgs, 8, { major_version @ 0, minor_version @ 4 });

/// `kfd_ioctl_create_queue_args` (ABI 1.17 layout, 96 bytes; 88 before `sdma_engine_id`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct CreateQueueArgs {
    /// To KFD: GPU VA of the ring.
    pub ring_base_address: u64,
    /// To KFD: GPU VA of the 64-bit write pointer (in its own 4 KiB mapping).
    pub write_pointer_address: u64,
    /// To KFD: GPU VA of the 64-bit read pointer (same page rules).
    pub read_pointer_address: u64,
    /// From KFD: doorbell mmap offset (`3<<62 | gpu_id<<46 | slot*8`).
    pub doorbell_offset: u64,
    /// To KFD: ring size in bytes (power of two; clamped up to 1024 and written back).
    pub ring_size: u32,
    /// To KFD: the GPU.
    pub gpu_id: u32,
    /// To KFD: `KFD_IOC_QUEUE_TYPE_*`.
    pub queue_type: u32,
    /// To KFD: 0..=100 in bits 7:0 (0 = inactive); bits 15:8 = PM4 target XCC.
    pub queue_percentage: u32,
    /// To KFD: 0..=15.
    pub queue_priority: u32,
    /// From KFD: the queue id (0..1023).
    pub queue_id: u32,
    /// To KFD: GPU VA of the EOP buffer (compute), or 0.
    pub eop_buffer_address: u64,
    /// To KFD: EOP buffer size (must equal the node's `eop_buffer_size`).
    pub eop_buffer_size: u64,
    /// To KFD: GPU VA of the context save/restore (CWSR) area, or 0.
    pub ctx_save_restore_address: u64,
    /// To KFD: CWSR size (at least the node's `cwsr_size`).
    pub ctx_save_restore_size: u32,
    /// To KFD: control stack size (must equal the node's `ctl_stack_size`).
    pub ctl_stack_size: u32,
    /// To KFD: SDMA engine for `SDMA_BY_ENG_ID` queues (ABI 1.17).
    pub sdma_engine_id: u32,
    /// Padding (ABI 1.22: `metadata_ring_size`).
    pub pad: u32,
}
abi_layout!(CreateQueueArgs, 96, {
    ring_base_address @ 0, write_pointer_address @ 8, read_pointer_address @ 16,
    doorbell_offset @ 24, ring_size @ 32, gpu_id @ 36, queue_type @ 40, queue_percentage @ 44,
    queue_priority @ 48, queue_id @ 52, eop_buffer_address @ 56, eop_buffer_size @ 64,
    ctx_save_restore_address @ 72, ctx_save_restore_size @ 80, ctl_stack_size @ 84,
    sdma_engine_id @ 88, pad @ 92,
});
/// Size of `kfd_ioctl_create_queue_args` before ABI 1.17 (no `sdma_engine_id`).
pub const CREATE_QUEUE_ARGS_SIZE_V1_11: usize = 88;

/// `kfd_ioctl_destroy_queue_args`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct DestroyQueueArgs {
    /// To KFD: the queue id.
    pub queue_id: u32,
    /// Padding.
    pub pad: u32,
}
abi_layout!(DestroyQueueArgs, 8, { queue_id @ 0, pad @ 4 });

/// `kfd_ioctl_get_clock_counters_args`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct GetClockCountersArgs {
    /// From KFD: the GPU timestamp counter (100 MHz on gfx10+).
    pub gpu_clock_counter: u64,
    /// From KFD: CLOCK_MONOTONIC_RAW in ns.
    pub cpu_clock_counter: u64,
    /// From KFD: CLOCK_BOOTTIME in ns.
    pub system_clock_counter: u64,
    /// From KFD: frequency of the CPU/system counters (1e9).
    pub system_clock_freq: u64,
    /// To KFD: the GPU.
    pub gpu_id: u32,
    /// Padding.
    pub pad: u32,
}
abi_layout!(GetClockCountersArgs, 40, {
    gpu_clock_counter @ 0, cpu_clock_counter @ 8, system_clock_counter @ 16,
    system_clock_freq @ 24, gpu_id @ 32, pad @ 36,
});

/// `kfd_process_device_apertures`: one GPU's apertures.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct ProcessDeviceApertures {
    /// LDS aperture base.
    pub lds_base: u64,
    /// LDS aperture limit (inclusive).
    pub lds_limit: u64,
    /// Scratch aperture base.
    pub scratch_base: u64,
    /// Scratch aperture limit (inclusive).
    pub scratch_limit: u64,
    /// Lowest GPU VA usable for buffers.
    pub gpuvm_base: u64,
    /// Highest GPU VA (inclusive).
    pub gpuvm_limit: u64,
    /// The GPU.
    pub gpu_id: u32,
    /// Padding.
    pub pad: u32,
}
abi_layout!(ProcessDeviceApertures, 56, {
    lds_base @ 0, lds_limit @ 8, scratch_base @ 16, scratch_limit @ 24, gpuvm_base @ 32,
    gpuvm_limit @ 40, gpu_id @ 48, pad @ 52,
});

/// `kfd_ioctl_get_process_apertures_new_args`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct GetProcessAperturesNewArgs {
    /// To KFD: address of a user array of [`ProcessDeviceApertures`].
    pub kfd_process_device_apertures_ptr: u64,
    /// To KFD: array length (0: just ask the count); from KFD: entries filled.
    pub num_of_nodes: u32,
    /// Padding.
    pub pad: u32,
}
abi_layout!(GetProcessAperturesNewArgs, 16, {
    kfd_process_device_apertures_ptr @ 0, num_of_nodes @ 8, pad @ 12,
});

/// `kfd_ioctl_create_event_args`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct CreateEventArgs {
    /// To KFD: handle of the event-page BO (first signal event only); from KFD: the
    /// EVENTS-type mmap offset for signal events, 0 otherwise.
    pub event_page_offset: u64,
    /// From KFD: trigger data (= event id).
    pub event_trigger_data: u32,
    /// To KFD: `KFD_IOC_EVENT_*`.
    pub event_type: u32,
    /// To KFD: nonzero for an auto-reset event.
    pub auto_reset: u32,
    /// To KFD: node (ignored).
    pub node_id: u32,
    /// From KFD: the event id.
    pub event_id: u32,
    /// From KFD: the slot in the event page (signal/debug events).
    pub event_slot_index: u32,
}
abi_layout!(CreateEventArgs, 32, {
    event_page_offset @ 0, event_trigger_data @ 8, event_type @ 12, auto_reset @ 16,
    node_id @ 20, event_id @ 24, event_slot_index @ 28,
});

/// `kfd_ioctl_destroy_event_args`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct DestroyEventArgs {
    /// To KFD: the event id.
    pub event_id: u32,
    /// Padding.
    pub pad: u32,
}
abi_layout!(DestroyEventArgs, 8, { event_id @ 0, pad @ 4 });

/// `kfd_ioctl_set_event_args`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct SetEventArgs {
    /// To KFD: the event id.
    pub event_id: u32,
    /// Padding.
    pub pad: u32,
}
abi_layout!(SetEventArgs, 8, { event_id @ 0, pad @ 4 });

/// `kfd_ioctl_reset_event_args`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct ResetEventArgs {
    /// To KFD: the event id.
    pub event_id: u32,
    /// Padding.
    pub pad: u32,
}
abi_layout!(ResetEventArgs, 8, { event_id @ 0, pad @ 4 });

/// `kfd_memory_exception_failure`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct MemoryExceptionFailure {
    /// Page not present (or supervisor privilege).
    pub not_present: u32,
    /// Write to a read-only page.
    pub read_only: u32,
    /// Execute of a no-execute page.
    pub no_execute: u32,
    /// The fault address is not exact.
    pub imprecise: u32,
}
abi_layout!(MemoryExceptionFailure, 16, {
    not_present @ 0, read_only @ 4, no_execute @ 8, imprecise @ 12,
});

/// `kfd_hsa_memory_exception_data`: what a MEMORY event reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct HsaMemoryExceptionData {
    /// Kind of failure.
    pub failure: MemoryExceptionFailure,
    /// Faulting GPU VA (page-aligned).
    pub va: u64,
    /// The GPU that faulted.
    pub gpu_id: u32,
    /// `KFD_MEM_ERR_*`.
    pub error_type: u32,
}
abi_layout!(HsaMemoryExceptionData, 32, { failure @ 0, va @ 16, gpu_id @ 24, error_type @ 28 });

/// `kfd_hsa_hw_exception_data`: what a HW_EXCEPTION event reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct HsaHwExceptionData {
    /// `KFD_HW_EXCEPTION_WHOLE_GPU_RESET` / `PER_ENGINE_RESET`.
    pub reset_type: u32,
    /// `KFD_HW_EXCEPTION_GPU_HANG` / `ECC`.
    pub reset_cause: u32,
    /// Nonzero when VRAM contents were lost.
    pub memory_lost: u32,
    /// The GPU.
    pub gpu_id: u32,
}
abi_layout!(HsaHwExceptionData, 16, { reset_type @ 0, reset_cause @ 4, memory_lost @ 8, gpu_id @ 12 });

/// `kfd_event_data` (48 bytes): one element of the WAIT_EVENTS array.
///
/// Bytes 0..32 are a C union of `memory_exception_data` (32 B), `hw_exception_data` (16 B)
/// and, from ABI 1.14, `signal_event_data { u64 last_event_age }`; they are kept raw here and
/// read or written through the typed accessors.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct EventData {
    /// The union, raw (see the accessors).
    pub data: [u64; 4],
    /// `kfd_event_data_ext`: pointer to an extension struct (0).
    pub kfd_event_data_ext: u64,
    /// To KFD: the event to wait for.
    pub event_id: u32,
    /// Padding.
    pub pad: u32,
}
abi_layout!(EventData, 48, { data @ 0, kfd_event_data_ext @ 32, event_id @ 40, pad @ 44 });
/// Offset of the union inside [`EventData`].
pub const EVENT_DATA_UNION_OFFSET: usize = 0;
/// Size of the union inside [`EventData`].
pub const EVENT_DATA_UNION_SIZE: usize = 32;

impl EventData {
    /// An element that waits for `event_id` with zeroed data.
    #[must_use]
    pub fn for_event(event_id: u32) -> Self {
        Self {
            event_id,
            ..Self::zeroed()
        }
    }

    /// The union read as `memory_exception_data`.
    #[must_use]
    pub fn memory_exception(&self) -> HsaMemoryExceptionData {
        bytemuck::cast(self.data)
    }

    /// Writes `memory_exception_data` into the union.
    pub fn set_memory_exception(&mut self, d: HsaMemoryExceptionData) {
        self.data = bytemuck::cast(d);
    }

    /// The union read as `hw_exception_data` (its first 16 bytes).
    #[must_use]
    pub fn hw_exception(&self) -> HsaHwExceptionData {
        let [a, b, _, _] = self.data;
        bytemuck::cast([a, b])
    }

    /// Writes `hw_exception_data` into the first 16 bytes of the union (the rest is untouched,
    /// as the kernel's 16-byte copy leaves it).
    pub fn set_hw_exception(&mut self, d: HsaHwExceptionData) {
        let [a, b]: [u64; 2] = bytemuck::cast(d);
        self.data[0] = a;
        self.data[1] = b;
    }

    /// `signal_event_data.last_event_age` (ABI 1.14+): 0 = not used.
    #[must_use]
    pub fn last_event_age(&self) -> u64 {
        self.data[0]
    }

    /// Sets `signal_event_data.last_event_age`.
    pub fn set_last_event_age(&mut self, age: u64) {
        self.data[0] = age;
    }
}

/// `kfd_ioctl_wait_events_args`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct WaitEventsArgs {
    /// To KFD: address of an array of `num_events` [`EventData`].
    pub events_ptr: u64,
    /// To KFD: array length.
    pub num_events: u32,
    /// To KFD: nonzero = wait for all, else any.
    pub wait_for_all: u32,
    /// To KFD: timeout in ms (0 = poll, `0xFFFFFFFF` = forever).
    pub timeout: u32,
    /// From KFD: `KFD_IOC_WAIT_RESULT_*`.
    pub wait_result: u32,
}
abi_layout!(WaitEventsArgs, 24, {
    events_ptr @ 0, num_events @ 8, wait_for_all @ 12, timeout @ 16, wait_result @ 20,
});

/// `kfd_ioctl_acquire_vm_args`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct AcquireVmArgs {
    /// To KFD: an open render-node fd.
    pub drm_fd: u32,
    /// To KFD: the GPU.
    pub gpu_id: u32,
}
abi_layout!(AcquireVmArgs, 8, { drm_fd @ 0, gpu_id @ 4 });

/// `kfd_ioctl_alloc_memory_of_gpu_args`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct AllocMemoryOfGpuArgs {
    /// To KFD: the buffer's GPU VA (every GPU maps it there).
    pub va_addr: u64,
    /// To KFD: size in bytes (page-aligned by the kernel).
    pub size: u64,
    /// From KFD: `gpu_id << 32 | idr`.
    pub handle: u64,
    /// To KFD (USERPTR: host address); from KFD: offset to mmap on the render node.
    pub mmap_offset: u64,
    /// To KFD: the owning GPU.
    pub gpu_id: u32,
    /// To KFD: `KFD_IOC_ALLOC_MEM_FLAGS_*`.
    pub flags: u32,
}
abi_layout!(AllocMemoryOfGpuArgs, 40, {
    va_addr @ 0, size @ 8, handle @ 16, mmap_offset @ 24, gpu_id @ 32, flags @ 36,
});

/// `kfd_ioctl_free_memory_of_gpu_args`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct FreeMemoryOfGpuArgs {
    /// To KFD: the handle from ALLOC.
    pub handle: u64,
}
abi_layout!(FreeMemoryOfGpuArgs, 8, { handle @ 0 });

/// `kfd_ioctl_map_memory_to_gpu_args`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct MapMemoryToGpuArgs {
    /// To KFD: the handle from ALLOC.
    pub handle: u64,
    /// To KFD: address of `n_devices` u32 gpu_ids.
    pub device_ids_array_ptr: u64,
    /// To KFD: number of gpu_ids.
    pub n_devices: u32,
    /// To/from KFD: devices done from the array start (start with 0; retry resumes there).
    pub n_success: u32,
}
abi_layout!(MapMemoryToGpuArgs, 24, {
    handle @ 0, device_ids_array_ptr @ 8, n_devices @ 16, n_success @ 20,
});

/// `kfd_ioctl_unmap_memory_from_gpu_args` (same layout as MAP).
pub type UnmapMemoryFromGpuArgs = MapMemoryToGpuArgs;

/// `kfd_ioctl_set_xnack_mode_args`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct SetXnackModeArgs {
    /// To KFD: negative = query, 0/1 = set; from KFD: the current mode on a query.
    pub xnack_enabled: i32,
}
abi_layout!(SetXnackModeArgs, 4, { xnack_enabled @ 0 });

/// `kfd_ioctl_get_available_memory_args`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct GetAvailableMemoryArgs {
    /// From KFD: bytes available.
    pub available: u64,
    /// To KFD: the GPU.
    pub gpu_id: u32,
    /// Padding.
    pub pad: u32,
}
abi_layout!(GetAvailableMemoryArgs, 16, { available @ 0, gpu_id @ 8, pad @ 12 });

/// `kfd_ioctl_runtime_enable_args` (ABI 1.13+).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct RuntimeEnableArgs {
    /// To KFD: address of the runtime's `r_debug`.
    pub r_debug: u64,
    /// To KFD: `KFD_RUNTIME_ENABLE_MODE_*` bits (0 = disable).
    pub mode_mask: u32,
    /// Capabilities (the kernel does not write it back).
    pub capabilities_mask: u32,
}
abi_layout!(RuntimeEnableArgs, 16, { r_debug @ 0, mode_mask @ 8, capabilities_mask @ 12 });

/// `kfd_ioctl_set_cu_mask_args`: which compute units a queue may use. Issue it with
/// [`Request::set_cu_mask`](super::Request::set_cu_mask), which points `cu_mask_ptr` at the
/// borrowed mask.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct SetCuMaskArgs {
    /// To KFD: the queue.
    pub queue_id: u32,
    /// To KFD: bits in the mask (a non-zero multiple of 32; the kernel uses at most 1024).
    pub num_cu_mask: u32,
    /// To KFD: address of `num_cu_mask / 32` u32 words, bit `i` = CU `i`.
    pub cu_mask_ptr: u64,
}
abi_layout!(SetCuMaskArgs, 16, { queue_id @ 0, num_cu_mask @ 4, cu_mask_ptr @ 8 });

/// `kfd_ioctl_get_queue_wave_state_args`: the saved wave state of an inactive queue. Issue it
/// with [`Request::queue_wave_state`](super::Request::queue_wave_state).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct GetQueueWaveStateArgs {
    /// To KFD: address of the user copy of the context save area, where the kernel writes
    /// the control-stack header (and, on gfx9, the control stack).
    pub ctl_stack_address: u64,
    /// From KFD: control stack bytes in use.
    pub ctl_stack_used_size: u32,
    /// From KFD: wave save area bytes in use.
    pub save_area_used_size: u32,
    /// To KFD: the queue.
    pub queue_id: u32,
    /// Padding.
    pub pad: u32,
}
abi_layout!(GetQueueWaveStateArgs, 24, {
    ctl_stack_address @ 0, ctl_stack_used_size @ 8, save_area_used_size @ 12, queue_id @ 16,
    pad @ 20,
});

/// `kfd_ioctl_get_tile_config_args`: the GPU's tiling configuration. Issue it with
/// [`Request::get_tile_config`](super::Request::get_tile_config).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct GetTileConfigArgs {
    /// To KFD: address of the tile-mode array (u32 words).
    pub tile_config_ptr: u64,
    /// To KFD: address of the macro-tile-mode array (u32 words).
    pub macro_tile_config_ptr: u64,
    /// To KFD: tile-mode array length; from KFD: entries filled.
    pub num_tile_configs: u32,
    /// To KFD: macro-tile-mode array length; from KFD: entries filled.
    pub num_macro_tile_configs: u32,
    /// To KFD: the GPU.
    pub gpu_id: u32,
    /// From KFD: `GB_ADDR_CONFIG`.
    pub gb_addr_config: u32,
    /// From KFD: memory banks (0 from GFX9 on).
    pub num_banks: u32,
    /// From KFD: memory ranks (0 from GFX9 on).
    pub num_ranks: u32,
}
abi_layout!(GetTileConfigArgs, 40, {
    tile_config_ptr @ 0, macro_tile_config_ptr @ 8, num_tile_configs @ 16,
    num_macro_tile_configs @ 20, gpu_id @ 24, gb_addr_config @ 28, num_banks @ 32,
    num_ranks @ 36,
});

/// `kfd_ioctl_get_dmabuf_info_args`: size, owner and metadata of a DMA-buf. Issue it with
/// [`Request::dmabuf_info`](super::Request::dmabuf_info).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct GetDmabufInfoArgs {
    /// From KFD: buffer size in bytes.
    pub size: u64,
    /// To KFD: address of the metadata buffer, or 0 for none.
    pub metadata_ptr: u64,
    /// To KFD: metadata buffer bytes; from KFD: the metadata's size.
    pub metadata_size: u32,
    /// From KFD: the GPU that owns the buffer.
    pub gpu_id: u32,
    /// From KFD: `KFD_IOC_ALLOC_MEM_FLAGS_*` of the buffer.
    pub flags: u32,
    /// To KFD: the DMA-buf file descriptor.
    pub dmabuf_fd: u32,
}
abi_layout!(GetDmabufInfoArgs, 32, {
    size @ 0, metadata_ptr @ 8, metadata_size @ 16, gpu_id @ 20, flags @ 24, dmabuf_fd @ 28,
});

#[cfg(test)]
mod tests {
    use super::super::*;

    #[test]
    fn event_data_union() {
        let mut e = EventData::for_event(7);
        let m = HsaMemoryExceptionData {
            failure: MemoryExceptionFailure {
                not_present: 1,
                read_only: 0,
                no_execute: 0,
                imprecise: 0,
            },
            va: 0xDEAD_B000,
            gpu_id: 0x1234,
            error_type: 0,
        };
        e.set_memory_exception(m);
        assert_eq!(e.memory_exception(), m);
        let bytes = bytemuck::bytes_of(&e);
        assert_eq!(&bytes[16..24], &0xDEAD_B000u64.to_le_bytes());
        assert_eq!(&bytes[24..28], &0x1234u32.to_le_bytes());
        assert_eq!(&bytes[40..44], &7u32.to_le_bytes());
        let h = HsaHwExceptionData {
            reset_type: 0,
            reset_cause: 1,
            memory_lost: 1,
            gpu_id: 9,
        };
        e.set_hw_exception(h);
        assert_eq!(e.hw_exception(), h);
        assert_eq!(
            e.memory_exception().va,
            0xDEAD_B000,
            "hw data leaves bytes 16.. alone"
        );
        e.set_last_event_age(5);
        assert_eq!(e.last_event_age(), 5);
    }
}
