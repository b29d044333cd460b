package dev.infersim.server;

import dev.infersim.server.output.TokenText;
import dev.infersim.server.text.LoremVocabulary;
import dev.infersim.server.text.PromptTokenizer;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Generated text re-tokenizes to exactly the ids it was built from; output lengths follow their distributions. */
class GeneratedTextTest {
    private static final PromptTokenizer TOKENIZER = new PromptTokenizer();
    private static final LoremVocabulary VOCABULARY = new LoremVocabulary(TOKENIZER);

    @Test
    void loremTextReTokenizesToTheSameIds() {
        for (long seed = 0; seed < 20; seed++) {
            TokenText text = TokenText.lorem(VOCABULARY, seed);
            int[] ids = new int[400];
            for (int i = 0; i < ids.length; i++) {
                ids[i] = text.id(i);
                assertEquals(text.piece(i), TOKENIZER.piece(ids[i]));
            }
            assertArrayEquals(ids, TOKENIZER.encode(text.text(ids.length)), "seed " + seed);
        }
        assertTrue(VOCABULARY.pieces.length > 100, "most common words are single tokens: " + VOCABULARY.pieces.length);
    }

    @Test
    void loremTextContainsSentencesButNeverTwoStopsInARow() {
        String t = TokenText.lorem(VOCABULARY, 3).text(2000);
        assertTrue(t.contains(". "));
        assertTrue(!t.contains("..") && !t.startsWith("."));
    }

    @Test
    void echoedTokensSplittingACharacterStreamItWholeWithTheTokenThatCompletesIt() {
        String prompt = "smile 😀 and 日本語 ok";
        int[] ids = TOKENIZER.encode(prompt);
        TokenText echo = TokenText.echo(TOKENIZER, ids);
        assertTrue(ids.length > prompt.split(" ").length, "the emoji and the kanji take byte-level tokens");
        assertEquals(prompt, echo.text(ids.length));
        for (int i = 0; i < ids.length; i++) {
            assertTrue(!echo.piece(i).contains("\uFFFD"), "piece " + i + ": " + echo.piece(i));
        }
        assertEquals(prompt + prompt, echo.text(2 * ids.length), "the cycle repeats whole");
    }
}
