//! The released contract is kept: `spec/` against `spec/released/` (the specs clients were last
//! given) has no breaking change without a new major version of its service, as the prospector's
//! document promises ("Breaking changes appear only in new major versions"). The rules themselves
//! are tested pair by pair in `codegen/tests/diff.rs`.

#[test]
fn the_specs_keep_the_released_contract_or_raise_the_major_version() {
    let root = xtask::workspace_root();
    let report = codegen::project::diff(&root.join("spec/released"), &root.join("spec")).unwrap();
    assert!(
        report.refused().is_empty(),
        "spec/ breaks the released contract without a new major version (or release it: see the README, \
         \"Changing a released contract\"):\n{report}"
    );
    assert_eq!(
        report.majors.keys().collect::<Vec<_>>(),
        ["prospector", "vault"],
        "every service of spec/ has a released contract"
    );
}
