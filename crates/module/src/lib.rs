//! The module interface shared by Kestrel's JIT (`kestrel-jit`) and object writer
//! (`kestrel-object`): declare functions and data, define them, then finish (place and link
//! in memory, or write a relocatable object). A front end written against [`Module`] targets
//! either with the same code:
//!
//! ```text
//! fn build<M: Module>(m: &mut M, f: &Function) -> Result<FuncId, M::Error> {
//!     let id = m.declare_function("f", Linkage::Export, &f.signature)?;
//!     m.define_function(id, f)?;
//!     Ok(id)
//! }
//! ```
//!
//! Names form one namespace per module: a name is a function or a data object, never both.
//! IR references to a symbol (`call`, `func_addr`, `symbol_value`) use the same spelling: `%name`
//! is `name`, a user name `u1:2` is `u1:2` (see [`ir_name`]).
//!
//! Also here, because both back ends need them: [`eh_frame`], the `.eh_frame` writer that
//! turns the code generator's unwind records into DWARF call-frame information, and
//! [`debug_info`], the DWARF writer (functions and line tables) for objects and for the GDB
//! JIT interface.

pub mod debug_info;
pub mod decls;
pub mod eh_frame;
pub mod section_writer;

pub use decls::{DeclError, Declarations, Declared};

use kestrel_ir::{Function, FunctionName, Signature};

/// A function declared in a module, by declaration order among functions.
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct FuncId(u32);

/// A data object declared in a module, by declaration order among data objects.
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct DataId(u32);

macro_rules! id_methods {
    ($id:ident, $what:literal) => {
        impl $id {
            /// The id of the `index`-th declaration.
            pub fn from_index(index: usize) -> $id {
                $id(u32::try_from(index).expect(concat!("more than 2^32 ", $what)))
            }

            /// The declaration index.
            pub fn as_u32(self) -> u32 {
                self.0
            }

            /// The declaration index, for indexing.
            pub fn index(self) -> usize {
                self.0 as usize
            }
        }
    };
}
id_methods!(FuncId, "functions");
id_methods!(DataId, "data objects");

/// Where a declared function or data object is defined, and who sees it.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum Linkage {
    /// Defined elsewhere: the host process (JIT) or another object file (the linker).
    Import,
    /// Defined in this module and visible only inside it (a local symbol in an object).
    Local,
    /// Defined in this module and visible outside it (a global symbol in an object; in the
    /// JIT, the same as `Local`).
    Export,
}

impl Linkage {
    /// Whether this module supplies the definition.
    pub fn is_definition(self) -> bool {
        !matches!(self, Linkage::Import)
    }
}

/// The contents of a data object.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum DataInit {
    /// `size` zero bytes (`.bss` in an object).
    Zeros { size: usize },
    /// These bytes.
    Bytes(Vec<u8>),
}

impl DataInit {
    /// Size in bytes.
    pub fn len(&self) -> usize {
        match self {
            DataInit::Zeros { size } => *size,
            DataInit::Bytes(b) => b.len(),
        }
    }

    /// Whether the object is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// At `offset` in a data object, store the 8-byte address of `target` plus `addend`.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct DataReloc {
    pub offset: usize,
    /// A function or data object of the module, or an imported symbol, by module name.
    pub target: String,
    pub addend: i64,
}

/// A data object's definition.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct DataDescription {
    pub init: DataInit,
    /// Alignment in bytes (a power of two; 1 when 0).
    pub align: u64,
    /// Addresses to store into the object once they are known.
    pub relocs: Vec<DataReloc>,
}

impl DataDescription {
    /// Read-write or read-only data with these bytes, 8-byte aligned, no relocations.
    pub fn bytes(bytes: impl Into<Vec<u8>>) -> Self {
        DataDescription {
            init: DataInit::Bytes(bytes.into()),
            align: 8,
            relocs: Vec::new(),
        }
    }

    /// `size` zero bytes, 8-byte aligned.
    pub fn zeros(size: usize) -> Self {
        DataDescription {
            init: DataInit::Zeros { size },
            align: 8,
            relocs: Vec::new(),
        }
    }

    /// Add a relocation: the address of `target` + `addend` at `offset`.
    pub fn with_reloc(mut self, offset: usize, target: impl Into<String>, addend: i64) -> Self {
        self.relocs.push(DataReloc {
            offset,
            target: target.into(),
            addend,
        });
        self
    }

    /// Check the description itself: relocations inside the object, a power-of-two
    /// alignment, and no relocation in zero-initialized data. Returns the problem.
    pub fn check(&self) -> Result<(), String> {
        if self.align != 0 && !self.align.is_power_of_two() {
            return Err(format!("alignment {} is not a power of two", self.align));
        }
        for r in &self.relocs {
            if matches!(self.init, DataInit::Zeros { .. }) {
                return Err(format!(
                    "relocation at {} in zero-initialized data (give the bytes)",
                    r.offset
                ));
            }
            if r.offset
                .checked_add(8)
                .is_none_or(|end| end > self.init.len())
            {
                return Err(format!(
                    "relocation at {} does not fit in {} bytes",
                    r.offset,
                    self.init.len()
                ));
            }
        }
        Ok(())
    }
}

/// What both the JIT and the object writer offer a front end.
pub trait Module {
    /// The module's error type.
    type Error: std::error::Error + Send + Sync + 'static;

    /// Declare function `name`. Declaring it again with the same signature returns the same
    /// id; a definition (`Local`/`Export`) upgrades an earlier `Import` not yet defined.
    fn declare_function(
        &mut self,
        name: &str,
        linkage: Linkage,
        signature: &Signature,
    ) -> Result<FuncId, Self::Error>;

    /// Declare data object `name`; `writable` data may be stored to at run time.
    fn declare_data(
        &mut self,
        name: &str,
        linkage: Linkage,
        writable: bool,
    ) -> Result<DataId, Self::Error>;

    /// Compile `func` for the module's target and define function `id` with it.
    fn define_function(&mut self, id: FuncId, func: &Function) -> Result<(), Self::Error>;

    /// Define data object `id`.
    fn define_data(&mut self, id: DataId, data: &DataDescription) -> Result<(), Self::Error>;
}

/// The module name of an IR name: `%name` is `name`, `u1:2` stays `u1:2`.
pub fn ir_name(name: &FunctionName) -> String {
    with_ir_name(name, str::to_string)
}

/// `f` of [`ir_name`]`(name)`, without allocating it: a JIT or object module looks up every
/// call target this way, serially, so the string is spelled on the stack (and without the
/// formatting machinery).
pub fn with_ir_name<R>(name: &FunctionName, f: impl FnOnce(&str) -> R) -> R {
    match name {
        FunctionName::Named(n) => f(n),
        FunctionName::User { namespace, index } => {
            let (mut ns, mut ix) = (itoa::Buffer::new(), itoa::Buffer::new());
            let parts = [
                "u".as_bytes(),
                ns.format(*namespace).as_bytes(),
                b":",
                ix.format(*index).as_bytes(),
            ];
            // `u`, `:` and two `u32`s of at most ten digits.
            let mut spelled = [0u8; 22];
            let mut len = 0;
            for part in parts {
                spelled[len..len + part.len()].copy_from_slice(part);
                len += part.len();
            }
            f(std::str::from_utf8(&spelled[..len]).expect("ASCII digits"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_names_are_spelled_as_the_ir_prints_them() {
        for (namespace, index) in [(0, 0), (0, 7), (1, 2), (12, 345_678), (u32::MAX, u32::MAX)] {
            let name = FunctionName::User { namespace, index };
            assert_eq!(ir_name(&name), name.to_string());
        }
        assert_eq!(ir_name(&FunctionName::Named("memcpy".into())), "memcpy");
        let longest = FunctionName::User {
            namespace: u32::MAX,
            index: u32::MAX,
        };
        assert_eq!(with_ir_name(&longest, str::len), 22);
    }
}
