// Local bitonic sort of 512 keys per work-group (256 work-items)
__kernel void bitonic_local(__global uint *keys) {
  __local uint k[512];
  uint l = get_local_id(0), base = get_group_id(0) * 512;
  k[l] = keys[base + l]; k[l + 256] = keys[base + l + 256];
  for (uint size = 2; size <= 512; size <<= 1) {
    for (uint stride = size / 2; stride > 0; stride >>= 1) {
      barrier(CLK_LOCAL_MEM_FENCE);
      uint pos = 2 * l - (l & (stride - 1));
      bool dir = ((pos & size) == 0) || size == 512;
      uint a = k[pos], b = k[pos + stride];
      if ((a > b) == dir) { k[pos] = b; k[pos + stride] = a; }
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  keys[base + l] = k[l]; keys[base + l + 256] = k[l + 256];
}
