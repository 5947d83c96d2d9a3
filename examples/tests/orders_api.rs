//! `examples/orders_api.rs` served on a loopback port and called over plain HTTP/1.1: IDs are
//! JSON strings, time ranges select by ID, and bad IDs are 400s with the reason.

#[path = "../examples/orders_api.rs"]
mod orders_api;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Starts the API on `127.0.0.1:0` and returns its address.
async fn start() -> Result<std::net::SocketAddr, Box<dyn std::error::Error>> {
    let app = orders_api::app(orders_api::in_memory_pool().await?).await?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move { axum::serve(listener, app).await });
    Ok(addr)
}

/// One HTTP/1.1 request on a fresh connection: the status and the body parsed as JSON.
async fn call(
    addr: std::net::SocketAddr,
    method: &str,
    path: &str,
    body: Option<&str>,
) -> Result<(u16, Value), Box<dyn std::error::Error>> {
    let mut stream = TcpStream::connect(addr).await?;
    let body = body.unwrap_or("");
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await?;
    let mut response = String::new();
    stream.read_to_string(&mut response).await?;
    let (head, body) = response.split_once("\r\n\r\n").ok_or("no end of headers")?;
    let status = head.split(' ').nth(1).ok_or("no status")?.parse()?;
    assert!(head.to_ascii_lowercase().contains("content-length:"), "a length-delimited body: {head}");
    // axum's own rejections (a bad query string, bad JSON) are plain text.
    let json = serde_json::from_str(body).unwrap_or_else(|_| Value::String(body.to_owned()));
    Ok((status, json))
}

/// An ID from JSON: it must be a string of digits.
fn id_of(value: &Value) -> i64 {
    let text = value.as_str().unwrap_or_else(|| panic!("an ID is a JSON string, found {value}"));
    text.parse().unwrap_or_else(|e| panic!("{text:?} is not decimal: {e}"))
}

#[tokio::test]
async fn create_get_and_list_by_time() -> Result<(), Box<dyn std::error::Error>> {
    let addr = start().await?;
    // A customer ID larger than 2^53: exact only because it travels as a string.
    let customer = "9007199254740993";
    let mut created = Vec::new();
    for cents in [1250, 300] {
        let (status, order) =
            call(addr, "POST", "/orders", Some(&format!(r#"{{"customer_id": "{customer}", "total_cents": {cents}}}"#)))
                .await?;
        assert_eq!(status, 201, "{order}");
        assert_eq!(order["customer_id"], customer);
        assert_eq!(order["total_cents"], cents);
        created.push(order);
    }
    let (first, second) = (id_of(&created[0]["id"]), id_of(&created[1]["id"]));
    assert!(first < second, "IDs increase");

    let (status, fetched) = call(addr, "GET", &format!("/orders/{first}"), None).await?;
    assert_eq!(status, 200, "{fetched}");
    assert_eq!(fetched, created[0]);

    let created_ms = created[0]["created_ms"].as_i64().ok_or("created_ms")?;
    let (status, listed) = call(addr, "GET", &format!("/orders?since_ms={created_ms}"), None).await?;
    assert_eq!(status, 200, "{listed}");
    assert_eq!(listed, Value::Array(created.clone()));
    let (status, before) = call(addr, "GET", &format!("/orders?until_ms={}", created_ms - 1), None).await?;
    assert_eq!((status, before), (200, Value::Array(vec![])));
    Ok(())
}

#[tokio::test]
async fn bad_ids_are_400_with_the_reason() -> Result<(), Box<dyn std::error::Error>> {
    let addr = start().await?;
    for (path, reason) in [
        ("/orders/abc", "decimal digits"),
        ("/orders/-5", "without a sign"),
        ("/orders/99999999999999999999", "larger than i64::MAX"),
        ("/orders/%20", "decimal digits"),
    ] {
        let (status, body) = call(addr, "GET", path, None).await?;
        assert_eq!(status, 400, "{path}: {body}");
        let message = body["error"].as_str().ok_or("an error message")?;
        assert!(message.starts_with("invalid order ID") && message.contains(reason), "{path}: {message}");
    }

    let (status, body) = call(addr, "GET", "/orders/12345", None).await?;
    assert_eq!(status, 404, "a valid ID that is not stored: {body}");

    let (status, _) = call(addr, "GET", "/orders?since_ms=yesterday", None).await?;
    assert_eq!(status, 400);
    for bad in [r#"{"customer_id": "-1", "total_cents": 5}"#, r#"{"customer_id": "x", "total_cents": 5}"#, "{"] {
        let (status, _) = call(addr, "POST", "/orders", Some(bad)).await?;
        assert!(status == 400 || status == 422, "{bad}: {status}");
    }
    Ok(())
}
