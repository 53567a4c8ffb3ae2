//! Host threads kept across dispatches (sim/README.md "Threads"): starting a thread costs tens of
//! microseconds, as much as a small dispatch's whole share of work on 16 threads, so the
//! threads that help a dispatch are started once and then wait for the next one.
//!
//! [`Pool::broadcast`] offers a job to up to `n` waiting threads and runs it on the calling
//! thread too; it returns once every thread that took the job has left it. A job is written
//! so that any number of its runners (the caller alone included) finish it (the dispatch's
//! chunks are claimed from a shared counter), so a helper that comes late, or never because
//! all are busy with another dispatch, costs nothing but its share. A helper that panics is
//! caught: its message comes back as an error value, and the pool's thread lives on.
//! Dropping a pool stops and joins its threads; the process-wide one ([`global`]) starts on
//! the first dispatch that asks for more than one thread and grows to the most asked for.

use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, PoisonError};
use std::thread::JoinHandle;

/// A job as the helpers see it: the caller's closure, its lifetime erased ([`Pool::broadcast`]
/// keeps it alive while any helper runs it).
type Job = &'static (dyn Fn() + Sync);

/// One offered job.
struct Offer {
    /// Tells offers apart.
    id: u64,
    job: Job,
    /// Helpers that may still take it.
    wanted: usize,
    /// Helpers running it now.
    active: usize,
    /// The first panic message of a helper that ran it.
    panic: Option<String>,
}

#[derive(Default)]
struct State {
    offers: Vec<Offer>,
    next_id: u64,
    /// Threads started (alive until `stop`).
    started: usize,
    /// Threads waiting for an offer.
    idle: usize,
    stop: bool,
}

#[derive(Default)]
struct Inner {
    state: Mutex<State>,
    /// Helpers wait here for an offer.
    work: Condvar,
    /// Callers wait here for their helpers to leave.
    done: Condvar,
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A poisoned lock only means a thread panicked between two consistent updates.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A helper thread: takes offers until the pool stops.
    fn serve(&self) {
        let mut st = self.lock();
        loop {
            if st.stop {
                return;
            }
            let Some(o) = st.offers.iter_mut().find(|o| o.wanted > 0) else {
                st.idle += 1;
                st = self.work.wait(st).unwrap_or_else(PoisonError::into_inner);
                st.idle -= 1;
                continue;
            };
            o.wanted -= 1;
            o.active += 1;
            let (id, job) = (o.id, o.job);
            drop(st);
            let r = std::panic::catch_unwind(core::panic::AssertUnwindSafe(job));
            st = self.lock();
            // The offer stays until its `active` count is back to 0.
            if let Some(o) = st.offers.iter_mut().find(|o| o.id == id) {
                if let Err(p) = r {
                    o.panic.get_or_insert_with(|| panic_message(p.as_ref()));
                }
                o.active -= 1;
                if o.active == 0 {
                    self.done.notify_all();
                }
            }
        }
    }
}

/// What a panic said.
fn panic_message(p: &(dyn core::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_owned())
}

/// Threads that help run jobs, kept between them (see the module's text).
pub(crate) struct Pool {
    inner: Arc<Inner>,
    threads: Mutex<Vec<JoinHandle<()>>>,
}

impl Default for Pool {
    fn default() -> Self {
        Self::new()
    }
}

impl Pool {
    /// A pool with no threads yet.
    pub(crate) fn new() -> Self {
        Self {
            inner: Arc::default(),
            threads: Mutex::new(Vec::new()),
        }
    }

    /// Threads started so far.
    #[cfg(test)]
    fn threads(&self) -> usize {
        self.inner.lock().started
    }

    /// Starts threads up to `n` (fewer where the OS refuses one: the jobs run without it).
    fn grow(&self, n: usize) {
        let mut handles = self.threads.lock().unwrap_or_else(PoisonError::into_inner);
        while handles.len() < n {
            let inner = Arc::clone(&self.inner);
            let spawned = std::thread::Builder::new()
                .name(format!("hcq-sim-{}", handles.len() + 1))
                .spawn(move || inner.serve());
            match spawned {
                Ok(h) => {
                    handles.push(h);
                    self.inner.lock().started += 1;
                }
                Err(e) => {
                    log::warn!("hcq-sim: starting an interpreter thread: {e}; going on with fewer");
                    return;
                }
            }
        }
    }

    /// Runs `job` on this thread and on up to `helpers` of the pool's threads at once (those
    /// free to take it), and returns once every one that took it has returned. The job must be
    /// complete when any one runner returns from it, whatever the others did (its runners
    /// share the work through its own state).
    ///
    /// # Errors
    /// The message of a helper's panic (the job's state is then whatever the panic left).
    pub(crate) fn broadcast(&self, helpers: usize, job: &(dyn Fn() + Sync)) -> Result<(), String> {
        if helpers == 0 {
            job();
            return Ok(());
        }
        self.grow(helpers);
        // SAFETY: the erased reference is read only by helpers counted in the offer's `active`
        // after taking it from `offers`; `Retract` (below, run on return and on unwinding)
        // stops new takers and waits until `active` is 0 before this function ends, so no
        // helper uses `job` after the borrow it came with ends.
        let erased: Job =
            unsafe { core::mem::transmute::<&(dyn Fn() + Sync), &'static (dyn Fn() + Sync)>(job) };
        let id = {
            let mut st = self.inner.lock();
            let id = st.next_id;
            st.next_id += 1;
            st.offers.push(Offer {
                id,
                job: erased,
                wanted: helpers,
                active: 0,
                panic: None,
            });
            if helpers >= st.idle {
                self.inner.work.notify_all();
            } else {
                for _ in 0..helpers {
                    self.inner.work.notify_one();
                }
            }
            id
        };
        let mut retract = Retract {
            inner: &self.inner,
            id,
            panic: None,
        };
        job();
        retract.wait();
        match retract.panic.take() {
            Some(m) => Err(m),
            None => Ok(()),
        }
    }
}

/// Withdraws an offer and waits for its helpers to leave it (on return and on unwinding).
struct Retract<'a> {
    inner: &'a Inner,
    id: u64,
    panic: Option<String>,
}

impl Retract<'_> {
    fn wait(&mut self) {
        let mut st = self.inner.lock();
        loop {
            let Some(k) = st.offers.iter().position(|o| o.id == self.id) else {
                return;
            };
            let o = &mut st.offers[k];
            o.wanted = 0;
            if o.active == 0 {
                let o = st.offers.swap_remove(k);
                self.panic = o.panic;
                return;
            }
            st = self
                .inner
                .done
                .wait(st)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }
}

impl Drop for Retract<'_> {
    fn drop(&mut self) {
        self.wait();
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.inner.lock().stop = true;
        self.inner.work.notify_all();
        let handles =
            core::mem::take(&mut *self.threads.lock().unwrap_or_else(PoisonError::into_inner));
        for h in handles {
            // A helper catches its jobs' panics: joining cannot fail but through a bug here.
            let _ = h.join();
        }
    }
}

/// The process-wide pool the dispatches use.
pub(crate) fn global() -> &'static Pool {
    static POOL: OnceLock<Pool> = OnceLock::new();
    POOL.get_or_init(Pool::new)
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::sync::atomic::{AtomicUsize, Ordering};
    use std::collections::HashSet;

    #[test]
    fn jobs_reuse_the_threads_and_drop_joins_them() {
        let pool = Pool::new();
        let ids = Mutex::new(HashSet::new());
        let runs = AtomicUsize::new(0);
        for _ in 0..200 {
            pool.broadcast(3, &|| {
                runs.fetch_add(1, Ordering::Relaxed);
                ids.lock().unwrap().insert(std::thread::current().id());
            })
            .unwrap();
        }
        // Each broadcast ran the job at least on the caller; no more than 4 threads ever ran it.
        assert!(runs.load(Ordering::Relaxed) >= 200);
        assert!(ids.lock().unwrap().len() <= 4);
        assert_eq!(pool.threads(), 3);
        let inner = Arc::clone(&pool.inner);
        drop(pool);
        // Joined: only this test holds the shared state now.
        assert_eq!(Arc::strong_count(&inner), 1);
    }

    #[test]
    fn a_helpers_panic_is_an_error_and_the_pool_goes_on() {
        let pool = Pool::new();
        let caller = std::thread::current().id();
        let mut failed = None;
        // The helpers may all come after the caller finished: try until one took a job.
        for _ in 0..1000 {
            let r = pool.broadcast(2, &|| {
                if std::thread::current().id() != caller {
                    panic!("helper says no");
                }
                std::thread::sleep(core::time::Duration::from_millis(1));
            });
            if let Err(m) = r {
                failed = Some(m);
                break;
            }
        }
        assert_eq!(failed.as_deref(), Some("helper says no"));
        let n = AtomicUsize::new(0);
        pool.broadcast(2, &|| {
            n.fetch_add(1, Ordering::Relaxed);
        })
        .unwrap();
        assert!(n.load(Ordering::Relaxed) >= 1);
    }
}
