//! hcq's driver on an 8-XCC gfx942 (an MI300X in SPX mode, where the device takes an AQL
//! queue): a signal in a PM4 body is written once, not once per XCC; a PM4 DISPATCH_DIRECT,
//! which every XCC would run whole, is refused before anything reaches the ring; launches
//! (kernel dispatch packets) run once over the whole grid.

mod hcq_common;

use core::time::Duration;
use hcq_common::{SimMode, programs, read_u32s};
use hcq_driver::{BufferKind, Device, Error};
use hcq_sim::{GpuConfig, SimConfig};
use hcq_tests::Rig;
use hcq_tests::fixtures::FillArgs;

fn spx(mode: SimMode) -> (Rig, Device) {
    let rig = Rig::with_config(
        SimConfig {
            mode,
            gpus: vec![GpuConfig::gfx942()],
            xcc: 8,
            strict: true,
            ..SimConfig::default()
        },
        Duration::from_secs(20),
    );
    let dev = Device::open(&rig.kfd, 0).unwrap();
    assert!(dev.is_aql(), "an 8-XCC GPU gets an AQL compute queue");
    (rig, dev)
}

/// The compute queue signals 1, the copy queue (after the host saw 1) 2: with the signal
/// written by every XCC a late XCC's 1 would land over the 2 (the simulator faults a timeline
/// value going down).
fn a_signal_is_written_once_on_eight_xccs(mode: SimMode) {
    let (_rig, dev) = spx(mode);
    let sig = dev.new_signal(0).unwrap();
    // SAFETY: the submissions write only `sig`, alive past every wait below.
    unsafe { dev.submit_compute(|c| c.signal(&sig.signal_ref(), 1)) }.unwrap();
    dev.wait(&sig, 1).unwrap();
    // SAFETY: as above.
    unsafe { dev.submit_copy(|c| c.signal(&sig.signal_ref(), 2)) }.unwrap();
    dev.wait(&sig, 2).unwrap();
    dev.synchronize().unwrap();
    assert_eq!(sig.value(), 2);
}

/// `exec` (a PM4 DISPATCH_DIRECT) on the AQL queue is refused with the reason and what to do
/// instead; the device goes on (a launch after it fills the whole buffer once).
fn a_pm4_dispatch_on_eight_xccs_is_refused_and_a_launch_runs(mode: SimMode) {
    let (_rig, dev) = spx(mode);
    let (fill, _) = programs(&dev);
    let n = 4096u32;
    let buf = dev.alloc(u64::from(n) * 4, BufferKind::Vram).unwrap();
    let prog = fill.pm4_program();
    // SAFETY: refused before anything reaches a ring (and `buf` outlives the device's work).
    let err =
        unsafe { dev.submit_compute(|c| c.exec(&prog, buf.va(), [n / 64, 1, 1], [64, 1, 1])) }
            .unwrap_err();
    assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
    let text = err.to_string();
    assert!(
        text.contains("DISPATCH_DIRECT")
            && text.contains("8 XCCs")
            && text.contains("Device::launch"),
        "{text}"
    );
    let fa = FillArgs {
        buf: buf.va().get(),
        value: 7,
        n,
    };
    // SAFETY: `buf` holds n u32s and outlives the launch (synchronized below).
    unsafe { fill.launch_pod(&fa, [n / 64, 1, 1], [64, 1, 1]) }.unwrap();
    dev.synchronize().unwrap();
    assert_eq!(read_u32s(&dev, &buf, n as usize), vec![7; n as usize]);
}

hcq_common::both_modes!(
    a_signal_is_written_once_on_eight_xccs,
    a_pm4_dispatch_on_eight_xccs_is_refused_and_a_launch_runs,
);
