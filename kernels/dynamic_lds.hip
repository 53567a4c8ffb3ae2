// dynamic_lds (HIP, a clang offload bundle for every fixture target): a kernel with dynamic
// LDS (`extern __shared__`), for which LLVM lists the hidden argument hidden_dynamic_lds_size
// (code object v5: implicit-argument offset 120). Every work-item fills its share of the
// dynamic LDS through its last word, then work-item 0 of each group writes a record of 4 u32s
// at out[4 * g]: the hidden_dynamic_lds_size it read, the sum of the words, the last word and
// the number of words (the kernel has no static LDS). A launch whose LDS allocation is short
// of what the hidden argument says faults at the first word past the allocation.
#define __shared__ __attribute__((shared))
extern "C" __attribute__((global)) void dynamic_lds(unsigned *out) {
  extern __shared__ unsigned lds[];
  const unsigned char *ia = (const unsigned char *)__builtin_amdgcn_implicitarg_ptr();
  unsigned size = *(const unsigned *)(ia + 120);
  unsigned words = size / 4;
  unsigned t = __builtin_amdgcn_workitem_id_x();
  unsigned step = __builtin_amdgcn_workgroup_size_x();
  for (unsigned i = t; i < words; i += step) lds[i] = 3 * i + 1;
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
  if (t != 0) return;
  unsigned sum = 0;
  for (unsigned i = 0; i < words; i++) sum += lds[i];
  unsigned *r = out + 4 * __builtin_amdgcn_workgroup_id_x();
  r[0] = size;
  r[1] = sum;
  r[2] = words ? lds[words - 1] : 0;
  r[3] = words;
}
