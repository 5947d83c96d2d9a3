//! Certificates for the TLS tests, made by openssl in a new directory: a CA, a server
//! certificate for 127.0.0.1 and localhost, and a client certificate. Only std and the
//! `openssl` command: the client package's tests include this file by its path.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// Runs `openssl` with `args` in `dir`.
pub fn openssl(dir: &Path, args: &[&str]) {
    let output = Command::new("openssl").current_dir(dir).args(args).output().expect("openssl runs");
    assert!(output.status.success(), "openssl {args:?}: {}", String::from_utf8_lossy(&output.stderr));
}

/// `NAME.pem` and `NAME.key` in `dir`: a P-256 certificate for `cn`, signed by `ca.pem`, with
/// the extensions of `usage` (`serverAuth` for 127.0.0.1 and localhost, or `clientAuth`).
pub fn issue_certificate(dir: &Path, name: &str, cn: &str, usage: &str) {
    let ext = format!("{name}.ext");
    let mut text = format!("basicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage={usage}\n");
    if usage == "serverAuth" {
        text.push_str("subjectAltName=IP:127.0.0.1,DNS:localhost\n");
    }
    std::fs::write(dir.join(&ext), text).unwrap();
    let (key, csr, pem) = (format!("{name}.key"), format!("{name}.csr"), format!("{name}.pem"));
    let subject = format!("/CN={cn}");
    openssl(
        dir,
        &["req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
            .into_iter()
            .chain(["-keyout", &key, "-out", &csr, "-subj", &subject])
            .collect::<Vec<_>>(),
    );
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            &csr,
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-days",
            "2",
            "-out",
            &pem,
            "-extfile",
            &ext,
        ],
    );
}

/// Whether `openssl` runs (`openssl version`: it has no `--version`).
pub fn openssl_present() -> bool {
    Command::new("openssl").arg("version").output().is_ok_and(|o| o.status.success())
}

/// A CA (`ca.pem`), a server certificate (`server.pem`, `server.key`) and a client one
/// (`client.pem`, `client.key`), made in `dir` (created).
pub fn make(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    openssl(
        dir,
        &[
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-keyout",
            "ca.key",
            "-out",
            "ca.pem",
            "-days",
            "2",
            "-subj",
            "/CN=snowflake test CA",
        ],
    );
    issue_certificate(dir, "server", "server one", "serverAuth");
    issue_certificate(dir, "client", "a client", "clientAuth");
    dir.to_path_buf()
}
