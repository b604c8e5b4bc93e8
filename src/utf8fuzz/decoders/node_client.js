// utf8fuzz's Node peers: an exec-protocol client (docs/protocol.md) for one of
// Node's UTF-8 decoders, named by its one argument:
//
//   textdecoder-fatal  new TextDecoder('utf-8', {fatal: true, ignoreBOM: true})
//                      strict mode, reasons (the first error's span is searched)
//   textdecoder        new TextDecoder('utf-8', {ignoreBOM: true}): replace, text only
//   buffer             Buffer.toString('utf8'): replace mode, text only
//   textdecoder-stream new TextDecoder('utf-8', {ignoreBOM: true}) fed the chunks
//                      of a stream request with {stream: true}, then decode():
//                      replace mode, text only, streams (hello flag 32)
//
// Each answers history requests (hello flag 64: the history through the same
// decoder object, never reset, its answers dropped) and placed requests (flag 128:
// the input as a subarray of a larger ArrayBuffer of guard bytes).
// The hello's free text is a JSON object of Node's versions (provenance). Each
// chunk stdin gives is answered whole, in one write: the harness pipelines.
// decoders/node.py loads it through exec.peer().
'use strict';

const MODE_STRICT = 1, MODE_REPLACE = 2;
const FLAG_STRICT = 1, FLAG_REPLACE = 2, FLAG_REASONS = 4, FLAG_TEXT_ONLY = 16;
const FLAG_STREAM = 32, STREAM = 0x80;
const FLAG_HISTORY = 64, HISTORY = 0x40, FLAG_PLACED = 128, PLACED = 0x20;
const ILLEGAL = 1, TRUNCATED = 2;

const variant = process.argv[2];
const opts = { ignoreBOM: true }; // a BOM is U+FEFF, as in the unicode profile
const replacing = new TextDecoder('utf-8', opts);
const probe = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
// Test-only inputs that abort or hang the process (tests/decoders/test_node.py).
const testOps = process.env.UTF8FUZZ_NODE_TEST_OPS === '1';

// The reply "decoded": id, status 0, C code points, no errors, the code points.
function decoded(id, s) {
  const out = Buffer.allocUnsafe(13 + 4 * s.length); // at most one code point a unit
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    let c = s.charCodeAt(i);
    if (c >= 0xd800 && c < 0xdc00 && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d < 0xe000) {
        c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
        i++;
      }
    }
    out.writeUInt32LE(c, 13 + 4 * n++);
  }
  out.writeUInt32LE(id, 0);
  out[4] = 0;
  out.writeUInt32LE(n, 5);
  out.writeUInt32LE(0, 9);
  return out.subarray(0, 13 + 4 * n);
}

function fatalOk(bytes, stream) {
  // One decoder, reused: a non-stream call always starts from a fresh state
  // (WHATWG Encoding, TextDecoder decode(), step 1), so after a stream probe an
  // empty non-stream call ends it, whatever it throws.
  let ok = true;
  try {
    probe.decode(bytes, { stream });
  } catch (e) {
    ok = false;
  }
  if (stream) {
    try { probe.decode(); } catch (e) { /* pending bytes: expected */ }
  }
  return ok;
}

// TextDecoder's fatal mode says only "invalid". The first error's span is
// searched with the fatal decoder itself: k = the longest prefix it accepts as
// a stream (monotone, so a galloping then a binary search); j = the last point
// before k where the prefix is complete (the pending bytes are at most 3). The
// error is the pending bytes [j, k), or the byte at k alone; if every byte
// streams, it is truncation.
function fatal(id, bytes) {
  try {
    return decoded(id, probe.decode(bytes));
  } catch (e) { /* invalid: search below */ }
  // Galloping first: in fuzz inputs the first error is usually near the start.
  let lo = 0, hi = bytes.length, step = 1;
  while (lo + step < hi && fatalOk(bytes.subarray(0, lo + step), true)) {
    lo += step;
    step *= 2;
  }
  if (lo + step < hi) hi = lo + step - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (fatalOk(bytes.subarray(0, mid), true)) lo = mid; else hi = mid - 1;
  }
  const k = lo;
  let j = k;
  while (j > 0 && k - j < 4 && !fatalOk(bytes.subarray(0, j), false)) j--;
  let end = k, reason = ILLEGAL;
  if (k === bytes.length) reason = TRUNCATED;
  else if (j === k) end = k + 1;
  const out = Buffer.allocUnsafe(17);
  out.writeUInt32LE(id, 0);
  out[4] = 1; // rejected
  out.writeUInt32LE(j, 5);
  out.writeUInt32LE(end, 9);
  out.writeUInt32LE(reason, 13);
  return out;
}

const VARIANTS = {
  'textdecoder-fatal': {
    flags: FLAG_STRICT | FLAG_REASONS, mode: MODE_STRICT, answer: fatal,
  },
  'textdecoder': {
    flags: FLAG_REPLACE | FLAG_TEXT_ONLY, mode: MODE_REPLACE,
    answer: (id, bytes) => decoded(id, replacing.decode(bytes)),
  },
  'textdecoder-stream': {
    // Whole inputs too (the protocol's plain requests), as textdecoder answers them.
    flags: FLAG_REPLACE | FLAG_TEXT_ONLY | FLAG_STREAM, mode: MODE_REPLACE,
    answer: (id, bytes) => decoded(id, replacing.decode(bytes)),
    stream: (id, chunks) => {
      // A fresh decoder per input: a stream ended by decode() starts afresh anyway
      // (WHATWG Encoding, decode() step 1), but nothing may leak between inputs.
      const dec = new TextDecoder('utf-8', opts);
      let s = '';
      for (const c of chunks) s += dec.decode(c, { stream: true });
      return decoded(id, s + dec.decode());
    },
  },
  'buffer': {
    flags: FLAG_REPLACE | FLAG_TEXT_ONLY, mode: MODE_REPLACE,
    answer: (id, bytes) => decoded(id, Buffer.from(bytes.buffer, bytes.byteOffset,
      bytes.length).toString('utf8')),
  },
};

const me = VARIANTS[variant];
if (!me) {
  process.stderr.write(`node_client.js: unknown variant ${JSON.stringify(variant)}; ` +
    `variants are ${Object.keys(VARIANTS).join(', ')}\n`);
  process.exit(2);
}

function failed(id, message) {
  const text = Buffer.from(String(message), 'utf8');
  const out = Buffer.allocUnsafe(5 + text.length);
  out.writeUInt32LE(id, 0);
  out[4] = 2;
  text.copy(out, 5);
  return out;
}

function answer(id, mode, bytes) {
  if (testOps && bytes.length >= 5) {
    const word = Buffer.from(bytes).toString('latin1', 0, 5);
    if (word === '\xff!abt') process.abort();
    if (word === '\xff!hng') { for (;;) { /* hang */ } }
  }
  if ((mode & 0x1f) !== me.mode) return failed(id, `mode ${mode} is not offered`);
  if ((mode & STREAM) && !me.stream) return failed(id, 'stream requests are not offered');
  try {
    if (mode & STREAM) return me.stream(id, splitChunks(bytes));
    if (mode & HISTORY) {
      const parts = splitChunks(bytes, true);
      const input = parts.pop();
      for (const h of parts) {
        try { me.answer(0, h); } catch (e) { /* its answer is dropped, a failure too */ }
      }
      return me.answer(id, input);
    }
    if (mode & PLACED) return me.answer(id, placed(bytes));
    return me.answer(id, bytes);
  } catch (e) {
    return failed(id, e && e.message);
  }
}

// A placed request's input (u32 offset, u32 total, u8 guard, then the bytes), as a
// subarray of a fresh ArrayBuffer of `total` guard bytes.
function placed(req) {
  if (req.length < 9) throw new Error('a placed request without its placement');
  const view = new DataView(req.buffer, req.byteOffset, req.length);
  const offset = view.getUint32(0, true), total = view.getUint32(4, true);
  const input = req.subarray(9);
  if (offset > total || total - offset < input.length) {
    throw new Error('an input outside its buffer');
  }
  const all = new Uint8Array(new ArrayBuffer(total)).fill(req[8]);
  all.set(input, offset);
  return all.subarray(offset, offset + input.length);
}

// A stream request's input: u32 K, K u32 chunk lengths, then the bytes
// (docs/protocol.md, "Stream mode"). The chunks, as views of the input. `rest`: a
// history request's, whose input follows the K parts (it is the last one returned).
function splitChunks(req, rest = false) {
  const view = new DataView(req.buffer, req.byteOffset, req.length);
  if (req.length < 4) throw new Error('a stream request without its chunk count');
  const k = view.getUint32(0, true);
  if ((req.length - 4) / 4 < k) throw new Error('a stream request shorter than its table');
  let at = 4 + 4 * k;
  const chunks = [];
  for (let c = 0; c < k; c++) {
    const n = view.getUint32(4 + 4 * c, true);
    if (at + n > req.length) throw new Error('stream chunks longer than the input');
    chunks.push(req.subarray(at, at + n));
    at += n;
  }
  if (rest) chunks.push(req.subarray(at));
  else if (at !== req.length) throw new Error('stream chunks shorter than the input');
  return chunks;
}

function frame(parts, payload) {
  const head = Buffer.allocUnsafe(4);
  head.writeUInt32LE(payload.length, 0);
  parts.push(head, payload);
}

let pending = Buffer.alloc(0);
process.stdin.on('data', (chunk) => {
  pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
  const out = [];
  let pos = 0;
  while (pending.length - pos >= 4) {
    const n = pending.readUInt32LE(pos);
    if (pending.length - pos - 4 < n) break;
    if (n < 5) {
      process.stderr.write('node_client.js: a request shorter than its id and mode\n');
      process.exit(2);
    }
    const id = pending.readUInt32LE(pos + 4);
    const mode = pending[pos + 8];
    const bytes = new Uint8Array(pending.buffer, pending.byteOffset + pos + 9, n - 5);
    frame(out, answer(id, mode, bytes));
    pos += 4 + n;
  }
  pending = pending.subarray(pos);
  if (out.length) process.stdout.write(Buffer.concat(out));
});
process.stdin.on('end', () => process.exit(0));

const name = Buffer.from(`node-${variant}`, 'ascii');
const about = Buffer.from(JSON.stringify({
  node: process.version,
  v8: process.versions.v8,
  icu: process.versions.icu || '',
  unicode: process.versions.unicode || '',
  simdutf: process.versions.simdutf || '',
}), 'utf8');
const hello = Buffer.allocUnsafe(10);
hello.write('U8FZ', 0, 'ascii');
hello.writeUInt16LE(1, 4); // protocol version
hello.writeUInt16LE(me.flags | FLAG_HISTORY | FLAG_PLACED, 6);
hello.writeUInt16LE(name.length, 8);
const helloFrame = [];
frame(helloFrame, Buffer.concat([hello, name, about]));
process.stdout.write(Buffer.concat(helloFrame));
