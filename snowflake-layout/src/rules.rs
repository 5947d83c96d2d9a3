//! The rules that span several keys of a layout, and its expiry against a build date: once
//! for `#[layout(...)]` (the derive, which reports every [`Issue`] at the tokens of its
//! [`Key`]) and for the text form (which reports the first).
//!
//! ```
//! use snowflake_layout::rules::{self, Given, Issue, Key, Keys, Spelling};
//!
//! let keys = Keys { time: Given::Value(0), worker: Given::Value(10), epoch: Given::Value(0), ..Keys::default() };
//! let (layout, issues) = rules::resolve(&keys, 63);
//! assert!(layout.is_none());
//! assert_eq!(issues, [Issue::ZeroWidth { key: Key::Time }, Issue::Missing { keys: vec![Key::Seq] }]);
//! assert_eq!(issues[0].key(), Some(Key::Time)); // the derive points at `0`
//! assert_eq!(issues[1].message(Spelling::Attribute), "#[layout] is missing `seq`: add `seq = 12`");
//! assert_eq!(issues[1].message(Spelling::Text), "the layout is missing `seq`: add `seq=12`");
//! ```

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use crate::civil::format_rfc3339;
use crate::error::{InvalidLayout, ParseLayoutError};
use crate::layout::{FieldOrder, Layout, TickUnit};
use crate::preset::Preset;

pub use crate::spelling::{EPOCH_EXPECTED, ORDER_EXPECTED, Phrase, Spelling, UNIT_EXPECTED};

const EMPTY_HALF: Phrase = Phrase {
    attribute: "datacenter and machine need at least 1 bit each; for one node write `worker = 0`",
    text: "datacenter and machine need at least 1 bit each; for one node write `worker=0`",
};
const NODE_TWICE: Phrase = Phrase {
    attribute: "give the node field either as `worker = N` or as `datacenter = N, machine = M`, not both",
    text: "give the node field either as `worker=N` or as `datacenter=N,machine=M`, not both",
};
const DATACENTER_ALONE: Phrase = Phrase {
    attribute: "`datacenter` needs `machine` beside it: `datacenter = 5, machine = 5`",
    text: "`datacenter` needs `machine` beside it: `datacenter=5,machine=5`",
};
const MACHINE_ALONE: Phrase = Phrase {
    attribute: "`machine` needs `datacenter` beside it: `datacenter = 5, machine = 5`",
    text: "`machine` needs `datacenter` beside it: `datacenter=5,machine=5`",
};

/// The keys of a layout, in the order messages list them.
pub const KEYS: &str = "time, worker, datacenter, machine, seq, epoch, unit, order, preset";

/// A key of `#[layout(...)]` and of the text form.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Key {
    /// `time`: the width of the time field.
    Time,
    /// `worker`: the width of the node field.
    Worker,
    /// `datacenter`: the high half of a split node field.
    Datacenter,
    /// `machine`: the low half of a split node field.
    Machine,
    /// `seq`: the width of the sequence field.
    Seq,
    /// `epoch`: a date, an RFC 3339 instant or Unix milliseconds.
    Epoch,
    /// `unit`: the tick unit.
    Unit,
    /// `order`: which of node and sequence sits higher.
    Order,
    /// `preset`: a public scheme by name.
    Preset,
}

impl Key {
    /// The key as written.
    pub const fn name(self) -> &'static str {
        match self {
            Key::Time => "time",
            Key::Worker => "worker",
            Key::Datacenter => "datacenter",
            Key::Machine => "machine",
            Key::Seq => "seq",
            Key::Epoch => "epoch",
            Key::Unit => "unit",
            Key::Order => "order",
            Key::Preset => "preset",
        }
    }

    /// The key of that name.
    ///
    /// ```
    /// use snowflake_layout::rules::Key;
    ///
    /// assert_eq!(Key::from_name("seq"), Some(Key::Seq));
    /// assert_eq!(Key::from_name("sequence"), None);
    /// ```
    pub fn from_name(name: &str) -> Option<Key> {
        Some(match name {
            "time" => Key::Time,
            "worker" => Key::Worker,
            "datacenter" => Key::Datacenter,
            "machine" => Key::Machine,
            "seq" => Key::Seq,
            "epoch" => Key::Epoch,
            "unit" => Key::Unit,
            "order" => Key::Order,
            "preset" => Key::Preset,
            _ => return None,
        })
    }

    /// Whether the value is a width in bits (never quoted).
    pub const fn is_width(self) -> bool {
        matches!(self, Key::Time | Key::Worker | Key::Datacenter | Key::Machine | Key::Seq)
    }

    /// An example of the key with a value, for a message about it being absent.
    fn example(self, spelling: Spelling) -> &'static str {
        let phrase = match self {
            Key::Time => Phrase { attribute: "`time = 41`", text: "`time=41`" },
            Key::Worker => Phrase {
                attribute: "`worker = 10` (or `datacenter = 5, machine = 5`, or `worker = 0` for a single-node type)",
                text: "`worker=10` (or `datacenter=5,machine=5`, or `worker=0` for a single-node type)",
            },
            Key::Datacenter => Phrase { attribute: "`datacenter = 5`", text: "`datacenter=5`" },
            Key::Machine => Phrase { attribute: "`machine = 5`", text: "`machine=5`" },
            Key::Seq => Phrase { attribute: "`seq = 12`", text: "`seq=12`" },
            Key::Epoch => Phrase {
                attribute: "`epoch = \"2024-01-01\"` (a date, an RFC 3339 instant or Unix milliseconds)",
                text: "`epoch=2024-01-01` (a date, an RFC 3339 instant or Unix milliseconds)",
            },
            Key::Unit => Phrase { attribute: "`unit = \"1ms\"`", text: "`unit=1ms`" },
            Key::Order => Phrase { attribute: "`order = \"time-seq-worker\"`", text: "`order=time-seq-worker`" },
            Key::Preset => Phrase { attribute: "`preset = \"twitter\"`", text: "`preset=twitter`" },
        };
        phrase.get(spelling)
    }
}

/// A key as given: absent, given with a value that was refused (and reported on its own), or
/// given with a value. A refused key is not also missing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Given<T> {
    /// Not written.
    #[default]
    Absent,
    /// Written, but its value was refused.
    Refused,
    /// Written with a usable value.
    Value(T),
}

impl<T: Copy> Given<T> {
    /// The value, when there is one.
    pub const fn value(&self) -> Option<T> {
        match self {
            Given::Value(value) => Some(*value),
            _ => None,
        }
    }
}

impl<T> Given<T> {
    /// Whether the key was written at all.
    pub const fn is_given(&self) -> bool {
        !matches!(self, Given::Absent)
    }
}

/// Every key of a layout, each value checked on its own but not yet against the others.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Keys {
    /// `time`.
    pub time: Given<u32>,
    /// `worker`.
    pub worker: Given<u32>,
    /// `datacenter`.
    pub datacenter: Given<u32>,
    /// `machine`.
    pub machine: Given<u32>,
    /// `seq`.
    pub seq: Given<u32>,
    /// `epoch`, in Unix milliseconds.
    pub epoch: Given<i64>,
    /// `unit`.
    pub unit: Given<TickUnit>,
    /// `order`.
    pub order: Given<FieldOrder>,
    /// `preset`.
    pub preset: Given<&'static Preset>,
    /// Whether every key was read: after a syntax error the keys that follow it were not, so
    /// none is reported missing.
    pub complete: bool,
}

impl Default for Keys {
    fn default() -> Keys {
        Keys {
            time: Given::Absent,
            worker: Given::Absent,
            datacenter: Given::Absent,
            machine: Given::Absent,
            seq: Given::Absent,
            epoch: Given::Absent,
            unit: Given::Absent,
            order: Given::Absent,
            preset: Given::Absent,
            complete: true,
        }
    }
}

/// A mistake that spans keys; [`Issue::key`] names the key it concerns.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Issue {
    /// Required keys that are absent (the layout as a whole).
    Missing {
        /// The absent keys, in the order time, worker, seq, epoch.
        keys: Vec<Key>,
    },
    /// `time = 0` or `seq = 0`.
    ZeroWidth {
        /// `Key::Time` or `Key::Seq`.
        key: Key,
    },
    /// `datacenter = 0` or `machine = 0`.
    EmptyNodeHalf {
        /// `Key::Datacenter` or `Key::Machine`.
        key: Key,
    },
    /// `worker` beside `datacenter`/`machine` (at `worker`).
    NodeTwice,
    /// `datacenter` without `machine`, or the reverse.
    HalfAlone {
        /// The half that was given.
        key: Key,
    },
    /// Widths that do not fit the field (the layout as a whole).
    TooWide {
        /// `time`.
        time: u32,
        /// The node field (both halves when split).
        worker: u32,
        /// The datacenter half, for a split node field.
        datacenter: Option<u32>,
        /// `seq`.
        seq: u32,
        /// 63 for an `i64` field, 64 for a `u64`.
        limit: u32,
    },
    /// A preset of 64 bits on an `i64` field (at `preset`).
    PresetNeedsU64 {
        /// The preset's name.
        preset: &'static str,
    },
    /// A key the preset's scheme fixes.
    FixedByPreset {
        /// The preset's name.
        preset: &'static str,
        /// The key.
        key: Key,
    },
}

/// Why a preset fixes a key.
fn fixed_reason(key: Key) -> &'static str {
    match key {
        Key::Unit => "the scheme fixes its tick",
        Key::Order => "the scheme fixes its field order",
        Key::Epoch => "its IDs count from one published epoch",
        _ => "the scheme fixes its widths; write the widths out instead of the preset",
    }
}

impl Issue {
    /// The key whose value the issue concerns; `None` for the layout as a whole.
    pub fn key(&self) -> Option<Key> {
        match *self {
            Issue::Missing { .. } | Issue::TooWide { .. } => None,
            Issue::ZeroWidth { key }
            | Issue::EmptyNodeHalf { key }
            | Issue::HalfAlone { key }
            | Issue::FixedByPreset { key, .. } => Some(key),
            Issue::NodeTwice => Some(Key::Worker),
            Issue::PresetNeedsU64 { .. } => Some(Key::Preset),
        }
    }

    /// The message, with keys written in `spelling`.
    pub fn message(&self, spelling: Spelling) -> String {
        match self {
            Issue::Missing { keys } => {
                let names: Vec<String> = keys.iter().map(|key| format!("`{}`", key.name())).collect();
                let examples: Vec<&str> = keys.iter().map(|key| key.example(spelling)).collect();
                let subject = match spelling {
                    Spelling::Attribute => "#[layout]",
                    Spelling::Text => "the layout",
                };
                format!("{subject} is missing {}: add {}", names.join(", "), examples.join(", "))
            }
            Issue::ZeroWidth { key: Key::Seq } => match spelling {
                Spelling::Attribute => {
                    "`seq = 0`: the sequence field needs at least 1 bit, or every tick holds one ID".to_string()
                }
                Spelling::Text => {
                    "`seq=0`: the sequence field needs at least 1 bit, or every tick holds one ID".to_string()
                }
            },
            Issue::ZeroWidth { key } => match spelling {
                Spelling::Attribute => format!("`{0} = 0`: the {0} field needs at least 1 bit", key.name()),
                Spelling::Text => format!("`{0}=0`: the {0} field needs at least 1 bit", key.name()),
            },
            Issue::EmptyNodeHalf { .. } => EMPTY_HALF.get(spelling).to_string(),
            Issue::NodeTwice => NODE_TWICE.get(spelling).to_string(),
            Issue::HalfAlone { key: Key::Datacenter } => DATACENTER_ALONE.get(spelling).to_string(),
            Issue::HalfAlone { .. } => MACHINE_ALONE.get(spelling).to_string(),
            Issue::TooWide { time, worker, datacenter, seq, limit } => {
                let (eq, sep) = match spelling {
                    Spelling::Attribute => (" = ", ", "),
                    Spelling::Text => ("=", ","),
                };
                let node = match datacenter {
                    Some(dc) => format!("datacenter{eq}{dc}{sep}machine{eq}{}", worker - dc),
                    None => format!("worker{eq}{worker}"),
                };
                let total = time + worker + seq;
                let widths = format!("time{eq}{time}{sep}{node}{sep}seq{eq}{seq}");
                let over = total.saturating_sub(*limit);
                let take = if over == 1 { "1 bit".to_string() } else { format!("{over} bits") };
                if *limit == 63 && total == 64 {
                    format!(
                        "the widths sum to 64; at most 63 fit in an `i64` beside the sign bit ({widths}): take 1 bit \
                         off, or declare the field as `u64`, which holds all 64"
                    )
                } else if *limit == 63 {
                    format!(
                        "the widths sum to {total}; at most 63 fit in an `i64` beside the sign bit ({widths}): take \
                         {take} off"
                    )
                } else {
                    format!("the widths sum to {total}; at most 64 fit in an ID ({widths}): take {take} off")
                }
            }
            Issue::PresetNeedsU64 { preset } => format!(
                "the {preset} preset uses all 64 bits; an `i64` holds 63 beside the sign bit: declare the field as `u64`"
            ),
            Issue::FixedByPreset { preset, key } => {
                format!("the {preset} preset fixes `{}`: {}", key.name(), fixed_reason(*key))
            }
        }
    }

    /// The error the text form reports for the issue (the first one it meets).
    pub(crate) fn into_parse_error(self) -> ParseLayoutError {
        match self {
            Issue::Missing { keys } => {
                let names: Vec<String> = keys.iter().map(|key| format!("`{}`", key.name())).collect();
                let examples: Vec<&str> = keys.iter().map(|key| key.example(Spelling::Text)).collect();
                ParseLayoutError::Missing { keys: names.join(", "), examples: examples.join(", ") }
            }
            Issue::ZeroWidth { key: Key::Seq } => ParseLayoutError::Invalid(InvalidLayout::ZeroSequence),
            Issue::ZeroWidth { .. } => ParseLayoutError::Invalid(InvalidLayout::ZeroTime),
            Issue::EmptyNodeHalf { .. } => ParseLayoutError::Node(EMPTY_HALF.text),
            Issue::NodeTwice => ParseLayoutError::Node(NODE_TWICE.text),
            Issue::HalfAlone { key: Key::Datacenter } => ParseLayoutError::Node(DATACENTER_ALONE.text),
            Issue::HalfAlone { .. } => ParseLayoutError::Node(MACHINE_ALONE.text),
            Issue::TooWide { time, worker, seq, .. } => {
                ParseLayoutError::Invalid(InvalidLayout::TooWide { total: time + worker + seq })
            }
            Issue::PresetNeedsU64 { .. } => ParseLayoutError::Invalid(InvalidLayout::TooWide { total: 64 }),
            Issue::FixedByPreset { preset, key } => {
                ParseLayoutError::FixedByPreset { preset, key: key.name(), reason: fixed_reason(key) }
            }
        }
    }
}

/// A layout that cannot issue IDs at the build date: [`expiry`]'s answer.
/// [`Expired::key`] names the key it concerns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Expired {
    /// An epoch after the build date.
    EpochAfterBuild {
        /// The epoch, in Unix milliseconds.
        epoch_ms: i64,
        /// `Key::Epoch`, or `Key::Preset` for a preset's own epoch.
        at: Key,
    },
    /// A time field that ran out before the build date.
    TimeRanOut {
        /// The last Unix millisecond the field holds.
        last_ms: i64,
        /// Its width.
        bits: u32,
        /// Its tick.
        unit: TickUnit,
        /// The epoch, in Unix milliseconds.
        epoch_ms: i64,
        /// `Key::Time`, or `Key::Preset` for a preset's own width.
        at: Key,
    },
    /// A preset whose own epoch ran out before the build date (at `preset`).
    PresetRanOut {
        /// The preset's name.
        preset: &'static str,
        /// The last Unix millisecond the field holds.
        last_ms: i64,
        /// The width of its time field.
        bits: u32,
    },
}

impl Expired {
    /// The key whose value is to blame: the time field, the epoch, or the preset that chose
    /// them.
    pub fn key(&self) -> Key {
        match *self {
            Expired::EpochAfterBuild { at, .. } | Expired::TimeRanOut { at, .. } => at,
            Expired::PresetRanOut { .. } => Key::Preset,
        }
    }

    /// The message, with keys written in `spelling`.
    pub fn message(&self, spelling: Spelling) -> String {
        match self {
            Expired::EpochAfterBuild { epoch_ms, .. } => format!(
                "the epoch {} lies after the build date: no ID can be issued before it; choose an epoch in the past \
                 (the build date is SOURCE_DATE_EPOCH when set, else today)",
                format_rfc3339(*epoch_ms)
            ),
            Expired::TimeRanOut { last_ms, bits, unit, epoch_ms, .. } => {
                let decode_only = match spelling {
                    Spelling::Attribute => {
                        ", or, for a type that only decodes IDs of an existing scheme, add \
                                           #[snowflake(decode_only)]"
                    }
                    Spelling::Text => "",
                };
                format!(
                    "the time field ran out on {}: {bits} bits of {} ms ticks from {} end before the build date; \
                     widen `time`, choose a later epoch or a longer `unit`{decode_only}",
                    format_rfc3339(*last_ms),
                    unit.as_millis(),
                    format_rfc3339(*epoch_ms),
                )
            }
            Expired::PresetRanOut { preset, last_ms, bits } => {
                let (epoch, decode_only) = match spelling {
                    Spelling::Attribute => (
                        "`epoch = \"2025-01-01\"`",
                        ", or, for a type that only decodes the scheme's IDs, add #[snowflake(decode_only)]",
                    ),
                    Spelling::Text => ("`epoch=2025-01-01`", ""),
                };
                format!(
                    "the {preset} preset's default epoch ran out on {}: its {bits}-bit time field no longer holds the \
                     present; add an epoch of your own, e.g. {epoch}{decode_only}",
                    format_rfc3339(*last_ms),
                )
            }
        }
    }
}

/// Checks the keys against each other and builds the layout: `bits` is 63 for a type over an
/// `i64` (whose sign bit stays 0), 64 for one over a `u64` and for the text form. Returns the
/// layout when there is no issue, and every issue in the order the derive reports them.
///
/// A key whose value was [`Given::Refused`] gives no issue here (its own was reported) and no
/// layout.
///
/// ```
/// use snowflake_layout::rules::{self, Given, Issue, Key, Keys};
/// use snowflake_layout::{Layout, Preset};
///
/// let keys = Keys { preset: Given::Value(Preset::get("discord").unwrap()), ..Keys::default() };
/// assert_eq!(rules::resolve(&keys, 64), (Some(Layout::DISCORD), vec![]));
/// assert_eq!(rules::resolve(&keys, 63).1, [Issue::PresetNeedsU64 { preset: "discord" }]);
/// ```
pub fn resolve(keys: &Keys, bits: u32) -> (Option<Layout>, Vec<Issue>) {
    let mut issues = Vec::new();
    let layout = match keys.preset {
        Given::Value(preset) => from_preset(preset, keys, bits, &mut issues),
        // A preset whose name was refused: the keys beside it are judged against no scheme.
        Given::Refused => None,
        Given::Absent => from_keys(keys, bits, &mut issues),
    };
    let layout = if issues.is_empty() { layout } else { None };
    (layout, issues)
}

/// Reports widths that do not fit in `bits`; `true` when they fit.
fn fits(issues: &mut Vec<Issue>, bits: u32, (time, worker, datacenter, seq): (u32, u32, Option<u32>, u32)) -> bool {
    if time + worker + seq <= bits {
        return true;
    }
    issues.push(Issue::TooWide { time, worker, datacenter, seq, limit: bits });
    false
}

fn from_preset(preset: &'static Preset, keys: &Keys, bits: u32, issues: &mut Vec<Issue>) -> Option<Layout> {
    let mut fixed = |key: Key| issues.push(Issue::FixedByPreset { preset: preset.name, key });
    for (key, given) in [
        (Key::Datacenter, keys.datacenter.is_given()),
        (Key::Machine, keys.machine.is_given()),
        (Key::Unit, keys.unit.is_given()),
        (Key::Order, keys.order.is_given()),
    ] {
        if given {
            fixed(key);
        }
    }
    let base = preset.layout;
    let mut widths = [base.time_bits(), base.worker_bits(), base.seq_bits()];
    for (i, (key, given)) in
        [(Key::Time, keys.time), (Key::Worker, keys.worker), (Key::Seq, keys.seq)].into_iter().enumerate()
    {
        if !given.is_given() {
            continue;
        }
        if !preset.widths_configurable {
            issues.push(Issue::FixedByPreset { preset: preset.name, key });
        } else if let Given::Value(width) = given {
            if width == 0 && key != Key::Worker {
                issues.push(Issue::ZeroWidth { key });
            }
            widths[i] = width;
        }
    }
    let mut epoch_ms = base.epoch_ms();
    match keys.epoch {
        Given::Absent => {}
        _ if !preset.epoch_configurable => issues.push(Issue::FixedByPreset { preset: preset.name, key: Key::Epoch }),
        given => epoch_ms = given.value().unwrap_or(epoch_ms),
    }
    let [time, worker, seq] = widths;
    if bits == 63 && time + worker + seq == 64 {
        issues.push(Issue::PresetNeedsU64 { preset: preset.name });
        return None;
    }
    let datacenter = base.datacenter_bits();
    if time == 0 || seq == 0 || !fits(issues, bits, (time, worker, (datacenter != 0).then_some(datacenter), seq)) {
        return None;
    }
    Layout::build(time, worker, datacenter, seq, epoch_ms, base.unit())
        .ok()
        .map(|layout| layout.with_order(base.order()))
}

fn from_keys(keys: &Keys, bits: u32, issues: &mut Vec<Issue>) -> Option<Layout> {
    let mut absent = Vec::new();
    match keys.time {
        Given::Absent => absent.push(Key::Time),
        Given::Value(0) => issues.push(Issue::ZeroWidth { key: Key::Time }),
        _ => {}
    }
    match keys.seq {
        Given::Absent => absent.push(Key::Seq),
        Given::Value(0) => issues.push(Issue::ZeroWidth { key: Key::Seq }),
        _ => {}
    }
    if !keys.epoch.is_given() {
        absent.push(Key::Epoch);
    }
    // The node field: `worker = N`, or `datacenter = N, machine = M`; (width, datacenter half).
    let (w, d, m) = (keys.worker, keys.datacenter, keys.machine);
    let node = match (w.is_given(), d.is_given(), m.is_given()) {
        (true, false, false) => w.value().map(|worker| (worker, None)),
        (false, true, true) => {
            for (key, half) in [(Key::Datacenter, d), (Key::Machine, m)] {
                if half == Given::Value(0) {
                    issues.push(Issue::EmptyNodeHalf { key });
                }
            }
            match (d.value(), m.value()) {
                (Some(dc), Some(machine)) if dc > 0 && machine > 0 => Some((dc + machine, Some(dc))),
                _ => None,
            }
        }
        (true, _, _) => {
            issues.push(Issue::NodeTwice);
            None
        }
        (false, true, false) => {
            issues.push(Issue::HalfAlone { key: Key::Datacenter });
            None
        }
        (false, false, true) => {
            issues.push(Issue::HalfAlone { key: Key::Machine });
            None
        }
        (false, false, false) => {
            absent.push(Key::Worker);
            None
        }
    };
    absent.sort();
    if keys.complete && !absent.is_empty() {
        issues.push(Issue::Missing { keys: absent });
    }
    let time = keys.time.value().filter(|&t| t > 0);
    let seq = keys.seq.value().filter(|&s| s > 0);
    let (Some(time), Some((worker, datacenter)), Some(seq)) = (time, node, seq) else { return None };
    if !fits(issues, bits, (time, worker, datacenter, seq)) {
        return None;
    }
    let epoch_ms = keys.epoch.value()?;
    let unit = keys.unit.value().unwrap_or_default();
    let layout = Layout::build(time, worker, datacenter.unwrap_or(0), seq, epoch_ms, unit).ok()?;
    Some(layout.with_order(keys.order.value().unwrap_or_default()))
}

/// The last Unix millisecond a time field of `bits` bits of `unit` ticks from `epoch_ms`
/// holds, saturated at `i64::MAX` (as [`Layout::max_timestamp_ms`], for widths that may not
/// make a layout).
pub fn last_ms(bits: u32, epoch_ms: i64, unit: TickUnit) -> i64 {
    let ticks = 1i128 << bits.min(64);
    let last = i128::from(epoch_ms) + ticks * i128::from(unit.as_millis()) - 1;
    i64::try_from(last).unwrap_or(i64::MAX)
}

/// Whether a type that generates can issue IDs at `build_ms` (Unix milliseconds): its epoch
/// has passed and its time field has not run out. `resolved` is the layout [`resolve`]
/// returned; without a preset the keys alone are checked, so the date is judged even beside
/// other mistakes.
///
/// ```
/// use snowflake_layout::rules::{self, Expired, Given, Key, Keys};
/// use snowflake_layout::Preset;
///
/// let keys = Keys { preset: Given::Value(Preset::get("baidu").unwrap()), ..Keys::default() };
/// let (layout, _) = rules::resolve(&keys, 63);
/// let issue = rules::expiry(&keys, layout.as_ref(), 1_767_225_600_000).unwrap(); // 2026-01-01
/// assert_eq!(issue.key(), Key::Preset);
/// assert!(matches!(issue, Expired::PresetRanOut { preset: "baidu", .. }));
/// ```
pub fn expiry(keys: &Keys, resolved: Option<&Layout>, build_ms: i64) -> Option<Expired> {
    let preset = keys.preset.value();
    let (time_at, bits, epoch_at, epoch_ms, unit) = match preset {
        Some(_) => {
            let layout = resolved?;
            let at = |given: bool| if given { Key::Time } else { Key::Preset };
            let epoch_at = if keys.epoch.is_given() { Key::Epoch } else { Key::Preset };
            (at(keys.time.is_given()), layout.time_bits(), epoch_at, layout.epoch_ms(), layout.unit())
        }
        None => {
            let bits = keys.time.value().filter(|&t| t > 0)?;
            let epoch_ms = keys.epoch.value()?;
            (Key::Time, bits, Key::Epoch, epoch_ms, keys.unit.value().unwrap_or_default())
        }
    };
    if epoch_ms > build_ms {
        return Some(Expired::EpochAfterBuild { epoch_ms, at: epoch_at });
    }
    let last_ms = last_ms(bits, epoch_ms, unit);
    if last_ms >= build_ms {
        return None;
    }
    match preset {
        Some(preset) if !keys.epoch.is_given() => Some(Expired::PresetRanOut { preset: preset.name, last_ms, bits }),
        _ => Some(Expired::TimeRanOut { last_ms, bits, unit, epoch_ms, at: time_at }),
    }
}

/// The build date from `SOURCE_DATE_EPOCH` (Unix seconds, for reproducible builds), in Unix
/// milliseconds; the error is the message to report.
///
/// ```
/// use snowflake_layout::rules::source_date_epoch_ms;
///
/// assert_eq!(source_date_epoch_ms("1700000000"), Ok(1_700_000_000_000));
/// assert!(source_date_epoch_ms("yesterday").is_err());
/// ```
pub fn source_date_epoch_ms(text: &str) -> Result<i64, String> {
    match text.parse::<u64>() {
        Ok(secs) if text.bytes().all(|b| b.is_ascii_digit()) => {
            Ok(i64::try_from(secs).unwrap_or(i64::MAX).saturating_mul(1000))
        }
        _ => Err(format!(
            "SOURCE_DATE_EPOCH={text:?} is not a build date: expected Unix seconds, e.g. SOURCE_DATE_EPOCH=1700000000"
        )),
    }
}
