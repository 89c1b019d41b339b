package workloads

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/go-sql-driver/mysql"
)

// mysql: the users tasks on a MySQL-compatible server through
// go-sql-driver/mysql and a database/sql pool. Same checksum as sqlite.
var mysqlSpec = &Spec{
	Name:           "mysql",
	Variants:       serverVariants,
	DefaultVariant: "pool",
	Params: []Param{
		serverPoolParam,
		{Name: "driver", Default: "go-sql-driver", Choices: []string{"go-sql-driver"}},
	},
	NeedsDSN: true,
	Run:      runMySQL,
}

func runMySQL(c *Context) (Outcome, error) {
	chanPerTask, err := chanPerTaskVariant(c.Variant, "pool")
	if err != nil {
		return Outcome{}, err
	}
	cfg, err := mysqlConfig(c.DSN)
	if err != nil {
		return Outcome{}, err
	}
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return Outcome{}, fmt.Errorf("mysql connector: %w", err)
	}
	db := sql.OpenDB(timeoutConnector{connector})
	pool := int(c.Int("pool"))
	db.SetMaxOpenConns(pool)
	db.SetMaxIdleConns(pool)

	log := cfg.Logger.(*firstLog)
	return runSQLUsers(c, sqlRun{
		db:          db,
		preopen:     usersPreopen(pool, c.N),
		update:      usersUpdateSQL,
		byID:        usersByIDSQL,
		byAge:       usersByAgeSQL,
		sum:         "SELECT CAST(SUM(salary) AS SIGNED) FROM users",
		chanPerTask: chanPerTask,
		onFail: func(err error) error {
			// Closing the pool makes every task still queued for a
			// connection fail at once with "database is closed".
			db.Close()
			if why := log.first(); why != "" && errors.Is(err, mysql.ErrInvalidConn) {
				err = fmt.Errorf("%w (driver log: %s)", err, why)
			}
			return err
		},
	})
}

// timeoutConnector opens a connection within serverConnectTimeout. The
// driver's own Timeout covers only dialling; this covers the handshake and
// authentication too.
type timeoutConnector struct {
	driver.Connector
}

func (c timeoutConnector) Connect(ctx context.Context) (driver.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, serverConnectTimeout)
	defer cancel()
	conn, err := c.Connector.Connect(ctx)
	if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return nil, fmt.Errorf("connect: no answer within %v: %w", serverConnectTimeout, err)
	}
	return conn, err
}

// firstLog is the driver's logger: it keeps the first message instead of
// printing it. The driver logs why a connection broke (an I/O error, a
// timeout) and returns only "invalid connection"; the first message is
// added to that error.
type firstLog struct {
	once sync.Once
	msg  atomic.Pointer[string]
}

func (l *firstLog) Print(v ...any) {
	l.once.Do(func() {
		s := strings.TrimSpace(fmt.Sprint(v...))
		l.msg.Store(&s)
	})
}

func (l *firstLog) first() string {
	if p := l.msg.Load(); p != nil {
		return *p
	}
	return ""
}

// mysqlConfig converts mysql://user:pass@host[:port]/db (port 3306 if
// omitted) to the driver's configuration, the same as the DSN
// user:pass@tcp(host:port)/db. Statements are prepared on the server
// (no client-side interpolation). Dialling times out after
// serverConnectTimeout (timeoutConnector bounds the whole connect); every
// read and write on a connection after serverStatementTimeout, which bounds
// each statement (one request, one response) without counting the wait for
// a pooled connection. The driver's log is kept, not printed (see firstLog).
func mysqlConfig(dsn string) (*mysql.Config, error) {
	u, err := serverURL(dsn, []string{"mysql"})
	if err != nil {
		return nil, err
	}
	port := u.Port()
	if port == "" {
		port = "3306"
	}
	cfg := mysql.NewConfig()
	cfg.User = u.User.Username()
	cfg.Passwd, _ = u.User.Password()
	cfg.Net = "tcp"
	cfg.Addr = net.JoinHostPort(u.Hostname(), port)
	cfg.DBName = u.Path[1:]
	cfg.InterpolateParams = false
	cfg.Timeout = serverConnectTimeout
	cfg.ReadTimeout = serverStatementTimeout
	cfg.WriteTimeout = serverStatementTimeout
	cfg.Logger = new(firstLog)
	return cfg, nil
}
