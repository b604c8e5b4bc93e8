// utf8fuzz's Node peer: one persistent process answering length-prefixed frames.
// Request:  u32le length, then (op byte, input bytes).  Response: u32le length, payload.
// Payload:  status byte, then: 0 -> UTF-16LE text; 1 -> u32le start, u32le end,
//           reason byte (0 illegal, 1 truncated); 2 -> UTF-8 error message.
// ops: 0 TextDecoder fatal, 1 TextDecoder (replacement), 2 Buffer.toString('utf8').
// The first frame is a JSON "ready" with the versions. See decoders/node.py.
'use strict';

const opts = { ignoreBOM: true }; // a BOM is U+FEFF, as in the unicode profile
const replacing = new TextDecoder('utf-8', opts);
const testOps = process.env.UTF8FUZZ_NODE_TEST_OPS === '1';

function text(s) {
  const body = Buffer.from(s, 'utf16le');
  const out = Buffer.allocUnsafe(1 + body.length);
  out[0] = 0;
  body.copy(out, 1);
  return out;
}

const probe = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

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
// before k where the prefix is complete (the pending bytes are at most 3). The error is the pending
// bytes [j, k), or the byte at k alone; if every byte streams, it is truncation.
function fatal(bytes) {
  let s;
  try {
    s = probe.decode(bytes);
    return text(s);
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
  let start = j, end = k, reason = 0;
  if (k === bytes.length) reason = 1;
  else if (j === k) end = k + 1;
  const out = Buffer.alloc(10);
  out[0] = 1;
  out.writeUInt32LE(start, 1);
  out.writeUInt32LE(end, 5);
  out[9] = reason;
  return out;
}

function answer(op, bytes) {
  try {
    if (op === 0) return fatal(bytes);
    if (op === 1) return text(replacing.decode(bytes));
    if (op === 2) return text(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length)
      .toString('utf8'));
    if (testOps && op === 0xfe) { for (;;) { /* hang */ } }
    if (testOps && op === 0xff) process.abort();
    throw new Error(`unknown op ${op}`);
  } catch (e) {
    return Buffer.concat([Buffer.from([2]), Buffer.from(String(e && e.message), 'utf8')]);
  }
}

function frame(payload) {
  const head = Buffer.allocUnsafe(4);
  head.writeUInt32LE(payload.length, 0);
  return [head, payload];
}

let pending = Buffer.alloc(0);
process.stdin.on('data', (chunk) => {
  pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
  const out = [];
  let pos = 0;
  while (pending.length - pos >= 4) {
    const n = pending.readUInt32LE(pos);
    if (pending.length - pos - 4 < n) break;
    const op = pending[pos + 4];
    const bytes = new Uint8Array(pending.buffer, pending.byteOffset + pos + 5, n - 1);
    out.push(...frame(answer(op, bytes)));
    pos += 4 + n;
  }
  pending = pending.subarray(pos);
  if (out.length) process.stdout.write(Buffer.concat(out));
});
process.stdin.on('end', () => process.exit(0));

process.stdout.write(Buffer.concat(frame(Buffer.from(JSON.stringify({
  node: process.version,
  v8: process.versions.v8,
  icu: process.versions.icu || '',
  unicode: process.versions.unicode || '',
  simdutf: process.versions.simdutf || '',
})))));
