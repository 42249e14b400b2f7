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
//!   `kestrel_module::eh_frame`).
//! - **Symbols.** `Export` is a global symbol (default visibility), `Local` a local one,
//!   `Import` an undefined global. A name the code refers to without declaring it (a
//!   library call such as `fmod`) becomes an undefined global too; the backend's float
//!   helpers become their C library names ([`c_library_name`]: link with `-lm`).
//! - **Relocations** (x86-64 psABI): calls `R_X86_64_PLT32`, PC-relative addresses
//!   (colocated `func_addr`/`symbol_value`) `R_X86_64_PC32`, GOT loads
//!   `R_X86_64_REX_GOTPCRELX`, absolute addresses `R_X86_64_64`/`R_X86_64_32`, FDE pointers
//!   `R_X86_64_PC32`. So the output links into position-independent executables.
//! - **Errors, never panics:** redefinition, an import defined, a function/data name clash,
//!   an undefined local at `finish`, a signature mismatch, a compile error (with the name).
//!
//! Cost: O(code + data + relocations) plus the compiler's own cost per function.

use std::collections::HashMap;

use kestrel_codegen::isa::x64::{Flags, X64Backend};
use kestrel_codegen::machinst::buffer::RelocKind;
use kestrel_codegen::machinst::unwind::UnwindOp;
use kestrel_codegen::machinst::CodegenError;
use kestrel_ir::{Function, Signature};
use kestrel_module::eh_frame::EhFrameBuilder;
pub use kestrel_module::{
    ir_name, DataDescription, DataId, DataInit, DataReloc, FuncId, Linkage, Module,
};
use object::write::{
    Object, Relocation, SectionId, StandardSection, Symbol, SymbolId, SymbolSection,
};
use object::{
    elf, Architecture, BinaryFormat, Endianness, RelocationFlags, SectionFlags, SectionKind,
    SymbolFlags, SymbolKind, SymbolScope,
};

/// Why building the object failed.
#[derive(Debug, thiserror::Error)]
pub enum ObjectError {
    #[error("function `{name}` could not be compiled: {error}")]
    Compile { name: String, error: CodegenError },
    #[error("`{name}` is already declared as {declared}")]
    NameKind {
        name: String,
        declared: &'static str,
    },
    #[error("function `{name}` was declared before with signature {previous}; it cannot be redeclared with {new}")]
    IncompatibleSignature {
        name: String,
        previous: Box<Signature>,
        new: Box<Signature>,
    },
    #[error(
        "function `{name}` is defined with signature {defined} but was declared with {declared}"
    )]
    SignatureMismatch {
        name: String,
        declared: Box<Signature>,
        defined: Box<Signature>,
    },
    #[error("`{name}` is already defined")]
    AlreadyDefined { name: String },
    #[error("`{name}` is an import; imports are defined elsewhere")]
    DefineImport { name: String },
    #[error("`{name}` is declared local to this object but never defined")]
    Undefined { name: String },
    #[error("data object `{name}`: {problem}")]
    BadData { name: String, problem: String },
    #[error("{0} does not belong to this module")]
    BadId(String),
    #[error("writing the object: {0}")]
    Write(#[from] object::write::Error),
}

/// Configuration of an object module.
#[derive(Clone, Debug)]
pub struct ObjectBuilder {
    name: String,
    flags: Flags,
    trap_table: bool,
}

impl ObjectBuilder {
    /// An x86-64 ELF object; `name` is its file symbol (the source name).
    pub fn new(name: impl Into<String>) -> Self {
        ObjectBuilder {
            name: name.into(),
            flags: Flags::default(),
            trap_table: false,
        }
    }

    /// Also emit the trap table: section `kestrel_traps`, one 16-byte entry per trap site
    /// (`u64` address, `u8` trap code, 7 bytes of padding), writable so its absolute
    /// relocations need no text relocation. The linker defines `__start_kestrel_traps` and
    /// `__stop_kestrel_traps` around it, so a signal handler can map a faulting `rip` to its
    /// trap code, as the JIT does.
    pub fn trap_table(mut self, on: bool) -> Self {
        self.trap_table = on;
        self
    }

    /// Compile with these flags (target CPU features, checks).
    pub fn flags(mut self, flags: Flags) -> Self {
        self.flags = flags;
        self
    }
}

struct FuncDecl {
    name: String,
    linkage: Linkage,
    signature: Signature,
    symbol: SymbolId,
    defined: bool,
}

struct DataDecl {
    name: String,
    linkage: Linkage,
    writable: bool,
    symbol: SymbolId,
    defined: bool,
}

#[derive(Copy, Clone)]
enum Name {
    Func(FuncId),
    Data(DataId),
}

/// A function's call-frame rule changes by code offset.
type UnwindRecords = Vec<(u32, UnwindOp)>;

/// A relocatable object being built.
pub struct ObjectModule {
    object: Object<'static>,
    flags: Flags,
    funcs: Vec<FuncDecl>,
    data: Vec<DataDecl>,
    names: HashMap<String, Name>,
    /// Undeclared names the code refers to (library calls), as undefined symbols.
    extra_imports: HashMap<String, SymbolId>,
    /// Per defined function: its symbol, code length and unwind records, for `.eh_frame`.
    unwind: Vec<(SymbolId, u32, UnwindRecords)>,
    /// The trap table section, when asked for.
    traps: Option<SectionId>,
}

impl ObjectModule {
    /// An empty module.
    pub fn new(builder: ObjectBuilder) -> Self {
        let mut object = Object::new(BinaryFormat::Elf, Architecture::X86_64, Endianness::Little);
        object.add_file_symbol(builder.name.into_bytes());
        let traps = builder
            .trap_table
            .then(|| object.add_section(Vec::new(), b"kestrel_traps".to_vec(), SectionKind::Data));
        ObjectModule {
            traps,
            object,
            flags: builder.flags,
            funcs: Vec::new(),
            data: Vec::new(),
            names: HashMap::new(),
            extra_imports: HashMap::new(),
            unwind: Vec::new(),
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

    /// Set the linkage of a symbol not yet placed (an import upgraded to a definition).
    fn relink(&mut self, symbol: SymbolId, linkage: Linkage) {
        self.object.symbol_mut(symbol).scope = scope(linkage);
    }

    /// Declare function `name` (see [`Module::declare_function`]).
    pub fn declare_function(
        &mut self,
        name: &str,
        linkage: Linkage,
        signature: &Signature,
    ) -> Result<FuncId, ObjectError> {
        match self.names.get(name) {
            Some(&Name::Func(id)) => {
                let decl = &self.funcs[id.index()];
                if decl.signature != *signature {
                    return Err(ObjectError::IncompatibleSignature {
                        name: name.to_string(),
                        previous: Box::new(decl.signature.clone()),
                        new: Box::new(signature.clone()),
                    });
                }
                if linkage.is_definition() && decl.linkage == Linkage::Import {
                    let symbol = decl.symbol;
                    self.funcs[id.index()].linkage = linkage;
                    self.relink(symbol, linkage);
                }
                Ok(id)
            }
            Some(Name::Data(_)) => Err(ObjectError::NameKind {
                name: name.to_string(),
                declared: "a data object",
            }),
            None => {
                let symbol = match self.extra_imports.remove(name) {
                    Some(s) => {
                        self.relink(s, linkage);
                        self.object.symbol_mut(s).kind = SymbolKind::Text;
                        s
                    }
                    None => self.new_symbol(name, SymbolKind::Text, linkage),
                };
                let id = FuncId::from_index(self.funcs.len());
                self.funcs.push(FuncDecl {
                    name: name.to_string(),
                    linkage,
                    signature: signature.clone(),
                    symbol,
                    defined: false,
                });
                self.names.insert(name.to_string(), Name::Func(id));
                Ok(id)
            }
        }
    }

    /// Declare data object `name` (see [`Module::declare_data`]).
    pub fn declare_data(
        &mut self,
        name: &str,
        linkage: Linkage,
        writable: bool,
    ) -> Result<DataId, ObjectError> {
        match self.names.get(name) {
            Some(&Name::Data(id)) => {
                let decl = &mut self.data[id.index()];
                decl.writable |= writable;
                if linkage.is_definition() && decl.linkage == Linkage::Import {
                    decl.linkage = linkage;
                    let symbol = decl.symbol;
                    self.relink(symbol, linkage);
                }
                Ok(id)
            }
            Some(Name::Func(_)) => Err(ObjectError::NameKind {
                name: name.to_string(),
                declared: "a function",
            }),
            None => {
                let symbol = match self.extra_imports.remove(name) {
                    Some(s) => {
                        self.relink(s, linkage);
                        self.object.symbol_mut(s).kind = SymbolKind::Data;
                        s
                    }
                    None => self.new_symbol(name, SymbolKind::Data, linkage),
                };
                let id = DataId::from_index(self.data.len());
                self.data.push(DataDecl {
                    name: name.to_string(),
                    linkage,
                    writable,
                    symbol,
                    defined: false,
                });
                self.names.insert(name.to_string(), Name::Data(id));
                Ok(id)
            }
        }
    }

    /// Define function `id` with code the backend already produced for `signature`.
    pub fn define_compiled(
        &mut self,
        id: FuncId,
        signature: &Signature,
        code: kestrel_codegen::machinst::CompiledCode,
    ) -> Result<(), ObjectError> {
        let decl = self
            .funcs
            .get(id.index())
            .ok_or_else(|| ObjectError::BadId(format!("{id:?}")))?;
        let name = || decl.name.clone();
        if decl.linkage == Linkage::Import {
            return Err(ObjectError::DefineImport { name: name() });
        }
        if decl.defined {
            return Err(ObjectError::AlreadyDefined { name: name() });
        }
        if decl.signature != *signature {
            return Err(ObjectError::SignatureMismatch {
                name: name(),
                declared: Box::new(decl.signature.clone()),
                defined: Box::new(signature.clone()),
            });
        }
        let symbol = decl.symbol;
        let text = self.object.section_id(StandardSection::Text);
        let at = self.object.add_symbol_data(symbol, text, &code.code, 16);
        for r in &code.relocs {
            let target = self.symbol_for(&ir_name(&r.target));
            let r_type = match r.kind {
                RelocKind::Abs4 => elf::R_X86_64_32,
                RelocKind::Abs8 => elf::R_X86_64_64,
                RelocKind::PcRel4 => elf::R_X86_64_PC32,
                RelocKind::CallPcRel4 => elf::R_X86_64_PLT32,
                RelocKind::GotPcRel4 => elf::R_X86_64_REX_GOTPCRELX,
            };
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
                            r_type: elf::R_X86_64_64,
                        },
                    },
                )?;
            }
        }
        self.unwind
            .push((symbol, code.code.len() as u32, code.unwind));
        self.funcs[id.index()].defined = true;
        Ok(())
    }

    /// Define data object `id` (see [`Module::define_data`]).
    pub fn define_data(&mut self, id: DataId, desc: &DataDescription) -> Result<(), ObjectError> {
        let decl = self
            .data
            .get(id.index())
            .ok_or_else(|| ObjectError::BadId(format!("{id:?}")))?;
        let name = || decl.name.clone();
        if decl.linkage == Linkage::Import {
            return Err(ObjectError::DefineImport { name: name() });
        }
        if decl.defined {
            return Err(ObjectError::AlreadyDefined { name: name() });
        }
        desc.check().map_err(|problem| ObjectError::BadData {
            name: name(),
            problem,
        })?;
        let (symbol, writable) = (decl.symbol, decl.writable);
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
                        r_type: elf::R_X86_64_64,
                    },
                },
            )?;
        }
        self.data[id.index()].defined = true;
        Ok(())
    }

    /// The symbol of a module name, or of an undeclared name (an undefined global).
    fn symbol_for(&mut self, name: &str) -> SymbolId {
        match self.names.get(name) {
            Some(&Name::Func(id)) => self.funcs[id.index()].symbol,
            Some(&Name::Data(id)) => self.data[id.index()].symbol,
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

    /// Write `.eh_frame` and the object file. Every declared local or exported function and
    /// data object must be defined.
    pub fn finish(mut self) -> Result<Vec<u8>, ObjectError> {
        let undefined = self
            .funcs
            .iter()
            .filter(|d| d.linkage.is_definition() && !d.defined)
            .map(|d| &d.name)
            .chain(
                self.data
                    .iter()
                    .filter(|d| d.linkage.is_definition() && !d.defined)
                    .map(|d| &d.name),
            )
            .next();
        if let Some(name) = undefined {
            return Err(ObjectError::Undefined { name: name.clone() });
        }
        if !self.unwind.is_empty() {
            let mut builder = EhFrameBuilder::relocatable(&kestrel_codegen::isa::x64::unwind::CIE);
            for (i, (_, len, ops)) in self.unwind.iter().enumerate() {
                builder.add_function(i as u64, *len, ops);
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
                        symbol: self.unwind[r.symbol].0,
                        addend: r.addend,
                        flags: RelocationFlags::Elf {
                            r_type: elf::R_X86_64_PC32,
                        },
                    },
                )?;
            }
        }
        // An empty `.note.GNU-stack`: the code needs no executable stack.
        self.object.add_section(
            Vec::new(),
            b".note.GNU-stack".to_vec(),
            SectionKind::Elf(elf::SHT_PROGBITS),
        );
        Ok(self.object.write()?)
    }

    /// The text section id (for tests that read the object back).
    pub fn text_section(&mut self) -> SectionId {
        self.object.section_id(StandardSection::Text)
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
        ObjectModule::declare_function(self, name, linkage, signature)
    }

    fn declare_data(
        &mut self,
        name: &str,
        linkage: Linkage,
        writable: bool,
    ) -> Result<DataId, ObjectError> {
        ObjectModule::declare_data(self, name, linkage, writable)
    }

    fn define_function(&mut self, id: FuncId, func: &Function) -> Result<(), ObjectError> {
        let code = X64Backend
            .compile_function(func, &self.flags)
            .map_err(|error| ObjectError::Compile {
                name: ir_name(&func.name),
                error,
            })?;
        self.define_compiled(id, &func.signature, code)
    }

    fn define_data(&mut self, id: DataId, data: &DataDescription) -> Result<(), ObjectError> {
        ObjectModule::define_data(self, id, data)
    }
}
