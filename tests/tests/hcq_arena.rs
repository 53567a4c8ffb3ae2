//! Nothing overwrites what the GPU may still read: kernel arguments from a small arena and
//! copies through small staging buffers, reused thousands of times without host waits in
//! between; every launch and every chunk lands exactly. Both simulator modes.

mod hcq_common;

use hcq_common::{LONG, SimMode, both_modes, one_with, pattern, programs, read_u32s};
use hcq_driver::{BufferKind, DeviceOptions};
use hcq_tests::fixtures::FillArgs;

/// 3000 launches of `fill(out + i, i + 1, 1)`, each with its own arguments, through a 4 KiB
/// kernarg arena (dozens of laps); no host wait until the end.
fn kernargs_are_not_overwritten_in_flight(mode: SimMode) {
    let opts = DeviceOptions {
        kernargs_size: 4096,
        ..DeviceOptions::default()
    };
    let (_rig, dev) = one_with(mode, LONG, opts);
    let (fill, _) = programs(&dev);
    let n = 3000u32;
    let out = dev.alloc(u64::from(n) * 4, BufferKind::Vram).unwrap();
    let first = dev.last_value().get() + 1;
    for i in 0..n {
        let args = FillArgs {
            buf: out.va().get() + 4 * u64::from(i),
            value: i + 1,
            n: 1,
        };
        // SAFETY: out holds n u32s; element i is in it; out outlives the launches
        // (read_u32s below waits for them).
        let v = unsafe { fill.launch_pod(&args, [1, 1, 1], [64, 1, 1]) }.unwrap();
        assert_eq!(v.get(), first + u64::from(i));
    }
    assert_eq!(
        read_u32s(&dev, &out, n as usize),
        (1..=n).collect::<Vec<_>>()
    );
}

/// copy_in / copy_out of 1 MiB through two 4 KiB staging buffers (256 chunks each way),
/// 8 buffers queued back to back before any read.
fn staging_is_not_overwritten_in_flight(mode: SimMode) {
    let opts = DeviceOptions {
        staging_size: 4096,
        ..DeviceOptions::default()
    };
    let (_rig, dev) = one_with(mode, LONG, opts);
    let n = 1 << 20;
    let bufs: Vec<_> = (0..8)
        .map(|_| dev.alloc(n as u64, BufferKind::Vram).unwrap())
        .collect();
    let datas: Vec<Vec<u8>> = (0..8).map(|i| pattern(n, 77 + i)).collect();
    for (b, d) in bufs.iter().zip(&datas) {
        dev.copy_in(b, d).unwrap();
    }
    for (i, (b, d)) in bufs.iter().zip(&datas).enumerate() {
        let mut out = vec![0u8; n];
        dev.copy_out(b, &mut out).unwrap();
        assert!(out == *d, "buffer {i}");
    }
}

both_modes!(
    kernargs_are_not_overwritten_in_flight,
    staging_is_not_overwritten_in_flight,
);
