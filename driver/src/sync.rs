//! Locking without poisoning: the one helper every layer of the driver shares.

use std::sync::{Mutex, MutexGuard, PoisonError};

/// Locks `m`, going on if a thread panicked while holding it.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Poisoning only means another thread panicked while holding the lock; the data behind
    // these locks (tables, counters) stays consistent between statements, so keep going.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}
