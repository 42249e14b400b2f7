//! The runtime: instance contexts, linear memory, tables, globals, host functions, and calls
//! from the host into Wasm. See each file's contract; `vmctx.rs` defines the layout the
//! translator relies on.

pub mod externs;
pub mod func;
pub mod host;
pub mod instance;
pub(crate) mod libcalls;
pub mod memory;
mod reservation;
pub mod table;
pub mod types;
pub mod vmctx;

pub use externs::{Extern, Global, Imports, Memory, Table};
pub use func::{Func, InvokeError};
pub use instance::Instance;
