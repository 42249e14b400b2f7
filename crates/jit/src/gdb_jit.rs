//! Debug info for JIT code through GDB's JIT interface: each finalized function (with
//! [`JitBuilder::debug_info`](crate::JitBuilder::debug_info) on) is described by an in-memory
//! ELF image (its functions as symbols, DWARF line tables from `kestrel_module::debug_info`,
//! `.eh_frame` call-frame info) put on the list that `__jit_debug_descriptor` heads;
//! `__jit_debug_register_code`, where a debugger keeps a breakpoint, is called after each
//! change. With it, `gdb` names Kestrel functions in backtraces, shows their source lines,
//! and takes breakpoints on them.
//!
//! The image is a relocatable ELF whose `.text` section header carries the code's address
//! (`sh_addr`): GDB takes allocated sections of a JIT image at their recorded addresses, the
//! symbols are offsets into `.text`, and the DWARF holds final addresses, so nothing needs
//! relocating. The image holds a copy of the function's code; one image per function, so
//! freeing a function unregisters exactly its own.
//!
//! The list is process-wide (one per process, the protocol's symbols are global): a mutex
//! serializes its changes. Two copies of this crate in one process would both define the
//! symbols, which the linker refuses.
//!
//! Cost: O(code + source ranges) per function, only when enabled.

use std::ptr::{addr_of_mut, null_mut};
use std::sync::Mutex;

use crate::arch::host;
use crate::arch::host::CIE;
use kestrel_module::debug_info::{DebugFunction, DwarfBuilder};
use kestrel_module::eh_frame::EhFrameBuilder;
use object::write::{Object, Symbol, SymbolSection};
use object::{BinaryFormat, Endianness, SectionKind, SymbolFlags, SymbolKind};

use crate::CompiledFunction;

const JIT_NOACTION: u32 = 0;
const JIT_REGISTER_FN: u32 = 1;
const JIT_UNREGISTER_FN: u32 = 2;

/// One image on the debugger's list (the protocol's `jit_code_entry`).
#[repr(C)]
struct JitCodeEntry {
    next_entry: *mut JitCodeEntry,
    prev_entry: *mut JitCodeEntry,
    symfile_addr: *const u8,
    symfile_size: u64,
}

/// The list's head (the protocol's `jit_descriptor`).
#[repr(C)]
pub struct JitDescriptor {
    version: u32,
    action_flag: u32,
    relevant_entry: *mut JitCodeEntry,
    first_entry: *mut JitCodeEntry,
}

/// The head a debugger reads; changed only under [`LIST_LOCK`]. Its name is the
/// protocol's, which debuggers look up, hence lower case.
#[no_mangle]
#[allow(non_upper_case_globals)]
pub static mut __jit_debug_descriptor: JitDescriptor = JitDescriptor {
    version: 1,
    action_flag: JIT_NOACTION,
    relevant_entry: null_mut(),
    first_entry: null_mut(),
};

/// Called after each change of the list; a debugger stops here to read it.
#[no_mangle]
#[inline(never)]
pub extern "C" fn __jit_debug_register_code() {
    // Not empty, so the function keeps its own address. Without `nomem` the block counts
    // as reading and writing memory, so an optimized build may neither infer that this
    // function reads nothing nor delay the descriptor's updates past the call (the
    // debugger reads them when it stops here).
    // SAFETY: an empty asm block with no operands does nothing.
    unsafe { std::arch::asm!("", options(nostack, preserves_flags)) };
}

static LIST_LOCK: Mutex<()> = Mutex::new(());

/// A registered image; unregistered on drop.
pub(crate) struct GdbRegistration {
    entry: Box<JitCodeEntry>,
    _image: Box<[u8]>,
}

impl GdbRegistration {
    /// Describe the code `code` at address `base` (a function's), with `placed` functions
    /// `(address, name, code)`, and register the description.
    pub(crate) fn register(
        base: usize,
        code: &[u8],
        placed: &[(usize, &str, &CompiledFunction)],
    ) -> GdbRegistration {
        let image = image(base, code, placed).into_boxed_slice();
        let mut entry = Box::new(JitCodeEntry {
            next_entry: null_mut(),
            prev_entry: null_mut(),
            symfile_addr: image.as_ptr(),
            symfile_size: image.len() as u64,
        });
        let _guard = LIST_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        // SAFETY: the descriptor and the entries on its list are only changed under the
        // lock; `entry` is boxed, so its address is stable until it is unlinked in `drop`.
        unsafe {
            let desc = addr_of_mut!(__jit_debug_descriptor);
            let e: *mut JitCodeEntry = &mut *entry;
            (*e).next_entry = (*desc).first_entry;
            if let Some(first) = (*desc).first_entry.as_mut() {
                first.prev_entry = e;
            }
            (*desc).first_entry = e;
            (*desc).relevant_entry = e;
            (*desc).action_flag = JIT_REGISTER_FN;
            __jit_debug_register_code();
            (*desc).action_flag = JIT_NOACTION;
        }
        GdbRegistration {
            entry,
            _image: image,
        }
    }
}

impl Drop for GdbRegistration {
    fn drop(&mut self) {
        let _guard = LIST_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        // SAFETY: as in `register`; the entry is on the list, linked by `register`.
        unsafe {
            let desc = addr_of_mut!(__jit_debug_descriptor);
            let e: *mut JitCodeEntry = &mut *self.entry;
            if let Some(prev) = (*e).prev_entry.as_mut() {
                prev.next_entry = (*e).next_entry;
            } else {
                (*desc).first_entry = (*e).next_entry;
            }
            if let Some(next) = (*e).next_entry.as_mut() {
                next.prev_entry = (*e).prev_entry;
            }
            (*desc).relevant_entry = e;
            (*desc).action_flag = JIT_UNREGISTER_FN;
            __jit_debug_register_code();
            (*desc).action_flag = JIT_NOACTION;
        }
    }
}

// SAFETY: the entry and image are owned by the registration; the shared list is changed
// only under the lock.
unsafe impl Send for GdbRegistration {}
unsafe impl Sync for GdbRegistration {}

/// The ELF image describing code at `base` (see the module comment).
fn image(base: usize, code: &[u8], placed: &[(usize, &str, &CompiledFunction)]) -> Vec<u8> {
    let mut obj = Object::new(BinaryFormat::Elf, host::ELF_ARCH, Endianness::Little);
    let text = obj.add_section(Vec::new(), b".text".to_vec(), SectionKind::Text);
    obj.append_section_data(text, code, 16);
    for &(addr, name, f) in placed {
        obj.add_symbol(Symbol {
            name: name.as_bytes().to_vec(),
            value: (addr - base) as u64,
            size: f.code.len() as u64,
            kind: SymbolKind::Text,
            scope: object::SymbolScope::Compilation,
            weak: false,
            section: SymbolSection::Section(text),
            flags: SymbolFlags::None,
        });
    }
    let comp_dir = std::env::current_dir()
        .map(|d| d.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut dwarf = DwarfBuilder::absolute(&comp_dir);
    for &(addr, name, f) in placed {
        dwarf.add_function(&DebugFunction {
            name,
            file: f.lines.file.as_deref().unwrap_or("kestrel-jit"),
            decl_line: f.lines.decl_line,
            at: addr as u64,
            len: f.code.len() as u32,
            lines: &f.lines.ranges,
            external: true,
        });
    }
    // Call-frame info, so gdb unwinds these frames by their CFI rather than by guessing.
    let mut frames = EhFrameBuilder::absolute(&CIE);
    for &(addr, _, f) in placed {
        frames.add_function(addr as u64, f.code.len() as u32, &f.unwind);
    }
    let eh_frame = obj.add_section(Vec::new(), b".eh_frame".to_vec(), SectionKind::Debug);
    obj.append_section_data(eh_frame, &frames.finish().0, 8);
    for s in dwarf.finish() {
        let id = obj.add_section(Vec::new(), s.name.as_bytes().to_vec(), SectionKind::Debug);
        obj.append_section_data(id, &s.data, 1);
    }
    let mut bytes = obj
        .write()
        .expect("an object of code, symbols and debug sections is writable");
    set_section_address(&mut bytes, b".text", base as u64);
    bytes
}

/// Set the `sh_addr` of the section named `name` in the ELF64 little-endian image `elf`.
fn set_section_address(elf: &mut [u8], name: &[u8], addr: u64) {
    let u16_at = |b: &[u8], o: usize| u16::from_le_bytes([b[o], b[o + 1]]) as usize;
    let u32_at = |b: &[u8], o: usize| u32::from_le_bytes(b[o..o + 4].try_into().unwrap()) as usize;
    let u64_at = |b: &[u8], o: usize| u64::from_le_bytes(b[o..o + 8].try_into().unwrap()) as usize;
    let shoff = u64_at(elf, 0x28);
    let shentsize = u16_at(elf, 0x3a);
    let shnum = u16_at(elf, 0x3c);
    let shstrndx = u16_at(elf, 0x3e);
    let header = |i: usize| shoff + i * shentsize;
    let names = u64_at(elf, header(shstrndx) + 0x18);
    let found = (0..shnum).find(|&i| {
        let at = names + u32_at(elf, header(i));
        elf[at..].starts_with(name) && elf.get(at + name.len()) == Some(&0)
    });
    let i = found.expect("the image has the section it was built with");
    elf[header(i) + 0x10..header(i) + 0x18].copy_from_slice(&addr.to_le_bytes());
}

/// Copies of the registered images that define a symbol named `name`.
#[cfg(test)]
fn registered_images_naming(name: &str) -> Vec<Vec<u8>> {
    use object::{Object as _, ObjectSymbol as _};
    let _guard = LIST_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let mut found = Vec::new();
    // SAFETY: the list is only changed under the lock, and every entry's image lives as
    // long as the entry is on the list.
    unsafe {
        let mut e = (*addr_of_mut!(__jit_debug_descriptor)).first_entry;
        while let Some(entry) = e.as_ref() {
            let image = std::slice::from_raw_parts(entry.symfile_addr, entry.symfile_size as usize);
            let file = object::File::parse(image).expect("a registered image is an ELF file");
            if file.symbols().any(|s| s.name() == Ok(name)) {
                found.push(image.to_vec());
            }
            e = entry.next_entry;
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use object::{Object as _, ObjectSection as _, ObjectSymbol as _};

    use super::registered_images_naming;
    use crate::JitBuilder;

    #[test]
    fn finalize_registers_an_image_and_free_unregisters_it() {
        let mut b = JitBuilder::new();
        b.debug_info(true);
        let mut m = b.build();
        let text = "function %gdb_jit_probe(i64) -> i64 {\nblock0(v0: i64):\n    v1 = iadd v0, v0\n    return v1\n}\n";
        let f = &kestrel_ir::parse_functions(text, "probe.clif").unwrap()[0];
        let id = m.define_ir(f, &Default::default()).unwrap();
        m.finalize_definitions().unwrap();
        let addr = m.get_finalized_function(id).unwrap() as u64;

        let images = registered_images_naming("gdb_jit_probe");
        assert_eq!(images.len(), 1);
        let file = object::File::parse(&images[0][..]).unwrap();
        let text_section = file.section_by_name(".text").unwrap();
        let sym = file
            .symbols()
            .find(|s| s.name() == Ok("gdb_jit_probe"))
            .unwrap();
        // The section sits at the code's address, the symbol at its offset there.
        assert_eq!(text_section.address() + sym.address(), addr);
        assert!(sym.size() > 0);
        for s in [".debug_info", ".debug_line", ".eh_frame"] {
            assert!(file.section_by_name(s).is_some(), "no {s}");
        }

        // SAFETY: nothing runs the function.
        unsafe { m.free_function(id) }.unwrap();
        assert!(registered_images_naming("gdb_jit_probe").is_empty());
    }

    #[test]
    fn freeing_one_batch_keeps_the_others_listed() {
        let mut b = JitBuilder::new();
        b.debug_info(true);
        let mut m = b.build();
        let mut ids = Vec::new();
        for name in ["gdb_jit_first", "gdb_jit_second", "gdb_jit_third"] {
            let text =
                format!("function %{name}(i64) -> i64 {{\nblock0(v0: i64):\n    return v0\n}}\n");
            let f = &kestrel_ir::parse_functions(&text, "batches.clif").unwrap()[0];
            ids.push(m.define_ir(f, &Default::default()).unwrap());
            // One finalize per function: three batches, three images.
            m.finalize_definitions().unwrap();
        }
        // SAFETY: nothing runs the functions.
        unsafe { m.free_function(ids[1]) }.unwrap();
        assert_eq!(registered_images_naming("gdb_jit_first").len(), 1);
        assert!(registered_images_naming("gdb_jit_second").is_empty());
        assert_eq!(registered_images_naming("gdb_jit_third").len(), 1);
        drop(m);
        for name in ["gdb_jit_first", "gdb_jit_third"] {
            assert!(
                registered_images_naming(name).is_empty(),
                "{name} outlived its module"
            );
        }
    }

    #[test]
    fn freeing_one_function_of_a_batch_unregisters_only_its_image() {
        let mut b = JitBuilder::new();
        b.debug_info(true);
        let mut m = b.build();
        let text = "function %gdb_jit_kept(i64) -> i64 {\nblock0(v0: i64):\n    return v0\n}\n\
                    function %gdb_jit_gone(i64) -> i64 {\nblock0(v0: i64):\n    return v0\n}\n";
        let funcs = kestrel_ir::parse_functions(text, "one_batch.clif").unwrap();
        let ids: Vec<_> = funcs
            .iter()
            .map(|f| m.define_ir(f, &Default::default()).unwrap())
            .collect();
        // One finalize: one batch, an image per function.
        m.finalize_definitions().unwrap();
        assert_eq!(registered_images_naming("gdb_jit_kept").len(), 1);
        assert_eq!(registered_images_naming("gdb_jit_gone").len(), 1);
        // SAFETY: nothing runs the function.
        unsafe { m.free_function(ids[1]) }.unwrap();
        assert_eq!(registered_images_naming("gdb_jit_kept").len(), 1);
        assert!(registered_images_naming("gdb_jit_gone").is_empty());
    }

    #[test]
    fn without_debug_info_nothing_is_registered() {
        let mut b = JitBuilder::new();
        b.debug_info(false);
        let mut m = b.build();
        let text = "function %gdb_jit_absent(i64) -> i64 {\nblock0(v0: i64):\n    return v0\n}\n";
        let f = &kestrel_ir::parse_functions(text, "absent.clif").unwrap()[0];
        m.define_ir(f, &Default::default()).unwrap();
        m.finalize_definitions().unwrap();
        assert!(registered_images_naming("gdb_jit_absent").is_empty());
    }
}
