"""Runs one tinygrad test file so that a GPU fault in one test does not fail the tests after it.

KFD does not recover a process after a GPU fault (the queues are evicted and every later wait
raises), so in one pytest process one faulting test fails every test after it. This runner
runs the file's tests in one pytest process until a test leaves the GPU faulted, then goes on
with the remaining tests in a new process; a test that kills or hangs its process is counted
as failed ("died"/"timeout") and the run goes on after it. Nothing is skipped or retried: each
test runs once, and each fault is named with the test that caused it.

As a script (called by scripts/tinygrad14-suite.sh and tinygrad14-hcq-suite.sh):

  python tinygrad14_isolate.py --log FILE [--timeout S] [--label L] -- PREFIX... --tests TEST_IDS...

PREFIX is the command that runs Python for the tests (e.g. `python -m hcq.mockgpu --target
gfx1100 -- python`); `-m pytest -q ... -p tinygrad14_isolate IDS` is appended. Prints one line:
`L passed P failed F skipped S processes N wall Ws` and, per failed test, `  FAILED id: reason`.

As a pytest plugin (`-p tinygrad14_isolate`, this directory on PYTHONPATH): writes each test's
outcome to $TG14_RESULTS and stops the session after a test that left a device faulted (a
tinygrad device whose `error_state` is set, or a fault the simulator behind `hcq.mockgpu`
recorded).
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import time

# ---------------------------------------------------------------- the pytest plugin

_faults_before = 0


def _sim_faults() -> int:
  """How many GPU faults the simulator behind `python -m hcq.mockgpu` recorded (0 without one)."""
  mg = sys.modules.get("hcq.mockgpu")
  s = getattr(mg, "_sim", None) if mg is not None else None
  if s is None: return 0
  try: return len(s.fault_reasons())
  except Exception: return 0


def _faulted_devices() -> list[str]:
  dev_mod = sys.modules.get("tinygrad.device")
  if dev_mod is None: return []
  Device = dev_mod.Device
  out = []
  for dn in list(getattr(Device, "_opened_devices", ())):
    try: d = Device[dn]
    except Exception: continue
    if getattr(d, "error_state", None) is not None: out.append(dn)
  return out


def _write(line: str) -> None:
  path = os.environ.get("TG14_RESULTS")
  if not path: return
  with open(path, "a") as f: f.write(line.replace("\n", " ") + "\n")


def pytest_runtest_logstart(nodeid, location):
  _write(f"start\t{nodeid}\t")


def pytest_runtest_logreport(report):
  if report.when == "call" or report.failed or (report.when == "setup" and report.skipped):
    if report.passed and report.when != "call": return
    outcome = "passed" if report.passed else ("skipped" if report.skipped else "failed")
    msg = ""
    if report.failed:
      crash = getattr(report.longrepr, "reprcrash", None)
      msg = crash.message.splitlines()[0] if crash is not None and crash.message else str(report.longrepr).splitlines()[-1]
      if report.when != "call": msg = f"({report.when}) {msg}"
    crash = getattr(report.longrepr, "reprcrash", None) if report.failed else None
    if crash is not None and _FAULT_WORDS.search(crash.message or ""): _failed_with_fault.add(report.nodeid)
    _write(f"{outcome}\t{report.nodeid}\t{msg[:300]}")


# A failure whose message names a GPU fault or hang (hcq's own device has no `error_state`; its
# errors say what the GPU did): the rest run in a new process too. Restarting hides nothing.
_FAULT_WORDS = re.compile(os.environ.get("TG14_RESTART_ON", r"\b(MMU|HW|GPU|VM|page) fault|\bhang|\btimed out|\btimeout\b|\bHcqError"), re.I)
_failed_with_fault: set[str] = set()


def pytest_runtest_makereport(item, call):
  global _faults_before
  if call.when != "teardown": return
  devs, n = _faulted_devices(), _sim_faults()
  if devs or n > _faults_before or item.nodeid in _failed_with_fault:
    why = (f"GPU fault ({', '.join(devs) or 'simulator'})" if devs or n > _faults_before else "the failure names a fault or hang")
    _write(f"fault\t{item.nodeid}\t{why}")
    item.session.shouldstop = f"{why} after {item.nodeid}: the rest run in a new process"
  _faults_before = n


# ---------------------------------------------------------------- the runner

def _read(path: str) -> list[tuple[str, str, str]]:
  if not os.path.exists(path): return []
  rows = []
  with open(path) as f:
    for line in f:
      parts = line.rstrip("\n").split("\t")
      if len(parts) == 3: rows.append((parts[0], parts[1], parts[2]))
  return rows


def main(argv: list[str]) -> int:
  log, timeout, label = None, 1800.0, "tests"
  i = 0
  while i < len(argv) and argv[i] != "--":
    if argv[i] == "--log": log = argv[i + 1]; i += 2
    elif argv[i] == "--timeout": timeout = float(argv[i + 1]); i += 2
    elif argv[i] == "--label": label = argv[i + 1]; i += 2
    else: print(f"tinygrad14_isolate: unknown option {argv[i]}", file=sys.stderr); return 2
  rest = argv[i + 1:]
  if "--tests" not in rest or log is None:
    print("usage: tinygrad14_isolate.py --log FILE [--timeout S] [--label L] -- PREFIX... --tests IDS...", file=sys.stderr)
    return 2
  k = len(rest) - 1 - rest[::-1].index("--tests")
  prefix, ids = rest[:k], rest[k + 1:]
  results = log + ".results"
  open(log, "w").close()
  open(results, "w").close()
  outcome: dict[str, tuple[str, str]] = {}
  remaining, procs, t0 = list(ids), 0, time.time()
  env = dict(os.environ, TG14_RESULTS=results)
  env["PYTHONPATH"] = os.path.dirname(os.path.abspath(__file__)) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
  while remaining:
    procs += 1
    cmd = prefix + ["-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=", "-p", "tinygrad14_isolate"] + remaining
    before = len(_read(results))
    with open(log, "a") as lf:
      lf.write(f"=== process {procs}: {len(remaining)} tests from {remaining[0]}\n"); lf.flush()
      try: rc = subprocess.run(cmd, stdout=lf, stderr=subprocess.STDOUT, env=env, timeout=timeout).returncode
      except subprocess.TimeoutExpired: rc = "timeout"
    rows = _read(results)[before:]
    started = None
    for kind, nodeid, msg in rows:
      if kind == "start": started = nodeid
      elif kind == "fault":
        o, m = outcome.get(nodeid, ("failed", ""))
        outcome[nodeid] = (o, (m + "; " if m else "") + f"new process after it: {msg}")
      else:
        outcome[nodeid] = (kind, msg)
        started = None if started == nodeid else started
    # A test that started and never reported: it killed or hung the process.
    if started is not None and started not in outcome:
      outcome[started] = ("failed", f"process died in this test (exit {rc})" if rc != "timeout" else f"process timed out ({timeout:.0f} s) in this test")
    done = {nodeid for nodeid in outcome}
    nxt = [t for t in remaining if t not in done and not any(t == n or n.startswith(t + "::") for n in done)]
    if len(nxt) == len(remaining):
      # No test reported (collection error, crash at start): count the first one failed and go on.
      outcome[remaining[0]] = ("failed", f"no test ran in this process (exit {rc}; see the log)")
      nxt = remaining[1:]
    remaining = nxt
  p = sum(1 for o, _ in outcome.values() if o == "passed")
  f = sum(1 for o, _ in outcome.values() if o == "failed")
  s = sum(1 for o, _ in outcome.values() if o == "skipped")
  print(f"{label} passed {p} failed {f} skipped {s} processes {procs} wall {time.time() - t0:.0f}s")
  for nodeid, (o, msg) in outcome.items():
    if o == "failed": print(f"  FAILED {nodeid}: {msg}")
    elif "new process after it" in msg: print(f"  {o} {nodeid}: {msg}")
  return 0


if __name__ == "__main__":
  sys.exit(main(sys.argv[1:]))
