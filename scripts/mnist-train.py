#!/usr/bin/env python3
"""A training loop of tinygrad's MNIST example model on synthetic data, for comparing devices.

  HCQ=1 python scripts/mnist-train.py [--steps 20] [--bs 8] [--json OUT.json] [--compare REF.json]
  python -m hcq.mockgpu -- python scripts/mnist-train.py ...      (the seed: tinygrad's AMD runtime)
  CLANG=1 python scripts/mnist-train.py --json ref.json            (tinygrad's CPU device)

The model is tinygrad 0.9.1's examples/beautiful_mnist.py `Model` (four convolutions, two
batch norms, two max-pools, a linear layer; copied below, as the example is not installed with
tinygrad), trained with Adam through a TinyJit step as the example does. What differs, so that
every device sees the same numbers: the data are synthetic (a fixed-seed numpy draw of 28x28
images and labels, no download), each step's batch is chosen by a fixed-seed numpy generator
(not Tensor.randint), and the initial weights are a fixed-seed numpy draw (uniform in
+-1/sqrt(fan_in), tinygrad's default range) rather than tinygrad's on-device RNG. The batch
defaults to 8 images, not the example's 512: the simulator interprets every GPU instruction on
the host (a 512-image step is ~20 G multiply-adds).

Prints one line per step (loss, wall seconds; the first step includes the JIT's capture and
compiles) and a summary; --json writes them; --compare checks the losses against another run's
JSON within --rtol (exit 1 when a loss differs more).
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time

import numpy as np
from tinygrad import Device, Tensor, TinyJit, nn


class Model:
  """tinygrad 0.9.1 examples/beautiful_mnist.py's model."""
  def __init__(self):
    self.layers = [
      nn.Conv2d(1, 32, 5), Tensor.relu,
      nn.Conv2d(32, 32, 5), Tensor.relu,
      nn.BatchNorm2d(32), Tensor.max_pool2d,
      nn.Conv2d(32, 64, 3), Tensor.relu,
      nn.Conv2d(64, 64, 3), Tensor.relu,
      nn.BatchNorm2d(64), Tensor.max_pool2d,
      lambda x: x.flatten(1), nn.Linear(576, 10)]

  def __call__(self, x: Tensor) -> Tensor: return x.sequential(self.layers)


def init_weights(model: Model, seed: int) -> None:
  """Every parameter from a fixed-seed numpy draw: weights and biases of convolutions and the
  linear layer uniform in +-1/sqrt(fan_in), batch-norm scales 1 and shifts 0."""
  rng = np.random.default_rng(seed)
  for name, t in sorted(nn.state.get_state_dict(model).items()):
    shape, layer = t.shape, model.layers[int(name.split(".")[1])]
    if isinstance(layer, nn.BatchNorm2d):
      # weight and running_var 1; bias, running_mean and num_batches_tracked 0.
      arr = np.ones(shape, np.float32) if name.endswith(("weight", "running_var")) else np.zeros(shape, np.float32)
    else:
      fan_in = int(np.prod(layer.weight.shape[1:]))
      bound = 1.0 / math.sqrt(fan_in)
      arr = rng.uniform(-bound, bound, size=shape).astype(np.float32)
    t.assign(Tensor(arr.astype(np.float32), dtype=t.dtype)).realize()


def main() -> int:
  ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  ap.add_argument("--steps", type=int, default=20)
  ap.add_argument("--bs", type=int, default=8, help="images per step (the example: 512)")
  ap.add_argument("--samples", type=int, default=256, help="synthetic training images")
  ap.add_argument("--seed", type=int, default=1337)
  ap.add_argument("--json", help="write the losses and times here")
  ap.add_argument("--compare", help="a JSON of another run: check the losses against it")
  ap.add_argument("--rtol", type=float, default=1e-3)
  ap.add_argument("--seed-wait", type=float, default=0, metavar="S",
                  help="on tinygrad's AMD device (the seed), wait S seconds for a signal instead of its fixed 10 s "
                       "(a simulated step's kernels take longer; as scripts/triage/seed_long_wait.py does for pytest)")
  a = ap.parse_args()
  if a.seed_wait and Device.DEFAULT == "AMD":
    import tinygrad.runtime.ops_amd as ops_amd
    orig = ops_amd.AMDDevice._wait_signal.__func__
    def wait_signal(cls, signal, value=0, timeout=10000): return orig(cls, signal, value, timeout=max(timeout, int(a.seed_wait * 1000)))
    ops_amd.AMDDevice._wait_signal = classmethod(wait_signal)

  rng = np.random.default_rng(a.seed)
  X = rng.standard_normal((a.samples, 1, 28, 28), dtype=np.float32)
  Y = rng.integers(0, 10, size=a.samples).astype(np.int32)
  batches = [rng.integers(0, a.samples, size=a.bs) for _ in range(a.steps)]

  model = Model()
  init_weights(model, a.seed + 1)
  opt = nn.optim.Adam(nn.state.get_parameters(model))

  @TinyJit
  def train_step(x: Tensor, y: Tensor) -> Tensor:
    with Tensor.train():
      opt.zero_grad()
      loss = model(x).sparse_categorical_crossentropy(y).backward()
      opt.step()
      return loss.realize()

  losses, times = [], []
  for i, idx in enumerate(batches):
    x, y = Tensor(X[idx]).realize(), Tensor(Y[idx]).realize()
    t0 = time.perf_counter()
    loss = train_step(x, y).item()
    dt = time.perf_counter() - t0
    losses.append(loss)
    times.append(dt)
    print(f"step {i:3d}  loss {loss:.6f}  {dt:8.3f} s", flush=True)
    if a.json:  # what has run so far, in case the run is cut short
      with open(a.json, "w") as f: json.dump({"device": Device.DEFAULT, "bs": a.bs, "seed": a.seed, "losses": losses, "step_s": times}, f)
  steady = times[3:] if len(times) > 3 else times
  result = {
    "device": Device.DEFAULT, "steps": a.steps, "bs": a.bs, "seed": a.seed, "losses": losses, "step_s": times,
    "median_step_s_after_jit": float(np.median(steady)), "total_s": float(sum(times)),
  }
  print(f"device {Device.DEFAULT}: {a.steps} steps of {a.bs} images, median step {result['median_step_s_after_jit']:.3f} s "
        f"(steps 3+, after the JIT's capture), total {result['total_s']:.1f} s, final loss {losses[-1]:.6f}")
  if a.json:
    with open(a.json, "w") as f: json.dump(result, f, indent=1)
  if a.compare:
    with open(a.compare) as f: ref = json.load(f)
    n = min(len(ref["losses"]), len(losses))
    worst = max(abs(p - q) / max(abs(q), 1e-12) for p, q in zip(losses[:n], ref["losses"][:n]))
    ok = n == len(losses) and all(math.isclose(p, q, rel_tol=a.rtol) for p, q in zip(losses, ref["losses"]))
    print(f"losses vs {ref['device']} ({a.compare}): {n} steps, largest relative difference {worst:.2e} "
          f"(rtol {a.rtol}): {'match' if ok else 'MISMATCH'}")
    if not ok: return 1
  return 0


if __name__ == "__main__":
  sys.exit(main())
