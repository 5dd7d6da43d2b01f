//! Every invalid spec is rejected with messages that name the file, the place and the fix.
//!
//! Each fixture under `tests/fixtures/invalid/` is `tests/fixtures/valid/memos.toml` with exactly
//! one defect, so the expected text below is the complete output of `codegen::load`: one line per
//! problem, formatted `{file}: {place}: {problem}; fix: {fix}`.

use std::path::Path;

fn fixture(dir: &str, name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(dir).join(format!("{name}.toml"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read fixture {}: {e}", path.display()))
}

/// Loads `tests/fixtures/invalid/{name}.toml` and asserts the full error text, line by line.
fn assert_rejected_with(name: &str, expected: &[&str]) {
    let file = format!("{name}.toml");
    let text = fixture("invalid", name);
    match codegen::load(&file, &text) {
        Ok(_) => panic!("expected {file} to be rejected with:\n{}\nbut it loaded", expected.join("\n")),
        Err(errors) => {
            let actual = errors.to_string();
            assert_eq!(
                actual,
                expected.join("\n"),
                "expected {file} to be rejected with exactly these problems (left: actual, right: expected)"
            );
            assert_eq!(errors.0.len(), expected.len(), "expected one SpecError per line of {file}'s message");
        }
    }
}

#[test]
fn the_valid_fixture_loads() {
    // Guards every test below: each invalid fixture differs from this one by a single defect.
    if let Err(e) = codegen::load("memos.toml", &fixture("valid", "memos")) {
        panic!("expected memos.toml to be valid, got:\n{e}");
    }
}

#[test]
fn operation_naming_an_unknown_scope() {
    assert_rejected_with(
        "unknown_scope",
        &["unknown_scope.toml: operation `create_memo`: unknown scope `memos:wrte`; \
           fix: use one of: memos:read, memos:write, or declare it under [[security.scopes]]"],
    );
}

#[test]
fn operation_listing_an_undeclared_error_code() {
    assert_rejected_with(
        "undeclared_error_code",
        &["undeclared_error_code.toml: operation `update_memo`: undeclared error code `conflict`; \
           fix: declare [errors.\"conflict\"] or use one of: unauthenticated, invalid_token, insufficient_scope, \
           malformed, not_found, method_not_allowed, too_large, unsupported_media_type, validation, rate_limited, \
           internal, request_timeout, unavailable"],
    );
}

#[test]
fn duplicate_operation_id() {
    assert_rejected_with(
        "duplicate_operation_id",
        &[
            "duplicate_operation_id.toml: operation `update_memo`: [[operations]] entry #4 repeats the id of entry #3; fix: give each [[operations]] entry a unique `id`",
        ],
    );
}

#[test]
fn two_operations_with_the_same_method_and_path() {
    assert_rejected_with(
        "duplicate_route",
        &["duplicate_route.toml: operation `delete_memo`: PATCH /memos/{id} is also the route of operation \
           `update_memo`; fix: change the method or path of one of them"],
    );
}

#[test]
fn two_operations_whose_paths_differ_only_in_parameter_names() {
    // `PATCH /memos/{memo}` and `PATCH /memos/{id}` match the same requests.
    assert_rejected_with(
        "duplicate_route_other_param_name",
        &[
            "duplicate_route_other_param_name.toml: operation `delete_memo`: PATCH /memos/{memo} is the same route as PATCH /memos/{id} of operation `update_memo` (parameter names do not tell routes apart); fix: change the method or path of one of them",
        ],
    );
}

#[test]
fn path_parameter_without_an_input_field() {
    assert_rejected_with(
        "path_param_without_field",
        &["path_param_without_field.toml: operation `update_memo`: path parameter `version` has no model field; \
           fix: add field `version` with `in = \"path\"` to model `UpdateMemoInput`"],
    );
}

#[test]
fn path_parameter_whose_field_is_not_in_the_path() {
    assert_rejected_with(
        "path_param_field_not_in_path",
        &[
            "path_param_field_not_in_path.toml: operation `update_memo`: path parameter `id` maps to field `UpdateMemoInput.id`, which cannot carry it; fix: on `UpdateMemoInput.id`: set `in = \"path\"`",
        ],
    );
}

#[test]
fn mcp_tool_without_a_scope_is_named() {
    assert_rejected_with(
        "mcp_tool_without_scope",
        &["mcp_tool_without_scope.toml: operation `list_memos`: tool `memos.list` has no scope; \
           fix: add `scope = \"...\"`, one of: memos:read, memos:write"],
    );
}

#[test]
fn operation_without_a_scope() {
    assert_rejected_with(
        "operation_without_scope",
        &["operation_without_scope.toml: operation `delete_memo`: has no scope; \
           fix: add `scope = \"...\"`, one of: memos:read, memos:write"],
    );
}

/// Body fields can fail validation; so can a lone path string (`delete_memo`), since the decoder
/// refuses any string holding U+0000.
#[test]
fn any_input_must_declare_the_validation_error() {
    assert_rejected_with(
        "missing_validation_error",
        &[
            "missing_validation_error.toml: operation `create_memo`: its input can fail validation but it declares \
             no validation error; fix: add `validation` to `errors`",
            "missing_validation_error.toml: operation `delete_memo`: its input can fail validation but it declares \
             no validation error; fix: add `validation` to `errors`",
        ],
    );
}

#[test]
fn unknown_field_type() {
    assert_rejected_with(
        "unknown_field_type",
        &[
            "unknown_field_type.toml: model `Memo` field `created_at`: unknown type `timestamp`; fix: use string, integer, number, boolean, datetime, date, json, file, T[], map<T>, or a name declared under [enums], [models] or [unions]",
        ],
    );
}

#[test]
fn toml_syntax_error_names_the_line() {
    // Line 164 holds `summary = "Delete a memo` with its closing quote missing.
    assert_rejected_with(
        "toml_syntax_error",
        &[
            "toml_syntax_error.toml: line 174, column 25: invalid basic string, expected `\"`; fix: correct the TOML at that position; spec/spec.schema.json lists every key",
        ],
    );
}

#[test]
fn error_role_pointing_at_a_code_with_the_wrong_status() {
    assert_rejected_with(
        "error_role_wrong_status",
        &["error_role_wrong_status.toml: [error_roles] not_found: `method_not_allowed` answers HTTP 405 but this \
           role needs 404; fix: point the role at a code with status 404"],
    );
}

#[test]
fn scope_implies_cycle_is_reported_for_every_scope_in_it() {
    assert_rejected_with(
        "scope_implies_cycle",
        &[
            "scope_implies_cycle.toml: scope `memos:read`: implies itself through a cycle; \
             fix: make `implies` point only at lower tiers",
            "scope_implies_cycle.toml: scope `memos:write`: implies itself through a cycle; \
             fix: make `implies` point only at lower tiers",
        ],
    );
}

#[test]
fn generate_reports_every_problem_of_every_spec_and_emits_nothing() {
    let result = codegen::generate(&[
        ("memos.toml", &fixture("valid", "memos")),
        ("unknown_scope.toml", &fixture("invalid", "unknown_scope")),
        ("scope_implies_cycle.toml", &fixture("invalid", "scope_implies_cycle")),
    ]);
    let errors = match result {
        Ok(files) => panic!("expected generate to fail, but it emitted {} files", files.len()),
        Err(e) => e,
    };
    let places: Vec<(String, String)> = errors.0.iter().map(|e| (e.file.clone(), e.place.to_string())).collect();
    let places: Vec<(&str, &str)> = places.iter().map(|(f, p)| (f.as_str(), p.as_str())).collect();
    assert_eq!(
        places,
        [
            ("unknown_scope.toml", "operation `create_memo`"),
            ("scope_implies_cycle.toml", "scope `memos:read`"),
            ("scope_implies_cycle.toml", "scope `memos:write`"),
        ],
        "expected the problems of both invalid specs, in argument order, and none from the valid one"
    );
}

#[test]
fn a_metadata_path_outside_the_well_known_prefix() {
    assert_rejected_with(
        "metadata_path_not_well_known",
        &["metadata_path_not_well_known.toml: [service] metadata_paths: `/api/v1/oauth-protected-resource` is not \
           an absolute path naming `/.well-known/oauth-protected-resource`; fix: write it like \
           `/.well-known/oauth-protected-resource` or `/api/v1/.well-known/oauth-protected-resource`"],
    );
}

#[test]
fn mcp_settings_without_an_mcp_path() {
    assert_rejected_with(
        "mcp_instructions_without_mcp_path",
        &["mcp_instructions_without_mcp_path.toml: [service]: mcp_metadata_paths and mcp_instructions describe an \
           MCP endpoint, but mcp_path is not set; fix: set mcp_path, or remove them"],
    );
}

#[test]
fn two_operations_on_one_path_whose_query_parts_ask_the_same() {
    // A name alone that no field is sent under is a label: `/memos/count#counted` asks nothing
    // of the query, as `/memos/count` does.
    assert_rejected_with(
        "query_part_asks_alike",
        &["query_part_asks_alike.toml: operation `count_memos_by_state`: GET /memos/count#counted and GET \
           /memos/count of operation `count_memos` ask the same of a request's query, so no request tells them \
           apart (a name alone asks for a query parameter only where an input field is sent under it); fix: \
           change the method or path of one of them"],
    );
}
