//! Printing machine code: one `OFFSET: BYTES  ASM` line per instruction (hex offset from the
//! function start, hex bytes, two spaces, iced-x86's Intel syntax), decoded at address 0 so
//! branch targets print as absolute offsets. Bytes past the instructions (the constant pool)
//! are printed as data, not decoded.

use iced_x86::{Decoder, DecoderOptions, Formatter, Instruction, IntelFormatter};

/// Disassemble `code[..len]` as instructions and show `code[len..]` as data.
pub fn disassemble(code: &[u8], len: usize) -> Vec<String> {
    let len = len.min(code.len());
    let mut out = Vec::new();
    let mut decoder = Decoder::with_ip(64, &code[..len], 0, DecoderOptions::NONE);
    let mut formatter = IntelFormatter::new();
    let mut inst = Instruction::default();
    while decoder.can_decode() {
        decoder.decode_out(&mut inst);
        let start = inst.ip() as usize;
        let bytes = hex(&code[start..start + inst.len()]);
        let mut text = String::new();
        formatter.format(&inst, &mut text);
        out.push(format!("{start:x}: {bytes}  {text}"));
    }
    if len < code.len() {
        out.push(format!("{len:x}: {}  (constant pool)", hex(&code[len..])));
    }
    out
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn lines_have_offset_bytes_and_intel_text() {
        // push rbp; jmp to offset 0; then two bytes of constant data.
        let code = [0x55, 0xeb, 0xfd, 0xaa, 0xbb];
        assert_eq!(
            super::disassemble(&code, 3),
            [
                "0: 55  push rbp",
                "1: ebfd  jmp short 0",
                "3: aabb  (constant pool)"
            ]
        );
    }
}
