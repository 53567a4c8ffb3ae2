"""`python -m hcq.bench` under tinygrad 0.14: the same two figures as under 0.9.1 (hcq/bench.py
documents them), measured through tinygrad 0.14's API.

- launch: `HCQProgram.__call__` (what 0.14's exec_kernel calls) of a small kernel, in batches
  between untimed synchronizations;
- JIT replay: a TinyJit function of `kernels` kernels captured as one HCQ graph; one replay is
  `HCQGraph.__call__(input_uops, var_vals)` (what 0.14's exec_graph calls), over `kernels`; the
  whole TinyJit call is reported beside it.
"""
from __future__ import annotations

import statistics
import time


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


def jit_replay_us_per_kernel(dev, dev_name: str, kernels: int = 100, rounds: int = 15) -> tuple[float, float]:
  """(graph replay, whole TinyJit call) host microseconds per kernel."""
  from tinygrad import Tensor, TinyJit
  from tinygrad.engine.realize import get_graph_runtime
  from tinygrad.uop.ops import Ops
  from hcq.tinygrad.graph14 import HCQGraph

  @TinyJit
  def f(x: Tensor) -> Tensor:
    for _ in range(kernels): x = (x + 1).realize()
    return x

  x = Tensor.zeros(256, device=dev_name).contiguous().realize()
  for _ in range(3): f(x)  # run, capture, first replay
  calls = list(f.captured.linear.src)
  runners = [get_graph_runtime(c.src[0]) if c.src[0].op is Ops.CUSTOM_FUNCTION and c.src[0].arg == "graph" else c.src[0].op for c in calls]
  if len(runners) != 1 or not isinstance(runners[0], HCQGraph):
    raise RuntimeError(f"the JIT made {len(runners)} batches, not one HCQ graph: {[type(r).__name__ for r in runners]}")
  graph, inputs = runners[0], (x.uop.base,)

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
