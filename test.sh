#!/usr/bin/env bash
# The test command (README "Two commands"): installs what the tests need when it is
# missing (Debian packages, the wasm32-wasip1 standard library), then runs formatting,
# lints and every test of the workspace. CI (.ci/run) runs exactly this.
set -euo pipefail
cd "$(dirname "$0")"

# The object-file tests link with cc and inspect with readelf/objdump/gdb; the AArch64 tests
# cross-check encodings with aarch64-linux-gnu-objdump, link with aarch64-linux-gnu-gcc and
# run under qemu-aarch64: install what is missing (Debian packages) rather than skipping
# those tests.
missing=()
command -v cc >/dev/null || missing+=(gcc libc6-dev)
command -v readelf >/dev/null || missing+=(binutils)
command -v objdump >/dev/null || missing+=(binutils)
command -v gdb >/dev/null || missing+=(gdb)
# AArch64: the assembler's tests cross-check every encoding with the AArch64 objdump; the
# run tests link with the cross gcc and run under qemu.
command -v aarch64-linux-gnu-gcc >/dev/null || missing+=(gcc-aarch64-linux-gnu)
command -v aarch64-linux-gnu-objdump >/dev/null || missing+=(binutils-aarch64-linux-gnu)
command -v qemu-aarch64 >/dev/null || missing+=(qemu-user)
[ -e /usr/aarch64-linux-gnu/lib/libc.so.6 ] || missing+=(libc6-dev-arm64-cross)
# kestrel-wasm's C program tests compile to wasm32-wasi: clang, wasm-ld, wasi-libc and the
# wasm32 compiler runtime.
command -v clang >/dev/null || missing+=(clang)
command -v wasm-ld >/dev/null || missing+=(lld)
[ -e /usr/lib/wasm32-wasi/libc.a ] || missing+=(wasi-libc)
compgen -G "/usr/lib/llvm-*/lib/clang/*/lib/wasi/libclang_rt.builtins-wasm32.a" >/dev/null \
    || missing+=(libclang-rt-14-dev-wasm32)
if [ ${#missing[@]} -gt 0 ]; then
    echo "== installing ${missing[*]}"
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -q
    $SUDO apt-get install -y -q "${missing[@]}"
fi

# The AArch64 smoke step cross-builds the JIT and Wasm tests for aarch64-unknown-linux-gnu.
if ! rustup target list --installed | grep -qx aarch64-unknown-linux-gnu; then
    echo "== installing the aarch64-unknown-linux-gnu standard library"
    rustup target add aarch64-unknown-linux-gnu
fi

# kestrel-wasm's Rust program test builds a std program for wasm32-wasip1.
if ! rustup target list --installed | grep -qx wasm32-wasip1; then
    echo "== installing the wasm32-wasip1 standard library"
    rustup target add wasm32-wasip1
fi

echo "== cargo fmt --check"
cargo fmt --all --check

echo "== cargo clippy"
cargo clippy --workspace --all-targets -- -D warnings

echo "== cargo test --workspace"
cargo test --workspace

# The JIT and the Wasm runtime on AArch64 Linux: a smoke subset cross-built and run under
# qemu-aarch64 (IR compiled by the AArch64 backend, JIT-loaded, called through the AArch64
# trampoline; traps, stack overflow and unwinding through the AArch64 signal context; the
# committed Wasm scripts in both bounds-check modes; the WASI sandbox attacks, which under
# qemu-user take cap-std's path for kernels without openat2).
echo "== AArch64 smoke: kestrel-jit and kestrel-wasm under qemu-aarch64"
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER="qemu-aarch64 -L /usr/aarch64-linux-gnu"
cargo test --target aarch64-unknown-linux-gnu -p kestrel-jit \
    --lib --test from_ir --test ret_area --test stack_overflow --test free_objects \
    --test module_features
KESTREL_WASM_TESTSUITE=/nonexistent \
    KESTREL_WASM_SPEC_RUNNER="qemu-aarch64 -L /usr/aarch64-linux-gnu" \
    cargo test --target aarch64-unknown-linux-gnu -p kestrel-wasm --test spec --test sandbox_attacks
