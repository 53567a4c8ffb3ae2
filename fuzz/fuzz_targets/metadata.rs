//! `cargo fuzz run metadata`: NT_AMDGPU_METADATA (MessagePack) parsing, note lookup and
//! hidden-argument filling on arbitrary bytes. Never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| hcq_fuzz::metadata::run(data));
