//! Quoting a client's input in a message: whole when short, its start and its length when long, so
//! that an answer repeating a 100 kB input is still a short header (gRPC clients refuse a header
//! block over 8 to 16 KiB). Every error that repeats input uses it, from the games' setup errors to
//! the calls' statuses.

/// The most bytes of a client's input that a message repeats (see [`quoted`]).
pub const MAX_QUOTED_BYTES: usize = 64;

/// The longest start of `text` of at most `max` bytes (ending on a character boundary), and whether
/// that is not all of it.
pub fn prefix(text: &str, max: usize) -> (&str, bool) {
    if text.len() <= max {
        return (text, false);
    }
    let end = (0..=max).rev().find(|&end| text.is_char_boundary(end)).unwrap_or(0);
    (&text[..end], true)
}

/// A client's input quoted for a message, escaped as Rust quotes a string (a NUL is `\0`): whole
/// when it has at most [`MAX_QUOTED_BYTES`] bytes, else its start, an ellipsis and its length.
pub fn quoted(input: &str) -> String {
    match prefix(input, MAX_QUOTED_BYTES) {
        (whole, false) => format!("{whole:?}"),
        (start, true) => format!("{start:?}… ({} bytes)", input.len()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_input_is_whole_when_short_and_its_start_when_long() {
        assert_eq!(quoted("operations/7"), "\"operations/7\"");
        assert_eq!(quoted("a\0b"), "\"a\\0b\"");
        let exactly = "a".repeat(MAX_QUOTED_BYTES);
        assert_eq!(quoted(&exactly), format!("{exactly:?}"));
        // 100 000 bytes of two-byte characters: cut on a character boundary.
        let long = "é".repeat(50_000);
        let quoted = quoted(&long);
        assert_eq!(quoted, format!("{:?}… (100000 bytes)", "é".repeat(MAX_QUOTED_BYTES / 2)));
    }
}
