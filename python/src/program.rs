//! [`Program`]: a loaded kernel, its metadata, and the checked launch.

use std::sync::Arc;

use hcq_core::metadata::hidden::{self, LaunchShape};
use hcq_core::metadata::{HiddenKind, ValueKind};
use hcq_driver::{BufferView, GpuBuffer};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyFloat, PyList};

use crate::{Buffer, err, invalid};

/// One explicit or hidden argument, from the code object's metadata.
#[derive(Clone, Debug)]
struct ArgMeta {
    name: Option<String>,
    type_name: Option<String>,
    offset: u32,
    size: u32,
    kind: String,
    hidden: Option<HiddenKind>,
}

/// A kernel loaded on one device (`Device.load(code, name)`).
///
/// `launch(args, groups, block)` goes through the driver's checked builder: every argument
/// is checked against the kernel's metadata (count, kind, size), buffers against the device,
/// the block against the kernel's limits; the hidden arguments are filled by the driver.
#[pyclass(module = "hcq._hcq", frozen)]
pub struct Program {
    pub(crate) prog: hcq_driver::Program,
    /// The device it is loaded on (its drop waits for the device's work first, without the
    /// GIL).
    dev: hcq_driver::Device,
    args: Vec<ArgMeta>,
    explicit: usize,
    /// Offset of the first hidden argument (the kernarg size without any).
    hidden_start: u32,
    pub(crate) kernarg_size: u32,
    sgpr: u32,
    vgpr: u32,
    agpr: Option<u32>,
    group_segment: u32,
    private_segment: u32,
    wavefront: u32,
}

impl Drop for Program {
    /// The code must outlive every launch of it: the driver's drop waits for the device's work
    /// so far; that wait happens here without the GIL.
    fn drop(&mut self) {
        Python::with_gil(|py| {
            py.allow_threads(|| {
                let _ = self.dev.wait_value(self.dev.last_value());
            });
        });
    }
}

/// The LDS of an OpenCL `__local T*` argument (`dynamic_shared_pointer`): `Lds(bytes)` is
/// that many bytes per work-group. The launch places each such argument after the kernel's
/// static LDS at the alignment its metadata asks for and passes its LDS address, as ROCm's
/// runtime does (`prog.launch([src, out, hcq.Lds(256 * 4), n], ...)`).
#[pyclass(module = "hcq._hcq", frozen, eq)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lds {
    bytes: u32,
}

#[pymethods]
impl Lds {
    #[new]
    fn new(bytes: u32) -> Self {
        Self { bytes }
    }

    /// The bytes of LDS the argument points to in each work-group.
    #[getter]
    pub fn bytes(&self) -> u32 {
        self.bytes
    }

    fn __repr__(&self) -> String {
        format!("Lds({})", self.bytes)
    }
}

/// One launch argument, converted from Python.
enum LArg {
    Buf(Arc<GpuBuffer>, u64, u64),
    Int(i128),
    Float(f64),
    Lds(u32),
}

impl Program {
    pub(crate) fn load(
        py: Python<'_>,
        dev: &hcq_driver::Device,
        data: &[u8],
        name: &str,
    ) -> PyResult<Self> {
        let prog = py
            .allow_threads(|| hcq_driver::Program::load(dev, data, name))
            .map_err(err)?;
        // The driver parsed and checked the object; read the metadata it does not keep.
        let target = dev.target_name();
        let co = hcq_core::bundle::code_object_for(data, &target)
            .map_err(|e| err(hcq_driver::Error::code_object(e.to_string())))?;
        let parsed = hcq_core::codeobj::CodeObject::parse(co)
            .map_err(|e| err(hcq_driver::Error::code_object_parse(name, e)))?;
        let k = parsed
            .kernel(name)
            .map_err(|e| err(hcq_driver::Error::code_object_parse(name, e)))?;
        let mut args = Vec::new();
        let (mut sgpr, mut vgpr, mut agpr, mut wavefront) = (0, 0, None, k.wavefront_size());
        let mut hidden_start = k.kernarg_size();
        if let Some(m) = &k.metadata {
            sgpr = m.sgpr_count;
            vgpr = m.vgpr_count;
            agpr = m.agpr_count;
            wavefront = m.wavefront_size;
            for a in m.args() {
                let h = match a.value_kind {
                    ValueKind::Hidden(h) => {
                        hidden_start = hidden_start.min(a.offset);
                        Some(h)
                    }
                    _ => None,
                };
                args.push(ArgMeta {
                    name: a.name.map(str::to_owned),
                    type_name: a.type_name.map(str::to_owned),
                    offset: a.offset,
                    size: a.size,
                    kind: a.value_kind_str.to_owned(),
                    hidden: h,
                });
            }
        }
        Ok(Self {
            explicit: prog.args().len(),
            args,
            hidden_start,
            kernarg_size: k.kernarg_size(),
            sgpr,
            vgpr,
            agpr,
            group_segment: k.group_segment_size(),
            private_segment: k.private_segment_size(),
            wavefront,
            prog,
            dev: dev.clone(),
        })
    }

    fn convert(&self, args: &Bound<'_, PyAny>) -> PyResult<Vec<LArg>> {
        let mut out = Vec::with_capacity(self.explicit);
        for a in args.try_iter()? {
            let a = a?;
            if let Ok(b) = a.downcast::<Buffer>() {
                let (m, off, size) = b.get().range()?;
                out.push(LArg::Buf(m, off, size));
            } else if let Ok(l) = a.downcast::<Lds>() {
                out.push(LArg::Lds(l.get().bytes));
            } else if a.is_instance_of::<PyFloat>() {
                out.push(LArg::Float(a.extract::<f64>()?));
            } else if let Ok(i) = a.extract::<i128>() {
                out.push(LArg::Int(i));
            } else {
                return Err(invalid(
                    format!(
                        "kernel {}: argument {} is a {}, not a Buffer, Lds, int or float",
                        self.prog.name(),
                        out.len(),
                        a.get_type().name()?
                    ),
                    "pass Buffers for pointers, hcq.Lds(bytes) for __local pointers and numbers for values",
                ));
            }
        }
        Ok(out)
    }

    /// Feeds `args` to `b`: buffers as byte views, numbers at the size the metadata gives.
    fn feed(&self, b: &mut hcq_driver::LaunchBuilder<'_>, args: &[LArg]) -> PyResult<()> {
        let infos = self.prog.args();
        for (i, a) in args.iter().enumerate() {
            let size = infos.get(i).map_or(4, |x| x.size);
            let bad = |v: &dyn core::fmt::Display| {
                invalid(
                    format!(
                        "kernel {}: {} does not fit its {size} bytes: {v}",
                        self.prog.name(),
                        infos
                            .get(i)
                            .map_or_else(|| format!("argument {i}"), |x| x.describe(i))
                    ),
                    "pass a value in the argument's range",
                )
            };
            match a {
                LArg::Buf(m, off, len) => {
                    let v = BufferView::<u8>::new(m).slice(*off, *len).map_err(err)?;
                    b.arg(&v);
                }
                // Two's complement: signed and unsigned values of the argument's width.
                LArg::Int(v) => match size {
                    1 if (-128..256).contains(v) => {
                        b.arg(&(*v as u8));
                    }
                    2 if (-32768..65536).contains(v) => {
                        b.arg(&(*v as u16));
                    }
                    4 if (i128::from(i32::MIN)..=i128::from(u32::MAX)).contains(v) => {
                        b.arg(&(*v as u32));
                    }
                    8 if (i128::from(i64::MIN)..=i128::from(u64::MAX)).contains(v) => {
                        b.arg(&(*v as u64));
                    }
                    1 | 2 | 4 | 8 => return Err(bad(v)),
                    // Any other size: the builder refuses it, naming the argument.
                    _ => {
                        b.arg(&(*v as u32));
                    }
                },
                LArg::Lds(n) => {
                    b.arg(&hcq_driver::Lds(*n));
                }
                LArg::Float(v) => {
                    if size == 8 {
                        b.arg(v);
                    } else {
                        // CAST: a 4-byte float argument takes the f32 nearest the value.
                        b.arg(&(*v as f32));
                    }
                }
            }
        }
        Ok(())
    }
}

impl Program {
    /// The kinds of the kernel's hidden arguments.
    pub(crate) fn hidden_kinds(&self) -> impl Iterator<Item = HiddenKind> + '_ {
        self.args.iter().filter_map(|a| a.hidden)
    }

    /// The hidden arguments' bytes for a launch shape: (offset of the first, bytes to the end
    /// of the segment).
    pub(crate) fn hidden_image(
        &self,
        groups: [u32; 3],
        block: [u32; 3],
        dynamic_lds: u32,
    ) -> PyResult<(u32, Vec<u8>)> {
        let shape = LaunchShape {
            groups,
            block,
            dynamic_lds,
        };
        let mut seg = vec![0u8; self.kernarg_size as usize];
        for a in &self.args {
            if let Some(k) = a.hidden {
                hidden::write(&mut seg, k, a.offset, a.size, &shape).map_err(|e| {
                    invalid(
                        format!("kernel {}: {e}", self.prog.name()),
                        "launch with a shape whose values fit the hidden arguments",
                    )
                })?;
            }
        }
        let start = (self.hidden_start as usize).min(seg.len());
        Ok((self.hidden_start, seg.split_off(start)))
    }
}

fn dims3(v: &Bound<'_, PyAny>, what: &str) -> PyResult<[u32; 3]> {
    let mut out = [1u32; 3];
    let items: Vec<u32> = v.extract().map_err(|_| {
        invalid(
            format!("{what} must be 1 to 3 non-negative ints"),
            "pass e.g. (4, 1, 1)",
        )
    })?;
    if items.is_empty() || items.len() > 3 {
        return Err(invalid(
            format!("{what} has {} entries", items.len()),
            "pass 1 to 3 entries",
        ));
    }
    out[..items.len()].copy_from_slice(&items);
    Ok(out)
}

#[pymethods]
impl Program {
    /// Kernel name.
    #[getter]
    fn name(&self) -> &str {
        self.prog.name()
    }

    /// GPU address of the kernel's entry.
    #[getter]
    fn entry(&self) -> u64 {
        self.prog.entry_addr().get()
    }

    /// Bytes of the kernarg segment (explicit and hidden arguments).
    #[getter]
    fn kernarg_size(&self) -> u32 {
        self.kernarg_size
    }

    /// Offset of the first hidden argument (the kernarg size when there is none).
    #[getter]
    fn hidden_offset(&self) -> u32 {
        self.hidden_start
    }

    /// Number of explicit arguments a launch passes.
    #[getter]
    fn nargs(&self) -> usize {
        self.explicit
    }

    /// The kernel's metadata: `args` (explicit and hidden, each a dict with `name`, `type`,
    /// `offset`, `size`, `kind` (the `.value_kind`), `hidden`), `sgpr_count`, `vgpr_count`,
    /// `agpr_count`, `wavefront_size`, `group_segment_size` (static LDS bytes),
    /// `private_segment_size` (scratch bytes per work-item), `kernarg_size`,
    /// `max_flat_workgroup_size`, `reqd_workgroup_size`, `max_dynamic_lds`.
    #[getter]
    fn metadata<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        let args = PyList::empty(py);
        for a in &self.args {
            let x = PyDict::new(py);
            x.set_item("name", a.name.clone())?;
            x.set_item("type", a.type_name.clone())?;
            x.set_item("offset", a.offset)?;
            x.set_item("size", a.size)?;
            x.set_item("kind", a.kind.clone())?;
            x.set_item("hidden", a.hidden.is_some())?;
            args.append(x)?;
        }
        d.set_item("name", self.prog.name())?;
        d.set_item("args", args)?;
        d.set_item("sgpr_count", self.sgpr)?;
        d.set_item("vgpr_count", self.vgpr)?;
        d.set_item("agpr_count", self.agpr)?;
        d.set_item("wavefront_size", self.wavefront)?;
        d.set_item("group_segment_size", self.group_segment)?;
        d.set_item("private_segment_size", self.private_segment)?;
        d.set_item("kernarg_size", self.kernarg_size)?;
        d.set_item(
            "max_flat_workgroup_size",
            self.prog.max_flat_workgroup_size(),
        )?;
        d.set_item("reqd_workgroup_size", self.prog.reqd_workgroup_size())?;
        d.set_item("max_dynamic_lds", self.prog.max_dynamic_lds())?;
        Ok(d)
    }

    /// Launches with `args` (Buffers for `global_buffer` arguments, ints or floats for
    /// `by_value` ones, in order), `groups` work-groups and `block` work-items per group.
    /// Returns the timeline value that completes it; with `wait=True`, waits (GIL released)
    /// and returns the kernel's GPU time in seconds instead.
    ///
    /// Safety is the caller's, as in the driver: each buffer must be large enough for what
    /// the kernel does with it at this grid (the driver checks the rest).
    #[pyo3(signature = (args, groups, block, dynamic_lds=0, wait=false))]
    fn launch(
        &self,
        py: Python<'_>,
        args: &Bound<'_, PyAny>,
        groups: &Bound<'_, PyAny>,
        block: &Bound<'_, PyAny>,
        dynamic_lds: u32,
        wait: bool,
    ) -> PyResult<PyObject> {
        let conv = self.convert(args)?;
        let (g, bl) = (dims3(groups, "groups")?, dims3(block, "block")?);
        let mut b = self.prog.launch_builder();
        self.feed(&mut b, &conv)?;
        b.groups(g).block(bl).dynamic_lds(dynamic_lds);
        if wait {
            // SAFETY: the caller's contract (documented above): Python keeps every Buffer's
            // allocation alive (`conv` holds them) until this wait returns.
            let t = py
                .allow_threads(|| unsafe { b.launch_wait() })
                .map_err(err)?;
            return Ok(PyFloat::new(py, t.as_secs_f64()).into_any().unbind());
        }
        // A launch waits for room when the ring or the kernarg pool is full: the GIL is
        // released meanwhile.
        // SAFETY: as above; a launch that is not waited for keeps its buffers alive through
        // the driver (GpuBuffer's drop waits for the work submitted before it).
        let v = py.allow_threads(|| unsafe { b.launch() }).map_err(err)?;
        Ok(v.get().into_pyobject(py)?.into_any().unbind())
    }

    /// The hidden arguments' bytes for a launch of this shape: `(offset, bytes)`, the part of
    /// the kernarg segment from the first hidden argument to its end, as the driver's launch
    /// writes it (block counts, group sizes, grid dims, zeros).
    #[pyo3(signature = (groups, block, dynamic_lds=0))]
    fn hidden_kernargs<'py>(
        &self,
        py: Python<'py>,
        groups: &Bound<'_, PyAny>,
        block: &Bound<'_, PyAny>,
        dynamic_lds: u32,
    ) -> PyResult<(u32, Bound<'py, PyBytes>)> {
        let (start, bytes) = self.hidden_image(
            dims3(groups, "groups")?,
            dims3(block, "block")?,
            dynamic_lds,
        )?;
        Ok((start, PyBytes::new(py, &bytes)))
    }

    fn __repr__(&self) -> String {
        format!("Program({:?}, args={})", self.prog.name(), self.explicit)
    }
}
