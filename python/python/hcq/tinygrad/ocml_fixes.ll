; Functions of Debian's rocm-device-libs 5.2.3 ocml.bc that compute the wrong result, replaced.
; compiler.py assembles this with clang-19 into the on-disk cache and links it ahead of ocml.bc:
; clang links -mlink-builtin-bitcode libraries "only needed", so a function defined here is not
; taken from ocml.bc again.
;
; __ocml_sin_f16: ocml.bc's select on BUILTIN_ISFINITE_F16 has its arms swapped (it returns NaN
; for every finite input; ocml's source reads `BUILTIN_ISFINITE_F16(ax) ? s : QNAN`, and cos_f16,
; tan_f16 and sin_f32 in the same file have the right order). This one rounds ocml's sin_f32 of
; the widened input: every half is exact in float, and float's sin is within 1 float ulp, far
; below half's ulp, so the result is half's correctly rounded sin except where the float value
; lies within a float ulp of a half rounding boundary. NaN and infinities give NaN, as ocml.
target triple = "amdgcn-amd-amdhsa"

define half @__ocml_sin_f16(half %x) #0 {
  %f = fpext half %x to float
  %s = call float @__ocml_sin_f32(float %f)
  %h = fptrunc float %s to half
  ret half %h
}

declare float @__ocml_sin_f32(float) #0

attributes #0 = { convergent nounwind }
