//! Contract changes between two versions of a spec folder: every difference a client could
//! notice, classified as breaking or compatible by a named rule. A breaking change is allowed only
//! with a new major version of its service (`[service] version`); [`Report::refused`] lists the
//! ones that come without it. `cargo xtask spec-diff` and `specwright-codegen diff` print it.

mod mcp;

use std::collections::BTreeMap;
use std::fmt;

use crate::ir::{Api, Field, Ty};
use crate::spec::{FieldDef, Location, StatusDocumented};

/// Whether clients written against the old spec keep working.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// They may not: allowed only with a new major version.
    Breaking,
    /// They do.
    Compatible,
}

/// One difference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The service.
    pub service: String,
    /// Breaking or compatible.
    pub kind: Kind,
    /// The rule that classified it (`operation-removed`, `input-field-narrowed`, …).
    pub rule: &'static str,
    /// Where: `operation \`get_todo\``, `operation \`get_todo\` output field \`title\``, ….
    pub place: String,
    /// What changed.
    pub what: String,
}

impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.kind {
            Kind::Breaking => "breaking",
            Kind::Compatible => "compatible",
        };
        write!(f, "{kind}: {}: {}: {} [{}]", self.service, self.place, self.what, self.rule)
    }
}

/// Every change between two versions, and each service's major versions.
#[derive(Debug, Default)]
pub struct Report {
    /// Every change, breaking ones first, then by service and place.
    pub changes: Vec<Change>,
    /// Service → (old major, new major); services present in both versions.
    pub majors: BTreeMap<String, (u64, u64)>,
}

impl Report {
    /// The breaking changes whose service kept its major version.
    pub fn refused(&self) -> Vec<&Change> {
        self.changes
            .iter()
            .filter(|c| c.kind == Kind::Breaking)
            .filter(|c| self.majors.get(&c.service).is_none_or(|(old, new)| new <= old))
            .collect()
    }
}

impl fmt::Display for Report {
    /// Every change on a line of its own, then a summary naming what breaks without a new major.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for change in &self.changes {
            writeln!(f, "{change}")?;
        }
        let breaking = self.changes.iter().filter(|c| c.kind == Kind::Breaking).count();
        let refused = self.refused();
        write!(f, "{breaking} breaking, {} compatible", self.changes.len() - breaking)?;
        if refused.is_empty() {
            return Ok(());
        }
        let mut services: Vec<&str> = refused.iter().map(|c| c.service.as_str()).collect();
        services.dedup();
        let majors: Vec<String> = services
            .iter()
            .map(|s| {
                let (old, _) = self.majors.get(*s).copied().unwrap_or_default();
                format!("`{s}` to {}.0.0", old + 1)
            })
            .collect();
        write!(
            f,
            "; {} breaking without a new major version: keep the old behaviour, or raise [service] version of {}",
            refused.len(),
            majors.join(", ")
        )
    }
}

/// The major number of a `MAJOR.MINOR.PATCH` version (0 when it does not start with a number).
fn major(version: &str) -> u64 {
    version.trim_start_matches('v').split('.').next().and_then(|m| m.parse().ok()).unwrap_or(0)
}

struct Collect<'a> {
    service: &'a str,
    out: Vec<Change>,
}

impl Collect<'_> {
    fn push(&mut self, kind: Kind, rule: &'static str, place: impl Into<String>, what: impl Into<String>) {
        self.out.push(Change { service: self.service.to_string(), kind, rule, place: place.into(), what: what.into() });
    }
}

/// Compares the services of `old` with those of `new` (each a loaded spec folder).
pub fn compare(old: &[Api], new: &[Api]) -> Report {
    let mut report = Report::default();
    for o in old {
        let name = o.name();
        let Some(n) = new.iter().find(|n| n.name() == name) else {
            report.changes.push(Change {
                service: name.into(),
                kind: Kind::Breaking,
                rule: "service-removed",
                place: "service".into(),
                what: format!("service `{name}` was removed"),
            });
            continue;
        };
        report.majors.insert(name.into(), (major(&o.spec.service.version), major(&n.spec.service.version)));
        let mut c = Collect { service: name, out: Vec::new() };
        service(&mut c, o, n);
        report.changes.extend(c.out);
    }
    for n in new.iter().filter(|n| !old.iter().any(|o| o.name() == n.name())) {
        report.changes.push(Change {
            service: n.name().into(),
            kind: Kind::Compatible,
            rule: "service-added",
            place: "service".into(),
            what: format!("service `{}` was added", n.name()),
        });
    }
    report.changes.sort_by(|a, b| (a.kind, &a.service).cmp(&(b.kind, &b.service)));
    report
}

/// The wire format shapes every answer: a change of it changes every body clients parse, and a
/// change of the problem types changes the `type` they may match on.
fn wire(c: &mut Collect, o: &crate::spec::Wire, n: &crate::spec::Wire) {
    if o.success != n.success {
        let name = |f| match f {
            crate::spec::SuccessFormat::Envelope => "in the `{\"data\": …}` envelope",
            crate::spec::SuccessFormat::Bare => "bare",
        };
        c.push(
            Kind::Breaking,
            "success-format-changed",
            "[wire] success",
            format!("success bodies are written {} instead of {}", name(n.success), name(o.success)),
        );
    }
    if o.errors != n.errors {
        c.push(
            Kind::Breaking,
            "error-format-changed",
            "[wire] errors",
            format!("errors are written as {} instead of {}", format_name(&n.errors), format_name(&o.errors)),
        );
    } else if o.problem_types != n.problem_types {
        let show = |t: &Option<String>| t.as_deref().map_or("about:blank".to_string(), |b| format!("`{b}…`"));
        c.push(
            Kind::Breaking,
            "problem-types-changed",
            "[wire] problem_types",
            format!("problem types changed from {} to {}", show(&o.problem_types), show(&n.problem_types)),
        );
    }
}

fn format_name(f: &crate::spec::ErrorFormat) -> String {
    match f {
        crate::spec::ErrorFormat::Envelope => "the `{\"error\": …}` envelope".into(),
        crate::spec::ErrorFormat::Problem => "RFC 9457 problem details".into(),
        crate::spec::ErrorFormat::Model(m) => {
            let roles: Vec<String> = m.roles().iter().map(|(role, path)| format!("{role} at `{path}`")).collect();
            format!("the error model `{}` ({})", m.model, roles.join(", "))
        }
    }
}

fn service(c: &mut Collect, o: &Api, n: &Api) {
    security(c, o, n);
    wire(c, &o.spec.wire, &n.spec.wire);
    let (op, np) = (&o.spec.pagination, &n.spec.pagination);
    if np.max_per_page < op.max_per_page {
        c.push(
            Kind::Breaking,
            "pagination-stricter",
            "[pagination]",
            format!("max_per_page lowered from {} to {}", op.max_per_page, np.max_per_page),
        );
    } else if np.max_per_page > op.max_per_page {
        c.push(
            Kind::Compatible,
            "pagination-looser",
            "[pagination]",
            format!("max_per_page raised from {} to {}", op.max_per_page, np.max_per_page),
        );
    }
    plans(c, o, n);
    unions(c, o, n);
    additional_keys(c, o, n);
    required_groups(c, o, n);
    webhooks(c, o, n);
    mcp::catalog(c, o, n);
    for old_op in &o.operations {
        let id = old_op.id();
        let place = format!("operation `{id}`");
        let Some(new_op) = n.operations.iter().find(|x| x.id() == id) else {
            let moved = n.operations.iter().find(|x| x.method() == old_op.method() && x.def.path == old_op.def.path);
            match (moved, &old_op.def.deprecated) {
                (Some(x), _) => c.push(Kind::Breaking, "operation-renamed", place, format!("renamed to `{}`", x.id())),
                // Deprecation warns clients; removing is still a new major version's to do.
                (None, Some(d)) => c.push(
                    Kind::Breaking,
                    "deprecated-operation-removed",
                    place,
                    format!("was removed (deprecated{})", d.since_words()),
                ),
                (None, None) => c.push(Kind::Breaking, "operation-removed", place, "was removed"),
            }
            continue;
        };
        if let (None, Some(d)) = (&old_op.def.deprecated, &new_op.def.deprecated) {
            c.push(Kind::Compatible, "operation-deprecated", &place, format!("was deprecated{}", d.since_words()));
        }
        if (old_op.method(), &old_op.def.path) != (new_op.method(), &new_op.def.path) {
            c.push(
                Kind::Breaking,
                "route-changed",
                &place,
                format!(
                    "{} {} became {} {}",
                    old_op.method().as_str(),
                    old_op.def.path,
                    new_op.method().as_str(),
                    new_op.def.path
                ),
            );
        }
        let (os, ns) = (old_op.def.scope.clone().unwrap_or_default(), new_op.def.scope.clone().unwrap_or_default());
        if old_op.def.public != new_op.def.public {
            // A caller without a token is refused now; the other way, every caller still passes.
            match new_op.def.public {
                true => c.push(Kind::Compatible, "operation-made-public", &place, "is served without a token"),
                false => c.push(
                    Kind::Breaking,
                    "operation-made-private",
                    &place,
                    format!("needs a token with scope `{ns}` (it was public)"),
                ),
            }
        } else if os != ns {
            // Raised: a token that reached the old scope no longer reaches the new one.
            if n.implies(&os, &ns) {
                c.push(Kind::Compatible, "scope-lowered", &place, format!("scope `{os}` lowered to `{ns}`"));
            } else {
                c.push(Kind::Breaking, "scope-raised", &place, format!("scope `{os}` raised to `{ns}`"));
            }
        }
        match (&old_op.def.mcp, &new_op.def.mcp) {
            (Some(t), None) => {
                c.push(Kind::Breaking, "tool-removed", &place, format!("MCP tool `{}` was removed", t.name))
            }
            (Some(t), Some(u)) if t.name != u.name => {
                c.push(Kind::Breaking, "tool-renamed", &place, format!("MCP tool `{}` renamed to `{}`", t.name, u.name))
            }
            (None, Some(u)) => {
                c.push(Kind::Compatible, "tool-added", &place, format!("MCP tool `{}` was added", u.name))
            }
            (Some(t), Some(u)) => mcp::tool(c, &place, t, u),
            _ => {}
        }
        // A declared code is gone when the operation no longer answers it: a code the platform
        // now adds by its role (`insufficient_scope`) answers as before.
        for code in old_op.def.errors.iter().filter(|e| !new_op.errors.contains(e)) {
            c.push(Kind::Breaking, "error-removed", &place, format!("error code `{code}` was removed"));
        }
        if old_op.def.paginated && !new_op.def.paginated {
            c.push(Kind::Breaking, "pagination-removed", &place, "no longer answers a page");
        }
        // A client written for the one status now reads that another may come.
        let (was, now) = (old_op.def.status_documented, new_op.def.status_documented);
        if now > was {
            let (rule, text) = match now {
                StatusDocumented::Range => ("success-status-ranged", "documents its success as `2XX` only"),
                StatusDocumented::Default => ("success-status-defaulted", "documents its success as `default` only"),
                _ => ("success-status-undocumented", "no longer documents its success"),
            };
            c.push(Kind::Breaking, rule, &place, text);
        }
        // A client (or a generated SDK) checking for the old status takes the new one for a
        // failure. A body dropped or added changes the default status too; its rule says so.
        if old_op.status != new_op.status && old_op.def.output.is_some() == new_op.def.output.is_some() {
            c.push(
                Kind::Breaking,
                "status-changed",
                &place,
                format!("answers {} instead of {}", new_op.status, old_op.status),
            );
        }
        answers(c, &place, old_op, new_op);
        conditional(c, &place, old_op.def.conditional(), new_op.def.conditional());
        match (old_op.def.ranges, new_op.def.ranges) {
            // A client resuming downloads gets whole files again (correct, but what it relied on
            // is gone, and a generated SDK's 206 type with it).
            (true, false) => c.push(Kind::Breaking, "ranges-removed", &place, "no longer answers parts of its file"),
            (false, true) => c.push(Kind::Compatible, "ranges-added", &place, "answers parts of its file (`Range`)"),
            _ => {}
        }
        if old_op.def.body != new_op.def.body {
            c.push(
                Kind::Breaking,
                "request-body-format-changed",
                &place,
                format!("takes a {:?} body instead of {:?}", new_op.def.body, old_op.def.body).to_lowercase(),
            );
        }
        // A JSON body's media types: one a client sends or asks for must stay.
        let listed = |l: &[String]| -> Vec<String> {
            if l.is_empty() {
                vec!["application/json".into()]
            } else {
                l.iter().map(|m| m.to_ascii_lowercase()).collect()
            }
        };
        for (old, new, gone, added, what) in [
            (
                &old_op.def.request_types,
                &new_op.def.request_types,
                "request-type-removed",
                "request-type-added",
                "a request body",
            ),
            (
                &old_op.def.answer_types,
                &new_op.def.answer_types,
                "answer-type-removed",
                "answer-type-added",
                "an answer",
            ),
        ] {
            let (old, new) = (listed(old), listed(new));
            for m in old.iter().filter(|m| !new.contains(m)) {
                c.push(Kind::Breaking, gone, &place, format!("no longer takes `{m}` for {what}"));
            }
            for m in new.iter().filter(|m| !old.contains(m)) {
                c.push(Kind::Compatible, added, &place, format!("takes `{m}` for {what}"));
            }
        }
        let (oi, ni) = (o.input(old_op), n.input(new_op));
        let empty = Vec::new();
        inputs(c, &place, oi.map_or(&empty, |m| &m.fields), ni.map_or(&empty, |m| &m.fields), o, n);
        request_models(c, &place, old_op, new_op, o, n);
        if old_op.def.stream != new_op.def.stream {
            let name = |s: Option<support::StreamFormat>| match s {
                Some(support::StreamFormat::Sse) => "Server-Sent Events",
                Some(support::StreamFormat::Ndjson) => "NDJSON",
                None => "one body",
            };
            c.push(
                Kind::Breaking,
                "output-shape-changed",
                &place,
                format!("answers {} instead of {}", name(new_op.def.stream), name(old_op.def.stream)),
            );
        }
        let what = |file: bool| if file { "a file" } else { "JSON" };
        if old_op.file_output != new_op.file_output {
            c.push(
                Kind::Breaking,
                "output-shape-changed",
                &place,
                format!("answers {} instead of {}", what(new_op.file_output), what(old_op.file_output)),
            );
        }
        let (old_types, new_types) = (&old_op.def.media_types, &new_op.def.media_types);
        for m in new_types.iter().filter(|m| old_op.file_output && !old_types.contains(m)) {
            // A client that handles the types it was told of gets one it was not.
            c.push(Kind::Breaking, "file-media-type-added", &place, format!("may now answer a file of `{m}`"));
        }
        for m in old_types.iter().filter(|m| new_op.file_output && !new_types.contains(m)) {
            c.push(Kind::Compatible, "file-media-type-removed", &place, format!("no longer answers `{m}`"));
        }
        // A value output (not a model) changes shape when its type changes at all: its
        // constraints live in the type, and no field rule sees inside it.
        if (old_op.value_output.is_some() || new_op.value_output.is_some())
            && old_op.value_output != new_op.value_output
            && old_op.file_output == new_op.file_output
        {
            let shape = |op: &crate::ir::Operation| match (&op.value_output, &op.def.output) {
                (Some(t), _) => format!("`{}`", t.expr()),
                (None, Some(m)) if op.list_output => format!("`{m}[]`"),
                (None, Some(m)) => format!("`{m}`"),
                (None, None) if op.file_output => "a file".into(),
                (None, None) => "no body".into(),
            };
            let code = if new_op.value_output.is_none() && new_op.def.output.is_none() && !new_op.file_output {
                "output-removed"
            } else {
                "output-shape-changed"
            };
            c.push(Kind::Breaking, code, &place, format!("answers {} instead of {}", shape(new_op), shape(old_op)));
            continue;
        }
        match (&old_op.def.output, &new_op.def.output) {
            (Some(_), Some(_)) if old_op.list_output != new_op.list_output => {
                let shape = |list: bool| if list { "a list" } else { "one object" };
                c.push(
                    Kind::Breaking,
                    "output-shape-changed",
                    &place,
                    format!("answers {} instead of {}", shape(new_op.list_output), shape(old_op.list_output)),
                );
            }
            (Some(om), Some(nm)) => outputs(c, &format!("{place} output"), om, nm, o, n, &mut Vec::new()),
            (Some(_), None) if !new_op.file_output => {
                c.push(Kind::Breaking, "output-removed", &place, "no longer answers a body")
            }
            _ => {}
        }
    }
    for new_op in n.operations.iter().filter(|x| !o.operations.iter().any(|y| y.id() == x.id())) {
        if !o.operations.iter().any(|y| y.method() == new_op.method() && y.def.path == new_op.def.path) {
            c.push(Kind::Compatible, "operation-added", format!("operation `{}`", new_op.id()), "was added");
        }
    }
}

fn security(c: &mut Collect, o: &Api, n: &Api) {
    let (os, ns) = (&o.spec.security, &n.spec.security);
    for (what, a, b) in [
        ("authorization_url", &os.authorization_url, &ns.authorization_url),
        ("token_url", &os.token_url, &ns.token_url),
    ] {
        if a != b {
            c.push(Kind::Breaking, "security-scheme-changed", "[security]", format!("{what} `{a}` became `{b}`"));
        }
    }
    for scope in os.scopes.iter().filter(|s| !ns.scopes.iter().any(|t| t.name == s.name)) {
        c.push(Kind::Breaking, "security-scheme-changed", "[security]", format!("scope `{}` was removed", scope.name));
    }
    for kind in os.stored_tokens.iter().filter(|k| !ns.stored_tokens.contains(k)) {
        c.push(
            Kind::Breaking,
            "security-scheme-changed",
            "[security]",
            format!("stored tokens `{}` are no longer accepted", kind.as_str()),
        );
    }
}

fn plans(c: &mut Collect, o: &Api, n: &Api) {
    let empty = indexmap::IndexMap::new();
    let old = o.spec.rate_limits.as_ref().map_or(&empty, |r| &r.plans);
    let new = n.spec.rate_limits.as_ref().map_or(&empty, |r| &r.plans);
    for (name, p) in old {
        let place = format!("rate-limit plan `{name}`");
        let Some(q) = new.get(name) else {
            c.push(Kind::Breaking, "plan-stricter", place, "was removed");
            continue;
        };
        for (what, a, b) in [("per_minute", p.per_minute, q.per_minute), ("per_day", p.per_day, q.per_day)] {
            if b < a {
                c.push(Kind::Breaking, "plan-stricter", &place, format!("{what} lowered from {a} to {b}"));
            } else if b > a {
                c.push(Kind::Compatible, "plan-looser", &place, format!("{what} raised from {a} to {b}"));
            }
        }
    }
}

/// A union kept under its name: a changed tag or a variant removed or holding another model
/// breaks clients that send or read it; a variant added is compatible, as an enum value is
/// (clients must accept variants they do not know).
/// Events: a subscriber's receiver reads a payload as a client reads a response, so the output
/// rules judge it; an event type that goes away leaves subscribers waiting for nothing.
fn webhooks(c: &mut Collect, o: &Api, n: &Api) {
    for (name, old) in &o.spec.webhooks {
        let place = format!("webhook `{name}`");
        match n.spec.webhooks.get(name) {
            None => c.push(Kind::Breaking, "webhook-removed", &place, "is no longer sent"),
            Some(new) => outputs(c, &format!("{place} payload"), &old.payload, &new.payload, o, n, &mut Vec::new()),
        }
    }
    for name in n.spec.webhooks.keys().filter(|k| !o.spec.webhooks.contains_key(*k)) {
        c.push(Kind::Compatible, "webhook-added", format!("webhook `{name}`"), "is sent from now on");
    }
}

/// Keys beside a model's fields: allowing them widens what a request may send and a response
/// may hold (compatible); dropping them, or changing what they hold, refuses what was sent or
/// breaks what was read.
fn additional_keys(c: &mut Collect, o: &Api, n: &Api) {
    for (name, old) in &o.models {
        let Some(new) = n.models.get(name) else { continue };
        let place = format!("model `{name}`");
        match (&old.additional, &new.additional) {
            (None, Some(f)) => c.push(
                Kind::Compatible,
                "additional-keys-added",
                &place,
                format!("takes other keys of `{}`", f.ty.expr()),
            ),
            (Some(_), None) => c.push(Kind::Breaking, "additional-keys-removed", &place, "no longer takes other keys"),
            (Some(a), Some(b)) if a.ty != b.ty => c.push(
                Kind::Breaking,
                "additional-keys-changed",
                &place,
                format!("other keys hold `{}` instead of `{}`", b.ty.expr(), a.ty.expr()),
            ),
            (Some(a), Some(b)) => {
                let (narrowed, _) = bounds(&a.def, &b.def);
                if !narrowed.is_empty() {
                    let what = format!("other keys' values narrowed: {}", narrowed.join(", "));
                    c.push(Kind::Breaking, "additional-keys-narrowed", &place, what);
                }
            }
            _ => {}
        }
    }
}

/// Groups of fields a model requires: where a request may carry the model, asking for groups
/// (or other ones) refuses what was sent, and asking for none no longer does; where only answers
/// carry it, the groups document what is answered, and any change is compatible.
fn required_groups(c: &mut Collect, o: &Api, n: &Api) {
    let inputs: Vec<&str> = n.operations.iter().filter_map(|op| op.def.input.as_deref()).collect();
    let request_side = n.reachable(inputs);
    for (name, old) in &o.models {
        let Some(new) = n.models.get(name) else { continue };
        if old.requires == new.requires {
            continue;
        }
        let place = format!("model `{name}`");
        let described = |r: &crate::spec::RequiresDef| {
            let (exactly_one, groups) = r.rule();
            let groups: Vec<String> = groups.iter().map(|g| format!("[{}]", g.join(", "))).collect();
            format!("{} of {}", if exactly_one { "exactly one" } else { "at least one" }, groups.join(" "))
        };
        let breaking = request_side.contains(name) && new.requires.is_some();
        let (kind, rule) = if breaking {
            (Kind::Breaking, "required-groups-narrowed")
        } else {
            (Kind::Compatible, "required-groups-changed")
        };
        let what = match (&old.requires, &new.requires) {
            (None, Some(r)) => format!("now requires {}", described(r)),
            (Some(_), None) => "no longer requires groups of fields".to_string(),
            (Some(a), Some(b)) => format!("requires {} instead of {}", described(b), described(a)),
            (None, None) => continue,
        };
        c.push(kind, rule, &place, what);
    }
}

fn unions(c: &mut Collect, o: &Api, n: &Api) {
    for (name, u) in &o.spec.unions {
        let Some(v) = n.spec.unions.get(name) else { continue };
        let place = format!("union `{name}`");
        if u.tag != v.tag {
            let show = |t: &Option<String>| t.as_deref().map_or("none".to_string(), |t| format!("`{t}`"));
            c.push(
                Kind::Breaking,
                "union-tag-changed",
                &place,
                format!("tag {} became {}", show(&u.tag), show(&v.tag)),
            );
        }
        for (variant, model) in &u.variants {
            match v.variants.get(variant) {
                None => {
                    c.push(Kind::Breaking, "union-variant-removed", &place, format!("variant `{variant}` was removed"))
                }
                Some(m) if m != model => c.push(
                    Kind::Breaking,
                    "union-variant-removed",
                    &place,
                    format!("variant `{variant}` holds `{m}` instead of `{model}`"),
                ),
                Some(_) => {}
            }
        }
        for variant in v.variants.keys().filter(|k| !u.variants.contains_key(*k)) {
            c.push(
                Kind::Compatible,
                "union-variant-added",
                &place,
                format!("variant `{variant}` was added (clients must accept variants they do not know)"),
            );
        }
    }
}

/// The type as the spec writes it, for messages.
fn ty_name(f: &Field) -> String {
    f.def.ty.clone()
}

/// The enum values a type takes, when it is an enum (or a list or map of one).
fn enum_values<'a>(ty: &Ty, api: &'a Api) -> Option<Vec<&'a str>> {
    match ty {
        Ty::Enum(e) => Some(api.spec.enums[e].values.iter().map(|v| v.name.as_str()).collect()),
        Ty::List(inner) | Ty::Map(inner) => enum_values(inner, api),
        _ => None,
    }
}

/// How `new` bounds a value compared with `old`: the constraints it narrows and loosens.
fn bounds(old: &FieldDef, new: &FieldDef) -> (Vec<String>, Vec<String>) {
    let (mut narrowed, mut loosened) = (Vec::new(), Vec::new());
    // A bound is tighter when it is new, or moved inward: up for a lower bound, down for an upper.
    let shown = |v: Option<f64>| v.map_or("none".into(), |v| v.to_string());
    let mut bound = |what: &str, a: Option<f64>, b: Option<f64>, inward: fn(f64, f64) -> bool| match (a, b) {
        (a, Some(b)) if a.is_none_or(|a| inward(a, b)) => narrowed.push(format!("{what} {} → {b}", shown(a))),
        (Some(a), b) if b.is_none_or(|b| inward(b, a)) => loosened.push(format!("{what} {a} → {}", shown(b))),
        _ => {}
    };
    fn up(a: f64, b: f64) -> bool {
        b > a
    }
    fn down(a: f64, b: f64) -> bool {
        b < a
    }
    bound("minimum", old.minimum, new.minimum, up);
    bound("min_length", old.min_length.map(f64::from), new.min_length.map(f64::from), up);
    bound("min_items", old.min_items.map(f64::from), new.min_items.map(f64::from), up);
    bound("maximum", old.maximum, new.maximum, down);
    bound("max_length", old.max_length.map(f64::from), new.max_length.map(f64::from), down);
    bound("max_items", old.max_items.map(f64::from), new.max_items.map(f64::from), down);
    bound("exclusive_minimum", old.exclusive_minimum, new.exclusive_minimum, up);
    bound("exclusive_maximum", old.exclusive_maximum, new.exclusive_maximum, down);
    for t in old.one_of.iter().filter(|t| !new.one_of.is_empty() && !new.one_of.contains(t)) {
        narrowed.push(format!("a `{t}` is no longer one of its types"));
    }
    for t in new.one_of.iter().filter(|t| !old.one_of.is_empty() && !old.one_of.contains(t)) {
        loosened.push(format!("a `{t}` is one of its types"));
    }
    match (old.one_of.is_empty(), new.one_of.is_empty()) {
        (true, false) => narrowed.push("only the listed types are accepted".into()),
        (false, true) => loosened.push("any value is accepted".into()),
        _ => {}
    }
    match (old.nullable_items, new.nullable_items) {
        (true, false) => narrowed.push("items may no longer be null".into()),
        (false, true) => loosened.push("items may be null".into()),
        _ => {}
    }
    match (old.multiple_of, new.multiple_of) {
        (a, Some(b)) if a != Some(b) => narrowed.push(format!("multiple_of {b}")),
        (Some(a), None) => loosened.push(format!("multiple_of {a} dropped")),
        _ => {}
    }
    // Values: one no longer accepted narrows, and a list where there was none; one more loosens.
    match (old.values.is_empty(), new.values.is_empty()) {
        (true, false) => narrowed.push("only the listed values are accepted".into()),
        (false, true) => loosened.push("any value is accepted".into()),
        (false, false) => {
            for v in old.values.iter().filter(|v| !new.values.contains(v)) {
                narrowed.push(format!("value {v} is no longer accepted"));
            }
            for v in new.values.iter().filter(|v| !old.values.contains(v)) {
                loosened.push(format!("value {v} is accepted"));
            }
        }
        (true, true) => {}
    }
    match (&old.pattern, &new.pattern) {
        (a, Some(b)) if a.as_ref() != Some(b) => narrowed.push(format!("pattern `{b}`")),
        (Some(a), None) => loosened.push(format!("pattern `{a}` dropped")),
        _ => {}
    }
    match (old.format, new.format) {
        (a, Some(b)) if a != Some(b) => narrowed.push(format!("format `{}`", b.as_str())),
        (Some(a), None) => loosened.push(format!("format `{}` dropped", a.as_str())),
        _ => {}
    }
    (narrowed, loosened)
}

/// The bodies of another shape than the input (`request_models`) a type still taken has: another
/// model is another body (breaking); the same model's fields change as an input's do.
fn request_models(
    c: &mut Collect,
    place: &str,
    old_op: &crate::ir::Operation,
    new_op: &crate::ir::Operation,
    o: &Api,
    n: &Api,
) {
    let taken = |op: &crate::ir::Operation, m: &str| op.def.request_types.iter().any(|t| t.eq_ignore_ascii_case(m));
    let types = old_op.def.request_models.keys().chain(new_op.def.request_models.keys());
    let mut seen: Vec<String> = Vec::new();
    for m in types.filter(|m| taken(old_op, m) && taken(new_op, m)) {
        if seen.contains(m) {
            continue;
        }
        seen.push(m.clone());
        let (old, new) = (old_op.def.request_models.get(m), new_op.def.request_models.get(m));
        let shape = |model: Option<&String>| model.map_or("the input's".to_string(), |x| format!("`{x}`"));
        match (old.and_then(|x| o.models.get(x)), new.and_then(|x| n.models.get(x))) {
            (Some(a), Some(b)) if a.name == b.name => {
                inputs(c, &format!("{place} `{m}` body"), &a.fields, &b.fields, o, n);
            }
            _ => c.push(
                Kind::Breaking,
                "request-model-changed",
                place,
                format!("takes `{m}` bodies shaped as {} instead of {}", shape(new), shape(old)),
            ),
        }
    }
}

fn inputs(c: &mut Collect, place: &str, old: &[Field], new: &[Field], o: &Api, n: &Api) {
    for f in old.iter().filter(|f| !f.injected) {
        let at = format!("{place} input field `{}`", f.name);
        let Some(g) = new.iter().find(|g| g.name == f.name) else {
            let rule = if f.def.deprecated { "deprecated-input-field-removed" } else { "input-field-removed" };
            c.push(Kind::Breaking, rule, at, "was removed (a client sending it is refused)");
            continue;
        };
        if !f.def.deprecated && g.def.deprecated {
            c.push(Kind::Compatible, "input-field-deprecated", &at, "was deprecated");
        }
        if f.location() != g.location() {
            c.push(
                Kind::Breaking,
                "input-field-moved",
                &at,
                format!("moved from {:?} to {:?}", f.location(), g.location()).to_lowercase(),
            );
        }
        if f.location() == g.location() && f.wire() != g.wire() {
            // A client sends it under the old name, which the server no longer reads.
            c.push(
                Kind::Breaking,
                "input-parameter-renamed",
                &at,
                format!("travels as `{}`, not `{}`", g.wire(), f.wire()),
            );
        }
        if f.def.content != g.def.content {
            // JSON text is read as JSON; a plain value is not, and the other way round.
            let how = |c: &Option<String>| c.clone().unwrap_or_else(|| "its style".into());
            c.push(
                Kind::Breaking,
                "input-content-changed",
                &at,
                format!("is written as {}, not {}", how(&g.def.content), how(&f.def.content)),
            );
        }
        if f.def.style != g.def.style {
            // A client written for one style sends what the other reads as one item, or refuses.
            c.push(
                Kind::Breaking,
                "input-list-style-changed",
                &at,
                format!("its items travel `{}`, not `{}`", g.def.style.as_str(), f.def.style.as_str()),
            );
        }
        if !f.required() && g.required() {
            c.push(Kind::Breaking, "input-field-required", &at, "became required");
        }
        if f.ty != g.ty {
            c.push(
                Kind::Breaking,
                "input-field-narrowed",
                &at,
                format!("type `{}` became `{}`", ty_name(f), ty_name(g)),
            );
            continue;
        }
        if let (Some(a), Some(b)) = (enum_values(&f.ty, o), enum_values(&g.ty, n)) {
            for v in a.iter().filter(|v| !b.contains(v)) {
                c.push(Kind::Breaking, "input-field-narrowed", &at, format!("enum value `{v}` is no longer accepted"));
            }
            for v in b.iter().filter(|v| !a.contains(v)) {
                c.push(Kind::Compatible, "input-enum-widened", &at, format!("enum value `{v}` is accepted"));
            }
        }
        match (&f.def.default, &g.def.default) {
            (Some(a), b) if b.as_ref() != Some(a) => {
                let now = b.as_ref().map_or("none".to_string(), ToString::to_string);
                // A client leaving the field out gets another value than before.
                c.push(Kind::Breaking, "input-default-changed", &at, format!("default {a} became {now}"));
            }
            (None, Some(b)) => c.push(Kind::Compatible, "input-default-added", &at, format!("default {b} was added")),
            _ => {}
        }
        // A file field: the media types it accepts, and its largest size.
        for m in f.def.media_types.iter().filter(|m| !g.def.media_types.is_empty() && !g.def.media_types.contains(m)) {
            c.push(Kind::Breaking, "input-field-narrowed", &at, format!("media type `{m}` is no longer accepted"));
        }
        for m in g.def.media_types.iter().filter(|m| !f.def.media_types.contains(m)) {
            c.push(Kind::Compatible, "input-field-loosened", &at, format!("media type `{m}` is accepted"));
        }
        match (f.def.max_size, g.def.max_size) {
            (a, b) if a == b => {}
            (a, b) if b.unwrap_or(u64::MAX) < a.unwrap_or(u64::MAX) => {
                c.push(Kind::Breaking, "input-field-narrowed", &at, format!("max_size lowered to {}", b.unwrap_or(0)))
            }
            _ => c.push(Kind::Compatible, "input-field-loosened", &at, "max_size raised"),
        }
        let (narrowed, loosened) = bounds(&f.def, &g.def);
        for what in narrowed {
            c.push(Kind::Breaking, "input-field-narrowed", &at, what);
        }
        for what in loosened {
            c.push(Kind::Compatible, "input-field-loosened", &at, what);
        }
    }
    for g in new.iter().filter(|g| !g.injected && !old.iter().any(|f| f.name == g.name)) {
        let at = format!("{place} input field `{}`", g.name);
        if g.required() {
            c.push(Kind::Breaking, "input-field-required", at, "was added as required");
        } else {
            c.push(Kind::Compatible, "input-field-added", at, "was added as optional");
        }
    }
}

/// The model a field holds, itself (`""`) or as a list of them (`"[]"`): what the output
/// comparison descends into.
/// The other success answers of an operation: one added is breaking (a client, or a generated
/// SDK, checking for the statuses it was told of takes it for a failure), one removed is not, and
/// one answering another type changes its shape.
fn answers(c: &mut Collect, place: &str, old: &crate::ir::Operation, new: &crate::ir::Operation) {
    for a in &new.alternatives {
        match old.alternatives.iter().find(|o| o.status == a.status) {
            None if a.status != old.status => {
                c.push(Kind::Breaking, "answer-added", place, format!("may now answer {}", a.status))
            }
            Some(o) if o.output != a.output => {
                let shape = |t: &Option<Ty>| t.as_ref().map_or("no body".to_string(), |t| format!("`{}`", t.expr()));
                c.push(
                    Kind::Breaking,
                    "output-shape-changed",
                    place,
                    format!("answers {} instead of {} with {}", shape(&a.output), shape(&o.output), a.status),
                );
            }
            _ => {}
        }
    }
    for o in old.alternatives.iter().filter(|o| o.status != new.status) {
        if !new.alternatives.iter().any(|a| a.status == o.status) {
            c.push(Kind::Compatible, "answer-removed", place, format!("no longer answers {}", o.status));
        }
    }
}

fn nested_model(ty: &Ty) -> Option<(&str, &'static str)> {
    match ty {
        Ty::Model(m) => Some((m, "")),
        Ty::List(inner) => match &**inner {
            Ty::Model(m) => Some((m, "[]")),
            _ => None,
        },
        _ => None,
    }
}

/// Conditional requests: tagging is compatible; dropping it breaks a client that revalidates
/// or guards its writes; requiring `If-Match` breaks every client that does not send it.
fn conditional(c: &mut Collect, place: &str, old: Option<support::Conditional>, new: Option<support::Conditional>) {
    use support::Conditional::Write;
    let required = |m: Option<support::Conditional>| matches!(m, Some(Write { required: true }));
    match (old, new) {
        (Some(_), None) => c.push(
            Kind::Breaking,
            "conditional-removed",
            place,
            "no longer takes part in conditional requests (no ETag, its preconditions ignored)",
        ),
        (None, Some(_)) if !required(new) => {
            c.push(Kind::Compatible, "conditional-added", place, "takes part in conditional requests (ETag)")
        }
        _ if required(new) && !required(old) => c.push(
            Kind::Breaking,
            "precondition-required",
            place,
            "requires If-Match (a request without it is refused with 428)",
        ),
        _ => {}
    }
}

fn outputs(c: &mut Collect, place: &str, old_model: &str, new_model: &str, o: &Api, n: &Api, seen: &mut Vec<String>) {
    if seen.iter().any(|s| s == old_model) {
        return;
    }
    seen.push(old_model.to_string());
    let (old, new) = (&o.models[old_model].fields, &n.models[new_model].fields);
    for f in old {
        let at = format!("{place} field `{}`", f.name);
        let Some(g) = new.iter().find(|g| g.name == f.name) else {
            c.push(Kind::Breaking, "output-field-removed", at, "was removed");
            continue;
        };
        if f.location() != g.location() {
            let place = |l: Location| if l == Location::Header { "a response header" } else { "the body" };
            c.push(
                Kind::Breaking,
                "output-field-moved",
                &at,
                format!("moved from {} to {}", place(f.location()), place(g.location())),
            );
        }
        if f.required() && !g.required() {
            c.push(Kind::Breaking, "output-field-optional", &at, "may now be absent");
        }
        if !f.def.nullable && g.def.nullable {
            c.push(Kind::Breaking, "output-field-optional", &at, "may now be null");
        }
        match (nested_model(&f.ty), nested_model(&g.ty)) {
            (Some((a, list)), Some((b, also))) if list == also => outputs(c, &format!("{at}{list}"), a, b, o, n, seen),
            _ if f.ty != g.ty => c.push(
                Kind::Breaking,
                "output-field-widened",
                &at,
                format!("type `{}` became `{}`", ty_name(f), ty_name(g)),
            ),
            _ => {
                if let (Some(a), Some(b)) = (enum_values(&f.ty, o), enum_values(&g.ty, n)) {
                    for v in b.iter().filter(|v| !a.contains(v)) {
                        c.push(
                            Kind::Compatible,
                            "output-enum-widened",
                            &at,
                            format!("may now be `{v}` (clients must accept enum values they do not know)"),
                        );
                    }
                }
            }
        }
    }
    for g in new.iter().filter(|g| !old.iter().any(|f| f.name == g.name)) {
        c.push(Kind::Compatible, "output-field-added", format!("{place} field `{}`", g.name), "was added");
    }
}
