//! Layouts of all 64 bits and Sonyflake's field order at run time: the generator places
//! every field where the layout says, IDs at or above 2^63 keep their bit pattern and their
//! order, and the text form reads back what it writes, refusing everything else.

use proptest::prelude::*;
use typed_snowflake::{FieldOrder, Generator, Layout, LayoutError, ManualClock, ParseLayoutError, TickUnit};

#[test]
fn a_sonyflake_ordered_generator_issues_valid_ids() -> Result<(), Box<dyn std::error::Error>> {
    let start = 1_700_000_000_000;
    let generator = Generator::builder(Layout::SONYFLAKE).worker(0xBEEF).clock(ManualClock::new(start)).build()?;
    let mut last = None;
    for n in 0..200_u64 {
        let raw = generator.next_raw()?;
        let parts = Layout::SONYFLAKE.decode(raw)?;
        assert_eq!(parts.worker, 0xBEEF, "the machine ID sits in the low 16 bits");
        assert_eq!(parts.sequence, n, "the sequence sits above it");
        assert_eq!(parts.timestamp_ms, start);
        assert_eq!(raw.cast_unsigned() & 0xFFFF, 0xBEEF);
        assert!(last.is_none_or(|last| raw > last));
        last = Some(raw);
    }
    Ok(())
}

#[test]
fn the_inlined_fast_path_places_fields_by_the_layout() -> Result<(), Box<dyn std::error::Error>> {
    // The default clock publishes the millisecond, so `next_raw` takes the inlined fast
    // path; Sonyflake's order puts the machine ID in the low 16 bits.
    let generator = Generator::builder(Layout::SONYFLAKE).worker(0xBEEF).build()?;
    let mut last = 0_i64;
    for _ in 0..2_000 {
        let raw = generator.next_raw()?;
        let parts = Layout::SONYFLAKE.decode(raw)?;
        assert_eq!(parts.worker, 0xBEEF);
        assert!(raw > last);
        last = raw;
    }
    // And for a 64-bit layout with its node field split.
    let discord = Generator::builder(Layout::DISCORD).worker(Layout::DISCORD.join_node(1, 30)?).build()?;
    for _ in 0..2_000 {
        let parts = Layout::DISCORD.decode_u64(discord.next_raw()?.cast_unsigned())?;
        assert_eq!((parts.datacenter, parts.machine), (Some(1), Some(30)));
    }
    Ok(())
}

#[test]
fn a_discord_generator_crosses_2_63_in_order() -> Result<(), Box<dyn std::error::Error>> {
    // The time field's top bit is set 2^41 ms after Discord's epoch (in 2084).
    let boundary = Layout::DISCORD.epoch_ms() + (1 << 41);
    let clock = std::sync::Arc::new(ManualClock::new(boundary - 1));
    let generator = Generator::builder(Layout::DISCORD).worker(33).clock(clock.clone()).build()?;
    let below = generator.next_raw()?;
    clock.set(boundary);
    let above = generator.next_raw()?;
    assert!(below >= 0 && above < 0, "2^63 and above are carried as their bit pattern");
    assert!(below.cast_unsigned() < above.cast_unsigned());
    assert_eq!(above.cast_unsigned() >> 63, 1);
    let parts = Layout::DISCORD.decode_u64(above.cast_unsigned())?;
    assert_eq!((parts.timestamp_ms, parts.worker, parts.sequence), (boundary, 33, 0));
    Ok(())
}

#[test]
fn the_text_form_refuses_what_is_not_a_layout() {
    use ParseLayoutError as E;
    let err = |text: &str| text.parse::<Layout>().expect_err(text);
    assert_eq!(err(""), E::Empty);
    assert_eq!(err("  "), E::Empty);
    assert!(matches!(err("time"), E::NotKeyValue { .. }));
    assert!(matches!(err("time=42,"), E::NotKeyValue { .. }));
    assert!(matches!(err("tme=42"), E::UnknownKey { .. }));
    assert!(matches!(err("time=42,time=41"), E::DuplicateKey { .. }));
    for width in ["-1", "65", "4294967296", "", "x", "1.5", "+3", "٣"] {
        assert!(
            matches!(err(&format!("time={width},worker=5,seq=16,epoch=0")), E::BadWidth { key: "time", .. }),
            "{width}"
        );
    }
    for epoch in ["-1", "1969-12-31", "2021-02-29", "yesterday", "99999999999999999999", "2021-05-05T10:00:00"] {
        assert!(matches!(err(&format!("time=42,worker=5,seq=16,epoch={epoch}")), E::BadEpoch { .. }), "{epoch}");
    }
    assert!(matches!(err("time=42,worker=5,seq=16,epoch=0,unit=2ms"), E::BadUnit { .. }));
    // Quotes as the attribute writes them, but unbalanced, or around a width.
    for text in [
        r#"time=42,worker=5,seq=16,epoch="2021-05-05"#,
        r#"time=42,worker=5,seq=16,epoch=2021-05-05""#,
        r#"time=42,worker=5,seq=16,epoch=""#,
    ] {
        assert!(matches!(err(text), E::UnbalancedQuote { ref key, .. } if key == "epoch"), "{text}");
    }
    assert!(matches!(err(r#"time="42",worker=5,seq=16,epoch=0"#), E::BadWidth { key: "time", .. }));
    assert!(matches!(err(r#"time=42,worker=5,seq=16,epoch="""#), E::BadEpoch { .. }));
    // A pasted attribute that is not whole is not unwrapped.
    assert!(matches!(err("#[layout(time=42,worker=5,seq=16,epoch=0"), E::UnknownKey { .. }));
    assert!(matches!(err("layout(time=42)"), E::Missing { .. }));
    assert!(matches!(err("time=42,worker=5,seq=16,epoch=0,order=seq-time-worker"), E::BadOrder { .. }));
    assert!(matches!(err("preset=snowflake"), E::UnknownPreset { .. }));
    assert!(matches!(err("preset=discord,epoch=2024-01-01"), E::FixedByPreset { key: "epoch", .. }));
    assert!(matches!(err("preset=twitter,seq=10"), E::FixedByPreset { key: "seq", .. }));
    assert!(matches!(err("preset=sonyflake,order=time-worker-seq"), E::FixedByPreset { key: "order", .. }));
    assert_eq!(
        err("time=42,worker=6,seq=17,epoch=0"),
        E::Invalid(typed_snowflake::InvalidLayout::TooWide { total: 65 })
    );
    assert_eq!(err("time=0,worker=6,seq=17,epoch=0"), E::Invalid(typed_snowflake::InvalidLayout::ZeroTime));
    assert_eq!(err("time=41,worker=6,seq=0,epoch=0"), E::Invalid(typed_snowflake::InvalidLayout::ZeroSequence));
    assert!(matches!(err("time=41,worker=5,datacenter=5,machine=5,seq=12,epoch=0"), E::Node(_)));
    assert!(matches!(err("time=41,datacenter=5,seq=12,epoch=0"), E::Node(_)));
    assert!(matches!(err("time=41,datacenter=0,machine=5,seq=12,epoch=0"), E::Node(_)));
    assert_eq!(
        err("unit=1ms").to_string(),
        "the layout is missing `time`, `worker`, `seq`, `epoch`: add `time=41`, `worker=10` (or \
         `datacenter=5,machine=5`, or `worker=0` for a single-node type), `seq=12`, `epoch=2024-01-01` \
         (a date, an RFC 3339 instant or Unix milliseconds)"
    );
    assert_eq!(
        err("time=42,worker=6,seq=17,epoch=0").to_string(),
        "the widths sum to 65; at most 64 fit in an ID (63 in an i64 beside the sign bit)"
    );
}

#[test]
fn the_text_form_accepts_every_spelling_of_one_layout() -> Result<(), Box<dyn std::error::Error>> {
    let want = Layout::new(42, 5, 16, 1_620_172_800_000)?;
    for text in [
        "time=42,worker=5,seq=16,epoch=2021-05-05",
        " seq = 16 , epoch = 2021-05-05T00:00:00Z , worker=5, time=42 ",
        "time=42,worker=5,seq=16,epoch=1620172800000,unit=1ms,order=time-worker-seq",
        "time=42,worker=5,seq=16,epoch=2021-05-05T02:00:00+02:00",
        // The attribute's own spelling, and the attribute pasted whole.
        r#"time = 42, worker = 5, seq = 16, epoch = "2021-05-05""#,
        r#"time = 42, worker = 5, seq = 16, epoch = "2021-05-05", unit = "1ms", order = "time-worker-seq""#,
        r#"#[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]"#,
        r#"  layout( time = 42, worker = 5, seq = 16, epoch = 1620172800000 )  "#,
    ] {
        assert_eq!(text.parse::<Layout>()?, want, "{text}");
    }
    assert_eq!(r#"preset = "twitter""#.parse::<Layout>()?, Layout::TWITTER);
    let sony: Layout = "time=39,worker=16,seq=8,epoch=2014-09-01,unit=10ms,order=time-seq-worker".parse()?;
    assert_eq!(sony, Layout::SONYFLAKE);
    assert_eq!(sony.unit(), TickUnit::TenMillis);
    assert_eq!(sony.order(), FieldOrder::SeqAboveWorker);
    Ok(())
}

/// A 64-bit layout, in either field order, of any widths.
fn layout64() -> impl Strategy<Value = Layout> {
    layout64_from(0_i64..=4_102_444_800_000)
}

/// [`layout64`] with any epoch up to `i64::MAX` (for the text form; times past `i64::MAX`
/// ms saturate, so decoding properties use realistic epochs).
fn layout64_any_epoch() -> impl Strategy<Value = Layout> {
    layout64_from(prop_oneof![0_i64..=4_102_444_800_000, 0..=i64::MAX])
}

fn layout64_from(epochs: impl Strategy<Value = i64>) -> impl Strategy<Value = Layout> {
    (1_u32..=62, 0_u32..=20, any::<bool>(), epochs).prop_filter_map(
        "widths that sum to 64",
        |(time, worker, sony, epoch)| {
            let seq = 64_u32.checked_sub(time + worker).filter(|&s| s >= 1)?;
            let order = if sony { FieldOrder::SeqAboveWorker } else { FieldOrder::WorkerAboveSeq };
            Some(Layout::new(time, worker, seq, epoch).ok()?.with_order(order))
        },
    )
}

proptest! {
    #[test]
    fn any_u64_decodes_and_reencodes_exactly(layout in layout64(), raw in any::<u64>()) {
        // Every u64 is an ID of a 64-bit layout.
        let parts = layout.decode_u64(raw).expect("64 bits: every value is an ID");
        let back = layout.encode(parts.timestamp_ms, parts.worker, parts.sequence);
        match layout.unit() {
            TickUnit::Millis => prop_assert_eq!(back.map(i64::cast_unsigned), Ok(raw)),
            _ => prop_assert!(false, "the strategy builds millisecond layouts"),
        }
        prop_assert!(parts.worker <= layout.max_worker() && parts.sequence <= layout.max_seq());
    }

    #[test]
    fn order_is_tick_then_high_field_then_low_field(layout in layout64(), a in any::<u64>(), b in any::<u64>()) {
        let (pa, pb) = (layout.decode_u64(a).expect("an ID"), layout.decode_u64(b).expect("an ID"));
        let key = |p: &typed_snowflake::Parts| match layout.order() {
            FieldOrder::WorkerAboveSeq => (p.ticks, p.worker, p.sequence),
            FieldOrder::SeqAboveWorker => (p.ticks, p.sequence, p.worker),
        };
        prop_assert_eq!(a.cmp(&b), key(&pa).cmp(&key(&pb)));
    }

    #[test]
    fn i64_input_is_refused_when_negative(layout in layout64(), raw in any::<i64>()) {
        match layout.validate(raw) {
            Ok(back) => { prop_assert!(raw >= 0); prop_assert_eq!(back, raw); }
            Err(LayoutError::Negative { value }) => { prop_assert!(raw < 0); prop_assert_eq!(value, raw); }
            Err(other) => prop_assert!(false, "{other}"),
        }
    }

    #[test]
    fn first_and_last_at_bound_every_id_of_a_tick(layout in layout64(), raw in any::<u64>()) {
        let parts = layout.decode_u64(raw).expect("an ID");
        let (first, last) = (layout.first_at(parts.timestamp_ms), layout.last_at(parts.timestamp_ms));
        prop_assert!(first.cast_unsigned() <= raw && raw <= last.cast_unsigned());
    }

    #[test]
    fn text_round_trips(layout in layout64_any_epoch()) {
        let text = layout.to_string();
        prop_assert_eq!(text.parse::<Layout>(), Ok(layout));
    }

    #[test]
    fn hostile_text_is_an_error_or_a_layout_that_prints_back(text in "[a-z=,0-9:.TZ+ -]{0,60}") {
        if let Ok(layout) = text.parse::<Layout>() {
            prop_assert_eq!(layout.to_string().parse::<Layout>(), Ok(layout));
        }
    }

    #[test]
    fn parsed_decimal_text_of_any_u64_is_the_same_id(raw in any::<u64>()) {
        let id = Layout::DISCORD.parse_id(&raw.to_string());
        prop_assert_eq!(id.map(i64::cast_unsigned), Ok(raw));
        let narrow = Layout::TWITTER.parse_id(&raw.to_string());
        prop_assert_eq!(narrow.is_ok(), raw < 1 << 63);
    }
}

#[test]
fn far_epochs_print_as_unix_milliseconds_and_parse_back() -> Result<(), Box<dyn std::error::Error>> {
    // Found by the parse_layout fuzz target: an epoch in the year 5444803 printed as a date
    // that the text form (four-digit years, as RFC 3339) does not read.
    let layout: Layout = "preset=baidu,time=31,worker=19,epoch=171759247218954375".parse()?;
    assert_eq!(layout.to_string(), "time=31,worker=19,seq=13,epoch=171759247218954375,unit=1s");
    assert_eq!(layout.to_string().parse::<Layout>()?, layout);
    let last: Layout = "time=1,worker=0,seq=1,epoch=9223372036854775807".parse()?;
    assert_eq!(last.to_string().parse::<Layout>()?, last);
    Ok(())
}
