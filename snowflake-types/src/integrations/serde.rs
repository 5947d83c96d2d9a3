//! Serde support: IDs as decimal strings in human-readable formats, plain integers in
//! binary ones, and `#[serde(with = ...)]` adapters for APIs that want something else.
//!
//! # Why a string
//!
//! JavaScript reads every JSON number as an IEEE-754 double, which holds integers exactly
//! only up to 2^53 (9007199254740992). A Snowflake ID uses up to 63 bits, so a browser that
//! receives `1724551110457221119` as a number silently holds `1724551110457221120` instead
//! (and prints it as `1724551110457221000`): another ID, or none. Written as a string,
//! `"1724551110457221119"`, it survives any JSON parser. So every derived type serializes
//! as a string of decimal digits wherever the format is human-readable
//! ([`is_human_readable`](::serde::Serializer::is_human_readable): JSON, YAML, TOML...), and
//! as a plain `i64` in binary formats (postcard, bincode, MessagePack...), where nothing is
//! lost and the integer is smaller.
//!
//! ```
//! use serde::{Deserialize, Serialize};
//! use typed_snowflake::SnowflakeId;
//!
//! #[derive(SnowflakeId, Clone, Copy, Debug, PartialEq)]
//! #[layout(time = 41, worker = 10, seq = 12, epoch = 1288834974657)]
//! struct TweetId(i64);
//!
//! #[derive(Serialize, Deserialize, Debug, PartialEq)]
//! struct Tweet {
//!     id: TweetId,
//!     reply_to: Option<TweetId>,
//! }
//!
//! let tweet = Tweet { id: TweetId::try_from(1_724_551_110_457_221_119i64)?, reply_to: None };
//! let json = serde_json::to_string(&tweet)?;
//! assert_eq!(json, r#"{"id":"1724551110457221119","reply_to":null}"#);
//! // On input, a string or an integer is accepted.
//! let back: Tweet = serde_json::from_str(r#"{"id":1724551110457221119,"reply_to":null}"#)?;
//! assert_eq!(back, tweet);
//! Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Checked on the way in
//!
//! Deserializing goes through the same checks as
//! [`SnowflakeId::from_raw`](crate::SnowflakeId::from_raw) and
//! [`SnowflakeId::parse_str`](crate::SnowflakeId::parse_str): a negative number, a sign, a
//! space, a non-digit, an empty string, a number above `i64::MAX`, a bit set above the
//! layout's widths, a float, a boolean, `null`, a list or a map is an error that says which,
//! never a panic and never a wrong ID.
//!
//! ```
//! # use typed_snowflake::SnowflakeId;
//! # #[derive(SnowflakeId, Clone, Copy, Debug, PartialEq)]
//! # #[layout(time = 41, worker = 10, seq = 12, epoch = 1288834974657)]
//! # struct TweetId(i64);
//! let says = |json: &str, why: &str| {
//!     serde_json::from_str::<TweetId>(json).is_err_and(|e| e.to_string().contains(why))
//! };
//! assert!(says(r#""-5""#, "an ID is written without a sign"));
//! assert!(says("-5", "-5 is negative"));
//! assert!(says(r#""12a""#, "found 'a' at byte 2"));
//! assert!(says("1.5", "invalid type: floating point"));
//! assert!(says("null", "invalid type: null"));
//! ```
//!
//! # Prefixed types
//!
//! A type declared with `#[snowflake(prefix = "ord")]` is written `"ord_…"` in
//! human-readable formats and read from that string only: a JSON number or a bare decimal
//! string is refused with a message that gives its prefixed spelling, unless the type says
//! `accept_decimal` (see [`crate::prefixed`]). Binary formats carry the integer, as for
//! every type; [`as_string`] writes the prefixed string there too, [`as_number`] the integer
//! everywhere.
//!
//! ```
//! use typed_snowflake::SnowflakeId;
//!
//! #[derive(SnowflakeId, Clone, Copy, PartialEq)]
//! #[layout(time = 41, worker = 10, seq = 12, epoch = 1288834974657)]
//! #[snowflake(prefix = "ord")]
//! struct OrderId(i64);
//!
//! let id = OrderId::try_from(1_724_551_110_457_221_119i64)?;
//! assert_eq!(serde_json::to_string(&id)?, r#""ord_1fvpp347wxqzz""#);
//! assert!(serde_json::from_str::<OrderId>("1724551110457221119").is_err());
//! assert_eq!(postcard::to_stdvec(&id)?, postcard::to_stdvec(&1_724_551_110_457_221_119i64)?);
//! Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Adapters
//!
//! - [`as_number`]: a JSON number both ways, for APIs whose clients are known to keep
//!   64-bit integers exactly (not browsers).
//! - [`as_number_option`]: the same for `Option<Id>`.
//! - [`as_string`]: a string even in binary formats, for schemas that say "string".

#[cfg(feature = "serde")]
pub use imp::*;

#[cfg(feature = "serde")]
mod imp {
    use core::fmt;
    use core::marker::PhantomData;

    use ::serde::de::{self, Deserializer, Visitor};
    use ::serde::ser::Serializer;

    use crate::SnowflakeId;

    /// Serializes an ID: its decimal digits as a string in human-readable formats, a plain
    /// `i64` in binary ones. What the derived `Serialize` calls.
    ///
    /// The digits are written into a buffer on the stack: serializing never allocates.
    ///
    /// ```
    /// use typed_snowflake::SnowflakeId;
    ///
    /// #[derive(SnowflakeId, Clone, Copy, Debug)]
    /// #[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
    /// struct OrderId(i64);
    ///
    /// let id = OrderId::try_from(1_234_567_890_123i64)?;
    /// let mut out = Vec::new();
    /// typed_snowflake::serialization::serialize(&id, &mut serde_json::Serializer::new(&mut out))?;
    /// assert_eq!(out, br#""1234567890123""#);
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[inline]
    pub fn serialize<T: SnowflakeId, S: Serializer>(id: &T, serializer: S) -> Result<S::Ok, S::Error> {
        if serializer.is_human_readable() { serialize_text(id, serializer) } else { serialize_number(id, serializer) }
    }

    /// Deserializes an ID from a string of decimal digits or an integer, checked against
    /// `T`'s layout. What the derived `Deserialize` calls.
    ///
    /// Human-readable formats are asked for whatever they hold (`deserialize_any`); binary
    /// formats, which may not be self-describing (postcard, bincode), for an `i64`.
    ///
    /// ```
    /// use typed_snowflake::SnowflakeId;
    ///
    /// #[derive(SnowflakeId, Clone, Copy, Debug, PartialEq)]
    /// #[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
    /// struct OrderId(i64);
    ///
    /// let from_string: OrderId = typed_snowflake::serialization::deserialize(&mut serde_json::Deserializer::from_str("\"42\""))?;
    /// let from_number: OrderId = typed_snowflake::serialization::deserialize(&mut serde_json::Deserializer::from_str("42"))?;
    /// assert_eq!(from_string, from_number);
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[inline]
    pub fn deserialize<'de, T: SnowflakeId, D: Deserializer<'de>>(deserializer: D) -> Result<T, D::Error> {
        // A prefixed type's text form is a string: a JSON number is the decimal form, read
        // only by a type that accepts it (`accept_decimal`), as a bare number in a string is.
        deserialize_with(deserializer, T::PREFIX.is_none() || T::ACCEPTS_DECIMAL)
    }

    /// [`deserialize`], with integers in human-readable formats accepted or not (binary
    /// formats always carry the integer).
    #[inline]
    fn deserialize_with<'de, T: SnowflakeId, D: Deserializer<'de>>(
        deserializer: D,
        numbers: bool,
    ) -> Result<T, D::Error> {
        if deserializer.is_human_readable() {
            deserializer.deserialize_any(IdVisitor::<T>::new(numbers))
        } else {
            if T::LAYOUT.fits_i64() {
                deserializer.deserialize_i64(IdVisitor::<T>::new(true))
            } else {
                deserializer.deserialize_u64(IdVisitor::<T>::new(true))
            }
        }
    }

    /// IDs as JSON numbers, for `#[serde(with = "typed_snowflake::serialization::as_number")]`.
    ///
    /// Serializes the ID as an `i64` in every format. Only for consumers that keep 64-bit
    /// integers exactly: JavaScript's `JSON.parse` rounds any integer above 2^53
    /// (9007199254740992), and most Snowflake IDs are far above it. Input is accepted as a
    /// number or a string, as with the derived `Deserialize`.
    ///
    /// With the `schemars` feature, pair it with `#[schemars(with = "i64")]` so the schema
    /// says what is sent.
    ///
    /// ```
    /// use serde::{Deserialize, Serialize};
    /// use typed_snowflake::SnowflakeId;
    ///
    /// #[derive(SnowflakeId, Clone, Copy, Debug, PartialEq)]
    /// #[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
    /// struct OrderId(i64);
    ///
    /// #[derive(Serialize, Deserialize, Debug, PartialEq)]
    /// struct Row {
    ///     #[serde(with = "typed_snowflake::serialization::as_number")]
    ///     id: OrderId,
    /// }
    ///
    /// let row = Row { id: OrderId::try_from(1_234_567_890_123i64)? };
    /// assert_eq!(serde_json::to_string(&row)?, r#"{"id":1234567890123}"#);
    /// assert_eq!(serde_json::from_str::<Row>(r#"{"id":"1234567890123"}"#)?, row);
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub mod as_number {
        use ::serde::{Deserializer, Serializer};

        use crate::SnowflakeId;

        /// Serializes the ID as an `i64`.
        ///
        /// ```
        /// # use typed_snowflake::SnowflakeId;
        /// # #[derive(SnowflakeId, Clone, Copy, Debug)]
        /// # #[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
        /// # struct OrderId(i64);
        /// let mut out = Vec::new();
        /// let id = OrderId::try_from(42i64)?;
        /// typed_snowflake::serialization::as_number::serialize(&id, &mut serde_json::Serializer::new(&mut out))?;
        /// assert_eq!(out, b"42");
        /// Ok::<(), Box<dyn std::error::Error>>(())
        /// ```
        #[inline]
        pub fn serialize<T: SnowflakeId, S: Serializer>(id: &T, serializer: S) -> Result<S::Ok, S::Error> {
            super::serialize_number(id, serializer)
        }

        /// Deserializes an ID from an integer or a string, as [`super::deserialize`].
        ///
        /// ```
        /// # use typed_snowflake::SnowflakeId;
        /// # #[derive(SnowflakeId, Clone, Copy, Debug, PartialEq)]
        /// # #[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
        /// # struct OrderId(i64);
        /// let id: OrderId = typed_snowflake::serialization::as_number::deserialize(&mut serde_json::Deserializer::from_str("42"))?;
        /// assert_eq!(id.get(), 42);
        /// Ok::<(), Box<dyn std::error::Error>>(())
        /// ```
        #[inline]
        pub fn deserialize<'de, T: SnowflakeId, D: Deserializer<'de>>(deserializer: D) -> Result<T, D::Error> {
            super::deserialize_with(deserializer, true)
        }
    }

    /// [`as_number`] for `Option<Id>`: `null` or a JSON number.
    ///
    /// serde treats a field with `with` as required; add `default` for a field that may be
    /// absent: `#[serde(default, with = "typed_snowflake::serialization::as_number_option")]`.
    ///
    /// ```
    /// use serde::{Deserialize, Serialize};
    /// use typed_snowflake::SnowflakeId;
    ///
    /// #[derive(SnowflakeId, Clone, Copy, Debug, PartialEq)]
    /// #[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
    /// struct OrderId(i64);
    ///
    /// #[derive(Serialize, Deserialize, Debug, PartialEq)]
    /// struct Row {
    ///     #[serde(default, with = "typed_snowflake::serialization::as_number_option")]
    ///     parent: Option<OrderId>,
    /// }
    ///
    /// let row = Row { parent: Some(OrderId::try_from(7i64)?) };
    /// assert_eq!(serde_json::to_string(&row)?, r#"{"parent":7}"#);
    /// assert_eq!(serde_json::to_string(&Row { parent: None })?, r#"{"parent":null}"#);
    /// assert_eq!(serde_json::from_str::<Row>("{}")?, Row { parent: None });
    /// assert_eq!(serde_json::from_str::<Row>(r#"{"parent":"7"}"#)?, row);
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub mod as_number_option {
        use core::fmt;
        use core::marker::PhantomData;

        use ::serde::de::{self, Deserializer, Visitor};
        use ::serde::ser::{Serialize, Serializer};

        use crate::SnowflakeId;

        /// Serializes `None` as the format's null and `Some(id)` as an `i64`.
        ///
        /// ```
        /// # use typed_snowflake::SnowflakeId;
        /// # #[derive(SnowflakeId, Clone, Copy, Debug)]
        /// # #[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
        /// # struct OrderId(i64);
        /// let mut out = Vec::new();
        /// let id = Some(OrderId::try_from(42i64)?);
        /// typed_snowflake::serialization::as_number_option::serialize(&id, &mut serde_json::Serializer::new(&mut out))?;
        /// assert_eq!(out, b"42");
        /// Ok::<(), Box<dyn std::error::Error>>(())
        /// ```
        #[inline]
        #[allow(clippy::ref_option, reason = "the signature `#[serde(with)]` calls")]
        pub fn serialize<T: SnowflakeId, S: Serializer>(id: &Option<T>, serializer: S) -> Result<S::Ok, S::Error> {
            match id {
                Some(id) => serializer.serialize_some(&Number(id)),
                None => serializer.serialize_none(),
            }
        }

        /// Deserializes `null` as `None`, and an integer or a string as `Some(id)`.
        ///
        /// ```
        /// # use typed_snowflake::SnowflakeId;
        /// # #[derive(SnowflakeId, Clone, Copy, Debug, PartialEq)]
        /// # #[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
        /// # struct OrderId(i64);
        /// use typed_snowflake::serialization::as_number_option;
        ///
        /// let none: Option<OrderId> = as_number_option::deserialize(&mut serde_json::Deserializer::from_str("null"))?;
        /// assert_eq!(none, None);
        /// let some: Option<OrderId> = as_number_option::deserialize(&mut serde_json::Deserializer::from_str("42"))?;
        /// assert_eq!(some.map(|id| id.get()), Some(42));
        /// Ok::<(), Box<dyn std::error::Error>>(())
        /// ```
        #[inline]
        pub fn deserialize<'de, T: SnowflakeId, D: Deserializer<'de>>(deserializer: D) -> Result<Option<T>, D::Error> {
            deserializer.deserialize_option(OptionVisitor::<T>(PhantomData))
        }

        struct Number<'a, T>(&'a T);

        impl<T: SnowflakeId> Serialize for Number<'_, T> {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                super::serialize_number(self.0, serializer)
            }
        }

        struct OptionVisitor<T>(PhantomData<fn() -> T>);

        impl<'de, T: SnowflakeId> Visitor<'de> for OptionVisitor<T> {
            type Value = Option<T>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "null or a Snowflake ID ({})", T::NAME)
            }

            fn visit_none<E: de::Error>(self) -> Result<Option<T>, E> {
                Ok(None)
            }

            fn visit_unit<E: de::Error>(self) -> Result<Option<T>, E> {
                Ok(None)
            }

            fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Option<T>, D::Error> {
                super::deserialize_with(deserializer, true).map(Some)
            }
        }
    }

    /// IDs as strings in every format, binary ones included, for
    /// `#[serde(with = "typed_snowflake::serialization::as_string")]`.
    ///
    /// The derived impls already write strings in human-readable formats; this adapter is
    /// for a binary format whose schema (shared with another language, say) declares the
    /// field a string. Input is accepted as a string, or as an integer in formats that say
    /// which they hold.
    ///
    /// ```
    /// use serde::{Deserialize, Serialize};
    /// use typed_snowflake::SnowflakeId;
    ///
    /// #[derive(SnowflakeId, Clone, Copy, Debug, PartialEq)]
    /// #[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
    /// struct OrderId(i64);
    ///
    /// #[derive(Serialize, Deserialize, Debug, PartialEq)]
    /// struct Row {
    ///     #[serde(with = "typed_snowflake::serialization::as_string")]
    ///     id: OrderId,
    /// }
    ///
    /// let row = Row { id: OrderId::try_from(42i64)? };
    /// let bytes = postcard::to_stdvec(&row)?;
    /// assert_eq!(bytes, postcard::to_stdvec(&"42")?);
    /// assert_eq!(postcard::from_bytes::<Row>(&bytes)?, row);
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub mod as_string {
        use ::serde::{Deserializer, Serializer};

        use crate::SnowflakeId;

        /// Serializes the ID as a string of decimal digits, without allocating.
        ///
        /// ```
        /// # use typed_snowflake::SnowflakeId;
        /// # #[derive(SnowflakeId, Clone, Copy, Debug)]
        /// # #[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
        /// # struct OrderId(i64);
        /// let id = OrderId::try_from(42i64)?;
        /// let bytes = postcard::to_stdvec(&Wrapper(id))?;
        /// assert_eq!(bytes, [2, b'4', b'2']);
        ///
        /// #[derive(serde::Serialize)]
        /// struct Wrapper(#[serde(with = "typed_snowflake::serialization::as_string")] OrderId);
        /// Ok::<(), Box<dyn std::error::Error>>(())
        /// ```
        #[inline]
        pub fn serialize<T: SnowflakeId, S: Serializer>(id: &T, serializer: S) -> Result<S::Ok, S::Error> {
            super::serialize_text(id, serializer)
        }

        /// Deserializes an ID from a string (or, in a self-describing format, an integer).
        ///
        /// ```
        /// # use typed_snowflake::SnowflakeId;
        /// # #[derive(SnowflakeId, Clone, Copy, Debug, PartialEq)]
        /// # #[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
        /// # struct OrderId(i64);
        /// let bytes = postcard::to_stdvec(&"42")?;
        /// let id: OrderId = typed_snowflake::serialization::as_string::deserialize(
        ///     &mut postcard::Deserializer::from_bytes(&bytes),
        /// )?;
        /// assert_eq!(id.get(), 42);
        /// Ok::<(), Box<dyn std::error::Error>>(())
        /// ```
        #[inline]
        pub fn deserialize<'de, T: SnowflakeId, D: Deserializer<'de>>(deserializer: D) -> Result<T, D::Error> {
            if deserializer.is_human_readable() {
                deserializer.deserialize_any(super::IdVisitor::<T>::new(T::PREFIX.is_none() || T::ACCEPTS_DECIMAL))
            } else {
                deserializer.deserialize_str(super::IdVisitor::<T>::new(true))
            }
        }
    }

    /// Serializes an ID as a number: an `i64` for a layout of at most 63 bits, a `u64` for a
    /// 64-bit layout (whose IDs at or above 2^63 are no `i64`).
    #[inline]
    fn serialize_number<T: SnowflakeId, S: Serializer>(id: &T, serializer: S) -> Result<S::Ok, S::Error> {
        if T::LAYOUT.fits_i64() {
            serializer.serialize_i64(id.to_raw())
        } else {
            serializer.serialize_u64(id.to_raw().cast_unsigned())
        }
    }

    /// Serializes an ID's text form: `ord_…` for a prefixed type, else its decimal digits;
    /// from a stack buffer either way.
    #[inline]
    fn serialize_text<T: SnowflakeId, S: Serializer>(id: &T, serializer: S) -> Result<S::Ok, S::Error> {
        id.with_text(|text| serializer.serialize_str(text))
    }

    /// The error for input that is the right kind of value but not an ID of `T`.
    fn invalid<T: SnowflakeId, E: de::Error>(reason: impl fmt::Display) -> E {
        E::custom(format_args!("invalid {}: {reason}", T::NAME))
    }

    /// Accepts a string of digits or an integer, checked against `T`'s layout; every other
    /// kind of value falls to serde's "invalid type" error, which names the kind found.
    /// A prefixed type's text is its prefixed form (or, with `accept_decimal`, digits too).
    /// `numbers`: whether integers are accepted (binary formats, the number adapters, types
    /// without a prefix or with `accept_decimal`); a refused one gets the message of a bare
    /// number in a string, which names its prefixed spelling.
    struct IdVisitor<T> {
        numbers: bool,
        ty: PhantomData<fn() -> T>,
    }

    impl<T> IdVisitor<T> {
        fn new(numbers: bool) -> Self {
            Self { numbers, ty: PhantomData }
        }
    }

    impl<T: SnowflakeId> IdVisitor<T> {
        /// A JSON number where a prefixed type's string belongs: the bare number's message.
        #[cold]
        fn refuse_number<E: de::Error>(self, value: impl fmt::Display) -> Result<T, E> {
            match T::parse_text(&value.to_string()) {
                Err(e) => Err(invalid::<T, E>(e)),
                // Only a type that accepts decimal text reads the number, and it reads numbers.
                Ok(_) => Err(invalid::<T, E>(format_args!("{value} is a number; expected a string"))),
            }
        }
    }

    impl<T: SnowflakeId> Visitor<'_> for IdVisitor<T> {
        type Value = T;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            match T::PREFIX {
                Some(prefix) if self.numbers => {
                    write!(f, "a Snowflake ID ({}): a string {prefix}_… or a non-negative integer", T::NAME)
                }
                Some(prefix) => write!(f, "a Snowflake ID ({}): a string {prefix}_…", T::NAME),
                None => write!(f, "a Snowflake ID ({}): a string of decimal digits or a non-negative integer", T::NAME),
            }
        }

        #[inline]
        fn visit_str<E: de::Error>(self, text: &str) -> Result<T, E> {
            if T::PREFIX.is_some() {
                T::parse_text(text).map_err(invalid::<T, E>)
            } else {
                T::parse_str(text).map_err(invalid::<T, E>)
            }
        }

        #[inline]
        fn visit_i64<E: de::Error>(self, value: i64) -> Result<T, E> {
            if !self.numbers {
                return self.refuse_number(value);
            }
            T::from_raw(value).map_err(invalid::<T, E>)
        }

        #[inline]
        fn visit_u64<E: de::Error>(self, value: u64) -> Result<T, E> {
            if !self.numbers {
                return self.refuse_number(value);
            }
            T::LAYOUT.validate_u64(value).map(T::from_raw_unchecked).map_err(invalid::<T, E>)
        }

        fn visit_i128<E: de::Error>(self, value: i128) -> Result<T, E> {
            if !self.numbers {
                return self.refuse_number(value);
            }
            match i64::try_from(value) {
                Ok(value) => self.visit_i64(value),
                Err(_) if value < 0 => {
                    Err(invalid::<T, E>(format_args!("{value} is negative; a Snowflake ID is a positive i64")))
                }
                Err(_) => match u64::try_from(value) {
                    Ok(value) => self.visit_u64(value),
                    Err(_) => Err(invalid::<T, E>(format_args!("{value} is larger than u64::MAX, the largest ID"))),
                },
            }
        }

        fn visit_u128<E: de::Error>(self, value: u128) -> Result<T, E> {
            if !self.numbers {
                return self.refuse_number(value);
            }
            match u64::try_from(value) {
                Ok(value) => self.visit_u64(value),
                Err(_) => Err(invalid::<T, E>(format_args!("{value} is larger than u64::MAX, the largest ID"))),
            }
        }
    }
}

/// `Serialize` and `Deserialize` for a derived type, through [`serialize`] and [`deserialize`].
#[cfg(feature = "serde")]
#[doc(hidden)]
#[macro_export]
macro_rules! __impl_serde {
    ($ty:ty) => {
        #[automatically_derived]
        impl $crate::__private::serde::Serialize for $ty {
            #[inline]
            fn serialize<__S: $crate::__private::serde::Serializer>(
                &self,
                serializer: __S,
            ) -> $crate::__private::Result<__S::Ok, __S::Error> {
                $crate::__private::serde_serialize(self, serializer)
            }
        }

        #[automatically_derived]
        impl<'de> $crate::__private::serde::Deserialize<'de> for $ty {
            #[inline]
            fn deserialize<__D: $crate::__private::serde::Deserializer<'de>>(
                deserializer: __D,
            ) -> $crate::__private::Result<Self, __D::Error> {
                $crate::__private::serde_deserialize(deserializer)
            }
        }
    };
}

/// Without the `serde` feature: nothing.
#[cfg(not(feature = "serde"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __impl_serde {
    ($ty:ty) => {};
}
