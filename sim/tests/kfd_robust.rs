//! Random ioctls (number, size, bytes) never panic and only return errnos amdkfd returns.

mod common;

use common::Proc;
use hcq_core::kfd::*;
use proptest::prelude::*;

/// Errnos the simulated kernel may return for arbitrary input.
const KNOWN: &[Errno] = &[
    Errno::EPERM,
    Errno::ESRCH,
    Errno::EIO,
    Errno::ENOMEM,
    Errno::EFAULT,
    Errno::EBUSY,
    Errno::EEXIST,
    Errno::ENODEV,
    Errno::EINVAL,
    Errno::ENOTTY,
    Errno::ENOSPC,
    Errno::ENOTSUPP,
];

/// Whether the ioctl's first u64 is a user pointer the kernel writes through (WAIT_EVENTS,
/// GET_PROCESS_APERTURES_NEW): zeroed so a random value cannot point into this test process.
fn writes_through_first_pointer(nr: u8) -> bool {
    matches!(nr, 0x0C | 0x14)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]
    #[test]
    fn random_ioctls_never_panic(
        calls in proptest::collection::vec(
            (0u8..0x30, 0usize..120, any::<u32>(), proptest::collection::vec(any::<u8>(), 128)),
            1..24,
        )
    ) {
        let p = Proc::one();
        let gpu = p.gpu().to_le_bytes();
        for (nr, size, dir_and_type, mut bytes) in calls {
            if writes_through_first_pointer(nr) {
                bytes[..8].fill(0);
            }
            // Often aim at the real GPU so checks past the gpu_id lookup run too.
            if dir_and_type & 1 == 0 {
                for off in [8usize, 32, 36] {
                    bytes[off..off + 4].copy_from_slice(&gpu);
                }
            }
            let dir = dir_and_type >> 30;
            let req = ioc(dir, b'K', nr, size);
            let len = if dir_and_type & 2 == 0 { size } else { size / 2 };
            match p.sim.ioctl(p.kfd, req, &mut bytes[..len.min(128)]) {
                Ok(()) => {}
                Err(e) => prop_assert!(KNOWN.contains(&e), "nr {nr:#x}: unexpected {e}"),
            }
        }
        // Waits never block in deterministic mode, whatever the events.
        let mut e = [EventData::for_event(1)];
        let _ = p.wait(&mut e, true, KFD_WAIT_TIMEOUT_INFINITE);
    }
}
