package workloads

import (
	"database/sql"
	"fmt"
	"net"

	"github.com/go-sql-driver/mysql"
)

// mysql: the users tasks on a MySQL-compatible server through
// go-sql-driver/mysql and a database/sql pool. Same checksum as sqlite.
var mysqlSpec = &Spec{
	Name:           "mysql",
	Variants:       serverVariants,
	DefaultVariant: "pool",
	Params:         serverParams("go-sql-driver"),
	NeedsDSN:       true,
	Run:            oneLineErrors(runMySQL),
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
	db := sql.OpenDB(connector)
	pool := int(c.Int("pool"))
	db.SetMaxOpenConns(pool)
	db.SetMaxIdleConns(pool)

	return runSQLUsers(c, sqlRun{
		db:          db,
		preopen:     usersPreopen(pool, c.N),
		update:      usersUpdateSQL,
		byID:        usersByIDSQL,
		byAge:       usersByAgeSQL,
		sum:         "SELECT CAST(SUM(salary) AS SIGNED) FROM users",
		chanPerTask: chanPerTask,
	})
}

// mysqlConfig converts mysql://user:pass@host[:port]/db (port 3306 if
// omitted) to the driver's configuration, the same as the DSN
// user:pass@tcp(host:port)/db. Statements are prepared on the server
// (no client-side interpolation).
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
	return cfg, nil
}
