package dev.infersim.bench;

import java.nio.charset.StandardCharsets;

/**
 * Allocation-free scanning of one SSE {@code data:} payload (a JSON object as OpenAI-compatible servers stream it) for
 * the few fields a benchmark needs, without building a JSON tree: key lookup by byte pattern, integer values, and
 * whether a string value is empty. Payloads are {@code byte[buf]} ranges {@code [from, to)}.
 */
final class SseScan {
    static final byte[] DONE = ascii("[DONE]");
    static final byte[] CONTENT = ascii("\"content\":");
    static final byte[] TEXT = ascii("\"text\":");
    static final byte[] COMPLETION_TOKENS = ascii("\"completion_tokens\":");
    static final byte[] PROMPT_TOKENS = ascii("\"prompt_tokens\":");
    static final byte[] ERROR = ascii("\"error\":");
    static final byte[] OBJECT_ERROR = ascii("\"object\":\"error\"");
    static final byte[] INFERSIM = ascii("\"infersim\":");
    static final byte[] FINISH_REASON = ascii("\"finish_reason\":\"");

    private SseScan() {
    }

    static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    /** First index of {@code needle} in {@code buf[from, to)}, or -1. */
    static int indexOf(byte[] buf, int from, int to, byte[] needle) {
        int last = to - needle.length;
        byte first = needle[0];
        for (int i = from; i <= last; i++) {
            if (buf[i] != first) {
                continue;
            }
            int k = 1;
            while (k < needle.length && buf[i + k] == needle[k]) {
                k++;
            }
            if (k == needle.length) {
                return i;
            }
        }
        return -1;
    }

    /** Whether {@code buf[from, to)}, trimmed of spaces, equals {@code word}. */
    static boolean equalsTrimmed(byte[] buf, int from, int to, byte[] word) {
        while (from < to && buf[from] == ' ') {
            from++;
        }
        while (to > from && (buf[to - 1] == ' ' || buf[to - 1] == '\r')) {
            to--;
        }
        return to - from == word.length && indexOf(buf, from, to, word) == from;
    }

    /** The non-negative integer after key {@code key} (which ends with the colon), or -1 when absent or null. */
    static long longAfter(byte[] buf, int from, int to, byte[] key) {
        int at = indexOf(buf, from, to, key);
        if (at < 0) {
            return -1;
        }
        int i = skipSpaces(buf, at + key.length, to);
        long value = -1;
        while (i < to && buf[i] >= '0' && buf[i] <= '9') {
            value = (value < 0 ? 0 : value * 10) + (buf[i] - '0');
            i++;
        }
        return value;
    }

    /**
     * Start of the string value after {@code key} (index of its first character) when that value is a non-empty
     * string; -1 when the key is absent, null, or the empty string.
     */
    static int nonEmptyStringAfter(byte[] buf, int from, int to, byte[] key) {
        int at = indexOf(buf, from, to, key);
        if (at < 0) {
            return -1;
        }
        int i = skipSpaces(buf, at + key.length, to);
        if (i + 1 >= to || buf[i] != '"' || buf[i + 1] == '"') {
            return -1;
        }
        return i + 1;
    }

    /**
     * Appends the JSON string starting at {@code start} (just after its opening quote) to {@code out}, decoding
     * escapes, and returns the index after its closing quote.
     */
    static int appendString(byte[] buf, int start, int to, StringBuilder out) {
        int i = start;
        int runStart = i;
        while (i < to && buf[i] != '"') {
            if (buf[i] == '\\' && i + 1 < to) {
                appendUtf8(buf, runStart, i, out);
                char c = (char) buf[i + 1];
                if (c == 'u' && i + 5 < to) {
                    out.append((char) Integer.parseInt(new String(buf, i + 2, 4, StandardCharsets.US_ASCII), 16));
                    i += 6;
                } else {
                    out.append(switch (c) {
                        case 'n' -> '\n';
                        case 't' -> '\t';
                        case 'r' -> '\r';
                        case 'b' -> '\b';
                        case 'f' -> '\f';
                        default -> c;
                    });
                    i += 2;
                }
                runStart = i;
            } else {
                i++;
            }
        }
        appendUtf8(buf, runStart, i, out);
        return i + 1;
    }

    private static void appendUtf8(byte[] buf, int from, int to, StringBuilder out) {
        boolean ascii = true;
        for (int k = from; k < to && ascii; k++) {
            ascii = buf[k] >= 0;
        }
        if (ascii) {
            for (int k = from; k < to; k++) {
                out.append((char) buf[k]);
            }
        } else {
            out.append(new String(buf, from, to - from, StandardCharsets.UTF_8));
        }
    }

    private static int skipSpaces(byte[] buf, int i, int to) {
        while (i < to && buf[i] == ' ') {
            i++;
        }
        return i;
    }
}
