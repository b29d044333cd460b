package dev.infersim.server.output;

import dev.infersim.common.SplitMix64;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What {@link RegexSampler} draws matches its pattern; what a request can make it do is bounded and refused in our words. */
class RegexSamplerTest {
    private static String draw(String pattern, long seed) {
        return RegexSampler.sample(pattern, new SplitMix64(seed), 0, Integer.MAX_VALUE, new SamplingBudget());
    }

    @ParameterizedTest
    @ValueSource(strings = {"^[A-Z]{3}-\\d{2,4}$", "(red|green|blue)(?:-[a-f0-9]+)?", "[^a-z]{1,40}", "\\w+@\\w+\\.com",
        "[\\u0000-\\uffff]{3}", "[a-cx-z0-2_]{5}", "a{0,1000000}b", "(ab|c){2,}?d", "\\S\\s\\D\\W", "[\\d.-]+"})
    void drawsMatchThePattern(String pattern) {
        Pattern java = Pattern.compile(pattern);
        for (long seed = 0; seed < 200; seed++) {
            String s = draw(pattern, seed);
            assertTrue(java.matcher(s).matches(), pattern + " drew " + s);
        }
    }

    @Test
    void aRepetitionDrawsAtMostSixteenPastItsMinimum() {
        for (long seed = 0; seed < 200; seed++) {
            int n = draw("a{5,1000000}", seed).length();
            assertTrue(n >= 5 && n <= 5 + RegexSampler.SPARE_REPEATS, n + " characters");
        }
    }

    @Test
    void groupsNestAtMostSixtyFourDeep() {
        String deepest = "(".repeat(RegexSampler.MAX_NESTING) + "a" + ")".repeat(RegexSampler.MAX_NESTING);
        assertEquals("a", draw(deepest, 1));
        String deeper = "(" + deepest + ")";
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> draw(deeper, 1));
        assertTrue(e.getMessage().contains("groups nested more than 64 deep, the mock's limit"), e.getMessage());
        // 50,000 levels: refused at the 65th, never a StackOverflowError
        assertThrows(IllegalArgumentException.class, () -> draw("(".repeat(50_000) + "a" + ")".repeat(50_000), 1));
    }

    @Test
    void aRepetitionsMinimumIsAtMost4096() {
        assertEquals(4096, draw("a{4096}", 1).length());
        for (String p : new String[] {"a{4097}", "a{100000000}", "a{99999999999}", "a{99999999999999999999999,}"}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> draw(p, 1), p);
            assertTrue(e.getMessage().contains("is more than the mock draws (4096)"), e.getMessage());
        }
    }

    @Test
    void aDrawStopsOnceLongerThanAsked() {
        SamplingBudget budget = new SamplingBudget();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> RegexSampler.sample("a{4096}", new SplitMix64(1), 0, 10, budget));
        assertTrue(e.getMessage().contains("no string of length 0..10"), e.getMessage());
        assertTrue(budget.charsDrawn() <= 64 * 21, "each attempt stopped past 20 characters: " + budget.charsDrawn());
    }

    @Test
    void nestedRepetitionsSpendTheBudgetAndAreRefused() {
        for (String p : new String[] {"((((a{4096}){4096}){4096}){4096})", "((((){4096}){4096}){4096}){4096}x"}) {
            SamplingBudget budget = new SamplingBudget();
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> RegexSampler.sample(p, new SplitMix64(1), 0, Integer.MAX_VALUE, budget), p);
            assertTrue(e.getMessage().contains("the mock's limit"), e.getMessage());
            assertTrue(budget.nodesVisited() <= SamplingBudget.MAX_NODES + 1 && budget.charsDrawn() <= SamplingBudget.MAX_CHARS + 1);
        }
    }

    @Test
    void anyPatternIsDrawnFromOrRefusedInOurWords() {
        String alphabet = "ab()[]{}|*+?.^$\\-,0123456789:=!<>udxwsDWS ";
        SplitMix64 rng = new SplitMix64(7);
        for (int i = 0; i < 20_000; i++) {
            StringBuilder p = new StringBuilder();
            int n = 1 + (int) Math.floorMod(rng.nextLong(), 12L);
            for (int k = 0; k < n; k++) {
                p.append(alphabet.charAt((int) Math.floorMod(rng.nextLong(), (long) alphabet.length())));
            }
            try {
                draw(p.toString(), i);
            } catch (IllegalArgumentException e) {
                assertTrue(e.getClass() == IllegalArgumentException.class && e.getMessage().startsWith("pattern '")
                        || e.getMessage().contains("the mock's limit"), p + ": " + e);
            }
        }
    }
}
