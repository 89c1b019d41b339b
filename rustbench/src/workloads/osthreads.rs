//! The OS-thread runner of the workloads' thread variants
//! (`threads_vs_tasks` and `idle_tasks`): one `std::thread` per worker,
//! joined in spawn order, with a thread that cannot be created or set up
//! reported as an ordinary error after the running threads are joined.

use std::os::unix::thread::JoinHandleExt;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::spec::Collected;
use crate::cli::error::BenchError;
use crate::cli::timer::Timer;

/// Run `work(i)` for i in `0..n`, each on its own `std::thread`, and join
/// them in spawn order. Starts the timer right before the first spawn, marks
/// the spawn phase and stops the timer after the last join.
///
/// A thread that cannot be created is an error carrying the OS message, and
/// so is a thread that the OS let `Builder::spawn` create but that std could
/// not finish setting up (see [`setup_guard`]). Either way the threads that
/// are running are joined first, then the error is returned.
pub fn run_threads<F>(n: usize, timer: &mut Timer, work: F) -> Result<Collected, BenchError>
where
    F: Fn(u64) -> Result<u64, BenchError> + Send + Sync + 'static,
{
    run_threads_then(n, timer, work, || ())
}

/// `run_threads`, calling `on_spawned` right after the last spawn (also
/// after a failed one, before any thread is joined).
pub fn run_threads_then<F, S>(
    n: usize,
    timer: &mut Timer,
    work: F,
    on_spawned: S,
) -> Result<Collected, BenchError>
where
    F: Fn(u64) -> Result<u64, BenchError> + Send + Sync + 'static,
    S: FnOnce(),
{
    let guard = setup_guard::Spawning::enter();
    let shared = Arc::new(Shared {
        work,
        started: AtomicUsize::new(0),
    });
    let mut handles = Vec::with_capacity(n);
    let mut spawn_err: Option<String> = None;
    timer.start();
    for i in 0..n {
        if guard.any_failed() {
            break;
        }
        let shared = Arc::clone(&shared);
        let index = i as u64;
        let spawned = std::thread::Builder::new().spawn(move || {
            shared.started.fetch_add(1, Ordering::SeqCst);
            (shared.work)(index)
        });
        match spawned {
            Ok(handle) => handles.push(handle),
            Err(err) => {
                spawn_err = Some(format!("cannot create thread {} of {n}: {err}", i + 1));
                break;
            }
        }
    }
    on_spawned();
    timer.mark_spawned();

    // Every created thread either reaches its closure or is held by the
    // setup guard; wait until each one is accounted for, so that no join
    // waits for a thread that will never run.
    let stuck = guard.wait_accounted(&shared.started, &handles);
    if spawn_err.is_none() && stuck.is_empty() {
        let collected = join_in_order(handles)?;
        timer.stop();
        return Ok(collected);
    }

    // Near the limit that failed, even a large allocation could fail (and
    // abort): nothing below allocates more than a few bytes before the
    // running threads are joined.
    let created = handles.len();
    let joined = created - stuck.len();
    let worker_result = join_in_order(handles.into_iter().filter(|handle| {
        // A held thread's handle is dropped, which detaches it.
        !stuck
            .iter()
            .any(|(thread, _)| *thread == handle.as_pthread_t())
    }));
    let mut parts: Vec<String> = Vec::with_capacity(4);
    if let Some(spawn_err) = spawn_err {
        parts.push(spawn_err);
    }
    if let Some((_, why)) = stuck.first() {
        parts.push(format!(
            "{} of the {created} threads created (of {n}) could not be set up: {why}",
            stuck.len()
        ));
    }
    parts.push(format!(
        "{joined} running threads were joined before stopping"
    ));
    if let Err(worker_err) = worker_result {
        parts.push(format!("a running thread also failed: {worker_err}"));
    }
    Err(BenchError::runtime(parts.join("; ")))
}

/// What every thread of one `run_threads` call shares.
struct Shared<F> {
    work: F,
    /// Threads that reached their closure.
    started: AtomicUsize,
}

/// Join every handle (all of them, even after a failure) and report the
/// first failure, if any.
fn join_in_order(
    handles: impl IntoIterator<Item = std::thread::JoinHandle<Result<u64, BenchError>>>,
) -> Result<Collected, BenchError> {
    let mut collected = Collected::default();
    let mut first_err: Option<BenchError> = None;
    for handle in handles {
        let result = match handle.join() {
            Ok(result) => result,
            Err(_) => Err(BenchError::runtime("a worker thread panicked")),
        };
        match result {
            Ok(value) => collected.add(value),
            Err(err) => {
                if first_err.is_none() {
                    first_err = Some(err);
                }
            }
        }
    }
    match first_err {
        Some(err) => Err(err),
        None => Ok(collected),
    }
}

/// Turns a thread that std cannot finish setting up into an ordinary error.
///
/// std gives every new thread its own signal stack (a memory mapping plus a
/// guard page), and it does so inside the new thread, after
/// `Builder::spawn` has already returned `Ok`, before any user code runs. If
/// the OS refuses that mapping (for example at `vm.max_map_count`, which a
/// few tens of thousands of threads reach) std panics there, where the panic
/// cannot unwind. While a `run_threads` call is in progress, a panic hook
/// recognises exactly that panic (raised in std's `stack_overflow.rs`, on a
/// thread that is not a spawner), records the OS message and parks the
/// half-made thread for good; the spawner sees it, stops and reports it.
/// Every other panic goes to the previously installed hook unchanged.
///
/// The parked thread keeps std's panic-hook lock read-locked, so nothing may
/// replace the panic hook afterwards; this program never does.
pub mod setup_guard {
    use std::cell::Cell;
    use std::os::unix::thread::JoinHandleExt;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Mutex, Once};
    use std::thread::JoinHandle;
    use std::time::Duration;

    /// Threads held by the hook: (pthread id, panic message).
    static HELD: Mutex<Vec<(libc::pthread_t, String)>> = Mutex::new(Vec::new());
    /// `HELD.len()`, readable without the lock.
    static HELD_COUNT: AtomicUsize = AtomicUsize::new(0);
    /// `run_threads` calls in progress.
    static SPAWNERS: AtomicUsize = AtomicUsize::new(0);
    static INSTALL: Once = Once::new();

    thread_local! {
        static IS_SPAWNER: Cell<u32> = const { Cell::new(0) };
    }

    /// Whether a panic raised at `file` is std failing to set up a thread's
    /// signal stack.
    pub fn is_thread_setup_panic(file: &str) -> bool {
        file.ends_with("stack_overflow.rs") && file.contains("library/std/")
    }

    fn install() {
        INSTALL.call_once(|| {
            let previous = std::panic::take_hook();
            std::panic::set_hook(Box::new(move |info| {
                let setup_failure = SPAWNERS.load(Ordering::SeqCst) > 0
                    && IS_SPAWNER.with(Cell::get) == 0
                    && info
                        .location()
                        .is_some_and(|loc| is_thread_setup_panic(loc.file()));
                if !setup_failure {
                    previous(info);
                    return;
                }
                let why = info
                    .payload_as_str()
                    .unwrap_or("std could not set up the thread")
                    .to_string();
                // SAFETY: pthread_self has no preconditions.
                let me = unsafe { libc::pthread_self() };
                // A poisoned lock still holds a valid list.
                let mut held = HELD.lock().unwrap_or_else(|poison| poison.into_inner());
                held.push((me, why));
                HELD_COUNT.store(held.len(), Ordering::SeqCst);
                drop(held);
                // This thread never ran user code and owns nothing of ours;
                // returning would abort the process, so it stays here.
                loop {
                    std::thread::sleep(Duration::from_secs(3600));
                }
            }));
        });
    }

    /// Marks a `run_threads` call in progress on the current thread.
    pub struct Spawning {
        baseline: usize,
    }

    impl Spawning {
        pub fn enter() -> Self {
            install();
            IS_SPAWNER.with(|c| c.set(c.get() + 1));
            SPAWNERS.fetch_add(1, Ordering::SeqCst);
            Spawning {
                baseline: HELD_COUNT.load(Ordering::SeqCst),
            }
        }

        /// Whether any thread has been held since this call began.
        pub fn any_failed(&self) -> bool {
            HELD_COUNT.load(Ordering::Relaxed) != self.baseline
        }

        /// The held threads among `handles` with their messages. Allocates
        /// only the (short) result: it runs when memory mappings ran out.
        fn held_among<T>(&self, handles: &[JoinHandle<T>]) -> Vec<(libc::pthread_t, String)> {
            if !self.any_failed() {
                return Vec::new();
            }
            let held = HELD.lock().unwrap_or_else(|poison| poison.into_inner());
            held.iter()
                .filter(|(thread, _)| handles.iter().any(|h| h.as_pthread_t() == *thread))
                .cloned()
                .collect()
        }

        /// Wait until every thread in `handles` has either reached its
        /// closure (counted in `started`) or been held; return the held ones.
        pub fn wait_accounted<T>(
            &self,
            started: &AtomicUsize,
            handles: &[JoinHandle<T>],
        ) -> Vec<(libc::pthread_t, String)> {
            loop {
                let held = self.held_among(handles);
                if started.load(Ordering::SeqCst) + held.len() >= handles.len() {
                    return held;
                }
                std::thread::sleep(Duration::from_micros(50));
            }
        }
    }

    impl Drop for Spawning {
        fn drop(&mut self) {
            SPAWNERS.fetch_sub(1, Ordering::SeqCst);
            IS_SPAWNER.with(|c| c.set(c.get() - 1));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::timer::mono_ns;

    #[test]
    fn only_std_signal_stack_panics_count_as_setup_failures() {
        assert!(setup_guard::is_thread_setup_panic(
            "/rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/std/src/sys/pal/unix/stack_overflow.rs"
        ));
        assert!(!setup_guard::is_thread_setup_panic(file!()));
        assert!(!setup_guard::is_thread_setup_panic(
            "/rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/std/src/thread/mod.rs"
        ));
    }

    #[test]
    fn worker_errors_are_reported_after_joining_everything() {
        let mut timer = Timer::new(mono_ns());
        let result = run_threads(8, &mut timer, |i| {
            if i == 3 {
                Err(BenchError::runtime("worker 3 failed"))
            } else {
                Ok(i)
            }
        });
        match result {
            Err(BenchError::Runtime(msg)) => assert_eq!(msg, "worker 3 failed"),
            other => panic!("expected the worker's error, got {other:?}"),
        }
        let mut timer = Timer::new(mono_ns());
        let collected = run_threads(8, &mut timer, Ok).unwrap();
        assert_eq!(collected, Collected { sum: 28, ok: 8 });
        assert!(timer.finish().is_ok());
    }
}
