//! utf8fuzz's Rust peer: the standard library's UTF-8 decoding, one variant per
//! process, speaking the exec protocol of docs/protocol.md on stdin/stdout.
//!
//!   rust-peer VARIANT    (built by python -m utf8fuzz.decoders.peers.build)
//!
//! Variants (argv[1]):
//!
//!   from-utf8         String::from_utf8; strict mode. The span and reason are its
//!                     Utf8Error's: valid_up_to() is the start; error_len() Some(n)
//!                     is an unexpected byte, n bytes (illegal), None an input that
//!                     ended inside a sequence (truncated, to the end).
//!   from-utf8-lossy   String::from_utf8_lossy; replace mode, text only.
//!
//! A request in a mode the variant did not offer is answered "failed" (status 2).
//! Both answer history requests (hello flag 64: each history input decoded and its
//! answer dropped, then the input) and placed requests (flag 128: the input decoded
//! as a slice of a larger buffer of guard bytes).

use std::io::{self, Read, Write};

const MODE_STRICT: u8 = 1;
const MODE_REPLACE: u8 = 2;
const FLAG_STRICT: u16 = 1;
const FLAG_REPLACE: u16 = 2;
const FLAG_REASONS: u16 = 4;
const FLAG_TEXT_ONLY: u16 = 16;
const FLAG_HISTORY: u16 = 64;
const FLAG_PLACED: u16 = 128;
/// Or'ed into a request's mode: its input comes after a history, or placed.
const HISTORY: u8 = 0x40;
const PLACED: u8 = 0x20;
const DECODED: u8 = 0;
const REJECTED: u8 = 1;
const FAILED: u8 = 2;
const ILLEGAL: u32 = 1;
const TRUNCATED: u32 = 2;

fn put32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

/// A decoded reply's body after the id: the code points of `s`, no error records.
fn text(out: &mut Vec<u8>, s: &str) {
    out.push(DECODED);
    put32(out, s.chars().count() as u32);
    put32(out, 0);
    for c in s.chars() {
        put32(out, c as u32);
    }
}

fn from_utf8(out: &mut Vec<u8>, data: &[u8]) {
    match String::from_utf8(data.to_vec()) {
        Ok(s) => text(out, &s),
        Err(e) => {
            let e = e.utf8_error();
            let start = e.valid_up_to();
            let (end, reason) = match e.error_len() {
                Some(n) => (start + n, ILLEGAL),
                None => (data.len(), TRUNCATED),
            };
            out.push(REJECTED);
            put32(out, start as u32);
            put32(out, end as u32);
            put32(out, reason);
        }
    }
}

fn from_utf8_lossy(out: &mut Vec<u8>, data: &[u8]) {
    text(out, &String::from_utf8_lossy(data));
}

/// A JSON string of `s` (std has no JSON writer).
fn json(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' | '\\' => { out.push('\\'); out.push(c); }
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn get32(b: &[u8], at: usize) -> usize {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap()) as usize
}

/// The answer to a request's `body` (what follows the mode byte) of `kind` (0,
/// HISTORY or PLACED), appended to `reply`; Err: why it is no such request.
fn answer_kind(answer: fn(&mut Vec<u8>, &[u8]), kind: u8, body: &[u8],
               reply: &mut Vec<u8>) -> Result<(), &'static str> {
    match kind {
        0 => answer(reply, body),
        HISTORY => {
            // u32 K, K u32 lengths, the K history inputs, then the input
            if body.len() < 4 { return Err("a history request without its count"); }
            let k = get32(body, 0);
            if (body.len() - 4) / 4 < k { return Err("a history request shorter than its table"); }
            let (mut at, mut dropped) = (4 + 4 * k, Vec::new());
            for c in 0..k {
                let n = get32(body, 4 + 4 * c);
                if body.len() - at < n { return Err("a history request shorter than its history"); }
                dropped.clear();
                answer(&mut dropped, &body[at..at + n]);
                at += n;
            }
            answer(reply, &body[at..]);
        }
        PLACED => {
            // u32 offset, u32 total, u8 guard, then the input
            if body.len() < 9 { return Err("a placed request without its placement"); }
            let (offset, total, data) = (get32(body, 0), get32(body, 4), &body[9..]);
            if offset > total || total - offset < data.len() { return Err("an input outside its buffer"); }
            let mut buf = vec![body[8]; total];
            buf[offset..offset + data.len()].copy_from_slice(data);
            answer(reply, &buf[offset..offset + data.len()]);
        }
        _ => return Err("a request of a kind the hello does not offer"),
    }
    Ok(())
}

fn frame(out: &mut Vec<u8>, payload: &[u8]) {
    put32(out, payload.len() as u32);
    out.extend_from_slice(payload);
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let variant = if args.len() == 2 { args[1].as_str() } else { "" };
    let (flags, mode, api): (u16, u8, &str) = match variant {
        "from-utf8" => (FLAG_STRICT | FLAG_REASONS, MODE_STRICT, "String::from_utf8"),
        "from-utf8-lossy" => (FLAG_REPLACE | FLAG_TEXT_ONLY, MODE_REPLACE,
                              "String::from_utf8_lossy"),
        _ => {
            eprintln!("usage: rust-peer from-utf8|from-utf8-lossy");
            std::process::exit(2);
        }
    };
    let answer: fn(&mut Vec<u8>, &[u8]) =
        if mode == MODE_STRICT { from_utf8 } else { from_utf8_lossy };
    let stdin = io::stdin();
    let mut input = stdin.lock();
    let stdout = io::stdout();
    let mut output = stdout.lock();

    let name = format!("rust-{variant}");
    // the free text: what produced the outcomes, as provenance keys
    let rustc = option_env!("UTF8FUZZ_RUSTC_VERSION").unwrap_or("unknown");
    let about = format!("{{\"rustc\": {}, \"call\": {}}}", json(rustc), json(api));
    let mut hello = Vec::new();
    hello.extend_from_slice(b"U8FZ");
    hello.extend_from_slice(&1u16.to_le_bytes()); // protocol version
    hello.extend_from_slice(&(flags | FLAG_HISTORY | FLAG_PLACED).to_le_bytes());
    hello.extend_from_slice(&(name.len() as u16).to_le_bytes());
    hello.extend_from_slice(name.as_bytes());
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
    let mut reply = Vec::new();
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
                eprintln!("rust-peer: a request shorter than its id and mode");
                std::process::exit(2);
            }
            let req = &pending[pos + 4..pos + 4 + len];
            reply.clear();
            reply.extend_from_slice(&req[0..4]); // the id, echoed
            if req[4] & 0x1F == mode {
                if let Err(why) = answer_kind(answer, req[4] & !0x1F, &req[5..], &mut reply) {
                    reply.truncate(4);
                    reply.push(FAILED);
                    reply.extend_from_slice(why.as_bytes());
                }
            } else {
                reply.push(FAILED);
                reply.extend_from_slice(
                    format!("mode {}: this variant answers mode {mode}", req[4]).as_bytes());
            }
            frame(&mut out, &reply);
            pos += 4 + len;
        }
        pending.drain(..pos);
        if output.write_all(&out).and_then(|_| output.flush()).is_err() {
            return;
        }
    }
}
