// Instructions beyond the fixtures, assembled by scripts/isa-golden.sh with llvm-mc-19 and
// disassembled with llvm-objdump-19 into extra-gfx1100.txt (the decoder test's second input).
s_add_u32 s0, s1, s2
s_sub_u32 s0, s1, 5
s_add_i32 s3, s4, -3
s_sub_i32 s3, s4, s5
s_addc_u32 s1, s2, s3
s_subb_u32 s1, s2, s3
s_lshl_b64 s[2:3], s[4:5], 3
s_lshr_b32 s0, s1, s2
s_lshr_b64 s[0:1], s[2:3], s4
s_ashr_i32 s0, s1, 31
s_lshl2_add_u32 s0, s1, s2
s_min_i32 s0, s1, s2
s_max_u32 s0, s1, s2
s_and_b64 s[0:1], s[2:3], exec
s_or_b32 s0, s1, 0x12345
s_xor_b64 s[0:1], s[2:3], -1
s_andn2_b32 s0, s1, s2
s_bfe_u32 s0, s1, 0x50003
s_bfe_i32 s0, s1, s2
s_mul_hi_u32 s0, s1, s2
s_cselect_b64 s[0:1], s[2:3], 0
s_mov_b64 s[0:1], exec
s_not_b32 s0, s1
s_brev_b32 s0, s1
s_ctz_i32_b32 s0, s1
s_bcnt1_i32_b32 s0, s1
s_sext_i32_i16 s0, s1
s_abs_i32 s0, s1
s_or_saveexec_b64 s[0:1], s[2:3]
s_andn2_saveexec_b32 s0, s1
s_getpc_b64 s[4:5]
s_setpc_b64 s[4:5]
s_movk_i32 s0, 0x1234
s_addk_i32 s0, 0x10
s_mulk_i32 s0, 0x3
s_cmpk_eq_u32 s0, 0x7
s_cmp_eq_u32 s0, s1
s_cmp_lg_u64 s[0:1], 0
s_cmp_gt_i32 s0, -1
s_bitcmp1_b32 s0, 3
s_branch 5
s_cbranch_scc0 -3
s_cbranch_vccnz 2
s_cbranch_execnz 1
s_waitcnt vmcnt(0) lgkmcnt(0)
s_waitcnt_vmcnt null, 0x0
s_load_b32 s0, s[2:3], 0x100
s_load_b256 s[8:15], s[0:1], 0x20
s_load_b64 s[0:1], s[2:3], s4
v_mov_b32 v0, s0
v_mov_b32 v0, 0x3f800000
v_cvt_f32_u32 v0, v1
v_cvt_u32_f32 v0, v1
v_cvt_f32_i32 v0, v1
v_cvt_i32_f32 v0, v1
v_cvt_f16_f32 v0, v1
v_cvt_f32_f16 v0, v1
v_cvt_f64_f32 v[0:1], v2
v_cvt_f32_f64 v0, v[2:3]
v_rcp_f32 v0, v1
v_sqrt_f32 v0, v1
v_rsq_f64 v[0:1], v[2:3]
v_floor_f32 v0, v1
v_fract_f32 v0, v1
v_exp_f32 v0, v1
v_log_f32 v0, v1
v_not_b32 v0, v1
v_bfrev_b32 v0, v1
v_readfirstlane_b32 s0, v1
v_cndmask_b32 v0, v1, v2, vcc_lo
v_add_f32 v0, 1.0, v1
v_sub_f32 v0, v1, v2
v_mul_f32 v0, -4.0, v1
v_min_f32 v0, v1, v2
v_max_i32 v0, v1, v2
v_min_u32 v0, v1, v2
v_lshrrev_b32 v0, 3, v1
v_ashrrev_i32 v0, 31, v1
v_or_b32 v0, v1, v2
v_and_b32 v0, 0xff, v1
v_sub_nc_u32 v0, v1, v2
v_mul_u32_u24 v0, v1, v2
v_fmac_f32 v0, v1, v2
v_fmamk_f32 v0, v1, 0x40490fdb, v2
v_fmaak_f32 v0, v1, v2, 0x3e800000
v_sub_co_ci_u32 v0, vcc_lo, v1, v2, vcc_lo
v_cmp_eq_u32 vcc_lo, 0, v1
v_cmp_lt_f32 vcc_lo, v1, v2
v_cmp_ge_i64 vcc_lo, v[0:1], v[2:3]
v_cmp_ne_u32 s0, v1, v2
v_cmp_neq_f32 s2, v1, v2
v_cmpx_eq_u32 0, v1
v_cmp_class_f32 vcc_lo, v1, v2
v_fma_f32 v0, v1, v2, v3
v_fma_f32 v0, -v1, |v2|, v3
v_fma_f64 v[0:1], v[2:3], v[4:5], v[6:7]
v_bfe_i32 v0, v1, 8, 8
v_bfi_b32 v0, v1, v2, v3
v_alignbit_b32 v0, v1, v2, 7
v_min3_u32 v0, v1, v2, v3
v_max3_f32 v0, v1, v2, v3
v_med3_i32 v0, v1, v2, v3
v_xor3_b32 v0, v1, v2, v3
v_lshl_add_u32 v0, v1, 2, v2
v_and_or_b32 v0, v1, v2, v3
v_or3_b32 v0, v1, v2, v3
v_mad_u64_u32 v[0:1], null, v2, v3, v[4:5]
v_mad_i64_i32 v[0:1], s0, v2, v3, v[4:5]
v_sub_co_u32 v0, vcc_lo, v1, v2
v_ldexp_f32 v0, v1, v2
v_bcnt_u32_b32 v0, v1, 0
v_mbcnt_lo_u32_b32 v0, -1, 0
v_mbcnt_hi_u32_b32 v0, -1, v0
v_add_f64 v[0:1], v[2:3], v[4:5]
v_mul_f64 v[0:1], v[2:3], 2.0
v_max_f64 v[0:1], v[2:3], v[4:5]
v_mul_lo_u32 v0, v1, v2
v_mul_hi_u32 v0, v1, v2
v_mul_hi_i32 v0, v1, v2
v_lshrrev_b64 v[0:1], 3, v[2:3]
v_ashrrev_i64 v[0:1], v2, v[4:5]
v_readlane_b32 s0, v1, 5
v_writelane_b32 v0, s1, 2
v_perm_b32 v0, v1, v2, 0x5040100
v_add_f32_e64 v0, v1, v2 clamp
v_mul_f32_e64 v0, v1, v2 mul:2
v_cvt_pk_rtz_f16_f32 v0, v1, v2
v_add_f16 v0, v1, v2
v_mul_f16 v0, v1, v2
v_dual_add_f32 v0, v1, v2 :: v_dual_mul_f32 v3, v4, v5
v_dual_fmac_f32 v0, v1, v2 :: v_dual_add_nc_u32 v3, v4, v5
ds_add_u32 v0, v1
ds_add_rtn_u32 v0, v1, v2
ds_store_b64 v0, v[2:3] offset:8
ds_load_b64 v[0:1], v2 offset:16
ds_store_2addr_b32 v0, v1, v2 offset0:1 offset1:5
ds_load_2addr_b32 v[0:1], v2 offset1:3
ds_load_u8 v0, v1
ds_store_b16 v0, v1
ds_max_u32 v0, v1
ds_load_b128 v[0:3], v4
global_load_b64 v[0:1], v[2:3], off
global_load_b128 v[0:3], v4, s[0:1] offset:16
global_store_b64 v[0:1], v[2:3], off offset:-8
global_load_u16 v0, v[2:3], off
global_atomic_add_u32 v0, v1, s[0:1]
global_atomic_add_u32 v0, v[2:3], v1, off glc
global_atomic_cmpswap_b32 v0, v[2:3], v[4:5], off glc
global_atomic_max_u32 v[2:3], v1, off
flat_load_b32 v0, v[1:2]
flat_store_b32 v[1:2], v0 offset:4
scratch_load_b64 v[0:1], v2, off
scratch_store_b32 v1, v2, off offset:8
s_endpgm
// DPP16 (row_shl/shr/ror, mirrors, row_share, row_xmask, quad_perm, masks, bound_ctrl, fi,
// modifiers, VOPC and carry forms, VOP3 forms), DPP8, the lane permutes and the prefetch hint.
v_add_nc_u32_dpp v1, v2, v3 row_shr:1 row_mask:0xf bank_mask:0xf bound_ctrl:1
v_add_nc_u32_dpp v1, v2, v3 quad_perm:[1,0,3,2] row_mask:0x5 bank_mask:0x3
v_mov_b32_dpp v4, v1 row_shl:3 row_mask:0xf bank_mask:0xf fi:1
v_mov_b32_dpp v4, v1 row_ror:7 row_mask:0xf bank_mask:0xf
v_mov_b32_dpp v4, v1 row_mirror row_mask:0xf bank_mask:0xf
v_mov_b32_dpp v4, v1 row_half_mirror row_mask:0xf bank_mask:0xf
v_mov_b32_dpp v4, v1 row_share:5 row_mask:0xf bank_mask:0xf
v_mov_b32_dpp v4, v1 row_xmask:9 row_mask:0xf bank_mask:0xf bound_ctrl:1 fi:1
v_add_f32_dpp v1, -v2, |v3| row_shr:2 row_mask:0xf bank_mask:0xf
v_mov_b32_dpp v1, v2 dpp8:[7,6,5,4,3,2,1,0]
v_add_nc_u32_dpp v1, v2, v3 dpp8:[1,0,3,2,5,4,7,6] fi:1
v_cmp_eq_u32_dpp vcc_lo, v1, v2 quad_perm:[0,0,0,0] row_mask:0xf bank_mask:0xf
v_cndmask_b32_dpp v1, v2, v3, vcc_lo row_shr:1 row_mask:0xf bank_mask:0xf
v_add_co_ci_u32_dpp v1, vcc_lo, v2, v3, vcc_lo row_shr:1 row_mask:0xf bank_mask:0xf
v_max_i32_dpp v1, v2, v3 row_shr:1 row_mask:0xf bank_mask:0xf
v_permlanex16_b32 v2, v2, -1, -1
v_permlane16_b32 v2, v3, s1, s2 op_sel:[1,1]
v_cmpx_eq_u32_dpp v1, v2 quad_perm:[0,0,0,0] row_mask:0xf bank_mask:0xf
s_set_inst_prefetch_distance 0x2
v_maxmin_f32 v1, v2, v3, v4
v_minmax_f32 v1, v2, s3, v4
v_add_nc_u32_e64_dpp v1, v2, v3 row_shr:1 row_mask:0xf bank_mask:0xf
v_add3_u32_e64_dpp v1, v2, v3, v4 row_shr:1 row_mask:0xf bank_mask:0xf bound_ctrl:1
v_fma_f32_e64_dpp v1, -v2, v3, |v4| quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf
v_add_nc_u32_e64_dpp v1, v2, v3 dpp8:[7,6,5,4,3,2,1,0]
v_add_f32_e64_dpp v1, v2, v3 clamp row_xmask:1 row_mask:0xf bank_mask:0xf
v_cmp_lt_i32_e64_dpp s5, v2, v3 row_shr:1 row_mask:0xf bank_mask:0xf
v_frexp_mant_f64 v[4:5], v[2:3]
v_frexp_exp_i32_f64 v6, v[2:3]
v_frexp_mant_f64_e64 v[4:5], -|v[2:3]|
v_interp_p10_f32 v0, v1, v2, v3
v_interp_p2_f32 v4, -v5, v6, v7 clamp wait_exp:3
v_interp_p10_f16_f32 v0, v1, v2, -v3 op_sel:[1,0,1,0]
v_interp_p2_f16_f32 v0, v1, v2, v3 op_sel:[1,0,0,1] wait_exp:7
v_interp_p10_rtz_f16_f32 v8, v9, v10, v11
v_interp_p2_rtz_f16_f32 v8, v9, v10, v11 clamp
