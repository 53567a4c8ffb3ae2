//! VINTERP text as LLVM 19 prints it: `v_interp_p10_f16_f32 v0, -v1, -v2, -v3 clamp
//! op_sel:[1,0,0,1] wait_exp:5` (test/MC/AMDGPU/gfx11_asm_vinterp.s).

use super::{Inst, operand};
use core::fmt::Write;

/// The instruction's text.
pub(super) fn text(i: &Inst, wave64: bool) -> String {
    let mut s = format!("{} {}", i.op.name(), operand(i.dst, 1, 0, true, wave64));
    for k in 0..3 {
        let neg = if (i.mods >> k) & 1 == 1 { "-" } else { "" };
        let _ = write!(s, ", {neg}{}", operand(i.src[k], 1, i.lit, true, wave64));
    }
    if i.clamp {
        s.push_str(" clamp");
    }
    if i.opsel != 0 {
        let b = |k: u8| (i.opsel >> k) & 1;
        let _ = write!(s, " op_sel:[{},{},{},{}]", b(0), b(1), b(2), b(3));
    }
    let _ = write!(s, " wait_exp:{}", i.imm);
    s
}
