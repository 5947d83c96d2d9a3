//! The `utoipa` integration: an OpenAPI schema for every derived type, describing what the
//! `serde` integration writes in JSON, as the `schemars` integration does: a string of 1 to 19
//! decimal digits, with the type's name, a description and an example ID; for a prefixed type
//! (`ord_…`), the prefix, `_` and 13 base32 characters as its `pattern`.
//!
//! ```ignore
//! #[derive(utoipa::ToSchema, serde::Serialize)]
//! struct Order { id: OrderId, parent: Option<OrderId> }
//! // components.schemas.OrderId = {"type": "string", "pattern": "^[0-9]{1,19}$", "minLength": 1,
//! //                               "maxLength": 19, "description": "...", "examples": ["..."]}
//! ```

#[cfg(feature = "utoipa")]
pub use imp::*;

#[cfg(feature = "utoipa")]
mod imp {
    use ::utoipa::openapi::RefOr;
    use ::utoipa::openapi::schema::{ObjectBuilder, Schema, Type};

    use crate::SnowflakeId;
    use crate::integrations::{ID_PATTERN, schema_description, schema_example, schema_example_text};

    /// The schema of `T`: what the derived `PartialSchema::schema` returns.
    pub fn schema<T: SnowflakeId>() -> RefOr<Schema> {
        if let Some(prefix) = T::PREFIX {
            let length = prefix.len() + 1 + crate::prefixed::SUFFIX_LEN;
            return ObjectBuilder::new()
                .schema_type(Type::String)
                .pattern(Some(crate::prefixed::pattern(prefix, &T::LAYOUT)))
                .min_length(Some(length))
                .max_length(Some(length))
                .description(Some(schema_description::<T>()))
                .examples([::serde_json::Value::String(schema_example_text::<T>())])
                .into();
        }
        ObjectBuilder::new()
            .schema_type(Type::String)
            .pattern(Some(ID_PATTERN))
            .min_length(Some(1))
            .max_length(Some(19))
            .description(Some(schema_description::<T>()))
            .examples([::serde_json::Value::String(schema_example::<T>().to_string())])
            .into()
    }
}

/// `PartialSchema` and `ToSchema` for a derived type, through [`schema`]. The schema is named
/// after the type, as utoipa's derive names it.
#[cfg(feature = "utoipa")]
#[doc(hidden)]
#[macro_export]
macro_rules! __impl_utoipa {
    ($ty:ident) => {
        #[automatically_derived]
        impl $crate::__private::utoipa::PartialSchema for $ty {
            fn schema() -> $crate::__private::utoipa::openapi::RefOr<$crate::__private::utoipa::openapi::schema::Schema>
            {
                $crate::__private::utoipa_schema::<Self>()
            }
        }
        #[automatically_derived]
        impl $crate::__private::utoipa::ToSchema for $ty {
            fn name() -> $crate::__private::Cow<'static, ::core::primitive::str> {
                $crate::__private::Cow::Borrowed(::core::stringify!($ty))
            }
        }
    };
}

/// Without the `utoipa` feature: nothing.
#[cfg(not(feature = "utoipa"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __impl_utoipa {
    ($ty:ident) => {};
}
