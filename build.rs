//! Compiles the protos with protox (pure Rust, no system protoc) and generates the tonic services
//! and prost messages: `nimber.v1` (proto/nimber/v1/nimber.proto) and the standard
//! `google.longrunning` and `google.rpc` it uses (proto/google/). Also writes the encoded
//! descriptor set that the reflection service serves (`OUT_DIR/nimber_descriptor.bin`): it holds
//! every file nimber.proto imports, so reflection describes google.longrunning.Operations and the
//! `Any` payloads too.
//!
//! It also writes the values of the small sets of the placement games, the 2×2 game's
//! (`OUT_DIR/square_small_sets.bin`) and Cram's (`OUT_DIR/domino_small_sets.bin`, see
//! `src/games/placement/small.rs`), so the service starts with them instead of computing them.

use prost::Message;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let proto = "proto/nimber/v1/nimber.proto";
    let google = "proto/google/longrunning/operations.proto";
    println!("cargo:rerun-if-changed=proto");
    let descriptors = protox::compile([proto], ["proto"])?;
    let out_dir = std::path::PathBuf::from(std::env::var("OUT_DIR")?);
    std::fs::write(out_dir.join("nimber_descriptor.bin"), descriptors.encode_to_vec())?;
    // nimber.v1 refers to the google packages by absolute path (lib.rs mounts them at crate::google),
    // and they are generated on their own afterwards (overwriting what this pass wrote for them).
    // Every Solver method decodes through our codec, which checks a request's limits before prost
    // builds it.
    tonic_prost_build::configure()
        .codec_path("crate::grpc::codec::CheckedCodec")
        .extern_path(".google.longrunning", "crate::google::longrunning")
        .extern_path(".google.rpc", "crate::google::rpc")
        .compile_fds(descriptors)?;
    // The Operations service decodes through the same codec: a body that does not decode is the
    // client's mistake (INVALID_ARGUMENT), not ours.
    tonic_prost_build::configure()
        .codec_path("crate::grpc::codec::CheckedCodec")
        .compile_fds(protox::compile([google], ["proto"])?)?;
    std::fs::write(out_dir.join("square_small_sets.bin"), small_sets(&square_moves()))?;
    std::fs::write(out_dir.join("domino_small_sets.bin"), small_sets(&domino_moves()))?;
    Ok(())
}

/// Rows and columns of the box of points whose every set `small_sets` values.
const BOX: (usize, usize) = (4, 6);

/// The moves of the 2×2 game on the points of the box (placement `(r, c)` is bit `6·r + c`): each
/// needs its placement and removes every placement at most one row and one column from it.
fn square_moves() -> Vec<(u32, u32)> {
    let (rows, columns) = BOX;
    let cells = rows * columns;
    (0..cells)
        .map(|p| {
            let near = |q: &usize| (q / columns).abs_diff(p / columns) <= 1 && (q % columns).abs_diff(p % columns) <= 1;
            (1 << p, (0..cells).filter(near).fold(0, |mask, q| mask | 1 << q))
        })
        .collect()
}

/// The moves of Cram on the cells of the box (cell `(r, c)` is bit `6·r + c`): each domino needs
/// and removes its two cells.
fn domino_moves() -> Vec<(u32, u32)> {
    let (rows, columns) = BOX;
    let mut moves = Vec::new();
    for cell in 0..rows * columns {
        let (r, c) = (cell / columns, cell % columns);
        if c + 1 < columns {
            moves.push(0b11 << cell);
        }
        if r + 1 < rows {
            moves.push(1 << cell | 1 << (cell + columns));
        }
    }
    moves.into_iter().map(|domino| (domino, domino)).collect()
}

/// The values of the 2^24 sets of points inside the 4×6 box, under `moves` (a move is possible
/// when the set holds every point of its first mask, and removes those of its second), two to a
/// byte: set `i` in the low half of byte `i / 2` when `i` is even, the high half when odd.
fn small_sets(moves: &[(u32, u32)]) -> Vec<u8> {
    let mut values = vec![0u8; 1 << (BOX.0 * BOX.1)];
    for set in 1..values.len() as u32 {
        // Every option is a proper subset, hence a smaller index, already computed.
        let mut seen = 0u64;
        for &(needs, removes) in moves {
            if set & needs == needs {
                seen |= 1 << values[(set & !removes) as usize];
            }
        }
        values[set as usize] = (!seen).trailing_zeros() as u8;
    }
    assert!(values.iter().all(|&value| value < 16), "every value fits half a byte");
    values.chunks(2).map(|pair| pair[0] | pair[1] << 4).collect()
}
