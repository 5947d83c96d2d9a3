//! The URLs of the stores that run as a cluster of servers: `etcd://h1:2379,h2:2379/prefix`,
//! `zk://h1:2181,h2:2181/chroot`, and for etcd `etcds://user:password@h1,h2/prefix?ca=<path>`.

use super::store::LeaseError;
use super::store::support::percent_decode;

/// A cluster URL taken apart: the servers (`host:port`, IPv6 hosts in brackets) and the path
/// under which every key or znode lives (`""` for none, else `/a/b`, no trailing slash); with
/// [`ClusterUrl::parse_with`], the scheme, the credentials and the query parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ClusterUrl {
    /// The scheme as given, in lower case.
    pub(crate) scheme: String,
    pub(crate) servers: Vec<String>,
    pub(crate) path: String,
    /// The user name and password (percent-decoded), when the URL names them.
    pub(crate) credentials: Option<(String, String)>,
    /// The query parameters (values percent-decoded), each one of those allowed, at most once.
    pub(crate) params: Vec<(String, String)>,
}

impl ClusterUrl {
    /// Parses `<scheme>://host[:port][,host[:port]…][/path]` for one of `schemes`, the port
    /// defaulting to `default_port`. The path is made of segments of `A-Z a-z 0-9 _ . -`. A
    /// user name or password, a query or a fragment is refused: none is supported.
    #[cfg_attr(not(feature = "lease-zookeeper"), allow(dead_code))]
    pub(crate) fn parse(url: &str, schemes: &[&str], default_port: u16) -> Result<Self, LeaseError> {
        Self::parse_with(url, schemes, default_port, false, &[])
    }

    /// [`parse`](Self::parse), also taking `user:password@` before the servers when
    /// `credentials` is set (both percent-decoded, the user name not empty) and a query of the
    /// parameters named in `params` (`?ca=%2Fetc%2Fca.pem`). A fragment is refused.
    pub(crate) fn parse_with(
        url: &str,
        schemes: &[&str],
        default_port: u16,
        credentials: bool,
        params: &[&str],
    ) -> Result<Self, LeaseError> {
        let bad = |reason: String| LeaseError::BadUrl { url: redact(url), reason, source: None };
        let expected = || schemes.iter().map(|s| format!("{s}://")).collect::<Vec<_>>().join(" or ");
        let Some((scheme, rest)) = url.split_once("://") else {
            return Err(bad(format!("expected {}", expected())));
        };
        if !schemes.iter().any(|s| s.eq_ignore_ascii_case(scheme)) {
            return Err(bad(format!("expected {}", expected())));
        }
        // An `@` past the servers is a password's `/`, `?` or `#` left raw: refused before any
        // part of the URL is quoted, so that no part of the password is.
        let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        if rest[authority_end..].contains('@') {
            return Err(bad("an @ after the servers: percent-encode / ? # @ in a password or a parameter \
                 (%2F %3F %23 %40)"
                .into()));
        }
        if rest.contains('#') || (params.is_empty() && rest.contains('?')) {
            return Err(bad("no query or fragment is supported".into()));
        }
        let (rest, query) = rest.split_once('?').unwrap_or((rest, ""));
        let mut taken = Vec::new();
        for pair in query.split('&').filter(|pair| !pair.is_empty()) {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            if !params.contains(&key) {
                let known = params.iter().map(|p| format!("{p}=")).collect::<Vec<_>>().join(", ");
                return Err(bad(format!("unknown parameter {key:?}; the parameters are {known}")));
            }
            if taken.iter().any(|(k, _)| k == key) {
                return Err(bad(format!("the parameter {key}= is given twice")));
            }
            let value = percent_decode(value).map_err(|reason| bad(format!("the parameter {key}=: {reason}")))?;
            taken.push((key.to_owned(), value));
        }
        let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
        let (userinfo, authority) = match authority.rsplit_once('@') {
            Some((userinfo, servers)) => (Some(userinfo), servers),
            None => (None, authority),
        };
        let credentials = match userinfo {
            None => None,
            Some(_) if !credentials => {
                return Err(bad("user names and passwords are not supported yet; name the servers alone".into()));
            }
            Some(userinfo) => {
                let Some((user, password)) = userinfo.split_once(':') else {
                    return Err(bad("a user name without a password; write user:password@ before the servers".into()));
                };
                let user = percent_decode(user).map_err(|reason| bad(format!("the user name: {reason}")))?;
                // The password's own words never go into a message.
                let password =
                    percent_decode(password).map_err(|_| bad("the password is not percent-encoded UTF-8".into()))?;
                if user.is_empty() {
                    return Err(bad("a password without a user name".into()));
                }
                Some((user, password))
            }
        };
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
        Ok(ClusterUrl { scheme: scheme.to_ascii_lowercase(), servers, path, credentials, params: taken })
    }

    /// `scheme://[user@]servers/path`: the user name (percent-encoded again where it needs
    /// it), never the password, and no query.
    pub(crate) fn describe(&self, scheme: &str) -> String {
        let user = match &self.credentials {
            Some((user, _)) => format!("{}@", percent_encode(user)),
            None => String::new(),
        };
        let path = if self.path.is_empty() { "/" } else { &self.path };
        format!("{scheme}://{user}{}{path}", self.servers.join(","))
    }

    /// The value of the query parameter `key`, if the URL gave it.
    #[cfg_attr(not(feature = "lease-etcd"), allow(dead_code))]
    pub(crate) fn param(&self, key: &str) -> Option<&str> {
        self.params.iter().find(|(k, _)| k == key).map(|(_, value)| value.as_str())
    }
}

/// `url` as an error may show it: with everything between `://` and its last `@` replaced by
/// the user name, when it has one and it is plain, else by `…`. Stricter than the other
/// stores' redaction, which ends the authority at the first `/`: a password written with a
/// raw `/`, `?` or `#` in it is still hidden.
pub(crate) fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return url.to_owned() };
    let Some((userinfo, after)) = rest.rsplit_once('@') else { return url.to_owned() };
    let user = userinfo.split_once(':').map_or(userinfo, |(user, _)| user);
    if user.is_empty() {
        format!("{scheme}://{after}")
    } else if user.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-' | b'%')) {
        format!("{scheme}://{user}@{after}")
    } else {
        format!("{scheme}://…@{after}")
    }
}

/// A user name as a URL writes it: `A-Z a-z 0-9 _ . - ~` as they are, every other byte as `%XX`.
fn percent_encode(text: &str) -> String {
    text.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-' | b'~') {
                char::from(b).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
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
            ("etcd://a@b/x", "passwords are not supported"),
        ] {
            let err = ClusterUrl::parse(bad, &["etcd", "etcd+http"], 2379).unwrap_err();
            let LeaseError::BadUrl { reason: why, .. } = &err else { panic!("{bad}: {err:?}") };
            assert!(why.contains(reason), "{bad}: {why}");
            assert!(!err.to_string().contains("secret"), "{err}");
        }
    }

    #[test]
    fn credentials_and_parameters() {
        let parse = |url: &str| ClusterUrl::parse_with(url, &["etcd", "etcds"], 2379, true, &["ca"]);
        let url = parse("ETCDS://root:p%40ss%3Aw%2Frd%3F%23%25%20%C3%A9@a,b:2380/apps/?ca=%2Fetc%2Fca%20dir%2Fca.pem")
            .unwrap();
        assert_eq!(url.scheme, "etcds");
        assert_eq!(url.servers, ["a:2379", "b:2380"]);
        assert_eq!(url.path, "/apps");
        assert_eq!(url.credentials, Some(("root".to_owned(), "p@ss:w/rd?#% é".to_owned())));
        assert_eq!(url.param("ca"), Some("/etc/ca dir/ca.pem"));
        assert_eq!(url.describe("etcds"), "etcds://root@a:2379,b:2380/apps");
        // An `@` and a `:` in a password are taken as they are; the user name is shown encoded.
        let url = parse("etcd://u%20v:p@ss:x@h").unwrap();
        assert_eq!(url.credentials, Some(("u v".to_owned(), "p@ss:x".to_owned())));
        assert_eq!(url.describe("etcd"), "etcd://u%20v@h:2379/");
        // An empty password is etcd's to refuse; an empty query is no parameter.
        assert_eq!(parse("etcd://u:@h?").unwrap().credentials, Some(("u".to_owned(), String::new())));
        assert_eq!(parse("etcd://h/?ca=").unwrap().param("ca"), Some(""));
        assert_eq!(parse("etcd://h").unwrap().params, []);

        for (bad, reason) in [
            ("etcds://root:secret@", "no host"),
            ("etcds://root:secret@/apps", "no host"),
            ("etcds://root:secret@a,", "no host"),
            ("etcds://root:secret@a:99999", "bad port"),
            ("etcds://root:secret@a:-1", "bad port"),
            ("etcds://root:secret@a:", "bad port"),
            ("etcds://:secret@a", "a password without a user name"),
            ("etcds://root@a", "a user name without a password"),
            ("etcds://root:secret%zz@a", "the password is not percent-encoded UTF-8"),
            ("etcds://root:secret%FF@a", "the password is not percent-encoded UTF-8"),
            ("etcds://root:secret%4@a", "the password is not percent-encoded UTF-8"),
            ("etcds://r%zz:secret@a", "the user name: bad percent-encoding"),
            ("etcds://root:sec/ret@a", "an @ after the servers"),
            ("etcds://root:sec?ret@a", "an @ after the servers"),
            ("etcds://root:sec#ret@a", "an @ after the servers"),
            ("etcds://a?ca=/x@y", "an @ after the servers"),
            ("etcds://root:secret@a?ca=%zz", "the parameter ca=: bad percent-encoding"),
            ("etcds://root:secret@a?ca=1&ca=2", "the parameter ca= is given twice"),
            ("etcds://root:secret@a?cert=x", "unknown parameter \"cert\"; the parameters are ca="),
            ("etcds://root:secret@a#x", "no query or fragment"),
            ("etcds://root:secret@a/x y", "segments"),
        ] {
            let err = parse(bad).unwrap_err();
            let LeaseError::BadUrl { reason: why, url, .. } = &err else { panic!("{bad}: {err:?}") };
            assert!(why.contains(reason), "{bad}: {why}");
            for part in ["secret", "sec", "ret"] {
                assert!(!url.contains(part) && !why.contains(part), "{bad}: {err}");
            }
        }
    }

    #[test]
    fn urls_shown_in_errors_hide_every_password() {
        for (url, shown) in [
            ("etcd://a:2379/x", "etcd://a:2379/x"),
            ("etcds://root:pw@a/x?ca=/c.pem", "etcds://root@a/x?ca=/c.pem"),
            ("etcds://:pw@a", "etcds://a"),
            ("etcds://root:p/w@a", "etcds://root@a"),
            ("etcds://root:p?w@a", "etcds://root@a"),
            ("etcds://ro ot:pw@a", "etcds://…@a"),
            ("not a url", "not a url"),
        ] {
            assert_eq!(redact(url), shown);
        }
    }
}
