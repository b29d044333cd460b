package dev.infersim.bench;

import com.fasterxml.jackson.databind.JsonNode;
import dev.infersim.common.ConfigException;
import dev.infersim.result.BenchmarkReport;
import dev.infersim.result.LatencyLog;
import dev.infersim.result.LatencyStats;
import dev.infersim.result.MergedServingStats;
import dev.infersim.result.ResultJson;
import dev.infersim.result.RunInfo;
import dev.infersim.result.ServingSummary;
import dev.infersim.workload.RampStrategy;
import dev.infersim.workload.RampUp;
import org.HdrHistogram.Histogram;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Combines the results of the shards of one distributed run ({@code bench --shard I/N}) into one result with vLLM's
 * keys, as if one client had sent every request: counts, tokens and errors summed; each latency's percentiles from
 * the shards' HdrHistogram logs added together (never averaged percentiles), its mean and deviation pooled exactly
 * from the shards' moments; throughput over the union of the shards' measured windows on the wall clock. Each shard's
 * own send lag, counts and validity stay under {@code infersim_shards}. The per-second peaks and time series cannot
 * be added across shards and are left out (vLLM's peak keys are null).
 */
public final class ShardMerge {
    private static final Pattern PERCENTILE_KEY = Pattern.compile("p([0-9.]+)_(ttft|tpot|itl|e2el)_ms");
    private static final List<String> METRICS = List.of("ttft", "tpot", "itl", "e2el");

    private ShardMerge() {
    }

    /** One shard's result file and what it holds. */
    private record ShardResult(Path file, JsonNode result, JsonNode shard) {
        long count(String key) {
            return result.path(key).asLong(0);
        }
    }

    /** Merges the shard results in {@code files} (result JSON files of {@code bench --shard}); see the class doc. */
    public static BenchmarkReport merge(List<Path> files) {
        List<ShardResult> shards = read(files);
        ShardResult first = shards.get(0);
        Map<String, LatencyStats> latencies = new LinkedHashMap<>();
        for (ShardResult s : shards) {
            Path log = latencyLog(s.file());
            Map<String, Histogram> histograms = LatencyLog.read(log);
            histograms.forEach((name, h) -> {
                JsonNode moments = s.shard().path("latency_moments").path(name);
                ConfigException.check(moments.path("count").asLong(-1) == h.getTotalCount(),
                        "%s: its latency log %s holds %d %s samples, the result %s: not the log of this result",
                        s.file(), log, h.getTotalCount(), name, moments.path("count").asText("none"));
                latencies.computeIfAbsent(name, k -> new LatencyStats()).add(LatencyStats.restored(h,
                        moments.path("mean_ms").asDouble(), moments.path("std_ms").asDouble()));
            });
        }
        LatencyStats sendLag = latencies.remove(BenchResultAssembly.SEND_LAG);
        if (sendLag == null) {
            sendLag = new LatencyStats();
        }
        boolean goodput = first.result().path("request_goodput").isNumber();
        MergedServingStats stats = new MergedServingStats(goodput, sum(shards, "completed"),
                sum(shards, "failed"), sum(shards, "total_input_tokens"), sum(shards, "total_output_tokens"),
                sum(shards, "infersim_cached_prompt_tokens"), sum(shards, "infersim_preemptions"),
                shards.stream().mapToLong(s -> s.shard().path("good_requests").asLong()).sum(), latencies);
        RunInfo info = runInfo(first.result(), sum(shards, "num_prompts"));
        return BenchmarkReport.of(info, stats, unionNanos(shards), extra(shards, sendLag, stats));
    }

    private static List<ShardResult> read(List<Path> files) {
        ConfigException.check(!files.isEmpty(), "merge: give the result files of the shards");
        List<ShardResult> shards = new ArrayList<>();
        for (Path file : files) {
            JsonNode result;
            try {
                result = ResultJson.readObject(file);
            } catch (java.io.UncheckedIOException e) {
                throw new ConfigException(e.getMessage());
            }
            JsonNode shard = result.path("infersim_shard");
            ConfigException.check(shard.isObject(), "%s: not a shard's result (run bench with --shard I/N and "
                    + "--save-result)", file);
            ConfigException.check(java.nio.file.Files.isRegularFile(latencyLog(file)),
                    "%s: its latency log %s is missing (a shard writes it beside its result)", file, latencyLog(file));
            shards.add(new ShardResult(file, result, shard));
        }
        shards.sort(Comparator.comparingInt(s -> s.shard().path("index").asInt()));
        int count = shards.get(0).shard().path("count").asInt();
        for (int i = 0; i < shards.size(); i++) {
            ShardResult s = shards.get(i);
            ConfigException.check(s.shard().path("count").asInt() == count, "%s is shard %s/%s, the others are of %d",
                    s.file(), s.shard().path("index").asText(), s.shard().path("count").asText(), count);
            ConfigException.check(s.shard().path("index").asInt() == i, "merge: shard %d/%d is %s", i, count,
                    i > 0 && shards.get(i - 1).shard().path("index").asInt() == s.shard().path("index").asInt()
                            ? "given twice (" + shards.get(i - 1).file() + ", " + s.file() + ")" : "missing");
            for (String key : List.of("model_id", "backend", "request_rate", "infersim_workload")) {
                ConfigException.check(s.result().path(key).equals(shards.get(0).result().path(key)),
                        "%s: its %s %s differs from %s's %s: not shards of one run", s.file(), key,
                        s.result().path(key), shards.get(0).file(), shards.get(0).result().path(key));
            }
        }
        ConfigException.check(shards.size() == count, "merge: %d of %d shards given; shard %d/%d is missing",
                shards.size(), count, shards.size(), count);
        return shards;
    }

    /** Where a shard keeps its HdrHistogram log: beside its result, RESULT.hlog for RESULT.json. */
    public static Path latencyLog(Path result) {
        String name = result.getFileName().toString().replaceFirst("\\.json$", "");
        return result.toAbsolutePath().resolveSibling(name + ".hlog");
    }

    private static long sum(List<ShardResult> shards, String key) {
        return shards.stream().mapToLong(s -> s.count(key)).sum();
    }

    /** Length of the union of the shards' measured windows on the wall clock. */
    static long unionNanos(List<ShardResult> shards) {
        double[][] spans = shards.stream().map(s -> {
            double start = s.shard().path("schedule_start_epoch_ms").asLong() * 1e6
                    + s.shard().path("window_start_s").asDouble() * 1e9;
            return new double[] {start, start + (s.shard().path("window_end_s").asDouble()
                    - s.shard().path("window_start_s").asDouble()) * 1e9};
        }).sorted(Comparator.comparingDouble(span -> span[0])).toArray(double[][]::new);
        double total = 0;
        double from = spans[0][0];
        double to = spans[0][1];
        for (double[] span : Arrays.asList(spans).subList(1, spans.length)) {
            if (span[0] > to) {
                total += to - from;
                from = span[0];
            }
            to = Math.max(to, span[1]);
        }
        return Math.round(total + to - from);
    }

    /** The run's parameters as the shards report them, with every shard's requests. */
    private static RunInfo runInfo(JsonNode r, long numPrompts) {
        List<String> metrics = METRICS.stream().filter(m -> r.has("mean_" + m + "_ms")).toList();
        TreeMap<Double, Boolean> percentiles = new TreeMap<>();
        for (Iterator<String> keys = r.fieldNames(); keys.hasNext(); ) {
            Matcher m = PERCENTILE_KEY.matcher(keys.next());
            if (m.matches()) {
                percentiles.put(Double.parseDouble(m.group(1)), true);
            }
        }
        JsonNode rate = r.path("request_rate");
        RampUp ramp = r.has("ramp_up_strategy") ? RampUp.overRequests(
                RampStrategy.valueOf(r.path("ramp_up_strategy").asText().toUpperCase(Locale.ROOT)),
                r.path("ramp_up_start_rps").asDouble(), r.path("ramp_up_end_rps").asDouble()) : null;
        return new RunInfo(r.path("date").asText(), r.path("backend").asText(), r.path("model_id").asText(),
                r.path("tokenizer_id").asText(), numPrompts,
                rate.isNumber() ? rate.asDouble() : Double.POSITIVE_INFINITY, r.path("burstiness").asDouble(1),
                r.path("max_concurrency").asInt(0), metrics, List.copyOf(percentiles.keySet()), ramp);
    }

    private static Map<String, Object> extra(List<ShardResult> shards, LatencyStats sendLag, ServingSummary stats) {
        JsonNode first = shards.get(0).result();
        Map<String, Object> m = new LinkedHashMap<>();
        for (String key : List.of("infersim_backend", "infersim_base_url", "infersim_endpoint", "infersim_load_mode",
                "infersim_workload", "infersim_version")) {
            if (first.has(key)) {
                m.put(key, first.get(key));
            }
        }
        List<String> invalid = new ArrayList<>();
        for (ShardResult s : shards) {
            String name = "shard " + s.shard().path("index").asInt() + "/" + s.shard().path("count").asInt();
            s.result().path("infersim_invalid_reasons").forEach(reason -> invalid.add(name + ": " + reason.asText()));
        }
        m.put("infersim_valid", invalid.isEmpty());
        m.put("infersim_invalid_reasons", invalid);
        m.put("infersim_send_lag_ms", ClientKeys.LagSummary.of(sendLag));
        m.put("infersim_sent", sum(shards, "infersim_sent"));
        m.put("infersim_cancelled", sum(shards, "infersim_cancelled"));
        m.put("infersim_errors", errors(shards));
        m.put("infersim_interrupted", shards.stream().anyMatch(s -> s.result().path("infersim_interrupted").asBoolean()));
        m.put("infersim_percentile_curves", BenchResultAssembly.curves(stats, sendLag));
        List<Map<String, Object>> each = new ArrayList<>();
        for (ShardResult s : shards) {
            Map<String, Object> one = new LinkedHashMap<>();
            one.put("file", s.file().toString());
            one.put("shard", s.shard().path("index").asInt() + "/" + s.shard().path("count").asInt());
            for (String key : List.of("num_prompts", "completed", "failed", "duration", "request_throughput",
                    "infersim_valid", "infersim_send_lag_ms")) {
                one.put(key, s.result().get(key));
            }
            one.put("schedule_start_epoch_ms", s.shard().get("schedule_start_epoch_ms"));
            one.put("window_start_s", s.shard().get("window_start_s"));
            one.put("window_end_s", s.shard().get("window_end_s"));
            each.add(one);
        }
        m.put("infersim_shards", each);
        return m;
    }

    /** The shards' errors by type: counts summed, the first messages of each shard kept (up to three). */
    private static Map<String, Object> errors(List<ShardResult> shards) {
        Map<String, Long> counts = new LinkedHashMap<>();
        Map<String, List<String>> messages = new LinkedHashMap<>();
        for (ShardResult s : shards) {
            s.result().path("infersim_errors").fields().forEachRemaining(e -> {
                counts.merge(e.getKey(), e.getValue().path("count").asLong(), Long::sum);
                List<String> first = messages.computeIfAbsent(e.getKey(), k -> new ArrayList<>());
                e.getValue().path("first_messages").forEach(msg -> {
                    if (first.size() < 3) {
                        first.add(msg.asText());
                    }
                });
            });
        }
        Map<String, Object> out = new LinkedHashMap<>();
        counts.forEach((type, count) -> out.put(type, new ErrorTally.Quoted(count, List.copyOf(messages.get(type)))));
        return out;
    }
}
