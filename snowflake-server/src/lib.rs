//! `snowflake serve`: typed Snowflake IDs over HTTP, for services written in any language.
//!
//! ID types are configured at run time by name and layout (`--id order=preset=leaf,epoch=2020-01-01`),
//! each with its own lock-free generator, all on one worker ID: fixed, from
//! `SNOWFLAKE_WORKER_ID`, a StatefulSet ordinal, or a lease from Redis, PostgreSQL or
//! MySQL/MariaDB that recovers by itself from its store's outages and data loss. The routes
//! are in [`mod@router`]; `docs/service.md` shows clients in curl, Python and Node, a Kubernetes
//! Deployment, and what differs from Leaf.
//!
//! | feature | default | the lease store it adds |
//! | --- | --- | --- |
//! | `lease-redis` | on | `--lease redis://…`, `rediss://…`, `redis+sentinel://…` |
//! | `lease-postgres` | on | `--lease postgres://…` |
//! | `lease-mysql` | on | `--lease mysql://…` (MySQL, MariaDB) |
//! | `lease-etcd` | off | `--lease etcd://…` |
//! | `lease-zookeeper` | off | `--lease zk://…` |
//!
//! Without them the worker ID is fixed, from `SNOWFLAKE_WORKER_ID`, or the StatefulSet
//! ordinal, and a lease URL of a store left out is refused at start, saying which feature it needs.
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

pub mod config;
pub mod router;
pub mod state;

use std::future::Future;
use std::process::ExitCode;
use std::sync::{Arc, OnceLock};
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
                .build_recorder();
            let handle = recorder.handle();
            metrics::set_global_recorder(recorder).ok()?;
            Some(handle)
        })
        .clone()
}

/// Serves `config` on `listener` until `shutdown` completes: acquires the lease (if any),
/// answers requests, then stops taking connections, finishes those in flight and releases
/// the lease. Logs its state changes through `tracing`.
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
    // The recorder first: the generators and the lease register their counters as they start.
    let metrics = prometheus();
    let state = Arc::new(AppState::start(config).await?);
    for t in state.types() {
        tracing::info!(r#type = %t.spec.name, layout = %t.spec.layout, worker = t.generator.worker(), "serving");
    }
    let watch = tokio::spawn(watch_readiness(Arc::clone(&state)));
    let app = router(Arc::clone(&state), metrics);
    tracing::info!(%addr, worker_source = state.worker_source(), "listening");
    if announce {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "listening on http://{addr}");
        let _ = out.flush();
    }
    let served = axum::serve(listener, app).with_graceful_shutdown(shutdown).await;
    watch.abort();
    state.release().await;
    served.map_err(|e| StartError(format!("serving: {e}")))
}

/// Logs every change of readiness (the lease fenced, lost, recovered).
async fn watch_readiness(state: Arc<AppState>) {
    let mut last: Option<String> = None;
    let mut tick = tokio::time::interval(Duration::from_millis(250));
    loop {
        tick.tick().await;
        let now = state.not_ready();
        if now != last {
            match &now {
                Some(reason) => tracing::warn!(%reason, "not ready"),
                None => tracing::info!(worker_source = state.worker_source(), "ready"),
            }
            last = now;
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
    tracing::info!("shutting down: finishing requests in flight, then releasing the lease");
}

/// `snowflake serve`: resolves the configuration, logs to standard error (`RUST_LOG`,
/// default `info`), prints `listening on http://ADDR` on standard output once it accepts
/// connections, and serves until SIGTERM or Ctrl-C. Exit codes: 0 after a clean shutdown,
/// 1 when the server cannot start (the address is taken, the lease store refused), 2 for a
/// configuration that cannot be served.
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
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).try_init();
    let config = match args.resolve() {
        Ok(config) => config,
        Err(e) => {
            eprintln!("snowflake serve: {e}");
            return ExitCode::from(2);
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
        let listener = tokio::net::TcpListener::bind(config.listen)
            .await
            .map_err(|e| StartError(format!("cannot listen on {}: {e}", config.listen)))?;
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
