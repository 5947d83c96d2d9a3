//! async-graphql 7: feature `async-graphql`.
//!
//! With the feature on, every derived ID is a GraphQL scalar named after the type (`OrderId`),
//! usable as an argument, an input field and an output field. Following the convention of
//! GraphQL's `ID`, it is written as a string of decimal digits (a JSON number would lose digits
//! above 2^53 in JavaScript clients). As input it takes a string or an integer, and refuses
//! anything that is not an ID of the type with the reasons of `FromStr` (empty, a sign,
//! non-digits, overflow, bits above the layout) or of the layout's check (a negative integer,
//! bits above the layout), or a float, with an error that names the scalar and the reason:
//! `Failed to parse "OrderId": -5 is negative; ...`. A literal of another kind (`true`, an
//! object) is refused when the query is validated, before anything runs.
//!
//! A prefixed type (`#[snowflake(prefix = "ord")]`) is written and read as `ord_…`; a number
//! or a bare decimal string is refused with a message that names the prefixed spelling,
//! unless the type also accepts decimal text (`accept_decimal`).
//!
//! ```ignore
//! struct Query;
//!
//! #[async_graphql::Object]
//! impl Query {
//!     async fn order(&self, id: OrderId) -> Option<Order> { ... }
//! }
//! // { order(id: "192894622482038784") { id } }  →  {"order": {"id": "192894622482038784"}}
//! // { order(id: "-5") { id } }                  →  Failed to parse "OrderId": ...
//! ```
//!
//! async-graphql's `boxed-trait` feature changes the shape of `OutputType::resolve`; the impls
//! here are written for the default shape.

/// Helpers the generated impls call.
#[cfg(feature = "async-graphql")]
#[doc(hidden)]
pub mod helpers {
    use async_graphql::{InputType, InputValueError, InputValueResult, Number, Value};

    use crate::SnowflakeId;

    /// A string of digits or an integer, checked; anything else is an error that says why.
    pub fn parse<T: SnowflakeId + InputType>(value: Value) -> InputValueResult<T> {
        match value {
            Value::String(text) if T::PREFIX.is_some() => T::parse_text(&text).map_err(InputValueError::custom),
            Value::String(text) => T::parse_str(&text).map_err(InputValueError::custom),
            // A prefixed type is a string; a number is its decimal form, read only by a type
            // that accepts it, else refused with the bare number's message.
            Value::Number(number) if T::PREFIX.is_some() && !T::ACCEPTS_DECIMAL => {
                T::parse_text(&number.to_string()).map_err(InputValueError::custom)
            }
            Value::Number(number) => from_number::<T>(&number),
            other => Err(InputValueError::expected_type(other)),
        }
    }

    fn from_number<T: SnowflakeId + InputType>(number: &Number) -> InputValueResult<T> {
        if let Some(raw) = number.as_i64() {
            T::from_raw(raw).map_err(InputValueError::custom)
        } else if let Some(raw) = number.as_u64() {
            T::from_u64(raw).map_err(InputValueError::custom)
        } else {
            Err(InputValueError::custom(format!(
                "{number} is not an integer; an ID is a string of digits or an integer"
            )))
        }
    }

    /// Whether `value` has the shape of an ID (a string or a number), for the validation of
    /// literals before execution. Its content is checked by [`parse`], whose error says why;
    /// a literal refused here would only get async-graphql's "Invalid value" without a reason.
    pub fn is_valid(value: &Value) -> bool {
        matches!(value, Value::String(_) | Value::Number(_))
    }

    /// The ID in its text form (`ord_…` or decimal digits): its `Display`, through the
    /// function the derived `Display` calls (`__private::fmt` calls it too).
    pub fn to_value<T: SnowflakeId>(id: &T) -> Value {
        struct Text<'a, T>(&'a T);
        impl<T: SnowflakeId> core::fmt::Display for Text<'_, T> {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                crate::id::fmt_text(self.0, f)
            }
        }
        Value::String(Text(id).to_string())
    }

    /// The scalar's description.
    pub fn description<T: SnowflakeId>() -> Option<String> {
        Some(crate::integrations::schema_description::<T>())
    }
}

/// `ScalarType`, `InputType` and `OutputType`, as async-graphql's `#[Scalar]` writes them.
#[cfg(feature = "async-graphql")]
#[doc(hidden)]
#[macro_export]
macro_rules! __impl_async_graphql {
    ($ty:ident) => {
        #[automatically_derived]
        impl $crate::__private::async_graphql::ScalarType for $ty {
            fn parse(value: $crate::__private::async_graphql::Value) -> $crate::__private::async_graphql::InputValueResult<Self> {
                $crate::__private::graphql::parse::<Self>(value)
            }
            fn is_valid(value: &$crate::__private::async_graphql::Value) -> ::core::primitive::bool {
                $crate::__private::graphql::is_valid(value)
            }
            fn to_value(&self) -> $crate::__private::async_graphql::Value {
                $crate::__private::graphql::to_value(self)
            }
        }
        #[automatically_derived]
        impl $crate::__private::async_graphql::InputType for $ty {
            type RawValueType = Self;
            fn type_name() -> $crate::__private::Cow<'static, ::core::primitive::str> {
                $crate::__private::Cow::Borrowed(::core::stringify!($ty))
            }
            fn create_type_info(
                registry: &mut $crate::__private::async_graphql::registry::Registry,
            ) -> $crate::__private::String {
                $crate::__impl_async_graphql!(@type_info $ty, registry, create_input_type)
            }
            fn parse(
                value: ::core::option::Option<$crate::__private::async_graphql::Value>,
            ) -> $crate::__private::async_graphql::InputValueResult<Self> {
                $crate::__private::graphql::parse::<Self>(value.unwrap_or_default())
            }
            fn to_value(&self) -> $crate::__private::async_graphql::Value {
                $crate::__private::graphql::to_value(self)
            }
            fn as_raw_value(&self) -> ::core::option::Option<&Self::RawValueType> {
                ::core::option::Option::Some(self)
            }
        }
        #[automatically_derived]
        impl $crate::__private::async_graphql::OutputType for $ty {
            fn type_name() -> $crate::__private::Cow<'static, ::core::primitive::str> {
                $crate::__private::Cow::Borrowed(::core::stringify!($ty))
            }
            fn create_type_info(
                registry: &mut $crate::__private::async_graphql::registry::Registry,
            ) -> $crate::__private::String {
                $crate::__impl_async_graphql!(@type_info $ty, registry, create_output_type)
            }
            async fn resolve(
                &self,
                _: &$crate::__private::async_graphql::ContextSelectionSet<'_>,
                _: &$crate::__private::async_graphql::Positioned<$crate::__private::async_graphql::parser::types::Field>,
            ) -> $crate::__private::async_graphql::ServerResult<$crate::__private::async_graphql::Value> {
                $crate::__private::Result::Ok($crate::__private::graphql::to_value(self))
            }
        }
    };
    (@type_info $ty:ident, $registry:ident, $create:ident) => {
        $registry.$create::<$ty, _>($crate::__private::async_graphql::registry::MetaTypeId::Scalar, |_| {
            $crate::__private::async_graphql::registry::MetaType::Scalar {
                name: $crate::__private::String::from(::core::stringify!($ty)),
                description: $crate::__private::graphql::description::<$ty>(),
                is_valid: ::core::option::Option::Some(::std::sync::Arc::new(|value| {
                    $crate::__private::graphql::is_valid(value)
                })),
                visible: ::core::option::Option::None,
                inaccessible: false,
                tags: $crate::__private::Vec::new(),
                specified_by_url: ::core::option::Option::None,
                directive_invocations: $crate::__private::Vec::new(),
                requires_scopes: $crate::__private::Vec::new(),
            }
        })
    };
}

/// Without the `async-graphql` feature: nothing.
#[cfg(not(feature = "async-graphql"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __impl_async_graphql {
    ($ty:ident) => {};
}
