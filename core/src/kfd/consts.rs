//! The KFD ABI's constants: version, queue types and limits, event types and wait results,
//! exception data codes, runtime-enable modes, alloc-memory flags, and doorbell sizes.

/// `KFD_IOCTL_MAJOR_VERSION`.
pub const KFD_IOCTL_MAJOR_VERSION: u32 = 1;
/// Minor version from which `RUNTIME_ENABLE` is expected (`kfd_event_data` update, 1.14).
pub const KFD_IOCTL_MINOR_RUNTIME_ENABLE: u32 = 14;

/// `KFD_IOC_QUEUE_TYPE_COMPUTE`: a PM4 compute queue (ring pointers in dwords).
pub const KFD_IOC_QUEUE_TYPE_COMPUTE: u32 = 0;
/// `KFD_IOC_QUEUE_TYPE_SDMA`: an SDMA queue (ring pointers in bytes).
pub const KFD_IOC_QUEUE_TYPE_SDMA: u32 = 1;
/// `KFD_IOC_QUEUE_TYPE_COMPUTE_AQL`: an AQL compute queue (64-byte packets).
pub const KFD_IOC_QUEUE_TYPE_COMPUTE_AQL: u32 = 2;
/// `KFD_IOC_QUEUE_TYPE_SDMA_XGMI`: an SDMA queue on an XGMI engine.
pub const KFD_IOC_QUEUE_TYPE_SDMA_XGMI: u32 = 3;
/// `KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID`: an SDMA queue on `sdma_engine_id` (ABI 1.17).
pub const KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID: u32 = 4;
/// `KFD_MAX_QUEUE_PERCENTAGE`.
pub const KFD_MAX_QUEUE_PERCENTAGE: u32 = 100;
/// `KFD_MAX_QUEUE_PRIORITY`.
pub const KFD_MAX_QUEUE_PRIORITY: u32 = 15;
/// `KFD_MIN_QUEUE_RING_SIZE`: smaller (power-of-two) rings are clamped up to this.
pub const KFD_MIN_QUEUE_RING_SIZE: u32 = 1024;

/// `KFD_IOC_EVENT_SIGNAL`: has a slot in the event page; set by the GPU's interrupt or SET_EVENT.
pub const KFD_IOC_EVENT_SIGNAL: u32 = 0;
/// `KFD_IOC_EVENT_NODECHANGE`.
pub const KFD_IOC_EVENT_NODECHANGE: u32 = 1;
/// `KFD_IOC_EVENT_DEVICESTATECHANGE`.
pub const KFD_IOC_EVENT_DEVICESTATECHANGE: u32 = 2;
/// `KFD_IOC_EVENT_HW_EXCEPTION`: GPU reset / hang; data in `hw_exception_data`.
pub const KFD_IOC_EVENT_HW_EXCEPTION: u32 = 3;
/// `KFD_IOC_EVENT_SYSTEM_EVENT`.
pub const KFD_IOC_EVENT_SYSTEM_EVENT: u32 = 4;
/// `KFD_IOC_EVENT_DEBUG_EVENT`: like SIGNAL, has a slot.
pub const KFD_IOC_EVENT_DEBUG_EVENT: u32 = 5;
/// `KFD_IOC_EVENT_PROFILE_EVENT`.
pub const KFD_IOC_EVENT_PROFILE_EVENT: u32 = 6;
/// `KFD_IOC_EVENT_QUEUE_EVENT`.
pub const KFD_IOC_EVENT_QUEUE_EVENT: u32 = 7;
/// `KFD_IOC_EVENT_MEMORY`: GPU VM fault; data in `memory_exception_data`.
pub const KFD_IOC_EVENT_MEMORY: u32 = 8;

/// `KFD_IOC_WAIT_RESULT_COMPLETE`.
pub const KFD_IOC_WAIT_RESULT_COMPLETE: u32 = 0;
/// `KFD_IOC_WAIT_RESULT_TIMEOUT`.
pub const KFD_IOC_WAIT_RESULT_TIMEOUT: u32 = 1;
/// `KFD_IOC_WAIT_RESULT_FAIL`.
pub const KFD_IOC_WAIT_RESULT_FAIL: u32 = 2;
/// WAIT_EVENTS timeout meaning "forever".
pub const KFD_WAIT_TIMEOUT_INFINITE: u32 = 0xFFFF_FFFF;

/// `KFD_SIGNAL_EVENT_LIMIT`: slots in the event page.
pub const KFD_SIGNAL_EVENT_LIMIT: u32 = 4096;
/// Bytes of one event-page slot (a u64 mailbox).
pub const KFD_EVENT_SLOT_SIZE: u64 = 8;
/// Bytes of the event page (4096 slots x 8 = 32 KiB); the BO passed to the first CREATE_EVENT
/// must be at least this large.
pub const KFD_EVENT_PAGE_SIZE: u64 = KFD_SIGNAL_EVENT_LIMIT as u64 * KFD_EVENT_SLOT_SIZE;
/// Value of an unsignaled event-page slot.
pub const KFD_EVENT_SLOT_UNSIGNALED: u64 = u64::MAX;
/// `KFD_FIRST_NONSIGNAL_EVENT_ID`: ids of events without a slot (memory, HW exception) start here.
pub const KFD_FIRST_NONSIGNAL_EVENT_ID: u32 = 0x4000_0000;

/// `KFD_HW_EXCEPTION_WHOLE_GPU_RESET` (`hw_exception_data.reset_type`).
pub const KFD_HW_EXCEPTION_WHOLE_GPU_RESET: u32 = 0;
/// `KFD_HW_EXCEPTION_PER_ENGINE_RESET`.
pub const KFD_HW_EXCEPTION_PER_ENGINE_RESET: u32 = 1;
/// `KFD_HW_EXCEPTION_GPU_HANG` (`hw_exception_data.reset_cause`).
pub const KFD_HW_EXCEPTION_GPU_HANG: u32 = 0;
/// `KFD_HW_EXCEPTION_ECC`.
pub const KFD_HW_EXCEPTION_ECC: u32 = 1;
/// `KFD_MEM_ERR_NO_RAS` (`memory_exception_data.ErrorType`).
pub const KFD_MEM_ERR_NO_RAS: u32 = 0;
/// `KFD_MEM_ERR_SRAM_ECC`.
pub const KFD_MEM_ERR_SRAM_ECC: u32 = 1;
/// `KFD_MEM_ERR_POISON_CONSUMED`.
pub const KFD_MEM_ERR_POISON_CONSUMED: u32 = 2;
/// `KFD_MEM_ERR_GPU_HANG`.
pub const KFD_MEM_ERR_GPU_HANG: u32 = 3;

/// `KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK`.
pub const KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK: u32 = 1;
/// `KFD_RUNTIME_ENABLE_MODE_TTMP_SAVE_MASK`.
pub const KFD_RUNTIME_ENABLE_MODE_TTMP_SAVE_MASK: u32 = 2;

/// Memory type flag: VRAM.
pub const KFD_IOC_ALLOC_MEM_FLAGS_VRAM: u32 = 1 << 0;
/// Memory type flag: GTT (system memory the GPU reaches through the GART).
pub const KFD_IOC_ALLOC_MEM_FLAGS_GTT: u32 = 1 << 1;
/// Memory type flag: the process's own memory at `mmap_offset` (host address).
pub const KFD_IOC_ALLOC_MEM_FLAGS_USERPTR: u32 = 1 << 2;
/// Memory type flag: the process doorbell slice (size must be [`KFD_DOORBELL_SLICE_SIZE`]).
pub const KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL: u32 = 1 << 3;
/// Memory type flag: the HDP-flush MMIO remap page (size 4096).
pub const KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP: u32 = 1 << 4;
/// Attribute: GPU-writable.
pub const KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE: u32 = 1 << 31;
/// Attribute: GPU-executable.
pub const KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE: u32 = 1 << 30;
/// Attribute: CPU-visible VRAM (large BAR).
pub const KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC: u32 = 1 << 29;
/// Attribute: never substitute GTT for VRAM.
pub const KFD_IOC_ALLOC_MEM_FLAGS_NO_SUBSTITUTE: u32 = 1 << 28;
/// Attribute: AQL ring memory (mapped twice, gfx7/8).
pub const KFD_IOC_ALLOC_MEM_FLAGS_AQL_QUEUE_MEM: u32 = 1 << 27;
/// Attribute: coherent.
pub const KFD_IOC_ALLOC_MEM_FLAGS_COHERENT: u32 = 1 << 26;
/// Attribute: uncached.
pub const KFD_IOC_ALLOC_MEM_FLAGS_UNCACHED: u32 = 1 << 25;
/// Attribute: extended coherence (ABI 1.15).
pub const KFD_IOC_ALLOC_MEM_FLAGS_EXT_COHERENT: u32 = 1 << 24;
/// Attribute: physically contiguous VRAM, best effort (ABI 1.16).
pub const KFD_IOC_ALLOC_MEM_FLAGS_CONTIGUOUS: u32 = 1 << 23;

/// Bytes of one doorbell (gfx9+: 64-bit doorbells).
pub const KFD_DOORBELL_SIZE: u64 = 8;
/// Bytes of the per-process doorbell slice on SOC15+ (1024 doorbells x 8 = two pages); the
/// length of a DOORBELL mmap of `/dev/kfd` and of a DOORBELL allocation.
pub const KFD_DOORBELL_SLICE_SIZE: u64 = 0x2000;
/// Doorbells in one process slice.
pub const KFD_DOORBELLS_PER_SLICE: u64 = KFD_DOORBELL_SLICE_SIZE / KFD_DOORBELL_SIZE;
