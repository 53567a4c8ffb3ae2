//! The SIGSEGV handler: resolves faults on guarded pages and chains every other fault to the
//! handler installed before ours.

#[allow(clippy::wildcard_imports)]
use super::*;

/// The handler's work: whether the fault at `addr` was ours (and is resolved).
pub(super) fn resolve(addr: u64, write: bool) -> bool {
    let held = lock();
    RESOLVED.fetch_add(1, Ordering::Relaxed);
    let Some((ri, r)) = live_regions().iter().enumerate().find(|(_, r)| {
        let k = r.kind.load(Ordering::Relaxed);
        let s = r.start.load(Ordering::Relaxed);
        k != FREE && s <= addr && addr - s < r.len.load(Ordering::Relaxed)
    }) else {
        return false;
    };
    let owner = r.owner.load(Ordering::Relaxed);
    match r.kind.load(Ordering::Relaxed) {
        DOORBELL => {
            // A doorbell write: guard every data mapping, then let it (and later ones) through.
            guard_data(&held, owner);
            protect_all(&held, owner, DOORBELL, RW)
        }
        DATA => {
            let page = addr & !(PAGE - 1);
            let start = r.start.load(Ordering::Relaxed);
            // CAST: inside the region, whose length fits usize.
            let i = ((page - start) / PAGE) as usize;
            let (prot, race) = if r.sim_base.load(Ordering::Relaxed) == 0 {
                (RW, r.guarded.load(Ordering::Relaxed))
            } else {
                let Some(st) = page_state(&held, r, i) else {
                    return false;
                };
                let s0 = st.load(Ordering::Relaxed);
                let race = race_guarded(r, s0);
                // Opened for this race epoch; a first write since the flush keeps what the
                // GPU sees of the page first.
                let mut s1 =
                    (s0 & (DIRTY | LOST | ZEROED)) | (r.epoch.load(Ordering::Relaxed) & EPOCH);
                if write && s0 & DIRTY == 0 {
                    s1 |= DIRTY;
                    if page_is_zero(&held, r, i) {
                        s1 |= ZEROED;
                    } else if !capture(&held, ri, r, i) {
                        s1 |= LOST;
                    }
                    r.dirty_any.store(true, Ordering::Relaxed);
                    if !r.images.swap(true, Ordering::Release) {
                        WITH_IMAGES.fetch_add(1, Ordering::Release);
                    }
                }
                st.store(s1, Ordering::Relaxed);
                (page_prot(r, s1), race)
            };
            // SAFETY: the page lies in a registered data region.
            if !unsafe { protect(page, PAGE, prot) } {
                return false;
            }
            r.opened.store(true, Ordering::Relaxed);
            let n = r.open_n.fetch_add(1, Ordering::Relaxed);
            if let Some(a) = r.open_at.get(n) {
                a.store(page, Ordering::Relaxed);
            }
            if !race {
                // Only the HDP's first-write fault: no GPU work was guarded against it.
                return true;
            }
            match SLOT_TABLE.iter().find(|s| {
                s.full
                    .compare_exchange(0, 2, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
            }) {
                Some(s) => {
                    s.owner.store(owner, Ordering::Relaxed);
                    s.addr.store(addr, Ordering::Relaxed);
                    s.write.store(u8::from(write), Ordering::Relaxed);
                    for (c, v) in CELL_TABLE.iter().zip(&s.vals) {
                        let a = c.addr.load(Ordering::Relaxed);
                        let val = if c.owner.load(Ordering::Relaxed) == owner && a != 0 {
                            // SAFETY: a registered cell: an aligned u64 of the simulator's own
                            // doorbell mapping, alive while registered (the owner unregisters
                            // before it drops the memory); read atomically.
                            unsafe {
                                (*core::ptr::with_exposed_provenance::<AtomicU64>(a))
                                    .load(Ordering::Acquire)
                            }
                        } else {
                            0
                        };
                        v.store(val, Ordering::Relaxed);
                    }
                    s.full.store(1, Ordering::Release);
                }
                None => {
                    DROPPED.fetch_add(1, Ordering::Relaxed);
                    r.dropped.fetch_add(1, Ordering::Relaxed);
                }
            }
            // The next doorbell write guards the page again.
            protect_all(&held, owner, DOORBELL, libc::PROT_READ);
            true
        }
        _ => false,
    }
}

/// Hands a fault that is not ours to the handler installed before ours, or to the default
/// action (reinstalled; the faulting access then repeats and takes it).
///
/// # Safety
/// Called from the SIGSEGV handler with the kernel's arguments.
pub(super) unsafe fn chain(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut c_void) {
    let prev = PREVIOUS.load(Ordering::Acquire);
    // SAFETY: `PREVIOUS` is null or a leaked `sigaction` written once before our handler was
    // installed, never freed.
    let prev = unsafe { prev.as_ref() };
    match prev {
        Some(p) if p.sa_sigaction != libc::SIG_DFL && p.sa_sigaction != libc::SIG_IGN => {
            if p.sa_flags & libc::SA_SIGINFO != 0 {
                // SAFETY: with SA_SIGINFO, `sa_sigaction` is a three-argument handler that
                // its installer wrote for exactly this call.
                let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut c_void) =
                    unsafe { core::mem::transmute(p.sa_sigaction) };
                f(sig, info, ctx);
            } else {
                // SAFETY: without SA_SIGINFO, it is a one-argument handler.
                let f: extern "C" fn(libc::c_int) = unsafe { core::mem::transmute(p.sa_sigaction) };
                f(sig);
            }
        }
        _ => {
            // SAFETY: a zeroed sigaction with SIG_DFL is valid; sigaction is async-signal-safe.
            unsafe {
                let mut dfl: libc::sigaction = core::mem::zeroed();
                dfl.sa_sigaction = libc::SIG_DFL;
                libc::sigaction(sig, &dfl, core::ptr::null_mut());
            }
        }
    }
}

/// The SIGSEGV handler.
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
extern "C" fn on_segv(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut c_void) {
    /// Linux's `SEGV_ACCERR`: a mapped page without the permission.
    const SEGV_ACCERR: libc::c_int = 2;
    // SAFETY: the kernel passes a valid siginfo (SA_SIGINFO); for SIGSEGV `si_addr` is set.
    let (code, addr) = unsafe { ((*info).si_code, (*info).si_addr()) };
    // x86-64's page-fault error code: bit 1 set for a write.
    // SAFETY: for SA_SIGINFO handlers `ctx` is the interrupted thread's ucontext_t.
    let err =
        unsafe { (*ctx.cast::<libc::ucontext_t>()).uc_mcontext.gregs[libc::REG_ERR as usize] };
    // CAST: the address as a number.
    if code == SEGV_ACCERR && resolve(addr.expose_provenance() as u64, err & 2 != 0) {
        return;
    }
    // SAFETY: the kernel's arguments, from the handler.
    unsafe { chain(sig, info, ctx) };
}

/// Elsewhere: no page-fault error code to tell reads from writes; the guard stays off.
#[cfg(not(all(target_os = "linux", target_arch = "x86_64")))]
pub(super) fn install() -> bool {
    false
}

/// Installs the handler once per process; whether it is installed.
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
pub(super) fn install() -> bool {
    *INSTALLED.get_or_init(|| {
        // SAFETY: a zeroed sigaction is valid; we fill the handler, SA_SIGINFO (three
        // arguments) and SA_ONSTACK (it runs on the thread's alternate stack, as Rust's
        // stack-overflow handler needs), and keep the previous action for chaining. The
        // previous action is stored (leaked) before ours can run: a fault in between finds
        // PREVIOUS null and takes the default action, as it would have.
        unsafe {
            let mut act: libc::sigaction = core::mem::zeroed();
            act.sa_sigaction = on_segv as *const () as usize;
            act.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
            libc::sigemptyset(&mut act.sa_mask);
            let old = Box::into_raw(Box::new(core::mem::zeroed::<libc::sigaction>()));
            if libc::sigaction(libc::SIGSEGV, core::ptr::null(), old) != 0 {
                drop(Box::from_raw(old));
                return false;
            }
            PREVIOUS.store(old, Ordering::Release);
            libc::sigaction(libc::SIGSEGV, &act, core::ptr::null_mut()) == 0
        }
    })
}
