//! The prospector's state, which every operation shares: the store, the lead sources, the
//! platform connector, and the renderings and replay records it keeps.

use std::sync::Arc;

use runtime::store::Store;

use crate::connector::HttpConnector;
use crate::proposals::Connector;
use crate::sources::{self, Source};
use crate::{lead_list, scoring};

/// The lead-prospecting API.
#[derive(Debug, Clone)]
pub struct Prospector {
    pub(crate) store: Store,
    pub(crate) sources: Arc<Vec<Source>>,
    pub(crate) http: reqwest::Client,
    pub(crate) connector: Arc<Connector>,
    pub(crate) renderings: Arc<lead_list::Renderings>,
    pub(crate) replays: Arc<scoring::Replays>,
}

impl Prospector {
    /// The prospector over `store`, scanning `sources` (`NAME=LOCATION` each; the embedded sample
    /// feed when empty) and submitting through the HTTP platform connector at `connector_url`
    /// (the recording outbox when `None`).
    pub fn new(store: Store, sources: &[String], connector_url: Option<&str>) -> anyhow::Result<Self> {
        let mut parsed: Vec<Source> = Vec::new();
        for spec in sources {
            let source = Source::parse(spec).map_err(|e| anyhow::anyhow!("lead source {spec:?}: {e}"))?;
            if parsed.iter().any(|s| s.name == source.name) {
                anyhow::bail!("lead source {:?} is configured twice", source.name);
            }
            parsed.push(source);
        }
        if parsed.is_empty() {
            parsed.push(Source::sample());
        }
        let connector = match connector_url {
            Some(url) => {
                Connector::Http(HttpConnector::new(url).map_err(|e| anyhow::anyhow!("platform connector: {e}"))?)
            }
            None => Connector::Outbox,
        };
        Ok(Prospector {
            store,
            sources: Arc::new(parsed),
            http: sources::http_client(),
            connector: Arc::new(connector),
            renderings: Arc::default(),
            replays: Arc::default(),
        })
    }
}
