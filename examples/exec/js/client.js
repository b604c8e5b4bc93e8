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
// U+FEFF, as the unicode profile says. Validate mode: the fatal decoder accepts the
// input; its streaming validator (hello flag 256) feeds it each chunk with
// {stream: true}, then ends the stream.
//
// History requests (flag 64) go through the same two decoder objects, never
// reset; placed requests (flag 128) hand the decoder a Uint8Array view (a
// subarray) of a larger ArrayBuffer filled with guard bytes.
//
// Run, it is the client; required, it exports its two parts: the protocol
// (serve: frames, requests, replies) and the decoder (textDecoderClient, for any
// TextDecoder-like class), so that another client
// (scripts/triage_real/textdecoder_client.js) adds only its library.
'use strict';

const MODE_STRICT = 1;
const MODE_REPLACE = 2;
const MODE_VALIDATE = 3;
const DECODED = 0;
const REJECTED = 1;
const FAILED = 2;
const WELL_FORMED = 0;
const ILL_FORMED = 1;
const ILLEGAL = 1;
const TRUNCATED = 2;
const FLAG = {
  STRICT: 1, REPLACE: 2, REASONS: 4, VALIDATE: 8, TEXT_ONLY: 16, STREAM: 32,
  HISTORY: 64, PLACED: 128, STREAM_VALIDATE: 256,
};
// Or'ed into a request's mode byte (at most one of them): its input comes in
// chunks, after a history, or placed in a larger buffer.
const STREAM = 0x80;
const HISTORY = 0x40;
const PLACED = 0x20;

// -- the protocol -------------------------------------------------------------------

function decodedReply(id, cps, errs) {
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

function rejectedReply(id, [s, e, r]) {
  const out = Buffer.alloc(17);
  out.writeUInt32LE(id, 0);
  out[4] = REJECTED;
  out.writeUInt32LE(s, 5);
  out.writeUInt32LE(e, 9);
  out.writeUInt32LE(r, 13);
  return out;
}

function statusReply(id, status) {
  const out = Buffer.alloc(5);
  out.writeUInt32LE(id, 0);
  out[4] = status;
  return out;
}

function frame(payload) {
  const head = Buffer.alloc(4);
  head.writeUInt32LE(payload.length, 0);
  return [head, payload];
}

function hello(name, about, flags) {
  const n = Buffer.from(name);
  const head = Buffer.alloc(10);
  head.write('U8FZ', 0, 'latin1');
  head.writeUInt16LE(1, 4); // protocol version
  head.writeUInt16LE(flags, 6);
  head.writeUInt16LE(n.length, 8);
  return Buffer.concat([head, n, Buffer.from(about)]);
}

// u32 K, K u32 lengths, then the K parts and the rest: [parts, rest].
function table(req, at) {
  const k = req.readUInt32LE(at);
  let pos = at + 4 + 4 * k;
  const parts = [];
  for (let c = 0; c < k; c++) {
    const n = req.readUInt32LE(at + 4 + 4 * c);
    parts.push(req.subarray(pos, pos + n));
    pos += n;
  }
  if (pos > req.length) throw new Error('a table longer than its request');
  return [parts, req.subarray(pos)];
}

// The reply to one request payload (u32 id, u8 mode, ...). `client` answers
// decode(id, mode, bytes) -> reply, and, for stream validation, validator().
function answer(client, req, copy) {
  const id = req.readUInt32LE(0);
  const code = req[4];
  const mode = code & 0x1f;
  const body = req.subarray(5);
  // a copy where the decoder must not see past its input (the stdin buffer is no
  // guard): what placed requests ask for is asked there
  const own = (b) => (copy ? Uint8Array.prototype.slice.call(b) : b);
  try {
    if (code & STREAM) { // a streaming validator: each chunk, then the end
      const [chunks] = table(body, 0);
      const v = client.validator();
      let ok = true;
      for (const c of chunks) if (ok) ok = v.push(own(c));
      ok = v.end() && ok;
      return statusReply(id, ok ? WELL_FORMED : ILL_FORMED);
    }
    if (code & HISTORY) { // the history through the same decoder, not reset
      const [history, input] = table(body, 0);
      for (const h of history) {
        try { client.decode(0, mode, own(h)); } catch (e) { /* its outcome is ignored */ }
      }
      return client.decode(id, mode, own(input));
    }
    if (code & PLACED) { // u32 offset, u32 total, u8 guard, then the input
      const offset = body.readUInt32LE(0);
      const total = body.readUInt32LE(4);
      const input = body.subarray(9);
      const all = new Uint8Array(new ArrayBuffer(total));
      all.fill(body[8]);
      all.set(input, offset);
      return client.decode(id, mode, all.subarray(offset, offset + input.length));
    }
    return client.decode(id, mode, own(body));
  } catch (e) { // a failure of its own: the harness makes it a crash outcome
    const r = Buffer.concat([statusReply(id, FAILED), Buffer.from(String(e && e.message))]);
    return r;
  }
}

// Read requests from stdin, answer each, until it ends. `copy`: every request but
// a placed one hands the decoder copies of its inputs, not views into the stdin
// buffer.
function serve({ name, about, flags, client, copy = false }) {
  let pending = Buffer.alloc(0);
  process.stdin.on('data', (chunk) => {
    pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
    const out = [];
    let pos = 0;
    while (pending.length - pos >= 4) {
      const n = pending.readUInt32LE(pos);
      if (pending.length - pos - 4 < n) break;
      out.push(...frame(answer(client, pending.subarray(pos + 4, pos + 4 + n), copy)));
      pos += 4 + n;
    }
    pending = pending.subarray(pos);
    // every whole request answered before the next read: pipelining never stalls
    if (out.length) process.stdout.write(Buffer.concat(out));
  });
  process.stdin.on('end', () => process.exit(0));
  process.stdout.write(Buffer.concat(frame(hello(name, about, flags))));
}

// -- the decoder --------------------------------------------------------------------

function codePoints(s) {
  const out = [];
  for (const ch of s) out.push(ch.codePointAt(0));
  return out;
}

// A client of a TextDecoder-like class: `fatal`, the class takes {fatal: true}
// (strict mode, error records, and with `validate` validate mode and its
// streaming validator); without, replace mode, text only (flag 16).
function textDecoderClient(Decoder, { label = 'utf-8', fatal: hasFatal = true,
                                      validate = false } = {}) {
  const replacing = new Decoder(label, { fatal: false, ignoreBOM: true });
  const fatal = hasFatal ? new Decoder(label, { fatal: true, ignoreBOM: true }) : null;

  // 'whole' when the fatal decoder takes bytes as a complete text, 'open' when
  // only as the start of a stream, 'bad' when it throws even then.
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
    // ends the unfinished stream (an empty input: a decode() without one may throw
    // before it drops the bytes it held back, which would then lead the next input)
    try { fatal.decode(new Uint8Array(0)); } catch (e) { /* expected */ }
    return 'open';
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

  function decode(id, mode, bytes) {
    if (!fatal) return decodedReply(id, codePoints(replacing.decode(bytes)), []);
    let text = null;
    try {
      text = fatal.decode(bytes);
    } catch (e) { /* ill-formed: below */ }
    if (mode === MODE_VALIDATE) return statusReply(id, text !== null ? WELL_FORMED : ILL_FORMED);
    if (text !== null) return decodedReply(id, codePoints(text), []);
    if (mode === MODE_REPLACE) {
      return decodedReply(id, codePoints(replacing.decode(bytes)), errors(bytes, Infinity));
    }
    return rejectedReply(id, errors(bytes, 1)[0]);
  }

  // validate(chunk) with {stream: true}, then the end of the stream.
  function validator() {
    const v = new Decoder(label, { fatal: true, ignoreBOM: true });
    return {
      push(chunk) {
        try { v.decode(chunk, { stream: true }); return true; } catch (e) { return false; }
      },
      end() {
        try { v.decode(new Uint8Array(0)); return true; } catch (e) { return false; }
      },
    };
  }

  const flags = FLAG.HISTORY | FLAG.PLACED | (hasFatal
    ? FLAG.STRICT | FLAG.REPLACE | FLAG.REASONS
      | (validate ? FLAG.VALIDATE | FLAG.STREAM_VALIDATE : 0)
    : FLAG.REPLACE | FLAG.TEXT_ONLY);
  return { flags, decode, validator };
}

module.exports = { serve, textDecoderClient, FLAG };

if (require.main === module) {
  const client = textDecoderClient(TextDecoder, { validate: true });
  serve({
    name: 'node-textdecoder',
    about: `node ${process.version}, icu ${process.versions.icu || '-'}`,
    flags: client.flags,
    client,
  });
}
