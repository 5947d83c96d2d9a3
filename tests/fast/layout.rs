//! The layout engine through derived types: reference vectors, every const by value,
//! and hostile input to every decoder.

use typed_snowflake::{LayoutError, ParseIdError, SnowflakeId, TickUnit};

#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
struct OrderId(i64);

#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, Debug)]
#[layout(time = 41, datacenter = 5, machine = 5, seq = 12, epoch = 1288834974657)]
struct TweetId(i64);

#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, Debug)]
#[layout(time = 41, worker = 10, seq = 12, epoch = "2010-11-04T01:42:54.657Z")]
struct FlatTweetId(u64);

#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, Debug)]
#[layout(time = 39, worker = 16, seq = 8, epoch = "2014-09-01", unit = "10ms")]
struct SonyId(i64);

#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, Debug)]
#[layout(time = 28, worker = 22, seq = 13, epoch = "2016-05-20", unit = "1s")]
#[snowflake(decode_only)] // the time field ran out long ago: a type that decodes only
struct BaiduId(i64);

const REFERENCE: i64 = 1_724_551_110_457_221_119;

#[test]
fn twitter_reference_vector_split() -> Result<(), LayoutError> {
    let id = TweetId::from_node_parts(1_700_000_000_000, 7, 13, 4095)?;
    assert_eq!(id.get(), REFERENCE);
    let back = TweetId::try_from(REFERENCE)?;
    assert_eq!(back.timestamp_ms(), 1_700_000_000_000);
    assert_eq!((back.datacenter(), back.machine(), back.sequence()), (7, 13, 4095));
    assert_eq!(back.worker(), 7 << 5 | 13);
    let parts = back.parts();
    assert_eq!((parts.datacenter, parts.machine), (Some(7), Some(13)));
    assert_eq!(TweetId::DATACENTER_BITS + TweetId::MACHINE_BITS, TweetId::WORKER_BITS);
    Ok(())
}

#[test]
fn twitter_reference_vector_flat_u64() -> Result<(), LayoutError> {
    let id = FlatTweetId::from_parts(1_700_000_000_000, 7 << 5 | 13, 4095)?;
    assert_eq!(id.get(), REFERENCE);
    assert_eq!(u64::from(id), REFERENCE as u64);
    assert_eq!(FlatTweetId::EPOCH_MS, 1_288_834_974_657);
    assert_eq!(FlatTweetId::try_from(REFERENCE as u64)?, id);
    assert_eq!(id.to_string(), "1724551110457221119");
    assert_eq!("1724551110457221119".parse::<FlatTweetId>(), Ok(id));
    Ok(())
}

#[test]
fn design_card_consts() {
    assert_eq!(OrderId::TIME_BITS, 42);
    assert_eq!(OrderId::WORKER_BITS, 5);
    assert_eq!(OrderId::SEQ_BITS, 16);
    assert_eq!(OrderId::EPOCH_MS, 1_620_172_800_000);
    assert_eq!(OrderId::TIME_SHIFT, 21);
    assert_eq!(OrderId::WORKER_SHIFT, 16);
    assert_eq!(OrderId::TIME_MASK, ((1i64 << 42) - 1) << 21);
    assert_eq!(OrderId::WORKER_MASK, 0x1F << 16);
    assert_eq!(OrderId::SEQ_MASK, 0xFFFF);
    assert_eq!(OrderId::MAX_WORKER, 31);
    assert_eq!(OrderId::MAX_SEQ, 65_535);
    assert_eq!(OrderId::MAX_TIMESTAMP_MS, 1_620_172_800_000 + (1i64 << 42) - 1);
    assert_eq!(OrderId::LAYOUT.used_bits(), 63);
    assert_eq!(OrderId::LAYOUT.unit(), TickUnit::Millis);
    assert_eq!(<OrderId as SnowflakeId>::NAME, "OrderId");
    // Masks select fields in place.
    let id = OrderId::from_parts(1_700_000_000_000, 21, 777).unwrap();
    assert_eq!((id.get() & OrderId::WORKER_MASK) >> OrderId::WORKER_SHIFT, 21);
    assert_eq!(id.get() & OrderId::SEQ_MASK, 777);
    assert_eq!((id.get() & OrderId::TIME_MASK) >> OrderId::TIME_SHIFT, 1_700_000_000_000 - OrderId::EPOCH_MS);
}

#[test]
fn coarse_units() -> Result<(), LayoutError> {
    assert_eq!(SonyId::LAYOUT.unit(), TickUnit::TenMillis);
    let id = SonyId::from_parts(1_700_000_000_005, 65_535, 255)?;
    assert_eq!(id.timestamp_ms(), 1_700_000_000_000, "a timestamp decodes to the start of its 10 ms tick");
    assert_eq!(SonyId::MAX_TIMESTAMP_MS, 1_409_529_600_000 + ((1i64 << 39) * 10) - 1);
    let id = BaiduId::from_parts(1_700_000_000_999, 5, 1)?;
    assert_eq!(id.timestamp_ms(), 1_700_000_000_000);
    assert_eq!(BaiduId::MAX_TIMESTAMP_MS, 1_463_702_400_000 + (1i64 << 28) * 1000 - 1);
    Ok(())
}

#[test]
fn from_parts_refuses_out_of_range_parts() {
    assert!(matches!(OrderId::from_parts(OrderId::EPOCH_MS - 1, 0, 0), Err(LayoutError::BeforeEpoch { .. })));
    assert!(matches!(OrderId::from_parts(-1, 0, 0), Err(LayoutError::BeforeEpoch { .. })));
    assert!(matches!(OrderId::from_parts(i64::MIN, 0, 0), Err(LayoutError::BeforeEpoch { .. })));
    assert!(matches!(OrderId::from_parts(OrderId::MAX_TIMESTAMP_MS + 1, 0, 0), Err(LayoutError::TimeOverflow { .. })));
    assert!(matches!(OrderId::from_parts(i64::MAX, 0, 0), Err(LayoutError::TimeOverflow { .. })));
    assert!(matches!(
        OrderId::from_parts(1_700_000_000_000, 32, 0),
        Err(LayoutError::WorkerOutOfRange { worker: 32, max: 31 })
    ));
    assert!(matches!(OrderId::from_parts(1_700_000_000_000, u64::MAX, 0), Err(LayoutError::WorkerOutOfRange { .. })));
    assert!(matches!(OrderId::from_parts(1_700_000_000_000, 0, 65_536), Err(LayoutError::SequenceOutOfRange { .. })));
    assert!(matches!(
        TweetId::from_node_parts(1_700_000_000_000, 32, 0, 0),
        Err(LayoutError::DatacenterOutOfRange { .. })
    ));
    assert!(matches!(
        TweetId::from_node_parts(1_700_000_000_000, 0, 32, 0),
        Err(LayoutError::MachineOutOfRange { .. })
    ));
    // The edges themselves are fine.
    assert!(OrderId::from_parts(OrderId::EPOCH_MS, 0, 0).is_ok());
    assert!(OrderId::from_parts(OrderId::MAX_TIMESTAMP_MS, 31, 65_535).is_ok());
}

#[test]
fn try_from_refuses_what_no_id_could_be() {
    assert!(matches!(OrderId::try_from(-1i64), Err(LayoutError::Negative { value: -1 })));
    assert!(matches!(OrderId::try_from(i64::MIN), Err(LayoutError::Negative { .. })));
    assert!(OrderId::try_from(i64::MAX).is_ok(), "a 63-bit layout holds every positive i64");
    assert!(matches!(TweetId::try_from(-REFERENCE), Err(LayoutError::Negative { .. })));
    assert!(SonyId::try_from(i64::MAX).is_ok(), "39 + 16 + 8 = 63 bits");
    assert!(matches!(FlatTweetId::try_from(u64::MAX), Err(LayoutError::OutOfLayout { .. })));
    assert!(matches!(FlatTweetId::try_from(1u64 << 63), Err(LayoutError::OutOfLayout { .. })));
    assert_eq!(FlatTweetId::try_from((1u64 << 63) - 1).map(|id| id.get()), Ok(i64::MAX));
}

#[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, Debug)]
#[layout(time = 30, worker = 4, seq = 8, epoch = "2024-01-01")]
#[snowflake(decode_only)] // the time field ran out long ago: a type that decodes only
struct SmallId(i64);

#[test]
fn out_of_layout_bits_are_refused() {
    assert_eq!(SmallId::LAYOUT.used_bits(), 42);
    assert!(SmallId::try_from((1i64 << 42) - 1).is_ok());
    assert!(matches!(SmallId::try_from(1i64 << 42), Err(LayoutError::OutOfLayout { used_bits: 42, .. })));
    assert!(matches!("4398046511104".parse::<SmallId>(), Err(ParseIdError::Layout(LayoutError::OutOfLayout { .. }))));
}

#[test]
fn from_str_refuses_bad_text() {
    assert_eq!("".parse::<OrderId>(), Err(ParseIdError::Empty));
    assert_eq!("-1".parse::<OrderId>(), Err(ParseIdError::Sign { sign: '-' }));
    assert_eq!("+1".parse::<OrderId>(), Err(ParseIdError::Sign { sign: '+' }));
    assert_eq!(" 1".parse::<OrderId>(), Err(ParseIdError::InvalidDigit { position: 0, found: ' ' }));
    assert_eq!("1 ".parse::<OrderId>(), Err(ParseIdError::InvalidDigit { position: 1, found: ' ' }));
    assert_eq!("12x".parse::<OrderId>(), Err(ParseIdError::InvalidDigit { position: 2, found: 'x' }));
    assert_eq!("1.5".parse::<OrderId>(), Err(ParseIdError::InvalidDigit { position: 1, found: '.' }));
    assert_eq!("١٢".parse::<OrderId>(), Err(ParseIdError::InvalidDigit { position: 0, found: '١' }));
    assert_eq!("9223372036854775808".parse::<OrderId>(), Err(ParseIdError::Overflow));
    assert_eq!("99999999999999999999999999".parse::<OrderId>(), Err(ParseIdError::Overflow));
    // A bad character anywhere is reported before an overflow of the digits ahead of it.
    assert_eq!(
        "99999999999999999999x".parse::<OrderId>(),
        Err(ParseIdError::InvalidDigit { position: 20, found: 'x' })
    );
    assert_eq!("9223372036854775807".parse::<OrderId>().map(|id| id.get()), Ok(i64::MAX));
    assert_eq!("0000000000000000042".parse::<OrderId>().map(|id| id.get()), Ok(42));
    let message = "12x".parse::<OrderId>().unwrap_err().to_string();
    assert!(message.contains("'x'") && message.contains("byte 2"), "{message}");
}

#[test]
fn first_and_last_at_bound_a_millisecond_and_saturate() -> Result<(), LayoutError> {
    let t = 1_700_000_000_000;
    let first = OrderId::first_at(t);
    let last = OrderId::last_at(t);
    assert_eq!((first.timestamp_ms(), first.worker(), first.sequence()), (t, 0, 0));
    assert_eq!((last.timestamp_ms(), last.worker(), last.sequence()), (t, 31, 65_535));
    let inside = OrderId::from_parts(t, 17, 9)?;
    assert!(first <= inside && inside <= last);
    assert_eq!(OrderId::last_at(t - 1).get() + 1, first.get());
    assert_eq!(OrderId::first_at(i64::MIN).get(), 0);
    assert_eq!(OrderId::first_at(0).get(), 0);
    assert_eq!(OrderId::last_at(i64::MAX).get(), i64::MAX);
    Ok(())
}

#[test]
fn hand_built_layouts_refuse_absurd_widths_without_panicking() {
    use typed_snowflake::{InvalidLayout, Layout};
    assert_eq!(Layout::new(u32::MAX, 1, 1, 0), Err(InvalidLayout::TooWide { total: u32::MAX }));
    assert_eq!(Layout::new(41, u32::MAX, u32::MAX, 0), Err(InvalidLayout::TooWide { total: u32::MAX }));
    assert!(matches!(Layout::split(41, u32::MAX, 1, 12, 0), Err(InvalidLayout::TooWide { .. })));
    assert_eq!(Layout::new(41, 10, 12, -1), Err(InvalidLayout::EpochBefore1970 { epoch_ms: -1 }));
    assert_eq!(Layout::new(0, 10, 12, 0), Err(InvalidLayout::ZeroTime));
    assert_eq!(Layout::new(41, 10, 0, 0), Err(InvalidLayout::ZeroSequence));
}
