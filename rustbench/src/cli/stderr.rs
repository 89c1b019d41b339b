//! What the program prints on stderr when it fails: one line, the usage
//! after a bad command line, the password of BENCH_DSN redacted wherever a
//! driver may have quoted it.

use crate::cli::args::USAGE;
use crate::cli::dsn::scrub;
use crate::cli::error::BenchError;

/// The error as the single line the program prints before it exits.
pub fn error_line(err: &BenchError) -> String {
    let text = match err {
        BenchError::Usage(msg) => format!("rustbench: {msg}; {USAGE}"),
        other => format!("rustbench: error: {}", other.message()),
    };
    scrub(&one_line(&text))
}

/// A panic's message as the single line the program prints before it exits.
pub fn panic_line(info: &dyn std::fmt::Display) -> String {
    scrub(&one_line(&format!("rustbench: error: panic: {info}")))
}

/// Collapse any line breaks so that an error always fits on one line.
pub fn one_line(text: &str) -> String {
    text.split(['\n', '\r'])
        .map(str::trim)
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join(" | ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::args::parse_args;

    #[test]
    fn errors_are_one_line() {
        let usage = error_line(&BenchError::usage("bad\nthing"));
        assert!(!usage.contains('\n'), "{usage}");
        assert!(
            usage.starts_with("rustbench: bad | thing; usage: "),
            "{usage}"
        );
        let io: BenchError = std::io::Error::other("disk\nfull").into();
        assert_eq!(error_line(&io), "rustbench: error: disk | full");
        assert_eq!(
            panic_line(&"at\nhere"),
            "rustbench: error: panic: at | here"
        );
    }

    #[test]
    fn the_causes_of_a_library_error_are_on_the_line() {
        let err = crate::cli::error::tests::error_with_a_cause();
        assert_eq!(
            error_line(&err),
            "rustbench: error: query failed: the server closed the connection"
        );
    }

    #[test]
    fn a_refused_dsn_flag_never_prints_its_value() {
        for args in [
            &["mysql", "--n", "1", "--dsn", "mysql://u:hunter22@h/db"][..],
            &["mysql", "--n", "1", "--dsn=mysql://u:hunter22@h/db"][..],
        ] {
            let err = parse_args(args.iter().copied()).expect_err("--dsn is refused");
            let line = error_line(&err);
            assert!(line.contains("BENCH_DSN"), "{line}");
            assert!(line.contains("--dsn"), "{line}");
            assert!(!line.contains("hunter22"), "{line}");
        }
    }
}
