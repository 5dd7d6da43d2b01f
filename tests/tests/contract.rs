//! The released contract is kept: `spec/` against `spec/released/` (the specs clients were last
//! given) has no breaking change without a new major version of its service, as the prospector's
//! document promises ("Breaking changes appear only in new major versions"). The rules themselves
//! are tested pair by pair in `codegen/tests/diff.rs`.

#[test]
fn the_specs_keep_the_released_contract_or_raise_the_major_version() {
    let root = xtask::workspace_root();
    let released = codegen::project::load_dir(&root.join("spec/released"), "spec/released").unwrap();
    let current = codegen::project::load_dir(&root.join("spec"), "spec").unwrap();
    let report = codegen::diff::compare(&released, &current);
    assert!(
        report.refused().is_empty(),
        "spec/ breaks the released contract without a new major version (or release it: see the README, \
         \"Changing a released contract\"):\n{report}"
    );
    let names: Vec<&str> = released.iter().map(|a| a.name()).collect();
    assert_eq!(names, ["prospector", "vault"], "every service of spec/ has a released contract");
}
