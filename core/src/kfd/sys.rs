//! [`KfdSys`], the port to the OS, and the plain values it speaks in: [`Errno`], [`Fd`],
//! [`Prot`], [`MapKind`].

use super::Request;
use core::fmt;

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
