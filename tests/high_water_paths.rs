//! High-water files are keyed by each type's full path: `orders::Id` and `users::Id` keep
//! separate marks, and a file written under the old name (`<Type>-<worker>.hwm`) is still
//! read while the type's own file does not exist. The registry is configured once per
//! process, so this file holds one test.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use typed_snowflake::{Clock, GenerateError, Registry, SnowflakeId, WorkerSource};

type TestResult = Result<(), Box<dyn std::error::Error>>;

const T0: i64 = 1_700_000_000_000;
const HEADER: &str = "typed-snowflake high-water v1";

mod orders {
    #[derive(typed_snowflake::SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
    #[layout(time = 41, worker = 10, seq = 12, epoch = "2020-01-01")]
    pub struct Id(i64);
}

mod users {
    #[derive(typed_snowflake::SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
    #[layout(time = 41, worker = 10, seq = 12, epoch = "2020-01-01")]
    pub struct Id(i64);
}

mod invoices {
    #[derive(typed_snowflake::SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
    #[layout(time = 41, worker = 10, seq = 12, epoch = "2020-01-01")]
    pub struct InvoiceId(i64);
}

mod receipts {
    #[derive(typed_snowflake::SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
    #[layout(time = 41, worker = 10, seq = 12, epoch = "2020-01-01")]
    pub struct ReceiptId(i64);
}

/// A clock that moves forward by itself, one millisecond every 1 000 readings (so a
/// generator waiting for a mark ahead of it gets there, deterministically), and that the
/// test can move.
#[derive(Debug, Default)]
struct Ticking {
    base: AtomicI64,
    reads: AtomicI64,
}

impl Clock for Ticking {
    fn now_ms(&self) -> i64 {
        self.base.load(Ordering::SeqCst) + self.reads.fetch_add(1, Ordering::SeqCst) / 1_000
    }
}

fn mark_of(path: &Path) -> Result<i64, Box<dyn std::error::Error>> {
    let text = std::fs::read_to_string(path)?;
    let value = text.strip_prefix(HEADER).and_then(|rest| rest.strip_prefix('\n')).and_then(|v| v.strip_suffix('\n'));
    Ok(value.ok_or_else(|| format!("unexpected high-water file {text:?}"))?.parse()?)
}

fn write_mark(path: &Path, mark_ms: i64) -> std::io::Result<()> {
    std::fs::write(path, format!("{HEADER}\n{mark_ms}\n"))
}

#[test]
fn same_named_types_keep_separate_marks_and_old_files_are_read() -> TestResult {
    let dir = tempfile::tempdir()?;
    let clock = Arc::new(Ticking { base: AtomicI64::new(T0), ..Ticking::default() });
    Registry::builder()
        .worker(WorkerSource::Fixed(3))
        .shared_clock(Arc::clone(&clock) as Arc<dyn Clock>)
        .high_water(dir.path(), Duration::from_secs(1))
        .install()?;

    assert_eq!(<orders::Id as SnowflakeId>::PATH, "high_water_paths::orders::Id");
    assert_eq!(<users::Id as SnowflakeId>::PATH, "high_water_paths::users::Id");
    let orders_file = dir.path().join("high_water_paths.orders.Id-3.hwm");
    let users_file = dir.path().join("high_water_paths.users.Id-3.hwm");

    // Two types named `Id`: each reserves in its own file. Under one shared file, the
    // second would have started after the first's whole reservation (T0 + 1 s).
    let order = orders::Id::generate();
    let user = users::Id::try_generate()?;
    assert!(mark_of(&orders_file)? >= order.timestamp_ms());
    assert!(mark_of(&users_file)? >= user.timestamp_ms());
    assert!(user.timestamp_ms() < mark_of(&orders_file)?, "users::Id started after orders::Id's reservation");
    assert!(!dir.path().join("Id-3.hwm").exists(), "the name alone keys no file any more");

    // A mark written by an earlier version under the name alone, an hour ahead of the
    // clock: read while the type's own file is absent, so nothing is issued below it.
    let legacy = dir.path().join("InvoiceId-3.hwm");
    let legacy_mark = T0 + 3_600_000;
    write_mark(&legacy, legacy_mark)?;
    assert!(matches!(invoices::InvoiceId::try_generate(), Err(GenerateError::ClockBackwards { .. })));
    clock.base.store(legacy_mark + 1, Ordering::SeqCst);
    let invoice = invoices::InvoiceId::try_generate()?;
    assert!(invoice.timestamp_ms() > legacy_mark);
    let invoices_file = dir.path().join("high_water_paths.invoices.InvoiceId-3.hwm");
    assert!(mark_of(&invoices_file)? > legacy_mark, "the new file carries the reservation on");
    assert_eq!(mark_of(&legacy)?, legacy_mark, "the old file is read, never written");

    // Where the type's own file exists, an old file beside it is ignored.
    let receipts_file = dir.path().join("high_water_paths.receipts.ReceiptId-3.hwm");
    write_mark(&receipts_file, legacy_mark)?;
    write_mark(&dir.path().join("ReceiptId-3.hwm"), legacy_mark + 10 * 3_600_000)?;
    let receipt = receipts::ReceiptId::try_generate()?;
    assert!(receipt.timestamp_ms() > legacy_mark && receipt.timestamp_ms() < legacy_mark + 3_600_000);
    Ok(())
}
