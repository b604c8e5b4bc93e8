// A planted TextDecoder-like class (tests/decoders/test_exec_calls.py) with a
// polyfill's bug: it decodes the whole ArrayBuffer under the view it is given,
// ignoring the view's offset and length.
'use strict';

class TextDecoder {
  constructor(label, options) {
    this.inner = new (require('util').TextDecoder)(label, options);
  }

  decode(view, options) {
    return this.inner.decode(view === undefined ? view : new Uint8Array(view.buffer), options);
  }
}

module.exports = { TextDecoder };
