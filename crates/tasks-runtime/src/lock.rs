//! Taking this crate's `std` locks. A lock is poisoned when a thread panicked while holding
//! it; every lock here guards a map or a small state whose every change is one call that
//! leaves it whole (an insert, a remove, a field set), so the data behind a poisoned lock is
//! still good. It is taken anyway, the poisoning is logged (a bug: no tool code runs under
//! these locks) and cleared, so that one panic neither loses a worker's input request or
//! answer nor repeats the warning on every later use.

use std::sync::{Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// Locks `mutex`, recovering it from poisoning.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| {
        tracing::error!("a lock was poisoned by a panic while it was held; recovering it");
        mutex.clear_poison();
        poisoned.into_inner()
    })
}

/// Read-locks `lock`, recovering it from poisoning.
pub(crate) fn read<T>(lock: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    lock.read().unwrap_or_else(|poisoned| {
        tracing::error!("a lock was poisoned by a panic while it was held; recovering it");
        lock.clear_poison();
        poisoned.into_inner()
    })
}

/// Write-locks `lock`, recovering it from poisoning.
pub(crate) fn write<T>(lock: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    lock.write().unwrap_or_else(|poisoned| {
        tracing::error!("a lock was poisoned by a panic while it was held; recovering it");
        lock.clear_poison();
        poisoned.into_inner()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_poisoned_lock_is_taken_with_its_data_and_cleared() {
        let mutex = std::sync::Arc::new(Mutex::new(vec![1]));
        let held = mutex.clone();
        let _ = std::thread::spawn(move || {
            let mut guard = held.lock().unwrap();
            guard.push(2);
            panic!("poison it");
        })
        .join();
        assert!(mutex.is_poisoned());
        assert_eq!(*lock(&mutex), vec![1, 2]);
        assert!(
            !mutex.is_poisoned(),
            "cleared: the next use does not warn again"
        );

        let rw = std::sync::Arc::new(RwLock::new(7));
        let held = rw.clone();
        let _ = std::thread::spawn(move || {
            let _guard = held.write().unwrap();
            panic!("poison it");
        })
        .join();
        assert_eq!(*read(&rw), 7);
        *write(&rw) = 8;
        assert_eq!(*read(&rw), 8);
        assert!(!rw.is_poisoned());
    }
}
