// A utf8fuzz exec client in Java: the JDK's UTF-8 CharsetDecoder with
// CodingErrorAction.REPORT, speaking the protocol of docs/protocol.md on
// stdin/stdout.
//
//   javac -d build examples/exec/java/Client.java
//   utf8fuzz diff --decoder "exec:java -cp build Client" "61 F1 80 80 E1 80 C2 62"
//
// The decoder reports each malformed sequence as a CoderResult whose length() is
// the error's length, at the input buffer's position; the client records it,
// writes U+FFFD, steps over it and goes on. Strict mode stops at the first one.
// A CoderResult does not say whether the input ended inside a sequence, so this
// client names no reasons (flag 4 is not set).
//
// It answers history requests (hello flag 64: each history input decoded by the
// same CharsetDecoder, its answer dropped, then the input; each decode starts with
// reset(), as the API requires of a new input, and nothing else is reset) and
// placed requests (flag 128: the input decoded as an offset and a length in a
// larger array of guard bytes, ByteBuffer.wrap(array, offset, length)).
import java.io.BufferedInputStream;
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
import java.util.ArrayList;
import java.util.List;

public final class Client {
    static final int MODE_STRICT = 1;
    // or'ed into a request's mode: its input comes after a history, or placed
    static final int HISTORY = 0x40;
    static final int PLACED = 0x20;
    static final int MODE_MASK = 0x1F;
    static final int DECODED = 0;
    static final int REJECTED = 1;

    static final CharsetDecoder DECODER = StandardCharsets.UTF_8.newDecoder()
            .onMalformedInput(CodingErrorAction.REPORT)
            .onUnmappableCharacter(CodingErrorAction.REPORT);

    /** The reply to the n bytes of buf at off; error offsets count from off. */
    static byte[] reply(int id, int mode, byte[] buf, int off, int n) {
        ByteBuffer in = ByteBuffer.wrap(buf, off, n);
        CharBuffer out = CharBuffer.allocate(2 * n + 2);
        List<int[]> errors = new ArrayList<>();
        DECODER.reset();
        while (true) {
            CoderResult r = DECODER.decode(in, out, true);
            if (r.isUnderflow()) {
                r = DECODER.flush(out);
                if (r.isUnderflow()) break;
            }
            if (r.isError()) {
                int start = in.position();
                errors.add(new int[] {start - off, start - off + r.length()});
                if (mode == MODE_STRICT) break;
                out.put('\uFFFD');
                in.position(start + r.length());
            }
        }
        if (mode == MODE_STRICT && !errors.isEmpty()) {
            ByteBuffer b = ByteBuffer.allocate(17).order(ByteOrder.LITTLE_ENDIAN);
            b.putInt(id).put((byte) REJECTED).putInt(errors.get(0)[0])
                    .putInt(errors.get(0)[1]).putInt(0);
            return b.array();
        }
        out.flip();
        int[] cps = out.codePoints().toArray();
        ByteBuffer b = ByteBuffer.allocate(13 + 4 * cps.length + 12 * errors.size())
                .order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(id).put((byte) DECODED).putInt(cps.length).putInt(errors.size());
        for (int c : cps) b.putInt(c);
        for (int[] e : errors) b.putInt(e[0]).putInt(e[1]).putInt(0);
        return b.array();
    }

    static void die(String what) {
        System.err.println("Client: " + what);
        System.exit(2);
    }

    /** The reply to one request: u32 id, u8 mode (maybe with HISTORY or PLACED),
     * then what that kind of request carries. */
    static byte[] answer(byte[] req) {
        ByteBuffer r = ByteBuffer.wrap(req).order(ByteOrder.LITTLE_ENDIAN);
        int id = r.getInt();
        int code = r.get() & 0xFF;
        int mode = code & MODE_MASK;
        switch (code & ~MODE_MASK) {
            case 0:
                return reply(id, mode, req, 5, req.length - 5);
            case HISTORY: { // u32 K, K u32 lengths, the K history inputs, then the input
                if (req.length < 9) die("a history request without its count");
                long k = r.getInt() & 0xFFFFFFFFL;
                if ((req.length - 9) / 4 < k) die("a history request shorter than its table");
                long at = 9 + 4 * k;
                for (int c = 0; c < k; c++) {
                    long n = r.getInt() & 0xFFFFFFFFL;
                    if (req.length - at < n) die("a history request shorter than its history");
                    reply(0, mode, req, (int) at, (int) n);
                    at += n;
                }
                return reply(id, mode, req, (int) at, req.length - (int) at);
            }
            case PLACED: { // u32 offset, u32 total, u8 guard, then the input
                if (req.length < 14) die("a placed request without its placement");
                long offset = r.getInt() & 0xFFFFFFFFL, total = r.getInt() & 0xFFFFFFFFL;
                byte guard = r.get();
                int n = req.length - 14;
                if (offset > total || total - offset < n || total > Integer.MAX_VALUE - 8)
                    die("an input outside its buffer");
                byte[] buf = new byte[(int) total];
                java.util.Arrays.fill(buf, guard);
                System.arraycopy(req, 14, buf, (int) offset, n);
                return reply(id, mode, buf, (int) offset, n);
            }
            default:
                die("a request of a kind its hello does not offer");
                return null;
        }
    }

    static void frame(OutputStream out, byte[] payload) throws IOException {
        ByteBuffer head = ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN);
        out.write(head.putInt(payload.length).array());
        out.write(payload);
    }

    public static void main(String[] args) throws IOException {
        DataInputStream in = new DataInputStream(new BufferedInputStream(System.in, 1 << 16));
        OutputStream out = new java.io.BufferedOutputStream(System.out, 1 << 16);
        byte[] name = "java-charsetdecoder".getBytes(StandardCharsets.US_ASCII);
        byte[] about = ("java " + System.getProperty("java.version"))
                .getBytes(StandardCharsets.UTF_8);
        ByteBuffer hello = ByteBuffer.allocate(10 + name.length + about.length)
                .order(ByteOrder.LITTLE_ENDIAN);
        hello.put("U8FZ".getBytes(StandardCharsets.US_ASCII)).putShort((short) 1)
                .putShort((short) (1 | 2 | 64 | 128)) // strict, replace, history, placed
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
                System.err.println("Client: a request shorter than its id and mode");
                System.exit(2);
            }
            byte[] req = new byte[len];
            in.readFully(req);
            frame(out, answer(req));
            // answer before blocking on the next read: the harness pipelines, and
            // a reply held in the buffer while waiting for input would stall both
            if (in.available() == 0) out.flush();
        }
    }
}
