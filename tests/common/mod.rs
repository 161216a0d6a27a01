//! Starts the real `nimber` binary on an ephemeral port with a temporary data directory, and
//! connects real gRPC clients to it.
#![allow(dead_code)] // each test binary uses a different part of this module

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use nimber::proto::solver_client::SolverClient;
use tonic::transport::Channel;

/// A running server process; stopped (SIGTERM, then waited for) when dropped.
pub struct TestServer {
    child: Option<Child>,
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    /// The data directory the server keeps its store in.
    pub data_dir: PathBuf,
    _temp: Option<tempfile::TempDir>,
}

impl TestServer {
    /// A server on a fresh temporary data directory.
    pub fn start() -> Self {
        let temp = tempfile::tempdir().expect("a temporary directory");
        let mut server = Self::start_in(temp.path(), &[]);
        server._temp = Some(temp);
        server
    }

    /// A server on `data_dir` with extra `serve` flags.
    pub fn start_in(data_dir: &Path, flags: &[&str]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_nimber"))
            .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
            .arg(data_dir)
            .args(flags)
            .env("RUST_LOG", std::env::var("NIMBER_TEST_LOG").unwrap_or_else(|_| "warn".into()))
            .stdout(Stdio::piped())
            .spawn()
            .expect("the nimber binary starts");
        let stdout = child.stdout.take().expect("piped stdout");
        let mut first_line = String::new();
        BufReader::new(stdout).read_line(&mut first_line).expect("the server prints its address");
        let address = first_line
            .trim()
            .strip_prefix("nimber listening on ")
            .unwrap_or_else(|| panic!("unexpected first line {first_line:?}"))
            .to_string();
        Self { child: Some(child), url: format!("http://{address}"), data_dir: data_dir.to_path_buf(), _temp: None }
    }

    /// A connected Solver client.
    pub async fn client(&self) -> SolverClient<Channel> {
        SolverClient::connect(self.url.clone()).await.expect("the client connects")
    }

    /// A connected channel, for the health and reflection clients.
    pub async fn channel(&self) -> Channel {
        Channel::from_shared(self.url.clone()).unwrap().connect().await.expect("the channel connects")
    }

    /// Stops the server gracefully (SIGTERM) and returns whether it exited with status 0.
    pub fn stop(&mut self) -> bool {
        let Some(mut child) = self.child.take() else { return true };
        let _ = Command::new("kill").args(["-TERM", &child.id().to_string()]).status();
        child.wait().map(|status| status.success()).unwrap_or(false)
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.stop();
    }
}
