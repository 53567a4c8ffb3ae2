// float atomic add through a cmpxchg loop (the classic pre-2.0 idiom), all lanes to a few addresses
inline void atomic_add_f(volatile __global float *p, float v) {
  union { uint u; float f; } old, nw;
  do { old.f = *p; nw.f = old.f + v; } while (atomic_cmpxchg((volatile __global uint *)p, old.u, nw.u) != old.u);
}
__kernel void atomicf(__global float *sums, __global const float *x) {
  uint i = get_global_id(0);
  atomic_add_f(&sums[i % 4], x[i]);
}
