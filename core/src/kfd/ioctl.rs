//! The KFD ioctls as typed constants, and [`Request`], the only way to hand one to a port.
//!
//! Each `AMDKFD_IOC_*` is an [`Ioctl<A>`]: the command number, the kernel's name and the request
//! number (`_IOWR('K', nr, A)`), with the argument struct `A` in its type, so a number cannot be
//! issued with another command's struct. [`KFD_IOCTLS`] is the same table without the types
//! (what a dispatcher such as the simulator looks numbers up in); `core/tests/kfd_abi.rs` pins
//! every number against `<linux/kfd_ioctl.h>`.
//!
//! Some arguments carry user pointers that the kernel follows (WAIT_EVENTS' event array,
//! MAP/UNMAP's device list, GET_PROCESS_APERTURES_NEW's output array, SET_CU_MASK's mask,
//! GET_TILE_CONFIG's two arrays, GET_QUEUE_WAVE_STATE's control stack, GET_DMABUF_INFO's
//! metadata). A [`Request`] for those can only be built from slices it borrows
//! ([`Request::wait_events`], [`Request::map_memory`], [`Request::process_apertures`],
//! [`Request::set_cu_mask`], [`Request::get_tile_config`], [`Request::queue_wave_state`],
//! [`Request::dmabuf_info`]); a port that passes the argument to a kernel takes it from
//! [`Request::kernel_arg`], which writes those pointers and counts from the borrowed slices, so
//! whatever a caller wrote into the pointer fields is never followed. Raw requests
//! ([`Request::raw`], for ABI tests with short or junk arguments) are refused for every command
//! whose argument carries pointers.

use super::{
    AcquireVmArgs, AllocMemoryOfGpuArgs, CreateEventArgs, CreateQueueArgs, DestroyEventArgs,
    DestroyQueueArgs, EventData, FreeMemoryOfGpuArgs, GetAvailableMemoryArgs, GetClockCountersArgs,
    GetDmabufInfoArgs, GetProcessAperturesNewArgs, GetQueueWaveStateArgs, GetTileConfigArgs,
    GetVersionArgs, IOC_NONE, IOC_READ, IOC_WRITE, IoctlRequest, MapMemoryToGpuArgs,
    ProcessDeviceApertures, ResetEventArgs, RuntimeEnableArgs, SetCuMaskArgs, SetEventArgs,
    SetXnackModeArgs, WaitEventsArgs, ioc,
};
use bytemuck::Pod;
use core::fmt;
use core::marker::PhantomData;
use core::mem::size_of;

/// `AMDKFD_IOCTL_BASE`: the ioctl type of `/dev/kfd`.
pub const AMDKFD_IOCTL_BASE: u8 = b'K';
/// `AMDKFD_COMMAND_START`: the lowest command number.
pub const AMDKFD_COMMAND_START: u8 = 0x01;
/// `AMDKFD_COMMAND_END`: one past the highest command number this table knows.
pub const AMDKFD_COMMAND_END: u8 = 0x28;

/// The argument of a command hcq does not model (no struct in this crate); only its size is
/// known. An [`Ioctl<Unmodelled>`] can be issued only as a [`Request::raw`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Unmodelled;

/// One KFD ioctl: command number, the kernel's name, the request number, and in its type the
/// argument struct `A`. Only this module builds them (the `AMDKFD_IOC_*` constants).
pub struct Ioctl<A> {
    entry: IoctlEntry,
    arg: PhantomData<fn(A) -> A>,
}

impl<A> Clone for Ioctl<A> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<A> Copy for Ioctl<A> {}

impl<A> fmt::Debug for Ioctl<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.entry, f)
    }
}

impl<A> PartialEq for Ioctl<A> {
    fn eq(&self, other: &Self) -> bool {
        self.entry == other.entry
    }
}

impl<A> Eq for Ioctl<A> {}

impl<A> Ioctl<A> {
    /// `_IOC(dir, 'K', nr, size_of::<A>())`.
    const fn new(dir: u32, nr: u8, name: &'static str, pointers: bool) -> Self {
        Self::sized(dir, nr, name, size_of::<A>(), pointers)
    }

    const fn sized(dir: u32, nr: u8, name: &'static str, size: usize, pointers: bool) -> Self {
        Self {
            entry: IoctlEntry {
                nr,
                name,
                request: ioc(dir, AMDKFD_IOCTL_BASE, nr, size),
                user_pointers: pointers,
            },
            arg: PhantomData,
        }
    }

    /// The command number (`_IOC_NR`).
    #[must_use]
    pub const fn nr(self) -> u8 {
        self.entry.nr
    }

    /// The kernel's name without the `AMDKFD_IOC_` prefix (`"CREATE_QUEUE"`).
    #[must_use]
    pub const fn name(self) -> &'static str {
        self.entry.name
    }

    /// The request number as the kernel defines it (`_IOWR('K', nr, A)`).
    #[must_use]
    pub const fn request(self) -> u32 {
        self.entry.request
    }

    /// The table entry without the argument type.
    #[must_use]
    pub const fn entry(self) -> IoctlEntry {
        self.entry
    }
}

/// An [`Ioctl`] without its argument type: one row of [`KFD_IOCTLS`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IoctlEntry {
    /// The command number (`_IOC_NR`).
    pub nr: u8,
    /// The kernel's name without the `AMDKFD_IOC_` prefix.
    pub name: &'static str,
    /// The request number (direction, size, type `'K'`, number).
    pub request: u32,
    /// Whether the kernel follows user pointers inside the argument (then only the typed
    /// [`Request`] constructors can issue it).
    pub user_pointers: bool,
}

impl IoctlEntry {
    /// `_IOC_DIR` of the request: [`IOC_NONE`], or [`IOC_READ`] / [`IOC_WRITE`] bits.
    #[must_use]
    pub const fn dir(self) -> u32 {
        IoctlRequest::from_raw(self.request).get(IoctlRequest::DIR)
    }

    /// `_IOC_SIZE` of the request: the argument size the kernel copies.
    #[must_use]
    pub const fn size(self) -> usize {
        // CAST: a 14-bit field.
        IoctlRequest::from_raw(self.request).get(IoctlRequest::SIZE) as usize
    }
}

/// The kernel's table entry for command number `nr` (the kernel dispatches on the number alone,
/// whatever type and size the request says); `None` outside `0x01..0x28`.
#[must_use]
pub fn kfd_ioctl(nr: u8) -> Option<IoctlEntry> {
    KFD_IOCTLS
        .get(usize::from(nr.checked_sub(AMDKFD_COMMAND_START)?))
        .copied()
}

mod sealed {
    pub trait Sealed {}
}

/// An argument struct with no user pointer the kernel follows *during the ioctl*:
/// [`Request::new`] issues these as they are. Sealed: implemented only for this crate's
/// argument structs below.
///
/// Two of them carry addresses the hardware uses *after* the ioctl, which a borrow cannot
/// cover (the use lasts until a later FREE or DESTROY, not until the call returns):
/// - [`AllocMemoryOfGpuArgs`] with `KFD_IOC_ALLOC_MEM_FLAGS_USERPTR`: `mmap_offset` is a
///   host address whose pages the kernel pins until FREE and the GPU then reads and writes.
///   What keeps this from reaching memory Rust owns is the port: both ports accept a USERPTR
///   range only inside a region they mapped themselves (the simulator's `ProcessMaps`, the
///   Linux port's region table, held across the ioctl), and both invalidate or refuse it
///   when that region is unmapped.
/// - [`CreateQueueArgs`]: the ring, read/write pointer, EOP and context-save addresses are GPU
///   virtual addresses the CP reads and writes through the process's GPU page table. They
///   reach host memory only through buffer objects mapped into that VM (the ports' own
///   mappings, or USERPTR memory under the rule above), never a raw host pointer, so the
///   worst a wrong address does is a GPU page fault the kernel reports.
pub trait PlainArgs: Pod + sealed::Sealed {}

macro_rules! plain {
    ($($t:ty),* $(,)?) => {$(
        impl sealed::Sealed for $t {}
        impl PlainArgs for $t {}
    )*};
}
plain!(
    GetVersionArgs,
    CreateQueueArgs,
    DestroyQueueArgs,
    GetClockCountersArgs,
    CreateEventArgs,
    DestroyEventArgs,
    SetEventArgs,
    ResetEventArgs,
    AcquireVmArgs,
    AllocMemoryOfGpuArgs,
    FreeMemoryOfGpuArgs,
    SetXnackModeArgs,
    GetAvailableMemoryArgs,
    RuntimeEnableArgs,
);

macro_rules! ioctls {
    ($(
        $(#[$doc:meta])*
        $name:ident: $arg:ty = $dir:expr, $nr:literal $(, size $size:literal)? $(, + $ptr:ident)?;
    )*) => {
        $(
            $(#[$doc])*
            pub const $name: Ioctl<$arg> =
                ioctls!(@make $arg, $dir, $nr, stringify!($name) $(, size $size)? $(, $ptr)?);
        )*
        /// Every KFD ioctl, by command number (`KFD_IOCTLS[nr - 1]`).
        pub const KFD_IOCTLS: [IoctlEntry; 0x27] = [$($name.entry()),*];
    };
    (@make $arg:ty, $dir:expr, $nr:literal, $n:expr, size $size:literal $(, $ptr:ident)?) => {
        Ioctl::<$arg>::sized($dir, $nr, strip($n), $size, ioctls!(@ptr $($ptr)?))
    };
    (@make $arg:ty, $dir:expr, $nr:literal, $n:expr $(, $ptr:ident)?) => {
        Ioctl::<$arg>::new($dir, $nr, strip($n), ioctls!(@ptr $($ptr)?))
    };
    (@ptr pointers) => { true };
    (@ptr) => { false };
}

/// `"AMDKFD_IOC_CREATE_QUEUE"` -> `"CREATE_QUEUE"` (at compile time).
const fn strip(name: &'static str) -> &'static str {
    match name.as_bytes().split_at_checked(11) {
        Some((_, rest)) => match core::str::from_utf8(rest) {
            Ok(s) => s,
            Err(_) => name,
        },
        None => name,
    }
}

const RW: u32 = IOC_READ | IOC_WRITE;
const R: u32 = IOC_READ;
const W: u32 = IOC_WRITE;

ioctls! {
    /// Get the KFD interface version (never fails).
    AMDKFD_IOC_GET_VERSION: GetVersionArgs = R, 0x01;
    /// Create a user-mode queue (PM4 compute, SDMA, AQL); returns queue id and doorbell offset.
    AMDKFD_IOC_CREATE_QUEUE: CreateQueueArgs = RW, 0x02;
    /// Destroy a queue by id.
    AMDKFD_IOC_DESTROY_QUEUE: DestroyQueueArgs = RW, 0x03;
    /// Set the default/alternate cache policy of a GPU (32-byte struct, not used by hcq).
    AMDKFD_IOC_SET_MEMORY_POLICY: Unmodelled = W, 0x04, size 32;
    /// Read the GPU, CPU and system clocks at one moment.
    AMDKFD_IOC_GET_CLOCK_COUNTERS: GetClockCountersArgs = RW, 0x05;
    /// Deprecated fixed-size (7 GPUs) aperture query (400-byte struct).
    AMDKFD_IOC_GET_PROCESS_APERTURES: Unmodelled = R, 0x06, size 400;
    /// Update a queue's ring and percentage (24-byte struct, not used by hcq).
    AMDKFD_IOC_UPDATE_QUEUE: Unmodelled = W, 0x07, size 24;
    /// Create an event (signal, memory exception, HW exception, ...).
    AMDKFD_IOC_CREATE_EVENT: CreateEventArgs = RW, 0x08;
    /// Destroy an event.
    AMDKFD_IOC_DESTROY_EVENT: DestroyEventArgs = W, 0x09;
    /// Signal a SIGNAL event from the host.
    AMDKFD_IOC_SET_EVENT: SetEventArgs = W, 0x0A;
    /// Clear a SIGNAL event.
    AMDKFD_IOC_RESET_EVENT: ResetEventArgs = W, 0x0B;
    /// Sleep until any (or all) of the given events fire, or the timeout (ms) passes. The
    /// kernel reads and writes the event array: issue it with [`Request::wait_events`].
    AMDKFD_IOC_WAIT_EVENTS: WaitEventsArgs = RW, 0x0C, +pointers;
    /// Deprecated debugger register (8 bytes); returns EPERM.
    AMDKFD_IOC_DBG_REGISTER_DEPRECATED: Unmodelled = W, 0x0D, size 8;
    /// Deprecated debugger unregister (8 bytes); returns EPERM.
    AMDKFD_IOC_DBG_UNREGISTER_DEPRECATED: Unmodelled = W, 0x0E, size 8;
    /// Deprecated address watch (16 bytes, carried a user pointer); returns EPERM.
    AMDKFD_IOC_DBG_ADDRESS_WATCH_DEPRECATED: Unmodelled = W, 0x0F, size 16, +pointers;
    /// Deprecated wave control (16 bytes, carried a user pointer); returns EPERM.
    AMDKFD_IOC_DBG_WAVE_CONTROL_DEPRECATED: Unmodelled = W, 0x10, size 16, +pointers;
    /// Set the scratch backing VA of a GPU (16 bytes; not used by hcq).
    AMDKFD_IOC_SET_SCRATCH_BACKING_VA: Unmodelled = RW, 0x11, size 16;
    /// Read the tiling configuration into two user arrays (not used by hcq): issue it with
    /// [`Request::get_tile_config`].
    AMDKFD_IOC_GET_TILE_CONFIG: GetTileConfigArgs = RW, 0x12, +pointers;
    /// Install a trap handler (24 bytes; not used by hcq).
    AMDKFD_IOC_SET_TRAP_HANDLER: Unmodelled = W, 0x13, size 24;
    /// Read the LDS/scratch/GPUVM apertures of every GPU of the process into a user array:
    /// issue it with [`Request::process_apertures`].
    AMDKFD_IOC_GET_PROCESS_APERTURES_NEW: GetProcessAperturesNewArgs = RW, 0x14, +pointers;
    /// Turn a render node's DRM VM into this process's compute VM on a GPU.
    AMDKFD_IOC_ACQUIRE_VM: AcquireVmArgs = W, 0x15;
    /// Allocate a buffer object (VRAM, GTT, USERPTR, DOORBELL, MMIO_REMAP) at a GPU VA.
    AMDKFD_IOC_ALLOC_MEMORY_OF_GPU: AllocMemoryOfGpuArgs = RW, 0x16;
    /// Free a buffer object (must be unmapped from every GPU).
    AMDKFD_IOC_FREE_MEMORY_OF_GPU: FreeMemoryOfGpuArgs = W, 0x17;
    /// Map a buffer object into the GPU VM of one or more GPUs (the kernel reads a user array of
    /// gpu_ids: issue it with [`Request::map_memory`]).
    AMDKFD_IOC_MAP_MEMORY_TO_GPU: MapMemoryToGpuArgs = RW, 0x18, +pointers;
    /// Unmap a buffer object from one or more GPUs (as MAP: [`Request::map_memory`]).
    AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU: MapMemoryToGpuArgs = RW, 0x19, +pointers;
    /// Set a queue's CU mask from a user array (not used by hcq): issue it with
    /// [`Request::set_cu_mask`].
    AMDKFD_IOC_SET_CU_MASK: SetCuMaskArgs = W, 0x1A, +pointers;
    /// Read an inactive queue's wave-state header into user memory (not used by hcq): issue
    /// it with [`Request::queue_wave_state`].
    AMDKFD_IOC_GET_QUEUE_WAVE_STATE: GetQueueWaveStateArgs = RW, 0x1B, +pointers;
    /// Describe a DMA-buf, its metadata into user memory (not used by hcq): issue it with
    /// [`Request::dmabuf_info`].
    AMDKFD_IOC_GET_DMABUF_INFO: GetDmabufInfoArgs = RW, 0x1C, +pointers;
    /// Import a DMA-buf (24 bytes; not used by hcq).
    AMDKFD_IOC_IMPORT_DMABUF: Unmodelled = RW, 0x1D, size 24;
    /// Allocate GWS for a queue (16 bytes; not used by hcq).
    AMDKFD_IOC_ALLOC_QUEUE_GWS: Unmodelled = RW, 0x1E, size 16;
    /// Open an SMI event fd (8 bytes; not used by hcq).
    AMDKFD_IOC_SMI_EVENTS: Unmodelled = RW, 0x1F, size 8;
    /// Shared virtual memory attributes over user ranges (24 bytes + attributes; not used).
    AMDKFD_IOC_SVM: Unmodelled = RW, 0x20, size 24, +pointers;
    /// Query (negative argument) or set the process's XNACK mode.
    AMDKFD_IOC_SET_XNACK_MODE: SetXnackModeArgs = RW, 0x21;
    /// Checkpoint/restore through user buffers (56 bytes; not used by hcq).
    AMDKFD_IOC_CRIU_OP: Unmodelled = RW, 0x22, size 56, +pointers;
    /// Bytes of VRAM still available to this process on a GPU (ABI 1.9+).
    AMDKFD_IOC_AVAILABLE_MEMORY: GetAvailableMemoryArgs = RW, 0x23;
    /// Export a buffer object as a DMA-buf (16 bytes, ABI 1.12+; not used by hcq).
    AMDKFD_IOC_EXPORT_DMABUF: Unmodelled = RW, 0x24, size 16;
    /// Enable (or disable) the runtime for debugger support (ABI 1.13+; tinygrad calls it from
    /// 1.14).
    AMDKFD_IOC_RUNTIME_ENABLE: RuntimeEnableArgs = RW, 0x25;
    /// Debugger trap operations through user buffers (32 bytes, ABI 1.13+; not used by hcq).
    AMDKFD_IOC_DBG_TRAP: Unmodelled = RW, 0x26, size 32, +pointers;
    /// Create a secondary KFD process context (`_IO`, ABI 1.19+; not used by hcq).
    AMDKFD_IOC_CREATE_PROCESS: Unmodelled = IOC_NONE, 0x27, size 0;
}

/// The user memory a [`Request`]'s argument points to, borrowed for as long as the request.
#[derive(Debug)]
enum UserMemory<'a> {
    None,
    Events(&'a mut [EventData]),
    Apertures(&'a mut [ProcessDeviceApertures]),
    DeviceIds(&'a [u32]),
    CuMask(&'a [u32]),
    Tiles(&'a mut [u32], &'a mut [u32]),
    CtlStack(&'a mut [u8]),
    Metadata(&'a mut [u8]),
}

/// One ioctl as a [`KfdSys`](super::KfdSys) port receives it: the request number, the argument
/// bytes, and the user memory the argument points to, all borrowed from the caller.
///
/// Built only by [`Request::new`] (pointer-free arguments), the typed constructors for
/// pointer-carrying ones, or [`Request::raw`] (refused for those), so a safe caller cannot make
/// a port follow a pointer to memory the request does not borrow:
///
/// ```
/// use hcq_core::kfd::{Request, WaitEventsArgs, AMDKFD_IOC_WAIT_EVENTS};
/// let mut a = WaitEventsArgs { events_ptr: 0xdead_0000, num_events: 4, ..Default::default() };
/// // The raw form refuses a command whose argument carries user pointers.
/// assert!(Request::raw(AMDKFD_IOC_WAIT_EVENTS.request(), bytemuck::bytes_of_mut(&mut a)).is_none());
/// // The typed form points at the borrowed slice, whatever the struct said.
/// let mut events = [hcq_core::kfd::EventData::for_event(3)];
/// let addr = events.as_ptr() as u64;
/// let mut req = Request::wait_events(&mut a, &mut events);
/// let arg: WaitEventsArgs = bytemuck::pod_read_unaligned(req.kernel_arg());
/// assert_eq!((arg.events_ptr, arg.num_events), (addr, 1));
/// ```
///
/// A pointer-carrying struct is not [`PlainArgs`], so it cannot be issued through
/// [`Request::new`]:
///
/// ```compile_fail
/// use hcq_core::kfd::{Request, WaitEventsArgs, AMDKFD_IOC_WAIT_EVENTS};
/// let mut a = WaitEventsArgs { events_ptr: 0xdead_0000, num_events: 4, ..Default::default() };
/// let _ = Request::new(AMDKFD_IOC_WAIT_EVENTS, &mut a);
/// ```
#[derive(Debug)]
pub struct Request<'a> {
    request: u32,
    arg: &'a mut [u8],
    user: UserMemory<'a>,
}

/// `slice.len()` as the u32 count fields of the ABI (longer slices are used up to `u32::MAX`).
fn count(len: usize) -> u32 {
    u32::try_from(len).unwrap_or(u32::MAX)
}

/// The address of a slice as the ABI's `u64` pointer fields carry it.
fn addr<T>(s: &[T]) -> u64 {
    // CAST: a pointer is at most 64 bits on every target amdkfd exists for.
    s.as_ptr() as usize as u64
}

/// SET_CU_MASK's `num_cu_mask` for a mask of `words` u32 words: 32 bits each (a multiple of
/// 32 however long the slice; the kernel reads at most 1024 bits of it).
fn cu_mask_bits(words: usize) -> u32 {
    count(words).saturating_mul(32) & !31
}

/// GET_DMABUF_INFO's `metadata_ptr`: 0 (no metadata wanted) for an empty slice, whose
/// dangling address the kernel would otherwise take for a buffer.
fn metadata_addr(s: &[u8]) -> u64 {
    if s.is_empty() { 0 } else { addr(s) }
}

fn put_u64(arg: &mut [u8], at: usize, v: u64) {
    if let Some(p) = arg.get_mut(at..at + 8) {
        p.copy_from_slice(&v.to_le_bytes());
    }
}

fn put_u32(arg: &mut [u8], at: usize, v: u32) {
    if let Some(p) = arg.get_mut(at..at + 4) {
        p.copy_from_slice(&v.to_le_bytes());
    }
}

impl<'a> Request<'a> {
    /// `io` on `arg`, a struct without user pointers.
    #[must_use]
    pub fn new<A: PlainArgs>(io: Ioctl<A>, arg: &'a mut A) -> Self {
        Self {
            request: io.request(),
            arg: bytemuck::bytes_of_mut(arg),
            user: UserMemory::None,
        }
    }

    /// WAIT_EVENTS on `events` (the kernel reads each element and writes the event data
    /// back). `arg.events_ptr` and `arg.num_events` are set from the slice.
    #[must_use]
    pub fn wait_events(arg: &'a mut WaitEventsArgs, events: &'a mut [EventData]) -> Self {
        arg.events_ptr = addr(events);
        arg.num_events = count(events.len());
        Self {
            request: AMDKFD_IOC_WAIT_EVENTS.request(),
            arg: bytemuck::bytes_of_mut(arg),
            user: UserMemory::Events(events),
        }
    }

    /// MAP_MEMORY_TO_GPU or UNMAP_MEMORY_FROM_GPU (`io`) for the gpu_ids in `device_ids`.
    /// `arg.device_ids_array_ptr` and `arg.n_devices` are set from the slice; `n_success` is
    /// the caller's (where a retry resumes).
    #[must_use]
    pub fn map_memory(
        io: Ioctl<MapMemoryToGpuArgs>,
        arg: &'a mut MapMemoryToGpuArgs,
        device_ids: &'a [u32],
    ) -> Self {
        arg.device_ids_array_ptr = addr(device_ids);
        arg.n_devices = count(device_ids.len());
        Self {
            request: io.request(),
            arg: bytemuck::bytes_of_mut(arg),
            user: UserMemory::DeviceIds(device_ids),
        }
    }

    /// GET_PROCESS_APERTURES_NEW into `out` (empty: ask the number of GPUs only).
    /// `arg.kfd_process_device_apertures_ptr` and `arg.num_of_nodes` are set from the slice.
    #[must_use]
    pub fn process_apertures(
        arg: &'a mut GetProcessAperturesNewArgs,
        out: &'a mut [ProcessDeviceApertures],
    ) -> Self {
        arg.kfd_process_device_apertures_ptr = addr(out);
        arg.num_of_nodes = count(out.len());
        Self {
            request: AMDKFD_IOC_GET_PROCESS_APERTURES_NEW.request(),
            arg: bytemuck::bytes_of_mut(arg),
            user: UserMemory::Apertures(out),
        }
    }

    /// SET_CU_MASK from `mask` (bit `i` of the array = CU `i`; the kernel reads at most 1024
    /// bits). `arg.cu_mask_ptr` is set to the slice and `arg.num_cu_mask` to its 32 bits per
    /// word (an empty mask asks for 0 bits, which the kernel refuses); `queue_id` is the
    /// caller's.
    ///
    /// ```
    /// use hcq_core::kfd::{Request, SetCuMaskArgs, AMDKFD_IOC_SET_CU_MASK};
    /// let mut a = SetCuMaskArgs { queue_id: 3, cu_mask_ptr: 0xdead_0000, ..Default::default() };
    /// let mask = [0x0000_FFFFu32, 0];
    /// let mut req = Request::set_cu_mask(&mut a, &mask);
    /// assert_eq!(req.request(), AMDKFD_IOC_SET_CU_MASK.request());
    /// assert_eq!(req.cu_mask(), &mask);
    /// let arg: SetCuMaskArgs = bytemuck::pod_read_unaligned(req.kernel_arg());
    /// assert_eq!((arg.queue_id, arg.num_cu_mask), (3, 64));
    /// assert_eq!(arg.cu_mask_ptr, mask.as_ptr() as u64);
    /// ```
    #[must_use]
    pub fn set_cu_mask(arg: &'a mut SetCuMaskArgs, mask: &'a [u32]) -> Self {
        arg.cu_mask_ptr = addr(mask);
        arg.num_cu_mask = cu_mask_bits(mask.len());
        Self {
            request: AMDKFD_IOC_SET_CU_MASK.request(),
            arg: bytemuck::bytes_of_mut(arg),
            user: UserMemory::CuMask(mask),
        }
    }

    /// GET_TILE_CONFIG into `tiles` (tile modes) and `macro_tiles` (macro-tile modes); the
    /// kernel fills up to its own array sizes and writes back how many. The pointer and count
    /// fields are set from the slices; `gpu_id` is the caller's.
    ///
    /// ```
    /// use hcq_core::kfd::{GetTileConfigArgs, Request};
    /// let mut a = GetTileConfigArgs { gpu_id: 0x1234, num_tile_configs: 99, ..Default::default() };
    /// let (mut tiles, mut macros) = ([0u32; 32], [0u32; 16]);
    /// let (tp, mp) = (tiles.as_ptr() as u64, macros.as_ptr() as u64);
    /// let mut req = Request::get_tile_config(&mut a, &mut tiles, &mut macros);
    /// let arg: GetTileConfigArgs = bytemuck::pod_read_unaligned(req.kernel_arg());
    /// assert_eq!((arg.tile_config_ptr, arg.num_tile_configs), (tp, 32));
    /// assert_eq!((arg.macro_tile_config_ptr, arg.num_macro_tile_configs), (mp, 16));
    /// assert_eq!(req.tile_configs().1.len(), 16);
    /// ```
    #[must_use]
    pub fn get_tile_config(
        arg: &'a mut GetTileConfigArgs,
        tiles: &'a mut [u32],
        macro_tiles: &'a mut [u32],
    ) -> Self {
        arg.tile_config_ptr = addr(tiles);
        arg.num_tile_configs = count(tiles.len());
        arg.macro_tile_config_ptr = addr(macro_tiles);
        arg.num_macro_tile_configs = count(macro_tiles.len());
        Self {
            request: AMDKFD_IOC_GET_TILE_CONFIG.request(),
            arg: bytemuck::bytes_of_mut(arg),
            user: UserMemory::Tiles(tiles, macro_tiles),
        }
    }

    /// GET_QUEUE_WAVE_STATE with `ctl_stack` as the user copy of the queue's context save
    /// area: the kernel writes the 16-byte control-stack header at its start (on GC 9.4.3,
    /// one per XCC, `ctx_save_restore_size` apart) and, on gfx9, the saved control stack at
    /// its offset inside. `arg.ctl_stack_address` is set to the slice; `queue_id` is the
    /// caller's.
    ///
    /// The argument carries no length: how far the kernel writes depends on the queue (its
    /// control stack and save area sizes), which the request does not know. A port that
    /// passes it to a real kernel must itself make sure the slice covers that; the Linux port
    /// refuses it.
    ///
    /// ```
    /// use hcq_core::kfd::{GetQueueWaveStateArgs, Request};
    /// let mut a = GetQueueWaveStateArgs { queue_id: 2, ..Default::default() };
    /// let mut area = vec![0u8; 4096];
    /// let at = area.as_ptr() as u64;
    /// let mut req = Request::queue_wave_state(&mut a, &mut area);
    /// assert_eq!(req.ctl_stack().len(), 4096);
    /// let arg: GetQueueWaveStateArgs = bytemuck::pod_read_unaligned(req.kernel_arg());
    /// assert_eq!((arg.ctl_stack_address, arg.queue_id), (at, 2));
    /// ```
    #[must_use]
    pub fn queue_wave_state(arg: &'a mut GetQueueWaveStateArgs, ctl_stack: &'a mut [u8]) -> Self {
        arg.ctl_stack_address = addr(ctl_stack);
        Self {
            request: AMDKFD_IOC_GET_QUEUE_WAVE_STATE.request(),
            arg: bytemuck::bytes_of_mut(arg),
            user: UserMemory::CtlStack(ctl_stack),
        }
    }

    /// GET_DMABUF_INFO with `metadata` for the buffer's metadata (empty: none wanted, the
    /// pointer is 0). `arg.metadata_ptr` and `arg.metadata_size` are set from the slice; the
    /// kernel copies at most that many bytes and writes back the metadata's size.
    /// `dmabuf_fd` is the caller's.
    ///
    /// ```
    /// use hcq_core::kfd::{GetDmabufInfoArgs, Request};
    /// let mut a = GetDmabufInfoArgs { dmabuf_fd: 7, metadata_ptr: 0xdead_0000, ..Default::default() };
    /// let mut req = Request::dmabuf_info(&mut a, &mut []);
    /// let arg: GetDmabufInfoArgs = bytemuck::pod_read_unaligned(req.kernel_arg());
    /// assert_eq!((arg.metadata_ptr, arg.metadata_size, arg.dmabuf_fd), (0, 0, 7));
    /// ```
    #[must_use]
    pub fn dmabuf_info(arg: &'a mut GetDmabufInfoArgs, metadata: &'a mut [u8]) -> Self {
        arg.metadata_ptr = metadata_addr(metadata);
        arg.metadata_size = count(metadata.len());
        Self {
            request: AMDKFD_IOC_GET_DMABUF_INFO.request(),
            arg: bytemuck::bytes_of_mut(arg),
            user: UserMemory::Metadata(metadata),
        }
    }

    /// Any request number on raw argument bytes (short, long or junk arguments, unknown
    /// numbers), for exercising a port's checks. `None` when the kernel's table says the
    /// command's argument carries user pointers (it dispatches on the number alone).
    #[must_use]
    pub fn raw(request: u32, arg: &'a mut [u8]) -> Option<Self> {
        // CAST: NR is an 8-bit field.
        let nr = IoctlRequest::from_raw(request).get(IoctlRequest::NR) as u8;
        if kfd_ioctl(nr).is_some_and(|e| e.user_pointers) {
            return None;
        }
        Some(Self {
            request,
            arg,
            user: UserMemory::None,
        })
    }

    /// The request number (`_IOWR('K', nr, size)`).
    #[must_use]
    pub fn request(&self) -> u32 {
        self.request
    }

    /// The command number (`_IOC_NR`).
    #[must_use]
    pub fn nr(&self) -> u8 {
        // CAST: NR is an 8-bit field.
        IoctlRequest::from_raw(self.request).get(IoctlRequest::NR) as u8
    }

    /// The argument bytes as the caller wrote them (pointer fields included, which ports must
    /// not follow: see [`Request::kernel_arg`] and the slice accessors).
    #[must_use]
    pub fn arg(&self) -> &[u8] {
        self.arg
    }

    /// The argument bytes, for a port writing the reply back.
    pub fn arg_mut(&mut self) -> &mut [u8] {
        self.arg
    }

    /// The argument as a kernel must receive it: every user pointer and count it carries set
    /// from the memory this request borrows (so the kernel reads and writes only that memory),
    /// the rest as the caller wrote it. For a port that passes the bytes on to a real kernel.
    pub fn kernel_arg(&mut self) -> &mut [u8] {
        // Field offsets from the abi_layout! asserts of each struct.
        let arg = &mut *self.arg;
        match &self.user {
            UserMemory::None => {}
            UserMemory::Events(e) => {
                put_u64(arg, 0, addr(e));
                put_u32(arg, 8, count(e.len()));
            }
            UserMemory::DeviceIds(d) => {
                put_u64(arg, 8, addr(d));
                put_u32(arg, 16, count(d.len()));
            }
            UserMemory::Apertures(a) => {
                put_u64(arg, 0, addr(a));
                put_u32(arg, 8, count(a.len()));
            }
            UserMemory::CuMask(m) => {
                put_u32(arg, 4, cu_mask_bits(m.len()));
                put_u64(arg, 8, addr(m));
            }
            UserMemory::Tiles(t, m) => {
                put_u64(arg, 0, addr(t));
                put_u64(arg, 8, addr(m));
                put_u32(arg, 16, count(t.len()));
                put_u32(arg, 20, count(m.len()));
            }
            UserMemory::CtlStack(c) => put_u64(arg, 0, addr(c)),
            UserMemory::Metadata(m) => {
                put_u64(arg, 8, metadata_addr(m));
                put_u32(arg, 16, count(m.len()));
            }
        }
        arg
    }

    /// The WAIT_EVENTS array this request borrows (empty for other requests).
    pub fn events(&mut self) -> &mut [EventData] {
        match &mut self.user {
            UserMemory::Events(e) => e,
            _ => &mut [],
        }
    }

    /// The MAP/UNMAP device list this request borrows (empty for other requests).
    #[must_use]
    pub fn device_ids(&self) -> &[u32] {
        match &self.user {
            UserMemory::DeviceIds(d) => d,
            _ => &[],
        }
    }

    /// The GET_PROCESS_APERTURES_NEW output array this request borrows (empty for others).
    pub fn apertures(&mut self) -> &mut [ProcessDeviceApertures] {
        match &mut self.user {
            UserMemory::Apertures(a) => a,
            _ => &mut [],
        }
    }

    /// The SET_CU_MASK mask this request borrows (empty for other requests).
    #[must_use]
    pub fn cu_mask(&self) -> &[u32] {
        match &self.user {
            UserMemory::CuMask(m) => m,
            _ => &[],
        }
    }

    /// The GET_TILE_CONFIG (tile, macro-tile) arrays this request borrows (empty for others).
    pub fn tile_configs(&mut self) -> (&mut [u32], &mut [u32]) {
        match &mut self.user {
            UserMemory::Tiles(t, m) => (t, m),
            _ => (&mut [], &mut []),
        }
    }

    /// The GET_QUEUE_WAVE_STATE control-stack memory this request borrows (empty for others).
    pub fn ctl_stack(&mut self) -> &mut [u8] {
        match &mut self.user {
            UserMemory::CtlStack(c) => c,
            _ => &mut [],
        }
    }

    /// The GET_DMABUF_INFO metadata buffer this request borrows (empty for others).
    pub fn dmabuf_metadata(&mut self) -> &mut [u8] {
        match &mut self.user {
            UserMemory::Metadata(m) => m,
            _ => &mut [],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_by_number_and_named() {
        for (i, e) in KFD_IOCTLS.iter().enumerate() {
            assert_eq!(usize::from(e.nr), i + 1, "{}", e.name);
            assert_eq!(kfd_ioctl(e.nr), Some(*e));
            assert!(!e.name.starts_with("AMDKFD"), "{}", e.name);
        }
        assert_eq!(kfd_ioctl(0), None);
        assert_eq!(kfd_ioctl(0x28), None);
        assert_eq!(AMDKFD_IOC_CREATE_QUEUE.name(), "CREATE_QUEUE");
        assert_eq!(AMDKFD_IOC_CREATE_QUEUE.entry().size(), 96);
        assert_eq!(AMDKFD_IOC_CREATE_PROCESS.entry().dir(), IOC_NONE);
    }

    #[test]
    fn accessors_read_the_request() {
        assert_eq!(AMDKFD_IOC_CREATE_QUEUE.nr(), 0x02);
        assert_eq!(AMDKFD_IOC_AVAILABLE_MEMORY.nr(), 0x23);
        // _IOR, _IOW, _IOWR, _IO.
        assert_eq!(AMDKFD_IOC_GET_VERSION.entry().dir(), IOC_READ);
        assert_eq!(AMDKFD_IOC_ACQUIRE_VM.entry().dir(), IOC_WRITE);
        assert_eq!(AMDKFD_IOC_CREATE_QUEUE.entry().dir(), IOC_READ | IOC_WRITE);
        assert_eq!(AMDKFD_IOC_CREATE_PROCESS.entry().dir(), IOC_NONE);
        for e in KFD_IOCTLS {
            assert_eq!(e.request >> 30, e.dir(), "{}", e.name);
            // CAST: test values.
            assert_eq!((e.request & 0xFF) as u8, e.nr, "{}", e.name);
            assert_eq!(
                ((e.request >> 16) & 0x3FFF) as usize,
                e.size(),
                "{}",
                e.name
            );
        }
    }

    #[test]
    fn ioctls_compare_and_print_as_their_entry() {
        // Same argument type, different commands: equal only to themselves.
        assert_eq!(AMDKFD_IOC_MAP_MEMORY_TO_GPU, AMDKFD_IOC_MAP_MEMORY_TO_GPU);
        assert_ne!(
            AMDKFD_IOC_MAP_MEMORY_TO_GPU,
            AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU
        );
        assert_ne!(AMDKFD_IOC_SVM, AMDKFD_IOC_CRIU_OP);
        use core::fmt::Write;
        let (mut shown, mut entry) = (
            heapless::String::<256>::new(),
            heapless::String::<256>::new(),
        );
        write!(shown, "{:?}", AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU).unwrap();
        write!(entry, "{:?}", AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU.entry()).unwrap();
        assert_eq!(shown, entry);
        assert!(shown.contains("UNMAP_MEMORY_FROM_GPU"), "{shown}");
    }

    #[test]
    fn pointer_requests_point_at_what_they_borrow() {
        let ids = [7u32, 9];
        let mut a = MapMemoryToGpuArgs {
            handle: 1,
            ..Default::default()
        };
        let mut r = Request::map_memory(AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU, &mut a, &ids);
        assert_eq!(r.nr(), 0x19);
        assert_eq!(r.device_ids(), &ids);
        // A caller rewriting the pointer and count does not get them to the kernel.
        r.arg_mut()[8..24].copy_from_slice(&[0xAB; 16]);
        let k: MapMemoryToGpuArgs = bytemuck::pod_read_unaligned(r.kernel_arg());
        assert_eq!(k.device_ids_array_ptr, ids.as_ptr() as u64);
        assert_eq!((k.n_devices, k.handle), (2, 1));

        let mut out = [ProcessDeviceApertures::default(); 3];
        let out_ptr = out.as_ptr() as u64;
        let mut a = GetProcessAperturesNewArgs::default();
        let mut r = Request::process_apertures(&mut a, &mut out);
        assert_eq!(r.apertures().len(), 3);
        assert!(r.events().is_empty());
        let k: GetProcessAperturesNewArgs = bytemuck::pod_read_unaligned(r.kernel_arg());
        assert_eq!(k.num_of_nodes, 3);
        assert_eq!(k.kfd_process_device_apertures_ptr, out_ptr);

        let mut events = [EventData::for_event(4); 2];
        let events_ptr = events.as_ptr() as u64;
        let mut a = WaitEventsArgs::default();
        let mut r = Request::wait_events(&mut a, &mut events);
        assert_eq!(r.request(), 0xC018_4B0C);
        assert_eq!(r.events().len(), 2);
        assert_eq!(r.events()[1].event_id, 4);
        r.arg_mut()[0..8].copy_from_slice(&[0xCD; 8]);
        let k: WaitEventsArgs = bytemuck::pod_read_unaligned(r.kernel_arg());
        assert_eq!((k.events_ptr, k.num_events), (events_ptr, 2));
    }

    #[test]
    fn the_queue_and_tile_requests_point_at_what_they_borrow() {
        let mask = [0xFFu32; 3];
        let mut a = SetCuMaskArgs {
            queue_id: 5,
            ..Default::default()
        };
        let mut r = Request::set_cu_mask(&mut a, &mask);
        assert_eq!(r.nr(), 0x1A);
        assert_eq!(r.cu_mask(), &mask);
        assert!(r.tile_configs().0.is_empty() && r.ctl_stack().is_empty());
        // A caller asking for more bits than the slice holds does not get them to the kernel.
        r.arg_mut()[4..16].copy_from_slice(&[0xEE; 12]);
        let k: SetCuMaskArgs = bytemuck::pod_read_unaligned(r.kernel_arg());
        assert_eq!((k.queue_id, k.num_cu_mask), (5, 96));
        assert_eq!(k.cu_mask_ptr, mask.as_ptr() as u64);
        assert_eq!(cu_mask_bits(0), 0);
        assert_eq!(cu_mask_bits(usize::MAX) % 32, 0);

        let (mut t, mut m) = ([0u32; 4], [0u32; 2]);
        let (tp, mp) = (t.as_ptr() as u64, m.as_ptr() as u64);
        let mut a = GetTileConfigArgs::default();
        let mut r = Request::get_tile_config(&mut a, &mut t, &mut m);
        r.arg_mut()[0..24].copy_from_slice(&[0x77; 24]);
        let k: GetTileConfigArgs = bytemuck::pod_read_unaligned(r.kernel_arg());
        assert_eq!((k.tile_config_ptr, k.num_tile_configs), (tp, 4));
        assert_eq!((k.macro_tile_config_ptr, k.num_macro_tile_configs), (mp, 2));
        assert_eq!(r.tile_configs().0.len(), 4);

        let mut area = [0u8; 64];
        let ap = area.as_ptr() as u64;
        let mut a = GetQueueWaveStateArgs::default();
        let mut r = Request::queue_wave_state(&mut a, &mut area);
        r.arg_mut()[0..8].copy_from_slice(&[0x55; 8]);
        let k: GetQueueWaveStateArgs = bytemuck::pod_read_unaligned(r.kernel_arg());
        assert_eq!(k.ctl_stack_address, ap);
        assert_eq!(r.ctl_stack().len(), 64);

        let mut meta = [0u8; 8];
        let mp = meta.as_ptr() as u64;
        let mut a = GetDmabufInfoArgs::default();
        let mut r = Request::dmabuf_info(&mut a, &mut meta);
        r.arg_mut()[8..20].copy_from_slice(&[0x33; 12]);
        let k: GetDmabufInfoArgs = bytemuck::pod_read_unaligned(r.kernel_arg());
        assert_eq!((k.metadata_ptr, k.metadata_size), (mp, 8));
        assert_eq!(r.dmabuf_metadata().len(), 8);
        assert!(r.cu_mask().is_empty());
    }

    #[test]
    fn raw_refuses_every_pointer_command() {
        let mut junk = [0u8; 64];
        for e in KFD_IOCTLS {
            let r = Request::raw(e.request, &mut junk);
            assert_eq!(r.is_none(), e.user_pointers, "{}", e.name);
        }
        // The kernel ignores the type byte: a WAIT_EVENTS number under another type is refused too.
        assert!(Request::raw(ioc(IOC_READ | IOC_WRITE, b'X', 0x0C, 24), &mut junk).is_none());
        assert!(Request::raw(ioc(IOC_READ, b'K', 0x77, 8), &mut junk).is_some());
    }
}
