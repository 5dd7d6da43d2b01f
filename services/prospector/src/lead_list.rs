//! The lead list: a page's ids and revisions read from the ordering index, each lead rendered
//! once per revision and kept ([`Renderings`]), its total from the kept counts.

use prospector_api::prospector::errors;
use prospector_api::prospector::models::{self, Lead};
use sqlx::Row;
use sqlx::any::AnyRow;
use support::{Paged, Paging, Rendered};

use crate::leads::{Listed, contains_pattern};
use runtime::Context;
use runtime::OperationFault;
use runtime::store::{Arg, Select, Store};
/// Leads as lists show them, kept rendered per stored revision: rendering a lead (reading its
/// posting and score breakdown, parsing them, writing its JSON) costs several times reading its
/// id and revision from the index that orders the list, and a page of 100 is read far more often
/// than its leads change.
///
/// An entry holds a lead's rendering with the `revision` of the row it was rendered from. Every
/// change to a lead's row advances its revision (its writers do, and a trigger does for any
/// change that does not: one made outside the service, a migration), so a lead whose revision
/// differs is read and rendered anew and whatever changed it is shown at once, with no
/// invalidation to forget. A page's ids and revisions are read, filtered by tenant, on every
/// request; an entry is only used for a lead that request read. At most
/// `2 × KEPT_PER_GENERATION` entries are kept: when the newer generation is full it becomes the
/// older one and the older one is dropped, and an entry found in the older one moves to the
/// newer (leads read again stay).
#[derive(Default)]
pub struct Renderings {
    kept: std::sync::Mutex<Generations>,
}

/// Lead renderings kept in a generation.
const KEPT_PER_GENERATION: usize = 8_192;

/// What a list reads of a lead it has no rendering of: the columns [`Listed::from_row`] reads
/// (the first nine of [`COLUMNS`]) and the revision.
const LISTED: &str = "id, posting, status, tags, breakdown, score, confidence, created_at, updated_at, revision";

#[derive(Default)]
struct Generations {
    newer: std::collections::HashMap<String, (i64, Rendered<Lead>)>,
    older: std::collections::HashMap<String, (i64, Rendered<Lead>)>,
}

impl std::fmt::Debug for Renderings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kept = self.kept.lock().map(|g| g.newer.len() + g.older.len()).unwrap_or(0);
        f.debug_struct("Renderings").field("kept", &kept).finish()
    }
}

impl Renderings {
    /// The list view of the leads of `tenant` that `heads` names (rows of id and revision, in
    /// the page's order): as kept when the revision is the one read, else read (one statement
    /// for all of them) and rendered. A lead deleted between the two reads is left out.
    async fn page(&self, store: &Store, tenant: &str, heads: &[AnyRow]) -> Result<Vec<Rendered<Lead>>, String> {
        let mut found: Vec<Option<Rendered<Lead>>> = vec![None; heads.len()];
        if let Ok(mut kept) = self.kept.lock() {
            for (head, found) in heads.iter().zip(&mut found) {
                let (id, revision) = (head.get::<&str, _>(0), head.get::<i64, _>(1));
                *found = match kept.newer.get(id) {
                    Some((r, rendered)) if *r == revision => Some(rendered.clone()),
                    _ => match kept.older.remove(id) {
                        Some((r, rendered)) if r == revision => {
                            kept.keep(id.to_owned(), r, rendered.clone());
                            Some(rendered)
                        }
                        _ => None,
                    },
                };
            }
        }
        let missing: Vec<&str> =
            heads.iter().zip(&found).filter(|(_, f)| f.is_none()).map(|(h, _)| h.get::<&str, _>(0)).collect();
        if missing.is_empty() {
            return Ok(found.into_iter().flatten().collect());
        }
        let ids: Vec<String> = (0..missing.len()).map(|i| format!("${}", i + 2)).collect();
        let sql = format!("SELECT {LISTED} FROM leads WHERE tenant_id = $1 AND id IN ({})", ids.join(", "));
        let mut query = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(tenant);
        for id in &missing {
            query = query.bind(*id);
        }
        let rows = query.fetch_all(store.readers()).await.map_err(|e| e.to_string())?;
        let mut read = std::collections::HashMap::with_capacity(rows.len());
        for r in &rows {
            let lead = Rendered::of(&Listed::from_row(r)?.lead());
            read.insert(r.get::<String, _>(0), (r.get::<i64, _>(9), lead));
        }
        if let Ok(mut kept) = self.kept.lock() {
            for (id, (revision, lead)) in &read {
                kept.keep(id.clone(), *revision, lead.clone());
            }
        }
        let page = heads.iter().zip(found).filter_map(|(head, found)| {
            found.or_else(|| read.get(head.get::<&str, _>(0)).map(|(_, lead)| lead.clone()))
        });
        Ok(page.collect())
    }
}

impl Generations {
    fn keep(&mut self, id: String, revision: i64, lead: Rendered<Lead>) {
        if self.newer.len() >= KEPT_PER_GENERATION && !self.newer.contains_key(&id) {
            self.older = std::mem::take(&mut self.newer);
        }
        self.newer.insert(id, (revision, lead));
    }
}

/// `GET /leads`.
pub async fn list(
    store: &Store,
    renderings: &Renderings,
    cx: &mut Context,
    input: models::ListLeadsInput,
    paging: Paging,
) -> Result<Paged<Rendered<Lead>>, errors::ListLeadsError> {
    let (caller, op) = (&cx.caller, cx.op);
    // `scope`: the conditions on the columns `lead_counts` keeps (tenant, status, platform);
    // `filter`: all of them, on the leads.
    let mut scope = String::from("tenant_id = $1");
    let mut args = vec![Arg::Text(Some(caller.tenant.clone()))];
    let mut push = |arg: Arg| {
        args.push(arg);
        format!("${}", args.len())
    };
    let min = input.min_score.map(|min| push(Arg::Real(min)));
    match input.status {
        Some(s) => scope.push_str(&format!(" AND status = {}", push(Arg::Text(Some(s.as_str().into()))))),
        None => scope.push_str(" AND status <> 'archived'"),
    }
    if let Some(p) = &input.platform {
        scope.push_str(&format!(" AND platform = {}", push(Arg::Text(Some(p.trim().to_lowercase())))));
    }
    let mut filter = scope.clone();
    if let Some(min) = &min {
        filter.push_str(&format!(" AND score >= {min}"));
    }
    let tags = input.tag.iter().flatten().collect::<Vec<_>>();
    for tag in &tags {
        // Tags are stored as a compact JSON array of pattern-checked strings.
        let pattern = push(Arg::Text(Some(contains_pattern(&format!("\"{tag}\"")))));
        filter.push_str(&format!(" AND tags LIKE {pattern} ESCAPE '\\'"));
    }
    if let Some(q) = &input.q {
        let pattern = push(Arg::Text(Some(contains_pattern(&q.to_lowercase()))));
        filter.push_str(&format!(" AND search_text LIKE {pattern} ESCAPE '\\'"));
    }
    let sort = input.sort.as_deref().unwrap_or("-score");
    let (descending, key) = match sort.strip_prefix('-') {
        Some(k) => (true, k),
        None => (false, sort),
    };
    let column = match key {
        "created_at" => "created_at",
        "posted_at" => "posted_at",
        "budget" => "budget_value",
        _ => "score",
    };
    // Ties by id in the sort's direction, so an index on (column, id) serves the order as it is;
    // keys a lead may lack sort their missing values last in either direction.
    let dir = if descending { "DESC" } else { "ASC" };
    let order = match column {
        "score" | "created_at" => format!("{column} {dir}, id {dir}"),
        _ => format!("({column} IS NULL), {column} {dir}, id {dir}"),
    };
    let listed = if tags.is_empty() && input.q.is_none() {
        // The total is exact and costs a few rows: a sum over `lead_counts` (by whole score), plus,
        // for a fractional `min_score`, the leads between it and the next whole score (a range of
        // the score index within one whole score); read in the page's own statement.
        let total = match (&min, input.min_score) {
            (Some(min), Some(value)) if value.fract() == 0.0 => format!(
                "(SELECT CAST(COALESCE(SUM(n), 0) AS BIGINT) FROM lead_counts WHERE {scope} AND score_floor >= {min})"
            ),
            (Some(min), Some(value)) => {
                args.push(Arg::Real(value.ceil()));
                let next = format!("${}", args.len());
                format!(
                    "(SELECT CAST(COALESCE(SUM(n), 0) AS BIGINT) FROM lead_counts WHERE {scope} AND score_floor >= {next}) \
                     + (SELECT COUNT(*) FROM leads WHERE {scope} AND score >= {min} AND score < {next})"
                )
            }
            _ => format!("(SELECT CAST(COALESCE(SUM(n), 0) AS BIGINT) FROM lead_counts WHERE {scope})"),
        };
        let select = Select { columns: "id, revision", table: "leads", filter: &filter, order: &order, args: &args };
        store.page_totalled(select, paging, &total).await
    } else {
        // Tags and free text are not in `lead_counts`: the total is counted once per filter while
        // the tenant's leads are unchanged (a trigger changes `lead_versions` with every change
        // to them), one count of a filter at a time.
        let select = Select { columns: "id, revision", table: "leads", filter: &filter, order: &order, args: &args };
        store.page_versioned(select, paging, "SELECT version FROM lead_versions WHERE tenant_id = $1").await
    };
    let (total, heads) = listed.map_err(|e| op.fault("listing", e))?;
    let items = renderings.page(store, &caller.tenant, &heads).await.map_err(|e| op.fault("reading", e))?;
    Ok(Paged { items, total })
}
