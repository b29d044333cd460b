package dev.infersim.cli.options;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.infersim.bench.config.BenchConfig;
import dev.infersim.bench.report.BenchResult;
import dev.infersim.common.ConfigException;
import dev.infersim.result.ResultJson;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The endpoint, measurement and output flags of {@code infersim bench} and {@code infersim sweep}. */
@OptionGroup.In(OptionGroup.CLIENT)
public final class ClientOptions {

    @Option(names = "--base-url", defaultValue = "http://127.0.0.1:8000",
            description = "Server root URL; a trailing /v1 is dropped, as --endpoint starts with it "
                    + "(default: ${DEFAULT-VALUE}).")
    String baseUrl;

    @Option(names = "--endpoint", defaultValue = "/v1/completions",
            description = "/v1/completions or /v1/chat/completions (default: ${DEFAULT-VALUE}).")
    String endpoint;

    @Option(names = "--model", required = true, description = "Model name sent with every request.")
    public String model;

    @Option(names = "--api-key", description = "Bearer token (default: $OPENAI_API_KEY).")
    String apiKey;

    @Mixin
    public ReportOptions report;

    @Option(names = "--duration", defaultValue = "0",
            description = "Stop sending measured requests after S seconds; 0 = send all --num-prompts (default: ${DEFAULT-VALUE}).")
    double durationS;

    @Option(names = "--request-timeout", defaultValue = "600",
            description = "A request not finished after S seconds fails as 'timeout' (default: ${DEFAULT-VALUE}).")
    double requestTimeoutS;

    @Option(names = "--header", arity = "1..*", paramLabel = "KEY=VALUE",
            description = "HTTP headers sent with every request (repeatable, as vllm bench serve's), e.g. for a gateway "
                    + "that routes on them; they replace the client's own of the same name (authorization...).")
    List<String> headers = List.of();

    @Option(names = "--client-warmups", defaultValue = "256",
            description = "Short requests (at most 64 tokens in, 8 out, new prompts, as many at a time as "
                    + "--max-concurrency and at least 8, not measured) sent after the initial test request and "
                    + "before the first run, so that the client's own code is compiled and its connections are open "
                    + "before it measures; 0 for none (default: ${DEFAULT-VALUE}).")
    int clientWarmups;

    @Option(names = "--ready-check-timeout-sec", defaultValue = "600", paramLabel = "S",
            description = "Retry the initial test request for up to this long while the server is not ready yet "
                    + "(connection refused, 502, 503 or 504: a model still loading, a front door or gateway with no ready "
                    + "replica), as vllm bench serve's; other failures end the run at once; 0 sends it once "
                    + "(default: ${DEFAULT-VALUE}).")
    double readyCheckTimeoutS;

    @Option(names = "--strict-timing",
            description = "Judge the client's timing as earlier versions did: the run is invalid when p99 send lag "
                    + "(actual - scheduled send) exceeds --max-send-lag-ms and the client caused it, however small "
                    + "beside the latencies measured. Without it, timing invalidates a run only when the client's "
                    + "timing error p99 exceeds 25%% of the TTFT p50 or its read delay p99 25%% of the mean ITL. The "
                    + "arrival process is judged either way.")
    boolean strictTiming;

    @Option(names = "--max-send-lag-ms",
            description = "The send-lag limit of --strict-timing, which it implies (default: fitted to the machine, "
                    + "twice the p99 scheduling noise a 0.3 s calibration measures at start, at least 1 ms). Not judged "
                    + "at --request-rate inf or in a closed loop.")
    Double maxSendLagMs;

    @Option(names = "--max-failure-rate", defaultValue = "0",
            description = "Flag the run invalid (exit code 3) when more than this share of requests fail, 0 to 1 "
                    + "(default: ${DEFAULT-VALUE}).")
    double maxFailureRate;

    @Option(names = "--max-connections", defaultValue = "10000",
            description = "HTTP/1.1 keep-alive connections, one stream each, shared out over the client's event loops "
                    + "(default: ${DEFAULT-VALUE}).")
    int maxConnections;

    @Option(names = "--validate",
            description = "Compare each request's TTFT and E2EL with the infersim server's own timeline at the wire (asking "
                    + "it for every token's times) and report the error distribution and what a gateway did: tokens "
                    + "coalesced, retries hidden from the client, added latency (against the server's own TTFT, or "
                    + "--baseline-url), never what the client's own timing error explains; fails when the server sends "
                    + "no ground truth.")
    public boolean validate;

    @Option(names = "--scrape-metrics", paramLabel = "URL",
            description = "Poll this Prometheus endpoint during the run (e.g. http://127.0.0.1:8000/metrics).")
    String scrapeMetrics;

    @Option(names = "--scrape-interval-ms", defaultValue = "500", description = "Polling interval (default: ${DEFAULT-VALUE}).")
    long scrapeIntervalMs;

    @Option(names = "--metadata", arity = "1..*", paramLabel = "KEY=VALUE", description = "Extra keys recorded in the result; they cannot replace a measured key.")
    List<String> metadata = List.of();

    @Option(names = "--html", paramLabel = "FILE", description = "Write a self-contained HTML report with charts.")
    public Path html;

    @Option(names = "--tokenizer", paramLabel = "TOKENIZER_JSON",
            description = "The model's HuggingFace tokenizer.json, read offline, to count the tokens of each chunk when the "
                    + "server's usage cannot (default: cl100k_base). Prompts are still rendered with cl100k_base.")
    public Path tokenizer;

    /** Makes sure the results and the HTML report can be written where asked, so a bad path fails before the run. */
    public void prepareOutputs() {
        report.createResultDir();
        if (html != null) {
            ReportOptions.writableFile("--html", html);
        }
    }

    /** Writes the HTML report; a failure (after the run, the results already written) is one line naming --html. */
    public void writeHtml(Runnable write, PrintStream out) {
        try {
            write.run();
        } catch (ConfigException e) {
            throw new ConfigException("--html: " + e.getMessage(), e);
        }
        out.println("HTML report written to " + html);
    }

    public BenchConfig config(boolean ignoreEos) {
        return config(ignoreEos, baseUrl);
    }

    /** The configuration with another server than --base-url (a direct baseline beside a gateway). */
    public BenchConfig config(boolean ignoreEos, String baseUrl) {
        ConfigException.check(requestTimeoutS > 0, "--request-timeout must be > 0 s, got %s", requestTimeoutS);
        ConfigException.check(durationS >= 0, "--duration must be >= 0 s, got %s", durationS);
        ConfigException.check(readyCheckTimeoutS >= 0, "--ready-check-timeout-sec must be >= 0, got %s", readyCheckTimeoutS);
        ConfigException.check(maxSendLagMs == null || maxSendLagMs >= 0, "--max-send-lag-ms must be >= 0, got %s",
                maxSendLagMs);
        report.validate();
        String key = apiKey != null ? apiKey : System.getenv("OPENAI_API_KEY");
        try {
            return new BenchConfig(serverRoot(baseUrl), endpoint, model, key, ignoreEos,
                    Math.round(requestTimeoutS * 1000),
                    maxSendLagMs == null ? BenchConfig.FIT_TO_MACHINE : Math.round(maxSendLagMs * 1e6), maxFailureRate,
                    report.slo(),
                    report.metrics(), report.percentiles(), maxConnections, scrapeMetrics, scrapeIntervalMs,
                    strictTiming || maxSendLagMs != null, headerMap(), clientWarmups, validate,
                    Math.round(readyCheckTimeoutS * 1000));
        } catch (ConfigException e) {
            throw e;
        } catch (IllegalArgumentException e) {
            throw new ConfigException(e.getMessage(), e);
        }
    }

    /**
     * The run as --validate judges it: without any ground truth from the server there is nothing to validate against,
     * and the result says so itself (JSON, console and HTML agree with the exit code). Only a request that succeeded
     * can bring ground truth: when none did (a server answering 500, an infersim mock with every request failing
     * included), the reason is the failures, not the kind of server.
     */
    public BenchResult validated(BenchResult result) {
        if (!validate || result.hasGroundTruth()) {
            return result;
        }
        Long completed = result.result().totals().completed();
        return result.invalidatedBy(completed == null || completed == 0
                ? "--validate: no request succeeded, so no ground truth came back to compare with"
                : "--validate: the server sent no ground truth (no 'infersim' object in its last chunk) with any of "
                        + completed + " successful requests: it is not an infersim mock, so there is nothing to compare with");
    }

    /** {@code --header KEY=VALUE} pairs; a later one of the same name wins. */
    Map<String, String> headerMap() {
        Map<String, String> m = new LinkedHashMap<>();
        for (String pair : headers) {
            int eq = pair.indexOf('=');
            ConfigException.check(eq > 0, "--header: expected KEY=VALUE, got '%s'", pair);
            m.put(pair.substring(0, eq).strip(), pair.substring(eq + 1).strip());
        }
        return m;
    }

    /** User metadata: {@code --metadata k=v} pairs, as vLLM writes them at the top level of the result. */
    public ObjectNode userMetadata() {
        ObjectNode m = ResultJson.mapper().createObjectNode();
        for (String pair : metadata) {
            int eq = pair.indexOf('=');
            ConfigException.check(eq > 0, "--metadata: expected KEY=VALUE, got '%s'", pair);
            String key = pair.substring(0, eq).strip();
            ConfigException.check(!key.startsWith("infersim_"),
                    "--metadata: key '%s' is reserved: infersim_ keys hold what the client measured", key);
            m.put(key, pair.substring(eq + 1).strip());
        }
        return m;
    }

    public long warmupDurationNanos() {
        return Math.round(report.warmupDurationS * 1e9);
    }

    public long durationNanos() {
        return Math.round(durationS * 1e9);
    }

    /**
     * The server root the endpoint is appended to: trailing slashes dropped, and a trailing {@code /v1} too, since
     * {@code serve} and most servers print their URL with it and the endpoint already starts with it.
     */
    static String serverRoot(String url) {
        String root = url.replaceFirst("/+$", "");
        return root.endsWith("/v1") ? root.substring(0, root.length() - 3) : root;
    }
}
