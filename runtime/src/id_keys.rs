//! The key that signs OpenID Connect ID tokens: RSA (RS256), which OpenID Connect Discovery
//! requires every provider to offer, kept beside the Ed25519 access-token key and rotated with it.
//!
//! The key is made once by the `rsa` crate (a local, one-time computation) and used through
//! `ring`, whose RSA signing runs in constant time: the `rsa` crate's private-key operations are
//! not (RUSTSEC-2023-0071), and an ID token is signed on request.

use std::path::Path;

use anyhow::{Context, Result};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rsa::pkcs8::{DecodePrivateKey, EncodePrivateKey, LineEnding};
use rsa::traits::PublicKeyParts;
use sha2::{Digest, Sha256};
use zeroize::Zeroizing;

/// Modulus size of a new key, in bits.
const BITS: usize = 2048;

/// One RSA key: its `ring` signer, id and public JWK.
pub(crate) struct IdKey {
    signer: ring::signature::RsaKeyPair,
    pub(crate) kid: String,
    jwk: serde_json::Value,
}

impl IdKey {
    /// A new private key in PKCS#8 PEM, wiped from memory when dropped.
    pub(crate) fn new_pem() -> Result<Zeroizing<String>> {
        let key = rsa::RsaPrivateKey::new(&mut rand::rngs::OsRng, BITS).context("making the ID token key")?;
        key.to_pkcs8_pem(LineEnding::LF).context("encoding the ID token key")
    }

    /// The key in the PEM file at `path`.
    pub(crate) fn read(path: &Path) -> Result<Self> {
        let pem = Zeroizing::new(std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?);
        let key = rsa::RsaPrivateKey::from_pkcs8_pem(&pem)
            .with_context(|| format!("{} is not an RSA PKCS#8 key", path.display()))?;
        let der = key.to_pkcs8_der().context("encoding the ID token key")?;
        let signer = ring::signature::RsaKeyPair::from_pkcs8(der.as_bytes())
            .map_err(|e| anyhow::anyhow!("{} cannot sign: {e}", path.display()))?;
        let n = key.n().to_bytes_be();
        let e = key.e().to_bytes_be();
        let kid = URL_SAFE_NO_PAD.encode(&Sha256::digest(&n)[..12]);
        let jwk = serde_json::json!({
            "kty": "RSA", "alg": "RS256", "use": "sig", "kid": kid,
            "n": URL_SAFE_NO_PAD.encode(&n), "e": URL_SAFE_NO_PAD.encode(&e),
        });
        Ok(IdKey { signer, kid, jwk })
    }

    /// The public key as a JWK.
    pub(crate) fn jwk(&self) -> serde_json::Value {
        self.jwk.clone()
    }

    /// `claims` as a compact JWT signed RS256 (`typ: JWT`, this key's `kid`).
    pub(crate) fn sign(&self, claims: &serde_json::Value) -> Result<String> {
        let header = serde_json::json!({ "alg": "RS256", "typ": "JWT", "kid": self.kid });
        let input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(serde_json::to_vec(&header)?),
            URL_SAFE_NO_PAD.encode(serde_json::to_vec(claims)?)
        );
        let mut signature = vec![0; self.signer.public().modulus_len()];
        self.signer
            .sign(
                &ring::signature::RSA_PKCS1_SHA256,
                &ring::rand::SystemRandom::new(),
                input.as_bytes(),
                &mut signature,
            )
            .map_err(|_| anyhow::anyhow!("signing the ID token failed"))?;
        Ok(format!("{input}.{}", URL_SAFE_NO_PAD.encode(signature)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_token_verifies_with_the_published_key() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("id.pem");
        std::fs::write(&path, IdKey::new_pem().unwrap().as_bytes()).unwrap();
        let key = IdKey::read(&path).unwrap();
        let token = key.sign(&serde_json::json!({ "sub": "alice", "aud": "c", "exp": 4_000_000_000u64 })).unwrap();
        let jwk: jsonwebtoken::jwk::Jwk = serde_json::from_value(key.jwk()).unwrap();
        let mut v = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::RS256);
        v.set_audience(&["c"]);
        let data =
            jsonwebtoken::decode::<serde_json::Value>(&token, &jsonwebtoken::DecodingKey::from_jwk(&jwk).unwrap(), &v)
                .unwrap();
        assert_eq!(data.claims["sub"], "alice");
        assert_eq!(data.header.kid.as_deref(), Some(key.kid.as_str()));
        let other = key.sign(&serde_json::json!({ "sub": "mallory", "aud": "c", "exp": 4_000_000_000u64 })).unwrap();
        let [header, _, signature]: [&str; 3] = token.split('.').collect::<Vec<_>>().try_into().unwrap();
        let tampered = format!("{header}.{}.{signature}", other.split('.').nth(1).unwrap());
        assert!(
            jsonwebtoken::decode::<serde_json::Value>(
                &tampered,
                &jsonwebtoken::DecodingKey::from_jwk(&jwk).unwrap(),
                &v
            )
            .is_err()
        );
    }
}
