//! Calling JIT code of various signatures through the host trampoline.

use crate::common::{assemble, sig, single};
use iced_x86::code_asm::*;
use kestrel_ir::{AbiParam, Type};
use kestrel_jit::{CallError, CompiledFunction, Value};

#[test]
fn add_two_i32() {
    let asm = assemble(|a| {
        a.mov(eax, edi)?;
        a.add(eax, esi)?;
        a.ret()?;
        Ok(vec![])
    });
    let s = sig(&[Type::I32, Type::I32], &[Type::I32]);
    let (m, f) = single(CompiledFunction::new(asm.code, s));
    let r = unsafe { m.call(f, &[Value::I32(40), Value::I32(2)]) }.unwrap();
    assert_eq!(r, [Value::I32(42)]);
    let r = unsafe { m.call(f, &[Value::I32(i32::MAX), Value::I32(1)]) }.unwrap();
    assert_eq!(r, [Value::I32(i32::MIN)]);

    // The raw pointer is callable too.
    let p = m.get_finalized_function(f).unwrap();
    // SAFETY: the code implements `extern "C" fn(i32, i32) -> i32`.
    let add: extern "C" fn(i32, i32) -> i32 = unsafe { std::mem::transmute(p) };
    assert_eq!(add(5, 6), 11);
}

/// `acc = acc * 16 + next` over the arguments in order, so each argument is a hex digit of
/// the result and any misplaced argument shows.
#[test]
fn eight_ints_and_ten_floats_use_the_stack() {
    let asm = assemble(|a| {
        a.mov(rax, rdi)?;
        for r in [rsi, rdx, rcx, r8, r9] {
            a.shl(rax, 4)?;
            a.add(rax, r)?;
        }
        // Stack: [rsp+8], [rsp+16] = ints 7, 8; [rsp+24], [rsp+32] = floats 9, 10.
        for off in [8, 16] {
            a.shl(rax, 4)?;
            a.add(rax, qword_ptr(rsp + off))?;
        }
        a.movapd(xmm8, xmm0)?;
        let times16 = |a: &mut CodeAssembler| -> Result<(), IcedError> {
            for _ in 0..4 {
                a.addsd(xmm8, xmm8)?;
            }
            Ok(())
        };
        for x in [xmm1, xmm2, xmm3, xmm4, xmm5, xmm6, xmm7] {
            times16(a)?;
            a.addsd(xmm8, x)?;
        }
        for off in [24, 32] {
            times16(a)?;
            a.addsd(xmm8, qword_ptr(rsp + off))?;
        }
        a.movapd(xmm0, xmm8)?;
        a.ret()?;
        Ok(vec![])
    });
    let mut params = vec![Type::I64; 8];
    params.extend([Type::F64; 10]);
    let s = sig(&params, &[Type::I64, Type::F64]);
    let (m, f) = single(CompiledFunction::new(asm.code, s));
    let mut args: Vec<Value> = (1..=8).map(Value::I64).collect();
    args.extend((1..=10).map(|d| Value::F64(d as f64)));
    let r = unsafe { m.call(f, &args) }.unwrap();
    assert_eq!(
        r,
        [
            Value::I64(0x1234_5678),
            Value::F64(0x12_3456_789a_u64 as f64)
        ]
    );
}

/// Arguments interleaved by class still take their registers in order per class.
#[test]
fn interleaved_f32_and_narrow_ints() {
    // (f32 x, i8 a, f32 y, i16 b) -> (f32, i32): (x - y, a * 1000 + b), a and b sign-extended.
    let asm = assemble(|a| {
        a.subss(xmm0, xmm1)?;
        a.movsx(eax, dil)?;
        a.imul_3(eax, eax, 1000)?;
        a.movsx(ecx, si)?;
        a.add(eax, ecx)?;
        a.ret()?;
        Ok(vec![])
    });
    let mut s = sig(
        &[Type::F32, Type::I8, Type::F32, Type::I16],
        &[Type::F32, Type::I32],
    );
    s.params[1] = AbiParam::new(Type::I8).sext();
    let (m, f) = single(CompiledFunction::new(asm.code, s));
    let args = [
        Value::F32(5.5),
        Value::I8(-3),
        Value::F32(0.25),
        Value::I16(-7),
    ];
    let r = unsafe { m.call(f, &args) }.unwrap();
    assert_eq!(r, [Value::F32(5.25), Value::I32(-3007)]);
}

#[test]
fn i128_in_register_pairs() {
    // a in rdi:rsi, b in rdx:rcx, a + b in rax:rdx.
    let asm = assemble(|a| {
        a.mov(rax, rdi)?;
        a.add(rax, rdx)?;
        a.mov(rdx, rsi)?;
        a.adc(rdx, rcx)?;
        a.ret()?;
        Ok(vec![])
    });
    let s = sig(&[Type::I128, Type::I128], &[Type::I128]);
    let (m, f) = single(CompiledFunction::new(asm.code, s));
    let x = 0x0123_4567_89ab_cdef_ffff_ffff_ffff_fff0_i128;
    let r = unsafe { m.call(f, &[Value::I128(x), Value::I128(0x20)]) }.unwrap();
    assert_eq!(r, [Value::I128(x + 0x20)]);
    let r = unsafe { m.call(f, &[Value::I128(-1), Value::I128(i128::MIN)]) }.unwrap();
    assert_eq!(r, [Value::I128(i128::MAX)]);
}

#[test]
fn i128_on_the_stack_when_one_register_is_left() {
    // Five i64s take rdi..r8; the i128 needs two and goes to [rsp+8], [rsp+16]; the i64 after
    // it still takes r9. Returns the i128 plus that i64.
    let asm = assemble(|a| {
        a.mov(rax, qword_ptr(rsp + 8))?;
        a.mov(rdx, qword_ptr(rsp + 16))?;
        a.add(rax, r9)?;
        a.adc(rdx, 0)?;
        a.ret()?;
        Ok(vec![])
    });
    let mut params = vec![Type::I64; 5];
    params.extend([Type::I128, Type::I64]);
    let s = sig(&params, &[Type::I128]);
    let (m, f) = single(CompiledFunction::new(asm.code, s));
    let mut args: Vec<Value> = (0..5).map(Value::I64).collect();
    args.push(Value::I128(u64::MAX as i128 | (7 << 64)));
    args.push(Value::I64(1));
    let r = unsafe { m.call(f, &args) }.unwrap();
    assert_eq!(r, [Value::I128(8 << 64)]);
}

#[test]
fn wrong_arguments_are_errors() {
    let asm = assemble(|a| {
        a.ret()?;
        Ok(vec![])
    });
    let (m, f) = single(CompiledFunction::new(asm.code, sig(&[Type::I64], &[])));
    let e = unsafe { m.call(f, &[]) }.unwrap_err();
    assert!(
        matches!(
            e,
            CallError::ArgumentCount {
                expected: 1,
                got: 0
            }
        ),
        "{e}"
    );
    let e = unsafe { m.call(f, &[Value::I32(1)]) }.unwrap_err();
    assert!(matches!(e, CallError::ArgumentType { index: 0, .. }), "{e}");
}

#[test]
fn results_beyond_the_registers_come_from_the_return_area() {
    // (i64, f64, i64, i128, f32): rax, xmm0, rdx, then the i128 in the area at 0 and 8 (no
    // integer return register left), and the f32 in xmm1. rdi holds the area's address.
    let asm = assemble(|a| {
        a.mov(rax, 1i64)?;
        a.mov(rdx, -2i64)?;
        a.mov(rcx, 0x1122_3344_5566_7788i64)?;
        a.mov(qword_ptr(rdi), rcx)?;
        a.mov(rcx, -1i64)?;
        a.mov(qword_ptr(rdi + 8), rcx)?;
        a.mov(rcx, 1.5f64.to_bits() as i64)?;
        a.movq(xmm0, rcx)?;
        a.mov(ecx, 2.5f32.to_bits())?;
        a.movd(xmm1, ecx)?;
        a.ret()?;
        Ok(vec![])
    });
    let s = sig(
        &[],
        &[Type::I64, Type::F64, Type::I64, Type::I128, Type::F32],
    );
    let (m, f) = single(CompiledFunction::new(asm.code, s));
    let out = unsafe { m.call(f, &[]) }.unwrap();
    assert_eq!(
        out,
        [
            Value::I64(1),
            Value::F64(1.5),
            Value::I64(-2),
            Value::I128((-1i128 << 64) | 0x1122_3344_5566_7788),
            Value::F32(2.5)
        ]
    );
}

#[test]
fn unsupported_convention_is_reported_not_guessed() {
    let asm = assemble(|a| {
        a.ret()?;
        Ok(vec![])
    });
    let mut s = sig(&[], &[]);
    s.call_conv = kestrel_ir::CallConv::Probestack;
    let (m, f) = single(CompiledFunction::new(asm.code, s));
    let e = unsafe { m.call(f, &[]) }.unwrap_err();
    assert!(e.to_string().contains("probestack"), "{e}");
}
