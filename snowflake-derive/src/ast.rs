//! The item's shape: a non-generic tuple struct with one `i64` or `u64` field.

use quote::ToTokens;
use syn::{Data, DeriveInput, Fields, Type};

use crate::ctxt::Ctxt;

/// The integer the newtype wraps.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Inner {
    I64,
    U64,
}

const SHAPE: &str = "SnowflakeId can only be derived for a tuple struct with one i64 or u64 field, \
                     e.g. `struct OrderId(i64);`";

/// Checks the shape; `None` when the expansion cannot be emitted at all.
pub fn inner_type(cx: &Ctxt, input: &DeriveInput) -> Option<Inner> {
    let mut usable = true;
    let generics = &input.generics;
    if !generics.params.is_empty() || generics.where_clause.is_some() {
        // `Generics` prints only its `<...>`: point at the where clause when that is all there is.
        let tokens = if generics.params.is_empty() {
            generics.where_clause.to_token_stream()
        } else {
            generics.to_token_stream()
        };
        cx.error_spanned(
            tokens,
            "SnowflakeId cannot be derived for a generic struct: an ID type has one fixed layout; \
             remove the generic parameters and the where clause",
        );
        usable = false;
    }
    let fields = match &input.data {
        Data::Struct(data) => &data.fields,
        Data::Enum(data) => {
            cx.push(syn::Error::new(data.enum_token.span, format!("{SHAPE}; enums are not supported")));
            return None;
        }
        Data::Union(data) => {
            cx.push(syn::Error::new(data.union_token.span, format!("{SHAPE}; unions are not supported")));
            return None;
        }
    };
    let field = match fields {
        Fields::Unnamed(unnamed) if unnamed.unnamed.len() == 1 => &unnamed.unnamed[0],
        Fields::Unit => {
            cx.error_spanned(&input.ident, SHAPE);
            return None;
        }
        other => {
            cx.error_spanned(other, SHAPE);
            return None;
        }
    };
    let inner = match &field.ty {
        Type::Path(path) if path.qself.is_none() && path.path.segments.iter().all(|s| s.arguments.is_none()) => {
            let names: Vec<String> = path.path.segments.iter().map(|s| s.ident.to_string()).collect();
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            // `i64`, or spelled out as `core::primitive::i64` / `std::primitive::i64`. A
            // `type i64 = ...` of the caller's own is caught by the type check in the expansion.
            match names.as_slice() {
                ["i64"] | ["core" | "std", "primitive", "i64"] => Some(Inner::I64),
                ["u64"] | ["core" | "std", "primitive", "u64"] => Some(Inner::U64),
                _ => None,
            }
        }
        _ => None,
    };
    if inner.is_none() {
        cx.error_spanned(&field.ty, "the field of a SnowflakeId must be `i64` or `u64`: an ID is a 64-bit integer");
    }
    if usable { inner } else { None }
}
