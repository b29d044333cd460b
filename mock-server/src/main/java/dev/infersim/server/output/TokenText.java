package dev.infersim.server.output;

import dev.infersim.common.SplitMix64;
import dev.infersim.server.json.Json;
import dev.infersim.server.text.DatasetReplies;
import dev.infersim.server.text.LoremVocabulary;
import dev.infersim.server.text.PromptTokenizer;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The output token sequence of one choice, by index: lorem words from a seed, or the echoed prompt repeated, with
 * runs of given pieces spliced in at fixed positions (a reasoning model's think markers, a generated JSON value). Each
 * token has its text and its JSON-escaped UTF-8 bytes ready for an SSE chunk.
 */
public final class TokenText {
    private final LoremVocabulary vocabulary;
    private final long seed;
    private final int[] echoIds;
    private final String[] echoPieces;
    private final byte[][] echoJson;
    /** Spliced runs, in order: run r covers tokens runStart[r] .. runStart[r] + runPieces[r].length - 1; null for none. */
    private final int[] runStart;
    private final String[][] runPieces;
    private final byte[][][] runJson;

    /** Whether the given tokens repeat (echo) or, once used up, lorem from the seed follows (a stored reply). */
    private final boolean cycles;

    private TokenText(LoremVocabulary vocabulary, long seed, int[] echoIds, String[] echoPieces, byte[][] echoJson) {
        this(vocabulary, seed, echoIds, echoPieces, echoJson, null, null, null, true);
    }

    private TokenText(LoremVocabulary vocabulary, long seed, int[] echoIds, String[] echoPieces, byte[][] echoJson,
                      int[] runStart, String[][] runPieces, byte[][][] runJson, boolean cycles) {
        this.cycles = cycles;
        this.vocabulary = vocabulary;
        this.seed = seed;
        this.echoIds = echoIds;
        this.echoPieces = echoPieces;
        this.echoJson = echoJson;
        this.runStart = runStart;
        this.runPieces = runPieces;
        this.runJson = runJson;
    }

    /**
     * This text with {@code pieces[r]} in place of the tokens from {@code starts[r]} on (runs in order, not
     * overlapping); the tokens between and after the runs stay this text's.
     */
    TokenText splice(int[] starts, String[][] pieces) {
        byte[][][] json = new byte[pieces.length][][];
        for (int r = 0; r < pieces.length; r++) {
            json[r] = new byte[pieces[r].length][];
            for (int k = 0; k < pieces[r].length; k++) {
                json[r][k] = Json.escapedUtf8(pieces[r][k]);
            }
        }
        return new TokenText(vocabulary, seed, echoIds, echoPieces, echoJson, starts.clone(), pieces.clone(), json, cycles);
    }

    /** The run covering token {@code i}, or -1. */
    private int runAt(int i) {
        if (runStart == null) {
            return -1;
        }
        for (int r = 0; r < runStart.length; r++) {
            if (i >= runStart[r] && i < runStart[r] + runPieces[r].length) {
                return r;
            }
        }
        return -1;
    }

    public static TokenText lorem(LoremVocabulary vocabulary, long seed) {
        return new TokenText(vocabulary, seed, null, null, null);
    }

    /**
     * A stored reply ({@link DatasetReplies}): its token ids and their texts, then, should the request run past them
     * (ignore_eos), lorem from {@code seed}.
     */
    public static TokenText reply(int[] ids, String[] pieces, LoremVocabulary vocabulary, long seed) {
        byte[][] json = new byte[ids.length][];
        for (int i = 0; i < ids.length; i++) {
            json[i] = Json.escapedUtf8(pieces[i]);
        }
        return new TokenText(vocabulary, seed, ids, pieces, json, null, null, null, false);
    }

    /** Whether token {@code i} is one of the given ones (echoed or stored), not lorem. */
    private boolean given(int i) {
        return echoIds != null && (cycles || i < echoIds.length);
    }

    /**
     * The given token ids, cycled. As in vLLM's incremental detokenizer, a token that ends inside a multi-byte
     * character adds no text and the token completing it carries the whole character, so the pieces join up to the
     * prompt's text (an emoji split over three tokens would otherwise stream as three U+FFFD).
     */
    public static TokenText echo(PromptTokenizer tokenizer, int[] ids) {
        String[] pieces = pieces(tokenizer, ids);
        byte[][] json = new byte[ids.length][];
        for (int i = 0; i < ids.length; i++) {
            json[i] = Json.escapedUtf8(pieces[i]);
        }
        return new TokenText(null, 0, ids, pieces, json);
    }

    /**
     * The text each token of {@code ids} adds when they are decoded in turn, as vLLM's incremental detokenizer gives
     * it: a token that ends inside a multi-byte character adds nothing and the token completing it adds the character.
     */
    static String[] pieces(PromptTokenizer tokenizer, int[] ids) {
        String[] pieces = new String[ids.length];
        byte[] pending = new byte[0];
        for (int i = 0; i < ids.length; i++) {
            byte[] token = tokenizer.bytes(ids[i]);
            byte[] b = Arrays.copyOf(pending, pending.length + token.length);
            System.arraycopy(token, 0, b, pending.length, token.length);
            int complete = i == ids.length - 1 ? b.length : completeUtf8Prefix(b); // the cycle's end flushes all
            pieces[i] = new String(b, 0, complete, StandardCharsets.UTF_8);
            pending = Arrays.copyOfRange(b, complete, b.length);
        }
        return pieces;
    }

    /** Length of the longest prefix of {@code b} that does not end inside a UTF-8 sequence. */
    static int completeUtf8Prefix(byte[] b) {
        for (int back = 1; back <= Math.min(4, b.length); back++) {
            int x = b[b.length - back] & 0xFF;
            if ((x & 0xC0) == 0x80) {
                continue; // a continuation byte: look further back for the sequence's lead byte
            }
            int length = x >= 0xF0 ? 4 : x >= 0xE0 ? 3 : x >= 0xC0 ? 2 : 1;
            return length > back ? b.length - back : b.length;
        }
        return b.length; // no lead byte: not UTF-8, decoded as it is
    }

    public int id(int i) {
        return given(i) ? echoIds[i % echoIds.length] : vocabulary.ids[vocabulary.indexAt(seed, i)];
    }

    public String piece(int i) {
        int r = runAt(i);
        if (r >= 0) {
            return runPieces[r][i - runStart[r]];
        }
        return given(i) ? echoPieces[i % echoIds.length] : vocabulary.pieces[vocabulary.indexAt(seed, i)];
    }

    public byte[] json(int i) {
        int r = runAt(i);
        if (r >= 0) {
            return runJson[r][i - runStart[r]];
        }
        return given(i) ? echoJson[i % echoIds.length] : vocabulary.jsonPieces[vocabulary.indexAt(seed, i)];
    }

    /** A plausible alternative token for synthetic top_logprobs (never equal to token i). */
    public String alternative(int i, int rank) {
        if (vocabulary == null) {
            return piece(i + rank);
        }
        int own = vocabulary.indexAt(seed, i);
        int alt = (int) ((SplitMix64.valueAt(seed ^ 0x51ED27L, (long) i * 31 + rank) >>> 1) % (vocabulary.pieces.length - 1));
        return vocabulary.pieces[alt >= own ? alt + 1 : alt];
    }

    /** The first {@code count} tokens' text. */
    public String text(int count) {
        StringBuilder b = new StringBuilder(count * 6);
        for (int i = 0; i < count; i++) {
            b.append(piece(i));
        }
        return b.toString();
    }
}
