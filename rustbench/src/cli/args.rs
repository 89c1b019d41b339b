//! The command line: `rustbench <workload> --n N ...` or `rustbench list`.

use std::path::PathBuf;

use crate::cli::dsn::DSN_ENV;
use crate::cli::error::BenchError;

pub const USAGE: &str = "usage: rustbench <workload> --n N [--variant V] [--threads T] \
[--data-dir DIR] [--param KEY=VALUE ...] | rustbench list \
(the mysql and postgres workloads read their server's URL from BENCH_DSN)";

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// `rustbench list`
    List,
    /// `rustbench --help`
    Help,
    /// `rustbench <workload> ...`
    Run(RunArgs),
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RunArgs {
    pub workload: String,
    pub n: u64,
    pub variant: Option<String>,
    pub threads: Option<usize>,
    pub data_dir: Option<PathBuf>,
    /// The database server's URL, from BENCH_DSN (never from the command
    /// line): `main` fills it in, tests set it directly.
    pub dsn: Option<String>,
    /// `--param KEY=VALUE` pairs in command-line order.
    pub params: Vec<(String, String)>,
}

/// Parse a non-negative decimal integer: ASCII digits only (no sign, no
/// spaces, no underscores), within u64.
pub fn parse_uint(text: &str) -> Option<u64> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse::<u64>().ok()
}

/// Parse the arguments after the program name.
pub fn parse_args<I, S>(args: I) -> Result<Command, BenchError>
where
    I: IntoIterator<Item = S>,
    S: Into<String>,
{
    let mut args = args.into_iter().map(Into::into);
    let first = match args.next() {
        Some(first) => first,
        None => return Err(BenchError::usage("missing workload")),
    };
    match first.as_str() {
        "-h" | "--help" | "help" => {
            return match args.next() {
                None => Ok(Command::Help),
                Some(extra) => Err(BenchError::usage(format!("unexpected argument '{extra}'"))),
            };
        }
        "list" => {
            return match args.next() {
                None => Ok(Command::List),
                Some(extra) => Err(BenchError::usage(format!(
                    "unexpected argument '{extra}' after 'list'"
                ))),
            };
        }
        _ => {}
    }
    if first.starts_with('-') {
        return Err(BenchError::usage(format!(
            "expected a workload name first, got '{first}'"
        )));
    }

    let mut run = RunArgs {
        workload: first,
        ..RunArgs::default()
    };
    let mut n: Option<u64> = None;

    while let Some(arg) = args.next() {
        if arg == "-h" || arg == "--help" {
            return Ok(Command::Help);
        }
        let Some(body) = arg.strip_prefix("--") else {
            return Err(BenchError::usage(format!("unexpected argument '{arg}'")));
        };
        let (flag, inline) = match body.split_once('=') {
            Some((flag, value)) => (flag.to_string(), Some(value.to_string())),
            None => (body.to_string(), None),
        };
        if flag == "dsn" {
            // Its value is never read, so it cannot end up in a message.
            return Err(BenchError::usage(format!(
                "--dsn is not accepted (a password on the command line is visible to every \
                 local user): set the environment variable {DSN_ENV} to the server's URL instead"
            )));
        }
        if !matches!(
            flag.as_str(),
            "n" | "variant" | "threads" | "data-dir" | "param"
        ) {
            return Err(BenchError::usage(format!("unknown flag '--{flag}'")));
        }
        let value = match inline {
            Some(value) => value,
            None => args
                .next()
                .ok_or_else(|| BenchError::usage(format!("flag '--{flag}' needs a value")))?,
        };
        let once = |present: bool| {
            if present {
                Err(BenchError::usage(format!("flag '--{flag}' given twice")))
            } else {
                Ok(())
            }
        };
        match flag.as_str() {
            "n" => {
                once(n.is_some())?;
                match parse_uint(&value) {
                    Some(v) if v > 0 => n = Some(v),
                    _ => {
                        return Err(BenchError::usage(format!(
                            "--n must be a positive integer, got '{value}'"
                        )));
                    }
                }
            }
            "variant" => {
                once(run.variant.is_some())?;
                run.variant = Some(value);
            }
            "threads" => {
                once(run.threads.is_some())?;
                match parse_uint(&value).and_then(|v| usize::try_from(v).ok()) {
                    Some(v) if v > 0 => run.threads = Some(v),
                    _ => {
                        return Err(BenchError::usage(format!(
                            "--threads must be a positive integer, got '{value}'"
                        )));
                    }
                }
            }
            "data-dir" => {
                once(run.data_dir.is_some())?;
                if value.is_empty() {
                    return Err(BenchError::usage("--data-dir must not be empty"));
                }
                run.data_dir = Some(PathBuf::from(value));
            }
            "param" => {
                let Some((key, val)) = value.split_once('=') else {
                    return Err(BenchError::usage(format!(
                        "--param expects KEY=VALUE, got '{value}'"
                    )));
                };
                if key.is_empty() {
                    return Err(BenchError::usage(format!(
                        "--param expects KEY=VALUE, got '{value}'"
                    )));
                }
                if run.params.iter().any(|(k, _)| k == key) {
                    return Err(BenchError::usage(format!("--param {key} given twice")));
                }
                run.params.push((key.to_string(), val.to_string()));
            }
            _ => unreachable!("flag names are checked above"),
        }
    }

    run.n = n.ok_or_else(|| BenchError::usage("missing --n"))?;
    Ok(Command::Run(run))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_args(args: &[&str]) -> Result<RunArgs, BenchError> {
        match parse_args(args.iter().copied())? {
            Command::Run(run) => Ok(run),
            other => panic!("expected a run command, got {other:?}"),
        }
    }

    #[test]
    fn parses_space_and_equals_forms() {
        let run = run_args(&[
            "sleep",
            "--n",
            "10",
            "--variant=joinset",
            "--threads",
            "3",
            "--param",
            "work=5",
            "--param=kernel=article",
            "--data-dir=/tmp/x",
        ])
        .unwrap();
        assert_eq!(run.workload, "sleep");
        assert_eq!(run.n, 10);
        assert_eq!(run.variant.as_deref(), Some("joinset"));
        assert_eq!(run.threads, Some(3));
        assert_eq!(run.data_dir, Some(PathBuf::from("/tmp/x")));
        assert_eq!(run.dsn, None);
        assert_eq!(
            run.params,
            vec![
                ("work".to_string(), "5".to_string()),
                ("kernel".to_string(), "article".to_string())
            ]
        );
        assert_eq!(run_args(&["sleep", "--n=7"]).unwrap().n, 7);
    }

    #[test]
    fn param_value_may_contain_equals() {
        let run = run_args(&["x", "--n", "1", "--param", "q=a=b"]).unwrap();
        assert_eq!(run.params, vec![("q".to_string(), "a=b".to_string())]);
    }

    #[test]
    fn bad_command_lines_are_usage_errors() {
        let bad: &[&[&str]] = &[
            &[],
            &["sleep"],
            &["sleep", "--n"],
            &["sleep", "--n", "0"],
            &["sleep", "--n", "-1"],
            &["sleep", "--n", "+5"],
            &["sleep", "--n", "1.5"],
            &["sleep", "--n", "abc"],
            &["sleep", "--n", "99999999999999999999999"],
            &["sleep", "--n", "1", "--n", "2"],
            &["sleep", "--n", "1", "--threads", "0"],
            &["sleep", "--n", "1", "--bogus", "1"],
            &["sleep", "--n", "1", "stray"],
            &["sleep", "--n", "1", "--param", "novalue"],
            &["sleep", "--n", "1", "--param", "=1"],
            &["sleep", "--n", "1", "--param", "a=1", "--param", "a=2"],
            &["--n", "1"],
            &["list", "extra"],
        ];
        for args in bad {
            match parse_args(args.iter().copied()) {
                Err(err) => assert_eq!(err.exit_code(), 2, "{args:?}"),
                Ok(cmd) => panic!("{args:?} parsed as {cmd:?}"),
            }
        }
    }

    #[test]
    fn dsn_flag_is_refused_without_reading_its_value() {
        for args in [
            &["mysql", "--n", "1", "--dsn", "mysql://u:hunter22@h/db"][..],
            &["mysql", "--n", "1", "--dsn=mysql://u:hunter22@h/db"][..],
            &["mysql", "--dsn"][..],
        ] {
            match parse_args(args.iter().copied()) {
                Err(err) => {
                    assert_eq!(err.exit_code(), 2, "{args:?}");
                    let msg = err.message();
                    assert!(msg.contains("BENCH_DSN"), "{msg}");
                    assert!(msg.contains("--dsn"), "{msg}");
                    assert!(!msg.contains("hunter22"), "{msg}");
                }
                Ok(cmd) => panic!("{args:?} parsed as {cmd:?}"),
            }
        }
    }

    #[test]
    fn list_and_help() {
        assert_eq!(parse_args(["list"]).unwrap(), Command::List);
        assert_eq!(parse_args(["--help"]).unwrap(), Command::Help);
    }

    #[test]
    fn strict_integers() {
        assert_eq!(parse_uint("0"), Some(0));
        assert_eq!(parse_uint("50000"), Some(50_000));
        assert_eq!(parse_uint(""), None);
        assert_eq!(parse_uint("+1"), None);
        assert_eq!(parse_uint(" 1"), None);
        assert_eq!(parse_uint("1_000"), None);
    }
}
