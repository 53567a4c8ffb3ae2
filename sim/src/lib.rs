//! # hcq-sim
//!
//! A simulated amdkfd and AMD GPU that the real driver cannot tell from hardware.
//!
//! [`SimKfd`] implements core's [`KfdSys`](hcq_core::kfd::KfdSys) port: `open("/dev/kfd")`,
//! `open("/dev/dri/renderD<minor>")`, the KFD ioctls (same numbers, same struct bytes, the
//! kernel's checks and errnos, per amdkfd's `kfd_chardev.c`, `kfd_queue.c` and `kfd_events.c`), `mmap` of buffer objects,
//! doorbells and the event page, and the sysfs topology
//! (`/sys/devices/virtual/kfd/kfd/topology/nodes/N/{gpu_id,properties}`; node 0 is the CPU).
//!
//! ## Memory
//! VRAM and GTT buffers are memfds. The driver reserves address space (`MapKind::Reserve`),
//! allocates with that `va_addr`, then mmaps the BO through the render node at `mmap_offset`
//! with `fixed_addr = va_addr`: the sim maps the memfd `MAP_FIXED | MAP_SHARED` there, so CPU and
//! simulated GPU see the same bytes at the same address. The sim keeps its own mapping of every
//! memfd, and a page table per GPU filled by MAP_MEMORY_TO_GPU: every GPU access goes through
//! that table and faults ([`GpuFault`]) outside memory mapped to that GPU (or on a write to a
//! buffer without `WRITABLE`). USERPTR buffers are the process's own memory, accessed through
//! `/proc/self/mem` so that freed memory is a fault, not a crash. The doorbell slice of each GPU
//! (8 KiB) is sim memory mapped by a DOORBELL mmap of `/dev/kfd`.
//!
//! ## Interface for the engine (sim/src/engine)
//! The engine implements [`Engine`] (`fn run(&self, sim: &SimKfd) -> bool`: advance every runnable
//! queue as far as possible, return whether anything changed) and is installed with
//! [`SimKfd::set_engine`]. It uses only these `SimKfd` methods:
//!
//! | need | method |
//! |---|---|
//! | the queues (type, ring base/size, rptr/wptr VAs, doorbell id, EOP/CWSR, `active`) | [`SimKfd::queues`], [`SimKfd::queue`] → [`QueueInfo`] |
//! | GPU memory with translation and faults | [`SimKfd::gpu_read`], [`SimKfd::gpu_write`], `gpu_read_u32/u64`, `gpu_write_u32/u64` (atomic when aligned) |
//! | the GPU's L2 (a write-back cache the CPU does not snoop) | [`SimKfd::gpu_write_cached`], [`SimKfd::gpu_read_memory`], [`SimKfd::l2_writeback`] |
//! | lock-free access to a queue's own buffers (ring, rptr/wptr page) | [`SimKfd::gpu_span`] → [`GpuSpan`] |
//! | doorbell value | [`SimKfd::doorbell`]`(gpu_id, doorbell_id)` |
//! | wptr / publish rptr | [`SimKfd::read_wptr`], [`SimKfd::write_rptr`] (u64; PM4 dwords, SDMA bytes) |
//! | completion interrupt (RELEASE_MEM int_sel, SDMA TRAP) after writing `event_id` to the mailbox | [`SimKfd::signal_interrupt`]`(gpu_id, context_id)` |
//! | VM fault: evicts the GPU's queues, sets MEMORY events | [`SimKfd::raise_memory_fault`]`(&GpuFault)` |
//! | hang / reset: sets HW_EXCEPTION events | [`SimKfd::raise_hw_exception`] |
//! | timestamps (100 MHz) | [`SimKfd::gpu_clock`], [`SimKfd::advance_gpu_clock`] |
//! | topology facts | [`SimKfd::properties`], [`SimKfd::queue_sizes`] |
//!
//! Deterministic mode ([`SimMode::Deterministic`], the default): engines advance only inside
//! WAIT_EVENTS (which calls [`SimKfd::run_queues`] until the wait is satisfied or nothing
//! progresses; an unsatisfiable wait returns TIMEOUT at once) and in explicit
//! [`SimKfd::step`] / [`SimKfd::run_until_idle`]. Threaded mode ([`SimMode::Threaded`]):
//! WAIT_EVENTS blocks up to its timeout and is woken by SET_EVENT and interrupts; running the
//! engine on its own thread (watching doorbells) is the engine's job.
//!
//! Tests that play the host or a queue's producer by hand: [`SimKfd::cpu_read`] (what the CPU
//! reads now, past every L2), [`SimKfd::write_doorbell`].
//!
//! ## Host guard (off unless asked for)
//! [`SimConfig::host_guard`] (or `HCQ_SIM_HOST_GUARD=1`; `=0` forces it off) puts the host's
//! own reads and writes of GPU memory in the race detector and the HDP model. It installs a
//! process-wide SIGSEGV handler and changes the protection of the process's mappings of the
//! simulator's buffers, so it is off by default; hcq's own test suites turn it on. What it
//! could not watch is counted by [`SimKfd::host_guard_dropped`]. sim/README.md "Host accesses".
//!
//! ## Environment
//! `HCQ_SIM_SEED`, `HCQ_SIM_DISPATCH`, `HCQ_SIM_KERNEL`, `HCQ_SIM_HOST_GUARD`, `HCQ_SIM_CLIENT`,
//! `HCQ_SIM_XCC` set defaults ([`SimConfig::default`]); a value the simulator does not accept is never a
//! silent fallback: [`SimKfd::new`] fails with [`EnvError`] naming the variable and what it
//! takes ([`check_env`]).
//!
//! ## Fault injection
//! [`SimKfd::fail_ioctl`] (an errno for ioctl number `nr`, once or always),
//! [`SimKfd::set_vram_limit`] (ENOMEM past it), [`SimKfd::drop_interrupts`],
//! [`SimKfd::delay_interrupts`]. Queue hangs, stalled rptr and faulting addresses are the
//! engine's to add.
//!
//! ## Leaks
//! [`SimKfd::live_objects`] counts live buffers, GPU and CPU mappings, queues, events and files.
//!
//! ## Module layers
//! Dependencies between modules point one way (`scripts/module-cycles.py` checks it): `mem`,
//! `vm` < `config` < `clock` < `state` < `kfd` < `gpu` < `engine`, and `vm` < `isa`, `stand_ins` <
//! `engine`. `vm` holds the GPU-memory vocabulary every layer shares ([`engine::Access`],
//! [`engine::VmFault`]); the engine's own layers are in [`engine`]'s docs.
//!
//! ## Not simulated (yet)
//! AQL queues (CREATE_QUEUE answers EINVAL), XGMI SDMA engines (ENOMEM), SVM, DMA-buf, IPC,
//! CRIU, GWS, SMI events, CU masks and the debugger API (each answers as the kernel does
//! without the feature, or a named ENODEV: `kfd/more.rs`, sim/README.md), the double mapping of
//! `AQL_QUEUE_MEM` buffers, APUs (VRAM is never turned into GTT), DRM ioctls on render nodes
//! (ENOTTY), and process teardown when `/dev/kfd` is closed (objects live until the `SimKfd`
//! drops). DRM mmap offsets are exact: mapping from the middle of a BO is EINVAL.
#![deny(missing_docs)]

mod clock;
mod config;
pub mod engine;
pub mod findings;
mod gpu;
mod inthash;
pub mod isa;
mod kfd;
mod mem;
pub mod stand_ins;
mod state;
mod vm;

pub use config::{
    AnyClientGrant, CLIENT_ENV, ClientChoice, DISPATCH_ENV, DispatchMode, EnvError, GpuConfig,
    HOST_GUARD_ENV, KERNEL_ENV, QueueBufferRules, SEED_ENV, STRICT_ENV, SimClient, SimConfig,
    SimMode, XCC_ENV, XccError, check_env, env_client, env_host_guard, env_kernel, env_strict,
    env_xcc,
};
pub use gpu::{GpuFault, GpuSpan};
pub use kfd::{Engine, FileStat, LiveObjects, Persistence, SimError, SimKfd, node_dir};
pub use state::{QueueInfo, QueueKind};

// The README's example is compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
