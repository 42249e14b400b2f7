;; Structured control flow, multi-value blocks, br_table, locals and recursion.
(module
  (func $fac (export "fac") (param i64) (result i64)
    (if (result i64) (i64.eqz (local.get 0))
      (then (i64.const 1))
      (else (i64.mul (local.get 0) (call $fac (i64.sub (local.get 0) (i64.const 1)))))))

  ;; Sum 1..n with a loop and a local accumulator.
  (func (export "sum") (param i32) (result i32) (local $acc i32)
    (block $done
      (loop $again
        (br_if $done (i32.eqz (local.get 0)))
        (local.set $acc (i32.add (local.get $acc) (local.get 0)))
        (local.set 0 (i32.sub (local.get 0) (i32.const 1)))
        (br $again)))
    (local.get $acc))

  ;; br_table carrying a value, with a default.
  (func (export "classify") (param i32) (result i32)
    (block $other (result i32)
      (block $two (result i32)
        (block $one (result i32)
          (block $zero (result i32)
            (br_table $zero $one $two $other (i32.const 100) (local.get 0)))
          (return (i32.add (i32.const 0))))
        (return (i32.add (i32.const 1))))
      (return (i32.add (i32.const 2))))
    (i32.const 3) (i32.add))

  ;; A block with parameters and two results; a loop with a parameter.
  (func (export "swap-sum") (param i32 i32) (result i32 i32 i32)
    (local.get 0) (local.get 1)
    (block (param i32 i32) (result i32 i32 i32)
      (local.set 0) (local.set 1)
      (local.get 0) (local.get 1) (i32.add (local.get 0) (local.get 1))))
  (func (export "count-down") (param i32) (result i32)
    (local.get 0)
    (loop $l (param i32) (result i32)
      (i32.sub (i32.const 1))
      (local.tee 0)
      (br_if $l (i32.gt_s (local.get 0) (i32.const 0)))))

  ;; if without else passing its parameter through; early return; unreachable code.
  (func (export "maybe-double") (param i32 i32) (result i32)
    (local.get 0)
    (if (param i32) (result i32) (local.get 1) (then (i32.mul (i32.const 2)))))
  (func (export "early") (param i32) (result i32)
    (if (local.get 0) (then (return (i32.const 10)) (drop (i32.const 99))))
    (i32.const 20))
  (func (export "trap") (unreachable) (i32.const 1) (drop))

  (func $deep (export "deep") (param i32) (result i32)
    (i32.add (i32.const 1) (call $deep (local.get 0))))
)
