"""`python -m hcq.mockgpu [--target gfx1100] [--gpus N] [--kernel 6.8] -- COMMAND...`

Runs COMMAND with tinygrad 0.9.1's AMD backend (its unmodified ops_amd.py) on hcq-sim: sets
AMD=1 MOCKGPU=1, puts hcq's `extra.mockgpu.mockgpu` first on PYTHONPATH, and passes the
simulated machine on (HCQ_SIM_TARGET, HCQ_SIM_GPUS, HCQ_SIM_KERNEL, HCQ_SIM_CLIENT=any).
"""
from __future__ import annotations

import argparse
import os
import sys

from hcq._hcq import SIM_TARGETS
from hcq.mockgpu import path_dir


def main(argv: list[str] | None = None) -> int:
  ap = argparse.ArgumentParser(prog="python -m hcq.mockgpu", description=__doc__.split("\n\n")[1])
  ap.add_argument("--target", default=os.environ.get("HCQ_SIM_TARGET") or "gfx1100", choices=SIM_TARGETS)
  ap.add_argument("--gpus", type=int, default=int(os.environ.get("HCQ_SIM_GPUS") or 1))
  ap.add_argument("--kernel", default=os.environ.get("HCQ_SIM_KERNEL") or "6.8",
                  help="simulated Linux version: its CREATE_QUEUE buffer checks (default 6.8, the seed's era)")
  ap.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND [ARGS...]")
  a = ap.parse_args(argv)
  cmd = a.command[1:] if a.command[:1] == ["--"] else a.command
  if not cmd:
    ap.error("no command: python -m hcq.mockgpu -- python script.py")
  if not 1 <= a.gpus <= 16:
    ap.error(f"--gpus {a.gpus}: the simulator plays 1 to 16 GPUs")
  env = dict(os.environ)
  env.update(AMD="1", MOCKGPU="1", HCQ_SIM_TARGET=a.target, HCQ_SIM_GPUS=str(a.gpus), HCQ_SIM_KERNEL=a.kernel, HCQ_SIM_CLIENT="any", HCQ_MOCKGPU_COMPILER="1")
  env["PYTHONPATH"] = path_dir() + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
  try:
    os.execvpe(cmd[0], cmd, env)
  except FileNotFoundError:
    print(f"hcq.mockgpu: {cmd[0]}: command not found\nnext: give the command after --, e.g. -- python script.py", file=sys.stderr)
    return 127


if __name__ == "__main__":
  sys.exit(main())
