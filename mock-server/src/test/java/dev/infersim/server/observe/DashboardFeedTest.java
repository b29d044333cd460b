package dev.infersim.server.observe;

import com.fasterxml.jackson.databind.JsonNode;
import dev.infersim.engine.KvCapacity;
import dev.infersim.server.TestServers;
import dev.infersim.server.json.Json;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The dashboard's feed in virtual time: the instants are the caller's. */
class DashboardFeedTest {
    private static final long SECOND = 1_000_000_000L;

    private final ServerMetrics metrics = new ServerMetrics("m", TestServers.llama8b(8),
            KvCapacity.of(TestServers.llama8b(8)), 1, 0);
    private final DashboardFeed feed = new DashboardFeed(() -> List.of(metrics), 0);

    /**
     * Nobody looked for five minutes (the server was not sampling): the next snapshot's window holds only what it saw
     * within the last ten seconds, not a stale sample from five minutes ago.
     */
    @Test
    void aWindowNeverReachesFurtherBackThanTenSeconds() throws Exception {
        feed.snapshot(0);
        feed.snapshot(SECOND);
        JsonNode later = Json.MAPPER.readTree(feed.snapshot(300 * SECOND));
        assertEquals(0, later.get("replicas").get(0).get("little").get("window_s").asDouble(), 1e-9);
        for (int s = 301; s <= 320; s++) {
            feed.snapshot(s * SECOND);
        }
        JsonNode full = Json.MAPPER.readTree(feed.snapshot(321 * SECOND));
        assertEquals(10, full.get("replicas").get(0).get("little").get("window_s").asDouble(), 1e-9);
    }

    /** A new page gets the recent snapshots first, as one array, then one snapshot per push. */
    @Test
    void aNewViewerStartsWithTheRecentHistory() throws Exception {
        for (int s = 0; s < 300; s++) {
            feed.snapshot(s * SECOND);
        }
        var viewer = feed.viewer();
        JsonNode first = Json.MAPPER.readTree(viewer.apply(300 * SECOND));
        assertTrue(first.isArray(), first.toString());
        assertEquals(DashboardFeed.HISTORY, first.size(), "two minutes of history at most");
        assertEquals(300, first.get(first.size() - 1).get("model_time_s").asDouble(), 1e-9, "ending now");
        assertTrue(Json.MAPPER.readTree(viewer.apply(301 * SECOND)).isObject());
    }
}
