//! `args_*` and `environ_*`: the sizes, then the strings with a pointer array into them.

use super::{Args, CallResult, Cx};
use crate::wasi::abi::Errno;

/// Write `count` and total bytes of `strings` at `count_out` and `size_out`.
fn sizes(cx: &Cx, strings: &[Vec<u8>], a: &Args) -> CallResult {
    let g = cx.guest()?;
    let total: usize = strings.iter().map(Vec::len).sum();
    let total = u32::try_from(total).map_err(|_| Errno::OVERFLOW)?;
    g.write_u32(a.u32(0)?, strings.len() as u32)?;
    g.write_u32(a.u32(1)?, total)?;
    Ok(())
}

/// Write `strings` one after another at `buf` and their addresses at `ptrs`.
fn strings(cx: &Cx, strings: &[Vec<u8>], a: &Args) -> CallResult {
    let g = cx.guest()?;
    let (mut ptr, mut buf) = (a.u32(0)?, a.u32(1)?);
    for s in strings {
        g.write_u32(ptr, buf)?;
        g.write(buf, s)?;
        ptr = ptr.checked_add(4).ok_or(Errno::FAULT)?;
        buf = buf.checked_add(s.len() as u32).ok_or(Errno::FAULT)?;
    }
    Ok(())
}

pub(super) fn args_sizes_get(cx: &mut Cx, a: &Args) -> CallResult {
    sizes(cx, &cx.state.args, a)
}

pub(super) fn args_get(cx: &mut Cx, a: &Args) -> CallResult {
    strings(cx, &cx.state.args, a)
}

pub(super) fn environ_sizes_get(cx: &mut Cx, a: &Args) -> CallResult {
    sizes(cx, &cx.state.env, a)
}

pub(super) fn environ_get(cx: &mut Cx, a: &Args) -> CallResult {
    strings(cx, &cx.state.env, a)
}
