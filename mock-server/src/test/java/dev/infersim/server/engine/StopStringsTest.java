package dev.infersim.server.engine;

import dev.infersim.common.SplitMix64;
import dev.infersim.engine.EngineRequest;
import dev.infersim.server.output.StopMatch;
import dev.infersim.server.output.StopStrings;
import dev.infersim.server.output.TokenText;
import dev.infersim.server.text.LoremVocabulary;
import dev.infersim.server.text.PromptTokenizer;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/** Stop strings are found as vLLM's detokenizer finds them, by one automaton reading each character once. */
class StopStringsTest {
    private static final PromptTokenizer TOKENIZER = new PromptTokenizer();
    private static final LoremVocabulary VOCABULARY = new LoremVocabulary(TOKENIZER);

    @Test
    void cutsAtTheFirstStopStringOnlyOnceMoreThanMinTokensExist() {
        TokenText echo = TokenText.echo(TOKENIZER, TOKENIZER.encode("one two three two one"));
        assertEquals(new StopMatch(2, 3, " two"), scan(echo, List.of(" two"), 0, 50));
        StopMatch later = scan(echo, List.of(" two"), 2, 50);
        assertEquals(4, later.tokens(), "min_tokens 2: the match completed by the 2nd token does not count");
        assertEquals("one two three".length(), later.textLength());
        assertNull(scan(echo, List.of("zebra"), 0, 50));
    }

    @Test
    void theEarliestStringOfTheListWinsWhereSeveralEndInOneToken() {
        TokenText echo = TokenText.echo(TOKENIZER, TOKENIZER.encode("alpha beta gamma"));
        // " beta" and "eta" both end in the token " beta"; vLLM tries the list in order
        assertEquals(new StopMatch(2, 7, "eta"), scan(echo, List.of("eta", " beta"), 0, 10));
        assertEquals(new StopMatch(2, 5, " beta"), scan(echo, List.of(" beta", "eta"), 0, 10));
    }

    @Test
    void agreesWithVllmsStringSearchOnRandomTextsAndStopLists() {
        SplitMix64 rng = new SplitMix64(30);
        for (int round = 0; round < 300; round++) {
            TokenText text = TokenText.lorem(VOCABULARY, round);
            int tokens = 60;
            String whole = text.text(tokens);
            List<String> stops = new ArrayList<>();
            int count = 1 + (int) (rng.nextDouble() * 6);
            for (int k = 0; k < count; k++) {
                int from = (int) (rng.nextDouble() * whole.length());
                int length = 1 + (int) (rng.nextDouble() * 12);
                // mostly pieces of the text itself (they match), now and then one that does not occur
                stops.add(rng.nextDouble() < 0.8 ? whole.substring(from, Math.min(whole.length(), from + length)) : "zq" + k);
            }
            int minTokens = (int) (rng.nextDouble() * 4);
            assertEquals(vllm(text, stops, minTokens, tokens), scan(text, stops, minTokens, tokens), "round " + round + " " + stops);
        }
    }

    @Test
    void manyStopStringsShareOneTrie() {
        List<String> stops = new ArrayList<>();
        for (int i = 0; i < 10_000; i++) {
            stops.add("never-" + i);
        }
        StopStrings s = StopStrings.of(stops);
        List<Integer> found = new ArrayList<>();
        int state = StopStrings.start();
        for (char c : "a never-9999 b".toCharArray()) {
            state = s.step(state, c);
            if (s.firstEnding(state) >= 0) {
                found.add(s.firstEnding(state));
            }
        }
        assertEquals(List.of(9, 99, 999, 9_999), found, "each digit completes one more of the strings");
        assertEquals("never-9999".length(), s.longest());
    }

    /** Runs a choice's engine-side scan token by token, as the engine thread does before each step. */
    private static StopMatch scan(TokenText text, List<String> stops, int minTokens, int maxTokens) {
        Choice c = new Choice(null, 0, arrival -> new EngineRequest(1, 1, null, maxTokens, minTokens, EngineRequest.NO_EOS, 0, arrival),
                text, StopStrings.of(stops), null, false, null);
        c.arrive(0);
        for (int t = 0; t < maxTokens && c.stopMatch() == null; t++) {
            c.scanForStop(t);
        }
        if (c.stopMatch() != null) {
            assertEquals(c.stopMatch().tokens(), c.request.eosAfterTokens(), "the engine request ends where the match does");
        }
        return c.stopMatch();
    }

    /** vLLM's check_stop_strings after each token, with its min_tokens rule: the reference the automaton must match. */
    private static StopMatch vllm(TokenText text, List<String> stops, int minTokens, int maxTokens) {
        StringBuilder out = new StringBuilder();
        for (int t = 0; t < maxTokens; t++) {
            int before = out.length();
            out.append(text.piece(t));
            int fresh = out.length() - before;
            if (t + 1 <= minTokens || fresh == 0) {
                continue;
            }
            for (String s : stops) {
                int at = out.indexOf(s, Math.max(0, out.length() + 1 - fresh - s.length()));
                if (at >= 0) {
                    return new StopMatch(t + 1, at, s);
                }
            }
        }
        return null;
    }
}
