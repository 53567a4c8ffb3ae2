//! A kernel's page fault names the cause, not just the address: the simulator says what the
//! address is near or was (the buffer a pointer ran past or falls before, a buffer freed or
//! unmapped since, one not mapped to this GPU, a null pointer plus an offset) and where the
//! faulting instruction is (kernel offset, wave, workgroup). Each case is a pointer bug a
//! driver or a kernel can have.

use std::sync::Arc;

use hcq_driver::{BufferKind, Device, Error, Kfd, Program};
use hcq_sim::engine::attach::SimGpu;
use hcq_sim::{SimConfig, SimKfd, SimMode};
use hcq_tests::fixtures::{self, FillArgs};

/// `gpus` simulated gfx1100s (deterministic engines).
fn rig(gpus: usize) -> (Arc<SimKfd>, SimGpu, Kfd) {
    let cfg = SimConfig {
        mode: SimMode::Deterministic,
        gpus: vec![hcq_sim::GpuConfig::gfx1100(); gpus],
        ..SimConfig::default()
    };
    let sim = Arc::new(SimKfd::new(hcq_tests::guarded(cfg)).unwrap());
    let gpu = SimGpu::attach(&sim).unwrap();
    // SAFETY: the test never unmaps through `sim` itself; every mapping goes through `kfd`.
    let kfd = unsafe { Kfd::with_sim(Arc::clone(&sim)) }.unwrap();
    kfd.set_wait_timeout(core::time::Duration::from_secs(5));
    (sim, gpu, kfd)
}

/// `fill` loaded on `dev` and launched once on a buffer of its own, so that the faulting
/// launch allocates nothing (no program, no kernarg arena) that could land at a freed address.
fn loaded_fill(dev: &Device) -> Program {
    let fill = Program::load(dev, fixtures::fill(&dev.target_name()).unwrap(), "fill").unwrap();
    let ok = dev.alloc(256, BufferKind::Gtt).unwrap();
    let args = FillArgs {
        buf: ok.va().get(),
        value: 1,
        n: 64,
    };
    // SAFETY: `ok` holds the 64 u32s and outlives the wait.
    let done = unsafe { fill.launch_pod(&args, [1, 1, 1], [64, 1, 1]) }.unwrap();
    dev.wait_value(done).unwrap();
    fill
}

/// Launches `fill` on `dev` storing 64 u32s through `ptr` and returns the fault's text.
fn fault_of_fill_at(dev: &Device, fill: &Program, ptr: u64) -> String {
    let args = FillArgs {
        buf: ptr,
        value: 1,
        n: 64,
    };
    // SAFETY: `ptr` is no memory of this process's (a freed, unmapped or foreign GPU address):
    // the simulated GPU faults on it and writes nothing.
    let done = unsafe { fill.launch_pod(&args, [1, 1, 1], [64, 1, 1]) }.unwrap();
    let err = dev.wait_value(done).unwrap_err();
    assert!(matches!(err, Error::DeviceFault(_)), "{err:?}");
    err.to_string()
}

/// Where the store is: `fill`'s global store, wave 0 of the only workgroup.
fn assert_located(msg: &str) {
    assert!(
        msg.contains(" at kernel offset 0x") && msg.contains("wave 0 of workgroup [0, 0, 0]"),
        "the instruction's place: {msg}"
    );
}

#[test]
fn a_pointer_past_the_end_of_a_buffer_names_the_buffer() {
    let (sim, _gpu, kfd) = rig(1);
    let dev = Device::open(&kfd, 0).unwrap();
    let fill = loaded_fill(&dev);
    // GPU VAs are host VAs (mmap places them), so the page after a new buffer may belong to
    // another buffer, or to one freed since (loaded_fill's own): allocate until the page after
    // one is free of both, keeping the others alive so that each try lands elsewhere.
    let mut held = Vec::new();
    let va = loop {
        let buf = dev.alloc(4096, BufferKind::Vram).unwrap();
        let va = buf.va().get();
        let free_above = sim
            .describe_va(dev.gpu_id(), va + 4096 + 64)
            .is_some_and(|d| d.starts_with("64 bytes past the end of"));
        held.push(buf);
        if free_above {
            break va;
        }
        assert!(
            held.len() < 64,
            "no buffer with a free page after it in 64 tries"
        );
    };
    let msg = fault_of_fill_at(&dev, &fill, va + 4096 + 64);
    assert!(
        msg.contains(&format!(
            "GPU VM fault: write at {:#x}: no GPU mapping (",
            va + 4096 + 64
        )),
        "{msg}"
    );
    assert!(
        msg.contains(&format!(
            "64 bytes past the end of the 4096-byte buffer at {va:#x}..{:#x})",
            va + 4096
        )),
        "{msg}"
    );
    assert_located(&msg);
}

#[test]
fn a_freed_buffer_is_a_use_after_free() {
    let (_sim, _gpu, kfd) = rig(1);
    let dev = Device::open(&kfd, 0).unwrap();
    let fill = loaded_fill(&dev);
    let buf = dev.alloc(8192, BufferKind::Gtt).unwrap();
    let va = buf.va().get();
    drop(buf);
    let msg = fault_of_fill_at(&dev, &fill, va + 0x100);
    assert!(
        msg.contains(&format!(
            "(byte 0x100 of the 8192-byte buffer at {va:#x}..{:#x}, unmapped from this GPU and freed since: a use after free)",
            va + 8192
        )),
        "{msg}"
    );
    assert_located(&msg);
}

#[test]
fn a_buffer_of_another_gpu_not_mapped_here_says_so() {
    let (sim, _gpu, kfd) = rig(2);
    let dev0 = Device::open(&kfd, 0).unwrap();
    let dev1 = Device::open(&kfd, 1).unwrap();
    let fill = loaded_fill(&dev0);
    let buf = dev1.alloc(4096, BufferKind::Vram).unwrap();
    let va = buf.va().get();
    let msg = fault_of_fill_at(&dev0, &fill, va + 8);
    let gpu1 = sim.gpu_ids()[1];
    assert!(
        msg.contains(&format!(
            "(byte 0x8 of the 4096-byte buffer at {va:#x}..{:#x} (allocated on GPU {gpu1:#x}), which is not mapped to this GPU: MAP_MEMORY_TO_GPU it here first)",
            va + 4096
        )),
        "{msg}"
    );
    assert_located(&msg);
}

#[test]
fn a_small_address_is_a_null_pointer_plus_an_offset() {
    let (_sim, _gpu, kfd) = rig(1);
    let dev = Device::open(&kfd, 0).unwrap();
    let fill = loaded_fill(&dev);
    let msg = fault_of_fill_at(&dev, &fill, 0x40);
    assert!(
        msg.contains(
            "GPU VM fault: write at 0x40: no GPU mapping (no buffer within 16 MiB; an address this small is a null pointer plus an offset)"
        ),
        "{msg}"
    );
    assert_located(&msg);
}

/// Buffer objects are never adjacent: the page after each one stays reserved and unmapped
/// (driver/src/mem.rs `Mapping::reserve`), so a store that runs past a buffer faults at its
/// end, naming it, whatever the allocator placed nearby.
#[test]
fn the_page_after_every_buffer_is_unmapped() {
    let (sim, _gpu, kfd) = rig(1);
    let dev = Device::open(&kfd, 0).unwrap();
    let kinds = [BufferKind::Vram, BufferKind::Gtt, BufferKind::GttUncached];
    let held: Vec<_> = (0..48u64)
        .map(|i| {
            let size = 4096 * (1 + i % 3);
            (size, dev.alloc(size, kinds[(i % 3) as usize]).unwrap())
        })
        .collect();
    for (size, b) in &held {
        let va = b.va().get();
        let d = sim.describe_va(dev.gpu_id(), va + size).unwrap();
        assert_eq!(
            d,
            format!(
                "0 bytes past the end of the {size}-byte buffer at {va:#x}..{:#x}",
                va + size
            )
        );
    }
    // And a kernel's overrun faults right there.
    let fill = loaded_fill(&dev);
    let (size, b) = &held[0];
    let va = b.va().get();
    let msg = fault_of_fill_at(&dev, &fill, va + size - 64);
    assert!(
        msg.contains(&format!("GPU VM fault: write at {:#x}", va + size))
            && msg.contains(&format!(
                "0 bytes past the end of the {size}-byte buffer at {va:#x}"
            )),
        "{msg}"
    );
}
