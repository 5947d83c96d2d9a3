//! `FromRedisValue` on derived types: an arbitrary `redis::Value` (built with `arbitrary`,
//! nested, every reply kind including server errors parsed from RESP) never panics; an ID
//! is accepted only from an integer, or a bulk, simple or verbatim string of digits (also
//! under an attribute), that the layout accepts.
#![no_main]

use std::fmt::Debug;
use std::str::FromStr;

use arbitrary::{Arbitrary, Unstructured};
use libfuzzer_sys::fuzz_target;
use redis::{FromRedisValue, PushKind, Value, VerbatimFormat};
use typed_snowflake::SnowflakeId;
use typed_snowflake_fuzz::{OrderId, SmallId, SonyId, TweetId, check_valid};

/// A Redis reply, one variant per `redis::Value` kind.
#[derive(Arbitrary, Debug)]
enum Reply {
    Nil,
    Int(i64),
    /// Digits more often than not: the interesting strings are numbers.
    Digits(u64, u8),
    BulkString(Vec<u8>),
    Array(Vec<Reply>),
    SimpleString(String),
    Okay,
    Map(Vec<(Reply, Reply)>),
    Attribute(Box<Reply>, Vec<(Reply, Reply)>),
    Set(Vec<Reply>),
    Double(f64),
    Boolean(bool),
    Verbatim(u8, String),
    BigNumber(Vec<u8>),
    Push(u8, Vec<Reply>),
    ServerError(String),
}

impl Reply {
    fn into_value(self, depth: u32) -> Value {
        // Deeper than this adds nothing but time.
        let nest = |items: Vec<Reply>| items.into_iter().take(8).map(|r| r.into_value(depth + 1)).collect();
        let pairs = |items: Vec<(Reply, Reply)>| {
            items.into_iter().take(8).map(|(k, v)| (k.into_value(depth + 1), v.into_value(depth + 1))).collect()
        };
        if depth > 4 {
            return Value::Nil;
        }
        match self {
            Reply::Nil => Value::Nil,
            Reply::Int(v) => Value::Int(v),
            Reply::Digits(v, zeros) => {
                Value::BulkString(format!("{}{v}", "0".repeat(usize::from(zeros % 4))).into_bytes())
            }
            Reply::BulkString(bytes) => Value::BulkString(bytes),
            Reply::Array(items) => Value::Array(nest(items)),
            Reply::SimpleString(text) => Value::SimpleString(text),
            Reply::Okay => Value::Okay,
            Reply::Map(items) => Value::Map(pairs(items)),
            Reply::Attribute(data, attributes) => {
                Value::Attribute { data: Box::new(data.into_value(depth + 1)), attributes: pairs(attributes) }
            }
            Reply::Set(items) => Value::Set(nest(items)),
            Reply::Double(d) => Value::Double(d),
            Reply::Boolean(b) => Value::Boolean(b),
            Reply::Verbatim(format, text) => {
                let format = match format % 3 {
                    0 => VerbatimFormat::Text,
                    1 => VerbatimFormat::Markdown,
                    _ => VerbatimFormat::Unknown(text.chars().take(3).collect()),
                };
                Value::VerbatimString { format, text }
            }
            Reply::BigNumber(digits) => Value::BigNumber(digits),
            Reply::Push(kind, data) => {
                let kind = match kind % 4 {
                    0 => PushKind::Message,
                    1 => PushKind::Invalidate,
                    2 => PushKind::Disconnection,
                    _ => PushKind::Other("x".to_owned()),
                };
                Value::Push { kind, data: nest(data) }
            }
            Reply::ServerError(text) => {
                // The only public way to a server error: parse one from RESP.
                let line: String = text.chars().filter(|c| *c != '\r' && *c != '\n').collect();
                redis::parse_redis_value(format!("-ERR {line}\r\n").as_bytes()).unwrap_or(Value::Nil)
            }
        }
    }
}

/// The text an accepted reply held, or the integer: what the layout must accept.
fn reference<T: SnowflakeId>(value: &Value) -> Option<i64> {
    match value {
        Value::Int(raw) => T::LAYOUT.validate(*raw).ok(),
        Value::BulkString(bytes) => {
            std::str::from_utf8(bytes).ok().and_then(|t| T::parse_str(t).ok()).map(|id| id.to_raw())
        }
        Value::SimpleString(text) | Value::VerbatimString { text, .. } => T::parse_str(text).ok().map(|id| id.to_raw()),
        Value::Attribute { data, .. } => reference::<T>(data),
        _ => None,
    }
}

fn check<T>(value: &Value)
where
    T: SnowflakeId + Debug + PartialEq + ToString + FromStr + FromRedisValue,
    <T as FromStr>::Err: Debug,
{
    let by_ref = T::from_redis_value_ref(value);
    let owned = T::from_redis_value(value.clone());
    if let Ok(id) = &by_ref {
        check_valid(id);
    }
    assert_eq!(by_ref.as_ref().ok(), owned.as_ref().ok(), "{} by reference and owned differ on {value:?}", T::NAME);
    assert_eq!(
        by_ref.as_ref().ok().map(SnowflakeId::to_raw),
        reference::<T>(value),
        "{} from {value:?}: {:?}",
        T::NAME,
        by_ref.as_ref().err().map(ToString::to_string)
    );
    // Lists and optional values of IDs never panic either.
    if let Ok(ids) = Vec::<T>::from_redis_value_ref(value) {
        ids.iter().for_each(check_valid);
    }
    if let Ok(Some(id)) = Option::<T>::from_redis_value_ref(value) {
        check_valid(&id);
    }
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let Ok(reply) = Reply::arbitrary(&mut u) else { return };
    let value = reply.into_value(0);
    check::<OrderId>(&value);
    check::<TweetId>(&value);
    check::<SonyId>(&value);
    check::<SmallId>(&value);
});
