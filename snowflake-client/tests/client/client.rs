//! The client against the real server (`snowflake_server::serve`, in this test's process, on
//! a port of its own): typed IDs and the refusal of another layout (the crate's example),
//! the untyped calls and their refusals, `UNAVAILABLE` retried after the server's
//! `retry-after`, a server that comes up after the client, and TLS with client certificates
//! (a CA made by openssl; under CI a missing openssl fails, elsewhere the test is skipped).

#[allow(dead_code)]
#[path = "../../examples/typed.rs"]
mod example;

#[path = "../../../snowflake-server/tests/common/certs.rs"]
mod certs;

use std::time::{Duration, Instant};

use snowflake_client::{Error, RetryPolicy, SnowflakeClient};
use snowflake_server::config::{Config, IdSpec, LeaseConfig, TlsFiles, WorkerConfig};

const ORDER: &str = "order=time=42,worker=5,seq=16,epoch=2021-05-05";
const CUSTOMER: &str = "customer=preset=leaf,epoch=2020-01-01";
const USER: &str = "user=prefix=usr,preset=twitter";

/// A server in this process, stopped when dropped.
struct Served {
    url: String,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Drop for Served {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

fn config(ids: &[&str], worker: WorkerConfig) -> Config {
    let mut config = Config::new(ids.iter().map(|spec| IdSpec::parse(spec).unwrap()).collect(), worker);
    config.drain = Duration::ZERO;
    config
}

/// Serves `config` on `listener`.
fn serve_on(config: Config, listener: tokio::net::TcpListener) -> Served {
    let scheme = if config.tls.is_some() { "https" } else { "http" };
    let url = format!("{scheme}://{}", listener.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        let _ = snowflake_server::serve(&config, listener, async {
            let _ = stopped.await;
        })
        .await;
    });
    Served { url, stop: Some(stop) }
}

/// Serves `config` on a free port, and waits until it issues (its worker ID is listed).
async fn serve(config: Config) -> Served {
    let issuing = !matches!(config.worker, WorkerConfig::Lease(_));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let served = serve_on(config, listener);
    if issuing && served.url.starts_with("http:") {
        let client = SnowflakeClient::connect(served.url.clone()).await.unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while client.list_types().await.unwrap().types.iter().any(|t| t.worker.is_none()) {
            assert!(Instant::now() < deadline, "the server issues within 10 s");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
    served
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typed_ids_and_the_refusal_of_another_layout() {
    let server = serve(config(&[ORDER, CUSTOMER], WorkerConfig::Fixed(3))).await;
    let client = SnowflakeClient::connect(server.url.clone()).await.unwrap();
    let tour = example::tour(&client).await.unwrap();
    assert_eq!(tour.orders.len(), 5);
    assert!(tour.orders.windows(2).all(|w| w[0] < w[1]), "issuing order: {:?}", tour.orders);
    assert!(tour.orders.iter().all(|id| id.worker() == 3), "{:?}", tour.orders);
    let message = tour.refusal.to_string();
    assert!(matches!(tour.refusal, Error::LayoutMismatch { .. }), "{message}");
    for says in [
        "the server's type \"customer\" has the layout time=41,worker=10,seq=12,epoch=2020-01-01",
        "CustomerId has time=42,worker=5,seq=16,epoch=2021-05-05",
        "--id customer=time=42,worker=5,seq=16,epoch=2021-05-05",
    ] {
        assert!(message.contains(says), "{says:?} missing from: {message}");
    }

    // The check once made holds for clones; another name is checked again.
    assert_eq!(client.clone().check::<example::OrderId>().await.unwrap(), "order");
    client.set_name::<example::OrderId>("customer");
    assert!(matches!(client.issue::<example::OrderId>().await, Err(Error::LayoutMismatch { .. })));
    client.set_name::<example::OrderId>("orders");
    let unknown = client.issue_batch::<example::OrderId>(3).await.unwrap_err();
    let message = unknown.to_string();
    assert!(matches!(unknown, Error::UnknownType { .. }), "{message}");
    assert!(message.contains("no type named \"orders\" for OrderId (it serves: order, customer)"), "{message}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn untyped_calls_and_refusals() {
    let server = serve(config(&[ORDER, USER], WorkerConfig::Fixed(5))).await;
    let client = SnowflakeClient::connect(server.url.clone()).await.unwrap();
    let one = client.issue_named("order").await.unwrap();
    assert_eq!(one.text, one.id.to_string());
    let batch = client.issue_batch_named("order", 1000).await.unwrap();
    assert_eq!(batch.len(), 1000);
    assert!(batch[0] > one.id && batch.windows(2).all(|w| w[0] < w[1]));
    let mut stream = client.issue_stream_named("order", 500).await.unwrap();
    let chunk = stream.next_chunk().await.unwrap().unwrap();
    assert_eq!(chunk.len(), 500);
    assert!(chunk[0] > batch[999]);
    drop(stream);

    let parts = client.decode("order", one.id).await.unwrap();
    assert_eq!((parts.id, parts.worker), (one.id, 5));
    let user = client.issue_named("user").await.unwrap();
    assert!(user.text.starts_with("usr_"), "{}", user.text);
    assert_eq!(client.decode_text("user", &user.text).await.unwrap().id, user.id);
    let types = client.list_types().await.unwrap();
    let names: Vec<&str> = types.types.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["order", "user"]);

    // Refusals other than UNAVAILABLE come back at once, with the server's reason.
    let started = Instant::now();
    let unknown = client.issue_named("nope").await.unwrap_err();
    assert_eq!(unknown.code(), Some(tonic::Code::NotFound), "{unknown}");
    assert!(unknown.to_string().contains("no ID type \"nope\"; this server serves: order, user"), "{unknown}");
    let zero = client.issue_batch_named("order", 0).await.unwrap_err();
    assert_eq!(zero.code(), Some(tonic::Code::InvalidArgument), "{zero}");
    let bad = client.decode_text("order", "12x4").await.unwrap_err();
    assert_eq!(bad.code(), Some(tonic::Code::InvalidArgument), "{bad}");
    assert!(started.elapsed() < Duration::from_secs(1), "not retried");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unavailable_is_retried_after_the_servers_retry_after() {
    // A lease store where nothing listens: the server answers, and refuses IDs with
    // UNAVAILABLE and `retry-after: 1` while it waits for it.
    let store = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let mut lease = LeaseConfig::new(format!("redis://{store}"));
    lease.wait = Some(Duration::from_secs(60));
    lease.namespace = format!("client-retry-{}", std::process::id());
    let server = serve(config(&[ORDER], WorkerConfig::Lease(lease))).await;

    let once = SnowflakeClient::builder(server.url.clone()).retry(RetryPolicy::none()).connect().await.unwrap();
    let refused = once.issue_named("order").await.unwrap_err();
    assert_eq!(refused.code(), Some(tonic::Code::Unavailable), "{refused}");
    assert_eq!(refused.retry_after(), Some(Duration::from_secs(1)), "{refused}");
    assert!(refused.to_string().contains("waiting for a worker-ID lease"), "{refused}");

    // Sent again after the server's second, and refused again: the next wait would pass the
    // policy's 1.5 s, so the second refusal is returned.
    let policy = RetryPolicy::default().with_max_wait(Duration::from_millis(1500));
    let patient = SnowflakeClient::builder(server.url.clone()).retry(policy).connect().await.unwrap();
    let started = Instant::now();
    let refused = patient.issue_named("order").await.unwrap_err();
    let took = started.elapsed();
    assert!(matches!(refused, Error::Status { attempts: 2, .. }), "{refused}");
    assert!(took >= Duration::from_secs(1) && took < Duration::from_secs(3), "waited {took:?}");
    assert!(refused.to_string().ends_with("retry after 1s, after 2 attempts"), "{refused}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_comes_up_after_the_client() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let policy = RetryPolicy::default().with_max_attempts(20).with_backoff(Duration::from_millis(20));
    let client = SnowflakeClient::builder(format!("http://127.0.0.1:{port}")).retry(policy).connect_lazy().unwrap();
    let late = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await.unwrap();
        serve_on(config(&[ORDER], WorkerConfig::Fixed(2)), listener)
    });
    // Refused (nothing listens, then no worker ID for a moment), sent again, answered.
    let id = client.issue::<example::OrderId>().await.unwrap();
    assert_eq!(id.worker(), 2);
    drop(late.await.unwrap());
}

/// Whether the TLS test can run: openssl is there, or (under CI) a failure.
fn openssl() -> bool {
    if certs::openssl_present() {
        return true;
    }
    let ci = std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "false" && v != "0");
    assert!(!ci, "openssl is not installed; under CI it must be there");
    eprintln!("skipped: openssl is not installed");
    false
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_tls_with_a_client_certificate_and_refused_without_one() {
    if !openssl() {
        return;
    }
    let dir = certs::make(&std::env::temp_dir().join(format!("snowflake-client-tls-{}", std::process::id())));
    let path = |name: &str| dir.join(name);
    let mut tls = config(&[ORDER], WorkerConfig::Fixed(4));
    tls.tls = Some(TlsFiles { cert: path("server.pem"), key: path("server.key"), client_ca: Some(path("ca.pem")) });
    let server = serve(tls).await;
    assert!(server.url.starts_with("https://"), "{}", server.url);

    let client = SnowflakeClient::builder(server.url.clone())
        .ca_certificate_file(path("ca.pem"))
        .identity_files(path("client.pem"), path("client.key"))
        .connect()
        .await
        .unwrap();
    // The server may still be acquiring its (fixed) worker ID: the retries ride it.
    let id = client.issue::<example::OrderId>().await.unwrap();
    assert_eq!(id.worker(), 4);

    // Without a client certificate the server refuses the handshake; the client says why.
    // Under TLS 1.3 the client's side of the handshake ends before the server checks the
    // certificate, so the refusal comes at the first call: its alert, or (when the client
    // reads the connection's close first) a closed connection, which is sent again.
    let without = SnowflakeClient::builder(server.url.clone())
        .ca_certificate_file(path("ca.pem"))
        .retry(RetryPolicy::default().with_backoff(Duration::from_millis(10)))
        .connect()
        .await;
    let refused = match without {
        Err(e) => e,
        Ok(client) => client.issue_named("order").await.unwrap_err(),
    };
    let message = refused.to_string();
    assert!(
        message.contains("received fatal alert: CertificateRequired") || message.contains("connection closed"),
        "{message}"
    );
    eprintln!("without a client certificate: {refused}");

    // Settings that cannot work are refused before connecting.
    let plain = SnowflakeClient::builder(server.url.replace("https:", "http:")).ca_certificate_file(path("ca.pem"));
    assert!(matches!(plain.connect().await, Err(Error::Tls { .. })));
    if !cfg!(feature = "tls-native-roots") {
        let no_ca = SnowflakeClient::connect(server.url.clone()).await.unwrap_err();
        assert!(no_ca.to_string().contains("https:// needs a CA"), "{no_ca}");
    }
    let missing = SnowflakeClient::builder(server.url.clone()).ca_certificate_file(path("nowhere.pem")).connect();
    assert!(matches!(missing.await, Err(Error::File { what: "CA certificate", .. })));
    std::fs::remove_dir_all(&dir).unwrap();
}
