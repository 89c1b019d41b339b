import sqlite3

from bench_src.run import fixtures
from reference import fixture_file, users_rows


def test_files_follow_the_specification(tmp_path):
    d = fixtures.make_files(tmp_path / "f")
    assert sorted(p.name for p in d.iterdir()) == sorted(f"{k}.txt" for k in range(20))
    for k in range(20):
        data = (d / f"{k}.txt").read_bytes()
        assert data == fixture_file(k)
        assert len(data) == 192 * (k + 1)
    assert (d / "0.txt").read_bytes()[:64] == b"a" * 63 + b"\n"
    assert (d / "1.txt").read_bytes()[64:128] == b"c" * 63 + b"\n"


def test_sqlite_template_holds_the_users(tmp_path):
    path = fixtures.make_sqlite(tmp_path / "s")
    con = sqlite3.connect(path)
    rows = con.execute("SELECT id, salary, age, address FROM users ORDER BY id").fetchall()
    con.close()
    assert rows == users_rows()
    assert rows[:3] == [(0, 7, 9, "Somewhere"), (1, 16, 39, "Somewhere"), (2, 153, 46, "Somewhere")]


def test_restore_gives_identical_fresh_copies(tmp_path):
    fx = fixtures.Fixtures(tmp_path)
    first = fx.for_sample("files_rw")
    (first / "0.txt").write_bytes(b"changed")
    (first / "extra.txt").write_bytes(b"left over")
    again = fx.for_sample("files_rw")
    assert (again / "0.txt").read_bytes() == fixture_file(0)
    assert not (again / "extra.txt").exists()
    db = fx.for_sample("sqlite")
    (db / "users.db-wal").write_bytes(b"stale")
    con = sqlite3.connect(db / "users.db")
    con.execute("UPDATE users SET salary = 0")
    con.commit()
    con.close()
    db = fx.for_sample("sqlite")
    assert not (db / "users.db-wal").exists()
    con = sqlite3.connect(db / "users.db")
    assert con.execute("SELECT SUM(salary) FROM users").fetchone()[0] == sum(r[1] for r in users_rows())
    con.close()


def test_insert_sql_covers_every_row():
    sql = fixtures.users_insert_sql("t", batch=3000)
    assert sql.count("INSERT INTO t VALUES") == 4
    assert "(9999," in sql and "'Somewhere'" in sql


def test_a_template_is_made_whole_or_not_at_all_and_a_full_disk_is_the_os_error_of_one(tmp_path, monkeypatch):
    """A run stopped by a full disk while making users.db left a 12 KB file with no rows, which every
    later sample took as the template ("UPDATE of users.id = 17 affected 0 rows", for good); SQLite's
    "database or disk is full" escaped as a traceback.  Now nothing is left and the error is ENOSPC."""
    import errno

    import pytest

    real_connect = sqlite3.connect

    class Full:
        def __init__(self, path):
            self.con = real_connect(path)

        def execute(self, *args):
            return self.con.execute(*args)

        def executemany(self, *args):
            raise sqlite3.OperationalError("database or disk is full")

        def commit(self):
            self.con.commit()

        def close(self):
            self.con.close()

    fx = fixtures.Fixtures(tmp_path / "fixtures")
    monkeypatch.setattr(fixtures.sqlite3, "connect", Full)
    with pytest.raises(OSError) as err:
        fx.for_sample("sqlite")
    assert err.value.errno == errno.ENOSPC and "SQLite template" in str(err.value)
    assert list((tmp_path / "fixtures" / "templates" / "sqlite").iterdir()) == [], "no half-made template"
    monkeypatch.setattr(fixtures.sqlite3, "connect", real_connect)
    con = sqlite3.connect(fx.for_sample("sqlite") / "users.db")
    assert con.execute("SELECT COUNT(*) FROM users").fetchone()[0] == fixtures.N_USERS
    con.close()

    calls = {"n": 0}
    real_write = type(tmp_path).write_bytes

    def write_bytes(self, data):
        calls["n"] += 1
        if calls["n"] == 5:
            raise OSError(errno.ENOSPC, "No space left on device", str(self))
        return real_write(self, data)

    monkeypatch.setattr(type(tmp_path), "write_bytes", write_bytes)
    with pytest.raises(OSError):
        fx.files_template()
    assert not (fx.templates / "files").exists(), "a files template with some files missing is not left as made"
    monkeypatch.setattr(type(tmp_path), "write_bytes", real_write)
    assert len(list(fx.files_template().iterdir())) == fixtures.N_FILES
