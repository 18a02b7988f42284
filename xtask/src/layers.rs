//! `cargo xtask layers`: the layers of ARCHITECTURE.md held by the build, as rust-analyzer's
//! tidy tests hold theirs. Each crate of the workspace states, below, the workspace crates it
//! may depend on (`types ← macros, facade ← toolsets, mcp, agent ← cli`), and whether it may
//! pull an async runtime (only mcp, agent and the cli; the facade only as an optional feature);
//! the declared dependencies (`cargo metadata --no-deps`) are checked against that table, and a
//! `toolsmith*` crate the table does not know is a failure too, so that a new crate states its
//! place. Dev-dependencies are free: a test may use anything. Inside
//! each `toolsmith*` crate, the top-level modules must form no circle ([`crate::modules`]).

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::{Error, process};

/// A workspace crate's place: the workspace crates it may depend on, and how it may pull an
/// async runtime.
struct Layer {
    name: &'static str,
    may_use: &'static [&'static str],
    runtime: Runtime,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Runtime {
    /// Never.
    No,
    /// Only as an optional dependency (a feature its users turn on).
    Optional,
    Yes,
}

const LAYERS: &[Layer] = &[
    Layer {
        name: "toolsmith-types",
        may_use: &[],
        runtime: Runtime::No,
    },
    Layer {
        name: "toolsmith-macros",
        may_use: &[],
        runtime: Runtime::No,
    },
    Layer {
        name: "toolsmith-testkit",
        may_use: &[],
        runtime: Runtime::No,
    },
    Layer {
        name: "toolsmith",
        may_use: &["toolsmith-types", "toolsmith-macros"],
        runtime: Runtime::Optional,
    },
    Layer {
        name: "toolsmith-text",
        may_use: &["toolsmith"],
        runtime: Runtime::No,
    },
    Layer {
        name: "toolsmith-github",
        may_use: &["toolsmith"],
        runtime: Runtime::No,
    },
    Layer {
        name: "toolsmith-mcp",
        may_use: &["toolsmith"],
        runtime: Runtime::Yes,
    },
    Layer {
        name: "toolsmith-agent",
        may_use: &["toolsmith"],
        runtime: Runtime::Yes,
    },
    Layer {
        name: "toolsmith-cli",
        may_use: &[
            "toolsmith",
            "toolsmith-text",
            "toolsmith-github",
            "toolsmith-mcp",
            "toolsmith-agent",
        ],
        runtime: Runtime::Yes,
    },
    // The cross-crate tests (`tests/`): only its doctest host depends on anything.
    Layer {
        name: "toolsmith-integration",
        may_use: &["toolsmith-types", "toolsmith"],
        runtime: Runtime::No,
    },
];

/// The async runtimes a crate may not pull unless its layer says so.
const RUNTIMES: &[&str] = &["tokio", "async-std", "smol", "async-executor"];

/// One package of the workspace and what it declares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Package {
    pub name: String,
    pub dependencies: Vec<Dependency>,
}

/// A declared dependency.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dependency {
    pub name: String,
    /// A dev-dependency (free: tests may use anything).
    pub dev: bool,
    pub optional: bool,
}

/// What breaks the table in `packages`, one line each (nothing: the layers hold).
pub fn violations(packages: &[Package]) -> Vec<String> {
    let workspace: Vec<&str> = packages.iter().map(|p| p.name.as_str()).collect();
    let mut found = Vec::new();
    for package in packages {
        let layer = LAYERS.iter().find(|layer| layer.name == package.name);
        let Some(layer) = layer else {
            if package.name.starts_with("toolsmith") {
                found.push(format!(
                    "`{}` has no place in the layers: add it to xtask/src/layers.rs and \
                     ARCHITECTURE.md",
                    package.name
                ));
            }
            continue;
        };
        for dependency in package.dependencies.iter().filter(|d| !d.dev) {
            let name = dependency.name.as_str();
            if workspace.contains(&name) && !layer.may_use.contains(&name) {
                found.push(format!(
                    "`{}` depends on `{name}`, which its layer may not use (it may use: {})",
                    package.name,
                    if layer.may_use.is_empty() {
                        "no workspace crate".to_owned()
                    } else {
                        layer.may_use.join(", ")
                    }
                ));
            }
            if RUNTIMES.contains(&name) {
                let allowed = match layer.runtime {
                    Runtime::No => false,
                    Runtime::Optional => dependency.optional,
                    Runtime::Yes => true,
                };
                if !allowed {
                    found.push(format!(
                        "`{}` pulls the async runtime `{name}`{}, which its layer may not",
                        package.name,
                        if layer.runtime == Runtime::Optional {
                            " unconditionally (only as an optional feature)"
                        } else {
                            ""
                        }
                    ));
                }
            }
        }
    }
    found
}

/// The workspace's packages from `cargo metadata`'s JSON.
fn packages(metadata: &Value) -> Vec<Package> {
    let none = Vec::new();
    metadata["packages"]
        .as_array()
        .unwrap_or(&none)
        .iter()
        .map(|package| Package {
            name: package["name"].as_str().unwrap_or_default().to_owned(),
            dependencies: package["dependencies"]
                .as_array()
                .unwrap_or(&none)
                .iter()
                .map(|dependency| Dependency {
                    name: dependency["name"].as_str().unwrap_or_default().to_owned(),
                    dev: dependency["kind"] == "dev",
                    optional: dependency["optional"] == true,
                })
                .collect(),
        })
        .collect()
}

/// The `src` folder of each `toolsmith*` crate, by name, from `cargo metadata`'s JSON.
fn crate_sources(metadata: &Value) -> Vec<(String, std::path::PathBuf)> {
    let none = Vec::new();
    metadata["packages"]
        .as_array()
        .unwrap_or(&none)
        .iter()
        .filter_map(|package| {
            let name = package["name"].as_str()?;
            let manifest = Path::new(package["manifest_path"].as_str()?);
            let src = manifest.parent()?.join("src");
            (name.starts_with("toolsmith") && src.is_dir()).then(|| (name.to_owned(), src))
        })
        .collect()
}

/// Checks the workspace under `root`: each crate's dependencies against the table, and the
/// modules inside each `toolsmith*` crate for circles ([`crate::modules`]).
pub fn run(root: &Path) -> Result<(), Error> {
    let text = process::output(
        Command::new(process::cargo()?)
            .args(["metadata", "--no-deps", "--format-version", "1"])
            .current_dir(root),
    )?;
    let metadata: Value = serde_json::from_str(&text)
        .map_err(|error| Error::Failed(format!("cargo metadata printed no JSON ({error})")))?;
    let packages = packages(&metadata);
    let mut found = violations(&packages);
    let sources = crate_sources(&metadata);
    for (name, src) in &sources {
        let graph = crate::modules::graph(src, root)?;
        found.extend(
            crate::modules::circles(&graph)
                .into_iter()
                .map(|circle| format!("`{name}` has {circle}")),
        );
    }
    if found.is_empty() {
        println!(
            "layers: {} workspace crates checked, every dependency in its place; no circle among \
             the modules of {} crates",
            packages.len(),
            sources.len()
        );
        return Ok(());
    }
    for line in &found {
        println!("layers: {line}");
    }
    Err(Error::Failed(format!(
        "{} findings break the layers of ARCHITECTURE.md",
        found.len()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn package(name: &str, dependencies: &[(&str, bool, bool)]) -> Package {
        Package {
            name: name.to_owned(),
            dependencies: dependencies
                .iter()
                .map(|(name, dev, optional)| Dependency {
                    name: (*name).to_owned(),
                    dev: *dev,
                    optional: *optional,
                })
                .collect(),
        }
    }

    /// The workspace as it stands (declared dependencies that matter here).
    fn workspace() -> Vec<Package> {
        vec![
            package("toolsmith-types", &[("toolsmith-testkit", true, false)]),
            package("toolsmith-macros", &[]),
            package("toolsmith-testkit", &[]),
            package(
                "toolsmith",
                &[
                    ("toolsmith-types", false, false),
                    ("toolsmith-macros", false, false),
                    ("tokio", false, true),
                    ("tokio", true, false),
                ],
            ),
            package(
                "toolsmith-mcp",
                &[("toolsmith", false, false), ("tokio", false, false)],
            ),
            package(
                "toolsmith-agent",
                &[("toolsmith", false, false), ("tokio", false, false)],
            ),
            package(
                "toolsmith-cli",
                &[
                    ("toolsmith-mcp", false, false),
                    ("toolsmith-agent", false, false),
                ],
            ),
            package("soak", &[("tokio", false, false)]),
        ]
    }

    #[test]
    fn the_workspace_as_it_stands_holds() {
        assert_eq!(violations(&workspace()), Vec::<String>::new());
    }

    #[test]
    fn a_forbidden_dependency_is_named() {
        let mut packages = workspace();
        packages[0].dependencies.push(Dependency {
            name: "toolsmith".into(),
            dev: false,
            optional: false,
        });
        packages.push(package("toolsmith", &[]));
        let found = violations(&packages);
        assert!(
            found.iter().any(|line| line.starts_with(
                "`toolsmith-types` depends on `toolsmith`, which its layer may not use"
            )),
            "{found:?}"
        );
    }

    #[test]
    fn the_facade_pulls_a_runtime_only_as_a_feature_and_a_toolset_never() {
        let mut packages = workspace();
        packages[3].dependencies[2].optional = false;
        packages.push(package("toolsmith-text", &[("tokio", false, false)]));
        let found = violations(&packages);
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found[0].contains("`toolsmith` pulls the async runtime `tokio` unconditionally"));
        assert!(found[1].contains("`toolsmith-text` pulls the async runtime `tokio`"));
    }

    #[test]
    fn a_crate_without_a_place_is_named() {
        let mut packages = workspace();
        packages.push(package("toolsmith-new", &[]));
        let found = violations(&packages);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].contains("`toolsmith-new` has no place in the layers"));
    }

    #[test]
    fn packages_are_read_from_cargo_metadata() {
        let metadata = serde_json::json!({"packages": [{"name": "toolsmith", "dependencies": [
            {"name": "tokio", "kind": null, "optional": true},
            {"name": "proptest", "kind": "dev", "optional": false}
        ]}]});
        assert_eq!(
            packages(&metadata),
            [package(
                "toolsmith",
                &[("tokio", false, true), ("proptest", true, false)]
            )]
        );
    }
}
