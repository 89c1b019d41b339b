//! `mysql`: the `users` tasks of `sqlshared` on a MySQL-compatible server
//! (InnoDB table made by the harness), through sqlx or mysql_async.
//! BENCH_DSN=`mysql://user:pass@host:port/db`; `pool` = P, maximum open
//! connections (min(P, N)); idle connections stay open.

use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt as _;
use futures::future::BoxFuture;
use mysql_async::prelude::Queryable as _;
use mysql_async::{Conn, Opts, OptsBuilder, PoolConstraints, PoolOpts};
use sqlx::MySql;
use sqlx::mysql::MySqlQueryResult;

use super::spec::{Check, Ctx, Outcome, ParamSpec, WorkloadSpec};
use super::sqlshared::{
    self, CONNECT_TIMEOUT, Gate, QUERIES_QMARK as Q, SERVER_POOL, SERVER_VARIANT,
    STATEMENT_TIMEOUT, ServerRun, Statements, Tally, context, open_first_then_rest, within,
};
use super::sqlxusers::Dialect;
use crate::cli::error::BenchError;
use crate::cli::timer::Timer;

pub const SPEC: WorkloadSpec = WorkloadSpec {
    name: "mysql",
    variants: &[SERVER_VARIANT],
    default_variant: SERVER_VARIANT,
    params: &[
        SERVER_POOL,
        ParamSpec {
            key: "driver",
            default: "sqlx",
            check: Check::OneOf(&["sqlx", "mysql_async"]),
        },
    ],
    needs_data_dir: false,
    needs_dsn: true,
    run,
};

const SUM_SQL: &str = "SELECT CAST(SUM(salary) AS SIGNED) FROM users";

fn run(ctx: &mut Ctx) -> Result<Outcome, BenchError> {
    sqlshared::run_on_server(
        ctx,
        &["mysql"],
        &[("sqlx", sqlx_driver), ("mysql_async", mysql_async_driver)],
    )
}

// ---------------------------------------------------------------------------
// sqlx
// ---------------------------------------------------------------------------

fn sqlx_driver<'a>(
    run: &'a ServerRun,
    timer: &'a mut Timer,
) -> BoxFuture<'a, Result<(Tally, i64), BenchError>> {
    // INT columns decode as i32; the statements are prepared on one
    // connection before the timer, as database/sql does.
    Dialect::<MySql, i32>::new(Q, SUM_SQL, MySqlQueryResult::rows_affected, true)
        .on_server(run, timer)
        .boxed()
}

// ---------------------------------------------------------------------------
// mysql_async
// ---------------------------------------------------------------------------

fn mysql_async_driver<'a>(
    run: &'a ServerRun,
    timer: &'a mut Timer,
) -> BoxFuture<'a, Result<(Tally, i64), BenchError>> {
    with_mysql_async(run, timer).boxed()
}

async fn with_mysql_async(run: &ServerRun, timer: &mut Timer) -> Result<(Tally, i64), BenchError> {
    let opts = Opts::from_url(&run.dsn).map_err(sqlshared::bad_dsn)?;
    let max = run.max_open as usize;
    // min = max: idle connections are never closed. No reset when a
    // connection goes back to the pool (it would cost a round trip and drop
    // the server-side prepared statements), as with the other drivers.
    let constraints = PoolConstraints::new(max, max)
        .ok_or_else(|| BenchError::runtime(format!("bad mysql_async pool size {max}")))?;
    let pool_opts = PoolOpts::default()
        .with_constraints(constraints)
        .with_reset_connection(false)
        .with_inactive_connection_ttl(Duration::ZERO)
        .with_abs_conn_ttl(None);
    // prefer_socket(false): mysql_async would otherwise reconnect through
    // the server's Unix socket when the host is local, unlike the others.
    let pool = mysql_async::Pool::new(
        OptsBuilder::from_opts(opts)
            .pool_opts(pool_opts)
            .prefer_socket(false),
    );
    let gate = Arc::new(Gate::new(run.max_open));

    // The first connection alone, then the others at once; each is pinged,
    // and the task statements are prepared on the first (as database/sql
    // does); the others prepare them on first use.
    let mut conns = open_first_then_rest(run.preopen, || gate.connect(|| pool.get_conn())).await?;
    for held in &mut conns {
        within(CONNECT_TIMEOUT, "ping", async {
            held.conn.ping().await.map_err(context("ping"))
        })
        .await?;
    }
    if let Some(first) = conns.first_mut() {
        for sql in Q.all() {
            within(STATEMENT_TIMEOUT, sql, async {
                first.conn.prep(sql).await.map(drop).map_err(context(sql))
            })
            .await?;
        }
    }
    drop(conns);

    let tally = sqlshared::run_tasks(timer, &run.inputs, Some(&gate), |input| {
        let on_pool = OnPool {
            pool: pool.clone(),
            gate: Arc::clone(&gate),
        };
        async move { sqlshared::users_task(&on_pool, Q, None, input).await }
    })
    .await?;

    let sum: Option<i64> = within(STATEMENT_TIMEOUT, SUM_SQL, async {
        let mut conn = pool.get_conn().await.map_err(context("connecting"))?;
        conn.exec_first(SUM_SQL, ()).await.map_err(context(SUM_SQL))
    })
    .await?;
    pool.disconnect()
        .await
        .map_err(context("closing the connections"))?;
    let sum = sum.ok_or_else(|| BenchError::runtime("SELECT SUM(salary) returned no row"))?;
    Ok((tally, sum))
}

/// Run a one-parameter select and count its rows, decoding every salary.
async fn count_rows(conn: &mut Conn, sql: &'static str, param: i32) -> Result<u64, BenchError> {
    let mut result = conn.exec_iter(sql, (param,)).await?;
    let mut count = 0u64;
    while let Some(row) = result.next().await? {
        let (_salary,): (i32,) = mysql_async::from_row_opt(row)?;
        count += 1;
    }
    result.drop_result().await?;
    Ok(count)
}

/// A task's statements on the mysql_async pool, through the gate.
struct OnPool {
    pool: mysql_async::Pool,
    gate: Arc<Gate>,
}

impl Statements for OnPool {
    async fn update(&self, sql: &'static str, id: i32) -> Result<u64, BenchError> {
        let mut held = self.gate.connect(|| self.pool.get_conn()).await?;
        let conn = &mut held.conn;
        self.gate
            .statement(sql, id, async {
                conn.exec_drop(sql, (id,)).await?;
                Ok::<_, mysql_async::Error>(conn.affected_rows())
            })
            .await
    }

    async fn count(&self, sql: &'static str, param: i32) -> Result<u64, BenchError> {
        let mut held = self.gate.connect(|| self.pool.get_conn()).await?;
        self.gate
            .statement(sql, param, count_rows(&mut held.conn, sql, param))
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workloads::sqlshared::server_tests::{
        block_on, fails_with, insert_statements, reference_checksums,
    };

    /// Drop, create (InnoDB) and fill the users table.
    async fn reset_table(dsn: &str) -> Result<(), BenchError> {
        let mut conn = Conn::new(Opts::from_url(dsn).map_err(sqlshared::bad_dsn)?).await?;
        conn.query_drop("DROP TABLE IF EXISTS users").await?;
        conn.query_drop(
            "CREATE TABLE users (id INT PRIMARY KEY NOT NULL, salary INT NOT NULL, \
             age INT NOT NULL, address CHAR(50)) ENGINE=InnoDB",
        )
        .await?;
        for sql in insert_statements() {
            conn.query_drop(sql).await?;
        }
        conn.disconnect().await?;
        Ok(())
    }

    #[test]
    fn reference_checksums_on_a_server() {
        reference_checksums(
            &SPEC,
            "BENCH_TEST_MYSQL_DSN",
            &["sqlx", "mysql_async"],
            |dsn| block_on(reset_table(dsn)),
        );
    }

    #[test]
    fn dsn_must_be_a_mysql_url() {
        for dsn in ["postgres://u:p@127.0.0.1:1/db", "u:p@tcp(127.0.0.1:1)/db"] {
            fails_with(&SPEC, dsn, &[], 2);
        }
    }

    #[test]
    fn an_unreachable_server_is_a_runtime_error() {
        for driver in ["sqlx", "mysql_async"] {
            fails_with(
                &SPEC,
                "mysql://u:p@127.0.0.1:1/db",
                &[("driver", driver)],
                1,
            );
        }
    }
}
