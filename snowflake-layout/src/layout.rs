//! The bit layout of a Snowflake ID: widths, epoch and tick unit, checked in `const fn`.

// A raw ID is carried as an `i64`. For layouts of at most 63 bits every raw value is
// non-negative; a 64-bit layout (Discord, Instagram, Mastodon, on a `u64` field) carries IDs
// at or above 2^63 as their bit pattern, and every comparison and shift of a raw value here
// goes through `u64`. Times are compared with the epoch before subtracting.
#![allow(clippy::cast_possible_wrap, clippy::cast_sign_loss)]

use crate::error::{InvalidLayout, LayoutError, ParseIdError};

/// The length of one tick of the time field.
///
/// Twitter, Discord and most Snowflake services count milliseconds; Sonyflake counts
/// 10 ms, and Baidu's uid-generator counts seconds, trading precision for range.
///
/// ```
/// use snowflake_layout::TickUnit;
///
/// assert_eq!(TickUnit::TenMillis.as_millis(), 10);
/// assert_eq!(TickUnit::parse("1s"), Some(TickUnit::Seconds));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum TickUnit {
    /// One millisecond (the default).
    #[default]
    Millis,
    /// Ten milliseconds, as Sonyflake.
    TenMillis,
    /// One second, as Baidu's uid-generator.
    Seconds,
}

impl TickUnit {
    /// The length of one tick in milliseconds.
    pub const fn as_millis(self) -> i64 {
        match self {
            TickUnit::Millis => 1,
            TickUnit::TenMillis => 10,
            TickUnit::Seconds => 1000,
        }
    }

    /// Parses the spelling used in `#[layout(unit = "...")]`: `"1ms"`, `"10ms"` or `"1s"`.
    ///
    /// ```
    /// use snowflake_layout::TickUnit;
    ///
    /// assert_eq!(TickUnit::parse("10ms"), Some(TickUnit::TenMillis));
    /// assert_eq!(TickUnit::parse("2ms"), None);
    /// ```
    pub fn parse(text: &str) -> Option<TickUnit> {
        match text {
            "1ms" | "ms" => Some(TickUnit::Millis),
            "10ms" => Some(TickUnit::TenMillis),
            "1s" | "s" => Some(TickUnit::Seconds),
            _ => None,
        }
    }

    /// The spelling `parse` accepts for this unit.
    pub const fn as_str(self) -> &'static str {
        match self {
            TickUnit::Millis => "1ms",
            TickUnit::TenMillis => "10ms",
            TickUnit::Seconds => "1s",
        }
    }
}

/// Which of the node and sequence fields sits higher in the ID, below the time field.
///
/// Twitter's layout, and most others, put the node (worker) field above the sequence:
/// `| time | worker | seq |`. Sonyflake puts its sequence above the machine ID:
/// `| time | seq | machine |`, so that IDs of one tick order by sequence before machine.
///
/// ```
/// use snowflake_layout::{FieldOrder, Layout};
///
/// let sony = Layout::new(39, 16, 8, 1_409_529_600_000)?.with_order(FieldOrder::SeqAboveWorker);
/// assert_eq!((sony.seq_shift(), sony.worker_shift()), (16, 0));
/// assert_eq!(FieldOrder::parse("time-seq-worker"), Some(FieldOrder::SeqAboveWorker));
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum FieldOrder {
    /// `| time | worker | seq |` (the default, Twitter's order).
    #[default]
    WorkerAboveSeq,
    /// `| time | seq | worker |` (Sonyflake's order).
    SeqAboveWorker,
}

impl FieldOrder {
    /// Parses the spelling used in `#[layout(order = "...")]` and the text form:
    /// `"time-worker-seq"` (the default) or `"time-seq-worker"`.
    ///
    /// ```
    /// use snowflake_layout::FieldOrder;
    ///
    /// assert_eq!(FieldOrder::parse("time-worker-seq"), Some(FieldOrder::WorkerAboveSeq));
    /// assert_eq!(FieldOrder::parse("seq-time-worker"), None);
    /// ```
    pub fn parse(text: &str) -> Option<FieldOrder> {
        match text {
            "time-worker-seq" => Some(FieldOrder::WorkerAboveSeq),
            "time-seq-worker" => Some(FieldOrder::SeqAboveWorker),
            _ => None,
        }
    }

    /// The spelling `parse` accepts for this order.
    pub const fn as_str(self) -> &'static str {
        match self {
            FieldOrder::WorkerAboveSeq => "time-worker-seq",
            FieldOrder::SeqAboveWorker => "time-seq-worker",
        }
    }
}

/// The decoded fields of an ID.
///
/// ```
/// use snowflake_layout::{Layout, TickUnit};
///
/// let twitter = Layout::split(41, 5, 5, 12, 1_288_834_974_657)?;
/// let parts = twitter.decode(1_724_551_110_457_221_119)?;
/// assert_eq!(parts.timestamp_ms, 1_700_000_000_000);
/// assert_eq!((parts.datacenter, parts.machine), (Some(7), Some(13)));
/// assert_eq!((parts.worker, parts.sequence), (7 << 5 | 13, 4095));
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Parts {
    /// Unix milliseconds at the start of the ID's tick.
    pub timestamp_ms: i64,
    /// Ticks since the layout's epoch: the raw time field.
    pub ticks: u64,
    /// The node field; for a split layout, `datacenter << machine_bits | machine`.
    pub worker: u64,
    /// The datacenter half of the node field, for a layout declared with `datacenter`.
    pub datacenter: Option<u64>,
    /// The machine half of the node field, for a layout declared with `datacenter`.
    pub machine: Option<u64>,
    /// The sequence number within the tick.
    pub sequence: u64,
}

/// Where an ID's bits go: `| time | worker | seq |` in the lowest `used_bits` bits (or
/// `| time | seq | worker |`, see [`FieldOrder`]).
///
/// Built and checked in `const fn`, so the derive stores it in a `const` and every mask,
/// shift and bound below folds into a constant.
///
/// A layout uses at most 64 bits. One of 64 bits needs a `u64` field: its IDs at or above
/// 2^63 are carried as raw `i64` values with the same bit pattern (negative as `i64`), and
/// [`Layout::validate_u64`] is the way in for them. Raw values are compared as `u64`.
///
/// ```
/// use snowflake_layout::Layout;
///
/// const ORDER: Layout = match Layout::new(42, 5, 16, 1_620_172_800_000) {
///     Ok(layout) => layout,
///     Err(_) => panic!("invalid layout"),
/// };
/// assert_eq!(ORDER.time_shift(), 21);
/// assert_eq!(ORDER.worker_mask(), 0x1F << 16);
/// let id = ORDER.encode(1_700_000_000_000, 3, 9)?;
/// assert_eq!(ORDER.decode(id)?.worker, 3);
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Layout {
    time_bits: u32,
    worker_bits: u32,
    datacenter_bits: u32,
    seq_bits: u32,
    epoch_ms: i64,
    unit: TickUnit,
    order: FieldOrder,
}

/// `2^bits - 1`, for `bits <= 64`.
const fn low_mask(bits: u32) -> u64 {
    if bits == 0 { 0 } else { u64::MAX >> (64 - bits) }
}

impl Layout {
    /// A layout of `time`, `worker` and `seq` bits, counting milliseconds from `epoch_ms`
    /// (Unix milliseconds).
    ///
    /// The widths must sum to at most 64 (at most 63 for a type over an `i64`, whose sign
    /// bit stays 0: see [`Layout::fits_i64`]), `time` and `seq` must be at least 1 (`worker`
    /// may be 0 for a single-node type), and the epoch must not lie before 1970-01-01.
    ///
    /// ```
    /// use snowflake_layout::{InvalidLayout, Layout};
    ///
    /// assert!(Layout::new(41, 10, 12, 1_288_834_974_657).is_ok());
    /// assert!(!Layout::new(42, 10, 12, 1_420_070_400_000)?.fits_i64()); // Discord: a u64
    /// assert_eq!(
    ///     Layout::new(42, 7, 16, 0),
    ///     Err(InvalidLayout::TooWide { total: 65 })
    /// );
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub const fn new(time: u32, worker: u32, seq: u32, epoch_ms: i64) -> Result<Layout, InvalidLayout> {
        Layout::build(time, worker, 0, seq, epoch_ms, TickUnit::Millis)
    }

    /// A layout whose node field is split into `datacenter` and `machine` halves, as
    /// Twitter's 2010 layout (41/5/5/12).
    ///
    /// ```
    /// use snowflake_layout::Layout;
    ///
    /// let twitter = Layout::split(41, 5, 5, 12, 1_288_834_974_657)?;
    /// assert_eq!(twitter.worker_bits(), 10);
    /// assert_eq!(twitter.max_datacenter(), Some(31));
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub const fn split(
        time: u32,
        datacenter: u32,
        machine: u32,
        seq: u32,
        epoch_ms: i64,
    ) -> Result<Layout, InvalidLayout> {
        if datacenter == 0 || machine == 0 {
            return Err(InvalidLayout::EmptyNodeHalf);
        }
        Layout::build(time, datacenter.saturating_add(machine), datacenter, seq, epoch_ms, TickUnit::Millis)
    }

    /// The same layout with another tick unit.
    ///
    /// ```
    /// use snowflake_layout::{Layout, TickUnit};
    ///
    /// let sony = Layout::new(39, 16, 8, 1_409_529_600_000)?.with_unit(TickUnit::TenMillis);
    /// assert_eq!(sony.unit(), TickUnit::TenMillis);
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub const fn with_unit(mut self, unit: TickUnit) -> Layout {
        self.unit = unit;
        self
    }

    /// The same layout with another field order (Sonyflake's sequence above the machine ID).
    ///
    /// ```
    /// use snowflake_layout::{FieldOrder, Layout, TickUnit};
    ///
    /// let sony = Layout::new(39, 16, 8, 1_409_529_600_000)?
    ///     .with_unit(TickUnit::TenMillis)
    ///     .with_order(FieldOrder::SeqAboveWorker);
    /// let id = sony.encode(1_409_529_600_010, 1, 2)?;
    /// assert_eq!(id, (1 << 24) | (2 << 16) | 1);
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub const fn with_order(mut self, order: FieldOrder) -> Layout {
        self.order = order;
        self
    }

    /// The same layout with another epoch (Unix milliseconds, not before 1970), as schemes
    /// that leave the epoch to the user allow (Leaf, Sonyflake, Baidu).
    ///
    /// ```
    /// use snowflake_layout::Layout;
    ///
    /// let leaf = Layout::LEAF.with_epoch(1_577_836_800_000)?;
    /// assert_eq!(leaf.epoch_ms(), 1_577_836_800_000);
    /// assert!(Layout::LEAF.with_epoch(-1).is_err());
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub const fn with_epoch(mut self, epoch_ms: i64) -> Result<Layout, InvalidLayout> {
        if epoch_ms < 0 {
            return Err(InvalidLayout::EpochBefore1970 { epoch_ms });
        }
        self.epoch_ms = epoch_ms;
        Ok(self)
    }

    /// The general constructor the derive uses: `datacenter` is the width of the high half
    /// of the `worker` field, or 0 for an unsplit node field.
    pub const fn build(
        time: u32,
        worker: u32,
        datacenter: u32,
        seq: u32,
        epoch_ms: i64,
        unit: TickUnit,
    ) -> Result<Layout, InvalidLayout> {
        if time == 0 {
            return Err(InvalidLayout::ZeroTime);
        }
        if seq == 0 {
            return Err(InvalidLayout::ZeroSequence);
        }
        if time > 64 || worker > 64 || seq > 64 || time + worker + seq > 64 {
            return Err(InvalidLayout::TooWide { total: time.saturating_add(worker).saturating_add(seq) });
        }
        if datacenter >= worker && datacenter != 0 {
            return Err(InvalidLayout::EmptyNodeHalf);
        }
        if epoch_ms < 0 {
            return Err(InvalidLayout::EpochBefore1970 { epoch_ms });
        }
        Ok(Layout {
            time_bits: time,
            worker_bits: worker,
            datacenter_bits: datacenter,
            seq_bits: seq,
            epoch_ms,
            unit,
            order: FieldOrder::WorkerAboveSeq,
        })
    }

    /// Like [`Layout::build`], but a compile-time error (a panic in `const` evaluation)
    /// instead of a `Result`. The derive has already checked its input; this is the second
    /// line of defence for hand-written layouts.
    #[doc(hidden)]
    pub const fn build_or_panic(
        time: u32,
        worker: u32,
        datacenter: u32,
        seq: u32,
        epoch_ms: i64,
        unit: TickUnit,
    ) -> Layout {
        match Layout::build(time, worker, datacenter, seq, epoch_ms, unit) {
            Ok(layout) => layout,
            Err(InvalidLayout::ZeroTime) => panic!("the time field needs at least 1 bit"),
            Err(InvalidLayout::ZeroSequence) => panic!("the sequence field needs at least 1 bit"),
            Err(InvalidLayout::TooWide { .. }) => panic!("the widths sum to more than 64 bits"),
            Err(InvalidLayout::EmptyNodeHalf) => panic!("datacenter and machine need at least 1 bit each"),
            Err(InvalidLayout::EpochBefore1970 { .. }) => panic!("the epoch lies before 1970-01-01"),
        }
    }

    /// Width of the time field in bits.
    pub const fn time_bits(&self) -> u32 {
        self.time_bits
    }
    /// Width of the node field in bits (datacenter and machine together, when split).
    pub const fn worker_bits(&self) -> u32 {
        self.worker_bits
    }
    /// Width of the datacenter half, or 0 when the node field is not split.
    pub const fn datacenter_bits(&self) -> u32 {
        self.datacenter_bits
    }
    /// Width of the machine half (the whole node field when it is not split).
    pub const fn machine_bits(&self) -> u32 {
        self.worker_bits - self.datacenter_bits
    }
    /// Width of the sequence field in bits.
    pub const fn seq_bits(&self) -> u32 {
        self.seq_bits
    }
    /// Bits the layout uses: `time + worker + seq`, at most 64.
    pub const fn used_bits(&self) -> u32 {
        self.time_bits + self.worker_bits + self.seq_bits
    }
    /// Whether every ID of the layout is a non-negative `i64` (at most 63 bits used); a
    /// 64-bit layout needs a `u64` field.
    pub const fn fits_i64(&self) -> bool {
        self.used_bits() <= 63
    }
    /// Which of the node and sequence fields sits higher.
    pub const fn order(&self) -> FieldOrder {
        self.order
    }
    /// The epoch in Unix milliseconds.
    pub const fn epoch_ms(&self) -> i64 {
        self.epoch_ms
    }
    /// The tick unit.
    pub const fn unit(&self) -> TickUnit {
        self.unit
    }
    /// Whether the node field is split into datacenter and machine.
    pub const fn is_split(&self) -> bool {
        self.datacenter_bits != 0
    }

    /// Position of the lowest time bit.
    pub const fn time_shift(&self) -> u32 {
        self.worker_bits + self.seq_bits
    }
    /// Position of the lowest worker bit: above the sequence (0 for Sonyflake's order).
    pub const fn worker_shift(&self) -> u32 {
        match self.order {
            FieldOrder::WorkerAboveSeq => self.seq_bits,
            FieldOrder::SeqAboveWorker => 0,
        }
    }
    /// Position of the lowest sequence bit: 0, or above the worker in Sonyflake's order.
    pub const fn seq_shift(&self) -> u32 {
        match self.order {
            FieldOrder::WorkerAboveSeq => 0,
            FieldOrder::SeqAboveWorker => self.worker_bits,
        }
    }
    /// Selects the time field in place (as a bit pattern: negative for a 64-bit layout).
    pub const fn time_mask(&self) -> i64 {
        (low_mask(self.time_bits) << self.time_shift()) as i64
    }
    /// Selects the node field in place.
    pub const fn worker_mask(&self) -> i64 {
        (low_mask(self.worker_bits) << self.worker_shift()) as i64
    }
    /// Selects the sequence field in place.
    pub const fn seq_mask(&self) -> i64 {
        (low_mask(self.seq_bits) << self.seq_shift()) as i64
    }
    /// Largest node value (`2^worker_bits - 1`; 0 for a single-node layout).
    pub const fn max_worker(&self) -> u64 {
        low_mask(self.worker_bits)
    }
    /// Largest datacenter value, for a split layout.
    pub const fn max_datacenter(&self) -> Option<u64> {
        if self.is_split() { Some(low_mask(self.datacenter_bits)) } else { None }
    }
    /// Largest machine value, for a split layout.
    pub const fn max_machine(&self) -> Option<u64> {
        if self.is_split() { Some(low_mask(self.machine_bits())) } else { None }
    }
    /// Largest sequence value: `2^seq_bits - 1` IDs fit in one tick after the first.
    pub const fn max_seq(&self) -> u64 {
        low_mask(self.seq_bits)
    }
    /// Largest value of the time field, in ticks.
    pub const fn max_ticks(&self) -> u64 {
        low_mask(self.time_bits)
    }
    /// The last Unix millisecond the time field can hold (the end of its last tick),
    /// saturated at `i64::MAX`.
    pub const fn max_timestamp_ms(&self) -> i64 {
        let unit = self.unit.as_millis() as i128;
        let last = self.epoch_ms as i128 + (self.max_ticks() as i128 + 1) * unit - 1;
        if last > i64::MAX as i128 { i64::MAX } else { last as i64 }
    }
    /// The largest ID the layout can hold, as an `i64`: for a 64-bit layout, whose largest
    /// ID does not fit, `i64::MAX` (see [`Layout::max_id_u64`]).
    pub const fn max_id(&self) -> i64 {
        let max = low_mask(self.used_bits());
        if max > i64::MAX as u64 { i64::MAX } else { max as i64 }
    }
    /// The largest ID the layout can hold: `2^used_bits - 1`.
    pub const fn max_id_u64(&self) -> u64 {
        low_mask(self.used_bits())
    }

    /// The tick that holds `unix_ms`, or an error when it lies outside the time field.
    pub const fn tick_of(&self, unix_ms: i64) -> Result<u64, LayoutError> {
        if unix_ms < self.epoch_ms {
            return Err(LayoutError::BeforeEpoch { unix_ms, epoch_ms: self.epoch_ms });
        }
        let max_ms = self.max_timestamp_ms();
        if unix_ms > max_ms {
            return Err(LayoutError::TimeOverflow { unix_ms, max_ms });
        }
        // unix_ms >= epoch_ms >= 0, so the difference is non-negative and fits.
        Ok(((unix_ms - self.epoch_ms) / self.unit.as_millis()) as u64)
    }

    /// Unix milliseconds at the start of `tick`, saturated at `i64::MAX`.
    pub const fn tick_start_ms(&self, tick: u64) -> i64 {
        let ms = self.epoch_ms as i128 + tick as i128 * self.unit.as_millis() as i128;
        if ms > i64::MAX as i128 { i64::MAX } else { ms as i64 }
    }

    /// Packs fields already known to be in range. The caller guarantees
    /// `tick <= max_ticks`, `worker <= max_worker` and `seq <= max_seq`.
    #[inline(always)]
    const fn pack(&self, tick: u64, worker: u64, seq: u64) -> i64 {
        ((tick << self.time_shift()) | (worker << self.worker_shift()) | (seq << self.seq_shift())) as i64
    }

    /// Encodes Unix milliseconds, a node value and a sequence number into an ID.
    ///
    /// ```
    /// use snowflake_layout::{Layout, LayoutError};
    ///
    /// let twitter = Layout::new(41, 10, 12, 1_288_834_974_657)?;
    /// assert_eq!(twitter.encode(1_700_000_000_000, 7 << 5 | 13, 4095)?, 1_724_551_110_457_221_119);
    /// assert!(matches!(twitter.encode(0, 0, 0), Err(LayoutError::BeforeEpoch { .. })));
    /// assert!(matches!(twitter.encode(1_700_000_000_000, 1024, 0), Err(LayoutError::WorkerOutOfRange { .. })));
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub const fn encode(&self, unix_ms: i64, worker: u64, seq: u64) -> Result<i64, LayoutError> {
        let tick = match self.tick_of(unix_ms) {
            Ok(tick) => tick,
            Err(e) => return Err(e),
        };
        if worker > self.max_worker() {
            return Err(LayoutError::WorkerOutOfRange { worker, max: self.max_worker() });
        }
        if seq > self.max_seq() {
            return Err(LayoutError::SequenceOutOfRange { sequence: seq, max: self.max_seq() });
        }
        Ok(self.pack(tick, worker, seq))
    }

    /// Joins a datacenter and a machine value into the node field of a split layout.
    ///
    /// ```
    /// use snowflake_layout::Layout;
    ///
    /// let twitter = Layout::split(41, 5, 5, 12, 1_288_834_974_657)?;
    /// assert_eq!(twitter.join_node(7, 13)?, 7 << 5 | 13);
    /// assert!(twitter.join_node(32, 0).is_err());
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub const fn join_node(&self, datacenter: u64, machine: u64) -> Result<u64, LayoutError> {
        let (Some(max_dc), Some(max_machine)) = (self.max_datacenter(), self.max_machine()) else {
            return Err(LayoutError::NotSplit);
        };
        if datacenter > max_dc {
            return Err(LayoutError::DatacenterOutOfRange { datacenter, max: max_dc });
        }
        if machine > max_machine {
            return Err(LayoutError::MachineOutOfRange { machine, max: max_machine });
        }
        Ok((datacenter << self.machine_bits()) | machine)
    }

    /// Checks that `raw` is an ID this layout could have produced: not negative, and no bit
    /// set above the used widths. An ID of a 64-bit layout at or above 2^63 is not an `i64`
    /// value: it comes in through [`Layout::validate_u64`].
    ///
    /// ```
    /// use snowflake_layout::{Layout, LayoutError};
    ///
    /// let small = Layout::new(30, 4, 8, 1_600_000_000_000)?;
    /// assert_eq!(small.validate(42), Ok(42));
    /// assert!(matches!(small.validate(-1), Err(LayoutError::Negative { .. })));
    /// assert!(matches!(small.validate(1 << 42), Err(LayoutError::OutOfLayout { .. })));
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub const fn validate(&self, raw: i64) -> Result<i64, LayoutError> {
        if raw < 0 {
            return Err(LayoutError::Negative { value: raw });
        }
        self.validate_u64(raw as u64)
    }

    /// [`Layout::validate`] for an unsigned value (a `BIGINT UNSIGNED` column, a `u64` field):
    /// the raw value, with the same bit pattern.
    ///
    /// ```
    /// use snowflake_layout::{Layout, LayoutError};
    ///
    /// assert_eq!(Layout::DISCORD.validate_u64(u64::MAX), Ok(-1)); // all 64 bits: a u64 type's ID
    /// assert!(matches!(Layout::TWITTER.validate_u64(1 << 63), Err(LayoutError::OutOfLayout { .. })));
    /// ```
    pub const fn validate_u64(&self, raw: u64) -> Result<i64, LayoutError> {
        if raw > self.max_id_u64() {
            return Err(LayoutError::OutOfLayout { value: raw, used_bits: self.used_bits() });
        }
        Ok(raw as i64)
    }

    /// The time field of a valid ID, in ticks.
    #[inline]
    pub const fn ticks_of(&self, raw: i64) -> u64 {
        ((raw & self.time_mask()) as u64) >> self.time_shift()
    }
    /// Unix milliseconds at the start of a valid ID's tick.
    #[inline]
    pub const fn timestamp_ms_of(&self, raw: i64) -> i64 {
        self.tick_start_ms(self.ticks_of(raw))
    }
    /// The node field of a valid ID.
    #[inline]
    pub const fn worker_of(&self, raw: i64) -> u64 {
        ((raw & self.worker_mask()) as u64) >> self.worker_shift()
    }
    /// The sequence field of a valid ID.
    #[inline]
    pub const fn sequence_of(&self, raw: i64) -> u64 {
        ((raw & self.seq_mask()) as u64) >> self.seq_shift()
    }
    /// The datacenter half of a valid ID's node field, for a split layout.
    pub const fn datacenter_of(&self, raw: i64) -> Option<u64> {
        if self.is_split() { Some(self.worker_of(raw) >> self.machine_bits()) } else { None }
    }
    /// The machine half of a valid ID's node field, for a split layout.
    pub const fn machine_of(&self, raw: i64) -> Option<u64> {
        if self.is_split() { Some(self.worker_of(raw) & low_mask(self.machine_bits())) } else { None }
    }

    /// Splits a valid ID into its fields (no check; see [`Layout::decode`]).
    pub const fn parts_of(&self, raw: i64) -> Parts {
        Parts {
            timestamp_ms: self.timestamp_ms_of(raw),
            ticks: self.ticks_of(raw),
            worker: self.worker_of(raw),
            datacenter: self.datacenter_of(raw),
            machine: self.machine_of(raw),
            sequence: self.sequence_of(raw),
        }
    }

    /// Checks `raw` and splits it into its fields.
    pub const fn decode(&self, raw: i64) -> Result<Parts, LayoutError> {
        match self.validate(raw) {
            Ok(raw) => Ok(self.parts_of(raw)),
            Err(e) => Err(e),
        }
    }

    /// Checks an unsigned `raw` (any ID of a 64-bit layout) and splits it into its fields.
    ///
    /// ```
    /// use snowflake_layout::Layout;
    ///
    /// // Discord's documented example: 2016-04-30T11:18:25.796Z, worker 1, process 0, increment 7.
    /// let parts = Layout::DISCORD.decode_u64(175_928_847_299_117_063)?;
    /// assert_eq!(parts.timestamp_ms, 1_462_015_105_796);
    /// assert_eq!((parts.datacenter, parts.machine, parts.sequence), (Some(1), Some(0), 7));
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub const fn decode_u64(&self, raw: u64) -> Result<Parts, LayoutError> {
        match self.validate_u64(raw) {
            Ok(raw) => Ok(self.parts_of(raw)),
            Err(e) => Err(e),
        }
    }

    /// The tick holding `unix_ms`, clamped into the time field's range.
    const fn clamped_tick(&self, unix_ms: i64) -> u64 {
        match self.tick_of(unix_ms) {
            Ok(tick) => tick,
            Err(LayoutError::BeforeEpoch { .. }) => 0,
            Err(_) => self.max_ticks(),
        }
    }

    /// The smallest ID whose timestamp is `unix_ms` (worker and sequence 0), saturating at
    /// the layout's first and last tick. With [`Layout::last_at`] it bounds
    /// `WHERE id BETWEEN first AND last`.
    pub const fn first_at(&self, unix_ms: i64) -> i64 {
        self.pack(self.clamped_tick(unix_ms), 0, 0)
    }

    /// The largest ID whose timestamp is `unix_ms`, saturating as [`Layout::first_at`].
    pub const fn last_at(&self, unix_ms: i64) -> i64 {
        self.pack(self.clamped_tick(unix_ms), self.max_worker(), self.max_seq())
    }

    /// Parses decimal text as an ID of this layout: ASCII digits only (leading zeros allowed,
    /// as in zero-padded Redis members), no sign, no spaces, at most `i64::MAX` (`u64::MAX`
    /// for a 64-bit layout, whose IDs at or above 2^63 come back as their bit pattern), and
    /// no bit above the layout's widths. Hostile text gets an error, never a panic.
    ///
    /// ```
    /// use snowflake_layout::{Layout, ParseIdError};
    ///
    /// assert_eq!(Layout::TWITTER.parse_id("0042"), Ok(42));
    /// assert_eq!(Layout::TWITTER.parse_id("-1"), Err(ParseIdError::Sign { sign: '-' }));
    /// assert_eq!(Layout::TWITTER.parse_id("9223372036854775808"), Err(ParseIdError::Overflow));
    /// assert_eq!(Layout::DISCORD.parse_id("18446744073709551615"), Ok(-1)); // the u64 bit pattern
    /// ```
    #[inline]
    pub fn parse_id(&self, text: &str) -> Result<i64, ParseIdError> {
        self.parse_id_bytes(text.as_bytes())
    }

    /// [`Layout::parse_id`] on bytes (a request path, a buffer read from a socket), without
    /// first checking them as UTF-8: the same rules and errors (a byte that is not valid UTF-8
    /// is reported as `U+FFFD`). Up to 20 digits are read eight at a time, the check that each
    /// is a digit folded into the same pass; anything else (an error, leading zeros beyond
    /// 20 digits) takes the slow path, which says what is wrong.
    ///
    /// ```
    /// use snowflake_layout::{Layout, ParseIdError};
    ///
    /// assert_eq!(Layout::TWITTER.parse_id_bytes(b"1724551110457221119"), Ok(1_724_551_110_457_221_119));
    /// assert_eq!(
    ///     Layout::TWITTER.parse_id_bytes(b"17\xff"),
    ///     Err(ParseIdError::InvalidDigit { position: 2, found: char::REPLACEMENT_CHARACTER })
    /// );
    /// ```
    #[inline]
    pub fn parse_id_bytes(&self, bytes: &[u8]) -> Result<i64, ParseIdError> {
        match crate::digits::parse_u64(bytes) {
            // At most the layout's largest ID, which for a layout of at most 63 bits is at
            // most i64::MAX: the cast keeps the value (or, for 64 bits, the bit pattern).
            #[allow(clippy::cast_possible_wrap)]
            Some(value) if value <= self.max_id_u64() => Ok(value as i64),
            _ => self.parse_id_slow(bytes),
        }
    }

    /// Every rule of [`Layout::parse_id`] in order, for text the fast path did not take.
    #[cold]
    #[inline(never)]
    fn parse_id_slow(&self, bytes: &[u8]) -> Result<i64, ParseIdError> {
        match bytes.first() {
            None => return Err(ParseIdError::Empty),
            Some(&sign @ (b'+' | b'-')) => return Err(ParseIdError::Sign { sign: char::from(sign) }),
            Some(_) => {}
        }
        // A character that is not a digit is reported first, wherever it is: a number too
        // large for an i64 followed by garbage is garbage, not an overflow.
        if let Some(position) = bytes.iter().position(|byte| !byte.is_ascii_digit()) {
            return Err(ParseIdError::InvalidDigit { position, found: char_at(&bytes[position..]) });
        }
        let overflow = if self.fits_i64() { ParseIdError::Overflow } else { ParseIdError::OverflowU64 };
        let mut value: u64 = 0;
        for &byte in bytes {
            value = value.checked_mul(10).and_then(|v| v.checked_add(u64::from(byte - b'0'))).ok_or(overflow)?;
        }
        if self.fits_i64() && i64::try_from(value).is_err() {
            return Err(ParseIdError::Overflow);
        }
        Ok(self.validate_u64(value)?)
    }
}

/// The character `bytes` starts with, or `U+FFFD` where they do not start with valid UTF-8.
fn char_at(bytes: &[u8]) -> char {
    // A character is at most 4 bytes: only those are checked, however long the text.
    let head = &bytes[..bytes.len().min(4)];
    let valid = match core::str::from_utf8(head) {
        Ok(text) => text,
        Err(e) => core::str::from_utf8(&head[..e.valid_up_to()]).unwrap_or_default(),
    };
    valid.chars().next().unwrap_or(char::REPLACEMENT_CHARACTER)
}

#[cfg(test)]
mod tests {
    use super::Layout;
    use crate::ParseIdError;

    #[test]
    fn a_bad_character_is_reported_before_overflow() -> Result<(), crate::InvalidLayout> {
        let layout = Layout::new(41, 10, 12, 1_288_834_974_657)?;
        let parse = |text: &str| layout.parse_id(text);
        assert_eq!(parse("99999999999999999999x"), Err(ParseIdError::InvalidDigit { position: 20, found: 'x' }));
        assert_eq!(parse("99999999999999999999 "), Err(ParseIdError::InvalidDigit { position: 20, found: ' ' }));
        assert_eq!(parse("9223372036854775808é"), Err(ParseIdError::InvalidDigit { position: 19, found: 'é' }));
        assert_eq!(parse("1x99999999999999999999"), Err(ParseIdError::InvalidDigit { position: 1, found: 'x' }));
        // All digits: overflow, then the layout.
        assert_eq!(parse("99999999999999999999"), Err(ParseIdError::Overflow));
        assert_eq!(parse("9223372036854775808"), Err(ParseIdError::Overflow));
        assert_eq!(parse("9223372036854775807"), Ok(i64::MAX));
        assert_eq!(parse("00000000000000000000000042"), Ok(42));
        assert_eq!(Layout::DISCORD.parse_id("18446744073709551616"), Err(ParseIdError::OverflowU64));
        Ok(())
    }
}
