//! The declarations of a module: one namespace of functions and data objects, the rules for
//! declaring a name again, and the checks before a definition. Shared by the JIT and the
//! object writer, which keep their own per-entry state (`F`, `D`) next to each declaration.
//!
//! Rules:
//! - a name is a function or a data object, never both;
//! - declaring a function again needs the same signature; declaring either again with a
//!   definition linkage (`Local`/`Export`) upgrades an `Import` that the back end says is
//!   still open (not yet resolved), else it is `AlreadyDefined`;
//! - a definition needs a declared, non-import, not yet defined entry (and for a function,
//!   the declared signature; for data, a description that passes `DataDescription::check`).
//!
//! Cost: one hash-map lookup per declaration or name query; ids index vectors.

use rustc_hash::FxHashMap;

use kestrel_ir::Signature;

use crate::{DataDescription, DataId, FuncId, Linkage};

/// A declared function with the back end's state for it.
pub struct FuncDecl<S> {
    pub name: String,
    pub linkage: Linkage,
    pub signature: Signature,
    pub state: S,
}

/// A declared data object with the back end's state for it.
pub struct DataDecl<S> {
    pub name: String,
    pub linkage: Linkage,
    pub writable: bool,
    pub state: S,
}

/// What a module name stands for.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Name {
    Func(FuncId),
    Data(DataId),
}

/// What a declaration did.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Declared {
    /// A new entry.
    New,
    /// The entry existed unchanged.
    Again,
    /// An open import became a definition (the back end may need to update its symbol).
    Upgraded,
}

/// A declaration or definition the module rules out.
#[derive(Debug, thiserror::Error)]
pub enum DeclError {
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
    #[error("`{name}` is an import; imports are resolved from symbols, not defined")]
    DefineImport { name: String },
    #[error("`{name}` is already declared as {declared}")]
    NameKind { name: String, declared: &'static str },
    #[error("data object `{name}`: {problem}")]
    BadData { name: String, problem: String },
    #[error("{id:?} does not belong to this module")]
    BadFuncId { id: FuncId },
    #[error("{id:?} does not belong to this module")]
    BadDataId { id: DataId },
}

/// The declarations, with per-entry back-end state `F` (functions) and `D` (data).
pub struct Declarations<F, D> {
    funcs: Vec<FuncDecl<F>>,
    data: Vec<DataDecl<D>>,
    /// Keyed by the embedder's names; a fast hash (nothing adversarial is hashed here).
    names: FxHashMap<String, Name>,
}

impl<F, D> Default for Declarations<F, D> {
    fn default() -> Self {
        Declarations {
            funcs: Vec::new(),
            data: Vec::new(),
            names: FxHashMap::default(),
        }
    }
}

impl<F, D> Declarations<F, D> {
    /// Declare function `name`; `state` makes the state of a new entry, `open` says whether an
    /// existing import may still become a definition.
    pub fn declare_function(
        &mut self,
        name: &str,
        linkage: Linkage,
        signature: &Signature,
        state: impl FnOnce() -> F,
        open: impl FnOnce(&F) -> bool,
    ) -> Result<(FuncId, Declared), DeclError> {
        match self.names.get(name) {
            Some(&Name::Func(id)) => {
                let decl = &mut self.funcs[id.index()];
                if decl.signature != *signature {
                    return Err(DeclError::IncompatibleSignature {
                        name: name.to_string(),
                        previous: Box::new(decl.signature.clone()),
                        new: Box::new(signature.clone()),
                    });
                }
                upgrade(name, &mut decl.linkage, linkage, || open(&decl.state)).map(|d| (id, d))
            }
            Some(Name::Data(_)) => Err(DeclError::NameKind {
                name: name.to_string(),
                declared: "a data object",
            }),
            None => {
                let id = FuncId::from_index(self.funcs.len());
                self.funcs.push(FuncDecl {
                    name: name.to_string(),
                    linkage,
                    signature: signature.clone(),
                    state: state(),
                });
                self.names.insert(name.to_string(), Name::Func(id));
                Ok((id, Declared::New))
            }
        }
    }

    /// Declare data object `name` (see [`declare_function`](Self::declare_function));
    /// declaring it again `writable` makes it writable if it is not defined yet.
    pub fn declare_data(
        &mut self,
        name: &str,
        linkage: Linkage,
        writable: bool,
        state: impl FnOnce() -> D,
        open: impl Fn(&D) -> bool,
    ) -> Result<(DataId, Declared), DeclError> {
        match self.names.get(name) {
            Some(&Name::Data(id)) => {
                let decl = &mut self.data[id.index()];
                if writable && !decl.writable {
                    if !open(&decl.state) {
                        return Err(DeclError::AlreadyDefined {
                            name: name.to_string(),
                        });
                    }
                    decl.writable = true;
                }
                upgrade(name, &mut decl.linkage, linkage, || open(&decl.state)).map(|d| (id, d))
            }
            Some(Name::Func(_)) => Err(DeclError::NameKind {
                name: name.to_string(),
                declared: "a function",
            }),
            None => {
                let id = DataId::from_index(self.data.len());
                self.data.push(DataDecl {
                    name: name.to_string(),
                    linkage,
                    writable,
                    state: state(),
                });
                self.names.insert(name.to_string(), Name::Data(id));
                Ok((id, Declared::New))
            }
        }
    }

    /// The function `id`, ready to be defined with code for `signature`; `defined` says
    /// whether the back end already holds a definition.
    pub fn check_define_function(
        &self,
        id: FuncId,
        signature: &Signature,
        defined: impl FnOnce(&F) -> bool,
    ) -> Result<&FuncDecl<F>, DeclError> {
        let decl = self.func(id)?;
        let name = || decl.name.clone();
        if decl.linkage == Linkage::Import {
            return Err(DeclError::DefineImport { name: name() });
        }
        if defined(&decl.state) {
            return Err(DeclError::AlreadyDefined { name: name() });
        }
        if decl.signature != *signature {
            return Err(DeclError::SignatureMismatch {
                name: name(),
                declared: Box::new(decl.signature.clone()),
                defined: Box::new(signature.clone()),
            });
        }
        Ok(decl)
    }

    /// The data object `id`, ready to be defined with `desc`.
    pub fn check_define_data(
        &self,
        id: DataId,
        desc: &DataDescription,
        defined: impl FnOnce(&D) -> bool,
    ) -> Result<&DataDecl<D>, DeclError> {
        let decl = self.data(id)?;
        let name = || decl.name.clone();
        if decl.linkage == Linkage::Import {
            return Err(DeclError::DefineImport { name: name() });
        }
        if defined(&decl.state) {
            return Err(DeclError::AlreadyDefined { name: name() });
        }
        desc.check().map_err(|problem| DeclError::BadData {
            name: name(),
            problem,
        })?;
        Ok(decl)
    }

    /// What `name` is declared as.
    pub fn name(&self, name: &str) -> Option<Name> {
        self.names.get(name).copied()
    }

    pub fn func(&self, id: FuncId) -> Result<&FuncDecl<F>, DeclError> {
        self.funcs
            .get(id.index())
            .ok_or(DeclError::BadFuncId { id })
    }

    pub fn func_mut(&mut self, id: FuncId) -> Result<&mut FuncDecl<F>, DeclError> {
        self.funcs
            .get_mut(id.index())
            .ok_or(DeclError::BadFuncId { id })
    }

    pub fn data(&self, id: DataId) -> Result<&DataDecl<D>, DeclError> {
        self.data.get(id.index()).ok_or(DeclError::BadDataId { id })
    }

    pub fn data_mut(&mut self, id: DataId) -> Result<&mut DataDecl<D>, DeclError> {
        self.data
            .get_mut(id.index())
            .ok_or(DeclError::BadDataId { id })
    }

    /// Every function, by id order.
    pub fn funcs(&self) -> &[FuncDecl<F>] {
        &self.funcs
    }

    /// Every function, mutably (the back end updates its state; names stay).
    pub fn funcs_mut(&mut self) -> &mut [FuncDecl<F>] {
        &mut self.funcs
    }

    /// Every data object, by id order.
    pub fn data_objects(&self) -> &[DataDecl<D>] {
        &self.data
    }

    /// Every data object, mutably.
    pub fn data_objects_mut(&mut self) -> &mut [DataDecl<D>] {
        &mut self.data
    }
}

/// A repeated declaration: a definition linkage upgrades an open import.
fn upgrade(
    name: &str,
    current: &mut Linkage,
    requested: Linkage,
    open: impl FnOnce() -> bool,
) -> Result<Declared, DeclError> {
    if requested.is_definition() && *current == Linkage::Import {
        if !open() {
            return Err(DeclError::AlreadyDefined {
                name: name.to_string(),
            });
        }
        *current = requested;
        return Ok(Declared::Upgraded);
    }
    Ok(Declared::Again)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kestrel_ir::{AbiParam, CallConv, Type};

    fn sig(ty: Type) -> Signature {
        let mut s = Signature::new(CallConv::SystemV);
        s.params.push(AbiParam::new(ty));
        s
    }

    #[test]
    fn redeclaration_rules() {
        let mut d: Declarations<bool, bool> = Declarations::default();
        let (f, how) = d
            .declare_function("f", Linkage::Import, &sig(Type::I32), || false, |_| true)
            .unwrap();
        assert_eq!(how, Declared::New);
        let again = d.declare_function("f", Linkage::Import, &sig(Type::I32), || false, |_| true);
        assert_eq!(again.unwrap(), (f, Declared::Again));
        assert!(matches!(
            d.declare_function("f", Linkage::Local, &sig(Type::I64), || false, |_| true),
            Err(DeclError::IncompatibleSignature { .. })
        ));
        // A resolved import cannot become a definition.
        assert!(matches!(
            d.declare_function("f", Linkage::Local, &sig(Type::I32), || false, |_| false),
            Err(DeclError::AlreadyDefined { .. })
        ));
        let up = d.declare_function("f", Linkage::Export, &sig(Type::I32), || false, |_| true);
        assert_eq!(up.unwrap(), (f, Declared::Upgraded));
        assert!(matches!(
            d.declare_data("f", Linkage::Local, false, || false, |_| true),
            Err(DeclError::NameKind { .. })
        ));
        assert!(d
            .check_define_function(f, &sig(Type::I32), |&done| done)
            .is_ok());
        assert!(matches!(
            d.check_define_function(f, &sig(Type::I64), |&done| done),
            Err(DeclError::SignatureMismatch { .. })
        ));
        assert!(matches!(
            d.check_define_function(f, &sig(Type::I32), |_| true),
            Err(DeclError::AlreadyDefined { .. })
        ));
        let (x, _) = d
            .declare_data("x", Linkage::Import, false, || false, |_| true)
            .unwrap();
        assert!(matches!(
            d.check_define_data(x, &DataDescription::zeros(8), |&done| done),
            Err(DeclError::DefineImport { .. })
        ));
        assert_eq!(d.name("x"), Some(Name::Data(x)));
        assert!(matches!(
            d.func(FuncId::from_index(9)),
            Err(DeclError::BadFuncId { .. })
        ));
    }
}
