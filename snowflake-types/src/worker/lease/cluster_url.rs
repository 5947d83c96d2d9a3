//! The URLs of the stores that run as a cluster of servers: `etcd://h1:2379,h2:2379/prefix`,
//! `zk://h1:2181,h2:2181/chroot`.

use super::store::LeaseError;
use super::store::support::redact_url;

/// A cluster URL taken apart: the servers (`host:port`, IPv6 hosts in brackets) and the path
/// under which every key or znode lives (`""` for none, else `/a/b`, no trailing slash).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ClusterUrl {
    pub(crate) servers: Vec<String>,
    pub(crate) path: String,
}

impl ClusterUrl {
    /// Parses `<scheme>://host[:port][,host[:port]…][/path]` for one of `schemes`, the port
    /// defaulting to `default_port`. The path is made of segments of `A-Z a-z 0-9 _ . -`. A
    /// user name or password, a query or a fragment is refused: none is supported.
    pub(crate) fn parse(url: &str, schemes: &[&str], default_port: u16) -> Result<Self, LeaseError> {
        let bad = |reason: String| LeaseError::BadUrl { url: redact_url(url), reason, source: None };
        let expected = || schemes.iter().map(|s| format!("{s}://")).collect::<Vec<_>>().join(" or ");
        let Some((scheme, rest)) = url.split_once("://") else {
            return Err(bad(format!("expected {}", expected())));
        };
        if !schemes.iter().any(|s| s.eq_ignore_ascii_case(scheme)) {
            return Err(bad(format!("expected {}", expected())));
        }
        if rest.contains(['?', '#']) {
            return Err(bad("no query or fragment is supported".into()));
        }
        let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
        if authority.contains('@') {
            return Err(bad("user names and passwords are not supported yet; name the servers alone".into()));
        }
        let mut servers = Vec::new();
        for server in authority.split(',') {
            servers.push(host_port(server, default_port).map_err(|reason| bad(format!("{server:?}: {reason}")))?);
        }
        let path = path.trim_end_matches('/');
        let mut segments = Vec::new();
        for segment in path.split('/').filter(|_| !path.is_empty()) {
            if segment.is_empty()
                || segment == "."
                || segment == ".."
                || !segment.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
            {
                return Err(bad(format!(
                    "the path {path:?} must be segments of A-Z a-z 0-9 _ . - separated by single slashes"
                )));
            }
            segments.push(segment);
        }
        let path = segments.iter().map(|s| format!("/{s}")).collect();
        Ok(ClusterUrl { servers, path })
    }

    /// `scheme://servers/path`, as given (there is no password to hide).
    pub(crate) fn describe(&self, scheme: &str) -> String {
        format!("{scheme}://{}{}", self.servers.join(","), if self.path.is_empty() { "/" } else { &self.path })
    }
}

/// `host[:port]` with the port checked, or the default added.
fn host_port(server: &str, default_port: u16) -> Result<String, String> {
    let (host, port) = if let Some(bracketed) = server.strip_prefix('[') {
        let (host, after) = bracketed.split_once(']').ok_or("an IPv6 host lacks its closing bracket")?;
        (format!("[{host}]"), after.strip_prefix(':'))
    } else {
        match server.split_once(':') {
            Some((host, port)) => (host.to_owned(), Some(port)),
            None => (server.to_owned(), None),
        }
    };
    if host.is_empty() || host == "[]" {
        return Err("no host".into());
    }
    if !host.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_' | b'[' | b']' | b':')) {
        return Err("not a host name or address".into());
    }
    let port = match port {
        None => default_port,
        Some(port) => port.parse::<u16>().ok().filter(|&p| p != 0).ok_or_else(|| format!("bad port {port:?}"))?,
    };
    Ok(format!("{host}:{port}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cluster_urls() {
        let url = ClusterUrl::parse("etcd://10.0.0.1,10.0.0.2:2380,[::1]/apps/shop/", &["etcd"], 2379).unwrap();
        assert_eq!(url.servers, ["10.0.0.1:2379", "10.0.0.2:2380", "[::1]:2379"]);
        assert_eq!(url.path, "/apps/shop");
        assert_eq!(url.describe("etcd"), "etcd://10.0.0.1:2379,10.0.0.2:2380,[::1]:2379/apps/shop");
        let url = ClusterUrl::parse("ZK://zk1:2181", &["zk"], 2181).unwrap();
        assert_eq!((url.servers, url.path.as_str()), (vec!["zk1:2181".to_owned()], ""));
        assert_eq!(ClusterUrl::parse("zk://zk1/", &["zk"], 2181).unwrap().describe("zk"), "zk://zk1:2181/");
        for (bad, reason) in [
            ("redis://x", "expected etcd:// or etcd+http://"),
            ("etcd:x", "expected etcd://"),
            ("etcd://", "no host"),
            ("etcd://a,,b", "no host"),
            ("etcd://a:0", "bad port"),
            ("etcd://a:x", "bad port"),
            ("etcd://a:70000", "bad port"),
            ("etcd://user:secret@a", "passwords are not supported"),
            ("etcd://a/x?y=1", "no query"),
            ("etcd://a/x//y", "segments"),
            ("etcd://a/../y", "segments"),
            ("etcd://a/x y", "segments"),
            ("etcd://a b/", "not a host"),
        ] {
            let err = ClusterUrl::parse(bad, &["etcd", "etcd+http"], 2379).unwrap_err();
            let LeaseError::BadUrl { reason: why, .. } = &err else { panic!("{bad}: {err:?}") };
            assert!(why.contains(reason), "{bad}: {why}");
            assert!(!err.to_string().contains("secret"), "{err}");
        }
    }
}
