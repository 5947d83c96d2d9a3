//! The layout core against references of its own: the presets against their schemes'
//! published numbers, civil dates against a day-by-day calendar, the rules in both spellings,
//! and hostile text that must get an error, never a panic or a wrong layout.

use snowflake_layout::rules::{self, Expired, Given, Issue, Key, Keys, Spelling};
use snowflake_layout::{
    EpochError, FieldOrder, InvalidLayout, Layout, ParseIdError, ParseLayoutError, Preset, TickUnit, format_epoch,
    format_rfc3339, parse_date_or_instant, parse_epoch,
};

#[test]
fn presets_hold_their_schemes_published_numbers() {
    // (name, time, datacenter, machine or worker, seq, epoch ms, unit, order, epoch and widths configurable)
    let expected = [
        ("twitter", 41, 5, 5, 12, 1_288_834_974_657, TickUnit::Millis, FieldOrder::WorkerAboveSeq, false, false),
        ("discord", 42, 5, 5, 12, 1_420_070_400_000, TickUnit::Millis, FieldOrder::WorkerAboveSeq, false, false),
        ("instagram", 41, 0, 13, 10, 1_314_220_021_721, TickUnit::Millis, FieldOrder::WorkerAboveSeq, false, false),
        ("sonyflake", 39, 0, 16, 8, 1_409_529_600_000, TickUnit::TenMillis, FieldOrder::SeqAboveWorker, true, false),
        ("mastodon", 48, 0, 0, 16, 0, TickUnit::Millis, FieldOrder::WorkerAboveSeq, false, false),
        ("leaf", 41, 0, 10, 12, 1_288_834_974_657, TickUnit::Millis, FieldOrder::WorkerAboveSeq, true, false),
        ("baidu", 28, 0, 22, 13, 1_463_702_400_000, TickUnit::Seconds, FieldOrder::WorkerAboveSeq, true, true),
    ];
    assert_eq!(Preset::ALL.len(), expected.len());
    let names: Vec<&str> = Preset::ALL.iter().map(|p| p.name).collect();
    assert_eq!(names.join(", "), Preset::NAMES);
    for (preset, (name, time, dc, machine, seq, epoch, unit, order, epoch_open, widths_open)) in
        Preset::ALL.iter().zip(expected)
    {
        let layout = preset.layout;
        assert_eq!(preset.name, name);
        assert_eq!(
            (layout.time_bits(), layout.datacenter_bits(), layout.machine_bits(), layout.seq_bits()),
            (time, dc, machine, seq),
            "{name}"
        );
        assert_eq!((layout.epoch_ms(), layout.unit(), layout.order()), (epoch, unit, order), "{name}");
        assert_eq!((preset.epoch_configurable, preset.widths_configurable), (epoch_open, widths_open), "{name}");
        assert!(preset.source.starts_with("https://"), "{name}");
        assert_eq!(Preset::get(name), Some(preset));
        assert_eq!(Preset::of(&layout).map(|p| p.name), Some(name));
        assert_eq!(Layout::preset(name), Some(layout));
        // The text form names the same layout, by name and written out.
        assert_eq!(format!("preset={name}").parse::<Layout>(), Ok(layout), "{name}");
        assert_eq!(layout.to_string().parse::<Layout>(), Ok(layout), "{name}");
        // And so do the rules the derive runs, on a field wide enough.
        let keys = Keys { preset: Given::Value(preset), ..Keys::default() };
        assert_eq!(rules::resolve(&keys, 64), (Some(layout), vec![]), "{name}");
        let on_i64 = rules::resolve(&keys, 63);
        if layout.fits_i64() {
            assert_eq!(on_i64, (Some(layout), vec![]), "{name}");
        } else {
            assert_eq!(on_i64, (None, vec![Issue::PresetNeedsU64 { preset: name }]), "{name}");
        }
    }
    assert_eq!(Preset::get("Twitter"), None);
    assert_eq!(Preset::get(""), None);
}

/// A calendar that counts one day at a time: slow, obviously right, and shares no arithmetic
/// with the era-based conversion under test.
struct Calendar {
    year: i64,
    month: usize,
    day: i64,
}

impl Calendar {
    fn days_in_month(&self) -> i64 {
        let leap = (self.year % 4 == 0 && self.year % 100 != 0) || self.year % 400 == 0;
        [31, if leap { 29 } else { 28 }, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][self.month - 1]
    }

    fn next(&mut self) {
        self.day += 1;
        if self.day > self.days_in_month() {
            self.day = 1;
            self.month += 1;
            if self.month > 12 {
                self.month = 1;
                self.year += 1;
            }
        }
    }

    fn text(&self) -> String {
        format!("{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }
}

#[test]
fn civil_dates_agree_with_a_day_by_day_calendar() {
    // From 1900 (a century year that is not leap) past 2400 (one that is).
    let mut calendar = Calendar { year: 1900, month: 1, day: 1 };
    let first_day = -25_567; // 1900-01-01, days from 1970-01-01
    let mut days = first_day;
    while calendar.year <= 2401 {
        let ms = days * 86_400_000;
        let text = calendar.text();
        assert_eq!(parse_date_or_instant(&text), Ok(ms), "{text}");
        assert_eq!(format_rfc3339(ms), format!("{text}T00:00:00.000Z"));
        assert_eq!(format_rfc3339(ms + 86_399_999), format!("{text}T23:59:59.999Z"));
        if ms >= 0 {
            assert_eq!(format_epoch(ms), text);
            assert_eq!(parse_epoch(&text), Ok(ms));
        } else {
            assert!(matches!(parse_epoch(&text), Err(EpochError::Before1970 { date: true, .. })), "{text}");
        }
        // The day after the last of the month does not exist.
        let (year, month, last) = (calendar.year, calendar.month, calendar.days_in_month());
        if calendar.day == last {
            let past = format!("{year:04}-{month:02}-{:02}", last + 1);
            assert!(parse_date_or_instant(&past).is_err(), "{past}");
        }
        calendar.next();
        days += 1;
    }
    assert!(days - first_day > 182_000);
}

#[test]
fn known_instants() {
    // Discord's documented example, Twitter's epoch, and the Unix epoch's neighbours.
    assert_eq!(format_rfc3339(1_462_015_105_796), "2016-04-30T11:18:25.796Z");
    assert_eq!(parse_epoch("2010-11-04T01:42:54.657Z"), Ok(1_288_834_974_657));
    assert_eq!(parse_epoch("2015-01-01"), Ok(1_420_070_400_000));
    assert_eq!(parse_epoch("0"), Ok(0));
    assert_eq!(parse_epoch("9223372036854775807"), Ok(i64::MAX));
    assert_eq!(parse_epoch("9223372036854775808"), Err(EpochError::TooLarge));
    assert_eq!(parse_epoch("-1"), Err(EpochError::Before1970 { value: "-1".into(), date: false }));
    assert!(parse_epoch("1969-12-31T23:59:59.999Z").is_err());
}

#[test]
fn the_rules_speak_both_spellings_at_their_keys() {
    let keys = Keys {
        time: Given::Value(40),
        worker: Given::Value(10),
        datacenter: Given::Value(0),
        machine: Given::Value(5),
        seq: Given::Value(0),
        epoch: Given::Absent,
        ..Keys::default()
    };
    let (layout, issues) = rules::resolve(&keys, 63);
    assert_eq!(layout, None);
    assert_eq!(
        issues,
        [Issue::ZeroWidth { key: Key::Seq }, Issue::NodeTwice, Issue::Missing { keys: vec![Key::Epoch] },]
    );
    assert_eq!(issues.iter().map(Issue::key).collect::<Vec<_>>(), [Some(Key::Seq), Some(Key::Worker), None]);
    assert_eq!(
        issues[1].message(Spelling::Attribute),
        "give the node field either as `worker = N` or as `datacenter = N, machine = M`, not both"
    );
    assert_eq!(
        issues[1].message(Spelling::Text),
        "give the node field either as `worker=N` or as `datacenter=N,machine=M`, not both"
    );
    // Too wide for an i64 by one bit: the advice names the u64.
    let wide = Keys {
        time: Given::Value(42),
        worker: Given::Value(6),
        seq: Given::Value(16),
        epoch: Given::Value(0),
        ..Keys::default()
    };
    let (_, issues) = rules::resolve(&wide, 63);
    assert_eq!(
        issues[0].message(Spelling::Attribute),
        "the widths sum to 64; at most 63 fit in an `i64` beside the sign bit (time = 42, worker = 6, seq = 16): \
         take 1 bit off, or declare the field as `u64`, which holds all 64"
    );
    assert_eq!(rules::resolve(&wide, 64).0, Layout::new(42, 6, 16, 0).ok());
    // A refused value is neither missing nor judged again.
    let refused = Keys { time: Given::Refused, worker: Given::Value(5), seq: Given::Value(5), ..Keys::default() };
    assert_eq!(rules::resolve(&refused, 64), (None, vec![Issue::Missing { keys: vec![Key::Epoch] }]));
    // After a syntax error the keys not read are not reported missing.
    assert_eq!(rules::resolve(&Keys { complete: false, ..Keys::default() }, 64), (None, vec![]));
    // A preset fixes what its scheme fixes, each at its key, in the attribute's order.
    let twitter = Keys {
        preset: Given::Value(Preset::get("twitter").unwrap()),
        seq: Given::Value(10),
        unit: Given::Value(TickUnit::TenMillis),
        epoch: Given::Value(0),
        ..Keys::default()
    };
    let (_, issues) = rules::resolve(&twitter, 63);
    assert_eq!(issues.iter().map(Issue::key).collect::<Vec<_>>(), [Some(Key::Unit), Some(Key::Seq), Some(Key::Epoch)]);
    assert_eq!(
        issues[2].message(Spelling::Text),
        "the twitter preset fixes `epoch`: its IDs count from one published epoch"
    );
}

#[test]
fn expiry_against_a_build_date() {
    let day = 86_400_000;
    let build = parse_epoch("2026-01-01").unwrap();
    let keys = |time, epoch| Keys {
        time: Given::Value(time),
        worker: Given::Value(5),
        seq: Given::Value(16),
        epoch: Given::Value(epoch),
        ..Keys::default()
    };
    // 35 bits of ms from 2021-05-05 end in 2022; 42 bits last to 2160.
    let short = keys(35, parse_epoch("2021-05-05").unwrap());
    let issue = rules::expiry(&short, None, build).unwrap();
    assert_eq!(issue.key(), Key::Time);
    assert!(issue.message(Spelling::Attribute).starts_with("the time field ran out on 2022-06-06T16:22:18.367Z"));
    assert_eq!(rules::expiry(&keys(42, parse_epoch("2021-05-05").unwrap()), None, build), None);
    // An epoch after the build date, by a day.
    let future = keys(42, build + day);
    assert!(matches!(rules::expiry(&future, None, build), Some(Expired::EpochAfterBuild { at: Key::Epoch, .. })));
    assert_eq!(rules::expiry(&future, None, build + day), None);
    // Nothing to judge without a time field or an epoch.
    assert_eq!(rules::expiry(&Keys::default(), None, build), None);
    assert_eq!(rules::last_ms(1, 0, TickUnit::Seconds), 1_999);
    assert_eq!(rules::last_ms(64, i64::MAX, TickUnit::Seconds), i64::MAX);
    assert_eq!(rules::source_date_epoch_ms("18446744073709551615"), Ok(i64::MAX));
    for bad in ["", " 1", "+1", "-1", "1.5", "1e9", "1\n"] {
        assert!(rules::source_date_epoch_ms(bad).is_err(), "{bad:?}");
    }
}

#[test]
fn the_text_form_reads_the_attribute_and_prints_the_canonical_form() {
    let order = Layout::new(42, 5, 16, 1_620_172_800_000).unwrap();
    for text in [
        "time=42,worker=5,seq=16,epoch=2021-05-05",
        " seq = 16 , epoch = \"2021-05-05\", time = 42, worker = 5 ",
        "#[layout(time = 42, worker = 5, seq = 16, epoch = \"2021-05-05\")]",
        "layout(time = 42, worker = 5, seq = 16, epoch = \"1620172800000\")",
        "time=42,worker=5,seq=16,epoch=2021-05-05T02:00:00+02:00,unit=1ms,order=time-worker-seq",
    ] {
        assert_eq!(text.parse::<Layout>(), Ok(order), "{text}");
    }
    assert_eq!(order.to_string(), "time=42,worker=5,seq=16,epoch=2021-05-05");
    assert_eq!(
        "time=42,worker=5".parse::<Layout>(),
        Err(ParseLayoutError::Missing {
            keys: "`seq`, `epoch`".into(),
            examples: "`seq=12`, `epoch=2024-01-01` (a date, an RFC 3339 instant or Unix milliseconds)".into(),
        })
    );
    assert_eq!(
        "time=0,worker=5,seq=1,epoch=0".parse::<Layout>(),
        Err(ParseLayoutError::Invalid(InvalidLayout::ZeroTime))
    );
    assert_eq!(
        "time=42,worker=7,seq=16,epoch=0".parse::<Layout>(),
        Err(ParseLayoutError::Invalid(InvalidLayout::TooWide { total: 65 }))
    );
    assert!(matches!(
        "preset=discord,epoch=2024-01-01".parse::<Layout>(),
        Err(ParseLayoutError::FixedByPreset { key: "epoch", .. })
    ));
    assert!(matches!("epoch=\"2021-05-05".parse::<Layout>(), Err(ParseLayoutError::UnbalancedQuote { .. })));
    let err = "time=41,worker=10,seq=12,epoch=yesterday".parse::<Layout>().unwrap_err();
    assert!(err.to_string().ends_with("or Unix milliseconds such as `epoch=1288834974657`"), "{err}");
}

/// xorshift64: a fixed sequence of pseudo-random numbers, so a failure repeats.
fn next(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

#[test]
fn hostile_text_gets_an_error_or_a_layout_that_prints_back() {
    for text in [
        "",
        " ",
        ",",
        ",,",
        "=",
        "==",
        "time",
        "time=",
        "=42",
        "time==42",
        "time=42,",
        "time=-1",
        "time=+1",
        "time=0x2a",
        "time=99999999999999999999",
        "time=4 2",
        "time=\"42\"",
        "epoch=\"",
        "epoch=\"\"",
        "epoch='x'",
        "preset=",
        "preset=\"twitter",
        "preset=twitter,preset=twitter",
        "preset=twitter,time=1",
        "#[layout(",
        "#[layout()]",
        "#[layout]",
        "layout()",
        "layout(time=1",
        "\u{0}",
        "time=4\u{0}2",
        "épоch=2021-05-05",
        "time=42,worker=5,seq=16,epoch=2021-05-05\u{0}",
        "time=１,worker=1,seq=1,epoch=0",
        "unit=10ms",
        "order=time-seq-worker",
        "time=64,worker=0,seq=1,epoch=0",
        "time=1,worker=64,seq=1,epoch=0",
        "datacenter=5",
        "machine=5",
        "datacenter=0,machine=0,time=1,seq=1,epoch=0",
    ] {
        if let Ok(layout) = text.parse::<Layout>() {
            panic!("{text:?} parsed as {layout}");
        }
    }
    let long = "time=42,".repeat(10_000);
    assert!(matches!(long.parse::<Layout>(), Err(ParseLayoutError::DuplicateKey { .. })));

    // Random edits of valid forms: each result is an error, or a layout that prints back.
    let seeds = [
        "time=42,worker=5,seq=16,epoch=2021-05-05",
        "time=41,datacenter=5,machine=5,seq=12,epoch=2010-11-04T01:42:54.657Z",
        "preset=sonyflake,epoch=2024-01-01",
        "#[layout(time = 39, worker = 16, seq = 8, epoch = \"2014-09-01\", unit = \"10ms\", order = \"time-seq-worker\")]",
    ];
    let alphabet: Vec<char> = "0123456789=,\"#[]() -:.TZtimeworkseqpchdunlraé\u{0}".chars().collect();
    let mut state = 0x9E37_79B9_7F4A_7C15_u64;
    let mut parsed = 0;
    for round in 0..20_000 {
        let mut chars: Vec<char> = seeds[round % seeds.len()].chars().collect();
        for _ in 0..=next(&mut state) % 3 {
            let at = (next(&mut state) as usize) % (chars.len() + 1);
            match next(&mut state) % 3 {
                0 if at < chars.len() => {
                    chars.remove(at);
                }
                1 if at < chars.len() => chars[at] = alphabet[(next(&mut state) as usize) % alphabet.len()],
                _ => chars.insert(at, alphabet[(next(&mut state) as usize) % alphabet.len()]),
            }
        }
        let text: String = chars.into_iter().collect();
        if let Ok(layout) = text.parse::<Layout>() {
            parsed += 1;
            assert_eq!(layout.to_string().parse::<Layout>(), Ok(layout), "{text:?}");
        }
    }
    assert!(parsed > 100, "the edits left some layouts valid: {parsed}");
}

#[test]
fn hostile_ids_get_an_error() {
    for text in ["", "+1", "-1", " 1", "1 ", "1_000", "１", "0x10", "1e3", "18446744073709551616", "é"] {
        assert!(Layout::DISCORD.parse_id(text).is_err(), "{text:?}");
        assert!(Layout::TWITTER.parse_id(text).is_err(), "{text:?}");
    }
    assert_eq!(Layout::TWITTER.parse_id("9223372036854775808"), Err(ParseIdError::Overflow));
    assert_eq!(Layout::DISCORD.parse_id("99999999999999999999"), Err(ParseIdError::OverflowU64));
    let small = Layout::new(30, 4, 8, 0).unwrap();
    assert!(matches!(small.parse_id("4398046511104"), Err(ParseIdError::Layout(_))));
    assert_eq!(small.parse_id("4398046511103"), Ok(4_398_046_511_103));
}
