//! A load client for the gRPC API, used by `snowflake-server/benches/grpc.sh`: `CONCURRENCY`
//! tasks over `CONNECTIONS` HTTP/2 connections call one method for `SECONDS`, then it prints
//! one line with the IDs per second and the latency percentiles.
//!
//! ```sh
//! cargo run --release -p snowflake-server --no-default-features --features grpc --example grpc_load -- \
//!     http://127.0.0.1:8080 unary|batch|stream SECONDS CONCURRENCY CONNECTIONS [COUNT]
//! ```
//!
//! `unary` calls `Issue`; `batch` calls `IssueBatch` with `COUNT` IDs (1 000 by default);
//! `stream` opens one `IssueStream` of `COUNT`-ID chunks per task and reads it, its latency
//! being the time between two chunks. The line: `RESULT calls=… ids=… seconds=… ids_per_s=…
//! p50_us=… p99_us=… errors=…`.

use std::time::{Duration, Instant};

use snowflake_server::grpc::pb::snowflake_client::SnowflakeClient;
use snowflake_server::grpc::pb::{IssueBatchRequest, IssueRequest, IssueStreamRequest};
use tonic::transport::{Channel, Endpoint};

/// What one task saw: each call's (or chunk's) latency in µs, the IDs, the failed calls.
#[derive(Default)]
struct Seen {
    latencies: Vec<u32>,
    ids: u64,
    errors: u64,
}

fn micros(elapsed: Duration) -> u32 {
    u32::try_from(elapsed.as_micros()).unwrap_or(u32::MAX)
}

async fn task(channel: Channel, mode: String, count: u32, until: Instant) -> Seen {
    let mut client = SnowflakeClient::new(channel);
    let mut seen = Seen::default();
    let order = || "order".to_owned();
    if mode == "stream" {
        let request = IssueStreamRequest { r#type: order(), chunk: count, text: false };
        let mut stream = match client.issue_stream(request).await {
            Ok(stream) => stream.into_inner(),
            Err(_) => {
                seen.errors += 1;
                return seen;
            }
        };
        let mut last = Instant::now();
        while Instant::now() < until {
            match stream.message().await {
                Ok(Some(chunk)) => {
                    seen.latencies.push(micros(last.elapsed()));
                    last = Instant::now();
                    seen.ids += chunk.ids.len() as u64;
                }
                _ => {
                    seen.errors += 1;
                    break;
                }
            }
        }
        return seen;
    }
    while Instant::now() < until {
        let asked = Instant::now();
        let ids = if mode == "unary" {
            client.issue(IssueRequest { r#type: order() }).await.map(|_| 1)
        } else {
            let request = IssueBatchRequest { r#type: order(), count, text: false };
            client.issue_batch(request).await.map(|answer| answer.into_inner().ids.len() as u64)
        };
        match ids {
            Ok(ids) => {
                seen.latencies.push(micros(asked.elapsed()));
                seen.ids += ids;
            }
            Err(_) => seen.errors += 1,
        }
    }
    seen
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [url, mode, seconds, concurrency, connections, rest @ ..] = args.as_slice() else {
        return Err("usage: grpc_load URL unary|batch|stream SECONDS CONCURRENCY CONNECTIONS [COUNT]".into());
    };
    if !["unary", "batch", "stream"].contains(&mode.as_str()) {
        return Err(format!("mode {mode:?}: expected unary, batch or stream").into());
    }
    let seconds: u64 = seconds.parse()?;
    let concurrency: usize = concurrency.parse()?;
    let count: u32 = rest.first().map_or(Ok(1000), |c| c.parse())?;
    let mut channels = Vec::new();
    for _ in 0..connections.parse::<usize>()?.max(1) {
        channels.push(Endpoint::from_shared(url.clone())?.tcp_nodelay(true).connect().await?);
    }
    let started = Instant::now();
    let until = started + Duration::from_secs(seconds);
    let tasks: Vec<_> = (0..concurrency)
        .map(|i| tokio::spawn(task(channels[i % channels.len()].clone(), mode.clone(), count, until)))
        .collect();
    let mut all = Seen::default();
    for handle in tasks {
        let seen = handle.await?;
        all.latencies.extend(seen.latencies);
        all.ids += seen.ids;
        all.errors += seen.errors;
    }
    let elapsed = started.elapsed().as_secs_f64();
    all.latencies.sort_unstable();
    let at = |per_mille: usize| {
        let n = all.latencies.len();
        if n == 0 { 0 } else { all.latencies[(n * per_mille / 1000).min(n - 1)] }
    };
    println!(
        "RESULT calls={} ids={} seconds={elapsed:.2} ids_per_s={:.0} p50_us={} p99_us={} errors={}",
        all.latencies.len(),
        all.ids,
        all.ids as f64 / elapsed,
        at(500),
        at(990),
        all.errors
    );
    Ok(())
}
