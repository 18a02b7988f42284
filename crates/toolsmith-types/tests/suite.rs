//! The official JSON-Schema-Test-Suite (draft 2020-12), put in the peer environment by
//! `cargo xtask setup`: for every schema that imports leniently, which instances a strict
//! coercion accepts, by the type alone (before the validator backstop) and by the type and the
//! backstop ([`ImportedSchema::coerce_value`], what `toolsmith coerce` runs), against what the
//! suite calls valid. Prints the agreement file by file, and how many instances each way
//! accepts that the suite calls invalid (the backstop must leave none) and refuses that it
//! calls valid (where the type reads the schema more narrowly: a `type` inferred from
//! constraint keywords, undeclared keys refused by the strict policy, a float such as `1.0`
//! for an integer value of `enum` or `const`). Schemas that import only leniently are counted
//! apart from those that import strictly too.
//!
//! The suite's `optional/format` tests are left out: in draft 2020-12 `format` is an annotation
//! unless a schema's vocabulary asserts it, and those tests assume a validator that asserts it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use serde_json::Value;
use toolsmith_types::{ImportOptions, ImportedSchema, Policy, coerce};

/// One file's counts.
#[derive(Default)]
struct Tally {
    schemas: usize,
    imported: usize,
    imported_strictly: usize,
    instances: usize,
    agree_before: usize,
    agree_after: usize,
    /// Instances the suite calls invalid that were accepted, by the type alone and with the
    /// backstop.
    accepted_invalid_before: usize,
    accepted_invalid_after: usize,
    /// Instances of strictly imported schemas, and how many of them agree with the backstop.
    strict_instances: usize,
    strict_agree_after: usize,
}

impl Tally {
    fn add(&mut self, other: &Tally) {
        self.schemas += other.schemas;
        self.imported += other.imported;
        self.imported_strictly += other.imported_strictly;
        self.instances += other.instances;
        self.agree_before += other.agree_before;
        self.agree_after += other.agree_after;
        self.accepted_invalid_before += other.accepted_invalid_before;
        self.accepted_invalid_after += other.accepted_invalid_after;
        self.strict_instances += other.strict_instances;
        self.strict_agree_after += other.strict_agree_after;
    }

    fn row(&self, name: &str) -> String {
        format!(
            "{name:<40} {:>7} {:>8} {:>6} {:>9} {:>7} {:>7} {:>8} {:>8} {:>12}",
            self.schemas,
            self.imported,
            self.imported_strictly,
            self.instances,
            self.agree_before,
            self.agree_after,
            self.accepted_invalid_before,
            self.accepted_invalid_after,
            format!("{}/{}", self.strict_agree_after, self.strict_instances),
        )
    }
}

/// Every test file of the draft, `optional/` too, but not `optional/format/`.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for sub in [dir.to_path_buf(), dir.join("optional")] {
        let Ok(entries) = std::fs::read_dir(&sub) else {
            continue;
        };
        files.extend(
            entries
                .filter_map(Result::ok)
                .map(|entry| entry.path())
                .filter(|path| path.extension().is_some_and(|ext| ext == "json")),
        );
    }
    files.sort();
    files
}

#[test]
fn the_backstop_agrees_with_the_suite() {
    let Some(suite) = toolsmith_testkit::require_data("json-schema-test-suite") else {
        return;
    };
    let dir = suite.join("tests").join("draft2020-12");
    let files = files(&dir);
    assert!(
        files.len() > 40,
        "the suite is incomplete: {}",
        dir.display()
    );
    let policy = Policy::strict();
    let mut total = Tally::default();
    let mut disagreements = Vec::new();
    println!(
        "{:<40} {:>7} {:>8} {:>6} {:>9} {:>7} {:>7} {:>8} {:>8} {:>12}",
        "file",
        "schemas",
        "imported",
        "strict",
        "instances",
        "before",
        "after",
        "bad+pre",
        "bad+post",
        "strict:after"
    );
    for file in files {
        let name = file
            .strip_prefix(&dir)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let groups: Vec<Value> =
            serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        let mut tally = Tally::default();
        for group in &groups {
            tally.schemas += 1;
            let Ok(schema) =
                ImportedSchema::new(group["schema"].clone(), &ImportOptions::lenient())
            else {
                continue;
            };
            tally.imported += 1;
            let strictly = ImportedSchema::new(group["schema"].clone(), &ImportOptions::strict());
            tally.imported_strictly += usize::from(strictly.is_ok());
            for test in group["tests"].as_array().unwrap() {
                let valid = test["valid"].as_bool().unwrap();
                let data = &test["data"];
                tally.instances += 1;
                let before = coerce(schema.graph(), data, &policy).is_ok();
                let after = schema.coerce_value(data, &policy);
                tally.agree_before += usize::from(before == valid);
                tally.accepted_invalid_before += usize::from(before && !valid);
                tally.accepted_invalid_after += usize::from(after.is_ok() && !valid);
                if let Ok(strictly) = &strictly {
                    tally.strict_instances += 1;
                    let accepted = strictly.coerce_value(data, &policy).is_ok();
                    tally.strict_agree_after += usize::from(accepted == valid);
                }
                if after.is_ok() == valid {
                    tally.agree_after += 1;
                } else {
                    disagreements.push(format!(
                        "{name}: {} / {}: the suite says {}, coercion {}",
                        group["description"].as_str().unwrap_or_default(),
                        test["description"].as_str().unwrap_or_default(),
                        if valid { "valid" } else { "invalid" },
                        match &after {
                            Ok(_) => "accepts it".to_owned(),
                            Err(errors) => format!("refuses it: {errors}"),
                        }
                    ));
                }
                // The backstop only ever refuses more.
                assert!(
                    before || after.is_err(),
                    "{name}: the backstop accepted what the type refused"
                );
            }
        }
        println!("{}", tally.row(&name));
        total.add(&tally);
    }
    println!("{}", total.row("all"));
    println!();
    for line in &disagreements {
        println!("{line}");
    }
    // What the backstop is for: no instance the suite calls invalid gets through.
    assert_eq!(
        total.accepted_invalid_after, 0,
        "the backstop let invalid instances through"
    );
    assert!(total.agree_after > total.agree_before);
}
