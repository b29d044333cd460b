package dev.infersim.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.infersim.engine.Deployment;
import dev.infersim.engine.FixedTiming;
import dev.infersim.engine.Profiles;
import dev.infersim.server.fleet.MockServer;
import dev.infersim.server.config.ServerOptions;
import dev.infersim.server.observe.TruthLog;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The client's estimate of its own TTFT error bounds the error it made: 40 streams against a fixed-timing
 * mock, each request's client TTFT held against the mock's TTFT at the wire (its truth log: the request's head read to
 * the first token's chunk handed to the connection), less the mock's own bound on how late it read the request (which is
 * the server's, and which the client cannot see). The client's p99 estimate (send lag to the socket plus the lateness
 * of its first reads, {@code infersim_validity.timing.ttft_error_p99_ms}) must be at least the p99 of those errors,
 * however busy the machine. Against packets on loopback: bench/benchmark-client/wire-capture.sh.
 */
class ClientErrorBoundTest {
    @TempDir
    Path dir;

    @Test
    @Tag("wallclock") // real clock, 40 streams for a few seconds
    void theClientsOwnEstimateBoundsItsTtftErrorAgainstTheWire() throws Exception {
        Path truthFile = dir.resolve("truth.jsonl");
        TruthLog log = TruthLog.open(truthFile, TruthLog.DEFAULT_RING_CHARS);
        Deployment d = Deployment.builder(Profiles.gpu("h100"), Profiles.model("llama-3.1-8b")).maxNumSeqs(64).build();
        MockServer mock = MockServer.start(ServerOptions.builder(d).port(0).eventLoops(1).fixedTiming(FixedTiming.of(100, 50))
                .truthLog(log).build()).toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
        CliRun run;
        try {
            run = CliRun.of("bench", "--base-url", mock.baseUrl(), "--model", "llama-3.1-8b", "--random-input-len", "64",
                    "--random-output-len", "8", "--ignore-eos", "--num-prompts", "200", "--request-rate", "inf",
                    "--max-concurrency", "40", "--seed", "34", "--validate", "--client-warmups", "64",
                    "--save-result", "--save-detailed", "--result-dir", dir.toString(), "--result-filename", "bound.json");
        } finally {
            mock.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
            log.close();
        }
        assertTrue(run.exitCode() == 0 || run.exitCode() == 3, run.out() + run.err());
        ObjectMapper json = new ObjectMapper();
        JsonNode result = json.readTree(dir.resolve("bound.json").toFile());
        double estimate = result.at("/infersim_validity/timing/ttft_error_p99_ms").asDouble();

        Map<String, JsonNode> truth = new HashMap<>();
        for (String line : Files.readAllLines(truthFile)) {
            JsonNode row = json.readTree(line);
            truth.put(row.get("request_id").asText(), row.get("wall"));
        }
        List<Double> errors = new ArrayList<>();
        for (String line : Files.readAllLines(dir.resolve("bound.jsonl"))) {
            JsonNode r = json.readTree(line);
            JsonNode wall = truth.get(r.path("request_id").asText());
            if (r.path("warmup").asBoolean() || wall == null || !r.has("ttft_ms")) {
                continue;
            }
            double wireTtft = wall.get("first_token_written_ms").asDouble() - wall.get("received_ms").asDouble();
            double error = Math.abs(r.get("ttft_ms").asDouble() - wireTtft);
            errors.add(Math.max(0, error - wall.get("received_lateness_ms").asDouble()));
        }
        assertEquals(200, errors.size(), "every measured request has its truth-log row");
        errors.sort(Double::compare);
        double p99 = errors.get((int) Math.ceil(0.99 * errors.size()) - 1);
        System.out.printf(Locale.ROOT, "client TTFT error against the wire (less the mock's late read): p50 %.3f p99 %.3f "
                + "max %.3f ms; the client's estimate of its p99 %.3f ms; read delay %s%n", errors.get(errors.size() / 2),
                p99, errors.get(errors.size() - 1), estimate, result.get("infersim_read_delay_ms"));
        assertTrue(estimate >= p99, "the client's estimate " + estimate + " ms is below its error's p99 " + p99 + " ms");
    }
}
