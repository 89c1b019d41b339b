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


def test_a_password_with_an_unencoded_hash_slash_or_question_mark_is_masked_whole():
    """urllib ends the network location at the first #, ? or /: for `bench:2024#Winter@db` it reads
    host `bench`, port 2024 and no password, and the password was printed whole."""
    for sep in "#/?":
        dsn = f"postgres://bench:2024{sep}Winter@db.example:5432/bench"
        assert "Winter" not in redact_dsn(dsn) and "2024" not in redact_dsn(dsn), redact_dsn(dsn)
        assert f"2024{sep}Winter" in dsn_secrets(dsn)
    assert redact_dsn("mysql://u:p@ss@h:3306/db") == "mysql://u:***@h:3306/db", "an @ in the password"
    assert dsn_secrets("mysql://u:p@ss@h:3306/db") == ["p@ss"]
    assert redact_dsn("mysql://u:pa:ss@h/db") == "mysql://u:***@h/db"


def test_text_that_quotes_a_url_is_masked():
    from bench_src.redact import redact_text
    text = """--plan '{workloads: [mysql], dsn: {mysql: "mysql://u:S3cretCCC@127.0.0.1:1/db"}': cannot read it"""
    assert "S3cretCCC" not in redact_text(text) and "mysql://u:***@127.0.0.1:1/db" in redact_text(text)
    assert redact_text("['postgres://u:2024#Winter@h/db']") == "['postgres://u:***@h/db']"
    assert redact_text("no url here: a:b@c") == "no url here: a:b@c"
    # a password with a space or a quote: the URL runs to the end of its line
    for pw in ("my pass", "it's", 'a"b', "a`b"):
        line = f"--plan \"{{dsn: {{mysql: 'mysql://bench:{pw}@127.0.0.1:1/bench'}}\": cannot read it\nnext line"
        assert pw not in redact_text(line) and redact_text(line).endswith("\nnext line"), redact_text(line)
    # a query's password, whatever the rest of the URL
    assert "Sekr1tQ" not in redact_text("dsn 'postgres://bench@127.0.0.1:54x2/bench?password=Sekr1tQ' is not a URL")
    # ordinary URLs keep their text: an @ in a path, a query, a package name
    for url in ('Get "https://proxy.golang.org/github.com/jackc/pgx/v5/@v/v5.12.0.mod": dial tcp: no such host',
                "https://www.npmjs.com/package/@types/node", "https://host/p?email=a@b.c", "s3://bucket/key@v2",
                "like {'mysql': 'mysql://user@host:3306/db'}"):
        assert redact_text(url) == url


def test_a_query_password_is_masked_when_the_port_is_malformed():
    """The URL did not parse, and its query's password was printed (before the masking of the user
    information was taken from the text, such a URL read as "not a valid URL")."""
    for dsn in ("postgres://bench@127.0.0.1:54x2/bench?password=Sekr1tQ",
                "postgres://u:pw@127.0.0.1:54x2/bench?sslmode=require&sslpassword=Sekr1tQ"):
        assert "Sekr1tQ" not in redact_dsn(dsn) and "pw@" not in redact_dsn(dsn), redact_dsn(dsn)


def test_a_dsn_the_drivers_would_read_otherwise_is_refused_naming_what_to_encode(monkeypatch):
    """Go's pgx and Rust's tokio-postgres end the user information at its first @ (the harness at
    the last), Go refuses a space, a letter outside ASCII or a bare %: such a DSN reached the
    programs and failed at every sample, or connected to another host.  Percent-encoded, it is
    accepted."""
    import pytest

    from bench_src.plan import make_plan

    for pw in ("p@ss", "my pass", "pässwort", "50%off", 'a"b', "2024#Winter", "a?b", "20/24", "Sekr#1t"):
        monkeypatch.setenv("MY_PG", f"postgres://bench:{pw}@127.0.0.1:5432/bench")
        with pytest.raises(ValueError, match="percent-encode") as exc:
            make_plan("quick", workloads=["postgres"], dsn={"postgres": "env:MY_PG"})
        assert pw not in str(exc.value), str(exc.value)
    monkeypatch.setenv("MY_PG", "postgres://bench:p%40ss%20x%25@127.0.0.1:5432/bench")
    assert make_plan("quick", workloads=["postgres"], dsn={"postgres": "env:MY_PG"}).dsn == {"postgres": "env:MY_PG"}


def test_errors_that_quote_the_users_dsn_never_show_its_password(monkeypatch, capsys):
    """Three ways a password reached an error line (and through papermill a notebook): a password
    urllib cannot see, a dsn given as a list, and a plan that is not valid YAML."""
    import pytest

    from bench_src.__main__ import main
    from bench_src.api import plan_from_parameters
    from bench_src.plan import make_plan

    monkeypatch.setenv("MY_PG", "postgres://bench:2024#Winter@db.example:5432/bench")
    with pytest.raises(ValueError) as exc:
        make_plan("quick", workloads=["postgres"], dsn={"postgres": "env:MY_PG"})
    assert "Winter" not in str(exc.value) and "percent-encode" in str(exc.value), str(exc.value)
    for dsn in (["mysql://u:S3cretAAA@127.0.0.1:1/db"], {"mysql://u:S3cretBBB@h/db": "x"}):
        with pytest.raises(ValueError) as exc:
            make_plan("quick", workloads=["mysql"], dsn=dsn)
        assert "S3cret" not in str(exc.value), str(exc.value)
    bad_yaml = '{workloads: [mysql], dsn: {mysql: "mysql://u:S3cretCCC@127.0.0.1:1/db"}'
    assert main(["check", "--plan", bad_yaml]) == 2
    err = capsys.readouterr().err
    assert "cannot read it as YAML" in err and "S3cretCCC" not in err, err
    with pytest.raises(ValueError) as exc:  # a papermill string
        plan_from_parameters(workloads="[mysql]", dsn='{mysql: "mysql://u:S3cretDDD@h/db"')
    assert "S3cretDDD" not in str(exc.value), str(exc.value)
