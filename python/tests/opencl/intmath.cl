__kernel void intmath(__global const ulong *a, __global const ulong *b, __global ulong *o, __global uint *o32) {
  uint i = get_global_id(0);
  ulong x = a[i], y = b[i] | 1;
  o[4*i] = x / y; o[4*i+1] = x % y; o[4*i+2] = mul_hi(x, y); o[4*i+3] = rotate(x, (ulong)(i % 64));
  uint u = (uint)x, v = (uint)y;
  o32[4*i] = popcount(u) + clz(v) * 100 + ctz(u | 0x80000000u) * 10000;
  o32[4*i+1] = mad24(u & 0xffffff, v & 0xffffff, 7u);
  o32[4*i+2] = (uint)((long)(int)u / (int)(v | 1));
  o32[4*i+3] = rhadd(u, v) ^ abs_diff((int)u, (int)v);
}
