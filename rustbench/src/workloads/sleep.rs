//! `sleep`: N tokio tasks; task i computes a CPU kernel, sleeps
//! `lcg(42)[i] % 300` ms, and returns the kernel result.
//! Checksum: wrapping sum of the task results plus the sum of sleep ms.
//! Extra key `alive_at_spawn`, as in idle_tasks: N minus the tasks that had
//! finished their sleep when the last one had been spawned (a counter every
//! task increments as its sleep ends, read right after the last spawn). A
//! task whose sleep is short (some sleep 0 ms) can end before the last one
//! starts, and then the peak memory holds fewer than N tasks.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::task::{JoinHandle, JoinSet};

use super::spec::{Check, Collected, Ctx, Outcome, ParamSpec, WorkloadSpec};
use crate::cli::error::BenchError;
use crate::cli::result::Flavour;
use crate::cli::timer::Timer;
use crate::lcg;

pub const SPEC: WorkloadSpec = WorkloadSpec {
    name: "sleep",
    variants: &["join-handles", "joinset", "join-all", "current-thread"],
    default_variant: "join-handles",
    params: &[
        ParamSpec {
            key: "kernel",
            default: "xorshift",
            check: Check::OneOf(&["xorshift", "article"]),
        },
        ParamSpec {
            key: "work",
            default: "50000",
            check: Check::ANY_UINT,
        },
    ],
    needs_data_dir: false,
    needs_dsn: false,
    run,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kernel {
    Xorshift,
    Article,
}

/// `x = i + 1`; `work` rounds of xorshift64. The result feeds the checksum,
/// so the compiler has to do every round.
pub fn xorshift_kernel(i: u64, work: u64) -> u64 {
    let mut x = i.wrapping_add(1);
    for _ in 0..work {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    x
}

/// The original article's loop, kept exactly as it was: `n` is never used
/// afterwards, so the optimiser removes the whole loop. Always returns 0.
pub fn article_kernel(work: u64) -> u64 {
    let mut n = 0.0f64;
    for _ in 0..work {
        if n > 1000.0 {
            n /= 850.0;
        }
        n *= 4.0;
    }
    0
}

async fn task(i: u64, kernel: Kernel, work: u64, sleep_ms: u64, finished: &AtomicU64) -> u64 {
    let result = match kernel {
        Kernel::Xorshift => xorshift_kernel(i, work),
        Kernel::Article => article_kernel(work),
    };
    tokio::time::sleep(Duration::from_millis(sleep_ms)).await;
    finished.fetch_add(1, Ordering::Release);
    result
}

fn run(ctx: &mut Ctx) -> Result<Outcome, BenchError> {
    let n = ctx.n_usize()?;
    let kernel = match ctx.param("kernel")? {
        "xorshift" => Kernel::Xorshift,
        "article" => Kernel::Article,
        other => return Err(BenchError::runtime(format!("unhandled kernel '{other}'"))),
    };
    let work = ctx.param_u64("work")?;
    let sleeps = lcg::sequence(42, n, 300);

    let variant = ctx.variant;
    let flavour = match variant {
        "current-thread" => Flavour::CurrentThread,
        _ => Flavour::MultiThread,
    };
    let runtime = ctx.runtime(flavour)?;
    let timer = &mut ctx.timer;
    let job = Job {
        sleeps: &sleeps,
        kernel,
        work,
        // shared by every task by reference, with no reference count to
        // update per task (as idle_tasks' counter); one u64 per run
        finished: Box::leak(Box::new(AtomicU64::new(0))),
        alive_at_spawn: Cell::new(0),
    };

    let collected = runtime.block_on(async {
        match variant {
            "join-handles" | "current-thread" => job.join_handles(timer).await,
            "joinset" => job.joinset(timer).await,
            "join-all" => job.join_all(timer).await,
            other => Err(BenchError::runtime(format!("unhandled variant '{other}'"))),
        }
    })?;
    drop(runtime);
    ctx.set_extra("alive_at_spawn", job.alive_at_spawn.get());

    let sleep_total = sleeps.iter().fold(0u64, |acc, &ms| acc.wrapping_add(ms));
    Ok(Outcome {
        checksum: collected.sum.wrapping_add(sleep_total),
        tasks_ok: collected.ok,
    })
}

struct Job<'a> {
    sleeps: &'a [u64],
    kernel: Kernel,
    work: u64,
    /// Tasks whose sleep has ended (each adds itself as it ends).
    finished: &'static AtomicU64,
    /// N minus `finished` right after the last spawn (`mark_spawned`).
    alive_at_spawn: Cell<u64>,
}

impl Job<'_> {
    /// Task i of every i, in spawn order: its kernel, then its sleep.
    fn tasks(&self) -> impl Iterator<Item = impl Future<Output = u64> + Send + use<>> {
        let (kernel, work, finished) = (self.kernel, self.work, self.finished);
        self.sleeps
            .iter()
            .enumerate()
            .map(move |(i, &ms)| task(i as u64, kernel, work, ms, finished))
    }

    /// Mark the spawn phase and count the tasks still alive.
    fn mark_spawned(&self, timer: &mut Timer) {
        timer.mark_spawned();
        let finished = self.finished.load(Ordering::Acquire);
        self.alive_at_spawn
            .set((self.sleeps.len() as u64).saturating_sub(finished));
    }

    /// Start the timer, spawn every task keeping the handles in spawn
    /// order, mark the spawn phase.
    fn spawn_all(&self, timer: &mut Timer) -> Vec<JoinHandle<u64>> {
        let mut handles = Vec::with_capacity(self.sleeps.len());
        timer.start();
        for task in self.tasks() {
            handles.push(tokio::spawn(task));
        }
        self.mark_spawned(timer);
        handles
    }

    /// Spawn every task, keep the handles, await them in spawn order.
    async fn join_handles(&self, timer: &mut Timer) -> Result<Collected, BenchError> {
        let mut collected = Collected::default();
        for handle in self.spawn_all(timer) {
            collected.add(handle.await?);
        }
        timer.stop();
        Ok(collected)
    }

    /// Spawn every task into a JoinSet, collect in completion order.
    async fn joinset(&self, timer: &mut Timer) -> Result<Collected, BenchError> {
        let mut set = JoinSet::new();
        let mut collected = Collected::default();
        timer.start();
        for task in self.tasks() {
            set.spawn(task);
        }
        self.mark_spawned(timer);
        while let Some(result) = set.join_next().await {
            collected.add(result?);
        }
        timer.stop();
        Ok(collected)
    }

    /// Spawn every task, then `futures::future::join_all` over the handles.
    async fn join_all(&self, timer: &mut Timer) -> Result<Collected, BenchError> {
        let mut collected = Collected::default();
        for result in futures::future::join_all(self.spawn_all(timer)).await {
            collected.add(result?);
        }
        timer.stop();
        Ok(collected)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workloads::spec::test_run;

    #[test]
    fn xorshift_matches_independent_values() {
        assert_eq!(xorshift_kernel(0, 0), 0x1);
        assert_eq!(xorshift_kernel(0, 1), 0x4082_2041);
        assert_eq!(xorshift_kernel(0, 2), 0x1000_4106_0c01_1441);
        assert_eq!(xorshift_kernel(4, 3), 0xf765_969a_c49a_f60d);
        assert_eq!(xorshift_kernel(9, 1000), 0x7666_78e9_b861_587a);
        assert_eq!(xorshift_kernel(99, 50_000), 0x3b1d_57e2_c61b_5c28);
    }

    #[test]
    fn tasks_come_in_spawn_order() {
        let job = Job {
            sleeps: &[0, 1, 0],
            kernel: Kernel::Xorshift,
            work: 5,
            finished: Box::leak(Box::new(AtomicU64::new(0))),
            alive_at_spawn: Cell::new(0),
        };
        let results: Vec<u64> = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap()
            .block_on(futures::future::join_all(job.tasks()));
        let expected: Vec<u64> = (0..3).map(|i| xorshift_kernel(i, 5)).collect();
        assert_eq!(results, expected);
    }

    #[test]
    fn article_kernel_returns_zero() {
        assert_eq!(article_kernel(0), 0);
        assert_eq!(article_kernel(50_000), 0);
    }

    #[test]
    fn every_variant_gives_the_reference_checksum() {
        for variant in SPEC.variants {
            let report = test_run(&SPEC, 10, Some(variant), &[("work", "1000")]);
            assert_eq!(report.checksum, "542f24434f64913f", "{variant}");
            assert_eq!(report.tasks_ok, 10, "{variant}");
            assert_eq!(report.variant, *variant);
            let expected_threads = if *variant == "current-thread" { 1 } else { 2 };
            assert_eq!(report.threads, expected_threads, "{variant}");
            assert!(report.spawned_ns.is_some());
            assert!(report.spawned_ns.unwrap() <= report.elapsed_ns);
        }
    }

    #[test]
    fn default_work_reference_checksum() {
        let report = test_run(&SPEC, 10, None, &[]);
        assert_eq!(report.checksum, "466afa5d3cf3e4c4");
        assert_eq!(report.variant, "join-handles");
        assert_eq!(report.params.get("work").map(String::as_str), Some("50000"));
        assert_eq!(
            report.params.get("kernel").map(String::as_str),
            Some("xorshift")
        );
    }

    #[test]
    fn hundred_tasks_reference_checksum() {
        for variant in SPEC.variants {
            let report = test_run(&SPEC, 100, Some(variant), &[("work", "1000")]);
            assert_eq!(report.checksum, "2e2768dda01da53c", "{variant}");
            assert_eq!(report.tasks_ok, 100);
        }
    }

    #[test]
    fn article_kernel_reference_checksums() {
        for variant in SPEC.variants {
            let report = test_run(&SPEC, 10, Some(variant), &[("kernel", "article")]);
            assert_eq!(report.checksum, "000000000000071c", "{variant}");
            let report = test_run(&SPEC, 100, Some(variant), &[("kernel", "article")]);
            assert_eq!(report.checksum, "0000000000003b56", "{variant}");
        }
    }

    fn alive_at_spawn(report: &crate::cli::result::Report) -> u64 {
        report.extra["alive_at_spawn"]
            .as_u64()
            .expect("alive_at_spawn is an unsigned integer")
    }

    #[test]
    fn every_variant_counts_the_tasks_alive_at_the_last_spawn() {
        // As idle_tasks: at N = 10 the shortest sleep is 42 ms, far longer
        // than spawning ten tasks takes, so all are alive. At N = 100,000
        // with work=0 the tasks that sleep 0 ms (the first is task 254) end
        // while later ones are still being spawned on the multi-thread
        // runtime; on the current-thread runtime no task runs before the
        // main task awaits, so all are alive there.
        for variant in SPEC.variants {
            let report = test_run(&SPEC, 10, Some(variant), &[("work", "0")]);
            assert_eq!(alive_at_spawn(&report), 10, "{variant}");
            let report = test_run(&SPEC, 100_000, Some(variant), &[("work", "0")]);
            assert_eq!(report.tasks_ok, 100_000, "{variant}");
            let alive = alive_at_spawn(&report);
            if *variant == "current-thread" {
                assert_eq!(alive, 100_000, "{variant}");
            } else {
                assert!(alive < 100_000, "{variant}: alive_at_spawn = {alive}");
            }
        }
    }

    #[test]
    fn runtime_flavour_is_recorded() {
        let report = test_run(&SPEC, 1, Some("current-thread"), &[("work", "0")]);
        assert_eq!(report.runtime.flavour, Flavour::CurrentThread);
        let report = test_run(&SPEC, 1, Some("joinset"), &[("work", "0")]);
        assert_eq!(report.runtime.flavour, Flavour::MultiThread);
    }
}
