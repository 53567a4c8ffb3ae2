"""Regenerates the tinygrad kernels of `sim_isa_tinygrad_lane_instr_per_s` (see README.md here).

tinygrad 0.9.1 schedules a matmul, a conv and a reduce, its AMD renderer renders each kernel
(hand-coded optimisations, no BEAM, no tensor cores) to HIP C++, and hcq's own compiler
(python/python/hcq/tinygrad/compiler.py: clang-19, gfx1100, the device libraries) builds the
code objects. Needs no GPU and no network:

    /work/venv091/bin/python sim/benches/tinygrad/gen.py

Writes <name>.hip (the source tinygrad rendered), <name>-gfx1100.co and kernels.txt: one line
per kernel, `<name> <symbol> <groups x y z> <local x y z> <buffer bytes...>` (buffer 0 is the
output, as tinygrad passes them).
"""
import importlib.util
import os
import pathlib
import sys

os.environ.setdefault("DEVICE", "CLANG")
from tinygrad import Tensor, dtypes  # noqa: E402
from tinygrad.engine.realize import get_linearizer  # noqa: E402
from tinygrad.engine.schedule import create_schedule  # noqa: E402
from tinygrad.ops import LoadOps  # noqa: E402
from tinygrad.renderer.cstyle import AMDRenderer  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent
spec = importlib.util.spec_from_file_location("hcq_compiler", HERE / "../../../python/python/hcq/tinygrad/compiler.py")
compiler = importlib.util.module_from_spec(spec)
spec.loader.exec_module(compiler)


def workloads():
  Tensor.manual_seed(0)
  a, b = Tensor.rand(128, 128), Tensor.rand(128, 128)
  yield "matmul", a @ b
  x, w = Tensor.rand(1, 16, 32, 32), Tensor.rand(16, 16, 3, 3)
  yield "conv", x.conv2d(w, padding=1)
  r = Tensor.rand(256, 1024)
  yield "reduce", r.sum(axis=1)


def main():
  lines = []
  for name, t in workloads():
    sched = [si for si in create_schedule([t.lazydata]) if si.ast[0].op not in LoadOps]
    # The last kernel computes the result (earlier ones are the inputs' rand).
    si = sched[-1]
    p = get_linearizer(AMDRenderer(), si.ast).to_program()
    assert not p.vars, f"{name}: symbolic variables are not supported here"
    src = p.src
    (HERE / f"{name}.hip").write_text(src)
    (HERE / f"{name}-gfx1100.co").write_bytes(compiler.compile_hip(src, "gfx1100"))
    g = list(p.global_size) + [1] * (3 - len(p.global_size))
    l = list(p.local_size) + [1] * (3 - len(p.local_size))
    sizes = [b.nbytes for b in si.bufs]
    lines.append(" ".join([name, p.function_name, *map(str, g), *map(str, l), *map(str, sizes)]))
    print(lines[-1], file=sys.stderr)
  (HERE / "kernels.txt").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
  main()
