//! The store through the real server binary: damaged sled files never stop the server (an
//! unreadable store is moved aside, or refused with `--on-corrupt-store=fail`), and a full disk
//! never blocks a start (the server serves without the store and writes again once space returns).
//! Answers are always checked against the engine run in this process without any store.

mod common;

use nimber::games::Value;
use std::path::Path;
use std::time::Duration;

use common::damage::{copy_dir, damages, flip, moved_aside};
use common::{assert_refuses_to_start, engine_value, sample, scrape, solve_request, wait_until, Mount, TestServer};
use nimber::proto;
use nimber::random::SplitMix;
use nimber::testing::{board_position, random_board};
use tonic_health::pb::{health_check_response::ServingStatus, health_client::HealthClient, HealthCheckRequest};

/// Boards that need search (so the store gets values) and solve in milliseconds.
fn boards(seed: u64, count: usize) -> Vec<proto::Position> {
    let mut random = SplitMix::new(seed);
    (0..count).map(|i| board_position(random_board(&mut random, 6 + i % 3, 7, 12))).collect()
}

/// Checks health says SERVING and every board's answer equals the engine's; returns how many
/// positions the server computed (0 when everything came from the store).
async fn check_answers(server: &TestServer, boards: &[proto::Position], case: &str) -> u64 {
    let health = HealthClient::new(server.channel().await).check(HealthCheckRequest { service: String::new() }).await;
    assert_eq!(health.expect("health answers").into_inner().status(), ServingStatus::Serving, "{case}");
    let mut client = server.client().await;
    let mut computed = 0;
    for position in boards {
        let answer = client.solve(solve_request(position.clone())).await.unwrap_or_else(|s| panic!("{case}: {s}"));
        let answer = answer.into_inner();
        assert_eq!(answer.grundy, engine_value(position).nimber(), "{case}: {position:?}");
        computed += answer.stats.unwrap_or_default().positions_computed;
    }
    computed
}

/// A real store of more than 10 MB: foreign filler keys (a tag no game uses, so never read) written
/// with sled, then values of real boards written by the server.
async fn build_store(dir: &Path, boards: &[proto::Position]) {
    fill_foreign(dir);
    let mut server = TestServer::builder().data_dir(dir).start();
    assert!(check_answers(&server, boards, "building the store").await > 0);
    assert!(server.stop(), "graceful stop");
    let size: u64 = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().metadata().unwrap().len()).sum();
    assert!(size > 10 << 20, "the store is only {size} bytes");
}

/// Writes about 10 MB of foreign keys (a tag no game uses, so never read) with sled into `dir`.
fn fill_foreign(dir: &Path) {
    {
        let db = sled::open(dir).unwrap();
        let mut random = SplitMix::new(7);
        let mut batch = sled::Batch::default();
        for i in 0..120_000u64 {
            let key: Vec<u8> = [200u8].into_iter().chain(random.next_u64().to_le_bytes()).chain([1; 24]).collect();
            batch.insert(key, random.next_u64().to_le_bytes().repeat(6));
            if i % 4096 == 0 {
                db.apply_batch(std::mem::take(&mut batch)).unwrap();
            }
        }
        db.apply_batch(batch).unwrap();
        db.flush().unwrap();
    }
}

/// Flipped bytes at several offsets of the db file, of the conf file and of snapshots, and
/// truncated db files: each time the server comes up serving exact answers; an unreadable store is
/// moved aside with one ERROR line saying where.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_damaged_store_never_stops_the_server() {
    let temp = tempfile::tempdir().unwrap();
    let base = temp.path().join("base");
    let boards = boards(1, 8);
    build_store(&base, &boards).await;
    let cases = damages(&base);

    let mut unreadable = 0;
    for (i, (case, damage)) in cases.iter().enumerate() {
        let dir = temp.path().join(format!("case{i}"));
        copy_dir(&base, &dir);
        damage(&dir);
        let log = temp.path().join(format!("case{i}.log"));
        let server = TestServer::builder().data_dir(&dir).stderr(std::fs::File::create(&log).unwrap()).start();
        check_answers(&server, &boards, case).await;
        drop(server);
        let stderr = std::fs::read_to_string(&log).unwrap();
        assert!(!stderr.contains("panicked at"), "{case}: a panic was printed:\n{stderr}");
        let aside = moved_aside(&dir);
        let errors: Vec<&str> = stderr.lines().filter(|line| line.contains("ERROR")).collect();
        if aside.is_empty() {
            assert!(errors.is_empty(), "{case}: errors logged but nothing moved aside:\n{stderr}");
        } else {
            unreadable += 1;
            assert_eq!(aside.len(), 1, "{case}: {aside:?}");
            assert_eq!(errors.len(), 1, "{case}: expected one ERROR line:\n{stderr}");
            assert!(
                errors[0].contains("moved it aside") && errors[0].contains(&*aside[0].to_string_lossy()),
                "{case}: {}",
                errors[0]
            );
        }
        eprintln!("note: {case}: {}", if aside.is_empty() { "read as is" } else { "unreadable, moved aside" });
    }
    assert!(unreadable >= 2, "the damage should have made some stores unreadable");
}

/// `--on-corrupt-store=fail` refuses an unreadable store with one clear line and a non-zero exit,
/// and leaves it where it is.
#[test]
fn on_corrupt_store_fail_refuses_with_one_line() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path().join("data");
    fill_foreign(&dir);
    // The first byte of the log (an unreadable store, as in `a_damaged_store_never_stops_the_server`).
    flip(&dir.join("db"), 0);
    let line = assert_refuses_to_start(&dir, &["--on-corrupt-store", "fail"], "unreadable");
    assert!(line.contains("--on-corrupt-store=rebuild"), "{line}");
    assert!(dir.join("db").exists() && moved_aside(&dir).is_empty());
}

/// Tests that mount a tmpfs, so need root: ignored by a plain `cargo test`, run by
/// `scripts/test.sh` (as CI does) with `-- --ignored needs_root::`.
mod needs_root {
    use super::*;

    /// A store on a full tmpfs: the server starts and answers exactly, saying once that it runs
    /// without the store; once space is freed it writes again by itself (`nimber_store_writable`
    /// turns 1), and what it wrote is served from the store after a restart.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[ignore = "needs root"]
    async fn a_full_disk_never_blocks_a_start_and_writing_resumes() {
        let temp = tempfile::tempdir().unwrap();
        let mount = Mount::tmpfs(temp.path(), "4m");
        let data = mount.0.join("data");
        let first = boards(2, 4);
        let mut server = TestServer::builder().data_dir(&data).start();
        check_answers(&server, &first, "before the disk is full").await;
        assert!(server.stop());

        let filler = mount.fill();
        let log = temp.path().join("full.log");
        let flags = ["--metrics-listen", "127.0.0.1:0"];
        let server =
            TestServer::builder().data_dir(&data).flags(&flags).stderr(std::fs::File::create(&log).unwrap()).start();
        let metrics_url = server.metrics_url.clone().unwrap();
        let writable = || sample(&scrape(&metrics_url), "nimber_store_writable");
        assert_eq!(writable(), 0.0, "the store is writable on a full disk");
        check_answers(&server, &boards(3, 4), "on a full disk").await;
        let stderr = std::fs::read_to_string(&log).unwrap();
        assert_eq!(stderr.matches("the disk is full").count(), 1, "{stderr}");

        std::fs::remove_file(&filler).unwrap();
        wait_until(Duration::from_secs(30), "the store writable once space returned", async || writable() == 1.0).await;
        // A board solved once writing resumed is remembered across a restart.
        let position = boards(4, 1).remove(0);
        let mut client = server.client().await;
        let answer = client.solve(solve_request(position.clone())).await.unwrap().into_inner();
        assert!(answer.stats.unwrap().positions_computed > 0, "the board was not new to the store");
        drop(server);
        let server = TestServer::builder().data_dir(&data).start();
        assert_eq!(check_answers(&server, &[position], "after space returned").await, 0, "not served from the store");
    }
}
