//! `postgres`: the `users` tasks of `sqlshared` on PostgreSQL, through sqlx
//! or tokio-postgres with a deadpool-postgres pool.
//! BENCH_DSN=`postgres://user:pass@host:port/db`; `pool` = P, maximum open
//! connections (min(P, N)); idle connections stay open.
//! Parameters are bound as int4 (i32), like the columns.

use std::pin::pin;
use std::str::FromStr;
use std::sync::Arc;

use deadpool_postgres::{Manager, ManagerConfig, RecyclingMethod};
use futures::future::BoxFuture;
use futures::{FutureExt as _, TryStreamExt};
use sqlx::Postgres;
use sqlx::postgres::PgQueryResult;
use tokio_postgres::NoTls;

use super::spec::{Check, Ctx, Outcome, ParamSpec, WorkloadSpec};
use super::sqlshared::{
    self, CONNECT_TIMEOUT, Gate, QUERIES_DOLLAR as Q, SERVER_POOL, SERVER_VARIANT,
    STATEMENT_TIMEOUT, ServerRun, Statements, Tally, context, open_first_then_rest, within,
};
use super::sqlxusers::Dialect;
use crate::cli::error::BenchError;
use crate::cli::timer::Timer;

pub const SPEC: WorkloadSpec = WorkloadSpec {
    name: "postgres",
    variants: &[SERVER_VARIANT],
    default_variant: SERVER_VARIANT,
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
    // INT columns decode as i32; every connection prepares the statements
    // on first use, as pgx does.
    Dialect::<Postgres, i32>::new(Q, SUM_SQL, PgQueryResult::rows_affected, false)
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
    let gate = Arc::new(Gate::new(run.max_open));

    // The first connection alone, then the others at once; each is pinged.
    // As with pgx, every connection prepares the task statements on first
    // use.
    let clients = open_first_then_rest(run.preopen, || gate.connect(|| pool.get())).await?;
    for held in &clients {
        within(CONNECT_TIMEOUT, "ping", async {
            held.conn
                .simple_query("SELECT 1")
                .await
                .map(drop)
                .map_err(context("ping"))
        })
        .await?;
    }
    drop(clients);

    let tally = sqlshared::run_tasks(timer, &run.inputs, Some(&gate), |input| {
        let on_pool = OnPool {
            pool: pool.clone(),
            gate: Arc::clone(&gate),
        };
        async move { sqlshared::users_task(&on_pool, Q, None, input).await }
    })
    .await?;

    let sum: i64 = within(STATEMENT_TIMEOUT, SUM_SQL, async {
        let client = pool.get().await.map_err(context("connecting"))?;
        let row = client
            .query_one(SUM_SQL, &[])
            .await
            .map_err(context(SUM_SQL))?;
        row.try_get(0).map_err(context(SUM_SQL))
    })
    .await?;
    pool.close();
    Ok((tally, sum))
}

/// Run a one-parameter select (prepared on first use on this connection)
/// and count its rows, decoding every salary.
async fn count_rows(
    client: &deadpool_postgres::Client,
    sql: &'static str,
    param: i32,
) -> Result<u64, tokio_postgres::Error> {
    let statement = client.prepare_cached(sql).await?;
    let mut rows = pin!(client.query_raw(&statement, [param]).await?);
    let mut count = 0u64;
    while let Some(row) = rows.try_next().await? {
        let _salary: i32 = row.try_get(0)?;
        count += 1;
    }
    Ok(count)
}

/// A task's statements on the deadpool-postgres pool, through the gate.
struct OnPool {
    pool: deadpool_postgres::Pool,
    gate: Arc<Gate>,
}

impl Statements for OnPool {
    async fn update(&self, sql: &'static str, id: i32) -> Result<u64, BenchError> {
        let held = self.gate.connect(|| self.pool.get()).await?;
        let client = &held.conn;
        self.gate
            .statement(sql, id, async {
                let statement = client.prepare_cached(sql).await?;
                client.execute(&statement, &[&id]).await
            })
            .await
    }

    async fn count(&self, sql: &'static str, param: i32) -> Result<u64, BenchError> {
        let held = self.gate.connect(|| self.pool.get()).await?;
        self.gate
            .statement(sql, param, count_rows(&held.conn, sql, param))
            .await
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
            fails_with(&SPEC, dsn, &[], 2);
        }
    }

    #[test]
    fn an_unreachable_server_is_a_runtime_error() {
        for driver in ["sqlx", "tokio-postgres"] {
            fails_with(
                &SPEC,
                "postgres://u:p@127.0.0.1:1/db",
                &[("driver", driver)],
                1,
            );
        }
    }
}
