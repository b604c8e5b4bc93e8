//! A utf8fuzz exec client in Rust: the standard library's UTF-8 validation,
//! speaking the protocol of docs/protocol.md on stdin/stdout.
//!
//!   rustc -O -o utf8_client_rs examples/exec/rust/main.rs
//!   utf8fuzz diff --decoder exec:./utf8_client_rs "61 F1 80 80 E1 80 C2 62"
//!
//! Strict mode is `String::from_utf8`: its `Utf8Error` says where the first error
//! starts (`valid_up_to`) and how long it is (`error_len`; `None` when the input
//! ends inside a sequence, which is a truncation). Replace mode's text is
//! `String::from_utf8_lossy`, and its error records are the same `Utf8Error`s,
//! taken one after another over the rest of the input.
//!
//! It answers history requests (hello flag 64: each history input decoded and its
//! answer dropped, then the input; `String::from_utf8` keeps no state) and placed
//! requests (flag 128: the input decoded as a slice of a larger buffer of guard
//! bytes).

use std::io::{self, Read, Write};

const MODE_STRICT: u8 = 1;
const MODE_REPLACE: u8 = 2;
const DECODED: u8 = 0;
const REJECTED: u8 = 1;
const FAILED: u8 = 2;
const ILLEGAL: u32 = 1;
const TRUNCATED: u32 = 2;
/// Or'ed into a request's mode: its input comes after a history, or placed.
const HISTORY: u8 = 0x40;
const PLACED: u8 = 0x20;
const MODE_MASK: u8 = 0x1F;

fn put32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

/// Every error of `data`, as (start, end, reason), from `std::str::from_utf8`.
fn errors(data: &[u8]) -> Vec<(u32, u32, u32)> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < data.len() {
        match std::str::from_utf8(&data[at..]) {
            Ok(_) => break,
            Err(e) => {
                let start = at + e.valid_up_to();
                match e.error_len() {
                    Some(n) => {
                        out.push((start as u32, (start + n) as u32, ILLEGAL));
                        at = start + n;
                    }
                    None => {
                        out.push((start as u32, data.len() as u32, TRUNCATED));
                        at = data.len();
                    }
                }
            }
        }
    }
    out
}

fn reply(id: u32, mode: u8, data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(13 + 16 * data.len());
    put32(&mut out, id);
    let text: String = match (mode, String::from_utf8(data.to_vec())) {
        (_, Ok(s)) => s,
        (MODE_STRICT, Err(e)) => {
            let e = e.utf8_error();
            let start = e.valid_up_to();
            let (end, reason) = match e.error_len() {
                Some(n) => (start + n, ILLEGAL),
                None => (data.len(), TRUNCATED),
            };
            out.push(REJECTED);
            put32(&mut out, start as u32);
            put32(&mut out, end as u32);
            put32(&mut out, reason);
            return out;
        }
        (MODE_REPLACE, Err(_)) => String::from_utf8_lossy(data).into_owned(),
        (_, Err(_)) => {
            out.push(FAILED);
            out.extend_from_slice(format!("unknown mode {mode}").as_bytes());
            return out;
        }
    };
    let errs = if text.len() == data.len() && text.as_bytes() == data { Vec::new() }
               else { errors(data) };
    out.push(DECODED);
    put32(&mut out, text.chars().count() as u32);
    put32(&mut out, errs.len() as u32);
    for c in text.chars() {
        put32(&mut out, c as u32);
    }
    for (s, e, r) in errs {
        put32(&mut out, s);
        put32(&mut out, e);
        put32(&mut out, r);
    }
    out
}

fn get32(b: &[u8], at: usize) -> usize {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap()) as usize
}

fn die(what: &str) -> ! {
    eprintln!("utf8_client_rs: {what}");
    std::process::exit(2);
}

/// The reply to one request payload: u32 id, u8 mode (maybe with HISTORY or
/// PLACED), then what that kind of request carries.
fn answer(req: &[u8]) -> Vec<u8> {
    let id = get32(req, 0) as u32;
    let (code, body) = (req[4], &req[5..]);
    let mode = code & MODE_MASK;
    match code & !MODE_MASK {
        0 => reply(id, mode, body),
        HISTORY => {
            // u32 K, K u32 lengths, the K history inputs, then the input
            if body.len() < 4 { die("a history request without its count"); }
            let k = get32(body, 0);
            if (body.len() - 4) / 4 < k { die("a history request shorter than its table"); }
            let mut at = 4 + 4 * k;
            for c in 0..k {
                let n = get32(body, 4 + 4 * c);
                if body.len() - at < n { die("a history request shorter than its history"); }
                reply(0, mode, &body[at..at + n]);
                at += n;
            }
            reply(id, mode, &body[at..])
        }
        PLACED => {
            // u32 offset, u32 total, u8 guard, then the input
            if body.len() < 9 { die("a placed request without its placement"); }
            let (offset, total, guard, data) = (get32(body, 0), get32(body, 4), body[8], &body[9..]);
            if offset > total || total - offset < data.len() { die("an input outside its buffer"); }
            let mut buf = vec![guard; total];
            buf[offset..offset + data.len()].copy_from_slice(data);
            reply(id, mode, &buf[offset..offset + data.len()])
        }
        _ => die("a request of a kind its hello does not offer"),
    }
}

fn frame(out: &mut Vec<u8>, payload: &[u8]) {
    put32(out, payload.len() as u32);
    out.extend_from_slice(payload);
}

fn main() {
    let stdin = io::stdin();
    let mut input = stdin.lock();
    let stdout = io::stdout();
    let mut output = stdout.lock();

    let name = b"rust-std";
    let about = "rustc std, examples/exec/rust/main.rs";
    let mut hello = Vec::new();
    hello.extend_from_slice(b"U8FZ");
    hello.extend_from_slice(&1u16.to_le_bytes()); // protocol version
    // strict, replace, reasons, history, placed
    hello.extend_from_slice(&(1u16 | 2 | 4 | 64 | 128).to_le_bytes());
    hello.extend_from_slice(&(name.len() as u16).to_le_bytes());
    hello.extend_from_slice(name);
    hello.extend_from_slice(about.as_bytes());
    let mut out = Vec::new();
    frame(&mut out, &hello);
    if output.write_all(&out).and_then(|_| output.flush()).is_err() {
        return;
    }

    // Read what the pipe holds, answer every whole request in it, write the
    // answers at once, then read again: the harness pipelines requests.
    let mut pending: Vec<u8> = Vec::new();
    let mut chunk = vec![0u8; 1 << 16];
    loop {
        let n = match input.read(&mut chunk) {
            Ok(0) => return,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => std::process::exit(2),
        };
        pending.extend_from_slice(&chunk[..n]);
        out.clear();
        let mut pos = 0;
        while pending.len() - pos >= 4 {
            let len = u32::from_le_bytes(pending[pos..pos + 4].try_into().unwrap()) as usize;
            if pending.len() - pos - 4 < len {
                break;
            }
            if len < 5 {
                eprintln!("utf8_client_rs: a request shorter than its id and mode");
                std::process::exit(2);
            }
            let r = answer(&pending[pos + 4..pos + 4 + len]);
            frame(&mut out, &r);
            pos += 4 + len;
        }
        pending.drain(..pos);
        if output.write_all(&out).and_then(|_| output.flush()).is_err() {
            return;
        }
    }
}
