//! The gRPC codec of `nimber.v1.Solver` and `google.longrunning.Operations` (set in build.rs for every
//! method, SolveStream items included): prost encoding, and a decoder that answers a body that does not
//! decode `INVALID_ARGUMENT` (prost's own codec answers `INTERNAL`), and checks a Solver request's size
//! limits on its wire form BEFORE prost builds anything, so that a request over the limits costs a scan
//! of its bytes and nothing more. (Services whose code is not generated here, health and reflection, get
//! the same code from the call layer, [`crate::grpc::calls`].)
//!
//! The scan walks the protobuf wire format without allocating. Its field table (`Layout`) is read
//! once from the service's own protobuf descriptor: the number of `Position.sum` and
//! `Sum.components`, every other field of `Position`'s `game` oneof (a game), and each game
//! message's repeated fields (its items, packed or not). A new game's items are counted with no code
//! here. Other fields are skipped, as prost skips them. It counts over the whole request:
//! - items (every piece, box, reclaimed cell, board row, heap and sum) against [`MAX_ITEMS`],
//! - game positions (the components after flattening) against [`sum::MAX_COMPONENTS`],
//! - the nesting of sums against [`sum::MAX_DEPTH`].
//!
//! The domain checks components and nesting again when it builds the position (with the same messages);
//! the item limit is checked here only, so every request passes this scan.
//! A request over one of them, or a body that is not a valid protobuf message of the request type,
//! is answered `INVALID_ARGUMENT` naming the field and the limit. In SolveStream each item is one
//! request; an item rejected here ends the stream with that status (tonic cannot resume a stream
//! after its decoder failed), while an item that decodes but is invalid gets its per-item error.
//!
//! What tonic still answers itself, before this decoder runs: a message over `--max-message-bytes`
//! (`OUT_OF_RANGE`, rewritten to `RESOURCE_EXHAUSTED` by the server), a compressed-flag without a
//! `grpc-encoding`, an invalid compressed-flag, a body that ends inside a message, or a decompression
//! failure (`INTERNAL`, as the gRPC spec asks), and an unsupported `grpc-encoding` (`UNIMPLEMENTED`).

use std::fmt;
use std::marker::PhantomData;

use prost::bytes::Buf;
use prost::Message;
use tonic::codec::{Codec, DecodeBuf, Decoder};
use tonic::{Code, Status};

use crate::games::{sum, too_many_items, MAX_ITEMS};
use crate::google::longrunning as lro;
use crate::invalid_argument::InvalidArgument;
use crate::proto;

/// A message this codec decodes: the service's requests, checked before decoding, and (in the
/// generated client) its responses, decoded as prost does.
pub trait Checked: Message + Default {
    /// The message's protobuf name, for error messages.
    const NAME: &'static str;
    /// The status code of a body that does not decode: `INVALID_ARGUMENT` for a request (the
    /// client's mistake), `INTERNAL` for a response (the server's).
    const UNDECODABLE: Code;

    /// Checks the encoded message's limits; `Ok` for messages that have none.
    fn check(_body: &[u8]) -> Result<(), InvalidArgument> {
        Ok(())
    }
}

macro_rules! request {
    ($message:ty, $name:literal) => {
        impl Checked for $message {
            const NAME: &'static str = $name;
            const UNDECODABLE: Code = Code::InvalidArgument;
            fn check(body: &[u8]) -> Result<(), InvalidArgument> {
                check_request(body, $name)
            }
        }
    };
}

/// A request with no limits of its own: only a body that does not decode is refused.
macro_rules! plain_request {
    ($message:ty, $name:literal) => {
        impl Checked for $message {
            const NAME: &'static str = $name;
            const UNDECODABLE: Code = Code::InvalidArgument;
        }
    };
}

macro_rules! response {
    ($message:ty, $name:literal) => {
        impl Checked for $message {
            const NAME: &'static str = $name;
            const UNDECODABLE: Code = Code::Internal;
        }
    };
}

request!(proto::SolveRequest, "nimber.v1.SolveRequest");
request!(proto::BestMoveRequest, "nimber.v1.BestMoveRequest");
request!(proto::AnalyzeRequest, "nimber.v1.AnalyzeRequest");
response!(proto::SolveResponse, "nimber.v1.SolveResponse");
response!(proto::BestMoveResponse, "nimber.v1.BestMoveResponse");
response!(proto::AnalyzeResponse, "nimber.v1.AnalyzeResponse");
response!(lro::Operation, "google.longrunning.Operation");
response!(proto::ListExploreRowsResponse, "nimber.v1.ListExploreRowsResponse");
// WatchExplore holds an operation's name only; ListExploreRows a name and a page's size and token.
plain_request!(proto::WatchExploreRequest, "nimber.v1.WatchExploreRequest");
plain_request!(proto::ListExploreRowsRequest, "nimber.v1.ListExploreRowsRequest");
plain_request!(lro::GetOperationRequest, "google.longrunning.GetOperationRequest");
plain_request!(lro::ListOperationsRequest, "google.longrunning.ListOperationsRequest");
plain_request!(lro::CancelOperationRequest, "google.longrunning.CancelOperationRequest");
plain_request!(lro::DeleteOperationRequest, "google.longrunning.DeleteOperationRequest");
plain_request!(lro::WaitOperationRequest, "google.longrunning.WaitOperationRequest");
response!(lro::ListOperationsResponse, "google.longrunning.ListOperationsResponse");
response!((), "google.protobuf.Empty");

/// An Explore request: the position of a `solve` or `best_move` job has the limits of a Solve or
/// BestMove request; a family's few numbers and one board are checked by its constructor.
impl Checked for proto::ExploreRequest {
    const NAME: &'static str = "nimber.v1.ExploreRequest";
    const UNDECODABLE: Code = Code::InvalidArgument;
    fn check(body: &[u8]) -> Result<(), InvalidArgument> {
        let malformed =
            |error: Malformed| InvalidArgument::request(format!("the body is not a valid {}: {error}", Self::NAME));
        for field in Fields::new(body) {
            match field.map_err(malformed)? {
                (1, Wire::Bytes(solve)) => check_request(solve, "nimber.v1.SolveRequest")?,
                (2, Wire::Bytes(best_move)) => check_request(best_move, "nimber.v1.BestMoveRequest")?,
                _ => {}
            }
        }
        Ok(())
    }
}

/// The codec: prost's encoder, and [`CheckedDecoder`].
#[derive(Debug, Clone)]
pub struct CheckedCodec<T, U>(PhantomData<(T, U)>);

impl<T, U> Default for CheckedCodec<T, U> {
    fn default() -> Self {
        Self(PhantomData)
    }
}

impl<T, U> Codec for CheckedCodec<T, U>
where
    T: Message + Send + 'static,
    U: Checked + Send + 'static,
{
    type Encode = T;
    type Decode = U;
    type Encoder = tonic_prost::ProstEncoder<T>;
    type Decoder = CheckedDecoder<U>;

    fn encoder(&mut self) -> Self::Encoder {
        tonic_prost::ProstEncoder::default()
    }

    fn decoder(&mut self) -> Self::Decoder {
        CheckedDecoder(PhantomData)
    }
}

/// Checks a message's limits on its wire form, then decodes it with prost.
#[derive(Debug)]
pub struct CheckedDecoder<U>(PhantomData<U>);

impl<U: Checked> Decoder for CheckedDecoder<U> {
    type Item = U;
    type Error = Status;

    fn decode(&mut self, buf: &mut DecodeBuf<'_>) -> Result<Option<U>, Status> {
        let decoded = if buf.chunk().len() == buf.remaining() {
            U::check(buf.chunk()).map_err(rejected)?;
            U::decode(buf)
        } else {
            // Not contiguous (tonic's buffers always are): check a copy.
            let body = buf.copy_to_bytes(buf.remaining());
            U::check(&body).map_err(rejected)?;
            U::decode(body)
        };
        decoded.map(Some).map_err(|error| {
            let status = Status::new(U::UNDECODABLE, format!("the body is not a valid {}: {error}", U::NAME));
            tracing::debug!(message = status.message(), "undecodable message");
            status
        })
    }
}

fn rejected(error: InvalidArgument) -> Status {
    tracing::debug!(message = %error, "request rejected while decoding");
    error.into()
}

/// Checks an encoded request (field 1 is its `position` in every request type) against the limits.
fn check_request(body: &[u8], name: &str) -> Result<(), InvalidArgument> {
    let malformed = |error: Malformed| InvalidArgument::request(format!("the body is not a valid {name}: {error}"));
    let mut scan = Scan::new();
    for field in Fields::new(body) {
        if let (1, Wire::Bytes(position)) = field.map_err(malformed)? {
            scan.position(position, 0).map_err(|error| error.into_invalid(malformed))?;
        }
    }
    scan.finish()
}

/// How a repeated field of a game message holds its items on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Items {
    /// One length-delimited field per item (messages, strings, bytes).
    Delimited,
    /// Varints: one per field, or packed into one length-delimited field.
    Varints,
    /// Fixed-size numbers of this many bytes: one per field, or packed.
    Fixed(usize),
}

/// A repeated field of a game message: its number, its path (`cutting.pieces`), how it is held.
#[derive(Debug)]
struct List {
    number: u32,
    path: String,
    items: Items,
}

/// The field table of `Position`, read from the descriptor.
#[derive(Debug)]
struct Layout {
    /// The field number of `Position.sum`.
    sum: u32,
    /// The field number of `Sum.components`.
    components: u32,
    /// Each game's field number in `Position`, and its message's repeated fields.
    games: Vec<(u32, Vec<List>)>,
}

impl Layout {
    /// The table, read once from [`proto::FILE_DESCRIPTOR_SET`].
    fn get() -> &'static Layout {
        static LAYOUT: std::sync::OnceLock<Layout> = std::sync::OnceLock::new();
        LAYOUT.get_or_init(|| {
            Layout::read(proto::FILE_DESCRIPTOR_SET).expect("the built-in descriptor describes Position")
        })
    }

    /// The table of the descriptor set `encoded`; an error names what it lacks.
    fn read(encoded: &[u8]) -> Result<Layout, String> {
        use prost_types::field_descriptor_proto::{Label, Type};
        let files = prost_types::FileDescriptorSet::decode(encoded).map_err(|error| error.to_string())?;
        let messages: Vec<_> = files
            .file
            .iter()
            .filter(|file| file.package() == "nimber.v1")
            .flat_map(|file| file.message_type.iter())
            .collect();
        let message = |name: &str| {
            let short = name.trim_start_matches(".nimber.v1.");
            messages.iter().find(|message| message.name() == short).ok_or(format!("no message {name}"))
        };
        let position = message("Position")?;
        let field_of = |message: &prost_types::DescriptorProto, name: &str| {
            message.field.iter().find(|field| field.name() == name).map(|field| field.number() as u32)
        };
        let sum = field_of(position, "sum").ok_or("no Position.sum")?;
        let components = field_of(message("Sum")?, "components").ok_or("no Sum.components")?;
        let mut games = Vec::new();
        for game in position.field.iter().filter(|field| field.oneof_index.is_some() && field.name() != "sum") {
            let lists = message(game.type_name())?
                .field
                .iter()
                .filter(|field| field.label() == Label::Repeated)
                .map(|field| List {
                    number: field.number() as u32,
                    path: format!("{}.{}", game.name(), field.name()),
                    items: match field.r#type() {
                        Type::Message | Type::String | Type::Bytes | Type::Group => Items::Delimited,
                        Type::Fixed32 | Type::Sfixed32 | Type::Float => Items::Fixed(4),
                        Type::Fixed64 | Type::Sfixed64 | Type::Double => Items::Fixed(8),
                        _ => Items::Varints,
                    },
                })
                .collect();
            games.push((game.number() as u32, lists));
        }
        Ok(Layout { sum, components, games })
    }
}

/// Why a scan stopped.
enum ScanError {
    /// The bytes are not protobuf.
    Malformed(Malformed),
    /// A limit is exceeded (the error names it).
    Limit(InvalidArgument),
}

impl ScanError {
    fn into_invalid(self, malformed: impl Fn(Malformed) -> InvalidArgument) -> InvalidArgument {
        match self {
            ScanError::Malformed(error) => malformed(error),
            ScanError::Limit(error) => error,
        }
    }
}

impl From<Malformed> for ScanError {
    fn from(error: Malformed) -> Self {
        ScanError::Malformed(error)
    }
}

/// The counts of a scan so far, and where it is: `path[d]` is the index of the component being
/// scanned in the sum at nesting `d`.
struct Scan {
    items: usize,
    components: usize,
    path: [usize; sum::MAX_DEPTH],
}

/// The field path of an item: `sum.components[i].` for each enclosing sum, then the field and index.
struct ItemPath<'a> {
    sums: &'a [usize],
    field: &'a str,
    index: Option<usize>,
}

impl fmt::Display for ItemPath<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for index in self.sums {
            write!(f, "sum.components[{index}].")?;
        }
        f.write_str(self.field)?;
        match self.index {
            Some(index) => write!(f, "[{index}]"),
            None => Ok(()),
        }
    }
}

impl Scan {
    fn new() -> Self {
        Scan { items: 0, components: 0, path: [0; sum::MAX_DEPTH] }
    }

    /// The components' limit, checked once the whole request is counted.
    fn finish(self) -> Result<(), InvalidArgument> {
        if self.components > sum::MAX_COMPONENTS {
            return Err(InvalidArgument::setup("sum", &sum::SumError::TooManyComponents(self.components)));
        }
        Ok(())
    }

    /// Scans a `Position` at nesting `depth` (the number of enclosing sums).
    fn position(&mut self, bytes: &[u8], depth: usize) -> Result<(), ScanError> {
        let layout = Layout::get();
        let mut has_sum = false;
        let mut is_game = false;
        for field in Fields::new(bytes) {
            let (number, wire) = field?;
            let Wire::Bytes(game) = wire else { continue };
            if number == layout.sum {
                self.sum(game, depth)?;
                has_sum = true;
            } else if let Some((_, lists)) = layout.games.iter().find(|(game, _)| *game == number) {
                is_game = true;
                self.lists(game, lists, depth)?;
            }
        }
        // A position with no game costs as much as a game, so counts as one (and is rejected later).
        if is_game || !has_sum {
            self.components += 1;
        }
        Ok(())
    }

    /// Counts one item, naming it by `field` (and `index`) if it is past the limit.
    fn item(&mut self, depth: usize, field: &str, index: Option<usize>) -> Result<(), ScanError> {
        if self.items >= MAX_ITEMS {
            let path = ItemPath { sums: &self.path[..depth], field, index }.to_string();
            return Err(ScanError::Limit(InvalidArgument { message: too_many_items(&path), field: path }));
        }
        self.items += 1;
        Ok(())
    }

    /// Counts the items of a game message's lists.
    fn lists(&mut self, bytes: &[u8], lists: &[List], depth: usize) -> Result<(), ScanError> {
        let mut counted = vec![0; lists.len()];
        for field in Fields::new(bytes) {
            let (number, wire) = field?;
            if let Some(at) = lists.iter().position(|list| list.number == number) {
                for _ in 0..wire.items(lists[at].items) {
                    self.item(depth, &lists[at].path, Some(counted[at]))?;
                    counted[at] += 1;
                }
            }
        }
        Ok(())
    }

    /// Scans a `Sum` at nesting `depth`: one item, and its components one level deeper.
    fn sum(&mut self, bytes: &[u8], depth: usize) -> Result<(), ScanError> {
        self.item(depth, "sum", None)?;
        if depth >= sum::MAX_DEPTH {
            let path = ItemPath { sums: &self.path[..depth], field: "", index: None };
            let error = InvalidArgument::setup("sum", &sum::SumError::TooDeep);
            return Err(ScanError::Limit(error.within(&path.to_string())));
        }
        let components = Layout::get().components;
        let mut index = 0;
        for field in Fields::new(bytes) {
            match field? {
                (number, Wire::Bytes(component)) if number == components => {
                    self.path[depth] = index;
                    self.position(component, depth + 1)?;
                    index += 1;
                }
                _ => {}
            }
        }
        Ok(())
    }
}

/// Why bytes are not protobuf.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Malformed {
    /// A varint runs past the end or past 10 bytes.
    Varint,
    /// A field number of 0, or past 2^29-1.
    FieldNumber,
    /// Wire type 6 or 7, or an end-group with no start.
    WireType,
    /// A length-delimited or fixed-size field runs past the end.
    Length,
    /// A group with no end.
    Group,
}

impl fmt::Display for Malformed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Malformed::Varint => "a varint is truncated or too long",
            Malformed::FieldNumber => "a field number is out of range",
            Malformed::WireType => "a wire type is invalid",
            Malformed::Length => "a field runs past the end of its message",
            Malformed::Group => "a group is not closed",
        })
    }
}

/// The payload of one field, as far as the scan cares.
enum Wire<'a> {
    /// A length-delimited field's bytes.
    Bytes(&'a [u8]),
    /// Any other field (varint, fixed, group).
    Other,
}

impl Wire<'_> {
    /// How many items of a list this field holds, given how the list holds them.
    fn items(&self, items: Items) -> usize {
        match (self, items) {
            (Wire::Bytes(_), Items::Delimited) => 1,
            (Wire::Bytes(packed), Items::Varints) => packed.iter().filter(|&&byte| byte < 0x80).count(),
            (Wire::Bytes(packed), Items::Fixed(size)) => packed.len() / size,
            (Wire::Other, Items::Delimited) => 0,
            (Wire::Other, Items::Varints | Items::Fixed(_)) => 1,
        }
    }
}

/// The fields of an encoded message in order: (field number, payload).
struct Fields<'a> {
    bytes: &'a [u8],
    at: usize,
    failed: bool,
}

impl<'a> Fields<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        Self { bytes, at: 0, failed: false }
    }

    fn varint(&mut self) -> Result<u64, Malformed> {
        let mut value = 0u64;
        for shift in 0..10 {
            let byte = *self.bytes.get(self.at).ok_or(Malformed::Varint)?;
            self.at += 1;
            if shift == 9 && byte > 1 {
                return Err(Malformed::Varint);
            }
            value |= u64::from(byte & 0x7f) << (shift * 7);
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(Malformed::Varint)
    }

    fn skip(&mut self, count: u64) -> Result<&'a [u8], Malformed> {
        let count = usize::try_from(count).map_err(|_| Malformed::Length)?;
        let end = self.at.checked_add(count).filter(|&end| end <= self.bytes.len()).ok_or(Malformed::Length)?;
        let bytes = &self.bytes[self.at..end];
        self.at = end;
        Ok(bytes)
    }

    /// The field number of a tag, checking it.
    fn tag(&mut self) -> Result<(u32, u8), Malformed> {
        let tag = self.varint()?;
        let number =
            u32::try_from(tag >> 3).ok().filter(|&n| (1..1 << 29).contains(&n)).ok_or(Malformed::FieldNumber)?;
        Ok((number, (tag & 7) as u8))
    }

    /// Skips the rest of a group, nested groups included.
    fn skip_group(&mut self) -> Result<(), Malformed> {
        let mut open = 1usize;
        while open > 0 {
            if self.at >= self.bytes.len() {
                return Err(Malformed::Group);
            }
            let (_, wire_type) = self.tag()?;
            match wire_type {
                3 => open += 1,
                4 => open -= 1,
                other => self.payload(other)?,
            }
        }
        Ok(())
    }

    /// Skips the payload of a non-group field of `wire_type`.
    fn payload(&mut self, wire_type: u8) -> Result<(), Malformed> {
        match wire_type {
            0 => self.varint().map(drop),
            1 => self.skip(8).map(drop),
            2 => {
                let length = self.varint()?;
                self.skip(length).map(drop)
            }
            5 => self.skip(4).map(drop),
            _ => Err(Malformed::WireType),
        }
    }

    fn field(&mut self) -> Result<(u32, Wire<'a>), Malformed> {
        let (number, wire_type) = self.tag()?;
        let wire = match wire_type {
            2 => {
                let length = self.varint()?;
                Wire::Bytes(self.skip(length)?)
            }
            3 => {
                self.skip_group()?;
                Wire::Other
            }
            other => {
                self.payload(other)?;
                Wire::Other
            }
        };
        Ok((number, wire))
    }
}

impl<'a> Iterator for Fields<'a> {
    type Item = Result<(u32, Wire<'a>), Malformed>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.at >= self.bytes.len() {
            return None;
        }
        let field = self.field();
        self.failed = field.is_err();
        Some(field)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::position_from_proto;
    use proto::position::Game as P;

    fn cutting(pieces: usize) -> proto::Position {
        proto::Position {
            game: Some(P::Cutting(proto::Cutting { pieces: vec![proto::Piece { width: 2, height: 2 }; pieces] })),
        }
    }

    fn sum(components: Vec<proto::Position>) -> proto::Position {
        proto::Position { game: Some(P::Sum(proto::Sum { components })) }
    }

    fn nested(depth: usize) -> proto::Position {
        (0..depth).fold(cutting(1), |inner, _| sum(vec![inner]))
    }

    /// The scan's verdict, and the convert layer's (which checks the domain's limits, not the items).
    fn both(position: proto::Position) -> (Result<(), String>, Result<(), String>) {
        let body = proto::SolveRequest { position: Some(position.clone()), id: "x".into(), ..Default::default() }
            .encode_to_vec();
        let scanned = proto::SolveRequest::check(&body).map_err(|error| error.message);
        let converted = position_from_proto(Some(position)).map(drop).map_err(|error| error.message);
        (scanned, converted)
    }

    #[test]
    fn items_count_over_the_whole_request() {
        let scanned = |position| both(position).0;
        assert_eq!(scanned(cutting(MAX_ITEMS)), Ok(()));
        assert_eq!(scanned(cutting(MAX_ITEMS + 1)), Err(too_many_items("cutting.pieces[100000]")));
        // Two games of half the limit each fill it; one item more is one too many, wherever it is.
        let half = MAX_ITEMS / 2 - 1;
        assert_eq!(scanned(sum(vec![cutting(half), cutting(half)])), Ok(()));
        let expected = too_many_items(format!("sum.components[1].sum.components[0].cutting.pieces[{half}]"));
        assert_eq!(scanned(sum(vec![cutting(half), sum(vec![cutting(half + 1)])])), Err(expected));
    }

    #[test]
    fn depth_and_components_have_the_domain_limits() {
        assert_eq!(both(nested(sum::MAX_DEPTH)), (Ok(()), Ok(())));
        let (scanned, converted) = both(nested(sum::MAX_DEPTH + 1));
        let too_deep = InvalidArgument::setup("sum", &sum::SumError::TooDeep).message;
        let expected = format!("{}{too_deep}", "sum.components[0].".repeat(sum::MAX_DEPTH));
        assert_eq!((scanned, converted), (Err(expected.clone()), Err(expected)));
        let components = |count| sum((0..count).map(|_| cutting(1)).collect());
        assert_eq!(both(components(sum::MAX_COMPONENTS)), (Ok(()), Ok(())));
        let expected =
            InvalidArgument::setup("sum", &sum::SumError::TooManyComponents(sum::MAX_COMPONENTS + 1)).message;
        let split = sum(vec![components(sum::MAX_COMPONENTS / 2), components(sum::MAX_COMPONENTS / 2 + 1)]);
        assert_eq!(both(split), (Err(expected.clone()), Err(expected)));
    }

    #[test]
    fn malformed_bodies_are_invalid_and_valid_ones_with_unknown_fields_pass() {
        for body in [&[0x0a, 0x05, 0x32][..], &[0x08], &[0x00], &[0x0f], &[0x0b, 0x08, 0x01], &[0x0c]] {
            let error = proto::SolveRequest::check(body).unwrap_err();
            assert!(error.message.starts_with("the body is not a valid nimber.v1.SolveRequest"), "{error}");
        }
        // Unknown varint, fixed64, fixed32 fields and a group, then a position.
        let mut body = vec![0x78, 0x96, 0x01, 0x79, 0, 0, 0, 0, 0, 0, 0, 0, 0x7d, 0, 0, 0, 0, 0x7b, 0x08, 0x01, 0x7c];
        body.extend(
            proto::SolveRequest { position: Some(cutting(3)), id: String::new(), ..Default::default() }.encode_to_vec(),
        );
        assert_eq!(proto::SolveRequest::check(&body), Ok(()));
        assert_eq!(proto::SolveRequest::decode(body.as_slice()).unwrap().position, Some(cutting(3)));
    }

    #[test]
    fn the_field_table_comes_from_the_descriptor_and_covers_every_registered_game() {
        let layout = Layout::get();
        assert_eq!(layout.games.len(), crate::games::GameTag::ALL.len());
        let lists: Vec<&str> =
            layout.games.iter().flat_map(|(_, lists)| lists.iter().map(|list| list.path.as_str())).collect();
        assert_eq!(
            lists,
            [
                "cutting.pieces",
                "stone_boxes.boxes",
                "reclamation.reclaimed",
                "tetris.rows",
                "heaps.heaps",
                "node_kayles.edges",
                "cram.rows",
                "node_kayles_board.rows"
            ]
        );
        let items: Vec<Items> =
            layout.games.iter().flat_map(|(_, lists)| lists.iter().map(|list| list.items)).collect();
        assert_eq!(items[..4], [Items::Delimited; 4]);
        assert_eq!(items[4], Items::Varints, "heaps are packed varints");
        assert_eq!(items[5], Items::Delimited, "edges are messages");
        assert_eq!(items[6..], [Items::Delimited; 2], "rows are strings");
    }

    #[test]
    fn packed_numbers_count_one_item_each() {
        // 1, 150 (two bytes) and 5: three varints in one packed field.
        assert_eq!(Wire::Bytes(&[0x01, 0x96, 0x01, 0x05]).items(Items::Varints), 3);
        assert_eq!(Wire::Bytes(&[0; 16]).items(Items::Fixed(8)), 2);
        assert_eq!(Wire::Other.items(Items::Varints), 1);
        assert_eq!(Wire::Bytes(b"row").items(Items::Delimited), 1);
    }
}
