//! [`Kfd`]: the process's handle on `/dev/kfd` (topology, version, the event and signal pages).

use crate::error::{Error, Result};
use crate::kfd_core::KfdCore;
use crate::signal::SignalPages;
use crate::sync::lock;
use core::sync::atomic::{AtomicU64, Ordering};
use core::time::Duration;
use hcq_core::kfd::topology::{NodeProperties, TOPOLOGY_NODES_DIR, parse_gpu_id};
use hcq_core::kfd::{self as abi, Errno, KfdSys};
use log::debug;
use std::sync::{Arc, Mutex, Weak};

pub use crate::sys::KFD_PATH;

/// Default deadline of every wait (tinygrad's `HCQDEV_WAIT_TIMEOUT_MS`).
pub const DEFAULT_WAIT_TIMEOUT: Duration = Duration::from_secs(30);

/// Topology nodes probed at most (KFD numbers nodes densely from 0).
const MAX_NODES: u32 = 256;

/// One usable GPU of the topology.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GpuInfo {
    /// Topology node number (`.../topology/nodes/<node>`).
    pub node: u32,
    /// KFD's id of the GPU (what every ioctl names it by).
    pub gpu_id: u32,
    /// The node's `properties` file, parsed.
    pub properties: NodeProperties,
}

impl GpuInfo {
    /// The gfx target name (`gfx1100`), from `gfx_target_version`.
    #[must_use]
    pub fn target_name(&self) -> String {
        let (major, minor, step) = self.properties.gfx_version();
        format!("gfx{major}{minor:x}{step:x}")
    }
}

pub(crate) struct KfdInner {
    pub(crate) core: Arc<KfdCore>,
    version: (u32, u32),
    gpus: Vec<GpuInfo>,
    /// The event page, the signal page and the fault events, created with the first device.
    pages: Mutex<Option<Arc<SignalPages>>>,
    /// The wait deadline in nanoseconds (read on every submission: an atomic, not a lock).
    wait_timeout_ns: AtomicU64,
}

impl core::fmt::Debug for KfdInner {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Kfd")
            .field("fd", &self.core.fd)
            .field("version", &self.version)
            .field("gpus", &self.gpus.len())
            .finish_non_exhaustive()
    }
}

impl KfdInner {
    pub(crate) fn wait_timeout(&self) -> Duration {
        Duration::from_nanos(self.wait_timeout_ns.load(Ordering::Relaxed))
    }

    pub(crate) fn gpus(&self) -> &[GpuInfo] {
        &self.gpus
    }

    /// The shared event and signal pages, allocating them on `gpu_id` the first time, else
    /// mapping them to `gpu_id`.
    pub(crate) fn pages_for(&self, gpu_id: u32) -> Result<Arc<SignalPages>> {
        let mut pages = lock(&self.pages);
        if let Some(p) = pages.as_ref() {
            p.map_to(gpu_id)?;
            return Ok(Arc::clone(p));
        }
        let p = Arc::new(SignalPages::new(&self.core, gpu_id)?);
        *pages = Some(Arc::clone(&p));
        Ok(p)
    }
}

/// The process's connection to KFD: one per process on real hardware.
///
/// Holds the topology (usable GPUs only), the ioctl version, and (once a [`crate::Device`] is
/// open) the shared event page and the signal page every device maps.
#[derive(Clone, Debug)]
pub struct Kfd {
    pub(crate) inner: Arc<KfdInner>,
}

static PROCESS_KFD: Mutex<Weak<KfdInner>> = Mutex::new(Weak::new());

impl Kfd {
    /// Opens the real `/dev/kfd` (or returns the process's open one: KFD allows one per process).
    ///
    /// # Errors
    /// `ENOENT` when there is no KFD (no AMD GPU or driver), or any failure reading the topology.
    pub fn open() -> Result<Self> {
        let mut cur = lock(&PROCESS_KFD);
        if let Some(inner) = cur.upgrade() {
            return Ok(Self { inner });
        }
        // SAFETY: `LinuxKfd` is the kernel's port: `mmap` returns fresh kernel mappings and
        // refuses MAP_FIXED outside its own regions, `munmap` takes only regions it mapped,
        // and the kernel writes only the argument and the user arrays the driver passes.
        let kfd = unsafe { Self::with_sys(Arc::new(crate::sys::LinuxKfd::new())) }?;
        *cur = Arc::downgrade(&kfd.inner);
        Ok(kfd)
    }

    /// Opens KFD through another port (the simulator, a recording shim).
    ///
    /// The port is kept private to the driver from here on: no safe code can reach its
    /// `mmap`/`munmap`/`ioctl` through the returned [`Kfd`].
    ///
    /// # Safety
    /// The driver trusts the port the way it trusts the kernel, and turns what `mmap` returns
    /// into atomics, ring slices and doorbell stores. `sys` must guarantee, for as long as any
    /// value derived from the returned [`Kfd`] lives:
    /// - `mmap(None, len, ..)` returning `Ok(addr)` means `[addr, addr + len)` is a fresh
    ///   mapping of this process that overlaps no Rust object and no other live mapping, and
    ///   stays mapped (readable and writable without faulting when asked with
    ///   [`hcq_core::kfd::Prot::READ_WRITE`]) until `munmap(addr, len)`;
    /// - `mmap(Some(addr), len, ..)` replaces pages only inside a region the port itself
    ///   returned and has not unmapped (the driver reserves, then maps over its reservation),
    ///   and refuses any other fixed address;
    /// - `munmap` unmaps only a whole region the port returned, never other memory;
    /// - `ioctl` writes only into the request's argument and the slices the [`Request`](hcq_core::kfd::Request)
    ///   borrows (never through pointer values in the argument bytes);
    /// - any agent of the port running inside this process (a simulated GPU) accesses memory
    ///   the driver shares with it only through atomic operations, the way the driver does,
    ///   and writes a queue's ring, read pointer and signals only as the commands submitted
    ///   to it direct (the queue protocol).
    ///
    /// `hcq_sim::SimKfd` and the private Linux port (behind [`Kfd::open`]) meet this contract.
    ///
    /// # Errors
    /// Opening `/dev/kfd`, GET_VERSION or RUNTIME_ENABLE failing, or an unreadable topology.
    pub unsafe fn with_sys(sys: Arc<dyn KfdSys>) -> Result<Self> {
        let fd = sys
            .open(KFD_PATH)
            .map_err(|e| Error::sys("open /dev/kfd", e))?;
        let core = Arc::new(KfdCore::new(sys, fd));
        // From here on, dropping `core` closes the fd.
        let mut v = abi::GetVersionArgs::default();
        core.ioctl(abi::AMDKFD_IOC_GET_VERSION, &mut v)
            .map_err(|e| Error::sys("GET_VERSION", e))?;
        if v.major_version != abi::KFD_IOCTL_MAJOR_VERSION {
            return Err(Error::Protocol(format!(
                "KFD ioctl version {}.{} (major {} expected)",
                v.major_version,
                v.minor_version,
                abi::KFD_IOCTL_MAJOR_VERSION
            )));
        }
        let version = (v.major_version, v.minor_version);
        debug!("KFD ioctl version {}.{}", v.major_version, v.minor_version);
        if v.minor_version >= abi::KFD_IOCTL_MINOR_RUNTIME_ENABLE {
            // As tinygrad: mode 0 (no debugger trap setup), which the kernel accepts always.
            let mut r = abi::RuntimeEnableArgs::default();
            match core.ioctl(abi::AMDKFD_IOC_RUNTIME_ENABLE, &mut r) {
                // EBUSY/EEXIST: another runtime in this process enabled it already.
                Ok(()) | Err(Errno::EBUSY | Errno::EEXIST) => {}
                Err(e) => return Err(Error::sys("RUNTIME_ENABLE", e)),
            }
        }
        let gpus = read_topology(core.sys.as_ref())?;
        Ok(Self {
            inner: Arc::new(KfdInner {
                core,
                version,
                gpus,
                pages: Mutex::new(None),
                wait_timeout_ns: AtomicU64::new(timeout_ns(DEFAULT_WAIT_TIMEOUT)),
            }),
        })
    }

    /// Opens KFD on the simulator (`hcq-sim`).
    ///
    /// `SimKfd` itself meets [`Kfd::with_sys`]'s contract: its `mmap` returns fresh
    /// mappings and refuses MAP_FIXED outside regions it returned, its `munmap` takes only
    /// whole regions it returned, its ioctls write the argument and the ABI's user arrays, and
    /// its engines touch shared memory only through atomics, writing rings, read pointers and
    /// signals as the submitted packets say. What it cannot know is who calls it: `sim` is
    /// shared, and its `KfdSys` methods are public.
    ///
    /// # Safety
    /// While the returned [`Kfd`] or anything opened from it lives, no one calls `sim`'s
    /// `munmap`, or its `mmap` with a fixed address, on memory the driver mapped through it
    /// (buffers, rings, signal and doorbell pages), nor issues ioctls on the driver's
    /// objects. Fault injection and inspection (`fail_ioctl`, `live_objects`, the engines,
    /// `gpu_read`/`gpu_write`) are fine.
    ///
    /// # Errors
    /// As [`Kfd::with_sys`].
    #[cfg(feature = "sim")]
    pub unsafe fn with_sim(sim: Arc<hcq_sim::SimKfd>) -> Result<Self> {
        // SAFETY: `SimKfd` meets `with_sys`'s contract (above); our caller promises nobody
        // else uses its port methods on what this Kfd maps.
        unsafe { Self::with_sys(sim) }
    }

    /// KFD's ioctl interface version `(major, minor)`.
    #[must_use]
    pub fn version(&self) -> (u32, u32) {
        self.inner.version
    }

    /// Every GPU's apertures as KFD reports them for this process (GET_PROCESS_APERTURES_NEW:
    /// LDS, scratch and GPUVM base and limit per gpu_id).
    ///
    /// # Errors
    /// The ioctl's.
    pub fn apertures(&self) -> Result<Vec<abi::ProcessDeviceApertures>> {
        let mut out = vec![abi::ProcessDeviceApertures::default(); self.inner.gpus.len().max(1)];
        let mut arg = abi::GetProcessAperturesNewArgs::default();
        self.inner
            .core
            .request(
                "GET_PROCESS_APERTURES_NEW",
                abi::Request::process_apertures(&mut arg, &mut out),
            )
            .map_err(|e| Error::sys("GET_PROCESS_APERTURES_NEW", e))?;
        out.truncate(
            usize::try_from(arg.num_of_nodes)
                .unwrap_or(0)
                .min(out.len()),
        );
        Ok(out)
    }

    /// The usable GPUs (topology nodes with a nonzero gpu_id), in node order.
    #[must_use]
    pub fn gpus(&self) -> &[GpuInfo] {
        &self.inner.gpus
    }

    /// The deadline every wait of this process uses.
    #[must_use]
    pub fn wait_timeout(&self) -> Duration {
        self.inner.wait_timeout()
    }

    /// Sets the deadline of every wait (default 30 s).
    pub fn set_wait_timeout(&self, timeout: Duration) {
        self.inner
            .wait_timeout_ns
            .store(timeout_ns(timeout), Ordering::Relaxed);
    }
}

/// `d` in nanoseconds, saturating at `u64::MAX` (584 years: "forever").
fn timeout_ns(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

fn read_text(sys: &dyn KfdSys, path: &str) -> core::result::Result<String, Errno> {
    let mut buf = vec![0u8; 16 * 1024];
    let n = sys.read_file(path, &mut buf)?;
    buf.truncate(n);
    String::from_utf8(buf).map_err(|_| Errno::EIO)
}

/// Reads `nodes/<n>/{gpu_id,properties}` for every node; keeps nodes with a nonzero gpu_id.
fn read_topology(sys: &dyn KfdSys) -> Result<Vec<GpuInfo>> {
    let mut gpus = Vec::new();
    for node in 0..MAX_NODES {
        let id_path = format!("{TOPOLOGY_NODES_DIR}/{node}/gpu_id");
        let text = match read_text(sys, &id_path) {
            Ok(t) => t,
            Err(Errno::ENOENT) => break,
            Err(e) => return Err(Error::sys("read topology gpu_id", e)),
        };
        let gpu_id = parse_gpu_id(&text).map_err(|e| Error::Protocol(format!("{id_path}: {e}")))?;
        if gpu_id == 0 {
            continue;
        }
        let props_path = format!("{TOPOLOGY_NODES_DIR}/{node}/properties");
        let text =
            read_text(sys, &props_path).map_err(|e| Error::sys("read topology properties", e))?;
        let properties = NodeProperties::parse(&text)
            .map_err(|e| Error::Protocol(format!("{props_path}: {e}")))?;
        debug!(
            "node {node}: gpu_id {gpu_id:#x} gfx_target_version {}",
            properties.gfx_target_version
        );
        gpus.push(GpuInfo {
            node,
            gpu_id,
            properties,
        });
    }
    Ok(gpus)
}
