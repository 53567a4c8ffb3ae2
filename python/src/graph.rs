//! [`GraphBuilder`] and [`Graph`]: the driver's graphs (record launches and copies once,
//! replay with new buffers, dims and values).

use std::sync::{Mutex, OnceLock};
use std::time::Instant;

use hcq_core::addr::GpuVa;
use hcq_core::metadata::HiddenKind;
use hcq_driver::graph::{
    self as dg, Arg, BufArg, DimLimits, Dims, DimsArg, ScalarArg, Value, VarId,
};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};

use crate::{Buffer, Device, Lds, Program, err, invalid};

/// What a [`Var`] stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum VarKind {
    Addr,
    Scalar,
    Dims,
}

/// A graph variable (`GraphBuilder.buffer/scalar/dims`): a value each replay may change.
#[pyclass(module = "hcq._hcq", frozen, eq, hash)]
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Var {
    id: u16,
    kind: u8,
    /// For a buffer variable: the bytes every use of it needs (a smaller buffer is refused).
    bytes: u64,
}

impl Var {
    fn kind(&self) -> VarKind {
        match self.kind {
            0 => VarKind::Addr,
            1 => VarKind::Scalar,
            _ => VarKind::Dims,
        }
    }
}

#[pymethods]
impl Var {
    /// Index of the variable (its place in `Graph.replay`'s list).
    #[getter]
    fn index(&self) -> u16 {
        self.id
    }

    /// `"buffer"`, `"scalar"` or `"dims"`.
    #[getter]
    fn kind_name(&self) -> &'static str {
        match self.kind() {
            VarKind::Addr => "buffer",
            VarKind::Scalar => "scalar",
            VarKind::Dims => "dims",
        }
    }

    fn __repr__(&self) -> String {
        format!("Var({}, {})", self.id, self.kind_name())
    }
}

/// Records launches and copies on one device with variables, then `record()`s a [`Graph`].
#[pyclass(module = "hcq._hcq")]
pub struct GraphBuilder {
    b: dg::GraphBuilder,
    dev: hcq_driver::Device,
    kinds: Vec<VarKind>,
    /// Buffers and programs the recorded commands use (kept alive with the graph).
    keep: Vec<PyObject>,
}

fn graph_err(e: dg::GraphError) -> PyErr {
    invalid(
        format!("graph: {e}"),
        "fix the recorded command the message names",
    )
}

fn dims_of(v: &Bound<'_, PyAny>) -> PyResult<Dims> {
    let (g, l): (Vec<u32>, Vec<u32>) = v.extract().map_err(|_| {
        invalid(
            "dims must be (groups, block), each 1 to 3 ints",
            "pass e.g. ((4, 1, 1), (64, 1, 1))",
        )
    })?;
    let fill = |x: Vec<u32>, what: &str| -> PyResult<[u32; 3]> {
        if x.is_empty() || x.len() > 3 {
            return Err(invalid(
                format!("{what} has {} entries", x.len()),
                "pass 1 to 3",
            ));
        }
        let mut o = [1; 3];
        o[..x.len()].copy_from_slice(&x);
        Ok(o)
    };
    Ok(Dims {
        global: fill(g, "groups")?,
        local: fill(l, "block")?,
    })
}

/// A dims-dependent hidden argument: its value changes with the launch shape.
fn shape_dependent(k: HiddenKind) -> bool {
    matches!(
        k,
        HiddenKind::BlockCountX
            | HiddenKind::BlockCountY
            | HiddenKind::BlockCountZ
            | HiddenKind::GroupSizeX
            | HiddenKind::GroupSizeY
            | HiddenKind::GroupSizeZ
            | HiddenKind::GridDims
    )
}

impl GraphBuilder {
    fn var_arg(&self, v: &Var, want: VarKind) -> PyResult<VarId> {
        if v.kind() != want || usize::from(v.id) >= self.kinds.len() {
            return Err(invalid(
                format!(
                    "{} where a {want:?} variable of this graph is expected",
                    v.__repr__()
                ),
                "pass the variables this builder returned, of the right kind",
            ));
        }
        Ok(VarId(v.id))
    }

    fn buf_arg(&mut self, a: &Bound<'_, PyAny>) -> PyResult<BufArg> {
        if let Ok(v) = a.downcast::<Var>() {
            let v = v.get();
            let id = self.var_arg(v, VarKind::Addr)?;
            return Ok(BufArg::var(id, v.bytes));
        }
        if let Ok(b) = a.downcast::<Buffer>() {
            let (m, off, _) = b.get().range()?;
            if !m.is_mapped_on(&self.dev) {
                return Err(invalid(
                    "a buffer not mapped on the graph's device",
                    "map it first (Buffer.map_to)",
                ));
            }
            self.keep.push(a.clone().unbind());
            return Ok(BufArg::Fixed(m.va().offset(off)));
        }
        Err(invalid(
            format!(
                "{} where a Buffer or buffer Var is expected",
                a.get_type().name()?
            ),
            "pass a Buffer (fixed) or a GraphBuilder.buffer() variable",
        ))
    }

    fn scalar_arg(&self, a: &Bound<'_, PyAny>) -> PyResult<ScalarArg> {
        if let Ok(v) = a.downcast::<Var>() {
            return Ok(ScalarArg::Var(self.var_arg(v.get(), VarKind::Scalar)?));
        }
        let i: i128 = a.extract().map_err(|_| {
            invalid(
                "a by_value argument that is not an int or scalar Var",
                "pass an int or a GraphBuilder.scalar() variable",
            )
        })?;
        // Two's complement of the argument's width (the graph writes the low bytes).
        Ok(ScalarArg::Fixed(i as u64))
    }

    fn add_var(
        &mut self,
        kind: VarKind,
        r: Result<VarId, dg::GraphError>,
        bytes: u64,
    ) -> PyResult<Var> {
        let id = r.map_err(graph_err)?;
        self.kinds.push(kind);
        Ok(Var {
            id: id.0,
            kind: kind as u8,
            bytes,
        })
    }
}

#[pymethods]
impl GraphBuilder {
    #[new]
    fn new(device: &Device) -> Self {
        Self {
            b: dg::GraphBuilder::new(device.dev.arch()),
            dev: device.dev.clone(),
            kinds: Vec::new(),
            keep: Vec::new(),
        }
    }

    /// A buffer variable, starting as `buf` (later replays may pass any buffer at least as
    /// large).
    fn buffer(&mut self, buf: &Buffer) -> PyResult<Var> {
        let (m, off, size) = buf.range()?;
        let r = self.b.buffer(m.va().offset(off), size);
        self.add_var(VarKind::Addr, r, size)
    }

    /// A scalar variable with initial value `value`.
    fn scalar(&mut self, value: i128) -> PyResult<Var> {
        let r = self.b.scalar(value as u64);
        self.add_var(VarKind::Scalar, r, 0)
    }

    /// A launch-dims variable, starting as `(groups, block)`.
    fn dims(&mut self, groups: &Bound<'_, PyAny>, block: &Bound<'_, PyAny>) -> PyResult<Var> {
        let d = dims_of(&PyTuple::new(groups.py(), [groups, block])?.into_any())?;
        let r = self.b.dims(d);
        self.add_var(VarKind::Dims, r, 0)
    }

    /// Records a launch of `program` with `args` (in order: Buffers or buffer Vars for
    /// `global_buffer` arguments, ints or scalar Vars for `by_value` ones, `hcq.Lds(bytes)` for
    /// `dynamic_shared_pointer` (`__local`) ones, placed as the launch places them) and `dims`:
    /// `(groups, block)` (fixed) or a dims Var. The hidden arguments are laid out as the
    /// driver's launch writes them; a kernel whose hidden arguments depend on the dims takes
    /// fixed dims only.
    fn launch(
        &mut self,
        program: &Bound<'_, Program>,
        args: &Bound<'_, PyAny>,
        dims: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let p = program.get();
        let infos = p.prog.args().to_vec();
        let items: Vec<Bound<'_, PyAny>> = args.try_iter()?.collect::<PyResult<_>>()?;
        if items.len() != infos.len() {
            return Err(invalid(
                format!(
                    "kernel {} takes {} arguments, got {}",
                    p.prog.name(),
                    infos.len(),
                    items.len()
                ),
                "pass one value per explicit argument",
            ));
        }
        let mut out: Vec<Arg> = Vec::with_capacity(items.len() + 16);
        // `__local` arguments: (argument index, bytes), and where each one's address goes.
        let mut locals: Vec<(usize, u32)> = Vec::new();
        let mut local_slots: Vec<usize> = Vec::new();
        let mut end = 0u32;
        for (i, (a, info)) in items.iter().zip(&infos).enumerate() {
            // Pad to the argument's offset with zero dwords (natural alignment does the rest).
            let align = if info.size == 8 { 8 } else { 4 };
            end = end.next_multiple_of(4);
            while end.next_multiple_of(align) < info.offset {
                out.push(Arg::U32(ScalarArg::Fixed(0)));
                end += 4;
            }
            if end.next_multiple_of(align) != info.offset {
                return Err(invalid(
                    format!(
                        "kernel {}: {} at offset {} does not follow its predecessor's layout",
                        p.prog.name(),
                        info.describe(i),
                        info.offset
                    ),
                    "graphs take arguments laid out with natural alignment",
                ));
            }
            let arg = match (info.class, info.size) {
                (hcq_driver::ArgClass::Buffer, 8) => Arg::Buf(self.buf_arg(a)?),
                (hcq_driver::ArgClass::Value, 4) => Arg::U32(self.scalar_arg(a)?),
                (hcq_driver::ArgClass::Value, 8) => Arg::U64(self.scalar_arg(a)?),
                (hcq_driver::ArgClass::Lds, 4 | 8) => {
                    let Ok(l) = a.downcast::<Lds>() else {
                        return Err(invalid(
                            format!(
                                "kernel {}: {} is a dynamic_shared_pointer (__local)",
                                p.prog.name(),
                                info.describe(i),
                            ),
                            "pass hcq.Lds(bytes), the LDS it needs",
                        ));
                    };
                    locals.push((i, l.get().bytes()));
                    local_slots.push(out.len());
                    // The LDS address, once every argument is known.
                    if info.size == 8 {
                        Arg::U64(ScalarArg::Fixed(0))
                    } else {
                        Arg::U32(ScalarArg::Fixed(0))
                    }
                }
                _ => {
                    return Err(invalid(
                        format!(
                            "kernel {}: {} ({} bytes, {}) cannot be a graph argument",
                            p.prog.name(),
                            info.describe(i),
                            info.size,
                            info.value_kind
                        ),
                        "graphs take pointers, __local pointers and 4- or 8-byte values",
                    ));
                }
            };
            out.push(arg);
            end = info.offset + info.size;
        }
        let placed = p.prog.lds_placement(&locals, 0).map_err(err)?;
        for (&slot, &(_, addr)) in local_slots.iter().zip(&placed.addrs) {
            if let Some(o) = out.get_mut(slot) {
                *o = match o {
                    Arg::U64(_) => Arg::U64(ScalarArg::Fixed(u64::from(addr))),
                    _ => Arg::U32(ScalarArg::Fixed(u64::from(addr))),
                };
            }
        }
        let dims_arg = if let Ok(v) = dims.downcast::<Var>() {
            DimsArg::Var(self.var_arg(v.get(), VarKind::Dims)?)
        } else {
            DimsArg::Fixed(dims_of(dims)?)
        };
        // The hidden arguments, as the driver's launch fills them.
        if p.kernarg_size > end {
            let has_shape_hidden = p.hidden_kinds().any(shape_dependent);
            let d = match dims_arg {
                DimsArg::Fixed(d) => d,
                DimsArg::Var(_) if has_shape_hidden => {
                    return Err(invalid(
                        format!(
                            "kernel {}: its hidden arguments depend on the launch dims, which are a variable",
                            p.prog.name()
                        ),
                        "record it with fixed dims",
                    ));
                }
                DimsArg::Var(_) => Dims {
                    global: [1; 3],
                    local: [1; 3],
                },
            };
            let (start, bytes) = p.hidden_image(d.global, d.local, placed.dynamic)?;
            while end < start {
                out.push(Arg::U32(ScalarArg::Fixed(0)));
                end += 4;
            }
            if end != start || bytes.len() % 4 != 0 {
                return Err(invalid(
                    format!(
                        "kernel {}: hidden arguments at {start} ({} bytes) are not dword-aligned",
                        p.prog.name(),
                        bytes.len()
                    ),
                    "report this code object",
                ));
            }
            for w in bytes.chunks_exact(4) {
                out.push(Arg::U32(ScalarArg::Fixed(u64::from(u32::from_le_bytes([
                    w[0], w[1], w[2], w[3],
                ])))));
            }
        }
        let limits = DimLimits {
            max_local: [p.prog.max_flat_workgroup_size(); 3],
            max_threads: p.prog.max_flat_workgroup_size(),
            ..DimLimits::AMD
        };
        self.b
            .launch(
                &p.prog.pm4_program_with_lds(placed.dynamic),
                limits,
                &out,
                dims_arg,
            )
            .map_err(graph_err)?;
        self.keep.push(program.clone().into_any().unbind());
        Ok(())
    }

    /// Records a copy of `size` bytes from `src` to `dst` (each a Buffer or buffer Var).
    fn copy(&mut self, dst: &Bound<'_, PyAny>, src: &Bound<'_, PyAny>, size: u64) -> PyResult<()> {
        let (d, s) = (self.buf_arg(dst)?, self.buf_arg(src)?);
        self.b.copy(d, s, size).map_err(graph_err)
    }

    /// Orders everything recorded before before everything recorded after.
    fn barrier(&mut self) {
        self.b.barrier();
    }

    /// Commands recorded so far.
    fn __len__(&self) -> usize {
        self.b.len()
    }

    /// Lays the graph out in GPU memory: a [`Graph`] to replay.
    fn record(&mut self, py: Python<'_>) -> PyResult<Graph> {
        let g = py
            .allow_threads(|| dg::Graph::record(&self.dev, &self.b))
            .map_err(err)?;
        Ok(Graph {
            g: Mutex::new(g),
            dev: self.dev.clone(),
            kinds: self.kinds.clone(),
            _keep: self.keep.iter().map(|k| k.clone_ref(py)).collect(),
        })
    }
}

/// A replay's values live on the stack for graphs of up to this many variables (tinygrad's JIT
/// graphs have a few): such a replay allocates nothing.
const STACK_VARS: usize = 16;

/// A recorded graph: `replay(values)` patches what changed and submits it in one go.
#[pyclass(module = "hcq._hcq", frozen)]
pub struct Graph {
    g: Mutex<dg::Graph>,
    dev: hcq_driver::Device,
    kinds: Vec<VarKind>,
    _keep: Vec<PyObject>,
}

impl Drop for Graph {
    /// The graph's memory goes after its last replay completed (the driver's drop of its
    /// buffers waits for the device): that wait happens here without the GIL.
    fn drop(&mut self) {
        let last = self.g.get_mut().ok().and_then(|g| g.last());
        if let Some(v) = last {
            Python::with_gil(|py| {
                py.allow_threads(|| {
                    let _ = self.dev.wait_value(v);
                });
            });
        }
    }
}

impl Graph {
    /// Replays with `vals` (`None` keeps the last replay's value); with `wait`, waits for it.
    /// Returns the timeline value that completes the replay. The GIL is released for all of
    /// it: a replay first waits for the graph's previous replay (and may wait for room in the
    /// ring), and the graph's lock is taken without the GIL (a second thread replaying the
    /// same graph waits for it without holding up the others).
    fn submit(&self, py: Python<'_>, vals: &mut [Option<Value>], wait: bool) -> PyResult<u64> {
        py.allow_threads(|| {
            let poisoned = || {
                crate::HcqError::new_err(
                    "a graph's lock was poisoned by a panic\nnext: report this",
                )
            };
            let mut g = self.g.lock().map_err(|_| poisoned())?;
            // None keeps what the lists hold: the last replay's values (the recorded ones at
            // first).
            for (v, c) in vals.iter_mut().zip(g.encoded().table.current()) {
                if v.is_none() {
                    *v = Some(*c);
                }
            }
            // SAFETY: the caller's contract, as the driver's: the buffers given (and those
            // recorded, which the graph keeps alive) are large enough for the kernels at their
            // dims; every buffer's memory outlives the work submitted before its drop (the
            // driver waits).
            let t = unsafe { g.replay(vals) }.map_err(err)?;
            drop(g);
            if wait {
                self.dev.wait_value(t).map_err(err)?;
            }
            Ok(t.get())
        })
    }

    fn value(&self, i: usize, v: &Bound<'_, PyAny>) -> PyResult<Value> {
        let kind = self.kinds.get(i).copied().ok_or_else(|| {
            invalid(
                format!("variable {i} of a graph with {}", self.kinds.len()),
                "pass one value per variable",
            )
        })?;
        Ok(match kind {
            VarKind::Addr => {
                let b = v.downcast::<Buffer>().map_err(|_| {
                    invalid(
                        format!("variable {i} is a buffer; got a {}", v.get_type()),
                        "pass a Buffer",
                    )
                })?;
                let (m, off, size) = b.get().range()?;
                if !m.is_mapped_on(&self.dev) {
                    return Err(invalid(
                        format!("variable {i}: the buffer is not mapped on the graph's device"),
                        "map it first (Buffer.map_to)",
                    ));
                }
                Value::Addr {
                    addr: GpuVa(m.va().get() + off),
                    bytes: size,
                }
            }
            VarKind::Scalar => Value::Scalar(v.extract::<i128>()? as u64),
            VarKind::Dims => Value::Dims(dims_of(v)?),
        })
    }
}

#[pymethods]
impl Graph {
    /// Number of variables (the length of `replay`'s list).
    #[getter]
    fn nvars(&self) -> usize {
        self.kinds.len()
    }

    /// Replays with new values: a list with one entry per variable (None keeps the last
    /// value) or a dict `{Var: value}`. Buffers for buffer variables, ints for scalars,
    /// `(groups, block)` for dims. Returns the timeline value that completes the replay; with
    /// `wait=True` waits for it (GIL released).
    #[pyo3(signature = (values=None, wait=false))]
    fn replay(
        &self,
        py: Python<'_>,
        values: Option<&Bound<'_, PyAny>>,
        wait: bool,
    ) -> PyResult<u64> {
        let n = self.kinds.len();
        let mut on_stack = [None; STACK_VARS];
        let mut on_heap = Vec::new();
        let vals: &mut [Option<Value>] = if n <= STACK_VARS {
            on_stack.get_mut(..n).unwrap_or_default()
        } else {
            on_heap.resize(n, None);
            &mut on_heap
        };
        let too_many = || {
            invalid(
                format!("more than the graph's {n} values"),
                "pass one value per variable",
            )
        };
        if let Some(values) = values {
            if let Ok(l) = values.downcast::<PyList>() {
                // A list by index: no iterator object, no end-of-iteration error to clear.
                if l.len() > n {
                    return Err(too_many());
                }
                for (i, slot) in vals.iter_mut().enumerate().take(l.len()) {
                    let v = l.get_item(i)?;
                    if !v.is_none() {
                        *slot = Some(self.value(i, &v)?);
                    }
                }
            } else if let Ok(d) = values.downcast::<PyDict>() {
                for (k, v) in d.iter() {
                    let var = k.downcast::<Var>().map_err(|_| {
                        invalid(
                            "a replay dict key that is not a Var",
                            "key the dict by the builder's Vars",
                        )
                    })?;
                    let i = usize::from(var.get().id);
                    let val = self.value(i, &v)?;
                    if let Some(s) = vals.get_mut(i) {
                        *s = Some(val);
                    }
                }
            } else {
                for (i, v) in values.try_iter()?.enumerate() {
                    let v = v?;
                    if v.is_none() {
                        continue;
                    }
                    let val = self.value(i, &v)?;
                    *vals.get_mut(i).ok_or_else(too_many)? = Some(val);
                }
            }
        }
        self.submit(py, vals, wait)
    }
}

/// How a [`GraphCall`] finds its graph's values in a call's arguments.
struct Binding {
    graph: Py<Graph>,
    /// The attribute of a call's buffer objects that holds the `hcq.Buffer`.
    attr: Py<PyString>,
    /// (position in the call's buffer list, variable).
    inputs: Vec<(usize, usize)>,
    /// (key of the call's value dict, scalar variable).
    values: Vec<(PyObject, usize)>,
    /// (object whose `launch_dims(var_vals)` gives `(groups, block)`, dims variable).
    dims: Vec<(PyObject, usize)>,
}

/// A base class whose instances replay a graph when called as
/// `obj(buffers, var_vals, wait=False)`, with no Python code on the way: the shape of a
/// framework's graph runner (tinygrad's `GraphRunner` subclasses take it as their first base).
///
/// `bind(graph, inputs, values, dims, attr)` says where each variable's value comes from: buffer
/// variable `slot` takes `getattr(buffers[position], attr)` for each `(position, slot)` of
/// `inputs`, scalar variable `slot` takes `var_vals[key]` for each `(key, slot)` of `values`,
/// and dims variable `slot` takes `obj.launch_dims(var_vals)` for each `(obj, slot)` of `dims`.
/// Variables none of them names keep their last value. A call returns None, or with
/// `wait=True` the seconds from submission to completion.
#[pyclass(module = "hcq._hcq", subclass, frozen)]
pub struct GraphCall {
    binding: OnceLock<Binding>,
}

#[pymethods]
impl GraphCall {
    /// An unbound call (a subclass's `__init__` binds it); takes and ignores the arguments a
    /// subclass's constructor is given.
    #[new]
    #[pyo3(signature = (*_args, **_kwargs))]
    fn new(_args: &Bound<'_, PyTuple>, _kwargs: Option<&Bound<'_, PyDict>>) -> Self {
        Self {
            binding: OnceLock::new(),
        }
    }

    /// Lets Python's cycle collector see what the binding holds (a key or dims object that
    /// refers back to its runner makes a cycle; the runner's instance dict is cleared to break
    /// it).
    fn __traverse__(&self, visit: pyo3::PyVisit<'_>) -> Result<(), pyo3::PyTraverseError> {
        if let Some(b) = self.binding.get() {
            visit.call(&b.graph)?;
            visit.call(&b.attr)?;
            for (o, _) in b.values.iter().chain(&b.dims) {
                visit.call(o)?;
            }
        }
        Ok(())
    }

    /// Binds the graph and where its values come from (once).
    #[pyo3(signature = (graph, inputs, values=Vec::new(), dims=Vec::new(), attr="_buf"))]
    fn bind(
        &self,
        py: Python<'_>,
        graph: Py<Graph>,
        inputs: Vec<(usize, usize)>,
        values: Vec<(PyObject, usize)>,
        dims: Vec<(PyObject, usize)>,
        attr: &str,
    ) -> PyResult<()> {
        let kinds = &graph.get().kinds;
        let check = |slot: usize, want: VarKind, what: &str| -> PyResult<()> {
            match kinds.get(slot) {
                Some(k) if *k == want => Ok(()),
                _ => Err(invalid(
                    format!("{what} names variable {slot}, not a {want:?} variable of the graph"),
                    "bind each slot to a variable of its kind (Var.index)",
                )),
            }
        };
        for &(_, s) in &inputs {
            check(s, VarKind::Addr, "an input")?;
        }
        for (_, s) in &values {
            check(*s, VarKind::Scalar, "a value")?;
        }
        for (_, s) in &dims {
            check(*s, VarKind::Dims, "a dims entry")?;
        }
        let b = Binding {
            graph,
            attr: PyString::intern(py, attr).unbind(),
            inputs,
            values,
            dims,
        };
        self.binding
            .set(b)
            .map_err(|_| invalid("this call is bound already", "bind once, in __init__"))
    }

    #[pyo3(signature = (buffers, var_vals, wait=false))]
    fn __call__(
        &self,
        py: Python<'_>,
        buffers: &Bound<'_, PyAny>,
        var_vals: &Bound<'_, PyAny>,
        wait: bool,
    ) -> PyResult<Option<f64>> {
        let b = self.binding.get().ok_or_else(|| {
            invalid(
                "a graph call before bind()",
                "bind the graph in the subclass's __init__",
            )
        })?;
        let g = b.graph.get();
        let n = g.kinds.len();
        let mut on_stack = [None; STACK_VARS];
        let mut on_heap = Vec::new();
        let vals: &mut [Option<Value>] = if n <= STACK_VARS {
            on_stack.get_mut(..n).unwrap_or_default()
        } else {
            on_heap.resize(n, None);
            &mut on_heap
        };
        let attr = b.attr.bind(py);
        let list = buffers.downcast::<PyList>().ok();
        for &(pos, slot) in &b.inputs {
            let item = match list {
                Some(l) => l.get_item(pos)?,
                None => buffers.get_item(pos)?,
            };
            let buf = item.getattr(attr)?;
            if let Some(v) = vals.get_mut(slot) {
                *v = Some(g.value(slot, &buf)?);
            }
        }
        for (key, slot) in &b.values {
            let v = var_vals.get_item(key.bind(py))?;
            if let Some(s) = vals.get_mut(*slot) {
                *s = Some(g.value(*slot, &v)?);
            }
        }
        for (obj, slot) in &b.dims {
            let d = obj
                .bind(py)
                .call_method1(pyo3::intern!(py, "launch_dims"), (var_vals,))?;
            if let Some(s) = vals.get_mut(*slot) {
                *s = Some(g.value(*slot, &d)?);
            }
        }
        if !wait {
            g.submit(py, vals, false)?;
            return Ok(None);
        }
        let t0 = Instant::now();
        g.submit(py, vals, true)?;
        Ok(Some(t0.elapsed().as_secs_f64()))
    }
}
