package dev.infersim.server.kv;

import com.fasterxml.jackson.databind.JsonNode;
import dev.infersim.engine.Deployment;
import dev.infersim.engine.KvCapacity;
import dev.infersim.server.FreePorts;
import dev.infersim.server.TestServers;
import dev.infersim.server.VllmKvEventDecoder;
import dev.infersim.server.config.KvEventsConfig;
import dev.infersim.server.config.LoraModule;
import dev.infersim.server.fleet.MockServer;
import org.junit.jupiter.api.Test;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessageUnpacker;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

import java.math.BigInteger;
import java.net.ServerSocket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code --kv-events-publisher zmq}: a subscriber bound where llm-d's indexer would be decodes every frame and field of
 * vLLM's wire format: topic, sequence numbers from 0, {@code [ts, events, dp_rank]}, BlockStored with the prompt's
 * own token ids chained by parent hashes, BlockRemoved for every stored block the cache later evicts, AllBlocksCleared
 * when the prefix cache is reset, and the replay socket's resent messages.
 */
public class KvEventsTest {
    private record Stored(BigInteger hash, BigInteger parent, List<Integer> tokens, Integer loraId, String loraName) {
    }

    @Test
    void publishesVllmKvEventsThatASubscriberDecodesFieldByField() throws Exception {
        // A small KV cache (a quarter of the H100's memory) so that distinct prompts soon evict each other's blocks.
        Deployment d = TestServers.llama8b(4).toBuilder().gpuMemoryUtilization(0.23).build();
        int blocks = KvCapacity.of(d).numBlocks();
        try (Subscriber sub = Subscriber.bound("kv@")) {
            MockServer server = TestServers.start(TestServers.options(d, 50).devMode(true)
                    .kvEvents(new KvEventsConfig(sub.endpoint, "kv@pod-0@llama-3.1-8b")).build());
            try {
                long expectedSeq = awaitSubscription(server, sub, "kv@pod-0@llama-3.1-8b") + 1;
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
                    if (s.parent() != null && i > 0) {
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
    public static final class Subscriber implements AutoCloseable {
        public final LinkedBlockingQueue<List<byte[]>> messages = new LinkedBlockingQueue<>();
        private final CountDownLatch bound = new CountDownLatch(1);
        private volatile boolean stop;
        /** Where it listens or what it connected to. */
        public volatile String endpoint;
        private final Thread thread;

        /** Bound on a free loopback port, where a router's indexer would listen. */
        public static Subscriber bound(String prefix) throws InterruptedException {
            return new Subscriber("tcp://127.0.0.1:*", prefix, true);
        }

        Subscriber(String endpoint, String prefix, boolean bind) throws InterruptedException {
            thread = new Thread(() -> {
                try (ZContext zmq = new ZContext(); ZMQ.Socket sub = zmq.createSocket(SocketType.SUB)) {
                    sub.setHandshakeIvl(KvEventPublisher.HANDSHAKE_MS); // as the publisher: a hung handshake is retried
                    if (bind) {
                        sub.bind(endpoint);
                        this.endpoint = sub.getLastEndpoint();
                    } else {
                        sub.connect(endpoint);
                        this.endpoint = endpoint;
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
        int port = FreePorts.consecutive(2);
        // vLLM's default form: a wildcard host, so each rank binds and subscribers connect; rank 1 on port + 1.
        MockServer server = TestServers.start(TestServers.options(TestServers.llama8b(4), 50).devMode(true).dataParallelSize(2)
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

            // A reset reaches every engine: rank 1 clears its cache too and says so.
            drain(sub, new TreeMap<>(), 300);
            assertEquals(200, TestServers.post(server, "/reset_prefix_cache", "").status());
            List<byte[]> cleared = sub.messages.poll(10, TimeUnit.SECONDS);
            assertNotNull(cleared, "rank 1's AllBlocksCleared");
            assertEquals("AllBlocksCleared", onlyEventType(cleared.get(2)));
            try (MessageUnpacker in = MessagePack.newDefaultUnpacker(cleared.get(2))) {
                in.unpackArrayHeader();
                in.unpackDouble();
                in.skipValue();
                assertEquals(1, in.unpackInt(), "data_parallel_rank");
            }
        } finally {
            TestServers.close(server);
        }
    }

    @Test
    void blocksARequestOnALoraAdapterStoresNameTheAdapter() throws Exception {
        int port = FreePorts.one();
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

    @Test
    void anEndpointThatCannotBindStopsTheStartNamingTheEndpoint() throws Exception {
        int port = FreePorts.consecutive(2);
        // Rank 1's port is taken: the server must not start with rank 1 publishing nowhere.
        try (ServerSocket taken = new ServerSocket(port + 1)) {
            ExecutionException e = assertThrows(ExecutionException.class, () -> TestServers.start(
                    TestServers.options(TestServers.llama8b(4), 50).dataParallelSize(2)
                            .kvEvents(new KvEventsConfig("tcp://*:" + port, "")).build()));
            assertTrue(e.getCause().getMessage().contains("cannot bind tcp://*:" + (port + 1)), e.getCause().getMessage());
        }
    }

    /**
     * vLLM's replay socket: a client that asks from a sequence number gets every buffered message from there on,
     * byte for byte as published, as {@code [topic, seq, payload]}, then the end marker {@code ["", -1, ""]}; only the
     * last {@code buffer_steps} messages are kept.
     */
    @Test
    void theReplaySocketResendsTheBufferedMessagesFromTheAskedSequence() throws Exception {
        int replayPort = FreePorts.one();
        int bufferSteps = 4;
        String topic = "kv@pod-0@llama-3.1-8b";
        try (Subscriber sub = Subscriber.bound("kv@")) {
            MockServer server = TestServers.start(TestServers.options(TestServers.llama8b(4), 50)
                    .kvEvents(new KvEventsConfig(sub.endpoint, topic, "tcp://*:" + replayPort, bufferSteps, 1000, false)).build());
            TreeMap<Long, byte[]> live = new TreeMap<>();
            try (ZContext zmq = new ZContext(); ZMQ.Socket dealer = zmq.createSocket(SocketType.DEALER)) {
                for (int p = 0; live.size() < bufferSteps + 2; p++) {
                    assertTrue(p < 50, "live messages: " + live.keySet());
                    completeNewPrompt(server, p + " " + SENTENCE, null);
                    drain(sub, live, 300);
                }
                long last = live.lastKey();
                dealer.setReceiveTimeOut(10_000);
                dealer.setHandshakeIvl(KvEventPublisher.HANDSHAKE_MS);
                dealer.connect("tcp://127.0.0.1:" + replayPort);

                Map<Long, byte[]> replayed = replay(dealer, 0, topic);
                assertEquals(List.of(last - 3, last - 2, last - 1, last), List.copyOf(replayed.keySet()), "the last " + bufferSteps);
                replayed.forEach((seq, payload) -> assertTrue(Arrays.equals(live.get(seq), payload), "seq " + seq + " as published"));
                assertEquals(List.of(last - 1, last), List.copyOf(replay(dealer, last - 1, topic).keySet()));
                assertTrue(replay(dealer, last + 10, topic).isEmpty(), "past the newest: only the end marker");
            } finally {
                TestServers.close(server);
            }
        }
    }

    /**
     * Sends one replay request as a REQ socket frames it (an empty delimiter, then the sequence) and reads the answer up
     * to the end marker, checking every frame; seq to payload. A DEALER, since a REQ socket takes one reply per request.
     */
    private static Map<Long, byte[]> replay(ZMQ.Socket dealer, long from, String topic) {
        assertTrue(dealer.sendMore(new byte[0]));
        assertTrue(dealer.send(ByteBuffer.allocate(8).putLong(from).array()));
        Map<Long, byte[]> replayed = new TreeMap<>();
        while (true) {
            List<byte[]> frames = new ArrayList<>();
            do {
                byte[] frame = dealer.recv();
                assertNotNull(frame, "replay answer timed out");
                frames.add(frame);
            } while (dealer.hasReceiveMore());
            assertEquals(4, frames.size(), "['', topic, seq, payload]");
            assertEquals(0, frames.remove(0).length, "the delimiter");
            long seq = ByteBuffer.wrap(frames.get(1)).getLong();
            if (seq == -1) {
                assertEquals(0, frames.get(0).length, "the end marker's topic is empty");
                assertEquals(0, frames.get(2).length, "the end marker's payload is empty");
                return replayed;
            }
            assertEquals(topic, new String(frames.get(0), StandardCharsets.UTF_8));
            replayed.put(seq, frames.get(2));
        }
    }

    /**
     * Resets the (empty) prefix cache until the subscriber hears an AllBlocksCleared: a PUB drops what it sends before
     * the subscription has reached it (ZMQ's slow joiner), and a reset publishes one message and stores nothing that a
     * test could later see evicted. Every reset is one message, so the messages heard are the last resets', in order.
     *
     * @return the sequence number of the last of them
     */
    private static long awaitSubscription(MockServer server, Subscriber sub, String topic) throws Exception {
        for (int resets = 1; ; resets++) {
            assertTrue(resets <= 50, "no KV events reached the subscriber");
            assertEquals(200, TestServers.post(server, "/reset_prefix_cache", "").status());
            List<byte[]> frames = sub.messages.poll(200, TimeUnit.MILLISECONDS);
            if (frames == null) {
                continue;
            }
            long seq = ByteBuffer.wrap(frames.get(1)).getLong();
            while (true) {
                assertEquals(topic, new String(frames.get(0), StandardCharsets.UTF_8));
                assertTrue(seq < resets, "seq " + seq + " after " + resets + " resets: sequence numbers start at 0");
                assertEquals("AllBlocksCleared", onlyEventType(frames.get(2)));
                if (seq == resets - 1) {
                    return seq;
                }
                frames = sub.messages.poll(10, TimeUnit.SECONDS);
                assertNotNull(frames, "the later resets' messages");
                assertEquals(seq + 1, ByteBuffer.wrap(frames.get(1)).getLong());
                seq++;
            }
        }
    }

    /** The type of a batch's one event. */
    private static String onlyEventType(byte[] payload) throws Exception {
        try (MessageUnpacker in = MessagePack.newDefaultUnpacker(payload)) {
            assertEquals(3, in.unpackArrayHeader());
            in.unpackDouble();
            assertEquals(1, in.unpackArrayHeader(), "one event");
            assertEquals(1, in.unpackArrayHeader(), "AllBlocksCleared has a tag and no fields");
            return in.unpackString();
        }
    }

    /** Collects live messages (seq to payload) until none has come for {@code quietMs}. */
    private static void drain(Subscriber sub, Map<Long, byte[]> into, long quietMs) throws InterruptedException {
        for (List<byte[]> frames = sub.messages.poll(quietMs, TimeUnit.MILLISECONDS); frames != null;
             frames = sub.messages.poll(quietMs, TimeUnit.MILLISECONDS)) {
            into.put(ByteBuffer.wrap(frames.get(1)).getLong(), frames.get(2));
        }
    }

    /**
     * vLLM's {@code POST /reset_prefix_cache}: the cache forgets its blocks and publishes AllBlocksCleared, so a prompt
     * seen before is computed (and stored) again; while a request holds blocks the reset is 409, unless
     * {@code reset_running_requests=true} preempts it first, after which it still finishes every token.
     */
    @Test
    void resettingThePrefixCachePublishesAllBlocksClearedAndForgetsEveryBlock() throws Exception {
        try (Subscriber sub = Subscriber.bound("")) {
            MockServer server = TestServers.start(TestServers.options(TestServers.llama8b(4), 20).devMode(true)
                    .kvEvents(new KvEventsConfig(sub.endpoint, "")).build());
            try {
                awaitSubscription(server, sub, "");
                String prompt = "the prompt to forget " + "lorem ipsum ".repeat(20);
                assertEquals(0, completeNewPrompt(server, prompt, null));
                assertTrue(completeNewPrompt(server, prompt, null) > 0, "the second time it hits the cache");
                List<Stored> before = new ArrayList<>();
                decodeAll(sub, before);

                TestServers.Reply reset = TestServers.post(server, "/reset_prefix_cache", "");
                assertEquals(200, reset.status(), reset.raw().body());
                assertEquals("", reset.raw().body());
                List<byte[]> cleared = sub.messages.poll(10, TimeUnit.SECONDS);
                assertNotNull(cleared, "no AllBlocksCleared");
                assertEquals("AllBlocksCleared", onlyEventType(cleared.get(2)));
                assertEquals(0, completeNewPrompt(server, prompt, null), "after the reset nothing is cached");
                List<Stored> after = new ArrayList<>();
                decodeAll(sub, after);
                assertTrue(after.stream().anyMatch(a -> before.stream().anyMatch(b -> b.hash().equals(a.hash()))),
                        "the forgotten prompt's blocks are stored again");

                TestServers.Reply badFlag = TestServers.post(server, "/reset_prefix_cache?reset_running_requests=maybe", "");
                assertEquals(400, badFlag.status());
                assertEquals("reset_running_requests", badFlag.json().path("error").path("param").asText());
            } finally {
                TestServers.close(server);
            }
        }
    }

    @Test
    void aResetWhileARequestHoldsBlocksIs409UnlessRunningRequestsArePreemptedFirst() throws Exception {
        MockServer server = TestServers.start(TestServers.options(TestServers.llama8b(4), 20).devMode(true).build());
        try {
            // About 4,000 decode steps: a few seconds of wall time at time scale 20.
            CompletableFuture<TestServers.Stream> inFlight = CompletableFuture.supplyAsync(() -> {
                try {
                    return TestServers.stream(server, "/v1/completions",
                            "{\"prompt\":\"hi\",\"max_tokens\":4000,\"ignore_eos\":true,\"stream\":true}");
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            assertTrue(TestServers.eventually(10, () -> server.runningRequests() == 1));
            TestServers.Reply refused = TestServers.post(server, "/reset_prefix_cache", "");
            assertEquals(409, refused.status());
            assertEquals("Prefix cache reset failed.", refused.json().path("error").path("message").asText());
            assertEquals(200, TestServers.post(server, "/reset_prefix_cache?reset_running_requests=true", "").status());

            TestServers.Stream stream = inFlight.get(60, TimeUnit.SECONDS);
            JsonNode truth = stream.events().get(stream.events().size() - 2).json().path("infersim").path("choices").get(0);
            assertEquals(4000, truth.path("completion_tokens").asInt(), "the preempted request is recomputed and finishes");
            assertEquals(1, truth.path("preemptions").asInt());
        } finally {
            TestServers.close(server);
        }
    }

    /** Two full KV blocks and more: a prompt led by something new stores blocks of its own. */
    private static final String SENTENCE = "hello world ".repeat(20);

    /** Completes a one-token request for {@code prompt}; returns its prompt tokens found in the prefix cache. */
    private static int completeNewPrompt(MockServer server, String prompt, String rank) throws Exception {
        String body = "{\"prompt\":\"" + prompt + "\",\"max_tokens\":1}";
        TestServers.Reply r = rank == null ? TestServers.post(server, "/v1/completions", body)
                : TestServers.post(server, "/v1/completions", body, "X-data-parallel-rank", rank);
        assertEquals(200, r.status(), r.raw().body());
        return r.json().path("infersim").path("choices").get(0).path("cached_prompt_tokens").asInt();
    }

    /** Decodes every message that comes until none has for 300 ms. */
    private static void decodeAll(Subscriber sub, List<Stored> stored) throws Exception {
        for (List<byte[]> frames = sub.messages.poll(300, TimeUnit.MILLISECONDS); frames != null;
             frames = sub.messages.poll(300, TimeUnit.MILLISECONDS)) {
            decode(frames.get(2), stored, new HashSet<>(), null);
        }
    }

    /**
     * Decodes a batch with the independent decoder and checks vLLM's conventions: ts in Unix seconds as a float64, one
     * BlockStored per run of a request's blocks (split here into one {@link Stored} per block, each with its parent),
     * 16 tokens a block, medium GPU, extra keys one per block ({@code [lora_name]} or nil), group 0.
     */
    private static void decode(byte[] payload, List<Stored> stored, Set<BigInteger> removed, Integer rank) throws Exception {
        assertEquals((byte) 0xcb, payload[1], "ts is a float64");
        VllmKvEventDecoder.Batch batch = VllmKvEventDecoder.decode(payload);
        assertTrue(Math.abs(batch.ts() - System.currentTimeMillis() / 1000.0) < 60, "ts in Unix seconds: " + batch.ts());
        assertTrue(!batch.events().isEmpty());
        assertEquals(rank == null ? 0 : rank, batch.dataParallelRank(),
                "data_parallel_rank (0 without data parallelism, as vLLM's publisher fills it in)");
        for (Map<String, Object> e : batch.events()) {
            if (e.get("type").equals("BlockStored")) {
                @SuppressWarnings("unchecked") List<BigInteger> hashes = (List<BigInteger>) e.get("block_hashes");
                @SuppressWarnings("unchecked") List<BigInteger> tokens = (List<BigInteger>) e.get("token_ids");
                @SuppressWarnings("unchecked") List<Object> extraKeys = (List<Object>) e.get("extra_keys");
                assertEquals(16, ((BigInteger) e.get("block_size")).intValue(), "block_size");
                assertEquals(16 * hashes.size(), tokens.size());
                assertEquals("GPU", e.get("medium"));
                assertEquals(BigInteger.ZERO, e.get("group_idx"));
                assertEquals(hashes.size(), extraKeys.size(), "one extra-keys entry per block");
                Integer loraId = e.get("lora_id") == null ? null : ((BigInteger) e.get("lora_id")).intValue();
                String loraName = (String) e.get("lora_name");
                assertEquals(loraId == null, loraName == null, "lora_id and lora_name come together");
                BigInteger parent = (BigInteger) e.get("parent_block_hash");
                for (int b = 0; b < hashes.size(); b++) {
                    assertEquals(loraName == null ? null : List.of(loraName), extraKeys.get(b));
                    BigInteger hash = hashes.get(b);
                    assertTrue(hash.signum() > 0 && hash.bitLength() <= 64, "an unsigned 64-bit hash: " + hash);
                    List<Integer> blockTokens = tokens.subList(16 * b, 16 * b + 16).stream().map(BigInteger::intValue).toList();
                    stored.add(new Stored(hash, parent, blockTokens, loraId, loraName));
                    parent = hash;
                }
            } else {
                assertEquals("BlockRemoved", e.get("type"));
                @SuppressWarnings("unchecked") List<BigInteger> hashes = (List<BigInteger>) e.get("block_hashes");
                assertEquals(1, hashes.size());
                removed.add(hashes.get(0));
                assertEquals("GPU", e.get("medium"));
                assertEquals(BigInteger.ZERO, e.get("group_idx"));
            }
        }
    }
}
