"""hcq's Python API on the simulator: buffers, programs, graphs, errors (pytest python/tests)."""
import os
import shutil
import subprocess
import tempfile

import pytest

import hcq

SRC = """
extern "C" __attribute__((global)) void add1(float* out, const float* a, int n) {
  int i = __builtin_amdgcn_workgroup_id_x() * 64 + __builtin_amdgcn_workitem_id_x();
  if (i < n) out[i] = a[i] + 1.0f;
}
"""


@pytest.fixture(scope="module")
def kfd(): return hcq.Kfd(target="gfx1100", gpus=2)


@pytest.fixture(scope="module")
def dev(kfd): return kfd.open(0)


@pytest.fixture(scope="module")
def code():
  if shutil.which("clang-19") is None: pytest.skip("clang-19 not installed")
  with tempfile.TemporaryDirectory() as td:
    s, o = os.path.join(td, "k.hip"), os.path.join(td, "k.co")
    open(s, "w").write(SRC)
    subprocess.run(["clang-19", "-x", "hip", "--offload-arch=gfx1100", "--offload-device-only", "--no-gpu-bundle-output", "-nogpuinc",
                    "-nogpulib", "-O2", "-fuse-ld=lld", f"--ld-path={shutil.which('ld.lld-19')}", s, "-o", o], check=True)
    return open(o, "rb").read()


@pytest.fixture(scope="module")
def prog(dev, code): return dev.load(code, "add1")


def test_kfd_is_simulated(kfd):
  assert kfd.backend == "sim" and [g["target"] for g in kfd.gpus] == ["gfx1100", "gfx1100"]


def test_copy_roundtrip_any_buffer_object(dev):
  b = dev.alloc(1024)
  data = bytes(range(256)) * 4
  dev.copy_in(b, memoryview(data))
  out = bytearray(1024)
  dev.copy_out(out, b)
  assert out == data
  # a sub-buffer: offsets in and out
  v = b.view(256, 256)
  dev.copy_in(v, b"\xff" * 256)
  dev.copy_out(out, b)
  assert out[:256] == data[:256] and out[256:512] == b"\xff" * 256 and out[512:] == data[512:]


def test_numpy_in_place(dev):
  np = pytest.importorskip("numpy")
  a = np.arange(512, dtype=np.float32)
  b = dev.alloc(a.nbytes)
  dev.copy_in(b, a)
  out = np.zeros_like(a)
  dev.copy_out(out, b)
  assert (out == a).all()


def test_device_copy_and_transfer(kfd, dev):
  a, b = dev.alloc(64), dev.alloc(64)
  dev.copy_in(a, b"x" * 64)
  dev.wait(dev.copy(b, a))
  out = bytearray(64)
  dev.copy_out(out, b)
  assert out == b"x" * 64
  dev1 = kfd.open(1)
  c = dev1.alloc(64)
  dev1.transfer(c, a, dev)
  dev1.copy_out(out, c)
  assert out == b"x" * 64


def test_errors_are_hcq_errors_with_next(dev):
  b = dev.alloc(16)
  with pytest.raises(hcq.HcqError) as e:
    dev.copy_in(b, b"y" * 32)
  assert "next:" in str(e.value) and str(e.value).startswith("invalid argument")
  with pytest.raises(hcq.HcqError):
    hcq.Kfd(target="gfx9999")
  b.free()
  with pytest.raises(hcq.HcqError, match="freed"):
    dev.copy_in(b, b"z")


def test_threaded_gpu_runs_beside_the_host():
  # The GPU on a thread of its own: work runs without the host waiting, a copy and a wait work.
  k = hcq.Kfd(target="gfx1100", threaded=True)
  d = k.open(0)
  a, b = d.alloc(4096), d.alloc(4096)
  d.copy_in(a, bytes(range(256)) * 16)
  v = d.copy(b, a)
  import time
  deadline = time.monotonic() + 30
  while d.completed_value < v and time.monotonic() < deadline: time.sleep(0.001)
  assert d.completed_value >= v, "the threaded GPU completes work no one waits for"
  out = bytearray(4096)
  d.copy_out(out, b)
  assert out == bytes(range(256)) * 16
  with pytest.raises(hcq.HcqError, match="sim=False"):
    hcq.Kfd(sim=False, threaded=True)


def test_threaded_env_is_checked(monkeypatch):
  monkeypatch.setenv("HCQ_SIM_THREADED", "yes")
  with pytest.raises(hcq.HcqError, match="HCQ_SIM_THREADED"):
    hcq.Kfd(target="gfx1100")


def test_program_metadata_and_launch(dev, prog):
  md = prog.metadata
  kinds = [a["kind"] for a in md["args"] if not a["hidden"]]
  assert kinds == ["global_buffer", "global_buffer", "by_value"] and md["vgpr_count"] > 0 and md["sgpr_count"] > 0
  n = 256
  a, out = dev.alloc(n * 4), dev.alloc(n * 4)
  import array
  dev.copy_in(a, array.array("f", range(n)))
  t = prog.launch([out, a, n], (n // 64,), (64,), wait=True)
  assert isinstance(t, float) and t >= 0
  res = array.array("f", bytes(n * 4))
  dev.copy_out(res, out)
  assert list(res) == [float(i + 1) for i in range(n)]
  with pytest.raises(hcq.HcqError, match="arguments"):
    prog.launch([out, a], (1,), (64,))
  with pytest.raises(hcq.HcqError):
    prog.launch([out, a, n], (1,), (2048,))


def test_graph_replay_with_new_buffers_and_values(dev, prog):
  import array
  n = 128
  a, out1, out2 = dev.alloc(n * 4), dev.alloc(n * 4), dev.alloc(n * 4)
  dev.copy_in(a, array.array("f", [2.0] * n))
  g = hcq.GraphBuilder(dev)
  vout, vn = g.buffer(out1), g.scalar(n)
  g.launch(prog, [vout, a, vn], ((n // 64,), (64,)))
  graph = g.record()
  graph.replay(wait=True)
  graph.replay({vout: out2, vn: 64}, wait=True)
  r1, r2 = array.array("f", bytes(n * 4)), array.array("f", bytes(n * 4))
  dev.copy_out(r1, out1)
  dev.copy_out(r2, out2)
  assert list(r1) == [3.0] * n and list(r2) == [3.0] * 64 + [0.0] * 64
  with pytest.raises(hcq.HcqError):
    graph.replay({vout: dev.alloc(16)})  # smaller than recorded: refused before anything runs


def _add1_graph(dev, prog, n=128):
  """add1 on n floats of 2.0 recorded with its output and count as variables: (graph, vout, vn,
  out1, out2, out3) with out1 the recorded output."""
  import array
  a, out1, out2, out3 = (dev.alloc(n * 4) for _ in range(4))
  dev.copy_in(a, array.array("f", [2.0] * n))
  g = hcq.GraphBuilder(dev)
  vout, vn = g.buffer(out1), g.scalar(n)
  g.launch(prog, [vout, a, vn], ((n // 64,), (64,)))
  return g.record(), vout, vn, out1, out2, out3


def test_graph_replay_takes_lists_tuples_and_none(dev, prog):
  """A list or any iterable gives values by position, None keeps the last replay's; too many
  values are refused without running anything."""
  import array
  n = 128
  graph, vout, vn, out1, out2, out3 = _add1_graph(dev, prog, n)
  assert graph.nvars == 2
  graph.replay([out2, 64], wait=True)        # a list: both by position
  graph.replay((out3, None), wait=True)      # a tuple; None keeps 64 from the last replay
  with pytest.raises(hcq.HcqError, match="more than the graph's 2 values"):
    graph.replay([out1, n, 0])
  with pytest.raises(hcq.HcqError, match="variable 2 of a graph with 2"):
    graph.replay(iter([out1, n, 0]))
  r2, r3 = array.array("f", bytes(n * 4)), array.array("f", bytes(n * 4))
  dev.copy_out(r2, out2)
  dev.copy_out(r3, out3)
  assert list(r2) == [3.0] * 64 + [0.0] * 64 and list(r3) == list(r2)


def test_graph_call_replays_from_a_frameworks_arguments(dev, prog):
  """hcq.GraphCall as the first base of a framework's graph runner: a call replays with buffer
  slots from getattr(buffers[position], attr) and scalar slots from var_vals[key]; a call
  before bind, a slot of the wrong kind and a second bind are refused; wait=True returns the
  seconds the replay took."""
  import array
  n = 128
  graph, vout, vn, out1, out2, out3 = _add1_graph(dev, prog, n)

  class Runner:  # a framework's base class, with its own __init__ and __call__
    def __init__(self, name): self.name = name
    def __call__(self, *args): raise AssertionError("GraphCall's __call__ comes first")

  class Call(hcq.GraphCall, Runner):
    def __init__(self, name): super().__init__(name)

  class Buf:  # a framework's buffer: the hcq.Buffer under an attribute
    def __init__(self, b): self.mem = b

  c = Call("g")
  assert c.name == "g"
  with pytest.raises(hcq.HcqError, match="before bind"):
    c([Buf(out2)], {})
  with pytest.raises(hcq.HcqError, match="names variable 1, not a Addr variable"):
    c.bind(graph, [(0, vn.index)])
  c.bind(graph, [(0, vout.index)], [("n", vn.index)], attr="mem")
  with pytest.raises(hcq.HcqError, match="bound already"):
    c.bind(graph, [])
  assert c([Buf(out2)], {"n": 64}) is None
  t = c((Buf(out3),), {"n": 64}, wait=True)
  assert isinstance(t, float) and t >= 0
  with pytest.raises(KeyError):
    c([Buf(out2)], {})
  with pytest.raises(AttributeError):
    c([object()], {"n": 64})
  with pytest.raises(hcq.HcqError, match="variable 0 is a buffer"):
    c([Buf(7)], {"n": 64})
  dev.synchronize()
  r2, r3 = array.array("f", bytes(n * 4)), array.array("f", bytes(n * 4))
  dev.copy_out(r2, out2)
  dev.copy_out(r3, out3)
  assert list(r2) == [3.0] * 64 + [0.0] * 64 and list(r3) == list(r2)


def test_graph_call_cycles_through_its_binding_are_collected(dev, prog):
  """A runner whose bound value key refers back to it is a cycle the collector frees."""
  import gc
  import weakref
  graph, vout, vn, *_ = _add1_graph(dev, prog)

  class Call(hcq.GraphCall):
    pass

  class Key:
    pass

  c, k = Call(), Key()
  k.runner = c
  c.bind(graph, [(0, vout.index)], [(k, vn.index)])
  r = weakref.ref(c)
  del c, k
  gc.collect()
  assert r() is None


FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "core", "tests", "fixtures", "kernels")


def test_local_pointer_arguments_take_lds(dev):
  """An OpenCL `__local float*` argument is hcq.Lds(bytes): placed after the static LDS, its
  address passed (kernels/reduce_local.cl, the committed gfx1100 code object)."""
  import array
  code = open(os.path.join(FIXTURES, "reduce_local-gfx1100.co"), "rb").read()
  red = dev.load(code, "reduce_sum")
  assert [a["kind"] for a in red.metadata["args"] if not a["hidden"]] == ["global_buffer", "global_buffer", "dynamic_shared_pointer", "by_value"]
  n, block = 1000, 128
  groups = (n + block - 1) // block
  src, out = dev.alloc(n * 4), dev.alloc(groups * 4)
  dev.copy_in(src, array.array("f", [float(i % 7) for i in range(n)]))
  red.launch([src, out, hcq.Lds(block * 4), n], (groups,), (block,), wait=True)
  res = array.array("f", bytes(groups * 4))
  dev.copy_out(res, out)
  assert list(res) == [float(sum(i % 7 for i in range(g * block, min(n, (g + 1) * block)))) for g in range(groups)]
  assert repr(hcq.Lds(512)) == "Lds(512)" and hcq.Lds(512).bytes == 512
  # A number where the kernel takes a __local pointer is refused by name, as is an Lds for a value.
  with pytest.raises(hcq.HcqError, match="lds|Lds|LDS"):
    red.launch([src, out, block * 4, n], (groups,), (block,))
  with pytest.raises(hcq.HcqError):
    red.launch([src, out, hcq.Lds(block * 4), hcq.Lds(4)], (groups,), (block,))
  # Two __local arguments and the static array do not overlap (kernels/reduce_local.cl local_layout).
  lay = dev.load(code, "local_layout")
  o = dev.alloc(6 * 4)
  lay.launch([o, hcq.Lds(3), hcq.Lds(16)], (1,), (1,), wait=True)
  v = array.array("I", bytes(6 * 4))
  dev.copy_out(v, o)
  a, b, fixed = v[0], v[1], v[2]
  assert b % 16 == 0 and len({a, b, fixed}) == 3 and list(v[3:]) == [204, 24, 10]


def test_graph_takes_local_pointer_arguments(dev):
  """A graph records a kernel with `__local` arguments: the LDS placed as the launch places it
  (addresses after the static LDS, RSRC2 and the hidden dynamic-LDS size covering them)."""
  import array
  code = open(os.path.join(FIXTURES, "reduce_local-gfx1100.co"), "rb").read()
  red, lay = dev.load(code, "reduce_sum"), dev.load(code, "local_layout")
  n, block = 512, 128
  src, out1, out2, o = dev.alloc(n * 4), dev.alloc(16), dev.alloc(16), dev.alloc(6 * 4)
  dev.copy_in(src, array.array("f", [1.0] * n))
  g = hcq.GraphBuilder(dev)
  vout = g.buffer(out1)
  g.launch(red, [src, vout, hcq.Lds(block * 4), n], ((n // block,), (block,)))
  g.launch(lay, [o, hcq.Lds(3), hcq.Lds(16)], ((1,), (1,)))
  graph = g.record()
  graph.replay(wait=True)
  graph.replay({vout: out2}, wait=True)
  for out in (out1, out2):
    r = array.array("f", bytes(16))
    dev.copy_out(r, out)
    assert list(r) == [128.0] * 4
  v = array.array("I", bytes(6 * 4))
  dev.copy_out(v, o)
  assert v[1] % 16 == 0 and len({v[0], v[1], v[2]}) == 3 and list(v[3:]) == [204, 24, 10]
  # The same layout as a direct launch.
  o2 = dev.alloc(6 * 4)
  lay.launch([o2, hcq.Lds(3), hcq.Lds(16)], (1,), (1,), wait=True)
  v2 = array.array("I", bytes(6 * 4))
  dev.copy_out(v2, o2)
  assert list(v2) == list(v)
  g2 = hcq.GraphBuilder(dev)
  with pytest.raises(hcq.HcqError, match="Lds"):
    g2.launch(red, [src, out1, block * 4, n], ((n // block,), (block,)))
  with pytest.raises(hcq.HcqError, match="dynamic LDS"):
    g2.launch(red, [src, out1, hcq.Lds(1 << 20), n], ((n // block,), (block,)))


# --- The binding's copy and replay logic, and what it promises other Python threads ---


def test_copies_across_chunks_and_views(dev):
  """copy_in reads Python memory straight into the driver's 4 MiB staging chunks, copy_out stages it
  through an 8 MiB chunk: sizes across several chunks, into and out of a view at an offset, from
  bytes and from a bytearray agree byte for byte; a read-only destination is refused."""
  np = pytest.importorskip("numpy")
  n = (8 << 20) * 2 + 12345
  src = np.random.default_rng(1).integers(0, 256, n, dtype=np.uint8)
  whole = dev.alloc(n + 8192)
  dev.copy_in(whole, b"\x5a" * (n + 8192))
  v = whole.view(4096, n)
  dev.copy_in(v, bytearray(src.tobytes()))
  out = np.zeros(n + 8192, dtype=np.uint8)
  dev.copy_out(out, whole)
  assert (out[:4096] == 0x5a).all() and (out[4096 + n:] == 0x5a).all()
  assert (out[4096:4096 + n] == src).all()
  dev.copy_in(v, src[::-1].tobytes())
  back = bytearray(n)
  dev.copy_out(back, v)
  assert back == src[::-1].tobytes()
  with pytest.raises(BufferError):
    dev.copy_out(b"\x00" * 16, v)
  with pytest.raises(BufferError):
    dev.copy_out(memoryview(bytearray(16)).toreadonly(), v)


def test_copy_in_with_a_writer_thread(code):
  """A second Python thread writing the array while copy_in reads it (the GIL is released, the
  GPU runs on its own thread) cannot crash or corrupt: every byte copied is one the writer or
  the initial fill put there, the bytes around the destination stay as they were, and the
  writer ran during the copy (so the race did happen)."""
  import threading
  import time
  np = pytest.importorskip("numpy")
  k = hcq.Kfd(target="gfx1100", threaded=True)
  d = k.open(0)
  n = 24 << 20
  arr = np.full(n, 1, dtype=np.uint8)
  buf = d.alloc(n + 8192)
  d.copy_in(buf, b"\xee" * (n + 8192))
  view = buf.view(4096, n)
  stop, writes = threading.Event(), []

  def writer():
    v = 2
    while not stop.is_set():
      arr[: n // 2] = v
      arr[n // 2:] = v
      writes.append(time.monotonic())
      v = 2 + (v - 1) % 50

  t = threading.Thread(target=writer)
  t.start()
  try:
    while not writes: time.sleep(0.001)
    # Tries until the writer ran during one copy (a fast copy on a loaded machine may finish
    # before the writer thread is scheduled); with the GIL held it never would.
    for _ in range(30):
      t0 = time.monotonic()
      d.copy_in(view, arr)
      t1 = time.monotonic()
      if any(t0 < w < t1 for w in writes): break
  finally:
    stop.set()
    t.join()
  assert any(t0 < w < t1 for w in writes), "the writer never ran during copy_in: was the GIL held?"
  out = np.zeros(n + 8192, dtype=np.uint8)
  d.copy_out(out, buf)
  assert (out[:4096] == 0xee).all() and (out[4096 + n:] == 0xee).all()
  got = set(np.unique(out[4096:4096 + n]).tolist())
  assert got <= set(range(1, 52)), f"bytes no one wrote: {sorted(got - set(range(1, 52)))[:8]}"


def _slow_graph(d, code, launches=48, n=1 << 16):
  """add1 over n floats `launches` times on device d: a graph the simulator takes a while on."""
  p = d.load(code, "add1")
  a, out = d.alloc(n * 4), d.alloc(n * 4)
  g = hcq.GraphBuilder(d)
  for _ in range(launches):
    g.launch(p, [out, a, n], ((n // 64,), (64,)))
  return g.record()


def test_replay_waiting_on_the_gpu_lets_other_threads_run(code):
  """A replay waits for the graph's previous replay, and wait=True for its own: both without
  the GIL, so another Python thread keeps running through the middle of the call."""
  import threading
  import time
  k = hcq.Kfd(target="gfx1100", threaded=True)
  d = k.open(0)
  graph = _slow_graph(d, code)
  graph.replay(wait=True)  # warm: code objects, caches
  ticks, stop = [], threading.Event()

  def counter():
    while not stop.is_set():
      ticks.append(time.monotonic())
      time.sleep(0.0002)

  t = threading.Thread(target=counter)
  t.start()
  try:
    while not ticks: time.sleep(0.001)
    spans = []
    for wait in (False, True):
      graph.replay()  # still running when the next replay comes: that one waits for it first
      t0 = time.monotonic()
      graph.replay(wait=wait)
      spans.append((t0, time.monotonic()))
    d.synchronize()
  finally:
    stop.set()
    t.join()
  for t0, t1 in spans:
    assert t1 - t0 > 0.01, f"the graph is too fast to tell ({(t1 - t0) * 1e3:.1f} ms)"
    lo, hi = t0 + (t1 - t0) * 0.2, t1 - (t1 - t0) * 0.2
    inside = sum(lo < x < hi for x in ticks)
    assert inside >= 3, f"the other thread ran {inside} times in the middle of a {(t1 - t0) * 1e3:.0f} ms replay"


def test_graph_call_waits_without_the_gil(code):
  """GraphCall's call goes through the same replay: its wait lets other threads run too."""
  import threading
  import time
  k = hcq.Kfd(target="gfx1100", threaded=True)
  d = k.open(0)
  graph = _slow_graph(d, code)

  class Call(hcq.GraphCall):
    pass

  c = Call()
  c.bind(graph, [])
  c([], {}, wait=True)
  ticks, stop = [], threading.Event()

  def counter():
    while not stop.is_set():
      ticks.append(time.monotonic())
      time.sleep(0.0002)

  t = threading.Thread(target=counter)
  t.start()
  try:
    while not ticks: time.sleep(0.001)
    t0 = time.monotonic()
    c([], {}, wait=True)
    t1 = time.monotonic()
  finally:
    stop.set()
    t.join()
  lo, hi = t0 + (t1 - t0) * 0.2, t1 - (t1 - t0) * 0.2
  assert sum(lo < x < hi for x in ticks) >= 3


def test_mixed_graph_replays_back_to_back(dev, prog):
  """A graph of copies and kernels (copy in -> add1 -> copy out) replayed back to back, without
  waiting in between, with unchanged values, changed buffers and scalars, a None (keeps the last
  replay's) and a dict: each replay's results are its own values' (a replay that ran with the
  previous replay's values, or patched what the GPU was still reading, shows here)."""
  np = pytest.importorskip("numpy")
  n = 256
  srcs = [dev.alloc(n * 4) for _ in range(3)]
  for i, s in enumerate(srcs):
    dev.copy_in(s, np.full(n, float(10 * (i + 1)), dtype=np.float32))
  tmp, mid = dev.alloc(n * 4), dev.alloc(n * 4)
  outs = [dev.alloc(n * 4) for _ in range(6)]
  g = hcq.GraphBuilder(dev)
  vsrc, vout, vn = g.buffer(srcs[0]), g.buffer(outs[0]), g.scalar(n)
  g.copy(tmp, vsrc, n * 4)
  g.launch(prog, [mid, tmp, vn], ((n // 64,), (64,)))
  g.copy(vout, mid, n * 4)
  graph = g.record()
  # (values, source index, count the kernel ran on, output index)
  plan = [
    (None, 0, n, 0),                               # as recorded
    ([None, None, None], 0, n, 0),                  # unchanged
    ([srcs[1], outs[1], None], 1, n, 1),            # new buffers
    ([None, outs[2], 64], 1, 64, 2),                # None keeps srcs[1]; a new count
    ({vsrc: srcs[2], vout: outs[3]}, 2, 64, 3),     # a dict: the count stays 64
    ([srcs[0], outs[4], n], 0, n, 4),               # back to the recorded source
    ([srcs[0], outs[4], n], 0, n, 4),               # unchanged again
    ([srcs[1], outs[5], n], 1, n, 5),
  ]
  for o in outs:
    dev.copy_in(o, np.zeros(n, dtype=np.float32))
  for values, *_ in plan:
    graph.replay(values)
  dev.synchronize()
  # Replays run in order on one timeline: the last replay writing an output decides it.
  last = {o: (s, c) for _, s, c, o in plan}
  for o, (s, c) in last.items():
    got = np.zeros(n, dtype=np.float32)
    dev.copy_out(got, outs[o])
    want = np.full(n, float(10 * (s + 1)), dtype=np.float32)
    want[:c] += 1.0
    # Past the count the kernel leaves `mid` as the previous replay wrote it: compare only the
    # part each replay computed, and the copy's source otherwise comes from an earlier replay.
    assert (got[:c] == want[:c]).all(), (o, s, c, got[:4], got[c - 1:c + 1])


def test_free_refusal_is_its_own_error(dev):
  """Buffer.free() while views are alive raises BufferInUseError (a HcqError), which
  tinygrad's allocator ignores; anything else free() raises reaches the caller."""
  b = dev.alloc(64)
  v = b.view(0, 32)
  with pytest.raises(hcq.BufferInUseError, match="views of it are alive"):
    b.free()
  assert issubclass(hcq.BufferInUseError, hcq.HcqError) and not b.freed
  del v
  b.free()
  assert b.freed


def test_graph_refuses_over_limit_dims_at_record(dev, prog):
  """Dims given at record time (a dims variable's first value) are checked when the graph is
  recorded, naming the launch and the value: a replay with unchanged values checks nothing."""
  n = 128
  a, out = dev.alloc(n * 4), dev.alloc(n * 4)
  g = hcq.GraphBuilder(dev)
  d = g.dims((2,), (2048,))
  g.launch(prog, [out, a, n], d)
  with pytest.raises(hcq.HcqError, match=r"operation 0 \(launch .*local \[2048, 1, 1\]"):
    g.record()
  g = hcq.GraphBuilder(dev)
  d = g.dims((2,), (64,))
  g.launch(prog, [out, a, n], d)
  graph = g.record()
  graph.replay(wait=True)
  with pytest.raises(hcq.HcqError, match="2048"):
    graph.replay([((2,), (2048,))])
