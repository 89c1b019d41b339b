//! The result line: the JSON object printed on the last line of stdout.
//! Its standard keys (the fields of `Report` but `extra`) are listed once,
//! with their types and meaning, in `bench_src/run/result_keys.json`;
//! `tests/cli.rs` checks the result line against that file.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::cli::error::BenchError;

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
    /// `--threads`, or `default` when the runtime's default stood.
    pub threads_source: &'static str,
    /// The CPUs in the program's affinity mask when it started, increasing.
    pub cpus: Vec<usize>,
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

impl Report {
    /// The report with the workload-specific keys added; a key that repeats
    /// a standard one is an error.
    pub fn with_extra(mut self, extra: Map<String, Value>) -> Result<Self, BenchError> {
        self.extra.clear();
        let standard = serde_json::to_value(&self)?;
        if let Some(key) = extra
            .keys()
            .find(|key| standard.get(key.as_str()).is_some())
        {
            return Err(BenchError::runtime(format!(
                "extra key '{key}' clashes with a standard key"
            )));
        }
        self.extra = extra;
        Ok(self)
    }
}

pub fn checksum_hex(checksum: u64) -> String {
    format!("{checksum:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report() -> Report {
        Report {
            lang: "rust",
            workload: "w".into(),
            variant: "v".into(),
            n: 1,
            threads: 1,
            threads_source: "--threads",
            cpus: vec![0],
            elapsed_ns: 1,
            setup_ns: 1,
            checksum: checksum_hex(1),
            tasks_ok: 1,
            params: BTreeMap::new(),
            runtime: RuntimeInfo {
                version: RUSTC_VERSION,
                tokio: TOKIO_VERSION,
                flavour: Flavour::None,
            },
            t0_mono_ns: 1,
            spawned_ns: None,
            extra: Map::new(),
        }
    }

    #[test]
    fn extra_keys_follow_and_may_not_repeat_a_standard_key() {
        let mut extra = Map::new();
        extra.insert("appends".into(), 3.into());
        let line = serde_json::to_string(&report().with_extra(extra).unwrap()).unwrap();
        assert!(
            line.ends_with(r#""spawned_ns":null,"appends":3}"#),
            "{line}"
        );
        for key in ["checksum", "spawned_ns", "runtime"] {
            let mut extra = Map::new();
            extra.insert(key.into(), 1.into());
            let err = report().with_extra(extra).unwrap_err();
            assert!(err.message().contains(key), "{err}");
        }
    }

    #[test]
    fn checksum_is_zero_padded_lowercase_hex() {
        assert_eq!(checksum_hex(0x71c), "000000000000071c");
        assert_eq!(checksum_hex(u64::MAX), "ffffffffffffffff");
    }
}
