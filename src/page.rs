//! Pages of a paged call, one rule for all of them (Analyze, ListExploreRows, ListOperations;
//! AIP-158):
//! - **Size.** 0 asks for the call's default, and more than its maximum gets the maximum
//!   ([`page_size`]).
//! - **Tokens** are opaque and authenticated. A token is the hex of a version byte, where the next
//!   page starts, and an HMAC-SHA-256 tag of both and of the query it continues, under this
//!   process's key: the fleet's secret where one is set (so that any replica continues a listing
//!   another began), else a random key drawn at start (a token then lasts as long as the process,
//!   as AIP-158 allows). A token used with another query (a different position, operation or
//!   filter), edited, or written by anyone but this server (or its fleet) is INVALID_ARGUMENT.

use crate::invalid_argument::InvalidArgument;
use crate::quote::quoted;

use std::sync::OnceLock;

use ring::hmac;

/// The version byte every token starts with.
const VERSION: u8 = 2;

/// The bytes of a token's tag.
const TAG_BYTES: usize = 32;

/// The key of the tokens' tags, set once ([`use_key`]) or drawn at random on first use.
static KEY: OnceLock<hmac::Key> = OnceLock::new();

/// Makes `key` the key of this process's page tokens (the fleet's: derived from its secret, so that
/// every replica accepts every replica's tokens). Only before the first token: later calls, and
/// calls after one, change nothing (tokens given stay valid).
pub fn use_key(key: &[u8]) {
    let _ = KEY.set(hmac::Key::new(hmac::HMAC_SHA256, key));
}

/// The key of this process's tokens.
fn key() -> &'static hmac::Key {
    KEY.get_or_init(|| {
        let random = ring::rand::SystemRandom::new();
        hmac::Key::generate(hmac::HMAC_SHA256, &random).expect("the system's random generator works")
    })
}

/// What a token's tag authenticates: the version, the query's length and bytes, where it starts.
fn signed(query: &[u8], start: &[u8]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(9 + query.len() + start.len());
    bytes.push(VERSION);
    bytes.extend((query.len() as u64).to_be_bytes());
    bytes.extend(query);
    bytes.extend(start);
    bytes
}

/// The size of a page: `requested`, or `default` when 0, and at most `max`.
pub fn page_size(requested: usize, default: usize, max: usize) -> usize {
    if requested == 0 {
        default
    } else {
        requested.min(max)
    }
}

/// The token of the page of `query` that starts at `start` (the call's own encoding of a
/// position: a row, an offset, a name).
pub fn token(query: &[u8], start: &[u8]) -> String {
    let tag = hmac::sign(key(), &signed(query, start));
    let mut bytes = Vec::with_capacity(1 + start.len() + TAG_BYTES);
    bytes.push(VERSION);
    bytes.extend(start);
    bytes.extend(tag.as_ref());
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// Where the page of `query` that `token` asks for starts (`None` for the empty token: the first
/// page); INVALID_ARGUMENT on `page_token` for a token this server did not give for this query.
pub fn start(token: &str, query: &[u8]) -> Result<Option<Vec<u8>>, InvalidArgument> {
    if token.is_empty() {
        return Ok(None);
    }
    let bytes = decode_hex(token).ok_or_else(|| not_given(token))?;
    let Some((&VERSION, rest)) = bytes.split_first() else { return Err(not_given(token)) };
    let Some((start, tag)) = rest.split_at_checked(rest.len().wrapping_sub(TAG_BYTES)) else {
        return Err(not_given(token));
    };
    hmac::verify(key(), &signed(query, start), tag).map_err(|_| not_given(token))?;
    Ok(Some(start.to_vec()))
}

/// INVALID_ARGUMENT on `page_token`: `token` is not one this server gave for this request.
fn not_given(token: &str) -> InvalidArgument {
    InvalidArgument::field(
        "page_token",
        format!("{} is not a next_page_token this server gave for this request", quoted(token)),
    )
}

/// A start that is a big-endian integer of `N` bytes; INVALID_ARGUMENT for any other length.
pub fn start_number<const N: usize>(token: &str, query: &[u8]) -> Result<Option<[u8; N]>, InvalidArgument> {
    match start(token, query)? {
        None => Ok(None),
        Some(bytes) => bytes.try_into().map(Some).map_err(|_| not_given(token)),
    }
}

/// The bytes of lower-case hex (as [`token`] writes it), or none.
fn decode_hex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) || !text.bytes().all(|byte| matches!(byte, b'0'..=b'9' | b'a'..=b'f')) {
        return None;
    }
    (0..text.len()).step_by(2).map(|at| u8::from_str_radix(&text[at..at + 2], 16).ok()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_continues_only_its_own_query() {
        let token = token(b"query a", &7u64.to_be_bytes());
        assert_eq!(start_number::<8>(&token, b"query a").unwrap(), Some(7u64.to_be_bytes()));
        assert!(start(&token, b"query b").unwrap_err().field.contains("page_token"));
        assert_eq!(start("", b"query a").unwrap(), None);
        for garbage in ["x", "7", "+5", &token.to_uppercase(), &token[1..], &format!("{token}0")] {
            assert!(start(garbage, b"query a").is_err(), "{garbage:?}");
        }
        assert!(start_number::<16>(&token, b"query a").is_err(), "a start of another length");
    }

    /// A token whose start was edited, or whose tag was written without this process's key, is
    /// refused: only starts this server gave are taken.
    #[test]
    fn an_edited_or_forged_token_is_refused() {
        let given = token(b"rows of job 7", &30u64.to_be_bytes());
        let mut edited = given.clone().into_bytes();
        // The start's last byte, 30 (0x1e), made 0x1f: a row never offered.
        assert_eq!(&edited[16..18], b"1e");
        edited[17] = b'f';
        assert!(start(&String::from_utf8(edited).unwrap(), b"rows of job 7").is_err());
        let forged_tag = hmac::sign(&hmac::Key::new(hmac::HMAC_SHA256, b"another key"), &signed(b"q", b"7"));
        let forged: String =
            [&[VERSION], &b"7"[..], forged_tag.as_ref()].concat().iter().map(|byte| format!("{byte:02x}")).collect();
        assert!(start(&forged, b"q").is_err());
        assert_eq!(start(&token(b"q", b"7"), b"q").unwrap(), Some(b"7".to_vec()));
        let no_tag = format!("{VERSION:02x}{}", "07");
        assert!(start(&no_tag, b"q").is_err());
    }

    #[test]
    fn zero_is_the_default_and_the_maximum_caps() {
        assert_eq!(page_size(0, 50, 1000), 50);
        assert_eq!(page_size(7, 50, 1000), 7);
        assert_eq!(page_size(5000, 50, 1000), 1000);
    }
}
