//! Links hcq-core into a freestanding binary. If anything in core (or its dependencies) needed
//! `std` or `alloc`, this would fail to link ("no global memory allocator found").
#![no_std]
#![no_main]

use core::hint::black_box;
use core::panic::PanicInfo;
use hcq_core::addr::GpuVa;
use hcq_core::arch::GFX11;
use hcq_core::cmd::{Pm4List, SdmaList};
use hcq_core::pm4::{self, Program};
use hcq_core::signal::SignalRef;

#[panic_handler]
fn panic(_: &PanicInfo<'_>) -> ! {
    loop {}
}

/// A code object embedded in the binary, parsed without allocation.
static VECTOR_ADD: &[u8] =
    include_bytes!("../../core/tests/fixtures/kernels/vector_add-gfx1100.co");

/// Entry point: exercises the encoders, command lists, decoder and code-object parser so the
/// linker keeps them.
#[unsafe(no_mangle)]
pub extern "C" fn _start() -> ! {
    let sig = SignalRef::new(black_box(0x1000));
    let mut list: Pm4List<512> = Pm4List::new(&GFX11);
    let prog = Program {
        prog_addr: GpuVa(black_box(0x10_0000)),
        ..Program::default()
    };
    let _ = list.wait(&sig, 1);
    let _ = list.memory_barrier();
    let _ = list.exec(&prog, GpuVa(0x20_0000), [1, 1, 1], [64, 1, 1]);
    let _ = list.signal(&sig, 2);
    let mut n = 0usize;
    for p in pm4::decode(list.as_dwords()).flatten() {
        n += p.0;
    }
    let mut copy: SdmaList<256> = SdmaList::new(&GFX11);
    let _ = copy.copy(GpuVa(0x1000), GpuVa(0x2000), black_box(9 << 20));
    n += copy.as_dwords().len();
    if let Ok(co) = hcq_core::codeobj::CodeObject::parse(black_box(VECTOR_ADD)) {
        n += co.kernels().count();
    }
    black_box(n);
    loop {}
}
