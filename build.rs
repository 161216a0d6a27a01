//! Compiles the protos with protox (pure Rust, no system protoc) and generates the tonic services
//! and prost messages: `nimber.v1` (proto/nimber/v1/nimber.proto) and the standard
//! `google.longrunning` and `google.rpc` it uses (proto/google/). Also writes the encoded
//! descriptor set that the reflection service serves (`OUT_DIR/nimber_descriptor.bin`): it holds
//! every file nimber.proto imports, so reflection describes google.longrunning.Operations and the
//! `Any` payloads too.

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
        .codec_path("crate::codec::CheckedCodec")
        .extern_path(".google.longrunning", "crate::google::longrunning")
        .extern_path(".google.rpc", "crate::google::rpc")
        .compile_fds(descriptors)?;
    tonic_prost_build::configure().compile_fds(protox::compile([google], ["proto"])?)?;
    Ok(())
}
