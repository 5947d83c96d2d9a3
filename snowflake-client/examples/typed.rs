//! Typed IDs from `snowflake serve`: `OrderId`s issued by the server (one, a batch, a chunk of
//! a stream), and a typed call refused because the server's layout for the name is not the
//! type's own.
//!
//! ```sh
//! cargo run -p snowflake-cli --features grpc -- serve --worker 3 --listen 127.0.0.1:8080 \
//!     --id order=time=42,worker=5,seq=16,epoch=2021-05-05 --id customer=preset=leaf,epoch=2020-01-01
//! cargo run -p snowflake-client --example typed -- http://127.0.0.1:8080
//! ```
//!
//! `snowflake-client/tests/client/client.rs` runs it against the real server.

use snowflake_client::SnowflakeClient;
use typed_snowflake::SnowflakeId;

/// Served as `order` (the type's name without `Id`, in snake case), with this very layout.
#[derive(SnowflakeId, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
pub struct OrderId(i64);

/// Served as `customer`, but the server's `customer` is Leaf's layout (41 time bits, 10 worker
/// bits, 12 sequence bits): its IDs would decode to other times and workers, so the client
/// refuses to call them `CustomerId`s.
#[derive(SnowflakeId, Clone, Copy, Debug, PartialEq, Eq)]
#[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
pub struct CustomerId(i64);

/// What the example got: typed IDs, and the refusal's message.
pub struct Tour {
    /// One order ID, then a batch of three, then the first of a stream's chunk.
    pub orders: Vec<OrderId>,
    /// Why `CustomerId` was refused.
    pub refusal: snowflake_client::Error,
}

/// The typed calls against a server of `order` (the layout above) and `customer` (Leaf's).
pub async fn tour(client: &SnowflakeClient) -> Result<Tour, Box<dyn std::error::Error>> {
    let one: OrderId = client.issue::<OrderId>().await?;
    let batch: Vec<OrderId> = client.issue_batch::<OrderId>(3).await?;
    let mut stream = client.issue_stream::<OrderId>(1000).await?;
    let chunk: Vec<OrderId> = stream.next_chunk().await?.ok_or("the stream ended at once")?;
    // Dropping the stream cancels it.
    drop(stream);
    let mut orders = vec![one];
    orders.extend(batch);
    orders.push(chunk[0]);
    let refusal = match client.issue::<CustomerId>().await {
        Ok(id) => return Err(format!("{id:?} was issued under another layout").into()),
        Err(refusal) => refusal,
    };
    Ok(Tour { orders, refusal })
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::args().nth(1).unwrap_or_else(|| "http://127.0.0.1:8080".to_owned());
    let client = SnowflakeClient::connect(url).await?;
    let Tour { orders, refusal } = tour(&client).await?;
    for id in &orders {
        println!(
            "OrderId {id}: worker {}, sequence {}, issued at Unix ms {}",
            id.worker(),
            id.sequence(),
            id.timestamp_ms()
        );
    }
    println!("CustomerId refused: {refusal}");
    Ok(())
}
