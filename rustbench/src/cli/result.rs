//! The result line: the JSON object printed on the last line of stdout.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Map, Value};

/// Version strings recorded by build.rs.
pub const RUSTC_VERSION: &str = env!("RUSTBENCH_RUSTC_VERSION");
pub const TOKIO_VERSION: &str = env!("RUSTBENCH_TOKIO_VERSION");

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Flavour {
    MultiThread,
    CurrentThread,
    None,
}

#[derive(Debug, Clone, Serialize)]
pub struct RuntimeInfo {
    pub version: &'static str,
    pub tokio: &'static str,
    pub flavour: Flavour,
}

/// The JSON object printed on the last line of stdout.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub lang: &'static str,
    pub workload: String,
    pub variant: String,
    pub n: u64,
    pub threads: usize,
    pub elapsed_ns: u64,
    pub setup_ns: u64,
    /// 16 lowercase hex digits.
    pub checksum: String,
    pub tasks_ok: u64,
    pub params: BTreeMap<String, String>,
    pub runtime: RuntimeInfo,
    pub t0_mono_ns: u64,
    pub spawned_ns: Option<u64>,
    /// Workload-specific keys.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Keys of `Report` that `extra` must not repeat.
pub const REPORT_KEYS: &[&str] = &[
    "lang",
    "workload",
    "variant",
    "n",
    "threads",
    "elapsed_ns",
    "setup_ns",
    "checksum",
    "tasks_ok",
    "params",
    "runtime",
    "t0_mono_ns",
    "spawned_ns",
];

pub fn checksum_hex(checksum: u64) -> String {
    format!("{checksum:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checksum_is_zero_padded_lowercase_hex() {
        assert_eq!(checksum_hex(0x71c), "000000000000071c");
        assert_eq!(checksum_hex(u64::MAX), "ffffffffffffffff");
    }
}
