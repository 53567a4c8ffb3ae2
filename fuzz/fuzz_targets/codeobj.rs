//! `cargo fuzz run codeobj`: AMDGPU code-object parsing on arbitrary bytes, and on real
//! clang-19 objects with patched bytes (first input byte odd: patched mode). Never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    hcq_fuzz::codeobj::run(data);
    if data.first().is_some_and(|b| b & 1 == 1) {
        hcq_fuzz::codeobj::run_patched(data.get(1..).unwrap_or_default());
    }
});
