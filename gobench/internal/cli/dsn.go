package cli

import (
	"net/url"
	"strings"
)

// DSNEnv is the environment variable that holds the database URL
// (scheme://user:pass@host:port/db) of the server workloads. There is no
// command-line flag for it: a password in argv is visible to every user of
// the machine and ends up in logs and results files.
const DSNEnv = "BENCH_DSN"

// userinfo splits a database URL around its password: prefix up to and
// including the ':' after the user name, the password, and the rest from
// the '@' on. It works on strings that do not parse as URLs too (it takes
// the last '@' of the authority), so it errs on the side of hiding more.
// ok is false when there is no password.
func userinfo(dsn string) (prefix, password, rest string, ok bool) {
	start := 0
	if i := strings.Index(dsn, "://"); i >= 0 {
		start = i + 3
	}
	at := strings.LastIndex(dsn[start:], "@")
	if at < 0 {
		return "", "", "", false
	}
	at += start
	colon := strings.Index(dsn[start:at], ":")
	if colon < 0 {
		return "", "", "", false
	}
	colon += start
	return dsn[:colon+1], dsn[colon+1 : at], dsn[at:], true
}

// RedactDSN returns dsn with its password replaced by ***
// (scheme://user:***@host:port/db); a dsn without a password is returned
// unchanged.
func RedactDSN(dsn string) string {
	prefix, _, rest, ok := userinfo(dsn)
	if !ok {
		return dsn
	}
	return prefix + "***" + rest
}

// Scrub returns msg with dsn redacted and every other occurrence of its
// password, as written or percent-decoded, replaced by ***.
func Scrub(msg, dsn string) string {
	if dsn == "" {
		return msg
	}
	msg = strings.ReplaceAll(msg, dsn, RedactDSN(dsn))
	_, pw, _, ok := userinfo(dsn)
	if !ok || pw == "" {
		return msg
	}
	secrets := []string{pw}
	if dec, err := url.PathUnescape(pw); err == nil && dec != pw {
		secrets = append(secrets, dec)
	}
	for _, s := range secrets {
		msg = strings.ReplaceAll(msg, s, "***")
	}
	return msg
}
