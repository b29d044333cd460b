package dev.infersim.workload;

import dev.infersim.common.ConfigException;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ShardTest {

    @Test
    void everyRequestBelongsToExactlyOneShardAndSizesCountThem() {
        for (boolean closedLoop : new boolean[] {false, true}) {
            int[] owned = new int[3];
            long[] owners = new long[1000];
            for (int s = 0; s < 3; s++) {
                Shard shard = new Shard(s, 3);
                for (long i = 0; i < owners.length; i++) {
                    if (shard.owns(i, closedLoop)) {
                        owners[(int) i]++;
                        owned[s]++;
                    }
                }
                assertEquals(owned[s], shard.size(owners.length, closedLoop));
            }
            for (long o : owners) {
                assertEquals(1, o);
            }
            for (int n : owned) {
                assertTrue(n > 280 && n < 390, "a fair share: " + n);
            }
        }
        assertEquals(334, new Shard(0, 3).size(1000, false));
        assertEquals(333, new Shard(2, 3).size(1000, false));
        assertEquals(0, new Shard(2, 3).size(2, false));
    }

    @Test
    void anOpenLoopShardTakesEveryNthRequestAtItsOwnTime() {
        Workload whole = Workload.open(WorkloadSpec.builder().datasetName("random").randomInputLen(64).randomOutputLen(8)
                .requestRate(5).numPrompts(10).seed(3).build());
        var all = new java.util.ArrayList<WorkloadRequest>();
        whole.forEach(all::add);
        var mine = new java.util.ArrayList<WorkloadRequest>();
        new Shard(1, 4).requests(whole).forEachRemaining(mine::add);
        assertEquals(java.util.List.of(all.get(1), all.get(5), all.get(9)), mine);
    }

    @Test
    void badShardsAreOneLineNamingTheFlag() {
        for (String bad : new String[] {"2/2", "-1/2", "1", "a/b", "0/0", "1/%s"}) {
            ConfigException e = assertThrows(ConfigException.class, () -> Shard.parse(bad));
            assertTrue(e.getMessage().startsWith("--shard:"), e.getMessage());
        }
        assertEquals(new Shard(1, 2), Shard.parse(" 1 / 2 "));
    }
}
