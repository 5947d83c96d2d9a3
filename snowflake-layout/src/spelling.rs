//! The two spellings of the layout's messages (the attribute's and the text form's), and the
//! phrases both the rules and the errors quote: below both, so that neither imports the other.

/// How a message writes keys and values: as the attribute does (`epoch = "2024-01-01"`) or
/// as the text form does (`epoch=2024-01-01`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Spelling {
    /// `#[layout(time = 41, epoch = "2024-01-01")]`.
    Attribute,
    /// `time=41,epoch=2024-01-01`.
    Text,
}

/// One message in both spellings, kept side by side.
///
/// ```
/// use snowflake_layout::rules::{Spelling, UNIT_EXPECTED};
///
/// assert!(UNIT_EXPECTED.get(Spelling::Text).starts_with("expected `unit=1ms`"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Phrase {
    /// As the attribute writes it.
    pub attribute: &'static str,
    /// As the text form writes it.
    pub text: &'static str,
}

impl Phrase {
    /// The phrase in `spelling`.
    pub const fn get(&self, spelling: Spelling) -> &'static str {
        match spelling {
            Spelling::Attribute => self.attribute,
            Spelling::Text => self.text,
        }
    }
}

/// What an epoch may be, after the reason one was refused.
pub const EPOCH_EXPECTED: Phrase = Phrase {
    attribute: "expected `epoch = \"YYYY-MM-DD\"`, an RFC 3339 instant such as \"2010-11-04T01:42:54.657Z\", or \
                Unix milliseconds such as `epoch = 1288834974657`",
    text: "expected `epoch=YYYY-MM-DD`, an RFC 3339 instant such as 2010-11-04T01:42:54.657Z, or Unix milliseconds \
           such as `epoch=1288834974657`",
};

/// What a tick unit may be.
pub const UNIT_EXPECTED: Phrase = Phrase {
    attribute: "expected `unit = \"1ms\"` (the default), `\"10ms\"` (Sonyflake) or `\"1s\"` (Baidu uid-generator)",
    text: "expected `unit=1ms` (the default), `unit=10ms` (Sonyflake) or `unit=1s` (Baidu uid-generator)",
};

/// What a field order may be.
pub const ORDER_EXPECTED: Phrase = Phrase {
    attribute: "expected `order = \"time-worker-seq\"` (the default) or `\"time-seq-worker\"` (Sonyflake: the \
                sequence above the machine ID)",
    text: "expected `order=time-worker-seq` (the default) or `order=time-seq-worker` (Sonyflake)",
};
