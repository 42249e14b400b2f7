//! A target chosen on the command line (`--target aarch64 has_lse`, `--set NAME[=VALUE]`)
//! instead of a file's own `target` lines.
//!
//! Contract. [`TargetOverride::parse`] accepts Cranelift's spelling of a target line after
//! `target` (`x86_64`, `aarch64`, each optionally followed by ISA flags such as `has_lse` or
//! `has_sse41=false`) and `--set` words: a word naming an ISA flag of that target joins the
//! target's flags, any other must be a setting Kestrel knows (the `set` lines of test
//! files). Unknown ISAs, flags and settings are errors that name them and list what is
//! known: the ISAs and each ISA's flags come from `kestrel_codegen::isa` (`names`, the
//! builder's own flag table). [`TargetOverride::apply`] replaces a scanned header's `target` lines with the
//! override's one line and adds its settings after the file's own (so they win), and says
//! when the file named another ISA.
//!
//! Cost: linear in the words given and in the header's lines.

use crate::directives::{Header, Setting, Target};
use kestrel_codegen::isa;

/// See the module docs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TargetOverride {
    pub target: Target,
    pub settings: Vec<Setting>,
}

impl TargetOverride {
    /// Parse `spec` (`ISA [FLAG…]`) and the `--set` words `sets`; see the module docs.
    pub fn parse(spec: &str, sets: &[String]) -> Result<TargetOverride, String> {
        let mut words = spec.split_whitespace();
        let names = || isa::names().collect::<Vec<_>>().join(" or ");
        let isa = words
            .next()
            .ok_or_else(|| format!("--target needs an ISA ({})", names()))?;
        // A target line names an ISA, not a triple.
        let builder = match isa::lookup(isa) {
            Ok(b) if b.name() == isa => b,
            _ => return Err(isa::LookupError::Unknown(isa.to_string()).to_string()),
        };
        let known_flags = || builder.flag_names().join(", ");
        let mut flags = Vec::new();
        for flag in words {
            if !builder.is_flag(flag) {
                return Err(format!(
                    "unknown {isa} flag `{flag}` in --target (known: {})",
                    known_flags()
                ));
            }
            flags.push(flag.to_string());
        }
        let mut settings = Vec::new();
        for word in sets.iter().flat_map(|s| s.split_whitespace()) {
            if builder.is_flag(word) {
                flags.push(word.to_string());
                continue;
            }
            let (name, value) = match word.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (word, None),
            };
            if !crate::KNOWN_SETTINGS.contains(&name) {
                return Err(format!(
                    "--set {word}: neither a setting nor an {isa} flag (flags: {})",
                    known_flags()
                ));
            }
            settings.push(Setting {
                name: name.to_string(),
                value,
                // After every line of the file, before the target line below.
                line: usize::MAX - 1,
            });
        }
        Ok(TargetOverride {
            target: Target {
                isa: isa.to_string(),
                flags,
                line: usize::MAX,
            },
            settings,
        })
    }

    /// The `--target` and `--set` arguments that parse back to this override (for a worker
    /// process that must run files the same way).
    pub fn command_line(&self) -> Vec<String> {
        let mut spec = self.target.isa.clone();
        for flag in &self.target.flags {
            spec.push(' ');
            spec.push_str(flag);
        }
        let mut args = vec!["--target".to_string(), spec];
        for s in &self.settings {
            args.push("--set".into());
            args.push(match &s.value {
                Some(v) => format!("{}={v}", s.name),
                None => s.name.clone(),
            });
        }
        args
    }

    /// Replace `header`'s targets with this one and add the settings (see the module docs);
    /// a note for the user when the file's target lines named another ISA.
    pub fn apply(&self, header: &mut Header) -> Option<String> {
        let others: Vec<&str> = header
            .targets
            .iter()
            .map(|t| t.isa.as_str())
            .filter(|&isa| isa != self.target.isa)
            .collect();
        let note = (!others.is_empty()).then(|| {
            format!(
                "note: --target {} replaces the file's `target {}` line(s)",
                self.target.isa,
                others.join("`, `target ")
            )
        });
        header.targets = vec![self.target.clone()];
        header.settings.extend(self.settings.iter().cloned());
        note
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::directives::scan;

    #[test]
    fn flags_join_the_target_and_settings_follow_the_files() {
        let o = TargetOverride::parse("aarch64", &["has_lse".into(), "enable_probestack".into()])
            .unwrap();
        assert_eq!(o.target.isa, "aarch64");
        assert_eq!(o.target.flags, ["has_lse"]);
        let mut h = scan(
            "set enable_probestack=false\ntarget x86_64\nfunction %f() {\nblock0:\n    return\n}\n",
        );
        let note = o.apply(&mut h).unwrap();
        assert!(
            note.contains("replaces the file's `target x86_64`"),
            "{note}"
        );
        assert_eq!(h.targets.len(), 1);
        // The command line's setting is the last one before the target: it wins.
        let last = h
            .settings
            .iter()
            .rev()
            .find(|s| s.name == "enable_probestack")
            .unwrap();
        assert_eq!(last.value, None);
        assert!(last.line < h.targets[0].line);
    }

    #[test]
    fn the_command_line_parses_back_to_the_same_override() {
        let sets = [
            "has_lse".into(),
            "probestack_size_log2=14".into(),
            "enable_probestack".into(),
        ];
        let o = TargetOverride::parse("aarch64", &sets).unwrap();
        let args = o.command_line();
        assert_eq!(args[..2], ["--target", "aarch64 has_lse"]);
        let sets: Vec<String> = args[2..].chunks(2).map(|p| p[1].clone()).collect();
        assert_eq!(TargetOverride::parse(&args[1], &sets).unwrap(), o);
    }

    #[test]
    fn cranelift_spelling_and_errors() {
        let o = TargetOverride::parse("x86_64 has_sse41=false", &[]).unwrap();
        assert_eq!(o.target.flags, ["has_sse41=false"]);
        let mut h = scan("target x86_64 has_popcnt\n");
        assert_eq!(o.apply(&mut h), None, "same ISA: nothing to say");
        let e = TargetOverride::parse("riscv64", &[]).unwrap_err();
        assert!(e.contains("unknown target `riscv64`"), "{e}");
        let e = TargetOverride::parse("aarch64 has_avx", &[]).unwrap_err();
        assert!(
            e.contains("unknown aarch64 flag `has_avx`") && e.contains("has_lse"),
            "{e}"
        );
        let e = TargetOverride::parse("aarch64", &["frobnicate=1".into()]).unwrap_err();
        assert!(
            e.contains("--set frobnicate=1: neither a setting nor an aarch64 flag"),
            "{e}"
        );
        assert!(TargetOverride::parse("", &[]).is_err());
        assert!(TargetOverride::parse("x86_64-unknown-linux-gnu", &[]).is_err());
    }

    #[test]
    fn known_flags_are_the_isas_own() {
        for name in isa::names() {
            let e = TargetOverride::parse(&format!("{name} has_nothing"), &[]).unwrap_err();
            for flag in isa::lookup(name).unwrap().flag_names() {
                assert!(e.contains(flag), "{e} lacks {flag}");
                assert!(TargetOverride::parse(&format!("{name} {flag}=false"), &[]).is_ok());
            }
        }
    }
}
