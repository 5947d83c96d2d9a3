//! The `schemars` integration: a JSON Schema for every derived type, describing what the
//! `serde` integration writes in JSON: a string of 1 to 19 decimal digits (1 to 20 for a
//! 64-bit layout, whose largest ID is `u64::MAX`), or for a prefixed type (`ord_…`) the
//! prefix, `_` and 13 base32 characters, as a `pattern` with an example.

#[cfg(feature = "schemars")]
pub use imp::*;

#[cfg(feature = "schemars")]
mod imp {
    use ::schemars::{Schema, SchemaGenerator, json_schema};

    use crate::SnowflakeId;

    /// The pattern of an ID in JSON: 1 to 19 decimal digits (`i64::MAX` has 19), no sign.
    pub const PATTERN: &str = crate::integrations::ID_PATTERN;

    /// The pattern of an ID of a 64-bit layout: 1 to 20 digits (`u64::MAX` has 20).
    pub const PATTERN_64: &str = "^[0-9]{1,20}$";

    /// The schema of `T`: `{"type": "string", "pattern": "^[0-9]{1,19}$", "description": ...}`.
    /// What the derived `JsonSchema::json_schema` returns.
    pub fn json_schema<T: SnowflakeId>(_generator: &mut SchemaGenerator) -> Schema {
        let description = crate::integrations::schema_description::<T>();
        if let Some(prefix) = T::PREFIX {
            // A prefixed type's JSON is its prefixed form only (a type that also reads
            // decimal text during a migration still writes, and documents, the new form).
            let pattern = crate::prefixed::pattern(prefix, &T::LAYOUT);
            let length = prefix.len() + 1 + crate::prefixed::SUFFIX_LEN;
            return json_schema!({
                "type": "string",
                "pattern": pattern,
                "minLength": length,
                "maxLength": length,
                "description": description,
                "examples": [crate::integrations::schema_example_text::<T>()],
            });
        }
        json_schema!({
            "type": "string",
            "pattern": if T::LAYOUT.fits_i64() { PATTERN } else { PATTERN_64 },
            "description": description,
        })
    }

    #[cfg(test)]
    mod tests {
        use super::{PATTERN, PATTERN_64};

        #[test]
        fn pattern_admits_exactly_the_lengths_an_i64_can_have() {
            // The pattern is a plain string; check its bound against the real maximum.
            assert_eq!(i64::MAX.to_string().len(), 19);
            assert_eq!(PATTERN, format!("^[0-9]{{1,{}}}$", i64::MAX.to_string().len()));
            assert_eq!(PATTERN_64, format!("^[0-9]{{1,{}}}$", u64::MAX.to_string().len()));
        }
    }
}

/// `JsonSchema` for a derived type, through [`json_schema`]. The schema is named after the
/// type and identified by its full path, so two `OrderId`s in different modules never share
/// one definition.
#[cfg(feature = "schemars")]
#[doc(hidden)]
#[macro_export]
macro_rules! __impl_schemars {
    ($ty:ident) => {
        #[automatically_derived]
        impl $crate::__private::schemars::JsonSchema for $ty {
            fn schema_name() -> $crate::__private::Cow<'static, ::core::primitive::str> {
                $crate::__private::Cow::Borrowed(::core::stringify!($ty))
            }

            fn schema_id() -> $crate::__private::Cow<'static, ::core::primitive::str> {
                $crate::__private::Cow::Borrowed(::core::concat!(::core::module_path!(), "::", ::core::stringify!($ty)))
            }

            fn json_schema(
                generator: &mut $crate::__private::schemars::SchemaGenerator,
            ) -> $crate::__private::schemars::Schema {
                $crate::__private::schemars_json_schema::<Self>(generator)
            }
        }
    };
}

/// Without the `schemars` feature: nothing.
#[cfg(not(feature = "schemars"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __impl_schemars {
    ($ty:ident) => {};
}
