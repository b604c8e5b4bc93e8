// A utf8fuzz exec client for a TextDecoder-like class from an npm package, for
// measuring triage on real decoders (scripts/triage_measure.py): examples/exec/js/client.js
// with the decoder taken from the command line instead of Node's own.
//
//   NODE_PATH=/tmp/triage-npm/node_modules utf8fuzz diff \
//     --decoder "exec:node scripts/triage_real/textdecoder_client.js mutf-8 MUtf8Decoder fatal" "C0 80"
//
// argv: MODULE EXPORT [fatal]. Node's global TextDecoder is removed first, so that a
// polyfill that defers to it (fastestsmallesttextencoderdecoder) runs its own code.
// With "fatal", the class takes {fatal: true} and strict mode is answered as the
// example client answers it (the error records searched with the same fatal decoder,
// streaming); without, the client says it does replace mode only, text only (flag
// 16: its replies carry the text and no error records).
'use strict';

delete globalThis.TextDecoder;
delete globalThis.TextEncoder;
const [MODULE, EXPORT, FATAL] = process.argv.slice(2);
// a polyfill that installs itself (fast-text-encoding) exports nothing: its global
const Decoder = require(MODULE)[EXPORT] || globalThis[EXPORT];
const HAS_FATAL = FATAL === 'fatal';
const MODE_STRICT = 1;
const MODE_REPLACE = 2;
const DECODED = 0;
const REJECTED = 1;
const FAILED = 2;
const ILLEGAL = 1;
const TRUNCATED = 2;

const LABEL = MODULE === 'mutf-8' ? 'mutf-8' : 'utf-8';
const replacing = new Decoder(LABEL, { fatal: false, ignoreBOM: true });
const fatal = HAS_FATAL ? new Decoder(LABEL, { fatal: true, ignoreBOM: true }) : null;

// 'whole' when the fatal decoder takes bytes as a complete text, 'open' when only
// as the start of a stream, 'bad' when it throws even then.
function judge(bytes) {
  try {
    fatal.decode(bytes);
    return 'whole';
  } catch (e) { /* not whole: try it as a stream */ }
  try {
    fatal.decode(bytes, { stream: true });
  } catch (e) {
    return 'bad';
  }
  // ends the unfinished stream (an empty input: mutf-8's decode() without one throws
  // before it drops the bytes it held back, which would then lead the next input)
  try { fatal.decode(new Uint8Array(0)); } catch (e) { /* expected */ }
  return 'open';
}

function codePoints(s) {
  const out = [];
  for (const ch of s) out.push(ch.codePointAt(0));
  return out;
}

// Error records [start, end, reason], at most `most`.
function errors(bytes, most) {
  const out = [];
  let i = 0;
  while (i < bytes.length && out.length < most) {
    let len = 1;
    for (;;) {
      const state = judge(bytes.subarray(i, i + len));
      if (state === 'whole') { i += len; break; }
      if (state === 'bad') {
        const end = i + Math.max(len - 1, 1);
        out.push([i, end, ILLEGAL]);
        i = end;
        break;
      }
      if (i + len >= bytes.length) { // open at the end of the input
        out.push([i, bytes.length, TRUNCATED]);
        i = bytes.length;
        break;
      }
      len++;
    }
  }
  return out;
}

function reply(id, mode, bytes) {
  let text = null;
  if (!HAS_FATAL) {
    text = replacing.decode(bytes);
    const cps = codePoints(text);
    const out = Buffer.alloc(13 + 4 * cps.length);
    out.writeUInt32LE(id, 0);
    out[4] = DECODED;
    out.writeUInt32LE(cps.length, 5);
    out.writeUInt32LE(0, 9);
    let at = 13;
    for (const c of cps) { out.writeUInt32LE(c, at); at += 4; }
    return out;
  }
  try {
    text = fatal.decode(bytes);
  } catch (e) { /* ill-formed: below */ }
  if (text !== null || mode === MODE_REPLACE) {
    const cps = codePoints(text !== null ? text : replacing.decode(bytes));
    const errs = text !== null ? [] : errors(bytes, Infinity);
    const out = Buffer.alloc(13 + 4 * cps.length + 12 * errs.length);
    out.writeUInt32LE(id, 0);
    out[4] = DECODED;
    out.writeUInt32LE(cps.length, 5);
    out.writeUInt32LE(errs.length, 9);
    let at = 13;
    for (const c of cps) { out.writeUInt32LE(c, at); at += 4; }
    for (const [s, e, r] of errs) {
      out.writeUInt32LE(s, at);
      out.writeUInt32LE(e, at + 4);
      out.writeUInt32LE(r, at + 8);
      at += 12;
    }
    return out;
  }
  const [[s, e, r]] = errors(bytes, 1);
  const out = Buffer.alloc(17);
  out.writeUInt32LE(id, 0);
  out[4] = REJECTED;
  out.writeUInt32LE(s, 5);
  out.writeUInt32LE(e, 9);
  out.writeUInt32LE(r, 13);
  return out;
}

function frame(payload) {
  const head = Buffer.alloc(4);
  head.writeUInt32LE(payload.length, 0);
  return [head, payload];
}

function hello() {
  const name = Buffer.from(MODULE.replace(/[^A-Za-z0-9_.-]/g, '-'));
  let version = '?';
  try { version = require(MODULE.split('/').slice(0, MODULE.startsWith('@') ? 2 : 1).join('/') + '/package.json').version; } catch (e) { /* not exported */ }
  const about = Buffer.from(`${MODULE} ${version}, node ${process.version}`);
  const head = Buffer.alloc(10);
  head.write('U8FZ', 0, 'latin1');
  head.writeUInt16LE(1, 4); // protocol version
  head.writeUInt16LE(HAS_FATAL ? 1 | 2 | 4 : 2 | 16, 6); // strict, replace, reasons; or text only
  head.writeUInt16LE(name.length, 8);
  return Buffer.concat([head, name, about]);
}

let pending = Buffer.alloc(0);
process.stdin.on('data', (chunk) => {
  pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
  const out = [];
  let pos = 0;
  while (pending.length - pos >= 4) {
    const n = pending.readUInt32LE(pos);
    if (pending.length - pos - 4 < n) break;
    const id = pending.readUInt32LE(pos + 4);
    const mode = pending[pos + 8];
    // a copy: a decoder that reads its argument's .buffer (fastestsmallesttextencoderdecoder
    // does) would otherwise see the whole stdin buffer, not this input
    const bytes = new Uint8Array(pending.buffer, pending.byteOffset + pos + 9, n - 5).slice();
    let r;
    try {
      r = reply(id, mode, bytes);
    } catch (e) { // a failure of its own: the harness makes it a crash outcome
      const msg = Buffer.from(String(e && e.message));
      r = Buffer.concat([Buffer.from([0, 0, 0, 0, FAILED]), msg]);
      r.writeUInt32LE(id, 0);
    }
    out.push(...frame(r));
    pos += 4 + n;
  }
  pending = pending.subarray(pos);
  // every whole request answered before the next read: pipelining never stalls
  if (out.length) process.stdout.write(Buffer.concat(out));
});
process.stdin.on('end', () => process.exit(0));
process.stdout.write(Buffer.concat(frame(hello())));
