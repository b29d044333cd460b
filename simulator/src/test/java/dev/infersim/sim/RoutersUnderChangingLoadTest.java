package dev.infersim.sim;

import dev.infersim.common.SplitMix64;
import dev.infersim.workload.WorkloadRequest;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Every router against replicas whose live signals change between any two reads, as a live front door's replicas do
 * (their KV-cache usage moves on their engine threads while the router runs): a million decisions per router, fleets
 * of 1 to 9 replicas that resize now and then, requests on and off LoRA adapters. No decision may throw or choose an
 * index outside the fleet. The planted fault below, a router that reads a signal twice as the routers did before
 * issue 38, must be caught by the same harness, so the harness itself is shown able to fail.
 */
class RoutersUnderChangingLoadTest {
    private static final int DECISIONS = 1_000_000;

    @Test
    void everyRouterSurvivesAMillionDecisionsOverChangingLoads() {
        for (TieBreak tieBreak : TieBreak.values()) {
            for (String name : Routers.names()) {
                // a million with serve's default tie-break; the other mode shares the code but for the tie rule
                int decisions = tieBreak == TieBreak.ROUND_ROBIN ? DECISIONS : DECISIONS / 10;
                String failure = hammer(Routers.byName(name, 7, tieBreak), decisions, 42);
                if (failure != null) {
                    fail(name + " (" + tieBreak.flagValue() + "): " + failure);
                }
            }
        }
    }

    @Test
    void theHarnessCatchesARouterThatReadsASignalTwice() {
        String failure = hammer(new TwoReadLeastKvUsage(), DECISIONS, 42);
        assertTrue(failure != null && failure.contains("ArrayIndexOutOfBoundsException"),
                "the pre-issue-38 router must fail here, got " + failure);
    }

    @Test
    void aStableFleetIsRoutedAsBefore() {
        // the snapshot changes nothing where nothing moves: least KV usage picks the emptiest cache, then the least load
        StableTarget[] fleet = {new StableTarget(0, 3, 0.5), new StableTarget(1, 1, 0.2), new StableTarget(2, 0, 0.2)};
        assertEquals(2, new LeastKvUsageRouter().route(null, fleet));
        assertEquals(2, new LeastOutstandingRequestsRouter().route(null, fleet));
        fleet[1] = new StableTarget(1, 0, Double.NaN); // an unknown usage ranks as full
        assertEquals(2, new LeastKvUsageRouter().route(null, fleet));
    }

    /** Routes {@code decisions} requests; the first failure's description, or null. */
    private static String hammer(Router router, int decisions, long seed) {
        SplitMix64 random = new SplitMix64(seed);
        RoutedRequest[] requests = new RoutedRequest[64];
        String[] adapters = {null, "sql", "chat", null};
        for (int i = 0; i < requests.length; i++) {
            int prompt = random.nextInt(80); // short prompts (down to none) keep the prefix router's hashing cheap
            requests[i] = RoutedRequest.of(new WorkloadRequest(i, 0, prompt, Math.min(prompt, random.nextInt(48)), i % 5,
                    16, 16, random.nextLong(), random.nextLong(), false, "hammer", null, adapters[i % adapters.length]));
        }
        Draws draws = new Draws(random);
        ChangingTarget[] all = new ChangingTarget[9];
        for (int i = 0; i < all.length; i++) {
            all[i] = new ChangingTarget(i, draws);
        }
        ChangingTarget[] fleet = java.util.Arrays.copyOf(all, 3);
        for (int d = 0; d < decisions; d++) {
            if (d % 1000 == 0) { // the fleet scales now and then, as an autoscaler resizes it
                int n = 1 + random.nextInt(all.length);
                int first = random.nextInt(all.length - n + 1);
                fleet = java.util.Arrays.copyOfRange(all, first, first + n);
            }
            int chosen;
            try {
                chosen = router.route(requests[d & 63], fleet);
            } catch (RuntimeException e) {
                return "decision " + d + " over " + fleet.length + " replicas threw " + e;
            }
            if (chosen < 0 || chosen >= fleet.length) {
                return "decision " + d + " chose " + chosen + " of " + fleet.length + " replicas";
            }
        }
        return null;
    }

    /** Uniform draws in [0, 2^16) from a table filled once, so that the routers, not the draws, take the time. */
    private static final class Draws {
        private final int[] table = new int[1 << 14];
        private int cursor;

        Draws(SplitMix64 random) {
            for (int i = 0; i < table.length; i++) {
                table[i] = random.nextInt(1 << 16);
            }
        }

        int next(int bound) {
            int v = table[cursor++ & (table.length - 1)] % bound;
            if ((cursor & (table.length - 1)) == 0) {
                cursor += 7; // the next pass reads the table shifted, not in the same sequence
            }
            return v;
        }
    }

    /** A replica whose every read of a live signal returns a new value, now and then NaN or a negative count. */
    private static final class ChangingTarget implements Shape {
        private final int id;
        private final Draws random;

        ChangingTarget(int id, Draws random) {
            this.id = id;
            this.random = random;
        }

        @Override
        public int id() {
            return id;
        }

        @Override
        public int load() {
            int r = random.next(100);
            return r == 0 ? -1 : r % 4; // few distinct values, so ties are common
        }

        @Override
        public double kvCacheUsage() {
            int r = random.next(50);
            return r == 0 ? Double.NaN : (r % 5) / 4.0;
        }

        @Override
        public int requestsOnAdapter(String name) {
            return random.next(3) == 2 ? 1 : 0;
        }

        @Override
        public int activeAdapters() {
            return random.next(4);
        }

        @Override
        public int maxLoras() {
            return 2;
        }
    }

    /** What no router's decision here turns on: Llama 3's block size and vocabulary. */
    private interface Shape extends RoutingTarget {
        @Override
        default int blockSize() {
            return 16;
        }

        @Override
        default int vocabSize() {
            return 128_256;
        }
    }

    private record StableTarget(int id, int load, double kvCacheUsage) implements Shape {
        @Override
        public int requestsOnAdapter(String name) {
            return 0;
        }

        @Override
        public int activeAdapters() {
            return 0;
        }

        @Override
        public int maxLoras() {
            return 0;
        }
    }

    /** The planted fault: least KV usage as it was before issue 38, finding the best score and the ties in two reads. */
    private static final class TwoReadLeastKvUsage implements Router {
        private final TieBreak.Ties ties = new TieBreak.Ties(TieBreak.ROUND_ROBIN);

        @Override
        public int route(RoutedRequest request, RoutingTarget[] replicas) {
            double bestUsage = Double.MAX_VALUE;
            int bestLoad = Integer.MAX_VALUE;
            for (RoutingTarget r : replicas) {
                double usage = r.kvCacheUsage();
                if (usage < bestUsage || (usage == bestUsage && r.load() < bestLoad)) {
                    bestUsage = usage;
                    bestLoad = r.load();
                }
            }
            ties.reset(replicas.length);
            for (int i = 0; i < replicas.length; i++) {
                if (replicas[i].kvCacheUsage() == bestUsage && replicas[i].load() == bestLoad) {
                    ties.tie(i);
                }
            }
            return ties.pick();
        }
    }
}
