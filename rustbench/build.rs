//! Records the compiler version and the locked tokio version, so that every
//! result line can say exactly what produced it.

use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=Cargo.lock");
    println!("cargo:rerun-if-env-changed=RUSTC");

    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_string());
    let output = Command::new(&rustc)
        .arg("--version")
        .output()
        .unwrap_or_else(|e| panic!("cannot run `{rustc} --version`: {e}"));
    if !output.status.success() {
        panic!("`{rustc} --version` failed: {}", output.status);
    }
    let version = String::from_utf8_lossy(&output.stdout).trim().to_string();
    println!("cargo:rustc-env=RUSTBENCH_RUSTC_VERSION={version}");

    let manifest_dir = PathBuf::from(
        std::env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR is set by cargo"),
    );
    let lock_path = manifest_dir.join("Cargo.lock");
    let lock = std::fs::read_to_string(&lock_path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", lock_path.display()));
    let tokio = locked_version(&lock, "tokio")
        .unwrap_or_else(|| panic!("tokio not found in {}", lock_path.display()));
    println!("cargo:rustc-env=RUSTBENCH_TOKIO_VERSION={tokio}");
}

/// Version of `package` in a Cargo.lock file (the first `[[package]]` entry
/// with that name).
fn locked_version(lock: &str, package: &str) -> Option<String> {
    let wanted = format!("name = \"{package}\"");
    let mut lines = lock.lines().map(str::trim);
    while let Some(line) = lines.next() {
        if line == wanted {
            let next = lines.next()?;
            let value = next.strip_prefix("version = \"")?.strip_suffix('"')?;
            return Some(value.to_string());
        }
    }
    None
}
