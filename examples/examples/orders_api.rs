//! A JSON API over SQLite with typed Snowflake IDs (axum 0.8 + sqlx).
//!
//! ```text
//! cargo run --example orders_api --features typed-snowflake-examples/api
//! curl -s -X POST localhost:3000/orders -H 'content-type: application/json' -d '{"customer_id": "42", "total_cents": 1250}'
//! curl -s localhost:3000/orders/<id>
//! curl -s 'localhost:3000/orders?since_ms=1700000000000'
//! curl -s localhost:3000/orders/not-an-id        # 400 with the reason
//! ```
//!
//! IDs travel as JSON strings (a JavaScript number cannot hold 63 bits exactly) and are
//! stored as `INTEGER`. `tests/orders_api.rs` runs `app` on a loopback port.

use std::error::Error;
use std::time::{SystemTime, UNIX_EPOCH};

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use sqlx::SqlitePool;
use sqlx::sqlite::SqlitePoolOptions;
use typed_snowflake::SnowflakeId;

#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(time = 42, worker = 5, seq = 16, epoch = "2024-01-01")]
struct OrderId(i64);

#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(time = 41, worker = 10, seq = 12, epoch = "2024-01-01")]
struct CustomerId(i64);

#[derive(sqlx::FromRow, Serialize, Debug)]
struct Order {
    id: OrderId,
    customer_id: CustomerId,
    total_cents: i64,
    /// When the order was created (Unix ms), read from the ID itself.
    #[sqlx(skip)]
    created_ms: i64,
}

#[derive(Deserialize)]
struct NewOrder {
    customer_id: CustomerId,
    total_cents: i64,
}

#[derive(Deserialize)]
struct TimeRange {
    since_ms: Option<i64>,
    until_ms: Option<i64>,
}

/// An error as a status and a JSON body `{"error": "..."}`.
struct ApiError(StatusCode, String);

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.0, Json(serde_json::json!({ "error": self.1 }))).into_response()
    }
}

impl From<sqlx::Error> for ApiError {
    fn from(error: sqlx::Error) -> Self {
        Self(StatusCode::INTERNAL_SERVER_ERROR, format!("database: {error}"))
    }
}

/// Creates the table and returns the routes.
pub(crate) async fn app(pool: SqlitePool) -> Result<Router, sqlx::Error> {
    sqlx::query("CREATE TABLE IF NOT EXISTS orders (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL, total_cents INTEGER NOT NULL)")
        .execute(&pool)
        .await?;
    Ok(Router::new()
        .route("/orders", get(list_orders).post(create_order))
        .route("/orders/{id}", get(get_order))
        .with_state(pool))
}

async fn create_order(
    State(pool): State<SqlitePool>,
    Json(new): Json<NewOrder>,
) -> Result<(StatusCode, Json<Order>), ApiError> {
    let id = OrderId::try_generate().map_err(|e| ApiError(StatusCode::SERVICE_UNAVAILABLE, e.to_string()))?;
    sqlx::query("INSERT INTO orders (id, customer_id, total_cents) VALUES ($1, $2, $3)")
        .bind(id)
        .bind(new.customer_id)
        .bind(new.total_cents)
        .execute(&pool)
        .await?;
    let order = Order { id, customer_id: new.customer_id, total_cents: new.total_cents, created_ms: id.timestamp_ms() };
    Ok((StatusCode::CREATED, Json(order)))
}

async fn get_order(State(pool): State<SqlitePool>, Path(id): Path<String>) -> Result<Json<Order>, ApiError> {
    // Parse the text ourselves: a bad ID is the client's mistake (400), with the reason.
    let id: OrderId =
        id.parse().map_err(|e| ApiError(StatusCode::BAD_REQUEST, format!("invalid order ID {id:?}: {e}")))?;
    let order: Option<Order> = sqlx::query_as("SELECT id, customer_id, total_cents FROM orders WHERE id = $1")
        .bind(id)
        .fetch_optional(&pool)
        .await?;
    let order = order.ok_or_else(|| ApiError(StatusCode::NOT_FOUND, format!("no order {id}")))?;
    Ok(Json(with_time(order)))
}

/// Orders created in `[since_ms, until_ms]` (Unix ms; defaults: the epoch and now).
async fn list_orders(
    State(pool): State<SqlitePool>,
    Query(range): Query<TimeRange>,
) -> Result<Json<Vec<Order>>, ApiError> {
    let since = OrderId::first_at(range.since_ms.unwrap_or(OrderId::EPOCH_MS));
    let until = OrderId::last_at(range.until_ms.unwrap_or_else(unix_ms_now));
    let orders: Vec<Order> =
        sqlx::query_as("SELECT id, customer_id, total_cents FROM orders WHERE id BETWEEN $1 AND $2 ORDER BY id")
            .bind(since)
            .bind(until)
            .fetch_all(&pool)
            .await?;
    Ok(Json(orders.into_iter().map(with_time).collect()))
}

fn with_time(order: Order) -> Order {
    Order { created_ms: order.id.timestamp_ms(), ..order }
}

fn unix_ms_now() -> i64 {
    let since_epoch = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    i64::try_from(since_epoch.as_millis()).unwrap_or(i64::MAX)
}

/// One connection that never closes: an in-memory SQLite database lives as long as its
/// connection. Give a file name (`sqlite://orders.db?mode=rwc`) to keep the data.
pub(crate) async fn in_memory_pool() -> Result<SqlitePool, sqlx::Error> {
    SqlitePoolOptions::new().max_connections(1).idle_timeout(None).max_lifetime(None).connect("sqlite::memory:").await
}

#[allow(dead_code, reason = "the test includes this file and starts `app` itself")]
#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    // A worker ID leased through SNOWFLAKE_WORKER_LEASE is handed back however main ends.
    let _shutdown = typed_snowflake::Registry::shutdown_guard();
    // Once, before serving: the worker ID and each type's generator; a problem (a worker ID
    // too wide for a type, an unreadable high-water file) stops the process here, not a request.
    if let Err(problems) = typed_snowflake::Registry::check::<(OrderId, CustomerId)>() {
        eprintln!("{problems}"); // one line per problem
        std::process::exit(1);
    }
    let pool = match std::env::var("DATABASE_URL") {
        Ok(url) => SqlitePool::connect(&url).await?,
        Err(_) => in_memory_pool().await?,
    };
    let addr = std::env::var("ADDR").unwrap_or_else(|_| "127.0.0.1:3000".to_owned());
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    println!("listening on http://{}", listener.local_addr()?);
    axum::serve(listener, app(pool).await?).await?;
    Ok(())
}
