//! Division by constants, exhaustively at 8 bits: `udiv`, `urem`, `sdiv` and `srem` of every
//! dividend by every divisor, optimized (strength-reduced where the rules can) and not, run
//! in the interpreter; results and traps must agree. A division by 0 or a signed one by -1
//! must still trap where it did.

use kestrel_interp::{DataValue, Interpreter};
use kestrel_ir::Function;
use kestrel_opt::{optimize, OptLevel};

fn run(f: &Function, x: i8) -> Result<Vec<DataValue>, String> {
    let funcs = [f.clone()];
    Interpreter::new(&funcs)
        .call("f", &[DataValue::I8(x)])
        .map_err(|e| format!("{:?}", e.trap_code()))
}

#[test]
fn every_i8_divisor_and_dividend() {
    let mut reduced = 0;
    for op in ["udiv", "urem", "sdiv", "srem"] {
        for d in 0..=255u8 {
            let text = format!(
                "function %f(i8) -> i8 {{\nblock0(v0: i8):\n    v1 = iconst.i8 {d}\n    \
                 v2 = {op} v0, v1\n    return v2\n}}\n"
            );
            let f = &kestrel_ir::parse_functions(&text, "generated").unwrap()[0];
            let mut g = f.clone();
            optimize(&mut g, OptLevel::Speed, true).unwrap_or_else(|e| panic!("{e}\n{f}"));
            let divides = |h: &Function| {
                let block = h.layout.entry_block().unwrap();
                let mut insts = h.layout.block_insts(block);
                insts.any(|i| h.dfg.inst(i).opcode().can_trap())
            };
            reduced += usize::from(divides(f) && !divides(&g));
            for x in i8::MIN..=i8::MAX {
                assert_eq!(run(f, x), run(&g, x), "{op} {x} by {d}:\n{g}");
            }
        }
    }
    // Kept: by 0 (all four), by -1 and -128 (signed), by 129..=255 (unsigned: top bit set,
    // not a power of two).
    assert_eq!(reduced, 4 * 256 - 4 - 2 * 2 - 2 * 127);
}
