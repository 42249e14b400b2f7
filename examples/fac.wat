;; Factorial, recursive, in the WebAssembly text format:
;;   cargo run --release -p kestrel -- wasm run examples/fac.wat --invoke fac 20
;; prints 2432902008176640000.
(module
  (func $fac (export "fac") (param $n i64) (result i64)
    (if (result i64) (i64.eqz (local.get $n))
      (then (i64.const 1))
      (else
        (i64.mul (local.get $n)
                 (call $fac (i64.sub (local.get $n) (i64.const 1)))))))
  (func (export "div") (param i32 i32) (result i32)
    (i32.div_s (local.get 0) (local.get 1))))
