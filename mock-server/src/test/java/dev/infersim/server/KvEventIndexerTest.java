package dev.infersim.server;

import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.dataformat.cbor.CBORFactory;
import dev.infersim.engine.Deployment;
import dev.infersim.engine.PrefixCachingHashAlgo;
import dev.infersim.server.config.KvEventsConfig;
import dev.infersim.server.config.ServerOptions;
import dev.infersim.server.fleet.MockFleet;
import dev.infersim.server.fleet.MockServer;
import dev.infersim.server.kv.KvEventsTest;
import dev.infersim.server.text.PromptTokenizer;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.ByteArrayOutputStream;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What a prefix-aware router's indexer (llm-d's KV-cache manager) does with a fleet's KV events, done independently of
 * the server's code: one SUB socket bound where the indexer listens, every replica connecting to it; events decoded by
 * {@link VllmKvEventDecoder} (written from vLLM's msgspec structs), in vLLM's array form and in its newer map form; the
 * topic split into pod and model; and the prompt's blocks hashed here as vLLM's {@code hash_block_tokens} does with
 * {@code sha256_cbor} and {@code PYTHONHASHSEED=0}: token ids from the same tokenizer.json through the HuggingFace
 * tokenizers library (its post-processor's BOS first, as vLLM's completions add it), canonical CBOR from Jackson, SHA-256
 * from the JDK, the low 64 bits as events carry them. Every block of every prompt a replica served is found under that
 * replica's topic, no event names a block the test did not hash, and the two replicas' topics differ.
 */
class KvEventIndexerTest {
    private static final int BOS = 376;

    @ParameterizedTest(name = "map events: {0}")
    @ValueSource(booleans = {false, true})
    void anIndexerHashingPromptsWithTheModelsTokenizerFindsEveryStoredBlockUnderTheReplicasOwnTopic(boolean mapEvents)
            throws Exception {
        Path tokenizerFile = Path.of(getClass().getResource("/bpe-bos-tokenizer.json").toURI());
        Deployment d = TestServers.llama8b(8).toBuilder().prefixCachingHashAlgo(PrefixCachingHashAlgo.SHA256_CBOR)
                .hashSeed("0").build();
        try (KvEventsTest.Subscriber sub = KvEventsTest.Subscriber.bound("kv@");
             HuggingFaceTokenizer tokenizer = HuggingFaceTokenizer.newInstance(tokenizerFile, Map.of("addSpecialTokens", "true"))) {
            ServerOptions options = TestServers.options(d, 50).tokenizer(PromptTokenizer.huggingFace(tokenizerFile))
                    .kvEvents(new KvEventsConfig(sub.endpoint, null).withMapEvents(mapEvents)).build();
            MockFleet fleet = MockFleet.start(options, 2, Duration.ofSeconds(5), s -> { })
                    .toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
            try {
                List<MockServer> replicas = fleet.replicas();
                Map<String, Set<BigInteger>> index = new HashMap<>(); // what the indexer learnt, by topic
                Map<String, Set<BigInteger>> hashed = new HashMap<>(); // every block hash of every prompt sent, by topic
                List<String> topics = new ArrayList<>();
                for (MockServer replica : replicas) {
                    String topic = "kv@127.0.0.1:" + replica.port() + "@llama-3.1-8b";
                    topics.add(topic);
                    index.put(topic, new HashSet<>());
                    hashed.put(topic, new HashSet<>());
                    // ZMQ's slow joiner: until the subscription reaches a publisher, what it sends is lost; warm up with
                    // new prompts until this replica's first event arrives
                    for (int w = 0; index.get(topic).isEmpty(); w++) {
                        assertTrue(w < 50, "no events from " + topic);
                        send(replica, "warm up " + w + " " + PREFIX, tokenizer, hashed.get(topic));
                        collect(sub, index, mapEvents, 200);
                    }
                }
                Map<String, Set<BigInteger>> expected = new HashMap<>();
                for (int r = 0; r < 2; r++) {
                    Set<BigInteger> blocks = new HashSet<>();
                    for (String prompt : List.of(PREFIX + " first question of replica " + r, PREFIX + " and a second one, "
                            + "a little longer than the first, for replica " + r)) {
                        blocks.addAll(send(replicas.get(r), prompt, tokenizer, hashed.get(topics.get(r))));
                    }
                    expected.put(topics.get(r), blocks);
                }
                collect(sub, index, mapEvents, 500);

                assertNotEquals(topics.get(0), topics.get(1));
                for (String topic : topics) {
                    String[] parts = topic.split("@");
                    assertEquals(3, parts.length, "kv@<pod>@<model>");
                    assertTrue(index.get(topic).containsAll(expected.get(topic)), topic + ": every block of the prompts it served");
                    assertTrue(hashed.get(topic).containsAll(index.get(topic)), topic + ": no block the indexer cannot hash");
                    assertTrue(expected.get(topic).size() >= 12, "the prompts span many blocks: " + expected.get(topic).size());
                }
                Set<BigInteger> shared = new HashSet<>(expected.get(topics.get(0)));
                shared.retainAll(expected.get(topics.get(1)));
                assertTrue(!shared.isEmpty(), "the shared prefix has the same hashes on both replicas");
            } finally {
                fleet.close(Duration.ZERO).toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
            }
        }
    }

    private static final String PREFIX = ("A prompt shared by many requests is cached once, and the blocks of the prefix "
            + "are found again by the router that reads the events of every replica. ").repeat(4);

    /** Completes {@code prompt} on {@code replica}; returns its full blocks' hashes (also added to {@code hashed}). */
    private static Set<BigInteger> send(MockServer replica, String prompt, HuggingFaceTokenizer tokenizer,
                                        Set<BigInteger> hashed) throws Exception {
        TestServers.Reply r = TestServers.post(replica, "/v1/completions", "{\"prompt\":\"" + prompt + "\",\"max_tokens\":1}");
        assertEquals(200, r.status(), r.raw().body());
        long[] ids = tokenizer.encode(prompt).getIds();
        assertEquals(BOS, ids[0], "the tokenizer's post-processor puts BOS first");
        assertEquals(ids.length, r.json().path("usage").path("prompt_tokens").asInt(), "the server counts the same tokens");
        Set<BigInteger> blocks = blockHashes(ids);
        hashed.addAll(blocks);
        return blocks;
    }

    /** vLLM's hash_block_tokens with sha256_cbor and PYTHONHASHSEED=0, block size 16, no extra keys. */
    private static Set<BigInteger> blockHashes(long[] ids) throws Exception {
        Set<BigInteger> out = new HashSet<>();
        byte[] parent = sha256(cbor(g -> g.writeString("0"))); // NONE_HASH = hash_fn(PYTHONHASHSEED)
        for (int b = 0; (b + 1) * 16 <= ids.length; b++) {
            int block = b;
            byte[] key = parent;
            parent = sha256(cbor(g -> {
                g.writeStartArray(null, 3);
                g.writeBinary(key);
                g.writeStartArray(null, 16);
                for (int t = 16 * block; t < 16 * block + 16; t++) {
                    g.writeNumber(ids[t]);
                }
                g.writeEndArray();
                g.writeNull();
                g.writeEndArray();
            }));
            out.add(new BigInteger(1, java.util.Arrays.copyOfRange(parent, 24, 32)));
        }
        return out;
    }

    private interface Writer {
        void write(JsonGenerator g) throws Exception;
    }

    private static byte[] cbor(Writer w) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (JsonGenerator g = new CBORFactory().createGenerator(out)) {
            w.write(g);
        }
        return out.toByteArray();
    }

    private static byte[] sha256(byte[] b) throws Exception {
        return MessageDigest.getInstance("SHA-256").digest(b);
    }

    /** Decodes what arrives until nothing has for {@code quietMs}, adding stored blocks to their topic's set. */
    private static void collect(KvEventsTest.Subscriber sub, Map<String, Set<BigInteger>> index, boolean mapEvents,
                                long quietMs) throws Exception {
        for (List<byte[]> frames = sub.messages.poll(quietMs, TimeUnit.MILLISECONDS); frames != null;
             frames = sub.messages.poll(quietMs, TimeUnit.MILLISECONDS)) {
            String topic = new String(frames.get(0), StandardCharsets.UTF_8);
            VllmKvEventDecoder.Batch batch = VllmKvEventDecoder.decode(frames.get(2));
            assertEquals(mapEvents, batch.mapEvents(), "the event form asked for");
            assertEquals(0, batch.dataParallelRank(), "vLLM's publisher fills in its rank, 0 without data parallelism");
            for (Map<String, Object> e : batch.events()) {
                if (e.get("type").equals("BlockStored")) {
                    // current vLLM (the map form's) names the group's spec; the older array form left it nil
                    assertEquals(mapEvents ? "full_attention" : null, e.get("kv_cache_spec_kind"), "kv_cache_spec_kind");
                    @SuppressWarnings("unchecked") List<BigInteger> hashes = (List<BigInteger>) e.get("block_hashes");
                    index.computeIfAbsent(topic, t -> new HashSet<>()).addAll(hashes);
                }
            }
        }
    }
}
