//! What the integration tests share: running the built binary and reading
//! its output the way the harness does.
#![allow(dead_code)] // each test file uses its own part

use std::process::{Command, Output};

use serde_json::Value;

pub const BIN: &str = env!("CARGO_BIN_EXE_rustbench");

/// Run the binary without BENCH_DSN in its environment.
pub fn run(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .env_remove("BENCH_DSN")
        .output()
        .expect("the rustbench binary runs")
}

/// Run the binary with BENCH_DSN set to `dsn`.
pub fn run_with_dsn(dsn: &str, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .env("BENCH_DSN", dsn)
        .output()
        .expect("the rustbench binary runs")
}

/// The last line of stdout of a successful run, parsed as a JSON object.
pub fn last_json(output: &Output) -> Value {
    assert!(output.status.success(), "{output:?}");
    let stdout = String::from_utf8(output.stdout.clone()).expect("stdout is UTF-8");
    let last = stdout.lines().last().expect("stdout has a line");
    let value: Value = serde_json::from_str(last).expect("last line is JSON");
    assert!(value.is_object(), "last line is a JSON object: {last}");
    value
}

/// One line on stderr, nothing on stdout; returns the line.
pub fn one_line_stderr(output: &Output) -> String {
    let stderr = String::from_utf8_lossy(&output.stderr).to_string();
    assert_eq!(stderr.trim_end().lines().count(), 1, "stderr: {stderr:?}");
    assert!(output.stdout.is_empty(), "nothing on stdout after an error");
    stderr
}
