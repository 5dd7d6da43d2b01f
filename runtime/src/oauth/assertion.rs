//! Client authentication with a signed assertion (`private_key_jwt`, RFC 7523 section 2.2 and
//! OpenID Connect Core section 9): a client whose metadata document says so proves itself at the
//! token endpoint with a JWT it signed with one of its published keys, naming itself (`iss`,
//! `sub`), this server (`aud`: the issuer or the token endpoint), a near expiry and a `jti` never
//! used before.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::Value;

use super::documents::KeySource;
use super::*;
use crate::store::now_ms;
use crate::tokens::hash;

/// `client_assertion_type` of a JWT assertion.
pub(super) const JWT_BEARER: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/// The signature algorithms an assertion may use (asymmetric only: the server holds no secret
/// of the client's).
pub(super) const ALGORITHMS: [Algorithm; 9] = crate::keys::ASYMMETRIC_ALGORITHMS;

/// The furthest in the future an assertion may expire: it is a one-request credential, and the
/// server keeps its `jti` until then.
const LONGEST_LIFETIME_SECONDS: i64 = 600;
/// Clock difference tolerated between the client and this server.
const LEEWAY_SECONDS: u64 = 30;

/// The `iss` an assertion claims, read before it is verified (to find the client when the
/// request names none; the signature is checked against that client's keys afterwards).
pub(super) fn claimed_issuer(assertion: &str) -> Option<String> {
    let payload = assertion.split('.').nth(1)?;
    let claims: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).ok()?).ok()?;
    claims.get("iss")?.as_str().map(str::to_string)
}

impl AuthServer {
    /// Verifies `assertion` for `client_id`, signed with a key from `keys`, and records its `jti`.
    pub(super) async fn verify_assertion(
        &self,
        client_id: &str,
        keys: &KeySource,
        assertion: &str,
    ) -> Result<(), AssertionError> {
        let refused = |why: String| Err(AssertionError::Refused(why));
        let Ok(header) = jsonwebtoken::decode_header(assertion) else {
            return refused("client_assertion is not a JWT".into());
        };
        if !ALGORITHMS.contains(&header.alg) {
            return refused(format!("client_assertion is signed with {:?}; use an asymmetric algorithm", header.alg));
        }
        let set = self.documents.keys(keys).await.map_err(AssertionError::Refused)?;
        let Ok(set) = serde_json::from_value::<JwkSet>((*set).clone()) else {
            return refused("the client's key set is not a JWK set".into());
        };
        let alg_name = serde_json::to_value(header.alg).ok();
        let candidates = set.keys.iter().filter(|k| {
            header.kid.as_ref().is_none_or(|kid| k.common.key_id.as_ref() == Some(kid))
                && k.common.key_algorithm.is_none_or(|ka| serde_json::to_value(ka).ok() == alg_name)
        });
        let mut validation = Validation::new(header.alg);
        validation.set_issuer(&[client_id]);
        validation.sub = Some(client_id.to_string());
        validation.set_audience(&[self.config.issuer(), self.config.url(TOKEN_PATH)]);
        validation.set_required_spec_claims(&["exp", "iss", "sub", "aud"]);
        validation.leeway = LEEWAY_SECONDS;
        let claims = candidates
            .filter_map(|jwk| DecodingKey::from_jwk(jwk).ok())
            .find_map(|key| jsonwebtoken::decode::<Value>(assertion, &key, &validation).ok())
            .map(|data| data.claims);
        let Some(claims) = claims else {
            return refused(
                "client_assertion is not signed by a key of the client's, or names another client, audience or an expired time"
                    .into(),
            );
        };
        let exp = claims.get("exp").and_then(Value::as_i64).unwrap_or_default();
        if exp > now_ms() / 1000 + LONGEST_LIFETIME_SECONDS + LEEWAY_SECONDS as i64 {
            return refused(format!("client_assertion expires more than {LONGEST_LIFETIME_SECONDS} s from now"));
        }
        let Some(jti) = claims.get("jti").and_then(Value::as_str).filter(|j| !j.is_empty() && j.len() <= 256) else {
            return refused("client_assertion needs a jti (at most 256 characters)".into());
        };
        let now = now_ms();
        let record = async {
            let mut tx = self.store.begin().await?;
            sqlx::query("DELETE FROM oauth_client_assertions WHERE expires_at < $1")
                .bind(now)
                .execute(&mut *tx)
                .await?;
            let inserted = sqlx::query(
                "INSERT INTO oauth_client_assertions (id, expires_at) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING",
            )
            .bind(hash(&format!("{client_id}\n{jti}")))
            .bind((exp + LEEWAY_SECONDS as i64) * 1000)
            .execute(&mut *tx)
            .await?
            .rows_affected();
            tx.commit().await?;
            Ok::<_, sqlx::Error>(inserted)
        };
        match record.await {
            Ok(0) => refused("this client_assertion was used before (its jti is spent)".into()),
            Ok(_) => Ok(()),
            Err(e) => Err(AssertionError::Storage(e)),
        }
    }
}

/// Why an assertion was not accepted.
pub(super) enum AssertionError {
    /// The assertion does not prove the client (answered `invalid_client`).
    Refused(String),
    /// The database failed.
    Storage(sqlx::Error),
}
