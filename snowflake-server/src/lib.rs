//! `snowflake serve`: typed Snowflake IDs over HTTP, for services written in any language.
//!
//! ID types are configured at run time by name and layout (`--id order=preset=leaf,epoch=2020-01-01`),
//! each with its own lock-free generator, all on one worker ID: fixed, from
//! `SNOWFLAKE_WORKER_ID`, a StatefulSet ordinal, or a lease from Redis, PostgreSQL,
//! MySQL/MariaDB, etcd or ZooKeeper that recovers by itself from its store's outages and data
//! loss. The routes
//! are in [`mod@router`]; `docs/service.md` shows clients in curl, Python and Node, a Kubernetes
//! Deployment, and what differs from Leaf.
//!
//! | feature | default | the lease store it adds |
//! | --- | --- | --- |
//! | `lease-redis` | on | `--lease redis://…`, `rediss://…`, `redis+sentinel://…` |
//! | `lease-postgres` | on | `--lease postgres://…` |
//! | `lease-mysql` | on | `--lease mysql://…` (MySQL, MariaDB) |
//! | `lease-etcd` | on | `--lease etcd://…`, `etcds://…` |
//! | `lease-zookeeper` | on | `--lease zk://…` |
//! | `lease-zookeeper-tls` | off (it builds aws-lc-rs, a C library) | `--lease zks://…` |
//!
//! Without them the worker ID is fixed, from `SNOWFLAKE_WORKER_ID`, or the StatefulSet
//! ordinal, and a lease URL of a store left out is refused at start, saying what to install
//! ([`stores::check_compiled`]). `cargo install --locked snowflake-cli --features full` gives
//! `snowflake serve` with every store.
//!
//! The feature `grpc` (off by default; in snowflake-cli's `full`) adds the gRPC API on the
//! same port (the `grpc` module: `snowflake.v1`, health, reflection). `--tls-cert` and
//! `--tls-key` serve both over TLS, `--tls-client-ca` asks for client certificates
//! ([`mod@tls`]).
//!
//! The server answers from the moment its port is open. Its lease is started at once and the
//! generators built on it; the worker ID is acquired in the background (at once where the
//! store can vouch for the namespace, see `docs/lease-rules.md`; up to `--lease-wait` while
//! the store does not answer); meanwhile `/healthz` is 200, `/readyz` 503 with the phase and
//! reason the lease's status gives, the ID routes 503 with `Retry-After` and the same reason
//! at once, and `/v1/types` and decoding work. A lease that cannot be had within
//! `--lease-wait` ends the server with the store's error. Readiness, gRPC health and the
//! gauges are read from the lease's status, never from its log. Refused ID requests are logged
//! as a count, one line every 5 s at most (a WARN, an INFO while a normal start acquires or
//! waits out), and at once when the server turns ready. On SIGTERM or Ctrl-C a ready server drains first
//! (`--drain`, 5 s by default): `/readyz` answers 503 "draining" while every request is still
//! served, then the port closes, the requests in flight finish and the lease is released.
//!
//! ```no_run
//! use snowflake_server::config::{Config, IdSpec, WorkerConfig};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let config = Config::new(vec![IdSpec::parse("order=preset=leaf,epoch=2020-01-01")?], WorkerConfig::Fixed(3));
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
//! snowflake_server::serve(&config, listener, std::future::pending()).await?;
//! # Ok(()) }
//! ```
// `deny`, not `forbid`: taking the socket systemd passed (file descriptor 3, `listen.rs`) is
// the one `unsafe` block, allowed there.
#![deny(unsafe_code)]

mod calls;
pub mod config;
#[cfg(feature = "grpc")]
pub mod grpc;
mod issue;
mod listen;
pub mod router;
pub mod state;
pub mod stores;
pub mod tls;

use std::future::Future;
use std::process::ExitCode;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};

pub use config::ServeArgs;
pub use router::router;
pub use state::{AppState, StartError};

/// The Prometheus exporter of this process, installed as the global `metrics` recorder on
/// first use (the library's counters and the request metrics go through it). `None` when
/// another recorder was installed first.
///
/// ```
/// let handle = snowflake_server::prometheus().ok_or("another recorder is installed")?;
/// metrics::counter!("example_total").increment(1);
/// assert!(handle.render().contains("example_total 1"));
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn prometheus() -> Option<PrometheusHandle> {
    static HANDLE: OnceLock<Option<PrometheusHandle>> = OnceLock::new();
    HANDLE
        .get_or_init(|| {
            let recorder = PrometheusBuilder::new()
                .set_buckets_for_metric(
                    Matcher::Full("snowflake_http_request_duration_seconds".into()),
                    &[0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.1, 1.0],
                )
                .ok()?
                .set_buckets_for_metric(
                    Matcher::Full("snowflake_grpc_request_duration_seconds".into()),
                    &[0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.1, 1.0],
                )
                .ok()?
                .build_recorder();
            let handle = recorder.handle();
            metrics::set_global_recorder(recorder).ok()?;
            Some(handle)
        })
        .clone()
}

/// Serves `config` on `listener` until `shutdown` completes: answers from the start, acquires
/// the lease (if any) in the background, issues once it has it; once `shutdown` completes it
/// drains (keeps serving for `config.drain` with `/readyz` 503 "draining", when it issues),
/// then stops taking connections, finishes those in flight and releases the lease. Until the lease is there,
/// `/healthz` answers 200, `/readyz` 503 with what the server waits for, the ID routes 503
/// with `Retry-After`, and the routes that need no worker ID (`/v1/types`, decoding) answer
/// as always. When the lease cannot be had within the configured wait, the server stops and
/// this returns the error. Logs its state changes through `tracing`.
pub async fn serve(
    config: &config::Config,
    listener: tokio::net::TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), StartError> {
    serve_inner(config, listener, shutdown, false).await
}

async fn serve_inner(
    config: &config::Config,
    listener: tokio::net::TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
    announce: bool,
) -> Result<(), StartError> {
    let addr = listener.local_addr().map_err(|e| StartError(e.to_string()))?;
    // TLS files that cannot be read stop the server before anything else starts.
    let listener = match &config.tls {
        None => Bound::Plain(listener),
        Some(files) => Bound::Tls(tls::TlsListener::new(listener, files)?),
    };
    // The recorder first: the generators and the lease register their counters as they start.
    let metrics = prometheus();
    // The lease starts now and is held from the first instant: readiness, health, the
    // gauges and the ID routes' refusals read its status; the generators are built on it and
    // refuse until it issues.
    let state = Arc::new(AppState::start(config)?);
    for spec in state.specs() {
        tracing::info!(r#type = %spec.name, layout = %spec.layout, "serving");
    }
    // The first grant, awaited in the background: the port is open meanwhile. A first
    // acquisition that gives up stops the server.
    let failure: Arc<Mutex<Option<StartError>>> = Arc::new(Mutex::new(None));
    let (failed_tx, failed_rx) = tokio::sync::oneshot::channel::<()>();
    let acquiring = {
        let (state, failure) = (Arc::clone(&state), Arc::clone(&failure));
        tokio::spawn(async move {
            match state.ready().await {
                Ok(()) => {
                    for t in state.types() {
                        tracing::info!(r#type = %t.spec.name, worker = state.worker(), "issuing");
                    }
                }
                Err(e) => {
                    tracing::error!(error = %e, "no worker-ID lease: the server stops");
                    *failure.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                    let _ = failed_tx.send(());
                }
            }
        })
    };
    let watch = tokio::spawn(watch_readiness(Arc::clone(&state)));
    let app = router(Arc::clone(&state), metrics);
    // The gRPC services on the same port: their paths name a service (`/snowflake.v1.Snowflake/…`),
    // which no HTTP route does.
    #[cfg(feature = "grpc")]
    let (app, grpc) = {
        let (grpc, routes) = grpc::Grpc::new(Arc::clone(&state)).await?;
        (app.merge(routes), Arc::new(grpc))
    };
    // The process ID is what `snowflake leases` shows of a holder beside its host (`host:pid`):
    // logged with the address, it tells which replica on a host holds which worker ID.
    tracing::info!(%addr, pid = std::process::id(), worker_source = %state.worker_source(), "listening");
    if announce {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        let scheme = if config.tls.is_some() { "https" } else { "http" };
        let _ = writeln!(out, "listening on {scheme}://{addr}");
        let _ = out.flush();
    }
    #[cfg(feature = "grpc")]
    let draining = Arc::clone(&grpc);
    let stop = {
        let (state, drain) = (Arc::clone(&state), config.drain);
        async move {
            tokio::select! {
                () = shutdown => drain_first(&state, drain).await,
                Ok(()) = failed_rx => {},
            }
            // Streams end (UNAVAILABLE) so that their connections can close.
            #[cfg(feature = "grpc")]
            draining.drain();
        }
    };
    let served = match listener {
        Bound::Plain(listener) => {
            // Without Nagle's delay: an HTTP/2 answer is several writes (headers, data,
            // trailers), and a write held for the peer's delayed ACK costs it 40 ms.
            use axum::serve::ListenerExt as _;
            let listener = listener.tap_io(|tcp| {
                let _ = tcp.set_nodelay(true);
            });
            axum::serve(listener, app).with_graceful_shutdown(stop).await
        }
        Bound::Tls(listener) => axum::serve(listener, app).with_graceful_shutdown(stop).await,
    };
    acquiring.abort();
    watch.abort();
    state.flush_refusals(true);
    state.release().await;
    if let Some(e) = failure.lock().unwrap_or_else(|p| p.into_inner()).take() {
        return Err(e);
    }
    served.map_err(|e| StartError(format!("serving: {e}")))
}

/// The port, in plain text or TLS.
enum Bound {
    Plain(tokio::net::TcpListener),
    Tls(tls::TlsListener),
}

/// Asked to stop: a ready server stays open for `drain`, not ready but answering, so that
/// load balancers (a Kubernetes Service) take it out of rotation before its port closes.
/// A server that is not ready is in no rotation, and stops at once.
async fn drain_first(state: &AppState, drain: Duration) {
    if drain.is_zero() || state.not_ready().is_some() {
        return;
    }
    state.start_draining();
    tracing::info!(?drain, "draining: /readyz answers 503, requests are still served");
    tokio::time::sleep(drain).await;
    tracing::info!("drained: no new connections; finishing requests in flight");
}

/// Logs every change of readiness (waiting for the lease, the lease fenced, lost,
/// recovered, draining), the refused ID requests counted since the last line (at once when
/// the server turns ready or starts draining, so that they are told before it), and
/// a lease store that answers again after an outage the lease rode through.
async fn watch_readiness(state: Arc<AppState>) {
    let mut last: Option<(state::Phase, bool)> = None;
    // Since when the store has not answered while the lease issued on its reservation.
    let mut store_silent: Option<std::time::Instant> = None;
    let mut tick = tokio::time::interval(Duration::from_millis(250));
    loop {
        tick.tick().await;
        let readiness = state.readiness();
        let phase = readiness.phase;
        // The refusals end with their reason: counted so far, they are told before the
        // server says it is ready (or draining), not seconds later.
        let ended = last.is_some_and(|(last, _)| last != phase)
            && matches!(phase, state::Phase::Issuing | state::Phase::Draining);
        state.flush_refusals(ended);
        match state.lease_issuing() {
            Some((_, _, false)) => {
                store_silent.get_or_insert_with(std::time::Instant::now);
            }
            Some((worker, _, true)) => {
                if let Some(since) = store_silent.take() {
                    tracing::info!(worker, "lease store answering again after {:.1?}", since.elapsed());
                }
            }
            // Fenced or lost: the lease's own lines tell the outage and its end.
            None => store_silent = None,
        }
        // A normal start (acquiring, waiting out earlier holders) and a drain are told as
        // information; a warning only when something is wrong (the store does not answer,
        // the lease is fenced, lost, or given up).
        if last != Some((phase, readiness.trouble)) {
            match &readiness.reason {
                Some(reason) if readiness.trouble => tracing::warn!(phase = phase.as_str(), %reason, "not ready"),
                Some(reason) => tracing::info!(phase = phase.as_str(), %reason, "not ready"),
                None => tracing::info!(worker_source = %state.worker_source(), "ready"),
            }
            last = Some((phase, readiness.trouble));
        }
    }
}

/// Completes on SIGTERM or Ctrl-C.
async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = term => {},
    }
    tracing::info!("shutting down: draining, finishing requests in flight, then releasing the lease");
}

/// `snowflake serve`: resolves the configuration, logs to standard error (`RUST_LOG`,
/// default `info`), listens on the socket systemd passed (socket activation: `LISTEN_PID` is
/// this process and `LISTEN_FDS=1`), else binds the configured address (with `SO_REUSEPORT`
/// under `--reuse-port`), prints `listening on http://ADDR` on standard output once it accepts
/// connections (before the worker-ID lease is acquired, see [`serve`]), and serves until
/// SIGTERM or Ctrl-C. Exit codes: 0 after a clean shutdown, 1 when the server cannot start
/// or stops for want of a worker ID (the address is taken, the lease store refused or did
/// not answer within `--lease-wait`), 2 for a configuration that cannot be served. It leaves
/// the library's line per failed generation out of the log (the server counts refusals
/// itself).
///
/// ```no_run
/// use snowflake_server::ServeArgs;
///
/// fn main() -> std::process::ExitCode {
///     let ids = vec!["order=preset=leaf,epoch=2020-01-01".to_owned()];
///     snowflake_server::run(&ServeArgs { ids, worker: Some(3), ..ServeArgs::default() })
/// }
/// ```
pub fn run(args: &ServeArgs) -> ExitCode {
    use tracing_subscriber::Layer as _;
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    // The library's line per failed generation ("ID generation failed") is left out: the
    // server logs refused requests itself, as a count every few seconds (the library's
    // counters still count each).
    let not_per_request = tracing_subscriber::filter::filter_fn(|meta| {
        let fields = meta.fields();
        !(meta.target() == "typed_snowflake"
            && fields.field("kind").is_some()
            && fields.field("worker").is_some()
            && fields.field("error").is_some())
    });
    // Colours only on a terminal, and not there when NO_COLOR is set (https://no-color.org):
    // a log file, a pipe or a collector gets plain text.
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr())
        && std::env::var_os("NO_COLOR").is_none_or(|value| value.is_empty());
    let fmt = tracing_subscriber::fmt::layer()
        .with_ansi(ansi)
        .with_writer(std::io::stderr)
        .with_filter(not_per_request)
        .with_filter(filter);
    let _ = tracing_subscriber::registry().with(fmt).try_init();
    let config = match args.resolve() {
        Ok(config) => config,
        Err(e) => {
            eprintln!("snowflake serve: {e}");
            return ExitCode::from(2);
        }
    };
    // Before the runtime, whose own file descriptors would otherwise be taken for systemd's.
    let passed = match listen::systemd_socket() {
        Ok(passed) => passed,
        Err(e) => {
            eprintln!("snowflake serve: {e}");
            return ExitCode::FAILURE;
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("snowflake serve: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async {
        let listener = listen::listener(&config, passed)?;
        serve_inner(&config, listener, shutdown_signal(), true).await
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("snowflake serve: {e}");
            ExitCode::FAILURE
        }
    }
}
