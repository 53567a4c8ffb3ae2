// hidden_args: every code object v5 hidden argument hcq fills, as a kernel reads it. The first
// work-item of each work-group writes one record of 16 u32s at out[16 * g] (g = the group's
// linear id, x fastest) for the tests to check against the launch:
//   0..2   hidden_block_count_x/y/z      (u32 at implicit-argument offsets 0, 4, 8)
//   3..5   hidden_group_size_x/y/z       (u16 at 12, 14, 16)
//   6..8   hidden_remainder_x/y/z        (u16 at 18, 20, 22)
//   9      hidden_grid_dims              (u16 at 64)
//   10..12 hidden_global_offset_x/y/z    (low halves of the u64s at 40, 48, 56)
//   13..15 the work-group size as clang's __builtin_amdgcn_workgroup_size_x/y/z read it (the
//          group size, or the remainder for a last, partial group)
// The hidden arguments are read through __builtin_amdgcn_implicitarg_ptr() at LLVM's fixed
// code object v5 offsets (AMDGPUUsage, "Code Object V5 Metadata"), without the ROCm device
// library. The linear id uses the block counts the kernel read, so a wrong count also moves
// the record. LLVM 19 lists no other hidden argument for this kernel on gfx9/gfx11/gfx12:
// hidden_dynamic_lds_size only for kernels with dynamic LDS, the private/shared aperture bases
// only for targets without aperture registers (before gfx9).
__kernel void hidden_args(__global uint *out) {
  if ((__builtin_amdgcn_workitem_id_x() | __builtin_amdgcn_workitem_id_y() |
       __builtin_amdgcn_workitem_id_z()) != 0)
    return;
  __constant uchar *ia = (__constant uchar *)__builtin_amdgcn_implicitarg_ptr();
  uint bx = *(__constant uint *)(ia + 0);
  uint by = *(__constant uint *)(ia + 4);
  uint bz = *(__constant uint *)(ia + 8);
  uint g = __builtin_amdgcn_workgroup_id_x() +
           bx * (__builtin_amdgcn_workgroup_id_y() + by * __builtin_amdgcn_workgroup_id_z());
  __global uint *r = out + 16 * g;
  r[0] = bx;
  r[1] = by;
  r[2] = bz;
  r[3] = *(__constant ushort *)(ia + 12);
  r[4] = *(__constant ushort *)(ia + 14);
  r[5] = *(__constant ushort *)(ia + 16);
  r[6] = *(__constant ushort *)(ia + 18);
  r[7] = *(__constant ushort *)(ia + 20);
  r[8] = *(__constant ushort *)(ia + 22);
  r[9] = *(__constant ushort *)(ia + 64);
  r[10] = *(__constant uint *)(ia + 40);
  r[11] = *(__constant uint *)(ia + 48);
  r[12] = *(__constant uint *)(ia + 56);
  r[13] = __builtin_amdgcn_workgroup_size_x();
  r[14] = __builtin_amdgcn_workgroup_size_y();
  r[15] = __builtin_amdgcn_workgroup_size_z();
}
