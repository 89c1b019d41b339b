//! What the sqlite, mysql and postgres workloads share: the `users` data,
//! the task inputs, the queries, the task itself (`users_task`, on the
//! `Statements` of each driver), the task loop and the checksum.
//!
//! Table: `users(id INT PRIMARY KEY NOT NULL, salary INT NOT NULL, age INT
//! NOT NULL, address CHAR(50))`, 10,000 rows, row k =
//! `(k, lcg(7)[k] % 201, lcg(9)[k] % 100, 'Somewhere')`.
//!
//! Task i: `age = lcg(42)[i] % 100`, `id = lcg(17)[i] % 10000`. Even age:
//! update the salary of `id` (exactly one row affected), then select it
//! back (exactly one row). Odd age: select every salary of that age,
//! ordered by id, reading every row. Checksum: updates + rows returned by
//! the odd-age queries + `SUM(salary)` read after the timer has stopped.

use std::future::Future;
use std::sync::OnceLock;
use std::time::Duration;

use futures::future::BoxFuture;
use tokio::sync::{Mutex, Notify, Semaphore, SemaphorePermit};

use super::spec::{Check, Ctx, Outcome, ParamSpec};
use crate::cli::error::BenchError;
use crate::cli::result::Flavour;
use crate::cli::timer::Timer;
use crate::lcg;

/// Rows in the `users` table.
pub const USERS: usize = 10_000;

/// Largest pool size accepted (sqlx counts connections in a u32).
pub const MAX_POOL: u64 = u32::MAX as u64;

/// How long opening one connection may take (and, for a connection taken
/// from the pool, the driver's own check of it).
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// How long one statement may take once its task holds a connection: from
/// sending it to the last row read. The wait for a pooled connection is not
/// counted, so N = 100,000 tasks on a pool of 64 wait as long as they must.
/// Every statement is a primary-key update or lookup or a select of about
/// 100 rows from a 10,000-row table: milliseconds even on a loaded server,
/// so 30 s is three orders of magnitude of headroom, and it still ends a
/// stuck server's run with the driver's own words well inside the harness's
/// 120 s sample timeout. (A killed server closes its sockets, so statements
/// in flight fail at once; this bounds a server that stops answering.)
pub const STATEMENT_TIMEOUT: Duration = Duration::from_secs(30);

/// What the tasks of a database run share to get connections, and what
/// makes them fail fast once one of them failed.
///
/// A task first takes one of `max_open` permits: that is the wait for a
/// pooled connection, as long as it takes. With a permit in hand the
/// driver's own pool never waits for another task, so what the driver's
/// acquire does is open (or check) a connection, which the caller bounds by
/// `CONNECT_TIMEOUT`. Every statement on a server is bounded by
/// `STATEMENT_TIMEOUT`; one on a local file (`Gate::local`) is not.
///
/// The first acquire or statement that fails closes the gate: `run_tasks`
/// stops waiting and reports that failure, tasks inside a driver's acquire
/// (sqlx retries a refused connection until its acquire timeout) fail at
/// once, and a task that gets a permit later fails without connecting. A
/// killed server therefore ends the run within moments of its first failed
/// statement, instead of every remaining task trying (or retrying) to
/// connect in turn.
pub struct Gate {
    permits: Semaphore,
    statement_timeout: Option<Duration>,
    failure: OnceLock<String>,
    closed: Notify,
}

/// A connection a task holds with its permit; the connection goes back to
/// its pool before the permit is released (fields drop in order).
pub struct Held<'g, C> {
    pub conn: C,
    _permit: SemaphorePermit<'g>,
}

impl Gate {
    pub fn new(max_open: u32) -> Self {
        Self::with_statement_timeout(max_open, STATEMENT_TIMEOUT)
    }

    /// A gate for a database in a local file (SQLite): no server can die
    /// mid-statement, so a statement is not bounded in time, as Go's
    /// SQLite statements are not (they run with `context.Background()`);
    /// no timer is armed per statement.
    pub fn local(max_open: u32) -> Self {
        Self::build(max_open, None)
    }

    fn with_statement_timeout(max_open: u32, statement_timeout: Duration) -> Self {
        Self::build(max_open, Some(statement_timeout))
    }

    fn build(max_open: u32, statement_timeout: Option<Duration>) -> Self {
        Gate {
            permits: Semaphore::new(max_open as usize),
            statement_timeout,
            failure: OnceLock::new(),
            closed: Notify::new(),
        }
    }

    /// Take a connection: a permit, then `take` (the driver's acquire, with
    /// its time bound), raced with the gate's closing.
    pub async fn connection<C, F>(&self, take: F) -> Result<Held<'_, C>, BenchError>
    where
        F: Future<Output = Result<C, BenchError>>,
    {
        if self.is_closed() {
            return Err(self.closed_error());
        }
        let permit = self
            .permits
            .acquire()
            .await
            .map_err(|_| BenchError::runtime("the connection permits were closed"))?;
        let conn = self
            .unless_closed(take)
            .await
            .inspect_err(|e| self.close(e))?;
        Ok(Held {
            conn,
            _permit: permit,
        })
    }

    /// Take a connection with `take`, a driver's acquire that opens a
    /// connection when none is idle (or checks an idle one): `connection`,
    /// with the acquire bounded by `CONNECT_TIMEOUT` and its failure saying
    /// "connecting". `take` is called once the permit is held.
    pub async fn connect<C, E, F, T>(&self, take: T) -> Result<Held<'_, C>, BenchError>
    where
        T: FnOnce() -> F,
        F: Future<Output = Result<C, E>>,
        BenchError: From<E>,
    {
        self.connection(within(CONNECT_TIMEOUT, "connecting", async {
            take().await.map_err(context("connecting"))
        }))
        .await
    }

    /// Run one statement (`sql` with its parameter) on a held connection,
    /// within the gate's statement timeout (`STATEMENT_TIMEOUT` for a
    /// server; none for a local file). A failure closes the gate.
    pub async fn statement<T, E, F>(&self, sql: &str, param: i32, run: F) -> Result<T, BenchError>
    where
        F: Future<Output = Result<T, E>>,
        BenchError: From<E>,
    {
        let result = match self.statement_timeout {
            None => run.await.map_err(|e| query_error(sql, param, e)),
            Some(limit) => match tokio::time::timeout(limit, run).await {
                Ok(result) => result.map_err(|e| query_error(sql, param, e)),
                Err(_) => Err(BenchError::runtime(format!(
                    "{sql} [{param}]: no answer from the server within {limit:?}"
                ))),
            },
        };
        result.inspect_err(|e| self.close(e))
    }

    /// `run`, unless the gate closes first (or already has).
    async fn unless_closed<T, F>(&self, run: F) -> Result<T, BenchError>
    where
        F: Future<Output = Result<T, BenchError>>,
    {
        let closed = self.closed.notified();
        tokio::pin!(closed);
        // Registered before the check, so a close in between is not missed.
        closed.as_mut().enable();
        if self.failure.get().is_some() {
            return Err(self.closed_error());
        }
        tokio::select! {
            biased;
            () = &mut closed => Err(self.closed_error()),
            result = run => result,
        }
    }

    /// Close the gate with `err` as the first failure (a later one is not
    /// recorded: the first is what the run reports). Tasks waiting for a
    /// permit are not woken: `run_tasks` stops waiting for them.
    pub fn close(&self, err: &BenchError) {
        let _ = self.failure.set(err.message().to_string());
        self.closed.notify_waiters();
    }

    /// Whether a failure has closed the gate.
    pub fn is_closed(&self) -> bool {
        self.failure.get().is_some()
    }

    /// The first failure, as the run reports it.
    pub fn first_failure(&self) -> BenchError {
        BenchError::runtime(self.failure.get().map_or("(no message)", String::as_str))
    }

    fn closed_error(&self) -> BenchError {
        let first = self.failure.get().map_or("(no message)", String::as_str);
        BenchError::runtime(format!(
            "not run: an earlier connection or statement failed: {first}"
        ))
    }
}

/// `run` within `limit`, else an error saying what took too long.
pub async fn within<T, F>(limit: Duration, what: &str, run: F) -> Result<T, BenchError>
where
    F: Future<Output = Result<T, BenchError>>,
{
    match tokio::time::timeout(limit, run).await {
        Ok(result) => result,
        Err(_) => Err(BenchError::runtime(format!(
            "{what}: no answer within {} s",
            limit.as_secs()
        ))),
    }
}

/// The one variant of the server workloads (mysql, postgres), the one
/// `run_on_server` runs: tasks on the driver's pool.
pub const SERVER_VARIANT: &str = "pool";

/// The `pool` param of the server workloads (mysql, postgres).
pub const SERVER_POOL: ParamSpec = ParamSpec {
    key: "pool",
    default: "64",
    check: Check::UInt {
        min: 1,
        max: MAX_POOL,
    },
};

/// The three task queries with a placeholder style.
#[derive(Debug, Clone, Copy)]
pub struct Queries {
    pub update: &'static str,
    pub select_id: &'static str,
    pub select_age: &'static str,
}

/// `?` placeholders (SQLite, MySQL).
pub const QUERIES_QMARK: Queries = Queries {
    update: "UPDATE users SET salary = salary + 1 WHERE id = ?",
    select_id: "SELECT salary FROM users WHERE id = ?",
    select_age: "SELECT salary FROM users WHERE age = ? ORDER BY id",
};

/// `$1` placeholders (PostgreSQL).
pub const QUERIES_DOLLAR: Queries = Queries {
    update: "UPDATE users SET salary = salary + 1 WHERE id = $1",
    select_id: "SELECT salary FROM users WHERE id = $1",
    select_age: "SELECT salary FROM users WHERE age = $1 ORDER BY id",
};

impl Queries {
    pub fn all(&self) -> [&'static str; 3] {
        [self.update, self.select_id, self.select_age]
    }
}

/// One task's input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Input {
    pub age: i32,
    pub id: i32,
}

impl Input {
    /// Even ages update, odd ages select by age.
    pub fn updates(&self) -> bool {
        self.age % 2 == 0
    }
}

/// Inputs of N tasks.
pub fn inputs(n: usize) -> Vec<Input> {
    let ages = lcg::sequence(42, n, 100);
    let ids = lcg::sequence(17, n, USERS as u64);
    // ages < 100 and ids < 10,000 fit in i32.
    ages.into_iter()
        .zip(ids)
        .map(|(age, id)| Input {
            age: age as i32,
            id: id as i32,
        })
        .collect()
}

/// What one task did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Done {
    /// Updated one row and read it back.
    Updated,
    /// Read this many rows by age.
    Rows(u64),
}

/// Totals over all tasks.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Tally {
    pub updates: u64,
    pub rows: u64,
    pub tasks_ok: u64,
}

impl Tally {
    fn add(&mut self, done: Done) {
        match done {
            Done::Updated => self.updates += 1,
            Done::Rows(rows) => self.rows += rows,
        }
        self.tasks_ok += 1;
    }

    /// updates + rows + SUM(salary), wrapping.
    pub fn checksum(&self, salary_sum: i64) -> u64 {
        self.updates
            .wrapping_add(self.rows)
            .wrapping_add(salary_sum as u64)
    }
}

/// The UPDATE must change exactly one row.
pub fn check_updated(affected: u64, id: i32) -> Result<(), BenchError> {
    if affected == 1 {
        Ok(())
    } else {
        Err(BenchError::runtime(format!(
            "UPDATE of users.id = {id} affected {affected} rows, expected 1"
        )))
    }
}

/// The select by id must return exactly one row.
pub fn check_one_row(rows: u64, id: i32) -> Result<(), BenchError> {
    if rows == 1 {
        Ok(())
    } else {
        Err(BenchError::runtime(format!(
            "SELECT of users.id = {id} returned {rows} rows, expected 1"
        )))
    }
}

/// The statements of one task as a driver runs them: each on a connection
/// of its own, taken from the driver's pool and given back before the next
/// (as database/sql does for every statement), a failure naming the
/// statement and its parameter.
pub trait Statements {
    /// Run the UPDATE `sql` for `id`; the rows it changed.
    fn update(
        &self,
        sql: &'static str,
        id: i32,
    ) -> impl Future<Output = Result<u64, BenchError>> + Send;

    /// Run the one-parameter select `sql`, decoding every salary; the rows
    /// it read.
    fn count(
        &self,
        sql: &'static str,
        param: i32,
    ) -> impl Future<Output = Result<u64, BenchError>> + Send;
}

/// One task (see the top of this module), whatever the driver: an odd age
/// selects by age and counts the rows; an even age updates `id` (exactly
/// one row changed), then selects it back (exactly one row). With
/// `update_lock` (variant `serialized-writes`) the UPDATE, with the wait for
/// its connection, runs while holding it.
pub async fn users_task(
    statements: &impl Statements,
    queries: Queries,
    update_lock: Option<&Mutex<()>>,
    input: Input,
) -> Result<Done, BenchError> {
    if !input.updates() {
        let rows = statements.count(queries.select_age, input.age).await?;
        return Ok(Done::Rows(rows));
    }
    let affected = {
        let _guard = match update_lock {
            Some(lock) => Some(lock.lock().await),
            None => None,
        };
        statements.update(queries.update, input.id).await?
    };
    check_updated(affected, input.id)?;
    let rows = statements.count(queries.select_id, input.id).await?;
    check_one_row(rows, input.id)?;
    Ok(Done::Updated)
}

/// The pool's maximum of open connections: `min(P, N)`, or N when the pool
/// is unlimited (P = 0). N tasks never use more than N connections at
/// once; the cap keeps a pool that returns connections asynchronously
/// (sqlx, mysql_async) from opening extra ones while the timer runs.
pub fn max_open(pool: u64, n: u64) -> Result<u32, BenchError> {
    let max = if pool == 0 { n } else { pool.min(n) };
    u32::try_from(max).map_err(|_| {
        BenchError::usage(format!(
            "a pool of more than {MAX_POOL} connections is not supported (pool {pool}, --n {n})"
        ))
    })
}

/// Connections to open and ping before the timer: `min(P, N)`, or
/// `min(N, 8)` when the pool is unlimited (P = 0).
pub fn preopen_count(pool: u64, n: u64) -> u64 {
    if pool == 0 { n.min(8) } else { pool.min(n) }
}

/// BENCH_DSN must be a URL with one of the given schemes. The message
/// never repeats the value, which may hold a password.
pub fn check_dsn<'a>(ctx: &'a Ctx, schemes: &[&str]) -> Result<&'a str, BenchError> {
    let dsn = ctx.dsn()?;
    let ok = schemes.iter().any(|scheme| {
        dsn.strip_prefix(scheme)
            .is_some_and(|rest| rest.starts_with("://"))
    });
    if ok {
        Ok(dsn)
    } else {
        Err(BenchError::usage(format!(
            "{} must be a {}:// URL",
            crate::cli::dsn::DSN_ENV,
            schemes.join("://, ")
        )))
    }
}

/// Opens `count` connections with `open`: the first alone, so that a wrong
/// password or a refused server fails once with its own message, then the
/// others at once.
pub async fn open_first_then_rest<T, F, Fut>(count: usize, open: F) -> Result<Vec<T>, BenchError>
where
    F: Fn() -> Fut,
    Fut: Future<Output = Result<T, BenchError>>,
{
    let mut out = Vec::with_capacity(count);
    if count == 0 {
        return Ok(out);
    }
    out.push(
        open()
            .await
            .map_err(context("opening the first connection"))?,
    );
    out.extend(
        futures::future::try_join_all((1..count).map(|_| open()))
            .await
            .map_err(context("opening connections"))?,
    );
    Ok(out)
}

/// Prefix an error with what was being done.
pub fn context<E>(what: &str) -> impl FnOnce(E) -> BenchError + '_
where
    BenchError: From<E>,
{
    move |err| match BenchError::from(err) {
        BenchError::Runtime(msg) => BenchError::Runtime(format!("{what}: {msg}")),
        other => other,
    }
}

/// A failed query, with the statement and its parameter in the message.
pub fn query_error<E>(sql: &str, param: i32, err: E) -> BenchError
where
    BenchError: From<E>,
{
    context(&format!("{sql} [{param}]"))(err)
}

/// Connect once outside the pool (within `CONNECT_TIMEOUT`) and close
/// again. The sqlx pool retries a refused connection until its acquire
/// timeout and then reports only that it timed out; this fails at once with
/// the driver's own message, as the other drivers do.
pub async fn probe_sqlx<DB: sqlx::Database>(
    options: &<DB::Connection as sqlx::Connection>::Options,
) -> Result<(), BenchError> {
    use sqlx::{ConnectOptions as _, Connection as _};
    within(CONNECT_TIMEOUT, "connecting", async {
        let conn: DB::Connection = options.connect().await.map_err(context("connecting"))?;
        conn.close()
            .await
            .map_err(context("closing the probe connection"))?;
        Ok(())
    })
    .await
}

/// Close every connection of a sqlx pool whose connections are all idle,
/// reporting the first error (`Pool::close` would discard them), then the
/// pool itself.
pub async fn close_sqlx_pool<DB: sqlx::Database>(pool: &sqlx::Pool<DB>) -> Result<(), BenchError> {
    let open = pool.size() as usize;
    let conns = futures::future::try_join_all((0..open).map(|_| pool.acquire())).await?;
    for conn in conns {
        conn.close().await?;
    }
    pool.close().await;
    Ok(())
}

/// A DSN the driver could not parse is a usage error (exit status 2). The
/// driver's message goes through the password redaction of
/// `BenchError::line` like every other.
pub fn bad_dsn(err: impl std::fmt::Display) -> BenchError {
    BenchError::usage(format!("bad {}: {err}", crate::cli::dsn::DSN_ENV))
}

/// Spawn one tokio task per input, await the handles in spawn order. The
/// timer runs from just before the first spawn to the last result.
///
/// With a `gate`, the wait stops as soon as the gate closes, with its first
/// failure: the run is lost, and the tasks still waiting (for a connection,
/// say) are dropped with the runtime instead of each failing in turn.
pub async fn run_tasks<F, Fut>(
    timer: &mut Timer,
    inputs: &[Input],
    gate: Option<&Gate>,
    task: F,
) -> Result<Tally, BenchError>
where
    F: Fn(Input) -> Fut,
    Fut: Future<Output = Result<Done, BenchError>> + Send + 'static,
{
    let mut handles = Vec::with_capacity(inputs.len());
    let mut tally = Tally::default();
    let closed = gate.map(|gate| gate.closed.notified());
    tokio::pin!(closed);
    if let Some(closed) = closed.as_mut().as_pin_mut() {
        // Registered before any task runs: no close can be missed.
        closed.enable();
    }
    let gate_closed = async {
        match closed.as_mut().as_pin_mut() {
            Some(closed) => closed.await,
            None => std::future::pending().await,
        }
    };
    tokio::pin!(gate_closed);
    timer.start();
    for &input in inputs {
        // Spawning a million tasks takes seconds: a closed gate stops it too.
        if let Some(gate) = gate.filter(|gate| gate.is_closed()) {
            return Err(gate.first_failure());
        }
        handles.push(tokio::spawn(task(input)));
    }
    timer.mark_spawned();
    for handle in handles {
        let done = tokio::select! {
            biased;
            result = handle => result??,
            () = &mut gate_closed => return Err(gate.map_or_else(
                || BenchError::runtime("the gate closed"),
                Gate::first_failure,
            )),
        };
        tally.add(done);
    }
    timer.stop();
    Ok(tally)
}

/// What a server workload's driver gets: the DSN, the pool bounds and the
/// task inputs.
pub struct ServerRun {
    pub dsn: String,
    /// Maximum open connections, min(P, N).
    pub max_open: u32,
    /// Connections opened, pinged and prepared before the timer.
    pub preopen: usize,
    pub inputs: Vec<Input>,
}

/// One driver of a server workload: runs the timed tasks and returns their
/// tally and the final `SUM(salary)`.
pub type ServerDriver =
    for<'a> fn(&'a ServerRun, &'a mut Timer) -> BoxFuture<'a, Result<(Tally, i64), BenchError>>;

/// Run a server workload (mysql, postgres): check `--dsn` against
/// `schemes`, size the pool from `pool` and N, then run the driver named by
/// `driver` on a multi-thread runtime.
pub fn run_on_server(
    ctx: &mut Ctx,
    schemes: &[&str],
    drivers: &[(&str, ServerDriver)],
) -> Result<Outcome, BenchError> {
    let n = ctx.n_usize()?;
    let dsn = check_dsn(ctx, schemes)?.to_string();
    let pool = ctx.param_u64("pool")?;
    let driver = ctx.param("driver")?;
    let (_, drive) = drivers
        .iter()
        .find(|(name, _)| *name == driver)
        .ok_or_else(|| BenchError::runtime(format!("unhandled driver '{driver}'")))?;
    let setup = ServerRun {
        dsn,
        max_open: max_open(pool, ctx.n)?,
        preopen: preopen_count(pool, ctx.n) as usize,
        inputs: inputs(n),
    };
    ctx.set_extra("max_open_connections", setup.max_open);
    ctx.set_extra("preopened_connections", setup.preopen as u64);

    let runtime = ctx.runtime(Flavour::MultiThread)?;
    let (tally, sum) = runtime.block_on(drive(&setup, &mut ctx.timer))?;
    drop(runtime);
    Ok(Outcome {
        checksum: tally.checksum(sum),
        tasks_ok: tally.tasks_ok,
    })
}

/// The fixture rows `(id, salary, age)`.
#[cfg(test)]
pub fn user_rows() -> Vec<(i32, i32, i32)> {
    let salaries = lcg::sequence(7, USERS, 201);
    let ages = lcg::sequence(9, USERS, 100);
    (0..USERS)
        .map(|k| (k as i32, salaries[k] as i32, ages[k] as i32))
        .collect()
}

/// Write the SQLite template database `path` (replacing any old one).
#[cfg(test)]
pub fn write_sqlite_fixture(path: &std::path::Path) -> Result<(), BenchError> {
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let mut name = path.as_os_str().to_owned();
        name.push(suffix);
        match std::fs::remove_file(&name) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e.into()),
        }
    }
    let mut conn = rusqlite::Connection::open(path)?;
    conn.execute_batch(
        "CREATE TABLE users (id INT PRIMARY KEY NOT NULL, salary INT NOT NULL, \
         age INT NOT NULL, address CHAR(50))",
    )?;
    let tx = conn.transaction()?;
    {
        let mut insert = tx.prepare(
            "INSERT INTO users (id, salary, age, address) VALUES (?, ?, ?, 'Somewhere')",
        )?;
        for (id, salary, age) in user_rows() {
            insert.execute([id, salary, age])?;
        }
    }
    tx.commit()?;
    conn.close().map_err(|(_, e)| e)?;
    Ok(())
}

/// Test helpers of the server workloads (mysql, postgres).
#[cfg(test)]
pub mod server_tests {
    use super::user_rows;
    use crate::cli::args::RunArgs;
    use crate::cli::error::BenchError;
    use crate::cli::timer::mono_ns;
    use crate::workloads::spec::{WorkloadSpec, run as run_workload, test_args};

    /// The users table as `INSERT` statements of 1,000 rows each.
    pub fn insert_statements() -> Vec<String> {
        user_rows()
            .chunks(1000)
            .map(|chunk| {
                let values: Vec<String> = chunk
                    .iter()
                    .map(|(id, salary, age)| format!("({id},{salary},{age},'Somewhere')"))
                    .collect();
                format!(
                    "INSERT INTO users (id, salary, age, address) VALUES {}",
                    values.join(",")
                )
            })
            .collect()
    }

    /// Run `reset` on a current-thread runtime, panicking on error.
    pub fn block_on<F: std::future::Future<Output = Result<(), BenchError>>>(reset: F) {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(reset)
            .unwrap();
    }

    /// Every driver and variant of `spec` gives the reference checksums on
    /// the server whose DSN is in `dsn_var` (skipped when it is not set),
    /// with the table reset before each run.
    pub fn reference_checksums(
        spec: &'static WorkloadSpec,
        dsn_var: &str,
        drivers: &[&str],
        reset: fn(&str),
    ) {
        let Ok(dsn) = std::env::var(dsn_var) else {
            println!("skipped: {dsn_var} is not set");
            return;
        };
        for driver in drivers {
            for variant in spec.variants {
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
                            spec,
                            n,
                            Some(variant),
                            &[("driver", driver), ("pool", pool)],
                        )
                    };
                    let report = run_workload(spec, &args, mono_ns())
                        .unwrap_or_else(|e| panic!("{driver} N={n} pool={pool}: {e}"));
                    assert_eq!(report.checksum, expected, "{driver} N={n} pool={pool}");
                    assert_eq!(report.tasks_ok, n);
                }
            }
        }
    }

    /// Running `spec` with `dsn` and `params` fails with `exit_code`.
    pub fn fails_with(
        spec: &'static WorkloadSpec,
        dsn: &str,
        params: &[(&str, &str)],
        exit_code: i32,
    ) {
        let args = RunArgs {
            dsn: Some(dsn.to_string()),
            ..test_args(spec, 1, None, params)
        };
        match run_workload(spec, &args, mono_ns()) {
            Err(err) => assert_eq!(err.exit_code(), exit_code, "{dsn} {params:?}: {err}"),
            Ok(report) => panic!("{dsn} {params:?}: expected an error, got {report:?}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// A current-thread runtime with timers, for the gate tests.
    fn block_on<F: Future>(run: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap()
            .block_on(run)
    }

    async fn ok_take() -> Result<u32, BenchError> {
        Ok(7)
    }

    #[test]
    fn a_statement_on_a_server_is_bounded_and_one_on_a_local_file_is_not() {
        assert_eq!(Gate::new(4).statement_timeout, Some(STATEMENT_TIMEOUT));
        assert_eq!(Gate::local(4).statement_timeout, None);
        // a 100 ms statement ends in its own time on a local gate, and fails
        // on a gate whose statements are bounded to 20 ms
        block_on(async {
            let slow = || async {
                tokio::time::sleep(Duration::from_millis(100)).await;
                Ok::<u32, BenchError>(1)
            };
            assert_eq!(Gate::local(1).statement("SELECT 1", 0, slow()).await.unwrap(), 1);
            let bounded = Gate::with_statement_timeout(1, Duration::from_millis(20));
            let err = bounded.statement("SELECT 1", 0, slow()).await.unwrap_err();
            assert!(err.message().contains("no answer from the server"), "{}", err.message());
        });
    }

    #[test]
    fn the_wait_for_a_connection_is_not_a_statement() {
        // One connection, a 50 ms statement limit: a task that waits 150 ms
        // for the connection still runs its 10 ms statement.
        block_on(async {
            let gate = Arc::new(Gate::with_statement_timeout(1, Duration::from_millis(50)));
            let held = gate.connection(ok_take()).await.unwrap();
            let started = tokio::time::Instant::now();
            let waiter = {
                let gate = Arc::clone(&gate);
                tokio::spawn(async move {
                    let held = gate.connection(ok_take()).await?;
                    let waited = started.elapsed();
                    gate.statement("SELECT 1", 0, async {
                        tokio::time::sleep(Duration::from_millis(10)).await;
                        Ok::<_, BenchError>((held.conn, waited))
                    })
                    .await
                })
            };
            tokio::time::sleep(Duration::from_millis(150)).await;
            drop(held);
            let (conn, waited) = waiter.await.unwrap().unwrap();
            assert_eq!(conn, 7);
            assert!(waited >= Duration::from_millis(150), "{waited:?}");
            assert!(!gate.is_closed());
        });
    }

    #[test]
    fn connect_calls_the_acquire_once_the_permit_is_held() {
        block_on(async {
            let gate = Arc::new(Gate::new(1));
            let called = Arc::new(std::sync::atomic::AtomicBool::new(false));
            let held = gate.connection(ok_take()).await.unwrap();
            let waiter = {
                let (gate, called) = (Arc::clone(&gate), Arc::clone(&called));
                tokio::spawn(async move {
                    gate.connect(|| {
                        called.store(true, std::sync::atomic::Ordering::SeqCst);
                        ok_take()
                    })
                    .await
                    .map(|held| held.conn)
                })
            };
            tokio::time::sleep(Duration::from_millis(20)).await;
            assert!(!called.load(std::sync::atomic::Ordering::SeqCst));
            drop(held);
            assert_eq!(waiter.await.unwrap().unwrap(), 7);
            assert!(called.load(std::sync::atomic::Ordering::SeqCst));
        });
    }

    #[test]
    fn a_failed_connect_says_connecting_and_closes_the_gate() {
        block_on(async {
            let gate = Gate::new(2);
            let err = gate
                .connect(|| async { Err::<u32, _>(BenchError::runtime("Connection refused")) })
                .await
                .map(drop)
                .unwrap_err();
            assert_eq!(err.message(), "connecting: Connection refused");
            assert!(gate.is_closed());
        });
    }

    #[test]
    fn a_slow_statement_fails_and_closes_the_gate() {
        block_on(async {
            let gate = Gate::with_statement_timeout(2, Duration::from_millis(20));
            let held = gate.connection(ok_take()).await.unwrap();
            let err = gate
                .statement("SELECT salary FROM users WHERE id = ?", 5, async {
                    tokio::time::sleep(Duration::from_secs(5)).await;
                    Ok::<_, BenchError>(())
                })
                .await
                .unwrap_err();
            assert!(err.message().contains("WHERE id = ? [5]"), "{err}");
            assert!(err.message().contains("no answer"), "{err}");
            drop(held);
            assert!(gate.is_closed());
            // Later tasks fail without calling the driver.
            let later = gate
                .connection(async { panic!("the driver must not be called") })
                .await
                .map(|_: Held<'_, u32>| ())
                .unwrap_err();
            assert!(later.message().contains("an earlier connection"), "{later}");
            assert!(later.message().contains("no answer"), "{later}");
        });
    }

    #[test]
    fn a_failed_acquire_ends_an_acquire_in_progress() {
        block_on(async {
            let gate = Arc::new(Gate::new(4));
            let stuck = {
                let gate = Arc::clone(&gate);
                tokio::spawn(async move {
                    gate.connection(std::future::pending::<Result<u32, BenchError>>())
                        .await
                        .map(drop)
                })
            };
            tokio::task::yield_now().await;
            let refused = gate
                .connection(async {
                    Err::<u32, _>(BenchError::runtime("connecting: Connection refused"))
                })
                .await
                .map(drop)
                .unwrap_err();
            assert!(refused.message().contains("Connection refused"));
            let err = tokio::time::timeout(Duration::from_secs(5), stuck)
                .await
                .expect("the stuck acquire ends")
                .unwrap()
                .unwrap_err();
            assert!(err.message().contains("Connection refused"), "{err}");
        });
    }

    #[test]
    fn run_tasks_stops_when_the_gate_closes() {
        // Task 0 never finishes; task 1 fails: the run ends with task 1's
        // failure instead of waiting for task 0.
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_time()
            .build()
            .unwrap();
        let result = runtime.block_on(async {
            let gate = Arc::new(Gate::new(4));
            let mut timer = Timer::new(crate::cli::timer::mono_ns());
            let inputs = inputs(2);
            let first = inputs[0];
            tokio::time::timeout(
                Duration::from_secs(10),
                run_tasks(&mut timer, &inputs, Some(&gate), |input| {
                    let gate = Arc::clone(&gate);
                    async move {
                        if input == first {
                            std::future::pending::<()>().await;
                        }
                        let err = BenchError::runtime("UPDATE [1]: connection reset");
                        gate.close(&err);
                        Err(err)
                    }
                }),
            )
            .await
        });
        let err = result.expect("run_tasks returns").unwrap_err();
        assert_eq!(err.message(), "UPDATE [1]: connection reset");
    }

    /// Statements that record what they were asked to run, answer with
    /// fixed counts and, with `lock`, record whether it was held.
    struct Recorded<'a> {
        calls: std::sync::Mutex<Vec<String>>,
        affected: u64,
        rows: u64,
        lock: Option<&'a Mutex<()>>,
    }

    impl<'a> Recorded<'a> {
        fn new(affected: u64, rows: u64, lock: Option<&'a Mutex<()>>) -> Self {
            Recorded {
                calls: std::sync::Mutex::new(Vec::new()),
                affected,
                rows,
                lock,
            }
        }

        fn calls(&self) -> Vec<String> {
            self.calls.lock().unwrap().clone()
        }
    }

    impl Statements for Recorded<'_> {
        async fn update(&self, sql: &'static str, id: i32) -> Result<u64, BenchError> {
            let locked = self.lock.map(|lock| lock.try_lock().is_err());
            let call = format!("{sql} [{id}] locked={locked:?}");
            self.calls.lock().unwrap().push(call);
            Ok(self.affected)
        }

        async fn count(&self, sql: &'static str, param: i32) -> Result<u64, BenchError> {
            self.calls.lock().unwrap().push(format!("{sql} [{param}]"));
            Ok(self.rows)
        }
    }

    #[test]
    fn an_odd_age_selects_by_age() {
        let statements = Recorded::new(1, 97, None);
        let input = Input { age: 43, id: 5 };
        let done = block_on(users_task(&statements, QUERIES_QMARK, None, input)).unwrap();
        assert_eq!(done, Done::Rows(97));
        assert_eq!(
            statements.calls(),
            [format!("{} [43]", QUERIES_QMARK.select_age)]
        );
    }

    #[test]
    fn an_even_age_updates_under_the_lock_then_selects_by_id() {
        let lock = Mutex::new(());
        let statements = Recorded::new(1, 1, Some(&lock));
        let input = Input { age: 42, id: 5 };
        let done = block_on(users_task(&statements, QUERIES_DOLLAR, Some(&lock), input)).unwrap();
        assert_eq!(done, Done::Updated);
        assert_eq!(
            statements.calls(),
            [
                format!("{} [5] locked=Some(true)", QUERIES_DOLLAR.update),
                format!("{} [5]", QUERIES_DOLLAR.select_id),
            ]
        );
        assert!(lock.try_lock().is_ok(), "the lock is released");
        // Without a lock (variant pool) nothing is held.
        let unlocked = Recorded::new(1, 1, Some(&lock));
        block_on(users_task(&unlocked, QUERIES_DOLLAR, None, input)).unwrap();
        assert!(unlocked.calls()[0].ends_with("locked=Some(false)"));
    }

    #[test]
    fn an_update_or_select_of_the_wrong_row_count_fails() {
        let input = Input { age: 42, id: 5 };
        let updated_none = Recorded::new(0, 1, None);
        let err = block_on(users_task(&updated_none, QUERIES_QMARK, None, input)).unwrap_err();
        assert!(err.message().contains("affected 0 rows"), "{err}");
        assert_eq!(
            updated_none.calls().len(),
            1,
            "no select after a failed update"
        );
        let two_rows = Recorded::new(1, 2, None);
        let err = block_on(users_task(&two_rows, QUERIES_QMARK, None, input)).unwrap_err();
        assert!(err.message().contains("returned 2 rows"), "{err}");
    }

    #[test]
    fn inputs_follow_the_lcg() {
        let got = inputs(3);
        assert_eq!(got[0], Input { age: 42, id: 17 });
        assert_eq!(got[1].age, 2_027_382 % 100);
        assert_eq!(got[1].id, (17 * 48_271) % 10_000);
        assert!(got[0].updates());
        assert_eq!(got[2].age, 1_226_992_407 % 100);
    }

    #[test]
    fn fixture_rows() {
        let rows = user_rows();
        assert_eq!(rows.len(), USERS);
        assert_eq!(rows[0], (0, 7, 9));
        assert_eq!(rows[1], (1, 7 * 48_271 % 201, 9 * 48_271 % 100));
        assert!(
            rows.iter()
                .all(|&(_, s, a)| (0..=200).contains(&s) && (0..100).contains(&a))
        );
    }

    #[test]
    fn preopen_counts() {
        assert_eq!(preopen_count(8, 10), 8);
        assert_eq!(preopen_count(8, 3), 3);
        assert_eq!(preopen_count(0, 1000), 8);
        assert_eq!(preopen_count(0, 5), 5);
        assert_eq!(preopen_count(64, 10_000), 64);
    }

    #[test]
    fn max_open_counts() {
        assert_eq!(max_open(8, 10).unwrap(), 8);
        assert_eq!(max_open(64, 10).unwrap(), 10);
        assert_eq!(max_open(0, 1000).unwrap(), 1000);
        assert_eq!(max_open(0, 1 << 40).unwrap_err().exit_code(), 2);
    }

    #[test]
    fn checksum_adds_everything() {
        let tally = Tally {
            updates: 4,
            rows: 600,
            tasks_ok: 10,
        };
        assert_eq!(tally.checksum(1_000_000), 1_000_604);
    }

    #[test]
    fn result_checks() {
        assert!(check_updated(1, 5).is_ok());
        assert_eq!(check_updated(0, 5).unwrap_err().exit_code(), 1);
        assert!(check_one_row(1, 5).is_ok());
        assert!(check_one_row(2, 5).is_err());
    }
}
