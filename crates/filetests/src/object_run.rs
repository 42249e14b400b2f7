//! `test run` files through an object file: every function of the file is compiled into one
//! ELF object with `kestrel-object`, linked by `cc` with a generated driver, and run as a
//! separate process; the results are judged exactly as the in-process runs are.
//!
//! The same machinery runs AArch64 code on any host ([`ObjectTarget::Aarch64`]): the object
//! is an AArch64 one, the driver is linked statically by `aarch64-linux-gnu-gcc` and runs
//! under `qemu-aarch64` (user-mode emulation). A missing tool is an error that names the
//! package to install, never a skip. The emulated CPU matches the code's features: a
//! Cortex-A53 (exactly Armv8.0, so an extension used by mistake faults) for base-ISA code,
//! qemu's `max` CPU for code that may use extensions (`target aarch64 has_lse`). A file runs
//! once per distinct set of AArch64 features and stack-probe settings on its `target
//! aarch64` lines (each line takes the `set` lines above it).
//!
//! # How
//!
//! 1. The run directives are typed as the other runners type them (a recording pass of
//!    `run_directives` collects the calls, in order).
//! 2. Per call `k`, a wrapper `__kestrel_run_k(out: i64)` is built in IR: it calls the
//!    function with the arguments as constants and stores each result at `out + 16*i`. So
//!    every signature and convention the backend compiles is called by Kestrel code; C only
//!    sees `void f(void *)`. The file's functions are local symbols (their names cannot
//!    clash with the C library's); the wrappers are exported.
//! 3. The C driver runs calls `start..` and prints one line per call: `R k <hex result
//!    bytes>...`. A fault is mapped to its trap code through the object's trap table
//!    (`kestrel_traps`) by a `SIGILL`/`SIGFPE`/`SIGSEGV`/`SIGBUS` handler on an alternate
//!    stack (reading the faulting `rip`, or `pc` on AArch64, from the signal context), which
//!    prints `T k code` and jumps back to the driver's loop (`siglongjmp`: the
//!    trapping call's frames are abandoned, as the JIT abandons them), which goes on with
//!    call `k + 1`. A fault outside any trap site prints `C k signal` and exits (a crash:
//!    reported, never a pass); the runner restarts the driver after `k`.
//! 4. A second pass of `run_directives` judges the recorded outcomes.
//!
//! [`run_calls_via_object`] is the same machinery for any set of functions and calls (the
//! differential fuzzer's object oracle batches many cases into one executable with it).
//!
//! Cost: one object, one link and one process, plus one process per crash.

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use kestrel_codegen::chaos::Chaos;
use kestrel_codegen::isa::TargetIsa;
use kestrel_codegen::settings::Flags;
use kestrel_interp::DataValue;
use kestrel_ir::builder::FunctionBuilder;
use kestrel_ir::{
    AbiParam, CallConv, ExtFuncData, Function, FunctionName, MemFlags, Signature, TrapCode, Type,
};
use kestrel_object::{ir_name, Linkage, Module, ObjectBuilder, ObjectModule};

use crate::{aarch64_flags, directives, native_flags, run_directives, CallError, Options, Outcome};
use crate::{native_isa, target_isa};

/// The machine an object is built for, and how it is linked and run.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ObjectTarget {
    /// The host: linked by `cc`, run directly.
    X86_64,
    /// Linked statically by `aarch64-linux-gnu-gcc`, run under `qemu-aarch64`.
    Aarch64,
}

impl ObjectTarget {
    /// The object target whose code is ISA `name`'s, if the runner links and runs one.
    pub fn for_isa(name: &str) -> Option<ObjectTarget> {
        [ObjectTarget::X86_64, ObjectTarget::Aarch64]
            .into_iter()
            .find(|t| t.isa() == name)
    }

    /// The ISA name of `target` lines.
    pub fn isa(self) -> &'static str {
        match self {
            ObjectTarget::X86_64 => "x86_64",
            ObjectTarget::Aarch64 => "aarch64",
        }
    }

    /// The C compiler that links the driver, its extra arguments, and the package that
    /// provides it.
    fn linker(self) -> (&'static str, &'static [&'static str], &'static str) {
        match self {
            ObjectTarget::X86_64 => ("cc", &[], "gcc"),
            ObjectTarget::Aarch64 => (
                "aarch64-linux-gnu-gcc",
                &["-static"],
                "gcc-aarch64-linux-gnu",
            ),
        }
    }

    /// The command that runs the linked driver `exe`, compiled for `isa`.
    fn runner(self, exe: &Path, isa: &dyn TargetIsa) -> Command {
        match self {
            ObjectTarget::X86_64 => Command::new(exe),
            ObjectTarget::Aarch64 => {
                let mut c = Command::new(QEMU);
                c.args(["-cpu", qemu_cpu(isa)]).arg(exe);
                c
            }
        }
    }
}

/// The CPU `qemu-aarch64` emulates for code compiled for `isa`: a Cortex-A53 (Armv8.0, no
/// LSE) for base-ISA code, so an extension instruction there is an illegal instruction;
/// `max` (every extension qemu implements) when any extension is on.
fn qemu_cpu(isa: &dyn TargetIsa) -> &'static str {
    if isa.isa_flags().iter().all(|&(_, on)| !on) {
        "cortex-a53"
    } else {
        "max"
    }
}

/// The user-mode emulator the AArch64 drivers run under (Debian package `qemu-user`).
const QEMU: &str = "qemu-aarch64";

/// Run the `test run` directives of `text` through an x86-64 object linked in `workdir`.
pub fn run_via_object(text: &str, name: &str, workdir: &Path) -> Outcome {
    run_via_object_on(ObjectTarget::X86_64, text, name, workdir)
}

/// Run the `test run` directives of `text` through an object for `target` linked in
/// `workdir`, if the file has a `target` line for it: for x86-64 with the first line's
/// flags, for AArch64 once per distinct set of features and probe settings its lines give
/// (failures then name the line's flags, or its line number when it has none).
pub fn run_via_object_on(
    target_isa: ObjectTarget,
    text: &str,
    name: &str,
    workdir: &Path,
) -> Outcome {
    run_via_object_with(target_isa, &Chaos::disabled, text, name, workdir)
}

/// [`run_via_object_on`], compiling each function with a fresh chaos control from `chaos`.
pub fn run_via_object_with(
    target_isa: ObjectTarget,
    chaos: &dyn Fn() -> Chaos,
    text: &str,
    name: &str,
    workdir: &Path,
) -> Outcome {
    run_via_object_for(
        target_isa,
        chaos,
        &directives::scan(text),
        text,
        name,
        workdir,
    )
}

/// [`run_via_object_with`] with the file's header scanned already (and possibly changed:
/// `kestrel test --target` replaces its target lines).
pub fn run_via_object_for(
    target_isa: ObjectTarget,
    chaos: &dyn Fn() -> Chaos,
    header: &directives::Header,
    text: &str,
    name: &str,
    workdir: &Path,
) -> Outcome {
    let run = header.commands.iter().any(|c| c == "run");
    if !run || header.runs.is_empty() {
        return Outcome::Skip("no `test run` directives".into());
    }
    let lines: Vec<&directives::Target> = header
        .targets
        .iter()
        .filter(|t| t.isa == target_isa.isa())
        .collect();
    let Some(&first) = lines.first() else {
        return Outcome::Skip(format!("no `target {}` line", target_isa.isa()));
    };
    let funcs = match kestrel_ir::parse_functions(text, name) {
        Ok(f) => f,
        Err(e) => return Outcome::Fail(vec![e.to_string()]),
    };
    let opts = Options::default();
    let mut calls: Vec<(String, Vec<DataValue>)> = Vec::new();
    let mut record = |f: &str, args: &[DataValue]| {
        calls.push((f.to_string(), args.to_vec()));
        Err(CallError {
            trap: None,
            message: String::new(),
        })
    };
    // The directives run twice: once recording the calls, once judging their outcomes.
    let pass = |caller: &mut crate::Caller<'_>, failures: &mut Vec<String>| {
        run_directives(
            header,
            &funcs,
            &opts,
            &mut Vec::new(),
            false,
            caller,
            failures,
        )
    };
    pass(&mut record, &mut Vec::new());
    if calls.is_empty() {
        return Outcome::Skip("no run directive could be typed".into());
    }

    type FlagSet<'h> = (Arc<dyn TargetIsa>, Flags, &'h directives::Target);
    let flag_sets: Vec<FlagSet<'_>> = match target_isa {
        ObjectTarget::X86_64 => match native_isa(Some(first))
            .and_then(|isa| Ok((isa, native_flags(header, Some(first))?)))
        {
            Ok((isa, flags)) => vec![(isa, flags, first)],
            Err(e) => return Outcome::Fail(vec![format!("line {}: {e}", first.line)]),
        },
        ObjectTarget::Aarch64 => {
            let mut sets: Vec<FlagSet<'_>> = Vec::new();
            for &line in &lines {
                let isa_and_flags = target_isa_of(target_isa, line)
                    .and_then(|isa| Ok((isa, aarch64_flags(header, line)?)));
                let (isa, flags) = match isa_and_flags {
                    Ok(pair) => pair,
                    Err(e) => return Outcome::Fail(vec![format!("line {}: {e}", line.line)]),
                };
                let same = |(i, f, _): &FlagSet<'_>| {
                    (i.isa_flags(), f.probestack_size_log2)
                        == (isa.isa_flags(), flags.probestack_size_log2)
                };
                if !sets.iter().any(same) {
                    sets.push((isa, flags, line));
                }
            }
            sets
        }
    };
    let mut failures = Vec::new();
    for (isa, flags, line) in &flag_sets {
        let (flags, line) = (*flags, *line);
        let before = failures.len();
        match run_calls_via_object_on(target_isa, isa, &funcs, &calls, flags, chaos, workdir) {
            Ok(outcomes) => {
                let mut next = outcomes.into_iter();
                let mut serve =
                    |_: &str, _: &[DataValue]| next.next().expect("one outcome per call");
                pass(&mut serve, &mut failures);
            }
            Err(e) => failures.push(e),
        }
        if flag_sets.len() > 1 {
            let which = match line.flags.is_empty() {
                true => format!("target at line {}", line.line),
                false => line.flags.join(" "),
            };
            for f in &mut failures[before..] {
                *f = format!("{which}: {f}");
            }
        }
    }
    if failures.is_empty() {
        Outcome::Pass
    } else {
        Outcome::Fail(failures)
    }
}

/// One call's outcome: its results, or the trap (or crash) that ended it.
pub type CallOutcome = Result<Vec<DataValue>, CallError>;

/// Compile `funcs` (local symbols; names as the IR spells them) into one x86-64 object, link
/// it in `dir` with a driver making `calls` (function name as in `; run:` lines, arguments),
/// run it and return one outcome per call. An error when the object cannot be built or
/// linked, or the driver stops without reporting.
pub fn run_calls_via_object(
    funcs: &[Function],
    calls: &[(String, Vec<DataValue>)],
    flags: Flags,
    dir: &Path,
) -> Result<Vec<CallOutcome>, String> {
    let no_chaos = Chaos::disabled;
    let isa = native_isa(None)?;
    run_calls_via_object_on(
        ObjectTarget::X86_64,
        &isa,
        funcs,
        calls,
        flags,
        &no_chaos,
        dir,
    )
}

/// The target of `line` for an object of `target`.
fn target_isa_of(
    target: ObjectTarget,
    line: &directives::Target,
) -> Result<Arc<dyn TargetIsa>, String> {
    target_isa(target.isa(), Some(line))
}

/// [`run_calls_via_object`] for `target` (an AArch64 driver runs under `qemu-aarch64`),
/// compiling each of `funcs` with a fresh chaos control from `chaos` (the wrappers without
/// one), so that every optional optimization may be skipped.
pub fn run_calls_via_object_on(
    target: ObjectTarget,
    isa: &Arc<dyn TargetIsa>,
    funcs: &[Function],
    calls: &[(String, Vec<DataValue>)],
    flags: Flags,
    chaos: &dyn Fn() -> Chaos,
    dir: &Path,
) -> Result<Vec<CallOutcome>, String> {
    let builder = ObjectBuilder::new("run.clif")
        .flags(flags)
        .target(isa.clone())
        .trap_table(true);
    let mut module = ObjectModule::new(builder);
    let mut result_types = Vec::with_capacity(calls.len());
    let ids = funcs
        .iter()
        .map(|f| module.declare_function(&ir_name(&f.name), Linkage::Local, &f.signature))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.to_string())?;
    for (f, &id) in funcs.iter().zip(&ids) {
        let code = isa
            .compile_function_with_chaos(f, &flags, &mut chaos())
            .map_err(|e| format!("function `{}` could not be compiled: {e}", ir_name(&f.name)))?;
        module
            .define_compiled(id, &f.signature, code)
            .map_err(|e| e.to_string())?;
    }
    for (k, (name, args)) in calls.iter().enumerate() {
        let target = funcs
            .iter()
            .find(|f| crate::directives::func_name(f) == *name)
            .ok_or_else(|| format!("no function %{name}"))?;
        let wrapper = wrapper(k, target, args).map_err(|e| format!("wrapper {k}: {e}"))?;
        let id = module
            .declare_function(&ir_name(&wrapper.name), Linkage::Export, &wrapper.signature)
            .map_err(|e| e.to_string())?;
        module
            .define_function(id, &wrapper)
            .map_err(|e| e.to_string())?;
        result_types.push(
            target
                .signature
                .returns
                .iter()
                .map(|p| p.value_type)
                .collect::<Vec<_>>(),
        );
    }
    let bytes = module.finish().map_err(|e| e.to_string())?;
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    let obj = dir.join("run.o");
    std::fs::write(&obj, bytes).map_err(|e| e.to_string())?;
    let c = dir.join("driver.c");
    std::fs::write(&c, driver(calls.len())).map_err(|e| e.to_string())?;
    let exe = dir.join("run");
    let (cc, cc_args, package) = target.linker();
    let out = Command::new(cc)
        .args(cc_args)
        .args(["-O1", "-o"])
        .arg(&exe)
        .arg(&c)
        .arg(&obj)
        .arg("-lm")
        .output()
        .map_err(|e| format!("{cc}: {e} (install the Debian package {package})"))?;
    if !out.status.success() {
        return Err(format!(
            "{cc} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }

    let mut outcomes: Vec<Option<Result<Vec<DataValue>, CallError>>> = vec![None; calls.len()];
    let mut start = 0;
    while start < calls.len() {
        let mut cmd = target.runner(&exe, &**isa);
        let out = output_within(cmd.arg(start.to_string()), DRIVER_TIMEOUT).map_err(|e| {
            if target == ObjectTarget::Aarch64 && e.contains("No such file") {
                format!("{QEMU}: {e} (install the Debian package qemu-user)")
            } else {
                e
            }
        })?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        let mut resume = None;
        for line in stdout.lines() {
            let mut words = line.split(' ');
            let (tag, k) = (
                words.next(),
                words.next().and_then(|k| k.parse::<usize>().ok()),
            );
            let Some(k) = k.filter(|&k| k < calls.len()) else {
                continue;
            };
            match tag {
                Some("R") => {
                    let values = words
                        .zip(&result_types[k])
                        .map(|(hex, &ty)| decode(hex, ty))
                        .collect::<Option<Vec<_>>>()
                        .ok_or_else(|| format!("bad result line `{line}`"))?;
                    outcomes[k] = Some(Ok(values));
                }
                Some("T") => {
                    let code = words
                        .next()
                        .and_then(|c| c.parse::<u8>().ok())
                        .and_then(TrapCode::from_raw);
                    outcomes[k] = Some(Err(CallError {
                        trap: code,
                        message: format!(
                            "trap {} (separate process)",
                            code.map_or("?".into(), |c| c.to_string())
                        ),
                    }));
                }
                Some("C") => {
                    outcomes[k] = Some(Err(CallError {
                        trap: None,
                        message: format!(
                            "crashed with signal {} outside any trap site",
                            words.next().unwrap_or("?")
                        ),
                    }));
                    resume = Some(k + 1);
                }
                _ => {}
            }
        }
        match resume {
            Some(k) => start = k,
            None if stdout.lines().any(|l| l == "END") => break,
            None => {
                return Err(format!(
                    "the driver stopped without a report ({}); stderr: {}",
                    out.status,
                    String::from_utf8_lossy(&out.stderr)
                ))
            }
        }
    }
    Ok(outcomes
        .into_iter()
        .map(|o| {
            o.unwrap_or(Err(CallError {
                trap: None,
                message: "no result reported".into(),
            }))
        })
        .collect())
}

/// How long one driver process may run: the calls are short, so a driver still running
/// after this is a hang (reported as an error, and the process killed).
const DRIVER_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// Run `cmd` to completion and collect its output, killing it after `timeout`.
fn output_within(
    cmd: &mut Command,
    timeout: std::time::Duration,
) -> Result<std::process::Output, String> {
    use std::process::Stdio;
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    // The pipes are drained while waiting, so a chatty child cannot block on a full pipe.
    let mut stdout = child.stdout.take().expect("piped");
    let mut stderr = child.stderr.take().expect("piped");
    let read_out = std::thread::spawn(move || {
        let mut b = Vec::new();
        std::io::Read::read_to_end(&mut stdout, &mut b).map(|_| b)
    });
    let read_err = std::thread::spawn(move || {
        let mut b = Vec::new();
        std::io::Read::read_to_end(&mut stderr, &mut b).map(|_| b)
    });
    let deadline = std::time::Instant::now() + timeout;
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            break status;
        }
        if std::time::Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!(
                "the driver did not finish within {}s (a hang)",
                timeout.as_secs()
            ));
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    };
    let collect = |h: std::thread::JoinHandle<std::io::Result<Vec<u8>>>| {
        h.join()
            .map_err(|_| "reading the driver's output failed".to_string())?
            .map_err(|e| e.to_string())
    };
    Ok(std::process::Output {
        status,
        stdout: collect(read_out)?,
        stderr: collect(read_err)?,
    })
}

/// `__kestrel_run_k(out)`: call `target(args)` and store each result at `out + 16*i`.
fn wrapper(k: usize, target: &Function, args: &[DataValue]) -> Result<Function, String> {
    let err = |e: kestrel_ir::builder::BuilderError| e.to_string();
    let mut sig = Signature::new(CallConv::SystemV);
    sig.params.push(AbiParam::new(Type::I64));
    let mut b = FunctionBuilder::new(FunctionName::Named(format!("__kestrel_run_{k}")), sig);
    let callee_sig = b.import_signature(target.signature.clone());
    let callee = b.import_function(ExtFuncData {
        name: target.name.clone(),
        signature: callee_sig,
        colocated: true,
    });
    let entry = b.create_block();
    b.switch_to_block(entry).map_err(err)?;
    let out = b
        .append_block_params_for_function_params(entry)
        .map_err(err)?[0];
    let mut values = Vec::with_capacity(args.len());
    for &a in args {
        let v = match a {
            DataValue::I8(x) => b.ins().iconst(Type::I8, i64::from(x)),
            DataValue::I16(x) => b.ins().iconst(Type::I16, i64::from(x)),
            DataValue::I32(x) => b.ins().iconst(Type::I32, i64::from(x)),
            DataValue::I64(x) => b.ins().iconst(Type::I64, x),
            DataValue::I128(x) => {
                let lo = b.ins().iconst(Type::I64, x as i64).map_err(err)?;
                let hi = b.ins().iconst(Type::I64, (x >> 64) as i64).map_err(err)?;
                b.ins().iconcat(lo, hi)
            }
            DataValue::F32(bits) => {
                let i = b
                    .ins()
                    .iconst(Type::I32, i64::from(bits as i32))
                    .map_err(err)?;
                b.ins().bitcast(Type::F32, MemFlags::new(), i)
            }
            DataValue::F64(bits) => {
                let i = b.ins().iconst(Type::I64, bits as i64).map_err(err)?;
                b.ins().bitcast(Type::F64, MemFlags::new(), i)
            }
            DataValue::Vector(ty, bits) => b.ins().vconst(ty, bits),
            DataValue::F16(_) | DataValue::F128(_) => {
                return Err(format!(
                    "argument {a} of type {}: f16 and f128 lowering is not implemented",
                    a.ty()
                ))
            }
        }
        .map_err(err)?;
        values.push(v);
    }
    crate::vec_wrap::call_and_store_results(b, callee, &values, out).map_err(err)
}

/// A result from its 16 little-endian bytes in hex.
fn decode(hex: &str, ty: Type) -> Option<DataValue> {
    if hex.len() != 32 {
        return None;
    }
    let mut bytes = [0u8; 16];
    for (i, b) in bytes.iter_mut().enumerate() {
        *b = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok()?;
    }
    let bits = u128::from_le_bytes(bytes);
    Some(match ty {
        Type::I8 => DataValue::I8(bits as i8),
        Type::I16 => DataValue::I16(bits as i16),
        Type::I32 => DataValue::I32(bits as i32),
        Type::I64 => DataValue::I64(bits as i64),
        Type::I128 => DataValue::I128(bits as i128),
        Type::F32 => DataValue::F32(bits as u32),
        Type::F64 => DataValue::F64(bits as u64),
        ty if ty.is_vector() => DataValue::from_slot(ty, bits)?,
        _ => return None,
    })
}

/// The C driver for `n` wrappers.
fn driver(n: usize) -> String {
    let mut c = String::from(
        "#define _GNU_SOURCE\n#include <signal.h>\n#include <stdio.h>\n#include <stdlib.h>\n\
         #include <string.h>\n#include <ucontext.h>\n#include <unistd.h>\n\n\
         struct trap { unsigned long addr; unsigned char code; unsigned char pad[7]; };\n\
         extern const struct trap __start_kestrel_traps[], __stop_kestrel_traps[];\n\
         #include <setjmp.h>\n\
         static volatile int current = -1;\n\
         static sigjmp_buf resume;\n",
    );
    for k in 0..n {
        writeln!(c, "void __kestrel_run_{k}(void *);").unwrap();
    }
    c.push_str("static void (*const runs[])(void *) = {\n");
    for k in 0..n {
        writeln!(c, "    __kestrel_run_{k},").unwrap();
    }
    c.push_str(
        r#"};

static void on_fault(int sig, siginfo_t *info, void *uc_) {
    (void)info;
    ucontext_t *uc = uc_;
#if defined(__aarch64__)
    unsigned long pc = (unsigned long)uc->uc_mcontext.pc;
#else
    unsigned long pc = (unsigned long)uc->uc_mcontext.gregs[REG_RIP];
#endif
    char line[64];
    int len;
    for (const struct trap *t = __start_kestrel_traps; t < __stop_kestrel_traps; t++) {
        if (t->addr == pc) {
            len = snprintf(line, sizeof line, "T %d %u\n", current, t->code);
            write(1, line, len);
            /* Abandon the trapping call; the signal mask is restored. */
            siglongjmp(resume, 1);
        }
    }
    len = snprintf(line, sizeof line, "C %d %d\n", current, sig);
    write(1, line, len);
    _exit(0);
}

int main(int argc, char **argv) {
    static char alt[1 << 16];
    stack_t ss = { .ss_sp = alt, .ss_size = sizeof alt, .ss_flags = 0 };
    sigaltstack(&ss, 0);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    int sigs[] = { SIGILL, SIGFPE, SIGSEGV, SIGBUS, SIGTRAP };
    for (int i = 0; i < 5; i++) sigaction(sigs[i], &sa, 0);
    int start = argc > 1 ? atoi(argv[1]) : 0;
    int n = (int)(sizeof runs / sizeof runs[0]);
    for (volatile int k = start; k < n; k++) {
        unsigned char out[16 * 64];
        memset(out, 0, sizeof out);
        current = k;
        fflush(stdout);
        if (sigsetjmp(resume, 1) != 0) continue;
        runs[k](out);
        printf("R %d", k);
        for (int r = 0; r < 64 && r * 16 < (int)sizeof out; r++) {
            printf(" ");
            for (int i = 0; i < 16; i++) printf("%02x", out[16 * r + i]);
        }
        printf("\n");
        fflush(stdout);
    }
    printf("END\n");
    return 0;
}
"#,
    );
    c
}
