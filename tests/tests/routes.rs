//! The served routes are exactly the spec's operations, with the envelope on a wrong method or an
//! unknown path, and the docs UI lists both documents (the conformance kit checks that the served
//! documents are the generated ones).

mod common;

use std::collections::BTreeSet;

use common::{TestServer, all_operations, concrete_path, request};
use support::ServiceInfo;

fn documented_routes(service: &ServiceInfo) -> BTreeSet<(String, String)> {
    let doc: serde_json::Value = serde_json::from_str(service.openapi_json).expect("openapi json");
    let mut out = BTreeSet::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for method in item.as_object().expect("path item").keys() {
            out.insert((method.to_uppercase(), format!("{}{path}", service.base_path)));
        }
    }
    out
}

fn table_routes(ops: &[&support::Operation]) -> BTreeSet<(String, String)> {
    ops.iter().map(|o| (o.method.as_str().to_string(), o.full_path.to_string())).collect()
}

#[test]
fn the_router_table_and_the_openapi_paths_are_the_same_set() {
    assert_eq!(table_routes(&vault_api::vault::OPERATIONS), documented_routes(&vault_api::vault::SERVICE));
    assert_eq!(
        table_routes(&prospector_api::prospector::OPERATIONS),
        documented_routes(&prospector_api::prospector::SERVICE)
    );
}

#[tokio::test]
async fn every_operation_is_served_at_its_method_and_path() {
    let server = TestServer::start().await;
    let client = server.client();
    for op in all_operations() {
        let resp = request(&client, &server, op).send().await.expect("request");
        // 401 proves the route exists and reached the operation's gate (404/405 would not).
        assert_eq!(resp.status(), 401, "{} {} should be served and ask for a token", op.method.as_str(), op.full_path);
    }
}

#[tokio::test]
async fn other_methods_on_a_served_path_answer_405_with_the_envelope_and_allow() {
    let server = TestServer::start().await;
    let client = server.client();
    let mut paths: Vec<&str> = all_operations().iter().map(|o| o.full_path).collect();
    paths.dedup();
    for path in paths {
        let ops: Vec<_> = all_operations().into_iter().filter(|o| o.full_path == path).collect();
        let allowed: Vec<&str> = ops.iter().map(|o| o.method.as_str()).collect();
        let other = ["PUT", "PATCH", "DELETE", "POST", "GET"]
            .into_iter()
            .find(|m| !allowed.contains(m))
            .expect("a free method");
        let url = server.url(&concrete_path(ops[0]));
        let resp = client.request(reqwest::Method::from_bytes(other.as_bytes()).unwrap(), &url).send().await.unwrap();
        assert_eq!(resp.status(), 405, "{other} {path} is not in the spec");
        assert_eq!(resp.headers()["allow"], allowed.join(", ").as_str(), "Allow of {path}");
        let body: serde_json::Value = resp.json().await.unwrap();
        let code = ops[0].service.roles.method_not_allowed;
        assert_eq!(body["error"]["code"], code, "405 body of {path}: {body}");
    }
}

#[tokio::test]
async fn unknown_paths_answer_404_with_the_service_envelope() {
    let server = TestServer::start().await;
    for (path, code) in [
        ("/api/v1/nope", "resource/not-found"),
        ("/v1/prospector/nope", "not_found"),
        ("/elsewhere", "resource/not-found"),
    ] {
        let resp = server.client().get(server.url(path)).send().await.unwrap();
        assert_eq!(resp.status(), 404, "{path}");
        let id = resp.headers()["x-request-id"].to_str().unwrap().to_string();
        let body: serde_json::Value = resp.json().await.unwrap();
        assert_eq!(body["error"]["code"], code, "{path}: {body}");
        assert_eq!(body["error"]["request_id"], id.as_str(), "error body carries the X-Request-Id");
    }
}

#[tokio::test]
async fn swagger_ui_is_served_from_the_binary_with_both_documents() {
    let server = TestServer::start().await;
    let html = server.client().get(server.url("/docs/")).send().await.unwrap();
    assert_eq!(html.status(), 200);
    assert!(html.text().await.unwrap().contains("swagger-ui"), "Swagger UI page");
    let init =
        server.client().get(server.url("/docs/swagger-initializer.js")).send().await.unwrap().text().await.unwrap();
    assert!(
        init.contains("/openapi/vault.json") && init.contains("/openapi/prospector.json"),
        "both documents listed: {init}"
    );
    let health = server.client().get(server.url("/healthz")).send().await.unwrap();
    assert_eq!(health.status(), 200);
}
