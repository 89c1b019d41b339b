//! The program's one error type. Every failure ends the program: a bad
//! command line with exit status 2, anything that goes wrong while running
//! with exit status 1, and either way one line on stderr (`stderr.rs`).

use std::error::Error as _;

/// `Usage` is a bad command line; every other variant is a failure while
/// running. The errors of the libraries the workloads call convert with
/// `?` into their own variant, which keeps the chain of causes for the
/// message.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error("usage error: {0}")]
    Usage(String),
    #[error("runtime error: {0}")]
    Runtime(String),
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    #[error(transparent)]
    Join(#[from] tokio::task::JoinError),
    #[error(transparent)]
    Acquire(#[from] tokio::sync::AcquireError),
    #[error(transparent)]
    Sqlx(#[from] sqlx::Error),
    #[error(transparent)]
    Rusqlite(#[from] rusqlite::Error),
    #[error(transparent)]
    Mysql(#[from] mysql_async::Error),
    #[error(transparent)]
    MysqlRow(#[from] mysql_async::FromRowError),
    #[error(transparent)]
    Postgres(#[from] tokio_postgres::Error),
    #[error(transparent)]
    PostgresPool(#[from] deadpool_postgres::PoolError),
    #[error(transparent)]
    PostgresPoolBuild(#[from] deadpool_postgres::BuildError),
}

impl BenchError {
    pub fn usage(msg: impl Into<String>) -> Self {
        BenchError::Usage(msg.into())
    }

    pub fn runtime(msg: impl Into<String>) -> Self {
        BenchError::Runtime(msg.into())
    }

    /// The message without the prefix `line` adds: for a library's error,
    /// its text followed by every cause that adds to it (drivers often hide
    /// the useful part in `source()`).
    pub fn message(&self) -> String {
        match self {
            BenchError::Usage(msg) | BenchError::Runtime(msg) => msg.clone(),
            other => {
                let mut msg = other.to_string();
                let mut source = other.source();
                while let Some(cause) = source {
                    let text = cause.to_string();
                    if !msg.contains(&text) {
                        msg.push_str(": ");
                        msg.push_str(&text);
                    }
                    source = cause.source();
                }
                msg
            }
        }
    }

    pub fn exit_code(&self) -> i32 {
        match self {
            BenchError::Usage(_) => 2,
            _ => 1,
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn a_bad_command_line_exits_2_anything_else_1() {
        assert_eq!(BenchError::usage("bad").exit_code(), 2);
        let io: BenchError = std::io::Error::other("disk full").into();
        assert_eq!(io.exit_code(), 1);
    }

    /// A library's error whose useful part is in its cause, as drivers
    /// give them: "query failed" caused by "the server closed the
    /// connection".
    pub(crate) fn error_with_a_cause() -> BenchError {
        #[derive(Debug, thiserror::Error)]
        #[error("the server closed the connection")]
        struct Closed;
        #[derive(Debug, thiserror::Error)]
        #[error("query failed")]
        struct Query(#[source] Closed);
        std::io::Error::other(Query(Closed)).into()
    }

    #[test]
    fn the_causes_of_a_library_error_join_its_message() {
        let err = error_with_a_cause();
        assert_eq!(
            err.message(),
            "query failed: the server closed the connection"
        );
    }
}
