//! `idle_tasks`: the memory of N concurrent tasks. N tasks each wait and
//! finish. Checksum: tasks completed (N).
//!
//! `wait=sleep` (the posts' setup): each task sleeps `duration_ms`.
//! `wait=release`: each task waits until the main task releases all of
//! them, which it does right after the last spawn; `duration_ms` is not
//! used. A task that has not been polled yet when the release happens still
//! sees it (see [`Release`]), so all N are alive at once by construction.
//!
//! After the timer stops the process stays alive for `linger_ms` (the tokio
//! runtime too: the linger is a sleep inside the same `block_on`), so that a
//! memory timeline shows what the runtime gives back, and only then is the
//! result line printed. Extra keys: `finished_ns` (= `elapsed_ns`) and
//! `linger_end_ns`, both offsets from the timer start (`t0_mono_ns`), and
//! `alive_at_spawn`: N minus the tasks that had finished when the last one
//! had been spawned (a counter every task increments as it finishes, read
//! right after the last spawn).
//!
//! Variants: `spawn` (`tokio::spawn` on the multi-thread runtime, handles
//! awaited in spawn order), `current-thread` (the same on a current-thread
//! runtime), `join-all` (the posts' unspawned futures: an iterator of N
//! wait futures handed straight to `futures::future::join_all` and awaited
//! by the main task on the multi-thread runtime, as `#[tokio::main]` does;
//! nothing is spawned and nothing runs before the `join_all` is polled),
//! `threads` (one `std::thread` per task).

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};
use std::task::Poll;
use std::time::Duration;

use tokio::sync::Notify;

use super::osthreads::run_threads_then;
use super::spec::{Check, Ctx, Outcome, ParamSpec, WorkloadSpec};
use crate::cli::error::BenchError;
use crate::cli::result::Flavour;
use crate::cli::timer::{Timer, mono_ns};

pub const SPEC: WorkloadSpec = WorkloadSpec {
    name: "idle_tasks",
    variants: &["spawn", "current-thread", "join-all", "threads"],
    default_variant: "spawn",
    params: &[
        ParamSpec {
            key: "wait",
            default: "sleep",
            check: Check::OneOf(&["sleep", "release"]),
        },
        ParamSpec {
            key: "duration_ms",
            default: "1000",
            check: Check::ANY_UINT,
        },
        ParamSpec {
            key: "linger_ms",
            default: "0",
            check: Check::ANY_UINT,
        },
    ],
    needs_data_dir: false,
    needs_dsn: false,
    run,
};

/// What every task waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wait {
    /// Sleep this long.
    Sleep(Duration),
    /// Wait for the release.
    Release,
}

/// The release the tasks of `wait=release` wait for: a flag and a
/// `tokio::sync::Notify`. A task creates its `Notified` future before it
/// reads the flag; `notify_waiters` wakes every `Notified` created before it
/// (polled or not), and a task created after the release sees the flag set.
/// No wake-up is lost. Waiting costs each task, like Go's receive from a
/// closed channel, one entry in a wait queue (the `Notified` future lives
/// inside the task, no allocation) and one lock of that queue when it is
/// first polled; the release takes the lock and wakes the tasks in batches.
struct Release {
    released: AtomicBool,
    notify: Notify,
}

impl Release {
    fn new() -> Self {
        Release {
            released: AtomicBool::new(false),
            notify: Notify::new(),
        }
    }

    async fn wait(&self) {
        let notified = self.notify.notified();
        if self.released.load(Ordering::Acquire) {
            return;
        }
        notified.await;
    }

    fn release(&self) {
        self.released.store(true, Ordering::Release);
        self.notify.notify_waiters();
    }
}

/// The release of the `threads` variant: a flag under a mutex and a
/// condition variable. Waiting costs each thread one lock of the mutex and
/// one futex wait; the release takes the lock once and wakes them all.
struct ThreadRelease {
    released: Mutex<bool>,
    cond: Condvar,
}

impl ThreadRelease {
    fn wait(&self) -> Result<(), BenchError> {
        let poisoned = |_| BenchError::runtime("the release mutex was poisoned");
        let mut released = self.released.lock().map_err(poisoned)?;
        while !*released {
            released = self.cond.wait(released).map_err(poisoned)?;
        }
        Ok(())
    }

    fn release(&self) -> Result<(), BenchError> {
        *self
            .released
            .lock()
            .map_err(|_| BenchError::runtime("the release mutex was poisoned"))? = true;
        self.cond.notify_all();
        Ok(())
    }
}

/// Nanoseconds from the timer start to now (the timer must have stopped).
fn since_start(timer: &Timer) -> Result<u64, BenchError> {
    let (t0, _, _, _) = timer.finish()?;
    Ok(mono_ns().saturating_sub(t0))
}

/// What a variant hands back: tasks completed and `alive_at_spawn`.
struct Done {
    completed: u64,
    alive_at_spawn: u64,
}

/// Tasks alive when the last had been spawned, from the finished counter.
fn alive(n: usize, finished: &AtomicU64) -> u64 {
    (n as u64).saturating_sub(finished.load(Ordering::Acquire))
}

/// Spawn N waiting tasks, await the handles in spawn order. Each task
/// counts itself in `finished` as it ends; with `wait=release` the release
/// comes right after the last spawn (and after `finished` was read).
async fn spawn_all(
    n: usize,
    wait: Wait,
    release: &'static Release,
    finished: &'static AtomicU64,
    timer: &mut Timer,
) -> Result<Done, BenchError> {
    let mut handles = Vec::with_capacity(n);
    let mut completed = 0u64;
    timer.start();
    for _ in 0..n {
        handles.push(match wait {
            Wait::Sleep(duration) => tokio::spawn(async move {
                tokio::time::sleep(duration).await;
                finished.fetch_add(1, Ordering::Release);
            }),
            Wait::Release => tokio::spawn(async move {
                release.wait().await;
                finished.fetch_add(1, Ordering::Release);
            }),
        });
    }
    let alive_at_spawn = alive(n, finished);
    timer.mark_spawned();
    if wait == Wait::Release {
        release.release();
    }
    for handle in handles {
        handle.await?;
        completed += 1;
    }
    timer.stop();
    Ok(Done {
        completed,
        alive_at_spawn,
    })
}

/// The posts' unspawned futures: N wait futures straight from an iterator
/// into `futures::future::join_all`, awaited by the main task. Making the
/// `join_all` creates the N futures; none runs before it is polled, so all N
/// are alive when the last has been made. With `wait=release`, the release
/// comes once the `join_all` has polled every future (each counts its first
/// poll), awaited together with the `join_all` by `tokio::join!`.
async fn join_all(n: usize, wait: Wait, timer: &mut Timer) -> Result<Done, BenchError> {
    let completed = match wait {
        Wait::Sleep(duration) => {
            timer.start();
            let all = futures::future::join_all((0..n).map(|_| tokio::time::sleep(duration)));
            timer.mark_spawned();
            let outputs = all.await;
            timer.stop();
            outputs.len() as u64
        }
        Wait::Release => {
            let release = Release::new();
            let waiting = Cell::new(0usize);
            timer.start();
            let all = futures::future::join_all((0..n).map(|_| {
                let (release, waiting) = (&release, &waiting);
                async move {
                    waiting.set(waiting.get() + 1);
                    release.wait().await;
                }
            }));
            timer.mark_spawned();
            let release_when_all_wait = std::future::poll_fn(|cx| {
                if waiting.get() == n {
                    release.release();
                    Poll::Ready(())
                } else {
                    // The join_all is still polling its futures for the
                    // first time: look again on the next poll.
                    cx.waker().wake_by_ref();
                    Poll::Pending
                }
            });
            let (outputs, ()) = tokio::join!(biased; all, release_when_all_wait);
            timer.stop();
            outputs.len() as u64
        }
    };
    Ok(Done {
        completed,
        alive_at_spawn: n as u64,
    })
}

/// A value that lives until the process ends: the tasks of one run share
/// it by reference, with no reference count to update per task.
fn leak<T>(value: T) -> &'static T {
    Box::leak(Box::new(value))
}

/// Run `body` on a tokio runtime of `flavour`, then linger inside it.
fn on_runtime<F>(
    ctx: &mut Ctx,
    flavour: Flavour,
    linger: Duration,
    body: F,
) -> Result<(Done, u64), BenchError>
where
    F: AsyncFnOnce(&mut Timer) -> Result<Done, BenchError>,
{
    let runtime = ctx.runtime(flavour)?;
    let timer = &mut ctx.timer;
    let result = runtime.block_on(async {
        let done = body(timer).await?;
        if !linger.is_zero() {
            tokio::time::sleep(linger).await;
        }
        Ok::<_, BenchError>((done, since_start(timer)?))
    });
    drop(runtime);
    result
}

fn run(ctx: &mut Ctx) -> Result<Outcome, BenchError> {
    let n = ctx.n_usize()?;
    let wait = match ctx.param("wait")? {
        "sleep" => Wait::Sleep(Duration::from_millis(ctx.param_u64("duration_ms")?)),
        "release" => Wait::Release,
        other => return Err(BenchError::runtime(format!("unhandled wait '{other}'"))),
    };
    let linger = Duration::from_millis(ctx.param_u64("linger_ms")?);

    let (done, linger_end_ns) = match ctx.variant {
        "spawn" | "current-thread" => {
            let flavour = match ctx.variant {
                "current-thread" => Flavour::CurrentThread,
                _ => Flavour::MultiThread,
            };
            let release = leak(Release::new());
            let finished = leak(AtomicU64::new(0));
            on_runtime(ctx, flavour, linger, async |timer| {
                spawn_all(n, wait, release, finished, timer).await
            })?
        }
        "join-all" => on_runtime(ctx, Flavour::MultiThread, linger, async |timer| {
            join_all(n, wait, timer).await
        })?,
        "threads" => {
            ctx.set_no_runtime(n);
            let release = leak(ThreadRelease {
                released: Mutex::new(false),
                cond: Condvar::new(),
            });
            let finished = leak(AtomicU64::new(0));
            let mut alive_at_spawn = 0;
            let mut released = Ok(());
            let collected = run_threads_then(
                n,
                &mut ctx.timer,
                move |_| {
                    match wait {
                        Wait::Sleep(duration) => std::thread::sleep(duration),
                        Wait::Release => release.wait()?,
                    }
                    finished.fetch_add(1, Ordering::Release);
                    Ok(1)
                },
                || {
                    alive_at_spawn = alive(n, finished);
                    if wait == Wait::Release {
                        released = release.release();
                    }
                },
            )?;
            released?;
            if !linger.is_zero() {
                std::thread::sleep(linger);
            }
            let done = Done {
                completed: collected.sum,
                alive_at_spawn,
            };
            (done, since_start(&ctx.timer)?)
        }
        other => return Err(BenchError::runtime(format!("unhandled variant '{other}'"))),
    };

    let (_, _, finished_ns, _) = ctx.timer.finish()?;
    ctx.set_extra("finished_ns", finished_ns);
    ctx.set_extra("linger_end_ns", linger_end_ns);
    ctx.set_extra("alive_at_spawn", done.alive_at_spawn);
    Ok(Outcome {
        checksum: done.completed,
        tasks_ok: done.completed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::result::Report;
    use crate::workloads::spec::{test_args, test_run};

    fn extra(report: &Report, key: &str) -> u64 {
        report.extra[key]
            .as_u64()
            .unwrap_or_else(|| panic!("{key} is an unsigned integer"))
    }

    #[test]
    fn every_variant_and_wait_gives_the_reference_checksum() {
        for variant in SPEC.variants {
            for wait in ["sleep", "release"] {
                let what = format!("{variant} wait={wait}");
                let report = test_run(
                    &SPEC,
                    50,
                    Some(variant),
                    &[("wait", wait), ("duration_ms", "10")],
                );
                assert_eq!(report.checksum, "0000000000000032", "{what}");
                assert_eq!(report.tasks_ok, 50, "{what}");
                assert_eq!(report.variant, *variant);
                assert_eq!(report.params["wait"], wait, "{what}");
                let (flavour, threads) = match *variant {
                    "current-thread" => (Flavour::CurrentThread, 1),
                    "threads" => (Flavour::None, 50),
                    _ => (Flavour::MultiThread, 2),
                };
                assert_eq!(report.runtime.flavour, flavour, "{what}");
                assert_eq!(report.threads, threads, "{what}");
                if wait == "sleep" {
                    assert!(report.elapsed_ns >= 10_000_000, "{what}");
                }
                let spawned = report.spawned_ns.expect("spawned_ns is set");
                assert!(spawned <= report.elapsed_ns, "{what}");
                assert_eq!(extra(&report, "finished_ns"), report.elapsed_ns, "{what}");
                assert!(
                    extra(&report, "linger_end_ns") >= report.elapsed_ns,
                    "{what}"
                );
                let alive = extra(&report, "alive_at_spawn");
                if wait == "release" {
                    assert_eq!(alive, 50, "{what}");
                } else {
                    assert!(alive <= 50, "{what}");
                }
            }
        }
    }

    #[test]
    fn release_reaches_tasks_that_never_ran() {
        // Many tasks: on the multi-thread runtime some have run and wait
        // when the release comes, others have not run yet; on the
        // current-thread runtime none has; join_all has polled all of them.
        // None may miss the release, and the duration is not used.
        for variant in ["spawn", "current-thread", "join-all"] {
            let report = test_run(
                &SPEC,
                20_000,
                Some(variant),
                &[("wait", "release"), ("duration_ms", "600000")],
            );
            assert_eq!(report.checksum, "0000000000004e20", "{variant}");
            assert_eq!(extra(&report, "alive_at_spawn"), 20_000, "{variant}");
            assert!(report.elapsed_ns < 60_000_000_000, "{variant}");
        }
        let report = test_run(
            &SPEC,
            200,
            Some("threads"),
            &[("wait", "release"), ("duration_ms", "600000")],
        );
        assert_eq!(report.checksum, "00000000000000c8");
        assert_eq!(extra(&report, "alive_at_spawn"), 200);
    }

    #[test]
    fn join_all_release_with_few_and_many_futures() {
        // join_all keeps up to 30 futures in a slice and more in a
        // FuturesOrdered: both must be released.
        for n in [1u64, 30, 31, 1000] {
            let report = test_run(&SPEC, n, Some("join-all"), &[("wait", "release")]);
            assert_eq!(report.tasks_ok, n);
            assert_eq!(extra(&report, "alive_at_spawn"), n);
        }
    }

    #[test]
    fn sleeping_tasks_are_all_alive_at_the_last_spawn() {
        for variant in SPEC.variants {
            let report = test_run(&SPEC, 40, Some(variant), &[("duration_ms", "400")]);
            assert_eq!(extra(&report, "alive_at_spawn"), 40, "{variant}");
        }
    }

    #[test]
    fn alive_at_spawn_counts_tasks_that_already_finished() {
        // Threads that do not sleep end while later ones are being created.
        let report = test_run(&SPEC, 500, Some("threads"), &[("duration_ms", "0")]);
        assert_eq!(report.tasks_ok, 500);
        assert!(extra(&report, "alive_at_spawn") < 500);
    }

    #[test]
    fn linger_keeps_the_process_alive_after_the_timer() {
        for variant in SPEC.variants {
            for wait in ["sleep", "release"] {
                let report = test_run(
                    &SPEC,
                    5,
                    Some(variant),
                    &[("wait", wait), ("duration_ms", "10"), ("linger_ms", "30")],
                );
                assert_eq!(report.checksum, "0000000000000005", "{variant} {wait}");
                let finished = extra(&report, "finished_ns");
                let linger_end = extra(&report, "linger_end_ns");
                assert_eq!(finished, report.elapsed_ns, "{variant} {wait}");
                assert!(
                    linger_end >= finished + 30_000_000,
                    "{variant} {wait}: finished {finished} linger_end {linger_end}"
                );
            }
        }
    }

    #[test]
    fn zero_duration_and_defaults() {
        for variant in SPEC.variants {
            let report = test_run(&SPEC, 3, Some(variant), &[("duration_ms", "0")]);
            assert_eq!(report.checksum, "0000000000000003", "{variant}");
        }
        let report = test_run(&SPEC, 2, None, &[("duration_ms", "1")]);
        assert_eq!(report.variant, "spawn");
        assert_eq!(report.params["linger_ms"], "0");
        assert_eq!(report.params["wait"], "sleep");
        let ctx =
            crate::workloads::spec::prepare(&SPEC, &test_args(&SPEC, 1, None, &[]), 0).unwrap();
        assert_eq!(ctx.params["duration_ms"], "1000");
        assert_eq!(ctx.params["wait"], "sleep");
    }

    #[test]
    fn a_bad_wait_is_a_usage_error() {
        let args = test_args(&SPEC, 1, None, &[("wait", "forever")]);
        match crate::workloads::spec::prepare(&SPEC, &args, 0) {
            Err(BenchError::Usage(msg)) => assert!(msg.contains("sleep, release"), "{msg}"),
            Err(other) => panic!("expected a usage error, got {other}"),
            Ok(_) => panic!("wait=forever was accepted"),
        }
    }
}
