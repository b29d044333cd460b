package dev.infersim.server;

import com.fasterxml.jackson.databind.JsonNode;
import dev.infersim.engine.BatchShape;
import dev.infersim.engine.Deployment;
import dev.infersim.engine.KvCapacity;
import dev.infersim.engine.KvTransferLink;
import dev.infersim.engine.RooflineCostModel;
import dev.infersim.server.config.KvTransferConfig;
import dev.infersim.server.config.ServerOptions;
import dev.infersim.server.fleet.MockServer;
import dev.infersim.server.json.Json;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Prefill/decode disaggregation as llm-d's sidecar drives it over vLLM's NixlConnector: a prefill server and a decode
 * server, and {@link SidecarProxy} doing the two steps between them.
 */
class PrefillDecodeTest {
    private static final KvTransferLink LINK = new KvTransferLink(50, 1);
    private static final Deployment D = TestServers.llama8b(64);
    private static final String PROMPT = "Tell the long story of the stone house by the river, every room of it and who lived there";

    @RegisterExtension
    static final MockServerExtension SERVERS = MockServerExtension.perTest();

    private static KvTransferConfig connector(String role, int leaseSeconds) {
        return new KvTransferConfig(role, null, leaseSeconds, "127.0.0.1", 0, LINK);
    }

    private static MockServer server(String role, int leaseSeconds, double timeScale, int replica) throws Exception {
        return SERVERS.start(TestServers.options(D, timeScale).replica(replica).seed(replica)
                .kvTransfer(connector(role, leaseSeconds)).build());
    }

    private static String chat(boolean stream, int maxTokens) {
        return "{\"model\":\"llama-3.1-8b\",\"messages\":[{\"role\":\"user\",\"content\":\"" + PROMPT + "\"}],\"max_tokens\":"
                + maxTokens + ",\"ignore_eos\":true,\"stream\":" + stream
                + (stream ? ",\"stream_options\":{\"include_usage\":true}" : "") + "}";
    }

    private static HttpResponse<String> viaProxy(SidecarProxy proxy, MockServer prefill, String body) throws Exception {
        HttpRequest req = HttpRequest.newBuilder(URI.create(proxy.baseUrl() + "/v1/chat/completions"))
                .timeout(Duration.ofSeconds(30)).header("content-type", "application/json")
                .header(SidecarProxy.PREFILLER_HEADER, "127.0.0.1:" + prefill.port())
                .POST(HttpRequest.BodyPublishers.ofString(body)).build();
        return TestServers.http().send(req, HttpResponse.BodyHandlers.ofString());
    }

    /** The value of a metric series (the first whose line starts with {@code name{}) in a server's /metrics. */
    private static double metric(MockServer server, String name) throws Exception {
        String text = TestServers.get(server, "/metrics").raw().body();
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(name) + "\\{[^}]*} (\\S+)$").matcher(text);
        assertTrue(m.find(), name + " not in /metrics");
        return Double.parseDouble(m.group(1));
    }

    /** The decode side's TTFT is its pull plus one step computing the prompt's last token, to the engine's timeline. */
    private static void assertTtftIsThePullPlusOneStep(JsonNode choice) {
        JsonNode model = choice.get("model");
        int prompt = choice.get("prompt_tokens").asInt();
        assertEquals("pull", choice.at("/kv_transfer/role").asText());
        assertEquals(prompt, choice.at("/kv_transfer/tokens").asInt(), "an idle decode server pulls the whole prompt");
        double pullMs = LINK.transferNanos(prompt, KvCapacity.kvBytesPerTokenPerGpu(D)) / 1e6;
        double stepMs = new RooflineCostModel(D).stepNanos(new BatchShape().addPrefill(1, prompt - 1, true)) / 1e6;
        assertEquals(model.get("arrival_ms").asDouble(), model.get("kv_transfer_start_ms").asDouble(), 1e-6,
                "an idle decode server starts the pull on arrival");
        assertEquals(pullMs, model.get("kv_transfer_ms").asDouble(), 1e-6);
        assertEquals(model.get("kv_transfer_end_ms").asDouble(), model.get("scheduled_ms").asDouble(), 1e-6);
        assertEquals(pullMs + stepMs, model.get("first_token_ms").asDouble() - model.get("arrival_ms").asDouble(), 1e-6,
                "TTFT = the pull + one step");
    }

    @Test
    void theSidecarsTwoStepsPrefillOnOneServerAndDecodeOnTheOther() throws Exception {
        MockServer prefill = server("kv_producer", 30, 10, 0);
        MockServer decode = server("kv_consumer", 30, 10, 1);
        try (SidecarProxy proxy = new SidecarProxy(decode.port())) {
            HttpResponse<String> answer = viaProxy(proxy, prefill, chat(false, 12));
            assertEquals(200, answer.statusCode(), answer.body());

            JsonNode p = proxy.lastPrefill.get();
            JsonNode params = p.get("kv_transfer_params");
            List<String> keys = new ArrayList<>();
            params.fieldNames().forEachRemaining(keys::add);
            assertEquals(List.of("do_remote_prefill", "do_remote_decode", "remote_block_ids", "remote_engine_id",
                    "remote_request_id", "remote_host", "remote_port", "tp_size", "remote_num_tokens"), keys,
                    "NixlConnectorScheduler.request_finished's dict, in its order");
            assertTrue(params.get("do_remote_prefill").asBoolean());
            assertEquals(prefill.kvEngineIds().get(0), params.get("remote_engine_id").asText());
            assertEquals("127.0.0.1", params.get("remote_host").asText());
            assertEquals(1, params.get("tp_size").asInt());
            int prompt = p.at("/usage/prompt_tokens").asInt();
            assertEquals(prompt, params.get("remote_num_tokens").asInt());
            JsonNode blocks = params.get("remote_block_ids");
            assertEquals(1, blocks.size(), "one KV-cache group");
            assertEquals((prompt + 15) / 16, blocks.get(0).size());
            assertEquals(1, blocks.get(0).get(0).asInt(), "vLLM's block 0 is its null block");
            assertEquals(1, p.at("/usage/completion_tokens").asInt(), "the prefill samples one token");
            assertEquals("hold", p.at("/infersim/choices/0/kv_transfer/role").asText());

            JsonNode body = Json.MAPPER.readTree(answer.body());
            assertEquals(12, body.at("/usage/completion_tokens").asInt());
            assertTrue(body.get("kv_transfer_params").isNull(), "a decode side returns none");
            JsonNode choice = body.at("/infersim/choices/0");
            assertEquals(params.get("remote_request_id").asText(), choice.at("/kv_transfer/remote_request_id").asText());
            assertTtftIsThePullPlusOneStep(choice);

            assertTrue(TestServers.eventually(5, () -> held(prefill) == 0), "the prefill's blocks were released");
            assertEquals(0, metric(prefill, "vllm:kv_cache_usage_perc"));
            assertEquals(0, metric(decode, "vllm:kv_cache_usage_perc"));
            assertEquals(0, metric(prefill, "vllm:nixl_num_kv_expired_reqs_total"));
            assertEquals(1, metric(decode, "vllm:nixl_xfer_time_seconds_count"));
            assertEquals(prompt * KvCapacity.kvBytesPerTokenPerGpu(D), metric(decode, "vllm:nixl_bytes_transferred_sum"), 1e-3);
            assertEquals(prompt, metric(decode, "vllm:external_prefix_cache_hits_total"));
            assertEquals(0, metric(decode, "vllm:nixl_num_failed_notifications_total"));
        }
    }

    @Test
    void aStreamedDecodeHasTheSameTimelineThroughTheSidecar() throws Exception {
        MockServer prefill = server("kv_both", 30, 10, 0);
        MockServer decode = server("kv_both", 30, 10, 1);
        try (SidecarProxy proxy = new SidecarProxy(decode.port())) {
            HttpResponse<String> answer = viaProxy(proxy, prefill, chat(true, 8));
            assertEquals(200, answer.statusCode());
            List<String> data = new ArrayList<>();
            for (Iterator<String> it = answer.body().lines().iterator(); it.hasNext(); ) {
                String line = it.next();
                if (line.startsWith("data: ")) {
                    data.add(line.substring(6));
                }
            }
            assertEquals("[DONE]", data.get(data.size() - 1));
            JsonNode usage = Json.MAPPER.readTree(data.get(data.size() - 2));
            assertEquals(8, usage.at("/usage/completion_tokens").asInt());
            assertTtftIsThePullPlusOneStep(usage.at("/infersim/choices/0"));
            assertTrue(TestServers.eventually(5, () -> held(prefill) == 0));
            assertEquals(0, metric(decode, "vllm:kv_cache_usage_perc"));
        }
    }

    @Test
    void heartbeatsKeepTheBlocksOfADecodeThatWaitsLongerThanTheLease() throws Exception {
        MockServer prefill = server("kv_producer", 30, 20, 0);
        // one sequence at a time: the decode waits behind a 6,000-token request, about 50 s of model time
        MockServer decode = SERVERS.start(TestServers.options(TestServers.llama8b(1), 20).replica(1)
                .kvTransfer(connector("kv_consumer", 30)).build());
        java.util.concurrent.CompletableFuture<TestServers.Reply> busy = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
            try {
                return TestServers.post(decode, "/v1/completions", "{\"prompt\": \"x\", \"max_tokens\": 6000, \"ignore_eos\": true}");
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        assertTrue(TestServers.eventually(5, () -> decode.runningRequests() == 1));
        try (SidecarProxy proxy = new SidecarProxy(decode.port())) {
            HttpResponse<String> answer = viaProxy(proxy, prefill, chat(false, 4));
            assertEquals(200, answer.statusCode(), answer.body());
            JsonNode model = Json.MAPPER.readTree(answer.body()).at("/infersim/choices/0/model");
            assertTrue(model.get("kv_transfer_start_ms").asDouble() - model.get("arrival_ms").asDouble() > 30_000,
                    "the pull began after the lease's 30 s: " + model);
            assertTrue(TestServers.eventually(5, () -> held(prefill) == 0));
            assertEquals(0, metric(prefill, "vllm:nixl_num_kv_expired_reqs_total"), "heartbeats renewed the lease");
            assertEquals(0, metric(prefill, "infersim:kv_unknown_notices_total"), "the read found the blocks held");
        }
        assertEquals(200, busy.get().status());
    }

    @Test
    void unreadBlocksAreFreedWhenTheLeaseRunsOut() throws Exception {
        MockServer prefill = server("kv_producer", 1, 100, 0); // a 1 s lease in model time: 10 ms of wall time
        TestServers.Reply r = TestServers.post(prefill, "/v1/completions", "{\"prompt\": \"" + PROMPT + "\", \"max_tokens\": 1, "
                + "\"kv_transfer_params\": {\"do_remote_decode\": true}}");
        assertEquals(200, r.status());
        assertTrue(r.json().at("/kv_transfer_params/do_remote_prefill").asBoolean());
        assertTrue(TestServers.eventually(5, () -> held(prefill) == 0));
        assertEquals(1, metric(prefill, "vllm:nixl_num_kv_expired_reqs_total"));
        assertEquals(0, metric(prefill, "vllm:kv_cache_usage_perc"));
    }

    @Test
    void withoutAConnectorTheParamsAreIgnoredAsVllmIgnoresThem() throws Exception {
        MockServer plain = SERVERS.start(TestServers.options(D, 10).build());
        TestServers.Reply r = TestServers.post(plain, "/v1/completions", "{\"prompt\": \"hi\", \"max_tokens\": 2, "
                + "\"kv_transfer_params\": {\"do_remote_prefill\": true}}");
        assertEquals(200, r.status(), r.raw().body());
        assertTrue(r.json().get("kv_transfer_params").isNull());
        assertNull(r.json().at("/infersim/choices/0/kv_transfer").textValue());
        assertEquals(400, TestServers.post(plain, "/v1/completions", "{\"prompt\": \"hi\", \"kv_transfer_params\": 3}").status());
    }

    @Test
    void aPullWithoutThePrefillsCoordinatesIsRefused() throws Exception {
        MockServer decode = server("kv_consumer", 30, 10, 0);
        TestServers.Reply r = TestServers.post(decode, "/v1/completions", "{\"prompt\": \"hi\", \"max_tokens\": 2, "
                + "\"kv_transfer_params\": {\"do_remote_prefill\": true, \"remote_engine_id\": \"e\"}}");
        assertEquals(400, r.status());
        assertTrue(r.raw().body().contains("remote_block_ids"), r.raw().body());
    }

    /** A decode request's params as a prefill's answer gives them, with {@code change} applied (key=JSON value). */
    private static String pull(String... change) throws Exception {
        com.fasterxml.jackson.databind.node.ObjectNode p = (com.fasterxml.jackson.databind.node.ObjectNode) Json.MAPPER.readTree(
                "{\"do_remote_prefill\": true, \"do_remote_decode\": false, \"remote_block_ids\": [[1, 2]], "
                + "\"remote_engine_id\": \"e\", \"remote_request_id\": \"r\", \"remote_host\": \"127.0.0.1\", "
                + "\"remote_port\": 5600, \"tp_size\": 1, \"remote_num_tokens\": 2}");
        for (String c : change) {
            int eq = c.indexOf('=');
            p.set(c.substring(0, eq), Json.MAPPER.readTree(c.substring(eq + 1)));
        }
        return "{\"prompt\": \"hi\", \"max_tokens\": 2, \"kv_transfer_params\": " + p + "}";
    }

    @Test
    void aForgedPullIsRefusedNamingItsKeyAndTheEngineServesOn() throws Exception {
        MockServer decode = server("kv_consumer", 30, 10, 0);
        // once, remote_host "" threw on the engine thread: every later completion hung while /health said 200
        String[][] forged = {
                {"remote_host=\"\"", "remote_host"}, {"remote_host=\"example.com\"", "remote_host"},
                {"remote_host=\"10.0.0.1\"", "remote_host"}, {"remote_host=7", "remote_host"},
                {"remote_port=0", "remote_port"}, {"remote_port=\"5600\"", "remote_port"},
                {"remote_block_ids=[]", "remote_block_ids"}, {"remote_block_ids=[[1, -2]]", "remote_block_ids"},
                {"remote_block_ids=[[1], 2]", "remote_block_ids"}, {"remote_block_ids=[\"1\"]", "remote_block_ids"},
                {"remote_block_ids=[[1.5]]", "remote_block_ids"}, {"remote_num_tokens=-1", "remote_num_tokens"},
                {"remote_num_tokens=\"2\"", "remote_num_tokens"}, {"remote_num_tokens=99999999", "remote_num_tokens"},
                {"tp_size=0", "tp_size"}, {"tp_size=1.5", "tp_size"}, {"remote_engine_id=\"\"", "remote_engine_id"},
                {"remote_request_id=3", "remote_request_id"}, {"do_remote_prefill=\"yes\"", "do_remote_prefill"}};
        for (String[] f : forged) {
            TestServers.Reply r = TestServers.post(decode, "/v1/completions", pull(f[0]));
            assertEquals(400, r.status(), f[0] + ": " + r.raw().body());
            assertTrue(r.json().at("/error/message").asText().startsWith("kv_transfer_params." + f[1]), r.raw().body());
            assertEquals(200, TestServers.post(decode, "/v1/completions", "{\"prompt\": \"hi\", \"max_tokens\": 2}").status(),
                    "the next completion is served after " + f[0]);
        }
        assertEquals(200, TestServers.get(decode, "/health").status());
        for (String host : List.of("127.0.0.1", "localhost", "LOCALHOST", "::1", "[::1]")) {
            assertEquals(200, TestServers.post(decode, "/v1/completions", pull("remote_host=\"" + host + "\"")).status(), host);
        }
        assertEquals(200, TestServers.post(decode, "/v1/completions", pull("remote_block_ids=[3, 4]")).status(),
                "flat block ids, as older vLLM sends them");
    }

    @Test
    void aRequestPullingItsKvCountsAsWaitingMeanwhile() throws Exception {
        // 1 MB/s: the pull of this prompt's KV takes seconds (once, the gauges kept the last step's 0 throughout)
        MockServer decode = SERVERS.start(TestServers.options(D, 1).kvTransfer(new KvTransferConfig("kv_consumer", null, 30,
                "127.0.0.1", 0, new KvTransferLink(0.001, 0))).build());
        String body = pull().replace("\"prompt\": \"hi\"", "\"prompt\": \"" + PROMPT + "\"");
        java.util.concurrent.CompletableFuture<TestServers.Reply> reply = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
            try {
                return TestServers.post(decode, "/v1/completions", body);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        assertTrue(TestServers.eventually(10, () -> {
            try {
                return metric(decode, "vllm:num_requests_waiting") == 1 && metric(decode, "vllm:num_requests_waiting_by_reason",
                        "deferred") == 1;
            } catch (Exception e) {
                return false;
            }
        }), "the pulling request counts as waiting, for reason deferred");
        assertTrue(!reply.isDone(), "seen while it pulled");
        assertEquals(200, reply.get(30, java.util.concurrent.TimeUnit.SECONDS).status());
        assertEquals(0, metric(decode, "vllm:num_requests_waiting"));
    }

    /** The value of the series of {@code name} whose label has {@code value}, in a server's /metrics. */
    private static double metric(MockServer server, String name, String value) throws Exception {
        String text = TestServers.get(server, "/metrics").raw().body();
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(name) + "\\{[^}]*\"" + Pattern.quote(value) + "\"[^}]*} (\\S+)$").matcher(text);
        assertTrue(m.find(), name + " " + value + " not in /metrics");
        return Double.parseDouble(m.group(1));
    }

    @Test
    void remoteHostsAreTheConfiguredPeersAndTheFleetsOwnSideChannelHost() throws Exception {
        KvTransferConfig c = connector("kv_both", 30).withSideChannel("mock-0.lab", 0).withPeers(java.util.Set.of("Prefill-1.lab"));
        assertTrue(c.allowsPeer("mock-0.lab"), "the fleet's own side channel");
        assertTrue(c.allowsPeer("prefill-1.lab"));
        assertTrue(!c.allowsPeer("localhost"), "configured peers replace the loopback default");
        assertTrue(!c.allowsPeer("prefill-1.lab.evil.com"));
        assertTrue(connector("kv_both", 30).allowsPeer("127.0.0.1"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> c.withPeers(java.util.Set.of(" ")));
        assertTrue(e.getMessage().startsWith("--kv-transfer-peers"), e.getMessage());
    }

    @Test
    void aSideChannelPortInUseStopsTheStartNamingIt() throws Exception {
        try (java.net.ServerSocket taken = new java.net.ServerSocket(0, 1, java.net.InetAddress.getByName("127.0.0.1"))) {
            ServerOptions o = TestServers.options(D, 10)
                    .kvTransfer(connector("kv_both", 30).withSideChannel("127.0.0.1", taken.getLocalPort())).build();
            java.util.concurrent.ExecutionException e = assertThrows(java.util.concurrent.ExecutionException.class,
                    () -> MockServer.start(o).toCompletionStage().toCompletableFuture().get(30, java.util.concurrent.TimeUnit.SECONDS));
            assertTrue(e.getCause() instanceof dev.infersim.common.ConfigException, String.valueOf(e.getCause()));
            assertTrue(e.getCause().getMessage().startsWith("VLLM_NIXL_SIDE_CHANNEL_HOST:PORT 127.0.0.1:" + taken.getLocalPort()),
                    e.getCause().getMessage());
        }
    }

    @Test
    void theConfigIsVllmsJson() {
        KvTransferConfig c = KvTransferConfig.fromVllmJson("{\"kv_connector\":\"NixlConnector\",\"kv_role\":\"kv_both\","
                + "\"kv_load_failure_policy\":\"fail\",\"kv_connector_extra_config\":{\"kv_lease_duration\":60}}", "localhost", 5600, LINK);
        assertEquals("kv_both", c.kvRole());
        assertEquals(60, c.leaseSeconds());
        assertNull(KvTransferConfig.fromVllmJson("{}", "localhost", 5600, LINK), "no kv_connector: no connector");
        for (String bad : List.of("{\"kv_connector\":\"NixlConnector\"}", "{\"kv_connector\":\"LMCacheConnectorV1\",\"kv_role\":\"kv_both\"}",
                "{\"kv_connector\":\"NixlConnector\",\"kv_role\":\"kv_sender\"}", "{\"kv_conector\":\"NixlConnector\"}", "[]",
                "{\"kv_connector\":\"NixlConnector\",\"kv_role\":\"kv_both\",\"kv_connector_extra_config\":{\"kv_lease_duration\":0}}")) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> KvTransferConfig.fromVllmJson(bad, "localhost", 5600, LINK), bad);
            assertTrue(e.getMessage().startsWith("--kv-transfer-config"), e.getMessage());
        }
    }

    private static int held(MockServer server) {
        try {
            return (int) metric(server, "infersim:kv_held_requests");
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
