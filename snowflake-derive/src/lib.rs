//! `#[derive(SnowflakeId)]`: the compile-time half of typed-snowflake.
//!
//! A pipeline of one module per step: `attr` parses the attributes (keeping each
//! value's tokens for error spans; values are read by `snowflake_layout`), `ast` checks the
//! item's shape, `valid` applies the rules that span several keys (`snowflake_layout::rules`,
//! the text form's too) and reports each issue at its key's tokens, and `expand` writes the
//! tokens. Every error is collected in a `ctxt::Ctxt` and reported together; where the item's shape is usable,
//! the expansion is still emitted (with placeholder widths) so that one mistake in
//! `#[layout]` does not cascade into errors at every use of the type.
#![forbid(unsafe_code)]

mod ast;
mod attr;
mod ctxt;
mod expand;
mod valid;

use proc_macro::TokenStream;

/// Derives a typed Snowflake ID for `struct Name(i64);` or `struct Name(u64);`.
///
/// See the `typed-snowflake` crate for the attributes and what the derive generates.
#[proc_macro_derive(SnowflakeId, attributes(layout, snowflake))]
pub fn derive_snowflake_id(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    expand::derive(&input).into()
}
