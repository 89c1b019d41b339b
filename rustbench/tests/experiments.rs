//! The related-post experiments (idle_tasks, threads_vs_tasks, ping_pong),
//! run through the built binary the way the harness runs them.

mod common;

use std::os::unix::process::CommandExt;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use common::{BIN, assert_usage_errors, last_json, one_line_stderr, run};

fn u64_key(v: &Value, key: &str) -> u64 {
    v[key]
        .as_u64()
        .unwrap_or_else(|| panic!("{key} is an unsigned integer in {v}"))
}

#[test]
fn list_describes_the_experiments() {
    let v = last_json(&run(&["list"]));
    let w = &v["workloads"];
    assert_eq!(
        w["idle_tasks"],
        json!({
            "variants": ["spawn", "current-thread", "join-all", "threads"],
            "default_variant": "spawn",
            "params": {"wait": "sleep", "duration_ms": "1000", "linger_ms": "0"},
            "limits": {
                "wait": {"choices": ["sleep", "release"]},
                "duration_ms": {"min": 0, "max": u64::MAX},
                "linger_ms": {"min": 0, "max": u64::MAX},
            },
        })
    );
    assert_eq!(
        w["threads_vs_tasks"],
        json!({
            "variants": ["tokio", "thread", "thread-pinned"],
            "default_variant": "tokio",
            "params": {"iterations": "100"},
            "limits": {"iterations": {"min": 0, "max": u64::MAX}},
        })
    );
    assert_eq!(
        w["ping_pong"],
        json!({
            "variants": ["multi-thread", "current-thread"],
            "default_variant": "multi-thread",
            "params": {"buffer": "1", "mode": "lockstep"},
            // the most permits a tokio semaphore (a channel's capacity) holds
            "limits": {
                "buffer": {"min": 1, "max": tokio::sync::Semaphore::MAX_PERMITS as u64},
                "mode": {"choices": ["lockstep", "pipelined"]},
            },
        })
    );
}

#[test]
fn idle_tasks_prints_after_the_linger() {
    for variant in ["spawn", "current-thread", "join-all", "threads"] {
        let begun = Instant::now();
        let output = run(&[
            "idle_tasks",
            "--n",
            "100",
            "--threads",
            "2",
            "--variant",
            variant,
            "--param",
            "duration_ms=10",
            "--param",
            "linger_ms=200",
        ]);
        let wall = begun.elapsed();
        let v = last_json(&output);
        assert_eq!(v["workload"], "idle_tasks");
        assert_eq!(v["variant"], variant);
        assert_eq!(v["checksum"], "0000000000000064", "{variant}");
        assert_eq!(v["tasks_ok"], 100);
        assert_eq!(v["params"]["wait"], "sleep");
        assert!(u64_key(&v, "alive_at_spawn") <= 100, "{variant}");
        let elapsed = u64_key(&v, "elapsed_ns");
        let finished = u64_key(&v, "finished_ns");
        let linger_end = u64_key(&v, "linger_end_ns");
        let spawned = u64_key(&v, "spawned_ns");
        assert_eq!(finished, elapsed, "{variant}");
        assert!(spawned <= finished, "{variant}");
        assert!(elapsed >= 10_000_000, "{variant}");
        assert!(
            linger_end >= finished + 200_000_000,
            "{variant}: finished {finished}, linger_end {linger_end}"
        );
        // The line was printed only after the linger.
        assert!(wall >= Duration::from_millis(210), "{variant}: {wall:?}");
    }
}

#[test]
fn idle_tasks_wait_for_the_release() {
    for variant in ["spawn", "current-thread", "join-all", "threads"] {
        let begun = Instant::now();
        let v = last_json(&run(&[
            "idle_tasks",
            "--n",
            "300",
            "--variant",
            variant,
            "--param",
            "wait=release",
            "--param",
            "duration_ms=600000",
            "--param",
            "linger_ms=50",
        ]));
        assert_eq!(v["params"]["wait"], "release", "{variant}");
        assert_eq!(v["checksum"], "000000000000012c", "{variant}");
        assert_eq!(v["tasks_ok"], 300, "{variant}");
        assert_eq!(u64_key(&v, "alive_at_spawn"), 300, "{variant}");
        assert!(
            u64_key(&v, "linger_end_ns") >= u64_key(&v, "finished_ns") + 50_000_000,
            "{variant}"
        );
        // duration_ms is not used.
        assert!(begun.elapsed() < Duration::from_secs(60), "{variant}");
    }
}

#[test]
fn threads_vs_tasks_checksums() {
    for variant in ["tokio", "thread", "thread-pinned"] {
        let v = last_json(&run(&[
            "threads_vs_tasks",
            "--n",
            "30",
            "--variant",
            variant,
            "--param",
            "iterations=2",
        ]));
        assert_eq!(v["checksum"], "000000000000003c", "{variant}");
        assert_eq!(v["tasks_ok"], 30, "{variant}");
    }
}

#[test]
fn ping_pong_checksums_and_rate() {
    for variant in ["multi-thread", "current-thread"] {
        for mode in ["lockstep", "pipelined"] {
            for buffer in ["1", "64"] {
                let v = last_json(&run(&[
                    "ping_pong",
                    "--n",
                    "1000",
                    "--variant",
                    variant,
                    "--param",
                    &format!("mode={mode}"),
                    "--param",
                    &format!("buffer={buffer}"),
                ]));
                let what = format!("{variant} {mode} buffer={buffer}");
                assert_eq!(v["checksum"], "000000000007a314", "{what}");
                assert_eq!(v["tasks_ok"], 1000, "{what}");
                let rate = v["round_trips_per_s"].as_f64().expect("a number");
                let elapsed = u64_key(&v, "elapsed_ns") as f64;
                assert!(
                    (rate - 1000.0 / (elapsed / 1e9)).abs() <= rate * 1e-9,
                    "{what}"
                );
            }
        }
    }
}

#[test]
fn ping_pong_buffer_zero_exits_2_and_list_starts_the_buffer_at_1() {
    // tokio::sync::mpsc has no rendezvous channel: 0 is below the range `list` gives
    let output = run(&["ping_pong", "--n", "10", "--param", "buffer=0"]);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let line = one_line_stderr(&output);
    assert!(line.contains("bad value '0' for --param buffer"), "{line}");
    assert!(line.contains("1..="), "{line}");
    let listed = last_json(&run(&["list"]));
    assert_eq!(listed["workloads"]["ping_pong"]["limits"]["buffer"]["min"], 1);
}

#[test]
fn bad_params_exit_2() {
    let cases: &[&[&str]] = &[
        &["idle_tasks", "--n", "1", "--param", "duration_ms=-1"],
        &["idle_tasks", "--n", "1", "--param", "linger_ms=x"],
        &["idle_tasks", "--n", "1", "--param", "wait=forever"],
        &["idle_tasks", "--n", "1", "--variant", "goroutine"],
        &["threads_vs_tasks", "--n", "1", "--param", "iterations=1.5"],
        &["threads_vs_tasks", "--n", "1", "--variant", "goroutine"],
        &["ping_pong", "--n", "1", "--param", "mode=burst"],
        &["ping_pong", "--n", "1", "--param", "buffer=-1"],
        &["ping_pong", "--n", "1", "--variant", "channels"],
        &["ping_pong", "--n", "1", "--param", "size=3"],
    ];
    assert_usage_errors(cases);
}

/// With the address space capped, the OS refuses new thread stacks after a
/// few threads: that must be exit status 1 with the OS error, after the
/// running threads were joined, never a crash.
#[test]
fn thread_creation_failure_exits_1_with_the_os_error() {
    let mut command = Command::new(BIN);
    command.args([
        "idle_tasks",
        "--n",
        "5000",
        "--variant",
        "threads",
        "--param",
        "duration_ms=100",
    ]);
    // The case under test is the refused stack, so the allocator is set up
    // to need no more address space once the threads start: under load, the
    // threads' own small allocations (std's thread-locals) otherwise land
    // when the stacks have used up the capped space, and one aborts first
    // ("memory allocation of 41 bytes failed", 7 runs in 40 with the CPUs
    // busy). One arena (glibc gives threads that allocate at the same moment
    // arenas of their own, reserving 64 MiB each); its heap grown by 64 MiB at
    // a time and never trimmed, so it grows once, at the start.
    command.env("MALLOC_ARENA_MAX", "1");
    command.env("MALLOC_TOP_PAD_", (64u64 << 20).to_string());
    command.env("MALLOC_TRIM_THRESHOLD_", (1u64 << 30).to_string());
    let limit = libc::rlimit {
        rlim_cur: 1 << 30,
        rlim_max: 1 << 30,
    };
    // SAFETY: setrlimit is async-signal-safe and `limit` is a valid rlimit
    // copied into the closure.
    unsafe {
        command.pre_exec(move || {
            if libc::setrlimit(libc::RLIMIT_AS, &limit) == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        });
    }
    let output = command.output().expect("the rustbench binary runs");
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let line = one_line_stderr(&output);
    assert!(line.contains("os error"), "{line}");
    assert!(line.contains("joined before stopping"), "{line}");
    assert!(!line.contains("panic"), "{line}");
}
