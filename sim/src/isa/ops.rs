//! The decoded operations, shared by every family: one variant per semantics, named after
//! the gfx11 mnemonic (`Op::name`). Families map their opcodes onto these.

macro_rules! ops {
    ($($v:ident = $n:literal,)*) => {
        /// One operation with its semantics (independent of encoding and family).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[allow(missing_docs)]
        pub enum Op { $($v,)* }
        impl Op {
            /// The gfx11 mnemonic.
            #[must_use]
            pub fn name(self) -> &'static str {
                match self { $(Op::$v => $n,)* }
            }
            /// Whether the mnemonic names a 64-bit float (`f64`): a table built at compile
            /// time (the cost model asks per decoded instruction).
            #[must_use]
            pub fn is_f64(self) -> bool {
                match self { $(Op::$v => { const X: bool = contains($n.as_bytes(), b"f64"); X })* }
            }
            /// Whether the mnemonic names an atomic (`atomic`), as [`Op::is_f64`].
            #[must_use]
            pub fn is_atomic(self) -> bool {
                match self { $(Op::$v => { const X: bool = contains($n.as_bytes(), b"atomic"); X })* }
            }
        }
    };
}

/// Whether `hay` contains `needle` (for the compile-time tables of [`Op`]).
const fn contains(hay: &[u8], needle: &[u8]) -> bool {
    let mut i = 0;
    while i + needle.len() <= hay.len() {
        let mut k = 0;
        // PANIC: none; `k < needle.len()` and `i + needle.len() <= hay.len()` keep both
        // indices in bounds (and this runs only in the `const` items above: an out-of-bounds
        // index would be a compile error, never a run-time panic).
        while k < needle.len() && hay[i + k] == needle[k] {
            k += 1;
        }
        if k == needle.len() {
            return true;
        }
        i += 1;
    }
    false
}

ops! {
    // SOP2
    SAddU32 = "s_add_u32", SSubU32 = "s_sub_u32", SAddI32 = "s_add_i32", SSubI32 = "s_sub_i32",
    SAddcU32 = "s_addc_u32", SSubbU32 = "s_subb_u32", SAbsdiffI32 = "s_absdiff_i32",
    SLshlB32 = "s_lshl_b32", SLshlB64 = "s_lshl_b64", SLshrB32 = "s_lshr_b32",
    SLshrB64 = "s_lshr_b64", SAshrI32 = "s_ashr_i32", SAshrI64 = "s_ashr_i64",
    SLshl1AddU32 = "s_lshl1_add_u32", SLshl2AddU32 = "s_lshl2_add_u32",
    SLshl3AddU32 = "s_lshl3_add_u32", SLshl4AddU32 = "s_lshl4_add_u32",
    SMinI32 = "s_min_i32", SMinU32 = "s_min_u32", SMaxI32 = "s_max_i32", SMaxU32 = "s_max_u32",
    SAndB32 = "s_and_b32", SAndB64 = "s_and_b64", SOrB32 = "s_or_b32", SOrB64 = "s_or_b64",
    SXorB32 = "s_xor_b32", SXorB64 = "s_xor_b64", SNandB32 = "s_nand_b32", SNandB64 = "s_nand_b64",
    SNorB32 = "s_nor_b32", SNorB64 = "s_nor_b64", SXnorB32 = "s_xnor_b32", SXnorB64 = "s_xnor_b64",
    SAndNot1B32 = "s_and_not1_b32", SAndNot1B64 = "s_and_not1_b64",
    SOrNot1B32 = "s_or_not1_b32", SOrNot1B64 = "s_or_not1_b64",
    SBfeU32 = "s_bfe_u32", SBfeI32 = "s_bfe_i32", SBfeU64 = "s_bfe_u64", SBfeI64 = "s_bfe_i64",
    SBfmB32 = "s_bfm_b32", SBfmB64 = "s_bfm_b64", SMulI32 = "s_mul_i32",
    SMulHiU32 = "s_mul_hi_u32", SMulHiI32 = "s_mul_hi_i32",
    SCselectB32 = "s_cselect_b32", SCselectB64 = "s_cselect_b64",
    SPackLlB32B16 = "s_pack_ll_b32_b16", SPackLhB32B16 = "s_pack_lh_b32_b16",
    SPackHhB32B16 = "s_pack_hh_b32_b16",
    // SOP1
    SMovB32 = "s_mov_b32", SMovB64 = "s_mov_b64", SCmovB32 = "s_cmov_b32", SCmovB64 = "s_cmov_b64",
    SBrevB32 = "s_brev_b32", SCtzI32B32 = "s_ctz_i32_b32", SCtzI32B64 = "s_ctz_i32_b64",
    SClzI32U32 = "s_clz_i32_u32", SClzI32U64 = "s_clz_i32_u64",
    SClsI32 = "s_cls_i32",
    SSextI32I8 = "s_sext_i32_i8", SSextI32I16 = "s_sext_i32_i16",
    SBitset0B32 = "s_bitset0_b32", SBitset1B32 = "s_bitset1_b32", SAbsI32 = "s_abs_i32",
    SBcnt0I32B32 = "s_bcnt0_i32_b32", SBcnt1I32B32 = "s_bcnt1_i32_b32",
    SBcnt1I32B64 = "s_bcnt1_i32_b64", SNotB32 = "s_not_b32", SNotB64 = "s_not_b64",
    SAndSaveexecB32 = "s_and_saveexec_b32", SAndSaveexecB64 = "s_and_saveexec_b64",
    SOrSaveexecB32 = "s_or_saveexec_b32", SOrSaveexecB64 = "s_or_saveexec_b64",
    SXorSaveexecB32 = "s_xor_saveexec_b32", SXorSaveexecB64 = "s_xor_saveexec_b64",
    SAndNot0SaveexecB32 = "s_and_not0_saveexec_b32", SAndNot0SaveexecB64 = "s_and_not0_saveexec_b64",
    SAndNot1SaveexecB32 = "s_and_not1_saveexec_b32", SAndNot1SaveexecB64 = "s_and_not1_saveexec_b64",
    SGetpcB64 = "s_getpc_b64", SSetpcB64 = "s_setpc_b64", SSwappcB64 = "s_swappc_b64",
    // SOPK
    SMovkI32 = "s_movk_i32", SCmovkI32 = "s_cmovk_i32", SAddkI32 = "s_addk_i32",
    SMulkI32 = "s_mulk_i32", SVersion = "s_version", SCmpkEqI32 = "s_cmpk_eq_i32",
    SCmpkLgI32 = "s_cmpk_lg_i32", SCmpkGtI32 = "s_cmpk_gt_i32", SCmpkGeI32 = "s_cmpk_ge_i32",
    SCmpkLtI32 = "s_cmpk_lt_i32", SCmpkLeI32 = "s_cmpk_le_i32", SCmpkEqU32 = "s_cmpk_eq_u32",
    SCmpkLgU32 = "s_cmpk_lg_u32", SCmpkGtU32 = "s_cmpk_gt_u32", SCmpkGeU32 = "s_cmpk_ge_u32",
    SCmpkLtU32 = "s_cmpk_lt_u32", SCmpkLeU32 = "s_cmpk_le_u32",
    SWaitcntVscnt = "s_waitcnt_vscnt", SWaitcntVmcnt = "s_waitcnt_vmcnt",
    SWaitcntExpcnt = "s_waitcnt_expcnt", SWaitcntLgkmcnt = "s_waitcnt_lgkmcnt",
    // SOPC
    SCmpEqI32 = "s_cmp_eq_i32", SCmpLgI32 = "s_cmp_lg_i32", SCmpGtI32 = "s_cmp_gt_i32",
    SCmpGeI32 = "s_cmp_ge_i32", SCmpLtI32 = "s_cmp_lt_i32", SCmpLeI32 = "s_cmp_le_i32",
    SCmpEqU32 = "s_cmp_eq_u32", SCmpLgU32 = "s_cmp_lg_u32", SCmpGtU32 = "s_cmp_gt_u32",
    SCmpGeU32 = "s_cmp_ge_u32", SCmpLtU32 = "s_cmp_lt_u32", SCmpLeU32 = "s_cmp_le_u32",
    SBitcmp0B32 = "s_bitcmp0_b32", SBitcmp1B32 = "s_bitcmp1_b32",
    SCmpEqU64 = "s_cmp_eq_u64", SCmpLgU64 = "s_cmp_lg_u64",
    // SOPP
    SNop = "s_nop", SClause = "s_clause", SDelayAlu = "s_delay_alu", SWaitcnt = "s_waitcnt",
    SWaitcntDepctr = "s_waitcnt_depctr", SSleep = "s_sleep", SSetprio = "s_setprio",
    SCodeEnd = "s_code_end", SBranch = "s_branch", SCbranchScc0 = "s_cbranch_scc0",
    SCbranchScc1 = "s_cbranch_scc1", SCbranchVccz = "s_cbranch_vccz",
    SCbranchVccnz = "s_cbranch_vccnz", SCbranchExecz = "s_cbranch_execz",
    SCbranchExecnz = "s_cbranch_execnz", SEndpgm = "s_endpgm", SBarrier = "s_barrier",
    SSendmsg = "s_sendmsg", STrap = "s_trap", SIcacheInv = "s_icache_inv",
    // SMEM
    SLoadB32 = "s_load_b32", SLoadB64 = "s_load_b64", SLoadB128 = "s_load_b128",
    SLoadB256 = "s_load_b256", SLoadB512 = "s_load_b512", SGl1Inv = "s_gl1_inv",
    SDcacheInv = "s_dcache_inv", SMemtime = "s_memtime", SMemrealtime = "s_memrealtime",
    // VOP1
    VNop = "v_nop", VMovB32 = "v_mov_b32", VReadfirstlaneB32 = "v_readfirstlane_b32",
    VCvtI32F64 = "v_cvt_i32_f64", VCvtF64I32 = "v_cvt_f64_i32", VCvtF32I32 = "v_cvt_f32_i32",
    VCvtF32U32 = "v_cvt_f32_u32", VCvtU32F32 = "v_cvt_u32_f32", VCvtI32F32 = "v_cvt_i32_f32",
    VCvtF16F32 = "v_cvt_f16_f32", VCvtF32F16 = "v_cvt_f32_f16", VCvtF32F64 = "v_cvt_f32_f64",
    VCvtF64F32 = "v_cvt_f64_f32", VCvtF32Ubyte0 = "v_cvt_f32_ubyte0",
    VCvtF32Ubyte1 = "v_cvt_f32_ubyte1", VCvtF32Ubyte2 = "v_cvt_f32_ubyte2",
    VCvtF32Ubyte3 = "v_cvt_f32_ubyte3", VCvtU32F64 = "v_cvt_u32_f64", VCvtF64U32 = "v_cvt_f64_u32",
    VTruncF64 = "v_trunc_f64", VCeilF64 = "v_ceil_f64", VRndneF64 = "v_rndne_f64",
    VFloorF64 = "v_floor_f64", VFractF32 = "v_fract_f32", VTruncF32 = "v_trunc_f32",
    VCeilF32 = "v_ceil_f32", VRndneF32 = "v_rndne_f32", VFloorF32 = "v_floor_f32",
    VExpF32 = "v_exp_f32", VLogF32 = "v_log_f32", VRcpF32 = "v_rcp_f32",
    VRcpIflagF32 = "v_rcp_iflag_f32", VRsqF32 = "v_rsq_f32", VRcpF64 = "v_rcp_f64",
    VRsqF64 = "v_rsq_f64", VSqrtF32 = "v_sqrt_f32", VSqrtF64 = "v_sqrt_f64",
    VSinF32 = "v_sin_f32", VCosF32 = "v_cos_f32", VNotB32 = "v_not_b32",
    VBfrevB32 = "v_bfrev_b32", VClzI32U32 = "v_clz_i32_u32", VCtzI32B32 = "v_ctz_i32_b32",
    VClsI32 = "v_cls_i32",
    VExpF16 = "v_exp_f16", VLogF16 = "v_log_f16", VSqrtF16 = "v_sqrt_f16", VRcpF16 = "v_rcp_f16",
    VRsqF16 = "v_rsq_f16", VSinF16 = "v_sin_f16", VCosF16 = "v_cos_f16", VMin3F16 = "v_min3_f16",
    VMax3F16 = "v_max3_f16", VMed3F16 = "v_med3_f16",
    VFrexpExpI32F32 = "v_frexp_exp_i32_f32", VFrexpMantF32 = "v_frexp_mant_f32",
    VFractF64 = "v_fract_f64", VFrexpExpI32F64 = "v_frexp_exp_i32_f64",
    VFrexpMantF64 = "v_frexp_mant_f64",
    // VOP2
    VCndmaskB32 = "v_cndmask_b32", VAddF32 = "v_add_f32", VSubF32 = "v_sub_f32",
    VSubrevF32 = "v_subrev_f32", VMulF32 = "v_mul_f32", VMulI32I24 = "v_mul_i32_i24",
    VMulHiI32I24 = "v_mul_hi_i32_i24", VMulU32U24 = "v_mul_u32_u24",
    VMulHiU32U24 = "v_mul_hi_u32_u24", VMinF32 = "v_min_f32", VMaxF32 = "v_max_f32",
    VMinI32 = "v_min_i32", VMaxI32 = "v_max_i32", VMinU32 = "v_min_u32", VMaxU32 = "v_max_u32",
    VLshlrevB32 = "v_lshlrev_b32", VLshrrevB32 = "v_lshrrev_b32", VAshrrevI32 = "v_ashrrev_i32",
    VAndB32 = "v_and_b32", VOrB32 = "v_or_b32", VXorB32 = "v_xor_b32", VXnorB32 = "v_xnor_b32",
    VAddCoCiU32 = "v_add_co_ci_u32", VSubCoCiU32 = "v_sub_co_ci_u32",
    VSubrevCoCiU32 = "v_subrev_co_ci_u32", VAddNcU32 = "v_add_nc_u32", VSubNcU32 = "v_sub_nc_u32",
    VSubrevNcU32 = "v_subrev_nc_u32", VFmacF32 = "v_fmac_f32", VFmamkF32 = "v_fmamk_f32",
    VFmaakF32 = "v_fmaak_f32", VCvtPkRtzF16F32 = "v_cvt_pk_rtz_f16_f32", VAddF16 = "v_add_f16",
    VSubF16 = "v_sub_f16", VMulF16 = "v_mul_f16", VFmacF16 = "v_fmac_f16", VMaxF16 = "v_max_f16",
    VMinF16 = "v_min_f16",
    // VOPC (condition in Inst::sub)
    VCmpF16 = "v_cmp_*_f16", VCmpF32 = "v_cmp_*_f32", VCmpF64 = "v_cmp_*_f64",
    VCmpI16 = "v_cmp_*_i16", VCmpU16 = "v_cmp_*_u16", VCmpI32 = "v_cmp_*_i32",
    VCmpU32 = "v_cmp_*_u32", VCmpI64 = "v_cmp_*_i64", VCmpU64 = "v_cmp_*_u64",
    VCmpClassF32 = "v_cmp_class_f32", VCmpClassF64 = "v_cmp_class_f64",
    VCmpClassF16 = "v_cmp_class_f16",
    // VOP3
    VFmaF32 = "v_fma_f32", VFmaF64 = "v_fma_f64", VBfeU32 = "v_bfe_u32", VBfeI32 = "v_bfe_i32",
    VBfiB32 = "v_bfi_b32", VAlignbitB32 = "v_alignbit_b32", VAlignbyteB32 = "v_alignbyte_b32",
    VMin3F32 = "v_min3_f32", VMin3I32 = "v_min3_i32", VMin3U32 = "v_min3_u32",
    VMax3F32 = "v_max3_f32", VMax3I32 = "v_max3_i32", VMax3U32 = "v_max3_u32",
    VMed3F32 = "v_med3_f32", VMed3I32 = "v_med3_i32", VMed3U32 = "v_med3_u32",
    VXor3B32 = "v_xor3_b32", VLshlAddU32 = "v_lshl_add_u32", VAddLshlU32 = "v_add_lshl_u32",
    VAdd3U32 = "v_add3_u32", VLshlOrB32 = "v_lshl_or_b32", VAndOrB32 = "v_and_or_b32",
    VOr3B32 = "v_or3_b32", VMadU64U32 = "v_mad_u64_u32", VMadI64I32 = "v_mad_i64_i32",
    VAddCoU32 = "v_add_co_u32", VSubCoU32 = "v_sub_co_u32", VSubrevCoU32 = "v_subrev_co_u32",
    VLdexpF32 = "v_ldexp_f32", VBfmB32 = "v_bfm_b32", VBcntU32B32 = "v_bcnt_u32_b32",
    VMbcntLoU32B32 = "v_mbcnt_lo_u32_b32", VMbcntHiU32B32 = "v_mbcnt_hi_u32_b32",
    VSubNcI32 = "v_sub_nc_i32", VAddNcI32 = "v_add_nc_i32", VAddF64 = "v_add_f64",
    VMulF64 = "v_mul_f64", VMinF64 = "v_min_f64", VMaxF64 = "v_max_f64", VLdexpF64 = "v_ldexp_f64",
    VMulLoU32 = "v_mul_lo_u32", VMulHiU32 = "v_mul_hi_u32", VMulHiI32 = "v_mul_hi_i32",
    VLshlrevB64 = "v_lshlrev_b64", VLshrrevB64 = "v_lshrrev_b64", VAshrrevI64 = "v_ashrrev_i64",
    VReadlaneB32 = "v_readlane_b32", VWritelaneB32 = "v_writelane_b32",
    VMadU32U24 = "v_mad_u32_u24", VMadI32I24 = "v_mad_i32_i24", VPermB32 = "v_perm_b32",
    VXadU32 = "v_xad_u32", VLshlAddU64 = "v_lshl_add_u64",
    // VINTERP (gfx11+): parameter interpolation from the quad's lanes.
    VInterpP10F32 = "v_interp_p10_f32", VInterpP2F32 = "v_interp_p2_f32",
    VInterpP10F16F32 = "v_interp_p10_f16_f32", VInterpP2F16F32 = "v_interp_p2_f16_f32",
    VInterpP10RtzF16F32 = "v_interp_p10_rtz_f16_f32",
    VInterpP2RtzF16F32 = "v_interp_p2_rtz_f16_f32",
    // VOP3P: packed 16-bit halves (op_sel/op_sel_hi pick each source half).
    VPkMadI16 = "v_pk_mad_i16", VPkMulLoU16 = "v_pk_mul_lo_u16", VPkAddI16 = "v_pk_add_i16",
    VPkSubI16 = "v_pk_sub_i16", VPkLshlrevB16 = "v_pk_lshlrev_b16",
    VPkLshrrevB16 = "v_pk_lshrrev_b16", VPkAshrrevI16 = "v_pk_ashrrev_i16",
    VPkMaxI16 = "v_pk_max_i16", VPkMinI16 = "v_pk_min_i16", VPkMadU16 = "v_pk_mad_u16",
    VPkAddU16 = "v_pk_add_u16", VPkSubU16 = "v_pk_sub_u16", VPkMaxU16 = "v_pk_max_u16",
    VPkMinU16 = "v_pk_min_u16", VPkFmaF16 = "v_pk_fma_f16", VPkAddF16 = "v_pk_add_f16",
    VPkMulF16 = "v_pk_mul_f16", VPkMinF16 = "v_pk_min_f16", VPkMaxF16 = "v_pk_max_f16",
    // DS
    DsAddU32 = "ds_add_u32", DsSubU32 = "ds_sub_u32", DsMinI32 = "ds_min_i32",
    DsMaxI32 = "ds_max_i32", DsMinU32 = "ds_min_u32", DsMaxU32 = "ds_max_u32",
    DsAndB32 = "ds_and_b32", DsOrB32 = "ds_or_b32", DsXorB32 = "ds_xor_b32",
    DsAddRtnU32 = "ds_add_rtn_u32", DsSubRtnU32 = "ds_sub_rtn_u32",
    DsMinRtnU32 = "ds_min_rtn_u32", DsMaxRtnU32 = "ds_max_rtn_u32",
    DsSwapRtnB32 = "ds_storexchg_rtn_b32", DsCmpswapRtnB32 = "ds_cmpstore_rtn_b32",
    DsRsubU32 = "ds_rsub_u32", DsIncU32 = "ds_inc_u32", DsDecU32 = "ds_dec_u32",
    DsCmpswapB32 = "ds_cmpstore_b32", DsAddF32 = "ds_add_f32", DsRsubRtnU32 = "ds_rsub_rtn_u32",
    DsIncRtnU32 = "ds_inc_rtn_u32", DsDecRtnU32 = "ds_dec_rtn_u32",
    DsMinRtnI32 = "ds_min_rtn_i32", DsMaxRtnI32 = "ds_max_rtn_i32",
    DsAndRtnB32 = "ds_and_rtn_b32", DsOrRtnB32 = "ds_or_rtn_b32", DsXorRtnB32 = "ds_xor_rtn_b32",
    DsAddRtnF32 = "ds_add_rtn_f32",
    DsStoreB8 = "ds_store_b8", DsStoreB16 = "ds_store_b16", DsStoreB32 = "ds_store_b32",
    DsStoreB64 = "ds_store_b64", DsStoreB96 = "ds_store_b96", DsStoreB128 = "ds_store_b128",
    DsStore2B32 = "ds_store_2addr_b32", DsStore2St64B32 = "ds_store_2addr_stride64_b32",
    DsStore2B64 = "ds_store_2addr_b64",
    DsLoadU8 = "ds_load_u8", DsLoadI8 = "ds_load_i8", DsLoadU16 = "ds_load_u16",
    DsLoadI16 = "ds_load_i16", DsLoadB32 = "ds_load_b32", DsLoadB64 = "ds_load_b64",
    DsLoadB96 = "ds_load_b96", DsLoadB128 = "ds_load_b128",
    DsLoad2B32 = "ds_load_2addr_b32", DsLoad2St64B32 = "ds_load_2addr_stride64_b32",
    DsLoad2B64 = "ds_load_2addr_b64", DsNop = "ds_nop",
    // FLAT / GLOBAL / SCRATCH (segment in Inst::sub)
    MLoadU8 = "load_u8", MLoadI8 = "load_i8", MLoadU16 = "load_u16", MLoadI16 = "load_i16",
    MLoadB32 = "load_b32", MLoadB64 = "load_b64", MLoadB96 = "load_b96", MLoadB128 = "load_b128",
    MStoreB8 = "store_b8", MStoreB16 = "store_b16", MStoreB32 = "store_b32",
    MStoreB64 = "store_b64", MStoreB96 = "store_b96", MStoreB128 = "store_b128",
    MAtomicSwapB32 = "atomic_swap_b32", MAtomicCmpswapB32 = "atomic_cmpswap_b32",
    MAtomicAddU32 = "atomic_add_u32", MAtomicSubU32 = "atomic_sub_u32",
    MAtomicMinI32 = "atomic_min_i32", MAtomicMinU32 = "atomic_min_u32",
    MAtomicMaxI32 = "atomic_max_i32", MAtomicMaxU32 = "atomic_max_u32",
    MAtomicAndB32 = "atomic_and_b32", MAtomicOrB32 = "atomic_or_b32",
    MAtomicXorB32 = "atomic_xor_b32", MAtomicIncU32 = "atomic_inc_u32",
    MAtomicDecU32 = "atomic_dec_u32", MAtomicAddU64 = "atomic_add_u64",
    MAtomicSwapB64 = "atomic_swap_b64", MAtomicCmpswapB64 = "atomic_cmpswap_b64",
    MAtomicAddF32 = "atomic_add_f32",
    // Cache control with no architectural effect in the simulator.
    BufferGl0Inv = "buffer_gl0_inv", BufferGl1Inv = "buffer_gl1_inv",
    // gfx12
    SWaitLoadcnt = "s_wait_loadcnt", SWaitStorecnt = "s_wait_storecnt",
    SWaitSamplecnt = "s_wait_samplecnt", SWaitBvhcnt = "s_wait_bvhcnt",
    SWaitExpcnt = "s_wait_expcnt", SWaitDscnt = "s_wait_dscnt", SWaitKmcnt = "s_wait_kmcnt",
    SWaitAlu = "s_wait_alu", SBarrierSignal = "s_barrier_signal",
    SBarrierWait = "s_barrier_wait", SLoadB96 = "s_load_b96", GlobalInv = "global_inv",
    GlobalWb = "global_wb", GlobalWbinv = "global_wbinv",
    // division helpers and more
    VDivScaleF32 = "v_div_scale_f32", VDivScaleF64 = "v_div_scale_f64",
    VDivFmasF32 = "v_div_fmas_f32", VDivFmasF64 = "v_div_fmas_f64",
    VDivFixupF32 = "v_div_fixup_f32", VDivFixupF64 = "v_div_fixup_f64",
    VFmamkF16 = "v_fmamk_f16", VFmaakF16 = "v_fmaak_f16", VFmaF16 = "v_fma_f16",
    VFmacF64 = "v_fmac_f64", SFf1I32B64 = "s_ff1_i32_b64",
    // gfx9
    VMacF32 = "v_mac_f32", VAddCoU32Gfx9 = "v_add_co_u32_vop2", SFf1I32B32 = "s_ff1_i32_b32",
    VFfbhU32 = "v_ffbh_u32", VFfblB32 = "v_ffbl_b32", BufferWbinvl1Vol = "buffer_wbinvl1_vol",
    // gfx9 cache controls (MUBUF; no architectural effect in the simulator, whose memory is
    // coherent).
    BufferWbinvl1 = "buffer_wbinvl1", BufferWbl2 = "buffer_wbl2", BufferInvl2 = "buffer_invl2",
    // gfx90a/gfx942: moves between the AGPRs and the ArchVGPRs of the unified VGPR file.
    VAccvgprReadB32 = "v_accvgpr_read_b32", VAccvgprWriteB32 = "v_accvgpr_write_b32",
    VAccvgprMovB32 = "v_accvgpr_mov_b32",
    // 16-bit VALU (gfx9 VOP2, gfx11/gfx12 VOP3), mixed-precision fma, packs, 64-bit moves
    VSubrevF16 = "v_subrev_f16", VMacF16 = "v_mac_f16", VMadmkF32 = "v_madmk_f32",
    VMadakF32 = "v_madak_f32", VMadmkF16 = "v_madmk_f16", VMadakF16 = "v_madak_f16",
    VLdexpF16 = "v_ldexp_f16", VAddU16 = "v_add_nc_u16", VSubU16 = "v_sub_nc_u16",
    VSubrevU16 = "v_subrev_u16", VMulLoU16 = "v_mul_lo_u16", VLshlrevB16 = "v_lshlrev_b16",
    VLshrrevB16 = "v_lshrrev_b16", VAshrrevI16 = "v_ashrrev_i16", VMaxU16 = "v_max_u16",
    VMaxI16 = "v_max_i16", VMinU16 = "v_min_u16", VMinI16 = "v_min_i16",
    VPackB32F16 = "v_pack_b32_f16", VFmaMixF32 = "v_fma_mix_f32",
    VFmaMixloF16 = "v_fma_mixlo_f16", VFmaMixhiF16 = "v_fma_mixhi_f16",
    VPkMovB32 = "v_pk_mov_b32", VMovB64 = "v_mov_b64", SAddNcU64 = "s_add_nc_u64",
    SSubNcU64 = "s_sub_nc_u64", SMulU64 = "s_mul_u64",
    // 64-bit LDS and memory atomics, 16-bit conversions, gfx12 SALU floats and waits
    DsAddU64 = "ds_add_u64", DsSubU64 = "ds_sub_u64", DsMinI64 = "ds_min_i64",
    DsMaxI64 = "ds_max_i64", DsMinU64 = "ds_min_u64", DsMaxU64 = "ds_max_u64",
    DsAndB64 = "ds_and_b64", DsOrB64 = "ds_or_b64", DsXorB64 = "ds_xor_b64",
    DsAddRtnU64 = "ds_add_rtn_u64", DsSubRtnU64 = "ds_sub_rtn_u64",
    DsMinRtnI64 = "ds_min_rtn_i64", DsMaxRtnI64 = "ds_max_rtn_i64",
    DsMinRtnU64 = "ds_min_rtn_u64", DsMaxRtnU64 = "ds_max_rtn_u64",
    DsAndRtnB64 = "ds_and_rtn_b64", DsOrRtnB64 = "ds_or_rtn_b64", DsXorRtnB64 = "ds_xor_rtn_b64",
    MAtomicSubU64 = "atomic_sub_u64", MAtomicMinI64 = "atomic_min_i64",
    MAtomicMinU64 = "atomic_min_u64", MAtomicMaxI64 = "atomic_max_i64",
    MAtomicMaxU64 = "atomic_max_u64", MAtomicAndB64 = "atomic_and_b64",
    MAtomicOrB64 = "atomic_or_b64", MAtomicXorB64 = "atomic_xor_b64",
    VCvtF16U16 = "v_cvt_f16_u16", VCvtF16I16 = "v_cvt_f16_i16", VCvtU16F16 = "v_cvt_u16_f16",
    VCvtI16F16 = "v_cvt_i16_f16", SAddF32 = "s_add_f32", SSubF32 = "s_sub_f32",
    SMulF32 = "s_mul_f32", SMinNumF32 = "s_min_num_f32", SMaxNumF32 = "s_max_num_f32",
    SFmacF32 = "s_fmac_f32", SCvtF32I32 = "s_cvt_f32_i32", SCvtF32U32 = "s_cvt_f32_u32",
    SCvtI32F32 = "s_cvt_i32_f32", SCvtU32F32 = "s_cvt_u32_f32",
    SWaitLoadcntDscnt = "s_wait_loadcnt_dscnt", SWaitStorecntDscnt = "s_wait_storecnt_dscnt",
    // gfx90a's unfused v_mad_f32; gfx90a/gfx942's global f64 atomic add.
    VMadF32 = "v_mad_f32", MAtomicAddF64 = "atomic_add_f64",
    // Cross-lane DS operations (no LDS access).
    DsSwizzleB32 = "ds_swizzle_b32", DsPermuteB32 = "ds_permute_b32",
    DsBpermuteB32 = "ds_bpermute_b32",
    // VOPD pair (ops in Inst::vopd)
    VDual = "v_dual",
    // gfx90a/gfx942 packed f32 (two f32 per 64-bit register pair).
    VPkFmaF32 = "v_pk_fma_f32", VPkMulF32 = "v_pk_mul_f32", VPkAddF32 = "v_pk_add_f32",
    // gfx12 scalar float compares (condition in Inst::sub, as VOPC's).
    SCmpF32 = "s_cmp_*_f32", SCmpF16 = "s_cmp_*_f16",
    // gfx11 instruction-prefetch hint (no architectural effect).
    SSetInstPrefetchDistance = "s_set_inst_prefetch_distance",
    // gfx10+ lane permutes within (and across) rows of 16 lanes.
    VPermlane16B32 = "v_permlane16_b32", VPermlanex16B32 = "v_permlanex16_b32",
    // gfx11+ min of a max and max of a min (gfx12: the *_num forms).
    VMaxminF32 = "v_maxmin_f32", VMinmaxF32 = "v_minmax_f32",
    // Matrix cores: gfx90a/gfx942 MFMA and SMFMAC, gfx11/gfx12 WMMA and SWMMAC; which one
    // (shape, types, names) is the `isa::mai::TABLE` row in the low byte of `Inst::imm`.
    VMfma = "v_mfma", VWmma = "v_wmma",
    // 8/16-bit loads into one half of a VGPR, the other half kept (gfx11/gfx12 FLAT family).
    MLoadD16U8 = "load_d16_u8", MLoadD16I8 = "load_d16_i8", MLoadD16B16 = "load_d16_b16",
    MLoadD16HiU8 = "load_d16_hi_u8", MLoadD16HiI8 = "load_d16_hi_i8",
    MLoadD16HiB16 = "load_d16_hi_b16",
    // Stores of the high half of a VGPR; more 64-bit and packed float atomics (gfx90a/gfx942).
    MStoreD16HiB8 = "store_d16_hi_b8", MStoreD16HiB16 = "store_d16_hi_b16",
    MAtomicIncU64 = "atomic_inc_u64", MAtomicDecU64 = "atomic_dec_u64",
    MAtomicMinF64 = "atomic_min_f64", MAtomicMaxF64 = "atomic_max_f64",
    MAtomicPkAddF16 = "atomic_pk_add_f16", MAtomicPkAddBf16 = "atomic_pk_add_bf16",
    // SMEM through a buffer descriptor, sub-dword scalar loads (gfx12), scalar stores and
    // atomics (gfx9; the atomic's operation in Inst::sub: 0 swap, 1 cmpswap, 2 add, 3 sub,
    // 4 smin, 5 umin, 6 smax, 7 umax, 8 and, 9 or, 10 xor, 11 inc, 12 dec, +32 the 64-bit
    // form), and cache controls and prefetches (no architectural effect in the simulator).
    SBufferLoadB32 = "s_buffer_load_b32", SBufferLoadB64 = "s_buffer_load_b64",
    SBufferLoadB96 = "s_buffer_load_b96", SBufferLoadB128 = "s_buffer_load_b128",
    SBufferLoadB256 = "s_buffer_load_b256", SBufferLoadB512 = "s_buffer_load_b512",
    SLoadI8 = "s_load_i8", SLoadU8 = "s_load_u8", SLoadI16 = "s_load_i16", SLoadU16 = "s_load_u16",
    SBufferLoadI8 = "s_buffer_load_i8", SBufferLoadU8 = "s_buffer_load_u8",
    SBufferLoadI16 = "s_buffer_load_i16", SBufferLoadU16 = "s_buffer_load_u16",
    SStoreB32 = "s_store_dword", SStoreB64 = "s_store_dwordx2", SStoreB128 = "s_store_dwordx4",
    SBufferStoreB32 = "s_buffer_store_dword", SBufferStoreB64 = "s_buffer_store_dwordx2",
    SBufferStoreB128 = "s_buffer_store_dwordx4", SAtomic = "s_atomic_*",
    SBufferAtomic = "s_buffer_atomic_*", SDcacheWb = "s_dcache_wb",
    SDcacheInvVol = "s_dcache_inv_vol", SDcacheWbVol = "s_dcache_wb_vol",
    SDcacheDiscard = "s_dcache_discard", SDcacheDiscardX2 = "s_dcache_discard_x2",
    SAtcProbe = "s_atc_probe", SAtcProbeBuffer = "s_atc_probe_buffer",
    SPrefetchInst = "s_prefetch_inst", SPrefetchInstPcRel = "s_prefetch_inst_pc_rel",
    SPrefetchData = "s_prefetch_data", SPrefetchDataPcRel = "s_prefetch_data_pc_rel",
    SBufferPrefetchData = "s_buffer_prefetch_data",
    // More VOP1: f16 rounding and frexp, norm conversions, saturating packs, swaps,
    // rounding f32 conversions, 16-bit extensions, gfx11's wave64 half swap, and the
    // operations without effect here (no FP exception state, no pipeline to flush).
    VFloorF16 = "v_floor_f16", VCeilF16 = "v_ceil_f16", VTruncF16 = "v_trunc_f16",
    VRndneF16 = "v_rndne_f16", VFractF16 = "v_fract_f16", VFrexpMantF16 = "v_frexp_mant_f16",
    VFrexpExpI16F16 = "v_frexp_exp_i16_f16", VCvtNormI16F16 = "v_cvt_norm_i16_f16",
    VCvtNormU16F16 = "v_cvt_norm_u16_f16", VSatPkU8I16 = "v_sat_pk_u8_i16",
    VSwapB32 = "v_swap_b32", VCvtFloorI32F32 = "v_cvt_floor_i32_f32",
    VCvtNearestI32F32 = "v_cvt_nearest_i32_f32", VCvtOffF32I4 = "v_cvt_off_f32_i4",
    VNotB16 = "v_not_b16", VCvtI32I16 = "v_cvt_i32_i16", VCvtU32U16 = "v_cvt_u32_u16",
    VPermlane64B32 = "v_permlane64_b32", VClrexcp = "v_clrexcp", VPipeflush = "v_pipeflush",
    // Typed buffer loads and stores (MUBUF *_format_*, MTBUF): components converted by a
    // buffer format (the descriptor's, or MTBUF's own): `Inst::omod` holds the component
    // count - 1 (bits 0..2), d16 (bit 2) and d16_hi (bit 3); `Inst::opsel` MTBUF's format
    // field with bit 7 set (`decode::format_fields`).
    MLoadFormat = "load_format", MStoreFormat = "store_format",
    // GLOBAL dwords at SADDR + offset + lane * 4 (gfx10+; no address VGPR).
    MLoadAddtidB32 = "load_addtid_b32", MStoreAddtidB32 = "store_addtid_b32",
    // RDNA memory atomics: clamped and conditional subtract, float compare-swap and min/max.
    MAtomicCsubU32 = "atomic_csub_u32", MAtomicCondSubU32 = "atomic_cond_sub_u32",
    MAtomicCmpswapF32 = "atomic_cmpswap_f32", MAtomicMinF32 = "atomic_min_f32",
    MAtomicMaxF32 = "atomic_max_f32",
    // gfx12 GLOBAL/SCRATCH: a block of up to 32 VGPRs selected by M0 to consecutive dwords.
    MLoadBlock = "load_block", MStoreBlock = "store_block",
    // gfx12 GLOBAL loads that transpose a 16x16 matrix of 16-bit (b128) or 8-bit (b64) data.
    MLoadTrB128 = "load_tr_b128", MLoadTrB64 = "load_tr_b64",
    // gfx12 GLOBAL: the (ID, value) pair's ordered add (streamout offsets).
    MAtomicOrderedAddB64 = "atomic_ordered_add_b64",
    // VOP3 integer operations on 16-bit halves and bytes: three-way min/max/median,
    // multiply-adds, sums of absolute differences, byte averages, saturating packs, signed
    // 16-bit add/sub, 16-bit logic, and gfx11's integer max-of-min/min-of-max.
    VMin3I16 = "v_min3_i16", VMin3U16 = "v_min3_u16", VMax3I16 = "v_max3_i16",
    VMax3U16 = "v_max3_u16", VMed3I16 = "v_med3_i16", VMed3U16 = "v_med3_u16",
    VMadU16 = "v_mad_u16", VMadI16 = "v_mad_i16", VMadU32U16 = "v_mad_u32_u16",
    VMadI32I16 = "v_mad_i32_i16", VSadU8 = "v_sad_u8", VSadHiU8 = "v_sad_hi_u8",
    VSadU16 = "v_sad_u16", VSadU32 = "v_sad_u32", VMsadU8 = "v_msad_u8", VLerpU8 = "v_lerp_u8",
    VCvtPkU16U32 = "v_cvt_pk_u16_u32", VCvtPkI16I32 = "v_cvt_pk_i16_i32",
    VMaxminI32 = "v_maxmin_i32", VMaxminU32 = "v_maxmin_u32", VMinmaxI32 = "v_minmax_i32",
    VMinmaxU32 = "v_minmax_u32", VAndB16 = "v_and_b16", VOrB16 = "v_or_b16",
    VXorB16 = "v_xor_b16", VAddNcI16 = "v_add_nc_i16", VSubNcI16 = "v_sub_nc_i16",
    // gfx9's VI-compatible 16-bit multiply-adds (no op_sel; the same arithmetic).
    VMadLegacyU16 = "v_mad_legacy_u16", VMadLegacyI16 = "v_mad_legacy_i16",
    // gfx12's VOP3 scalar transcendentals: one value per wave, from a scalar source to an SGPR.
    VSExpF32 = "v_s_exp_f32", VSExpF16 = "v_s_exp_f16", VSLogF32 = "v_s_log_f32",
    VSLogF16 = "v_s_log_f16", VSRcpF32 = "v_s_rcp_f32", VSRcpF16 = "v_s_rcp_f16",
    VSRsqF32 = "v_s_rsq_f32", VSRsqF16 = "v_s_rsq_f16", VSSqrtF32 = "v_s_sqrt_f32",
    VSSqrtF16 = "v_s_sqrt_f16",
    // More VALU: 16-bit select, f16 max-of-min/min-of-max and div_fixup, VOP3 dot products,
    // packed conversions, cube-map coordinates, the DX9 zero-preserving multiplies, mullit,
    // gfx12's IEEE-754-2019 minimum/maximum family, VOP3P dot products.
    VCndmaskB16 = "v_cndmask_b16", VMaxminF16 = "v_maxmin_f16", VMinmaxF16 = "v_minmax_f16",
    VDivFixupF16 = "v_div_fixup_f16", VDot2F16F16 = "v_dot2_f16_f16",
    VDot2Bf16Bf16 = "v_dot2_bf16_bf16", VCvtPkI16F32 = "v_cvt_pk_i16_f32",
    VCvtPkU16F32 = "v_cvt_pk_u16_f32", VCvtPkNormI16F16 = "v_cvt_pk_norm_i16_f16",
    VCvtPkNormU16F16 = "v_cvt_pk_norm_u16_f16", VCvtPkNormI16F32 = "v_cvt_pk_norm_i16_f32",
    VCvtPkNormU16F32 = "v_cvt_pk_norm_u16_f32", VCvtPkU8F32 = "v_cvt_pk_u8_f32",
    VCubeidF32 = "v_cubeid_f32", VCubescF32 = "v_cubesc_f32", VCubetcF32 = "v_cubetc_f32",
    VCubemaF32 = "v_cubema_f32", VMullitF32 = "v_mullit_f32",
    VFmaDx9ZeroF32 = "v_fma_dx9_zero_f32", VMulDx9ZeroF32 = "v_mul_dx9_zero_f32",
    VFmacDx9ZeroF32 = "v_fmac_dx9_zero_f32", VMinimumF32 = "v_minimum_f32",
    VMaximumF32 = "v_maximum_f32", VMinimumF16 = "v_minimum_f16", VMaximumF16 = "v_maximum_f16",
    VMinimumF64 = "v_minimum_f64", VMaximumF64 = "v_maximum_f64",
    VMinimum3F32 = "v_minimum3_f32", VMaximum3F32 = "v_maximum3_f32",
    VMinimum3F16 = "v_minimum3_f16", VMaximum3F16 = "v_maximum3_f16",
    VMinimummaximumF32 = "v_minimummaximum_f32", VMaximumminimumF32 = "v_maximumminimum_f32",
    VMinimummaximumF16 = "v_minimummaximum_f16", VMaximumminimumF16 = "v_maximumminimum_f16",
    VPkMinimumF16 = "v_pk_minimum_f16", VPkMaximumF16 = "v_pk_maximum_f16",
    VDot2F32F16 = "v_dot2_f32_f16", VDot2F32Bf16 = "v_dot2_f32_bf16",
    VDot4I32Iu8 = "v_dot4_i32_iu8", VDot4U32U8 = "v_dot4_u32_u8", VDot8I32Iu4 = "v_dot8_i32_iu4",
    VDot8U32U4 = "v_dot8_u32_u4", VDot2accF32F16 = "v_dot2acc_f32_f16",
    VPkFmacF16 = "v_pk_fmac_f16",
    // Relative VGPR moves (M0-indexed), the quad SADs, and v_trig_preop_f64.
    VMovreldB32 = "v_movreld_b32", VMovrelsB32 = "v_movrels_b32", VMovrelsdB32 = "v_movrelsd_b32",
    VMovrelsd2B32 = "v_movrelsd_2_b32", VSwaprelB32 = "v_swaprel_b32",
    VQsadPkU16U8 = "v_qsad_pk_u16_u8", VMqsadPkU16U8 = "v_mqsad_pk_u16_u8",
    VMqsadU32U8 = "v_mqsad_u32_u8", VTrigPreopF64 = "v_trig_preop_f64",
    // gfx9's VALU: VI-compatible f16 multiply-adds and div_fixup, legacy f32 mad, legacy
    // exp/log, the byte-accumulating conversion, the signed VOP2/VOP3P dot products.
    VMadF16 = "v_mad_f16", VMadLegacyF16 = "v_mad_legacy_f16", VFmaLegacyF16 = "v_fma_legacy_f16",
    VDivFixupLegacyF16 = "v_div_fixup_legacy_f16", VMadLegacyF32 = "v_mad_legacy_f32",
    VExpLegacyF32 = "v_exp_legacy_f32", VLogLegacyF32 = "v_log_legacy_f32",
    VCvtPkaccumU8F32 = "v_cvt_pkaccum_u8_f32", VDot2cI32I16 = "v_dot2c_i32_i16",
    VDot4cI32I8 = "v_dot4c_i32_i8", VDot8cI32I4 = "v_dot8c_i32_i4", VDot2I32I16 = "v_dot2_i32_i16",
    VDot2U32U16 = "v_dot2_u32_u16", VDot4I32I8 = "v_dot4_i32_i8", VDot8I32I4 = "v_dot8_i32_i4",
    // gfx11/gfx12's illegal-instruction opcode and gfx12's VGPR-selected lane permutes.
    VIllegal = "v_illegal", VPermlane16VarB32 = "v_permlane16_var_b32",
    VPermlanex16VarB32 = "v_permlanex16_var_b32",
    // 8-bit floats (gfx942: E4M3/E5M2 FNUZ; gfx12: OCP E4M3FN/E5M2): conversions to and from f32.
    VCvtF32Fp8 = "v_cvt_f32_fp8", VCvtF32Bf8 = "v_cvt_f32_bf8", VCvtPkF32Fp8 = "v_cvt_pk_f32_fp8",
    VCvtPkF32Bf8 = "v_cvt_pk_f32_bf8", VCvtPkFp8F32 = "v_cvt_pk_fp8_f32",
    VCvtPkBf8F32 = "v_cvt_pk_bf8_f32", VCvtSrFp8F32 = "v_cvt_sr_fp8_f32",
    VCvtSrBf8F32 = "v_cvt_sr_bf8_f32", VDot4F32Fp8Bf8 = "v_dot4_f32_fp8_bf8",
    VDot4F32Bf8Fp8 = "v_dot4_f32_bf8_fp8", VDot4F32Fp8Fp8 = "v_dot4_f32_fp8_fp8",
    VDot4F32Bf8Bf8 = "v_dot4_f32_bf8_bf8", VMovB16 = "v_mov_b16",
    // More LDS operations: masked or, float compare-store/min/max, wrap, 64-bit
    // inc/dec/rsub/swap/compare-store, f64 add (gfx90a), gfx12's conditional and clamped
    // subtracts and packed adds, d16 loads and stores, stride-64 pairs of 64-bit values.
    DsMskorB32 = "ds_mskor_b32", DsMskorRtnB32 = "ds_mskor_rtn_b32",
    DsMskorB64 = "ds_mskor_b64", DsMskorRtnB64 = "ds_mskor_rtn_b64",
    DsCmpstoreF32 = "ds_cmpstore_f32", DsCmpstoreRtnF32 = "ds_cmpstore_rtn_f32",
    DsCmpstoreB64 = "ds_cmpstore_b64", DsCmpstoreRtnB64 = "ds_cmpstore_rtn_b64",
    DsCmpstoreF64 = "ds_cmpstore_f64", DsCmpstoreRtnF64 = "ds_cmpstore_rtn_f64",
    DsMinF32 = "ds_min_f32", DsMaxF32 = "ds_max_f32", DsMinRtnF32 = "ds_min_rtn_f32",
    DsMaxRtnF32 = "ds_max_rtn_f32", DsMinF64 = "ds_min_f64", DsMaxF64 = "ds_max_f64",
    DsMinRtnF64 = "ds_min_rtn_f64", DsMaxRtnF64 = "ds_max_rtn_f64",
    DsWrapRtnB32 = "ds_wrap_rtn_b32", DsRsubU64 = "ds_rsub_u64", DsIncU64 = "ds_inc_u64",
    DsDecU64 = "ds_dec_u64", DsRsubRtnU64 = "ds_rsub_rtn_u64", DsIncRtnU64 = "ds_inc_rtn_u64",
    DsDecRtnU64 = "ds_dec_rtn_u64", DsSwapRtnB64 = "ds_storexchg_rtn_b64",
    DsAddF64 = "ds_add_f64", DsAddRtnF64 = "ds_add_rtn_f64",
    DsCondSubU32 = "ds_cond_sub_u32", DsCondSubRtnU32 = "ds_cond_sub_rtn_u32",
    DsSubClampU32 = "ds_sub_clamp_u32", DsSubClampRtnU32 = "ds_sub_clamp_rtn_u32",
    DsPkAddF16 = "ds_pk_add_f16", DsPkAddRtnF16 = "ds_pk_add_rtn_f16",
    DsPkAddBf16 = "ds_pk_add_bf16", DsPkAddRtnBf16 = "ds_pk_add_rtn_bf16",
    DsLoadU8D16 = "ds_load_u8_d16", DsLoadU8D16Hi = "ds_load_u8_d16_hi",
    DsLoadI8D16 = "ds_load_i8_d16", DsLoadI8D16Hi = "ds_load_i8_d16_hi",
    DsLoadU16D16 = "ds_load_u16_d16", DsLoadU16D16Hi = "ds_load_u16_d16_hi",
    DsStoreB8D16Hi = "ds_store_b8_d16_hi", DsStoreB16D16Hi = "ds_store_b16_d16_hi",
    DsStore2St64B64 = "ds_store_2addr_stride64_b64", DsLoad2St64B64 = "ds_load_2addr_stride64_b64",
    // Exchanges at two addresses (offset0/offset1, as the 2addr stores), returning both old
    // values.
    DsStorexchg2RtnB32 = "ds_storexchg_2addr_rtn_b32",
    DsStorexchg2St64RtnB32 = "ds_storexchg_2addr_stride64_rtn_b32",
    DsStorexchg2RtnB64 = "ds_storexchg_2addr_rtn_b64",
    DsStorexchg2St64RtnB64 = "ds_storexchg_2addr_stride64_rtn_b64",
    // Lane-addressed LDS dwords (M0 + offset + lane * 4) and the append/consume counters
    // (M0 + offset, by the number of active lanes).
    DsStoreAddtidB32 = "ds_store_addtid_b32", DsLoadAddtidB32 = "ds_load_addtid_b32",
    DsAppend = "ds_append", DsConsume = "ds_consume",
    // Two conditional 32-bit exchanges at an 8-byte aligned address.
    DsCondxchg32RtnB64 = "ds_condxchg32_rtn_b64",
    // gfx11's per-lane ray-tracing short stack in LDS: push up to three nodes, return or pop one.
    DsBvhStackRtnB32 = "ds_bvh_stack_rtn_b32",
    // More SOP1: the remaining EXEC-saving logic and the EXEC-writing forms, 64-bit bit
    // operations, quad masks and whole-quad mode masks, bit replication.
    SNandSaveexecB32 = "s_nand_saveexec_b32", SNandSaveexecB64 = "s_nand_saveexec_b64",
    SNorSaveexecB32 = "s_nor_saveexec_b32", SNorSaveexecB64 = "s_nor_saveexec_b64",
    SXnorSaveexecB32 = "s_xnor_saveexec_b32", SXnorSaveexecB64 = "s_xnor_saveexec_b64",
    SOrNot0SaveexecB32 = "s_or_not0_saveexec_b32", SOrNot0SaveexecB64 = "s_or_not0_saveexec_b64",
    SOrNot1SaveexecB32 = "s_or_not1_saveexec_b32", SOrNot1SaveexecB64 = "s_or_not1_saveexec_b64",
    SAndNot0WrexecB32 = "s_and_not0_wrexec_b32", SAndNot0WrexecB64 = "s_and_not0_wrexec_b64",
    SAndNot1WrexecB32 = "s_and_not1_wrexec_b32", SAndNot1WrexecB64 = "s_and_not1_wrexec_b64",
    SBrevB64 = "s_brev_b64", SBcnt0I32B64 = "s_bcnt0_i32_b64", SFf0I32B32 = "s_ff0_i32_b32",
    SFf0I32B64 = "s_ff0_i32_b64", SClsI32I64 = "s_cls_i32_i64", SBitset0B64 = "s_bitset0_b64",
    SBitset1B64 = "s_bitset1_b64", SBitreplicateB64B32 = "s_bitreplicate_b64_b32",
    SQuadmaskB32 = "s_quadmask_b32", SQuadmaskB64 = "s_quadmask_b64", SWqmB32 = "s_wqm_b32",
    SWqmB64 = "s_wqm_b64",
    // gfx12 SALU floats: rounding, f16 conversions and arithmetic, IEEE minimum/maximum.
    SCeilF32 = "s_ceil_f32", SFloorF32 = "s_floor_f32", STruncF32 = "s_trunc_f32",
    SRndneF32 = "s_rndne_f32", SCeilF16 = "s_ceil_f16", SFloorF16 = "s_floor_f16",
    STruncF16 = "s_trunc_f16", SRndneF16 = "s_rndne_f16", SCvtF16F32 = "s_cvt_f16_f32",
    SCvtF32F16 = "s_cvt_f32_f16", SCvtHiF32F16 = "s_cvt_hi_f32_f16",
    SCvtPkRtzF16F32 = "s_cvt_pk_rtz_f16_f32", SAddF16 = "s_add_f16", SSubF16 = "s_sub_f16",
    SMulF16 = "s_mul_f16", SFmacF16 = "s_fmac_f16", SMinNumF16 = "s_min_num_f16",
    SMaxNumF16 = "s_max_num_f16", SMinimumF32 = "s_minimum_f32", SMaximumF32 = "s_maximum_f32",
    SMinimumF16 = "s_minimum_f16", SMaximumF16 = "s_maximum_f16",
    SPackHlB32B16 = "s_pack_hl_b32_b16", SFmaakF32 = "s_fmaak_f32", SFmamkF32 = "s_fmamk_f32",
    // Scalar control: M0-relative SGPR moves, calls, hardware registers and the MODE writes,
    // 64-bit bit compares, messages (and the gfx11+ forms that return a value), debugger
    // branches, halts, kills, trace data, perf-level hints, waits, gfx12's barrier ops, gfx9's
    // VGPR index mode, VSKIP and the fork/join branch stack.
    SMovrelsB32 = "s_movrels_b32", SMovrelsB64 = "s_movrels_b64", SMovreldB32 = "s_movreld_b32",
    SMovreldB64 = "s_movreld_b64", SMovrelsd2B32 = "s_movrelsd_2_b32", SRfeB64 = "s_rfe_b64",
    SSendmsgRtnB32 = "s_sendmsg_rtn_b32", SSendmsgRtnB64 = "s_sendmsg_rtn_b64",
    SCallB64 = "s_call_b64", SGetregB32 = "s_getreg_b32", SSetregB32 = "s_setreg_b32",
    SSetregImm32B32 = "s_setreg_imm32_b32", SSubvectorLoopBegin = "s_subvector_loop_begin",
    SSubvectorLoopEnd = "s_subvector_loop_end", SBitcmp0B64 = "s_bitcmp0_b64",
    SBitcmp1B64 = "s_bitcmp1_b64", SCbranchCdbgsys = "s_cbranch_cdbgsys",
    SCbranchCdbguser = "s_cbranch_cdbguser", SCbranchCdbgsysOrUser = "s_cbranch_cdbgsys_or_user",
    SCbranchCdbgsysAndUser = "s_cbranch_cdbgsys_and_user", SIncperflevel = "s_incperflevel",
    SDecperflevel = "s_decperflevel", SRoundMode = "s_round_mode", SDenormMode = "s_denorm_mode",
    SEndpgmSaved = "s_endpgm_saved", SEndpgmOrderedPsDone = "s_endpgm_ordered_ps_done",
    SSendmsghalt = "s_sendmsghalt", SSethalt = "s_sethalt", SSetkill = "s_setkill",
    STtracedata = "s_ttracedata", STtracedataImm = "s_ttracedata_imm", SWaitEvent = "s_wait_event",
    SWaitIdle = "s_wait_idle", SWakeup = "s_wakeup", SSingleuseVdst = "s_singleuse_vdst",
    SBarrierSignalIsfirst = "s_barrier_signal_isfirst", SGetBarrierState = "s_get_barrier_state",
    SBarrierInit = "s_barrier_init", SBarrierJoin = "s_barrier_join",
    SWakeupBarrier = "s_wakeup_barrier", SBarrierLeave = "s_barrier_leave",
    SSleepVar = "s_sleep_var", SSetGprIdxOn = "s_set_gpr_idx_on",
    SSetGprIdxOff = "s_set_gpr_idx_off", SSetGprIdxIdx = "s_set_gpr_idx_idx",
    SSetGprIdxMode = "s_set_gpr_idx_mode", SSetvskip = "s_setvskip",
    SCbranchGFork = "s_cbranch_g_fork", SCbranchIFork = "s_cbranch_i_fork",
    SCbranchJoin = "s_cbranch_join", SRfeRestoreB64 = "s_rfe_restore_b64",
}

impl Op {
    /// Whether `self` is a DS load (reads LDS into its destination VGPRs, no data operand).
    #[must_use]
    pub fn is_ds_load(self) -> bool {
        use Op::*;
        matches!(
            self,
            DsLoadB32
                | DsLoad2B32
                | DsLoad2St64B32
                | DsLoadI8
                | DsLoadU8
                | DsLoadI16
                | DsLoadU16
                | DsLoadB64
                | DsLoad2B64
                | DsLoadB96
                | DsLoadB128
                | DsLoad2St64B64
                | DsLoadU8D16
                | DsLoadU8D16Hi
                | DsLoadI8D16
                | DsLoadI8D16Hi
                | DsLoadU16D16
                | DsLoadU16D16Hi
        )
    }

    /// Registers (dwords) each operand of `op` spans: (dst, src0, src1, src2).
    #[must_use]
    pub fn regs(self) -> (u16, [u16; 3]) {
        use Op::*;
        match self {
            SMovB64 | SCmovB64 | SNotB64 | SAndSaveexecB64 | SOrSaveexecB64 | SXorSaveexecB64
            | SAndNot0SaveexecB64 | SAndNot1SaveexecB64 | SNandSaveexecB64 | SNorSaveexecB64
            | SXnorSaveexecB64 | SOrNot0SaveexecB64 | SOrNot1SaveexecB64 | SAndNot0WrexecB64
            | SAndNot1WrexecB64 | SBrevB64 | SQuadmaskB64 | SWqmB64 => (2, [2, 1, 1]),
            SBcnt0I32B64 | SFf0I32B64 | SClsI32I64 => (1, [2, 1, 1]),
            SMovrelsB64 | SMovreldB64 | SSendmsgRtnB64 => (2, [2, 1, 1]),
            SCallB64 | SCbranchIFork => (2, [1, 1, 1]),
            SBitcmp0B64 | SBitcmp1B64 | SRfeB64 | SRfeRestoreB64 => (1, [2, 1, 1]),
            SCbranchGFork => (1, [2, 2, 1]),
            SBitset0B64 | SBitset1B64 | SBitreplicateB64B32 => (2, [1, 1, 1]),
            SGetpcB64 => (2, [1, 1, 1]),
            SSetpcB64 => (1, [2, 1, 1]),
            SSwappcB64 => (2, [2, 1, 1]),
            SAndB64 | SOrB64 | SXorB64 | SNandB64 | SNorB64 | SXnorB64 | SAndNot1B64
            | SOrNot1B64 | SCselectB64 => (2, [2, 2, 1]),
            SLshlB64 | SLshrB64 | SAshrI64 | SBfeU64 | SBfeI64 => (2, [2, 1, 1]),
            SBfmB64 => (2, [1, 1, 1]),
            SBcnt1I32B64 | SCtzI32B64 | SClzI32U64 => (1, [2, 1, 1]),
            SCmpEqU64 | SCmpLgU64 => (1, [2, 2, 1]),
            VLshlrevB64 | VLshrrevB64 | VAshrrevI64 => (2, [1, 2, 1]),
            VLshlAddU64 => (2, [2, 1, 2]),
            VMadU64U32 | VMadI64I32 => (2, [1, 1, 2]),
            VAddF64 | VMulF64 | VMinF64 | VMaxF64 | VMinimumF64 | VMaximumF64 => (2, [2, 2, 1]),
            VFmaF64 | VDivScaleF64 | VDivFmasF64 | VDivFixupF64 | VFmacF64 => (2, [2, 2, 2]),
            SFf1I32B64 => (1, [2, 1, 1]),
            VLdexpF64 => (2, [2, 1, 1]),
            VQsadPkU16U8 | VMqsadPkU16U8 => (2, [2, 1, 2]),
            VMqsadU32U8 => (4, [2, 1, 4]),
            VTrigPreopF64 => (2, [2, 1, 1]),
            VCvtPkF32Fp8 | VCvtPkF32Bf8 => (2, [1, 1, 1]),
            VTruncF64 | VCeilF64 | VRndneF64 | VFloorF64 | VRcpF64 | VRsqF64 | VSqrtF64
            | VFractF64 | VFrexpMantF64 => (2, [2, 1, 1]),
            VCvtI32F64 | VCvtU32F64 | VCvtF32F64 | VFrexpExpI32F64 => (1, [2, 1, 1]),
            VCvtF64I32 | VCvtF64U32 | VCvtF64F32 => (2, [1, 1, 1]),
            VCmpF64 | VCmpI64 | VCmpU64 => (1, [2, 2, 1]),
            VCmpClassF64 => (1, [2, 1, 1]),
            VMovB64 => (2, [2, 1, 1]),
            VPkFmaF32 => (2, [2, 2, 2]),
            VPkMovB32 | VPkMulF32 | VPkAddF32 | SAddNcU64 | SSubNcU64 | SMulU64 => (2, [2, 2, 1]),
            _ => (1, [1, 1, 1]),
        }
    }
}
