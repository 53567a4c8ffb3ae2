//! VINTERP (gfx11 and gfx12): the parameter interpolations `v_interp_p10_*`/`v_interp_p2_*`.
//!
//! Fields (RDNA3 ISA guide, "VINTERP" microcode format; LLVM's
//! test/MC/AMDGPU/gfx11_asm_vinterp.s encodings): VDST [7:0], WAITEXP [10:8], OPSEL [14:11]
//! (src0, src1, src2, dst high halves), CLMP [15], OP [22:16], ENCODING [31:24] = 0xcd;
//! SRC0 [40:32], SRC1 [49:41], SRC2 [58:50], NEG [63:61].

use super::*;

/// The VINTERP instruction in `w` (two words).
pub(super) fn decode(w: &[u32; 3]) -> Result<Inst, Undecodable> {
    use Op::*;
    let (w0, w1) = (w[0], w[1]);
    let opc = bits(w0, 16, 7);
    let op = table! {opc, return Err(undec(w0, "VINTERP", opc));
        0 => VInterpP10F32, 1 => VInterpP2F32, 2 => VInterpP10F16F32, 3 => VInterpP2F16F32,
        4 => VInterpP10RtzF16F32, 5 => VInterpP2RtzF16F32,
    };
    let mut i = Inst::new(op, Enc::Vinterp);
    i.len = 8;
    i.dst = VGPR + b16(w0, 0, 8);
    i.src = [b16(w1, 0, 9), b16(w1, 9, 9), b16(w1, 18, 9)];
    // CAST: 3-bit and 4-bit fields.
    i.mods = bits(w1, 29, 3) as u8;
    i.opsel = bits(w0, 11, 4) as u8;
    i.clamp = bits(w0, 15, 1) == 1;
    // CAST: 3-bit field.
    i.imm = bits(w0, 8, 3) as i32;
    // SRC0 (and P10's SRC2) name the VGPR read from another lane of the quad: the pseudo-code's
    // VGPR[lane][SRC0]. A literal has no room in the encoding.
    let p10 = matches!(op, VInterpP10F32 | VInterpP10F16F32 | VInterpP10RtzF16F32);
    if i.src[0] < VGPR || (p10 && i.src[2] < VGPR) {
        return Err(undec(
            w0,
            "VINTERP (a lane-indexed source that is no VGPR)",
            opc,
        ));
    }
    if i.src.contains(&LIT) {
        return Err(undec(w0, "VINTERP (a literal operand)", opc));
    }
    Ok(i)
}
