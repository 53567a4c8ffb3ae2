//! Patch tables: the variables of a recorded command stream (a graph) and every dword that
//! depends on them, computed once at record time, applied per replay by writing only what
//! changed.
//!
//! tinygrad's `HCQGraph` records symbolic placeholders (`q_sints`, `mv_sints`) and resolves them
//! on every submit; Metal's indirect command buffers re-set changed bindings. A [`PatchTable`]
//! is the same idea, allocation-free and typed:
//!
//! * A **variable** ([`VarId`]) is declared with its record-time [`Value`]: a buffer or signal
//!   address ([`Value::Addr`], which also carries the buffer's size so a replay with a smaller
//!   buffer is refused), a scalar ([`Value::Scalar`]: kernel arguments, timeline values) or the
//!   launch dimensions of one or more kernels ([`Value::Dims`]).
//! * **Bindings** say where a variable lands: `bind_*` functions verify the packet they point at
//!   in the recorded command list (the header must be the packet the handle names, the recorded
//!   value must be what the variable produces) and add [`Entry`]s: (variable, target, dword
//!   index, [`Op`]). Targets are indices into the slice of memories given to
//!   [`PatchTable::apply`]: by convention the bound PM4 list, the bound SDMA list and the
//!   kernargs region, but the table does not care.
//! * [`PatchTable::apply`] checks every value first (all present, right kind, buffers large
//!   enough, dims inside the kernels' limits, scalars inside the fields that carry them); on any
//!   error nothing has been written. Then it writes the entries of the variables whose value
//!   differs from the last applied (or recorded) one, and only those.
//!
//! [`PatchTable::check`] and [`PatchTable::write`] are `apply` in two halves, for a caller
//! that must wait between checking and writing (a graph replay checks, waits until the GPU is
//! done with the previous replay, then writes): the values are checked once.
//!
//! The memory written is a [`PatchTarget`]: a plain `[u32]` or a shared `&[AtomicU32]` view of
//! GPU memory. Patching GPU memory the device may be reading is the caller's business to avoid
//! (wait for the previous replay of the same buffers to complete, or alternate two copies).
//!
//! ```
//! use hcq_core::addr::GpuVa;
//! use hcq_core::arch::GFX11;
//! use hcq_core::cmd::Pm4List;
//! use hcq_core::patch::{Dims, DimLimits, PatchTable, Value};
//! use hcq_core::pm4::Program;
//!
//! let mut list: Pm4List<512, 8> = Pm4List::new(&GFX11);
//! let prog = Program::default();
//! let (exec, _) = list.exec(&prog, GpuVa(0x1000), [4, 1, 1], [64, 1, 1])?;
//! let mut table: PatchTable<4, 16> = PatchTable::new();
//! let dims = table.declare(Value::Dims(Dims { global: [4, 1, 1], local: [64, 1, 1] }))?;
//! table.bind_exec(dims, 0, list.as_dwords(), &exec, DimLimits::AMD, None)?;
//!
//! let mut ib: [u32; 512] = [0; 512];
//! let n = list.as_dwords().len();
//! ib[..n].copy_from_slice(list.as_dwords());
//! let new = [Some(Value::Dims(Dims { global: [8, 2, 1], local: [32, 1, 1] }))];
//! let written = table.apply(&new, &mut [&mut ib[..n]])?;
//! assert_eq!(written, 6);
//! assert_eq!(table.apply(&new, &mut [&mut ib[..n]])?, 0); // nothing changed
//! # Ok::<(), hcq_core::patch::PatchError>(())
//! ```

use core::fmt;

use crate::addr::{GpuVa, hi32, join64, lo32};
use crate::cmd::{CmdError, CopyCmd, Engine, ExecCmd, PatchTarget, SignalCmd, WaitCmd};
use crate::pm4::{self, Pm4Header};
use crate::sdma;
use crate::signal::VALUE_OFFSET;

mod check;
mod table;
mod types;
mod write;

pub use check::*;
pub use table::*;
pub use types::*;
use write::*;

#[cfg(test)]
mod tests;
