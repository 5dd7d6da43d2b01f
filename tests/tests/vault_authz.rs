//! The vault's authorization matrix: every operation x principal x object-ownership cell of
//! `tests/authz/vault.matrix` is sent to a real server (two tenants of identical shape) and its
//! answer compared with the table; every mismatching cell is listed. Besides the table: after every
//! write aimed at the other tenant, that tenant is re-read as its admin and must be unchanged, and
//! no successful answer may carry the other tenant's names or ids.

mod common;

use std::collections::{BTreeSet, HashMap, HashSet};
use std::time::Instant;

use common::TestServer;
use serde_json::{Value, json};
use support::{Method, Operation};

const MATRIX: &str = include_str!("../authz/vault.matrix");
const MATRIX_FILE: &str = "tests/authz/vault.matrix";

/// Principals, in the order the matrix lists them (see the header of the matrix).
const PRINCIPALS: [&str; 11] = [
    "anonymous",
    "admin-read",
    "admin-write",
    "admin-admin",
    "admin-pat",
    "admin-pat-read",
    "granted",
    "granted-read",
    "ungranted",
    "auditor",
    "foreign",
];
const OBJECTS: [&str; 2] = ["own", "other"];

// ---------------------------------------------------------------------------------------------
// The table

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// At least one item.
    Some,
    /// No item, `meta.total` 0.
    Empty,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Expect {
    /// No request: the operation names no object another tenant could own.
    NotApplicable,
    /// This status; for errors this `error.code`; for lists this shape.
    Answer { status: u16, code: Option<String>, shape: Option<Shape> },
}

#[derive(Debug, Clone)]
struct Row {
    line: usize,
    op: String,
    principal: String,
    object: String,
    /// The expectation as written, for messages.
    text: String,
    expect: Expect,
}

fn parse_expect(words: &[&str]) -> Result<Expect, String> {
    if words == ["n/a"] {
        return Ok(Expect::NotApplicable);
    }
    let (status, rest) = words.split_first().ok_or("no expectation")?;
    let status: u16 = status.parse().map_err(|_| format!("`{status}` is not a status"))?;
    if !(200..600).contains(&status) {
        return Err(format!("{status} is not an HTTP status"));
    }
    let success = (200..300).contains(&status);
    match rest {
        [] if success => Ok(Expect::Answer { status, code: None, shape: None }),
        ["some"] if success => Ok(Expect::Answer { status, code: None, shape: Some(Shape::Some) }),
        ["empty"] if success => Ok(Expect::Answer { status, code: None, shape: Some(Shape::Empty) }),
        [code] if !success && code.contains('/') => {
            Ok(Expect::Answer { status, code: Some((*code).to_string()), shape: None })
        }
        [] => Err(format!("status {status} needs an error code")),
        _ => Err(format!("cannot read `{}` after the status", rest.join(" "))),
    }
}

/// Parses the matrix; lines it cannot read are returned as problems.
fn parse_matrix(text: &str) -> (Vec<Row>, Vec<String>) {
    let (mut rows, mut problems) = (Vec::new(), Vec::new());
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let content = raw.split('#').next().unwrap_or("").trim();
        if content.is_empty() {
            continue;
        }
        let words: Vec<&str> = content.split_whitespace().collect();
        if words.len() < 4 {
            problems.push(format!("{MATRIX_FILE}:{line}: expected `operation principal object expected`: {raw}"));
            continue;
        }
        match parse_expect(&words[3..]) {
            Ok(expect) => rows.push(Row {
                line,
                op: words[0].to_string(),
                principal: words[1].to_string(),
                object: words[2].to_string(),
                text: words[3..].join(" "),
                expect,
            }),
            Err(e) => problems.push(format!("{MATRIX_FILE}:{line}: {e}")),
        }
    }
    (rows, problems)
}

/// Whether the table names only real operations, principals and objects, once each, and covers
/// every operation of the vault with every principal and object.
fn table_problems(rows: &[Row]) -> Vec<String> {
    let mut problems = Vec::new();
    let ops: HashSet<&str> = vault_api::vault::OPERATIONS.iter().map(|o| o.id).collect();
    let mut seen: HashMap<(&str, &str, &str), usize> = HashMap::new();
    for r in rows {
        let at = format!("{MATRIX_FILE}:{}", r.line);
        if !ops.contains(r.op.as_str()) {
            problems.push(format!("{at}: `{}` is not an operation of the vault", r.op));
        }
        if !PRINCIPALS.contains(&r.principal.as_str()) {
            problems.push(format!("{at}: unknown principal `{}`", r.principal));
        }
        if !OBJECTS.contains(&r.object.as_str()) {
            problems.push(format!("{at}: unknown object `{}` (own or other)", r.object));
        }
        if r.expect == Expect::NotApplicable && r.object == "own" {
            problems.push(format!("{at}: n/a is only for `other` cells"));
        }
        if let Some(first) = seen.insert((&r.op, &r.principal, &r.object), r.line) {
            problems.push(format!("{at}: duplicates line {first}"));
        }
    }
    for op in vault_api::vault::OPERATIONS.iter() {
        let missing: Vec<String> = PRINCIPALS
            .iter()
            .flat_map(|p| OBJECTS.iter().map(move |o| (*p, *o)))
            .filter(|(p, o)| !seen.contains_key(&(op.id, *p, *o)))
            .map(|(p, o)| format!("{p}/{o}"))
            .collect();
        if missing.len() == PRINCIPALS.len() * OBJECTS.len() {
            problems.push(format!("{MATRIX_FILE}: operation {} has no rows", op.id));
        } else if !missing.is_empty() {
            problems.push(format!("{MATRIX_FILE}: operation {} lacks cells {}", op.id, missing.join(", ")));
        }
    }
    problems
}

#[test]
fn the_matrix_covers_every_vault_operation_and_nothing_else() {
    let (rows, mut problems) = parse_matrix(MATRIX);
    problems.extend(table_problems(&rows));
    assert!(problems.is_empty(), "{} problem(s) in the matrix:\n{}", problems.len(), problems.join("\n"));
    assert_eq!(rows.len(), vault_api::vault::OPERATIONS.len() * PRINCIPALS.len() * OBJECTS.len());
}

// ---------------------------------------------------------------------------------------------
// Tenants, fixtures and principals

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tenant {
    A,
    B,
}

impl Tenant {
    fn idx(self) -> usize {
        self as usize
    }
    fn other(self) -> Tenant {
        match self {
            Tenant::A => Tenant::B,
            Tenant::B => Tenant::A,
        }
    }
    /// Prefix of every name in the tenant.
    fn p(self) -> &'static str {
        match self {
            Tenant::A => "a",
            Tenant::B => "b",
        }
    }
    fn id(self) -> String {
        format!("{}-corp", self.p())
    }
    fn user(self, name: &str) -> String {
        format!("{}-{name}", self.p())
    }
    /// The tenant's first administrator.
    fn admin(self) -> String {
        self.user(match self {
            Tenant::A => "alice",
            Tenant::B => "bob",
        })
    }
}

/// The standing objects of one tenant.
#[derive(Debug, Clone)]
struct Fixtures {
    tenant: Tenant,
    admin: String,
    gus: String,
    member: String,
    /// Folder F (top level), its subfolder S and its empty subfolder E.
    folder: String,
    empty: String,
    /// Credential C in F, carrying `tag`.
    cred: String,
    tag: String,
    /// An archived credential in F.
    archived: String,
    /// A throwaway user's grants on C and on F.
    grant_on_cred: String,
    grant_on_folder: String,
    /// The admin's active lease on C.
    lease: String,
    /// A token of the admin.
    token: String,
    /// Every server-made id above (folders, leases, grants, tokens), for the leak check.
    ids: HashSet<String>,
}

struct Principal {
    name: &'static str,
    tenant: Tenant,
    /// `None` for anonymous.
    bearer: Option<String>,
    /// Whose lease is this principal's `own` lease (see LEASES in the matrix header).
    leases_as: String,
    /// Whose fresh token this principal revokes.
    user: String,
}

/// One request of a cell (the method is the operation's).
struct Req {
    path: String,
    body: Option<Value>,
}

struct Ctx {
    server: TestServer,
    client: reqwest::Client,
    fx: Vec<Fixtures>,
    seq: u32,
    /// Victim reads (tenant, list) still valid: dropped for a tenant when a request that may change
    /// it is sent on its behalf.
    seen: HashMap<(usize, String), Value>,
    requests: usize,
}

fn api(path: &str) -> String {
    format!("{}{path}", vault_api::vault::SERVICE.base_path)
}

/// `full_path` with every `{name}` replaced.
fn fill(op: &Operation, params: &[(&str, &str)]) -> String {
    let mut path = op.full_path.to_string();
    for (name, value) in params {
        assert!(value.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)), "unsafe path value {value}");
        path = path.replace(&format!("{{{name}}}"), value);
    }
    assert!(!path.contains('{'), "{}: parameters left in {path}", op.id);
    path
}

fn with_query(path: String, pairs: &[(&str, &str)]) -> String {
    let q: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!("{path}?{}", q.join("&"))
}

impl Ctx {
    fn fx(&self, t: Tenant) -> &Fixtures {
        &self.fx[t.idx()]
    }

    fn fresh(&mut self, t: Tenant, what: &str) -> String {
        self.seq += 1;
        format!("{}-{what}-{}", t.p(), self.seq)
    }

    /// Sends a request on behalf of a caller of tenant `t` (`bearer` `None` = anonymous).
    async fn send(
        &mut self,
        t: Tenant,
        method: &str,
        path: &str,
        bearer: Option<&str>,
        body: Option<Value>,
    ) -> (u16, Value) {
        self.requests += 1;
        if method != "GET" {
            self.seen.retain(|(tenant, _), _| *tenant != t.idx());
        }
        if let Some(token) = bearer {
            return self.server.call(method, path, token, body).await;
        }
        let m = reqwest::Method::from_bytes(method.as_bytes()).expect("method");
        let mut rb = self.client.request(m, self.server.url(path));
        if let Some(b) = body {
            rb = rb.json(&b);
        }
        let resp = rb.send().await.expect("request");
        let status = resp.status().as_u16();
        let text = resp.text().await.unwrap_or_default();
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    /// A fixture call as `user` of `t` with `scope` (a fresh JWT each time); must succeed.
    async fn as_user(
        &mut self,
        t: Tenant,
        user: &str,
        scope: &str,
        method: &str,
        path: &str,
        body: Option<Value>,
    ) -> Value {
        let token = self.server.token_for(user, &t.id(), scope);
        let (status, resp) = self.send(t, method, path, Some(&token), body).await;
        assert!((200..300).contains(&status), "fixture {method} {path} as {user}: {status} {resp}");
        resp["data"].clone()
    }

    async fn as_admin(&mut self, t: Tenant, method: &str, path: &str, body: Option<Value>) -> Value {
        self.as_user(t, &t.admin(), "vault:admin", method, path, body).await
    }

    // Fresh objects, for cells that consume or destroy theirs.

    async fn new_cred(&mut self, t: Tenant, tags: &[&str]) -> String {
        let key = self.fresh(t, "cred");
        let folder = self.fx(t).folder.clone();
        let body = json!({"key": key, "value": "s3cret", "folder_id": folder, "tags": tags});
        self.as_admin(t, "POST", &api("/credentials"), Some(body)).await;
        key
    }

    async fn new_archived(&mut self, t: Tenant, tags: &[&str]) -> String {
        let key = self.new_cred(t, tags).await;
        self.as_admin(t, "POST", &api(&format!("/credentials/{key}/archive")), None).await;
        key
    }

    async fn new_subfolder(&mut self, t: Tenant) -> String {
        let name = self.fresh(t, "dir");
        let parent = self.fx(t).folder.clone();
        let f = self.as_admin(t, "POST", &api("/folders"), Some(json!({"name": name, "parent_id": parent}))).await;
        f["id"].as_str().expect("folder id").to_string()
    }

    async fn new_tag(&mut self, t: Tenant) -> String {
        let tag = self.fresh(t, "tag");
        self.new_cred(t, &[&tag]).await;
        tag
    }

    async fn new_lease(&mut self, t: Tenant, user: &str) -> String {
        let cred = self.fx(t).cred.clone();
        let l =
            self.as_user(t, user, "vault:read", "POST", &api("/leases"), Some(json!({"credential_key": cred}))).await;
        l["id"].as_str().expect("lease id").to_string()
    }

    async fn new_grant(&mut self, t: Tenant, on_folder: bool) -> String {
        let principal = self.fresh(t, "grantee");
        let path = if on_folder {
            format!("/folders/{}/grants", self.fx(t).folder)
        } else {
            format!("/credentials/{}/grants", self.fx(t).cred)
        };
        let g = self
            .as_admin(t, "POST", &api(&path), Some(json!({"principal": principal, "permissions": ["canRead"]})))
            .await;
        g["id"].as_str().expect("grant id").to_string()
    }

    async fn new_member(&mut self, t: Tenant) -> String {
        let user = self.fresh(t, "user");
        let path = api(&format!("/tenants/{}/role-assignments/{user}", t.id()));
        self.as_admin(t, "PUT", &path, Some(json!({"role": "member"}))).await;
        user
    }

    async fn new_token(&mut self, t: Tenant, user: &str) -> String {
        let name = self.fresh(t, "token");
        let body = json!({"name": name, "scopes": ["vault:read"]});
        let tok = self.as_user(t, user, "vault:read", "POST", &api("/tokens"), Some(body)).await;
        tok["id"].as_str().expect("token id").to_string()
    }

    /// A list of tenant `t` as its admin reads it (every page), for the victim check.
    async fn read_as_admin(&mut self, t: Tenant, list: &str) -> Value {
        let token = self.server.token_for(&self.fx(t).admin, &t.id(), "vault:admin");
        let mut items: Vec<Value> = Vec::new();
        for page in 1.. {
            let sep = if list.contains('?') { '&' } else { '?' };
            let path = api(&format!("{list}{sep}per_page=100&page={page}"));
            let (status, body) = self.send(t, "GET", &path, Some(&token), None).await;
            assert_eq!(status, 200, "re-reading {path} of {} as its admin: {body}", t.id());
            let got = body["data"].as_array().cloned().unwrap_or_default();
            let total = body["meta"]["total"].as_u64().unwrap_or(0) as usize;
            let done = got.is_empty() || items.len() + got.len() >= total;
            items.extend(got);
            if done {
                break;
            }
        }
        for item in &mut items {
            // Informational, and changed by the token's own use rather than by the operation tested.
            if let Some(o) = item.as_object_mut() {
                o.remove("last_used_at");
            }
        }
        Value::Array(items)
    }

    /// [`Ctx::read_as_admin`], reusing the last read while nothing was sent on `t`'s behalf.
    async fn victim_state(&mut self, t: Tenant, list: &str) -> Value {
        if let Some(v) = self.seen.get(&(t.idx(), list.to_string())) {
            return v.clone();
        }
        let v = self.read_as_admin(t, list).await;
        self.seen.insert((t.idx(), list.to_string()), v.clone());
        v
    }
}

/// What a write aimed at the other tenant `t` could damage there: the list its admin re-reads.
fn victim_list(op: &Operation, t: Tenant) -> Option<String> {
    Some(match op.id {
        "store_credential" | "update_credential" | "reveal_credential" | "archive_credential"
        | "restore_credential" | "rotate_credential" => "/credentials?state=all".into(),
        "create_folder" | "update_folder" | "delete_folder" => "/folders".into(),
        "rename_tag" | "merge_tags" | "prune_tags" => "/tags".into(),
        "issue_lease" | "redeem_lease" | "revoke_lease" => "/leases".into(),
        "delete_grant"
        | "create_credential_grant"
        | "delete_credential_grant"
        | "create_folder_grant"
        | "delete_folder_grant" => "/grants".into(),
        "assign_role" | "remove_role_assignment" => format!("/tenants/{}/role-assignments", t.id()),
        "revoke_token" => "/tokens?include_revoked=true".into(),
        _ => return None,
    })
}

async fn seed(ctx: &mut Ctx, t: Tenant) -> Fixtures {
    let admin = t.admin();
    ctx.server.tenant(&t.id(), &admin).await;
    let (gus, una, audrey, member) = (t.user("gus"), t.user("una"), t.user("audrey"), t.user("member"));
    for (user, role) in [(&gus, "member"), (&una, "member"), (&audrey, "auditor"), (&member, "member")] {
        let path = api(&format!("/tenants/{}/role-assignments/{user}", t.id()));
        ctx.as_admin(t, "PUT", &path, Some(json!({"role": role}))).await;
    }
    let p = t.p();
    let f = ctx.as_admin(t, "POST", &api("/folders"), Some(json!({"name": format!("{p}-ops")}))).await;
    let folder = f["id"].as_str().expect("folder id").to_string();
    let mut ids: HashSet<String> = HashSet::from([folder.clone()]);
    let mut sub = Vec::new();
    for name in ["sub", "empty"] {
        let body = json!({"name": format!("{p}-{name}"), "parent_id": folder});
        let f = ctx.as_admin(t, "POST", &api("/folders"), Some(body)).await;
        sub.push(f["id"].as_str().expect("folder id").to_string());
    }
    ids.extend(sub.iter().cloned());
    let empty = sub[1].clone();
    let (cred, archived, tag) = (format!("{p}-cred"), format!("{p}-archived"), format!("{p}-tag"));
    for (key, tags) in [(&cred, json!([tag])), (&archived, json!([]))] {
        let body = json!({"key": key, "kind": "password", "value": format!("{p}-secret"), "username": format!("{p}-login"),
                          "folder_id": folder, "tags": tags});
        ctx.as_admin(t, "POST", &api("/credentials"), Some(body)).await;
    }
    ctx.as_admin(t, "POST", &api(&format!("/credentials/{archived}/archive")), None).await;
    let all = json!({"principal": gus, "permissions": ["canRead", "canReveal", "canStore"]});
    let g = ctx.as_admin(t, "POST", &api(&format!("/folders/{folder}/grants")), Some(all)).await;
    ids.insert(g["id"].as_str().expect("grant id").to_string());
    let dummy = json!({"principal": t.user("dummy"), "permissions": ["canRead"]});
    let gc = ctx.as_admin(t, "POST", &api(&format!("/credentials/{cred}/grants")), Some(dummy.clone())).await;
    let gf = ctx.as_admin(t, "POST", &api(&format!("/folders/{folder}/grants")), Some(dummy)).await;
    let (grant_on_cred, grant_on_folder) =
        (gc["id"].as_str().expect("grant id").to_string(), gf["id"].as_str().expect("grant id").to_string());
    let lease_body = json!({"credential_key": cred, "ttl_seconds": 3600});
    let l = ctx.as_admin(t, "POST", &api("/leases"), Some(lease_body.clone())).await;
    let lease = l["id"].as_str().expect("lease id").to_string();
    let gl = ctx.as_user(t, &gus, "vault:read", "POST", &api("/leases"), Some(lease_body)).await;
    ids.insert(gl["id"].as_str().expect("lease id").to_string());
    let tk = ctx.as_admin(t, "POST", &api("/tokens"), Some(json!({"name": "victim", "scopes": ["vault:read"]}))).await;
    let token = tk["id"].as_str().expect("token id").to_string();
    for user in [&gus, &una, &audrey] {
        let tk = ctx
            .as_user(
                t,
                user,
                "vault:read",
                "POST",
                &api("/tokens"),
                Some(json!({"name": "mine", "scopes": ["vault:read"]})),
            )
            .await;
        ids.insert(tk["id"].as_str().expect("token id").to_string());
    }
    ids.extend([grant_on_cred.clone(), grant_on_folder.clone(), lease.clone(), token.clone()]);
    Fixtures {
        tenant: t,
        admin,
        gus,
        member,
        folder,
        empty,
        cred,
        tag,
        archived,
        grant_on_cred,
        grant_on_folder,
        lease,
        token,
        ids,
    }
}

async fn principals(ctx: &mut Ctx) -> Vec<Principal> {
    let a = ctx.fx(Tenant::A).clone();
    let b = ctx.fx(Tenant::B).clone();
    let jwt =
        |ctx: &Ctx, f: &Fixtures, user: &str, scope: &str| Some(ctx.server.token_for(user, &f.tenant.id(), scope));
    let mut pat = Vec::new();
    for scope in ["vault:admin", "vault:read"] {
        let body = json!({"name": format!("pat {scope}"), "scopes": [scope]});
        let t = ctx.as_admin(Tenant::A, "POST", &api("/tokens"), Some(body)).await;
        let secret = t["token"].as_str().expect("data.token").to_string();
        assert!(secret.starts_with("swp_"), "personal token {secret:.4}…");
        pat.push(Some(secret));
    }
    let una = Tenant::A.user("una");
    let audrey = Tenant::A.user("audrey");
    let mk = |name, f: &Fixtures, bearer, user: &str, leases_as: &str| Principal {
        name,
        tenant: f.tenant,
        bearer,
        leases_as: leases_as.to_string(),
        user: user.to_string(),
    };
    vec![
        mk("anonymous", &a, None, &a.admin, &a.admin),
        mk("admin-read", &a, jwt(ctx, &a, &a.admin, "vault:read"), &a.admin, &a.admin),
        mk("admin-write", &a, jwt(ctx, &a, &a.admin, "vault:write"), &a.admin, &a.admin),
        mk("admin-admin", &a, jwt(ctx, &a, &a.admin, "vault:admin"), &a.admin, &a.admin),
        mk("admin-pat", &a, pat[0].take(), &a.admin, &a.admin),
        mk("admin-pat-read", &a, pat[1].take(), &a.admin, &a.admin),
        mk("granted", &a, jwt(ctx, &a, &a.gus, "vault:admin"), &a.gus, &a.gus),
        mk("granted-read", &a, jwt(ctx, &a, &a.gus, "vault:read"), &a.gus, &a.gus),
        mk("ungranted", &a, jwt(ctx, &a, &una, "vault:admin"), &una, &a.admin),
        mk("auditor", &a, jwt(ctx, &a, &audrey, "vault:admin"), &audrey, &a.admin),
        mk("foreign", &b, jwt(ctx, &b, &b.admin, "vault:admin"), &b.admin, &b.admin),
    ]
}

// ---------------------------------------------------------------------------------------------
// The request of each cell

/// The request of `op` by `p` on its own tenant's objects, or on the other tenant's (`other`);
/// `None` when the operation names no object (n/a). Creates fresh fixtures where the operation
/// consumes or destroys its object. The matrix header describes each request.
async fn build(ctx: &mut Ctx, op: &Operation, p: &Principal, other: bool) -> Result<Option<Req>, String> {
    let me = p.tenant;
    let mine = ctx.fx(me).clone();
    let theirs = ctx.fx(me.other()).clone();
    let x = if other { &theirs } else { &mine };
    let path = |params: &[(&str, &str)]| fill(op, params);
    let none = |path: String| Ok(Some(Req { path, body: None }));
    let with = |path: String, body: Value| Ok(Some(Req { path, body: Some(body) }));
    match op.id {
        "list_credentials" if other => none(with_query(path(&[]), &[("state", "all"), ("folder_id", &x.folder)])),
        "list_credentials" => none(path(&[])),
        "store_credential" => {
            let key = ctx.fresh(me, "stored");
            with(path(&[]), json!({"key": key, "value": "s3cret", "folder_id": x.folder}))
        }
        "get_credential" => none(path(&[("key", &x.cred)])),
        "update_credential" if other => with(path(&[("key", &mine.cred)]), json!({"folder_id": theirs.folder})),
        "update_credential" => with(path(&[("key", &mine.cred)]), json!({"description": ctx.fresh(me, "text")})),
        "reveal_credential" => with(path(&[("key", &x.cred)]), json!({})),
        "archive_credential" => {
            let key = if other { x.cred.clone() } else { ctx.new_cred(me, &[]).await };
            none(path(&[("key", &key)]))
        }
        "restore_credential" => {
            let key = if other { x.archived.clone() } else { ctx.new_archived(me, &[]).await };
            none(path(&[("key", &key)]))
        }
        "rotate_credential" => with(path(&[("key", &x.cred)]), json!({"value": "rotated"})),
        "list_folders" if other => none(with_query(path(&[]), &[("parent_id", &x.folder)])),
        "list_folders" => none(path(&[])),
        "create_folder" => with(path(&[]), json!({"name": ctx.fresh(me, "dir"), "parent_id": x.folder})),
        "update_folder" => {
            let id = ctx.new_subfolder(me).await;
            let body =
                if other { json!({"parent_id": theirs.folder}) } else { json!({"name": ctx.fresh(me, "renamed")}) };
            with(path(&[("id", &id)]), body)
        }
        "delete_folder" => {
            let id = if other { x.empty.clone() } else { ctx.new_subfolder(me).await };
            none(path(&[("id", &id)]))
        }
        "list_tags" if other => none(with_query(path(&[]), &[("prefix", &format!("{}-", x.tenant.p()))])),
        "list_tags" => none(path(&[])),
        "rename_tag" => {
            let tag = if other { x.tag.clone() } else { ctx.new_tag(me).await };
            with(path(&[("name", &tag)]), json!({"new_name": ctx.fresh(me, "renamed")}))
        }
        "merge_tags" => {
            let tag = if other { x.tag.clone() } else { ctx.new_tag(me).await };
            with(path(&[]), json!({"sources": [tag], "target": ctx.fresh(me, "merged")}))
        }
        "prune_tags" if other => {
            // The other tenant holds a tag only an archived credential carries: a prune of the
            // caller's tenant must leave it alone.
            let tag = ctx.fresh(x.tenant, "orphan");
            ctx.new_archived(x.tenant, &[&tag]).await;
            with(path(&[]), json!({"dry_run": false}))
        }
        "prune_tags" => with(path(&[]), json!({"dry_run": true})),
        "list_leases" if other => none(with_query(path(&[]), &[("credential_key", &x.cred)])),
        "list_leases" => none(path(&[])),
        "issue_lease" => with(path(&[]), json!({"credential_key": x.cred})),
        "redeem_lease" => {
            let id = if other { x.lease.clone() } else { ctx.new_lease(me, &p.leases_as).await };
            with(path(&[]), json!({"lease_id": id}))
        }
        "revoke_lease" => {
            let id = if other { x.lease.clone() } else { ctx.new_lease(me, &p.leases_as).await };
            none(path(&[("id", &id)]))
        }
        "list_grants" if other => none(with_query(path(&[]), &[("principal", &x.gus)])),
        "list_grants" => none(path(&[])),
        "delete_grant" => {
            let id = if other { x.grant_on_cred.clone() } else { ctx.new_grant(me, false).await };
            none(path(&[("grant_id", &id)]))
        }
        "list_credential_grants" => none(path(&[("key", &x.cred)])),
        "create_credential_grant" => {
            let body = json!({"principal": ctx.fresh(me, "grantee"), "permissions": ["canRead"]});
            with(path(&[("key", &x.cred)]), body)
        }
        "delete_credential_grant" => {
            let id = if other { x.grant_on_cred.clone() } else { ctx.new_grant(me, false).await };
            none(path(&[("key", &mine.cred), ("grant_id", &id)]))
        }
        "list_folder_grants" => none(path(&[("id", &x.folder)])),
        "create_folder_grant" => {
            let body = json!({"principal": ctx.fresh(me, "grantee"), "permissions": ["canRead"]});
            with(path(&[("id", &x.folder)]), body)
        }
        "delete_folder_grant" => {
            let id = if other { x.grant_on_folder.clone() } else { ctx.new_grant(me, true).await };
            none(path(&[("id", &mine.folder), ("grant_id", &id)]))
        }
        "list_role_assignments" => none(path(&[("tenant_id", &x.tenant.id())])),
        "assign_role" if other => {
            with(path(&[("tenant_id", &x.tenant.id()), ("user_id", &x.member)]), json!({"role": "admin"}))
        }
        "assign_role" => {
            let user = ctx.fresh(me, "user");
            with(path(&[("tenant_id", &me.id()), ("user_id", &user)]), json!({"role": "member"}))
        }
        "remove_role_assignment" => {
            let user = if other { x.member.clone() } else { ctx.new_member(me).await };
            none(path(&[("tenant_id", &x.tenant.id()), ("user_id", &user)]))
        }
        "list_audit" if other => none(with_query(path(&[]), &[("actor", &x.admin)])),
        "list_audit" => none(path(&[])),
        "list_tokens" | "create_token" if other => Ok(None),
        "list_tokens" => none(path(&[])),
        "create_token" => with(path(&[]), json!({"name": ctx.fresh(me, "token"), "scopes": ["vault:read"]})),
        "revoke_token" => {
            let id = if other { x.token.clone() } else { ctx.new_token(me, &p.user).await };
            none(path(&[("token_id", &id)]))
        }
        _ => Err(format!("operation {} has no request builder in vault_authz.rs: add one", op.id)),
    }
}

// ---------------------------------------------------------------------------------------------
// Judging an answer

fn describe(status: u16, body: &Value) -> String {
    if let Some(code) = body["error"]["code"].as_str() {
        return format!("{status} {code}");
    }
    match body["data"].as_array() {
        Some(items) => format!("{status} with {} item(s), meta.total {}", items.len(), body["meta"]["total"]),
        None => status.to_string(),
    }
}

fn judge(expect: &Expect, status: u16, body: &Value) -> Result<(), String> {
    let Expect::Answer { status: want, code, shape } = expect else {
        return Err("n/a".into());
    };
    let ok = status == *want
        && code.as_deref().is_none_or(|c| body["error"]["code"].as_str() == Some(c))
        && match shape {
            None => true,
            Some(s) => {
                let n = body["data"].as_array().map(Vec::len);
                let total = body["meta"]["total"].as_u64();
                match s {
                    Shape::Some => n.is_some_and(|n| n > 0) && total.is_some_and(|t| t > 0),
                    Shape::Empty => n == Some(0) && total == Some(0),
                }
            }
        };
    if ok { Ok(()) } else { Err(describe(status, body)) }
}

/// The first string in `v` that names something of `them`.
fn leak(v: &Value, them: &Fixtures) -> Option<String> {
    match v {
        Value::String(s) if s.starts_with(&format!("{}-", them.tenant.p())) || them.ids.contains(s) => Some(s.clone()),
        Value::Array(a) => a.iter().find_map(|x| leak(x, them)),
        Value::Object(o) => o.values().find_map(|x| leak(x, them)),
        _ => None,
    }
}

/// The items of two lists that differ, as `-item` (before only) and `+item` (after only).
fn diff(before: &Value, after: &Value) -> String {
    let (b, a) = (before.as_array().cloned().unwrap_or_default(), after.as_array().cloned().unwrap_or_default());
    let gone = b.iter().filter(|x| !a.contains(x)).map(|x| format!("-{x}"));
    let new = a.iter().filter(|x| !b.contains(x)).map(|x| format!("+{x}"));
    gone.chain(new).collect::<Vec<_>>().join(" ")
}

fn clip(s: &str) -> String {
    if s.chars().count() <= 300 { s.to_string() } else { format!("{}…", s.chars().take(300).collect::<String>()) }
}

/// Counts of one shard's run.
#[derive(Debug, Default)]
struct Stats {
    cells: usize,
    victim_checks: usize,
    requests: usize,
}

/// Runs the cells of `shard`'s principals on a server of their own: failures as (matrix line, text).
async fn run_shard(shard: &'static [&'static str]) -> (Vec<(usize, String)>, Stats) {
    let (rows, _) = parse_matrix(MATRIX);
    let table: HashMap<(&str, &str, &str), &Row> =
        rows.iter().map(|r| ((r.op.as_str(), r.principal.as_str(), r.object.as_str()), r)).collect();
    let mut ctx = Ctx {
        server: TestServer::start().await,
        client: reqwest::Client::new(),
        fx: Vec::new(),
        seq: 0,
        seen: HashMap::new(),
        requests: 0,
    };
    for t in [Tenant::A, Tenant::B] {
        let fx = seed(&mut ctx, t).await;
        ctx.fx.push(fx);
    }
    let principals: Vec<Principal> =
        principals(&mut ctx).await.into_iter().filter(|p| shard.contains(&p.name)).collect();
    let mut failures = Vec::new();
    let mut stats = Stats::default();
    for op in vault_api::vault::OPERATIONS.iter() {
        for p in &principals {
            for object in OBJECTS {
                let Some(row) = table.get(&(op.id, p.name, object)) else { continue };
                let mut fail = |text: String| failures.push((row.line, text));
                let cell = format!("{MATRIX_FILE}:{} {} {} {}", row.line, op.id, p.name, object);
                let other = object == "other";
                let req = match build(&mut ctx, op, p, other).await {
                    Ok(r) => r,
                    Err(e) => {
                        fail(format!("{cell}: {e}"));
                        continue;
                    }
                };
                let req = match (&row.expect, req) {
                    (Expect::NotApplicable, None) => continue,
                    (Expect::NotApplicable, Some(_)) => {
                        fail(format!(
                            "{cell}: the table says n/a, but the test aims this operation at the other tenant's objects"
                        ));
                        continue;
                    }
                    (_, None) => {
                        fail(format!("{cell}: expected `{}`, but the operation names no object (n/a)", row.text));
                        continue;
                    }
                    (_, Some(req)) => req,
                };
                stats.cells += 1;
                let victim = p.tenant.other();
                // Every write aimed at the other tenant: what it could damage there, read before.
                let watch = match (other && op.method != Method::Get, victim_list(op, victim)) {
                    (false, _) => None,
                    (true, Some(list)) => Some((ctx.victim_state(victim, &list).await, list)),
                    (true, None) => {
                        fail(format!("{cell}: no victim check for {} in vault_authz.rs: add one", op.id));
                        None
                    }
                };
                let body = req.body.or_else(|| op.has_body.then(|| json!({})));
                let (status, resp) = ctx.send(p.tenant, op.method.as_str(), &req.path, p.bearer.as_deref(), body).await;
                if let Err(got) = judge(&row.expect, status, &resp) {
                    fail(format!("{cell}: expected `{}`, got `{got}`", row.text));
                }
                if (200..300).contains(&status)
                    && op.id != "list_audit"
                    && let Some(s) = leak(&resp, ctx.fx(victim))
                {
                    fail(format!("{cell}: the answer names `{s}` of {}: {}", victim.id(), clip(&resp.to_string())));
                }
                if let Some((before, list)) = watch {
                    stats.victim_checks += 1;
                    let after = ctx.read_as_admin(victim, &list).await;
                    if before != after {
                        fail(format!(
                            "{cell}: GET {list} of {} changed: {}",
                            victim.id(),
                            clip(&diff(&before, &after))
                        ));
                    }
                    ctx.seen.insert((victim.idx(), list), after);
                }
            }
        }
    }
    stats.requests = ctx.requests;
    (failures, stats)
}

/// The principals split in two, each half on its own server, so the two cores both work: the
/// debug build spends most of a request verifying its JWT.
const SHARDS: [&[&str]; 2] = [
    &["anonymous", "admin-write", "admin-pat", "granted", "ungranted", "foreign"],
    &["admin-read", "admin-admin", "admin-pat-read", "granted-read", "auditor"],
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_cell_of_the_vault_authorization_matrix() {
    let started = Instant::now();
    let (rows, problems) = parse_matrix(MATRIX);
    let mut failures: Vec<(usize, String)> =
        problems.into_iter().chain(table_problems(&rows)).map(|p| (0, p)).collect();
    let sharded: BTreeSet<&str> = SHARDS.iter().flat_map(|s| s.iter().copied()).collect();
    assert_eq!(sharded, PRINCIPALS.into_iter().collect(), "every principal runs in exactly one shard");
    let runs: Vec<_> = SHARDS.into_iter().map(|shard| tokio::spawn(run_shard(shard))).collect();
    let mut total = Stats::default();
    for run in runs {
        let (f, stats) = run.await.expect("shard");
        failures.extend(f);
        total.cells += stats.cells;
        total.victim_checks += stats.victim_checks;
        total.requests += stats.requests;
    }
    eprintln!(
        "vault authz matrix: {} cells sent, {} victim checks, {} requests, {:.1?}",
        total.cells,
        total.victim_checks,
        total.requests,
        started.elapsed()
    );
    failures.sort();
    assert!(
        failures.is_empty(),
        "{} failure(s) in the vault authorization matrix {MATRIX_FILE}:\n{}",
        failures.len(),
        failures.into_iter().map(|(_, f)| f).collect::<Vec<_>>().join("\n")
    );
}
