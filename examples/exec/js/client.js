// A utf8fuzz exec client in JavaScript: Node's TextDecoder, speaking the protocol
// of docs/protocol.md on stdin/stdout.
//
//   utf8fuzz diff --decoder "exec:node examples/exec/js/client.js" "61 F1 80 80 E1 80 C2 62"
//
// Replace mode: the text is new TextDecoder('utf-8', {fatal: false}).decode(input).
// Strict mode: new TextDecoder('utf-8', {fatal: true}) accepts the input, or it
// throws, without saying where. So the error records are found by asking the
// same fatal decoder, sequence by sequence: at each position the longest prefix it
// takes as an unfinished stream is the error (its maximal subpart, or the one byte
// it refuses outright), and a prefix it takes whole is a character. Every offset
// is the decoder's own judgement. Both decoders use ignoreBOM, so that EF BB BF is
// U+FEFF, as the unicode profile says.
'use strict';

const MODE_STRICT = 1;
const MODE_REPLACE = 2;
const DECODED = 0;
const REJECTED = 1;
const FAILED = 2;
const ILLEGAL = 1;
const TRUNCATED = 2;

const replacing = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });
const fatal = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

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
  try { fatal.decode(); } catch (e) { /* the unfinished stream: ends it, expected */ }
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
  const name = Buffer.from('node-textdecoder');
  const about = Buffer.from(`node ${process.version}, icu ${process.versions.icu || '-'}`);
  const head = Buffer.alloc(10);
  head.write('U8FZ', 0, 'latin1');
  head.writeUInt16LE(1, 4); // protocol version
  head.writeUInt16LE(1 | 2 | 4, 6); // strict, replace, reasons
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
    const bytes = new Uint8Array(pending.buffer, pending.byteOffset + pos + 9, n - 5);
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
