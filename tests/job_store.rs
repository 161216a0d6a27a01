//! The local job store (`--jobs-dir`) through the real server binary: damage never stops the
//! service (an unreadable store is moved aside with its readable records recovered, or refused with
//! `--on-corrupt-jobs=fail`), a full disk pauses jobs and job calls answer UNAVAILABLE until space
//! returns, and `--max-jobs-store-bytes` deletes the oldest finished tables first.

mod common;

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use common::damage::{copy_dir, damages, flip, moved_aside};
use common::jobs::{full_boards, operations, progress, result, sub_boards, wait_done};
use common::{assert_refuses_to_start_saying, cheap_position, sample, scrape, solve_request, wait_until, TestServer};
use nimber::google::longrunning::{self as lro, Operation};
use nimber::proto::{self, ExploreState};
use tonic::Code;
use tonic_health::pb::{health_check_response::ServingStatus, health_client::HealthClient, HealthCheckRequest};

/// The health of `service` ("" for the server as a whole).
async fn health(server: &TestServer, service: &str) -> ServingStatus {
    let request = HealthCheckRequest { service: service.into() };
    HealthClient::new(server.channel().await).check(request).await.expect("health answers").into_inner().status()
}

/// Solve answers, and the server as a whole is SERVING.
async fn assert_solve_serves(server: &TestServer, case: &str) {
    assert_eq!(health(server, "").await, ServingStatus::Serving, "{case}");
    let answer = server.client().await.solve(solve_request(cheap_position())).await;
    assert!(answer.is_ok(), "{case}: {answer:?}");
}

/// Every operation, by name.
async fn list_all(server: &TestServer) -> HashMap<String, Operation> {
    let request = lro::ListOperationsRequest { page_size: 1000, ..Default::default() };
    let listed = operations(server).await.list_operations(request).await.expect("ListOperations answers");
    listed.into_inner().operations.into_iter().map(|operation| (operation.name.clone(), operation)).collect()
}

/// The first page of the table of `name` (at most 10 000 rows).
async fn rows(server: &TestServer, name: &str) -> Result<Vec<proto::ExploreRow>, tonic::Status> {
    let request = proto::ListExploreRowsRequest { name: name.into(), page_size: 10_000, page_token: String::new() };
    Ok(server.client().await.list_explore_rows(request).await?.into_inner().rows)
}

/// Runs `request` as a job to its end; its operation.
async fn run_job(server: &TestServer, request: proto::ExploreRequest) -> Operation {
    let name = server.client().await.explore(request).await.expect("Explore accepts the job").into_inner().name;
    let done = wait_done(&mut operations(server).await, &name).await;
    assert_eq!(progress(&done).state(), ExploreState::Succeeded, "{done:?}");
    done
}

/// `result` without what says whether a row came from the memo (a job run again finds its rows
/// there), and without its page token (signed by the process that serves it: each server's differs).
fn uncached(mut result: proto::ExploreResult) -> proto::ExploreResult {
    result.rows.iter_mut().for_each(|row| row.cached = false);
    result.next_page_token.clear();
    result
}

/// A job store with two finished jobs, one with a table of 2579 rows; returns their operations
/// and the rows of the table.
async fn build_job_store(jobs_dir: &Path) -> (HashMap<String, Operation>, String, Vec<proto::ExploreRow>) {
    let data = tempfile::tempdir().unwrap();
    let flags = ["--jobs-dir", jobs_dir.to_str().unwrap()];
    let mut server = TestServer::builder().data_dir(data.path()).flags(&flags).start();
    let table = run_job(&server, sub_boards(&["0000000"; 7], 3)).await.name;
    run_job(&server, full_boards((1, 3), (1, 4))).await;
    let table_rows = rows(&server, &table).await.unwrap();
    assert_eq!(table_rows.len(), 2579);
    let operations = list_all(&server).await;
    assert_eq!(operations.len(), 2);
    assert!(server.stop(), "graceful stop");
    (operations, table, table_rows)
}

/// Bit flips at several offsets of the db file, truncations, a garbage or damaged `conf`, damaged
/// snapshots and a zeroed db: each time the server comes up, Solve serves, and job calls answer.
/// An unreadable store is moved aside with one ERROR line naming both directories and counted in
/// `nimber_jobs_store_moved_aside_total`. What the server lists is what was stored, or an earlier
/// state of it (sled recovers a prefix of its log, as after a crash): a job found unfinished, or
/// whose table lost rows, runs again to the same result. New jobs run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_damaged_job_store_never_stops_the_service() {
    let temp = tempfile::tempdir().unwrap();
    let base = temp.path().join("base");
    let (stored, table, table_rows) = build_job_store(&base).await;
    let cases = damages(&base);

    let (mut unreadable, mut recovered) = (0, 0);
    for (i, (case, damage)) in cases.iter().enumerate() {
        let dir = temp.path().join(format!("case{i}"));
        copy_dir(&base, &dir);
        damage(&dir);
        let data = tempfile::tempdir().unwrap();
        let log = temp.path().join(format!("case{i}.log"));
        let flags = ["--jobs-dir", dir.to_str().unwrap(), "--metrics-listen", "127.0.0.1:0"];
        let server = TestServer::builder()
            .data_dir(data.path())
            .flags(&flags)
            .stderr(std::fs::File::create(&log).unwrap())
            .start();
        assert_solve_serves(&server, case).await;
        let listed = list_all(&server).await;
        let mut client = operations(&server).await;
        for (name, operation) in &listed {
            let original = stored.get(name).unwrap_or_else(|| panic!("{case}: {name} was never stored"));
            if operation != original {
                // sled recovers a prefix of its log: an earlier state of the job, which runs again
                // (it may have finished again already).
                let done = wait_done(&mut client, name).await;
                let (again, first) = (uncached(result(&done)), uncached(result(original)));
                assert!(again == first, "{case}: {name} ran again to another result");
            }
        }
        if listed.contains_key(&table) {
            let read = rows(&server, &table).await.unwrap_or_else(|status| panic!("{case}: {status}"));
            let same = |read: &proto::ExploreRow, stored: &proto::ExploreRow| {
                proto::ExploreRow { cached: false, ..read.clone() }
                    == proto::ExploreRow { cached: false, ..stored.clone() }
            };
            let first_difference = read.iter().zip(&table_rows).position(|(read, stored)| !same(read, stored));
            assert_eq!(read.len(), table_rows.len(), "{case}: the table has every row");
            assert_eq!(first_difference, None, "{case}: the rows read are the stored ones, in order");
        }
        run_job(&server, full_boards((1, 1), (1, 2))).await;
        let moved = sample(&scrape(server.metrics_url.as_ref().unwrap()), "nimber_jobs_store_moved_aside_total");
        drop(server);

        let stderr = std::fs::read_to_string(&log).unwrap();
        assert!(!stderr.contains("panicked at"), "{case}: a panic was printed:\n{stderr}");
        let aside = moved_aside(&dir);
        let errors: Vec<&str> = stderr.lines().filter(|line| line.contains("ERROR")).collect();
        if aside.is_empty() {
            assert!(errors.is_empty(), "{case}: errors logged but nothing moved aside:\n{stderr}");
            assert_eq!(moved, 0.0, "{case}");
        } else {
            unreadable += 1;
            recovered += listed.len();
            assert_eq!((aside.len(), moved), (1, 1.0), "{case}: {aside:?}");
            assert_eq!(errors.len(), 1, "{case}: expected one ERROR line:\n{stderr}");
            let named = |path: &Path| errors[0].contains(&*path.to_string_lossy());
            assert!(errors[0].contains("moved it aside") && named(&aside[0]) && named(&dir), "{case}: {}", errors[0]);
        }
        eprintln!(
            "note: {case}: {} ({} of {} operations listed)",
            if aside.is_empty() { "read as is" } else { "unreadable, moved aside" },
            listed.len(),
            stored.len()
        );
    }
    assert!(unreadable >= 2, "the damage should have made some stores unreadable");
    eprintln!("note: {unreadable} stores moved aside, {recovered} operations recovered from them");
}

/// `--on-corrupt-jobs=fail` refuses an unreadable job store with one clear line and a non-zero
/// exit, and leaves it where it is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_corrupt_jobs_fail_refuses_with_one_line() {
    let temp = tempfile::tempdir().unwrap();
    let jobs = temp.path().join("jobs");
    build_job_store(&jobs).await;
    flip(&jobs.join("db"), 0);
    let data = temp.path().join("data");
    let flags = ["--jobs-dir", jobs.to_str().unwrap(), "--on-corrupt-jobs", "fail"];
    let expected = format!("nimber: cannot open the job store at {}", jobs.display());
    let line = assert_refuses_to_start_saying(&data, &flags, &expected, "unreadable");
    assert!(line.contains("--on-corrupt-jobs=rebuild"), "{line}");
    assert!(jobs.join("db").exists() && moved_aside(&jobs).is_empty());
}

/// Past `--max-jobs-store-bytes` the oldest finished table is deleted first: its operation keeps
/// its result and ListExploreRows says why the rows are gone; the newest table stays whole, and
/// the store holds at most its bound again (`nimber_jobs_store_bytes`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_its_bound_the_job_store_deletes_the_oldest_finished_tables_first() {
    let temp = tempfile::tempdir().unwrap();
    let jobs = temp.path().join("jobs");
    let jobs_flag = ["--jobs-dir", jobs.to_str().unwrap(), "--metrics-listen", "127.0.0.1:0"];
    let mut server = TestServer::builder().data_dir(&temp.path().join("data")).flags(&jobs_flag).start();
    let first = run_job(&server, sub_boards(&["0000000"; 7], 3)).await;
    let one_table = sample(&scrape(server.metrics_url.as_ref().unwrap()), "nimber_jobs_store_bytes") as u64;
    assert!(server.stop());

    let bound = (one_table * 3 / 2).to_string();
    let flags = [&jobs_flag[..], &["--max-jobs-store-bytes", &bound]].concat();
    let server = TestServer::builder().data_dir(&temp.path().join("data")).flags(&flags).start();
    assert_eq!(rows(&server, &first.name).await.unwrap().len(), 2579, "within the bound, nothing is deleted");
    let second = run_job(&server, sub_boards(&["0000000"; 7], 3)).await;
    let gone = rows(&server, &first.name).await.unwrap_err();
    assert_eq!(gone.code(), Code::FailedPrecondition, "{gone:?}");
    assert!(gone.message().contains("--max-jobs-store-bytes"), "{}", gone.message());
    let kept = operations(&server).await.get_operation(lro::GetOperationRequest { name: first.name.clone() }).await;
    assert_eq!(result(&kept.unwrap().into_inner()).total_rows, 2579, "the deleted table's result stays");
    assert_eq!(rows(&server, &second.name).await.unwrap().len(), 2579);
    let held = sample(&scrape(server.metrics_url.as_ref().unwrap()), "nimber_jobs_store_bytes") as u64;
    assert!(held <= one_table * 3 / 2, "{held} bytes held, over the bound of {bound}");
}

/// Tests that mount a tmpfs, so need root: ignored by a plain `cargo test`, run by
/// `scripts/test.sh` (as CI does) with `-- --ignored needs_root::`.
mod needs_root {
    use super::*;
    use common::Mount;

    /// A job store on a full tmpfs: the server starts, Solve serves, job calls answer UNAVAILABLE
    /// saying why, `google.longrunning.Operations` is NOT_SERVING and `nimber_jobs_store_writable`
    /// is 0. A job that was running when the disk filled pauses; once space is freed everything
    /// resumes by itself and the paused job finishes with the engine's table.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[ignore = "needs root"]
    async fn a_full_disk_pauses_jobs_and_everything_resumes_when_space_returns() {
        let temp = tempfile::tempdir().unwrap();
        let mount = Mount::tmpfs(temp.path(), "4m");
        let jobs = mount.0.join("jobs");
        let flags = ["--jobs-dir", jobs.to_str().unwrap(), "--metrics-listen", "127.0.0.1:0"];

        // A job that writes rows for a while; the disk fills while it runs.
        let server = TestServer::builder().data_dir(&temp.path().join("data")).flags(&flags).start();
        let metrics_url = server.metrics_url.clone().unwrap();
        let writable = || sample(&scrape(&metrics_url), "nimber_jobs_store_writable");
        assert_eq!(writable(), 1.0);
        let mut solver = server.client().await;
        let long = solver.explore(sub_boards(&["0000000"; 7], 3)).await.unwrap().into_inner().name;
        let mut client = operations(&server).await;
        common::jobs::wait_for(&mut client, &long, Duration::from_secs(60), |operation| {
            progress(operation).items_done > 0
        })
        .await;
        let filler = mount.fill();
        wait_until(Duration::from_secs(60), "the job store unwritable on a full disk", async || writable() == 0.0)
            .await;
        let status = client.get_operation(lro::GetOperationRequest { name: long.clone() }).await.unwrap_err();
        assert_eq!(status.code(), Code::Unavailable, "{status:?}");
        assert!(status.message().contains("resume by themselves"), "{}", status.message());
        let operations_health = async |status| health(&server, "google.longrunning.Operations").await == status;
        wait_until(Duration::from_secs(5), "Operations NOT_SERVING", async || {
            operations_health(ServingStatus::NotServing).await
        })
        .await;
        assert_solve_serves(&server, "on a full disk").await;
        let running = || sample(&scrape(&metrics_url), "nimber_jobs_running");
        wait_until(Duration::from_secs(30), "the job paused", async || running() == 0.0).await;

        std::fs::remove_file(&filler).unwrap();
        wait_until(Duration::from_secs(30), "the job store writable once space returned", async || writable() == 1.0)
            .await;
        let done = wait_done(&mut client, &long).await;
        assert_eq!(progress(&done).state(), ExploreState::Succeeded, "{done:?}");
        assert!(progress(&done).times_resumed >= 1, "the paused job resumed: {:?}", progress(&done));
        assert_eq!(result(&done).total_rows, rows(&server, &long).await.unwrap().len() as u64);
        drop(server);

        // Starting on a full disk: the server starts, and job calls wait for space.
        let filler = mount.fill();
        let server = TestServer::builder().data_dir(&temp.path().join("data")).flags(&flags).start();
        let metrics_url = server.metrics_url.clone().unwrap();
        let writable = || sample(&scrape(&metrics_url), "nimber_jobs_store_writable");
        let status = server.client().await.explore(full_boards((1, 2), (1, 2))).await.unwrap_err();
        assert_eq!(status.code(), Code::Unavailable, "{status:?}");
        assert_eq!(writable(), 0.0);
        assert_solve_serves(&server, "started on a full disk").await;
        std::fs::remove_file(&filler).unwrap();
        wait_until(Duration::from_secs(30), "the job store writable once space returned", async || writable() == 1.0)
            .await;
        let operations_health = async || health(&server, "google.longrunning.Operations").await;
        wait_until(Duration::from_secs(5), "Operations SERVING", async || {
            operations_health().await == ServingStatus::Serving
        })
        .await;
        run_job(&server, full_boards((1, 2), (1, 2))).await;
        assert!(list_all(&server).await.contains_key(&long), "the job of before the restart is listed");
    }
}
