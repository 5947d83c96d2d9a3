//! Redis: IDs as exact arguments and replies, and [`Timeline`], a sorted set of IDs paged by
//! time without losing or repeating an entry.
//!
//! With the `redis` feature, every derived type implements `ToRedisArgs` (the exact decimal
//! value, one argument) and `FromRedisValue`. Decoding is strict: a reply that is not an ID
//! of the type — negative, non-numeric, out of layout, a double (even `5.0`), an array, a
//! status, or nil for a non-`Option` — is a conversion error, never a wrong ID. (`i64`'s
//! own `FromRedisValue` truncates a double; an ID never goes through it.)
//!
//! A sorted-set score is an IEEE-754 double, exact only up to 2^53, so a 63-bit ID cannot
//! be its own score: `215857550229364736`, `…737` and `…739` all become one score. The
//! derived `id.redis_score()` is the ID's top 53 used bits instead (see [`crate::score`]):
//! exact, order-preserving, one score range per tick. IDs that share a score differ only in
//! their lowest bits; stored under `id.redis_member()`, a zero-padded 19-digit decimal,
//! they stay in exact ID order because Redis orders equal scores by member bytes.
//! [`Timeline`] writes entries that way and pages through them with an exact cursor.
//!
//! ```no_run
//! use typed_snowflake::SnowflakeId;
//! use typed_snowflake::timeline::Timeline;
//!
//! #[derive(SnowflakeId, Clone, Copy, Debug, PartialEq)]
//! #[layout(time = 41, worker = 10, seq = 12, epoch = 1288834974657)]
//! pub struct MessageId(i64);
//!
//! let client = redis::Client::open("redis://127.0.0.1:6379")?;
//! let mut conn = client.get_connection()?;
//! let id = MessageId::from_parts(1_700_000_000_000, 3, 0)?;
//!
//! // As a plain value: the exact decimal, and back through a checked decode.
//! redis::cmd("SET").arg("last-message").arg(id).query::<()>(&mut conn)?;
//! let back: MessageId = redis::cmd("GET").arg("last-message").query(&mut conn)?;
//! assert_eq!(back, id);
//!
//! // As a timeline entry, paged by time.
//! let timeline = Timeline::<MessageId>::new("room:7:messages");
//! timeline.add(&mut conn, &id)?;
//! let mut after = None;
//! loop {
//!     let page = timeline.page(&mut conn, 1_700_000_000_000, 1_700_000_060_000, after.as_ref(), 100)?;
//!     let Some(last) = page.last() else { break };
//!     after = Some(*last);
//!     // ... use the page
//! }
//! Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#[cfg(feature = "redis")]
pub use imp::{PageQuery, Timeline};

#[cfg(feature = "redis")]
pub(crate) use imp::support;

#[cfg(feature = "redis")]
mod imp {
    use core::fmt;
    use core::marker::PhantomData;

    use ::redis::{Cmd, ConnectionLike, ErrorKind, ParsingError, Pipeline, RedisResult, Value};

    use crate::SnowflakeId;
    use crate::layout::Layout;
    use crate::score::{member_of, score_shift};

    /// What the derived impls call.
    pub mod support {
        use ::redis::{ParsingError, RedisWrite, Value};

        use crate::SnowflakeId;

        /// `ToRedisArgs::write_redis_args`: the exact decimal value as one argument.
        #[inline]
        pub fn write_arg<T: SnowflakeId, W: ?Sized + RedisWrite>(id: &T, out: &mut W) {
            out.write_arg_fmt(id.to_raw().cast_unsigned());
        }

        /// `FromRedisValue`: an integer reply, or a bulk, simple or verbatim string of decimal
        /// digits (leading zeros allowed, as in members), checked against the layout.
        pub fn from_value<T: SnowflakeId>(value: &Value) -> Result<T, ParsingError> {
            match value {
                Value::Int(raw) => T::from_raw(*raw).map_err(|e| refuse::<T>(&format!("integer {raw}"), &e)),
                Value::BulkString(bytes) => match core::str::from_utf8(bytes) {
                    Ok(text) => from_text(text),
                    Err(_) => Err(refuse::<T>(&format!("{} bytes", bytes.len()), &"not UTF-8 text")),
                },
                Value::SimpleString(text) => from_text(text),
                Value::VerbatimString { text, .. } => from_text(text),
                Value::Attribute { data, .. } => from_value(data),
                Value::Nil => Err(refuse::<T>(&"nil", &"a missing value; decode an Option to allow it")),
                Value::Double(d) => Err(refuse::<T>(&format!("double {d}"), &"a double is not an exact integer")),
                Value::Array(items) | Value::Set(items) => {
                    Err(refuse::<T>(&format!("an array of {}", items.len()), &"one ID expected"))
                }
                Value::Map(items) => Err(refuse::<T>(&format!("a map of {}", items.len()), &"one ID expected")),
                Value::Okay => Err(refuse::<T>(&"status OK", &"not a number")),
                Value::Boolean(b) => Err(refuse::<T>(&format!("boolean {b}"), &"not a number")),
                Value::BigNumber(_) => Err(refuse::<T>(&"a big number", &"beyond i64 by definition")),
                Value::ServerError(e) => Err(refuse::<T>(&format!("error {:?}", e.code()), &"not an ID")),
                Value::Push { kind, .. } => Err(refuse::<T>(&format!("push message {kind:?}"), &"not an ID")),
                _ => Err(refuse::<T>(&"a reply of an unknown type", &"not an ID")),
            }
        }

        fn from_text<T: SnowflakeId>(text: &str) -> Result<T, ParsingError> {
            T::parse_str(text).map_err(|e| refuse::<T>(&format!("{:?}", shorten(text)), &e))
        }

        /// At most 40 characters of a reply, for an error message.
        pub(crate) fn shorten(text: &str) -> String {
            match text.char_indices().nth(40) {
                Some((cut, _)) => format!("{}…", &text[..cut]),
                None => text.to_owned(),
            }
        }

        pub(crate) fn refuse<T: SnowflakeId>(
            what: &dyn core::fmt::Display,
            why: &dyn core::fmt::Display,
        ) -> ParsingError {
            ParsingError::from(format!(
                "Redis replied {what}, which is not {} {}: {why}",
                crate::prefixed::article(T::NAME),
                T::NAME
            ))
        }
    }

    /// The derived impls: `ToRedisArgs` and `ToSingleRedisArg` write the exact decimal,
    /// `FromRedisValue` goes through [`support::from_value`].
    #[doc(hidden)]
    #[macro_export]
    macro_rules! __impl_redis {
        ($ty:ty) => {
            #[automatically_derived]
            impl $crate::__private::redis::ToRedisArgs for $ty {
                #[inline]
                fn write_redis_args<W>(&self, out: &mut W)
                where
                    W: ?::core::marker::Sized + $crate::__private::redis::RedisWrite,
                {
                    $crate::__private::redis_write_arg(self, out)
                }

                #[inline]
                fn describe_numeric_behavior(&self) -> $crate::__private::redis::NumericBehavior {
                    $crate::__private::redis::NumericBehavior::NumberIsInteger
                }
            }

            #[automatically_derived]
            impl $crate::__private::redis::ToSingleRedisArg for $ty {}

            #[automatically_derived]
            impl $crate::__private::redis::FromRedisValue for $ty {
                #[inline]
                fn from_redis_value_ref(
                    value: &$crate::__private::redis::Value,
                ) -> ::core::result::Result<Self, $crate::__private::redis::ParsingError> {
                    $crate::__private::redis_from_value(value)
                }

                #[inline]
                fn from_redis_value(
                    value: $crate::__private::redis::Value,
                ) -> ::core::result::Result<Self, $crate::__private::redis::ParsingError> {
                    $crate::__private::redis_from_value(&value)
                }
            }
        };
    }

    /// A sorted set of IDs ordered by time: each entry is `(id.redis_score(),
    /// id.redis_member())`, so the set's order (score, then member bytes) is exact ID order
    /// even where a 63-bit layout makes up to 1024 neighbouring IDs share a score.
    ///
    /// [`Timeline::page`] pages through a time range with the last ID of the previous page
    /// as an exclusive cursor. The cursor is an ID, not an offset or a score, so entries that
    /// share a score are never lost or repeated at a page boundary, and entries added or
    /// removed elsewhere in the set do not shift the pages.
    ///
    /// Each page is one round trip. A page that starts at the first ID of a score (the first
    /// page of a range, or a cursor at the end of a run of equal scores) is one
    /// `ZRANGEBYSCORE`. A page that starts inside a run, after a cursor that is stored, is a
    /// three-line Lua script (`ZRANK` of the cursor, `ZCOUNT` below its score, then
    /// `ZRANGEBYSCORE ... LIMIT offset limit`), so the run's entries before the cursor are
    /// skipped on the server. When the cursor is not stored, or the server refuses scripts,
    /// the page is two `ZRANGEBYSCORE`s in one `MULTI` (the cursor's score, then the scores
    /// above), and the run's entries at or before the cursor are read and dropped: at most
    /// `2^(used_bits - 53) - 1` of them (1023 for a 63-bit layout, none for layouts of at
    /// most 53 bits). Every path is exact; they differ only in what travels.
    ///
    /// Works for every layout, including those whose time field is wider than 53 bits
    /// (which have no `score_at`): bounds are applied to exact IDs, not to scores.
    ///
    /// Every entry read back is checked: a member that is not a 19-digit ID of the type, or a
    /// score that is not that ID's `redis_score()`, fails the page with an error instead of
    /// silently mis-ordering it (a key written with raw IDs as scores is refused).
    ///
    /// ```no_run
    /// use typed_snowflake::SnowflakeId;
    /// use typed_snowflake::timeline::Timeline;
    ///
    /// #[derive(SnowflakeId, Clone, Copy, Debug, PartialEq)]
    /// #[layout(time = 41, worker = 10, seq = 12, epoch = 1288834974657)]
    /// pub struct MessageId(i64);
    ///
    /// let mut conn = redis::Client::open("redis://127.0.0.1:6379")?.get_connection()?;
    /// let timeline = Timeline::<MessageId>::new("room:7:messages");
    /// let ids: Vec<MessageId> = (0..10).map(|seq| MessageId::from_parts(1_700_000_000_000, 3, seq)).collect::<Result<_, _>>()?;
    /// timeline.add_all(&mut conn, &ids)?;
    ///
    /// let first = timeline.page(&mut conn, 1_700_000_000_000, 1_700_000_000_001, None, 4)?;
    /// let next = timeline.page(&mut conn, 1_700_000_000_000, 1_700_000_000_001, first.last(), 4)?;
    /// assert_eq!(first, ids[..4]);
    /// assert_eq!(next, ids[4..8]);
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub struct Timeline<T> {
        key: String,
        _id: PhantomData<fn() -> T>,
    }

    impl<T> Clone for Timeline<T> {
        fn clone(&self) -> Self {
            Timeline { key: self.key.clone(), _id: PhantomData }
        }
    }

    impl<T: SnowflakeId> fmt::Debug for Timeline<T> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.debug_struct("Timeline").field("id", &T::NAME).field("key", &self.key).finish()
        }
    }

    /// IDs per `ZADD` in [`Timeline::add_all`].
    const ADD_CHUNK: usize = 4096;

    /// The integer score of a valid ID, as sent: never through an `f64` on the wire.
    ///
    /// Raw values are taken as `u64` here and below: a 64-bit layout's IDs at or above 2^63
    /// are carried as their bit pattern, and order as `u64`.
    fn score_int(layout: &Layout, raw: i64) -> i64 {
        // Below 2^53 after the shift.
        (raw.cast_unsigned() >> score_shift(layout)).cast_signed()
    }

    impl<T: SnowflakeId> Timeline<T> {
        /// A timeline stored in the sorted set at `key`.
        pub fn new(key: impl Into<String>) -> Self {
            Timeline { key: key.into(), _id: PhantomData }
        }

        /// The sorted set's key.
        pub fn key(&self) -> &str {
            &self.key
        }

        /// `ZADD key score member` for each ID, without sending it: for pipelines,
        /// transactions and async connections. Empty `ids` gives an invalid command; skip it.
        ///
        /// ```
        /// use typed_snowflake::SnowflakeId;
        /// use typed_snowflake::timeline::Timeline;
        ///
        /// #[derive(SnowflakeId, Clone, Copy, Debug, PartialEq)]
        /// #[layout(time = 41, worker = 10, seq = 12, epoch = 1288834974657)]
        /// pub struct MessageId(i64);
        ///
        /// let id = MessageId::try_from(215_857_550_229_364_737_i64)?;
        /// let cmd = Timeline::<MessageId>::new("t").add_cmd(&[id]);
        /// let args: Vec<&[u8]> = cmd.args_iter().filter_map(|a| match a {
        ///     redis::Arg::Simple(bytes) => Some(bytes),
        ///     _ => None,
        /// }).collect();
        /// assert_eq!(args, [&b"ZADD"[..], b"t", b"210798388895864", b"0215857550229364737"]);
        /// Ok::<(), Box<dyn std::error::Error>>(())
        /// ```
        pub fn add_cmd(&self, ids: &[T]) -> Cmd {
            let mut cmd = ::redis::cmd("ZADD");
            cmd.arg(&self.key);
            for id in ids {
                let raw = id.to_raw();
                cmd.arg(score_int(&T::LAYOUT, raw)).arg(member_of(raw));
            }
            cmd
        }

        /// Adds one ID; `true` when it was not there yet.
        pub fn add<C: ConnectionLike>(&self, conn: &mut C, id: &T) -> RedisResult<bool> {
            let added: i64 = self.add_cmd(core::slice::from_ref(id)).query(conn)?;
            Ok(added == 1)
        }

        /// Adds IDs, in `ZADD`s of up to 4096; returns how many were not there yet.
        pub fn add_all<C: ConnectionLike>(&self, conn: &mut C, ids: &[T]) -> RedisResult<u64> {
            let mut added = 0;
            for chunk in ids.chunks(ADD_CHUNK) {
                added += self.add_cmd(chunk).query::<u64>(conn)?;
            }
            Ok(added)
        }

        /// Removes one ID; `true` when it was there.
        pub fn remove<C: ConnectionLike>(&self, conn: &mut C, id: &T) -> RedisResult<bool> {
            let removed: i64 = ::redis::cmd("ZREM").arg(&self.key).arg(member_of(id.to_raw())).query(conn)?;
            Ok(removed == 1)
        }

        /// Up to `limit` IDs, in ID order, from the tick holding `from_ms` up to, not
        /// including, the tick holding `until_ms` (with millisecond ticks: timestamps in
        /// `[from_ms, until_ms)`), and greater than `after` when given.
        ///
        /// Pass the last ID of a page as `after` for the next one; an empty page is the end.
        /// Times before the epoch clamp to it; an `until_ms` past the layout's last
        /// tick includes that tick. See [`Timeline`] for the commands sent; an error from
        /// Redis (a key of another type, a refused command) or an entry not written by
        /// [`Timeline::add`] is an `Err`.
        pub fn page<C: ConnectionLike>(
            &self,
            conn: &mut C,
            from_ms: i64,
            until_ms: i64,
            after: Option<&T>,
            limit: usize,
        ) -> RedisResult<Vec<T>> {
            let query = self.page_query(from_ms, until_ms, after, limit);
            if query.is_empty() {
                return Ok(Vec::new());
            }
            if let Some(script) = query.cursor_script(&self.key) {
                match script.query::<Value>(conn) {
                    // The cursor is not stored: the script cannot rank it.
                    Ok(Value::Nil) => {}
                    Ok(reply) => return query.decode(Value::Array(vec![reply])),
                    // Scripting refused (ACL, disabled, unknown command): the plain commands.
                    Err(e) if matches!(e.kind(), ErrorKind::Server(_) | ErrorKind::Extension) => {}
                    Err(e) => return Err(e),
                }
            }
            let reply: Value = query.pipeline().query(conn)?;
            query.decode(reply)
        }

        /// The query [`Timeline::page`] sends, without sending it: for async connections.
        /// Send [`PageQuery::pipeline`] (unless [`PageQuery::is_empty`]) and pass the reply
        /// to [`PageQuery::decode`].
        pub fn page_query(&self, from_ms: i64, until_ms: i64, after: Option<&T>, limit: usize) -> PageQuery<T> {
            let layout = T::LAYOUT;
            // The range as exact IDs: [lo, hi), hi = None for "no upper bound".
            let lo = if from_ms > layout.max_timestamp_ms() {
                None
            } else {
                let first = layout.first_at(from_ms).cast_unsigned();
                match after.map(|a| a.to_raw().cast_unsigned().checked_add(1)) {
                    None => Some(first),
                    Some(Some(next)) => Some(first.max(next)),
                    Some(None) => None,
                }
            };
            let hi = (until_ms <= layout.max_timestamp_ms()).then(|| layout.first_at(until_ms).cast_unsigned());
            let range = match (lo, hi) {
                (Some(lo), Some(hi)) if lo < hi && limit > 0 => Some((lo, Some(hi))),
                (Some(lo), None) if limit > 0 => Some((lo, None)),
                _ => None,
            };

            let Some((lo, hi)) = range else {
                return PageQuery { pipe: ::redis::pipe(), range: None, limit: 0, cursor: None, _id: PhantomData };
            };
            let score = score_int(&layout, lo.cast_signed());
            let max = match hi {
                Some(hi) => score_int(&layout, (hi - 1).cast_signed()).to_string(),
                None => "+inf".to_owned(),
            };
            let limit_arg = u64::try_from(limit).unwrap_or(u64::MAX).min(i64::MAX.cast_unsigned());
            // Entries of lo's score below lo are IDs in [score << shift, lo): at most `skip`.
            let skip = lo - (score.cast_unsigned() << score_shift(&layout));
            let mut pipe = ::redis::pipe();
            if skip == 0 {
                // lo starts its score (always so for a tick's first ID): one range from there.
                pipe.cmd("ZRANGEBYSCORE").arg(&self.key).arg(score).arg(&max);
                pipe.arg("WITHSCORES").arg("LIMIT").arg(0).arg(limit_arg);
            } else {
                // lo's own score first, where equal scores below lo are stepped over: only
                // the entries that exist there, not a bound on how many could. Then the
                // scores above it. One MULTI, so both read one state of the set.
                pipe.atomic();
                pipe.cmd("ZRANGEBYSCORE").arg(&self.key).arg(score).arg(score);
                // Redis takes a LIMIT count up to i64::MAX: `limit + skip` is clamped there.
                let count = limit_arg.saturating_add(skip).min(i64::MAX.cast_unsigned());
                pipe.arg("WITHSCORES").arg("LIMIT").arg(0).arg(count);
                pipe.cmd("ZRANGEBYSCORE").arg(&self.key).arg(format!("({score}")).arg(&max);
                pipe.arg("WITHSCORES").arg("LIMIT").arg(0).arg(limit_arg);
            }
            // Inside a run, right after a cursor: `page` can rank the cursor server-side.
            let cursor = after
                .filter(|a| skip > 0 && a.to_raw().cast_unsigned().checked_add(1) == Some(lo))
                .map(|_| CursorRange { member: member_of((lo - 1).cast_signed()), min: score, max, count: limit_arg });
            PageQuery { pipe, range: Some((lo, hi)), limit, cursor, _id: PhantomData }
        }
    }

    /// Ranks the cursor (`ARGV[1]`) and returns the `ARGV[4]` entries after it from score
    /// `ARGV[2]` up to `ARGV[3]`. The cursor's score must be `ARGV[2]`, so the entries of
    /// that score at or before it are `rank + 1 - below`; nil when the cursor is not stored
    /// or stored with another score (the fallback then reads, and refuses, that entry).
    const AFTER_CURSOR: &str = "\
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score or tonumber(score) ~= tonumber(ARGV[2]) then return false end
local rank = redis.call('ZRANK', KEYS[1], ARGV[1])
local below = redis.call('ZCOUNT', KEYS[1], '-inf', '(' .. ARGV[2])
return redis.call('ZRANGEBYSCORE', KEYS[1], ARGV[2], ARGV[3], 'WITHSCORES', 'LIMIT', rank + 1 - below, ARGV[4])";

    /// What [`AFTER_CURSOR`] needs.
    struct CursorRange {
        member: String,
        min: i64,
        max: String,
        count: u64,
    }

    /// One page of a [`Timeline`], as a pipeline to send and a decoder for its reply: what
    /// [`Timeline::page`] does, for connections it does not take, such as redis-rs's async
    /// ones (`query.pipeline().query_async(&mut conn).await?` in place of `query` below).
    /// It always takes the script-free path, so a page that starts inside a run of equal
    /// scores reads the run's entries before the cursor too (see [`Timeline`]).
    ///
    /// ```no_run
    /// use typed_snowflake::SnowflakeId;
    /// use typed_snowflake::timeline::Timeline;
    ///
    /// #[derive(SnowflakeId, Clone, Copy, Debug, PartialEq)]
    /// #[layout(time = 41, worker = 10, seq = 12, epoch = 1288834974657)]
    /// pub struct MessageId(i64);
    ///
    /// let mut conn = redis::Client::open("redis://127.0.0.1:6379")?.get_connection()?;
    /// let timeline = Timeline::<MessageId>::new("room:7:messages");
    /// let query = timeline.page_query(1_700_000_000_000, 1_700_000_060_000, None, 100);
    /// let page = if query.is_empty() {
    ///     Vec::new()
    /// } else {
    ///     query.decode(query.pipeline().query(&mut conn)?)?
    /// };
    /// assert!(page.len() <= 100);
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub struct PageQuery<T> {
        pipe: Pipeline,
        range: Option<(u64, Option<u64>)>,
        limit: usize,
        cursor: Option<CursorRange>,
        _id: PhantomData<fn() -> T>,
    }

    impl<T: SnowflakeId> fmt::Debug for PageQuery<T> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.debug_struct("PageQuery")
                .field("id", &T::NAME)
                .field("range", &self.range)
                .field("limit", &self.limit)
                .finish_non_exhaustive()
        }
    }

    impl<T: SnowflakeId> PageQuery<T> {
        /// What to send: one `ZRANGEBYSCORE ... WITHSCORES LIMIT 0 n`, or two in a `MULTI`
        /// when the page starts inside a run of equal scores. Empty when
        /// [`PageQuery::is_empty`].
        pub fn pipeline(&self) -> &Pipeline {
            &self.pipe
        }

        /// The `EVAL` that reads the page without stepping over the cursor's equal-score
        /// neighbours, when the page starts right after a cursor inside a run of them.
        fn cursor_script(&self, key: &str) -> Option<Cmd> {
            let c = self.cursor.as_ref()?;
            let mut cmd = ::redis::cmd("EVAL");
            cmd.arg(AFTER_CURSOR).arg(1).arg(key).arg(&c.member).arg(c.min).arg(&c.max).arg(c.count);
            Some(cmd)
        }

        /// Whether the page is empty without asking Redis (an empty range, or `limit` 0).
        pub fn is_empty(&self) -> bool {
            self.range.is_none()
        }

        /// The page, from the reply to [`PageQuery::pipeline`]: entries checked, those at or
        /// before the cursor and past the range dropped, at most `limit` kept.
        pub fn decode(&self, reply: Value) -> RedisResult<Vec<T>> {
            let Some((lo, hi)) = self.range else { return Ok(Vec::new()) };
            let Value::Array(replies) = reply else {
                return Err(bad_entry::<T>(format!("expected an array of replies, got {reply:?}")).into());
            };
            let mut out = Vec::with_capacity(self.limit.min(1024));
            let mut visit = |member: &Value, score: &Value| -> Result<bool, ParsingError> {
                let id = checked_entry::<T>(member, score)?;
                let raw = id.to_raw().cast_unsigned();
                if raw < lo {
                    return Ok(true);
                }
                if hi.is_some_and(|hi| raw >= hi) {
                    return Ok(false);
                }
                out.push(id);
                Ok(out.len() < self.limit)
            };
            // The replies are consecutive stretches of the set, in order.
            for reply in &replies {
                if !visit_entries::<T>(reply, &mut visit)? {
                    break;
                }
            }
            Ok(out)
        }
    }

    /// Calls `visit(member, score)` for each entry of one `WITHSCORES` reply while it
    /// returns `true`; `false` when it stopped early.
    fn visit_entries<T: SnowflakeId>(
        reply: &Value,
        visit: &mut impl FnMut(&Value, &Value) -> Result<bool, ParsingError>,
    ) -> Result<bool, ParsingError> {
        let Value::Array(items) = reply else {
            return Err(bad_entry::<T>(format!("expected a WITHSCORES array, got {reply:?}")));
        };
        if matches!(items.first(), Some(Value::Array(_))) {
            // RESP3: [[member, score], ...]
            for item in items {
                let pair = match item {
                    Value::Array(pair) => pair.as_slice(),
                    other => return Err(bad_entry::<T>(format!("expected [member, score], got {other:?}"))),
                };
                let [member, score] = pair else {
                    return Err(bad_entry::<T>(format!("expected [member, score], got {} items", pair.len())));
                };
                if !visit(member, score)? {
                    return Ok(false);
                }
            }
        } else {
            // RESP2: [member, score, member, score, ...]
            if items.len() % 2 != 0 {
                return Err(bad_entry::<T>(format!("odd WITHSCORES reply of {} items", items.len())));
            }
            for pair in items.chunks_exact(2) {
                if !visit(&pair[0], &pair[1])? {
                    return Ok(false);
                }
            }
        }
        Ok(true)
    }

    fn bad_entry<T: SnowflakeId>(detail: String) -> ParsingError {
        ParsingError::from(format!("timeline of {}: {detail}", T::NAME))
    }

    /// A member written by [`Timeline::add`] (exactly 19 digits, an ID of `T`) whose score is
    /// that ID's score.
    fn checked_entry<T: SnowflakeId>(member: &Value, score: &Value) -> Result<T, ParsingError> {
        let text = match member {
            Value::BulkString(bytes) => core::str::from_utf8(bytes).ok(),
            Value::SimpleString(text) => Some(text.as_str()),
            _ => None,
        };
        let Some(text) = text.filter(|t| t.len() == 19) else {
            return Err(bad_entry::<T>(format!(
                "member {member:?} is not a 19-digit ID; the key holds entries not written by Timeline::add"
            )));
        };
        let id = T::parse_str(text)
            .map_err(|e| bad_entry::<T>(format!("member {:?} is not an ID: {e}", support::shorten(text))))?;
        let got = match score {
            Value::Double(d) => Some(*d),
            Value::BulkString(bytes) => core::str::from_utf8(bytes).ok().and_then(|s| s.parse::<f64>().ok()),
            Value::SimpleString(s) => s.parse::<f64>().ok(),
            _ => None,
        };
        let want = score_int(&T::LAYOUT, id.to_raw());
        // Both sides are integers below 2^53, so the comparison in f64 is exact.
        if got != Some(want as f64) {
            return Err(bad_entry::<T>(format!(
                "member {text} has score {score:?}, not its redis_score {want}; \
                 the key holds entries not written by Timeline::add"
            )));
        }
        Ok(id)
    }
}

#[cfg(not(feature = "redis"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __impl_redis {
    ($ty:ty) => {};
}
