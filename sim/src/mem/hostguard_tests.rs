//! The host guard's tables: what does not fit is counted, never silent.

use super::*;

/// An anonymous read-write mapping of `len` bytes (the test's stand-in for a buffer the
/// simulator mapped for the process).
fn anon(len: usize) -> u64 {
    // SAFETY: a fresh private anonymous mapping; nothing else refers to it.
    let p = unsafe {
        libc::mmap(
            core::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    assert_ne!(p, libc::MAP_FAILED);
    // CAST: the address as a number.
    p.expose_provenance() as u64
}

fn unmap(addr: u64, len: usize) {
    // SAFETY: a mapping `anon` made, no longer registered with the guard.
    unsafe { libc::munmap(core::ptr::with_exposed_provenance_mut(addr as usize), len) };
}

#[test]
fn records_that_find_no_free_slot_are_counted() {
    const PAGES: usize = 100;
    let g = HostGuard::new(true);
    assert!(g.on(), "the guard installs on Linux x86-64");
    let (db, data) = (anon(4096), anon(PAGES * 4096));
    g.add_doorbell(db, 4096);
    assert!(
        g.add_data(data, (PAGES * 4096) as u64, 0x1000_0000, None)
            .is_some()
    );
    // A doorbell write guards the data mapping; the first access to each page after it is a
    // record: more pages than the process has slots.
    // SAFETY: the doorbell and data mappings above, alive; the handler resolves the faults.
    unsafe {
        core::ptr::write_volatile(
            core::ptr::with_exposed_provenance_mut::<u64>(db as usize),
            1,
        );
        for i in 0..PAGES {
            core::ptr::read_volatile(core::ptr::with_exposed_provenance::<u8>(
                data as usize + i * 4096,
            ));
        }
    }
    let got = g.collect();
    assert!(!got.is_empty() && got.len() <= SLOTS, "{}", got.len());
    assert!(got.iter().all(|f| !f.write && f.buf == 0x1000_0000));
    // Every access was recorded or counted as dropped (no other test of this binary turns
    // the guard on, so the slots were free).
    assert_eq!(g.dropped(), (PAGES - got.len()) as u64);
    assert!(g.dropped() > 0);
    drop(g);
    unmap(db, 4096);
    unmap(data, PAGES * 4096);
}
