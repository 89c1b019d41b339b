//! `postgres`: the `users` tasks of `sqlshared` on PostgreSQL, through sqlx
//! or tokio-postgres with a deadpool-postgres pool. `--dsn
//! postgres://user:pass@host:port/db`; `pool` = P, maximum open connections
//! (min(P, N)); idle connections stay open.
//! Parameters are bound as int4 (i32), like the columns.

use std::pin::pin;
use std::str::FromStr;

use deadpool_postgres::{Manager, ManagerConfig, RecyclingMethod};
use futures::TryStreamExt;
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use sqlx::{Connection as _, Executor as _, SqlSafeStr as _};
use tokio_postgres::NoTls;

use super::sqlshared::{
    self, ACQUIRE_TIMEOUT, Done, Input, QUERIES_DOLLAR as Q, SERVER_POOL, Tally, check_one_row,
    check_updated, context, query_error,
};
use super::{Check, Ctx, Outcome, ParamSpec, WorkloadSpec};
use crate::cli::{BenchError, Flavour, Timer};

pub const SPEC: WorkloadSpec = WorkloadSpec {
    name: "postgres",
    variants: &["pool"],
    default_variant: "pool",
    params: &[
        SERVER_POOL,
        ParamSpec {
            key: "driver",
            default: "sqlx",
            check: Check::OneOf(&["sqlx", "tokio-postgres"]),
        },
    ],
    needs_data_dir: false,
    needs_dsn: true,
    run,
};

const SUM_SQL: &str = "SELECT SUM(salary)::bigint FROM users";

fn run(ctx: &mut Ctx) -> Result<Outcome, BenchError> {
    let n = ctx.n_usize()?;
    let dsn = sqlshared::check_dsn(ctx, &["postgres", "postgresql"])?.to_string();
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
            "tokio-postgres" => with_tokio_postgres(&dsn, max_open, preopen, &inputs, timer).await,
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
    let options = PgConnectOptions::from_str(dsn).map_err(sqlshared::bad_dsn)?;
    sqlshared::probe_sqlx::<sqlx::Postgres>(&options).await?;
    let pool = PgPoolOptions::new()
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

async fn sqlx_task(pool: &PgPool, input: Input) -> Result<Done, BenchError> {
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
async fn sqlx_count(pool: &PgPool, sql: &'static str, param: i32) -> Result<u64, BenchError> {
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
// tokio-postgres + deadpool-postgres
// ---------------------------------------------------------------------------

async fn with_tokio_postgres(
    dsn: &str,
    max_open: u32,
    preopen: usize,
    inputs: &[Input],
    timer: &mut Timer,
) -> Result<(Tally, i64), BenchError> {
    let config = tokio_postgres::Config::from_str(dsn).map_err(sqlshared::bad_dsn)?;
    // Fast recycling: a connection that comes back is only checked for
    // being closed, no query is sent. Its statement cache is kept.
    let manager = Manager::from_config(
        config,
        NoTls,
        ManagerConfig {
            recycling_method: RecyclingMethod::Fast,
        },
    );
    let pool = deadpool_postgres::Pool::builder(manager)
        .max_size(max_open as usize)
        .build()?;

    let clients = futures::future::try_join_all((0..preopen).map(|_| pool.get()))
        .await
        .map_err(context("opening connections"))?;
    for client in &clients {
        client
            .simple_query("SELECT 1")
            .await
            .map_err(context("ping"))?;
        for sql in Q.all() {
            client.prepare_cached(sql).await.map_err(context(sql))?;
        }
    }
    drop(clients);

    let tally = sqlshared::run_tasks(timer, inputs, |input| {
        let pool = pool.clone();
        async move { tokio_postgres_task(&pool, input).await }
    })
    .await?;

    let client = pool.get().await?;
    let row = client
        .query_one(SUM_SQL, &[])
        .await
        .map_err(context(SUM_SQL))?;
    let sum: i64 = row.try_get(0).map_err(context(SUM_SQL))?;
    drop(client);
    pool.close();
    Ok((tally, sum))
}

/// Run a one-parameter select and count its rows, decoding every salary.
async fn count_rows(
    pool: &deadpool_postgres::Pool,
    sql: &'static str,
    param: i32,
) -> Result<u64, BenchError> {
    let client = pool.get().await?;
    let failed = |e| query_error(sql, param, e);
    let statement = client.prepare_cached(sql).await.map_err(failed)?;
    let mut rows = pin!(
        client
            .query_raw(&statement, [param])
            .await
            .map_err(failed)?
    );
    let mut count = 0u64;
    while let Some(row) = rows.try_next().await.map_err(failed)? {
        let _salary: i32 = row.try_get(0).map_err(failed)?;
        count += 1;
    }
    Ok(count)
}

async fn tokio_postgres_task(
    pool: &deadpool_postgres::Pool,
    input: Input,
) -> Result<Done, BenchError> {
    if input.updates() {
        let affected = {
            let client = pool.get().await?;
            let failed = |e| query_error(Q.update, input.id, e);
            let statement = client.prepare_cached(Q.update).await.map_err(failed)?;
            client
                .execute(&statement, &[&input.id])
                .await
                .map_err(failed)?
        };
        check_updated(affected, input.id)?;
        let count = count_rows(pool, Q.select_id, input.id).await?;
        check_one_row(count, input.id)?;
        Ok(Done::Updated)
    } else {
        let count = count_rows(pool, Q.select_age, input.age).await?;
        Ok(Done::Rows(count))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{RunArgs, mono_ns};
    use crate::workloads::sqlshared::user_rows;
    use crate::workloads::{run as run_workload, test_args};

    const DSN_VAR: &str = "BENCH_TEST_POSTGRES_DSN";

    /// Drop, create and fill the users table.
    async fn reset_table(dsn: &str) -> Result<(), BenchError> {
        let config = tokio_postgres::Config::from_str(dsn).map_err(sqlshared::bad_dsn)?;
        let (client, connection) = config.connect(NoTls).await?;
        let connection = tokio::spawn(connection);
        client
            .batch_execute(
                "DROP TABLE IF EXISTS users; \
                 CREATE TABLE users (id INT PRIMARY KEY NOT NULL, salary INT NOT NULL, \
                 age INT NOT NULL, address CHAR(50))",
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
            client.batch_execute(&sql).await?;
        }
        drop(client);
        connection.await??;
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
        for driver in ["sqlx", "tokio-postgres"] {
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
                            "postgres",
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
    fn dsn_must_be_a_postgres_url() {
        for dsn in ["mysql://u:p@127.0.0.1:1/db", "host=127.0.0.1 user=u"] {
            let args = RunArgs {
                dsn: Some(dsn.to_string()),
                ..test_args("postgres", 1, None, &[])
            };
            match run_workload(&args, mono_ns()) {
                Err(err) => assert_eq!(err.exit_code(), 2, "{dsn}: {err}"),
                Ok(report) => panic!("{dsn}: expected an error, got {report:?}"),
            }
        }
    }

    #[test]
    fn an_unreachable_server_is_a_runtime_error() {
        for driver in ["sqlx", "tokio-postgres"] {
            let args = RunArgs {
                dsn: Some("postgres://u:p@127.0.0.1:1/db".to_string()),
                ..test_args("postgres", 1, None, &[("driver", driver)])
            };
            match run_workload(&args, mono_ns()) {
                Err(err) => assert_eq!(err.exit_code(), 1, "{driver}: {err}"),
                Ok(report) => panic!("{driver}: expected an error, got {report:?}"),
            }
        }
    }
}
