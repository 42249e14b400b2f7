//! Printing machine code: one `OFFSET: BYTES  ASM` line per instruction (hex offset from the
//! function start, hex bytes, two spaces, the instruction). x86-64 is decoded by iced-x86
//! (Intel syntax) at address 0, so branch targets print as absolute offsets; AArch64 by
//! yaxpeax-arm (Arm syntax; its words are printed as the 32-bit value, and PC-relative
//! targets as offsets from the instruction, `$+0x…`). Bytes past the instructions (the
//! constant pool) are printed as data, not decoded.

use iced_x86::{Decoder, DecoderOptions, Formatter, Instruction, IntelFormatter};
use yaxpeax_arch::{Decoder as _, U8Reader};
use yaxpeax_arm::armv8::a64::InstDecoder;

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

/// Disassemble AArch64 `code[..len]` (little-endian words) and show `code[len..]` as data.
/// A word that is no instruction prints as `.word` (a literal, a padding word).
pub fn disassemble_aarch64(code: &[u8], len: usize) -> Vec<String> {
    let len = len.min(code.len());
    let decoder = InstDecoder::default();
    let words = code[..len].chunks(4);
    let mut out: Vec<String> = words
        .enumerate()
        .map(|(k, bytes)| {
            let offset = 4 * k;
            let Ok(word) = <[u8; 4]>::try_from(bytes).map(u32::from_le_bytes) else {
                return format!("{offset:x}: {}  (trailing bytes)", hex(bytes));
            };
            let mut reader = U8Reader::new(bytes);
            match decoder.decode(&mut reader) {
                Ok(inst) => format!("{offset:x}: {word:08x}  {inst}"),
                Err(_) => format!("{offset:x}: {word:08x}  .word 0x{word:08x}"),
            }
        })
        .collect();
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

    #[test]
    fn aarch64_lines_have_offset_word_and_arm_text() {
        let words: [u32; 4] = [
            0x8b02_0020, // add x0, x1, x2
            0xd65f_03c0, // ret
            0x0000_0000, // udf #0
            0x1234_5678, // constant data
        ];
        let code: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let lines = super::disassemble_aarch64(&code, 12);
        assert_eq!(lines.len(), 4);
        assert_eq!(lines[0], "0: 8b020020  add x0, x1, x2");
        assert_eq!(lines[1], "4: d65f03c0  ret");
        assert!(lines[2].starts_with("8: 00000000  "), "{}", lines[2]);
        assert_eq!(lines[3], "c: 78563412  (constant pool)");
    }
}
