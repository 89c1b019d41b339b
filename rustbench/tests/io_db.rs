//! The file and database workloads run through the built binary, on
//! fixtures made here, the way the harness makes them.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::json;

use common::{BIN, last_json, one_line_stderr, run, run_with_dsn};

/// The variants of files_read and files_rw.
const FILE_VARIANTS: [&str; 4] = [
    "spawn-blocking",
    "spawn-blocking-digest",
    "tokio-fs",
    "blocking-in-task",
];

fn assert_exit(output: &Output, code: i32, needle: &str) {
    assert_eq!(output.status.code(), Some(code), "{output:?}");
    let stderr = one_line_stderr(output);
    assert!(
        stderr.contains(needle),
        "stderr {stderr:?} lacks {needle:?}"
    );
}

/// MINSTD: element k is `x[k] % m`, `x[0] = seed`.
fn lcg(seed: u64, count: usize, m: u64) -> Vec<u64> {
    let mut x = seed;
    let mut out = Vec::with_capacity(count);
    for _ in 0..count {
        out.push(x % m);
        x = 48_271 * x % 2_147_483_647;
    }
    out
}

/// A fresh, empty directory under the system temp dir.
fn scratch(tag: &str) -> PathBuf {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "rustbench-io-db-{tag}-{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    if dir.exists() {
        std::fs::remove_dir_all(&dir).unwrap();
    }
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Files fixture: file k has 3(k+1) lines; line j is 63 x ('a' + (k+j)%26) and '\n'.
fn write_files(dir: &Path) {
    for k in 0..20usize {
        let mut content = Vec::new();
        for j in 0..3 * (k + 1) {
            content.extend(std::iter::repeat_n(b'a' + ((k + j) % 26) as u8, 63));
            content.push(b'\n');
        }
        std::fs::write(dir.join(format!("{k}.txt")), content).unwrap();
    }
}

/// SQLite template: users(id, salary, age, address), 10,000 rows,
/// row k = (k, lcg(7)[k] % 201, lcg(9)[k] % 100, 'Somewhere').
fn write_users_db(path: &Path) {
    let salaries = lcg(7, 10_000, 201);
    let ages = lcg(9, 10_000, 100);
    let mut conn = rusqlite::Connection::open(path).unwrap();
    conn.execute_batch(
        "CREATE TABLE users (id INT PRIMARY KEY NOT NULL, salary INT NOT NULL, \
         age INT NOT NULL, address CHAR(50))",
    )
    .unwrap();
    let tx = conn.transaction().unwrap();
    {
        let mut insert = tx
            .prepare("INSERT INTO users VALUES (?, ?, ?, 'Somewhere')")
            .unwrap();
        for k in 0..10_000usize {
            insert
                .execute([k as i64, salaries[k] as i64, ages[k] as i64])
                .unwrap();
        }
    }
    tx.commit().unwrap();
    conn.close().map_err(|(_, e)| e).unwrap();
}

#[test]
fn list_reports_the_io_and_database_workloads() {
    let v = last_json(&run(&["list"]));
    let w = &v["workloads"];
    for name in ["files_read", "files_rw"] {
        assert_eq!(w[name]["variants"], json!(FILE_VARIANTS), "{name}");
        assert_eq!(w[name]["default_variant"], "spawn-blocking", "{name}");
    }
    assert_eq!(
        w["files_read"]["params"],
        json!({"retain": "digest", "digest": "on"})
    );
    assert_eq!(
        w["files_rw"]["params"],
        json!({"retain": "digest", "digest": "on", "flush": "on"})
    );
    assert_eq!(
        w["sqlite"]["variants"],
        json!(["pool", "serialized-writes"])
    );
    assert_eq!(w["sqlite"]["default_variant"], "pool");
    assert_eq!(
        w["sqlite"]["params"],
        json!({"journal": "wal", "pool": "8", "driver": "sqlx"})
    );
    assert_eq!(w["mysql"]["variants"], json!(["pool"]));
    assert_eq!(w["mysql"]["default_variant"], "pool");
    assert_eq!(
        w["mysql"]["params"],
        json!({"pool": "64", "driver": "sqlx"})
    );
    assert_eq!(w["postgres"]["variants"], json!(["pool"]));
    assert_eq!(w["postgres"]["default_variant"], "pool");
    assert_eq!(
        w["postgres"]["params"],
        json!({"pool": "64", "driver": "sqlx"})
    );
}

#[test]
fn data_dir_is_required_or_rejected() {
    for workload in ["files_read", "files_rw", "sqlite"] {
        assert_exit(&run(&[workload, "--n", "1"]), 2, "needs --data-dir");
    }
    for workload in ["mysql", "postgres", "sleep", "cpu_loops"] {
        assert_exit(
            &run_with_dsn(
                "mysql://u:p@127.0.0.1:1/db",
                &[workload, "--n", "1", "--data-dir", "/tmp"],
            ),
            2,
            "does not take --data-dir",
        );
    }
}

/// A password that must never reach stderr.
const SECRET: &str = "n0t-for-argv";

fn assert_no_secret(output: &Output) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        !stderr.contains(SECRET),
        "stderr shows the password: {stderr}"
    );
    assert!(
        !stdout.contains(SECRET),
        "stdout shows the password: {stdout}"
    );
}

#[test]
fn dsn_flag_is_refused_naming_bench_dsn() {
    let dsn = format!("mysql://u:{SECRET}@127.0.0.1:1/db");
    let inline = format!("--dsn={dsn}");
    for workload in ["mysql", "postgres", "sleep", "files_read"] {
        for flag in [&["--dsn", dsn.as_str()][..], &[inline.as_str()][..]] {
            let mut args = vec![workload, "--n", "1"];
            args.extend_from_slice(flag);
            let output = run(&args);
            assert_exit(&output, 2, "set the environment variable BENCH_DSN");
            assert_no_secret(&output);
        }
    }
}

#[test]
fn server_workloads_need_bench_dsn() {
    for workload in ["mysql", "postgres"] {
        assert_exit(&run(&[workload, "--n", "1"]), 2, "BENCH_DSN");
        assert_exit(&run_with_dsn("", &[workload, "--n", "1"]), 2, "BENCH_DSN");
    }
}

#[test]
fn other_workloads_ignore_bench_dsn() {
    let output = run_with_dsn(
        &format!("mysql://u:{SECRET}@127.0.0.1:1/db"),
        &[
            "sleep",
            "--n",
            "3",
            "--param",
            "work=0",
            "--param",
            "kernel=article",
        ],
    );
    let v = last_json(&output);
    assert_eq!(v["tasks_ok"], 3);
    assert_no_secret(&output);
}

#[test]
fn messages_never_show_the_password() {
    let cases: &[(&str, &str, i32)] = &[
        // Unreachable server: the driver's error, exit 1.
        ("mysql", "mysql://bench:{}@127.0.0.1:1/db", 1),
        ("postgres", "postgres://bench:{}@127.0.0.1:1/db", 1),
        // Wrong scheme or a URL the driver refuses: exit 2.
        ("mysql", "postgres://bench:{}@127.0.0.1:1/db", 2),
        ("postgres", "mysql://bench:{}@127.0.0.1:1/db", 2),
        ("mysql", "mysql://bench:{}@127.0.0.1:notaport/db", 2),
        ("postgres", "postgres://bench:{}@127.0.0.1:notaport/db", 2),
    ];
    for (workload, template, code) in cases {
        let dsn = template.replace("{}", SECRET);
        for driver in match *workload {
            "mysql" => ["sqlx", "mysql_async"],
            _ => ["sqlx", "tokio-postgres"],
        } {
            let param = format!("driver={driver}");
            let output = run_with_dsn(&dsn, &[workload, "--n", "1", "--param", &param]);
            assert_eq!(
                output.status.code(),
                Some(*code),
                "{dsn} {driver}: {output:?}"
            );
            one_line_stderr(&output);
            assert_no_secret(&output);
        }
    }
}

#[test]
fn bad_params_exit_2() {
    let dir = "--data-dir=/nonexistent";
    let cases: &[&[&str]] = &[
        &["files_read", "--n", "1", dir, "--param", "retain=all"],
        &["files_read", "--n", "1", dir, "--param", "digest=yes"],
        &["files_read", "--n", "1", dir, "--param", "flush=off"],
        &["files_rw", "--n", "1", dir, "--param", "flush=no"],
        &["files_read", "--n", "1", dir, "--variant", "readfile"],
        &["files_rw", "--n", "1", dir, "--param", "size=1"],
        &["files_rw", "--n", "1", dir, "--variant", "chan-per-task"],
        &["sqlite", "--n", "1", dir, "--param", "journal=memory"],
        &["sqlite", "--n", "1", dir, "--param", "pool=-1"],
        &["sqlite", "--n", "1", dir, "--param", "driver=mattn"],
        &["sqlite", "--n", "1", dir, "--variant", "chan-per-task"],
        &["mysql", "--n", "1", "--param", "pool=0"],
        &["mysql", "--n", "1", "--param", "driver=go-sql-driver"],
        &["mysql", "--n", "1", "--variant", "serialized-writes"],
        &["postgres", "--n", "1", "--param", "pool=0"],
        &["postgres", "--n", "1", "--param", "driver=pgx"],
        &["postgres", "--n", "1", "--param", "journal=wal"],
    ];
    for args in cases {
        let output = run_with_dsn("postgres://u:p@127.0.0.1:1/db", args);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {output:?}");
    }
    for (workload, dsn) in [
        ("postgres", "mysql://u:p@127.0.0.1:1/db"),
        ("mysql", "u:p@tcp(127.0.0.1:1)/db"),
    ] {
        let output = run_with_dsn(dsn, &[workload, "--n", "1"]);
        assert_exit(&output, 2, "BENCH_DSN must be");
    }
}

#[test]
fn file_workloads_through_the_binary() {
    let dir = scratch("files");
    let data = dir.to_str().unwrap();
    for variant in FILE_VARIANTS {
        write_files(&dir);
        let v = last_json(&run(&[
            "files_read",
            "--n",
            "1000",
            "--variant",
            variant,
            "--data-dir",
            data,
        ]));
        assert_eq!(v["checksum"], "3ee62239fbe5c46b", "{variant}");
        assert_eq!(v["tasks_ok"], 1000);
        assert_eq!(v["workload"], "files_read");

        write_files(&dir);
        let v = last_json(&run(&[
            "files_rw",
            "--n",
            "1000",
            "--variant",
            variant,
            "--data-dir",
            data,
            "--param",
            "retain=content",
        ]));
        assert_eq!(v["checksum"], "000000000021058e", "{variant}");
        assert_eq!(v["tasks_ok"], 1000);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn files_rw_survives_a_low_open_file_limit() {
    // With the hard limit at 1,200 no variant may run the process out of
    // file descriptors (the tokio-fs appends are the ones at risk).
    let dir = scratch("files-nofile");
    for variant in FILE_VARIANTS {
        write_files(&dir);
        let script = format!(
            "ulimit -n 1200 && exec '{BIN}' files_rw --n 20000 --variant {variant} --data-dir '{}'",
            dir.display()
        );
        let output = Command::new("sh").args(["-c", &script]).output().unwrap();
        let v = last_json(&output);
        assert_eq!(v["nofile_limit"], 1200, "{variant}");
        assert_eq!(v["tasks_ok"], 20_000, "{variant}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_missing_fixture_exits_1() {
    let dir = scratch("missing");
    let data = dir.to_str().unwrap();
    assert_exit(
        &run(&["files_read", "--n", "5", "--data-dir", data]),
        1,
        "No such file or directory",
    );
    for driver in ["sqlx", "rusqlite"] {
        let param = format!("driver={driver}");
        let output = run(&["sqlite", "--n", "5", "--data-dir", data, "--param", &param]);
        assert_eq!(output.status.code(), Some(1), "{driver}: {output:?}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn sqlite_through_the_binary() {
    let dir = scratch("sqlite");
    let template = dir.join("template.db");
    write_users_db(&template);
    let data = dir.join("data");
    for driver in ["sqlx", "rusqlite"] {
        for variant in ["pool", "serialized-writes"] {
            if data.exists() {
                std::fs::remove_dir_all(&data).unwrap();
            }
            std::fs::create_dir_all(&data).unwrap();
            std::fs::copy(&template, data.join("users.db")).unwrap();
            let param = format!("driver={driver}");
            let v = last_json(&run(&[
                "sqlite",
                "--n",
                "1000",
                "--variant",
                variant,
                "--data-dir",
                data.to_str().unwrap(),
                "--param",
                &param,
            ]));
            assert_eq!(v["checksum"], "00000000000ffd24", "{driver} {variant}");
            assert_eq!(v["tasks_ok"], 1000);
            assert_eq!(v["preopened_connections"], 8);
            assert_eq!(v["params"]["journal"], "wal");
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
