//! Target instruction sets, behind one object-safe trait.
//!
//! Contract. [`lookup`] maps an ISA name or a target triple (`x86_64`,
//! `aarch64-unknown-linux-gnu`) to a [`Builder`]; [`host`] does so for the machine this
//! process runs on. A builder holds the ISA's feature flags (its own typed set, see
//! [`features`]), set by name (`has_lse`, `has_sse41=false`), and [`Builder::finish`] makes
//! the [`TargetIsa`] that consumers (JIT, object writer, CLI, test runners) hold as
//! `Arc<dyn TargetIsa>` without knowing which ISA it is. An unknown ISA is a
//! [`LookupError`] naming it and listing the known ones; unknown flags are reported by
//! [`Builder::set`] returning false.
//!
//! Every compile goes through [`TargetIsa::compile`]: context, function, shared
//! [`Flags`](crate::settings::Flags) → compiled code. The ISA builds its pipeline backend
//! from the flags and its features and runs the shared driver
//! (`machinst::compile::compile_function`), monomorphic from there on: the trait is
//! dispatched once per function. The other `compile_function*` methods are shorthands for
//! that one entry point.
//!
//! Adding an ISA: a directory `isa/<name>/` (see `README.md` beside this file), its `pub
//! mod` line and its line in the `isas!` list below, which makes its [`ISAS`] entry.
//!
//! Cost: lookup is linear in the (two) known ISAs; a compile is the pipeline's cost.

pub mod features;

use std::fmt;
use std::sync::Arc;

use kestrel_ir::Function;
use smallvec::SmallVec;

use crate::chaos::Chaos;
use crate::machinst::backend::builder;
use crate::machinst::buffer::RelocKind;
use crate::machinst::compile::{in_place, CompileContext, PhaseTimes};
use crate::machinst::unwind::UnwindCie;
use crate::machinst::{CodegenError, CompiledCode};
use crate::settings::Flags;
pub use features::{FeatureFlag, IsaFeatures};

/// Makes the [`ISAS`] table from one line per ISA: `module::IsaType => "canonical name"`.
/// The modules are declared outside the macro, where `cargo fmt` reaches their files.
macro_rules! isas {
    ($($module:ident :: $isa:ident => $name:literal),* $(,)?) => {
        /// The ISAs [`lookup`] knows: each one's canonical name and its builder with
        /// default features.
        const ISAS: &[(&str, MakeBuilder)] = &[$(($name, builder::<$module::$isa>)),*];
    };
}

pub mod aarch64;
pub mod x64;

isas! {
    x64::X64 => "x86_64",
    aarch64::Aarch64 => "aarch64",
}

/// Makes an ISA's builder with its default features.
type MakeBuilder = fn() -> Builder;

/// The canonical names of the ISAs Kestrel compiles for, in [`lookup`]'s order.
pub fn names() -> impl Iterator<Item = &'static str> {
    ISAS.iter().map(|&(name, _)| name)
}

/// The builder of the ISA named `name`, or of the architecture of target triple `name`
/// (its part before the first `-`), with the ISA's default features.
pub fn lookup(name: &str) -> Result<Builder, LookupError> {
    let arch = name.split('-').next().unwrap_or(name);
    ISAS.iter()
        .find(|&&(isa, _)| isa == arch)
        .map(|&(_, builder)| builder())
        .ok_or_else(|| LookupError::Unknown(name.to_string()))
}

/// The builder of the ISA this process runs on, with the features of its CPU.
pub fn host() -> Result<Builder, LookupError> {
    let mut builder = lookup(std::env::consts::ARCH)?;
    builder.use_host_features();
    Ok(builder)
}

/// Why [`lookup`] found no ISA.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LookupError {
    #[error("unknown target `{0}`: Kestrel compiles for {known}", known = names().collect::<Vec<_>>().join(" and "))]
    Unknown(String),
}

/// An ISA with its feature flags not yet fixed: set them by name, then [`Builder::finish`].
pub struct Builder {
    inner: Box<dyn BuildIsa>,
}

/// One ISA's side of a [`Builder`] (see [`IsaBuilder`], the implementation every ISA uses).
trait BuildIsa: Send + Sync {
    fn name(&self) -> &'static str;
    fn flag_names(&self) -> Vec<&'static str>;
    fn flag_values(&self) -> Vec<(&'static str, bool)>;
    fn set(&mut self, flag: &str) -> bool;
    fn set_all(&mut self, on: bool);
    fn use_host_features(&mut self);
    fn only_host_features(&mut self);
    fn finish(&self) -> Arc<dyn TargetIsa>;
    fn clone_box(&self) -> Box<dyn BuildIsa>;
}

/// The builder of an ISA whose features are `F`, made into its [`TargetIsa`] by `make`.
struct IsaBuilder<F: IsaFeatures> {
    name: &'static str,
    features: F,
    make: fn(F) -> Arc<dyn TargetIsa>,
}

impl<F: IsaFeatures> BuildIsa for IsaBuilder<F> {
    fn name(&self) -> &'static str {
        self.name
    }
    fn flag_names(&self) -> Vec<&'static str> {
        F::FLAGS.iter().map(|f| f.name).collect()
    }
    fn flag_values(&self) -> Vec<(&'static str, bool)> {
        self.features.flag_values()
    }
    fn set(&mut self, flag: &str) -> bool {
        self.features.apply_flag(flag)
    }
    fn set_all(&mut self, on: bool) {
        self.features = if on { F::all() } else { F::none() };
    }
    fn use_host_features(&mut self) {
        self.features = F::host();
    }
    fn only_host_features(&mut self) {
        self.features = self.features.intersect(F::host());
    }
    fn finish(&self) -> Arc<dyn TargetIsa> {
        (self.make)(self.features)
    }
    fn clone_box(&self) -> Box<dyn BuildIsa> {
        Box::new(IsaBuilder {
            name: self.name,
            features: self.features,
            make: self.make,
        })
    }
}

impl Builder {
    /// The builder of ISA `name` with `features`, finished by `make` (for `isa/<name>/`).
    pub(crate) fn new<F: IsaFeatures>(
        name: &'static str,
        features: F,
        make: fn(F) -> Arc<dyn TargetIsa>,
    ) -> Builder {
        Builder {
            inner: Box::new(IsaBuilder {
                name,
                features,
                make,
            }),
        }
    }

    /// The ISA's canonical name (`x86_64`, `aarch64`).
    pub fn name(&self) -> &'static str {
        self.inner.name()
    }

    /// The names of the ISA's feature flags (from its own flag table).
    pub fn flag_names(&self) -> Vec<&'static str> {
        self.inner.flag_names()
    }

    /// Whether `flag` (`name` or `name=value`) is one of the ISA's feature flags.
    pub fn is_flag(&self, flag: &str) -> bool {
        self.clone().set(flag)
    }

    /// Set one feature flag (`has_lse`, `has_sse41=false`; a value other than `false`
    /// turns it on). Returns false, changing nothing, for a flag the ISA does not have.
    pub fn set(&mut self, flag: &str) -> bool {
        self.inner.set(flag)
    }

    /// Every feature flag on (compile-only uses whose output must not depend on the host)
    /// or off (the base ISA).
    pub fn set_all(&mut self, on: bool) -> &mut Self {
        self.inner.set_all(on);
        self
    }

    /// The features of the CPU this process runs on (none when it is another ISA).
    pub fn use_host_features(&mut self) -> &mut Self {
        self.inner.use_host_features();
        self
    }

    /// Turn off every feature the host CPU lacks (code that runs here can use only what
    /// the host has).
    pub fn only_host_features(&mut self) -> &mut Self {
        self.inner.only_host_features();
        self
    }

    /// Each feature flag and whether it is on.
    pub fn flag_values(&self) -> Vec<(&'static str, bool)> {
        self.inner.flag_values()
    }

    /// The target with the features set so far.
    pub fn finish(&self) -> Arc<dyn TargetIsa> {
        self.inner.finish()
    }
}

impl Clone for Builder {
    fn clone(&self) -> Builder {
        Builder {
            inner: self.inner.clone_box(),
        }
    }
}

impl fmt::Debug for Builder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Builder({} {:?})", self.name(), self.flag_values())
    }
}

/// The function a compile reads.
pub enum CompileInput<'f> {
    /// A function the caller keeps as it is (the mid-end optimizes a copy).
    Borrowed(&'f Function),
    /// A function the caller no longer needs as it was (a front end that built it for this
    /// compile): the mid-end optimizes it in place, leaving it optimized (with the dead
    /// instructions it removed possibly still tombstones in its layout). The code is the
    /// same as for [`CompileInput::Borrowed`].
    Consumed(&'f mut Function),
}

/// Where one part of an argument or result goes (an `i128` has two parts, low first;
/// every other value one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PartLoc {
    /// A register.
    Reg(kestrel_regalloc::PReg),
    /// A byte offset in the stack-argument area (from the stack pointer at the call).
    Stack(u32),
    /// A byte offset in the return area (results only).
    Area(u32),
}

/// The parts of one value.
pub type Parts = SmallVec<[PartLoc; 2]>;

/// Where the arguments and results of a signature go, as the ISA's code expects them: what
/// a trampoline calling that code from the host needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallLocations {
    /// Per parameter, its parts.
    pub params: SmallVec<[Parts; 8]>,
    /// Per result, its parts.
    pub returns: SmallVec<[Parts; 4]>,
    /// Bytes of return area (0: none); its address is the ISA's hidden argument.
    pub ret_area: u32,
}

impl CallLocations {
    /// The trampoline's view of the shared ABI's locations (`param_locs`, `ret_locs` of
    /// [`crate::machinst::abi`]): every part as a register or an unsigned offset.
    pub(crate) fn from_abi(
        params: crate::machinst::abi::SigLocs<crate::machinst::abi::Loc>,
        (rets, ret_area): (
            crate::machinst::abi::SigLocs<crate::machinst::abi::RetLoc>,
            u32,
        ),
    ) -> Result<CallLocations, CodegenError> {
        use crate::machinst::abi::{Loc, RetLoc};
        let offset = |o: i32| {
            u32::try_from(o).map_err(|_| CodegenError::unsupported("a negative argument offset"))
        };
        let params = params
            .into_iter()
            .map(|parts| {
                let part = |loc| match loc {
                    Loc::Reg(r) => Ok(PartLoc::Reg(r)),
                    Loc::Stack(o) => offset(o).map(PartLoc::Stack),
                };
                parts.into_iter().map(part).collect()
            })
            .collect::<Result<_, CodegenError>>()?;
        let returns = rets
            .into_iter()
            .map(|parts| {
                let part = |loc| match loc {
                    RetLoc::Reg(r) => Ok(PartLoc::Reg(r)),
                    RetLoc::Area(o) => offset(o).map(PartLoc::Area),
                };
                parts.into_iter().map(part).collect()
            })
            .collect::<Result<_, CodegenError>>()?;
        Ok(CallLocations {
            params,
            returns,
            ret_area,
        })
    }
}

/// What the object writer needs to write an ISA's code into an ELF object.
#[derive(Clone, Copy, Debug)]
pub struct ElfTarget {
    /// The object file's architecture.
    pub architecture: object::Architecture,
    /// The relocation type of an 8-byte absolute address (data, trap tables, debug info).
    pub abs64: u32,
    /// The relocation type of a 4-byte absolute address.
    pub abs32: u32,
    /// The relocation type of a 4-byte PC-relative reference (`.eh_frame`'s FDE pointers).
    pub pc_rel32: u32,
    /// The ELF relocation type of each relocation kind the ISA's code uses.
    pub code_relocs: &'static [(RelocKind, u32)],
}

/// What an ISA is whatever its features: one static per ISA, read by [`TargetIsa`]'s
/// provided methods.
#[derive(Debug)]
pub struct IsaInfo {
    /// The canonical name (`x86_64`, `aarch64`).
    pub name: &'static str,
    /// Bytes in a pointer.
    pub pointer_bytes: u8,
    /// The relocation kinds the ISA's code uses.
    pub reloc_kinds: &'static [RelocKind],
    /// The CIE every function's unwind info starts from.
    pub unwind_cie: &'static UnwindCie,
    /// How the object writer represents the ISA's code in ELF.
    pub elf: &'static ElfTarget,
    /// The lowering rules, by the index `CompiledCode::rules_fired` reports.
    pub lowering_rules: fn() -> &'static [&'static str],
    /// One line per instruction of the first `len` bytes of the code.
    #[cfg(feature = "disasm")]
    pub disassemble: fn(&[u8], usize) -> Vec<String>,
}

/// One target ISA with its features fixed: everything a consumer needs to compile for it,
/// place its code and describe its frames.
pub trait TargetIsa: Send + Sync + fmt::Debug {
    /// The facts of the ISA that its features do not change.
    fn info(&self) -> &'static IsaInfo;

    /// The canonical name (`x86_64`, `aarch64`).
    fn name(&self) -> &'static str {
        self.info().name
    }

    /// Bytes in a pointer.
    fn pointer_bytes(&self) -> u8 {
        self.info().pointer_bytes
    }

    /// Each feature flag of the ISA and whether this target has it.
    fn isa_flags(&self) -> Vec<(&'static str, bool)>;

    /// Compile `f` in `ctx`'s memory with `flags`, asking `chaos` before each optional
    /// optimization, adding each phase's time to `times` when given. The one entry point
    /// every other `compile_function*` method goes through.
    fn compile(
        &self,
        ctx: &mut CompileContext,
        f: CompileInput<'_>,
        flags: &Flags,
        chaos: &mut Chaos,
        times: Option<&mut PhaseTimes>,
    ) -> Result<CompiledCode, CodegenError>;

    /// Where the arguments and results of `sig` go, or why the ISA cannot place them.
    fn call_locations(&self, sig: &kestrel_ir::Signature) -> Result<CallLocations, CodegenError>;

    /// The relocation kinds the ISA's code uses (what a JIT must be able to apply).
    fn reloc_kinds(&self) -> &'static [RelocKind] {
        self.info().reloc_kinds
    }

    /// The call-frame rules every function starts with, in the ISA's DWARF register
    /// numbering (the CIE of `.eh_frame`).
    fn unwind_cie(&self) -> &'static UnwindCie {
        self.info().unwind_cie
    }

    /// How the object writer represents this ISA's code in ELF.
    fn elf(&self) -> &'static ElfTarget {
        self.info().elf
    }

    /// The lowering rules, by the index `CompiledCode::rules_fired` reports.
    fn lowering_rules(&self) -> &'static [&'static str] {
        (self.info().lowering_rules)()
    }

    /// The first `len` bytes of `code` (its instructions, not the constants after them)
    /// as one line per instruction.
    #[cfg(feature = "disasm")]
    fn disassemble(&self, code: &[u8], len: usize) -> Vec<String> {
        (self.info().disassemble)(code, len)
    }

    /// Compile `f` to machine code.
    fn compile_function(&self, f: &Function, flags: &Flags) -> Result<CompiledCode, CodegenError> {
        self.compile_function_with_chaos(f, flags, &mut Chaos::disabled())
    }

    /// [`Self::compile_function`] in `ctx`'s memory: for a client compiling many
    /// functions, which keeps one context per thread (the code is the same either way).
    fn compile_function_in(
        &self,
        ctx: &mut CompileContext,
        f: &Function,
        flags: &Flags,
    ) -> Result<CompiledCode, CodegenError> {
        let chaos = &mut Chaos::disabled();
        self.compile(ctx, CompileInput::Borrowed(f), flags, chaos, None)
    }

    /// [`Self::compile_function_in`] with the result left in `ctx` until the next compile
    /// in place, which writes its code and metadata into the same vectors: for a client
    /// that reads (copies out) each result before compiling the next, so that compiling
    /// many functions allocates nothing for results once they have grown.
    fn compile_function_in_place<'c>(
        &self,
        ctx: &'c mut CompileContext,
        f: &Function,
        flags: &Flags,
    ) -> Result<&'c CompiledCode, CodegenError> {
        in_place(ctx, |ctx| self.compile_function_in(ctx, f, flags))
    }

    /// Compile `f`, asking `chaos` before each optional optimization.
    fn compile_function_with_chaos(
        &self,
        f: &Function,
        flags: &Flags,
        chaos: &mut Chaos,
    ) -> Result<CompiledCode, CodegenError> {
        let ctx = &mut CompileContext::new();
        self.compile(ctx, CompileInput::Borrowed(f), flags, chaos, None)
    }

    /// [`Self::compile_function_in_place`], adding each phase's wall-clock time
    /// (verification included) and the peak live vreg count to `times`.
    fn compile_function_timed<'c>(
        &self,
        ctx: &'c mut CompileContext,
        f: &Function,
        flags: &Flags,
        times: &mut PhaseTimes,
    ) -> Result<&'c CompiledCode, CodegenError> {
        in_place(ctx, |ctx| {
            let chaos = &mut Chaos::disabled();
            self.compile(ctx, CompileInput::Borrowed(f), flags, chaos, Some(times))
        })
    }

    /// [`Self::compile_function_in`] for a caller that no longer needs `f` as it was (see
    /// [`CompileInput::Consumed`]); `times`, when given, gets each phase's time.
    fn compile_function_consuming_in(
        &self,
        ctx: &mut CompileContext,
        f: &mut Function,
        flags: &Flags,
        times: Option<&mut PhaseTimes>,
    ) -> Result<CompiledCode, CodegenError> {
        let chaos = &mut Chaos::disabled();
        self.compile(ctx, CompileInput::Consumed(f), flags, chaos, times)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_by_name_and_triple() {
        assert_eq!(lookup("x86_64").unwrap().name(), "x86_64");
        assert_eq!(
            lookup("aarch64-unknown-linux-gnu").unwrap().name(),
            "aarch64"
        );
        let err = lookup("riscv64").unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown target `riscv64`: Kestrel compiles for x86_64 and aarch64"
        );
        assert_eq!(host().unwrap().name(), std::env::consts::ARCH);
    }

    #[test]
    fn builders_set_flags_from_the_isa_tables() {
        let mut a64 = lookup("aarch64").unwrap();
        assert_eq!(a64.flag_names(), ["has_lse"]);
        assert_eq!(a64.flag_values(), [("has_lse", false)]);
        assert!(a64.set("has_lse"));
        assert!(!a64.set("has_avx"), "not an AArch64 flag");
        let isa = a64.finish();
        assert_eq!((isa.name(), isa.pointer_bytes()), ("aarch64", 8));
        assert_eq!(isa.isa_flags(), [("has_lse", true)]);
        let mut x64 = lookup("x86_64").unwrap();
        x64.set_all(true);
        assert!(x64.set("has_sse41=false"));
        assert!(x64.is_flag("sse41"), "the alias of has_sse41");
        let flags = x64.finish().isa_flags();
        assert!(flags.contains(&("has_sse41", false)), "{flags:?}");
        assert!(flags.contains(&("has_lzcnt", true)), "{flags:?}");
    }

    #[test]
    fn every_isa_compiles_through_the_one_entry_point() {
        let text = "function %f(i64, i64) -> i64 {\nblock0(v0: i64, v1: i64):\n    v2 = iadd v0, v1\n    return v2\n}\n";
        let f = &kestrel_ir::parse_functions(text, "f.clif").unwrap()[0];
        for name in names() {
            let isa = lookup(name).unwrap().finish();
            let flags = Flags::default();
            let code = isa.compile_function(f, &flags).unwrap();
            assert!(!code.code.is_empty(), "{name}");
            let mut ctx = CompileContext::new();
            let mut owned = f.clone();
            let consumed = isa.compile_function_consuming_in(&mut ctx, &mut owned, &flags, None);
            assert_eq!(consumed.unwrap(), code, "{name}");
            let in_place = isa.compile_function_in_place(&mut ctx, f, &flags).unwrap();
            assert_eq!(*in_place, code, "{name}");
        }
    }
}
