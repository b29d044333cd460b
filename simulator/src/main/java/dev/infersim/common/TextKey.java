package dev.infersim.common;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * The identity of a generated text, shared by the mock's truth log ({@code output_text_sha256}) and {@code check-harness},
 * which matches a harness's saved text to the request the server generated it for: the first 16 hex digits (64 bits)
 * of SHA-256 over the UTF-8 of the text with every whitespace character removed. Removing whitespace lets a harness
 * that strips the text, or joins its chunks with spaces or newlines, still match; the mock's output is a pure function
 * of its seed and the request's sequence number, so two requests share a key only when they share their text.
 */
public final class TextKey {
    private static final char[] HEX = "0123456789abcdef".toCharArray();

    private TextKey() {
    }

    /** The key of {@code text}; null for a null or blank text (nothing to tell requests apart by). */
    public static String of(String text) {
        if (text == null) {
            return null;
        }
        StringBuilder kept = new StringBuilder(text.length());
        text.codePoints().filter(c -> !Character.isWhitespace(c)).forEach(kept::appendCodePoint);
        if (kept.isEmpty()) {
            return null;
        }
        return hex(sha256().digest(kept.toString().getBytes(StandardCharsets.UTF_8)));
    }

    /**
     * The key of a prompt as token ids (SHA-256 over each id's four bytes, big-endian; 16 hex digits); null for none.
     * Two requests share it only when they sent the same prompt.
     */
    public static String ofTokens(int[] ids) {
        if (ids == null || ids.length == 0) {
            return null;
        }
        java.nio.ByteBuffer bytes = java.nio.ByteBuffer.allocate(4 * ids.length);
        for (int id : ids) {
            bytes.putInt(id);
        }
        return hex(sha256().digest(bytes.array()));
    }

    private static String hex(byte[] digest) {
        char[] hex = new char[16];
        for (int i = 0; i < 8; i++) {
            hex[2 * i] = HEX[(digest[i] >> 4) & 0xF];
            hex[2 * i + 1] = HEX[digest[i] & 0xF];
        }
        return new String(hex);
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has SHA-256", e);
        }
    }
}
