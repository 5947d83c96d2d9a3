//! Rules that span several keys of `#[layout]`; the result is a checked [`Spec`].

use std::cell::RefCell;

use crate::attr::{LayoutAttr, Unit, Value};
use crate::ctxt::Ctxt;
use crate::epoch;

/// A layout the runtime accepts. Where the input had mistakes (already reported), the
/// fields hold placeholders so the expansion can still be emitted.
pub struct Spec {
    pub time: u32,
    pub worker: u32,
    pub datacenter: u32,
    pub seq: u32,
    pub epoch_ms: i64,
    pub unit: Unit,
    pub split: bool,
}

fn value<T: Copy>(slot: &Option<Value<T>>) -> Option<T> {
    slot.as_ref().and_then(|v| v.value)
}

pub fn check(cx: &Ctxt, ident: &syn::Ident, layout: &LayoutAttr) -> Spec {
    let mut spec = Spec { time: 41, worker: 10, datacenter: 0, seq: 12, epoch_ms: 0, unit: Unit::Millis, split: false };
    let Some(attr) = &layout.attr else {
        cx.error_spanned(
            ident,
            "missing #[layout(...)]: declare the widths and the epoch, e.g. \
             #[layout(time = 42, worker = 5, seq = 16, epoch = \"2021-05-05\")]",
        );
        return spec;
    };
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
        let total = time + worker + seq;
        if total > 63 {
            let node = if split {
                format!("datacenter = {}, machine = {}", datacenter.unwrap_or(0), worker - datacenter.unwrap_or(0))
            } else {
                format!("worker = {worker}")
            };
            cx.error_spanned(
                attr,
                format!(
                    "the widths sum to {total}; at most 63 fit in an `i64` beside the sign bit \
                     (time = {time}, {node}, seq = {seq}): take {} off",
                    if total - 63 == 1 { "1 bit".to_owned() } else { format!("{} bits", total - 63) }
                ),
            );
        } else if let Some(datacenter) = datacenter {
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
pub fn check_dates(cx: &Ctxt, layout: &LayoutAttr) {
    let (Some(time), Some(epoch)) = (&layout.time, &layout.epoch) else { return };
    let (Some(bits), Some(epoch_ms)) = (time.value.filter(|&t| t > 0), epoch.value) else { return };
    let unit = value(&layout.unit).unwrap_or(Unit::Millis);
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
            &epoch.tokens,
            format!(
                "the epoch {} lies after the build date: no ID can be issued before it; choose an epoch \
                 in the past (the build date is SOURCE_DATE_EPOCH when set, else today)",
                epoch::format(epoch_ms)
            ),
        );
        return;
    }
    let last_ms = max_timestamp_ms(bits, epoch_ms, unit);
    if last_ms < build_ms {
        cx.error_spanned(
            &time.tokens,
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
