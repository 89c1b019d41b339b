package workloads

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"gobench/internal/cli"
	"gobench/internal/lcg"
)

// The users table of the database workloads (sqlite, mysql, postgres) has
// usersRows rows; task i uses age = lcg(42)[i] % 100 and
// id = lcg(17)[i] % usersRows.
const usersRows = 10000

// The queries with "?" placeholders (SQLite, MySQL).
const (
	usersUpdateSQL = "UPDATE users SET salary = salary + 1 WHERE id = ?"
	usersByIDSQL   = "SELECT salary FROM users WHERE id = ?"
	usersByAgeSQL  = "SELECT salary FROM users WHERE age = ? ORDER BY id"
)

// usersQueries is what a task needs from a database driver. Each method runs
// one prepared (or cached) statement with a bound parameter.
type usersQueries interface {
	// update runs the UPDATE for id and returns the rows affected.
	update(ctx context.Context, id int64) (int64, error)
	// byID runs the SELECT by id and returns how many rows it read.
	byID(ctx context.Context, id int64) (int64, error)
	// byAge runs the SELECT by age and returns how many rows it read.
	byAge(ctx context.Context, age int64) (int64, error)
}

// usersTask is what one task of a database workload hands back.
type usersTask struct {
	updates int64
	rows    int64
}

// runUsersTasks runs the N tasks against q with ctx, timed, and returns the
// number of updates plus the number of rows the odd-age queries returned.
// With serializeWrites, one mutex is held around every UPDATE.
//
// The first task that fails calls onFail (if set) with its error: onFail
// makes the others give up at once instead of each meeting the failure on
// its own (a dead server would otherwise be dialled again for every one of N
// tasks), and returns the error to report, to which it may add what the
// driver knows. The error reported is that first failure, with how many
// tasks failed in all.
func runUsersTasks(ctx context.Context, c *Context, q usersQueries, chanPerTask, serializeWrites bool, onFail func(error) error) (uint64, error) {
	ages := lcg.Mod(42, c.N, 100)
	ids := lcg.Mod(17, c.N, usersRows)
	var writeMu sync.Mutex

	task := func(i int) (usersTask, error) {
		age, id := int64(ages[i]), int64(ids[i])
		if age%2 != 0 {
			n, err := q.byAge(ctx, age)
			if err != nil {
				return usersTask{}, fmt.Errorf("select by age %d: %w", age, err)
			}
			return usersTask{rows: n}, nil
		}
		if serializeWrites {
			writeMu.Lock()
		}
		affected, err := q.update(ctx, id)
		if serializeWrites {
			writeMu.Unlock()
		}
		if err != nil {
			return usersTask{}, fmt.Errorf("update id %d: %w", id, err)
		}
		if affected != 1 {
			return usersTask{}, fmt.Errorf("update id %d: %d rows affected, want 1", id, affected)
		}
		n, err := q.byID(ctx, id)
		if err != nil {
			return usersTask{}, fmt.Errorf("select by id %d: %w", id, err)
		}
		if n != 1 {
			return usersTask{}, fmt.Errorf("select by id %d: %d rows, want 1", id, n)
		}
		return usersTask{updates: 1}, nil
	}

	var (
		failOnce sync.Once
		firstErr error
		failed   atomic.Int64
	)
	run := func(i int, out *usersTask) error {
		r, err := task(i)
		*out = r
		if err != nil {
			failed.Add(1)
			failOnce.Do(func() {
				if onFail != nil {
					err = onFail(err)
				}
				firstErr = fmt.Errorf("task %d: %w", i, err)
			})
		}
		return err
	}

	results, err := runIOTasks(c.N, c.Timer, chanPerTask, run)
	if err != nil {
		// After onFail the other tasks fail with errors of its making
		// ("database is closed", "context canceled"): report the first.
		if n := failed.Load(); n > 1 {
			return 0, fmt.Errorf("%w (%d of %d tasks failed)", firstErr, n, c.N)
		}
		return 0, firstErr
	}
	var sum uint64
	for _, r := range results {
		sum += uint64(r.updates) + uint64(r.rows)
	}
	return sum, nil
}

// serverConnectTimeout bounds opening one connection of the server
// workloads (mysql, postgres): dialling, the handshake and authentication.
// It is a variable only so that tests can shorten it.
var serverConnectTimeout = 5 * time.Second

// serverStatementTimeout bounds one statement on a connection already taken
// from the pool; waiting for the pool is not counted, so however many tasks
// queue for a small pool none fails because of the queue. Every statement of
// the workloads touches at most about 100 rows of a 10,000-row table by index
// and takes milliseconds even on a loaded machine; 30 s is far above that yet
// makes a server that stopped answering fail the run instead of hanging it.
// It is a variable only so that tests can shorten it.
var serverStatementTimeout = 30 * time.Second

// serverVariants are the variants of the server workloads (mysql, postgres).
var serverVariants = []string{"pool", "chan-per-task"}

// serverPoolParam is the pool size of a server workload (mysql, postgres);
// each also has a driver param with its one driver.
var serverPoolParam = Param{Name: "pool", Default: "64", Min: 1, Max: math.MaxInt32}

// usersChecksum adds the final SELECT SUM(salary) to the task sum.
func usersChecksum(taskSum uint64, salarySum int64) uint64 {
	return taskSum + uint64(salarySum)
}

// usersPreopen returns how many connections to open before the timer:
// min(pool, n), or min(n, 8) for an unlimited pool (pool = 0).
func usersPreopen(pool, n int) int {
	if pool == 0 {
		return min(n, 8)
	}
	return min(pool, n)
}

// sqlStmts implements usersQueries with database/sql prepared statements.
type sqlStmts struct {
	upd, id, age *sql.Stmt
}

func (s *sqlStmts) update(ctx context.Context, id int64) (int64, error) {
	res, err := s.upd.ExecContext(ctx, id)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (s *sqlStmts) byID(ctx context.Context, id int64) (int64, error) {
	rows, err := s.id.QueryContext(ctx, id)
	if err != nil {
		return 0, err
	}
	return countSQLRows(rows)
}

func (s *sqlStmts) byAge(ctx context.Context, age int64) (int64, error) {
	rows, err := s.age.QueryContext(ctx, age)
	if err != nil {
		return 0, err
	}
	return countSQLRows(rows)
}

// countSQLRows reads every row (one integer column), closes rows and
// returns how many there were.
func countSQLRows(rows *sql.Rows) (int64, error) {
	var n int64
	for rows.Next() {
		var salary int64
		if err := rows.Scan(&salary); err != nil {
			return n, joinErrs(err, rows.Close())
		}
		n++
	}
	if err := rows.Err(); err != nil {
		return n, joinErrs(err, rows.Close())
	}
	return n, rows.Close()
}

// sqlRun describes one run of a database/sql workload.
type sqlRun struct {
	db *sql.DB
	// preopen connections are opened, pinged and checked before the timer.
	preopen int
	// check, if set, verifies the settings of every pre-opened connection.
	check           func(ctx context.Context, conn *sql.Conn) error
	update          string
	byID            string
	byAge           string
	sum             string
	chanPerTask     bool
	serializeWrites bool
	// onFail, if set, is called once by the first task that fails (see
	// runUsersTasks).
	onFail func(error) error
}

// runSQLUsers opens the pool's connections, prepares the statements, runs
// the timed tasks, reads the final sum and closes everything, db included.
func runSQLUsers(c *Context, r sqlRun) (Outcome, error) {
	out, err := runSQLUsersOpen(c, r)
	if cerr := r.db.Close(); cerr != nil {
		err = joinErrs(err, fmt.Errorf("close database: %w", cerr))
	}
	if err != nil {
		return Outcome{}, err
	}
	return out, nil
}

func runSQLUsersOpen(c *Context, r sqlRun) (out Outcome, err error) {
	ctx := context.Background()
	if err := sqlPreopen(ctx, r.db, r.preopen, r.check); err != nil {
		return Outcome{}, err
	}
	var s sqlStmts
	closeStmts := func() error {
		var errs []error
		for _, st := range []*sql.Stmt{s.upd, s.id, s.age} {
			if st != nil {
				errs = append(errs, st.Close())
			}
		}
		if err := joinErrs(errs...); err != nil {
			return fmt.Errorf("close statement: %w", err)
		}
		return nil
	}
	defer func() { err = joinErrs(err, closeStmts()) }()
	for _, p := range []struct {
		dst  **sql.Stmt
		text string
	}{{&s.upd, r.update}, {&s.id, r.byID}, {&s.age, r.byAge}} {
		st, err := r.db.PrepareContext(ctx, p.text)
		if err != nil {
			return Outcome{}, fmt.Errorf("prepare %q: %w", p.text, err)
		}
		*p.dst = st
	}

	taskSum, err := runUsersTasks(ctx, c, &s, r.chanPerTask, r.serializeWrites, r.onFail)
	if err != nil {
		return Outcome{}, err
	}
	var salarySum int64
	if err := r.db.QueryRowContext(ctx, r.sum).Scan(&salarySum); err != nil {
		return Outcome{}, fmt.Errorf("%s: %w", r.sum, err)
	}
	return Outcome{Checksum: usersChecksum(taskSum, salarySum), TasksOK: int64(c.N)}, nil
}

// preopenConns opens k connections before the timer: the first alone, then
// the other k-1 at once, k-1 goroutines each taking a connection from the
// pool with acquire, which also pings and checks it. Every connection is held
// until all are open (so that k distinct connections are opened); then all go
// back to the pool. The first opens alone because on SQLite it is the one that
// switches the journal mode, and connections opening at that moment can find
// the database locked. acquire returns a non-nil release whenever it holds a
// connection, even on error.
func preopenConns(k int, acquire func() (release func() error, err error)) error {
	releases := make([]func() error, k)
	errs := make([]error, k)
	if k > 0 {
		releases[0], errs[0] = acquire()
	}
	if k > 0 && errs[0] == nil {
		var wg sync.WaitGroup
		for i := 1; i < k; i++ {
			wg.Go(func() { releases[i], errs[i] = acquire() })
		}
		wg.Wait()
	}

	var err error
	failed := 0
	for i, e := range errs {
		if e != nil {
			if failed == 0 {
				err = fmt.Errorf("connection %d of %d: %w", i+1, k, e)
			}
			failed++
		}
	}
	if failed > 1 {
		err = fmt.Errorf("%w (%d of %d connections failed)", err, failed, k)
	}
	for _, release := range releases {
		if release != nil {
			if rerr := release(); rerr != nil {
				err = joinErrs(err, fmt.Errorf("return connection to the pool: %w", rerr))
			}
		}
	}
	return err
}

// sqlPreopen pre-opens k connections of a database/sql pool, pinging each
// and, if check is set, checking its settings.
func sqlPreopen(ctx context.Context, db *sql.DB, k int, check func(context.Context, *sql.Conn) error) error {
	return preopenConns(k, func() (func() error, error) {
		conn, err := db.Conn(ctx)
		if err != nil {
			return nil, fmt.Errorf("open: %w", err)
		}
		if err := conn.PingContext(ctx); err != nil {
			return conn.Close, fmt.Errorf("ping: %w", err)
		}
		if check != nil {
			if err := check(ctx, conn); err != nil {
				return conn.Close, err
			}
		}
		return conn.Close, nil
	})
}

// serverURL parses a BENCH_DSN URL of the form scheme://user:pass@host:port/db,
// accepting only the given schemes and query keys. Its errors show the URL
// with the password redacted.
func serverURL(raw string, schemes []string, queryKeys ...string) (*url.URL, error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("invalid %s %s: %s", cli.DSNEnv, cli.RedactDSN(raw), fmt.Sprintf(format, a...))
	}
	want := schemes[0] + "://user:pass@host:port/db"
	u, err := url.Parse(raw)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, bad("%s", cli.Scrub(err.Error(), raw))
	}
	switch {
	case !slices.Contains(schemes, u.Scheme):
		return nil, bad("scheme %q, want %s", u.Scheme, want)
	case u.Opaque != "" || u.Hostname() == "":
		return nil, bad("no host, want %s", want)
	case len(u.Path) < 2 || u.Path[0] != '/' || strings.Contains(u.Path[1:], "/"):
		return nil, bad("want exactly one database name in the path, got %q", u.Path)
	case u.Fragment != "":
		return nil, bad("unexpected #fragment")
	}
	query, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return nil, bad("query: %s", cli.Scrub(err.Error(), raw))
	}
	for k := range query {
		if !slices.Contains(queryKeys, k) {
			return nil, bad("unsupported query parameter %q", k)
		}
	}
	return u, nil
}
