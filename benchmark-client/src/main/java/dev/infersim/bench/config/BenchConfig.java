package dev.infersim.bench.config;

import dev.infersim.result.GoodputSlo;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * How to drive the endpoint, independent of which requests are sent (that is the workload's job).
 *
 * @param baseUrl              server root, e.g. {@code http://127.0.0.1:8000} ({@code --base-url})
 * @param endpoint             {@code /v1/completions} or {@code /v1/chat/completions} ({@code --endpoint})
 * @param model                model name sent in each request ({@code --model})
 * @param apiKey               bearer token, or null ({@code --api-key}, else OPENAI_API_KEY)
 * @param ignoreEos            send {@code ignore_eos} ({@code --ignore-eos})
 * @param requestTimeoutMillis a request still unfinished after this long fails as {@code timeout}
 * @param maxSendLagNanos      with {@code strictTiming}, a run whose p99 send lag exceeds this may be flagged invalid
 *                             ({@code --max-send-lag-ms}, see {@link dev.infersim.bench.measure.SendLagVerdict}); {@link #FIT_TO_MACHINE} to
 *                             derive it from a calibration
 * @param maxFailureRate       a run with a larger share of failed requests is flagged invalid ({@code --max-failure-rate})
 * @param slo                  goodput objectives ({@code --goodput})
 * @param percentileMetrics    {@code --percentile-metrics}
 * @param metricPercentiles    {@code --metric-percentiles}
 * @param maxConnections       HTTP/1.1 keep-alive connection pool size (one stream per connection)
 * @param scrapeUrl            Prometheus endpoint polled during the run, or null ({@code --scrape-metrics})
 * @param scrapeIntervalMillis polling interval for {@code scrapeUrl}
 * @param strictTiming         judge the client's timing by its send lag against {@code maxSendLagNanos}
 *                             ({@code --strict-timing}, the verdict of earlier versions) instead of by its share of
 *                             the latencies measured ({@link dev.infersim.bench.measure.TimingError}); the arrival process is judged either way
 * @param headers              extra HTTP headers sent with every request ({@code --header}); they replace the
 *                             client's own of the same name (content-type, accept, authorization)
 * @param clientWarmups        short unmeasured requests sent before the first run to compile the client's own code
 *                             ({@code --client-warmups}); 0 for none
 * @param tokenTimes           ask an infersim server for every token's times ({@code infersim.token_times}), so that
 *                             {@code --validate} judges coalescing per token against the wire
 * @param readyCheckTimeoutMillis how long the initial test request is retried while the server is not ready yet
 *                             (connection refused, 502/503/504: a model still loading, a gateway with no ready
 *                             replica), as vLLM's {@code --ready-check-timeout-sec} does; 0 sends it once
 */
public record BenchConfig(String baseUrl, String endpoint, String model, String apiKey, boolean ignoreEos,
                          long requestTimeoutMillis, long maxSendLagNanos, double maxFailureRate, GoodputSlo slo,
                          List<String> percentileMetrics, List<Double> metricPercentiles, int maxConnections,
                          String scrapeUrl, long scrapeIntervalMillis, boolean strictTiming,
                          Map<String, String> headers, int clientWarmups, boolean tokenTimes,
                          long readyCheckTimeoutMillis) {

    /** {@code maxSendLagNanos} that asks for a limit fitted to the machine's measured scheduling noise. */
    public static final long FIT_TO_MACHINE = -1;

    public BenchConfig {
        URI base = httpUrl("--base-url", baseUrl);
        if (base.getRawQuery() != null || base.getRawFragment() != null) {
            throw new IllegalArgumentException("--base-url must not have a query or fragment, got '" + baseUrl + "'");
        }
        if (scrapeUrl != null) {
            // checked here, not by the first poll: a poll's failure is only counted, and the run would go on blind
            httpUrl("--scrape-metrics", scrapeUrl);
        }
        if (!"/v1/completions".equals(endpoint) && !"/v1/chat/completions".equals(endpoint)) {
            throw new IllegalArgumentException(
                    "--endpoint must be /v1/completions or /v1/chat/completions, got '" + endpoint + "'");
        }
        if (model == null || model.isBlank()) {
            throw new IllegalArgumentException("--model must not be empty");
        }
        if (requestTimeoutMillis < 1) {
            throw new IllegalArgumentException("--request-timeout must be > 0 s, got " + requestTimeoutMillis + " ms");
        }
        if (maxSendLagNanos < 0 && maxSendLagNanos != FIT_TO_MACHINE) {
            throw new IllegalArgumentException("--max-send-lag-ms must be >= 0, got " + maxSendLagNanos / 1e6);
        }
        if (!(maxFailureRate >= 0 && maxFailureRate <= 1)) {
            throw new IllegalArgumentException("--max-failure-rate must be in [0, 1], got " + maxFailureRate);
        }
        if (maxConnections < 1) {
            throw new IllegalArgumentException("--max-connections must be >= 1, got " + maxConnections);
        }
        if (scrapeUrl != null && scrapeIntervalMillis < 10) {
            throw new IllegalArgumentException("--scrape-interval-ms must be >= 10, got " + scrapeIntervalMillis);
        }
        percentileMetrics = List.copyOf(percentileMetrics);
        metricPercentiles = List.copyOf(metricPercentiles);
        if (clientWarmups < 0) {
            throw new IllegalArgumentException("--client-warmups must be >= 0, got " + clientWarmups);
        }
        if (readyCheckTimeoutMillis < 0) {
            throw new IllegalArgumentException("--ready-check-timeout-sec must be >= 0, got " + readyCheckTimeoutMillis / 1e3);
        }
        headers.forEach(BenchConfig::checkHeader);
        headers = Collections.unmodifiableMap(new LinkedHashMap<>(headers));
    }

    /** Without asking for token times. */
    public BenchConfig(String baseUrl, String endpoint, String model, String apiKey, boolean ignoreEos,
                       long requestTimeoutMillis, long maxSendLagNanos, double maxFailureRate, GoodputSlo slo,
                       List<String> percentileMetrics, List<Double> metricPercentiles, int maxConnections,
                       String scrapeUrl, long scrapeIntervalMillis, boolean strictTiming,
                       Map<String, String> headers, int clientWarmups) {
        this(baseUrl, endpoint, model, apiKey, ignoreEos, requestTimeoutMillis, maxSendLagNanos, maxFailureRate, slo,
                percentileMetrics, metricPercentiles, maxConnections, scrapeUrl, scrapeIntervalMillis, strictTiming,
                headers, clientWarmups, false, 0);
    }

    /**
     * Without {@code --strict-timing}, {@code --header}, client warm-up or a ready check: a given send-lag limit asks
     * for strict timing, as {@code --max-send-lag-ms} does on the command line.
     */
    public BenchConfig(String baseUrl, String endpoint, String model, String apiKey, boolean ignoreEos,
                       long requestTimeoutMillis, long maxSendLagNanos, double maxFailureRate, GoodputSlo slo,
                       List<String> percentileMetrics, List<Double> metricPercentiles, int maxConnections,
                       String scrapeUrl, long scrapeIntervalMillis) {
        this(baseUrl, endpoint, model, apiKey, ignoreEos, requestTimeoutMillis, maxSendLagNanos, maxFailureRate, slo,
                percentileMetrics, metricPercentiles, maxConnections, scrapeUrl, scrapeIntervalMillis,
                maxSendLagNanos != FIT_TO_MACHINE, Map.of(), 0, false, 0);
    }

    /** A header name must be an HTTP token (RFC 9110, section 5.6.2) and its value must not break the line. */
    private static void checkHeader(String name, String value) {
        if (name.isEmpty() || !name.chars().allMatch(c -> c < 128 && (Character.isLetterOrDigit(c)
                || "!#$%&'*+-.^_`|~".indexOf(c) >= 0))) {
            throw new IllegalArgumentException("--header: '" + name + "' is not an HTTP header name (letters, digits "
                    + "and !#$%&'*+-.^_`|~)");
        }
        if (value.chars().anyMatch(c -> c == '\r' || c == '\n' || c == 0)) {
            throw new IllegalArgumentException("--header: the value of '" + name + "' holds a line break");
        }
    }

    /**
     * The client connects to the URL's host and port (the lanes append the endpoint to the base URL, so it must also
     * end at its path), so it must have a host and a port a socket can use: otherwise the connect throws on an event
     * loop (the run never ends), a missing host silently means localhost:80, and a query ends up in front of the
     * endpoint.
     */
    private static URI httpUrl(String flag, String url) {
        if (url == null || !(url.startsWith("http://") || url.startsWith("https://"))) {
            throw new IllegalArgumentException(flag + " must start with http:// or https://, got '" + url + "'");
        }
        URI uri;
        try {
            uri = new URI(url);
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException(flag + " is not a valid URL: " + e.getMessage(), e);
        }
        if (uri.getHost() == null) {
            throw new IllegalArgumentException(flag + " needs a host name, got '" + url + "'");
        }
        if (uri.getPort() > 65535) {
            throw new IllegalArgumentException(flag + " port must be at most 65535, got " + uri.getPort());
        }
        return uri;
    }

    /** Whether requests go to the chat endpoint. */
    public boolean chat() {
        return endpoint.equals("/v1/chat/completions");
    }
}
