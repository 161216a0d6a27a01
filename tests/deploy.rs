//! The deploy files as an operator would use them: the Kubernetes manifest parses and names only
//! flags, environment variables and ports the binary has (read from `nimber serve --help` and
//! `nimber health --help`, so a renamed flag fails here), the Dockerfile builds with the command of
//! `docs/operations.md` ("Running in production"), and the systemd unit passes `systemd-analyze
//! verify` and rates 3.0 or below in `systemd-analyze security` (systemd-analyze comes with the
//! `systemd` package, which `scripts/test.sh` installs with apt-get when it is missing; it needs no
//! running systemd).

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use serde_yaml::Value;

fn repo_file(path: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).unwrap()
}

/// The long flags and environment variables in `nimber <command> --help`.
fn help_names(command: &str) -> (BTreeSet<String>, BTreeSet<String>) {
    let output = Command::new(env!("CARGO_BIN_EXE_nimber")).args([command, "--help"]).output().unwrap();
    let help = String::from_utf8(output.stdout).unwrap();
    let words = || help.split(|c: char| c.is_whitespace() || c == '[' || c == ']' || c == '=' || c == ',');
    let flags = words().filter(|word| word.starts_with("--")).map(str::to_string).collect();
    let env = words().filter(|word| word.starts_with("NIMBER_")).map(str::to_string).collect();
    (flags, env)
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_sequence()
        .map_or(Vec::new(), |items| items.iter().filter_map(|item| item.as_str().map(String::from)).collect())
}

#[test]
fn the_kubernetes_manifest_names_only_real_flags_ports_and_services() {
    let text = repo_file("deploy/kubernetes/nimber.yaml");
    let documents: Vec<Value> = text.split("\n---\n").map(|document| serde_yaml::from_str(document).unwrap()).collect();
    let kind = |kind: &'static str| documents.iter().filter(move |doc| doc["kind"] == kind);
    let set = kind("StatefulSet").next().expect("a StatefulSet");
    let headless = kind("Service").find(|service| service["spec"]["clusterIP"] == "None");
    let headless = headless.expect("a headless Service");
    assert_eq!(set["spec"]["serviceName"], headless["metadata"]["name"]);
    assert!(kind("Service").count() >= 2, "a Service for clients too");
    assert!(kind("PodDisruptionBudget").next().is_some());

    check_pod(&set["spec"]["template"], &documents);
}

/// The pod template of a set of replicas: non-root, a read-only root, and a container that names
/// only the flags, variables and ports the binary has, with both stores on its volume, probes that
/// run `nimber health` against its own port, and Services selecting it that use only its ports.
fn check_pod(template: &Value, documents: &[Value]) {
    let pod = &template["spec"];
    let (serve_flags, serve_env) = help_names("serve");
    let (health_flags, health_env) = help_names("health");
    let kind = |kind: &'static str| documents.iter().filter(move |doc| doc["kind"] == kind);
    for field in ["runAsNonRoot", "fsGroup"] {
        assert!(!pod["securityContext"][field].is_null(), "securityContext.{field}");
    }
    let container = &pod["containers"][0];
    assert_eq!(container["securityContext"]["readOnlyRootFilesystem"], Value::from(true));
    assert!(container["imagePullPolicy"].is_string());
    for flag in strings(&container["args"]).iter().filter(|arg| arg.starts_with("--")) {
        assert!(serve_flags.contains(flag), "args: {flag} is not a flag of nimber serve");
    }
    let mut env = std::collections::BTreeMap::new();
    for variable in container["env"].as_sequence().unwrap() {
        let name = variable["name"].as_str().unwrap().to_string();
        assert!(serve_env.contains(&name) || health_env.contains(&name), "env: {name} is read by no command");
        env.insert(name, variable["value"].as_str().unwrap_or_default().to_string());
    }
    let port_of = |name: &str| {
        let ports = container["ports"].as_sequence().unwrap();
        ports.iter().find(|port| port["name"] == name).map(|port| port["containerPort"].as_u64().unwrap())
    };
    let listen_port = |variable: &str| env[variable].rsplit(':').next().unwrap().parse::<u64>().unwrap();
    assert_eq!(port_of("grpc"), Some(listen_port("NIMBER_LISTEN")));
    assert_eq!(port_of("metrics"), Some(listen_port("NIMBER_METRICS_LISTEN")));
    let selects_pod = |service: &&Value| service["spec"]["selector"] == template["metadata"]["labels"];
    for service in kind("Service").filter(selects_pod) {
        for port in service["spec"]["ports"].as_sequence().unwrap() {
            let target = port["targetPort"].as_str().unwrap();
            assert!(port_of(target).is_some(), "Service port {target} is no container port");
        }
    }
    for volume in ["NIMBER_DATA_DIR", "NIMBER_JOBS_DIR"] {
        let mount = container["volumeMounts"][0]["mountPath"].as_str().unwrap();
        assert!(env[volume].starts_with(mount), "{volume} is not on the data volume");
    }
    for probe in ["readinessProbe", "livenessProbe"] {
        let probe = &container[probe];
        assert!(probe["timeoutSeconds"].is_u64(), "probe timeout");
        let command = strings(&probe["exec"]["command"]);
        assert_eq!(command[1], "health");
        for flag in command.iter().filter(|arg| arg.starts_with("--")) {
            assert!(health_flags.contains(flag), "probe: {flag} is not a flag of nimber health");
        }
        let address = &command[command.iter().position(|arg| arg == "--addr").unwrap() + 1];
        assert!(address.ends_with(&format!(":{}", listen_port("NIMBER_LISTEN"))), "probe address {address}");
        if let Some(at) = command.iter().position(|arg| arg == "--service") {
            assert_eq!(command[at + 1], "nimber.v1.Solver", "the probe asks about an unknown service");
        }
    }
}

#[test]
fn the_dockerfile_builds_with_the_documented_command() {
    let dockerfile = repo_file("deploy/Dockerfile");
    let build =
        dockerfile.lines().rev().find_map(|line| line.strip_prefix("RUN cargo build")).expect("RUN cargo build");
    let command = format!("cargo build{build}");
    assert!(repo_file("docs/operations.md").contains(&command), "docs/operations.md does not build with {command:?}");
    let ((_, serve_env), (_, health_env)) = (help_names("serve"), help_names("health"));
    let instructions = dockerfile.lines().filter(|line| !line.trim_start().starts_with('#'));
    for variable in instructions.flat_map(str::split_whitespace).filter_map(|word| word.strip_prefix("NIMBER_")) {
        let name = format!("NIMBER_{}", variable.split('=').next().unwrap());
        assert!(serve_env.contains(&name) || health_env.contains(&name), "{name} is read by no command");
    }
    let ignored = repo_file(".dockerignore");
    for path in ["target/", ".git/", "nimber-data/", "nimber-jobs/"] {
        assert!(ignored.lines().any(|line| line == path), ".dockerignore lacks {path}");
    }
}

#[test]
fn the_systemd_unit_verifies_and_rates_ok() {
    let analyze = Command::new("systemd-analyze").arg("--version").output();
    assert!(analyze.is_ok(), "systemd-analyze is missing: apt-get install -y systemd");
    let dir = tempfile::tempdir().unwrap();
    let unit = dir.path().join("nimber.service");
    let text =
        repo_file("deploy/systemd/nimber.service").replace("/usr/local/bin/nimber", env!("CARGO_BIN_EXE_nimber"));
    std::fs::write(&unit, text).unwrap();
    let verify = Command::new("systemd-analyze").args(["verify", "--man=no"]).arg(&unit).output().unwrap();
    let complaints = String::from_utf8_lossy(&verify.stderr);
    assert!(verify.status.success() && complaints.trim().is_empty(), "verify: {complaints}");
    let security = Command::new("systemd-analyze").args(["security", "--offline=yes"]).arg(&unit).output().unwrap();
    let report = String::from_utf8_lossy(&security.stdout);
    let level: f64 = report
        .lines()
        .find_map(|line| line.split("exposure level for nimber.service: ").nth(1))
        .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| panic!("no exposure level in {report}"));
    assert!(level <= 3.0, "systemd-analyze security rates the unit {level}: {report}");
}

#[test]
fn the_fleet_manifest_shares_redis_through_a_secret_and_runs_a_deployment() {
    let text = repo_file("deploy/kubernetes/fleet.yaml");
    let documents: Vec<Value> = text.split("\n---\n").map(|document| serde_yaml::from_str(document).unwrap()).collect();
    let named = |kind: &str, name: &str| {
        documents.iter().find(|doc| doc["kind"] == kind && doc["metadata"]["name"] == name).cloned()
    };
    let fleet = named("Deployment", "nimber-fleet").expect("the replicas as a Deployment");
    assert!(fleet["spec"]["replicas"].as_u64().unwrap() >= 2);
    check_pod(&fleet["spec"]["template"], &documents);
    let pod = &fleet["spec"]["template"]["spec"];
    assert!(named("Service", "nimber-fleet").is_some() && named("PodDisruptionBudget", "nimber-fleet").is_some());
    let shared = pod["containers"][0]["env"].as_sequence().unwrap().iter().find(|v| v["name"] == "NIMBER_SHARED_CACHE");
    let secret = &shared.expect("NIMBER_SHARED_CACHE")["valueFrom"]["secretKeyRef"];
    let secret = named("Secret", secret["name"].as_str().unwrap()).expect("the Secret holding the URL");
    let url = secret["stringData"]["url"].as_str().unwrap();
    let host_port = url.strip_prefix("redis://").unwrap().split('/').next().unwrap();
    let (host, port) = host_port.split_once(':').unwrap();
    let redis_service = named("Service", host).expect("the URL names the Redis Service");
    assert!(redis_service["spec"]["ports"].as_sequence().unwrap().iter().any(|p| p["port"]
        .as_u64()
        .unwrap()
        .to_string()
        == port));
    let redis = named("Deployment", host).expect("Redis next to the replicas");
    assert_eq!(redis["spec"]["template"]["metadata"]["labels"], redis_service["spec"]["selector"]);
    let args = strings(&redis["spec"]["template"]["spec"]["containers"][0]["args"]);
    assert!(args.windows(2).any(|pair| pair == ["--maxmemory-policy", "allkeys-lru"]), "Redis evicts as a cache");

    // The jobs' Redis: named by NIMBER_JOBS_REDIS from the same Secret, never evicting, persisting
    // on a volume of its own.
    let jobs = pod["containers"][0]["env"].as_sequence().unwrap().iter().find(|v| v["name"] == "NIMBER_JOBS_REDIS");
    let key = jobs.expect("NIMBER_JOBS_REDIS")["valueFrom"]["secretKeyRef"]["key"].as_str().unwrap();
    let jobs_url = secret["stringData"][key].as_str().expect("the Secret holds the jobs' URL");
    let jobs_host = jobs_url.strip_prefix("redis://").unwrap().split(':').next().unwrap();
    assert_ne!(jobs_host, host, "the jobs have a Redis of their own");
    let jobs_service = named("Service", jobs_host).expect("the URL names the jobs' Redis Service");
    let jobs_redis = named("StatefulSet", jobs_host).expect("the jobs' Redis next to the replicas");
    assert_eq!(jobs_redis["spec"]["template"]["metadata"]["labels"], jobs_service["spec"]["selector"]);
    let container = &jobs_redis["spec"]["template"]["spec"]["containers"][0];
    let args = strings(&container["args"]);
    assert!(args.windows(2).any(|pair| pair == ["--maxmemory-policy", "noeviction"]), "the jobs' Redis never evicts");
    assert!(args.windows(2).any(|pair| pair == ["--appendonly", "yes"]), "the jobs' Redis persists");
    let data = args.windows(2).find(|pair| pair[0] == "--dir").expect("--dir")[1].clone();
    let mount = &container["volumeMounts"][0];
    assert_eq!(mount["mountPath"].as_str(), Some(data.as_str()), "the append-only file is on the volume");
    assert_eq!(jobs_redis["spec"]["volumeClaimTemplates"][0]["metadata"]["name"], mount["name"]);

    // The fleet's secret: a file from the same Secret, which every replica reads.
    let env = pod["containers"][0]["env"].as_sequence().unwrap();
    let secret_file = env.iter().find(|v| v["name"] == "NIMBER_SHARED_CACHE_SECRET_FILE").expect("a fleet secret");
    let secret_file = std::path::Path::new(secret_file["value"].as_str().unwrap());
    let mount = pod["containers"][0]["volumeMounts"]
        .as_sequence()
        .unwrap()
        .iter()
        .find(|mount| secret_file.parent() == Some(std::path::Path::new(mount["mountPath"].as_str().unwrap())));
    let volume_name = &mount.expect("the secret's directory is mounted")["name"];
    let volume = pod["volumes"].as_sequence().unwrap().iter().find(|volume| volume["name"] == *volume_name).unwrap();
    assert_eq!(volume["secret"]["secretName"], secret["metadata"]["name"]);
    let item = &volume["secret"]["items"][0];
    assert_eq!(item["path"].as_str(), secret_file.file_name().and_then(|name| name.to_str()));
    let value = secret["stringData"][item["key"].as_str().unwrap()].as_str().expect("the Secret holds the secret");
    assert!(value.len() >= 16, "a secret the server accepts (at least 16 bytes)");
}

#[test]
fn the_compose_file_runs_two_replicas_sharing_redis() {
    let mut compose: Value = serde_yaml::from_str(&repo_file("deploy/compose.yaml")).unwrap();
    compose.apply_merge().unwrap();
    let (_, serve_env) = help_names("serve");
    let services = compose["services"].as_mapping().unwrap();
    let replicas: Vec<&Value> = services.values().filter(|service| !service["environment"].is_null()).collect();
    assert_eq!(replicas.len(), 2, "two replicas");
    let command = |name: &str| strings(&services[name]["command"]);
    assert!(command("redis").windows(2).any(|pair| pair == ["--maxmemory-policy", "allkeys-lru"]), "a cache");
    let jobs = command("jobs-redis");
    assert!(jobs.windows(2).any(|pair| pair == ["--maxmemory-policy", "noeviction"]), "job records never evicted");
    assert!(jobs.windows(2).any(|pair| pair == ["--appendonly", "yes"]), "job records persist");
    for replica in replicas {
        for (name, _) in replica["environment"].as_mapping().unwrap() {
            let name = name.as_str().unwrap();
            assert!(serve_env.contains(name), "{name} is read by no command");
        }
        assert_eq!(replica["environment"]["NIMBER_SHARED_CACHE"], "redis://redis:6379/0");
        assert_eq!(replica["environment"]["NIMBER_JOBS_REDIS"], "redis://jobs-redis:6379/0");
        assert_eq!(replica["build"]["dockerfile"], "deploy/Dockerfile");
        // The fleet's secret, from a compose secret (a file beside this one).
        let path = replica["environment"]["NIMBER_SHARED_CACHE_SECRET_FILE"].as_str().expect("a fleet secret");
        let name = path.strip_prefix("/run/secrets/").expect("a compose secret");
        let file = compose["secrets"][name]["file"].as_str().expect("the secret's file");
        let secret = repo_file(&format!("deploy/{file}"));
        assert!(secret.trim_end().len() >= 16, "a secret the server accepts (at least 16 bytes)");
    }
}
