//! `mysql`: the `users` tasks of `sqlshared` on a MySQL-compatible server
//! (InnoDB table made by the harness), through sqlx or mysql_async.
//! `--dsn mysql://user:pass@host:port/db`; `pool` = P, maximum open
//! connections (min(P, N)); idle connections stay open.

use std::str::FromStr;
use std::time::Duration;

use futures::TryStreamExt;
use mysql_async::prelude::Queryable as _;
use mysql_async::{Conn, Opts, OptsBuilder, PoolConstraints, PoolOpts};
use sqlx::mysql::{MySqlConnectOptions, MySqlPool, MySqlPoolOptions};
use sqlx::{Connection as _, Executor as _, SqlSafeStr as _};

use super::sqlshared::{
    self, ACQUIRE_TIMEOUT, Done, Input, QUERIES_QMARK as Q, SERVER_POOL, Tally, check_one_row,
    check_updated, context, query_error,
};
use super::{Check, Ctx, Outcome, ParamSpec, WorkloadSpec};
use crate::cli::{BenchError, Flavour, Timer};

pub const SPEC: WorkloadSpec = WorkloadSpec {
    name: "mysql",
    variants: &["pool"],
    default_variant: "pool",
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
    let n = ctx.n_usize()?;
    let dsn = sqlshared::check_dsn(ctx, &["mysql"])?.to_string();
    let pool = ctx.param_u64("pool")?;
    let max_open = sqlshared::max_open(pool, ctx.n)?;
    let preopen = sqlshared::preopen_count(pool, ctx.n) as usize;
    let driver = ctx.param("driver")?.to_string();
    let inputs = sqlshared::inputs(n);
    ctx.set_extra("max_open_connections", max_open);
    ctx.set_extra("preopened_connections", preopen as u64);

    let runtime = ctx.runtime(Flavour::MultiThread)?;
    let timer = &mut ctx.timer;
    let (tally, sum) = runtime.block_on(async {
        match driver.as_str() {
            "sqlx" => with_sqlx(&dsn, max_open, preopen, &inputs, timer).await,
            "mysql_async" => with_mysql_async(&dsn, max_open, preopen, &inputs, timer).await,
            other => Err(BenchError::runtime(format!("unhandled driver '{other}'"))),
        }
    })?;
    drop(runtime);
    Ok(Outcome {
        checksum: tally.checksum(sum),
        tasks_ok: tally.tasks_ok,
    })
}

// ---------------------------------------------------------------------------
// sqlx
// ---------------------------------------------------------------------------

async fn with_sqlx(
    dsn: &str,
    max_open: u32,
    preopen: usize,
    inputs: &[Input],
    timer: &mut Timer,
) -> Result<(Tally, i64), BenchError> {
    let options = MySqlConnectOptions::from_str(dsn).map_err(sqlshared::bad_dsn)?;
    sqlshared::probe_sqlx::<sqlx::MySql>(&options).await?;
    let pool = MySqlPoolOptions::new()
        .max_connections(max_open)
        .min_connections(0)
        .idle_timeout(None)
        .max_lifetime(None)
        .test_before_acquire(false)
        .acquire_timeout(ACQUIRE_TIMEOUT)
        .connect_lazy_with(options);

    // Open the pre-opened connections at once, ping each and prepare the
    // task statements into its cache.
    let mut conns = futures::future::try_join_all((0..preopen).map(|_| pool.acquire()))
        .await
        .map_err(context("opening connections"))?;
    for conn in &mut conns {
        conn.ping().await.map_err(context("ping"))?;
        for sql in Q.all() {
            conn.prepare(sql.into_sql_str())
                .await
                .map_err(context(sql))?;
        }
    }
    drop(conns);

    let tally = sqlshared::run_tasks(timer, inputs, |input| {
        let pool = pool.clone();
        async move { sqlx_task(&pool, input).await }
    })
    .await?;

    let sum: i64 = sqlx::query_scalar(SUM_SQL)
        .fetch_one(&pool)
        .await
        .map_err(context(SUM_SQL))?;
    sqlshared::close_sqlx_pool(&pool)
        .await
        .map_err(context("closing the connections"))?;
    Ok((tally, sum))
}

async fn sqlx_task(pool: &MySqlPool, input: Input) -> Result<Done, BenchError> {
    if input.updates() {
        let result = sqlx::query(Q.update)
            .bind(input.id)
            .execute(pool)
            .await
            .map_err(|e| query_error(Q.update, input.id, e))?;
        check_updated(result.rows_affected(), input.id)?;
        let count = sqlx_count(pool, Q.select_id, input.id).await?;
        check_one_row(count, input.id)?;
        Ok(Done::Updated)
    } else {
        Ok(Done::Rows(sqlx_count(pool, Q.select_age, input.age).await?))
    }
}

/// Run a one-parameter select and count its rows, decoding every salary.
async fn sqlx_count(pool: &MySqlPool, sql: &'static str, param: i32) -> Result<u64, BenchError> {
    let mut rows = sqlx::query_scalar::<_, i32>(sql).bind(param).fetch(pool);
    let mut count = 0u64;
    while let Some(_salary) = rows
        .try_next()
        .await
        .map_err(|e| query_error(sql, param, e))?
    {
        count += 1;
    }
    Ok(count)
}

// ---------------------------------------------------------------------------
// mysql_async
// ---------------------------------------------------------------------------

async fn with_mysql_async(
    dsn: &str,
    max_open: u32,
    preopen: usize,
    inputs: &[Input],
    timer: &mut Timer,
) -> Result<(Tally, i64), BenchError> {
    let opts = Opts::from_url(dsn).map_err(sqlshared::bad_dsn)?;
    let max = max_open as usize;
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

    let mut conns = futures::future::try_join_all((0..preopen).map(|_| pool.get_conn()))
        .await
        .map_err(context("opening connections"))?;
    for conn in &mut conns {
        conn.ping().await.map_err(context("ping"))?;
        for sql in Q.all() {
            conn.prep(sql).await.map_err(context(sql))?;
        }
    }
    drop(conns);

    let tally = sqlshared::run_tasks(timer, inputs, |input| {
        let pool = pool.clone();
        async move { mysql_async_task(&pool, input).await }
    })
    .await?;

    let mut conn = pool.get_conn().await?;
    let sum: Option<i64> = conn
        .exec_first(SUM_SQL, ())
        .await
        .map_err(context(SUM_SQL))?;
    drop(conn);
    pool.disconnect()
        .await
        .map_err(context("closing the connections"))?;
    let sum = sum.ok_or_else(|| BenchError::runtime("SELECT SUM(salary) returned no row"))?;
    Ok((tally, sum))
}

/// Run a one-parameter select and count its rows, decoding every salary.
async fn count_rows(conn: &mut Conn, sql: &'static str, param: i32) -> Result<u64, BenchError> {
    let failed = |e| query_error(sql, param, e);
    let mut result = conn.exec_iter(sql, (param,)).await.map_err(failed)?;
    let mut count = 0u64;
    while let Some(row) = result.next().await.map_err(failed)? {
        let (_salary,): (i32,) =
            mysql_async::from_row_opt(row).map_err(|e| query_error(sql, param, e))?;
        count += 1;
    }
    result.drop_result().await.map_err(failed)?;
    Ok(count)
}

async fn mysql_async_task(pool: &mysql_async::Pool, input: Input) -> Result<Done, BenchError> {
    if input.updates() {
        let mut conn = pool.get_conn().await?;
        conn.exec_drop(Q.update, (input.id,))
            .await
            .map_err(|e| query_error(Q.update, input.id, e))?;
        check_updated(conn.affected_rows(), input.id)?;
        drop(conn);
        let mut conn = pool.get_conn().await?;
        let count = count_rows(&mut conn, Q.select_id, input.id).await?;
        check_one_row(count, input.id)?;
        Ok(Done::Updated)
    } else {
        let mut conn = pool.get_conn().await?;
        let count = count_rows(&mut conn, Q.select_age, input.age).await?;
        Ok(Done::Rows(count))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{RunArgs, mono_ns};
    use crate::workloads::sqlshared::user_rows;
    use crate::workloads::{run as run_workload, test_args};

    const DSN_VAR: &str = "BENCH_TEST_MYSQL_DSN";

    /// Drop, create (InnoDB) and fill the users table.
    async fn reset_table(dsn: &str) -> Result<(), BenchError> {
        let mut conn = Conn::new(Opts::from_url(dsn).map_err(sqlshared::bad_dsn)?).await?;
        conn.query_drop("DROP TABLE IF EXISTS users").await?;
        conn.query_drop(
            "CREATE TABLE users (id INT PRIMARY KEY NOT NULL, salary INT NOT NULL, \
             age INT NOT NULL, address CHAR(50)) ENGINE=InnoDB",
        )
        .await?;
        for chunk in user_rows().chunks(1000) {
            let values: Vec<String> = chunk
                .iter()
                .map(|(id, salary, age)| format!("({id},{salary},{age},'Somewhere')"))
                .collect();
            let sql = format!(
                "INSERT INTO users (id, salary, age, address) VALUES {}",
                values.join(",")
            );
            conn.query_drop(sql).await?;
        }
        conn.disconnect().await?;
        Ok(())
    }

    fn reset(dsn: &str) {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(reset_table(dsn))
            .unwrap();
    }

    #[test]
    fn reference_checksums_on_a_server() {
        let Ok(dsn) = std::env::var(DSN_VAR) else {
            println!("skipped: {DSN_VAR} is not set");
            return;
        };
        for driver in ["sqlx", "mysql_async"] {
            for variant in SPEC.variants {
                for (n, pool, expected) in [
                    (10, "64", "00000000000f43b7"),
                    (1000, "64", "00000000000ffd24"),
                    (10_000, "64", "0000000000170b58"),
                    (1000, "1", "00000000000ffd24"),
                ] {
                    reset(&dsn);
                    let args = RunArgs {
                        dsn: Some(dsn.clone()),
                        ..test_args(
                            "mysql",
                            n,
                            Some(variant),
                            &[("driver", driver), ("pool", pool)],
                        )
                    };
                    let report = run_workload(&args, mono_ns())
                        .unwrap_or_else(|e| panic!("{driver} N={n} pool={pool}: {e}"));
                    assert_eq!(report.checksum, expected, "{driver} N={n} pool={pool}");
                    assert_eq!(report.tasks_ok, n);
                }
            }
        }
    }

    #[test]
    fn dsn_must_be_a_mysql_url() {
        for dsn in ["postgres://u:p@127.0.0.1:1/db", "u:p@tcp(127.0.0.1:1)/db"] {
            let args = RunArgs {
                dsn: Some(dsn.to_string()),
                ..test_args("mysql", 1, None, &[])
            };
            match run_workload(&args, mono_ns()) {
                Err(err) => assert_eq!(err.exit_code(), 2, "{dsn}: {err}"),
                Ok(report) => panic!("{dsn}: expected an error, got {report:?}"),
            }
        }
    }

    #[test]
    fn an_unreachable_server_is_a_runtime_error() {
        for driver in ["sqlx", "mysql_async"] {
            let args = RunArgs {
                dsn: Some("mysql://u:p@127.0.0.1:1/db".to_string()),
                ..test_args("mysql", 1, None, &[("driver", driver)])
            };
            match run_workload(&args, mono_ns()) {
                Err(err) => assert_eq!(err.exit_code(), 1, "{driver}: {err}"),
                Ok(report) => panic!("{driver}: expected an error, got {report:?}"),
            }
        }
    }
}
