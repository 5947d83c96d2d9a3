//! The one line a lease state file keeps of a grant: its format, and nothing else.

use super::record::Record;

/// What a lease state file keeps (`docs/lease-rules.md` rule 11).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Saved {
    pub(crate) namespace: String,
    pub(crate) worker: u64,
    pub(crate) token: String,
    /// The record as last acknowledged.
    pub(crate) value: String,
    /// The acknowledged reservation: nothing above it is issued.
    pub(crate) bound_ms: i64,
    /// Until when (the lease's clock) the acknowledged reservation lets it issue.
    pub(crate) valid_until_ms: i64,
    /// Nothing was issued above this, and nothing is before the next file is written.
    pub(crate) issued_limit_ms: i64,
    /// A release may have been written since: the grant is not resumed from this file.
    pub(crate) releasing: bool,
}

impl Saved {
    /// The file's one line: `s2|releasing|namespace|worker|token|bound|valid until|issued
    /// limit|record` (the record, which may hold `|`, last).
    pub(crate) fn encode(&self) -> String {
        let Saved { namespace, worker, token, value, bound_ms, valid_until_ms, issued_limit_ms, releasing } = self;
        let releasing = u8::from(*releasing);
        format!("s2|{releasing}|{namespace}|{worker}|{token}|{bound_ms}|{valid_until_ms}|{issued_limit_ms}|{value}")
    }

    /// A file's line read back; `None` for anything else.
    pub(crate) fn decode(text: &str) -> Option<Saved> {
        let mut fields = text.trim_end_matches('\n').strip_prefix("s2|")?.splitn(8, '|');
        let releasing = match fields.next()? {
            "0" => false,
            "1" => true,
            _ => return None,
        };
        let namespace = fields.next()?.to_owned();
        let worker = fields.next()?.parse().ok()?;
        let token = fields.next()?.to_owned();
        let bound_ms = fields.next()?.parse().ok()?;
        let valid_until_ms = fields.next()?.parse().ok()?;
        let issued_limit_ms = fields.next()?.parse().ok()?;
        let value = fields.next()?.to_owned();
        let record = Record::decode(&value)?;
        let saved = Saved { namespace, worker, token, value, bound_ms, valid_until_ms, issued_limit_ms, releasing };
        (record.is_token(&saved.token) && issued_limit_ms <= bound_ms).then_some(saved)
    }
}

#[cfg(test)]
mod tests {
    use super::Saved;
    use crate::worker::lease::protocol::record::{Holder, Record};

    fn saved() -> Saved {
        let token = "0123456789abcdef0123456789abcdef".to_owned();
        let record = Record {
            rev: 3,
            fence: 7,
            expires_ms: 2_000,
            high_water_ms: 9_000,
            generation: 0x1234,
            holder: Some(Holder { token: token.clone(), name: "h:1".into() }),
        };
        Saved {
            namespace: "shop".into(),
            worker: 1,
            token,
            value: record.encode(),
            bound_ms: 9_000,
            valid_until_ms: 8_000,
            issued_limit_ms: 1_500,
            releasing: false,
        }
    }

    #[test]
    fn a_line_reads_back_as_written_and_a_line_that_contradicts_itself_not_at_all() {
        let good = saved();
        assert_eq!(Saved::decode(&good.encode()), Some(good.clone()));
        // A record of another holder's token than the file's own.
        let other = Saved { token: "f".repeat(32), ..good.clone() };
        assert_eq!(Saved::decode(&other.encode()), None);
        // A limit above the reservation it was issued under.
        let beyond = Saved { issued_limit_ms: good.bound_ms + 1, ..good.clone() };
        assert_eq!(Saved::decode(&beyond.encode()), None);
        for hostile in ["", "s2", "s1|0|shop|1", "s2|2|shop|1|t|1|1|1|x", "s2|0|shop|-1|t|1|1|1|x"] {
            assert_eq!(Saved::decode(hostile), None, "{hostile:?}");
        }
    }
}
