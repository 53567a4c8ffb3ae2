//! `hcq bench [--json] [--quick] [--check] [--budget KEY=N]`: the hot paths of ARCHITECTURE.md's
//! performance budgets, measured with a plain [`Instant`](std::time::Instant) loop
//! ([`measure`]) over the workloads of the `hcq-workloads` crate (which its criterion
//! benches run too), plus the driver's own on the simulator, through the driver's public API.
//! The simulator's internal numbers (its engines and ISA interpreter alone) are the simulator's
//! bench: `cargo bench -p hcq-sim --bench internals`.
//!
//! Every metric is a median unless its name says otherwise. A metric whose code is not in the
//! build (the simulator's, without the `sim` feature) is `None` (JSON `null`). The table marks
//! a missed budget with `MISSED`; with `--check` the run fails (exit 1) when any budget is
//! missed, and names them.

#[cfg(feature = "sim")]
pub mod driver;
pub mod graph;
mod keys;
pub mod measure;

use core::hint::black_box;

use hcq_workloads::{self as work, WorkError};
pub use keys::KEYS;
use measure::Plan;

use super::CliError;

/// `hcq bench`'s help text.
pub const HELP: &str = "\
usage: hcq bench [--json] [--quick] [--check] [--budget KEY=N]...

Measures the hot paths against the budgets in ARCHITECTURE.md and prints a table (or --json).
The simulator's internal numbers (sim_*: its engines and ISA interpreter alone) are
`cargo bench -p hcq-sim --bench internals [-- --json] [--check]` in a checkout.

options:
  --json          one JSON object: cpu, quick, then every metric (number, or null when not built)
  --quick         a CI-sized run (rough numbers)
  --check         exit 1 when any budget is missed, naming each one
  --budget KEY=N  replace KEY's budget by N (same direction: at most / at least); repeatable
";

/// Runs `hcq bench` with `args` (after the sub-command name).
pub fn main(args: &[String]) -> Result<(), CliError> {
    let (mut json_out, mut quick, mut check) = (false, false, false);
    let mut overrides: Vec<(String, f64)> = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--json" => json_out = true,
            "--quick" => quick = true,
            "--check" => check = true,
            "--budget" => {
                let v = it
                    .next()
                    .ok_or_else(|| CliError::usage("--budget needs KEY=N"))?;
                let parsed = v
                    .split_once('=')
                    .and_then(|(k, n)| Some((k, n.parse::<f64>().ok()?)));
                match parsed {
                    Some((k, n)) if KEYS.contains(&k) && n.is_finite() => {
                        overrides.push((k.to_owned(), n));
                    }
                    Some((k, _)) if !KEYS.contains(&k) => {
                        return Err(CliError::usage(format!(
                            "--budget {v}: `{k}` is not a metric (`hcq bench --quick` lists them)"
                        )));
                    }
                    _ => {
                        return Err(CliError::usage(format!(
                            "--budget {v}: expected KEY=N with a finite number N"
                        )));
                    }
                }
            }
            s => return Err(CliError::usage(format!("unknown argument `{s}`"))),
        }
    }
    if cfg!(debug_assertions) && !json_out {
        eprintln!("hcq bench: this is a debug build; build with --release for real numbers");
    }
    let mut report = run(quick).map_err(|e| CliError::failed(e.to_string()))?;
    for (k, n) in &overrides {
        report.override_budget(k, *n);
    }
    if json_out {
        println!("{}", report.to_json());
    } else {
        print!("{}", report.to_table());
    }
    let missed = report.missed();
    if check && !missed.is_empty() {
        let list: Vec<String> = missed
            .iter()
            .map(|m| {
                let v = m.value.map_or_else(|| "-".to_owned(), fmt_num);
                format!("{} = {v} {} (budget {})", m.key, m.unit, m.budget)
            })
            .collect();
        return Err(CliError::failed_with(
            format!("{} budget(s) missed: {}", missed.len(), list.join("; ")),
            "profile the missed paths (README.md, Performance) or run without --check to see \
             the whole table; rerun on a quiet machine, since load skews timings",
        ));
    }
    Ok(())
}

/// Which way a budget goes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Budget {
    /// No budget for this metric.
    None,
    /// The value must be at most this.
    AtMost(f64),
    /// The value must be at least this.
    AtLeast(f64),
}

impl core::fmt::Display for Budget {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            Budget::None => Ok(()),
            Budget::AtMost(b) => write!(f, "<= {}", fmt_num(b)),
            Budget::AtLeast(b) => write!(f, ">= {}", fmt_num(b)),
        }
    }
}

impl Budget {
    /// Whether `v` meets the budget (`None` when there is no budget).
    #[must_use]
    pub fn met(self, v: f64) -> Option<bool> {
        match self {
            Budget::None => None,
            Budget::AtMost(b) => Some(v <= b),
            Budget::AtLeast(b) => Some(v >= b),
        }
    }
}

/// One line of the report.
#[derive(Clone, Debug, PartialEq)]
pub struct Metric {
    /// JSON key.
    pub key: &'static str,
    /// The value, or `None` when the code it measures has not landed.
    pub value: Option<f64>,
    /// Unit for the table.
    pub unit: &'static str,
    /// The budget (ARCHITECTURE.md, Performance budgets).
    pub budget: Budget,
    /// One-line description for the table.
    pub what: &'static str,
}

/// Everything `hcq bench` measured.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    /// CPU model (`model name` in /proc/cpuinfo).
    pub cpu: String,
    /// Whether this was a `--quick` run.
    pub quick: bool,
    /// The metrics, in table order.
    pub metrics: Vec<Metric>,
}

impl Report {
    /// Replaces `key`'s budget by `n`, keeping its direction (at most when it had none).
    pub fn override_budget(&mut self, key: &str, n: f64) {
        for m in self.metrics.iter_mut().filter(|m| m.key == key) {
            m.budget = match m.budget {
                Budget::AtLeast(_) => Budget::AtLeast(n),
                Budget::AtMost(_) | Budget::None => Budget::AtMost(n),
            };
        }
    }

    /// The measured metrics that miss their budget.
    #[must_use]
    pub fn missed(&self) -> Vec<&Metric> {
        self.metrics
            .iter()
            .filter(|m| m.value.and_then(|v| m.budget.met(v)) == Some(false))
            .collect()
    }

    /// The report as one JSON object: `cpu`, `quick`, then every metric (number or null).
    #[must_use]
    pub fn to_json(&self) -> serde_json::Value {
        let mut m = serde_json::Map::new();
        m.insert("cpu".into(), self.cpu.clone().into());
        m.insert("quick".into(), self.quick.into());
        for x in &self.metrics {
            let v = x
                .value
                .filter(|v| v.is_finite())
                .and_then(serde_json::Number::from_f64)
                .map_or(serde_json::Value::Null, serde_json::Value::Number);
            m.insert(x.key.into(), v);
        }
        serde_json::Value::Object(m)
    }

    /// The report as a text table.
    #[must_use]
    pub fn to_table(&self) -> String {
        let mut s = format!(
            "cpu: {}{}\n",
            self.cpu,
            if self.quick {
                " (--quick: rough numbers)"
            } else {
                ""
            }
        );
        s.push_str(&format!(
            "{:<28} {:>14} {:<9} {:>14}  {}\n",
            "metric", "value", "unit", "budget", "what"
        ));
        for m in &self.metrics {
            let v = m.value.map_or_else(|| "-".to_string(), fmt_num);
            let b = m.budget.to_string();
            let flag = match m.value.and_then(|v| m.budget.met(v)) {
                Some(false) => " MISSED",
                _ => "",
            };
            s.push_str(&format!(
                "{:<28} {:>14} {:<9} {:>14}{flag}  {}\n",
                m.key, v, m.unit, b, m.what
            ));
        }
        s
    }
}

/// A number with 3 significant digits, or in engineering notation when large.
#[must_use]
pub fn fmt_num(v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    let a = v.abs();
    if a >= 1e12 || (a > 0.0 && a < 0.01) {
        format!("{v:.3e}")
    } else if a >= 1e9 {
        format!("{:.3}e9", v / 1e9)
    } else if a >= 1e6 {
        format!("{:.3}e6", v / 1e6)
    } else if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// The CPU model from /proc/cpuinfo (`"unknown"` if it cannot be read).
#[must_use]
pub fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into())
}

fn ns(plan: &Plan, f: impl FnMut()) -> Option<f64> {
    Some(measure::run(plan, f).median())
}

fn ratio(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => Some(a / b),
        _ => None,
    }
}

/// Runs every benchmark.
///
/// # Errors
/// If a workload cannot be set up (a bug: the inputs are fixed).
pub fn run(quick: bool) -> Result<Report, WorkError> {
    let plan = if quick { Plan::QUICK } else { Plan::FULL };
    let mut metrics = core_metrics(&plan)?;
    let drv = driver_metrics(quick, &plan)?;
    metrics.extend(driver_rows(&drv));
    metrics.extend(graph_rows(&drv));
    Ok(Report {
        cpu: cpu_model(),
        quick,
        metrics,
    })
}

fn metric(
    key: &'static str,
    value: Option<f64>,
    unit: &'static str,
    budget: Budget,
    what: &'static str,
) -> Metric {
    Metric {
        key,
        value,
        unit,
        budget,
        what,
    }
}

/// Core's hot paths (the `hcq-workloads` workloads): building, submitting, patching, decoding.
fn core_metrics(p: &Plan) -> Result<Vec<Metric>, WorkError> {
    let mut build = work::BuildLaunch::new()?;
    let build_launch_ns = ns(p, || {
        black_box(build.run().is_ok());
    });

    let mut submit = work::RingSubmit::new()?;
    let ring_submit_ns = ns(p, || {
        black_box(submit.run().is_ok());
    });

    let mut copy = work::Memcpy105::new()?;
    let memcpy_ns = ns(p, || {
        black_box(copy.run());
    });

    let mut patch = work::PatchLaunch::new()?;
    let update_exec_ns = ns(p, || {
        black_box(patch.update_exec().is_ok());
    });
    let update_wait_ns = ns(p, || {
        black_box(patch.update_wait().is_ok());
    });
    let update_signal_ns = ns(p, || {
        black_box(patch.update_signal().is_ok());
    });

    let mut sdma = work::SdmaCopy::new()?;
    let sdma_ns = ns(p, || {
        black_box(sdma.run().is_ok());
    });

    let decode = work::Decode::new()?;
    let decode_stream_ns = ns(p, || {
        black_box(decode.run().is_some());
    });
    // CAST: the stream is ~27k dwords.
    let decode_dwords = decode.dwords() as f64;
    let decode_dwords_per_s = decode_stream_ns.map(|t| decode_dwords / t * 1e9);

    let mut arena = work::ArenaAlloc::new()?;
    let arena_ns = ns(p, || {
        black_box(arena.run().is_ok());
    });

    Ok(vec![
        metric(
            "build_launch_ns",
            build_launch_ns,
            "ns",
            Budget::AtMost(20.0),
            "wait + barrier + exec + signal (105 dwords) into a Pm4List",
        ),
        metric(
            "ring_submit_ns",
            ring_submit_ns,
            "ns",
            Budget::AtMost(15.0),
            "reserve + copy + publish 105 dwords into a 1 MiB PM4 ring, doorbell store",
        ),
        metric(
            "memcpy_105_dwords_ns",
            memcpy_ns,
            "ns",
            Budget::None,
            "floor: bare copy of the same 105 dwords into the same ring",
        ),
        metric(
            "ring_submit_over_memcpy",
            ratio(ring_submit_ns, memcpy_ns),
            "x",
            Budget::None,
            "ring_submit_ns / memcpy_105_dwords_ns",
        ),
        metric(
            "update_exec_ns",
            update_exec_ns,
            "ns",
            Budget::AtMost(3.0),
            "patch launch dims (verifies DISPATCH_DIRECT and START headers)",
        ),
        metric(
            "update_wait_ns",
            update_wait_ns,
            "ns",
            Budget::AtMost(3.0),
            "patch a wait value (verifies WAIT_REG_MEM header)",
        ),
        metric(
            "update_signal_ns",
            update_signal_ns,
            "ns",
            Budget::AtMost(3.0),
            "patch a signal value (verifies both RELEASE_MEM headers)",
        ),
        metric(
            "sdma_copy_64mib_build_ns",
            sdma_ns,
            "ns",
            Budget::None,
            "64 MiB SDMA copy into an SdmaList (GCR + 16 COPY_LINEAR + GCR)",
        ),
        metric(
            "decode_dwords_per_s",
            decode_dwords_per_s,
            "dw/s",
            Budget::None,
            "PM4 decoder over a stream of 256 launches",
        ),
        metric(
            "arena_alloc_ns",
            arena_ns,
            "ns",
            Budget::None,
            "TimelineArena alloc of 256 B kernargs, completion 32 values behind",
        ),
    ])
}

/// Graph patching (core) and the driver on the simulator (`None` without the `sim` feature).
fn driver_metrics(quick: bool, p: &Plan) -> Result<DriverMetrics, WorkError> {
    let graph =
        graph::Patch1000::new(work::ARCH).map_err(|e| WorkError::Sim(format!("graph: {e}")))?;
    // The patch and its floor in alternating batches: their ratio is the budget.
    let graph = core::cell::RefCell::new(graph);
    let pair = measure::run_pair(
        p,
        || {
            black_box(graph.borrow_mut().patch_once().is_ok());
        },
        || {
            black_box(graph.borrow_mut().store_floor_once());
        },
    );
    let graph_patch_ns = Some(pair.a.median());
    let graph_floor_ns = Some(pair.b.median());
    let graph_over_floor = Some(pair.ratio);
    // And against a loop written for this one graph, with the same checks: what the table's
    // generality costs.
    let hand = measure::run_pair(
        p,
        || {
            black_box(graph.borrow_mut().patch_once().is_ok());
        },
        || {
            black_box(graph.borrow_mut().hand_once().is_some());
        },
    );
    let mut tl = graph::TimelinePatch::new()?;
    let graph_timeline_ns = ns(p, || {
        black_box(tl.run().is_ok());
    });
    #[cfg(feature = "sim")]
    let (launches, submit, launch_ns, launch_guarded_ns, launch_aql_ns) = {
        let d = driver::run(quick)?;
        (
            Some(d.launches_per_s),
            Some(d.graph_submit_ns),
            Some(d.launch_ns),
            Some(d.launch_guarded_ns),
            Some(d.launch_aql_ns),
        )
    };
    #[cfg(not(feature = "sim"))]
    let (launches, submit, launch_ns, launch_guarded_ns, launch_aql_ns) =
        (None, None, None, None, None);
    #[cfg(feature = "sim")]
    let demo_copy_in = Some(driver::demo_copy_in_gb_per_s(quick)?);
    #[cfg(not(feature = "sim"))]
    let demo_copy_in = None;
    Ok(DriverMetrics {
        launches_per_s: launches,
        launch_ns,
        launch_guarded_ns,
        launch_aql_ns,
        graph_patch_1000_ns: graph_patch_ns,
        graph_patch_1000_floor_ns: graph_floor_ns,
        graph_patch_1000_over_floor: graph_over_floor,
        graph_patch_1000_hand_ns: Some(hand.b.median()),
        graph_patch_1000_over_hand: Some(hand.ratio),
        graph_patch_1000_timeline_ns: graph_timeline_ns,
        graph_replay_submit_ns: submit,
        demo_copy_in_gb_per_s: demo_copy_in,
    })
}

fn driver_rows(drv: &DriverMetrics) -> Vec<Metric> {
    vec![
        metric(
            "driver_launches_per_s",
            drv.launches_per_s,
            "1/s",
            Budget::None,
            "fill launches through the driver API on the deterministic sim, batches of 500 + synchronize",
        ),
        metric(
            "driver_launch_ns",
            drv.launch_ns,
            "ns",
            Budget::AtMost(200.0),
            "one launch builder launch of a kernel with 13 hidden args: checks, hidden args, kernarg alloc, packets, ring, doorbell (host only, goal 100)",
        ),
        metric(
            "driver_launch_aql_ns",
            drv.launch_aql_ns,
            "ns",
            Budget::AtMost(200.0),
            "driver_launch_ns on an AQL compute queue: the kernel dispatch packet and the PM4_IB packets (wait + barrier, signal) around it, headers stored last (host only)",
        ),
        metric(
            "driver_launch_guarded_ns",
            drv.launch_guarded_ns,
            "ns",
            Budget::None,
            "driver_launch_ns with the simulator's host guard on (SimConfig::host_guard, as hcq's tests run): the doorbell's and first page accesses' faults and protection changes",
        ),
        metric(
            "demo_copy_in_gb_per_s",
            drv.demo_copy_in_gb_per_s,
            "GB/s",
            Budget::AtLeast(2.0),
            "hcq demo's copy in on the sim: 2 x 64 MiB host -> fresh VRAM through staging + SDMA",
        ),
    ]
}

fn graph_rows(drv: &DriverMetrics) -> Vec<Metric> {
    vec![
        metric(
            "graph_patch_1000_ns",
            drv.graph_patch_1000_ns,
            "ns",
            // Budgeted as a ratio to its floor (graph_patch_1000_over_floor): 3 us is below
            // what plain stores of its 8000 dwords take on a small shared machine.
            Budget::None,
            "1000-kernel graph replay patch, every kernel's dims + input buffer change",
        ),
        metric(
            "graph_patch_1000_floor_ns",
            drv.graph_patch_1000_floor_ns,
            "ns",
            Budget::None,
            "plain stores of the dwords graph_patch_1000_ns writes, same places (its floor)",
        ),
        metric(
            "graph_patch_1000_over_floor",
            drv.graph_patch_1000_over_floor,
            "x",
            Budget::AtMost(2.0),
            "graph_patch_1000_ns / graph_patch_1000_floor_ns: median of alternating batch pairs",
        ),
        metric(
            "graph_patch_1000_hand_ns",
            drv.graph_patch_1000_hand_ns,
            "ns",
            Budget::None,
            "the same replay by a loop written for this graph, same checks, same dwords written",
        ),
        metric(
            "graph_patch_1000_over_hand",
            drv.graph_patch_1000_over_hand,
            "x",
            Budget::None,
            "graph_patch_1000_ns / graph_patch_1000_hand_ns: the table's generality, alternating batches",
        ),
        metric(
            "graph_patch_1000_timeline_ns",
            drv.graph_patch_1000_timeline_ns,
            "ns",
            Budget::AtMost(100.0),
            "1000-kernel graph replay patch, kickoff + timeline values change (typical)",
        ),
        metric(
            "graph_replay_submit_ns",
            drv.graph_replay_submit_ns,
            "ns",
            Budget::None,
            "submit a bound 1000-kernel graph (timeline wait + IB + signal + doorbell) on the sim",
        ),
    ]
}

/// The driver's numbers: launches and graph submission on the simulator (`None` without the
/// `sim` feature), graph patching.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DriverMetrics {
    /// Launches per second through the full API.
    pub launches_per_s: Option<f64>,
    /// One launch through the checked builder (host cost).
    pub launch_ns: Option<f64>,
    /// The same with the simulator's host guard on.
    pub launch_guarded_ns: Option<f64>,
    /// One launch through the checked builder on an AQL queue (host cost).
    pub launch_aql_ns: Option<f64>,
    /// Patching a 1000-kernel graph where every kernel's dims and the input buffer change.
    pub graph_patch_1000_ns: Option<f64>,
    /// Plain stores of the dwords that patch writes (its floor).
    pub graph_patch_1000_floor_ns: Option<f64>,
    /// Their ratio, measured in alternating batches (the budgeted number).
    pub graph_patch_1000_over_floor: Option<f64>,
    /// The same replay by a loop written for this one graph, with the same checks.
    pub graph_patch_1000_hand_ns: Option<f64>,
    /// `graph_patch_1000_ns` over it, measured in alternating batches.
    pub graph_patch_1000_over_hand: Option<f64>,
    /// Patching a 1000-kernel graph where only the kickoff and timeline values change.
    pub graph_patch_1000_timeline_ns: Option<f64>,
    /// Submitting it.
    pub graph_replay_submit_ns: Option<f64>,
    /// `hcq demo`'s copy in on the simulator.
    pub demo_copy_in_gb_per_s: Option<f64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measured_key_lists_are_keys() {
        for k in keys::ALWAYS_MEASURED.iter().chain(keys::MEASURED_ON_SIM) {
            assert!(KEYS.contains(k), "{k} is not in KEYS");
        }
        let mut all = KEYS.to_vec();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), KEYS.len(), "a key listed twice");
    }

    #[test]
    fn workloads_set_up() {
        let b = work::BuildLaunch::new().unwrap();
        assert_eq!(b.dwords().len(), work::LAUNCH_DWORDS);
        let mut r = work::RingSubmit::new().unwrap();
        // Enough submits to wrap the 1 MiB ring twice: the consumer model keeps up.
        let per = u64::try_from(work::LAUNCH_DWORDS).unwrap();
        let n = 2 * r.ring_dwords() / work::LAUNCH_DWORDS + 3;
        let mut last = 0;
        for _ in 0..n {
            last = r.run().unwrap();
        }
        assert_eq!(last, (u64::try_from(n).unwrap() + 1) * per);
        let mut p = work::PatchLaunch::new().unwrap();
        assert_eq!(p.update_exec().unwrap(), 4);
        assert_eq!(p.update_wait().unwrap(), 5);
        assert_eq!(p.update_signal().unwrap(), 6);
        let mut s = work::SdmaCopy::new().unwrap();
        assert_eq!(s.run().unwrap(), 5 + 16 * 7 + 5);
        let d = work::Decode::new().unwrap();
        assert_eq!(d.dwords(), work::LAUNCH_DWORDS * work::DECODE_LAUNCHES);
        let mut a = work::ArenaAlloc::new().unwrap();
        assert_eq!(a.run().unwrap(), 256);
        for _ in 0..100_000 {
            a.run().unwrap();
        }
        let mut m = work::Memcpy105::new().unwrap();
        assert_eq!(m.run(), 0);
        assert_eq!(m.run(), 105);
    }

    #[test]
    fn every_key_is_reported() {
        let metrics = KEYS
            .iter()
            .map(|&key| Metric {
                key,
                value: None,
                unit: "",
                budget: Budget::None,
                what: "",
            })
            .collect();
        let r = Report {
            cpu: "x".into(),
            quick: true,
            metrics,
        };
        let j = r.to_json();
        for k in KEYS {
            assert_eq!(j[k], serde_json::Value::Null, "{k}");
        }
        assert_eq!(j["cpu"], "x");
        assert_eq!(Budget::AtMost(3.0).met(3.0), Some(true));
        assert_eq!(Budget::AtLeast(3.0).met(2.0), Some(false));
        assert_eq!(fmt_num(8.456), "8.46");
        assert_eq!(fmt_num(123.4), "123");
        assert_eq!(fmt_num(2.5e8), "250.000e6");
        assert_eq!(fmt_num(1e30), "1.000e30");
        assert_eq!(fmt_num(1e-4), "1.000e-4");
        assert_eq!(fmt_num(0.0), "0.00");
    }
}
