//! JSON Pointer (RFC 6901), written once for the crate: a segment escaped (`~` as `~0`, `/` as
//! `~1`) and unescaped, a segment pushed onto a pointer, a pointer split into its segments, and a
//! segment in a URI fragment (RFC 6901 §6: JSON Pointer escaping, then percent-encoding), as an
//! emitted `$ref` names a definition and import reads the name back.
//!
//! Diagnostics and coercion (paths built, bounded and shown), the emitter, the form and the
//! linter (paths and `$ref`s), import (paths and `$ref`s) and the backstop (the keyword a
//! validator's path ends with) use it.

/// RFC 6901's escape of one character of a segment; `None` for a character that stands for
/// itself.
fn escaped(c: char) -> Option<&'static str> {
    match c {
        '~' => Some("~0"),
        '/' => Some("~1"),
        _ => None,
    }
}

/// Builds a JSON Pointer by appending `segment` (escaped per RFC 6901) to `base`.
///
/// ```
/// assert_eq!(toolsmith_types::pointer_push("/tags", "a/b~c"), "/tags/a~1b~0c");
/// ```
pub fn pointer_push(base: &str, segment: &str) -> String {
    let mut out = String::with_capacity(base.len() + segment.len() + 1);
    out.push_str(base);
    out.push('/');
    for c in segment.chars() {
        match escaped(c) {
            Some(escape) => out.push_str(escape),
            None => out.push(c),
        }
    }
    out
}

/// `segment` unescaped as RFC 6901 says: `~1` to `/`, then `~0` to `~` (in that order, so `~01`
/// is `~1`). A `~` followed by anything else is left as it is: what is unescaped here is only
/// shown, never looked up.
pub(crate) fn unescape_segment(segment: &str) -> String {
    segment.replace("~1", "/").replace("~0", "~")
}

/// The segments of `pointer`, each unescaped by [`unescape_segment`]: none for `""` (the root).
/// What stands before the first `/` (nothing, in a pointer) is not a segment.
pub(crate) fn segments(pointer: &str) -> impl Iterator<Item = String> + '_ {
    pointer.split('/').skip(1).map(unescape_segment)
}

/// A definition name as one segment of a `$ref` fragment: JSON Pointer escaping, then
/// percent-encoding of every byte a URI fragment may not hold.
pub(crate) fn encode_fragment_segment(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        match escaped(c) {
            Some(escape) => out.push_str(escape),
            None if c.is_ascii_alphanumeric() || "-._!$&'()*+,;=:@".contains(c) => out.push(c),
            None => {
                let mut buf = [0u8; 4];
                for byte in c.encode_utf8(&mut buf).bytes() {
                    out.push_str(&format!("%{byte:02X}"));
                }
            }
        }
    }
    out
}

/// Undoes [`encode_fragment_segment`]: percent-decoding, then JSON Pointer unescaping. `None`
/// when the segment is not one whole, well-formed name.
pub(crate) fn decode_fragment_segment(segment: &str) -> Option<String> {
    let bytes = segment.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            // Two hex digits, exactly: `from_str_radix` alone would also take a sign (`%+F`).
            let hex = bytes.get(i + 1..i + 3)?;
            let [high, low] = [hex[0], hex[1]].map(|digit| char::from(digit).to_digit(16));
            decoded.push(u8::try_from(high? * 16 + low?).ok()?);
            i += 3;
        } else {
            decoded.push(bytes[i]);
            i += 1;
        }
    }
    let text = String::from_utf8(decoded).ok()?;
    if text.contains('/') {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '~' {
            match chars.next()? {
                '0' => out.push('~'),
                '1' => out.push('/'),
                _ => return None,
            }
        } else {
            out.push(c);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::{
        decode_fragment_segment, encode_fragment_segment, pointer_push, segments, unescape_segment,
    };

    /// Names that need each kind of care: escapes, percent signs, reserved and non-ASCII text.
    const NAMES: &[&str] = &[
        "",
        "plain",
        "a/b",
        "~",
        "~0",
        "~1",
        "/~/",
        "100%",
        "%25",
        "a b",
        "#frag?q=1",
        "é",
        "日本",
        "\u{1F600}",
        "-._!$&'()*+,;=:@",
    ];

    #[test]
    fn pushing_escapes_tilde_then_slash() {
        assert_eq!(pointer_push("", "a/b~c"), "/a~1b~0c");
        assert_eq!(pointer_push("/tags", "~1"), "/tags/~01");
        assert_eq!(pointer_push("/x", ""), "/x/");
        assert_eq!(pointer_push("", "é"), "/é");
    }

    #[test]
    fn unescaping_reads_one_then_zero() {
        assert_eq!(unescape_segment("a~1b~0c"), "a/b~c");
        assert_eq!(unescape_segment("~01"), "~1");
        assert_eq!(unescape_segment("~10"), "/0");
        assert_eq!(unescape_segment("~0~1"), "~/");
        // A `~` that escapes nothing is left as it is.
        assert_eq!(unescape_segment("~2"), "~2");
        assert_eq!(unescape_segment("a~"), "a~");
        assert_eq!(unescape_segment("~~1"), "~/");
    }

    #[test]
    fn a_pointer_splits_into_its_unescaped_segments() {
        assert_eq!(segments("").count(), 0);
        assert_eq!(segments("/").collect::<Vec<_>>(), [""]);
        assert_eq!(
            segments("/a~1b/0//~0").collect::<Vec<_>>(),
            ["a/b", "0", "", "~"]
        );
        // What stands before the first `/` is not a segment.
        assert_eq!(segments("x/y").collect::<Vec<_>>(), ["y"]);
    }

    #[test]
    fn every_name_round_trips_through_a_pointer_and_a_fragment() {
        for name in NAMES {
            let pointer = pointer_push("", name);
            assert_eq!(segments(&pointer).collect::<Vec<_>>(), [*name], "{pointer}");
            let pushed = pointer_push(&pointer, name);
            assert_eq!(
                segments(&pushed).collect::<Vec<_>>(),
                [*name, *name],
                "{pushed}"
            );
            let fragment = encode_fragment_segment(name);
            assert!(!fragment.contains('/'), "{fragment}");
            assert_eq!(
                decode_fragment_segment(&fragment).as_deref(),
                Some(*name),
                "{fragment}"
            );
        }
    }

    #[test]
    fn a_fragment_escapes_then_percent_encodes() {
        assert_eq!(encode_fragment_segment("a/b~c"), "a~1b~0c");
        assert_eq!(encode_fragment_segment("100%"), "100%25");
        assert_eq!(encode_fragment_segment("a b"), "a%20b");
        assert_eq!(encode_fragment_segment("#?"), "%23%3F");
        assert_eq!(encode_fragment_segment("é"), "%C3%A9");
        assert_eq!(
            encode_fragment_segment("-._!$&'()*+,;=:@"),
            "-._!$&'()*+,;=:@"
        );
    }

    #[test]
    fn a_fragment_decodes_percent_then_escapes() {
        assert_eq!(decode_fragment_segment("%25").as_deref(), Some("%"));
        assert_eq!(decode_fragment_segment("100%25").as_deref(), Some("100%"));
        assert_eq!(decode_fragment_segment("%c3%a9").as_deref(), Some("é"));
        assert_eq!(decode_fragment_segment("a~1b~0c").as_deref(), Some("a/b~c"));
        // Percent-decoding comes first, so an encoded escape is an escape.
        assert_eq!(decode_fragment_segment("%7E1").as_deref(), Some("/"));
        assert_eq!(decode_fragment_segment("%7E0").as_deref(), Some("~"));
        assert_eq!(decode_fragment_segment("").as_deref(), Some(""));
    }

    #[test]
    fn a_malformed_fragment_decodes_to_nothing() {
        for malformed in [
            "%", "%2", "a%2", "%zz", "%%25", // an incomplete or non-hex percent escape
            "%FF", "%C3", // bytes that are not UTF-8
            "~", "a~", "~2", "~~", // a `~` that escapes nothing
            "a/b", "%2F", "%2f", // a `/`, sent or encoded: more than one segment
            "%C3%", "%é", "%+F", "%-1", "a%+Fb", // a sign is not a hex digit
        ] {
            assert_eq!(decode_fragment_segment(malformed), None, "{malformed}");
        }
    }
}
