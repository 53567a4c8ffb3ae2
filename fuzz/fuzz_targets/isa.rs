#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| hcq_fuzz::isa::run_input(data));
