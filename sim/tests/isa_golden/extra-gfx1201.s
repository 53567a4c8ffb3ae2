// gfx1201 beyond the fixtures: minimumNumber/maximumNumber 3-operand forms, scalar float
// compares (every condition, f32 and f16), DPP16/DPP8 and the lane permutes. Assembled by
// scripts/isa-golden.sh.
v_min3_num_f32 v1, v2, v3, v4
v_max3_num_f32 v1, v2, s3, v4
v_med3_num_f32 v1, v2, v3, 1.0
v_min3_num_f32 v1, -v2, |v3|, v4
s_cmp_lt_f32 s1, s2
s_cmp_eq_f32 s1, 1.0
s_cmp_le_f32 s1, s2
s_cmp_gt_f32 s1, s2
s_cmp_lg_f32 s1, s2
s_cmp_ge_f32 s1, s2
s_cmp_o_f32 s1, s2
s_cmp_u_f32 s1, s2
s_cmp_nge_f32 s1, s2
s_cmp_nlg_f32 s1, s2
s_cmp_ngt_f32 s1, s2
s_cmp_nle_f32 s1, s2
s_cmp_neq_f32 s1, s2
s_cmp_nlt_f32 s1, s2
s_cmp_lt_f16 s1, s2
s_cmp_nlt_f16 s1, s2
s_cmp_eq_f16 s1, s2
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
v_maxmin_num_f32 v1, v2, v3, v4
v_minmax_num_f32 v1, v2, s3, v4
v_add_nc_u32_e64_dpp v1, v2, v3 row_shr:1 row_mask:0xf bank_mask:0xf
v_add3_u32_e64_dpp v1, v2, v3, v4 row_shr:1 row_mask:0xf bank_mask:0xf bound_ctrl:1
v_fma_f32_e64_dpp v1, -v2, v3, |v4| quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf
v_frexp_mant_f64 v[4:5], v[2:3]
v_frexp_exp_i32_f64 v6, v[2:3]
v_frexp_mant_f64_e64 v[4:5], -|v[2:3]|
v_interp_p10_f32 v0, v1, v2, v3
v_interp_p2_f32 v4, -v5, v6, v7 clamp wait_exp:3
v_interp_p10_f16_f32 v0, v1, v2, -v3 op_sel:[1,0,1,0]
v_interp_p2_f16_f32 v0, v1, v2, v3 op_sel:[1,0,0,1] wait_exp:7
v_interp_p10_rtz_f16_f32 v8, v9, v10, v11
v_interp_p2_rtz_f16_f32 v8, v9, v10, v11 clamp
