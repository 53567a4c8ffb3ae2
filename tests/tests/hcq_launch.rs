//! Kernel metadata at launch (issue 12): code object v5 hidden arguments filled by the driver
//! (a kernel reading `hidden_group_size_x` computes correctly through `launch_pod` and the
//! builder), and every refusal of the checked launch builder, on the simulator.

mod hcq_common;

use hcq_common::{LONG, SimMode, both_modes, one, read_u32s, rig, write_u32s};
use hcq_driver::{BufferKind, BufferView, ByValue, Device, LaunchBuilder, Program};
use hcq_tests::fixtures::{self, FillArgs, GlobalIdArgs};

fn global_id(dev: &Device) -> Program {
    Program::load(
        dev,
        fixtures::global_id(&dev.target_name()).unwrap(),
        "global_id",
    )
    .unwrap()
}

/// `global_id` over `n` elements through `launch_pod` (12 explicit bytes) and the builder,
/// with several block sizes: `out[i] = i` needs the right `hidden_group_size_x`.
fn hidden_args_reach_the_kernel(mode: SimMode) {
    let (_r, dev) = one(mode);
    let prog = global_id(&dev);
    assert_eq!(prog.kernarg_size(), 272);
    assert_eq!(prog.max_flat_workgroup_size(), 256);
    let n = 1000u32;
    let want: Vec<u32> = (0..n).collect();
    for block in [64u32, 32, 256] {
        let groups = n.div_ceil(block);
        let out = dev.alloc(u64::from(n) * 4, BufferKind::Vram).unwrap();
        write_u32s(&dev, &out, &vec![u32::MAX; n as usize]);
        let args = GlobalIdArgs {
            out: out.va().get(),
            n,
        };
        // SAFETY: global_id writes n u32s at `out`, which holds n; waited for below.
        let v = unsafe { prog.launch_pod(&args, [groups, 1, 1], [block, 1, 1]) }.unwrap();
        dev.wait_value(v).unwrap();
        assert_eq!(
            read_u32s(&dev, &out, n as usize),
            want,
            "launch_pod block {block}"
        );

        write_u32s(&dev, &out, &vec![u32::MAX; n as usize]);
        // SAFETY: as above.
        let v = unsafe {
            prog.launch_builder()
                .arg(&out)
                .arg(&n)
                .groups([groups, 1, 1])
                .block([block, 1, 1])
                .dynamic_lds(0)
                .launch()
        }
        .unwrap();
        dev.wait_value(v).unwrap();
        assert_eq!(
            read_u32s(&dev, &out, n as usize),
            want,
            "builder block {block}"
        );
    }
    // A typed view passes the address of its first element.
    let out = dev.alloc(128 * 4, BufferKind::Vram).unwrap();
    write_u32s(&dev, &out, &[7; 128]);
    let view = BufferView::<u32>::new(&out).slice(64, 64).unwrap();
    // SAFETY: 64 u32s at the view, inside `out`; waited for below.
    let v = unsafe {
        prog.launch_builder()
            .arg(&view)
            .arg(&64u32)
            .groups([1, 1, 1])
            .block([64, 1, 1])
            .launch()
    }
    .unwrap();
    dev.wait_value(v).unwrap();
    let got = read_u32s(&dev, &out, 128);
    assert_eq!(&got[..64], &[7; 64]);
    assert_eq!(&got[64..], &(0..64).collect::<Vec<u32>>()[..]);
    // Caller-laid-out full segment with garbage in the hidden part: the driver overwrites it.
    let out = dev.alloc(256 * 4, BufferKind::Vram).unwrap();
    let mut full = vec![0xeeu8; 272];
    full[..8].copy_from_slice(&out.va().get().to_le_bytes());
    full[8..12].copy_from_slice(&256u32.to_le_bytes());
    // SAFETY: 256 u32s at `out`; waited for below.
    let v = unsafe { prog.launch(&full, [4, 1, 1], [64, 1, 1]) }.unwrap();
    dev.wait_value(v).unwrap();
    assert_eq!(read_u32s(&dev, &out, 256), (0..256).collect::<Vec<u32>>());
}

/// The refusal of a builder launch that must be refused.
fn refused(b: &mut LaunchBuilder<'_>) -> String {
    // SAFETY: every launch given here is refused before anything reaches the GPU (the test
    // asserts the refusal).
    let r = unsafe { b.launch() };
    r.expect_err("launch must be refused").to_string()
}

/// The refusal of a `launch_pod` that must be refused.
fn pod_refused<T: bytemuck::Pod>(p: &Program, a: &T, g: [u32; 3], l: [u32; 3]) -> String {
    // SAFETY: as in `refused`.
    let r = unsafe { p.launch_pod(a, g, l) };
    r.expect_err("launch must be refused").to_string()
}

/// The refusal of a `launch` that must be refused.
fn raw_refused(p: &Program, a: &[u8], g: [u32; 3], l: [u32; 3]) -> String {
    // SAFETY: as in `refused`.
    let r = unsafe { p.launch(a, g, l) };
    r.expect_err("launch must be refused").to_string()
}

/// Every refusal of the builder (and of `launch_pod`), each naming the argument or limit.
fn builder_refusals(mode: SimMode) {
    let (_r, dev) = one(mode);
    let prog = global_id(&dev);
    let out = dev.alloc(4096, BufferKind::Vram).unwrap();
    let e = refused(
        prog.launch_builder()
            .arg(&out)
            .groups([1, 1, 1])
            .block([64, 1, 1]),
    );
    assert_eq!(
        e,
        "invalid argument: kernel global_id: takes 2 arguments, got 1"
    );
    let e = refused(
        prog.launch_builder()
            .arg(&out)
            .arg(&1u32)
            .arg(&2u32)
            .block([64, 1, 1]),
    );
    assert!(
        e.contains("too many arguments: it takes 2, argument 2 is one more"),
        "{e}"
    );
    let e = refused(prog.launch_builder().arg(&out).arg(&1u64).block([64, 1, 1]));
    assert!(e.contains("argument 1 (uint) is 4 bytes, got 8"), "{e}");
    let e = refused(
        prog.launch_builder()
            .arg(&7u64)
            .arg(&1u32)
            .block([64, 1, 1]),
    );
    assert!(e.contains("argument 0 (uint*) is a global_buffer"), "{e}");
    let e = refused(prog.launch_builder().arg(&out).arg(&out).block([64, 1, 1]));
    assert!(
        e.contains("argument 1 (uint) is a by_value argument"),
        "{e}"
    );
    let e = refused(
        prog.launch_builder()
            .arg(&out)
            .arg(&ByValue([1u16, 2]))
            .block([64, 1, 1])
            .groups([0, 1, 1]),
    );
    assert!(
        e.contains("groups [0, 1, 1] block [64, 1, 1] contain 0"),
        "{e}"
    );
    let e = refused(
        prog.launch_builder()
            .arg(&out)
            .arg(&1u32)
            .block([512, 1, 1]),
    );
    assert!(
        e.contains(
            "block [512, 1, 1] is 512 work-items, above 256 (the kernel's max_flat_workgroup_size)"
        ),
        "{e}"
    );
    let e = refused(
        prog.launch_builder()
            .arg(&out)
            .arg(&1u32)
            .block([64, 1, 1])
            .dynamic_lds(1 << 20),
    );
    assert!(
        e.contains("dynamic LDS 1048576 bytes is above the 65536 bytes left"),
        "{e}"
    );
    let e = refused(
        prog.launch_builder()
            .arg(&out)
            .arg(&1u32)
            .groups([1 << 26, 1, 1])
            .block([64, 1, 1]),
    );
    assert!(
        e.contains(
            "grid x is 67108864 groups x 64 work-items = 4294967296 work-items, at least 2^32"
        ),
        "{e}"
    );
    // launch_pod: the same block limit, and the explicit size.
    let args = GlobalIdArgs {
        out: out.va().get(),
        n: 1,
    };
    let e = pod_refused(&prog, &args, [1, 1, 1], [512, 1, 1]);
    assert!(
        e.contains("above 256 (the kernel's max_flat_workgroup_size)"),
        "{e}"
    );
    let e = raw_refused(&prog, &[0u8; 8], [1, 1, 1], [64, 1, 1]);
    assert!(
        e.contains("takes 12 bytes of explicit arguments (up to 16 with padding, 272 with its 13 hidden arguments, which hcq fills), got 8"),
        "{e}"
    );
    // reqd_workgroup_size (fill is fixed at 64).
    let fill = Program::load(&dev, fixtures::fill(&dev.target_name()).unwrap(), "fill").unwrap();
    let e = refused(
        fill.launch_builder()
            .arg(&out)
            .arg(&1u32)
            .arg(&1u32)
            .block([32, 1, 1]),
    );
    assert!(
        e.contains("block [32, 1, 1] differs from the kernel's reqd_workgroup_size [64, 1, 1]"),
        "{e}"
    );
    let fa = FillArgs {
        buf: out.va().get(),
        value: 1,
        n: 1,
    };
    let e = pod_refused(&fill, &fa, [1, 1, 1], [32, 1, 1]);
    assert!(e.contains("reqd_workgroup_size [64, 1, 1]"), "{e}");
    // Nothing ran.
    assert_eq!(read_u32s(&dev, &out, 4), [0, 0, 0, 0]);
}

/// Byte offset of every section of type `ty` in an ELF64 file.
fn sections_of_type(d: &[u8], ty: u32) -> Vec<usize> {
    let shoff = u64::from_le_bytes(d[0x28..0x30].try_into().unwrap()) as usize;
    let shnum = u16::from_le_bytes(d[0x3c..0x3e].try_into().unwrap()) as usize;
    (0..shnum)
        .map(|i| shoff + 64 * i)
        .filter(|&h| u32::from_le_bytes(d[h + 4..h + 8].try_into().unwrap()) == ty)
        .collect()
}

/// A code object without the metadata note, an unknown hidden kind, a buffer of another GPU.
fn refusals_needing_other_objects(mode: SimMode) {
    let r = rig(mode, 2, LONG);
    let dev = Device::open(&r.kfd, 0).unwrap();
    let other = Device::open(&r.kfd, 1).unwrap();
    let co = fixtures::global_id(&dev.target_name()).unwrap();
    let out = dev.alloc(4096, BufferKind::Vram).unwrap();

    // The note's section turned into PROGBITS: no metadata, the builder refuses.
    let mut bare = co.to_vec();
    for h in sections_of_type(&bare, 7) {
        bare[h + 4..h + 8].copy_from_slice(&1u32.to_le_bytes());
    }
    let prog = Program::load(&dev, &bare, "global_id").unwrap();
    assert!(!prog.has_metadata());
    let e = refused(prog.launch_builder().arg(&out).arg(&1u32).block([64, 1, 1]));
    assert!(
        e.contains("no NT_AMDGPU_METADATA entry for it; use launch_pod"),
        "{e}"
    );

    // A hidden kind hcq does not know (same length, so the MessagePack stays valid).
    let mut odd = co.to_vec();
    let at = odd
        .windows(16)
        .position(|w| w == b"hidden_grid_dims")
        .unwrap();
    odd[at..at + 16].copy_from_slice(b"hidden_grid_dimz");
    let prog = Program::load(&dev, &odd, "global_id").unwrap();
    let args = GlobalIdArgs {
        out: out.va().get(),
        n: 1,
    };
    let e = pod_refused(&prog, &args, [1, 1, 1], [64, 1, 1]);
    assert!(
        e.contains("hidden argument of kind hidden_grid_dimz, which hcq does not know"),
        "{e}"
    );
    let e = refused(prog.launch_builder().arg(&out).arg(&1u32).block([64, 1, 1]));
    assert!(e.contains("hidden_grid_dimz"), "{e}");

    // A buffer allocated on the other GPU and not mapped here.
    let prog = global_id(&dev);
    let theirs = other.alloc(4096, BufferKind::Vram).unwrap();
    let e = refused(
        prog.launch_builder()
            .arg(&theirs)
            .arg(&1u32)
            .block([64, 1, 1]),
    );
    assert!(
        e.contains("argument 0 (uint*): the buffer is not mapped on this program's device"),
        "{e}"
    );
}

both_modes!(
    hidden_args_reach_the_kernel,
    builder_refusals,
    refusals_needing_other_objects
);

/// A HIP offload bundle loads on the device's target and its kernel (reading
/// `hidden_group_size_x` as blockDim.x) runs through the builder; a bundle without the
/// device's target is refused naming the targets it has.
fn hip_bundle_loads_and_runs(mode: SimMode) {
    let (_r, dev) = one(mode);
    let prog = Program::load(&dev, fixtures::SCALE_HIP_BUNDLE, "scale").unwrap();
    assert_eq!(prog.max_flat_workgroup_size(), 1024);
    let n = 300u32;
    let x = dev.alloc(u64::from(n) * 4, BufferKind::Vram).unwrap();
    // CAST: i < 300 is exact in f32.
    let input: Vec<u32> = (0..n).map(|i| (i as f32).to_bits()).collect();
    write_u32s(&dev, &x, &input);
    // SAFETY: scale touches n f32s at `x`, which holds n; waited for below.
    let v = unsafe {
        prog.launch_builder()
            .arg(&x)
            .arg(&2.5f32)
            .arg(&n)
            .groups([3, 1, 1])
            .block([128, 1, 1])
            .launch()
    }
    .unwrap();
    dev.wait_value(v).unwrap();
    let got: Vec<f32> = read_u32s(&dev, &x, n as usize)
        .into_iter()
        .map(f32::from_bits)
        .collect();
    // CAST: as above.
    let want: Vec<f32> = (0..n).map(|i| i as f32 * 2.5).collect();
    assert_eq!(got, want);

    // The same bundle with only its gfx90a entry.
    let b = hcq_core::bundle::Bundle::parse(fixtures::SCALE_HIP_BUNDLE).unwrap();
    let e = b.select("gfx90a").unwrap();
    let mut only = Vec::new();
    only.extend_from_slice(hcq_core::bundle::BUNDLE_MAGIC);
    only.extend_from_slice(&1u64.to_le_bytes());
    let at = 32 + 24 + e.id.len() as u64;
    only.extend_from_slice(&at.to_le_bytes());
    only.extend_from_slice(&(e.code.len() as u64).to_le_bytes());
    only.extend_from_slice(&(e.id.len() as u64).to_le_bytes());
    only.extend_from_slice(e.id.as_bytes());
    only.extend_from_slice(e.code);
    let err = Program::load(&dev, &only, "scale").unwrap_err().to_string();
    assert_eq!(
        err,
        "code object: offload bundle has no code object for gfx1100; it holds gfx90a"
    );
}

both_modes!(hip_bundle_loads_and_runs);
