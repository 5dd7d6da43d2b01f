//! The released contract is kept: each service's `spec/NAME/` against its `spec/NAME/released/` (the specs
//! clients were last given) has no breaking change without a new major version of the service, as
//! the prospector's document promises ("Breaking changes appear only in new major versions"). The
//! rules themselves are tested pair by pair in `codegen/tests/diff.rs`.

#[test]
fn the_specs_keep_the_released_contract_or_raise_the_major_version() {
    let root = xtask::workspace_root();
    let mut released = Vec::new();
    for (spec, _) in xtask::projects(&root) {
        let spec = root.join(spec);
        if !spec.join("released").is_dir() {
            continue;
        }
        let report = codegen::project::diff(&spec.join("released"), &spec).unwrap();
        assert!(
            report.refused().is_empty(),
            "{} breaks the released contract without a new major version (or release it: see \
             docs/changing-a-contract.md):\n{report}",
            spec.display()
        );
        released.extend(report.majors.keys().cloned());
    }
    assert_eq!(
        released,
        ["everything", "notes", "prospector", "vault"],
        "every service of the repository has a released contract"
    );
}
