//! What an executing packet may touch besides its queue's own state: the GPU's bus (with the
//! fault injection's addresses), the kernel registry, the clock, and the race detector's
//! recorder and in-flight dispatches. Every memory access of a packet goes through [`Env`].

use super::Clock;
use super::bus::GpuBus;
use super::flight::{FlightCell, Recorder};
use crate::config::DispatchMode;
use crate::stand_ins::{KernelMem, KernelRegistry};
use crate::vm::{Access, VmFault, VmFaultKind};

/// Everything an executing packet may touch besides its queue's own state.
pub(crate) struct Env<'a> {
    pub(crate) bus: &'a dyn GpuBus,
    pub(crate) faults: &'a [u64],
    pub(crate) registry: &'a KernelRegistry,
    pub(crate) clock: &'a Clock,
    /// The current operation's byte ranges (recorded while a dispatch is in flight).
    pub(crate) rec: &'a Recorder,
    /// In-flight dispatches of every queue (the race detector).
    pub(crate) flight: &'a FlightCell,
}

impl Env<'_> {
    fn injected(&self, va: u64, len: usize, access: Access) -> Result<(), VmFault> {
        // CAST: usize -> u64 widens.
        let len = len as u64;
        match self.faults.iter().find(|&&f| f.wrapping_sub(va) < len) {
            Some(&f) => Err(VmFault {
                va: f,
                access,
                kind: VmFaultKind::Injected,
            }),
            None => Ok(()),
        }
    }

    /// The GPU clock (the `SimKfd`'s when attached: one clock for timestamps and
    /// GET_CLOCK_COUNTERS).
    pub(crate) fn now(&self) -> u64 {
        self.clock.now()
    }

    /// Lets GPU time pass for a dispatch that executed `stats`: its modelled duration on
    /// the bus's GPU ([`crate::isa::model`]), in 10 ns ticks, on the engines' clock. A bus
    /// without a shape models no duration. Virtual clocks only: in
    /// threaded mode the clock is real time and moves by itself.
    pub(crate) fn spend(&self, stats: &crate::isa::Stats) {
        let Some(shape) = self.bus.gpu_shape() else {
            return;
        };
        let ticks = stats
            .modelled_ns(&shape)
            .div_ceil(1_000_000_000 / super::GPU_CLOCK_HZ);
        self.clock.advance(ticks);
    }

    pub(crate) fn read(&self, va: u64, buf: &mut [u8], access: Access) -> Result<(), VmFault> {
        self.injected(va, buf.len(), access)?;
        self.rec.read(va, buf.len());
        self.bus.read(va, buf, access)
    }

    /// A read (recorded) whose bytes the CPU wrote after the last HDP flush read as GPU
    /// engines see them instead of faulting ([`isa::Memory::read_visible`]).
    pub(crate) fn read_visible(&self, va: u64, buf: &mut [u8]) -> Result<(), VmFault> {
        self.injected(va, buf.len(), Access::Read)?;
        self.rec.read(va, buf.len());
        self.bus.read_visible(va, buf)
    }

    /// A read the race detector does not record (a scalar-cache line fill: what the kernel
    /// uses of it is recorded).
    pub(crate) fn read_unrecorded(
        &self,
        va: u64,
        buf: &mut [u8],
        access: Access,
    ) -> Result<(), VmFault> {
        self.injected(va, buf.len(), access)?;
        self.bus.read(va, buf, access)
    }

    /// A read of memory past this GPU's L2 (an engine that is no L2 client).
    pub(crate) fn read_through(&self, va: u64, buf: &mut [u8]) -> Result<(), VmFault> {
        self.injected(va, buf.len(), Access::Read)?;
        self.rec.read(va, buf.len());
        self.bus.read_through(va, buf)
    }

    pub(crate) fn write(&self, va: u64, data: &[u8]) -> Result<(), VmFault> {
        self.injected(va, data.len(), Access::Write)?;
        self.rec.write(va, data.len());
        self.bus.write(va, data)
    }

    /// A write past the L2's write-back (a memory-controller destination).
    pub(crate) fn write_through(&self, va: u64, data: &[u8]) -> Result<(), VmFault> {
        self.injected(va, data.len(), Access::Write)?;
        self.rec.write(va, data.len());
        self.bus.write_through(va, data)
    }

    /// A memory wait's poll: not an access that races (polling what another engine writes is
    /// how engines synchronise); a satisfied wait retires the dispatches that wrote the value.
    pub(crate) fn poll_u32(&self, va: u64) -> Result<u32, VmFault> {
        self.injected(va, 4, Access::Read)?;
        self.bus.load_u32(va)
    }

    pub(crate) fn store_u32(&self, va: u64, v: u32) -> Result<(), VmFault> {
        self.injected(va, 4, Access::Write)?;
        self.rec.write(va, 4);
        self.bus.store_u32(va, v)
    }

    pub(crate) fn store_u64(&self, va: u64, v: u64) -> Result<(), VmFault> {
        self.injected(va, 8, Access::Write)?;
        self.rec.write(va, 8);
        self.bus.store_u64(va, v)
    }

    /// A memory wait on `va` was satisfied.
    pub(crate) fn wait_satisfied(&self, va: u64) {
        self.flight.borrow_mut().retire_writers_of(va);
    }

    pub(crate) fn asynchronous(&self) -> bool {
        self.flight.borrow().mode() == DispatchMode::Async
    }
}

impl KernelMem for Env<'_> {
    fn read(&self, va: u64, buf: &mut [u8]) -> Result<(), VmFault> {
        Env::read(self, va, buf, Access::Read)
    }
    fn write(&self, va: u64, data: &[u8]) -> Result<(), VmFault> {
        Env::write(self, va, data)
    }
}
