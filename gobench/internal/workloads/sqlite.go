package workloads

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	_ "github.com/mattn/go-sqlite3" // registers "sqlite3" (cgo)
	_ "modernc.org/sqlite"          // registers "sqlite" (pure Go)
)

// sqlite: the users tasks on DIR/users.db through a database/sql pool.
// Checksum: updates + rows returned by the odd-age queries + the final
// SELECT SUM(salary).
var sqliteSpec = &Spec{
	Name:           "sqlite",
	Variants:       []string{"pool", "chan-per-task", "serialized-writes"},
	DefaultVariant: "pool",
	Params: []Param{
		{Name: "journal", Default: "wal", Choices: []string{"wal", "delete"}},
		{Name: "pool", Default: "8", Min: 0, Max: math.MaxInt32},
		{Name: "driver", Default: "mattn", Choices: []string{"mattn", "modernc"}},
	},
	NeedsDataDir: true,
	Run:          runSQLite,
}

// sqliteDriver returns the database/sql driver name of --param driver.
func sqliteDriver(name string) (string, bool) {
	switch name {
	case "mattn":
		return "sqlite3", true
	case "modernc":
		return "sqlite", true
	}
	return "", false
}

// sqliteBusyTimeoutMs is the busy timeout of every connection.
const sqliteBusyTimeoutMs = 5000

func runSQLite(c *Context) (Outcome, error) {
	driver, ok := sqliteDriver(c.Params["driver"])
	if !ok {
		return Outcome{}, fmt.Errorf("driver %q not implemented", c.Params["driver"])
	}
	var chanPerTask, serialize bool
	switch c.Variant {
	case "pool":
	case "chan-per-task":
		chanPerTask = true
	case "serialized-writes":
		serialize = true
	default:
		return Outcome{}, fmt.Errorf("variant %q not implemented", c.Variant)
	}
	journal := c.Params["journal"]
	dsn, err := sqliteDSN(c.DataDir, journal)
	if err != nil {
		return Outcome{}, err
	}

	db, err := sql.Open(driver, dsn)
	if err != nil {
		return Outcome{}, fmt.Errorf("open %s: %w", dsn, err)
	}
	pool := int(c.Int("pool"))
	idle := pool
	if pool == 0 {
		idle = c.N
	}
	db.SetMaxOpenConns(pool)
	db.SetMaxIdleConns(idle)

	return runSQLUsers(c, sqlRun{
		db:              db,
		preopen:         usersPreopen(pool, c.N),
		check:           func(ctx context.Context, conn *sql.Conn) error { return sqliteCheck(ctx, conn, journal) },
		update:          usersUpdateSQL,
		byID:            usersByIDSQL,
		byAge:           usersByAgeSQL,
		sum:             "SELECT SUM(salary) FROM users",
		chanPerTask:     chanPerTask,
		serializeWrites: serialize,
	})
}

// sqliteDSN builds the DSN of DIR/users.db. Both drivers read the same
// connection parameters and apply them on every new connection, busy
// timeout first.
func sqliteDSN(dir, journal string) (string, error) {
	path := filepath.Join(dir, "users.db")
	if strings.Contains(path, "?") {
		return "", fmt.Errorf("database path %q contains '?'", path)
	}
	// Opening a missing file would create an empty database.
	if _, err := os.Stat(path); err != nil {
		return "", err
	}
	return fmt.Sprintf("%s?_busy_timeout=%d&_journal_mode=%s&_synchronous=FULL",
		path, sqliteBusyTimeoutMs, strings.ToUpper(journal)), nil
}

// sqliteCheck verifies that a connection has the journal mode, synchronous
// level and busy timeout the DSN asked for.
func sqliteCheck(ctx context.Context, conn *sql.Conn, journal string) error {
	var mode string
	var syncLevel, busy int64
	for _, q := range []struct {
		pragma string
		dst    any
	}{{"journal_mode", &mode}, {"synchronous", &syncLevel}, {"busy_timeout", &busy}} {
		if err := conn.QueryRowContext(ctx, "PRAGMA "+q.pragma).Scan(q.dst); err != nil {
			return fmt.Errorf("PRAGMA %s: %w", q.pragma, err)
		}
	}
	const full = 2
	if !strings.EqualFold(mode, journal) || syncLevel != full || busy != sqliteBusyTimeoutMs {
		return fmt.Errorf("connection settings journal_mode=%s synchronous=%d busy_timeout=%d, want %s, %d, %d",
			mode, syncLevel, busy, journal, full, sqliteBusyTimeoutMs)
	}
	return nil
}
