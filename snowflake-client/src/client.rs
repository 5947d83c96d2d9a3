//! The client: untyped calls by the server's type name, and typed calls for derived types.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use snowflake_types::SnowflakeId;
use tonic::transport::Channel;

use crate::pb::snowflake_client::SnowflakeClient as Grpc;
use crate::pb::{self, decode_request::Id};
use crate::typed::{Types, wrap, wrap_one};
use crate::{ClientBuilder, Error, IdStream, RetryPolicy};

/// A client of `snowflake serve`'s gRPC API, cheap to clone (the clones share the connection,
/// the names given with [`SnowflakeClient::set_name`] and the layouts found equal).
///
/// ```no_run
/// use snowflake_client::SnowflakeClient;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let client = SnowflakeClient::connect("http://127.0.0.1:8080").await?;
/// let one = client.issue_named("order").await?;
/// println!("{} ({})", one.id, one.text);
/// let ids: Vec<u64> = client.issue_batch_named("order", 1000).await?;
/// let parts = client.decode("order", ids[0]).await?;
/// println!("issued at {} by worker {}", parts.time, parts.worker);
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct SnowflakeClient {
    grpc: Grpc<Channel>,
    retry: RetryPolicy,
    types: Arc<Types>,
}

impl SnowflakeClient {
    pub(crate) fn new(channel: Channel, retry: RetryPolicy) -> SnowflakeClient {
        SnowflakeClient { grpc: Grpc::new(channel), retry, types: Arc::default() }
    }

    /// Connects to `url`: `http://host:port` (plain text) or `https://host:port` (TLS, with the
    /// system's roots under the feature `tls-native-roots`; a CA of your own and client
    /// certificates through [`SnowflakeClient::builder`]), with the default keepalive and
    /// [`RetryPolicy`].
    ///
    /// ```no_run
    /// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// let client = snowflake_client::SnowflakeClient::connect("http://127.0.0.1:8080").await?;
    /// # let _ = client; Ok(()) }
    /// ```
    pub async fn connect(url: impl Into<String>) -> Result<SnowflakeClient, Error> {
        ClientBuilder::new(url.into()).connect().await
    }

    /// The settings of a connection to `url`, then [`ClientBuilder::connect`].
    ///
    /// ```no_run
    /// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// let client = snowflake_client::SnowflakeClient::builder("https://127.0.0.1:8443")
    ///     .ca_certificate_file("ca.pem")
    ///     .connect()
    ///     .await?;
    /// # let _ = client; Ok(()) }
    /// ```
    pub fn builder(url: impl Into<String>) -> ClientBuilder {
        ClientBuilder::new(url.into())
    }

    /// The retry policy of this client's calls.
    ///
    /// ```no_run
    /// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// let client = snowflake_client::SnowflakeClient::connect("http://127.0.0.1:8080").await?;
    /// assert_eq!(client.retry_policy().max_attempts(), 5);
    /// # Ok(()) }
    /// ```
    pub fn retry_policy(&self) -> &RetryPolicy {
        &self.retry
    }

    /// The generated client on the same connection, for what the typed API leaves out (the
    /// IDs' text in batches, say); its calls are not retried.
    ///
    /// ```no_run
    /// use snowflake_client::pb::IssueBatchRequest;
    ///
    /// # async fn run(client: snowflake_client::SnowflakeClient) -> Result<(), Box<dyn std::error::Error>> {
    /// let request = IssueBatchRequest { r#type: "order".into(), count: 10, text: true };
    /// let texts = client.raw().issue_batch(request).await?.into_inner().texts;
    /// # let _ = texts; Ok(()) }
    /// ```
    pub fn raw(&self) -> Grpc<Channel> {
        self.grpc.clone()
    }

    /// Sends a call until it is answered or the retry policy says stop.
    async fn call<R, F, Fut>(&self, mut send: F) -> Result<R, Error>
    where
        F: FnMut(Grpc<Channel>) -> Fut,
        Fut: Future<Output = Result<tonic::Response<R>, tonic::Status>>,
    {
        let mut waited = Duration::ZERO;
        let mut attempt = 1;
        loop {
            match send(self.grpc.clone()).await {
                Ok(response) => return Ok(response.into_inner()),
                Err(status) => match self.retry.delay(&status, attempt, waited) {
                    Some(wait) => {
                        tokio::time::sleep(wait).await;
                        waited += wait;
                        attempt += 1;
                    }
                    None => return Err(Error::status(status, attempt)),
                },
            }
        }
    }

    // ---- untyped: by the server's name of the type ----------------------------------------

    /// One ID of the server's type `name`: its 64 bits (`id`) and its text (`text`: decimal,
    /// or `ord_…` for a prefixed type).
    ///
    /// ```no_run
    /// # async fn run(client: snowflake_client::SnowflakeClient) -> Result<(), Box<dyn std::error::Error>> {
    /// let one = client.issue_named("order").await?;
    /// assert_eq!(one.text, one.id.to_string()); // a decimal type
    /// # Ok(()) }
    /// ```
    pub async fn issue_named(&self, name: &str) -> Result<pb::IssueResponse, Error> {
        self.call(|mut grpc| async move { grpc.issue(pb::IssueRequest { r#type: name.to_owned() }).await }).await
    }

    /// `count` IDs of the server's type `name`, in issuing order (from 1 to the type's
    /// `batch_limit`, see [`SnowflakeClient::list_types`]).
    ///
    /// ```no_run
    /// # async fn run(client: snowflake_client::SnowflakeClient) -> Result<(), Box<dyn std::error::Error>> {
    /// let ids = client.issue_batch_named("order", 1000).await?;
    /// assert!(ids.windows(2).all(|w| w[0] < w[1]));
    /// # Ok(()) }
    /// ```
    pub async fn issue_batch_named(&self, name: &str, count: u32) -> Result<Vec<u64>, Error> {
        let request = pb::IssueBatchRequest { r#type: name.to_owned(), count, text: false };
        let answer = self.call(|mut grpc| {
            let request = request.clone();
            async move { grpc.issue_batch(request).await }
        });
        Ok(answer.await?.ids)
    }

    /// Chunks of `chunk` IDs of the server's type `name`, one after another, for as long as
    /// the stream is read ([`IdStream`]).
    ///
    /// ```no_run
    /// # async fn run(client: snowflake_client::SnowflakeClient) -> Result<(), Box<dyn std::error::Error>> {
    /// let mut stream = client.issue_stream_named("order", 4096).await?;
    /// let chunk: Vec<u64> = stream.next_chunk().await?.ok_or("ended")?;
    /// # let _ = chunk; Ok(()) }
    /// ```
    pub async fn issue_stream_named(&self, name: &str, chunk: u32) -> Result<IdStream<u64>, Error> {
        let inner = self.open_stream(name, chunk).await?;
        Ok(IdStream::new(inner, Ok))
    }

    async fn open_stream(&self, name: &str, chunk: u32) -> Result<tonic::Streaming<pb::IssueBatchResponse>, Error> {
        let request = pb::IssueStreamRequest { r#type: name.to_owned(), chunk, text: false };
        self.call(|mut grpc| {
            let request = request.clone();
            async move { grpc.issue_stream(request).await }
        })
        .await
    }

    /// The parts of the ID `id` of the server's type `name`: its time (RFC 3339, Unix ms),
    /// worker (or datacenter and machine) and sequence.
    ///
    /// ```no_run
    /// # async fn run(client: snowflake_client::SnowflakeClient) -> Result<(), Box<dyn std::error::Error>> {
    /// let parts = client.decode("order", 1_724_551_110_457_221_119).await?;
    /// println!("{} worker {} sequence {}", parts.time, parts.worker, parts.sequence);
    /// # Ok(()) }
    /// ```
    pub async fn decode(&self, name: &str, id: u64) -> Result<pb::DecodeResponse, Error> {
        self.decode_id(name, Id::Number(id)).await
    }

    /// The parts of an ID given as text: decimal digits, or `ord_…` for a prefixed type.
    ///
    /// ```no_run
    /// # async fn run(client: snowflake_client::SnowflakeClient) -> Result<(), Box<dyn std::error::Error>> {
    /// let parts = client.decode_text("order", "ord_1fvpp347wxqzz").await?;
    /// println!("{}", parts.decimal);
    /// # Ok(()) }
    /// ```
    pub async fn decode_text(&self, name: &str, text: &str) -> Result<pb::DecodeResponse, Error> {
        self.decode_id(name, Id::Text(text.to_owned())).await
    }

    async fn decode_id(&self, name: &str, id: Id) -> Result<pb::DecodeResponse, Error> {
        let request = pb::DecodeRequest { r#type: name.to_owned(), id: Some(id) };
        self.call(|mut grpc| {
            let request = request.clone();
            async move { grpc.decode(request).await }
        })
        .await
    }

    /// Every type the server serves, with its layout, prefix, batch limit and worker ID.
    ///
    /// ```no_run
    /// # async fn run(client: snowflake_client::SnowflakeClient) -> Result<(), Box<dyn std::error::Error>> {
    /// for t in client.list_types().await?.types {
    ///     println!("{}: {} (at most {} a batch)", t.name, t.layout, t.batch_limit);
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn list_types(&self) -> Result<pb::ListTypesResponse, Error> {
        self.call(|mut grpc| async move { grpc.list_types(pb::ListTypesRequest {}).await }).await
    }

    // ---- typed: a derived type, checked against the server's layout once -----------------

    /// Asks the server for its type `name` when a typed call is made for `T` (instead of
    /// [`crate::type_name`]`::<T>()`); the layout is checked again at the next typed call.
    ///
    /// ```no_run
    /// use typed_snowflake::SnowflakeId;
    ///
    /// #[derive(SnowflakeId, Clone, Copy)]
    /// #[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
    /// struct OrderId(i64);
    ///
    /// # async fn run(client: snowflake_client::SnowflakeClient) -> Result<(), Box<dyn std::error::Error>> {
    /// client.set_name::<OrderId>("shop.orders");
    /// let id: OrderId = client.issue::<OrderId>().await?; // from the server's `shop.orders`
    /// # let _ = id; Ok(()) }
    /// ```
    pub fn set_name<T: SnowflakeId>(&self, name: impl Into<String>) {
        self.types.set_name::<T>(name.into());
    }

    /// Checks now what the first typed call for `T` checks: that the server serves a type
    /// under `T`'s name whose layout is `T::LAYOUT`. Returns the server's name; an equal
    /// layout is remembered, so the next typed calls send no `ListTypes`.
    ///
    /// ```no_run
    /// use typed_snowflake::SnowflakeId;
    ///
    /// #[derive(SnowflakeId, Clone, Copy)]
    /// #[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
    /// struct OrderId(i64);
    ///
    /// # async fn run(client: snowflake_client::SnowflakeClient) -> Result<(), Box<dyn std::error::Error>> {
    /// // At start, so that a server of another layout stops the service before any request.
    /// assert_eq!(client.check::<OrderId>().await?, "order");
    /// # Ok(()) }
    /// ```
    pub async fn check<T: SnowflakeId>(&self) -> Result<String, Error> {
        if let Some(name) = self.types.checked::<T>() {
            return Ok(name);
        }
        let name = self.types.name_of::<T>();
        let served = self.list_types().await?;
        self.types.check::<T>(name, &served)
    }

    /// One ID of `T` from the server's type of `T`'s name.
    ///
    /// ```no_run
    /// use typed_snowflake::SnowflakeId;
    ///
    /// #[derive(SnowflakeId, Clone, Copy, Debug)]
    /// #[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
    /// struct OrderId(i64);
    ///
    /// # async fn run(client: snowflake_client::SnowflakeClient) -> Result<(), Box<dyn std::error::Error>> {
    /// let id: OrderId = client.issue::<OrderId>().await?;
    /// println!("{id} from worker {}", id.worker());
    /// # Ok(()) }
    /// ```
    pub async fn issue<T: SnowflakeId>(&self) -> Result<T, Error> {
        let name = self.check::<T>().await?;
        wrap_one(self.issue_named(&name).await?.id)
    }

    /// `count` IDs of `T`, in issuing order.
    ///
    /// ```no_run
    /// use typed_snowflake::SnowflakeId;
    ///
    /// #[derive(SnowflakeId, Clone, Copy, PartialEq, PartialOrd)]
    /// #[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
    /// struct OrderId(i64);
    ///
    /// # async fn run(client: snowflake_client::SnowflakeClient) -> Result<(), Box<dyn std::error::Error>> {
    /// let ids: Vec<OrderId> = client.issue_batch::<OrderId>(1000).await?;
    /// assert!(ids.windows(2).all(|w| w[0] < w[1]));
    /// # Ok(()) }
    /// ```
    pub async fn issue_batch<T: SnowflakeId>(&self, count: u32) -> Result<Vec<T>, Error> {
        let name = self.check::<T>().await?;
        wrap(self.issue_batch_named(&name, count).await?)
    }

    /// Chunks of `chunk` IDs of `T`, for as long as the stream is read.
    ///
    /// ```no_run
    /// use typed_snowflake::SnowflakeId;
    ///
    /// #[derive(SnowflakeId, Clone, Copy)]
    /// #[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
    /// struct OrderId(i64);
    ///
    /// # async fn run(client: snowflake_client::SnowflakeClient) -> Result<(), Box<dyn std::error::Error>> {
    /// let mut stream = client.issue_stream::<OrderId>(4096).await?;
    /// while let Some(chunk) = stream.next_chunk().await? {
    ///     let _: Vec<OrderId> = chunk;
    ///     # break;
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn issue_stream<T: SnowflakeId>(&self, chunk: u32) -> Result<IdStream<T>, Error> {
        let name = self.check::<T>().await?;
        let inner = self.open_stream(&name, chunk).await?;
        Ok(IdStream::new(inner, wrap::<T>))
    }
}
