package workloads

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"gobench/internal/cli"
	"gobench/internal/lcg"
)

// usersRefChecksums are the reference checksums of the database workloads.
var usersRefChecksums = map[int]uint64{10: 0xf43b7, 200: 0xf6920, 1000: 0xffd24, 10000: 0x170b58}

// usersRow is one row of the users fixture.
type usersRow struct {
	id, salary, age int64
}

// usersFixtureRows returns row k = (k, lcg(7)[k] % 201, lcg(9)[k] % 100);
// every address is 'Somewhere'.
func usersFixtureRows() []usersRow {
	salaries := lcg.Mod(7, usersRows, 201)
	ages := lcg.Mod(9, usersRows, 100)
	rows := make([]usersRow, usersRows)
	for k := range rows {
		rows[k] = usersRow{id: int64(k), salary: int64(salaries[k]), age: int64(ages[k])}
	}
	return rows
}

// usersCreateSQL is the schema of the users table (MySQL adds ENGINE=InnoDB).
const usersCreateSQL = "CREATE TABLE users (id INT PRIMARY KEY NOT NULL, salary INT NOT NULL, " +
	"age INT NOT NULL, address CHAR(50))"

// sqliteTemplate is the users.db template, built once per test binary.
var sqliteTemplate struct {
	once sync.Once
	data []byte
	err  error
}

// writeUsersDB creates the users fixture database at path.
func writeUsersDB(path string) (err error) {
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		return err
	}
	defer func() { err = joinErrs(err, db.Close()) }()
	if _, err := db.Exec(usersCreateSQL); err != nil {
		return err
	}
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	stmt, err := tx.Prepare("INSERT INTO users (id, salary, age, address) VALUES (?, ?, ?, 'Somewhere')")
	if err != nil {
		return joinErrs(err, tx.Rollback())
	}
	for _, r := range usersFixtureRows() {
		if _, err := stmt.Exec(r.id, r.salary, r.age); err != nil {
			return joinErrs(err, stmt.Close(), tx.Rollback())
		}
	}
	if err := stmt.Close(); err != nil {
		return joinErrs(err, tx.Rollback())
	}
	return tx.Commit()
}

// freshUsersDir returns a new directory holding a fresh copy of users.db.
func freshUsersDir(t *testing.T) string {
	t.Helper()
	sqliteTemplate.once.Do(func() {
		path := filepath.Join(t.TempDir(), "template.db")
		if sqliteTemplate.err = writeUsersDB(path); sqliteTemplate.err == nil {
			sqliteTemplate.data, sqliteTemplate.err = os.ReadFile(path)
		}
	})
	if sqliteTemplate.err != nil {
		t.Fatalf("users template: %v", sqliteTemplate.err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "users.db"), sqliteTemplate.data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestUsersFixtureChecksumInputs(t *testing.T) {
	// The first rows as the reference implementation computes them.
	rows := usersFixtureRows()
	want := []usersRow{{0, 7 % 201, 9 % 100}, {1, 337897 % 201, 434439 % 100}}
	for i, w := range want {
		if rows[i] != w {
			t.Errorf("row %d = %+v, want %+v", i, rows[i], w)
		}
	}
}

func TestSQLiteChecksums(t *testing.T) {
	type run struct {
		driver, variant, journal string
		n                        int
		slow                     bool
	}
	var runs []run
	for _, driver := range []string{"mattn", "modernc"} {
		for _, variant := range sqliteSpec.Variants {
			// The rollback journal serializes every commit behind several
			// fsyncs, so its contended grid point stays at N = 200: the whole
			// run normally takes less than the 5 s busy timeout, which
			// bounds how long a starved connection waits. At N = 1000 on a
			// busy disk every run lost some tasks to "database is locked".
			runs = append(runs,
				run{driver, variant, "wal", 10, false},
				run{driver, variant, "wal", 1000, false},
				run{driver, variant, "delete", 10, false},
				run{driver, variant, "delete", 200, false})
			// The article's largest N with the default driver only: the
			// pure-Go driver runs the same statements, checked at N = 1000
			// above, and took 6-10 s a point here (mattn 3-4 s); in a run, each
			// of its samples' checksums is checked against those of the same
			// work (the other driver's, Rust's) all the same.
			if driver == "mattn" {
				runs = append(runs, run{driver, variant, "wal", 10000, true})
			}
		}
	}
	for _, r := range runs {
		name := fmt.Sprintf("%s/%s/%s/n=%d", r.driver, r.variant, r.journal, r.n)
		t.Run(name, func(t *testing.T) {
			if r.slow && testing.Short() {
				t.Skip("slow grid point, skipped with -short")
			}
			// One at a time: concurrent runs on the same disk make a
			// connection starved past the busy timeout likelier.
			out, c, err := runSQLiteRetryingBusy(t, r.variant, r.n,
				kv("driver", r.driver), kv("journal", r.journal))
			if err != nil {
				t.Fatal(err)
			}
			if want := usersRefChecksums[r.n]; out.Checksum != want || out.TasksOK != int64(r.n) {
				t.Errorf("checksum %016x tasks_ok %d, want %016x %d", out.Checksum, out.TasksOK, want, r.n)
			}
			if span, err := c.Timer.Span(); err != nil || !span.HasSpawns {
				t.Errorf("timer: %+v, %v", span, err)
			}
		})
	}
}

// sqliteBusyAttempts bounds the runs of one grid point.
const sqliteBusyAttempts = 3

// runSQLiteRetryingBusy runs the sqlite workload on a fresh copy of users.db.
// SQLite hands its write lock out unfairly: when commits queue up behind slow
// fsyncs (another process writing to the same disk is enough), one
// connection can wait past the 5 s busy timeout the specification fixes, and
// its task fails with "database is locked". That is a legitimate outcome of
// the benchmark (the harness records it as a failed sample) but says nothing
// about the checksum, so after that error, and only that one, the run is
// repeated on a fresh copy, at most sqliteBusyAttempts times. Any other
// error, the same error every time, or a wrong checksum on the run that
// succeeds still fails the test.
func runSQLiteRetryingBusy(t *testing.T, variant string, n int, params ...cli.Param) (Outcome, *Context, error) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		out, c, err := runIOWorkload("sqlite", variant, n, freshUsersDir(t), "", params...)
		if err == nil || !isSQLiteBusy(err) || attempt == sqliteBusyAttempts {
			return out, c, err
		}
		t.Logf("attempt %d of %d: %v; repeating on a fresh copy", attempt, sqliteBusyAttempts, err)
	}
}

// isSQLiteBusy reports whether err is SQLite's SQLITE_BUSY as either driver
// words it.
func isSQLiteBusy(err error) bool {
	return strings.Contains(err.Error(), "database is locked")
}

func TestIsSQLiteBusy(t *testing.T) {
	for msg, want := range map[string]bool{
		"task 660: update id 4796: database is locked (5) (SQLITE_BUSY)": true,
		"task 1: update id 2: database is locked":                        true,
		"task 1: update id 2: no such table: users":                      false,
	} {
		if got := isSQLiteBusy(errors.New(msg)); got != want {
			t.Errorf("isSQLiteBusy(%q) = %v, want %v", msg, got, want)
		}
	}
}

func TestSQLitePoolSizes(t *testing.T) {
	for _, driver := range []string{"mattn", "modernc"} {
		for _, pool := range []string{"0", "1", "3"} {
			t.Run(driver+"/pool="+pool, func(t *testing.T) {
				t.Parallel()
				dir := freshUsersDir(t)
				out, _, err := runIOWorkload("sqlite", "", 10, dir, "", kv("driver", driver), kv("pool", pool))
				if err != nil {
					t.Fatal(err)
				}
				if out.Checksum != usersRefChecksums[10] {
					t.Errorf("checksum %016x, want %016x", out.Checksum, usersRefChecksums[10])
				}
			})
		}
	}
}

// TestSQLiteJournalMode checks that the database file ends up in the journal
// mode asked for, and that the pool's connections were checked.
func TestSQLiteJournalMode(t *testing.T) {
	for _, journal := range []string{"wal", "delete"} {
		dir := freshUsersDir(t)
		if _, _, err := runIOWorkload("sqlite", "", 10, dir, "", kv("journal", journal)); err != nil {
			t.Fatal(err)
		}
		db, err := sql.Open("sqlite3", filepath.Join(dir, "users.db"))
		if err != nil {
			t.Fatal(err)
		}
		var mode string
		err = db.QueryRow("PRAGMA journal_mode").Scan(&mode)
		if cerr := db.Close(); cerr != nil {
			t.Fatal(cerr)
		}
		if err != nil {
			t.Fatal(err)
		}
		if mode != journal {
			t.Errorf("journal=%s: file is in mode %q", journal, mode)
		}
	}
}

func TestSQLiteCheckRejectsWrongSettings(t *testing.T) {
	dir := freshUsersDir(t)
	db, err := sql.Open("sqlite3", filepath.Join(dir, "users.db")+"?_busy_timeout=100")
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := db.Close(); err != nil {
			t.Error(err)
		}
	}()
	err = sqlPreopen(context.Background(), db, 1, func(ctx context.Context, conn *sql.Conn) error {
		return sqliteCheck(ctx, conn, "wal")
	})
	if err == nil {
		t.Error("a connection without the workload's settings passed the check")
	}
}

func TestSQLiteMissingDatabase(t *testing.T) {
	dir := t.TempDir()
	_, _, err := runIOWorkload("sqlite", "", 3, dir, "")
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("got %v, want a not-exist error", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "users.db")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("users.db was created: %v", err)
	}
}

func TestSQLiteParams(t *testing.T) {
	p := func(k, v string) []cli.Param { return []cli.Param{kv(k, v)} }
	bad := []cli.Args{
		{N: 1, DataDir: "/d", Variant: "sqlx"},
		{N: 1, DataDir: "/d", Params: p("driver", "sqlx")},
		{N: 1, DataDir: "/d", Params: p("driver", "rusqlite")},
		{N: 1, DataDir: "/d", Params: p("journal", "WAL")},
		{N: 1, DataDir: "/d", Params: p("journal", "truncate")},
		{N: 1, DataDir: "/d", Params: p("pool", "-1")},
		{N: 1, DataDir: "/d", Params: p("pool", "x")},
		{N: 1, DataDir: "/d", Params: p("retain", "digest")},
		{N: 1},
	}
	for _, a := range bad {
		_, err := sqliteSpec.NewContext(a, 1)
		var ue *cli.UsageError
		if !errors.As(err, &ue) {
			t.Errorf("%+v: got %v, want a UsageError", a, err)
		}
	}
	c, err := sqliteSpec.NewContext(cli.Args{N: 1, DataDir: "/d", Params: p("pool", "0")}, 1)
	if err != nil || c.Int("pool") != 0 {
		t.Errorf("pool=0: %v", err)
	}
	// SQLite takes no server: BENCH_DSN is ignored.
	c, err = sqliteSpec.NewContext(cli.Args{N: 1, DataDir: "/d", DSN: "mysql://u:p@h/db"}, 1)
	if err != nil || c.DSN != "" {
		t.Errorf("with BENCH_DSN set: %+v, %v", c, err)
	}
}

func TestUsersPreopen(t *testing.T) {
	cases := []struct{ pool, n, want int }{
		{8, 10, 8}, {8, 3, 3}, {0, 1000, 8}, {0, 5, 5}, {64, 1000, 64}, {1, 1, 1},
	}
	for _, c := range cases {
		if got := usersPreopen(c.pool, c.n); got != c.want {
			t.Errorf("usersPreopen(%d, %d) = %d, want %d", c.pool, c.n, got, c.want)
		}
	}
}
