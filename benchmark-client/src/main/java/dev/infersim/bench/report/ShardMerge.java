package dev.infersim.bench.report;

import com.fasterxml.jackson.databind.JsonNode;
import dev.infersim.bench.measure.ClientKeys;
import dev.infersim.bench.measure.ErrorTally;
import dev.infersim.common.ConfigException;
import dev.infersim.result.LatencyLog;
import dev.infersim.result.LatencyStats;
import dev.infersim.result.MergedServingStats;
import dev.infersim.result.MetricSummary;
import dev.infersim.result.ResultJson;
import dev.infersim.result.RunInfo;
import dev.infersim.result.ServingReport;
import dev.infersim.result.ServingResult;
import dev.infersim.result.ServingSummary;
import org.HdrHistogram.Histogram;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.function.ToLongFunction;

/**
 * Combines the results of the shards of one distributed run ({@code bench --shard I/N}) into one result with vLLM's
 * keys, as if one client had sent every request: counts, tokens and errors summed; each latency's percentiles from
 * the shards' HdrHistogram logs added together (never averaged percentiles), its mean and deviation pooled exactly
 * from the shards' moments; throughput over the union of the shards' measured windows on the wall clock. Each shard's
 * own send lag, counts and validity stay under {@code infersim_shards}. The per-second peaks and time series cannot
 * be added across shards and are left out (vLLM's peak keys are null).
 */
public final class ShardMerge {
    private ShardMerge() {
    }

    /** One shard's result file and what it holds. */
    private record ShardResult(Path file, ServingResult<ClientKeys> result) {
        ClientKeys keys() {
            return result.producer();
        }

        ClientKeys.ShardKeys shard() {
            return result.producer().shard();
        }

        /** A key of the result as its file writes it, for the check that the shards are of one run. */
        JsonNode json(String key) {
            return ResultJson.tree(result).path(key);
        }
    }

    /** Merges the shard results in {@code files} (result JSON files of {@code bench --shard}); see the class doc. */
    public static ServingReport<MergeKeys> merge(List<Path> files) {
        List<ShardResult> shards = read(files);
        ShardResult first = shards.get(0);
        Map<String, LatencyStats> latencies = new LinkedHashMap<>();
        for (ShardResult s : shards) {
            Path log = latencyLog(s.file());
            Map<String, Histogram> histograms = LatencyLog.read(log);
            histograms.forEach((name, h) -> {
                ClientKeys.Moments moments = s.shard().latencyMoments().get(name);
                ConfigException.check(moments != null && moments.count() == h.getTotalCount(),
                        "%s: its latency log %s holds %d %s samples, the result %s: not the log of this result",
                        s.file(), log, h.getTotalCount(), name, moments == null ? "none" : moments.count());
                latencies.computeIfAbsent(name, k -> new LatencyStats()).add(LatencyStats.restored(h,
                        moments.meanMs(), moments.stdMs()));
            });
        }
        LatencyStats sendLag = latencies.remove(BenchResultAssembly.SEND_LAG);
        if (sendLag == null) {
            sendLag = new LatencyStats();
        }
        boolean goodput = first.result().totals().requestGoodput() != null;
        MergedServingStats stats = new MergedServingStats(goodput, sum(shards, t -> orZero(t.result().totals().completed())),
                sum(shards, t -> orZero(t.result().totals().failed())),
                sum(shards, t -> orZero(t.result().totals().totalInputTokens())),
                sum(shards, t -> orZero(t.result().totals().totalOutputTokens())),
                sum(shards, t -> t.result().cachedPromptTokens()), sum(shards, t -> t.result().preemptions()),
                sum(shards, t -> t.shard().goodRequests()), latencies);
        RunInfo info = runInfo(first.result(), sum(shards, t -> t.result().run().numPrompts()));
        return ServingReport.of(info, stats, unionNanos(shards), keys(shards, sendLag, stats));
    }

    private static List<ShardResult> read(List<Path> files) {
        ConfigException.check(!files.isEmpty(), "merge: give the result files of the shards");
        List<ShardResult> shards = new ArrayList<>();
        for (Path file : files) {
            ServingResult<ClientKeys> result;
            try {
                result = ClientKeys.read(file);
            } catch (java.io.UncheckedIOException e) {
                throw new ConfigException(e.getMessage());
            }
            ConfigException.check(result.producer().shard() != null, "%s: not a shard's result (run bench with "
                    + "--shard I/N and --save-result)", file);
            ConfigException.check(java.nio.file.Files.isRegularFile(latencyLog(file)),
                    "%s: its latency log %s is missing (a shard writes it beside its result)", file, latencyLog(file));
            shards.add(new ShardResult(file, result));
        }
        shards.sort(Comparator.comparingInt(s -> s.shard().index()));
        int count = shards.get(0).shard().count();
        for (int i = 0; i < shards.size(); i++) {
            ShardResult s = shards.get(i);
            ConfigException.check(s.shard().count() == count, "%s is shard %s/%s, the others are of %d",
                    s.file(), s.shard().index(), s.shard().count(), count);
            ConfigException.check(s.shard().index() == i, "merge: shard %d/%d is %s", i, count,
                    i > 0 && shards.get(i - 1).shard().index() == s.shard().index()
                            ? "given twice (" + shards.get(i - 1).file() + ", " + s.file() + ")" : "missing");
            for (String key : List.of("model_id", "backend", "request_rate", "infersim_workload")) {
                ConfigException.check(s.json(key).equals(shards.get(0).json(key)),
                        "%s: its %s %s differs from %s's %s: not shards of one run", s.file(), key,
                        s.json(key), shards.get(0).file(), shards.get(0).json(key));
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

    private static long sum(List<ShardResult> shards, ToLongFunction<ShardResult> count) {
        return shards.stream().mapToLong(count).sum();
    }

    /** A count the file lacks is none, as vLLM's readers take it. */
    private static long orZero(Long count) {
        return count == null ? 0 : count;
    }

    /** Length of the union of the shards' measured windows on the wall clock. */
    static long unionNanos(List<ShardResult> shards) {
        double[][] spans = shards.stream().map(s -> {
            double start = s.shard().scheduleStartEpochMs() * 1e6 + s.shard().windowStartS() * 1e9;
            return new double[] {start, start + (s.shard().windowEndS() - s.shard().windowStartS()) * 1e9};
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
    private static RunInfo runInfo(ServingResult<ClientKeys> r, long numPrompts) {
        TreeSet<Double> percentiles = new TreeSet<>();
        for (MetricSummary m : r.latencies().metrics()) {
            m.percentiles().forEach(p -> percentiles.add(p.percentile()));
        }
        return r.run().withNumPrompts(numPrompts).runInfo(r.latencies().names(), List.copyOf(percentiles));
    }

    private static MergeKeys keys(List<ShardResult> shards, LatencyStats sendLag, ServingSummary stats) {
        ClientKeys first = shards.get(0).keys();
        Map<String, JsonNode> metadata = first.metadata().keys();
        List<String> invalid = new ArrayList<>();
        List<MergeKeys.ShardSummary> each = new ArrayList<>();
        for (ShardResult s : shards) {
            String name = s.shard().index() + "/" + s.shard().count();
            s.keys().invalidReasons().forEach(reason -> invalid.add("shard " + name + ": " + reason));
            each.add(new MergeKeys.ShardSummary(s.file().toString(), name, s.result().run().numPrompts(),
                    s.result().totals().completed(), s.result().totals().failed(), s.result().totals().duration(),
                    s.result().totals().requestThroughput(), s.keys().valid(), s.keys().sendLagMs(),
                    s.shard().scheduleStartEpochMs(), s.shard().windowStartS(), s.shard().windowEndS()));
        }
        return new MergeKeys(first.backend(), first.baseUrl(), first.endpoint(), first.loadMode(),
                metadata.get("infersim_workload"), metadata.get("infersim_version"), invalid.isEmpty(),
                List.copyOf(invalid), ClientKeys.LagSummary.of(sendLag), sum(shards, t -> t.keys().sent()),
                sum(shards, t -> t.keys().cancelled()), errors(shards),
                shards.stream().anyMatch(s -> s.keys().interrupted()), BenchResultAssembly.curves(stats, sendLag),
                List.copyOf(each));
    }

    /** The shards' errors by type: counts summed, the first messages of each shard kept (up to three). */
    private static Map<String, ErrorTally.Quoted> errors(List<ShardResult> shards) {
        Map<String, Long> counts = new LinkedHashMap<>();
        Map<String, List<String>> messages = new LinkedHashMap<>();
        for (ShardResult s : shards) {
            s.keys().errors().forEach((type, quoted) -> {
                counts.merge(type, quoted.count(), Long::sum);
                List<String> firstFew = messages.computeIfAbsent(type, k -> new ArrayList<>());
                for (String message : quoted.firstMessages()) {
                    if (firstFew.size() < 3) {
                        firstFew.add(message);
                    }
                }
            });
        }
        Map<String, ErrorTally.Quoted> out = new LinkedHashMap<>();
        counts.forEach((type, count) -> out.put(type, new ErrorTally.Quoted(count, List.copyOf(messages.get(type)))));
        return out;
    }
}
