"""`python -m hcq.bench --json`: host-side cost of tinygrad on hcq, on the simulator.

- `tinygrad_launch_us`: host time per kernel launch through the HCQ device, from tinygrad's
  program call (`HCQProgram.__call__`, what `CompiledRunner` calls) to the doorbell: a loop of
  small kernels, timed in batches between untimed synchronizations (so no GPU time is counted).
- `tinygrad_jit_replay_us_per_kernel`: a TinyJit function of 100 kernels, captured as one hcq
  Graph (JIT_BATCH_SIZE is raised to 128 so the batch is not split); host time of one replay
  from the graph runner's call (`HCQGraph.__call__`, what TinyJit calls per batch) to the
  doorbell, over 100; each replay timed after an untimed synchronization.
- `tinygrad_jit_call_us_per_kernel` (information): the same for the whole TinyJit call,
  which adds tinygrad's own Python (input checks, buffer lookups) around the replay.
Budgets: launch <= 5 us, JIT replay <= 0.5 us per kernel.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time


def _small_kernel(dev_name: str):
  from tinygrad import Tensor
  from tinygrad.engine.realize import lower_schedule_item
  from tinygrad.engine.schedule import create_schedule
  a = Tensor.arange(256, device=dev_name).float().contiguous().realize()
  sched = create_schedule([(a * 2 + 1).lazydata])
  ei = lower_schedule_item(sched[-1])
  bufs = [b.ensure_allocated()._buf for b in ei.bufs]
  gs, ls = ei.prg.p.launch_dims({})
  return ei.prg.clprg, bufs, tuple(gs), tuple(ls)


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
  from hcq.tinygrad.ops_hcq import HCQGraph

  @TinyJit
  def f(x: Tensor) -> Tensor:
    for _ in range(kernels): x = (x + 1).realize()
    return x

  x = Tensor.zeros(256, device=dev_name).contiguous().realize()
  for _ in range(3): f(x)  # run, capture, first replay
  runners = [ji.prg for ji in f.jit_cache]
  if len(runners) != 1 or not isinstance(runners[0], HCQGraph):
    raise RuntimeError(f"the JIT made {len(runners)} batches, not one HCQ graph: {[type(r).__name__ for r in runners]}")
  graph, inputs = runners[0], [x.lazydata.base.realized]

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


def main(argv=None) -> int:
  ap = argparse.ArgumentParser(prog="python -m hcq.bench", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  ap.add_argument("--json", action="store_true", help="print one JSON object")
  args = ap.parse_args(argv)
  os.environ.setdefault("JIT_BATCH_SIZE", "128")
  from tinygrad import Device
  dev = Device["HCQ"]
  res = {
    "target": dev.arch,
    "backend": dev.dev.kfd.backend,
    "tinygrad_launch_us": round(launch_us(dev, "HCQ"), 3),
  }
  replay, call = jit_replay_us_per_kernel(dev, "HCQ")
  res["tinygrad_jit_replay_us_per_kernel"] = round(replay, 3)
  res["tinygrad_jit_call_us_per_kernel"] = round(call, 3)
  res["budgets"] = {"tinygrad_launch_us": 5.0, "tinygrad_jit_replay_us_per_kernel": 0.5}
  res["within_budget"] = res["tinygrad_launch_us"] <= 5.0 and res["tinygrad_jit_replay_us_per_kernel"] <= 0.5
  if args.json: print(json.dumps(res))
  else:
    for k, v in res.items(): print(f"{k}: {v}")
  return 0


if __name__ == "__main__":
  sys.exit(main())
