//! The timing harness every toolsmith benchmark shares (included with `#[path]`): cases timed in
//! interleaved rounds (one batch of each case per round, batches sized to about 20 ms), so a slow
//! spell of a shared machine hits every case alike; each ratio is the median of the per-round
//! ratios to the first case, the peer the others are compared against.

#![allow(dead_code)]

use std::hint::black_box;
use std::time::{Duration, Instant};

const WARM_UP: Duration = Duration::from_millis(100);
const BATCH: Duration = Duration::from_millis(20);
const ROUNDS: usize = 41;

/// A case to time: its name, the target ratio to print beside it, and the call.
pub struct Case<'a> {
    name: String,
    target: Option<f64>,
    call: Box<dyn FnMut() + 'a>,
}

impl<'a> Case<'a> {
    pub fn new<R>(name: impl Into<String>, mut f: impl FnMut() -> R + 'a) -> Self {
        Case {
            name: name.into(),
            target: None,
            call: Box::new(move || {
                black_box(f());
            }),
        }
    }

    pub fn target(mut self, ratio: f64) -> Self {
        self.target = Some(ratio);
        self
    }

    /// Calls per batch, from a warm-up.
    fn calibrate(&mut self) -> u64 {
        let started = Instant::now();
        let mut calls: u64 = 0;
        while started.elapsed() < WARM_UP {
            (self.call)();
            calls += 1;
        }
        let per_call = WARM_UP.as_secs_f64() / calls.max(1) as f64;
        ((BATCH.as_secs_f64() / per_call) as u64).max(1)
    }

    /// Nanoseconds per call over one batch.
    fn batch(&mut self, iterations: u64) -> f64 {
        let started = Instant::now();
        for _ in 0..iterations {
            (self.call)();
        }
        started.elapsed().as_nanos() as f64 / iterations as f64
    }
}

fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples.get(samples.len() / 2).copied().unwrap_or(f64::NAN)
}

/// Times `cases` in interleaved rounds and prints a table: median ns/op, and the median of the
/// per-round ratios to the first case. Returns the median ns/op of each case, in order.
pub fn report(title: &str, cases: Vec<Case<'_>>) -> Vec<f64> {
    report_rounds(title, ROUNDS, cases)
}

/// As [`report`], in `count` rounds: fewer for cases that take a second a call.
pub fn report_rounds(title: &str, count: usize, mut cases: Vec<Case<'_>>) -> Vec<f64> {
    let iterations: Vec<u64> = cases.iter_mut().map(Case::calibrate).collect();
    let mut rounds: Vec<Vec<f64>> = Vec::with_capacity(count);
    for _ in 0..count {
        let round = cases
            .iter_mut()
            .zip(&iterations)
            .map(|(case, &n)| case.batch(n))
            .collect();
        rounds.push(round);
    }
    println!("{title}");
    println!(
        "{:<44} {:>9} {:>8} {:>8}",
        "case", "ns/op", "ratio", "target"
    );
    let mut medians = Vec::with_capacity(cases.len());
    for (i, case) in cases.iter().enumerate() {
        let ns = median(rounds.iter().map(|r| r[i]).collect());
        medians.push(ns);
        let ratio = median(rounds.iter().map(|r| r[i] / r[0]).collect());
        let target = case.target.map_or(String::new(), |t| format!("{t:.2}x"));
        println!("{:<44} {ns:>9.0} {ratio:>7.2}x {target:>8}", case.name);
    }
    println!();
    medians
}
