//! The database server's URL: read from BENCH_DSN, never from the command
//! line, and its password redacted from every message the program prints.

use percent_encoding::percent_decode_str;
use url::Url;

use crate::cli::error::BenchError;

/// The environment variable that holds the database server's URL
/// (`mysql://user:pass@host:port/db`, `postgres://...`). A URL with a
/// password never goes on the command line, where every local user can read
/// it.
pub const DSN_ENV: &str = "BENCH_DSN";

/// The DSN in BENCH_DSN; `None` when it is unset or empty. A value that is
/// not UTF-8 is a usage error.
pub fn dsn_from_env() -> Result<Option<String>, BenchError> {
    match std::env::var(DSN_ENV) {
        Ok(dsn) if dsn.is_empty() => Ok(None),
        Ok(dsn) => Ok(Some(dsn)),
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(_)) => {
            Err(BenchError::usage(format!("{DSN_ENV} is not valid UTF-8")))
        }
    }
}

/// `text` with the password of the DSN in BENCH_DSN redacted (see
/// [`redact_password`]); `text` unchanged when BENCH_DSN is unset or empty.
pub fn scrub(text: &str) -> String {
    match std::env::var(DSN_ENV) {
        Ok(dsn) if !dsn.is_empty() => redact_password(text, &dsn),
        _ => text.to_string(),
    }
}

/// The password of a `scheme://user:password@host/...` URL as the URL
/// holds it (percent-encoded), if it has one.
fn password(url: &Url) -> Option<&str> {
    url.password().filter(|password| !password.is_empty())
}

/// The shortest password also redacted where it stands alone; a shorter
/// one cannot be told apart from ordinary words of a message and is only
/// redacted where it stands between `user:` and `@`.
const MIN_BARE_PASSWORD: usize = 4;

/// `text` with the password of `dsn` replaced by `***`: the whole DSN as
/// `scheme://user:***@host...`, any `:password@`, and (when it is at least
/// `MIN_BARE_PASSWORD` bytes long) the password itself, percent-encoded
/// and decoded. A `dsn` that does not parse as a URL is redacted whole.
pub fn redact_password(text: &str, dsn: &str) -> String {
    let Ok(url) = Url::parse(dsn) else {
        return if dsn.is_empty() {
            text.to_string()
        } else {
            text.replace(dsn, "***")
        };
    };
    let Some(password) = password(&url) else {
        return text.to_string();
    };
    let mut redacted = url.clone();
    let mut out = match redacted.set_password(Some("***")) {
        Ok(()) => text.replace(dsn, redacted.as_str()),
        Err(()) => text.replace(dsn, "***"),
    };
    out = out.replace(&format!(":{password}@"), ":***@");
    let decoded = percent_decode_str(password).decode_utf8_lossy();
    for secret in [password, decoded.as_ref()] {
        if secret.len() >= MIN_BARE_PASSWORD {
            out = out.replace(secret, "***");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_found_in_urls() {
        let password = |dsn: &str| {
            Url::parse(dsn)
                .ok()
                .and_then(|url| password(&url).map(str::to_string))
        };
        assert_eq!(
            password("mysql://u:pw@127.0.0.1:3306/db").as_deref(),
            Some("pw")
        );
        // The last '@' of the authority ends the user information.
        assert_eq!(password("postgres://u:a@b@h/db").as_deref(), Some("a%40b"));
        assert_eq!(
            password("postgres://u:p%40ss@h/db?x=@").as_deref(),
            Some("p%40ss")
        );
        assert_eq!(password("mysql://u@h/db"), None);
        assert_eq!(password("mysql://u:@h/db"), None);
        assert_eq!(password("mysql://h/db"), None);
        assert_eq!(password("u:p@tcp(h:1)/db"), None);
    }

    #[test]
    fn passwords_are_redacted() {
        let dsn = "mysql://bench:s3cret%21pw@127.0.0.1:3306/db";
        let text = format!("connecting to {dsn}: refused; password s3cret!pw; s3cret%21pw");
        let out = redact_password(&text, dsn);
        assert_eq!(
            out,
            "connecting to mysql://bench:***@127.0.0.1:3306/db: refused; password ***; ***"
        );
        // A short password is redacted only in its place in a URL.
        let out = redact_password("postgres://u:p@h/db: ping failed", "postgres://u:p@h/db");
        assert_eq!(out, "postgres://u:***@h/db: ping failed");
        // A password with an '@' the URL holds percent-encoded: the DSN as
        // written and the password in either form.
        let dsn = "postgres://u:p@ss@h/db";
        let out = redact_password(&format!("{dsn}: auth failed for p@ss, p%40ss"), dsn);
        assert_eq!(out, "postgres://u:***@h/db: auth failed for ***, ***");
        // No password, nothing to do.
        assert_eq!(redact_password("x", "mysql://u@h/db"), "x");
        // Not a URL: the whole value goes.
        assert_eq!(
            redact_password("bad mysql://u:pw@h:port/db given", "mysql://u:pw@h:port/db"),
            "bad *** given"
        );
    }
}
