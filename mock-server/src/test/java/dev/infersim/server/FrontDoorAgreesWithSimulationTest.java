package dev.infersim.server;

import dev.infersim.engine.Deployment;
import dev.infersim.engine.EngineCore;
import dev.infersim.engine.FixedTiming;
import dev.infersim.engine.KvCapacity;
import dev.infersim.engine.LoraConfig;
import dev.infersim.engine.Profiles;
import dev.infersim.engine.SchedulingPolicies;
import dev.infersim.server.config.LoraModule;
import dev.infersim.server.config.ServerOptions;
import dev.infersim.server.fleet.FrontDoor;
import dev.infersim.server.fleet.MockServer;
import dev.infersim.server.routes.HttpBasics;
import dev.infersim.sim.Replica;
import dev.infersim.sim.RoutedRequest;
import dev.infersim.sim.Router;
import dev.infersim.sim.Routers;
import dev.infersim.sim.RoutingTarget;
import dev.infersim.sim.Simulation;
import dev.infersim.sim.SimulationOptions;
import dev.infersim.sim.TieBreak;
import dev.infersim.workload.Dataset;
import dev.infersim.workload.arrival.LoadPattern;
import dev.infersim.workload.Workload;
import dev.infersim.workload.WorkloadRequest;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The front door of {@code serve --replicas 3 --router NAME} and {@code simulate --replicas 3 --router NAME} assign the
 * same requests to the same replicas, for every router. The test cannot depend on the real clock's ordering: every
 * request lives far longer than the arrivals take (fixed timing: first token after 50 ms, then one every 100 s), so
 * while requests arrive nothing finishes and no decode needs a new KV block, however slow the machine, and the client
 * sends a request only once the previous one is in a replica's engine. Each is a stream whose first chunk names its
 * replica; the streams are dropped once all are assigned. What a router reads (outstanding requests and their adapters,
 * KV-cache usage, prompt tokens, its seeded draws) then depends on the order of arrivals alone, live as in virtual time.
 * The requests share prefixes (for prefix-affinity), run on four LoRA adapters (for lora-affinity; four slots, so none
 * waits for one) and
 * are sent as token ids, the very ids the simulator hashes.
 */
class FrontDoorAgreesWithSimulationTest {
    private static final int REPLICAS = 3;
    private static final int REQUESTS = 24;
    private static final List<String> ADAPTERS = List.of("tenant-a", "tenant-b", "tenant-c", "tenant-d");

    static List<String> routers() {
        return Routers.names();
    }

    private static Deployment deployment() {
        // mistral-7b: its 32,768 token ids are all ordinary cl100k_base ids, so a token-id prompt is accepted as it is
        return Deployment.builder(Profiles.gpu("h100"), Profiles.model("mistral-7b")).maxNumSeqs(64)
                .lora(LoraConfig.of(4, 16, 0)).build();
    }

    /** 24 requests: 72 tokens, of which the first 64 are one of three shared prefixes; every other one on an adapter. */
    private static List<WorkloadRequest> requests() {
        List<WorkloadRequest> out = new ArrayList<>();
        for (int i = 0; i < REQUESTS; i++) {
            int group = (i * 7) % 3;
            String lora = i % 2 == 0 ? ADAPTERS.get((i / 2) % ADAPTERS.size()) : null;
            out.add(new WorkloadRequest(i, 0, 72, 64, group, 4, 4, 1000 + i, 500 + group, false, "test", null, lora));
        }
        return out;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("routers")
    void theFrontDoorAssignsEveryRequestAsSimulateDoes(String router) throws Exception {
        assertEquals(simulated(router), live(router), router + ": replica of each request, live then simulated");
    }

    private static List<Integer> live(String router) throws Exception {
        Deployment d = deployment();
        ServerOptions options = ServerOptions.builder(d).port(0).timeScale(2).eventLoops(1).seed(7)
                .fixedTiming(FixedTiming.of(50, 100_000))
                .loraModules(ADAPTERS.stream().map(a -> LoraModule.parse(a + "=/adapters/" + a)).toList()).build();
        FrontDoor door = FrontDoor.start(options, REPLICAS, Duration.ofSeconds(5), s -> { }, router, TieBreak.ROUND_ROBIN)
                .toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        try {
            List<CompletableFuture<HttpResponse<java.io.InputStream>>> replies = new ArrayList<>();
            int vocab = d.model().vocabSize();
            for (WorkloadRequest w : requests()) {
                StringBuilder ids = new StringBuilder();
                for (int id : w.promptTokenIds(vocab)) {
                    ids.append(ids.length() == 0 ? "" : ",").append(id);
                }
                String model = w.lora() != null ? w.lora() : options.servedModelName();
                replies.add(TestServers.http().sendAsync(HttpRequest.newBuilder(URI.create(door.baseUrl() + "/v1/completions"))
                        .header("content-type", "application/json").POST(HttpRequest.BodyPublishers.ofString(
                                "{\"model\": \"" + model + "\", \"prompt\": [" + ids + "], \"max_tokens\": 4, \"ignore_eos\": true, "
                                        + "\"stream\": true}")).build(), HttpResponse.BodyHandlers.ofInputStream()));
                int sent = replies.size();
                // the next request only once this one runs (its KV blocks taken): arrivals in order, whatever the load
                assertTrue(TestServers.eventually(10, () -> door.fleet().replicas().stream()
                        .mapToInt(MockServer::runningRequests).sum() == sent), "request " + sent);
            }
            List<Integer> assigned = new ArrayList<>();
            for (CompletableFuture<HttpResponse<java.io.InputStream>> r : replies) {
                HttpResponse<java.io.InputStream> reply = r.get(60, TimeUnit.SECONDS);
                assertEquals(200, reply.statusCode());
                assigned.add(Integer.parseInt(reply.headers().firstValue(HttpBasics.REPLICA_HEADER).orElseThrow()));
            }
            for (CompletableFuture<HttpResponse<java.io.InputStream>> r : replies) {
                r.get().body().close();
            }
            return assigned;
        } finally {
            door.close(Duration.ZERO).toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        }
    }

    private static List<Integer> simulated(String router) {
        Deployment d = deployment();
        Replica[] replicas = new Replica[REPLICAS];
        for (int i = 0; i < REPLICAS; i++) {
            replicas[i] = new Replica(i, EngineCore.fixed(d, KvCapacity.of(d), SchedulingPolicies.byName("fcfs"),
                    FixedTiming.of(50, 100_000), i));
        }
        List<Integer> chosen = new ArrayList<>();
        Router routing = Routers.byName(router, 7, TieBreak.ROUND_ROBIN);
        Router recording = (request, targets) -> {
            int i = routing.route(request, targets);
            chosen.add(targets[i].id());
            return i;
        };
        List<WorkloadRequest> requests = requests();
        Dataset fixed = new Dataset() {
            @Override
            public String name() {
                return "test";
            }

            @Override
            public Cursor cursor(long seed, long count) {
                return (index, arrivalNanos) -> {
                    WorkloadRequest w = requests.get((int) index);
                    return new WorkloadRequest(index, arrivalNanos, w.promptTokens(), w.prefixTokens(), w.prefixGroup(),
                            w.maxTokens(), w.outputTokens(), w.contentSeed(), w.prefixSeed(), false, w.requestClass(), null,
                            w.lora());
                };
            }
        };
        // One arrival every 60 model ms: a step lasts at most 50 ms while no token is due, so each request is in its
        // engine (its KV blocks taken) before the next arrives, as the live client waits for; all 24 arrive within
        // 1.4 s, long before any request's second token, 100 s after its first.
        new Simulation(replicas, recording, SimulationOptions.defaults(), null)
                .run(new Workload(fixed, LoadPattern.constant(1000 / 60.0), REQUESTS, 1));
        return chosen;
    }
}
