//! What the protocol writes into a store's slots (`docs/lease-rules.md`, "What a store keeps"),
//! each one line of printable ASCII whose fields only this file knows:
//!
//! - A record: `r1|rev|fence|expires|high water|generation|token|holder`, e.g.
//!   `r1|7|1700000000000000|1700000010000|1700000060000|5f0c6a1e9b2d4c3a|<32 hex>|web-1:4242`;
//!   a free worker ID has `-` for its token and holder.
//! - The marker: `m1|rev|generation|since|next|declared|incarnation`, e.g.
//!   `m1|3|5f0c6a1e9b2d4c3a|1699990000000|4|0|run-7f3a…`.
//!
//! `rev` counts the writes of a slot.

/// The live lease in a record: whose it is.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Holder {
    /// Unique per grant (32 hexadecimal digits): what a renewal and the release present.
    pub(crate) token: String,
    /// `host:pid`, for operators.
    pub(crate) name: String,
}

/// A worker ID's record.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Record {
    /// How many times the slot was written.
    pub(crate) rev: u64,
    /// The fencing number of the last grant: strictly increasing per worker ID.
    pub(crate) fence: u64,
    /// Until when the holder's lease lasts without a renewal (Unix ms, on the writer's clock).
    pub(crate) expires_ms: i64,
    /// Every timestamp any holder of the worker ID may have issued lies at or below this.
    pub(crate) high_water_ms: i64,
    /// The generation of the marker under which it was granted.
    pub(crate) generation: u64,
    /// `None`: released.
    pub(crate) holder: Option<Holder>,
}

/// A namespace's marker.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Marker {
    /// How many times the slot was written.
    pub(crate) rev: u64,
    /// Random, new whenever the marker is written afresh.
    pub(crate) generation: u64,
    /// When it was written afresh (Unix ms, on the store's clock, or else the writer's).
    pub(crate) since_ms: i64,
    /// Worker IDs `0..next` may have been granted under this generation; `next..` were not.
    pub(crate) next: u64,
    /// Declared new: nothing was issued in the namespace before `since_ms`.
    pub(crate) declared: bool,
    /// The store's incarnation when it was written afresh.
    pub(crate) incarnation: String,
}

impl Record {
    /// The record as a store keeps it.
    pub(crate) fn encode(&self) -> String {
        let (token, name) = match &self.holder {
            Some(holder) => (holder.token.as_str(), holder.name.as_str()),
            None => ("-", "-"),
        };
        format!(
            "r1|{}|{}|{}|{}|{:016x}|{token}|{name}",
            self.rev, self.fence, self.expires_ms, self.high_water_ms, self.generation
        )
    }

    /// A record read back; `None` for text this protocol does not write.
    pub(crate) fn decode(text: &str) -> Option<Record> {
        let mut fields = text.strip_prefix("r1|")?.split('|');
        let rev = fields.next()?.parse().ok()?;
        let fence = fields.next()?.parse().ok()?;
        let expires_ms = fields.next()?.parse().ok()?;
        let high_water_ms = fields.next()?.parse().ok()?;
        let generation = hex16(fields.next()?)?;
        let token = fields.next()?;
        let name = fields.next()?;
        if fields.next().is_some() {
            return None;
        }
        let holder = match (token, name) {
            ("-", "-") => None,
            (token, name) if is_token(token) && is_name(name) => {
                Some(Holder { token: token.to_owned(), name: name.to_owned() })
            }
            _ => return None,
        };
        Some(Record { rev, fence, expires_ms, high_water_ms, generation, holder })
    }

    /// Whether a live lease may still hold it at `now_ms`, the clocks `tolerance_ms` apart.
    pub(crate) fn held_at(&self, now_ms: i64, tolerance_ms: i64) -> bool {
        self.holder.is_some() && now_ms <= self.expires_ms.saturating_add(tolerance_ms)
    }

    /// Whether it is this grant's.
    pub(crate) fn is_token(&self, token: &str) -> bool {
        self.holder.as_ref().is_some_and(|h| h.token == token)
    }
}

impl Marker {
    /// Whether the marker vouches for `record` of `worker` (`docs/lease-rules.md` rule 3).
    pub(crate) fn vouches(&self, worker: u64, record: &Record) -> bool {
        worker < self.next && record.generation == self.generation
    }

    /// The marker as a store keeps it.
    pub(crate) fn encode(&self) -> String {
        let Marker { rev, generation, since_ms, next, declared, incarnation } = self;
        format!("m1|{rev}|{generation:016x}|{since_ms}|{next}|{}|{incarnation}", u8::from(*declared))
    }

    /// A marker read back; `None` for text this protocol does not write.
    pub(crate) fn decode(text: &str) -> Option<Marker> {
        let mut fields = text.strip_prefix("m1|")?.splitn(6, '|');
        let rev = fields.next()?.parse().ok()?;
        let generation = hex16(fields.next()?)?;
        let since_ms = fields.next()?.parse().ok()?;
        let next = fields.next()?.parse().ok()?;
        let declared = match fields.next()? {
            "0" => false,
            "1" => true,
            _ => return None,
        };
        let incarnation = fields.next()?;
        if incarnation.contains('|') {
            return None;
        }
        Some(Marker { rev, generation, since_ms, next, declared, incarnation: incarnation.to_owned() })
    }
}

/// Exactly 16 lowercase hexadecimal digits.
fn hex16(text: &str) -> Option<u64> {
    (text.len() == 16 && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))
        .then(|| u64::from_str_radix(text, 16).ok())
        .flatten()
}

fn is_token(text: &str) -> bool {
    text.len() == 32 && text.bytes().all(|b| b.is_ascii_hexdigit())
}

/// A holder's name as `holder_name` writes it: `host:pid`, or anything of the same alphabet
/// (an operator's tool), never `|`.
fn is_name(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= 64
        && text.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b':'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record() -> Record {
        Record {
            rev: 7,
            fence: 1_700_000_000_000_000,
            expires_ms: 1_700_000_010_000,
            high_water_ms: 1_700_000_060_000,
            generation: 0x5f0c_6a1e_9b2d_4c3a,
            holder: Some(Holder {
                token: "0123456789abcdef0123456789abcdef".into(),
                name: "web-1.internal:4242".into(),
            }),
        }
    }

    fn marker() -> Marker {
        Marker {
            rev: 3,
            generation: 0x5f0c_6a1e_9b2d_4c3a,
            since_ms: 1_699_990_000_000,
            next: 4,
            declared: false,
            incarnation: "sysid 7290 timeline 1".into(),
        }
    }

    #[test]
    fn records_and_markers_read_back_as_written() {
        let held = record();
        let text = held.encode();
        assert_eq!(
            text,
            "r1|7|1700000000000000|1700000010000|1700000060000|5f0c6a1e9b2d4c3a|0123456789abcdef0123456789abcdef|web-1.internal:4242"
        );
        assert_eq!(Record::decode(&text), Some(held.clone()));
        let free = Record { holder: None, high_water_ms: -5, ..held };
        assert_eq!(Record::decode(&free.encode()), Some(free));
        let m = marker();
        assert_eq!(m.encode(), "m1|3|5f0c6a1e9b2d4c3a|1699990000000|4|0|sysid 7290 timeline 1");
        assert_eq!(Marker::decode(&m.encode()), Some(m.clone()));
        let empty = Marker { incarnation: String::new(), declared: true, ..m };
        assert_eq!(Marker::decode(&empty.encode()), Some(empty));
        assert!(
            super::super::super::store::support::check_write(
                "ns",
                &[super::super::super::store::Cas::new(super::super::super::store::Slot::Worker(1), None, &text)]
            )
            .is_ok()
        );
    }

    #[test]
    fn foreign_text_is_not_a_record_nor_a_marker() {
        let good = record().encode();
        let mut hostile: Vec<String> = vec![
            String::new(),
            "r1".into(),
            "r2|7|1|2|3|5f0c6a1e9b2d4c3a|-|-".into(),
            "r1|-7|1|2|3|5f0c6a1e9b2d4c3a|-|-".into(),
            "r1|7|1|2|3|5F0C6A1E9B2D4C3A|-|-".into(),
            "r1|7|1|2|3|5f0c6a1e9b2d4c3|-|-".into(),
            "r1|7|1|x|3|5f0c6a1e9b2d4c3a|-|-".into(),
            "r1|7|1|2|3|5f0c6a1e9b2d4c3a|-|web:1".into(),
            "r1|7|1|2|3|5f0c6a1e9b2d4c3a|nothex|web:1".into(),
            format!("r1|7|1|2|3|5f0c6a1e9b2d4c3a|{}|web:1", "z".repeat(32)),
            format!("r1|7|1|2|3|5f0c6a1e9b2d4c3a|{}|web:1", "a".repeat(31)),
            "r1|7|1|2|3|5f0c6a1e9b2d4c3a|0123456789abcdef0123456789abcdef|we b:1".into(),
            "r1|18446744073709551616|1|2|3|5f0c6a1e9b2d4c3a|-|-".into(),
            "r1|7|1|9223372036854775808|3|5f0c6a1e9b2d4c3a|-|-".into(),
            format!("{good}|extra"),
        ];
        hostile.push(good.replace("r1|", "m1|"));
        for text in &hostile {
            assert_eq!(Record::decode(text), None, "{text:?}");
        }
        for text in [
            "",
            "m1|3|5f0c6a1e9b2d4c3a|1|4|2|x",
            "m1|3|5f0c6a1e9b2d4c3a|1|-4|0|x",
            "m1|3|5f0c6a1e9b2d4c3a|1|4|0|a|b",
            "m1|3|5f0c6a1e9b2d4c3a|1|4|0",
            "r1|3|5f0c6a1e9b2d4c3a|1|4|0|x",
        ] {
            assert_eq!(Marker::decode(text), None, "{text:?}");
        }
    }

    #[test]
    fn a_lease_is_held_until_it_expired_beyond_the_tolerance() {
        let held = record();
        assert!(held.held_at(held.expires_ms + 5, 5));
        assert!(!held.held_at(held.expires_ms + 6, 5));
        assert!(!Record { holder: None, ..held.clone() }.held_at(0, 5));
        assert!(held.is_token("0123456789abcdef0123456789abcdef"));
        assert!(!held.is_token("0123456789abcdef0123456789abcdee"));
    }
}
