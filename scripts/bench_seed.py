#!/usr/bin/env python3
"""The seed's side of scripts/bench-vs-seed.sh, and the comparison table.

    python bench_seed.py seed [--quick]          # time the seed's Python, print one JSON object
    python bench_seed.py compare SEED.json HCQ.json
    python bench_seed.py markdown RUN.json             # README table from bench-vs-seed.sh --json

`seed` needs tinygrad 0.9.1 importable (only its autogen `amd_gpu` tables are used). The seed file
(shared/seeds/000_*.txt beside the repository, tinygrad's ops_amd.py of that era; $HCQ_SEED overrides) is not
imported as a module: its constants and HWQueue/HWPM4Queue/HWCopyQueue classes are cut out of the
text and exec'd against small stubs (the approach of core/tests/golden/gen_golden.py): a ctypes
shim whose addressof() returns a fake signal's address, an hsa shim with the amd_signal_t offsets,
and a fake device whose compute queue is a 1 MiB ring in a memoryview, as the seed's own.

The work is the same as `hcq bench`'s (the `hcq-workloads` crate, workloads/src/lib.rs): one launch = wait on the
timeline, memory_barrier, exec (no dispatch pointer), signal a timeline signal with a KFD event
(105 dwords); submit = the seed's HWPM4Queue.submit into a 1 MiB ring (wptr + doorbell stores);
update_exec / update_wait / update_signal on that launch; one 64 MiB HWCopyQueue.copy.
"""
import array, json, os, statistics, sys, time, types
from typing import Any, List, Tuple

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
SEED = os.environ.get("HCQ_SEED", os.path.join(REPO, "..", "shared", "seeds", "000_26ef7b2ddb07d990.txt"))

# Same inputs as workloads/src/lib.rs (the `hcq-workloads` crate).
PROG_ADDR, SCRATCH, TMPRING, RSRC1, RSRC2 = 0x7f00_1000_0000, 0x7f00_2000_0000, 0x0020_0010, 0x0060_00c1, 0x0000_0090
KERNARGS = 0x7f00_3000_0000
GLOBAL, LOCAL = (64, 1, 1), (256, 1, 1)
RING_BYTES = 1 << 20
SDMA_COPY_BYTES = 64 << 20


class FakeSignal:
  def __init__(self, addr, mailbox, event_id):
    self.addr, self.event_mailbox_ptr, self.event_id = addr, mailbox, event_id


class _Off:
  def __init__(self, o): self.offset = o


def load_seed():
  import tinygrad.runtime.autogen.amd_gpu as amd_gpu
  hsa = types.SimpleNamespace(amd_signal_t=types.SimpleNamespace(value=_Off(8), start_ts=_Off(32), event_mailbox_ptr=_Off(16)))
  ctypes_shim = types.SimpleNamespace(addressof=lambda s: s.addr)
  src = open(SEED).read()
  code = ("SIGNAL_VALUE_OFFSET = 8\n" + src[src.index("regBIF_BX_PF1_GPU_HDP_FLUSH_REQ"):src.index("def disasm(")] + "\n" +
          src[src.index("class HWQueue:"):src.index("SHT_PROGBITS, SHF_ALLOC")])
  ns = {"amd_gpu": amd_gpu, "hsa": hsa, "ctypes": ctypes_shim, "array": array, "Tuple": Tuple, "List": List,
        "Any": Any, "AMDDevice": object, "kfd": None, "to_mv": None, "mv_address": None, "__name__": "seed"}
  exec(compile(code, SEED, "exec"), ns)
  return ns


def fake_device():
  ring = memoryview(bytearray(RING_BYTES)).cast("I")
  q = types.SimpleNamespace(ring=ring, put_value=0, write_ptr=array.array("Q", [0]), doorbell=array.array("Q", [0]))
  return types.SimpleNamespace(compute_queue=q)


def timeit(fn, quick):
  """Median ns per call over batches of ~2 ms (short, so a batch that loses the CPU on a shared
  machine is an outlier the median ignores; 1 ms with --quick)."""
  target = 1e6 if quick else 2e6
  batches = 9 if quick else 61
  for _ in range(3): fn()
  n = 1
  while True:
    t = time.perf_counter_ns()
    for _ in range(n): fn()
    el = time.perf_counter_ns() - t
    if el >= target / 2: break
    n *= 2
  n = max(1, int(n * target / max(el, 1)))
  per = []
  for _ in range(batches):
    t = time.perf_counter_ns()
    for _ in range(n): fn()
    per.append((time.perf_counter_ns() - t) / n)
  return statistics.median(per)


def run_seed(quick):
  S = load_seed()
  prg = types.SimpleNamespace(prog_addr=PROG_ADDR, rsrc1=RSRC1, rsrc2=RSRC2,
                              device=types.SimpleNamespace(scratch=types.SimpleNamespace(va_addr=SCRATCH), tmpring_size=TMPRING))
  timeline = FakeSignal(0x7f00_4000_0000, 0x7f00_5000_0008, 7)
  HWPM4Queue, HWCopyQueue = S["HWPM4Queue"], S["HWCopyQueue"]
  state = {"v": 1}

  def build():
    state["v"] += 1
    v = state["v"]
    return HWPM4Queue().wait(timeline, v - 1).memory_barrier().exec(prg, KERNARGS, GLOBAL, LOCAL).signal(timeline, v)

  q = build()
  if len(q.q) != 105 or q.cmd_offsets != [0, 7, 22, 89, 105]:
    raise SystemExit(f"seed launch is {len(q.q)} dwords at {q.cmd_offsets}, expected 105 at [0, 7, 22, 89, 105]")
  dev = fake_device()
  i = [0]

  def update_exec():
    i[0] += 1
    q.update_exec(2, (i[0], 1, 1), LOCAL)

  def update_wait():
    i[0] += 1
    q.update_wait(0, value=i[0])

  def update_signal():
    i[0] += 1
    q.update_signal(3, value=i[0])

  def sdma():
    return HWCopyQueue().copy(0x7d00_0000_0000, 0x7e00_0000_0000, SDMA_COPY_BYTES)

  if len(sdma().q) != 5 + 16 * 7 + 5:
    raise SystemExit("seed 64 MiB copy is not GCR + 16 COPY_LINEAR + GCR")
  out = {
    "python": sys.version.split()[0],
    "seed": os.path.basename(SEED),
    "build_launch_ns": timeit(build, quick),
    "ring_submit_ns": timeit(lambda: q.submit(dev), quick),
    "update_exec_ns": timeit(update_exec, quick),
    "update_wait_ns": timeit(update_wait, quick),
    "update_signal_ns": timeit(update_signal, quick),
    "sdma_copy_64mib_build_ns": timeit(sdma, quick),
  }
  try:
    import tinygrad
    out["tinygrad"] = getattr(tinygrad, "__version__", None) or _dist_version("tinygrad")
  except Exception:  # noqa: BLE001 (version is informative only)
    out["tinygrad"] = None
  return out


def _dist_version(name):
  from importlib.metadata import version
  return version(name)


ROWS = [
  ("build one launch (105 dwords)", "build_launch_ns"),
  ("submit it to a 1 MiB PM4 ring", "ring_submit_ns"),
  ("build + submit", None),
  ("update_exec", "update_exec_ns"),
  ("update_wait", "update_wait_ns"),
  ("update_signal", "update_signal_ns"),
  ("64 MiB SDMA copy build", "sdma_copy_64mib_build_ns"),
]


def fmt_ns(v):
  if v is None: return "-"
  if v >= 1e6: return f"{v / 1e6:.2f} ms"
  if v >= 1e3: return f"{v / 1e3:.2f} µs"
  if v >= 10: return f"{v:.1f} ns"
  return f"{v:.2f} ns"


def compare(seed, hcq):
  def get(d, k):
    if k is None:
      a, b = d.get("build_launch_ns"), d.get("ring_submit_ns")
      return None if a is None or b is None else a + b
    return d.get(k)
  lines = [f"cpu: {hcq.get('cpu')}", f"seed: Python {seed.get('python')}, tinygrad {seed.get('tinygrad')}, {seed.get('seed')}",
           "", f"{'operation':<32} {'seed (Python)':>14} {'hcq (Rust)':>12} {'speedup':>10}"]
  ratios = {}
  for name, k in ROWS:
    s, h = get(seed, k), get(hcq, k)
    r = s / h if s is not None and h else None
    ratios[k or "build_plus_submit_ns"] = r
    lines.append(f"{name:<32} {fmt_ns(s):>14} {fmt_ns(h):>12} {('%.0fx' % r) if r else '-':>10}")
  m = hcq.get("memcpy_105_dwords_ns")
  if m and hcq.get("ring_submit_ns"):
    lines.append(f"\nhcq ring submit / bare memcpy of the 105 dwords ({fmt_ns(m)}): {hcq['ring_submit_ns'] / m:.2f}x")
  return "\n".join(lines), ratios


def fmt_rate(v, unit):
  if v is None: return "not landed"
  if v >= 1e6: return f"{v / 1e6:.0f} M {unit}"
  if v >= 1e3: return f"{v / 1e3:.0f} k {unit}"
  return f"{v:.1f} {unit}"


def budget(v, op, limit, shown):
  if v is None: return f"{op} {shown}"
  ok = v <= limit if op == "<=" else v >= limit
  return f"{op} {shown}: {'met' if ok else '**missed**'}"


def markdown(run):
  """The README's Performance table from one `bench-vs-seed.sh --json` run."""
  s, h = run["seed"], run["hcq"]
  sp = lambda k: (f"{s[k] / h[k]:.0f}x" if s.get(k) and h.get(k) else "")
  g = h.get
  rt50, rt99 = g("sim_roundtrip_ns_p50"), g("sim_roundtrip_ns_p99")
  rows = [
    ("build one launch (wait + barrier + exec + signal, 105 dwords)", fmt_ns(s.get("build_launch_ns")), fmt_ns(g("build_launch_ns")),
     sp("build_launch_ns"), budget(g("build_launch_ns"), "<=", 20, "20 ns")),
    ("submit it to a 1 MiB PM4 ring (reserve + copy + publish + doorbell)", fmt_ns(s.get("ring_submit_ns")), fmt_ns(g("ring_submit_ns")),
     sp("ring_submit_ns"), budget(g("ring_submit_ns"), "<=", 15, "15 ns") +
     (f"; {g('ring_submit_over_memcpy'):.2f}x a bare memcpy of the 105 dwords ({fmt_ns(g('memcpy_105_dwords_ns'))})" if g("ring_submit_over_memcpy") else "")),
    ("`update_exec` (launch dims)", fmt_ns(s.get("update_exec_ns")), fmt_ns(g("update_exec_ns")), sp("update_exec_ns"), budget(g("update_exec_ns"), "<=", 3, "3 ns")),
    ("`update_wait` (value)", fmt_ns(s.get("update_wait_ns")), fmt_ns(g("update_wait_ns")), sp("update_wait_ns"), budget(g("update_wait_ns"), "<=", 3, "3 ns")),
    ("`update_signal` (value)", fmt_ns(s.get("update_signal_ns")), fmt_ns(g("update_signal_ns")), sp("update_signal_ns"), budget(g("update_signal_ns"), "<=", 3, "3 ns")),
    ("64 MiB SDMA copy into a command list (GCR + 16 COPY_LINEAR + GCR)", fmt_ns(s.get("sdma_copy_64mib_build_ns")), fmt_ns(g("sdma_copy_64mib_build_ns")),
     sp("sdma_copy_64mib_build_ns"), ""),
    ("PM4 decode", "", fmt_rate(g("decode_dwords_per_s"), "dwords/s"), "", ""),
    ("kernargs `TimelineArena` alloc", "", fmt_ns(g("arena_alloc_ns")), "", ""),
    ("graph replay patch, 1000 kernels, kickoff + timeline values change", "", fmt_ns(g("graph_patch_1000_timeline_ns")), "",
     budget(g("graph_patch_1000_timeline_ns"), "<=", 100, "100 ns")),
    ("graph replay patch, 1000 kernels, every kernel's dims + input buffer change", "", fmt_ns(g("graph_patch_1000_ns")), "",
     (budget(g("graph_patch_1000_over_floor"), "<=", 2.0, "2x plain stores of its 8000 dwords in the same run") +
      f" ({g('graph_patch_1000_over_floor'):.2f}x a floor of {fmt_ns(g('graph_patch_1000_floor_ns'))})"
      if g("graph_patch_1000_over_floor") else "<= 2x plain stores of its 8000 dwords in the same run") +
     (f"; {g('graph_patch_1000_over_hand'):.2f}x a loop hand-written for this graph with the same checks" if g("graph_patch_1000_over_hand") else "")),
    ("sim PM4 engine (waits, signals with interrupts, NOPs)", "", fmt_rate(g("sim_pm4_dwords_per_s"), "dwords/s"), "",
     budget(g("sim_pm4_dwords_per_s"), ">=", 100e6, "100 M dwords/s")),
    ("sim SDMA engine, 4 MiB COPY_LINEAR", "", fmt_rate(g("sim_sdma_copy_gb_per_s"), "GB/s"), "", ""),
    ("threaded sim: host submit -> host-observed completion, p50 / p99", "",
     f"{fmt_ns(rt50)} / {fmt_ns(rt99)}" if rt50 is not None else "not landed", "", budget(rt50, "<=", 2000, "2 µs") + " (p50)"),
    ("`fill` launches through the driver API on the sim (batches + synchronize)", "", fmt_rate(g("driver_launches_per_s"), "launches/s"), "", ""),
    ("submit a bound 1000-kernel graph (timeline wait + IB + signal + doorbell)", "", fmt_ns(g("graph_replay_submit_ns")) if g("graph_replay_submit_ns") else "not landed", "", ""),
    ("`hcq demo` copy in: 2 x 64 MiB host -> fresh VRAM (staging + sim SDMA)", "", fmt_rate(g("demo_copy_in_gb_per_s"), "GB/s"), "",
     budget(g("demo_copy_in_gb_per_s"), ">=", 2, "2 GB/s")),
  ]
  out = ["| work | seed (Python) | hcq | speedup | budget |", "|---|---:|---:|---:|---|"]
  out += [f"| {a} | {b} | {c} | {d} | {e} |" for a, b, c, d, e in rows]
  return "\n".join(out)


def main(argv):
  if len(argv) >= 1 and argv[0] == "seed":
    print(json.dumps(run_seed("--quick" in argv[1:])))
  elif len(argv) == 2 and argv[0] == "markdown":
    print(markdown(json.load(open(argv[1]))))
  elif len(argv) == 3 and argv[0] == "compare":
    seed, hcq = (json.load(open(p)) for p in argv[1:3])
    text, _ = compare(seed, hcq)
    print(text)
  else:
    print(__doc__, file=sys.stderr)
    return 2
  return 0


if __name__ == "__main__":
  sys.exit(main(sys.argv[1:]))
