//! Which server type a Rust type is, and whether the server's layout for it is the type's own.

use std::any::TypeId;
use std::collections::HashMap;
use std::sync::Mutex;

use snowflake_types::{Layout, SnowflakeId};

use crate::Error;
use crate::pb;

/// The name a typed call asks the server for, unless [`crate::SnowflakeClient::set_name`]
/// gives another: the Rust type's name without a trailing `Id`, in snake case (`OrderId` →
/// `order`, `CustomerAccountId` → `customer_account`, `Tweet` → `tweet`), as
/// `snowflake serve --id NAME=LAYOUT` names types.
///
/// ```
/// use snowflake_client::type_name;
/// use typed_snowflake::SnowflakeId;
///
/// #[derive(SnowflakeId, Clone, Copy)]
/// #[layout(time = 42, worker = 5, seq = 16, epoch = "2021-05-05")]
/// struct CustomerAccountId(i64);
///
/// assert_eq!(type_name::<CustomerAccountId>(), "customer_account");
/// ```
pub fn type_name<T: SnowflakeId>() -> String {
    snake_case(T::NAME.strip_suffix("Id").or_else(|| T::NAME.strip_suffix("ID")).unwrap_or(T::NAME))
}

fn snake_case(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    let mut previous: Option<char> = None;
    for c in name.chars() {
        if c.is_ascii_uppercase() {
            if previous.is_some_and(|p| p.is_ascii_lowercase() || p.is_ascii_digit()) {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
        previous = Some(c);
    }
    if out.is_empty() { name.to_ascii_lowercase() } else { out }
}

/// The names given to Rust types, and the types whose layout the server was found to serve.
#[derive(Debug, Default)]
pub(crate) struct Types {
    names: Mutex<HashMap<TypeId, String>>,
    checked: Mutex<HashMap<TypeId, String>>,
}

impl Types {
    pub(crate) fn set_name<T: SnowflakeId>(&self, name: String) {
        let key = TypeId::of::<T>();
        self.names.lock().unwrap_or_else(|p| p.into_inner()).insert(key, name);
        self.checked.lock().unwrap_or_else(|p| p.into_inner()).remove(&key);
    }

    pub(crate) fn name_of<T: SnowflakeId>(&self) -> String {
        let names = self.names.lock().unwrap_or_else(|p| p.into_inner());
        names.get(&TypeId::of::<T>()).cloned().unwrap_or_else(type_name::<T>)
    }

    /// The server's name of `T` once its layout was found equal to `T`'s.
    pub(crate) fn checked<T: SnowflakeId>(&self) -> Option<String> {
        self.checked.lock().unwrap_or_else(|p| p.into_inner()).get(&TypeId::of::<T>()).cloned()
    }

    /// Compares the server's type `name` (from `ListTypes`) with `T`; remembers it when equal.
    pub(crate) fn check<T: SnowflakeId>(&self, name: String, served: &pb::ListTypesResponse) -> Result<String, Error> {
        let local = T::LAYOUT.to_string();
        let Some(info) = served.types.iter().find(|t| t.name == name) else {
            return Err(Error::UnknownType {
                rust: T::NAME,
                name,
                layout: local,
                served: served.types.iter().map(|t| t.name.clone()).collect(),
            });
        };
        // The layout in the text form, read as the server reads `--id`: equal layouts are
        // equal whatever way they were written (a preset, an epoch in milliseconds).
        match info.layout.parse::<Layout>() {
            Ok(layout) if layout == T::LAYOUT => {
                self.checked.lock().unwrap_or_else(|p| p.into_inner()).insert(TypeId::of::<T>(), name.clone());
                Ok(name)
            }
            _ => Err(Error::LayoutMismatch { rust: T::NAME, name, server: info.layout.clone(), local }),
        }
    }
}

/// `ids` as `T`s, each checked against `T`'s layout.
pub(crate) fn wrap<T: SnowflakeId>(ids: Vec<u64>) -> Result<Vec<T>, Error> {
    ids.into_iter().map(wrap_one).collect()
}

/// One ID's 64 bits as a `T` (the bit pattern of its `i64`, as the server writes it).
pub(crate) fn wrap_one<T: SnowflakeId>(id: u64) -> Result<T, Error> {
    T::from_raw(id.cast_signed()).map_err(|source| Error::NotAnId { rust: T::NAME, id, source })
}

#[cfg(test)]
mod tests {
    use super::snake_case;

    #[test]
    fn names_in_snake_case() {
        for (rust, server) in [
            ("Order", "order"),
            ("CustomerAccount", "customer_account"),
            ("Http2Stream", "http2_stream"),
            ("URL", "url"),
        ] {
            assert_eq!(snake_case(rust), server, "{rust}");
        }
    }
}
