package workloads

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"

	"gobench/internal/cli"
)

// The server tests run only when these variables hold a DSN in the
// program's URL form; each test (re)creates and fills the users table.
const (
	mysqlTestEnv    = "BENCH_TEST_MYSQL_DSN"
	postgresTestEnv = "BENCH_TEST_POSTGRES_DSN"
)

func serverDSN(t *testing.T, env string) string {
	t.Helper()
	dsn := os.Getenv(env)
	if dsn == "" {
		t.Skipf("%s not set: no server to test against", env)
	}
	return dsn
}

// usersInsertBatches yields the fixture rows as multi-row INSERT statements
// of at most 1000 rows, with placeholders made by ph(k) for the k-th
// argument (0-based).
func usersInsertBatches(ph func(k int) string) (stmts []string, args [][]any) {
	rows := usersFixtureRows()
	for lo := 0; lo < len(rows); lo += 1000 {
		var b strings.Builder
		b.WriteString("INSERT INTO users (id, salary, age, address) VALUES ")
		var a []any
		for i, r := range rows[lo:min(lo+1000, len(rows))] {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "(%s, %s, %s, 'Somewhere')", ph(3*i), ph(3*i+1), ph(3*i+2))
			a = append(a, r.id, r.salary, r.age)
		}
		stmts = append(stmts, b.String())
		args = append(args, a)
	}
	return stmts, args
}

// openTestMySQL opens a database/sql pool on the MySQL server of dsn with
// the program's own driver configuration (mysqlConfig); the caller closes it.
func openTestMySQL(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	cfg, err := mysqlConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return sql.OpenDB(connector)
}

// resetMySQLUsers drops, recreates (InnoDB) and fills the users table.
func resetMySQLUsers(t *testing.T, dsn string) {
	t.Helper()
	db := openTestMySQL(t, dsn)
	defer func() {
		if err := db.Close(); err != nil {
			t.Error(err)
		}
	}()
	for _, q := range []string{"DROP TABLE IF EXISTS users", usersCreateSQL + " ENGINE=InnoDB"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	stmts, args := usersInsertBatches(func(int) string { return "?" })
	for i, q := range stmts {
		if _, err := db.Exec(q, args[i]...); err != nil {
			t.Fatalf("insert: %v", err)
		}
	}
}

// resetPostgresUsers drops, recreates and fills the users table.
func resetPostgresUsers(t *testing.T, dsn string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := conn.Close(ctx); err != nil {
			t.Error(err)
		}
	}()
	for _, q := range []string{"DROP TABLE IF EXISTS users", usersCreateSQL} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	stmts, args := usersInsertBatches(func(k int) string { return fmt.Sprintf("$%d", k+1) })
	for i, q := range stmts {
		if _, err := conn.Exec(ctx, q, args[i]...); err != nil {
			t.Fatalf("insert: %v", err)
		}
	}
}

func testServerChecksums(t *testing.T, workload, env string, reset func(*testing.T, string)) {
	dsn := serverDSN(t, env)
	ns := []int{10, 1000, 10000}
	if testing.Short() {
		ns = ns[:2]
	}
	spec, _ := Lookup(workload)
	for _, variant := range spec.Variants {
		for _, n := range ns {
			t.Run(fmt.Sprintf("%s/n=%d", variant, n), func(t *testing.T) {
				reset(t, dsn)
				out, c, err := runIOWorkload(workload, variant, n, "", dsn)
				if err != nil {
					t.Fatal(err)
				}
				if want := usersRefChecksums[n]; out.Checksum != want || out.TasksOK != int64(n) {
					t.Errorf("checksum %016x tasks_ok %d, want %016x %d", out.Checksum, out.TasksOK, want, n)
				}
				if span, err := c.Timer.Span(); err != nil || !span.HasSpawns {
					t.Errorf("timer: %+v, %v", span, err)
				}
			})
		}
	}
	t.Run("pool=1", func(t *testing.T) {
		reset(t, dsn)
		out, _, err := runIOWorkload(workload, "", 10, "", dsn, kv("pool", "1"))
		if err != nil {
			t.Fatal(err)
		}
		if out.Checksum != usersRefChecksums[10] {
			t.Errorf("checksum %016x, want %016x", out.Checksum, usersRefChecksums[10])
		}
	})
}

func TestMySQLChecksums(t *testing.T) {
	testServerChecksums(t, "mysql", mysqlTestEnv, resetMySQLUsers)
}

func TestPostgresChecksums(t *testing.T) {
	testServerChecksums(t, "postgres", postgresTestEnv, resetPostgresUsers)
}

// TestServerMissingTable checks that a query failure is a runtime error.
func TestServerMissingTable(t *testing.T) {
	for _, w := range []struct{ workload, env string }{
		{"mysql", mysqlTestEnv},
		{"postgres", postgresTestEnv},
	} {
		t.Run(w.workload, func(t *testing.T) {
			dsn := serverDSN(t, w.env)
			dropUsers(t, w.workload, dsn)
			_, _, err := runIOWorkload(w.workload, "", 3, "", dsn)
			var ue *cli.UsageError
			if err == nil || errors.As(err, &ue) || !strings.Contains(err.Error(), "users") {
				t.Errorf("got %v, want a runtime error naming the table", err)
			}
		})
	}
}

// dropUsers drops the users table if it exists.
func dropUsers(t *testing.T, workload, dsn string) {
	t.Helper()
	ctx := context.Background()
	if workload == "postgres" {
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		_, err = conn.Exec(ctx, "DROP TABLE IF EXISTS users")
		if cerr := conn.Close(ctx); cerr != nil {
			t.Error(cerr)
		}
		if err != nil {
			t.Fatal(err)
		}
		return
	}
	db := openTestMySQL(t, dsn)
	_, err := db.Exec("DROP TABLE IF EXISTS users")
	if cerr := db.Close(); cerr != nil {
		t.Error(cerr)
	}
	if err != nil {
		t.Fatal(err)
	}
}

func TestMySQLConfig(t *testing.T) {
	cfg, err := mysqlConfig("mysql://bench:p%40ss@127.0.0.1:33061/bench")
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.FormatDSN(); got != "bench:p@ss@tcp(127.0.0.1:33061)/bench?readTimeout=30s&timeout=5s&writeTimeout=30s" {
		t.Errorf("FormatDSN() = %q", got)
	}
	cfg, err = mysqlConfig("mysql://u@[::1]/db")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Addr != "[::1]:3306" || cfg.User != "u" || cfg.Passwd != "" || cfg.DBName != "db" {
		t.Errorf("config %+v", cfg)
	}
}

func TestServerDSNErrors(t *testing.T) {
	bad := []string{
		"postgres://u:secret@h:1/db",
		"mysql://u:secret@h:1/",
		"mysql://u:secret@h:1",
		"mysql://u:secret@h:1/db/x",
		"mysql://u:secret@/db",
		"mysql://u:secret@h:1/db?tls=true",
		"mysql://u:secret@h:1/db#frag",
		"mysql:u:secret@h/db",
		"u:secret@tcp(h:1)/db",
		"mysql://u:secret@h:port/db",
		"mysql://u:secret@h:1/db?a=%zz",
	}
	for _, dsn := range bad {
		_, err := mysqlConfig(dsn)
		if err == nil {
			t.Errorf("mysqlConfig(%q): no error", dsn)
			continue
		}
		if strings.Contains(err.Error(), "secret") || !strings.Contains(err.Error(), "invalid BENCH_DSN") {
			t.Errorf("mysqlConfig(%q): error %q shows the password or does not name BENCH_DSN", dsn, err)
		}
	}
	for _, dsn := range []string{"mysql://u:secret@h:1/db", "postgres://u:secret@h:1/db?pool_max_conns=3", "postgres://u:secret@h/"} {
		_, err := postgresConfig(dsn, 4)
		if err == nil {
			t.Errorf("postgresConfig(%q): no error", dsn)
		} else if strings.Contains(err.Error(), "secret") || !strings.Contains(err.Error(), "invalid BENCH_DSN") {
			t.Errorf("postgresConfig(%q): error %q shows the password or does not name BENCH_DSN", dsn, err)
		}
	}
}

func TestPostgresConfig(t *testing.T) {
	for _, dsn := range []string{"postgres://u:p@127.0.0.1:54321/bench", "postgresql://u:p@h/bench?sslmode=disable"} {
		cfg, err := postgresConfig(dsn, 7)
		if err != nil {
			t.Fatalf("%s: %v", dsn, err)
		}
		if cfg.MaxConns != 7 || cfg.ConnConfig.User != "u" || cfg.ConnConfig.Password != "p" || cfg.ConnConfig.Database != "bench" ||
			cfg.ConnConfig.ConnectTimeout != 5*time.Second {
			t.Errorf("%s: %+v", dsn, cfg.ConnConfig)
		}
	}
}

func TestServerParams(t *testing.T) {
	p := func(k, v string) []cli.Param { return []cli.Param{kv(k, v)} }
	for _, spec := range []*Spec{mysqlSpec, postgresSpec} {
		bad := []cli.Args{
			{N: 1, DSN: "x://y", Variant: "serialized-writes"},
			{N: 1, DSN: "x://y", Params: p("pool", "0")},
			{N: 1, DSN: "x://y", Params: p("pool", "2147483648")},
			{N: 1, DSN: "x://y", Params: p("driver", "sqlx")},
			{N: 1, DSN: "x://y", Params: p("journal", "wal")},
			{N: 1},
			{N: 1, DSN: "x://y", DataDir: "/d"},
		}
		for _, a := range bad {
			_, err := spec.NewContext(a, 1)
			var ue *cli.UsageError
			if !errors.As(err, &ue) {
				t.Errorf("%s %+v: got %v, want a UsageError", spec.Name, a, err)
			}
		}
	}
}

// shorten sets *v to d for the rest of the test.
func shorten(t *testing.T, v *time.Duration, d time.Duration) {
	t.Helper()
	old := *v
	*v = d
	t.Cleanup(func() { *v = old })
}

// TestServerConnectTimeout points both workloads at a listener that accepts
// connections and never answers: opening the pool must fail once the
// connect timeout has passed, naming the timeout, instead of waiting.
func TestServerConnectTimeout(t *testing.T) {
	shorten(t, &serverConnectTimeout, 500*time.Millisecond)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var held []net.Conn
	accepted := make(chan struct{})
	go func() {
		defer close(accepted)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-accepted
		for _, c := range held {
			c.Close()
		}
	})
	addr := ln.Addr().String()
	for _, w := range []struct{ workload, dsn, want string }{
		{"mysql", "mysql://u:secret@" + addr + "/db", "connect: no answer within 500ms"},
		{"postgres", "postgres://u:secret@" + addr + "/db?sslmode=disable", "timeout"},
	} {
		_, _, err := runIOWorkload(w.workload, "", 3, "", w.dsn, kv("pool", "2"))
		t.Logf("%s: %v", w.workload, err)
		var ue *cli.UsageError
		if err == nil || errors.As(err, &ue) || !strings.Contains(err.Error(), w.want) || strings.Contains(err.Error(), "secret") {
			t.Errorf("%s: got %v, want a runtime error with %q", w.workload, err, w.want)
		}
	}
}

// lockAllUsers starts a transaction that locks every row of users for
// update (reads go on, UPDATEs wait) and returns what ends it.
func lockAllUsers(t *testing.T, workload, dsn string) (unlock func()) {
	t.Helper()
	ctx := context.Background()
	const lock = "SELECT id FROM users FOR UPDATE"
	if workload == "postgres" {
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		tx, err := conn.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, lock); err != nil {
			t.Fatal(err)
		}
		return func() {
			if err := tx.Rollback(ctx); err != nil {
				t.Error(err)
			}
			if err := conn.Close(ctx); err != nil {
				t.Error(err)
			}
		}
	}
	db := openTestMySQL(t, dsn)
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := tx.QueryContext(ctx, lock)
	if err == nil {
		_, err = countSQLRows(rows)
	}
	if err != nil {
		t.Fatal(err)
	}
	return func() {
		if err := tx.Rollback(); err != nil {
			t.Error(err)
		}
		if err := db.Close(); err != nil {
			t.Error(err)
		}
	}
}

// TestServerStatementTimeout: a statement that gets no answer fails the run
// once the statement timeout has passed, with the driver's message; the
// wait for a pooled connection does not count, so a run whose tasks queue
// far longer than the timeout for a pool of one still succeeds.
func TestServerStatementTimeout(t *testing.T) {
	const timeout = 300 * time.Millisecond
	for _, w := range []struct {
		workload, env, want string
		reset               func(*testing.T, string)
	}{
		{"mysql", mysqlTestEnv, "i/o timeout", resetMySQLUsers},
		{"postgres", postgresTestEnv, "no answer within 300ms", resetPostgresUsers},
	} {
		t.Run(w.workload, func(t *testing.T) {
			dsn := serverDSN(t, w.env)
			shorten(t, &serverStatementTimeout, timeout)

			// The last of n tasks queues for about the whole run; the run
			// must last at least two timeouts to show that the queueing is
			// not counted. 1,000 tasks can finish in 0.5 s on a fast
			// server, so a short run is repeated with 10,000.
			var elapsed time.Duration
			for _, n := range []int{1000, 10000} {
				w.reset(t, dsn)
				out, c, err := runIOWorkload(w.workload, "", n, "", dsn, kv("pool", "1"))
				if err != nil {
					t.Fatalf("pool=1, n=%d: %v", n, err)
				}
				if out.Checksum != usersRefChecksums[n] {
					t.Errorf("n=%d: checksum %016x, want %016x", n, out.Checksum, usersRefChecksums[n])
				}
				span, err := c.Timer.Span()
				if err != nil {
					t.Fatal(err)
				}
				elapsed = span.Elapsed
				if elapsed >= 2*timeout {
					break
				}
				t.Logf("pool=1, n=%d took %v: shorter than two timeouts", n, elapsed)
			}
			if elapsed < 2*timeout {
				t.Fatalf("the run took %v: too short to show that queueing is not counted", elapsed)
			}

			w.reset(t, dsn)
			unlock := lockAllUsers(t, w.workload, dsn)
			_, _, err := runIOWorkload(w.workload, "", 10, "", dsn, kv("pool", "2"))
			unlock()
			t.Logf("UPDATEs blocked by a lock: %v", err)
			var ue *cli.UsageError
			if err == nil || errors.As(err, &ue) || !strings.Contains(err.Error(), "update id") || !strings.Contains(err.Error(), w.want) {
				t.Errorf("UPDATEs blocked by a lock: got %v, want a runtime error with %q", err, w.want)
			}
		})
	}
}
