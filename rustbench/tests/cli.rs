//! Runs the built binary the way the harness does.

mod common;

use serde_json::Value;

use common::{assert_matches_schema, assert_usage_errors, last_json, result_keys, run};

fn assert_result_shape(v: &Value) {
    assert_matches_schema(v);
    assert_eq!(v["lang"], "rust");
    let checksum = v["checksum"].as_str().expect("checksum is a string");
    assert_eq!(checksum.len(), 16);
    assert!(
        checksum
            .chars()
            .all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c))
    );
    let runtime = &v["runtime"];
    assert!(runtime["version"].as_str().unwrap().starts_with("rustc "));
    assert!(runtime["tokio"].as_str().unwrap().starts_with("1."));
    assert!(v["params"].is_object());
    for (_, value) in v["params"].as_object().unwrap() {
        assert!(value.is_string(), "params are strings: {v}");
    }
}

#[test]
fn sleep_prints_a_complete_result_line() {
    let output = run(&["sleep", "--n", "10", "--threads=2", "--param", "work=1000"]);
    assert!(output.status.success(), "{output:?}");
    let v = last_json(&output);
    assert_result_shape(&v);
    assert_eq!(v["workload"], "sleep");
    assert_eq!(v["variant"], "join-handles");
    assert_eq!(v["n"], 10);
    assert_eq!(v["threads"], 2);
    assert_eq!(v["threads_source"], "--threads");
    assert_eq!(v["tasks_ok"], 10);
    assert_eq!(v["checksum"], "542f24434f64913f");
    assert_eq!(
        v["params"],
        serde_json::json!({"kernel": "xorshift", "work": "1000"})
    );
    assert_eq!(v["runtime"]["flavour"], "multi_thread");
    let elapsed = v["elapsed_ns"].as_u64().unwrap();
    let spawned = v["spawned_ns"]
        .as_u64()
        .expect("spawned_ns is set for sleep");
    assert!(spawned <= elapsed);
    // The longest of the first ten sleeps is 282 ms.
    assert!(elapsed >= 282_000_000, "elapsed {elapsed}");
}

/// The Report struct prints every standard key of the schema (spawned_ns
/// as null where nothing is spawned) and, besides them, only the keys a
/// workload or the program adds.
#[test]
fn the_result_line_carries_exactly_the_schemas_keys() {
    let keys: Vec<String> = result_keys().into_iter().map(|k| k.key).collect();
    // sleep adds the tasks alive at the last spawn (as idle_tasks does)
    for (args, extra) in [
        (
            &["sleep", "--n", "3", "--threads", "1", "--param", "work=0"][..],
            &["alive_at_spawn", "nofile_limit"][..],
        ),
        (
            &["cpu_loops", "--n", "3", "--param", "inner=1"][..],
            &["nofile_limit"][..],
        ),
    ] {
        let v = last_json(&run(args));
        assert_matches_schema(&v);
        let object = v.as_object().unwrap();
        for key in &keys {
            assert!(object.contains_key(key), "{args:?}: {key} missing from {v}");
        }
        let mut others: Vec<&String> = object.keys().filter(|k| !keys.contains(k)).collect();
        others.sort();
        assert_eq!(others, extra, "{args:?}: keys outside the schema");
    }
}

#[test]
fn current_thread_reports_one_thread() {
    let output = run(&[
        "sleep",
        "--n=10",
        "--variant=current-thread",
        "--param=kernel=article",
    ]);
    assert!(output.status.success(), "{output:?}");
    let v = last_json(&output);
    assert_result_shape(&v);
    assert_eq!(v["threads"], 1);
    assert_eq!(v["runtime"]["flavour"], "current_thread");
    assert_eq!(v["checksum"], "000000000000071c");
}

#[test]
fn cpu_loops_prints_a_complete_result_line() {
    let output = run(&[
        "cpu_loops",
        "--n",
        "1000",
        "--variant",
        "parallel",
        "--threads",
        "3",
        "--param",
        "inner=1000",
        "--param",
        "u=7",
    ]);
    assert!(output.status.success(), "{output:?}");
    let v = last_json(&output);
    assert_result_shape(&v);
    assert_eq!(v["workload"], "cpu_loops");
    assert_eq!(v["threads"], 3);
    assert_eq!(v["checksum"], "00000000002e5f18"); // 1,000 elements of 0xbdf
    assert_eq!(v["tasks_ok"], 1000);
    assert_eq!(v["runtime"]["flavour"], "none");
    assert!(v["spawned_ns"].is_null());
}

#[test]
fn list_describes_every_workload() {
    let output = run(&["list"]);
    assert!(output.status.success(), "{output:?}");
    let v = last_json(&output);
    assert_eq!(v["lang"], "rust");
    let workloads = v["workloads"].as_object().unwrap();
    assert!(workloads.contains_key("sleep"));
    assert!(workloads.contains_key("cpu_loops"));
    assert_eq!(v["workloads"]["sleep"]["params"]["work"], "50000");
    assert_eq!(v["workloads"]["cpu_loops"]["params"]["inner"], "100000");
}

#[test]
fn bad_command_lines_exit_2() {
    let cases: &[&[&str]] = &[
        &[],
        &["sleep", "--n", "10", "--bogus", "1"],
        &["sleep", "--n", "0"],
        &["sleep"],
        &["sleep", "--n", "x"],
        &["nope", "--n", "1"],
        &["sleep", "--n", "1", "--variant", "waitgroup"],
        &["sleep", "--n", "1", "--param", "size=3"],
        &["sleep", "--n", "1", "--param", "work=-3"],
        &["cpu_loops", "--n", "1", "--param", "u=0"],
        &["cpu_loops", "--n", "1", "--threads", "0"],
    ];
    assert_usage_errors(cases);
}

/// Where the C library can load them (glibc 2.36 or newer), the binary's
/// relative relocations are packed (DT_RELR), as build.rs asks the linker.
#[test]
fn relative_relocations_are_packed_where_glibc_loads_them() {
    let glibc = std::process::Command::new("getconf")
        .arg("GNU_LIBC_VERSION")
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    let version: Vec<u32> = glibc
        .strip_prefix("glibc ")
        .unwrap_or("0.0")
        .split('.')
        .filter_map(|p| p.parse().ok())
        .collect();
    if version < vec![2, 36] {
        println!("not checked: {glibc:?} cannot load packed relocations");
        return;
    }
    let dynamic = std::process::Command::new("readelf")
        .args(["--dynamic", common::BIN])
        .output()
        .expect("readelf runs (binutils)");
    let text = String::from_utf8_lossy(&dynamic.stdout);
    assert!(text.contains("(RELR)"), "no DT_RELR in {text}");
}
