//! The `users` tasks of `sqlshared` through sqlx, generic over the database.
//! The sqlite, mysql and postgres workloads differ only in their connect
//! options, their placeholders, the SQL type a salary decodes to (`S`), the
//! SUM query and how a statement reports the rows it changed.

use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Duration;

use futures::TryStreamExt;
use sqlx::pool::{PoolConnection, PoolOptions};
use sqlx::{
    ColumnIndex, Connection as _, Database, Decode, Encode, Executor, IntoArguments, Pool,
    SqlSafeStr as _, Type,
};
use tokio::sync::Mutex;

use super::sqlshared::{
    self, CONNECT_TIMEOUT, Gate, Held, Input, Queries, STATEMENT_TIMEOUT, ServerRun, Statements,
    Tally, context, open_first_then_rest, within,
};
use crate::cli::error::BenchError;
use crate::cli::timer::Timer;

/// What differs between the databases, besides the pool itself; `S` is the
/// Rust type a salary decodes to.
pub struct Dialect<DB: Database, S> {
    pub queries: Queries,
    /// `SELECT SUM(salary)` as a 64-bit integer.
    pub sum_sql: &'static str,
    /// The rows an UPDATE changed (each driver's result type has its own
    /// method for it).
    pub rows_affected: fn(&DB::QueryResult) -> u64,
    /// Prepare the task statements on one connection before the timer (as
    /// Go's database/sql `DB.Prepare` does for SQLite and MySQL); otherwise
    /// (PostgreSQL, as pgx does) every connection prepares them on first use.
    /// Either way the other connections prepare them on first use.
    pub prepare_first: bool,
    salary: PhantomData<fn() -> S>,
}

// By hand: derived impls would ask DB and S to be Clone and Copy too.
impl<DB: Database, S> Clone for Dialect<DB, S> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<DB: Database, S> Copy for Dialect<DB, S> {}

/// Pool options: at most `max_open` connections, none opened ahead, none
/// closed for being idle or old, no test query when one is taken. A task
/// calls `acquire` only with a `Gate` permit in hand, so the pool never
/// makes it wait for another task: `open_timeout` bounds opening a
/// connection (sqlx retries a refused one until then).
pub fn pool_options<DB: Database>(max_open: u32, open_timeout: Duration) -> PoolOptions<DB> {
    PoolOptions::new()
        .max_connections(max_open)
        .min_connections(0)
        .idle_timeout(None)
        .max_lifetime(None)
        .test_before_acquire(false)
        .acquire_timeout(open_timeout)
}

impl<DB, S> Dialect<DB, S>
where
    DB: Database,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    DB::Arguments: IntoArguments<DB>,
    usize: ColumnIndex<DB::Row>,
    for<'q> i32: Encode<'q, DB>,
    i32: Type<DB>,
    i64: for<'r> Decode<'r, DB> + Type<DB>,
    S: for<'r> Decode<'r, DB> + Type<DB> + Send + Unpin + 'static,
{
    pub fn new(
        queries: Queries,
        sum_sql: &'static str,
        rows_affected: fn(&DB::QueryResult) -> u64,
        prepare_first: bool,
    ) -> Self {
        Dialect {
            queries,
            sum_sql,
            rows_affected,
            prepare_first,
            salary: PhantomData,
        }
    }

    /// One of the pool's connections, through the gate. When sqlx gives up
    /// opening one (it retries a refused connection until its acquire
    /// timeout and then only says it timed out), one more attempt outside
    /// the pool gets the driver's own message.
    pub async fn connection<'g>(
        &self,
        gate: &'g Gate,
        pool: &Pool<DB>,
    ) -> Result<Held<'g, PoolConnection<DB>>, BenchError> {
        gate.connection(async {
            match pool.acquire().await {
                Ok(conn) => Ok(conn),
                Err(sqlx::Error::PoolTimedOut) => {
                    sqlshared::probe_sqlx::<DB>(&pool.connect_options()).await?;
                    Err(BenchError::runtime(format!(
                        "the pool could not open a connection within {:?}",
                        pool.options().get_acquire_timeout()
                    )))
                }
                Err(err) => Err(context("connecting")(err)),
            }
        })
        .await
    }

    /// Open `count` connections before the timer: the first alone (SQLite
    /// switches the journal mode on it, which takes an exclusive lock; two
    /// connections switching at once can deadlock, reported as "database is
    /// locked" without waiting), then the others at once. Each is pinged;
    /// with `prepare_first` the task statements are prepared on the first.
    /// The connections are handed back so that the caller can check them
    /// before they go idle.
    pub async fn preopen<'g>(
        &self,
        gate: &'g Gate,
        pool: &Pool<DB>,
        count: usize,
    ) -> Result<Vec<Held<'g, PoolConnection<DB>>>, BenchError> {
        let mut conns = open_first_then_rest(count, || self.connection(gate, pool)).await?;
        for held in &mut conns {
            within(CONNECT_TIMEOUT, "ping", async {
                held.conn.ping().await.map_err(context("ping"))
            })
            .await?;
        }
        if self.prepare_first {
            let first = &mut conns[0].conn;
            for sql in self.queries.all() {
                within(STATEMENT_TIMEOUT, sql, async {
                    first
                        .prepare(sql.into_sql_str())
                        .await
                        .map(drop)
                        .map_err(context(sql))
                })
                .await?;
            }
        }
        Ok(conns)
    }

    /// Run the timed tasks on `pool`, one tokio task each. With
    /// `update_lock`, every UPDATE (with the wait for its connection) runs
    /// while holding it.
    pub async fn run_tasks(
        &self,
        pool: &Pool<DB>,
        gate: &Arc<Gate>,
        update_lock: Option<Arc<Mutex<()>>>,
        timer: &mut Timer,
        inputs: &[Input],
    ) -> Result<Tally, BenchError> {
        let dialect = *self;
        sqlshared::run_tasks(timer, inputs, Some(gate), |input| {
            let on_pool = OnPool {
                dialect,
                pool: pool.clone(),
                gate: Arc::clone(gate),
            };
            let lock = update_lock.clone();
            async move {
                sqlshared::users_task(&on_pool, dialect.queries, lock.as_deref(), input).await
            }
        })
        .await
    }

    /// Run a one-parameter select and count its rows, decoding every salary.
    async fn count(
        self,
        pool: &Pool<DB>,
        gate: &Gate,
        sql: &'static str,
        param: i32,
    ) -> Result<u64, BenchError> {
        let mut held = self.connection(gate, pool).await?;
        gate.statement(sql, param, async {
            let mut rows = sqlx::query_scalar::<DB, S>(sql)
                .bind(param)
                .fetch(&mut *held.conn);
            let mut count = 0u64;
            while let Some(_salary) = rows.try_next().await? {
                count += 1;
            }
            Ok::<_, sqlx::Error>(count)
        })
        .await
    }

    /// The whole run on a server: a probe connection (a refused one fails at
    /// once instead of being retried by the pool), the pool, the pre-open,
    /// the timed tasks and the final sum.
    pub async fn on_server(
        self,
        run: &ServerRun,
        timer: &mut Timer,
    ) -> Result<(Tally, i64), BenchError> {
        let options: <DB::Connection as sqlx::Connection>::Options =
            run.dsn.parse().map_err(sqlshared::bad_dsn)?;
        sqlshared::probe_sqlx::<DB>(&options).await?;
        let pool = pool_options::<DB>(run.max_open, CONNECT_TIMEOUT).connect_lazy_with(options);
        let gate = Arc::new(Gate::new(run.max_open));
        drop(self.preopen(&gate, &pool, run.preopen).await?);
        let tally = self
            .run_tasks(&pool, &gate, None, timer, &run.inputs)
            .await?;
        let sum = self.sum_and_close(&pool).await?;
        Ok((tally, sum))
    }

    /// Read `SUM(salary)` after the timer, then close every connection.
    pub async fn sum_and_close(&self, pool: &Pool<DB>) -> Result<i64, BenchError> {
        let sum: i64 = within(STATEMENT_TIMEOUT, self.sum_sql, async {
            sqlx::query_scalar(self.sum_sql)
                .fetch_one(pool)
                .await
                .map_err(context(self.sum_sql))
        })
        .await?;
        sqlshared::close_sqlx_pool(pool)
            .await
            .map_err(context("closing the connections"))?;
        Ok(sum)
    }
}

/// A task's statements on a sqlx pool, through the gate.
struct OnPool<DB: Database, S> {
    dialect: Dialect<DB, S>,
    pool: Pool<DB>,
    gate: Arc<Gate>,
}

impl<DB, S> Statements for OnPool<DB, S>
where
    DB: Database,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    DB::Arguments: IntoArguments<DB>,
    usize: ColumnIndex<DB::Row>,
    for<'q> i32: Encode<'q, DB>,
    i32: Type<DB>,
    i64: for<'r> Decode<'r, DB> + Type<DB>,
    S: for<'r> Decode<'r, DB> + Type<DB> + Send + Unpin + 'static,
{
    async fn update(&self, sql: &'static str, id: i32) -> Result<u64, BenchError> {
        let mut held = self.dialect.connection(&self.gate, &self.pool).await?;
        let result = self
            .gate
            .statement(
                sql,
                id,
                sqlx::query::<DB>(sql).bind(id).execute(&mut *held.conn),
            )
            .await?;
        Ok((self.dialect.rows_affected)(&result))
    }

    async fn count(&self, sql: &'static str, param: i32) -> Result<u64, BenchError> {
        self.dialect.count(&self.pool, &self.gate, sql, param).await
    }
}
