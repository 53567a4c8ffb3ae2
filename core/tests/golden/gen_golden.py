#!/usr/bin/env python3
"""Regenerates core/tests/golden/seed_vectors.json from the seed's HWPM4Queue / HWCopyQueue.

Run with tinygrad 0.9.1's venv (only its autogen amd_gpu tables are used):

    python -m venv /tmp/tg && /tmp/tg/bin/pip install tinygrad==0.9.1
    /tmp/tg/bin/python core/tests/golden/gen_golden.py

The seed file (shared/seeds/000_*.txt beside the repository, tinygrad's ops_amd.py; $HCQ_SEED
overrides) is not imported as a module:
its constants and the HWQueue/HWPM4Queue/HWCopyQueue classes are cut out of the text and exec'd
against small stubs (a ctypes shim whose addressof() returns a fake signal's address, an hsa shim
with the amd_signal_t offsets and a real 64-byte dispatch-packet struct). Every case is a list of
commands in the `hcq encode` script format plus the seed's resulting dwords, command offsets,
SDMA packet sizes and dispatch packets.
"""
import array, ctypes as real_ctypes, json, os, random, sys, types
from typing import Tuple, List, Any

import tinygrad.runtime.autogen.amd_gpu as amd_gpu

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
SEED = os.environ.get("HCQ_SEED", os.path.join(REPO, "..", "shared", "seeds", "000_26ef7b2ddb07d990.txt"))


class FakeSignal:
  def __init__(self, addr, mailbox, event_id):
    self.addr, self.event_mailbox_ptr, self.event_id = addr, mailbox, event_id


class DispatchPacket(real_ctypes.Structure):
  _fields_ = [("header", real_ctypes.c_uint16), ("setup", real_ctypes.c_uint16),
              ("workgroup_size_x", real_ctypes.c_uint16), ("workgroup_size_y", real_ctypes.c_uint16),
              ("workgroup_size_z", real_ctypes.c_uint16), ("reserved0", real_ctypes.c_uint16),
              ("grid_size_x", real_ctypes.c_uint32), ("grid_size_y", real_ctypes.c_uint32), ("grid_size_z", real_ctypes.c_uint32),
              ("private_segment_size", real_ctypes.c_uint32), ("group_segment_size", real_ctypes.c_uint32),
              ("kernel_object", real_ctypes.c_uint64), ("kernarg_address", real_ctypes.c_uint64),
              ("reserved2", real_ctypes.c_uint64), ("completion_signal", real_ctypes.c_uint64)]
assert real_ctypes.sizeof(DispatchPacket) == 64

KERNARGS_MEM = {}  # address -> DispatchPacket (zero-initialised memory)


def from_address(addr):
  if addr not in KERNARGS_MEM: KERNARGS_MEM[addr] = DispatchPacket()
  return KERNARGS_MEM[addr]


class _Off:
  def __init__(self, o): self.offset = o


hsa = types.SimpleNamespace(
  amd_signal_t=types.SimpleNamespace(value=_Off(8), start_ts=_Off(32), event_mailbox_ptr=_Off(16)),
  hsa_kernel_dispatch_packet_t=types.SimpleNamespace(from_address=from_address))
ctypes_shim = types.SimpleNamespace(addressof=lambda s: s.addr)


def load_seed():
  lines = open(SEED).read().split("\n")
  src = "\n".join(lines)
  start_consts = src.index("regBIF_BX_PF1_GPU_HDP_FLUSH_REQ")
  end_consts = src.index("def disasm(")
  start_cls = src.index("class HWQueue:")
  end_cls = src.index("SHT_PROGBITS, SHF_ALLOC")
  code = "SIGNAL_VALUE_OFFSET = 8\n" + src[start_consts:end_consts] + "\n" + src[start_cls:end_cls]
  ns = {"amd_gpu": amd_gpu, "hsa": hsa, "ctypes": ctypes_shim, "array": array, "Tuple": Tuple, "List": List,
        "Any": Any, "AMDDevice": object, "kfd": None, "to_mv": None, "__name__": "seed"}
  exec(compile(code, SEED, "exec"), ns)
  return ns


S = load_seed()
R = random.Random(0x5eed)
U64 = (1 << 64) - 1


def r64(): return R.choice([R.getrandbits(64), R.getrandbits(48), R.getrandbits(32), 0, U64 & ~0xff])
def r32(): return R.choice([R.getrandbits(32), 0, 0xffffffff, R.randrange(1, 100)])
def raddr(): return R.choice([R.getrandbits(64), R.getrandbits(48), R.getrandbits(40)]) & ~0x3f & ((1 << 64) - 0x1000)


def rsignal(mailbox=None):
  if mailbox is None: mailbox = R.random() < 0.5
  if mailbox: return FakeSignal(raddr(), raddr() | 0x8 if R.random() < 0.5 else raddr(), R.getrandbits(R.choice([8, 16, 27])) | 1)
  return FakeSignal(raddr(), 0, 0)


def sig_json(s): return {"addr": s.addr, "event_mailbox_ptr": s.event_mailbox_ptr, "event_id": s.event_id}


class Prog:
  def __init__(self, dp):
    self.prog_addr = R.getrandbits(64) & ~0xff
    self.rsrc1, self.rsrc2 = R.getrandbits(32), R.getrandbits(32)
    self.device = types.SimpleNamespace(scratch=types.SimpleNamespace(va_addr=R.getrandbits(64) & ~0xff), tmpring_size=R.getrandbits(32))
    if dp:
      self.dispatch_packet_offset = R.choice([0, 0x40, 0x100, R.randrange(0, 0x1000, 8)])
      self.group_segment_size, self.private_segment_size = R.getrandbits(16), R.getrandbits(12)

  def json(self):
    j = {"prog_addr": self.prog_addr, "scratch_addr": self.device.scratch.va_addr, "tmpring_size": self.device.tmpring_size,
         "rsrc1": self.rsrc1, "rsrc2": self.rsrc2}
    if hasattr(self, "dispatch_packet_offset"):
      j.update(dispatch_packet_offset=self.dispatch_packet_offset, group_segment_size=self.group_segment_size,
               private_segment_size=self.private_segment_size)
    return j


def dims(dp):
  if dp:  # the dispatch packet holds u16 workgroup sizes and u32 grid sizes
    loc = [R.choice([1, 2, 32, 64, 256, 1024, R.randrange(1, 0x10000)]) for _ in range(3)]
    glob = [R.randrange(1, max(2, (0xffffffff // l) + 1)) if R.random() < 0.3 else R.choice([1, 2, 7, 1000]) for l in loc]
  else:
    loc = [r32() for _ in range(3)]
    glob = [r32() for _ in range(3)]
  return glob, loc


def pm4_case(n_cmds):
  q = S["HWPM4Queue"]()
  ops, kinds = [], []
  for _ in range(n_cmds):
    k = R.choice(["memory_barrier", "exec", "exec_dp", "wait", "signal", "timestamp"])
    if k == "memory_barrier":
      q.memory_barrier(); ops.append({"op": "memory_barrier"})
    elif k.startswith("exec"):
      dp = k == "exec_dp"
      prg, kernargs = Prog(dp), raddr()
      g, l = dims(dp)
      q.exec(prg, kernargs, tuple(g), tuple(l))
      ops.append({"op": "exec", "program": prg.json(), "kernargs": kernargs, "global": g, "local": l})
    elif k == "wait":
      s, v = rsignal(), r32()
      q.wait(s, v); ops.append({"op": "wait", "signal": sig_json(s), "value": v})
    elif k == "signal":
      s, v = rsignal(), r64()
      q.signal(s, v); ops.append({"op": "signal", "signal": sig_json(s), "value": v})
    else:
      s = rsignal()
      q.timestamp(s); ops.append({"op": "timestamp", "signal": sig_json(s)})
    kinds.append(k)
  # patches
  for _ in range(R.randrange(0, 6)):
    i = R.randrange(len(kinds))
    k = kinds[i]
    if k == "exec":  # the seed's update_exec asserts on exec with a dispatch pointer
      g, l = dims(False)
      q.update_exec(i, g, l); ops.append({"op": "update_exec", "cmd": i, "global": g, "local": l})
    elif k in ("wait", "signal"):
      p = {"op": "update_" + k, "cmd": i}
      s = rsignal(mailbox=R.random() < 0.5) if R.random() < 0.7 else None
      v = (r32() if k == "wait" else r64()) if R.random() < 0.7 else None
      getattr(q, "update_" + k)(i, s, v)
      if s is not None: p["signal"] = sig_json(s)
      if v is not None: p["value"] = v
      ops.append(p)
  dps = {}
  for idx, dp in q.ptr_to_dispatch_packet.items(): dps[str(idx)] = list(bytes(dp))
  return {"engine": "pm4", "ops": ops, "dwords": [int(x) for x in q.q], "cmd_offsets": q.cmd_offsets[:-1], "dispatch_packets": dps}


def sdma_case(n_cmds):
  q = S["HWCopyQueue"]()
  ops, kinds = [], []
  for _ in range(n_cmds):
    k = R.choice(["copy", "copy", "wait", "signal", "timestamp"])
    if k == "copy":
      size = R.choice([0, 1, 8, 0x3fffff, 0x400000, 0x400001, 0x800000, R.randrange(1, 20 << 20), R.randrange(1, 1 << 16)])
      src, dst = raddr(), raddr()
      src, dst = min(src, U64 - size), min(dst, U64 - size)
      q.copy(dst, src, size); ops.append({"op": "copy", "dst": dst, "src": src, "size": size})
    elif k == "wait":
      s, v = rsignal(), r32()
      q.wait(s, v); ops.append({"op": "wait", "signal": sig_json(s), "value": v})
    elif k == "signal":
      s, v = rsignal(), r32()
      q.signal(s, v); ops.append({"op": "signal", "signal": sig_json(s), "value": v})
    else:
      s = rsignal()
      q.timestamp(s); ops.append({"op": "timestamp", "signal": sig_json(s)})
    kinds.append(k)
  for _ in range(R.randrange(0, 6)):
    i = R.randrange(len(kinds))
    k = kinds[i]
    if k in ("wait", "signal"):
      p = {"op": "update_" + k, "cmd": i}
      s = rsignal() if R.random() < 0.7 else None
      v = r32() if R.random() < 0.7 else None
      getattr(q, "update_" + k)(i, s, v)
      if s is not None: p["signal"] = sig_json(s)
      if v is not None: p["value"] = v
      ops.append(p)
  return {"engine": "sdma", "ops": ops, "dwords": [int(x) for x in q.q], "cmd_offsets": q.cmd_offsets[:-1],
          "packet_sizes": q.internal_cmd_sizes}


def main():
  cases = []
  # One of each command alone first (easy to read when a test fails).
  for k in range(40): cases.append(pm4_case(1))
  for k in range(60): cases.append(pm4_case(R.randrange(2, 8)))
  for k in range(40): cases.append(sdma_case(1))
  for k in range(40): cases.append(sdma_case(R.randrange(2, 6)))
  for c in cases:
    assert all(0 <= d <= 0xffffffff for d in c["dwords"]), c
  out = os.path.join(HERE, "seed_vectors.json")
  with open(out, "w") as f:
    f.write("[\n" + ",\n".join(json.dumps(c, separators=(",", ":")) for c in cases) + "\n]\n")
  print(f"wrote {len(cases)} cases, {os.path.getsize(out)} bytes to {out}")


if __name__ == "__main__":
  main()
