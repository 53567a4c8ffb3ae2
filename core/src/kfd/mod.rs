//! The KFD interface: `/dev/kfd` ioctl argument structs and numbers, alloc flags, queue and event
//! types, mmap-offset encoding, sysfs topology parsing ([`topology`]), and [`KfdSys`], the port to
//! the OS that the driver (Linux, through rustix) and the simulator implement.
//!
//! The argument structs mirror `include/uapi/linux/kfd_ioctl.h` (ioctl ABI 1.17 layouts; the
//! kernel zero-fills the tail of a shorter struct, so the 96-byte `CREATE_QUEUE` also works on
//! kernels that know only 88 bytes). Every struct has size and `offset_of!` asserts, and
//! `core/tests/kfd_abi.rs` compiles a C program against the system's `<linux/kfd_ioctl.h>` to
//! pin sizes, offsets and ioctl numbers to the kernel's own.

mod args;
mod consts;
mod ioc;
mod ioctl;
mod mmap;
mod sys;
pub mod topology;

pub use args::*;
pub use consts::*;
pub use ioc::*;
pub use ioctl::*;
pub use mmap::*;
pub use sys::*;
