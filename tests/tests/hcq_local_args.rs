//! OpenCL `__local T*` kernel arguments (`dynamic_shared_pointer`, issue 28 item 4): the launch
//! builder takes an [`Lds`] size for each, places them after the kernel's static LDS at their
//! `.pointee_align` and passes their LDS addresses, as ROCm's runtime does; on every fixture
//! target, executed by the simulator's ISA interpreter.

use core::time::Duration;
use hcq_driver::{BufferKind, Device, GpuBuffer, Lds, Program};
use hcq_sim::{GpuConfig, SimConfig};
use hcq_tests::Rig;

const LONG: Duration = Duration::from_secs(30);

fn fixture(target: &str) -> Vec<u8> {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../core/tests/fixtures/kernels")
        .join(format!("reduce_local-{target}.co"));
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn rig(cfg: GpuConfig) -> (Rig, Device) {
    let rig = Rig::with_config(
        SimConfig {
            gpus: vec![cfg],
            ..SimConfig::default()
        },
        LONG,
    );
    let dev = Device::open(&rig.kfd, 0).unwrap();
    (rig, dev)
}

fn read(dev: &Device, buf: &GpuBuffer, n: usize) -> Vec<u32> {
    let mut out = vec![0u8; n * 4];
    dev.copy_out(buf, &mut out).unwrap();
    out.chunks_exact(4)
        .map(|w| u32::from_le_bytes(w.try_into().unwrap()))
        .collect()
}

/// `reduce_sum` over 1000 floats in blocks of 64 and 256 (scratch = block floats), and
/// `local_layout`'s view of where its two `__local` arguments and its static array landed.
fn local_args_run(cfg: GpuConfig) {
    let (_rig, dev) = rig(cfg);
    let co = fixture(&dev.target_name());
    let prog = Program::load(&dev, &co, "reduce_sum").unwrap();
    let n = 1000u32;
    let input: Vec<f32> = (0..n).map(|i| (i % 17) as f32 * 0.5).collect();
    let inb = dev.alloc(u64::from(n) * 4, BufferKind::Vram).unwrap();
    dev.copy_in(&inb, bytemuck::cast_slice(&input)).unwrap();
    for block in [64u32, 256] {
        let groups = n.div_ceil(block);
        let out = dev.alloc(u64::from(groups) * 4, BufferKind::Vram).unwrap();
        // SAFETY: reduce_sum reads n floats of `inb` and writes `groups` floats of `out`,
        // both that large; waited for below.
        let v = unsafe {
            prog.launch_builder()
                .arg(&inb)
                .arg(&out)
                .arg(&Lds(block * 4))
                .arg(&n)
                .groups([groups, 1, 1])
                .block([block, 1, 1])
                .launch()
        }
        .unwrap();
        dev.wait_value(v).unwrap();
        let got: Vec<f32> = read(&dev, &out, groups as usize)
            .into_iter()
            .map(f32::from_bits)
            .collect();
        let want: Vec<f32> = input
            .chunks(block as usize)
            .map(|c| c.iter().sum())
            .collect();
        assert_eq!(got, want, "{} block {block}", dev.target_name());
    }

    let prog = Program::load(&dev, &co, "local_layout").unwrap();
    let out = dev.alloc(6 * 4, BufferKind::Vram).unwrap();
    // SAFETY: local_layout writes 6 u32s of `out`, which holds 6; waited for below.
    let v = unsafe {
        prog.launch_builder()
            .arg(&out)
            .arg(&Lds(3))
            .arg(&Lds(16))
            .launch()
    }
    .unwrap();
    dev.wait_value(v).unwrap();
    // Static LDS is 20 bytes (uint[5]) at 0; `a` (align 1) right after it; `b` (float4, align
    // 16) at the next multiple of 16 after a's 3 bytes.
    assert_eq!(
        read(&dev, &out, 6),
        vec![20, 32, 0, 204, 24, 10],
        "{}",
        dev.target_name()
    );
}

/// The refusals: an LDS total above the device's LDS names the parts; an `Lds` where a value
/// goes, and a value where an `Lds` goes, name the argument's kind.
fn refusals(cfg: GpuConfig) {
    let (_rig, dev) = rig(cfg);
    let co = fixture(&dev.target_name());
    let prog = Program::load(&dev, &co, "local_layout").unwrap();
    let out = dev.alloc(64, BufferKind::Vram).unwrap();
    let refused = |b: &mut hcq_driver::LaunchBuilder<'_>| {
        // SAFETY: every launch here is refused before it reaches the GPU.
        unsafe { b.launch() }.unwrap_err().to_string()
    };
    let e = refused(
        prog.launch_builder()
            .arg(&out)
            .arg(&Lds(3))
            .arg(&Lds(65536)),
    );
    assert!(
        e.contains(
            "dynamic LDS 65548 bytes is above the 65516 bytes left (device LDS 65536 minus the kernel's static 20): __local arguments 65539 + alignment padding 9 + dynamic 0"
        ),
        "{e}"
    );
    let e = refused(prog.launch_builder().arg(&out).arg(&3u32).arg(&Lds(16)));
    assert!(
        e.contains("argument 1 (uchar*) is a dynamic_shared_pointer (__local): pass Lds(bytes)"),
        "{e}"
    );
    let e = refused(
        prog.launch_builder()
            .arg(&Lds(4))
            .arg(&Lds(3))
            .arg(&Lds(16)),
    );
    assert!(
        e.contains("argument 0 (uint*) is a global_buffer, not a dynamic_shared_pointer"),
        "{e}"
    );
}

/// The placement a launch laid out elsewhere (a graph's) uses is the builder's: the same
/// addresses local_layout reported above, the same refusal, and RSRC2.LDS_SIZE covering
/// static plus dynamic LDS.
#[test]
fn lds_placement_is_the_launch_builders() {
    let (_rig, dev) = rig(GpuConfig::gfx1100());
    let prog = Program::load(&dev, &fixture("gfx1100"), "local_layout").unwrap();
    let p = prog.lds_placement(&[(1, 3), (2, 16)], 0).unwrap();
    assert_eq!(p.addrs, vec![(1, 20), (2, 32)]);
    assert_eq!(p.dynamic, 28);
    // With 100 more dynamic bytes (HIP's extern __shared__) after the arguments.
    assert_eq!(
        prog.lds_placement(&[(1, 3), (2, 16)], 100).unwrap().dynamic,
        128
    );
    let e = prog
        .lds_placement(&[(1, 3), (2, 65536)], 0)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("dynamic LDS 65548 bytes is above the 65516 bytes left"),
        "{e}"
    );
    // COMPUTE_PGM_RSRC2.LDS_SIZE, bits 23:15, in granules of LDS_GRANULE_BYTES.
    let granules = |raw: u32| (raw >> 15) & 0x1ff;
    let g = hcq_core::codeobj::LDS_GRANULE_BYTES;
    let base = prog.pm4_program();
    assert_eq!(granules(base.rsrc2), 20u32.div_ceil(g));
    let with = prog.pm4_program_with_lds(p.dynamic);
    assert_eq!(granules(with.rsrc2), 48u32.div_ceil(g));
    let big = prog.pm4_program_with_lds(4096);
    assert_eq!(granules(big.rsrc2), (20u32 + 4096).div_ceil(g));
    assert_eq!(big.rsrc2 & !(0x1ff << 15), base.rsrc2 & !(0x1ff << 15));
    assert_eq!(prog.pm4_program_with_lds(0).rsrc2, base.rsrc2);
}

#[test]
fn gfx1100_local_args() {
    local_args_run(GpuConfig::gfx1100());
    refusals(GpuConfig::gfx1100());
}

#[test]
fn gfx90a_local_args() {
    local_args_run(GpuConfig::gfx90a());
}

#[test]
fn gfx942_local_args() {
    local_args_run(GpuConfig::gfx942());
}

#[test]
fn gfx1201_local_args() {
    local_args_run(GpuConfig::gfx1201());
}
