//! `hcq._hcq`: hcq-driver's API for Python (PyO3, abi3).
//!
//! One class per driver type: [`Kfd`] (the KFD, real or simulated), [`Device`] (one GPU: its
//! queues and timeline), [`Buffer`] (a `GpuBuffer`, or a byte range of one), [`Program`] (a
//! loaded kernel and its metadata), [`GraphBuilder`] / [`Graph`] (record once, replay with new
//! values). Every driver error becomes an `hcq.HcqError` (a `RuntimeError`) with the driver's
//! message, cause first, then a `next:` line; waits release the GIL.
#![deny(missing_docs)]

mod buffer;
mod graph;
mod program;
mod pybuf;
mod simkfd;

use core::time::Duration;
use std::sync::Arc;

use hcq_driver::BufferKind;
use pyo3::create_exception;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

pub use buffer::Buffer;
pub use graph::{Graph, GraphBuilder, GraphCall, Var};
pub use program::{Lds, Program};
pub use simkfd::SimKfd;

create_exception!(
    _hcq,
    HcqError,
    PyRuntimeError,
    "An error from hcq: the driver's message (cause first) and a `next:` line."
);
create_exception!(
    _hcq,
    BufferInUseError,
    HcqError,
    "`Buffer.free()` of an allocation whose views are alive (nothing was freed; the memory goes when the last view does)."
);
create_exception!(
    _hcq,
    OutOfMemoryError,
    HcqError,
    "An allocation the GPU or the simulator could not satisfy."
);

/// What to try next after a driver error, by kind.
fn next_step(e: &hcq_driver::Error) -> &'static str {
    use hcq_driver::Error as E;
    match e {
        E::OutOfMemory { .. } | E::Exhausted(_) => {
            "free buffers you no longer need (tinygrad: its LRU cache is flushed and the allocation retried), or allocate less"
        }
        E::NoSuchDevice { .. } => {
            "open an index below the GPU count (hcq.Kfd().gpus), or ask the simulator for more GPUs (HCQ_SIM_GPUS)"
        }
        E::InvalidArgument(_) => {
            "fix the call: the message names the argument, limit or buffer it refused"
        }
        E::CodeObject { .. } => {
            "check the code object: built for this device's target (Device.target), with the kernel named as given"
        }
        E::Timeout(_) | E::DeviceFault(_) | E::PartialSubmit { .. } => {
            "the GPU did not finish the work: the report above names the fault and the queues; close the device (drop it) and open it again"
        }
        _ => {
            "this is an error of the driver or the kernel interface; report it with the message above"
        }
    }
}

/// The Python exception for a driver error: the same message, then `next:`.
pub(crate) fn err(e: hcq_driver::Error) -> PyErr {
    let msg = format!("{e}\nnext: {}", next_step(&e));
    match e {
        hcq_driver::Error::OutOfMemory { .. } => OutOfMemoryError::new_err(msg),
        _ => HcqError::new_err(msg),
    }
}

/// A refusal of this module's own (argument shape), as an `HcqError`.
pub(crate) fn invalid(msg: impl core::fmt::Display, next: &str) -> PyErr {
    HcqError::new_err(format!("invalid argument: {msg}\nnext: {next}"))
}

/// The GPU targets the simulator can play.
const SIM_TARGETS: [&str; 4] = ["gfx1100", "gfx90a", "gfx942", "gfx1201"];

fn sim_config(target: &str) -> Option<hcq_sim::GpuConfig> {
    Some(match target {
        "gfx1100" => hcq_sim::GpuConfig::gfx1100(),
        "gfx90a" => hcq_sim::GpuConfig::gfx90a(),
        "gfx942" => hcq_sim::GpuConfig::gfx942(),
        "gfx1201" => hcq_sim::GpuConfig::gfx1201(),
        _ => return None,
    })
}

/// The KFD of this process: `/dev/kfd` when it has a usable GPU, otherwise the simulator.
///
/// `Kfd()` opens `/dev/kfd`, or, without one, a simulator with `HCQ_SIM_TARGET` (gfx90a,
/// gfx942, gfx1100, gfx1201; default gfx1100) and `HCQ_SIM_GPUS` (default 1) GPUs.
/// `Kfd(target="gfx942", gpus=2)` or `Kfd(sim=True)` always opens the simulator;
/// `Kfd(sim=False)` only `/dev/kfd`. The simulated GPUs run inside the host's waits
/// (reproducible, the default), or with `threaded=True` (or `HCQ_SIM_THREADED=1`) on a thread
/// of their own beside the host, as a GPU does: host work and GPU work then overlap.
#[pyclass(module = "hcq._hcq", frozen)]
pub struct Kfd {
    kfd: hcq_driver::Kfd,
    backend: &'static str,
    note: Option<String>,
    /// The simulated GPUs' engines (kept for the KFD's life).
    _gpu: Option<hcq_sim::engine::attach::SimGpu>,
}

fn env_gpus() -> PyResult<usize> {
    match std::env::var("HCQ_SIM_GPUS") {
        Ok(v) if !v.trim().is_empty() => v
            .trim()
            .parse::<usize>()
            .ok()
            .filter(|&n| (1..=16).contains(&n))
            .ok_or_else(|| {
                invalid(
                    format!("HCQ_SIM_GPUS={v:?} is not a GPU count from 1 to 16"),
                    "set HCQ_SIM_GPUS to a number such as 2, or unset it for one GPU",
                )
            }),
        _ => Ok(1),
    }
}

/// `HCQ_SIM_THREADED`: `1` runs each simulated GPU on its own thread, `0` (the default) inside
/// the host's waits.
fn env_threaded() -> PyResult<bool> {
    match std::env::var("HCQ_SIM_THREADED") {
        Ok(v) => match v.trim() {
            "" | "0" => Ok(false),
            "1" => Ok(true),
            _ => Err(invalid(
                format!("HCQ_SIM_THREADED={v:?} is neither 0 nor 1"),
                "set HCQ_SIM_THREADED=1 for a GPU thread, 0 or unset to run it inside waits",
            )),
        },
        Err(_) => Ok(false),
    }
}

fn env_target() -> String {
    std::env::var("HCQ_SIM_TARGET")
        .ok()
        .filter(|t| !t.trim().is_empty())
        .map_or_else(|| "gfx1100".to_owned(), |t| t.trim().to_owned())
}

impl Kfd {
    fn simulated(target: &str, gpus: usize, threaded: bool, why: Option<String>) -> PyResult<Self> {
        let cfg = sim_config(target).ok_or_else(|| {
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
        let sim = hcq_sim::SimKfd::new(hcq_sim::SimConfig {
            gpus: vec![cfg; gpus],
            mode: if threaded {
                hcq_sim::SimMode::Threaded
            } else {
                hcq_sim::SimMode::Deterministic
            },
            ..hcq_sim::SimConfig::default()
        })
        .map_err(|e| HcqError::new_err(format!("starting the simulator: {e}\nnext: report this: the simulator refused its own configuration")))?;
        let sim = Arc::new(sim);
        // The engines only: every kernel runs through the ISA interpreter (no host stand-ins).
        let gpu = hcq_sim::engine::attach::SimGpu::attach(&sim).map_err(|e| {
            HcqError::new_err(format!(
                "attaching the simulated GPU: {e}\nnext: report this"
            ))
        })?;
        // SAFETY: `sim` is used only to attach the engines above; nothing else calls its port
        // methods (the driver is its only client, as /dev/kfd's would be).
        let kfd = unsafe { hcq_driver::Kfd::with_sim(Arc::clone(&sim)) }.map_err(err)?;
        Ok(Self {
            kfd,
            backend: "sim",
            note: why.map(|w| format!("{w}: running on {gpus} simulated {target} (hcq-sim)")),
            _gpu: Some(gpu),
        })
    }
}

#[pymethods]
impl Kfd {
    #[new]
    #[pyo3(signature = (*, target=None, gpus=None, sim=None, threaded=None))]
    fn new(
        target: Option<&str>,
        gpus: Option<usize>,
        sim: Option<bool>,
        threaded: Option<bool>,
    ) -> PyResult<Self> {
        let explicit_sim =
            sim == Some(true) || target.is_some() || gpus.is_some() || threaded.is_some();
        if sim == Some(false) && (target.is_some() || gpus.is_some() || threaded.is_some()) {
            return Err(invalid(
                "sim=False with a simulated target, GPU count or GPU thread",
                "drop target/gpus/threaded to open /dev/kfd, or drop sim=False",
            ));
        }
        let real_err = if explicit_sim {
            None
        } else {
            match hcq_driver::Kfd::open() {
                Ok(k) if !k.gpus().is_empty() => {
                    return Ok(Self {
                        kfd: k,
                        backend: "kfd",
                        note: None,
                        _gpu: None,
                    });
                }
                Ok(_) => Some("/dev/kfd has no usable GPU".to_owned()),
                Err(e) => Some(format!("no usable /dev/kfd ({e})")),
            }
        };
        if sim == Some(false) {
            return Err(HcqError::new_err(format!(
                "{}\nnext: run on a machine with an AMD GPU and amdgpu loaded, or drop sim=False",
                real_err.unwrap_or_default()
            )));
        }
        let target = target.map_or_else(env_target, str::to_owned);
        let gpus = match gpus {
            Some(g) => g,
            None => env_gpus()?,
        };
        let threaded = match threaded {
            Some(t) => t,
            None => env_threaded()?,
        };
        Self::simulated(&target, gpus, threaded, real_err)
    }

    /// `"kfd"` (this machine's /dev/kfd) or `"sim"` (hcq-sim).
    #[getter]
    fn backend(&self) -> &'static str {
        self.backend
    }

    /// Why the simulator was chosen, when it was chosen by default (else None).
    #[getter]
    fn note(&self) -> Option<String> {
        self.note.clone()
    }

    /// KFD's ioctl interface version, `(major, minor)`.
    #[getter]
    fn version(&self) -> (u32, u32) {
        self.kfd.version()
    }

    /// The usable GPUs, in node order: dicts with `node`, `gpu_id`, `target`.
    #[getter]
    fn gpus<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        self.kfd
            .gpus()
            .iter()
            .map(|g| {
                let d = PyDict::new(py);
                d.set_item("node", g.node)?;
                d.set_item("gpu_id", g.gpu_id)?;
                d.set_item("target", g.target_name())?;
                Ok(d)
            })
            .collect()
    }

    /// The deadline of every wait, in seconds (a wait past it raises, with the queues' state).
    #[getter]
    fn get_wait_timeout(&self) -> f64 {
        self.kfd.wait_timeout().as_secs_f64()
    }

    #[setter]
    fn set_wait_timeout(&self, seconds: f64) -> PyResult<()> {
        let d = Duration::try_from_secs_f64(seconds).map_err(|e| {
            invalid(
                format!("wait_timeout {seconds}: {e}"),
                "give a positive number of seconds",
            )
        })?;
        self.kfd.set_wait_timeout(d);
        Ok(())
    }

    /// Opens the `index`-th GPU: its compute and copy queues and its timeline.
    fn open(slf: &Bound<'_, Self>, index: usize) -> PyResult<Device> {
        let py = slf.py();
        let me = slf.get();
        let dev = py
            .allow_threads(|| hcq_driver::Device::open(&me.kfd, index))
            .map_err(err)?;
        Ok(Device {
            dev,
            index,
            kfd: slf.clone().unbind(),
        })
    }

    fn __repr__(&self) -> String {
        let targets: Vec<String> = self.kfd.gpus().iter().map(|g| g.target_name()).collect();
        format!("Kfd(backend={:?}, gpus={targets:?})", self.backend)
    }
}

/// One GPU: allocations, copies, program loads, its timeline. Open with `Kfd.open(i)` or
/// `hcq.open(i)`.
#[pyclass(module = "hcq._hcq", frozen)]
pub struct Device {
    pub(crate) dev: hcq_driver::Device,
    index: usize,
    kfd: Py<Kfd>,
}

pub(crate) fn parse_kind(kind: &str) -> PyResult<BufferKind> {
    Ok(match kind {
        "vram" => BufferKind::Vram,
        "vram_visible" => BufferKind::VramCpuVisible,
        "gtt" => BufferKind::Gtt,
        "gtt_uncached" => BufferKind::GttUncached,
        "host" => BufferKind::Host,
        _ => {
            return Err(invalid(
                format!("buffer kind {kind:?}"),
                "use one of vram, vram_visible, gtt, gtt_uncached, host",
            ));
        }
    })
}

#[pymethods]
impl Device {
    /// The target name, `"gfx1100"`.
    #[getter]
    fn target(&self) -> String {
        self.dev.target_name()
    }

    /// KFD's id of the GPU.
    #[getter]
    fn gpu_id(&self) -> u32 {
        self.dev.gpu_id()
    }

    /// The index this device was opened with.
    #[getter]
    fn index(&self) -> usize {
        self.index
    }

    /// The KFD it was opened on.
    #[getter]
    fn kfd(&self, py: Python<'_>) -> Py<Kfd> {
        self.kfd.clone_ref(py)
    }

    /// Local memory (LDS) per work-group, in bytes.
    #[getter]
    fn lds_bytes(&self) -> u64 {
        u64::from(self.dev.info().properties.lds_size_in_kb) * 1024
    }

    /// Allocates `size` bytes: `kind` is `"vram"` (default), `"vram_visible"`, `"gtt"`,
    /// `"gtt_uncached"` or `"host"` (host-visible kinds can also be read and written directly).
    #[pyo3(signature = (size, kind="vram"))]
    fn alloc(&self, py: Python<'_>, size: u64, kind: &str) -> PyResult<Buffer> {
        let k = parse_kind(kind)?;
        let b = py.allow_threads(|| self.dev.alloc(size, k)).map_err(err)?;
        Ok(Buffer::new(b, self.dev.clone()))
    }

    /// Copies `data` (any object with the buffer protocol: bytes, memoryview, numpy array)
    /// into `buf` (at the start of its range) through the copy queue; returns once queued.
    /// The GIL is released meanwhile. The bytes are read with raw copies straight into the
    /// driver's staging buffers (`Device::copy_in_raw`, no Rust reference over Python's
    /// memory): another thread writing `data` meanwhile makes the copy a mix of old and new
    /// bytes, nothing worse.
    fn copy_in(&self, py: Python<'_>, buf: &Buffer, data: &Bound<'_, PyAny>) -> PyResult<()> {
        let src = pybuf::Exported::get(data, false)?;
        let (mem, off, size) = buf.range()?;
        if src.len() as u64 > size {
            return Err(invalid(
                format!("copy_in of {} bytes into a {size}-byte buffer", src.len()),
                "copy at most Buffer.size bytes",
            ));
        }
        py.allow_threads(|| {
            // SAFETY: the export `src` keeps `src.len()` readable bytes at `src.as_ptr()` in
            // place until it drops, after this call; they are Python's memory, not a staging
            // buffer of the driver's. The driver reads them only with raw copies.
            unsafe {
                self.dev
                    .copy_in_raw(&mem, off, src.as_ptr(), src.len())
                    .map_err(err)
            }
        })
    }

    /// Fills `out` (a writable buffer-protocol object) from the start of `buf`, after all
    /// earlier work on this device; the GIL is released meanwhile. `out` is written with raw
    /// copies straight from the driver's staging buffers (`Device::copy_out_raw`, no Rust
    /// reference over Python's memory).
    fn copy_out(&self, py: Python<'_>, out: &Bound<'_, PyAny>, buf: &Buffer) -> PyResult<()> {
        let mut dst = pybuf::Exported::get(out, true)?;
        let (mem, off, size) = buf.range()?;
        if dst.len() as u64 > size {
            return Err(invalid(
                format!("copy_out of {} bytes from a {size}-byte buffer", dst.len()),
                "read at most Buffer.size bytes",
            ));
        }
        py.allow_threads(|| {
            let len = dst.len();
            let ptr = dst.as_mut_ptr()?;
            // SAFETY: the writable export `dst` keeps `len` writable bytes at `ptr` in place
            // until it drops, after this call; they are Python's memory, not a staging buffer
            // of the driver's. The driver writes them only with raw copies.
            unsafe { self.dev.copy_out_raw(&mem, off, ptr, len).map_err(err) }
        })
    }

    /// Copies `size` bytes (default: all of `src`) from `src` to `dst` on this device's copy
    /// queue; returns the timeline value that completes it.
    #[pyo3(signature = (dst, src, size=None))]
    fn copy(&self, py: Python<'_>, dst: &Buffer, src: &Buffer, size: Option<u64>) -> PyResult<u64> {
        let (d, doff, _) = dst.range()?;
        let (s, soff, ssize) = src.range()?;
        let n = size.unwrap_or(ssize);
        if n > ssize {
            return Err(invalid(
                format!("copy of {n} bytes from a {ssize}-byte buffer"),
                "copy at most src.size bytes",
            ));
        }
        // The copy queue may be full: waiting for room releases the GIL.
        py.allow_threads(|| self.dev.copy_range(&d, doff, &s, soff, n))
            .map(hcq_core::timeline::TimelineValue::get)
            .map_err(err)
    }

    /// Copies all of `src` (a buffer of `src_device`) into `dst` (a buffer of this device)
    /// with `src_device`'s copy queue; later work on either device sees the data.
    fn transfer(
        &self,
        py: Python<'_>,
        dst: &Buffer,
        src: &Buffer,
        src_device: &Device,
    ) -> PyResult<()> {
        let (d, doff, dsize) = dst.range()?;
        let (s, soff, ssize) = src.range()?;
        if doff != 0 || soff != 0 || dsize != d.len() || ssize != s.len() {
            return Err(invalid(
                "transfer between sub-buffers",
                "transfer whole buffers (Device.copy copies ranges on one device)",
            ));
        }
        py.allow_threads(|| hcq_driver::Device::transfer(&self.dev, &d, &src_device.dev, &s))
            .map_err(err)
    }

    /// Loads kernel `name` of `code` (an ELF code object or a clang offload bundle, bytes).
    fn load(&self, py: Python<'_>, code: &Bound<'_, PyAny>, name: &str) -> PyResult<Program> {
        // A code object is small: copied (unless `bytes`) before the driver parses it
        // without the GIL.
        let data = pybuf::Exported::get(code, false)?;
        data.with_bytes(|b| Program::load(py, &self.dev, b, name))?
    }

    /// Waits (GIL released) until timeline value `value` completed.
    fn wait(&self, py: Python<'_>, value: u64) -> PyResult<()> {
        let v = hcq_core::timeline::TimelineValue::new(value);
        py.allow_threads(|| self.dev.wait_value(v)).map_err(err)
    }

    /// Waits (GIL released) for all work submitted so far.
    fn synchronize(&self, py: Python<'_>) -> PyResult<()> {
        py.allow_threads(|| self.dev.synchronize()).map_err(err)
    }

    /// The last timeline value submitted.
    #[getter]
    fn last_value(&self) -> u64 {
        self.dev.last_value().get()
    }

    /// The last timeline value the GPU completed (as last observed).
    #[getter]
    fn completed_value(&self) -> u64 {
        self.dev.completed_value().get()
    }

    fn __repr__(&self) -> String {
        format!(
            "Device({}, target={:?}, gpu_id={:#x})",
            self.index,
            self.dev.target_name(),
            self.dev.gpu_id()
        )
    }
}

/// The hcq Python module.
#[pymodule]
fn _hcq(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("HcqError", m.py().get_type::<HcqError>())?;
    m.add("OutOfMemoryError", m.py().get_type::<OutOfMemoryError>())?;
    m.add("BufferInUseError", m.py().get_type::<BufferInUseError>())?;
    m.add("SIM_TARGETS", SIM_TARGETS.to_vec())?;
    m.add_class::<Kfd>()?;
    m.add_class::<Device>()?;
    m.add_class::<Buffer>()?;
    m.add_class::<Program>()?;
    m.add_class::<Lds>()?;
    m.add_class::<GraphBuilder>()?;
    m.add_class::<Graph>()?;
    m.add_class::<GraphCall>()?;
    m.add_class::<Var>()?;
    m.add_class::<SimKfd>()?;
    Ok(())
}
