//! True16 operands of gfx11/gfx12's e32 and DPP forms: a 16-bit operand's VGPR field names a
//! half (bit 7 the high one), moved into VOP3's op_sel when decoding and back for the
//! disassembler, which prints LLVM's plain numbering.

use super::*;

/// Which operands of a gfx11/gfx12 VOP1, VOP2 or VOPC (e32, DPP) operation are 16-bit:
/// (sources by bit, destination). In these encodings a 16-bit operand's VGPR field names a
/// half, bit 7 the high one (`v0.h` is field 128), so only v0-v127 are reachable: LLVM's
/// true16 operands (VGPR_16_Lo128; `llvm-mc-19 -mcpu=gfx1100 -mattr=+real-true16` encodes
/// `v_add_f16_e32 v0.h, v1.l, v2.l` with VDST 0x80, likewise on gfx1201). tinygrad's hardware-validated test/amd/hw (test_vop1/test_vop2/test_vopc
/// `*_hi_half`) checks it on gfx1100 for v_cvt_f32_f16, v_add/mul/fmac_f16 and v_cmp_*_f16.
pub(crate) fn true16(op: Op) -> Option<(u8, bool)> {
    use Op::*;
    Some(match op {
        VMovB16 | VCvtF16U16 | VCvtF16I16 | VCvtU16F16 | VCvtI16F16 | VRcpF16 | VSqrtF16
        | VRsqF16 | VLogF16 | VExpF16 | VSinF16 | VCosF16 | VFrexpMantF16 | VFrexpExpI16F16
        | VFloorF16 | VCeilF16 | VTruncF16 | VRndneF16 | VFractF16 | VNotB16 | VCvtNormI16F16
        | VCvtNormU16F16 => (1, true),
        VCvtF32F16 | VCvtI32I16 | VCvtU32U16 => (1, false),
        VCvtF16F32 | VSatPkU8I16 => (0, true),
        VAddF16 | VSubF16 | VSubrevF16 | VMulF16 | VFmacF16 | VMaxF16 | VMinF16 | VLdexpF16
        | VFmamkF16 | VFmaakF16 => (3, true),
        VCmpF16 | VCmpI16 | VCmpU16 | VCmpClassF16 => (3, false),
        _ => return None,
    })
}

/// Moves bit 7 of each 16-bit VGPR operand of a gfx11/gfx12 VOP1/VOP2/VOPC (e32 or DPP)
/// instruction into VOP3's op_sel (bit k source k, bit 3 the destination), so the operand
/// readers and `write16` pick the halves ([`true16`]).
pub(crate) fn half_regs(i: &mut Inst) {
    let Some((srcs, dst)) = true16(i.op) else {
        return;
    };
    if dst && i.dst >= VGPR && i.dst != NONE && (i.dst - VGPR) & 0x80 != 0 {
        i.dst -= 0x80;
        i.opsel |= 8;
    }
    for k in 0..2 {
        let c = i.src[k];
        if (srcs >> k) & 1 == 1 && c >= VGPR && c != NONE && (c - VGPR) & 0x80 != 0 {
            i.src[k] -= 0x80;
            i.opsel |= 1 << k;
        }
    }
}

/// The inverse of [`half_regs`] for every operation but V_MOV_B16 (the one LLVM 19 prints
/// with true16 halves): the plain VGPR numbers LLVM prints (`v128` for `v0.h`).
pub(crate) fn whole_regs(i: &Inst) -> Inst {
    let mut i = *i;
    // Only the e32/DPP forms carry halves in the VGPR field (half_regs runs on those alone); a
    // VOP3's op_sel is its own field, and its operands may be SGPRs or constants.
    if i.op == Op::VMovB16
        || true16(i.op).is_none()
        || !matches!(i.enc, Enc::Vop1 | Enc::Vop2 | Enc::Vopc)
    {
        return i;
    }
    let whole = |r: u16| {
        if r >= VGPR && r != NONE {
            r.checked_add(0x80).unwrap_or(r)
        } else {
            r
        }
    };
    if i.opsel & 8 != 0 {
        i.dst = whole(i.dst);
    }
    for k in 0..2 {
        if (i.opsel >> k) & 1 == 1 {
            i.src[k] = whole(i.src[k]);
        }
    }
    i.opsel = 0;
    i
}
