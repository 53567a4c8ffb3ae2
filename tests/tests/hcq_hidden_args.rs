//! Every code object v5 hidden argument hcq fills, read by a kernel on each of the four
//! targets (`kernels/hidden_args.cl`): block counts, group sizes, remainders and global offsets
//! in x, y and z, grid dims for 1-, 2- and 3-dimensional launches, and the work-group size as
//! clang's builtins compute it from them. hcq launches whole work-groups (`groups` x `block`),
//! so the remainders are 0 and no group is partial. `hidden_dynamic_lds_size`, which LLVM lists
//! only for kernels with dynamic LDS, is read by `kernels/dynamic_lds.hip`. The private and
//! shared aperture bases are listed only for targets without aperture registers (before gfx9),
//! none of hcq's.

use core::time::Duration;
use hcq_driver::{BufferKind, Device, Program};
use hcq_sim::{GpuConfig, SimConfig, SimMode};
use hcq_tests::Rig;
use hcq_tests::hidden_args::mismatches;

/// (groups, block) per grid dimensionality, each axis uneven so a swapped axis shows.
const SHAPES: [([u32; 3], [u32; 3]); 4] = [
    ([3, 1, 1], [64, 1, 1]),
    ([2, 3, 1], [8, 4, 1]),
    ([2, 3, 2], [4, 2, 3]),
    ([1, 1, 2], [1, 1, 1]),
];

#[test]
fn every_hidden_argument_as_the_kernel_reads_it_on_every_target() {
    for gpu in [
        GpuConfig::gfx1100(),
        GpuConfig::gfx1201(),
        GpuConfig::gfx90a(),
        GpuConfig::gfx942(),
    ] {
        let cfg = SimConfig {
            mode: SimMode::Deterministic,
            gpus: vec![gpu],
            ..SimConfig::default()
        };
        let r = Rig::with_config(cfg, Duration::from_secs(5));
        let dev = Device::open(&r.kfd, 0).unwrap();
        for (groups, block) in SHAPES {
            let bad = mismatches(&dev, groups, block).unwrap();
            assert!(
                bad.is_empty(),
                "{} {groups:?} x {block:?}: {bad:?}",
                dev.target_name()
            );
        }
    }
}

/// `hidden_dynamic_lds_size`, which LLVM lists for kernels with dynamic LDS
/// (`kernels/dynamic_lds.hip`, `extern __shared__`): the kernel reads it, fills that many bytes
/// of LDS through the last word and sums them back, on every target and for several sizes
/// (the sizes the launch asked for, not rounded to the LDS allocation granule).
#[test]
fn hidden_dynamic_lds_size_is_the_launchs_on_every_target() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../core/tests/fixtures/kernels/dynamic_lds-hip.bundle"
    );
    let bundle = std::fs::read(path).unwrap();
    for gpu in [
        GpuConfig::gfx1100(),
        GpuConfig::gfx1201(),
        GpuConfig::gfx90a(),
        GpuConfig::gfx942(),
    ] {
        let cfg = SimConfig {
            mode: SimMode::Deterministic,
            gpus: vec![gpu],
            ..SimConfig::default()
        };
        let r = Rig::with_config(cfg, Duration::from_secs(5));
        let dev = Device::open(&r.kfd, 0).unwrap();
        let prog = Program::load(&dev, &bundle, "dynamic_lds").unwrap();
        let groups = 3u32;
        for bytes in [4u32, 260, 4096, 32 * 1024] {
            let out = dev.alloc(u64::from(groups) * 16, BufferKind::Gtt).unwrap();
            // SAFETY: each of the 3 groups writes its 4 u32s at out[4 * group], inside `out`,
            // which outlives the wait below.
            let done = unsafe {
                prog.launch_builder()
                    .arg(&out)
                    .groups([groups, 1, 1])
                    .block([64, 1, 1])
                    .dynamic_lds(bytes)
                    .launch()
                    .unwrap()
            };
            dev.wait_value(done).unwrap();
            let mut b = vec![0u8; groups as usize * 16];
            out.read(0, &mut b).unwrap();
            let words = bytes / 4;
            let sum = (0..words).fold(0u32, |s, i| s.wrapping_add(3 * i + 1));
            let want = [bytes, sum, 3 * (words - 1) + 1, words];
            for (g, rec) in b.chunks_exact(16).enumerate() {
                let got: Vec<u32> = rec
                    .chunks_exact(4)
                    .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
                    .collect();
                assert_eq!(
                    got,
                    want,
                    "{} group {g}, dynamic LDS {bytes} B: [hidden_dynamic_lds_size, sum, last word, words]",
                    dev.target_name()
                );
            }
        }
    }
}
