//! Every preset decodes its scheme's published example bit-exactly, and round-trips the
//! scheme's own documented formula. Each example names its source.

use typed_snowflake::layout::format_rfc3339;
use typed_snowflake::{FieldOrder, Layout, LayoutError, Preset, TickUnit};

#[test]
fn twitter_reference_vector() -> Result<(), Box<dyn std::error::Error>> {
    // The reference vector of the README's tour and of the `Layout` and `Layout::TWITTER` docs,
    // built with Twitter's IdWorker formula
    // ((timestamp - twepoch) << 22 | datacenterId << 17 | workerId << 12 | sequence), twepoch
    // 1288834974657: twitter-archive/snowflake, IdWorker.scala (tag snowflake-2010).
    let layout = Layout::TWITTER;
    let id = 1_724_551_110_457_221_119_i64;
    let parts = layout.decode(id)?;
    assert_eq!(parts.timestamp_ms, 1_700_000_000_000);
    assert_eq!((parts.datacenter, parts.machine, parts.sequence), (Some(7), Some(13), 4095));
    let formula = ((1_700_000_000_000_i64 - 1_288_834_974_657) << 22) | (7 << 17) | (13 << 12) | 4095;
    assert_eq!(formula, id);
    assert_eq!(layout.encode(1_700_000_000_000, layout.join_node(7, 13)?, 4095)?, id);
    Ok(())
}

#[test]
fn discord_documented_example() -> Result<(), Box<dyn std::error::Error>> {
    // https://discord.com/developers/docs/reference#snowflakes — "Snowflake ID Broken Down in
    // Binary": 175928847299117063 is 2016-04-30 11:18:25.796 UTC, internal worker ID 1,
    // internal process ID 0, increment 7.
    let layout = Layout::DISCORD;
    let parts = layout.decode_u64(175_928_847_299_117_063)?;
    assert_eq!(format_rfc3339(parts.timestamp_ms), "2016-04-30T11:18:25.796Z");
    assert_eq!(parts.timestamp_ms, 1_462_015_105_796);
    assert_eq!((parts.datacenter, parts.machine, parts.sequence), (Some(1), Some(0), 7));
    // The page's formula: (snowflake >> 22) + 1420070400000.
    assert_eq!((175_928_847_299_117_063_u64 >> 22) + 1_420_070_400_000, 1_462_015_105_796);
    let back = layout.encode(1_462_015_105_796, layout.join_node(1, 0)?, 7)?;
    assert_eq!(back.cast_unsigned(), 175_928_847_299_117_063);
    Ok(())
}

#[test]
fn discord_ids_above_2_63_keep_their_bits() -> Result<(), Box<dyn std::error::Error>> {
    // A Discord ID whose time field has its top bit set (after 2084): all 64 bits in use.
    let layout = Layout::DISCORD;
    let top = u64::MAX;
    let parts = layout.decode_u64(top)?;
    assert_eq!(parts.ticks, (1 << 42) - 1);
    assert_eq!((parts.datacenter, parts.machine, parts.sequence), (Some(31), Some(31), 4095));
    assert_eq!(parts.timestamp_ms, layout.max_timestamp_ms());
    let raw = layout.encode(parts.timestamp_ms, parts.worker, parts.sequence)?;
    assert_eq!(raw.cast_unsigned(), top);
    // As an i64, a value at or above 2^63 is negative: refused; as a u64 it is an ID.
    assert!(matches!(layout.validate(raw), Err(LayoutError::Negative { .. })));
    assert_eq!(layout.validate_u64(top), Ok(raw));
    Ok(())
}

#[test]
fn instagram_worked_example() -> Result<(), Box<dyn std::error::Error>> {
    // https://instagram-engineering.com/sharding-ids-at-instagram-1cf5a71e5a5c — the worked
    // example: 1387263000 ms since the epoch, `id = 1387263000 << (64-41)`; shard
    // 31341 % 2000 = 1341, `id |= 1341 << (64-41-13)`; sequence 5001 % 1024 = 905. The post's
    // PL/pgSQL uses our_epoch = 1314220021721.
    let id: u64 = (1_387_263_000 << (64 - 41)) | (1341 << (64 - 41 - 13)) | (5001 % 1024);
    assert_eq!(id, 11_637_205_501_278_089);
    let parts = Layout::INSTAGRAM.decode_u64(id)?;
    assert_eq!(parts.ticks, 1_387_263_000);
    assert_eq!(parts.timestamp_ms, 1_314_220_021_721 + 1_387_263_000);
    assert_eq!((parts.worker, parts.sequence), (1341, 905));
    assert_eq!(Layout::INSTAGRAM.encode(parts.timestamp_ms, 1341, 905)?.cast_unsigned(), id);
    Ok(())
}

#[test]
fn sonyflake_matches_the_go_decomposition() -> Result<(), Box<dyn std::error::Error>> {
    // github.com/sony/sonyflake (v1), sonyflake.go: toID is
    // elapsedTime << (BitLenSequence+BitLenMachineID) | sequence << BitLenMachineID | machineID,
    // and Decompose reads time = id >> 24, sequence = id & maskSequence >> 16,
    // machine-id = id & 0xFFFF; StartTime defaults to 2014-09-01 00:00:00 UTC, units of 10 ms.
    let layout = Layout::SONYFLAKE;
    assert_eq!((layout.unit(), layout.order()), (TickUnit::TenMillis, FieldOrder::SeqAboveWorker));
    for (elapsed, sequence, machine) in
        [(0_u64, 0_u64, 0_u64), (1, 2, 3), (12_345_678_901, 255, 0xFFFF), ((1 << 39) - 1, 7, 1)]
    {
        let go_id = (elapsed << 24) | (sequence << 16) | machine;
        let unix_ms = 1_409_529_600_000 + i64::try_from(elapsed)? * 10;
        let ours = layout.encode(unix_ms, machine, sequence)?;
        assert_eq!(ours.cast_unsigned(), go_id);
        let parts = layout.decode(ours)?;
        assert_eq!(
            (go_id >> 24, (go_id & (0xFF << 16)) >> 16, go_id & 0xFFFF),
            (parts.ticks, parts.sequence, parts.worker)
        );
        assert_eq!(go_id >> 63, 0, "msb");
    }
    Ok(())
}

#[test]
fn mastodon_formula() -> Result<(), Box<dyn std::error::Error>> {
    // mastodon/mastodon lib/mastodon/snowflake.rb: id = (timestamp_ms << 16) | sequence data
    // (the low 16 bits of a hash and a per-table sequence); Unix epoch.
    let layout = Layout::MASTODON;
    let unix_ms = 1_700_000_000_123_i64;
    let id = (unix_ms.cast_unsigned() << 16) | 0xBEEF;
    let parts = layout.decode_u64(id)?;
    assert_eq!((parts.timestamp_ms, parts.sequence, parts.worker), (unix_ms, 0xBEEF, 0));
    assert_eq!(layout.encode(unix_ms, 0, 0xBEEF)?.cast_unsigned(), id);
    // The last millisecond of the 48-bit field is in the year 10889.
    assert_eq!(layout.max_timestamp_ms(), (1 << 48) - 1);
    assert!(format_rfc3339(layout.max_timestamp_ms()).starts_with("10889-"));
    Ok(())
}

#[test]
fn leaf_formula() -> Result<(), Box<dyn std::error::Error>> {
    // Meituan-Dianping/Leaf SnowflakeIDGenImpl.java: twepoch = 1288834974657L by default,
    // workerIdBits = 10, sequenceBits = 12,
    // id = ((timestamp - twepoch) << 22) | (workerId << 12) | sequence.
    let layout = Layout::LEAF;
    let (ts, worker, seq) = (1_600_000_000_000_i64, 1023_u64, 17_u64);
    let java = ((ts - 1_288_834_974_657) << 22) | (1023 << 12) | 17;
    assert_eq!(layout.encode(ts, worker, seq)?, java);
    let parts = layout.decode(java)?;
    assert_eq!((parts.timestamp_ms, parts.worker, parts.sequence), (ts, worker, seq));
    // Leaf lets the epoch be chosen; the preset takes it in text as well.
    let own: Layout = "preset=leaf,epoch=2020-01-01".parse()?;
    assert_eq!(own, Layout::LEAF.with_epoch(1_577_836_800_000)?);
    Ok(())
}

#[test]
fn baidu_formula() -> Result<(), Box<dyn std::error::Error>> {
    // baidu/uid-generator BitsAllocator.allocate:
    // (deltaSeconds << timestampShift) | (workerId << workerIdShift) | sequence, with
    // timeBits 28, workerBits 22, seqBits 13 and epochStr "2016-05-20" by default.
    let layout = Layout::BAIDU;
    assert_eq!(layout.unit(), TickUnit::Seconds);
    let (delta_s, worker, seq) = (100_000_000_i64, 4_194_303_u64, 8191_u64);
    let java = (delta_s << (22 + 13)) | (4_194_303 << 13) | 8191;
    let unix_ms = 1_463_702_400_000 + delta_s * 1000;
    assert_eq!(layout.encode(unix_ms, worker, seq)?, java);
    let parts = layout.decode(java)?;
    assert_eq!((parts.timestamp_ms, parts.worker, parts.sequence), (unix_ms, worker, seq));
    // Its time field ran out on 2024-11-20: a time after that is refused, not wrapped.
    assert_eq!(format_rfc3339(layout.max_timestamp_ms()), "2024-11-20T21:24:15.999Z");
    assert!(matches!(layout.encode(1_800_000_000_000, 0, 0), Err(LayoutError::TimeOverflow { .. })));
    // uid-generator lets widths and epoch be configured.
    let own: Layout = "preset=baidu,time=31,worker=19,seq=13,epoch=2025-01-01".parse()?;
    assert_eq!((own.time_bits(), own.worker_bits(), own.seq_bits(), own.unit()), (31, 19, 13, TickUnit::Seconds));
    Ok(())
}

#[test]
fn every_preset_is_reachable_by_name_and_round_trips_its_text() -> Result<(), Box<dyn std::error::Error>> {
    assert_eq!(Preset::ALL.len(), 7);
    for preset in Preset::ALL {
        assert_eq!(Layout::preset(preset.name), Some(preset.layout));
        assert_eq!(format!("preset={}", preset.name).parse::<Layout>()?, preset.layout);
        assert_eq!(preset.layout.to_string().parse::<Layout>()?, preset.layout, "{}", preset.name);
        assert!(Preset::NAMES.contains(preset.name));
        assert!(preset.source.starts_with("https://"));
        // The first and the last ID of the layout decode without a panic.
        assert_eq!(preset.layout.decode_u64(0)?.ticks, 0);
        assert_eq!(preset.layout.decode_u64(preset.layout.max_id_u64())?.ticks, preset.layout.max_ticks());
    }
    let full: Vec<&str> = Preset::ALL.iter().filter(|p| !p.layout.fits_i64()).map(|p| p.name).collect();
    assert_eq!(full, ["discord", "instagram", "mastodon"]);
    Ok(())
}
