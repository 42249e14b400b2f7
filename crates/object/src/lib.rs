//! Kestrel's object writer: compile functions and lay out data into an ELF relocatable
//! object (`.o`) that `cc`/`ld` link like any other.
//!
//! ```text
//! let mut module = ObjectModule::new(ObjectBuilder::new("prog"))?;
//! let f = module.declare_function("add1", Linkage::Export, &func.signature)?;
//! module.define_function(f, &func)?;          // compiles with the builder's flags
//! std::fs::write("prog.o", module.finish()?)?;
//! ```
//!
//! # Contract
//!
//! - **Sections.** Code in `.text` (16-byte aligned functions); read-only data in
//!   `.rodata`, or `.data.rel.ro` when it holds addresses; writable data in `.data`, or
//!   `.bss` when zero-initialized; unwind info in `.eh_frame` (one FDE per function, see
//!   `kestrel_module::eh_frame`); with [`ObjectBuilder::debug_info`], DWARF in `.debug_*`
//!   (each function's name, range and line table: see `kestrel_module::debug_info`).
//! - **Symbols.** `Export` is a global symbol (default visibility), `Local` a local one,
//!   `Import` an undefined global. A name the code refers to without declaring it (a
//!   library call such as `fmod`) becomes an undefined global too; the backend's float
//!   helpers become their C library names ([`c_library_name`]: link with `-lm`).
//! - **Targets.** x86-64 by default; [`ObjectBuilder::target`] selects another
//!   `TargetIsa` (AArch64: an `EM_AARCH64` object), which compiles the functions and names
//!   the ELF architecture, relocation types and CIE (`TargetIsa::elf`, `unwind_cie`).
//! - **Relocations** (x86-64 psABI): calls `R_X86_64_PLT32`, PC-relative addresses
//!   (colocated `func_addr`/`symbol_value`) `R_X86_64_PC32`, GOT loads
//!   `R_X86_64_REX_GOTPCRELX`, absolute addresses `R_X86_64_64`/`R_X86_64_32`, FDE pointers
//!   `R_X86_64_PC32`; in debug sections, addresses `R_X86_64_64` and offsets into other
//!   debug sections `R_X86_64_32` against their section symbols. So the output links into
//!   position-independent executables, and its debug info merges with other objects'.
//!   (AArch64 ELF ABI): calls `R_AARCH64_CALL26`, addresses `R_AARCH64_ADR_PREL_PG_HI21` +
//!   `R_AARCH64_ADD_ABS_LO12_NC`, GOT loads `R_AARCH64_ADR_GOT_PAGE` +
//!   `R_AARCH64_LD64_GOT_LO12_NC`, absolute addresses `R_AARCH64_ABS64`/`R_AARCH64_ABS32`,
//!   FDE pointers `R_AARCH64_PREL32`. A relocation of one target's kind in the other's
//!   object is an error.
//! - **Errors, never panics:** redefinition, an import defined, a function/data name clash,
//!   an undefined local at `finish`, a signature mismatch, a compile error (with the name).
//!
//! Cost: O(code + data + relocations) plus the compiler's own cost per function.

use kestrel_module::decls::{Declarations, Name};
use std::collections::HashMap;

use std::sync::Arc;

use kestrel_codegen::isa::TargetIsa;
use kestrel_codegen::machinst::buffer::RelocKind;
use kestrel_codegen::machinst::unwind::UnwindOp;
use kestrel_codegen::machinst::CodegenError;
use kestrel_codegen::settings::Flags;
use kestrel_ir::{Function, Signature};
use kestrel_module::debug_info::{DebugFunction, DwarfBuilder, RelocTarget};
use kestrel_module::eh_frame::EhFrameBuilder;
pub use kestrel_module::{
    ir_name, DataDescription, DataId, DataInit, DataReloc, DeclError, Declared, FuncId, Linkage,
    Module,
};
use object::write::{
    Object, Relocation, SectionId, StandardSection, Symbol, SymbolId, SymbolSection,
};
use object::{
    elf, BinaryFormat, Endianness, RelocationFlags, SectionFlags, SectionKind, SymbolFlags,
    SymbolKind, SymbolScope,
};

/// Why building the object failed.
#[derive(Debug, thiserror::Error)]
pub enum ObjectError {
    /// A declaration or definition the module rules out (shared with the JIT).
    #[error(transparent)]
    Decl(#[from] DeclError),
    #[error("function `{name}` could not be compiled: {error}")]
    Compile { name: String, error: CodegenError },
    #[error("`{name}` is declared local to this object but never defined")]
    Undefined { name: String },
    #[error("function `{name}`: a {kind:?} relocation has no ELF form in an {target} object")]
    Reloc {
        name: String,
        kind: RelocKind,
        /// The object's ISA, by name.
        target: &'static str,
    },
    #[error("writing the object: {0}")]
    Write(#[from] object::write::Error),
}

/// The ELF type of a code relocation of `kind` in `isa`'s objects, if its code uses `kind`.
fn code_reloc(isa: &dyn TargetIsa, kind: RelocKind) -> Option<u32> {
    let relocs = isa.elf().code_relocs;
    relocs.iter().find(|&&(k, _)| k == kind).map(|&(_, r)| r)
}

/// The ELF type of an absolute address of `size` bytes (data, trap table, debug info).
fn abs_reloc(isa: &dyn TargetIsa, size: u8) -> u32 {
    let elf = isa.elf();
    if size == 8 {
        elf.abs64
    } else {
        elf.abs32
    }
}

/// Configuration of an object module.
#[derive(Clone, Debug)]
pub struct ObjectBuilder {
    name: String,
    flags: Flags,
    isa: Arc<dyn TargetIsa>,
    trap_table: bool,
    debug_info: bool,
}

impl ObjectBuilder {
    /// An x86-64 ELF object (with the host CPU's x86-64 features); `name` is its file
    /// symbol (the source name).
    pub fn new(name: impl Into<String>) -> Self {
        let x64 = kestrel_codegen::isa::lookup("x86_64").expect("x86-64 is a Kestrel ISA");
        ObjectBuilder {
            name: name.into(),
            flags: Flags::default(),
            isa: x64.finish(),
            trap_table: false,
            debug_info: false,
        }
    }

    /// Compile for and write an object of `isa` (x86-64 by default), with its features.
    pub fn target(mut self, isa: Arc<dyn TargetIsa>) -> Self {
        self.isa = isa;
        self
    }

    /// Also emit DWARF debug info (as `cc -g` does): each function's name and code range,
    /// and a line table mapping its code to the lines of the CLIF text it was parsed from
    /// (or to the `@srcloc`s a front end attached, as lines of the file this builder is
    /// named after). Debuggers then show Kestrel functions with their lines.
    pub fn debug_info(mut self, on: bool) -> Self {
        self.debug_info = on;
        self
    }

    /// Also emit the trap table: section `kestrel_traps`, one 16-byte entry per trap site
    /// (`u64` address, `u8` trap code, 7 bytes of padding), writable so its absolute
    /// relocations need no text relocation. The linker defines `__start_kestrel_traps` and
    /// `__stop_kestrel_traps` around it, so a signal handler can map a faulting `rip` (or
    /// `pc`) to its trap code, as the JIT does.
    pub fn trap_table(mut self, on: bool) -> Self {
        self.trap_table = on;
        self
    }

    /// Compile with these flags (checks, optimization, frame settings).
    pub fn flags(mut self, flags: Flags) -> Self {
        self.flags = flags;
        self
    }
}

/// The object's state of a declared function or data object: its symbol, and whether it
/// is defined yet.
#[derive(Copy, Clone)]
struct Entry {
    symbol: SymbolId,
    defined: bool,
}

/// What `finish` needs of a defined function, for `.eh_frame` and the debug info.
struct DefinedFunction {
    symbol: SymbolId,
    len: u32,
    /// Call-frame rule changes by code offset.
    unwind: Vec<(u32, UnwindOp)>,
    /// `(start, end, line)` source ranges (kept only with debug info).
    lines: Vec<(u32, u32, u32)>,
    /// The text it was parsed from, and the line of its header (0: unknown).
    source: Option<(String, u32)>,
}

/// A relocatable object being built.
pub struct ObjectModule {
    object: Object<'static>,
    flags: Flags,
    isa: Arc<dyn TargetIsa>,
    decls: Declarations<Entry, Entry>,
    /// Undeclared names the code refers to (library calls), as undefined symbols.
    extra_imports: HashMap<String, SymbolId>,
    /// The defined functions, in definition order.
    defined: Vec<DefinedFunction>,
    /// The trap table section, when asked for.
    traps: Option<SectionId>,
    /// The file symbol's name: the source file of functions with no text of their own.
    name: String,
    debug_info: bool,
}

impl ObjectModule {
    /// An empty module.
    pub fn new(builder: ObjectBuilder) -> Self {
        let mut object = Object::new(
            BinaryFormat::Elf,
            builder.isa.elf().architecture,
            Endianness::Little,
        );
        object.add_file_symbol(builder.name.clone().into_bytes());
        let traps = builder
            .trap_table
            .then(|| object.add_section(Vec::new(), b"kestrel_traps".to_vec(), SectionKind::Data));
        ObjectModule {
            traps,
            object,
            flags: builder.flags,
            isa: builder.isa,
            decls: Declarations::default(),
            extra_imports: HashMap::new(),
            defined: Vec::new(),
            name: builder.name,
            debug_info: builder.debug_info,
        }
    }

    fn new_symbol(&mut self, name: &str, kind: SymbolKind, linkage: Linkage) -> SymbolId {
        self.object.add_symbol(Symbol {
            name: name.as_bytes().to_vec(),
            value: 0,
            size: 0,
            kind,
            scope: scope(linkage),
            weak: false,
            section: SymbolSection::Undefined,
            flags: SymbolFlags::None,
        })
    }

    /// The symbol for a new declaration of `name`: the undefined symbol an earlier reference
    /// made, or a fresh one.
    fn declared_symbol(&mut self, name: &str, kind: SymbolKind, linkage: Linkage) -> Entry {
        let symbol = match self.extra_imports.remove(name) {
            Some(s) => {
                let sym = self.object.symbol_mut(s);
                sym.kind = kind;
                sym.scope = scope(linkage);
                s
            }
            None => self.new_symbol(name, kind, linkage),
        };
        Entry {
            symbol,
            defined: false,
        }
    }

    /// After a declaration: a new one gets its symbol; an import upgraded to a definition
    /// gets its symbol's new scope.
    fn after_declare(&mut self, entry: Entry, declared: Declared, linkage: Linkage) {
        if declared == Declared::Upgraded {
            self.object.symbol_mut(entry.symbol).scope = scope(linkage);
        }
    }

    /// Define function `id` with code the backend already produced for `signature`.
    pub fn define_compiled(
        &mut self,
        id: FuncId,
        signature: &Signature,
        code: kestrel_codegen::machinst::CompiledCode,
    ) -> Result<(), ObjectError> {
        self.define_code(id, signature, code, None)
    }

    /// [`Self::define_compiled`], with the source text's name and the function's line there.
    fn define_code(
        &mut self,
        id: FuncId,
        signature: &Signature,
        code: kestrel_codegen::machinst::CompiledCode,
        source: Option<(String, u32)>,
    ) -> Result<(), ObjectError> {
        let symbol = self
            .decls
            .check_define_function(id, signature, |e| e.defined)?
            .state
            .symbol;
        let text = self.object.section_id(StandardSection::Text);
        let at = self.object.add_symbol_data(symbol, text, &code.code, 16);
        for r in &code.relocs {
            let r_type = code_reloc(&*self.isa, r.kind).ok_or_else(|| ObjectError::Reloc {
                name: String::from_utf8_lossy(&self.object.symbol(symbol).name).into_owned(),
                kind: r.kind,
                target: self.isa.name(),
            })?;
            let target = self.symbol_for(&ir_name(&r.target));
            self.object.add_relocation(
                text,
                Relocation {
                    offset: at + u64::from(r.offset),
                    symbol: target,
                    addend: r.addend,
                    flags: RelocationFlags::Elf { r_type },
                },
            )?;
        }
        if let Some(section) = self.traps {
            for t in &code.traps {
                let mut entry = [0u8; 16];
                entry[8] = t.code.as_raw();
                let at = self.object.append_section_data(section, &entry, 8);
                self.object.add_relocation(
                    section,
                    Relocation {
                        offset: at,
                        symbol,
                        addend: i64::from(t.offset),
                        flags: RelocationFlags::Elf {
                            r_type: abs_reloc(&*self.isa, 8),
                        },
                    },
                )?;
            }
        }
        self.defined.push(DefinedFunction {
            symbol,
            len: code.code.len() as u32,
            unwind: code.unwind,
            lines: if self.debug_info {
                code.srclocs
            } else {
                Vec::new()
            },
            source,
        });
        self.decls.func_mut(id)?.state.defined = true;
        Ok(())
    }

    /// Lay out data object `id` in its section (see [`Module::define_data`]).
    fn place_data(&mut self, id: DataId, desc: &DataDescription) -> Result<(), ObjectError> {
        let decl = self.decls.check_define_data(id, desc, |e| e.defined)?;
        let (symbol, writable) = (decl.state.symbol, decl.writable);
        let align = desc.align.max(1);
        let section = match (&desc.init, writable, desc.relocs.is_empty()) {
            (DataInit::Zeros { .. }, true, _) => StandardSection::UninitializedData,
            (_, true, _) => StandardSection::Data,
            (_, false, true) => StandardSection::ReadOnlyData,
            (_, false, false) => StandardSection::ReadOnlyDataWithRel,
        };
        let section = self.object.section_id(section);
        let at = match &desc.init {
            DataInit::Zeros { size } if writable => {
                self.object
                    .add_symbol_bss(symbol, section, *size as u64, align)
            }
            DataInit::Zeros { size } => {
                self.object
                    .add_symbol_data(symbol, section, &vec![0; *size], align)
            }
            DataInit::Bytes(b) => self.object.add_symbol_data(symbol, section, b, align),
        };
        for r in &desc.relocs {
            let target = self.symbol_for(&r.target);
            self.object.add_relocation(
                section,
                Relocation {
                    offset: at + r.offset as u64,
                    symbol: target,
                    addend: r.addend,
                    flags: RelocationFlags::Elf {
                        r_type: abs_reloc(&*self.isa, 8),
                    },
                },
            )?;
        }
        self.decls.data_mut(id)?.state.defined = true;
        Ok(())
    }

    /// The symbol of a module name, or of an undeclared name (an undefined global).
    fn symbol_for(&mut self, name: &str) -> SymbolId {
        match self.decls.name(name) {
            Some(Name::Func(id)) => self.decls.funcs()[id.index()].state.symbol,
            Some(Name::Data(id)) => self.decls.data_objects()[id.index()].state.symbol,
            None => {
                if let Some(&s) = self.extra_imports.get(name) {
                    return s;
                }
                let symbol_name = c_library_name(name).unwrap_or(name);
                let s = self.new_symbol(symbol_name, SymbolKind::Unknown, Linkage::Import);
                self.extra_imports.insert(name.to_string(), s);
                s
            }
        }
    }

    /// The `.debug_*` sections for the defined functions.
    fn write_debug_info(&mut self) -> Result<(), ObjectError> {
        let comp_dir = std::env::current_dir()
            .map(|d| d.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut dwarf = DwarfBuilder::relocatable(&comp_dir);
        for (i, f) in self.defined.iter().enumerate() {
            let sym = self.object.symbol(f.symbol);
            let name = String::from_utf8_lossy(&sym.name).into_owned();
            let (file, decl_line) = match &f.source {
                Some((file, line)) => (file.as_str(), *line),
                None => (self.name.as_str(), 0),
            };
            dwarf.add_function(&DebugFunction {
                name: &name,
                file,
                decl_line,
                at: i as u64,
                len: f.len,
                lines: &f.lines,
                external: sym.scope != SymbolScope::Compilation,
            });
        }
        let sections = dwarf.finish();
        let ids: Vec<SectionId> = sections
            .iter()
            .map(|s| {
                let id = self.object.add_section(
                    Vec::new(),
                    s.name.as_bytes().to_vec(),
                    SectionKind::Debug,
                );
                self.object.append_section_data(id, &s.data, 1);
                id
            })
            .collect();
        for (s, &id) in sections.iter().zip(&ids) {
            for r in &s.relocs {
                let symbol = match r.target {
                    RelocTarget::Symbol(i) => self.defined[i].symbol,
                    RelocTarget::Section(name) => {
                        let k = sections
                            .iter()
                            .position(|t| t.name == name)
                            .expect("the DWARF writer refers only to sections it wrote");
                        self.object.section_symbol(ids[k])
                    }
                };
                let r_type = abs_reloc(&*self.isa, r.size);
                self.object.add_relocation(
                    id,
                    Relocation {
                        offset: u64::from(r.offset),
                        symbol,
                        addend: r.addend,
                        flags: RelocationFlags::Elf { r_type },
                    },
                )?;
            }
        }
        Ok(())
    }

    /// Write `.eh_frame` and the object file. Every declared local or exported function and
    /// data object must be defined.
    pub fn finish(mut self) -> Result<Vec<u8>, ObjectError> {
        let undefined = self
            .decls
            .funcs()
            .iter()
            .filter(|d| d.linkage.is_definition() && !d.state.defined)
            .map(|d| &d.name)
            .chain(
                self.decls
                    .data_objects()
                    .iter()
                    .filter(|d| d.linkage.is_definition() && !d.state.defined)
                    .map(|d| &d.name),
            )
            .next();
        if let Some(name) = undefined {
            return Err(ObjectError::Undefined { name: name.clone() });
        }
        if !self.defined.is_empty() {
            let mut builder = EhFrameBuilder::relocatable(self.isa.unwind_cie());
            for (i, f) in self.defined.iter().enumerate() {
                builder.add_function(i as u64, f.len, &f.unwind);
            }
            let (bytes, relocs) = builder.finish();
            let section = self.object.section_id(StandardSection::EhFrame);
            self.object.section_mut(section).flags = SectionFlags::Elf {
                sh_flags: u64::from(elf::SHF_ALLOC),
            };
            let at = self.object.append_section_data(section, &bytes, 8);
            for r in relocs {
                self.object.add_relocation(
                    section,
                    Relocation {
                        offset: at + u64::from(r.offset),
                        symbol: self.defined[r.symbol].symbol,
                        addend: r.addend,
                        flags: RelocationFlags::Elf {
                            r_type: self.isa.elf().pc_rel32,
                        },
                    },
                )?;
            }
        }
        if self.debug_info && !self.defined.is_empty() {
            self.write_debug_info()?;
        }
        // An empty `.note.GNU-stack`: the code needs no executable stack.
        self.object.add_section(
            Vec::new(),
            b".note.GNU-stack".to_vec(),
            SectionKind::Elf(elf::SHT_PROGBITS),
        );
        Ok(self.object.write()?)
    }
}

/// The C library function behind one of the backend's runtime helpers (which the JIT
/// supplies itself): objects refer to these, found in `libm` (link with `-lm`). The
/// 128-bit integer helpers (`__divti3`, ...) already have their libgcc names.
pub fn c_library_name(helper: &str) -> Option<&'static str> {
    Some(match helper {
        "CeilF32" => "ceilf",
        "CeilF64" => "ceil",
        "FloorF32" => "floorf",
        "FloorF64" => "floor",
        "TruncF32" => "truncf",
        "TruncF64" => "trunc",
        // Round half to even, whatever the rounding mode (C23, glibc 2.25).
        "NearestF32" => "roundevenf",
        "NearestF64" => "roundeven",
        "FmaF32" => "fmaf",
        "FmaF64" => "fma",
        _ => return None,
    })
}

fn scope(linkage: Linkage) -> SymbolScope {
    match linkage {
        Linkage::Local => SymbolScope::Compilation,
        Linkage::Export | Linkage::Import => SymbolScope::Dynamic,
    }
}

impl Module for ObjectModule {
    type Error = ObjectError;

    fn declare_function(
        &mut self,
        name: &str,
        linkage: Linkage,
        signature: &Signature,
    ) -> Result<FuncId, ObjectError> {
        let entry = self
            .decls
            .name(name)
            .is_none()
            .then(|| self.declared_symbol(name, SymbolKind::Text, linkage));
        let (id, declared) = self.decls.declare_function(
            name,
            linkage,
            signature,
            || entry.expect("made for a new name"),
            // An import is never defined here, so it can always become a definition.
            |_| true,
        )?;
        let entry = self.decls.funcs()[id.index()].state;
        self.after_declare(entry, declared, linkage);
        Ok(id)
    }

    fn declare_data(
        &mut self,
        name: &str,
        linkage: Linkage,
        writable: bool,
    ) -> Result<DataId, ObjectError> {
        let entry = self
            .decls
            .name(name)
            .is_none()
            .then(|| self.declared_symbol(name, SymbolKind::Data, linkage));
        let (id, declared) = self.decls.declare_data(
            name,
            linkage,
            writable,
            || entry.expect("made for a new name"),
            |e| !e.defined,
        )?;
        let entry = self.decls.data_objects()[id.index()].state;
        self.after_declare(entry, declared, linkage);
        Ok(id)
    }

    fn define_function(&mut self, id: FuncId, func: &Function) -> Result<(), ObjectError> {
        let code = self
            .isa
            .compile_function(func, &self.flags)
            .map_err(|error| ObjectError::Compile {
                name: ir_name(&func.name),
                error,
            })?;
        let source = func
            .source_map
            .as_deref()
            .map(|sm| (sm.file.to_string(), sm.function.line));
        self.define_code(id, &func.signature, code, source)
    }

    fn define_data(&mut self, id: DataId, data: &DataDescription) -> Result<(), ObjectError> {
        self.place_data(id, data)
    }
}
