//! A Rust client of `snowflake serve`'s gRPC API (tonic, on the code the `grpc` feature
//! generates from `proto/snowflake/v1/snowflake.proto`): one ID, a batch, three chunks of a
//! stream, decoding, the types, the errors, health and reflection; printed as one JSON object.
//!
//! ```sh
//! cargo run -p snowflake-cli --features grpc -- serve --id order=preset=leaf,epoch=2020-01-01 \
//!     --id user=prefix=usr,preset=twitter --worker 5 --listen 127.0.0.1:8080 &
//! cargo run -p snowflake-server --features grpc --example grpc_client -- http://127.0.0.1:8080
//! ```
//!
//! snowflake-server/tests/service/grpc.rs runs it against the real server, beside the Python
//! and Node clients, and checks what it prints.

use serde_json::{Value, json};
use snowflake_server::grpc::pb::snowflake_client::SnowflakeClient;
use snowflake_server::grpc::pb::{
    DecodeRequest, IssueBatchRequest, IssueRequest, IssueStreamRequest, ListTypesRequest, decode_request::Id,
};
use tonic::transport::Channel;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let target = std::env::args().nth(1).unwrap_or_else(|| "http://127.0.0.1:8080".to_owned());
    let channel = tonic::transport::Endpoint::from_shared(target)?.connect().await?;
    println!("{}", tour(channel).await?);
    Ok(())
}

/// The gRPC code's name of `code`, as other languages spell it (`INVALID_ARGUMENT`).
fn code_name(code: tonic::Code) -> String {
    let mut name = String::new();
    for (i, c) in format!("{code:?}").chars().enumerate() {
        if c.is_uppercase() && i > 0 {
            name.push('_');
        }
        name.push(c.to_ascii_uppercase());
    }
    name
}

/// The status a call ended with: its code's name, its message and its `retry-after`.
fn refusal<T>(answer: Result<T, tonic::Status>) -> Value {
    match answer {
        Ok(_) => Value::Null,
        Err(status) => json!({
            "code": code_name(status.code()),
            "details": status.message(),
            "retry_after": status.metadata().get("retry-after").and_then(|v| v.to_str().ok()),
        }),
    }
}

/// Every call of the API against a server of the types `order` (decimal) and `user` (`usr_…`).
pub async fn tour(channel: Channel) -> Result<Value, Box<dyn std::error::Error>> {
    let mut ids = SnowflakeClient::new(channel);
    let one = ids.issue(IssueRequest { r#type: "order".into() }).await?.into_inner();
    let batch = ids.issue_batch(IssueBatchRequest { r#type: "order".into(), count: 3, text: true }).await?.into_inner();
    let mut stream =
        ids.issue_stream(IssueStreamRequest { r#type: "order".into(), chunk: 1000, text: false }).await?.into_inner();
    let mut chunks = Vec::new();
    while chunks.len() < 3 {
        let Some(chunk) = stream.message().await? else { break };
        chunks.push(json!([chunk.ids[0].to_string(), chunk.ids[chunk.ids.len() - 1].to_string(), chunk.ids.len()]));
    }
    // Dropping the stream cancels it.
    drop(stream);
    let d = ids.decode(DecodeRequest { r#type: "order".into(), id: Some(Id::Number(one.id)) }).await?.into_inner();
    let user = ids.issue(IssueRequest { r#type: "user".into() }).await?.into_inner();
    let user_decoded =
        ids.decode(DecodeRequest { r#type: "user".into(), id: Some(Id::Text(user.text.clone())) }).await?.into_inner();
    let types = ids.list_types(ListTypesRequest {}).await?.into_inner().types;
    let wrong_prefix = format!("ord{}", &user.text[3..]);
    Ok(json!({
        "id": one.id.to_string(),
        "text": one.text,
        "batch": batch.ids.iter().map(u64::to_string).collect::<Vec<_>>(),
        "batch_texts": batch.texts,
        "chunks": chunks,
        "decoded": {
            "id": d.id.to_string(), "text": d.text, "time": d.time, "unix_ms": d.unix_ms,
            "worker": d.worker, "sequence": d.sequence,
        },
        "prefixed": { "id": user.id.to_string(), "text": user.text, "decoded": user_decoded.id.to_string() },
        "types": types.iter().map(|t| json!({ "name": t.name, "prefix": t.prefix, "worker": t.worker })).collect::<Vec<_>>(),
        "errors": {
            "unknown_type": refusal(ids.issue(IssueRequest { r#type: "nope".into() }).await),
            "bad_id": refusal(ids.decode(DecodeRequest { r#type: "order".into(), id: Some(Id::Text("12x4".into())) }).await),
            "wrong_prefix": refusal(ids.decode(DecodeRequest { r#type: "user".into(), id: Some(Id::Text(wrong_prefix)) }).await),
            "bad_count": refusal(ids.issue_batch(IssueBatchRequest { r#type: "order".into(), count: 0, text: false }).await),
        },
    }))
}
