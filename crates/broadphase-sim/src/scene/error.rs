//! Scene errors: one line naming the file, the line and the field.

use std::fmt;

/// A scene file or override that cannot be used: which field, where, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct SceneError {
    /// The file (or `--flag` source) the error comes from.
    pub source: Option<String>,
    /// The 1-based line in that file, when known.
    pub line: Option<usize>,
    /// The field at fault, when known.
    pub field: Option<String>,
    /// What is wrong, on one line.
    pub message: String,
}

impl SceneError {
    /// An error about `field`.
    pub fn field(field: &str, message: impl Into<String>) -> Self {
        Self {
            source: None,
            line: None,
            field: Some(field.to_string()),
            message: message.into(),
        }
    }

    pub(super) fn located(mut self, source: &str, text: Option<&str>) -> Self {
        self.source = Some(source.to_string());
        if self.line.is_none() {
            if let (Some(text), Some(field)) = (text, &self.field) {
                self.line = line_of_key(text, field);
            }
        }
        self
    }
}

impl fmt::Display for SceneError {
    /// One line: control characters from the file (a `\r` inside a quoted value) are
    /// written escaped.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(source) = &self.source {
            write!(f, "{}", OneLine(source))?;
            if let Some(line) = self.line {
                write!(f, ":{line}")?;
            }
            write!(f, ": ")?;
        }
        if let Some(field) = &self.field {
            write!(f, "field `{}`: ", OneLine(field))?;
        }
        write!(f, "{}", OneLine(&self.message))
    }
}

/// Text with its control characters escaped (`\r`, `\u{1b}`), so it prints on one line.
struct OneLine<'a>(&'a str);

impl fmt::Display for OneLine<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for c in self.0.chars() {
            if c.is_control() {
                write!(f, "{}", c.escape_default())?;
            } else {
                write!(f, "{c}")?;
            }
        }
        Ok(())
    }
}

impl std::error::Error for SceneError {}

/// The 1-based line where `key = …` is written, if it is; `phases[i].key` is looked up
/// after the `i`-th `[[phases]]` header.
pub(super) fn line_of_key(text: &str, key: &str) -> Option<usize> {
    let (skip_headers, key) = match key
        .strip_prefix("phases[")
        .and_then(|rest| rest.split_once("]."))
    {
        Some((index, key)) => (index.parse::<usize>().ok()? + 1, key),
        None => (0, key),
    };
    let mut headers = 0;
    text.lines()
        .position(|line| {
            let line = line.trim_start();
            if line.starts_with("[[phases]]") {
                headers += 1;
                return false;
            }
            headers == skip_headers
                && line
                    .strip_prefix(key)
                    .is_some_and(|rest| rest.trim_start().starts_with('='))
        })
        .map(|i| i + 1)
}

fn line_of_offset(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// Turns a toml error into a one-line error with the line number and, when the error is
/// about one `key = value` line, the key.
pub(super) fn toml_error(e: &toml::de::Error, source: &str, text: &str) -> SceneError {
    let message = e.message().trim().replace('\n', " ");
    let line = e.span().map(|span| line_of_offset(text, span.start));
    let unknown = message
        .split('`')
        .nth(1)
        .filter(|_| message.starts_with("unknown field"))
        .map(str::to_string);
    let written = line
        .and_then(|l| text.lines().nth(l - 1))
        .and_then(|l| l.split_once('='))
        .map(|(key, _)| key.trim().to_string())
        .filter(|key| {
            !key.is_empty()
                && key
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        });
    SceneError {
        source: Some(source.to_string()),
        line,
        field: unknown.or(written),
        message,
    }
}
