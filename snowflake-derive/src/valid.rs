//! Rules that span several keys of `#[layout]`; the result is a checked [`Spec`].

use std::cell::RefCell;

use proc_macro2::TokenStream;

use crate::ast::Inner;
use crate::attr::{LayoutAttr, Order, Unit, Value};
use crate::ctxt::Ctxt;
use crate::epoch;
use crate::preset::Preset;

/// A layout the runtime accepts. Where the input had mistakes (already reported), the
/// fields hold placeholders so the expansion can still be emitted.
pub struct Spec {
    pub time: u32,
    pub worker: u32,
    pub datacenter: u32,
    pub seq: u32,
    pub epoch_ms: i64,
    pub unit: Unit,
    pub order: Order,
    pub split: bool,
}

fn value<T: Copy>(slot: &Option<Value<T>>) -> Option<T> {
    slot.as_ref().and_then(|v| v.value)
}

/// The bits a field of `inner` holds beside its sign bit (all 64 when the shape is unknown:
/// that mistake is reported on its own).
fn limit(inner: Option<Inner>) -> u32 {
    if inner == Some(Inner::I64) { 63 } else { 64 }
}

/// Reports widths that do not fit the field; `true` when they fit.
fn check_total(cx: &Ctxt, attr: &TokenStream, inner: Option<Inner>, widths: (u32, u32, Option<u32>, u32)) -> bool {
    let (time, worker, datacenter, seq) = widths;
    let total = time + worker + seq;
    let limit = limit(inner);
    if total <= limit {
        return true;
    }
    let node = match datacenter {
        Some(dc) => format!("datacenter = {dc}, machine = {}", worker - dc),
        None => format!("worker = {worker}"),
    };
    let over = total - limit;
    let take = if over == 1 { "1 bit".to_owned() } else { format!("{over} bits") };
    let message = if limit == 63 && total == 64 {
        format!(
            "the widths sum to 64; at most 63 fit in an `i64` beside the sign bit \
             (time = {time}, {node}, seq = {seq}): take 1 bit off, or declare the field as `u64`, which holds all 64"
        )
    } else if limit == 63 {
        format!(
            "the widths sum to {total}; at most 63 fit in an `i64` beside the sign bit \
             (time = {time}, {node}, seq = {seq}): take {take} off"
        )
    } else {
        format!(
            "the widths sum to {total}; at most 64 fit in an ID (time = {time}, {node}, seq = {seq}): take {take} off"
        )
    };
    cx.error_spanned(attr, message);
    false
}

/// A `#[layout(preset = "...")]`: the scheme's layout, with the keys it leaves to the user.
fn check_preset(cx: &Ctxt, attr: &TokenStream, layout: &LayoutAttr, inner: Option<Inner>, spec: &mut Spec) {
    let Some(chosen) = &layout.preset else { return };
    let Some(preset): Option<&Preset> = chosen.value else { return };
    let fixed = |tokens: &TokenStream, key: &str, reason: &str| {
        cx.error_spanned(tokens, format!("the {} preset fixes `{key}`: {reason}", preset.name));
    };
    const WIDTHS: &str = "the scheme fixes its widths; write the widths out instead of the preset";
    if let Some(v) = &layout.datacenter {
        fixed(&v.tokens, "datacenter", WIDTHS);
    }
    if let Some(v) = &layout.machine {
        fixed(&v.tokens, "machine", WIDTHS);
    }
    if let Some(v) = &layout.unit {
        fixed(&v.tokens, "unit", "the scheme fixes its tick");
    }
    if let Some(v) = &layout.order {
        fixed(&v.tokens, "order", "the scheme fixes its field order");
    }
    let mut widths = (preset.time, preset.worker, preset.seq);
    for (key, slot, width) in [
        ("time", &layout.time, &mut widths.0),
        ("worker", &layout.worker, &mut widths.1),
        ("seq", &layout.seq, &mut widths.2),
    ] {
        let Some(v) = slot else { continue };
        if !preset.widths_configurable {
            fixed(&v.tokens, key, WIDTHS);
        } else if let Some(value) = v.value {
            if value == 0 && key != "worker" {
                cx.error_spanned(&v.tokens, format!("`{key} = 0`: the {key} field needs at least 1 bit"));
            }
            *width = value;
        }
    }
    let mut epoch_ms = preset.epoch_ms;
    match &layout.epoch {
        Some(v) if !preset.epoch_configurable => fixed(&v.tokens, "epoch", "its IDs count from one published epoch"),
        Some(v) => epoch_ms = v.value.unwrap_or(epoch_ms),
        None => {}
    }
    let (time, worker, seq) = widths;
    if inner == Some(Inner::I64) && time + worker + seq == 64 {
        cx.error_spanned(
            &chosen.tokens,
            format!(
                "the {} preset uses all 64 bits; an `i64` holds 63 beside the sign bit: declare the field as `u64`",
                preset.name
            ),
        );
        return;
    }
    let datacenter = (preset.datacenter != 0).then_some(preset.datacenter);
    if time == 0 || seq == 0 || !check_total(cx, attr, inner, (time, worker, datacenter, seq)) {
        return;
    }
    *spec = Spec {
        time,
        worker,
        datacenter: preset.datacenter,
        seq,
        epoch_ms,
        unit: preset.unit,
        order: preset.order,
        split: preset.datacenter != 0,
    };
}

pub fn check(cx: &Ctxt, ident: &syn::Ident, layout: &LayoutAttr, inner: Option<Inner>) -> Spec {
    let mut spec = Spec {
        time: 41,
        worker: 10,
        datacenter: 0,
        seq: 12,
        epoch_ms: 0,
        unit: Unit::Millis,
        order: Order::WorkerAboveSeq,
        split: false,
    };
    let Some(attr) = &layout.attr else {
        cx.error_spanned(
            ident,
            "missing #[layout(...)]: declare the widths and the epoch, e.g. \
             #[layout(time = 42, worker = 5, seq = 16, epoch = \"2021-05-05\")]",
        );
        return spec;
    };
    if layout.preset.is_some() {
        check_preset(cx, attr, layout, inner, &mut spec);
        return spec;
    }
    // Missing keys are gathered into one message: an empty `#[layout()]` is one mistake.
    let absent = RefCell::new(Vec::<(&str, &str)>::new());
    let missing = |key: &'static str, example: &'static str| absent.borrow_mut().push((key, example));
    match &layout.time {
        None => missing("time", "`time = 41`"),
        Some(v) if v.value == Some(0) => cx.error_spanned(&v.tokens, "`time = 0`: the time field needs at least 1 bit"),
        Some(_) => {}
    }
    match &layout.seq {
        None => missing("seq", "`seq = 12`"),
        Some(v) if v.value == Some(0) => cx
            .error_spanned(&v.tokens, "`seq = 0`: the sequence field needs at least 1 bit, or every tick holds one ID"),
        Some(_) => {}
    }
    if layout.epoch.is_none() {
        missing("epoch", "`epoch = \"2024-01-01\"` (a date, an RFC 3339 instant or Unix milliseconds)");
    }

    // The node field: `worker = N`, or `datacenter = N, machine = M`.
    let (worker, datacenter, split) = match (&layout.worker, &layout.datacenter, &layout.machine) {
        (Some(w), None, None) => (w.value, Some(0), false),
        (None, Some(dc), Some(m)) => {
            for half in [dc, m] {
                if half.value == Some(0) {
                    cx.error_spanned(
                        &half.tokens,
                        "datacenter and machine need at least 1 bit each; for one node write `worker = 0`",
                    );
                }
            }
            match (dc.value, m.value) {
                (Some(d), Some(m)) if d > 0 && m > 0 => (Some(d + m), Some(d), true),
                _ => (None, None, true),
            }
        }
        (Some(w), _, _) => {
            cx.error_spanned(
                &w.tokens,
                "give the node field either as `worker = N` or as `datacenter = N, machine = M`, not both",
            );
            (None, None, false)
        }
        (None, Some(dc), None) => {
            cx.error_spanned(&dc.tokens, "`datacenter` needs `machine` beside it: `datacenter = 5, machine = 5`");
            (None, None, true)
        }
        (None, None, Some(m)) => {
            cx.error_spanned(&m.tokens, "`machine` needs `datacenter` beside it: `datacenter = 5, machine = 5`");
            (None, None, true)
        }
        (None, None, None) => {
            missing(
                "worker",
                "`worker = 10` (or `datacenter = 5, machine = 5`, or `worker = 0` for a single-node type)",
            );
            (None, None, false)
        }
    };

    let mut absent = absent.into_inner();
    absent.sort_by_key(|(key, _)| ["time", "worker", "seq", "epoch"].iter().position(|k| k == key));
    if layout.complete && !absent.is_empty() {
        let keys: Vec<String> = absent.iter().map(|(key, _)| format!("`{key}`")).collect();
        let examples: Vec<&str> = absent.iter().map(|&(_, example)| example).collect();
        cx.error_spanned(attr, format!("#[layout] is missing {}: add {}", keys.join(", "), examples.join(", ")));
    }

    let time = value(&layout.time).filter(|&t| t > 0);
    let seq = value(&layout.seq).filter(|&s| s > 0);
    if let (Some(time), Some(worker), Some(seq)) = (time, worker, seq) {
        let halves = split.then(|| datacenter.unwrap_or(0));
        if check_total(cx, attr, inner, (time, worker, halves, seq))
            && let Some(datacenter) = datacenter
        {
            spec.time = time;
            spec.worker = worker;
            spec.datacenter = datacenter;
            spec.seq = seq;
            spec.split = split;
        }
    }
    if let Some(epoch) = value(&layout.epoch) {
        spec.epoch_ms = epoch;
    }
    if let Some(unit) = value(&layout.unit) {
        spec.unit = unit;
    }
    if let Some(order) = value(&layout.order) {
        spec.order = order;
    }
    spec
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
    const EXPECTED: &str = "expected Unix seconds, e.g. SOURCE_DATE_EPOCH=1700000000";
    match var {
        Ok(text) => match text.parse::<u64>() {
            Ok(secs) if text.bytes().all(|b| b.is_ascii_digit()) => {
                Ok(i64::try_from(secs).unwrap_or(i64::MAX).saturating_mul(1000))
            }
            _ => Err(format!("SOURCE_DATE_EPOCH={text:?} is not a build date: {EXPECTED}")),
        },
        Err(std::env::VarError::NotUnicode(text)) => {
            Err(format!("SOURCE_DATE_EPOCH={text:?} is not a build date: {EXPECTED}"))
        }
        Err(std::env::VarError::NotPresent) => Ok(now()),
    }
}

/// The last Unix millisecond a time field of `time` bits holds (as `Layout::max_timestamp_ms`).
pub fn max_timestamp_ms(time: u32, epoch_ms: i64, unit: Unit) -> i64 {
    let ticks = 1i128 << time.min(63);
    let last = i128::from(epoch_ms) + ticks * i128::from(unit.millis()) - 1;
    i64::try_from(last).unwrap_or(i64::MAX)
}

/// A type that generates must be able to issue at build time: its epoch has passed and its
/// time field has not run out. `#[snowflake(decode_only)]` types skip this check.
pub fn check_dates(cx: &Ctxt, layout: &LayoutAttr, spec: &Spec) {
    // A preset's widths and epoch are in the spec; an error points at the key the user wrote,
    // or at the preset's name when the value is the scheme's own.
    let preset = layout.preset.as_ref().filter(|p| p.value.is_some());
    let (time_tokens, bits, epoch_tokens, epoch_ms, unit) = match preset {
        Some(p) => (
            layout.time.as_ref().map_or(&p.tokens, |v| &v.tokens),
            spec.time,
            layout.epoch.as_ref().map_or(&p.tokens, |v| &v.tokens),
            spec.epoch_ms,
            spec.unit,
        ),
        None => {
            let (Some(time), Some(epoch)) = (&layout.time, &layout.epoch) else { return };
            let (Some(bits), Some(epoch_ms)) = (time.value.filter(|&t| t > 0), epoch.value) else { return };
            (&time.tokens, bits, &epoch.tokens, epoch_ms, value(&layout.unit).unwrap_or(Unit::Millis))
        }
    };
    let build_ms = match build_date_ms() {
        Ok(ms) => ms,
        Err(why) => {
            if let Some(attr) = &layout.attr {
                cx.error_spanned(attr, why);
            }
            return;
        }
    };
    if epoch_ms > build_ms {
        cx.error_spanned(
            epoch_tokens,
            format!(
                "the epoch {} lies after the build date: no ID can be issued before it; choose an epoch \
                 in the past (the build date is SOURCE_DATE_EPOCH when set, else today)",
                epoch::format(epoch_ms)
            ),
        );
        return;
    }
    let last_ms = max_timestamp_ms(bits, epoch_ms, unit);
    if let (Some(p), None, Some(preset)) = (preset, &layout.epoch, preset.and_then(|p| p.value))
        && last_ms < build_ms
    {
        cx.error_spanned(
            &p.tokens,
            format!(
                "the {} preset's default epoch ran out on {}: its {bits}-bit time field no longer holds \
                 the present; add an epoch of your own, e.g. `epoch = \"2025-01-01\"`, or, for a type \
                 that only decodes the scheme's IDs, add #[snowflake(decode_only)]",
                preset.name,
                epoch::format(last_ms),
            ),
        );
    } else if last_ms < build_ms {
        cx.error_spanned(
            time_tokens,
            format!(
                "the time field ran out on {}: {bits} bits of {} ms ticks from {} end before the build date; \
                 widen `time`, choose a later epoch or a longer `unit`, or, for a type that only decodes \
                 IDs of an existing scheme, add #[snowflake(decode_only)]",
                epoch::format(last_ms),
                unit.millis(),
                epoch::format(epoch_ms),
            ),
        );
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
