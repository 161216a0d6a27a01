//! Compiles proto/nimber/v1/nimber.proto with protox (pure Rust, no system protoc) and generates the
//! tonic service and prost messages; also writes the encoded descriptor set that the reflection
//! service serves (`OUT_DIR/nimber_descriptor.bin`).

use prost::Message;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let proto = "proto/nimber/v1/nimber.proto";
    println!("cargo:rerun-if-changed={proto}");
    let descriptors = protox::compile([proto], ["proto"])?;
    let out_dir = std::path::PathBuf::from(std::env::var("OUT_DIR")?);
    std::fs::write(out_dir.join("nimber_descriptor.bin"), descriptors.encode_to_vec())?;
    // Every method decodes through our codec, which checks a request's limits before prost builds it.
    tonic_prost_build::configure().codec_path("crate::codec::CheckedCodec").compile_fds(descriptors)?;
    Ok(())
}
