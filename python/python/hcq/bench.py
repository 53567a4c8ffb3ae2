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

`python -m hcq.bench --vs-seed --json`: the same tinygrad workloads on `AMD` (tinygrad 0.9.1's
own ops_amd.py, the seed, through hcq.mockgpu) and on `HCQ`, in one process, on the same
simulated GPU model (HCQ_SIM_TARGET; two simulator instances: a process has one DRM file per
GPU VM, so two runtimes cannot share one GPU's VM, on hardware either), in the same simulator
mode: threaded, each simulated GPU on a thread of its own beside the host, as a GPU runs (the
seed's instance is always threaded: it rings doorbells with plain stores, which only a GPU
thread polling them sees; `sim_mode` in the output). `--deterministic` also times hcq alone
with its GPU run inside the host's waits (keys `hcq_deterministic_<name>`, labelled: no seed
figure is comparable to them).
Under tinygrad 0.14 (`tinygrad_version` in the output), `AMD` is 0.14's own ops_amd.py, the
seed's descendant, on hcq-sim through the file interface `python -m hcq.mockgpu` gives it
(HCQ_MOCKGPU_TG14=1, turned on in this process before tinygrad's runtime is imported; Linux 6.13's
queue rules, the hook's default for 0.14), and `HCQ` is hcq's 0.14 device (ops_hcq14.py); the
workloads, keys and rounds are the same (hcq/tinygrad/bench14.py spells them in 0.14's API).
Each round runs one batch of every figure on each side, alternating (seed, hcq, seed, hcq,
...); a round's ratio is taken within the round. For each figure: `seed_<name>` and
`hcq_<name>` (medians over the rounds), `hcq_over_seed_<name>` (the median of the per-round
ratios; above 1 where hcq is faster: the seed's time over hcq's, or hcq's throughput over the
seed's) and `hcq_over_seed_<name>_spread` (`[min, max]` of those ratios):
- `launch` (us): host time per kernel launch from tinygrad's program call to the doorbell;
- `jit_replay` (us per kernel): a TinyJit batch of 100 kernels replayed by the device's graph
  with the inputs it was captured with (median of 25 replays per batch, each after a
  synchronization): a replay with unchanged values;
- `jit_replay_changed` (us per kernel): the same, each replay with another input buffer than
  the replay before (two realized tensors in turn): a replay that patches;
- `copy_in` / `copy_out` (GB/s): the allocator's copyin / copyout of 16 MiB, waited for;
- `train_step` (ms): one step of a 3-layer MLP (forward, backward, SGD update, realized).
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


def _jit_graph(dev_name: str, kernels: int):
  """A TinyJit function of `kernels` kernels captured as one graph: (f, graph runner, x, inputs)."""
  from tinygrad import Tensor, TinyJit
  from tinygrad.engine.jit import GraphRunner

  @TinyJit
  def f(x: Tensor) -> Tensor:
    for _ in range(kernels): x = (x + 1).realize()
    return x

  x = Tensor.zeros(256, device=dev_name).contiguous().realize()
  for _ in range(3): f(x)  # run, capture, first replay
  runners = [ji.prg for ji in f.jit_cache]
  if len(runners) != 1 or not isinstance(runners[0], GraphRunner):
    raise RuntimeError(f"the JIT made {len(runners)} batches, not one {dev_name} graph: {[type(r).__name__ for r in runners]}")
  return f, runners[0], x, [x.lazydata.base.realized]


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


# ---- --vs-seed: the seed (AMD through hcq.mockgpu) and HCQ side by side -----------------------

def _enable_seed() -> None:
  """What `python -m hcq.mockgpu` sets, in this process (before tinygrad's ops_amd is imported)."""
  from hcq.mockgpu import path_dir
  os.environ.update(MOCKGPU="1", HCQ_MOCKGPU_COMPILER="1", HCQ_SIM_CLIENT="any")
  os.environ.setdefault("HCQ_SIM_KERNEL", "6.8")
  if path_dir() not in sys.path: sys.path.insert(0, path_dir())


class _Side:
  """One device's workloads, each run as a batch that returns its figure (tinygrad 0.9.1's API;
  hcq.tinygrad.bench14.Side overrides the few calls 0.14 spells otherwise)."""
  def __init__(self, name: str, kernels: int = 100):
    from tinygrad import Device
    self.name, self.dev = name, Device[name]
    self.prg, self.bufs, self.gs, self.ls = self._small_kernel(name)
    for _ in range(20): self.prg(*self.bufs, global_size=self.gs, local_size=self.ls)
    self.dev.synchronize()
    self.kernels = kernels
    self.jit, self.graph, self.x, self.inputs = self._jit_graph(name, kernels)
    from tinygrad import Tensor
    self.x2 = Tensor.zeros(256, device=name).contiguous().realize()
    self.inputs2 = self._inputs(self.x2)
    self.copy_size = 16 << 20
    self.copy_buf = self._alloc(self.copy_size)
    self.host = memoryview(bytearray(os.urandom(1 << 16)) * (self.copy_size >> 16))
    self.host_out = memoryview(bytearray(self.copy_size))
    self._train_setup()

  # ---- what tinygrad 0.14 spells otherwise (hcq.tinygrad.bench14.Side) ----
  @staticmethod
  def _small_kernel(name: str): return _small_kernel(name)

  @staticmethod
  def _jit_graph(name: str, kernels: int): return _jit_graph(name, kernels)

  @staticmethod
  def _inputs(t) -> list: return [t.lazydata.base.realized]

  def _alloc(self, size: int):
    from tinygrad.device import BufferOptions
    return self.dev.allocator.alloc(size, BufferOptions())

  def _copyin(self, buf, src: memoryview) -> None: self.dev.allocator.copyin(buf, src)

  def _copyout(self, dest: memoryview, buf) -> None: self.dev.allocator.copyout(dest, buf)

  @staticmethod
  def _weight(data, d: str):
    from tinygrad import Tensor
    return Tensor(data, device=d, requires_grad=True)

  @staticmethod
  def _zero_bias(shape: tuple, d: str):
    from tinygrad import Tensor
    return Tensor.zeros(*shape, device=d, requires_grad=True).contiguous()

  @staticmethod
  def _training():
    from tinygrad import Tensor
    return Tensor.train()

  # ---- the figures ----
  def launch_us(self, batch: int = 200) -> float:
    t0 = time.perf_counter()
    for _ in range(batch): self.prg(*self.bufs, global_size=self.gs, local_size=self.ls)
    t = (time.perf_counter() - t0) / batch * 1e6
    self.dev.synchronize()
    return t

  def jit_replay_us(self, replays: int = 25, changed: bool = False) -> float:
    per = []
    for i in range(replays):  # each replay after a synchronization: no GPU time counted
      inputs = self.inputs2 if changed and i % 2 == 0 else self.inputs
      self.dev.synchronize()
      t0 = time.perf_counter()
      self.graph(inputs, {})
      per.append((time.perf_counter() - t0) / self.kernels * 1e6)
    self.dev.synchronize()
    return statistics.median(per)

  def jit_replay_changed_us(self) -> float:
    # 25 replays, odd: the batch starts and ends on another input than the last batch's end.
    return self.jit_replay_us(changed=True)

  def copy_in_gbps(self) -> float:
    self.dev.synchronize()
    t0 = time.perf_counter()
    self._copyin(self.copy_buf, self.host)
    self.dev.synchronize()
    return self.copy_size / (time.perf_counter() - t0) / 1e9

  def copy_out_gbps(self) -> float:
    self.dev.synchronize()
    t0 = time.perf_counter()
    self._copyout(self.host_out, self.copy_buf)
    return self.copy_size / (time.perf_counter() - t0) / 1e9

  def _train_setup(self) -> None:
    from tinygrad import Tensor, nn
    rng = __import__("numpy").random.default_rng(0)
    d = self.name
    self.layers = [nn.Linear(64, 128), nn.Linear(128, 128), nn.Linear(128, 10)]
    for l in self.layers:
      l.weight = self._weight(rng.standard_normal(l.weight.shape).astype("float32") * 0.1, d)
      l.bias = self._zero_bias(l.bias.shape, d)
    self.opt = nn.optim.SGD([p for l in self.layers for p in (l.weight, l.bias)], lr=0.01)
    self.xs = Tensor(rng.standard_normal((32, 64)).astype("float32"), device=d)
    self.ys = Tensor(rng.integers(0, 10, 32).astype("int32"), device=d)
    for _ in range(2): self.train_step_ms()

  def train_step_ms(self) -> float:
    self.dev.synchronize()
    t0 = time.perf_counter()
    with self._training():
      self.opt.zero_grad()
      h = self.xs
      for i, l in enumerate(self.layers): h = l(h).relu() if i < len(self.layers) - 1 else l(h)
      loss = h.sparse_categorical_crossentropy(self.ys)
      loss.backward()
      self.opt.step()
    loss.numpy()
    self.dev.synchronize()
    return (time.perf_counter() - t0) * 1e3


FIGURES = {"launch": ("launch_us", False, "us"), "jit_replay": ("jit_replay_us", False, "us_per_kernel"),
           "jit_replay_changed": ("jit_replay_changed_us", False, "us_per_kernel"),
           "copy_in": ("copy_in_gbps", True, "gbps"), "copy_out": ("copy_out_gbps", True, "gbps"),
           "train_step": ("train_step_ms", False, "ms")}


def _spread(xs: list) -> list:
  return [round(min(xs), 4), round(max(xs), 4)]


def _side_class() -> type:
  """The workloads through the installed tinygrad's API (0.9.1 here, 0.14 in hcq.tinygrad.bench14)."""
  from hcq.tinygrad import _version
  if _version.series() == "0.14":
    from hcq.tinygrad.bench14 import Side
    return Side
  if _version.series() is None: raise SystemExit(_version.unsupported_message())
  return _Side


def _default_hcq() -> None:
  """Tensors made without a device land on HCQ (then move where asked)."""
  from hcq.tinygrad import _version
  if _version.series() == "0.14":
    os.environ["DEV"] = "HCQ"  # 0.14 reads DEV when tinygrad is imported (else it probes CPU, which needs clang)
    return
  from tinygrad import Device
  Device.DEFAULT = "HCQ"


def vs_seed(rounds: int = 7, deterministic: bool = False) -> dict:
  """The side-by-side figures (see the module doc)."""
  from hcq.tinygrad import _version
  side = _side_class()
  if _version.series() == "0.14":
    from hcq.tinygrad.bench14 import enable_seed
    enable_seed()
  else: _enable_seed()
  # hcq's simulator threaded, as the seed's is (hcq.kfd() reads it when HCQ first opens).
  os.environ["HCQ_SIM_THREADED"] = "1"
  _default_hcq()
  sides = {"seed": side("AMD"), "hcq": side("HCQ")}
  samples: dict = {(w, k): [] for k in FIGURES for w in sides}
  ratios: dict = {k: [] for k in FIGURES}
  for _ in range(rounds):  # alternating batches: seed, hcq, seed, hcq, ...
    for key, (method, higher_better, _) in FIGURES.items():
      got = {}
      for who, side in sides.items():
        got[who] = getattr(side, method)()
        samples[(who, key)].append(got[who])
      ratios[key].append(got["hcq"] / got["seed"] if higher_better else got["seed"] / got["hcq"])
  res: dict = {"tinygrad_version": _version.tinygrad_version(), "target": sides["hcq"].dev.arch, "rounds": rounds, "sim_mode": "threaded",
               "date": time.strftime("%Y-%m-%d", time.gmtime()), "cpus": os.cpu_count(),
               "load_average": [round(x, 2) for x in os.getloadavg()]}
  for key, (_, _, unit) in FIGURES.items():
    for who in sides:
      xs = samples[(who, key)]
      res[f"{who}_{key}_{unit}"] = round(statistics.median(xs), 4)
      res[f"{who}_{key}_{unit}_spread"] = _spread(xs)
    res[f"hcq_over_seed_{key}"] = round(statistics.median(ratios[key]), 3)
    res[f"hcq_over_seed_{key}_spread"] = [round(min(ratios[key]), 3), round(max(ratios[key]), 3)]
  if deterministic: res.update(_deterministic(rounds))
  res["goal"] = {"hcq_over_seed_launch": 10.0, "hcq_over_seed_jit_replay": 10.0}
  res["goal_met"] = res["hcq_over_seed_launch"] >= 10.0 and res["hcq_over_seed_jit_replay"] >= 10.0
  return res


def _deterministic(rounds: int) -> dict:
  """hcq alone with its GPU run inside the host's waits (labelled keys), in a process of its own
  (the mode is chosen when HCQ first opens)."""
  import subprocess
  env = dict(os.environ, HCQ_SIM_THREADED="0")
  for k in ("MOCKGPU", "HCQ_MOCKGPU_COMPILER", "HCQ_MOCKGPU_TG14", "HCQ_SIM_CLIENT"): env.pop(k, None)
  out = subprocess.run([sys.executable, "-m", "hcq.bench", "--hcq-alone", "--rounds", str(rounds)], env=env, check=True,
                       capture_output=True, text=True).stdout
  return {f"hcq_deterministic_{k}": v for k, v in json.loads(out.strip().splitlines()[-1]).items()}


def hcq_alone(rounds: int) -> dict:
  """Every --vs-seed figure on HCQ alone, in the simulator mode the environment chose."""
  side_class = _side_class()
  _default_hcq()
  side = side_class("HCQ")
  res: dict = {}
  for key, (method, _, unit) in FIGURES.items():
    xs = [getattr(side, method)() for _ in range(rounds)]
    res[f"{key}_{unit}"] = round(statistics.median(xs), 4)
    res[f"{key}_{unit}_spread"] = _spread(xs)
  return res


def main(argv=None) -> int:
  ap = argparse.ArgumentParser(prog="python -m hcq.bench", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  ap.add_argument("--json", action="store_true", help="print one JSON object")
  ap.add_argument("--vs-seed", action="store_true", help="the seed (tinygrad's AMD on hcq-sim) and HCQ side by side")
  ap.add_argument("--rounds", type=int, default=9, help="--vs-seed: rounds (alternating batches of every figure)")
  ap.add_argument("--deterministic", action="store_true",
                  help="--vs-seed: also time hcq alone with its GPU run inside the host's waits (labelled keys)")
  ap.add_argument("--hcq-alone", action="store_true", help=argparse.SUPPRESS)
  args = ap.parse_args(argv)
  os.environ.setdefault("JIT_BATCH_SIZE", "128")
  if args.hcq_alone:
    print(json.dumps(hcq_alone(args.rounds)))
    return 0
  if args.vs_seed:
    res = vs_seed(args.rounds, args.deterministic)
    if args.json: print(json.dumps(res))
    else:
      for k, v in res.items(): print(f"{k}: {v}")
    return 0
  # tinygrad 0.9.1 or 0.14.x: the same figures and keys, measured through that version's API.
  from hcq.tinygrad import _version
  launch, jit_replay = launch_us, jit_replay_us_per_kernel
  if _version.series() == "0.14":
    os.environ.setdefault("DEV", "HCQ")  # 0.14's default device (else it probes CPU, which needs clang)
    from hcq.tinygrad.bench14 import jit_replay_us_per_kernel as jit_replay, launch_us as launch
  elif _version.series() is None: raise SystemExit(_version.unsupported_message())
  from tinygrad import Device
  dev = Device["HCQ"]
  res = {
    "tinygrad_version": _version.tinygrad_version(),
    "target": dev.arch,
    "backend": dev.dev.kfd.backend,
    "tinygrad_launch_us": round(launch(dev, "HCQ"), 3),
  }
  replay, call = jit_replay(dev, "HCQ")
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
