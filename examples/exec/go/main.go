// A utf8fuzz exec client in Go: the standard library's unicode/utf8, speaking
// the protocol of docs/protocol.md on stdin/stdout.
//
//	go build -o utf8_client_go examples/exec/go/main.go
//	utf8fuzz diff --decoder exec:./utf8_client_go@unicode/per-byte "61 F1 80 80 E1 80 C2 62"
//
// utf8.DecodeRune returns (RuneError, 1) for every byte it cannot decode, so Go
// cuts errors one byte at a time where Unicode's maximal subparts may be longer
// (E1 80 followed by 41 is one error for maximal subparts, two for Go): the
// per-byte policy, which is what this client claims. An error whose bytes to the
// end of the input begin a sequence (utf8.FullRune is false) is truncated.
//
// It answers history requests (hello flag 64: each history input decoded and its
// answer dropped, then the input; unicode/utf8 keeps no state) and placed requests
// (flag 128: the input decoded as a slice of a larger buffer of guard bytes).
package main

import (
	"bufio"
	"encoding/binary"
	"io"
	"os"
	"unicode/utf8"
)

const (
	modeStrict  = 1
	modeReplace = 2
	decoded     = 0
	rejected    = 1
	failed      = 2
	illegal     = 1
	truncated   = 2
	// or'ed into a request's mode: its input comes after a history, or placed
	history  = 0x40
	placed   = 0x20
	modeMask = 0x1F
)

type decodeError struct{ start, end, reason uint32 }

func put32(out []byte, v uint32) []byte {
	return binary.LittleEndian.AppendUint32(out, v)
}

// decode gives the code points (U+FFFD for each error) and the errors of data.
func decode(data []byte, strict bool) ([]uint32, []decodeError) {
	var cps []uint32
	var errs []decodeError
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size == 1 {
			// DecodeRune says (RuneError, 1) for every ill-formed byte; FullRune
			// tells a prefix cut off by the end of the input from the rest
			reason := uint32(illegal)
			if !utf8.FullRune(data[i:]) {
				reason = truncated
			}
			errs = append(errs, decodeError{uint32(i), uint32(i + 1), reason})
			if strict {
				break
			}
		}
		cps = append(cps, uint32(r))
		i += size
	}
	return cps, errs
}

func reply(id uint32, mode byte, data []byte) []byte {
	out := put32(make([]byte, 0, 13+16*len(data)), id)
	if mode != modeStrict && mode != modeReplace {
		return append(append(out, failed), "unknown mode"...)
	}
	cps, errs := decode(data, mode == modeStrict)
	if mode == modeStrict && len(errs) > 0 {
		out = append(out, rejected)
		out = put32(out, errs[0].start)
		out = put32(out, errs[0].end)
		return put32(out, errs[0].reason)
	}
	out = append(out, decoded)
	out = put32(out, uint32(len(cps)))
	out = put32(out, uint32(len(errs)))
	for _, c := range cps {
		out = put32(out, c)
	}
	for _, e := range errs {
		out = put32(put32(put32(out, e.start), e.end), e.reason)
	}
	return out
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

func die(what string) {
	os.Stderr.WriteString("utf8_client_go: " + what + "\n")
	os.Exit(2)
}

// answer is the reply to one request payload: u32 id, u8 mode (maybe with
// history or placed), then what that kind of request carries.
func answer(req []byte) []byte {
	id, code, body := binary.LittleEndian.Uint32(req), req[4], req[5:]
	mode := code & modeMask
	switch code &^ modeMask {
	case 0:
		return reply(id, mode, body)
	case history: // u32 K, K u32 lengths, the K history inputs, then the input
		if len(body) < 4 {
			die("a history request without its count")
		}
		k := uint64(binary.LittleEndian.Uint32(body))
		if uint64(len(body)-4)/4 < k {
			die("a history request shorter than its table")
		}
		at := 4 + 4*k
		for c := uint64(0); c < k; c++ {
			n := uint64(binary.LittleEndian.Uint32(body[4+4*c:]))
			if uint64(len(body))-at < n {
				die("a history request shorter than its history")
			}
			reply(0, mode, body[at:at+n])
			at += n
		}
		return reply(id, mode, body[at:])
	case placed: // u32 offset, u32 total, u8 guard, then the input
		if len(body) < 9 {
			die("a placed request without its placement")
		}
		offset := uint64(binary.LittleEndian.Uint32(body))
		total := uint64(binary.LittleEndian.Uint32(body[4:]))
		guard, data := body[8], body[9:]
		if offset > total || total-offset < uint64(len(data)) {
			die("an input outside its buffer")
		}
		buf := make([]byte, total)
		for i := range buf {
			buf[i] = guard
		}
		copy(buf[offset:], data)
		return reply(id, mode, buf[offset:offset+uint64(len(data))])
	}
	die("a request of a kind its hello does not offer")
	return nil
}

func main() {
	in := bufio.NewReaderSize(os.Stdin, 1<<16)
	out := bufio.NewWriterSize(os.Stdout, 1<<16)
	name := "go-unicode-utf8"
	hello := []byte("U8FZ")
	hello = binary.LittleEndian.AppendUint16(hello, 1) // protocol version
	// strict, replace, reasons, history, placed
	hello = binary.LittleEndian.AppendUint16(hello, 1|2|4|64|128)
	hello = binary.LittleEndian.AppendUint16(hello, uint16(len(name)))
	hello = append(append(hello, name...), "examples/exec/go/main.go"...)
	if frame(out, hello) != nil || out.Flush() != nil {
		return
	}
	var head [4]byte
	for {
		if _, err := io.ReadFull(in, head[:]); err != nil {
			return // end of requests
		}
		n := binary.LittleEndian.Uint32(head[:])
		if n < 5 {
			os.Stderr.WriteString("utf8_client_go: a request shorter than its id and mode\n")
			os.Exit(2)
		}
		req := make([]byte, n)
		if _, err := io.ReadFull(in, req); err != nil {
			return
		}
		if frame(out, answer(req)) != nil {
			return
		}
		// answer before blocking on the next read: the harness pipelines, and a
		// reply held back while waiting for input would stall both sides
		if in.Buffered() == 0 && out.Flush() != nil {
			return
		}
	}
}
