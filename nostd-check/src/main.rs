//! Links hcq-core into a freestanding binary. If anything in core (or its dependencies) needed
//! `std` or `alloc`, this would fail to link ("no global memory allocator found").
#![no_std]
#![no_main]

use core::panic::PanicInfo;

#[panic_handler]
fn panic(_: &PanicInfo<'_>) -> ! {
    loop {}
}

/// Entry point: exercises the core so the linker keeps it.
#[unsafe(no_mangle)]
pub extern "C" fn _start() -> ! {
    let props = hcq_core::hsa::KernelCodeProperties::zeroed()
        .with_flag(hcq_core::hsa::KernelCodeProperties::ENABLE_SGPR_DISPATCH_PTR, true);
    let n = core::hint::black_box(props).user_sgpr_count();
    core::hint::black_box(n);
    loop {}
}
