package dev.infersim.cli;

import dev.infersim.bench.BenchConfig;
import dev.infersim.engine.ConfigException;
import dev.infersim.sim.GoodputSlo;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The endpoint, measurement and output flags of {@code infersim bench} and {@code infersim sweep}. */
public final class ClientOptions {

    @Option(names = "--base-url", defaultValue = "http://127.0.0.1:8000",
            description = "Server root URL (default: ${DEFAULT-VALUE}).")
    String baseUrl;

    @Option(names = "--endpoint", defaultValue = "/v1/completions",
            description = "/v1/completions or /v1/chat/completions (default: ${DEFAULT-VALUE}).")
    String endpoint;

    @Option(names = "--model", required = true, description = "Model name sent with every request.")
    String model;

    @Option(names = "--api-key", description = "Bearer token (default: $OPENAI_API_KEY).")
    String apiKey;

    @Option(names = "--num-warmups", defaultValue = "0",
            description = "The first N requests are sent but not measured (default: ${DEFAULT-VALUE}).")
    long numWarmups;

    @Option(names = "--warmup-duration", defaultValue = "0",
            description = "Requests scheduled in the first S seconds are sent but not measured (default: ${DEFAULT-VALUE}).")
    double warmupDurationS;

    @Option(names = "--duration", defaultValue = "0",
            description = "Stop sending measured requests after S seconds; 0 = send all --num-prompts (default: ${DEFAULT-VALUE}).")
    double durationS;

    @Option(names = "--request-timeout", defaultValue = "600",
            description = "A request not finished after S seconds fails as 'timeout' (default: ${DEFAULT-VALUE}).")
    double requestTimeoutS;

    @Option(names = "--max-send-lag-ms", defaultValue = "1",
            description = "Flag the run invalid when p99 send lag (actual - scheduled send) exceeds this (default: ${DEFAULT-VALUE}).")
    double maxSendLagMs;

    @Option(names = "--max-connections", defaultValue = "10000",
            description = "HTTP/1.1 keep-alive connections, one stream each (default: ${DEFAULT-VALUE}).")
    int maxConnections;

    @Option(names = "--goodput", arity = "1..*", paramLabel = "KEY:MS",
            description = "SLOs for request_goodput: ttft:MS tpot:MS e2el:MS.")
    List<String> goodput = List.of();

    @Option(names = "--percentile-metrics", defaultValue = "ttft,tpot,itl",
            description = "Metrics to report percentiles for: ttft,tpot,itl,e2el (default: ${DEFAULT-VALUE}).")
    String percentileMetrics;

    @Option(names = "--metric-percentiles", defaultValue = "99", description = "Comma-separated percentiles (default: ${DEFAULT-VALUE}).")
    String metricPercentiles;

    @Option(names = "--validate",
            description = "Compare each request's TTFT and E2EL with the infersim server's own timeline and report the error "
                    + "distribution; fails when the server sends no ground truth.")
    boolean validate;

    @Option(names = "--scrape-metrics", paramLabel = "URL",
            description = "Poll this Prometheus endpoint during the run (e.g. http://127.0.0.1:8000/metrics).")
    String scrapeMetrics;

    @Option(names = "--scrape-interval-ms", defaultValue = "500", description = "Polling interval (default: ${DEFAULT-VALUE}).")
    long scrapeIntervalMs;

    @Option(names = "--save-result", description = "Write the result JSON.")
    boolean saveResult;

    @Option(names = "--save-detailed", description = "Stream one JSON line per request to RESULT.jsonl beside the result.")
    boolean saveDetailed;

    @Option(names = "--result-dir", defaultValue = ".", description = "Directory of the result files (default: current).")
    Path resultDir;

    @Option(names = "--result-filename", description = "Result JSON file name (default: vLLM's backend-RATEqps-MODEL-DATE.json).")
    String resultFilename;

    @Option(names = "--metadata", arity = "1..*", paramLabel = "KEY=VALUE", description = "Extra keys recorded in the result.")
    List<String> metadata = List.of();

    @Option(names = "--html", paramLabel = "FILE", description = "Write a self-contained HTML report with charts.")
    Path html;

    BenchConfig config(boolean ignoreEos) {
        ConfigException.check(requestTimeoutS > 0, "--request-timeout must be > 0 s, got %s", requestTimeoutS);
        ConfigException.check(durationS >= 0, "--duration must be >= 0 s, got %s", durationS);
        ConfigException.check(warmupDurationS >= 0, "--warmup-duration must be >= 0 s, got %s", warmupDurationS);
        ConfigException.check(numWarmups >= 0, "--num-warmups must be >= 0, got %s", numWarmups);
        String key = apiKey != null ? apiKey : System.getenv("OPENAI_API_KEY");
        try {
            return new BenchConfig(trimSlash(baseUrl), endpoint, model, key, ignoreEos,
                    Math.round(requestTimeoutS * 1000), Math.round(maxSendLagMs * 1e6), GoodputSlo.parse(goodput),
                    List.of(percentileMetrics.split(",")), percentiles(), maxConnections, scrapeMetrics,
                    scrapeIntervalMs, null);
        } catch (ConfigException e) {
            throw e;
        } catch (IllegalArgumentException e) {
            throw new ConfigException(e.getMessage(), e);
        }
    }

    /** User metadata: {@code --metadata k=v} pairs, as vLLM writes them at the top level of the result. */
    Map<String, Object> userMetadata() {
        Map<String, Object> m = new LinkedHashMap<>();
        for (String pair : metadata) {
            int eq = pair.indexOf('=');
            ConfigException.check(eq > 0, "--metadata: expected KEY=VALUE, got '%s'", pair);
            m.put(pair.substring(0, eq), pair.substring(eq + 1));
        }
        return m;
    }

    long warmupDurationNanos() {
        return Math.round(warmupDurationS * 1e9);
    }

    long durationNanos() {
        return Math.round(durationS * 1e9);
    }

    private List<Double> percentiles() {
        try {
            return Arrays.stream(metricPercentiles.split(",")).map(String::trim).map(Double::valueOf).toList();
        } catch (NumberFormatException e) {
            throw new ConfigException("--metric-percentiles: expected comma-separated numbers, got '" + metricPercentiles + "'");
        }
    }

    private static String trimSlash(String url) {
        return url.endsWith("/") ? url.substring(0, url.length() - 1) : url;
    }
}
