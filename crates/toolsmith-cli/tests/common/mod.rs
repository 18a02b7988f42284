//! What several of the CLI's test files share: the README, and its command lines as words.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

/// The repository's root (this crate sits two levels below it).
pub fn repo_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("crates/toolsmith-cli sits two levels below the repository root")
}

/// The MCP Python SDK's test server (its tools ask the client while they run) run by
/// `python`, as `--mcp` takes it.
pub fn fastmcp_server(python: &Path) -> String {
    let script = repo_root().join("crates/toolsmith-mcp/tests/fastmcp_server.py");
    format!("{} {}", python.display(), script.display())
}

/// The README's text.
pub fn readme() -> String {
    std::fs::read_to_string(repo_root().join("README.md")).unwrap()
}

/// The first fenced block of kind `kind` (`console`, `sh`, `json`) after the marker comment
/// `<!-- MARKER`, without its fences.
pub fn block_after<'a>(readme: &'a str, marker: &str, kind: &str) -> &'a str {
    let start = readme
        .find(&format!("<!-- {marker}"))
        .unwrap_or_else(|| panic!("the README's marker {marker}"));
    let fence = format!("```{kind}\n");
    let block = &readme[start..];
    let block = &block[block.find(&fence).expect("a block after the marker") + fence.len()..];
    &block[..block.find("\n```").expect("the block's end")]
}

/// A command line as a shell splits it: words, with single quotes taken literally.
pub fn words(command: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut quoted = false;
    for c in command.chars() {
        match c {
            '\'' => {
                quoted = !quoted;
                in_word = true;
            }
            c if c.is_whitespace() && !quoted => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            c => {
                word.push(c);
                in_word = true;
            }
        }
    }
    assert!(!quoted, "an unclosed quote in {command}");
    if in_word {
        words.push(word);
    }
    words
}

/// A command run under a real pseudo-terminal: util-linux's `script` gives it one, and the test
/// reads the screen and types as a person would.
pub struct Terminal {
    child: std::process::Child,
    keyboard: Option<std::process::ChildStdin>,
    screen: String,
    output: std::sync::mpsc::Receiver<Vec<u8>>,
    deadline: std::time::Instant,
}

impl Terminal {
    /// Starts `command` (one command line, which `script` hands to a shell: no quote in what
    /// it does not mean to quote) on a terminal of its own, with `unset` taken out of its
    /// environment; everything it does is bounded by 30 s.
    pub fn start(command: &str, unset: &[&str]) -> Terminal {
        use std::io::Read;
        use std::process::{Command, Stdio};

        let script = ["/usr/bin/script", "/bin/script"]
            .into_iter()
            .find(|path| Path::new(path).exists())
            .expect(
                "util-linux's `script` (Debian's essential bsdutils) gives the test a terminal",
            );
        let mut started = Command::new(script);
        started
            .args(["-q", "-e", "-c", command, "/dev/null"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for name in unset {
            started.env_remove(name);
        }
        let mut child = started.spawn().expect("script starts");
        let mut terminal = child.stdout.take().expect("the terminal's output");
        let (sender, output) = std::sync::mpsc::channel::<Vec<u8>>();
        std::thread::spawn(move || {
            let mut buffer = [0u8; 4096];
            while let Ok(read) = terminal.read(&mut buffer) {
                if read == 0 || sender.send(buffer[..read].to_vec()).is_err() {
                    break;
                }
            }
        });
        Terminal {
            keyboard: child.stdin.take(),
            child,
            screen: String::new(),
            output,
            deadline: std::time::Instant::now() + std::time::Duration::from_secs(30),
        }
    }

    /// Waits for `text` to appear on the screen (everything shown so far, returned).
    pub fn wait_for(&mut self, text: &str) -> &str {
        while !self.screen.contains(text) {
            let left = self
                .deadline
                .saturating_duration_since(std::time::Instant::now());
            match self.output.recv_timeout(left) {
                Ok(bytes) => self.screen.push_str(&String::from_utf8_lossy(&bytes)),
                Err(_) => {
                    let _ = self.child.kill();
                    panic!("`{text}` never appeared on the terminal: {}", self.screen);
                }
            }
        }
        &self.screen
    }

    /// Types `keys` (`\r` is Enter, `\x03` Ctrl-C).
    pub fn type_keys(&mut self, keys: &[u8]) {
        use std::io::Write;
        let keyboard = self.keyboard.as_mut().expect("the keyboard");
        keyboard.write_all(keys).expect("typed");
        keyboard.flush().expect("typed");
    }

    /// Whether the command ended within `within`, the keyboard still open (so that only what
    /// was typed, not the end of input, can have ended it).
    pub fn ends_within(&mut self, within: std::time::Duration) -> bool {
        let started = std::time::Instant::now();
        while started.elapsed() < within {
            if self
                .child
                .try_wait()
                .expect("script is waited for")
                .is_some()
            {
                return true;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        false
    }

    /// Waits for the command to end: `script`'s status (the command's, with `-e`) and the
    /// screen.
    pub fn finish(mut self) -> (std::process::ExitStatus, String) {
        drop(self.keyboard.take());
        loop {
            if let Some(status) = self.child.try_wait().expect("script is waited for") {
                while let Ok(bytes) = self.output.try_recv() {
                    self.screen.push_str(&String::from_utf8_lossy(&bytes));
                }
                return (status, self.screen);
            }
            if std::time::Instant::now() > self.deadline {
                let _ = self.child.kill();
                panic!("the command did not end: {}", self.screen);
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }
}
