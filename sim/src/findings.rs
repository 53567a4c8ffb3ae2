//! Findings: accesses the hardware tolerates and a kernel almost certainly did not mean: an LDS
//! access past the workgroup's allocation (the RDNA3, RDNA4 and CDNA3 ISA guides' LDS
//! chapters: an out-of-range read returns 0, an out-of-range write is dropped), a buffer
//! access past its V#'s NUM_RECORDS (RDNA3 ISA guide, buffer "Range Checking": reads return
//! zero, writes do not write, dword x2..x4 checked per dword) and a scratch access past the
//! lane's private size ([`crate::isa::Space`]). The
//! simulator computes what the GPU computes and records each such access here; with
//! [`SimConfig::strict`](crate::SimConfig::strict) (`HCQ_SIM_STRICT=1`, `hcq run --strict`)
//! it faults the queue instead, the judge hcq's own test suites run under.

use std::sync::{Mutex, PoisonError};

/// Most findings one simulator keeps (later ones are counted, not stored).
pub const MAX_FINDINGS: usize = 256;

/// One access the hardware tolerates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// The kernel: its program address (COMPUTE_PGM_LO/HI).
    pub kernel: u64,
    /// The instruction: its offset from the program address and its mnemonic.
    pub instruction: String,
    /// The address accessed: an LDS byte address, a buffer offset (a record index for a
    /// structured buffer) or a lane's private offset.
    pub address: u64,
    /// Bytes the access spans.
    pub bytes: u32,
    /// The allocation it left: the LDS bytes RSRC2.LDS_SIZE granted, the V#'s NUM_RECORDS or
    /// the bytes of scratch each lane has; 0 for a finding that is no access past an
    /// allocation (two workgroups storing the same bytes).
    pub allocation: u64,
    /// What the hardware does with it.
    pub what: String,
    /// Such accesses in the same dispatch (this one is the first).
    pub count: u64,
}

impl core::fmt::Display for Finding {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        if self.allocation == 0 {
            write!(
                f,
                "kernel at {:#x}, {}: {} bytes at {:#x}: {}",
                self.kernel, self.instruction, self.bytes, self.address, self.what
            )?;
        } else {
            write!(
                f,
                "kernel at {:#x}, {}: {} bytes at {:#x}, past the allocation of {}: {}",
                self.kernel, self.instruction, self.bytes, self.address, self.allocation, self.what
            )?;
        }
        if self.count > 1 {
            write!(f, " ({} such accesses in the dispatch)", self.count)?;
        }
        Ok(())
    }
}

/// A simulator's findings, shared by its engines.
#[derive(Debug, Default)]
pub struct Findings {
    list: Mutex<(Vec<Finding>, u64)>,
}

impl Findings {
    /// Records `f` (kept while fewer than [`MAX_FINDINGS`] are held; always counted).
    pub fn push(&self, f: Finding) {
        let mut g = self.list.lock().unwrap_or_else(PoisonError::into_inner);
        g.1 += 1;
        if g.0.len() < MAX_FINDINGS {
            g.0.push(f);
        }
    }

    /// The findings kept so far.
    #[must_use]
    pub fn list(&self) -> Vec<Finding> {
        self.list
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .0
            .clone()
    }

    /// Findings recorded so far, kept or not.
    #[must_use]
    pub fn total(&self) -> u64 {
        self.list.lock().unwrap_or_else(PoisonError::into_inner).1
    }
}
