// utf8fuzz's Go peer: Go's own UTF-8 decoding, one variant per process, speaking
// the exec protocol of docs/protocol.md on stdin/stdout.
//
//	go-peer VARIANT    (built by python -m utf8fuzz.decoders.peers.build)
//
// Variants (argv[1]), each exactly one standard-library call:
//
//	decoderune    a utf8.DecodeRune loop; replace mode with one error record per
//	              (RuneError, 1) it returns, reason from utf8.FullRune
//	runes         []rune(string(b)); replace mode, text only
//	tovalidutf8   strings.ToValidUTF8(string(b), "\uFFFD"); replace mode, text only
//	valid         utf8.Valid(b); validate mode
//
// A request in a mode the variant did not offer is answered "failed" (status 2):
// the harness never sends one, so seeing it is a harness bug worth a message.
// Each answers history requests (hello flag 64: each history input decoded and its
// answer dropped, then the input) and placed requests (flag 128: the input decoded
// as a slice of a larger buffer of guard bytes).
package main

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"unicode/utf8"
)

const (
	modeStrict   = 1
	modeReplace  = 2
	modeValidate = 3

	flagReplace  = 2
	flagReasons  = 4
	flagValidate = 8
	flagTextOnly = 16
	flagHistory  = 64
	flagPlaced   = 128
	// or'ed into a request's mode: its input comes after a history, or placed
	history  = 0x40
	placed   = 0x20
	modeMask = 0x1F

	decoded = 0
	failed  = 2

	illegal   = 1
	truncated = 2
)

type variant struct {
	flags uint16
	mode  byte
	api   string
	// answer appends the reply's body after the id (status and the rest)
	answer func(out, data []byte) []byte
}

var variants = map[string]variant{
	"decoderune":  {flagReplace | flagReasons, modeReplace, "utf8.DecodeRune loop", decodeRune},
	"runes":       {flagReplace | flagTextOnly, modeReplace, "[]rune(string(b))", runes},
	"tovalidutf8": {flagReplace | flagTextOnly, modeReplace, `strings.ToValidUTF8(s, "\uFFFD")`, toValid},
	"valid":       {flagValidate, modeValidate, "utf8.Valid", valid},
}

func put32(out []byte, v uint32) []byte {
	return binary.LittleEndian.AppendUint32(out, v)
}

// text appends a decoded reply with no error records: the code points of s.
func text(out []byte, s string) []byte {
	out = append(out, decoded)
	out = put32(out, uint32(utf8.RuneCountInString(s)))
	out = put32(out, 0)
	for _, r := range s {
		out = put32(out, uint32(r))
	}
	return out
}

// decodeRune: utf8.DecodeRune returns (RuneError, 1) for each byte it cannot
// decode, so each such byte is one error record. Its reason is truncated when
// utf8.FullRune says the bytes from there to the end do not yet hold a full rune
// (a proper prefix of a valid encoding: an invalid one "is considered a full
// Rune"), illegal otherwise.
func decodeRune(out, data []byte) []byte {
	cps := make([]uint32, 0, len(data))
	var errs []uint32
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size == 1 {
			reason := uint32(illegal)
			if !utf8.FullRune(data[i:]) {
				reason = truncated
			}
			errs = append(errs, uint32(i), uint32(i+1), reason)
		}
		cps = append(cps, uint32(r))
		i += size
	}
	out = append(out, decoded)
	out = put32(out, uint32(len(cps)))
	out = put32(out, uint32(len(errs)/3))
	for _, c := range cps {
		out = put32(out, c)
	}
	for _, e := range errs {
		out = put32(out, e)
	}
	return out
}

func runes(out, data []byte) []byte {
	rs := []rune(string(data))
	out = append(out, decoded)
	out = put32(out, uint32(len(rs)))
	out = put32(out, 0)
	for _, r := range rs {
		out = put32(out, uint32(r))
	}
	return out
}

func toValid(out, data []byte) []byte {
	return text(out, strings.ToValidUTF8(string(data), "\uFFFD"))
}

func valid(out, data []byte) []byte {
	if utf8.Valid(data) {
		return append(out, 0) // well-formed
	}
	return append(out, 1)
}

func frame(w *bufio.Writer, payload []byte) error {
	var head [4]byte
	binary.LittleEndian.PutUint32(head[:], uint32(len(payload)))
	if _, err := w.Write(head[:]); err != nil {
		return err
	}
	_, err := w.Write(payload)
	return err
}

// answerKind appends the answer to a request's body (what follows the mode byte)
// of kind (0, history or placed) to out; an error says why it is no such request.
func answerKind(v variant, kind byte, out, body []byte) ([]byte, error) {
	switch kind {
	case 0:
		return v.answer(out, body), nil
	case history: // u32 K, K u32 lengths, the K history inputs, then the input
		if len(body) < 4 {
			return out, fmt.Errorf("a history request without its count")
		}
		k := uint64(binary.LittleEndian.Uint32(body))
		if uint64(len(body)-4)/4 < k {
			return out, fmt.Errorf("a history request shorter than its table")
		}
		at := 4 + 4*k
		var dropped []byte
		for c := uint64(0); c < k; c++ {
			n := uint64(binary.LittleEndian.Uint32(body[4+4*c:]))
			if uint64(len(body))-at < n {
				return out, fmt.Errorf("a history request shorter than its history")
			}
			dropped = v.answer(dropped[:0], body[at:at+n])
			at += n
		}
		return v.answer(out, body[at:]), nil
	case placed: // u32 offset, u32 total, u8 guard, then the input
		if len(body) < 9 {
			return out, fmt.Errorf("a placed request without its placement")
		}
		offset := uint64(binary.LittleEndian.Uint32(body))
		total := uint64(binary.LittleEndian.Uint32(body[4:]))
		data := body[9:]
		if offset > total || total-offset < uint64(len(data)) {
			return out, fmt.Errorf("an input outside its buffer")
		}
		buf := make([]byte, total)
		for i := range buf {
			buf[i] = body[8]
		}
		copy(buf[offset:], data)
		return v.answer(out, buf[offset:offset+uint64(len(data))]), nil
	}
	return out, fmt.Errorf("a request of a kind the hello does not offer")
}

func main() {
	var v variant
	ok := len(os.Args) == 2
	if ok {
		v, ok = variants[os.Args[1]]
	}
	if !ok {
		fmt.Fprintln(os.Stderr, "usage: go-peer decoderune|runes|tovalidutf8|valid")
		os.Exit(2)
	}
	in := bufio.NewReaderSize(os.Stdin, 1<<16)
	out := bufio.NewWriterSize(os.Stdout, 1<<16)
	name := "go-" + os.Args[1]
	hello := []byte("U8FZ")
	hello = binary.LittleEndian.AppendUint16(hello, 1) // protocol version
	hello = binary.LittleEndian.AppendUint16(hello, v.flags|flagHistory|flagPlaced)
	hello = binary.LittleEndian.AppendUint16(hello, uint16(len(name)))
	// the free text: what produced the outcomes, as provenance keys
	about, _ := json.Marshal(map[string]string{"go": runtime.Version(), "call": v.api})
	hello = append(append(hello, name...), about...)
	if frame(out, hello) != nil || out.Flush() != nil {
		return
	}
	var head [4]byte
	payload := make([]byte, 0, 1<<16)
	for {
		if _, err := io.ReadFull(in, head[:]); err != nil {
			return // end of requests
		}
		n := binary.LittleEndian.Uint32(head[:])
		if n < 5 {
			fmt.Fprintln(os.Stderr, "go-peer: a request shorter than its id and mode")
			os.Exit(2)
		}
		req := make([]byte, n)
		if _, err := io.ReadFull(in, req); err != nil {
			return
		}
		payload = binary.LittleEndian.AppendUint32(payload[:0], binary.LittleEndian.Uint32(req))
		if req[4]&modeMask == v.mode {
			var err error
			if payload, err = answerKind(v, req[4]&^modeMask, payload, req[5:]); err != nil {
				payload = append(append(payload[:4], failed), err.Error()...)
			}
		} else {
			payload = append(payload, failed)
			payload = append(payload, fmt.Sprintf("mode %d: this variant answers mode %d", req[4], v.mode)...)
		}
		if frame(out, payload) != nil {
			return
		}
		// answer before blocking on the next read: the harness pipelines, and a
		// reply held back while waiting for input would stall both sides
		if in.Buffered() == 0 && out.Flush() != nil {
			return
		}
	}
}
