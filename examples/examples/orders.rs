//! Orders with typed Snowflake IDs: generated in the process, stored as `BIGINT`, queried by
//! time range, printed as JSON with the IDs as strings and with each order's creation time,
//! read from its ID, in RFC 3339.
//!
//! ```text
//! cargo run --example orders
//! cargo run --example orders -- 600        # orders of the last 600 seconds
//! DATABASE_URL=postgres://postgres@127.0.0.1:5432/test cargo run --example orders --features typed-snowflake-examples/postgres
//! DATABASE_URL=mysql://root@127.0.0.1:3306/test cargo run --example orders --features typed-snowflake-examples/mysql
//! ```
//!
//! Without `DATABASE_URL` it uses an in-memory SQLite database. The table is `TEMPORARY`, so
//! nothing is left behind on a server.

use std::error::Error;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use sqlx::{Connection, Database, Encode, Executor, FromRow, IntoArguments, Type};
use typed_snowflake::SnowflakeId;

/// An order. The layout is checked at compile time: 42 bits of milliseconds since 2024
/// (139 years), 5 bits of worker (32 processes), 16 bits of sequence (65 536 IDs per ms).
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(time = 42, worker = 5, seq = 16, epoch = "2024-01-01")]
struct OrderId(i64);

/// A customer: another type, so an `OrderId` cannot be passed where a `CustomerId` is meant.
#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(time = 41, worker = 10, seq = 12, epoch = "2024-01-01")]
struct CustomerId(i64);

#[derive(serde::Serialize, Debug)]
struct Order {
    id: OrderId,
    customer_id: CustomerId,
    total_cents: i64,
}

/// A row as sqlx decodes it: the ID columns straight into their types (a tuple needs no
/// derive; `#[derive(sqlx::FromRow)]` on `Order` works as well, as in `orders_api`).
type OrderRow = (OrderId, CustomerId, i64);

/// The statements, in each database's placeholder style.
struct Sql {
    insert: &'static str,
    between: &'static str,
}

/// PostgreSQL and SQLite number their placeholders; MySQL uses `?` (see `mysql` below).
const NUMBERED: Sql = Sql {
    insert: "INSERT INTO orders (id, customer_id, total_cents) VALUES ($1, $2, $3)",
    between: "SELECT id, customer_id, total_cents FROM orders WHERE id BETWEEN $1 AND $2 ORDER BY id",
};

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let seconds: u64 = match std::env::args().nth(1) {
        Some(arg) => arg.parse().map_err(|e| format!("the number of seconds {arg:?}: {e}"))?,
        None => 60,
    };
    // A worker ID leased through SNOWFLAKE_WORKER_LEASE is handed back however main ends.
    let _shutdown = typed_snowflake::Registry::shutdown_guard();
    // Once, at start: resolve the worker ID and build each type's generator, so that a
    // worker ID too wide for a type (or any other problem) stops the process here, listed
    // all at once, rather than failing the first request.
    if let Err(problems) = typed_snowflake::Registry::check::<(OrderId, CustomerId)>() {
        eprintln!("{problems}"); // one line per problem
        std::process::exit(1);
    }
    let url = std::env::var("DATABASE_URL").unwrap_or_else(|_| "sqlite::memory:".to_owned());
    match url.split(':').next().unwrap_or_default() {
        "sqlite" => run::<sqlx::Sqlite>(&url, &NUMBERED, seconds).await,
        "postgres" | "postgresql" => postgres(&url, seconds).await,
        "mysql" | "mariadb" => mysql(&url, seconds).await,
        _ => Err(format!("DATABASE_URL={url:?}: expected sqlite:, postgres:// or mysql://").into()),
    }
}

#[cfg(feature = "postgres")]
async fn postgres(url: &str, seconds: u64) -> Result<(), Box<dyn Error>> {
    run::<sqlx::Postgres>(url, &NUMBERED, seconds).await
}

#[cfg(feature = "mysql")]
async fn mysql(url: &str, seconds: u64) -> Result<(), Box<dyn Error>> {
    let question_marks = Sql {
        insert: "INSERT INTO orders (id, customer_id, total_cents) VALUES (?, ?, ?)",
        between: "SELECT id, customer_id, total_cents FROM orders WHERE id BETWEEN ? AND ? ORDER BY id",
    };
    run::<sqlx::MySql>(url, &question_marks, seconds).await
}

#[cfg(not(feature = "postgres"))]
async fn postgres(_: &str, _: u64) -> Result<(), Box<dyn Error>> {
    Err("a postgres:// URL needs the feature: --features typed-snowflake-examples/postgres".into())
}

#[cfg(not(feature = "mysql"))]
async fn mysql(_: &str, _: u64) -> Result<(), Box<dyn Error>> {
    Err("a mysql:// URL needs the feature: --features typed-snowflake-examples/mysql".into())
}

/// The same program for every database: `DB` is sqlx's driver type.
async fn run<DB>(url: &str, sql: &Sql, seconds: u64) -> Result<(), Box<dyn Error>>
where
    DB: Database,
    DB::Arguments: IntoArguments<DB>,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    for<'q> OrderId: Encode<'q, DB> + Type<DB>,
    for<'q> CustomerId: Encode<'q, DB> + Type<DB>,
    for<'q> i64: Encode<'q, DB> + Type<DB>,
    for<'r> OrderRow: FromRow<'r, DB::Row>,
{
    let mut db = DB::Connection::connect(url).await?;
    let schema = "CREATE TEMPORARY TABLE orders (id BIGINT PRIMARY KEY, customer_id BIGINT NOT NULL, total_cents BIGINT NOT NULL)";
    db.execute(schema).await?;

    // Orders imported from an older system keep their creation time: an ID for an instant.
    let now_ms = unix_ms_now()?;
    let alice = CustomerId::generate();
    for (minutes_ago, total_cents) in [(90, 1_999), (30, 4_500), (5, 250)] {
        let id = OrderId::from_parts(now_ms - minutes_ago * 60_000, 0, 0)?;
        sqlx::query(sql.insert).bind(id).bind(alice).bind(total_cents).execute(&mut db).await?;
    }
    // New orders get a fresh ID each: unique, increasing, and carrying the time they were made.
    let bob = CustomerId::generate();
    for total_cents in [1_200, 3_300, 800] {
        sqlx::query(sql.insert).bind(OrderId::generate()).bind(bob).bind(total_cents).execute(&mut db).await?;
    }

    // "Orders created in the last N seconds" is a range of IDs: no timestamp column, no extra
    // index. The bounds take a `SystemTime` (or Unix ms, or a chrono/time/jiff instant).
    let now = SystemTime::now();
    let since = OrderId::first_at(now.checked_sub(Duration::from_secs(seconds)).unwrap_or(UNIX_EPOCH));
    let until = OrderId::last_at(now);
    let rows: Vec<OrderRow> = sqlx::query_as(sql.between).bind(since).bind(until).fetch_all(&mut db).await?;
    let recent: Vec<Order> =
        rows.into_iter().map(|(id, customer_id, total_cents)| Order { id, customer_id, total_cents }).collect();

    println!("{} orders in the last {seconds} s (ids {since} ..= {until}):", recent.len());
    println!("{}", serde_json::to_string_pretty(&recent)?);
    for order in &recent {
        // The ID carries its creation time: `to_jiff()` (feature `jiff`), written in RFC 3339.
        let created = order.id.to_jiff().strftime("%Y-%m-%dT%H:%M:%S%.3fZ");
        println!("order {} was created at {created} by worker {}", order.id, order.id.worker());
    }
    Ok(())
}

fn unix_ms_now() -> Result<i64, Box<dyn Error>> {
    Ok(i64::try_from(SystemTime::now().duration_since(UNIX_EPOCH)?.as_millis())?)
}
