//! Per-launch profiling: the records a device keeps of its profiled launches, and the GPU
//! clock they are converted from. Launches add to them ([`crate::Program`]); the device holds
//! them and hands them out.

#[allow(clippy::wildcard_imports)]
use super::*;
use hcq_core::kfd as abi;

/// The GPU timestamp counter runs at 100 MHz (gfx10+): 10 ns per tick.
pub const GPU_TICK_NS: u64 = 10;
/// Profiling records kept before the oldest are harvested (each holds two signal slots).
const MAX_PENDING_RECORDS: usize = 128;

/// One profiled launch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaunchRecord {
    /// Kernel name.
    pub name: String,
    /// Host time (CLOCK_MONOTONIC_RAW ns) the kernel started, converted from the GPU clock.
    pub start_ns: u64,
    /// Host time it ended.
    pub end_ns: u64,
}

impl LaunchRecord {
    /// GPU execution time.
    #[must_use]
    pub fn duration(&self) -> Duration {
        Duration::from_nanos(self.end_ns.saturating_sub(self.start_ns))
    }
}

#[derive(Debug, Default)]
pub(crate) struct Profile {
    pending: Vec<(String, Signal, Signal)>,
    done: Vec<LaunchRecord>,
    /// (gpu ticks, cpu ns) sampled together by GET_CLOCK_COUNTERS.
    clock: Option<(u64, u64)>,
}

impl DeviceInner {
    /// GET_CLOCK_COUNTERS: the GPU clock and CLOCK_MONOTONIC_RAW at the same instant.
    pub(crate) fn clock_counters(&self) -> Result<(u64, u64)> {
        let mut args = abi::GetClockCountersArgs {
            gpu_id: self.info.gpu_id,
            ..Default::default()
        };
        self.kfd
            .core
            .ioctl(abi::AMDKFD_IOC_GET_CLOCK_COUNTERS, &mut args)
            .map_err(|e| Error::sys("GET_CLOCK_COUNTERS", e))?;
        Ok((args.gpu_clock_counter, args.cpu_clock_counter))
    }

    /// Converts GPU timestamp ticks to host ns using the sampled clock pair.
    fn gpu_to_host(clock: (u64, u64), ticks: u64) -> u64 {
        let (gpu, cpu) = clock;
        let delta = i128::from(ticks) - i128::from(gpu);
        let ns = i128::from(cpu) + delta * i128::from(GPU_TICK_NS);
        u64::try_from(ns.max(0)).unwrap_or(u64::MAX)
    }

    /// Keeps the launch of kernel `name` whose start and end timestamps `start` and `end`
    /// receive, harvesting the pending ones when there are too many.
    pub(crate) fn record_launch(&self, name: &str, start: Signal, end: Signal) -> Result<()> {
        let mut p = lock(&self.profile);
        p.pending.push((name.to_owned(), start, end));
        if p.pending.len() >= MAX_PENDING_RECORDS {
            self.harvest(&mut p)?;
        }
        Ok(())
    }

    /// Waits for the pending profiled launches and converts their timestamps.
    fn harvest(&self, profile: &mut Profile) -> Result<()> {
        if profile.pending.is_empty() {
            return Ok(());
        }
        let last = self.last_value();
        self.wait_value(last)?;
        let clock = match profile.clock {
            Some(c) => c,
            None => {
                let c = self.clock_counters()?;
                profile.clock = Some(c);
                c
            }
        };
        for (name, st, en) in profile.pending.drain(..) {
            profile.done.push(LaunchRecord {
                name,
                start_ns: Self::gpu_to_host(clock, st.start_ts()),
                end_ns: Self::gpu_to_host(clock, en.start_ts()),
            });
        }
        Ok(())
    }
}

impl Device {
    /// Turns per-launch profiling on or off.
    pub fn set_profiling(&self, on: bool) {
        let _p = lock(&self.inner.profile);
        self.inner.profiling.store(on, Ordering::Relaxed);
    }

    /// Waits for the profiled launches so far and returns their records (oldest first).
    ///
    /// # Errors
    /// A failed wait or GET_CLOCK_COUNTERS.
    pub fn take_profile(&self) -> Result<Vec<LaunchRecord>> {
        let mut p = lock(&self.inner.profile);
        self.inner.harvest(&mut p)?;
        Ok(core::mem::take(&mut p.done))
    }

    /// The GPU clock and CLOCK_MONOTONIC_RAW (ns), sampled together.
    ///
    /// # Errors
    /// GET_CLOCK_COUNTERS failing.
    pub fn clock_counters(&self) -> Result<(u64, u64)> {
        self.inner.clock_counters()
    }
}
