//! Sorting and de-duplicating lines, on slices of the text (no line is copied until the output
//! is joined).

use foldhash::{HashSet, HashSetExt};

use crate::lines::contents;

/// The lines of `text` in byte order (or by their leading number), reversed after sorting when
/// asked.
pub(crate) fn sort(text: &str, numeric: bool, reverse: bool) -> Vec<&str> {
    let mut lines: Vec<&str> = if numeric {
        let mut numbered: Vec<(f64, &str)> = Vec::new();
        let mut unnumbered: Vec<&str> = Vec::new();
        for line in contents(text) {
            match leading_number(line) {
                Some(number) => numbered.push((number, line)),
                None => unnumbered.push(line),
            }
        }
        // Stable: lines with equal numbers keep their order.
        numbered.sort_by(|(a, _), (b, _)| a.total_cmp(b));
        numbered
            .into_iter()
            .map(|(_, line)| line)
            .chain(unnumbered)
            .collect()
    } else {
        let mut lines: Vec<&str> = contents(text).collect();
        // Equal lines are equal text, so an unstable sort gives the stable sort's output.
        lines.sort_unstable();
        lines
    };
    if reverse {
        lines.reverse();
    }
    lines
}

/// The number a line starts with, as `sort -n` reads it: after optional blanks, an optional sign,
/// digits with an optional fraction (`12`, `-3.5`, `+.5`, `7.`); `None` when there is none.
pub(crate) fn leading_number(line: &str) -> Option<f64> {
    let rest = line.trim_start_matches([' ', '\t']);
    let bytes = rest.as_bytes();
    let mut end = usize::from(matches!(bytes.first(), Some(b'-' | b'+')));
    let digits_from = end;
    while bytes.get(end).is_some_and(u8::is_ascii_digit) {
        end += 1;
    }
    let mut digits = end - digits_from;
    if bytes.get(end) == Some(&b'.') {
        let fraction_from = end + 1;
        let mut fraction_end = fraction_from;
        while bytes.get(fraction_end).is_some_and(u8::is_ascii_digit) {
            fraction_end += 1;
        }
        digits += fraction_end - fraction_from;
        if digits > 0 {
            end = fraction_end;
        }
    }
    if digits == 0 {
        return None;
    }
    // Adding zero turns -0 into 0, so that `-0` and `0` tie.
    rest.get(..end)?.parse::<f64>().ok().map(|n| n + 0.0)
}

/// Each distinct line once: in the order of first occurrence, or in byte order.
pub(crate) fn unique(text: &str, preserve_order: bool) -> Vec<&str> {
    let mut seen: HashSet<&str> = HashSet::new();
    let mut lines: Vec<&str> = contents(text).filter(|line| seen.insert(line)).collect();
    if !preserve_order {
        lines.sort_unstable();
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leading_numbers_are_read_as_sort_n_reads_them() {
        assert_eq!(leading_number("12 apples"), Some(12.0));
        assert_eq!(leading_number("  -3.5x"), Some(-3.5));
        assert_eq!(leading_number("+.5"), Some(0.5));
        assert_eq!(leading_number("7."), Some(7.0));
        assert_eq!(leading_number("-0"), Some(0.0));
        assert_eq!(leading_number("apples 12"), None);
        assert_eq!(leading_number("-"), None);
        assert_eq!(leading_number("."), None);
        assert_eq!(leading_number(""), None);
    }
}
