package dev.infersim.bench.run;

import org.junit.jupiter.api.Test;

import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PromptRendererTest {

    @Test
    void renderedPromptsReencodeToExactlyTheRequestedTokenCount() {
        PromptRenderer renderer = PromptRenderer.cl100k();
        assertTrue(renderer.vocabularySize() > 20_000, "vocabulary of " + renderer.vocabularySize());
        SplittableRandom random = new SplittableRandom(42);
        for (int n : new int[] {1, 2, 7, 128, 1024, 4096}) {
            for (int trial = 0; trial < 20; trial++) {
                int[] ids = new int[n];
                for (int k = 0; k < n; k++) {
                    ids[k] = random.nextInt(Integer.MAX_VALUE);
                }
                StringBuilder text = new StringBuilder();
                renderer.render(ids, n, text);
                assertEquals(n, renderer.countTokens(text.toString()), "prompt of " + n + " ids");
            }
        }
    }
}
