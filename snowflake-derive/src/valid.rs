//! The rules that span several keys of `#[layout]`, and the expiry against the build date:
//! `snowflake_layout::rules` decides, and each issue is reported at the tokens of the key it
//! names (or at the whole attribute).

use proc_macro2::TokenStream;
use snowflake_layout::Layout;
use snowflake_layout::rules::{self, Given, Key, Keys, Spelling};

use crate::ast::Inner;
use crate::attr::{LayoutAttr, Value};
use crate::ctxt::Ctxt;

/// A key as the rules see it: absent, given but refused (already reported), or a value.
fn given<T: Copy>(slot: &Option<Value<T>>) -> Given<T> {
    match slot {
        None => Given::Absent,
        Some(Value { value: None, .. }) => Given::Refused,
        Some(Value { value: Some(value), .. }) => Given::Value(*value),
    }
}

fn keys(layout: &LayoutAttr) -> Keys {
    Keys {
        time: given(&layout.time),
        worker: given(&layout.worker),
        datacenter: given(&layout.datacenter),
        machine: given(&layout.machine),
        seq: given(&layout.seq),
        epoch: given(&layout.epoch),
        unit: given(&layout.unit),
        order: given(&layout.order),
        preset: given(&layout.preset),
        complete: layout.complete,
    }
}

/// How messages spell keys: as the attribute was written.
fn spelling(layout: &LayoutAttr) -> Spelling {
    if layout.text_form { Spelling::Text } else { Spelling::Attribute }
}

/// The tokens an issue concerns: its key's value, else the whole attribute.
fn tokens<'a>(layout: &'a LayoutAttr, attr: &'a TokenStream, key: Option<Key>) -> &'a TokenStream {
    let slot = match key {
        Some(Key::Time) => layout.time.as_ref().map(|v| &v.tokens),
        Some(Key::Worker) => layout.worker.as_ref().map(|v| &v.tokens),
        Some(Key::Datacenter) => layout.datacenter.as_ref().map(|v| &v.tokens),
        Some(Key::Machine) => layout.machine.as_ref().map(|v| &v.tokens),
        Some(Key::Seq) => layout.seq.as_ref().map(|v| &v.tokens),
        Some(Key::Epoch) => layout.epoch.as_ref().map(|v| &v.tokens),
        Some(Key::Unit) => layout.unit.as_ref().map(|v| &v.tokens),
        Some(Key::Order) => layout.order.as_ref().map(|v| &v.tokens),
        Some(Key::Preset) => layout.preset.as_ref().map(|v| &v.tokens),
        None => None,
    };
    slot.unwrap_or(attr)
}

/// The layout the attribute declares, for a field of `inner`; `None` after a mistake, each
/// one reported.
pub fn check(cx: &Ctxt, ident: &syn::Ident, layout: &LayoutAttr, inner: Option<Inner>) -> Option<Layout> {
    let Some(attr) = &layout.attr else {
        cx.error_spanned(
            ident,
            "missing #[layout(...)]: declare the widths and the epoch, e.g. \
             #[layout(time = 42, worker = 5, seq = 16, epoch = \"2021-05-05\")]",
        );
        return None;
    };
    // The bits a field of `inner` holds beside its sign bit (all 64 when the shape is
    // unknown: that mistake is reported on its own).
    let bits = if inner == Some(Inner::I64) { 63 } else { 64 };
    let (resolved, issues) = rules::resolve(&keys(layout), bits);
    for issue in &issues {
        cx.error_spanned(tokens(layout, attr, issue.key()), issue.message(spelling(layout)));
    }
    resolved
}

/// The build date in Unix milliseconds: `SOURCE_DATE_EPOCH` (Unix seconds, for reproducible
/// builds) when it is set, else the system clock at macro expansion.
fn build_date_ms() -> Result<i64, String> {
    let now = || {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        i64::try_from(now.as_millis()).unwrap_or(i64::MAX)
    };
    build_date_from(std::env::var("SOURCE_DATE_EPOCH"), now)
}

fn build_date_from(var: Result<String, std::env::VarError>, now: impl FnOnce() -> i64) -> Result<i64, String> {
    match var {
        Ok(text) => rules::source_date_epoch_ms(&text),
        Err(std::env::VarError::NotUnicode(text)) => Err(format!(
            "SOURCE_DATE_EPOCH={text:?} is not a build date: expected Unix seconds, e.g. SOURCE_DATE_EPOCH=1700000000"
        )),
        Err(std::env::VarError::NotPresent) => Ok(now()),
    }
}

/// A type that generates must be able to issue at build time: its epoch has passed and its
/// time field has not run out. `#[snowflake(decode_only)]` types skip this check.
pub fn check_dates(cx: &Ctxt, layout: &LayoutAttr, resolved: Option<&Layout>) {
    let Some(attr) = &layout.attr else { return };
    let keys = keys(layout);
    // Every dated layout's epoch lies after the first instant: no issue there means no dates
    // to judge, and neither the clock nor SOURCE_DATE_EPOCH is read.
    if rules::expiry(&keys, resolved, i64::MIN).is_none() {
        return;
    }
    match build_date_ms() {
        Ok(build_ms) => {
            if let Some(expired) = rules::expiry(&keys, resolved, build_ms) {
                cx.error_spanned(tokens(layout, attr, Some(expired.key())), expired.message(spelling(layout)));
            }
        }
        Err(why) => cx.error_spanned(attr, why),
    }
}

#[cfg(test)]
mod tests {
    use std::env::VarError;

    use super::build_date_from;

    #[test]
    fn source_date_epoch_is_the_build_date() {
        let never = || panic!("the clock is read only without SOURCE_DATE_EPOCH");
        assert_eq!(build_date_from(Ok("1700000000".into()), never), Ok(1_700_000_000_000));
        assert_eq!(build_date_from(Ok("0".into()), never), Ok(0));
        assert_eq!(build_date_from(Ok("99999999999999999999".into()), never).ok(), None);
        assert_eq!(build_date_from(Ok("18446744073709551615".into()), never), Ok(i64::MAX));
        assert_eq!(build_date_from(Err(VarError::NotPresent), || 42), Ok(42));
        for bad in ["", " 1700000000", "+1700000000", "-1", "1.5", "1e9", "yesterday", "1700000000\n"] {
            let err = build_date_from(Ok(bad.into()), never).unwrap_err();
            assert!(err.contains("is not a build date"), "{bad:?}: {err}");
        }
        let not_unicode = VarError::NotUnicode(std::ffi::OsString::from("x"));
        assert!(build_date_from(Err(not_unicode), never).is_err());
    }
}
