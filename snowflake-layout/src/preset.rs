//! The layouts of public Snowflake schemes, as constants and by name.

use crate::error::InvalidLayout;
use crate::layout::{FieldOrder, Layout, TickUnit};

/// `Ok(layout)` in a `const`, or a compile-time error naming the preset.
const fn checked(layout: Result<Layout, InvalidLayout>) -> Layout {
    match layout {
        Ok(layout) => layout,
        Err(_) => panic!("a preset layout is invalid"),
    }
}

impl Layout {
    /// Twitter's 2010 Snowflake: 41 bits of milliseconds since 2010-11-04T01:42:54.657Z,
    /// 5 datacenter bits, 5 machine bits, 12 of sequence.
    ///
    /// ```
    /// use snowflake_layout::Layout;
    ///
    /// let parts = Layout::TWITTER.decode(1_724_551_110_457_221_119)?;
    /// assert_eq!((parts.timestamp_ms, parts.datacenter, parts.machine, parts.sequence),
    ///            (1_700_000_000_000, Some(7), Some(13), 4095));
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub const TWITTER: Layout = checked(Layout::split(41, 5, 5, 12, 1_288_834_974_657));
    /// Discord: 42 bits of milliseconds since 2015-01-01, a 5-bit internal worker ID, a 5-bit
    /// process ID and a 12-bit increment; all 64 bits, so a type over a `u64`.
    ///
    /// ```
    /// use snowflake_layout::Layout;
    ///
    /// assert_eq!(Layout::DISCORD.used_bits(), 64);
    /// assert_eq!(Layout::DISCORD.epoch_ms(), 1_420_070_400_000);
    /// ```
    pub const DISCORD: Layout = checked(Layout::split(42, 5, 5, 12, 1_420_070_400_000));
    /// Instagram: 41 bits of milliseconds since 1314220021721 (2011-08-24T21:07:01.721Z),
    /// a 13-bit logical shard ID and a 10-bit per-table sequence; all 64 bits.
    ///
    /// ```
    /// use snowflake_layout::Layout;
    ///
    /// assert_eq!((Layout::INSTAGRAM.max_worker(), Layout::INSTAGRAM.max_seq()), (8191, 1023));
    /// ```
    pub const INSTAGRAM: Layout = checked(Layout::new(41, 13, 10, 1_314_220_021_721));
    /// Sonyflake: 39 bits of 10 ms ticks since 2014-09-01 (its default start time), then an
    /// 8-bit sequence above a 16-bit machine ID.
    ///
    /// ```
    /// use snowflake_layout::{FieldOrder, Layout, TickUnit};
    ///
    /// assert_eq!(Layout::SONYFLAKE.unit(), TickUnit::TenMillis);
    /// assert_eq!(Layout::SONYFLAKE.order(), FieldOrder::SeqAboveWorker);
    /// ```
    pub const SONYFLAKE: Layout = checked(Layout::new(39, 16, 8, 1_409_529_600_000))
        .with_unit(TickUnit::TenMillis)
        .with_order(FieldOrder::SeqAboveWorker);
    /// Mastodon: a 48-bit Unix-millisecond timestamp above 16 bits of sequence data; epoch
    /// 1970-01-01, no node field, all 64 bits.
    ///
    /// ```
    /// use snowflake_layout::Layout;
    ///
    /// assert_eq!((Layout::MASTODON.epoch_ms(), Layout::MASTODON.worker_bits()), (0, 0));
    /// ```
    pub const MASTODON: Layout = checked(Layout::new(48, 0, 16, 0));
    /// Meituan Leaf's snowflake mode: Twitter's 41/10/12 with a 10-bit worker ID and Leaf's
    /// default epoch (Twitter's, 1288834974657); Leaf lets you choose another
    /// ([`Layout::with_epoch`]).
    ///
    /// ```
    /// use snowflake_layout::Layout;
    ///
    /// assert_eq!(Layout::LEAF.max_worker(), 1023);
    /// ```
    pub const LEAF: Layout = checked(Layout::new(41, 10, 12, 1_288_834_974_657));
    /// Baidu uid-generator's default: 28 bits of seconds since 2016-05-20, 22 of worker,
    /// 13 of sequence. Its time field ran out in 2024 (8.5 years after the epoch): decode
    /// old IDs with it, or generate with another epoch ([`Layout::with_epoch`]).
    ///
    /// ```
    /// use snowflake_layout::Layout;
    ///
    /// assert_eq!(Layout::BAIDU.max_timestamp_ms(), 1_732_137_855_999); // 2024-11-20
    /// ```
    pub const BAIDU: Layout = checked(Layout::new(28, 22, 13, 1_463_702_400_000)).with_unit(TickUnit::Seconds);

    /// The layout of a public scheme by name (see [`Preset::ALL`]); `None` for an unknown
    /// name.
    ///
    /// ```
    /// use snowflake_layout::Layout;
    ///
    /// assert_eq!(Layout::preset("discord"), Some(Layout::DISCORD));
    /// assert_eq!(Layout::preset("Discord"), None);
    /// ```
    pub fn preset(name: &str) -> Option<Layout> {
        Preset::get(name).map(|preset| preset.layout)
    }
}

/// What a scheme calls the fields of its IDs, for display.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Labels {
    /// The node field as a whole (`""` when the scheme has none).
    pub node: &'static str,
    /// The high half of a split node field (`""` when not split).
    pub datacenter: &'static str,
    /// The low half of a split node field (`""` when not split).
    pub machine: &'static str,
    /// The sequence field.
    pub sequence: &'static str,
}

impl Labels {
    /// The field names of a layout that no preset names: `worker` (split: `datacenter` and
    /// `machine`) and `sequence`.
    ///
    /// ```
    /// use snowflake_layout::Labels;
    ///
    /// assert_eq!((Labels::DEFAULT.node, Labels::DEFAULT.sequence), ("worker", "sequence"));
    /// ```
    pub const DEFAULT: Labels =
        Labels { node: "worker", datacenter: "datacenter", machine: "machine", sequence: "sequence" };
}

/// A public Snowflake scheme: its layout, what it calls its fields, and what it leaves to
/// the user.
///
/// ```
/// use snowflake_layout::{Layout, Preset};
///
/// let discord = Preset::get("discord").ok_or("no such preset")?;
/// assert_eq!(discord.layout, Layout::DISCORD);
/// assert_eq!((discord.labels.datacenter, discord.labels.machine, discord.labels.sequence),
///            ("worker", "process", "increment"));
/// assert_eq!(Preset::ALL.len(), 7);
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Preset {
    /// The name: `twitter`, `discord`, `instagram`, `sonyflake`, `mastodon`, `leaf`, `baidu`.
    pub name: &'static str,
    /// The scheme's layout, with its default epoch.
    pub layout: Layout,
    /// What the scheme calls its fields.
    pub labels: Labels,
    /// One line about the scheme.
    pub about: &'static str,
    /// Where the layout is documented.
    pub source: &'static str,
    /// Whether the scheme leaves the epoch to the user (an `epoch` may override it).
    pub epoch_configurable: bool,
    /// Whether the scheme leaves the widths to the user (`time`, `worker`, `seq` may
    /// override them).
    pub widths_configurable: bool,
}

const fn labels(node: &'static str, sequence: &'static str) -> Labels {
    Labels { node, datacenter: "", machine: "", sequence }
}

impl Preset {
    /// Every preset, in the order `snowflake layouts` lists them.
    pub const ALL: &'static [Preset] = &[
        Preset {
            name: "twitter",
            layout: Layout::TWITTER,
            labels: Labels { node: "worker", datacenter: "datacenter", machine: "machine", sequence: "sequence" },
            about: "Twitter Snowflake (2010)",
            source: "https://github.com/twitter-archive/snowflake/blob/snowflake-2010/src/main/scala/com/twitter/service/snowflake/IdWorker.scala",
            epoch_configurable: false,
            widths_configurable: false,
        },
        Preset {
            name: "discord",
            layout: Layout::DISCORD,
            labels: Labels { node: "node", datacenter: "worker", machine: "process", sequence: "increment" },
            about: "Discord snowflakes",
            source: "https://discord.com/developers/docs/reference#snowflakes",
            epoch_configurable: false,
            widths_configurable: false,
        },
        Preset {
            name: "instagram",
            layout: Layout::INSTAGRAM,
            labels: labels("shard", "sequence"),
            about: "Instagram sharded IDs (PL/pgSQL next_id)",
            source: "https://instagram-engineering.com/sharding-ids-at-instagram-1cf5a71e5a5c",
            epoch_configurable: false,
            widths_configurable: false,
        },
        Preset {
            name: "sonyflake",
            layout: Layout::SONYFLAKE,
            labels: labels("machine", "sequence"),
            about: "Sonyflake (10 ms ticks, sequence above machine ID)",
            source: "https://github.com/sony/sonyflake",
            epoch_configurable: true,
            widths_configurable: false,
        },
        Preset {
            name: "mastodon",
            layout: Layout::MASTODON,
            labels: labels("", "sequence"),
            about: "Mastodon IDs (Unix ms << 16 | sequence data)",
            source: "https://github.com/mastodon/mastodon/blob/main/lib/mastodon/snowflake.rb",
            epoch_configurable: false,
            widths_configurable: false,
        },
        Preset {
            name: "leaf",
            layout: Layout::LEAF,
            labels: labels("worker", "sequence"),
            about: "Meituan Leaf, snowflake mode",
            source: "https://github.com/Meituan-Dianping/Leaf/blob/master/leaf-core/src/main/java/com/sankuai/inf/leaf/snowflake/SnowflakeIDGenImpl.java",
            epoch_configurable: true,
            widths_configurable: false,
        },
        Preset {
            name: "baidu",
            layout: Layout::BAIDU,
            labels: labels("worker", "sequence"),
            about: "Baidu uid-generator (seconds)",
            source: "https://github.com/baidu/uid-generator",
            epoch_configurable: true,
            widths_configurable: true,
        },
    ];

    /// The preset names, comma-separated, for messages.
    pub const NAMES: &'static str = "twitter, discord, instagram, sonyflake, mastodon, leaf, baidu";

    /// The preset of that name (lower case, as listed in [`Preset::NAMES`]).
    ///
    /// ```
    /// use snowflake_layout::Preset;
    ///
    /// assert_eq!(Preset::get("leaf").map(|p| p.epoch_configurable), Some(true));
    /// assert!(Preset::get("snowflake").is_none());
    /// ```
    pub fn get(name: &str) -> Option<&'static Preset> {
        Preset::ALL.iter().find(|preset| preset.name == name)
    }

    /// The preset whose layout is exactly `layout`, if any.
    ///
    /// ```
    /// use snowflake_layout::{Layout, Preset};
    ///
    /// assert_eq!(Preset::of(&Layout::SONYFLAKE).map(|p| p.name), Some("sonyflake"));
    /// assert!(Preset::of(&Layout::new(30, 4, 8, 0)?).is_none());
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn of(layout: &Layout) -> Option<&'static Preset> {
        Preset::ALL.iter().find(|preset| preset.layout == *layout)
    }

    /// The preset a layout given as `text` (and read as `layout`) belongs to: the one its
    /// `preset=` key names (a preset with its epoch or widths overridden keeps the preset's
    /// field names), else the one whose layout it is exactly. The rule `snowflake inspect` and
    /// `snowflake serve` name fields by.
    ///
    /// ```
    /// use snowflake_layout::{Layout, Preset};
    ///
    /// let text = "preset=leaf,epoch=2020-01-01";
    /// assert_eq!(Preset::named_in(text, &text.parse()?).map(|p| p.name), Some("leaf"));
    /// let twitter = Layout::TWITTER.to_string();
    /// assert_eq!(Preset::named_in(&twitter, &Layout::TWITTER).map(|p| p.name), Some("twitter"));
    /// assert!(Preset::named_in("time=30,worker=4,seq=8,epoch=0", &Layout::new(30, 4, 8, 0)?).is_none());
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn named_in(text: &str, layout: &Layout) -> Option<&'static Preset> {
        text.split(',')
            .find_map(|part| {
                let (key, value) = part.split_once('=')?;
                (key.trim() == "preset").then(|| value.trim().trim_matches('"'))
            })
            .and_then(Preset::get)
            .or_else(|| Preset::of(layout))
    }

    /// The field names of a layout given as `text`: its preset's ([`Preset::named_in`]), else
    /// [`Labels::DEFAULT`].
    ///
    /// ```
    /// use snowflake_layout::{Labels, Layout, Preset};
    ///
    /// assert_eq!(Preset::labels_of("preset=discord", &Layout::DISCORD).sequence, "increment");
    /// assert_eq!(Preset::labels_of("time=30,worker=4,seq=8,epoch=0", &Layout::new(30, 4, 8, 0)?), Labels::DEFAULT);
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn labels_of(text: &str, layout: &Layout) -> Labels {
        Preset::named_in(text, layout).map_or(Labels::DEFAULT, |preset| preset.labels)
    }
}
