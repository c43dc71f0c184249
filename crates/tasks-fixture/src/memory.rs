//! Returning freed memory to the operating system after the reaper empties the store.
//!
//! glibc's allocator keeps memory freed by many threads in its arenas instead of handing it
//! back, so after a burst of tasks is reaped the process's resident memory stays at its peak
//! although the memory is free (the soak test measured 127 MiB resident against 31 MiB in use;
//! `docs/soak.md`). The fixture therefore watches the stored-task count and, when it has fallen
//! by [`TRIM_AFTER_DROP`] tasks or more since the last high point, asks glibc to release free
//! memory (`malloc_trim(0)`). This is the binary's allocator policy, not the library's: other
//! allocators, or other platforms, need nothing.
//!
//! Since the fixture allocates through mimalloc (see `main.rs`), which hands freed pages back
//! by itself, this covers what still goes through glibc: the C code linked in (SQLite's page
//! cache and statements).

use std::time::Duration;

use tasks_runtime::TaskRuntime;
use tokio::task::JoinHandle;

/// The least fall of the stored-task count from its high point that is worth a trim.
pub const TRIM_AFTER_DROP: usize = 1_000;

/// Whether the store has shrunk enough since its high point to trim: to a quarter of it, and by
/// at least [`TRIM_AFTER_DROP`] tasks.
pub fn should_trim(high: usize, stored: usize) -> bool {
    high.saturating_sub(stored) >= TRIM_AFTER_DROP && stored <= high / 4
}

/// Checks the store every `interval` (the reaper's) and trims when [`should_trim`]. Returns
/// `None` where trimming does nothing (not Linux with glibc).
pub fn spawn_trimmer(runtime: TaskRuntime, interval: Duration) -> Option<JoinHandle<()>> {
    if !cfg!(all(target_os = "linux", target_env = "gnu")) {
        return None;
    }
    Some(tokio::spawn(async move {
        let mut ticks = tokio::time::interval(interval);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut high = 0;
        loop {
            ticks.tick().await;
            let Ok(stored) = runtime.stored_tasks().await else {
                continue;
            };
            high = high.max(stored);
            if should_trim(high, stored) {
                // Blocking (it walks the arenas), so off the async workers.
                let _ = tokio::task::spawn_blocking(trim).await;
                tracing::debug!(
                    from = high,
                    to = stored,
                    "released free memory after reaping"
                );
                high = stored;
            }
        }
    }))
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)] // the fixture's one unsafe call, explained below
fn trim() {
    // SAFETY: malloc_trim only releases free pages of the allocator's own arenas; it takes no
    // pointer and is safe to call from any thread at any time.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn trim() {}

#[cfg(test)]
mod tests {
    use super::should_trim;

    #[test]
    fn trims_only_after_the_store_shrank_to_a_quarter() {
        assert!(should_trim(40_000, 0));
        assert!(should_trim(40_000, 10_000));
        assert!(
            !should_trim(40_000, 10_001),
            "a steady load dips, it does not empty"
        );
        assert!(!should_trim(40_000, 32_000));
        assert!(!should_trim(999, 0), "too few tasks to matter");
        assert!(should_trim(1_000, 0));
        assert!(!should_trim(0, 0));
    }
}
