// A utf8fuzz exec client for a TextDecoder-like class from an npm package, for
// measuring triage on real decoders (scripts/triage_measure.py): the protocol and
// the decoder of examples/exec/js/client.js, with the class taken from the command
// line instead of Node's own.
//
//   NODE_PATH=/tmp/triage-npm/node_modules utf8fuzz diff \
//     --decoder "exec:node scripts/triage_real/textdecoder_client.js mutf-8 MUtf8Decoder fatal" "C0 80"
//
// argv: MODULE EXPORT [fatal]. Node's global TextDecoder is removed first, so that a
// polyfill that defers to it (fastestsmallesttextencoderdecoder) runs its own code.
// With "fatal", the class takes {fatal: true} and strict mode is answered as the
// example client answers it (the error records searched with the same fatal decoder,
// streaming); without, the client says it does replace mode only, text only (flag
// 16: its replies carry the text and no error records). Every request but a placed
// one hands the class copies of its inputs: a decoder that reads its argument's
// .buffer (fastestsmallesttextencoderdecoder does) would otherwise see the whole
// stdin buffer; placed requests (hello flag 128) are where that is asked.
'use strict';

const path = require('path');
const { serve, textDecoderClient } = require(
  path.join(__dirname, '..', '..', 'examples', 'exec', 'js', 'client.js'));

delete globalThis.TextDecoder;
delete globalThis.TextEncoder;
const [MODULE, EXPORT, FATAL] = process.argv.slice(2);
// a polyfill that installs itself (fast-text-encoding) exports nothing: its global
const client = textDecoderClient(require(MODULE)[EXPORT] || globalThis[EXPORT], {
  label: MODULE === 'mutf-8' ? 'mutf-8' : 'utf-8',
  fatal: FATAL === 'fatal',
});
let version = '?';
try {
  version = require(MODULE.split('/').slice(0, MODULE.startsWith('@') ? 2 : 1).join('/')
                    + '/package.json').version;
} catch (e) { /* not exported */ }
serve({
  name: MODULE.replace(/[^A-Za-z0-9_.-]/g, '-'),
  about: `${MODULE} ${version}, node ${process.version}`,
  flags: client.flags,
  client,
  copy: true,
});
