// dpp: cross-lane data movement the way compilers emit it. Built with LLVM's DPP atomic
// optimizer (the flag below; LLVM 19's default strategy is the iterative one):
// clang-flags: -mllvm -amdgpu-atomic-optimizer-strategy=DPP
// `atomic_scan` and `atomic_sum` are one global atomic add per lane to a single address, which
// the optimizer turns into a wave-wide DPP scan (row_shr, row_bcast:15/31 and wave_shr on gfx9;
// row_shr, row_xmask, v_permlanex16_b32 and v_readlane/writelane on gfx11/gfx12) and one atomic
// per wave. `wave_sum` is a subgroup reduction written with the DPP builtins; `dpp_ctrls`
// applies each DPP control the family has (quad_perm, row shifts and rotates, mirrors, gfx9's
// wave shifts and row broadcasts, gfx10+'s row_share/row_xmask and DPP8) with row/bank masks,
// bound_ctrl and inactive lanes. sim/tests/isa_dpp.rs runs them. Kernarg layouts:
// kernels/README.md.
#define LID0 __builtin_amdgcn_workitem_id_x()
#define GRP0 __builtin_amdgcn_workgroup_id_x()
#if defined(__gfx90a__) || defined(__gfx942__)
#define GFX9 1
#endif
// old[i] = the counter before lane i's add (a scan of `in` in lane order per wave).
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void atomic_scan(__global const int *in, __global int *counter, __global int *old) {
  uint i = GRP0 * 64 + LID0;
  old[i] = __atomic_fetch_add(counter, in[i], __ATOMIC_RELAXED);
}
// counter += sum(in): a wave-wide DPP reduction, one atomic per wave.
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void atomic_sum(__global const int *in, __global int *counter) {
  uint i = GRP0 * 64 + LID0;
  __atomic_fetch_add(counter, in[i], __ATOMIC_RELAXED);
}
// o[i] = the sum of `in` over lane i's wave (wave64 on gfx9, wave32 on gfx11/gfx12).
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void wave_sum(__global const int *in, __global int *o) {
  uint i = GRP0 * 64 + LID0;
  int v = in[i];
  // Sum within each row of 16 lanes: every lane ends with its row's total.
  v += __builtin_amdgcn_update_dpp(0, v, 0xB1, 0xf, 0xf, 1);   // quad_perm:[1,0,3,2]
  v += __builtin_amdgcn_update_dpp(0, v, 0x4E, 0xf, 0xf, 1);   // quad_perm:[2,3,0,1]
  v += __builtin_amdgcn_update_dpp(0, v, 0x141, 0xf, 0xf, 1);  // row_half_mirror
  v += __builtin_amdgcn_update_dpp(0, v, 0x140, 0xf, 0xf, 1);  // row_mirror
#ifdef GFX9
  // Rows 0+1 and 2+3 through the broadcast of lane 15, then the two halves through lane 31.
  int r0 = __builtin_amdgcn_readlane(v, 0), r1 = __builtin_amdgcn_readlane(v, 16);
  int r2 = __builtin_amdgcn_readlane(v, 32), r3 = __builtin_amdgcn_readlane(v, 48);
  o[i] = r0 + r1 + r2 + r3;
#else
  v += __builtin_amdgcn_permlanex16(v, v, -1, -1, false, false);
  o[i] = v;
#endif
}
#define DPP(k, ctrl, rm, bm, bc) o[i * 16 + k] = __builtin_amdgcn_update_dpp(old, x, ctrl, rm, bm, bc)
// o[16i + k] = control k applied to x = in[i] with old = 1000 + i (see sim/tests/isa_dpp.rs
// for the list per family); slots a family lacks stay 0. Slots 13..15 run with every third
// lane inactive.
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void dpp_ctrls(__global const int *in, __global int *o) {
  uint i = GRP0 * 64 + LID0, l = LID0;
  int x = in[i], old = 1000 + (int)i;
  DPP(0, 0xB1, 0xf, 0xf, 0);   // quad_perm:[1,0,3,2]
  DPP(1, 0x1B, 0xf, 0xf, 0);   // quad_perm:[3,2,1,0]
  DPP(2, 0x101, 0xf, 0xf, 0);  // row_shl:1
  DPP(3, 0x113, 0xf, 0xf, 0);  // row_shr:3
  DPP(4, 0x113, 0xf, 0xf, 1);  // row_shr:3 bound_ctrl
  DPP(5, 0x125, 0xf, 0xf, 0);  // row_ror:5
  DPP(6, 0x140, 0xa, 0x5, 0);  // row_mirror, rows 1 and 3, banks 0 and 2
  DPP(7, 0x141, 0x5, 0xf, 0);  // row_half_mirror, rows 0 and 2
#ifdef GFX9
  DPP(8, 0x130, 0xf, 0xf, 0);  // wave_shl:1
  DPP(9, 0x134, 0xf, 0xf, 0);  // wave_rol:1
  DPP(10, 0x138, 0xf, 0xf, 1); // wave_shr:1 bound_ctrl
  DPP(11, 0x13C, 0xf, 0xf, 0); // wave_ror:1
  DPP(12, 0x142, 0xa, 0xf, 0); // row_bcast:15
  o[i * 16 + 15] = __builtin_amdgcn_update_dpp(old, x, 0x143, 0xc, 0xf, 0); // row_bcast:31
#else
  DPP(8, 0x155, 0xf, 0xf, 0);  // row_share:5
  DPP(9, 0x163, 0xf, 0xf, 0);  // row_xmask:3
  o[i * 16 + 10] = __builtin_amdgcn_mov_dpp8(x, 0xDE54C1); // dpp8:[1,0,3,2,5,4,7,6]
  o[i * 16 + 11] = __builtin_amdgcn_mov_dpp8(x, 0x053977); // dpp8:[7,6,5,4,3,2,1,0]
  o[i * 16 + 12] = __builtin_amdgcn_permlane16(old, x, 0x01234567, 0x89abcdef, false, false);
  o[i * 16 + 15] = __builtin_amdgcn_permlanex16(old, x, 0x76543210, 0xfedcba98, false, false);
#endif
  if (l % 3 != 0) {
    DPP(13, 0x111, 0xf, 0xf, 0); // row_shr:1 from lanes partly inactive
    DPP(14, 0x111, 0xf, 0xf, 1); // the same with bound_ctrl
  }
}
