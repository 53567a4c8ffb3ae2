//! Mnemonics that differ by family and the text of wait/delay immediates.

use crate::isa::ops::Op;

pub(super) fn waitcnt(imm: u32) -> String {
    let vm = (imm >> 10) & 0x3f;
    let exp = imm & 7;
    let lgkm = (imm >> 4) & 0x3f;
    let mut parts = Vec::new();
    if vm != 0x3f {
        parts.push(format!("vmcnt({vm})"));
    }
    if exp != 7 {
        parts.push(format!("expcnt({exp})"));
    }
    if lgkm != 0x3f {
        parts.push(format!("lgkmcnt({lgkm})"));
    }
    if parts.is_empty() {
        "vmcnt(63) expcnt(7) lgkmcnt(63)".to_string()
    } else {
        parts.join(" ")
    }
}

pub(super) fn delay_alu(imm: u32) -> String {
    let dep = |v: u32| -> String {
        match v {
            1..=4 => format!("VALU_DEP_{v}"),
            5..=7 => format!("TRANS32_DEP_{}", v - 4),
            8 => "FMA_ACCUM_CYCLE_1".into(),
            9..=11 => format!("SALU_CYCLE_{}", v - 8),
            _ => format!("{v}"),
        }
    };
    let mut parts = Vec::new();
    if imm & 0xf != 0 {
        parts.push(format!("instid0({})", dep(imm & 0xf)));
    }
    let skip = (imm >> 4) & 7;
    if skip != 0 {
        let s = match skip {
            1 => "NEXT".to_string(),
            k => format!("SKIP_{}", k - 1),
        };
        parts.push(format!("instskip({s})"));
    }
    if (imm >> 7) & 0xf != 0 {
        parts.push(format!("instid1({})", dep((imm >> 7) & 0xf)));
    }
    // No field set: LLVM prints the number.
    if parts.is_empty() {
        return "0".into();
    }
    parts.join(" | ")
}

/// gfx9's mnemonic where it differs from gfx11's.
pub(super) fn gfx9_name(op: Op) -> Option<&'static str> {
    use Op::*;
    Some(match op {
        SLoadB32 => "s_load_dword",
        SLoadB64 => "s_load_dwordx2",
        SLoadB128 => "s_load_dwordx4",
        SLoadB256 => "s_load_dwordx8",
        SLoadB512 => "s_load_dwordx16",
        VCvtNearestI32F32 => "v_cvt_rpi_i32_f32",
        VCvtFloorI32F32 => "v_cvt_flr_i32_f32",
        VClsI32 => "v_ffbh_i32",
        SClsI32 => "s_flbit_i32",
        SClzI32U64 => "s_flbit_i32_b64",
        SClsI32I64 => "s_flbit_i32_i64",
        SOrNot0SaveexecB64 => "s_orn1_saveexec_b64",
        SOrNot1SaveexecB64 => "s_orn2_saveexec_b64",
        SAndNot0SaveexecB64 => "s_andn1_saveexec_b64",
        SAndNot0WrexecB64 => "s_andn1_wrexec_b64",
        SAndNot1WrexecB64 => "s_andn2_wrexec_b64",
        DsCmpstoreF32 => "ds_cmpst_f32",
        DsCmpstoreRtnF32 => "ds_cmpst_rtn_f32",
        DsCmpstoreB64 => "ds_cmpst_b64",
        DsCmpstoreRtnB64 => "ds_cmpst_rtn_b64",
        DsCmpstoreF64 => "ds_cmpst_f64",
        DsCmpstoreRtnF64 => "ds_cmpst_rtn_f64",
        DsSwapRtnB64 => "ds_wrxchg_rtn_b64",
        DsLoadU8D16 => "ds_read_u8_d16",
        DsLoadU8D16Hi => "ds_read_u8_d16_hi",
        DsLoadI8D16 => "ds_read_i8_d16",
        DsLoadI8D16Hi => "ds_read_i8_d16_hi",
        DsLoadU16D16 => "ds_read_u16_d16",
        DsLoadU16D16Hi => "ds_read_u16_d16_hi",
        DsStoreB8D16Hi => "ds_write_b8_d16_hi",
        DsStoreB16D16Hi => "ds_write_b16_d16_hi",
        DsStore2St64B64 => "ds_write2st64_b64",
        DsLoad2St64B64 => "ds_read2st64_b64",
        VCvtPkNormI16F32 => "v_cvt_pknorm_i16_f32",
        VCvtPkNormU16F32 => "v_cvt_pknorm_u16_f32",
        VCvtPkNormI16F16 => "v_cvt_pknorm_i16_f16",
        VCvtPkNormU16F16 => "v_cvt_pknorm_u16_f16",
        VCvtPkRtzF16F32 => "v_cvt_pkrtz_f16_f32",
        VMulDx9ZeroF32 => "v_mul_legacy_f32",
        VDot2accF32F16 => "v_dot2c_f32_f16",
        VAddNcI32 => "v_add_i32",
        VSubNcI32 => "v_sub_i32",
        VAddNcI16 => "v_add_i16",
        VSubNcI16 => "v_sub_i16",
        SBufferLoadB32 => "s_buffer_load_dword",
        SBufferLoadB64 => "s_buffer_load_dwordx2",
        SBufferLoadB128 => "s_buffer_load_dwordx4",
        SBufferLoadB256 => "s_buffer_load_dwordx8",
        SBufferLoadB512 => "s_buffer_load_dwordx16",
        MLoadU8 => "load_ubyte",
        MLoadI8 => "load_sbyte",
        MLoadU16 => "load_ushort",
        MLoadI16 => "load_sshort",
        MLoadB32 => "load_dword",
        MLoadB64 => "load_dwordx2",
        MLoadB96 => "load_dwordx3",
        MLoadB128 => "load_dwordx4",
        MStoreB8 => "store_byte",
        MStoreB16 => "store_short",
        MStoreB32 => "store_dword",
        MStoreB64 => "store_dwordx2",
        MStoreB96 => "store_dwordx3",
        MStoreB128 => "store_dwordx4",
        MStoreD16HiB8 => "store_byte_d16_hi",
        MStoreD16HiB16 => "store_short_d16_hi",
        MLoadD16U8 => "load_ubyte_d16",
        MLoadD16HiU8 => "load_ubyte_d16_hi",
        MLoadD16I8 => "load_sbyte_d16",
        MLoadD16HiI8 => "load_sbyte_d16_hi",
        MLoadD16B16 => "load_short_d16",
        MLoadD16HiB16 => "load_short_d16_hi",
        MAtomicIncU64 => "atomic_inc_x2",
        MAtomicDecU64 => "atomic_dec_x2",
        DsStoreB32 => "ds_write_b32",
        DsCmpswapRtnB32 => "ds_cmpst_rtn_b32",
        DsCmpswapB32 => "ds_cmpst_b32",
        DsSwapRtnB32 => "ds_wrxchg_rtn_b32",
        DsStorexchg2RtnB32 => "ds_wrxchg2_rtn_b32",
        DsStoreAddtidB32 => "ds_write_addtid_b32",
        DsLoadAddtidB32 => "ds_read_addtid_b32",
        DsStorexchg2St64RtnB32 => "ds_wrxchg2st64_rtn_b32",
        DsStorexchg2RtnB64 => "ds_wrxchg2_rtn_b64",
        DsStorexchg2St64RtnB64 => "ds_wrxchg2st64_rtn_b64",
        DsStoreB64 => "ds_write_b64",
        DsStoreB8 => "ds_write_b8",
        DsStoreB16 => "ds_write_b16",
        DsLoadB32 => "ds_read_b32",
        DsLoadB64 => "ds_read_b64",
        DsLoadU8 => "ds_read_u8",
        DsLoadI8 => "ds_read_i8",
        DsLoadU16 => "ds_read_u16",
        DsLoadI16 => "ds_read_i16",
        DsStore2B32 => "ds_write2_b32",
        DsLoad2B32 => "ds_read2_b32",
        DsStore2St64B32 => "ds_write2st64_b32",
        DsLoad2St64B32 => "ds_read2st64_b32",
        MAtomicSwapB32 => "atomic_swap",
        MAtomicCmpswapB32 => "atomic_cmpswap",
        MAtomicAddU32 => "atomic_add",
        MAtomicSubU32 => "atomic_sub",
        MAtomicMinI32 => "atomic_smin",
        MAtomicMinU32 => "atomic_umin",
        MAtomicMaxI32 => "atomic_smax",
        MAtomicMaxU32 => "atomic_umax",
        MAtomicAndB32 => "atomic_and",
        MAtomicOrB32 => "atomic_or",
        MAtomicXorB32 => "atomic_xor",
        MAtomicIncU32 => "atomic_inc",
        MAtomicDecU32 => "atomic_dec",
        MAtomicSwapB64 => "atomic_swap_x2",
        MAtomicCmpswapB64 => "atomic_cmpswap_x2",
        MAtomicAddU64 => "atomic_add_x2",
        VAddCoCiU32 => "v_addc_co_u32",
        VSubCoCiU32 => "v_subb_co_u32",
        VSubrevCoCiU32 => "v_subbrev_co_u32",
        VAddNcU32 => "v_add_u32",
        VSubNcU32 => "v_sub_u32",
        VSubrevNcU32 => "v_subrev_u32",
        SAndNot1B32 => "s_andn2_b32",
        SAndNot1B64 => "s_andn2_b64",
        SOrNot1B32 => "s_orn2_b32",
        SOrNot1B64 => "s_orn2_b64",
        SAndNot1SaveexecB64 => "s_andn2_saveexec_b64",
        SClzI32U32 => "s_flbit_i32_b32",
        VAddU16 => "v_add_u16",
        DsLoadB96 => "ds_read_b96",
        DsLoadB128 => "ds_read_b128",
        DsStoreB96 => "ds_write_b96",
        DsStoreB128 => "ds_write_b128",
        DsLoad2B64 => "ds_read2_b64",
        DsStore2B64 => "ds_write2_b64",
        MAtomicSubU64 => "atomic_sub_x2",
        MAtomicMinI64 => "atomic_smin_x2",
        MAtomicMinU64 => "atomic_umin_x2",
        MAtomicMaxI64 => "atomic_smax_x2",
        MAtomicMaxU64 => "atomic_umax_x2",
        MAtomicAndB64 => "atomic_and_x2",
        MAtomicOrB64 => "atomic_or_x2",
        MAtomicXorB64 => "atomic_xor_x2",
        VSubU16 => "v_sub_u16",
        _ => return None,
    })
}

/// gfx12's mnemonic where it differs from gfx11's.
pub(super) fn gfx12_name(op: Op) -> Option<&'static str> {
    Some(match op {
        Op::SAddI32 => "s_add_co_i32",
        Op::SAddkI32 => "s_addk_co_i32",
        Op::SSubI32 => "s_sub_co_i32",
        Op::VMadU64U32 => "v_mad_co_u64_u32",
        Op::VMadI64I32 => "v_mad_co_i64_i32",
        Op::VMinF32 => "v_min_num_f32",
        Op::VMaxF32 => "v_max_num_f32",
        Op::VMinF16 => "v_min_num_f16",
        Op::VMaxF16 => "v_max_num_f16",
        Op::VMinF64 => "v_min_num_f64",
        Op::VMaxF64 => "v_max_num_f64",
        Op::VMin3F32 => "v_min3_num_f32",
        Op::VMax3F32 => "v_max3_num_f32",
        Op::VMed3F32 => "v_med3_num_f32",
        Op::VMaxminF32 => "v_maxmin_num_f32",
        Op::VMinmaxF32 => "v_minmax_num_f32",
        Op::VMin3F16 => "v_min3_num_f16",
        Op::VMax3F16 => "v_max3_num_f16",
        Op::VMed3F16 => "v_med3_num_f16",
        Op::VMaxminF16 => "v_maxmin_num_f16",
        Op::VMinmaxF16 => "v_minmax_num_f16",
        Op::MAtomicCsubU32 => "atomic_sub_clamp_u32",
        Op::MAtomicMinF32 => "atomic_min_num_f32",
        Op::MAtomicMaxF32 => "atomic_max_num_f32",
        Op::DsMinF32 => "ds_min_num_f32",
        Op::DsMaxF32 => "ds_max_num_f32",
        Op::DsMinRtnF32 => "ds_min_num_rtn_f32",
        Op::DsMaxRtnF32 => "ds_max_num_rtn_f32",
        Op::DsMinF64 => "ds_min_num_f64",
        Op::DsMaxF64 => "ds_max_num_f64",
        Op::DsMinRtnF64 => "ds_min_num_rtn_f64",
        Op::DsMaxRtnF64 => "ds_max_num_rtn_f64",
        Op::SAddU32 => "s_add_co_u32",
        Op::SSubU32 => "s_sub_co_u32",
        Op::SAddcU32 => "s_add_co_ci_u32",
        Op::SSubbU32 => "s_sub_co_ci_u32",
        _ => return None,
    })
}

pub(super) fn waitcnt9(imm: u32) -> String {
    let vm = (imm & 0xf) | (((imm >> 14) & 3) << 4);
    let exp = (imm >> 4) & 7;
    let lgkm = (imm >> 8) & 0xf;
    let mut parts = Vec::new();
    if vm != 0x3f {
        parts.push(format!("vmcnt({vm})"));
    }
    if exp != 7 {
        parts.push(format!("expcnt({exp})"));
    }
    if lgkm != 0xf {
        parts.push(format!("lgkmcnt({lgkm})"));
    }
    if parts.is_empty() {
        "vmcnt(63) expcnt(7) lgkmcnt(15)".to_string()
    } else {
        parts.join(" ")
    }
}

/// The SDWA operand-select names (sel 0..6).
pub(super) fn sdwa_sel(sel: u32) -> &'static str {
    [
        "BYTE_0", "BYTE_1", "BYTE_2", "BYTE_3", "WORD_0", "WORD_1", "DWORD",
    ]
    .get(sel as usize)
    .copied()
    .unwrap_or("DWORD")
}

/// LLVM's text of a ds_swizzle_b32 pattern.
pub(super) fn swizzle(off: u32) -> String {
    if off & 0x8000 != 0 {
        let q: Vec<String> = (0..4).map(|k| ((off >> (2 * k)) & 3).to_string()).collect();
        return format!("swizzle(QUAD_PERM,{})", q.join(","));
    }
    let (and, or, xor) = (off & 0x1f, (off >> 5) & 0x1f, (off >> 10) & 0x1f);
    if and == 0x1f && or == 0 && xor.count_ones() == 1 {
        format!("swizzle(SWAP,{xor})")
    } else if and == 0x1f && or == 0 && xor != 0 && (xor + 1).is_power_of_two() {
        format!("swizzle(REVERSE,{})", xor + 1)
    } else {
        // Per bit, high to low: 0/1 forced, p kept, i inverted.
        let bits: String = (0..5)
            .rev()
            .map(|b| match ((and >> b) & 1, (or >> b) & 1, (xor >> b) & 1) {
                (0, 0, 0) => '0',
                (0, 1, 0) | (0, 0, 1) => '1',
                (1, 0, 0) => 'p',
                _ => 'i',
            })
            .collect();
        format!("swizzle(BITMASK_PERM,\"{bits}\")")
    }
}

/// LLVM's name of hardware register `id` (`s_getreg`/`s_setreg`'s hwreg operand), per family
/// (`gfx940`: gfx942's names on gfx9).
fn hwreg_name(gfx: u32, gfx940: bool, id: u32) -> Option<&'static str> {
    Some(match (gfx, id) {
        (_, 1) => "HW_REG_MODE",
        (_, 2) => "HW_REG_STATUS",
        (9 | 11, 3) => "HW_REG_TRAPSTS",
        (9, 4) => "HW_REG_HW_ID",
        (12, 4) => "HW_REG_STATE_PRIV",
        (_, 5) => "HW_REG_GPR_ALLOC",
        (_, 6) => "HW_REG_LDS_ALLOC",
        (_, 7) => "HW_REG_IB_STS",
        (9 | 11, 15) => "HW_REG_SH_MEM_BASES",
        (9, 16) => "HW_REG_TBA_LO",
        (9, 17) => "HW_REG_TBA_HI",
        (9, 18) => "HW_REG_TMA_LO",
        (9, 19) => "HW_REG_TMA_HI",
        (9, 20) if gfx940 => "HW_REG_XCC_ID",
        (9, 21) if gfx940 => "HW_REG_SQ_PERF_SNAPSHOT_DATA",
        (9, 22) if gfx940 => "HW_REG_SQ_PERF_SNAPSHOT_DATA1",
        (9, 23) if gfx940 => "HW_REG_SQ_PERF_SNAPSHOT_PC_LO",
        (9, 24) if gfx940 => "HW_REG_SQ_PERF_SNAPSHOT_PC_HI",
        (11, 18) => "HW_REG_PERF_SNAPSHOT_PC_LO",
        (11, 19) => "HW_REG_PERF_SNAPSHOT_PC_HI",
        (11, 20) => "HW_REG_FLAT_SCR_LO",
        (11, 21) => "HW_REG_FLAT_SCR_HI",
        (11 | 12, 23) => "HW_REG_HW_ID1",
        (11 | 12, 24) => "HW_REG_HW_ID2",
        (11, 27) => "HW_REG_PERF_SNAPSHOT_DATA",
        (11, 29) => "HW_REG_SHADER_CYCLES",
        (12, 10) => "HW_REG_PERF_SNAPSHOT_DATA",
        (12, 11) => "HW_REG_PERF_SNAPSHOT_PC_LO",
        (12, 12) => "HW_REG_PERF_SNAPSHOT_PC_HI",
        (12, 15) => "HW_REG_PERF_SNAPSHOT_DATA1",
        (12, 16) => "HW_REG_PERF_SNAPSHOT_DATA2",
        (12, 17) => "HW_REG_EXCP_FLAG_PRIV",
        (12, 18) => "HW_REG_EXCP_FLAG_USER",
        (12, 19) => "HW_REG_TRAP_CTRL",
        (12, 20) => "HW_REG_SCRATCH_BASE_LO",
        (12, 21) => "HW_REG_SCRATCH_BASE_HI",
        (12, 29) => "HW_REG_SHADER_CYCLES_LO",
        (12, 30) => "HW_REG_SHADER_CYCLES_HI",
        (12, 31) => "HW_REG_DVGPR_ALLOC_LO",
        (12, 32) => "HW_REG_DVGPR_ALLOC_HI",
        _ => return None,
    })
}

/// The hwreg operand of simm16 (ID 5:0, OFFSET 10:6, SIZE-1 15:11) as LLVM prints it: the
/// register's name where it has one, offset and size only when not the whole register.
pub(super) fn hwreg(gfx: u32, gfx940: bool, imm: u32) -> String {
    let (id, off, size) = (imm & 63, (imm >> 6) & 31, ((imm >> 11) & 31) + 1);
    let name = hwreg_name(gfx, gfx940, id).map_or_else(|| id.to_string(), str::to_string);
    if off == 0 && size == 32 {
        format!("hwreg({name})")
    } else {
        format!("hwreg({name}, {off}, {size})")
    }
}

/// The message name of `id` for the family (gfx11+ ids are 8 bits).
fn msg_name(gfx: u32, id: u32) -> Option<&'static str> {
    Some(match (gfx, id) {
        (_, 1) => "MSG_INTERRUPT",
        (9, 2) => "MSG_GS",
        (9, 3) => "MSG_GS_DONE",
        (9, 4) => "MSG_SAVEWAVE",
        (9 | 11, 5) => "MSG_STALL_WAVE_GEN",
        (9 | 11, 6) => "MSG_HALT_WAVES",
        (9, 7) => "MSG_ORDERED_PS_DONE",
        (9, 8) => "MSG_EARLY_PRIM_DEALLOC",
        (_, 9) => "MSG_GS_ALLOC_REQ",
        (9, 10) => "MSG_GET_DOORBELL",
        (9, 15) => "MSG_SYSMSG",
        (11 | 12, 2) => "MSG_HS_TESSFACTOR",
        (11 | 12, 3) => "MSG_DEALLOC_VGPRS",
        (11 | 12, 128) => "MSG_RTN_GET_DOORBELL",
        (11 | 12, 129) => "MSG_RTN_GET_DDID",
        (11 | 12, 130) => "MSG_RTN_GET_TMA",
        (11 | 12, 131) => "MSG_RTN_GET_REALTIME",
        (11 | 12, 132) => "MSG_RTN_SAVE_WAVE",
        (11 | 12, 133) => "MSG_RTN_GET_TBA",
        (11 | 12, 134) => "MSG_RTN_GET_TBA_TO_PC",
        (12, 135) => "MSG_RTN_GET_SE_AID_ID",
        _ => return None,
    })
}

/// The sendmsg operand as LLVM prints it: gfx9 decodes ID 3:0, OP 6:4, STREAM 9:8 and names
/// the GS and SYSMSG operations; gfx11+ has 8-bit IDs and no operation. An encoding with
/// bits outside those fields prints as its number.
pub(super) fn sendmsg(gfx: u32, imm: u32) -> String {
    let (id, op, stream) = if gfx == 9 {
        (imm & 15, (imm >> 4) & 7, (imm >> 8) & 3)
    } else {
        (imm & 0xff, 0, 0)
    };
    let fields = if gfx == 9 {
        id | (op << 4) | (stream << 8)
    } else {
        id
    };
    if fields != imm {
        return imm.to_string();
    }
    let numeric = || format!("sendmsg({id}, {op}, {stream})");
    let Some(name) = msg_name(gfx, id) else {
        return numeric();
    };
    const GS_OPS: [&str; 4] = ["GS_OP_NOP", "GS_OP_CUT", "GS_OP_EMIT", "GS_OP_EMIT_CUT"];
    const SYS_OPS: [&str; 5] = [
        "",
        "SYSMSG_OP_ECC_ERR_INTERRUPT",
        "SYSMSG_OP_REG_RD",
        "SYSMSG_OP_HOST_TRAP_ACK",
        "SYSMSG_OP_TTRACE_PC",
    ];
    match (gfx, id) {
        // MSG_GS takes CUT/EMIT/EMIT_CUT with a stream, MSG_GS_DONE also NOP (no stream).
        (9, 2 | 3) if (op != 0 || id == 3) && op < 4 => {
            if op == 0 {
                if stream == 0 {
                    format!("sendmsg({name}, {})", GS_OPS[0])
                } else {
                    numeric()
                }
            } else {
                // CAST: op < 4.
                format!("sendmsg({name}, {}, {stream})", GS_OPS[op as usize])
            }
        }
        // gfx9's SYSMSG operations (HOST_TRAP_ACK is not a gfx9 one).
        (9, 15) if matches!(op, 1 | 2 | 4) && stream == 0 => {
            // CAST: op <= 4.
            format!("sendmsg({name}, {})", SYS_OPS[op as usize])
        }
        (9, 2 | 3 | 15) => numeric(),
        _ if op == 0 && stream == 0 => format!("sendmsg({name})"),
        _ => numeric(),
    }
}

/// s_waitcnt_depctr / s_wait_alu: the dependency counters (hold_cnt 7, sa_sdst 0, va_vdst
/// 15:12, va_sdst 11:9, va_ssrc 8, va_vcc 1, vm_vsrc 4:2) as LLVM prints them: the fields
/// not at their maximum, or every field when all are; the number (hex) when bits 5 or 6 are
/// set.
pub(super) fn depctr(imm: u32) -> String {
    if imm & 0x60 != 0 {
        return format!("{imm:#x}");
    }
    let fields: [(&str, u32, u32); 7] = [
        ("depctr_hold_cnt", 7, 1),
        ("depctr_sa_sdst", 0, 1),
        ("depctr_va_vdst", 12, 15),
        ("depctr_va_sdst", 9, 7),
        ("depctr_va_ssrc", 8, 1),
        ("depctr_va_vcc", 1, 1),
        ("depctr_vm_vsrc", 2, 7),
    ];
    let all: Vec<String> = fields
        .iter()
        .map(|(n, at, max)| format!("{n}({})", (imm >> at) & max))
        .collect();
    let set: Vec<String> = fields
        .iter()
        .zip(&all)
        .filter(|((_, at, max), _)| (imm >> at) & max != *max)
        .map(|(_, s)| s.clone())
        .collect();
    if set.is_empty() {
        all.join(" ")
    } else {
        set.join(" ")
    }
}

/// s_version's operand: the UC_VERSION names LLVM knows (GFX7 0, GFX10 4, GFX11 6, GFX12 9)
/// with the W64 (13), W32 (14) and MDP (15) bits, else the number (hex from 256).
pub(super) fn version(imm: u32) -> String {
    let name = match imm & 0x1fff {
        0 => Some("UC_VERSION_GFX7"),
        4 => Some("UC_VERSION_GFX10"),
        6 => Some("UC_VERSION_GFX11"),
        9 => Some("UC_VERSION_GFX12"),
        _ => None,
    };
    match name {
        Some(n) => {
            let mut s = n.to_string();
            let mut parts = 0;
            for (bit, f) in [
                (13, "UC_VERSION_W64_BIT"),
                (14, "UC_VERSION_W32_BIT"),
                (15, "UC_VERSION_MDP_BIT"),
            ] {
                if imm >> bit & 1 == 1 {
                    // Each further bit nests the expression so far, as LLVM's printer does.
                    if parts > 0 {
                        s = format!("({s})");
                    }
                    s = format!("{s}|{f}");
                    parts += 1;
                }
            }
            s
        }
        None if imm < 256 => imm.to_string(),
        None => format!("{imm:#x}"),
    }
}

/// gfx9's VGPR index mode operand: which of SRC0, SRC1, SRC2, DST are indexed.
pub(super) fn gpr_idx(mode: u32) -> String {
    let names: Vec<&str> = ["SRC0", "SRC1", "SRC2", "DST"]
        .iter()
        .enumerate()
        .filter(|(k, _)| mode >> k & 1 == 1)
        .map(|(_, n)| *n)
        .collect();
    format!("gpr_idx({})", names.join(","))
}

/// A 16-bit immediate as LLVM prints most SOPP operands: decimal up to 64, hex above.
pub(super) fn imm16(imm: u32) -> String {
    if imm <= 64 {
        imm.to_string()
    } else {
        format!("{imm:#x}")
    }
}
