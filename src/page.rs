//! Pages of a paged call, one rule for all of them (Analyze, ListExploreRows, ListOperations;
//! AIP-158):
//! - **Size.** 0 asks for the call's default, and more than its maximum gets the maximum
//!   ([`page_size`]).
//! - **Tokens** are opaque. A token is the hex of a version byte, a 64-bit fingerprint of the query
//!   it continues, and where the next page starts. A token used with another query (a different
//!   position, operation or filter) is INVALID_ARGUMENT, and so is anything this server did not
//!   write. The fingerprint (FNV-1a) detects a token used with the wrong query; it is not a secret,
//!   and it need not be one: a token only says where to start, in a query the request states in full.

use crate::grpc::calls::quoted;
use crate::grpc::convert::InvalidArgument;

/// The version byte every token starts with.
const VERSION: u8 = 1;

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
    let mut bytes = Vec::with_capacity(9 + start.len());
    bytes.push(VERSION);
    bytes.extend(fingerprint(query).to_be_bytes());
    bytes.extend(start);
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// Where the page of `query` that `token` asks for starts (`None` for the empty token: the first
/// page); INVALID_ARGUMENT on `page_token` for a token this server did not give for this query.
pub fn start(token: &str, query: &[u8]) -> Result<Option<Vec<u8>>, InvalidArgument> {
    if token.is_empty() {
        return Ok(None);
    }
    let bytes = decode_hex(token).ok_or_else(|| not_given(token))?;
    match bytes.split_first() {
        Some((&VERSION, rest)) if rest.len() >= 8 && rest[..8] == fingerprint(query).to_be_bytes() => {
            Ok(Some(rest[8..].to_vec()))
        }
        _ => Err(not_given(token)),
    }
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

/// FNV-1a, 64 bits.
fn fingerprint(query: &[u8]) -> u64 {
    query.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &byte| (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3))
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

    #[test]
    fn zero_is_the_default_and_the_maximum_caps() {
        assert_eq!(page_size(0, 50, 1000), 50);
        assert_eq!(page_size(7, 50, 1000), 7);
        assert_eq!(page_size(5000, 50, 1000), 1000);
    }
}
