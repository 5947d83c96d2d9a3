// The README's example type, its derive list unchanged, with a prefix added: the derive
// leaves `Debug` to the list (it shows the integer), and the prefixed form shows through
// `Display`, `FromStr` and serde.
use typed_snowflake::SnowflakeId;

#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
#[snowflake(prefix = "ord")]
pub struct OrderId(i64);

/// `Debug` in a derive attribute of its own, before the derive.
#[derive(Debug)]
#[derive(SnowflakeId, Clone, Copy)]
#[layout(preset = "discord")]
#[snowflake(prefix = "msg", accept_decimal)]
pub struct MessageId(u64);

fn main() {
    let id = OrderId::from_parts(1_700_000_000_000, 3, 7).unwrap();
    assert_eq!(format!("{id:?}"), format!("OrderId({})", id.get()));
    assert!(id.to_string().starts_with("ord_"));
    assert_eq!(id.to_string().parse::<OrderId>().ok(), Some(id));
    let message = MessageId::try_from(u64::MAX).unwrap();
    assert_eq!(format!("{message:?}"), "MessageId(18446744073709551615)");
    assert_eq!(message.to_string(), "msg_fzzzzzzzzzzzz");
}
