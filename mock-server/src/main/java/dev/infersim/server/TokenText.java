package dev.infersim.server;

import java.nio.charset.StandardCharsets;

/**
 * The output token sequence of one choice, by index: lorem words from a seed, or the echoed prompt repeated. Each
 * token has its text and its JSON-escaped UTF-8 bytes ready for an SSE chunk.
 */
final class TokenText {
    private final LoremVocabulary vocabulary;
    private final long seed;
    private final int[] echoIds;
    private final String[] echoPieces;
    private final byte[][] echoJson;

    private TokenText(LoremVocabulary vocabulary, long seed, int[] echoIds, String[] echoPieces, byte[][] echoJson) {
        this.vocabulary = vocabulary;
        this.seed = seed;
        this.echoIds = echoIds;
        this.echoPieces = echoPieces;
        this.echoJson = echoJson;
    }

    static TokenText lorem(LoremVocabulary vocabulary, long seed) {
        return new TokenText(vocabulary, seed, null, null, null);
    }

    /** The given token ids, cycled; each piece decoded on its own. */
    static TokenText echo(PromptTokenizer tokenizer, int[] ids) {
        String[] pieces = new String[ids.length];
        byte[][] json = new byte[ids.length][];
        for (int i = 0; i < ids.length; i++) {
            pieces[i] = tokenizer.piece(ids[i]);
            json[i] = Json.escape(pieces[i]).getBytes(StandardCharsets.UTF_8);
        }
        return new TokenText(null, 0, ids, pieces, json);
    }

    int id(int i) {
        return echoIds != null ? echoIds[i % echoIds.length] : vocabulary.ids[vocabulary.indexAt(seed, i)];
    }

    String piece(int i) {
        return echoIds != null ? echoPieces[i % echoIds.length] : vocabulary.pieces[vocabulary.indexAt(seed, i)];
    }

    byte[] json(int i) {
        return echoIds != null ? echoJson[i % echoIds.length] : vocabulary.jsonPieces[vocabulary.indexAt(seed, i)];
    }

    /** A plausible alternative token for synthetic top_logprobs (never equal to token i). */
    String alternative(int i, int rank) {
        if (vocabulary == null) {
            return piece(i + rank);
        }
        int own = vocabulary.indexAt(seed, i);
        int alt = (int) ((LoremVocabulary.mix(seed ^ 0x51ED27L, (long) i * 31 + rank) >>> 1) % (vocabulary.pieces.length - 1));
        return vocabulary.pieces[alt >= own ? alt + 1 : alt];
    }

    /** The first {@code count} tokens' text. */
    String text(int count) {
        StringBuilder b = new StringBuilder(count * 6);
        for (int i = 0; i < count; i++) {
            b.append(piece(i));
        }
        return b.toString();
    }
}
