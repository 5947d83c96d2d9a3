//! The [`SnowflakeId`] trait that `#[derive(SnowflakeId)]` implements.

use std::time::SystemTime;

use crate::dates::{IntoUnixMs, system_time_of};
use crate::error::{GenerateError, LayoutError, ParseIdError};
use crate::generator::Generator;
use crate::layout::{Layout, Parts};
use crate::prefixed::{Decimal, PrefixedIdError};
use crate::registry::GeneratorSlot;

/// An ID's `Display`: the decimal value of its `u64` bit pattern, so a 64-bit layout's IDs
/// at or above 2^63 print as what they are. The derived `Display` and every integration that
/// writes an ID as text call it.
pub(crate) fn fmt_decimal<T: SnowflakeId>(id: &T, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
    std::fmt::Display::fmt(&id.to_raw().cast_unsigned(), f)
}

/// An ID's text form: `ord_…` for a prefixed type, else its decimal value. The derived
/// `Display` and every integration that writes an ID as text call it.
///
/// A prefixed ID is written once on the stack ([`SnowflakeId::with_text`]) and handed to the
/// formatter in one `write_str`; a width or precision (`{:>20}`) pads it as a `str`.
#[inline]
pub(crate) fn fmt_text<T: SnowflakeId>(id: &T, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
    match T::PREFIX {
        Some(_) => id.with_text(|text| write_whole(f, text)),
        None => fmt_decimal(id, f),
    }
}

/// `text` in one `write_str`, or padded as a `str` where the format asks for a width or a
/// precision.
#[inline(always)]
fn write_whole(f: &mut std::fmt::Formatter<'_>, text: &str) -> std::fmt::Result {
    if f.width().is_none() && f.precision().is_none() { f.write_str(text) } else { f.pad(text) }
}

/// A typed Snowflake ID: a newtype over `i64` or `u64` with a compile-time [`Layout`].
///
/// Implemented by `#[derive(SnowflakeId)]`, which also adds inherent methods and consts
/// (`OrderId::generate()`, `OrderId::TIME_BITS`, ...). Everything a caller uses on a
/// concrete type (generation, decoding, dates, time-range bounds) is also a method of this
/// trait, so generic code (integrations, the registry, your own repositories) can generate
/// and decode. The inherent methods need no import; the trait's come with
/// `use typed_snowflake::SnowflakeId`, the same import as the derive.
///
/// ```
/// use std::collections::BTreeMap;
/// use typed_snowflake::SnowflakeId;
///
/// #[derive(SnowflakeId, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
/// #[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
/// pub struct OrderId(i64);
///
/// #[derive(SnowflakeId, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
/// #[layout(time = 41, worker = 10, seq = 12, epoch = "2020-01-01")]
/// pub struct CustomerId(i64);
///
/// /// One repository for every ID type: rows keyed by ID, queried by time.
/// struct Repository<T: SnowflakeId + Ord, V> {
///     rows: BTreeMap<T, V>,
/// }
///
/// impl<T: SnowflakeId + Ord + Copy, V> Repository<T, V> {
///     fn insert(&mut self, value: V) -> Result<T, typed_snowflake::GenerateError> {
///         let id = T::try_generate()?;
///         self.rows.insert(id, value);
///         Ok(id)
///     }
///     /// Every row created from `since` on: `WHERE id >= first_at(since)` without a
///     /// timestamp column.
///     fn since(&self, since: std::time::SystemTime) -> impl Iterator<Item = (&T, &V)> {
///         self.rows.range(T::first_at(since)..)
///     }
/// }
///
/// let start = std::time::SystemTime::now() - std::time::Duration::from_secs(1);
/// let mut orders = Repository::<OrderId, &str> { rows: BTreeMap::new() };
/// let mut customers = Repository::<CustomerId, &str> { rows: BTreeMap::new() };
/// let order = orders.insert("2 × coffee")?;
/// customers.insert("Ada")?;
/// assert_eq!(orders.since(start).count(), 1);
/// assert!(order.timestamp() >= start - std::time::Duration::from_millis(1));
/// assert_eq!(customers.since(std::time::SystemTime::now() + std::time::Duration::from_secs(60)).count(), 0);
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait SnowflakeId: Sized + Send + Sync + 'static {
    /// The layout declared by `#[layout(...)]`.
    const LAYOUT: Layout;
    /// The type's name, as written in the source (for errors and statistics).
    const NAME: &'static str;
    /// The type's full path, `module_path!()` and name (`shop::orders::Id`): it names the
    /// type's high-water file. Unique among types declared at module level; two types of
    /// one name declared in functions of the same module share it (and then a high-water
    /// file, which holds the larger of their reservations: safe, but the second may wait).
    const PATH: &'static str;
    /// Whether the type is declared `#[snowflake(decode_only)]`: it decodes IDs (of a
    /// scheme whose time field may have run out) and never generates. Its generation
    /// methods through this trait return [`GenerateError::DecodeOnly`] (and
    /// [`SnowflakeId::generate`] panics with it); the type itself has none.
    const DECODE_ONLY: bool = false;
    /// The type's prefix, from `#[snowflake(prefix = "ord")]`: its text form is then
    /// `ord_` and 13 base32 characters (see [`crate::prefixed`]) instead of decimal digits.
    /// `None` for a type without one.
    ///
    /// ```
    /// use typed_snowflake::SnowflakeId;
    ///
    /// #[derive(SnowflakeId, Clone, Copy)]
    /// #[layout(time = 41, worker = 10, seq = 12, epoch = 1288834974657)]
    /// #[snowflake(prefix = "ord")]
    /// struct OrderId(i64);
    ///
    /// fn prefix_of<T: SnowflakeId>() -> Option<&'static str> {
    ///     T::PREFIX
    /// }
    /// assert_eq!(prefix_of::<OrderId>(), Some("ord"));
    /// ```
    const PREFIX: Option<&'static str> = None;
    /// Whether a prefixed type also reads bare decimal text (`#[snowflake(prefix = "ord",
    /// accept_decimal)]`), for a type moving from decimal strings; it always writes the
    /// prefixed form.
    const ACCEPTS_DECIMAL: bool = false;

    /// The raw value as an `i64` within the layout: non-negative for layouts of at most 63
    /// bits; a 64-bit layout's IDs at or above 2^63 keep their bits and read as negative.
    fn to_raw(&self) -> i64;

    /// Wraps a value already checked against [`SnowflakeId::LAYOUT`].
    ///
    /// Safe to call with any value (it is not `unsafe`), but an unchecked value breaks the
    /// type's promise; use [`SnowflakeId::from_raw`] unless the value came from the layout.
    #[doc(hidden)]
    fn from_raw_unchecked(raw: i64) -> Self;

    /// The per-type generator slot (a `static` in the derived code).
    #[doc(hidden)]
    fn generator_slot() -> &'static GeneratorSlot;

    /// Calls `write` with the ID's text form, written on the stack: `ord_…` for a prefixed
    /// type, else its decimal digits. What `Display` and serde write from. The derive gives a
    /// prefixed type a buffer of exactly its text's length ([`crate::prefixed::with_text`]);
    /// this default holds room for the longest prefix.
    #[doc(hidden)]
    #[inline]
    fn with_text<R>(&self, write: impl FnOnce(&str) -> R) -> R {
        match Self::PREFIX {
            Some(prefix) => write(crate::prefixed::Written::new(prefix, self.to_raw()).as_str()),
            None => write(crate::decimal::Written::new(self.to_raw().cast_unsigned()).as_str()),
        }
    }

    /// Checks `raw` against the layout and wraps it.
    fn from_raw(raw: i64) -> Result<Self, LayoutError> {
        Self::LAYOUT.validate(raw).map(Self::from_raw_unchecked)
    }

    /// Checks an unsigned value (a `BIGINT UNSIGNED` column, a `u64` from elsewhere) against
    /// the layout and wraps it; `2^63` and above are out of layout.
    ///
    /// ```
    /// use typed_snowflake::SnowflakeId;
    ///
    /// #[derive(SnowflakeId, Debug)]
    /// #[layout(time = 41, worker = 10, seq = 12, epoch = "2020-01-01")]
    /// struct EventId(i64);
    ///
    /// assert_eq!(EventId::from_u64(42)?.get(), 42);
    /// assert!(EventId::from_u64(u64::MAX).is_err());
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn from_u64(raw: u64) -> Result<Self, LayoutError> {
        Self::LAYOUT.validate_u64(raw).map(Self::from_raw_unchecked)
    }

    /// Parses decimal text (see [`Layout::parse_id`]): the form an ID is stored in (a Redis
    /// value, a decimal column), whatever its text form. A prefixed type's text form is read
    /// by its `FromStr` (and [`SnowflakeId::parse_text`]).
    fn parse_str(text: &str) -> Result<Self, ParseIdError> {
        Self::LAYOUT.parse_id(text).map(Self::from_raw_unchecked)
    }

    /// Parses the type's text form, what its `FromStr` reads, for generic code: `ord_…` for
    /// a prefixed type (with decimal text too when it says `accept_decimal`), else decimal
    /// digits (whose error comes as [`PrefixedIdError::Decimal`]).
    ///
    /// ```
    /// use typed_snowflake::{PrefixedIdError, SnowflakeId};
    ///
    /// #[derive(SnowflakeId, Clone, Copy, PartialEq)]
    /// #[layout(time = 41, worker = 10, seq = 12, epoch = 1288834974657)]
    /// #[snowflake(prefix = "ord")]
    /// struct OrderId(i64);
    ///
    /// fn read<T: SnowflakeId>(text: &str) -> Result<T, PrefixedIdError> {
    ///     T::parse_text(text)
    /// }
    /// assert_eq!(read::<OrderId>("ord_1fvpp347wxqzz")?.get(), 1_724_551_110_457_221_119);
    /// assert!(matches!(read::<OrderId>("1724551110457221119"), Err(PrefixedIdError::BareNumber { .. })));
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn parse_text(text: &str) -> Result<Self, PrefixedIdError> {
        let raw = match Self::PREFIX {
            Some(prefix) => {
                let decimal = if Self::ACCEPTS_DECIMAL { Decimal::Accept } else { Decimal::Refuse };
                crate::prefixed::parse(prefix, &Self::LAYOUT, decimal, text)?
            }
            None => Self::LAYOUT.parse_id(text).map_err(PrefixedIdError::Decimal)?,
        };
        Ok(Self::from_raw_unchecked(raw))
    }

    /// The decoded fields.
    fn to_parts(&self) -> Parts {
        Self::LAYOUT.parts_of(self.to_raw())
    }

    /// The next ID from this type's generator. Panics only where
    /// [`SnowflakeId::try_generate`] returns an error, with that error's message.
    ///
    /// ```
    /// use typed_snowflake::SnowflakeId;
    ///
    /// #[derive(SnowflakeId, Clone, Copy, Debug, PartialEq, PartialOrd)]
    /// #[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
    /// struct OrderId(i64);
    ///
    /// fn make<T: SnowflakeId>() -> T {
    ///     T::generate()
    /// }
    /// let (a, b) = (make::<OrderId>(), make::<OrderId>());
    /// assert!(a < b);
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[inline]
    #[track_caller]
    fn generate() -> Self {
        match Self::try_generate() {
            Ok(id) => id,
            Err(e) => generate_failed(Self::NAME, &e),
        }
    }

    /// The next ID from this type's generator, or why there is none (clock, worker ID,
    /// exhausted time field, high-water file, lease, a decode-only type).
    ///
    /// ```
    /// use typed_snowflake::{GenerateError, SnowflakeId};
    ///
    /// /// Baidu uid-generator's default: 28 bits of seconds from 2016-05-20 ran out in 2024.
    /// /// This type decodes such IDs and never generates.
    /// #[derive(SnowflakeId, Debug)]
    /// #[layout(time = 28, worker = 22, seq = 13, epoch = "2016-05-20", unit = "1s")]
    /// #[snowflake(decode_only)]
    /// struct OldBaiduId(i64);
    ///
    /// fn make<T: SnowflakeId>() -> Result<T, GenerateError> {
    ///     T::try_generate()
    /// }
    /// assert!(matches!(make::<OldBaiduId>(), Err(GenerateError::DecodeOnly { type_name: "OldBaiduId" })));
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[inline(always)]
    fn try_generate() -> Result<Self, GenerateError> {
        generator_of::<Self>()?.next_with(&Self::LAYOUT).map(Self::from_raw_unchecked)
    }

    /// `n` IDs in increasing order, taking a run of sequence numbers per atomic update;
    /// more than the registry's batch limit (default 100 000) is an immediate error.
    ///
    /// ```
    /// use typed_snowflake::SnowflakeId;
    ///
    /// #[derive(SnowflakeId, Clone, Copy, Debug, PartialEq, PartialOrd)]
    /// #[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
    /// struct OrderId(i64);
    ///
    /// fn batch<T: SnowflakeId + PartialOrd>(n: usize) -> Result<Vec<T>, typed_snowflake::GenerateError> {
    ///     T::generate_batch(n)
    /// }
    /// let ids = batch::<OrderId>(100)?;
    /// assert!(ids.windows(2).all(|w| w[0] < w[1]));
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn generate_batch(n: usize) -> Result<Vec<Self>, GenerateError> {
        let generator = generator_of::<Self>()?;
        generator.check_batch(n)?;
        // Grown as IDs are issued beyond the first few thousand: a limit of `usize::MAX`
        // must not allocate (or abort) up front.
        let mut out = Vec::with_capacity(n.min(crate::generator::BATCH_PREALLOC));
        generator.fill_batch(n, |raw| out.push(Self::from_raw_unchecked(raw)))?;
        Ok(out)
    }

    /// Encodes an ID from Unix milliseconds, a node value and a sequence number; a part
    /// out of range (a time before the epoch or past the layout's end, a worker or
    /// sequence too wide) is an error.
    fn from_parts(unix_ms: i64, worker: u64, seq: u64) -> Result<Self, LayoutError> {
        Self::LAYOUT.encode(unix_ms, worker, seq).map(Self::from_raw_unchecked)
    }

    /// Every field, decoded (the same as [`SnowflakeId::to_parts`]).
    fn parts(&self) -> Parts {
        self.to_parts()
    }

    /// Unix milliseconds at the start of the ID's tick.
    ///
    /// ```
    /// use typed_snowflake::SnowflakeId;
    ///
    /// #[derive(SnowflakeId, Clone, Copy, Debug)]
    /// #[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
    /// struct OrderId(i64);
    ///
    /// fn describe<T: SnowflakeId>(id: &T) -> String {
    ///     format!("{} at {} ms on worker {}, #{}", T::NAME, id.timestamp_ms(), id.worker(), id.sequence())
    /// }
    /// let id = OrderId::from_parts(1_700_000_000_000, 3, 9)?;
    /// assert_eq!(describe(&id), "OrderId at 1700000000000 ms on worker 3, #9");
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn timestamp_ms(&self) -> i64 {
        Self::LAYOUT.timestamp_ms_of(self.to_raw())
    }

    /// The instant the ID's tick starts, as a `SystemTime`.
    ///
    /// ```
    /// use std::time::{Duration, UNIX_EPOCH};
    /// use typed_snowflake::SnowflakeId;
    ///
    /// #[derive(SnowflakeId, Clone, Copy, Debug)]
    /// #[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
    /// struct OrderId(i64);
    ///
    /// let id = OrderId::from_parts(1_700_000_000_123, 3, 9)?;
    /// assert_eq!(id.timestamp(), UNIX_EPOCH + Duration::from_millis(1_700_000_000_123));
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn timestamp(&self) -> SystemTime {
        system_time_of(self.timestamp_ms())
    }

    /// The node field (datacenter and machine together, for a split layout).
    fn worker(&self) -> u64 {
        Self::LAYOUT.worker_of(self.to_raw())
    }

    /// The sequence number within the tick.
    fn sequence(&self) -> u64 {
        Self::LAYOUT.sequence_of(self.to_raw())
    }

    /// The smallest ID of the tick holding `at`: Unix milliseconds (`i64`), a
    /// `SystemTime`, or, with the features `chrono`, `time` and `jiff`, their instants (see
    /// [`IntoUnixMs`]). An instant before the epoch gives the layout's first tick, one past
    /// its end the last tick (it saturates, as bounds of a range should): the lower bound
    /// of `WHERE id BETWEEN`.
    ///
    /// ```
    /// use std::time::{Duration, SystemTime};
    /// use typed_snowflake::SnowflakeId;
    ///
    /// #[derive(SnowflakeId, Clone, Copy, Debug, PartialEq, PartialOrd)]
    /// #[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
    /// struct OrderId(i64);
    ///
    /// fn last_hour<T: SnowflakeId>() -> (T, T) {
    ///     let now = SystemTime::now();
    ///     (T::first_at(now - Duration::from_secs(3600)), T::last_at(now))
    /// }
    /// let id = OrderId::generate();
    /// let (from, to) = last_hour::<OrderId>();
    /// assert!(from <= id && id <= to);
    /// assert_eq!(OrderId::first_at(0).get(), 0); // before the epoch: the first tick
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn first_at(at: impl IntoUnixMs) -> Self {
        Self::from_raw_unchecked(Self::LAYOUT.first_at(at.into_unix_ms()))
    }

    /// The largest ID of the tick holding `at`, saturating like [`SnowflakeId::first_at`]:
    /// the upper bound of `WHERE id BETWEEN`.
    fn last_at(at: impl IntoUnixMs) -> Self {
        Self::from_raw_unchecked(Self::LAYOUT.last_at(at.into_unix_ms()))
    }

    /// The instant the ID's tick starts, as a `chrono::DateTime<Utc>` (feature `chrono`);
    /// saturated at chrono's last instant, near the year 262 143, for a layout that reaches
    /// further. The other way, `T::first_at(datetime)` and `T::last_at(datetime)`.
    ///
    /// ```
    /// use typed_snowflake::SnowflakeId;
    ///
    /// #[derive(SnowflakeId, Clone, Copy, Debug, PartialEq, PartialOrd)]
    /// #[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
    /// struct OrderId(i64);
    ///
    /// let id = OrderId::from_parts(1_700_000_000_123, 3, 9)?;
    /// let at = id.to_chrono();
    /// assert_eq!(at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true), "2023-11-14T22:13:20.123Z");
    /// assert!(OrderId::first_at(at) <= id && id <= OrderId::last_at(at));
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[cfg(feature = "chrono")]
    fn to_chrono(&self) -> chrono::DateTime<chrono::Utc> {
        crate::dates::chrono_of(self.timestamp_ms())
    }

    /// The instant the ID's tick starts, as a `time::OffsetDateTime` in UTC (feature
    /// `time`); saturated at the last instant `time` holds (the end of the year 9999
    /// without its `large-dates` feature) for a layout that reaches further. The other way,
    /// `T::first_at(datetime)` and `T::last_at(datetime)`.
    ///
    /// ```
    /// use typed_snowflake::SnowflakeId;
    ///
    /// #[derive(SnowflakeId, Clone, Copy, Debug, PartialEq, PartialOrd)]
    /// #[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
    /// struct OrderId(i64);
    ///
    /// let id = OrderId::from_parts(1_700_000_000_123, 3, 9)?;
    /// let at = id.to_offset_date_time();
    /// assert_eq!(at.unix_timestamp_nanos(), 1_700_000_000_123_000_000);
    /// assert!(OrderId::first_at(at) <= id && id <= OrderId::last_at(at));
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[cfg(feature = "time")]
    fn to_offset_date_time(&self) -> time::OffsetDateTime {
        crate::dates::offset_date_time_of(self.timestamp_ms())
    }

    /// The instant the ID's tick starts, as a `jiff::Timestamp` (feature `jiff`);
    /// saturated at jiff's last instant (9999-12-30T22:00Z) for a layout that
    /// reaches further. The other way, `T::first_at(timestamp)` and `T::last_at(timestamp)`.
    ///
    /// ```
    /// use typed_snowflake::SnowflakeId;
    ///
    /// #[derive(SnowflakeId, Clone, Copy, Debug, PartialEq, PartialOrd)]
    /// #[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
    /// struct OrderId(i64);
    ///
    /// let id = OrderId::from_parts(1_700_000_000_123, 3, 9)?;
    /// let at = id.to_jiff();
    /// assert_eq!(at.to_string(), "2023-11-14T22:13:20.123Z");
    /// assert!(OrderId::first_at(at) <= id && id <= OrderId::last_at(at));
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[cfg(feature = "jiff")]
    fn to_jiff(&self) -> jiff::Timestamp {
        crate::dates::jiff_of(self.timestamp_ms())
    }

    /// An exact, order-preserving Redis sorted-set score: the ID's top 53 used bits (see
    /// [`crate::score`]).
    fn redis_score(&self) -> f64 {
        crate::score::score_of(&Self::LAYOUT, self.to_raw())
    }

    /// The ID as a zero-padded 19-digit decimal: the sorted-set member that keeps exact ID
    /// order among equal scores.
    fn redis_member(&self) -> String {
        crate::score::member_of(self.to_raw())
    }

    /// The next ID from this type's generator, for async code (feature `tokio`): the same
    /// hot path as `T::generate()`, but where that would block the thread (a tick's
    /// sequence spent, a [`StepBack::Wait`](crate::StepBack::Wait) clock policy waiting)
    /// this awaits, so other tasks on the runtime keep running. Panics only where
    /// [`SnowflakeId::try_generate_async`] returns an error, with that error's message.
    ///
    /// ```
    /// use typed_snowflake::SnowflakeId;
    ///
    /// #[derive(SnowflakeId, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
    /// #[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
    /// struct OrderId(i64);
    ///
    /// async fn make<T: SnowflakeId>() -> T {
    ///     T::generate_async().await
    /// }
    ///
    /// let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build()?;
    /// let (a, b) = runtime.block_on(async { (make::<OrderId>().await, OrderId::generate_async().await) });
    /// assert!(a < b);
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[cfg(feature = "tokio")]
    fn generate_async() -> impl Future<Output = Self> + Send {
        async {
            match Self::try_generate_async().await {
                Ok(id) => id,
                Err(e) => generate_failed(Self::NAME, &e),
            }
        }
    }

    /// [`SnowflakeId::generate_async`], or why there is no ID (clock, worker ID, exhausted
    /// time field, high-water file, lease, a decode-only type).
    #[cfg(feature = "tokio")]
    fn try_generate_async() -> impl Future<Output = Result<Self, GenerateError>> + Send {
        async { generator_of::<Self>()?.next_with_async(&Self::LAYOUT).await.map(Self::from_raw_unchecked) }
    }

    /// The ID as a keyed public string (feature `public-id`): 11 URL-safe characters, a
    /// keyed permutation of the ID's 64 bits that hides its order, time, worker and
    /// volume from anyone without the key. See [`crate::public`] for the construction,
    /// the threat model and key rotation.
    ///
    /// ```
    /// use typed_snowflake::{PublicIdKey, SnowflakeId};
    ///
    /// #[derive(SnowflakeId, Clone, Copy, Debug, PartialEq)]
    /// #[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
    /// struct OrderId(i64);
    ///
    /// let key = PublicIdKey::from_bytes([0x5A; 32]);
    /// let id = OrderId::from_parts(1_700_000_000_000, 3, 7)?;
    /// let text = id.to_public(&key);
    /// assert_eq!(text.len(), 11);
    /// assert_eq!(OrderId::from_public(&text, &key)?, id);
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[cfg(feature = "public-id")]
    fn to_public(&self, key: &crate::public_key::PublicIdKey) -> String {
        key.encode(self.to_raw().cast_unsigned())
    }

    /// Decodes a string from [`SnowflakeId::to_public`] with the same key, and checks the
    /// result against the layout. Bad text (empty, wrong length, a character outside
    /// base64url, another version) and a value outside the layout (a wrong key, another
    /// type's ID, a tampered string) are errors, never a panic. A tampered string can
    /// still decode to some other valid ID: see [`crate::public`] on forgery.
    ///
    /// ```
    /// use typed_snowflake::{PublicIdError, PublicIdKey, SnowflakeId};
    ///
    /// #[derive(SnowflakeId, Clone, Copy, Debug, PartialEq)]
    /// #[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
    /// struct OrderId(i64);
    ///
    /// let key = PublicIdKey::from_bytes([0x5A; 32]);
    /// assert_eq!(OrderId::from_public("", &key), Err(PublicIdError::Empty));
    /// // Well-formed text decodes to some 64-bit value: an ID of the type half the time.
    /// assert!(matches!(OrderId::from_public("12345678900", &key), Ok(_) | Err(PublicIdError::NotAnId { .. })));
    /// // The last character holds 4 bits: '1' sets one that no key writes.
    /// assert_eq!(OrderId::from_public("12345678901", &key), Err(PublicIdError::NonCanonical));
    /// assert_eq!(OrderId::from_public("1234567890/", &key), Err(PublicIdError::InvalidChar { position: 10, found: '/' }));
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[cfg(feature = "public-id")]
    fn from_public(text: &str, key: &crate::public_key::PublicIdKey) -> Result<Self, crate::public_key::PublicIdError> {
        key.decode_raw(text, &Self::LAYOUT, Self::NAME).map(Self::from_raw_unchecked)
    }
}

/// The type's generator, created on first use; a decode-only type has none. Every way of
/// generating (blocking, batch, async, the start-up check) goes through here.
#[inline(always)]
pub(crate) fn generator_of<T: SnowflakeId>() -> Result<&'static Generator, GenerateError> {
    if T::DECODE_ONLY {
        return Err(GenerateError::DecodeOnly { type_name: T::NAME });
    }
    T::generator_slot().get_or_init(T::LAYOUT, T::NAME, T::PATH)
}

#[cold]
#[inline(never)]
#[track_caller]
pub(crate) fn generate_failed(name: &str, error: &GenerateError) -> ! {
    // The whole chain of causes, each once, so a panic log says why (an I/O error's kind, say).
    panic!("{name}::generate() failed: {}", crate::error::Chain(error))
}
