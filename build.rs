//! Compiles the protos with protox (pure Rust, no system protoc) and generates the tonic services
//! and prost messages: `nimber.v1` (proto/nimber/v1/nimber.proto) and the standard
//! `google.longrunning` and `google.rpc` it uses (proto/google/). Also writes the encoded
//! descriptor set that the reflection service serves (`OUT_DIR/nimber_descriptor.bin`): it holds
//! every file nimber.proto imports, so reflection describes google.longrunning.Operations and the
//! `Any` payloads too.
//!
//! It also writes the values of the 2×2-placement game's small sets (`OUT_DIR/small_sets.bin`,
//! see `src/games/tetris/direct.rs`), so the service starts with them instead of computing them.

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
    std::fs::write(out_dir.join("small_sets.bin"), small_sets())?;
    Ok(())
}

/// Rows and columns of the box of placements whose every set `small_sets` values.
const BOX: (usize, usize) = (4, 6);

/// Node Kayles values of the 2^24 sets of placements inside a 4×6 box (placement `(r, c)` is bit
/// `6·r + c`; two placements overlap when they are at most one row and one column apart), two to a
/// byte: set `i` in the low half of byte `i / 2` when `i` is even, the high half when odd.
fn small_sets() -> Vec<u8> {
    let (rows, columns) = BOX;
    let cells = rows * columns;
    let overlapping: Vec<usize> = (0..cells)
        .map(|p| {
            (0..cells)
                .filter(|q| (q / columns).abs_diff(p / columns) <= 1 && (q % columns).abs_diff(p % columns) <= 1)
                .fold(0, |mask, q| mask | 1 << q)
        })
        .collect();
    let mut values = vec![0u8; 1 << cells];
    for set in 1..values.len() {
        // Every option is a proper subset, hence a smaller index, already computed.
        let (mut seen, mut rest) = (0u64, set);
        while rest != 0 {
            seen |= 1 << values[set & !overlapping[rest.trailing_zeros() as usize]];
            rest &= rest - 1;
        }
        values[set] = (!seen).trailing_zeros() as u8;
    }
    assert!(values.iter().all(|&value| value < 16), "every value fits half a byte");
    values.chunks(2).map(|pair| pair[0] | pair[1] << 4).collect()
}
