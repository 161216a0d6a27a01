//! How keys and values are laid out in sled and in the shared tier (see the module docs of
//! [`crate::cache`]).

use ring::hmac;

use crate::games::GameTag;

/// The version byte of format 1: the Grundy value as 8 little-endian bytes (no cost, no checksum).
pub const VALUE_FORMAT_V1: u8 = 1;

/// The version byte of format 2: the Grundy value and the recompute cost as LEB128 varints, then a
/// CRC-32 of the key and everything before the checksum, 4 bytes little-endian.
pub const VALUE_FORMAT_V2: u8 = 2;

/// The version byte of format 3, the shared tier's (Redis) in a fleet with a secret, never in sled:
/// the Grundy value and the recompute cost as LEB128 varints, then an HMAC-SHA-256 tag
/// (32 bytes) of the Redis key's length (8 bytes little-endian), the Redis key and everything
/// before the tag.
pub const VALUE_FORMAT_V3: u8 = 3;

/// The version byte of format 4: a game's bytes (a heap game's values, say) rather than a Grundy
/// value: the recompute cost as a LEB128 varint, the bytes, then a CRC-32 of the key and everything
/// before the checksum, 4 bytes little-endian (format 2's checksum).
pub const VALUE_FORMAT_V4: u8 = 4;

/// The version byte of format 5, the shared tier's form of format 4 in a fleet with a secret: the
/// cost varint and the bytes, then format 3's HMAC-SHA-256 tag.
pub const VALUE_FORMAT_V5: u8 = 5;

/// The length of a format-3 value's tag: a whole HMAC-SHA-256.
const MAC_BYTES: usize = 32;

/// The first byte of every key that is the store's own bookkeeping rather than a memoized value;
/// no [`GameTag`] has this value.
const INTERNAL: u8 = 0;

/// The key of the number of memoized values, kept in the same batch as every write.
pub(crate) const ENTRIES_KEY: &[u8] = b"\0nimber/entries";

/// The key of the most memoized values kept (present once the size bound was reached).
pub(crate) const CAP_KEY: &[u8] = b"\0nimber/cap";

/// The prefix of the eviction index: `prefix ++ cost bucket ++ value key` -> empty.
pub(crate) const INDEX_PREFIX: &[u8] = b"\0nimber/index/";

/// The cost bucket assumed for format-1 values, whose cost is unknown: that of 4096 search nodes,
/// in the middle of what memoized components cost (64 nodes and up), so they are neither evicted
/// first nor kept forever.
pub(crate) const V1_BUCKET: u8 = 13;

/// What a stored value holds: a Grundy value (formats 1 to 3), or a game's bytes (formats 4 and 5).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Payload {
    /// A Grundy value.
    Nimber(u64),
    /// A game's own bytes, e.g. a heap game's values G(0..n) and its proven period.
    Bytes(Vec<u8>),
}

impl Payload {
    /// The Grundy value, if this is one.
    pub fn nimber(&self) -> Option<u64> {
        match *self {
            Payload::Nimber(value) => Some(value),
            Payload::Bytes(_) => None,
        }
    }

    /// The bytes, if these are bytes.
    pub fn into_bytes(self) -> Option<Vec<u8>> {
        match self {
            Payload::Nimber(_) => None,
            Payload::Bytes(bytes) => Some(bytes),
        }
    }
}

/// A decoded value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stored {
    /// The Grundy value or the bytes.
    pub value: Payload,
    /// What recomputing it costs (search nodes), `None` when the format does not say.
    pub cost: Option<u64>,
}

/// A store key: the game tag byte, then the canonical state bytes.
pub fn store_key(game: GameTag, state: &[u8]) -> Vec<u8> {
    let mut key = Vec::with_capacity(1 + state.len());
    key.push(game as u8);
    key.extend_from_slice(state);
    key
}

/// Whether `key` is a memoized value's rather than the store's bookkeeping.
pub(crate) fn is_value_key(key: &[u8]) -> bool {
    key.first().is_some_and(|&first| first != INTERNAL)
}

/// Encodes a value of `key` in the store's current format: 2 for a Grundy value, 4 for bytes.
pub fn encode_value(key: &[u8], value: &Payload, cost: u64) -> Vec<u8> {
    let mut bytes = encode_body(value, cost, false, 4);
    let checksum = checksum(key, &bytes);
    bytes.extend_from_slice(&checksum.to_le_bytes());
    bytes
}

/// Decodes a stored value of `key`; `None` (a miss) for an unknown version (formats 3 and 5
/// included: they are the shared tier's), a malformed value or a checksum that does not match.
pub fn decode_value(key: &[u8], bytes: &[u8]) -> Option<Stored> {
    match bytes.split_first()? {
        (&VALUE_FORMAT_V1, rest) => {
            Some(Stored { value: Payload::Nimber(u64::from_le_bytes(rest.try_into().ok()?)), cost: None })
        }
        (&(VALUE_FORMAT_V2 | VALUE_FORMAT_V4), _) => {
            let (body, sum) = bytes.split_at(bytes.len().checked_sub(4)?);
            if checksum(key, body).to_le_bytes() != sum {
                return None;
            }
            decode_body(body)
        }
        _ => None,
    }
}

/// Encodes a value in format 3 (a Grundy value) or 5 (bytes), authenticated with `mac` for the
/// Redis key `redis_key`.
pub(crate) fn encode_authenticated(redis_key: &[u8], value: &Payload, cost: u64, mac: &hmac::Key) -> Vec<u8> {
    let mut bytes = encode_body(value, cost, true, MAC_BYTES);
    append_tag(&mut bytes, redis_key, mac);
    bytes
}

/// Appends to `body` the tag of `mac` for the Redis key `redis_key` and `body` (what
/// [`authenticated_body`] checks).
pub(crate) fn append_tag(body: &mut Vec<u8>, redis_key: &[u8], mac: &hmac::Key) {
    let tag = hmac::sign(mac, &mac_input(redis_key, body));
    body.extend_from_slice(tag.as_ref());
}

/// The body of a format-3 or format-5 value under the Redis key `redis_key` (all but the tag) if its tag is `mac`'s (compared in constant time); `None` otherwise.
pub(crate) fn authenticated_body<'a>(redis_key: &[u8], bytes: &'a [u8], mac: &hmac::Key) -> Option<&'a [u8]> {
    let (body, tag) = bytes.split_at(bytes.len().checked_sub(MAC_BYTES)?);
    hmac::verify(mac, &mac_input(redis_key, body), tag).ok()?;
    Some(body)
}

/// The value and cost in a body: the version byte, then for a Grundy value (formats 2 and 3) two
/// varints and nothing else, for bytes (formats 4 and 5) the cost varint and the bytes.
pub(crate) fn decode_body(body: &[u8]) -> Option<Stored> {
    let mut at = 1;
    match *body.first()? {
        VALUE_FORMAT_V2 | VALUE_FORMAT_V3 => {
            let value = read_varint(body, &mut at)?;
            let cost = read_varint(body, &mut at)?;
            (at == body.len()).then_some(Stored { value: Payload::Nimber(value), cost: Some(cost) })
        }
        VALUE_FORMAT_V4 | VALUE_FORMAT_V5 => {
            let cost = read_varint(body, &mut at)?;
            Some(Stored { value: Payload::Bytes(body[at..].to_vec()), cost: Some(cost) })
        }
        _ => None,
    }
}

/// Whether a value's version byte is that of bytes (formats 4 and 5) rather than a Grundy value.
pub(crate) fn holds_bytes(version: u8) -> bool {
    matches!(version, VALUE_FORMAT_V4 | VALUE_FORMAT_V5)
}

/// A body (its version byte, checksummed or `authenticated`, then the value and the cost) with
/// room for `trailer` more bytes.
fn encode_body(value: &Payload, cost: u64, authenticated: bool, trailer: usize) -> Vec<u8> {
    match value {
        Payload::Nimber(value) => {
            let mut bytes = Vec::with_capacity(1 + 10 + 10 + trailer);
            bytes.push(if authenticated { VALUE_FORMAT_V3 } else { VALUE_FORMAT_V2 });
            push_varint(&mut bytes, *value);
            push_varint(&mut bytes, cost);
            bytes
        }
        Payload::Bytes(value) => {
            let mut bytes = Vec::with_capacity(1 + 10 + value.len() + trailer);
            bytes.push(if authenticated { VALUE_FORMAT_V5 } else { VALUE_FORMAT_V4 });
            push_varint(&mut bytes, cost);
            bytes.extend_from_slice(value);
            bytes
        }
    }
}

/// What a format-3 or format-5 tag authenticates: the Redis key's length (so no key and body can be shifted
/// into another pair), the key, the body.
fn mac_input(redis_key: &[u8], body: &[u8]) -> Vec<u8> {
    let mut input = Vec::with_capacity(8 + redis_key.len() + body.len());
    input.extend_from_slice(&(redis_key.len() as u64).to_le_bytes());
    input.extend_from_slice(redis_key);
    input.extend_from_slice(body);
    input
}

/// The eviction bucket of a cost: its bit length, so bucket `b` holds costs in `[2^(b-1), 2^b)`.
pub(crate) fn cost_bucket(cost: u64) -> u8 {
    (u64::BITS - cost.leading_zeros()) as u8
}

/// The eviction bucket a stored value is indexed under: by its cost, [`V1_BUCKET`] for format 1,
/// 0 (evicted first) for anything undecodable.
pub(crate) fn bucket_of_stored(key: &[u8], bytes: &[u8]) -> u8 {
    match decode_value(key, bytes) {
        Some(Stored { cost: Some(cost), .. }) => cost_bucket(cost),
        Some(Stored { cost: None, .. }) => V1_BUCKET,
        None => 0,
    }
}

/// The eviction index key of a value key in `bucket`.
pub(crate) fn index_key(bucket: u8, key: &[u8]) -> Vec<u8> {
    let mut index = Vec::with_capacity(INDEX_PREFIX.len() + 1 + key.len());
    index.extend_from_slice(INDEX_PREFIX);
    index.push(bucket);
    index.extend_from_slice(key);
    index
}

/// The value key an eviction index key points to.
pub(crate) fn indexed_key(index: &[u8]) -> Option<&[u8]> {
    index.strip_prefix(INDEX_PREFIX)?.split_first().map(|(_, key)| key).filter(|key| is_value_key(key))
}

fn checksum(key: &[u8], body: &[u8]) -> u32 {
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(key);
    hasher.update(body);
    hasher.finalize()
}

fn push_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push(value as u8 | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

fn read_varint(bytes: &[u8], at: &mut usize) -> Option<u64> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *bytes.get(*at)?;
        *at += 1;
        value |= u64::from(byte & 0x7f).checked_shl(shift)?;
        if byte & 0x80 == 0 {
            return Some(value);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_round_trip_and_damage_is_a_miss() {
        let key = store_key(GameTag::Tetris, b"component");
        let values = [
            (Payload::Nimber(0), 0),
            (Payload::Nimber(7), 64),
            (Payload::Nimber(64), u64::MAX),
            (Payload::Bytes(vec![]), 3),
            (Payload::Bytes(vec![1, 2, 3, 0x80]), 1 << 40),
        ];
        for (value, cost) in values {
            let bytes = encode_value(&key, &value, cost);
            assert_eq!(decode_value(&key, &bytes), Some(Stored { value, cost: Some(cost) }));
            for at in 0..bytes.len() {
                let mut flipped = bytes.clone();
                flipped[at] ^= 0x10;
                assert_eq!(decode_value(&key, &flipped), None, "a flip at {at} of {bytes:?}");
            }
            assert_eq!(decode_value(&store_key(GameTag::Tetris, b"other"), &bytes), None);
        }
        let mut v1 = vec![VALUE_FORMAT_V1];
        v1.extend_from_slice(&5u64.to_le_bytes());
        assert_eq!(decode_value(&key, &v1), Some(Stored { value: Payload::Nimber(5), cost: None }));
        assert_eq!(bucket_of_stored(&key, &v1), V1_BUCKET);
        assert_eq!(bucket_of_stored(&key, &[9, 9]), 0);
        let mac = hmac::Key::new(hmac::HMAC_SHA256, b"the fleet's secret, 32 bytes long");
        for value in [Payload::Nimber(5), Payload::Bytes(vec![5])] {
            let authenticated = encode_authenticated(b"nimber:v2:\x03component", &value, 64, &mac);
            assert_eq!(decode_value(&key, &authenticated), None, "formats 3 and 5 are the shared tier's, never sled's");
        }
    }

    #[test]
    fn index_keys_order_by_cost_and_point_back() {
        let key = store_key(GameTag::Tetris, b"k");
        assert!(index_key(cost_bucket(10), &key) < index_key(cost_bucket(1000), &key));
        assert_eq!(indexed_key(&index_key(3, &key)), Some(&key[..]));
        assert!(!is_value_key(ENTRIES_KEY) && !is_value_key(&index_key(3, &key)) && is_value_key(&key));
    }
}
