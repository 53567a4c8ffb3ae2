// AGPR forms (gfx90a, gfx942) beyond the fixtures: v_accvgpr_*, and the ACC bit of FLAT,
// GLOBAL, SCRATCH, MUBUF and DS (vdata/vdst in AGPRs). Assembled for both targets by
// scripts/isa-golden.sh.
v_accvgpr_write_b32 a0, v1
v_accvgpr_write_b32 a5, 7
v_accvgpr_write_b32 a3, s2
v_accvgpr_write_b32 a255, v255
v_accvgpr_write_b32 a1, -4
v_accvgpr_read_b32 v2, a3
v_accvgpr_read_b32 v255, a255
v_accvgpr_mov_b32 a1, a2
v_accvgpr_mov_b32 a255, a0
global_load_dword a1, v[2:3], off
global_load_dword a7, v2, s[4:5] offset:-8
global_store_dword v[2:3], a4, off
global_store_dword v0, a9, s[6:7] offset:64
global_load_dwordx2 a[2:3], v0, s[0:1] offset:16
global_load_dwordx4 a[4:7], v[0:1], off
global_store_dwordx2 v[0:1], a[6:7], off
global_store_dwordx4 v[8:9], a[12:15], off offset:32
flat_load_dword a1, v[0:1]
flat_store_dword v[0:1], a2
scratch_load_dword a5, off, s2
scratch_store_dword off, a6, s3 offset:8
buffer_load_dword a1, off, s[0:3], 0 offset:4
buffer_store_dword a2, v1, s[0:3], 0 offen
buffer_load_dwordx2 a[2:3], v1, s[4:7], s8 offen offset:12
buffer_store_dwordx4 a[4:7], off, s[0:3], 0
ds_write_b32 v1, a2
ds_read_b32 a3, v1
ds_read_b32 a3, v1 offset:256
ds_write2_b32 v1, a2, a3 offset1:4
ds_read2_b32 a[4:5], v2 offset0:1 offset1:2
ds_write_b64 v1, a[2:3]
ds_read_b64 a[6:7], v1
ds_add_u32 v1, a5
ds_add_rtn_u32 a0, v1, a5
// DPP (row shifts, wave shifts, broadcasts, quad_perm, masks, bound_ctrl, modifiers, carry forms)
// and packed f32 (v_pk_fma/mul/add_f32 with op_sel, op_sel_hi, neg, clamp, SGPR and constant sources).
v_add_u32_dpp v2, v2, v2 row_bcast:31 row_mask:0xc bank_mask:0xf
v_add_u32_dpp v2, v2, v2 row_bcast:15 row_mask:0xa bank_mask:0xf
v_mov_b32_dpp v1, v2 wave_shr:1 row_mask:0xf bank_mask:0xf
v_mov_b32_dpp v1, v2 wave_shl:1 row_mask:0xf bank_mask:0xf
v_mov_b32_dpp v1, v2 wave_rol:1 row_mask:0xf bank_mask:0xf
v_mov_b32_dpp v1, v2 wave_ror:1 row_mask:0xf bank_mask:0xf bound_ctrl:1
v_mov_b32_dpp v1, v2 quad_perm:[3,2,1,0] row_mask:0xf bank_mask:0xf
v_add_f32_dpp v1, -v2, |v3| row_shr:2 row_mask:0xf bank_mask:0xf
v_cndmask_b32_dpp v1, v2, v3, vcc row_shr:1 row_mask:0xf bank_mask:0xf
v_addc_co_u32_dpp v1, vcc, v2, v3, vcc row_shr:1 row_mask:0xf bank_mask:0xf
v_add_co_u32_dpp v1, vcc, v2, v3 row_shr:1 row_mask:0xf bank_mask:0xf
v_pk_fma_f32 v[0:1], v[2:3], v[4:5], v[6:7] op_sel:[1,0,0] op_sel_hi:[0,1,1] neg_lo:[1,0,0] neg_hi:[0,1,0]
v_pk_mul_f32 v[0:1], v[2:3], s[4:5]
v_pk_add_f32 v[0:1], v[2:3], 1.0
v_pk_fma_f32 v[0:1], v[2:3], v[4:5], v[6:7] clamp
v_frexp_mant_f64 v[4:5], v[2:3]
v_frexp_exp_i32_f64 v6, v[2:3]
v_frexp_mant_f64_e64 v[4:5], -|v[2:3]|
