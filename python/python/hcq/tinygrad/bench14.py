"""`python -m hcq.bench` under tinygrad 0.14: the same two figures as under 0.9.1 (hcq/bench.py
documents them), measured through tinygrad 0.14's API.

- launch: `HCQProgram.__call__` (what 0.14's exec_kernel calls) of a small kernel, in batches
  between untimed synchronizations;
- JIT replay: a TinyJit function of `kernels` kernels captured as one HCQ graph; one replay is
  `HCQGraph.__call__(input_uops, var_vals)` (what 0.14's exec_graph calls), over `kernels`; the
  whole TinyJit call is reported beside it.

`python -m hcq.bench --vs-seed` under tinygrad 0.14: the seed's side is 0.14's own AMD backend
(its unmodified ops_amd.py) on hcq-sim, through the file interface `python -m hcq.mockgpu`
gives it ([`enable_seed`]); [`Side`] runs bench.py's workloads through 0.14's API.
"""
from __future__ import annotations

import os
import statistics
import sys
import time

from hcq.bench import _Side


def _small_kernel(dev_name: str):
  """(program, its hcq buffers, global size, local size) of `a * 2 + 1` on `dev_name`."""
  from tinygrad import Tensor
  from tinygrad.engine.realize import compile_linear, get_runtime, resolve_params
  from tinygrad.uop.ops import Ops
  a = Tensor.ones(256, device=dev_name).contiguous().realize()
  linear = compile_linear((a * 2 + 1).schedule_linear())
  call = [c for c in linear.src if c.src[0].op is Ops.PROGRAM][-1]
  ast = call.src[0]
  params = resolve_params(call, ())
  bufs = [params[i].buffer.ensure_allocated()._buf for i in ast.arg.globals]
  gs, ls = ast.arg.launch_dims({})
  return get_runtime(dev_name, ast), bufs, tuple(gs), tuple(ls or (1, 1, 1))


def launch_us(dev, dev_name: str, batch: int = 200, rounds: int = 15) -> float:
  prg, bufs, gs, ls = _small_kernel(dev_name)
  for _ in range(20): prg(*bufs, global_size=gs, local_size=ls)
  dev.synchronize()
  per = []
  for _ in range(rounds):
    t0 = time.perf_counter()
    for _ in range(batch): prg(*bufs, global_size=gs, local_size=ls)
    per.append((time.perf_counter() - t0) / batch * 1e6)
    dev.synchronize()
  return statistics.median(per)


def jit_graph(dev_name: str, kernels: int):
  """A TinyJit function of `kernels` kernels on `dev_name` captured as one graph:
  (the TinyJit function, its graph runner, the input tensor, the input uops a replay takes)."""
  from tinygrad import Tensor, TinyJit
  from tinygrad.engine.jit import GraphRunner
  from tinygrad.engine.realize import get_graph_runtime
  from tinygrad.uop.ops import Ops

  @TinyJit
  def f(x: Tensor) -> Tensor:
    for _ in range(kernels): x = (x + 1).realize()
    return x

  x = Tensor.zeros(256, device=dev_name).contiguous().realize()
  for _ in range(3): f(x)  # run, capture, first replay
  calls = list(f.captured.linear.src)
  runners = [get_graph_runtime(c.src[0]) if c.src[0].op is Ops.CUSTOM_FUNCTION and c.src[0].arg == "graph" else c.src[0].op for c in calls]
  if len(runners) != 1 or not isinstance(runners[0], GraphRunner):
    raise RuntimeError(f"the JIT made {len(runners)} batches, not one {dev_name} graph: {[type(r).__name__ for r in runners]}")
  return f, runners[0], x, (x.uop.base,)


def jit_replay_us_per_kernel(dev, dev_name: str, kernels: int = 100, rounds: int = 15) -> tuple[float, float]:
  """(graph replay, whole TinyJit call) host microseconds per kernel."""
  from hcq.tinygrad.graph14 import HCQGraph

  f, graph, x, inputs = jit_graph(dev_name, kernels)
  if not isinstance(graph, HCQGraph): raise RuntimeError(f"the JIT's graph is {type(graph).__name__}, not hcq's HCQGraph")

  def timed(call) -> float:
    per = []
    for _ in range(rounds):
      dev.synchronize()
      t0 = time.perf_counter()
      call()
      per.append((time.perf_counter() - t0) / kernels * 1e6)
    dev.synchronize()
    return statistics.median(per)
  return timed(lambda: graph(inputs, {})), timed(lambda: f(x))


# ---- --vs-seed: tinygrad 0.14's AMD backend through hcq.mockgpu, and HCQ -----------------------

def enable_seed() -> None:
  """What `python -m hcq.mockgpu` sets for tinygrad 0.14, in this process: HCQ_MOCKGPU_TG14=1, with
  which hcq's import hook (`_hcq_tinygrad_hook`, loaded by its .pth) makes 0.14's `FileIOInterface`
  hcq-sim's when `tinygrad.runtime.support.hcq` is imported; Linux 6.13's rules, as the hook's default.
  Must run before tinygrad's ops_amd.py is imported (it binds the class by name)."""
  if "tinygrad.runtime.ops_amd" in sys.modules:
    raise RuntimeError("tinygrad's ops_amd was imported before hcq.bench could put it on hcq-sim: run --vs-seed in a fresh process")
  os.environ.update(HCQ_MOCKGPU_TG14="1", HCQ_SIM_CLIENT="any")
  os.environ.setdefault("HCQ_SIM_KERNEL", "6.13")
  from hcq.mockgpu.tg14 import file_io_interface
  for name in ("tinygrad.runtime.support.hcq", "tinygrad.runtime.support.system"):  # imported already: swap it as the hook would
    if (mod := sys.modules.get(name)) is not None and hasattr(mod, "FileIOInterface"):
      mod.FileIOInterface = file_io_interface(mod.FileIOInterface)


class Side(_Side):
  """bench.py's workloads on one device, through tinygrad 0.14's API."""
  @staticmethod
  def _small_kernel(name: str): return _small_kernel(name)

  @staticmethod
  def _jit_graph(name: str, kernels: int): return jit_graph(name, kernels)

  @staticmethod
  def _inputs(t) -> tuple: return (t.uop.base,)

  def _alloc(self, size: int):
    from tinygrad.device import BufferSpec
    return self.dev.allocator.alloc(size, BufferSpec())

  def _copyin(self, buf, src: memoryview) -> None: self.dev.allocator._copyin(buf, src)

  def _copyout(self, dest: memoryview, buf) -> None: self.dev.allocator._copyout(dest, buf)

  # 0.14 has no requires_grad: backward fills .grad of every float tensor in the graph.
  @staticmethod
  def _weight(data, d: str):
    from tinygrad import Tensor
    return Tensor(data, device=d)

  @staticmethod
  def _zero_bias(shape: tuple, d: str):
    from tinygrad import Tensor
    return Tensor.zeros(*shape, device=d).contiguous()

  @staticmethod
  def _training():
    from tinygrad.helpers import Context
    return Context(TRAINING=1)
