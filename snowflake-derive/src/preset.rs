//! The presets `#[layout(preset = "...")]` names: the same layouts as the runtime's
//! `Layout::TWITTER`, ... (a root test derives each one and compares it with
//! `Layout::preset(name)`).

use crate::attr::{Order, Unit};

pub struct Preset {
    pub name: &'static str,
    pub time: u32,
    pub worker: u32,
    /// The datacenter half of a split node field, or 0.
    pub datacenter: u32,
    pub seq: u32,
    pub epoch_ms: i64,
    pub unit: Unit,
    pub order: Order,
    /// The scheme leaves the epoch to the user.
    pub epoch_configurable: bool,
    /// The scheme leaves the widths to the user.
    pub widths_configurable: bool,
}

pub const NAMES: &str = "twitter, discord, instagram, sonyflake, mastodon, leaf, baidu";

const fn preset(name: &'static str, time: u32, worker: u32, datacenter: u32, seq: u32, epoch_ms: i64) -> Preset {
    Preset {
        name,
        time,
        worker,
        datacenter,
        seq,
        epoch_ms,
        unit: Unit::Millis,
        order: Order::WorkerAboveSeq,
        epoch_configurable: false,
        widths_configurable: false,
    }
}

pub const ALL: &[Preset] = &[
    preset("twitter", 41, 10, 5, 12, 1_288_834_974_657),
    preset("discord", 42, 10, 5, 12, 1_420_070_400_000),
    preset("instagram", 41, 13, 0, 10, 1_314_220_021_721),
    Preset {
        unit: Unit::TenMillis,
        order: Order::SeqAboveWorker,
        epoch_configurable: true,
        ..preset("sonyflake", 39, 16, 0, 8, 1_409_529_600_000)
    },
    preset("mastodon", 48, 0, 0, 16, 0),
    Preset { epoch_configurable: true, ..preset("leaf", 41, 10, 0, 12, 1_288_834_974_657) },
    Preset {
        unit: Unit::Seconds,
        epoch_configurable: true,
        widths_configurable: true,
        ..preset("baidu", 28, 22, 0, 13, 1_463_702_400_000)
    },
];

pub fn get(name: &str) -> Option<&'static Preset> {
    ALL.iter().find(|preset| preset.name == name)
}
