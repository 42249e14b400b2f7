//! `--target` and `--set`, shared by `compile`, `run` and `test`: compile for a target given
//! on the command line instead of a file's own `target` lines (see
//! `kestrel_filetests::target_override` for what they accept and how they apply).

use kestrel_filetests::directives::Header;
use kestrel_filetests::target_override::TargetOverride;

/// The options.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct TargetArgs {
    /// Compile for this target instead of the file's `target` lines: `x86_64` or
    /// `aarch64`, optionally with ISA flags as a `target` line spells them
    /// (`"aarch64 has_lse"`). A note says when the file named another ISA. AArch64 code
    /// runs under `qemu-aarch64`.
    #[arg(long, value_name = "ISA [FLAGS]")]
    pub target: Option<String>,
    /// With `--target`: an ISA flag (`has_lse`, `has_sse41=false`) or a setting
    /// (`preserve_frame_pointers`, `enable_probestack`, `probestack_size_log2=16`), as if
    /// in a `set` line after the file's own; may be repeated.
    #[arg(long = "set", value_name = "NAME[=VALUE]", requires = "target")]
    pub sets: Vec<String>,
}

impl TargetArgs {
    /// The override these options ask for, if any.
    pub fn parse(&self) -> Result<Option<TargetOverride>, String> {
        self.target
            .as_deref()
            .map(|spec| TargetOverride::parse(spec, &self.sets))
            .transpose()
    }
}

/// Apply `target` to a file's `header`, printing its note (if any) on stderr.
pub fn apply(target: Option<&TargetOverride>, header: &mut Header) {
    if let Some(note) = target.and_then(|o| o.apply(header)) {
        eprintln!("{note}");
    }
}
