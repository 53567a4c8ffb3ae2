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
///   s_sethalt 0
///   s_endpgm
const UNSUPPORTED: &[u32] = &[0xbf800000, 0x7e000000, 0xbf820000, 0xbfb00000];

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
