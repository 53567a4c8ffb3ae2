"""tinygrad 0.14's JIT graph on hcq: a batch of kernels and copies as hcq Graphs replayed in Rust.

tinygrad 0.14 hands a graph runner the batch (`linear`, a LINEAR of CALLs) and, at each replay,
the input UOps and string-keyed variable values. `GraphRunner.__init__` has worked out which
call arguments are inputs (`uop_replace`: call position -> input slot), which kernel values are
variables (`vars`), and which launch dims are symbolic (`launch_dims_replace`).

hcq records the batch as phases of hcq Graphs, one Graph per GPU of a phase:
- a kernel goes to its GPU's Graph; a copy between buffers of one GPU too (copy queue, ordered
  with the kernels around it);
- a copy between two GPUs (tinygrad 0.14 puts these in graphs) is recorded on the destination
  GPU's copy queue, reading the source GPU's buffer mapped there (the peer copy of the seed's
  descendant); it starts a phase, which then takes only that GPU's work, and the phase after it
  starts anew. A replay submits the phases in order; before a phase it waits (host) for the GPUs
  of the phase before and for a copy's source GPU, since hcq Graphs of different GPUs do not
  wait for each other;
- each input buffer (each GPU's buffer of a multi-device input) is a buffer variable, each
  variable a scalar variable keyed by its name, each symbolic launch a dims variable.
A replay of a one-phase batch (any batch without copies between GPUs) gathers the input buffers
with one list comprehension and calls `hcq.GraphCall` (Rust) for each GPU's Graph: patching and
submission run no Python.
"""
from __future__ import annotations

from typing import Any

import hcq
from tinygrad.device import Device, MultiBuffer
from tinygrad.engine.jit import GraphException, GraphRunner, MultiGraphRunner
from tinygrad.engine.realize import get_call_arg_uops
from tinygrad.uop.ops import Ops, UOp


class _DevicePart(hcq.GraphCall):
  """One GPU's hcq Graph of one phase, bound: `part(buffers, var_vals, wait)` replays it (Rust)."""


class _DimsOf:
  """`launch_dims(var_vals)` of one kernel as hcq's dims variable takes it: (groups, block)."""
  __slots__ = ("p",)

  def __init__(self, p): self.p = p

  def launch_dims(self, var_vals):
    g, l = self.p.launch_dims(var_vals)
    return g, (l if l is not None else (1, 1, 1))


class _Recording:
  """One GPU's GraphBuilder of one phase and what its variables stand for."""
  def __init__(self, dev):
    self.dev, self.b = dev, hcq.GraphBuilder(dev.dev)
    self.inputs: dict[tuple[int, int], Any] = {}
    self.values: dict[str, Any] = {}
    self.dims: list[tuple[_DimsOf, Any]] = []


class HCQGraph(MultiGraphRunner):
  """A JIT batch of HCQ kernels and copies on one or more HCQ GPUs as hcq Graphs."""
  def __init__(self, linear: UOp, input_uops: tuple[UOp, ...] = ()):
    super().__init__(linear, input_uops)
    # (input slot, device index in a multi-device input) of each buffer variable, in order.
    self.input_pairs: list[tuple[int, int]] = []
    # (input pair index, hcq Device) for inputs another GPU's Graph reads: mapped at each replay.
    self.remote_inputs: list[tuple[int, Any]] = []
    phases: list[dict[Any, _Recording]] = [{}]
    restricted: list[Any] = [None]  # a phase holding a copy between GPUs takes only its GPU's work
    copy_srcs: list[set] = [set()]
    try:
      for j, ((dev_idx, ast, bufs, device_vars), runtime) in enumerate(zip(self.calls, self.runtimes)):
        if ast.op is Ops.PROGRAM and runtime is not None: rdev, cross = runtime.device, None
        elif ast.op is Ops.COPY:
          rdev, src_dev = Device[bufs[0].device], Device[bufs[1].device]
          cross = src_dev if src_dev is not rdev else None
        else: raise GraphException(f"HCQ graphs hold kernels and copies, not {ast.op}")
        if cross is not None or (restricted[-1] is not None and restricted[-1] is not rdev):
          if phases[-1]: phases.append({}); restricted.append(None); copy_srcs.append(set())
          if cross is not None: restricted[-1] = rdev; copy_srcs[-1].add(cross)
        rec = phases[-1].setdefault(rdev, _Recording(rdev))
        replace = dict(self.uop_replace[j])

        def arg(pos: int, rec=rec, replace=replace, bufs=bufs, dev_idx=dev_idx) -> Any:
          buf, owner = bufs[pos], Device[bufs[pos].device]
          hb = buf._buf if owner is rec.dev else buf.get_buf(rec.dev.device)  # get_buf maps it here
          if (slot := replace.get(pos)) is None: return hb
          key = (slot, dev_idx)
          if key not in self.input_pairs: self.input_pairs.append(key)
          if owner is not rec.dev and (self.input_pairs.index(key), rec.dev.dev) not in self.remote_inputs:
            self.remote_inputs.append((self.input_pairs.index(key), rec.dev.dev))
          if key not in rec.inputs: rec.inputs[key] = rec.b.buffer(hb)
          return rec.inputs[key]

        if ast.op is Ops.COPY:
          rec.b.copy(arg(0), arg(1), bufs[0].nbytes)
          continue
        p = ast.arg
        args: list[Any] = [arg(pos) for pos in p.globals]
        fixed = {**device_vars, **{k: 0 for k in p.runtimevars}}
        for v in p.vars:
          if v.expr in fixed: args.append(fixed[v.expr])
          else:
            if v.expr not in rec.values: rec.values[v.expr] = rec.b.scalar(self._initial(v.expr))
            args.append(rec.values[v.expr])
        if j in self.launch_dims_replace:
          g, l = _DimsOf(p).launch_dims({**{v: self._initial(v) for v in self.vars}, **{v.expr: self._initial(v.expr) for v in p.vars}, **fixed})
          dv = rec.b.dims(tuple(max(1, int(x)) for x in g), tuple(max(1, int(x)) for x in l))
          rec.dims.append((_DimsOf(p), dv))
          rec.b.launch(runtime.prg, args, dv)
        else: rec.b.launch(runtime.prg, args, (p.global_size or (1, 1, 1), p.local_size or (1, 1, 1)))
      # phases[k]: its parts, and the devices to wait for before submitting it.
      self.phases: list[tuple[list[_DevicePart], list[Any]]] = []
      prev: list[Any] = []
      for ph, srcs in zip(phases, copy_srcs):
        parts = []
        for rec in ph.values():
          part = _DevicePart()
          part.bind(rec.b.record(), [(self.input_pairs.index(k), var.index) for k, var in rec.inputs.items()],
                    [(name, var.index) for name, var in rec.values.items()], [(o, var.index) for o, var in rec.dims], "_buf")
          parts.append(part)
        devs = list(ph)
        waits = [d for d in prev if not (len(devs) == 1 and d is devs[0])] + [s for s in srcs if s not in devs]
        self.phases.append((parts, list({id(d): d for d in waits}.values())))
        prev = devs
    except hcq.HcqError as e: raise GraphException(str(e)) from e
    self._parts = self.phases[0][0] if len(self.phases) == 1 and not self.phases[0][1] and not self.remote_inputs else None
    self._one = self._parts[0] if self._parts is not None and len(self._parts) == 1 else None

  def _initial(self, name: str) -> int:
    """A value to record variable `name` with (each replay patches it before submitting)."""
    for _, _, _, dv in self.calls:
      if name in dv: return dv[name]
    for _, ast, _, _ in self.calls:
      for v in ast.arg.vars if ast.op is Ops.PROGRAM else ():
        if v.expr == name: return max(int(v.vmin), 1)
    return 0

  def __call__(self, input_uops: tuple[UOp, ...], var_vals: dict[str, int], wait: bool = False) -> float | None:
    bufs = [(b.bufs[d] if isinstance(b := input_uops[i].buffer, MultiBuffer) else b) for i, d in self.input_pairs]
    if self._one is not None: return self._one(bufs, var_vals, wait)
    if self._parts is not None:
      ts = [part(bufs, var_vals, wait) for part in self._parts]
      return max(ts) if wait else None
    for i, dev in self.remote_inputs: bufs[i]._buf.map_to(dev)
    ts = []
    for parts, waits in self.phases:
      for d in waits: d.synchronize()
      ts += [part(bufs, var_vals, wait) for part in parts]
    return sum(t for t in ts if t is not None) if wait else None

  @staticmethod
  def supports_uop(batch_devs, new_call: UOp) -> bool:
    # Kernels whose buffers are all on their own GPU(s), and copies between HCQ GPUs.
    from hcq.tinygrad.ops_hcq14 import HCQDevice
    if not all(isinstance(d, HCQDevice) for d in MultiGraphRunner._all_devs(batch_devs, new_call)): return False
    if new_call.src[0].op is Ops.COPY:  # an input (PARAM) is a buffer variable in the graph
      return all(d.graph_copies for d in MultiGraphRunner._all_devs(batch_devs, new_call)) or \
        not any(b.op is Ops.PARAM for b in get_call_arg_uops(new_call))
    return new_call.src[0].op is Ops.PROGRAM and len({b.device for b in get_call_arg_uops(new_call)}) == 1


__all__ = ["HCQGraph"]
