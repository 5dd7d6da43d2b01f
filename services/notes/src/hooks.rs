//! Webhook subscriptions: a tenant registers URLs that receive its note events
//! (`note.changed`), which `changes::record` queues in the transaction of each change. The
//! platform's outbox (`runtime::webhooks`) signs, delivers and retries them.

use notes_api::notes::{errors, models, webhooks};
use runtime::Context;
use runtime::OperationFault;
use runtime::store::to_time;
use runtime::webhooks::{SubscribeError, Webhooks};
use support::Problem;

use crate::state::Notes;

/// The service's name in the platform's subscription tables.
const SERVICE: &str = "notes";

impl Notes {
    pub(crate) async fn subscribe_url(
        &self,
        cx: &mut Context,
        input: models::SubscribeInput,
    ) -> Result<models::NewSubscription, errors::SubscribeError> {
        let op = cx.op;
        let (tx, caller, targets) = cx.parts::<errors::SubscribeError>().await?;
        let events = input.events.unwrap_or_default();
        let made = self
            .webhooks
            .subscribe(&mut *tx, &caller.tenant, SERVICE, webhooks::EVENT_TYPES, &input.url, &events)
            .await;
        let result = match made {
            Ok((sub, secret)) => Ok(models::NewSubscription {
                id: sub.id,
                url: sub.url,
                events: sub.events,
                created_at: to_time(sub.created_at),
                secret,
            }),
            Err(SubscribeError::Url(why)) => {
                Err(errors::SubscribeError::Validation(Problem::new(why).with("field", "url").with("value", input.url)))
            }
            Err(SubscribeError::UnknownEvent(event)) => Err(errors::SubscribeError::Validation(
                Problem::new(format!("events: this service sends no event `{event}`"))
                    .with("field", "events")
                    .with("value", event)
                    .with("allowed", webhooks::EVENT_TYPES.to_vec()),
            )),
            Err(SubscribeError::Storage(e)) => Err(op.fault("storing the subscription", e)),
        };
        targets.extend(result.iter().map(|s| s.id.clone()));
        result
    }

    pub(crate) async fn subscriptions(
        &self,
        cx: &mut Context,
    ) -> Result<Vec<models::Subscription>, errors::ListSubscriptionsError> {
        let op = cx.op;
        let (tx, caller, _) = cx.parts::<errors::ListSubscriptionsError>().await?;

        Webhooks::subscriptions(&mut *tx, &caller.tenant, SERVICE)
            .await
            .map(|subs| {
                subs.into_iter()
                    .map(|s| models::Subscription {
                        id: s.id,
                        url: s.url,
                        events: s.events,
                        created_at: to_time(s.created_at),
                    })
                    .collect()
            })
            .map_err(|e| op.fault("listing subscriptions", e))
    }

    pub(crate) async fn unsubscribe_url(
        &self,
        cx: &mut Context,
        input: models::SubscriptionRef,
    ) -> Result<(), errors::UnsubscribeError> {
        let op = cx.op;
        let (tx, caller, _) = cx.parts::<errors::UnsubscribeError>().await?;

        match Webhooks::unsubscribe(&mut *tx, &caller.tenant, SERVICE, &input.id).await {
            Ok(true) => Ok(()),
            Ok(false) => Err(errors::UnsubscribeError::NotFound(
                Problem::new(format!("there is no subscription {}", input.id)).with("id", input.id.as_str()),
            )),
            Err(e) => Err(op.fault("deleting the subscription", e)),
        }
    }
}

/// Queues `change` for the tenant's subscribers, in the transaction that makes it.
pub(crate) async fn announce(
    tx: &mut runtime::store::Tx,
    tenant: &str,
    change: &models::NoteChange,
) -> Result<(), sqlx::Error> {
    Webhooks::send(tx, tenant, SERVICE, &webhooks::note_changed(change)).await.map(|_| ())
}
