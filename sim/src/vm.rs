//! The GPU's virtual-memory vocabulary, shared by everything that touches GPU memory (the
//! page tables in `gpu`, the engines' [`GpuBus`](crate::engine::GpuBus), the instruction
//! interpreter, host kernels): what an access wanted ([`Access`]) and why the page table
//! refused it ([`VmFault`]). It names no other module of the crate, so each of them can use it.

use core::fmt;
use hcq_core::kfd::{HsaMemoryExceptionData, MemoryExceptionFailure};

/// What a GPU access wanted to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Access {
    /// Load.
    Read,
    /// Store.
    Write,
    /// Instruction fetch (the program address of a dispatch).
    Execute,
}

impl fmt::Display for Access {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Access::Read => "read",
            Access::Write => "write",
            Access::Execute => "execute",
        })
    }
}

/// Why the GPU's page table refused an access.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum VmFaultKind {
    /// No mapping for this GPU at the address.
    NotPresent,
    /// A write to a mapping without write permission.
    ReadOnly,
    /// An instruction fetch from a mapping without execute permission.
    NoExecute,
    /// The address was marked faulting by fault injection.
    Injected,
    /// A read of VRAM bytes the CPU wrote through its mapping after the last HDP flush.
    HdpStale,
}

/// A GPU page fault: the first byte address the access could not reach.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct VmFault {
    /// The exact faulting address.
    pub va: u64,
    /// What the access wanted.
    pub access: Access,
    /// Why it failed.
    pub kind: VmFaultKind,
}

/// GPU page size used for the fault address KFD reports.
pub const GPU_PAGE_SIZE: u64 = 4096;

impl VmFault {
    /// The KFD `memory_exception_data` for this fault on GPU `gpu_id`, laid out as
    /// `kfd_set_dbg_ev_from_interrupt` does (kfd_validation.md §10): the page address,
    /// `NotPresent` for a missing mapping, `ReadOnly` when the access was a write.
    #[must_use]
    pub fn memory_exception(&self, gpu_id: u32) -> HsaMemoryExceptionData {
        HsaMemoryExceptionData {
            failure: MemoryExceptionFailure {
                not_present: u32::from(matches!(
                    self.kind,
                    VmFaultKind::NotPresent | VmFaultKind::Injected
                )),
                read_only: u32::from(self.access == Access::Write),
                no_execute: u32::from(self.kind == VmFaultKind::NoExecute),
                imprecise: 0,
            },
            va: self.va & !(GPU_PAGE_SIZE - 1),
            gpu_id,
            error_type: 0,
        }
    }
}

impl fmt::Display for VmFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let why = match self.kind {
            VmFaultKind::NotPresent => "no GPU mapping",
            VmFaultKind::ReadOnly => "mapping is read-only",
            VmFaultKind::NoExecute => "mapping is not executable",
            VmFaultKind::Injected => "address marked faulting (fault injection)",
            VmFaultKind::HdpStale => {
                "VRAM bytes the CPU wrote after the last HDP flush (missing HDP flush before the GPU read)"
            }
        };
        write!(f, "GPU VM fault: {} at {:#x}: {why}", self.access, self.va)
    }
}

impl core::error::Error for VmFault {}
