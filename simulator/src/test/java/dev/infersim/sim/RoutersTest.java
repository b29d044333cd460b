package dev.infersim.sim;

import dev.infersim.common.ConfigException;
import dev.infersim.engine.Deployment;
import dev.infersim.engine.EngineCore;
import dev.infersim.engine.EngineRequest;
import dev.infersim.engine.Profiles;
import dev.infersim.workload.WorkloadRequest;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RoutersTest {

    private static Replica[] fleet(int n, int firstId) {
        Replica[] replicas = new Replica[n];
        for (int i = 0; i < n; i++) {
            replicas[i] = new Replica(firstId + i, EngineCore.create(
                    Deployment.builder(Profiles.gpu("h100"), Profiles.model("llama-3.1-8b")).build()));
        }
        return replicas;
    }

    private static void load(Replica r, int requests, int promptTokens) {
        for (int i = 0; i < requests; i++) {
            r.submit(new EngineRequest(i, promptTokens, null, 16, 0, EngineRequest.NO_EOS, 0, 0));
        }
    }

    /** A request whose first {@code prefixTokens} tokens come from prefix group {@code group}. */
    private static RoutedRequest request(long index, int group, int prefixTokens) {
        return RoutedRequest.of(new WorkloadRequest(index, 0, prefixTokens + 100, prefixTokens, group, 16, 16, 1000 + index,
                group < 0 ? 0 : 77 + group, false, "test", null));
    }

    @Test
    void everyNamedRouterIsFound() {
        for (String name : Routers.names()) {
            Router router = Routers.byName(name, 1);
            assertEquals(0, router.route(request(0, 1, 512), fleet(1, 0)), name);
        }
        assertTrue(Routers.byName("least_loaded", 1) instanceof LeastOutstandingRequestsRouter);
        ConfigException e = assertThrows(ConfigException.class, () -> Routers.byName("random", 1));
        assertTrue(e.getMessage().startsWith("--router: unknown router 'random'"), e.getMessage());
    }

    @Test
    void leastOutstandingRequestsPicksTheEmptiestReplica() {
        Replica[] replicas = fleet(3, 0);
        load(replicas[0], 3, 100);
        load(replicas[1], 1, 100);
        load(replicas[2], 2, 100);
        assertEquals(1, new LeastOutstandingRequestsRouter().route(null, replicas));
    }

    @Test
    void tiesGoRoundRobinAmongEqualsAsNginxAndHaproxyUnlessVidursLowestIndexIsAsked() {
        Replica[] idle = fleet(3, 0);
        for (String name : java.util.List.of("least-outstanding-requests", "least-kv-usage", "lora-affinity")) {
            Router roundRobin = Routers.byName(name, 1, TieBreak.ROUND_ROBIN);
            Router lowest = Routers.byName(name, 1, TieBreak.LOWEST_INDEX);
            int[] rr = new int[6];
            int[] low = new int[6];
            for (int i = 0; i < 6; i++) {
                rr[i] = roundRobin.route(null, idle);
                low[i] = lowest.route(null, idle);
            }
            assertEquals("[0, 1, 2, 0, 1, 2]", java.util.Arrays.toString(rr), name);
            assertEquals("[0, 0, 0, 0, 0, 0]", java.util.Arrays.toString(low), name);
        }
        Replica[] replicas = fleet(4, 0);
        load(replicas[0], 1, 100);
        load(replicas[2], 1, 100);
        Router router = new LeastOutstandingRequestsRouter(TieBreak.ROUND_ROBIN);
        assertEquals(1, router.route(null, replicas));
        assertEquals(3, router.route(null, replicas), "the next of the tied (1 and 3) after the last choice");
        assertEquals(1, router.route(null, replicas));
    }

    @Test
    void leastKvUsagePicksTheReplicaWithTheFewestBlocksInUse() {
        Replica[] replicas = fleet(3, 0);
        load(replicas[0], 1, 4000);
        load(replicas[1], 2, 100);
        load(replicas[2], 1, 8000);
        for (Replica r : replicas) {
            r.planIfReady(0); // allocates the prompts' blocks
        }
        assertTrue(replicas[1].engine().kvCacheUsage() < replicas[0].engine().kvCacheUsage());
        assertEquals(1, new LeastKvUsageRouter().route(null, replicas));
    }

    @Test
    void powerOfTwoChoicesNeverPicksTheBusiestReplicaAndRepeatsWithItsSeed() {
        Replica[] replicas = fleet(4, 0);
        load(replicas[2], 5, 100);
        Router a = new PowerOfTwoChoicesRouter(42);
        Router b = new PowerOfTwoChoicesRouter(42);
        int[] counts = new int[4];
        for (int i = 0; i < 3000; i++) {
            int chosen = a.route(null, replicas);
            assertEquals(chosen, b.route(null, replicas));
            counts[chosen]++;
        }
        assertEquals(0, counts[2], "the busiest of two is never chosen");
        for (int i : new int[] {0, 1, 3}) {
            assertEquals(1000, counts[i], 120, "idle replicas share evenly: " + counts[i]);
        }
    }

    @Test
    void prefixAffinitySendsASharedPrefixToOneReplicaAndSpreadsDistinctOnes() {
        Replica[] replicas = fleet(4, 0);
        PrefixAffinityRouter router = new PrefixAffinityRouter();
        int home = router.route(request(0, 7, 512), replicas);
        for (int i = 1; i < 20; i++) {
            assertEquals(home, router.route(request(i, 7, 512), replicas), "same prefix, same replica");
        }
        int[] counts = new int[4];
        for (int g = 0; g < 400; g++) {
            counts[router.route(request(g, g, 512), replicas)]++;
        }
        for (int c : counts) {
            assertEquals(100, c, 45, "distinct prefixes spread over the ring: " + java.util.Arrays.toString(counts));
        }
    }

    @Test
    void prefixAffinitySpillsOverWhenItsReplicaPassesTheLoadBound() {
        Replica[] replicas = fleet(4, 0);
        PrefixAffinityRouter router = new PrefixAffinityRouter();
        int home = router.route(request(0, 3, 512), replicas);
        load(replicas[home], 4, 100); // bound = ceil(1.25 * 5 / 4) = 2: the home replica is full
        int spilled = router.route(request(1, 3, 512), replicas);
        assertNotEquals(home, spilled);
        assertEquals(spilled, router.route(request(2, 3, 512), replicas), "the next replica on the ring, every time");
    }

    @Test
    void prefixAffinityMovesOnlyTheKeysOfAnAddedReplica() {
        PrefixAffinityRouter router = new PrefixAffinityRouter();
        Replica[] four = fleet(4, 0);
        Replica[] five = new Replica[5];
        System.arraycopy(four, 0, five, 0, 4);
        five[4] = fleet(1, 4)[0];
        int moved = 0;
        int keys = 1000;
        for (int g = 0; g < keys; g++) {
            int before = four[router.route(request(g, g, 512), four)].id();
            int after = five[router.route(request(g, g, 512), five)].id();
            if (before != after) {
                assertEquals(4, after, "a key only moves to the new replica");
                moved++;
            }
        }
        assertEquals(keys / 5.0, moved, keys * 0.07, "about 1/5 of the keys move");
    }

    @Test
    void prefixAffinityHashesOnlyTheLeadingBlocks() {
        Replica[] replicas = fleet(4, 0);
        PrefixAffinityRouter router = new PrefixAffinityRouter(256, 1.25);
        // Same 256-token prefix, different tails: the same key; a prefix shorter than the window: different keys.
        assertEquals(router.prefixKey(request(0, 5, 300), replicas[0]), router.prefixKey(request(1, 5, 300), replicas[0]));
        assertNotEquals(router.prefixKey(request(0, 5, 200), replicas[0]), router.prefixKey(request(1, 5, 200), replicas[0]));
    }
}
