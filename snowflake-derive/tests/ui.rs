//! Compile-time behaviour of `#[derive(SnowflakeId)]`: every mistake in `tests/ui/*.rs` is a
//! compile error that points at the offending token (one mistake per file, named after it),
//! and every layout in `tests/ui/pass/*.rs` compiles.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
    t.pass("tests/ui/pass/*.rs");
}
