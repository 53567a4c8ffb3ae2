//! The KFD interface: `/dev/kfd` ioctl argument structs and numbers, alloc flags, queue and event
//! types, mmap-offset encoding, sysfs topology parsing ([`topology`]), and [`KfdSys`], the port to
//! the OS that the driver (Linux, through rustix) and the simulator implement.
//!
//! The argument structs mirror `include/uapi/linux/kfd_ioctl.h` (ioctl ABI 1.17 layouts; the
//! kernel zero-fills the tail of a shorter struct, so the 96-byte `CREATE_QUEUE` also works on
//! kernels that know only 88 bytes). Every struct has size and `offset_of!` asserts, and
//! `core/tests/kfd_abi.rs` compiles a C program against the system's `<linux/kfd_ioctl.h>` to
//! pin sizes, offsets and ioctl numbers to the kernel's own.

use bytemuck::{Pod, Zeroable};
use core::fmt;
use core::mem::{offset_of, size_of};

mod ioctl;
pub mod topology;

pub use ioctl::*;

/// An error number as the kernel returns it (`EINVAL` = 22, ...).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Errno(pub i32);

impl Errno {
    /// Operation not permitted.
    pub const EPERM: Self = Self(1);
    /// No such file or directory.
    pub const ENOENT: Self = Self(2);
    /// No such process.
    pub const ESRCH: Self = Self(3);
    /// Interrupted system call.
    pub const EINTR: Self = Self(4);
    /// I/O error.
    pub const EIO: Self = Self(5);
    /// Bad file descriptor.
    pub const EBADF: Self = Self(9);
    /// Try again.
    pub const EAGAIN: Self = Self(11);
    /// Out of memory.
    pub const ENOMEM: Self = Self(12);
    /// Permission denied.
    pub const EACCES: Self = Self(13);
    /// Bad address.
    pub const EFAULT: Self = Self(14);
    /// Device or resource busy.
    pub const EBUSY: Self = Self(16);
    /// File exists.
    pub const EEXIST: Self = Self(17);
    /// No such device.
    pub const ENODEV: Self = Self(19);
    /// Invalid argument.
    pub const EINVAL: Self = Self(22);
    /// Not a typewriter (unknown ioctl).
    pub const ENOTTY: Self = Self(25);
    /// No space left on device.
    pub const ENOSPC: Self = Self(28);
    /// Timer expired.
    pub const ETIME: Self = Self(62);
    /// Address already in use.
    pub const EADDRINUSE: Self = Self(98);
    /// Kernel-internal "operation not supported" (524), which amdkfd returns for bad queue types.
    pub const ENOTSUPP: Self = Self(524);

    /// The symbolic name, when known.
    #[must_use]
    pub const fn name(self) -> Option<&'static str> {
        Some(match self.0 {
            1 => "EPERM",
            2 => "ENOENT",
            3 => "ESRCH",
            4 => "EINTR",
            5 => "EIO",
            9 => "EBADF",
            11 => "EAGAIN",
            12 => "ENOMEM",
            13 => "EACCES",
            14 => "EFAULT",
            16 => "EBUSY",
            17 => "EEXIST",
            19 => "ENODEV",
            22 => "EINVAL",
            25 => "ENOTTY",
            28 => "ENOSPC",
            62 => "ETIME",
            98 => "EADDRINUSE",
            524 => "ENOTSUPP",
            _ => return None,
        })
    }
}

impl fmt::Debug for Errno {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for Errno {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => write!(f, "{n} ({})", self.0),
            None => write!(f, "errno {}", self.0),
        }
    }
}

impl core::error::Error for Errno {}

/// An open file of the port (`/dev/kfd`, a DRM render node). Plain number; the port owns it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Fd(pub i32);

/// mmap protection bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Prot(pub u32);

impl Prot {
    /// No access (address-space reservation).
    pub const NONE: Self = Self(0);
    /// Readable.
    pub const READ: Self = Self(1);
    /// Writable.
    pub const WRITE: Self = Self(2);
    /// Readable and writable.
    pub const READ_WRITE: Self = Self(3);
}

/// How to map.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MapKind {
    /// Reserve address space only (`PROT_NONE`, private, anonymous, no reserve). Where the
    /// driver places a buffer before ALLOC_MEMORY_OF_GPU.
    Reserve,
    /// Anonymous shared memory the process owns (USERPTR buffers).
    Anonymous,
    /// A shared mapping of `fd` at `offset` (a BO's `mmap_offset` on the render node, the doorbell
    /// or event page on `/dev/kfd`).
    File {
        /// The file to map.
        fd: Fd,
        /// Offset (as the kernel encodes it: BO fake offset, or KFD mmap type | gpu_id | value).
        offset: u64,
    },
}

/// The port to the OS: everything the driver needs from the kernel, on raw bytes, so the same
/// driver runs on Linux (`/dev/kfd` through rustix) and on the simulator.
///
/// Addresses are plain `u64` host virtual addresses (the CPU and GPU share one address space for
/// mapped buffers, so a host address is also the buffer's GPU VA).
pub trait KfdSys: Send + Sync {
    /// Opens `path` read-write (`/dev/kfd`, `/dev/dri/renderD128`).
    ///
    /// # Errors
    /// The errno from `open(2)`.
    fn open(&self, path: &str) -> Result<Fd, Errno>;

    /// Closes a file the port opened.
    ///
    /// # Errors
    /// `EBADF` for a file it does not know.
    fn close(&self, fd: Fd) -> Result<(), Errno>;

    /// Issues one ioctl on `fd`; the kernel's reply is written back into the request's argument
    /// (and the user memory it borrows).
    ///
    /// A port must let the request touch no memory but what it borrows: a port that hands the
    /// argument to a kernel passes [`Request::kernel_arg`] (pointers set from the borrowed
    /// slices) and only on files it knows to be `/dev/kfd`; a simulated kernel reads and writes
    /// the slices ([`Request::events`], [`Request::device_ids`], [`Request::apertures`]), never
    /// the pointer values in the argument bytes.
    ///
    /// # Errors
    /// The errno the kernel returned.
    fn ioctl(&self, fd: Fd, request: Request<'_>) -> Result<(), Errno>;

    /// Maps `len` bytes. With `fixed_addr`, the mapping must land exactly there (`MAP_FIXED`);
    /// otherwise the OS chooses. Returns the host address.
    ///
    /// # Errors
    /// The errno from `mmap(2)`.
    fn mmap(
        &self,
        fixed_addr: Option<u64>,
        len: u64,
        prot: Prot,
        kind: MapKind,
    ) -> Result<u64, Errno>;

    /// Unmaps `[addr, addr + len)`.
    ///
    /// # Errors
    /// The errno from `munmap(2)`.
    fn munmap(&self, addr: u64, len: u64) -> Result<(), Errno>;

    /// Reads a whole sysfs file into `buf` and returns how many bytes it holds. A file longer
    /// than `buf` is `EFBIG`-like: the port returns `Errno::ENOSPC`.
    ///
    /// # Errors
    /// `ENOENT` when the file does not exist; other read errors as the OS reports them.
    fn read_file(&self, path: &str, buf: &mut [u8]) -> Result<usize, Errno>;

    /// Why the GPU `gpu_id` faulted, in the port's words, most recent last: each reason is
    /// passed to `each`. Real KFD reports only the exception (the MEMORY / HW_EXCEPTION event
    /// data), so the Linux port says nothing (the default); a simulator names the packet or
    /// kernel it could not run. The driver appends these to its fault reports.
    fn fault_reasons(&self, gpu_id: u32, each: &mut dyn FnMut(&str)) {
        let _ = (gpu_id, each);
    }
}

// ---------------------------------------------------------------------------------------------
// ioctl numbers
// ---------------------------------------------------------------------------------------------

bitfield! {
    /// A Linux ioctl request number (`_IOC(dir, type, nr, size)`, asm-generic layout).
    pub struct IoctlRequest(u32) {
        /// Command number within the type (`_IOC_NR`).
        NR: 7:0,
        /// Type (`_IOC_TYPE`, `'K'` for KFD).
        TYPE: 15:8,
        /// Argument size in bytes (`_IOC_SIZE`, 14 bits).
        SIZE: 29:16,
        /// Direction (`_IOC_DIR`): bit 0 write (user to kernel), bit 1 read (kernel to user).
        DIR: 31:30,
    }
}

/// `_IOC_NONE`: no argument.
pub const IOC_NONE: u32 = 0;
/// `_IOC_WRITE`: the argument is copied from the user (`_IOW`).
pub const IOC_WRITE: u32 = 1;
/// `_IOC_READ`: the argument is copied to the user (`_IOR`).
pub const IOC_READ: u32 = 2;

/// `_IOC(dir, ty, nr, size)`. `size` is masked to the 14-bit field; every KFD argument struct is
/// far smaller (each ioctl constant below is built from a size-asserted struct).
#[must_use]
pub const fn ioc(dir: u32, ty: u8, nr: u8, size: usize) -> u32 {
    // CAST: masked to the 14-bit size field first, so the value fits in u32.
    let size = (size & 0x3FFF) as u32;
    IoctlRequest::zeroed()
        .with(IoctlRequest::DIR, dir)
        .with(IoctlRequest::SIZE, size)
        .with(IoctlRequest::TYPE, ty as u32)
        .with(IoctlRequest::NR, nr as u32)
        .raw()
}

/// `_IOR(ty, nr, T)` with `size = size_of::<T>()`: the kernel writes the struct back.
#[must_use]
pub const fn ior(ty: u8, nr: u8, size: usize) -> u32 {
    ioc(IOC_READ, ty, nr, size)
}

/// `_IOW(ty, nr, T)`: the kernel only reads the struct.
#[must_use]
pub const fn iow(ty: u8, nr: u8, size: usize) -> u32 {
    ioc(IOC_WRITE, ty, nr, size)
}

/// `_IOWR(ty, nr, T)`: the kernel reads the struct and writes it back.
#[must_use]
pub const fn iowr(ty: u8, nr: u8, size: usize) -> u32 {
    ioc(IOC_READ | IOC_WRITE, ty, nr, size)
}

/// `_IO(ty, nr)`: no argument.
#[must_use]
pub const fn io(ty: u8, nr: u8) -> u32 {
    ioc(IOC_NONE, ty, nr, 0)
}

// ---------------------------------------------------------------------------------------------
// Constants
// ---------------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------------
// mmap offsets
// ---------------------------------------------------------------------------------------------

/// `KFD_MMAP_TYPE_SHIFT`.
pub const KFD_MMAP_TYPE_SHIFT: u32 = 62;
/// `KFD_MMAP_TYPE_MASK`.
pub const KFD_MMAP_TYPE_MASK: u64 = 0x3 << KFD_MMAP_TYPE_SHIFT;
/// `KFD_MMAP_TYPE_DOORBELL`.
pub const KFD_MMAP_TYPE_DOORBELL: u64 = 0x3 << KFD_MMAP_TYPE_SHIFT;
/// `KFD_MMAP_TYPE_EVENTS`.
pub const KFD_MMAP_TYPE_EVENTS: u64 = 0x2 << KFD_MMAP_TYPE_SHIFT;
/// `KFD_MMAP_TYPE_RESERVED_MEM` (CWSR TBA/TMA).
pub const KFD_MMAP_TYPE_RESERVED_MEM: u64 = 0x1 << KFD_MMAP_TYPE_SHIFT;
/// `KFD_MMAP_TYPE_MMIO`.
pub const KFD_MMAP_TYPE_MMIO: u64 = 0x0;
/// `KFD_MMAP_GPU_ID_SHIFT`.
pub const KFD_MMAP_GPU_ID_SHIFT: u32 = 46;
/// `KFD_MMAP_GPU_ID_MASK` (16-bit gpu_id).
pub const KFD_MMAP_GPU_ID_MASK: u64 = 0xFFFF << KFD_MMAP_GPU_ID_SHIFT;
/// Mask of the value bits below the gpu_id.
pub const KFD_MMAP_VALUE_MASK: u64 = (1 << KFD_MMAP_GPU_ID_SHIFT) - 1;

/// The type of a `/dev/kfd` mmap offset (bits 63:62).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KfdMmapType {
    /// 0: the MMIO (HDP flush) remap page.
    Mmio,
    /// 1: CWSR trap handler (TBA/TMA) memory.
    ReservedMem,
    /// 2: the event page.
    Events,
    /// 3: the process doorbell slice.
    Doorbell,
}

impl KfdMmapType {
    /// The type's bits, in place (bits 63:62).
    #[must_use]
    pub const fn bits(self) -> u64 {
        match self {
            Self::Mmio => KFD_MMAP_TYPE_MMIO,
            Self::ReservedMem => KFD_MMAP_TYPE_RESERVED_MEM,
            Self::Events => KFD_MMAP_TYPE_EVENTS,
            Self::Doorbell => KFD_MMAP_TYPE_DOORBELL,
        }
    }
}

/// A decoded `/dev/kfd` mmap offset: `type << 62 | gpu_id << 46 | value`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KfdMmapOffset {
    /// What is being mapped.
    pub ty: KfdMmapType,
    /// The GPU (16-bit hash; 0 for none).
    pub gpu_id: u32,
    /// The low 46 bits (doorbell byte offset within the slice, ...).
    pub value: u64,
}

impl KfdMmapOffset {
    /// Encodes the offset. `gpu_id` is masked to 16 bits and `value` to 46 bits (what the kernel
    /// does with `KFD_MMAP_GPU_ID()`).
    #[must_use]
    pub const fn encode(self) -> u64 {
        self.ty.bits()
            | ((self.gpu_id as u64) << KFD_MMAP_GPU_ID_SHIFT) & KFD_MMAP_GPU_ID_MASK
            | (self.value & KFD_MMAP_VALUE_MASK)
    }

    /// Decodes an offset (every u64 is a valid offset).
    #[must_use]
    pub const fn decode(offset: u64) -> Self {
        let ty = match offset >> KFD_MMAP_TYPE_SHIFT {
            3 => KfdMmapType::Doorbell,
            2 => KfdMmapType::Events,
            1 => KfdMmapType::ReservedMem,
            _ => KfdMmapType::Mmio,
        };
        // CAST: masked to 16 bits.
        let gpu_id = ((offset & KFD_MMAP_GPU_ID_MASK) >> KFD_MMAP_GPU_ID_SHIFT) as u32;
        Self {
            ty,
            gpu_id,
            value: offset & KFD_MMAP_VALUE_MASK,
        }
    }

    /// The `doorbell_offset` CREATE_QUEUE returns on SOC15+: DOORBELL type, `gpu_id`, and the
    /// byte offset `slot * 8` inside the process slice.
    #[must_use]
    pub const fn doorbell(gpu_id: u32, slot: u32) -> Self {
        Self {
            ty: KfdMmapType::Doorbell,
            gpu_id,
            value: slot as u64 * KFD_DOORBELL_SIZE,
        }
    }
}

/// The offset to mmap the doorbell slice containing `doorbell_offset` (clears the in-slice bits,
/// `doorbell_offset & !0x1fff`).
#[must_use]
pub const fn doorbell_slice_offset(doorbell_offset: u64) -> u64 {
    doorbell_offset & !(KFD_DOORBELL_SLICE_SIZE - 1)
}

/// The byte offset of a queue's doorbell inside its mapped slice (`doorbell_offset & 0x1fff`).
#[must_use]
pub const fn doorbell_in_slice(doorbell_offset: u64) -> u64 {
    doorbell_offset & (KFD_DOORBELL_SLICE_SIZE - 1)
}

// ---------------------------------------------------------------------------------------------
// Argument structs
// ---------------------------------------------------------------------------------------------

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ioctl_numbers_decode() {
        assert_eq!(AMDKFD_IOC_GET_VERSION.request(), 0x8008_4B01);
        assert_eq!(AMDKFD_IOC_CREATE_QUEUE.request(), 0xC060_4B02);
        let r = IoctlRequest::from_raw(AMDKFD_IOC_ALLOC_MEMORY_OF_GPU.request());
        assert_eq!(r.get(IoctlRequest::NR), 0x16);
        assert_eq!(r.get(IoctlRequest::SIZE), 40);
        assert_eq!(r.get(IoctlRequest::DIR), IOC_READ | IOC_WRITE);
        assert_eq!(io(b'K', 0x27), 0x4B27);
    }

    #[test]
    fn mmap_offsets() {
        let db = KfdMmapOffset::doorbell(0xBEEF, 3);
        assert_eq!(db.encode(), (3 << 62) | (0xBEEF << 46) | 24);
        assert_eq!(KfdMmapOffset::decode(db.encode()), db);
        assert_eq!(
            doorbell_slice_offset(db.encode()),
            (3 << 62) | (0xBEEF << 46)
        );
        assert_eq!(doorbell_in_slice(db.encode()), 24);
        let ev = KfdMmapOffset {
            ty: KfdMmapType::Events,
            gpu_id: 0x1_2345, // masked to 16 bits
            value: 1 << 50,   // masked to 46 bits
        };
        assert_eq!(ev.encode(), (2 << 62) | (0x2345 << 46));
        assert_eq!(
            KfdMmapOffset::decode(0),
            KfdMmapOffset {
                ty: KfdMmapType::Mmio,
                gpu_id: 0,
                value: 0
            }
        );
        assert_eq!(KFD_EVENT_PAGE_SIZE, 0x8000);
        assert_eq!(KFD_DOORBELLS_PER_SLICE, 1024);
    }

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
