//! `SimKfd`: the simulator's KFD side for Python, as a process sees the kernel: open files,
//! sysfs reads, ioctls on raw argument bytes, mmap and munmap. tinygrad's mock-GPU hook
//! (`hcq.mockgpu`) sends ops_amd.py's system calls here.

use std::sync::Arc;

use hcq_core::kfd::{
    AMDKFD_IOC_GET_DMABUF_INFO, AMDKFD_IOC_GET_PROCESS_APERTURES_NEW,
    AMDKFD_IOC_GET_QUEUE_WAVE_STATE, AMDKFD_IOC_GET_TILE_CONFIG, AMDKFD_IOC_MAP_MEMORY_TO_GPU,
    AMDKFD_IOC_SET_CU_MASK, AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU, AMDKFD_IOC_WAIT_EVENTS, Errno,
    EventData, Fd, GetDmabufInfoArgs, GetProcessAperturesNewArgs, GetQueueWaveStateArgs,
    GetTileConfigArgs, KfdSys, MapKind, MapMemoryToGpuArgs, ProcessDeviceApertures, Prot, Request,
    SetCuMaskArgs, WaitEventsArgs,
};
use hcq_sim::{ClientChoice, QueueBufferRules, SimConfig};
use pyo3::exceptions::PyOSError;
use pyo3::prelude::*;

use crate::pybuf::Exported;
use crate::{HcqError, SIM_TARGETS, invalid, sim_config};

/// `MAP_FIXED` of `mmap(2)`.
const MAP_FIXED: i32 = 0x10;
/// `MAP_ANONYMOUS` of `mmap(2)`.
const MAP_ANONYMOUS: i32 = 0x20;

/// An `OSError` with `errno` set, as the failing system call would raise it.
fn os_err(e: Errno, what: &str) -> PyErr {
    let name = std::io::Error::from_raw_os_error(e.0).to_string();
    PyOSError::new_err((e.0, format!("{what}: {name} (hcq-sim)")))
}

/// A simulated amdkfd and GPU(s), reached as a process reaches the kernel.
///
/// `SimKfd(target="gfx1100", gpus=1, client=None, kernel=None, xcc=None)`: `client` is `"hcq"` (hcq's
/// driver's strict rules) or `"any"` (the kernel's rules, for any in-process client: see
/// sim/README.md "Running other KFD clients"); default `HCQ_SIM_CLIENT`, else `"hcq"`.
/// `kernel` is the simulated Linux version (`"6.8"`, `"6.12"`; default `HCQ_SIM_KERNEL`, else
/// the relaxed 6.13 rules), which sets CREATE_QUEUE's buffer checks. `xcc` is the XCCs of each
/// GPU (gfx942: 1, 2, 4 or 8, an MI300X in SPX mode; other targets 1; default `HCQ_SIM_XCC`,
/// else 1). The GPU runs on its own
/// thread in `"any"` mode (clients spin on memory), else inside WAIT_EVENTS.
///
/// With `client="any"` the simulator maps, unmaps and lets the simulated GPU write whatever
/// address ranges the caller names, as the kernel does for a process: like `ctypes`, it can
/// corrupt the interpreter if given ranges that are not the client's own.
#[pyclass(module = "hcq._hcq", frozen)]
pub struct SimKfd {
    sim: Arc<hcq_sim::SimKfd>,
    client: &'static str,
    _gpu: hcq_sim::engine::attach::SimGpu,
}

impl SimKfd {
    fn fd(fd: i64) -> PyResult<Fd> {
        i32::try_from(fd)
            .map(Fd)
            .map_err(|_| os_err(Errno::EBADF, "bad file descriptor"))
    }
}

#[pymethods]
impl SimKfd {
    #[new]
    #[pyo3(signature = (*, target="gfx1100", gpus=1, client=None, kernel=None, xcc=None))]
    fn new(
        target: &str,
        gpus: usize,
        client: Option<&str>,
        kernel: Option<&str>,
        xcc: Option<u32>,
    ) -> PyResult<Self> {
        let gpu = sim_config(target).ok_or_else(|| {
            invalid(
                format!("the simulator has no GPU {target:?}"),
                &format!("choose one of {}", SIM_TARGETS.join(", ")),
            )
        })?;
        if !(1..=16).contains(&gpus) {
            return Err(invalid(
                format!("{gpus} simulated GPUs"),
                "ask for 1 to 16 GPUs",
            ));
        }
        let choice = match client {
            Some(c) if c.eq_ignore_ascii_case("any") => ClientChoice::Any,
            Some(c) if c.eq_ignore_ascii_case("hcq") => ClientChoice::Hcq,
            Some(c) => {
                return Err(invalid(
                    format!("client={c:?}"),
                    "pass client=\"hcq\" (strict) or client=\"any\" (kernel rules)",
                ));
            }
            None => hcq_sim::env_client().map_err(|e| invalid(e, "fix HCQ_SIM_CLIENT"))?,
        };
        let mut cfg = SimConfig {
            gpus: vec![gpu; gpus],
            ..SimConfig::default()
        };
        if let Some(x) = xcc {
            cfg.xcc = x;
        }
        if let Some(k) = kernel {
            cfg.queue_buffer_rules = QueueBufferRules::for_kernel(k).ok_or_else(|| {
                invalid(
                    format!("kernel={k:?} is not a Linux version"),
                    "pass a version such as \"6.8\", \"6.12\" or \"6.13\"",
                )
            })?;
        }
        if choice == ClientChoice::Any {
            // SAFETY: the Python caller is the client and names the ranges, as a process does
            // to the kernel; this class's documentation says so (like ctypes, it trusts the
            // caller's addresses). hcq.mockgpu passes only tinygrad's own reservations,
            // USERPTR buffers and what the simulator mapped for it.
            cfg = unsafe { cfg.for_any_client() };
        }
        let sim = Arc::new(hcq_sim::SimKfd::new(cfg).map_err(|e| match e {
            // The message names the partitions the target has and what to pass.
            hcq_sim::SimError::Xcc(_, x) => HcqError::new_err(format!("invalid argument: xcc: {x}")),
            hcq_sim::SimError::Env(e) => HcqError::new_err(e.to_string()),
            e => HcqError::new_err(format!(
                "starting the simulator: {e}\nnext: report this: the simulator refused its own configuration"
            ))
        })?);
        let gpu = hcq_sim::engine::attach::SimGpu::attach(&sim).map_err(|e| {
            HcqError::new_err(format!(
                "attaching the simulated GPU: {e}\nnext: report this"
            ))
        })?;
        Ok(Self {
            sim,
            client: if choice == ClientChoice::Any {
                "any"
            } else {
                "hcq"
            },
            _gpu: gpu,
        })
    }

    /// `"any"` or `"hcq"`: which clients this simulator serves.
    #[getter]
    fn client(&self) -> &'static str {
        self.client
    }

    /// gpu_ids of the simulated GPUs (topology nodes 1..).
    #[getter]
    fn gpu_ids(&self) -> Vec<u32> {
        self.sim.gpu_ids()
    }

    /// `open(2)` of `/dev/kfd` or `/dev/dri/renderD<minor>`: a descriptor (OSError ENOENT for
    /// other paths).
    fn open(&self, path: &str) -> PyResult<i32> {
        self.sim
            .open(path)
            .map(|f| f.0)
            .map_err(|e| os_err(e, path))
    }

    /// `close(2)` of a descriptor `open` or `dup` returned.
    fn close(&self, fd: i64) -> PyResult<()> {
        self.sim
            .close(Self::fd(fd)?)
            .map_err(|e| os_err(e, "close"))
    }

    /// `dup(2)`: another descriptor of the same open file.
    fn dup(&self, fd: i64) -> PyResult<i32> {
        self.sim
            .dup(Self::fd(fd)?)
            .map(|f| f.0)
            .map_err(|e| os_err(e, "dup"))
    }

    /// `fstat(2)`: `(path, major, minor)` of the character device.
    fn fstat(&self, fd: i64) -> PyResult<(String, u32, u32)> {
        let s = self
            .sim
            .fstat(Self::fd(fd)?)
            .map_err(|e| os_err(e, "fstat"))?;
        Ok((s.path, s.major, s.minor))
    }

    /// Whether `fd` is an open descriptor of this simulator.
    fn owns(&self, fd: i64) -> bool {
        i32::try_from(fd).is_ok_and(|f| self.sim.fstat(Fd(f)).is_ok())
    }

    /// A sysfs file the simulated kernel serves (KFD topology, amdgpu memory totals), as
    /// bytes; OSError ENOENT for one it does not.
    fn read_file(&self, path: &str) -> PyResult<Vec<u8>> {
        let mut buf = vec![0u8; 1 << 16];
        let n = self
            .sim
            .read_file(path, &mut buf)
            .map_err(|e| os_err(e, path))?;
        buf.truncate(n);
        Ok(buf)
    }

    /// Every sysfs file the simulated kernel serves (KFD topology under both roots, amdgpu's
    /// memory totals and IP-discovery tree per render node): a directory exists exactly when
    /// a listed file lies under it.
    fn sysfs_files(&self) -> Vec<String> {
        self.sim.sysfs_files()
    }

    /// `ioctl(2)` with request number `request` on the argument bytes `arg` (a writable
    /// buffer: a ctypes structure, a bytearray), which get the kernel's reply. For the
    /// commands whose argument points to user memory `user` is that memory: MAP/UNMAP_MEMORY
    /// the gpu_id list; WAIT_EVENTS the event array; GET_PROCESS_APERTURES_NEW the output
    /// array; SET_CU_MASK the mask words (read-only is fine); GET_TILE_CONFIG a pair
    /// `(tile_modes, macro_tile_modes)`; GET_QUEUE_WAVE_STATE the control-stack memory the
    /// header goes to; GET_DMABUF_INFO the metadata buffer. Writable where the kernel writes
    /// it. Counts in `arg` are used as the caller wrote them (a count past `user` is the
    /// kernel's EFAULT), and its pointer fields are kept as written. OSError with the kernel's
    /// errno on failure.
    #[pyo3(signature = (fd, request, arg, user=None))]
    fn ioctl(
        &self,
        py: Python<'_>,
        fd: i64,
        request: u32,
        arg: &Bound<'_, PyAny>,
        user: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let fd = Self::fd(fd)?;
        // The argument and user memory are Python's: copied into Rust-owned memory (raw
        // copies, pybuf::Exported), handed to the simulator, and the replies copied back.
        let mut arg = Exported::get(arg, true)?;
        let mut arg_bytes = arg.to_vec()?;
        let nr = (request & 0xFF) as u8;
        if nr == AMDKFD_IOC_GET_TILE_CONFIG.nr() {
            let r = self.tile_config(fd, &mut arg_bytes, user);
            arg.write_at(0, &arg_bytes)?;
            return r;
        }
        // SET_CU_MASK only reads its user memory.
        let writable = nr != AMDKFD_IOC_SET_CU_MASK.nr();
        let mut user = user.map(|u| Exported::get(u, writable)).transpose()?;
        let bytes = &mut arg_bytes[..];
        let sim = &self.sim;
        let r = if nr == AMDKFD_IOC_MAP_MEMORY_TO_GPU.nr()
            || nr == AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU.nr()
        {
            let io = if nr == AMDKFD_IOC_MAP_MEMORY_TO_GPU.nr() {
                AMDKFD_IOC_MAP_MEMORY_TO_GPU
            } else {
                AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU
            };
            let mut a: MapMemoryToGpuArgs = read_arg(bytes)?;
            let (ptr, n) = (a.device_ids_array_ptr, a.n_devices);
            let ids: Vec<u32> = match user.as_ref() {
                Some(u) => words(&u.to_vec()?),
                None => Vec::new(),
            };
            let r = py.allow_threads(|| {
                let mut req = Request::map_memory(io, &mut a, &ids);
                // n_devices as the caller wrote it (past the list: the kernel's EFAULT).
                if let Some(c) = req.arg_mut().get_mut(16..20) {
                    c.copy_from_slice(&n.to_le_bytes());
                }
                sim.ioctl(fd, req)
            });
            a.device_ids_array_ptr = ptr;
            a.n_devices = n;
            write_arg(bytes, &a);
            r
        } else if nr == AMDKFD_IOC_WAIT_EVENTS.nr() {
            let mut a: WaitEventsArgs = read_arg(bytes)?;
            let (ptr, n) = (a.events_ptr, a.num_events);
            let mut events: Vec<EventData> = match user.as_ref() {
                Some(u) => u
                    .to_vec()?
                    .chunks_exact(size_of::<EventData>())
                    .map(bytemuck_read)
                    .collect(),
                None => Vec::new(),
            };
            let r = py.allow_threads(|| {
                let req = Request::wait_events(&mut a, &mut events);
                sim.ioctl(fd, req)
            });
            if let Some(u) = user.as_mut() {
                let out: Vec<u8> = events.iter().flat_map(|e| as_bytes(e).to_vec()).collect();
                let n = out.len().min(u.len());
                u.write_at(0, out.get(..n).unwrap_or_default())?;
            }
            a.events_ptr = ptr;
            a.num_events = n;
            write_arg(bytes, &a);
            r
        } else if nr == AMDKFD_IOC_GET_PROCESS_APERTURES_NEW.nr() {
            let mut a: GetProcessAperturesNewArgs = read_arg(bytes)?;
            let ptr = a.kfd_process_device_apertures_ptr;
            let len = user.as_ref().map_or(0, Exported::len) / size_of::<ProcessDeviceApertures>();
            let mut out = vec![ProcessDeviceApertures::default(); len];
            let r = sim.ioctl(fd, Request::process_apertures(&mut a, &mut out));
            if let Some(u) = user.as_mut() {
                let bytes: Vec<u8> = out.iter().flat_map(|e| as_bytes(e).to_vec()).collect();
                u.write_at(0, &bytes)?;
            }
            a.kfd_process_device_apertures_ptr = ptr;
            write_arg(bytes, &a);
            r
        } else if nr == AMDKFD_IOC_SET_CU_MASK.nr() {
            let mut a: SetCuMaskArgs = read_arg(bytes)?;
            let (ptr, n) = (a.cu_mask_ptr, a.num_cu_mask);
            let mask = match user.as_ref() {
                Some(u) => words(&u.to_vec()?),
                None => Vec::new(),
            };
            let mut req = Request::set_cu_mask(&mut a, &mask);
            // num_cu_mask as the caller wrote it (past the mask: the kernel's EFAULT).
            set_u32(req.arg_mut(), 4, n);
            let r = sim.ioctl(fd, req);
            a.cu_mask_ptr = ptr;
            a.num_cu_mask = n;
            write_arg(bytes, &a);
            r
        } else if nr == AMDKFD_IOC_GET_QUEUE_WAVE_STATE.nr() {
            let mut a: GetQueueWaveStateArgs = read_arg(bytes)?;
            let ptr = a.ctl_stack_address;
            let mut area = match user.as_ref() {
                Some(u) => u.to_vec()?,
                None => Vec::new(),
            };
            let r = sim.ioctl(fd, Request::queue_wave_state(&mut a, &mut area));
            if let Some(u) = user.as_mut() {
                u.write_at(0, &area)?;
            }
            a.ctl_stack_address = ptr;
            write_arg(bytes, &a);
            r
        } else if nr == AMDKFD_IOC_GET_DMABUF_INFO.nr() {
            let mut a: GetDmabufInfoArgs = read_arg(bytes)?;
            let (ptr, n) = (a.metadata_ptr, a.metadata_size);
            let mut meta = match user.as_ref() {
                Some(u) => u.to_vec()?,
                None => Vec::new(),
            };
            let mut req = Request::dmabuf_info(&mut a, &mut meta);
            // The pointer (tested against 0, never followed) and size as the caller wrote them.
            if let Some(p) = req.arg_mut().get_mut(8..16) {
                p.copy_from_slice(&ptr.to_le_bytes());
            }
            set_u32(req.arg_mut(), 16, n);
            let r = sim.ioctl(fd, req);
            if let Some(u) = user.as_mut() {
                u.write_at(0, &meta)?;
            }
            a.metadata_ptr = ptr;
            write_arg(bytes, &a);
            r
        } else {
            let req = Request::raw(request, bytes)
                .ok_or_else(|| os_err(Errno::EINVAL, "ioctl with user pointers"))?;
            py.allow_threads(|| sim.ioctl(fd, req))
        };
        arg.write_at(0, &arg_bytes)?;
        r.map_err(|e| os_err(e, &format!("kfd ioctl {nr:#x}")))
    }

    /// `mmap(2)`: `fd` a descriptor of this simulator (a BO on a render node; doorbells, MMIO
    /// or events on /dev/kfd), or -1 with `MAP_ANONYMOUS` (a reservation when `prot` is 0).
    /// `MAP_FIXED` places it at `addr`. Returns the address; OSError with the errno.
    fn mmap(
        &self,
        addr: u64,
        length: u64,
        prot: u32,
        flags: i32,
        fd: i64,
        offset: u64,
    ) -> PyResult<u64> {
        let fixed = (flags & MAP_FIXED != 0).then_some(addr);
        let kind = if flags & MAP_ANONYMOUS != 0 {
            if prot == 0 {
                MapKind::Reserve
            } else {
                MapKind::Anonymous
            }
        } else {
            MapKind::File {
                fd: Self::fd(fd)?,
                offset,
            }
        };
        self.sim
            .mmap(fixed, length, Prot(prot), kind)
            .map_err(|e| os_err(e, "mmap"))
    }

    /// `munmap(2)`; runs the MMU notifier (USERPTR buffers over the range are invalidated).
    fn munmap(&self, addr: u64, length: u64) -> PyResult<()> {
        self.sim
            .munmap(addr, length)
            .map_err(|e| os_err(e, "munmap"))
    }

    /// What the simulated GPUs faulted on so far (a hang, an illegal instruction, a memory
    /// fault), one line per fault, as the kernel log would tell: clients such as tinygrad's
    /// ops_amd.py only see their signal not arrive.
    fn fault_reasons(&self) -> Vec<String> {
        let mut out = Vec::new();
        for id in self.sim.gpu_ids() {
            self.sim
                .fault_reasons(id, &mut |r| out.push(format!("gpu {id:#x}: {r}")));
        }
        out
    }

    fn __repr__(&self) -> String {
        format!(
            "SimKfd(gpus={}, client={:?})",
            self.sim.gpu_ids().len(),
            self.client
        )
    }
}

impl SimKfd {
    /// GET_TILE_CONFIG with `user` = `(tile_modes, macro_tile_modes)` writable buffers (or
    /// None: no arrays), counts as the caller wrote them in `bytes`.
    fn tile_config(
        &self,
        fd: Fd,
        bytes: &mut [u8],
        user: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let mut a: GetTileConfigArgs = read_arg(bytes)?;
        let (tp, mp) = (a.tile_config_ptr, a.macro_tile_config_ptr);
        let (nt, nm) = (a.num_tile_configs, a.num_macro_tile_configs);
        let mut bufs = match user {
            Some(u) => {
                let (t, m): (Bound<'_, PyAny>, Bound<'_, PyAny>) = u.extract().map_err(|_| {
                    invalid(
                        "GET_TILE_CONFIG's user memory",
                        "pass a pair (tile_modes, macro_tile_modes) of writable buffers",
                    )
                })?;
                Some((Exported::get(&t, true)?, Exported::get(&m, true)?))
            }
            None => None,
        };
        let (mut tiles, mut macros) = match bufs.as_ref() {
            Some((t, m)) => (words(&t.to_vec()?), words(&m.to_vec()?)),
            None => Default::default(),
        };
        let mut req = Request::get_tile_config(&mut a, &mut tiles, &mut macros);
        // The counts as the caller wrote them (past an array: the kernel's EFAULT).
        set_u32(req.arg_mut(), 16, nt);
        set_u32(req.arg_mut(), 20, nm);
        let r = self.sim.ioctl(fd, req);
        if let Some((t, m)) = bufs.as_mut() {
            for (buf, w) in [(t, &tiles), (m, &macros)] {
                let bytes: Vec<u8> = w
                    .iter()
                    .take(buf.len() / 4)
                    .flat_map(|v| v.to_le_bytes())
                    .collect();
                buf.write_at(0, &bytes)?;
            }
        }
        a.tile_config_ptr = tp;
        a.macro_tile_config_ptr = mp;
        write_arg(bytes, &a);
        r.map_err(|e| os_err(e, "kfd ioctl 0x12"))
    }
}

/// Little-endian u32 words of `b` (a trailing partial word is not part of the array).
fn words(b: &[u8]) -> Vec<u32> {
    b.chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

fn set_u32(arg: &mut [u8], at: usize, v: u32) {
    if let Some(d) = arg.get_mut(at..at + 4) {
        d.copy_from_slice(&v.to_le_bytes());
    }
}

/// A `T` from the front of `bytes` (EFAULT when too short, as copy_from_user).
fn read_arg<T: bytemuck::Pod>(bytes: &[u8]) -> PyResult<T> {
    bytes
        .get(..size_of::<T>())
        .map(bytemuck::pod_read_unaligned)
        .ok_or_else(|| os_err(Errno::EFAULT, "ioctl argument too short"))
}

fn write_arg<T: bytemuck::Pod>(bytes: &mut [u8], v: &T) {
    if let Some(d) = bytes.get_mut(..size_of::<T>()) {
        d.copy_from_slice(bytemuck::bytes_of(v));
    }
}

fn bytemuck_read<T: bytemuck::Pod>(b: &[u8]) -> T {
    bytemuck::pod_read_unaligned(b)
}

fn as_bytes<T: bytemuck::Pod>(v: &T) -> &[u8] {
    bytemuck::bytes_of(v)
}
