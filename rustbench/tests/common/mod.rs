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

/// Every command line is a usage error: exit status 2, one line on stderr,
/// nothing on stdout.
pub fn assert_usage_errors(cases: &[&[&str]]) {
    for args in cases {
        let output = run(args);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {output:?}");
        one_line_stderr(&output);
    }
}

/// One standard key of the result line, as `bench_src/run/result_keys.json`
/// (owned by the harness) lists it.
pub struct ResultKey {
    pub key: String,
    pub json_type: String,
    pub required: bool,
}

/// The schema of the result line's standard keys, read by relative path
/// from this package's directory.
pub fn result_keys() -> Vec<ResultKey> {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../bench_src/run/result_keys.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    let doc: Value = serde_json::from_str(&text).expect("the schema is JSON");
    let keys: Vec<ResultKey> = doc["keys"]
        .as_array()
        .expect("the schema has a list of keys")
        .iter()
        .map(|k| ResultKey {
            key: k["key"].as_str().expect("key is a string").to_string(),
            json_type: k["type"].as_str().expect("type is a string").to_string(),
            required: k["required"].as_bool().expect("required is a boolean"),
        })
        .collect();
    assert!(!keys.is_empty(), "{} lists no key", path.display());
    keys
}

/// A result line against the schema: every required key present, every
/// standard key of its JSON type (an optional one may be null).
pub fn assert_matches_schema(v: &Value) {
    for k in result_keys() {
        let value = match v.get(&k.key) {
            None | Some(Value::Null) => {
                assert!(!k.required, "required key {} missing from {v}", k.key);
                continue;
            }
            Some(value) => value,
        };
        let type_ok = match k.json_type.as_str() {
            "string" => value.is_string(),
            // Every integer of the result line is a count or a time.
            "integer" => value.is_u64(),
            "object" => value.is_object(),
            "array" => value.is_array(),
            other => panic!("unknown type {other} in the schema"),
        };
        assert!(type_ok, "{} = {value}: not a JSON {}", k.key, k.json_type);
    }
}
