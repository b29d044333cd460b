package dev.infersim.server.text;

import dev.infersim.common.SplitMix64;
import dev.infersim.server.json.Json;

import java.util.ArrayList;
import java.util.List;

/**
 * The mock model's lorem output: common English words, each one cl100k_base token with its leading space, and a full
 * stop every few words. Token {@code i} of a text is a pure function of (seed, i), so any token can be produced on any
 * thread without state, and the same seed always gives the same text. Pieces split exactly at cl100k's pre-tokenizer
 * boundaries ({@code " word"}, {@code "."}), so re-tokenizing the text gives back the same ids.
 */
public final class LoremVocabulary {
    private static final String WORDS = "the of and to in is was for that on as with by at from his an were are which this be "
            + "has had one their not but all its new first two been they who after also other more time into over most "
            + "years only some would during these may many such city under between about while where both three used when "
            + "then known world system made state part later through school since well around each house people music "
            + "number work water small light model data power early large place line order point field level form study "
            + "group course value common result change process design market family night river story game "
            + "team road plan space sound heart voice color paper table stone train cloud green quiet simple";

    public final int[] ids;
    public final String[] pieces;
    public final byte[][] jsonPieces;
    private final int periodIndex;

    public LoremVocabulary(PromptTokenizer tokenizer) {
        List<String> accepted = new ArrayList<>();
        List<Integer> acceptedIds = new ArrayList<>();
        for (String w : WORDS.split(" ")) {
            String piece = " " + w;
            int[] enc = tokenizer.encode(piece);
            if (enc.length == 1 && !accepted.contains(piece)) {
                accepted.add(piece);
                acceptedIds.add(enc[0]);
            }
        }
        accepted.add(".");
        acceptedIds.add(tokenizer.encode(".")[0]);
        periodIndex = accepted.size() - 1;
        ids = acceptedIds.stream().mapToInt(Integer::intValue).toArray();
        pieces = accepted.toArray(String[]::new);
        jsonPieces = new byte[pieces.length][];
        for (int i = 0; i < pieces.length; i++) {
            jsonPieces[i] = Json.escapedUtf8(pieces[i]);
        }
    }

    /** Vocabulary index of token {@code i} of the text with this seed: a word, or a full stop (never two in a row, never first). */
    public int indexAt(long seed, int i) {
        long h = SplitMix64.valueAt(seed, i);
        if (i > 0 && (h & 15) == 0 && (SplitMix64.valueAt(seed, i - 1) & 15) != 0) {
            return periodIndex;
        }
        return (int) ((h >>> 8) % periodIndex);
    }
}
