//! What a module declares, decoded once from a validated binary: types, functions, imports,
//! globals, memories, tables, exports, the start function, element and data segments, and
//! the byte ranges of the function bodies (translated later, one by one), and the function
//! names of the `name` section.
//!
//! Contract. Requires: `bytes` passed [`crate::features::validate`]. Guarantees: indices in
//! the result are in range (the validator checked them); each function body is kept as its
//! byte range, not copied. Constructs validation let through but this decoder does not know
//! are [`WasmError::Unsupported`] with their offset.
//!
//! Cost: one pass over the sections, O(module size).

use std::collections::HashMap;

use wasmparser::{
    DataKind, ElementItems, ElementKind, ExternalKind, FuncType, KnownCustom, MemoryType, Operator,
    Parser, Payload, TableType, TypeRef, ValType,
};

use crate::error::WasmError;

/// One instruction of a constant expression.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ConstOp {
    I32(i32),
    I64(i64),
    F32(u32),
    F64(u64),
    /// The value of global `n` (an imported or earlier global).
    GlobalGet(u32),
    /// A null reference (of either kind: both are 0).
    RefNull,
    /// A reference to function `n`.
    RefFunc(u32),
    /// Extended constants: wrapping arithmetic on the two values on top.
    I32Add,
    I32Sub,
    I32Mul,
    I64Add,
    I64Sub,
    I64Mul,
}

/// A constant expression: a stack program of [`ConstOp`]s leaving one value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConstExpr(pub Vec<ConstOp>);

impl ConstExpr {
    /// The single reference function of `ref.func n` (what element segments list).
    pub fn ref_func(n: u32) -> ConstExpr {
        ConstExpr(vec![ConstOp::RefFunc(n)])
    }
}

/// A global defined or imported by the module.
#[derive(Clone, Debug)]
pub struct GlobalDecl {
    pub ty: ValType,
    pub mutable: bool,
    /// `None` for an imported global.
    pub init: Option<ConstExpr>,
}

/// Where an import comes from and what it is.
#[derive(Clone, Debug)]
pub struct ImportDecl {
    pub module: String,
    pub field: String,
    pub kind: ImportKind,
}

/// The kind of an import, with the index it takes in its index space.
#[derive(Clone, Debug)]
pub enum ImportKind {
    /// Function `index`, of type `type_index`.
    Func {
        index: u32,
        type_index: u32,
    },
    Global {
        index: u32,
    },
    Memory {
        index: u32,
        ty: MemoryType,
    },
    Table {
        index: u32,
        ty: TableType,
    },
}

/// When a segment is applied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SegmentMode {
    /// At instantiation, into table or memory `index` at `offset`; dropped afterwards.
    Active { index: u32, offset: ConstExpr },
    /// Only by `table.init` / `memory.init`.
    Passive,
    /// Never (declares functions `ref.func` may name); dropped at instantiation.
    Declared,
}

/// An element segment: references (each a constant: `ref.func`, `ref.null`, `global.get`).
#[derive(Clone, Debug)]
pub struct ElementSegment {
    pub mode: SegmentMode,
    pub items: Vec<ConstExpr>,
}

/// A data segment.
#[derive(Clone, Debug)]
pub struct DataSegment {
    pub mode: SegmentMode,
    pub bytes: std::ops::Range<usize>,
}

/// Everything a module declares; see the module docs.
#[derive(Clone, Debug, Default)]
pub struct ModuleInfo {
    /// Function types by type index.
    pub types: Vec<FuncType>,
    /// The canonical id of each type (`runtime::types::type_id`), by type index: taken
    /// while decoding, in type order, so a parallel translation neither waits on the
    /// process-wide registry nor makes the ids depend on which thread asked first.
    pub type_ids: Vec<u64>,
    /// The type index of each function, imported functions first.
    pub funcs: Vec<u32>,
    pub num_imported_funcs: u32,
    pub imports: Vec<ImportDecl>,
    /// Globals, imported first.
    pub globals: Vec<GlobalDecl>,
    pub num_imported_globals: u32,
    /// Memories, imported first.
    pub memories: Vec<MemoryType>,
    pub num_imported_memories: u32,
    /// Tables, imported first.
    pub tables: Vec<TableType>,
    pub num_imported_tables: u32,
    pub exports: Vec<(String, ExternalKind, u32)>,
    pub start: Option<u32>,
    pub elements: Vec<ElementSegment>,
    pub data: Vec<DataSegment>,
    /// Byte ranges of the defined functions' bodies (locals and code), in order.
    pub bodies: Vec<std::ops::Range<usize>>,
    /// Function names from the `name` custom section, by function index (for messages;
    /// a malformed name section is ignored, as the spec asks of custom sections).
    pub func_names: HashMap<u32, String>,
}

fn unsupported(offset: usize, feature: impl Into<String>) -> WasmError {
    WasmError::Unsupported {
        offset,
        feature: feature.into(),
    }
}

impl ModuleInfo {
    /// Decode a validated module; see the module docs.
    pub fn decode(bytes: &[u8]) -> Result<ModuleInfo, WasmError> {
        let mut m = ModuleInfo::default();
        for payload in Parser::new(0).parse_all(bytes) {
            match payload.map_err(WasmError::from_parser)? {
                Payload::TypeSection(r) => {
                    for ty in r.into_iter_err_on_gc_types() {
                        let ty = ty.map_err(WasmError::from_parser)?;
                        m.type_ids.push(crate::runtime::types::type_id(&ty));
                        m.types.push(ty);
                    }
                }
                Payload::ImportSection(r) => {
                    for imp in r.into_imports_with_offsets() {
                        let (offset, imp) = imp.map_err(WasmError::from_parser)?;
                        m.add_import(offset, imp)?;
                    }
                }
                Payload::FunctionSection(r) => {
                    for ty in r {
                        m.funcs.push(ty.map_err(WasmError::from_parser)?);
                    }
                }
                Payload::TableSection(r) => {
                    for t in r.into_iter_with_offsets() {
                        let (offset, t) = t.map_err(WasmError::from_parser)?;
                        if !matches!(t.init, wasmparser::TableInit::RefNull) {
                            return Err(unsupported(offset, "table initializer expressions"));
                        }
                        m.tables.push(t.ty);
                    }
                }
                Payload::MemorySection(r) => {
                    for mem in r {
                        m.memories.push(mem.map_err(WasmError::from_parser)?);
                    }
                }
                Payload::GlobalSection(r) => {
                    for g in r {
                        let g = g.map_err(WasmError::from_parser)?;
                        m.globals.push(GlobalDecl {
                            ty: g.ty.content_type,
                            mutable: g.ty.mutable,
                            init: Some(const_expr(&g.init_expr)?),
                        });
                    }
                }
                Payload::ExportSection(r) => {
                    for e in r {
                        let e = e.map_err(WasmError::from_parser)?;
                        m.exports.push((e.name.to_string(), e.kind, e.index));
                    }
                }
                Payload::StartSection { func, .. } => m.start = Some(func),
                Payload::ElementSection(r) => {
                    for e in r {
                        let e = e.map_err(WasmError::from_parser)?;
                        m.add_element(e)?;
                    }
                }
                Payload::DataSection(r) => {
                    for d in r {
                        let d = d.map_err(WasmError::from_parser)?;
                        let mode = match d.kind {
                            DataKind::Active {
                                memory_index,
                                offset_expr,
                            } => SegmentMode::Active {
                                index: memory_index,
                                offset: const_expr(&offset_expr)?,
                            },
                            DataKind::Passive => SegmentMode::Passive,
                        };
                        m.data.push(DataSegment {
                            mode,
                            bytes: d.range.end - d.data.len()..d.range.end,
                        });
                    }
                }
                Payload::CodeSectionEntry(body) => m.bodies.push(body.range()),
                Payload::CustomSection(c) => {
                    if let KnownCustom::Name(names) = c.as_known() {
                        m.func_names = function_names(names);
                    }
                }
                _ => {}
            }
        }
        Ok(m)
    }

    fn add_import(&mut self, offset: usize, imp: wasmparser::Import) -> Result<(), WasmError> {
        let kind = match imp.ty {
            TypeRef::Func(type_index) => {
                let index = self.funcs.len() as u32;
                self.funcs.push(type_index);
                self.num_imported_funcs += 1;
                ImportKind::Func { index, type_index }
            }
            TypeRef::Global(g) => {
                let index = self.globals.len() as u32;
                self.globals.push(GlobalDecl {
                    ty: g.content_type,
                    mutable: g.mutable,
                    init: None,
                });
                self.num_imported_globals += 1;
                ImportKind::Global { index }
            }
            TypeRef::Memory(mem) => {
                let index = self.memories.len() as u32;
                self.memories.push(mem);
                self.num_imported_memories += 1;
                ImportKind::Memory { index, ty: mem }
            }
            TypeRef::Table(ty) => {
                let index = self.tables.len() as u32;
                self.tables.push(ty);
                self.num_imported_tables += 1;
                ImportKind::Table { index, ty }
            }
            TypeRef::Tag(_) | TypeRef::FuncExact(_) => {
                return Err(unsupported(offset, "tag and exact-function imports"))
            }
        };
        self.imports.push(ImportDecl {
            module: imp.module.to_string(),
            field: imp.name.to_string(),
            kind,
        });
        Ok(())
    }

    fn add_element(&mut self, e: wasmparser::Element) -> Result<(), WasmError> {
        let mode = match e.kind {
            ElementKind::Active {
                table_index,
                offset_expr,
            } => SegmentMode::Active {
                index: table_index.unwrap_or(0),
                offset: const_expr(&offset_expr)?,
            },
            ElementKind::Passive => SegmentMode::Passive,
            ElementKind::Declared => SegmentMode::Declared,
        };
        let mut items = Vec::new();
        match e.items {
            ElementItems::Functions(r) => {
                for f in r {
                    items.push(ConstExpr::ref_func(f.map_err(WasmError::from_parser)?));
                }
            }
            ElementItems::Expressions(_, r) => {
                for expr in r {
                    items.push(const_expr(&expr.map_err(WasmError::from_parser)?)?);
                }
            }
        }
        self.elements.push(ElementSegment { mode, items });
        Ok(())
    }

    /// The type of function `index`.
    pub fn func_type(&self, index: u32) -> &FuncType {
        &self.types[self.funcs[index as usize] as usize]
    }

    /// Function `index` for a message: `$name (function N)` when the name section names it,
    /// else `function N`.
    pub fn describe_func(&self, index: u32) -> String {
        match self.func_names.get(&index) {
            Some(name) => format!("${name} (function {index})"),
            None => format!("function {index}"),
        }
    }
}

/// The function names of a name section; what decodes before a malformed part.
fn function_names(reader: wasmparser::NameSectionReader) -> HashMap<u32, String> {
    let mut names = HashMap::new();
    for subsection in reader {
        let Ok(wasmparser::Name::Function(map)) = subsection else {
            continue;
        };
        for naming in map.into_iter().map_while(Result::ok) {
            names.insert(naming.index, naming.name.to_string());
        }
    }
    names
}

/// Decode a constant expression.
pub fn const_expr(expr: &wasmparser::ConstExpr) -> Result<ConstExpr, WasmError> {
    let mut r = expr.get_operators_reader();
    let mut ops = Vec::new();
    loop {
        let offset = r.original_position();
        let op = match r.read().map_err(WasmError::from_parser)? {
            Operator::End => return Ok(ConstExpr(ops)),
            Operator::I32Const { value } => ConstOp::I32(value),
            Operator::I64Const { value } => ConstOp::I64(value),
            Operator::F32Const { value } => ConstOp::F32(value.bits()),
            Operator::F64Const { value } => ConstOp::F64(value.bits()),
            Operator::GlobalGet { global_index } => ConstOp::GlobalGet(global_index),
            Operator::RefNull { .. } => ConstOp::RefNull,
            Operator::RefFunc { function_index } => ConstOp::RefFunc(function_index),
            Operator::I32Add => ConstOp::I32Add,
            Operator::I32Sub => ConstOp::I32Sub,
            Operator::I32Mul => ConstOp::I32Mul,
            Operator::I64Add => ConstOp::I64Add,
            Operator::I64Sub => ConstOp::I64Sub,
            Operator::I64Mul => ConstOp::I64Mul,
            other => {
                return Err(unsupported(
                    offset,
                    format!("constant expression {other:?}"),
                ))
            }
        };
        ops.push(op);
    }
}
