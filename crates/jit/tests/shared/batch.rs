//! The functions of a compile/call/free loop, shared by `tests/free_objects.rs` and the
//! `free_loop` example (which includes this file by path).

/// Functions of a compile/call/free loop: `f{i}` reads its batch's data object and calls
/// the next function of the batch (the last one calls nothing). Names are those of slot
/// `cycle` (the loop alternates two slots, so freed ids are defined again and the
/// declaration table stays small).
pub fn batch_clif(cycle: usize, per_batch: usize) -> String {
    let mut text = String::new();
    for i in 0..per_batch {
        let name = format!("c{cycle}_f{i}");
        if i + 1 < per_batch {
            text.push_str(&format!(
                "function %{name}(i64) -> i64 {{
    gv0 = symbol colocated %c{cycle}_data
    fn0 = colocated %c{cycle}_f{next}(i64) -> i64
block0(v0: i64):
    v1 = symbol_value.i64 gv0
    v2 = load.i64 v1
    v3 = iadd v0, v2
    v4 = call fn0(v3)
    return v4
}}
",
                next = i + 1
            ));
        } else {
            text.push_str(&format!(
                "function %{name}(i64) -> i64 {{
block0(v0: i64):
    v1 = iconst.i64 {i}
    v2 = imul v0, v1
    return v2
}}
"
            ));
        }
    }
    text
}
