//! Worker-ID sources: a fixed number, an environment variable, the ordinal of a
//! StatefulSet-style hostname, or a lease from a coordination store ([`lease`]).

use crate::error::WorkerError;
use crate::layout::Layout;

pub mod lease;

/// The environment variable the default registry reads its worker ID from (0 when unset).
///
/// ```
/// use typed_snowflake::worker::WORKER_ID_ENV;
///
/// assert_eq!(WORKER_ID_ENV, "SNOWFLAKE_WORKER_ID");
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub const WORKER_ID_ENV: &str = "SNOWFLAKE_WORKER_ID";

/// The environment variable that makes the default registry lease its worker ID: a store
/// URL (`redis://…`, `postgres://…`, `mysql://…`, `etcd://…`, `zk://…`; the forms of
/// [`lease::open_store`]).
///
/// ```
/// use typed_snowflake::worker::WORKER_LEASE_ENV;
///
/// assert_eq!(WORKER_LEASE_ENV, "SNOWFLAKE_WORKER_LEASE");
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub const WORKER_LEASE_ENV: &str = "SNOWFLAKE_WORKER_LEASE";

/// The environment variable naming the lease namespace (default
/// [`lease::DEFAULT_NAMESPACE`]).
///
/// ```
/// use typed_snowflake::worker::NAMESPACE_ENV;
///
/// assert_eq!(NAMESPACE_ENV, "SNOWFLAKE_NAMESPACE");
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub const NAMESPACE_ENV: &str = "SNOWFLAKE_NAMESPACE";

/// The environment variable giving the size of the leased worker-ID space (default: the
/// narrowest worker field of the types given to `Registry::check`, or, without a check, the
/// worker field of the first type generated).
///
/// ```
/// use typed_snowflake::worker::WORKER_SPACE_ENV;
///
/// assert_eq!(WORKER_SPACE_ENV, "SNOWFLAKE_WORKER_SPACE");
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub const WORKER_SPACE_ENV: &str = "SNOWFLAKE_WORKER_SPACE";

/// The environment variable giving the TTL of a lease configured by [`WORKER_LEASE_ENV`]:
/// a duration such as `10s`, `1500ms` or `2m`, or a number of seconds (default
/// [`lease::DEFAULT_TTL`]). The margin and `W` not set follow it by the defaults'
/// policies ([`WorkerLeaseBuilder::timing`](lease::WorkerLeaseBuilder::timing)).
///
/// ```
/// use typed_snowflake::worker::LEASE_TTL_ENV;
///
/// assert_eq!(LEASE_TTL_ENV, "SNOWFLAKE_LEASE_TTL");
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub const LEASE_TTL_ENV: &str = "SNOWFLAKE_LEASE_TTL";

/// The environment variable saying how long the first acquisition of a lease configured by
/// [`WORKER_LEASE_ENV`] waits for a store that does not answer (default
/// [`lease::DEFAULT_STORE_WAIT`]; `0` fails at the first error), in the form of
/// [`LEASE_TTL_ENV`].
///
/// ```
/// use typed_snowflake::worker::LEASE_WAIT_ENV;
///
/// assert_eq!(LEASE_WAIT_ENV, "SNOWFLAKE_LEASE_WAIT");
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub const LEASE_WAIT_ENV: &str = "SNOWFLAKE_LEASE_WAIT";

/// The environment variable giving the reservation `W` of a lease configured by
/// [`WORKER_LEASE_ENV`] (how long it keeps issuing while its store does not answer), in the
/// form of [`LEASE_TTL_ENV`] (default [`lease::DEFAULT_RESERVATION`] or the TTL where that is
/// longer; a value below the TTL is refused; see
/// [`WorkerLeaseBuilder::reservation`](lease::WorkerLeaseBuilder::reservation)).
///
/// ```
/// use typed_snowflake::worker::LEASE_RESERVATION_ENV;
///
/// assert_eq!(LEASE_RESERVATION_ENV, "SNOWFLAKE_LEASE_RESERVATION");
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub const LEASE_RESERVATION_ENV: &str = "SNOWFLAKE_LEASE_RESERVATION";

/// The environment variable that declares the namespace of a lease configured by
/// [`WORKER_LEASE_ENV`] new where the store holds nothing of it: `1` or `true` (`0`, `false`
/// or unset: not). See
/// [`WorkerLeaseBuilder::create_namespace`](lease::WorkerLeaseBuilder::create_namespace) for
/// what it saves and what it cannot protect against.
///
/// ```
/// use typed_snowflake::worker::{CREATE_NAMESPACE_ENV, flag_in};
///
/// assert_eq!(CREATE_NAMESPACE_ENV, "SNOWFLAKE_CREATE_NAMESPACE");
/// assert_eq!(flag_in(&|_| Ok(Some("true".to_owned())), CREATE_NAMESPACE_ENV)?, true);
/// assert!(flag_in(&|_| Ok(Some("yes please".to_owned())), CREATE_NAMESPACE_ENV).is_err());
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub const CREATE_NAMESPACE_ENV: &str = "SNOWFLAKE_CREATE_NAMESPACE";

/// The environment variable naming the lease's state file
/// ([`WorkerLeaseBuilder::state_file`](lease::WorkerLeaseBuilder::state_file)): a path on a
/// disk that outlives the process (a Kubernetes `emptyDir`, a VM's disk), so that a process
/// restarted while the store does not answer issues at once. Unset, no file is kept.
///
/// ```
/// use typed_snowflake::worker::{LEASE_STATE_FILE_ENV, state_file_in};
///
/// assert_eq!(LEASE_STATE_FILE_ENV, "SNOWFLAKE_LEASE_STATE_FILE");
/// let path = state_file_in(&|_| Ok(Some("/var/run/snowflake/lease".to_owned())))?;
/// assert_eq!(path, Some("/var/run/snowflake/lease".into()));
/// assert!(state_file_in(&|_| Ok(Some("  ".to_owned()))).is_err());
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub const LEASE_STATE_FILE_ENV: &str = "SNOWFLAKE_LEASE_STATE_FILE";

/// The lease state file's path in the environment `env` ([`LEASE_STATE_FILE_ENV`]): `None`
/// when unset; set but blank is an error.
///
/// ```
/// use typed_snowflake::worker::state_file_in;
///
/// assert_eq!(state_file_in(&|_| Ok(None))?, None);
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn state_file_in(
    env: &dyn Fn(&str) -> Result<Option<String>, WorkerError>,
) -> Result<Option<std::path::PathBuf>, WorkerError> {
    match env(LEASE_STATE_FILE_ENV)? {
        None => Ok(None),
        Some(value) if value.trim().is_empty() => Err(WorkerError::UnusableEnv {
            var: LEASE_STATE_FILE_ENV.to_owned(),
            reason: "it is set but blank; give it a file path, or unset it to keep no state file".to_owned(),
            value,
        }),
        Some(value) => Ok(Some(value.trim().into())),
    }
}

/// A yes-or-no variable (such as [`CREATE_NAMESPACE_ENV`]) in the environment `env`: `1` or
/// `true` is yes, `0`, `false` or unset is no (case-insensitive, trimmed); anything else is
/// an error naming the variable.
///
/// ```
/// use typed_snowflake::worker::{CREATE_NAMESPACE_ENV, flag_in};
///
/// assert!(!flag_in(&|_| Ok(None), CREATE_NAMESPACE_ENV)?);
/// assert!(flag_in(&|_| Ok(Some(" 1 ".to_owned())), CREATE_NAMESPACE_ENV)?);
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn flag_in(env: &dyn Fn(&str) -> Result<Option<String>, WorkerError>, var: &str) -> Result<bool, WorkerError> {
    let Some(value) = env(var)? else { return Ok(false) };
    match value.trim().to_ascii_lowercase().as_str() {
        "1" | "true" => Ok(true),
        "0" | "false" => Ok(false),
        _ => Err(WorkerError::UnusableEnv {
            var: var.to_owned(),
            reason: "expected 1 or true (yes), 0 or false (no)".to_owned(),
            value,
        }),
    }
}

/// Where a process's worker ID comes from.
///
/// ```
/// use typed_snowflake::WorkerSource;
///
/// assert_eq!(WorkerSource::Fixed(3).resolve()?, 3);
/// assert_eq!(WorkerSource::hostname_ordinal_of("orders-31")?, 31);
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
#[derive(Default)]
pub enum WorkerSource {
    /// This number.
    Fixed(u64),
    /// A decimal number in this environment variable, which must be set.
    Env(String),
    /// The ordinal of this host's name (`orders-7` → 7), as Kubernetes StatefulSets name
    /// their pods. The name comes from `HOSTNAME`, else `/proc/sys/kernel/hostname`, else
    /// `/etc/hostname`.
    HostnameOrdinal,
    /// The default: `SNOWFLAKE_WORKER_ID` when it is set (an unparsable value is an error
    /// naming it); when it is not set, worker 0, which suits one process per type and
    /// nothing more. Deployments with several processes set the variable or pick another
    /// source.
    #[default]
    EnvOrZero,
    /// A worker ID leased from a coordination store (see [`lease`]): resolves to the leased
    /// number.
    Leased {
        /// The lease's namespace.
        namespace: String,
        /// The store, without any password.
        store: String,
        /// The leased worker ID.
        worker: u64,
    },
}

impl WorkerSource {
    /// Resolves the worker ID.
    pub fn resolve(&self) -> Result<u64, WorkerError> {
        match self {
            WorkerSource::Fixed(worker) => Ok(*worker),
            WorkerSource::Env(var) => match std::env::var(var) {
                Ok(value) => parse_worker(var, &value),
                Err(std::env::VarError::NotPresent) => Err(WorkerError::MissingEnv { var: var.clone() }),
                Err(std::env::VarError::NotUnicode(value)) => Err(WorkerError::BadEnv {
                    var: var.clone(),
                    value: value.to_string_lossy().into_owned(),
                    reason: "not valid UTF-8".into(),
                }),
            },
            WorkerSource::HostnameOrdinal => WorkerSource::hostname_ordinal_of(&hostname()?),
            WorkerSource::Leased { worker, .. } => Ok(*worker),
            WorkerSource::EnvOrZero => match WorkerSource::Env(WORKER_ID_ENV.into()).resolve() {
                Err(WorkerError::MissingEnv { .. }) => Ok(0),
                other => other,
            },
        }
    }

    /// The StatefulSet ordinal of `hostname`: the digits after its last `-`.
    ///
    /// ```
    /// use typed_snowflake::WorkerSource;
    ///
    /// assert_eq!(WorkerSource::hostname_ordinal_of("web-0")?, 0);
    /// assert!(WorkerSource::hostname_ordinal_of("no-ordinal").is_err());
    /// assert!(WorkerSource::hostname_ordinal_of("web-").is_err());
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn hostname_ordinal_of(hostname: &str) -> Result<u64, WorkerError> {
        let no_ordinal = || WorkerError::NoOrdinal { hostname: hostname.to_owned() };
        // A fully qualified name (`orders-7.orders.default.svc`) keeps its ordinal in the first label.
        let label = hostname.trim().split('.').next().unwrap_or_default();
        let (set, digits) = label.rsplit_once('-').ok_or_else(no_ordinal)?;
        // A StatefulSet name is a DNS label: not empty, not ending in `-` (so `web--1` is
        // not `web-` with ordinal 1, nor `web` with -1). Kubernetes writes ordinals without
        // leading zeros; `web-01` beside `web-1` would give two pods one worker ID.
        if set.is_empty()
            || set.ends_with('-')
            || digits.is_empty()
            || !digits.bytes().all(|b| b.is_ascii_digit())
            || (digits.len() > 1 && digits.starts_with('0'))
        {
            return Err(no_ordinal());
        }
        digits.parse().map_err(|_| no_ordinal())
    }
}

/// The worker ID the environment configures when no source was installed: a lease when
/// [`WORKER_LEASE_ENV`] is set (acquired here, from the worker-ID space of
/// [`space_from_environment`]), else [`WorkerSource::EnvOrZero`]. `field` is the ID type the
/// lease must fit, by name and layout. Both variables set is an error that says which to
/// drop; so is a lease variable that is set but empty or blank (see
/// [`lease_url_from_environment`]). Every variable is checked before anything is acquired.
pub(crate) fn from_environment(
    field: Option<(&'static str, &Layout)>,
    clock: std::sync::Arc<dyn crate::clock::Clock>,
) -> Result<(WorkerSource, Option<lease::WorkerLease>), WorkerError> {
    let Some(url) = lease_url_from_environment()? else {
        return Ok((WorkerSource::EnvOrZero, None));
    };
    if std::env::var_os(WORKER_ID_ENV).is_some() {
        return Err(WorkerError::Conflict {
            reason: format!(
                "{WORKER_ID_ENV} and {WORKER_LEASE_ENV} are both set: unset {WORKER_ID_ENV} to lease a worker ID from the store, or {WORKER_LEASE_ENV} to use the fixed one"
            ),
        });
    }
    let namespace = namespace_from_environment()?;
    let space = space_from_environment(field)?;
    let ttl = duration_from_environment(LEASE_TTL_ENV)?.unwrap_or(lease::DEFAULT_TTL);
    let wait = duration_from_environment(LEASE_WAIT_ENV)?.unwrap_or(lease::DEFAULT_STORE_WAIT);
    let reservation = duration_from_environment(LEASE_RESERVATION_ENV)?;
    let create = flag_in(&env_value, CREATE_NAMESPACE_ENV)?;
    let state_file = state_file_in(&env_value)?;
    // Opened on the lease's thread: the first generation may run inside an async runtime.
    let mut builder = lease::WorkerLease::from_url(url);
    if create {
        builder = builder.create_namespace();
    }
    if let Some(path) = state_file {
        builder = builder.state_file(path);
    }
    // The defaults of what is not set (`W`, the margin) are the builder's: `docs/lease-rules.md`.
    if let Some(reservation) = reservation {
        builder = builder.reservation(reservation);
    }
    let lease =
        builder.namespace(namespace).space(space).ttl(ttl).wait_for_store(wait).shared_clock(clock).acquire()?;
    let source = WorkerSource::Leased {
        namespace: lease.namespace().to_owned(),
        store: lease.store().to_owned(),
        worker: lease.worker(),
    };
    Ok((source, Some(lease)))
}

/// The store URL of [`WORKER_LEASE_ENV`] (trimmed), or `None` when the variable is unset.
///
/// Set but empty or blank (`SNOWFLAKE_WORKER_LEASE=$REDIS_URL` with `REDIS_URL` unset), or not
/// UTF-8, is an error naming the variable: read as unset, it would give the process the worker
/// ID of `SNOWFLAKE_WORKER_ID`, or 0, where a lease was asked for, and two replicas the same one.
pub(crate) fn lease_url_from_environment() -> Result<Option<String>, WorkerError> {
    lease_url_in(&env_value)
}

/// The store URL of [`WORKER_LEASE_ENV`] in the environment `env` (a variable's value, `None`
/// when unset), by the rules the default registry applies to the process's environment: set
/// but empty or blank is an error naming the variable. `snowflake serve` reads its variables
/// through these functions ([`namespace_in`], [`duration_in`], [`space_in`]), so that a
/// variable means the same to the library and to the service.
///
/// ```
/// use typed_snowflake::worker::lease_url_in;
///
/// let env = |var: &str| Ok((var == "SNOWFLAKE_WORKER_LEASE").then(|| " redis://cache:6379 ".to_owned()));
/// assert_eq!(lease_url_in(&env)?.as_deref(), Some("redis://cache:6379"));
/// let blank = |_: &str| Ok(Some(" ".to_owned()));
/// assert!(lease_url_in(&blank).unwrap_err().to_string().contains("set but blank"));
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn lease_url_in(env: &dyn Fn(&str) -> Result<Option<String>, WorkerError>) -> Result<Option<String>, WorkerError> {
    let Some(value) = env(WORKER_LEASE_ENV)? else { return Ok(None) };
    if value.trim().is_empty() {
        return Err(WorkerError::UnusableEnv {
            var: WORKER_LEASE_ENV.to_owned(),
            reason: format!(
                "it is set but {}; give it a store URL (redis://…, postgres://…, mysql://…, etcd://…, zk://…) to lease a worker ID, or unset it to take the worker ID from {WORKER_ID_ENV} (or 0)",
                if value.is_empty() { "empty" } else { "blank" }
            ),
            value,
        });
    }
    Ok(Some(value.trim().to_owned()))
}

/// The namespace of [`NAMESPACE_ENV`], or [`lease::DEFAULT_NAMESPACE`] when it is unset. Set
/// but empty or blank, or not UTF-8, is an error naming the variable, not the default: two
/// services meant to be apart would otherwise share one.
fn namespace_from_environment() -> Result<String, WorkerError> {
    Ok(namespace_in(&env_value)?.unwrap_or_else(|| lease::DEFAULT_NAMESPACE.to_owned()))
}

/// The namespace of [`NAMESPACE_ENV`] in the environment `env` (`None` when unset; see
/// [`lease_url_in`]): set but empty or blank is an error naming the variable.
///
/// ```
/// use typed_snowflake::worker::namespace_in;
///
/// assert_eq!(namespace_in(&|_| Ok(Some("shop".to_owned())))?.as_deref(), Some("shop"));
/// assert_eq!(namespace_in(&|_| Ok(None))?, None);
/// assert!(namespace_in(&|_| Ok(Some(String::new()))).is_err());
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn namespace_in(env: &dyn Fn(&str) -> Result<Option<String>, WorkerError>) -> Result<Option<String>, WorkerError> {
    match env(NAMESPACE_ENV)? {
        None => Ok(None),
        Some(value) if value.trim().is_empty() => Err(WorkerError::UnusableEnv {
            var: NAMESPACE_ENV.to_owned(),
            reason: format!(
                "it is set but {}; give it a namespace, or unset it for the default {:?}",
                if value.is_empty() { "empty" } else { "blank" },
                lease::DEFAULT_NAMESPACE
            ),
            value,
        }),
        Some(value) => Ok(Some(value)),
    }
}

/// The worker-ID space a lease from the environment is taken from: [`WORKER_SPACE_ENV`], or
/// else the whole worker field of `field` (capped at [`lease::MAX_WORKER_SPACE`]), or 32 IDs
/// without a field.
///
/// A space wider than the field is an error naming the variable's value, the type and its
/// field, raised before anything is leased: otherwise the process would fail only when the ID
/// it happened to lease lies beyond the field (with 4096 IDs and a 10-bit field, whenever it
/// is 1024 or above), at random from one start to the next.
fn space_from_environment(field: Option<(&'static str, &Layout)>) -> Result<u64, WorkerError> {
    let whole = |layout: &Layout| layout.max_worker().saturating_add(1);
    Ok(space_in(&env_value, field)?
        .unwrap_or_else(|| field.map_or(32, |(_, layout)| whole(layout).min(lease::MAX_WORKER_SPACE))))
}

/// The worker-ID space of [`WORKER_SPACE_ENV`] in the environment `env` (`None` when unset;
/// see [`lease_url_in`]): a decimal integer from 1 to [`lease::MAX_WORKER_SPACE`], and no
/// wider than the worker field of `field` (a type's name and layout), else an error naming
/// the variable, the type and its field.
///
/// ```
/// use typed_snowflake::Layout;
/// use typed_snowflake::worker::space_in;
///
/// let env = |_: &str| Ok(Some("64".to_owned()));
/// assert_eq!(space_in(&env, None)?, Some(64));
/// assert!(space_in(&env, Some(("OrderId", &Layout::new(41, 5, 17, 0)?))).is_err()); // 32 worker IDs
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn space_in(
    env: &dyn Fn(&str) -> Result<Option<String>, WorkerError>,
    field: Option<(&str, &Layout)>,
) -> Result<Option<u64>, WorkerError> {
    let whole = |layout: &Layout| layout.max_worker().saturating_add(1);
    let Some(value) = env(WORKER_SPACE_ENV)? else { return Ok(None) };
    let unusable =
        |reason: String| WorkerError::UnusableEnv { var: WORKER_SPACE_ENV.to_owned(), value: value.clone(), reason };
    let digits = value.trim();
    let space = match digits.parse::<u64>() {
        Ok(space) if digits.bytes().all(|b| b.is_ascii_digit()) && (1..=lease::MAX_WORKER_SPACE).contains(&space) => {
            space
        }
        _ => {
            return Err(unusable(format!(
                "expected a number of worker IDs: a decimal integer from 1 to {} (2^22)",
                lease::MAX_WORKER_SPACE
            )));
        }
    };
    if let Some((type_name, layout)) = field
        && space > whole(layout)
    {
        return Err(unusable(format!(
            "a space of {space} worker IDs is wider than the worker field of {type_name} ({} bits, worker IDs 0..={}), so a leased worker ID might not fit it; set it to at most {}, or unset it to lease from the whole field",
            layout.worker_bits(),
            layout.max_worker(),
            whole(layout),
        )));
    }
    Ok(Some(space))
}

/// A duration from the environment: `None` when the variable is unset.
fn duration_from_environment(var: &str) -> Result<Option<std::time::Duration>, WorkerError> {
    duration_in(&env_value, var)
}

/// A duration variable ([`LEASE_TTL_ENV`], [`LEASE_WAIT_ENV`]) in the environment `env`
/// (`None` when unset; see [`lease_url_in`]), read by [`parse_duration`]; a value it refuses
/// is an error naming the variable.
///
/// ```
/// use std::time::Duration;
/// use typed_snowflake::worker::{LEASE_TTL_ENV, duration_in};
///
/// assert_eq!(duration_in(&|_| Ok(Some("3s".to_owned())), LEASE_TTL_ENV)?, Some(Duration::from_secs(3)));
/// assert!(duration_in(&|_| Ok(Some("ten".to_owned())), LEASE_TTL_ENV).is_err());
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn duration_in(
    env: &dyn Fn(&str) -> Result<Option<String>, WorkerError>,
    var: &str,
) -> Result<Option<std::time::Duration>, WorkerError> {
    let Some(value) = env(var)? else { return Ok(None) };
    parse_duration(&value).map(Some).map_err(|reason| WorkerError::UnusableEnv {
        var: var.to_owned(),
        value: value.clone(),
        reason: reason.to_owned(),
    })
}

/// Reads a duration as the `SNOWFLAKE_LEASE_*` variables spell it: `10s`, `1500ms`, `2m`, or a
/// whole number of seconds; at most a day. The error says what was expected.
///
/// ```
/// use std::time::Duration;
/// use typed_snowflake::worker::parse_duration;
///
/// assert_eq!(parse_duration("1500ms"), Ok(Duration::from_millis(1500)));
/// assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
/// assert_eq!(parse_duration("-1s"), Err("expected a duration such as 10s, 1500ms or 2m"));
/// assert_eq!(parse_duration("2d"), Err("expected a duration such as 10s, 1500ms or 2m"));
/// assert_eq!(parse_duration("90000000"), Err("longer than a day"));
/// ```
pub fn parse_duration(value: &str) -> Result<std::time::Duration, &'static str> {
    let text = value.trim();
    let (digits, unit_ms) = if let Some(d) = text.strip_suffix("ms") {
        (d, 1)
    } else if let Some(d) = text.strip_suffix('s') {
        (d, 1_000)
    } else if let Some(d) = text.strip_suffix('m') {
        (d, 60_000)
    } else {
        (text, 1_000)
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err("expected a duration such as 10s, 1500ms or 2m");
    }
    let ms = digits.parse::<u64>().ok().and_then(|n| n.checked_mul(unit_ms)).filter(|&ms| ms <= 86_400_000);
    ms.map(std::time::Duration::from_millis).ok_or("longer than a day")
}

/// A variable's value in the process's environment, `None` when it is unset; not UTF-8 is an
/// error naming it.
fn env_value(var: &str) -> Result<Option<String>, WorkerError> {
    match std::env::var(var) {
        Ok(value) => Ok(Some(value)),
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(value)) => Err(WorkerError::UnusableEnv {
            var: var.to_owned(),
            value: value.to_string_lossy().into_owned(),
            reason: "it is not valid UTF-8".to_owned(),
        }),
    }
}

fn parse_worker(var: &str, value: &str) -> Result<u64, WorkerError> {
    let bad =
        |reason: &str| WorkerError::BadEnv { var: var.to_owned(), value: value.to_owned(), reason: reason.to_owned() };
    let trimmed = value.trim();
    if trimmed.is_empty() {
        return Err(bad("empty"));
    }
    if !trimmed.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad("expected a non-negative decimal integer"));
    }
    trimmed.parse::<u64>().map_err(|_| bad("too large"))
}

fn hostname() -> Result<String, WorkerError> {
    if let Ok(name) = std::env::var("HOSTNAME")
        && !name.trim().is_empty()
    {
        return Ok(name.trim().to_owned());
    }
    let mut last = WorkerError::NoHostname { path: "/etc/hostname".into(), source: None };
    for path in ["/proc/sys/kernel/hostname", "/etc/hostname"] {
        match std::fs::read_to_string(path) {
            Ok(name) if !name.trim().is_empty() => return Ok(name.trim().to_owned()),
            Ok(_) => last = WorkerError::NoHostname { path: path.into(), source: None },
            Err(e) => last = WorkerError::NoHostname { path: path.into(), source: Some(e.into()) },
        }
    }
    Err(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinals() {
        assert_eq!(WorkerSource::hostname_ordinal_of("web-0"), Ok(0));
        assert_eq!(WorkerSource::hostname_ordinal_of("orders-31"), Ok(31));
        assert_eq!(WorkerSource::hostname_ordinal_of("web-10"), Ok(10));
        assert_eq!(WorkerSource::hostname_ordinal_of("my-app-db-2"), Ok(2));
        assert_eq!(WorkerSource::hostname_ordinal_of("orders-7.orders.default.svc.cluster.local"), Ok(7));
        for bad in [
            "no-ordinal",
            "plain",
            "",
            "web-",
            "web--1",
            "web-1a",
            "web-99999999999999999999999",
            "-3",
            "web-01",
            "web- 1",
        ] {
            assert!(
                matches!(WorkerSource::hostname_ordinal_of(bad), Err(WorkerError::NoOrdinal { .. })),
                "{bad:?} must have no ordinal"
            );
        }
    }

    #[test]
    fn durations() {
        use std::time::Duration;
        for (text, ms) in
            [("10s", 10_000), ("1500ms", 1_500), ("2m", 120_000), ("7", 7_000), (" 0 ", 0), ("86400s", 86_400_000)]
        {
            assert_eq!(parse_duration(text), Ok(Duration::from_millis(ms)), "{text:?}");
        }
        for bad in ["", "s", "-1s", "1.5s", "10 s", "1h", "ten", "86401s", "99999999999999999999ms"] {
            assert!(parse_duration(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn worker_values() {
        assert_eq!(parse_worker("V", "7"), Ok(7));
        assert_eq!(parse_worker("V", " 7 "), Ok(7));
        for bad in ["", "-1", "x", "1.5", "+3", "18446744073709551616"] {
            let err = parse_worker("V", bad).unwrap_err();
            assert!(err.to_string().contains("V="), "{err}");
        }
    }
}
