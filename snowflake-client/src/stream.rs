//! A stream of chunks of IDs, as `IssueStream` sends them.

use std::pin::Pin;
use std::task::{Context, Poll};

use crate::Error;
use crate::pb;

/// The chunks of an `IssueStream` call, each as a `Vec` of IDs (`u64` for an untyped stream,
/// your type for a typed one), in issuing order, for as long as it is read. Dropping it
/// cancels the call. It ends with an error when the server shuts down (`UNAVAILABLE`): open
/// another one then (the opening call is retried by the client's [`crate::RetryPolicy`]).
///
/// Read it with [`IdStream::next_chunk`], or as a [`futures_core::Stream`].
///
/// ```no_run
/// # async fn run(client: snowflake_client::SnowflakeClient) -> Result<(), Box<dyn std::error::Error>> {
/// let mut stream = client.issue_stream_named("order", 4096).await?;
/// while let Some(chunk) = stream.next_chunk().await? {
///     assert_eq!(chunk.len(), 4096);
///     # break;
/// }
/// # Ok(()) }
/// ```
pub struct IdStream<T> {
    inner: tonic::Streaming<pb::IssueBatchResponse>,
    wrap: fn(Vec<u64>) -> Result<Vec<T>, Error>,
}

impl<T> IdStream<T> {
    pub(crate) fn new(
        inner: tonic::Streaming<pb::IssueBatchResponse>,
        wrap: fn(Vec<u64>) -> Result<Vec<T>, Error>,
    ) -> Self {
        IdStream { inner, wrap }
    }

    /// The next chunk, `None` once the server ended the stream without an error.
    ///
    /// ```no_run
    /// # async fn run(client: snowflake_client::SnowflakeClient) -> Result<(), Box<dyn std::error::Error>> {
    /// let mut stream = client.issue_stream_named("order", 1000).await?;
    /// let first = stream.next_chunk().await?.ok_or("the stream ended")?;
    /// assert_eq!(first.len(), 1000);
    /// # Ok(()) }
    /// ```
    pub async fn next_chunk(&mut self) -> Result<Option<Vec<T>>, Error> {
        match self.inner.message().await {
            Ok(Some(chunk)) => (self.wrap)(chunk.ids).map(Some),
            Ok(None) => Ok(None),
            Err(status) => Err(Error::status(status, 1)),
        }
    }
}

impl<T> std::fmt::Debug for IdStream<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IdStream").finish_non_exhaustive()
    }
}

impl<T> futures_core::Stream for IdStream<T> {
    type Item = Result<Vec<T>, Error>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        Pin::new(&mut this.inner).poll_next(cx).map(|next| {
            next.map(|chunk| match chunk {
                Ok(chunk) => (this.wrap)(chunk.ids),
                Err(status) => Err(Error::status(status, 1)),
            })
        })
    }
}
