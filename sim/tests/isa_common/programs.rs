/// CARRY:
///   v_lshlrev_b32 v0, 2, v0
///   s_add_u32 s2, -1, 2
///   s_addc_u32 s3, 0, 0
///   s_cselect_b32 s4, 7, 9
///   v_mov_b32 v1, s2
///   v_add_nc_u32 v1, s3, v1
///   v_mul_lo_u32 v1, v1, 100
///   v_add_nc_u32 v1, s4, v1
///   global_store_b32 v0, v1, s[0:1]
///   s_endpgm
const CARRY: &[u32] = &[
    0x30000082, 0x800282c1, 0x82038080, 0x98048987, 0x7e020202, 0x4a020203, 0xd72c0001, 0x0001ff01,
    0x00000064, 0x4a020204, 0xdc6a0000, 0x00000100, 0xbfb00000,
];

/// SHIFTS:
///   v_lshlrev_b32 v0, 2, v0
///   v_mov_b32 v2, 3
///   v_lshlrev_b32 v1, 33, v2
///   s_mov_b32 s2, 1
///   s_lshl_b64 s[2:3], s[2:3], 40
///   v_add_nc_u32 v1, s3, v1
///   v_mov_b32 v3, -8
///   v_ashrrev_i32 v3, 1, v3
///   v_add_nc_u32 v1, v1, v3
///   global_store_b32 v0, v1, s[0:1]
///   s_endpgm
const SHIFTS: &[u32] = &[
    0x30000082, 0x7e040283, 0x300204a1, 0xbe820081, 0x8482a802, 0x4a020203, 0x7e0602c8, 0x34060681,
    0x4a020701, 0xdc6a0000, 0x00000100, 0xbfb00000,
];

/// SIGNED_CMP:
///   v_lshlrev_b32 v0, 2, v0
///   v_mov_b32 v2, -1
///   v_cmp_lt_i32 vcc_lo, v2, 1
///   v_cndmask_b32 v1, 10, 20, vcc_lo
///   v_cmp_lt_u32 vcc_lo, v2, 1
///   v_cndmask_b32 v3, 1, 2, vcc_lo
///   v_add_nc_u32 v1, v1, v3
///   global_store_b32 v0, v1, s[0:1]
///   s_endpgm
const SIGNED_CMP: &[u32] = &[
    0x30000082, 0x7e0402c1, 0xd441006a, 0x00010302, 0xd5010001, 0x01a9288a, 0xd449006a, 0x00010302,
    0xd5010003, 0x01a90481, 0x4a020701, 0xdc6a0000, 0x00000100, 0xbfb00000,
];

/// LANE_CMP:
///   v_lshlrev_b32 v0, 2, v0
///   v_lshrrev_b32 v2, 2, v0
///   v_cmp_gt_u32 vcc_lo, 5, v2
///   v_cndmask_b32 v1, 0, 1, vcc_lo
///   s_and_saveexec_b32 s2, vcc_lo
///   v_add_nc_u32 v1, 100, v1
///   s_or_b32 exec_lo, exec_lo, s2
///   global_store_b32 v0, v1, s[0:1]
///   s_endpgm
const LANE_CMP: &[u32] = &[
    0x30000082, 0x32040082, 0x7c980485, 0xd5010001, 0x01a90280, 0xbe82206a, 0x4a0202ff, 0x00000064,
    0x8c7e027e, 0xdc6a0000, 0x00000100, 0xbfb00000,
];

/// DENORM:
///   v_lshlrev_b32 v0, 2, v0
///   v_mov_b32 v2, 1
///   v_add_f32 v1, 0, v2
///   global_store_b32 v0, v1, s[0:1]
///   s_endpgm
const DENORM: &[u32] = &[
    0x30000082, 0x7e040281, 0x06020480, 0xdc6a0000, 0x00000100, 0xbfb00000,
];

/// NAN_MAX:
///   v_lshlrev_b32 v0, 2, v0
///   v_mov_b32 v2, 0x7fc00000
///   v_max_f32 v1, v2, 1.0
///   global_store_b32 v0, v1, s[0:1]
///   s_endpgm
const NAN_MAX: &[u32] = &[
    0x30000082, 0x7e0402ff, 0x7fc00000, 0xd5100001, 0x0001e502, 0xdc6a0000, 0x00000100, 0xbfb00000,
];

/// LOOP:
///   v_lshlrev_b32 v0, 2, v0
///   s_mov_b32 s2, 0
///   v_mov_b32 v1, 0
///   .L1:
///   v_add_nc_u32 v1, 3, v1
///   s_add_u32 s2, s2, 1
///   s_cmp_lt_u32 s2, 10
///   s_cbranch_scc1 .L1 (simm16 -4, resolved by hand)
///   global_store_b32 v0, v1, s[0:1]
///   s_endpgm
const LOOP: &[u32] = &[
    0x30000082, 0xbe820080, 0x7e020280, 0x4a020283, 0x80028102, 0xbf0a8a02, 0xbfa2fffc, 0xdc6a0000,
    0x00000100, 0xbfb00000,
];

/// BARRIER_LDS:
///   v_lshlrev_b32 v0, 2, v0
///   v_xor_b32 v2, 0xfc, v0
///   v_add_nc_u32 v3, 1000, v0
///   ds_store_b32 v0, v3
///   s_waitcnt lgkmcnt(0)
///   s_barrier
///   ds_load_b32 v1, v2
///   s_waitcnt lgkmcnt(0)
///   global_store_b32 v0, v1, s[0:1]
///   s_endpgm
const BARRIER_LDS: &[u32] = &[
    0x30000082, 0x3a0400ff, 0x000000fc, 0x4a0600ff, 0x000003e8, 0xd8340000, 0x00000300, 0xbf89fc07,
    0xbfbd0000, 0xd8d80000, 0x01000002, 0xbf89fc07, 0xdc6a0000, 0x00000100, 0xbfb00000,
];

/// ENDLESS:
///   s_branch -1
const ENDLESS: &[u32] = &[0xbfa0ffff];

/// UNSUPPORTED:
///   s_nop 0
///   v_nop
///   SOPP opcode 6 (no gfx11 instruction; s_sethalt 0, once used here, now executes)
///   s_endpgm
const UNSUPPORTED: &[u32] = &[0xbf800000, 0x7e000000, 0xbf860000, 0xbfb00000];

/// WAVE64:
///   v_lshlrev_b32 v0, 2, v0
///   v_cmp_gt_u32 vcc, 40, v0
///   v_cndmask_b32 v1, 0, 1, vcc
///   s_bcnt1_i32_b64 s2, vcc
///   v_add_nc_u32 v1, s2, v1
///   global_store_b32 v0, v1, s[0:1]
///   s_endpgm
const WAVE64: &[u32] = &[
    0x30000082, 0x7c9800a8, 0xd5010001, 0x01a90280, 0xbe82196a, 0x4a020202, 0xdc6a0000, 0x00000100,
    0xbfb00000,
];

/// SCRATCH_OOB:
///   v_lshlrev_b32 v0, 2, v0
///   v_mov_b32 v1, 5
///   scratch_store_b32 off, v1, off offset:64
///   global_store_b32 v0, v1, s[0:1]
///   s_endpgm
const SCRATCH_OOB: &[u32] = &[
    0x30000082, 0x7e020285, 0xdc690040, 0x007c0100, 0xdc6a0000, 0x00000100, 0xbfb00000,
];

/// F64:
///   v_lshlrev_b32 v0, 2, v0
///   v_cvt_f64_u32 v[2:3], v0
///   v_mul_f64 v[2:3], v[2:3], 0.5
///   v_add_f64 v[2:3], v[2:3], 1.0
///   v_cvt_u32_f64 v1, v[2:3]
///   global_store_b32 v0, v1, s[0:1]
///   s_endpgm
const F64: &[u32] = &[
    0x30000082, 0x7e042d00, 0xd7280002, 0x0001e102, 0xd7270002, 0x0001e502, 0x7e022b02, 0xdc6a0000,
    0x00000100, 0xbfb00000,
];

/// ATOMIC:
///   v_mov_b32 v1, 1
///   v_mov_b32 v0, 0
///   global_atomic_add_u32 v0, v1, s[0:1]
///   s_endpgm
const ATOMIC: &[u32] = &[0x7e020281, 0x7e000280, 0xdcd60000, 0x00000100, 0xbfb00000];

/// WORKITEM_IDS:
///   v_mov_b32 v1, v0
///   v_mbcnt_lo_u32_b32 v2, -1, 0
///   v_lshlrev_b32 v2, 2, v2
///   global_store_b32 v2, v1, s[0:1]
///   s_endpgm
const WORKITEM_IDS: &[u32] = &[
    0x7e020300, 0xd71f0002, 0x000100c1, 0x30040482, 0xdc6a0000, 0x00000102, 0xbfb00000,
];

/// LDS_ATOMICS (gfx1100):
///   v_lshlrev_b32 v0, 2, v0
///   v_mov_b32 v1, 10
///   v_mov_b32 v3, 10
///   v_mov_b32 v8, 25
///   v_mov_b32 v10, -3
///   v_mov_b32 v12, 7
///   v_mov_b32 v14, 0xff
///   v_mov_b32 v16, 0x1234
///   v_mov_b32 v17, 0xf8
///   v_mov_b32 v18, 1.5
///   v_mov_b32 v20, 0x40100000
///   ds_store_b32 v0, v1
///   ds_inc_rtn_u32 v2, v0, v3
///   ds_dec_rtn_u32 v4, v0, v3
///   ds_rsub_rtn_u32 v7, v0, v8
///   ds_min_rtn_i32 v9, v0, v10
///   ds_max_rtn_i32 v11, v0, v12
///   ds_xor_rtn_b32 v13, v0, v14
///   ds_cmpstore_rtn_b32 v15, v0, v16, v17
///   ds_store_b32 v0, v18 offset:128
///   ds_add_rtn_f32 v19, v0, v20 offset:128
///   ds_load_b32 v21, v0
///   ds_load_b32 v22, v0 offset:128
///   s_waitcnt lgkmcnt(0)
///   v_lshlrev_b32 v23, 4, v0
///   global_store_b32 v23, v2, s[0:1]
///   global_store_b32 v23, v4, s[0:1] offset:4
///   global_store_b32 v23, v7, s[0:1] offset:8
///   global_store_b32 v23, v9, s[0:1] offset:12
///   global_store_b32 v23, v11, s[0:1] offset:16
///   global_store_b32 v23, v13, s[0:1] offset:20
///   global_store_b32 v23, v15, s[0:1] offset:24
///   global_store_b32 v23, v21, s[0:1] offset:28
///   global_store_b32 v23, v19, s[0:1] offset:32
///   global_store_b32 v23, v22, s[0:1] offset:36
///   s_endpgm
const LDS_ATOMICS: &[u32] = &[
    0x30000082, 0x7e02028a, 0x7e06028a, 0x7e100299, 0x7e1402c3, 0x7e180287, 0x7e1c02ff, 0x000000ff,
    0x7e2002ff, 0x00001234, 0x7e2202ff, 0x000000f8, 0x7e2402ff, 0x3fc00000, 0x7e2802ff, 0x40100000,
    0xd8340000, 0x00000100, 0xd88c0000, 0x02000300, 0xd8900000, 0x04000300, 0xd8880000, 0x07000800,
    0xd8940000, 0x09000a00, 0xd8980000, 0x0b000c00, 0xd8ac0000, 0x0d000e00, 0xd8c00000, 0x0f111000,
    0xd8340080, 0x00001200, 0xd9e40080, 0x13001400, 0xd8d80000, 0x15000000, 0xd8d80080, 0x16000000,
    0xbf89fc07, 0x302e0084, 0xdc6a0000, 0x00000217, 0xdc6a0004, 0x00000417, 0xdc6a0008, 0x00000717,
    0xdc6a000c, 0x00000917, 0xdc6a0010, 0x00000b17, 0xdc6a0014, 0x00000d17, 0xdc6a0018, 0x00000f17,
    0xdc6a001c, 0x00001517, 0xdc6a0020, 0x00001317, 0xdc6a0024, 0x00001617, 0xbfb00000,
];

/// LDS_CMPST_GFX9 (gfx90a):
///   v_lshlrev_b32 v0, 2, v0
///   v_mov_b32 v1, 5
///   v_mov_b32 v2, 5
///   v_mov_b32 v3, 9
///   v_mov_b32 v8, 1.5
///   v_mov_b32 v9, 0x40100000
///   ds_write_b32 v0, v1
///   ds_cmpst_rtn_b32 v4, v0, v2, v3
///   ds_write_b32 v0, v8 offset:256
///   ds_add_rtn_f32 v5, v0, v9 offset:256
///   ds_read_b32 v6, v0
///   ds_read_b32 v10, v0 offset:256
///   s_waitcnt lgkmcnt(0)
///   v_lshlrev_b32 v7, 2, v0
///   global_store_dword v7, v4, s[0:1]
///   global_store_dword v7, v6, s[0:1] offset:4
///   global_store_dword v7, v5, s[0:1] offset:8
///   global_store_dword v7, v10, s[0:1] offset:12
///   s_endpgm
const LDS_CMPST_GFX9: &[u32] = &[
    0x24000082, 0x7e020285, 0x7e040285, 0x7e060289, 0x7e1002ff, 0x3fc00000, 0x7e1202ff, 0x40100000,
    0xd81a0000, 0x00000100, 0xd8600000, 0x04030200, 0xd81a0100, 0x00000800, 0xd86a0100, 0x05000900,
    0xd86c0000, 0x06000000, 0xd86c0100, 0x0a000000, 0xbf8cc07f, 0x240e0082, 0xdc708000, 0x00000407,
    0xdc708004, 0x00000607, 0xdc708008, 0x00000507, 0xdc70800c, 0x00000a07, 0xbf810000,
];

/// PACKED_CLAMP (gfx1100):
///   v_lshlrev_b32 v0, 2, v0
///   s_mov_b32 s2, 0x3c00bc00
///   s_mov_b32 s3, 0x38004400
///   v_pk_add_f16 v1, s2, s3 clamp
///   s_mov_b32 s4, 0xfff00005
///   s_mov_b32 s5, 0x00200003
///   v_pk_add_u16 v2, s4, s5 clamp
///   v_pk_sub_i16 v3, s5, s4
///   v_pk_lshlrev_b16 v4, 4, s5
///   v_pk_mul_lo_u16 v5, s4, s5 op_sel:[1,0] op_sel_hi:[0,1]
///   global_store_b32 v0, v1, s[0:1]
///   global_store_b32 v0, v2, s[0:1] offset:128
///   global_store_b32 v0, v3, s[0:1] offset:256
///   global_store_b32 v0, v4, s[0:1] offset:384
///   global_store_b32 v0, v5, s[0:1] offset:512
///   s_endpgm
const PACKED_CLAMP: &[u32] = &[
    0x30000082, 0xbe8200ff, 0x3c00bc00, 0xbe8300ff, 0x38004400, 0xcc0fc001, 0x18000602, 0xbe8400ff,
    0xfff00005, 0xbe8500ff, 0x00200003, 0xcc0ac002, 0x18000a04, 0xcc034003, 0x18000805, 0xcc044004,
    0x18000a84, 0xcc014805, 0x10000a04, 0xdc6a0000, 0x00000100, 0xdc6a0080, 0x00000200, 0xdc6a0100,
    0x00000300, 0xdc6a0180, 0x00000400, 0xdc6a0200, 0x00000500, 0xbfb00000,
];

/// MUBUF_INDEXED (gfx90a):
///   s_add_u32 s4, s0, 0x100
///   s_addc_u32 s5, s1, 0
///   s_or_b32 s5, s5, 0x80000
///   s_movk_i32 s6, 0x40
///   s_mov_b32 s7, 0x27000
///   v_add_u32_e32 v2, 100, v0
///   v_add_u32_e32 v3, 200, v0
///   v_mov_b32_e32 v1, 4
///   buffer_store_dword v2, v0, s[4:7], 0 idxen
///   buffer_store_dword v3, v[0:1], s[4:7], 0 idxen offen
///   s_waitcnt vmcnt(0)
///   v_add_u32_e32 v4, 1, v0
///   buffer_load_dword v5, v[0:1], s[4:7], 0 idxen offen
///   s_waitcnt vmcnt(0)
///   v_lshlrev_b32_e32 v6, 2, v0
///   global_store_dword v6, v5, s[0:1]
///   buffer_load_dword v7, v4, s[4:7], 0 idxen
///   s_endpgm
const MUBUF_INDEXED: &[u32] = &[
    0x8004ff00, 0x00000100, 0x82058001, 0x8705ff05, 0x00080000, 0xb0060040, 0xbe8700ff, 0x00027000,
    0x680400ff, 0x00000064, 0x680600ff, 0x000000c8, 0x7e020284, 0xe0702000, 0x80010200, 0xe0703000,
    0x80010300, 0xbf8c0f70, 0x68080081, 0xe0503000, 0x80010500, 0xbf8c0f70, 0x240c0082, 0xdc708000,
    0x00000506, 0xe0502000, 0x80010704, 0xbf810000,
];

/// AGPRS (gfx90a): AGPRs written, moved, stored and loaded with the ACC bit (GLOBAL, DS).
///   v_lshlrev_b32_e32 v1, 2, v0
///   v_accvgpr_write_b32 a0, v0
///   v_accvgpr_write_b32 a1, 40
///   v_accvgpr_mov_b32 a2, a1
///   global_store_dword v1, a0, s[0:1]
///   global_store_dword v1, a2, s[0:1] offset:256
///   s_waitcnt vmcnt(0)
///   global_load_dword a3, v1, s[0:1]
///   s_waitcnt vmcnt(0)
///   v_accvgpr_read_b32 v2, a3
///   v_add_u32_e32 v2, 7, v2
///   ds_write_b32 v1, a1
///   ds_read_b32 a4, v1
///   s_waitcnt lgkmcnt(0)
///   v_accvgpr_read_b32 v3, a4
///   v_add_u32_e32 v3, v3, v2
///   global_store_dword v1, v3, s[0:1] offset:512
///   s_endpgm
const AGPRS: &[u32] = &[
    0x24020082, 0xd3d94000, 0x18000100, 0xd3d94001, 0x180000a8, 0x7e04a501, 0xdc708000, 0x00800001,
    0xdc708100, 0x00800201, 0xbf8c0f70, 0xdc508000, 0x03800001, 0xbf8c0f70, 0xd3d84002, 0x18000103,
    0x68040487, 0xda1a0000, 0x00000101, 0xda6c0000, 0x04000001, 0xbf8cc07f, 0xd3d84003, 0x18000104,
    0x68060503, 0xdc708200, 0x00000301, 0xbf810000,
];
