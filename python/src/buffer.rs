//! [`Buffer`]: a driver `GpuBuffer`, or a byte range of one (a sub-buffer).

use std::sync::{Arc, RwLock};

use hcq_driver::GpuBuffer;
use pyo3::prelude::*;

use crate::{err, invalid, pybuf};

/// GPU memory: a whole allocation (`Device.alloc`) or a byte range of one (`Buffer.view`).
///
/// Views share the allocation (it lives while any of them does). `free()` gives the memory
/// back at once (after the GPU finished the work submitted before it); without it the memory
/// is freed when the last Python reference goes.
#[pyclass(module = "hcq._hcq", frozen)]
pub struct Buffer {
    mem: RwLock<Option<Arc<GpuBuffer>>>,
    pub(crate) dev: hcq_driver::Device,
    offset: u64,
    size: u64,
    va: u64,
}

impl Buffer {
    pub(crate) fn new(b: GpuBuffer, dev: hcq_driver::Device) -> Self {
        let (size, va) = (b.len(), b.va().get());
        Self {
            mem: RwLock::new(Some(Arc::new(b))),
            dev,
            offset: 0,
            size,
            va,
        }
    }

    /// The allocation, this buffer's offset in it and its size; an error once freed.
    pub(crate) fn range(&self) -> PyResult<(Arc<GpuBuffer>, u64, u64)> {
        let g = self.mem.read().map_err(|_| poisoned())?;
        match g.as_ref() {
            Some(m) => Ok((Arc::clone(m), self.offset, self.size)),
            None => Err(freed(self.va)),
        }
    }
}

impl Drop for Buffer {
    /// The last reference to an allocation frees it, after the GPU finished the work submitted
    /// before (the driver's drop waits): that wait happens here without the GIL. Errors are
    /// left to the driver's drop, which meets them again.
    fn drop(&mut self) {
        let last = self
            .mem
            .get_mut()
            .ok()
            .and_then(|m| m.take_if(|a| Arc::strong_count(a) == 1));
        if let Some(m) = last {
            Python::with_gil(|py| {
                py.allow_threads(|| {
                    let _ = self.dev.wait_value(self.dev.last_value());
                    drop(m);
                });
            });
        }
    }
}

fn poisoned() -> PyErr {
    crate::HcqError::new_err("a buffer's lock was poisoned by a panic\nnext: report this")
}

fn freed(va: u64) -> PyErr {
    invalid(
        format!("the buffer at {va:#x} was freed"),
        "keep using buffers only until Buffer.free()",
    )
}

#[pymethods]
impl Buffer {
    /// GPU virtual address of the first byte.
    #[getter]
    fn va(&self) -> u64 {
        self.va
    }

    /// Size in bytes.
    #[getter]
    fn size(&self) -> u64 {
        self.size
    }

    /// Byte offset in the allocation (0 for an allocation).
    #[getter]
    fn offset(&self) -> u64 {
        self.offset
    }

    /// The memory kind: `"vram"`, `"vram_visible"`, `"gtt"`, `"gtt_uncached"`, `"host"`.
    #[getter]
    fn kind(&self) -> PyResult<&'static str> {
        let (m, _, _) = self.range()?;
        Ok(match m.kind() {
            hcq_driver::BufferKind::Vram => "vram",
            hcq_driver::BufferKind::VramCpuVisible => "vram_visible",
            hcq_driver::BufferKind::Gtt => "gtt",
            hcq_driver::BufferKind::GttUncached => "gtt_uncached",
            hcq_driver::BufferKind::Host => "host",
        })
    }

    /// Whether `free()` was called (on this allocation, through any view).
    #[getter]
    fn freed(&self) -> bool {
        self.mem.read().map(|g| g.is_none()).unwrap_or(true)
    }

    /// Bytes `offset .. offset + size` of this buffer, as a buffer sharing its memory.
    fn view(&self, offset: u64, size: u64) -> PyResult<Buffer> {
        let (m, base, mine) = self.range()?;
        if offset.checked_add(size).is_none_or(|e| e > mine) {
            return Err(invalid(
                format!("view {offset}+{size} of a {mine}-byte buffer"),
                "keep views inside the buffer",
            ));
        }
        Ok(Buffer {
            mem: RwLock::new(Some(m)),
            dev: self.dev.clone(),
            offset: base + offset,
            size,
            va: self.va + offset,
        })
    }

    /// Maps the allocation to another GPU, so its kernels and copies may use it.
    fn map_to(&self, py: Python<'_>, device: &crate::Device) -> PyResult<()> {
        let (m, _, _) = self.range()?;
        py.allow_threads(|| m.map_to(&device.dev)).map_err(err)
    }

    /// Writes `data` at byte `offset` through the CPU mapping (host-visible kinds only: gtt,
    /// gtt_uncached, host, vram_visible). Not ordered with GPU work: synchronize first.
    #[pyo3(signature = (data, offset=0))]
    fn write(&self, data: &Bound<'_, PyAny>, offset: u64) -> PyResult<()> {
        let src = pybuf::Exported::get(data, false)?;
        let (m, base, size) = self.range()?;
        if offset
            .checked_add(src.len() as u64)
            .is_none_or(|e| e > size)
        {
            return Err(invalid(
                format!(
                    "write of {} bytes at {offset} into a {size}-byte buffer",
                    src.len()
                ),
                "stay inside the buffer",
            ));
        }
        // Raw copies only over Python's memory (pybuf::Exported): a `bytes` object in place,
        // anything else through a Rust-owned copy.
        src.with_bytes(|b| m.write(base + offset, b))?.map_err(err)
    }

    /// Fills `out` from byte `offset` through the CPU mapping (host-visible kinds only).
    #[pyo3(signature = (out, offset=0))]
    fn read(&self, out: &Bound<'_, PyAny>, offset: u64) -> PyResult<()> {
        let mut dst = pybuf::Exported::get(out, true)?;
        let (m, base, size) = self.range()?;
        if offset
            .checked_add(dst.len() as u64)
            .is_none_or(|e| e > size)
        {
            return Err(invalid(
                format!(
                    "read of {} bytes at {offset} from a {size}-byte buffer",
                    dst.len()
                ),
                "stay inside the buffer",
            ));
        }
        // Read into Rust-owned memory, then one raw copy into `out` (no reference over it).
        let mut tmp = vec![0u8; dst.len()];
        m.read(base + offset, &mut tmp).map_err(err)?;
        dst.write_at(0, &tmp)
    }

    /// Frees the allocation now (waiting, GIL released, for the GPU work submitted before).
    /// Refused with `BufferInUseError` while other views of it are alive (nothing is freed);
    /// a device fault met while waiting raises `HcqError`. Using the buffer afterwards raises.
    fn free(&self, py: Python<'_>) -> PyResult<()> {
        let taken = {
            let mut g = self.mem.write().map_err(|_| poisoned())?;
            let Some(m) = g.take() else {
                return Err(freed(self.va));
            };
            match Arc::try_unwrap(m) {
                Ok(b) => b,
                Err(m) => {
                    *g = Some(m);
                    return Err(crate::BufferInUseError::new_err(format!(
                        "invalid argument: free of the buffer at {:#x} while views of it are alive\nnext: free the allocation once, after dropping its views (or let Python drop it)",
                        self.va
                    )));
                }
            }
        };
        py.allow_threads(|| taken.free()).map_err(|(e, _)| err(e))
    }

    fn __repr__(&self) -> String {
        format!(
            "Buffer(va={:#x}, size={}, offset={})",
            self.va, self.size, self.offset
        )
    }
}
