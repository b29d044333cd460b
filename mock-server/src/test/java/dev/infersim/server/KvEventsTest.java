package dev.infersim.server;

import dev.infersim.engine.Deployment;
import dev.infersim.engine.KvCapacity;
import org.junit.jupiter.api.Test;
import org.msgpack.core.MessageFormat;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessageUnpacker;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

import java.math.BigInteger;
import java.net.ServerSocket;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code --kv-events-publisher zmq}: a subscriber bound where llm-d's indexer would be decodes every frame and field of
 * vLLM's wire format: topic, sequence numbers from 0, {@code [ts, events, dp_rank]}, BlockStored with the prompt's
 * own token ids chained by parent hashes, and BlockRemoved for every stored block the cache later evicts.
 */
class KvEventsTest {
    private record Stored(BigInteger hash, BigInteger parent, List<Integer> tokens, Integer loraId, String loraName) {
    }

    @Test
    void publishesVllmKvEventsThatASubscriberDecodesFieldByField() throws Exception {
        int port;
        try (ServerSocket probe = new ServerSocket(0)) {
            port = probe.getLocalPort();
        }
        // A small KV cache (a quarter of the H100's memory) so that distinct prompts soon evict each other's blocks.
        Deployment d = TestServers.llama8b(4).toBuilder().gpuMemoryUtilization(0.23).build();
        int blocks = KvCapacity.of(d).numBlocks();
        try (Subscriber sub = new Subscriber("tcp://127.0.0.1:" + port, "kv@", true)) {
            MockServer server = TestServers.start(TestServers.options(d, 50)
                    .kvEvents(new KvEventsConfig("tcp://127.0.0.1:" + port, "kv@pod-0@llama-3.1-8b")).build());
            try {
                Thread.sleep(500); // a PUB drops what it sends before the subscription has reached it (ZMQ's slow joiner)
                // Prompts of distinct token ids, 2,048 tokens each (128 blocks), until twice the cache has been filled.
                int prompts = 2 * blocks / 128 + 1;
                for (int p = 0; p < prompts; p++) {
                    StringBuilder ids = new StringBuilder();
                    for (int t = 0; t < 2048; t++) {
                        ids.append(t == 0 ? "" : ",").append(1000 + (p * 2048 + t) % 90_000);
                    }
                    assertEquals(200, TestServers.post(server, "/v1/completions",
                            "{\"prompt\":[" + ids + "],\"max_tokens\":1,\"ignore_eos\":true}").status());
                }
                List<Stored> stored = new ArrayList<>();
                Set<BigInteger> removed = new HashSet<>();
                long expectedSeq = 0;
                while (removed.size() < blocks / 2) {
                    List<byte[]> frames = sub.messages.poll(10, TimeUnit.SECONDS);
                    assertNotNull(frames, "timed out: " + stored.size() + " stored, " + removed.size() + " removed");
                    assertEquals(3, frames.size(), "three frames");
                    assertEquals("kv@pod-0@llama-3.1-8b", new String(frames.get(0)));
                    assertEquals(8, frames.get(1).length);
                    assertEquals(expectedSeq++, ByteBuffer.wrap(frames.get(1)).getLong());
                    decode(frames.get(2), stored, removed, null);
                }
                // Every block came with its 16 prompt tokens, chained to the block before it, on the base model.
                for (int i = 0; i < stored.size(); i++) {
                    Stored s = stored.get(i);
                    assertEquals(16, s.tokens().size());
                    assertEquals(null, s.loraName());
                    if (s.parent() != null) {
                        assertEquals(stored.get(i - 1).hash(), s.parent());
                        assertEquals(stored.get(i - 1).tokens().get(15) + 1, (int) s.tokens().get(0));
                    }
                }
                Set<BigInteger> storedHashes = new HashSet<>();
                stored.forEach(s -> storedHashes.add(s.hash()));
                assertTrue(storedHashes.containsAll(removed), "only stored blocks are removed");
            } finally {
                TestServers.close(server);
            }
        }
    }

    /**
     * A SUB socket, bound where a router's indexer would listen or connected to a binding publisher, read by a thread
     * of its own: ZMQ attaches a new peer (and sends it the subscription) only while the socket is in use, so it must be
     * read all along.
     */
    private static final class Subscriber implements AutoCloseable {
        final LinkedBlockingQueue<List<byte[]>> messages = new LinkedBlockingQueue<>();
        private final CountDownLatch bound = new CountDownLatch(1);
        private volatile boolean stop;
        private final Thread thread;

        Subscriber(String endpoint, String prefix, boolean bind) throws InterruptedException {
            thread = new Thread(() -> {
                try (ZContext zmq = new ZContext(); ZMQ.Socket sub = zmq.createSocket(SocketType.SUB)) {
                    if (bind) {
                        sub.bind(endpoint);
                    } else {
                        sub.connect(endpoint);
                    }
                    sub.subscribe(prefix.getBytes());
                    sub.setReceiveTimeOut(50);
                    bound.countDown();
                    while (!stop) {
                        byte[] frame = sub.recv();
                        if (frame == null) {
                            continue;
                        }
                        List<byte[]> frames = new ArrayList<>(List.of(frame));
                        while (sub.hasReceiveMore()) {
                            frames.add(sub.recv());
                        }
                        messages.add(frames);
                    }
                }
            }, "kv-events-subscriber");
            thread.start();
            bound.await();
        }

        @Override
        public void close() throws InterruptedException {
            stop = true;
            thread.join(5_000);
        }
    }

    @Test
    void dataParallelRanksBindTheEndpointPortPlusTheirRankAndNameItInEachBatch() throws Exception {
        int port;
        try (ServerSocket probe = new ServerSocket(0)) {
            port = probe.getLocalPort();
        }
        // vLLM's default form: a wildcard host, so each rank binds and subscribers connect; rank 1 on port + 1.
        MockServer server = TestServers.start(TestServers.options(TestServers.llama8b(4), 50).dataParallelSize(2)
                .kvEvents(new KvEventsConfig("tcp://*:" + port, "")).build());
        try (Subscriber sub = new Subscriber("tcp://127.0.0.1:" + (port + 1), "", false)) {
            List<Stored> stored = new ArrayList<>();
            for (int attempt = 0; attempt < 50 && stored.isEmpty(); attempt++) {
                // Pinned to rank 1; resent until the subscription has reached the publisher (ZMQ's slow joiner). The
                // attempt leads the prompt, so every attempt's blocks are new to the prefix cache and get stored.
                TestServers.post(server, "/v1/completions", "{\"prompt\":\"" + attempt + " " + "hello world ".repeat(20)
                        + "\",\"max_tokens\":1}", "X-data-parallel-rank", "1");
                for (List<byte[]> frames = sub.messages.poll(100, TimeUnit.MILLISECONDS); frames != null;
                     frames = sub.messages.poll(100, TimeUnit.MILLISECONDS)) {
                    assertEquals(0, frames.get(0).length, "vLLM's default topic is empty");
                    decode(frames.get(2), stored, new HashSet<>(), 1);
                }
            }
            assertTrue(!stored.isEmpty(), "rank 1 published on port + 1");
        } finally {
            TestServers.close(server);
        }
    }

    @Test
    void blocksARequestOnALoraAdapterStoresNameTheAdapter() throws Exception {
        int port;
        try (ServerSocket probe = new ServerSocket(0)) {
            port = probe.getLocalPort();
        }
        Deployment d = TestServers.llama8b(4).toBuilder().lora(dev.infersim.engine.LoraConfig.of(1, 16, 0)).build();
        MockServer server = TestServers.start(TestServers.options(d, 50).loraModules(List.of(LoraModule.parse("sql-lora=/a")))
                .kvEvents(new KvEventsConfig("tcp://*:" + port, "")).build());
        try (Subscriber sub = new Subscriber("tcp://127.0.0.1:" + port, "", false)) {
            List<Stored> stored = new ArrayList<>();
            for (int attempt = 0; attempt < 50 && stored.isEmpty(); attempt++) {
                TestServers.post(server, "/v1/completions", "{\"model\":\"sql-lora\",\"prompt\":\"" + attempt + " "
                        + "hello world ".repeat(20) + "\",\"max_tokens\":1}");
                for (List<byte[]> frames = sub.messages.poll(100, TimeUnit.MILLISECONDS); frames != null;
                     frames = sub.messages.poll(100, TimeUnit.MILLISECONDS)) {
                    decode(frames.get(2), stored, new HashSet<>(), null);
                }
            }
            assertTrue(!stored.isEmpty(), "blocks stored");
            for (Stored s : stored) {
                assertEquals("sql-lora", s.loraName());
                assertEquals(1, s.loraId(), "the first adapter registered has id 1");
            }
        } finally {
            TestServers.close(server);
        }
    }

    private static void decode(byte[] payload, List<Stored> stored, Set<BigInteger> removed, Integer rank) throws Exception {
        try (MessageUnpacker in = MessagePack.newDefaultUnpacker(payload)) {
            assertEquals(3, in.unpackArrayHeader());
            assertEquals(MessageFormat.FLOAT64, in.getNextFormat());
            double ts = in.unpackDouble();
            assertTrue(Math.abs(ts - System.currentTimeMillis() / 1000.0) < 60, "ts in Unix seconds: " + ts);
            int events = in.unpackArrayHeader();
            assertTrue(events > 0);
            for (int e = 0; e < events; e++) {
                int fields = in.unpackArrayHeader();
                String type = in.unpackString();
                if (type.equals("BlockStored")) {
                    assertEquals(12, fields);
                    assertEquals(1, in.unpackArrayHeader());
                    BigInteger hash = in.unpackBigInteger();
                    BigInteger parent = in.tryUnpackNil() ? null : in.unpackBigInteger();
                    int n = in.unpackArrayHeader();
                    List<Integer> tokens = new ArrayList<>();
                    for (int t = 0; t < n; t++) {
                        tokens.add(in.unpackInt());
                    }
                    assertEquals(16, in.unpackInt(), "block_size");
                    Integer loraId = in.tryUnpackNil() ? null : in.unpackInt();
                    assertEquals("GPU", in.unpackString(), "medium");
                    String loraName = in.tryUnpackNil() ? null : in.unpackString();
                    assertEquals(loraId == null, loraName == null, "lora_id and lora_name come together");
                    for (String field : List.of("extra_keys", "group_idx", "kv_cache_spec_kind", "kv_cache_spec_sliding_window")) {
                        assertTrue(in.tryUnpackNil(), field);
                    }
                    assertTrue(hash.signum() > 0 && hash.bitLength() <= 64, "an unsigned 64-bit hash: " + hash);
                    stored.add(new Stored(hash, parent, tokens, loraId, loraName));
                } else {
                    assertEquals("BlockRemoved", type);
                    assertEquals(4, fields);
                    assertEquals(1, in.unpackArrayHeader());
                    removed.add(in.unpackBigInteger());
                    assertEquals("GPU", in.unpackString());
                    assertTrue(in.tryUnpackNil(), "group_idx");
                }
            }
            if (rank == null) {
                assertTrue(in.tryUnpackNil(), "data_parallel_rank is nil without data parallelism");
            } else {
                assertEquals(rank, in.unpackInt(), "data_parallel_rank");
            }
            assertTrue(!in.hasNext());
        }
    }
}
