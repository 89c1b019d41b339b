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

    // Packed relative relocations (DT_RELR): the binary's ~22,000 relative
    // relocations take a few KB instead of a 520 KB table that the dynamic
    // loader reads at every start, which is 0.8 MiB less resident memory
    // (measured on `idle_tasks --n 1`) with the same machine code. Only where
    // the C library the binary runs against can load them (glibc 2.36 or
    // newer; an older one would ignore them and start a broken program).
    if packed_relocations_supported() {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}

/// Whether the binary is built for this machine, on Linux with glibc 2.36
/// or newer.
fn packed_relocations_supported() -> bool {
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    if var("TARGET") != var("HOST")
        || var("CARGO_CFG_TARGET_OS") != "linux"
        || var("CARGO_CFG_TARGET_ENV") != "gnu"
    {
        return false;
    }
    let Ok(output) = Command::new("getconf").arg("GNU_LIBC_VERSION").output() else {
        return false;
    };
    glibc_version(&String::from_utf8_lossy(&output.stdout)).is_some_and(|v| v >= (2, 36))
}

/// (major, minor) of `getconf GNU_LIBC_VERSION` output such as "glibc 2.36".
fn glibc_version(text: &str) -> Option<(u32, u32)> {
    let version = text.trim().strip_prefix("glibc ")?;
    let mut parts = version.split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
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
