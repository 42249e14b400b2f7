//! `kestrel-rules`: the compiler for Kestrel's rule DSL, a typed term-rewriting
//! language in ISLE's S-expression syntax, compiled to Rust.
//!
//! The language knows nothing of any IR: rules match values through extern
//! extractors and build values through extern constructors, all implemented by the
//! embedding via the generated `Context` trait. See [`compile`] for the pipeline,
//! [`build`] for `build.rs` use, and the `kestrel-rules` binary for the CLI.

pub mod ast;
pub mod build;
pub mod checks;
pub mod codegen;
pub mod diagnostics;
pub mod fuzz;
pub mod gen;
pub mod lexer;
pub mod matchtree;
pub mod parser;
pub mod program;
pub mod sema;
pub mod sexpr;

pub use codegen::{Backend, CodegenOptions};
pub use diagnostics::{Code, Diagnostic, Diagnostics, Severity, SourceMap, Span};

/// Compiler options.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    pub codegen: CodegenOptions,
    /// Run the overlap, shadowing and recursion checks (on by default). Turning them
    /// off is for differential testing of the backends on arbitrary rule sets.
    pub checks: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            codegen: CodegenOptions::default(),
            checks: true,
        }
    }
}

/// A successful compilation: the Rust code and any warnings.
pub struct Compiled {
    pub code: String,
    pub diagnostics: Diagnostics,
}

/// Compiles all `sources` as one program: lex and parse every file, analyze (types,
/// terms, conversions, lowering of rules), check (overlap, shadowing, recursion),
/// then generate Rust. Returns every diagnostic found if there was any error.
pub fn compile(sources: &SourceMap, options: &Options) -> Result<Compiled, Diagnostics> {
    let mut diags = Diagnostics::new(sources.clone());
    let files: Vec<Vec<ast::Def>> = (0..sources.len())
        .map(|file| {
            let tokens = lexer::lex(file, sources.text(file), &mut diags);
            let forms = sexpr::read(tokens, &mut diags);
            parser::parse(&forms, &mut diags)
        })
        .collect();
    if diags.has_errors() {
        return Err(diags);
    }
    let program = sema::analyze(&files, &mut diags);
    if options.checks {
        checks::run(&program, &mut diags);
    }
    if diags.has_errors() {
        return Err(diags);
    }
    let code = codegen::generate(&program, sources, options.codegen);
    Ok(Compiled {
        code,
        diagnostics: diags,
    })
}

/// Reads rule files into a [`SourceMap`], naming each by the path as given.
pub fn read_sources<P: AsRef<std::path::Path>>(paths: &[P]) -> std::io::Result<SourceMap> {
    let mut sources = SourceMap::new();
    for path in paths {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|e| {
            std::io::Error::new(e.kind(), format!("cannot read {}: {e}", path.display()))
        })?;
        sources.add(path.display().to_string(), text);
    }
    Ok(sources)
}
