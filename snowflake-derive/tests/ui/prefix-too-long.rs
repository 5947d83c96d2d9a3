use typed_snowflake::SnowflakeId;

#[derive(SnowflakeId)]
#[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
#[snowflake(prefix = "order_line_item_of_a_very_long_and_detailed_purchase_order_in_the_shop")]
pub struct OrderId(i64);

fn main() {}
