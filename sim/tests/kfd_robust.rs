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
/// GET_PROCESS_APERTURES_NEW).
fn writes_through_first_pointer(nr: u8) -> bool {
    matches!(nr, 0x0C | 0x14)
}

/// A random user pointer no process can have mapped: in the kernel half of the address space
/// (top bit set) or in the first page. Random bits, but never this test process's memory.
fn unmappable(bits: u64) -> u64 {
    if bits & 1 == 0 {
        bits | 1 << 63
    } else {
        bits % 4096
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]
    #[test]
    fn random_ioctls_never_panic(
        calls in proptest::collection::vec(
            (0u8..0x30, 0usize..120, any::<u32>(), proptest::collection::vec(any::<u8>(), 128)),
            1..24,
        ),
        pointers in proptest::collection::vec(any::<u64>(), 24),
    ) {
        let p = Proc::one();
        let gpu = p.gpu().to_le_bytes();
        for ((nr, size, dir_and_type, mut bytes), ptr) in calls.into_iter().zip(pointers) {
            let through_pointer = writes_through_first_pointer(nr);
            if through_pointer {
                bytes[..8].copy_from_slice(&unmappable(ptr).to_le_bytes());
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
            let len = len.min(128);
            // Whether the sim got the pointer and a nonzero element count (bytes 8..12 of both
            // argument structs): it must then refuse, since no byte at the pointer is mapped.
            let must_refuse = through_pointer
                && dir & IOC_WRITE != 0
                && size >= 12
                && len >= size
                && bytes[8..12] != [0; 4];
            let r = p.sim.ioctl(p.kfd, req, &mut bytes[..len]);
            if let Err(e) = r {
                prop_assert!(KNOWN.contains(&e), "nr {nr:#x}: unexpected {e}");
            }
            prop_assert!(
                !(must_refuse && r.is_ok()),
                "nr {nr:#x} wrote through pointer {:#x} and succeeded",
                unmappable(ptr)
            );
        }
        // Waits never block in deterministic mode, whatever the events; an event id that does
        // not exist is EINVAL.
        let mut e = [EventData::for_event(1)];
        let r = p.wait(&mut e, true, KFD_WAIT_TIMEOUT_INFINITE);
        prop_assert!(
            matches!(
                r,
                Ok(KFD_IOC_WAIT_RESULT_COMPLETE | KFD_IOC_WAIT_RESULT_TIMEOUT) | Err(Errno::EINVAL)
            ),
            "wait: {r:?}"
        );
        if p.sim.live_objects().events == 0 {
            prop_assert_eq!(r, Err(Errno::EINVAL));
        }
    }

    /// Random `MAP_FIXED` addresses and `munmap` ranges: refused unless they name a region the
    /// sim handed out, so they never unmap or replace memory this process owns.
    #[test]
    fn random_fixed_maps_and_unmaps_are_refused(
        ops in proptest::collection::vec((any::<u64>(), 1u64..64, any::<u8>()), 1..32),
    ) {
        let p = Proc::one();
        let heap = vec![0x5Au8; 3 * 4096];
        let heap_page = (heap.as_ptr() as u64).next_multiple_of(4096);
        let region = p.sim.mmap(None, 4 * 4096, Prot::NONE, MapKind::Reserve).unwrap();
        for (bits, pages, how) in ops {
            let len = pages * 4096;
            // Random page-aligned addresses, addresses of this test's heap, and addresses
            // that straddle or follow the sim's own region.
            let addr = match how % 4 {
                0 => bits & !0xFFF,
                1 => heap_page,
                2 => region + (bits % 8) * 4096,
                _ => (bits & 0x7FFF_FFFF_F000) | 0x1000,
            };
            let inside_region = addr >= region
                && addr.checked_add(len).is_some_and(|end| end <= region + 4 * 4096);
            let exact_region = addr == region && len == 4 * 4096;
            if how & 0x10 == 0 {
                let r = p.sim.mmap(Some(addr), len, Prot::READ_WRITE, MapKind::Anonymous);
                if inside_region {
                    prop_assert_eq!(r, Ok(addr));
                } else {
                    prop_assert_eq!(r, Err(Errno::EINVAL), "fixed map at {:#x}", addr);
                }
            } else if !exact_region {
                prop_assert_eq!(p.sim.munmap(addr, len), Err(Errno::EINVAL), "munmap {:#x}", addr);
            }
        }
        prop_assert!(heap.iter().all(|&b| b == 0x5A));
        p.sim.munmap(region, 4 * 4096).unwrap();
        prop_assert_eq!(p.sim.munmap(region, 4 * 4096), Err(Errno::EINVAL));
    }
}
