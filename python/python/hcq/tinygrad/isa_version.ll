; The ISA-version control library of ROCm's device libraries (oclc_isa_version_<N>.bc), for
; targets Debian's rocm-device-libs does not ship (it stops at gfx1036, gfx90a, gfx940).
; compiler.py substitutes @VERSION@ (major * 1000 + minor * 100 + stepping: gfx1100 -> 11000,
; gfx90a -> 9010) and assembles it with clang-19 into the on-disk cache.
target triple = "amdgcn-amd-amdhsa"

@__oclc_ISA_version = linkonce_odr protected local_unnamed_addr addrspace(4) constant i32 @VERSION@, align 4
