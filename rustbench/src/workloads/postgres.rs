//! `postgres`: the `users` tasks of `sqlshared` on PostgreSQL, through sqlx
//! or tokio-postgres with a deadpool-postgres pool.
//! BENCH_DSN=`postgres://user:pass@host:port/db`; `pool` = P, maximum open
//! connections (min(P, N)); idle connections stay open.
//! Parameters are bound as int4 (i32), like the columns.

use std::pin::pin;
use std::str::FromStr;

use deadpool_postgres::{Manager, ManagerConfig, RecyclingMethod};
use futures::future::BoxFuture;
use futures::{FutureExt as _, TryStreamExt};
use sqlx::Postgres;
use sqlx::postgres::PgQueryResult;
use tokio_postgres::NoTls;

use super::sqlshared::{
    self, Done, Input, QUERIES_DOLLAR as Q, SERVER_POOL, ServerRun, Tally, check_one_row,
    check_updated, context, query_error,
};
use super::sqlxusers::Dialect;
use super::{Check, Ctx, Outcome, ParamSpec, WorkloadSpec};
use crate::cli::{BenchError, Timer};

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
    sqlshared::run_on_server(
        ctx,
        &["postgres", "postgresql"],
        &[
            ("sqlx", sqlx_driver),
            ("tokio-postgres", tokio_postgres_driver),
        ],
    )
}

// ---------------------------------------------------------------------------
// sqlx
// ---------------------------------------------------------------------------

fn sqlx_driver<'a>(
    run: &'a ServerRun,
    timer: &'a mut Timer,
) -> BoxFuture<'a, Result<(Tally, i64), BenchError>> {
    // INT columns decode as i32.
    Dialect::<Postgres, i32>::new(Q, SUM_SQL, PgQueryResult::rows_affected)
        .on_server(run, timer)
        .boxed()
}

// ---------------------------------------------------------------------------
// tokio-postgres + deadpool-postgres
// ---------------------------------------------------------------------------

fn tokio_postgres_driver<'a>(
    run: &'a ServerRun,
    timer: &'a mut Timer,
) -> BoxFuture<'a, Result<(Tally, i64), BenchError>> {
    with_tokio_postgres(run, timer).boxed()
}

async fn with_tokio_postgres(
    run: &ServerRun,
    timer: &mut Timer,
) -> Result<(Tally, i64), BenchError> {
    let config = tokio_postgres::Config::from_str(&run.dsn).map_err(sqlshared::bad_dsn)?;
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
        .max_size(run.max_open as usize)
        .build()?;

    let clients = futures::future::try_join_all((0..run.preopen).map(|_| pool.get()))
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

    let tally = sqlshared::run_tasks(timer, &run.inputs, |input| {
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
    use crate::workloads::sqlshared::server_tests::{
        block_on, fails_with, insert_statements, reference_checksums,
    };

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
        for sql in insert_statements() {
            client.batch_execute(&sql).await?;
        }
        drop(client);
        connection.await??;
        Ok(())
    }

    #[test]
    fn reference_checksums_on_a_server() {
        reference_checksums(
            &SPEC,
            "BENCH_TEST_POSTGRES_DSN",
            &["sqlx", "tokio-postgres"],
            |dsn| block_on(reset_table(dsn)),
        );
    }

    #[test]
    fn dsn_must_be_a_postgres_url() {
        for dsn in ["mysql://u:p@127.0.0.1:1/db", "host=127.0.0.1 user=u"] {
            fails_with("postgres", dsn, &[], 2);
        }
    }

    #[test]
    fn an_unreachable_server_is_a_runtime_error() {
        for driver in ["sqlx", "tokio-postgres"] {
            fails_with(
                "postgres",
                "postgres://u:p@127.0.0.1:1/db",
                &[("driver", driver)],
                1,
            );
        }
    }
}
