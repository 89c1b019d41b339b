//! `--threads` and the runtime's default, and the CPUs the result line
//! names: the built binary under an affinity mask of one CPU.

mod common;

use std::process::Command;

use serde_json::Value;

use common::{BIN, last_json};

const SLEEP_ARGS: &[&str] = &["sleep", "--n", "10", "--param", "work=0"];

/// Run the binary under `taskset -c 0` (one CPU in its affinity mask),
/// without TOKIO_WORKER_THREADS (the harness removes it too).
fn on_cpu_0(extra: &[&str]) -> Value {
    on_cpus("0", extra)
}

/// Run the binary under `taskset -c <cpus>`.
fn on_cpus(cpus: &str, extra: &[&str]) -> Value {
    let output = Command::new("taskset")
        .args(["-c", cpus, BIN])
        .args(SLEEP_ARGS)
        .args(extra)
        .env_remove("TOKIO_WORKER_THREADS")
        .output()
        .expect("taskset runs (util-linux)");
    last_json(&output)
}

#[test]
fn without_threads_tokio_s_default_follows_the_affinity_mask() {
    let v = on_cpu_0(&[]);
    assert_eq!(v["threads"], 1, "{v}");
    assert_eq!(v["threads_source"], "default", "{v}");
    assert_eq!(v["runtime"]["flavour"], "multi_thread");
}

#[test]
fn threads_flag_wins_over_the_mask() {
    let v = on_cpu_0(&["--threads", "3"]);
    assert_eq!(v["threads"], 3, "{v}");
    assert_eq!(v["threads_source"], "--threads", "{v}");
}

#[test]
fn without_threads_the_default_is_available_parallelism() {
    let output = Command::new(BIN)
        .args(SLEEP_ARGS)
        .env_remove("TOKIO_WORKER_THREADS")
        .output()
        .expect("the rustbench binary runs");
    let v = last_json(&output);
    let cores = std::thread::available_parallelism().unwrap().get();
    assert_eq!(v["threads"], cores, "{v}");
    assert_eq!(v["threads_source"], "default", "{v}");
}

#[test]
fn a_current_thread_runtime_reports_one_thread() {
    let output = Command::new(BIN)
        .args(SLEEP_ARGS)
        .args(["--variant", "current-thread"])
        .output()
        .expect("the rustbench binary runs");
    assert_eq!(last_json(&output)["threads"], 1);
}

#[test]
fn the_result_line_names_the_cpus_it_ran_on() {
    let v = on_cpu_0(&["--threads", "2"]);
    assert_eq!(v["cpus"], serde_json::json!([0]), "{v}");
    if std::thread::available_parallelism().unwrap().get() >= 2 {
        assert_eq!(on_cpus("1", &[])["cpus"], serde_json::json!([1]));
        assert_eq!(on_cpus("0,1", &[])["cpus"], serde_json::json!([0, 1]));
    }
}
