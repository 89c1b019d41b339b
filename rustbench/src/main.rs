//! rustbench: the Rust (tokio) side of the Go vs Rust benchmark.
//!
//! `rustbench <workload> --n N [--variant V] [--threads T] [--data-dir DIR]
//! [--param KEY=VALUE ...]` runs one workload and prints one JSON object on
//! the last line of stdout; `rustbench list` describes every workload. The
//! database workloads read their server's URL from the environment variable
//! BENCH_DSN. Exit status: 0 on success, 2 for a bad command line, 1 for any
//! failure while running.

mod affinity;
mod cli;
mod lcg;
mod workloads;

use std::io::Write;

use cli::args::{Command, USAGE};
use cli::error::BenchError;
use workloads::{registry, spec};

fn main() {
    let process_start = cli::timer::mono_ns();
    install_panic_hook();
    match real_main(process_start) {
        Ok(()) => {}
        Err(err) => {
            eprintln!("{}", cli::stderr::error_line(&err));
            std::process::exit(err.exit_code());
        }
    }
}

fn real_main(process_start: u64) -> Result<(), BenchError> {
    let command = cli::args::parse_args(std::env::args().skip(1))?;
    let line = match command {
        Command::Help => USAGE.to_string(),
        Command::List => registry::list_json()?,
        Command::Run(mut args) => {
            args.dsn = cli::dsn::dsn_from_env()?;
            let (spec, mut ctx) = registry::prepare(&args, process_start)?;
            let nofile = cli::rlimit::raise_nofile_limit()?;
            ctx.set_extra("nofile_limit", nofile);
            let report = spec::execute(spec, ctx)?;
            serde_json::to_string(&report)?
        }
    };
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{line}")?;
    stdout.flush()?;
    Ok(())
}

/// A panic anywhere (including inside a worker thread) ends the program with
/// status 1 and one line on stderr, like every other runtime failure.
fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let text = cli::stderr::panic_line(&info);
        // Nothing sensible is left to do if stderr itself fails.
        let _ = writeln!(std::io::stderr().lock(), "{text}");
        std::process::exit(1);
    }));
}
