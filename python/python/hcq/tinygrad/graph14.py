"""tinygrad 0.14's JIT graph on hcq: a batch of kernels as hcq Graphs replayed in Rust.

tinygrad 0.14 hands a graph runner the batch (`linear`, a LINEAR of CALLs) and, at each replay,
the input UOps and string-keyed variable values. `GraphRunner.__init__` has worked out which
call arguments are inputs (`uop_replace`: call position -> input slot), which kernel values are
variables (`vars`), and which launch dims are symbolic (`launch_dims_replace`).

hcq records one hcq Graph per GPU of the batch (a kernel touches its own GPU's buffers, so the
GPUs' parts are independent): each input buffer (each GPU's buffer of a multi-device input) is
a buffer variable, each variable a scalar variable keyed by its name, each symbolic launch a
dims variable. A replay gathers the input buffers (one list comprehension) and calls
`hcq.GraphCall` (Rust), which patches and submits each GPU's graph with no further Python.
Copies stay outside the graph (`supports_uop` takes kernels only), as in hcq's 0.9.1 graph.
"""
from __future__ import annotations

from typing import Any

import hcq
from tinygrad.device import Device, MultiBuffer
from tinygrad.engine.jit import GraphException, GraphRunner, MultiGraphRunner
from tinygrad.uop.ops import Ops, UOp


class _DevicePart(hcq.GraphCall):
  """One GPU's hcq Graph, bound: `part(buffers, var_vals, wait)` replays it (Rust)."""


class _DimsOf:
  """`launch_dims(var_vals)` of one kernel as hcq's dims variable takes it: (groups, block)."""
  __slots__ = ("p",)

  def __init__(self, p): self.p = p

  def launch_dims(self, var_vals):
    g, l = self.p.launch_dims(var_vals)
    return g, (l if l is not None else (1, 1, 1))


class HCQGraph(GraphRunner):
  """A JIT batch of HCQ kernels on one or more HCQ GPUs as hcq Graphs (one per GPU)."""
  def __init__(self, linear: UOp, input_uops: tuple[UOp, ...] = ()):
    super().__init__(linear, input_uops)
    # (input slot, device index in a multi-device input) of each buffer variable, in order.
    self.input_pairs: list[tuple[int, int]] = []
    builders: dict[Any, tuple[hcq.GraphBuilder, dict, dict, list]] = {}
    try:
      for j, ((dev_idx, ast, bufs, device_vars), runtime) in enumerate(zip(self.calls, self.runtimes)):
        if ast.op is not Ops.PROGRAM or runtime is None: raise GraphException("HCQ graphs hold kernels only")
        p = ast.arg
        dev = runtime.device
        if dev not in builders: builders[dev] = (hcq.GraphBuilder(dev.dev), {}, {}, [])
        b, inputs, values, dims = builders[dev]
        replace = dict(self.uop_replace[j])
        args: list[Any] = []
        for pos in p.globals:
          if (slot := replace.get(pos)) is not None:
            key = (slot, dev_idx)
            if key not in inputs:
              if key not in self.input_pairs: self.input_pairs.append(key)
              inputs[key] = b.buffer(bufs[pos].get_buf(dev.device))
            args.append(inputs[key])
          else: args.append(bufs[pos].get_buf(dev.device))
        fixed = {**device_vars, **{k: 0 for k in p.runtimevars}}
        for v in p.vars:
          if v.expr in fixed: args.append(fixed[v.expr])
          else:
            if v.expr not in values: values[v.expr] = b.scalar(self._initial(v.expr))
            args.append(values[v.expr])
        if j in self.launch_dims_replace:
          g, l = _DimsOf(p).launch_dims(self._initial_vals())
          dv = b.dims(g, l)
          dims.append((_DimsOf(p), dv))
          b.launch(runtime.prg, args, dv)
        else:
          b.launch(runtime.prg, args, (p.global_size or (1, 1, 1), p.local_size or (1, 1, 1)))
      self.parts: list[_DevicePart] = []
      for b, inputs, values, dims in builders.values():
        g = b.record()
        part = _DevicePart()
        part.bind(g, [(self.input_pairs.index(k), var.index) for k, var in inputs.items()],
                  [(name, var.index) for name, var in values.items()], [(o, var.index) for o, var in dims], "_buf")
        self.parts.append(part)
    except hcq.HcqError as e: raise GraphException(str(e)) from e
    self._one = self.parts[0] if len(self.parts) == 1 else None

  def _initial_vals(self) -> dict[str, int]:
    # The values the batch was captured with are not kept by GraphRunner; any in-range value
    # records the same commands (each replay patches variables and dims before submitting).
    return {v: self._initial(v) for v in self.vars}

  def _initial(self, name: str) -> int:
    for _, _, _, dv in self.calls:
      if name in dv: return dv[name]
    for call in self.linear.src:
      for v in call.src[0].arg.vars if call.src[0].op is Ops.PROGRAM else ():
        if v.expr == name: return int(v.vmin)
    return 0

  def __call__(self, input_uops: tuple[UOp, ...], var_vals: dict[str, int], wait: bool = False) -> float | None:
    bufs = [(b.bufs[d] if isinstance(b := input_uops[i].buffer, MultiBuffer) else b) for i, d in self.input_pairs]
    if self._one is not None: return self._one(bufs, var_vals, wait)
    ts = [part(bufs, var_vals, wait) for part in self.parts]
    return max(ts) if wait else None

  @staticmethod
  def supports_uop(batch_devs, new_call: UOp) -> bool:
    # Kernels only (copies stay outside), on HCQ GPUs only, any number of them.
    from hcq.tinygrad.ops_hcq14 import HCQDevice
    return new_call.src[0].op is Ops.PROGRAM and \
      all(isinstance(d, HCQDevice) for d in MultiGraphRunner._all_devs(batch_devs, new_call))


__all__ = ["HCQGraph", "Device"]
