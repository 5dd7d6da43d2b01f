//! The embedded authorization server's signing keys, kept in the data directory (created on
//! first run, mode 0600): an Ed25519 key that mints access tokens and verifies them, and an RSA
//! key that signs OpenID Connect ID tokens ([`crate::id_keys`]). Both rotate together; previous
//! keys stay published until retired.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ed25519_dalek::SigningKey;
use ed25519_dalek::pkcs8::{DecodePrivateKey, EncodePrivateKey, spki::der::pem::LineEnding};
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use zeroize::Zeroizing;

use crate::id_keys::IdKey;

/// The signature algorithms accepted from others' keys (an external issuer's tokens, clients'
/// assertions): asymmetric only, never `none` or HMAC (a shared secret this server would hold).
pub const ASYMMETRIC_ALGORITHMS: [Algorithm; 9] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

/// File name of the signing key inside the data directory.
pub const KEY_FILE: &str = "signing-key.pem";
/// File name of the ID token key inside the data directory.
pub const ID_KEY_FILE: &str = "id-token-key.pem";
/// Folder (inside the data directory) of previous ID token keys, still published.
pub const ID_PREVIOUS_DIR: &str = "id-token-keys";

/// Claims of an access token minted by the embedded authorization server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Claims {
    /// Issuer: the server's public URL.
    pub iss: String,
    /// The user.
    pub sub: String,
    /// Resources the token is for.
    pub aud: Vec<String>,
    /// Expiry, epoch seconds.
    pub exp: i64,
    /// Issued at, epoch seconds.
    pub iat: i64,
    /// Token id.
    pub jti: String,
    /// Space-separated scopes.
    pub scope: String,
    /// The user's tenant.
    pub tenant: String,
    /// Rate-limit plan, when set (services declaring plans read it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<String>,
    /// The OAuth client the token was issued to, when it came from the authorization endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
}

/// Folder (inside the data directory) of previous signing keys: still published in the JWKS and
/// accepted when verifying, so rotating the key does not invalidate tokens already issued.
pub const PREVIOUS_DIR: &str = "signing-keys";

/// How often a running server re-reads its key files (so a rotation by the CLI is picked up).
const RELOAD_EVERY: std::time::Duration = std::time::Duration::from_secs(5);

/// One Ed25519 key and what is derived from it.
struct Key {
    signing: SigningKey,
    encoding: EncodingKey,
    decoding: DecodingKey,
    kid: String,
}

impl Key {
    fn new(signing: SigningKey) -> Self {
        // The private key's encoding, wiped when dropped (jsonwebtoken keeps its own copy).
        let der = Zeroizing::new(signing.to_pkcs8_der().map(|d| d.as_bytes().to_vec()).unwrap_or_default());
        let public = signing.verifying_key().to_bytes();
        let kid = URL_SAFE_NO_PAD.encode(&Sha256::digest(public)[..12]);
        Key { encoding: EncodingKey::from_ed_der(&der), decoding: DecodingKey::from_ed_der(&public), kid, signing }
    }

    fn read(path: &Path) -> Result<Self> {
        let pem = Zeroizing::new(std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?);
        let signing = SigningKey::from_pkcs8_pem(&pem)
            .with_context(|| format!("{} is not an Ed25519 PKCS#8 key", path.display()))?;
        Ok(Key::new(signing))
    }

    fn jwk(&self) -> serde_json::Value {
        let x = URL_SAFE_NO_PAD.encode(self.signing.verifying_key().to_bytes());
        serde_json::json!({ "kty": "OKP", "crv": "Ed25519", "alg": "EdDSA", "use": "sig", "kid": self.kid, "x": x })
    }
}

/// The active key (signs new tokens) and the previous ones (still verify), and the same of ID
/// token keys (none in a data directory the server has not started on since they came).
struct KeySet {
    active: Key,
    previous: Vec<Key>,
    id_active: Option<IdKey>,
    id_previous: Vec<IdKey>,
}

/// The `.pem` files of `dir`, sorted (none when it does not exist).
fn pem_files(dir: &Path) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "pem"))
                .collect()
        })
        .unwrap_or_default();
    paths.sort();
    paths
}

impl KeySet {
    fn read(data_dir: &Path) -> Result<Self> {
        let active = Key::read(&data_dir.join(KEY_FILE))?;
        let previous = pem_files(&data_dir.join(PREVIOUS_DIR)).iter().map(|p| Key::read(p)).collect::<Result<_>>()?;
        let id_file = data_dir.join(ID_KEY_FILE);
        let id_active = if id_file.exists() { Some(IdKey::read(&id_file)?) } else { None };
        let id_previous =
            pem_files(&data_dir.join(ID_PREVIOUS_DIR)).iter().map(|p| IdKey::read(p)).collect::<Result<_>>()?;
        Ok(KeySet { active, previous, id_active, id_previous })
    }

    fn find(&self, kid: &str) -> Option<&Key> {
        std::iter::once(&self.active).chain(&self.previous).find(|k| k.kid == kid)
    }
}

/// The embedded authorization server's signing keys, re-read from the data directory every few
/// seconds so that `specwright keys rotate-signing` reaches running servers.
pub struct SigningKeys {
    dir: PathBuf,
    set: std::sync::RwLock<std::sync::Arc<KeySet>>,
    /// When the files were last read, epoch milliseconds (an atomic: every request reads it).
    checked: std::sync::atomic::AtomicI64,
    /// Access tokens already verified.
    verified: std::sync::Mutex<HashMap<String, Verified>>,
}

/// Clock skew allowed on an access token's expiry and not-before, both when it is verified and
/// when a kept one is accepted again.
const LEEWAY_SECONDS: i64 = 5;

/// Most verified tokens [`SigningKeys`] keeps before it starts again from none.
const VERIFIED_MAX: usize = 8192;

/// An access token whose signature, issuer and audiences were checked, kept so that a client
/// sending it again (as every client does until it expires) is not verified again: an Ed25519
/// verification is a quarter of the work of a small authenticated read. A token is found by its
/// whole text; it is accepted again only for the same issuer and audiences, only while the key
/// that verified it is still one the set verifies with (a retired key's tokens are refused on
/// their next use), and only until it expires.
struct Verified {
    issuer: String,
    audiences: Vec<String>,
    /// The key that verified it, and whether the token named it (`kid`) or was verified with the
    /// active key.
    kid: String,
    named: bool,
    claims: Claims,
}

impl std::fmt::Debug for SigningKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print key material.
        f.debug_struct("SigningKeys").field("kid", &self.kid()).finish_non_exhaustive()
    }
}

/// A new private key in PEM, wiped from memory when dropped (the signing key itself wipes itself
/// too: ed25519-dalek's `zeroize` feature).
fn new_key_pem() -> Result<Zeroizing<String>> {
    let key = SigningKey::generate(&mut rand::rngs::OsRng);
    key.to_pkcs8_pem(LineEnding::LF).context("encoding the signing key")
}

/// What a signing-key rotation did.
#[derive(Debug, Clone)]
pub struct Rotation {
    /// The key that signed until now (still verifies).
    pub previous: String,
    /// The key that signs from now on.
    pub active: String,
    /// The ID token key that signed until now (still published).
    pub id_previous: String,
    /// The ID token key that signs from now on.
    pub id_active: String,
}

impl SigningKeys {
    /// Loads the keys from `data_dir`, creating the directory and a first key on first run.
    pub fn load_or_create(data_dir: &Path) -> Result<Self> {
        std::fs::create_dir_all(data_dir).with_context(|| format!("creating data directory {}", data_dir.display()))?;
        let path: PathBuf = data_dir.join(KEY_FILE);
        if !path.exists() {
            // Processes starting together on a new directory keep one first key between them.
            crate::files::create_once(&path, new_key_pem()?.as_bytes())?;
        }
        let id_path = data_dir.join(ID_KEY_FILE);
        if !id_path.exists() {
            crate::files::create_once(&id_path, IdKey::new_pem()?.as_bytes())?;
        }
        Self::load(data_dir)
    }

    /// Loads the keys of a data directory that already has them (a tool minting tokens for a
    /// running server must not make a key of its own in the wrong directory).
    pub fn load(data_dir: &Path) -> Result<Self> {
        if !data_dir.join(KEY_FILE).exists() {
            anyhow::bail!("{} holds no signing key: name the data directory the server runs with", data_dir.display());
        }
        let set = KeySet::read(data_dir)?;
        Ok(SigningKeys {
            dir: data_dir.to_path_buf(),
            set: std::sync::RwLock::new(std::sync::Arc::new(set)),
            checked: std::sync::atomic::AtomicI64::new(crate::store::now_ms()),
            verified: std::sync::Mutex::default(),
        })
    }

    /// Makes a new active key; the old one moves to the previous keys, still published and
    /// still verifying, so tokens it signed stay valid until they expire.
    pub fn rotate(data_dir: &Path) -> Result<Rotation> {
        // On a data directory that has no key yet, there is a first one to rotate away from.
        Self::load_or_create(data_dir)?;
        let old = Key::read(&data_dir.join(KEY_FILE))?;
        let previous_dir = data_dir.join(PREVIOUS_DIR);
        std::fs::create_dir_all(&previous_dir)?;
        let old_pem = Zeroizing::new(std::fs::read(data_dir.join(KEY_FILE))?);
        let kept = previous_dir.join(format!("{}.pem", old.kid));
        if !kept.exists() {
            crate::files::create_private(&kept, &old_pem)?;
        }
        // Write the new key beside the active one, then rename over it: readers see either set.
        crate::files::replace_private(&data_dir.join(KEY_FILE), new_key_pem()?.as_bytes())?;
        let new = Key::read(&data_dir.join(KEY_FILE))?;
        // The ID token key the same way, in its own folder.
        let id_old = IdKey::read(&data_dir.join(ID_KEY_FILE))?;
        let id_previous_dir = data_dir.join(ID_PREVIOUS_DIR);
        std::fs::create_dir_all(&id_previous_dir)?;
        let kept = id_previous_dir.join(format!("{}.pem", id_old.kid));
        if !kept.exists() {
            crate::files::create_private(&kept, &Zeroizing::new(std::fs::read(data_dir.join(ID_KEY_FILE))?))?;
        }
        crate::files::replace_private(&data_dir.join(ID_KEY_FILE), IdKey::new_pem()?.as_bytes())?;
        let id_new = IdKey::read(&data_dir.join(ID_KEY_FILE))?;
        Ok(Rotation { previous: old.kid, active: new.kid, id_previous: id_old.kid, id_active: id_new.kid })
    }

    /// Stops publishing and accepting a previous key (tokens it signed stop verifying), an
    /// access-token or an ID token key.
    pub fn retire(data_dir: &Path, kid: &str) -> Result<()> {
        let path = data_dir.join(PREVIOUS_DIR).join(format!("{kid}.pem"));
        if Key::read(&path).is_ok_and(|k| k.kid == kid) {
            std::fs::remove_file(&path)?;
            return Ok(());
        }
        let path = data_dir.join(ID_PREVIOUS_DIR).join(format!("{kid}.pem"));
        if IdKey::read(&path).is_ok_and(|k| k.kid == kid) {
            std::fs::remove_file(&path)?;
            return Ok(());
        }
        anyhow::bail!("{kid} is not a previous signing key (the active key cannot be retired; rotate first)")
    }

    /// The key set, re-read first when the last read is older than `age`.
    fn read_if_older(&self, age: std::time::Duration) -> std::sync::Arc<KeySet> {
        use std::sync::atomic::Ordering::Relaxed;
        let now = crate::store::now_ms();
        if now - self.checked.load(Relaxed) >= age.as_millis() as i64 {
            self.checked.store(now, Relaxed);
            self.reload();
        }
        self.set.read().map(|s| s.clone()).unwrap_or_else(|e| e.into_inner().clone())
    }

    fn current(&self) -> std::sync::Arc<KeySet> {
        self.read_if_older(RELOAD_EVERY)
    }

    /// Re-reads the key files; on any error keeps the keys it has.
    fn reload(&self) {
        match KeySet::read(&self.dir) {
            Ok(set) => {
                if let Ok(mut s) = self.set.write() {
                    *s = std::sync::Arc::new(set);
                }
            }
            Err(e) => tracing::warn!(error = %e, "could not re-read the signing keys; keeping the loaded ones"),
        }
    }

    /// A 32-byte secret for `purpose` (a fixed label), derived from the active signing key: every
    /// replica sharing the data directory's keys derives the same one, and a rotation replaces it.
    pub fn derived_secret(&self, purpose: &str) -> Zeroizing<[u8; 32]> {
        let key = self.current();
        let mut hash = Sha256::new();
        hash.update(purpose.as_bytes());
        hash.update([0]);
        hash.update(key.active.signing.to_bytes());
        Zeroizing::new(hash.finalize().into())
    }

    /// Key id of the active key, published in token headers and in the JWKS.
    pub fn kid(&self) -> String {
        self.current().active.kid.clone()
    }

    /// The active public key as a JWK.
    pub fn public_jwk(&self) -> serde_json::Value {
        self.current().active.jwk()
    }

    /// The JWK Set: the active key, then the previous ones, then the ID token keys the same way.
    pub fn jwks(&self) -> serde_json::Value {
        let set = self.current();
        let mut keys: Vec<_> = std::iter::once(&set.active).chain(&set.previous).map(Key::jwk).collect();
        keys.extend(set.id_active.iter().chain(&set.id_previous).map(IdKey::jwk));
        serde_json::json!({ "keys": keys })
    }

    /// Signs `claims` as an OpenID Connect ID token (RS256) with the active ID token key.
    pub fn sign_id_token(&self, claims: &serde_json::Value) -> Result<String> {
        let set = self.current();
        let key = set.id_active.as_ref().context("this data directory has no ID token key yet; restart the server")?;
        key.sign(claims)
    }

    /// Signs `claims` as a compact JWT with the active key.
    pub fn mint(&self, claims: &Claims) -> Result<String> {
        self.sign_typed(claims, Some("at+jwt"))
    }

    /// Signs `claims` with the active key under the JWT type `typ`. Only `at+jwt` makes an access
    /// token ([`SigningKeys::mint`]); tests use other types to prove the gate refuses them.
    pub fn sign_typed(&self, claims: &Claims, typ: Option<&str>) -> Result<String> {
        let set = self.current();
        let mut header = Header::new(Algorithm::EdDSA);
        header.kid = Some(set.active.kid.clone());
        header.typ = typ.map(str::to_string);
        jsonwebtoken::encode(&header, claims, &set.active.encoding).context("signing the token")
    }

    /// Verifies a JWT access token naming one of `audiences`, issued by `issuer`, signed by a key
    /// of the set (the header's `kid` picks it). Only EdDSA is accepted (so never `none`). The
    /// error says why the token is refused, in words fit for a challenge (never the token).
    pub fn verify(&self, token: &str, issuer: &str, audiences: &[String]) -> Result<Claims, &'static str> {
        self.verify_at(token, issuer, audiences, chrono::Utc::now().timestamp())
    }

    /// [`SigningKeys::verify`] at `now` (epoch seconds): a token verified before is looked up
    /// ([`Verified`]), any other verified and kept.
    fn verify_at(&self, token: &str, issuer: &str, audiences: &[String], now: i64) -> Result<Claims, &'static str> {
        let set = self.current();
        let verified = self.verified.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(v) = verified.get(token)
            && v.issuer == issuer
            && v.audiences == audiences
            && if v.named { set.find(&v.kid).is_some() } else { set.active.kid == v.kid }
        {
            return if v.claims.exp < now - LEEWAY_SECONDS {
                Err("the token has expired")
            } else {
                Ok(v.claims.clone())
            };
        }
        drop(verified);
        let (claims, kid, named) = self.verify_signed(token, issuer, audiences, set)?;
        let mut verified = self.verified.lock().unwrap_or_else(|p| p.into_inner());
        if verified.len() >= VERIFIED_MAX {
            verified.clear();
        }
        let kept =
            Verified { issuer: issuer.to_string(), audiences: audiences.to_vec(), kid, named, claims: claims.clone() };
        verified.insert(token.to_string(), kept);
        Ok(claims)
    }

    /// Verifies `token`'s signature and claims with a key of `set` (re-read when the token names
    /// a key it lacks); its claims, the key's id and whether the token named it.
    fn verify_signed(
        &self,
        token: &str,
        issuer: &str,
        audiences: &[String],
        set: std::sync::Arc<KeySet>,
    ) -> Result<(Claims, String, bool), &'static str> {
        use jsonwebtoken::errors::ErrorKind;
        let header = jsonwebtoken::decode_header(token).map_err(|_| "the token is malformed")?;
        if header.alg != Algorithm::EdDSA {
            return Err("the token's algorithm is not accepted");
        }
        check_access_token_type(&header)?;
        let set = match header.kid.as_deref() {
            // Perhaps a key rotated in since the last read: look again (at most once a second, so
            // unknown kids cannot make every request read the disk).
            Some(kid) if set.find(kid).is_none() => self.read_if_older(std::time::Duration::from_secs(1)),
            _ => set,
        };
        let key = match header.kid.as_deref() {
            Some(kid) => set.find(kid).ok_or("the token's signature is not valid")?,
            None => &set.active,
        };
        let mut v = Validation::new(Algorithm::EdDSA);
        v.set_issuer(&[issuer]);
        v.set_audience(audiences);
        v.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        v.leeway = LEEWAY_SECONDS as u64;
        v.validate_nbf = true;
        let claims =
            jsonwebtoken::decode::<Claims>(token, &key.decoding, &v).map(|d| d.claims).map_err(|e| match e.kind() {
                ErrorKind::ExpiredSignature => "the token has expired",
                ErrorKind::ImmatureSignature => "the token is not valid yet",
                ErrorKind::InvalidAudience => "the token is not issued for this resource",
                ErrorKind::InvalidIssuer => "the token is not issued by this server's authorization server",
                ErrorKind::InvalidSignature => "the token's signature is not valid",
                ErrorKind::InvalidAlgorithm => "the token's algorithm is not accepted",
                _ => "the token is malformed",
            })?;
        Ok((claims, key.kid.clone(), header.kid.is_some()))
    }
}

/// RFC 9068 section 4: a resource server accepts only JWTs typed as access tokens (`at+jwt`, or
/// `application/at+jwt`), so an ID token or other JWT that happens to name our audience is refused.
pub fn check_access_token_type(header: &Header) -> Result<(), &'static str> {
    match header.typ.as_deref() {
        Some(t) if t.eq_ignore_ascii_case("at+jwt") || t.eq_ignore_ascii_case("application/at+jwt") => Ok(()),
        _ => Err("the token is not an access token (its typ header must be at+jwt)"),
    }
}

/// Builds the claims of a token minted by `specwright token`.
pub fn claims(
    issuer: &str,
    sub: &str,
    tenant: &str,
    scope: &str,
    audience: Vec<String>,
    ttl_seconds: i64,
    plan: Option<String>,
) -> Claims {
    let now = chrono::Utc::now().timestamp();
    Claims {
        iss: issuer.to_string(),
        sub: sub.to_string(),
        aud: audience,
        exp: now + ttl_seconds,
        iat: now,
        jti: uuid::Uuid::new_v4().to_string(),
        scope: scope.split_whitespace().collect::<Vec<_>>().join(" "),
        tenant: tenant.to_string(),
        plan,
        client_id: None,
    }
}

#[cfg(test)]
mod first_key {
    use super::*;

    // `specwright token` run in parallel on a new data directory (as a benchmark script did) once
    // read another process's half-written key; now every starter sees the same, whole key.
    #[test]
    fn starters_racing_on_a_new_directory_share_one_key() {
        for _ in 0..10 {
            let dir = tempfile::tempdir().unwrap();
            let kids: Vec<String> = std::thread::scope(|s| {
                let starters: Vec<_> =
                    (0..8).map(|_| s.spawn(|| SigningKeys::load_or_create(dir.path()).unwrap().kid())).collect();
                starters.into_iter().map(|t| t.join().unwrap()).collect()
            });
            assert!(kids.iter().all(|k| *k == kids[0]), "{kids:?}");
        }
    }
}

#[cfg(test)]
mod verified_tokens {
    use super::*;

    /// A token verified once is accepted again without a second verification, for the same issuer
    /// and audiences, until it expires, and no longer once the key that signed it is retired.
    #[test]
    fn a_verified_token_is_kept_until_it_expires_or_its_key_is_retired() {
        let dir = tempfile::tempdir().unwrap();
        let keys = SigningKeys::load_or_create(dir.path()).unwrap();
        let (issuer, aud) = ("https://as.example", vec!["https://as.example/api".to_string()]);
        let c = claims(issuer, "alice", "acme", "reports:read", aud.clone(), 60, None);
        let token = keys.mint(&c).unwrap();
        let now = chrono::Utc::now().timestamp();
        assert_eq!(keys.verify_at(&token, issuer, &aud, now).unwrap().jti, c.jti);
        assert_eq!(keys.verified.lock().unwrap().len(), 1, "kept");
        assert_eq!(keys.verify_at(&token, issuer, &aud, now).unwrap().jti, c.jti, "accepted again");
        // Another resource or issuer is not this token's: verified in full, and refused.
        let other = vec!["https://as.example/elsewhere".to_string()];
        assert_eq!(
            keys.verify_at(&token, issuer, &other, now).unwrap_err(),
            "the token is not issued for this resource"
        );
        assert!(keys.verify_at(&token, "https://evil.example", &aud, now).is_err());
        assert_eq!(keys.verify_at(&token, issuer, &aud, now + 66).unwrap_err(), "the token has expired");
        // A rotation keeps it (the previous key still verifies); retiring that key ends it.
        let rotation = SigningKeys::rotate(dir.path()).unwrap();
        keys.reload();
        assert!(keys.verify_at(&token, issuer, &aud, now).is_ok(), "still valid after a rotation");
        SigningKeys::retire(dir.path(), &rotation.previous).unwrap();
        keys.reload();
        assert_eq!(keys.verify_at(&token, issuer, &aud, now).unwrap_err(), "the token's signature is not valid");
    }
}
