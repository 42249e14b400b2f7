//! Parse errors: a message with the file, 1-based line and column, and the offending line.
//!
//! `Display` prints `file:line:col: message`, then the source line, then a caret under the
//! column. Columns count characters (not bytes) from the start of the line; control characters
//! other than tab are shown as `?` so the caret stays aligned and the output stays printable.

use std::fmt;

use super::lexer::Pos;

/// A syntax error (or an entity reference that cannot be resolved) in CLIF text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    pub file: String,
    /// 1-based line number.
    pub line: u32,
    /// 1-based column, in characters.
    pub col: u32,
    pub message: String,
    /// The text of the line the error is on (without its line terminator).
    pub source_line: String,
}

impl ParseError {
    /// An error at lexer position `pos` of `text`.
    pub(crate) fn at(file: &str, text: &str, pos: Pos, message: impl Into<String>) -> Self {
        let start = (pos.line_start as usize).min(text.len());
        let offset = (pos.offset as usize).clamp(start, text.len());
        let line_text = line_at(text, start);
        ParseError {
            file: file.to_string(),
            line: pos.line,
            col: column(text, start, offset),
            message: message.into(),
            source_line: line_text.to_string(),
        }
    }

    /// An error for bytes that are not UTF-8: `valid_up_to` is the offset of the first bad byte.
    pub(crate) fn invalid_utf8(file: &str, bytes: &[u8], valid_up_to: usize) -> Self {
        let prefix = &bytes[..valid_up_to];
        let line_start = prefix
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        let line = prefix.iter().filter(|&&b| b == b'\n').count() + 1;
        // The prefix is valid UTF-8 by definition of `valid_up_to`.
        let col = String::from_utf8_lossy(&prefix[line_start..])
            .chars()
            .count()
            + 1;
        let line_end = bytes[line_start..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(bytes.len(), |i| line_start + i);
        let line_bytes = &bytes[line_start..line_end];
        let line_bytes = line_bytes.strip_suffix(b"\r").unwrap_or(line_bytes);
        ParseError {
            file: file.to_string(),
            line: u32::try_from(line).unwrap_or(u32::MAX),
            col: u32::try_from(col).unwrap_or(u32::MAX),
            message: format!(
                "invalid UTF-8: byte 0x{:02x} is not valid here",
                bytes[valid_up_to]
            ),
            source_line: String::from_utf8_lossy(line_bytes).into_owned(),
        }
    }
}

/// The line of `text` starting at byte `start`, without `\n` or `\r\n`.
fn line_at(text: &str, start: usize) -> &str {
    let rest = text.get(start..).unwrap_or("");
    let line = rest.split('\n').next().unwrap_or("");
    line.strip_suffix('\r').unwrap_or(line)
}

/// 1-based character column of byte `offset` in the line starting at byte `start`.
pub(crate) fn column(text: &str, start: usize, offset: usize) -> u32 {
    let chars = match text.get(start..offset) {
        Some(s) if s.is_ascii() => s.len(),
        Some(s) => s.chars().count(),
        None => offset.saturating_sub(start),
    };
    u32::try_from(chars + 1).unwrap_or(u32::MAX)
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        writeln!(
            f,
            "{}:{}:{}: {}",
            self.file, self.line, self.col, self.message
        )?;
        let shown: String = self
            .source_line
            .chars()
            .map(|c| if c.is_control() && c != '\t' { '?' } else { c })
            .collect();
        writeln!(f, "{shown}")?;
        let caret: String = shown
            .chars()
            .chain(std::iter::repeat(' '))
            .take(self.col.saturating_sub(1) as usize)
            .map(|c| if c == '\t' { '\t' } else { ' ' })
            .collect();
        write!(f, "{caret}^")
    }
}

impl std::error::Error for ParseError {}
