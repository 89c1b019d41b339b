package workloads

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"gobench/internal/cli"
)

// postgres: the users tasks on PostgreSQL through a pgx pool. Same checksum
// as sqlite.
var postgresSpec = &Spec{
	Name:           "postgres",
	Variants:       serverVariants,
	DefaultVariant: "pool",
	Params: []Param{
		serverPoolParam,
		{Name: "driver", Default: "pgx", Choices: []string{"pgx"}},
	},
	NeedsDSN: true,
	Run:      runPostgres,
}

// The queries with "$1" placeholders.
const (
	pgUpdateSQL = "UPDATE users SET salary = salary + 1 WHERE id = $1"
	pgByIDSQL   = "SELECT salary FROM users WHERE id = $1"
	pgByAgeSQL  = "SELECT salary FROM users WHERE age = $1 ORDER BY id"
	pgSumSQL    = "SELECT SUM(salary)::bigint FROM users"
)

func runPostgres(c *Context) (Outcome, error) {
	chanPerTask, err := chanPerTaskVariant(c.Variant, "pool")
	if err != nil {
		return Outcome{}, err
	}
	pool := c.Int("pool")
	cfg, err := postgresConfig(c.DSN, int32(pool))
	if err != nil {
		return Outcome{}, err
	}
	ctx := context.Background()
	p, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return Outcome{}, fmt.Errorf("postgres pool: %w", err)
	}
	// Close waits for every connection to close and reports no error.
	defer p.Close()

	if err := pgPreopen(ctx, p, usersPreopen(int(pool), c.N)); err != nil {
		return Outcome{}, err
	}
	// Cancelling the tasks' context makes every task still queued for a
	// connection fail at once.
	tasksCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	onFail := func(err error) error {
		cancel()
		return err
	}
	taskSum, err := runUsersTasks(tasksCtx, c, pgQueries{p}, chanPerTask, false, onFail)
	if err != nil {
		return Outcome{}, err
	}
	var salarySum int64
	if err := p.QueryRow(ctx, pgSumSQL).Scan(&salarySum); err != nil {
		return Outcome{}, fmt.Errorf("%s: %w", pgSumSQL, err)
	}
	return Outcome{Checksum: usersChecksum(taskSum, salarySum), TasksOK: int64(c.N)}, nil
}

// postgresConfig turns postgres://user:pass@host[:port]/db (sslmode is the
// only query parameter accepted) into a pool of at most maxConns
// connections. Statements are prepared on each connection on first use and
// cached there (pgx's default query mode); parameters are bound as int4.
// Connecting times out after serverConnectTimeout.
func postgresConfig(dsn string, maxConns int32) (*pgxpool.Config, error) {
	if _, err := serverURL(dsn, []string{"postgres", "postgresql"}, "sslmode"); err != nil {
		return nil, err
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("invalid %s %s: %s", cli.DSNEnv, cli.RedactDSN(dsn), cli.Scrub(err.Error(), dsn))
	}
	cfg.MaxConns = maxConns
	cfg.MinConns = 0
	cfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeCacheStatement
	cfg.ConnConfig.ConnectTimeout = serverConnectTimeout
	return cfg, nil
}

// pgPreopen pre-opens k connections of the pool, pinging each.
func pgPreopen(ctx context.Context, p *pgxpool.Pool, k int) error {
	return preopenConns(k, func() (func() error, error) {
		conn, err := p.Acquire(ctx)
		if err != nil {
			return nil, fmt.Errorf("open: %w", err)
		}
		release := func() error {
			conn.Release()
			return nil
		}
		if err := conn.Ping(ctx); err != nil {
			return release, fmt.Errorf("ping: %w", err)
		}
		return release, nil
	})
}

// pgQueries implements usersQueries on a pgx pool. Each statement takes a
// connection from the pool (waiting as long as ctx allows), then runs on it
// within serverStatementTimeout, and gives it back.
type pgQueries struct {
	p *pgxpool.Pool
}

// acquire takes a connection from the pool and returns it with the context
// of one statement; done gives the connection back.
func (q pgQueries) acquire(ctx context.Context) (conn *pgxpool.Conn, stmtCtx context.Context, done func(), err error) {
	conn, err = q.p.Acquire(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	stmtCtx, cancel := context.WithTimeout(ctx, serverStatementTimeout)
	return conn, stmtCtx, func() { cancel(); conn.Release() }, nil
}

// stmtErr names the timeout when the statement ran out of time.
func stmtErr(stmtCtx context.Context, err error) error {
	if err != nil && errors.Is(stmtCtx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("no answer within %v: %w", serverStatementTimeout, err)
	}
	return err
}

func (q pgQueries) update(ctx context.Context, id int64) (int64, error) {
	conn, sctx, done, err := q.acquire(ctx)
	if err != nil {
		return 0, err
	}
	defer done()
	tag, err := conn.Exec(sctx, pgUpdateSQL, int32(id))
	if err != nil {
		return 0, stmtErr(sctx, err)
	}
	return tag.RowsAffected(), nil
}

func (q pgQueries) byID(ctx context.Context, id int64) (int64, error) {
	return q.count(ctx, pgByIDSQL, int32(id))
}

func (q pgQueries) byAge(ctx context.Context, age int64) (int64, error) {
	return q.count(ctx, pgByAgeSQL, int32(age))
}

// count runs a query with one int4 parameter and counts its rows.
func (q pgQueries) count(ctx context.Context, sql string, arg int32) (int64, error) {
	conn, sctx, done, err := q.acquire(ctx)
	if err != nil {
		return 0, err
	}
	defer done()
	rows, err := conn.Query(sctx, sql, arg)
	if err != nil {
		return 0, stmtErr(sctx, err)
	}
	n, err := countPgRows(rows)
	return n, stmtErr(sctx, err)
}

// countPgRows reads every row (one int4 column), closes rows and returns how
// many there were.
func countPgRows(rows pgx.Rows) (int64, error) {
	defer rows.Close()
	var n int64
	for rows.Next() {
		var salary int32
		if err := rows.Scan(&salary); err != nil {
			return n, err
		}
		n++
	}
	// Err reports any error of the query, including one met while closing.
	return n, rows.Err()
}
