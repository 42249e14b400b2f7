//! Source files, spans and collected diagnostics.
//!
//! Contract: every phase reports problems by pushing a [`Diagnostic`] into a
//! [`Diagnostics`] collector and carries on; no phase stops at the first error and
//! none panics on bad input. Spans are byte ranges into one [`SourceMap`] file, and
//! every location a message names in text is rendered as `FILE:LINE:COL`, so that a
//! reader can jump to it without counting gutter lines.
//!
//! Rendering uses `codespan-reporting`; colour is used only when asked for (the CLI
//! asks only when stderr is a terminal).

use codespan_reporting::diagnostic as cs;
use codespan_reporting::files::SimpleFiles;
use codespan_reporting::term;
use codespan_reporting::term::termcolor::{ColorChoice, NoColor, StandardStream, WriteColor};

/// Index of a file in a [`SourceMap`].
pub type FileId = usize;

/// A byte range in one source file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Span {
    pub file: FileId,
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn new(file: FileId, start: usize, end: usize) -> Span {
        Span {
            file,
            start: start as u32,
            end: end as u32,
        }
    }

    /// The smallest span covering both `self` and `other` (same file assumed).
    pub fn to(self, other: Span) -> Span {
        Span {
            file: self.file,
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }
}

/// The program's source files; several files form one program.
#[derive(Default, Clone)]
pub struct SourceMap {
    files: Vec<SourceFile>,
}

#[derive(Clone)]
struct SourceFile {
    name: String,
    text: String,
    line_starts: Vec<usize>,
}

impl SourceMap {
    pub fn new() -> SourceMap {
        SourceMap::default()
    }

    /// Adds a file and returns its id.
    pub fn add(&mut self, name: impl Into<String>, text: impl Into<String>) -> FileId {
        let text = text.into();
        let line_starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        self.files.push(SourceFile {
            name: name.into(),
            text,
            line_starts,
        });
        self.files.len() - 1
    }

    pub fn len(&self) -> usize {
        self.files.len()
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    pub fn name(&self, file: FileId) -> &str {
        &self.files[file].name
    }

    pub fn text(&self, file: FileId) -> &str {
        &self.files[file].text
    }

    /// One-based line and column of a byte offset.
    pub fn line_col(&self, file: FileId, offset: u32) -> (usize, usize) {
        let f = &self.files[file];
        let offset = (offset as usize).min(f.text.len());
        let line = f.line_starts.partition_point(|&s| s <= offset) - 1;
        let line_text = &f.text[f.line_starts[line]..offset];
        (line + 1, line_text.chars().count() + 1)
    }

    /// `FILE:LINE:COL` of the start of a span.
    pub fn location(&self, span: Span) -> String {
        let (line, col) = self.line_col(span.file, span.start);
        format!("{}:{}:{}", self.name(span.file), line, col)
    }

    /// `FILE:LINE` of the start of a span (used in generated-code comments).
    pub fn file_line(&self, span: Span) -> String {
        let (line, _) = self.line_col(span.file, span.start);
        format!("{}:{}", self.name(span.file), line)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    Error,
    Warning,
}

/// What kind of problem a diagnostic reports, so embedders and tests can match on it
/// without parsing messages. Rendered as `error[name]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Code {
    /// Malformed text: bad characters or literals, unbalanced parentheses, bad forms.
    Syntax,
    /// A type, term or enum variant that is not defined.
    UnknownName,
    /// A type, term, variant, field, extractor, conversion or Rust binding defined twice.
    Duplicate,
    /// Wrong number of arguments or parameters.
    Arity,
    /// A value of one type where another is expected, with no conversion declared.
    TypeMismatch,
    /// A `(convert …)` whose term has the wrong signature.
    InvalidConversion,
    /// An `extern` that conflicts with the term's other definitions.
    InvalidExtern,
    /// A term used in a pattern that has no extractor.
    NoExtractor,
    /// A call not allowed where it is: impure or multi in a clause, partial in a total
    /// term, a term without constructor.
    InvalidCall,
    /// A variable used but never bound.
    UnboundVariable,
    /// An integer that does not fit its type.
    IntRange,
    /// Recursion not declared `rec`, or a recursive extractor macro.
    Recursion,
    /// Two rules at the same priority that can match the same input.
    Overlap,
    /// A rule that higher-priority rules always pre-empt.
    Shadowed,
    /// A rule whose own patterns contradict each other.
    NeverMatches,
    /// A clause that cannot fail (warning).
    UselessClause,
}

impl Code {
    pub fn name(self) -> &'static str {
        match self {
            Code::Syntax => "syntax",
            Code::UnknownName => "unknown-name",
            Code::Duplicate => "duplicate",
            Code::Arity => "arity",
            Code::TypeMismatch => "type-mismatch",
            Code::InvalidConversion => "invalid-conversion",
            Code::InvalidExtern => "invalid-extern",
            Code::NoExtractor => "no-extractor",
            Code::InvalidCall => "invalid-call",
            Code::UnboundVariable => "unbound-variable",
            Code::IntRange => "int-range",
            Code::Recursion => "recursion",
            Code::Overlap => "overlap",
            Code::Shadowed => "shadowed",
            Code::NeverMatches => "never-matches",
            Code::UselessClause => "useless-clause",
        }
    }
}

/// One problem found in the input.
#[derive(Clone, Debug)]
pub struct Diagnostic {
    pub severity: Severity,
    pub code: Code,
    pub message: String,
    pub primary: Option<(Span, String)>,
    pub secondary: Vec<(Span, String)>,
    pub notes: Vec<String>,
}

impl Diagnostic {
    pub fn error(code: Code, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            code,
            message: message.into(),
            primary: None,
            secondary: Vec::new(),
            notes: Vec::new(),
        }
    }

    pub fn warning(code: Code, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(code, message)
        }
    }

    pub fn at(mut self, span: Span, label: impl Into<String>) -> Diagnostic {
        self.primary = Some((span, label.into()));
        self
    }

    pub fn also(mut self, span: Span, label: impl Into<String>) -> Diagnostic {
        self.secondary.push((span, label.into()));
        self
    }

    pub fn note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }
}

/// Collected diagnostics of one compilation, with the sources they point into.
#[derive(Clone)]
pub struct Diagnostics {
    pub sources: SourceMap,
    pub list: Vec<Diagnostic>,
}

impl Diagnostics {
    pub fn new(sources: SourceMap) -> Diagnostics {
        Diagnostics {
            sources,
            list: Vec::new(),
        }
    }

    pub fn push(&mut self, diagnostic: Diagnostic) {
        self.list.push(diagnostic);
    }

    pub fn error_count(&self) -> usize {
        self.list
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .count()
    }

    pub fn has_errors(&self) -> bool {
        self.error_count() > 0
    }

    /// Renders all diagnostics as plain text (no colour), in the order found.
    pub fn render(&self) -> String {
        let mut out = NoColor::new(Vec::new());
        self.emit(&mut out);
        String::from_utf8_lossy(&out.into_inner()).into_owned()
    }

    /// Writes all diagnostics to stderr, in colour only if stderr is a terminal.
    pub fn eprint(&self) {
        use std::io::IsTerminal;
        let choice = if std::io::stderr().is_terminal() {
            ColorChoice::Auto
        } else {
            ColorChoice::Never
        };
        let stream = StandardStream::stderr(choice);
        self.emit(&mut stream.lock());
    }

    fn emit(&self, out: &mut dyn WriteColor) {
        let mut files = SimpleFiles::new();
        for id in 0..self.sources.len() {
            files.add(self.sources.name(id), self.sources.text(id));
        }
        let config = term::Config::default();
        for d in &self.list {
            let mut cd = match d.severity {
                Severity::Error => cs::Diagnostic::error(),
                Severity::Warning => cs::Diagnostic::warning(),
            }
            .with_message(&d.message)
            .with_code(d.code.name());
            let mut labels = Vec::new();
            let mut notes = Vec::new();
            if let Some((span, label)) = &d.primary {
                labels.push(
                    cs::Label::primary(span.file, span.start as usize..span.end as usize)
                        .with_message(label),
                );
            }
            for (span, label) in &d.secondary {
                labels.push(
                    cs::Label::secondary(span.file, span.start as usize..span.end as usize)
                        .with_message(label),
                );
            }
            notes.extend(d.notes.iter().cloned());
            cd = cd.with_labels(labels).with_notes(notes);
            // Writing to an in-memory buffer or stderr; a failed write has nowhere to go.
            let _ = term::emit(out, &config, &files, &cd);
        }
        let errors = self.error_count();
        let warnings = self.list.len() - errors;
        if errors + warnings > 0 {
            let _ = writeln!(out, "{} error(s), {} warning(s)", errors, warnings);
        }
    }
}
