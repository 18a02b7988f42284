//! JSON Schema's `pattern` dialect, ECMA-262 (with the `u` flag, as JSON Schema 2020-12 asks),
//! translated into the syntax of the `regex` crate.
//!
//! The two dialects read some of the same text differently: in ECMA-262 `\d` is `[0-9]`, `\w` is
//! `[A-Za-z0-9_]` and `\b` their boundary, `\s` is a fixed list of white space, and `.` stops at
//! four line terminators; in the `regex` crate the first three are Unicode classes and `.` stops
//! at `\n` only. Inside a class, `&&`, `--` and `~~` are set operations for the `regex` crate and
//! characters for ECMA-262, and `[` opens a nested class. Every one of these is rewritten here
//! into the `regex` spelling of the ECMA-262 meaning.
//!
//! What the `regex` crate cannot express (look-around, back-references) is an error naming the
//! construct, never a different reading. The `regex` crate is kept over an ECMA-262 backtracking
//! engine on purpose: patterns come from schema authors, but the text they are matched against
//! comes from a model, and the `regex` crate matches in time linear in that text.

use std::fmt::Write as _;

/// ECMA-262's `\s`: WhiteSpace and LineTerminator, as the class body the `regex` crate reads.
const SPACE: &str = r"\t\n\x0B\x0C\r \x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}";
/// ECMA-262's `\d`.
const DIGIT: &str = "0-9";
/// ECMA-262's `\w` (without the `i` flag, which JSON Schema patterns do not have).
const WORD: &str = "0-9A-Za-z_";
/// What ECMA-262's `.` matches (without the `s` flag): anything but a line terminator.
const DOT: &str = r"[^\n\r\x{2028}\x{2029}]";

/// The `regex` crate spelling of the ECMA-262 pattern `source`, or why there is none.
pub(crate) fn translate(source: &str) -> Result<String, String> {
    let chars: Vec<char> = source.chars().collect();
    let mut out = String::with_capacity(source.len() + 8);
    let mut i = 0;
    // Inside a character class; and whether the last thing written there was a bare `-`.
    let mut in_class = false;
    let mut after_dash = false;
    while i < chars.len() {
        let c = chars[i];
        i += 1;
        if in_class {
            let dash = c == '-';
            match c {
                ']' => {
                    in_class = false;
                    out.push(']');
                }
                '\\' => i = escape(&chars, i, true, &mut out)?,
                '[' | '&' | '~' => {
                    out.push('\\');
                    out.push(c);
                }
                // A second `-` in a row would be the `regex` crate's set difference.
                '-' if after_dash => out.push_str(r"\-"),
                other => out.push(other),
            }
            after_dash = dash;
            continue;
        }
        match c {
            '\\' => i = escape(&chars, i, false, &mut out)?,
            '.' => out.push_str(DOT),
            '[' => {
                let negated = chars.get(i) == Some(&'^');
                let body = if negated { i + 1 } else { i };
                if chars.get(body) == Some(&']') {
                    // `[]` matches nothing and `[^]` anything, in ECMA-262.
                    out.push_str(if negated {
                        r"(?s:.)"
                    } else {
                        r"[^\x{0}-\x{10FFFF}]"
                    });
                    i = body + 1;
                    continue;
                }
                out.push('[');
                if negated {
                    out.push('^');
                }
                i = body;
                in_class = true;
                after_dash = false;
            }
            '(' => {
                if chars.get(i) == Some(&'?') {
                    let rest: String = chars[i + 1..].iter().take(3).collect();
                    if rest.starts_with(':') {
                        out.push_str("(?:");
                        i += 2;
                    } else if rest.starts_with('=')
                        || rest.starts_with('!')
                        || rest.starts_with("<=")
                        || rest.starts_with("<!")
                    {
                        return Err(
                            "look-around (`(?=`, `(?!`, `(?<=`, `(?<!`) is not supported: \
                             patterns are matched in linear time"
                                .to_owned(),
                        );
                    } else if rest.starts_with('<') {
                        out.push_str("(?<");
                        i += 2;
                    } else {
                        return Err(format!(
                            "`(?{}` starts no group ECMA-262 defines (inline flags are not part of \
                             JSON Schema patterns)",
                            rest.chars().next().map(String::from).unwrap_or_default()
                        ));
                    }
                } else {
                    out.push('(');
                }
            }
            '{' => match quantifier(&chars, i) {
                Some(end) => {
                    out.extend(&chars[i - 1..end]);
                    i = end;
                }
                // Not a quantifier: the character itself (as ECMA-262's web reading has it).
                None => out.push_str(r"\{"),
            },
            '}' => out.push_str(r"\}"),
            ']' => out.push_str(r"\]"),
            other => out.push(other),
        }
    }
    if in_class {
        return Err("a character class `[` is not closed".to_owned());
    }
    Ok(out)
}

/// The end (exclusive) of a `{n}`, `{n,}` or `{n,m}` quantifier whose `{` is before `start`.
fn quantifier(chars: &[char], start: usize) -> Option<usize> {
    let mut i = start;
    let digits = |i: &mut usize| {
        let from = *i;
        while chars.get(*i).is_some_and(char::is_ascii_digit) {
            *i += 1;
        }
        *i > from
    };
    if !digits(&mut i) {
        return None;
    }
    if chars.get(i) == Some(&',') {
        i += 1;
        digits(&mut i);
    }
    (chars.get(i) == Some(&'}')).then_some(i + 1)
}

/// Translates the escape whose backslash is before `i`; returns where the pattern goes on.
fn escape(chars: &[char], i: usize, in_class: bool, out: &mut String) -> Result<usize, String> {
    let Some(&c) = chars.get(i) else {
        return Err("the pattern ends in a lone `\\`".to_owned());
    };
    let class = |out: &mut String, body: &str, negated: bool| {
        match (in_class, negated) {
            (true, false) => out.push_str(body),
            // A nested class: the `regex` crate reads `[a[^0-9]]` as a union.
            (_, true) => {
                let _ = write!(out, "[^{body}]");
            }
            (false, false) => {
                let _ = write!(out, "[{body}]");
            }
        }
    };
    let next = i + 1;
    match c {
        'd' | 'D' => class(out, DIGIT, c == 'D'),
        'w' | 'W' => class(out, WORD, c == 'W'),
        's' | 'S' => class(out, SPACE, c == 'S'),
        'b' if in_class => out.push_str(r"\x08"),
        'b' => out.push_str(r"(?-u:\b)"),
        'B' if in_class => return Err("`\\B` inside a character class".to_owned()),
        'B' => out.push_str(r"(?-u:\B)"),
        't' | 'n' | 'r' | 'f' | 'v' => {
            out.push('\\');
            out.push(c);
        }
        '0' if !chars.get(next).is_some_and(char::is_ascii_digit) => out.push_str(r"\x00"),
        '0'..='9' => {
            return Err(format!(
                "`\\{c}`: back-references (and octal escapes) are not supported"
            ));
        }
        'k' => return Err("`\\k`: named back-references are not supported".to_owned()),
        'c' => match chars.get(next) {
            Some(&letter) if letter.is_ascii_alphabetic() => {
                let _ = write!(out, r"\x{{{:X}}}", u32::from(letter) % 32);
                return Ok(next + 1);
            }
            _ => return Err("`\\c` must be followed by a letter".to_owned()),
        },
        'x' => {
            let hex: String = chars.iter().skip(next).take(2).collect();
            if hex.len() != 2 || !hex.chars().all(|h| h.is_ascii_hexdigit()) {
                return Err("`\\x` must be followed by two hexadecimal digits".to_owned());
            }
            let _ = write!(out, r"\x{{{hex}}}");
            return Ok(next + 2);
        }
        'u' => {
            let (code, end) = unicode_escape(chars, next)?;
            let _ = write!(out, r"\x{{{code:X}}}");
            return Ok(end);
        }
        'p' | 'P' => {
            if chars.get(next) != Some(&'{') {
                return Err(format!("`\\{c}` must be followed by `{{property}}`"));
            }
            let Some(close) = chars[next..].iter().position(|&x| x == '}') else {
                return Err(format!("`\\{c}{{` is not closed"));
            };
            out.push('\\');
            out.extend(&chars[i..next + close + 1]);
            return Ok(next + close + 1);
        }
        '/' => out.push('/'),
        '-' if in_class => out.push_str(r"\-"),
        '^' | '$' | '\\' | '.' | '*' | '+' | '?' | '(' | ')' | '[' | ']' | '{' | '}' | '|' => {
            out.push('\\');
            out.push(c);
        }
        other => {
            return Err(format!(
                "`\\{other}` is not an escape ECMA-262 defines (with the `u` flag JSON Schema uses)"
            ));
        }
    }
    Ok(next)
}

/// The code point of `\uXXXX` (a surrogate pair of two such escapes included) or `\u{X...}`
/// whose digits start at `i`, and where the pattern goes on.
fn unicode_escape(chars: &[char], i: usize) -> Result<(u32, usize), String> {
    let hex = |from: usize, len: usize| -> Option<u32> {
        let digits: String = chars.iter().skip(from).take(len).collect();
        (digits.len() == len && digits.chars().all(|h| h.is_ascii_hexdigit()))
            .then(|| u32::from_str_radix(&digits, 16).ok())
            .flatten()
    };
    if chars.get(i) == Some(&'{') {
        let close = chars[i..]
            .iter()
            .position(|&x| x == '}')
            .ok_or("`\\u{` is not closed")?;
        let code = hex(i + 1, close - 1)
            .filter(|c| char::from_u32(*c).is_some())
            .ok_or("`\\u{...}` must hold the hexadecimal digits of a Unicode scalar value")?;
        return Ok((code, i + close + 1));
    }
    let high = hex(i, 4).ok_or("`\\u` must be followed by four hexadecimal digits")?;
    if (0xD800..0xDC00).contains(&high)
        && chars.get(i + 4) == Some(&'\\')
        && chars.get(i + 5) == Some(&'u')
        && let Some(low) = hex(i + 6, 4).filter(|low| (0xDC00..0xE000).contains(low))
    {
        return Ok((0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00), i + 10));
    }
    if char::from_u32(high).is_none() {
        return Err(format!("`\\u{high:04X}` is a lone surrogate"));
    }
    Ok((high, i + 4))
}
