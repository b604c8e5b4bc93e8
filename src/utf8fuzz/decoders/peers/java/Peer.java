// utf8fuzz's Java peer: the JDK's UTF-8 decoding, one variant per process,
// speaking the exec protocol of docs/protocol.md on stdin/stdout.
//
//   java -cp DIR Peer VARIANT    (built by python -m utf8fuzz.decoders.peers.build)
//
// Variants (args[0]):
//
//   string          new String(bytes, StandardCharsets.UTF_8); replace mode, text only
//   charsetdecoder  StandardCharsets.UTF_8.newDecoder() with CodingErrorAction.REPORT;
//                   strict mode: the first CoderResult that is an error gives the
//                   span (the input buffer's position, CoderResult.length()).
//   charsetdecoder-stream  the same decoder fed a stream request's chunks (exec
//                   protocol flag 32): each decode(in, out, false) sees the bytes
//                   the last one left unread (a sequence cut off by the chunk's
//                   end) and the new chunk; the end is decode(in, out, true), then
//                   flush. Plain requests are answered as charsetdecoder does.
//
// Reasons (strict mode). The decoder is first run with endOfInput false: an error
// it reports then was proven by the bytes themselves (illegal). If it stops with
// UNDERFLOW and input left over, the JDK is saying it needs more input: those
// bytes are a truncation, and the span is what the same decoder reports for them
// once told the input has ended (endOfInput true).
//
// A request in a mode the variant did not offer is answered "failed" (status 2).
// Each answers history requests (hello flag 64: each history input decoded by the
// same decoder, its answer dropped, then the input; each decode starts with
// reset(), as the API requires of a new input) and placed requests (flag 128: the
// input decoded as an offset and a length in a larger array of guard bytes).
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

public final class Peer {
    static final int MODE_STRICT = 1, MODE_REPLACE = 2;
    static final int FLAG_STRICT = 1, FLAG_REPLACE = 2, FLAG_REASONS = 4, FLAG_TEXT_ONLY = 16;
    static final int FLAG_STREAM = 32, STREAM = 0x80;
    static final int FLAG_HISTORY = 64, HISTORY = 0x40, FLAG_PLACED = 128, PLACED = 0x20;
    static final int DECODED = 0, REJECTED = 1, FAILED = 2;
    static final int ILLEGAL = 1, TRUNCATED = 2;

    static final CharsetDecoder DECODER = StandardCharsets.UTF_8.newDecoder()
            .onMalformedInput(CodingErrorAction.REPORT)
            .onUnmappableCharacter(CodingErrorAction.REPORT);

    static ByteBuffer le(int size) {
        return ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
    }

    static byte[] text(int id, String s) {
        int[] cps = s.codePoints().toArray();
        ByteBuffer b = le(13 + 4 * cps.length);
        b.putInt(id).put((byte) DECODED).putInt(cps.length).putInt(0);
        for (int c : cps) b.putInt(c);
        return b.array();
    }

    static byte[] string(int id, byte[] buf, int off, int n) {
        return text(id, new String(buf, off, n, StandardCharsets.UTF_8));
    }

    static byte[] rejected(int id, int start, int end, int reason) {
        return le(17).putInt(id).put((byte) REJECTED).putInt(start).putInt(end).putInt(reason)
                .array();
    }

    static byte[] failed(int id, String why) {
        byte[] msg = why.getBytes(StandardCharsets.UTF_8);
        return le(5 + msg.length).putInt(id).put((byte) FAILED).put(msg).array();
    }

    /** The n bytes of buf at off; offsets in the reply count from off. */
    static byte[] charsetDecoder(int id, byte[] buf, int off, int n) {
        ByteBuffer in = ByteBuffer.wrap(buf, off, n);
        // UTF-8 never gives more UTF-16 units than bytes: no OVERFLOW
        CharBuffer out = CharBuffer.allocate(n + 1);
        DECODER.reset();
        CoderResult r = DECODER.decode(in, out, false);
        int reason = ILLEGAL;
        if (r.isUnderflow() && in.hasRemaining()) {
            reason = TRUNCATED;
            r = DECODER.decode(in, out, true);
        } else if (r.isUnderflow()) {
            r = DECODER.decode(in, out, true);
        }
        if (r.isUnderflow()) r = DECODER.flush(out);
        if (r.isError()) {
            int start = in.position() - off;
            return rejected(id, start, start + r.length(), reason);
        }
        if (!r.isUnderflow()) return failed(id, "CharsetDecoder: " + r);
        out.flip();
        return text(id, out.toString());
    }

    /** A stream request (u32 K, K u32 chunk lengths, the input) through DECODER. An
     * error reported before the end of the input was proven by the bytes (illegal);
     * one reported at the end is of the bytes left unread, which the decoder was
     * waiting to see completed (truncated). Offsets are into the whole input. */
    static byte[] charsetDecoderStream(int id, byte[] req) {
        ByteBuffer table = ByteBuffer.wrap(req).order(ByteOrder.LITTLE_ENDIAN);
        if (req.length < 4) return failed(id, "a stream request without its chunk count");
        long k = Integer.toUnsignedLong(table.getInt(0));
        if ((req.length - 4) / 4 < k) return failed(id, "a stream request shorter than its table");
        int first = 4 + 4 * (int) k, at = first, n = req.length - first;
        CharBuffer out = CharBuffer.allocate(n + 1);
        DECODER.reset();
        byte[] left = new byte[0];
        int base = 0; // the input offset of left[0]
        for (int c = 0; c < k; c++) {
            int len = table.getInt(4 + 4 * c);
            if (len < 0 || len > req.length - at) return failed(id, "chunks past the input");
            byte[] buf = Arrays.copyOf(left, left.length + len);
            System.arraycopy(req, at, buf, left.length, len);
            at += len;
            ByteBuffer in = ByteBuffer.wrap(buf);
            CoderResult r = DECODER.decode(in, out, false);
            if (r.isError()) {
                int start = base + in.position();
                return rejected(id, start, start + r.length(), ILLEGAL);
            }
            if (!r.isUnderflow()) return failed(id, "CharsetDecoder: " + r);
            left = Arrays.copyOfRange(buf, in.position(), buf.length);
            base = at - first - left.length;
        }
        if (at != req.length) return failed(id, "chunks shorter than the input");
        ByteBuffer in = ByteBuffer.wrap(left);
        CoderResult r = DECODER.decode(in, out, true);
        if (r.isUnderflow()) r = DECODER.flush(out);
        if (r.isError()) {
            int start = base + in.position();
            return rejected(id, start, start + r.length(), TRUNCATED);
        }
        if (!r.isUnderflow()) return failed(id, "CharsetDecoder: " + r);
        out.flip();
        return text(id, out.toString());
    }

    /** A plain request's answer: the n bytes of buf at off, in the variant's mode. */
    static byte[] plain(int mode, int id, byte[] buf, int off, int n) {
        return mode == MODE_STRICT ? charsetDecoder(id, buf, off, n) : string(id, buf, off, n);
    }

    /** A history request (u32 K, K u32 lengths, the K history inputs, then the
     * input): each history input answered and dropped, then the input. */
    static byte[] history(int mode, int id, byte[] req) {
        ByteBuffer table = ByteBuffer.wrap(req).order(ByteOrder.LITTLE_ENDIAN);
        if (req.length < 4) return failed(id, "a history request without its count");
        long k = Integer.toUnsignedLong(table.getInt(0));
        if ((req.length - 4) / 4 < k) return failed(id, "a history request shorter than its table");
        long at = 4 + 4 * k;
        for (int c = 0; c < k; c++) {
            long n = Integer.toUnsignedLong(table.getInt(4 + 4 * c));
            if (req.length - at < n) return failed(id, "a history request shorter than its history");
            plain(mode, 0, req, (int) at, (int) n);
            at += n;
        }
        return plain(mode, id, req, (int) at, req.length - (int) at);
    }

    /** A placed request (u32 offset, u32 total, u8 guard, then the input): the
     * input decoded as its offset and length in an array of guard bytes. */
    static byte[] placed(int mode, int id, byte[] req) {
        ByteBuffer head = ByteBuffer.wrap(req).order(ByteOrder.LITTLE_ENDIAN);
        if (req.length < 9) return failed(id, "a placed request without its placement");
        long offset = Integer.toUnsignedLong(head.getInt(0));
        long total = Integer.toUnsignedLong(head.getInt(4));
        int n = req.length - 9;
        if (offset > total || total - offset < n || total > Integer.MAX_VALUE - 8)
            return failed(id, "an input outside its buffer");
        byte[] buf = new byte[(int) total];
        Arrays.fill(buf, req[8]);
        System.arraycopy(req, 9, buf, (int) offset, n);
        return plain(mode, id, buf, (int) offset, n);
    }

    /** A JSON string of s (the JDK has no JSON writer). */
    static String json(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : String.valueOf(s).toCharArray()) {
            if (c == '"' || c == '\\') b.append('\\').append(c);
            else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
            else b.append(c);
        }
        return b.append('"').toString();
    }

    static void frame(OutputStream out, byte[] payload) throws IOException {
        out.write(le(4).putInt(payload.length).array());
        out.write(payload);
    }

    public static void main(String[] args) throws IOException {
        String variant = args.length == 1 ? args[0] : "";
        int flags, mode;
        String api;
        if (variant.equals("string")) {
            flags = FLAG_REPLACE | FLAG_TEXT_ONLY;
            mode = MODE_REPLACE;
            api = "new String(bytes, UTF_8)";
        } else if (variant.equals("charsetdecoder")) {
            flags = FLAG_STRICT | FLAG_REASONS;
            mode = MODE_STRICT;
            api = "UTF_8.newDecoder(), REPORT";
        } else if (variant.equals("charsetdecoder-stream")) {
            flags = FLAG_STRICT | FLAG_REASONS | FLAG_STREAM;
            mode = MODE_STRICT;
            api = "UTF_8.newDecoder(), REPORT, decode(in, out, endOfInput) per chunk";
        } else {
            System.err.println("usage: java Peer string|charsetdecoder|charsetdecoder-stream");
            System.exit(2);
            return;
        }
        DataInputStream in = new DataInputStream(new BufferedInputStream(System.in, 1 << 16));
        OutputStream out = new BufferedOutputStream(System.out, 1 << 16);
        byte[] name = ("java-" + variant).getBytes(StandardCharsets.US_ASCII);
        // the free text: what produced the outcomes, as provenance keys
        byte[] about = ("{\"java\": " + json(System.getProperty("java.version"))
                + ", \"vm\": " + json(System.getProperty("java.vm.name"))
                + ", \"call\": " + json(api) + "}").getBytes(StandardCharsets.UTF_8);
        ByteBuffer hello = le(10 + name.length + about.length);
        hello.put("U8FZ".getBytes(StandardCharsets.US_ASCII)).putShort((short) 1)
                .putShort((short) (flags | FLAG_HISTORY | FLAG_PLACED))
                .putShort((short) name.length).put(name).put(about);
        frame(out, hello.array());
        out.flush();
        byte[] head = new byte[4];
        while (true) {
            try {
                in.readFully(head);
            } catch (EOFException e) {
                return;
            }
            int len = ByteBuffer.wrap(head).order(ByteOrder.LITTLE_ENDIAN).getInt();
            if (len < 5) {
                System.err.println("java Peer: a request shorter than its id and mode");
                System.exit(2);
            }
            byte[] req = new byte[len];
            in.readFully(req);
            int id = ByteBuffer.wrap(req).order(ByteOrder.LITTLE_ENDIAN).getInt();
            byte[] data = Arrays.copyOfRange(req, 5, len);
            byte[] reply;
            int kind = req[4] & 0xE0;
            boolean stream = kind == STREAM;
            if ((req[4] & 0x1F) != mode || (stream && (flags & FLAG_STREAM) == 0)
                    || (kind != 0 && kind != STREAM && kind != HISTORY && kind != PLACED)) {
                reply = failed(id, "mode " + req[4] + ": this variant answers mode " + mode);
            } else if (stream) {
                reply = charsetDecoderStream(id, data);
            } else if (kind == HISTORY) {
                reply = history(mode, id, data);
            } else if (kind == PLACED) {
                reply = placed(mode, id, data);
            } else {
                reply = plain(mode, id, data, 0, data.length);
            }
            frame(out, reply);
            // answer before blocking on the next read: the harness pipelines, and
            // a reply held in the buffer while waiting for input would stall both
            if (in.available() == 0) out.flush();
        }
    }
}
