//! Every code object v5 hidden argument hcq fills, read by a kernel on each of the four
//! targets (`kernels/hidden_args.cl`): block counts, group sizes, remainders and global offsets
//! in x, y and z, grid dims for 1-, 2- and 3-dimensional launches, and the work-group size as
//! clang's builtins compute it from them. hcq launches whole work-groups (`groups` x `block`),
//! so the remainders are 0 and no group is partial.

use core::time::Duration;
use hcq_driver::Device;
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
