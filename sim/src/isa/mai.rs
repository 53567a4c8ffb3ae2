//! The matrix-core instructions, one table row each: gfx90a/gfx942 MFMA and SMFMAC
//! (VOP3P-MAI), gfx11 WMMA and gfx12 WMMA/SWMMAC (VOP3P opcodes 0x40..). A decoded matrix
//! instruction is [`crate::isa::ops::Op::VMfma`] or [`crate::isa::ops::Op::VWmma`] with its
//! row's index in the low byte of `Inst::imm` (MFMA: CBSZ in bits 8..11, ABID in 11..15,
//! BLGP in 15..18).
//!
//! Shapes, types and opcodes are AMD's matrix instruction calculator's
//! (`amd_matrix_instruction_calculator`, the CDNA2/CDNA3 and RDNA3/RDNA4 tables), the opcodes
//! checked against LLVM 19's decoder (`isa-list/<target>.tsv`).

use super::Isa;

/// An element type of a matrix operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ty {
    /// IEEE binary64.
    F64,
    /// IEEE binary32.
    F32,
    /// CDNA3's XF32: f32 operands multiplied at reduced precision.
    Xf32,
    /// IEEE binary16.
    F16,
    /// bfloat16.
    Bf16,
    /// Signed 8-bit integer (MFMA).
    I8,
    /// gfx942 FP8 (E4M3, exponent bias 8, 0x80 NaN, no infinities: "FNUZ").
    Fp8Fnuz,
    /// gfx942 BF8 (E5M2, exponent bias 16, 0x80 NaN, no infinities).
    Bf8Fnuz,
    /// gfx12 FP8 (OCP E4M3FN: bias 7, S.1111.111 NaN, no infinities).
    Fp8,
    /// gfx12 BF8 (OCP E5M2: bias 15, IEEE-style infinities and NaNs).
    Bf8,
    /// Signed 32-bit integer (accumulators).
    I32,
    /// 8-bit integer, signed or unsigned by the instruction's NEG bits (WMMA).
    Iu8,
    /// 4-bit integer, signed or unsigned by the instruction's NEG bits (WMMA).
    Iu4,
}

impl Ty {
    /// Bits per element.
    #[must_use]
    pub fn bits(self) -> u32 {
        match self {
            Ty::F64 => 64,
            Ty::F32 | Ty::Xf32 | Ty::I32 => 32,
            Ty::F16 | Ty::Bf16 => 16,
            Ty::I8 | Ty::Fp8Fnuz | Ty::Bf8Fnuz | Ty::Fp8 | Ty::Bf8 | Ty::Iu8 => 8,
            Ty::Iu4 => 4,
        }
    }

    /// Whether values of the type are integers.
    #[must_use]
    pub fn int(self) -> bool {
        matches!(self, Ty::I8 | Ty::I32 | Ty::Iu8 | Ty::Iu4)
    }
}

/// One matrix instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mai {
    /// The family that decodes it.
    pub isa: Isa,
    /// VOP3P opcode (7 bits).
    pub opc: u8,
    /// LLVM's mnemonic (gfx90a's on gfx9; empty when gfx90a has no such instruction).
    pub name: &'static str,
    /// gfx940's mnemonic on gfx9 (empty when gfx942 has no such instruction).
    pub name940: &'static str,
    /// Rows of A, C and D per block.
    pub m: u16,
    /// Columns of B, C and D per block.
    pub n: u16,
    /// Columns of A, rows of B (of the dense matrix, for the sparse instructions).
    pub k: u16,
    /// Independent blocks (MFMA's `_2b`, `_4b`, `_16b`).
    pub blocks: u16,
    /// A's element type.
    pub a: Ty,
    /// B's element type.
    pub b: Ty,
    /// C's and D's element type.
    pub out: Ty,
    /// Structured 4:2 sparse A (SMFMAC, SWMMAC): C is the destination itself and src2 holds
    /// the sparsity indices.
    pub sparse: bool,
}

const fn g9(
    opc: u8,
    name: &'static str,
    name940: &'static str,
    mnkb: [u16; 4],
    ab: Ty,
    out: Ty,
) -> Mai {
    Mai {
        isa: Isa::Gfx9,
        opc,
        name,
        name940,
        m: mnkb[0],
        n: mnkb[1],
        k: mnkb[2],
        blocks: mnkb[3],
        a: ab,
        b: ab,
        out,
        sparse: false,
    }
}

const fn sp(mut m: Mai) -> Mai {
    m.sparse = true;
    m
}

const fn ab(mut m: Mai, a: Ty, b: Ty) -> Mai {
    m.a = a;
    m.b = b;
    m
}

const fn rd(isa: Isa, opc: u8, name: &'static str, k: u16, ab: Ty, out: Ty) -> Mai {
    Mai {
        isa,
        opc,
        name,
        name940: "",
        m: 16,
        n: 16,
        k,
        blocks: 1,
        a: ab,
        b: ab,
        out,
        sparse: false,
    }
}

use Ty::*;
const G11: Isa = Isa::Gfx11;
const G12: Isa = Isa::Gfx12;

/// Every matrix instruction. gfx9's opcodes 100, 102, 104 and 108 are gfx90a's MFMA here:
/// gfx942 gives them to SMFMAC, and the decoder knows the family, not the chip.
pub const TABLE: &[Mai] = &[
    g9(62, "", "v_mfma_f32_16x16x8_xf32", [16, 16, 8, 1], Xf32, F32),
    g9(63, "", "v_mfma_f32_32x32x4_xf32", [32, 32, 4, 1], Xf32, F32),
    g9(
        64,
        "v_mfma_f32_32x32x1f32",
        "v_mfma_f32_32x32x1_2b_f32",
        [32, 32, 1, 2],
        F32,
        F32,
    ),
    g9(
        65,
        "v_mfma_f32_16x16x1f32",
        "v_mfma_f32_16x16x1_4b_f32",
        [16, 16, 1, 4],
        F32,
        F32,
    ),
    g9(
        66,
        "v_mfma_f32_4x4x1f32",
        "v_mfma_f32_4x4x1_16b_f32",
        [4, 4, 1, 16],
        F32,
        F32,
    ),
    g9(
        68,
        "v_mfma_f32_32x32x2f32",
        "v_mfma_f32_32x32x2_f32",
        [32, 32, 2, 1],
        F32,
        F32,
    ),
    g9(
        69,
        "v_mfma_f32_16x16x4f32",
        "v_mfma_f32_16x16x4_f32",
        [16, 16, 4, 1],
        F32,
        F32,
    ),
    g9(
        72,
        "v_mfma_f32_32x32x4f16",
        "v_mfma_f32_32x32x4_2b_f16",
        [32, 32, 4, 2],
        F16,
        F32,
    ),
    g9(
        73,
        "v_mfma_f32_16x16x4f16",
        "v_mfma_f32_16x16x4_4b_f16",
        [16, 16, 4, 4],
        F16,
        F32,
    ),
    g9(
        74,
        "v_mfma_f32_4x4x4f16",
        "v_mfma_f32_4x4x4_16b_f16",
        [4, 4, 4, 16],
        F16,
        F32,
    ),
    g9(
        76,
        "v_mfma_f32_32x32x8f16",
        "v_mfma_f32_32x32x8_f16",
        [32, 32, 8, 1],
        F16,
        F32,
    ),
    g9(
        77,
        "v_mfma_f32_16x16x16f16",
        "v_mfma_f32_16x16x16_f16",
        [16, 16, 16, 1],
        F16,
        F32,
    ),
    g9(
        80,
        "v_mfma_i32_32x32x4i8",
        "v_mfma_i32_32x32x4_2b_i8",
        [32, 32, 4, 2],
        I8,
        I32,
    ),
    g9(
        81,
        "v_mfma_i32_16x16x4i8",
        "v_mfma_i32_16x16x4_4b_i8",
        [16, 16, 4, 4],
        I8,
        I32,
    ),
    g9(
        82,
        "v_mfma_i32_4x4x4i8",
        "v_mfma_i32_4x4x4_16b_i8",
        [4, 4, 4, 16],
        I8,
        I32,
    ),
    g9(84, "v_mfma_i32_32x32x8i8", "", [32, 32, 8, 1], I8, I32),
    g9(85, "v_mfma_i32_16x16x16i8", "", [16, 16, 16, 1], I8, I32),
    g9(86, "", "v_mfma_i32_32x32x16_i8", [32, 32, 16, 1], I8, I32),
    g9(87, "", "v_mfma_i32_16x16x32_i8", [16, 16, 32, 1], I8, I32),
    g9(
        93,
        "",
        "v_mfma_f32_32x32x4_2b_bf16",
        [32, 32, 4, 2],
        Bf16,
        F32,
    ),
    g9(
        94,
        "",
        "v_mfma_f32_16x16x4_4b_bf16",
        [16, 16, 4, 4],
        Bf16,
        F32,
    ),
    g9(
        95,
        "",
        "v_mfma_f32_4x4x4_16b_bf16",
        [4, 4, 4, 16],
        Bf16,
        F32,
    ),
    g9(96, "", "v_mfma_f32_32x32x8_bf16", [32, 32, 8, 1], Bf16, F32),
    g9(
        97,
        "",
        "v_mfma_f32_16x16x16_bf16",
        [16, 16, 16, 1],
        Bf16,
        F32,
    ),
    sp(g9(
        98,
        "",
        "v_smfmac_f32_16x16x32_f16",
        [16, 16, 32, 1],
        F16,
        F32,
    )),
    g9(
        99,
        "v_mfma_f32_32x32x4bf16_1k",
        "",
        [32, 32, 4, 2],
        Bf16,
        F32,
    ),
    g9(
        100,
        "v_mfma_f32_16x16x4bf16_1k",
        "",
        [16, 16, 4, 4],
        Bf16,
        F32,
    ),
    g9(101, "v_mfma_f32_4x4x4bf16_1k", "", [4, 4, 4, 16], Bf16, F32),
    g9(
        102,
        "v_mfma_f32_32x32x8bf16_1k",
        "",
        [32, 32, 8, 1],
        Bf16,
        F32,
    ),
    g9(
        103,
        "v_mfma_f32_16x16x16bf16_1k",
        "",
        [16, 16, 16, 1],
        Bf16,
        F32,
    ),
    g9(104, "v_mfma_f32_32x32x2bf16", "", [32, 32, 2, 2], Bf16, F32),
    g9(105, "v_mfma_f32_16x16x2bf16", "", [16, 16, 2, 4], Bf16, F32),
    sp(g9(
        106,
        "",
        "v_smfmac_i32_16x16x64_i8",
        [16, 16, 64, 1],
        I8,
        I32,
    )),
    g9(107, "v_mfma_f32_4x4x2bf16", "", [4, 4, 2, 16], Bf16, F32),
    g9(108, "v_mfma_f32_32x32x4bf16", "", [32, 32, 4, 1], Bf16, F32),
    g9(109, "v_mfma_f32_16x16x8bf16", "", [16, 16, 8, 1], Bf16, F32),
    g9(
        110,
        "v_mfma_f64_16x16x4f64",
        "v_mfma_f64_16x16x4_f64",
        [16, 16, 4, 1],
        F64,
        F64,
    ),
    g9(
        111,
        "v_mfma_f64_4x4x4f64",
        "v_mfma_f64_4x4x4_4b_f64",
        [4, 4, 4, 4],
        F64,
        F64,
    ),
    ab(
        g9(
            112,
            "",
            "v_mfma_f32_16x16x32_bf8_bf8",
            [16, 16, 32, 1],
            Bf8Fnuz,
            F32,
        ),
        Bf8Fnuz,
        Bf8Fnuz,
    ),
    ab(
        g9(
            113,
            "",
            "v_mfma_f32_16x16x32_bf8_fp8",
            [16, 16, 32, 1],
            Bf8Fnuz,
            F32,
        ),
        Bf8Fnuz,
        Fp8Fnuz,
    ),
    ab(
        g9(
            114,
            "",
            "v_mfma_f32_16x16x32_fp8_bf8",
            [16, 16, 32, 1],
            Fp8Fnuz,
            F32,
        ),
        Fp8Fnuz,
        Bf8Fnuz,
    ),
    ab(
        g9(
            115,
            "",
            "v_mfma_f32_16x16x32_fp8_fp8",
            [16, 16, 32, 1],
            Fp8Fnuz,
            F32,
        ),
        Fp8Fnuz,
        Fp8Fnuz,
    ),
    ab(
        g9(
            116,
            "",
            "v_mfma_f32_32x32x16_bf8_bf8",
            [32, 32, 16, 1],
            Bf8Fnuz,
            F32,
        ),
        Bf8Fnuz,
        Bf8Fnuz,
    ),
    ab(
        g9(
            117,
            "",
            "v_mfma_f32_32x32x16_bf8_fp8",
            [32, 32, 16, 1],
            Bf8Fnuz,
            F32,
        ),
        Bf8Fnuz,
        Fp8Fnuz,
    ),
    ab(
        g9(
            118,
            "",
            "v_mfma_f32_32x32x16_fp8_bf8",
            [32, 32, 16, 1],
            Fp8Fnuz,
            F32,
        ),
        Fp8Fnuz,
        Bf8Fnuz,
    ),
    ab(
        g9(
            119,
            "",
            "v_mfma_f32_32x32x16_fp8_fp8",
            [32, 32, 16, 1],
            Fp8Fnuz,
            F32,
        ),
        Fp8Fnuz,
        Fp8Fnuz,
    ),
    ab(
        sp(g9(
            120,
            "",
            "v_smfmac_f32_16x16x64_bf8_bf8",
            [16, 16, 64, 1],
            Bf8Fnuz,
            F32,
        )),
        Bf8Fnuz,
        Bf8Fnuz,
    ),
    ab(
        sp(g9(
            121,
            "",
            "v_smfmac_f32_16x16x64_bf8_fp8",
            [16, 16, 64, 1],
            Bf8Fnuz,
            F32,
        )),
        Bf8Fnuz,
        Fp8Fnuz,
    ),
    ab(
        sp(g9(
            122,
            "",
            "v_smfmac_f32_16x16x64_fp8_bf8",
            [16, 16, 64, 1],
            Fp8Fnuz,
            F32,
        )),
        Fp8Fnuz,
        Bf8Fnuz,
    ),
    ab(
        sp(g9(
            123,
            "",
            "v_smfmac_f32_16x16x64_fp8_fp8",
            [16, 16, 64, 1],
            Fp8Fnuz,
            F32,
        )),
        Fp8Fnuz,
        Fp8Fnuz,
    ),
    ab(
        sp(g9(
            124,
            "",
            "v_smfmac_f32_32x32x32_bf8_bf8",
            [32, 32, 32, 1],
            Bf8Fnuz,
            F32,
        )),
        Bf8Fnuz,
        Bf8Fnuz,
    ),
    ab(
        sp(g9(
            125,
            "",
            "v_smfmac_f32_32x32x32_bf8_fp8",
            [32, 32, 32, 1],
            Bf8Fnuz,
            F32,
        )),
        Bf8Fnuz,
        Fp8Fnuz,
    ),
    ab(
        sp(g9(
            126,
            "",
            "v_smfmac_f32_32x32x32_fp8_bf8",
            [32, 32, 32, 1],
            Fp8Fnuz,
            F32,
        )),
        Fp8Fnuz,
        Bf8Fnuz,
    ),
    ab(
        sp(g9(
            127,
            "",
            "v_smfmac_f32_32x32x32_fp8_fp8",
            [32, 32, 32, 1],
            Fp8Fnuz,
            F32,
        )),
        Fp8Fnuz,
        Fp8Fnuz,
    ),
    rd(G11, 0x40, "v_wmma_f32_16x16x16_f16", 16, F16, F32),
    rd(G11, 0x41, "v_wmma_f32_16x16x16_bf16", 16, Bf16, F32),
    rd(G11, 0x42, "v_wmma_f16_16x16x16_f16", 16, F16, F16),
    rd(G11, 0x43, "v_wmma_bf16_16x16x16_bf16", 16, Bf16, Bf16),
    rd(G11, 0x44, "v_wmma_i32_16x16x16_iu8", 16, Iu8, I32),
    rd(G11, 0x45, "v_wmma_i32_16x16x16_iu4", 16, Iu4, I32),
    rd(G12, 0x40, "v_wmma_f32_16x16x16_f16", 16, F16, F32),
    rd(G12, 0x41, "v_wmma_f32_16x16x16_bf16", 16, Bf16, F32),
    rd(G12, 0x42, "v_wmma_f16_16x16x16_f16", 16, F16, F16),
    rd(G12, 0x43, "v_wmma_bf16_16x16x16_bf16", 16, Bf16, Bf16),
    rd(G12, 0x44, "v_wmma_i32_16x16x16_iu8", 16, Iu8, I32),
    rd(G12, 0x45, "v_wmma_i32_16x16x16_iu4", 16, Iu4, I32),
    ab(
        rd(G12, 0x46, "v_wmma_f32_16x16x16_fp8_fp8", 16, Fp8, F32),
        Fp8,
        Fp8,
    ),
    ab(
        rd(G12, 0x47, "v_wmma_f32_16x16x16_fp8_bf8", 16, Fp8, F32),
        Fp8,
        Bf8,
    ),
    ab(
        rd(G12, 0x48, "v_wmma_f32_16x16x16_bf8_fp8", 16, Bf8, F32),
        Bf8,
        Fp8,
    ),
    ab(
        rd(G12, 0x49, "v_wmma_f32_16x16x16_bf8_bf8", 16, Bf8, F32),
        Bf8,
        Bf8,
    ),
    rd(G12, 0x4a, "v_wmma_i32_16x16x32_iu4", 32, Iu4, I32),
    sp(rd(G12, 0x50, "v_swmmac_f32_16x16x32_f16", 32, F16, F32)),
    sp(rd(G12, 0x51, "v_swmmac_f32_16x16x32_bf16", 32, Bf16, F32)),
    sp(rd(G12, 0x52, "v_swmmac_f16_16x16x32_f16", 32, F16, F16)),
    sp(rd(G12, 0x53, "v_swmmac_bf16_16x16x32_bf16", 32, Bf16, Bf16)),
    sp(rd(G12, 0x54, "v_swmmac_i32_16x16x32_iu8", 32, Iu8, I32)),
    sp(rd(G12, 0x55, "v_swmmac_i32_16x16x32_iu4", 32, Iu4, I32)),
    sp(rd(G12, 0x56, "v_swmmac_i32_16x16x64_iu4", 64, Iu4, I32)),
    ab(
        sp(rd(G12, 0x57, "v_swmmac_f32_16x16x32_fp8_fp8", 32, Fp8, F32)),
        Fp8,
        Fp8,
    ),
    ab(
        sp(rd(G12, 0x58, "v_swmmac_f32_16x16x32_fp8_bf8", 32, Fp8, F32)),
        Fp8,
        Bf8,
    ),
    ab(
        sp(rd(G12, 0x59, "v_swmmac_f32_16x16x32_bf8_fp8", 32, Bf8, F32)),
        Bf8,
        Fp8,
    ),
    ab(
        sp(rd(G12, 0x5a, "v_swmmac_f32_16x16x32_bf8_bf8", 32, Bf8, F32)),
        Bf8,
        Bf8,
    ),
    // gfx940's SMFMAC on opcodes that are gfx90a's bf16/i8 MFMA (MI300 (CDNA3) ISA guide,
    // VOP3P-MAI opcodes 100, 102, 104, 108): [`find_for`] picks the chip's row.
    sp(g9(
        100,
        "",
        "v_smfmac_f32_32x32x16_f16",
        [32, 32, 16, 1],
        F16,
        F32,
    )),
    sp(g9(
        102,
        "",
        "v_smfmac_f32_16x16x32_bf16",
        [16, 16, 32, 1],
        Bf16,
        F32,
    )),
    sp(g9(
        104,
        "",
        "v_smfmac_f32_32x32x16_bf16",
        [32, 32, 16, 1],
        Bf16,
        F32,
    )),
    sp(g9(
        108,
        "",
        "v_smfmac_i32_32x32x32_i8",
        [32, 32, 32, 1],
        I8,
        I32,
    )),
];

/// The row of `isa`'s matrix opcode `opc`, as an index into [`TABLE`].
#[must_use]
pub fn find(isa: Isa, opc: u32) -> Option<usize> {
    TABLE
        .iter()
        .position(|m| m.isa == isa && u32::from(m.opc) == opc)
}

/// As [`find`], for the chip on gfx9 where gfx90a and gfx940 give an opcode different
/// instructions: the row the chip has a mnemonic for (`gfx940`: `name940`, else `name`), or
/// [`find`]'s when neither chip's row does.
#[must_use]
pub fn find_for(isa: Isa, gfx940: bool, opc: u32) -> Option<usize> {
    let first = find(isa, opc)?;
    if isa != Isa::Gfx9 {
        return Some(first);
    }
    let named = TABLE.iter().position(|m| {
        m.isa == isa
            && u32::from(m.opc) == opc
            && !(if gfx940 { m.name940 } else { m.name }).is_empty()
    });
    Some(named.unwrap_or(first))
}

impl Mai {
    /// Lanes that hold a distinct operand (gfx11 keeps a copy of lanes 0..15 in 16..31).
    fn wave(&self) -> u32 {
        match self.isa {
            Isa::Gfx9 => 64,
            Isa::Gfx11 => 16,
            Isa::Gfx12 => 32,
        }
    }

    /// Registers each operand spans: (D, [A, B, C or the sparse index]).
    #[must_use]
    pub fn regs(&self) -> (u16, [u16; 3]) {
        let w = self.wave();
        let span = |elems: u32, ty: Ty| -> u16 {
            // CAST: at most 32 registers.
            (elems * ty.bits()).div_ceil(w * 32).max(1) as u16
        };
        let (m, n, k, b) = (
            u32::from(self.m),
            u32::from(self.n),
            u32::from(self.k),
            u32::from(self.blocks),
        );
        let ka = if self.sparse { k / 2 } else { k };
        // Results spread over the whole wave; gfx11's 16-bit results take one register per
        // value (one half of it).
        let lanes = if self.isa == Isa::Gfx9 { 64 } else { 32 };
        let bits = if self.isa == Isa::Gfx11 {
            32
        } else {
            self.out.bits()
        };
        // CAST: at most 32 registers.
        let d = (m * n * b * bits).div_ceil(lanes * 32) as u16;
        let c = if self.sparse { 1 } else { d };
        (d, [span(m * ka * b, self.a), span(k * n * b, self.b), c])
    }
}

/// The row a decoded matrix instruction's `imm` names.
#[must_use]
pub fn of(imm: i32) -> Option<&'static Mai> {
    // CAST: the low byte.
    TABLE.get((imm & 0xff) as usize)
}

/// MFMA's broadcast controls from a decoded `imm`: (CBSZ, ABID, BLGP).
#[must_use]
pub fn broadcast(imm: i32) -> (u32, u32, u32) {
    // CAST: bit fields of a non-negative value.
    let v = imm as u32;
    ((v >> 8) & 7, (v >> 11) & 15, (v >> 15) & 7)
}
