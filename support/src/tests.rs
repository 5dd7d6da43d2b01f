//! The decoder's string rule on a hand-built operation covering every kind that holds strings.

use std::future::Future;

use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, request::Parts};
use axum::response::Response;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::*;

const ROLES: ErrorRoles = ErrorRoles {
    unauthenticated: "unauthenticated",
    invalid_token: "invalid_token",
    insufficient_scope: "insufficient_scope",
    malformed: "malformed",
    validation: "invalid",
    payload_too_large: "too_large",
    unsupported_media_type: "media_type",
    not_found: "not_found",
    method_not_allowed: "method",
    rate_limited: "rate_limited",
    internal: "internal",
    request_timeout: "timeout",
    unavailable: "unavailable",
    precondition_failed: Some("stale"),
    precondition_required: Some("unconditional"),
    range_not_satisfiable: None,
};

pub(crate) static SERVICE: ServiceInfo = SERVICE_FIELDS;

const SERVICE_FIELDS: ServiceInfo = ServiceInfo {
    name: "test",
    title: "Test",
    base_path: "/t",
    mcp_path: None,
    metadata_paths: &[],
    mcp_metadata_paths: &[],
    mcp_instructions: None,
    audit: false,
    stored_tokens: &[],
    scopes: &[],
    errors: &[ErrorInfo { code: "invalid", status: 422, message: "Invalid." }],
    roles: ROLES,
    wire: Wire::ENVELOPE,
    default_per_page: 20,
    max_per_page: 100,
    plans: &[],
    default_plan: None,
    openapi_json: "{}",
    openapi_30_json: "{}",
    tools_json: "[]",
    mcp_catalog_json: "{}",
    operations: || &[],
};

const fn field(name: &'static str, kind: Kind, secret: bool) -> FieldSpec {
    let f = FieldSpec::body(name, kind);
    if secret { f.secret() } else { f }
}

static INNER: [FieldSpec; 1] = [field("title", Kind::String, false)];

static INPUT: [FieldSpec; 8] = [
    field("name", Kind::String, false),
    field("value", Kind::String, true),
    field("at", Kind::DateTime, false),
    field("mode", Kind::Enum(&["a", "b"]), false),
    field("tags", Kind::List(&Kind::String), false),
    field("inner", Kind::List(&Kind::Model(&INNER)), false),
    field("labels", Kind::Map(&Kind::String), false),
    field("extra", Kind::Json, false),
];

pub(crate) static OP: Operation = Operation {
    id: "op",
    method: Method::Post,
    path: "/op",
    full_path: "/t/op",
    scope: "s",
    satisfied_by: &["s"],
    public: false,
    success_status: 200,
    has_body: true,
    no_store: false,
    answer_types: &[],
    body_forms: &[],
    read_types: &[],
    rate_limited: false,
    read_only: false,
    paginated: false,
    deprecation: None,
    conditional: None,
    ranges: false,
    requires: None,
    body: BodyFormat::Json,
    tool: None,
    asks_input: false,
    task: crate::TaskSupport::Never,
    tags: &[],
    input: &INPUT,
    service: &SERVICE,
};

/// `PUT /t/things`, requiring `If-Match`, and `GET` of the same, tagged.
static GUARDED: Operation = Operation {
    id: "put",
    method: Method::Put,
    path: "/things",
    full_path: "/t/things",
    has_body: false,
    read_only: false,
    conditional: Some(Conditional::Write { required: true }),
    input: &[],
    ..OP
};
static TAGGED: Operation =
    Operation { id: "get", method: Method::Get, read_only: true, conditional: Some(Conditional::Read), ..GUARDED };

#[derive(Debug, serde::Deserialize)]
struct Guarded {
    #[serde(default)]
    if_match: IfMatch,
}

fn request(method: &str, headers: &[(&str, &str)]) -> Parts {
    let mut b = Request::builder().method(method).uri("/t/things");
    for (k, v) in headers {
        b = b.header(*k, *v);
    }
    b.body(Body::empty()).unwrap().into_parts().0
}

/// `{"total": …}` and any other key holding a positive integer.
static COUNTS: [FieldSpec; 2] =
    [FieldSpec::body("total", Kind::Integer).required(), FieldSpec::body(OTHER_KEYS, Kind::Integer).minimum(1.0)];

/// A JSON field that is a number or a map of any JSON values.
static ONE_OF: [FieldSpec; 1] =
    [FieldSpec::body("metadata", Kind::Json).one_of(&[Kind::Number, Kind::Map(&Kind::Json)])];

/// `POST /t/find`: a `page` of its own (not paginated), a flag with a default, any JSON.
static FIND_INPUT: [FieldSpec; 3] = [
    FieldSpec::body("page", Kind::Integer),
    FieldSpec::body("hidden", Kind::Boolean).default("true"),
    FieldSpec::body("extra", Kind::Map(&Kind::Json)),
];
static FIND: Operation = Operation { id: "find", input: &FIND_INPUT, ..OP };

#[derive(Debug, serde::Deserialize)]
struct Find {
    page: Option<i64>,
    hidden: bool,
    extra: Option<std::collections::BTreeMap<String, Value>>,
}

/// `PUT /t/tags`: an optional array as the whole body.
static TAGS_INPUT: [FieldSpec; 1] = [FieldSpec::payload("tags", Kind::List(&Kind::String))];
static TAGS: Operation = Operation { id: "tags", input: &TAGS_INPUT, ..OP };

#[derive(Debug, serde::Deserialize)]
struct Tags {
    tags: Option<Vec<String>>,
}

fn decode_json<I: DeserializeOwned>(op: &'static Operation, body: Option<&str>) -> Result<(I, Paging), Rejection> {
    let mut b = Request::builder().method("POST").uri("/t/op");
    if body.is_some() {
        b = b.header("content-type", "application/json");
    }
    let body = body.map_or_else(Body::empty, |t| Body::from(t.to_string()));
    let mut parts = b.body(()).unwrap().into_parts().0;
    block_on(decode_request::<Open, I>(&Open, &"caller", op, &mut parts, body))
}

#[test]
fn null_for_an_optional_field_is_its_absence_and_gets_its_default() {
    let (find, _) = decode_json::<Find>(&FIND, Some(r#"{"hidden": null}"#)).expect("null is absent");
    assert!(find.hidden, "the default");
    let (find, _) = decode_json::<Find>(&FIND, Some(r#"{"hidden": false}"#)).unwrap();
    assert!(!find.hidden);
}

#[test]
fn an_operation_that_is_not_paginated_keeps_a_page_field_of_its_own() {
    let (find, paging) = decode_json::<Find>(&FIND, Some(r#"{"page": 7}"#)).expect("its own field");
    assert_eq!((find.page, paging.page), (Some(7), 1));
}

#[test]
fn any_json_value_may_be_null() {
    let (find, _) = decode_json::<Find>(&FIND, Some(r#"{"extra": {"a": null, "b": [null]}}"#)).expect("null is JSON");
    assert_eq!(find.extra.unwrap()["a"], Value::Null);
}

#[test]
fn an_optional_payload_may_be_left_out_with_no_body_at_all() {
    let (tags, _) = decode_json::<Tags>(&TAGS, None).expect("no body, no media type to check");
    assert_eq!(tags.tags, None);
    let (tags, _) = decode_json::<Tags>(&TAGS, Some(r#"["a"]"#)).unwrap();
    assert_eq!(tags.tags, Some(vec!["a".to_string()]));
}

#[test]
fn a_one_of_field_is_one_of_its_kinds_and_json_inside_a_member_is_any_json() {
    let check = |v: Value| check_object(&SERVICE, &ONE_OF, "", v.as_object().unwrap());
    assert!(check(json!({"metadata": 3})).is_ok());
    assert!(check(json!({"metadata": {"a": [null, null], "b": "x"}})).is_ok(), "a map's values are any JSON");
    let refused = check(json!({"metadata": "three"})).expect_err("neither a number nor a map");
    assert_eq!(refused.problem.details["field"], "metadata");
}

#[test]
fn keys_beside_the_fields_are_checked_as_the_map_says() {
    let check = |v: Value| check_object(&SERVICE, &COUNTS, "", v.as_object().unwrap());
    assert!(check(json!({"total": 3, "draft": 2, "archived": 1})).is_ok());
    assert!(check(json!({"total": 0})).is_ok(), "no other key");
    let refused = check(json!({"total": 3, "draft": "two"})).expect_err("a string");
    assert_eq!(refused.problem.details["field"], "draft");
    let refused = check(json!({"total": 3, "draft": 0})).expect_err("below the minimum");
    assert_eq!(refused.problem.details["field"], "draft");
    assert!(check(json!({"total": 3, "draft": null})).is_err(), "a value, not null");
    assert!(check(json!({"draft": 1})).is_err(), "the named fields are still required");
    assert!(check(json!({"total": 3, "a\u{0}b": 1})).is_err(), "no NUL in a key");
}

#[test]
fn a_write_that_requires_if_match_is_refused_without_it_and_receives_it_with_it() {
    let decode = |headers: &[(&str, &str)]| {
        let mut parts = request("PUT", headers);
        block_on(decode_request::<Open, Guarded>(&Open, &"caller", &GUARDED, &mut parts, Body::empty()))
    };
    let refused = decode(&[]).expect_err("no If-Match");
    assert_eq!(refused.code, "unconditional", "the service's precondition_required code");
    let (input, _) = decode(&[("if-match", "\"v1\""), ("if-match", "\"v2\"")]).expect("two lines, one list");
    assert_eq!(input.if_match, IfMatch::parse("\"v1\", \"v2\""));
    assert!(input.if_match.check(&json!("anything")).is_err(), "neither names the current version");
    let (garbage, _) = decode(&[("if-match", "v1")]).expect("present: the condition is the implementation's");
    assert!(garbage.if_match.check(&json!("anything")).is_err(), "not an entity tag: it matches no version");
}

#[test]
fn a_tagged_read_answers_its_etag_and_304_when_the_client_holds_it() {
    let body = json!({"id": "t1"});
    let tag = etag(&body);
    let fresh = respond(&request("GET", &[]), &TAGGED, Success::One(body.clone().into()));
    assert_eq!((fresh.status().as_u16(), fresh.headers()["etag"].to_str().unwrap()), (200, tag.as_str()));
    let held = respond(&request("GET", &[("if-none-match", &tag)]), &TAGGED, Success::One(body.clone().into()));
    assert_eq!((held.status().as_u16(), held.headers()["etag"].to_str().unwrap()), (304, tag.as_str()));
    let written = respond(&request("PUT", &[("if-none-match", &tag)]), &GUARDED, Success::One(body.into()));
    assert_eq!(written.status().as_u16(), 200, "a write answers its tag but never 304");
    assert_eq!(written.headers()["etag"].to_str().unwrap(), tag);
    let untagged = respond(&request("GET", &[]), &OP, Success::One(json!({}).into()));
    assert!(untagged.headers().get("etag").is_none(), "only conditional operations are tagged");
}

#[test]
fn declared_headers_reach_the_answer_and_broken_values_are_left_out() {
    let answer =
        Success::Empty.header("location", "https://example.com/x").header("retry-after", 5).header("x-bad", "a\nb");
    let resp = respond(&request("POST", &[]), &OP, answer);
    assert_eq!(resp.headers()["location"], "https://example.com/x");
    assert_eq!(resp.headers()["retry-after"], "5");
    assert!(resp.headers().get("x-bad").is_none());
}

/// The field the decoder names when it refuses `arguments`, and the value it echoes.
fn refused(arguments: Value) -> (String, Value) {
    let r = decode_arguments::<Value>(&OP, arguments).expect_err("a NUL is refused");
    assert_eq!(r.code, "invalid", "the service's validation error: {r:?}");
    assert!(r.problem.message.contains("must not contain U+0000 (NUL)"), "the message says why: {r:?}");
    let field = r.problem.details["field"].as_str().unwrap_or_default().to_string();
    (field, r.problem.details["value"].clone())
}

#[test]
fn a_nul_anywhere_in_a_string_is_refused_naming_where() {
    let cases = [
        (json!({"name": "a\u{0}b"}), "name"),
        (json!({"at": "2030-01-01T00:00:00Z\u{0}"}), "at"),
        (json!({"mode": "a\u{0}"}), "mode"),
        (json!({"tags": ["ok", "\u{0}"]}), "tags[1]"),
        (json!({"inner": [{"title": "t"}, {"title": "t\u{0}"}]}), "inner[1].title"),
        (json!({"labels": {"k": "v\u{0}"}}), "labels.k"),
        (json!({"labels": {"k\u{0}": "v"}}), "labels.k\u{0}"),
        (json!({"extra": {"k": [1, "x\u{0}"]}}), "extra.k[1]"),
        (json!({"extra": {"k\u{0}": true}}), "extra.k\u{0}"),
        (json!({"extra": "\u{0}"}), "extra"),
    ];
    for (arguments, want) in cases {
        let (field, _) = refused(arguments.clone());
        assert_eq!(field, want, "for {arguments}");
    }
}

#[test]
fn a_refused_secret_is_still_not_echoed() {
    assert_eq!(refused(json!({"value": "s3cret\u{0}"})), ("value".to_string(), json!("[redacted]")));
}

#[test]
fn strings_without_a_nul_pass() {
    let arguments = json!({"name": "a b", "value": "v", "at": "2030-01-01T00:00:00Z", "mode": "a", "tags": ["x"],
                           "inner": [{"title": "t"}], "labels": {"k": "v"}, "extra": {"k": ["\\u0000 spelled out"]}});
    let (input, _) = decode_arguments::<Value>(&OP, arguments.clone()).expect("accepted");
    assert_eq!(input, arguments);
}

/// A gate admitting everyone as `"caller"`.
pub(crate) struct Open;

impl Gate for Open {
    type Caller = &'static str;
    type Context = &'static str;

    fn context(&self, caller: Self::Caller, _: &'static Operation, _: crate::Touched) -> Self::Context {
        caller
    }

    async fn admit(&self, _: &mut Parts, _: &'static Operation) -> Result<Self::Caller, Response> {
        Ok("caller")
    }

    async fn refused(&self, _: &Self::Caller, _: &'static Operation, _: &'static str, _: u16) {}

    fn body_limit(&self) -> usize {
        1024
    }
}

pub(crate) fn block_on<F: Future>(f: F) -> F::Output {
    let waker = std::task::Waker::noop();
    let mut cx = std::task::Context::from_waker(waker);
    let mut f = std::pin::pin!(f);
    loop {
        if let std::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
    }
}

static TIERED: ServiceInfo = ServiceInfo {
    scopes: &[
        ScopeInfo { name: "r", description: "", implies: &[] },
        ScopeInfo { name: "w", description: "", implies: &["r"] },
        ScopeInfo { name: "a", description: "", implies: &["w"] },
    ],
    ..SERVICE_FIELDS
};

#[test]
fn scopes_satisfy_what_they_imply_and_nothing_above() {
    assert!(TIERED.satisfies(["a"], "r") && TIERED.satisfies(["w"], "w") && TIERED.satisfies(["r"], "r"));
    assert!(!TIERED.satisfies(["r"], "w") && !TIERED.satisfies(["w"], "a") && !TIERED.satisfies([], "r"));
    assert!(!TIERED.satisfies(["unknown"], "r"));
}

const PROBLEM_FIELDS: ServiceInfo = ServiceInfo {
    errors: &[
        ErrorInfo { code: "invalid", status: 422, message: "Invalid." },
        ErrorInfo { code: "rate_limited", status: 429, message: "Too many requests." },
    ],
    wire: Wire { success: SuccessFormat::Envelope, errors: ErrorFormat::Problem { types: None } },
    ..SERVICE_FIELDS
};

static PROBLEMS: ServiceInfo = PROBLEM_FIELDS;

#[test]
fn each_format_accepts_its_values_and_nothing_else() {
    let cases: [(Format, &[&str], &[&str]); 7] = [
        (
            Format::Uuid,
            &["0190c3e8-5b7a-7cc0-9d1e-2f3a4b5c6d7e", "0190C3E8-5B7A-7CC0-9D1E-2F3A4B5C6D7E"],
            &[
                "0190c3e85b7a7cc09d1e2f3a4b5c6d7e",
                "0190c3e8-5b7a-7cc0-9d1e-2f3a4b5c6d7",
                "g190c3e8-5b7a-7cc0-9d1e-2f3a4b5c6d7e",
            ],
        ),
        (
            Format::Email,
            &["ann@example.com", "a.b+c@mail.example.org", "x@localhost"],
            &["ann", "@example.com", "ann@", "ann@exa mple.com", "ann@-example.com", "\"a b\"@example.com"],
        ),
        (
            Format::Uri,
            &["https://example.com/a?b=c#d", "urn:isbn:0451450523", "mailto:ann@example.com", "https://x/%20"],
            &["/relative/path", "example.com", "https://exa mple.com", "1http://x", "https://x/%2", "https://x/é"],
        ),
        (Format::Ipv4, &["192.0.2.1", "0.0.0.0"], &["192.0.2", "256.0.0.1", "192.0.2.1/24", "::1"]),
        (Format::Ipv6, &["::1", "2001:db8::8a2e:370:7334"], &["192.0.2.1", "2001:db8:::1", "fe80::1%eth0"]),
        (
            Format::Hostname,
            &["example.com", "a-b.example", "localhost"],
            &["", "-a.example", "a_b.example", "example..com", &"a".repeat(64)],
        ),
        (Format::Byte, &["", "aGk=", "iVBORw0KGgo="], &["aGk", "aGk==", "a-b_", "aGk= ", "****"]),
    ];
    for (format, good, bad) in cases {
        for v in good {
            assert!(format.accepts(v), "{} should accept {v:?}", format.as_str());
        }
        for v in bad {
            assert!(!format.accepts(v), "{} should refuse {v:?}", format.as_str());
        }
    }
}

static OWN_MODEL: ServiceInfo = ServiceInfo {
    wire: Wire {
        success: SuccessFormat::Bare,
        errors: ErrorFormat::Model(&ErrorModel {
            code: "error.code",
            message: "error.message",
            status: Some("error.status"),
            details: Some("error.details"),
            request_id: Some("trace_id"),
        }),
    },
    ..PROBLEM_FIELDS
};

#[tokio::test]
async fn an_error_model_of_the_service_own_carries_each_role_at_its_path() {
    let problem = Problem::new("Bad title.").with("field", "title");
    let (status, headers, body) = answer(&OWN_MODEL, "invalid", problem).await;
    assert_eq!((status.as_u16(), &headers["content-type"]), (422, &HeaderValue::from_static("application/json")));
    assert_eq!(
        body,
        json!({"error": {"code": "invalid", "message": "Bad title.", "status": 422, "details": {"field": "title"}},
               "trace_id": "req-1"})
    );
    // Without a request id, the member is left out rather than null.
    let body = error_body(&OWN_MODEL, "invalid", 422, Problem::new("x"), None);
    assert!(body.get("trace_id").is_none(), "{body}");
}

#[test]
fn page_links_keep_the_query_and_name_the_pages_around_this_one() {
    let at = |page, per_page| Paging { page, per_page };
    assert_eq!(
        page_links(Some("tag=a%20b&page=2&per_page=10&tag=c"), 35, at(2, 10)),
        "<?tag=a+b&tag=c&page=1&per_page=10>; rel=\"first\", <?tag=a+b&tag=c&page=1&per_page=10>; rel=\"prev\", \
         <?tag=a+b&tag=c&page=3&per_page=10>; rel=\"next\", <?tag=a+b&tag=c&page=4&per_page=10>; rel=\"last\""
    );
    // No items: one (empty) page, which is the first and the last.
    assert_eq!(
        page_links(None, 0, at(1, 20)),
        "<?page=1&per_page=20>; rel=\"first\", <?page=1&per_page=20>; rel=\"last\""
    );
    // Past the end: the previous page is the last one, and there is no next.
    assert_eq!(
        page_links(None, 5, at(9, 2)),
        "<?page=1&per_page=2>; rel=\"first\", <?page=3&per_page=2>; rel=\"prev\", <?page=3&per_page=2>; rel=\"last\""
    );
}

static TYPED_PROBLEMS: ServiceInfo = ServiceInfo {
    wire: Wire {
        success: SuccessFormat::Envelope,
        errors: ErrorFormat::Problem { types: Some("https://api.example.com/problems/") },
    },
    ..PROBLEM_FIELDS
};

async fn answer(service: &ServiceInfo, code: &str, problem: Problem) -> (StatusCode, axum::http::HeaderMap, Value) {
    let resp = error_response(service, code, problem, Some("req-1"));
    let (status, headers) = (resp.status(), resp.headers().clone());
    let bytes = axum::body::to_bytes(resp.into_body(), usize::MAX).await.unwrap();
    (status, headers, serde_json::from_slice(&bytes).unwrap())
}

#[tokio::test]
async fn the_envelope_format_answers_as_it_always_has() {
    let problem = Problem::new("Bad title.").with("field", "title");
    let (status, headers, body) = answer(&SERVICE, "invalid", problem).await;
    assert_eq!(status, 422);
    assert_eq!(headers["content-type"], "application/json");
    assert_eq!(
        body,
        json!({"error": {"code": "invalid", "message": "Bad title.", "details": {"field": "title"}, "request_id": "req-1"}})
    );
}

#[tokio::test]
async fn problem_details_carry_the_rfc_members_the_code_and_each_detail() {
    let problem = Problem::new("Bad title.").with("field", "title").with("value", 3);
    let (status, headers, body) = answer(&PROBLEMS, "invalid", problem.clone()).await;
    assert_eq!(status, 422);
    assert_eq!(headers["content-type"], PROBLEM_JSON);
    assert_eq!(headers["x-request-id"], "req-1");
    // Without a base URI of problem types, `about:blank` and the status phrase (RFC 9457 4.2.1).
    assert_eq!(
        body,
        json!({"type": "about:blank", "title": "Unprocessable Entity", "status": 422, "detail": "Bad title.",
               "code": "invalid", "request_id": "req-1", "field": "title", "value": 3})
    );
    let (_, _, typed) = answer(&TYPED_PROBLEMS, "invalid", problem).await;
    assert_eq!(typed["type"], "https://api.example.com/problems/invalid");
    assert_eq!(typed["title"], "Invalid.", "the catalog message titles a typed problem");
}

#[tokio::test]
async fn a_problem_that_says_when_to_retry_says_it_in_the_header_too() {
    let (status, headers, body) =
        answer(&PROBLEMS, "rate_limited", Problem::new("Slow down.").with("retry_after", 7)).await;
    assert_eq!((status.as_u16(), &headers["retry-after"]), (429, &HeaderValue::from(7)));
    assert_eq!(body["retry_after"], 7);
}

#[tokio::test]
async fn a_detail_never_overwrites_a_member_of_the_problem() {
    let mut problem = Problem::new("Bad.");
    problem.details.insert("status".into(), json!("forged"));
    let (_, _, body) = answer(&PROBLEMS, "invalid", problem).await;
    assert_eq!(body["status"], 422);
}

#[test]
#[should_panic(expected = "would overwrite a problem details member")]
fn a_detail_named_like_a_member_is_refused_where_it_is_built() {
    let _ = Problem::new("Bad.").with("type", "x");
}

#[test]
fn a_tool_failure_carries_the_service_error_body() {
    let failure = ToolFailure { code: "invalid", status: 422, problem: Problem::new("Bad.") };
    let body = failure.clone().into_body(&SERVICE, Some("r"));
    assert_eq!(
        body,
        json!({"error": {"code": "invalid", "status": 422, "message": "Bad.", "details": {}, "request_id": "r"}})
    );
    let problem = failure.clone().into_body(&PROBLEMS, Some("r"));
    assert_eq!((problem["status"].as_u64(), problem["code"].as_str()), (Some(422), Some("invalid")));
    // A model of the service's own is written as it is declared, nothing added.
    let own = failure.into_body(&OWN_MODEL, Some("r"));
    assert_eq!(
        own,
        json!({"error": {"code": "invalid", "message": "Bad.", "status": 422, "details": {}}, "trace_id": "r"})
    );
}

#[test]
fn a_layer_selects_operations_by_id_tag_or_scope() {
    static TAGGED: Operation = Operation { id: "tagged", tags: &["exports", "files"], scope: "w", ..OP };
    for (select, on_op, on_tagged) in [
        (Select::All, true, true),
        (Select::Operation("op"), true, false),
        (Select::Tag("files"), false, true),
        (Select::Tag("other"), false, false),
        (Select::Scope("s"), true, false),
        (Select::Scope("w"), false, true),
    ] {
        assert_eq!((select.matches(&OP), select.matches(&TAGGED)), (on_op, on_tagged), "{select:?}");
    }
}

#[test]
fn layers_wrap_only_what_they_select_the_first_attached_innermost() {
    use tower::ServiceExt;
    fn mark(name: &'static str) -> tower::util::MapResponseLayer<impl Fn(Response) -> Response + Clone> {
        tower::util::MapResponseLayer::new(move |mut r: Response| {
            let seen = match r.headers().get("x-layers") {
                Some(before) => format!("{},{name}", before.to_str().unwrap()),
                None => name.to_string(),
            };
            r.headers_mut().insert("x-layers", HeaderValue::from_str(&seen).unwrap());
            r
        })
    }
    let mut layers = Layers::default();
    layers.push(Select::Operation("op"), mark("inner"));
    layers.push(Select::All, mark("outer"));
    layers.push(Select::Operation("other"), mark("never"));
    assert!(layers.selects(&OP));
    let route = Route::new(tower::service_fn(|_: Request| async {
        Ok::<_, std::convert::Infallible>(Response::new(Body::empty()))
    }));
    let answer = block_on(layers.wrap(&OP, route).oneshot(Request::new(Body::empty()))).unwrap();
    assert_eq!(answer.headers()["x-layers"], "inner,outer");
}

/// Answers are written from the output's JSON text with the envelope around it: byte for byte what
/// serialising the whole body as one JSON value writes, and the page's tag is the digest of the
/// same text as before.
#[tokio::test]
async fn envelopes_are_written_around_the_output_text_byte_for_byte() {
    let items = json!([
        {"key": "a\"b\\c\u{1f}é", "n": 1.5, "big": u64::MAX, "none": null, "nested": {"z": [true, false], "a": -0.0}},
        {"key": "second", "n": 1e300, "empty": {}}
    ]);
    let paging = Paging { page: 3, per_page: 2 };
    let page = Paged { items: items.as_array().unwrap().clone(), total: 7 };
    let resp = respond(&request("GET", &[]), &OP, Success::page(&page, paging));
    assert_eq!(resp.headers()["content-type"], "application/json");
    let bytes = axum::body::to_bytes(resp.into_body(), usize::MAX).await.unwrap();
    let whole = json!({"data": items, "meta": {"total": 7, "page": 3, "per_page": 2}});
    assert_eq!(bytes, serde_json::to_vec(&whole).unwrap());
    let one = respond(&request("GET", &[]), &OP, Success::one(&items[0]));
    let bytes = axum::body::to_bytes(one.into_body(), usize::MAX).await.unwrap();
    assert_eq!(bytes, serde_json::to_vec(&json!({"data": items[0]})).unwrap());
    let tagged = respond(&request("GET", &[]), &TAGGED, Success::page(&page, paging));
    let expected = conditional::etag_of(&json!({"items": items, "total": 7, "page": 3, "per_page": 2}));
    assert_eq!(tagged.headers()["etag"].to_str().unwrap(), expected);
}

#[tokio::test]
async fn rendered_outputs_answer_what_their_values_would() {
    let items = json!([{"key": "a\"b\u{1f}é", "n": 1.5, "nested": {"z": [true]}}, {"key": "second", "n": 1e300}, {}]);
    let values: Vec<Value> = items.as_array().unwrap().clone();
    let paging = Paging { page: 2, per_page: 3 };
    for n in [0, 1, 3] {
        let page = Paged { items: values[..n].to_vec(), total: 9 };
        let rendered = Paged { items: page.items.iter().map(Rendered::of).collect(), total: 9 };
        for op in [&OP, &TAGGED] {
            let a = respond(&request("GET", &[]), op, Success::page(&page, paging));
            let b = respond(&request("GET", &[]), op, Success::rendered_page(&rendered, paging));
            assert_eq!(a.headers().get("etag"), b.headers().get("etag"));
            let a = axum::body::to_bytes(a.into_body(), usize::MAX).await.unwrap();
            let b = axum::body::to_bytes(b.into_body(), usize::MAX).await.unwrap();
            assert_eq!(a, b, "a page of {n}");
        }
    }
    let one = Rendered::of(&values[0]);
    let a =
        axum::body::to_bytes(respond(&request("GET", &[]), &TAGGED, Success::one(&values[0])).into_body(), usize::MAX);
    let b =
        axum::body::to_bytes(respond(&request("GET", &[]), &TAGGED, Success::rendered(&one)).into_body(), usize::MAX);
    assert_eq!(a.await.unwrap(), b.await.unwrap());
    assert_eq!(one.clone().as_str(), serde_json::to_string(&values[0]).unwrap());
}

/// `GET /t/op` with two header fields: one snake_case (sent in Train-Case), one named as its
/// header is (Walmart's `WM_SEC.ACCESS_TOKEN`, which holds `_` but is no snake_case name).
static HEADED_INPUT: [FieldSpec; 2] = [
    FieldSpec::header("request_id", Kind::String).required(),
    FieldSpec::header("WM_SEC.ACCESS_TOKEN", Kind::String).required(),
];
static HEADED: Operation = Operation { id: "headed", input: &HEADED_INPUT, has_body: false, ..OP };

#[derive(Debug, serde::Deserialize)]
struct Headed {
    request_id: String,
    #[serde(rename = "WM_SEC.ACCESS_TOKEN")]
    token: String,
}

#[test]
fn a_header_field_is_read_from_the_header_the_documents_name() {
    let mut parts = request("GET", &[("Request-Id", "r1"), ("WM_SEC.ACCESS_TOKEN", "t1")]);
    let (input, _) = block_on(decode_request::<Open, Headed>(&Open, &"caller", &HEADED, &mut parts, Body::empty()))
        .expect("both headers read");
    assert_eq!((input.request_id.as_str(), input.token.as_str()), ("r1", "t1"));
    assert_eq!(crate::header_name("WM_SEC.ACCESS_TOKEN"), "WM_SEC.ACCESS_TOKEN");
    assert_eq!(crate::header_name("request_id"), "Request-Id");
}
