package dev.infersim.workload;

import dev.infersim.workload.length.FixedLength;
import dev.infersim.workload.length.LogNormalLength;
import dev.infersim.workload.arrival.RampStrategy;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.infersim.common.ConfigException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class WorkloadTest {

    private static final int VOCAB = 128_000;

    private static List<WorkloadRequest> collect(Workload workload) {
        List<WorkloadRequest> out = new ArrayList<>();
        workload.forEach(out::add);
        return out;
    }

    private static Workload random(long seed, double rate) {
        return Workload.open(WorkloadSpec.builder().randomInputLen(300).randomOutputLen(100).randomRangeRatio(0.5)
                .randomPrefixLen(64).requestRate(rate).burstiness(0.5).numPrompts(500).seed(seed).build());
    }

    @Test
    void sameSeedReplaysTheIdenticalRequestStreamIncludingTokenIds() {
        List<WorkloadRequest> first = collect(random(42, 8));
        List<WorkloadRequest> second = collect(random(42, 8));
        assertEquals(first, second);
        for (int i = 0; i < first.size(); i += 50) {
            assertArrayEquals(first.get(i).promptTokenIds(VOCAB), second.get(i).promptTokenIds(VOCAB));
        }
        Workload profile = Workload.open(WorkloadSpec.builder().workloadProfile("chat-rag-mix").requestRate(3)
                .seed(7).numPrompts(300).build());
        assertEquals(collect(profile), collect(profile), "each iterator replays from the start");
    }

    @Test
    void differentSeedsGiveDifferentStreams() {
        assertNotEquals(collect(random(1, 8)), collect(random(2, 8)));
    }

    @Test
    void changingTheRateKeepsEveryRequestsContent() {
        List<WorkloadRequest> slow = collect(random(42, 2));
        List<WorkloadRequest> fast = collect(random(42, 20));
        for (int i = 0; i < slow.size(); i++) {
            WorkloadRequest a = slow.get(i);
            WorkloadRequest b = fast.get(i);
            assertEquals(a.promptTokens(), b.promptTokens());
            assertEquals(a.maxTokens(), b.maxTokens());
            assertEquals(a.contentSeed(), b.contentSeed());
            assertTrue(a.arrivalNanos() >= b.arrivalNanos(), "a slower rate never arrives earlier");
        }
    }

    @Test
    void randomDatasetPutsTheSharedPrefixInFrontOfTheInputLikeVllm() {
        List<WorkloadRequest> requests = collect(random(3, 8));
        int[] prefix = requests.get(0).promptTokenIds(VOCAB);
        for (WorkloadRequest r : requests) {
            assertEquals(64, r.prefixTokens());
            assertEquals(0, r.prefixGroup());
            int input = r.promptTokens() - r.prefixTokens();
            assertTrue(input >= 150 && input <= 450, "input excludes the prefix: " + input);
            assertTrue(r.maxTokens() >= 50 && r.maxTokens() <= 150);
            assertEquals(r.maxTokens(), r.outputTokens(), "no EOS model: generate max_tokens");
            assertEquals(r.index() == 0, r.firstOfPrefixGroup());
            int[] ids = r.promptTokenIds(VOCAB);
            for (int k = 0; k < 64; k++) {
                assertEquals(prefix[k], ids[k]);
            }
        }
        assertNotEquals(requests.get(0).promptTokenIds(VOCAB)[64], requests.get(1).promptTokenIds(VOCAB)[64]);
    }

    @Test
    void prefixIdsAreEqualWithinAGroupAndDifferAcrossGroups() {
        Workload workload = Workload.open(WorkloadSpec.builder().datasetName("prefix_repetition")
                .prefixRepetitionPrefixLen(32).prefixRepetitionSuffixLen(16).prefixRepetitionNumPrefixes(4)
                .prefixRepetitionOutputLen(8).numPrompts(40).seed(5).build());
        Map<Integer, int[]> prefixOfGroup = new HashMap<>();
        for (WorkloadRequest r : workload) {
            int[] ids = r.promptTokenIds(VOCAB);
            int[] prefix = java.util.Arrays.copyOf(ids, 32);
            int[] known = prefixOfGroup.putIfAbsent(r.prefixGroup(), prefix);
            if (known != null) {
                assertArrayEquals(known, prefix, "group " + r.prefixGroup());
            }
        }
        assertEquals(4, prefixOfGroup.size());
        List<int[]> prefixes = new ArrayList<>(prefixOfGroup.values());
        for (int a = 0; a < prefixes.size(); a++) {
            for (int b = a + 1; b < prefixes.size(); b++) {
                assertFalse(java.util.Arrays.equals(prefixes.get(a), prefixes.get(b)), "groups " + a + " and " + b);
            }
        }
    }

    @Test
    void prefixRepetitionShuffleGivesEveryPrefixTheSameCountAndMarksOneColdRequestEach() {
        Workload workload = Workload.open(WorkloadSpec.builder().datasetName("prefix-repetition")
                .prefixRepetitionNumPrefixes(10).numPrompts(1005).seed(9).build());
        assertEquals(1000, workload.size(), "vLLM rounds down to a multiple of the prefix count");
        int[] perGroup = new int[10];
        int cold = 0;
        boolean inOrder = true;
        for (WorkloadRequest r : workload) {
            perGroup[r.prefixGroup()]++;
            cold += r.firstOfPrefixGroup() ? 1 : 0;
            assertEquals(512, r.promptTokens());
            assertEquals(128, r.maxTokens());
            inOrder &= r.prefixGroup() == (int) (r.index() % 10);
        }
        for (int count : perGroup) {
            assertEquals(100, count);
        }
        assertEquals(10, cold);
        assertFalse(inOrder, "shuffled, not round-robin");
        assertEquals(0.99, ((PrefixRepetitionDataset) workload.dataset()).warmFraction(1005), 1e-12);
    }

    @Test
    void roundRobinPrefixOrderMakesOnlyTheFirstPassCold() {
        Workload workload = Workload.open(WorkloadSpec.builder().datasetName("prefix_repetition")
                .prefixRepetitionNumPrefixes(5).prefixRepetitionOrder(PrefixOrder.ROUND_ROBIN).numPrompts(50).build());
        for (WorkloadRequest r : workload) {
            assertEquals(r.index() % 5, r.prefixGroup());
            assertEquals(r.index() < 5, r.firstOfPrefixGroup());
        }
    }

    @Test
    void profileMixMatchesItsWeights() {
        Workload workload = Workload.open(WorkloadSpec.builder().workloadProfile("chat-rag-mix")
                .numPrompts(40_000).seed(11).build());
        int chat = 0;
        long ragPrompt = 0;
        int rag = 0;
        for (WorkloadRequest r : workload) {
            if (r.requestClass().equals("chat")) {
                chat++;
                assertTrue(r.promptTokens() >= 50 && r.promptTokens() <= 4000);
            } else {
                assertEquals("rag", r.requestClass());
                rag++;
                ragPrompt += r.promptTokens();
            }
        }
        // Binomial sd of the chat share: sqrt(0.21 / 40000) = 0.0023; 4 sd = 0.009.
        assertEquals(0.7, chat / 40_000.0, 0.009);
        LogNormalLength chatInput = LogNormalLength.ofMedian(500, 0.8, 50, 4000);
        LogNormalLength ragInput = LogNormalLength.ofMedian(16000, 0.8, 2000, 128000);
        assertEquals(0.7 * chatInput.mean() + 0.3 * ragInput.mean(),
                ((SyntheticDataset) workload.dataset()).meanPromptTokens(), 1e-6);
        assertEquals(ragInput.mean(), (double) ragPrompt / rag, ragInput.mean() * 0.02);
    }

    @Test
    void eosDrawStopsGenerationBeforeMaxTokensUnlessIgnoreEos() {
        WorkloadSpecBuilder base = WorkloadSpec.builder().randomInputLen(100).randomOutputLen(128).numPrompts(20_000)
                .eosMeanTokens(50).seed(4);
        List<WorkloadRequest> natural = collect(Workload.open(base.build()));
        List<WorkloadRequest> ignored = collect(Workload.open(base.ignoreEos(true).build()));
        double sum = 0;
        for (int i = 0; i < natural.size(); i++) {
            WorkloadRequest a = natural.get(i);
            WorkloadRequest b = ignored.get(i);
            assertTrue(a.outputTokens() >= 1 && a.outputTokens() <= 128);
            assertEquals(128, b.outputTokens(), "ignore_eos generates max_tokens");
            assertEquals(a.contentSeed(), b.contentSeed(), "toggling ignore_eos changes no other draw");
            sum += a.outputTokens();
        }
        // E[min(G, 128)] for geometric G with p = 1/50: (1 - (1-p)^128) / p.
        double p = 1 / 50.0;
        double expected = (1 - Math.pow(1 - p, 128)) / p;
        assertEquals(expected, sum / natural.size(), expected * 0.02);
    }

    @Test
    void closedLoopReleasesEveryRequestAtTimeZeroWithTheUserCountAsCap() {
        Workload workload = Workload.open(WorkloadSpec.builder().maxConcurrency(8).numPrompts(100).build());
        assertTrue(workload.load().isClosedLoop());
        assertEquals(8, workload.load().maxConcurrency());
        for (WorkloadRequest r : workload) {
            assertEquals(0L, r.arrivalNanos());
        }
    }

    @Test
    void aMillionRequestsStreamInConstantMemory() {
        Workload workload = Workload.open(WorkloadSpec.builder().workloadProfile("chat").requestRate(50)
                .numPrompts(1_000_000).seed(1).build());
        long count = 0;
        long previousArrival = -1;
        double promptSum = 0;
        for (WorkloadRequest r : workload) {
            assertTrue(r.arrivalNanos() >= previousArrival);
            previousArrival = r.arrivalNanos();
            promptSum += r.promptTokens();
            count++;
        }
        assertEquals(1_000_000, count);
        assertEquals(20_000e9, previousArrival, 2.0, "1,000,000 requests at 50 req/s end at 20,000 s");
        assertEquals(LogNormalLength.ofMedian(500, 0.8, 50, 4000).mean(), promptSum / count, 2.0);
    }

    @Test
    void profileLoadAppliesUnlessAnOptionOverridesIt() {
        WorkloadSpec fromFile = WorkloadSpec.builder().workloadProfile("matrix-row-e").build();
        assertEquals(WorkloadSpec.WORKLOAD, fromFile.datasetName());
        assertEquals(128, fromFile.numPrompts());
        assertEquals(4.0, fromFile.load().requestRatePerS());
        assertEquals(16, fromFile.load().maxConcurrency());
        WorkloadSpec overridden = WorkloadSpec.builder().workloadProfile("matrix-row-e").requestRate(9).numPrompts(10)
                .build();
        assertEquals(9.0, overridden.load().requestRatePerS());
        assertEquals(10, overridden.numPrompts());
        assertEquals(16, overridden.load().maxConcurrency());
        WorkloadSpec ramped = WorkloadSpec.builder().workloadProfile("matrix-row-e")
                .rampUp(RampStrategy.LINEAR, 1, 8).build();
        assertEquals(RampStrategy.LINEAR, ramped.load().rampUp().strategy(), "a ramp option replaces the file's rate");
        assertTrue(Double.isInfinite(ramped.load().requestRatePerS()));
        WorkloadRequest r = Workload.open(fromFile).iterator().next();
        assertEquals(4096, r.promptTokens());
        assertEquals(2048, r.prefixTokens());
        assertTrue(Workload.open(WorkloadSpec.builder().workloadProfile("matrix-row-d").build()).load().isClosedLoop());
    }

    @Test
    void everyBundledProfileLoadsAndStreams() {
        for (String name : WorkloadProfiles.BUNDLED) {
            Workload workload = Workload.open(WorkloadSpec.builder().workloadProfile(name).numPrompts(200).build());
            Iterator<WorkloadRequest> it = workload.iterator();
            int n = 0;
            while (it.hasNext()) {
                WorkloadRequest r = it.next();
                assertNull(r.promptText());
                n++;
            }
            assertEquals(200, n, name);
        }
    }

    @Test
    void badOptionsFailWithOneLineNamingTheOption() {
        ConfigException rate = assertThrows(ConfigException.class,
                () -> WorkloadSpec.builder().requestRate(-1).build());
        assertTrue(rate.getMessage().contains("request rate"), rate.getMessage());
        ConfigException ratio = assertThrows(ConfigException.class,
                () -> WorkloadSpec.builder().randomRangeRatio(1.5).build());
        assertTrue(ratio.getMessage().contains("--random-range-ratio"), ratio.getMessage());
        ConfigException name = assertThrows(ConfigException.class,
                () -> WorkloadSpec.builder().datasetName("sonnet").build());
        assertTrue(name.getMessage().contains("--dataset-name"), name.getMessage());
        ConfigException ramp = assertThrows(ConfigException.class,
                () -> WorkloadSpec.builder().requestRate(3).rampUp(RampStrategy.LINEAR, 1, 5).build());
        assertTrue(ramp.getMessage().contains("--request-rate"), ramp.getMessage());
        ConfigException few = assertThrows(ConfigException.class, () -> Workload.open(WorkloadSpec.builder()
                .datasetName("prefix_repetition").prefixRepetitionNumPrefixes(10).numPrompts(5).build()));
        assertTrue(few.getMessage().contains("num-prompts"), few.getMessage());
        assertFalse(rate.getMessage().contains("\n"));
    }

    @Test
    void promptsOverTheLengthCapFailNamingTheFlagsEvenWhenTheSumOverflowsAnInt() {
        ConfigException input = assertThrows(ConfigException.class, () -> Workload.open(WorkloadSpec.builder()
                .randomInputLen(2_000_000_000).build()));
        assertTrue(input.getMessage().contains("--random-input-len") && input.getMessage().contains("16,777,216"),
                input.getMessage());
        ConfigException sum = assertThrows(ConfigException.class, () -> Workload.open(WorkloadSpec.builder()
                .randomInputLen(1_500_000_000).randomPrefixLen(1_500_000_000).build()));
        assertTrue(sum.getMessage().contains("3000000000 prompt tokens"), sum.getMessage());
        ConfigException repeated = assertThrows(ConfigException.class, () -> Workload.open(WorkloadSpec.builder()
                .datasetName("prefix_repetition").prefixRepetitionPrefixLen(2_000_000_000).build()));
        assertTrue(repeated.getMessage().contains("--prefix-repetition-prefix-len"), repeated.getMessage());
        IllegalArgumentException profileClass = assertThrows(IllegalArgumentException.class,
                () -> new RequestClass("huge", 1, new FixedLength(2_000_000_000), new FixedLength(8), null,
                        2_000_000_000, 1));
        assertTrue(profileClass.getMessage().contains("class 'huge'"), profileClass.getMessage());
        IllegalArgumentException openTail = assertThrows(IllegalArgumentException.class,
                () -> RequestClass.unshared("tail", 1, LogNormalLength.ofMedian(500, 0.8, 0, Integer.MAX_VALUE),
                        new FixedLength(8)));
        assertTrue(openTail.getMessage().contains("input_tokens is unbounded; give it a max"), openTail.getMessage());
        int atCap = WorkloadRequest.MAX_PROMPT_TOKENS;
        assertEquals(atCap, Workload.open(WorkloadSpec.builder().randomInputLen(atCap - 8).randomPrefixLen(8)
                .numPrompts(1).build()).iterator().next().promptTokens(), "the cap itself is allowed");
    }

    @Test
    void tokenIdsAreUniformOverTheVocabularyAndOddPrefixBoundariesKeepPrefixesShared() {
        Workload workload = Workload.open(WorkloadSpec.builder().randomInputLen(2000).randomPrefixLen(33)
                .numPrompts(50).seed(21).build());
        int vocab = 100;
        long[] counts = new long[vocab];
        int[] firstPrefix = null;
        for (WorkloadRequest r : workload) {
            int[] ids = r.promptTokenIds(vocab);
            if (firstPrefix == null) {
                firstPrefix = ids;
            } else {
                assertTrue(java.util.Arrays.equals(firstPrefix, 0, 33, ids, 0, 33), "shared 33-token prefix");
                assertFalse(java.util.Arrays.equals(firstPrefix, 33, 2033, ids, 33, 2033), "own suffix");
            }
            for (int k = 33; k < ids.length; k++) {
                counts[ids[k]]++;
            }
        }
        double[] expected = new double[vocab];
        java.util.Arrays.fill(expected, java.util.Arrays.stream(counts).sum() / (double) vocab);
        double p = new org.apache.commons.math3.stat.inference.ChiSquareTest().chiSquareTest(expected, counts);
        assertTrue(p > 0.001, "request-specific ids are uniform over the vocabulary, chi-square p = " + p);
    }

    @Test
    void tokenIdsStayInsideTheVocabularyAndFillWithoutAllocating() {
        WorkloadRequest r = random(8, 1).iterator().next();
        int[] buffer = new int[r.promptTokens() + 10];
        r.fillPromptTokenIds(buffer, 50);
        for (int k = 0; k < r.promptTokens(); k++) {
            assertTrue(buffer[k] >= 0 && buffer[k] < 50);
        }
        assertArrayEquals(java.util.Arrays.copyOf(buffer, r.promptTokens()), r.promptTokenIds(50));
        assertThrows(IllegalArgumentException.class, () -> r.fillPromptTokenIds(new int[1], 50));
    }

    @Test
    void leadingTokenIdsAreThePromptsFirstIds() {
        WorkloadRequest r = new WorkloadRequest(0, 0, 301, 101, 0, 8, 8, 17, 23, false, "c", null);
        int[] all = r.promptTokenIds(VOCAB);
        for (int n : new int[] {1, 100, 101, 102, 255, 301, 400}) {
            int[] leading = new int[n];
            int written = r.fillLeadingTokenIds(leading, n, VOCAB);
            assertEquals(Math.min(n, 301), written);
            assertArrayEquals(java.util.Arrays.copyOf(all, written), java.util.Arrays.copyOf(leading, written), "n=" + n);
        }
    }
}
