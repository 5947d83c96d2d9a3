// Prefixed types: alone, with the other keys, on a u64 field, through a macro, and with a
// renamed crate path. `Debug` is left to the user: derived, it shows the integer.
use typed_snowflake::SnowflakeId;

#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
#[snowflake(prefix = "ord")]
pub struct OrderId(i64);

#[derive(SnowflakeId)]
#[layout(preset = "discord")]
#[snowflake(decode_only, prefix = "line_item", accept_decimal)]
pub struct LineItemId(u64);

#[derive(SnowflakeId)]
#[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
#[snowflake(prefix = "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijk")]
pub struct LongestPrefixId(i64);

macro_rules! typed {
    ($name:ident, $prefix:literal) => {
        #[derive(SnowflakeId)]
        #[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
        #[snowflake(prefix = $prefix)]
        pub struct $name(i64);
    };
}
typed!(UserId, "usr");

fn main() {
    let id = OrderId::from_parts(1_700_000_000_000, 3, 7).unwrap();
    let text: String = id.to_string();
    assert_eq!(format!("{id:?}"), format!("OrderId({})", id.get()));
    assert!(text.starts_with("ord_"));
    let back: Result<OrderId, typed_snowflake::PrefixedIdError> = text.parse();
    assert_eq!(back.ok(), Some(id));
    assert_eq!(OrderId::PREFIX, "ord");
    assert_eq!(UserId::PREFIX, "usr");
    assert_eq!(LineItemId::PREFIX.len() + LongestPrefixId::PREFIX.len(), 9 + 63);
}
