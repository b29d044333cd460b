package dev.infersim.server;

import dev.infersim.server.config.KvEventsConfig;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code --kv-events-config}: vLLM's JSON keys, defaults and null publisher. */
class KvEventsConfigTest {

    @Test
    void enabledTakesVllmsDefaults() {
        KvEventsConfig c = KvEventsConfig.fromVllmJson("{\"enable_kv_cache_events\": true}");
        assertEquals(new KvEventsConfig("tcp://*:5557", null, null, 10_000, 100_000, false), c);
        assertTrue(c.binds());
    }

    @Test
    void everyKeyIsRead() {
        KvEventsConfig c = KvEventsConfig.fromVllmJson("{\"enable_kv_cache_events\": true, \"publisher\": \"zmq\", "
                + "\"endpoint\": \"tcp://indexer:5557\", \"replay_endpoint\": \"tcp://*:5558\", \"buffer_steps\": 50, "
                + "\"hwm\": 10, \"max_queue_size\": 7, \"topic\": \"kv@pod@m\"}");
        assertEquals(new KvEventsConfig("tcp://indexer:5557", "kv@pod@m", "tcp://*:5558", 50, 10, false), c);
        assertEquals("tcp://indexer:5559", c.endpointPlus(2));
        assertEquals("tcp://*:5560", c.replayEndpointPlus(2));
    }

    @Test
    void disabledOrTheNullPublisherPublishesNothing() {
        assertNull(KvEventsConfig.fromVllmJson("{}"));
        assertNull(KvEventsConfig.fromVllmJson("{\"publisher\": \"zmq\"}"));
        assertNull(KvEventsConfig.fromVllmJson("{\"enable_kv_cache_events\": true, \"publisher\": \"null\"}"));
    }

    @Test
    void badValuesNameTheFlagAndKey() {
        for (String[] bad : new String[][] {
                {"[1]", "--kv-events-config must be a JSON object"},
                {"{", "--kv-events-config is not JSON"},
                {"{\"enable_kv_cache_events\": \"yes\"}", "--kv-events-config enable_kv_cache_events"},
                {"{\"enable_kv_cache_events\": true, \"publisher\": \"kafka\"}", "--kv-events-config publisher"},
                {"{\"enable_kv_cache_events\": true, \"endpoint\": \"localhost:1\"}", "--kv-events-config endpoint"},
                {"{\"enable_kv_cache_events\": true, \"hwm\": 1.5}", "--kv-events-config hwm"},
                {"{\"enable_kv_cache_events\": true, \"max_queue_size\": 0}", "--kv-events-config max_queue_size"}}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> KvEventsConfig.fromVllmJson(bad[0]));
            assertTrue(e.getMessage().startsWith(bad[1]), bad[0] + " -> " + e.getMessage());
        }
    }

    @Test
    void withoutAnEndpointGivenVllmsDefaultBindsOnlyTheHttpHost() {
        KvEventsConfig defaulted = KvEventsConfig.fromVllmJson("{\"enable_kv_cache_events\": true}", "127.0.0.1");
        assertEquals("tcp://127.0.0.1:5557", defaulted.endpointPlus(0));
        assertEquals("tcp://127.0.0.1:5559", defaulted.endpointPlus(2));
        assertTrue(defaulted.binds());
        assertEquals("tcp://[::1]:5557", defaulted.withBindHost("::1").endpointPlus(0));
        KvEventsConfig given = KvEventsConfig.fromVllmJson("{\"enable_kv_cache_events\": true, \"endpoint\": \"tcp://*:5557\"}",
                "127.0.0.1");
        assertEquals("tcp://*:5557", given.endpointPlus(0), "an endpoint given binds as vLLM binds it");
    }
}
