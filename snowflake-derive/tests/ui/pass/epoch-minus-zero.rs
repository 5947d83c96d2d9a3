//! `epoch = -0` is the Unix epoch itself, not a time before it.

use typed_snowflake::SnowflakeId;

#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, Debug)]
#[layout(time = 41, worker = 10, seq = 12, epoch = -0)]
struct UnixId(i64);

fn main() -> Result<(), Box<dyn std::error::Error>> {
    assert_eq!(UnixId::EPOCH_MS, 0);
    let id = UnixId::from_parts(1_700_000_000_000, 3, 9)?;
    assert_eq!(id.timestamp_ms(), 1_700_000_000_000);
    Ok(())
}
