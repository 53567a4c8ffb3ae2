//! What the hardware could not launch: the checks on a [`Launch`](super::Launch) before any wave
//! starts, from the dispatch registers only (LLVM AMDGPUUsage, "Initial Kernel Execution
//! State", and the RDNA3, RDNA4 and CDNA3 ISA guides). The state a wave starts with is built
//! by `interp::init`, next to the wave state it fills.

use super::{Isa, IsaError, Launch};

/// Most user SGPRs (RSRC2.USER_SGPR_COUNT is 5 bits, hardware loads at most 32).
pub const MAX_USER_SGPRS: usize = 32;

/// Checks what the hardware could not launch.
pub(crate) fn check(l: &Launch) -> Result<(), IsaError> {
    let bad = |m: String| {
        Err(IsaError::Fault(format!(
            "{}: bad launch state: {m}",
            l.isa.name()
        )))
    };
    if !l.isa.interpreted() {
        return bad("the simulator does not interpret this ISA yet".into());
    }
    if l.user_sgprs.len() > MAX_USER_SGPRS {
        return bad(format!(
            "{} user SGPRs (at most {MAX_USER_SGPRS})",
            l.user_sgprs.len()
        ));
    }
    let items: u64 = l.local.iter().map(|&x| u64::from(x)).product();
    if items == 0 || items > 1024 {
        return bad(format!("workgroup of {:?} work-items", l.local));
    }
    if l.vgprs == 0 || l.vgprs > 512 {
        return bad(format!("{} VGPRs", l.vgprs));
    }
    if l.isa == Isa::Gfx9 && !l.wave64 {
        return bad("gfx9 has no wave32".into());
    }
    Ok(())
}
