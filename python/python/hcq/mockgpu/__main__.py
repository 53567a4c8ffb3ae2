"""`python -m hcq.mockgpu [--target gfx1100] [--gpus N] [--xcc N] [--kernel X.Y] -- COMMAND...`

Runs COMMAND with the installed tinygrad's own AMD backend (its unmodified ops_amd.py) on hcq-sim,
and passes the simulated machine on (HCQ_SIM_TARGET, HCQ_SIM_GPUS, HCQ_SIM_XCC, HCQ_SIM_KERNEL,
HCQ_SIM_CLIENT=any). `--xcc 8 --target gfx942` is an MI300X as it ships (SPX: one GPU of 8 XCCs;
tinygrad 0.14 drives it through AQL queues). tinygrad 0.9.1: sets AMD=1 MOCKGPU=1 and puts hcq's `extra.mockgpu.mockgpu`
first on PYTHONPATH (default kernel 6.8). tinygrad 0.14.x: sets DEV=AMD unless DEV is given
(DEV=AMD, KFD+AMD, MOCKKFD+AMD, ... all reach the simulator) and HCQ_MOCKGPU_TG14=1, with which
hcq's import hook makes 0.14's FileIOInterface the simulator's (default kernel 6.13).
"""
from __future__ import annotations

import argparse
import os
import sys

from hcq._hcq import SIM_TARGETS
from hcq.mockgpu import path_dir

SUPPORTED = "0.9.1 and 0.14.x"


def tinygrad_version() -> str | None:
  """The installed tinygrad's version (None when none is installed), read without importing it."""
  from importlib import metadata
  try: return metadata.version("tinygrad")
  except metadata.PackageNotFoundError: return None


def main(argv: list[str] | None = None) -> int:
  ap = argparse.ArgumentParser(prog="python -m hcq.mockgpu", description=__doc__.split("\n\n")[1])
  ap.add_argument("--target", default=os.environ.get("HCQ_SIM_TARGET") or "gfx1100", choices=SIM_TARGETS)
  ap.add_argument("--gpus", type=int, default=int(os.environ.get("HCQ_SIM_GPUS") or 1))
  ap.add_argument("--xcc", default=os.environ.get("HCQ_SIM_XCC") or "1",
                  help="XCCs of each GPU: 8 for gfx942 as an MI300X ships (SPX), 4/2/1 for its DPX/QPX/CPX partitions; other targets 1")
  ap.add_argument("--kernel", default=os.environ.get("HCQ_SIM_KERNEL") or None,
                  help="simulated Linux version: its CREATE_QUEUE buffer checks (default 6.8 for tinygrad 0.9.1, the seed's era; 6.13 for 0.14)")
  ap.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND [ARGS...]")
  a = ap.parse_args(argv)
  cmd = a.command[1:] if a.command[:1] == ["--"] else a.command
  if not cmd:
    ap.error("no command: python -m hcq.mockgpu -- python script.py")
  if not 1 <= a.gpus <= 16:
    ap.error(f"--gpus {a.gpus}: the simulator plays 1 to 16 GPUs")
  xcc = a.xcc.strip()
  if xcc not in ("1", "2", "4", "8"):
    ap.error(f"--xcc {a.xcc}: a GPU has 1, 2, 4 or 8 XCCs (gfx942 as an MI300X ships: --xcc 8)")
  if xcc != "1" and a.target != "gfx942":
    ap.error(f"--xcc {xcc}: {a.target} has one XCC; multi-XCC GPUs are gfx942 (--target gfx942 --xcc 8)")
  ver = tinygrad_version()
  tg14 = ver is not None and (ver == "0.14" or ver.startswith("0.14."))
  if ver is not None and not tg14 and ver != "0.9.1":
    print(f"hcq.mockgpu: tinygrad {ver} is installed; hcq.mockgpu supports tinygrad {SUPPORTED}\n"
          "next: pip install tinygrad==0.14.0 (or tinygrad==0.9.1)", file=sys.stderr)
    return 2
  env = dict(os.environ)
  env.update(HCQ_SIM_TARGET=a.target, HCQ_SIM_GPUS=str(a.gpus), HCQ_SIM_XCC=xcc, HCQ_SIM_CLIENT="any")
  if tg14:
    env.update(HCQ_SIM_KERNEL=a.kernel or "6.13", HCQ_MOCKGPU_TG14="1")
    if not env.get("DEV"): env["DEV"] = "AMD"
  else:
    env.update(AMD="1", MOCKGPU="1", HCQ_SIM_KERNEL=a.kernel or "6.8", HCQ_MOCKGPU_COMPILER="1")
    env["PYTHONPATH"] = path_dir() + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
  try:
    os.execvpe(cmd[0], cmd, env)
  except FileNotFoundError:
    print(f"hcq.mockgpu: {cmd[0]}: command not found\nnext: give the command after --, e.g. -- python script.py", file=sys.stderr)
    return 127


if __name__ == "__main__":
  sys.exit(main())
