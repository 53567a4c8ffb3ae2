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
    // GET_DMABUF_INFO and IMPORT_DMABUF on a descriptor that is no dma-buf (dma_buf_get).
    Errno::EBADF,
    // CRIU's operations without CAP_CHECKPOINT_RESTORE.
    Errno::EACCES,
];

/// A pointer-carrying command (refused by `Request::raw`) through its typed constructor on
/// two-element slices, then the whole argument overwritten with `junk` the way any safe caller
/// may (`arg_mut`): pointers and counts included. Returns the result and whether the sim had to
/// refuse (a count past the borrowed slice). The commands hcq does not model cannot be issued.
fn pointer_request(p: &Proc, nr: u8, junk: &[u8]) -> Option<(Result<(), Errno>, bool)> {
    let mut events = [EventData::for_event(1); 2];
    let mut apertures = [ProcessDeviceApertures::default(); 2];
    let ids = [p.gpu(); 2];
    let mask = [u32::MAX; 2];
    let (mut tiles, mut macros) = ([0u32; 2], [0u32; 2]);
    let (mut ctl_stack, mut metadata) = ([0u8; 32], [0u8; 2]);
    let (mut w, mut m, mut ap) = Default::default();
    let (mut cu, mut tc, mut ws, mut di) = Default::default();
    // The u32 counts at these offsets must not exceed the borrowed slices (two elements; SET_CU_MASK
    // counts bits, so 64) for the call to succeed.
    let (mut req, counts): (Request<'_>, &[(usize, u32)]) = match nr {
        0x0C => (Request::wait_events(&mut w, &mut events), &[(8, 2)]),
        0x12 => (
            Request::get_tile_config(&mut tc, &mut tiles, &mut macros),
            &[(16, 2), (20, 2)],
        ),
        0x14 => (Request::process_apertures(&mut ap, &mut apertures), &[]),
        0x18 => (
            Request::map_memory(AMDKFD_IOC_MAP_MEMORY_TO_GPU, &mut m, &ids),
            &[(16, 2)],
        ),
        0x19 => (
            Request::map_memory(AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU, &mut m, &ids),
            &[(16, 2)],
        ),
        0x1A => (Request::set_cu_mask(&mut cu, &mask), &[(4, 64)]),
        // No count: the one simulated XCC's 16-byte header fits the 32 bytes.
        0x1B => (Request::queue_wave_state(&mut ws, &mut ctl_stack), &[]),
        // The simulator has no DMA-buf: never succeeds, never writes the metadata.
        0x1C => (Request::dmabuf_info(&mut di, &mut metadata), &[]),
        _ => return None,
    };
    let n = req.arg().len();
    req.arg_mut().copy_from_slice(&junk[..n]);
    // One simulated GPU: GET_PROCESS_APERTURES_NEW never fills more than one element.
    let must_refuse = counts
        .iter()
        .any(|&(at, max)| u32::from_le_bytes(junk[at..at + 4].try_into().unwrap()) > max);
    Some((p.sim.ioctl(p.kfd, req), must_refuse))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]
    #[test]
    fn random_ioctls_never_panic(
        calls in proptest::collection::vec(
            (0u8..0x30, 0usize..120, any::<u32>(), proptest::collection::vec(any::<u8>(), 128)),
            1..24,
        ),
    ) {
        let p = Proc::one();
        let gpu = p.gpu().to_le_bytes();
        for (nr, size, dir_and_type, mut bytes) in calls {
            // Often aim at the real GPU so checks past the gpu_id lookup run too.
            if dir_and_type & 1 == 0 {
                for off in [8usize, 24, 32, 36] {
                    bytes[off..off + 4].copy_from_slice(&gpu);
                }
            }
            let dir = dir_and_type >> 30;
            let req = ioc(dir, b'K', nr, size);
            let len = if dir_and_type & 2 == 0 { size } else { size / 2 };
            let len = len.min(128);
            let junk = bytes.clone();
            let (r, must_refuse) = match Request::raw(req, &mut bytes[..len]) {
                Some(raw) => (p.sim.ioctl(p.kfd, raw), false),
                None => {
                    // Refused only for the commands whose argument carries user pointers:
                    // random pointer values never reach the sim.
                    prop_assert!(kfd_ioctl(nr).is_some_and(|e| e.user_pointers), "nr {nr:#x}");
                    match pointer_request(&p, nr, &junk) {
                        Some(r) => r,
                        None => continue,
                    }
                }
            };
            if let Err(e) = r {
                prop_assert!(KNOWN.contains(&e), "nr {nr:#x}: unexpected {e}");
            }
            prop_assert!(
                !(must_refuse && r.is_ok()),
                "nr {nr:#x} read or wrote past the borrowed array and succeeded"
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
