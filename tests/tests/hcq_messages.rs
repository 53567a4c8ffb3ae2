//! What a user reads when the GPU cannot run their work: the fault leads (with the reason the
//! simulator gives), then the signal state, and the two never contradict each other.

use std::sync::Arc;

use hcq_driver::{BufferKind, Device, Error, Kfd, Program, Waited};
use hcq_sim::SimKfd;
use hcq_sim::engine::attach::SimGpu;
use hcq_tests::fixtures::{self, FillArgs};

/// A GPU address no buffer is mapped at (page aligned, below every allocation).
const BAD_VA: u64 = 0x7ff000;

/// A simulated gfx1100.
fn rig() -> (Arc<SimKfd>, SimGpu, Kfd) {
    let sim = Arc::new(SimKfd::new(hcq_tests::guarded(hcq_sim::SimConfig::default())).unwrap());
    let gpu = SimGpu::attach(&sim).unwrap();
    // SAFETY: the test never unmaps through `sim` itself; every mapping goes through `kfd`.
    let kfd = unsafe { Kfd::with_sim(Arc::clone(&sim)) }.unwrap();
    kfd.set_wait_timeout(core::time::Duration::from_secs(5));
    (sim, gpu, kfd)
}

/// Issue 16's case: a kernel the simulator cannot run (here: it stores to unmapped memory). The error names the hardware exception
/// and the simulator's reason first, then the signal, whose wording matches its numbers.
#[test]
fn a_kernel_that_faults_says_why() {
    let (_sim, _gpu, kfd) = rig();
    let dev = Device::open(&kfd, 0).unwrap();
    let fill = Program::load(&dev, fixtures::fill(&dev.target_name()).unwrap(), "fill").unwrap();
    let buf = dev.alloc(256, BufferKind::Vram).unwrap();
    let src = dev.alloc(256, BufferKind::Vram).unwrap();
    // Work before the kernel (a copy on the SDMA queue), then the kernel.
    let before = dev.copy(&buf, &src).unwrap();
    // The kernel stores through a pointer to memory mapped nowhere: the interpreter faults.
    let args = FillArgs {
        buf: BAD_VA,
        value: 1,
        n: 64,
    };
    // SAFETY: the kernel's only store goes to BAD_VA, which no mapping of this process or of
    // the GPU covers: the GPU faults, nothing is written.
    unsafe { fill.launch_pod(&args, [1, 1, 1], [64, 1, 1]) }.unwrap();
    for target in [before, dev.last_value()] {
        let err = dev.wait_value(target).unwrap_err();
        let Error::DeviceFault(rep) = &err else {
            panic!("expected a device fault, got {err:?}");
        };
        assert_eq!(rep.waited, Waited::Signal);
        let msg = err.to_string();
        assert!(
            msg.starts_with("device fault: GPU memory fault at 0x7ff000: "),
            "the fault leads: {msg}"
        );
        let reason = msg
            .find("simulator: PM4 queue")
            .unwrap_or_else(|| panic!("the simulator's reason is in the message: {msg}"));
        assert!(
            msg.contains("GPU VM fault: write at 0x7ff000: no GPU mapping"),
            "the interpreter's reason: {msg}"
        );
        let signal = msg.find("; then signal at ").expect("then the signal");
        assert!(reason < signal, "{msg}");
        if rep.seen >= rep.expected {
            assert!(!msg.contains("but is"), "no contradiction: {msg}");
            assert!(
                msg.contains(&format!(
                    "had reached {} (waited for >= {})",
                    rep.seen, rep.expected
                )),
                "{msg}"
            );
            assert!(
                msg.contains("the fault is in work queued after it"),
                "{msg}"
            );
        } else {
            assert!(
                msg.contains(&format!("expected >= {} but is {}", rep.expected, rep.seen)),
                "{msg}"
            );
        }
    }
}
