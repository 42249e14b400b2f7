//! Looking up symbols of the running process.

use std::ffi::CString;

/// The address of `name` among the process's loaded objects (`dlsym(RTLD_DEFAULT, name)`).
pub(crate) fn lookup_process_symbol(name: &str) -> Option<usize> {
    let c_name = CString::new(name).ok()?;
    // SAFETY: `c_name` is a valid NUL-terminated string; dlsym only reads it.
    let addr = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c_name.as_ptr()) };
    (!addr.is_null()).then_some(addr as usize)
}
