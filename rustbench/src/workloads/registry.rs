//! The registry: every workload this program knows, by name.

use std::collections::BTreeMap;

use serde::Serialize;

use super::spec::{self, Check, Ctx, WorkloadSpec};
use super::{
    cpu_loops, files_read, files_rw, idle_tasks, mysql, ping_pong, postgres, sleep, sqlite,
    threads_vs_tasks,
};
use crate::cli::args::RunArgs;
use crate::cli::error::BenchError;

/// Every workload this program knows, in `list` order.
pub const REGISTRY: &[&WorkloadSpec] = &[
    &sleep::SPEC,
    &cpu_loops::SPEC,
    &idle_tasks::SPEC,
    &threads_vs_tasks::SPEC,
    &ping_pong::SPEC,
    &files_read::SPEC,
    &files_rw::SPEC,
    &sqlite::SPEC,
    &mysql::SPEC,
    &postgres::SPEC,
];

pub fn find(name: &str) -> Option<&'static WorkloadSpec> {
    REGISTRY.iter().copied().find(|spec| spec.name == name)
}

/// Find the workload `args` names, check the command line against its
/// spec and build the context. All failures here are usage errors (exit
/// status 2).
pub fn prepare(
    args: &RunArgs,
    process_start: u64,
) -> Result<(&'static WorkloadSpec, Ctx), BenchError> {
    let spec = find(&args.workload).ok_or_else(|| {
        let names: Vec<&str> = REGISTRY.iter().map(|s| s.name).collect();
        BenchError::usage(format!(
            "unknown workload '{}' (known: {})",
            args.workload,
            names.join(", ")
        ))
    })?;
    Ok((spec, spec::prepare(spec, args, process_start)?))
}

#[derive(Serialize)]
struct ListEntry {
    variants: &'static [&'static str],
    default_variant: &'static str,
    params: BTreeMap<&'static str, &'static str>,
    /// What each param accepts, so that the harness can check that its plan never lets through a
    /// value this program refuses.
    limits: BTreeMap<&'static str, Limit>,
}

/// What one param accepts: its choices, or an integer in `min..=max`.
#[derive(Serialize)]
#[serde(untagged)]
enum Limit {
    Choices { choices: &'static [&'static str] },
    Range { min: u64, max: u64 },
}

impl Limit {
    fn of(check: &Check) -> Self {
        match *check {
            Check::UInt { min, max } => Limit::Range { min, max },
            Check::OneOf(choices) => Limit::Choices { choices },
        }
    }
}

#[derive(Serialize)]
struct ListOutput {
    lang: &'static str,
    workloads: BTreeMap<&'static str, ListEntry>,
}

/// The `list` object: every workload with its variants and param defaults.
pub fn list_json() -> Result<String, BenchError> {
    let workloads = REGISTRY
        .iter()
        .map(|spec| {
            (
                spec.name,
                ListEntry {
                    variants: spec.variants,
                    default_variant: spec.default_variant,
                    params: spec.params.iter().map(|p| (p.key, p.default)).collect(),
                    limits: spec
                        .params
                        .iter()
                        .map(|p| (p.key, Limit::of(&p.check)))
                        .collect(),
                },
            )
        })
        .collect();
    Ok(serde_json::to_string(&ListOutput {
        lang: "rust",
        workloads,
    })?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::timer::mono_ns;
    use serde_json::Value;

    fn args(workload: &str, n: u64, variant: Option<&str>, params: &[(&str, &str)]) -> RunArgs {
        RunArgs {
            workload: workload.to_string(),
            ..spec::test_args(&sleep::SPEC, n, variant, params)
        }
    }

    fn usage_error(args: &RunArgs) -> String {
        match prepare(args, mono_ns()) {
            Err(BenchError::Usage(msg)) => msg,
            Err(other) => panic!("expected a usage error, got {other}"),
            Ok(_) => panic!("expected a usage error for {args:?}"),
        }
    }

    #[test]
    fn registry_is_consistent() {
        let mut names = std::collections::HashSet::new();
        for spec in REGISTRY {
            assert!(names.insert(spec.name), "duplicate workload {}", spec.name);
            assert!(
                spec.variants.contains(&spec.default_variant),
                "{}",
                spec.name
            );
            let mut keys = std::collections::HashSet::new();
            for p in spec.params {
                assert!(
                    keys.insert(p.key),
                    "duplicate param {}.{}",
                    spec.name,
                    p.key
                );
                assert!(
                    p.check.validate(p.default).is_ok(),
                    "default of {}.{} fails its own check",
                    spec.name,
                    p.key
                );
            }
        }
    }

    #[test]
    fn unknown_workload_variant_and_param_are_usage_errors() {
        assert!(usage_error(&args("nope", 1, None, &[])).contains("unknown workload"));
        assert!(usage_error(&args("sleep", 1, Some("waitgroup"), &[])).contains("unknown variant"));
        assert!(
            usage_error(&args("cpu_loops", 1, Some("joinset"), &[])).contains("unknown variant")
        );
        assert!(usage_error(&args("sleep", 1, None, &[("u", "10")])).contains("unknown param"));
        assert!(
            usage_error(&args("cpu_loops", 1, None, &[("work", "1")])).contains("unknown param")
        );
    }

    #[test]
    fn server_workloads_need_a_dsn_and_others_ignore_it() {
        for workload in ["mysql", "postgres"] {
            let msg = usage_error(&args(workload, 1, None, &[]));
            assert!(msg.contains("BENCH_DSN"), "{msg}");
            let with_dsn = RunArgs {
                dsn: Some("postgres://u:p@h/db".into()),
                ..args(workload, 1, None, &[])
            };
            let (_, ctx) = prepare(&with_dsn, 0).unwrap();
            assert_eq!(ctx.dsn().unwrap(), "postgres://u:p@h/db");
        }
        let sleep = RunArgs {
            dsn: Some("mysql://u:p@h/db".into()),
            ..args("sleep", 1, None, &[])
        };
        let (_, ctx) = prepare(&sleep, 0).unwrap();
        assert!(ctx.dsn().is_err());
    }

    #[test]
    fn bad_param_values_are_usage_errors() {
        let cases: &[(&str, &str, &str)] = &[
            ("sleep", "kernel", "float"),
            ("sleep", "kernel", ""),
            ("sleep", "work", "-1"),
            ("sleep", "work", "1e3"),
            ("sleep", "work", ""),
            ("cpu_loops", "u", "0"),
            ("cpu_loops", "u", "abc"),
            ("cpu_loops", "u", "4294967296"),
            ("cpu_loops", "inner", "4294967296"),
            ("cpu_loops", "inner", "-5"),
        ];
        for (workload, key, value) in cases {
            let msg = usage_error(&args(workload, 1, None, &[(key, value)]));
            assert!(msg.contains("bad value"), "{workload} {key}={value}: {msg}");
        }
    }

    #[test]
    fn defaults_fill_every_param() {
        let (_, ctx) = prepare(&args("sleep", 3, None, &[("work", "7")]), 0).unwrap();
        assert_eq!(ctx.variant, "join-handles");
        assert_eq!(ctx.params.get("work").map(String::as_str), Some("7"));
        assert_eq!(
            ctx.params.get("kernel").map(String::as_str),
            Some("xorshift")
        );
        let (_, ctx) = prepare(&args("cpu_loops", 3, None, &[]), 0).unwrap();
        assert_eq!(ctx.variant, "plain");
        assert_eq!(ctx.params.get("u").map(String::as_str), Some("10"));
        assert_eq!(ctx.params.get("inner").map(String::as_str), Some("100000"));
    }

    /// The modules `source` names right after `super::` or
    /// `crate::workloads::`, in a path or in a `{...}` group (the group's
    /// top-level names).
    fn modules_named(source: &str) -> Vec<&str> {
        fn ident(s: &str) -> &str {
            let s = s.trim_start();
            let end = s
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(s.len());
            &s[..end]
        }
        let mut out = Vec::new();
        for prefix in ["super::", "crate::workloads::"] {
            for (at, _) in source.match_indices(prefix) {
                let rest = &source[at + prefix.len()..];
                let Some(group) = rest.strip_prefix('{') else {
                    out.push(ident(rest));
                    continue;
                };
                let (mut depth, mut item_start) = (0usize, 0usize);
                for (i, c) in group.char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' if depth == 0 => {
                            out.push(ident(&group[item_start..]));
                            break;
                        }
                        '}' => depth -= 1,
                        ',' if depth == 0 => {
                            out.push(ident(&group[item_start..]));
                            item_start = i + 1;
                        }
                        _ => {}
                    }
                }
            }
        }
        out.retain(|name| !name.is_empty());
        out
    }

    #[test]
    fn the_check_sees_a_module_in_a_path_or_a_group() {
        let source = "use super::spec::{Check, Ctx};\n\
                      use super::{\n    fsshared::{a, b},\n    sleep,\n};\n\
                      use super::*;\n\
                      fn f() { crate::workloads::cpu_loops::SPEC; }\n";
        assert_eq!(
            modules_named(source),
            ["spec", "fsshared", "sleep", "cpu_loops"]
        );
    }

    /// A workload's file imports `spec` and the shared helpers beside it,
    /// never another workload.
    #[test]
    fn no_workload_names_another() {
        let workloads: Vec<&str> = REGISTRY.iter().map(|spec| spec.name).collect();
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/workloads");
        let mut found = Vec::new();
        for name in &workloads {
            let path = dir.join(format!("{name}.rs"));
            let source = std::fs::read_to_string(&path)
                .unwrap_or_else(|err| panic!("{}: {err}", path.display()));
            for other in modules_named(&source) {
                if other != *name && workloads.contains(&other) {
                    found.push(format!("{name}.rs names {other}"));
                }
            }
        }
        assert_eq!(found, Vec::<String>::new());
    }

    #[test]
    fn list_has_both_workloads() {
        let v: Value = serde_json::from_str(&list_json().unwrap()).unwrap();
        assert_eq!(v["lang"], "rust");
        let sleep = &v["workloads"]["sleep"];
        assert_eq!(sleep["default_variant"], "join-handles");
        assert_eq!(
            sleep["variants"],
            serde_json::json!(["join-handles", "joinset", "join-all", "current-thread"])
        );
        assert_eq!(
            sleep["params"],
            serde_json::json!({"kernel": "xorshift", "work": "50000"})
        );
        let cpu = &v["workloads"]["cpu_loops"];
        assert_eq!(cpu["default_variant"], "plain");
        assert_eq!(
            cpu["variants"],
            serde_json::json!(["plain", "local", "unrolled", "parallel"])
        );
        assert_eq!(
            cpu["params"],
            serde_json::json!({"u": "10", "inner": "100000"})
        );
        // what each param accepts, for the harness to check its plan against
        assert_eq!(
            sleep["limits"],
            serde_json::json!({"kernel": {"choices": ["xorshift", "article"]},
                               "work": {"min": 0, "max": u64::MAX}})
        );
    }
}
