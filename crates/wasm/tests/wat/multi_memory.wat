;; Two memories (multi-memory), accesses and bulk copies between them, and extended
;; constant expressions in a global and a data segment offset.
(module
  (memory $m0 1)
  (memory $m1 2 4)
  (global (export "offset") i32 (i32.add (i32.mul (i32.const 8) (i32.const 4)) (i32.const 2)))
  (data (memory $m0) (i32.const 0) "\01\02\03\04")
  (data (memory $m1) (i32.add (i32.const 30) (i32.const 4)) "hi")
  (func (export "load") (param i32) (result i32) (i32.load $m0 (local.get 0)))
  (func (export "load1") (param i32) (result i32) (i32.load $m1 (local.get 0)))
  (func (export "copy-0-to-1") (param i32 i32 i32)
    (memory.copy $m1 $m0 (local.get 0) (local.get 1) (local.get 2)))
  (func (export "grow1") (param i32) (result i32) (memory.grow $m1 (local.get 0)))
  (func (export "size0") (result i32) (memory.size $m0))
  (func (export "size1") (result i32) (memory.size $m1))
)
