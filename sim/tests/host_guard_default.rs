//! The host guard is the user's choice: a simulator built with the defaults installs no
//! process-wide SIGSEGV handler and protects nothing; `SimConfig::host_guard` turns it on.

use hcq_sim::{SimConfig, SimKfd};

/// The process's SIGSEGV action's handler address.
fn segv_handler() -> usize {
    // SAFETY: a zeroed sigaction is valid; sigaction with a null new action only reads.
    unsafe {
        let mut old: libc::sigaction = core::mem::zeroed();
        assert_eq!(
            libc::sigaction(libc::SIGSEGV, core::ptr::null(), &mut old),
            0
        );
        old.sa_sigaction
    }
}

#[test]
fn off_by_default_on_when_asked() {
    // One test in this binary, so nothing else installs the handler meanwhile.
    let env = hcq_sim::env_host_guard().unwrap();
    let before = segv_handler();
    let sim = SimKfd::new(SimConfig::default()).unwrap();
    if env.is_none() {
        assert!(!sim.host_guard_on());
        assert_eq!(
            segv_handler(),
            before,
            "a default simulator installed a SIGSEGV handler"
        );
    }
    assert_eq!(sim.host_guard_dropped(), 0);
    let guarded = SimKfd::new(SimConfig {
        host_guard: true,
        ..SimConfig::default()
    })
    .unwrap();
    if env != Some(false) {
        assert!(guarded.host_guard_on());
        assert_ne!(segv_handler(), before);
    }
    assert_eq!(guarded.host_guard_dropped(), 0);
}
