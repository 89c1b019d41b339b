package cli

import "testing"

func TestRedactDSN(t *testing.T) {
	cases := map[string]string{
		"mysql://bench:s3cret@127.0.0.1:3306/bench": "mysql://bench:***@127.0.0.1:3306/bench",
		"postgres://u:p%40ss@h/db?sslmode=disable":  "postgres://u:***@h/db?sslmode=disable",
		"postgres://u:pa:ss@h/db":                   "postgres://u:***@h/db",
		"postgres://u:p@ss@h/db":                    "postgres://u:***@h/db",
		"postgres://u:p/ss@h/db":                    "postgres://u:***@h/db",
		"u:secret@tcp(h:1)/db":                      "u:***@tcp(h:1)/db",
		"mysql://u@h/db":                            "mysql://u@h/db",
		"mysql://h:3306/db":                         "mysql://h:3306/db",
		"mysql://u:@h/db":                           "mysql://u:***@h/db",
		"":                                          "",
		"not a url":                                 "not a url",
	}
	for in, want := range cases {
		if got := RedactDSN(in); got != want {
			t.Errorf("RedactDSN(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestScrub(t *testing.T) {
	dsn := "postgres://u:p%40ss-word@h:5432/db"
	cases := map[string]string{
		"connect " + dsn + ": refused":      "connect postgres://u:***@h:5432/db: refused",
		"auth failed for p@ss-word":         "auth failed for ***",
		"auth failed for p%40ss-word again": "auth failed for *** again",
		"nothing secret here":               "nothing secret here",
	}
	for in, want := range cases {
		if got := Scrub(in, dsn); got != want {
			t.Errorf("Scrub(%q) = %q, want %q", in, got, want)
		}
	}
	if got := Scrub("a message", ""); got != "a message" {
		t.Errorf("no DSN: %q", got)
	}
	if got := Scrub("user u on h", "mysql://u@h/db"); got != "user u on h" {
		t.Errorf("DSN without a password: %q", got)
	}
}
