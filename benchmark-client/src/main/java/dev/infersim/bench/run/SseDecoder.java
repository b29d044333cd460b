package dev.infersim.bench.run;

import io.vertx.core.buffer.Buffer;

import java.util.Arrays;

/**
 * Server-sent events framing as the WHATWG HTML standard defines it (section 9.2.6, "Interpreting an event
 * stream"): lines end in CRLF, LF or a lone CR; a line starting with a colon is a comment ({@code : ping}); a field
 * is {@code name:value} with one optional space after the colon, or a bare name; {@code data} lines of one event are
 * joined with LF; {@code event} names the event's type; {@code id} and {@code retry} are read past; an empty line
 * dispatches the event, and only if it had data. A leading byte-order mark is skipped. At the end of the stream an
 * event still waiting for its empty line is dispatched too (the standard drops it, but servers that end the stream
 * right after their last {@code data:} line mean it). Reused: the line and data buffers grow once, then stay, so
 * decoding allocates nothing.
 */
final class SseDecoder {

    /** Receives each event: its data (joined lines) in {@code data[0, length)}, valid only during the call. */
    interface Listener {
        /**
         * @param errorEvent whether the event's type was {@code error}
         * @param nanos      when the read that completed the event arrived
         */
        void event(boolean errorEvent, byte[] data, int length, long nanos);
    }

    private static final byte[] DATA = {'d', 'a', 't', 'a'};
    private static final byte[] EVENT = {'e', 'v', 'e', 'n', 't'};
    private static final byte[] ERROR = {'e', 'r', 'r', 'o', 'r'};

    private final Listener listener;
    private byte[] line = new byte[1024];
    private int lineLength;
    private byte[] data = new byte[1024];
    private int dataLength;
    private boolean hasData;
    private boolean errorEvent;
    private boolean afterCr;
    private boolean started;

    SseDecoder(Listener listener) {
        this.listener = listener;
    }

    /** Forgets any partial line and event, for the next stream. */
    void reset() {
        lineLength = 0;
        dataLength = 0;
        hasData = false;
        errorEvent = false;
        afterCr = false;
        started = false;
    }

    /** Decodes one network read; every event it completes goes to the listener with {@code nanos}. */
    void feed(Buffer chunk, long nanos) {
        int n = chunk.length();
        for (int i = 0; i < n; i++) {
            byte b = chunk.getByte(i);
            if (b == '\n' && afterCr) {
                afterCr = false; // the LF of a CRLF: the line already ended at the CR
            } else if (b == '\n' || b == '\r') {
                afterCr = b == '\r';
                endLine(nanos);
            } else {
                afterCr = false;
                if (lineLength == line.length) {
                    line = Arrays.copyOf(line, line.length * 2);
                }
                line[lineLength++] = b;
            }
        }
    }

    /** The stream ended: a last line without its line break, and an event without its empty line, still count. */
    void end(long nanos) {
        if (lineLength > 0) {
            endLine(nanos);
        }
        dispatch(nanos);
    }

    private void endLine(long nanos) {
        if (!started) {
            started = true;
            // The byte-order mark is looked for in the whole first line: a read may end inside it.
            if (lineLength >= 3 && line[0] == (byte) 0xEF && line[1] == (byte) 0xBB && line[2] == (byte) 0xBF) {
                System.arraycopy(line, 3, line, 0, lineLength - 3);
                lineLength -= 3;
            }
        }
        int length = lineLength;
        lineLength = 0;
        if (length == 0) {
            dispatch(nanos);
            return;
        }
        if (line[0] == ':') {
            return; // a comment, such as a keep-alive ": ping"
        }
        int colon = 0;
        while (colon < length && line[colon] != ':') {
            colon++;
        }
        int value = Math.min(length, colon + 1);
        if (value < length && line[value] == ' ') {
            value++;
        }
        if (is(DATA, colon)) {
            appendData(value, length);
        } else if (is(EVENT, colon)) {
            errorEvent = length - value == ERROR.length && Arrays.equals(line, value, length, ERROR, 0, ERROR.length);
        }
    }

    private boolean is(byte[] field, int nameLength) {
        return nameLength == field.length && Arrays.equals(line, 0, nameLength, field, 0, field.length);
    }

    private void appendData(int from, int to) {
        int needed = dataLength + (hasData ? 1 : 0) + (to - from);
        if (needed > data.length) {
            data = Arrays.copyOf(data, Math.max(needed, data.length * 2));
        }
        if (hasData) {
            data[dataLength++] = '\n';
        }
        System.arraycopy(line, from, data, dataLength, to - from);
        dataLength += to - from;
        hasData = true;
    }

    private void dispatch(long nanos) {
        if (hasData) {
            boolean error = errorEvent;
            int length = dataLength;
            hasData = false;
            dataLength = 0;
            errorEvent = false;
            listener.event(error, data, length, nanos);
        } else {
            errorEvent = false;
        }
    }
}
