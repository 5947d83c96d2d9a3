//! Which lease stores this build of the server has, and what to install when one is missing.

/// The command that installs `snowflake` with `serve`, `leases` and all five lease stores.
///
/// ```
/// assert_eq!(snowflake_server::stores::INSTALL, "cargo install --locked snowflake-cli --features full");
/// ```
pub const INSTALL: &str = "cargo install --locked snowflake-cli --features full";

/// The same, with ZooKeeper over TLS (`zks://`), which builds aws-lc-rs, a C library.
///
/// ```
/// assert!(snowflake_server::stores::INSTALL_ZOOKEEPER_TLS.ends_with("--features full,zookeeper-tls"));
/// ```
pub const INSTALL_ZOOKEEPER_TLS: &str = "cargo install --locked snowflake-cli --features full,zookeeper-tls";

/// The feature of this package a lease URL's store needs, and whether this build has it;
/// `None` for a scheme that is no lease store's (the store's own parser then says what it
/// expects).
///
/// ```
/// use snowflake_server::stores::feature_of;
///
/// assert_eq!(feature_of("etcd://127.0.0.1:2379").map(|(feature, _)| feature), Some("lease-etcd"));
/// assert_eq!(feature_of("ZKS://zk:2281/").map(|(feature, _)| feature), Some("lease-zookeeper-tls"));
/// assert_eq!(feature_of("gopher://host"), None);
/// ```
pub fn feature_of(url: &str) -> Option<(&'static str, bool)> {
    let scheme = url.trim().split_once("://")?.0.to_ascii_lowercase();
    Some(match scheme.as_str() {
        "redis" | "rediss" | "valkey" | "valkeys" | "redis+sentinel" | "rediss+sentinel" => {
            ("lease-redis", cfg!(feature = "lease-redis"))
        }
        "postgres" | "postgresql" => ("lease-postgres", cfg!(feature = "lease-postgres")),
        "mysql" | "mariadb" => ("lease-mysql", cfg!(feature = "lease-mysql")),
        "etcd" | "etcds" | "etcd+http" | "etcd+https" => ("lease-etcd", cfg!(feature = "lease-etcd")),
        "zk" => ("lease-zookeeper", cfg!(feature = "lease-zookeeper")),
        "zks" | "zk+tls" => ("lease-zookeeper-tls", cfg!(feature = "lease-zookeeper-tls")),
        _ => return None,
    })
}

/// `Err` with what to install when this build has no store for `url`: the crate and the flag
/// (`snowflake-cli --features full`, or `full,zookeeper-tls` for ZooKeeper over TLS), and the
/// feature of snowflake-server for those who build it themselves.
///
/// ```
/// use snowflake_server::stores::check_compiled;
///
/// assert!(check_compiled("redis://127.0.0.1:6379").is_ok());
/// if let Err(why) = check_compiled("zks://zk:2281/") {
///     assert!(why.contains("cargo install --locked snowflake-cli --features full,zookeeper-tls"), "{why}");
///     assert!(why.contains("`lease-zookeeper-tls` feature of snowflake-server"), "{why}");
/// }
/// ```
pub fn check_compiled(url: &str) -> Result<(), String> {
    match feature_of(url) {
        Some((feature, false)) => {
            let scheme = url.trim().split_once("://").map_or("", |(scheme, _)| scheme);
            let install = if feature == "lease-zookeeper-tls" { INSTALL_ZOOKEEPER_TLS } else { INSTALL };
            Err(format!(
                "this build has no {scheme}:// lease store: install `{install}`, or build snowflake-server with its `{feature}` feature"
            ))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_scheme_names_its_feature_and_hostile_text_is_no_store() {
        for (url, feature) in [
            ("redis://h", "lease-redis"),
            ("rediss+sentinel://h", "lease-redis"),
            ("valkey://h", "lease-redis"),
            ("postgresql://h/db", "lease-postgres"),
            ("mariadb://h/db", "lease-mysql"),
            ("etcd+https://h", "lease-etcd"),
            ("zk://h/", "lease-zookeeper"),
            ("zk+tls://h/", "lease-zookeeper-tls"),
        ] {
            assert_eq!(feature_of(url).map(|(f, _)| f), Some(feature), "{url}");
        }
        for text in ["", "://", "redis", "redis:/h", "\u{0}://x", "gopher://h", "rédis://h"] {
            assert_eq!(feature_of(text), None, "{text:?}");
            assert!(check_compiled(text).is_ok(), "{text:?}: left to the store's parser");
        }
    }

    #[test]
    fn a_missing_store_says_what_to_install() {
        // The default build has every store but ZooKeeper's TLS.
        assert!(check_compiled("etcd://127.0.0.1:2379").is_ok() || !cfg!(feature = "lease-etcd"));
        if !cfg!(feature = "lease-zookeeper-tls") {
            let why = check_compiled("zks://zk:2281/").unwrap_err();
            assert_eq!(
                why,
                "this build has no zks:// lease store: install `cargo install --locked snowflake-cli --features full,zookeeper-tls`, or build snowflake-server with its `lease-zookeeper-tls` feature"
            );
        }
    }
}
