//! `kestrel-rules`: check rule files or compile them to Rust.
//!
//! ```text
//! kestrel-rules check FILES…
//! kestrel-rules compile FILES… [-o OUT.rs] [--naive] [--log] [--coverage]
//! ```
//!
//! Diagnostics go to stderr (coloured only on a terminal); the exit status is 0 when
//! the program is valid (warnings allowed), 1 on rule errors, 2 on I/O errors.

use clap::{Parser, Subcommand};
use kestrel_rules::{compile, read_sources, Backend, Options};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "kestrel-rules", about = "Compiler for Kestrel's rule DSL")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check rule files (one program) and report diagnostics.
    Check {
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Compile rule files (one program) to Rust.
    Compile {
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Output file; standard output if omitted.
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Generate the naive (rule-by-rule) matcher instead of decision trees.
        #[arg(long)]
        naive: bool,
        /// Log each rule that fires through `Context::log_rule`.
        #[arg(long)]
        log: bool,
        /// Emit `RULE_SITES` and report each rule that fires through `Context::rule_fired`.
        #[arg(long)]
        coverage: bool,
    },
}

fn main() -> ExitCode {
    let (files, output, options) = match Cli::parse().command {
        Command::Check { files } => (files, None, None),
        Command::Compile {
            files,
            output,
            naive,
            log,
            coverage,
        } => {
            let mut options = Options::default();
            options.codegen.log = log;
            options.codegen.coverage = coverage;
            if naive {
                options.codegen.backend = Backend::Naive;
            }
            (files, output, Some(options))
        }
    };
    let sources = match read_sources(&files) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let compiled = match compile(&sources, &options.unwrap_or_default()) {
        Ok(c) => c,
        Err(diags) => {
            diags.eprint();
            return ExitCode::from(1);
        }
    };
    if !compiled.diagnostics.list.is_empty() {
        compiled.diagnostics.eprint();
    }
    if options.is_none() {
        return ExitCode::SUCCESS; // `check`
    }
    let written = match output {
        Some(path) => std::fs::write(&path, &compiled.code)
            .map_err(|e| format!("cannot write {}: {e}", path.display())),
        None => {
            use std::io::Write;
            std::io::stdout()
                .write_all(compiled.code.as_bytes())
                .map_err(|e| format!("cannot write output: {e}"))
        }
    };
    match written {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
