//! The expansion names nothing through the caller's scope: it compiles beside items that
//! shadow every prelude name, primitive type name and crate name it could lean on, under
//! lints that reject undocumented public items and needless qualification.
#![deny(missing_docs, unused_qualifications, unused_imports, unused_results)]
#![allow(non_camel_case_types, dead_code)]

use ::typed_snowflake::SnowflakeId as Derive;

/// Shadows of every prelude name the expansion could use.
pub mod shadows {
    /// Not core's.
    pub struct Result;
    /// Not core's.
    pub struct Option;
    /// Not core's.
    pub struct Ok;
    /// Not core's.
    pub struct Err;
    /// Not core's.
    pub struct Some;
    /// Not core's.
    pub struct None;
    /// Not alloc's.
    pub struct String;
    /// Not alloc's.
    pub struct Vec;
    /// Not alloc's.
    pub struct Box;
    /// Not core's.
    pub trait From {}
    /// Not core's.
    pub trait TryFrom {}
    /// Not core's.
    pub trait Into {}
    /// Not core's.
    pub trait Display {}
    /// Not core's.
    pub trait Debug {}
    /// Not core's.
    pub trait FromStr {}
    /// Not core's.
    pub trait Sized {}
    /// Not core's.
    pub trait Send {}
    /// Not core's.
    pub trait Sync {}
    /// Not the primitive.
    pub struct u64;
    /// Not the primitive.
    pub struct u32;
    /// Not the primitive.
    pub struct usize;
    /// Not the primitive.
    pub struct f64;
    /// Not the primitive.
    pub struct str;
    /// Not the primitive.
    pub struct bool;
    /// Not a static the expansion declares.
    pub const SLOT: () = ();
}

#[allow(unused_imports)]
use shadows::*;

/// Not the core crate.
pub mod core {}
/// Not the std crate.
pub mod std {}
/// Not the alloc crate.
pub mod alloc {}
/// Not the runtime (the expansion reaches it as `::typed_snowflake`).
pub mod typed_snowflake {}
/// Not the runtime's private module.
pub mod __private {}
/// Not the serde crate.
pub mod serde {}

/// A documented public ID over `i64`, declared beside every shadow.
#[derive(Derive, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
pub struct OrderId(i64);

/// A documented public prefixed ID (`ord_…`), with the same derive list as the others.
#[derive(Derive, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
#[snowflake(prefix = "ord", accept_decimal)]
pub struct PrefixedId(i64);

/// Shadows the other integer: a `u64` field is still read as the primitive.
pub mod unsigned {
    /// Not the primitive.
    pub struct i64;

    /// A documented public ID over `u64`, in a split layout, where `i64` is not the primitive.
    #[derive(::typed_snowflake::SnowflakeId, Clone, Copy, PartialEq, Eq, Debug)]
    #[layout(time = 41, datacenter = 5, machine = 5, seq = 12, epoch = 1288834974657)]
    pub struct TweetId(u64);
}

fn main() {
    let id = OrderId::from_parts(1_700_000_000_000, 3, 9).expect("in range");
    assert_eq!((id.worker(), id.sequence()), (3, 9));
    let text = format!("{id}");
    assert!(text.parse::<OrderId>().is_ok_and(|back| back == id));
    let tweet = unsigned::TweetId::from_node_parts(1_700_000_000_000, 7, 13, 4095).expect("in range");
    assert_eq!(tweet.get(), 1_724_551_110_457_221_119);
    assert_eq!(tweet.datacenter(), 7);
    let prefixed = PrefixedId::from_parts(1_700_000_000_000, 3, 9).expect("in range");
    let text = format!("{prefixed}");
    assert!(text.starts_with("ord_") && text.parse::<PrefixedId>().is_ok_and(|back| back == prefixed));
}
