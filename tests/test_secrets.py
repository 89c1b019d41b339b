"""Secrets never reach what the harness writes: DSNs are redacted and known passwords masked."""
from bench_src.plan.dsn import redact_dsn
from bench_src.store.secrets import Scrubber, dsn_secrets


def test_redact_dsn_hides_the_password_wherever_it_is():
    assert redact_dsn("mysql://bench:s3cr%40t@127.0.0.1:3306/bench") == "mysql://bench:***@127.0.0.1:3306/bench"
    assert redact_dsn("postgres://u:pw@host/db") == "postgres://u:***@host/db", "no port stays no port"
    assert redact_dsn("postgres://u@host/db?sslmode=disable&password=pw2") == \
        "postgres://u@host/db?sslmode=disable&password=***"
    assert redact_dsn("postgres://host/db") == "postgres://host/db"
    assert "secret" not in redact_dsn("mysql://u:secret@h:notaport/db")


def test_dsn_secrets_lists_raw_and_decoded_passwords():
    assert set(dsn_secrets("mysql://u:s3cr%40t@h/db")) == {"s3cr%40t", "s3cr@t"}
    assert dsn_secrets("postgres://u@h/db?password=from-query") == ["from-query"]
    assert dsn_secrets("postgres://h/db") == []


def test_the_scrubber_masks_text_and_nested_data():
    s = Scrubber(["hunter2-long", "abc"])  # too short to mask without damaging ordinary text
    assert s.text("connect failed: hunter2-long rejected") == "connect failed: *** rejected"
    assert s.data({"a": ["x hunter2-long", 3], "hunter2-long": None}) == {"a": ["x ***", 3], "***": None}
    assert s.text("abc") == "abc"
    seen = []
    s.wrap(seen.append)("pw=hunter2-long")
    assert seen == ["pw=***"]
