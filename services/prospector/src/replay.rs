//! The replay record: what a backtest reads of a historical lead, as one binary value per lead
//! (`leads.replay`), written with the posting by every write of it (`leads::PostingColumns`).
//!
//! A backtest reads a tenant's history in chunks, each the concatenation of its leads' records
//! (one aggregate per chunk, so one round trip per chunk, not per lead). A record states its own
//! length, so any bytes (a skill with control characters included) pass through unescaped, and
//! decoding it is a walk over fixed-width numbers and length-prefixed text: no JSON to parse, no
//! timestamps to read, a fraction of the bytes of the posting's JSON for the database to read.
//!
//! Layout (integers little-endian; `len` an unsigned LEB128 varint; `opt` a byte, 0 or 1, then
//! the value when 1):
//!
//! ```text
//! record   = u32 length of what follows, u8 format (1), text id, i64 fetched_at, i64 created_at, input
//! input    = len skill count, text skill…, budget, client, opt i64 proposals_count,
//!            opt (i64 seconds, u32 nanoseconds) posted_at
//! budget   = u8 0 (none) | 1 (fixed) | 2 (hourly), then opt f64 min, opt f64 max, text currency
//! client   = u8 0 (none) | 1, then u8 payment_verified, i64 jobs_posted, i64 hires,
//!            opt f64 total_spent, opt f64 rating
//! text     = len byte count, UTF-8 bytes
//! ```
//!
//! The client's name and country are not kept: the scoring engine does not read them. Numbers
//! are kept as the posting holds them (the bits of each `f64`, the posting date to the
//! nanosecond), so a replayed lead scores exactly as its posting does.

use std::sync::Arc;

use chrono::DateTime;
use prospector_api::prospector::models::{Budget, BudgetKind, LeadClient};

use crate::posting::ScoringInput;

/// The layout version a record starts with (after its length).
const FORMAT: u8 = 1;

/// A historical lead as a backtest replays it.
#[derive(Debug, Clone, PartialEq)]
pub struct Replay {
    pub id: Arc<str>,
    pub input: ScoringInput,
    /// When the posting was fetched (ms since the epoch): the moment it is scored as of.
    pub fetched_at: i64,
    /// When the lead was found (ms since the epoch).
    pub created_at: i64,
}

/// The record of a lead.
pub fn encode(id: &str, fetched_at: i64, created_at: i64, input: &ScoringInput) -> Vec<u8> {
    let mut out = Vec::with_capacity(96 + input.skills.iter().map(|s| s.len() + 1).sum::<usize>());
    out.extend_from_slice(&[0; 4]);
    out.push(FORMAT);
    text(&mut out, id);
    out.extend_from_slice(&fetched_at.to_le_bytes());
    out.extend_from_slice(&created_at.to_le_bytes());
    len(&mut out, input.skills.len());
    input.skills.iter().for_each(|s| text(&mut out, s));
    match &input.budget {
        None => out.push(0),
        Some(b) => {
            out.push(match b.kind {
                BudgetKind::Fixed => 1,
                BudgetKind::Hourly => 2,
            });
            optional(&mut out, b.min.map(f64::to_le_bytes));
            optional(&mut out, b.max.map(f64::to_le_bytes));
            text(&mut out, &b.currency);
        }
    }
    match &input.client {
        None => out.push(0),
        Some(c) => {
            out.push(1);
            out.push(u8::from(c.payment_verified));
            out.extend_from_slice(&c.jobs_posted.to_le_bytes());
            out.extend_from_slice(&c.hires.to_le_bytes());
            optional(&mut out, c.total_spent.map(f64::to_le_bytes));
            optional(&mut out, c.rating.map(f64::to_le_bytes));
        }
    }
    optional(&mut out, input.proposals_count.map(i64::to_le_bytes));
    let posted = input.posted_at.map(|t| {
        let mut at = [0; 12];
        at[..8].copy_from_slice(&t.timestamp().to_le_bytes());
        at[8..].copy_from_slice(&t.timestamp_subsec_nanos().to_le_bytes());
        at
    });
    optional(&mut out, posted);
    let length = u32::try_from(out.len() - 4).unwrap_or(u32::MAX);
    out[..4].copy_from_slice(&length.to_le_bytes());
    out
}

fn len(out: &mut Vec<u8>, mut n: usize) {
    loop {
        let low = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(low);
            return;
        }
        out.push(low | 0x80);
    }
}

fn text(out: &mut Vec<u8>, s: &str) {
    len(out, s.len());
    out.extend_from_slice(s.as_bytes());
}

fn optional<const N: usize>(out: &mut Vec<u8>, value: Option<[u8; N]>) {
    match value {
        None => out.push(0),
        Some(bytes) => {
            out.push(1);
            out.extend_from_slice(&bytes);
        }
    }
}

/// The records of a chunk, in order; an error names what is wrong (and the lead, once its id is
/// read).
pub fn records(chunk: &[u8]) -> impl Iterator<Item = Result<Replay, String>> + '_ {
    framed(chunk).map(|record| record.and_then(decode))
}

/// The greatest key (created_at, id) of the records of a chunk (none when it holds none), read
/// from their heads alone.
pub fn last_key(chunk: &[u8]) -> Result<Option<(i64, &str)>, String> {
    let mut last: Option<(i64, &str)> = None;
    for record in framed(chunk) {
        let (id, _fetched_at, created_at) = head(&mut Reader(record?))?;
        if last.is_none_or(|key| (created_at, id) > key) {
            last = Some((created_at, id));
        }
    }
    Ok(last)
}

/// The records of a chunk, each after its length; a framing error ends the iteration.
fn framed(chunk: &[u8]) -> impl Iterator<Item = Result<&[u8], String>> + '_ {
    let mut rest = chunk;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let mut r = Reader(rest);
        let record = r.take::<4>().map_err(|_| "a replay record without its length".to_string()).and_then(|length| {
            let (record, after) =
                r.0.split_at_checked(u32::from_le_bytes(length) as usize)
                    .ok_or("a replay record longer than its chunk")?;
            rest = after;
            Ok(record)
        });
        if record.is_err() {
            rest = &[];
        }
        Some(record)
    })
}

/// The head of a record: its format checked, its id, fetched_at and created_at (errors after the
/// id name the lead); `r` is left at its scoring input.
fn head<'a>(r: &mut Reader<'a>) -> Result<(&'a str, i64, i64), String> {
    match r.byte()? {
        FORMAT => {}
        other => return Err(format!("a replay record of format {other}, not {FORMAT}")),
    }
    let id = r.text()?;
    let fetched_at = r.i64().map_err(|e| named(id, e))?;
    let created_at = r.i64().map_err(|e| named(id, e))?;
    Ok((id, fetched_at, created_at))
}

/// An error of the record of lead `id`.
fn named(id: &str, e: String) -> String {
    format!("the replay record of lead {id}: {e}")
}

/// One record, after its length.
fn decode(record: &[u8]) -> Result<Replay, String> {
    let mut r = Reader(record);
    let (id, fetched_at, created_at) = head(&mut r)?;
    let mut input = || -> Result<ScoringInput, String> {
        let count = r.len()?;
        // Each skill takes at least a byte: a count beyond the record's length is damage.
        let mut skills = Vec::with_capacity(count.min(r.0.len()));
        for _ in 0..count {
            skills.push(r.text()?.to_string());
        }
        let budget = match r.byte()? {
            0 => None,
            kind @ (1 | 2) => Some(Budget {
                kind: if kind == 1 { BudgetKind::Fixed } else { BudgetKind::Hourly },
                min: r.optional(Reader::f64)?,
                max: r.optional(Reader::f64)?,
                currency: r.text()?.to_string(),
            }),
            other => return Err(format!("budget kind {other}")),
        };
        let client = match r.byte()? {
            0 => None,
            1 => Some(LeadClient {
                name: None,
                country: None,
                payment_verified: r.byte()? != 0,
                jobs_posted: r.i64()?,
                hires: r.i64()?,
                total_spent: r.optional(Reader::f64)?,
                rating: r.optional(Reader::f64)?,
            }),
            other => return Err(format!("client marker {other}")),
        };
        let proposals_count = r.optional(Reader::i64)?;
        let posted_at = r.optional(|r| {
            let (seconds, nanos) = (r.i64()?, u32::from_le_bytes(r.take()?));
            DateTime::from_timestamp(seconds, nanos).ok_or_else(|| format!("posting date {seconds}.{nanos:09}"))
        })?;
        Ok(ScoringInput { skills, budget, client, proposals_count, posted_at })
    };
    let input = input().map_err(|e| named(id, e))?;
    if !r.0.is_empty() {
        return Err(named(id, format!("{} bytes after its end", r.0.len())));
    }
    Ok(Replay { id: id.into(), input, fetched_at, created_at })
}

/// What is left of a record to decode.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take<const N: usize>(&mut self) -> Result<[u8; N], String> {
        let (head, rest) = self.0.split_first_chunk::<N>().ok_or("it ends early")?;
        self.0 = rest;
        Ok(*head)
    }

    fn byte(&mut self) -> Result<u8, String> {
        self.take::<1>().map(|[b]| b)
    }

    fn i64(&mut self) -> Result<i64, String> {
        self.take().map(i64::from_le_bytes)
    }

    fn f64(&mut self) -> Result<f64, String> {
        self.take().map(f64::from_le_bytes)
    }

    fn len(&mut self) -> Result<usize, String> {
        let mut n = 0usize;
        for shift in (0..usize::BITS).step_by(7) {
            let b = self.byte()?;
            n |= usize::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(n);
            }
        }
        Err("a length too large".into())
    }

    fn text(&mut self) -> Result<&'a str, String> {
        let n = self.len()?;
        let (bytes, rest) = self.0.split_at_checked(n).ok_or("a text longer than the record")?;
        self.0 = rest;
        std::str::from_utf8(bytes).map_err(|e| format!("text that is not UTF-8 ({e})"))
    }

    fn optional<T>(&mut self, value: impl FnOnce(&mut Self) -> Result<T, String>) -> Result<Option<T>, String> {
        match self.byte()? {
            0 => Ok(None),
            1 => value(self).map(Some),
            other => Err(format!("an optional value marked {other}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input() -> ScoringInput {
        ScoringInput {
            skills: vec!["rust".into(), "é\u{1e}\u{0}".into(), "x".repeat(200)],
            budget: Some(Budget { kind: BudgetKind::Hourly, min: Some(0.1 + 0.2), max: None, currency: "EUR".into() }),
            client: Some(LeadClient {
                name: None,
                country: None,
                payment_verified: true,
                jobs_posted: i64::MAX,
                hires: 3,
                total_spent: None,
                rating: Some(4.75),
            }),
            proposals_count: Some(0),
            posted_at: DateTime::from_timestamp(1_700_000_000, 123_456_789),
        }
    }

    /// Records of full and empty inputs, concatenated as a chunk, decode to the same leads
    /// (every bit of every number, text with control characters and a length over 127).
    #[test]
    fn a_chunk_of_records_decodes_to_the_leads_encoded() {
        let empty = ScoringInput { skills: vec![], budget: None, client: None, proposals_count: None, posted_at: None };
        let fixed = ScoringInput {
            budget: Some(Budget { kind: BudgetKind::Fixed, min: None, max: Some(-0.0), currency: "USD".into() }),
            client: Some(LeadClient { payment_verified: false, total_spent: Some(1e300), ..input().client.unwrap() }),
            ..input()
        };
        let leads = [("lead_a", 1, -2, input()), ("lead_b", i64::MIN, i64::MAX, empty), ("lead_c", 0, 0, fixed)];
        let chunk: Vec<u8> = leads.iter().flat_map(|(id, f, c, i)| encode(id, *f, *c, i)).collect();
        let decoded: Vec<Replay> = records(&chunk).collect::<Result<_, _>>().unwrap();
        let expected: Vec<Replay> = leads
            .into_iter()
            .map(|(id, fetched_at, created_at, input)| Replay { id: id.into(), input, fetched_at, created_at })
            .collect();
        assert_eq!(decoded, expected);
        let max = decoded[2].input.budget.as_ref().unwrap().max.unwrap();
        assert!(max == 0.0 && max.is_sign_negative(), "the sign of -0.0 kept");
    }

    /// The last key of a chunk is its greatest (created_at, id), in whatever order its records
    /// come; ties on the time go to the greater id.
    #[test]
    fn the_last_key_of_a_chunk_is_its_greatest() {
        let chunk: Vec<u8> = [("lead_b", 5), ("lead_c", 7), ("lead_a", 7), ("lead_z", 6)]
            .iter()
            .flat_map(|(id, created_at)| encode(id, 0, *created_at, &input()))
            .collect();
        assert_eq!(last_key(&chunk), Ok(Some((7, "lead_c"))));
        assert_eq!(last_key(&[]), Ok(None));
        assert!(last_key(&chunk[..chunk.len() - 1]).is_err());
    }

    /// A cut, padded or foreign record is an error naming the lead once its id is read, never a
    /// panic or a wrong lead.
    #[test]
    fn damaged_records_are_errors() {
        let record = encode("lead_a", 1, 2, &input());
        for cut in 1..record.len() {
            let mut damaged = record[..cut].to_vec();
            if cut >= 4 {
                let length = (cut - 4) as u32;
                damaged[..4].copy_from_slice(&length.to_le_bytes());
            }
            let results: Vec<_> = records(&damaged).collect();
            assert_eq!(results.len(), 1, "cut at {cut}");
            assert!(results[0].is_err(), "cut at {cut}: {:?}", results[0]);
        }
        let mut padded = record.clone();
        padded.push(0);
        let length = (padded.len() - 4) as u32;
        padded[..4].copy_from_slice(&length.to_le_bytes());
        let error = records(&padded).next().unwrap().unwrap_err();
        assert!(error.contains("lead_a") && error.contains("after its end"), "{error}");
        let mut foreign = record.clone();
        foreign[4] = 9;
        assert!(records(&foreign).next().unwrap().unwrap_err().contains("format 9"));
        let mut longer = record;
        longer[..4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(records(&longer).next().unwrap().is_err());
    }
}
