//! JSON read strictly, as request bodies and parameters of JSON text are: a key named twice is
//! refused, and whole floats are integers.

use serde_json::{Map, Value};

/// A JSON value parsed strictly: an object that names a key twice is refused (RFC 8259 leaves
/// the meaning open, and parsers disagree on which one wins), instead of silently keeping one.
pub(crate) struct StrictJson(pub(crate) Value);

impl<'de> serde::Deserialize<'de> for StrictJson {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = StrictJson;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_bool<E>(self, v: bool) -> Result<StrictJson, E> {
                Ok(StrictJson(Value::Bool(v)))
            }
            fn visit_i64<E>(self, v: i64) -> Result<StrictJson, E> {
                Ok(StrictJson(Value::from(v)))
            }
            fn visit_u64<E>(self, v: u64) -> Result<StrictJson, E> {
                Ok(StrictJson(Value::from(v)))
            }
            fn visit_f64<E>(self, v: f64) -> Result<StrictJson, E> {
                Ok(StrictJson(number(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<StrictJson, E> {
                Ok(StrictJson(Value::String(v.to_string())))
            }
            fn visit_string<E>(self, v: String) -> Result<StrictJson, E> {
                Ok(StrictJson(Value::String(v)))
            }
            fn visit_unit<E>(self) -> Result<StrictJson, E> {
                Ok(StrictJson(Value::Null))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<StrictJson, A::Error> {
                let mut items = Vec::new();
                while let Some(StrictJson(v)) = seq.next_element()? {
                    items.push(v);
                }
                Ok(StrictJson(Value::Array(items)))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<StrictJson, A::Error> {
                let mut out = Map::new();
                while let Some(key) = map.next_key::<String>()? {
                    let StrictJson(v) = map.next_value()?;
                    if out.insert(key.clone(), v).is_some() {
                        return Err(serde::de::Error::custom(format!("duplicate key {key:?}")));
                    }
                }
                Ok(StrictJson(Value::Object(out)))
            }
        }
        d.deserialize_any(V)
    }
}

/// Parses `bytes` as JSON, refusing an object that names a member twice (the error says which).
/// Whole floats come back as integers, as request bodies are read.
pub fn parse_json_strict(bytes: &[u8]) -> Result<Value, serde_json::Error> {
    serde_json::from_slice::<StrictJson>(bytes).map(|v| v.0)
}

/// A JSON number: a whole one (`1.0`) as an integer, since JSON Schema counts it as one and
/// integer fields must accept it; others as floats.
pub(crate) fn number(v: f64) -> Value {
    if v.fract() == 0.0 && v.abs() <= 9_007_199_254_740_992.0 {
        Value::from(v as i64)
    } else {
        serde_json::Number::from_f64(v).map(Value::Number).unwrap_or(Value::Null)
    }
}
