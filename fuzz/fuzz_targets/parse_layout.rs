//! `Layout`'s text form and IDs of 64-bit layouts: parsing never panics; a layout that
//! parses prints a text that parses back to it; decimal text is an ID of a 64-bit layout
//! exactly when it is a `u64`, and then it is that `u64`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use typed_snowflake::Layout;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    match text.parse::<Layout>() {
        Ok(layout) => {
            let printed = layout.to_string();
            assert_eq!(printed.parse::<Layout>(), Ok(layout), "{text:?} printed as {printed:?}");
            assert!(layout.used_bits() <= 64 && layout.epoch_ms() >= 0);
            // Its first and last IDs decode without a panic.
            let last = layout.decode_u64(layout.max_id_u64()).expect("the largest ID is an ID");
            assert_eq!(last.ticks, layout.max_ticks());
        }
        Err(e) => assert!(!e.to_string().is_empty(), "an empty error message for {text:?}"),
    }
    let reference = if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        let trimmed = text.trim_start_matches('0');
        if trimmed.is_empty() { Some(0) } else { trimmed.parse::<u64>().ok() }
    } else {
        None
    };
    for layout in [Layout::DISCORD, Layout::MASTODON, Layout::INSTAGRAM] {
        let id = layout.parse_id(&text).map(i64::cast_unsigned);
        assert_eq!(id.ok(), reference, "{text:?}");
    }
});
