package dev.infersim.server;

import com.fasterxml.jackson.databind.JsonNode;
import dev.infersim.engine.Deployment;
import dev.infersim.engine.EngineCore;
import dev.infersim.engine.Profiles;
import dev.infersim.result.RequestLogReader;
import dev.infersim.result.RequestLogWriter;
import dev.infersim.result.RequestRecord;
import dev.infersim.server.fleet.MockServer;
import dev.infersim.server.json.Json;
import dev.infersim.sim.Simulation;
import dev.infersim.sim.SimulationOptions;
import dev.infersim.workload.arrival.ArrivalProcess;
import dev.infersim.workload.Dataset;
import dev.infersim.workload.arrival.LoadPattern;
import dev.infersim.workload.arrival.TraceArrivals;
import dev.infersim.workload.Workload;
import dev.infersim.workload.WorkloadRequest;
import dev.infersim.workload.WorkloadSpec;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.LockSupport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The mock and the simulator agree by construction: replaying the arrivals a loaded mock recorded (its ground truth)
 * through the discrete-event simulator gives each request the TTFT and E2EL the mock reported. The mock's model-time
 * timeline depends on the arrival stamps only, never on how late its engine thread woke, so the test holds on a busy
 * machine; the fast time scale makes many requests arrive within a fraction of a step of a step boundary, where an
 * engine loop that admitted by the wall clock instead of by the stamps would put them a step late.
 */
@Tag("wallclock") // live latencies against the simulator's, within a tolerance
class MockAgreesWithSimulatorTest {
    private static final double TIME_SCALE = 10;
    private static final int REQUESTS = 240;
    /** Mistral 7B: its 32k vocabulary keeps the workload's token ids valid for the mock's tokenizer. */
    private static final Deployment DEPLOYMENT = Deployment.builder(Profiles.gpu("h100"), Profiles.model("mistral-7b"))
            .maxNumSeqs(32).build();

    @RegisterExtension
    static final MockServerExtension SERVERS = MockServerExtension.perTest();

    @Test
    void replayingTheMocksRecordedArrivalsThroughTheSimulatorGivesTheSameLatencies(@TempDir Path dir) throws Exception {
        // About 80% of the engine's capacity at these lengths: batches are full and requests queue.
        List<WorkloadRequest> sent = new ArrayList<>();
        Workload.open(WorkloadSpec.builder().datasetName("random").randomInputLen(600).randomOutputLen(48)
                .randomRangeRatio(0.5).ignoreEos(true).requestRate(60).numPrompts(REQUESTS).seed(11).build()).forEach(sent::add);
        MockServer server = SERVERS.start(TestServers.options(DEPLOYMENT, TIME_SCALE).build());
        JsonNode[] truth = serve(server, sent);

        // Replay in the order the mock stamped them (parsing can swap two requests sent close together).
        List<Integer> order = new ArrayList<>();
        for (int i = 0; i < REQUESTS; i++) {
            order.add(i);
        }
        order.sort(Comparator.comparingDouble(i -> truth[i].get("arrival_ms").asDouble()));
        List<WorkloadRequest> replayed = new ArrayList<>();
        long[] arrivals = new long[REQUESTS];
        for (int k = 0; k < REQUESTS; k++) {
            replayed.add(sent.get(order.get(k)));
            arrivals[k] = Math.round(truth[order.get(k)].get("arrival_ms").asDouble() * 1e6);
        }
        Path log = dir.resolve("sim.jsonl");
        try (RequestLogWriter writer = new RequestLogWriter(log, false)) {
            Simulation.single(EngineCore.create(DEPLOYMENT), SimulationOptions.defaults(), writer)
                    .run(new Workload(new Replay(replayed, arrivals), LoadPattern.immediate(), REQUESTS, 0));
        }
        List<RequestRecord> simulated = new ArrayList<>();
        new RequestLogReader(log).forEach(false, row -> simulated.add(row.record()));
        assertEquals(REQUESTS, simulated.size());
        int ttftAgree = 0;
        int e2elAgree = 0;
        double worstMs = 0;
        for (RequestRecord sim : simulated) {
            JsonNode mock = truth[order.get((int) sim.index())];
            double mockTtft = mock.get("first_token_ms").asDouble() - mock.get("arrival_ms").asDouble();
            double mockE2el = mock.get("finished_ms").asDouble() - mock.get("arrival_ms").asDouble();
            double ttftGap = Math.abs(sim.ttftNanos() / 1e6 - mockTtft);
            double e2elGap = Math.abs(sim.e2elNanos() / 1e6 - mockE2el);
            ttftAgree += ttftGap <= 0.1 ? 1 : 0;
            e2elAgree += e2elGap <= 0.1 ? 1 : 0;
            worstMs = Math.max(worstMs, Math.max(ttftGap, e2elGap));
        }
        String summary = "TTFT agrees for " + ttftAgree + ", E2EL for " + e2elAgree + " of " + REQUESTS
                + " requests; largest gap " + worstMs + " ms";
        System.out.println(summary);
        assertTrue(ttftAgree >= 0.99 * REQUESTS && e2elAgree >= 0.99 * REQUESTS, summary);
        long queued = Arrays.stream(truth).filter(t -> t.get("queue_time_ms").asDouble() > 1).count();
        assertTrue(queued >= REQUESTS / 10, "the run must be loaded: only " + queued + " requests queued over 1 ms");
    }

    /** Sends each request as a token-id prompt at its scheduled wall time; returns each one's model-time ground truth. */
    private static JsonNode[] serve(MockServer server, List<WorkloadRequest> requests) throws Exception {
        HttpClient http = TestServers.http();
        List<CompletableFuture<HttpResponse<String>>> replies = new ArrayList<>();
        long start = System.nanoTime();
        for (WorkloadRequest r : requests) {
            LockSupport.parkNanos(start + (long) (r.arrivalNanos() / TIME_SCALE) - System.nanoTime());
            String body = "{\"prompt\":" + Arrays.toString(r.promptTokenIds(DEPLOYMENT.model().vocabSize()))
                    + ",\"max_tokens\":" + r.maxTokens() + ",\"ignore_eos\":true}";
            replies.add(http.sendAsync(HttpRequest.newBuilder(URI.create(server.baseUrl() + "/v1/completions"))
                    .timeout(Duration.ofSeconds(60)).header("content-type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString()));
        }
        JsonNode[] truth = new JsonNode[requests.size()];
        for (int i = 0; i < truth.length; i++) {
            HttpResponse<String> reply = replies.get(i).join();
            assertEquals(200, reply.statusCode(), reply.body());
            truth[i] = Json.MAPPER.readTree(reply.body()).at("/infersim/choices/0/model");
        }
        return truth;
    }

    /** The very same requests (token ids, lengths) arriving at the times the mock recorded. */
    private record Replay(List<WorkloadRequest> requests, long[] arrivalsNanos) implements Dataset {
        @Override
        public String name() {
            return "replay";
        }

        @Override
        public long requestCount(long numPrompts) {
            return Math.min(numPrompts, requests.size());
        }

        @Override
        public ArrivalProcess recordedArrivals() {
            return new TraceArrivals(arrivalsNanos);
        }

        @Override
        public Cursor cursor(long seed, long count) {
            return (index, arrivalNanos) -> {
                WorkloadRequest r = requests.get((int) index);
                return new WorkloadRequest(index, arrivalNanos, r.promptTokens(), r.prefixTokens(), r.prefixGroup(),
                        r.maxTokens(), r.outputTokens(), r.contentSeed(), r.prefixSeed(), r.firstOfPrefixGroup(),
                        r.requestClass(), r.promptText());
            };
        }
    }
}
