//! Clocks, `poll_oneoff`, randomness, scheduling and `proc_exit`.
//!
//! Clocks: realtime is the host's wall clock; monotonic counts from the program's start
//! (when its `Wasi` was made); the two CPU-time clocks are approximated by the monotonic
//! one (Kestrel runs a program on one thread, so elapsed time bounds its CPU time).
//! Resolution is reported as 1 ns for all four.
//!
//! `poll_oneoff`: descriptor subscriptions are reported ready at once (reads and writes on
//! files and stdio do not block in a way the guest could wait out); with only clock
//! subscriptions, the call sleeps until the earliest deadline and reports the clocks that
//! expired.

use std::io::Read;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::{Args, CallResult, Cx, Failure};
use crate::trap::Trap;
use crate::wasi::abi::{clock, eventtype, layout, Errno, SUBCLOCK_ABSTIME};

/// The time of clock `id` in nanoseconds.
fn now(cx: &Cx, id: u32) -> Result<u64, Errno> {
    match id {
        clock::REALTIME => {
            let since_epoch = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap_or(Duration::ZERO);
            Ok(u64::try_from(since_epoch.as_nanos()).unwrap_or(u64::MAX))
        }
        clock::MONOTONIC | clock::PROCESS_CPUTIME | clock::THREAD_CPUTIME => {
            Ok(u64::try_from(cx.state.started.elapsed().as_nanos()).unwrap_or(u64::MAX))
        }
        _ => Err(Errno::INVAL),
    }
}

pub(super) fn clock_res_get(cx: &mut Cx, a: &Args) -> CallResult {
    now(cx, a.u32(0)?)?;
    cx.guest()?.write_u64(a.u32(1)?, 1)?;
    Ok(())
}

pub(super) fn clock_time_get(cx: &mut Cx, a: &Args) -> CallResult {
    let t = now(cx, a.u32(0)?)?;
    cx.guest()?.write_u64(a.u32(2)?, t)?;
    Ok(())
}

/// One event to report: userdata, error, type.
struct Event(u64, Errno, u8);

fn field_u64(bytes: &[u8], at: usize) -> u64 {
    let mut word = [0; 8];
    word.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(word)
}

pub(super) fn poll_oneoff(cx: &mut Cx, a: &Args) -> CallResult {
    let (subs, out, count, count_out) = (a.u32(0)?, a.u32(1)?, a.u32(2)?, a.u32(3)?);
    if count == 0 {
        return Err(Errno::INVAL.into());
    }
    let g = cx.guest()?;
    let size = count
        .checked_mul(layout::SUBSCRIPTION_SIZE)
        .ok_or(Errno::FAULT)?;
    let bytes = g.read(subs, size)?;
    g.check(out, count as u64 * layout::EVENT_SIZE as u64)?;
    g.check(count_out, 4)?;
    let mut ready = Vec::new();
    // (nanoseconds to wait, userdata) of each valid clock subscription.
    let mut clocks = Vec::new();
    for sub in bytes.chunks_exact(layout::SUBSCRIPTION_SIZE as usize) {
        let userdata = field_u64(sub, 0);
        match sub[8] {
            eventtype::CLOCK => {
                let id = u32::from_le_bytes([sub[16], sub[17], sub[18], sub[19]]);
                let timeout = field_u64(sub, 24);
                let flags = u16::from_le_bytes([sub[40], sub[41]]);
                match now(cx, id) {
                    Ok(t) if flags & SUBCLOCK_ABSTIME != 0 => {
                        clocks.push((timeout.saturating_sub(t), userdata))
                    }
                    Ok(_) => clocks.push((timeout, userdata)),
                    Err(e) => ready.push(Event(userdata, e, eventtype::CLOCK)),
                }
            }
            kind @ (eventtype::FD_READ | eventtype::FD_WRITE) => {
                let fd = u32::from_le_bytes([sub[16], sub[17], sub[18], sub[19]]);
                let error = match cx.state.fds.get(fd) {
                    Ok(_) => Errno::SUCCESS,
                    Err(e) => e,
                };
                ready.push(Event(userdata, error, kind));
            }
            _ => return Err(Errno::INVAL.into()),
        }
    }
    if ready.is_empty() {
        let wait = clocks.iter().map(|c| c.0).min().unwrap_or(0);
        std::thread::sleep(Duration::from_nanos(wait));
        for &(_, userdata) in clocks.iter().filter(|c| c.0 == wait) {
            ready.push(Event(userdata, Errno::SUCCESS, eventtype::CLOCK));
        }
    }
    for (i, Event(userdata, error, kind)) in ready.iter().enumerate() {
        let mut event = [0u8; layout::EVENT_SIZE];
        event[0..8].copy_from_slice(&userdata.to_le_bytes());
        event[8..10].copy_from_slice(&error.0.to_le_bytes());
        event[10] = *kind;
        g.write(out + (i * layout::EVENT_SIZE) as u32, &event)?;
    }
    g.write_u32(count_out, ready.len() as u32)?;
    Ok(())
}

pub(super) fn random_get(cx: &mut Cx, a: &Args) -> CallResult {
    let (buf, len) = (a.u32(0)?, a.u32(1)?);
    cx.guest()?.check(buf, len as u64)?;
    if cx.state.random.is_none() {
        let source = std::fs::File::open("/dev/urandom").map_err(|e| Errno::from_io(&e))?;
        cx.state.random = Some(source);
    }
    let mut bytes = vec![0; len as usize];
    if let Some(source) = &mut cx.state.random {
        source
            .read_exact(&mut bytes)
            .map_err(|e| Errno::from_io(&e))?;
    }
    cx.guest()?.write(buf, &bytes)?;
    Ok(())
}

pub(super) fn sched_yield(_: &mut Cx, _: &Args) -> CallResult {
    std::thread::yield_now();
    Ok(())
}

/// Ends the execution: the trap carries the code out to whoever called into Wasm.
pub(super) fn proc_exit(_: &mut Cx, a: &Args) -> CallResult {
    Err(Failure::Trap(Trap::Exit(a.u32(0)? as i32)))
}
