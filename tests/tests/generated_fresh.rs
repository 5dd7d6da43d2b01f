//! `cargo xtask generate --check` as part of the test suite: every committed `generated/NAME/` is
//! exactly what the spec generates.

#[test]
fn generated_code_is_up_to_date_with_the_spec() {
    let drift = xtask::check(&xtask::workspace_root()).expect("generation runs");
    assert!(drift.is_empty(), "a generated api/ crate is out of date; run `cargo xtask generate`:\n{drift}");
}
