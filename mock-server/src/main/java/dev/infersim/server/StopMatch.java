package dev.infersim.server;

import java.util.List;

/**
 * Where a stop string first appears in a choice's text, as vLLM's stop checker finds it: not before {@code min_tokens}
 * tokens, the match ends generation at the token that completes it, and the text is cut where the stop string starts.
 *
 * @param tokens      tokens generated up to and including the one completing the match (the engine's EOS position)
 * @param textLength  characters of output text kept (the stop string and anything after it are dropped)
 * @param stop        the stop string that matched (vLLM's {@code stop_reason})
 */
record StopMatch(int tokens, int textLength, String stop) {

    /** Scans the first {@code limit} tokens; null when no stop string appears. */
    static StopMatch find(TokenText text, List<String> stops, int minTokens, int limit) {
        if (stops.isEmpty()) {
            return null;
        }
        int longest = 0;
        for (String s : stops) {
            longest = Math.max(longest, s.length());
        }
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < limit; i++) {
            String piece = text.piece(i);
            b.append(piece);
            if (i + 1 < minTokens) {
                continue;
            }
            int from = Math.max(0, b.length() - piece.length() - longest + 1);
            int best = -1;
            String matched = null;
            for (String s : stops) {
                int at = b.indexOf(s, from);
                if (at >= 0 && (best < 0 || at < best)) {
                    best = at;
                    matched = s;
                }
            }
            if (best >= 0) {
                return new StopMatch(i + 1, best, matched);
            }
        }
        return null;
    }
}
