//! A recorded graph bound to a device: its kernargs region (with the graph's internal
//! signals) and its command lists live in GPU memory; a replay waits for the previous replay
//! of the same graph, patches what changed in place, resets the internal signals, and submits
//! one INDIRECT_BUFFER (compute) and/or one SDMA INDIRECT (copy queue) under one timeline
//! value: a graph on both queues goes out through [`Device::submit_pair`] (both IBs start
//! after the previous timeline value, run side by side, keep the recorded order through the
//! internal signals, and the compute part signals the value once the copy list ended), a
//! one-queue graph as one ordinary submission.

use core::sync::atomic::{AtomicU32, Ordering};

use hcq_core::addr::GpuVa;
use hcq_core::timeline::TimelineValue;
use hcq_core::{pm4, sdma};

use super::aql::Target;
use super::{AqlItem, Encoded, GraphBuilder, GraphError, Value};
use crate::aql::AqlPart;
use crate::device::{BufferKind, Device, GpuBuffer};
use crate::error::{Error, Result};

pub(super) fn graph_err(e: GraphError) -> Error {
    match e {
        GraphError::Patch(p) => Error::Patch(p),
        GraphError::Cmd(c) => Error::Command(c),
        e => Error::InvalidArgument(e.to_string()),
    }
}

fn upload(dev: &Device, dwords: &[u32]) -> Result<Option<(GpuBuffer, u32)>> {
    if dwords.is_empty() {
        return Ok(None);
    }
    let n = u32::try_from(dwords.len())
        .map_err(|_| Error::InvalidArgument("graph command list too long".into()))?;
    let buf = dev.alloc(u64::from(n) * 4, BufferKind::GttUncached)?;
    buf.write(0, bytemuck::cast_slice(dwords))?;
    Ok(Some((buf, n)))
}

fn view(b: Option<&(GpuBuffer, u32)>) -> &[AtomicU32] {
    match b {
        // CAST: u32 -> usize widens.
        Some((buf, n)) => buf
            .bo
            .mapping()
            .u32s()
            .get(..*n as usize)
            .unwrap_or_default(),
        None => &[],
    }
}

/// A recorded graph bound to one device ([`Graph::record`]) and replayed with new values
/// ([`Graph::replay`]).
#[derive(Debug)]
pub struct Graph {
    device: Device,
    enc: Encoded,
    kernargs: GpuBuffer,
    pm4: Option<(GpuBuffer, u32)>,
    /// The INDIRECT_BUFFER of the bound PM4 list, encoded once (a compute-only replay copies
    /// it straight into the ring between the timeline's wait and signal).
    pm4_ib: [u32; pm4::INDIRECT_BUFFER_DWORDS],
    sdma: Option<(GpuBuffer, u32)>,
    /// Timeline value of the last replay (what the next patch waits for).
    last: Option<TimelineValue>,
}

impl Graph {
    /// Encodes `graph` for a kernargs region allocated on `device` (which also holds the
    /// graph's internal signals) and copies the kernargs and both command lists into GPU
    /// memory.
    ///
    /// # Errors
    /// Recording errors (bad bindings, lists too long), allocation failures.
    pub fn record(device: &Device, graph: &GraphBuilder) -> Result<Self> {
        let kernargs = device.alloc(graph.kernargs_bytes().max(64), BufferKind::GttUncached)?;
        // The queue kind decides the recording: kernel dispatch packets on an AQL queue.
        let enc = if device.is_aql() {
            let kernels = &device.inner.kernels;
            graph.encode_aql(kernargs.va(), &|entry| kernels.get(entry.get()))
        } else {
            graph.encode(kernargs.va())
        }
        .map_err(graph_err)?;
        kernargs.write(0, bytemuck::cast_slice(&enc.kernargs))?;
        // An AQL graph's PM4 bodies are copied into the ring's slots at each replay.
        let pm4 = if enc.aql.is_some() {
            None
        } else {
            upload(device, enc.pm4.as_dwords())?
        };
        #[cfg(feature = "seeded-bugs")]
        if seeded!(GraphKeepsKcache) {
            crate::seeded::drop_kcache_invalidates(view(pm4.as_ref()));
        }
        let sdma = upload(device, &enc.sdma_ib())?;
        let mut pm4_ib = [0; pm4::INDIRECT_BUFFER_DWORDS];
        if let Some((buf, n)) = &pm4 {
            pm4::indirect_buffer(&mut pm4_ib, buf.va(), *n).map_err(|source| Error::Encode {
                what: "the graph's INDIRECT_BUFFER",
                source,
            })?;
        }
        Ok(Self {
            device: device.clone(),
            enc,
            kernargs,
            pm4,
            pm4_ib,
            sdma,
            last: None,
        })
    }

    /// The device.
    #[must_use]
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// The recorded graph as encoded (lists as recorded; the bound copies carry the patches).
    #[must_use]
    pub fn encoded(&self) -> &Encoded {
        &self.enc
    }

    /// GPU address and dwords of the bound PM4 list.
    #[must_use]
    pub fn pm4_ib(&self) -> Option<(GpuVa, u32)> {
        self.pm4.as_ref().map(|(b, n)| (b.va(), *n))
    }

    /// GPU address and dwords of the bound SDMA list (padded to 8 dwords).
    #[must_use]
    pub fn sdma_ib(&self) -> Option<(GpuVa, u32)> {
        self.sdma.as_ref().map(|(b, n)| (b.va(), *n))
    }

    /// The bound PM4 list as the GPU will read it (after the patches so far); on an AQL
    /// queue the PM4 bodies of the patched image ([`super::AqlLayout`]).
    #[must_use]
    pub fn bound_pm4(&self) -> Vec<u32> {
        if let Some(a) = &self.enc.aql {
            // CAST: u32 -> usize widens.
            return a
                .image
                .get(..a.pm4_dwords as usize)
                .unwrap_or_default()
                .to_vec();
        }
        view(self.pm4.as_ref())
            .iter()
            .map(|d| d.load(Ordering::Relaxed))
            .collect()
    }

    /// On an AQL queue, the graph's compute part as the next replay writes it into the ring
    /// (after the patches so far).
    #[must_use]
    pub fn aql_layout(&self) -> Option<&super::AqlLayout> {
        self.enc.aql.as_ref()
    }

    /// Timeline value of the last replay.
    #[must_use]
    pub fn last(&self) -> Option<TimelineValue> {
        self.last
    }

    /// Replays the graph with `values` (one per declared variable, in declaration order):
    /// checks them all (an error here changes nothing), waits until the previous replay of
    /// this graph completed (the bound bytes are never patched while the GPU may read them,
    /// and no internal signal is reset while a queue may wait on it), writes what changed,
    /// resets the internal signals to 0 and submits the IBs under one timeline value. Returns
    /// that value: it completes once every operation of the replay did, on both queues.
    ///
    /// # Safety
    /// As [`crate::Program::launch`], for every launch and copy of the graph: each address the
    /// replay uses (the fixed ones recorded, and those `values` gives) must point into GPU
    /// memory mapped to this device that stays allocated until the replay completes, large
    /// enough for every access its kernels make at their launch dims and for its copies, and
    /// not accessed by the CPU in a conflicting way meanwhile, and never the driver's own
    /// memory (the [submission contract](crate::Device#submission-contract)). The graph
    /// checks what it can (a buffer variable's size against what the graph recorded, dims
    /// against the kernels' limits), not what a kernel does with an address.
    ///
    /// # Errors
    /// A missing or unacceptable value (buffer too small, dims out of the kernels' limits);
    /// wait and ring errors.
    pub unsafe fn replay(&mut self, values: &[Option<Value>]) -> Result<TimelineValue> {
        // The values the lists hold already (a JIT replaying its batch with the buffers it
        // captured): they passed the check when they were written, by an earlier replay or,
        // the recorded ones, by `GraphBuilder::encode` (which validates every record-time value
        // against the limits a replay checks; a variable's limits are fixed at record time),
        // so there is nothing to check and nothing to write.
        let cur = self.enc.table.current();
        let unchanged =
            values.len() >= cur.len() && values.iter().zip(cur).all(|(v, c)| v.as_ref() == Some(c));
        // Otherwise checked once, before the wait: a bad value is an error without waiting
        // for the GPU, and the write after the wait does not check again.
        let checked = if unchanged {
            None
        } else {
            Some(
                self.enc
                    .table
                    .check(values)
                    .map_err(|e| graph_err(e.into()))?,
            )
        };
        if let Some(v) = self.last.filter(|_| !seeded!(GraphReplayPatchesEarly)) {
            self.device.wait_value(v)?;
        }
        let ka = self.kernargs.bo.mapping().u32s();
        if let Some(checked) = checked {
            if let Some(a) = self.enc.aql.as_mut() {
                let mut targets = [
                    Target::Host(&mut a.image),
                    Target::Gpu(view(self.sdma.as_ref())),
                    Target::Gpu(ka),
                ];
                self.enc
                    .table
                    .write(checked, &mut targets)
                    .map_err(|e| graph_err(e.into()))?;
                a.set_dimensions();
            } else {
                let mut targets: [&[AtomicU32]; 3] =
                    [view(self.pm4.as_ref()), view(self.sdma.as_ref()), ka];
                self.enc
                    .table
                    .write(checked, &mut targets)
                    .map_err(|e| graph_err(e.into()))?;
            }
        }
        // The previous replay completed (its value covers both lists): every internal signal
        // is 1 and nothing waits on it. Back to 0 before the queues can see them; the ring's
        // write-pointer store (Release) orders these stores before the GPU reads the commands.
        for at in self.enc.internal_value_dwords() {
            for d in [at, at + 1] {
                ka.get(d)
                    .ok_or_else(|| {
                        Error::Protocol(format!("internal signal dword {d} outside the kernargs"))
                    })?
                    .store(0, Ordering::Relaxed);
            }
        }
        // The driver refuses values past 2^31 until synchronize() wraps the timeline onto its
        // shadow signal (everything submitted has completed by then).
        let dev = &self.device;
        if dev
            .timeline_target(dev.last_value())
            .is_some_and(|(_, g)| g >= 1 << 31)
        {
            dev.synchronize()?;
        }
        let copy = match &self.sdma {
            Some((buf, n)) => {
                let mut pkt = [0u32; sdma::INDIRECT_DWORDS];
                sdma::indirect(
                    &mut pkt,
                    &sdma::Indirect {
                        ib: buf.va(),
                        size_dwords: *n,
                        ..sdma::Indirect::default()
                    },
                )
                .map_err(|source| Error::Encode {
                    what: "the SDMA INDIRECT packet",
                    source,
                })?;
                Some(pkt)
            }
            None => None,
        };
        if let Some(a) = self.enc.aql.as_ref().filter(|a| !a.items.is_empty()) {
            if copy.is_some() && self.enc.internal_signals == 0 {
                return Err(Error::Protocol(
                    "graph on both queues without internal signals".into(),
                ));
            }
            let parts = aql_parts(a)?;
            // SAFETY (the contract): as below, the packets and PM4 bodies are the graph's
            // commands, copied into the ring; the copy IB is the graph's, not rewritten until
            // the value completes.
            let v = self
                .device
                .inner
                .submit_aql_graph(copy.as_ref().map(|p| &p[..]), &parts)?;
            self.last = Some(v);
            return Ok(v);
        }
        let compute = self.pm4.as_ref().map(|(buf, n)| (buf.va(), *n));
        let v = match (copy, compute) {
            (Some(pkt), Some((va, n))) => {
                if self.enc.internal_signals == 0 {
                    return Err(Error::Protocol(
                        "graph on both queues without internal signals".into(),
                    ));
                }
                // SAFETY: the IBs hold the graph's commands, whose addresses our caller vouches
                // for (this function's contract), plus waits and signals on the graph's own
                // internal signals; the IB memory is the graph's, not rewritten until `v`
                // completes (the next replay waits for it first).
                unsafe {
                    self.device
                        .submit_pair(|c| c.raw(&pkt), |c| c.indirect_buffer(va, n))?
                }
            }
            // SAFETY: as above, for the copy IB alone.
            (Some(pkt), None) => unsafe { self.device.submit_copy(|c| c.raw(&pkt))? },
            // As above, for the compute IB alone (the INDIRECT_BUFFER of `va`, `n`, encoded
            // at record time), written straight into the ring.
            (None, Some(_)) => self.device.inner.submit_compute_in_place(
                &self.pm4_ib,
                |_| Ok(()),
                |_, ()| Some(()),
            )?,
            (None, None) => {
                return Err(Error::InvalidArgument("replaying an empty graph".into()));
            }
        };
        self.last = Some(v);
        Ok(v)
    }
}

/// An AQL graph's compute part as the ring takes it: its PM4 bodies and packets, borrowed
/// from the (patched) image.
fn aql_parts(a: &super::AqlLayout) -> Result<Vec<AqlPart<'_>>> {
    let bad = || Error::Protocol("an AQL graph item outside its image".into());
    a.items
        .iter()
        .map(|it| match *it {
            // CAST (both arms): u32 -> usize widens.
            AqlItem::Pm4 { from, to } => a
                .image
                .get(from as usize..to as usize)
                .map(AqlPart::Pm4)
                .ok_or_else(bad),
            AqlItem::Dispatch { at } => a
                .image
                .get(at as usize..)
                .and_then(|s| s.first_chunk::<{ hcq_core::aql::PACKET_DWORDS }>())
                .map(AqlPart::Packet)
                .ok_or_else(bad),
        })
        .collect()
}

/// A dependency of one graph of a [`MultiGraph`] on an earlier one (usually on another
/// device): the waiting graph recorded a wait whose signal address and value are the
/// variables `signal` and `value`; each replay points them at the timeline value that
/// completes graph `on`'s replay (its signal changes when that device's timeline wraps).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dep {
    /// Index of the graph waited for (earlier in the list).
    pub on: usize,
    /// The waiting graph's signal-address variable.
    pub signal: super::VarId,
    /// The waiting graph's 32-bit wait-value variable.
    pub value: super::VarId,
}

/// Graphs on several devices replayed together, in order, each waiting on the GPU for the
/// replays it depends on (tinygrad's multi-GPU graphs: per-device queues, signals between
/// them). The host never waits for a device between the submissions.
#[derive(Debug)]
pub struct MultiGraph {
    parts: Vec<(Graph, Vec<Dep>)>,
}

impl MultiGraph {
    /// The graphs in replay order with their dependencies.
    ///
    /// # Errors
    /// A dependency on a later graph (or itself).
    pub fn new(parts: Vec<(Graph, Vec<Dep>)>) -> Result<Self> {
        for (i, (_, deps)) in parts.iter().enumerate() {
            if let Some(d) = deps.iter().find(|d| d.on >= i) {
                return Err(Error::InvalidArgument(format!(
                    "graph {i} depends on graph {}, which does not run before it",
                    d.on
                )));
            }
        }
        Ok(Self { parts })
    }

    /// The graphs.
    pub fn graphs(&self) -> impl Iterator<Item = &Graph> {
        self.parts.iter().map(|(g, _)| g)
    }

    /// Replays every graph with its values (`values[i]` for graph `i`; the dependency
    /// variables in it are overwritten). Returns each graph's timeline value.
    ///
    /// # Safety
    /// As [`Graph::replay`], for every graph.
    ///
    /// # Errors
    /// As [`Graph::replay`]; missing values for a graph.
    pub unsafe fn replay(
        &mut self,
        values: &mut [Vec<Option<Value>>],
    ) -> Result<Vec<TimelineValue>> {
        if values.len() < self.parts.len() {
            return Err(Error::InvalidArgument(format!(
                "values for {} graphs, the multi-graph has {}",
                values.len(),
                self.parts.len()
            )));
        }
        // Check everything before submitting anything (dependency variables aside).
        for ((graph, deps), vals) in self.parts.iter().zip(values.iter_mut()) {
            for d in deps {
                set_dep(graph, vals, d, None)?;
            }
            graph.enc.validate(vals).map_err(graph_err)?;
        }
        let mut done: Vec<(Device, TimelineValue)> = Vec::with_capacity(self.parts.len());
        for ((graph, deps), vals) in self.parts.iter_mut().zip(values.iter_mut()) {
            for d in deps.iter() {
                let target = done.get(d.on).and_then(|(dev, v)| dev.timeline_target(*v));
                set_dep(graph, vals, d, target)?;
            }
            // SAFETY: the caller upholds Graph::replay's contract for every graph.
            let v = unsafe { graph.replay(vals) }?;
            done.push((graph.device.clone(), v));
        }
        Ok(done.into_iter().map(|(_, v)| v).collect())
    }
}

/// Points a dependency's variables at `target` (signal, 32-bit value); `None` (complete by
/// construction, or only checking) waits for 0 on the signal the variable names now.
fn set_dep(
    graph: &Graph,
    vals: &mut [Option<Value>],
    d: &Dep,
    target: Option<(hcq_core::signal::SignalRef, u32)>,
) -> Result<()> {
    let cur = graph
        .enc
        .table
        .current()
        .get(d.signal.index())
        .copied()
        .ok_or_else(|| Error::InvalidArgument(format!("{} was not declared", d.signal)))?;
    let (sig, value) = match target {
        Some((s, v)) => (
            Value::Addr {
                addr: GpuVa(s.addr),
                bytes: 64,
            },
            v,
        ),
        None => (cur, 0),
    };
    for (var, v) in [(d.signal, sig), (d.value, Value::Scalar(value.into()))] {
        let slot = vals
            .get_mut(var.index())
            .ok_or_else(|| Error::InvalidArgument(format!("no value slot for dependency {var}")))?;
        *slot = Some(v);
    }
    Ok(())
}
