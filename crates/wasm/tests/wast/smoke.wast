;; Smoke script for the spec runner: one of each directive the runner handles, all of
;; which must pass (run by tests/spec.rs even when the official suite is absent).

(module $m
  (import "spectest" "print_i32" (func $print (param i32)))
  (import "spectest" "global_i32" (global $g i32))
  (memory 1)
  (data (i32.const 8) "\2a\00\00\00")
  (global $counter (mut i32) (i32.const 0))
  (func (export "add") (param i32 i32) (result i32) (i32.add (local.get 0) (local.get 1)))
  (func (export "div") (param i32 i32) (result i32) (i32.div_s (local.get 0) (local.get 1)))
  (func (export "load") (param i32) (result i32) (i32.load (local.get 0)))
  (func (export "imported-global") (result i32) (global.get $g))
  (func (export "bump") (result i32)
    (global.set $counter (i32.add (global.get $counter) (i32.const 1)))
    (call $print (global.get $counter))
    (global.get $counter))
  (func $loop (export "loop") (param i64) (result i64)
    (call $loop (local.get 0)))
  (func (export "nan") (result f32) (f32.div (f32.const 0) (f32.const 0)))
  (func (export "pair") (result i32 i64) (i32.const 1) (i64.const 2))
  (global (export "g") i32 (i32.const 7))
)

(assert_return (invoke "add" (i32.const 40) (i32.const 2)) (i32.const 42))
(assert_return (invoke $m "pair") (i32.const 1) (i64.const 2))
(assert_return (invoke "load" (i32.const 8)) (i32.const 42))
(assert_return (invoke "imported-global") (i32.const 666))
(invoke "bump")
(assert_return (invoke "bump") (i32.const 2))
(assert_return (invoke "nan") (f32.const nan:arithmetic))
(assert_return (get "g") (i32.const 7))
(assert_trap (invoke "div" (i32.const 1) (i32.const 0)) "integer divide by zero")
(assert_trap (invoke "load" (i32.const 65533)) "out of bounds memory access")
(assert_exhaustion (invoke "loop" (i64.const 0)) "call stack exhausted")

(register "m" $m)
(module
  (import "m" "add" (func $add (param i32 i32) (result i32)))
  (func (export "add3") (param i32) (result i32) (call $add (local.get 0) (i32.const 3))))
(assert_return (invoke "add3" (i32.const 4)) (i32.const 7))

(assert_invalid (module (func (result i32) (i64.const 0))) "type mismatch")
(assert_malformed (module binary "\00asm\02\00\00\00") "unknown binary version")
;; Quoted text modules go through Kestrel's text reader: malformed text is refused there,
;; well-formed text that is invalid is refused by the validator, a valid one instantiates.
(assert_malformed (module quote "(func (result i32) (i32.const 1_))") "unknown operator")
(assert_malformed (module quote "(func br $nowhere)") "unknown label")
(assert_invalid (module quote "(func (result i32) (i64.const 1))") "type mismatch")
(module quote "(func (export \"seven\") (result i32) (i32.const 7))")
(assert_return (invoke "seven") (i32.const 7))
(assert_unlinkable (module (import "m" "nope" (func))) "unknown import")
(assert_unlinkable (module (import "m" "add" (func (param i64)))) "incompatible import type")
(assert_trap (module (memory 1) (data (i32.const 65535) "ab")) "out of bounds memory access")
